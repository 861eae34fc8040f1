"""One seat's table session: a sans-IO state machine with one entry point, `handle(event)`.

It takes frozen input events (`values.Input`: bytes from a link, the local player's move, the time, a
link change, a stop or leave the runner decided) and returns outputs (bytes to send, events for the
screen). It reads no clock and draws all its randomness from the seed it was made with, so replaying a
seat's journal (the stream of its input events) into a new session gives the same signed messages,
byte for byte (P-5.6).

What it does with what comes in:

* every public message goes through its author's chain for the round (P-1.3): a second version at a
  place already filled is a fork, exposed at once by its two signed halves; a message past a gap is
  held (bounded, P-6.6); every message accepted is passed on to every seat (gossip), so a message any
  honest seat holds reaches the rest, and the messages a message names go out before it;
* the round's `ledger.RoundLedger` takes the messages in the rules' order, each judged on the history
  it names; a message it refuses is a fault, proven by that message and its history (`verify`);
* private messages (hand keys, peek answers) are judged the same way by `ledger.judge_private`.

Every exposure goes through `verify.verify`, here and at every seat the proof is passed on to. A seat
that owes a step is only waited for (`waiting`, `due`): a stop, a leave or a timeout convicts nobody.
The phases and what moves between them are in `protocol.table.phases`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from engine.api import Game, IllegalMove, JSONObject
from engine.games import get_game
from engine.record import GameRecord, RoundRecord
from protocol.commitment import Opening, commit
from protocol.deck import (
    KeyOpening,
    LockSecret,
    SeatSecrets,
    ShuffleSecret,
    key_opening,
    lock_pass,
    open_position,
    random_permutation,
    random_scalar,
    shuffle_pass,
)
from protocol.encoding import canonical, decode, sha256_hex
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import Identity
from protocol.signed import MAX_MESSAGE_BYTES, SignedMessage, sign_message
from protocol.table import phases
from protocol.table.ledger import Fault, Owed, RoundLedger, RoundStart, judge_private, remember_pass, round_messages
from protocol.table.messages import (
    CHOICE_TAG,
    KINDS,
    MAX_ROUND_BYTES,
    MAX_ROUND_MESSAGES,
    PRIVATE_KINDS,
    PROTOCOL_VERSION,
    SEED_TAG,
    STEP_KINDS,
    History,
    private_channel,
    record_digest,
)
from protocol.table.values import (
    NOTE_GRACE,
    Dealt,
    Decided,
    Exposed,
    Finished,
    GameOver,
    Halt,
    Input,
    Leave,
    LinkChanged,
    Moved,
    NoteWaiting,
    Output,
    PeekResult,
    Received,
    Refused,
    RoundConfirmed,
    Send,
    Start,
    StopFor,
    Stopped,
    TableSettings,
    Tick,
    Waiting,
)
from protocol.table.verify import Conviction, Plan, round_start, rounds_json, verify

MAX_HELD = 256  # out-of-order messages held per author (P-6.6)
MAX_PENDING_PROOFS = 4  # per sender
# Proofs from one sender kept (journaled) in a whole table: an honest seat passes on one per seat it exposes.
MAX_PROOF_BYTES_KEPT = 2 << 20  # P-6.6
MAX_PAST_NOTES = 16  # notes of the round just confirmed taken per author (P-6.6)
MAX_PAST_BYTES = 256 << 10  # ... and their bytes
PERSON_KINDS = frozenset({"move", "commit"})
MAX_FUTURE_BYTES = 1 << 20  # per author


class _Chain:
    """One author's chain on one channel in one round: accepted messages, and those past a gap."""

    __slots__ = ("bytes", "held", "msgs")

    def __init__(self) -> None:
        self.msgs: list[SignedMessage] = []
        self.held: dict[int, SignedMessage] = {}
        self.bytes = 0


class TableSession:
    """One seat's view of one table, from the first dealer's seed to the signed end (P-5.8)."""

    def __init__(self, settings: TableSettings, identity: Identity, seed: bytes) -> None:
        self.settings = settings
        self.identity = identity
        self.game: Game[Any, Any, Any, Any] = get_game(settings.game)
        self.options = self.game.options_from_json(settings.options)
        self.n = len(settings.seats)
        self.seat_of = {public.peer_id: seat for seat, public in enumerate(settings.seats)}
        if identity.peer_id not in self.seat_of:
            raise ProtocolError("P-6.7", "this laptop's key has no seat in the plan")
        self.me = self.seat_of[identity.peer_id]
        self.plan = Plan(settings.table, self.game, self.options, settings.seats)
        self._seed = hashlib.sha256(b"lanplay/session-entropy/v1\0" + seed).digest()
        self._drawn = 0
        self._ending = False
        # Rounds carried from the table this one goes on from (P-5.7) stand as confirmed here: never undone.
        self.rounds: list[RoundRecord] = [RoundRecord(r["deal"], tuple(r["moves"])) for r in settings.carried]  # type: ignore[arg-type]
        self.carried = len(self.rounds)
        self.state: Any = round_start(self.plan, self.rounds).state  # full state after the confirmed rounds
        self.void: JSONObject | None = None  # the round cut short, if any
        self.stops: list[JSONObject] = []  # every stop and leave of the game (counted against seats)
        # One proof per exposed seat: of the proofs against it, the least by digest, so every honest seat,
        # passing each smaller one on, writes the same one into its record (P-6.2).
        self.proofs: dict[int, JSONObject] = {}
        self._faulted_rounds: set[int] = set()  # rounds a proof showed a fault in their record's making
        self._proof_digests: dict[int, str] = {}
        self.convictions: dict[int, Conviction] = {}
        self.left: set[int] = set()
        self.links = [True] * self.n
        self.link_down_since: dict[int, float] = {}
        self.now = 0.0
        self.last_kept = False
        self.finished = False
        self.complete = False
        self._out: list[Output] = []
        self._pending_proofs: list[tuple[int, JSONObject]] = []
        self._future: dict[int, list[tuple[int | None, SignedMessage]]] = {}
        self._future_bytes = [0] * self.n  # per author: no seat's early messages crowd out another's
        self._proofs_kept = [0] * self.n  # proofs kept from each sender, and their bytes (MAX_PROOF_BYTES_KEPT)
        self._proof_bytes = [0] * self.n
        self._since: dict[Owed, float] = {}
        self._noted_for: frozenset[Owed] = frozenset()
        self._sent_end: str | None = None
        self._begin_round()

    @property
    def phase(self) -> phases.Phase:
        """Derived from what the round's ledger took (the table of changes: `protocol.table.phases`)."""
        ledger = self.ledger
        if self.finished:
            return "finished"
        if self._ending:
            return "ending"
        if ledger.stopped or ledger.faults or self.convictions:
            return "stopping"
        if ledger.ended is not None:
            return "audit"
        if ledger.dealt:
            return "play"
        return "seed" if ledger.dealer is None else "deal"

    # -- randomness ------------------------------------------------------------------------------
    def _entropy(self, size: int) -> bytes:
        """The seat's own random bytes: a stream from its seed, so a journal replay draws the same."""
        out = b""
        while len(out) < size:
            out += hashlib.sha256(self._seed + self._drawn.to_bytes(8, "big")).digest()
            self._drawn += 1
        return out[:size]

    # -- rounds ----------------------------------------------------------------------------------
    @property
    def round_index(self) -> int:
        """The round this seat's ledger replays: every message it signs is of this round. Not the count
        of confirmed rounds, which a proof about a confirmed round can lower (`_unconfirm`)."""
        return self.ledger.start.index

    def _begin_round(self) -> None:
        self.prev_ledger: RoundLedger | None = getattr(self, "ledger", None)
        rec = record_digest(rounds_json(self.rounds))
        start = RoundStart(
            self.settings.table, self.game, self.options, self.settings.seats, len(self.rounds), self.state, rec
        )
        self.ledger = RoundLedger(start)
        self.rec = rec
        self.public = [_Chain() for _ in range(self.n)]
        self.private_in = [_Chain() for _ in range(self.n)]
        self.private_out: list[list[SignedMessage]] = [[] for _ in range(self.n)]
        self.private_judged = [0] * self.n
        self.private_got = [0] * self.n  # private messages from each seat judged and taken here
        self.forwarded: set[str] = set()
        self._past_notes = [0] * self.n  # notes of the round before taken, per author (`_fork_in_past`)
        self._past_bytes = [0] * self.n
        self.applied = 0  # ledger log entries applied to this seat's own state
        self.my_state: Any = None
        self.dealt_state: Any = None  # this seat's state right after the deal (what the screen starts from)
        self.my_cards: dict[int, str] = {}
        self.hand_keys: dict[int, dict[int, KeyOpening]] = {}
        self.openings: dict[int, Opening] = {}  # point -> opening of this seat's hidden choice there
        self.choices: dict[int, JSONObject] = {}  # point -> the move this seat chose there
        self.peeks_answered: dict[int, int] = {}
        self.peek_answers: dict[int, int] = {}  # target -> peek answers from it judged here (S-6.4)
        self.private_fault = False
        self.told_moves = 0
        self.told_stops = 0
        self.told_dealt = False
        self.audited = False
        self.exposed_here: set[int] = set()
        self.my_stop = False  # this seat stopped the round (for an audit, or waiting for a seat)
        self.stopped_for: set[Owed] = set()  # the owed steps this seat stopped for, each once
        self.my_shuffle: ShuffleSecret | None = None
        self.my_lock: LockSecret | None = None

    def _deck_secrets(self) -> tuple[ShuffleSecret, LockSecret]:
        """This seat's shuffle and lock secrets for the round, drawn when the deck is known."""
        if self.my_shuffle is None or self.my_lock is None:
            ctx = self.ledger.ctx
            assert ctx is not None
            self.my_shuffle = ShuffleSecret(random_scalar(self._entropy), random_permutation(ctx.size, self._entropy))
            self.my_lock = LockSecret.new(ctx.size, entropy=self._entropy)
        return self.my_shuffle, self.my_lock

    # -- the one entry point ---------------------------------------------------------------------
    def handle(self, event: Input) -> tuple[Output, ...]:
        """Take one input event; return what to send and tell. Never raises (P-6.3)."""
        self.now = event.now
        self.last_kept = False
        try:
            if isinstance(event, Received):
                self._received(event.sender, event.data)
            elif isinstance(event, Decided):
                self._decided(event.move)
            elif isinstance(event, Start):
                self._start()
            elif isinstance(event, LinkChanged):
                self._link(event.seat, event.up)
            elif isinstance(event, StopFor):
                self._stop_for(event)
            elif isinstance(event, Leave):
                self._leave()
            elif isinstance(event, Halt):
                if not self.finished and self.me not in self.left:
                    self._audit_stop(event.reason)
            elif isinstance(event, NoteWaiting):
                if self.note_due(event.now):
                    self._noted_for = frozenset(o for o in self._since if o.to == self.me)
                    self._publish("wait", {})
            elif not isinstance(event, Tick):
                raise ProtocolError("P-6.3", f"unknown input {type(event).__name__}")
            if not isinstance(event, Tick):
                self._pump()
        except Exception as exc:  # P-6.3: a bug must not turn one input into a crash loop
            self._out.append(Refused(getattr(event, "sender", None), "P-6.3", f"input could not be handled: {exc!r}"))
        self._clocks()
        out, self._out = tuple(self._out), []
        return out

    def _start(self) -> None:
        if self.round_index == 0 and not self.ledger.chains[self.me]:
            self._pump()

    # -- receiving ---------------------------------------------------------------------------------
    def _received(self, sender: int | None, data: bytes) -> None:
        if len(data) > MAX_MESSAGE_BYTES:
            self._out.append(Refused(sender, "P-6.6", f"a message of {len(data)} bytes is over the limit"))
            return
        try:
            raw = decode(data, MAX_MESSAGE_BYTES)
        except ProtocolError as exc:
            self._out.append(Refused(sender, exc.rule, f"unreadable: {exc.message}"))
            return
        if set(raw) == {"proof"}:
            self._proof_received(sender, raw["proof"], len(data))
            return
        try:
            msg = SignedMessage.from_json(raw, data)
        except ProtocolError as exc:
            self._out.append(Refused(sender, exc.rule, f"unreadable: {exc.message}"))
            return
        author = self.seat_of.get(msg.author)
        if author is None or msg.kind not in KINDS:
            self._out.append(Refused(sender, "P-6.6", "a message of no seat, or of an unknown kind"))
            return
        if author == self.me:
            return  # our own, passed back by gossip
        if msg.round == self.round_index - 1 and self.prev_ledger is not None and msg.table == self.settings.table:
            self._fork_in_past(author, msg)
            return
        if (
            msg.round < self.round_index
            or msg.round > self.round_index + 1
            or (self.finished and msg.round != self.round_index)
        ):
            return  # a round gone by, or not ours yet to hold
        if msg.kind in PRIVATE_KINDS:
            if msg.table != private_channel(self.settings.table, msg.author, self.identity.peer_id):
                return  # another seat's private message, or one of another table
        elif msg.table != self.settings.table:
            self._out.append(Refused(sender, "P-1.3", "a public message of another table"))
            return
        if msg.round == self.round_index + 1:
            self._hold_future(sender, author, msg, len(data))
            return
        self._accept(author, msg, len(data))

    def _fork_in_past(self, author: int, msg: SignedMessage) -> None:
        """A public message of the round just confirmed: another version of one held here is a fork,
        which voids that round at every seat (`_expose`); anything else of it is old news."""
        ledger = self.prev_ledger
        assert ledger is not None
        chain = ledger.chains[author]
        if msg.seq == len(chain) and msg.kind in ("end", "stop", "leave", "wait", "secrets"):
            # A note of a seat still ending that round (it voided the round this seat confirmed): taken
            # there, for the end signatures every present seat must agree on (P-5.8), and passed on as
            # any message taken, so every seat takes the same notes (P-6.2). A few, within a byte cap
            # per author (P-6.6): a seat ending a round signs its secrets, a stop or leave, and ends.
            size = len(msg.to_wire())
            if (
                msg.prev != (chain[-1].digest() if chain else "0" * 64)
                or self._past_notes[author] >= MAX_PAST_NOTES
                or self._past_bytes[author] + size > MAX_PAST_BYTES
            ):
                return
            try:
                msg.verify(self.settings.seats[author])
            except ProtocolError:
                return
            self._past_notes[author] += 1
            self._past_bytes[author] += size
            before = len(ledger.stops)
            ledger.add(author, msg)
            ledger.advance()
            self.last_kept = True
            self._out.append(Send(None, msg.to_wire(), forward=True))
            self._past_stops(ledger, before)
            return
        if msg.seq >= len(chain) or chain[msg.seq].digest() == msg.digest():
            return
        try:
            msg.verify(self.settings.seats[author])
        except ProtocolError:
            return
        self._fork(chain[msg.seq], msg)

    def _past_stops(self, ledger: RoundLedger, before: int) -> None:
        """Stops of the round just confirmed here, taken after it: counted as any stop, and one that
        stops the round (anything but a wait for an end signature) voids it here as at the seat that
        stopped it (P-5.5: a stop from any seat stops the round at every seat), so whichever came
        first here, the stop or the last secrets, every seat ends with the same rounds (P-6.2)."""
        round_of = self.round_index - 1
        for author, seq, body in ledger.stops[before:]:
            self._count_stop(round_of, author, seq, body)
        voiding = any(_voids(body) for _, _, body in ledger.stops[before:])
        if voiding and self.carried <= round_of == len(self.rounds) - 1 and not self.finished:
            record = ledger.audit.record if ledger.audit is not None else None
            self._unconfirm(round_of, "the round was stopped", list(record.moves) if record else [])

    def _hold_future(self, sender: int | None, author: int, msg: SignedMessage, size: int) -> None:
        """A message of the next round, kept until this seat gets there (P-6.6: per author, within
        MAX_FUTURE_BYTES, and only a chain's first MAX_HELD places)."""
        size = len(msg.to_wire())
        if self._future_bytes[author] + size > MAX_FUTURE_BYTES or msg.seq >= MAX_HELD:
            return
        try:
            msg.verify(self.settings.seats[author])
        except ProtocolError as exc:
            self._out.append(Refused(sender, exc.rule, exc.message))
            return
        self._future.setdefault(msg.round, []).append((sender, msg))
        self._future_bytes[author] += size
        self.last_kept = True

    def _accept(self, author: int, msg: SignedMessage, size: int) -> None:
        private = msg.kind in PRIVATE_KINDS
        chain = self.private_in[author] if private else self.public[author]
        msgs = chain.msgs
        size = len(msg.to_wire())  # P-6.6: counted as its author signed it, however a relay padded it
        if msg.seq < len(msgs):
            held = msgs[msg.seq]
            if held.digest() == msg.digest():
                return  # a duplicate
            try:
                msg.verify(self.settings.seats[author])
            except ProtocolError:
                return
            self._fork(held, msg)
            return
        if len(msgs) + len(chain.held) >= MAX_ROUND_MESSAGES or chain.bytes + size > MAX_ROUND_BYTES:
            return  # P-6.6: over what one seat may make this seat keep in a round
        if msg.seq > len(msgs):
            if msg.seq in chain.held or len(chain.held) >= MAX_HELD:
                return
            try:
                msg.verify(self.settings.seats[author])
            except ProtocolError:
                return
            chain.held[msg.seq] = msg
            chain.bytes += size
            self.last_kept = True
            return
        try:
            msg.verify(self.settings.seats[author])
        except ProtocolError as exc:
            self._out.append(Refused(author, exc.rule, exc.message))
            return
        self.last_kept = True
        chain.bytes += size
        self._chain(author, msg, private)
        while len(chain.msgs) in chain.held:  # messages past the gap it filled
            self._chain(author, chain.held.pop(len(chain.msgs)), private)

    def _chain(self, author: int, msg: SignedMessage, private: bool) -> None:
        chain = self.private_in[author] if private else self.public[author]
        prev = chain.msgs[-1].digest() if chain.msgs else "0" * 64
        if msg.prev != prev:
            self._fork(chain.msgs[-1], msg)
            return
        chain.msgs.append(msg)
        if private:
            return  # counted as got once judged (`_judge_private`)
        self.ledger.add(author, msg)
        if msg.digest() not in self.forwarded:
            self.forwarded.add(msg.digest())
            self._out.append(Send(None, msg.to_wire(), forward=True))

    def _fork(self, first: SignedMessage, second: SignedMessage) -> None:
        proof: JSONObject = {"kind": "fork", "first": first.to_json(), "second": second.to_json()}
        self._expose(proof, send=True)

    # -- proofs --------------------------------------------------------------------------------------
    def _expose(self, proof: JSONObject, send: bool) -> None:
        """Check `proof` with the one `verify` and, if it holds, expose its seat here and pass it on.
        A proof about a round already confirmed here voids that round: every honest seat gets the same
        proofs, so every one ends with the same confirmed rounds (P-6.2)."""
        proof = _canonical_fork(proof)
        round_of = _proof_round(proof)
        if round_of is None or round_of > self.round_index:
            return
        try:
            conviction = verify(self.plan, proof, self.rounds[:round_of])
        except ProtocolError as exc:
            self._out.append(Refused(None, exc.rule, f"a proof that shows nothing: {exc.message}"))
            return
        about_record = self._about_record(proof, round_of)
        if about_record and round_of not in self._faulted_rounds:
            self._faulted_rounds.add(round_of)  # whichever proof is kept for the seat, this round is faulted
            self.last_kept = True  # so a restart from the journal finds it faulted too (P-5.6)
        if self.carried <= round_of < len(self.rounds) and not self.finished and about_record:
            # Even where the seat is exposed already: another proof (a fork of its secrets) may have come
            # first, and this one (the audit they fail) is what undoes the round. Kept, so a restart
            # from the journal undoes it too (P-5.6).
            self._unconfirm(round_of)
            self.last_kept = True
        digest = sha256_hex(canonical(proof))
        known = conviction.seat in self.convictions
        if known and digest >= self._proof_digests[conviction.seat]:
            return
        self.convictions[conviction.seat] = conviction
        self.proofs[conviction.seat] = proof
        self._proof_digests[conviction.seat] = digest
        self.last_kept = True
        if not known:
            self.ledger.forked.add(conviction.seat)  # the round is over: its notes need not wait on its chain
            self.exposed_here.add(conviction.seat)
            self._out.append(Exposed(conviction.seat, conviction.rule, conviction.reason, proof))
        if send:
            whole = canonical({"proof": proof})
            # Whole when it fits: a seat that holds another version of a message it names (a fork it
            # has not seen) can check it all the same; by reference otherwise (P-6.6).
            fits = len(whole) <= MAX_MESSAGE_BYTES - (8 << 10)
            data = whole if fits else canonical({"proof": self._wire_proof(proof)})
            self._out.append(Send(None, data, forward=True))

    def _unconfirm(
        self, round_of: int, why: str = "a proof showed a fault in it", moves: list[Any] | None = None
    ) -> None:
        """Round `round_of`, which this seat had confirmed, is void here too: a proof showed a fault in
        it, or a stop of it came after its last secrets."""
        self.rounds = self.rounds[:round_of]
        self.state = round_start(self.plan, self.rounds).state
        self.void = {"round": round_of, "why": why, "moves": moves or []}
        self.complete = False
        self._ending = True
        if round_of < self.round_index:
            # The round in progress was dealt on the round undone: it stops here, so it stops at every
            # seat, its secrets and the ends become owed, and the table ends or visibly waits (P-6.4).
            self._audit_stop(f"round {round_of + 1} was undone: {why}")

    def _about_record(self, proof: JSONObject, round_of: int) -> bool:
        """Whether a proof's fault lies in what a confirmed round's record and audit were built from: two
        honest seats may then have built them from two versions (or one refused its version), so the
        round is void at every seat. A fault after its author's secrets, or a note signed after another
        version of a message (that version unknown: a seat holding it finds the two-version fork itself),
        leaves every step as it was and the round stands (P-5.8)."""
        kind = proof.get("kind")
        if kind == "audit":
            return True
        if kind == "fork":
            first, second = proof.get("first"), proof.get("second")
            same = isinstance(first, dict) and isinstance(second, dict) and first.get("seq") == second.get("seq")
            # Two versions of secrets build the same record: where one fails the audit or is refused, the
            # seat holding it sends that proof, and that is what undoes the round everywhere.
            named = [m for m in (first, second) if isinstance(m, dict) and m.get("kind") != "secrets"] if same else []
        else:
            message = proof.get("message")
            named = [message] if isinstance(message, dict) else []
        ledger = self._ledger_of(round_of)
        for held in named:
            if not isinstance(held, dict) or held.get("kind") not in STEP_KINDS:
                continue
            author = self.seat_of.get(str(held.get("author")))
            seq = held.get("seq")
            if ledger is None or author is None or not isinstance(seq, int):
                return True
            secrets = ledger.secrets.get(author)
            if secrets is None or seq <= secrets[2]:
                return True
        return False

    def _wire_proof(self, proof: JSONObject) -> JSONObject:
        """A proof as it travels: messages every seat of the round holds named by place and digest;
        the accused's own in full, since another version of them may be what another seat holds."""
        if proof.get("kind") == "fork":
            return proof
        key = "history" if proof.get("kind") == "refused" else "messages"
        items = proof.get(key)
        assert isinstance(items, list)
        # Whole: the accused's own messages and those of every seat a fork exposed, of which another
        # seat may hold another version; the rest by place and digest.
        whole = {proof.get("seat")} | {s for s, c in self.convictions.items() if c.kind == "fork"}
        refs: list[object] = []
        for item in items:
            msg = SignedMessage.from_json(item)
            seat = self.seat_of[msg.author]
            refs.append(item if seat in whole else [seat, msg.seq, msg.digest()])
        return {**proof, key: refs}

    def _proof_received(self, sender: int | None, raw: object, size: int) -> None:
        """A proof passed on by seat `sender`: kept until the messages it names are here. A few per
        sender, so no seat can crowd out another's (P-6.6)."""
        if not isinstance(raw, dict) or sender is None or not 0 <= sender < self.n:
            return
        if sum(1 for s, _ in self._pending_proofs if s == sender) >= MAX_PENDING_PROOFS:
            return
        if self._proofs_kept[sender] >= 2 * self.n or self._proof_bytes[sender] + size > MAX_PROOF_BYTES_KEPT:
            return  # P-6.6: an honest seat passes on a proof once per seat it exposes; this one sends on
        self._proofs_kept[sender] += 1
        self._proof_bytes[sender] += size
        self._pending_proofs.append((sender, raw))
        self.last_kept = True

    def _resolve_proofs(self) -> None:
        """Proofs from other seats whose named messages are all here now are checked (P-5.4)."""
        waiting: list[tuple[int, JSONObject]] = []
        for sender, raw in self._pending_proofs:
            if raw.get("kind") == "fork":
                self._expose(raw, send=True)
                continue
            ledger = self._ledger_of(raw.get("round"))
            if ledger is None:
                continue
            key = "history" if raw.get("kind") == "refused" else "messages"
            refs = raw.get(key)
            if not isinstance(refs, list) or len(refs) > 20_000:
                continue
            resolved: list[JSONObject] = []
            for ref in refs:
                if isinstance(ref, dict):
                    resolved.append(ref)  # carried whole (the accused's own messages)
                    continue
                msg = _held(ledger, ref)
                if msg is None:
                    break
                resolved.append(msg.to_json())
            else:
                self._expose({**raw, key: resolved}, send=True)
                continue
            waiting.append((sender, raw))
        self._pending_proofs = waiting

    def _ledger_of(self, round_of: object) -> RoundLedger | None:
        if round_of == self.round_index:
            return self.ledger
        if round_of == self.round_index - 1:
            return self.prev_ledger
        return None

    def _fault_proof(self, fault: Fault) -> JSONObject | None:
        """A refusal proof: the refused message and every message of the round taken here before it
        (its author's up to it). More than the history it names changes nothing of its verdict: the
        replay judges it on exactly what it names (docs/PROTOCOL.md)."""
        msg = fault.message
        if msg is None:
            return None
        ledger = self.ledger
        upto = [ledger.cursor[seat] for seat in range(self.n)]
        if msg.kind not in PRIVATE_KINDS:
            upto[fault.seat] = msg.seq
        named = [m.to_json() for seat in range(self.n) for m in ledger.chains[seat][: upto[seat]] if m is not msg]
        return {"kind": "refused", "round": self.round_index, "message": msg.to_json(), "history": named}

    # -- sending -------------------------------------------------------------------------------------
    def named_history(self) -> JSONObject:
        """The history a message this seat signs now names (P-5.2): what it has taken, what it got."""
        heads: list[object] = []
        for seat in range(self.n):
            taken = self.ledger.cursor[seat]
            heads.append(None if taken == 0 else [taken - 1, self.ledger.chains[seat][taken - 1].digest()])
        return {"rec": self.rec, "heads": heads, "got": list(self.private_got)}

    def _publish(self, kind: str, body: JSONObject, made: tuple[Any, Any] | None = None) -> None:
        chain = self.ledger.chains[self.me]
        seq = len(chain)
        if seq != self.ledger.cursor[self.me]:
            raise ProtocolError("P-5.6", "this seat's own previous message is not taken yet")
        prev = chain[-1].digest() if chain else "0" * 64
        msg = sign_message(
            self.identity, self.settings.table, self.round_index, seq, prev, kind, {**body, "on": self.named_history()}
        )
        self.public[self.me].msgs.append(msg)
        if made is not None:
            remember_pass(msg.digest(), made[0], made[1])
        self.ledger.add(self.me, msg)
        self.forwarded.add(msg.digest())
        self._out.append(Send(None, msg.to_wire()))
        self.ledger.advance()

    def _send_private(self, to: int, kind: str, body: JSONObject) -> None:
        chain = self.private_out[to]
        channel = private_channel(self.settings.table, self.identity.peer_id, self.settings.seats[to].peer_id)
        prev = chain[-1].digest() if chain else "0" * 64
        msg = sign_message(
            self.identity, channel, self.round_index, len(chain), prev, kind, {**body, "on": self.named_history()}
        )
        chain.append(msg)
        self._out.append(Send(to, msg.to_wire()))

    def catch_up(self, seat: int) -> tuple[Send, ...]:
        """Everything of this round a seat whose link came back may have missed: every public message
        held here and this seat's private messages to it. Signs nothing."""
        out = [Send(seat, m.to_wire(), forward=True) for s in range(self.n) for m in self.ledger.chains[s]]
        out.extend(Send(seat, m.to_wire()) for m in self.private_out[seat])
        return tuple(out)

    # -- the pump: everything that follows from what is here -----------------------------------------
    def _pump(self) -> None:
        for _ in range(64):  # each pass can only move the round on; a bound keeps a bug from spinning
            self.ledger.advance()
            before = (len(self._out), self.round_index, len(self.ledger.chains[self.me]))
            self._judge_private()
            self._faults()
            self._resolve_proofs()
            self._own_view()
            self._tell()
            self._audit()
            self._own_steps()
            self._end()
            if (len(self._out), self.round_index, len(self.ledger.chains[self.me])) == before:
                break

    def _faults(self) -> None:
        for fault in self.ledger.faults:
            if fault.seat in self.convictions or fault.seat in self.exposed_here:
                continue
            if fault.seat == self.me:  # never expected: this seat signs only what its own replay allows
                self.exposed_here.add(self.me)
                self._out.append(Refused(self.me, fault.rule, f"this seat's own message was refused: {fault.reason}"))
                continue
            proof = self._fault_proof(fault)
            self.exposed_here.add(fault.seat)
            if proof is not None:
                self._expose(proof, send=True)

    def _judge_private(self) -> None:
        for sender in range(self.n):
            chain = self.private_in[sender].msgs
            while self.private_judged[sender] < len(chain):
                msg = chain[self.private_judged[sender]]
                verdict = judge_private(self.ledger, sender, self.me, msg)
                if verdict == "wait":
                    break
                self.private_judged[sender] += 1
                if not isinstance(verdict, Fault):
                    # What this seat names as got (P-5.2) is what it could judge and take: a private step
                    # still waiting on its history is owed here, shown so, and may be stopped for.
                    self.private_got[sender] = self.private_judged[sender]
                if isinstance(verdict, Fault):
                    proof = self._fault_proof(verdict)
                    if proof is not None:
                        self._expose(proof, send=True)
                    continue
                if msg.kind == "p.keys":
                    assert self.ledger.ctx is not None
                    items = msg.body["openings"]
                    assert isinstance(items, list)  # judge_private took its shape
                    for item in items:
                        key = KeyOpening.from_json(self.ledger.ctx, sender, item)
                        self.hand_keys.setdefault(key.position, {})[sender] = key
                elif verdict == "no card":
                    self._audit_stop("a peeked prediction opens to no card: a pass replaced it")
                elif isinstance(verdict, str):
                    self.peek_answers[sender] = self.peek_answers.get(sender, 0) + 1
                    self._out.append(PeekResult(sender, verdict))

    # -- this seat's own knowledge -----------------------------------------------------------------
    def _own_view(self) -> None:
        """This seat's engine state with its own hand: built once its hand opens, then moved by every
        move the ledger takes. A move only this seat's own cards refuse stops the round for an audit."""
        ledger = self.ledger
        if self.my_state is None:
            if not ledger.dealt or ledger.ctx is None:
                return
            positions = ledger.layout_hands[self.me]
            if any(len(self.hand_keys.get(p, {})) < self.n - 1 for p in positions):
                return
            _, lock = self._deck_secrets()
            cards: list[str | None] = [None] * ledger.ctx.size
            for position in positions:
                keys = dict(self.hand_keys[position])
                keys[self.me] = key_opening(self.me, lock, position)
                self.hand_keys[position] = keys
                try:
                    code = open_position(
                        ledger.ctx,
                        position,
                        ledger.locks[-1].points[position],
                        [keys[s] for s in range(self.n)],
                        ledger.commitments,
                        keys_checked=True,  # each came in a judged `p.keys` (`checked_keys`), or is ours
                    )
                except CheatDetected:
                    self._audit_stop(f"a card of this seat's hand (position {position}) opens to no card")
                    self.my_state = False
                    return
                self.my_cards[position] = str(code)
                cards[position] = str(code)
            for position, code in ledger.table_cards.items():
                if position in ledger.table_positions:
                    cards[position] = code
            assert ledger.dealer is not None
            deal = self.game.deal_from_cards(self.state, ledger.dealer, cards)
            self.my_state = self.dealt_state = self.game.start_round(self.state, deal)
            hand = tuple(self.my_cards[p] for p in positions)
            self._out.append(
                Dealt(self.round_index, hand, tuple(ledger.table_cards[p] for p in ledger.table_positions))
            )
        if self.my_state is False or self.private_fault:
            return
        while self.applied < len(ledger.log):
            point, move_json = ledger.log[self.applied]
            self.applied += 1
            try:
                if "_reveal" in move_json:
                    self.my_state = self.game.reveal(self.my_state, move_json["_reveal"])  # type: ignore[arg-type]
                    continue
                seat = int(str(move_json["seat"]))
                mine = self.choices.get(point) if seat == self.me else None
                self.my_state = self.game.apply(self.my_state, self.game.move_from_json(mine or move_json))
            except Exception as exc:
                self.private_fault = True
                self._audit_stop(f"a move that this seat's own cards refuse: {exc}")
                return

    def _tell(self) -> None:
        ledger = self.ledger
        while self.told_moves < len(ledger.log):
            _, move_json = ledger.log[self.told_moves]
            self.told_moves += 1
            if "_reveal" not in move_json:
                self._out.append(Moved(int(str(move_json["seat"])), move_json))
        while self.told_stops < len(ledger.stops):
            author, seq, body = ledger.stops[self.told_stops]
            self.told_stops += 1
            self._count_stop(self.round_index, author, seq, body)

    def _count_stop(self, round_of: int, author: int, seq: int, body: JSONObject) -> None:
        """A stop or leave taken: kept for the record (counted against seats) and told."""
        seat = body.get("seat")
        owed = body.get("owed")
        reason = body.get("reason")
        self.stops.append({"round": round_of, "by": author, "seq": seq, "seat": seat, "owed": owed, "reason": reason})
        if owed == "left":
            self.left.add(author)
        self._out.append(
            Stopped(
                round_of,
                author,
                seat if isinstance(seat, int) else None,
                owed if isinstance(owed, str) else None,
                str(reason or ""),
            )
        )

    def _audit_stop(self, reason: str) -> None:
        if not self.my_stop and not self._round_over_here():
            self.my_stop = True
            self._publish("stop", {"seat": None, "owed": None, "to": None, "reason": reason[:200]})

    def _round_over_here(self) -> bool:
        return self.me in self.ledger.secrets or self.me in self.left

    # -- this seat's own steps -----------------------------------------------------------------------
    def _own_steps(self) -> None:
        ledger = self.ledger
        if self.finished or self.me in self.left:
            return
        if (ledger.faults or self.convictions) and not ledger.stopped and not self.my_stop:
            self._audit_stop("a seat was exposed: the round stops")
        stopped = ledger.stopped or bool(ledger.faults)
        if (stopped or ledger.ended is not None) and self.me not in ledger.secrets:
            self._publish_secrets()
            return
        if stopped or self.me in ledger.secrets:
            return
        point = ledger.current()
        if point is None or self.me not in point.seats or self.me in point.taken:
            self._answer_peeks()
            return
        kind = point.kind
        if kind == "seed.commit":
            commitment, opening = commit(
                SEED_TAG, self.settings.table, 0, self.me, self._entropy(32), self._entropy(32)
            )
            self.seed_opening = opening
            self._publish("seed.commit", {"digest": commitment.hex()})
        elif kind == "seed.reveal":
            self._publish(
                "seed.reveal", {"value": self.seed_opening.value.hex(), "nonce": self.seed_opening.nonce.hex()}
            )
        elif kind == "shuffle":
            assert ledger.ctx is not None
            shuffle, _ = self._deck_secrets()
            deck = ledger.shuffles[-1].points if ledger.shuffles else ledger.ctx.cards.points
            out = shuffle_pass(ledger.ctx, self.me, deck, shuffle, self._entropy)
            self._publish("shuffle", out.to_json(), made=(deck, out))
        elif kind == "lock":
            assert ledger.ctx is not None
            shuffle, lock = self._deck_secrets()
            deck = ledger.locks[-1].points if ledger.locks else ledger.shuffles[-1].points
            locked = lock_pass(ledger.ctx, self.me, deck, shuffle, lock, self._entropy)
            self._publish("lock", locked.to_json(), made=(deck, locked))
        elif kind == "open":
            _, lock = self._deck_secrets()
            for seat, positions in enumerate(ledger.layout_hands):
                if seat != self.me:
                    self._send_private(
                        seat, "p.keys", {"openings": [key_opening(self.me, lock, p).to_json() for p in positions]}
                    )
            self._publish(
                "open",
                {"late": False, "openings": [key_opening(self.me, lock, p).to_json() for p in ledger.table_positions]},
            )
        elif kind == "open.late":
            _, lock = self._deck_secrets()
            self._publish(
                "open",
                {"late": True, "openings": [key_opening(self.me, lock, p).to_json() for p in ledger.late_positions]},
            )
        elif kind == "reveal":
            commit_point = len(ledger.points) - 2
            mine = self.openings.get(commit_point)
            if mine is not None:
                body: JSONObject = {"value": mine.value.hex(), "nonce": mine.nonce.hex()}
                reference = decode(mine.value, 1 << 16)
                body["keys"] = self._card_keys(reference["pos"]) if "pos" in reference else None
                self._publish("reveal", body)
        self._answer_peeks()

    def _answer_peeks(self) -> None:
        """S-6.4: a peek granted at this seat is answered privately with its prediction's opening."""
        ledger = self.ledger
        if not ledger.peek_counts or self.me in ledger.secrets:
            return
        for (target, peeker), count in ledger.peek_counts[-1].items():
            if target != self.me:
                continue
            while self.peeks_answered.get(peeker, 0) < count:
                self.peeks_answered[peeker] = self.peeks_answered.get(peeker, 0) + 1
                round_mode = self.game.hidden_choice
                hidden = [o for p, o in sorted(self.openings.items()) if round_mode(self._kind_at(p)) == "round"]
                opening = hidden[0] if hidden else None
                if opening is None:
                    continue
                reference = decode(opening.value, 1 << 16)
                self._send_private(
                    peeker,
                    "p.peek",
                    {
                        "trick": self.peeks_answered[peeker],
                        "value": opening.value.hex(),
                        "nonce": opening.nonce.hex(),
                        "keys": self._card_keys(reference.get("pos")),
                    },
                )

    def _kind_at(self, point: int) -> str:
        choice = self.choices.get(point)
        if choice is None:
            return ""
        return next((k for k in choice if k != "seat"), "")

    def _card_keys(self, position: object) -> list[JSONObject] | None:
        if not isinstance(position, int) or position not in self.hand_keys:
            return None
        keys = self.hand_keys[position]
        return [keys[s].to_json() for s in range(self.n)]

    def _publish_secrets(self) -> None:
        ledger = self.ledger
        secrets_json: object = None
        if len(ledger.locks) == self.n:
            shuffle, lock = self._deck_secrets()
            secrets_json = SeatSecrets(self.me, shuffle, lock).to_json()
        openings = {str(point): {"value": o.value.hex(), "nonce": o.nonce.hex()} for point, o in self.openings.items()}
        self._publish("secrets", {"secrets": secrets_json, "openings": openings})

    # -- decisions -------------------------------------------------------------------------------------
    def decision(self) -> tuple[Any, ...]:
        """The moves the local player may make now (empty when nothing is asked of this seat)."""
        ledger = self.ledger
        if self.finished or self.my_state in (None, False) or self.private_fault or self.me in self.left:
            return ()
        if ledger.stopped or ledger.faults or self.convictions or ledger.ended is not None:
            return ()
        point = ledger.current()
        if point is None or point.kind not in PERSON_KINDS or self.me not in point.seats or self.me in point.taken:
            return ()
        if self.applied < len(ledger.log):
            return ()
        for (target, peeker), count in ledger.peek_counts[-1].items():  # S-6.4: the peek's answer first
            if peeker == self.me and count > self.peek_answers.get(target, 0):
                return ()
        return tuple(self.game.legal_moves(self.my_state, self.me))

    def decision_json(self) -> tuple[JSONObject, ...]:
        return tuple(self.game.move_to_json(move) for move in self.decision())

    def _decided(self, move_json: JSONObject) -> None:
        options = self.decision_json()
        if move_json not in options:
            self._out.append(Refused(self.me, "P-5.1", "that move is not open to you now"))
            return
        ledger = self.ledger
        point = len(ledger.points) - 1
        kind = self.game.expected(self.my_state).kind
        if self.game.hidden_choice(kind) is not None:
            reference = self._reference(move_json[kind])
            commitment, opening = commit(
                CHOICE_TAG, self.settings.table, self.round_index, self.me, canonical(reference), self._entropy(32)
            )
            self.openings[point] = opening
            self.choices[point] = dict(move_json)
            self._publish("commit", {"digest": commitment.hex()})
            return
        wire = dict(move_json)
        for name in self.game.hand_card_fields():
            if wire.get(name) is not None:
                reference = self._reference(wire[name])
                if "pos" in reference:
                    wire[name] = {"pos": reference["pos"], "keys": self._card_keys(reference["pos"])}
        self._publish("move", {"move": wire})

    def _reference(self, card_json: object) -> JSONObject:
        """What a hidden choice commits to and a move names: the hand position of a hidden hand's card."""
        if self.game.hands_public(self.options):
            return {"card": card_json}
        code = str(card_json)
        used: set[object] = set(self.ledger.used)
        used.update(decode(o.value, 1 << 16).get("pos") for o in self.openings.values())
        for position, held in sorted(self.my_cards.items()):
            if held == code and position not in used:
                return {"pos": position}
        raise IllegalMove("P-4.3", f"card {code} is not in this seat's hand")

    # -- audit, rounds, the end -----------------------------------------------------------------------
    def _audit(self) -> None:
        ledger = self.ledger
        if self.audited or ledger.audit is None:
            return
        self.audited = True
        audit = ledger.audit
        if audit.fault is not None:
            proof: JSONObject = {
                "kind": "audit",
                "round": self.round_index,
                "seat": audit.fault.seat,
                "messages": [m.to_json() for m in round_messages(ledger)],
            }
            self._expose(proof, send=True)
            self._void("the audit exposed a seat")
            return
        # A round before this one was undone here (`_unconfirm`): this one is over unconfirmed, as at
        # every seat that took the same stop or proof, and no record lands at another round's place.
        voided = any(_voids(body) for _, _, body in ledger.stops) or len(self.rounds) != self.round_index
        # An exposure voids the round only where its proof lies in what the round's record was built from
        # (`_about_record`): the same test that undoes a round confirmed before the proof came, so whichever
        # came first at a seat, the proof or its audit, every seat ends with the same rounds (P-6.2).
        faulted = self.round_index in self._faulted_rounds
        if audit.complete and not faulted and audit.record is not None and not ledger.faults and not voided:
            self.rounds.append(audit.record)
            self.state = audit.state
            self._out.append(RoundConfirmed(self.round_index, self.game.round_report(audit.state)))
            if self.game.expected(audit.state).phase == "over":
                self.complete = True
                self._ending = True
                self._out.append(GameOver(self.record(), self.game.winners(audit.state) or ()))
                return
            if ledger.stopped:
                self._ending = True
                return
            self._next_round()
            return
        self._void("the round was stopped")

    def _void(self, why: str) -> None:
        if self.void is not None and int(str(self.void["round"])) < self.round_index:
            self._ending = True  # an earlier round was undone here: the record names that one
            return
        ledger = self.ledger
        record = ledger.audit.record if ledger.audit is not None else None
        self.void = {"round": self.round_index, "why": why, "moves": list(record.moves) if record else []}
        self._ending = True

    def _next_round(self) -> None:
        future = self._future.pop(self.round_index + 1, [])
        self._future_bytes = [0] * self.n
        self._begin_round()
        for _, msg in future:
            self._accept(self.seat_of[msg.author], msg, 0)

    def record_digest(self) -> str:
        return sha256_hex(canonical(self.summary()))

    def summary(self) -> JSONObject:
        """What every present seat signs at the end (P-5.8): the confirmed rounds and whether the game
        reached its end. Exposures stand beside it in the record, each with its proof: a proof may come
        after a seat finished (a fork of the very end), and it changes no confirmed round then."""
        return {"table": self.settings.table, "rounds": rounds_json(self.rounds), "complete": self.complete}

    def present(self) -> tuple[int, ...]:
        """Seats that sign the end: in the plan, not left, not exposed, not stopped for their secrets."""
        away = {
            int(str(s["seat"]))
            for s in self.stops
            if s.get("owed") in ("secrets", "end") and isinstance(s.get("seat"), int)
        }
        return tuple(s for s in range(self.n) if s not in self.left and s not in self.convictions and s not in away)

    def _end(self) -> None:
        if not self._ending and not (self.ledger.stopped or self.ledger.faults or self.convictions):
            return
        if not self._ending:
            ledger = self.ledger
            present = self.present()
            owing = [o for o in ledger.owed_now() if o.kind == "secrets" and o.seat in present]
            if ledger.audit is None and owing:
                return  # the round's secrets are still coming (or waited for, `due`)
            if ledger.audit is None:
                self._void("the round was stopped")
        if self.me in self.left:
            return
        digest = self.record_digest()
        if digest != self._sent_end:
            self._sent_end = digest
            self._publish("end", {"record": digest})
        ends = self.ends()
        if not self.finished and all(ends.get(s) == digest for s in self.present()):
            self.finished = True
            self._out.append(Finished(self.record_json(), self.complete))

    def ends(self) -> dict[int, str]:
        """Each seat's latest end signature, whichever round its chain signed it in: seats that voided
        a round apart (a proof about a round one of them had confirmed) sign their ends in different
        rounds (P-5.8). The round before, this one, and the next one held here."""
        out: dict[int, str] = {}
        if self.prev_ledger is not None:
            out.update(self.prev_ledger.ends)
        out.update(self.ledger.ends)
        for _, msg in self._future.get(self.round_index + 1, []):
            digest = msg.body.get("record")
            if msg.kind == "end" and isinstance(digest, str):
                out[self.seat_of[msg.author]] = digest
        return out

    # -- the record --------------------------------------------------------------------------------
    def record(self) -> GameRecord:
        """The game record of every confirmed round (`lanplay-record/1`)."""
        return GameRecord(
            self.game.id,
            self.settings.names,
            self.game.options_to_json(self.options),
            tuple(self.rounds),
            self.settings.bots,
        )

    def record_json(self) -> JSONObject:
        """The record with what the table adds (docs/RECORDS.md): keys, proofs, stops, the void round."""
        out = self.record().to_json()
        out["table"] = {
            "id": self.settings.table,
            "protocol": PROTOCOL_VERSION,
            "keys": [key.hex() for key in self.settings.seats],
        }
        if self.settings.continues is not None:
            prior, digest = self.settings.continues
            out["table"]["continues"] = {"table": prior, "digest": digest, "rounds": self.carried}  # type: ignore[index]
        out["complete"] = self.complete
        out["exposed"] = [
            {"seat": seat, "rule": c.rule, "reason": c.reason, "kind": c.kind}
            for seat, c in sorted(self.convictions.items())
        ]
        out["proofs"] = [self.proofs[seat] for seat in sorted(self.proofs)]
        # In chain order, not arrival order: every seat that took the same stops writes the same list.
        # An exposed seat's stops are left out: its word counts against nobody, and seats holding another
        # version of its chain take different ones of them.
        stops = [stop for stop in self.stops if stop["by"] not in self.convictions]
        out["stops"] = sorted(stops, key=lambda stop: [int(str(stop[key])) for key in ("round", "by", "seq")])
        if self.void is not None:
            out["void"] = self.void
        digest = self.record_digest()
        ledger = self.ledger
        signatures = [
            ledger.chains[seat][ledger.end_seqs[seat][-1][0]].to_json()
            for seat in self.present()
            if ledger.ends.get(seat) == digest
        ]
        # P-5.8: the signed end messages themselves, so a reader checks who agreed to this record.
        out["end"] = {"digest": digest, "summary": self.summary(), "signatures": signatures}
        return out

    # -- links, stops, leaving ---------------------------------------------------------------------
    def _link(self, seat: int, up: bool) -> None:
        if not 0 <= seat < self.n or seat == self.me:
            return
        self.links[seat] = up
        if up:
            self.link_down_since.pop(seat, None)
            self._out.extend(self.catch_up(seat))
        else:
            self.link_down_since.setdefault(seat, self.now)

    def _stop_for(self, event: StopFor) -> None:
        owed = Owed(event.seat, event.owed, event.to)
        if owed in self.stopped_for or self.finished or self.me in self.left:
            return
        history = History(self.rec, self._heads(), tuple(self.private_got))
        if owed not in self.ledger.owed_on(history, self.me):
            self._out.append(Refused(self.me, "P-5.5", f"seat {event.seat} owes no {event.owed} now"))
            return
        self.my_stop = True
        self.stopped_for.add(owed)
        reason = f"waited {self.settings.patience:.0f} s for seat {event.seat}'s {event.owed}"
        self._publish("stop", {"seat": event.seat, "owed": event.owed, "to": event.to, "reason": reason})

    def _heads(self) -> tuple[tuple[int, str] | None, ...]:
        return tuple(
            None
            if self.ledger.cursor[s] == 0
            else (self.ledger.cursor[s] - 1, self.ledger.chains[s][self.ledger.cursor[s] - 1].digest())
            for s in range(self.n)
        )

    def _leave(self) -> None:
        if self.me in self.left or self.finished:
            return
        self._publish("leave", {})
        self.left.add(self.me)
        if self.me not in self.ledger.secrets:
            self._publish_secrets()

    # -- what the table waits for --------------------------------------------------------------------
    def _owed(self) -> tuple[Owed, ...]:
        owed = list(self.ledger.owed_now(self.me))
        if self.ledger.dealt or len(self.ledger.locks) == self.n:
            for sender in range(self.n):
                if sender == self.me or sender in self.left:
                    continue
                due = self.ledger.private_due(sender, self.me)
                if self.private_got[sender] < due and self.me not in self.ledger.secrets:
                    owed.append(Owed(sender, "p.keys" if self.private_got[sender] == 0 else "p.peek", self.me))
        return tuple(o for o in owed if o.seat not in self.left and o.seat not in self.convictions)

    def _clocks(self) -> None:
        """One clock per owed step, from when this seat first saw it owed (P-5.5)."""
        if self.finished:
            self._since.clear()
            return
        owed = set(self._owed())
        self._since = {o: self._since.get(o, self.now) for o in owed}

    def waiting(self, now: float | None = None) -> tuple[Waiting, ...]:
        return tuple(
            Waiting(o.seat, o.kind, since, o.to, o.kind not in PERSON_KINDS, self.links[o.seat])
            for o, since in sorted(self._since.items(), key=lambda item: (item[1], item[0].seat))
            if o.seat != self.me
        )

    def due(self, now: float) -> StopFor | None:
        """The stop this seat may publish now: an owed step waited for past the table's patience (a
        person's move only while its laptop is unlinked, or past the table's turn timer)."""
        if self.finished or self.me in self.left:
            return None
        patience = self.settings.patience
        for o, since in sorted(self._since.items(), key=lambda item: (item[1], item[0].seat)):
            if o.seat == self.me or o in self.stopped_for:
                continue
            if o.kind in PERSON_KINDS:
                timer = self.settings.turn_timer
                down = self.link_down_since.get(o.seat)
                if not (
                    (timer is not None and now - since >= timer)
                    or (down is not None and now - max(down, since) >= patience)
                ):
                    continue
            elif now - since < patience:
                continue
            return StopFor(o.seat, o.kind, o.to, now)
        return None

    def note_due(self, now: float) -> bool:
        """A private step owed to this seat has been waited for NOTE_GRACE: say so publicly (P-5.5)."""
        if self.my_stop or self.finished or self.me in self.left or self.me in self.ledger.secrets:
            return False
        mine = frozenset(o for o, since in self._since.items() if o.to == self.me and now - since >= NOTE_GRACE)
        return bool(mine) and not mine <= self._noted_for

    # -- reading ---------------------------------------------------------------------------------------
    def view(self) -> Any:
        """This seat's engine state (what the local player may know)."""
        if self.my_state not in (None, False):
            return self.my_state
        return self.ledger.state if self.ledger.state is not None else self.state

    def kept(self) -> dict[str, list[int]]:
        """What other seats have made this seat keep beyond the round's chains, per seat (P-6.6):
        messages held past a gap, bytes of next-round messages, proofs waiting for their messages."""
        return {
            "held": [len(chain.held) for chain in self.public],
            "future_bytes": list(self._future_bytes),
            "pending_proofs": [sum(1 for sender, _ in self._pending_proofs if sender == s) for s in range(self.n)],
        }

    def late_cards(self) -> tuple[str, ...] | None:
        """S-8.3: the late trump card(s), once every seat's keys opened them."""
        ledger = self.ledger
        if not ledger.late_positions or not all(p in ledger.table_cards for p in ledger.late_positions):
            return None
        return tuple(ledger.table_cards[p] for p in ledger.late_positions)

    def committed(self) -> tuple[int, ...]:
        """Seats whose hidden choice at the current point is in but not yet applied (shown as a mark)."""
        point = self.ledger.current()
        if point is None or point.kind != "commit":
            return ()
        return tuple(sorted(point.taken))

    @property
    def exposed(self) -> frozenset[int]:
        return frozenset(self.convictions)

    def convicted_lines(self) -> tuple[str, ...]:
        return tuple(c.line(self.settings.names) for _, c in sorted(self.convictions.items()))


def _held(ledger: RoundLedger, ref: object) -> SignedMessage | None:
    """The message a proof names by [seat, seq, digest], if `ledger` holds that very one."""
    if not (isinstance(ref, list) and len(ref) == 3 and isinstance(ref[0], int) and isinstance(ref[1], int)):
        return None
    seat, seq, digest = ref
    if not 0 <= seat < ledger.n or not 0 <= seq < len(ledger.chains[seat]):
        return None
    msg = ledger.chains[seat][seq]
    return msg if msg.digest() == digest else None


def _proof_round(proof: JSONObject) -> int | None:
    """The round a proof is about (P-5.4): its messages' round."""
    if proof.get("kind") == "fork":
        first = proof.get("first")
        value = first.get("round") if isinstance(first, dict) else None
    else:
        value = proof.get("round")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _canonical_fork(proof: JSONObject) -> JSONObject:
    """A fork's two halves in one order (by digest), so every seat keeps the same proof of one fork."""
    if proof.get("kind") != "fork":
        return proof
    try:
        first, second = SignedMessage.from_json(proof.get("first")), SignedMessage.from_json(proof.get("second"))
    except ProtocolError:
        return proof
    if first.seq == second.seq and second.digest() < first.digest():
        return {"kind": "fork", "first": second.to_json(), "second": first.to_json()}
    return proof


def _voids(stop: JSONObject) -> bool:
    """Whether a stop (or leave) voids its round: every one does but a wait for an end signature,
    which comes only once the round's record is known (P-5.5, P-5.8)."""
    return stop.get("owed") != "end"


