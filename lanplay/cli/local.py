"""A plain-text game on one laptop against bots (no network): `lanplay play --plain`.

It shows what the full-screen table shows, as lines of text: the same `TableModel`, fed by the same
narration (each game's words, through lanplay/ui/local_table.py), drawn by the same screen functions
without colours. Moves are typed as numbers, by the rule the footer of the full screen states (6 nimmt!:
the card's number; otherwise the n-th choice). It works on any terminal, in scripts and in tests.
"""

from __future__ import annotations

import random
import secrets
from typing import Any, TextIO

from engine.api import Game, IllegalMove
from engine.playout import shuffled_deal
from engine.record import GameRecord, record_from_moves
from lanplay.bots import Bot
from lanplay.games import make_bot
from lanplay.ui import screens
from lanplay.ui.i18n import rules_summary
from lanplay.ui.local_table import move_events, round_end_events, round_result, round_start_events
from lanplay.ui.model import TableModel

HUMAN = 0
WIDTH = 78


def play_local(
    game: Game[Any, Any, Any, Any],
    name: str,
    bots: int,
    options: Any,
    bot_kind: str,
    stdin: TextIO,
    out: TextIO,
    seed: int | None = None,
    lang: str = "en",
) -> GameRecord:
    """Play until the game ends or input ends; returns the record of what was played."""
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    players = [name, *(f"Bot {i}" for i in range(1, bots + 1))]
    seat_bots: dict[int, Bot] = {
        seat: make_bot(game.id, bot_kind, rng.randrange(1 << 30)) for seat in range(1, len(players))
    }
    model = TableModel(game, players, HUMAN, lang)
    printer = _LogPrinter(model, out)
    state = game.new_game(len(players), options)
    rounds: list[tuple[Any, list[Any]]] = []
    print(f"{game.title}: {', '.join(players)}.", file=out)
    print(_t(model, "plain_intro"), file=out)
    while True:
        expected = game.expected(state)
        if expected.phase == "over":
            break
        if expected.phase == "deal":
            deal = shuffled_deal(game, state, rng)
            state = game.start_round(state, deal)
            rounds.append((deal, []))
            model.start_round(len(rounds))
            model.update_state(game.view(state, HUMAN), len(rounds))
            model.add_events(round_start_events(model, game.view(state, HUMAN), len(rounds)))
            printer.flush()
            continue
        chosen = []
        for seat in expected.seats:  # simultaneous choices are made on the same view (T-3.1, S-3.1)
            view = game.view(state, seat)
            if seat == HUMAN:
                move = _ask(model, game, view, stdin, out)
                if move is None:
                    return record_from_moves(game, players, options, rounds)
            else:
                move = seat_bots[seat].choose(game, view, seat)
            chosen.append(move)
        for move in chosen:
            before = state
            state = game.apply(state, move)
            rounds[-1][1].append(move)
            model.update_state(game.view(state, HUMAN), len(rounds))
            model.add_events(move_events(model, before, move, state))  # as LocalTable: words for the public
        printer.flush()
        if game.expected(state).phase in ("deal", "over"):
            result = round_result(model, state, len(rounds))
            if result is not None:
                model.add_round_result(result)
            model.add_events(round_end_events(model, state))
            print("", file=out)
            print(screens.plain(screens.table_area(model, WIDTH)), file=out)
            printer.flush()
    winners = game.winners(state) or ()
    model.set_game_over(winners, game.totals(state), None)
    print("", file=out)
    for line in screens.game_over_lines(model)[:-2]:  # not the record line: the command prints where it went
        print(screens.plain([line]), file=out)
    return record_from_moves(game, players, options, rounds)


def _t(model: TableModel, key: str, **params: object) -> str:
    return model.text(key, **params)


class _LogPrinter:
    """Prints the log events the model has gained since the last flush, as the log panel words them."""

    def __init__(self, model: TableModel, out: TextIO) -> None:
        self.model = model
        self.out = out
        self.done = 0

    def flush(self) -> None:
        for event in self.model.log[self.done :]:
            indent = "    " if event.key.startswith("tw_") else "  "
            print(indent + event.text(self.model.lang), file=self.out)
        self.done = len(self.model.log)


def _ask(model: TableModel, game: Game[Any, Any, Any, Any], view: Any, stdin: TextIO, out: TextIO) -> Any:
    """Show the table as the full screen would, then read numbers until a move is chosen."""
    submitted: list[Any] = []
    offered = game.legal_moves(view, HUMAN)

    def submit(move: Any) -> None:
        if move not in offered:
            raise IllegalMove("format", "that move is not one of the moves allowed now")
        submitted.append(move)

    model.submit = submit
    model.update_state(view)
    model.set_decision(offered)
    print("", file=out)
    for part in (screens.table_area(model, WIDTH), screens.scores(model), screens.hand_area(model, WIDTH)):
        text = screens.plain(part).rstrip()
        if text:
            print(text, file=out)
    while not submitted:
        if model.question is not None:  # typed, not keyed: "b" goes back where the full screen says Esc
            print(_t(model, "plain_second_question", card=model.option_label(model.question)), file=out)
        else:
            print(model.status_msg().text(model.lang), file=out)
        print(_choices_text(model), file=out)
        print(_t(model, "plain_prompt"), end="", file=out, flush=True)
        line = stdin.readline()
        if not line or line.strip().lower() in {"q", "quit"}:
            print("\n" + _t(model, "plain_stopped"), file=out)
            return None
        text = line.strip()
        if text == "?":
            print("\n".join(rules_summary(game.id, model.lang)), file=out)
            continue
        if text.lower() in {"b", "back"} and model.question is not None:
            model.back()
            continue
        index = model.index_for_number(text) if text.isdigit() else None
        if index is None:
            print(_t(model, "plain_bad_number"), file=out)
            continue
        model.choose(index)
        if model.error is not None and not submitted:
            print(model.error.text(model.lang), file=out)
            model.set_error(None)
    return submitted[0]


def _choices_text(model: TableModel) -> str:
    """The options with the number that picks each, then the ones not allowed now (typing one says why)."""
    allowed: list[str] = []
    refused: list[str] = []
    for label, option in zip(model.number_labels(), model.options, strict=True):
        shown = model.option_label(option)
        item = shown if model.numbers_are_cards() else f"{label}) {shown}"
        (allowed if option.enabled else refused).append(item)
    text = "  " + "  ".join(allowed) + f"   [{screens.digits_hint(model)}]"
    if refused:
        text += "\n  " + _t(model, "plain_refused", items="  ".join(refused))
    return text
