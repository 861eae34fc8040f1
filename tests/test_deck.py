"""P-4: the mental-poker deck: passes, dealing, opening, validation and audit, all seats in memory.

Every pass output goes through its wire form (`to_json` then `from_json`) as a receiving seat would
read it, so the checks on receipt are exercised exactly where a real peer runs them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

import nacl.bindings as sodium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import deck as deck_module
from protocol.deck import (
    IDENTITY_POINT,
    CardTable,
    DeckContext,
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
    check_output,
    key_opening,
    lock_pass,
    open_position,
    shuffle_pass,
)
from protocol.encoding import JSONObject
from protocol.errors import CheatDetected, ProtocolError

TABLE = "c4" * 16
SIXTH_SENSE = tuple(f"{c}{v}" for c in "RYGBP" for v in (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14))
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")

Tamper = Callable[[int, JSONObject], JSONObject]


def scalar(n: int) -> bytes:
    return n.to_bytes(32, "little")


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
        return [lock.commitments for lock in self.locks]

    def openings(self, position: int) -> list[KeyOpening]:
        """Every seat's key for ``position``, each read as the receiver would read it."""
        return [
            KeyOpening.from_json(self.ctx, s.seat, key_opening(s.seat, s.lock, position).to_json())
            for s in self.secrets
        ]

    def open(self, position: int) -> str | int:
        return open_position(self.ctx, position, self.final[position], self.openings(position), self.commitments)


def make_ctx(seats: int, codes: Sequence[str] = SIXTH_SENSE, round: int = 0) -> DeckContext:
    return DeckContext(TABLE, round, seats, CardTable("sixth-sense", tuple(codes)))


def run_round(
    ctx: DeckContext,
    secrets: list[SeatSecrets] | None = None,
    tamper_shuffle: Tamper | None = None,
    tamper_lock: Tamper | None = None,
) -> Round:
    """Seat by seat, each pass is made by its seat and read back from its wire form by the next."""
    n = ctx.size
    if secrets is None:
        secrets = [SeatSecrets(j, ShuffleSecret.new(n), LockSecret.new(n)) for j in range(ctx.seats)]
    points: Sequence[bytes] = ctx.cards.points
    shuffles: list[ShuffleOutput] = []
    for j in range(ctx.seats):
        wire = shuffle_pass(ctx, j, points, secrets[j].shuffle).to_json()
        if tamper_shuffle is not None:
            wire = tamper_shuffle(j, wire)
        out = ShuffleOutput.from_json(ctx, j, wire)
        shuffles.append(out)
        points = out.points
    locks: list[LockOutput] = []
    for j in range(ctx.seats):
        wire = lock_pass(ctx, j, points, secrets[j].shuffle, secrets[j].lock).to_json()
        if tamper_lock is not None:
            wire = tamper_lock(j, wire)
        lock = LockOutput.from_json(ctx, j, wire)
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


def test_injected_secrets_give_a_reproducible_order() -> None:
    ctx = small_ctx(2, 5)
    secrets = [
        SeatSecrets(0, ShuffleSecret(scalar(3), (4, 3, 2, 1, 0)), LockSecret.new(5, nonces=[bytes(32)] * 5)),
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


def test_one_multiplication_per_card_per_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = deck_module.scalarmult

    def counting(s: bytes, p: bytes) -> bytes:
        nonlocal calls
        calls += 1
        return real(s, p)

    monkeypatch.setattr(deck_module, "scalarmult", counting)
    ctx = small_ctx(3, 20)
    rnd = run_round(ctx)
    assert calls == 2 * 3 * 20
    calls = 0
    rnd.open(7)
    assert calls == 1


def test_seat_secrets_wire_round_trip(six_seats: Round) -> None:
    s = six_seats.secrets[2]
    assert SeatSecrets.from_json(six_seats.ctx, 2, s.to_json()) == s


# -- cheating in the passes, caught on receipt (P-4.4) -----------------------------------------------


def tamper_points(seat: int, change: Callable[[list[str]], None]) -> Tamper:
    def tamper(j: int, wire: JSONObject) -> JSONObject:
        if j == seat:
            points = list(cast(list[str], wire["points"]))
            change(points)
            wire = {**wire, "points": points}
        return wire

    return tamper


def _duplicate(points: list[str]) -> None:
    points[5] = points[6]


def _drop(points: list[str]) -> None:
    del points[0]


def _identity(points: list[str]) -> None:
    points[3] = IDENTITY_POINT.hex()


def _small_order(points: list[str]) -> None:
    points[3] = ORDER_8.hex()


def _mixed_order(points: list[str]) -> None:
    points[3] = bytes(sodium.crypto_core_ed25519_add(bytes.fromhex(points[3]), ORDER_8)).hex()


def _off_curve(points: list[str]) -> None:
    points[3] = "ff" * 32


def _upper_hex(points: list[str]) -> None:
    points[3] = points[3].upper()


def _not_hex(points: list[str]) -> None:
    cast(list[object], points)[3] = 7


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (_duplicate, "repeats a point at positions 5 and 6"),
        (_drop, "has 8 entries, expected 9"),
        (_identity, "position 3 is the identity point"),
        (_small_order, "position 3 is not a point of the prime-order subgroup"),
        (_mixed_order, "position 3 is not a point of the prime-order subgroup"),
        (_off_curve, "position 3 is not a point of the prime-order subgroup"),
        (_upper_hex, "not lowercase hex"),
        (_not_hex, "is not 64 hex digits"),
    ],
)
@pytest.mark.parametrize("stage", ["shuffle", "lock"])
def test_bad_pass_output_is_refused_on_receipt(change: Callable[[list[str]], None], fragment: str, stage: str) -> None:
    tamper = tamper_points(1, change)
    with expect_cheat(1, "P-4.4", fragment):
        if stage == "shuffle":
            run_round(small_ctx(), tamper_shuffle=tamper)
        else:
            run_round(small_ctx(), tamper_lock=tamper)


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ({"points": []}, "lock output must be an object with exactly"),
        ({"points": "ab", "commitments": []}, "points is not a list"),
    ],
)
def test_malformed_lock_output(wire: JSONObject, fragment: str) -> None:
    with expect_cheat(2, "P-4.4", fragment):
        LockOutput.from_json(small_ctx(), 2, wire)


def test_lock_output_needs_a_commitment_per_position() -> None:
    def short(j: int, wire: JSONObject) -> JSONObject:
        return {**wire, "commitments": cast(list[str], wire["commitments"])[:-1]} if j == 0 else wire

    with expect_cheat(0, "P-4.4", "commitments has 8 entries, expected 9"):
        run_round(small_ctx(), tamper_lock=short)


def test_check_output_for_values_in_memory() -> None:
    ctx = small_ctx()
    out = shuffle_pass(ctx, 0, ctx.cards.points, ShuffleSecret.new(9))
    check_output(ctx, out)
    bad = ShuffleOutput(0, (*out.points[:-1], out.points[0]))
    with expect_cheat(0, "P-4.4", "repeats a point at positions 0 and 8"):
        check_output(ctx, bad)


# -- cheating found when dealing (P-4.3) or at the audit (P-4.2) ------------------------------------------


def replace_with_fresh_point(seat: int, position: int) -> Tamper:
    # Drops the card at ``position`` and puts in a valid point of no card: nothing shows on receipt.
    fresh = bytes(sodium.crypto_core_ed25519_from_uniform(b"\x42" * 32)).hex()
    return tamper_points(seat, lambda points: points.__setitem__(position, fresh))


@pytest.mark.parametrize("stage", ["shuffle", "lock"])
def test_dropped_card_is_refused_on_receipt(stage: str) -> None:
    # Dropping a card leaves the list short, or, with another card doubled to fill the gap, repeated.
    def drop_and_double(points: list[str]) -> None:
        points[4] = points[7]

    for change, fragment in [(_drop, "expected 9"), (drop_and_double, "repeats a point at positions 4 and 7")]:
        tamper = tamper_points(2, change)
        with expect_cheat(2, "P-4.4", fragment):
            if stage == "shuffle":
                run_round(small_ctx(), tamper_shuffle=tamper)
            else:
                run_round(small_ctx(), tamper_lock=tamper)


def test_card_replaced_by_a_fresh_point_shows_when_dealt_and_the_audit_names_the_seat() -> None:
    rnd = run_round(small_ctx(4, 12), tamper_shuffle=replace_with_fresh_point(2, 4))
    opened: list[str | int] = []
    with expect_cheat(None, "P-4.3", "does not open to a card of the deck"):
        for p in range(12):
            opened.append(rnd.open(p))
    assert len(opened) < 12
    with expect_cheat(2, "P-4.2", "do not reproduce the shuffle pass (first difference at position 4)"):
        audit_deck(rnd.ctx, rnd.shuffles, rnd.locks, rnd.secrets)


def test_card_replaced_by_a_multiple_of_another_is_named_by_the_audit() -> None:
    # Seat 1 puts s·2·C in place of its last point: valid and distinct, so nothing shows on receipt,
    # and nobody notices before the audit if that position stays in the stock.
    ctx = small_ctx(3, 9)
    secrets = [SeatSecrets(j, ShuffleSecret.new(9), LockSecret.new(9)) for j in range(3)]
    first = shuffle_pass(ctx, 0, ctx.cards.points, secrets[0].shuffle)
    honest = shuffle_pass(ctx, 1, first.points, secrets[1].shuffle).points
    extra = deck_module.scalarmult(secrets[1].shuffle.scalar, deck_module.scalarmult(scalar(2), first.points[0]))

    def replace(j: int, wire: JSONObject) -> JSONObject:
        return {"points": [p.hex() for p in (*honest[:-1], extra)]} if j == 1 else wire

    rnd = run_round(ctx, secrets, tamper_shuffle=replace)
    with expect_cheat(1, "P-4.2", "shuffle pass (first difference at position 8)"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, secrets)


def test_published_permutation_that_was_not_used() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    lying = list(rnd.secrets)
    perm = list(lying[0].shuffle.permutation)
    perm[0], perm[1] = perm[1], perm[0]
    lying[0] = SeatSecrets(0, ShuffleSecret(lying[0].shuffle.scalar, tuple(perm)), lying[0].lock)
    with expect_cheat(0, "P-4.2", "do not reproduce the shuffle pass"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, lying)


def test_dealt_key_not_matching_its_commitment() -> None:
    ctx = small_ctx(4, 12)
    rnd = run_round(ctx)
    openings = rnd.openings(3)
    forged = KeyOpening(2, 3, deck_module.random_scalar(), openings[2].nonce)
    with expect_cheat(2, "P-4.3", "key for position 3 does not match its commitment"):
        open_position(ctx, 3, rnd.final[3], [*openings[:2], forged, openings[3]], rnd.commitments)
    moved = KeyOpening(2, 3, rnd.secrets[2].lock.keys[4], rnd.secrets[2].lock.nonces[4])
    with expect_cheat(2, "P-4.3", "does not match its commitment"):
        open_position(ctx, 3, rnd.final[3], [*openings[:2], moved, openings[3]], rnd.commitments)


def test_lock_with_a_key_other_than_the_committed_one() -> None:
    # Seat 1 commits to its keys but locks position 2 with another: dealing position 2 gives no card,
    # and the audit names seat 1.
    ctx = small_ctx(3, 9)
    secrets = [SeatSecrets(j, ShuffleSecret.new(9), LockSecret.new(9)) for j in range(3)]
    used = list(secrets[1].lock.keys)
    used[2] = deck_module.random_scalar()
    inputs: list[tuple[bytes, ...]] = []

    def swap_key(j: int, wire: JSONObject) -> JSONObject:
        if j == 0:
            inputs.append(tuple(bytes.fromhex(p) for p in cast(list[str], wire["points"])))
        if j != 1:
            return wire
        real = lock_pass(ctx, 1, inputs[0], secrets[1].shuffle, LockSecret(tuple(used), secrets[1].lock.nonces))
        return {**wire, "points": [p.hex() for p in real.points]}

    rnd = run_round(ctx, secrets, tamper_lock=swap_key)
    with expect_cheat(None, "P-4.3", "does not open to a card"):
        rnd.open(2)
    assert rnd.open(3) in SIXTH_SENSE
    with expect_cheat(1, "P-4.2", "do not reproduce the lock pass (first difference at position 2)"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, secrets)


def test_audit_refuses_keys_that_do_not_match_commitments() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    lock = rnd.secrets[2].lock
    keys = list(lock.keys)
    keys[6] = deck_module.random_scalar()
    lying = [*rnd.secrets[:2], SeatSecrets(2, rnd.secrets[2].shuffle, LockSecret(tuple(keys), lock.nonces))]
    with expect_cheat(2, "P-4.2", "key for position 6 does not match the published commitment"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, lying)


def test_audit_names_the_first_cheater() -> None:
    ctx = small_ctx(4, 12)
    rnd = run_round(
        ctx, tamper_shuffle=lambda j, w: replace_with_fresh_point(3, 0)(j, replace_with_fresh_point(1, 5)(j, w))
    )
    with expect_cheat(1, "P-4.2", "shuffle pass"):
        audit_deck(ctx, rnd.shuffles, rnd.locks, rnd.secrets)


# -- scalars (P-4.4) ----------------------------------------------------------------------------------------


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
        KeyOpening.from_json(ctx, 1, {"position": 0, "key": key, "nonce": "00" * 32})


@pytest.mark.parametrize(
    ("wire", "fragment"),
    [
        ({"position": 9, "key": "01" + "00" * 31, "nonce": "00" * 32}, "position 9 is not in 0..8"),
        ({"position": True, "key": "01" + "00" * 31, "nonce": "00" * 32}, "position True"),
        ({"position": 0, "key": "01" + "00" * 31, "nonce": "00"}, "nonce is not 64 hex digits"),
        ({"position": 0, "key": "01" + "00" * 31}, "must be an object with exactly"),
    ],
)
def test_malformed_key_opening(wire: JSONObject, fragment: str) -> None:
    with expect_cheat(1, "P-4.4", fragment):
        KeyOpening.from_json(small_ctx(), 1, wire)


def test_key_for_another_position_is_refused() -> None:
    ctx = small_ctx()
    rnd = run_round(ctx)
    openings = rnd.openings(0)
    openings[1] = key_opening(1, rnd.secrets[1].lock, 4)
    with expect_cheat(1, "P-4.3", "key sent for position 4 where 0 was asked"):
        open_position(ctx, 0, rnd.final[0], openings, rnd.commitments)


@pytest.mark.parametrize(
    ("change", "rule", "fragment"),
    [
        ({"scalar": "00" * 32}, "P-4.4", "shuffle scalar is the zero scalar"),
        ({"permutation": [0, 0, 1, 2, 3, 4, 5, 6, 7]}, "P-4.2", "not a permutation of 0..8"),
        ({"permutation": [0, 1]}, "P-4.2", "has 2 entries, expected 9"),
        ({"permutation": [0, 1, 2, 3, 4, 5, 6, 7, "8"]}, "P-4.2", "other than integers"),
        ({"keys": ["01" + "00" * 31] * 8}, "P-4.4", "keys has 8 entries, expected 9"),
        ({"keys": ["00" * 32] * 9}, "P-4.4", "key for position 0 is the zero scalar"),
        ({"nonces": "x"}, "P-4.4", "nonces is not a list"),
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
        ShuffleOutput.from_json(ctx, 3, {"points": []})
    with pytest.raises(ProtocolError, match="deck has 8 points, expected 9"):
        shuffle_pass(ctx, 0, ctx.cards.points[:8], ShuffleSecret.new(9))
    with pytest.raises(ProtocolError, match="table id"):
        DeckContext("zz", 0, 3, ctx.cards)
    rnd = run_round(ctx)
    with pytest.raises(ProtocolError, match="one key opening and one commitment list per seat"):
        open_position(ctx, 0, rnd.final[0], rnd.openings(0)[:2], rnd.commitments)
    with pytest.raises(ProtocolError, match="every seat's passes and secrets"):
        audit_deck(ctx, rnd.shuffles[:2], rnd.locks, rnd.secrets)


fuzz_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**256) | st.text(alphabet="0123456789abcdefAB ", max_size=66),
    lambda inner: st.lists(inner, max_size=10),
    max_leaves=12,
)


FUZZ_CTX = small_ctx()


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from([ShuffleOutput.from_json, LockOutput.from_json, KeyOpening.from_json, SeatSecrets.from_json]),
    st.dictionaries(
        st.sampled_from(
            ["points", "commitments", "position", "key", "nonce", "scalar", "permutation", "keys", "nonces"]
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
