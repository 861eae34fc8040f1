"""A table of real `TableSession`s wired together in memory: FIFO links, simulated time, random legal
moves. Small on purpose: tests/sim/ is the whole-peer simulator with faults and adversaries."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engine.api import JSONObject
from protocol.identity import Identity
from protocol.table import (
    Decided,
    Event,
    Input,
    Output,
    Received,
    Send,
    Start,
    TableSession,
    TableSettings,
    Tick,
)

TABLE = "ab" * 16

# A hook may change what one seat sends: return the bytes to deliver to `to` (None: drop it).
Rewrite = Callable[[int, int, bytes], bytes | None]


@dataclass
class Table:
    sessions: list[TableSession]
    identities: list[Identity]
    seeds: list[bytes]
    rng: random.Random
    now: float = 0.0
    links: deque[tuple[int, int, bytes]] = field(default_factory=deque)
    events: list[list[Event]] = field(default_factory=list)
    journals: list[list[Input]] = field(default_factory=list)
    rewrite: Rewrite | None = None
    silent: set[int] = field(default_factory=set)  # seats that neither move nor answer (a closed lid)

    @property
    def n(self) -> int:
        return len(self.sessions)

    def feed(self, seat: int, event: Input) -> tuple[Output, ...]:
        outputs = self.sessions[seat].handle(event)
        self.journals[seat].append(event)
        for output in outputs:
            if isinstance(output, Send):
                targets = [output.to] if output.to is not None else [s for s in range(self.n) if s != seat]
                for to in targets:
                    data: bytes | None = output.data
                    if self.rewrite is not None:
                        data = self.rewrite(seat, to, output.data)
                    if data is not None:
                        self.links.append((seat, to, data))
            else:
                self.events[seat].append(output)
        return outputs

    def deliver_all(self, limit: int = 200_000) -> None:
        while self.links and limit:
            limit -= 1
            sender, to, data = self.links.popleft()
            self.now += 0.001
            if to not in self.silent:
                self.feed(to, Received(sender, data, self.now))

    def step(self) -> bool:
        """Deliver everything, then let one seat with a move make a random legal one."""
        self.deliver_all()
        for seat in range(self.n):
            if seat in self.silent:
                continue
            moves = self.sessions[seat].decision_json()
            if moves:
                self.now += 0.01
                self.feed(seat, Decided(self.rng.choice(moves), self.now))
                return True
        return False

    def run(self, max_moves: int = 5000) -> None:
        for _ in range(max_moves):
            if not self.step():
                break
        self.deliver_all()

    def wait(self, seconds: float) -> None:
        """Time passes: every seat ticks, and publishes the stops and notes its clocks call for."""
        self.now += seconds
        for seat in range(self.n):
            if seat in self.silent:
                continue
            session = self.sessions[seat]
            self.feed(seat, Tick(self.now))
            due = session.due(self.now)
            if due is not None:
                self.feed(seat, due)
        self.deliver_all()

    def confirm_round(self, moves: int = 4000) -> None:
        """Play until every session has confirmed one round more than now (at most `moves` moves)."""
        start = [len(session.rounds) for session in self.sessions]
        for _ in range(moves):
            if all(len(session.rounds) > start[i] for i, session in enumerate(self.sessions)):
                return
            assert self.step(), "no seat has a move and the round is not confirmed"
        raise AssertionError(f"no round confirmed at every seat within {moves} moves")

    def finish(self, seats: Iterable[int], patiences: int = 20) -> None:
        """Play on and let a patience (31 s) pass at a time, at most `patiences` times, until every seat of
        `seats` has finished its table."""
        waiting = list(seats)
        for _ in range(patiences):
            self.run()
            self.wait(31)
            if all(self.sessions[s].finished for s in waiting):
                return

    def of(self, seat: int, kind: type) -> list[Event]:
        return [e for e in self.events[seat] if isinstance(e, kind)]


def make_table(game: str, n: int, options: JSONObject | None = None, seed: int = 1, patience: float = 30.0) -> Table:
    rng = random.Random(seed)
    identities = [Identity.from_private_bytes(rng.randbytes(32)) for _ in range(n)]
    settings = TableSettings(
        table=TABLE,
        game=game,
        options=options or {},
        seats=tuple(i.public for i in identities),
        names=tuple(f"P{s}" for s in range(n)),
        patience=patience,
    )
    seeds = [rng.randbytes(32) for _ in range(n)]
    sessions = [TableSession(settings, identities[s], seeds[s]) for s in range(n)]
    table = Table(sessions, identities, seeds, rng, events=[[] for _ in range(n)], journals=[[] for _ in range(n)])
    for seat in range(n):
        table.feed(seat, Start(0.0))
    return table


def table_from(settings: TableSettings, identities: list[Identity], seed: int = 1) -> Table:
    """A table of these settings (a continuation's, say), one session per identity in seat order."""
    rng = random.Random(seed)
    n = len(identities)
    seeds = [rng.randbytes(32) for _ in range(n)]
    sessions = [TableSession(settings, identities[s], seeds[s]) for s in range(n)]
    table = Table(sessions, identities, seeds, rng, events=[[] for _ in range(n)], journals=[[] for _ in range(n)])
    for seat in range(n):
        table.feed(seat, Start(0.0))
    return table
