"""How Sixes is told: a round of a record for `lanplay replay` (passes, plays, the pot; X-2, X-3), the columns
(X-2.3), the table's log move by move, its option (X-1.4). What happened is the engine's account
(engine/sixes_events.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from engine.sixes import SIXES, SUITS
from engine.sixes_events import Passed, Played
from engine.sixes_events import move_events as told
from lanplay.games.bundle import Moves
from lanplay.ui.describe import move_text, plural, seat_name
from lanplay.ui.i18n import t
from lanplay.ui.values import Event, ResultRow, RoundResult, TableView

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
        for event in told(state, SIXES.move_from_json(move), after):
            if isinstance(event, Passed):
                paid = "pays a chip" if event.paid else "has no chip to pay"
                yield f"  {seat_name(players, event.seat)} passes and {paid}"
            elif isinstance(event, Played):
                yield "  " + move_text(players, move)
        state = after
    r = state.round
    if r is not None and r.winner is not None:  # said with the columns it left
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


def round_start_events(model: TableView, view: Any, round_no: int) -> list[Event]:
    dealer = view.round.dealer if getattr(view, "round", None) is not None else None
    return [Event("ev_round_start", {"round": round_no, "name": model.name(dealer)})]


def move_events(model: TableView, before: Any, move: Any, after: Any) -> list[Event]:
    """The engine's account of `move` in the table's words; going out is told with the round's end."""
    events: list[Event] = []
    for event in told(before, move, after):
        if isinstance(event, Passed):
            events.append(Event("ev_sx_pass" if event.paid else "ev_sx_pass_free", {"name": model.name(event.seat)}))
        elif isinstance(event, Played):
            events.append(Event("ev_sx_play", {"name": model.name(event.seat), "card": event.card}))
    return events


def reveal_events(before: Any, after: Any) -> list[Event]:
    return []


def round_result(model: TableView, state: Any, round_no: int) -> RoundResult | None:
    totals = model.game.totals(state)
    rows: list[ResultRow] = []
    r = state.round
    for seat in range(state.players):
        won = r.pot_won if r is not None and r.winner == seat else 0
        rows.append(ResultRow(seat, Event("ev_sx_result", {"name": model.name(seat), "total": totals[seat]}),
                              won, totals[seat]))
    return RoundResult(round_no, tuple(rows))


def round_end_events(model: TableView, state: Any) -> list[Event]:
    """X-3: the player out of cards takes the pot (said before the round's results)."""
    if state.round is not None and state.round.winner is not None:
        return [Event("ev_sx_out", {"name": model.name(state.round.winner), "pot": state.round.pot_won})]
    return []
