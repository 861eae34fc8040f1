"""The 6 nimmt! expert's own parts (lanplay/games/take6/search.py): its fast playout policy makes the
heuristic's choices, and hand-made positions where the search must find the move."""

from __future__ import annotations

import random

import pytest
from test_bots_expert import random_states

from engine.take6 import TAKE6, Take6Options, Take6State, TakeRow
from lanplay.bots.expert import ExpertBot
from lanplay.games import searcher_for
from lanplay.games.take6.bot import Take6Bot
from lanplay.games.take6.search import FastHeuristic

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


@pytest.mark.parametrize("logic", [False, True], ids=["hidden hands", "logic"])
def test_takes_the_row_that_its_next_card_would_otherwise_fill(logic: bool) -> None:
    """T-3.5: our 3 is lower than every row end, so we take a row. The cheapest (3 bullheads) is what
    the heuristic takes; but our last card, 55, would then be the sixth card of the full first row
    (T-3.4: 7 more). Taking that row now (7) leaves 55 a safe place: 7 in all instead of 10."""
    rows = ((50, 51, 52, 53, 54), (20,), (30,), (40,))
    out = 0
    for card in (*[c for row in rows for c in row], 3, 21):
        out |= 1 << card
    state = Take6State(
        2, Take6Options(logic=logic), 0, 0, "take_row", (0, 0), (0, 0), rows, ((55,), (22,)), (1, 1), (),
        (None, None), ((3, 0), (21, 1)), out, 8,
    )  # fmt: skip
    view = TAKE6.view(state, 0)
    assert Take6Bot(0).choose(TAKE6, view, 0) == TakeRow(0, 1)  # the cheapest row
    for seed in range(3):
        assert ExpertBot(searcher_for("take6"), seed=seed, samples=3).choose(TAKE6, view, 0) == TakeRow(0, 0)
