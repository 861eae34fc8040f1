"""P-3: hash commitments and jointly random values."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.commitment import (
    Commitment,
    Opening,
    commit,
    commitment_digest,
    draw_below,
    joint_random,
    verify_opening,
)
from protocol.errors import CheatDetected, ProtocolError

TABLE = "9e" * 16
NONCE = bytes(range(32))


def test_digest_layout_matches_the_spec() -> None:
    value = b"R7"
    expected = hashlib.sha256(
        struct.pack(">I", 7)
        + b"predict"
        + struct.pack(">I", 32)
        + TABLE.encode()
        + struct.pack(">QI", 3, 2)
        + struct.pack(">I", 2)
        + value
        + NONCE
    ).digest()
    assert commitment_digest("predict", TABLE, 3, 2, value, NONCE) == expected


def test_commit_then_open() -> None:
    c, o = commit("predict", TABLE, 1, 2, b"R7")
    assert len(o.nonce) == 32 and o.value == b"R7"
    verify_opening(c, o, "predict", TABLE, 1, 2)
    assert Commitment.from_hex(c.hex()) == c


def test_fresh_nonce_each_time_hides_equal_values() -> None:
    c1, o1 = commit("predict", TABLE, 1, 2, b"R7")
    c2, o2 = commit("predict", TABLE, 1, 2, b"R7")
    assert o1.nonce != o2.nonce and c1 != c2


@pytest.mark.parametrize(
    ("tag", "round", "seat", "value", "nonce"),
    [
        ("predict", 1, 2, b"R8", NONCE),  # another value
        ("predict", 1, 2, b"R7", bytes(32)),  # another nonce
        ("choice", 1, 2, b"R7", NONCE),  # another use
        ("predict", 2, 2, b"R7", NONCE),  # another round
        ("predict", 1, 3, b"R7", NONCE),  # another seat's
    ],
)
def test_opening_binds_every_field(tag: str, round: int, seat: int, value: bytes, nonce: bytes) -> None:
    c, _ = commit("predict", TABLE, 1, 2, b"R7", NONCE)
    with pytest.raises(CheatDetected) as info:
        verify_opening(c, Opening(value, nonce), tag, TABLE, round, seat)
    assert info.value.rule == "P-3.3"
    assert info.value.seat == seat


def test_table_is_bound() -> None:
    c, o = commit("predict", TABLE, 1, 2, b"R7", NONCE)
    with pytest.raises(CheatDetected, match="does not match"):
        verify_opening(c, o, "predict", "9f" * 16, 1, 2)


@given(st.text(alphabet="ab", min_size=1, max_size=8), st.data())
def test_length_prefix_removes_ambiguity(text: str, data: st.DataObject) -> None:
    # Plain concatenation would give tag "ta" + value "b" and tag "t" + value "ab" the same input.
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(0, len(text)).filter(lambda j: j != i))
    at_i = commitment_digest("t" + text[:i], TABLE, 0, 0, text[i:].encode(), NONCE)
    at_j = commitment_digest("t" + text[:j], TABLE, 0, 0, text[j:].encode(), NONCE)
    assert at_i != at_j


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("", TABLE, 0, 0, b"v", NONCE), "tag must not be empty"),
        ((5, TABLE, 0, 0, b"v", NONCE), "tag must be a string"),
        (("t", "nothex", 0, 0, b"v", NONCE), "table id"),
        (("t", TABLE, -1, 0, b"v", NONCE), "round must be between"),
        (("t", TABLE, 0, 2**32, b"v", NONCE), "seat must be between"),
        (("t", TABLE, 0, True, b"v", NONCE), "seat must be an integer"),
        (("t", TABLE, 0, 0, "v", NONCE), "committed value is bytes"),
        (("t", TABLE, 0, 0, b"v", b"short"), "nonce is 32 bytes"),
    ],
)
def test_bad_arguments_are_typed_errors(args: tuple[object, ...], fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        commitment_digest(*args)  # type: ignore[arg-type]


def test_commitment_from_hex_checks_length() -> None:
    with pytest.raises(ProtocolError, match="expected 32 bytes"):
        Commitment.from_hex("00" * 31)


def test_joint_random_depends_on_every_reveal_and_order() -> None:
    reveals = [b"a" * 32, b"b" * 32, b"c" * 32]
    r = joint_random(reveals)
    assert len(r) == 32
    assert joint_random(reveals) == r
    assert joint_random([reveals[1], reveals[0], reveals[2]]) != r
    assert joint_random([*reveals[:2], b"d" * 32]) != r
    assert joint_random([b"ab", b"c"]) != joint_random([b"a", b"bc"])
    with pytest.raises(ProtocolError, match="at least one reveal"):
        joint_random([])
    with pytest.raises(ProtocolError, match="reveal 1 must be bytes"):
        joint_random([b"x", "y"])  # type: ignore[list-item]


def test_draw_below_is_in_range_deterministic_and_spread() -> None:
    seed = joint_random([b"x"])
    assert draw_below(seed, 6) == draw_below(seed, 6)
    draws = [draw_below(seed, 6, f"draw {i}") for i in range(600)]
    assert set(draws) == set(range(6))
    assert all(60 <= draws.count(v) <= 140 for v in range(6))
    assert draw_below(seed, 1) == 0
    with pytest.raises(ProtocolError, match="n must be between 1"):
        draw_below(seed, 0)
