"""An in-memory table: N sessions wired together by a deterministic scheduler.

The scheduler can reorder (random delays), duplicate and drop messages; a dropped message is
delivered again later, as the mesh resends what a broken link lost. Everything random comes from
one seeded `random.Random`, so a failing run can be replayed exactly. Seats decide through a
`Chooser` (by default a random legal move) — bots proper live in `lanplay`, which this package
must not import.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocol.identity import Identity
from protocol.session import Blamed, Event, GameOver, Output, Send, TableSession, TableSettings

Chooser = Callable[[TableSession, random.Random], Any]
SessionFactory = Callable[..., TableSession]


def random_chooser(session: TableSession, rng: random.Random) -> Any:
    return rng.choice(session.decision())


def test_identity(seed: int, seat: int) -> Identity:
    """A deterministic identity for tests (never for real tables)."""
    return Identity.from_private_bytes(hashlib.sha256(f"lanplay-test/{seed}/{seat}".encode()).digest())


@dataclass(order=True)
class _Delivery:
    time: float
    order: int
    to: int = field(compare=False)
    sender: int = field(compare=False)
    data: bytes = field(compare=False)


@dataclass
class Faults:
    max_delay: float = 0.0  # each message waits a random 0..max_delay: reorders across links
    duplicate: float = 0.0  # chance a message is delivered twice
    drop: float = 0.0  # chance a delivery is lost and resent after `resend_after`
    resend_after: float = 1.0


class Harness:
    def __init__(
        self,
        game: str,
        players: int,
        options: Mapping[str, object] | None = None,
        *,
        seed: int = 0,
        faults: Faults | None = None,
        factories: Mapping[int, SessionFactory] | None = None,
        choosers: Mapping[int, Chooser] | None = None,
        step_timeout: float = 5.0,
    ) -> None:
        self.rng = random.Random(seed)
        self.faults = faults or Faults()
        self.identities = [test_identity(seed, seat) for seat in range(players)]
        table = hashlib.sha256(f"table/{seed}".encode()).hexdigest()[:32]
        self.settings = TableSettings(
            table=table,
            game=game,
            options=dict(options or {}),
            seats=tuple(i.public for i in self.identities),
            names=tuple(f"P{seat}" for seat in range(players)),
            step_timeout=step_timeout,
        )
        factories = factories or {}
        # Each seat draws its secrets from its own seeded stream, so a run can be repeated exactly.
        self.sessions: list[TableSession] = [
            factories.get(seat, TableSession)(self.settings, identity, 0.0, random.Random(seed * 1000 + seat).randbytes)
            for seat, identity in enumerate(self.identities)
        ]
        self.choosers: dict[int, Chooser] = dict(choosers or {})
        self.events: list[list[Event]] = [[] for _ in range(players)]
        self.now = 0.0
        self._queue: list[_Delivery] = []
        self._order = 0
        self.delivered = 0

    # --- wiring --------------------------------------------------------------------------------

    def _route(self, sender: int, outputs: Sequence[Output]) -> None:
        for output in outputs:
            if isinstance(output, Send):
                targets = range(len(self.sessions)) if output.to is None else (output.to,)
                for to in targets:
                    if to != sender:
                        self._schedule(sender, to, output.data)
            else:
                self.events[sender].append(output)

    def _schedule(self, sender: int, to: int, data: bytes) -> None:
        f = self.faults
        copies = 2 if self.rng.random() < f.duplicate else 1
        for _ in range(copies):
            delay = self.rng.uniform(0, f.max_delay) if f.max_delay else 0.0
            if self.rng.random() < f.drop:
                delay += f.resend_after
            self._order += 1
            heapq.heappush(self._queue, _Delivery(self.now + delay, self._order, to, sender, data))

    def flush(self, seat: int) -> None:
        """Route whatever `seat`'s session has queued outside a call (a test acting as that seat)."""
        self._route(seat, self.sessions[seat].drain())

    def inject(self, sender: int, to: int, data: bytes) -> None:
        """Put raw bytes on the wire from `sender` to `to` (hostile input in tests)."""
        self._order += 1
        heapq.heappush(self._queue, _Delivery(self.now, self._order, to, sender, data))

    # --- running -------------------------------------------------------------------------------

    def start(self) -> None:
        for seat, session in enumerate(self.sessions):
            self._route(seat, session.start(self.now))

    def _decide(self) -> bool:
        acted = False
        for seat, session in enumerate(self.sessions):
            moves = session.decision()
            if moves:
                chooser = self.choosers.get(seat, random_chooser)
                self._route(seat, session.decide(chooser(session, self.rng), self.now))
                acted = True
        return acted

    def finished(self) -> bool:
        return all(s.stage in ("over", "ended") for s in self.sessions)

    def run(
        self,
        until_rounds: int | None = None,
        until: Callable[[Harness], bool] | None = None,
        max_deliveries: int = 200_000,
        max_idle_ticks: int = 3,
    ) -> None:
        """Deliver, decide and tick until every session has ended (or nothing more happens), until
        every session still playing has confirmed `until_rounds` rounds, or until `until` holds."""
        if not self.delivered and not self._queue:
            self.start()
        idle = 0
        while not self.finished() and self.delivered < max_deliveries:
            if until_rounds is not None and all(
                len(s.rounds) >= until_rounds for s in self.sessions if s.stage != "ended"
            ):
                return
            if until is not None and until(self):
                return
            if self._decide():
                continue
            if self._queue:
                item = heapq.heappop(self._queue)
                self.now = max(self.now, item.time)
                self.delivered += 1
                self._route(item.to, self.sessions[item.to].receive(item.sender, item.data, self.now))
                idle = 0
                continue
            if idle >= max_idle_ticks:
                return
            idle += 1  # nothing in flight: let time pass so withheld steps are blamed (P-5.3)
            self.now += self.settings.step_timeout + 1
            for seat, session in enumerate(self.sessions):
                self._route(seat, session.tick(self.now))

    # --- results -------------------------------------------------------------------------------

    def blames(self, seat: int) -> list[Blamed]:
        return [e for e in self.events[seat] if isinstance(e, Blamed)]

    def game_over(self, seat: int) -> GameOver | None:
        return next((e for e in self.events[seat] if isinstance(e, GameOver)), None)
