"""Per-round bookkeeping of a table session, and the small readers every phase shares."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.api import JSONObject
from protocol.commitment import Commitment, Opening
from protocol.deck import (
    DeckContext,
    KeyCommitments,
    KeyOpening,
    LockOutput,
    LockSecret,
    SeatSecrets,
    ShuffleOutput,
    ShuffleSecret,
    key_commitments,
)
from protocol.encoding import canonical, decode
from protocol.errors import CheatDetected, ProtocolError
from protocol.signed import SignedMessage


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
    shuffle_digests: list[str] = field(default_factory=list)  # the signed pass each entry of `shuffles` came in
    lock_digests: list[str] = field(default_factory=list)
    my_shuffle_out: ShuffleOutput | None = None  # our own passes, kept as made: no need to check them again
    my_lock_out: LockOutput | None = None
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
    deal_failed: bool = False  # a card opened to no card: the round waits for its audit (`deal._try_deal`)
    step: int = 0
    step_hashes: dict[int, str] = field(default_factory=dict)  # step -> the state hash a move for it was built on here
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
        """Every seat's key base and lock factors, which its dealt keys are checked against (P-4.3)."""
        return [key_commitments(shuffle, lock) for shuffle, lock in zip(self.shuffles, self.locks, strict=True)]


# I1: the body field of a pass, and of the messages built on the deal, naming the digest of the
# signed message they were built on ("" for the first shuffle, which starts from the card table).
BUILT_ON = "input"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def built_on(body: Mapping[str, object], seat: int, what: str, first: bool = False) -> str:
    """The digest a message of `seat` names as built on; of the wrong shape it is the author's
    fault, seen alike by every seat (the first shuffle must name "", every other message a digest)."""
    value = body.get(BUILT_ON)
    if not isinstance(value, str) or (value != "" if first else not is_digest(value)):
        want = '""' if first else "the digest of the message it was built on"
        raise CheatDetected("P-1.3", f"a {what} must name in {BUILT_ON!r} {want}", seat)
    return value


def is_digest(value: str) -> bool:
    return _DIGEST.fullmatch(value) is not None


def without_built_on(body: Mapping[str, object]) -> dict[str, object]:
    return {key: value for key, value in body.items() if key != BUILT_ON}


class _Ignored(ProtocolError):
    """Internal: a well-formed message that has no effect (refused, not blamed)."""


class NotYet(ProtocolError):
    """Refused here for now, not for what it is: a message more than one round ahead of this seat,
    or one the hold has no room for. Quoted in a blame, it makes the blame wait, not fail (I2): the
    blamer may be a round ahead, and the hold differs from seat to seat (red team 5)."""


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


REFERENCE_FIELDS = frozenset({"table", "author", "seq", "digest"})


def evidence_references(item: JSONObject) -> tuple[JSONObject, ...]:
    """A signed message named by its place in its author's chain and its digest (an equivocation
    proof: both its halves so named); () for an item that is neither. Small whatever their size."""
    halves: tuple[object, ...] = (item["first"], item["second"]) if set(item) == {"first", "second"} else (item,)
    references: list[JSONObject] = []
    for half in halves:
        try:
            signed = SignedMessage.from_json(half)
        except ProtocolError:
            return ()
        place = {"table": signed.table, "author": signed.author, "seq": signed.seq}
        references.append({**place, "digest": signed.digest()})
    return tuple(references)


def fitting_evidence(evidence: tuple[JSONObject, ...], budget: int) -> tuple[JSONObject, ...]:
    """The evidence items, in their order, in at most `budget` bytes: the largest are replaced by
    references (`evidence_references`) first, and left out only if that is not enough. This seat's
    own blame or stop must stay small enough for every peer to read (I3); a reference still tells a
    seat that holds another version at that place to wait for the gossip that brings this one
    (I2: red team 5, a trimmed audit blame otherwise hid the very fork it was about)."""
    slots: list[tuple[JSONObject, ...]] = [(item,) for item in evidence]
    sizes = [len(canonical(item)) + 1 for item in evidence]
    total = sum(sizes)
    for index in sorted(range(len(slots)), key=lambda i: -sizes[i]):
        if total <= budget:
            break
        references = evidence_references(slots[index][0])
        total -= sizes[index]
        slots[index], sizes[index] = references, sum(len(canonical(r)) + 1 for r in references)
        total += sizes[index]
    while total > budget and slots:  # references alone too many: keep those that fit, in order
        total -= sizes.pop()
        slots.pop()
    return tuple(item for slot in slots for item in slot)
