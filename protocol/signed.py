"""Signed, sequenced, hash-linked messages (P-1.3) and the per-author chain check.

Every message that affects the game is a `SignedMessage`: its author signs the table id, the round,
its own sequence number ``seq`` (0, 1, 2, ... over the whole table), the digest of its own previous
message ``prev`` (64 zeros for ``seq`` 0), a ``kind`` and a JSON ``body``. A message therefore has
exactly one place: it cannot be replayed at another table, in another round or at another position
of its author's chain.

The signature covers ``SIGNED_DOMAIN ‖ canonical(every field but sig)``; `SignedMessage.digest` is
the SHA-256 of those same bytes. The digest deliberately leaves the signature out: Ed25519 lets a
signer make many valid signatures of one content, and two signatures of the same content are the
same statement, not two messages.

`ChainTracker` is a small mutable class: `ChainTracker.accept` is its only mutator and changes
nothing when it refuses a message. Two validly signed messages that put different contents at one
(author, seq), or a message whose ``prev`` is not the digest of the author's message before it, are
an `Equivocation`: a value holding both messages that anyone can check again with
`verify_equivocation`.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from protocol.encoding import (
    JSONObject,
    canonical,
    check_int,
    check_table_id,
    decode,
    h2b,
    plain_copy,
    sha256_hex,
)
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import PEER_ID_HEX, SIGNATURE_BYTES, Identity, PublicIdentity, fingerprint_of

RULE = "P-1.3"
SIGNED_DOMAIN = b"lanplay/signed-message/v1\x00"
ZERO_DIGEST = "0" * 64
MAX_MESSAGE_BYTES = 256 * 1024
FIELDS = ("table", "round", "author", "seq", "prev", "kind", "body", "sig")

_KIND_RE = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
_DIGEST_RE = re.compile(r"[0-9a-f]{64}")


def _check_digest(value: object, what: str) -> str:
    if not isinstance(value, str) or _DIGEST_RE.fullmatch(value) is None:
        raise ProtocolError(RULE, f"{what} must be 64 lowercase hex digits")
    return value


def _content(table: str, round: int, author: str, seq: int, prev: str, kind: str, body: object) -> JSONObject:
    return {
        "table": table,
        "round": round,
        "author": author,
        "seq": seq,
        "prev": prev,
        "kind": kind,
        "body": body,
    }


_FIELD_SET = frozenset(FIELDS)


def _dumps(plain: JSONObject) -> bytes:
    # `canonical` for a value known to be plain JSON (decoded here, or a `plain_copy`): no walk first.
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def _check_author(value: object) -> str:
    if not isinstance(value, str) or len(value) != PEER_ID_HEX or _DIGEST_RE.fullmatch(value) is None:
        raise ProtocolError(RULE, "author must be a peer id (64 lowercase hex digits)")
    return value


def _check_kind(value: object) -> str:
    if not isinstance(value, str) or _KIND_RE.fullmatch(value) is None:
        raise ProtocolError(RULE, f"kind must match {_KIND_RE.pattern}, got {str(value)[:80]!r}")
    return value


def _check_fields(table: object, round: object, author: object, seq: object, prev: object, kind: object) -> None:
    check_table_id(table, RULE)
    check_int(round, "round", RULE)
    _check_author(author)
    check_int(seq, "seq", RULE)
    _check_digest(prev, "prev")
    if seq == 0 and prev != ZERO_DIGEST:
        raise ProtocolError(RULE, "the first message of an author (seq 0) must have prev = 64 zeros")
    _check_kind(kind)


@dataclass(frozen=True, slots=True)
class SignedMessage:
    """One signed message; construction checks every field's type and format (not the signature)."""

    table: str
    round: int
    author: str
    seq: int
    prev: str
    kind: str
    body: JSONObject
    sig: str
    _signed: bytes = field(init=False, repr=False, compare=False)
    _wire: bytes = field(init=False, repr=False, compare=False, default=b"")  # to_wire, made once

    def __post_init__(self) -> None:
        _check_fields(self.table, self.round, self.author, self.seq, self.prev, self.kind)
        if not isinstance(self.body, Mapping):
            raise ProtocolError(RULE, f"body must be a JSON object, got {type(self.body).__name__}")
        try:
            h2b(self.sig, SIGNATURE_BYTES, "sig")
        except ProtocolError as exc:
            raise ProtocolError(RULE, exc.message) from None
        content = canonical(_content(self.table, self.round, self.author, self.seq, self.prev, self.kind, self.body))
        # A private copy of the body keeps the value what was signed even if the caller's dict changes.
        body = plain_copy(self.body)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "_signed", SIGNED_DOMAIN + content)

    def signed_bytes(self) -> bytes:
        """The bytes the signature covers (and the digest hashes)."""
        return self._signed

    def digest(self) -> str:
        """Hex SHA-256 of `signed_bytes`: what the author's next message puts in ``prev``."""
        return sha256_hex(self._signed)

    def __hash__(self) -> int:
        # Only for local sets and dict keys; nothing peers agree on depends on it.
        return hash(self._signed)

    def to_json(self) -> JSONObject:
        out = _content(self.table, self.round, self.author, self.seq, self.prev, self.kind, self.body)
        out["sig"] = self.sig
        return out

    def to_wire(self) -> bytes:
        if not self._wire:
            object.__setattr__(self, "_wire", canonical(self.to_json()))
        return self._wire

    @classmethod
    def _checked(cls, fields: tuple[str, int, str, int, str, str], body: JSONObject, sig: str, signed: bytes,
                 wire: bytes) -> SignedMessage:  # fmt: skip
        # Built from parts already checked and already canonical (a received message whose bytes are
        # its canonical form, or one just signed here): the copies and walks of __post_init__ would
        # only redo that work, and receiving messages is where a table spends most of its time.
        msg: SignedMessage = object.__new__(cls)
        for name, value in zip(FIELDS, (*fields, body, sig), strict=True):
            object.__setattr__(msg, name, value)
        object.__setattr__(msg, "_signed", signed)
        object.__setattr__(msg, "_wire", wire)
        return msg

    @classmethod
    def from_json(cls, obj: object, wire: bytes | None = None) -> SignedMessage:
        """Read a signed message (every field checked, not the signature). ``wire``: the bytes ``obj``
        was just decoded from (`decode`, so it is plain JSON no one else holds); when they are the
        canonical form, as an honest author sends them, the message is built without copying."""
        if wire is not None and isinstance(obj, dict) and obj.keys() == _FIELD_SET:
            fast = cls._from_canonical(obj, wire)
            if fast is not None:
                return fast
        if not isinstance(obj, Mapping):
            raise ProtocolError(RULE, f"a signed message is a JSON object, got {type(obj).__name__}")
        keys = set(obj)
        if keys != set(FIELDS):
            missing = sorted(set(FIELDS) - keys)
            extra = sorted(str(k) for k in keys - set(FIELDS))
            raise ProtocolError(RULE, f"signed message fields wrong: missing {missing}, unexpected {extra}")
        body = obj["body"]
        if not isinstance(body, dict):
            raise ProtocolError(RULE, f"body must be a JSON object, got {type(body).__name__}")
        sig = obj["sig"]
        if not isinstance(sig, str):
            raise ProtocolError(RULE, f"sig must be a hex string, got {type(sig).__name__}")
        return cls(
            table=check_table_id(obj["table"], RULE),
            round=check_int(obj["round"], "round", RULE),
            author=_check_author(obj["author"]),
            seq=check_int(obj["seq"], "seq", RULE),
            prev=_check_digest(obj["prev"], "prev"),
            kind=_check_kind(obj["kind"]),
            body=body,
            sig=sig,
        )

    @classmethod
    def _from_canonical(cls, obj: JSONObject, wire: bytes) -> SignedMessage | None:
        body, sig = obj["body"], obj["sig"]
        if not isinstance(body, dict) or not isinstance(sig, str):
            return None
        fields = (obj["table"], obj["round"], obj["author"], obj["seq"], obj["prev"], obj["kind"])
        table, round, author, seq, prev, kind = fields
        _check_fields(table, round, author, seq, prev, kind)
        try:
            h2b(sig, SIGNATURE_BYTES, "sig")
        except ProtocolError as exc:
            raise ProtocolError(RULE, exc.message) from None
        if _dumps(obj) != wire:
            return None  # not canonical (key order, spacing, escapes): the general path copies and sorts
        content = _dumps(_content(table, round, author, seq, prev, kind, body))  # type: ignore[arg-type]
        return cls._checked(fields, body, sig, SIGNED_DOMAIN + content, wire)  # type: ignore[arg-type]

    @classmethod
    def from_wire(cls, data: bytes, max_size: int = MAX_MESSAGE_BYTES) -> SignedMessage:
        return cls.from_json(decode(data, max_size), data)

    def verify(self, public_key: PublicIdentity) -> None:
        """Check that ``public_key`` is the author's and signed this content; `ProtocolError` if not."""
        if public_key.peer_id != self.author:
            raise ProtocolError(
                RULE, f"message author {fingerprint_of(self.author)} is not the key {public_key.fingerprint}"
            )
        public_key.verify(bytes.fromhex(self.sig), self._signed, RULE)


def sign_message(
    identity: Identity, table: str, round: int, seq: int, prev: str, kind: str, body: Mapping[str, object]
) -> SignedMessage:
    """Sign a message as ``identity``: the author is its peer id."""
    author = identity.peer_id
    _check_fields(table, round, author, seq, prev, kind)
    plain = plain_copy(dict(body))  # a private copy: the value stays what was signed
    signed = SIGNED_DOMAIN + _dumps(_content(table, round, author, seq, prev, kind, plain))
    sig = identity.sign(signed).hex()
    return SignedMessage._checked((table, round, author, seq, prev, kind), plain, sig, signed, b"")


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Proof that an author signed two conflicting messages: both at the same ``seq`` with different
    contents, or ``second`` right after ``first`` in its chain but not linked to it by ``prev``."""

    first: SignedMessage
    second: SignedMessage

    def to_json(self) -> JSONObject:
        return {"first": self.first.to_json(), "second": self.second.to_json()}

    @classmethod
    def from_json(cls, obj: object) -> Equivocation:
        if not isinstance(obj, Mapping) or set(obj) != {"first", "second"}:
            raise ProtocolError(RULE, "an equivocation proof is an object with exactly first and second")
        return cls(SignedMessage.from_json(obj["first"]), SignedMessage.from_json(obj["second"]))


def verify_equivocation(proof: Equivocation, public_key: PublicIdentity) -> None:
    """Check a proof against the accused author's key; `ProtocolError` (P-1.3) if it proves nothing."""
    first, second = proof.first, proof.second
    first.verify(public_key)
    second.verify(public_key)
    if first.table != second.table:
        raise ProtocolError(RULE, "not an equivocation: the messages belong to different tables")
    if first.seq == second.seq:
        if first.digest() == second.digest():
            raise ProtocolError(RULE, "not an equivocation: both messages have the same content")
        return
    if second.seq == first.seq + 1:
        if second.prev == first.digest():
            raise ProtocolError(RULE, "not an equivocation: the second message links to the first")
        return
    raise ProtocolError(RULE, "not an equivocation: the messages are neither at one seq nor consecutive")


class Verdict(enum.Enum):
    """What `ChainTracker.accept` made of a message it did not refuse."""

    NEW = "new"  # the author's next message: now part of its chain
    DUPLICATE = "duplicate"  # exactly a message already accepted: harmless, ignore it


class OutOfOrder(ProtocolError):
    """A message that is not its author's next one (a gap): not proof of anything, the transport may
    hold it back until the messages before it arrive."""

    def __init__(self, author: str, seq: int, expected: int) -> None:
        super().__init__(
            RULE,
            f"message seq {seq} from {fingerprint_of(author)} arrived before seq {expected} (out of order)",
        )
        self.author = author
        self.seq = seq
        self.expected = expected


class EquivocationDetected(CheatDetected):
    """An author's signed messages conflict; ``proof`` shows it to anyone."""

    def __init__(self, message: str, seat: int | None, proof: Equivocation) -> None:
        super().__init__(RULE, message, seat)
        self.proof = proof


class ChainTracker:
    """Every known author's accepted chain at one table.

    Mutable, but only through `accept`, which checks everything before changing anything: a refused
    message leaves the tracker as it was. ``seats`` (peer id -> seat), when known, lets cheating
    reports name the seat."""

    def __init__(self, table: str, authors: Iterable[PublicIdentity], seats: Mapping[str, int] | None = None) -> None:
        self.table = check_table_id(table, RULE)
        self._keys: dict[str, PublicIdentity] = {}
        self._chains: dict[str, list[SignedMessage]] = {}
        self._seats: dict[str, int] = dict(seats or {})
        for public in authors:
            self.add_author(public)

    def add_author(self, public: PublicIdentity, seat: int | None = None) -> None:
        """Let ``public`` write to this table (a no-op for an author already known)."""
        self._keys.setdefault(public.peer_id, public)
        self._chains.setdefault(public.peer_id, [])
        if seat is not None:
            self._seats[public.peer_id] = seat

    def set_seats(self, seats: Mapping[str, int]) -> None:
        """Record who sits where once seats are drawn."""
        self._seats.update(seats)

    def _chain(self, author: str) -> list[SignedMessage]:
        if author not in self._chains:
            raise ProtocolError(RULE, f"unknown author {fingerprint_of(author)}")
        return self._chains[author]

    def next_seq(self, author: str) -> int:
        return len(self._chain(author))

    def head(self, author: str) -> str:
        """The ``prev`` the author's next message must carry."""
        chain = self._chain(author)
        return chain[-1].digest() if chain else ZERO_DIGEST

    def at(self, author: str, seq: int) -> SignedMessage | None:
        """The message at `seq` of `author`'s chain, if this tracker has come that far."""
        chain = self._chains.get(author, [])
        return chain[seq] if 0 <= seq < len(chain) else None

    def messages(self, author: str) -> tuple[SignedMessage, ...]:
        return tuple(self._chain(author))

    def holds(self, msg: SignedMessage) -> bool:
        """This content (whatever its signature bytes) is in its author's accepted chain here: it was
        verified on the way in, so it is the author's."""
        chain = self._chains.get(msg.author)
        return chain is not None and msg.seq < len(chain) and chain[msg.seq].digest() == msg.digest()

    def accept(self, msg: SignedMessage) -> Verdict:
        """Take one message. Returns `Verdict.NEW` or `Verdict.DUPLICATE`; raises `ProtocolError`
        (wrong table, unknown author, bad signature), `OutOfOrder` (a gap) or `EquivocationDetected`."""
        if msg.table != self.table:
            raise ProtocolError(RULE, f"message for table {msg.table[:16]}... is not for this table")
        chain = self._chain(msg.author)
        if self.holds(msg):  # the very content this tracker verified once: no second signature check
            return Verdict.DUPLICATE
        msg.verify(self._keys[msg.author])
        seat = self._seats.get(msg.author)
        if msg.seq < len(chain):
            seen = chain[msg.seq]
            raise EquivocationDetected(
                f"{fingerprint_of(msg.author)} signed two different messages at seq {msg.seq}",
                seat,
                Equivocation(seen, msg),
            )
        if msg.seq > len(chain):
            raise OutOfOrder(msg.author, msg.seq, len(chain))
        if chain and msg.prev != chain[-1].digest():
            raise EquivocationDetected(
                f"{fingerprint_of(msg.author)}'s message seq {msg.seq} does not link to its seq {msg.seq - 1}",
                seat,
                Equivocation(chain[-1], msg),
            )
        chain.append(msg)
        return Verdict.NEW
