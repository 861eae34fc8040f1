"""Issue 9's findings, each written as the attack: a modified `TableSession` at one seat (it signs
what it crafts with its own key, as a modified client would), the real session everywhere else,
and the invariant asserted at every honest seat.

I1: no honest seat is blamed. I2: honest seats reach the same verdict, or the same stop with
nobody convicted. I3: no input raises. I4: every table ends; time away is not withholding.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.api import IllegalMove
from protocol.commitment import commit
from protocol.encoding import JSONObject
from protocol.errors import CheatDetected
from protocol.session import CHOICE_TAG, Blamed, NetworkLost, Send, Stopped, TableSession
from protocol.signed import SignedMessage, sign_message
from protocol.table._round import _PrivateFault
from protocol.table._state import MAX_HELD_BYTES
from protocol.testing import Faults, Harness, settled

MALLORY = 1


def honest(h: Harness) -> list[int]:
    return [s for s in range(len(h.sessions)) if s != MALLORY]


def assert_no_honest_seat_blamed(h: Harness) -> None:
    """I1 at every honest seat, and I2: every honest seat ended the same way."""
    outcomes = set()
    for seat in honest(h):
        blames = h.blames(seat)
        assert all(b.seat in (None, MALLORY) for b in blames), f"seat {seat} blamed an honest seat: {blames}"
        stopped = any(isinstance(e, Stopped) for e in h.events[seat])
        outcomes.add((blames[0].seat, blames[0].rule) if blames else ("stopped" if stopped else h.sessions[seat].stage))
    assert len(outcomes) == 1, f"honest seats disagree: {outcomes}"


def assert_mallory_convicted(h: Harness, rule: str | None = None) -> None:
    for seat in honest(h):
        blames = h.blames(seat)
        assert blames and blames[0].seat == MALLORY, f"seat {seat}: {blames}"
        if rule is not None:
            assert blames[0].rule == rule, f"seat {seat}: {blames[0]}"


def dealt(h: Harness) -> bool:
    return all(s.stage == "play" for s in h.sessions)


# --- finding 1: framing an honest seat with an old message (I1) --------------------------------


class Framer(TableSession):
    """Keeps the hand keys Alice (seat 0) sent it in round 0 and, in round 1, publishes them as
    evidence that Alice cheated."""

    kept: SignedMessage | None = None

    def _on_private_keys(self, seat: int, msg: SignedMessage) -> bool:
        if seat == 0 and self.kept is None:
            self.kept = msg
        return super()._on_private_keys(seat, msg)

    def _try_deal(self) -> None:
        super()._try_deal()
        rd = self.round
        if rd is not None and rd.index == 1 and rd.dealt and self.kept is not None and self.stage == "play":
            evidence = [self.kept.to_json()]
            self._publish("blame", {"seat": 0, "rule": "P-4.3", "message": "bad keys", "evidence": evidence})
            self.stage = "ended"


def test_an_old_private_message_as_evidence_never_convicts_its_signer() -> None:
    h = Harness("sixth-sense", 3, seed=61, factories={MALLORY: Framer})
    h.run()
    assert_no_honest_seat_blamed(h)
    assert all(any(isinstance(e, Stopped) for e in h.events[s]) for s in honest(h)), "the table stops, nobody convicted"


# --- finding 3: a hand card named without its position and keys (I1, I5) -----------------------


class NamesCards(TableSession):
    def _wire_card(self, card_json: object) -> object:
        return card_json  # the bare name: a card it may not hold


def test_a_bare_card_name_from_a_hidden_hand_is_blamed_on_its_mover() -> None:
    h = Harness("sixes", 3, {"chips": 1}, seed=62, factories={MALLORY: NamesCards})
    h.run()
    assert_mallory_convicted(h, "P-4.3")
    assert_no_honest_seat_blamed(h)


# --- finding 4: a stop for an audit relayed by an honest seat (I1) -----------------------------


class WhispersAbort(TableSession):
    """Asks for an audit without cause, telling only seat 0: seat 0 answers first, the others
    hear of it through seat 0."""

    def _publish(self, kind: str, body: JSONObject) -> Any:
        msg = super()._publish(kind, body)
        if kind == "abort":
            self._out[-1] = Send(0, msg.to_wire())
        return msg

    def _try_deal(self) -> None:
        super()._try_deal()
        rd = self.round
        if rd is not None and rd.dealt and not rd.aborting:
            self._abort_round("P-4.3", "a card opened to nothing (not true)")


def test_an_abort_relayed_by_an_honest_seat_is_blamed_on_its_author_only() -> None:
    h = Harness("sixth-sense", 3, seed=63, faults=Faults(max_delay=0.05), factories={MALLORY: WhispersAbort})
    h.run()
    assert_mallory_convicted(h, "P-5.2")
    assert_no_honest_seat_blamed(h)


# --- findings 5 and 6: crafted committed values (I3) -------------------------------------------


class CommitsGarbageCard(TableSession):
    def _card_reference(self, card_json: object) -> JSONObject:
        return {"card": "zz"}


def test_a_committed_card_that_is_no_card_is_blamed_not_raised() -> None:
    h = Harness("take6", 3, seed=64, factories={MALLORY: CommitsGarbageCard})
    h.run()  # an exception escaping `receive` fails the test here
    assert_mallory_convicted(h)
    assert_no_honest_seat_blamed(h)
    assert all(h.sessions[s].stage == "ended" for s in honest(h))


class CommitsNonObject(TableSession):
    """Commits its prediction to bytes that are no JSON object; plays on with its real card."""

    def _publish(self, kind: str, body: JSONObject) -> Any:
        rd = self.round
        if kind == "commit" and rd is not None and self.game.expected(self.state).kind == "predict":
            garbage = b"[1, 2, 3]"
            commitment, opening = commit(CHOICE_TAG, self.settings.table, rd.index, self.me, garbage, b"\x01" * 32)
            self.hidden_openings[rd.step] = opening
            body = {**body, "digest": commitment.hex()}
        return super()._publish(kind, body)


def test_a_prediction_committed_to_non_object_bytes_is_blamed_and_the_audit_does_not_stall() -> None:
    h = Harness("sixth-sense", 3, seed=65, factories={MALLORY: CommitsNonObject})
    h.run()
    assert_mallory_convicted(h)
    assert_no_honest_seat_blamed(h)


class SuperscriptStep(TableSession):
    def _publish(self, kind: str, body: JSONObject) -> Any:
        if kind == "secrets":
            body = {**body, "openings": {"\u00b2": {"value": "00", "nonce": "00" * 32}}}
        return super()._publish(kind, body)


def test_a_non_ascii_digit_step_key_is_blamed_not_raised() -> None:
    # "²".isdigit() is True and int("²") raises: the check is on ASCII digits (I3).
    h = Harness("sixth-sense", 3, seed=66, factories={MALLORY: SuperscriptStep})
    h.run()
    assert_mallory_convicted(h, "P-5.2")


# --- finding 7: an evidence-free blame does not buy time (I4) -----------------------------------


class StallsWithBlames(TableSession):
    def _my_shuffle(self) -> None:
        self._publish("blame", {"seat": 0, "rule": "P-4.2", "message": "no reason", "evidence": []})


def test_an_evidence_free_blame_stops_the_table_and_convicts_nobody() -> None:
    h = Harness("sixth-sense", 3, seed=67, factories={MALLORY: StallsWithBlames})
    h.run()
    assert_no_honest_seat_blamed(h)
    for seat in honest(h):
        assert h.sessions[seat].stage == "stopped", "the table stops, nobody convicted (I2, I4)"
        assert any(isinstance(e, Stopped) for e in h.events[seat])


# --- finding 8: a message timed at the limit (I2) -----------------------------------------------


class LateToOne(TableSession):
    """Sends its shuffle to seat 0 only; seat 2 hears of it only through seat 0's gossip."""

    def _my_shuffle(self) -> None:
        super()._my_shuffle()
        last = self._out[-1]
        assert isinstance(last, Send)
        self._out[-1] = Send(0, last.data)


def test_a_step_that_reached_one_seat_in_time_convicts_nobody() -> None:
    h = Harness("sixth-sense", 3, seed=68, factories={MALLORY: LateToOne})
    h.start()
    alice, bob = h.sessions[0], h.sessions[2]
    h.run(until=lambda h: alice.round is not None and len(alice.round.shuffles) >= 2)
    # Bob's clock for Mallory's shuffle runs out before Alice's gossip reaches him.
    late = h.now + h.settings.step_timeout + 1
    h._route(2, bob.tick(late))
    assert bob.my_claim is not None and bob.my_claim[0] == MALLORY
    h.run()
    assert_no_honest_seat_blamed(h)
    assert all(not h.blames(s) for s in honest(h)), "one seat's clock convicts nobody"


def test_a_step_withheld_from_everyone_is_convicted_on_every_claim() -> None:
    class Withholder(TableSession):
        def _my_shuffle(self) -> None:
            pass

    h = Harness("sixth-sense", 3, seed=69, factories={MALLORY: Withholder})
    h.run()
    assert_mallory_convicted(h, "P-5.3")
    evidence = h.blames(0)[0].evidence
    assert sorted(e["author"] for e in evidence) == sorted(h.settings.seats[s].peer_id for s in honest(h))


# --- finding 9: a seat that comes back; a laptop with no link (I4) ------------------------------


def test_time_away_within_the_reconnect_limit_is_not_withholding() -> None:
    h = Harness("sixth-sense", 3, seed=70)
    session = h.sessions[0]
    session.start(0.0)
    session.drain()
    session.set_connected(1, False, 0.0)
    limit = h.settings.step_timeout
    assert not session.tick(limit * 3), "a disconnected seat is waited for"  # seat 2 connected: see below
    session.set_connected(2, False, 1.0)
    events = session.tick(limit * 4)
    assert any(isinstance(e, NetworkLost) for e in events), "every link down: this laptop lost the network"
    assert session.my_claim is None
    session.set_connected(1, True, limit * 5)
    session.set_connected(2, True, limit * 5)
    session.tick(limit * 5 + limit / 2)
    assert session.my_claim is None, "a seat that came back has a fresh limit"
    session.resumed(limit * 10)
    session.tick(limit * 10 + limit / 2)
    assert session.my_claim is None, "after a resume every clock restarts"
    session.tick(limit * 12)
    assert session.my_claim is not None, "the fresh limit does run out"


def test_receive_tells_the_runner_which_inputs_were_kept() -> None:
    h = Harness("sixth-sense", 2, seed=71)
    a, b = h.sessions
    out = [o for o in b.start(0.0) if isinstance(o, Send)]
    a.start(0.0)
    a.receive(1, out[0].data, 0.1)
    assert a.last_input_kept
    a.receive(1, out[0].data, 0.2)
    assert not a.last_input_kept, "a duplicate is not journaled again"
    a.receive(1, b"garbage", 0.3)
    assert not a.last_input_kept


# --- I1: a conclusion from private knowledge stops the round, it never names a seat ------------


def test_a_move_refused_only_by_this_seats_own_hand_is_a_private_fault_not_a_blame() -> None:
    h = Harness("sixth-sense", 3, seed=72)
    h.run(until=dealt)
    alice = h.sessions[0]
    assert alice.round is not None and alice.game.expected(alice.state).kind == "predict"
    card = next(iter(alice.round.my_cards.values()))
    try:  # seat 1 "predicts" a card Alice holds (S-2.4): only Alice can see that
        alice._next_state(alice.state, 1, {"seat": 1, "predict": card})
    except _PrivateFault:
        pass  # the audit decides (I1)
    except CheatDetected as exc:
        raise AssertionError(f"a private conclusion named seat {exc.seat}") from exc
    else:
        raise AssertionError("a card Alice holds was accepted from another seat")
    with pytest.raises(CheatDetected):  # a card that is no card is refused on public knowledge
        alice._next_state(alice.state, 1, {"seat": 1, "predict": "zz"})


def test_an_equivocation_proof_from_another_table_proves_nothing_here() -> None:
    a = Harness("sixth-sense", 2, seed=73)
    ident = a.identities[1]
    other_table = "ab" * 16
    first = sign_message(ident, other_table, 0, 0, "0" * 64, "seed.commit", {"digest": "00" * 32})
    second = sign_message(ident, other_table, 0, 0, "0" * 64, "seed.commit", {"digest": "11" * 32})
    proof = {"first": first.to_json(), "second": second.to_json()}
    alice = a.sessions[0]
    assert alice._evidence_verdict(0, 1, "P-1.3", (proof,)) is False


# --- I6: bounded memory from a seated peer ------------------------------------------------------


def test_held_out_of_order_messages_are_capped_by_bytes() -> None:
    h = Harness("sixth-sense", 3, seed=74)
    alice = h.sessions[0]
    alice.start(0.0)
    pad = "x" * 200_000
    kept = 0
    for i in range(60):
        msg = sign_message(h.identities[MALLORY], h.settings.table, 0, 1000 + i, "ab" * 32, "move", {"pad": pad})
        alice.receive(MALLORY, msg.to_wire(), 1.0)
        kept += alice.last_input_kept
    assert sum(alice.held_bytes.values()) <= MAX_HELD_BYTES
    assert kept < 60, "past the cap, held messages are refused and not journaled"
    assert alice.stage == "seed" and not any(isinstance(o, Blamed) for o in alice.drain())


def test_a_seat_that_keeps_flapping_its_link_is_claimed_within_step_plus_reconnect_limit() -> None:
    # I4: each return gives a fresh limit, but they never add up past the reconnect limit.
    h = Harness("sixth-sense", 3, seed=70)
    session = h.sessions[0]
    session.start(0.0)
    session.drain()
    limit, reconnect = h.settings.step_timeout, h.settings.reconnect_timeout
    now = 0.0
    bound = reconnect + 3 * limit  # the limits, plus the ticks' spacing and the first clock's start
    while now < bound and session.my_claim is None:
        for seat in (1, 2):  # both owe their seed commitment; both flap
            session.set_connected(seat, False, now)
            session.set_connected(seat, True, now + 1.0)  # back just before its limit runs out, every time
        now += limit - 1.0
        session.tick(now)
    assert session.my_claim is not None, "a flapping seat is claimed"
    assert now <= bound, f"claimed only after {now} s"


# --- finding G: one signed move per step (P-5.1, I1) ----------------------------------------------


def test_a_seat_that_claimed_a_timeout_is_offered_no_move_and_signs_none() -> None:
    """A seat with a timeout claim standing takes no game step (its own move would wait in its
    inbox unapplied): offering the move anyway made every decide() sign another move for the same
    step, and the others blamed the honest seat for a move of a past step (P-5.1)."""
    h = Harness("sixes", 3, {"chips": 1}, seed=72)
    h.start()
    h.run(until=lambda h: dealt(h) and any(s.decision() for s in h.sessions))
    mover = next(s for s in h.sessions if s.decision())
    moves = mover.decision()
    other = (mover.me + 1) % 3
    mover.my_claim = (other, "a step that came in late")  # as `_claim` sets it when its clock runs out
    assert mover.decision() == ()
    with pytest.raises(IllegalMove):
        mover.decide(moves[0], h.now)
    mover.my_claim = None
    assert mover.decision() == moves
    out = mover.decide(moves[0], h.now)
    assert sum(1 for o in out if isinstance(o, Send) and b'"move"' in o.data) == 1
    assert mover.decision() == (), "the step moved on or the move waits: never offered twice"


# --- finding B: a fork in the game's last message (I2) ----------------------------------------------


def test_a_seat_that_declared_the_game_over_still_convicts_a_fork_of_the_last_message() -> None:
    """Mallory's last secrets went one way to Alice, another to Bob: Alice confirmed the round and
    the game, Bob blames Mallory. Bob's blame, carrying the version Bob got, is an equivocation
    that Alice checks by herself against the version she holds: she reaches the same verdict."""
    h = Harness("sixes", 3, {"chips": 1}, seed=73)
    h.run()
    alice, bob = h.sessions[0], h.sessions[2]
    assert alice.stage == bob.stage == "over"
    last = alice.tracker.messages(h.settings.seats[MALLORY].peer_id)[-1]
    assert last.kind == "secrets"
    other = sign_message(
        h.identities[MALLORY],
        last.table,
        last.round,
        last.seq,
        last.prev,
        last.kind,
        {**last.body, "openings": {"x": 1}},
    )
    blame = bob._publish("blame", {"seat": MALLORY, "rule": "P-5.2", "message": "bad", "evidence": [other.to_json()]})
    out = alice.receive(2, blame.to_wire(), h.now + 1)
    blames = [o for o in out if isinstance(o, Blamed)]
    assert blames and blames[0].seat == MALLORY, out
    assert settled(alice) == "ended"
    # A blame after the game that proves nothing here does not reopen it (I1).
    h2 = Harness("sixes", 3, {"chips": 1}, seed=74)
    h2.run()
    carol, dave = h2.sessions[0], h2.sessions[2]
    junk = dave._publish("blame", {"seat": MALLORY, "rule": "P-5.2", "message": "no proof", "evidence": []})
    carol.receive(2, junk.to_wire(), h2.now + 1)
    assert carol.stage == "over" and not h2.blames(0)
