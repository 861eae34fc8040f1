"""The reference replay of one round's public messages: what every seat, and `verify`, judges with.

A `RoundLedger` is given each seat's public chain for one round (signed, hash-linked messages, P-1.3) and
takes ("consumes") them in the one order the rules fix (P-5.2): the first dealer's seed (round 0), the
shuffle and lock passes seat by seat, every seat's table keys, then the engine's moves as it asks for
them, hidden choices by commit and reveal, and at the end every seat's secrets, whose audit replays the
round with full knowledge (P-5.3). It knows only what is public: every other seat's hand is unknown to
it, so its verdicts are the same at every seat and in an offline `verify`.

Judged on the history it names. Every message names, per seat, the last public message its author
held (`messages.History`). The ledger takes a message only once every message it names is here (the
same digests; another digest at a named place is a fork, whose two versions gossip brings together
into an equivocation proof) and already taken. The round then stands, for that history, at the last
*point* (a step owed by a seat, or a group of steps owed by several in any order) whose start the
history covers. A step message is refused, provably, when on that point its author owed no such step
or the step breaks a rule: its history is exactly the ledger's messages the history names, so anyone
holding them reaches the same refusal (`verify`). Because the order of points is fixed by the rules
and a history names whole chain prefixes, the ledger reaches the same points whatever order the
messages came in: the verdict on a message never depends on who judges it or when.

Nothing here reads a clock, a private key or anything outside its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.api import Expected, Game, JSONObject, RuleError
from engine.record import RoundRecord
from protocol.commitment import Commitment, Opening, draw_below, joint_random, verify_opening
from protocol.deck import (
    CardTable,
    DeckContext,
    KeyCommitments,
    KeyOpening,
    LockOutput,
    SeatSecrets,
    ShuffleOutput,
    audit_deck,
    check_key_opening,
    key_commitments,
    open_position,
)
from protocol.encoding import decode
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import PublicIdentity
from protocol.signed import SignedMessage
from protocol.table.messages import (
    CHOICE_TAG,
    NOTE_KINDS,
    SEED_TAG,
    STEP_KEY,
    STEP_KINDS,
    History,
    body_fields,
    clean_text,
    is_index,
    read_history,
)

CARD_CACHE: dict[tuple[str, tuple[str, ...]], CardTable] = {}  # card tables are pure functions of the deck
# Passes already checked, by their message's digest and their input's: a pass is a pure function of
# both, so a replay (a proof's `verify`, this seat's own pass) need not check its proofs again.
PASS_CACHE: dict[tuple[str, int], ShuffleOutput | LockOutput] = {}
PASS_CACHE_SIZE = 256


def _cached_pass(digest: str, deck: Sequence[bytes], check: Any) -> Any:
    key = (digest, hash(tuple(deck)))
    found = PASS_CACHE.get(key)
    if found is None:
        found = check()
        if len(PASS_CACHE) >= PASS_CACHE_SIZE:
            del PASS_CACHE[next(iter(PASS_CACHE))]
        PASS_CACHE[key] = found
    return found


def remember_pass(digest: str, deck: Sequence[bytes], output: ShuffleOutput | LockOutput) -> None:
    """A pass this seat made itself: checked by construction."""
    if len(PASS_CACHE) >= PASS_CACHE_SIZE:
        del PASS_CACHE[next(iter(PASS_CACHE))]
    PASS_CACHE[(digest, hash(tuple(deck)))] = output


def card_table(game_id: str, deck: tuple[str, ...]) -> CardTable:
    table = CARD_CACHE.get((game_id, deck))
    if table is None:
        table = CARD_CACHE[(game_id, deck)] = CardTable(game_id, deck)
    return table


@dataclass(frozen=True, slots=True)
class RoundStart:
    """Everything a round's replay starts from: all of it follows from the signed plan and the record
    of the rounds confirmed before (`rec` is its digest)."""

    table: str
    game: Game[Any, Any, Any, Any]
    options: Any
    keys: tuple[PublicIdentity, ...]
    index: int
    state: Any  # the full engine state before the round
    rec: str

    @property
    def n(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, slots=True)
class Fault:
    """A seat's signed message refused on the history it names (``message``), or a fault the audit
    found (``message`` None: the proof is the round's messages)."""

    seat: int
    rule: str
    reason: str
    message: SignedMessage | None = None


@dataclass(frozen=True, slots=True)
class Owed:
    """A step owed by `seat` (to `to` for a private one): `kind` is a message kind ("open.late" for the
    late trump's keys)."""

    seat: int
    kind: str
    to: int | None = None


@dataclass
class _Point:
    """A place in the round where steps are owed: one seat's, or a group's in any order."""

    start: tuple[int, ...]  # per seat: its public messages that must be in a history that reaches here
    kind: str
    seats: tuple[int, ...]
    group: bool
    taken: dict[int, int] = field(default_factory=dict)  # seat -> seq of its message taken for this point


@dataclass
class _Hidden:
    seat: int
    kind: str
    point: int
    commitment: Commitment
    message: SignedMessage
    value: JSONObject | None = None


class _Refuse(Exception):
    """Internal: the message being judged is refused on its history."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


Verdict = Literal["taken", "wait", "refused"]


class RoundLedger:
    """One round's public replay. Feed messages with `add` (each author's in chain order, signature
    and chain link already checked), then `advance`; read what it reached."""

    def __init__(self, start: RoundStart) -> None:
        self.start = start
        n = self.n = start.n
        self.game = start.game
        self.chains: list[list[SignedMessage]] = [[] for _ in range(n)]
        self.histories: list[list[History | None]] = [[] for _ in range(n)]
        self.cursor = [0] * n  # messages taken per seat
        self.step_upto = [0] * n  # per seat: messages up to and including its last step taken
        self.points: list[_Point] = []
        self.fault: Fault | None = None  # the first message refused
        self.faults: list[Fault] = []
        self.refused: list[tuple[int, int]] = []  # (seat, seq) of every message refused
        # Seats a proof exposed this round: the round is over, and its notes and secrets are taken
        # whatever version of their chain a history names (only liveness: nothing convicts on it).
        self.forked: set[int] = set()
        self._owed_cache: tuple[tuple[object, ...], tuple[Owed, ...]] | None = None
        self.peek_counts: list[dict[tuple[int, int], int]] = []  # per point: (target, peeker) -> peeks granted
        # seed (round 0)
        self.seed_commits: dict[int, Commitment] = {}
        self.seed_values: dict[int, bytes] = {}
        self.dealer: int | None = start.game.expected_dealer(start.state)
        # deal
        self.ctx: DeckContext | None = None
        self.layout_hands: tuple[tuple[int, ...], ...] = ()
        self.table_positions: tuple[int, ...] = ()
        self.late_positions: tuple[int, ...] = ()
        self.shuffles: list[ShuffleOutput] = []
        self.locks: list[LockOutput] = []
        self.commitments: list[KeyCommitments] = []
        self.table_keys: dict[int, dict[int, KeyOpening]] = {}
        self.table_cards: dict[int, str] = {}
        self.dealt = False
        # play, on public knowledge
        self.state: Any = None
        self.log: list[tuple[int, JSONObject]] = []  # (point, move) as applied publicly, hidden ones with None
        self.used: set[int] = set()
        self.hidden: list[_Hidden] = []
        self.turn_cards: dict[int, object] = {}
        self.ended: str | None = None  # why the round's public play ended: "over", or an audit's reason
        self.end_point: int | None = None
        # notes
        self.stops: list[tuple[int, int, JSONObject]] = []  # (author, seq, body) of stops and leaves
        self.left: dict[int, int] = {}  # seat -> where its leave stands in its chain
        self.ends: dict[int, str] = {}  # seat -> the record digest it signed last
        self.end_seqs: dict[int, list[tuple[int, str]]] = {}  # seat -> (seq, record digest) of its end signatures
        self.secrets: dict[int, tuple[SeatSecrets | None, dict[int, Opening], int]] = {}
        self.audit: AuditResult | None = None
        if start.index == 0:
            self._point("seed.commit", tuple(range(n)), group=True)
        else:
            self._begin_deal()

    # -- feeding -------------------------------------------------------------------------------
    def add(self, seat: int, msg: SignedMessage) -> None:
        """The next message of `seat`'s chain (its signature and link checked by the caller)."""
        self.chains[seat].append(msg)
        self.histories[seat].append(None)

    def history(self, seat: int, seq: int) -> History:
        """The history the message at `seq` of `seat` names, read once (its shape is its author's)."""
        known = self.histories[seat][seq]
        if known is None:
            msg = self.chains[seat][seq]
            known = read_history(msg.body, self.n, seat, seq, msg.prev)
            if known.rec != self.start.rec:
                raise CheatDetected("P-5.2", "a message names another record of the rounds before", seat)
            # A seat's view only grows: a message names at least what its author's message before it
            # named (read before it, as the cursor judges in order), so nobody judges or stops on a
            # history it had already passed (P-5.2).
            before = self.histories[seat][seq - 1] if seq > 0 else None
            if before is not None and (
                any(known.count(s) < before.count(s) for s in range(self.n))
                or any(now < then for now, then in zip(known.got, before.got, strict=True))
            ):
                raise CheatDetected("P-5.2", "a message names an older history than its author's before it", seat)
            self.histories[seat][seq] = known
        return known

    def advance(self) -> bool:
        """Take every message that can be taken now; True if anything was."""
        moved = False
        progress = True
        while progress:
            progress = False
            for seat in range(self.n):
                while self.cursor[seat] < len(self.chains[seat]):
                    verdict = self._judge(seat)
                    if verdict == "wait":
                        break
                    progress = moved = True
        return moved

    # -- judging -------------------------------------------------------------------------------
    def _available(self, history: History, closing: bool = False) -> Literal["ok", "wait"]:
        """Every message the history names is here, the same, and already taken. `closing`: a note or
        secrets after a fork proof, whose history may name the forker's other version (`forked`)."""
        for seat, head in enumerate(history.heads):
            if head is None or (closing and seat in self.forked):
                continue
            seq, digest = head
            chain = self.chains[seat]
            if seq >= len(chain) or chain[seq].digest() != digest:
                return "wait"  # not here yet, or another version here: gossip brings it (a fork's proof)
            if seq >= self.cursor[seat]:
                return "wait"
        return "ok"

    def _judge(self, seat: int) -> Verdict:
        seq = self.cursor[seat]
        msg = self.chains[seat][seq]
        try:
            history = self.history(seat, seq)
        except CheatDetected as exc:
            return self._refused(seat, msg, exc.rule, exc.message)
        if self._available(history) == "wait":
            if not self.forked or self._available(history, closing=True) == "wait":
                return "wait"
            # Made on an exposed seat's other version: the round is over and this seat cannot judge it
            # on the history it names, so it is neither judged nor refused (nothing convicts on it).
            # Its author's secrets and notes still count as come, so nobody is stopped for them.
            self.cursor[seat] += 1
            self._unjudged(seat, msg)
            return "taken"
        try:
            if msg.kind in NOTE_KINDS:
                self._note(seat, msg, history)
            elif msg.kind in STEP_KINDS:
                self._step(seat, msg, history)
            else:
                raise _Refuse("P-6.6", f"a public message of unknown kind {msg.kind[:30]!r}")
        except _Refuse as exc:
            return self._refused(seat, msg, exc.rule, exc.reason)
        except CheatDetected as exc:
            # A key or proof of another seat quoted in this message is the quoting author's to answer for.
            return self._refused(seat, msg, exc.rule, exc.message)
        except RuleError as exc:
            return self._refused(seat, msg, exc.rule, exc.message)
        except ProtocolError as exc:
            return self._refused(seat, msg, exc.rule, exc.message)
        self.cursor[seat] += 1
        return "taken"

    def _unjudged(self, seat: int, msg: SignedMessage) -> None:
        """What a message taken unjudged after an exposure still says: its author published its secrets
        (none checked, so no audit), left, stopped, or signed an end."""
        if msg.kind == "secrets" and seat not in self.secrets:
            self.secrets[seat] = (None, {}, msg.seq)
        elif msg.kind == "leave":
            self.left.setdefault(seat, msg.seq)
            self.stops.append((seat, msg.seq, {"seat": seat, "owed": "left", "to": None, "reason": "left the table"}))
        elif msg.kind == "stop":
            reason = clean_text(msg.body.get("reason"))
            named = msg.body.get("seat")
            self.stops.append(
                (
                    seat,
                    msg.seq,
                    {
                        "seat": named if is_index(named, self.n) else None,
                        "owed": msg.body.get("owed") if isinstance(msg.body.get("owed"), str) else None,
                        "to": None,
                        "reason": reason,
                    },
                )
            )
        elif msg.kind == "end" and isinstance(msg.body.get("record"), str):
            digest = str(msg.body.get("record"))
            self.ends[seat] = digest
            self.end_seqs.setdefault(seat, []).append((msg.seq, digest))

    def _refused(self, seat: int, msg: SignedMessage, rule: str, reason: str) -> Verdict:
        """The message is passed over (its place taken, so later messages can be judged) and its
        fault kept: it stops the round as a stop does (P-5.4)."""
        fault = Fault(seat, rule, reason, msg)
        self.faults.append(fault)
        if self.fault is None:
            self.fault = fault
        self.refused.append((seat, msg.seq))
        self.cursor[seat] += 1
        return "refused"

    def _stopped_in(self, history: History) -> bool:
        return any(history.holds(author, seq) for author, seq, _ in self.stops) or any(
            history.holds(author, seq) for author, seq in self.refused
        )

    def _reaches(self, history: History, point: _Point) -> bool:
        return all(history.count(s) >= point.start[s] for s in range(self.n))

    def _step(self, seat: int, msg: SignedMessage, history: History) -> None:
        if seat in self.secrets:
            raise _Refuse("P-5.3", "a step after its own secrets")
        if msg.kind == "secrets":
            if not (self._stopped_in(history) or self._ended_in(history)):
                raise _Refuse("P-5.3", "secrets published before the round ended or was stopped")
            self._on_secrets(seat, msg, history)
            return
        if self._stopped_in(history):
            raise _Refuse("P-5.5", "a step made after the round was stopped")
        point = self.points[-1] if self.points else None
        if point is None or (self.end_point is not None and len(self.points) - 1 >= self.end_point):
            raise _Refuse("P-5.1", f"a {msg.kind} after the round's play ended")
        wanted = "open" if point.kind == "open.late" else point.kind
        if wanted != msg.kind or seat not in point.seats or seat in point.taken or not self._reaches(history, point):
            raise _Refuse("P-5.1", f"a {msg.kind} where its author owed none, on the history it names")
        ended_before = self.end_point
        handler = _STEP_HANDLERS[point.kind]
        handler(self, seat, msg)
        point.taken[seat] = msg.seq
        self.step_upto[seat] = msg.seq + 1
        if self.end_point is not None:
            if ended_before is None:  # this step ended the play: a history reaches the end only with it
                self.points[self.end_point].start = tuple(self.step_upto)
            return
        if not point.group or len(point.taken) == len(point.seats):
            self._next_point(point)

    def _end_in(self, history: History, seat: int) -> str | None:
        """The record digest of `seat`'s latest end signature that `history` holds."""
        held = [digest for seq, digest in self.end_seqs.get(seat, ()) if history.holds(seat, seq)]
        return held[-1] if held else None

    def _end_owed(self, history: History, seat: int, author: int | None) -> bool:
        """`seat` owes an end signature: none on `history`, or (seen by `author`) one for another record
        than `author`'s own latest: ends are signed again as a seat's view grows (P-5.8)."""
        theirs = self._end_in(history, seat)
        if theirs is None:
            return True
        mine = self._end_in(history, author) if author is not None and author != seat else None
        return mine is not None and mine != theirs

    def _final_in(self, history: History) -> bool:
        """The history holds every seat's secrets of the game's last round, confirmed by the audit."""
        audit = self.audit
        if audit is None or not audit.complete or self.game.expected(audit.state).phase != "over":
            return False
        return all(history.holds(seat, taken[2]) for seat, taken in self.secrets.items())

    def _ended_in(self, history: History) -> bool:
        return self.end_point is not None and self._reaches(history, self.points[self.end_point])

    # -- points --------------------------------------------------------------------------------
    def _point(self, kind: str, seats: tuple[int, ...], group: bool) -> None:
        self.points.append(_Point(tuple(self.step_upto), kind, seats, group))
        counts: dict[tuple[int, int], int] = {}
        if self.dealt:
            for peek in self.game.peeks_due(self.state):
                counts[(peek.target, peek.peeker)] = counts.get((peek.target, peek.peeker), 0) + 1
        self.peek_counts.append(counts)

    def _next_point(self, done: _Point) -> None:
        kind = done.kind
        n = self.n
        if kind == "seed.commit":
            self._point("seed.reveal", tuple(range(n)), group=True)
        elif kind == "seed.reveal":
            seed = joint_random([self.seed_values[s] for s in range(n)])
            self.dealer = draw_below(seed, n, "first dealer")
            self._begin_deal()
        elif kind == "shuffle":
            if len(self.shuffles) < n:
                self._point("shuffle", (len(self.shuffles),), group=False)
            else:
                self._point("lock", (0,), group=False)
        elif kind == "lock":
            if len(self.locks) < n:
                self._point("lock", (len(self.locks),), group=False)
            else:
                self.commitments = [key_commitments(s, k) for s, k in zip(self.shuffles, self.locks, strict=True)]
                self._point("open", tuple(range(n)), group=True)
        elif kind == "open":
            self._deal_public()
        elif kind == "commit" and self.hidden and self.game.hidden_choice(self.hidden[-1].kind) == "turn":
            self._point("reveal", done.seats, group=True)  # T-3.1: every choice is in, now each is opened
        else:
            self._play_point()

    def _begin_deal(self) -> None:
        assert self.dealer is not None
        layout = self.game.layout(self.start.state, self.dealer)
        self.ctx = DeckContext(self.start.table, self.start.index, self.n, card_table(self.game.id, layout.deck))
        self.layout_hands = layout.hands
        self.table_positions = layout.table
        self.late_positions = layout.late_table
        self._point("shuffle", (0,), group=False)

    def _deal_public(self) -> None:
        assert self.ctx is not None and self.dealer is not None
        cards: list[str | None] = [None] * self.ctx.size
        for position in self.table_positions:
            code = self._open_table(position)
            if code is None:
                return
            cards[position] = code
        deal = self.game.deal_from_cards(self.start.state, self.dealer, cards)
        self.state = self.game.start_round(self.start.state, deal)
        self.dealt = True
        self._play_point()

    def _open_table(self, position: int) -> str | None:
        assert self.ctx is not None
        keys = self.table_keys[position]
        try:
            code = str(
                open_position(
                    self.ctx,
                    position,
                    self.locks[-1].points[position],
                    [keys[s] for s in range(self.n)],
                    self.commitments,
                    keys_checked=True,  # each seat's table keys were checked where they came (`checked_keys`)
                )
            )
        except CheatDetected as exc:
            self._end(f"table card at position {position} opens to no card: {exc.message}")
            return None
        self.table_cards[position] = code
        return code

    def expected(self) -> Expected | None:
        return self.game.expected(self.state) if self.dealt else None

    def _play_point(self) -> None:
        expected = self.game.expected(self.state)
        if expected.phase == "reveal":
            self._point("open.late", tuple(range(self.n)), group=True)
        elif expected.phase == "move":
            if self.game.hidden_choice(expected.kind) is None:
                self._point("move", expected.seats, group=False)
            else:
                self._point("commit", expected.seats, group=True)
        else:
            self._end("over")

    def _end(self, why: str) -> None:
        if self.ended is None:
            self.ended = why
            self._point("end", (), group=True)
            self.end_point = len(self.points) - 1

    # -- step handlers -------------------------------------------------------------------------
    def _seed_commit(self, seat: int, msg: SignedMessage) -> None:
        body_fields(msg.body, frozenset({"digest"}), seat, "seed commitment")
        self.seed_commits[seat] = Commitment.from_hex(msg.body.get("digest"))

    def _seed_reveal(self, seat: int, msg: SignedMessage) -> None:
        body_fields(msg.body, frozenset({"value", "nonce"}), seat, "seed reveal")
        opening = read_opening(msg.body, seat)
        verify_opening(self.seed_commits[seat], opening, SEED_TAG, self.start.table, 0, seat)
        self.seed_values[seat] = opening.value

    def _shuffle(self, seat: int, msg: SignedMessage) -> None:
        assert self.ctx is not None
        deck = self.shuffles[-1].points if self.shuffles else self.ctx.cards.points
        ctx = self.ctx
        body = _without_on(msg.body)
        self.shuffles.append(_cached_pass(msg.digest(), deck, lambda: ShuffleOutput.from_json(ctx, seat, body, deck)))

    def _lock(self, seat: int, msg: SignedMessage) -> None:
        assert self.ctx is not None
        ctx = self.ctx
        deck = self.locks[-1].points if self.locks else self.shuffles[-1].points
        body = _without_on(msg.body)
        self.locks.append(_cached_pass(msg.digest(), deck, lambda: LockOutput.from_json(ctx, seat, body, deck)))

    def _open(self, seat: int, msg: SignedMessage) -> None:
        assert self.ctx is not None
        late = self.points[-1].kind == "open.late"
        body_fields(msg.body, frozenset({"openings", "late"}), seat, "table key opening")
        if msg.body.get("late") is not late:
            raise _Refuse("P-4.3", "table keys for the wrong opening (late or not)")
        positions = self.late_positions if late else self.table_positions
        for opening in self.checked_keys(seat, positions, msg.body.get("openings"), "table"):
            self.table_keys.setdefault(opening.position, {})[seat] = opening
        if late and len(self.points[-1].taken) + 1 == self.n:
            codes = []
            for position in self.late_positions:
                code = self._open_table(position)
                if code is None:
                    return
                codes.append(code)
            self.state = self.game.reveal(self.state, codes)
            self.log.append((len(self.points) - 1, {"_reveal": codes}))  # S-8.3: each seat's own view turns it too

    def read_card(self, seat: int, wire: object) -> object:
        """A card from `seat`'s hand as a move carries it (deck position and every seat's key,
        P-4.3), opened publicly; a bare card name only where hands are public (T-5.2)."""
        assert self.ctx is not None
        if not isinstance(wire, dict):
            if self.game.hands_public(self.start.options):
                return wire
            raise _Refuse("P-4.3", "a card from a hidden hand must be a deck position with every seat's key")
        if set(wire) != {"pos", "keys"}:
            raise _Refuse("P-4.3", "a card must be exactly a deck position with every seat's key")
        position = wire.get("pos")
        if isinstance(position, int) and position in self.used:
            raise _Refuse("P-4.3", f"position {str(position)[:12]} was already played")
        code = self.open_hand_card(seat, position, wire.get("keys"), "P-4.3")
        if code is None:
            return _NO_CARD
        assert isinstance(position, int)
        self.used.add(position)
        return self.game.card_to_json(code)

    def checked_keys(self, seat: int, positions: Sequence[int], raw: object, what: str) -> list[KeyOpening]:
        """`seat`'s keys for `positions`, in their order, each checked against its lock factor (P-4.3)."""
        assert self.ctx is not None
        if not isinstance(raw, list) or len(raw) != len(positions):
            raise _Refuse("P-4.3", f"{what} keys must cover the {len(positions)} positions")
        openings = []
        for position, item in zip(positions, raw, strict=True):
            opening = KeyOpening.from_json(self.ctx, seat, item)
            if opening.position != position:
                raise _Refuse("P-4.3", f"a key for position {opening.position} instead of {position}")
            check_key_opening(self.ctx, opening, self.commitments[seat])
            openings.append(opening)
        return openings

    def open_hand_card(self, seat: int, position: object, keys: object, rule: str) -> str | None:
        """The card at a position dealt to `seat`, opened with every seat's key as `seat` forwards them
        (P-4.3); None when it opens to no card (a pass replaced it: only the audit names whose)."""
        assert self.ctx is not None
        if not is_index(position, self.ctx.size) or position not in self.layout_hands[seat]:
            raise _Refuse(rule, f"position {str(position)[:12]} was not dealt to seat {seat}")
        assert isinstance(position, int)
        if not isinstance(keys, list) or len(keys) != self.n:
            raise _Refuse(rule, "a card needs one key from every seat")
        openings = [KeyOpening.from_json(self.ctx, s, keys[s]) for s in range(self.n)]
        if any(o.position != position for o in openings):
            raise _Refuse(rule, f"a key for another position sent for {position}")
        try:
            return str(open_position(self.ctx, position, self.locks[-1].points[position], openings, self.commitments))
        except CheatDetected as exc:
            if exc.seat is None:
                return None
            raise _Refuse(exc.rule, f"its card does not open: {exc.message}") from exc

    def _move(self, seat: int, msg: SignedMessage) -> None:
        body_fields(msg.body, frozenset({"move"}), seat, "move")
        wire = msg.body.get("move")
        if not isinstance(wire, dict) or wire.get("seat") != seat:
            raise _Refuse("P-5.1", "a move must be an object naming its own seat")
        move_json: JSONObject = dict(wire)
        for name in self.game.hand_card_fields():
            if name in move_json and move_json[name] is not None:
                card = self.read_card(seat, move_json[name])
                if card is _NO_CARD:
                    self._end("a played card opens to no card: a pass replaced it")
                    return
                move_json[name] = card
        self._apply(seat, move_json)

    def _apply(self, seat: int, move_json: JSONObject) -> None:
        move = self.game.move_from_json(move_json)
        if self.game.move_seat(move) != seat:
            raise _Refuse("P-5.1", "a move for another seat")
        self.state = self.game.apply(self.state, move)
        self.log.append((len(self.points) - 1, move_json))
        recent = [m for _, m in self.log[-self.n :]]
        if len(recent) == self.n and all(m.get("pass") is True for m in recent):
            # every card not yet played is in some hand, so a whole round of passes means a
            # pass was false: only the audit can say whose.
            self._end("every seat passed in turn although cards are left: a pass was false")

    def _commit(self, seat: int, msg: SignedMessage) -> None:
        body_fields(msg.body, frozenset({"digest"}), seat, "hidden choice")
        expected = self.game.expected(self.state)
        hidden = _Hidden(seat, expected.kind, len(self.points) - 1, Commitment.from_hex(msg.body.get("digest")), msg)
        self.hidden.append(hidden)
        point = self.points[-1]
        if len(point.taken) + 1 < len(point.seats):
            return
        if self.game.hidden_choice(expected.kind) == "round":
            # S-3.4: the choices stay hidden until the audit; the engine is told only that each chose.
            for mover in sorted(point.seats):
                self._apply(mover, {"seat": mover, expected.kind: None})

    def _reveal(self, seat: int, msg: SignedMessage) -> None:
        body_fields(msg.body, frozenset({"value", "nonce", "keys"}), seat, "choice reveal")
        commit_point = len(self.points) - 2
        hidden = next(h for h in self.hidden if h.seat == seat and h.point == commit_point)
        opening = read_opening(msg.body, seat)
        verify_opening(hidden.commitment, opening, CHOICE_TAG, self.start.table, self.start.index, seat)
        reference = read_reference(opening.value, seat)
        if "pos" in reference:
            card = self.read_card(seat, {"pos": reference["pos"], "keys": msg.body.get("keys")})
        else:
            card = self.read_card(seat, reference["card"])
        if card is _NO_CARD:
            self._end("a revealed card opens to no card: a pass replaced it")
            return
        self.game.move_from_json({"seat": seat, hidden.kind: card})  # its shape, before anything moves (P-6.3)
        hidden.value = reference
        self.turn_cards[seat] = card
        point = self.points[-1]
        if len(point.taken) + 1 < len(point.seats):
            return
        cards, self.turn_cards = self.turn_cards, {}
        for mover in sorted(cards):
            self._apply(mover, {"seat": mover, hidden.kind: cards[mover]})

    def _on_secrets(self, seat: int, msg: SignedMessage, history: History) -> None:
        if seat in self.secrets:
            raise _Refuse("P-5.3", "a second set of secrets")
        body_fields(msg.body, frozenset({"secrets", "openings"}), seat, "secrets")
        seat_secrets = None
        if self._reaches_open(history):  # deck secrets exactly when its history holds every lock pass
            assert self.ctx is not None
            seat_secrets = SeatSecrets.from_json(self.ctx, seat, msg.body.get("secrets"))
        elif msg.body.get("secrets") is not None:
            raise _Refuse("P-5.3", "deck secrets for a deal that never finished")
        raw = msg.body.get("openings")
        if not isinstance(raw, dict) or len(raw) > 64:
            raise _Refuse("P-5.3", "the openings of hidden choices must be an object")
        openings: dict[int, Opening] = {}
        for key, item in raw.items():
            if STEP_KEY.fullmatch(key) is None:
                raise _Refuse("P-5.3", f"an opening for point {key[:20]!r}")
            openings[int(key)] = read_opening(item, seat)
        # Not a step of the round's order (secrets come beside the last steps), so no point's start counts it.
        self.secrets[seat] = (seat_secrets, openings, msg.seq)
        if len(self.secrets) == self.n:
            self.audit = run_audit(self)

    # -- notes ---------------------------------------------------------------------------------
    def _note(self, seat: int, msg: SignedMessage, history: History) -> None:
        body = msg.body
        if msg.kind == "wait":
            body_fields(body, frozenset(), seat, "wait note")
        elif msg.kind == "leave":
            body_fields(body, frozenset(), seat, "leave")
            self.left.setdefault(seat, msg.seq)
            self.stops.append((seat, msg.seq, {"seat": seat, "owed": "left", "to": None, "reason": "left the table"}))
        elif msg.kind == "end":
            body_fields(body, frozenset({"record"}), seat, "end signature")
            digest = body.get("record")
            if not isinstance(digest, str) or len(digest) != 64:
                raise _Refuse("P-5.8", "an end signature must name a record digest")
            self.ends[seat] = digest
            self.end_seqs.setdefault(seat, []).append((msg.seq, digest))
        else:  # stop
            body_fields(body, frozenset({"seat", "owed", "to", "reason"}), seat, "stop")
            named, owed, to = body.get("seat"), body.get("owed"), body.get("to")
            if named is not None:
                if not is_index(named, self.n) or not isinstance(owed, str) or not (to is None or is_index(to, self.n)):
                    raise _Refuse("P-5.5", "a stop must name a seat, the step it owes and to whom (or nobody)")
                assert isinstance(named, int)
                if Owed(named, owed, to if isinstance(to, int) else None) not in self.owed_on(history, seat):
                    raise _Refuse("P-5.5", f"a stop naming seat {named} for a step it did not owe on the history named")
            reason = clean_text(body.get("reason"))
            self.stops.append((seat, msg.seq, {"seat": named, "owed": owed, "to": to, "reason": reason}))

    # -- reading -------------------------------------------------------------------------------
    def owed_on(self, history: History, author: int | None = None) -> tuple[Owed, ...]:
        """Every step owed on `history` (which must be here and taken): public steps by the point it
        reaches, private ones (hand keys, peek answers) by what the waiting seat's own last public
        message says it received (its ``got``; for `author`, the history itself)."""
        owed: list[Owed] = []
        reached = None
        for index in range(len(self.points) - 1, -1, -1):
            if self._reaches(history, self.points[index]):
                reached = index
                break
        stopped = self._stopped_in(history)
        if reached is not None:
            point = self.points[reached]
            if point.kind != "end" and not stopped:
                for seat in point.seats:
                    if not (seat in point.taken and history.holds(seat, point.taken[seat])):
                        owed.append(Owed(seat, point.kind))
        if stopped or self._ended_in(history):
            # P-5.8: an end signature is owed only once the record to sign is known on this history: every
            # seat's secrets in, or stopped for (a seat cannot sign while another's secrets may still come).
            away = {
                body.get("seat")
                for author, seq, body in self.stops
                if body.get("owed") in ("secrets", "end") and history.holds(author, seq)
            }
            secrets_owed = False
            for seat in range(self.n):
                taken = self.secrets.get(seat)
                if seat in self.left and history.holds(seat, self.left[seat]):
                    continue  # judged on the history named: a leave it does not hold changes nothing
                if not (taken is not None and history.holds(seat, taken[2])):
                    owed.append(Owed(seat, "secrets"))
                    secrets_owed |= seat not in away
            for seat in range(self.n):
                taken = self.secrets.get(seat)
                if seat in self.left and history.holds(seat, self.left[seat]):
                    continue
                if taken is None or not history.holds(seat, taken[2]):
                    continue
                if (stopped or self._final_in(history)) and not secrets_owed and self._end_owed(history, seat, author):
                    owed.append(Owed(seat, "end"))
        if reached is not None and len(self.locks) == self.n and self._reaches_open(history):
            for waiter in range(self.n):
                got = self._got(history, waiter, author)
                if got is None:
                    continue
                for sender in range(self.n):
                    if sender != waiter and got[sender] < self.private_due(sender, waiter, reached):
                        owed.append(Owed(sender, "p.keys" if got[sender] == 0 else "p.peek", waiter))
        return tuple(owed)

    def _reaches_open(self, history: History) -> bool:
        return any(p.kind == "open" and self._reaches(history, p) for p in self.points)

    def _got(self, history: History, waiter: int, author: int | None) -> tuple[int, ...] | None:
        if waiter == author:
            return history.got
        head = history.heads[waiter]
        if head is None:
            return None
        known = self.histories[waiter][head[0]] if head[0] < len(self.histories[waiter]) else None
        return None if known is None else known.got

    def private_due(self, sender: int, recipient: int, point: int | None = None) -> int:
        """How many private messages `sender` owes `recipient` by `point` (the last one when None):
        its hand keys, then one answer per peek granted (S-6.4)."""
        counts = self.peek_counts[-1 if point is None else point] if self.peek_counts else {}
        return 1 + counts.get((sender, recipient), 0)

    def owed_now(self, author: int | None = None) -> tuple[Owed, ...]:
        """What the round waits for on everything taken here, as seat `author` judges it (an end for
        another record than its own latest is owed again)."""
        # Asked at every input, yet it changes only when a message is taken (every taking moves a
        # cursor; a stop or secrets taken unjudged too) or a point opens.
        key = (author, tuple(self.cursor), len(self.points), len(self.stops), len(self.secrets), len(self.forked))
        if self._owed_cache is not None and self._owed_cache[0] == key:
            return self._owed_cache[1]
        owed = self._owed_now(author)
        self._owed_cache = (key, owed)
        return owed

    def _owed_now(self, author: int | None) -> tuple[Owed, ...]:
        heads = tuple(
            (self.cursor[s] - 1, self.chains[s][self.cursor[s] - 1].digest()) if self.cursor[s] else None
            for s in range(self.n)
        )
        history = History(self.start.rec, heads, tuple(0 for _ in range(self.n)))
        return tuple(o for o in self.owed_on(history, author) if o.kind not in ("p.keys", "p.peek"))

    @property
    def stopped(self) -> bool:
        return bool(self.stops)

    def current(self) -> _Point | None:
        return self.points[-1] if self.points else None


_NO_CARD = object()


def _without_on(body: JSONObject) -> JSONObject:
    return {key: value for key, value in body.items() if key != "on"}


def read_opening(body: object, seat: int) -> Opening:
    if not isinstance(body, dict):
        raise _Refuse("P-3.3", "an opening must be an object")
    try:
        return Opening(bytes.fromhex(str(body.get("value"))), bytes.fromhex(str(body.get("nonce"))))
    except (ValueError, ProtocolError) as exc:
        raise _Refuse("P-3.3", f"a malformed opening: {exc}") from exc


def read_reference(value: bytes, seat: int) -> JSONObject:
    """What a hidden choice was committed to: {"pos": p} or {"card": c} (P-4.5)."""
    try:
        reference = decode(value, 1 << 16)
    except ProtocolError as exc:
        raise _Refuse("P-3.3", f"a commitment to bytes that are not a choice: {exc.message}") from exc
    if set(reference) == {"pos"} and is_index(reference["pos"], 1 << 16):
        return reference
    card = reference.get("card")
    if set(reference) == {"card"} and isinstance(card, str | int) and not isinstance(card, bool):
        return reference
    raise _Refuse("P-3.3", "a commitment to something that is not a position or a card")


_STEP_HANDLERS = {
    "seed.commit": RoundLedger._seed_commit,
    "seed.reveal": RoundLedger._seed_reveal,
    "shuffle": RoundLedger._shuffle,
    "lock": RoundLedger._lock,
    "open": RoundLedger._open,
    "open.late": RoundLedger._open,
    "move": RoundLedger._move,
    "commit": RoundLedger._commit,
    "reveal": RoundLedger._reveal,
}


# -- the audit (P-5.3) ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AuditResult:
    """The round replayed with full knowledge: confirmed (`record`, `state`; `complete` when its play
    reached the end), void, or a fault."""

    fault: Fault | None
    complete: bool
    record: RoundRecord | None
    state: Any


def run_audit(ledger: RoundLedger) -> AuditResult:
    """Every seat's secrets are in: rebuild the deck, open every hidden choice and replay the round's
    moves with full knowledge through the engine (P-5.3). Pure: the same ledger gives the same result."""
    start = ledger.start
    game = ledger.game
    if ledger.ctx is None or len(ledger.locks) < ledger.n or ledger.dealer is None:
        return AuditResult(None, False, None, start.state)  # stopped before the deal finished: nothing to replay
    secrets = [ledger.secrets[s][0] for s in range(ledger.n)]
    if any(s is None for s in secrets):
        return AuditResult(None, False, None, start.state)
    try:
        codes = tuple(str(c) for c in audit_deck(ledger.ctx, ledger.shuffles, ledger.locks, secrets))  # type: ignore[arg-type]
    except CheatDetected as exc:
        seat = exc.seat if exc.seat is not None else 0
        return AuditResult(Fault(seat, exc.rule, f"audit: {exc.message}"), False, None, start.state)
    values: dict[int, JSONObject] = {}
    for index, hidden in enumerate(ledger.hidden):
        opening = ledger.secrets[hidden.seat][1].get(hidden.point)
        if hidden.value is not None:
            values[index] = hidden.value
            continue
        if opening is None:
            why = f"audit: seat {hidden.seat} never opened its {hidden.kind} commitment"
            return AuditResult(Fault(hidden.seat, "P-3.3", why), False, None, start.state)
        try:
            verify_opening(hidden.commitment, opening, CHOICE_TAG, start.table, start.index, hidden.seat)
            values[index] = read_reference(opening.value, hidden.seat)
        except (CheatDetected, _Refuse) as exc:
            why = exc.message if isinstance(exc, CheatDetected) else exc.reason
            return AuditResult(Fault(hidden.seat, "P-3.3", f"audit: {why}"), False, None, start.state)
    deal = game.deal_from_cards(start.state, ledger.dealer, codes)
    state = game.start_round(start.state, deal)
    moves: list[JSONObject] = []
    hidden_iter = {(h.point, h.seat): (i, h) for i, h in enumerate(ledger.hidden)}
    for point_index, move_json in ledger.log:
        if "_reveal" in move_json:
            continue  # with full knowledge the late trump is in the deal already
        seat = int(str(move_json["seat"]))
        entry = hidden_iter.get((point_index, seat))
        full = dict(move_json)
        if entry is not None:
            index, hidden = entry
            value = values[index]
            if "pos" in value:
                position = value["pos"]
                if not isinstance(position, int) or position not in ledger.layout_hands[seat]:
                    why = f"audit: seat {seat}'s {hidden.kind} card (position {position}) was not in its hand"
                    return AuditResult(Fault(seat, "P-4.5", why), False, None, start.state)
                full[hidden.kind] = game.card_to_json(codes[position])
            elif game.hands_public(start.options):
                full[hidden.kind] = value.get("card")
            else:
                why = f"audit: seat {seat}'s {hidden.kind} names a card, not a hand position"
                return AuditResult(Fault(seat, "P-4.5", why), False, None, start.state)
        try:
            state = game.apply(state, game.move_from_json(full))
        except RuleError as exc:
            return AuditResult(Fault(seat, exc.rule, f"audit: seat {seat}: {exc.message}"), False, None, start.state)
        moves.append(full)
    complete = ledger.ended == "over" and game.expected(state).phase in ("deal", "over")
    record = RoundRecord(game.deal_to_json(deal), tuple(moves))
    return AuditResult(None, complete, record, state)


def round_messages(ledger: RoundLedger) -> tuple[SignedMessage, ...]:
    """Every public message taken, in each seat's chain order (what an audit proof carries)."""
    out: list[SignedMessage] = []
    for seat in range(ledger.n):
        out.extend(ledger.chains[seat][: ledger.cursor[seat]])
    return tuple(out)


def replay_round(start: RoundStart, messages: Sequence[SignedMessage]) -> RoundLedger:
    """A fresh ledger fed `messages` (any order; each author's are put in chain order and their
    signatures and links checked) and advanced as far as they go. Raises ProtocolError when the
    messages are not chains of this round's seats."""
    seat_of = {key.peer_id: seat for seat, key in enumerate(start.keys)}
    by_seat: dict[int, dict[int, SignedMessage]] = {}
    for msg in messages:
        seat = seat_of.get(msg.author)
        if seat is None or msg.table != start.table or msg.round != start.index:
            raise ProtocolError("P-5.4", "a message of another table, round or author")
        msg.verify(start.keys[seat])
        by_seat.setdefault(seat, {})[msg.seq] = msg
    ledger = RoundLedger(start)
    for seat, chain in sorted(by_seat.items()):
        prev = "0" * 64
        for seq in range(len(chain)):
            link = chain.get(seq)
            if link is None:
                raise ProtocolError("P-5.4", f"seat {seat}'s chain has a gap at {seq}")
            if link.prev != prev:
                raise ProtocolError("P-5.4", f"seat {seat}'s chain is not linked at {seq}")
            prev = link.digest()
            ledger.add(seat, link)
    ledger.advance()
    return ledger


# -- private messages ------------------------------------------------------------------------------
def judge_private(ledger: RoundLedger, sender: int, recipient: int, msg: SignedMessage) -> Fault | str | None:
    """A private message from `sender` to `recipient` (hand keys, or a peek answer, S-6.4) judged on
    the public history it names: "wait" until that history is here and taken, a `Fault` when it is
    refused there, else None for hand keys and the card's code for a peek answer. Pure, like the rest."""
    try:
        history = read_history(msg.body, ledger.n, sender, msg.seq, msg.prev, private=True)
        if history.rec != ledger.start.rec:
            raise _Refuse("P-5.2", "a private message naming another record of the rounds before")
        if ledger._available(history) == "wait":
            return "wait"
        reached = next(
            (i for i in range(len(ledger.points) - 1, -1, -1) if ledger._reaches(history, ledger.points[i])), None
        )
        if reached is None or not ledger._reaches_open(history):
            raise _Refuse("P-4.3", f"a private {msg.kind} before the deal's lock passes, on the history it names")
        assert ledger.ctx is not None
        if msg.kind == "p.keys":
            if msg.seq != 0:
                raise _Refuse("P-4.3", "hand keys must be the first private message of a round")
            body_fields(msg.body, frozenset({"openings"}), sender, "set of hand keys")
            ledger.checked_keys(sender, ledger.layout_hands[recipient], msg.body.get("openings"), "hand")
            return None
        if msg.kind != "p.peek":
            raise _Refuse("P-6.6", f"a private message of unknown kind {msg.kind[:30]!r}")
        body_fields(msg.body, frozenset({"trick", "value", "nonce", "keys"}), sender, "peek answer")
        granted = ledger.peek_counts[reached].get((sender, recipient), 0)
        if msg.seq < 1 or msg.seq > granted:
            raise _Refuse("P-4.5", f"a peek answer to seat {recipient} that no peek granted, on the history it names")
        hidden = next(
            (h for h in ledger.hidden if h.seat == sender and ledger.game.hidden_choice(h.kind) == "round"), None
        )
        if hidden is None:
            raise _Refuse("P-4.5", "a peek answer for a choice that was never committed")
        peeked = read_opening(msg.body, sender)
        verify_opening(hidden.commitment, peeked, CHOICE_TAG, ledger.start.table, ledger.start.index, sender)
        reference = read_reference(peeked.value, sender)
        if "pos" not in reference:
            raise _Refuse("P-4.5", "a hidden hand's choice must be a hand position")
        code = ledger.open_hand_card(sender, reference["pos"], msg.body.get("keys"), "P-4.5")
        return "no card" if code is None else code
    except _Refuse as exc:
        return Fault(sender, exc.rule, exc.reason, msg)
    except CheatDetected as exc:
        return Fault(sender, exc.rule, exc.message, msg)
    except (RuleError, ProtocolError) as exc:
        return Fault(sender, exc.rule, exc.message, msg)
