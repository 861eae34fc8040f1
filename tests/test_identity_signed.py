"""P-1.1 identities and P-1.3 signed, sequenced, hash-linked messages."""

from __future__ import annotations

import contextlib
import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.encoding import canonical, decode
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import Identity, PublicIdentity
from protocol.signed import (
    FIELDS,
    ZERO_DIGEST,
    ChainTracker,
    Equivocation,
    EquivocationDetected,
    OutOfOrder,
    SignedMessage,
    Verdict,
    sign_message,
    verify_equivocation,
)

TABLE = "5a" * 16
OTHER_TABLE = "6b" * 16
SEED_A = bytes(range(32))
SEED_B = bytes(range(1, 33))


@pytest.fixture
def alice() -> Identity:
    return Identity.from_private_bytes(SEED_A)


@pytest.fixture
def bob() -> Identity:
    return Identity.from_private_bytes(SEED_B)


# -- identities ------------------------------------------------------------------------------------


def test_identity_round_trips_through_private_bytes() -> None:
    ident = Identity.generate()
    again = Identity.from_private_bytes(ident.private_bytes())
    assert again.public == ident.public
    assert again.peer_id == ident.peer_id


def test_peer_id_and_fingerprint(alice: Identity) -> None:
    key = alice.public.key_bytes
    assert alice.peer_id == hashlib.sha256(key).hexdigest()
    fp = alice.public.fingerprint
    assert fp == "-".join(alice.peer_id[i : i + 4] for i in (0, 4, 8, 12))
    assert len(fp) == 19 and fp.count("-") == 3
    assert PublicIdentity.from_hex(alice.public.hex()) == alice.public


def test_private_key_not_in_repr(alice: Identity) -> None:
    assert alice.private_bytes().hex() not in repr(alice)


def test_sign_and_verify(alice: Identity, bob: Identity) -> None:
    sig = alice.sign(b"data")
    alice.public.verify(sig, b"data")
    with pytest.raises(ProtocolError, match="bad signature") as info:
        alice.public.verify(sig, b"datA")
    assert info.value.rule == "P-1.1"
    with pytest.raises(ProtocolError, match="bad signature"):
        bob.public.verify(sig, b"data")
    with pytest.raises(ProtocolError, match="a signature is 64 bytes"):
        alice.public.verify(sig[:63], b"data")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"\x00" * 31, "identity key is 32 bytes"),
        (b"\x01" + bytes(31), "not a valid Ed25519 public key"),  # the identity point: forgeable
        (b"\xff" * 32, "not a valid Ed25519 public key"),  # not a canonical point
        (
            bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
            "not a valid Ed25519 public key",  # a point of order 8
        ),
    ],
)
def test_public_identity_refuses_bad_keys(raw: bytes, fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        PublicIdentity(raw)


def test_from_private_bytes_refuses_wrong_length() -> None:
    with pytest.raises(ProtocolError, match="private key is 32 bytes"):
        Identity.from_private_bytes(b"short")


# -- signed messages -------------------------------------------------------------------------------


def msg(
    ident: Identity,
    seq: int,
    prev: str,
    body: dict[str, object] | None = None,
    table: str = TABLE,
    round: int = 0,
    kind: str = "move",
) -> SignedMessage:
    return sign_message(ident, table, round, seq, prev, kind, body if body is not None else {"n": seq})


def test_wire_round_trip_and_signature(alice: Identity) -> None:
    m = msg(alice, 0, ZERO_DIGEST, {"card": "R5", "list": [1, 2], "nested": {"ok": True}})
    wire = m.to_wire()
    assert wire == canonical(json.loads(wire))
    again = SignedMessage.from_wire(wire)
    assert again == m
    assert again.digest() == m.digest()
    again.verify(alice.public)
    assert m.author == alice.peer_id


def test_message_reads_the_same_from_canonical_and_other_spellings(alice: Identity) -> None:
    # P-1.3: the signature covers the canonical content, however the bytes on the wire were spelled.
    m = msg(alice, 3, "ab" * 32, {"zeta": [3, {"b": 1, "a": "é"}], "alpha": None})
    spelled = json.dumps(dict(reversed(list(m.to_json().items()))), indent=1, ensure_ascii=True).encode()
    assert spelled != m.to_wire()
    for wire in (m.to_wire(), spelled):
        again = SignedMessage.from_wire(wire)
        assert again == m
        assert again.digest() == m.digest()
        assert again.signed_bytes() == m.signed_bytes()
        assert again.to_wire() == m.to_wire()
        assert list(again.body) == ["alpha", "zeta"]
        again.verify(alice.public)


def test_digest_covers_content_not_signature(alice: Identity) -> None:
    m = msg(alice, 0, ZERO_DIGEST)
    assert m.digest() == hashlib.sha256(m.signed_bytes()).hexdigest()
    other = msg(alice, 0, ZERO_DIGEST, {"n": 1})
    assert other.digest() != m.digest()


def test_body_is_a_private_copy(alice: Identity) -> None:
    body: dict[str, object] = {"n": 1}
    m = msg(alice, 0, ZERO_DIGEST, body)
    body["n"] = 2
    m.verify(alice.public)
    assert m.body == {"n": 1}


def test_verify_refuses_other_key_and_tampering(alice: Identity, bob: Identity) -> None:
    m = msg(alice, 0, ZERO_DIGEST)
    with pytest.raises(ProtocolError, match="is not the key"):
        m.verify(bob.public)
    obj = m.to_json()
    obj["round"] = 1
    tampered = SignedMessage.from_json(obj)
    with pytest.raises(ProtocolError, match="bad signature") as info:
        tampered.verify(alice.public)
    assert info.value.rule == "P-1.3"
    # Replaying into another table changes the signed bytes too.
    obj = m.to_json()
    obj["table"] = OTHER_TABLE
    with pytest.raises(ProtocolError, match="bad signature"):
        SignedMessage.from_json(obj).verify(alice.public)


def _wire_with(m: SignedMessage, **changes: object) -> bytes:
    obj = m.to_json()
    for key, value in changes.items():
        if value is KeyError:
            del obj[key]
        else:
            obj[key] = value
    return json.dumps(obj).encode()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"seq": -1}, "seq must be between 0"),
        ({"seq": "1"}, "seq must be an integer, got str"),
        ({"seq": True}, "seq must be an integer, got bool"),
        ({"round": None}, "round must be an integer"),
        ({"table": "xyz"}, "table id"),
        ({"author": "ab"}, "author must be a peer id"),
        ({"prev": "0" * 63}, "prev must be 64 lowercase hex"),
        ({"prev": "1" * 64}, r"seq 0\) must have prev = 64 zeros"),
        ({"kind": "Move!"}, "kind must match"),
        ({"kind": 3}, "kind must match"),
        ({"body": [1]}, "body must be a JSON object, got list"),
        ({"sig": "00"}, "expected 64 bytes"),
        ({"sig": 5}, "sig must be a hex string"),
        ({"sig": KeyError}, r"missing \['sig'\]"),
        ({"extra": 1}, r"unexpected \['extra'\]"),
    ],
)
def test_from_wire_refuses_malformed_fields(alice: Identity, changes: dict[str, object], fragment: str) -> None:
    m = msg(alice, 0, ZERO_DIGEST)
    with pytest.raises(ProtocolError, match=fragment):
        SignedMessage.from_wire(_wire_with(m, **changes))


def test_from_wire_refuses_oversize_and_garbage(alice: Identity) -> None:
    m = msg(alice, 0, ZERO_DIGEST, {"pad": "x" * 1000})
    with pytest.raises(ProtocolError, match="exceeds the limit"):
        SignedMessage.from_wire(m.to_wire(), max_size=500)
    with pytest.raises(ProtocolError, match="not valid JSON"):
        SignedMessage.from_wire(m.to_wire()[:-1])
    with pytest.raises(ProtocolError, match="a signed message is a JSON object"):
        SignedMessage.from_json([1])


def test_sign_message_refuses_bad_body(alice: Identity) -> None:
    with pytest.raises(ProtocolError, match="floats are not allowed"):
        msg(alice, 0, ZERO_DIGEST, {"x": 0.5})


# -- chain tracking --------------------------------------------------------------------------------


def chain(ident: Identity, n: int) -> list[SignedMessage]:
    out: list[SignedMessage] = []
    prev = ZERO_DIGEST
    for seq in range(n):
        m = msg(ident, seq, prev)
        out.append(m)
        prev = m.digest()
    return out


def test_tracker_accepts_chains_in_order(alice: Identity, bob: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public, bob.public])
    for a, b in zip(chain(alice, 3), chain(bob, 3), strict=True):
        assert tracker.accept(a) is Verdict.NEW
        assert tracker.accept(b) is Verdict.NEW
    assert tracker.next_seq(alice.peer_id) == 3
    assert tracker.head(alice.peer_id) == chain(alice, 3)[-1].digest()
    assert len(tracker.messages(bob.peer_id)) == 3


def test_tracker_helps_build_own_chain(alice: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public])
    for i in range(3):
        m = sign_message(
            alice, TABLE, 0, tracker.next_seq(alice.peer_id), tracker.head(alice.peer_id), "move", {"i": i}
        )
        assert tracker.accept(m) is Verdict.NEW


def test_duplicate_is_reported_not_refused(alice: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public])
    msgs = chain(alice, 2)
    for m in msgs:
        tracker.accept(m)
    assert tracker.accept(msgs[0]) is Verdict.DUPLICATE
    assert tracker.accept(SignedMessage.from_wire(msgs[1].to_wire())) is Verdict.DUPLICATE
    assert tracker.next_seq(alice.peer_id) == 2


def test_gap_is_out_of_order_and_changes_nothing(alice: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public])
    msgs = chain(alice, 3)
    tracker.accept(msgs[0])
    with pytest.raises(OutOfOrder, match=r"seq 2 .* before seq 1") as info:
        tracker.accept(msgs[2])
    assert (info.value.seq, info.value.expected) == (2, 1)
    assert not isinstance(info.value, CheatDetected)
    assert tracker.accept(msgs[1]) is Verdict.NEW
    assert tracker.accept(msgs[2]) is Verdict.NEW


def test_tracker_refuses_wrong_table_unknown_author_bad_signature(alice: Identity, bob: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public])
    with pytest.raises(ProtocolError, match="not for this table"):
        tracker.accept(msg(alice, 0, ZERO_DIGEST, table=OTHER_TABLE))
    with pytest.raises(ProtocolError, match="unknown author"):
        tracker.accept(msg(bob, 0, ZERO_DIGEST))
    forged = SignedMessage.from_json({**msg(alice, 0, ZERO_DIGEST).to_json(), "sig": bob.sign(b"x").hex()})
    with pytest.raises(ProtocolError, match="bad signature"):
        tracker.accept(forged)
    assert tracker.next_seq(alice.peer_id) == 0


def test_same_seq_different_content_is_equivocation(alice: Identity, bob: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public], seats={alice.peer_id: 2})
    first = msg(alice, 0, ZERO_DIGEST, {"card": "R1"})
    second = msg(alice, 0, ZERO_DIGEST, {"card": "G9"})
    tracker.accept(first)
    with pytest.raises(EquivocationDetected) as info:
        tracker.accept(second)
    err = info.value
    assert err.seat == 2 and err.rule == "P-1.3"
    assert err.proof == Equivocation(first, second)
    # The proof travels as JSON and is checked again elsewhere, against the author's key only.
    shown = Equivocation.from_json(decode(canonical(err.proof.to_json()), 1 << 20))
    verify_equivocation(shown, alice.public)
    with pytest.raises(ProtocolError, match="is not the key"):
        verify_equivocation(shown, bob.public)


def test_broken_prev_link_is_equivocation(alice: Identity) -> None:
    tracker = ChainTracker(TABLE, [alice.public])
    msgs = chain(alice, 2)
    tracker.accept(msgs[0])
    forked = msg(alice, 1, "ab" * 32)
    with pytest.raises(EquivocationDetected, match="does not link") as info:
        tracker.accept(forked)
    assert info.value.seat is None
    verify_equivocation(info.value.proof, alice.public)
    assert tracker.accept(msgs[1]) is Verdict.NEW


def test_verify_equivocation_refuses_non_proofs(alice: Identity) -> None:
    msgs = chain(alice, 3)
    with pytest.raises(ProtocolError, match="same content"):
        verify_equivocation(Equivocation(msgs[0], msgs[0]), alice.public)
    with pytest.raises(ProtocolError, match="links to the first"):
        verify_equivocation(Equivocation(msgs[0], msgs[1]), alice.public)
    with pytest.raises(ProtocolError, match="neither at one seq nor consecutive"):
        verify_equivocation(Equivocation(msgs[0], msgs[2]), alice.public)
    elsewhere = msg(alice, 0, ZERO_DIGEST, table=OTHER_TABLE)
    with pytest.raises(ProtocolError, match="different tables"):
        verify_equivocation(Equivocation(msgs[0], elsewhere), alice.public)
    forged = SignedMessage.from_json({**msgs[1].to_json(), "body": {"n": 99}})
    with pytest.raises(ProtocolError, match="bad signature"):
        verify_equivocation(Equivocation(msgs[1], forged), alice.public)
    with pytest.raises(ProtocolError, match="exactly first and second"):
        Equivocation.from_json({"first": msgs[0].to_json()})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=70),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=80, deadline=None)
@given(st.fixed_dictionaries({}, optional={f: json_values for f in FIELDS}))
def test_arbitrary_objects_are_refused_with_typed_errors(obj: dict[str, object]) -> None:
    # Whatever a peer sends, the only failure is a ProtocolError (never KeyError, TypeError...).
    good = msg(Identity.from_private_bytes(SEED_A), 0, ZERO_DIGEST).to_json()
    for candidate in (obj, {**good, **obj}):
        with contextlib.suppress(ProtocolError):
            SignedMessage.from_wire(canonical(candidate))
