"""Red team 6: attacks on fix5's b1c74d6 (issue 9).

Targets: every kind but blame and stop capped at MAX_SMALL_BYTES (`_state.SMALL_KINDS`); evidence named
by reference (`_round.fitting_evidence`, `blame._reference_pending`); `_round.NotYet` making a blame wait;
each private item decided once (`blame._private_item_fault`); private messages ignored in audit and over
(`inbox._handle_private`); an over session reading on to the verdicts and claims (`inbox._pump`,
`_handle`, `clocks._judge_claims`); the quota charged to the chain's latest round (`inbox._quota_round`).

Each test is an attack by a modified client at one seat, the real `TableSession` everywhere else,
checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats agree, I3
nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an invariant is a
strict xfail, the comment "BROKE" above it saying what breaks and where in the code; an attack the code
withstands is a plain test that asserts the invariants on a table where the attack fired (`applied > 0`).

The common thread of the I2 breaks (1, 3, 6): one honest seat convicts at once on something it handled
itself, and the blame reaches a seat that cannot reach the same point: behind its own timeout claim (1),
already over, where a non-meta fault is ignored and the blame quoting it proves nothing (3), or never
given the evidence, because a proof of two blames or stops is too big to quote and has no reference (6).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest
from test_redteam5 import HeavyPrivatePendingBlame, Journaled, PastRoundAborts, _respelt, state_of
from test_redteam_equiv import STEP, run_table

import protocol.signed as signed_module
from engine.api import JSONObject
from protocol.encoding import canonical
from protocol.identity import PublicIdentity
from protocol.signed import SignedMessage, sign_message
from protocol.table import TableSession
from protocol.table._state import MAX_OWN_EVIDENCE_BYTES
from protocol.testing import KEEP, TICK, AttackContext, Emit, Faults, Harness, Strategy, settled, waiting_blames

# --- 1: a fault at the step limit, behind the claim of the seat that got it late -------------------


class FaultAfterTheClaim(Strategy):
    """This seat sends the victim its hand keys (private: nobody passes them on) `gap` seconds after
    the bystander's, so the victim's hand, and the first choice of the round, come `gap` seconds later
    there. Its own first choice is a commitment that is not one (a digest of the wrong shape: a fault of
    its own signed message, blamed on it by every seat that handles it) and reaches the bystander only
    after the bystander's clock for that choice ran out (it claims the step, P-5.3), and the victim just
    after that, still within the victim's own limit: the victim convicts at once."""

    name = "fault-after-the-claim"

    def __init__(self, victim: int, bystander: int, gap: float = 1.0) -> None:
        self.victim = victim
        self.bystander = bystander
        self.gap = gap

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == self.victim:
            return (Emit(delay=self.gap),)
        if msg.kind != "commit" or occurrence != 0:
            return (KEEP,)
        ctx.applied += 1
        # dealt now here and at the bystander, which claims at its first tick past the limit for another
        # seat's decision (`clocks._tick`, `_others_turn_limit`: strictly past)
        limit = (ctx.settings.turn_timeout or 0.0) + ctx.settings.step_timeout
        claim_tick = (int((ctx.now + limit) / TICK) + 1) * TICK
        at = claim_tick + 0.1 if to == self.victim else claim_tick + 0.5
        return (Emit(body={**msg.body, "digest": "zz"}, delay=at - ctx.now),)


# BROKE (I2): a seat that has claimed a timeout takes no further step (`inbox._handle`: `my_claim is not
# None` -> False, before any non-meta kind), and a blame waits at a seat until it has handled the accused's
# quoted message in its chain (`blame._evidence_verdict`: `handled[accused] <= signed.seq` -> pending). Seat 2
# sends seat 0 its hand keys a second late (private, not gossiped), so seat 0's clock for the first choice
# starts a second after seat 1's. Seat 2's commitment (digest "zz") reaches seat 0 at seat 1's claim tick +
# 0.1 s: seat 1 has just claimed seat 2 (P-5.3), seat 0 is within its limit and blames seat 2 (P-2.1,
# malformed) at once, quoting the commitment. At seat 1 the commitment is chained (from the blame's evidence,
# then by gossip) but never handled: it is behind seat 1's own claim, which only seat 0's claim could settle,
# and seat 0 has ended. Seat 0's blame stays pending at seat 1 until `_judge_claims` stops it after twice the
# limit ("the other seats do not: the table could not agree"). Seat 0: Blamed(2, P-2.1); seat 1: Stopped.
# (Without the fault, finding 8's timing ends in a stop at both.) Any fault of the accused's that lies in its
# chain past a step one honest seat claimed, and that another honest seat handled, does it.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam6.py -k after_the_claim
# Fixed: a seat that has claimed a timeout still handles the other seats' messages in their chains (it only
# makes no move of its own, `decision`), so it reaches the fault and convicts as the seat that got it in time.
@pytest.mark.parametrize("game", ["sixth-sense", "take6"])
def test_a_fault_just_past_one_seats_limit_convicts_everywhere(game: str) -> None:
    table = run_table(game, 3, {}, 0, {2: FaultAfterTheClaim(victim=0, bystander=1)})
    assert table.applied > 0
    assert table.invariants() == [], table.report()


# --- 2: a pending blame's public items that are not in the chain are verified on every input ---------


class HeavyForgedPendingBlame(Strategy):
    """A blame of the victim whose evidence is one `secrets` item of the current round (held for this
    seat's own audit by `blame._audit_pending`, unsigned and unchecked) and as many copies as fit in a
    message of a public `move` that names the victim as author, at a seq its chain never reaches, with
    a signature of junk. `ChainTracker.holds` spares re-checking copies of chained messages only, and
    `blame._private_item_fault` decides private items once: these are neither."""

    name = "heavy-forged-pending-blame"

    def __init__(self) -> None:
        self.blame: SignedMessage | None = None

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.blame is not None or msg.kind not in ("move", "commit"):
            return
        ctx.applied += 1
        victim = ctx.victim()
        table, rnd = ctx.settings.table, ctx.session.round_index
        pending = sign_message(ctx.identity, table, rnd, 999, "00" * 32, "secrets", {"secrets": {}, "openings": {}})
        forged = {
            **sign_message(ctx.identity, table, rnd, 1 << 30, "00" * 32, "move", {"step": 0}).to_json(),
            "author": ctx.settings.seats[victim].peer_id,
        }
        copies = (MAX_OWN_EVIDENCE_BYTES - 4096) // len(canonical(forged))
        body = {"seat": victim, "rule": "P-5.1", "message": "x", "evidence": [pending.to_json(), *[forged] * copies]}
        self.blame = ctx.publish("blame", body)[0]


# BROKE (I6, CPU): red team 5's pending-blame attack (fixed for private items by `blame._private_item_fault`,
# for copies of chained messages by `ChainTracker.holds`) is open through public items that are in no chain.
# Seat 2 blames seat 0 with a `secrets` item of the current round (`blame._audit_pending`: pending until seat
# 1's own audit, or twice the limit) and ~640 copies of a `move` "by seat 0" at seq 2^30 with a junk
# signature. `_on_blame` returns None while pending, so every `_pump` at seat 1 runs `_evidence_verdict`
# over the whole evidence again, and each copy, not held (`tracker.holds`), is `signed.verify`-ed (and
# fails: `ProtocolError`, skipped, never remembered): 640 Ed25519 checks, ~0.2 s of CPU, per 0.5 KB duplicate
# (respelt: lanplay's byte-level dedup misses it; no cap counts it). Nobody is blamed; the laptop is pinned.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam6.py -k forged_public_items
# Fixed: a blame's evidence item whose signature failed is remembered by digest and signature
# (`blame._remember`, `item_verdicts`) and not verified again.
def test_a_pending_blames_forged_public_items_are_not_verified_on_every_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attack = HeavyForgedPendingBlame()
    h = Harness(
        "sixth-sense", 3, {}, seed=3, step_timeout=STEP, turn_timeout=3 * STEP, adversaries={2: attack},
        catch=True, faults=Faults(gossip_delay=0.05),
    )  # fmt: skip
    h.run(until=lambda x: bool(waiting_blames(x.sessions[1])), max_deliveries=60_000, tick_every=TICK, max_time=100)
    assert attack.blame is not None and 2 in waiting_blames(h.sessions[1])
    checks = [0]
    verify = signed_module.SignedMessage.verify

    def counting_verify(self: SignedMessage, public_key: PublicIdentity) -> None:
        checks[0] += 1
        verify(self, public_key)

    monkeypatch.setattr(signed_module.SignedMessage, "verify", counting_verify)
    first = next(m for m in h.attackers[2].sent if m.kind == "seed.commit")
    for _ in range(10):
        h.sessions[1].receive(2, _respelt(first), h.now)
    assert h.sessions[1].stage != "ended"  # still pending: the duplicates changed nothing
    assert checks[0] / 10 <= 50, f"{checks[0] / 10} signature checks per duplicate"


# --- 3: a fault behind the last secrets, read in the audit at one seat and after the game at another --


class SecondSecretsToTheFirst(Strategy):
    """When another seat's move ends the round, this seat (seat 0, so it hears that move before the
    seat after it) publishes its secrets at once and, next in its chain, a second set of secrets: a
    fault of its own signed message (P-5.2). Both reach the seat that ended the round at once, every
    other seat a second later (the first seat's gossip brings them after 50 ms)."""

    name = "second-secrets-to-the-first"

    def __init__(self) -> None:
        self.first: int | None = None

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != "secrets" or occurrence != 0:
            return (KEEP,)
        if self.first is None:
            moves = [m for m in ctx.received if m.kind in ("move", "reveal") and m.round == msg.round]
            if not moves or moves[-1].author == ctx.identity.peer_id:
                return (KEEP,)
            self.first = ctx.harness.identities.index(
                next(i for i in ctx.harness.identities if i.peer_id == moves[-1].author)
            )
            ctx.applied += 1
        delay = 0.0 if to == self.first else 1.0
        return (Emit(delay=delay), Emit(delay=delay))


# BROKE (I2): in the game's last round, a seat in the audit handles a non-meta fault, and a seat already over
# ignores it (`inbox._handle`: "after the game's last audit: ignored") and refuses the blame that quotes it
# (`blame._judge_late_blame`: not an equivocation, so "proves nothing here"). Sixes with one chip: seat `f`'s
# move ends the round; seat 0 hears it first, enters the audit and sends its secrets and a second set of
# secrets to seat `f` at once. Seat `f` is in the audit with its own and seat 0's secrets, the bystander's not
# yet in: the second set is a P-5.2 fault (`audit._on_secrets`) and seat `f` blames seat 0, quoting it. The
# bystander gets the blame at once (pending: `_audit_pending`, its own audit lacks seat 0's secrets), then
# seat 0's secrets by gossip 50 ms later: its audit completes, it is over, and the pending blame, read again in
# over, proves nothing there (the second set is behind secrets it confirmed, and ignored). Seat `f`:
# Blamed(0, P-5.2); the bystander: GameOver. (Red team 5's fix let an over seat read on to meta kinds only.)
# Repro: .venv/bin/pytest -n 0 tests/test_redteam6.py -k second_set
# Fixed: an over session judges a message as a seat in a next round would (`inbox._handle`: stale,
# P-1.3), like the seat still in the last audit (which convicts on the second set, P-5.2).
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_second_set_of_last_secrets_convicts_everywhere(seed: int) -> None:
    table = run_table("sixes", 3, {"chips": 1}, seed, {0: SecondSecretsToTheFirst()})
    assert table.applied > 0
    assert table.invariants() == [], table.report()


# --- 4: a blame of an honest seat naming, by reference, a message it never signed -----------------------


class ForgedReferenceBlame(Strategy):
    """Before its first move this seat blames the victim with one piece of evidence: a reference
    (`_round.fitting_evidence`'s shape) to the victim's message at `seq` with a digest of junk, or at a
    seq the victim's chain never reaches. `blame._reference_pending` waits at every seat."""

    name = "forged-reference-blame"

    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.fired = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.fired or msg.kind not in ("move", "commit"):
            return
        self.fired = True
        ctx.applied += 1
        victim = ctx.victim()
        reference = {"table": ctx.settings.table, "author": ctx.settings.seats[victim].peer_id, "seq": self.seq}
        evidence = [{**reference, "digest": "ab" * 32}]
        ctx.publish("blame", {"seat": victim, "rule": "P-1.3", "message": "forked", "evidence": evidence})


# Withstood (I1, I2, I4): the reference matches nothing any seat holds, so the blame waits at every honest seat
# alike (`blame._reference_pending`), the blamer's chain behind it; the first seat whose wait runs out (twice
# the limit, `_judge_pending_blames`) stops and every other seat stops on its `stop`: nobody convicted, the
# table ends. 4 tables (a held seq with a wrong digest, a seq never reached; 6th Sense, 6 nimmt!).
@pytest.mark.parametrize("seq", [0, 1 << 20])
@pytest.mark.parametrize("game", ["sixth-sense", "take6"])
def test_a_forged_reference_stops_every_seat_alike(game: str, seq: int) -> None:
    table = run_table(game, 3, {}, 0, {2: ForgedReferenceBlame(seq)})
    assert table.applied > 0
    assert table.invariants() == [], table.report()
    for seat in (0, 1):
        assert table.harness.blames(seat) == [] and table.harness.sessions[seat].stopped is not None


# --- 5: resume: the chain rounds, the private verdicts and the over stage after a replay ---------------


def resumed_state(session: TableSession) -> dict[str, object]:
    """Red team 5's `state_of`, with what b1c74d6 added: the latest round charged per chain, the
    private items decided, and whether the game is over."""
    return {
        **state_of(session),
        "chain_rounds": sorted(session.chain_rounds.items()),
        "item_verdicts": sorted(session.item_verdicts.items()),
        "over": session.stage == "over",
    }


RESUMED = [
    pytest.param("take6", {}, lambda: PastRoundAborts(at=1, share=300_000), 2, id="past-round-aborts"),
    pytest.param("sixth-sense", {}, HeavyPrivatePendingBlame, 1, id="private-verdicts"),
    pytest.param("take6", {}, lambda: ForgedReferenceBlame(0), 1, id="forged-reference"),
    pytest.param("sixes", {"chips": 1}, SecondSecretsToTheFirst, 1, id="second-secrets"),
]


# Withstood (I3, I6 at resume): every honest seat's journal, as lanplay's runner keeps it (red team 5's
# `Journaled`), replayed into a fresh session gives the same quotas, chain rounds, private verdicts, holds,
# claims, pending blames, chains, verdict and stage as the live session. 4 tables, 2 honest seats each.
@pytest.mark.parametrize(("game", "options", "make", "rounds"), RESUMED)
def test_a_replayed_journal_rebuilds_what_b1c74d6_added(
    game: str, options: JSONObject, make: Callable[[], Strategy], rounds: int
) -> None:
    attacker = 0 if game == "sixes" else 2
    honest = [s for s in range(3) if s != attacker]
    factories = {s: Journaled for s in honest}
    table = run_table(game, 3, options, 0, {attacker: make()}, factories=factories, rounds=rounds)
    assert table.applied > 0
    for seat in honest:
        live = table.harness.sessions[seat]
        assert isinstance(live, Journaled)
        fresh = TableSession(table.harness.settings, table.harness.identities[seat], 0.0, random.Random(seat).randbytes)
        for call, args in live.journal:
            getattr(fresh, call)(*args)
        settled(fresh)  # as tests/test_redteam5.py: the settling tick is not journaled
        assert resumed_state(fresh) == resumed_state(live)


# --- 6: an equivocation of a blame, too big to be quoted ---------------------------------------------


class OversizedBlameEquivocation(Strategy):
    """Before its first move this seat blames the victim with evidence that waits at every seat (a
    `secrets` item of the current round: `blame._audit_pending`), padded to `size` bytes: blame and stop
    are the two kinds `_state.SMALL_KINDS` leaves out, up to what any peer reads. Every seat gets it; the
    victim alone gets, half a second later, a second version at the same seq and prev (other padding)."""

    name = "oversized-blame-equivocation"

    def __init__(self, size: int = 160_000) -> None:
        self.size = size
        self.fired = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.fired or msg.kind not in ("move", "commit"):
            return
        self.fired = True
        ctx.applied += 1
        victim = ctx.victim()
        table, rnd = ctx.settings.table, ctx.session.round_index
        anchor = sign_message(ctx.identity, table, rnd, 999, "00" * 32, "secrets", {"secrets": {}, "openings": {}})
        views = [ctx._view(table, to) for to in range(ctx.n) if to != ctx.seat]
        seq, head = views[0].seq, views[0].head
        assert all((v.seq, v.head) == (seq, head) for v in views)
        versions = [
            sign_message(ctx.identity, table, rnd, seq, head, "blame", {
                "seat": victim, "rule": "P-4.3", "message": "x", "evidence": [anchor.to_json()], "pad": tag * self.size,
            })
            for tag in ("a", "b")
        ]  # fmt: skip
        for to in range(ctx.n):
            if to != ctx.seat:
                ctx.raw(to, versions[0].to_wire())
                ctx._view(table, to).seq, ctx._view(table, to).head = seq + 1, versions[0].digest()
        ctx.raw(victim, versions[1].to_wire(), delay=0.5)


# BROKE (I2): red team 5's oversized equivocation, through the two kinds the size cap leaves out. Seat 2 signs
# two versions of one blame (~160 KB each, under MAX_MESSAGE_BYTES; a blame's body is not shape-checked past
# its four fields), both pending (a `secrets` anchor of the current round, `blame._audit_pending`): one to
# every seat, the other to seat 0 alone half a second later. Seat 0's `ChainTracker` raises the equivocation
# and `_blame` quotes the proof {first, second}, ~320 KB: over MAX_OWN_EVIDENCE_BYTES, and not a signed
# message, so `_round.fitting_evidence` has no reference for it and drops it: seat 0's blame goes out with no
# evidence. Seat 1 never gets the second version (seat 0 does not pass on a message whose acceptance raised),
# so `_evidence_verdict` over no items is False and seat 1 stops at once. Seat 0: Blamed(2, P-1.3); seat 1:
# Stopped. ("A faulty message or both halves of an equivocation proof always fit": not for blame and stop.)
# Repro: .venv/bin/pytest -n 0 tests/test_redteam6.py -k blame_equivocation
# Fixed: both versions are passed on before the blame (`blame._blame_equivocation`), and a proof too big
# to quote goes out as references to its halves (`_round.evidence_references`): the bystander waits on
# them and finds the fork itself.
@pytest.mark.parametrize("game", ["sixth-sense", "take6", "sixes"])
def test_an_oversized_blame_equivocation_convicts_everywhere(game: str) -> None:
    options = {"chips": 2} if game == "sixes" else {}
    table = run_table(game, 3, options, 0, {2: OversizedBlameEquivocation()})
    assert table.applied > 0
    assert table.invariants() == [], table.report()


# --- 7: a stop after the game, to one seat only ----------------------------------------------------------


class StopAfterTheGame(Strategy):
    """Two seconds after its last secrets (every seat is over by then), this seat signs a `stop`, next
    in its chain, and sends it to the victim alone."""

    name = "stop-after-the-game"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != "secrets" or occurrence != 0:
            return (KEEP,)
        ctx.applied += 1
        if to != ctx.victim():
            return (KEEP,)
        stop: JSONObject = {"rule": "P-5.3", "message": "sore loser", "evidence": []}
        return (KEEP, Emit(kind="stop", body=stop, delay=2.0))


# Withstood (I2): an over session reads meta kinds on (`inbox._handle`), so the victim, over, stops on the
# stop, publishes its own, and the bystander, over too, stops on that (or on the gossip): every honest seat
# ends Stopped, nobody convicted. Noted for the lead: this lets any seat turn a finished game (GameOver
# already shown) into "the table could not agree" at every seat still draining its links, and leave it
# finished at one that has closed them. 2 tables (Sixes, one chip).
@pytest.mark.parametrize("seed", [0, 1])
def test_a_stop_after_the_game_to_one_seat_ends_every_seat_alike(seed: int) -> None:
    table = run_table("sixes", 3, {"chips": 1}, seed, {2: StopAfterTheGame()})
    assert table.applied > 0
    assert table.invariants() == [], table.report()
