"""P-4: the mental-poker deck: passes, proofs, dealing, opening, validation and audit, all seats in memory.

Every pass output goes through its wire form (`to_json` then `from_json` with the pass's input) as a
receiving seat would read it, so the checks on receipt are exercised exactly where a real peer runs
them. Randomness comes from seeded entropy streams, so every run is repeatable."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

import nacl.bindings as sodium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import deck as deck_module
from protocol.deck import (
    BASE_POINT,
    IDENTITY_POINT,
    CardTable,
    DeckContext,
    Entropy,
    KeyOpening,
    L,
    LockOutput,
    LockSecret,
    SeatSecrets,
    ShuffleOutput,
    ShuffleSecret,
    audit_deck,
    card_point,
    card_points,
    check_key_opening,
    key_commitments,
    key_opening,
    lock_factors,
    lock_pass,
    open_position,
    shuffle_pass,
    verify_lock,
    verify_shuffle,
)
from protocol.encoding import JSONObject
from protocol.errors import CheatDetected, ProtocolError

TABLE = "c4" * 16
SIXTH_SENSE = tuple(f"{c}{v}" for c in "RYGBP" for v in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14))
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")

Tamper = Callable[[int, JSONObject], JSONObject]


def scalar(n: int) -> bytes:
    return (n % L).to_bytes(32, "little")


def seeded(seed: int) -> Entropy:
    """A deterministic entropy stream (SHA-512 in counter mode), standing in for `secrets`."""
    counter = itertools.count()

    def draw(size: int) -> bytes:
        out = b""
        while len(out) < size:
            out += hashlib.sha512(f"test-deck/{seed}/{next(counter)}".encode()).digest()
        return out[:size]

    return draw


def fresh_point(label: str) -> bytes:
    """A valid point nobody knows a discrete log of, and no card."""
    return bytes(sodium.crypto_core_ed25519_from_uniform(hashlib.sha256(label.encode()).digest()))


def add(a: bytes, b: bytes) -> bytes:
    return bytes(sodium.crypto_core_ed25519_add(a, b))


def sub(a: bytes, b: bytes) -> bytes:
    return bytes(sodium.crypto_core_ed25519_sub(a, b))


@dataclass
class Round:
    ctx: DeckContext
    secrets: list[SeatSecrets]
    shuffles: list[ShuffleOutput]
    locks: list[LockOutput]

    @property
    def final(self) -> tuple[bytes, ...]:
        return self.locks[-1].points

    @property
    def commitments(self) -> list[deck_module.KeyCommitments]:
        return [key_commitments(s, lock) for s, lock in zip(self.shuffles, self.locks, strict=True)]

    def lock_input(self, seat: int) -> tuple[bytes, ...]:
        return self.shuffles[-1].points if seat == 0 else self.locks[seat - 1].points

    def openings(self, position: int) -> list[KeyOpening]:
        """Every seat's key for ``position``, each read as the receiver would read it."""
        return [
            KeyOpening.from_json(self.ctx, s.seat, key_opening(s.seat, s.lock, position).to_json())
            for s in self.secrets
        ]

    def open(self, position: int) -> str | int:
        return open_position(self.ctx, position, self.final[position], self.openings(position), self.commitments)


def make_ctx(seats: int, codes: Sequence[str] = SIXTH_SENSE, round: int = 0, table: str = TABLE) -> DeckContext:
    return DeckContext(table, round, seats, CardTable("sixth-sense", tuple(codes)))


def new_secrets(ctx: DeckContext, entropy: Entropy) -> list[SeatSecrets]:
    n = ctx.size
    return [
        SeatSecrets(j, ShuffleSecret.new(n, entropy=entropy), LockSecret.new(n, entropy=entropy))
        for j in range(ctx.seats)
    ]


def run_round(
    ctx: DeckContext,
    secrets: list[SeatSecrets] | None = None,
    tamper_shuffle: Tamper | None = None,
    tamper_lock: Tamper | None = None,
    seed: int = 0,
) -> Round:
    """Seat by seat, each pass is made by its seat and read back from its wire form by the next."""
    entropy = seeded(seed)
    if secrets is None:
        secrets = new_secrets(ctx, entropy)
    points: Sequence[bytes] = ctx.cards.points
    shuffles: list[ShuffleOutput] = []
    for j in range(ctx.seats):
        wire = shuffle_pass(ctx, j, points, secrets[j].shuffle, entropy).to_json()
        if tamper_shuffle is not None:
            wire = tamper_shuffle(j, wire)
        out = ShuffleOutput.from_json(ctx, j, wire, points)
        shuffles.append(out)
        points = out.points
    locks: list[LockOutput] = []
    for j in range(ctx.seats):
        wire = lock_pass(ctx, j, points, secrets[j].shuffle, secrets[j].lock, entropy).to_json()
        if tamper_lock is not None:
            wire = tamper_lock(j, wire)
        lock = LockOutput.from_json(ctx, j, wire, points)
        locks.append(lock)
        points = lock.points
    return Round(ctx, secrets, shuffles, locks)


@pytest.fixture(scope="module")
def six_seats() -> Round:
    return run_round(make_ctx(6))


def small_ctx(seats: int = 3, cards: int = 9) -> DeckContext:
    return make_ctx(seats, SIXTH_SENSE[:cards])


def expect_cheat(seat: int | None, rule: str, fragment: str) -> pytest.RaisesExc[CheatDetected]:
    def matches(exc: CheatDetected) -> bool:
        return exc.seat == seat and exc.rule == rule and fragment in exc.message

    return pytest.raises(CheatDetected, check=matches)


# -- card table ------------------------------------------------------------------------------------


def test_card_points_are_public_valid_and_distinct() -> None:
    points = card_points("sixth-sense", SIXTH_SENSE)
    assert len(set(points)) == 70
    assert all(sodium.crypto_core_ed25519_is_valid_point(p) for p in points)
    assert points == card_points("sixth-sense", SIXTH_SENSE)
    assert card_point("take6", "R0") != card_point("sixth-sense", "R0")
    assert card_point("take6", 17) != card_point("take6", "17")


def test_card_table_reverse_lookup() -> None:
    table = CardTable("take6", tuple(range(1, 105)))
    assert len(table) == 104
    assert table.code_of(card_point("take6", 55)) == 55
    assert table.index_of(card_point("take6", 55)) == 54
    assert table.code_of(card_point("sixth-sense", 55)) is None


@pytest.mark.parametrize(
    ("codes", "fragment"),
    [(("R1", "R1"), "distinct"), (("R1", 2.5), "str or an int"), (("R1", True), "str or an int"), ((), "1 to")],
)
def test_card_table_refuses_bad_decks(codes: tuple[object, ...], fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        CardTable("g", codes)  # type: ignore[arg-type]


# -- a full round ----------------------------------------------------------------------------------


def test_six_seat_round_deals_every_seat_exactly_its_cards(six_seats: Round) -> None:
    ctx = six_seats.ctx
    order = audit_deck(ctx, six_seats.shuffles, six_seats.locks, six_seats.secrets)
    assert sorted(order) == sorted(SIXTH_SENSE)  # a permutation of the deck
    hands: dict[int, list[str | int]] = {seat: [] for seat in range(6)}
    for p in range(66):  # 11 cards each, dealt round the table
        hands[p % 6].append(six_seats.open(p))
    for seat, hand in hands.items():
        assert hand == [order[p] for p in range(seat, 66, 6)]
    trump = six_seats.open(66)  # a public opening: every key published
    assert trump == order[66]
    dealt = [c for hand in hands.values() for c in hand] + [trump]
    assert len(set(dealt)) == 67


def test_positions_are_locked_by_every_seat(six_seats: Round) -> None:
    # Five seats' keys are not enough: removing them leaves a point that is no card.
    keys = [s.lock.keys[0] for s in six_seats.secrets]
    product = keys[0]
    for key in keys[1:5]:
        product = bytes(sodium.crypto_core_ed25519_scalar_mul(product, key))
    partial = deck_module.scalarmult(bytes(sodium.crypto_core_ed25519_scalar_invert(product)), six_seats.final[0])
    assert six_seats.ctx.cards.code_of(partial) is None
    # With the sixth key it is the card, and the final points show nothing: none is a card point.
    full = bytes(sodium.crypto_core_ed25519_scalar_mul(product, keys[5]))
    opened = deck_module.scalarmult(bytes(sodium.crypto_core_ed25519_scalar_invert(full)), six_seats.final[0])
    assert six_seats.ctx.cards.code_of(opened) == six_seats.open(0)
    assert all(six_seats.ctx.cards.code_of(p) is None for p in six_seats.final)


def test_published_values_are_what_the_secrets_say(six_seats: Round) -> None:
    # S = s⁻¹·B and X_p = (k_p·s⁻¹)·B: the key check k_p·S == X_p holds for every seat and position.
    for secret, shuffle, lock in zip(six_seats.secrets, six_seats.shuffles, six_seats.locks, strict=True):
        inverse = pow(int.from_bytes(secret.shuffle.scalar, "little"), -1, L)
        assert shuffle.key_base == deck_module.basemult(scalar(inverse))
        factors = lock_factors(secret.shuffle, secret.lock.keys)
        assert lock.factors == tuple(deck_module.basemult(x) for x in factors)
        for p in (0, 33, 69):
            assert deck_module.scalarmult(secret.lock.keys[p], shuffle.key_base) == lock.factors[p]


def test_injected_secrets_give_a_reproducible_order() -> None:
    ctx = small_ctx(2, 5)
    secrets = [
        SeatSecrets(0, ShuffleSecret(scalar(3), (4, 3, 2, 1, 0)), LockSecret.new(5)),
        SeatSecrets(1, ShuffleSecret(scalar(5), (1, 0, 2, 3, 4)), LockSecret.new(5)),
    ]
    rnd = run_round(ctx, secrets)
    # out[i] = in[perm[i]]: first reversed, then the first two swapped.
    assert audit_deck(ctx, rnd.shuffles, rnd.locks, secrets) == ("R3", "R4", "R2", "R1", "R0")
    assert [rnd.open(p) for p in range(5)] == ["R3", "R4", "R2", "R1", "R0"]


def test_secret_generation_is_fresh() -> None:
    a, b = ShuffleSecret.new(70), ShuffleSecret.new(70)
    assert a.scalar != b.scalar and a.permutation != b.permutation
    assert sorted(a.permutation) == list(range(70))
    keys = LockSecret.new(70).keys
    assert len(set(keys)) == 70 and all(0 < int.from_bytes(k, "little") < L for k in keys)


def test_seeded_entropy_repeats_the_round_exactly_and_another_seed_does_not() -> None:
    ctx = small_ctx(3, 9)
    a, b, c = run_round(ctx, seed=5), run_round(ctx, seed=5), run_round(ctx, seed=6)
    assert a.shuffles == b.shuffles and a.locks == b.locks  # proofs too: nonces come from the entropy
    assert a.locks[0].proofs != c.locks[0].proofs and a.final != c.final


def test_proof_nonces_differ_between_passes_of_one_secret() -> None:
    # The same secrets locked twice with fresh entropy give fresh proofs (nonces are never reused).
    ctx = small_ctx()
    rnd = run_round(ctx)
    secret = rnd.secrets[1]
    first = lock_pass(ctx, 1, rnd.lock_input(1), secret.shuffle, secret.lock, seeded(100))
    second = lock_pass(ctx, 1, rnd.lock_input(1), secret.shuffle, secret.lock, seeded(101))
    assert first.points == second.points and first.factors == second.factors
    assert all(x != y for x, y in zip(first.proofs, second.proofs, strict=True))
    verify_lock(ctx, 1, rnd.lock_input(1), second)


def test_multiplications_per_pass_and_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The costs the module docstring states: variable-base and fixed-base multiplications counted apart.
    calls = {"var": 0, "base": 0}
    real_var, real_base = deck_module.scalarmult, deck_module.basemult

    def var(s: bytes, p: bytes) -> bytes:
        calls["var"] += 1
        return real_var(s, p)

    def base(s: bytes) -> bytes:
        calls["base"] += 1
        return real_base(s)

    monkeypatch.setattr(deck_module, "scalarmult", var)
    monkeypatch.setattr(deck_module, "basemult", base)
    seats, n = 3, 20
    rnd = run_round(small_ctx(seats, n))
    # Shuffle: n + 3 to make, 3 (+1 fixed-base) to check; lock: 2n (+2n) to make, 3n (+n) to check.
    assert calls == {"var": seats * ((n + 3) + 3 + 2 * n + 3 * n), "base": seats * (1 + 1 + 2 * n + n)}
    calls.update(var=0, base=0)
    rnd.open(7)
    assert calls == {"var": 1, "base": 0}  # the keys' product opens it to a card: nothing else to check


def test_wire_round_trips(six_seats: Round) -> None:
    ctx = six_seats.ctx
    s = six_seats.secrets[2]
    assert SeatSecrets.from_json(ctx, 2, s.to_json()) == s
    shuffle = six_seats.shuffles[2]
    assert set(shuffle.to_json()) == {"points", "key_base", "proof"}
    assert ShuffleOutput.from_json(ctx, 2, shuffle.to_json(), six_seats.shuffles[1].points) == shuffle
    lock = six_seats.locks[2]
    assert set(lock.to_json()) == {"points", "factors", "proofs"}
    assert LockOutput.from_json(ctx, 2, lock.to_json(), six_seats.lock_input(2)) == lock
    assert key_opening(2, s.lock, 5).to_json() == {"position": 5, "key": s.lock.keys[5].hex()}


# -- finding 2: the first locker moves a point (I5) -------------------------------------------------------


def moved_lock(
    ctx: DeckContext, seat: int, deck: Sequence[bytes], secret: SeatSecrets, source: int, target: int, strategy: str
) -> LockOutput:
    """A lock pass that feeds position ``source``'s point in as position ``target``'s input, with
    the best proof for ``target`` each strategy can make (the attacker has the whole code)."""
    honest = lock_pass(ctx, seat, deck, secret.shuffle, secret.lock, seeded(9))
    xs = lock_factors(secret.shuffle, secret.lock.keys)
    x = xs[target]
    moved_point = deck_module.scalarmult(x, deck[source])
    factor = honest.factors[target]
    entropy = seeded(10)
    claimed = (BASE_POINT, factor, deck[target], moved_point)
    x_int = int.from_bytes(x, "little")
    if strategy == "prove-what-was-done":  # a true proof, of the relation to the other input
        proof = deck_module._prove(
            ctx, b"lock", seat, target, x_int, (BASE_POINT, factor, deck[source], moved_point), entropy
        )
    elif strategy == "prove-the-claim":  # the prover's algorithm on the claimed statement, with x
        proof = deck_module._prove(ctx, b"lock", seat, target, x_int, claimed, entropy)
    elif strategy == "simulate":  # pick the challenge and response first, then the commitments
        c, z = scalar(12345), scalar(67890)
        proof = c + z
    elif strategy == "other-position":  # the honest proof of the position the point came from
        moved_point = honest.points[source]
        factor, proof = honest.factors[source], honest.proofs[source]
        # A copy of the point itself would be refused as a repeat: scale it by a known factor.
        moved_point = deck_module.scalarmult(scalar(2), moved_point)
    elif strategy == "adapt-the-factor":  # choose the factor after the challenge, to fit z
        r, z = scalar(777), scalar(888)
        r1 = deck_module.basemult(r)
        r2 = deck_module.scalarmult(r, deck[target])
        c = deck_module._challenge(ctx, b"lock", seat, target, (BASE_POINT, factor, deck[target], moved_point, r1, r2))
        # z·B = R1 + c·X  ⇒  X = c⁻¹·(z − r)·B: consistent for the first equation, not the hash.
        factor = deck_module.basemult(scalar((888 - 777) * pow(c, -1, L)))
        proof = scalar(c) + z
    else:  # pragma: no cover
        raise AssertionError(strategy)
    points, factors, proofs = list(honest.points), list(honest.factors), list(honest.proofs)
    points[target], factors[target], proofs[target] = moved_point, factor, proof
    return LockOutput(seat, tuple(points), tuple(factors), tuple(proofs))


STRATEGIES = ["prove-what-was-done", "prove-the-claim", "simulate", "other-position", "adapt-the-factor"]


def test_the_moved_lock_really_copies_a_card_without_the_proof_check() -> None:
    # The attack of finding 2, with nothing checked: position 5 opens to position 2's card. The
    # tests below show the proof check refusing exactly this pass.
    ctx = small_ctx(3, 9)
    rnd = run_round(ctx)
    attack = moved_lock(ctx, 0, rnd.lock_input(0), rnd.secrets[0], 2, 5, "prove-the-claim")
    points: Sequence[bytes] = attack.points
    for j in (1, 2):
        points = lock_pass(ctx, j, points, rnd.secrets[j].shuffle, rnd.secrets[j].lock, seeded(j)).points
    keys = [rnd.openings(5)[j].key for j in range(3)]
    product = 1
    for key in keys:
        product = product * int.from_bytes(key, "little") % L
    copied = deck_module.scalarmult(scalar(pow(product, -1, L)), points[5])
    assert ctx.cards.code_of(copied) == rnd.open(2)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_lock_that_moves_a_point_is_refused_naming_the_locker(strategy: str, seat: int) -> None:
    ctx = small_ctx(3, 9)
    rnd = run_round(ctx)
    attack = moved_lock(ctx, seat, rnd.lock_input(seat), rnd.secrets[seat], 2, 5, strategy)
    with expect_cheat(seat, "P-4.2", "lock proof for position 5 does not verify"):
        LockOutput.from_json(ctx, seat, attack.to_json(), rnd.lock_input(seat))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(2, 4),
    st.integers(3, 10),
    st.data(),
)
def test_property_every_honest_round_opens_and_every_moved_lock_is_refused(
    seed: int, seats: int, cards: int, data: st.DataObject
) -> None:
    ctx = make_ctx(seats, SIXTH_SENSE[:cards])
    rnd = run_round(ctx, seed=seed)  # every proof of every pass verified on receipt
    order = audit_deck(ctx, rnd.shuffles, rnd.locks, rnd.secrets)
    assert [rnd.open(p) for p in range(cards)] == list(order)
    assert sorted(order) == sorted(SIXTH_SENSE[:cards])
    seat = data.draw(st.integers(0, seats - 1), label="locker")
    source, target = data.draw(st.permutations(range(cards)), label="positions")[:2]
    strategy = data.draw(st.sampled_from(STRATEGIES), label="strategy")
    attack = moved_lock(ctx, seat, rnd.lock_input(seat), rnd.secrets[seat], source, target, strategy)
    with expect_cheat(seat, "P-4.2", f"lock proof for position {target} does not verify"):
        verify_lock(ctx, seat, rnd.lock_input(seat), attack)


# -- tampered lock passes and proofs, refused on receipt ----------------------------------------------


def tamper_field(seat: int, name: str, change: Callable[[list[str]], None]) -> Tamper:
    def tamper(j: int, wire: JSONObject) -> JSONObject:
        if j == seat:
            items = list(cast(list[str], wire[name]))
            change(items)
            wire = {**wire, name: items}
        return wire

    return tamper


def tamper_points(seat: int, change: Callable[[list[str]], None]) -> Tamper:
    return tamper_field(seat, "points", change)


def _bump_response(proofs: list[str]) -> None:
    proof = bytes.fromhex(proofs[4])
    z = (int.from_bytes(proof[32:], "little") + 1) % L
    proofs[4] = (proof[:32] + scalar(z)).hex()


def _bump_challenge(proofs: list[str]) -> None:
    proof = bytes.fromhex(proofs[4])
    c = (int.from_bytes(proof[:32], "little") + 1) % L
    proofs[4] = (scalar(c) + proof[32:]).hex()


def _swap_proofs(proofs: list[str]) -> None:
    proofs[4], proofs[5] = proofs[5], proofs[4]


def _other_factor(factors: list[str]) -> None:
    factors[4] = factors[5]


def _fresh_factor(factors: list[str]) -> None:
    factors[4] = fresh_point("factor").hex()


def _fresh_point(points: list[str]) -> None:
    points[4] = fresh_point("point").hex()


def _doubled_point(points: list[str]) -> None:
    points[4] = deck_module.scalarmult(scalar(2), bytes.fromhex(points[4])).hex()


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("proofs", _bump_response),
        ("proofs", _bump_challenge),
        ("proofs", _swap_proofs),
        ("factors", _other_factor),
        ("factors", _fresh_factor),
        ("points", _fresh_point),
        ("points", _doubled_point),
    ],
    ids=["response", "challenge", "swapped-proofs", "other-factor", "fresh-factor", "fresh-point", "doubled-point"],
)
def test_tampered_lock_proof_factor_or_point_is_refused(name: str, change: Callable[[list[str]], None]) -> None:
    with expect_cheat(1, "P-4.2", "lock proof for position 4 does not verify"):
        run_round(small_ctx(), tamper_lock=tamper_field(1, name, change))


def test_swapping_two_positions_whole_is_refused_the_proofs_name_their_position() -> None:
    # Point, factor and proof of positions 2 and 6 swapped, and the inputs too: each statement is one
    # that holds, but at the other position.
    ctx = small_ctx()
    rnd = run_round(ctx)
    lock, inputs = rnd.locks[1], list(rnd.lock_input(1))

    def swapped(items: Sequence[bytes]) -> tuple[bytes, ...]:
        out = list(items)
        out[2], out[6] = out[6], out[2]
        return tuple(out)

    moved = LockOutput(1, swapped(lock.points), swapped(lock.factors), swapped(lock.proofs))
    with expect_cheat(1, "P-4.2", "lock proof for position 2 does not verify"):
        verify_lock(ctx, 1, swapped(inputs), moved)


@pytest.mark.parametrize(
    "other",
    [
        make_ctx(3, SIXTH_SENSE[:9], table="d5" * 16),
        make_ctx(3, SIXTH_SENSE[:9], round=1),
        make_ctx(4, SIXTH_SENSE[:9]),
        DeckContext(TABLE, 0, 3, CardTable("take6", tuple(SIXTH_SENSE[:9]))),
    ],
    ids=["other-table", "other-round", "other-seat-count", "other-game"],
)
def test_a_proof_from_another_context_is_refused(other: DeckContext) -> None:
    # The same inputs and secrets, passes made for another deck context: replayed here, refused.
    ctx = small_ctx()
    rnd = run_round(ctx)
    secret = rnd.secrets[1]
    lock = lock_pass(other, 1, rnd.lock_input(1), secret.shuffle, secret.lock, seeded(3))
    with expect_cheat(1, "P-4.2", "lock proof for position 0 does not verify"):
        verify_lock(ctx, 1, rnd.lock_input(1), lock)
    inputs = rnd.shuffles[0].points
    shuffle = shuffle_pass(other, 1, inputs, secret.shuffle, seeded(4))
    with expect_cheat(1, "P-4.2", "shuffle proof does not verify"):
        verify_shuffle(ctx, 1, inputs, shuffle)


def test_a_proof_for_another_seat_is_refused() -> None:
    # Seat 1's lock pass presented as seat 2's (same input): the proofs name seat 1.
    ctx = small_ctx()
    rnd = run_round(ctx)
    as_two = replace(rnd.locks[1], seat=2)
    with expect_cheat(2, "P-4.2", "lock proof for position 0 does not verify"):
        verify_lock(ctx, 2, rnd.lock_input(1), as_two)
    with expect_cheat(2, "P-4.2", "shuffle proof does not verify"):
        verify_shuffle(ctx, 2, rnd.shuffles[0].points, replace(rnd.shuffles[1], seat=2))


def test_a_lock_checked_against_another_input_is_refused() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    with expect_cheat(2, "P-4.2", "lock proof for position 0 does not verify"):
        verify_lock(ctx, 2, rnd.lock_input(1), rnd.locks[2])


def _identity(points: list[str]) -> None:
    points[3] = IDENTITY_POINT.hex()


def _small_order(points: list[str]) -> None:
    points[3] = ORDER_8.hex()


def _mixed_order(points: list[str]) -> None:
    points[3] = add(bytes.fromhex(points[3]), ORDER_8).hex()


def _off_curve(points: list[str]) -> None:
    points[3] = "ff" * 32


def _upper_hex(points: list[str]) -> None:
    points[3] = points[3].upper()


def _not_hex(points: list[str]) -> None:
    cast(list[object], points)[3] = 7


def _duplicate(points: list[str]) -> None:
    points[5] = points[6]


def _drop(points: list[str]) -> None:
    del points[0]


BAD_POINTS = [
    (_identity, "position 3 is the identity point"),
    (_small_order, "position 3 is not a point of the prime-order subgroup"),
    (_mixed_order, "position 3 is not a point of the prime-order subgroup"),
    (_off_curve, "position 3 is not a point of the prime-order subgroup"),
    (_upper_hex, "not lowercase hex"),
    (_not_hex, "is not 64 hex digits"),
]


@pytest.mark.parametrize(("change", "fragment"), [*BAD_POINTS, (_duplicate, "repeats a point at positions 5 and 6")])
@pytest.mark.parametrize("stage", ["shuffle", "lock"])
def test_bad_pass_output_is_refused_on_receipt(change: Callable[[list[str]], None], fragment: str, stage: str) -> None:
    tamper = tamper_points(1, change)
    with expect_cheat(1, "P-4.4", fragment):
        if stage == "shuffle":
            run_round(small_ctx(), tamper_shuffle=tamper)
        else:
            run_round(small_ctx(), tamper_lock=tamper)


@pytest.mark.parametrize(("change", "fragment"), BAD_POINTS)
def test_bad_lock_factor_is_refused_on_receipt(change: Callable[[list[str]], None], fragment: str) -> None:
    with expect_cheat(1, "P-4.4", fragment.replace("position 3", "factor 3")):
        run_round(small_ctx(), tamper_lock=tamper_field(1, "factors", change))


@pytest.mark.parametrize(
    ("proof", "fragment"),
    [
        ((L.to_bytes(32, "little") + scalar(5)).hex(), "proof 2 does not hold two reduced non-zero scalars"),
        ((scalar(5) + bytes(32)).hex(), "proof 2 does not hold two reduced non-zero scalars"),
        ("00" * 63, "proofs[2] is not 128 hex digits"),
    ],
)
def test_malformed_lock_proof_is_refused(proof: str, fragment: str) -> None:
    with expect_cheat(1, "P-4.4", fragment):
        run_round(small_ctx(), tamper_lock=tamper_field(1, "proofs", lambda items: items.__setitem__(2, proof)))


@pytest.mark.parametrize("name", ["points", "factors", "proofs"])
@pytest.mark.parametrize("stage", ["drop", "extra"])
def test_lock_lists_of_the_wrong_length_are_refused(name: str, stage: str) -> None:
    def change(items: list[str]) -> None:
        if stage == "drop":
            del items[0]
        else:
            items.append(items[0])

    count = 8 if stage == "drop" else 10
    with expect_cheat(0, "P-4.4", f"has {count} entries, expected 9"):
        run_round(small_ctx(), tamper_lock=tamper_field(0, name, change))


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ({"points": []}, "lock output must be an object with exactly"),
        ({"points": [], "factors": [], "proofs": [], "commitments": []}, "must be an object with exactly"),
        ({"points": "ab", "factors": [], "proofs": []}, "points is not a list"),
    ],
)
def test_malformed_lock_output(wire: JSONObject, fragment: str) -> None:
    ctx = small_ctx()
    with expect_cheat(2, "P-4.4", fragment):
        LockOutput.from_json(ctx, 2, wire, ctx.cards.points)


def test_lock_output_in_memory_with_wrong_lengths() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    short = replace(rnd.locks[1], proofs=rnd.locks[1].proofs[:-1])
    with expect_cheat(1, "P-4.4", "has 9 factors and 8 proofs, expected 9"):
        verify_lock(ctx, 1, rnd.lock_input(1), short)
    with pytest.raises(ProtocolError, match="deck has 8 points, expected 9"):
        verify_lock(ctx, 1, rnd.lock_input(1)[:8], rnd.locks[1])


# -- the shuffle pass: its proof and what only the audit finds ---------------------------------------------


def test_shuffle_key_base_other_than_the_scalar_used_is_refused() -> None:
    # Points shuffled with s, key base and proof for another s': the keys would never check.
    ctx = small_ctx()
    rnd = run_round(ctx)
    inputs = rnd.shuffles[0].points
    used = rnd.secrets[1].shuffle
    claimed = ShuffleSecret(scalar(99), used.permutation)
    honest = shuffle_pass(ctx, 1, inputs, used, seeded(1))
    other = shuffle_pass(ctx, 1, inputs, claimed, seeded(1))
    for lying in (
        replace(honest, key_base=other.key_base),
        replace(honest, key_base=other.key_base, proof=other.proof),
    ):
        with expect_cheat(1, "P-4.2", "shuffle proof does not verify"):
            verify_shuffle(ctx, 1, inputs, lying)


@pytest.mark.parametrize(
    ("change", "rule", "fragment"),
    [
        ({"key_base": IDENTITY_POINT.hex()}, "P-4.4", "shuffle key base is the identity point"),
        ({"key_base": ORDER_8.hex()}, "P-4.4", "shuffle key base is not a point of the prime-order subgroup"),
        ({"key_base": BASE_POINT.hex()}, "P-4.2", "shuffle proof does not verify"),
        ({"key_base": "0" * 63}, "P-4.4", "shuffle key base is not 64 hex digits"),
        ({"proof": "00" * 64}, "P-4.4", "shuffle proof does not hold two reduced non-zero scalars"),
        ({"proof": "01" * 63}, "P-4.4", "shuffle proof is not 128 hex digits"),
        ({"proof": "01" * 64}, "P-4.2", "shuffle proof does not verify"),
    ],
)
def test_bad_shuffle_key_base_or_proof_is_refused(change: JSONObject, rule: str, fragment: str) -> None:
    with expect_cheat(2, rule, fragment):
        run_round(small_ctx(), tamper_shuffle=lambda j, wire: {**wire, **change} if j == 2 else wire)


def test_shuffle_whose_points_sum_to_the_identity_is_refused() -> None:
    ctx = small_ctx(2, 3)
    a, b = fresh_point("a"), fresh_point("b")
    points = (a, b, sub(sub(IDENTITY_POINT, a), b))
    out = ShuffleOutput(0, points, BASE_POINT, scalar(1) + scalar(1))
    with expect_cheat(0, "P-4.2", "sum to the identity point"):
        verify_shuffle(ctx, 0, ctx.cards.points, out)


@pytest.mark.parametrize("replacement", ["fresh-point", "multiple-of-another"])
def test_shuffle_that_replaces_one_card_is_refused_on_receipt(replacement: str) -> None:
    # One point replaced changes the sum the proof is about: caught at once, naming the shuffler.
    ctx = small_ctx(3, 9)

    def replace_last(j: int, wire: JSONObject) -> JSONObject:
        if j != 1:
            return wire
        points = list(cast(list[str], wire["points"]))
        last = bytes.fromhex(points[8])
        new = fresh_point("x") if replacement == "fresh-point" else deck_module.scalarmult(scalar(2), last)
        points[8] = new.hex()
        return {**wire, "points": points}

    with expect_cheat(1, "P-4.2", "shuffle proof does not verify"):
        run_round(ctx, tamper_shuffle=replace_last)


def keep_sum_replace(seat: int, a: int, b: int) -> Tamper:
    """Seat ``seat`` moves a fresh point's worth from position ``b`` to position ``a``: both become
    points of no card, the sum (and so the proof) is unchanged."""
    delta = fresh_point(f"delta/{seat}/{a}/{b}")

    def tamper(j: int, wire: JSONObject) -> JSONObject:
        if j != seat:
            return wire
        points = [bytes.fromhex(p) for p in cast(list[str], wire["points"])]
        points[a], points[b] = add(points[a], delta), sub(points[b], delta)
        return {**wire, "points": [p.hex() for p in points]}

    return tamper


def test_sum_keeping_replacement_never_opens_to_a_card_and_the_audit_names_the_shuffler() -> None:
    # What the shuffle proof cannot see (the points' sum is unchanged): both positions open to no
    # card (never to a copy of another), every other position opens as dealt, the audit names seat 2.
    rnd = run_round(small_ctx(4, 12), tamper_shuffle=keep_sum_replace(2, 4, 9))
    order_of_cards: dict[int, str | int] = {}
    broken = []
    for p in range(12):
        try:
            order_of_cards[p] = rnd.open(p)
        except CheatDetected as exc:
            assert exc.seat is None and exc.rule == "P-4.3" and "does not open to a card" in exc.message
            broken.append(p)
    assert len(broken) == 2 and len(set(order_of_cards.values())) == 10
    with expect_cheat(2, "P-4.2", "do not reproduce the shuffle pass"):
        audit_deck(rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)


def test_audit_names_the_first_cheater() -> None:
    ctx = small_ctx(4, 12)
    rnd = run_round(ctx, tamper_shuffle=lambda j, w: keep_sum_replace(3, 0, 1)(j, keep_sum_replace(1, 5, 6)(j, w)))
    with expect_cheat(1, "P-4.2", "shuffle pass (first difference at position 5)"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, rnd.secrets)


def test_published_permutation_that_was_not_used() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    lying = list(rnd.secrets)
    perm = list(lying[0].shuffle.permutation)
    perm[0], perm[1] = perm[1], perm[0]
    lying[0] = SeatSecrets(0, ShuffleSecret(lying[0].shuffle.scalar, tuple(perm)), lying[0].lock)
    with expect_cheat(0, "P-4.2", "do not reproduce the shuffle pass"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, lying)


def test_audit_refuses_published_keys_that_do_not_match_the_factors() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    lock = rnd.secrets[2].lock
    keys = list(lock.keys)
    keys[6] = deck_module.random_scalar()
    lying = [*rnd.secrets[:2], SeatSecrets(2, rnd.secrets[2].shuffle, LockSecret(tuple(keys)))]
    with expect_cheat(2, "P-4.2", "published key for position 6 does not reproduce the lock pass's factor"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, lying)


# -- dealing keys (P-4.3) ----------------------------------------------------------------------------------


def test_dealt_key_not_matching_its_factor_names_its_seat() -> None:
    ctx = small_ctx(4, 12)
    rnd = run_round(ctx)
    openings = rnd.openings(3)
    forged = KeyOpening(2, 3, deck_module.random_scalar())
    with expect_cheat(2, "P-4.3", "key for position 3 does not match its lock factor"):
        open_position(ctx, 3, rnd.final[3], [*openings[:2], forged, openings[3]], rnd.commitments)
    moved = KeyOpening(2, 3, rnd.secrets[2].lock.keys[4])  # a real key, of another position
    with expect_cheat(2, "P-4.3", "does not match its lock factor"):
        open_position(ctx, 3, rnd.final[3], [*openings[:2], moved, openings[3]], rnd.commitments)
    # Keys whose product is right open the one card the position holds, whoever's they are: the card
    # is fixed by the product (P-4.1: opening to another card takes a discrete log between cards).
    # A dealing key is checked alone where it arrives (`check_key_opening`).
    k1, k2 = openings[1].key, openings[2].key
    t = 7
    shifted = [
        openings[0],
        KeyOpening(1, 3, scalar(int.from_bytes(k1, "little") * t)),
        KeyOpening(2, 3, scalar(int.from_bytes(k2, "little") * pow(t, -1, L))),
        openings[3],
    ]
    assert open_position(ctx, 3, rnd.final[3], shifted, rnd.commitments) == rnd.open(3)
    with expect_cheat(1, "P-4.3", "does not match its lock factor"):
        check_key_opening(ctx, shifted[1], rnd.commitments[1])


def test_key_for_another_position_is_refused() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    openings = rnd.openings(0)
    openings[1] = key_opening(1, rnd.secrets[1].lock, 4)
    with expect_cheat(1, "P-4.3", "key sent for position 4 where 0 was asked"):
        open_position(ctx, 0, rnd.final[0], openings, rnd.commitments)


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("00" * 32, "is the zero scalar"),
        (L.to_bytes(32, "little").hex(), "not reduced modulo the group order"),
        ((L + 5).to_bytes(32, "little").hex(), "not reduced modulo the group order"),
        ("00" * 31, "is not 64 hex digits"),
    ],
)
def test_bad_key_opening_is_refused(key: str, fragment: str) -> None:
    ctx = small_ctx()
    with expect_cheat(1, "P-4.4", fragment):
        KeyOpening.from_json(ctx, 1, {"position": 0, "key": key})


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ({"position": 9, "key": "01" + "00" * 31}, "position 9 is not in 0..8"),
        ({"position": True, "key": "01" + "00" * 31}, "position True"),
        ({"position": 0, "key": "01" + "00" * 31, "nonce": "00" * 32}, "must be an object with exactly"),
        ({"position": 0}, "must be an object with exactly"),
    ],
)
def test_malformed_key_opening(wire: JSONObject, fragment: str) -> None:
    with expect_cheat(1, "P-4.4", fragment):
        KeyOpening.from_json(small_ctx(), 1, wire)


@pytest.mark.parametrize(
    ("change", "rule", "fragment"),
    [
        ({"scalar": "00" * 32}, "P-4.4", "shuffle scalar is the zero scalar"),
        ({"permutation": [0, 0, 1, 2, 3, 4, 5, 6, 7]}, "P-4.2", "not a permutation of 0..8"),
        ({"permutation": [0, 1]}, "P-4.2", "has 2 entries, expected 9"),
        ({"permutation": [0, 1, 2, 3, 4, 5, 6, 7, "8"]}, "P-4.2", "other than integers"),
        ({"keys": ["01" + "00" * 31] * 8}, "P-4.4", "keys has 8 entries, expected 9"),
        ({"keys": ["00" * 32] * 9}, "P-4.4", "key for position 0 is the zero scalar"),
        ({"keys": "x"}, "P-4.4", "keys is not a list"),
        ({"nonces": []}, "P-4.4", "must be an object with exactly"),
    ],
)
def test_malformed_seat_secrets(change: JSONObject, rule: str, fragment: str) -> None:
    ctx = small_ctx()
    good = SeatSecrets(1, ShuffleSecret.new(9), LockSecret.new(9)).to_json()
    with expect_cheat(1, rule, fragment):
        SeatSecrets.from_json(ctx, 1, {**good, **change})


def test_zero_scalar_is_refused_in_local_passes_too() -> None:
    ctx = small_ctx()
    with expect_cheat(0, "P-4.4", "shuffle scalar is the zero scalar"):
        shuffle_pass(ctx, 0, ctx.cards.points, ShuffleSecret(bytes(32), tuple(range(9))))
    with expect_cheat(0, "P-4.4", "key for position 0 is the zero scalar"):
        lock_pass(ctx, 0, ctx.cards.points, ShuffleSecret.new(9), LockSecret.new(9, keys=[bytes(32)] * 9))


def test_context_and_argument_errors_are_typed() -> None:
    ctx = small_ctx()
    with pytest.raises(ProtocolError, match="seat must be between 0 and 2"):
        ShuffleOutput.from_json(ctx, 3, {"points": []}, ctx.cards.points)
    with pytest.raises(ProtocolError, match="deck has 8 points, expected 9"):
        shuffle_pass(ctx, 0, ctx.cards.points[:8], ShuffleSecret.new(9))
    with pytest.raises(ProtocolError, match="table id"):
        DeckContext("zz", 0, 3, ctx.cards)
    rnd = run_round(ctx)
    with pytest.raises(ProtocolError, match="one key opening and one commitment list per seat"):
        open_position(ctx, 0, rnd.final[0], rnd.openings(0)[:2], rnd.commitments)
    with pytest.raises(ProtocolError, match="every seat's passes and secrets"):
        audit_deck(ctx, rnd.shuffles[:2], rnd.locks, rnd.secrets)
    with pytest.raises(ProtocolError, match="seat 0's shuffle goes with seat 1's lock"):
        key_commitments(rnd.shuffles[0], rnd.locks[1])
    with pytest.raises(ProtocolError, match="seat 1's lock output given as seat 2's"):
        verify_lock(ctx, 2, rnd.lock_input(1), rnd.locks[1])


fuzz_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**256) | st.text(alphabet="0123456789abcdefAB ", max_size=130),
    lambda inner: st.lists(inner, max_size=10),
    max_leaves=12,
)


FUZZ_CTX = small_ctx()


def _read_shuffle(ctx: DeckContext, seat: int, body: object) -> object:
    return ShuffleOutput.from_json(ctx, seat, body, ctx.cards.points)


def _read_lock(ctx: DeckContext, seat: int, body: object) -> object:
    return LockOutput.from_json(ctx, seat, body, ctx.cards.points)


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from([_read_shuffle, _read_lock, KeyOpening.from_json, SeatSecrets.from_json]),
    st.dictionaries(
        st.sampled_from(
            ["points", "key_base", "proof", "factors", "proofs", "position", "key", "scalar", "permutation", "keys"]
        ),
        fuzz_values,
    ),
)
def test_arbitrary_bodies_blame_their_author(
    reader: Callable[[DeckContext, int, object], object], body: dict[str, object]
) -> None:
    # Anything a seat signs that is not a well-formed body is that seat's fault, never a crash.
    try:
        reader(FUZZ_CTX, 1, body)
    except CheatDetected as exc:
        assert exc.seat == 1 and exc.rule in ("P-4.2", "P-4.4")
