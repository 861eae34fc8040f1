"""The Sixes table: the four suit columns, chips and pot, whose turn; my hand with playable cards marked."""

from __future__ import annotations

from typing import Any

from engine.api import IllegalMove
from engine.sixes import RANK_OF, RANKS, SUITS, Pass, Play, SixesState
from lanplay.ui.i18n import Msg
from lanplay.ui.lines import Line, Lines, hand_with_options, me_mark, text_line
from lanplay.ui.values import Choice, TableView

CARD_MARK = "▸"  # a card that may be played now
OWN_GRID_KINDS: frozenset[str] = frozenset()
HIGHEST_FIRST = True
NUMBERS_ARE_CARDS = False


def card_look(code: str) -> tuple[str, str]:
    return f"class:suit.{code[0].lower()}", code


def header_detail(model: TableView) -> str:
    view: SixesState = model.view
    parts = []
    if view.rounds_started:
        parts.append(model.text("round_n", round=view.rounds_started))
    if view.round is not None:
        parts.append(model.text("dealer", name=model.name(view.round.dealer)))
    return " · ".join(parts)


def table_area(model: TableView, width: int) -> Lines:
    view: SixesState = model.view
    r = view.round
    lines: Lines = [text_line(" " * 8 + "".join(f" {rank}" for rank in RANKS), "class:disabled")]
    for suit_index, suit in enumerate(SUITS):
        column = r.columns[suit_index] if r is not None else None
        row: Line = [("class:label", f"{model.text(f'suit_{suit}'):<8}")]
        low, high = (RANK_OF[column[0]], RANK_OF[column[1]]) if column is not None else (99, -1)
        for rank_index, rank in enumerate(RANKS):
            on = low <= rank_index <= high
            row.append(("", " "))
            row.append((f"class:suit.{suit.lower()}", rank) if on else ("class:disabled", "·"))
        lines.append(row)
    lines.append(text_line(""))
    turn = r.turn if r is not None else None
    info = model.text("pot_label", pot=view.pot)
    if turn is not None:
        info += "   " + model.text("turn_label", name=model.name(turn))
    lines.append(text_line(info, "class:label"))
    if r is not None and r.winner is not None:
        lines.append(text_line(""))
        lines.append(text_line(model.text("round_results", round=view.rounds_started), "class:label"))
        lines.append(text_line(model.text("ev_sx_out", name=model.name(r.winner), pot=r.pot_won), "class:ok"))
        for seat in range(view.players):
            lines.append(text_line(f" {model.name(seat):<12} " + model.text("chips_n", chips=view.chips[seat])))
    return lines


def scores(model: TableView, width: int) -> Lines:
    view: SixesState | None = model.view
    if view is None:
        return []
    r = view.round
    names = width - 15
    lines: Lines = [text_line(
        f"{model.text('scores'):<{names}} {model.text('cards_left')[:6]:>6} {model.text('col_chips')[:6]:>6}",
        "class:label")]
    for seat in range(view.players):
        cards = r.hand_sizes[seat] if r is not None else 0
        mark = "▸" if r is not None and r.turn == seat else " "
        style = "class:me" if seat == model.my_seat else ""
        name = f"{me_mark(model, seat)}{model.name(seat)[: names - 1]}"
        lines.append(text_line(f"{name:<{names}} {mark}{cards:>5} {view.chips[seat]:>6}", style))
    return lines


def hand_area(model: TableView, width: int) -> Lines:
    view: SixesState | None = model.view
    r = view.round if view is not None else None
    hand = list(r.hands[model.my_seat] or ()) if r is not None else []
    lines = hand_with_options(model, hand, width)
    if r is not None and model.moves and model.kind != "continue":
        lines[0] = [*lines[0], ("class:disabled", "   " + model.text("playable_mark"))]
    return lines


# --- what the player points at ---------------------------------------------------------------------------


def choices(view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Choice, ...]:
    hand = view.round.hands[seat] if view is not None and view.round is not None else None
    plays = {m.card: m for m in moves if isinstance(m, Play)}
    out = [Choice("card", card, (plays[card],) if card in plays else (), Play(seat, card)) for card in hand or ()]
    out.extend(Choice("button", "pass_button", (m,)) for m in moves if isinstance(m, Pass))
    return tuple(out)


def prompt(model: TableView) -> Msg:
    if all(not c.enabled for c in model.choices if c.kind == "card"):
        return Msg("your_turn_pass")
    return Msg("your_turn_play_sixes")


def refusal(model: TableView, option: Choice, exc: IllegalMove) -> Msg | None:
    if exc.rule == "X-2.3":
        return Msg("refuse_no_fit", {"card": option.code, "rule": exc.rule})
    if exc.rule == "X-2.2":
        return Msg("refuse_open_o6", {"card": option.code, "rule": exc.rule})
    return None
