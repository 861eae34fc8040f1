"""Expert bot benchmark: the expert against heuristic bots in every game, and its decision time.

One JSON line per figure, each with its 95 % confidence interval (`ci95`), the rounds it rests
on and the goal of issue 12. Every round is a fresh deal drawn from a seed of its own index, so
the expert table and the all-heuristic baseline play the same deals; the expert's seat rotates
with the round index so no seat's position favours it.

Usage: .venv/bin/python scripts/bench_bots.py [--rounds 300] [--budget 0.25] [--workers 2] [--games ...]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.games import get_game
from engine.playout import shuffled_deal
from lanplay.bots import Bot, make_bot
from lanplay.bots.expert import DEFAULT_BUDGET, ExpertBot

PLAYERS = {"sixth-sense": 4, "take6": 4, "sixes": 5}
GAMES = tuple(PLAYERS)
BOOTSTRAP = 2000


@dataclass(frozen=True)
class RoundResult:
    game: str
    index: int
    expert_seat: int
    # per seat: 6th Sense points, 6 nimmt! bullheads, Sixes 1 for the winner; with all-heuristic baseline
    expert_table: tuple[float, ...]
    baseline_table: tuple[float, ...]
    expert_hit: bool  # 6th Sense: the expert's seat hit its prediction
    baseline_hit: bool  # 6th Sense: the heuristic in the same seat and deal did
    heuristic_hits: int  # 6th Sense: hits of the heuristic seats at the expert's table
    decision_times: tuple[float, ...]  # the expert's decisions with more than one legal move


def emit(metric: str, value: float, unit: str, ci: tuple[float, float] | None, rounds: int, **extra: Any) -> None:
    line: dict[str, Any] = {"metric": metric, "value": round(value, 4), "unit": unit}
    if ci is not None:
        line["ci95"] = [round(ci[0], 4), round(ci[1], 4)]
    line["rounds"] = rounds
    line.update(extra)
    print(json.dumps(line), flush=True)


def play_round(game_id: str, index: int, bots: dict[int, Bot], expert_seat: int | None) -> tuple[Any, list[float]]:
    game = get_game(game_id)
    players = PLAYERS[game_id]
    rng = random.Random(f"bench-bots {game_id} {index}")  # the same deal for every table
    state = game.new_game(players, game.options_from_json({}))
    state = game.start_round(state, shuffled_deal(game, state, rng))
    times: list[float] = []
    while True:
        expected = game.expected(state)
        if expected.phase != "move":
            return state, times
        moves = []
        for seat in expected.seats:
            view = game.view(state, seat)
            began = time.perf_counter()
            moves.append(bots[seat].choose(game, view, seat))
            spent = time.perf_counter() - began
            if seat == expert_seat and len(game.legal_moves(view, seat)) > 1:
                times.append(spent)
        for move in moves:
            state = game.apply(state, move)


def outcome(game_id: str, state: Any) -> tuple[float, ...]:
    if game_id == "sixth-sense":
        return tuple(float(p) for p in state.round.points)
    if game_id == "take6":
        return tuple(float(p) for p in state.penalty)
    winner = state.round.winner
    return tuple(1.0 if seat == winner else 0.0 for seat in range(state.players))


def hits(state: Any) -> list[bool]:
    from engine.sixth_sense import round_score

    r = state.round
    # a hit is a distance of 0, which the beginner table scores 6 (S-8.1)
    return [round_score(p, t, beginner=True) == 6 for p, t in zip(r.predictions, r.tricks, strict=True)]


def run_round(job: tuple[str, int, float]) -> RoundResult:
    game_id, index, budget = job
    players = PLAYERS[game_id]
    seat = index % players
    def heuristic_table() -> dict[int, Bot]:  # fresh bots per table: their random numbers are their own
        return {s: make_bot(game_id, "heuristic", 1000 * index + s) for s in range(players)}

    baseline_bots = heuristic_table()
    expert_bots = heuristic_table()
    expert_bots[seat] = ExpertBot(game_id, seed=7_000_000 + index, budget=budget)
    expert_state, times = play_round(game_id, index, expert_bots, seat)
    baseline_state, _ = play_round(game_id, index, baseline_bots, None)
    expert_hits = hits(expert_state) if game_id == "sixth-sense" else [False] * players
    baseline_hits = hits(baseline_state) if game_id == "sixth-sense" else [False] * players
    return RoundResult(
        game_id, index, seat, outcome(game_id, expert_state), outcome(game_id, baseline_state),
        expert_hits[seat], baseline_hits[seat], sum(h for s, h in enumerate(expert_hits) if s != seat),
        tuple(times),
    )


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Normal-approximation 95 % interval of a mean."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    m = mean(values)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = 1.96 * sd / math.sqrt(n)
    return (m - half, m + half)


def proportion_ci(successes: int, n: int) -> tuple[float, float]:
    """Wilson 95 % interval of a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    z = 1.96
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def bootstrap_ci(rows: Sequence[Any], statistic: Any, seed: int = 1) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of statistic(rows), resampling whole rounds."""
    rng = random.Random(seed)
    n = len(rows)
    values = sorted(statistic([rows[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOTSTRAP))
    return (values[int(0.025 * BOOTSTRAP)], values[int(0.975 * BOOTSTRAP) - 1])


def p95(times: Sequence[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def p95_ci(times: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95 % interval of the 95th percentile: order statistics around rank 0.95 n."""
    ordered = sorted(times)
    n = len(ordered)
    half = 1.96 * math.sqrt(n * 0.95 * 0.05)
    low = max(0, math.floor(0.95 * n - half) - 1)
    high = min(n - 1, math.ceil(0.95 * n + half) - 1)
    return (ordered[low], ordered[high])


def report(game_id: str, results: list[RoundResult]) -> list[float]:
    n = len(results)
    players = PLAYERS[game_id]
    if game_id == "sixth-sense":
        expert_hits = sum(r.expert_hit for r in results)
        emit("sixth-sense expert hit rate vs 3 heuristic", expert_hits / n, "rate", proportion_ci(expert_hits, n), n,
             goal=">= 0.45", met=expert_hits / n >= 0.45)
        base = sum(r.baseline_hit for r in results)
        emit("sixth-sense heuristic hit rate vs 3 heuristic (same deals and seats)", base / n, "rate",
             proportion_ci(base, n), n)
        other = sum(r.heuristic_hits for r in results)
        emit("sixth-sense heuristic hit rate at the expert's tables", other / (n * (players - 1)), "rate",
             proportion_ci(other, n * (players - 1)), n)
        base_points = [r.baseline_table[r.expert_seat] for r in results]
        emit("sixth-sense heuristic mean points per round (same deals and seats)", mean(base_points), "points",
             mean_ci(base_points), n)
        points = [r.expert_table[r.expert_seat] for r in results]
        emit("sixth-sense expert mean points per round", mean(points), "points", mean_ci(points), n)
        heuristic = [mean([p for s, p in enumerate(r.expert_table) if s != r.expert_seat]) for r in results]
        emit("sixth-sense heuristic mean points per round (same games)", mean(heuristic), "points",
             mean_ci(heuristic), n)
    elif game_id == "take6":

        def ratio(rows: Sequence[RoundResult]) -> float:
            expert = sum(r.expert_table[r.expert_seat] for r in rows)
            others = sum(sum(r.expert_table) - r.expert_table[r.expert_seat] for r in rows) / (players - 1)
            return expert / others if others else math.nan

        value = ratio(results)
        emit("take6 expert/heuristic bullheads ratio", value, "ratio", bootstrap_ci(results, ratio), n,
             goal="<= 0.75", met=value <= 0.75)
        expert = [r.expert_table[r.expert_seat] for r in results]
        emit("take6 expert mean bullheads per round", mean(expert), "bullheads", mean_ci(expert), n)
        base = [r.baseline_table[r.expert_seat] for r in results]
        emit("take6 heuristic mean bullheads per round (same deals and seats)", mean(base), "bullheads",
             mean_ci(base), n)
    else:
        won = sum(int(r.expert_table[r.expert_seat]) for r in results)
        emit("sixes expert share of rounds won vs 4 heuristic", won / n, "share", proportion_ci(won, n), n,
             goal=">= 0.30", met=won / n >= 0.30)
        base = sum(int(r.baseline_table[r.expert_seat]) for r in results)
        emit("sixes heuristic share of rounds won vs 4 heuristic (same deals and seats)", base / n, "share",
             proportion_ci(base, n), n)
    return [t for r in results for t in r.decision_times]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="rounds per game (default 300)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="expert seconds per decision")
    parser.add_argument("--workers", type=int, default=2, help="rounds played side by side (default 2)")
    parser.add_argument("--games", nargs="+", choices=GAMES, default=list(GAMES))
    args = parser.parse_args(argv)
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (a confidence interval needs them)")
    if not 0 < args.budget <= 60:
        parser.error("--budget must be more than 0 and at most 60 seconds")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    started = time.perf_counter()
    times: list[float] = []
    with multiprocessing.Pool(args.workers) as pool:
        for game_id in args.games:
            jobs = [(game_id, index, args.budget) for index in range(args.rounds)]
            results = sorted(pool.imap_unordered(run_round, jobs), key=lambda r: r.index)
            times.extend(report(game_id, results))
    value = p95(times)
    emit("expert decision time p95", value, "s", p95_ci(times), args.rounds,
         decisions=len(times), budget=args.budget, workers=args.workers, goal="<= 0.5", met=value <= 0.5)
    emit("bench_bots wall time", time.perf_counter() - started, "s", None, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
