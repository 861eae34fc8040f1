"""Attacks with proofs (P-5.4, P-6.6) through the public attack API (docs/TESTING.md): proofs that
show nothing, sent again and again, padded to the size of a message; proofs naming by reference
messages nobody will ever bring. Registered by name for `--adversary NAME@SEAT`."""

from __future__ import annotations

import json
from typing import Any

from . import wire
from .adversary import SCENARIOS, Attack, AttackContext

MAX_WIRE = 250 * 1024  # just under what a seat reads as one message


def _encode(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class ProofSpam(Attack):
    """`proofspam[:PER_TICK]`: every tick, PER_TICK (default 1) refusal proofs that show nothing
    (an own message of the round, "refused" on a history padded with copies of the seat's largest
    message, all carried whole so nothing is waited for) go to every other seat."""

    def __init__(self, per_tick: int = 1) -> None:
        self.per_tick = per_tick

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        own = [m for m in (wire.parse(d) for d in ctx.world.peers[ctx.seat].own_sent) if m is not None]
        own = [m for m in own if m.table == ctx.settings.table and m.round == s.round_index]
        if not own:
            return
        biggest = max(own, key=lambda m: len(m.to_wire()))
        item = biggest.to_json()
        size = len(_encode(item)) + 1
        count = max(1, (MAX_WIRE - 2048) // size)
        proof = {"kind": "refused", "round": s.round_index, "message": own[-1].to_json(), "history": [item] * count}
        data = _encode({"proof": proof})
        for _ in range(self.per_tick):
            if ctx.fire(f"a refusal proof of {len(data)} bytes that shows nothing"):
                for to in ctx.others:
                    ctx.deliver(to, data)


class ProofByReference(Attack):
    """`proofref`: every tick, a refusal proof naming by (seat, seq, digest) messages that never
    come (digests of nothing), to every other seat: each is kept until they come, within a cap."""

    def tick(self, ctx: AttackContext) -> None:
        s = ctx.session
        own = [m for m in (wire.parse(d) for d in ctx.world.peers[ctx.seat].own_sent) if m is not None]
        own = [m for m in own if m.table == ctx.settings.table and m.round == s.round_index]
        if not own:
            return
        n = ctx.rng.randrange(1 << 30)
        refs = [[seat, 1000 + i, f"{(n + i) % (1 << 64):064x}"] for i, seat in enumerate(ctx.others * 2000)][:5000]
        proof = {"kind": "refused", "round": s.round_index, "message": own[-1].to_json(), "history": refs}
        data = _encode({"proof": proof})
        if ctx.fire(f"a proof naming {len(refs)} messages that never come"):
            for to in ctx.others:
                ctx.deliver(to, data)


SCENARIOS.update(
    {
        "proofspam": lambda a: ProofSpam(int(a[0]) if a else 1),
        "proofref": lambda a: ProofByReference(),
    }
)
