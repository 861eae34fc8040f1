"""What a 6 nimmt! move did, as the engine decided it: a card picked from the pool (T-5.2), a card chosen face down
(T-3.1), the turn's cards revealed lowest first (T-3.1, T-3.2), each placed in its row (T-3.3, T-5.3) or taking a full
row as its sixth card (T-3.4), a row taken by a card lower than every row (T-3.5).

Computed from the states before and after the move with the rules' own `placement_target`, so the screens, the log
and the replay all tell one account and none decides a rule itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.take6 import ROW_LIMIT, Pick, Play, Take6Move, Take6State, TakeRow, placement_target, row_bullheads


@dataclass(frozen=True, slots=True)
class Picked:
    """T-5.2 (logic): `seat` took `card` from the open pool into its hand."""

    seat: int
    card: int


@dataclass(frozen=True, slots=True)
class Chose:
    """T-3.1: `seat` chose a card face down; the turn waits for the others."""

    seat: int


@dataclass(frozen=True, slots=True)
class Revealed:
    """T-3.1, T-3.2: the last choice of a turn turns every chosen card up; (card, seat), lowest first."""

    cards: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Placed:
    """T-3.3, T-5.3: `card` of `seat` goes at the `side` end of row `row` (0-based)."""

    card: int
    seat: int
    row: int
    side: str  # "right" or "left"


@dataclass(frozen=True, slots=True)
class SixthCard:
    """T-3.4: `card` of `seat` is the sixth card of row `row`: it takes the row's cards (`taken`) and starts it anew."""

    card: int
    seat: int
    row: int
    side: str
    taken: tuple[int, ...]

    @property
    def bullheads(self) -> int:
        return row_bullheads(self.taken)


@dataclass(frozen=True, slots=True)
class RowTaken:
    """T-3.5: `card` of `seat` is lower than every row's end: `seat` takes row `row` (`taken`) and `card` starts it."""

    seat: int
    card: int
    row: int
    taken: tuple[int, ...]

    @property
    def bullheads(self) -> int:
        return row_bullheads(self.taken)


Take6Event = Picked | Chose | Revealed | Placed | SixthCard | RowTaken


def placements(
    rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]], profi: bool
) -> list[Placed | SixthCard]:
    """Place `pending` (card, seat) lowest first onto `rows` (changed in place) as `placement_target` says, until a
    card that fits nowhere and owes a row choice (T-3.5)."""
    done: list[Placed | SixthCard] = []
    for card, seat in pending:
        target = placement_target(rows, card, profi)
        if target is None:
            break
        index, side = target
        row = rows[index]
        if len(row) >= ROW_LIMIT:
            done.append(SixthCard(card, seat, index, side, tuple(row)))
            rows[index] = (card,)
        elif side == "right":
            done.append(Placed(card, seat, index, side))
            rows[index] = (*row, card)
        else:
            done.append(Placed(card, seat, index, side))
            rows[index] = (card, *row)
    return done


def move_events(before: Take6State, move: Take6Move, after: Take6State) -> tuple[Take6Event, ...]:
    """What `move`, applied to `before` giving `after`, did."""
    if isinstance(move, Pick):
        return (Picked(move.seat, move.card),)
    if isinstance(move, TakeRow):
        card, _ = before.pending[0]
        rows = list(before.rows)
        rows[move.row] = (card,)
        taken = RowTaken(move.seat, card, move.row, tuple(before.rows[move.row]))
        return (taken, *placements(rows, before.pending[1:], after.options.profi))
    assert isinstance(move, Play)
    if after.stage == "play" and after.turn == before.turn:
        return (Chose(move.seat),)  # still waiting for other choices
    cards: list[tuple[Any, int]] = [(card, seat) for seat, card in enumerate(before.chosen) if card is not None]
    cards.append((move.card, move.seat))  # known by now: the last choice reveals the turn (T-3.1)
    revealed: tuple[tuple[int, int], ...] = tuple(sorted(cards))
    return (Revealed(revealed), *placements(list(before.rows), revealed, after.options.profi))
