"""Verdicts (I1, I2): this seat's own, and other seats' blames checked against their evidence.

Evidence counts only when signed by the accused and bound to this table: public messages of this
table's chains (this seat judges them itself on reaching them), private messages on the channel
from the accused to the blamer for this round (re-checked with the very function the recipient
used), or an equivocation proof of this table. A blame this seat cannot confirm stops the game
with nobody convicted; a seat is never blamed for having published a blame.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.api import JSONObject
from protocol.errors import CheatDetected, ProtocolError
from protocol.signed import Equivocation, EquivocationDetected, OutOfOrder, SignedMessage, verify_equivocation
from protocol.table._core import SessionCore
from protocol.table._round import REFERENCE_FIELDS, NotYet, _is_seat, is_digest
from protocol.table._state import (
    MAX_ITEM_VERDICTS,
    MAX_TEXT,
    PRIVATE_KINDS,
    PUBLIC_KINDS,
)
from protocol.table.values import Blamed, Refused, Send, Stopped, Verdict, private_channel


class BlameMixin(SessionCore):
    def _blame(self, seat: int | None, rule: str, message: str, evidence: tuple[JSONObject, ...] = ()) -> None:
        """This seat convicts `seat`: the blame is published at once, and the seat stops deciding, but
        the verdict is final (`ended`) only at `listen_until` (`settle_verdict`): until then it listens
        as a stopped seat does and convicts every other seat it can prove guilty within its window, so
        that two cheaters whose faults reach two honest seats in different orders are both named at
        both (I2; red team 15 #2). A stopped seat reaches a conviction as a live seat would, on what its
        silent play finds (`inbox._shadow`) or on another seat's evidence it checks."""
        if self.stage == "ended" or seat in self.convicted:
            return
        if not self._may_convict(seat):
            self._decline(seat, rule, message, evidence)
            return
        blame = Blamed(seat, rule, message, evidence)
        self.convicted[seat] = blame
        self.declined_proofs.pop(seat, None)
        if self.blame is None:
            self.blame = blame
        self._out.append(blame)
        self._publish_quoting("blame", {"seat": seat, "rule": rule, "message": message}, evidence)
        self._end_known()
        if self.stage != "stopped" and not self.silent:  # in the shadow, `inbox._shadow` puts it back
            self.shadow_stage = self.stage
            self._enter("stopped")

    def _halt_for_waiting_blame(self) -> None:
        """Another seat's blame chained here that this seat's play has not decided once its input is
        handled (its turn in the author's chain has not come, or its evidence is not checkable yet):
        its author listens only until its own `listen_until`, so this seat stops deciding now and
        judges on in silence from where its play got to (`inbox._shadow`). Silent play waits for no
        private message (a deal without this seat's hand, a peek answer), so it reaches the blame's
        point within the window the blame's vouch gives (red team 11 #6: a seat waiting live for hand
        keys a cheater kept back reached the fault only after its own clock stopped it, past every
        window). What it finds there convicts as anywhere; if nothing does by `listen_until`, it stops
        with nobody convicted. A blame decided at once is judged live as before (`_on_blame`), and so is
        one resting on timeout claims: those this seat judges on its own clock (`clocks._judge_claims`),
        and a claim naming no seat (X-2.2) only while it plays, since who owes such a step follows from
        the blames waiting here, which a stopped seat no longer follows (red team 9 #4)."""
        if self.stage in ("stopped", "ended", "over") or self.silent or not self.blames_unjudged:
            return
        waiting = next((m for q in self.inbox for m in q if m.kind == "blame" and not _rests_on_claims(m)), None)
        if waiting is None:
            return
        author = self.seat_of.get(waiting.author)
        self.halted_by = waiting
        self._end_known()
        self.pending_blames.clear()
        self.shadow_stage = self.stage
        # Published, so no seat still playing waits for this one's next step and claims it (I1): a
        # stop at every seat, each judging on in silence. Shown only if nothing convicts by the end.
        why = f"seat {author} published a blame: this seat stops and judges it"
        self._publish_quoting("stop", {"rule": "P-5.2", "message": why}, (waiting.to_json(),))
        self._enter("stopped")

    def settle_verdict(self) -> bool:
        """At `listen_until` a seat that convicted ends (`stopped -> ended`): no other seat can convict
        anyone more after it (`_may_convict`), so every honest seat holds the same convicted seats, and
        the verdict shown is the lowest of them (`blame`), alike everywhere (I2). True when it ended."""
        until = self.listen_until()
        if self.stage != "stopped" or until is None or self.now < until:
            return False
        if not self.convicted:
            if self.stopped is None and self.halted_by is not None:  # nothing proved the blame here
                seat = self.seat_of.get(self.halted_by.author)
                why = f"seat {seat} published a blame this seat could not confirm: the table could not agree"
                self.stopped = Stopped("P-5.2", why, (self.halted_by.to_json(),))
                self._out.append(self.stopped)
            return False
        self.blame = self.convicted[min(self.convicted, key=lambda s: -1 if s is None else s)]
        self._enter("ended")
        # Told, so that what a person sees is the settled verdict, not whichever conviction came last
        # here (red team 19 #3), and so that the runner journals the input that ended the session.
        verdict = self.settled_verdict()
        assert verdict is not None
        self._out.append(verdict)
        return True

    def settled_verdict(self) -> Verdict | None:
        """The verdict this seat ended on (`settle_verdict`): the lowest seat convicted shown, every
        seat convicted in order; None until it ended convicting."""
        if self.stage != "ended" or self.blame is None:
            return None
        return Verdict(self.blame, tuple(sorted(self.convicted, key=lambda s: -1 if s is None else s)))

    def _may_convict(self, accused: int | None) -> bool:
        """I2 once a stop is known here: a verdict on `accused` only within k + 1 steps of this seat
        first knowing of a stop, k the other seats (neither this one nor the accused) whose blames
        naming it are chained here; with k = 0 not at a seat that was away (`own_window`). Dolev-Strong: an
        honest seat that convicts within its window publishes its blame, and with it every honest
        seat holds k + 1 blames one delivery later, within its own window, as every honest seat knew
        of the first stop within a delivery of the others (each passes a stop on as it takes it in);
        so a conviction reached anywhere is reached everywhere, or nowhere, and after n - 1 steps
        none can come (`listen_until`). A step is at least two deliveries (`convert_step`)."""
        if self.stop_known_at is None:
            return True
        vouched = len(self.blamers.get(accused, set()) - {self.me, accused})
        if vouched == 0 and not self.own_window:
            return False  # a seat away while the stop went round (`inbox._queue`; red team 13 #4)
        return self.now <= self.stop_known_at + (vouched + 1) * self.settings.convert_step

    def listen_until(self) -> float | None:
        """Past this time (the session's clock) nothing can turn this seat's stop into a verdict any
        more (`_may_convict`); None while no stop is known here."""
        if self.stop_known_at is None:
            return None
        return self.stop_known_at + max(1, self.n - 1) * self.settings.convert_step

    def _decline(self, accused: int | None, rule: str, message: str, evidence: tuple[JSONObject, ...]) -> None:
        """A proof that came past this seat's window (`_may_convict`): the other seats may have
        stopped for good already, so the stop stands here too (I2), and the proof is shown. It is
        kept: another seat's blame naming the same accused widens the window (Dolev-Strong), and the
        proof then convicts here after all (`_convert_declined`), though its message was handled
        and is past (red team 14 #1)."""
        if accused not in self.declined_proofs:
            self.declined_proofs[accused] = (rule, message, evidence)
            # What may convict here later must be in the journal, though the input that brought it was
            # not chained (a message of no kind): a replay converting on another proof would sign a
            # second blame at one seq (red team 16 #4, I1). Once per accused, so bounded (I6).
            self.last_input_kept = True
        if self.stage != "stopped" and not self.silent:  # live, a stop chained but not handled yet
            why = f"a stop came before a proof against seat {accused} ({rule}: {message}) could convict at every seat"
            self._stop(rule, why, evidence)
            return
        if accused not in self.declined:
            self.declined.add(accused)
            late = f"a proof against seat {accused} ({rule}: {message}) came too late after the stop to convict alike"
            self._out.append(Refused(None, rule, f"{late[:MAX_TEXT]}: the stop stands"))

    def _convert_declined(self) -> bool:
        """A stopped seat's declined proof that another seat's blame now vouches for, within the window
        that blame gives (`_may_convict`): the conviction the vouching seat reached (I2). True when it
        convicted. Time only moves on, so only such a blame can make a declined proof convict."""
        if self.stage != "stopped":
            return False
        converted = False
        for accused, (rule, message, evidence) in list(self.declined_proofs.items()):
            if accused is not None and self._may_convict(accused):
                vouching = ", ".join(map(str, sorted(self.blamers.get(accused, set()) - {self.me, accused})))
                why = f"{message} (past this seat's window, vouched for by the blames of seats {vouching or 'none'})"
                self._blame(accused, rule, why[:MAX_TEXT], evidence)
                converted = True
        return converted

    def _blame_equivocation(self, exc: EquivocationDetected) -> None:
        """Two versions of one public message: both are passed on first, so every seat that holds
        either finds the fork itself, even when the proof is too big to quote whole (two blames
        near the size limit) and the blame carries only references to its halves (I2; red team 6).
        A private channel's proof stays between its two seats; its halves are small enough to quote."""
        proof = exc.proof
        fork = (proof.first.author, proof.first.seq)
        forker = self.seat_of.get(proof.first.author)
        if forker is not None:
            for half in (proof.first, proof.second):
                if half.kind == "blame" and half.table == self.settings.table:
                    self._note_vouch(forker, half)
        if proof.first.table == self.settings.table and fork not in self.forks_passed:
            self.forks_passed.add(fork)  # once (I6; red team 13 #3: stopped seats passed a fork round forever)
            for half in (proof.first, proof.second):
                self._out.append(Send(None, half.to_wire(), forward=True))
        self._blame(exc.seat, exc.rule, exc.message, (proof.to_json(),))

    def _on_blame(self, seat: int, msg: SignedMessage) -> bool:
        """Another seat's verdict (I1, I2): adopted when its evidence proves it here too; waited on
        while this seat has not yet reached the point the evidence is about; otherwise the game
        stops with nobody convicted. A blame never convicts the seat that published it."""
        accused = msg.body.get("seat")
        evidence = msg.body.get("evidence")
        rule = msg.body.get("rule")
        if not _is_seat(accused, self.n) or not isinstance(evidence, list) or not isinstance(rule, str):
            self.pending_blames.pop(seat, None)
            why = f"seat {seat} stopped the game with a verdict that names no seat here"
            self._stop("P-5.2", why, (msg.to_json(),))
            return True
        assert isinstance(accused, int)
        if seat in self.pending_blames and self.pending_read.get(seat) == self.progress:
            return False  # still waiting: nothing here has moved since it was last read (I6)
        items = tuple(item for item in evidence if isinstance(item, dict))
        verdict = self._evidence_verdict(seat, accused, rule, items)
        if self.stage in ("stopped", "ended"):  # the evidence led this seat to its own verdict
            return True
        if verdict is None:
            self.pending_blames.setdefault(seat, (msg, self.now))
            self.pending_read[seat] = self.progress
            return False
        self.pending_blames.pop(seat, None)
        self.pending_read.pop(seat, None)
        message = str(msg.body.get("message"))[:MAX_TEXT]
        if verdict:
            self._blame(accused, rule[:20], f"{message} (seat {seat}'s evidence, checked here)", items)
        else:
            why = (
                f"seat {seat} blames seat {accused} ({rule[:20]}: {message}); this seat's checks do not: "
                "the table could not agree"
            )
            self._stop(rule[:20], why, (msg.to_json(),))
        return True

    def _judge_late_blame(self, msg: SignedMessage) -> None:
        """I2 at a seat that decides no further: over (after the last audit) or stopped. The last
        messages of the game may have been forked (one version to this seat, another to the rest), and
        the fork shows only after this seat confirmed; or another seat convicted at the instant this
        one stopped. A blame whose evidence this seat can check by itself (an equivocation proof of
        this table, a signed message of the accused that differs from the one this seat holds at its
        seq, a signed message of no kind, a private message failing its check, every other seat's
        claim of one step once taken in here) turns the end here into the same verdict as the
        blamer's. A fault of play it quotes is taken into the accused's chain, where a stopped seat's
        silent play judges it itself (`inbox._shadow`). Any other blame cannot reopen the game, and is
        refused; at a stopped seat one not decidable yet waits (`late_blames`)."""
        seat = self.seat_of.get(msg.author)
        accused = msg.body.get("seat")
        evidence = msg.body.get("evidence")
        rule = msg.body.get("rule")
        if seat is None or not _is_seat(accused, self.n) or not isinstance(evidence, list) or not isinstance(rule, str):
            return
        assert isinstance(accused, int)
        self._convert_declined()  # this blame vouches for a proof declined here (red team 14 #1)
        items = tuple(item for item in evidence if isinstance(item, dict))
        when = "after the game" if self.stage == "over" else "after this seat stopped"
        # Read even when it converted: what it quotes is taken into the chains here, so a vouch among it
        # counts and is passed on here as at a seat that had nothing to convert (red team 18 #4).
        verdict = self._evidence_verdict(seat, accused, rule, items)
        key = (seat, msg.seq)
        if accused in self.convicted:  # its own accused only: a conversion of another proves nothing of it
            self.late_blames.pop(key, None)  # (red team 20 #1: a blame dropped as another accused converted)
            return
        if verdict:
            self.late_blames.pop(key, None)
            message = str(msg.body.get("message"))[:MAX_TEXT]
            self._blame(accused, rule[:20], f"{message} (seat {seat}'s evidence, checked here {when})", items)
            return
        if verdict is None and self.stage == "stopped":
            # A stopped seat still judges play on in silence (`inbox._shadow`): a pass or a trick's end
            # the evidence needs may still come here (a last lock gossiped after the blame that rests
            # on it). Read again whenever anything moved (`_reread_late_blames`). Every such blame of a
            # blamer waits, each under its own seq (red team 20 #2: a blamer's next blame displaced the
            # one another seat convicted on); they are chained blames, so the author's meta quota bounds
            # them alike at every seat (I6). At most n wait per blamer, the first that came: an honest
            # seat publishes at most one blame per other seat, and every waiting blame is read again at
            # each progress, so a flood of undecidable ones cost quadratic work (red team 22 #2). A
            # blame refused so still vouched (`_vouch`), and an honest seat that convicts on it
            # publishes its own, which waits here under that seat's share (I2).
            waiting = sum(1 for blamer, _ in self.late_blames if blamer == seat)
            if key not in self.late_blames and waiting >= self.n:
                why = f"seat {seat} has {waiting} blames waiting here, more than an honest seat publishes: ignored"
                self._out.append(Refused(seat, "P-5.2", why))
                return
            self.late_blames[key] = (msg, self.progress)
            return
        self.late_blames.pop(key, None)
        self._out.append(Refused(seat, "P-5.2", f"seat {seat}'s blame {when} proves nothing here: ignored"))

    def _reread_late_blames(self) -> bool:
        """Read again the waiting blames of a stopped seat whose reading may have changed: True when
        any was read (the reading may have taken quoted messages into their chains)."""
        read = False
        for msg, progress in list(self.late_blames.values()):
            if self.stage != "stopped":
                break
            if progress != self.progress:
                read = True
                self._judge_late_blame(msg)
        return read

    def _judge_pending_blames(self) -> None:
        for seat, (msg, since) in list(self.pending_blames.items()):
            self._note_away(since, self._blame_forgiven.get((seat, msg.seq), 0.0), self._stop_deadline())
            if self.now - since > self._stop_deadline():
                del self.pending_blames[seat]
                why = f"seat {seat} published a blame whose evidence never became checkable here"
                self._stop("P-5.2", why, (msg.to_json(),))
                return

    def _evidence_verdict(self, blamer: int, accused: int, rule: str, items: Sequence[JSONObject]) -> bool | None:
        """True: the evidence proves the blame here; False: it does not; None: not yet decidable.
        Evidence counts only when signed by the accused AND bound to this table: public messages
        of this table's chains, or private messages on the accused→blamer channel of this round."""
        pending = False
        accused_id = self.settings.seats[accused].peer_id
        blamer_id = self.settings.seats[blamer].peer_id
        for item in items:
            try:
                if set(item) == REFERENCE_FIELDS:
                    held = self._referenced(item)
                    if held is None:
                        pending |= self._reference_pending(accused_id, item)
                        continue
                    # A reference to a message this seat holds stands for that message, judged as if
                    # quoted (red team 7: a referenced `secrets` item did not make an audit wait).
                    item = held.to_json()
                if set(item) == {"first", "second"}:
                    proof = Equivocation.from_json(item)
                    channels = {self.settings.table} | {
                        private_channel(self.settings.table, accused_id, p.peer_id) for p in self.settings.seats
                    }
                    if proof.first.table in channels:  # the proof must belong to this table (I1)
                        key = f"{_item_key(proof.first)}|{_item_key(proof.second)}"
                        if key in self.item_verdicts:
                            continue  # it failed before (red team 7: proofs re-verified on every read)
                        try:
                            verify_equivocation(proof, self.settings.seats[accused])
                        except ProtocolError:
                            self._remember(key, False)
                            raise
                        return True
                    continue
                signed = SignedMessage.from_json(item)
                if signed.table == self.settings.table and self._audit_pending(signed):
                    pending = True  # the blamer's audit (its evidence: the secrets that completed it)
                    continue
                if signed.author != accused_id:
                    if signed.kind == "timeout" and signed.table == self.settings.table:
                        # another claimant's claim: judged by `_judge_claims` once taken in here
                        self._take_in(signed)
                        pending = True
                    continue
                if signed.kind.startswith("p."):
                    if signed.table != private_channel(self.settings.table, accused_id, blamer_id):
                        continue
                    if signed.body.get("to") != blamer:
                        continue
                    found = self._private_item_fault(accused, blamer, signed)
                    if found is None:
                        pending = True
                    elif found:
                        return True
                    continue
                if signed.table != self.settings.table:
                    continue
                if signed.kind not in PUBLIC_KINDS:  # no honest seat signs it for this table: proven once signed
                    key = _item_key(signed)
                    if key in self.item_verdicts:
                        continue  # its signature failed before (red team 6: forged items re-verified)
                    try:
                        signed.verify(self.settings.seats[accused])
                    except ProtocolError:
                        self._remember(key, False)
                        raise
                    return True
                # A public message: this seat judges it itself on reaching it in the accused's chain.
                try:
                    self._take_in(signed)
                except NotYet:  # a round ahead of this seat, or no room in the hold: it comes by its chain
                    pending = True
                    continue
                if self.handled[accused] <= signed.seq:
                    pending = True
            except EquivocationDetected:
                raise
            except ProtocolError:
                continue
        return None if pending else False

    def _take_in(self, signed: SignedMessage) -> None:
        """Offer a quoted public message to its author's chain here, once: a copy already in the chain
        needs no check (`ChainTracker.holds`), one refused is remembered as refused, and one taken in
        before (held out of order) is not verified again on the next reading of a waiting blame (I6;
        red teams 6 to 8). One refused for now (`NotYet`: a round ahead, or no room in the hold) is
        offered again. Raises `ProtocolError`, `NotYet` or `EquivocationDetected` as `_accept_public`."""
        if self.tracker.holds(signed):
            return
        key = _item_key(signed)
        if key in self.item_verdicts:
            raise ProtocolError("P-1.3", "a quoted message whose signature failed before")
        if key in self.items_taken:
            return
        try:
            self._accept_public(None, signed)
        except OutOfOrder:
            pass
        except NotYet:
            raise
        except EquivocationDetected:
            raise
        except ProtocolError:
            self._remember(key, False)
            raise
        if len(self.items_taken) < MAX_ITEM_VERDICTS:
            self.items_taken.add(key)

    def _referenced(self, item: JSONObject) -> SignedMessage | None:
        """The message of this table's chains that a reference names, if this seat holds that very
        message at that place."""
        author, seq, digest = item.get("author"), item.get("seq"), item.get("digest")
        if item.get("table") != self.settings.table or not isinstance(author, str) or author not in self.seat_of:
            return None
        if not _is_seat(seq, 1 << 40) or not isinstance(digest, str):
            return None
        assert isinstance(seq, int)
        held = self.tracker.at(author, seq)
        return held if held is not None and held.digest() == digest else None

    def _reference_pending(self, accused_id: str, item: JSONObject) -> bool:
        """A message of the accused the blamer could only name (`_round.fitting_evidence`), which
        this seat does not hold at that place (`_referenced` finds the held ones): waited for (not yet
        here, or another version here: the blamer's gossip brings its own, and the fork convicts, I2).
        A reference that does not fit this table proves nothing."""
        seq, digest = item.get("seq"), item.get("digest")
        if item.get("table") != self.settings.table or item.get("author") != accused_id:
            return False
        if not _is_seat(seq, 1 << 40) or not isinstance(digest, str) or not is_digest(digest):
            return False
        assert isinstance(seq, int)
        held = self.tracker.at(accused_id, seq)
        return held is None or held.digest() != digest

    def _private_item_fault(self, accused: int, recipient: int, signed: SignedMessage) -> bool | None:
        """`_private_fault` of a blame's private item, each decided once (`item_verdicts`): a pending
        blame is read again on every input, and re-checking its signatures and keys each time let one
        peer pin a seat's CPU with free duplicates (I6; red team 5)."""
        key = _item_key(signed)
        if key in self.item_verdicts:
            return self.item_verdicts[key]
        found: bool | None
        try:
            signed.verify(self.settings.seats[accused])
            found = True if signed.kind not in PRIVATE_KINDS else self._private_fault(accused, recipient, signed)
        except ProtocolError:
            found = False  # not the accused's: proves nothing, now or later
        if found is not None:
            self._remember(key, found)
        return found

    def _remember(self, key: str, verdict: bool) -> None:
        if len(self.item_verdicts) < MAX_ITEM_VERDICTS:
            self.item_verdicts[key] = verdict

    def _audit_pending(self, signed: SignedMessage) -> bool:
        """A blame resting on secrets (whoever's completed the blamer's audit) is the blamer's audit:
        decidable here only by this seat's own audit of that round, once it has every seat's secrets;
        a blame that outran a slower seat's secrets must not stop the table (I2)."""
        rd = self.round
        return signed.kind == "secrets" and rd is not None and signed.round == rd.index and len(rd.secrets) < self.n

    def _private_fault(self, accused: int, recipient: int, signed: SignedMessage) -> bool | None:
        """Re-run the recipient's check of a private message of the accused (I1)."""
        rd = self.round
        past = self.last_round
        if past is not None and signed.round == past.index and signed.kind == "p.keys":
            # The round this seat audited last: its hand keys are checked against that round's deal, as
            # at a seat still in its audit (red team 9 #5: judged by the round each seat was in, the same
            # keys convicted at the seat still auditing and proved nothing at the seat a round on).
            rd = past
        elif rd is None or len(rd.locks) < self.n or signed.round > rd.index:
            return None
        elif signed.round < rd.index:
            return False
        try:
            if signed.kind == "p.keys":
                self._check_hand_keys(rd, accused, recipient, signed.body)
            else:
                trick = signed.body.get("trick")
                unended = isinstance(trick, int) and trick >= self.game.tricks_ended(self.state)
                if unended and self.stage in ("play", "stopped"):
                    return None  # a trick not ended here: not yet checkable (a stopped seat's play goes on in silence)
                self._check_peek(rd, accused, recipient, signed.body)
        except CheatDetected as exc:
            return exc.seat == accused
        return False


def _rests_on_claims(blame: SignedMessage) -> bool:
    """A blame whose evidence holds a timeout claim: a conviction for withholding (P-5.3)."""
    evidence = blame.body.get("evidence")
    items = evidence if isinstance(evidence, list) else []
    return any(isinstance(item, dict) and item.get("kind") == "timeout" for item in items)


def _item_key(signed: SignedMessage) -> str:
    """An evidence item's identity: its content and its signature (a forged signature over a real
    message's content must not stand for the real one)."""
    return f"{signed.digest()}/{signed.sig}"
