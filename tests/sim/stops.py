"""Attacks on stops, leaves and notes of rounds already gone by, through the public attack API
(docs/TESTING.md), registered by name for `--adversary NAME@SEAT`."""

from __future__ import annotations

from typing import Any

from . import wire
from .adversary import SCENARIOS, Attack, AttackContext, _seats, mutate_value


def own_chain(ctx: AttackContext, round_of: int) -> list[Any]:
    """The seat's own public messages of `round_of`, in chain order (as it sent them)."""
    table = ctx.settings.table
    msgs = [wire.parse(d) for d in ctx.world.peers[ctx.seat].own_sent]
    chain = {m.seq: m for m in msgs if m is not None and m.table == table and m.round == round_of}
    return [chain[s] for s in sorted(chain)]


def next_note(ctx: AttackContext, round_of: int, kind: str, body: dict[str, Any]) -> bytes | None:
    """A note signed at the next free place of the seat's own chain of `round_of`, naming the history
    its last message there named (with that message as its own head)."""
    chain = own_chain(ctx, round_of)
    if not chain:
        return None
    last = chain[-1]
    on = dict(last.body["on"])
    heads = list(on["heads"])
    heads[ctx.seat] = [last.seq, last.digest()]
    on["heads"] = heads
    msg = wire.resign(ctx.identity, last, kind=kind, seq=last.seq + 1, prev=last.digest(), body={**body, "on": on})
    return msg.to_wire()


def heard_round(ctx: AttackContext, seat: int, round_of: int) -> bool:
    """Whether a public message of `seat` of `round_of` came to this seat (or a colluder)."""
    key = ctx.world.identities[seat].peer_id
    heard = [d for _, d in ctx.seen] + [d for _, _, d in ctx.shared.get("heard", [])]
    for data in heard[-400:]:
        msg = wire.parse(data)
        if msg is not None and msg.author == key and msg.round >= round_of and msg.table == ctx.settings.table:
            return True
    return False


class PastNote(Attack):
    """`pastnote[:KIND[:SEATS]]`: once the seat's own session has confirmed a round and SEATS
    (default: the last honest seat) have moved on to the next one, a note of KIND (`leave`, `stop`: a
    stop for an audit, naming nobody; `wait`; `end`) is signed at the next place of the seat's chain
    of the confirmed round and sent to SEATS alone, nobody else."""

    def __init__(self, kind: str = "leave", seats: tuple[int, ...] | None = None) -> None:
        self.kind = kind
        self.seats = seats
        self.done: set[int] = set()

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        if s is None:
            return
        r = int(s.round_index) - 1
        if r < 0 or r in self.done:
            return
        targets = self.seats or (ctx.honest[-1],)
        if not all(heard_round(ctx, t, r + 1) for t in targets):
            return
        self.done.add(r)
        body: dict[str, Any] = {}
        if self.kind == "stop":
            body = {"seat": None, "owed": None, "to": None, "reason": "audit"}
        elif self.kind == "end":
            body = {"record": "0" * 64}
        data = next_note(ctx, r, self.kind, body)
        if data is not None and ctx.fire(f"a {self.kind} of round {r} to {targets} alone"):
            for t in targets:
                ctx.deliver(t, data)


class AfterEnd(Attack):
    """`afterend[:KIND[:SEATS[:DELAY]]]`: right after the seat signs its end signature, a note of KIND
    (`stop`: for an audit, naming nobody; `leave`; `stop1`: naming the next seat for its end
    signature) is signed after it in the same round and sent to SEATS (default: every other seat),
    DELAY seconds later (default 0)."""

    def __init__(self, kind: str = "stop", seats: tuple[int, ...] | None = None, delay: float = 0.0) -> None:
        self.kind = kind
        self.seats = seats
        self.delay = delay
        self.fired = False

    def send(self, ctx: AttackContext, out: Any) -> None:
        ctx.deliver(out)
        if self.fired or not out.own or out.kind != "end":
            return
        self.fired = True
        body: dict[str, Any] = {}
        kind = self.kind
        if kind == "stop":
            body = {"seat": None, "owed": None, "to": None, "reason": "audit"}
        elif kind == "stop1":
            kind = "stop"
            body = {"seat": (ctx.seat + 1) % ctx.n, "owed": "end", "to": None, "reason": "waited"}
        data = next_note(ctx, out.msg.round, kind, body)
        targets = self.seats or ctx.others
        if data is not None and ctx.fire(f"a {self.kind} after its own end to {targets}"):
            for t in targets:
                ctx.deliver(t, data, delay=self.delay)


class PastFork(Attack):
    """`pastfork[:KIND[:SEATS]]`: once SEATS (default: the last honest seat) have moved on from a round
    the seat's own session confirmed, another version (one body value changed) of the seat's own
    message of KIND (default: its last step of the round, `*`) of that round is sent to SEATS alone."""

    def __init__(self, kind: str = "*", seats: tuple[int, ...] | None = None) -> None:
        self.kind = kind
        self.seats = seats
        self.done: set[int] = set()

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        if s is None:
            return
        r = int(s.round_index) - 1
        if r < 0 or r in self.done:
            return
        targets = self.seats or (ctx.honest[-1],)
        if not all(heard_round(ctx, t, r + 1) for t in targets):
            return
        self.done.add(r)
        chain = [m for m in own_chain(ctx, r) if self.kind in ("*", m.kind) and m.kind not in ("end", "wait")]
        if not chain:
            return
        msg = chain[-1]
        body = mutate_value(msg.body, ctx.rng)
        if body == msg.body:
            body = {**msg.body, "x": 1}
        data = wire.resign(ctx.identity, msg, body=body).to_wire()
        if ctx.fire(f"another version of its {msg.kind} #{msg.seq} of round {r} to {targets} alone"):
            for t in targets:
                ctx.deliver(t, data)


class ForkNote(Attack):
    """`forknote[:KIND[:SEATS]]`: from a random moment on, the seat's next own public message goes to
    SEATS (default: one honest seat, drawn) replaced by a note of KIND at the same place (`stop`: for
    an audit; `stopowed`: naming a step this seat sees owed; `leave`; `wait`), the rest get it as it is."""

    def __init__(self, kind: str = "leave", seats: tuple[int, ...] | None = None) -> None:
        self.kind = kind
        self.seats = seats
        self.at: float | None = None

    def send(self, ctx: AttackContext, out: Any) -> None:
        if self.at is None:
            self.at = ctx.rng.uniform(1, 25)
        public = out.own and len(out.recipients) > 1 and isinstance(out.msg.body.get("on"), dict)
        if not (public and 0 < self.at <= ctx.now):
            return ctx.deliver(out)
        self.at = -1
        kind, body = self.kind, {}
        if kind == "stop":
            body = {"seat": None, "owed": None, "to": None, "reason": "audit"}
        elif kind == "stopowed":
            kind = "stop"
            owed = list(ctx.session.waiting(ctx.now))
            if not owed:
                return ctx.deliver(out)
            w = ctx.rng.choice(owed)
            body = {"seat": w.seat, "owed": w.what, "to": w.private_to, "reason": "waited"}
        targets = self.seats or (ctx.rng.choice(ctx.honest),)
        other = ctx.version(out.msg, kind=kind, body={**body, "on": out.msg.body["on"]})
        if not ctx.fire(f"a {self.kind} to {targets} in place of {out.kind} #{out.msg.seq}"):
            return ctx.deliver(out)
        ctx.deliver(out, other, to=[s for s in out.recipients if s in targets])
        ctx.deliver(out, to=[s for s in out.recipients if s not in targets])


class StaleStop(Attack):
    """`stalestop[:SEAT]`: once the cards are dealt, the seat's next own public message goes to every
    seat as a stop naming SEAT (default: the first honest seat) for its seed commitment, on a history
    that holds no message of any other seat (its own head as it must be): a step SEAT owed on that
    history, though the seat's own earlier messages named SEAT's commitment as held."""

    def __init__(self, seat: int | None = None) -> None:
        self.victim = seat
        self.fired = False

    def send(self, ctx: AttackContext, out: Any) -> None:
        s = ctx.session
        public = out.own and len(out.recipients) > 1 and isinstance(out.msg.body.get("on"), dict)
        if self.fired or not public or s is None or s.phase != "play":
            return ctx.deliver(out)
        self.fired = True
        victim = self.victim if self.victim is not None else ctx.honest[0]
        on = dict(out.msg.body["on"])
        on["heads"] = [h if i == ctx.seat else None for i, h in enumerate(on["heads"])]
        on["got"] = [0] * ctx.n
        body = {"seat": victim, "owed": "seed.commit", "to": None, "reason": "waited", "on": on}
        if ctx.fire(f"a stop naming seat {victim} for its seed commitment on an empty history"):
            return ctx.deliver(out, ctx.version(out.msg, kind="stop", body=body))
        ctx.deliver(out)


class PastFlood(Attack):
    """`pastflood[:COUNT]`: once the last honest seat has moved on from a round the seat confirmed,
    COUNT (default 200) notes are signed one after the other at the next places of the seat's chain
    of that round, each padded to about 200 KiB (a wait note with a field of no kind), and sent to
    every other seat."""

    def __init__(self, count: int = 200) -> None:
        self.count = count
        self.done: set[int] = set()

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        if s is None:
            return
        r = int(s.round_index) - 1
        if r < 0 or r in self.done or not heard_round(ctx, ctx.honest[-1], r + 1):
            return
        self.done.add(r)
        chain = own_chain(ctx, r)
        if not chain or not ctx.fire(f"{self.count} padded notes of round {r}"):
            return
        last = chain[-1]
        on = dict(last.body["on"])
        pad = "a" * (200 * 1024)
        for _ in range(self.count):
            heads = list(on["heads"])
            heads[ctx.seat] = [last.seq, last.digest()]
            on = {**on, "heads": heads}
            body = {"pad": pad, "on": on}
            msg = wire.resign(ctx.identity, last, kind="wait", seq=last.seq + 1, prev=last.digest(), body=body)
            for t in ctx.others:
                ctx.deliver(t, msg.to_wire())
            last = msg


class ForkThenPastFork(Attack):
    """`forkthenpast[:DELAY]`: once every honest seat has moved on from a round the seat confirmed,
    another version of its first own message of the new round goes to every other seat (a fork that
    exposes it), and DELAY seconds later (default 1) another version of its last step of the round
    before (a fork of a confirmed round, from a seat already exposed)."""

    def __init__(self, delay: float = 1.0) -> None:
        self.delay = delay
        self.fired = False

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        if s is None or self.fired:
            return
        r = int(s.round_index) - 1
        if r < 0 or not all(heard_round(ctx, t, r + 1) for t in ctx.honest):
            return
        old_chain = [m for m in own_chain(ctx, r) if m.kind not in ("end", "wait", "secrets", "stop", "leave")]
        now_chain = own_chain(ctx, r + 1)
        if not now_chain or not old_chain:
            return
        self.fired = True
        first, last = now_chain[0], old_chain[-1]
        if ctx.fire(f"another version of its {first.kind} #0 of round {r + 1}"):
            data = wire.resign(ctx.identity, first, body={**first.body, "x": 1}).to_wire()
            for t in ctx.others:
                ctx.deliver(t, data)
        if ctx.fire(f"then another version of its {last.kind} #{last.seq} of round {r}"):
            old = wire.resign(ctx.identity, last, body={**last.body, "x": 1}).to_wire()
            for t in ctx.others:
                ctx.deliver(t, old, delay=self.delay)


class FakeHead(Attack):
    """`fakehead[:KIND]`: the seat's first own public message of KIND (`*`: from a random moment on)
    names, for one other seat, a head with a digest of no message (same seq), and goes so to every
    seat: a history nobody can bring (P-6.4: a step not yet come, waited for)."""

    def __init__(self, kind: str = "*") -> None:
        self.kind = kind
        self.fired = False
        self.at: float | None = None

    def send(self, ctx: AttackContext, out: Any) -> None:
        if self.at is None:
            self.at = ctx.rng.uniform(0.5, 15)
        on = out.msg.body.get("on") if out.msg is not None else None
        ready = self.kind == out.kind or (self.kind == "*" and ctx.now >= self.at)
        if self.fired or not out.own or not isinstance(on, dict) or not ready:
            return ctx.deliver(out)
        heads = list(on["heads"])
        held = [i for i, h in enumerate(heads) if h is not None and i != ctx.seat]
        if not held:
            return ctx.deliver(out)
        self.fired = True
        i = ctx.rng.choice(held)
        heads[i] = [heads[i][0], f"{ctx.rng.getrandbits(256):064x}"]
        data = ctx.version(out.msg, body={**out.msg.body, "on": {**on, "heads": heads}})
        if ctx.fire(f"its {out.kind} #{out.msg.seq} names seat {i}'s head #{heads[i][0]} by a digest of nothing"):
            return ctx.deliver(out, data)
        ctx.deliver(out)


class EndRace(Attack):
    """`endrace[:SEAT[:DELAY]]`: when the seat signs its end, it goes DELAY seconds later (default
    0.3) to every seat but SEAT (default: the last honest seat), and SEAT is sent, instead, another
    version of the seat's secrets of that round: the others finish on the end every seat signed, and
    SEAT finds the fork only then."""

    def __init__(self, seat: int | None = None, delay: float = 0.3) -> None:
        self.victim = seat
        self.delay = delay
        self.fired = False

    def send(self, ctx: AttackContext, out: Any) -> None:
        if self.fired or not out.own or out.kind != "end":
            return ctx.deliver(out)
        self.fired = True
        victim = self.victim if self.victim is not None else ctx.honest[-1]
        secrets = [m for m in own_chain(ctx, out.msg.round) if m.kind == "secrets"]
        if not secrets or not ctx.fire(f"its end to all but seat {victim}, another version of its secrets to it"):
            return ctx.deliver(out)
        other = wire.resign(ctx.identity, secrets[-1], body={**secrets[-1].body, "x": 1}).to_wire()
        ctx.deliver(out, to=[s for s in out.recipients if s != victim], delay=self.delay)
        ctx.deliver(victim, other, delay=self.delay)


SCENARIOS.update(
    {
        "endrace": lambda a: EndRace(int(a[0]) if a and a[0] else None, float(a[1]) if len(a) > 1 else 0.3),
        "fakehead": lambda a: FakeHead(a[0] if a else "*"),
        "forkthenpast": lambda a: ForkThenPastFork(float(a[0]) if a else 1.0),
        "pastflood": lambda a: PastFlood(int(a[0]) if a else 200),
        "stalestop": lambda a: StaleStop(int(a[0]) if a else None),
        "pastfork": lambda a: PastFork(a[0] if a else "*", _seats(a[1]) if len(a) > 1 else None),
        "forknote": lambda a: ForkNote(a[0] if a else "leave", _seats(a[1]) if len(a) > 1 else None),
        "afterend": lambda a: AfterEnd(
            a[0] if a else "stop", _seats(a[1]) if len(a) > 1 and a[1] else None, float(a[2]) if len(a) > 2 else 0.0
        ),
        "pastnote": lambda a: PastNote(a[0] if a else "leave", _seats(a[1]) if len(a) > 1 else None),
    }
)
