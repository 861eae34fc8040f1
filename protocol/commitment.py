"""Hash commitments (P-3) and jointly random values (P-3.2).

A commitment to ``value`` by ``seat`` is

    c = SHA-256( lp(tag) ‖ lp(table) ‖ u64(round) ‖ u32(seat) ‖ lp(value) ‖ nonce )

where ``lp(x)`` is a 4-byte big-endian length followed by ``x`` (strings as UTF-8), ``u64``/``u32``
are big-endian fixed-width integers and ``nonce`` is exactly 32 fresh bytes from `secrets`. Every
field has a fixed width or a length prefix, so no two different field lists give the same input,
and the tag, table, round and seat bind a commitment to its one use: it cannot be replayed as
another seat's, another round's, or as a commitment to another kind of thing.

A jointly random value (first dealer, seat order) is: every seat commits to a random value, all
open, and the result is `joint_random` of the openings in seat order: nobody fixes it alone so
long as one seat's value is random and was committed before anyone opened.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from protocol.encoding import check_int, check_table_id, h2b
from protocol.errors import CheatDetected, ProtocolError

RULE = "P-3.1"
RULE_OPEN = "P-3.3"
NONCE_BYTES = 32
DIGEST_BYTES = 32
MAX_VALUE_BYTES = 2**32 - 1
JOINT_DOMAIN = b"lanplay/joint-random/v1\x00"
DRAW_DOMAIN = b"lanplay/draw/v1\x00"


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _utf8(text: object, what: str, rule: str) -> bytes:
    if not isinstance(text, str):
        raise ProtocolError(rule, f"{what} must be a string, got {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(rule, f"{what} is not valid Unicode") from None


@dataclass(frozen=True, slots=True)
class Commitment:
    """The published half: 32 digest bytes."""

    digest: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.digest, bytes) or len(self.digest) != DIGEST_BYTES:
            raise ProtocolError(RULE, f"a commitment is {DIGEST_BYTES} bytes")

    def hex(self) -> str:
        return self.digest.hex()

    @classmethod
    def from_hex(cls, text: object) -> Commitment:
        return cls(h2b(text, DIGEST_BYTES, "commitment"))


@dataclass(frozen=True, slots=True)
class Opening:
    """The secret half, revealed later: the value and the nonce."""

    value: bytes
    nonce: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.value, bytes) or len(self.value) > MAX_VALUE_BYTES:
            raise ProtocolError(RULE, "a committed value is bytes of at most 2**32 - 1")
        if not isinstance(self.nonce, bytes) or len(self.nonce) != NONCE_BYTES:
            raise ProtocolError(RULE, f"a commitment nonce is {NONCE_BYTES} bytes")


def commitment_digest(tag: str, table: str, round: int, seat: int, value: bytes, nonce: bytes) -> bytes:
    """The 32-byte digest c of P-3.1 (see the module docstring for the exact layout)."""
    tag_bytes = _utf8(tag, "commitment tag", RULE)
    if not tag_bytes:
        raise ProtocolError(RULE, "a commitment tag must not be empty")
    check_table_id(table, RULE)
    check_int(round, "round", RULE, 0, 2**64 - 1)
    check_int(seat, "seat", RULE, 0, 2**32 - 1)
    opening = Opening(value, nonce)
    data = b"".join(
        (
            _lp(tag_bytes),
            _lp(table.encode("ascii")),
            struct.pack(">QI", round, seat),
            _lp(opening.value),
            opening.nonce,
        )
    )
    return hashlib.sha256(data).digest()


def commit(
    tag: str, table: str, round: int, seat: int, value: bytes, nonce: bytes | None = None
) -> tuple[Commitment, Opening]:
    """Commit to ``value``; ``nonce`` is drawn fresh from `secrets` unless given (tests, audits)."""
    if nonce is None:
        nonce = secrets.token_bytes(NONCE_BYTES)
    return Commitment(commitment_digest(tag, table, round, seat, value, nonce)), Opening(value, nonce)


def verify_opening(commitment: Commitment, opening: Opening, tag: str, table: str, round: int, seat: int) -> None:
    """Check that ``opening`` opens ``seat``'s ``commitment``; `CheatDetected` (P-3.3) if it does not."""
    expected = commitment_digest(tag, table, round, seat, opening.value, opening.nonce)
    if not hmac.compare_digest(expected, commitment.digest):
        raise CheatDetected(RULE_OPEN, f"opening does not match the {tag!r} commitment", seat)


def joint_random(reveals_in_seat_order: Sequence[bytes]) -> bytes:
    """The jointly random 32 bytes of P-3.2: SHA-256 over every seat's revealed value in seat order."""
    if not reveals_in_seat_order:
        raise ProtocolError("P-3.2", "a joint random value needs at least one reveal")
    parts = [JOINT_DOMAIN, struct.pack(">I", len(reveals_in_seat_order))]
    for i, reveal in enumerate(reveals_in_seat_order):
        if not isinstance(reveal, bytes):
            raise ProtocolError("P-3.2", f"reveal {i} must be bytes, got {type(reveal).__name__}")
        parts.append(_lp(reveal))
    return hashlib.sha256(b"".join(parts)).digest()


def draw_below(seed: bytes, n: int, label: str = "") -> int:
    """A number in ``range(n)`` drawn from ``seed``; distinct ``label`` values give independent draws.

    64 bytes of SHA-512 reduced mod n: the bias is below n / 2**512, far below anything observable."""
    if not isinstance(seed, bytes):
        raise ProtocolError("P-3.2", f"seed must be bytes, got {type(seed).__name__}")
    check_int(n, "n", "P-3.2", 1, 2**64)
    data = DRAW_DOMAIN + _lp(_utf8(label, "label", "P-3.2")) + _lp(seed)
    return int.from_bytes(hashlib.sha512(data).digest(), "big") % n
