"""Red team 9: attacks on 04e102d (a stop is not final: a `stopped` seat plays no further, drops private
messages, still takes every public chain in and turns its stop into the conviction on evidence it checks
without playing on; `clocks._tick` in stopped runs only the conviction loop of `_judge_claims`).

Each test is an attack by a modified client at one or two seats, the real `TableSession` everywhere
else, checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats agree,
I3 nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an invariant is a
strict xfail, the comment "BROKE" above it saying what breaks and where in the code; an attack the code
withstands is a plain test that asserts the invariants on a table where the attack fired (`applied > 0`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_redteam7 import QUIET
from test_redteam_equiv import run_table

from engine.api import JSONObject
from protocol.signed import MAX_MESSAGE_BYTES, SignedMessage
from protocol.table._state import MAX_OWN_EVIDENCE_BYTES
from protocol.testing import KEEP, TICK, AttackContext, Emit, Strategy

GAMES = [("sixth-sense", {}), ("take6", {}), ("sixes", {"chips": 1})]


def claim_limit(ctx: AttackContext) -> float:
    """What `clocks._judge_claims` waits for (twice this) before a lone claim stops the game (P-5.3)."""
    return max(ctx.settings.step_timeout, ctx.settings.turn_timeout or 0.0)


# --- 1: a single cheater races a fault that needs play against a stop by the clock ---------------------


class RaceTheClaimDeadline(Strategy):
    """One cheater, no colluder. At its first `trigger` message (its first decision, or its lock) it
    signs a false timeout claim against an honest seat, timed to arrive 20 ms before a tick (a claimant
    is never claimed itself: `clocks._tick`, so it may withhold from then on), and sends nothing of its
    own any more. Every honest seat will stop at the first tick past twice the limit after the claim
    (`clocks._judge_claims`: "the other seats do not"). 10 ms before that instant, it sends `convict`
    alone a gap-maker and then its fault, next in its chain: `convict` handles the fault and convicts;
    the other honest seat gets the blame at once but holds the quoted fault out of order (the gap-maker
    comes only by `convict`'s gossip, 50 ms later), so the blame waits, and the clock stops it first.

    `trigger` "decision": the gap-maker is a second claim of anything, the fault a move for its own
    step that is no move (`play._on_move`: P-5.1), a fault that shows only by playing on.
    `trigger` "lock" (this seat locks last): the gap-maker is its lock, the fault its hand keys to
    `convict` one short (`deal._check_hand_keys`: P-4.3), a failed private check, which the stopped seat
    re-checks without playing on (`blame._private_fault`)."""

    name = "race-the-claim-deadline"

    def __init__(self, convict: int, trigger: str) -> None:
        self.convict = convict
        self.trigger = trigger
        self.first: SignedMessage | None = None
        self.keys: SignedMessage | None = None
        self.seen: float | None = None
        self.sent = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        kinds = ("move", "commit") if self.trigger == "decision" else ("lock",)
        if self.first is not None or msg.kind not in kinds:
            return
        rd = ctx.session.round
        if msg.kind == "lock" and (rd is None or len(rd.locks) != ctx.n):
            return  # not the last locker: its keys could not be checked by anyone yet
        self.first = msg
        ctx.applied += 1
        delay = TICK - (ctx.now % TICK) - 0.02
        ctx.publish("timeout", {"seat": ctx.victim(), "step": "0/play/0/x", "what": "a step"}, delay=delay)
        self.seen = ctx.now + delay

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == self.convict and self.keys is None:
            self.keys = msg
        if msg.kind in QUIET or self.first is not None:
            return ()
        return (KEEP,)

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if self.seen is None or self.first is None or self.sent:
            return
        deadline = self.seen + 2 * claim_limit(ctx)
        if not now < deadline < now + TICK:
            return
        self.sent = True
        ctx.applied += 1
        at = deadline - now - 0.01
        first = self.first
        if self.trigger == "decision":
            gap: JSONObject = {"seat": ctx.victim(), "step": "elsewhere", "what": "x"}
            ctx.publish("timeout", gap, to=[self.convict], delay=at)
            fault: JSONObject = {"step": first.body["step"], "state": first.body["state"], "move": "no move"}
            ctx.publish("move", fault, to=[self.convict], delay=at)
            return
        assert self.keys is not None
        (lock,) = ctx.publish("lock", first.body, to=[self.convict], delay=at)
        openings = self.keys.body["openings"]
        assert isinstance(openings, list)
        short = {**self.keys.body, "openings": openings[1:], "input": lock.digest()}  # built on the lock as sent
        ctx.send_version(self.convict, self.keys, Emit(body=short, delay=at))


# BROKE (I2): docs/PROTOCOL.md "Limits" says a single cheater cannot race a fault that needs play against
# a stop "since both are in its one chain"; but a stop by the clock is in nobody's chain. The cheater's
# false claim shields it (`clocks._tick` never claims a claimant) and fixes, to the tick, when every
# honest seat will stop (`clocks._judge_claims`, 2 x 60 s after the claim arrived, first tick past it).
# 10 ms before that tick it sends seat `convict` alone a second claim and a move that is no move: seat
# `convict` convicts (P-5.1) and blames at once; the other honest seat reads the blame while still live,
# but the quoted move is held out of order there (`blame._take_in` -> `inbox._hold`: the second claim
# comes only by gossip, 50 ms later), so the blame waits (`_evidence_verdict` None); the tick stops it
# (nobody convicted); the gossip then brings both messages, chained and passed over (`inbox._handle` in
# stopped), and the blame read again proves nothing there (`_judge_late_blame`: a fault of play).
# One seat Blamed(cheater, P-5.1), the other Stopped. A real network needs no trigger (any latency).
# Repro: .venv/bin/pytest -n 0 tests/test_redteam9.py -k "claim_deadline and decision"
@pytest.mark.xfail(strict=True, reason="red team 9 #1: one cheater races a fault of play against a stop by the clock")
@pytest.mark.parametrize("convict", [0, 1])
@pytest.mark.parametrize(("game", "options"), GAMES)
def test_a_fault_of_play_just_before_the_claim_deadline_ends_every_seat_alike(
    game: str, options: JSONObject, convict: int
) -> None:
    attack = RaceTheClaimDeadline(convict, "decision")
    table = run_table(game, 3, options, 0, {2: attack})
    assert attack.sent and table.applied > 0
    assert table.invariants() == [], table.report()


# BROKE (I2): the same race with a fault a stopped seat is said to check without playing on (`_state`:
# "a private message that fails the check its recipient made"). The cheater locks last; it withholds its
# lock behind its false claim, then 10 ms before the claim deadline sends `convict` alone its lock and
# its hand keys one short: `convict` convicts (P-4.3). The other seat gets the blame at once but has not
# the lock (it comes by gossip, 50 ms later), so `blame._private_fault` cannot check the keys (None:
# `len(rd.locks) < n`); the tick stops it; the lock then is chained and passed over, never applied
# (`inbox._handle` in stopped), so its round state stays frozen short of the last lock and the keys are
# never checkable there: the blame read again is refused. One seat Blamed(cheater, P-4.3), one Stopped.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam9.py -k "claim_deadline and lock"
@pytest.mark.xfail(strict=True, reason="red team 9 #2: a stopped seat's frozen round never checks the keys")
@pytest.mark.parametrize("convict", [0, 1])
@pytest.mark.parametrize(("game", "options"), GAMES)
def test_bad_keys_just_before_the_claim_deadline_end_every_seat_alike(
    game: str, options: JSONObject, convict: int
) -> None:
    attack = RaceTheClaimDeadline(convict, "lock")
    table = run_table(game, 3, options, 0, {2: attack})
    assert attack.sent and table.applied > 0
    assert table.invariants() == [], table.report()


# --- 3: a fault of no kind too big to be quoted ------------------------------------------------------


class OversizedJunk(Strategy):
    """At its first decision, sends `convict` alone a signed message of a kind the protocol has not
    (`inbox._check_kind`: its signer's fault, P-1.3, provable anywhere), padded to just under the message
    limit (`MAX_MESSAGE_BYTES`) and so past what a blame may quote (`MAX_OWN_EVIDENCE_BYTES`): the blame
    names it by reference only (`_round.fitting_evidence`). `stop_first`: every honest seat is first
    stopped by a bare `stop` of this seat (nobody convicted), and the junk goes to one stopped seat."""

    name = "oversized-junk"

    def __init__(self, convict: int, stop_first: bool) -> None:
        self.convict = convict
        self.stop_first = stop_first
        self.done = False

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in QUIET or self.done else (KEEP,)  # nothing after: its chain ends at the junk

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.done or msg.kind not in ("move", "commit"):
            return
        self.done = True
        ctx.applied += 1
        if self.stop_first:
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
        pad = MAX_MESSAGE_BYTES - 1200
        assert pad > MAX_OWN_EVIDENCE_BYTES
        ctx.publish("junk", {"x": "a" * pad}, to=[self.convict], delay=1.0 if self.stop_first else 0.0)


# BROKE (I2): a signed message of no kind is refused before it is chained or forwarded (`inbox._check_kind`,
# I6), so only the seat it was sent to ever holds it, and unknown kinds have no size cap of their own
# (`SMALL_KINDS` lists the protocol's kinds only: 64 KiB). At 255 KiB the junk fits a message
# (`MAX_MESSAGE_BYTES`, 256 KiB) but not a blame's evidence (`MAX_OWN_EVIDENCE_BYTES`, 248 KiB): seat
# `convict`'s blame names it by reference; the other seat does not hold it and never will
# (`blame._reference_pending`: waited for), so it waits and stops twice the limit later (live,
# `_judge_pending_blames`), or, already stopped, refuses the blame (`_judge_late_blame`). One seat
# Blamed(cheater, P-1.3), the other Stopped: the "signed message of no kind" that is to turn a stop into
# the conviction (`_state`) never reaches the stopped seat.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam9.py -k oversized
@pytest.mark.xfail(strict=True, reason="red team 9 #3: a fault of no kind too big to quote convicts at one seat")
@pytest.mark.parametrize("stop_first", [False, True])
@pytest.mark.parametrize("convict", [0, 1])
def test_an_oversized_fault_of_no_kind_ends_every_seat_alike(convict: int, stop_first: bool) -> None:
    table = run_table("take6", 3, {}, 0, {2: OversizedJunk(convict, stop_first)})
    assert table.applied > 0
    assert table.invariants() == [], table.report()


# --- 4: a stopped seat forgets why a seat was excused from a one-of step -----------------------------


class OneOfAfterTheStop(Strategy):
    """Sixes, three seats. `junk_at` seconds into play this seat sends `framed` (honest) the oversized
    junk of #3: `framed` convicts it and ends, and its blame (a reference only) waits at the other honest
    seat, the `witness` (`pending_blames`), where it excuses `framed` from the opening (X-2.2: the holder
    of O6 opens, a one-of step) as a seat that may be stuck itself (`clocks._owes_one_of`). This seat
    never opens (its moves stay home) and echoes the witness's one-of claim (`"seat": null`, 80 s into
    play) at once, so every seat but `framed` has claimed the opening. The witness stops with nobody
    convicted: `stop`, by a bare `stop` of this seat 58 s after the claims (the blame, 30 s into play, has
    not waited twice the limit yet); otherwise by itself, twice the limit after the blame came (19 s into
    play: 139 s, `_judge_pending_blames`). Either way the claims have stood for the limit (60 s) within
    the runner's `VERDICT_WAIT` (3 s) after the stop. Its own session sees no stop or blame, so it plays
    on and the table is still ticked."""

    name = "one-of-after-the-stop"

    def __init__(self, framed: int, stop: bool) -> None:
        self.framed = framed
        self.stop = stop
        self.junk_at = 30.0 if stop else 19.0
        self.play_from: float | None = None
        self.junked = False
        self.claim_at: float | None = None
        self.stopped = False

    def witness(self, ctx: AttackContext) -> int:
        return next(s for s in ctx.honest() if s != self.framed)

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in QUIET or msg.kind == "move" else (KEEP,)

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if self.play_from is None and ctx.session.stage == "play":
            self.play_from = now
        if not self.junked and self.play_from is not None and now >= self.play_from + self.junk_at:
            self.junked = True
            ctx.applied += 1
            ctx.publish("junk", {"x": "a" * (MAX_MESSAGE_BYTES - 1200)}, to=[self.framed])
        if self.stop and self.claim_at is not None and not self.stopped and now > self.claim_at + 58:
            self.stopped = True
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []}, to=[self.witness(ctx)])

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        one_of = msg.kind == "timeout" and msg.body.get("seat") is None
        if one_of and self.claim_at is None and msg.author == ctx.settings.seats[self.witness(ctx)].peer_id:
            self.claim_at = ctx.now
            ctx.applied += 1
            ctx.publish("timeout", dict(msg.body), to=[self.witness(ctx)])
        return msg.kind not in ("stop", "blame")


# BROKE (I1): a live seat does not convict a seat that has a blame standing on a one-of claim
# (`clocks._owes_one_of`: `seat in self.pending_blames`, it may be stuck itself), but a stopped seat
# forgets the blame: `_judge_pending_blames` deletes it as it stops, and a waiting blame read again in
# stopped (`stop`) is popped by `inbox._handle` before `_judge_late_blame` refuses it. The conviction loop of
# `_judge_claims` goes on in stopped (`clocks._tick`), so once the one-of claims have stood for the limit
# (60 s, here 1 to 2 s after the stop), the one seat that did not claim is convicted: `framed`, which is
# honest and ended long before (it convicted the cheater on the junk). Seat `framed`: Blamed(2, P-1.3);
# the witness: Blamed(framed, P-5.3). Before 04e102d the stop was final and nobody honest was blamed.
# (The blame waits at the witness because of #3; any blame that waits there past the limit does the same.)
# Repro: .venv/bin/pytest -n 0 tests/test_redteam9.py -k one_of_after_the_stop
@pytest.mark.xfail(strict=True, reason="red team 9 #4: a stopped seat convicts an honest seat on one-of claims")
@pytest.mark.parametrize("stop", [True, False])
@pytest.mark.parametrize("framed", [0, 1])
def test_a_stopped_seat_convicts_nobody_honest_on_one_of_claims(framed: int, stop: bool) -> None:
    attack = OneOfAfterTheStop(framed, stop)
    table = run_table("sixes", 3, {"chips": 1}, 0, {2: attack})
    assert attack.claim_at is not None and table.applied > 0, table.report()
    assert table.invariants() == [], table.report()
    assert all(b.seat == 2 for s in (0, 1) for b in table.harness.blames(s)), table.report()
