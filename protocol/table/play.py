"""Play in lockstep (P-5.1, P-2.2): moves, hidden choices, hand cards, peeks (S-6.4).

Where hands are hidden a hand card travels only as a deck position plus every seat's key (I5);
a bare card name is refused and blamed on its mover. A move the rules refuse on public knowledge
is its mover's fault at every seat; a move refused only by what this seat privately knows (its
own hand) stops the round for the audit instead (I1).
"""

from __future__ import annotations

import contextlib
from typing import Any

from engine.api import JSONObject, PeekDue, RuleError
from protocol.commitment import Commitment, verify_opening
from protocol.deck import KeyOpening, key_opening, open_position
from protocol.encoding import decode
from protocol.errors import CheatDetected
from protocol.signed import SignedMessage
from protocol.table._core import SessionCore
from protocol.table._round import BUILT_ON, _Hidden, _Ignored, _is_seat, _opening, _PrivateFault, _reference, _Round
from protocol.table._state import CHOICE_TAG
from protocol.table.values import Moved, PeekResult


class PlayMixin(SessionCore):
    def _card_reference(self, card_json: object) -> JSONObject:
        """What a hidden choice commits to: the deck position of a secret hand card, else the card."""
        rd = self.round
        assert rd is not None
        code = str(card_json)
        for position, held in rd.my_cards.items():
            if held == code and position not in rd.used:
                return {"pos": position}
        return {"card": card_json}

    def _wire_card(self, card_json: object) -> object:
        """A card from this seat's hand as the wire carries it: position and every seat's key."""
        reference = self._card_reference(card_json)
        if "pos" not in reference:
            return card_json
        rd = self.round
        assert rd is not None
        position = reference["pos"]
        assert isinstance(position, int)
        keys = rd.hand_keys[position]
        return {"pos": position, "keys": [keys[s].to_json() for s in range(self.n)]}

    def _read_wire_card(self, seat: int, wire: object) -> object:
        """The card a move names; a position is checked to be the mover's and opened (P-4.3).
        Where hands are hidden a card must come as a position with keys: a bare name could be a
        card the mover does not hold, which only its holder would notice (I1, I5)."""
        rd = self.round
        assert rd is not None
        if not isinstance(wire, dict):
            if self.game.hands_public(self.options):
                return wire  # T-5.2: every hand is public, the engine checks the card
            why = "a card from a hidden hand must be a deck position with every seat's key"
            raise CheatDetected("P-4.3", why, seat)
        position = wire.get("pos")
        if isinstance(position, int) and position in rd.used:
            raise CheatDetected("P-4.3", f"position {position} was already played", seat)
        keys = self._position_keys(rd, seat, position, wire.get("keys"))
        assert isinstance(position, int)
        try:
            code = self._open(position, keys)
        except CheatDetected as exc:
            raise CheatDetected(exc.rule, f"seat {seat}'s card does not open: {exc.message}", seat) from exc
        rd.used.add(position)
        return self.game.card_to_json(code)

    def _position_keys(self, rd: _Round, seat: int, position: object, keys: object) -> dict[int, KeyOpening]:
        """Every seat's key for hand position `position` of `seat`, read (`open_position` checks
        each against its author's commitment). The mover forwards them, so a key that fails is
        the mover's doing, whoever's key it claims to be (P-4.3)."""
        if not isinstance(position, int) or isinstance(position, bool) or not isinstance(keys, list):
            raise CheatDetected("P-4.3", "a card must be a deck position with every seat's key", seat)
        if position not in rd.layout_hands[seat]:
            raise CheatDetected("P-4.3", f"position {position} was not dealt to seat {seat}", seat)
        if len(keys) != self.n:
            raise CheatDetected("P-4.3", "a played card needs one key from every seat", seat)
        try:
            openings = {s: KeyOpening.from_json(rd.ctx, s, keys[s]) for s in range(self.n)}
            for opening in openings.values():
                if opening.position != position:
                    raise CheatDetected("P-4.3", f"a key for position {opening.position} sent for {position}", seat)
        except CheatDetected as exc:
            raise CheatDetected(exc.rule, f"seat {seat}'s card does not open: {exc.message}", seat) from exc
        return openings

    def _check_step(self, seat: int, msg: SignedMessage) -> bool | None:
        """None when the message is for the current step and this peer is at it; False when it is
        for a later step, or this peer has not yet reached the point the mover made it at."""
        rd = self.round
        step = msg.body.get("step")
        if self.stage != "play" or rd is None:
            return False
        if not isinstance(step, int) or isinstance(step, bool):
            raise CheatDetected("P-5.1", "a move without a step number", seat)
        if step > rd.step:
            return False
        if step < rd.step:
            if msg.body.get("state") == rd.step_hashes.get(step):
                # Built on the very state this seat took that step from, which another move took
                # (or this mover's own, earlier): out of turn or a second move, to every seat alike.
                raise CheatDetected("P-5.1", f"a move for step {step}, which is past (now {rd.step})", seat)
            # I1: built on another state than this seat's at that step, it is no proof against the
            # mover: an equivocating seat sent two versions of an earlier move (a trick won by
            # another seat in each, so each version's winner led the next step), and gossip brings
            # the other version and with it the proof naming the equivocator.
            raise _Ignored("P-5.1", f"seat {seat}'s move for step {step}, which is past here (now {rd.step}): ignored")
        if self.game.expected(self.state).phase == "reveal":
            # The mover saw the late table card open before moving (S-8.3); this peer has not yet
            # had every seat's key for it. Compared now, the hashes would differ on an honest move.
            return False
        here = rd.step_hashes[step] = self.state_hash()  # the last one kept: the state the step was taken from
        if msg.body.get("state") != here:
            # I1: the mover may have built on a move that an equivocating seat sent it in another
            # version than this seat got; blaming it would frame it. The move waits: gossip brings
            # the other version and with it the proof that names the equivocator, or, if the hash
            # was simply wrong, the step stays owed by the mover and the clocks settle it (I4).
            return False
        return None

    def _holds_step_message(self, seat: int) -> bool:
        """A move or choice of `seat` for the current step is here but waits (its state hash is not
        this seat's): that seat is no longer thinking, so its step gets the step limit and a claim
        naming it (`clocks._tick`); every other seat owing the same step keeps its own limit."""
        rd = self.round
        queue = self.inbox[seat]
        if rd is None or not queue:
            return False
        head = queue[0]
        return head.kind in ("move", "commit") and head.round == rd.index and head.body.get("step") == rd.step

    def _on_move(self, seat: int, msg: SignedMessage) -> bool:
        wire = msg.body.get("move")
        if not isinstance(wire, dict) or wire.get("seat") != seat:
            # Judged before the move's step comes: a seat still in the deal (its hand keys withheld
            # from it alone) convicts on it as the seats already playing do (I2; red team 11 #6).
            raise CheatDetected("P-5.1", "a move must be an object naming its own seat", seat)
        if (pending := self._check_step(seat, msg)) is not None:
            return pending
        rd = self.round
        assert rd is not None
        expected = self.game.expected(self.state)
        if expected.phase != "move" or seat not in expected.seats:
            raise CheatDetected("P-5.1", f"seat {seat} moved out of turn", seat)
        if self.game.hidden_choice(expected.kind) is not None:
            raise CheatDetected("P-5.1", f"seat {seat} showed a choice that must be hidden ({expected.kind})", seat)
        move_json: JSONObject = dict(wire)
        used = set(rd.used)
        for name in self.game.hand_card_fields():
            if name in move_json:
                move_json[name] = self._read_wire_card(seat, move_json[name])
        if rd.peeks_owed and seat in rd.peeks_owed.values() and not self.silent:
            # S-6.4: the peeked seat's answer comes first. Whether its move is a fault on public
            # knowledge does not depend on the answer, so that is judged now, as at every other seat:
            # a seat that withholds its answer from the peeker alone no longer hides a faulty move
            # there (I2; red team 11 #2). The move itself waits (its cards are read again then).
            # A stopped seat judging on in silence makes no decision the answer is for, so it waits
            # for none: a fault past a withheld answer convicts there as at the other seats (I2).
            rd.used.intersection_update(used)
            with contextlib.suppress(_PrivateFault):
                self._next_state(self.state, seat, move_json)
            return False
        self._apply(seat, move_json)
        return True

    def _next_state(self, state: Any, seat: int, move_json: JSONObject) -> Any:
        """The state after `seat`'s move. A move the rules refuse on public knowledge alone is its
        mover's fault for every seat alike; one refused only by what this seat knows privately (its
        own hand) cannot name anyone by itself (I1): `_PrivateFault`, and the audit decides."""
        try:
            move = self.game.move_from_json(move_json)
        except RuleError as exc:
            raise CheatDetected(exc.rule, f"seat {seat}: {exc.message}", seat) from exc
        try:
            return self.game.apply(state, move)
        except RuleError as exc:
            try:
                self.game.apply(self.game.view(state, seat), move)  # the same move on public knowledge
            except RuleError:
                raise CheatDetected(exc.rule, f"seat {seat}: {exc.message}", seat) from exc
            raise _PrivateFault(exc.rule, f"seat {seat}'s move breaks {exc.rule} by this seat's own cards") from exc

    def _apply(self, seat: int, move_json: JSONObject) -> None:
        rd = self.round
        assert rd is not None
        try:
            self.state = self._next_state(self.state, seat, move_json)
        except _PrivateFault as fault:
            rd.faulty_move = move_json  # the audit replays it after the log, so it finds the fault too
            self._abort_round(fault.rule, fault.message, rd.step)
            return
        rd.step += 1
        rd.log.append(move_json)
        self._out.append(Moved(seat, move_json))
        recent = rd.log[-self.n :]
        if len(recent) == self.n and all(isinstance(e, dict) and e.get("pass") is True for e in recent):
            # Every card not yet played is in some hand, so a whole round of passes means someone
            # passed holding a playable card: only the audit can say who.
            self._abort_round("P-5.2", "every seat passed in turn although cards are left: a pass was false")
            return
        self._after_change()

    def _on_commit(self, seat: int, msg: SignedMessage) -> bool:
        if (pending := self._check_step(seat, msg)) is not None:
            return pending
        rd = self.round
        assert rd is not None
        expected = self.game.expected(self.state)
        mode = self.game.hidden_choice(expected.kind)
        if expected.phase != "move" or mode is None or seat not in expected.seats:
            raise CheatDetected("P-5.1", f"seat {seat} committed to a choice nobody asked of it", seat)
        if seat in rd.phase_commits:
            raise CheatDetected("P-3.2", f"seat {seat} committed twice to one choice", seat)
        hidden = _Hidden(seat, rd.step, expected.kind, Commitment.from_hex(msg.body.get("digest")), msg)
        rd.phase_commits[seat] = hidden
        if len(rd.phase_commits) < len(expected.seats):
            return True
        if mode == "round":
            self._apply_round_hidden(expected.kind)
        elif rd.my_choice is not None and self.me in rd.phase_commits:
            _, opening = rd.my_choice
            reference = decode(opening.value, 1 << 16)
            body: JSONObject = {"step": rd.step, "value": opening.value.hex(), "nonce": opening.nonce.hex()}
            if "pos" in reference:
                position = reference["pos"]
                assert isinstance(position, int)
                body["keys"] = [rd.hand_keys[position][s].to_json() for s in range(self.n)]
            self._publish("reveal", body)
        return True

    def _apply_round_hidden(self, kind: str) -> None:
        """Every seat has committed (e.g. 6th Sense predictions): apply them in seat order; only
        this seat's own card is known, the others' stay hidden until the audit (S-3.4)."""
        rd = self.round
        assert rd is not None
        for seat in sorted(rd.phase_commits):
            hidden = rd.phase_commits[seat]
            if seat == self.me and rd.my_choice is not None:
                move, opening = rd.my_choice
                hidden.value = decode(opening.value, 1 << 16)
                position = hidden.value.get("pos")
                if isinstance(position, int):
                    rd.used.add(position)
                self.state = self.game.apply(self.state, move)
            else:
                move = self.game.move_from_json({"seat": seat, kind: None})
                self.state = self.game.apply(self.state, move)
            rd.hidden.append(hidden)
            rd.log.append(hidden)
            rd.step += 1
            self._out.append(Moved(seat, {"seat": seat, kind: None}))
        rd.phase_commits = {}
        rd.my_choice = None
        self._after_change()

    def _on_reveal(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or self.stage != "play":
            return False
        expected = self.game.expected(self.state)
        step = msg.body.get("step")
        if step != rd.step or len(rd.phase_commits) < len(expected.seats):
            if isinstance(step, int) and step < rd.step:
                raise CheatDetected("P-5.1", "a reveal for a past step", seat)
            return False
        hidden = rd.phase_commits.get(seat)
        if hidden is None or seat in rd.phase_reveals:
            raise CheatDetected("P-3.3", f"seat {seat} revealed a choice it did not commit to", seat)
        opening = _opening(msg.body, seat)
        verify_opening(hidden.commitment, opening, CHOICE_TAG, self.settings.table, rd.index, seat)
        reference = _reference(opening.value, seat)
        if "pos" in reference:
            card = self._read_wire_card(seat, {"pos": reference["pos"], "keys": msg.body.get("keys")})
        else:
            card = self._read_wire_card(seat, reference["card"])  # refused unless hands are public
        kind = expected.kind
        self.game.move_from_json({"seat": seat, kind: card})  # I3: the card's shape, before anything moves
        hidden.value = reference
        rd.phase_reveals[seat] = card
        if len(rd.phase_reveals) == len(expected.seats):
            moves = [{"seat": mover, kind: rd.phase_reveals[mover]} for mover in sorted(rd.phase_reveals)]
            state = self.state
            for move_json in moves:  # the whole turn is checked before any of it is applied (I3)
                try:
                    state = self._next_state(state, int(str(move_json["seat"])), move_json)
                except _PrivateFault:
                    break  # `_apply` below stops the round at this move for the audit
            for move_json in moves:
                self._apply(int(str(move_json["seat"])), move_json)
                if rd.aborting or self.stage != "play":
                    break
            rd.phase_commits = {}
            rd.phase_reveals = {}
            rd.my_choice = None
            self._after_change()
        return True

    def _after_change(self) -> None:
        """After the engine state moved: peeks to answer, late cards to open, the round's end."""
        rd = self.round
        if rd is None:
            return
        expected = self.game.expected(self.state)
        if expected.phase == "reveal" and not rd.late_sent:
            rd.late_sent = True
            openings = [key_opening(self.me, rd.my_lock, p).to_json() for p in rd.late_positions]
            self._publish("open", {"late": True, "openings": openings, BUILT_ON: rd.lock_digests[-1]})
        self._handle_peeks()
        if expected.phase in ("audit", "deal", "over") and self.stage == "play":
            self._enter("audit")
            self._publish_secrets()

    def _handle_peeks(self) -> None:
        """S-6.4 / P-4.5: the peeked seat opens its prediction commitment privately to the peeker."""
        rd = self.round
        assert rd is not None
        peeks = getattr(getattr(self.state, "round", None), "peeks", ())
        for peek in peeks[rd.peeks_seen :]:
            if peek.target == self.me:
                hidden = next((h for h in rd.hidden if h.seat == self.me), None)
                if hidden is not None and hidden.value is not None:
                    self._send_peek(peek.peeker, peek.trick, hidden)
            elif peek.peeker == self.me:
                rd.peeks_owed[peek.trick] = peek.target
        rd.peeks_seen = len(peeks)

    def _send_peek(self, peeker: int, trick: int, hidden: _Hidden) -> None:
        rd = self.round
        assert rd is not None and hidden.value is not None
        opening = self.hidden_openings.get(hidden.step)
        if opening is None:
            return
        body: JSONObject = {"trick": trick, "value": opening.value.hex(), "nonce": opening.nonce.hex()}
        position = hidden.value.get("pos")
        if isinstance(position, int):
            body["keys"] = [rd.hand_keys[position][s].to_json() for s in range(self.n)]
        self._send_private(peeker, "p.peek", body)

    def _on_peek(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or self.stage not in ("play", "audit"):
            return False
        trick = msg.body.get("trick")
        if isinstance(trick, int) and trick >= self.game.tricks_ended(self.state):
            return False  # the peeked seat is ahead of this one: the trick is not over here yet
        if isinstance(trick, int) and trick in rd.peeks_owed and rd.peeks_owed[trick] != seat:
            raise _Ignored("P-4.5", f"seat {seat} answered a peek at another seat: ignored")
        if _is_seat(trick, 1 << 20) and trick not in rd.peeks_owed and self._peek_granted(trick, self.me, seat):
            raise _Ignored("P-4.5", f"a second peek answer from seat {seat}: ignored")
        try:
            code = self._check_peek(rd, seat, self.me, msg.body)
        except CheatDetected as exc:
            if exc.seat is not None:
                raise
            self._abort_round("P-4.3", exc.message)
            return True
        del rd.peeks_owed[trick]  # type: ignore[arg-type]
        self._out.append(PeekResult(seat, code))
        return True

    def _peek_granted(self, trick: object, peeker: int, target: int) -> bool:
        return isinstance(trick, int) and PeekDue(trick, peeker, target) in self.game.peeks_due(self.state)

    def _check_peek(self, rd: _Round, sender: int, recipient: int, body: JSONObject) -> str:
        """S-6.4 / P-4.5: `sender`'s answer to `recipient`'s peek opens its prediction commitment
        to a card of its own hand. Run on receipt and on a blame's evidence alike (I1)."""
        trick = body.get("trick")
        if not self._peek_granted(trick, recipient, sender):
            raise CheatDetected("P-4.5", f"seat {sender} sent a peek answer nobody asked for", sender)
        hidden = next((h for h in rd.hidden if h.seat == sender), None)
        if hidden is None:
            raise CheatDetected("P-4.5", "a peek answer for a prediction that was never committed", sender)
        try:
            opening = _opening(body, sender)
            verify_opening(hidden.commitment, opening, CHOICE_TAG, self.settings.table, rd.index, sender)
            reference = _reference(opening.value, sender)
            position = reference.get("pos")
            keys = self._position_keys(rd, sender, position, body.get("keys"))
            assert isinstance(position, int)
            openings = [keys[s] for s in range(self.n)]
            return str(open_position(rd.ctx, position, rd.final_points[position], openings, rd.commitments()))
        except CheatDetected as exc:
            if exc.seat is None:
                raise  # the card opens to no card: a pass was altered, the audit names who
            why = f"the peek answer does not open seat {sender}'s prediction: {exc.message}"
            fault = CheatDetected("P-4.5", why, sender)
            # The commitment it was checked against goes with the blame: a seat that holds another
            # version of it (the sender equivocated its commit) gets the fork proof from it (I2).
            fault.evidence = (hidden.message.to_json(),)
            raise fault from exc
