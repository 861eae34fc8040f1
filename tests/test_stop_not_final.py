"""A stop is not final (`stopped -> ended`, I2): a seat that stopped with nobody convicted turns its
stop into the conviction another seat reached at the same instant, on evidence it checks without
playing on, and on nothing else (I1). Red teams 7 and 8 found the race (tests/test_redteam7.py,
tests/test_redteam8.py); these tests pin the transition itself, seat by seat.
"""

from __future__ import annotations

from protocol.session import Blamed, Refused, Send, Stopped, TableSession
from protocol.signed import SignedMessage, sign_message
from protocol.testing import Harness

ALICE, MALLORY, BOB = 0, 1, 2


def dealt(h: Harness) -> bool:
    return all(s.stage == "play" for s in h.sessions)


def table() -> Harness:
    h = Harness("take6", 3, seed=91)
    h.run(until=dealt)
    h._drain_in_flight(100_000)  # every message sent so far is in, so Mallory's next one is in order
    return h


def stopped_by_mallory(h: Harness) -> TableSession:
    """Mallory (a modified client) sends Alice alone a bare `stop` (I2: Alice stops, nobody convicted)."""
    mallory, alice = h.sessions[MALLORY], h.sessions[ALICE]
    stop = mallory._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    out = alice.receive(MALLORY, stop.to_wire(), h.now)
    assert alice.stage == "stopped" and any(isinstance(o, Stopped) for o in out), out
    return alice


def own_message(outputs: list[object], kind: str) -> bytes:
    sent = [o.data for o in outputs if isinstance(o, Send) and not o.forward and f'"kind":"{kind}"'.encode() in o.data]
    assert sent, f"no {kind} sent: {outputs}"
    return sent[-1]


def junk_from_mallory(h: Harness) -> SignedMessage:
    """A signed message of a kind the protocol has not: its signer's fault, provable anywhere (P-1.3)."""
    mallory = h.sessions[MALLORY]
    return sign_message(
        h.identities[MALLORY], h.settings.table, mallory.round_index, mallory.my_seq, mallory.my_prev, "junk", {"x": 1}
    )


def test_a_stopped_seat_turns_its_stop_into_the_conviction_another_seat_reached() -> None:
    h = table()
    alice = stopped_by_mallory(h)
    bob = h.sessions[BOB]
    convicted = bob.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now)  # P-1.3 at Bob
    assert [b.seat for b in convicted if isinstance(b, Blamed)] == [MALLORY]
    out = alice.receive(BOB, own_message(convicted, "blame"), h.now + 0.1)
    blames = [o for o in out if isinstance(o, Blamed)]
    assert [(b.seat, b.rule) for b in blames] == [(MALLORY, "P-1.3")], out
    assert alice.stage == "ended" and alice.blame == blames[0]
    # Alice publishes the same checkable verdict, so a third seat still stopped reaches it from her too.
    assert own_message(out, "blame")


def test_a_fault_sent_to_a_stopped_seat_itself_convicts_there() -> None:
    h = table()
    alice = stopped_by_mallory(h)
    out = alice.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now + 0.1)
    assert [(b.seat, b.rule) for b in out if isinstance(b, Blamed)] == [(MALLORY, "P-1.3")], out
    assert alice.stage == "ended"


def test_a_blame_that_needs_the_play_leaves_a_stopped_seat_stopped() -> None:
    """Bob's blame quotes one of Mallory's public messages (an honest one, here): judging it would
    need the play Alice stopped, so it proves nothing at her seat (I1) and she stays stopped."""
    h = table()
    alice = stopped_by_mallory(h)
    bob = h.sessions[BOB]
    quoted = bob.tracker.messages(h.settings.seats[MALLORY].peer_id)[-1]
    blame = bob._publish("blame", {"seat": MALLORY, "rule": "P-5.1", "message": "x", "evidence": [quoted.to_json()]})
    out = alice.receive(BOB, blame.to_wire(), h.now + 0.1)
    assert not [o for o in out if isinstance(o, Blamed)], out
    assert any(isinstance(o, Refused) for o in out), out
    assert alice.stage == "stopped" and alice.blame is None


def test_claims_against_a_stopped_seat_itself_never_convert_its_stop() -> None:
    """Every other seat's claim that Alice withheld a step (two colluders at three seats): Alice knows
    she owes nothing once stopped, so the claims convict nobody at her seat (I1, P-5.3)."""
    h = table()
    alice = stopped_by_mallory(h)
    for seat in (MALLORY, BOB):
        claim = h.sessions[seat]._publish("timeout", {"seat": ALICE, "step": "0/play/0/3/3/x", "what": "x"})
        out = alice.receive(seat, claim.to_wire(), h.now + 0.1)
        assert not [o for o in out if isinstance(o, Blamed)], out
    out = alice.tick(h.now + 600)
    assert not [o for o in out if isinstance(o, Blamed)] and alice.stage == "stopped", out


def test_a_stopped_seat_makes_no_move_and_sends_nothing_of_its_own() -> None:
    h = table()
    alice = stopped_by_mallory(h)
    assert alice.decision() == () and alice.waiting() is None
    out = alice.tick(h.now + 600)
    assert not [o for o in out if isinstance(o, Send)], out
    # private messages are not taken any more: nothing private is owed or checked once stopped
    bob = h.sessions[BOB]
    bob._send_private(ALICE, "p.peek", {"trick": 0})
    private = [o.data for o in bob.drain() if isinstance(o, Send) and o.to == ALICE]
    alice.receive(BOB, private[-1], h.now + 1)
    assert not alice.last_input_kept and alice.stage == "stopped"


def test_one_of_claims_never_convert_a_stop() -> None:
    """A step one of several seats owes is claimed naming nobody (P-5.3, X-2.2); who owes it follows
    from who may be stuck (blames waiting), which a stopped seat no longer follows (red team 9 #4: it
    convicted an honest seat whose excuse it had dropped). So every seat but Bob claiming such a step,
    Alice's claim made before she stopped, convicts nobody at her seat, however long it stands (I1)."""
    h = table()
    alice = h.sessions[ALICE]
    key = "0/play/0/3/3/one-of"
    alice._claim(None, key, "open")
    alice.drain()
    stopped_by_mallory(h)
    claim = h.sessions[MALLORY]._publish("timeout", {"seat": None, "step": key, "what": "open"})
    out = alice.receive(MALLORY, claim.to_wire(), h.now + 0.1)
    out += alice.tick(h.now + 600)
    assert set(alice.claims[(None, key)]) == {ALICE, MALLORY}, "both claims are in"
    assert not [o for o in out if isinstance(o, Blamed)] and alice.stage == "stopped", out
