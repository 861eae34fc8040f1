"""The state every phase of a table session shares: set up once, in one place.

`SessionCore.__init__` creates every field of a session; the phase modules (`seed`, `deal`, `play`,
`audit`, `blame`, `clocks`, `inbox`) add behaviour as mixins of `SessionCore`, and
`protocol.table.session.TableSession` puts them together. The stubs below declare, for the type
checker only, the methods one phase calls in another.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.api import Game, JSONObject
from engine.games import get_game
from engine.record import GameRecord, RoundRecord
from protocol.commitment import Commitment, Opening
from protocol.deck import CardTable, Entropy, KeyOpening
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.signed import ZERO_DIGEST, ChainTracker, EquivocationDetected, SignedMessage
from protocol.table._round import _is_seat, _Round
from protocol.table._state import TRANSITIONS, Stage
from protocol.table.values import Blamed, Output, Send, Stopped, TableSettings, private_channel


def _secret_fraction(identity: Identity, table: str) -> float:
    """A number in [0, 1) that only this seat can compute, the same on every replay (an Ed25519
    signature is deterministic; the domain keeps it from being any protocol message's)."""
    digest = hashlib.sha256(identity.sign(b"lanplay/stop-delay/v1\x00" + table.encode())).digest()
    return int.from_bytes(digest[:8], "big") / float(1 << 64)


class SessionCore:
    """Every field of one seat's session (see `protocol.table` for what each phase does)."""

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
            # seats known, so two messages at one seq on the channel convict their author (P-1.3)
            seat: ChainTracker(
                private_channel(settings.table, pid, identity.peer_id), [settings.seats[seat]], {pid: seat}
            )
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
        # The round audited last, kept for one round: a blame's private evidence of it is still checked
        # against its deal here (`blame._private_fault`), as at a seat still in its audit (I2).
        self.last_round: _Round | None = None
        self.stage: Stage = "seed"
        self.now = now
        self.disconnected: dict[int, float] = {}
        self.blame: Blamed | None = None  # the verdict: the first conviction, final the lowest (`settle_verdict`)
        self.convicted: dict[int | None, Blamed] = {}  # every seat this seat convicted (I2: a set, not a race)
        self.halted_by: SignedMessage | None = None  # the blame that stopped this seat's play (`_halt_...`)
        self.blames_unjudged = 0  # other seats' blames chained here, not handled yet (`_halt_for_waiting_blame`)
        self.rounds: list[RoundRecord] = []
        self.seed_commits: dict[int, Commitment] = {}
        self.seed_reveals: dict[int, bytes] = {}
        self.my_seed: Opening | None = None
        self._card_tables: dict[tuple[str, ...], CardTable] = {}
        self.hidden_openings: dict[int, Opening] = {}  # step -> this seat's opening of a hidden choice
        self._out: list[Output] = []
        self.handled = [0] * self.n  # public messages handled so far, per author (= next seq to handle)
        # (author, round, public) -> [messages, bytes] (I6); round -1: meta kinds, one quota a game
        self.usage: dict[tuple[int, int, bool], list[int]] = {}
        # (author, public) -> the latest round charged on that chain: a later message labelled an
        # earlier round is charged to it, so a past label opens no fresh share (I6; red team 5)
        self.chain_rounds: dict[tuple[int, bool], int] = {}
        self.held_bytes: dict[str, int] = {}
        self.held_count: dict[str, int] = {}  # per chain, so the caps cost no scan of `held`
        self.last_input_kept = False  # after `receive`: the input was kept (the runner journals only those)
        # I4: one clock per owed step, (seat, step key) -> when it became due; only the owner's
        # progress on that step (which changes the key) ends it.
        self._due: dict[tuple[int, str], float] = {}
        # When each owed step first became due: fresh limits after a reconnect never add up past
        # first + reconnect limit + step limit, so a seat that keeps flapping its link cannot stall (I4).
        self._first_due: dict[tuple[int, str], float] = {}
        # How much of this laptop's own time with no link (`resumed(now, paused)`) each clock was moved
        # on by: past the reconnect limit, it ends the table here, naming nobody (`away_past_limit`), so
        # peers that make every link blink still meet a bound in wall time (I4).
        self._forgiven: dict[tuple[int, str], float] = {}  # per owed step (its first-due bound)
        self._claim_forgiven: dict[tuple[int | None, str], float] = {}
        self._blame_forgiven: dict[tuple[int, int], float] = {}  # (blamer, seq) of a waiting blame
        self.away_past_limit = False
        # I2: signed timeout claims, (accused, step key) -> claimant -> message; when first seen here.
        # (accused, step key) -> claimer -> claim; accused None: "whichever of several seats owes it"
        self.claims: dict[tuple[int | None, str], dict[int, SignedMessage]] = {}
        self.claim_seen: dict[tuple[int | None, str], float] = {}
        self.my_claim: tuple[int | None, str] | None = None
        self.pending_blames: dict[int, tuple[SignedMessage, float]] = {}  # blamer -> (blame, since)
        # How often this seat took a message in, handled one or published one: what a waiting blame's
        # evidence comes to changes only with it, so the blame is read again only after it moved
        # (`blame._on_blame`; I6, red team 7: every branch of the evidence re-checked per duplicate).
        self.progress = 0
        self.pending_read: dict[int, int] = {}  # blamer -> `progress` when its waiting blame was last read
        # a blame's evidence item ("digest/sig") -> decided once: its fault (private), or False when its
        # signature fails (I6: a waiting blame is read again on every input)
        self.item_verdicts: dict[str, bool] = {}
        self.items_taken: set[str] = set()  # quoted public items offered to the chains once (`blame._take_in`)
        self.stopped: Stopped | None = None
        # I2: where a stopped seat's play had got to; it judges the other seats' messages on from
        # there in silence (`inbox._shadow`), so it reaches every point another honest seat can.
        self.shadow_stage: Stage | None = None
        self.silent = False  # in the shadow: this seat's own game messages are not made (`_publish`)
        # (blamer, seq) -> (its blame that a stopped seat could not yet decide, `progress` when last read)
        self.late_blames: dict[tuple[int, int], tuple[SignedMessage, int]] = {}  # (blamer, seq) -> ...
        # I2: how much past twice the limit this seat's clock stops a table (claims that never all came,
        # a blame never checkable), as a fraction of the limit: secret, so nobody can aim a fault of their
        # own at the instant between two seats' stops (red team 9: a fault of play sent to one seat just
        # before a deadline every seat shares convicted there while the others stopped). Derived from
        # this seat's key, not drawn, so a replay of the journal stops at the very same tick.
        self.stop_delay = _secret_fraction(identity, settings.table)
        # I2, a Dolev-Strong schedule for turning a stop into a verdict (`blame._may_convict`): when this
        # seat first knew of a stop (its own, or another seat's `stop` taken into its chain, whatever
        # came before it there: red team 13 #1), and, per accused seat, which other seats have published
        # a blame naming it.
        self.stop_known_at: float | None = None
        self.own_window = False  # whether a proof nobody else has vouched for yet may convict here
        # The last time a link of this seat went down or came back, or it resumed (journaled events, so
        # a replay agrees): a stop first heard of soon after may have been on its way for long.
        self.steady_since = float("-inf")
        self.blamers: dict[int | None, set[int]] = {}
        self.declined: set[int | None] = set()  # accused whose proof came past its window: told once
        # ... and that proof (the first, one per accused: I6), for when another seat's blame vouches for
        # it within the longer window that gives (red team 14 #1: a declined fault of play was consumed).
        self.declined_proofs: dict[int | None, tuple[str, str, tuple[JSONObject, ...]]] = {}
        self.forks_passed: set[tuple[str, int]] = set()  # (author, seq) whose fork halves were passed on (I6)
        self.network_lost_since: float | None = None
        self._current: SignedMessage | None = None  # the public message being handled
        self._waiting_key = ""  # the step key of the last `waiting()`

    def _note_vouch(self, author: int, blame: SignedMessage) -> None:
        """A signed blame of `author` naming a seat widens this seat's window for that seat
        (`blame._may_convict`), whether or not it is ever chained here (`inbox._vouch`: red team 15 #1,
        a colluder's forked blame vouched at one honest seat and was never chained at the other; red
        team 16 #1, one past a fork, held for good here). A vouch convicts nobody by itself: a verdict
        still needs its proof. Each vouch is passed on as this seat first counts it: Dolev-Strong needs
        every vouch to travel with the value, so that a conviction at the edge of a window it widened
        here reaches every honest seat with the same vouches, within its own wider window (red team 18
        #2 to #4: a vouch held, quoted in a blame's evidence, or over its author's quota widened one
        honest seat's window alone)."""
        accused = blame.body.get("seat")
        if accused is None or _is_seat(accused, self.n):
            assert accused is None or isinstance(accused, int)
            vouching = self.blamers.setdefault(accused, set())
            if author not in vouching:
                vouching.add(author)
                # A fork half is never chained, yet its vouch widens a window: the runner journals the
                # input that brought it, so a replay counts it too (red team 16 #3). At most n per accused.
                self.last_input_kept = True
                self._out.append(Send(None, blame.to_wire(), forward=True))

    def _end_known(self) -> None:
        """The first end this seat knows of (a stop chained, its own conviction, a halt for a blame):
        the windows of `blame._may_convict` open now. A seat that was away then (a link down, just
        back) may hear of it long after the others and gets no window of its own (red team 13 #4 for
        a stop; red team 17 #6 for a conviction reached on a fault the others' gossip brought late)."""
        if self.stop_known_at is None:
            self.stop_known_at = self.now
            away = bool(self.disconnected) or self.now - self.steady_since < self.settings.convert_step
            self.own_window = not away

    def _enter(self, stage: Stage) -> None:
        """Every change of stage goes through the one table of transitions (`_state.TRANSITIONS`)."""
        if (self.stage, stage) not in TRANSITIONS:
            raise AssertionError(f"no transition from {self.stage} to {stage}")
        self.stage = stage

    if TYPE_CHECKING:

        def _abort_round(self, rule: str, reason: str, step: int | None = None) -> None: ...

        def _accept_private(self, sender: int | None, msg: SignedMessage) -> None: ...

        def _accept_public(self, sender: int | None, msg: SignedMessage) -> None: ...

        def _after_change(self) -> None: ...

        def _blame(self, seat: int | None, rule: str, message: str, evidence: tuple[JSONObject, ...] = ()) -> None: ...
        def _convert_declined(self) -> bool: ...

        def settle_verdict(self) -> bool: ...

        def _halt_for_waiting_blame(self) -> None: ...

        def _card_reference(self, card_json: object) -> JSONObject: ...

        def _check_hand_keys(self, rd: _Round, sender: int, recipient: int, body: JSONObject) -> list[KeyOpening]: ...

        def _check_peek(self, rd: _Round, sender: int, recipient: int, body: JSONObject) -> str: ...

        def _judge_late_blame(self, msg: SignedMessage) -> None: ...

        def _reread_late_blames(self) -> bool: ...

        def _blame_equivocation(self, exc: EquivocationDetected) -> None: ...

        def _judge_pending_blames(self) -> None: ...

        def _stop_deadline(self) -> float: ...

        def _note_away(self, since: float, forgiven: float, limit: float) -> None: ...

        def _on_peek(self, seat: int, msg: SignedMessage) -> bool: ...

        def _on_private_keys(self, seat: int, msg: SignedMessage) -> bool: ...

        def _open(self, position: int, keys: Mapping[int, KeyOpening]) -> str: ...

        def _try_deal(self) -> None: ...

        def _publish(self, kind: str, body: JSONObject) -> SignedMessage | None: ...

        def _publish_secrets(self) -> None: ...

        def _publish_quoting(self, kind: str, fields: JSONObject, evidence: tuple[JSONObject, ...]) -> None: ...

        def _pump(self) -> None: ...

        def _pump_safely(self) -> None: ...

        def _send_private(self, to: int, kind: str, body: JSONObject) -> None: ...

        def _start_round(self, dealer: int) -> None: ...

        def _stop(self, rule: str, message: str, evidence: tuple[JSONObject, ...]) -> None: ...

        def _touch_clocks(self) -> None: ...

        def _wire_card(self, card_json: object) -> object: ...

        def drain(self) -> list[Output]: ...

        def record(self) -> GameRecord: ...

        def state_hash(self) -> str: ...

        def _holds_step_message(self, seat: int) -> bool: ...
