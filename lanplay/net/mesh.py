"""The full mesh of encrypted WebSocket links between the peers of one table (P-1.2).

Every peer runs one `Mesh` per table: a WebSocket server on one address, and one link to each other
peer. Who dials whom is fixed so that a pair never ends up with two links: **the peer with the lower
peer id dials, the higher one waits for the dial.** `Mesh.connect` on the higher side only records the
address; a dial from a higher peer is refused. A second incoming link from a peer that already has one
replaces the old link (which is closed): that is how a restarted peer, or one that noticed a dead link
before this side did, comes back.

A link, in WebSocket binary messages:

1. the `protocol.link.Handshake` (the dialer is the initiator): it authenticates both identities,
   checks the table id, and lets through only peers in ``allowed``;
2. every later message is a `LinkCipher` frame whose plaintext is one of
   ``RESUME`` ``0x00 ‖ own incarnation (16) ‖ incarnation known for the peer (16) ‖ u64 next
   message number expected from the peer ‖ u64 oldest message number still held for the peer``,
   sent once by each side right after the handshake;
   ``DATA`` ``0x01 ‖ u64 message number ‖ payload``; ``ACK`` ``0x02 ‖ u64 next message number
   expected`` (cumulative); ``LEAVE`` ``0x03``, sent last by a peer for which the table is over
   (`close(leaving=True)`), so the others need pass it nothing more (`left_peers`). It is sealed like
   the rest: a WebSocket close code is not, and anyone on the path could forge "going away", nor does it
   tell a peer that quit to resume (Ctrl-C, its journal kept) from one that is done.

While both processes live, delivery is in order and exactly once: each peer keeps what it sent to a
peer in that peer's own outbox until the peer acknowledges it, and after a reconnect the RESUME
exchange says where to carry on, so nothing sent before, during or after a drop is lost or delivered
twice.

Bounded resources (I6): each outbox holds at most `MAX_QUEUE` messages and `MAX_OUTBOX_BYTES` bytes.
A peer that does not acknowledge — its outbox would overflow, or a live link goes `ACK_TIMEOUT`
seconds with messages sent and none acknowledged — is dealt with on its own, never at the cost of the
others: a stalled link is closed (the peer may dial again and carry on), and a peer whose outbox
overflows is *dropped* for the rest of this mesh's life: its link is closed, its outbox freed, its
dials refused, and `send`/`broadcast` skip it. To the layer above it is a peer whose link is down, so
the table's reconnect limit applies to it. `send` and `broadcast` never refuse the others because of
one slow peer. The *incarnation* is a random id per `Mesh` object: when a peer restarts, its numbering
starts again and this side learns it from the RESUME. Across a restart delivery is only at least once
(a restarted receiver is sent again what it had not acknowledged) and the dead process's own outbox is
gone; the session layer above journals, resends and deduplicates signed messages.

Each peer simply calls `Mesh.connect` for every other peer; the ordering rule decides who dials.

Anything a link refuses (bad signature, a stranger, another table, a dial from the higher peer, text
frames, oversize or undecryptable frames, malformed plaintext) is logged on the ``lanplay.net.mesh`` logger
and closes that link only: it never reaches ``on_message`` and never disturbs other links.

Browser pages must not reach the mesh (a web page can open WebSockets to any address): a request with
an ``Origin`` header is refused with 403 before the WebSocket handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import logging
import random
import re
import secrets
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.frames import CloseCode
from websockets.http11 import Request, Response

from lanplay.base.aio import cancel_and_wait
from protocol.encoding import check_table_id
from protocol.errors import ProtocolError
from protocol.identity import Identity, fingerprint_of
from protocol.link import COUNTER_BYTES, TAG_BYTES, Handshake, LinkCipher, Role

log = logging.getLogger(__name__)

# Largest WebSocket message accepted (websockets' default is 1 MiB). Game messages are a few KiB; the
# biggest, a shuffled deck of points, is about 110 × 64 hex digits. A small limit bounds what a hostile
# peer can make us buffer.
MAX_MESSAGE = 256 * 1024
_DATA_HEADER = 1 + 8
MAX_PAYLOAD = MAX_MESSAGE - COUNTER_BYTES - TAG_BYTES - _DATA_HEADER
# Keepalive: a peer whose machine vanished (no FIN) is noticed within about PING_INTERVAL + PING_TIMEOUT.
PING_INTERVAL = 5.0
PING_TIMEOUT = 10.0
OPEN_TIMEOUT = 5.0  # TCP connect + HTTP upgrade
HANDSHAKE_TIMEOUT = 5.0  # link handshake + RESUME, after the upgrade
CLOSE_TIMEOUT = 2.0
BACKOFF_START = 0.2
BACKOFF_MAX = 5.0
BACKOFF_JITTER = 0.25  # delays are stretched by up to this fraction, so peers do not redial in lockstep
MAX_QUEUE = 10_000  # messages held per peer (unsent or unacknowledged)
# Bytes held per peer. A whole 6-seat round, gossip included, is well under 1 MiB, so an honest peer
# away for the whole reconnect limit stays far below this; only a peer that never acknowledges reaches it.
MAX_OUTBOX_BYTES = 16 * 1024 * 1024
LEAVE_WAIT = 0.5  # how long `close(leaving=True)` waits for the LEAVE frames to go out
ACK_TIMEOUT = 30.0  # a live link with messages sent and none acknowledged for this long is closed

INCARNATION_BYTES = 16
_RESUME = 0x00
_DATA = 0x01
_ACK = 0x02
_LEAVE = 0x03
_RESUME_FORMAT = struct.Struct(f">B{INCARNATION_BYTES}s{INCARNATION_BYTES}sQQ")
_DATA_FORMAT = struct.Struct(">BQ")
_ACK_FORMAT = struct.Struct(">BQ")
_NO_INCARNATION = bytes(INCARNATION_BYTES)
_PEER_ID_RE = re.compile(r"[0-9a-f]{64}")

MessageCallback = Callable[[str, bytes], Awaitable[None] | None]
StatusCallback = Callable[[str, bool], None]


class MeshError(Exception):
    """A call the mesh cannot carry out (unknown peer, mesh closed, message too large)."""


class QueueFull(MeshError):
    """Kept for callers that caught it: the mesh no longer raises it (a peer that does not keep up is
    dropped instead, see the module docstring)."""


class _Refused(Exception):
    """A link this side refuses; the text goes to the log, the code into the close frame."""

    def __init__(self, reason: str, code: int = CloseCode.POLICY_VIOLATION) -> None:
        super().__init__(reason)
        self.code = code


# --- link plaintext framing ------------------------------------------------------------------------


def _encode_resume(mine: bytes, known: bytes, expected: int, base: int) -> bytes:
    return _RESUME_FORMAT.pack(_RESUME, mine, known, expected, base)


def _decode_resume(plaintext: bytes) -> tuple[bytes, bytes, int, int]:
    if len(plaintext) != _RESUME_FORMAT.size or plaintext[0] != _RESUME:
        raise _Refused(f"expected a RESUME frame of {_RESUME_FORMAT.size} bytes after the handshake")
    _, mine, known, expected, base = _RESUME_FORMAT.unpack(plaintext)
    if mine == _NO_INCARNATION:
        raise _Refused("RESUME without an incarnation id")
    return mine, known, expected, base


def _encode_data(number: int, payload: bytes) -> bytes:
    return _DATA_FORMAT.pack(_DATA, number) + payload


def _encode_ack(expected: int) -> bytes:
    return _ACK_FORMAT.pack(_ACK, expected)


def _check_peer_id(peer_id: object) -> str:
    if not isinstance(peer_id, str) or not _PEER_ID_RE.fullmatch(peer_id):
        raise MeshError(f"a peer id is 64 lowercase hex digits, got {str(peer_id)[:80]!r}")
    return peer_id


# --- per-peer state ---------------------------------------------------------------------------------


@dataclass
class _Outbox:
    """Messages for one peer, numbered from ``base``; kept until acknowledged, across links."""

    base: int = 0
    entries: deque[bytes] = field(default_factory=deque)
    size: int = 0  # bytes held
    passed_on: deque[bool] = field(default_factory=deque)  # per entry: another peer's message, passed on
    passed_on_count: int = 0

    @property
    def next_number(self) -> int:
        return self.base + len(self.entries)

    def fits(self, data: bytes) -> bool:
        return len(self.entries) < MAX_QUEUE and self.size + len(data) <= MAX_OUTBOX_BYTES

    def append(self, data: bytes, passed_on: bool = False) -> None:
        self.entries.append(data)
        self.passed_on.append(passed_on)
        self.passed_on_count += passed_on
        self.size += len(data)

    def acknowledge(self, expected: int) -> None:
        while self.base < expected and self.entries:
            self.size -= len(self.entries.popleft())
            self.passed_on_count -= self.passed_on.popleft()
            self.base += 1


@dataclass
class _Inbox:
    """What was delivered from one peer: its incarnation and the next message number due."""

    incarnation: bytes = _NO_INCARNATION
    expected: int = 0


@dataclass(eq=False)
class _Link:
    peer_id: str
    ws: Connection
    cipher: LinkCipher
    role: Role
    incarnation: bytes  # the peer's, as its RESUME said
    where: str
    next_send: int = 0
    ack_due: bool = False
    live: bool = False  # installed and not yet superseded or dropped
    # loop time of the last acknowledgement that freed something, of install, or of a message sent when
    # nothing was outstanding: the acknowledgement clock of the stall check
    progress: float = 0.0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    writer: asyncio.Task[None] | None = None
    leave_due: bool = False  # `close(leaving=True)`: the writer sends LEAVE after what is queued
    left_sent: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def name(self) -> str:
        return f"{fingerprint_of(self.peer_id)} ({self.where})"


class Mesh:
    """The links of this peer at one table.

    ``allowed`` are the peer ids that may link up (more with `allow`); ``on_message(peer_id, data)``
    (a function or a coroutine function) gets every payload in order, and ``on_status(peer_id,
    connected)`` is told when a link becomes usable and when it drops. Callbacks run on the event
    loop; an exception in one is logged and does not stop the link. No callbacks are made once
    `close` has begun."""

    def __init__(
        self,
        identity: Identity,
        table_id: str,
        allowed: Iterable[str],
        on_message: MessageCallback,
        on_status: StatusCallback,
    ) -> None:
        try:
            self.table_id = check_table_id(table_id)
        except ProtocolError as exc:
            raise MeshError(exc.message) from None
        self._identity = identity
        self.peer_id = identity.peer_id
        self._allowed: set[str] = set()
        for peer_id in allowed:
            self.allow(peer_id)
        self._on_message = on_message
        self._on_status = on_status
        self._incarnation = secrets.token_bytes(INCARNATION_BYTES)
        self._links: dict[str, _Link] = {}
        self._dropped: dict[str, str] = {}  # peer id -> why it was dropped (it never acknowledged)
        self._left: set[str] = set()  # peers that said LEAVE on their last link
        self._outboxes: dict[str, _Outbox] = {}
        self._inboxes: dict[str, _Inbox] = {}
        self._addresses: dict[str, tuple[str, int]] = {}
        self._dialers: dict[str, asyncio.Task[None]] = {}
        self._dial_now: dict[str, asyncio.Event] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._server: Server | None = None
        self._closing = False
        self._closed = asyncio.Event()
        self._changed = asyncio.Event()

    # --- public API ---------------------------------------------------------------------------

    def allow(self, peer_id: str) -> None:
        """Let ``peer_id`` link up (a player who joined the table)."""
        _check_peer_id(peer_id)
        if peer_id != self.peer_id:
            self._allowed.add(peer_id)

    @property
    def allowed(self) -> frozenset[str]:
        return frozenset(self._allowed)

    async def start(self, host: str, port: int = 0) -> int:
        """Listen on ``host``, the IP address of the one interface to play on (as for discovery, there
        is deliberately no "all interfaces"), and return the port (``0``: any free port)."""
        if self._server is not None or self._closing:
            raise MeshError("mesh already started or closed")
        host = _check_host(host)
        self._server = await serve(
            self._serve_link,
            host,
            port,
            compression=None,  # compressing before encrypting can leak secrets by length; and frames are small
            max_size=MAX_MESSAGE,
            ping_interval=PING_INTERVAL,
            ping_timeout=PING_TIMEOUT,
            open_timeout=OPEN_TIMEOUT,
            close_timeout=CLOSE_TIMEOUT,
            process_request=self._check_request,
            server_header=None,
        )
        bound: int = self._server.sockets[0].getsockname()[1]
        log.info("mesh for table %s listening on %s:%d", self.table_id, host, bound)
        return bound

    async def open(self, host: str, port: int, peers: Iterable[tuple[str, str, int]]) -> int:
        """`start` on ``host``:``port`` and `connect` to every ``(peer id, address, port)`` in ``peers``,
        all or nothing: every peer and address is checked before anything listens, and if anything
        fails once it does, the mesh is closed before the `MeshError` (or `OSError`, a port taken)
        goes on, so a table that cannot start leaves no port listening and no task dialling."""
        wanted = list(peers)
        for peer_id, peer_host, _ in wanted:
            _check_peer_id(peer_id)
            _check_host(peer_host)
            if peer_id == self.peer_id or peer_id not in self._allowed:
                raise MeshError(f"peer {fingerprint_of(peer_id)} cannot be linked at this table")
        bound = await self.start(host, port)
        try:
            for peer_id, peer_host, peer_port in wanted:
                await self.connect(peer_id, peer_host, peer_port)
        except BaseException:
            await self.close()
            raise
        return bound

    async def connect(self, peer_id: str, host: str, port: int) -> None:
        """Remember where ``peer_id`` listens, and keep a link to it from now on.

        Only the lower peer id dials, so that a pair has one link: if this side has the higher id, this
        only records the address and the link comes when the peer dials. Returns at once;
        `wait_connected` or ``on_status`` tells when the link is up. Calling it again with a new
        address (a peer that restarted elsewhere) redials there without waiting out the backoff.
        ``host`` is an IP address (adverts carry addresses; a name would mean a DNS query)."""
        _check_peer_id(peer_id)
        host = _check_host(host)
        if peer_id == self.peer_id:
            raise MeshError("cannot connect to this peer's own id")
        if peer_id not in self._allowed:
            raise MeshError(f"peer {fingerprint_of(peer_id)} is not allowed at this table; allow() it first")
        if self._closing:
            raise MeshError("mesh is closed")
        self._addresses[peer_id] = (host, port)
        if self.peer_id > peer_id:
            log.debug("waiting for %s to dial (it has the lower peer id)", fingerprint_of(peer_id))
            return
        wake = self._dial_now.setdefault(peer_id, asyncio.Event())
        task = self._dialers.get(peer_id)
        if task is None or task.done():
            self._dialers[peer_id] = asyncio.get_running_loop().create_task(
                self._dial_loop(peer_id), name=f"mesh-dial-{peer_id[:8]}"
            )
        else:
            wake.set()

    def send(self, peer_id: str, data: bytes) -> None:
        """Queue ``data`` for ``peer_id``; it is sent now if the link is up, else when it is back. A
        peer whose outbox would overflow is dropped (see the module docstring), and a dropped peer is
        sent nothing more; neither raises."""
        self._check_payload(data)
        self._enqueue(peer_id, self._outbox_for(peer_id), data)

    def broadcast(self, data: bytes, passed_on: bool = False, skip: Collection[str] = ()) -> None:
        """`send` ``data`` to every allowed peer (linked or not) that has not been dropped, but those in
        ``skip``; `passed_on`: it is another peer's message, passed on (gossip), which `queued` can leave out."""
        self._check_payload(data)
        for peer_id in sorted(self._allowed):
            if peer_id not in skip:
                self._enqueue(peer_id, self._outbox_for(peer_id), data, passed_on)

    def connected_peers(self) -> set[str]:
        """Peers with a usable link right now."""
        return set(self._links)

    def left_peers(self) -> set[str]:
        """Peers that said LEAVE on their last link (the table is over for them), not a link that broke
        nor a peer that quit to resume: nothing passed on to them needs waiting for."""
        return set(self._left)

    def dropped_peers(self) -> dict[str, str]:
        """Peers dropped for not acknowledging, with the reason."""
        return dict(self._dropped)

    def queued(self, peer_id: str, own_only: bool = False) -> int:
        """Messages held for ``peer_id`` (not yet sent, or sent and not yet acknowledged); `own_only`:
        not counting those broadcast as passed on."""
        outbox = self._outboxes.get(peer_id)
        if outbox is None:
            return 0
        return len(outbox.entries) - (outbox.passed_on_count if own_only else 0)

    def queued_bytes(self, peer_id: str) -> int:
        """Bytes held for ``peer_id``."""
        outbox = self._outboxes.get(peer_id)
        return 0 if outbox is None else outbox.size

    async def wait_connected(self, peers: Iterable[str], timeout: float) -> None:
        """Return once every peer in ``peers`` has a usable link; `TimeoutError` after ``timeout`` s."""
        wanted = set(peers)
        async with asyncio.timeout(timeout):
            while not wanted <= self._links.keys():
                if self._closing:
                    raise MeshError("mesh is closed")
                changed = self._changed
                await changed.wait()

    async def close(self, leaving: bool = False) -> None:
        """Close every link (close code 1001) and the server, stop dialling, and wait for all of it.
        `leaving`: the table is over for this peer, and each live link says so first with a sealed
        LEAVE (at most `LEAVE_WAIT` s), which puts this peer in the others' `left_peers`; a peer that
        only quits (to resume later) closes without it. Safe to call more than once."""
        if self._closing:
            await self._closed.wait()
            return
        self._closing = True
        links = list(self._links.values())
        if leaving and links:
            for live in links:
                live.leave_due = True
                live.wake.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LEAVE_WAIT):
                    await asyncio.gather(*(live.left_sent.wait() for live in links if live.live))
        dialers = dict(self._dialers)
        self._dialers.clear()
        for peer_id, task in dialers.items():
            link = self._links.get(peer_id)
            if link is None or link.role != "initiator":
                # Connecting or waiting out a backoff: nothing to say goodbye on.
                task.cancel()
        # Closing each live link first lets the peers see a clean "going away", not an abort; the
        # dialers holding those links then end on their own.
        await asyncio.gather(*(_close(link.ws, CloseCode.GOING_AWAY, "peer is leaving the table") for link in links))
        server, self._server = self._server, None
        if server is not None:
            server.close()  # closes incoming links still in their handshake, then waits for the handlers
            await server.wait_closed()
        await asyncio.gather(*dialers.values(), return_exceptions=True)
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        self._links.clear()
        self._notify_waiters()
        self._closed.set()

    # --- sending -------------------------------------------------------------------------------

    def _check_payload(self, data: bytes) -> None:
        if not isinstance(data, bytes):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        if len(data) > MAX_PAYLOAD:
            raise MeshError(f"message of {len(data)} bytes exceeds the limit of {MAX_PAYLOAD}")
        if self._closing:
            raise MeshError("mesh is closed")

    def _outbox_for(self, peer_id: str) -> _Outbox:
        if peer_id not in self._allowed:
            raise MeshError(f"peer {str(peer_id)[:80]!r} is not allowed at this table")
        return self._outboxes.setdefault(peer_id, _Outbox())

    def _enqueue(self, peer_id: str, outbox: _Outbox, data: bytes, passed_on: bool = False) -> None:
        if peer_id in self._dropped:
            return
        if not outbox.fits(data):
            self._drop_peer(
                peer_id,
                f"{len(outbox.entries)} messages ({outbox.size} bytes) sent to it are still unacknowledged",
            )
            return
        outbox.append(data, passed_on)
        link = self._links.get(peer_id)
        if link is not None:
            link.wake.set()

    def _drop_peer(self, peer_id: str, reason: str) -> None:
        """Stop holding anything for a peer that does not acknowledge (I6): its link closes (the
        status callback then reports it down), its outbox is freed and it may not link up again."""
        log.warning("dropped peer %s: %s; it may not link up again at this table", fingerprint_of(peer_id), reason)
        self._dropped[peer_id] = reason
        self._outboxes[peer_id] = _Outbox()
        link = self._links.get(peer_id)
        if link is not None:
            self._retire(link)
            self._spawn(_close(link.ws, CloseCode.POLICY_VIOLATION, "dropped: messages not acknowledged"))
        wake = self._dial_now.get(peer_id)
        if wake is not None:
            wake.set()  # the dialer sees the peer is dropped and stops

    def _check_stalled(self, link: _Link, outbox: _Outbox) -> bool:
        """True (and the link is closed) if it carried messages that have gone unacknowledged for
        `ACK_TIMEOUT`: the peer answers pings but not data. It may dial again and resume."""
        if link.next_send <= outbox.base:
            link.progress = asyncio.get_running_loop().time()  # nothing outstanding: the clock starts afresh
            return False
        if asyncio.get_running_loop().time() - link.progress <= ACK_TIMEOUT:
            return False
        log.warning("closing link %s: nothing acknowledged for %g s", link.name, ACK_TIMEOUT)
        self._retire(link)
        self._spawn(_close(link.ws, CloseCode.POLICY_VIOLATION, "messages not acknowledged"))
        return True

    async def _write_loop(self, link: _Link) -> None:
        """The only task that seals frames for this link, so the cipher's counter matches send order."""
        outbox = self._outboxes.setdefault(link.peer_id, _Outbox())
        inbox = self._inboxes[link.peer_id]
        try:
            while link.live:
                if link.ack_due:
                    link.ack_due = False
                    plaintext = _encode_ack(inbox.expected)
                elif link.next_send < outbox.next_number:
                    # Acknowledged on another link meanwhile: those need no resending.
                    link.next_send = max(link.next_send, outbox.base)
                    if link.next_send == outbox.base:
                        # Nothing was owed an acknowledgement: the wait for one starts with this message,
                        # not when the link last went quiet (a healthy link may be quiet for any time).
                        link.progress = asyncio.get_running_loop().time()
                    plaintext = _encode_data(link.next_send, outbox.entries[link.next_send - outbox.base])
                    link.next_send += 1
                elif link.leave_due:
                    link.leave_due = False
                    await link.ws.send(link.cipher.seal(bytes([_LEAVE])))
                    link.left_sent.set()
                    continue
                else:
                    link.wake.clear()
                    if link.next_send > outbox.base:  # something is owed an acknowledgement: watch for it
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(link.wake.wait(), ACK_TIMEOUT / 4)
                        if self._check_stalled(link, outbox):
                            return
                    else:
                        await link.wake.wait()
                    continue
                await link.ws.send(link.cipher.seal(plaintext))
        except ConnectionClosed:
            pass  # the reader sees it too, and drops the link
        except Exception:
            # A link that can no longer send must not look alive: close it, and it is redialled.
            log.exception("sending on link %s failed", link.name)
            await _close(link.ws, CloseCode.INTERNAL_ERROR, "send failed")

    # --- links ---------------------------------------------------------------------------------

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if origin is not None:
            log.warning(
                "refused connection from %s: it comes from a web page (Origin %r)",
                _address(connection),
                origin[:80],
            )
            return connection.respond(HTTPStatus.FORBIDDEN, "lanplay links do not accept browser origins\n")
        return None

    async def _serve_link(self, ws: ServerConnection) -> None:
        try:
            await self._run_link(ws, "responder", None, f"from {_address(ws)}")
        except Exception:
            # websockets would log this too, but under its own logger and without saying which link.
            log.exception("link from %s failed unexpectedly", _address(ws))

    async def _dial_loop(self, peer_id: str) -> None:
        delay = BACKOFF_START
        wake = self._dial_now[peer_id]
        while not self._closing and peer_id not in self._dropped:
            wake.clear()
            host, port = self._addresses[peer_id]
            where = f"to {host}:{port}"
            was_up = False
            try:
                async with ws_connect(
                    _ws_uri(host, port),
                    compression=None,
                    max_size=MAX_MESSAGE,
                    ping_interval=PING_INTERVAL,
                    ping_timeout=PING_TIMEOUT,
                    open_timeout=OPEN_TIMEOUT,
                    close_timeout=CLOSE_TIMEOUT,
                    # websockets otherwise honours $HTTP(S)_PROXY: the link must go to the peer itself.
                    proxy=None,
                    user_agent_header=None,
                ) as ws:
                    was_up = await self._run_link(ws, "initiator", peer_id, where)
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI, ConnectionClosed) as exc:
                log.info("dial to %s %s failed: %s", fingerprint_of(peer_id), where, exc or type(exc).__name__)
            except Exception:
                log.exception("dial to %s %s failed unexpectedly", fingerprint_of(peer_id), where)
            if self._closing:
                break
            if was_up:
                delay = BACKOFF_START  # a link that worked: its first redial comes quickly
            pause = delay * random.uniform(1.0, 1.0 + BACKOFF_JITTER)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), pause)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _run_link(self, ws: Connection, role: Role, dialed: str | None, where: str) -> bool:
        """Handshake, then read until the link ends. True if it became usable."""
        try:
            link = await self._establish(ws, role, dialed, where)
        except _Refused as exc:
            log.warning("refused link %s: %s", where, exc)
            await _close(ws, exc.code, str(exc))
            return False
        except TimeoutError:
            log.warning("refused link %s: handshake not completed within %g s", where, HANDSHAKE_TIMEOUT)
            await _close(ws, CloseCode.POLICY_VIOLATION, "handshake timeout")
            return False
        except ConnectionClosed as exc:
            self._log_closed(where, exc, "during the handshake")
            return False
        try:
            await self._read_loop(link)
        except _Refused as exc:
            log.warning("refused link %s: %s", link.name, exc)
            await _close(ws, exc.code, str(exc))
        except ConnectionClosed as exc:
            self._log_closed(link.name, exc, "")
        finally:
            await self._drop(link)
        return True

    @staticmethod
    def _log_closed(where: str, exc: ConnectionClosed, when: str) -> None:
        sent = exc.sent.code if exc.sent is not None else None
        if sent == CloseCode.MESSAGE_TOO_BIG:
            log.warning("refused link %s: message larger than %d bytes %s", where, MAX_MESSAGE, when)
        elif sent == CloseCode.PROTOCOL_ERROR:
            log.warning("refused link %s: WebSocket protocol error %s (%s)", where, when, exc)
        else:
            log.info("link %s closed%s: %s", where, f" {when}" if when else "", exc)

    async def _recv(self, ws: Connection) -> bytes:
        message = await ws.recv()
        if isinstance(message, str):
            raise _Refused("sent a text frame; links carry binary frames only", CloseCode.UNSUPPORTED_DATA)
        return message

    async def _establish(self, ws: Connection, role: Role, dialed: str | None, where: str) -> _Link:
        refusal: list[str] = []

        def acceptable(peer_id: str) -> bool:
            reason = self._refusal(peer_id, role, dialed)
            if reason is not None:
                refusal.append(reason)
            return reason is None

        handshake = Handshake(self._identity, self.table_id, acceptable, role, max_frame=MAX_MESSAGE)
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            try:
                await ws.send(handshake.start())
                reply = handshake.receive(await self._recv(ws))
                if reply is not None:
                    await ws.send(reply)
                handshake.receive(await self._recv(ws))
                cipher = handshake.done
            except ProtocolError as exc:
                raise _Refused(refusal[0] if refusal else f"handshake failed: {exc.message}") from None
            peer_id = cipher.peer.peer_id
            inbox = self._inboxes.get(peer_id, _Inbox())
            outbox = self._outboxes.get(peer_id, _Outbox())
            await ws.send(
                cipher.seal(_encode_resume(self._incarnation, inbox.incarnation, inbox.expected, outbox.base))
            )
            try:
                resume = _decode_resume(cipher.open(await self._recv(ws)))
            except ProtocolError as exc:
                raise _Refused(f"frame failed to decrypt: {exc.message}") from None
        # The peer may have been refused meanwhile, or the mesh closed, during the awaits above.
        reason = self._refusal(peer_id, role, dialed)
        if reason is not None:
            raise _Refused(reason, CloseCode.GOING_AWAY if self._closing else CloseCode.POLICY_VIOLATION)
        link = _Link(peer_id, ws, cipher, role, resume[0], where)
        self._install(link, resume)
        return link

    def _refusal(self, peer_id: str, role: Role, dialed: str | None) -> str | None:
        name = f"{fingerprint_of(peer_id)} ({peer_id})"
        if self._closing:
            return "the mesh is closing"
        if peer_id not in self._allowed:
            return f"stranger: peer {name} is not allowed at this table"
        if peer_id in self._dropped:
            return f"peer {name} was dropped: {self._dropped[peer_id]}"
        if dialed is not None and peer_id != dialed:
            return f"answered by {name}, not by the peer dialled ({fingerprint_of(dialed)})"
        if role == "responder" and peer_id > self.peer_id:
            return f"peer {name} has the higher peer id and must wait for this side to dial (one link per pair)"
        return None

    def _install(self, link: _Link, resume: tuple[bytes, bytes, int, int]) -> None:
        """Make ``link`` the peer's link. Synchronous, so nothing interleaves between retiring the old
        link and starting the new one."""
        incarnation, known, expected, base = resume
        peer_id = link.peer_id
        outbox = self._outboxes.setdefault(peer_id, _Outbox())
        if known == self._incarnation:
            if expected > outbox.next_number:
                raise _Refused(f"RESUME expects message {expected}, but only {outbox.next_number} were ever queued")
            outbox.acknowledge(expected)
            link.next_send = max(expected, outbox.base)
        else:
            # The peer has nothing from this process (it restarted, or this is the first link).
            link.next_send = outbox.base
        inbox = self._inboxes.setdefault(peer_id, _Inbox())
        if inbox.incarnation != incarnation:
            if inbox.incarnation != _NO_INCARNATION:
                log.info("peer %s restarted: its message numbering starts again", link.name)
            inbox.incarnation, inbox.expected = incarnation, base
        old = self._links.get(peer_id)
        if old is not None:
            log.info("link %s replaces the older link %s", link.name, old.where)
            self._retire(old)
            self._spawn(_close(old.ws, CloseCode.NORMAL_CLOSURE, "replaced by a newer link"))
            self._status(peer_id, False)
        link.live = True
        link.progress = asyncio.get_running_loop().time()
        self._links[peer_id] = link
        link.writer = asyncio.get_running_loop().create_task(self._write_loop(link), name=f"mesh-write-{peer_id[:8]}")
        log.info("link %s up", link.name)
        self._left.discard(peer_id)
        self._status(peer_id, True)
        self._notify_waiters()

    async def _read_loop(self, link: _Link) -> None:
        inbox = self._inboxes[link.peer_id]
        outbox = self._outboxes[link.peer_id]
        while True:
            frame = await self._recv(link.ws)
            try:
                plaintext = link.cipher.open(frame)
            except ProtocolError as exc:
                raise _Refused(f"frame failed to decrypt: {exc.message}") from None
            kind = plaintext[:1]
            if kind == bytes([_DATA]) and len(plaintext) >= _DATA_FORMAT.size:
                _, number = _DATA_FORMAT.unpack_from(plaintext)
                if not link.live or inbox.incarnation != link.incarnation:
                    continue  # superseded: a newer link carries this traffic now
                if self._closing:
                    continue  # not delivered, so not acknowledged: the peer keeps it for whoever comes next
                if number > inbox.expected:
                    raise _Refused(f"message {number} skips ahead of {inbox.expected}")
                link.ack_due = True
                link.wake.set()
                if number < inbox.expected:
                    continue  # already delivered (resent after a reconnect)
                inbox.expected += 1
                await self._deliver(link.peer_id, plaintext[_DATA_FORMAT.size :])
            elif kind == bytes([_ACK]) and len(plaintext) == _ACK_FORMAT.size:
                _, expected = _ACK_FORMAT.unpack(plaintext)
                if expected > outbox.next_number:
                    raise _Refused(f"acknowledges message {expected}, but only {outbox.next_number} were queued")
                if link.live:
                    if expected > outbox.base:
                        link.progress = asyncio.get_running_loop().time()
                    outbox.acknowledge(expected)
                    link.wake.set()  # the writer's acknowledgement watch starts again
            elif kind == bytes([_LEAVE]) and len(plaintext) == 1:
                if link.live:
                    self._left.add(link.peer_id)  # until its next link: a peer that left may still come back
            else:
                raise _Refused(f"malformed frame (type {plaintext[:1].hex() or 'none'}, {len(plaintext)} bytes)")

    def _retire(self, link: _Link) -> None:
        link.live = False
        link.wake.set()  # lets the writer see it is done

    async def _drop(self, link: _Link) -> None:
        was_current = self._links.get(link.peer_id) is link
        self._retire(link)
        if link.writer is not None:
            await cancel_and_wait([link.writer])
        if was_current:
            del self._links[link.peer_id]
            log.info("link %s down", link.name)
            self._status(link.peer_id, False)
            self._notify_waiters()

    # --- callbacks and housekeeping ----------------------------------------------------------

    async def _deliver(self, peer_id: str, payload: bytes) -> None:
        try:
            result = self._on_message(peer_id, payload)
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("on_message callback failed for a message from %s", fingerprint_of(peer_id))

    def _status(self, peer_id: str, connected: bool) -> None:
        if self._closing:
            return
        try:
            self._on_status(peer_id, connected)
        except Exception:
            log.exception("on_status callback failed for %s", fingerprint_of(peer_id))

    def _notify_waiters(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _spawn(self, coroutine: Awaitable[None]) -> None:
        async def run() -> None:
            await coroutine

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)


async def _close(ws: Connection, code: int, reason: str) -> None:
    # A close reason is at most 123 bytes of UTF-8; the full reason is in the log.
    short = reason.encode("utf-8")[:120].decode("utf-8", "ignore")
    with contextlib.suppress(ConnectionClosed, OSError):
        await ws.close(code, short)


def _address(ws: Connection) -> str:
    try:
        host, port = ws.remote_address[:2]
    except (TypeError, ValueError, OSError):
        return "an unknown address"
    return f"{host}:{port}"


def _check_host(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise MeshError(f"expected an IP address, got {str(host)[:80]!r}") from None
    if address.is_multicast or address.is_unspecified:
        raise MeshError(f"{address} is not the address of one interface")
    return str(address)


def _ws_uri(host: str, port: int) -> str:
    return f"ws://[{host}]:{port}/" if ":" in host else f"ws://{host}:{port}/"


__all__ = [
    "ACK_TIMEOUT",
    "BACKOFF_MAX",
    "BACKOFF_START",
    "MAX_MESSAGE",
    "MAX_OUTBOX_BYTES",
    "MAX_PAYLOAD",
    "MAX_QUEUE",
    "PING_INTERVAL",
    "PING_TIMEOUT",
    "Mesh",
    "MeshError",
    "QueueFull",
]
