"""Secrets, stops for an audit, and the audit's full-knowledge replay (P-5.2).

A stop for an audit is a signed `abort` message of its own: its author is the requester
whatever the arrival order (I1). It names the step it was made at (and the move it refused, signed
by its mover): every seat replays exactly the moves up to that step, then that move, so every seat
reaches the same verdict; an audit that finds no fault convicts the earliest requester.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.api import JSONObject, RuleError
from engine.record import RoundRecord
from protocol.commitment import Opening, verify_opening
from protocol.deck import SeatSecrets, audit_deck
from protocol.errors import CheatDetected, ProtocolError
from protocol.signed import SignedMessage
from protocol.table._core import SessionCore
from protocol.table._round import _Hidden, _Ignored, _is_seat, _opening, _reference
from protocol.table._state import CHOICE_TAG, MAX_TEXT, STEP_KEY
from protocol.table.values import GameOver, Refused, RoundAudited


class AuditMixin(SessionCore):
    def _publish_secrets(self) -> None:
        rd = self.round
        assert rd is not None
        if rd.secrets_sent:
            return
        rd.secrets_sent = True
        openings = {
            str(step): {"value": o.value.hex(), "nonce": o.nonce.hex()} for step, o in self.hidden_openings.items()
        }
        secrets_json = SeatSecrets(self.me, rd.my_shuffle, rd.my_lock).to_json()
        self._publish("secrets", {"secrets": secrets_json, "openings": openings})

    def _abort_round(self, rule: str, reason: str, step: int | None = None) -> None:
        """Certain cheating whose author only the audit can name, or a fault only this seat's
        private knowledge shows: stop the round and audit it now (I1). The request is a signed
        `abort` message of its own, so its author is the requester whatever the arrival order;
        it names the step the audit replays up to and, for a refused move, that move, signed by
        its mover, which the audit replays last."""
        rd = self.round
        assert rd is not None
        if rd.abort_sent:
            return
        rd.abort_sent = True
        rd.aborting = True
        rd.abort_reason = reason
        current = self._current
        move = current.to_json() if step is not None and current is not None and current.kind == "move" else None
        self._out.append(Refused(None, rule, f"{reason}; every seat publishes its secrets to find who"))
        self._publish("abort", {"rule": rule, "reason": reason[:MAX_TEXT], "step": rd.step, "move": move})
        self._publish_secrets()

    def _on_abort(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        step = msg.body.get("step")
        if not _is_seat(step, 1 << 20):
            raise ProtocolError("P-5.2", "a stop for an audit must name the step it was made at")
        assert isinstance(step, int)
        if self.stage == "play" and rd.step < step:
            return False  # the requester had played further: reach its step first, so every seat replays the same moves
        if seat in rd.secrets:
            raise _Ignored("P-5.2", f"seat {seat}'s stop for an audit came after its secrets: ignored")
        rd.abort_requests.append(seat)
        rd.abort_steps[seat] = (step, msg)
        if not rd.aborting:
            rd.aborting = True
            rd.abort_reason = f"seat {seat} stopped the round for an audit"
            self._publish_secrets()
        return True

    def _on_secrets(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        if self.stage != "audit" and not rd.aborting:
            return False
        if seat in rd.secrets:
            raise CheatDetected("P-5.2", "a second set of secrets", seat)
        seat_secrets = SeatSecrets.from_json(rd.ctx, seat, msg.body.get("secrets"))
        raw_openings = msg.body.get("openings")
        if not isinstance(raw_openings, dict):
            raise CheatDetected("P-5.2", "the openings of hidden choices are missing", seat)
        openings: dict[int, Opening] = {}
        for step, item in raw_openings.items():
            if STEP_KEY.fullmatch(step) is None:  # ASCII digits only (I3)
                raise CheatDetected("P-5.2", f"an opening for step {step[:20]!r}", seat)
            openings[int(step)] = _opening(item, seat)
        rd.secrets[seat] = (seat_secrets, openings)
        if len(rd.secrets) == self.n:
            try:
                self._audit()
            except CheatDetected as exc:
                if exc.seat is not None:
                    exc.evidence = self._audited_messages(exc.seat)
                raise
        return True

    def _audited_messages(self, seat: int) -> tuple[dict[str, object], ...]:
        """The round's moves, choices, reveals and secrets of `seat` as this seat holds them: what its
        audit replayed. A seat whose audit passed on other versions of them (an equivocation whose gossip
        the blame outran) finds the fork in them, and names the same seat (I2)."""
        peer = self.settings.seats[seat].peer_id
        kinds = ("move", "commit", "reveal", "secrets")
        held = self.tracker.messages(peer)
        return tuple(m.to_json() for m in held if m.round == self.round_index and m.kind in kinds)

    def _audit(self) -> None:
        rd = self.round
        assert rd is not None
        secrets_list = [rd.secrets[s][0] for s in range(self.n)]
        codes = tuple(str(c) for c in audit_deck(rd.ctx, rd.shuffles, rd.locks, secrets_list))
        for hidden in rd.hidden:
            opening = rd.secrets[hidden.seat][1].get(hidden.step)
            if opening is None:
                why = f"seat {hidden.seat} never opened its {hidden.kind} commitment"
                raise CheatDetected("P-3.3", why, hidden.seat)
            verify_opening(hidden.commitment, opening, CHOICE_TAG, self.settings.table, rd.index, hidden.seat)
            hidden.value = _reference(opening.value, hidden.seat)
        deal = self.game.deal_from_cards(self.full_state, rd.dealer, codes)
        state = self.game.start_round(self.full_state, deal)
        moves: list[JSONObject] = []
        log: list[JSONObject | _Hidden] = list(rd.log)
        requester: int | None = None
        if rd.abort_steps:
            # Every seat replays the same moves: up to the earliest request's step, then the move
            # it refused (signed by its mover), whatever each seat had applied beyond (P-5.2).
            cut, requester = min((step, seat) for seat, (step, _) in rd.abort_steps.items())
            log = log[:cut]
            refused = self._refused_move(requester, rd.abort_steps[requester][1], cut, codes)
            if refused is not None:
                log.append(refused)
        for entry in log:
            if isinstance(entry, _Hidden):
                move_json = self._hidden_move(entry, codes)
                seat = entry.seat
            else:
                move_json = entry
                seat = int(str(entry["seat"]))
            try:
                state = self.game.apply(state, self.game.move_from_json(move_json))
            except RuleError as exc:
                raise CheatDetected(exc.rule, f"audit: seat {seat}: {exc.message}", seat) from exc
            moves.append(move_json)
        if requester is not None:
            # Stopping a round makes every seat show its cards: without cause, that is the cheat.
            why = f"seat {requester} stopped the round for an audit, yet the audit finds no fault"
            raise CheatDetected("P-5.2", why, requester)
        self.full_state = self.state = state
        self.rounds.append(RoundRecord(self.game.deal_to_json(deal), tuple(moves)))
        self._out.append(RoundAudited(rd.index, self.game.round_report(state)))
        self.hidden_openings.clear()
        self.last_round = rd
        self.round_index += 1
        if self.game.expected(state).phase == "over":
            self._enter("over")
            self.round = None
            self._out.append(GameOver(self.record(), self.game.winners(state) or ()))
            return
        dealer = self.game.expected_dealer(state)
        assert dealer is not None
        self._start_round(dealer)

    def _refused_move(self, requester: int, abort: SignedMessage, step: int, codes: Sequence[str]) -> JSONObject | None:
        """The move an `abort` says its requester refused, read with full knowledge; a move that
        is not a move its mover signed for that step is the requester's fault."""
        raw = abort.body.get("move")
        if raw is None:
            return None
        rd = self.round
        assert rd is not None
        try:
            signed = SignedMessage.from_json(raw)
            mover = self.seat_of.get(signed.author)
            if mover is None or signed.table != self.settings.table or signed.kind != "move":
                raise ProtocolError("P-5.2", "not a move of this table")
            signed.verify(self.settings.seats[mover])
            wire = signed.body.get("move")
            if signed.round != rd.index or signed.body.get("step") != step or not isinstance(wire, dict):
                raise ProtocolError("P-5.2", "not the move of that step")
            if wire.get("seat") != mover:
                raise ProtocolError("P-5.2", "a move that names another seat")
        except ProtocolError as exc:
            why = f"seat {requester}'s stop for an audit shows no move: {exc.message}"
            raise CheatDetected("P-5.2", why, requester) from exc
        move_json: JSONObject = dict(wire)
        for name in self.game.hand_card_fields():
            card = move_json.get(name)
            if isinstance(card, dict):
                position = card.get("pos")
                if not _is_seat(position, len(codes)) or position not in rd.layout_hands[mover]:
                    raise CheatDetected("P-4.3", f"audit: seat {mover} played position {position}, not its own", mover)
                assert isinstance(position, int)
                move_json[name] = self.game.card_to_json(codes[position])
            elif card is not None and not self.game.hands_public(self.options):
                raise CheatDetected("P-4.3", f"audit: seat {mover} named a card of a hidden hand", mover)
        return move_json

    def _hidden_move(self, hidden: _Hidden, codes: Sequence[str]) -> JSONObject:
        rd = self.round
        assert rd is not None and hidden.value is not None
        position = hidden.value.get("pos")
        if "pos" in hidden.value:
            if not isinstance(position, int) or position not in rd.layout_hands[hidden.seat]:
                why = f"seat {hidden.seat}'s {hidden.kind} card (position {position}) was not in its hand"
                raise CheatDetected("P-4.5", why, hidden.seat)
            card = self.game.card_to_json(codes[position])
        elif self.game.hands_public(self.options):
            card = hidden.value.get("card")
        else:  # I5: a hidden hand's card is a position, never a bare name
            why = f"seat {hidden.seat}'s {hidden.kind} names a card, not a hand position"
            raise CheatDetected("P-4.5", why, hidden.seat)
        return {"seat": hidden.seat, hidden.kind: card}
