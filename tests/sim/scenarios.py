"""Attacks with a story: the framings of issue 29's findings 1-3, each a page of the public attack
API (docs/TESTING.md), registered by name for `--adversary NAME@SEAT`."""

from __future__ import annotations

from typing import Any

from .adversary import SCENARIOS, Attack, AttackContext, Leak, Outgoing, _seats


class FalsePass(Attack):
    """`falsepass[:SEATS]` (Sixes, X-2.4): where the seat plays a card, SEATS (default: one honest
    seat, drawn) are sent a signed pass for that step instead, which only the audit can refute. A
    seat that then sees a whole round of passes stops for an audit; the pass and the play are two
    versions of one step, so the fork, not the stopping seat, is what must be exposed."""

    wants_snapshots = True

    def __init__(self, seats: tuple[int, ...] | None = None) -> None:
        self.seats = seats

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        move = self.last_play(ctx)
        if out.own and move is not None:
            lies = ctx.alternatives([{"seat": ctx.seat, "pass": True}])
            if lies:
                targets = self.seats or (ctx.rng.choice(ctx.honest),)
                if ctx.fire(f"false pass to {targets} for a play of {move.get('play')}"):
                    lie = ctx.paired(out.msg, lies[0])
                    ctx.deliver(out, lie, to=[s for s in out.recipients if s in targets])
                    return ctx.deliver(out, to=[s for s in out.recipients if s not in targets])
        ctx.deliver(out)

    @staticmethod
    def last_play(ctx: AttackContext) -> dict[str, Any] | None:
        journal = ctx.world.peers[ctx.seat].journal
        last = journal[-1] if journal else None
        if last is not None and type(last).__name__ == "Decided" and "play" in last.move:
            return dict(last.move)
        return None


class ForkPlay(Attack):
    """`forkplay[:SEATS]`: every card the seat plays goes to SEATS (default: one honest seat, drawn
    each time) as another legal card (6th Sense: so that one honest seat sees a trick won, and a peek
    granted, that the other does not: finding 1)."""

    wants_snapshots = True

    def __init__(self, seats: tuple[int, ...] | None = None) -> None:
        self.seats = seats

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        journal = ctx.world.peers[ctx.seat].journal
        last = journal[-1] if journal else None
        if out.own and last is not None and type(last).__name__ == "Decided" and "play" in last.move:
            alts = ctx.alternatives()
            if alts:
                targets = self.seats or (ctx.rng.choice(ctx.honest),)
                if ctx.fire(f"play fork to {targets}"):
                    other = ctx.paired(out.msg, ctx.rng.choice(alts))
                    ctx.deliver(out, other, to=[s for s in out.recipients if s in targets])
                    return ctx.deliver(out, to=[s for s in out.recipients if s not in targets])
        ctx.deliver(out)


class Frame(Leak):
    """`frame` (the colluder of finding 2): every message an honest seat sends this one is passed on
    to the other honest seats (what an honest seat did in answer to one version of a fork, quoted to
    a seat that holds the other), and once the round stops, a stop naming an honest seat for the peek
    answer it owed this seat goes out in place of the seat's next public message."""

    def receive(self, ctx: AttackContext, sender: int, data: bytes) -> bool:
        if sender in ctx.honest and ctx.fire(f"pass seat {sender}'s message on to every honest seat"):
            ctx.deliver(0, data, to=[s for s in ctx.honest if s != sender])
        return True

    def send(self, ctx: AttackContext, out: Outgoing) -> None:
        s = ctx.session
        stopping = s is not None and s.phase in ("stopping", "ending")
        if stopping and out.own and not ctx.shared.get("framed") and isinstance(out.msg.body.get("on"), dict):
            ctx.shared["framed"] = True
            victim = ctx.rng.choice(ctx.honest)
            body = {"seat": victim, "owed": "p.peek", "to": ctx.seat, "reason": "no answer", "on": out.msg.body["on"]}
            if ctx.fire(f"a stop naming honest seat {victim} in place of {out.kind} #{out.msg.seq}"):
                return ctx.deliver(out, ctx.version(out.msg, kind="stop", body=body))
        ctx.deliver(out)


SCENARIOS.update(
    {
        "falsepass": lambda a: FalsePass(_seats(a[0]) if a else None),
        "forkplay": lambda a: ForkPlay(_seats(a[0]) if a else None),
        "frame": lambda a: Frame(),
    }
)
