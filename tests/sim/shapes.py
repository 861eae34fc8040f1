"""Signed messages of the wrong shape (P-6.3) through the public attack API (docs/TESTING.md): a
value anywhere in an own message's body (its history included) replaced by a value of another
type or an edge value, then signed. Registered by name for `--adversary NAME@SEAT`."""

from __future__ import annotations

import random
from typing import Any

from .adversary import SCENARIOS, Attack, AttackContext

ODD: tuple[Any, ...] = (
    None, -1, 0, 1, 2**53, 2**63 - 1, -(2**63), True, False, "", "zz", "0" * 64, "f" * 65, [], {}, [[]], [None],
    {"pos": -1}, {"": None}, [0] * 300, "\u202e\x00\x1b[2J",
)  # fmt: skip


def reshape(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """`value` with one node (a leaf or a whole subtree) replaced by an odd value."""
    stop = rng.random() < 0.25 or not isinstance(value, (dict, list)) or not value
    if stop and depth > 0:
        return rng.choice(ODD)
    if isinstance(value, dict) and value:
        key = rng.choice(sorted(value))
        if rng.random() < 0.1:
            return {k: v for k, v in value.items() if k != key}  # a field gone
        return {**value, key: reshape(value[key], rng, depth + 1)}
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        return [*value[:i], reshape(value[i], rng, depth + 1), *value[i + 1 :]]
    return rng.choice(ODD)


class Shapes(Attack):
    """`shapes[:KIND[:P]]`: own messages of KIND (`*`: any) go to everyone, with probability P
    (default 0.3), with one node of the body replaced by an odd value."""

    def __init__(self, kind: str = "*", p: float = 0.3) -> None:
        self.kind = kind
        self.p = p

    def send(self, ctx: AttackContext, out: Any) -> None:
        if out.own and (self.kind == "*" or out.kind == self.kind) and ctx.rng.random() < self.p:
            body = reshape(out.msg.body, ctx.rng)
            if body != out.msg.body and ctx.fire(f"reshaped {out.kind} #{out.msg.seq}: {str(body)[:80]}"):
                return ctx.deliver(out, ctx.version(out.msg, body=body))
        ctx.deliver(out)


SCENARIOS.update({"shapes": lambda a: Shapes(a[0] if a else "*", float(a[1]) if len(a) > 1 else 0.3)})
