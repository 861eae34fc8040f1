"""Red team 14: attacks on 7ee1c6c (a stop turns into a verdict only within a Dolev-Strong window,
`blame._may_convict`: k + 1 convert steps after this seat first knew of a stop, k the other seats'
blames naming the accused; no window of its own for k = 0 at a seat whose link just changed).

Driven seat by seat (sans-IO, as tests/test_stop_not_final.py), with explicit clocks: Mallory (a
modified client) times her stop and her fault of play; Alice and Bob run the real `TableSession`.
An attack withstood is a plain test; the one break found (#1) is fixed and its test now passes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_stop_not_final import table

from protocol.session import Blamed, Output, Send, TableSession
from protocol.signed import SignedMessage
from protocol.testing import Harness, settled

ALICE, MALLORY, BOB = 0, 1, 2


def mallory_stop(h: Harness) -> SignedMessage:
    stop = h.sessions[MALLORY]._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    assert stop is not None
    return stop


def shown_choice(h: Harness, seat: int = MALLORY) -> SignedMessage:
    """`seat` (a modified client) shows its 6 nimmt! choice openly: a fault of play (T-3.1, P-5.1) every
    seat judges by handling it in its chain (`inbox._shadow` at a stopped seat)."""
    alice = h.sessions[ALICE]
    assert alice.round is not None
    body = {"step": alice.round.step, "state": h.sessions[seat].state_hash(), "move": {"seat": seat, "card": 1}}
    shown = h.sessions[seat]._publish("move", body)
    assert shown is not None
    return shown


def forwarded(outputs: Sequence[object], msg: SignedMessage) -> bool:
    return any(isinstance(o, Send) and o.forward and o.data == msg.to_wire() for o in outputs)


def relay(outputs: Sequence[object], sender: int, to: TableSession, at: float) -> list[Output]:
    """Deliver what `sender` sent of its own (its stop, its blame) to `to`, in order."""
    out: list[Output] = []
    for o in outputs:
        if isinstance(o, Send) and not o.forward and o.to is None:
            out += to.receive(sender, o.data, at)
    return out


def own_message(outputs: Sequence[object], kind: str) -> bytes:
    sent = [o.data for o in outputs if isinstance(o, Send) and not o.forward and f'"kind":"{kind}"'.encode() in o.data]
    assert sent, f"no {kind} sent: {outputs}"
    return sent[-1]


def verdicts(outputs: Sequence[object]) -> list[int | None]:
    return [o.seat for o in outputs if isinstance(o, Blamed)]


def declined_then_vouched(unsteady: bool) -> tuple[TableSession, TableSession]:
    """Bob declines Mallory's fault of play (no window of his own: his link to Mallory just flapped,
    or the fault came to him just past his k = 0 window) and passes it on; Alice, within her window,
    convicts on it and publishes her blame; Bob then holds k = 1 and is within his 2-step window."""
    h = table()
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    step = h.settings.convert_step
    t = h.now
    stop = mallory_stop(h)
    if unsteady:
        # Mallory drops her link to Bob and restores it just before her stop (she controls her own link).
        bob.set_connected(MALLORY, False, t - 0.2)
        bob.set_connected(MALLORY, True, t - 0.1)
        stops_bob = bob.receive(MALLORY, stop.to_wire(), t)
        stops_alice = alice.receive(MALLORY, stop.to_wire(), t)
        late = t + 0.5
    else:
        # The stop reaches Bob first, Alice only by Bob's gossip 0.4 s later; the fault is sent to Bob
        # 0.1 s past his k = 0 window, and Bob's gossip of it reaches Alice 0.1 s later, inside hers.
        stops_bob = bob.receive(MALLORY, stop.to_wire(), t)
        stops_alice = alice.receive(BOB, stop.to_wire(), t + 0.4)
        late = t + step + 0.1
    relay(stops_bob, BOB, alice, t + 0.45)  # each one's own stop reaches the other
    relay(stops_alice, ALICE, bob, t + 0.45)
    assert alice.stage == bob.stage == "stopped"
    assert bob.own_window is (not unsteady)
    move = shown_choice(h)
    out_bob = bob.receive(MALLORY, move.to_wire(), late)
    assert bob.stage == "stopped" and not verdicts(out_bob), out_bob  # declined (k = 0)
    assert forwarded(out_bob, move), "Bob passes the fault on as he chains it"
    out_alice = alice.receive(BOB, move.to_wire(), late + 0.1)
    assert verdicts(out_alice) == [MALLORY], out_alice  # Alice, inside her window, convicts
    blame = own_message(out_alice, "blame")
    out_bob = bob.receive(ALICE, blame, late + 0.2)  # k = 1 at Bob now: inside his window (stop + 2 steps)
    assert ALICE in bob.blamers[MALLORY], f"Alice's blame is chained at Bob: {out_bob}"
    assert bob._may_convict(MALLORY), "Bob is inside his k = 1 window when Alice's blame comes"
    return alice, bob


# Was BROKEN (I2), red team 14 #1, fixed: a seat that declined a fault of play (k = 0: no window of its
# own, its link to Mallory flapped 0.1 s before her stop; or the fault sent to it 0.1 s past its k = 0
# window) never converted on the honest blame that vouched for it within its k = 1 window: Alice ended
# with Mallory convicted, Bob stayed stopped ("proves nothing here"). The decline handled the move
# (`handled[MALLORY]` moved past it), and a quoted public message proves something only when reached in
# the chain. Now `_decline` keeps the proof per accused (`declined_proofs`) and `_convert_declined`
# convicts on it once another seat's blame naming that accused makes `_may_convict` hold (Dolev-Strong:
# a value refused at level k is accepted with k + 1 vouches).
@pytest.mark.parametrize("unsteady", [True, False], ids=["link-flapped", "past-own-window"])
def test_declined_fault_of_play_converts_on_the_vouching_blame(unsteady: bool) -> None:
    alice, bob = declined_then_vouched(unsteady)
    assert settled(alice) == "ended" and alice.blame is not None and alice.blame.seat == MALLORY
    assert settled(bob) == "ended" and bob.blame is not None and bob.blame.seat == MALLORY, (
        f"Alice convicted Mallory, Bob is {bob.stage}"
    )


# Held: the window edge. Mallory sends her fault of play to Alice alone just inside Alice's k = 0 window
# (stop + convert_step - 0.05 s); Alice convicts and passes it on, and Bob, reaching it or Alice's blame
# 0.2 s later (past his own k = 0 window), converts on k = 1 as Alice's blame arrives first: the blame
# carries the move, which Bob judges himself as he reaches it in the chain. Both end convicting Mallory.
def test_fault_at_the_window_edge_to_one_seat_convicts_at_both() -> None:
    h = table()
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    t, step = h.now, h.settings.convert_step
    stop = mallory_stop(h)
    stops_alice = alice.receive(MALLORY, stop.to_wire(), t)
    stops_bob = bob.receive(MALLORY, stop.to_wire(), t)
    relay(stops_bob, BOB, alice, t + 0.05)
    relay(stops_alice, ALICE, bob, t + 0.05)
    move = shown_choice(h)
    out_alice = alice.receive(MALLORY, move.to_wire(), t + step - 0.05)
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired: a verdict at the very edge
    blame = own_message(out_alice, "blame")
    out_bob = bob.receive(ALICE, blame, t + step + 0.15)
    assert settled(bob) == "ended" and bob.blame is not None and bob.blame.seat == MALLORY, out_bob
    assert all(s.blame is None or s.blame.seat == MALLORY for s in (alice, bob))  # I1


# Held: a fault of play sent past every window (stop + 3 steps, to Alice, passed on to Bob) convicts
# nowhere: the same stop stands at both (I2), each declines it once per accused (I6), and nothing can
# convert after listen_until (stop + (n - 1) steps).
def test_a_fault_past_every_window_leaves_every_seat_stopped() -> None:
    h = table()
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    t, step = h.now, h.settings.convert_step
    stop = mallory_stop(h)
    alice.receive(MALLORY, stop.to_wire(), t)
    bob.receive(MALLORY, stop.to_wire(), t)
    move = shown_choice(h)
    late = t + 3 * step
    out = alice.receive(MALLORY, move.to_wire(), late)
    out += bob.receive(ALICE, move.to_wire(), late + 0.1)
    assert not verdicts(out) and alice.stage == bob.stage == "stopped", out
    assert MALLORY in alice.declined and MALLORY in bob.declined  # the attack fired: the proof was declined
    assert (alice.listen_until() or 0) <= t + 2 * step + 1e-9
