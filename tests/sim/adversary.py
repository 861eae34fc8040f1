"""Byzantine seats: a real session wrapped by an `Attack` (the API in docs/TESTING.md).

An attack sees every `Send` its seat's session makes (its own signed messages and the gossip it
passes on), every message that comes to the seat, every decision and every tick, and decides what
really leaves: the message as it is, another signed version of it (to some seats only: a fork),
nothing (withheld), something older (a replay) or something of its own making. It holds the seat's
`Identity`, so whatever it signs is a validly signed message of that seat.

Every deviation goes through `ctx.fire(what)`: the firings are numbered in order, and a spec's
`keep` turns all but some of them into honest behaviour, which is how a failure shrinks.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import wire


@dataclass(frozen=True)
class Outgoing:
    """One `Send` of the wrapped session, with the message read from it (`msg` None: not a signed
    message). `own`: signed by this seat (else gossip passed on). `recipients`: the seats it is for."""

    recipients: tuple[int, ...]
    data: bytes
    msg: Any
    own: bool

    @property
    def kind(self) -> str:
        return self.msg.kind if self.msg is not None else ""


class Attack:
    """Override any hook; the defaults are an honest seat."""

    wants_snapshots = False  # True: keep a copy of the session before each decision (`ctx.alternatives`)

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        ctx.deliver(out)

    def receive(self, ctx: AttackContext, sender: int, data: bytes) -> bool:
        """Whether the seat's own session sees `data` (its own messages coming back never do)."""
        return True

    def decide(self, ctx: AttackContext, move: dict[str, Any] | None) -> dict[str, Any] | None:
        """The move the seat's player makes (None: none now, it is asked again when it next may)."""
        return move

    def tick(self, ctx: AttackContext) -> None:
        """Time passed (every 0.25 s of simulated time)."""


class AttackContext:
    """What an attack may use. Public names only; see docs/TESTING.md."""

    def __init__(self, world: Any, seat: int, attack: Attack, shared: dict[str, Any]) -> None:
        self.world = world
        self.seat = seat
        self.attack = attack
        self.shared = shared  # one dict for every adversary of the table (collusion)
        self.rng = random.Random(f"sim-attack/{world.spec.seed}/{seat}")
        self.identity = world.identities[seat]
        self.events = world.backend  # Start, Received, Decided, StopFor, Leave, NoteWaiting, ...
        self.seen: list[tuple[int, bytes]] = []  # every input that came to the seat: (sender, bytes)
        self._origin: dict[str, str] = {}  # digest of a version made here -> digest of the original
        self._subst: dict[int, dict[str, str]] = {}  # recipient -> original digest -> what it was sent

    # --- who and when ---
    @property
    def n(self) -> int:
        return int(self.world.spec.seats)

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(s for s in range(self.n) if s != self.seat)

    @property
    def colluders(self) -> tuple[int, ...]:
        return tuple(s for s, _ in self.world.spec.adversaries if s != self.seat)

    @property
    def honest(self) -> tuple[int, ...]:
        return tuple(self.world.spec.honest)

    @property
    def now(self) -> float:
        return float(self.world.now)

    @property
    def session(self) -> Any:
        """The seat's real session: read its public queries (phase, decision_json, view, waiting...)."""
        return self.world.peers[self.seat].session

    @property
    def settings(self) -> Any:
        return self.world.settings

    def fire(self, what: str) -> bool:
        """Ask to deviate (`what` says how, for the report). False: this firing is switched off
        (shrinking), behave honestly instead."""
        firings = self.world.result.firings
        index = len(firings)
        firings.append(f"#{index} t={self.now:.2f} seat {self.seat}: {what}")
        keep = self.world.spec.keep
        return keep is None or index in keep

    # --- what leaves ---
    def deliver(self, out: Outgoing | int, data: bytes | None = None, delay: float = 0.0,
                to: Iterable[int] | None = None) -> None:  # fmt: skip
        """Send `data` (default: the outgoing message itself) on the link to each of `to` (default:
        the message's recipients; an int `out` names one seat). The seat's own later messages to a
        seat that was sent another version of one are re-signed to link to that version, so each
        recipient holds a well-formed chain and only gossip shows the fork."""
        if isinstance(out, Outgoing):
            targets = tuple(out.recipients if to is None else to)
            payload = out.data if data is None else data
        else:
            targets = (out,) if to is None else tuple(to)
            payload = data if data is not None else b""
        for b in targets:
            if b == self.seat:
                continue
            self.world.peers[self.seat].route(b, self._relinked(b, payload), delay)

    def _relinked(self, to: int, data: bytes) -> bytes:
        msg = wire.parse(data)
        if msg is None or msg.author != self.identity.peer_id:
            return data
        subst = self._subst.setdefault(to, {})
        origin = self._origin.get(msg.digest())  # this is a version made here of that original
        out = msg
        if subst and (msg.prev in subst or _mentions(msg.body, subst)):
            prev = subst.get(msg.prev, msg.prev)
            out = wire.resign(self.identity, msg, prev=prev, body=wire.substitute(msg.body, subst))
        if origin is not None:
            subst[origin] = out.digest()
        elif out is not msg:
            subst[msg.digest()] = out.digest()
        return data if out is msg else out.to_wire()

    def version(self, msg: Any, **changes: Any) -> bytes:
        """Another signed version of this seat's message `msg` (same place in its chain unless
        `seq`/`prev` are changed): `body`, `kind`, `round`, `seq`, `prev`, `table`."""
        new = wire.resign(self.identity, msg, **changes)
        self._origin[new.digest()] = msg.digest()
        return new.to_wire()

    def mutate(self, msg: Any) -> bytes:
        """A version of `msg` with one value of its body changed, of the same shape (garbage that
        signs and parses: a number off by one, a hex digit flipped, a list reordered or cut)."""
        body = mutate_value(msg.body, self.rng)
        if body == msg.body:
            body = {**msg.body, "x": 1}
        return self.version(msg, body=body)

    def alternatives(self, moves: Sequence[dict[str, Any]] | None = None) -> list[bytes]:
        """Other versions of what the seat's last decision signed, each the first own message the
        seat's session as it was just before that decision signs for another move: by default one
        other legal move (a valid fork); `moves` may name moves the rules do not allow this seat (a
        lie its own cards would refuse, such as a false pass), which a modified client that lists
        them among its decisions then signs. Empty where the last input was not a decision."""
        peer = self.world.peers[self.seat]
        journal = peer.journal
        if not journal or type(journal[-1]).__name__ != "Decided":
            return []
        last = journal[-1]
        backend = self.world.backend
        if moves is None:
            moves = [m for m in peer.offered if m != last.move][:1]
        out: list[bytes] = []
        for move in moves:
            shadow = self._before_decision(peer, journal)
            if shadow is None:
                break
            honest = type(shadow)
            shadow.__class__ = lying_class(honest, move)
            try:
                outputs = shadow.handle(backend.Decided(move, last.now))
            except Exception:
                continue
            for o in outputs:
                msg = wire.parse(o.data) if type(o).__name__ == "Send" else None
                if msg is not None and msg.author == self.identity.peer_id:
                    out.append(o.data)
                    break
        return out

    def _before_decision(self, peer: Any, journal: list[Any]) -> Any:
        from .world import snapshot

        if peer.snapshot is not None:
            return snapshot(peer.snapshot)
        shadow = self.world.backend.session(self.world.settings, self.identity, peer.seed)
        try:
            for event in journal[:-1]:
                shadow.handle(event)
        except Exception:
            return None
        return shadow

    def paired(self, original: Any, data: bytes) -> bytes:
        """Mark `data` (from `alternatives`) as a version of `original`, for re-linking."""
        msg = wire.parse(data)
        if msg is not None:
            self._origin[msg.digest()] = original.digest()
        return data

    def feed(self, event: Any) -> None:
        """An input of the attack's choosing to the seat's own session (a stop, a leave, a note...);
        what it makes goes out through `Attack.send` like everything else."""
        self.world.peers[self.seat].feed(event)

    def later(self, delay: float, action: Callable[[], None]) -> None:
        """Run `action` `delay` seconds of simulated time from now."""
        self.world.at(self.world.now + delay, action)

    # --- the world calls these ---
    def outgoing(self, to: int | None, data: bytes) -> None:
        recipients = self.others if to is None else (to,)
        msg = wire.parse(data)
        own = msg is not None and msg.author == self.identity.peer_id
        try:
            self.attack.send(self, Outgoing(recipients, data, msg, own))
        except Exception as exc:  # an attack's own bug is not the session's
            self.world.fail(f"SIM attack {type(self.attack).__name__} at seat {self.seat} raised {exc!r}")

    def incoming(self, sender: int, data: bytes) -> bool:
        self.seen.append((sender, data))
        if self.colluders:  # colluders know what each other hears
            self.shared.setdefault("heard", []).append((self.seat, sender, data))
        msg = wire.parse(data)
        if msg is not None and msg.author == self.identity.peer_id:
            return False
        return bool(self.attack.receive(self, sender, data))

    def decide(self, move: dict[str, Any] | None) -> dict[str, Any] | None:
        return self.attack.decide(self, move)

    def tick(self) -> None:
        self.attack.tick(self)


def lying_class(base: type, move: dict[str, Any]) -> type:
    """A subclass of the session class `base` that also lists `move` among its decisions while it
    owes one (a modified client: the rules its own cards would apply to `move` are not asked)."""

    class Lying(base):  # type: ignore[misc, valid-type]
        def decision_json(self) -> tuple[dict[str, Any], ...]:
            honest = tuple(super().decision_json())
            return honest + ((move,) if honest and move not in honest else ())

        def decision(self) -> tuple[Any, ...]:
            honest = tuple(super().decision())
            game = getattr(self, "game", None)
            if not honest or game is None:
                return honest
            lie = game.move_from_json(move)
            return honest if lie in honest else (*honest, lie)

    return Lying


def _mentions(value: object, digests: dict[str, str]) -> bool:
    if isinstance(value, str):
        return value in digests
    if isinstance(value, list):
        return any(_mentions(v, digests) for v in value)
    if isinstance(value, dict):
        return any(_mentions(v, digests) for v in value.values())
    return False


def mutate_value(value: Any, rng: random.Random) -> Any:
    """One leaf of a JSON tree changed, keeping its type."""
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        return {**value, key: mutate_value(value[key], rng)}
    if isinstance(value, list) and value:
        choice = rng.random()
        if choice < 0.2 and len(value) > 1:
            return value[1:]
        if choice < 0.4 and len(value) > 1:
            return list(reversed(value))
        i = rng.randrange(len(value))
        return [*value[:i], mutate_value(value[i], rng), *value[i + 1 :]]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((-1, 1))
    if isinstance(value, str):
        if value and all(c in "0123456789abcdef" for c in value):
            i = rng.randrange(len(value))
            return value[:i] + ("0" if value[i] != "0" else "1") + value[i + 1 :]
        return value + "x" if len(value) < 8 else value[::-1]
    return value


# --- the catalogue --------------------------------------------------------------------------------


def _subset(ctx: AttackContext, fixed: tuple[int, ...] | None) -> tuple[int, ...]:
    if fixed is not None:
        return tuple(s for s in fixed if s != ctx.seat)
    others = list(ctx.others)
    k = ctx.rng.randint(1, max(1, len(others) - 1))
    return tuple(sorted(ctx.rng.sample(others, k)))


class Fork(Attack):
    """`fork[:KIND[:SEATS]]`: an own message of KIND (every kind: `*`) goes in another signed
    version to SEATS (dot-separated; default a random proper subset each time). The other version is
    what another legal decision would have signed where there was one, else a mutated body. Fires on
    each matching message with probability `p` (1 where KIND is named)."""

    wants_snapshots = True

    def __init__(self, kind: str = "*", seats: tuple[int, ...] | None = None, p: float | None = None) -> None:
        self.kind = kind
        self.seats = seats
        self.p = p if p is not None else (0.15 if kind == "*" else 1.0)

    def matches(self, ctx: AttackContext, out: Outgoing) -> bool:
        return out.own and (self.kind == "*" or out.kind == self.kind) and ctx.rng.random() < self.p

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if not self.matches(ctx, out):
            return ctx.deliver(out)
        subset = _subset(ctx, self.seats)
        alts = ctx.alternatives()
        valid = bool(alts)
        other = ctx.paired(out.msg, alts[0]) if alts else ctx.mutate(out.msg)
        if not ctx.fire(f"fork {out.kind} seq {out.msg.seq}: {'valid' if valid else 'mutated'} version to {subset}"):
            return ctx.deliver(out)
        ctx.deliver(out, other, to=[s for s in out.recipients if s in subset])
        ctx.deliver(out, to=[s for s in out.recipients if s not in subset])


class Rewrite(Attack):
    """`rewrite[:KIND]`: an own message goes to everyone with one body value changed (same shape)."""

    def __init__(self, kind: str = "*", p: float | None = None) -> None:
        self.kind = kind
        self.p = p if p is not None else (0.1 if kind == "*" else 1.0)

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if out.own and (self.kind == "*" or out.kind == self.kind) and ctx.rng.random() < self.p:
            data = ctx.mutate(out.msg)
            if ctx.fire(f"rewrite {out.kind} seq {out.msg.seq}"):
                return ctx.deliver(out, data)
        ctx.deliver(out)


class Withhold(Attack):
    """`withhold[:KIND[:SEATS]]`: own messages of KIND (from the first one on) never reach SEATS
    (default: anyone). `*`: one kind drawn at the first own message after a random moment."""

    def __init__(self, kind: str = "*", seats: tuple[int, ...] | None = None) -> None:
        self.kind = kind
        self.seats = seats
        self.active = False

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if out.own and not self.active:
            if self.kind == "*" and ctx.rng.random() < 0.1:
                self.kind = out.kind
            self.active = out.kind == self.kind
        if out.own and self.active and out.kind == self.kind and ctx.fire(f"withhold {out.kind} seq {out.msg.seq}"):
            seats = self.seats if self.seats is not None else ctx.others
            return ctx.deliver(out, to=[s for s in out.recipients if s not in seats])
        ctx.deliver(out)


class WithholdDecision(Attack):
    """`sulk`: from a random decision on, the seat's player never moves (waited for, P-5.5)."""

    def __init__(self) -> None:
        self.on = False

    def decide(self, ctx: AttackContext, move: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.on and move is not None and ctx.rng.random() < 0.3:
            self.on = ctx.fire("never decide again")
        return None if self.on else move


class Replay(Attack):
    """`replay`: now and then, an earlier message (own, or one that came in) is sent again to a
    random seat, or an own earlier body is signed again at the current place of the chain."""

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        ctx.deliver(out)
        if ctx.rng.random() < 0.1:
            pool = [d for _, d in ctx.seen[-200:]]
            if out.own and ctx.rng.random() < 0.5:
                old = ctx.world.peers[ctx.seat].own_sent
                if len(old) > 1:
                    before = wire.parse(ctx.rng.choice(old[:-1]))
                    if before is not None and ctx.fire(f"re-sign an old {before.kind} at seq {out.msg.seq}"):
                        data = ctx.version(out.msg, body=before.body, kind=before.kind)
                        ctx.deliver(ctx.rng.choice(ctx.others), data, delay=ctx.rng.uniform(0, 2))
                return
            if pool:
                data = ctx.rng.choice(pool)
                to = ctx.rng.choice(ctx.others)
                if ctx.fire(f"replay an old message to seat {to}"):
                    ctx.deliver(to, data, delay=ctx.rng.uniform(0, 5))


class Garbage(Attack):
    """`garbage`: now and then, bytes that are no message, a message cut short, or an own message
    for another table or round."""

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        ctx.deliver(out)
        if not out.own or ctx.rng.random() > 0.1:
            return
        to = ctx.rng.choice(ctx.others)
        choice = ctx.rng.randrange(4)
        if choice == 0:
            data = bytes(ctx.rng.randrange(256) for _ in range(ctx.rng.randrange(1, 64)))
        elif choice == 1:
            data = out.data[: ctx.rng.randrange(len(out.data))]
        elif choice == 2:
            data = ctx.version(out.msg, round=out.msg.round + 1)
        else:
            data = ctx.version(out.msg, table="f" * len(out.msg.table))
        if ctx.fire(f"garbage #{choice} to seat {to}"):
            ctx.deliver(to, data)


class NoGossip(Attack):
    """`nogossip`: the seat passes on nobody's messages (to a random subset, fixed at the start)."""

    def __init__(self) -> None:
        self.skip: tuple[int, ...] | None = None

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if self.skip is None:
            self.skip = _subset(ctx, None)
        if not out.own and ctx.fire("drop gossip"):
            return ctx.deliver(out, to=[s for s in out.recipients if s not in self.skip])
        ctx.deliver(out)


class FalseStop(Attack):
    """`falsestop`: from a random moment on, the seat's next own public message goes out as a signed
    stop in its place, naming a random other seat for a step (P-5.5: a stop naming a seat that owes
    nothing is a provable fault; one that does owe it is a stop like any other)."""

    def __init__(self) -> None:
        self.at: float | None = None

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if self.at is None:
            self.at = ctx.rng.uniform(1, 25)
        public = out.own and len(out.recipients) > 1 and isinstance(out.msg.body.get("on"), dict)
        if public and 0 < self.at <= ctx.now:
            self.at = -1
            s = ctx.session
            owed = [w for w in s.waiting(ctx.now)] if s is not None else []
            seat, what, to = ctx.rng.choice(ctx.others), "move", None
            if owed and ctx.rng.random() < 0.5:
                w = ctx.rng.choice(owed)
                seat, what, to = w.seat, w.what, w.private_to
            body = {"seat": seat, "owed": what, "to": to, "reason": "waited", "on": out.msg.body["on"]}
            if ctx.fire(f"a stop naming seat {seat} ({what}) in place of {out.kind} #{out.msg.seq}"):
                return ctx.deliver(out, ctx.version(out.msg, kind="stop", body=body))
        ctx.deliver(out)


class Delay(Attack):
    """`delay[:KIND]`: own messages of KIND leave late: just under or just past the patience."""

    def __init__(self, kind: str = "*") -> None:
        self.kind = kind

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        if out.own and (self.kind == "*" or out.kind == self.kind) and ctx.rng.random() < 0.2:
            patience = float(getattr(ctx.settings, "patience", 10.0) or 10.0)
            extra = patience + ctx.rng.choice((-0.5, 0.5, 2.0))
            if ctx.fire(f"delay {out.kind} seq {out.msg.seq} by {extra:.1f} s"):
                return ctx.deliver(out, delay=extra)
        ctx.deliver(out)


class Leak(Attack):
    """`leak`: what comes to the seat privately (messages not passed on to it by gossip) is passed
    on to honest seats, as if this seat could frame the sender with them."""

    def receive(self, ctx: AttackContext, sender: int, data: bytes) -> bool:
        msg = wire.parse(data)
        if msg is not None and ctx.rng.random() < 0.3:
            to = ctx.rng.choice(ctx.others)
            if to != sender and ctx.fire(f"pass seat {sender}'s {msg.kind} on to seat {to}"):
                ctx.deliver(to, data)
        return True


class Compose(Attack):
    """Several attacks at one seat: each hook runs them in turn (sends: the first that deviates wins)."""

    def __init__(self, parts: Sequence[Attack]) -> None:
        self.parts = list(parts)
        self.wants_snapshots = any(p.wants_snapshots for p in parts)

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        self.parts[ctx.rng.randrange(len(self.parts))].send(ctx, out)

    def receive(self, ctx: AttackContext, sender: int, data: bytes) -> bool:
        return all(p.receive(ctx, sender, data) for p in self.parts)

    def decide(self, ctx: AttackContext, move: dict[str, Any] | None) -> dict[str, Any] | None:
        for p in self.parts:
            move = p.decide(ctx, move)
        return move

    def tick(self, ctx: AttackContext) -> None:
        for p in self.parts:
            p.tick(ctx)


def _seats(text: str) -> tuple[int, ...] | None:
    return tuple(int(s) for s in text.split(".")) if text else None


CATALOGUE: dict[str, Callable[[list[str]], Attack]] = {
    "fork": lambda a: Fork(a[0] if a else "*", _seats(a[1]) if len(a) > 1 else None),
    "rewrite": lambda a: Rewrite(a[0] if a else "*"),
    "withhold": lambda a: Withhold(a[0] if a else "*", _seats(a[1]) if len(a) > 1 else None),
    "sulk": lambda a: WithholdDecision(),
    "replay": lambda a: Replay(),
    "garbage": lambda a: Garbage(),
    "nogossip": lambda a: NoGossip(),
    "falsestop": lambda a: FalseStop(),
    "delay": lambda a: Delay(a[0] if a else "*"),
    "leak": lambda a: Leak(),
    "honest": lambda a: Attack(),
}
SCENARIOS: dict[str, Callable[[list[str]], Attack]] = {}  # named multi-part attacks (scenarios.py)


def make_attack(name: str) -> Attack:
    """An attack by name: `fork:move:1.2`, `withhold:secrets`, `fork+garbage` (composed)..."""
    parts = [p for p in name.split("+") if p]
    attacks: list[Attack] = []
    for part in parts:
        head, *args = part.split(":")
        table = {**CATALOGUE, **SCENARIOS}
        if head not in table:
            raise ValueError(f"unknown attack {head!r}: use one of {', '.join(sorted(table))}")
        attacks.append(table[head](args))
    return attacks[0] if len(attacks) == 1 else Compose(attacks)


def make_attacks(spec: Any, world: Any) -> dict[int, AttackContext]:
    shared: dict[str, Any] = {}
    return {seat: AttackContext(world, seat, make_attack(name), shared) for seat, name in spec.adversaries}
