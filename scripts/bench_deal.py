"""Benchmark the mental-poker deck (P-4) on a 6th Sense round, computation only, in one process.

For 2, 4 and 6 seats, the work of a real table, seat by seat: every seat makes its shuffle and lock
pass with their proofs, and reads and checks (`from_json`: points, proofs) every other seat's
passes, as each seat does on receipt; then dealing every hand (each owner checks the other seats'
keys against their factors and decrypts its cards) and the public opening of one card (the trump)
by every seat. Then one seat's audit of the round (recompute every shuffle pass, check every key
base and lock factor, rebuild the deal).

Figures, each the median of ``--repeat`` runs:

* ``one seat``: the computation of the busiest seat (the last locker: it checks every other pass);
  the target is under 0.3 s for 6 seats.
* ``critical path``: the passes are sequential (each seat works on the previous output), so the
  deal cannot finish sooner than the sum over passes of making it and checking it at the next
  seat, plus the slowest seat's dealing. Other seats check in parallel, off this path.
* ``all seats``: every seat's computation summed (what one machine running every seat would do).
* the audit of one seat; the target is under 0.2 s for 6 seats.
* multiplications per seat (variable-base ``scalarmult`` and fixed-base ``basemult`` apart) and per
  audit.

Output: one JSON object per line, ``{"metric", "value", "unit"}``.

    .venv/bin/python scripts/bench_deal.py [--repeat N] [--seats 2 4 6]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from protocol import deck
from protocol.deck import (
    CardTable,
    DeckContext,
    LockOutput,
    LockSecret,
    SeatSecrets,
    ShuffleOutput,
    ShuffleSecret,
    audit_deck,
    key_commitments,
    key_opening,
    lock_pass,
    open_position,
    shuffle_pass,
)

TABLE = "be" * 16
VALUES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14)
HAND = {2: 15, 3: 14, 4: 14, 5: 13, 6: 11}  # S-2.3


def codes_for(seats: int) -> tuple[str, ...]:
    colours = "RYGB" if seats == 2 else "RYGBP"  # S-2.1: purple leaves a 2-player game
    return tuple(f"{c}{v}" for c in colours for v in VALUES)


@dataclass
class Ledger:
    """Time and multiplications, charged to the seat whose work is running."""

    seats: int
    time: list[float] = field(init=False)
    var: list[int] = field(init=False)
    base: list[int] = field(init=False)
    path: float = 0.0  # the sequential part: passes made and checked by the next seat
    current: int = 0  # the seat whose work is running

    def __post_init__(self) -> None:
        self.time, self.var, self.base = [0.0] * self.seats, [0] * self.seats, [0] * self.seats

    @contextmanager
    def work(self, seat: int, on_path: bool = False) -> Iterator[None]:
        start = time.process_time()
        self.current = seat
        yield
        spent = time.process_time() - start
        self.time[seat] += spent
        if on_path:
            self.path += spent


@contextmanager
def counting(ledger: Ledger) -> Iterator[None]:
    real_var, real_base = deck.scalarmult, deck.basemult

    def var(scalar: bytes, point: bytes) -> bytes:
        ledger.var[ledger.current] += 1
        return real_var(scalar, point)

    def base(scalar: bytes) -> bytes:
        ledger.base[ledger.current] += 1
        return real_base(scalar)

    deck.scalarmult, deck.basemult = var, base
    try:
        yield
    finally:
        deck.scalarmult, deck.basemult = real_var, real_base


@dataclass
class Round:
    ctx: DeckContext
    secrets: list[SeatSecrets] = field(default_factory=list)
    shuffles: list[ShuffleOutput] = field(default_factory=list)
    locks: list[LockOutput] = field(default_factory=list)


def play_round(ctx: DeckContext, ledger: Ledger) -> Round:
    rnd = Round(ctx)
    n, seats = ctx.size, ctx.seats
    others = [[s for s in range(seats) if s != j] for j in range(seats)]
    points = ctx.cards.points
    for j in range(seats):
        with ledger.work(j, on_path=True):
            secret = SeatSecrets(j, ShuffleSecret.new(n), LockSecret.new(n))
            wire = shuffle_pass(ctx, j, points, secret.shuffle).to_json()
        rnd.secrets.append(secret)
        for reader in others[j]:  # every other seat checks it on receipt; the next one on the path
            with ledger.work(reader, on_path=reader == (j + 1) % seats):
                out = ShuffleOutput.from_json(ctx, j, wire, points)
        rnd.shuffles.append(out)
        points = out.points
    for j in range(seats):
        secret = rnd.secrets[j]
        with ledger.work(j, on_path=True):
            wire = lock_pass(ctx, j, points, secret.shuffle, secret.lock).to_json()
        for reader in others[j]:
            with ledger.work(reader, on_path=reader == j + 1):
                lock = LockOutput.from_json(ctx, j, wire, points)
        rnd.locks.append(lock)
        points = lock.points
    commitments = [key_commitments(s, lock) for s, lock in zip(rnd.shuffles, rnd.locks, strict=True)]
    dealt = seats * HAND[seats]
    trump = dealt
    trump_keys = [key_opening(j, rnd.secrets[j].lock, trump) for j in range(seats)]
    deal_times = []
    for owner in range(seats):
        before = ledger.time[owner]
        with ledger.work(owner):
            for p in range(owner, dealt, seats):
                open_position(
                    ctx, p, points[p], [key_opening(j, rnd.secrets[j].lock, p) for j in range(seats)], commitments
                )
            open_position(ctx, trump, points[trump], trump_keys, commitments)
        deal_times.append(ledger.time[owner] - before)
    ledger.path += max(deal_times)
    return rnd


def medians(repeat: int, ctx: DeckContext) -> tuple[Ledger, Round]:
    runs = []
    for _ in range(repeat):
        ledger = Ledger(ctx.seats)
        rnd = play_round(ctx, ledger)
        runs.append((ledger, rnd))
    runs.sort(key=lambda run: max(run[0].time))
    return runs[len(runs) // 2]


def median_time(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"metric": metric, "value": round(value, 4), "unit": unit}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 4, 6])
    args = parser.parse_args()
    for seats in args.seats:
        # The card table is built once per game, not per round.
        ctx = DeckContext(secrets.token_hex(16), 0, seats, CardTable("sixth-sense", codes_for(seats)))
        play_round(ctx, Ledger(seats))  # warm-up
        ledger, rnd = medians(args.repeat, ctx)
        label = f"6th Sense round, {seats} seats (shuffle+lock+proofs+deal)"
        emit(f"deal {label}, one seat's computation (max over seats)", max(ledger.time), "s")
        emit(f"deal {label}, critical path (passes made + checked by the next seat, slowest deal)", ledger.path, "s")
        emit(f"deal {label}, all seats' computation summed", sum(ledger.time), "s")
        emit(
            f"audit 6th Sense round, {seats} seats (one seat: recompute shuffles, check factors, rebuild the deal)",
            median_time(args.repeat, partial(audit_deck, rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)),
            "s",
        )
        counted = Ledger(seats)
        with counting(counted):
            play_round(ctx, counted)
        busiest = max(range(seats), key=lambda s: counted.var[s])
        emit(f"variable-base multiplications per seat, {seats} seats, max", counted.var[busiest], "mults")
        emit(f"fixed-base multiplications per seat, {seats} seats, that seat", counted.base[busiest], "mults")
        audit = Ledger(1)
        with counting(audit), audit.work(0):
            audit_deck(rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)
        emit(f"variable-base multiplications for one audit, {seats} seats", audit.var[0], "mults")
        emit(f"fixed-base multiplications for one audit, {seats} seats", audit.base[0], "mults")


if __name__ == "__main__":
    main()
