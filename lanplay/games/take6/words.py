"""How 6 nimmt! is told: where each revealed card goes (T-3.3, T-3.4, T-5.3) and a row taken (T-3.5), a round
of a record for `lanplay replay`, the table's log move by move, its options (T-5).

The placements are the engine's own (`placement_target`): this module never decides a rule itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.take6 import ROW_LIMIT, Pick, Play, TakeRow, placement_target, row_bullheads
from lanplay.games.bundle import Moves
from lanplay.ui.describe import int_or_none, move_text, plural, seat_name
from lanplay.ui.i18n import Msg
from lanplay.ui.values import Event, ResultRow, RoundResult

if TYPE_CHECKING:
    from lanplay.ui.model import TableModel

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


# --- where each revealed card goes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """One revealed card placed (T-3.3, T-5.3), or taking a full row as its sixth card (T-3.4)."""

    card: int
    seat: int
    row: int  # 0-based
    side: str  # "right" or "left"
    took: tuple[int, ...] = ()  # the cards taken (T-3.4)


def placements(
    rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]], profi: bool
) -> tuple[list[Placement], int]:
    """Place `pending` (card, seat) lowest first onto `rows` (changed in place) as the engine's
    `placement_target` says, until a card that fits nowhere and owes a row choice (T-3.5). Returns the
    placements and how many cards of `pending` were placed."""
    done: list[Placement] = []
    for card, seat in pending:
        target = placement_target(rows, card, profi)
        if target is None:
            break
        index, side = target
        row = rows[index]
        if len(row) >= ROW_LIMIT:
            done.append(Placement(card, seat, index, side, tuple(row)))
            rows[index] = (card,)
        elif side == "right":
            done.append(Placement(card, seat, index, side))
            rows[index] = (*row, card)
        else:
            done.append(Placement(card, seat, index, side))
            rows[index] = (card, *row)
    return done, len(done)


def placement_msg(names: Sequence[str], placement: Placement) -> Msg:
    params: dict[str, object] = {"name": seat_name(names, placement.seat), "card": placement.card,
                                 "row": placement.row + 1}
    if placement.took:
        return Msg("ev_sixth", {**params, "bulls": row_bullheads(placement.took)})
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
        if "pick" in move:
            yield "  " + move_text(players, move)
        elif "take_row" in move:
            row = int_or_none(move.get("take_row")) or 0
            card, seat = state.pending[0]
            taken = state.rows[row]
            yield (f"    {seat_name(players, seat)}'s {card} is lower than every row: takes row {row + 1}"
                   f" ({' '.join(str(c) for c in taken)}: {plural(row_bullheads(taken), 'bullhead', 'bullheads')})")
            work = list(state.rows)
            work[row] = (card,)
            yield from _placement_lines(players, work, state.pending[1:], dealt.options.profi)
        elif sum(1 for c in state.chosen if c is None) == 1:  # T-3.1: the last choice reveals them all
            turn += 1
            seat = int_or_none(move.get("seat")) or 0
            chosen = [(c, s) for s, c in enumerate(state.chosen) if c is not None]
            revealed = sorted([*chosen, (int(str(move["play"])), seat)])  # T-3.2: lowest first
            yield f"  Turn {turn}: revealed " + ", ".join(f"{seat_name(players, s)} {c}" for c, s in revealed)
            yield from _placement_lines(players, list(state.rows), revealed, dealt.options.profi)
        if after.stage in ("deal", "over") and state.stage not in ("deal", "over"):
            yield "  Rows at the end:"
            yield from row_lines(after.rows, "    ")
            yield "  Bullheads this round: " + ", ".join(
                f"{n} {p}" for n, p in zip(players, after.penalty, strict=True))
        state = after


def _placement_lines(players: Sequence[str], rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]],
                     profi: bool) -> Iterator[str]:
    done, _ = placements(rows, pending, profi)
    for placement in done:
        yield "    " + placement_msg(players, placement).text("en")


# --- the table's log ------------------------------------------------------------------------------------


def round_start_events(model: TableModel, view: Any, round_no: int) -> list[Event]:
    rows = " · ".join(f"{i}: {' '.join(str(c) for c in row)}" for i, row in enumerate(view.rows, 1))  # T-2.1
    return [Event("ev_round_start", {"round": round_no, "name": model.name(view.dealer)}),
            Event("ev_t6_rows", {"rows": rows})]


def move_events(model: TableModel, before: Any, move: Any, after: Any) -> list[Event]:
    name = model.name(move.seat)
    events: list[Event] = []
    if isinstance(move, Pick):
        return [Event("ev_pick", {"name": name, "card": move.card})]
    if isinstance(move, TakeRow):
        card, _ = before.pending[0]
        bulls = row_bullheads(before.rows[move.row])
        events.append(Event("ev_take_row", {"name": name, "card": card, "row": move.row + 1, "bulls": bulls}))
        rows = list(before.rows)
        rows[move.row] = (card,)
        events.extend(placement_events(model, rows, before.pending[1:], after.options.profi))
        return events
    assert isinstance(move, Play)
    # Who has chosen shows on the table (the "Chosen" line), not in the log: ten lines a turn would bury it.
    if after.stage == "play" and after.turn == before.turn:
        return events  # still waiting for other choices
    # T-3.1: every card is revealed now; T-3.2: placed lowest first
    chosen = [(card, seat) for seat, card in enumerate(before.chosen) if card is not None]
    revealed = sorted([*chosen, (move.card, move.seat)])
    model.recent["last_reveal"] = tuple(revealed)
    shown = ", ".join(f"{model.name(seat)} {card}" for card, seat in revealed)
    events.append(Event("ev_revealed", {"cards": shown}))
    events.extend(placement_events(model, list(before.rows), revealed, after.options.profi))
    return events


def placement_events(
    model: TableModel, rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]], profi: bool
) -> list[Event]:
    """T-3.3/T-3.4/T-5.3 told card by card, until a card that owes a row choice (T-3.5)."""
    done, _ = placements(rows, pending, profi)
    events = []
    for placement in done:
        msg = placement_msg(model.players, placement)
        events.append(Event(msg.key, msg.params))
    return events


def reveal_events(before: Any, after: Any) -> list[Event]:
    return []


def round_result(model: TableModel, state: Any, round_no: int) -> RoundResult | None:
    totals = model.game.totals(state)
    rows: list[ResultRow] = []
    for seat in range(state.players):
        detail = Event("ev_t6_result", {"name": model.name(seat), "points": state.penalty[seat],
                                        "total": totals[seat]})
        rows.append(ResultRow(seat, detail, state.penalty[seat], totals[seat]))
    return RoundResult(round_no, tuple(rows))


def round_end_events(model: TableModel, state: Any) -> list[Event]:
    return []
