"""Benchmark a table of separate `lanplay bot` processes on 127.0.0.1 (never another address).

One host bot and ``--seats - 1`` joiners, each a process of its own with its own LANPLAY_HOME in a
temporary directory, play one whole game. Each runs with ``LANPLAY_TRACE`` (see `lanplay.table.trace`),
so it writes timing lines: when its player submits a move, when any move is applied, when a round
begins, when it is dealt its hand, and its VmRSS when a round is confirmed. Measured:

- ``move_latency``: from a move's submission (its author's runner) to its application on every peer
  (the last peer), for the public moves (cards played); the hidden, simultaneous choices (6th Sense
  predictions) wait for every seat's decision, so they are reported apart (``hidden_choice_latency``).
  Also the time to the author's own application and to the first other peer's: all peers share this
  machine's cores, so the last peer's figure includes waiting for a core;
- ``deal_time``: from the start of a round's deal (seat 0 drawing the round's secrets, then shuffling
  first) to every peer having its hand (its Dealt event), median and worst over the game's rounds;
  ``deal_cpu_all_seats``: the CPU time the peers' event-loop threads (where each session runs) used
  from their own deal's start to their hand, summed over the peers (median over the rounds): all
  peers share this machine's cores, so a deal cannot take less than this divided by the cores free;
- ``discovery_time``: from starting a `TableBrowser` on 127.0.0.1 to the host's advert found, for a
  table already advertised (median of ``--discovery-runs``), and ``discovery_first``: the browser
  started as soon as the host process logs its lobby (so it also covers the advert's registration);
- ``rss``: VmRSS of each peer process when a round is confirmed: the largest peer at the end of the
  first round and at the end of the last.

Output: one JSON object per line, ``{"metric", "value", "unit"}`` (plus ``target`` where the issue
sets one, and ``n``). Targets: move latency median < 5 ms, deal < 0.5 s, discovery < 2 s, RSS < 80 MB.

    .venv/bin/python scripts/bench_net.py [--seats 6] [--game sixth-sense] [--delay 0] [--bot-kind heuristic] [--keep]

The bots are the rule-of-thumb kind unless told otherwise (at 8bf29ab that was `lanplay bot`'s default):
a searching bot thinks on the same cores as the peers, and would be measured instead of the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from lanplay.net.discovery import TableBrowser
from lanplay.table.trace import TRACE_ENV

LOOPBACK = "127.0.0.1"
LOBBY_LINE = re.compile(r"table ([0-9a-f]+): lobby on ([0-9.]+):(\d+)")


def lanplay() -> list[str]:
    script = Path(sys.executable).with_name("lanplay")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "lanplay.cli"]


def emit(metric: str, value: float | None, unit: str, **extra: Any) -> None:
    print(json.dumps({"metric": metric, "value": value, "unit": unit, **extra}), flush=True)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


class Peer:
    def __init__(self, base: Path, index: int, args: list[str]) -> None:
        self.home = base / f"h{index}"
        self.home.mkdir(parents=True)
        self.trace = base / f"trace-{index}.jsonl"
        self.out = base / f"out-{index}.txt"
        self.err = base / f"err-{index}.txt"
        env = {k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")}
        env.update({"LANPLAY_HOME": str(self.home), TRACE_ENV: str(self.trace), "PYTHONUNBUFFERED": "1"})
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [*lanplay(), "bot", *args], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                start_new_session=True,
            )  # fmt: skip

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def events(self) -> list[dict[str, Any]]:
        if not self.trace.exists():
            return []
        return [json.loads(line) for line in self.trace.read_text().splitlines() if line.strip()]


def wait_lobby(host: Peer, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = LOBBY_LINE.search(host.err.read_text(errors="replace"))
        if found:
            return found.group(1)
        if host.proc.poll() is not None:
            break
        time.sleep(0.01)
    raise SystemExit(f"the host did not open its lobby:\n{host.err.read_text(errors='replace')[-2000:]}")


async def discover(table_id: str, timeout: float = 10.0) -> float:
    """Seconds from starting a browser to finding table_id."""
    began = time.perf_counter()
    browser = TableBrowser(interface=LOOPBACK)
    await browser.start()
    try:
        await browser.wait_for(lambda advert: advert.table_id == table_id, timeout)
        return time.perf_counter() - began
    finally:
        await browser.stop()


def analyse(peers: list[Peer]) -> None:
    events = [e for peer in peers for e in peer.events()]
    seats = {e["seat"] for e in events}
    n = len(seats)
    submitted: dict[tuple[int, int, int], float] = {}
    applied: dict[tuple[int, int, int], dict[int, float]] = defaultdict(dict)
    hidden: dict[tuple[int, int, int], bool] = {}
    began: dict[int, float] = {}
    dealt: dict[int, dict[int, float]] = defaultdict(dict)
    cpu_began: dict[int, dict[int, float]] = defaultdict(dict)
    cpu_dealt: dict[int, dict[int, float]] = defaultdict(dict)
    rss: dict[int, dict[int, int]] = defaultdict(dict)
    for e in events:
        kind = e["event"]
        if kind == "submit":
            submitted[(e["round"], e["mover"], e["n"])] = e["t"]
        elif kind == "applied":
            key = (e["round"], e["mover"], e["n"])
            applied[key][e["seat"]] = e["t"]
            hidden[key] = hidden.get(key, False) or e["hidden"]
        elif kind == "round":
            if e["seat"] == 0:
                began[e["round"]] = e["t"]  # seat 0 shuffles first, as soon as it has set the round up
            if "cpu" in e:
                cpu_began[e["round"]][e["seat"]] = e["cpu"]
        elif kind == "dealt":
            dealt[e["round"]][e["seat"]] = e["t"]
            if "cpu" in e:
                cpu_dealt[e["round"]][e["seat"]] = e["cpu"]
        elif kind == "audited" and e.get("rss_kib") is not None:
            rss[e["round"]][e["seat"]] = e["rss_kib"]
    public, secret, local, nearest = [], [], [], []
    for key, t in submitted.items():
        where = applied.get(key, {})
        if len(where) < n:
            continue  # not applied everywhere (a round cut short)
        latency = (max(where.values()) - t) * 1000
        if hidden.get(key):
            secret.append(latency)
            continue
        public.append(latency)
        local.append((where[key[1]] - t) * 1000)
        nearest.append((min(v for seat, v in where.items() if seat != key[1]) - t) * 1000)
    if public:
        emit("move_latency_median", round(statistics.median(public), 2), "ms", n=len(public), target="< 5")
        emit("move_latency_p95", round(percentile(public, 0.95), 2), "ms", n=len(public))
        # Where the time goes: the author's own journaling and signing, then the first other peer.
        emit("move_applied_by_author_median", round(statistics.median(local), 2), "ms", n=len(local))
        emit("move_applied_first_other_peer_median", round(statistics.median(nearest), 2), "ms", n=len(nearest))
    if secret:
        emit("hidden_choice_latency_median", round(statistics.median(secret), 2), "ms", n=len(secret))
    deals = [(max(dealt[r].values()) - began[r]) for r in sorted(dealt) if r in began and len(dealt[r]) == n]
    if deals:
        emit("deal_time_median", round(statistics.median(deals), 3), "s", n=len(deals), target="< 0.5")
        emit("deal_time_max", round(max(deals), 3), "s", n=len(deals))
    deal_cpu = [
        sum(cpu_dealt[r][s] - cpu_began[r][s] for s in cpu_dealt[r])
        for r in sorted(cpu_dealt)
        if len(cpu_dealt[r]) == n and set(cpu_began.get(r, {})) >= set(cpu_dealt[r])
    ]
    if deal_cpu:
        emit("deal_cpu_all_seats_median", round(statistics.median(deal_cpu), 3), "s", n=len(deal_cpu))
    if rss:
        first, last = min(rss), max(rss)
        emit("rss_max_end_of_first_round", round(max(rss[first].values()) / 1024, 1), "MB", target="< 80",
             per_peer=[round(rss[first][s] / 1024, 1) for s in sorted(rss[first])])  # fmt: skip
        emit("rss_max_end_of_last_round", round(max(rss[last].values()) / 1024, 1), "MB", target="< 80",
             per_peer=[round(rss[last][s] / 1024, 1) for s in sorted(rss[last])])  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=6)
    parser.add_argument("--game", default="sixth-sense")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds each bot thinks before a move")
    parser.add_argument(
        "--bot-kind", default="heuristic",
        help="the bots' kind (`lanplay bot --kind`); the rule-of-thumb one by default, so that what is measured is "
        "the table and the network, not the time a searching bot thinks on the cores the peers share",
    )  # fmt: skip
    parser.add_argument("--discovery-runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds the whole game may take")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (traces, records)")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="lanplay-bench-net-"))
    common = ["--game", args.game, "--interface", LOOPBACK, "--delay", str(args.delay), "--kind", args.bot_kind]
    for option in args.option:
        common += ["--option", option]
    peers: list[Peer] = []
    try:
        first_browser: dict[str, float] = {}
        host = Peer(base, 0, [*common, "--host", "--seats", str(args.seats), "-v"])
        peers.append(host)
        table_id = wait_lobby(host, 30)
        first_browser["t"] = asyncio.run(discover(table_id))
        discoveries = []
        for _ in range(args.discovery_runs):
            # mDNS responders multicast a record at most once a second (RFC 6762 6): browsers started
            # back to back would measure that rate limit, not discovery.
            time.sleep(1.2)
            discoveries.append(asyncio.run(discover(table_id)))
        emit("discovery_first", round(first_browser["t"], 3), "s", target="< 2")
        emit("discovery_time_median", round(statistics.median(discoveries), 3), "s", n=len(discoveries),
             target="< 2")  # fmt: skip
        emit("discovery_time_max", round(max(discoveries), 3), "s", n=len(discoveries))
        started = time.monotonic()
        for index in range(1, args.seats):
            peers.append(Peer(base, index, [*common, "--table", table_id]))
        for peer in peers:
            remaining = max(1.0, args.timeout - (time.monotonic() - started))
            code = peer.proc.wait(remaining)
            if code != 0:
                raise SystemExit(f"peer {peers.index(peer)} exited {code}:\n{peer.err.read_text()[-2000:]}")
        emit("game_wall_time", round(time.monotonic() - started, 2), "s", seats=args.seats, game=args.game)
        records = {p.read_bytes() for peer in peers for p in (peer.home / "records").glob("*.json")}
        if len(records) != 1:
            raise SystemExit(f"the peers' records differ ({len(records)} versions): see {base}")
        analyse(peers)
    finally:
        for peer in peers:
            peer.kill()
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
