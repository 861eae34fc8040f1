"""A plain-text game on one laptop against bots (no network): `lanplay play --plain`.

It shows what the full-screen table shows, as lines of text: the same `TableModel`, fed by the same
offline source (`LocalTable`, lanplay/ui/local_table.py) through the same `TableFeed` (lanplay/ui/feed.py), drawn
by the same screen functions without colours; `_PlainFront` is the feed's front end that prints and reads.
Moves are typed as numbers, by the rule the footer of the full screen states (6 nimmt!: the card's number;
otherwise the n-th choice). It works on any terminal, in scripts and in tests.
"""

from __future__ import annotations

import asyncio
from typing import Any, TextIO

from engine.api import Game
from engine.record import GameRecord
from lanplay.ui import screens
from lanplay.ui.feed import RoundScored, TableEvent
from lanplay.ui.i18n import rules_summary
from lanplay.ui.local_table import LocalTable
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
    players = [name, *(f"Bot {i}" for i in range(1, bots + 1))]
    model = TableModel(game, players, HUMAN, lang)
    front = _PlainFront(model, stdin, out)
    table = LocalTable(model, options, bot_kind=bot_kind, bot_delay=0.0, seed=seed, pause_between_rounds=False,
                       front=front)
    print(f"{game.title}: {', '.join(players)}.", file=out)
    print(_t(model, "plain_intro"), file=out)
    try:
        asyncio.run(table.run())
    except _Stopped:
        return table.record()
    print("", file=out)
    for line in screens.game_over_lines(model)[:-2]:  # not the record line: the command prints where it went
        print(screens.plain([line]), file=out)
    return table.record()


class _Stopped(Exception):
    """The person typed q, or the input ended."""


class _PlainFront:
    """The offline table's front end (lanplay/ui/feed.py's `Front`): prints what the full screen would show and
    reads this seat's moves as typed numbers."""

    def __init__(self, model: TableModel, stdin: TextIO, out: TextIO) -> None:
        self.model = model
        self.stdin = stdin
        self.out = out
        self.printer = _LogPrinter(model, out)

    def told(self, event: TableEvent) -> None:
        if isinstance(event, RoundScored):  # the table as the round ended, then its result
            print("", file=self.out)
            print(screens.plain(screens.table_area(self.model, WIDTH)), file=self.out)
        self.printer.flush()

    def asked(self) -> None:
        if not _ask(self.model, self.model.game, self.stdin, self.out):
            raise _Stopped


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


def _ask(model: TableModel, game: Game[Any, Any, Any, Any], stdin: TextIO, out: TextIO) -> bool:
    """Show the table as the full screen would, then read numbers until the move offered on the model is
    chosen (the model submits it); False if the person stopped instead."""
    print("", file=out)
    for part in (screens.table_area(model, WIDTH), screens.scores(model), screens.hand_area(model, WIDTH)):
        text = screens.plain(part).rstrip()
        if text:
            print(text, file=out)
    while model.moves:
        if model.question is not None:  # typed, not keyed: "b" goes back where the full screen says Esc
            print(_t(model, "plain_second_question", card=model.option_label(model.question)), file=out)
        else:
            print(model.status_msg().text(model.lang), file=out)
        print(_choices_text(model), file=out)
        print(_t(model, "plain_prompt"), end="", file=out, flush=True)
        line = stdin.readline()
        if not line or line.strip().lower() in {"q", "quit"}:
            print("\n" + _t(model, "plain_stopped"), file=out)
            return False
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
        if model.error is not None and model.moves:
            print(model.error.text(model.lang), file=out)
            model.set_error(None)
    return True


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
