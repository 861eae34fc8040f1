"""Benchmark the mental-poker deck (P-4) on a 6th Sense round, computation only, in one process.

For 2, 4 and 6 seats: every seat's shuffle and lock pass (with the receiving seat's P-4.4 check of
each published list), dealing every hand (each owner checks the other seats' keys against their
commitments and decrypts its cards), and the public opening of one card (the trump) by every seat.
Then one seat's audit of the round (recompute every pass, check every commitment, rebuild the deal).

All seats run one after the other here, so a round's figure is the sum of every seat's work: at a
real table the seats compute in parallel and the wall time is lower. Each figure is the median of
``--repeat`` runs. Output: one JSON object per line, ``{"metric", "value", "unit"}``.

    .venv/bin/python scripts/bench_deal.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
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
    check_output,
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


class MultCounter:
    """Counts `deck.scalarmult` calls, charged to the seat whose work is running."""

    def __init__(self, seats: int) -> None:
        self.per_seat = [0] * seats
        self.seat = 0
        self._real = deck.scalarmult

    def __enter__(self) -> MultCounter:
        def counting(scalar: bytes, point: bytes) -> bytes:
            self.per_seat[self.seat] += 1
            return self._real(scalar, point)

        deck.scalarmult = counting
        return self

    def __exit__(self, *exc: object) -> None:
        deck.scalarmult = self._real


class Round:
    def __init__(self, ctx: DeckContext) -> None:
        self.ctx = ctx
        self.secrets: list[SeatSecrets] = []
        self.shuffles: list[ShuffleOutput] = []
        self.locks: list[LockOutput] = []


def play_round(ctx: DeckContext, counter: MultCounter | None = None) -> Round:
    rnd = Round(ctx)
    n, seats = ctx.size, ctx.seats
    hand = HAND[seats]

    def as_seat(seat: int) -> None:
        if counter is not None:
            counter.seat = seat

    points = ctx.cards.points
    for j in range(seats):
        as_seat(j)
        secret = SeatSecrets(j, ShuffleSecret.new(n), LockSecret.new(n))
        rnd.secrets.append(secret)
        out = shuffle_pass(ctx, j, points, secret.shuffle)
        check_output(ctx, out)  # by the next seat, on receipt
        rnd.shuffles.append(out)
        points = out.points
    for j in range(seats):
        as_seat(j)
        secret = rnd.secrets[j]
        lock = lock_pass(ctx, j, points, secret.shuffle, secret.lock)
        check_output(ctx, lock)
        rnd.locks.append(lock)
        points = lock.points
    commitments = [lock.commitments for lock in rnd.locks]
    dealt = seats * hand
    for p in range(dealt):
        owner = p % seats
        as_seat(owner)
        openings = [key_opening(j, rnd.secrets[j].lock, p) for j in range(seats)]
        open_position(ctx, p, points[p], openings, commitments)
    trump = dealt
    openings = [key_opening(j, rnd.secrets[j].lock, trump) for j in range(seats)]
    for j in range(seats):
        as_seat(j)
        open_position(ctx, trump, points[trump], openings, commitments)
    return rnd


def median_time(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"metric": metric, "value": round(value, 4), "unit": unit}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    for seats in (2, 4, 6):
        # The card table is built once per game, not per round.
        ctx = DeckContext(TABLE, 0, seats, CardTable("sixth-sense", codes_for(seats)))
        play_round(ctx)  # warm-up
        emit(
            f"deal 6th Sense round, {seats} seats (shuffle+lock+deal)",
            median_time(args.repeat, partial(play_round, ctx)),
            "s",
        )
        rnd = play_round(ctx)
        emit(
            f"audit 6th Sense round, {seats} seats (one seat: recompute all passes, rebuild the deal)",
            median_time(args.repeat, partial(audit_deck, rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)),
            "s",
        )
        with MultCounter(seats) as counter:
            play_round(ctx, counter)
        emit(
            f"scalar multiplications per seat, {seats} seats (shuffle+lock+own hand+trump), max",
            max(counter.per_seat),
            "mults",
        )
        with MultCounter(1) as counter:
            audit_deck(rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)
        emit(f"scalar multiplications for one audit, {seats} seats", counter.per_seat[0], "mults")


if __name__ == "__main__":
    main()
