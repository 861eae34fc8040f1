"""Attacks on stops, leaves and notes of rounds already gone by, through the public attack API
(docs/TESTING.md), registered by name for `--adversary NAME@SEAT`."""

from __future__ import annotations

from typing import Any

from . import wire
from .adversary import SCENARIOS, Attack, AttackContext, _seats


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


SCENARIOS.update(
    {
        "pastnote": lambda a: PastNote(a[0] if a else "leave", _seats(a[1]) if len(a) > 1 else None),
    }
)
