"""Taking messages in and sending them out (P-1.3, I3, I6).

Every public message is signed, sequenced and hash-linked and goes through a `ChainTracker`;
accepted messages wait in their author's inbox and are handled strictly in the author's order
once the table has reached the point they belong to. Before anything is chained, forwarded or
kept, the kind must be one of `KINDS` and the author within its per-round caps (count, bytes);
out-of-order messages are held within caps by count and bytes. A signed message in its author's
chain that cannot be read is its author's fault; nothing a peer sends escapes as an exception.
A peer forwards each public message to every seat the first time it accepts it, from whichever
seat it came (gossip): a message an honest seat accepted reaches every honest seat (I1).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from engine.api import JSONObject, RuleError
from protocol.encoding import nesting_depth
from protocol.errors import CheatDetected, ProtocolError
from protocol.signed import EquivocationDetected, OutOfOrder, SignedMessage, Verdict, sign_message
from protocol.table._core import SessionCore
from protocol.table._round import NotYet, _Aborted, _Ignored, _is_seat, evidence_references, fitting_evidence
from protocol.table._state import (
    KINDS,
    MAX_HELD,
    MAX_HELD_BYTES,
    MAX_OWN_EVIDENCE_BYTES,
    MAX_ROUND_BYTES,
    MAX_ROUND_MESSAGES,
    MAX_SMALL_BYTES,
    MAX_SMALL_DEPTH,
    META_KINDS,
    PRIVATE_KINDS,
    PUBLIC_KINDS,
    SMALL_KINDS,
)
from protocol.table.values import Blamed, Output, Refused, Send, private_channel


class InboxMixin(SessionCore):
    def _publish(self, kind: str, body: JSONObject) -> SignedMessage | None:
        if self.silent and kind not in META_KINDS:
            return None  # a stopped seat judging on in the shadow (`_shadow`): its own step is never made
        msg = sign_message(self.identity, self.settings.table, self.round_index, self.my_seq, self.my_prev, kind, body)
        self.my_seq += 1
        self.my_prev = msg.digest()
        self.progress += 1
        self.tracker.accept(msg)
        self.inbox[self.me].append(msg)
        self._out.append(Send(None, msg.to_wire()))
        return msg

    def _publish_quoting(self, kind: str, fields: JSONObject, evidence: tuple[JSONObject, ...]) -> None:
        """This seat's blame or stop with its evidence, always published: the other seats would
        otherwise wait for a seat that ended in silence and claim it (I1; red team 11 #1, a verdict
        whose quoted evidence nested past `MAX_DEPTH` could not be signed). Evidence too big is named
        by reference (`fitting_evidence`); if the message still cannot be signed (a quoted blame or
        stop nested too deep), every quoted item is named by reference; failing that, none is shown."""
        shown = fitting_evidence(evidence, MAX_OWN_EVIDENCE_BYTES)
        named = tuple(ref for item in shown for ref in evidence_references(item) or (item,))
        for items in (shown, named, ()):
            try:
                self._publish(kind, {**fields, "evidence": list(items)})
                return
            except ProtocolError:
                continue

    def _send_private(self, to: int, kind: str, body: JSONObject) -> None:
        if self.silent:
            return
        seq, prev = self.private_out[to]
        channel = private_channel(self.settings.table, self.identity.peer_id, self.settings.seats[to].peer_id)
        msg = sign_message(self.identity, channel, self.round_index, seq, prev, kind, {**body, "to": to})
        self.private_out[to] = (seq + 1, msg.digest())
        self._out.append(Send(to, msg.to_wire()))

    def drain(self) -> list[Output]:
        """Take the outputs queued so far (every public method returns them; tests acting as a seat
        call this after driving the session by hand)."""
        out, self._out = self._out, []
        return out

    def _check_kind(self, author: int, msg: SignedMessage, table: str, kinds: frozenset[str]) -> None:
        """I6: a kind this protocol does not have is refused before it is chained, forwarded or kept.
        Signed by a seat for this table, it is that seat's fault, and provable to every seat."""
        if msg.kind in kinds:
            if msg.kind in SMALL_KINDS and not _quotable(msg):
                # Refused, not blamed: it may have come to this seat alone; the author's chain then
                # stops here as everywhere it was sent, and the clocks settle it (I1, I2).
                why = f"seat {author}'s {msg.kind!r} is larger or deeper than any honest one: refused"
                raise ProtocolError("P-1.3", why)
            return
        if msg.table != table:
            raise ProtocolError("P-1.3", "a message for another table or channel")
        if not _quotable(msg):
            # Refused, not blamed: too big or deep to quote whole in a blame, and never chained or
            # forwarded, so no other seat could check the proof (I2; red team 9: convicted here,
            # stopped elsewhere).
            raise ProtocolError("P-1.3", f"seat {author}'s {msg.kind!r} has no kind and is too big or deep: refused")
        msg.verify(self.settings.seats[author])
        why = f"seat {author} signed a message of a kind this protocol has not: {msg.kind!r}"
        raise CheatDetected("P-1.3", why, author)

    def _check_round(self, author: int, msg: SignedMessage) -> None:
        """I6: a message more than one round ahead is refused before it is chained or kept. An honest
        seat is never two rounds ahead of another (every round needs every seat's passes), and each
        round has its own quota: without this, a seat could open a fresh quota per message."""
        if msg.round > self.round_index + 1:
            raise NotYet(
                "P-1.3", f"seat {author}'s message for round {msg.round}, more than one round ahead: refused"
            )

    def _check_quota(self, author: int, msg: SignedMessage, public: bool) -> None:
        if self._over_quota(author, msg, public):
            raise ProtocolError("P-1.3", f"seat {author} sent more than a round's share of messages: refused")

    def _over_quota(self, author: int, msg: SignedMessage, public: bool) -> bool:
        """I6: per-author caps by count and bytes per round, checked before a message is chained.
        Only messages taken into the author's chain in order are charged (`_charge`): every honest seat
        takes the same public chain, so the same public message is over the cap at every one of them
        and none refuses what the others accept (I1). Private messages have their own quota: junk on
        one channel cannot use up the author's public share at one seat only."""
        usage = self.usage.get((author, self._quota_round(author, msg, public), public), (0, 0))
        return usage[0] >= MAX_ROUND_MESSAGES or usage[1] + len(msg.signed_bytes()) > MAX_ROUND_BYTES

    def _quota_round(self, author: int, msg: SignedMessage, public: bool) -> int:
        """The round a message is charged to. Verdicts and claims (handled whatever round they name)
        share one quota for the whole game, -1 (red team 4); any other message is charged to the latest
        round its chain has reached, so a label of a past round opens no fresh share (red team 5: past
        aborts and private keys). Read from the message and its chain alone, so alike at every seat."""
        if msg.kind in META_KINDS:
            return -1
        return max(msg.round, self.chain_rounds.get((author, public), 0))

    def _charge(self, author: int, msg: SignedMessage, public: bool) -> None:
        self.progress += 1
        charged = self._quota_round(author, msg, public)
        usage = self.usage.setdefault((author, charged, public), [0, 0])
        usage[0] += 1
        usage[1] += len(msg.signed_bytes())
        if charged >= 0:
            self.chain_rounds[(author, public)] = charged

    def _accept_public(self, sender: int | None, msg: SignedMessage) -> None:
        author = self.seat_of.get(msg.author)
        if author is None:
            raise ProtocolError("P-1.3", "a message from a key that has no seat at this table")
        if author == self.me:
            self.tracker.accept(msg)  # our own message coming back: a duplicate, or a forgery refused
            return
        self._check_kind(author, msg, self.settings.table, PUBLIC_KINDS)
        self._vouch(author, msg)
        self._check_round(author, msg)
        if msg.seq == self.tracker.next_seq(msg.author):
            self._check_quota(author, msg, public=True)
        elif msg.seq > self.tracker.next_seq(msg.author) and msg.table == self.settings.table:
            # A gap: held, its caps checked before its signature (red team 22 #5; the tracker would
            # verify it first, and a quoted item refused for a full hold is offered again at every
            # reading of a waiting blame).
            self._hold(author, msg, msg.author)
            return
        try:
            verdict = self.tracker.accept(msg)
        except OutOfOrder:
            self._hold(author, msg, msg.author)
            return
        if verdict is Verdict.DUPLICATE:
            return
        self._charge(author, msg, public=True)
        self.last_input_kept = True
        self._queue(author, msg, forward=sender is not None)
        while (key := (msg.author, self.tracker.next_seq(msg.author))) in self.held:
            if self._over_quota(author, self.held[key], public=True):
                break  # it stays held (bounded by the held caps), as it does at every other seat
            later = self._unhold(*key)
            self.tracker.accept(later)
            self._charge(author, later, public=True)
            self._queue(author, later, forward=True)

    def _vouch(self, author: int, msg: SignedMessage) -> None:
        """A signed blame of this table vouches wherever this seat first sees it, before any check of
        round, quota or order, which may come out differently at another honest seat: chained from a
        peer or from another blame's evidence, held out of order, half of a fork, refused over its
        author's quota (held at a seat where its chain had a gap: red team 18 #3) or as a round ahead.
        `_note_vouch` passes it on as it counts it. Its signature is checked only while it would add a
        vouch, so a flood costs at most n + 1 checks per author (I6)."""
        accused = msg.body.get("seat")
        if msg.kind != "blame" or msg.table != self.settings.table:
            return
        if not (accused is None or _is_seat(accused, self.n)):
            return
        assert accused is None or isinstance(accused, int)
        if author in self.blamers.get(accused, set()):
            return
        msg.verify(self.settings.seats[author])
        self._note_vouch(author, msg)

    def _queue(self, author: int, msg: SignedMessage, forward: bool) -> None:
        self.inbox[author].append(msg)
        # I2: what the schedule of `blame._may_convict` counts is taken as the message is chained, not
        # when its turn to be handled comes (red team 13 #1: a stop held behind moves not yet takeable).
        # A blame opens the windows only where it stops this seat (`blame._blame`, `_halt_for_waiting_blame`):
        # one this seat drops as groundless, or judges on its own clock (claims), must not close them on
        # the accused's later faults (a cheater's blame resting on its own claim would then let it
        # withhold for good, convicted nowhere).
        if msg.kind == "stop":
            self._end_known()
        if msg.kind == "blame":  # it vouched as it came in (`_vouch`)
            self.blames_unjudged += 1
        if forward:  # gossip: what one seat was told, every seat is told (catches equivocation), and
            # whoever it came from: a message an honest seat built on then reaches every honest seat (I1)
            self._out.append(Send(None, msg.to_wire(), forward=True))

    def _accept_private(self, sender: int | None, msg: SignedMessage) -> None:
        author = self.seat_of.get(msg.author)
        if author is None or author == self.me:
            raise ProtocolError("P-1.3", "a private message from a key that has no seat at this table")
        if msg.body.get("to") != self.me:
            raise ProtocolError("P-1.3", "a private message addressed to another seat")
        tracker = self.private_in[author]
        self._check_kind(author, msg, tracker.table, PRIVATE_KINDS)
        self._check_round(author, msg)
        if msg.seq == tracker.next_seq(msg.author):
            self._check_quota(author, msg, public=False)
        try:
            if tracker.accept(msg) is Verdict.DUPLICATE:
                return
        except OutOfOrder:
            self._hold(author, msg, msg.table)
            return
        self._charge(author, msg, public=False)
        self.last_input_kept = True
        self.private_inbox[author].append(msg)
        while (key := (msg.table, tracker.next_seq(msg.author))) in self.held:
            if self._over_quota(author, self.held[key], public=False):
                break
            later = self._unhold(*key)
            tracker.accept(later)
            self._charge(author, later, public=False)
            self.private_inbox[author].append(later)

    def _hold(self, author: int, msg: SignedMessage, chain: str) -> None:
        """Keep a message that came before its author's earlier ones (a reordering transport),
        within caps by count and bytes per chain (I6). Its signature is checked next, before it is
        kept: the caps first, so that what a full hold refuses costs no signature check (red team 22
        #5: a waiting blame quoting 500 items past a full hold verified them all on every input)."""
        if (chain, msg.seq) in self.held:
            return
        # Not charged to the round's quota: that is for the chain, the same at every seat (I1); what
        # is held is bounded here, per chain.
        size = len(msg.signed_bytes())
        if self.held_count.get(chain, 0) >= MAX_HELD or self.held_bytes.get(chain, 0) + size > MAX_HELD_BYTES:
            raise NotYet("P-1.3", f"too many out-of-order messages from seat {author}")
        msg.verify(self.settings.seats[author])
        self.held[(chain, msg.seq)] = msg  # not `progress`: a held message changes nothing a blame reads (I6)
        self.held_bytes[chain] = self.held_bytes.get(chain, 0) + size
        self.held_count[chain] = self.held_count.get(chain, 0) + 1
        self.last_input_kept = True

    def _unhold(self, chain: str, seq: int) -> SignedMessage:
        msg = self.held.pop((chain, seq))
        self.held_bytes[chain] -= len(msg.signed_bytes())
        self.held_count[chain] -= 1
        return msg

    def _handle_private(self, seat: int, msg: SignedMessage) -> bool:
        if self.stage == "stopped":
            return self._shadow(self._handle_private, seat, msg)
        if self.stage == "over":
            raise _Ignored("P-1.3", f"a private {msg.kind!r} after the game: ignored")
        if msg.round > self.round_index:
            return False
        if msg.round < self.round_index:
            raise _Ignored("P-1.3", f"a private {msg.kind!r} of past round {msg.round}: ignored")
        if self.stage == "audit":
            # Play is over here: nothing private is owed any more (`waiting`), and a fault found now
            # could not be checked by a seat already in the next round (I2; red team 5: an unasked
            # peek answer at the round's seam). Ignored like one of a past round.
            raise _Ignored("P-1.3", f"a private {msg.kind!r} after the round's play: ignored")
        if msg.kind == "p.keys":
            return self._on_private_keys(seat, msg)
        if msg.kind == "p.peek":
            return self._on_peek(seat, msg)
        raise ProtocolError("P-1.3", f"unknown private message kind {msg.kind!r} from seat {seat}: ignored")

    def _pump_safely(self) -> None:
        try:
            self._pump()
        except EquivocationDetected as exc:
            self._blame_equivocation(exc)
        except CheatDetected as exc:
            self._blame(exc.seat, exc.rule, exc.message)
        self._halt_for_waiting_blame()

    def _pump(self) -> None:
        """Handle queued messages, each author's in order, until none can go further now."""
        progress = True
        # Once over, verdicts and claims in the chains are still read (`_handle`): a seat still in the
        # last audit reads them too, and both must reach the same end (I2; red team 5).
        while progress and self.stage not in ("ended",):
            progress = False
            for seat, queue, handle in (
                *((s, self.inbox[s], self._handle) for s in range(self.n)),
                *((s, self.private_inbox[s], self._handle_private) for s in range(self.n)),
            ):
                public = handle == self._handle
                while queue and self.stage not in ("ended",):
                    msg = queue[0]
                    try:
                        done = handle(seat, msg)
                    except CheatDetected as exc:
                        self._consumed(queue, public, seat)
                        if isinstance(exc, EquivocationDetected):
                            raise
                        self._blame(exc.seat, exc.rule, exc.message, (msg.to_json(), *exc.evidence))
                        progress = True  # a conviction ends nothing yet: the seat judges on (`blame._blame`)
                        break
                    except RuleError as exc:
                        self._consumed(queue, public, seat)
                        self._blame(seat, exc.rule, exc.message, (msg.to_json(),))
                        progress = True
                        break
                    except _Aborted:
                        self._consumed(queue, public, seat)  # the round stops for the audit (P-5.2)
                        progress = True
                        break
                    except ProtocolError as exc:
                        self._consumed(queue, public, seat)
                        if public and not isinstance(exc, _Ignored):
                            # I3: a signed message in its author's chain that cannot be read is
                            # its author's fault, and every seat sees the same message.
                            why = f"seat {seat}'s {msg.kind!r} message is malformed: {exc.message}"
                            self._blame(seat, exc.rule, why, (msg.to_json(),))
                            progress = True
                            break
                        self._out.append(Refused(seat, exc.rule, exc.message))
                        continue
                    if not done:
                        break
                    self._consumed(queue, public, seat)
                    progress = True
            if self.stage == "stopped" and self.late_blames and self._reread_late_blames():
                progress = True
            if self.stage == "stopped" and self.declined_proofs and self._convert_declined():
                progress = True

    def _consumed(self, queue: deque[SignedMessage], public: bool, seat: int) -> None:
        if public and seat != self.me and queue[0].kind == "blame":
            self.blames_unjudged -= 1
        queue.popleft()
        self.progress += 1
        if public:
            self.handled[seat] += 1

    def _handle(self, seat: int, msg: SignedMessage) -> bool:
        """Apply one message of `seat`; False when the table has not reached its point yet."""
        if msg.kind in META_KINDS:  # verdicts and claims, whatever the round (I2)
            if msg.kind == "blame" and self.stage in ("over", "stopped"):
                self.pending_blames.pop(seat, None)
                self._judge_late_blame(msg)
                return True
            if msg.kind == "stop" and self.stage == "stopped":
                return True  # stopped already; another seat's stop changes nothing here
            meta: Callable[[int, SignedMessage], bool] = getattr(self, KINDS[msg.kind])
            return meta(seat, msg)
        if self.stage == "stopped":
            return self._shadow(self._handle, seat, msg)
        if self.stage == "over":
            # Judged as a seat in a next round would judge it (below), so alike at a seat still in the
            # last audit (red team 6: a second set of last secrets convicted there, was ignored here).
            if msg.round > self.round_index:
                return False
            if msg.kind == "abort":
                raise _Ignored("P-5.2", f"seat {seat}'s stop for an audit came after the game: ignored")
            raise CheatDetected("P-1.3", f"a {msg.kind!r} message of round {msg.round} after the game", seat)
        self._current = msg
        if msg.round > self.round_index:
            return False
        if msg.round < self.round_index:
            if msg.kind == "abort":
                raise _Ignored("P-5.2", f"seat {seat}'s stop for an audit came after the round's audit: ignored")
            stale = f"a {msg.kind!r} message of round {msg.round} in round {self.round_index}"
            raise CheatDetected("P-1.3", stale, seat)
        name = KINDS.get(msg.kind)
        if name is None:  # refused on receipt already (`_check_kind`); kept for safety
            raise ProtocolError("P-1.3", f"unknown message kind {msg.kind!r} from seat {seat}: ignored")
        handler: Callable[[int, SignedMessage], bool] = getattr(self, name)
        return handler(seat, msg)

    def _shadow(self, handle: Callable[[int, SignedMessage], bool], seat: int, msg: SignedMessage) -> bool:
        """I2: a stopped seat judges the other seats' game messages on from where its own play got to,
        exactly as it would have live, but makes nothing of its own (`silent`: no move, key, reveal,
        secrets or abort is signed or sent, no private message; the UI is told nothing). Its own next
        step is then never taken, and no honest seat can pass it, so this seat reaches every point any
        other honest seat reaches, and a fault of play sent to another seat alone at the instant of a
        stop convicts here too (red team 10 #1). What it finds is what a live seat finds, from the
        chains and this seat's own knowledge: a fault proven by evidence ends it (`stopped -> ended`,
        the blame is published), a private conclusion stops a round for an audit nobody can finish."""
        if self.shadow_stage is None:
            if handle == self._handle_private:
                raise _Ignored("P-1.3", f"a private {msg.kind!r} after this seat stopped: ignored")
            return True
        told = len(self._out)
        self.stage, self.silent = self.shadow_stage, True
        try:
            if self.stage == "deal":
                self._try_deal()  # without this seat's hand, if a seat kept its keys back (`_try_deal`)
            return handle(seat, msg)
        finally:
            self.silent = False
            if self.stage != "ended":  # a verdict reached in the shadow stands (`_blame`)
                self.shadow_stage, self.stage = self.stage, "stopped"
            self._out[told:] = [o for o in self._out[told:] if isinstance(o, Send | Blamed)]


def _quotable(msg: SignedMessage) -> bool:
    """A message of a kind that quotes nothing fits whole in this seat's own blame or stop (I2, I3)."""
    return len(msg.signed_bytes()) <= MAX_SMALL_BYTES and nesting_depth(msg.body) <= MAX_SMALL_DEPTH

