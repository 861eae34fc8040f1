"""Soak the table protocol with malicious seats (issue 9): many seeded tables of every game, each
with one strategy of `protocol.testing` at one seat or a colluding pair, checked for the trust
invariants at every honest seat.

    .venv/bin/python scripts/soak_adversary.py                  # 10,000 tables
    .venv/bin/python scripts/soak_adversary.py --tables 200 --seed 7
    .venv/bin/python scripts/soak_adversary.py --one --game take6 --players 3 --options '{}' \
        --seed 12 --attack 1=withhold:p.keys                   # replay one table, print everything

Prints one JSON line per failing table (with the command that replays it), then one per figure:
tables run, cheaters named, honest seats blamed (must be 0), disagreements (0), stalls past the
time bound (0), exceptions escaped (0), memory bound exceeded (0), attacks that never fired.
Progress goes to stderr. Runs on every core (multiprocessing), two by default here.
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
from dataclasses import asdict

from protocol.testing import COLLUSIONS, GAME_SETUPS, STRATEGIES, TableResult, make_strategy, run_adversarial

# Kinds each game sends (see tests/test_adversary.py): a strategy aimed at another kind is skipped.
NO_KIND = {"sixth-sense": {"reveal"}, "take6": set(), "sixes": {"commit", "reveal"}}
GAME_ONLY = {
    "garbage:card-zz": {"take6"},
    "garbage:bare-card": {"sixth-sense", "sixes"},
    "garbage:not-object": {"sixth-sense", "take6"},
    "replay-other-table-blame:p.peek": {"sixth-sense"},
}


def _fits(name: str, game: str) -> bool:
    if name in GAME_ONLY:
        return game in GAME_ONLY[name]
    kind = name.split(":", 1)[1].split("+")[0].split(".")[0] if ":" in name else ""
    return kind not in NO_KIND[game]


def table_spec(seed: int) -> tuple[str, int, dict[str, object], dict[int, str]]:
    """The table that `seed` stands for: game, seats, options and strategy per malicious seat.
    Small tables mostly (a table's cost grows with the square of its seats)."""
    rng = random.Random(f"soak-adversary/{seed}")
    game, low, high, option_sets = rng.choice(GAME_SETUPS)
    players = min(high, rng.choice((low, low, low + 1, low + 1, low + 1, low + 2, low + 3)))
    options = dict(rng.choice(option_sets))
    if players >= 4 and rng.random() < 0.25:
        name = rng.choice(sorted(COLLUSIONS))
        seats = rng.sample(range(players), 2)
        return game, players, options, {seat: name for seat in seats}
    names = [n for n in sorted(STRATEGIES) if _fits(n, game)]
    name = rng.choice(names)
    seat = 0 if name.startswith("lock-alias") else rng.randrange(players)
    return game, players, options, {seat: name}


def run_one(seed: int) -> TableResult:
    game, players, options, attacks = table_spec(seed)
    return run_adversarial(game, players, options, seed, {seat: make_strategy(name) for seat, name in attacks.items()})


def _summary(results: Counter[str], elapsed: float) -> list[dict[str, object]]:
    return [
        {"metric": "tables run", "value": results["tables"], "unit": "tables"},
        {"metric": "cheaters named", "value": results["caught"], "unit": "tables"},
        {"metric": "honest seats blamed", "value": results["I1"], "unit": "tables"},
        {"metric": "disagreements", "value": results["I2"], "unit": "tables"},
        {"metric": "stalls past the time bound", "value": results["I4"], "unit": "tables"},
        {"metric": "exceptions escaped", "value": results["I3"], "unit": "tables"},
        {"metric": "memory bound exceeded", "value": results["I6"], "unit": "tables"},
        {"metric": "attacks that never fired", "value": results["idle"], "unit": "tables"},
        {"metric": "wall time", "value": round(elapsed, 1), "unit": "s"},
    ]


def soak(tables: int, seed: int, workers: int) -> int:
    start = time.monotonic()
    counts: Counter[str] = Counter()
    seeds = range(seed, seed + tables)
    with multiprocessing.Pool(workers) as pool:
        for done, result in enumerate(pool.imap_unordered(run_one, seeds, chunksize=4), 1):
            counts["tables"] += 1
            counts["caught"] += result.caught
            counts["idle"] += result.applied == 0
            for invariant in sorted({v.invariant for v in result.violations}):
                counts[invariant] += 1
            if result.violations:
                print(json.dumps({
                    "failed": sorted({v.invariant for v in result.violations}),
                    "strategies": result.strategies,
                    "game": result.game,
                    "players": result.players,
                    "options": result.options,
                    "seed": result.seed,
                    "first": f"{result.violations[0].invariant} at {result.violations[0].seat}: "
                    f"{result.violations[0].detail[:300]}",
                    "repro": result.repro(),
                }), flush=True)
            if done % 50 == 0 or done == tables:
                rate = done / (time.monotonic() - start)
                bad = {k: counts[k] for k in ("I1", "I2", "I3", "I4", "I6") if counts[k]}
                print(f"{done}/{tables} tables, {rate:.1f}/s, failing {bad or 'none'}", file=sys.stderr, flush=True)
    for line in _summary(counts, time.monotonic() - start):
        print(json.dumps(line), flush=True)
    return 1 if any(counts[k] for k in ("I1", "I2", "I3", "I4", "I6")) else 0


def one(args: argparse.Namespace) -> int:
    attacks = {}
    for item in args.attack:
        seat, _, name = item.partition("=")
        attacks[int(seat)] = make_strategy(name)
    result = run_adversarial(args.game, args.players, json.loads(args.options), args.seed, attacks)
    out = asdict(result)
    print(json.dumps(out, indent=1, default=str))
    return 1 if result.violations else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="first table seed (tables use seed, seed+1, ...)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--one", action="store_true", help="replay one table given by the options below")
    parser.add_argument("--game", default="sixes")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--options", default="{}")
    parser.add_argument("--attack", action="append", default=[], metavar="SEAT=STRATEGY")
    args = parser.parse_args()
    if args.one:
        return one(args)
    return soak(args.tables, args.seed, args.workers)


if __name__ == "__main__":
    raise SystemExit(main())
