"""What a 6th Sense move did, as the engine decided it: a prediction laid (S-3.1), the late trump turned (S-8.3), a
card played (S-4, a 0's block S-6.1, the 6/9 card's value S-6.3), a trick done and who won it (`trick_winner`, S-4.5,
S-5, S-6), a split decided (S-6.5), a peek at a prediction (S-6.4).

Computed from the states before and after the move, so the screens, the log and the replay tell one account. Why a
trick went as it did is told from the same `trick_winner` (lanplay/games/sixth_sense/words.py `trick_story`).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.sixth_sense import Card, Move, Play, Predict, SixthSenseState, Split


@dataclass(frozen=True, slots=True)
class Predicted:
    """S-3.1: `seat` laid its prediction card face down (`card` None where this state does not know it)."""

    seat: int
    card: Card | None


@dataclass(frozen=True, slots=True)
class TrumpTurned:
    """S-8.3: with late trump, the trump card is turned once every prediction is laid."""

    trump: Card


@dataclass(frozen=True, slots=True)
class Played:
    """S-4: `seat` played `card` (as 6 or 9, S-6.3; blocking a card of the trick, S-6.1)."""

    seat: int
    card: Card
    as_value: int | None
    block: Card | None


@dataclass(frozen=True, slots=True)
class TrickDone:
    """S-4.5: trick `trick_no` (1-based) is complete: `plays` in the order played, won by `winner` (None: every card
    was blocked, S-6.1); `trump` the colour that was trump for it (None without one)."""

    trick_no: int
    plays: tuple[Play, ...]
    winner: int | None
    trump: str | None


@dataclass(frozen=True, slots=True)
class SplitChosen:
    """S-6.5: the winner of a trick with a counting 12 counts it as two tricks (`split`) or as one."""

    seat: int
    split: bool


@dataclass(frozen=True, slots=True)
class Peeked:
    """S-6.4: after trick `trick` (0-based) `peeker` looks at `target`'s prediction card (`card`, where this state
    knows it)."""

    trick: int
    peeker: int
    target: int
    card: Card | None


SixthSenseEvent = Predicted | TrumpTurned | Played | TrickDone | SplitChosen | Peeked


def move_events(before: SixthSenseState, move: Move, after: SixthSenseState) -> tuple[SixthSenseEvent, ...]:
    """What `move`, applied to `before` giving `after`, did."""
    if isinstance(move, Split):
        return (SplitChosen(move.seat, move.split),)
    r0, r1 = before.round, after.round
    assert r0 is not None and r1 is not None
    if isinstance(move, Predict):
        events: list[SixthSenseEvent] = [Predicted(move.seat, move.card)]
        if all(r1.predicted) and after.options.late_trump and not after.options.beginner and r1.trump is not None:
            events.append(TrumpTurned(r1.trump))
        return tuple(events)
    events = [Played(move.seat, move.card, move.as_value, move.block)]
    if len(r1.trick_winners) > len(r0.trick_winners):
        trump = r1.trump.colour if r1.trump is not None and not after.options.beginner else None
        events.append(TrickDone(len(r1.trick_winners), (*r0.trick, move), r1.trick_winners[-1], trump))
        for peek in r1.peeks[len(r0.peeks) :]:
            events.append(Peeked(peek.trick, peek.peeker, peek.target, r1.predictions[peek.target]))
    return tuple(events)


def reveal_events(before: SixthSenseState, after: SixthSenseState) -> tuple[SixthSenseEvent, ...]:
    """What turning late cards (`Game.reveal`) showed: the trump, after the predictions (S-8.3)."""
    r0, r1 = before.round, after.round
    if r0 is not None and r1 is not None and r0.trump is None and r1.trump is not None:
        return (TrumpTurned(r1.trump),)
    return ()
