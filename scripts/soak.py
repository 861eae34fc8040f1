"""Soak the table protocol in the whole-peer simulator (tests/sim, docs/TESTING.md): seeded tables of
every game, option set and seat count, half of them with adversaries at 1 to n-1 seats and faults
composed (delay, loss, duplicates, partitions, suspends, crashes with a journal restart).

    .venv/bin/python scripts/soak.py --tables 10000 --seed 1 --workers 2

Prints one JSON line per failing table (its failures and the command that replays it, shrunk with
--shrink), then one per figure: tables, honest exposed, disagreements, exceptions, not ended (all four
must be 0), bound exceeded (P-6.6), proofs refused (P-5.4), replay diverged (P-5.6), cheats exposed,
attack firings, and tables per hour (wall clock, with n and a 95 % interval over batches of 40 tables;
and, from the CPU time the tables took, what two idle cores would do: a shared machine's wall clock
says as much about its neighbours). Progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent))

from tests.sim import random_spec, run, shrink

BATCH = 40
COUNTS = {
    "P-6.1": "honest exposed",
    "P-6.2": "disagreements",
    "P-6.3": "exceptions",
    "P-6.4": "not ended",
    "P-6.6": "bound exceeded",
    "P-5.4": "proofs refused",
    "P-5.6": "replay diverged",
    "SIM": "simulator errors",
}


def one(job: tuple[int, str, bool]) -> dict[str, object]:
    seed, backend, do_shrink = job
    spec = random_spec(seed, backend)
    cpu = time.process_time()
    result = run(spec)
    out: dict[str, object] = {
        "cpu": time.process_time() - cpu,
        "seed": seed,
        "kinds": sorted(result.kinds()),
        "adversarial": bool(spec.adversaries),
        "firings": len(result.firings),
        "caught": bool(spec.adversaries)
        and all({s for s, _ in spec.adversaries} & exp for exp in result.exposed.values()),
    }
    if not result.ok:
        out["failures"] = result.failures[:5]
        out["command"] = spec.command()
        if do_shrink:
            small = shrink(result, budget=40)
            out["shrunk"] = small.spec.command()
            out["failures"] = small.failures[:5]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1, help="the first table's seed; tables are seed, seed+1, ...")
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--backend", default="real", help="real, or fake (the simulator's own test session)")
    p.add_argument("--shrink", action="store_true", help="shrink each failing table before printing it")
    args = p.parse_args()
    os.environ.setdefault("LANPLAY_INTERFACE", "127.0.0.1")
    jobs = [(args.seed + i, args.backend, args.shrink) for i in range(args.tables)]
    counts: Counter[str] = Counter()
    cpu_s = 0.0
    batch_rates: list[float] = []
    start = time.monotonic()
    mark, done_at_mark = start, 0
    with multiprocessing.Pool(args.workers) as pool:
        for done, res in enumerate(pool.imap_unordered(one, jobs, chunksize=4), 1):
            counts["tables"] += 1
            cpu_s += float(res["cpu"])  # type: ignore[arg-type]
            counts["firings"] += int(res["firings"])  # type: ignore[call-overload]
            counts["caught"] += bool(res["caught"])
            counts["adversarial"] += bool(res["adversarial"])
            for kind in res["kinds"]:  # type: ignore[union-attr]
                counts[kind] += 1
            if "failures" in res:
                line = {"metric": "failing table", "value": res["seed"], "failures": res["failures"],
                        "command": res.get("shrunk", res["command"])}  # fmt: skip
                print(json.dumps(line), flush=True)
            now = time.monotonic()
            if done - done_at_mark >= BATCH:  # rates over batches of BATCH tables, for the interval
                batch_rates.append((done - done_at_mark) / (now - mark) * 3600)
                mark, done_at_mark = now, done
                print(f"{done}/{len(jobs)} tables, {done / (now - start) * 3600:.0f} an hour", file=sys.stderr)
    elapsed = time.monotonic() - start
    figures: list[dict[str, object]] = [{"metric": "tables", "value": counts["tables"], "unit": "tables"}]
    for rule, name in COUNTS.items():
        figures.append({"metric": name, "value": counts[rule], "unit": "tables", "rule": rule})
    figures += [
        {"metric": "adversarial tables", "value": counts["adversarial"], "unit": "tables"},
        {"metric": "cheats exposed", "value": counts["caught"], "unit": "tables",
         "note": "every honest seat exposed an adversary (not all attacks are provable faults)"},
        {"metric": "attack firings", "value": counts["firings"], "unit": "firings"},
    ]  # fmt: skip
    rate = counts["tables"] / elapsed * 3600 if elapsed else 0.0
    rate_line: dict[str, object] = {
        "metric": "tables per hour",
        "value": round(rate),
        "unit": "tables/h",
        "n": counts["tables"],
        "workers": args.workers,
        "wall_s": round(elapsed, 1),
    }
    if len(batch_rates) >= 2:
        half = 1.96 * statistics.stdev(batch_rates) / math.sqrt(len(batch_rates))  # normal approximation
        rate_line["ci_low"], rate_line["ci_high"] = round(rate - half), round(rate + half)
    figures.append(rate_line)
    if cpu_s:
        per_core = counts["tables"] / cpu_s * 3600
        figures.append(
            {
                "metric": "tables per hour on 2 idle cores (from CPU time)",
                "value": round(2 * per_core),
                "unit": "tables/h",
                "n": counts["tables"],
                "cpu_s_per_table": round(cpu_s / counts["tables"], 3),
                "note": "the CPU time the tables took, as if this process had both cores to itself",
            }
        )
    for line in figures:
        print(json.dumps(line), flush=True)
    bad = sum(counts[r] for r in COUNTS)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
