"""Engine benchmarks: random playouts per second and the heuristic bots' results.

Prints one JSON line per figure. Usage: .venv/bin/python scripts/bench_engine.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from engine.api import Game
from engine.games import all_games
from engine.playout import shuffled_deal
from lanplay.bots import Bot, RandomBot, make_bot

PLAYOUT_PLAYERS = {"sixth-sense": 4, "take6": 4, "sixes": 5}


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"metric": metric, "value": round(value, 4), "unit": unit}), flush=True)


def play_round(game: Game[Any, Any, Any, Any], state: Any, rng: random.Random, bots: dict[int, Bot] | None) -> Any:
    """One round from `state` (phase "deal") to its end, by random moves or by bots."""
    state = game.start_round(state, shuffled_deal(game, state, rng))
    while True:
        expected = game.expected(state)
        if expected.phase != "move":
            return state
        if bots is None:
            moves = [rng.choice(game.legal_moves(state, seat)) for seat in expected.seats]
        else:
            moves = [bots[seat].choose(game, game.view(state, seat), seat) for seat in expected.seats]
        for move in moves:
            state = game.apply(state, move)


def playout_rate(game: Game[Any, Any, Any, Any], players: int, seconds: float) -> float:
    rng = random.Random(1)
    options = game.options_from_json({})
    rounds = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_round(game, game.new_game(players, options), rng, None)
        rounds += 1
    return rounds / (time.perf_counter() - start)


def sixth_sense_hit_rate(seat0: str, others: str, rounds: int) -> float:
    from engine.sixth_sense import SIXTH_SENSE, round_score

    rng = random.Random(7)
    bots: dict[int, Bot] = {0: make_bot("sixth-sense", seat0, 100)}
    bots.update({seat: make_bot("sixth-sense", others, seat) for seat in (1, 2, 3)})
    options = SIXTH_SENSE.options_from_json({})
    hits = 0
    for _ in range(rounds):
        state = play_round(SIXTH_SENSE, SIXTH_SENSE.new_game(4, options), rng, bots)
        r = state.round
        # a hit is a distance of 0, which the beginner table scores 6 (S-8.1)
        hits += round_score(r.predictions[0], r.tricks[0], beginner=True) == 6
    return hits / rounds


def take6_mean_bullheads(seat0: str, games: int) -> float:
    game = all_games()["take6"]
    rng = random.Random(11)
    bots: dict[int, Bot] = {0: make_bot("take6", seat0, 100)}
    bots.update({seat: RandomBot(seat) for seat in (1, 2, 3)})
    total = 0
    for _ in range(games):
        state = game.new_game(4, game.options_from_json({}))
        while game.expected(state).phase == "deal":
            state = play_round(game, state, rng, bots)
        total += game.totals(state)[0]
    return total / games


def sixes_round_share(seat0: str, rounds: int) -> float:
    game = all_games()["sixes"]
    rng = random.Random(13)
    bots: dict[int, Bot] = {0: make_bot("sixes", seat0, 100)}
    bots.update({seat: RandomBot(seat) for seat in (1, 2, 3, 4)})
    won = 0
    for _ in range(rounds):
        state = play_round(game, game.new_game(5, game.options_from_json({})), rng, bots)
        won += game.round_report(state)["winner"] == 0
    return won / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args()
    seconds = 1.0 if args.quick else 5.0
    scale = 10 if args.quick else 1
    games = all_games()
    for game_id, players in PLAYOUT_PLAYERS.items():
        if game_id in games:
            rate = playout_rate(games[game_id], players, seconds)
            emit(f"{game_id} random rounds/s, {players} players", rate, "rounds/s")
    rounds = 2000 // scale
    emit("sixth-sense heuristic hit rate vs 3 random", sixth_sense_hit_rate("heuristic", "random", rounds), "share")
    emit("sixth-sense random hit rate vs 3 random", sixth_sense_hit_rate("random", "random", rounds), "share")
    emit(
        "sixth-sense heuristic hit rate vs 3 heuristic",
        sixth_sense_hit_rate("heuristic", "heuristic", rounds),
        "share",
    )
    if "take6" in games:
        n = 300 // scale
        emit("take6 heuristic mean bullheads/game vs 3 random", take6_mean_bullheads("heuristic", n), "bullheads")
        emit("take6 random mean bullheads/game vs 3 random", take6_mean_bullheads("random", n), "bullheads")
    if "sixes" in games:
        n = 2000 // scale
        emit("sixes heuristic share of rounds won vs 4 random", sixes_round_share("heuristic", n), "share")
        emit("sixes random share of rounds won vs 4 random", sixes_round_share("random", n), "share")


if __name__ == "__main__":
    main()
