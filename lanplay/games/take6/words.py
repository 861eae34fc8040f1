"""How 6 nimmt! is told: where each revealed card goes (T-3.3, T-3.4, T-5.3) and a row taken (T-3.5), a round
of a record for `lanplay replay`, the table's log move by move, its options (T-5).

What happened is the engine's account (engine/take6_events.py): this module never decides a rule itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from engine.take6 import TAKE6, row_bullheads
from engine.take6_events import Picked, Placed, Revealed, RowTaken, SixthCard
from engine.take6_events import move_events as told
from lanplay.games.bundle import Moves
from lanplay.ui.describe import move_text, plural, seat_name
from lanplay.ui.i18n import Msg
from lanplay.ui.values import Event, ResultRow, RoundResult, TableView

OPTION_HELP: Mapping[str, str] = {
    "tactic": "true: only cards 1 to 10 x players + 4 (T-5.1)",
    "logic": "true: cards are picked in turn from an open pool (T-5.2)",
    "profi": "true: a card may also go left of a row (T-5.3)",
}


def card_name(code: str) -> str:
    return code


def option_notes(options: Mapping[str, object]) -> list[str]:
    return []


def form_notes(values: Mapping[str, object]) -> tuple[str, ...]:
    return ()


# --- cards and rows ---------------------------------------------------------------------------


def placement_msg(names: Sequence[str], placement: Placed | SixthCard) -> Msg:
    params: dict[str, object] = {"name": seat_name(names, placement.seat), "card": placement.card,
                                 "row": placement.row + 1}
    if isinstance(placement, SixthCard):
        return Msg("ev_sixth", {**params, "bulls": placement.bullheads})
    return Msg("ev_placed" if placement.side == "right" else "ev_placed_left", params)


def rows_text(rows: Sequence[Sequence[int]]) -> str:
    """Rows labelled 1–4 as the table labels them (T-2.1): `row 1: 19 23 · row 2: 52 …`."""
    return " · ".join(f"row {i}: {' '.join(str(c) for c in row)}" for i, row in enumerate(rows, 1))


def row_lines(rows: Sequence[Sequence[int]], indent: str) -> Iterator[str]:
    """One line per row, with the bullheads it holds (T-1.1)."""
    for i, row in enumerate(rows, 1):
        cards = " ".join(str(c) for c in row)
        yield f"{indent}row {i}: {cards} ({plural(row_bullheads(row), 'bullhead', 'bullheads')})"


# --- a round of a record ------------------------------------------------------------------------------


def round_lines(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    yield "  Rows: " + rows_text(dealt.rows)
    state = dealt
    turn = 0
    for move, after in moves:
        for event in told(state, TAKE6.move_from_json(move), after):
            if isinstance(event, Picked):
                yield "  " + move_text(players, move)
            elif isinstance(event, RowTaken):
                yield (f"    {seat_name(players, event.seat)}'s {event.card} is lower than every row: takes row"
                       f" {event.row + 1} ({' '.join(str(c) for c in event.taken)}:"
                       f" {plural(event.bullheads, 'bullhead', 'bullheads')})")
            elif isinstance(event, Revealed):  # T-3.1: the last choice reveals them all, T-3.2: lowest first
                turn += 1
                yield f"  Turn {turn}: revealed " + ", ".join(f"{seat_name(players, s)} {c}" for c, s in event.cards)
            elif isinstance(event, Placed | SixthCard):
                yield "    " + placement_msg(players, event).text("en")
        if after.stage in ("deal", "over") and state.stage not in ("deal", "over"):
            yield "  Rows at the end:"
            yield from row_lines(after.rows, "    ")
            yield "  Bullheads this round: " + ", ".join(
                f"{n} {p}" for n, p in zip(players, after.penalty, strict=True))
        state = after


# --- the table's log ------------------------------------------------------------------------------------


def round_start_events(model: TableView, view: Any, round_no: int) -> list[Event]:
    rows = " · ".join(f"{i}: {' '.join(str(c) for c in row)}" for i, row in enumerate(view.rows, 1))  # T-2.1
    return [Event("ev_round_start", {"round": round_no, "name": model.name(view.dealer)}),
            Event("ev_t6_rows", {"rows": rows})]


def move_events(model: TableView, before: Any, move: Any, after: Any) -> list[Event]:
    """The engine's account of `move` in the table's words. Who has chosen shows on the table (the "Chosen"
    line), not in the log: ten lines a turn would bury it."""
    events: list[Event] = []
    for event in told(before, move, after):
        if isinstance(event, Picked):
            events.append(Event("ev_pick", {"name": model.name(event.seat), "card": event.card}))
        elif isinstance(event, RowTaken):
            events.append(Event("ev_take_row", {"name": model.name(event.seat), "card": event.card,
                                                "row": event.row + 1, "bulls": event.bullheads}))
        elif isinstance(event, Revealed):
            model.recent["last_reveal"] = event.cards
            shown = ", ".join(f"{model.name(seat)} {card}" for card, seat in event.cards)
            events.append(Event("ev_revealed", {"cards": shown}))
        elif isinstance(event, Placed | SixthCard):
            msg = placement_msg(model.names(), event)
            events.append(Event(msg.key, msg.params))
    return events


def reveal_events(before: Any, after: Any) -> list[Event]:
    return []


def round_result(model: TableView, state: Any, round_no: int) -> RoundResult | None:
    totals = model.game.totals(state)
    rows: list[ResultRow] = []
    for seat in range(state.players):
        detail = Event("ev_t6_result", {"name": model.name(seat), "points": state.penalty[seat],
                                        "total": totals[seat]})
        rows.append(ResultRow(seat, detail, state.penalty[seat], totals[seat]))
    return RoundResult(round_no, tuple(rows))


def round_end_events(model: TableView, state: Any) -> list[Event]:
    return []
