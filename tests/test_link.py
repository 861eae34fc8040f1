"""P-1.2: the link handshake and its encrypted frames, two sides wired together in memory."""

from __future__ import annotations

import hashlib
import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.encoding import canonical, decode
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.link import AUTH_DOMAIN, COUNTER_BYTES, TAG_BYTES, TRANSCRIPT_DOMAIN, Handshake, LinkCipher

TABLE = "7c" * 16
ALICE = Identity.from_private_bytes(b"A" * 32)
BOB = Identity.from_private_bytes(b"B" * 32)
MALLORY = Identity.from_private_bytes(b"M" * 32)


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def pair() -> tuple[Handshake, Handshake]:
    """Alice dials Bob and wants Bob; Bob accepts anyone. Fixed secrets keep the bytes reproducible."""
    return (
        Handshake(ALICE, TABLE, BOB.peer_id, "initiator", ephemeral=b"\x11" * 32, nonce=b"\x01" * 32),
        Handshake(BOB, TABLE, None, "responder", ephemeral=b"\x22" * 32, nonce=b"\x02" * 32),
    )


def connect(a: Handshake, b: Handshake) -> tuple[LinkCipher, LinkCipher]:
    hello_a, hello_b = a.start(), b.start()
    auth_b = b.receive(hello_a)
    auth_a = a.receive(hello_b)
    assert auth_a is not None and auth_b is not None
    assert a.receive(auth_b) is None
    assert b.receive(auth_a) is None
    return a.done, b.done


def test_handshake_then_frames_both_ways() -> None:
    a, b = pair()
    assert not a.complete
    ca, cb = connect(a, b)
    assert a.complete and b.complete
    assert ca.peer == BOB.public and cb.peer == ALICE.public
    assert b.peer == ALICE.public  # accepted anyone, and says who it was
    for i in range(3):
        assert cb.open(ca.seal(f"to bob {i}".encode())) == f"to bob {i}".encode()
        assert ca.open(cb.seal(f"to alice {i}".encode())) == f"to alice {i}".encode()


def test_frames_hide_the_plaintext_and_carry_a_counter() -> None:
    ca, _ = connect(*pair())
    frame0 = ca.seal(b"secret card key")
    frame1 = ca.seal(b"secret card key")
    assert b"secret" not in frame0
    assert frame0[:COUNTER_BYTES] == bytes(8) and frame1[:COUNTER_BYTES] == (1).to_bytes(8, "big")
    assert frame0[COUNTER_BYTES:] != frame1[COUNTER_BYTES:]
    assert len(frame0) == COUNTER_BYTES + len(b"secret card key") + TAG_BYTES


def test_directions_use_different_keys() -> None:
    ca, _ = connect(*pair())
    # A frame reflected back to its sender does not open: each direction has its own key.
    with pytest.raises(ProtocolError, match="failed authentication"):
        ca.open(ca.seal(b"hello"))


def test_replayed_reordered_missing_frames_are_refused() -> None:
    ca, cb = connect(*pair())
    f0, f1, f2 = ca.seal(b"0"), ca.seal(b"1"), ca.seal(b"2")
    with pytest.raises(ProtocolError, match="frames missing: counter 1, expected 0"):
        cb.open(f1)
    assert cb.open(f0) == b"0"
    with pytest.raises(ProtocolError, match="replayed or reordered frame: counter 0, expected 1") as info:
        cb.open(f0)
    assert info.value.rule == "P-1.2"
    assert cb.open(f1) == b"1"
    assert cb.open(f2) == b"2"


def test_tampered_and_truncated_frames_are_refused_without_losing_the_link() -> None:
    ca, cb = connect(*pair())
    frame = ca.seal(b"payload")
    for i in (COUNTER_BYTES, len(frame) - 1):
        bad = bytearray(frame)
        bad[i] ^= 1
        with pytest.raises(ProtocolError, match="failed authentication"):
            cb.open(bytes(bad))
    # Changing the counter bytes changes the nonce: caught as a gap, or by authentication.
    with pytest.raises(ProtocolError, match="frames missing"):
        cb.open(b"\x00" * 7 + b"\x01" + frame[COUNTER_BYTES:])
    with pytest.raises(ProtocolError, match="truncated frame"):
        cb.open(frame[: COUNTER_BYTES + TAG_BYTES - 1])
    with pytest.raises(ProtocolError, match="failed authentication"):
        cb.open(frame[:-1])
    assert cb.open(frame) == b"payload"


def test_frame_size_limit() -> None:
    a = Handshake(ALICE, TABLE, None, "initiator", max_frame=100)
    b = Handshake(BOB, TABLE, None, "responder", max_frame=100)
    ca, cb = connect(a, b)
    limit = 100 - COUNTER_BYTES - TAG_BYTES
    assert cb.open(ca.seal(b"x" * limit)) == b"x" * limit
    with pytest.raises(ProtocolError, match="would exceed the limit of 100"):
        ca.seal(b"x" * (limit + 1))
    with pytest.raises(ProtocolError, match="frame of 101 bytes exceeds the limit of 100"):
        cb.open(b"\x00" * 101)


def test_unexpected_identity_is_refused() -> None:
    a = Handshake(ALICE, TABLE, {BOB.peer_id}, "initiator")
    m = Handshake(MALLORY, TABLE, None, "responder")
    a.start()
    with pytest.raises(ProtocolError, match=f"{MALLORY.public.fingerprint} .* is not an expected peer"):
        a.receive(m.start())
    # A failed handshake stays failed.
    with pytest.raises(ProtocolError, match="no handshake message expected"):
        a.receive(b"{}")


def test_expected_peer_as_predicate() -> None:
    a = Handshake(ALICE, TABLE, lambda peer: peer == BOB.peer_id, "initiator")
    b = Handshake(BOB, TABLE, lambda peer: peer == ALICE.peer_id, "responder")
    connect(a, b)


def test_impersonation_with_a_stolen_identity_fails_at_the_signature() -> None:
    # Mallory puts Bob's public key in her hello and signs the exact transcript, but with her own key.
    a = Handshake(ALICE, TABLE, BOB.peer_id, "initiator")
    hello_a = a.start()
    hello_m = decode(Handshake(MALLORY, TABLE, None, "responder").start(), 4096)
    hello_m["identity"] = BOB.public.hex()
    assert a.receive(canonical(hello_m)) is not None
    transcript = hashlib.sha256(TRANSCRIPT_DOMAIN + _lp(hello_a) + _lp(canonical(hello_m))).digest()
    sig = MALLORY.sign(AUTH_DOMAIN + b"responder\x00" + transcript)
    with pytest.raises(ProtocolError, match="bad signature") as info:
        a.receive(canonical({"kind": "link-auth", "v": 1, "sig": sig.hex()}))
    assert info.value.rule == "P-1.2"
    assert not a.complete
    with pytest.raises(ProtocolError, match="handshake not complete"):
        _ = a.done


def test_transcript_signature_is_what_authenticates() -> None:
    # The same forgery signed with Bob's key passes: the check above fails for the right reason.
    a = Handshake(ALICE, TABLE, BOB.peer_id, "initiator")
    hello_a = a.start()
    hello_b = Handshake(BOB, TABLE, None, "responder").start()
    a.receive(hello_b)
    transcript = hashlib.sha256(TRANSCRIPT_DOMAIN + _lp(hello_a) + _lp(hello_b)).digest()
    sig = BOB.sign(AUTH_DOMAIN + b"responder\x00" + transcript)
    assert a.receive(canonical({"kind": "link-auth", "v": 1, "sig": sig.hex()})) is None
    assert a.complete


def test_replayed_handshake_is_refused() -> None:
    # Record a full handshake, then replay Bob's messages to a fresh Alice: her new hello is in the
    # transcript, so Bob's old signature does not cover it.
    a1, b1 = pair()
    hello_b = b1.start()
    auth_b = b1.receive(a1.start())
    assert auth_b is not None
    a2 = Handshake(ALICE, TABLE, BOB.peer_id, "initiator")
    a2.start()
    a2.receive(hello_b)
    with pytest.raises(ProtocolError, match="bad signature"):
        a2.receive(auth_b)


def test_reflected_hello_and_auth_are_refused() -> None:
    a = Handshake(ALICE, TABLE, None, "initiator")
    hello = a.start()
    with pytest.raises(ProtocolError, match="peer role must be the other one"):
        a.receive(hello)
    # Same identity in the other role: someone replaying our own key.
    a = Handshake(ALICE, TABLE, None, "initiator")
    a.start()
    with pytest.raises(ProtocolError, match="own identity"):
        a.receive(Handshake(ALICE, TABLE, None, "responder").start())


def test_reflected_auth_signature_is_refused() -> None:
    a, b = pair()
    hello_a, hello_b = a.start(), b.start()
    b.receive(hello_a)
    auth_a = a.receive(hello_b)
    assert auth_a is not None
    # Alice's own auth, sent back to her, is signed for the initiator role, not the responder's.
    with pytest.raises(ProtocolError, match="bad signature"):
        a.receive(auth_a)


def test_wrong_table_is_refused() -> None:
    a = Handshake(ALICE, TABLE, None, "initiator")
    b = Handshake(BOB, "8d" * 16, None, "responder")
    a.start()
    with pytest.raises(ProtocolError, match="another table"):
        a.receive(b.start())


def _hello_with(**changes: object) -> bytes:
    hello = json.loads(Handshake(BOB, TABLE, None, "responder").start())
    hello.update(changes)
    return json.dumps(hello).encode()


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (_hello_with(ephemeral="00" * 31), "ephemeral key: expected 32 bytes"),
        (_hello_with(ephemeral="00" * 32), "low-order X25519 point"),
        (_hello_with(identity="zz"), "identity key"),
        (_hello_with(identity="01" + "00" * 31), "not a valid Ed25519 public key"),
        (_hello_with(nonce="00"), "hello nonce"),
        (_hello_with(v=2), "unsupported link version"),
        (_hello_with(v=True), "unsupported link version"),
        (_hello_with(extra=1), "fields must be exactly"),
        (_hello_with(kind="link-auth"), "expected a link-hello"),
        (b'{"kind": "link-hello"', "not valid JSON"),
        (b"x" * 5000, "exceeds the limit"),
        (b"[]", "top level must be a JSON object"),
    ],
)
def test_malformed_hello_is_refused(data: bytes, fragment: str) -> None:
    a = Handshake(ALICE, TABLE, None, "initiator")
    a.start()
    with pytest.raises(ProtocolError, match=fragment):
        a.receive(data)


@pytest.mark.parametrize(
    ("auth", "fragment"),
    [
        ({"kind": "link-auth", "v": 1, "sig": "00" * 10}, "expected 64 bytes"),
        ({"kind": "link-auth", "v": 1}, "expected a link-auth"),
        ({"kind": "link-hello", "v": 1, "sig": "00" * 64}, "expected a link-auth"),
        ({"kind": "link-auth", "v": 1, "sig": "00" * 64}, "bad signature"),
    ],
)
def test_malformed_auth_is_refused(auth: dict[str, object], fragment: str) -> None:
    a, b = pair()
    hello_a = a.start()
    a.receive(b.start())
    b.receive(hello_a)
    with pytest.raises(ProtocolError, match=fragment):
        a.receive(canonical(auth))


def test_call_order_is_enforced() -> None:
    a = Handshake(ALICE, TABLE, None, "initiator")
    with pytest.raises(ProtocolError, match="call start"):
        a.receive(b"{}")
    a.start()
    with pytest.raises(ProtocolError, match="already called"):
        a.start()


def test_constructor_checks() -> None:
    with pytest.raises(ProtocolError, match="role must be one of"):
        Handshake(ALICE, TABLE, None, "dealer")  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match="table id"):
        Handshake(ALICE, "nope", None, "initiator")
    with pytest.raises(ProtocolError, match="ephemeral key is 32 bytes"):
        Handshake(ALICE, TABLE, None, "initiator", ephemeral=b"short")


def test_fixed_inputs_give_fixed_bytes() -> None:
    # Deterministic given the injected secrets: the same two handshakes derive the same keys.
    ca1, _ = connect(*pair())
    ca2, _ = connect(*pair())
    assert ca1.seal(b"m") == ca2.seal(b"m")


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_give_typed_errors(data: bytes) -> None:
    a = Handshake(ALICE, TABLE, None, "initiator")
    a.start()
    with pytest.raises(ProtocolError):
        a.receive(data)
    ca, _ = connect(*pair())
    with pytest.raises(ProtocolError):
        ca.open(data)
