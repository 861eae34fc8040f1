"""Long-term Ed25519 identities (P-1.1).

An installation's `Identity` holds its private key; everyone else knows it by its `PublicIdentity`.
A peer's id is the lowercase hex SHA-256 of the 32 raw public key bytes; people compare the short
`PublicIdentity.fingerprint` in the lobby. Keeping the key on disk is `lanplay`'s job, not this
module's: it only turns raw bytes into keys and back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import nacl.bindings
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from protocol.encoding import h2b
from protocol.errors import ProtocolError

RULE = "P-1.1"
PUBLIC_KEY_BYTES = 32
PRIVATE_KEY_BYTES = 32
SIGNATURE_BYTES = 64
PEER_ID_HEX = 64


def peer_id_of(key_bytes: bytes) -> str:
    """The peer id of a raw Ed25519 public key: hex SHA-256 of its 32 bytes."""
    return hashlib.sha256(key_bytes).hexdigest()


def fingerprint_of(peer_id: str) -> str:
    """Short human form of a peer id: its first 8 bytes as four groups of four hex digits."""
    return "-".join(peer_id[i : i + 4] for i in range(0, 16, 4))


@dataclass(frozen=True, slots=True)
class PublicIdentity:
    """A peer's Ed25519 public key (32 raw bytes)."""

    key_bytes: bytes
    _key: Ed25519PublicKey = field(init=False, repr=False, compare=False)
    _peer_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key_bytes, bytes) or len(self.key_bytes) != PUBLIC_KEY_BYTES:
            raise ProtocolError(RULE, f"an identity key is {PUBLIC_KEY_BYTES} bytes")
        # Honest keys are multiples of the base point; a small-order or mixed-order key would let
        # anyone forge "signatures" for it, so it is refused before it can name a peer.
        if not nacl.bindings.crypto_core_ed25519_is_valid_point(self.key_bytes):
            raise ProtocolError(RULE, "identity key is not a valid Ed25519 public key")
        object.__setattr__(self, "_key", Ed25519PublicKey.from_public_bytes(self.key_bytes))
        object.__setattr__(self, "_peer_id", peer_id_of(self.key_bytes))

    @classmethod
    def from_hex(cls, text: object) -> PublicIdentity:
        return cls(h2b(text, PUBLIC_KEY_BYTES, "identity key"))

    def hex(self) -> str:
        return self.key_bytes.hex()

    @property
    def peer_id(self) -> str:
        return self._peer_id

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self._peer_id)

    def verify(self, sig: bytes, data: bytes, rule: str = RULE) -> None:
        """Check an Ed25519 signature by this key; `ProtocolError` with ``rule`` if it is not one."""
        if not isinstance(sig, bytes) or len(sig) != SIGNATURE_BYTES:
            raise ProtocolError(rule, f"a signature is {SIGNATURE_BYTES} bytes")
        if not isinstance(data, bytes):
            raise ProtocolError(rule, f"signed data must be bytes, got {type(data).__name__}")
        try:
            self._key.verify(sig, data)
        except InvalidSignature:
            raise ProtocolError(rule, f"bad signature for identity {self.fingerprint}") from None


@dataclass(frozen=True, slots=True)
class Identity:
    """An installation's own identity: the Ed25519 private key and its public half."""

    _private: Ed25519PrivateKey = field(repr=False, compare=False)
    public: PublicIdentity = field(init=False)

    def __post_init__(self) -> None:
        raw = self._private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        object.__setattr__(self, "public", PublicIdentity(raw))

    @classmethod
    def generate(cls) -> Identity:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_bytes(cls, raw: bytes) -> Identity:
        """Load the 32-byte Ed25519 seed that `private_bytes` gives."""
        if not isinstance(raw, bytes) or len(raw) != PRIVATE_KEY_BYTES:
            raise ProtocolError(RULE, f"an identity private key is {PRIVATE_KEY_BYTES} bytes")
        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    def private_bytes(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )

    @property
    def peer_id(self) -> str:
        return self.public.peer_id

    def sign(self, data: bytes) -> bytes:
        if not isinstance(data, bytes):
            raise ProtocolError(RULE, f"signed data must be bytes, got {type(data).__name__}")
        return self._private.sign(data)
