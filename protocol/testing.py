"""An in-memory table: N sessions wired together by a deterministic scheduler, and an attacker's kit.

The scheduler can reorder (random delays), duplicate and drop messages; a dropped message is
delivered again later, as the mesh resends what a broken link lost. Everything random comes from
one seeded `random.Random`, so a failing run can be replayed exactly. Seats decide through a
`Chooser` (by default a random legal move) — bots proper live in `lanplay`, which this package
must not import.

The attacker's kit works at the message level, so it does not depend on how the session is built
inside: a malicious seat runs a real `TableSession`, but every message it sends passes through a
`Strategy` that holds the seat's `Identity` (through an `AttackContext`). A strategy can decode the
message, change it, drop it, delay it, duplicate it, send each seat something different, or add
messages of its own; whatever it changes is signed again with a correct chain per recipient
(`seq` and `prev` follow what that recipient was actually sent), unless the strategy asks for a
deliberately broken one. `check_invariants` then checks the trust invariants of issue 9 (I1 no
honest seat blamed, I2 honest seats agree, I3 no exception escaped, I4 the table ended, I6 bounded
memory per author) at every honest seat. Time is the harness clock: "just past a limit" runs
instantly.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import heapq
import itertools
import random
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.record import replay_text
from protocol.commitment import commit
from protocol.encoding import JSONObject, canonical
from protocol.identity import Identity
from protocol.session import Blamed, Event, GameOver, Output, RoundAudited, Send, TableSession, TableSettings
from protocol.signed import SignedMessage, sign_message

Chooser = Callable[[TableSession, random.Random], Any]
SessionFactory = Callable[..., TableSession]


def random_chooser(session: TableSession, rng: random.Random) -> Any:
    return rng.choice(session.decision())


def test_identity(seed: int, seat: int) -> Identity:
    """A deterministic identity for tests (never for real tables)."""
    return Identity.from_private_bytes(hashlib.sha256(f"lanplay-test/{seed}/{seat}".encode()).digest())


def table_id(seed: int, salt: str = "") -> str:
    """The harness's table id for `seed`; another `salt` gives another table of the same players."""
    return hashlib.sha256(f"table/{seed}{salt}".encode()).hexdigest()[:32]


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
    gossip_delay: float = 0.0  # another seat's message passed on waits this long (lanplay's runner: 50 ms)


@dataclass(frozen=True, slots=True)
class Outage:
    """Seat `seat` is away from `start` for `seconds` (a crash and restart, a cut cable, a laptop lid
    closed): it neither runs nor ticks, what is sent to it waits for its return (the mesh resends),
    and the other seats are told its link is down until then. On its return it ticks first, before
    anything reaches it, as lanplay's runner does after a resume (issue 9 finding 9). With `after`,
    the outage starts instead as soon as the seat has sent its first message of that kind (e.g.
    "shuffle": its lock pass is then due while it is away)."""

    seat: int
    seconds: float
    start: float = 0.0
    after: str | None = None


@dataclass(frozen=True, slots=True)
class Escaped:
    """An exception that escaped a session's public method (I3): the harness records it and goes on."""

    seat: int
    call: str  # start / receive / decide / tick
    error: str
    where: str  # the innermost frames of the traceback


@dataclass(frozen=True, slots=True)
class Delivered:
    """One delivery, as `Harness(record_deliveries=True)` logs it."""

    time: float
    sender: int
    to: int
    data: bytes


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
        turn_timeout: float | None = None,
        reconnect_timeout: float = 120.0,
        adversaries: Mapping[int, Strategy] | None = None,
        table: str | None = None,
        identities: Sequence[Identity] | None = None,
        catch: bool = False,
        record_deliveries: bool = False,
        outages: Sequence[Outage] = (),
    ) -> None:
        self.rng = random.Random(seed)
        self.faults = faults or Faults()
        self.identities = list(identities or [test_identity(seed, seat) for seat in range(players)])
        self.settings = TableSettings(
            table=table or table_id(seed),
            game=game,
            options=dict(options or {}),
            seats=tuple(i.public for i in self.identities),
            names=tuple(f"P{seat}" for seat in range(players)),
            step_timeout=step_timeout,
            reconnect_timeout=reconnect_timeout,
            turn_timeout=turn_timeout,
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
        # I3: with `catch`, an exception out of a session is recorded here instead of ending the run.
        self.catch = catch or bool(adversaries)
        self.exceptions: list[Escaped] = []
        self.anomalies: list[str] = []  # a session that misbehaves without raising (see `_decide`)
        self._asked: set[int] = set()
        self.log: list[Delivered] | None = [] if record_deliveries else None
        self.attackers: dict[int, AttackContext] = {
            seat: AttackContext(self, seat, strategy, random.Random(f"attack/{seed}/{seat}"))
            for seat, strategy in (adversaries or {}).items()
        }
        self.stopped_because = ""
        self.outages = list(outages)
        self._away: dict[int, tuple[Outage, float]] = {}  # seat -> (outage, its end)
        self._outage_starts: dict[int, float] = {
            i: o.start for i, o in enumerate(self.outages) if o.after is None
        }  # outage index -> when it starts

    # --- wiring --------------------------------------------------------------------------------

    def _route(self, sender: int, outputs: Sequence[Output]) -> None:
        attacker = self.attackers.get(sender)
        for output in outputs:
            if isinstance(output, Send):
                self._maybe_start_outage(sender, output)
                if attacker is not None:
                    attacker.outgoing(output)
                    continue
                targets = range(len(self.sessions)) if output.to is None else (output.to,)
                lag = self.faults.gossip_delay if output.forward else 0.0
                for to in targets:
                    if to != sender:
                        self._schedule(sender, to, output.data, lag)
            else:
                self.events[sender].append(output)

    def _maybe_start_outage(self, sender: int, output: Send) -> None:
        for index, outage in enumerate(self.outages):
            if outage.seat == sender and outage.after is not None and index not in self._outage_starts:
                msg = _decode(output.data)
                if msg is not None and msg.author == self.identities[sender].peer_id and msg.kind == outage.after:
                    self._outage_starts[index] = self.now  # it goes away right after sending this
                    self._outages()

    def _schedule(self, sender: int, to: int, data: bytes, extra_delay: float = 0.0) -> None:
        f = self.faults
        copies = 2 if self.rng.random() < f.duplicate else 1
        for _ in range(copies):
            delay = self.rng.uniform(0, f.max_delay) if f.max_delay else 0.0
            if self.rng.random() < f.drop:
                delay += f.resend_after
            self._order += 1
            heapq.heappush(self._queue, _Delivery(self.now + delay + extra_delay, self._order, to, sender, data))

    def flush(self, seat: int) -> None:
        """Route whatever `seat`'s session has queued outside a call (a test acting as that seat)."""
        self._route(seat, self.sessions[seat].drain())

    def inject(self, sender: int, to: int, data: bytes, delay: float = 0.0) -> None:
        """Put raw bytes on the wire from `sender` to `to` (hostile input in tests)."""
        self._order += 1
        heapq.heappush(self._queue, _Delivery(self.now + delay, self._order, to, sender, data))

    def _call(self, seat: int, call: str, action: Callable[[], list[Output]]) -> None:
        if not self.catch:
            self._route(seat, action())
            return
        try:
            outputs = action()
        except Exception as exc:  # I3: counted, not fatal, so a soak can report every one
            where = " <- ".join(
                f"{frame.name}:{frame.lineno}" for frame in reversed(traceback.extract_tb(exc.__traceback__)[-4:])
            )
            self.exceptions.append(Escaped(seat, call, f"{type(exc).__name__}: {exc}"[:300], where))
            return
        self._route(seat, outputs)

    # --- running -------------------------------------------------------------------------------

    def start(self) -> None:
        for seat, session in enumerate(self.sessions):
            self._call(seat, "start", lambda s=session: s.start(self.now))  # type: ignore[misc]

    def _decide(self) -> bool:
        acted = False
        for seat, session in enumerate(self.sessions):
            if seat in self._away:
                continue
            try:
                moves = session.decision()
            except Exception:
                if not self.catch:
                    raise
                moves = ()
            if moves and seat not in self._asked:
                attacker = self.attackers.get(seat)
                if seat in self.choosers or attacker is None:
                    move = self.choosers.get(seat, random_chooser)(session, self.rng)
                else:
                    move = attacker.strategy.choose(attacker, session, self.rng)
                before = len(self.exceptions)
                self._call(seat, "decide", lambda s=session, m=move: s.decide(m, self.now))  # type: ignore[misc]
                if len(self.exceptions) > before:
                    continue  # a session that raised on its own move would be asked forever
                with contextlib.suppress(Exception):
                    if session.decision() == moves:
                        # The move was taken (and sent) but the same choice is still open: asking
                        # again would send move after move. Ask again once something arrives.
                        self._asked.add(seat)
                        self.anomalies.append(f"seat {seat}: decision() still offers the same moves after decide()")
                acted = True
        return acted

    def finished(self) -> bool:
        return all(s.stage in ("over", "stopped", "ended") for s in self.sessions)

    def _tick_all(self) -> None:
        self._outages()
        for seat, session in enumerate(self.sessions):
            if seat not in self._away:
                self._call(seat, "tick", lambda s=session: s.tick(self.now))  # type: ignore[misc]
        for attacker in self.attackers.values():
            attacker.strategy.on_tick(attacker, self.now)

    def _outages(self) -> None:
        """Start and end the outages whose time has come."""
        for index, outage in enumerate(self.outages):
            start = self._outage_starts.get(index)
            if start is None:
                continue
            end = start + outage.seconds
            current = self._away.get(outage.seat)
            away = current is not None and current[0] is outage
            if not away and start <= self.now < end:
                self._away[outage.seat] = (outage, end)
                for seat, session in enumerate(self.sessions):
                    if seat != outage.seat:
                        session.set_connected(outage.seat, False, self.now)
            elif away and self.now >= end:
                del self._away[outage.seat]
                back = self.sessions[outage.seat]
                self._call(outage.seat, "tick", lambda b=back: b.tick(self.now))  # type: ignore[misc]  # before any link is up
                for seat, session in enumerate(self.sessions):
                    if seat != outage.seat:
                        session.set_connected(outage.seat, True, self.now)

    def _deliver(self, item: _Delivery) -> None:
        away = self._away.get(item.to)
        if away is not None:  # held by the mesh until the seat is back
            self._order += 1
            heapq.heappush(self._queue, _Delivery(away[1], self._order, item.to, item.sender, item.data))
            return
        self.delivered += 1
        if self.log is not None:
            self.log.append(Delivered(item.time, item.sender, item.to, item.data))
        attacker = self.attackers.get(item.to)
        data: bytes | None = item.data
        if attacker is not None:
            data = attacker.incoming(item.sender, item.data)
        self._asked.discard(item.to)
        if data is not None:
            session = self.sessions[item.to]
            self._call(item.to, "receive", lambda: session.receive(item.sender, data, self.now))

    def run(
        self,
        until_rounds: int | None = None,
        until: Callable[[Harness], bool] | None = None,
        max_deliveries: int = 200_000,
        max_idle_ticks: int = 3,
        *,
        tick_every: float | None = None,
        max_time: float | None = None,
        settle: float = 0.0,
    ) -> None:
        """Deliver, decide and tick until every session has ended (or nothing more happens), until
        every session still playing has confirmed `until_rounds` rounds, or until `until` holds.

        Without `tick_every`, time only jumps past the step limit when nothing is in flight. With
        it, every session (and every attacker) is ticked each `tick_every` simulated seconds, as a
        runner's timer would, so a message held back to just under or just past a limit arrives
        between the ticks it would meet on a real table; the run then stops at `max_time`, or once
        nothing has happened for `max_idle_ticks` ticks. `stopped_because` says why it stopped.
        Stopping at `until_rounds`, what is already in flight for the next `settle` seconds is still
        delivered (no new decisions): a verdict under way is not cut off by the round budget."""
        if not self.delivered and not self._queue:
            self.start()
        idle = 0
        next_tick = self.now + tick_every if tick_every else 0.0
        while True:
            if self.finished():
                self.stopped_because = "finished"
                self._drain_in_flight(max_deliveries)
                self.settle_verdicts(max_deliveries)
                return
            if self.delivered >= max_deliveries:
                self.stopped_because = "max_deliveries"
                return
            if max_time is not None and self.now > max_time:
                self.stopped_because = "max_time"
                return
            if until_rounds is not None and all(
                len(s.rounds) >= until_rounds for s in self.sessions if s.stage not in ("stopped", "ended")
            ):
                self.stopped_because = "rounds"
                self._settle(settle)
                self.settle_verdicts(max_deliveries)
                return
            if until is not None and until(self):
                self.stopped_because = "until"
                return
            if self._decide():
                idle = 0
                continue
            if tick_every:
                due = self._queue[0].time if self._queue else None
                if due is not None and due <= next_tick:
                    item = heapq.heappop(self._queue)
                    self.now = max(self.now, item.time)
                    self._outages()
                    self._deliver(item)
                    idle = 0
                    continue
                if due is None:
                    idle += 1
                    if idle > max_idle_ticks:
                        self.stopped_because = "idle"
                        return
                self.now = max(self.now, next_tick)
                next_tick += tick_every
                self._tick_all()
                continue
            if self._queue:
                item = heapq.heappop(self._queue)
                self.now = max(self.now, item.time)
                self._deliver(item)
                idle = 0
                continue
            if idle >= max_idle_ticks:
                self.stopped_because = "idle"
                return
            idle += 1  # nothing in flight: let time pass so withheld steps are blamed (P-5.3)
            self.now += self.settings.step_timeout + 1
            self._tick_all()

    def _drain_in_flight(self, max_deliveries: int) -> None:
        """What is in flight when every seat has finished is still delivered, as a runner keeps
        receiving while it drains its last messages: a fork in the game's last messages shows
        then, and a seat that had declared the game over may still reach the blamer's verdict."""
        while self._queue and self.delivered < max_deliveries:
            item = heapq.heappop(self._queue)
            self.now = max(self.now, item.time)
            self._deliver(item)

    def settle_verdicts(self, max_deliveries: int = 200_000, step: float = 0.25) -> None:
        """A seat that convicted ends only at its `listen_until` (`blame.settle_verdict`): time passes
        to there in runner ticks, delivering what is in flight on the way, as a runner keeps a convicted
        seat's links open until then; so every honest seat's verdict is its last one."""
        while self.delivered < max_deliveries:
            pending = [
                until
                for s in self.sessions
                if s.stage == "stopped"
                and (s.convicted or s.stopped is None)
                and (until := s.listen_until()) is not None
            ]
            if not pending:
                return
            self._settle(step)
            self.now += step
            self._tick_all()

    def _settle(self, seconds: float) -> None:
        end = self.now + seconds
        while self._queue and self._queue[0].time <= end:
            item = heapq.heappop(self._queue)
            self.now = max(self.now, item.time)
            self._deliver(item)

    # --- results -------------------------------------------------------------------------------

    def blames(self, seat: int) -> list[Blamed]:
        return [e for e in self.events[seat] if isinstance(e, Blamed)]

    def game_over(self, seat: int) -> GameOver | None:
        return next((e for e in self.events[seat] if isinstance(e, GameOver)), None)


# =================================================================================================
# The attacker's kit
# =================================================================================================


@dataclass(frozen=True, slots=True)
class Emit:
    """One version of an outgoing message of the attacker's own, for one recipient.

    `body`, `kind`, `round` replace the original's (None: keep). The message is signed again
    with the next `seq` and `prev` of the chain this recipient has been sent, so dropping or
    changing a message leaves a valid chain; `chain=False` instead keeps the original's `seq` and
    `prev` (a deliberately broken chain). `raw` sends those bytes as they are (a replay)."""

    body: JSONObject | None = None
    kind: str | None = None
    round: int | None = None
    delay: float = 0.0
    chain: bool = True
    raw: bytes | None = None


KEEP = Emit()


class _View:
    """The attacker's chain on one channel as one recipient has been sent it."""

    __slots__ = ("head", "seq")

    def __init__(self) -> None:
        self.seq = 0
        self.head = "0" * 64


class AttackContext:
    """What a strategy works with: the malicious seat's identity and real session, the harness's
    clock, a seeded `rng`, what the seat has received, and ways to send."""

    def __init__(self, harness: Harness, seat: int, strategy: Strategy, rng: random.Random) -> None:
        self.harness = harness
        self.seat = seat
        self.strategy = strategy
        self.rng = rng
        self.identity = harness.identities[seat]
        self.settings = harness.settings
        self.n = len(harness.sessions)
        self.applied = 0  # how many times the strategy actually deviated (a table it never touched proves nothing)
        self.sent: list[SignedMessage] = []  # every message of its own the seat's session produced
        self.received: list[SignedMessage] = []  # every decodable message that reached it
        self.kind_count: dict[str, int] = {}
        self._views: dict[tuple[str, int], _View] = {}
        self.shared: dict[str, Any] = {}  # a place colluding strategies share (the same dict for both)

    @property
    def session(self) -> TableSession:
        return self.harness.sessions[self.seat]

    @property
    def now(self) -> float:
        return self.harness.now

    def honest(self) -> list[int]:
        return [s for s in range(self.n) if s not in self.harness.attackers]

    def victim(self) -> int:
        """The honest seat after this one: the usual target."""
        order: list[int] = [*range(self.seat + 1, self.n), *range(self.seat)]
        return next(s for s in order if s not in self.harness.attackers)

    # --- the hooks the harness calls -----------------------------------------------------------

    def outgoing(self, output: Send) -> None:
        targets = [t for t in (range(self.n) if output.to is None else (output.to,)) if t != self.seat]
        msg = _decode(output.data)
        if msg is None or msg.author != self.identity.peer_id:
            lag = self.harness.faults.gossip_delay if output.forward else 0.0
            for to in targets:
                if self.strategy.forward(self, to, output.data):
                    self.harness._schedule(self.seat, to, output.data, lag)
            return
        self.sent.append(msg)
        occurrence = self.kind_count.get(msg.kind, 0)
        self.kind_count[msg.kind] = occurrence + 1
        self.strategy.before(self, msg, occurrence)
        deviated = False
        for to in targets:
            emits = self.strategy.outgoing(self, to, msg, occurrence)
            deviated = deviated or not emits or any(e is not KEEP for e in emits)
            for emit in emits:
                self.send_version(to, msg, emit)
        self.applied += deviated

    def incoming(self, sender: int, data: bytes) -> bytes | None:
        msg = _decode(data)
        if msg is None:
            return data
        if msg.author == self.identity.peer_id:
            return None  # its own messages coming back, possibly in another version than the session signed
        self.received.append(msg)
        return data if self.strategy.incoming(self, sender, msg) else None

    # --- sending ----------------------------------------------------------------------------------

    def _view(self, channel: str, to: int) -> _View:
        return self._views.setdefault((channel, to), _View())

    def send_version(self, to: int, msg: SignedMessage, emit: Emit) -> None:
        if emit.raw is not None:
            self.harness._schedule(self.seat, to, emit.raw, emit.delay)
            return
        view = self._view(msg.table, to)
        body = msg.body if emit.body is None else emit.body
        kind = emit.kind or msg.kind
        rnd = msg.round if emit.round is None else emit.round
        if not emit.chain:
            seq, prev = msg.seq, msg.prev
        else:
            seq, prev = view.seq, view.head
        if (seq, prev, body, kind, rnd) == (msg.seq, msg.prev, msg.body, msg.kind, msg.round):
            signed = msg
        else:
            signed = sign_message(self.identity, msg.table, rnd, seq, prev, kind, body)
        if emit.chain:
            view.seq, view.head = seq + 1, signed.digest()
        self.harness._schedule(self.seat, to, signed.to_wire(), emit.delay)

    def publish(
        self, kind: str, body: JSONObject, to: Sequence[int] | None = None, delay: float = 0.0, round: int | None = None
    ) -> list[SignedMessage]:
        """A public message of the attacker's own making, next in the chain of every recipient."""
        targets = [t for t in (range(self.n) if to is None else to) if t != self.seat]
        rnd = self.session.round_index if round is None else round
        out = []
        for t in targets:
            view = self._view(self.settings.table, t)
            signed = sign_message(self.identity, self.settings.table, rnd, view.seq, view.head, kind, body)
            view.seq, view.head = view.seq + 1, signed.digest()
            self.harness._schedule(self.seat, t, signed.to_wire(), delay)
            out.append(signed)
        return out

    def raw(self, to: int, data: bytes, delay: float = 0.0) -> None:
        self.harness._schedule(self.seat, to, data, delay)


def _decode(data: bytes) -> SignedMessage | None:
    try:
        return SignedMessage.from_wire(data)
    except Exception:
        return None


class Strategy:
    """A modified client's behaviour: the base class is an honest one. `name` identifies it in
    reports; `caught` says whether the strategy is a cheat every honest seat must name (the "caught"
    count); a harmless deviation (a duplicate, a message from nowhere) has `caught = False`."""

    name = "honest"
    caught = False

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        """The versions of the seat's own message `msg` (its `occurrence`-th of its kind) that go to `to`."""
        return (KEEP,)

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        """Called once per message of its own, before `outgoing` is asked per recipient: the place to
        `publish` messages of the attacker's own making ahead of it (in every recipient's chain)."""

    def forward(self, ctx: AttackContext, to: int, data: bytes) -> bool:
        """Whether to pass on another seat's message (gossip) to `to`."""
        return True

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        """Whether the seat's session gets to see `msg`."""
        return True

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        """Time passes (every `tick_every`)."""

    def choose(self, ctx: AttackContext, session: TableSession, rng: random.Random) -> Any:
        """The seat's own decision among `session.decision()` (a random one by default)."""
        return random_chooser(session, rng)


class _Targeted(Strategy):
    """A strategy that acts on the `nth` message of one `kind` (the first by default)."""

    def __init__(self, kind: str, nth: int = 0) -> None:
        self.kind = kind
        self.nth = nth

    def hit(self, msg: SignedMessage, occurrence: int) -> bool:
        return msg.kind == self.kind and occurrence == self.nth


# --- mutate -------------------------------------------------------------------------------------

_HEX = frozenset("0123456789abcdef")


def _is_hex(value: str) -> bool:
    return len(value) >= 2 and set(value) <= _HEX


def mutate_value(value: object, rng: random.Random, siblings: Sequence[object] = ()) -> object:
    """Another value of the same shape: a hex string becomes another one of its length (a sibling's
    when there is one, i.e. a real point or key of another position), an int moves by one, a list
    swaps two items, a bool flips, an object has one field changed."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if value == 0 or rng.random() < 0.5 else value - 1
    if isinstance(value, str):
        others = [s for s in siblings if isinstance(s, str) and s != value and len(s) == len(value)]
        if others:
            return rng.choice(others)
        if _is_hex(value):
            last = "0123456789abcdef"[(int(value[-1], 16) + 1) % 16]
            return value[:-1] + last
        return value[::-1] if value[::-1] != value else value + "x"
    if isinstance(value, list):
        if len(value) >= 2 and rng.random() < 0.5:
            i, j = rng.sample(range(len(value)), 2)
            out = list(value)
            out[i], out[j] = out[j], out[i]
            if out != value:
                return out
        if not value:
            return [0]
        i = rng.randrange(len(value))
        out = list(value)
        out[i] = mutate_value(value[i], rng, value)
        return out
    if isinstance(value, dict):
        if not value:
            return {"x": 0}
        key = rng.choice(sorted(value))
        return {**value, key: mutate_value(value[key], rng)}
    return value


class MutateField(_Targeted):
    """Mutate a field of the `nth` message of `kind` to another valid-looking value (`path` names the
    field, dotted; empty: a field chosen at random, which may be one nobody reads), re-signed with
    a correct chain."""

    def __init__(self, kind: str, path: str = "", nth: int = 0) -> None:
        super().__init__(kind, nth)
        self.path = path
        self.caught = bool(path)
        self.name = f"mutate:{kind}" + (f".{path}" if path else "")

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence):
            return (KEEP,)
        if "_mutated" not in ctx.shared:
            ctx.shared["_mutated"] = self.mutate(msg.body, ctx.rng)
        return (Emit(body=ctx.shared["_mutated"]),)

    def mutate(self, body: JSONObject, rng: random.Random) -> JSONObject:
        if not self.path:
            out = mutate_value(body, rng)
            assert isinstance(out, dict)
            return out
        keys = self.path.split(".")
        return _set_path(body, keys, lambda v: mutate_value(v, rng))


def _set_path(obj: JSONObject, keys: Sequence[str], change: Callable[[object], object]) -> JSONObject:
    head, rest = keys[0], keys[1:]
    inner = obj.get(head)
    if rest and isinstance(inner, dict):
        return {**obj, head: _set_path(inner, rest, change)}
    return {**obj, head: change(inner)}


class MutateEnvelope(_Targeted):
    """Sign the `nth` message of `kind` for another round (`round` + `by`)."""

    caught = True

    def __init__(self, kind: str, by: int = 1, nth: int = 0) -> None:
        super().__init__(kind, nth)
        self.by = by
        self.name = f"mutate-round:{kind}{by:+d}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence) or msg.round + self.by < 0:
            return (KEEP,)
        return (Emit(round=msg.round + self.by),)


class BrokenChain(_Targeted):
    """Send the `nth` message of `kind` changed but with the original's seq and prev: every later
    message then fails to link (an equivocation the honest seats can prove, unless it was the last)."""

    def __init__(self, kind: str, nth: int = 0) -> None:
        super().__init__(kind, nth)
        self.name = f"broken-chain:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence):
            return (KEEP,)
        return (Emit(body={**msg.body, "x": 1}, chain=False),)


# --- withhold, delay, forward -------------------------------------------------------------------


class Withhold(_Targeted):
    """Never send the `nth` message of `kind` (nor anything after it, when `stop` is set); the
    chain of what is sent stays valid."""

    def __init__(self, kind: str, nth: int = 0, stop: bool = False) -> None:
        super().__init__(kind, nth)
        self.stop = stop
        # Only its recipient knows a private message never came: the table may stop without a
        # conviction (I2) rather than name the withholder.
        self.caught = not kind.startswith("p.")
        self.name = f"withhold:{kind}" + ("+stop" if stop else "")

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if self.hit(msg, occurrence):
            ctx.shared["withheld"] = True
            return ()
        if self.stop and ctx.shared.get("withheld"):
            return ()
        return (KEEP,)


class WithholdKeepAlive(Withhold):
    """Issue 9 finding 7: withhold, and publish an evidence-free blame every 3/4 of the step limit
    so that a clock that any handled message resets never runs out."""

    def __init__(self, kind: str, nth: int = 0) -> None:
        super().__init__(kind, nth, stop=True)
        self.name = f"withhold-keepalive:{kind}"
        self.caught = False  # an evidence-free blame may stop the table with nobody convicted (I1, I2)
        self._last = 0.0

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if ctx.shared.get("withheld") and now - self._last >= 0.75 * ctx.settings.step_timeout:
            self._last = now
            ctx.publish("blame", {"seat": ctx.victim(), "rule": "P-5.3", "message": "keep-alive", "evidence": []})


class Delay(_Targeted):
    """Deliver the `nth` message of `kind` to `victim` (default: the next honest seat) `offset`
    seconds after the step limit (negative: just under it) — issue 9 finding 8."""

    def __init__(self, kind: str, offset: float, nth: int = 0, everyone: bool = False) -> None:
        super().__init__(kind, nth)
        self.offset = offset
        self.everyone = everyone
        self.caught = offset > 0 and everyone and not kind.startswith("p.")
        where = "all" if everyone else "one"
        self.name = f"delay-{'over' if offset > 0 else 'under'}-{where}:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence) or not (self.everyone or to == ctx.victim()):
            return (KEEP,)
        return (Emit(delay=ctx.settings.step_timeout + self.offset),)


class NoGossip(Strategy):
    """Pass on nobody's messages (forward selectively: here, never); `only_to` drops gossip to that seat only."""

    def __init__(self, only_to_victim: bool = False) -> None:
        self.only_to_victim = only_to_victim
        self.name = "no-gossip" + ("-to-one" if only_to_victim else "")

    def forward(self, ctx: AttackContext, to: int, data: bytes) -> bool:
        ctx.applied += 1
        return self.only_to_victim and to != ctx.victim()


class Duplicate(Strategy):
    """Send every message of its own twice, the second copy later: harmless (P-1.3 duplicates)."""

    name = "duplicate"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return (KEEP, Emit(raw=msg.to_wire(), delay=0.5))


# --- equivocate ------------------------------------------------------------------------------


class Equivocate(_Targeted):
    """Send the `nth` message of `kind` in two versions: the original to some seats and a mutated
    one to the others (`one`: to the victim only). Each recipient's chain is valid on its own; only
    comparing them (gossip) shows the fork."""

    def __init__(self, kind: str, one: bool = False, nth: int = 0) -> None:
        super().__init__(kind, nth)
        self.one = one
        self.caught = not kind.startswith("p.")
        self.name = f"{'different-to-one' if one else 'equivocate'}:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence):
            return (KEEP,)
        if msg.kind.startswith("p."):  # one recipient: both versions to it, at the same seq
            forked = mutate_value(msg.body, ctx.rng)
            assert isinstance(forked, dict)
            return (KEEP, Emit(body=forked, chain=False))
        others = [s for s in range(ctx.n) if s != ctx.seat]
        second = {ctx.victim()} if self.one else set(others[len(others) // 2 :])
        if to not in second:
            return (KEEP,)
        if "_forked" not in ctx.shared:
            ctx.shared["_forked"] = mutate_value(msg.body, ctx.rng)  # one second version for all
        return (Emit(body=ctx.shared["_forked"]),)


# --- replay -----------------------------------------------------------------------------------


def shadow_messages(ctx: AttackContext, whole_round: bool = False) -> list[Delivered]:
    """Play an honest table of the same players and game at another table id (the "earlier table")
    up to the deal (or the `whole_round`) and return what reached the attacker's seat there and
    what it sent: a replay's material."""
    key = f"_shadow/{whole_round}"
    cached = ctx.shared.get(key)
    if cached is not None:
        return list(cached)
    h = ctx.harness
    seed = ctx.rng.randrange(1_000_000)
    shadow = Harness(
        h.settings.game,
        ctx.n,
        h.settings.options,
        seed=seed,
        table=table_id(seed, "/earlier"),
        identities=h.identities,  # the same people
        record_deliveries=True,
        step_timeout=h.settings.step_timeout,
    )
    if whole_round:
        shadow.run(until_rounds=1, max_deliveries=40_000)
    else:
        shadow.run(until=lambda x: all(s.stage not in ("seed", "deal") for s in x.sessions), max_deliveries=40_000)
    assert shadow.log is not None
    mine = [d for d in shadow.log if d.to == ctx.seat or d.sender == ctx.seat]
    ctx.shared[key] = mine
    return list(mine)


class ReplayOtherTable(_Targeted):
    """Issue 9 finding 1: when the `nth` message of `kind` would go out, publish a blame of the
    victim whose evidence is a private message (`p.keys`) the victim sent this seat at an earlier
    table of the same players; the real message goes out as well."""

    caught = False  # nobody cheats at this table in a way its seats can prove, except by the blame itself

    def __init__(self, kind: str = "move", evidence_kind: str = "p.keys", rule: str = "P-4.3") -> None:
        super().__init__(kind)
        self.evidence_kind = evidence_kind
        self.rule = rule
        self.name = f"replay-other-table-blame:{evidence_kind}"

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.hit(msg, occurrence) and not ctx.shared.get("_blamed"):
            ctx.shared["_blamed"] = True
            victim = ctx.victim()
            victim_id = ctx.settings.seats[victim].peer_id
            evidence = [
                m.to_json()
                for d in shadow_messages(ctx, whole_round=self.evidence_kind != "p.keys")
                if d.sender == victim and (m := _decode(d.data)) is not None
                and m.author == victim_id and m.kind == self.evidence_kind
            ]
            ctx.publish("blame", {"seat": victim, "rule": self.rule, "message": "replayed", "evidence": evidence[:1]})
            ctx.applied += 1


class ReplayOwnOtherTable(_Targeted):
    """Send, alongside the `nth` message of `kind`, the seat's own messages from an earlier table as
    they were signed there (a pure replay: every seat must refuse them and play on)."""

    def __init__(self, kind: str = "shuffle") -> None:
        super().__init__(kind)
        self.name = f"replay-own-other-table:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence):
            return (KEEP,)
        ctx.applied += 1
        old = [d.data for d in shadow_messages(ctx) if d.sender == ctx.seat]
        return (KEEP, *(Emit(raw=data) for data in old[:40]))


class ReplayPosition(_Targeted):
    """Replace the `nth` message of `kind` by the body of an earlier message of the same kind (another
    step, another round's deck) re-signed at this place of the chain."""

    caught = True

    def __init__(self, kind: str, nth: int = 1) -> None:
        super().__init__(kind, nth)
        self.name = f"replay-position:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if not self.hit(msg, occurrence):
            return (KEEP,)
        earlier = [m for m in ctx.sent[:-1] if m.kind == msg.kind and m.body != msg.body]
        if not earlier:
            return (KEEP,)
        return (Emit(body=earlier[0].body),)


class ReplayChannel(_Targeted):
    """Send the private message meant for one seat to another: as it is (wrong channel), and signed
    again on the other seat's channel (the keys of another hand)."""

    caught = True

    def __init__(self, kind: str = "p.keys") -> None:
        super().__init__(kind)
        self.name = f"replay-channel:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != self.kind or occurrence > 1:
            return (KEEP,)
        first = ctx.shared.setdefault("_first_private", msg)
        if first is msg:
            return (KEEP,)
        # The second recipient: the first one's message as it is (the wrong channel), then its body
        # (the keys of another hand) signed again on this recipient's own channel.
        ctx.applied += 1
        return (Emit(raw=first.to_wire()), Emit(body={**first.body, "to": to}))


# --- garbage of valid shape ---------------------------------------------------------------------


JUNK_MESSAGES = 72  # 14.4 MB (unknown kinds; twice that after a gap): past the I6 bound if nothing caps it


class Garbage(Strategy):
    """Valid signature, crafted body. `variant` picks the craft:

    * ``card-zz``: a hidden choice committed (and revealed) as ``{"card": "zz"}`` (finding 5);
    * ``not-object``: a hidden choice committed to bytes that are not a JSON object (finding 6);
    * ``superscript``: the secrets' openings keyed by ``"²"`` (finding 5);
    * ``huge-list``: a move with a 20,000-item list in an unexpected field;
    * ``unknown-kind``: `JUNK_MESSAGES` messages of an unknown kind of 200 KB each (finding 10);
    * ``blame-no-evidence``: a blame of the victim with no evidence;
    * ``blame-bad-evidence``: blames of the victim with evidence that is not signed messages;
    * ``bare-card``: a hand card named as a bare card code, not position and keys (finding 3);
    * ``gap-flood``: 100 KB messages after a gap in the seat's chain, held forever (finding 10).
    """

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.name = f"garbage:{variant}"
        self.caught = variant in ("card-zz", "not-object", "superscript", "bare-card")

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        v = self.variant
        if v in ("card-zz", "not-object") and msg.kind in ("commit", "reveal", "secrets"):
            return self._crafted_choice(ctx, msg)
        if v == "superscript" and msg.kind == "secrets":
            openings = msg.body.get("openings")
            if isinstance(openings, dict):
                crafted = {("²" if k == "0" or i == 0 else k): o for i, (k, o) in enumerate(sorted(openings.items()))}
                if not crafted:
                    crafted = {"²": {"value": "00", "nonce": "00" * 32}}
                return (Emit(body={**msg.body, "openings": crafted}),)
        if v == "huge-list" and msg.kind == "move" and occurrence == 0:
            return (Emit(body={**msg.body, "pad": [0] * 20_000}),)
        if v == "bare-card" and msg.kind == "move":
            move = msg.body.get("move")
            if isinstance(move, dict):
                for name in ("play", "predict"):
                    wire = move.get(name)
                    if isinstance(wire, dict) and "pos" in wire:
                        card = self._card_not_held(ctx, wire)
                        if card is not None:
                            return (Emit(body={**msg.body, "move": {**move, name: card}}),)
        return (KEEP,)

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        v = self.variant
        if msg.kind != "move" or occurrence != 0:
            return
        if v == "unknown-kind":
            ctx.applied += 1
            filler = "ab" * 100_000
            for i in range(JUNK_MESSAGES):
                ctx.publish("x.junk", {"i": i, "fill": filler})
        if v == "gap-flood":
            # Messages after a gap in the chain: held out of order, never released (finding 10).
            ctx.applied += 1
            filler = "cd" * 50_000
            for to in range(ctx.n):
                if to != ctx.seat:
                    view = ctx._view(ctx.settings.table, to)
                    for i in range(JUNK_MESSAGES * 2):
                        junk = sign_message(
                            ctx.identity, ctx.settings.table, msg.round, view.seq + 1000 + i, view.head, "move",
                            {"step": 0, "fill": filler},
                        )
                        ctx.raw(to, junk.to_wire())
        if v == "blame-no-evidence":
            ctx.applied += 1
            ctx.publish("blame", {"seat": ctx.victim(), "rule": "P-4.3", "message": "no evidence", "evidence": []})
        if v == "blame-bad-evidence":
            ctx.applied += 1
            bad: list[list[object]] = [[1, "x", None], [{"kind": "p.keys"}], [{"first": {}, "second": {}}]]
            for evidence in bad:
                ctx.publish("blame", {"seat": ctx.victim(), "rule": "P-4.3", "message": "bad", "evidence": evidence})

    def _card_not_held(self, ctx: AttackContext, wire: Mapping[str, object]) -> object | None:
        """A card of the same suit as the one really played (so that following suit holds) that the
        attacker does not hold and nobody has shown."""
        rd = getattr(ctx.session, "round", None)
        cards = getattr(getattr(getattr(rd, "ctx", None), "cards", None), "codes", ())
        held = set(getattr(rd, "my_cards", {}).values()) | set(getattr(rd, "table_cards", {}).values())
        position = wire.get("pos")
        real = str(getattr(rd, "my_cards", {}).get(position, ""))
        free = [c for c in cards if c not in held]
        same_suit = [c for c in free if real and str(c)[:1] == real[:1]]
        pool = same_suit or free
        return ctx.rng.choice(pool) if pool else None

    def _crafted_choice(self, ctx: AttackContext, msg: SignedMessage) -> Sequence[Emit]:
        """Commit to crafted bytes instead of the real choice, and open that commitment later."""
        crafted = ctx.shared.get("_crafted")
        step = msg.body.get("step")
        if msg.kind == "commit" and crafted is None:
            value = canonical({"card": "zz"}) if self.variant == "card-zz" else b"[1,2,3]"
            commitment, opening = commit(
                "lanplay/choice", ctx.settings.table, msg.round, ctx.seat, value, bytes(range(32))
            )
            crafted = ctx.shared["_crafted"] = {"step": step, "digest": commitment.hex(), "opening": opening}
        if crafted is None:
            return (KEEP,)
        opening = crafted["opening"]
        if msg.kind == "commit" and step == crafted["step"]:
            return (Emit(body={**msg.body, "digest": crafted["digest"]}),)
        if msg.kind == "reveal" and step == crafted["step"]:
            body = {**msg.body, "value": opening.value.hex(), "nonce": opening.nonce.hex()}
            body.pop("keys", None)
            return (Emit(body=body),)
        if msg.kind == "secrets":
            openings = msg.body.get("openings")
            if isinstance(openings, dict):
                key = str(crafted["step"])
                openings = {**openings, key: {"value": opening.value.hex(), "nonce": opening.nonce.hex()}}
                return (Emit(body={**msg.body, "openings": openings}),)
        return (KEEP,)


class LeakPrivate(Strategy):
    """Pass every private message it receives on to every other seat, as it is (the wrong channel
    for them: refused, and nothing else changes)."""

    name = "leak-private"

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        if msg.kind.startswith("p."):
            ctx.applied += 1
            for to in range(ctx.n):
                if to not in (ctx.seat, sender):
                    ctx.raw(to, msg.to_wire())
        return True


# --- attacks on the deal and the audit that need the seat's own secrets --------------------------


class LockAlias(Strategy):
    """Issue 9 finding 2 (seat 0 only, the first locker): feed the point of position p in as the
    input of position q. The output is valid, distinct points whose keys match their commitments;
    q then opens to p's card. `peek`: q is one of the attacker's own positions and p a victim's (it
    learns a card of the victim's hand); otherwise q and p are in two honest hands."""

    caught = True

    def __init__(self, peek: bool) -> None:
        self.peek = peek
        self.name = "lock-alias-" + ("peek" if peek else "frame")

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != "lock" or ctx.seat != 0 or occurrence != 0:
            return (KEEP,)
        body = ctx.shared.get("_aliased")
        if body is None:
            body = ctx.shared["_aliased"] = self._aliased(ctx) or msg.body
        if body is msg.body:
            return (KEEP,)
        ctx.applied += to == ctx.victim()
        return (Emit(body=body),)

    def _aliased(self, ctx: AttackContext) -> JSONObject | None:
        from protocol import deck

        rd = getattr(ctx.session, "round", None)
        try:
            hands = rd.layout_hands  # type: ignore[union-attr]
            deck_in = list(rd.shuffles[-1].points)  # type: ignore[union-attr]
            victim = ctx.victim()
            p = hands[victim][0]
            q = hands[ctx.seat][0] if self.peek else hands[next(s for s in ctx.honest() if s != victim)][0]
            deck_in[q] = deck_in[p]
            out = deck.lock_pass(rd.ctx, ctx.seat, deck_in, rd.my_shuffle, rd.my_lock)  # type: ignore[union-attr]
            body = out.to_json()
        except Exception:
            return None  # the session's inside changed: the strategy does not apply
        return body


class EquivocateValid(Strategy):
    """Two shuffle (or lock) passes that are each valid on their own (two fresh secrets, each with
    whatever proofs the deck module makes, on the pass's true input), one to half of the seats and
    one to the others: nothing is wrong with either on receipt; only comparing them (gossip) shows
    the fork. The seat after it builds on one version, which the seats holding the other cannot
    reproduce: unless a pass names what it was built on (`input`), they blame that honest seat (I1)."""

    caught = True

    def __init__(self, kind: str = "shuffle") -> None:
        self.kind = kind
        self.name = f"equivocate-valid:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != self.kind or occurrence != 0:
            return (KEEP,)
        key = f"_alt_{self.kind}"
        if key not in ctx.shared:
            ctx.shared[key] = self._alternative(ctx, msg.body)
        alt = ctx.shared[key]
        others = [s for s in range(ctx.n) if s != ctx.seat]
        if alt is None or to not in others[len(others) // 2 :]:
            return (KEEP,)
        return (Emit(body=alt),)

    def _alternative(self, ctx: AttackContext, body: JSONObject) -> JSONObject | None:
        from protocol import deck

        rd = getattr(ctx.session, "round", None)
        entropy = random.Random(f"alt/{self.kind}/{ctx.seat}").randbytes
        try:
            # the pass's own input, not the session's last pass (its own is already in by now)
            if self.kind == "shuffle":
                shuffles = rd.shuffles  # type: ignore[union-attr]
                deck_in = shuffles[ctx.seat - 1].points if ctx.seat else rd.ctx.cards.points  # type: ignore[union-attr]
                size = len(deck_in)
                secret = deck.ShuffleSecret(deck.random_scalar(entropy), deck.random_permutation(size, entropy))
                alt = deck.shuffle_pass(rd.ctx, ctx.seat, deck_in, secret).to_json()  # type: ignore[union-attr]
            else:
                locks = rd.locks  # type: ignore[union-attr]
                deck_in = locks[ctx.seat - 1].points if ctx.seat else rd.shuffles[-1].points  # type: ignore[union-attr]
                lock = deck.LockSecret.new(len(deck_in), entropy=entropy)
                out = deck.lock_pass(rd.ctx, ctx.seat, deck_in, rd.my_shuffle, lock)  # type: ignore[union-attr]
                alt = out.to_json()
        except Exception:
            return None  # the session's inside changed: the strategy does not apply
        return {**body, **alt}  # whatever else the honest body carries (what it was built on) stays


class EquivocateValidMove(Strategy):
    """Two different legal moves for one step, each signed and valid on its own, one to half of
    the seats and one to the others. The next mover's state hash then differs from the state of the
    seats holding the other move: unless they wait for the fork to show, they blame the honest next
    mover for a desync (I1)."""

    caught = True
    name = "equivocate-valid:move"

    def choose(self, ctx: AttackContext, session: TableSession, rng: random.Random) -> Any:
        moves = session.decision()
        if "_alt_move" in ctx.shared or len(moves) < 2 or session.game.hidden_choice(
            session.game.expected(session.state).kind
        ) is not None:
            return rng.choice(moves)
        first, second = rng.sample(list(moves), 2)
        rd = session.round
        assert rd is not None
        wire = dict(session.game.move_to_json(second))
        for name in session.game.hand_card_fields():
            if name in wire and wire[name] is not None:
                wire[name] = session._wire_card(wire[name])
        ctx.shared["_alt_move"] = (rd.step, {"step": rd.step, "state": session.state_hash(), "move": wire})
        return first

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        alt = ctx.shared.get("_alt_move")
        if msg.kind != "move" or alt is None or msg.body.get("step") != alt[0]:
            return (KEEP,)
        others = [s for s in range(ctx.n) if s != ctx.seat]
        if to not in others[len(others) // 2 :]:
            return (KEEP,)
        return (Emit(body=alt[1]),)


class FalseClaim(Strategy):
    """A signed timeout claim against an honest seat that owes nothing (`early=False`: a step this
    seat owes itself) or has owed its step for no time at all (`early=True`). With two seats, or
    every other seat colluding, the claims alone are "every other seat's": the accused must not
    convict itself on them (I1)."""

    caught = False

    def __init__(self, early: bool) -> None:
        self.early = early
        self.name = "false-claim" + ("-early" if early else "")
        self.done = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.done or msg.kind not in ("shuffle", "lock", "move", "commit"):
            return
        if not self.early:
            self._claim(ctx, ctx.session._step_key("x"))
            return
        waiting = ctx.session.waiting()  # the seat's own step is taken by now: who owes the next one
        if waiting is not None and ctx.victim() in waiting.seats:
            self._claim(ctx, ctx.session._step_key(waiting.what))

    def _claim(self, ctx: AttackContext, key: str) -> None:
        self.done = True
        ctx.applied += 1
        ctx.publish("timeout", {"seat": ctx.victim(), "step": key, "what": "a step"})


class AbortToOne(Strategy):
    """Issue 9 finding 4: during play, stop the round for an audit (abort-flagged secrets) sent to
    the victim at once and to the others `lag` later, so that they see the victim's abort first."""

    caught = True

    def __init__(self, lag: float = 0.2) -> None:
        self.lag = lag
        self.name = "abort-to-one"

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind == "move" and "_aborted" not in ctx.shared:
            ctx.shared["_aborted"] = msg
            secrets = self._secrets(ctx)
            if secrets is not None:
                ctx.applied += 1
                ctx.publish("secrets", secrets, to=[ctx.victim()])
                others = [s for s in range(ctx.n) if s not in (ctx.seat, ctx.victim())]
                ctx.publish("secrets", secrets, to=others, delay=self.lag)

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if ctx.shared.get("_aborted") is msg or (ctx.shared.get("_aborted") and msg.kind == "secrets"):
            return ()  # the move never goes out (the round is stopped), the secrets are already out
        return (KEEP,)

    def _secrets(self, ctx: AttackContext) -> JSONObject | None:
        from protocol import deck

        rd = getattr(ctx.session, "round", None)
        try:
            seat_secrets = deck.SeatSecrets(ctx.seat, rd.my_shuffle, rd.my_lock).to_json()  # type: ignore[union-attr]
        except Exception:
            return None
        openings = getattr(ctx.session, "hidden_openings", {})
        opened = {str(step): {"value": o.value.hex(), "nonce": o.nonce.hex()} for step, o in openings.items()}
        return {"secrets": seat_secrets, "openings": opened, "abort": True}


# --- two seats ----------------------------------------------------------------------------------


class Combined(Strategy):
    """Several strategies at one seat, applied in turn (each sees what the previous one let out)."""

    def __init__(self, *parts: Strategy) -> None:
        self.parts = parts
        self.name = "+".join(p.name for p in parts)
        self.caught = any(p.caught for p in parts)

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        emits: Sequence[Emit] = (KEEP,)
        for part in self.parts:
            result = part.outgoing(ctx, to, msg, occurrence)
            if any(e is not KEEP for e in result) or not result:
                return result
            emits = result
        return emits

    def forward(self, ctx: AttackContext, to: int, data: bytes) -> bool:
        return all(p.forward(ctx, to, data) for p in self.parts)

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        return all(p.incoming(ctx, sender, msg) for p in self.parts)

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        for part in self.parts:
            part.on_tick(ctx, now)


class FrameTogether(Strategy):
    """Two colluding seats each publish a blame of the same honest seat, with each other's word
    (the other colluder's signed claim) as evidence, so an honest seat sees two accusers."""

    name = "collude-frame"

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind == "move" and not ctx.shared.get(f"_framed/{ctx.seat}"):
            ctx.shared[f"_framed/{ctx.seat}"] = True
            ctx.applied += 1
            target = ctx.honest()[0]
            claims = ctx.shared.setdefault("_claims", [])
            body = {"seat": target, "rule": "P-4.3", "message": "framed", "evidence": list(claims)}
            claims.extend(m.to_json() for m in ctx.publish("blame", body)[:1])


class CollusionDelay(Strategy):
    """Two colluders: each sends its first `kind` message to the victim just past the limit and to
    everyone else just under it (finding 8, with two voices)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.name = f"collude-delay-split:{kind}"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != self.kind or occurrence != 0:
            return (KEEP,)
        victim = ctx.honest()[0]
        limit = ctx.settings.step_timeout
        return (Emit(delay=limit + 1.0 if to == victim else limit - 1.0),)


# --- the catalogue ------------------------------------------------------------------------------

KINDS = ("seed.commit", "seed.reveal", "shuffle", "lock", "open", "p.keys", "move", "commit", "reveal", "secrets")
AUTOMATIC = ("seed.commit", "seed.reveal", "shuffle", "lock", "open", "p.keys", "reveal", "secrets")


def _catalogue() -> dict[str, Callable[[], Strategy]]:
    table: dict[str, Callable[[], Strategy]] = {}

    def add(make: Callable[[], Strategy]) -> None:
        table[make().name] = make

    for kind in KINDS:
        add(lambda k=kind: MutateField(k))  # type: ignore[misc]
        add(lambda k=kind: Equivocate(k))  # type: ignore[misc]
        add(lambda k=kind: Withhold(k))  # type: ignore[misc]
    for kind, path in (("move", "step"), ("move", "state"), ("commit", "step"), ("commit", "state"),
                       ("commit", "digest"), ("reveal", "nonce"), ("seed.reveal", "nonce"),
                       ("open", "openings"), ("p.keys", "openings"), ("secrets", "secrets.keys")):
        add(lambda k=kind, p=path: MutateField(k, p))  # type: ignore[misc]
    for kind in ("shuffle", "move", "open", "secrets"):
        add(lambda k=kind: MutateEnvelope(k))  # type: ignore[misc]
        add(lambda k=kind: BrokenChain(k))  # type: ignore[misc]
        add(lambda k=kind: Equivocate(k, one=True))  # type: ignore[misc]
    for kind in AUTOMATIC:
        add(lambda k=kind: Withhold(k, stop=True))  # type: ignore[misc]
        add(lambda k=kind: WithholdKeepAlive(k))  # type: ignore[misc]
    for kind in ("shuffle", "lock", "p.keys", "open", "reveal", "secrets"):
        add(lambda k=kind: Delay(k, 1.0))  # type: ignore[misc]
        add(lambda k=kind: Delay(k, -1.0))  # type: ignore[misc]
        add(lambda k=kind: Delay(k, 1.0, everyone=True))  # type: ignore[misc]
    add(lambda: NoGossip())
    add(lambda: NoGossip(only_to_victim=True))
    add(lambda: Duplicate())
    add(lambda: ReplayOtherTable())
    add(lambda: ReplayOtherTable(evidence_kind="p.peek", rule="P-4.5"))
    add(lambda: ReplayOwnOtherTable())
    add(lambda: ReplayPosition("move"))
    add(lambda: ReplayPosition("open"))
    add(lambda: ReplayChannel())
    for variant in ("card-zz", "not-object", "superscript", "huge-list", "unknown-kind", "gap-flood",
                    "blame-no-evidence", "blame-bad-evidence", "bare-card"):
        add(lambda v=variant: Garbage(v))  # type: ignore[misc]
    add(lambda: LeakPrivate())
    add(lambda: LockAlias(peek=True))
    add(lambda: LockAlias(peek=False))
    add(lambda: AbortToOne())
    add(lambda: EquivocateValid("shuffle"))
    add(lambda: EquivocateValid("lock"))
    add(lambda: EquivocateValidMove())
    add(lambda: FalseClaim(early=False))
    add(lambda: FalseClaim(early=True))
    add(lambda: Combined(Equivocate("move"), NoGossip()))
    # A fault of play past hand keys withheld from one seat: that seat stops, and its silent play
    # deals without its hand and convicts as the others do (I2; red team 11 #6). Not `caught`: the
    # move may wait on a decision of the starved seat (a prediction, a 6 nimmt! card) and never come.
    add(lambda: _uncaught(Combined(Withhold("p.keys"), MutateField("move", "move"))))
    return table


def _uncaught(strategy: Strategy) -> Strategy:
    strategy.caught = False
    return strategy


STRATEGIES: Mapping[str, Callable[[], Strategy]] = _catalogue()
# Strategies for two colluding seats: each seat gets its own instance; `shared` is common to both.
COLLUSIONS: Mapping[str, Callable[[], Strategy]] = {
    "collude-frame": FrameTogether,
    "collude-delay-split:move": lambda: CollusionDelay("move"),
    "collude-delay-split:p.keys": lambda: CollusionDelay("p.keys"),
    "collude-equivocate+no-gossip": lambda: Combined(Equivocate("move", one=True), NoGossip()),
    "collude-withhold-keepalive:p.keys": lambda: WithholdKeepAlive("p.keys"),
}


def make_strategy(name: str) -> Strategy:
    if name in STRATEGIES:
        return STRATEGIES[name]()
    if name in COLLUSIONS:
        return COLLUSIONS[name]()
    raise KeyError(f"no strategy named {name!r}; known: {', '.join(sorted({**STRATEGIES, **COLLUSIONS}))}")


# =================================================================================================
# The invariants (issue 9: I1, I2, I3, I4, I6)
# =================================================================================================

# I6: what a session may keep of one author's messages. An attacker's author is compared with the
# honest authors of the same table (who sent everything the game needs): at most twice the largest
# honest author's count and bytes, plus a slack of 64 messages and 12 MiB: the session's own caps
# per author (4 MiB of held out-of-order messages, 1 MiB per round, protocol/table/_state.py).
# Bounded is what I6 asks; unbounded growth (issue 9 finding 10: +121 MB) shows far past this.
MEMORY_FACTOR = 2
MEMORY_SLACK_MESSAGES = 64
MEMORY_SLACK_BYTES = 12 << 20


def kept_messages(session: object) -> dict[str, tuple[int, int]]:
    """Per author (peer id): how many distinct signed messages the session keeps anywhere, and their
    bytes. Found by walking the session's objects (not by its attribute names), so it holds
    whatever shape the session takes inside."""
    seen: set[int] = set()
    found: dict[str, dict[bytes, int]] = {}
    stack: list[object] = [session]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, SignedMessage):
            raw = obj.signed_bytes()
            found.setdefault(obj.author, {})[raw] = len(raw)
            continue
        if isinstance(obj, (str, bytes, int, float, bool, type(None))):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset, deque)):
            stack.extend(obj)
        elif type(obj).__module__.startswith(("protocol", "engine")) and not isinstance(obj, type):
            stack.extend(r for r in gc.get_referents(obj) if not isinstance(r, type))
    return {author: (len(msgs), sum(msgs.values())) for author, msgs in found.items()}


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str  # I1 … I6
    seat: int | None  # the honest seat where it showed
    detail: str


@dataclass(frozen=True, slots=True)
class TableResult:
    """What one adversarial table came to."""

    game: str
    players: int
    options: JSONObject
    seed: int
    strategies: tuple[tuple[int, str], ...]  # (seat, strategy name)
    violations: tuple[Violation, ...]
    caught: bool  # every honest seat named a malicious seat
    applied: int  # deviations the strategies made (0: the attack never fired)
    verdicts: tuple[str, ...]  # per honest seat, its first blame (or its end)
    stopped: str
    sim_time: float
    deliveries: int

    def repro(self) -> str:
        strategies = " ".join(f"--attack {seat}={name}" for seat, name in self.strategies)
        opts = canonical(self.options).decode()
        return (
            f".venv/bin/python scripts/soak_adversary.py --one --game {self.game} --players {self.players} "
            f"--options '{opts}' --seed {self.seed} {strategies}"
        )


def _verdict(h: Harness, seat: int) -> str:
    blames = h.blames(seat)
    if blames:
        b = blames[0]
        also = "".join(f", then {x.seat} {x.rule}" for x in blames[1:])
        return f"blamed {b.seat} {b.rule}: {b.message[:120]}{also}"
    return f"stage {h.sessions[seat].stage}, {len(h.sessions[seat].rounds)} rounds"


def check_invariants(h: Harness, rounds: int | None) -> list[Violation]:
    """I1–I4 and I6 at every honest seat of a table `h` has run (`rounds`: the round budget it was
    run for; reaching it counts as ended)."""
    malicious = set(h.attackers)
    honest = [s for s in range(len(h.sessions)) if s not in malicious]
    out: list[Violation] = []
    for escaped in h.exceptions:  # I3, at any seat: a malicious seat's own session is real code too
        violation = Violation("I3", escaped.seat, f"{escaped.call} raised {escaped.error} at {escaped.where}")
        if violation not in out:
            out.append(violation)
    for anomaly in dict.fromkeys(h.anomalies):
        out.append(Violation("I4", None, anomaly))
    convicted: dict[int, frozenset[int | None]] = {}
    for s in honest:
        blames = h.blames(s)
        for b in blames:
            if b.seat is not None and b.seat not in malicious:
                out.append(Violation("I1", s, f"seat {s} blamed honest seat {b.seat} for {b.rule}: {b.message[:160]}"))
                break
        convicted[s] = frozenset(b.seat for b in blames)
    # I2: the same convicted seats, or all stopped with nobody convicted.
    ended = {s: h.sessions[s].stage in ("stopped", "ended") for s in honest}
    named = {convicted[s] for s in honest if ended[s]}
    if any(ended.values()) and (not all(ended.values()) or len(named) > 1):
        verdicts = "; ".join(f"{s}: {_verdict(h, s)}" for s in honest)
        out.append(Violation("I2", None, f"honest seats disagree: {verdicts}"))
    # I4: every honest seat ended (over, blame, stop) or reached the round budget.
    for s in honest:
        session = h.sessions[s]
        if session.stage in ("over", "stopped", "ended") or (rounds is not None and len(session.rounds) >= rounds):
            continue
        waiting = None
        with contextlib.suppress(Exception):
            waiting = session.waiting()
        why = f"seat {s} still in {session.stage} at t={h.now:.1f} ({h.stopped_because}); waiting: {waiting}"
        out.append(Violation("I4", s, why))
    # I6: per-author memory, malicious authors against honest ones.
    for s in honest:
        kept = kept_messages(h.sessions[s])
        honest_ids = {h.settings.seats[x].peer_id for x in honest}
        base_count = max((kept.get(pid, (0, 0))[0] for pid in honest_ids), default=0)
        base_bytes = max((kept.get(pid, (0, 0))[1] for pid in honest_ids), default=0)
        for m in malicious:
            count, size = kept.get(h.settings.seats[m].peer_id, (0, 0))
            if count > MEMORY_FACTOR * base_count + MEMORY_SLACK_MESSAGES or size > (
                MEMORY_FACTOR * base_bytes + MEMORY_SLACK_BYTES
            ):
                out.append(
                    Violation(
                        "I6", s, f"seat {s} keeps {count} messages / {size} bytes of seat {m} "
                        f"(honest authors: {base_count} / {base_bytes})"
                    )
                )
    return out


def waiting_blames(session: TableSession) -> set[int]:
    """The seats whose blame waits at `session` to be decided: live (`pending_blames`), or at a seat
    stopped for it (`late_blames`, after `blame._halt_for_waiting_blame`)."""
    return set(session.pending_blames) | {blamer for blamer, _seq in session.late_blames}


def settled(session: TableSession) -> str:
    """`session`'s stage once its verdict has settled: a seat that convicted is ticked to its
    `listen_until` (`blame.settle_verdict`), as a runner does; any other is left as it is."""
    until = session.listen_until()
    unsettled = session.convicted or session.stopped is None  # a verdict, or a halt not shown yet
    if session.stage == "stopped" and unsettled and until is not None and session.now < until:
        session.tick(until)
    return session.stage


TICK = 0.25  # lanplay's runner gives the session time this often (lanplay/runner.py TICK)

# Every game with option sets that keep a table short (a target of 1 point, one chip), and the
# round budget: an adversarial table is judged on its first round(s), where every attack fires.
GAME_SETUPS: tuple[tuple[str, int, int, tuple[JSONObject, ...]], ...] = (
    ("sixth-sense", 2, 6, ({}, {"late_trump": True}, {"beginner": True}, {"target": 1, "late_trump": True})),
    ("take6", 2, 10, ({}, {"tactic": True}, {"logic": True}, {"profi": True}, {"tactic": True, "logic": True})),
    ("sixes", 3, 8, ({"chips": 1}, {"chips": 2})),
)


def run_adversarial(
    game: str,
    players: int,
    options: Mapping[str, object],
    seed: int,
    strategies: Mapping[int, Strategy],
    *,
    rounds: int = 1,
    step_timeout: float = 20.0,
    max_deliveries: int = 60_000,
    faults: Faults | None = None,
    outages: Sequence[Outage] = (),
) -> TableResult:
    """One table with `strategies` at their seats, run in simulated time until it ends, `rounds`
    rounds are confirmed, or the time bound passes; then the invariants at every honest seat."""
    shared: dict[str, Any] = {}
    h = Harness(
        game,
        players,
        options,
        seed=seed,
        step_timeout=step_timeout,
        turn_timeout=3 * step_timeout,  # so that a withheld decision has a limit too
        reconnect_timeout=6 * step_timeout,
        adversaries=strategies,
        catch=True,
        faults=faults or Faults(gossip_delay=0.05),
        outages=outages,
    )
    for attacker in h.attackers.values():
        attacker.shared = shared
    # I4's bound: nothing happening for the reconnect limit plus three step limits is a stall; and
    # every table of `rounds` rounds ends within ten step limits per round plus the reconnect limit
    # (an honest round takes a few simulated seconds; each attack costs at most a few limits).
    h.run(
        until_rounds=rounds,
        max_deliveries=max_deliveries,
        tick_every=TICK,
        max_idle_ticks=int((h.settings.reconnect_timeout + 3 * step_timeout) / TICK),
        max_time=rounds * 10 * step_timeout + h.settings.reconnect_timeout,
        settle=step_timeout / 4,
    )
    violations = check_invariants(h, rounds)
    honest = [s for s in range(players) if s not in strategies]
    caught = all(h.blames(s) and h.blames(s)[0].seat in strategies for s in honest)
    return TableResult(
        game,
        players,
        dict(options),
        seed,
        tuple((seat, s.name) for seat, s in sorted(strategies.items())),
        tuple(violations),
        caught,
        sum(a.applied for a in h.attackers.values()),
        tuple(f"{s}: {_verdict(h, s)}" for s in honest),
        h.stopped_because,
        h.now,
        h.delivered,
    )


# =================================================================================================
# Honest tables under faults (issue 13)
# =================================================================================================

# Reordering (up to 50 ms per message), duplicates, loss with a resend a second later, and gossip
# passed on 50 ms late as lanplay's runner does.
HONEST_FAULTS = Faults(max_delay=0.05, duplicate=0.1, drop=0.05, resend_after=1.0, gossip_delay=0.05)
OPTION_FLAGS: Mapping[str, tuple[str, ...]] = {
    "sixth-sense": ("beginner", "target", "late_trump"),  # S-8.1, S-8.2, S-8.3
    "take6": ("tactic", "logic", "profi"),  # T-5.1, T-5.2, T-5.3
}


def option_combinations(game: str) -> list[JSONObject]:
    """Every combination of a game's options: 6th Sense's target as 1 point (S-8.2, which also ends
    the game soon), Sixes' chips as 1 or 3 (X-1.4: few chips, short games)."""
    if game == "sixes":
        return [{"chips": 1}, {"chips": 3}]
    out: list[JSONObject] = []
    for flags in itertools.product((False, True), repeat=3):
        options: JSONObject = dict(zip(OPTION_FLAGS[game], flags, strict=True))
        if game == "sixth-sense":
            options["target"] = 1 if options["target"] else None
        out.append(options)
    return out


@dataclass(frozen=True, slots=True)
class HonestResult:
    """What an honest table under faults came to; every list empty means clean."""

    exceptions: tuple[str, ...]
    blamed: tuple[str, ...]
    unfinished: tuple[str, ...]
    records_differ: bool
    replay_differs: tuple[str, ...]
    rounds: int
    game_over: bool

    @property
    def clean(self) -> bool:
        return not (self.exceptions or self.blamed or self.unfinished or self.records_differ or self.replay_differs)

    def problems(self) -> list[str]:
        return [
            *self.exceptions,
            *self.blamed,
            *self.unfinished,
            *(["records differ between seats"] if self.records_differ else []),
            *self.replay_differs,
        ]


def check_honest(h: Harness, rounds: int | None) -> HonestResult:
    """Every seat finished (the game, or `rounds` rounds), nobody blamed, the seats' records of the
    rounds they all confirmed byte-identical, and the record replays (engine/record.py) to the round
    results and winners the table reached."""
    exceptions = tuple(f"seat {e.seat} {e.call} raised {e.error} at {e.where}" for e in h.exceptions)
    blamed = tuple(
        f"seat {seat} blamed {b.seat} for {b.rule}: {b.message}"
        for seat in range(len(h.sessions))
        for b in h.blames(seat)
    ) + tuple(  # a stop with nobody convicted (the table could not agree) is no clean end either
        f"seat {seat} stopped the table: {getattr(e, 'message', e)}"
        for seat in range(len(h.sessions))
        for e in h.events[seat]
        if type(e).__name__ == "Stopped"
    )
    unfinished = tuple(
        f"seat {seat} did not finish: stage {s.stage}, {len(s.rounds)} rounds"
        for seat, s in enumerate(h.sessions)
        if s.stage != "over" and (rounds is None or len(s.rounds) < rounds)
    )
    confirmed = min(len(s.rounds) for s in h.sessions)
    records = [s.record() for s in h.sessions]
    texts = {replace(r, rounds=r.rounds[:confirmed]).dumps() for r in records}
    replay_differs: list[str] = []
    try:
        replayed = replay_text(records[0].dumps())
    except Exception as exc:  # a record that does not replay is the finding, not a crash of the check
        replay_differs.append(f"the record does not replay: {exc}")
    else:
        for seat in range(len(h.sessions)):
            reports = [e.report for e in h.events[seat] if isinstance(e, RoundAudited)]
            if [r.report for r in replayed.rounds] != reports[: len(replayed.rounds)]:
                replay_differs.append(f"seat {seat}'s round results differ from the replay's")
        over = h.game_over(0)
        if over is not None:
            game = replayed.game
            if not replayed.complete or tuple(game.winners(replayed.final_state) or ()) != tuple(over.winners):
                replay_differs.append("the record replays to another end of the game")
    return HonestResult(
        exceptions, blamed, unfinished, len(texts) > 1, tuple(replay_differs), confirmed, h.game_over(0) is not None
    )


def run_honest(
    game: str,
    players: int,
    options: Mapping[str, object],
    seed: int,
    rounds: int | None = 1,
    faults: Faults | None = None,
) -> HonestResult:
    """One honest table under `faults` (default `HONEST_FAULTS`), run for `rounds` rounds (None: the
    whole game)."""
    h = Harness(game, players, options, seed=seed, faults=faults or HONEST_FAULTS, catch=True)
    h.run(until_rounds=rounds, max_deliveries=2_000_000, settle=1.0)
    return check_honest(h, rounds)
