"""Red team 3: attacks on what main changed after the last red team (issue 9).

Targets: a held move or commit putting only its mover on the step limit and the claim naming it
(`clocks._tick`, `play._holds_step_message`, 1c4903b); the accused judging claims against it by its
own clock (`clocks._owed_past_limit`, finding J's fix); the evidence an audit blame carries
(`audit._audited_messages`, 24ec3b6, b857096) and how other seats read a blame's evidence
(`blame._evidence_verdict`); the lobby's protocol-version check (293e60d).

Each test is an attack by a modified client at one or two seats, the real `TableSession` everywhere
else, checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats
agree, I3 nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an
invariant was a strict xfail until it was fixed: the comment above it says what broke, where, and the seat
wrongly blamed, and the fix. An attack the code withstands is a plain
test that asserts the invariants on a table where the attack fired (`applied > 0`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from test_redteam_equiv import STEP, SlowHuman, run_table

import protocol.signed as signed_module
from lanplay.mesh import MAX_PAYLOAD, Mesh, MeshError
from protocol.errors import ProtocolError
from protocol.identity import PublicIdentity
from protocol.signed import MAX_MESSAGE_BYTES, SignedMessage, sign_message
from protocol.table._state import MAX_ROUND_MESSAGES
from protocol.testing import (
    KEEP,
    TICK,
    AttackContext,
    Emit,
    EquivocateValidMove,
    Faults,
    Harness,
    Strategy,
    shadow_messages,
    table_id,
    waiting_blames,
)
from protocol.testing import test_identity as identity_for


class Deliberate(SlowHuman):
    """An honest person who takes 45 s over each decision: inside the 60 s turn limit of these tables
    by their own clock, with 15 s to spare."""

    THINK = 45.0


# --- 1: the step reaches the victim late by a private message; a human within its limit is convicted -------


class DelayKeysThenClaim(Strategy):
    """This seat sends its hand keys (`p.keys`, private, so no other seat gossips them) to the victim
    just under the step limit late: the victim, waiting for them, never claims (its clock for that
    automatic step does not run out). Every other seat is dealt at once and starts the victim's clock
    for its first decision (6th Sense predictions, 6 nimmt! card choices: due as soon as a seat is
    dealt) about 19 s before the victim's own clock starts. When an honest seat claims the victim, this
    seat claims it too, for the same step: every other seat's claim is in."""

    name = "delay-keys-then-claim"

    def __init__(self, victim: int, lag: float = STEP - 1.0) -> None:
        self.victim = victim
        self.lag = lag
        self.claimed = False

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == self.victim:
            ctx.applied += 1
            return (Emit(delay=self.lag),)
        return (KEEP,)

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        if msg.kind == "timeout" and msg.body.get("seat") == self.victim and not self.claimed:
            self.claimed = True
            ctx.applied += 1
            ctx.publish("timeout", {"seat": self.victim, "step": msg.body.get("step"), "what": "a step"})
        return True


DELAYED_DEAL = [
    pytest.param(game, players, id=f"{game}-{players}")
    for game, players in (("sixth-sense", 3), ("take6", 3), ("sixth-sense", 4), ("take6", 4))
]


# Fixed: other seats allow a person the step limit on top of the turn limit (`clocks._others_turn_limit`).
# BROKE, FIXED (I1, I2): the victim, seat 0, is honest: by its own clock it decides after 45 s of a 60 s turn limit.
# Seat 2 (last seat) delays its private hand keys to seat 0 by 19 s (under the step limit, so seat 0 never
# claims it). Every other honest seat was dealt 19 s earlier, so its clock for seat 0's first decision runs
# out at 60 s while seat 0's own says 41 s: it claims, seat 2 claims too, and `clocks._judge_claims` convicts
# seat 0 (P-5.3) there. Seat 0 gets both claims while its own clock is under the limit
# (`_owed_past_limit` -> None: it waits), then decides at 45 s; the step it owed is done, so
# `_owed_past_limit` -> False and it stops ("a step it does not owe"). Honest seats 1 (and 2 of 4): Blamed
# seat 0; seat 0: Stopped. The same limit measured from two different starts, where only one start is
# public. Needs a table with `turn_timeout` (the harness's run_adversarial sets 60 s; lanplay's runner None).
# Repro: .venv/bin/pytest tests/test_redteam3.py -k delayed_deal
@pytest.mark.parametrize(("game", "players"), DELAYED_DEAL)
def test_a_delayed_deal_does_not_convict_a_human_within_its_turn_limit(game: str, players: int) -> None:
    table = run_table(game, players, {}, 0, {players - 1: DelayKeysThenClaim(victim=0)}, factories={0: Deliberate})
    assert table.applied > 0
    assert not any(v.invariant in ("I1", "I2") for v in table.violations), table.report()


@pytest.mark.parametrize("game", ["sixth-sense", "take6"])
def test_the_deliberate_human_alone_is_not_claimed(game: str) -> None:
    """The control for the test above: the same human, the same limits, nobody delaying its keys."""
    table = run_table(game, 3, {}, 0, {2: Strategy()}, factories={0: Deliberate})
    assert not any(v.invariant in ("I1", "I2") for v in table.violations), table.report()
    assert not any(table.harness.blames(s) for s in range(3)), table.report()


# --- 2: a pending blame's evidence is checked again on every input --------------------------------------


class HeavyPendingBlame(Strategy):
    """A blame of the next honest seat whose evidence fills a message (256 KiB): one `secrets` item of
    the current round, which `blame._audit_pending` holds for this seat's own audit (up to twice the
    limit), and hundreds of copies of the victim's smallest signed message. `_on_blame` returns
    False while it is pending, so every later `_pump` runs `_evidence_verdict` over all of it again:
    two signature checks per copy. What triggers a pump costs the sender nothing: a duplicate of one
    of its messages respelt (decode accepts whitespace), so lanplay's byte-level dedup misses it."""

    name = "heavy-pending-blame"

    def __init__(self) -> None:
        self.blame: SignedMessage | None = None

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.blame is not None or msg.kind not in ("move", "commit"):
            return
        ctx.applied += 1
        victim = ctx.victim()
        victim_id = ctx.settings.seats[victim].peer_id
        table, rnd = ctx.settings.table, ctx.session.round_index
        pending = sign_message(ctx.identity, table, rnd, 999, "00" * 32, "secrets", {"secrets": {}, "openings": {}})
        theirs = [m.to_json() for m in ctx.received if m.author == victim_id and not m.kind.startswith("p.")]
        smallest = min(theirs, key=lambda m: len(json.dumps(m)))
        copies = 240_000 // len(json.dumps(smallest))
        body = {"seat": victim, "rule": "P-5.2", "message": "x", "evidence": [pending.to_json(), *[smallest] * copies]}
        self.blame = ctx.publish("blame", body)[0]


def _respelt(msg: SignedMessage) -> bytes:
    """The same signed message in other bytes (pretty-printed JSON): a duplicate to the session, new bytes
    to any byte-level dedup."""
    return json.dumps(json.loads(msg.to_wire()), indent=1).encode()


# Fixed: a copy of a chained message is not checked again (`ChainTracker.holds`).
# BROKE, FIXED (I6, CPU; and I4 in wall time): honest seat 1 holds seat 2's blame pending (its evidence rests on a
# `secrets` message, `blame._audit_pending`); every input that reaches `_pump` — here a respelt duplicate of a
# message seat 2 already sent, which costs seat 2 nothing and is not counted against any cap — re-runs
# `_evidence_verdict` over the whole evidence: about 1,000 Ed25519 checks (0.2 s of CPU here) per 1 KB
# duplicate, for up to twice the limit. Nobody is blamed; an honest laptop is pinned while it lasts.
# Repro: .venv/bin/pytest tests/test_redteam3.py -k pending_blame
def test_a_pending_blame_is_not_checked_again_on_every_duplicate(monkeypatch: pytest.MonkeyPatch) -> None:
    attack = HeavyPendingBlame()
    h = Harness("sixth-sense", 3, {}, seed=3, step_timeout=STEP, turn_timeout=3 * STEP, adversaries={2: attack},
                catch=True, faults=Faults(gossip_delay=0.05))
    h.run(until=lambda x: bool(waiting_blames(x.sessions[1])), max_deliveries=60_000, tick_every=TICK, max_time=100)
    assert attack.blame is not None and 2 in waiting_blames(h.sessions[1])
    checks = [0]
    verify = signed_module.SignedMessage.verify

    def counting(self: SignedMessage, public_key: PublicIdentity) -> None:
        checks[0] += 1
        verify(self, public_key)

    monkeypatch.setattr(signed_module.SignedMessage, "verify", counting)
    first = next(m for m in h.attackers[2].sent if m.kind == "seed.commit")
    for _ in range(10):
        h.sessions[1].receive(2, _respelt(first), h.now)
    assert h.sessions[1].stage != "ended"  # still pending: the duplicates changed nothing
    assert checks[0] / 10 <= 50, f"{checks[0] / 10:.0f} signature checks per duplicate"


# --- 3: a peer's near-limit message inside an honest seat's stop makes that stop too big to send ----------


class PaddedClaim(Strategy):
    """A timeout claim against the next honest seat for a step nobody owes, padded with a field nobody
    reads (`_on_timeout` reads `seat` and `step`) to just under the size a peer reads (256 KiB). Every
    honest seat holds it for twice the limit, then stops (`clocks._judge_claims`) with the claim as its
    evidence: a `stop` message larger than any peer reads."""

    name = "padded-claim"

    def __init__(self) -> None:
        self.done = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.done or msg.kind not in ("move", "commit"):
            return
        self.done = True
        ctx.applied += 1
        body: dict[str, object] = {"seat": ctx.victim(), "step": "0/seed/0/nothing owed", "what": "x", "pad": ""}
        probe = sign_message(ctx.identity, ctx.settings.table, 0, 0, "0" * 64, "timeout", body)
        body["pad"] = "a" * (MAX_PAYLOAD - 256 - len(probe.to_wire()))
        ctx.publish("timeout", body)


# Fixed: claims have exactly their fields, small kinds are capped, own blames and stops quote only the
# evidence that fits (`_round.fitting_evidence`), and the runner logs a message the mesh refuses.
# BROKE, FIXED (I3 at the runner; I2's "showing both signed claims"): seat 2 publishes a padded timeout claim (about
# 262,000 bytes, readable: under 256 KiB). After twice the limit honest seats 0 and 1 each stop from
# `_tick` (`clocks._judge_claims` -> `_stop`) and sign a `stop` of 262,413 bytes, its evidence the whole claim.
# No peer reads it (`SignedMessage.from_wire` caps at MAX_MESSAGE_BYTES), and in lanplay `Mesh.broadcast`
# raises MeshError (`_check_payload`) out of `TableRunner._tick`, hence out of `TableRunner.run()`: the
# command dies with a traceback before `_finish` writes "done"; on the next start `resume_table` replays the
# journal, `_restore` returns the same oversized stop among the messages to resend, and `run()` raises again
# (only ResumeFailed is caught), so every command that resumes first fails until the journal is deleted by
# hand (finding 5's shape). The same holds for `_judge_pending_blames` (a padded pending blame) and for a
# blame whose evidence is a near-limit message of the accused, or an audit blame carrying the accused's padded
# moves (`audit._audited_messages`): readable inputs in, an unsendable message out. Nobody is wrongly blamed.
# Repro: .venv/bin/pytest tests/test_redteam3.py -k too_big
def test_an_honest_seat_never_signs_a_message_too_big_for_its_peers() -> None:
    h = Harness("sixth-sense", 3, {}, seed=3, step_timeout=STEP, turn_timeout=3 * STEP, adversaries={2: PaddedClaim()},
                catch=True, faults=Faults(gossip_delay=0.05), record_deliveries=True)
    h.run(max_deliveries=60_000, tick_every=TICK, max_time=400, max_idle_ticks=800)
    assert h.attackers[2].applied > 0
    assert [s.stage for s in h.sessions[:2]] == ["ended", "ended"]  # they stopped, convicting nobody
    assert h.log is not None
    too_big = [(d.sender, len(d.data)) for d in h.log if d.sender != 2 and len(d.data) > MAX_MESSAGE_BYTES]
    assert not too_big, f"honest seats signed messages no peer reads: {too_big[:4]}"


def test_lanplay_cannot_send_a_message_over_the_limit() -> None:
    """What the test above costs in lanplay: the mesh refuses to queue such a message, by raising."""
    identity = identity_for(3, 0)
    mesh = Mesh(identity, table_id(3), [identity_for(3, 1).peer_id], lambda *_: None, lambda *_: None)
    with pytest.raises(MeshError):
        mesh.broadcast(b"x" * (MAX_MESSAGE_BYTES + 300))


# --- 4: one honest seat made to refuse a message the others accept; the others' clocks frame it -----------


class CapThenClaim(Strategy):
    """Before its first `kind` message this seat sends the victim alone messages far ahead in its chain:
    17 of 240 KB fill the victim's held-message cap (4 MiB), then tiny ones, each counted against this
    seat's per-round quota (`inbox._hold` counts before it checks the held cap) and refused, until the
    count cap (2000) is reached. The victim then refuses the real message (`inbox._count` raises after
    `ChainTracker.accept` took it, so no later copy is ever handled either); every other seat accepts it.
    They move on to an automatic step the victim owes (6 nimmt!'s reveal) and claim it; this seat claims
    it too."""

    name = "cap-then-claim"

    def __init__(self, victim: int, kind: str = "commit") -> None:
        self.victim = victim
        self.kind = kind
        self.flooded = False
        self.claimed = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.flooded or msg.kind != self.kind:
            return
        self.flooded = True
        ctx.applied += 1
        view = ctx._view(ctx.settings.table, self.victim)
        for i in range(MAX_ROUND_MESSAGES):
            body = {"step": 0, "fill": "ef" * 120_000 if i < 17 else ""}
            seq = view.seq + 1000 + i  # far past the gap: held, or refused over the held cap, but counted
            junk = sign_message(ctx.identity, ctx.settings.table, msg.round, seq, view.head, "move", body)
            ctx.raw(self.victim, junk.to_wire())

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        if msg.kind == "timeout" and msg.body.get("seat") == self.victim and not self.claimed:
            self.claimed = True
            ctx.applied += 1
            ctx.publish("timeout", {"seat": self.victim, "step": msg.body.get("step"), "what": "a step"})
        return True


# Fixed: only messages taken into the chain in order are charged, checked before chaining (`inbox._charge`).
# BROKE, FIXED (I1, I2, I4): seat 2 exhausts its own per-round quota at honest seat 0 only (messages that seat 0
# refuses still count, `inbox._hold`), then commits its 6 nimmt! card: seat 0 refuses the commit (`_count`
# raises after `tracker.accept`, so gossip copies are duplicates and it is lost there for good), seat 1
# accepts it, reveals, and waits for seat 0's reveal (automatic, 20 s). Seat 1 claims seat 0, seat 2 claims
# it too: seat 1 convicts honest seat 0 (P-5.3, "reveal the chosen card"). Seat 0 never reads those claims:
# seat 1's `timeout` and `blame` are queued behind seat 1's reveal, which waits for the commit seat 0 lost
# (meta kinds go in chain order). With a turn limit seat 0 claims seat 2 at 60 s and stops at 120 s; with
# none (lanplay's runner) it waits for seat 2 forever (I4). Seat wrongly blamed: 0, at seat 1.
# Repro: .venv/bin/pytest tests/test_redteam3.py -k refused_at_one_seat
@pytest.mark.parametrize("turn", [3 * STEP, None])
def test_a_message_refused_at_one_seat_only_does_not_convict_it(turn: float | None) -> None:
    table = run_table("take6", 3, {}, 0, {2: CapThenClaim(victim=0)}, turn_timeout=turn)
    assert table.applied > 0
    assert not any(v.invariant in ("I1", "I2", "I4") for v in table.violations), table.report()


# --- Attacks the code withstands (each asserts the invariants on a table where it fired) ------------------


class EquivocateAheadOfGap(EquivocateValidMove):
    """Two valid moves for one step, one per half of the table, each arriving before the message that
    precedes it in this seat's chain (every other message of this seat comes 1 s late): each honest seat
    holds its version out of order, and `inbox._hold` keeps the first version held at a seq and drops any
    other silently, so the gossiped other version can meet a held one and vanish. It does not hide the
    fork: a seat forwards its version only once it has accepted it, and then the other version, coming
    later, meets an accepted one (`ChainTracker.accept`: EquivocationDetected)."""

    name = "equivocate-ahead-of-gap"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        alt = ctx.shared.get("_alt_move")
        if msg.kind == "move" and alt is not None and msg.body.get("step") == alt[0]:
            return super().outgoing(ctx, to, msg, occurrence)
        return (Emit(delay=1.0),)


@pytest.mark.parametrize(("game", "players", "options"), [("sixth-sense", 3, {}), ("sixes", 5, {"chips": 1})])
@pytest.mark.parametrize("first", [True, False])
def test_a_fork_sent_ahead_of_its_gap_still_convicts_the_equivocator(
    game: str, players: int, options: dict[str, object], first: bool
) -> None:
    seat = 0 if first else players - 1
    table = run_table(game, players, options, 1, {seat: EquivocateAheadOfGap()})
    assert table.applied > 0
    assert not table.violations, table.report()
    assert all((b := table.harness.blames(s)) and b[0].seat == seat for s in range(players) if s != seat)


class ForgedForkBlame(Strategy):
    """A blame of the next honest seat whose evidence is everything a seat could gather against it: an
    "equivocation" made of its real message here and its message at the same seq of an earlier table of
    the same players (a real signature, both), its messages of that table, and another honest seat's
    messages of this table. Nothing of it proves anything here (`verify_equivocation` wants one table;
    `_evidence_verdict` skips other tables and other authors), so every honest seat stops, convicting nobody."""

    name = "forged-fork-blame"

    def __init__(self) -> None:
        self.done = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.done or msg.kind not in ("move", "commit"):
            return
        victim = ctx.victim()
        victim_id = ctx.settings.seats[victim].peer_id
        here = [m for m in ctx.received if m.author == victim_id and not m.kind.startswith("p.")]
        earlier = [m for d in shadow_messages(ctx) if (m := _decoded(d.data)) is not None and m.author == victim_id]
        pairs = [(a, b) for a in here for b in earlier if a.seq == b.seq and not b.kind.startswith("p.")]
        if not pairs:
            return
        self.done = True
        ctx.applied += 1
        third = [m.to_json() for m in ctx.received if m.author not in (victim_id, ctx.identity.peer_id)][:10]
        fork = {"first": pairs[0][0].to_json(), "second": pairs[0][1].to_json()}
        evidence = [fork, *(m.to_json() for m in earlier[:10]), *third]
        ctx.publish("blame", {"seat": victim, "rule": "P-1.3", "message": "two versions", "evidence": evidence})


def _decoded(data: bytes) -> SignedMessage | None:
    try:
        return SignedMessage.from_wire(data)
    except ProtocolError:
        return None


@pytest.mark.parametrize(("game", "players"), [("sixth-sense", 3), ("take6", 4)])
def test_a_fork_made_of_two_tables_convicts_nobody(game: str, players: int) -> None:
    table = run_table(game, players, {}, 2, {1: ForgedForkBlame()})
    assert table.applied > 0
    assert not table.violations, table.report()
    assert not any(b.seat != 1 for s in range(players) if s != 1 for b in table.harness.blames(s)), table.report()


# --- 5: the per-round quota's own bookkeeping grows without bound -------------------------------------------


# Fixed: held messages are not charged, and a message more than a round ahead is refused (`inbox._check_round`).
# BROKE, FIXED (I6): `inbox._count` keys its per-author usage by the round a message names, and `inbox._hold` counts
# a message before it checks the held cap. Once seat 2's held messages fill their cap (17 of 240 KB), every
# further message of seat 2 signed for another round number and far ahead in its chain is refused, yet leaves
# a `usage[(2, round)]` entry behind: one entry per message, for ever (3,000 messages: 3,000 entries; a
# peer sending for an evening grows the honest seat's heap without limit). Nobody is blamed.
# Repro: .venv/bin/pytest tests/test_redteam3.py -k quota_bookkeeping
def test_refused_messages_leave_no_quota_bookkeeping_behind() -> None:
    h = Harness("sixes", 3, {"chips": 1}, seed=4)
    h.run(until=lambda x: all(s.stage == "play" for s in x.sessions), max_deliveries=100_000)
    session, cheater = h.sessions[0], h.identities[2]
    head, seq = session.tracker.head(cheater.peer_id), session.tracker.next_seq(cheater.peer_id)
    for i in range(17):  # the held cap (4 MiB) filled, as any reordering peer may
        junk = sign_message(cheater, h.settings.table, 0, seq + 10 + i, head, "move", {"fill": "ab" * 120_000})
        session.receive(2, junk.to_wire(), h.now)
    for i in range(3000):
        junk = sign_message(cheater, h.settings.table, 1000 + i, seq + 5000 + i, head, "move", {})
        session.receive(2, junk.to_wire(), h.now)
    assert session.stage == "play"  # nothing was blamed or stopped
    assert len(session.usage) <= 100, f"{len(session.usage)} quota entries kept for refused messages"
