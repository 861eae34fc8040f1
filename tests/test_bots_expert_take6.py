"""The 6 nimmt! expert's own parts (lanplay/bots/expert/take6.py): its fast playout policy makes the
heuristic's choices, and hand-made positions where the search must find the move."""

from __future__ import annotations

import random

import pytest
from test_bots_expert import random_states

from engine.take6 import TAKE6, Take6Options
from lanplay.bots.expert.take6 import FastHeuristic
from lanplay.bots.take6 import Take6Bot

OPTIONS = [Take6Options(t, lg, p) for t in (False, True) for lg in (False, True) for p in (False, True)]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_fast_policy_chooses_as_the_heuristic_on_the_view(options: Take6Options) -> None:
    """T-3.1/T-3.5/T-5.2: on a full state, `FastHeuristic` picks what `Take6Bot` picks from each
    seat's view, at the start of a turn and after some seats have chosen (which it must not read)."""
    fast, heuristic = FastHeuristic(), Take6Bot(0)
    rng = random.Random(f"fast {options}")
    compared = 0
    for players in (2, 4, 7):
        for state, _ in random_states(TAKE6, players, options, rng, 40):
            seats = TAKE6.expected(state).seats
            for index, seat in enumerate(seats):
                move = fast.choose(state, seat, random.Random(1))
                assert move == heuristic.choose(TAKE6, TAKE6.view(state, seat), seat)
                compared += 1
                if index == 0 and len(seats) > 2:  # a later seat of the turn, after this one chose
                    chosen = TAKE6.apply(state, move)
                    later = seats[-1]
                    assert fast.choose(chosen, later, random.Random(1)) == heuristic.choose(
                        TAKE6, TAKE6.view(chosen, later), later
                    )
    assert compared > 100
