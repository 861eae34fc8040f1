"""How Sixes is told: a round of a record for `lanplay replay` (passes, plays, the pot; X-2, X-3), the columns
(X-2.3), the table's log move by move, its option (X-1.4)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.sixes import SUITS, Pass
from lanplay.games.bundle import Moves
from lanplay.ui.describe import int_or_none, move_text, plural, seat_name
from lanplay.ui.i18n import t
from lanplay.ui.values import Event, ResultRow, RoundResult

if TYPE_CHECKING:
    from lanplay.ui.model import TableModel

OPTION_HELP: Mapping[str, str] = {"chips": "N: chips each player starts with, 1-50 (default 10, X-1.4)"}


def card_name(code: str) -> str:
    return code


def option_notes(options: Mapping[str, object]) -> list[str]:
    return []


def form_notes(values: Mapping[str, object]) -> tuple[str, ...]:
    return ()


# --- a round of a record ------------------------------------------------------------------------------


def round_lines(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    state = dealt
    for move, after in moves:
        seat = int_or_none(move.get("seat"))
        if move.get("pass"):
            paid = "pays a chip" if seat is not None and state.chips[seat] > 0 else "has no chip to pay"
            yield f"  {seat_name(players, seat)} passes and {paid}"
        else:
            yield "  " + move_text(players, move)
        state = after
    r = state.round
    if r is not None and r.winner is not None:
        pot = plural(r.pot_won, "chip", "chips")
        yield f"  {seat_name(players, r.winner)} is out of cards and wins the pot of {pot}"
        yield "  Columns at the end: " + columns_text(r.columns)


def columns_text(columns: Sequence[Any]) -> str:
    """Each suit's column as its lowest and highest card (X-2.3): `Oros A–K, Copas 3–J, …`."""
    parts = []
    for suit, column in zip(SUITS, columns, strict=True):
        name = t(f"suit_{suit}")
        parts.append(f"{name} {column[0][1:]}–{column[1][1:]}" if column is not None else f"{name} not opened")
    return ", ".join(parts)


# --- the table's log ------------------------------------------------------------------------------------


def round_start_events(model: TableModel, view: Any, round_no: int) -> list[Event]:
    dealer = view.round.dealer if getattr(view, "round", None) is not None else None
    return [Event("ev_round_start", {"round": round_no, "name": model.name(dealer)})]


def move_events(model: TableModel, before: Any, move: Any, after: Any) -> list[Event]:
    name = model.name(move.seat)
    if isinstance(move, Pass):
        return [Event("ev_sx_pass" if before.chips[move.seat] > 0 else "ev_sx_pass_free", {"name": name})]
    return [Event("ev_sx_play", {"name": name, "card": move.card})]


def reveal_events(before: Any, after: Any) -> list[Event]:
    return []


def round_result(model: TableModel, state: Any, round_no: int) -> RoundResult | None:
    totals = model.game.totals(state)
    rows: list[ResultRow] = []
    r = state.round
    for seat in range(state.players):
        won = r.pot_won if r is not None and r.winner == seat else 0
        rows.append(ResultRow(seat, Event("ev_sx_result", {"name": model.name(seat), "total": totals[seat]}),
                              won, totals[seat]))
    return RoundResult(round_no, tuple(rows))


def round_end_events(model: TableModel, state: Any) -> list[Event]:
    """X-3: the player out of cards takes the pot (said before the round's results)."""
    if state.round is not None and state.round.winner is not None:
        return [Event("ev_sx_out", {"name": model.name(state.round.winner), "pot": state.round.pot_won})]
    return []
