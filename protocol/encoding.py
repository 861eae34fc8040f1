"""Canonical JSON encoding (P-2.1): the bytes that hashes and signatures cover.

The canonical form of a value is its JSON text with keys sorted by Unicode code point, no
insignificant whitespace, non-ASCII characters written as UTF-8 (not ``\\u`` escapes), encoded as
UTF-8. Allowed values: ``None``, ``bool``, ``int`` in the signed 64-bit range (so that every peer's
JSON library reads them exactly), ``str`` (valid Unicode), lists (tuples are written as lists) and
dicts with ``str`` keys, nested at most `MAX_DEPTH` deep. Floats are refused everywhere: two
peers may round them differently. Bytes are written by the caller as lowercase hex (`b2h`/`h2b`).

`decode` accepts any well-formed JSON object (whitespace and key order are free), but refuses
duplicate keys, floats, ``NaN``/``Infinity``, invalid UTF-8 and oversize input; a hash or signature
is always taken over `canonical` of the decoded value, never over the received bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import NoReturn

from protocol.errors import ProtocolError

RULE = "P-2.1"
MAX_DEPTH = 32
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1

JSONObject = dict[str, object]

_HEX_RE = re.compile(r"(?:[0-9a-f]{2})*")


def _fail(message: str) -> NoReturn:
    raise ProtocolError(RULE, message)


def _normalize(value: object, path: str, depth: int) -> object:
    # One walk both checks the value (every refusal names where the bad part is) and turns tuples and
    # read-only mappings into the lists and dicts that `json` writes.
    if depth > MAX_DEPTH:
        _fail(f"{path}: nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            _fail(f"{path}: integer {value} is outside the signed 64-bit range")
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            _fail(f"{path}: string is not valid Unicode (lone surrogate)")
        return value
    if isinstance(value, float):
        _fail(f"{path}: floats are not allowed ({value!r})")
    if isinstance(value, list | tuple):
        return [_normalize(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        out: JSONObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                _fail(f"{path}: object key {key!r} is not a string")
            _normalize(key, f"{path} key", depth + 1)
            out[key] = _normalize(item, f"{path}.{key}", depth + 1)
        return out
    _fail(f"{path}: a {type(value).__name__} is not a JSON value")


class _NotPlain(Exception):
    pass


def _fast(value: object, depth: int) -> object:
    # The common case, with no path bookkeeping: exact builtin types only. Anything unusual (or
    # wrong) falls back to `_normalize`, which says where the bad part is.
    kind = type(value)
    if kind is str:
        value.encode("utf-8")  # type: ignore[attr-defined]
        return value
    if kind is int:
        if not INT_MIN <= value <= INT_MAX:  # type: ignore[operator]
            raise _NotPlain
        return value
    if value is None or kind is bool:
        return value
    if depth >= MAX_DEPTH:
        raise _NotPlain
    if kind is list or kind is tuple:
        return [_fast(item, depth + 1) for item in value]  # type: ignore[attr-defined]
    if kind is dict:
        out: JSONObject = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise _NotPlain
            key.encode("utf-8")
            out[key] = _fast(item, depth + 1)
        return out
    raise _NotPlain


def plain_copy(value: JSONObject) -> JSONObject:
    """A fresh copy of a JSON object that `canonical` accepts, as `decode(canonical(value))` gives it:
    no list or dict shared with `value`, tuples and read-only mappings as lists and dicts, every
    object's keys in sorted order (so a value written out reads the same wherever it was made)."""
    try:
        plain = _fast(value, 0)
    except (_NotPlain, UnicodeEncodeError):
        plain = _normalize(value, "$", 0)
    out = _sorted(plain)
    assert isinstance(out, dict)
    return out


def _sorted(value: object) -> object:
    if type(value) is dict:
        return {key: _sorted(value[key]) for key in sorted(value)}
    if type(value) is list:
        return [_sorted(item) for item in value]
    return value


def nesting_depth(value: object) -> int:
    """How deep lists and objects nest in a JSON value, as `canonical` counts it (a scalar: 0, an
    empty list: 1). A value decoded here is at most `MAX_DEPTH` deep, so the walk is bounded."""
    if isinstance(value, list | tuple):
        return 1 + max(map(nesting_depth, value), default=0)
    if isinstance(value, Mapping):
        return 1 + max(map(nesting_depth, value.values()), default=0)
    return 0


def canonical(obj: object) -> bytes:
    """The canonical bytes of a JSON value; `ProtocolError` (P-2.1) names the first bad part."""
    try:
        plain = _fast(obj, 0)
    except (_NotPlain, UnicodeEncodeError):
        plain = _normalize(obj, "$", 0)
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def _no_floats(text: str) -> NoReturn:
    _fail(f"floats are not allowed ({text})")


def _no_constants(text: str) -> NoReturn:
    _fail(f"{text} is not allowed")


def _pairs(pairs: list[tuple[str, object]]) -> JSONObject:
    out: JSONObject = {}
    for key, value in pairs:
        if key in out:
            _fail(f"duplicate key {key!r}")
        out[key] = value
    return out


def decode(data: bytes, max_size: int) -> JSONObject:
    """Parse one JSON object of at most ``max_size`` bytes; anything else is a `ProtocolError`."""
    if not isinstance(data, bytes):
        _fail(f"expected bytes, got {type(data).__name__}")
    if len(data) > max_size:
        _fail(f"message of {len(data)} bytes exceeds the limit of {max_size}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(f"invalid UTF-8 at byte {exc.start}")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_float=_no_floats,
            parse_constant=_no_constants,
        )
    except RecursionError:
        _fail("nested too deeply")
    except json.JSONDecodeError as exc:
        _fail(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except ValueError:  # Python's own limit on the digits of an int; the 64-bit range is checked below
        _fail("an integer is outside the signed 64-bit range")
    if not isinstance(value, dict):
        _fail(f"top level must be a JSON object, got {type(value).__name__}")
    # Catches what the parser lets through: depth within the recursion limit, lone surrogates from
    # ``\\ud800`` escapes. The quick walk first; the one that names the bad part only on a failure.
    try:
        _check_plain(value, 0)
    except (_NotPlain, UnicodeEncodeError):
        _normalize(value, "$", 0)
    return value


def _check_plain(value: object, depth: int) -> None:
    # What `_fast` checks, without the copy: a value `json.loads` made holds only exact builtin types.
    kind = type(value)
    if kind is str:
        value.encode("utf-8")  # type: ignore[attr-defined]
    elif kind is list:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        for item in value:  # type: ignore[attr-defined]
            if type(item) is str:
                item.encode("utf-8")
            elif type(item) is int:
                if not INT_MIN <= item <= INT_MAX:
                    raise _NotPlain
            else:
                _check_plain(item, depth + 1)
    elif kind is dict:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        for key, item in value.items():  # type: ignore[attr-defined]
            key.encode("utf-8")
            if type(item) is str:
                item.encode("utf-8")
            elif type(item) is int:
                if not INT_MIN <= item <= INT_MAX:
                    raise _NotPlain
            else:
                _check_plain(item, depth + 1)


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def b2h(data: bytes, length: int | None = None) -> str:
    """Bytes as lowercase hex; ``length`` (in bytes), when given, must match."""
    if not isinstance(data, bytes):
        _fail(f"expected bytes, got {type(data).__name__}")
    if length is not None and len(data) != length:
        _fail(f"expected {length} bytes, got {len(data)}")
    return data.hex()


def h2b(text: object, length: int | None = None, what: str = "value") -> bytes:
    """Lowercase hex back to bytes, refusing anything else (upper case, odd length, wrong ``length``).

    One spelling per value keeps the canonical encoding canonical: ``"AB"`` and ``"ab"`` must not
    both be accepted for the same bytes."""
    if not isinstance(text, str):
        _fail(f"{what}: expected a hex string, got {type(text).__name__}")
    if _HEX_RE.fullmatch(text) is None:
        _fail(f"{what}: not lowercase hex of whole bytes")
    data = bytes.fromhex(text)
    if length is not None and len(data) != length:
        _fail(f"{what}: expected {length} bytes ({2 * length} hex digits), got {len(data)}")
    return data


TABLE_ID_MIN_BYTES = 8
TABLE_ID_MAX_BYTES = 32


def check_table_id(table: object, rule: str = RULE) -> str:
    """A table id is lowercase hex of 8 to 32 bytes; returns it, or raises `ProtocolError`."""
    if not isinstance(table, str):
        raise ProtocolError(rule, f"table id must be a string, got {type(table).__name__}")
    if _HEX_RE.fullmatch(table) is None or not 2 * TABLE_ID_MIN_BYTES <= len(table) <= 2 * TABLE_ID_MAX_BYTES:
        raise ProtocolError(
            rule,
            f"table id must be lowercase hex of {TABLE_ID_MIN_BYTES} to {TABLE_ID_MAX_BYTES} bytes: {table[:80]!r}",
        )
    return table


def check_int(value: object, what: str, rule: str = RULE, low: int = 0, high: int = INT_MAX) -> int:
    """An ``int`` (never a ``bool``) in ``[low, high]``; returns it, or raises `ProtocolError`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(rule, f"{what} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise ProtocolError(rule, f"{what} must be between {low} and {high}, got {value}")
    return value
