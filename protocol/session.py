"""The table session: one peer's sans-IO state machine for a whole game (P-1 … P-5).

A `TableSession` takes the table's settings, its own identity and the current time; then it is fed
bytes that arrived from other seats (`receive`), the local player's decisions (`decide`) and the
passing of time (`tick`). Each call returns `Output`s: `Send` (bytes for one seat, or for all) and
events for the UI (`Dealt`, `Moved`, `PeekResult`, `RoundAudited`, `Blamed`, `Refused`,
`GameOver`). It never touches a socket, a clock or a thread.

A round goes: shuffle passes (seat by seat) → lock passes (seat by seat) → every seat sends each
other seat the keys of its hand privately and publishes the keys of the table cards → play in
lockstep, hidden choices by commit–reveal → every seat publishes its secrets → audit: the deck
is rebuilt, every commitment opened, and the round replayed with full knowledge through the engine
→ the round is confirmed and written to the game record, or a blame names the seat and the rule.
The first dealer comes from a jointly random seed (P-3.2). See docs/PROTOCOL.md.

Message order: every public message is signed, sequenced and hash-linked (P-1.3) and goes through
a `ChainTracker`; accepted messages wait in their author's inbox and are handled strictly in the
author's order once the table has reached the point they belong to (moves carry the step number
and the hash of the public state they were made on). A peer forwards each public message it got
straight from its author to every seat, so equivocation shows and a lost link loses nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.api import Game, IllegalMove, JSONObject, PeekDue, RuleError
from engine.games import get_game
from engine.record import GameRecord, RoundRecord
from protocol.commitment import Commitment, Opening, commit, draw_below, joint_random, verify_opening
from protocol.deck import (
    CardTable,
    DeckContext,
    Entropy,
    KeyCommitments,
    KeyOpening,
    LockOutput,
    LockSecret,
    SeatSecrets,
    ShuffleOutput,
    ShuffleSecret,
    audit_deck,
    check_key_opening,
    key_opening,
    lock_pass,
    open_position,
    random_permutation,
    random_scalar,
    shuffle_pass,
)
from protocol.encoding import canonical, decode, sha256_hex
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import Identity, PublicIdentity
from protocol.signed import (
    ZERO_DIGEST,
    ChainTracker,
    Equivocation,
    EquivocationDetected,
    OutOfOrder,
    SignedMessage,
    Verdict,
    sign_message,
    verify_equivocation,
)

SEED_TAG = "lanplay/seed"
CHOICE_TAG = "lanplay/choice"
PRIVATE_DOMAIN = b"lanplay/private-channel/v1\x00"
MAX_HELD = 4096  # out-of-order messages kept per author before they are refused

MAX_HELD_BYTES = 4 << 20  # ... and their bytes (I6)
MAX_ROUND_MESSAGES = 2000  # messages one author may send in one round (public and private)
MAX_ROUND_BYTES = 8 << 20  # ... and their bytes; an honest seat sends well under 1 MiB (I6)
MAX_TEXT = 500  # characters of peer-written text (blame messages, reasons) kept
_STEP_KEY = re.compile(r"0|[1-9][0-9]{0,8}")  # ASCII only: "²".isdigit() is True (I3)

PUBLIC_KINDS = frozenset(
    {"seed.commit", "seed.reveal", "shuffle", "lock", "open", "move", "commit", "reveal", "secrets",
     "abort", "timeout", "blame", "stop"}
)
PRIVATE_KINDS = frozenset({"p.keys", "p.peek"})
# Which move fields name a hand card and which choices are hidden is the game's to say
# (`Game.hand_card_fields`, `Game.hidden_choice`): adding a game never edits the protocol.


# --- settings and outputs -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableSettings:
    table: str  # hex table id
    game: str
    options: JSONObject
    seats: tuple[PublicIdentity, ...]  # seat order
    names: tuple[str, ...]
    step_timeout: float = 20.0  # automatic steps: passes, keys, reveals, secrets (P-5.3)
    reconnect_timeout: float = 120.0  # how long a disconnected seat is waited for
    turn_timeout: float | None = None  # a person's decision: no limit unless the table sets one


@dataclass(frozen=True, slots=True)
class Send:
    """Bytes for seat `to`, or for every other seat when `to` is None."""

    to: int | None
    data: bytes
    forward: bool = False  # another seat's message passed on (gossip): nothing of ours depends on it


@dataclass(frozen=True, slots=True)
class Refused:
    """Input refused without proof of who is at fault (malformed, bad signature, unknown key)."""

    sender: int | None
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Blamed:
    """The game stops: `seat` broke `rule` (None: certain cheating, author unknown)."""

    seat: int | None
    rule: str
    message: str
    evidence: tuple[JSONObject, ...] = ()


@dataclass(frozen=True, slots=True)
class Stopped:
    """The game stops with nobody convicted: the table could not agree (I2). `evidence` holds the
    signed claims of both sides (a seat's timeout claim and what contradicts it, a blame this seat
    cannot confirm), so a person can see who said what."""

    rule: str
    message: str
    evidence: tuple[JSONObject, ...] = ()


@dataclass(frozen=True, slots=True)
class NetworkLost:
    """Every link of this seat is down: this laptop lost the network. Nobody is blamed for it (I4);
    the table goes on when links come back (`set_connected`)."""

    since: float


@dataclass(frozen=True, slots=True)
class Dealt:
    round: int
    hand: tuple[str, ...]
    table: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Moved:
    """A move applied to the table; hidden choices show only that the seat chose."""

    seat: int
    move: JSONObject


@dataclass(frozen=True, slots=True)
class PeekResult:
    """S-6.4: only the peeker gets this: `target`'s prediction card."""

    target: int
    card: str


@dataclass(frozen=True, slots=True)
class RoundAudited:
    round: int
    report: JSONObject


@dataclass(frozen=True, slots=True)
class GameOver:
    record: GameRecord
    winners: tuple[int, ...]


Event = Refused | Blamed | Stopped | NetworkLost | Dealt | Moved | PeekResult | RoundAudited | GameOver
Output = Send | Event


@dataclass(frozen=True, slots=True)
class Waiting:
    """What the table waits for now: `seats` owe `what`; `automatic` steps have a time limit."""

    seats: tuple[int, ...]
    what: str
    automatic: bool
    since: float


def private_channel(table: str, author: str, recipient: str) -> str:
    """The table id private messages from `author` to `recipient` are signed under: they can never
    be replayed to another seat or mistaken for a public message (P-1.3)."""
    data = PRIVATE_DOMAIN + table.encode() + bytes.fromhex(author) + bytes.fromhex(recipient)
    return hashlib.sha256(data).digest()[:16].hex()


# --- per-round bookkeeping -----------------------------------------------------------------


@dataclass
class _Hidden:
    """One hidden choice: the commitment, and (once known) what it opens to."""

    seat: int
    step: int
    kind: str
    commitment: Commitment
    message: SignedMessage
    value: JSONObject | None = None  # {"pos": p} or {"card": code}


@dataclass
class _Round:
    index: int
    dealer: int
    layout_hands: tuple[tuple[int, ...], ...]
    table_positions: tuple[int, ...]
    late_positions: tuple[int, ...]
    ctx: DeckContext
    my_shuffle: ShuffleSecret
    my_lock: LockSecret
    shuffles: list[ShuffleOutput] = field(default_factory=list)
    locks: list[LockOutput] = field(default_factory=list)
    hand_keys: dict[int, dict[int, KeyOpening]] = field(default_factory=dict)  # position -> seat -> key
    table_keys: dict[int, dict[int, KeyOpening]] = field(default_factory=dict)
    keys_from: set[int] = field(default_factory=set)
    opens_from: set[int] = field(default_factory=set)
    late_from: set[int] = field(default_factory=set)
    late_sent: bool = False
    my_cards: dict[int, str] = field(default_factory=dict)  # position -> code
    table_cards: dict[int, str] = field(default_factory=dict)
    used: set[int] = field(default_factory=set)  # positions opened by moves
    dealt: bool = False
    step: int = 0
    log: list[JSONObject | _Hidden] = field(default_factory=list)
    phase_commits: dict[int, _Hidden] = field(default_factory=dict)
    phase_reveals: dict[int, object] = field(default_factory=dict)  # seat -> the card as moves write it
    my_choice: tuple[Any, Opening] | None = None
    hidden: list[_Hidden] = field(default_factory=list)
    peeks_seen: int = 0
    peeks_owed: dict[int, int] = field(default_factory=dict)  # trick -> target seat, for me as peeker
    secrets: dict[int, tuple[SeatSecrets, dict[int, Opening]]] = field(default_factory=dict)
    secrets_sent: bool = False
    aborting: bool = False
    abort_reason: str = ""
    abort_requests: list[int] = field(default_factory=list)  # authors of `abort` messages (P-5.2)
    abort_steps: dict[int, tuple[int, SignedMessage]] = field(default_factory=dict)  # author -> (step, abort)
    abort_sent: bool = False
    faulty_move: JSONObject | None = None  # a move this seat refused on private knowledge: audited last

    @property
    def final_points(self) -> tuple[bytes, ...]:
        return self.locks[-1].points

    def commitments(self) -> list[KeyCommitments]:
        return [lock.commitments for lock in self.locks]


# --- the session ---------------------------------------------------------------------------


class TableSession:
    """One seat's view of one table, from the first shuffle to the game record."""

    def __init__(
        self, settings: TableSettings, identity: Identity, now: float, entropy: Entropy = secrets.token_bytes
    ) -> None:
        peer_ids = [p.peer_id for p in settings.seats]
        if identity.peer_id not in peer_ids:
            raise ProtocolError("P-1.1", "this identity has no seat at the table")
        if len(set(peer_ids)) != len(peer_ids):
            raise ProtocolError("P-1.1", "one identity holds two seats")
        self.settings = settings
        self.identity = identity
        self.entropy = entropy  # every secret this seat draws; `secrets` except in reproducible tests
        self.me = peer_ids.index(identity.peer_id)
        self.n = len(settings.seats)
        self.game: Game[Any, Any, Any, Any] = get_game(settings.game)
        self.options = self.game.options_from_json(settings.options)
        self.seat_of = {pid: seat for seat, pid in enumerate(peer_ids)}
        self.tracker = ChainTracker(settings.table, settings.seats, self.seat_of)
        self.private_in = {
            seat: ChainTracker(private_channel(settings.table, pid, identity.peer_id), [settings.seats[seat]])
            for seat, pid in enumerate(peer_ids)
            if seat != self.me
        }
        self.private_out = {  # seat -> (next seq, prev digest)
            seat: (0, ZERO_DIGEST) for seat in range(self.n) if seat != self.me
        }
        self.my_seq = 0
        self.my_prev = ZERO_DIGEST
        self.inbox: list[deque[SignedMessage]] = [deque() for _ in range(self.n)]
        self.private_inbox: list[deque[SignedMessage]] = [deque() for _ in range(self.n)]
        self.held: dict[tuple[str, int], SignedMessage] = {}  # (author or private channel, seq)
        self.full_state: Any = self.game.new_game(self.n, self.options)
        self.state: Any = self.full_state
        self.round_index = 0
        self.round: _Round | None = None
        self.stage: Literal["seed", "deal", "play", "audit", "over", "ended"] = "seed"
        self.since = now
        self.now = now
        self.disconnected: dict[int, float] = {}
        self.blame: Blamed | None = None
        self.rounds: list[RoundRecord] = []
        self.seed_commits: dict[int, Commitment] = {}
        self.seed_reveals: dict[int, bytes] = {}
        self.my_seed: Opening | None = None
        self._card_tables: dict[tuple[str, ...], CardTable] = {}
        self.hidden_openings: dict[int, Opening] = {}  # step -> this seat's opening of a hidden choice
        self._out: list[Output] = []
        self.handled = [0] * self.n  # public messages handled so far, per author (= next seq to handle)
        self.usage: dict[tuple[int, int], list[int]] = {}  # (author, round) -> [messages, bytes] (I6)
        self.held_bytes: dict[str, int] = {}
        self.last_input_kept = False  # after `receive`: the input was kept (the runner journals only those)
        # I4: one clock per owed step, (seat, step key) -> when it became due; only the owner's
        # progress on that step (which changes the key) ends it.
        self._due: dict[tuple[int, str], float] = {}
        # I2: signed timeout claims, (accused, step key) -> claimant -> message; when first seen here.
        self.claims: dict[tuple[int, str], dict[int, SignedMessage]] = {}
        self.claim_seen: dict[tuple[int, str], float] = {}
        self.my_claim: tuple[int, str] | None = None
        self.pending_blames: dict[int, tuple[SignedMessage, float]] = {}  # blamer -> (blame, since)
        self.stopped: Stopped | None = None
        self.network_lost_since: float | None = None
        self._current: SignedMessage | None = None  # the public message being handled

    # --- public API ------------------------------------------------------------------------

    def start(self, now: float) -> list[Output]:
        """Open the game: commit to this seat's share of the first dealer's seed (P-3.2)."""
        self.now = self.since = now
        value = self.entropy(32)
        commitment, opening = commit(SEED_TAG, self.settings.table, 0, self.me, value, self.entropy(32))
        self.my_seed = opening
        self._publish("seed.commit", {"digest": commitment.hex()})
        return self.drain()

    def receive(self, sender: int | None, data: bytes, now: float) -> list[Output]:
        """Bytes that arrived on the link from seat `sender` (None: not known). Never raises (I3).
        Afterwards `last_input_kept` says whether the input was kept (chained or held): the runner
        journals exactly those inputs, so a refused or duplicate input never reaches the disk (I6)."""
        self.now = now
        self.last_input_kept = False
        if self.stage == "ended":
            return self.drain()
        try:
            msg = SignedMessage.from_wire(data)
        except ProtocolError as exc:
            self._out.append(Refused(sender, exc.rule, f"unreadable message: {exc.message}"))
            return self.drain()
        try:
            if msg.kind.startswith("p."):
                self._accept_private(sender, msg)
            else:
                self._accept_public(sender, msg)
            self._pump()
        except EquivocationDetected as exc:
            self._blame(exc.seat, exc.rule, exc.message, (exc.proof.to_json(),))
        except CheatDetected as exc:
            self._blame(exc.seat, exc.rule, exc.message, (msg.to_json(),))
        except ProtocolError as exc:
            self._out.append(Refused(sender, exc.rule, exc.message))
        except Exception as exc:  # I3: a bug must not turn one input into a crash loop
            self._out.append(Refused(sender, "P-1.3", f"input could not be handled (internal error): {exc!r}"))
        self._touch_clocks()
        return self.drain()

    def decide(self, move: Any, now: float) -> list[Output]:
        """The local player's move; IllegalMove (nothing sent) if it is not one of `decision()`."""
        self.now = now
        if move not in self.decision():
            raise IllegalMove("P-5.1", "that move is not open to you now")
        rd = self.round
        assert rd is not None
        kind = self.game.expected(self.state).kind
        move_json = self.game.move_to_json(move)
        if self.game.hidden_choice(kind) is not None:
            value = self._card_reference(move_json[kind])
            commitment, opening = commit(
                CHOICE_TAG, self.settings.table, rd.index, self.me, canonical(value), self.entropy(32)
            )
            rd.my_choice = (move, opening)
            self.hidden_openings[rd.step] = opening
            self._publish("commit", {"step": rd.step, "state": self.state_hash(), "digest": commitment.hex()})
        else:
            wire = dict(move_json)
            for name in self.game.hand_card_fields():
                if name in wire and wire[name] is not None:
                    wire[name] = self._wire_card(wire[name])
            self._publish("move", {"step": rd.step, "state": self.state_hash(), "move": wire})
        self._pump_safely()
        self._touch_clocks()
        return self.drain()

    def tick(self, now: float) -> list[Output]:
        """Time passes. A step withheld past its limit is claimed, signed, against the seat that owes
        it (P-5.3); that seat is convicted only when every other seat has claimed it (I2). Never raises."""
        self.now = now
        try:
            self._tick()
        except Exception as exc:  # I3
            self._out.append(Refused(None, "P-1.3", f"time could not be handled (internal error): {exc!r}"))
        self._touch_clocks()
        return self.drain()

    def _tick(self) -> None:
        if self.stage in ("ended", "over"):
            return
        others = [s for s in range(self.n) if s != self.me]
        if others and all(s in self.disconnected for s in others):
            if self.network_lost_since is None:  # I4: this laptop lost the network; nobody is blamed
                self.network_lost_since = self.now
                self._out.append(NetworkLost(self.now))
            return
        self.network_lost_since = None
        self._judge_claims()
        self._judge_pending_blames()
        if self.stage == "ended" or self.my_claim is not None:
            return
        self._touch_clocks()
        waiting = self.waiting()
        if waiting is None:
            return
        key = self._step_key(waiting.what)
        limit = self.settings.step_timeout if waiting.automatic else self.settings.turn_timeout
        for seat in waiting.seats:
            if seat == self.me or seat in self.pending_blames or any(seat in by for by in self.claims.values()):
                continue  # a seat that published a blame or a claim waits for its outcome: never blamed for it (I1)
            gone = self.disconnected.get(seat)
            if gone is not None:  # time away counts only against the reconnect limit (I4)
                if self.now - gone > self.settings.reconnect_timeout:
                    self._claim(seat, key, f"come back in time to {waiting.what}")
                    return
                continue
            due = self._due.get((seat, key), self.now)
            if limit is not None and self.now - due > limit:
                self._claim(seat, key, waiting.what)
                return

    def set_connected(self, seat: int, connected: bool, now: float) -> None:
        """The runner reports a seat's link going down or coming back. A seat that comes back gets a
        fresh limit for whatever step it owes (I4)."""
        if connected:
            self.disconnected.pop(seat, None)
            for key in self._due:
                if key[0] == seat:
                    self._due[key] = now
        else:
            self.disconnected.setdefault(seat, now)

    def resumed(self, now: float) -> list[Output]:
        """The runner replayed this seat's journal and is live again: time spent down is nobody's
        fault, so every clock restarts now (I4) and every link counts as up until the runner says
        otherwise. Call it once after the replay, before the first live `tick`."""
        self.now = now
        for key in self._due:
            self._due[key] = now
        for claim in self.claim_seen:
            self.claim_seen[claim] = now
        self.pending_blames = {seat: (msg, now) for seat, (msg, _) in self.pending_blames.items()}
        self.disconnected.clear()
        self.network_lost_since = None
        return self.drain()

    # --- clocks and timeout claims (I2, I4, P-5.3) ----------------------------------------------

    def _step_key(self, what: str) -> str:
        """The owed step, named from public state only, so every honest seat names it alike."""
        rd = self.round
        if rd is None:
            return f"{self.round_index}/{self.stage}/{len(self.seed_commits)}/{what}"
        return f"{rd.index}/{self.stage}/{rd.step}/{len(rd.shuffles)}/{len(rd.locks)}/{what}"

    def _touch_clocks(self) -> None:
        """Start a clock for each step that became due; drop the clocks of steps no longer owed."""
        waiting = self.waiting() if self.stage not in ("ended", "over") else None
        if waiting is None:
            self._due.clear()
            return
        key = self._step_key(waiting.what)
        live = {(seat, key) for seat in waiting.seats}
        for owed in live:
            self._due.setdefault(owed, self.now)
        if len(self._due) != len(live):
            for owed in [k for k in self._due if k not in live]:
                del self._due[owed]

    def _claim(self, seat: int, key: str, what: str) -> None:
        """This seat's clock for `seat`'s step ran out: say so, signed, and wait for the others'."""
        self.my_claim = (seat, key)
        self._publish("timeout", {"seat": seat, "step": key, "what": what[:MAX_TEXT]})
        self._pump_safely()

    def _on_timeout(self, seat: int, msg: SignedMessage) -> bool:
        accused = msg.body.get("seat")
        key = msg.body.get("step")
        if not _is_seat(accused, self.n) or accused == seat or not isinstance(key, str) or len(key) > MAX_TEXT:
            raise ProtocolError("P-5.3", f"seat {seat} sent a timeout claim of the wrong shape: ignored")
        claim = (int(accused), key)  # type: ignore[call-overload]
        self.claims.setdefault(claim, {})[seat] = msg
        self.claim_seen.setdefault(claim, self.now)
        self._judge_claims()
        return True

    def _judge_claims(self) -> None:
        """I2: convict when every other seat claimed the same step of the same seat; otherwise stop
        with nobody convicted once the claims have had time to come in."""
        if self.stage == "ended":
            return
        for (accused, _), by in self.claims.items():
            if all(s in by for s in range(self.n) if s != accused):
                what = str(by[min(by)].body.get("what"))[:MAX_TEXT]
                why = f"every other seat waited past the limit for seat {accused} to {what}"
                self._blame(accused, "P-5.3", why, tuple(by[s].to_json() for s in sorted(by)))
                return
        limit = max(self.settings.step_timeout, self.settings.turn_timeout or 0.0)
        for claim, since in self.claim_seen.items():
            if self.now - since > 2 * limit and claim in self.claims:
                accused, _ = claim
                by = self.claims[claim]
                who = ", ".join(str(s) for s in sorted(by))
                why = (
                    f"seat(s) {who} say seat {accused} withheld a step; the other seats do not: "
                    "the table could not agree"
                )
                self._stop("P-5.3", why, tuple(m.to_json() for m in by.values()))
                return

    def _stop(self, rule: str, message: str, evidence: tuple[JSONObject, ...]) -> None:
        """I2: the game stops with nobody convicted; every seat is told, with the claims shown."""
        if self.stage == "ended":
            return
        self.stopped = Stopped(rule, message, evidence)
        self._out.append(self.stopped)
        with contextlib.suppress(ProtocolError):
            self._publish("stop", {"rule": rule, "message": message, "evidence": list(evidence)})
        self.stage = "ended"

    def _on_stop(self, seat: int, msg: SignedMessage) -> bool:
        message = str(msg.body.get("message"))[:MAX_TEXT]
        self._stop("P-5.3", f"seat {seat} stopped the game: {message}", (msg.to_json(),))
        return True

    def decision(self) -> tuple[Any, ...]:
        """The moves the local player may make now (empty when nothing is asked of them)."""
        rd = self.round
        if self.stage != "play" or rd is None or rd.aborting:
            return ()
        expected = self.game.expected(self.state)
        if expected.phase != "move" or self.me not in expected.seats:
            return ()
        if self.game.hidden_choice(expected.kind) is not None and (self.me in rd.phase_commits or rd.my_choice):
            return ()
        return tuple(self.game.legal_moves(self.state, self.me))

    def view(self) -> Any:
        """This seat's engine state (what the local player may know)."""
        return self.state

    def state_hash(self) -> str:
        """SHA-256 of the canonical public state (P-2.2)."""
        return sha256_hex(canonical(self.game.public_state(self.state)))

    def record(self) -> GameRecord:
        """The game record of every confirmed round so far."""
        return GameRecord(
            self.game.id, self.settings.names, self.game.options_to_json(self.options), tuple(self.rounds)
        )

    def messages(self) -> list[bytes]:
        """Every public message accepted so far, in each author's order (for a peer catching up)."""
        out: list[bytes] = []
        for public in self.settings.seats:
            out.extend(m.to_wire() for m in self.tracker.messages(public.peer_id))
        return out

    def waiting(self) -> Waiting | None:
        rd = self.round
        pending: list[int]
        if self.stage == "seed":
            if len(self.seed_commits) < self.n:
                pending = [s for s in range(self.n) if s not in self.seed_commits]
            else:
                pending = [s for s in range(self.n) if s not in self.seed_reveals]
            return self._waiting(pending, "open the seed for the first dealer", True)
        if rd is None or self.stage in ("over", "ended"):
            return None
        if rd.aborting or self.stage == "audit":
            pending = [s for s in range(self.n) if s not in rd.secrets]
            return self._waiting(pending, "publish the round's secrets for the audit", True)
        if self.stage == "deal":
            if len(rd.shuffles) < self.n:
                return self._waiting((len(rd.shuffles),), "shuffle the deck", True)
            if len(rd.locks) < self.n:
                return self._waiting((len(rd.locks),), "lock the deck", True)
            pending = [s for s in range(self.n) if s != self.me and (s not in rd.keys_from or s not in rd.opens_from)]
            return self._waiting(pending, "send the keys of the deal", True)
        expected = self.game.expected(self.state)
        if expected.phase == "reveal":
            pending = [s for s in range(self.n) if s not in rd.late_from]
            return self._waiting(pending, "turn the table card", True)
        if rd.peeks_owed:
            trick = min(rd.peeks_owed)
            return self._waiting((rd.peeks_owed[trick],), "show the peeked prediction card", True)
        hidden = self.game.hidden_choice(expected.kind)
        if expected.phase == "move" and hidden is not None:
            if len(rd.phase_commits) < len(expected.seats):
                pending = [s for s in expected.seats if s not in rd.phase_commits]
                return self._waiting(pending, f"choose ({expected.kind})", False)
            pending = [s for s in expected.seats if s not in rd.phase_reveals]
            return self._waiting(pending, "reveal the chosen card", True)
        if expected.phase == "move":
            return self._waiting(expected.seats, expected.kind, False)
        return None

    def _waiting(self, seats: Sequence[int], what: str, automatic: bool) -> Waiting:
        key = self._step_key(what)
        since = min((self._due.get((s, key), self.now) for s in seats), default=self.now)
        return Waiting(tuple(seats), what, automatic, since)

    # --- signing and sending -----------------------------------------------------------------

    def _publish(self, kind: str, body: JSONObject) -> SignedMessage:
        msg = sign_message(self.identity, self.settings.table, self.round_index, self.my_seq, self.my_prev, kind, body)
        self.my_seq += 1
        self.my_prev = msg.digest()
        self.tracker.accept(msg)
        self.inbox[self.me].append(msg)
        self._out.append(Send(None, msg.to_wire()))
        return msg

    def _send_private(self, to: int, kind: str, body: JSONObject) -> None:
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

    # --- accepting messages -------------------------------------------------------------------

    def _check_kind(self, author: int, msg: SignedMessage, table: str, kinds: frozenset[str]) -> None:
        """I6: a kind this protocol does not have is refused before it is chained, forwarded or kept.
        Signed by a seat for this table, it is that seat's fault, and provable to every seat."""
        if msg.kind in kinds:
            return
        if msg.table != table:
            raise ProtocolError("P-1.3", "a message for another table or channel")
        msg.verify(self.settings.seats[author])
        why = f"seat {author} signed a message of a kind this protocol has not: {msg.kind!r}"
        raise CheatDetected("P-1.3", why, author)

    def _count(self, author: int, msg: SignedMessage) -> None:
        """I6: per-author caps by count and bytes per round, before anything is kept."""
        usage = self.usage.setdefault((author, msg.round), [0, 0])
        size = len(msg.signed_bytes())
        if usage[0] >= MAX_ROUND_MESSAGES or usage[1] + size > MAX_ROUND_BYTES:
            raise ProtocolError("P-1.3", f"seat {author} sent more than a round's share of messages: refused")
        usage[0] += 1
        usage[1] += size

    def _accept_public(self, sender: int | None, msg: SignedMessage) -> None:
        author = self.seat_of.get(msg.author)
        if author is None:
            raise ProtocolError("P-1.3", "a message from a key that has no seat at this table")
        if author == self.me:
            self.tracker.accept(msg)  # our own message coming back: a duplicate, or a forgery refused
            return
        self._check_kind(author, msg, self.settings.table, PUBLIC_KINDS)
        try:
            verdict = self.tracker.accept(msg)
        except OutOfOrder:
            self._hold(author, msg, msg.author)
            return
        if verdict is Verdict.DUPLICATE:
            return
        self._count(author, msg)
        self.last_input_kept = True
        self._queue(author, msg, forward=sender == author)
        while (msg.author, self.tracker.next_seq(msg.author)) in self.held:
            later = self._unhold(msg.author, self.tracker.next_seq(msg.author))
            self.tracker.accept(later)
            self._queue(author, later, forward=True)

    def _queue(self, author: int, msg: SignedMessage, forward: bool) -> None:
        self.inbox[author].append(msg)
        if forward:  # gossip: what one seat was told, every seat is told (catches equivocation)
            self._out.append(Send(None, msg.to_wire(), forward=True))

    def _accept_private(self, sender: int | None, msg: SignedMessage) -> None:
        author = self.seat_of.get(msg.author)
        if author is None or author == self.me:
            raise ProtocolError("P-1.3", "a private message from a key that has no seat at this table")
        if msg.body.get("to") != self.me:
            raise ProtocolError("P-1.3", "a private message addressed to another seat")
        tracker = self.private_in[author]
        self._check_kind(author, msg, tracker.table, PRIVATE_KINDS)
        try:
            if tracker.accept(msg) is Verdict.DUPLICATE:
                return
        except OutOfOrder:
            self._hold(author, msg, msg.table)
            return
        self._count(author, msg)
        self.last_input_kept = True
        self.private_inbox[author].append(msg)
        while (msg.table, tracker.next_seq(msg.author)) in self.held:
            later = self._unhold(msg.table, tracker.next_seq(msg.author))
            tracker.accept(later)
            self.private_inbox[author].append(later)

    def _hold(self, author: int, msg: SignedMessage, chain: str) -> None:
        """Keep a message that came before its author's earlier ones (a reordering transport),
        within caps by count and bytes per chain (I6). Its signature is checked first."""
        if (chain, msg.seq) in self.held:
            return
        msg.verify(self.settings.seats[author])
        self._count(author, msg)
        size = len(msg.signed_bytes())
        held = sum(1 for key in self.held if key[0] == chain)
        if held >= MAX_HELD or self.held_bytes.get(chain, 0) + size > MAX_HELD_BYTES:
            raise ProtocolError("P-1.3", f"too many out-of-order messages from seat {author}")
        self.held[(chain, msg.seq)] = msg
        self.held_bytes[chain] = self.held_bytes.get(chain, 0) + size
        self.last_input_kept = True

    def _unhold(self, chain: str, seq: int) -> SignedMessage:
        msg = self.held.pop((chain, seq))
        self.held_bytes[chain] -= len(msg.signed_bytes())
        return msg

    def _handle_private(self, seat: int, msg: SignedMessage) -> bool:
        if msg.round > self.round_index:
            return False
        if msg.round < self.round_index:
            raise _Ignored("P-1.3", f"a private {msg.kind!r} of past round {msg.round}: ignored")
        if msg.kind == "p.keys":
            return self._on_private_keys(seat, msg)
        if msg.kind == "p.peek":
            return self._on_peek(seat, msg)
        raise ProtocolError("P-1.3", f"unknown private message kind {msg.kind!r} from seat {seat}: ignored")

    def _pump_safely(self) -> None:
        try:
            self._pump()
        except EquivocationDetected as exc:
            self._blame(exc.seat, exc.rule, exc.message, (exc.proof.to_json(),))
        except CheatDetected as exc:
            self._blame(exc.seat, exc.rule, exc.message)

    def _pump(self) -> None:
        """Handle queued messages, each author's in order, until none can go further now."""
        progress = True
        while progress and self.stage not in ("ended", "over"):
            progress = False
            for seat, queue, handle in (
                *((s, self.inbox[s], self._handle) for s in range(self.n)),
                *((s, self.private_inbox[s], self._handle_private) for s in range(self.n)),
            ):
                public = handle == self._handle
                while queue and self.stage not in ("ended", "over"):
                    msg = queue[0]
                    try:
                        done = handle(seat, msg)
                    except CheatDetected as exc:
                        self._consumed(queue, public, seat)
                        if isinstance(exc, EquivocationDetected):
                            raise
                        self._blame(exc.seat, exc.rule, exc.message, (msg.to_json(),))
                        return
                    except RuleError as exc:
                        self._consumed(queue, public, seat)
                        self._blame(seat, exc.rule, exc.message, (msg.to_json(),))
                        return
                    except ProtocolError as exc:
                        self._consumed(queue, public, seat)
                        if public and not isinstance(exc, _Ignored):
                            # I3: a signed message in its author's chain that cannot be read is
                            # its author's fault, and every seat sees the same message.
                            why = f"seat {seat}'s {msg.kind!r} message is malformed: {exc.message}"
                            self._blame(seat, exc.rule, why, (msg.to_json(),))
                            return
                        self._out.append(Refused(seat, exc.rule, exc.message))
                        continue
                    if not done:
                        break
                    self._consumed(queue, public, seat)
                    progress = True

    def _consumed(self, queue: deque[SignedMessage], public: bool, seat: int) -> None:
        queue.popleft()
        if public:
            self.handled[seat] += 1

    def _handle(self, seat: int, msg: SignedMessage) -> bool:
        """Apply one message of `seat`; False when the table has not reached its point yet."""
        meta = {"blame": self._on_blame, "timeout": self._on_timeout, "stop": self._on_stop}.get(msg.kind)
        if meta is not None:  # verdicts and claims, whatever the round (I2)
            return meta(seat, msg)
        if self.my_claim is not None:
            return False  # this seat has claimed a timeout: it takes no further step until that is settled
        self._current = msg
        if msg.round > self.round_index:
            return False
        if msg.round < self.round_index:
            if msg.kind == "abort":
                raise _Ignored("P-5.2", f"seat {seat}'s stop for an audit came after the round's audit: ignored")
            stale = f"a {msg.kind!r} message of round {msg.round} in round {self.round_index}"
            raise CheatDetected("P-1.3", stale, seat)
        handler = {
            "seed.commit": self._on_seed_commit,
            "seed.reveal": self._on_seed_reveal,
            "shuffle": self._on_shuffle,
            "lock": self._on_lock,
            "open": self._on_open,
            "move": self._on_move,
            "commit": self._on_commit,
            "reveal": self._on_reveal,
            "secrets": self._on_secrets,
            "abort": self._on_abort,
        }.get(msg.kind)
        if handler is None:  # a newer client's message, perhaps: refused, but nothing is lost
            raise ProtocolError("P-1.3", f"unknown message kind {msg.kind!r} from seat {seat}: ignored")
        return handler(seat, msg)

    # --- seed: the first dealer (P-3.2) ----------------------------------------------------------

    def _on_seed_commit(self, seat: int, msg: SignedMessage) -> bool:
        if self.stage != "seed" or seat in self.seed_commits:
            raise CheatDetected("P-3.2", "a second seed commitment", seat)
        self.seed_commits[seat] = Commitment.from_hex(msg.body.get("digest"))
        if len(self.seed_commits) == self.n and self.my_seed is not None:
            opening = self.my_seed
            self._publish("seed.reveal", {"value": opening.value.hex(), "nonce": opening.nonce.hex()})
        return True

    def _on_seed_reveal(self, seat: int, msg: SignedMessage) -> bool:
        if self.stage != "seed" or len(self.seed_commits) < self.n:
            return False
        opening = _opening(msg.body, seat)
        verify_opening(self.seed_commits[seat], opening, SEED_TAG, self.settings.table, 0, seat)
        self.seed_reveals[seat] = opening.value
        if len(self.seed_reveals) == self.n:
            seed = joint_random([self.seed_reveals[s] for s in range(self.n)])
            self._start_round(draw_below(seed, self.n, "first dealer"))
        return True

    # --- dealing (P-4) ---------------------------------------------------------------------------

    def _start_round(self, dealer: int) -> None:
        layout = self.game.layout(self.full_state, dealer)
        cards = self._card_tables.get(layout.deck)
        if cards is None:
            cards = self._card_tables[layout.deck] = CardTable(self.game.id, layout.deck)
        ctx = DeckContext(self.settings.table, self.round_index, self.n, cards)
        size = len(layout.deck)
        self.round = _Round(
            index=self.round_index,
            dealer=dealer,
            layout_hands=layout.hands,
            table_positions=layout.table,
            late_positions=layout.late_table,
            ctx=ctx,
            my_shuffle=ShuffleSecret(random_scalar(self.entropy), random_permutation(size, self.entropy)),
            my_lock=LockSecret(
                tuple(random_scalar(self.entropy) for _ in range(size)),
                tuple(self.entropy(32) for _ in range(size)),
            ),
        )
        self.stage = "deal"
        if self.me == 0:
            self._my_shuffle()

    def _my_shuffle(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.shuffles[-1].points if rd.shuffles else rd.ctx.cards.points
        self._publish("shuffle", shuffle_pass(rd.ctx, self.me, deck, rd.my_shuffle).to_json())

    def _my_lock(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.locks[-1].points if rd.locks else rd.shuffles[-1].points
        self._publish("lock", lock_pass(rd.ctx, self.me, deck, rd.my_shuffle, rd.my_lock).to_json())

    def _on_shuffle(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if self.stage != "deal" or rd is None or len(rd.shuffles) < seat:
            return False
        if len(rd.shuffles) > seat:
            raise CheatDetected("P-4.2", "a second shuffle pass", seat)
        rd.shuffles.append(ShuffleOutput.from_json(rd.ctx, seat, msg.body))
        if len(rd.shuffles) == self.n:
            if self.me == 0:
                self._my_lock()
        elif len(rd.shuffles) == self.me:
            self._my_shuffle()
        return True

    def _on_lock(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if self.stage != "deal" or rd is None or len(rd.shuffles) < self.n or len(rd.locks) < seat:
            return False
        if len(rd.locks) > seat:
            raise CheatDetected("P-4.2", "a second lock pass", seat)
        rd.locks.append(LockOutput.from_json(rd.ctx, seat, msg.body))
        if len(rd.locks) < self.n:
            if len(rd.locks) == self.me:
                self._my_lock()
        else:
            self._send_deal_keys()
        return True

    def _send_deal_keys(self) -> None:
        """P-4.3: each seat's hand keys privately to it; the table cards' keys to everyone."""
        rd = self.round
        assert rd is not None
        for seat, positions in enumerate(rd.layout_hands):
            if seat == self.me:
                continue
            openings = [key_opening(self.me, rd.my_lock, p).to_json() for p in positions]
            self._send_private(seat, "p.keys", {"round": rd.index, "openings": openings})
        openings = [key_opening(self.me, rd.my_lock, p).to_json() for p in rd.table_positions]
        self._publish("open", {"late": False, "openings": openings})
        self._try_deal()

    def _on_private_keys(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        if seat in rd.keys_from:
            raise _Ignored("P-4.3", f"a second set of hand keys from seat {seat}: ignored")
        for opening in self._check_hand_keys(rd, seat, self.me, msg.body):
            rd.hand_keys.setdefault(opening.position, {})[seat] = opening
        rd.keys_from.add(seat)
        self._try_deal()
        return True

    def _check_hand_keys(self, rd: _Round, sender: int, recipient: int, body: JSONObject) -> list[KeyOpening]:
        """P-4.3: `sender`'s keys for `recipient`'s hand, checked against `sender`'s public lock
        commitments. The recipient runs it on receipt and every other seat on the evidence of a
        blame, so both reach the same answer from the same signed message (I1)."""
        raw = body.get("openings")
        positions = rd.layout_hands[recipient]
        if not isinstance(raw, list) or len(raw) != len(positions):
            raise CheatDetected("P-4.3", f"hand keys must cover the {len(positions)} dealt positions", sender)
        commitments = rd.locks[sender].commitments
        openings = []
        for position, item in zip(positions, raw, strict=True):
            opening = KeyOpening.from_json(rd.ctx, sender, item)
            if opening.position != position:
                raise CheatDetected("P-4.3", f"a key for position {opening.position} instead of {position}", sender)
            check_key_opening(rd.ctx, opening, commitments)
            openings.append(opening)
        return openings

    def _on_open(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        late = msg.body.get("late") is True
        positions = rd.late_positions if late else rd.table_positions
        if late and self.game.expected(self.state).phase != "reveal":
            return False
        seen = rd.late_from if late else rd.opens_from
        if seat in seen:
            raise CheatDetected("P-4.3", "a second opening of the table cards", seat)
        raw = msg.body.get("openings")
        if not isinstance(raw, list) or len(raw) != len(positions):
            raise CheatDetected("P-4.3", f"table keys must cover the {len(positions)} table positions", seat)
        for position, item in zip(positions, raw, strict=True):
            opening = KeyOpening.from_json(rd.ctx, seat, item)
            if opening.position != position:
                raise CheatDetected("P-4.3", f"a key for position {opening.position} instead of {position}", seat)
            check_key_opening(rd.ctx, opening, rd.locks[seat].commitments)
            rd.table_keys.setdefault(position, {})[seat] = opening
        seen.add(seat)
        if late:
            self._try_late_reveal()
        else:
            self._try_deal()
        return True

    def _open(self, position: int, keys: Mapping[int, KeyOpening]) -> str:
        """Open a position; a card that opens to no card (a pass replaced it) stops the round for
        the audit, which names the seat (the fault is certain, its author not yet known)."""
        rd = self.round
        assert rd is not None
        openings = [keys[s] for s in range(self.n)]
        try:
            code = open_position(rd.ctx, position, rd.final_points[position], openings, rd.commitments())
        except CheatDetected as exc:
            if exc.seat is None:  # certain cheating, author unknown: the audit will name it
                self._abort_round("P-4.3", exc.message)
                raise _Aborted() from exc
            raise
        return str(code)

    def _try_deal(self) -> None:
        rd = self.round
        if rd is None or rd.dealt or self.stage != "deal":
            return
        others = {s for s in range(self.n) if s != self.me}
        if not (others <= rd.keys_from and others <= rd.opens_from and self.me in rd.opens_from):
            return
        try:
            for position in rd.layout_hands[self.me]:
                keys = dict(rd.hand_keys[position])
                keys[self.me] = key_opening(self.me, rd.my_lock, position)
                rd.hand_keys[position] = keys
                rd.my_cards[position] = self._open(position, keys)
            for position in rd.table_positions:
                rd.table_cards[position] = self._open(position, rd.table_keys[position])
        except _Aborted:
            return
        cards: list[str | None] = [None] * rd.ctx.size
        for position, code in {**rd.my_cards, **rd.table_cards}.items():
            cards[position] = code
        deal = self.game.deal_from_cards(self.full_state, rd.dealer, cards)
        self.state = self.game.start_round(self.full_state, deal)
        rd.dealt = True
        self.stage = "play"
        hand = tuple(rd.my_cards[p] for p in rd.layout_hands[self.me])
        self._out.append(Dealt(rd.index, hand, tuple(rd.table_cards[p] for p in rd.table_positions)))
        self._after_change()

    def _try_late_reveal(self) -> None:
        rd = self.round
        assert rd is not None
        if len(rd.late_from) < self.n:
            return
        try:
            codes = [self._open(p, rd.table_keys[p]) for p in rd.late_positions]
        except _Aborted:
            return
        for position, code in zip(rd.late_positions, codes, strict=True):
            rd.table_cards[position] = code
        self.state = self.game.reveal(self.state, codes)
        self._after_change()

    # --- play ------------------------------------------------------------------------------------

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
            raise CheatDetected("P-5.1", f"a move for step {step}, which is past (now {rd.step})", seat)
        if self.game.expected(self.state).phase == "reveal":
            # The mover saw the late table card open before moving (S-8.3); this peer has not yet
            # had every seat's key for it. Compared now, the hashes would differ on an honest move.
            return False
        if msg.body.get("state") != self.state_hash():
            raise CheatDetected("P-2.2", f"seat {seat}'s state hash differs from this table's (desync)", seat)
        return None

    def _on_move(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is not None and rd.peeks_owed and seat in rd.peeks_owed.values():
            return False  # S-6.4: the peeked seat's answer comes first
        if (pending := self._check_step(seat, msg)) is not None:
            return pending
        assert rd is not None
        expected = self.game.expected(self.state)
        if expected.phase != "move" or seat not in expected.seats:
            raise CheatDetected("P-5.1", f"seat {seat} moved out of turn", seat)
        if self.game.hidden_choice(expected.kind) is not None:
            raise CheatDetected("P-5.1", f"seat {seat} showed a choice that must be hidden ({expected.kind})", seat)
        wire = msg.body.get("move")
        if not isinstance(wire, dict) or wire.get("seat") != seat:
            raise CheatDetected("P-5.1", "a move must be an object naming its own seat", seat)
        move_json: JSONObject = dict(wire)
        for name in self.game.hand_card_fields():
            if name in move_json:
                move_json[name] = self._read_wire_card(seat, move_json[name])
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
            self._publish("open", {"late": True, "openings": openings})
        self._handle_peeks()
        if expected.phase in ("audit", "deal", "over") and self.stage == "play":
            self.stage = "audit"
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
            raise CheatDetected("P-4.5", why, sender) from exc

    # --- audit (P-5.2) ---------------------------------------------------------------------------

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
            if _STEP_KEY.fullmatch(step) is None:  # ASCII digits only (I3)
                raise CheatDetected("P-5.2", f"an opening for step {step[:20]!r}", seat)
            openings[int(step)] = _opening(item, seat)
        rd.secrets[seat] = (seat_secrets, openings)
        if len(rd.secrets) == self.n:
            self._audit()
        return True

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
        self.round_index += 1
        if self.game.expected(state).phase == "over":
            self.stage = "over"
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

    # --- blame -----------------------------------------------------------------------------------

    def _blame(self, seat: int | None, rule: str, message: str, evidence: tuple[JSONObject, ...] = ()) -> None:
        if self.stage == "ended":
            return
        blame = Blamed(seat, rule, message, evidence)
        self.blame = blame
        self._out.append(blame)
        with contextlib.suppress(ProtocolError):  # the verdict stands even if it cannot be signed
            self._publish("blame", {"seat": seat, "rule": rule, "message": message, "evidence": list(evidence)})
        self.stage = "ended"

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
        items = tuple(item for item in evidence if isinstance(item, dict))
        verdict = self._evidence_verdict(seat, accused, rule, items)
        if self.stage == "ended":  # the evidence led this seat to its own verdict
            return True
        if verdict is None:
            self.pending_blames.setdefault(seat, (msg, self.now))
            return False
        self.pending_blames.pop(seat, None)
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

    def _judge_pending_blames(self) -> None:
        limit = max(self.settings.step_timeout, self.settings.turn_timeout or 0.0)
        for seat, (msg, since) in list(self.pending_blames.items()):
            if self.now - since > 2 * limit:
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
                if set(item) == {"first", "second"}:
                    proof = Equivocation.from_json(item)
                    channels = {self.settings.table} | {
                        private_channel(self.settings.table, accused_id, p.peer_id) for p in self.settings.seats
                    }
                    if proof.first.table in channels:  # the proof must belong to this table (I1)
                        verify_equivocation(proof, self.settings.seats[accused])
                        return True
                    continue
                signed = SignedMessage.from_json(item)
                if signed.author != accused_id:
                    if signed.kind == "timeout" and signed.table == self.settings.table:
                        self._accept_public(None, signed)  # another claimant's claim: judged by `_judge_claims`
                        pending = True
                    continue
                if signed.kind.startswith("p."):
                    if signed.table != private_channel(self.settings.table, accused_id, blamer_id):
                        continue
                    if signed.body.get("to") != blamer:
                        continue
                    signed.verify(self.settings.seats[accused])
                    if signed.kind not in PRIVATE_KINDS:
                        return True
                    found = self._private_fault(accused, blamer, signed)
                    if found is None:
                        pending = True
                    elif found:
                        return True
                    continue
                if signed.table != self.settings.table:
                    continue
                signed.verify(self.settings.seats[accused])
                if signed.kind not in PUBLIC_KINDS:
                    return True
                # A public message: this seat judges it itself on reaching it in the accused's chain.
                with contextlib.suppress(OutOfOrder):
                    self._accept_public(None, signed)
                if self.handled[accused] <= signed.seq:
                    pending = True
            except EquivocationDetected:
                raise
            except ProtocolError:
                continue
        return None if pending else False

    def _private_fault(self, accused: int, recipient: int, signed: SignedMessage) -> bool | None:
        """Re-run the recipient's check of a private message of the accused (I1)."""
        rd = self.round
        if rd is None or len(rd.locks) < self.n or signed.round > rd.index:
            return None
        if signed.round < rd.index:
            return False
        try:
            if signed.kind == "p.keys":
                self._check_hand_keys(rd, accused, recipient, signed.body)
            else:
                trick = signed.body.get("trick")
                if isinstance(trick, int) and trick >= self.game.tricks_ended(self.state) and self.stage == "play":
                    return None
                self._check_peek(rd, accused, recipient, signed.body)
        except CheatDetected as exc:
            return exc.seat == accused
        return False


class _Ignored(ProtocolError):
    """Internal: a well-formed message that has no effect (refused, not blamed)."""


def _is_seat(value: object, n: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n


class _PrivateFault(Exception):
    """Internal: a move refused only by this seat's private knowledge (see `_next_state`)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message


class _Aborted(Exception):
    """Internal: the round is being aborted for an audit; stop the current step."""


def _tricks_ended(state: Any) -> int:
    """How many tricks of the round this peer has seen end (6th Sense: a peek answer may only be
    for one of them); 0 for games without tricks."""
    return len(getattr(getattr(state, "round", None), "trick_winners", ()))


def _opening(body: object, seat: int) -> Opening:
    if not isinstance(body, Mapping):
        raise CheatDetected("P-3.3", "an opening must be an object", seat)
    try:
        value = bytes.fromhex(str(body.get("value")))
        nonce = bytes.fromhex(str(body.get("nonce")))
        return Opening(value, nonce)
    except (ValueError, ProtocolError) as exc:
        raise CheatDetected("P-3.3", f"a malformed opening: {exc}", seat) from exc


def _reference(value: bytes, seat: int) -> JSONObject:
    """What a hidden choice was committed to, checked for shape (I3): {"pos": p} or {"card": c}.
    The committer chose the bytes, so bytes of any other shape are its fault."""
    try:
        reference = decode(value, 1 << 16)
    except ProtocolError as exc:
        why = f"seat {seat} committed to bytes that are not a choice: {exc.message}"
        raise CheatDetected("P-3.3", why, seat) from exc
    if set(reference) == {"pos"} and _is_seat(reference["pos"], 1 << 16):
        return reference
    card = reference.get("card")
    if set(reference) == {"card"} and isinstance(card, str | int) and not isinstance(card, bool):
        return reference
    raise CheatDetected("P-3.3", f"seat {seat} committed to {str(reference)[:80]}, not a position or a card", seat)
