"""Red team 20: attacks on 860e27f (a seat's own stop opens its windows through `_core._end_known`, with
the away check; a signed blame of this table vouches wherever a seat first sees it, before any round,
quota or order check, `inbox._vouch`, and every newly counted vouch is passed on, `_note_vouch`; a stopped
seat reads a late blame's evidence even when it converted) and a5809fd (`TableSession.settle(now)` and the
`Verdict(blame, convicted)` output of `blame.settle_verdict`).

Four seats as tests/test_redteam15.py to tests/test_redteam18.py: Alice (0) and Bob (2) run the real
`TableSession`; Mallory (1) and Carol (3) are modified clients signing what they like with their own keys
(their sessions serve only to sign in chain order). Where said, Carol is a third honest seat.

Breaks found (each was a strict xfail, I2; both fixed and passing as the attacks), both in
`blame._judge_late_blame` and both resting on private evidence, which only its recipient's own blame can
show to another seat: #1 a late blame was dropped when the same call converted ANOTHER accused (`if
converted or accused in self.convicted: ... return`), which a vouch taken in from the evidence of the blame
just before it in the same pass brings about at one honest seat only (now: dropped only when its own
accused is convicted, and `_convert_declined` converts every proof its window allows); #2 a waiting late
blame (`late_blames`, one per blamer) was popped or overwritten by the same blamer's next blame, so private
evidence checkable at once at one honest seat and only later at the other convicted at the first alone
(now: one per blamer and seq, bounded by the blamer's meta quota alike at every seat).
Withstood: vouches in every shape count alike and travel; floods stay bounded per input;
forwarding dies out; the away check on own stops splits nothing; `settle` is idempotent.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import pytest
from test_redteam14 import relay, shown_choice, verdicts
from test_redteam15 import blame_by, faults_past_every_own_window, gossip, named, stopped_table
from test_redteam16 import dealt_table, internal_errors, signed_at

from engine.api import JSONObject
from protocol.session import Output, Send, TableSession, Verdict, private_channel
from protocol.signed import SignedMessage, sign_message
from protocol.table._state import MAX_HELD_BYTES

ALICE, MALLORY, BOB, CAROL = 0, 1, 2, 3


def vouch_body(accused: object, message: str = "vouch") -> JSONObject:
    return {"seat": accused, "rule": "P-5.1", "message": message, "evidence": []}


def settled_verdicts(outputs: Sequence[object]) -> list[Verdict]:
    return [o for o in outputs if isinstance(o, Verdict)]


def forwards(outputs: Sequence[object]) -> list[Send]:
    return [o for o in outputs if isinstance(o, Send) and o.forward]


def crafted_vouch(h, how: str, author: int = CAROL, accused: object = MALLORY) -> SignedMessage:  # type: ignore[no-untyped-def]
    """`author`'s signed blame naming `accused`, in a shape one honest seat may chain, hold, refuse or
    never see in a chain, while another does something else with it."""
    s = h.sessions[author]
    rnd = h.sessions[ALICE].round_index
    table = h.settings.table
    ident = h.identities[author]
    body = vouch_body(accused, f"vouch {how}")
    if how == "ahead":  # five rounds ahead: NotYet, refused before the chain (`_check_round`)
        return sign_message(ident, table, rnd + 5, s.my_seq, s.my_prev, "blame", body)
    if how == "huge_seq":  # past any hold or cap
        return sign_message(ident, table, rnd, 1 << 50, "0" * 64, "blame", body)
    if how == "wrong_prev":  # the next seq on a prev that is no message of the chain
        return sign_message(ident, table, rnd, s.my_seq, "ab" * 32, "blame", body)
    if how == "fork":  # a second version of a message both honest seats chained already
        earlier = s._publish("blame", vouch_body(None, "first version"))
        assert earlier is not None
        for seat in (ALICE, BOB):
            h.sessions[seat].receive(author, earlier.to_wire(), h.now)
        return blame_by(h, author, accused if isinstance(accused, int) else None, seq_of=earlier)
    if how == "past_round":  # a round label behind the chain
        return sign_message(ident, table, max(rnd - 1, 0), s.my_seq, s.my_prev, "blame", body)
    if how == "other_table":
        return sign_message(ident, "ab" * 16, rnd, s.my_seq, s.my_prev, "blame", body)
    if how == "private":  # the blame signed on the author's private channel to Alice
        channel = private_channel(table, h.settings.seats[author].peer_id, h.settings.seats[ALICE].peer_id)
        return sign_message(ident, channel, rnd, 0, "0" * 64, "blame", body)
    raise AssertionError(how)


# Held (idea 1): a vouch in every shape that one honest seat may chain, hold or refuse while another
# does otherwise counts at Alice, who is sent it alone, and is passed on at once, so Bob counts it from
# Alice's gossip: both hold the same vouches. A blame of another table or of a private channel counts
# nowhere (and is not passed on). Fails if a shape counts at one seat only.
@pytest.mark.parametrize("how", ["ahead", "huge_seq", "wrong_prev", "fork", "past_round", "other_table", "private"])
def test_a_vouch_in_any_shape_counts_alike_at_both_honest_seats(how: str) -> None:
    h, alice, bob = dealt_table()
    t = h.now
    msg = crafted_vouch(h, how)
    out_alice = alice.receive(CAROL, msg.to_wire(), t)
    counts = how not in ("other_table", "private")
    assert (CAROL in alice.blamers.get(MALLORY, set())) == counts, (how, alice.blamers)
    assert any(o.data == msg.to_wire() for o in forwards(out_alice)) == counts
    out_bob = gossip(out_alice, ALICE, bob, t + 0.1)
    assert not internal_errors(out_alice + out_bob)
    assert alice.blamers.get(MALLORY, set()) == bob.blamers.get(MALLORY, set()), (alice.blamers, bob.blamers)


# Held (idea 1, I2): Carol's vouch is refused at Alice's hold (Carol filled Alice's hold for her chain
# to the byte cap first, with a gap never filled), sent to Alice alone at the edge of her k = 1 window.
# It still counts (before the hold's cap) and is passed on: Alice converts on her declined proof of
# Mallory's fault, Bob converts on Alice's blame and Carol's vouch 0.1 s later. Both name Mallory.
def test_a_vouch_refused_by_a_full_hold_still_counts_and_travels() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    faults_past_every_own_window(h, (MALLORY,))
    carol = h.sessions[CAROL]
    base = carol.my_seq + 1  # carol.my_seq is never sent: everything after it is held at Alice
    filler = "x" * 60_000
    seq, kept = base, 0
    while kept < MAX_HELD_BYTES:
        msg = signed_at(h, CAROL, seq, "0" * 64, "stop", {"rule": "P-5.3", "message": filler, "evidence": []})
        alice.receive(CAROL, msg.to_wire(), t + 2 * step - 0.5)
        kept += len(msg.signed_bytes())
        seq += 1
    assert alice.held_bytes.get(carol.identity.peer_id, 0) > MAX_HELD_BYTES - 70_000
    edge = t + 2 * step - 0.01
    vouch = signed_at(h, CAROL, seq + 10, "0" * 64, "blame", vouch_body(MALLORY))
    out_alice = alice.receive(CAROL, vouch.to_wire(), edge)
    assert CAROL in alice.blamers[MALLORY]
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired: a conversion at Alice's edge
    out_bob = gossip(out_alice, ALICE, bob, edge + 0.1)
    assert not internal_errors(out_alice + out_bob)
    assert MALLORY in bob.convicted, out_bob  # Bob converts on Alice's blame and the passed-on vouch
    alice.tick(t + 40)
    bob.tick(t + 40)
    assert named(alice) == named(bob) == ("ended", MALLORY), (named(alice), named(bob))


# Held (idea 2, I6, I3): a flood of 600 blames from Carol to a stopped Alice: every accused shape (a seat,
# None, junk, bools), huge seqs, round labels ahead, bad signatures, forks. Each input costs at most a
# bounded number of signature checks and at most two forwards (the vouch's, the chain's gossip);
# `blamers` stays n + 1 keys of at most n authors; nothing raises. Fails on any growth per input.
def test_a_flood_of_blames_costs_a_bounded_amount_per_input(monkeypatch: pytest.MonkeyPatch) -> None:
    h, alice, _bob = stopped_table()
    t = h.now
    n = len(h.settings.seats)
    calls = [0]
    real_verify = SignedMessage.verify

    def counting_verify(self: SignedMessage, *args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real_verify(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SignedMessage, "verify", counting_verify)
    carol = h.sessions[CAROL]
    ident = h.identities[CAROL]
    rnd = alice.round_index
    accused_values: list[object] = [0, 1, 2, 3, None, True, False, -1, 4, "1", [1], 1 << 60]
    worst_verifies, worst_forwards, total = 0, 0, 0
    all_out: list[Output] = []
    for i in range(600):
        accused = accused_values[i % len(accused_values)]
        body = vouch_body(accused, f"flood {i}")
        shape = i % 5
        if shape == 0:
            msg = carol._publish("blame", body)
            assert msg is not None
        elif shape == 1:
            msg = sign_message(ident, h.settings.table, rnd, (1 << 40) + i, "0" * 64, "blame", body)
        elif shape == 2:
            msg = sign_message(ident, h.settings.table, rnd + 3 + i, carol.my_seq, carol.my_prev, "blame", body)
        elif shape == 3:  # a bad signature: Mallory's key over Carol's name
            good = sign_message(ident, h.settings.table, rnd, carol.my_seq + 7 + i, "0" * 64, "blame", body)
            forged = sign_message(h.identities[MALLORY], h.settings.table, rnd, good.seq, good.prev, "blame", body)
            msg = SignedMessage.from_json({**good.to_json(), "sig": forged.to_json()["sig"]})
        else:
            msg = blame_by(
                h, CAROL, None, seq_of=signed_at(h, CAROL, max(carol.my_seq - 1, 0), "0" * 64, "blame", body)
            )
        before = calls[0]
        out = alice.receive(CAROL, msg.to_wire(), t + 0.001 * i)
        all_out += out
        worst_verifies = max(worst_verifies, calls[0] - before)
        worst_forwards = max(worst_forwards, len(forwards(out)))
        total += len(forwards(out))
    assert not internal_errors(all_out)
    assert worst_verifies <= 4, worst_verifies
    assert worst_forwards <= 3, worst_forwards
    assert set(alice.blamers) <= {None, *range(n)}
    assert all(len(v) <= n for v in alice.blamers.values())
    assert not (set(alice.convicted) - {MALLORY, CAROL})  # I1


# Held (idea 3, I6): vouch forwarding among three honest seats (Alice, Bob, Carol, all the real
# session) never loops. Mallory sends Alice alone one blame of every accused value (and a fork, and one
# a round ahead); every Send of every honest seat is then delivered to the other two, round after round.
# The traffic dies out within a few rounds, and each seat passes each vouch on at most once.
def test_vouch_forwarding_among_three_honest_seats_dies_out() -> None:
    h, alice, bob = dealt_table()
    carol = h.sessions[CAROL]
    honest = {ALICE: alice, BOB: bob, CAROL: carol}
    t = h.now
    mallory = h.sessions[MALLORY]
    first: list[Output] = []
    for accused in (None, ALICE, MALLORY, BOB, CAROL):
        msg = mallory._publish("blame", vouch_body(accused))
        assert msg is not None
        first += alice.receive(MALLORY, msg.to_wire(), t)
    ahead = sign_message(
        h.identities[MALLORY], h.settings.table, alice.round_index + 4, 0, "0" * 64, "blame", vouch_body(ALICE)
    )
    first += alice.receive(MALLORY, ahead.to_wire(), t)
    pending: list[tuple[int, Send]] = [(ALICE, o) for o in first if isinstance(o, Send) and o.to is None]
    rounds, sent = 0, len(pending)
    per_seat_data: dict[int, list[bytes]] = {s: [o.data for _, o in pending] if s == ALICE else [] for s in honest}
    while pending and rounds < 30:
        rounds += 1
        now = t + 0.1 * rounds
        nxt: list[tuple[int, Send]] = []
        for sender, o in pending:
            for seat, s in honest.items():
                if seat == sender:
                    continue
                for out in s.receive(sender, o.data, now):
                    if isinstance(out, Send) and out.to is None:
                        nxt.append((seat, out))
                        per_seat_data[seat].append(out.data)
        pending = nxt
        sent += len(nxt)
    assert not pending, f"still forwarding after {rounds} rounds ({sent} sends)"
    assert rounds <= 8, rounds
    for seat, data in per_seat_data.items():
        forwarded_blames = [
            d
            for d in data
            if SignedMessage.from_wire(d).kind == "blame"
            and SignedMessage.from_wire(d).author == h.settings.seats[MALLORY].peer_id
        ]
        # each of Mallory's six blames passed on at most twice per seat (the vouch's Send, the chain's gossip)
        assert len(forwarded_blames) <= 12, (seat, len(forwarded_blames))
    for s in honest.values():
        assert s.blamers.get(ALICE, set()) >= {MALLORY}


def groundless_stop(h, alice: TableSession, bob: TableSession, t: float, flap: tuple[TableSession, ...]):  # type: ignore[no-untyped-def]
    """Mallory flaps her own link to each seat in `flap` just before Carol's blame with no evidence
    naming Alice reaches Alice and Bob at `t`: each stops on its own (`_stop`), the flapped ones away."""
    for s in flap:
        s.set_connected(MALLORY, False, t - 0.2)
        s.set_connected(MALLORY, True, t - 0.1)
    blame = h.sessions[CAROL]._publish("blame", vouch_body(ALICE, "groundless"))
    assert blame is not None
    out_alice = alice.receive(CAROL, blame.to_wire(), t)
    out_bob = bob.receive(CAROL, blame.to_wire(), t)
    assert alice.stage == bob.stage == "stopped" and not alice.convicted and not bob.convicted
    relay(out_alice, ALICE, bob, t + 0.1)
    relay(out_bob, BOB, alice, t + 0.1)
    return out_alice, out_bob


# Held (idea 4, I2 and catching): Mallory flaps her link to Alice alone, then Carol's groundless blame
# stops Alice (away: no window of her own, the new away check in `_stop`) and Bob (his own window). A
# fault of Mallory sent to both inside the window ("both"), or to Bob alone at the edge of his window
# ("bob_edge"), convicts Bob, and Alice converts on Bob's blame: both name Mallory. Sent to Alice alone
# at the edge ("alice_edge"), it is declined at Alice and at Bob (past his window by the time her gossip
# comes): both stop with nobody convicted. Either way the honest seats agree.
@pytest.mark.parametrize("where", ["both", "bob_edge", "alice_edge"])
def test_a_cheater_flapping_its_own_link_to_one_seat_splits_nothing(where: str) -> None:
    h, alice, bob = dealt_table()
    t, step = h.now, h.settings.convert_step
    groundless_stop(h, alice, bob, t, (alice,))
    assert not alice.own_window and bob.own_window  # the attack fired
    fault = shown_choice(h, MALLORY)
    out_alice: list[Output] = []
    out_bob: list[Output] = []
    if where == "both":
        out_alice += alice.receive(MALLORY, fault.to_wire(), t + 0.5)
        out_bob += bob.receive(MALLORY, fault.to_wire(), t + 0.5)
        at = t + 0.6
    elif where == "bob_edge":
        out_bob += bob.receive(MALLORY, fault.to_wire(), t + step - 0.01)
        at = t + step + 0.09
    else:
        out_alice += alice.receive(MALLORY, fault.to_wire(), t + step - 0.01)
        at = t + step + 0.09
    out_bob += gossip(out_alice, ALICE, bob, at)
    out_alice += gossip(out_bob, BOB, alice, at + 0.1)
    gossip(out_alice, ALICE, bob, at + 0.2)
    for s in (alice, bob):
        s.tick(t + 40)
    assert not internal_errors(out_alice + out_bob)
    assert named(alice)[1] in (None, MALLORY) and named(bob)[1] in (None, MALLORY)  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2
    if where != "alice_edge":
        assert named(alice) == ("ended", MALLORY)  # caught: a fault sent inside a window convicts everywhere


# Held (idea 4, catching, and a documented shape): Mallory flaps her link to BOTH honest seats before
# Carol's groundless blame: neither has a window of its own, and Mallory's fault sent to both at once
# inside the step convicts nowhere. The honest seats agree (I2); the fault goes unpunished, as
# red team 16's flapped-links shape (tests/test_redteam16.py) documents: asserted so that a change shows.
def test_a_cheater_flapping_its_links_to_every_honest_seat_escapes_alike() -> None:
    h, alice, bob = dealt_table()
    t = h.now
    groundless_stop(h, alice, bob, t, (alice, bob))
    assert not alice.own_window and not bob.own_window
    fault = shown_choice(h, MALLORY)
    out_alice = alice.receive(MALLORY, fault.to_wire(), t + 0.5)
    out_bob = bob.receive(MALLORY, fault.to_wire(), t + 0.5)
    gossip(out_alice, ALICE, bob, t + 0.6)
    gossip(out_bob, BOB, alice, t + 0.6)
    for s in (alice, bob):
        s.tick(t + 40)
    assert named(alice) == named(bob) == ("stopped", None), (named(alice), named(bob))


# Held (idea 5): `settle` before `listen_until`, repeated, with the clock going backwards, at a seat in
# play and at one over changes nothing and raises nothing; at `listen_until` it ends the seat once with
# one `Verdict`, and the two honest seats' Verdicts are equal in a two-cheater race (Mallory's fault to
# Alice, Carol's to Bob, at the same instant inside both own windows).
def test_settle_is_idempotent_and_verdicts_agree_in_a_two_cheater_race() -> None:
    h, alice, bob = stopped_table()
    t = h.now
    out_alice = alice.receive(MALLORY, shown_choice(h, MALLORY).to_wire(), t + 0.5)
    out_bob = bob.receive(CAROL, shown_choice(h, CAROL).to_wire(), t + 0.5)
    assert verdicts(out_alice) == [MALLORY] and verdicts(out_bob) == [CAROL]  # the attack fired
    out_bob += gossip(out_alice, ALICE, bob, t + 0.6)
    out_alice += gossip(out_bob, BOB, alice, t + 0.6)
    until_a, until_b = alice.listen_until(), bob.listen_until()
    assert until_a is not None and until_b is not None
    early = alice.settle(until_a - 0.01) + alice.settle(t - 100) + alice.settle(until_a - 0.001)
    assert not settled_verdicts(early) and alice.stage == "stopped"
    settled_a = alice.settle(until_a) + alice.settle(until_a + 1) + alice.settle(t - 100) + alice.tick(until_a + 5)
    settled_b = bob.tick(until_b) + bob.settle(until_b) + bob.settle(until_b + 100)
    va, vb = settled_verdicts(settled_a), settled_verdicts(settled_b)
    assert len(va) == 1 and len(vb) == 1, (va, vb)
    assert va[0].convicted == vb[0].convicted == (MALLORY, CAROL), (va, vb)
    assert va[0].blame.seat == vb[0].blame.seat == MALLORY
    assert named(alice) == named(bob) == ("ended", MALLORY)
    assert not internal_errors(out_alice + out_bob + settled_a + settled_b)


def test_settle_at_a_seat_in_play_changes_nothing() -> None:
    h, alice, _bob = dealt_table()
    stage = alice.stage
    out = alice.settle(h.now + 1e9) + alice.settle(h.now - 1e9)
    assert alice.stage == stage and not settled_verdicts(out) and not internal_errors(out)
    assert alice.decision() or alice.waiting() is not None


def bad_hand_keys(h, sender: int, to: int) -> SignedMessage:  # type: ignore[no-untyped-def]
    """`sender`'s hand keys for `to` of this round naming no digest they were built on: its fault
    (P-1.3, `_round.built_on`), checkable at every seat on the blame of `to` (channel sender -> to)."""
    table = h.settings.table
    channel = private_channel(table, h.settings.seats[sender].peer_id, h.settings.seats[to].peer_id)
    rnd = h.sessions[ALICE].round_index
    body: JSONObject = {"round": rnd, "openings": [], "to": to}
    return sign_message(h.identities[sender], channel, rnd, 0, "0" * 64, "p.keys", body)


# FIXED (I2, was a strict xfail): a late blame dropped because the SAME pump converted another accused
# (`blame._judge_late_blame`,
# `if converted or accused in self.convicted: ... return`). `_convert_declined()` at the top of
# `_judge_late_blame` converts WHICHEVER declined proof a vouch now opens, not only the late blame's own
# accused; when it converts another seat, the late blame's own verdict is thrown away, and its
# `late_blames` entry popped, though its evidence proves its accused. A vouch counted in the same pump just
# before (taken in from the evidence of the blame before it in the same chain, `_take_in` -> `_vouch`)
# opens that other window at one honest seat only at that instant; at a seat where the vouch came earlier
# (so the conversion happened earlier), the late blame convicts. Private evidence (a channel accused ->
# blamer) is checkable only on the blamer's own blame, so the honest seat that dropped it never convicts
# that accused: the other honest seat's re-blame names itself as blamer and proves nothing there.
# Sequence (4 seats; Mallory, Carol collude): Mallory's bare stop at t to Alice and Bob (stopped_table);
# Carol's fault of play to both at t + step + 0.5: declined at both (past every own window). Carol then
# signs V (seq c + 1: a blame naming Mallory quoting W) and B2 (seq c + 2: a blame naming Mallory quoting
# Mallory's bad hand keys to Carol); Mallory signs W (her blame naming Carol, a vouch). At y = t + step +
# 1.0 (inside k = 1 windows): y - 0.05 W to Bob alone: Bob converts Carol. At y Alice gets B2 (held: vouch
# Carol->Mallory) then V: V chains and unholds B2; V's evidence takes W in (vouch Mallory->Carol, no
# conversion yet); B2 is handled next in the same pass: `_convert_declined` converts Carol, `converted` is
# True, B2 dropped. At y Bob gets B2 and V: nothing left to convert, B2 proves Mallory (k = 1, Carol):
# Bob convicts Mallory. Gossip both ways; settle. Alice {Carol} shows Carol; Bob {Mallory, Carol} shows
# Mallory. (Was there before 860e27f: the early `return` on `converted`; 860e27f kept the drop.)
# Fix: in `_judge_late_blame`, return early only when the late blame's OWN accused is convicted (after
# the conversion); otherwise go on to judge its verdict (`_blame` on True, `late_blames` on None). More
# generally, `_convert_declined` should convert every declined proof its window allows, not the first.
def test_a_late_blame_is_dropped_when_its_read_converts_another_accused() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    faults_past_every_own_window(h, (CAROL,))
    carol = h.sessions[CAROL]
    w = blame_by(h, MALLORY, CAROL)  # Mallory's vouch for Carol's guilt
    keys = bad_hand_keys(h, MALLORY, CAROL)
    v_body: JSONObject = {"seat": MALLORY, "rule": "P-5.1", "message": "v", "evidence": [w.to_json()]}
    b2_body: JSONObject = {"seat": MALLORY, "rule": "P-4.3", "message": "bad keys", "evidence": [keys.to_json()]}
    v = carol._publish("blame", v_body)
    b2 = carol._publish("blame", b2_body)
    assert v is not None and b2 is not None
    y = t + step + 1.0
    out_bob = bob.receive(MALLORY, w.to_wire(), y - 0.05)
    assert verdicts(out_bob) == [CAROL], out_bob  # Bob converts Carol on Mallory's vouch
    out_alice = alice.receive(CAROL, b2.to_wire(), y)
    out_alice += alice.receive(CAROL, v.to_wire(), y)
    assert CAROL in alice.convicted  # Alice converts Carol in the same pass ...
    out_bob += bob.receive(CAROL, b2.to_wire(), y) + bob.receive(CAROL, v.to_wire(), y)
    assert MALLORY in bob.convicted, out_bob  # ... and Bob convicts Mallory on B2's private evidence
    out_alice += gossip(out_bob, BOB, alice, y + 0.05)
    out_bob += gossip(out_alice, ALICE, bob, y + 0.1)
    out_alice += gossip(out_bob, BOB, alice, y + 0.15)
    for s in (alice, bob):
        s.tick(t + 40)
    assert not internal_errors(out_alice + out_bob)
    assert convicted_set(alice) <= {MALLORY, CAROL} and convicted_set(bob) <= {MALLORY, CAROL}  # I1
    assert convicted_set(alice) == convicted_set(bob), (convicted_set(alice), convicted_set(bob))  # I2
    assert named(alice) == named(bob), (named(alice), named(bob))


def convicted_set(s: TableSession) -> set[int | None]:
    return set(s.convicted)


# Control for #1 (held): the same messages, V and B2 as two inputs at Alice (V first, in order): the
# conversion of Carol happens at the end of V's pump, B2 is then read as at Bob and convicts Mallory.
# Both honest seats hold {Mallory, Carol} and show Mallory. Shows that #1 is the same-pass drop alone.
def test_control_the_late_blame_read_in_its_own_pump_convicts_alike() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    faults_past_every_own_window(h, (CAROL,))
    carol = h.sessions[CAROL]
    w = blame_by(h, MALLORY, CAROL)
    keys = bad_hand_keys(h, MALLORY, CAROL)
    v = carol._publish("blame", {"seat": MALLORY, "rule": "P-5.1", "message": "v", "evidence": [w.to_json()]})
    b2 = carol._publish(
        "blame", {"seat": MALLORY, "rule": "P-4.3", "message": "bad keys", "evidence": [keys.to_json()]}
    )
    assert v is not None and b2 is not None
    y = t + step + 1.0
    out_bob = bob.receive(MALLORY, w.to_wire(), y - 0.05)
    out_alice = alice.receive(CAROL, v.to_wire(), y) + alice.receive(CAROL, b2.to_wire(), y)
    out_bob += bob.receive(CAROL, v.to_wire(), y) + bob.receive(CAROL, b2.to_wire(), y)
    out_alice += gossip(out_bob, BOB, alice, y + 0.05)
    out_bob += gossip(out_alice, ALICE, bob, y + 0.1)
    for s in (alice, bob):
        s.tick(t + 40)
    assert not internal_errors(out_alice + out_bob)
    assert convicted_set(alice) == convicted_set(bob) == {MALLORY, CAROL}
    assert named(alice) == named(bob) == ("ended", MALLORY)


def carols_lock_to_all_but_alice(h) -> tuple[list[Output], SignedMessage]:  # type: ignore[no-untyped-def]
    """Everything in flight is delivered except Carol's messages to Alice (her lock, keys, openings,
    whoever passes them on) and Mallory's own messages after her lock (she withholds them from all):
    Bob holds all four locks, Alice three. Returns what Bob passed on to Alice of Carol's (delivered to
    her a delivery later) and Mallory's first withheld message (her next seq goes to a blame instead)."""
    carol_id = h.settings.seats[CAROL].peer_id
    mallory_id = h.settings.seats[MALLORY].peer_id
    to_alice_from_bob: list[Output] = []
    withheld: list[SignedMessage] = []
    delivered = 0
    while h._queue and delivered < 5000:
        item = heapq.heappop(h._queue)
        delivered += 1
        msg = SignedMessage.from_wire(item.data)
        if msg.author == mallory_id and msg.kind in ("open", "p.keys"):
            if msg.kind == "open":
                withheld.append(msg)
            continue
        if item.to == ALICE and msg.author == carol_id:
            if item.sender == BOB:
                to_alice_from_bob.append(Send(None, item.data, forward=True))
            continue
        h._deliver(item)
    return to_alice_from_bob, min(withheld, key=lambda m: m.seq)


def kind_of(data: bytes) -> str:
    return SignedMessage.from_wire(data).kind


# FIXED (I2, was a strict xfail): a stopped seat's waiting late blame is thrown away by the same blamer's next blame
# (`blame._judge_late_blame`: `late_blames` holds one blame per blamer, and a later blame of that blamer
# that proves nothing pops it, `self.late_blames.pop(seat, None)` before the Refused; one that waits too
# overwrites it; one naming a seat convicted already pops it too). Private evidence that is not yet
# checkable at one honest seat (its round's locks not all in: `_private_fault` returns None) but is at the
# other convicts there at once, and the seat that waited never reads it again: nobody else's blame can
# prove it there (a private item counts only on the blame of its recipient, channel accused -> blamer).
# Sequence (4 seats, seed 91, round 0's deal): Carol (cheater) locks last and sends her lock to Bob (and
# Mallory), not to Alice: Bob's gossip of it reaches Alice 0.1 s later. Meanwhile Mallory (colluder) sends
# Alice and Bob V1, her blame naming Carol quoting Carol's bad hand keys to Mallory (no `built_on`), then
# V2, a blame naming Carol with no evidence. Bob (all locks): V1 convicts Carol at once (no stop known).
# Alice (3 locks): V1 waits, she halts for it (stop); V2 then pops V1 from `late_blames` ("proves_nothing":
# Refused) or overwrites it ("waits_forever": V2 quotes Carol's keys labelled a round ahead, never checkable).
# Mallory withholds her own table-card opening from everyone and signs V1 at its seq: a message of hers
# waiting for the locks would otherwise keep V1 queued until they come. Carol's lock comes 0.1 s later:
# nothing is read again. Bob's blame names himself as blamer, so the private item proves nothing at
# Alice. Bob ends naming Carol; Alice stops with nobody convicted (a blame it could not confirm).
# Fix: keep every waiting late blame of a blamer (keyed by (blamer, digest), bounded per blamer, e.g. by
# MAX_HELD or the author's quota, as the chain already bounds them), and pop only the blame just judged,
# never another one of the same blamer; and/or re-read private evidence alike, e.g.
# accept a private item quoted on another seat's blame when it is signed by the accused to the seat that
# first blamed (carry the original blamer), so a seat that missed the first reading can still check it.
@pytest.mark.parametrize("second", ["proves_nothing", "waits_forever"])
def test_a_waiting_late_blame_is_popped_by_the_same_blamers_next_blame(second: str) -> None:
    from protocol.testing import Harness

    h = Harness("take6", 4, seed=91)
    alice, bob = h.sessions[ALICE], h.sessions[BOB]

    def last_lock_in_flight(h: Harness) -> bool:
        # Carol locks last in round 0 (seed 91): her own lock to Alice and Bob is in flight
        carol_id = h.settings.seats[CAROL].peer_id
        return any(
            d.sender == CAROL and kind_of(d.data) == "lock" and SignedMessage.from_wire(d.data).author == carol_id
            for d in h._queue
        )

    h.run(until=last_lock_in_flight, max_deliveries=50_000)
    t = h.now
    out_bob, slot = carols_lock_to_all_but_alice(h)  # Carol's lock to Bob only (Bob has all four now)
    assert (
        bob.round is not None and len(bob.round.locks) == 4 and alice.round is not None and len(alice.round.locks) == 3
    )
    keys = bad_hand_keys(h, CAROL, MALLORY)
    v1 = signed_at(
        h,
        MALLORY,
        slot.seq,
        slot.prev,
        "blame",
        {"seat": CAROL, "rule": "P-4.3", "message": "bad keys", "evidence": [keys.to_json()]},
    )
    evidence: list[object] = []
    if second == "waits_forever":  # overwrites V1 in `late_blames`: Carol's keys labelled a round ahead wait for good
        ahead = bad_hand_keys(h, CAROL, MALLORY)
        channel = ahead.table
        ahead = sign_message(h.identities[CAROL], channel, 1, 1, "0" * 64, "p.keys", {**ahead.body, "round": 1})
        evidence = [ahead.to_json()]
    v2 = signed_at(
        h,
        MALLORY,
        slot.seq + 1,
        v1.digest(),
        "blame",
        {"seat": CAROL, "rule": "P-5.1", "message": "again", "evidence": evidence},
    )
    assert v1 is not None and v2 is not None
    out_bob += bob.receive(MALLORY, v1.to_wire(), t + 0.01) + bob.receive(MALLORY, v2.to_wire(), t + 0.01)
    assert CAROL in bob.convicted, out_bob  # the attack fired at Bob: the private evidence proves Carol
    out_alice = alice.receive(MALLORY, v1.to_wire(), t + 0.01) + alice.receive(MALLORY, v2.to_wire(), t + 0.01)
    assert alice.stage == "stopped" and not alice.convicted, out_alice  # Alice waited, then dropped V1
    out_alice += gossip(out_bob, BOB, alice, t + 0.1)  # Carol's lock (and Bob's blame) by Bob's gossip
    out_bob += gossip(out_alice, ALICE, bob, t + 0.2)
    out_alice += gossip(out_bob, BOB, alice, t + 0.3)
    for s in (alice, bob):
        s.tick(t + 60)
    assert not internal_errors(out_alice + out_bob)
    assert convicted_set(alice) <= {MALLORY, CAROL} and convicted_set(bob) <= {MALLORY, CAROL}  # I1
    assert convicted_set(alice) == convicted_set(bob), (convicted_set(alice), convicted_set(bob))  # I2
    assert named(alice) == named(bob), (named(alice), named(bob))


# Control for #2 (held): the same race without V2: V1 waits at Alice (`late_blames`) until Carol's lock
# comes by Bob's gossip, is read again and convicts Carol there too (Bob's vouch gives k = 1). Both name
# Carol. Shows that #2 is V2's pop alone.
def test_control_the_waiting_late_blame_alone_convicts_alike() -> None:
    from protocol.testing import Harness

    h = Harness("take6", 4, seed=91)
    alice, bob = h.sessions[ALICE], h.sessions[BOB]

    def last_lock_in_flight(h: Harness) -> bool:
        # Carol locks last in round 0 (seed 91): her own lock to Alice and Bob is in flight
        carol_id = h.settings.seats[CAROL].peer_id
        return any(
            d.sender == CAROL and kind_of(d.data) == "lock" and SignedMessage.from_wire(d.data).author == carol_id
            for d in h._queue
        )

    h.run(until=last_lock_in_flight, max_deliveries=50_000)
    t = h.now
    out_bob, slot = carols_lock_to_all_but_alice(h)
    keys = bad_hand_keys(h, CAROL, MALLORY)
    v1 = signed_at(
        h,
        MALLORY,
        slot.seq,
        slot.prev,
        "blame",
        {"seat": CAROL, "rule": "P-4.3", "message": "bad keys", "evidence": [keys.to_json()]},
    )
    assert v1 is not None
    out_bob += bob.receive(MALLORY, v1.to_wire(), t + 0.01)
    out_alice = alice.receive(MALLORY, v1.to_wire(), t + 0.01)
    out_alice += gossip(out_bob, BOB, alice, t + 0.1)
    out_bob += gossip(out_alice, ALICE, bob, t + 0.2)
    for s in (alice, bob):
        s.tick(t + 60)
    assert not internal_errors(out_alice + out_bob)
    assert convicted_set(alice) == convicted_set(bob) == {CAROL}, (convicted_set(alice), convicted_set(bob))
    assert named(alice) == named(bob) == ("ended", CAROL)


# Held (#1 with public evidence): the same race, B2 quoting an equivocation proof of Mallory (two of her
# signed messages at one seq) instead of private keys. Alice drops B2 as in #1, but Bob's blame carries the
# proof, which any seat checks, with Bob's vouch on top of Carol's (k = 2 at Alice): Alice converts
# within her window, and both hold {Mallory, Carol}. So #1 needs evidence only its blamer can show.
def test_the_same_pass_drop_with_a_public_proof_recovers_by_bobs_blame() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    faults_past_every_own_window(h, (CAROL,))
    carol = h.sessions[CAROL]
    w = blame_by(h, MALLORY, CAROL)
    first = signed_at(h, MALLORY, 1 << 20, "0" * 64, "blame", vouch_body(BOB, "one"))
    second = signed_at(h, MALLORY, 1 << 20, "0" * 64, "blame", vouch_body(BOB, "two"))
    proof: JSONObject = {"first": first.to_json(), "second": second.to_json()}
    v = carol._publish("blame", {"seat": MALLORY, "rule": "P-5.1", "message": "v", "evidence": [w.to_json()]})
    b2 = carol._publish("blame", {"seat": MALLORY, "rule": "P-1.3", "message": "fork", "evidence": [proof]})
    assert v is not None and b2 is not None
    y = t + step + 1.0
    out_bob = bob.receive(MALLORY, w.to_wire(), y - 0.05)
    out_alice = alice.receive(CAROL, b2.to_wire(), y) + alice.receive(CAROL, v.to_wire(), y)
    assert CAROL in alice.convicted  # (before the fix of #1, B2 was dropped here: Mallory not convicted yet)
    out_bob += bob.receive(CAROL, b2.to_wire(), y) + bob.receive(CAROL, v.to_wire(), y)
    assert MALLORY in bob.convicted
    out_alice += gossip(out_bob, BOB, alice, y + 0.05)
    out_bob += gossip(out_alice, ALICE, bob, y + 0.1)
    for s in (alice, bob):
        s.tick(t + 40)
    assert not internal_errors(out_alice + out_bob)
    assert convicted_set(alice) == convicted_set(bob) == {MALLORY, CAROL}, (convicted_set(alice), convicted_set(bob))
    assert named(alice) == named(bob) == ("ended", MALLORY)
