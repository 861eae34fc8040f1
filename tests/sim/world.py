"""One seeded run of a whole table: every seat's real session, a model of the runner around each,
a journal per seat, and a model of the mesh between them, all on simulated time.

`run(spec)` plays the table `spec` describes and returns a `Result` with every failure of the
invariants P-6.1-6.4 and P-6.6 (and P-5.4, P-5.6) found at the honest seats. Everything random
comes from `spec.seed` (the faults and attacks are in the spec), so `run(spec)` twice is the same
run, byte for byte.

The mesh model (docs/NETWORK.md): one FIFO queue per ordered pair of seats. A message takes a
latency drawn per message, but never overtakes the one before it on its link (TCP); a lost segment
is resent (`loss`: the message and every one behind it wait `RESEND` longer); messages to a seat
that is down, suspended or cut off wait in the sender's outbox and go when it is back (the mesh's
RESUME); a crashed seat's own outbox is gone. `dup` delivers a message twice (at least once across a
reconnect). Links are independent, so messages are reordered across links.

The runner model (lanplay/table/runner.py): `Start` first; every input goes to `handle`; a received input
is journaled when `last_kept`, every local input (decision, stop, leave, note) always; at each tick
(`TICK`), while the seat has any link, `s.due(now)` is fed back as the `StopFor` it is and
`NoteWaiting` when `s.note_due(now)`; a bot decides after a think time; after `spec.rounds` confirmed
rounds the first honest seat leaves, which cuts the table short (the others stop the round and sign
the end without it). A crash loses the process: on restart a fresh session with the same seed replays
the journal, resends what it had sent, and hears of its links coming up again.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import random
import shlex
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.identity import Identity

from . import wire

TICK = 0.25
RESEND = 1.0  # a lost segment comes again this much later (TCP's retransmission)
LATENCY = (0.001, 0.03)
POLL = 0.25  # a blocked link looks again this often
THINK = (0.05, 1.2)  # a bot's think time
SETTLE = 60.0  # after the last fault ends, the time every table has to end or visibly wait (P-6.4)
ROUND_TIME = 60.0  # ... plus this much per round played
ROUND_HOPS = 100  # ... plus this many times the most latency per round (a round is that many messages in a row)
IDLE = 40.0  # after the faults, this long with nothing sent by anyone: nothing more can happen (4 x patience)
MAX_KEPT_BYTES = 8 << 20  # P-6.6: bytes of received input one seat keeps (journals) at one short table


@dataclass(frozen=True)
class Spec:
    """One table: everything a run depends on. `command()` is the line that replays it."""

    seed: int
    game: str
    seats: int
    options: str = "{}"  # canonical JSON
    rounds: int = 1
    adversaries: tuple[tuple[int, str], ...] = ()  # (seat, attack name); several seats collude
    faults: tuple[str, ...] = ()
    keep: tuple[int, ...] | None = None  # attack firings applied (None: every one)
    bot: str = "random"
    backend: str = "real"

    def command(self) -> str:
        parts = ["python", "-m", "tests.sim", "--seed", str(self.seed), "--game", self.game]
        parts += ["--seats", str(self.seats), "--rounds", str(self.rounds)]
        if self.options != "{}":
            parts += ["--options", self.options]
        for seat, name in self.adversaries:
            parts += ["--adversary", f"{name}@{seat}"]
        for fault in self.faults:
            parts += ["--fault", fault]
        if self.keep is not None:
            parts += ["--keep", ",".join(map(str, self.keep)) or "none"]
        if self.bot != "random":
            parts += ["--bot", self.bot]
        if self.backend != "real":
            parts += ["--backend", self.backend]
        return shlex.join(parts)

    @property
    def honest(self) -> tuple[int, ...]:
        bad = {seat for seat, _ in self.adversaries}
        return tuple(s for s in range(self.seats) if s not in bad)


# --- faults ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """A parsed fault: `kind` with `seats`, from `at` for `span` seconds, or a rate `p`."""

    kind: str
    seats: tuple[int, ...] = ()
    at: float = 0.0
    span: float = 0.0
    p: float = 0.0

    @property
    def end(self) -> float:
        return self.at + self.span


FAULT_KINDS = ("loss", "dup", "jitter", "cut", "part", "crash", "suspend", "leave")


def parse_fault(text: str) -> Fault:
    """`loss:P`, `dup:P`, `jitter:S` (rates and most latency), `cut:A.B@T+D` (the link between two
    seats down), `part:A.B@T+D` (those seats cut off from the rest), `crash:S@T+D` (the process dies
    at its first input from T on, after journaling it but before sending what it made, and starts again
    D later), `suspend:S@T+D` (hears and ticks nothing), `leave:S@T` (the person leaves)."""
    kind, _, rest = text.partition(":")
    if kind not in FAULT_KINDS or not rest:
        raise ValueError(f"fault {text!r}: use one of {', '.join(k + ':...' for k in FAULT_KINDS)}")
    try:
        if kind in ("loss", "dup", "jitter"):
            return Fault(kind, p=float(rest))
        who, _, when = rest.partition("@")
        at, _, span = when.partition("+")
        seats = tuple(int(s) for s in who.split("."))
        return Fault(kind, seats, float(at), float(span or 0))
    except ValueError:
        raise ValueError(f"fault {text!r}: expected {kind}:SEAT[.SEAT]@START+SECONDS") from None


# --- results --------------------------------------------------------------------------------------


@dataclass
class Result:
    spec: Spec
    failures: list[str] = field(default_factory=list)
    exposed: dict[int, frozenset[int]] = field(default_factory=dict)  # honest seat -> seats it exposed
    finished: dict[int, bool] = field(default_factory=dict)
    confirmed: dict[int, int] = field(default_factory=dict)
    firings: list[str] = field(default_factory=list)  # attack deviations, in order (index = position)
    time: float = 0.0
    kept_bytes: dict[int, int] = field(default_factory=dict)
    stops: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    def kinds(self) -> set[str]:
        return {f.split(" ", 1)[0] for f in self.failures}

    def summary(self) -> str:
        lines = [
            f"table: {self.spec.game} {self.spec.options} seats {self.spec.seats}, "
            f"adversaries {list(self.spec.adversaries)}, faults {list(self.spec.faults)}",
            f"simulated time {self.time:.1f} s; attack firings {len(self.firings)}; stops {self.stops}",
        ]
        for seat in sorted(self.finished):
            lines.append(
                f"seat {seat}: finished={self.finished[seat]} confirmed={self.confirmed.get(seat)} "
                f"exposed={sorted(self.exposed.get(seat, ()))} kept={self.kept_bytes.get(seat, 0)} B"
            )
        lines += [f"FAIL {f}" for f in self.failures] or ["all checks passed"]
        return "\n".join(lines)


# --- the world ------------------------------------------------------------------------------------


def identity_for(seed: int, seat: int) -> Identity:
    return Identity.from_private_bytes(hashlib.sha256(f"sim-identity/{seed}/{seat}".encode()).digest())


def backend_named(name: str) -> Any:
    if name == "fake":
        from .fake import FakeBackend

        return FakeBackend()
    from .real import RealBackend

    return RealBackend()


class World:
    def __init__(self, spec: Spec, backend: Any | None = None) -> None:
        self.spec = spec
        self.backend = backend if backend is not None else backend_named(spec.backend)
        self.rng = random.Random(f"sim-net/{spec.seed}")
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._counter = 0
        self.faults = [parse_fault(f) for f in spec.faults]
        self.loss = sum(f.p for f in self.faults if f.kind == "loss")
        self.dup = sum(f.p for f in self.faults if f.kind == "dup")
        self.latency = max([LATENCY[1], *(f.p for f in self.faults if f.kind == "jitter")])
        self.faults_end = max([0.0, *(f.end for f in self.faults)])
        self.identities = [identity_for(spec.seed, s) for s in range(spec.seats)]
        self.settings = self.backend.settings(spec.game, json.loads(spec.options), self.identities, spec.seed)
        self.result = Result(spec)
        self.links: dict[tuple[int, int], deque[tuple[float, bytes]]] = {}
        self.link_last: dict[tuple[int, int], float] = {}
        self.link_armed: set[tuple[int, int]] = set()
        self.cut: set[frozenset[int]] = set()  # pairs whose link is down now
        self.last_send = 0.0
        self.verified: dict[str, int | None] = {}  # proof (canonical JSON) -> the seat verify names
        from .adversary import make_attacks

        attacks = make_attacks(spec, self)
        self.peers = [Peer(self, seat, attacks.get(seat)) for seat in range(spec.seats)]

    # --- scheduling ---
    def at(self, when: float, action: Callable[[], None]) -> None:
        self._counter += 1
        heapq.heappush(self._queue, (max(when, self.now), self._counter, action))

    def fail(self, text: str) -> None:
        if text not in self.result.failures:
            self.result.failures.append(text)

    # --- the mesh ---
    def linked(self, a: int, b: int) -> bool:
        return frozenset((a, b)) not in self.cut and self.peers[a].alive and self.peers[b].alive

    def send(self, a: int, b: int, data: bytes, extra: float = 0.0) -> None:
        """`a`'s process hands `data` to its link to `b` now."""
        if a == b or not 0 <= b < self.spec.seats or not self.peers[a].alive:
            return
        self.last_send = self.now
        key = (a, b)
        delay = self.rng.uniform(LATENCY[0], self.latency) + extra
        if self.loss and self.rng.random() < self.loss:
            delay += RESEND
        ready = max(self.now + delay, self.link_last.get(key, 0.0))
        self.link_last[key] = ready
        queue = self.links.setdefault(key, deque())
        queue.append((ready, data))
        if self.dup and self.rng.random() < self.dup:
            queue.append((ready, data))
        self._arm(key)

    def _arm(self, key: tuple[int, int]) -> None:
        queue = self.links.get(key)
        if queue and key not in self.link_armed:
            self.link_armed.add(key)
            self.at(queue[0][0], lambda: self._deliver(key))

    def _deliver(self, key: tuple[int, int]) -> None:
        self.link_armed.discard(key)
        a, b = key
        queue = self.links.get(key)
        if not queue:
            return
        target = self.peers[b]
        if not self.linked(a, b) or target.suspended:
            self.link_armed.add(key)
            self.at(self.now + POLL, lambda: self._deliver(key))
            return
        _, data = queue.popleft()
        target.receive(a, data)
        self._arm(key)

    def in_flight(self) -> int:
        return sum(len(q) for q in self.links.values())

    def set_link(self, a: int, b: int, up: bool) -> None:
        pair = frozenset((a, b))
        if up:
            self.cut.discard(pair)
        else:
            self.cut.add(pair)
        for x, y in ((a, b), (b, a)):
            if self.peers[x].alive and self.peers[y].alive:
                self.peers[x].link(y, up)

    # --- the run ---
    def schedule_faults(self) -> None:
        n = self.spec.seats
        for f in self.faults:
            seats = tuple(s for s in f.seats if 0 <= s < n)
            if f.kind in ("cut", "part") and seats:
                if f.kind == "cut" and len(seats) == 2:
                    pairs = [(seats[0], seats[1])]
                else:
                    pairs = [(a, b) for a in seats for b in range(n) if b not in seats]
                for a, b in pairs:
                    self.at(f.at, lambda a=a, b=b: self.set_link(a, b, False))
                    self.at(f.end, lambda a=a, b=b: self.set_link(a, b, True))
            elif f.kind == "crash" and seats:
                self.at(f.at, lambda s=seats[0], d=f.span: self.peers[s].arm_crash(d))
            elif f.kind == "suspend" and seats:
                self.at(f.at, lambda s=seats[0]: self.peers[s].suspend(True))
                self.at(f.end, lambda s=seats[0]: self.peers[s].suspend(False))
            elif f.kind == "leave" and seats:
                self.at(f.at, lambda s=seats[0]: self.peers[s].leave())

    @property
    def end_time(self) -> float:
        return self.faults_end + SETTLE + (ROUND_TIME + ROUND_HOPS * self.latency) * self.spec.rounds

    def done(self) -> bool:
        return all(self.peers[s].ended for s in self.spec.honest)

    def run(self) -> Result:
        self.schedule_faults()
        for peer in self.peers:
            self.at(0.0, peer.start)
            self.at(self.rng.uniform(0, TICK), peer.tick)
        while self._queue:
            when, _, action = heapq.heappop(self._queue)
            if when > self.end_time:
                break
            self.now = when
            action()
            if self.now >= self.faults_end and (
                (self.done() and not self.in_flight()) or self.now - max(self.last_send, self.faults_end) > IDLE
            ):
                break
        self.check()
        return self.result

    # --- the invariants, at every honest seat ---
    def check(self) -> None:
        res = self.result
        res.time = self.now
        honest = [self.peers[s] for s in self.spec.honest]
        bad = {seat for seat, _ in self.spec.adversaries}
        for peer in honest:
            s = peer.session
            if s is None or peer.gone:
                continue
            exposed = frozenset(s.exposed)
            res.exposed[peer.seat] = exposed
            res.finished[peer.seat] = bool(s.finished)
            res.confirmed[peer.seat] = len(s.record().rounds)
            res.kept_bytes[peer.seat] = peer.kept_bytes
            for seat in sorted(exposed - bad):
                self.fail(f"P-6.1 honest seat {seat} exposed at seat {peer.seat}")
            if peer.kept_bytes > MAX_KEPT_BYTES:
                self.fail(f"P-6.6 seat {peer.seat} kept {peer.kept_bytes} bytes of input (cap {MAX_KEPT_BYTES})")
            if not s.finished:
                try:
                    waits = s.waiting(self.now)
                except Exception as exc:
                    self.fail(f"P-6.3 waiting() raised at seat {peer.seat}: {exc!r}")
                    waits = ()
                if not waits:
                    self.fail(f"P-6.4 seat {peer.seat} neither finished nor waits at t={self.now:.1f} ({s.phase})")
                elif not self.waits_on_adversary(peer.seat, bad, set()):
                    what = ", ".join(f"seat {w.seat}: {w.what}" for w in waits)
                    self.fail(f"P-6.4 seat {peer.seat} still waits for honest seats at t={self.now:.1f} ({what})")
        alive = [p for p in honest if p.session is not None and p.alive and not p.gone]
        if len(alive) > 1:
            first = alive[0]
            for other in alive[1:]:
                if frozenset(first.session.exposed) != frozenset(other.session.exposed):
                    self.fail(
                        f"P-6.2 seats {first.seat} and {other.seat} expose different seats: "
                        f"{sorted(first.session.exposed)} / {sorted(other.session.exposed)}"
                    )
                if _rounds(first.session) != _rounds(other.session):
                    self.fail(f"P-6.2 seats {first.seat} and {other.seat} confirmed different rounds")
                records = (first.finished_record, other.finished_record)
                if None not in records and records[0] != records[1]:
                    self.fail(f"P-6.2 seats {first.seat} and {other.seat} finished with different records")

    def waits_on_adversary(self, seat: int, bad: set[int], seen: set[int]) -> bool:
        """Whether what `seat` waits for leads, through honest seats that wait in turn, to an
        adversary (an honest seat waiting on honest seats alone, long after the faults, is stuck)."""
        seen.add(seat)
        s = self.peers[seat].session
        if s is None or not self.peers[seat].alive:
            return False
        try:
            waits = () if s.finished else s.waiting(self.now)
        except Exception:
            return False
        for w in waits:
            if w.seat in bad:
                return True
            if w.seat not in seen and w.seat is not None and self.waits_on_adversary(w.seat, bad, seen):
                return True
        return False


def confirmed(session: Any) -> int:
    """Rounds the session confirmed (`round_index`, cheaper than building its record)."""
    index = getattr(session, "round_index", None)
    return index if isinstance(index, int) else len(session.record().rounds)


_ATOMIC_DONE = False


def _share_immutables() -> None:
    """Let deepcopy share the engine's values (frozen by design) and signed messages instead of
    copying them: faster, and some (cards) cannot be rebuilt by copy's protocol."""
    global _ATOMIC_DONE
    if _ATOMIC_DONE:
        return
    import copy
    import dataclasses
    import sys

    dispatch = copy._deepcopy_dispatch  # type: ignore[attr-defined]
    for name, module in list(sys.modules.items()):
        if not (name.startswith("engine") or name in ("protocol.signed", "protocol.identity")):
            continue
        for value in vars(module).values():
            if not isinstance(value, type) or getattr(value, "__module__", "") != name:
                continue
            params = getattr(value, "__dataclass_params__", None)
            frozen = params is not None and params.frozen and dataclasses.is_dataclass(value)
            if frozen or issubclass(value, tuple):
                dispatch[value] = copy._deepcopy_atomic  # type: ignore[attr-defined]
    _ATOMIC_DONE = True


def snapshot(session: Any) -> Any:
    """A copy of `session` that can go on alone (its identity, settings and game shared)."""
    import copy

    _share_immutables()
    memo: dict[int, Any] = {}
    for name in ("identity", "settings", "game", "plan", "options"):
        value = getattr(session, name, None)
        if value is not None:
            memo[id(value)] = value
    try:
        return copy.deepcopy(session, memo)
    except Exception:
        return None


def _rounds(session: Any) -> str:
    record = session.record()
    try:
        return json.dumps(record.to_json(), sort_keys=True, default=str)
    except Exception:
        return repr(record.rounds)


# --- one seat: the runner model -------------------------------------------------------------------


class Peer:
    def __init__(self, world: World, seat: int, attack: Any | None) -> None:
        self.world = world
        self.seat = seat
        self.ev = world.backend
        self.identity = world.identities[seat]
        self.seed = hashlib.sha256(f"sim-seat-seed/{world.spec.seed}/{seat}".encode()).digest()
        self.rng = random.Random(f"sim-bot/{world.spec.seed}/{seat}")
        self.attack = attack  # an adversary.AttackContext, or None for an honest seat
        self.session: Any = None
        self.journal: list[Any] = []
        self.kept_bytes = 0
        self.alive = True
        self.suspended = False
        self.crash_armed: float | None = None
        self.deciding = False
        self.left = False
        self.finished_seen = False
        self.finished_record: str | None = None
        self.gone = False  # the person left: the table is over for this seat
        self.stop_refused: Any = None
        self.own_sent: list[bytes] = []  # this seat's own signed messages, in the order first sent
        self.author_tag = f'"author":"{self.identity.peer_id}"'.encode()  # canonical JSON: no spaces
        self.snapshot: Any = None  # the session just before its last decision (attacks that fork)
        self.offered: tuple[Any, ...] = ()  # the moves offered at that decision
        self._own_seen: set[bytes] = set()
        self.epoch = 0  # bumps at each crash, so a dead process's timers do nothing

    @property
    def honest(self) -> bool:
        return self.attack is None

    @property
    def ended(self) -> bool:
        return self.finished_seen or self.gone or not self.alive

    # --- inputs ---
    def start(self) -> None:
        self.session = self.world.backend.session(self.world.settings, self.identity, self.seed)
        self.feed(self.ev.Start(self.world.now))

    def feed(self, event: Any) -> tuple[Any, ...]:
        """One input through the session, as the runner does: journal, then send, then follow-ups."""
        if not self.alive or self.session is None:
            return ()
        try:
            outputs = tuple(self.session.handle(event))
        except Exception as exc:
            self.world.fail(f"P-6.3 {type(event).__name__} raised out of handle at seat {self.seat}: {exc!r}")
            return ()
        kind = type(event).__name__
        if kind == "Leave":
            self.gone = True
        if kind == "Received":
            if getattr(self.session, "last_kept", False):
                self.journal.append(event)
                self.kept_bytes += len(event.data)
        elif kind not in ("Tick", "LinkChanged"):
            self.journal.append(event)
        if self.crash_armed is not None and kind != "Tick":
            span, self.crash_armed = self.crash_armed, None
            self.crash(span)  # journaled, not sent: the restart must send exactly these (P-5.6)
            return ()
        self.outputs(outputs)
        self.follow_up()
        return outputs

    def outputs(self, outputs: Any) -> None:
        for out in outputs:
            name = type(out).__name__
            if name == "Send":
                self.note_own(out.data)
                if self.attack is not None:
                    self.attack.outgoing(out.to, out.data)
                else:
                    self.route(out.to, out.data)
            elif name == "Exposed":
                self.check_proof(out)
            elif name == "Finished":
                self.finished_seen = True
                rec = out.record
                if isinstance(rec, dict) and isinstance(rec.get("end"), dict):
                    self.finished_record = str(rec["end"].get("digest"))  # P-5.8: what every seat signed
                else:
                    self.finished_record = json.dumps(rec.to_json(), sort_keys=True, default=str)
            elif name == "Stopped":
                self.world.result.stops += 1
            elif name == "Refused" and out.rule == "P-6.3" and self.honest:
                self.world.fail(f"P-6.3 seat {self.seat} could not handle an input: {out.message[:200]}")

    def route(self, to: int | None, data: bytes, extra: float = 0.0) -> None:
        targets = range(self.world.spec.seats) if to is None else (to,)
        for b in targets:
            if b != self.seat:
                self.world.send(self.seat, b, data, extra)

    def note_own(self, data: bytes) -> None:
        if data in self._own_seen or self.author_tag not in data:
            return
        msg = wire.parse(data)
        if msg is not None and msg.author == self.identity.peer_id:
            self._own_seen.add(data)
            self.own_sent.append(data)

    def check_proof(self, out: Any) -> None:
        """P-5.4: every exposure rests on a proof that one pure verify accepts, naming that seat."""
        if not self.honest:
            return
        try:
            rounds = self.session.record().rounds
            key = json.dumps([out.proof, len(rounds)], sort_keys=True, default=str)
            if key not in self.world.verified:
                self.world.verified[key] = self.world.backend.verify(self.world.settings, out.proof, rounds)
            seat = self.world.verified[key]
        except Exception as exc:
            self.world.fail(f"P-5.4 verify raised on the proof exposing seat {out.seat} at seat {self.seat}: {exc!r}")
            return
        if seat != out.seat:
            self.world.fail(
                f"P-5.4 seat {self.seat} exposed seat {out.seat} ({out.rule}) on a proof verify reads as {seat}"
            )

    def follow_up(self) -> None:
        """After an input: the local player's turn, or the cut (after a tick also `time_passed`)."""
        self.decide_soon()

    def time_passed(self) -> None:
        """As the runner's tick: with no link at all nobody is waited out; else `due` fed back as the
        stop it is, and a wait note when `note_due`."""
        s = self.session
        now = self.world.now
        if not any(self.world.linked(self.seat, b) for b in range(self.world.spec.seats) if b != self.seat):
            return
        try:
            stop = s.due(now)
            if stop is not None and stop != self.stop_refused:
                self.stop_refused = stop  # fed once: a refused one is not fed again at this instant
                refused = [o for o in self.feed(stop) if type(o).__name__ == "Refused"]
                if refused and self.honest:
                    why = refused[0].message
                    self.world.fail(f"P-5.5 seat {self.seat}'s due() offered a stop it then refused: {why}")
                return
            if s.note_due(now):
                self.feed(self.ev.NoteWaiting(now))
        except Exception as exc:
            self.world.fail(f"P-6.3 due()/note_due() raised at seat {self.seat}: {exc!r}")

    def decide_soon(self) -> None:
        s = self.session
        now = self.world.now
        cut = self.seat == self.world.spec.honest[0] if self.world.spec.honest else False
        if cut and not self.left and not s.finished and confirmed(s) >= self.world.spec.rounds:
            self.leave_soon()
        elif not self.deciding and not s.finished:
            try:
                moves = s.decision_json()
            except Exception as exc:
                self.world.fail(f"P-6.3 decision_json() raised at seat {self.seat}: {exc!r}")
                return
            if moves:
                self.deciding = True
                epoch = self.epoch
                self.world.at(now + self.rng.uniform(*THINK), lambda: self.decide(epoch))

    def decide(self, epoch: int) -> None:
        if epoch != self.epoch or not self.alive:
            return
        if self.suspended:
            self.world.at(self.world.now + POLL, lambda: self.decide(epoch))
            return
        self.deciding = False
        move = self.world.backend.choose(self.session, self.rng, self.world.spec.bot)
        if self.attack is not None:
            move = self.attack.decide(move)
            if move is not None and self.attack.attack.wants_snapshots:
                self.offered = tuple(self.session.decision_json())
                self.snapshot = snapshot(self.session)
        if move is not None:
            self.feed(self.ev.Decided(move, self.world.now))

    def leave_soon(self) -> None:
        self.left = True
        epoch = self.epoch
        self.world.at(self.world.now + self.rng.uniform(*THINK), lambda: self.leave(epoch))

    def leave(self, epoch: int | None = None) -> None:
        if epoch is not None and epoch != self.epoch:
            return
        self.left = True
        if self.suspended:
            self.world.at(self.world.now + POLL, lambda: self.leave(epoch))
            return
        self.feed(self.ev.Leave(self.world.now))

    def receive(self, sender: int, data: bytes) -> None:
        if self.attack is not None and not self.attack.incoming(sender, data):
            return
        self.feed(self.ev.Received(sender, data, self.world.now))

    def tick(self) -> None:
        epoch = self.epoch
        if self.alive and not self.suspended and self.session is not None:
            self.feed(self.ev.Tick(self.world.now))
            if self.alive and epoch == self.epoch:
                self.time_passed()
            if self.attack is not None:
                self.attack.tick()
        if self.alive and epoch == self.epoch:
            self.world.at(self.world.now + TICK, self.tick)

    def link(self, other: int, up: bool) -> None:
        if self.session is not None:
            self.feed(self.ev.LinkChanged(other, up, self.world.now))

    def suspend(self, on: bool) -> None:
        self.suspended = on

    # --- crash and restart ---
    def arm_crash(self, span: float) -> None:
        if self.alive:
            self.crash_armed = span

    def crash(self, span: float) -> None:
        world = self.world
        self.alive = False
        self.epoch += 1
        self.deciding = False
        for key in [k for k in world.links if k[0] == self.seat]:
            world.links[key].clear()  # the outbox died with the process
        for other in range(world.spec.seats):
            if other != self.seat and world.peers[other].alive:
                world.peers[other].link(self.seat, False)
        world.faults_end = max(world.faults_end, world.now + span)  # the crash lasts until the restart
        world.at(world.now + span, self.restart)

    def restart(self) -> None:
        world = self.world
        before = list(self.own_sent)
        self.alive = True
        self.left = self.left and any(type(e).__name__ == "Leave" for e in self.journal)
        self.session = world.backend.session(world.settings, self.identity, self.seed)
        replayed: list[Any] = []
        for event in self.journal:
            try:
                outs = self.session.handle(event)
            except Exception as exc:
                world.fail(f"P-6.3 journal replay raised at seat {self.seat}: {exc!r}")
                return
            replayed.extend(outs)
        own: list[bytes] = []
        seen: set[bytes] = set()
        for out in replayed:
            if type(out).__name__ == "Send" and out.data not in seen:
                msg = wire.parse(out.data)
                if msg is not None and msg.author == self.identity.peer_id:
                    seen.add(out.data)
                    own.append(out.data)
        if own[: len(before)] != before:
            world.fail(f"P-5.6 seat {self.seat}'s journal replay signed other messages than it had sent")
        self.outputs(replayed)  # resend everything (the others drop duplicates)
        for other in range(world.spec.seats):
            if other != self.seat and world.linked(self.seat, other):
                self.link(other, True)
                world.peers[other].link(self.seat, True)
        world.at(world.now + TICK, self.tick)
        self.follow_up()


def run(spec: Spec, backend: Any | None = None) -> Result:
    """Play the table `spec` describes, start to end, and check it."""
    return World(spec, backend).run()
