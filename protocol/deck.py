"""The mental-poker deck (P-4): hands hidden without a dealer, checkable by everyone afterwards.

Commutative encryption on the prime-order group of Ed25519 (order `L`), through libsodium's
low-level functions as PyNaCl binds them. Notation: ``x·P`` multiplies point ``P`` by scalar ``x``;
``B`` is the standard base point.

* Cards (P-4.1): card ``code`` of game ``game_id`` is
  ``M = from_uniform(SHA-512(CARD_DOMAIN ‖ lp(game_id) ‖ lp(canonical JSON of code))[:32])``;
  nobody knows a discrete log of any M. `CardTable` holds the public table and the reverse lookup.
* Shuffle pass (P-4.2), seat by seat in seat order, starting from the card table in card order:
  ``out[i] = s·in[perm[i]]`` with a fresh secret scalar ``s`` and a secret permutation ``perm``.
  The seat also publishes its *key base* ``S = s⁻¹·B`` and a Chaum–Pedersen proof that one scalar
  ``s`` gives both ``B = s·S`` and ``Σout = s·Σin`` (a sum does not depend on the order, so the
  proof shows nothing of the permutation).
* Lock pass, seat by seat, starting from the last shuffle output:
  ``out[p] = x_p·in[p]`` with ``x_p = k_p·s⁻¹`` for a fresh key ``k_p`` per position. The seat
  publishes every *factor* ``X_p = x_p·B`` and, per position, a Chaum–Pedersen proof that one
  scalar gives both ``X_p = x_p·B`` and ``out[p] = x_p·in[p]``. A receiver checks every proof
  (`verify_lock`) before using the pass: a lock that moves a point to another position or alters it
  is refused on receipt, naming its seat. After every lock pass, position p holds
  ``(Π_j k_{j,p})·M`` for one card M: every ``s`` has cancelled out.
* Dealing position p (P-4.3): every other seat sends its `KeyOpening` for p to the owner privately;
  the owner checks each key against what its seat published (``k_p·S == X_p``, which fixes the key:
  there is exactly one such scalar) and computes ``(Π_j k_{j,p})⁻¹·C = M``. A public opening is the
  same with every opening published. Both are `open_position`, which checks the keys one by one only
  when their product opens to no card (only the true product can open to a card: P-4.1).
* Validation (P-4.4): every point received is a canonical encoding of a point of the prime-order
  subgroup other than the identity, every list has the expected length and no repeated point, every
  scalar is reduced and non-zero. Failures are `CheatDetected` naming the author seat.
* Audit (P-5.2): at round end every seat publishes its `SeatSecrets`; `audit_deck` recomputes every
  shuffle pass from its published input, checks every key base and lock factor against the
  published secrets, names the first seat whose secrets do not reproduce its pass (P-4.2), and
  returns the deck in position order.

What the proofs leave to the audit: a shuffle pass that replaces cards by points of no card while
keeping the sum (two or more points) cannot be seen on receipt. The proofs and key checks fix one
common factor between the last shuffle output and the plain points, the same for every position, and
that output has no repeated point: so each card is still in the deck at most once, and a replaced
position opens to no card: its owner finds that (`CheatDetected` with seat ``None``), the round
stops, and the audit names the seat. docs/PROTOCOL.md lists every threat, its check and where.

Proof challenges are ``SHA-512(PROOF_DOMAIN ‖ lp(kind) ‖ lp(table) ‖ u64 round ‖ lp(game) ‖
u32 cards ‖ u32 seats ‖ u32 seat ‖ u32 position ‖ the six points)`` reduced mod L: a proof holds for
one pass of one seat at one position of one round's deck, nowhere else. Proof nonces are
``SHA-512(NONCE_DOMAIN ‖ witness ‖ 32 bytes of entropy ‖ the statement)`` mod L: fresh entropy makes
them unpredictable, the witness keeps them secret even from a weak entropy source.

Cost (``n`` cards): a shuffle pass is ``n + 3`` multiplications (plus one fixed-base), its check 3
(plus one fixed-base, ``n`` point checks and ``n`` additions); a lock pass is ``2n`` (plus ``2n``
fixed-base), its check ``3n`` (plus ``n`` fixed-base); a key check is one. Variable-base multiplications go through
`scalarmult`, fixed-base ones through `basemult`, so a benchmark can count them.

Every function here is pure over frozen values (`point_sum` caches results, nothing else); all
randomness comes from the ``entropy`` passed in (``secrets.token_bytes`` by default; a seeded
stream in tests), and every secret can be passed in instead (tests, audits).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import nacl.bindings as sodium
import nacl.exceptions

from protocol.encoding import JSONObject, canonical, check_int, check_table_id
from protocol.errors import CheatDetected, ProtocolError

RULE_CARDS = "P-4.1"
RULE_PASS = "P-4.2"
RULE_DEAL = "P-4.3"
RULE_VALID = "P-4.4"

L = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
PROOF_BYTES = 2 * SCALAR_BYTES  # challenge c ‖ response z
IDENTITY_POINT = b"\x01" + bytes(31)
CARD_DOMAIN = b"lanplay/card-point/v1\x00"
PROOF_DOMAIN = b"lanplay/deck-proof/v1\x00"
NONCE_DOMAIN = b"lanplay/deck-proof-nonce/v1\x00"
MAX_CARDS = 1024

CardCode = str | int
Entropy = Callable[[int], bytes]


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _check_code(code: object) -> CardCode:
    if isinstance(code, bool) or not isinstance(code, str | int):
        raise ProtocolError(RULE_CARDS, f"a card code is a str or an int, got {code!r}")
    return code


# -- scalars and points ---------------------------------------------------------------------------


def scalarmult(scalar: bytes, point: bytes) -> bytes:
    """``scalar·point``: the only variable-base multiplication here (benchmarks count calls to it).

    libsodium refuses a point that is the identity, not canonical or not in the prime-order
    subgroup, and a zero scalar; callers that pass peer data catch that (`_peer_mult`), for the rest
    it is a bug, reported typed."""
    try:
        return bytes(sodium.crypto_scalarmult_ed25519_noclamp(scalar, point))
    except nacl.exceptions.CryptoError as exc:
        raise ProtocolError(RULE_VALID, f"scalar multiplication refused its input: {exc}") from None


def basemult(scalar: bytes) -> bytes:
    """``scalar·B``, through libsodium's precomputed table (about a fifth of `scalarmult`'s cost)."""
    try:
        return bytes(sodium.crypto_scalarmult_ed25519_base_noclamp(scalar))
    except nacl.exceptions.CryptoError as exc:
        raise ProtocolError(RULE_VALID, f"base point multiplication refused its input: {exc}") from None


def _scalar_int(scalar: bytes) -> int:
    return int.from_bytes(scalar, "little")


def _scalar_bytes(value: int) -> bytes:
    return (value % L).to_bytes(SCALAR_BYTES, "little")


BASE_POINT = basemult(_scalar_bytes(1))


def _peer_mult(scalar: bytes, point: bytes, seat: int | None, what: str) -> bytes:
    # The point comes from ``seat``: libsodium's refusal (it checks the encoding and the subgroup,
    # so points that are multiplied here need no separate is_valid_point) is that seat's fault.
    if point == IDENTITY_POINT:
        raise CheatDetected(RULE_VALID, f"{what} is the identity point", seat)
    if point == BASE_POINT:
        return basemult(scalar)
    try:
        return scalarmult(scalar, point)
    except ProtocolError:
        raise CheatDetected(RULE_VALID, f"{what} is not a point of the prime-order subgroup", seat) from None


def _sub(a: bytes, b: bytes) -> bytes:
    return bytes(sodium.crypto_core_ed25519_sub(a, b))


@functools.lru_cache(maxsize=64)
def point_sum(points: tuple[bytes, ...]) -> bytes:
    """The sum of valid points (the identity for none); cached, since every seat sums each shuffle
    output once to check it and once more as the next pass's input."""
    total = IDENTITY_POINT
    for point in points:
        total = bytes(sodium.crypto_core_ed25519_add(total, point))
    return total


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


def _distinct(points: object, n: int, seat: int | None, what: str) -> tuple[bytes, ...]:
    # Length, form and no repeats; subgroup membership is checked by the caller.
    if not isinstance(points, Sequence) or isinstance(points, str | bytes):
        raise CheatDetected(RULE_VALID, f"{what} is not a list of points", seat)
    if len(points) != n:
        raise CheatDetected(RULE_VALID, f"{what} has {len(points)} points, expected {n}", seat)
    seen: dict[bytes, int] = {}
    for i, point in enumerate(points):
        if not isinstance(point, bytes) or len(point) != POINT_BYTES:
            raise CheatDetected(RULE_VALID, f"{what} position {i} is not a {POINT_BYTES}-byte point", seat)
        if point in seen:
            raise CheatDetected(RULE_VALID, f"{what} repeats a point at positions {seen[point]} and {i}", seat)
        seen[point] = i
    return tuple(points)


def check_points(points: object, n: int, seat: int | None, what: str) -> tuple[bytes, ...]:
    """A list of ``n`` distinct valid points from ``seat`` (P-4.4)."""
    checked = _distinct(points, n, seat, what)
    for i, point in enumerate(checked):
        check_point(point, seat, f"{what} position {i}")
    return checked


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

    def _check_input(self, deck: Sequence[bytes]) -> None:
        # The input of a pass is our own checked state: a wrong one is the caller's bug.
        if len(deck) != self.size:
            raise ProtocolError(RULE_PASS, f"deck has {len(deck)} points, expected {self.size}")


# -- Chaum–Pedersen proofs of one discrete log in two bases ---------------------------------------------
#
# Statement (g, a, h, y): a = w·g and y = w·h for one w. Proof (c, z): the prover draws r, computes
# R1 = r·g, R2 = r·h, c = challenge(label, g, a, h, y, R1, R2), z = r + c·w. The verifier recomputes
# R1 = z·g − c·a and R2 = z·h − c·y and checks the challenge. Multiples of B use the fixed-base table.

SHUFFLE_PROOF = b"shuffle"
LOCK_PROOF = b"lock"


def _challenge(ctx: DeckContext, kind: bytes, seat: int, position: int, points: Sequence[bytes]) -> int:
    head = (
        PROOF_DOMAIN
        + _lp(kind)
        + _lp(ctx.table.encode("ascii"))
        + struct.pack(">Q", ctx.round)
        + _lp(ctx.cards.game_id.encode("utf-8"))
        + struct.pack(">IIII", ctx.size, ctx.seats, seat, position)
    )
    return int.from_bytes(hashlib.sha512(head + b"".join(points)).digest(), "little") % L


def _prove(
    ctx: DeckContext,
    kind: bytes,
    seat: int,
    position: int,
    witness: int,
    statement: tuple[bytes, bytes, bytes, bytes],
    entropy: Entropy,
) -> bytes:
    g, a, h, y = statement
    while True:
        seed = NONCE_DOMAIN + _scalar_bytes(witness) + entropy(32) + g + a + h + y
        nonce = int.from_bytes(hashlib.sha512(seed).digest(), "little") % L
        if nonce == 0:
            continue
        r = _scalar_bytes(nonce)
        r1 = basemult(r) if g == BASE_POINT else scalarmult(r, g)
        c = _challenge(ctx, kind, seat, position, (g, a, h, y, r1, scalarmult(r, h)))
        z = (nonce + c * witness) % L
        # The verifier refuses zero scalars; an honest proof must never be refused (I1), so draw again.
        if c != 0 and z != 0:
            return _scalar_bytes(c) + _scalar_bytes(z)


def _verify(
    ctx: DeckContext,
    kind: bytes,
    seat: int,
    position: int,
    proof: bytes,
    statement: tuple[bytes, bytes, bytes, bytes],
    names: tuple[str, str, str, str],
) -> bool:
    """Whether ``proof`` holds; `CheatDetected` (P-4.4) naming ``seat`` if the proof is malformed
    or a point it published (``g``, ``a``, ``y``; ``names`` are the proof's and theirs) is not a
    valid point. ``h`` is the pass's input, our own checked state."""
    g, a, h, y = statement
    proof_name, g_name, a_name, y_name = names
    c_bytes, z_bytes = proof[:SCALAR_BYTES], proof[SCALAR_BYTES:]
    c, z = _scalar_int(c_bytes), _scalar_int(z_bytes)
    if len(proof) != PROOF_BYTES or not 0 < c < L or not 0 < z < L:
        raise CheatDetected(RULE_VALID, f"{proof_name} does not hold two reduced non-zero scalars", seat)
    c_a = _peer_mult(c_bytes, a, seat, a_name)
    c_y = _peer_mult(c_bytes, y, seat, y_name)
    r1 = _sub(_peer_mult(z_bytes, g, seat, g_name), c_a)
    r2 = _sub(scalarmult(z_bytes, h), c_y)
    expected = _challenge(ctx, kind, seat, position, (g, a, h, y, r1, r2))
    return hmac.compare_digest(_scalar_bytes(expected), c_bytes)


# -- shuffle pass ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShuffleSecret:
    """A seat's shuffle secret: the scalar s and the permutation (``out[i] = s·in[perm[i]]``)."""

    scalar: bytes
    permutation: tuple[int, ...]

    @classmethod
    def new(
        cls,
        n: int,
        scalar: bytes | None = None,
        permutation: Sequence[int] | None = None,
        entropy: Entropy | None = None,
    ) -> ShuffleSecret:
        """Fresh secrets for an ``n``-card deck (from ``entropy``, else `secrets`); either part can be
        given instead (tests, audits)."""
        if scalar is None:
            scalar = random_scalar() if entropy is None else random_scalar(entropy)
        return cls(scalar, random_permutation(n, entropy) if permutation is None else tuple(permutation))


def key_base(secret: ShuffleSecret, seat: int) -> bytes:
    """``S = s⁻¹·B``, against which every key of the seat is checked (``k_p·S == X_p``)."""
    scalar = check_scalar(secret.scalar, seat, "shuffle scalar")
    return basemult(_scalar_bytes(pow(_scalar_int(scalar), -1, L)))


@dataclass(frozen=True, slots=True)
class ShuffleOutput:
    """What a seat's shuffle pass publishes: the points, its key base ``S = s⁻¹·B`` and the proof
    that ``B = s·S`` and ``Σpoints = s·Σinput`` for one ``s``."""

    seat: int
    points: tuple[bytes, ...]
    key_base: bytes
    proof: bytes

    def to_json(self) -> JSONObject:
        return {"points": [p.hex() for p in self.points], "key_base": self.key_base.hex(), "proof": self.proof.hex()}

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object, input_points: Sequence[bytes]) -> ShuffleOutput:
        """Read and fully check (P-4.4, P-4.2) a shuffle output received from ``seat``, made on
        ``input_points`` (the card table's points for seat 0, else the previous seat's output)."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"points", "key_base", "proof"}), seat, "shuffle output")
        points = _hex_list(fields["points"], POINT_BYTES, ctx.size, seat, "shuffle output points")
        output = cls(
            seat,
            tuple(points),
            _hex_bytes(fields["key_base"], POINT_BYTES, seat, "shuffle key base"),
            _hex_bytes(fields["proof"], PROOF_BYTES, seat, "shuffle proof"),
        )
        verify_shuffle(ctx, seat, input_points, output)
        return output


def shuffle_pass(
    ctx: DeckContext,
    seat: int,
    deck: Sequence[bytes],
    secret: ShuffleSecret,
    entropy: Entropy = secrets.token_bytes,
) -> ShuffleOutput:
    """Seat ``seat``'s shuffle pass over ``deck`` (the card table's points for seat 0, else the
    previous seat's checked output), with its key base and proof (nonce from ``entropy``)."""
    ctx._check_seat(seat)
    ctx._check_input(deck)
    scalar = check_scalar(secret.scalar, seat, "shuffle scalar")
    perm = check_permutation(secret.permutation, ctx.size, seat)
    points = tuple(scalarmult(scalar, deck[j]) for j in perm)
    base = key_base(secret, seat)
    input_sum = point_sum(tuple(deck))
    statement = (base, BASE_POINT, input_sum, scalarmult(scalar, input_sum))
    proof = _prove(ctx, SHUFFLE_PROOF, seat, 0, _scalar_int(scalar), statement, entropy)
    return ShuffleOutput(seat, points, base, proof)


def verify_shuffle(ctx: DeckContext, seat: int, input_points: Sequence[bytes], output: ShuffleOutput) -> None:
    """Check a shuffle output of ``seat`` made on ``input_points``: every point valid and distinct
    (P-4.4), and the proof that its key base is ``s⁻¹·B`` for the ``s`` that scaled the points'
    sum (P-4.2). `CheatDetected` naming ``seat`` otherwise."""
    ctx._check_seat(seat)
    ctx._check_input(input_points)
    if output.seat != seat:
        raise ProtocolError(RULE_PASS, f"seat {output.seat}'s shuffle output given as seat {seat}'s")
    points = check_points(output.points, ctx.size, seat, f"seat {seat}'s shuffle output")
    if not isinstance(output.proof, bytes) or len(output.proof) != PROOF_BYTES:
        raise CheatDetected(RULE_VALID, f"shuffle proof is not {PROOF_BYTES} bytes", seat)
    output_sum = point_sum(points)
    if output_sum == IDENTITY_POINT:
        raise CheatDetected(RULE_PASS, "the shuffle output's points sum to the identity point", seat)
    statement = (output.key_base, BASE_POINT, point_sum(tuple(input_points)), output_sum)
    names = ("shuffle proof", "shuffle key base", "base point", "sum of the shuffle output")
    if not _verify(ctx, SHUFFLE_PROOF, seat, 0, output.proof, statement, names):
        raise CheatDetected(
            RULE_PASS, "the shuffle proof does not verify: the key base is not s⁻¹·B for the pass's scalar", seat
        )


# -- lock pass ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LockSecret:
    """A seat's position keys k_p."""

    keys: tuple[bytes, ...]

    @classmethod
    def new(cls, n: int, keys: Sequence[bytes] | None = None, entropy: Entropy = secrets.token_bytes) -> LockSecret:
        """Fresh keys for an ``n``-card deck (from ``entropy``), or the keys given."""
        return cls(tuple(random_scalar(entropy) for _ in range(n)) if keys is None else tuple(keys))


@dataclass(frozen=True, slots=True)
class LockOutput:
    """What a seat's lock pass publishes: the locked points, the factor ``X_p = x_p·B`` of each
    position and the proof, per position, that ``points[p] = x_p·input[p]``."""

    seat: int
    points: tuple[bytes, ...]
    factors: tuple[bytes, ...]
    proofs: tuple[bytes, ...]

    def to_json(self) -> JSONObject:
        return {
            "points": [p.hex() for p in self.points],
            "factors": [x.hex() for x in self.factors],
            "proofs": [proof.hex() for proof in self.proofs],
        }

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object, input_points: Sequence[bytes]) -> LockOutput:
        """Read and fully check (P-4.4, P-4.2) a lock output received from ``seat``, made on
        ``input_points`` (the last shuffle output for seat 0, else the previous seat's lock output)."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"points", "factors", "proofs"}), seat, "lock output")
        n = ctx.size
        output = cls(
            seat,
            tuple(_hex_list(fields["points"], POINT_BYTES, n, seat, "lock output points")),
            tuple(_hex_list(fields["factors"], POINT_BYTES, n, seat, "lock output factors")),
            tuple(_hex_list(fields["proofs"], PROOF_BYTES, n, seat, "lock output proofs")),
        )
        verify_lock(ctx, seat, input_points, output)
        return output


def _check_lock_secret(ctx: DeckContext, seat: int, lock: LockSecret) -> tuple[bytes, ...]:
    if len(lock.keys) != ctx.size:
        raise CheatDetected(RULE_VALID, f"lock secret has {len(lock.keys)} keys, expected {ctx.size}", seat)
    return tuple(check_scalar(key, seat, f"key for position {p}") for p, key in enumerate(lock.keys))


def lock_factors(shuffle: ShuffleSecret, keys: Sequence[bytes]) -> tuple[bytes, ...]:
    """``x_p = k_p·s⁻¹`` for every position: the scalars a lock pass multiplies the points by."""
    inverse = pow(_scalar_int(shuffle.scalar), -1, L)
    return tuple(_scalar_bytes(_scalar_int(key) * inverse) for key in keys)


def lock_pass(
    ctx: DeckContext,
    seat: int,
    deck: Sequence[bytes],
    shuffle: ShuffleSecret,
    lock: LockSecret,
    entropy: Entropy = secrets.token_bytes,
) -> LockOutput:
    """Seat ``seat``'s lock pass over ``deck`` (the last shuffle output for seat 0, else the previous
    seat's checked lock output): removes its shuffle scalar, adds one key per position, and proves
    each position (proof nonces from ``entropy``)."""
    ctx._check_seat(seat)
    ctx._check_input(deck)
    keys = _check_lock_secret(ctx, seat, lock)
    check_scalar(shuffle.scalar, seat, "shuffle scalar")
    points, factors, proofs = [], [], []
    for p, (x, point) in enumerate(zip(lock_factors(shuffle, keys), deck, strict=True)):
        out, factor = scalarmult(x, point), basemult(x)
        points.append(out)
        factors.append(factor)
        proofs.append(_prove(ctx, LOCK_PROOF, seat, p, _scalar_int(x), (BASE_POINT, factor, point, out), entropy))
    return LockOutput(seat, tuple(points), tuple(factors), tuple(proofs))


def verify_lock(ctx: DeckContext, seat: int, input_points: Sequence[bytes], output: LockOutput) -> None:
    """Check a lock output of ``seat`` made on ``input_points`` (I5): per position, a valid point
    (P-4.4), none repeated, and a proof that ``points[p] = x·input[p]`` and ``factors[p] = x·B`` for
    one ``x`` (P-4.2). A lock that moved a point to another position or altered it fails here.
    `CheatDetected` naming ``seat`` otherwise."""
    ctx._check_seat(seat)
    ctx._check_input(input_points)
    if output.seat != seat:
        raise ProtocolError(RULE_PASS, f"seat {output.seat}'s lock output given as seat {seat}'s")
    n = ctx.size
    what = f"seat {seat}'s lock output"
    points = _distinct(output.points, n, seat, what)
    factors = output.factors
    if len(factors) != n or len(output.proofs) != n:
        raise CheatDetected(
            RULE_VALID, f"{what} has {len(factors)} factors and {len(output.proofs)} proofs, expected {n}", seat
        )
    for p, (factor, proof) in enumerate(zip(factors, output.proofs, strict=True)):
        if not isinstance(factor, bytes) or len(factor) != POINT_BYTES:
            raise CheatDetected(RULE_VALID, f"{what} factor {p} is not a {POINT_BYTES}-byte point", seat)
        if not isinstance(proof, bytes) or len(proof) != PROOF_BYTES:
            raise CheatDetected(RULE_VALID, f"{what} proof {p} is not {PROOF_BYTES} bytes", seat)
    for p, (point, factor, proof) in enumerate(zip(points, factors, output.proofs, strict=True)):
        names = (f"{what} proof {p}", "base point", f"{what} factor {p}", f"{what} position {p}")
        if not _verify(ctx, LOCK_PROOF, seat, p, proof, (BASE_POINT, factor, input_points[p], point), names):
            raise CheatDetected(
                RULE_PASS,
                f"the lock proof for position {p} does not verify: the point there is not its input "
                "times the published factor (moved or altered)",
                seat,
            )


# -- dealing and opening --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyCommitments:
    """What a seat's keys are checked against: its key base ``S`` (shuffle pass) and its factors
    ``X_p`` (lock pass). ``k·S == X_p`` holds for exactly one scalar ``k``: the key of position p."""

    seat: int
    key_base: bytes
    factors: tuple[bytes, ...]


def key_commitments(shuffle: ShuffleOutput, lock: LockOutput) -> KeyCommitments:
    """A seat's `KeyCommitments`, from its checked shuffle and lock outputs."""
    if shuffle.seat != lock.seat:
        raise ProtocolError(RULE_DEAL, f"seat {shuffle.seat}'s shuffle goes with seat {lock.seat}'s lock")
    return KeyCommitments(lock.seat, shuffle.key_base, lock.factors)


@dataclass(frozen=True, slots=True)
class KeyOpening:
    """One seat's key for one position: sent privately to a card's owner, or published to open a
    card for everyone."""

    seat: int
    position: int
    key: bytes

    def to_json(self) -> JSONObject:
        return {"position": self.position, "key": self.key.hex()}

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> KeyOpening:
        """Read (and check the form of) a key opening received from ``seat``."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"position", "key"}), seat, "key opening")
        position = ctx._check_position(fields["position"], seat)
        key = check_scalar(_hex_bytes(fields["key"], SCALAR_BYTES, seat, "key"), seat, f"key for position {position}")
        return cls(seat, position, key)


def key_opening(seat: int, lock: LockSecret, position: int) -> KeyOpening:
    """The opening of ``seat``'s own key for ``position``."""
    return KeyOpening(seat, position, lock.keys[position])


def check_key_opening(ctx: DeckContext, opening: KeyOpening, commitments: KeyCommitments) -> bytes:
    """Check a key against its seat's key base and lock factor (P-4.3) and its form (P-4.4); returns
    the key. One multiplication."""
    seat = opening.seat
    ctx._check_seat(seat)
    position = ctx._check_position(opening.position, seat)
    key = check_scalar(opening.key, seat, f"key for position {position}")
    if commitments.seat != seat or len(commitments.factors) != ctx.size:
        raise ProtocolError(RULE_DEAL, f"commitments given are not seat {seat}'s for this deck")
    if not hmac.compare_digest(scalarmult(key, commitments.key_base), commitments.factors[position]):
        raise CheatDetected(RULE_DEAL, f"key for position {position} does not match its lock factor", seat)
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
    ``commitments`` is every seat's `KeyCommitments`, in seat order. A position that does not open
    to a card blames the seat whose key does not match its factor, else it is certain cheating in a
    shuffle pass (seat ``None``: the audit names the seat).

    One multiplication when it opens to a card: only the true product of the keys can open the
    locked point to a card, since nobody knows a discrete log between two card points (P-4.1), so a
    card found is the card, and each key is checked against its factor only when none is (the
    per-key check is six times the cost at six seats, and a public opening is on every move)."""
    check_int(position, "position", RULE_DEAL, 0, ctx.size - 1)
    if len(openings) != ctx.seats or len(commitments) != ctx.seats:
        raise ProtocolError(RULE_DEAL, f"need one key opening and one commitment list per seat ({ctx.seats})")
    product = 1
    for seat, opening in enumerate(openings):
        if opening.seat != seat:
            raise ProtocolError(RULE_DEAL, f"opening {seat} is seat {opening.seat}'s; openings go in seat order")
        if opening.position != position:
            raise CheatDetected(RULE_DEAL, f"key sent for position {opening.position} where {position} was asked", seat)
        key = check_scalar(opening.key, seat, f"key for position {position}")
        product = product * _scalar_int(key) % L
    # Keys are non-zero mod the prime L, so their product is invertible.
    plain = scalarmult(_scalar_bytes(pow(product, -1, L)), point)
    code = ctx.cards.code_of(plain)
    if code is None:
        for opening, seat_commitments in zip(openings, commitments, strict=True):
            check_key_opening(ctx, opening, seat_commitments)  # names the seat whose key is wrong
        raise CheatDetected(
            RULE_DEAL,
            f"position {position} does not open to a card of the deck: a shuffle pass replaced a card "
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
        }

    @classmethod
    def from_json(cls, ctx: DeckContext, seat: int, obj: object) -> SeatSecrets:
        """Read and check the form of ``seat``'s published secrets."""
        ctx._check_seat(seat)
        fields = _fields(obj, frozenset({"scalar", "permutation", "keys"}), seat, "seat secrets")
        n = ctx.size
        scalar = check_scalar(
            _hex_bytes(fields["scalar"], SCALAR_BYTES, seat, "shuffle scalar"), seat, "shuffle scalar"
        )
        permutation = check_permutation(fields["permutation"], n, seat)
        lock = LockSecret(tuple(_hex_list(fields["keys"], SCALAR_BYTES, n, seat, "keys")))
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

    ``shuffles`` and ``locks`` are the outputs as ``from_json`` accepted them (proofs verified).
    Passes are checked in the order they were made (every shuffle pass, then every lock pass); the
    first seat whose secrets do not reproduce its pass is named (`CheatDetected`, P-4.2): a shuffle
    pass is recomputed point by point and its key base checked; a lock pass is checked through its
    factors (``X_p == (k_p·s⁻¹)·B``, a fixed-base multiplication), which with the verified proofs
    fixes every point. Given that every pass reproduces, position p holds the card the permutations
    carried there, so the deck order needs no further multiplication."""
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
        scalar = check_scalar(secret.scalar, seat, "shuffle scalar")
        perm = check_permutation(secret.permutation, ctx.size, seat)
        expected = tuple(scalarmult(scalar, deck[j]) for j in perm)
        published = shuffles[seat].points
        if expected != published:
            raise CheatDetected(
                RULE_PASS,
                "published shuffle scalar and permutation do not reproduce the shuffle pass "
                f"(first difference at position {_first_difference(expected, published)})",
                seat,
            )
        if key_base(secret, seat) != shuffles[seat].key_base:
            raise CheatDetected(RULE_PASS, "published shuffle scalar does not match the published key base", seat)
        order = [order[j] for j in perm]
        deck = published
    for seat in range(k):
        secrets_ = seat_secrets[seat]
        keys = _check_lock_secret(ctx, seat, secrets_.lock)
        for p, (x, factor) in enumerate(zip(lock_factors(secrets_.shuffle, keys), locks[seat].factors, strict=True)):
            if basemult(x) != factor:
                raise CheatDetected(
                    RULE_PASS, f"published key for position {p} does not reproduce the lock pass's factor", seat
                )
    return tuple(ctx.cards.codes[i] for i in order)
