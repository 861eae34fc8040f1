"""The heuristic 6 nimmt! bot: legal from its view alone under every option, and better than random."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine.playout import play_game, shuffled_deal
from engine.take6 import TAKE6, Play, Take6Options, TakeRow
from lanplay.bots import RandomBot, bot_chooser
from lanplay.games import make_bot
from lanplay.games.take6.bot import Take6Bot

ALL_OPTIONS = [Take6Options(t, lg, p) for t in (False, True) for lg in (False, True) for p in (False, True)]


@pytest.mark.parametrize("opts", ALL_OPTIONS, ids=str)
def test_bot_plays_whole_games_from_its_view(opts: Take6Options) -> None:
    rng = random.Random(1)
    bots = {seat: make_bot("take6", "heuristic", seat) for seat in range(5)}
    state, record = play_game(TAKE6, list("abcde"), opts, bot_chooser(TAKE6, bots), rng)
    assert TAKE6.winners(state) is not None and record.rounds


def test_bot_takes_the_cheapest_row() -> None:
    """T-3.5: owing a row, take the one with the fewest bullheads."""
    state = TAKE6.new_game(2, Take6Options())
    deal = TAKE6.deal_from_json(
        state,
        {"dealer": 0, "hands": [list(range(1, 11)), list(range(60, 70))], "rows": [55, 22, 31, 44]},
    )
    state = TAKE6.start_round(state, deal)
    state = TAKE6.apply(TAKE6.apply(state, Play(0, 1)), Play(1, 60))
    assert Take6Bot(0).choose(TAKE6, TAKE6.view(state, 0), 0) == TakeRow(0, 2)


def test_bot_avoids_the_sixth_card() -> None:
    """T-3.4: with a full row, do not play the card that would be its sixth."""
    state = TAKE6.new_game(2, Take6Options())
    hands = [[16, 45, 46, 47, 48, 49, 50, 51, 52, 53], list(range(90, 100))]
    deal = {"dealer": 0, "hands": hands, "rows": [1, 2, 40, 15]}
    state = TAKE6.start_round(state, TAKE6.deal_from_json(state, deal))
    state = replace(state, rows=((1,), (2,), (40,), (11, 12, 13, 14, 15)))
    move = Take6Bot(0).choose(TAKE6, TAKE6.view(state, 0), 0)
    assert move != Play(0, 16)


def mean_bullheads(heuristic: bool, games: int) -> float:
    rng = random.Random(3)
    total = 0
    for game in range(games):
        me = game % 4
        bots = {seat: RandomBot(rng.randrange(1 << 30)) for seat in range(4)}
        if heuristic:
            bots[me] = Take6Bot(rng.randrange(1 << 30))
        state, _ = play_game(TAKE6, list("abcd"), Take6Options(), bot_chooser(TAKE6, bots), rng)
        total += state.totals[me]
    return total / games


def test_bot_beats_random_players() -> None:
    assert mean_bullheads(True, 30) < 0.7 * mean_bullheads(False, 30)


def test_bot_is_deterministic_for_a_seed() -> None:
    state = TAKE6.new_game(3, Take6Options())
    state = TAKE6.start_round(state, shuffled_deal(TAKE6, state, random.Random(4)))
    view = TAKE6.view(state, 1)
    assert Take6Bot(9).choose(TAKE6, view, 1) == Take6Bot(9).choose(TAKE6, view, 1)
