"""Red team 18: attacks on 0a1a93f (a verdict settles at `listen_until` over every seat convicted by
then, the lowest shown, `blame.settle_verdict`) and 5942a69 (the first end a seat knows opens its
windows, in one place with the away check, `_core._end_known`).

Four seats as tests/test_redteam16.py and tests/test_redteam17.py: Alice (0) and Bob (2) run the real
`TableSession`; Mallory (1) and Carol (3) are modified clients signing what they like with their own
keys (their sessions serve only to sign in chain order). Two- and three-seat tables where said.

Breaks found (each was a strict xfail, I2; all four are fixed and pass as the attacks): #1 an away
seat's OWN stop (`clocks._stop`) opened a window of its own with no away check, and a cheater triggers
one at will with a groundless blame (four seats, two cheaters; and three seats, one cheater): `_stop`
now goes through `_core._end_known`; #2 a vouch held out of order (`inbox._hold`) counted at one honest
seat and was never forwarded; #3 the same with the vouch over its author's quota (held at one seat,
refused at the other); #4 a vouch taken into a chain from a blame's evidence (`blame._take_in`) was
never forwarded, and a stopped seat converting on a blame's arrival (`_judge_late_blame`) never read
its evidence. #2-#4: a signed blame of this table vouches on receipt, before any round, quota or order
check (`inbox._vouch`), and is passed on as it is counted (`SessionCore._note_vouch`); a late blame's
evidence is read even when it converted.
"""

from __future__ import annotations

import pytest
from test_redteam14 import shown_choice, verdicts
from test_redteam15 import blame_by, faults_past_every_own_window, gossip, named, stopped_table
from test_redteam16 import dealt_table, internal_errors, signed_at
from test_redteam17 import convicted, settle

from engine.api import JSONObject
from protocol.session import Output, TableSession
from protocol.signed import SignedMessage

ALICE, MALLORY, BOB, CAROL = 0, 1, 2, 3


def signed_by(s: TableSession, kind: str, body: JSONObject) -> SignedMessage:
    msg = s._publish(kind, body)
    assert msg is not None
    return msg


# FIXED (I2, was a strict xfail): red team 17 #6 ("own") again, by a route 5942a69 left open. `_core._end_known` puts
# the away
# check on a stop chained, an own conviction and a halt; but a seat's OWN stop (`clocks._stop`) still sets
# `stop_known_at = now, own_window = True` with no away check. Any stop of its own will do, and a cheater
# makes one at will: a blame with no evidence (or naming no seat) is judged at once (`blame._on_blame`:
# verdict False, or the shape branch) and stops the seat through `_stop`.
# Sequence: Bob's link to Alice is down from t - 0.5. Carol's fault of play to Alice alone at t: Alice
# convicts Carol and settles at her listen_until (t + 3 steps) with {Carol}. Bob's link comes back at
# t + 9.9; at t + 9.95 Mallory sends Bob alone a blame with no evidence naming Alice (not a vouch for
# anyone guilty): Bob `_stop`s, with a window of his own from t + 9.95 though he was away. Alice's gossip
# (Carol's fault, Alice's blame) at t + 10: Bob convicts Carol in the shadow. Mallory's own fault to Bob
# alone at t + 10.5, inside that window: Bob convicts Mallory too. Alice {Carol} shows Carol; Bob {Carol,
# Mallory} shows Mallory (lowest). Honest seats name different seats.
# Where: `protocol/table/clocks.py` `_stop`: `if self.stop_known_at is None: self.stop_known_at,
# self.own_window = self.now, True`. Fix: call `self._end_known()` there (the away check for every first
# end, own stops included), as 5942a69 meant ("in one place").
# The "garbage" variant names no seat at all (the shape branch of `_on_blame`); "groundless" names Alice.
@pytest.mark.parametrize("how", ["groundless", "garbage"])
def test_an_away_seats_own_stop_on_a_groundless_blame_opens_a_window(how: str) -> None:
    h, alice, bob = dealt_table()
    t = h.now
    bob.set_connected(ALICE, False, t - 0.5)
    out_alice = alice.receive(CAROL, shown_choice(h, CAROL).to_wire(), t)
    assert verdicts(out_alice) == [CAROL]
    settle(alice, at=t + 9)
    assert named(alice) == ("ended", CAROL)
    bob.set_connected(ALICE, True, t + 9.9)
    seat: object = ALICE if how == "groundless" else "nobody"
    body: JSONObject = {"seat": seat, "rule": "P-5.1", "message": "x", "evidence": []}
    out_bob = bob.receive(MALLORY, signed_by(h.sessions[MALLORY], "blame", body).to_wire(), t + 9.95)
    assert bob.stage == "stopped" and not convicted(bob)  # the attack fired: Bob's own stop
    out_bob += gossip(out_alice, ALICE, bob, t + 10)
    assert CAROL in convicted(bob), out_bob
    out_bob += bob.receive(MALLORY, shown_choice(h, MALLORY).to_wire(), t + 10.5)
    gossip(out_bob, BOB, alice, t + 10.6)
    settle(alice, bob, at=t + 40)
    assert not internal_errors(out_bob)
    assert convicted(alice) <= {MALLORY, CAROL} and convicted(bob) <= {MALLORY, CAROL}  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2, the verdict shown
    assert convicted(alice) == convicted(bob), (convicted(alice), convicted(bob))  # I2, the sets


# FIXED (I2, was a strict xfail): a vouch HELD out of order is counted (`inbox._hold` -> `_note_vouch`, red team 16
# #1's fix)
# but never forwarded: only chained messages are gossiped (`inbox._queue`). So a colluder's blame sent to
# one honest seat with a gap before it (Carol skips one seq and never sends it to anyone) widens that
# seat's window alone, and the seat's conviction at the edge of that window reaches the other honest
# seat one delivery past ITS window (Dolev-Strong needs the vouch to travel with the value).
# Sequence ("declined"): Mallory's bare stop at t to Alice and Bob (each relays its own stop 0.1 s later);
# Mallory's fault to both at t + step + 0.5 (past both own windows: declined at both). At t + 2 steps -
# 0.01 Carol sends Alice alone a blame naming Mallory at seq s + 1 (s never sent): held at Alice, vouches
# (k = 1, window t + 2 steps); Alice converts on her declined proof and publishes her blame. Bob gets it at
# t + 2 steps + 0.09: k = 1 (Alice; Carol's blame never reached him), window t + 2 steps: past, he stays
# stopped. ("fresh"): no earlier fault; Carol's held vouch to Alice at t + 1.5 steps, then Mallory's
# fault to Alice alone at t + 2 steps - 0.01: Alice convicts, Bob gets the fault and Alice's blame 0.1 s
# later, past his windows. Alice ends naming Mallory, Bob stays stopped with nobody convicted.
# Where: `protocol/table/inbox.py` `_hold` (a held blame vouches here only) with `blame._blame` /
# `_convert_declined` (the converted blame carries no vouches). Fix: forward a held blame (gossip it as
# `_queue` does a chained one: the signature is checked in `_hold` already), so every honest seat holds
# the vouch within a delivery; or, the Dolev-Strong way, quote the vouching blames (or references) in
# the blame a widened window allowed, and count the vouches a received blame carries.
@pytest.mark.parametrize("how", ["declined", "fresh"])
def test_a_held_vouch_is_never_forwarded(how: str) -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    if how == "declined":
        faults_past_every_own_window(h, (MALLORY,))
    carol = h.sessions[CAROL]
    gap = carol.my_seq + 1  # seq my_seq is never signed, never sent
    body: JSONObject = {"seat": MALLORY, "rule": "P-5.1", "message": "vouch", "evidence": []}
    held = signed_at(h, CAROL, gap, "0" * 64, "blame", body)
    edge = t + 2 * step - 0.01
    if how == "declined":
        out_alice = alice.receive(CAROL, held.to_wire(), edge)
    else:
        out_alice = alice.receive(CAROL, held.to_wire(), t + 1.5 * step)
        assert not verdicts(out_alice)
        out_alice += alice.receive(MALLORY, shown_choice(h, MALLORY).to_wire(), edge)
    assert CAROL in alice.blamers.get(MALLORY, set())  # the vouch counts at Alice
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired: Alice convicts at her edge
    out_bob = gossip(out_alice, ALICE, bob, edge + 0.1)
    settle(alice, bob, at=t + 3 * step + 1)
    assert not internal_errors(out_alice + out_bob)
    assert named(alice)[1] in (None, MALLORY) and named(bob)[1] in (None, MALLORY)  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2


def crafted_evidence(h, alice: TableSession) -> list[object]:  # type: ignore[no-untyped-def]
    """Evidence items of every wrong shape a modified client could sign into a blame (I3)."""
    table = h.settings.table
    alice_id = h.settings.seats[ALICE].peer_id
    real = next(iter(alice.tracker.messages(alice_id))).to_json()
    big = (1 << 63) - 1
    items: list[object] = [
        None,
        0,
        -1,
        big,
        -big - 1,
        "x",
        [],
        [[[[]]]],
        {},
        True,
        {"table": table, "author": alice_id, "seq": big, "digest": "0" * 64},
        {"table": table, "author": alice_id, "seq": -1, "digest": "0" * 64},
        {"table": table, "author": alice_id, "seq": 0, "digest": 7},
        {"table": table, "author": [alice_id], "seq": 0, "digest": "0" * 64},
        {"table": 5, "author": alice_id, "seq": 0, "digest": "G" * 64},
        {"first": real, "second": real},
        {"first": real, "second": None},
        {"first": {**real, "seq": big}, "second": {**real, "seq": -big - 1}},
        {"first": {**real, "body": []}, "second": real},
        {**real, "seq": big},
        {**real, "round": -big - 1},
        {**real, "round": big},
        {**real, "kind": "p.keys"},
        {**real, "kind": "timeout"},
        {**real, "kind": "secrets"},
        {**real, "kind": "A"},
        {**real, "kind": "x" * 200},
        {**real, "sig": 5},
        {**real, "sig": "zz"},
        {**real, "table": "ab"},
        {**real, "author": "0" * 64},
        {**real, "prev": None},
        {**real, "body": {"to": big, "trick": big, "step": big, "seat": big}},
        {**real, "extra": 1},
    ]
    nested: object = real
    for _ in range(6):
        nested = {"first": nested, "second": [nested]}
    items.append(nested)
    return items


# Held (I3, I1, I2): Carol and Mallory sign blames and stops with crafted values: every wrong shape of
# evidence item (references with huge or negative seqs and wrong types, equivocation proofs of honest
# Alice's one real message with itself or with changed fields, her message relabelled as other kinds,
# tables, rounds at the 64-bit edges, nested proofs), seats and rules of every type, messages that are
# not text. Sent to both honest seats while they play and again once the table is stopped. Nothing
# raises out of `receive`/`tick`, no honest seat is convicted, and both end alike.
def test_crafted_blames_raise_nothing_and_convict_nobody_honest() -> None:
    h, alice, bob = dealt_table()
    t = h.now
    items = crafted_evidence(h, alice)
    seats: list[object] = [ALICE, BOB, MALLORY, None, True, -1, 4, (1 << 63) - 1, "0", [0], {"seat": 0}, 2.0]
    out: list[Output] = []
    i = 0
    for phase in ("live", "stopped"):
        for k, item in enumerate(items):
            author = (MALLORY, CAROL)[k % 2]
            seat = seats[k % len(seats)]
            seat = seat if not isinstance(seat, float) else None
            body = {
                "seat": seat,
                "rule": [k] if k % 5 == 0 else "P-5.1",
                "message": {"m": [k]} if k % 3 == 0 else "m",
                "evidence": [item, items[(k + 7) % len(items)]] if k % 4 else item,
            }
            kind = "blame" if k % 6 else "stop"
            msg = signed_by(h.sessions[author], kind, body)
            at = t + 0.01 * i
            i += 1
            for s in (alice, bob):
                out += s.receive(author, msg.to_wire(), at)
            out += alice.tick(at) + bob.tick(at)
        if phase == "live":
            assert alice.stage in ("stopped", "ended") and bob.stage in ("stopped", "ended")  # the attack fired
    settle(alice, bob, at=t + 300)
    assert not internal_errors(out), internal_errors(out)[:3]
    assert not convicted(alice) & {ALICE, BOB} and not convicted(bob) & {ALICE, BOB}  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2


# FIXED (I2, was a strict xfail), #2 in a shape that forwarding a held blame would not close: the vouch is held at Alice
# because it is over its author's quota there, and refused at Bob for the same reason. Carol fills her
# game-long meta quota (`inbox._quota_round` -1: 1 MiB) with big stops, chained at both honest seats
# (stopped: they change nothing). Then, at t + 2 steps - 0.01, a last small stop s that fills the quota
# goes to Bob alone, and her blame V at s + 1, naming Mallory, to Alice alone. At Alice V is held (the gap
# at s; `_hold` checks no quota) and vouches: Alice converts on her declined proof of Mallory's fault.
# Bob's gossip of s reaches Alice: s is chained, V stays held (`_accept_public`: over quota, it stays held
# "as it does at every other seat"). Alice's blame, and (if held blames were forwarded) V, reach Bob at
# + 0.1: V is the next seq there and over quota: refused, no vouch. Bob: k = 1, window closed; stopped.
# Where: `inbox._hold` counts the vouch of a message its chain will never take (over quota); the fix that
# covers #2 and this: a blame a widened window allowed carries the vouching blames it counted (quoted
# or referenced), and a seat counts the vouches a received blame carries (Dolev-Strong), or count a vouch
# only once the blame is chained (and forward held blames) — the quota then bounds vouches alike.
def test_a_vouch_over_its_authors_quota_is_held_at_one_seat_and_refused_at_the_other() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    late = faults_past_every_own_window(h, (MALLORY,))
    carol = h.sessions[CAROL]
    for i in range(4):
        big = signed_by(carol, "stop", {"rule": "P-5.3", "message": "x" * (250 << 10), "evidence": []})
        alice.receive(CAROL, big.to_wire(), late + 0.1 * i)
        bob.receive(CAROL, big.to_wire(), late + 0.1 * i)
    used = alice.usage[(CAROL, -1, True)][1]
    assert used == bob.usage[(CAROL, -1, True)][1] and used > 1_000_000
    pad = (1 << 20) - used - 600  # the filler's bytes leave less room than V needs
    filler = signed_by(carol, "stop", {"rule": "P-5.3", "message": "y" * pad, "evidence": []})
    body: JSONObject = {"seat": MALLORY, "rule": "P-5.1", "message": "vouch", "evidence": []}
    vouch = signed_by(carol, "blame", body)
    edge = t + 2 * step - 0.01
    out_bob = bob.receive(CAROL, filler.to_wire(), edge)
    out_alice = alice.receive(CAROL, vouch.to_wire(), edge)
    assert CAROL in alice.blamers.get(MALLORY, set())  # held at Alice: it vouches
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired
    out_alice += gossip(out_bob, BOB, alice, edge + 0.05)
    assert (carol.identity.peer_id, vouch.seq) in alice.held  # over quota: held for good at Alice
    out_bob += gossip(out_alice, ALICE, bob, edge + 0.1)
    out_bob += bob.receive(CAROL, vouch.to_wire(), edge + 0.1)  # as if held blames were forwarded
    settle(alice, bob, at=t + 3 * step + 1)
    assert not internal_errors(out_alice + out_bob)
    assert named(alice)[1] in (None, MALLORY) and named(bob)[1] in (None, MALLORY)  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2


# FIXED (I2, was a strict xfail), #1 with ONE cheater at a three-seat table (the cheaper shape): Alice (0), Mallory
# (1), Bob
# (2). Bob's link to Alice is down from t - 0.5. Mallory's groundless blame (naming Alice, no evidence) at
# t to Alice: Alice stops (`_on_blame` -> `_stop`), listens to t + 2 steps and ends stopped, nobody
# convicted. Bob's link comes back at t + 9.9; at t + 9.95 Mallory sends him the same blame: his own stop,
# with a window of his own though he was away (`clocks._stop`). Alice's stop (her gossip) reaches him
# at t + 10, and Mallory's own fault of play at t + 10.5: Bob convicts Mallory. Alice stopped with nobody
# convicted, Bob ended naming Mallory. Where and fix: as #1 (`clocks._stop` -> `self._end_known()`).
def test_one_cheater_three_seats_an_away_seats_own_stop_convicts_alone() -> None:
    from protocol.testing import Harness

    h = Harness("take6", 3, seed=91)
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    alice, bob = h.sessions[0], h.sessions[2]
    t = h.now
    bob.set_connected(0, False, t - 0.5)
    groundless = blame_by(h, 1, 0)
    out_alice = alice.receive(1, groundless.to_wire(), t)
    assert alice.stage == "stopped" and not convicted(alice)
    settle(alice, at=t + 9)
    assert named(alice) == ("stopped", None)
    bob.set_connected(0, True, t + 9.9)
    out_bob = bob.receive(1, groundless.to_wire(), t + 9.95)
    assert bob.stage == "stopped"  # the attack fired: Bob's own stop
    out_bob += gossip(out_alice, 0, bob, t + 10)
    out_bob += bob.receive(1, shown_choice(h, 1).to_wire(), t + 10.5)
    gossip(out_bob, 2, alice, t + 10.6)
    settle(alice, bob, at=t + 40)
    assert not internal_errors(out_bob)
    assert not convicted(alice) & {0, 2} and not convicted(bob) & {0, 2}  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2


# Held (I2, the away check on a cheater's link flap): Mallory flaps her link to Bob just before her fault
# to Bob alone at t: Bob convicts (no end known yet) but gets no window of his own (`_end_known`: just
# back). Alice convicts on Bob's gossip at t + 0.1 (her own window). Carol's fault then goes to Bob alone:
# ("early") at t + 0.5, declined at Bob, passed on, convicted at Alice inside her own window, and her
# blame gives Bob k = 1: both {Mallory, Carol}; ("late") at t + step + 0.05, past Alice's own window too:
# declined at both, both {Mallory}. The honest seats agree either way.
@pytest.mark.parametrize("when", ["early", "late"])
def test_a_flapped_link_before_a_first_conviction_and_a_second_fault_to_the_same_seat(when: str) -> None:
    h, alice, bob = dealt_table()
    t, step = h.now, h.settings.convert_step
    bob.set_connected(MALLORY, False, t - 0.2)
    bob.set_connected(MALLORY, True, t - 0.1)
    out_bob = bob.receive(MALLORY, shown_choice(h, MALLORY).to_wire(), t)
    assert verdicts(out_bob) == [MALLORY] and not bob.own_window  # the attack fired
    out_alice = gossip(out_bob, BOB, alice, t + 0.1)
    assert verdicts(out_alice) == [MALLORY] and alice.own_window
    at = t + 0.5 if when == "early" else t + step + 0.05
    more_bob = bob.receive(CAROL, shown_choice(h, CAROL).to_wire(), at)
    assert not verdicts(more_bob)  # declined at Bob: no window of his own
    more_alice = gossip(more_bob, BOB, alice, at + 0.1)
    gossip(more_alice, ALICE, bob, at + 0.2)
    settle(alice, bob, at=t + 40)
    expected = {MALLORY, CAROL} if when == "early" else {MALLORY}
    assert convicted(alice) == convicted(bob) == expected, (convicted(alice), convicted(bob))
    assert named(alice) == named(bob) == ("ended", MALLORY)


# Held (I4): once a stop is known, `listen_until` is fixed (stop + (n - 1) steps): a flood of blames from
# both colluders naming every seat and each other, every 0.1 s for a minute, never moves it, and nothing
# converts past it (both stay stopped with nobody convicted, as no proof was ever sent).
def test_a_flood_of_vouches_never_extends_listening() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    until = (alice.listen_until(), bob.listen_until())
    assert until == (t + 3 * step, t + 3 * step)
    out: list[Output] = []
    for i in range(600):
        author = (MALLORY, CAROL)[i % 2]
        msg = blame_by(h, author, (ALICE, MALLORY, BOB, CAROL, None)[i % 5])
        at = t + 0.1 * i
        out += alice.receive(author, msg.to_wire(), at) + bob.receive(author, msg.to_wire(), at)
        out += alice.tick(at) + bob.tick(at)
        assert (alice.listen_until(), bob.listen_until()) == until
    assert not internal_errors(out)
    assert named(alice) == named(bob) == ("stopped", None)
    assert all(len(v) <= 4 for s in (alice, bob) for v in s.blamers.values())


# Held (I6, I3): 5000 blames of Carol's, each past a gap (never chained: held out of order), naming every
# seat and junk: the hold stays within MAX_HELD per chain, the vouch table within n authors per seat;
# nothing raises. (They vouch at Alice alone: #2.)
def test_thousands_of_held_blames_stay_bounded() -> None:
    from protocol.table._state import MAX_HELD

    h, alice, _bob = stopped_table()
    t = h.now
    carol = h.sessions[CAROL]
    out: list[Output] = []
    junk: list[object] = [ALICE, MALLORY, BOB, CAROL, None, True, -1, 9, "1"]
    prev = "0" * 64
    for i in range(5000):
        body: JSONObject = {"seat": junk[i % len(junk)], "rule": "P-5.1", "message": "v", "evidence": []}
        msg = signed_at(h, CAROL, carol.my_seq + 1 + i, prev, "blame", body)
        prev = msg.digest()
        out += alice.receive(CAROL, msg.to_wire(), t + 0.001 * i)
    assert not internal_errors(out)
    held = [k for k in alice.held if k[0] == carol.identity.peer_id]
    assert len(held) == MAX_HELD, len(held)
    assert all(len(v) <= 4 for v in alice.blamers.values()) and len(alice.blamers) <= 5


def private_junk(h, author: int, to: int) -> SignedMessage:  # type: ignore[no-untyped-def]
    """`author`'s private message of a kind the protocol has not ("p.zzz") to `to`: its signed fault,
    provable to every seat by the message alone (`inbox._check_kind`, `blame._private_item_fault`)."""
    from protocol.signed import sign_message
    from protocol.table.values import private_channel

    s = h.sessions[author]
    seq, prev = s.private_out[to]
    channel = private_channel(h.settings.table, s.identity.peer_id, h.settings.seats[to].peer_id)
    return sign_message(s.identity, channel, s.round_index, seq, prev, "p.zzz", {"to": to})


# FIXED (I2, was a strict xfail): a vouch taken into a chain from a blame's evidence (`blame._take_in`) is not forwarded
# (`_accept_public(None, …)` -> `_queue(forward=False)`), and a stopped seat that converts on a blame's
# arrival (`_judge_late_blame` -> `_convert_declined()`, then `return`) never reads that blame's evidence.
# So colluders can make one honest seat count a vouch the other never sees, with no gap, fork or quota.
# Sequence: Mallory's bare stop at t to Alice and Bob (each relays its own stop 0.1 s later). At t + step
# + 0.5 (past both own windows) Mallory's fault of play to both (declined at both), and Carol's private
# message of no kind ("p.zzz") to Bob alone (declined at Bob only: a private fault). At t + 2 steps - 0.01
# Mallory's blame B2 naming Carol, whose evidence quotes B1, Carol's own blame naming Mallory (signed,
# never sent), goes to both. Bob: B2 vouches for Carol (k = 1), and on handling it `_convert_declined`
# converts his declined proof of Carol and returns: B1 is never read. Alice: no declined proof of Carol,
# so she reads B2's evidence: B1 is taken into Carol's chain, vouches for Mallory (k = 1), and Alice
# converts her declined proof of Mallory; B1 is not passed on. Their blames cross at + 0.1: at Alice,
# Bob's blame of Carol (checked: the p.zzz) with k = 2 (Mallory, Bob), window t + 3 steps: Alice convicts
# Carol. At Bob, Alice's blame of Mallory gives k = 1 (B1 never reached him), window t + 2 steps, past.
# Alice {Mallory, Carol} shows Mallory; Bob {Carol} shows Carol.
# Where: `protocol/table/blame.py` `_take_in` (via `inbox._accept_public(None, …)`: a message chained from
# evidence is not gossiped) and `_judge_late_blame` (returns on `_convert_declined()` before reading the
# evidence). Fix: forward whatever is chained, whatever brought it (`_queue(..., forward=True)` for a
# quoted message newly chained), and read the evidence before (or besides) converting; more robustly,
# the Dolev-Strong fix of #2 (a blame a widened window allowed carries the vouches it counted).
def test_a_vouch_quoted_in_evidence_is_counted_at_one_honest_seat_only() -> None:
    h, alice, bob = stopped_table()
    t, step = h.now, h.settings.convert_step
    late = faults_past_every_own_window(h, (MALLORY,))
    out = bob.receive(CAROL, private_junk(h, CAROL, BOB).to_wire(), late)
    assert not verdicts(out) and set(bob.declined_proofs) == {MALLORY, CAROL}  # declined at Bob alone
    assert set(alice.declined_proofs) == {MALLORY}
    b1 = blame_by(h, CAROL, MALLORY)  # signed, never sent
    b2 = signed_by(
        h.sessions[MALLORY], "blame", {"seat": CAROL, "rule": "P-5.1", "message": "x", "evidence": [b1.to_json()]}
    )
    edge = t + 2 * step - 0.01
    out_alice = alice.receive(MALLORY, b2.to_wire(), edge)
    out_bob = bob.receive(MALLORY, b2.to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY] and CAROL in verdicts(out_bob)  # the attack fired
    out_alice += gossip(out_bob, BOB, alice, edge + 0.1)
    out_bob += gossip(out_alice, ALICE, bob, edge + 0.1)
    settle(alice, bob, at=t + 3 * step + 1)
    assert not internal_errors(out_alice + out_bob)
    assert convicted(alice) <= {MALLORY, CAROL} and convicted(bob) <= {MALLORY, CAROL}  # I1
    assert named(alice) == named(bob), (named(alice), named(bob))  # I2, the verdict shown
    assert convicted(alice) == convicted(bob), (convicted(alice), convicted(bob))  # I2, the sets


# Held (I1, two seats: one honest seat against one cheater, k is always 0): Mallory claims Alice withheld
# the step Alice's clock names (and junk keys), before and after a groundless blame naming Alice that
# stops her, again and again through her listening: her own claims are the whole set at two seats, yet
# Alice never convicts herself (`clocks._owed_past_limit`; a stopped seat converts on no claim it knows
# false), and she settles stopped.
def test_two_seats_the_cheaters_claims_and_blame_never_convict_the_honest_seat() -> None:
    from protocol.testing import Harness

    h = Harness("take6", 2, seed=91)
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    alice, mallory = h.sessions[0], h.sessions[1]
    t = h.now
    assert alice.waiting() is not None
    key = alice._waiting_key
    out: list[Output] = []
    for i in range(40):
        k = (key, "0/play/0/2/2/x", "junk")[i % 3]
        claim = signed_by(mallory, "timeout", {"seat": 0, "step": k, "what": "choose"})
        out += alice.receive(1, claim.to_wire(), t + 0.5 * i)
        if i == 10:
            out += alice.receive(1, blame_by(h, 1, 0).to_wire(), t + 0.5 * i)
        out += alice.tick(t + 0.5 * i + 0.25)
    settle(alice, at=t + 600)
    assert not internal_errors(out)
    assert 0 not in convicted(alice), alice.convicted
    assert named(alice) == ("stopped", None)


# Held (I2, five seats, cheaters at 1 and 3 of 5, three honest seats 0, 2, 4): Mallory's bare stop to every
# honest seat at t (each relays its own stop 0.1 s later), her fault past every own window (declined at all
# three), then Carol's chained vouch for Mallory to Alice alone at the very edge of the k = 1 window
# (t + 2 steps - 0.01): Alice converts and her gossip (Carol's vouch passed on, her blame) gives Bob and
# Dave k = 2 0.1 s later: all three convict Mallory, and settle alike at t + 4 steps.
def test_five_seats_a_chained_vouch_at_the_edge_converts_every_honest_seat() -> None:
    from test_redteam14 import relay

    from protocol.testing import Harness

    h = Harness("take6", 5, seed=91)
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    honest = [h.sessions[s] for s in (0, 2, 4)]
    t, step = h.now, h.settings.convert_step
    stop = signed_by(h.sessions[1], "stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    outs = [s.receive(1, stop.to_wire(), t) for s in honest]
    for i, s in enumerate(honest):
        for j, o in enumerate(outs):
            if i != j:
                relay(o, (0, 2, 4)[j], s, t + 0.1)
    assert all(s.stage == "stopped" and s.stop_known_at == t for s in honest)
    fault = shown_choice(h, 1)
    for s in honest:
        assert not verdicts(s.receive(1, fault.to_wire(), t + step + 0.5))
    edge = t + 2 * step - 0.01
    out_alice = honest[0].receive(3, blame_by(h, 3, 1).to_wire(), edge)
    assert verdicts(out_alice) == [1], out_alice  # the attack fired
    for s in honest[1:]:
        gossip(out_alice, 0, s, edge + 0.1)
    settle(*honest, at=t + 4 * step + 1)
    assert [named(s) for s in honest] == [("ended", 1)] * 3, [named(s) for s in honest]
