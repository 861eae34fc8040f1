"""Soak honest tables under faults (issue 13): seeded tables of every game, option combination and
table size under reordering, duplication and loss (`protocol.testing.HONEST_FAULTS`).

    .venv/bin/python scripts/soak_honest.py                    # 1,000 tables, first round each
    .venv/bin/python scripts/soak_honest.py --tables 100 --seed 5 --rounds 0   # whole games

Each table's game, size and options come from its seed; sizes are drawn small-heavy (a table's cost
grows with the square of its seats), every size up to the maximum still comes up. Prints one JSON
line per table that is not clean (with its problems and the seed), then one per figure: tables,
clean, blamed, unfinished, records differing, replays differing, exceptions. Progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from collections import Counter

from engine.games import get_game
from protocol.testing import HonestResult, option_combinations, run_honest

GAMES = ("sixth-sense", "take6", "sixes")


def table_spec(seed: int) -> tuple[str, int, dict[str, object]]:
    rng = random.Random(f"soak-honest/{seed}")
    game = rng.choice(GAMES)
    spec = get_game(game)
    sizes = list(range(spec.min_players, spec.max_players + 1))
    weights = [1 / (i + 1) ** 1.5 for i in range(len(sizes))]
    players = rng.choices(sizes, weights)[0]
    return game, players, dict(rng.choice(option_combinations(game)))


def run_one(job: tuple[int, int | None]) -> tuple[int, tuple[str, int, dict[str, object]], HonestResult]:
    seed, rounds = job
    game, players, options = table_spec(seed)
    return seed, (game, players, options), run_honest(game, players, options, seed, rounds=rounds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0, help="first table seed (tables use seed, seed+1, ...)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per table; 0: whole games")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()
    rounds = args.rounds or None
    counts: Counter[str] = Counter()
    start = time.monotonic()
    jobs = [(seed, rounds) for seed in range(args.seed, args.seed + args.tables)]
    with multiprocessing.Pool(args.workers) as pool:
        for done, (seed, (game, players, options), result) in enumerate(pool.imap_unordered(run_one, jobs), 1):
            counts["tables"] += 1
            counts["clean"] += result.clean
            counts["blamed"] += bool(result.blamed)
            counts["unfinished"] += bool(result.unfinished)
            counts["records differing"] += result.records_differ
            counts["replays differing"] += bool(result.replay_differs)
            counts["exceptions"] += bool(result.exceptions)
            if not result.clean:
                print(json.dumps({
                    "game": game, "players": players, "options": options, "seed": seed,
                    "problems": result.problems()[:4],
                }), flush=True)
            if done % 25 == 0 or done == args.tables:
                rate = done / (time.monotonic() - start)
                print(f"{done}/{args.tables} tables, {rate:.2f}/s, not clean {done - counts['clean']}",
                      file=sys.stderr, flush=True)
    for metric in ("tables", "clean", "blamed", "unfinished", "records differing", "replays differing", "exceptions"):
        print(json.dumps({"metric": metric, "value": counts[metric], "unit": "tables"}), flush=True)
    print(json.dumps({"metric": "wall time", "value": round(time.monotonic() - start, 1), "unit": "s"}), flush=True)
    return 0 if counts["clean"] == counts["tables"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
