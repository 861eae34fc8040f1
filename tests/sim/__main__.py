"""Replay one simulated table and print what happened: `python -m tests.sim --seed S ...`
(the line a failing soak or test prints), or `--random S` for the table the soak draws from seed S."""

from __future__ import annotations

import argparse
import json
import sys

from .gen import random_spec
from .shrink import shrink
from .world import Spec, parse_fault, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.sim", description=__doc__)
    p.add_argument("--seed", type=int, help="the table's seed (identities, session seeds, network, bots)")
    p.add_argument("--random", type=int, metavar="S", help="the table the soak draws from seed S")
    p.add_argument("--game", default="sixth-sense")
    p.add_argument("--seats", type=int, default=3)
    p.add_argument("--options", default="{}", help="engine options as JSON")
    p.add_argument("--rounds", type=int, default=1, help="every seat leaves after this many confirmed rounds")
    p.add_argument("--adversary", action="append", default=[], metavar="ATTACK@SEAT")
    p.add_argument("--fault", action="append", default=[], metavar="FAULT")
    p.add_argument("--keep", help="attack firings applied, comma-separated (default: all; none: no firing)")
    p.add_argument("--bot", default="random", help="random, heuristic or expert")
    p.add_argument("--backend", default="real", help="real, or fake (the simulator's own test session)")
    p.add_argument("--shrink", action="store_true", help="on a failure, shrink it and print the short one")
    p.add_argument("--firings", action="store_true", help="list every attack firing")
    args = p.parse_args(argv)
    try:
        if args.random is not None:
            spec = random_spec(args.random, args.backend)
        else:
            if args.seed is None:
                p.error("--seed or --random is needed")
            adversaries = []
            for item in args.adversary:
                name, _, seat = item.rpartition("@")
                adversaries.append((int(seat), name))
            for fault in args.fault:
                parse_fault(fault)
            options = json.dumps(json.loads(args.options), sort_keys=True, separators=(",", ":"))
            keep = None
            if args.keep is not None:
                keep = () if args.keep == "none" else tuple(int(k) for k in args.keep.split(",") if k)
            spec = Spec(args.seed, args.game, args.seats, options, args.rounds, tuple(adversaries),
                        tuple(args.fault), keep, args.bot, args.backend)  # fmt: skip
    except ValueError as exc:
        print(f"python -m tests.sim: {exc}", file=sys.stderr)
        return 2
    result = run(spec)
    print(spec.command())
    print(result.summary())
    if args.firings:
        print("\n".join(result.firings))
    if not result.ok and args.shrink:
        small = shrink(result)
        print("shrunk to:")
        print(small.spec.command())
        print(small.summary())
        print("\n".join(small.firings))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
