"""Benchmark the end of a game: from the last round's audit (`GameOver`) to the record on disk.

A whole game of `lanplay play`'s shape (one seat hosts, `--bots` bot peers in the same process join over
loopback and speak the real protocol, every bot at delay 0), played by bots only. The figure is the
wall time from the host seat's `GameOver` event to `host_table` returning its `Outcome` with the record
saved: what a person waits for on the game-over screen. Median of ``--repeat`` games, one JSON object
per line, ``{"metric", "value", "unit"}``. Loopback only.

    .venv/bin/python scripts/bench_game_over.py [--game sixes] [--bots 3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ["LANPLAY_INTERFACE"] = "127.0.0.1"

from lanplay.base.store import load_or_create_identity
from lanplay.table.runner import BotPlayer
from lanplay.table.tables import host_table
from protocol.table import Event, GameOver


async def one_game(game: str, bots: int, home: Path) -> float:
    identity = load_or_create_identity(home)
    over: list[float] = []

    def on_event(event: Event) -> None:
        if isinstance(event, GameOver):
            over.append(time.perf_counter())

    outcome = await host_table(
        identity=identity, data_dir=home, name="Ann", game=game, options={}, seats=bots + 1, bots=bots,
        interface="127.0.0.1", player=BotPlayer(game), advertise=False, on_event=on_event,
    )  # fmt: skip
    done = time.perf_counter()
    assert outcome.finished and outcome.complete and not outcome.exposed, outcome
    assert outcome.record_path is not None and outcome.record_path.exists(), outcome
    assert over, "no GameOver event"
    return done - over[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="sixes")
    parser.add_argument("--bots", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="lanplay-bench-") as home:
            times.append(asyncio.run(one_game(args.game, args.bots, Path(home))))
    metric = f"game_over_to_record_{args.game}_{args.bots + 1}_seats"
    print(json.dumps({"metric": metric, "value": round(statistics.median(times), 3), "unit": "s"}))


if __name__ == "__main__":
    main()
