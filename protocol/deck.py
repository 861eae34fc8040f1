"""The mental-poker deck (P-4): hands hidden without a dealer, checkable by everyone afterwards.

Commutative encryption on the prime-order group of Ed25519 (order `L`), through libsodium's
low-level functions as PyNaCl binds them. Notation: ``x·P`` multiplies point ``P`` by scalar ``x``.

* Cards (P-4.1): card ``code`` of game ``game_id`` is
  ``M = from_uniform(SHA-512(CARD_DOMAIN ‖ lp(game_id) ‖ lp(canonical JSON of code))[:32])``;
  nobody knows a discrete log of any M. `CardTable` holds the public table and the reverse lookup.
* Shuffle pass (P-4.2), seat by seat in seat order, starting from the card table in card order:
  ``out[i] = s·in[perm[i]]`` with a fresh secret scalar ``s`` and a secret permutation ``perm``.
* Lock pass, seat by seat, starting from the last shuffle output:
  ``out[p] = (k_p·s⁻¹)·in[p]`` with a fresh key ``k_p`` per position, and the seat publishes a
  commitment to each ``k_p`` (`key_commitment`). After every lock pass, position p holds
  ``(Π_j k_{j,p})·M`` for one card M: every ``s`` has cancelled out and each position is locked
  by one key of every seat.
* Dealing position p (P-4.3): every other seat sends its `KeyOpening` for p to the owner privately;
  the owner checks each against its commitment and computes ``(Π_j k_{j,p})⁻¹·C = M``. A public
  opening is the same with every opening published. Both are `open_position`.
* Validation (P-4.4): every point received is a canonical encoding of a point of the prime-order
  subgroup other than the identity, every list has the expected length and no repeated point, every
  scalar is reduced and non-zero. Failures are `CheatDetected` naming the author seat.
* Audit (P-5.2): at round end every seat publishes its `SeatSecrets`; `audit_deck` recomputes every
  pass from its published input, checks it against the published output and commitments, names the
  first seat whose secrets do not reproduce its pass (P-4.2), and returns the deck in position order.

A pass that repeats a card is caught on receipt (repeated point). A pass that drops or replaces a
card with a fresh point cannot be seen in the points; it shows at the latest in the audit, and a
dealt or opened position that maps to no card (`open_position`) is certain cheating whose author the
audit then names.

Cost: one scalar multiplication per card per seat in each pass and one per opened position; all
multiplications go through `scalarmult`, so a benchmark can count them.

Every function here is pure over frozen values; randomness comes from `secrets` only, and every
secret can be passed in instead (tests, audits).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import nacl.bindings as sodium
import nacl.exceptions

from protocol.commitment import NONCE_BYTES, commitment_digest
from protocol.encoding import JSONObject, canonical, check_int, check_table_id
from protocol.errors import CheatDetected, ProtocolError

RULE_CARDS = "P-4.1"
RULE_PASS = "P-4.2"
RULE_DEAL = "P-4.3"
RULE_VALID = "P-4.4"

L = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
IDENTITY_POINT = b"\x01" + bytes(31)
CARD_DOMAIN = b"lanplay/card-point/v1\x00"
KEY_TAG = "lanplay/deck-key/v1"
MAX_CARDS = 1024

CardCode = str | int


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _check_code(code: object) -> CardCode:
    if isinstance(code, bool) or not isinstance(code, str | int):
        raise ProtocolError(RULE_CARDS, f"a card code is a str or an int, got {code!r}")
    return code


# -- scalars and points ---------------------------------------------------------------------------


def scalarmult(scalar: bytes, point: bytes) -> bytes:
    """``scalar·point``: the only multiplication in this module (benchmarks count calls to it).

    Inputs are checked before they get here; libsodium refusing them is a bug, reported typed."""
    try:
        return bytes(sodium.crypto_scalarmult_ed25519_noclamp(scalar, point))
    except nacl.exceptions.CryptoError as exc:
        raise ProtocolError(RULE_VALID, f"scalar multiplication refused its input: {exc}") from None


def _scalar_int(scalar: bytes) -> int:
    return int.from_bytes(scalar, "little")


Entropy = Callable[[int], bytes]


def random_scalar(entropy: Entropy = secrets.token_bytes) -> bytes:
    """A uniformly random non-zero scalar mod L, from `secrets` (or the entropy given: tests)."""
    while True:
        scalar = bytes(sodium.crypto_core_ed25519_scalar_reduce(entropy(64)))
        if _scalar_int(scalar) != 0:
            return scalar


def random_permutation(n: int, entropy: Entropy | None = None) -> tuple[int, ...]:
    """A uniformly random permutation of ``range(n)`` (Fisher–Yates with `secrets`, or with the
    entropy given: 8 bytes per draw, so the bias mod i+1 <= 1024 is below 2**-50)."""
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = secrets.randbelow(i + 1) if entropy is None else int.from_bytes(entropy(8), "big") % (i + 1)
        items[i], items[j] = items[j], items[i]
    return tuple(items)


def check_scalar(scalar: object, seat: int | None, what: str, rule: str = RULE_VALID) -> bytes:
    """A scalar from ``seat``: 32 bytes, reduced mod L, non-zero; `CheatDetected` otherwise."""
    if not isinstance(scalar, bytes) or len(scalar) != SCALAR_BYTES:
        raise CheatDetected(rule, f"{what} is not a {SCALAR_BYTES}-byte scalar", seat)
    value = _scalar_int(scalar)
    if value == 0:
        raise CheatDetected(rule, f"{what} is the zero scalar", seat)
    if value >= L:
        raise CheatDetected(rule, f"{what} is not reduced modulo the group order", seat)
    return scalar


def check_point(point: object, seat: int | None, what: str) -> bytes:
    """A point from ``seat``: a canonical encoding of a prime-order-subgroup point, not the identity."""
    if not isinstance(point, bytes) or len(point) != POINT_BYTES:
        raise CheatDetected(RULE_VALID, f"{what} is not a {POINT_BYTES}-byte point", seat)
    if point == IDENTITY_POINT:
        raise CheatDetected(RULE_VALID, f"{what} is the identity point", seat)
    # libsodium checks canonical encoding, curve membership, prime-order subgroup and small order.
    if not sodium.crypto_core_ed25519_is_valid_point(point):
        raise CheatDetected(RULE_VALID, f"{what} is not a point of the prime-order subgroup", seat)
    return point


def check_points(points: object, n: int, seat: int | None, what: str) -> tuple[bytes, ...]:
    """A list of ``n`` distinct valid points from ``seat`` (P-4.4)."""
    if not isinstance(points, Sequence) or isinstance(points, str | bytes):
        raise CheatDetected(RULE_VALID, f"{what} is not a list of points", seat)
    if len(points) != n:
        raise CheatDetected(RULE_VALID, f"{what} has {len(points)} points, expected {n}", seat)
    seen: dict[bytes, int] = {}
    out = []
    for i, point in enumerate(points):
        checked = check_point(point, seat, f"{what} position {i}")
        if checked in seen:
            raise CheatDetected(RULE_VALID, f"{what} repeats a point at positions {seen[checked]} and {i}", seat)
        seen[checked] = i
        out.append(checked)
    return tuple(out)


def check_permutation(permutation: object, n: int, seat: int | None) -> tuple[int, ...]:
    """A permutation of ``range(n)`` from ``seat``; `CheatDetected` (P-4.2) otherwise."""
    if not isinstance(permutation, Sequence) or isinstance(permutation, str | bytes):
        raise CheatDetected(RULE_PASS, "the permutation is not a list", seat)
    if len(permutation) != n:
        raise CheatDetected(RULE_PASS, f"the permutation has {len(permutation)} entries, expected {n}", seat)
    if any(isinstance(x, bool) or not isinstance(x, int) for x in permutation):
        raise CheatDetected(RULE_PASS, "the permutation holds something other than integers", seat)
    if sorted(permutation) != list(range(n)):
        raise CheatDetected(RULE_PASS, f"the permutation is not a permutation of 0..{n - 1}", seat)
    return tuple(permutation)


def _hex_bytes(value: object, size: int, seat: int | None, what: str, rule: str = RULE_VALID) -> bytes:
    # Peer data arrives as hex in a message signed by ``seat``; a malformed field is that seat's fault.
    if not isinstance(value, str) or len(value) != 2 * size:
        raise CheatDetected(rule, f"{what} is not {2 * size} hex digits", seat)
    try:
        data = bytes.fromhex(value)
    except ValueError:
        raise CheatDetected(rule, f"{what} is not hex", seat) from None
    if data.hex() != value:
        raise CheatDetected(rule, f"{what} is not lowercase hex", seat)
    return data


def _hex_list(value: object, size: int, n: int, seat: int | None, what: str, rule: str = RULE_VALID) -> list[bytes]:
    if not isinstance(value, list):
        raise CheatDetected(rule, f"{what} is not a list", seat)
    if len(value) != n:
        raise CheatDetected(rule, f"{what} has {len(value)} entries, expected {n}", seat)
    return [_hex_bytes(item, size, seat, f"{what}[{i}]", rule) for i, item in enumerate(value)]


def _fields(obj: object, keys: frozenset[str], seat: int | None, what: str) -> Mapping[str, object]:
    if not isinstance(obj, Mapping) or set(obj) != keys:
        raise CheatDetected(RULE_VALID, f"{what} must be an object with exactly {sorted(keys)}", seat)
    return obj


# -- the card table ---------------------------------------------------------------------------------


def card_point(game_id: str, code: CardCode) -> bytes:
    """The public point M of one card (P-4.1)."""
    if not isinstance(game_id, str) or not game_id:
        raise ProtocolError(RULE_CARDS, "a game id is a non-empty string")
    data = CARD_DOMAIN + _lp(game_id.encode("utf-8")) + _lp(canonical(_check_code(code)))
    return bytes(sodium.crypto_core_ed25519_from_uniform(hashlib.sha512(data).digest()[:32]))


def card_points(game_id: str, codes: Sequence[CardCode]) -> tuple[bytes, ...]:
    """The public points of a deck's cards, in the order of ``codes``."""
    return tuple(card_point(game_id, code) for code in codes)


@dataclass(frozen=True, slots=True)
class CardTable:
    """A game's public deck: codes, their points, and the way back from a point to its card."""

    game_id: str
    codes: tuple[CardCode, ...]
    points: tuple[bytes, ...] = field(init=False)
    _index: dict[bytes, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        codes = tuple(_check_code(code) for code in self.codes)
        if not 1 <= len(codes) <= MAX_CARDS:
            raise ProtocolError(RULE_CARDS, f"a deck has 1 to {MAX_CARDS} cards, got {len(codes)}")
        if len({canonical(code) for code in codes}) != len(codes):
            raise ProtocolError(RULE_CARDS, "a deck's card codes must be distinct")
        points = card_points(self.game_id, codes)
        index = {point: i for i, point in enumerate(points)}
        if len(index) != len(points):  # pragma: no cover - a SHA-512 collision
            raise ProtocolError(RULE_CARDS, "two cards map to one point")
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.codes)

    def index_of(self, point: bytes) -> int | None:
        """The card number (index into ``codes``) of a point, or ``None`` for a point of no card."""
        return self._index.get(point)

    def code_of(self, point: bytes) -> CardCode | None:
        i = self._index.get(point)
        return None if i is None else self.codes[i]


@dataclass(frozen=True, slots=True)
class DeckContext:
    """What every pass of one round's deck is bound to: table, round, number of seats, card table."""

    table: str
    round: int
    seats: int
    cards: CardTable

    def __post_init__(self) -> None:
        check_table_id(self.table, RULE_PASS)
        check_int(self.round, "round", RULE_PASS)
        check_int(self.seats, "seats", RULE_PASS, 1, 64)

    @property
    def size(self) -> int:
        return len(self.cards)

    def _check_seat(self, seat: int) -> None:
        check_int(seat, "seat", RULE_PASS, 0, self.seats - 1)

    def _check_position(self, position: object, seat: int | None) -> int:
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < self.size:
            raise CheatDetected(RULE_VALID, f"position {position!r} is not in 0..{self.size - 1}", seat)
        return position


# -- shuffle pass ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShuffleSecret:
    """A seat's shuffle secret: the scalar s and the permutation (``out[i] = s·in[perm[i]]``)."""

    scalar: bytes
    permutation: tuple[int, ...]

    @classmethod
    def new(cls, n: int, scalar: bytes | None = None, permutation: Sequence[int] | None = None) -> ShuffleSecret:
        """Fresh secrets for an ``n``-card deck; either part can be given instead (tests, audits)."""
        return cls(
            random_scalar() if scalar is None else scalar,
            random_permutation(n) if permutation is None else tuple(permutation),
        )


@dataclass(frozen=True, slots=True)
class ShuffleOutput:
    """The list of points a seat's shuffle pass publishes."""

    seat: int
    points: tuple[bytes, ...]

    def to_json(self) -> JSONObject:
        return {"points": [p.hex() for p in self.points]}

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> ShuffleOutput:
        """Read and fully check (P-4.4) a shuffle output received from ``seat``."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"points"}), seat, "shuffle output")
        points = _hex_list(fields["points"], POINT_BYTES, ctx.size, seat, "shuffle output points")
        return cls(seat, check_points(points, ctx.size, seat, f"seat {seat}'s shuffle output"))


def shuffle_pass(ctx: DeckContext, seat: int, deck: Sequence[bytes], secret: ShuffleSecret) -> ShuffleOutput:
    """Seat ``seat``'s shuffle pass over ``deck`` (the card table's points for seat 0, else the
    previous seat's checked output)."""
    ctx._check_seat(seat)
    if len(deck) != ctx.size:
        raise ProtocolError(RULE_PASS, f"deck has {len(deck)} points, expected {ctx.size}")
    scalar = check_scalar(secret.scalar, seat, "shuffle scalar")
    perm = check_permutation(secret.permutation, ctx.size, seat)
    return ShuffleOutput(seat, tuple(scalarmult(scalar, deck[j]) for j in perm))


# -- lock pass ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LockSecret:
    """A seat's position keys k_p and the nonces of their commitments."""

    keys: tuple[bytes, ...]
    nonces: tuple[bytes, ...]

    @classmethod
    def new(cls, n: int, keys: Sequence[bytes] | None = None, nonces: Sequence[bytes] | None = None) -> LockSecret:
        """Fresh keys and nonces for an ``n``-card deck; either can be given instead."""
        return cls(
            tuple(random_scalar() for _ in range(n)) if keys is None else tuple(keys),
            tuple(secrets.token_bytes(NONCE_BYTES) for _ in range(n)) if nonces is None else tuple(nonces),
        )


def key_commitment(ctx: DeckContext, seat: int, position: int, key: bytes, nonce: bytes) -> bytes:
    """The commitment digest to ``seat``'s key for ``position``; the position is part of the value so
    a commitment names what it is for."""
    return commitment_digest(KEY_TAG, ctx.table, ctx.round, seat, struct.pack(">I", position) + key, nonce)


@dataclass(frozen=True, slots=True)
class KeyCommitments:
    """A seat's published commitments to its position keys, indexed by position."""

    seat: int
    digests: tuple[bytes, ...]


@dataclass(frozen=True, slots=True)
class LockOutput:
    """What a seat's lock pass publishes: the locked points and the key commitments."""

    seat: int
    points: tuple[bytes, ...]
    commitments: KeyCommitments

    def to_json(self) -> JSONObject:
        return {
            "points": [p.hex() for p in self.points],
            "commitments": [c.hex() for c in self.commitments.digests],
        }

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> LockOutput:
        """Read and fully check (P-4.4) a lock output received from ``seat``."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"points", "commitments"}), seat, "lock output")
        points = _hex_list(fields["points"], POINT_BYTES, ctx.size, seat, "lock output points")
        digests = _hex_list(fields["commitments"], 32, ctx.size, seat, "lock output commitments")
        checked = check_points(points, ctx.size, seat, f"seat {seat}'s lock output")
        return cls(seat, checked, KeyCommitments(seat, tuple(digests)))


def lock_pass(
    ctx: DeckContext, seat: int, deck: Sequence[bytes], shuffle: ShuffleSecret, lock: LockSecret
) -> LockOutput:
    """Seat ``seat``'s lock pass over ``deck`` (the last shuffle output for seat 0, else the previous
    seat's checked lock output): removes its shuffle scalar, adds one key per position."""
    ctx._check_seat(seat)
    n = ctx.size
    if len(deck) != n:
        raise ProtocolError(RULE_PASS, f"deck has {len(deck)} points, expected {n}")
    _check_lock_secret(ctx, seat, lock)
    inverse = bytes(sodium.crypto_core_ed25519_scalar_invert(check_scalar(shuffle.scalar, seat, "shuffle scalar")))
    points = tuple(
        scalarmult(bytes(sodium.crypto_core_ed25519_scalar_mul(key, inverse)), point)
        for key, point in zip(lock.keys, deck, strict=True)
    )
    digests = tuple(
        key_commitment(ctx, seat, p, key, nonce)
        for p, (key, nonce) in enumerate(zip(lock.keys, lock.nonces, strict=True))
    )
    return LockOutput(seat, points, KeyCommitments(seat, digests))


def _check_lock_secret(ctx: DeckContext, seat: int, lock: LockSecret) -> None:
    n = ctx.size
    if len(lock.keys) != n or len(lock.nonces) != n:
        raise CheatDetected(
            RULE_VALID, f"lock secret has {len(lock.keys)} keys and {len(lock.nonces)} nonces, expected {n}", seat
        )
    for p, (key, nonce) in enumerate(zip(lock.keys, lock.nonces, strict=True)):
        check_scalar(key, seat, f"key for position {p}")
        if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
            raise CheatDetected(RULE_VALID, f"nonce for position {p} is not {NONCE_BYTES} bytes", seat)


def check_output(ctx: DeckContext, output: ShuffleOutput | LockOutput) -> None:
    """Check (P-4.4) a pass output held in memory, as `ShuffleOutput.from_json` does for received ones."""
    ctx._check_seat(output.seat)
    kind = "shuffle" if isinstance(output, ShuffleOutput) else "lock"
    check_points(output.points, ctx.size, output.seat, f"seat {output.seat}'s {kind} output")
    if isinstance(output, LockOutput):
        digests = output.commitments.digests
        if len(digests) != ctx.size or any(not isinstance(d, bytes) or len(d) != 32 for d in digests):
            raise CheatDetected(RULE_VALID, f"lock output needs {ctx.size} 32-byte commitments", output.seat)


# -- dealing and opening --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyOpening:
    """One seat's key for one position, with its commitment nonce: sent privately to a card's owner,
    or published to open a card for everyone."""

    seat: int
    position: int
    key: bytes
    nonce: bytes

    def to_json(self) -> JSONObject:
        return {"position": self.position, "key": self.key.hex(), "nonce": self.nonce.hex()}

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> KeyOpening:
        """Read (and check the form of) a key opening received from ``seat``."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"position", "key", "nonce"}), seat, "key opening")
        position = ctx._check_position(fields["position"], seat)
        key = check_scalar(_hex_bytes(fields["key"], SCALAR_BYTES, seat, "key"), seat, f"key for position {position}")
        return cls(seat, position, key, _hex_bytes(fields["nonce"], NONCE_BYTES, seat, "nonce"))


def key_opening(seat: int, lock: LockSecret, position: int) -> KeyOpening:
    """The opening of ``seat``'s own key for ``position``."""
    return KeyOpening(seat, position, lock.keys[position], lock.nonces[position])


def check_key_opening(ctx: DeckContext, opening: KeyOpening, commitments: KeyCommitments) -> bytes:
    """Check a key against its seat's commitment (P-4.3) and form (P-4.4); returns the key."""
    seat = opening.seat
    ctx._check_seat(seat)
    position = ctx._check_position(opening.position, seat)
    key = check_scalar(opening.key, seat, f"key for position {position}")
    if not isinstance(opening.nonce, bytes) or len(opening.nonce) != NONCE_BYTES:
        raise CheatDetected(RULE_VALID, f"nonce for position {position} is not {NONCE_BYTES} bytes", seat)
    if commitments.seat != seat or len(commitments.digests) != ctx.size:
        raise ProtocolError(RULE_DEAL, f"commitments given are not seat {seat}'s for this deck")
    expected = commitments.digests[position]
    if not hmac.compare_digest(key_commitment(ctx, seat, position, key, opening.nonce), expected):
        raise CheatDetected(RULE_DEAL, f"key for position {position} does not match its commitment", seat)
    return key


def open_position(
    ctx: DeckContext,
    position: int,
    point: bytes,
    openings: Sequence[KeyOpening],
    commitments: Sequence[KeyCommitments],
) -> CardCode:
    """The card at ``position`` of the final (locked) deck, whose point there is ``point``.

    ``openings`` has one key opening per seat, in seat order (the owner's own included);
    ``commitments`` is every seat's `KeyCommitments`, in seat order. A key that does not match its
    commitment blames its seat; a position that opens to no card is certain cheating (seat ``None``:
    the audit names the seat)."""
    check_int(position, "position", RULE_DEAL, 0, ctx.size - 1)
    if len(openings) != ctx.seats or len(commitments) != ctx.seats:
        raise ProtocolError(RULE_DEAL, f"need one key opening and one commitment list per seat ({ctx.seats})")
    product: bytes | None = None
    for seat, (opening, seat_commitments) in enumerate(zip(openings, commitments, strict=True)):
        if opening.seat != seat:
            raise ProtocolError(RULE_DEAL, f"opening {seat} is seat {opening.seat}'s; openings go in seat order")
        if opening.position != position:
            raise CheatDetected(RULE_DEAL, f"key sent for position {opening.position} where {position} was asked", seat)
        key = check_key_opening(ctx, opening, seat_commitments)
        product = key if product is None else bytes(sodium.crypto_core_ed25519_scalar_mul(product, key))
    assert product is not None  # ctx.seats >= 1
    # Keys are non-zero mod the prime L, so their product is invertible.
    plain = scalarmult(bytes(sodium.crypto_core_ed25519_scalar_invert(product)), point)
    code = ctx.cards.code_of(plain)
    if code is None:
        raise CheatDetected(
            RULE_DEAL,
            f"position {position} does not open to a card of the deck: a shuffle or lock pass was wrong "
            "(the audit names the seat)",
            None,
        )
    return code


# -- audit ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeatSecrets:
    """What a seat publishes at round end (P-5.2): its shuffle secret and all its position keys."""

    seat: int
    shuffle: ShuffleSecret
    lock: LockSecret

    def to_json(self) -> JSONObject:
        return {
            "scalar": self.shuffle.scalar.hex(),
            "permutation": list(self.shuffle.permutation),
            "keys": [k.hex() for k in self.lock.keys],
            "nonces": [n.hex() for n in self.lock.nonces],
        }

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> SeatSecrets:
        """Read and check the form of ``seat``'s published secrets."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"scalar", "permutation", "keys", "nonces"}), seat, "seat secrets")
        n = ctx.size
        scalar = check_scalar(
            _hex_bytes(fields["scalar"], SCALAR_BYTES, seat, "shuffle scalar"), seat, "shuffle scalar"
        )
        permutation = check_permutation(fields["permutation"], n, seat)
        keys = _hex_list(fields["keys"], SCALAR_BYTES, n, seat, "keys")
        nonces = _hex_list(fields["nonces"], NONCE_BYTES, n, seat, "nonces")
        lock = LockSecret(tuple(keys), tuple(nonces))
        _check_lock_secret(ctx, seat, lock)
        return cls(seat, ShuffleSecret(scalar, permutation), lock)


def _first_difference(a: Sequence[bytes], b: Sequence[bytes]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def audit_deck(
    ctx: DeckContext,
    shuffles: Sequence[ShuffleOutput],
    locks: Sequence[LockOutput],
    seat_secrets: Sequence[SeatSecrets],
) -> tuple[CardCode, ...]:
    """Recompute every pass from the published secrets (P-5.2) and return the card at each position.

    Passes are checked in the order they were made (every shuffle pass, then every lock pass), each
    from its published input; the first seat whose secrets do not reproduce its published output or
    commitments is named (`CheatDetected`, P-4.2). Given that every pass reproduces, position p holds
    the card the permutations carried there, so the deck order needs no further multiplication."""
    k = ctx.seats
    if not len(shuffles) == len(locks) == len(seat_secrets) == k:
        raise ProtocolError(RULE_PASS, f"the audit needs every seat's passes and secrets ({k} seats)")
    for seat in range(k):
        if shuffles[seat].seat != seat or locks[seat].seat != seat or seat_secrets[seat].seat != seat:
            raise ProtocolError(RULE_PASS, "passes and secrets must be given in seat order")
    deck: Sequence[bytes] = ctx.cards.points
    order = list(range(ctx.size))
    for seat in range(k):
        secret = seat_secrets[seat].shuffle
        expected = shuffle_pass(ctx, seat, deck, secret).points
        published = shuffles[seat].points
        if expected != published:
            raise CheatDetected(
                RULE_PASS,
                "published shuffle scalar and permutation do not reproduce the shuffle pass "
                f"(first difference at position {_first_difference(expected, published)})",
                seat,
            )
        order = [order[j] for j in secret.permutation]
        deck = published
    for seat in range(k):
        secrets_ = seat_secrets[seat]
        lock = locks[seat]
        recomputed = lock_pass(ctx, seat, deck, secrets_.shuffle, secrets_.lock)
        published_digests = lock.commitments.digests
        if recomputed.commitments.digests != published_digests:
            p = _first_difference(recomputed.commitments.digests, published_digests)
            raise CheatDetected(
                RULE_PASS, f"published key for position {p} does not match the published commitment", seat
            )
        if recomputed.points != lock.points:
            raise CheatDetected(
                RULE_PASS,
                "published shuffle scalar and keys do not reproduce the lock pass "
                f"(first difference at position {_first_difference(recomputed.points, lock.points)})",
                seat,
            )
        deck = lock.points
    return tuple(ctx.cards.codes[i] for i in order)
