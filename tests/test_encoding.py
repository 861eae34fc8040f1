"""P-2.1: the canonical encoding and its strict decoder."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.encoding import (
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    b2h,
    canonical,
    check_table_id,
    decode,
    h2b,
    plain_copy,
    sha256_hex,
)
from protocol.errors import ProtocolError

json_scalars = st.none() | st.booleans() | st.integers(INT_MIN, INT_MAX) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=6)


def refused(fragment: str) -> pytest.RaisesExc[ProtocolError]:
    return pytest.raises(ProtocolError, match=fragment)


@settings(max_examples=60)
@given(json_objects)
def test_round_trip_is_identity(obj: dict[str, object]) -> None:
    data = canonical(obj)
    assert decode(data, len(data)) == obj
    assert canonical(decode(data, len(data))) == data


@settings(max_examples=60)
@given(json_objects)
def test_any_spelling_decodes_to_the_same_canonical_bytes(obj: dict[str, object]) -> None:
    # Peers may send whitespace, another key order or \u escapes; hashes are over the re-encoding.
    loose = json.dumps(obj, indent=2, ensure_ascii=True, sort_keys=False).encode()
    assert canonical(decode(loose, len(loose))) == canonical(obj)


def test_canonical_form_is_sorted_compact_utf8() -> None:
    assert canonical({"b": 1, "a": [True, None, "é"], "c": {"y": -2, "x": ""}}) == (
        '{"a":[true,null,"é"],"b":1,"c":{"x":"","y":-2}}'.encode()
    )
    assert canonical({"t": (1, 2)}) == b'{"t":[1,2]}'


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"x": 1.5}, r"\$\.x: floats are not allowed"),
        ({"x": [0, float("nan")]}, r"\$\.x\[1\]: floats"),
        ({1: "a"}, "key 1 is not a string"),
        ({"x": b"raw"}, "bytes is not a JSON value"),
        ({"x": {1, 2}}, "set is not a JSON value"),
        ({"x": 2**63}, "outside the signed 64-bit range"),
        ({"x": "\ud800"}, "lone surrogate"),
    ],
)
def test_canonical_refuses_what_peers_could_disagree_on(value: object, fragment: str) -> None:
    with refused(fragment):
        canonical(value)


def test_canonical_refuses_deep_nesting() -> None:
    deep: object = 0
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with refused("nested deeper"):
        canonical({"x": deep})


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b'{"a":1.0}', r"floats are not allowed \(1.0\)"),
        (b'{"a":1e3}', "floats are not allowed"),
        (b'{"a":NaN}', "NaN is not allowed"),
        (b'{"a":-Infinity}', "-Infinity is not allowed"),
        (b'{"a":1,"a":2}', "duplicate key 'a'"),
        (b'{"a":{"b":1,"b":1}}', "duplicate key 'b'"),
        (b"[1,2]", "top level must be a JSON object, got list"),
        (b'"x"', "top level must be a JSON object, got str"),
        (b'{"a":1', "not valid JSON"),
        (b"", "not valid JSON"),
        (b'{"a":"\xff"}', "invalid UTF-8 at byte 6"),
        (b'{"a":"\\ud800"}', "lone surrogate"),
        (b'{"a":99999999999999999999}', "outside the signed 64-bit range"),
        (b'{"a":' + b"9" * 5000 + b"}", "outside the signed 64-bit range"),
        (b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested"),
    ],
)
def test_decode_refuses_bad_input(data: bytes, fragment: str) -> None:
    with refused(fragment):
        decode(data, 1_000_000)


def test_decode_refuses_oversize_before_parsing() -> None:
    with refused("message of 12 bytes exceeds the limit of 11"):
        decode(b'{"a":"xxxx"}', 11)
    assert decode(b'{"a":"xxxx"}', 12) == {"a": "xxxx"}


def test_decode_refuses_non_bytes() -> None:
    with refused("expected bytes, got str"):
        decode("{}", 10)  # type: ignore[arg-type]


def test_error_names_the_rule() -> None:
    with pytest.raises(ProtocolError) as info:
        decode(b"[]", 10)
    assert info.value.rule == "P-2.1"
    assert "top level" in info.value.message


@given(st.binary(max_size=40))
def test_hex_round_trip(data: bytes) -> None:
    assert h2b(b2h(data), len(data)) == data


@pytest.mark.parametrize(
    ("text", "length", "fragment"),
    [
        ("AB", None, "not lowercase hex"),
        ("abc", None, "not lowercase hex"),
        ("zz", None, "not lowercase hex"),
        (" ab", None, "not lowercase hex"),
        ("abcd", 3, "expected 3 bytes"),
        (12, None, "expected a hex string, got int"),
    ],
)
def test_h2b_refuses(text: object, length: int | None, fragment: str) -> None:
    with refused(fragment):
        h2b(text, length)


def test_b2h_checks_length() -> None:
    assert b2h(b"\x00\xff", 2) == "00ff"
    with refused("expected 3 bytes, got 2"):
        b2h(b"\x00\xff", 3)


def test_sha256_hex() -> None:
    assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_table_ids() -> None:
    assert check_table_id("ab" * 8) == "ab" * 8
    for bad in ["ab" * 7, "ab" * 33, "AB" * 8, "abc" * 7, 5]:
        with refused("table id"):
            check_table_id(bad)


def test_a_signed_message_body_reads_as_its_wire_form_wherever_it_was_made() -> None:
    """P-2.1: the body a signed message keeps is the one its canonical bytes decode to, keys in sorted
    order at every depth, so a record written by the author and by a reader is the same bytes."""
    value = {"b": [{"z": 1, "a": (1, 2)}], "a": "x", "c": {"y": None, "x": True}}
    copy = plain_copy(value)
    again = decode(canonical(value), 1 << 20)
    assert copy == again
    assert json.dumps(copy) == json.dumps(again)  # the same key order, not only equal
    assert copy["b"] is not value["b"]
