"""Every cheat of the protocol issue, through the harness: each ends in a blame naming the right seat
and rule at every honest seat, and the honest seats keep identical records of the confirmed rounds.

A cheater is a `TableSession` subclass that overrides one step, as a modified client would.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from engine.sixes import Pass
from engine.sixth_sense import PEEK, Play, required_colour
from protocol import deck
from protocol.deck import IDENTITY_POINT, LockOutput, LockSecret, card_point, lock_factors, lock_pass, shuffle_pass
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.session import Dealt, PeekResult, Refused, TableSession
from protocol.signed import sign_message
from protocol.testing import Harness

CHEATER = 1


def assert_honest_verdict(h: Harness, seat: int | None, rule: str) -> None:
    honest = [s for s in range(len(h.sessions)) if s != CHEATER]
    for s in honest:
        blames = h.blames(s)
        assert blames, f"seat {s} blamed nobody"
        assert (blames[0].seat, blames[0].rule) == (seat, rule), f"seat {s}: {blames[0]}"
        assert h.sessions[s].stage == "ended"
    records = {h.sessions[s].record().dumps() for s in honest}
    assert len(records) == 1, "honest seats keep the same confirmed rounds"


def dealt(h: Harness) -> bool:
    return all(s.stage == "play" for s in h.sessions)


# --- commitments and hidden choices -------------------------------------------------------------


class BadReveal(TableSession):
    def _publish(self, kind: str, body: JSONObject) -> Any:
        if kind == "reveal":
            body = {**body, "nonce": "00" * 32}
        return super()._publish(kind, body)


def test_a_reveal_that_does_not_open_its_commitment() -> None:
    h = Harness("take6", 3, seed=31, factories={CHEATER: BadReveal})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-3.3")


class PredictsAnotherSeatsCard(TableSession):
    def _card_reference(self, card_json: object) -> JSONObject:
        if self.game.expected(self.state).kind == "predict":
            assert self.round is not None
            return {"pos": self.round.layout_hands[(self.me + 1) % self.n][0]}
        return super()._card_reference(card_json)

    def _apply_round_hidden(self, kind: str) -> None:
        super()._apply_round_hidden(kind)
        assert self.round is not None
        self.round.used.clear()  # its own client does not hold the borrowed position against others


def test_a_prediction_card_that_was_not_in_the_hand_is_caught_at_the_audit() -> None:
    h = Harness("sixth-sense", 3, seed=32, factories={CHEATER: PredictsAnotherSeatsCard})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-4.5")
    assert all(not h.sessions[s].rounds for s in (0, 2)), "the cheated round is not confirmed"


class PlaysAnotherSeatsCard(TableSession):
    def _wire_card(self, card_json: object) -> object:
        wire = super()._wire_card(card_json)
        assert isinstance(wire, dict) and self.round is not None
        return {**wire, "pos": self.round.layout_hands[(self.me + 1) % self.n][0]}


def test_a_played_card_not_in_the_hand_is_refused_with_its_keys() -> None:
    h = Harness("sixth-sense", 3, seed=33, factories={CHEATER: PlaysAnotherSeatsCard})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-4.3")


class WrongKeys(TableSession):
    def _wire_card(self, card_json: object) -> object:
        wire = super()._wire_card(card_json)
        assert isinstance(wire, dict)
        keys = [dict(k) for k in wire["keys"]]
        keys[0]["key"] = keys[2]["key"]  # another seat's key for this position: it opens nothing
        return {**wire, "keys": keys}


def test_a_played_card_with_wrong_keys_blames_the_player() -> None:
    h = Harness("sixth-sense", 3, seed=34, factories={CHEATER: WrongKeys})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-4.3")


# --- moves the engine refuses only with full knowledge ------------------------------------------


def apply_unchecked(session: TableSession, seat: int, move_json: JSONObject) -> None:
    """A cheating client applies its own move as if it did not know its own hand."""
    rd = session.round
    assert rd is not None
    state = session.state
    hand = state.round.hands[seat]
    blind_round = replace(state.round, hands=tuple(None if s == seat else h for s, h in enumerate(state.round.hands)))
    if hasattr(blind_round, "voids"):
        blind_round = replace(blind_round, voids=(frozenset(),) * session.n)
    after = session.game.apply(replace(state, round=blind_round), session.game.move_from_json(move_json))
    code = move_json.get("play")
    kept = tuple(c for c in hand if getattr(c, "code", c) != code)
    hands = tuple(kept if s == seat else h for s, h in enumerate(after.round.hands))
    session.state = replace(after, round=replace(after.round, hands=hands))
    rd.step += 1
    rd.log.append(move_json)
    session._after_change()


class Reneger(TableSession):
    """Offers itself plays that do not follow suit (S-4.2) and applies them unchecked."""

    def decision(self) -> tuple[Any, ...]:
        moves = super().decision()
        if not moves or not isinstance(moves[0], Play):
            return moves
        colour = required_colour(self.state.round.trick)
        hand = self.state.round.hands[self.me]
        if colour is None or not any(c.colour == colour for c in hand):
            return moves
        return moves + tuple(Play(self.me, c, 6 if c.value == 6 else None) for c in hand if c.colour != colour)

    def _apply(self, seat: int, move_json: JSONObject) -> None:
        if seat == self.me:
            apply_unchecked(self, seat, move_json)
        else:
            super()._apply(seat, move_json)


def prefer_illegal(session: TableSession, rng: random.Random) -> Any:
    legal = session.game.legal_moves(session.state, session.me)
    illegal = [m for m in session.decision() if m not in legal]
    return illegal[0] if illegal else rng.choice(legal)


def test_a_renege_is_caught_at_the_audit() -> None:
    h = Harness("sixth-sense", 3, seed=35, factories={CHEATER: Reneger}, choosers={CHEATER: prefer_illegal})
    h.run()
    assert_honest_verdict(h, CHEATER, "S-4.2")


class FalsePasser(TableSession):
    def decision(self) -> tuple[Any, ...]:
        moves = super().decision()
        if moves and Pass(self.me) not in moves and self.state.round.opener is not None:
            return (*moves, Pass(self.me))
        return moves

    def _apply(self, seat: int, move_json: JSONObject) -> None:
        if seat == self.me:
            apply_unchecked(self, seat, move_json)
        else:
            super()._apply(seat, move_json)


def test_a_false_pass_in_sixes_is_caught_at_the_audit() -> None:
    h = Harness("sixes", 3, {"chips": 5}, seed=36, factories={CHEATER: FalsePasser}, choosers={CHEATER: prefer_illegal})
    h.run()
    assert_honest_verdict(h, CHEATER, "X-2.4")


# --- order, replay, signatures ----------------------------------------------------------------


def test_a_move_out_of_turn() -> None:
    h = Harness("sixth-sense", 3, seed=37)
    h.run(until=lambda h: dealt(h) and h.sessions[0].game.expected(h.sessions[0].state).kind == "play")
    cheater = h.sessions[CHEATER]
    expected = cheater.game.expected(cheater.state)
    if CHEATER in expected.seats:  # make it someone else's turn first
        h.run(until=lambda h: CHEATER not in h.sessions[0].game.expected(h.sessions[0].state).seats)
    rd = cheater.round
    assert rd is not None
    card = next(iter(rd.my_cards.values()))
    wire = cheater._wire_card(card)
    cheater._publish("move", {"step": rd.step, "state": cheater.state_hash(), "move": {"seat": CHEATER, "play": wire}})
    h.flush(CHEATER)
    h.run()
    assert_honest_verdict(h, CHEATER, "P-5.1")


def test_messages_rounds_ahead_are_refused_before_they_are_kept() -> None:
    """I6: each round has its own quota, so a seat signing message after message for rounds still to
    come would open a fresh quota with each; more than one round ahead (no honest seat ever is) is
    refused before it is chained, held or forwarded, and blames nobody."""
    h = Harness("sixth-sense", 3, seed=41)
    h.run(until=dealt)
    cheater, victim = h.sessions[CHEATER], h.sessions[0]
    before = victim.tracker.next_seq(cheater.identity.peer_id)
    for ahead in (2, 3, 1000):
        junk = sign_message(
            cheater.identity, h.settings.table, victim.round_index + ahead, cheater.my_seq, cheater.my_prev,
            "move", {"step": 0, "pad": "x" * 1000},
        )  # fmt: skip
        out = victim.receive(CHEATER, junk.to_wire(), h.now)
        assert not victim.last_input_kept
        assert any(isinstance(o, Refused) and "more than one round ahead" in o.message for o in out), out
    assert victim.tracker.next_seq(cheater.identity.peer_id) == before
    assert not any(key[1] > victim.round_index + 1 for key in victim.usage)
    assert victim.blame is None and victim.stage != "ended"


def test_a_message_signed_for_an_earlier_round() -> None:
    h = Harness("sixth-sense", 2, seed=38)
    h.run(until_rounds=1)
    h.run(until=dealt)
    cheater = h.sessions[CHEATER]
    old = sign_message(cheater.identity, h.settings.table, 0, cheater.my_seq, cheater.my_prev, "move", {"step": 0})
    cheater.tracker.accept(old)
    cheater.my_seq += 1
    cheater.my_prev = old.digest()
    h.inject(CHEATER, 0, old.to_wire())
    h.run()
    blames = h.blames(0)
    assert blames and (blames[0].seat, blames[0].rule) == (CHEATER, "P-1.3")
    assert len(h.sessions[0].rounds) >= 1, "the confirmed round is kept"


def test_an_old_message_replayed_on_the_wire_is_a_harmless_duplicate() -> None:
    h = Harness("sixth-sense", 2, seed=39)
    h.run(until_rounds=1)
    first = h.sessions[CHEATER].messages()[0]
    h.inject(CHEATER, 0, first)
    h.run(until_rounds=2)
    assert not h.blames(0) and len(h.sessions[0].rounds) == 2


def test_a_message_from_another_table_is_refused() -> None:
    h = Harness("sixth-sense", 2, seed=40)
    h.run(until=dealt)
    other_table = "ab" * 16
    msg = sign_message(h.identities[CHEATER], other_table, 0, 0, "0" * 64, "move", {})
    h.inject(CHEATER, 0, msg.to_wire())
    h.run(until_rounds=1)
    refused = [e for e in h.events[0] if isinstance(e, Refused)]
    assert any(e.sender == CHEATER and e.rule == "P-1.3" and "table" in e.message for e in refused)
    assert len(h.sessions[0].rounds) == 1 and not h.blames(0)


def test_a_bad_signature_and_an_unknown_key_are_refused() -> None:
    h = Harness("sixth-sense", 2, seed=41)
    h.run(until=dealt)
    cheater = h.sessions[CHEATER]
    forged = sign_message(cheater.identity, h.settings.table, 0, cheater.my_seq, cheater.my_prev, "chat", {"x": 1})
    tampered = forged.to_wire().replace(forged.sig.encode(), ("0" * 128).encode())
    stranger = sign_message(Identity.generate(), h.settings.table, 0, 0, "0" * 64, "chat", {})
    h.inject(CHEATER, 0, tampered)
    h.inject(CHEATER, 0, stranger.to_wire())
    h.run(until_rounds=1)
    refused = [e for e in h.events[0] if isinstance(e, Refused)]
    assert len(refused) == 2 and all(e.sender == CHEATER and e.rule.startswith("P-1.") for e in refused)
    assert len(h.sessions[0].rounds) == 1, "nothing was lost"


def test_equivocation_two_messages_at_one_sequence_number() -> None:
    h = Harness("sixth-sense", 3, seed=42)
    h.run(until=dealt)
    cheater = h.sessions[CHEATER]
    seq, prev = cheater.my_seq, cheater.my_prev
    a = sign_message(cheater.identity, h.settings.table, cheater.round_index, seq, prev, "chat", {"say": "a"})
    b = sign_message(cheater.identity, h.settings.table, cheater.round_index, seq, prev, "chat", {"say": "b"})
    h.inject(CHEATER, 0, a.to_wire())
    h.inject(CHEATER, 2, b.to_wire())
    h.run()
    assert_honest_verdict(h, CHEATER, "P-1.3")
    assert all(h.blames(s)[0].evidence for s in (0, 2)), "the verdict carries the two signed messages"


# --- the deck --------------------------------------------------------------------------------


class ShuffleCheat(TableSession):
    """Makes its real shuffle pass (points, key base, proof), then changes the points."""

    def change(self, points: list[bytes]) -> None:
        raise NotImplementedError

    def _my_shuffle(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.shuffles[-1].points if rd.shuffles else rd.ctx.cards.points
        real = shuffle_pass(rd.ctx, self.me, deck, rd.my_shuffle, self.entropy)
        points = list(real.points)
        self.change(points)
        self._publish("shuffle", {**real.to_json(), "points": [p.hex() for p in points], "input": self._pass_input()})


class DuplicatingShuffle(ShuffleCheat):
    def change(self, points: list[bytes]) -> None:
        points[1] = points[0]


class ReplacingShuffle(ShuffleCheat):
    def change(self, points: list[bytes]) -> None:
        for p in range(len(points)):  # the sum changes: the shuffle proof no longer holds
            if p % 2 == 0:
                points[p] = card_point("not-a-game", f"fake{p}")


class IdentityPointShuffle(ShuffleCheat):
    def change(self, points: list[bytes]) -> None:
        points[3] = IDENTITY_POINT


@pytest.mark.parametrize(
    ("cheat", "rule"),
    [(DuplicatingShuffle, "P-4.4"), (IdentityPointShuffle, "P-4.4"), (ReplacingShuffle, "P-4.2")],
    ids=["duplicated-card", "identity-point", "replaced-card"],
)
def test_a_shuffle_pass_that_duplicates_or_replaces_cards(cheat: type[TableSession], rule: str) -> None:
    h = Harness("sixth-sense", 3, seed=43, factories={CHEATER: cheat})
    h.run()
    assert_honest_verdict(h, CHEATER, rule)


class LockWithOtherFactors(TableSession):
    def _my_lock(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.locks[-1].points if rd.locks else rd.shuffles[-1].points
        real = lock_pass(rd.ctx, self.me, deck, rd.my_shuffle, rd.my_lock, self.entropy)
        decoy = lock_pass(rd.ctx, self.me, deck, rd.my_shuffle, LockSecret.new(rd.ctx.size, entropy=self.entropy))
        self._publish("lock", {**real.to_json(), "factors": decoy.to_json()["factors"], "input": self._pass_input()})


def test_a_lock_pass_whose_factors_are_not_the_ones_it_locked_with() -> None:
    # Its keys would match the published factors and open nothing: the proofs refuse it on receipt.
    h = Harness("sixth-sense", 3, seed=44, factories={CHEATER: LockWithOtherFactors})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-4.2")


class FirstLockerCopiesACard(TableSession):
    """Issue 9, finding 2: seat 0 locks first, while every point is under one common scalar, and
    feeds the point of a position dealt to another seat in as the input of a position of its own
    hand, so that its own card would open to the other seat's. Its proof for that position is the
    best a modified client can make: the prover run on the claimed statement."""

    def _my_lock(self) -> None:
        rd = self.round
        assert rd is not None and self.me == 0 and not rd.locks
        deck_in = rd.shuffles[-1].points
        real = lock_pass(rd.ctx, self.me, deck_in, rd.my_shuffle, rd.my_lock, self.entropy)
        victim, mine = rd.layout_hands[1][0], rd.layout_hands[0][0]
        x = lock_factors(rd.my_shuffle, rd.my_lock.keys)[mine]
        copied = deck.scalarmult(x, deck_in[victim])
        statement = (deck.BASE_POINT, real.factors[mine], deck_in[mine], copied)
        proof = deck._prove(rd.ctx, b"lock", self.me, mine, int.from_bytes(x, "little"), statement, self.entropy)
        points, proofs = list(real.points), list(real.proofs)
        points[mine], proofs[mine] = copied, proof
        forged = LockOutput(self.me, tuple(points), real.factors, tuple(proofs))
        self._publish("lock", {**forged.to_json(), "input": self._pass_input()})


@pytest.mark.parametrize(("game", "players"), [("sixth-sense", 3), ("sixth-sense", 5), ("take6", 4), ("sixes", 4)])
def test_the_first_locker_copying_a_card_is_blamed_before_anything_is_dealt(game: str, players: int) -> None:
    h = Harness(game, players, seed=45, factories={0: FirstLockerCopiesACard})
    h.run()
    for s in range(1, players):
        blames = h.blames(s)
        assert [(b.seat, b.rule) for b in blames] == [(0, "P-4.2")], f"seat {s}: {blames}"
        assert "lock proof" in blames[0].message and blames[0].evidence, "the signed lock pass is the evidence"
        assert h.sessions[s].stage == "ended"
        assert not [e for e in h.events[s] if isinstance(e, Dealt)], f"seat {s} was dealt cards"
    cheater_round = h.sessions[0].round
    assert cheater_round is not None and not cheater_round.keys_from, "no honest seat sent the cheater a key"
    assert not cheater_round.table_keys, "no table card was opened either"


class Withholder(TableSession):
    def _my_shuffle(self) -> None:
        return


def test_a_withheld_step_is_blamed_after_its_time_limit() -> None:
    h = Harness("sixth-sense", 3, seed=45, factories={CHEATER: Withholder})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-5.3")
    assert "shuffle" in h.blames(0)[0].message


# --- peeks and state hashes -------------------------------------------------------------------


def lead_eights(session: TableSession, rng: random.Random) -> Any:
    moves = session.decision()
    eights = [m for m in moves if isinstance(m, Play) and m.card.value == PEEK and not session.state.round.trick]
    return eights[0] if eights else rng.choice(moves)


class BadPeekAnswer(TableSession):
    def _send_private(self, to: int, kind: str, body: JSONObject) -> None:
        if kind == "p.peek":
            body = {**body, "nonce": "11" * 32}
        super()._send_private(to, kind, body)


def test_peeks_reach_only_the_peeker_and_a_false_answer_is_blamed() -> None:
    for seed in range(60):
        h = Harness("sixth-sense", 3, seed=seed, choosers=dict.fromkeys(range(3), lead_eights))
        h.run(until_rounds=1)
        peeks = [(s, e) for s in range(3) for e in h.events[s] if isinstance(e, PeekResult)]
        if peeks:
            break
    else:
        pytest.fail("no peek in 60 seeded rounds")
    record = h.sessions[0].record().rounds[0]
    predictions = {m["seat"]: m["predict"] for m in record.moves if "predict" in m}
    final = h.sessions[0].full_state.round
    for peeker, event in peeks:
        assert predictions[event.target] == event.card  # S-6.4: the winner's prediction card
        assert any(p.peeker == peeker and p.target == event.target for p in final.peeks)
    # the same seed with the peeked seat lying about its card
    target = peeks[0][1].target
    liar = Harness(
        "sixth-sense", 3, seed=seed, choosers=dict.fromkeys(range(3), lead_eights), factories={target: BadPeekAnswer}
    )
    liar.run(until_rounds=1)
    peeker = peeks[0][0]
    blames = liar.blames(peeker)
    assert blames and (blames[0].seat, blames[0].rule) == (target, "P-4.5")
    for s in range(3):
        if s != target:
            assert liar.blames(s) and liar.blames(s)[0].seat == target, "the evidence convinces every honest seat"


class Desynced(TableSession):
    def state_hash(self) -> str:
        return "0" * 64


def test_a_desynced_state_hash_is_convicted_by_every_other_seat_s_clock() -> None:
    # P-2.2: a move whose state hash is not this seat's may have been built on another version of
    # an earlier move (an equivocation elsewhere, I1), so it is not blamed on sight: it waits, its
    # step gets the automatic limit, and every other seat claims it (P-5.3).
    h = Harness("sixth-sense", 3, seed=46, factories={CHEATER: Desynced})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-5.3")


class FalseAlarm(TableSession):
    """Stops a round for an audit without cause: every seat would have to show its cards."""

    def _try_deal(self) -> None:
        super()._try_deal()
        rd = self.round
        if rd is not None and rd.dealt and not rd.aborting:
            self._abort_round("P-4.3", "a card opened to nothing (not true)")


def test_stopping_a_round_without_cause_is_blamed_on_whoever_stopped_it() -> None:
    h = Harness("sixth-sense", 3, seed=47, factories={CHEATER: FalseAlarm})
    h.run()
    assert_honest_verdict(h, CHEATER, "P-5.2")
