"""The engine's account of a move (engine/*_events.py) agrees with what the move did to the state, over random games of
each game: every bullhead a 6 nimmt! seat takes is a row it took (T-3.4, T-3.5), every revealed card is placed or
still owes a row (T-3.2, T-3.3), a 6th Sense trick is told done exactly when the engine records its winner (S-4.5),
a Sixes pass pays a chip exactly when the seat had one (X-2.4) and going out is told with the pot (X-2.5)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine.api import Game
from engine.playout import shuffled_deal
from engine.sixes import SIXES, SixesOptions
from engine.sixes_events import Passed, Played, WentOut
from engine.sixes_events import move_events as sixes_events
from engine.sixth_sense import SIXTH_SENSE, SixthSenseOptions
from engine.sixth_sense_events import Played as SixthSensePlayed
from engine.sixth_sense_events import Predicted, SplitChosen, TrickDone
from engine.sixth_sense_events import move_events as sixth_sense_events
from engine.take6 import TAKE6, Take6Options
from engine.take6_events import Chose, Picked, Placed, Revealed, RowTaken, SixthCard
from engine.take6_events import move_events as take6_events


def moves_of(game: Game[Any, Any, Any, Any], players: int, options: Any, seed: int) -> Iterator[tuple[Any, Any, Any]]:
    """(before, move, after) for every move of one random game (at most a few rounds)."""
    rng = random.Random(seed)
    state = game.new_game(players, options)
    for _ in range(3):
        if game.expected(state).phase == "over":
            return
        state = game.start_round(state, shuffled_deal(game, state, rng))
        while game.expected(state).phase == "move":
            seat = game.expected(state).seats[0]
            move = rng.choice(game.legal_moves(state, seat))
            after = game.apply(state, move)
            yield state, move, after
            state = after


@pytest.mark.parametrize("options", [Take6Options(), Take6Options(logic=True, profi=True)], ids=["standard", "logic"])
def test_take6_bullheads_taken_are_the_rows_told_taken(options: Take6Options) -> None:
    for seed in range(6):
        for before, move, after in moves_of(TAKE6, 4, options, seed):
            events = take6_events(before, move, after)
            taken = [0] * 4
            for event in events:
                if isinstance(event, SixthCard | RowTaken):
                    taken[event.seat] += event.bullheads
            assert tuple(b + t for b, t in zip(before.penalty, taken, strict=True)) == after.penalty, events
            kinds = [type(e) for e in events]
            if Revealed in kinds:  # T-3.2: every card placed lowest first, or the first that fits nowhere waits
                revealed = next(e for e in events if isinstance(e, Revealed))
                placed = [e for e in events if isinstance(e, Placed | SixthCard)]
                assert [(p.card, p.seat) for p in placed] + list(after.pending) == list(revealed.cards)
            elif RowTaken in kinds:
                assert kinds[0] is RowTaken
                assert len(events) - 1 + len(after.pending) == len(before.pending) - 1
            else:
                assert kinds in ([Chose], [Picked])


def test_take6_a_row_taken_is_told_with_its_cards() -> None:
    """T-3.5 in one told event: the card lower than every row end takes the row the seat chose."""
    seen = 0
    for seed in range(10):
        for before, move, after in moves_of(TAKE6, 5, Take6Options(), seed):
            for event in take6_events(before, move, after):
                if isinstance(event, RowTaken):
                    assert event.taken == before.rows[move.row] and event.card == before.pending[0][0]
                    assert after.rows[move.row][0] == event.card
                    seen += 1
    assert seen


def test_sixth_sense_tells_a_trick_done_exactly_when_the_engine_scores_it() -> None:
    for seed in range(8):
        for before, move, after in moves_of(SIXTH_SENSE, 4, SixthSenseOptions(), seed):
            events = sixth_sense_events(before, move, after)
            done = [e for e in events if isinstance(e, TrickDone)]
            grew = len(after.round.trick_winners) > len(before.round.trick_winners)
            assert len(done) == (1 if grew else 0)
            if done:
                assert done[0].winner == after.round.trick_winners[-1]
                assert done[0].trick_no == len(after.round.trick_winners)
                assert done[0].plays[-1] == move and len(done[0].plays) == 4
            first = events[0]
            assert isinstance(first, Predicted | SplitChosen | SixthSensePlayed) and first.seat == move.seat


def test_sixes_a_pass_pays_when_it_can_and_going_out_takes_the_pot() -> None:
    went_out = 0
    for seed in range(8):
        for before, move, after in moves_of(SIXES, 4, SixesOptions(chips=2), seed):
            events = sixes_events(before, move, after)
            first = events[0]
            assert isinstance(first, Passed | Played) and first.seat == move.seat
            if isinstance(first, Passed):
                assert first.paid == (after.chips[move.seat] == before.chips[move.seat] - 1)
            out = [e for e in events if isinstance(e, WentOut)]
            if out:
                went_out += 1
                assert out[0].seat == move.seat == after.round.winner and out[0].pot == after.round.pot_won
            else:
                assert after.round.winner is None
    assert went_out


