"""What a Sixes move did, as the engine decided it: a card played onto its column (X-2.3), a pass that pays a chip
into the pot or cannot (X-2.4), the player out of cards taking the pot (X-2.5).

Computed from the states before and after the move, so the screens, the log and the replay tell one account.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.sixes import Move, Pass, Play, SixesState


@dataclass(frozen=True, slots=True)
class Played:
    """X-2.3: `seat` played `card`."""

    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class Passed:
    """X-2.4: `seat` passed, paying a chip into the pot if it had one (`paid`)."""

    seat: int
    paid: bool


@dataclass(frozen=True, slots=True)
class WentOut:
    """X-2.5: `seat` played its last card and takes the pot (`pot` chips)."""

    seat: int
    pot: int


SixesEvent = Played | Passed | WentOut


def move_events(before: SixesState, move: Move, after: SixesState) -> tuple[SixesEvent, ...]:
    """What `move`, applied to `before` giving `after`, did."""
    if isinstance(move, Pass):
        return (Passed(move.seat, before.chips[move.seat] > 0),)
    assert isinstance(move, Play)
    events: list[SixesEvent] = [Played(move.seat, move.card)]
    r0, r1 = before.round, after.round
    if r1 is not None and r1.winner is not None and (r0 is None or r0.winner is None):
        events.append(WentOut(r1.winner, r1.pot_won))
    return tuple(events)
