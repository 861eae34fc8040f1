"""The link between two peers (P-1.2): an authenticated key exchange, then AEAD frames.

Handshake (both sides run the same `Handshake`; ``role`` says which end dialled):
``Handshake(identity, table, expected_peer, role)``.

1. each side sends a *hello*, canonical JSON
   ``{"kind": "link-hello", "v": 1, "table", "role", "identity", "ephemeral", "nonce"}``
   with its Ed25519 identity key, a fresh X25519 key and 32 fresh random bytes;
2. on the peer's hello, each side checks table, role and identity, and sends an *auth*
   ``{"kind": "link-auth", "v": 1, "sig"}``: its identity signature over
   ``AUTH_DOMAIN ‖ own role ‖ 0x00 ‖ transcript`` where
   ``transcript = SHA-256(TRANSCRIPT_DOMAIN ‖ lp(initiator hello) ‖ lp(responder hello))``;
3. on the peer's auth, the link is up (`Handshake.done`).

Both hellos, with both identities and both fresh keys, are under both signatures: a recorded
handshake cannot be replayed (the other side's fresh key differs), nor relayed under another
identity (the relay cannot sign the victim's transcript). The role in the signed bytes keeps a
signature from being reflected back to its signer.

Keys: HKDF-SHA256 over the X25519 shared secret, salt = transcript, 64 bytes: the first 32 are the
initiator-to-responder ChaCha20-Poly1305 key, the last 32 the other direction's.

Frames: ``counter (8 bytes, big-endian) ‖ ciphertext with its 16-byte tag``. The counter is the
nonce (4 zero bytes ‖ counter), counts 0, 1, 2, ... per direction, and must be exactly the next one
on receipt, so a replayed, reordered, dropped or altered frame is refused.

Sans-IO: the caller moves bytes; nothing here reads a socket or a clock.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Callable, Collection
from typing import Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from protocol.encoding import JSONObject, canonical, check_table_id, decode, h2b
from protocol.errors import ProtocolError
from protocol.identity import SIGNATURE_BYTES, Identity, PublicIdentity

RULE = "P-1.2"
VERSION = 1
Role = Literal["initiator", "responder"]
ROLES: tuple[Role, Role] = ("initiator", "responder")

TRANSCRIPT_DOMAIN = b"lanplay/link-transcript/v1\x00"
AUTH_DOMAIN = b"lanplay/link-auth/v1\x00"
KEY_INFO = b"lanplay/link-keys/v1"
FRAME_AAD = b"lanplay/link-frame/v1"
NONCE_BYTES = 32
X25519_BYTES = 32
COUNTER_BYTES = 8
TAG_BYTES = 16
MAX_HANDSHAKE_MESSAGE = 4096
DEFAULT_MAX_FRAME = 1 << 20
COUNTER_LIMIT = 2**64

ExpectedPeer = str | Collection[str] | Callable[[str], bool] | None

_HELLO_KEYS = frozenset({"kind", "v", "table", "role", "identity", "ephemeral", "nonce"})
_AUTH_KEYS = frozenset({"kind", "v", "sig"})


def _fail(message: str) -> ProtocolError:
    return ProtocolError(RULE, message)


def _allowed(expected: ExpectedPeer, peer_id: str) -> bool:
    if expected is None:
        return True
    if isinstance(expected, str):
        return peer_id == expected
    if callable(expected):
        return bool(expected(peer_id))
    return peer_id in expected


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class LinkCipher:
    """The encrypted link once the handshake is done: `seal` frames to send, `open` frames received.

    Holds the two per-direction counters, so it is a small stateful object; `open` changes state
    only for a frame it accepts."""

    def __init__(
        self, send_key: bytes, receive_key: bytes, peer: PublicIdentity, max_frame: int = DEFAULT_MAX_FRAME
    ) -> None:
        if len(send_key) != 32 or len(receive_key) != 32:
            raise _fail("link keys are 32 bytes")
        self._send = ChaCha20Poly1305(send_key)
        self._receive = ChaCha20Poly1305(receive_key)
        self._send_counter = 0
        self._receive_counter = 0
        self.peer = peer
        self.max_frame = max_frame

    @staticmethod
    def _nonce(counter: int) -> bytes:
        return bytes(4) + counter.to_bytes(COUNTER_BYTES, "big")

    def seal(self, plaintext: bytes) -> bytes:
        """Encrypt one message into the next frame."""
        if not isinstance(plaintext, bytes):
            raise _fail(f"plaintext must be bytes, got {type(plaintext).__name__}")
        size = COUNTER_BYTES + len(plaintext) + TAG_BYTES
        if size > self.max_frame:
            raise _fail(f"frame of {size} bytes would exceed the limit of {self.max_frame}")
        if self._send_counter >= COUNTER_LIMIT:
            raise _fail("frame counter exhausted: the link must be re-established")
        counter = self._send_counter
        frame = counter.to_bytes(COUNTER_BYTES, "big") + self._send.encrypt(self._nonce(counter), plaintext, FRAME_AAD)
        self._send_counter += 1
        return frame

    def open(self, frame: bytes) -> bytes:
        """Decrypt the next frame; `ProtocolError` for a truncated, oversize, replayed, reordered,
        missing-predecessor or altered frame."""
        if not isinstance(frame, bytes):
            raise _fail(f"frame must be bytes, got {type(frame).__name__}")
        if len(frame) > self.max_frame:
            raise _fail(f"frame of {len(frame)} bytes exceeds the limit of {self.max_frame}")
        if len(frame) < COUNTER_BYTES + TAG_BYTES:
            raise _fail(f"truncated frame: {len(frame)} bytes, at least {COUNTER_BYTES + TAG_BYTES} needed")
        counter = int.from_bytes(frame[:COUNTER_BYTES], "big")
        if counter < self._receive_counter:
            raise _fail(f"replayed or reordered frame: counter {counter}, expected {self._receive_counter}")
        if counter > self._receive_counter:
            raise _fail(f"frames missing: counter {counter}, expected {self._receive_counter}")
        try:
            plaintext = self._receive.decrypt(self._nonce(counter), frame[COUNTER_BYTES:], FRAME_AAD)
        except InvalidTag:
            raise _fail(f"frame {counter} failed authentication (altered, or not from this link)") from None
        self._receive_counter += 1
        return plaintext


class Handshake:
    """One side of a link handshake: `start`, then feed each message received to `receive` and send
    what it returns; `done` is the `LinkCipher` once `complete`.

    ``expected_peer`` is the peer id wanted (a string), a collection of acceptable ids, a predicate,
    or ``None`` to accept anyone (`peer` then says who it is). ``ephemeral`` (32 raw X25519 private
    bytes) and ``nonce`` are drawn fresh unless given, for tests. Any refused input fails the
    handshake for good: a failed link is dropped and dialled again, never patched up."""

    def __init__(
        self,
        identity: Identity,
        table: str,
        expected_peer: ExpectedPeer,
        role: Role,
        *,
        ephemeral: bytes | None = None,
        nonce: bytes | None = None,
        max_frame: int = DEFAULT_MAX_FRAME,
    ) -> None:
        self._identity = identity
        self.table = check_table_id(table, RULE)
        if role not in ROLES:
            raise _fail(f"role must be one of {ROLES}, got {role!r}")
        self.role: Role = role
        self._expected = expected_peer
        if ephemeral is None:
            self._ephemeral = X25519PrivateKey.generate()
        else:
            if not isinstance(ephemeral, bytes) or len(ephemeral) != X25519_BYTES:
                raise _fail(f"an ephemeral key is {X25519_BYTES} bytes")
            self._ephemeral = X25519PrivateKey.from_private_bytes(ephemeral)
        self._nonce = secrets.token_bytes(NONCE_BYTES) if nonce is None else nonce
        if not isinstance(self._nonce, bytes) or len(self._nonce) != NONCE_BYTES:
            raise _fail(f"a hello nonce is {NONCE_BYTES} bytes")
        self._max_frame = max_frame
        self._state: Literal["new", "hello-sent", "auth-sent", "complete", "failed"] = "new"
        self._hello: bytes = b""
        self._transcript: bytes = b""
        self._keys: tuple[bytes, bytes] = (b"", b"")
        self._peer: PublicIdentity | None = None
        self._cipher: LinkCipher | None = None

    @property
    def peer(self) -> PublicIdentity | None:
        """The peer's identity, once its hello was accepted."""
        return self._peer

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    @property
    def done(self) -> LinkCipher:
        """The link's cipher; `ProtocolError` before the handshake is complete."""
        if self._cipher is None:
            raise _fail(f"handshake not complete (state {self._state})")
        return self._cipher

    def start(self) -> bytes:
        """The hello to send first."""
        if self._state != "new":
            raise _fail("start() was already called")
        ephemeral = self._ephemeral.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        hello: JSONObject = {
            "kind": "link-hello",
            "v": VERSION,
            "table": self.table,
            "role": self.role,
            "identity": self._identity.public.hex(),
            "ephemeral": ephemeral.hex(),
            "nonce": self._nonce.hex(),
        }
        self._hello = canonical(hello)
        self._state = "hello-sent"
        return self._hello

    def receive(self, data: bytes) -> bytes | None:
        """Take the peer's next handshake message; returns the message to send back, if any."""
        try:
            if self._state == "hello-sent":
                reply: bytes | None = self._on_hello(data)
                self._state = "auth-sent"
                return reply
            if self._state == "auth-sent":
                self._on_auth(data)
                self._state = "complete"
                return None
        except ProtocolError:
            self._state = "failed"
            raise
        except Exception as exc:  # pragma: no cover - a library refusal not foreseen above
            self._state = "failed"
            raise _fail(f"handshake refused: {exc}") from exc
        if self._state == "new":
            raise _fail("call start() before receive()")
        raise _fail(f"no handshake message expected (state {self._state})")

    def _on_hello(self, data: bytes) -> bytes:
        msg = decode(data, MAX_HANDSHAKE_MESSAGE)
        if msg.get("kind") != "link-hello":
            raise _fail(f"expected a link-hello, got kind {str(msg.get('kind'))[:40]!r}")
        if set(msg) != _HELLO_KEYS:
            raise _fail(f"link-hello fields must be exactly {sorted(_HELLO_KEYS)}")
        if msg["v"] != VERSION or isinstance(msg["v"], bool):
            raise _fail(f"unsupported link version {msg['v']!r}")
        table = msg["table"]
        if table != self.table:
            raise _fail(f"peer is at another table ({str(table)[:40]!r}, not {self.table})")
        role = msg["role"]
        if role not in ROLES or role == self.role:
            raise _fail(f"peer role must be the other one of {ROLES}, got {str(role)[:20]!r}")
        peer = PublicIdentity.from_hex(msg["identity"])
        peer_ephemeral = h2b(msg["ephemeral"], X25519_BYTES, "ephemeral key")
        h2b(msg["nonce"], NONCE_BYTES, "hello nonce")
        if peer == self._identity.public:
            raise _fail("peer presents this installation's own identity")
        if not _allowed(self._expected, peer.peer_id):
            raise _fail(f"peer {peer.fingerprint} ({peer.peer_id}) is not an expected peer")
        try:
            shared = self._ephemeral.exchange(X25519PublicKey.from_public_bytes(peer_ephemeral))
        except ValueError:
            raise _fail("peer's ephemeral key is not usable (low-order X25519 point)") from None
        peer_hello = canonical(msg)
        first, second = (self._hello, peer_hello) if self.role == "initiator" else (peer_hello, self._hello)
        self._transcript = hashlib.sha256(TRANSCRIPT_DOMAIN + _lp(first) + _lp(second)).digest()
        okm = HKDF(hashes.SHA256(), 64, self._transcript, KEY_INFO).derive(shared)
        self._keys = (okm[:32], okm[32:]) if self.role == "initiator" else (okm[32:], okm[:32])
        self._peer = peer
        sig = self._identity.sign(self._auth_bytes(self.role))
        return canonical({"kind": "link-auth", "v": VERSION, "sig": sig.hex()})

    def _auth_bytes(self, role: Role) -> bytes:
        return AUTH_DOMAIN + role.encode("ascii") + b"\x00" + self._transcript

    def _on_auth(self, data: bytes) -> None:
        msg = decode(data, MAX_HANDSHAKE_MESSAGE)
        if msg.get("kind") != "link-auth" or set(msg) != _AUTH_KEYS:
            raise _fail(f"expected a link-auth with fields {sorted(_AUTH_KEYS)}")
        if msg["v"] != VERSION or isinstance(msg["v"], bool):
            raise _fail(f"unsupported link version {msg['v']!r}")
        sig = h2b(msg["sig"], SIGNATURE_BYTES, "link-auth sig")
        assert self._peer is not None  # set with the hello, which came first
        peer_role: Role = "responder" if self.role == "initiator" else "initiator"
        self._peer.verify(sig, self._auth_bytes(peer_role), RULE)
        send_key, receive_key = self._keys
        self._cipher = LinkCipher(send_key, receive_key, self._peer, self._max_frame)
