"""Red team 15: attacks on af8ec5a (a proof declined past a seat's window is kept, `declined_proofs`,
and convicts once another seat's blame naming the same accused makes `blame._may_convict` hold,
`blame._convert_declined`).

Four seats, driven seat by seat with explicit clocks as tests/test_redteam14.py: Alice and Bob run the
real `TableSession`; Mallory (seat 1) and her colluder Carol (seat 3) are modified clients that sign
what they like with their own keys (their sessions serve only to sign in chain order). An attack
withstood is a plain test; #1 (a forked vouch) and #2 (two cheaters vouching crosswise) are fixed and
pass as the attacks.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_redteam14 import relay, shown_choice, verdicts
from test_stop_not_final import dealt

from engine.api import JSONObject
from protocol.session import Output, Send, TableSession
from protocol.signed import SignedMessage, sign_message
from protocol.testing import Harness, settled

ALICE, MALLORY, BOB, CAROL = 0, 1, 2, 3
HONEST = (ALICE, BOB)


def stopped_table() -> tuple[Harness, TableSession, TableSession]:
    """Four seats dealt; Mallory's bare stop reaches Alice and Bob at `h.now`, each one's own stop
    the other 0.1 s later: both stopped, own window (k = 0) until stop + convert_step."""
    h = Harness("take6", 4, seed=91)
    h.run(until=dealt)
    h._drain_in_flight(100_000)
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    t = h.now
    stop = h.sessions[MALLORY]._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    assert stop is not None
    out_alice = alice.receive(MALLORY, stop.to_wire(), t)
    out_bob = bob.receive(MALLORY, stop.to_wire(), t)
    relay(out_bob, BOB, alice, t + 0.1)
    relay(out_alice, ALICE, bob, t + 0.1)
    assert alice.stage == bob.stage == "stopped" and alice.own_window and bob.own_window
    assert alice.stop_known_at == bob.stop_known_at == t
    return h, alice, bob


def faults_past_every_own_window(h: Harness, seats: tuple[int, ...]) -> float:
    """Each of `seats` shows its choice to Alice and Bob at stop + convert_step + 0.5: declined at both."""
    late = h.now + h.settings.convert_step + 0.5
    for seat in seats:
        shown = shown_choice(h, seat)
        out = h.sessions[ALICE].receive(seat, shown.to_wire(), late)
        out += h.sessions[BOB].receive(seat, shown.to_wire(), late)
        assert not verdicts(out), out
    for s in (h.sessions[ALICE], h.sessions[BOB]):
        assert s.stage == "stopped" and set(s.declined_proofs) == set(seats), s.declined_proofs
    return late


def blame_by(h: Harness, author: int, accused: int | None, *, seq_of: SignedMessage | None = None) -> SignedMessage:
    """A blame naming `accused` with no evidence (garbage: it proves nothing), next in `author`'s chain,
    or at the very place of `seq_of` (a second version: a fork of `author`'s chain)."""
    body: JSONObject = {"seat": accused, "rule": "P-5.1", "message": "vouch", "evidence": []}
    if seq_of is None:
        msg = h.sessions[author]._publish("blame", body)
        assert msg is not None
        return msg
    return sign_message(h.identities[author], h.settings.table, seq_of.round, seq_of.seq, seq_of.prev, "blame", body)


def named(s: TableSession) -> tuple[str, int | None]:
    """The seat's end once its verdict has settled (`settled`)."""
    return settled(s), (s.blame.seat if s.blame is not None else None)


def gossip(outputs: Sequence[object], sender: int, to: TableSession, at: float) -> list[Output]:
    """Deliver everything `sender` sent to all (its own messages and what it passed on) to `to`."""
    out: list[Output] = []
    for o in outputs:
        if isinstance(o, Send) and o.to is None:
            out += to.receive(sender, o.data, at)
    return out


# Held (idea 1, 5): Carol's garbage blame naming Mallory, sent to Alice alone at the very edge of Alice's
# k = 1 window (stop + 2 steps - 0.01 s): Alice converts on her OWN declined proof (the blame's evidence
# proves nothing; the vouch only widens the window), publishes her blame and passes Carol's on; Bob,
# 0.1 s later, holds k = 2 (Alice and Carol) and converts too. Both name Mallory.
def test_a_colluders_vouch_to_one_seat_at_the_window_edge_converts_both() -> None:
    h, alice, bob = stopped_table()
    faults_past_every_own_window(h, (MALLORY,))
    edge = h.now + 2 * h.settings.convert_step - 0.01
    out_alice = alice.receive(CAROL, blame_by(h, CAROL, MALLORY).to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired: a conversion at the edge
    out_bob = gossip(out_alice, ALICE, bob, edge + 0.1)
    assert bob.blamers[MALLORY] == {ALICE, CAROL} and verdicts(out_bob) == [MALLORY], out_bob
    assert named(alice) == named(bob) == ("ended", MALLORY)  # I1, I2


# Was BROKEN (I2), red team 15 #1, fixed: idea 1 with a fork. Carol forks her chain at one seq: Bob gets
# a blame naming Alice (proves nothing, refused), Alice gets a blame naming Mallory at stop + 2 steps -
# 0.01 s. Alice (k = 1) convicts Mallory ("declined": on her own declined proof of Mallory's fault;
# "quoted": on the fault Carol's blame quotes, never sent before) and passes Carol's version on; at Bob
# that version is a fork, never chained, so Bob counted only Alice's blame (k = 1, window stop + 2 steps)
# and Alice's blame came 0.09 s past it: Alice ended naming Mallory, Bob stayed stopped. Now a fork half
# that is a signed blame vouches as a chained one does (`SessionCore._note_vouch` from
# `blame._blame_equivocation`): k = 2 at Bob, window stop + 3 steps, and Bob convicts Mallory too.
@pytest.mark.parametrize("how", ["declined", "quoted"])
def test_a_forked_vouch_converts_one_honest_seat_only(how: str) -> None:
    h, alice, bob = stopped_table()
    step = h.settings.convert_step
    if how == "declined":
        faults_past_every_own_window(h, (MALLORY,))
        evidence: list[JSONObject] = []
    else:
        evidence = [shown_choice(h, MALLORY).to_json()]  # sent to nobody: only quoted
    to_bob = blame_by(h, CAROL, ALICE)
    body: JSONObject = {"seat": MALLORY, "rule": "P-5.1", "message": "vouch", "evidence": evidence}
    to_alice = sign_message(h.identities[CAROL], h.settings.table, to_bob.round, to_bob.seq, to_bob.prev, "blame", body)
    assert not verdicts(bob.receive(CAROL, to_bob.to_wire(), h.now + 2 * step - 0.5))
    edge = h.now + 2 * step - 0.01
    out_alice = alice.receive(CAROL, to_alice.to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired
    gossip(out_alice, ALICE, bob, edge + 0.1)
    assert bob.blamers[MALLORY] == {ALICE, CAROL}  # the fork half vouches too
    assert bob.listen_until() == h.now + 3 * step
    bob.tick(h.now + 3 * step + 1)  # past listen_until: nothing more can convert at Bob
    alice.tick(h.now + 3 * step + 1)
    assert named(bob) == named(alice) == ("ended", MALLORY), f"Alice {named(alice)}, Bob {named(bob)}"


# FIXED (I2; was a strict xfail): a verdict settles at listen_until over every seat convicted by then, the
# lowest shown (`blame.settle_verdict`), so both honest seats convict both cheaters.
# The attack, idea 3: two cheaters, each with a fault past every own window (declined at Alice and Bob:
# declined_proofs holds both). At stop + 3.5 s (inside every k = 1 window) Carol's blame naming Mallory
# goes to Alice alone and Mallory's naming Carol to Bob alone: Alice converts on Mallory, Bob on Carol;
# each one's blame then reaches the other, ended. Both guilty (I1 holds) but the honest seats name
# different seats. Before af8ec5a both stayed stopped (agreed). Where: `_convert_declined` convicts the
# first accused whose window a vouch opened, at once. Repro: this test (deterministic). Suggested fix:
# Dolev-Strong extraction: a seat publishes a vouching blame for every declined accused a vouch opens,
# but decides only at listen_until, on a deterministic choice (lowest seat) among the accused it could
# convict; or at least convert on the lowest declined accused whose window is open, and let a later
# honest blame naming a lower seat within window replace an ended verdict (harder).
def test_two_cheaters_vouch_for_each_other_and_split_the_honest_seats() -> None:
    h, alice, bob = stopped_table()
    late = faults_past_every_own_window(h, (MALLORY, CAROL))
    for_alice = blame_by(h, CAROL, MALLORY)
    for_bob = blame_by(h, MALLORY, CAROL)
    out_alice = alice.receive(CAROL, for_alice.to_wire(), late + 1)
    out_bob = bob.receive(MALLORY, for_bob.to_wire(), late + 1)
    assert verdicts(out_alice) == [MALLORY] and verdicts(out_bob) == [CAROL]  # the attack fired
    gossip(out_alice, ALICE, bob, late + 1.1)
    gossip(out_bob, BOB, alice, late + 1.1)
    assert all(named(s)[1] in (MALLORY, CAROL) for s in (alice, bob))  # I1 holds
    assert named(alice) == named(bob), f"Alice {named(alice)}, Bob {named(bob)}"
    assert set(alice.convicted) == set(bob.convicted) == {MALLORY, CAROL}


# Held (idea 2): Carol blames honest Alice (k for Alice grows at Bob) and then Alice again and nobody
# (seat null): no declined proof against Alice exists anywhere (only real proofs are declined: Mallory's),
# so nothing converts on Alice; Bob stays stopped. A later garbage vouch naming Mallory converts both on
# their own proofs of Mallory (idea 5).
def test_vouching_against_an_honest_seat_converts_nothing_against_it() -> None:
    h, alice, bob = stopped_table()
    late = faults_past_every_own_window(h, (MALLORY,))
    out: list[Output] = []
    for accused in (ALICE, BOB, None):
        msg = blame_by(h, CAROL, accused)
        out += alice.receive(CAROL, msg.to_wire(), late + 0.5) + bob.receive(CAROL, msg.to_wire(), late + 0.5)
    assert bob.blamers[ALICE] == {CAROL} and alice.blamers[BOB] == {CAROL}  # the attack fired
    assert not verdicts(out) and alice.stage == bob.stage == "stopped", out
    assert set(alice.declined_proofs) == set(bob.declined_proofs) == {MALLORY}
    vouch = blame_by(h, CAROL, MALLORY)
    alice.receive(CAROL, vouch.to_wire(), late + 1)
    bob.receive(CAROL, vouch.to_wire(), late + 1)
    assert named(alice) == named(bob) == ("ended", MALLORY)


# Held (idea 4): 60 blames by Carol naming every seat and nobody, chained at Alice: `blamers` stays one
# set per seat (or null) of at most n authors, `declined_proofs` one entry per accused.
def test_many_blames_keep_the_vouch_tables_bounded() -> None:
    h, alice, _bob = stopped_table()
    late = faults_past_every_own_window(h, (MALLORY,))
    for i in range(60):
        accused = (ALICE, BOB, CAROL, None)[i % 4]
        alice.receive(CAROL, blame_by(h, CAROL, accused).to_wire(), late + 0.01 * i)
    n = len(h.settings.seats)
    assert alice.blamers[ALICE] == {CAROL} and len(alice.blamers) <= n + 1  # the attack fired
    assert all(len(v) <= n for v in alice.blamers.values()) and len(alice.declined_proofs) <= n
    assert alice.stage == "stopped", alice.stage  # no vouch for Mallory: nothing converts
