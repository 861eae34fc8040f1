"""The table session's values: its settings, the input events it takes and the outputs it hands out.

All frozen. The session has one entry point, `TableSession.handle(event)`; the journal of a seat is
exactly the stream of these input events (P-5.6).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.api import JSONObject
from engine.record import BotSeat, GameRecord
from protocol.identity import PublicIdentity

DEFAULT_PATIENCE = 120.0  # seconds an owed step is waited for before a seat may stop the round (P-5.5)
NOTE_GRACE = 2.0  # a private step owed to this seat for this long is said in a public `wait` note (P-5.5)


@dataclass(frozen=True, slots=True)
class TableSettings:
    """What the signed plan fixes for every seat alike (P-6.7)."""

    table: str  # hex table id
    game: str
    options: JSONObject
    seats: tuple[PublicIdentity, ...]  # seat order
    names: tuple[str, ...]
    patience: float = DEFAULT_PATIENCE
    turn_timer: float | None = None  # a person's move: waited for without limit unless set
    bots: tuple[BotSeat, ...] = ()
    # A table that goes on from another (P-5.7): that table's confirmed rounds, played on from, and
    # (its table id, the record digest its present seats signed).
    carried: tuple[JSONObject, ...] = ()
    continues: tuple[str, str] | None = None


# -- inputs ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Start:
    now: float


@dataclass(frozen=True, slots=True)
class Received:
    """Bytes from the link of seat `sender` (None: not known)."""

    sender: int | None
    data: bytes
    now: float


@dataclass(frozen=True, slots=True)
class Decided:
    """The local player's move, as the engine writes it in JSON."""

    move: JSONObject
    now: float


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passes. Never makes the session sign anything."""

    now: float


@dataclass(frozen=True, slots=True)
class LinkChanged:
    seat: int
    up: bool
    now: float


@dataclass(frozen=True, slots=True)
class StopFor:
    """Publish a signed stop naming `seat`, which owes step `owed` (to seat `to`): what `due` says."""

    seat: int
    owed: str
    to: int | None
    now: float


@dataclass(frozen=True, slots=True)
class Leave:
    """The local person leaves the table (a signed `leave`, then its secrets, P-5.7)."""

    now: float


@dataclass(frozen=True, slots=True)
class NoteWaiting:
    """Publish a public note of what this seat has received on every private channel (P-5.5)."""

    now: float


@dataclass(frozen=True, slots=True)
class Halt:
    """This seat stops the round, naming no seat (P-5.5's audit stop): it holds a proof, found at the table
    this one goes on from, against a seat sitting here, which "does not sit at that table again" (P-5.4,
    P-5.7: that table is the chain of plans). Convicts nobody here; `reason` says why on every screen."""

    reason: str
    now: float


Input = Start | Received | Decided | Tick | LinkChanged | StopFor | Leave | NoteWaiting | Halt


# -- outputs -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Send:
    """Bytes for seat `to`, or for every other seat when `to` is None."""

    to: int | None
    data: bytes
    forward: bool = False  # another seat's message or a proof passed on (gossip)


@dataclass(frozen=True, slots=True)
class Refused:
    """Input refused with no proof of who is at fault (unreadable, forged, unknown seat)."""

    sender: int | None
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Exposed:
    """A proof that `seat` broke `rule` was verified here (P-5.4); `proof` is its full JSON."""

    seat: int
    rule: str
    reason: str
    proof: JSONObject


@dataclass(frozen=True, slots=True)
class Stopped:
    """A round was stopped: by seat `by`, waiting for `seat`'s `owed` step (seat None: a stop for an
    audit), or `by` left (owed "left"). Nobody is convicted by it (P-5.5)."""

    round: int
    by: int
    seat: int | None
    owed: str | None
    reason: str


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
class RoundConfirmed:
    """Every seat's secrets checked and the round audited: it stands in the record (P-5.3)."""

    round: int
    report: JSONObject


@dataclass(frozen=True, slots=True)
class GameOver:
    record: GameRecord
    winners: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Finished:
    """Every present seat signed one record digest (P-5.8): the table is over. `complete`: the game
    reached its end; otherwise it was cut short (a stop, a leave or an exposure) and has no winner."""

    record: JSONObject
    complete: bool


@dataclass(frozen=True, slots=True)
class NetworkLost:
    """Every link of this seat is down: this laptop lost the network. Nobody is blamed."""

    since: float


Event = Refused | Exposed | Stopped | Dealt | Moved | PeekResult | RoundConfirmed | GameOver | Finished | NetworkLost
Output = Send | Event


@dataclass(frozen=True, slots=True)
class Waiting:
    """A step the table waits for: `seat` owes `what` (a message kind; to `private_to` when private),
    owed here since `since`; `automatic` steps are the software's, the others a person's move."""

    seat: int
    what: str
    since: float
    private_to: int | None
    automatic: bool
    linked: bool
