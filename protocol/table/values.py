"""What a table session is configured with and what it hands out (settings, outputs, waiting)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from engine.api import JSONObject
from engine.record import BotSeat, GameRecord
from protocol.identity import PublicIdentity
from protocol.table._state import PRIVATE_DOMAIN


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
    # I2: after a stop, a proof convicts here only within (k + 1) steps of this seat first knowing of a
    # stop, k the other seats' blames naming the same seat (`blame._may_convict`). At least twice the
    # longest delivery, one lost-and-resent TCP segment included.
    convert_step: float = 2.5
    bots: tuple[BotSeat, ...] = ()  # from the signed plan, so every seat writes the same record


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
class Verdict:
    """The verdict, settled at `listen_until` (`blame.settle_verdict`): every seat this seat convicted
    by then (`convicted`, alike at every honest seat, I2) and the one shown, the lowest (`blame`).
    Earlier `Blamed` events were convictions as they came; this one is final."""

    blame: Blamed
    convicted: tuple[int | None, ...]


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


Event = Refused | Blamed | Verdict | Stopped | NetworkLost | Dealt | Moved | PeekResult | RoundAudited | GameOver
Output = Send | Event


@dataclass(frozen=True, slots=True)
class Waiting:
    """What the table waits for now: `seats` owe `what`; `automatic` steps have a time limit."""

    seats: tuple[int, ...]
    what: str
    automatic: bool
    since: float
    # exactly one of `seats` owes it and this seat cannot tell which (Sixes' opening, X-2.2)
    one_of: bool = False


def private_channel(table: str, author: str, recipient: str) -> str:
    """The table id private messages from `author` to `recipient` are signed under: they can never
    be replayed to another seat or mistaken for a public message (P-1.3)."""
    data = PRIVATE_DOMAIN + table.encode() + bytes.fromhex(author) + bytes.fromhex(recipient)
    return hashlib.sha256(data).digest()[:16].hex()
