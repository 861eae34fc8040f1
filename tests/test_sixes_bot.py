"""The heuristic Sixes bot (lanplay/games/sixes/bot.py): legal from a seat's view only, deterministic per
seed, plays toward its own cards and holds blockers (X-2.3), and beats random players."""

from __future__ import annotations

import random
from dataclasses import replace

from engine.playout import play_game, shuffled_deal
from engine.record import replay_text
from engine.sixes import SIXES, Pass, Play, SixesOptions, SixesState
from lanplay.bots import RandomBot, bot_chooser
from lanplay.games import make_bot
from lanplay.games.sixes.bot import SixesBot, play_score

GAME = SIXES

# 5 players, dealer 4, 8 cards each; seat 0 holds O6, seat 1 nothing playable after it.
HANDS = [
    ["O6", "OK", "CK", "EK", "BK", "O3", "C3", "C4"],
    ["OA", "O2", "CA", "C2", "EA", "E2", "BA", "B2"],
    ["O5", "O7", "C6", "OJ", "C5", "C7", "CJ", "CQ"],
    ["E6", "O4", "E3", "E4", "E5", "E7", "EJ", "EQ"],
    ["B6", "OQ", "B3", "B4", "B5", "B7", "BJ", "BQ"],
]


def scene() -> SixesState:
    state = GAME.new_game(5, SixesOptions())
    state = GAME.start_round(state, GAME.deal_from_json(state, {"dealer": 4, "hands": HANDS}))
    state = GAME.apply(state, Play(0, "O6"))
    return GAME.apply(state, Pass(1))


def test_make_bot_gives_the_heuristic_bot() -> None:
    bot = make_bot("sixes", "heuristic", 1)
    assert isinstance(bot, SixesBot) and bot.name == "heuristic"


def test_opens_the_six_that_leads_to_its_own_cards() -> None:
    """Seat 2 may play O5, O7 or C6 (X-2.3). C6 unlocks C5 and C7-CJ-CQ, all its own; O5 would
    only free O4…OA for the others."""
    state = scene()
    assert set(GAME.legal_moves(state, 2)) == {Play(2, "O5"), Play(2, "O7"), Play(2, "C6")}
    assert SixesBot(0).choose(GAME, GAME.view(state, 2), 2) == Play(2, "C6")


def test_scores_hold_blockers_and_release_own_runs() -> None:
    assert play_score("O5", {"O4", "O3"}) > play_score("OK", set()) == 0.0  # toward own cards
    assert play_score("O7", set()) < play_score("OK", set())  # O7 frees OJ, OQ, OK for others
    assert play_score("BK", set()) == play_score("BA", set()) == 0.0  # extremes free nothing
    assert play_score("C6", {"C5", "C7"}) > play_score("C6", set())
    assert play_score("E6", set()) < play_score("E5", set())  # a 6 opens two ways


def test_only_legal_moves_from_its_view_and_deterministic() -> None:
    for players in (3, 5, 8):
        def game(seed: int, players: int = players) -> tuple[object, str]:
            rng = random.Random(seed)
            bots = {seat: SixesBot(seed + seat) for seat in range(players)}
            final, rec = play_game(
                GAME, [f"b{i}" for i in range(players)], SixesOptions(2), bot_chooser(GAME, bots), rng, max_rounds=5
            )
            return final, rec.dumps()

        first = game(players)
        assert first == game(players)  # same seeds, same game
        replay_text(first[1])  # every move the bots made is legal (X-2.2 …)


def test_the_choice_depends_on_its_own_view_only() -> None:
    """Swapping cards between other seats' hands leaves seat 2's view, and its choice, unchanged."""
    state = scene()
    r = state.round
    assert r is not None and r.hands[3] is not None and r.hands[4] is not None
    swapped_hands = (*r.hands[:3], r.hands[4], r.hands[3])
    swapped = SixesState(
        state.players, state.options, state.rounds_started, state.chips, state.pot,
        replace(r, hands=swapped_hands),
        state.over,
    )
    assert GAME.view(swapped, 2) == GAME.view(state, 2)
    for seed in range(5):
        assert SixesBot(seed).choose(GAME, GAME.view(swapped, 2), 2) == SixesBot(seed).choose(
            GAME, GAME.view(state, 2), 2
        )


def test_beats_random_players() -> None:
    """Share of rounds won against four random bots, well above the 1/5 baseline (measured about
    0.31 over 10,000 rounds)."""
    rng = random.Random(42)
    rounds, wins = 600, 0
    for i in range(rounds):
        hero = i % 5
        bots = {s: SixesBot(i) if s == hero else RandomBot(rng.randrange(1 << 30)) for s in range(5)}
        state = GAME.new_game(5, SixesOptions(50))
        state = GAME.start_round(state, shuffled_deal(GAME, state, rng))
        while GAME.expected(state).phase == "move":
            seat = GAME.expected(state).seats[0]
            state = GAME.apply(state, bots[seat].choose(GAME, GAME.view(state, seat), seat))
        assert state.round is not None
        wins += state.round.winner == hero
    assert wins / rounds > 0.25
