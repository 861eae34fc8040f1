"""Tests for lanplay.net.mesh. Every socket binds and connects on 127.0.0.1 only; no pytest-asyncio:
each test runs its own event loop with asyncio.run."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
import warnings
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from lanplay.net import mesh as mesh_module
from lanplay.net.mesh import MAX_MESSAGE, MAX_PAYLOAD, MAX_QUEUE, Mesh, MeshError
from protocol.identity import Identity
from protocol.link import Handshake, LinkCipher

LOOPBACK = "127.0.0.1"
TABLE = "00112233aabbccdd"
OTHER_TABLE = "ffeeddccbbaa9988"
WAIT = 5.0  # per-step limit; steps take milliseconds on loopback


def run(coro: Coroutine[Any, Any, None], limit: float = 15.0) -> None:
    """Run one test body on a fresh loop, and check it leaves no task behind."""

    async def body() -> None:
        async with asyncio.timeout(limit):
            await coro
        await asyncio.sleep(0)
        leftover = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        assert leftover == [], f"tasks still pending after the test: {leftover}"

    asyncio.run(body())


def identities(count: int) -> list[Identity]:
    """Fresh identities sorted by peer id, so a test knows who dials whom (the lower id dials)."""
    return sorted((Identity.generate() for _ in range(count)), key=lambda i: i.peer_id)


async def until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


@dataclass
class Peer:
    identity: Identity
    mesh: Mesh = field(init=False)
    port: int = 0
    messages: list[tuple[str, bytes]] = field(default_factory=list)
    statuses: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.identity.peer_id

    def received_from(self, peer: Peer) -> list[bytes]:
        return [data for who, data in self.messages if who == peer.id]

    def status_of(self, peer: Peer) -> list[bool]:
        return [up for who, up in self.statuses if who == peer.id]


async def make_peers(
    ids: list[Identity], allowed: Callable[[Identity], set[str]] | None = None, *, async_callback: bool = False
) -> list[Peer]:
    everyone = {i.peer_id for i in ids}
    peers = []
    for identity in ids:
        peer = Peer(identity)
        on_message: Callable[[str, bytes], Awaitable[None] | None]
        if async_callback:

            async def on_message_async(who: str, data: bytes, peer: Peer = peer) -> None:
                await asyncio.sleep(0)
                peer.messages.append((who, data))

            on_message = on_message_async
        else:
            on_message = lambda who, data, peer=peer: peer.messages.append((who, data))  # noqa: E731
        peer.mesh = Mesh(
            identity,
            TABLE,
            allowed(identity) if allowed else everyone - {identity.peer_id},
            on_message,
            lambda who, up, peer=peer: peer.statuses.append((who, up)),
        )
        peer.port = await peer.mesh.start(LOOPBACK)
        peers.append(peer)
    return peers


async def link_all(peers: list[Peer]) -> None:
    for peer in peers:
        for other in peers:
            if other is not peer:
                await peer.mesh.connect(other.id, LOOPBACK, other.port)
    for peer in peers:
        await peer.mesh.wait_connected({p.id for p in peers if p is not peer}, WAIT)


async def close_all(peers: list[Peer]) -> None:
    for peer in peers:
        await peer.mesh.close()


def raw_connect(port: int, **kwargs: Any) -> Any:
    return connect(
        f"ws://{LOOPBACK}:{port}/", compression=None, proxy=None, max_size=None, ping_interval=None, **kwargs
    )


async def expect_closed(ws: ClientConnection, code: int) -> None:
    """The mesh closes this connection with ``code`` (anything it sent before is skipped)."""
    with pytest.raises(ConnectionClosed) as info:
        async with asyncio.timeout(WAIT):
            while True:
                await ws.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == code, info.value


async def raw_handshake(ws: ClientConnection, identity: Any) -> LinkCipher:
    handshake = Handshake(identity, TABLE, None, "initiator")
    await ws.send(handshake.start())
    reply = handshake.receive(await ws.recv())
    assert reply is not None
    await ws.send(reply)
    handshake.receive(await ws.recv())
    return handshake.done


async def raw_resume(ws: ClientConnection, cipher: LinkCipher, incarnation: bytes) -> tuple[bytes, bytes, int, int]:
    """Our RESUME (knowing nothing of the mesh) and the mesh's."""
    await ws.send(cipher.seal(mesh_module._encode_resume(incarnation, bytes(16), 0, 0)))
    return mesh_module._decode_resume(cipher.open(await ws.recv()))


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "lanplay.net.mesh" and r.levelno >= logging.WARNING and "refused" in r.getMessage()
    ]


# --- linking up -----------------------------------------------------------------------------------


@pytest.mark.parametrize("async_callback", [False, True], ids=["sync-callback", "async-callback"])
def test_three_peers_full_mesh(async_callback: bool) -> None:
    async def body() -> None:
        peers = await make_peers(identities(3), async_callback=async_callback)
        a, b, c = peers
        try:
            await link_all(peers)
            # Exactly one link per pair, dialled by the lower id: A dials B and C, B dials C.
            for peer in peers:
                assert peer.mesh.connected_peers() == {p.id for p in peers if p is not peer}
            roles = {(p.id, q): link.role for p in peers for q, link in p.mesh._links.items()}
            assert roles == {
                (a.id, b.id): "initiator",
                (a.id, c.id): "initiator",
                (b.id, a.id): "responder",
                (b.id, c.id): "initiator",
                (c.id, a.id): "responder",
                (c.id, b.id): "responder",
            }
            servers = [p.mesh._server for p in peers]
            assert [len(s.connections) for s in servers if s is not None] == [0, 1, 2]
            assert all(p.status_of(q) == [True] for p in peers for q in peers if q is not p)

            for sender in peers:
                for receiver in peers:
                    if receiver is not sender:
                        for n in range(20):
                            sender.mesh.send(receiver.id, f"{sender.id[:4]}>{receiver.id[:4]} {n}".encode())
                sender.mesh.broadcast(b"all from " + sender.id.encode())
            for receiver in peers:
                for sender in peers:
                    if sender is receiver:
                        continue
                    expected = [f"{sender.id[:4]}>{receiver.id[:4]} {n}".encode() for n in range(20)]
                    expected.append(b"all from " + sender.id.encode())
                    await until(lambda r=receiver, s=sender, e=expected: r.received_from(s) == e)
            # Acknowledgements empty the outboxes.
            await until(lambda: all(p.mesh.queued(q.id) == 0 for p in peers for q in peers if q is not p))
        finally:
            await close_all(peers)

    run(body())


def test_a_broadcast_passes_nothing_to_the_peers_it_skips_and_everything_to_the_others() -> None:
    async def body() -> None:
        peers = await make_peers(identities(3))
        a, b, c = peers
        try:
            await link_all(peers)
            a.mesh.broadcast(b"passed on", passed_on=True, skip={b.id})
            a.mesh.broadcast(b"to all")
            await until(lambda: c.received_from(a) == [b"passed on", b"to all"])
            await until(lambda: b.received_from(a) == [b"to all"])
            await until(lambda: a.mesh.queued(b.id) == 0 and a.mesh.queued(c.id) == 0)
            assert b.received_from(a) == [b"to all"]
        finally:
            await close_all(peers)

    run(body())


def test_higher_peer_waits_and_a_dial_from_it_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        low, high = identities(2)
        peers = await make_peers([low, high])
        try:
            # The higher peer only records the address...
            await peers[1].mesh.connect(low.peer_id, LOOPBACK, peers[0].port)
            assert peers[1].mesh._dialers == {}
            # ...and a dial from it (here by hand) is refused.
            async with raw_connect(peers[0].port) as ws:
                with pytest.raises(ConnectionClosed):
                    await raw_handshake(ws, high)
            await until(lambda: any("higher peer id" in m for m in refusals(caplog)))
            assert peers[0].mesh.connected_peers() == set()
            # The lower one dials, and the pair links up.
            await peers[0].mesh.connect(high.peer_id, LOOPBACK, peers[1].port)
            await peers[0].mesh.wait_connected({high.peer_id}, WAIT)
            await peers[1].mesh.wait_connected({low.peer_id}, WAIT)
        finally:
            await close_all(peers)

    run(body())


# --- refusals -------------------------------------------------------------------------------------


def test_stranger_is_refused_and_mesh_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        stranger, a, b = identities(3)  # the stranger has the lowest id, so it is the one to dial
        peers = await make_peers([a, b])
        intruder = await make_peers([stranger], allowed=lambda _: {a.peer_id, b.peer_id})
        try:
            await link_all(peers)
            await intruder[0].mesh.connect(a.peer_id, LOOPBACK, peers[0].port)
            await until(lambda: any("stranger" in m for m in refusals(caplog)))
            assert stranger.peer_id in next(m for m in refusals(caplog) if "stranger" in m)
            assert intruder[0].statuses == [] and peers[0].statuses == [(b.peer_id, True)]
            assert peers[0].mesh.connected_peers() == {b.peer_id}
            peers[0].mesh.send(b.peer_id, b"still here")
            await until(lambda: peers[1].received_from(peers[0]) == [b"still here"])
            # Once allowed (a player who joined), the same peer links up on its next redial.
            peers[0].mesh.allow(stranger.peer_id)
            await peers[0].mesh.wait_connected({stranger.peer_id}, WAIT)
        finally:
            await close_all(intruder + peers)

    run(body())


class WrongKeyIdentity:
    """Presents one identity's public key but signs with another key."""

    def __init__(self, claimed: Identity, signer: Identity) -> None:
        self.public = claimed.public
        self.peer_id = claimed.peer_id
        self.sign = signer.sign


def test_handshake_signed_by_wrong_key_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        a, b = identities(2)
        peers = await make_peers([a, b])
        try:
            async with raw_connect(peers[1].port) as ws:
                # Our side of the handshake completes (the mesh's auth is fine); the mesh refuses ours.
                await raw_handshake(ws, WrongKeyIdentity(a, Identity.generate()))
                await expect_closed(ws, 1008)
            await until(lambda: any("bad signature" in m for m in refusals(caplog)))
            assert peers[1].statuses == [] and peers[1].messages == []
            await link_all(peers)  # the real A is not held back by its impostor
        finally:
            await close_all(peers)

    run(body())


def test_wrong_table_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        a, b = identities(2)
        peers = await make_peers([a, b])
        try:
            async with raw_connect(peers[1].port) as ws:
                await ws.send(Handshake(a, OTHER_TABLE, None, "initiator").start())
                await expect_closed(ws, 1008)
            await until(lambda: any("another table" in m for m in refusals(caplog)))
            assert peers[1].statuses == []
        finally:
            await close_all(peers)

    run(body())


def test_garbage_oversized_and_text_frames_are_refused(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        # The attacker is a player allowed at the table but not running a Mesh: it speaks by hand.
        attacker, a, b, c = identities(4)
        everyone = {i.peer_id for i in (attacker, a, b, c)}
        peers = await make_peers([a, b, c], allowed=lambda me: everyone - {me.peer_id})
        target = peers[2]
        try:
            await link_all(peers)
            cases: list[tuple[str, bytes | str, int]] = [
                ("garbage hello", os.urandom(200), 1008),
                ("oversized hello", os.urandom(MAX_MESSAGE + 1), 1009),
                ("JSON but no hello", b'{"kind":"link-auth","v":1,"sig":"00"}', 1008),
                ("text frame", "hello", 1003),
            ]
            for name, frame, code in cases:
                async with raw_connect(target.port) as ws:
                    await ws.send(frame)
                    await expect_closed(ws, code)
                assert len(refusals(caplog)) >= 1, name
            # After a good handshake as an allowed peer: an undecryptable frame, an oversized frame,
            # a text frame, a replayed frame, a malformed plaintext.
            for name in ["garbage frame", "oversized frame", "text frame", "replayed frame", "bad plaintext"]:
                async with raw_connect(target.port) as ws:
                    cipher = await raw_handshake(ws, attacker)
                    await raw_resume(ws, cipher, os.urandom(16))
                    if name == "garbage frame":
                        await ws.send(os.urandom(100))
                        code = 1008
                    elif name == "oversized frame":
                        await ws.send(os.urandom(MAX_MESSAGE + 1))
                        code = 1009
                    elif name == "text frame":
                        await ws.send("not binary")
                        code = 1003
                    elif name == "replayed frame":
                        frame = cipher.seal(mesh_module._encode_data(0, b"once"))
                        await ws.send(frame)
                        await ws.send(frame)
                        code = 1008
                    else:
                        await ws.send(cipher.seal(b"\x07 no such frame type"))
                        code = 1008
                    await expect_closed(ws, code)
            log = "\n".join(refusals(caplog))
            for phrase in ["handshake failed", "larger than", "text frame", "failed to decrypt", "malformed frame"]:
                assert phrase in log, phrase
            # Only the one legitimate "once" got through (from the replay case), before its replay.
            assert [data for who, data in target.messages if who == attacker.peer_id] == [b"once"]
            # The mesh's own links never noticed.
            for sender in peers[:2]:
                sender.mesh.send(target.id, b"after the attacks")
                await until(lambda s=sender: target.received_from(s) == [b"after the attacks"])
            assert all(p.status_of(q) == [True] for p in peers for q in peers if q is not p and p is not target)
        finally:
            await close_all(peers)

    run(body())


def test_browser_origin_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        a, b = identities(2)
        peers = await make_peers([a, b])
        try:
            with pytest.raises(InvalidStatus) as info:
                async with raw_connect(peers[1].port, origin=Origin("http://evil.example")):
                    pass
            assert info.value.response.status_code == 403
            assert any("Origin" in m for m in refusals(caplog))
            await link_all(peers)
        finally:
            await close_all(peers)

    run(body())


# --- drops, reconnects, restarts ------------------------------------------------------------------


@pytest.mark.parametrize("side", ["dialer", "listener"])
def test_dropped_link_reconnects_and_loses_nothing(side: str) -> None:
    async def body() -> None:
        peers = await make_peers(identities(2))
        a, b = peers
        try:
            await link_all(peers)
            sent_ab: list[bytes] = []
            sent_ba: list[bytes] = []

            def burst(count: int) -> None:
                for _ in range(count):
                    sent_ab.append(f"a->b {len(sent_ab)}".encode())
                    a.mesh.send(b.id, sent_ab[-1])
                    sent_ba.append(f"b->a {len(sent_ba)}".encode())
                    b.mesh.send(a.id, sent_ba[-1])

            burst(50)
            # Kill the TCP connection under the link without a WebSocket close, as a cable pull or a
            # crash would, while messages are still in flight; then keep sending into the dying link.
            victim = a if side == "dialer" else b
            other = b if victim is a else a
            victim.mesh._links[other.id].ws.transport.abort()
            burst(50)
            # Sent while the link is known to be down: queued.
            await until(lambda: False in a.status_of(b) and False in b.status_of(a))
            burst(50)
            started = time.perf_counter()
            await until(lambda: b.received_from(a) == sent_ab and a.received_from(b) == sent_ba)
            assert time.perf_counter() - started < 2.0  # one short backoff, not a long one
            assert a.status_of(b) == [True, False, True] and b.status_of(a) == [True, False, True]
            burst(10)  # and the new link carries on
            await until(lambda: b.received_from(a) == sent_ab and a.received_from(b) == sent_ba)
        finally:
            await close_all(peers)

    run(body())


def test_restarted_peer_gets_queued_messages() -> None:
    async def body() -> None:
        peers = await make_peers(identities(2))
        a, b = peers
        try:
            await link_all(peers)
            a.mesh.send(b.id, b"before")
            await until(lambda: b.received_from(a) == [b"before"])
            await until(lambda: a.mesh.queued(b.id) == 0)
            await b.mesh.close()  # B's process ends
            await until(lambda: a.status_of(b) == [True, False])
            a.mesh.send(b.id, b"while away 1")
            a.mesh.send(b.id, b"while away 2")
            # B starts again with the same identity, on a new port; A is told the new address.
            reborn = (await make_peers([b.identity], allowed=lambda _: {a.id}))[0]
            peers.append(reborn)
            await a.mesh.connect(b.id, LOOPBACK, reborn.port)
            await until(lambda: reborn.received_from(a) == [b"while away 1", b"while away 2"])
            reborn.mesh.send(a.id, b"back")
            await until(lambda: a.received_from(reborn) == [b"back"])
        finally:
            await close_all(peers)

    run(body())


def test_second_incoming_link_replaces_the_first(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lanplay.net.mesh")

    async def body() -> None:
        low, high = identities(2)
        peers = await make_peers([high], allowed=lambda _: {low.peer_id})
        target = peers[0]
        incarnation = os.urandom(16)
        try:
            async with raw_connect(target.port) as first:
                cipher1 = await raw_handshake(first, low)
                await raw_resume(first, cipher1, incarnation)
                for n in range(2):
                    await first.send(cipher1.seal(mesh_module._encode_data(n, f"m{n}".encode())))
                await until(lambda: target.received_from(Peer(low)) == [b"m0", b"m1"])
                # The same peer links again (it saw the first link die before we did).
                async with raw_connect(target.port) as second:
                    cipher2 = await raw_handshake(second, low)
                    theirs = await raw_resume(second, cipher2, incarnation)
                    assert theirs[1:3] == (incarnation, 2)  # "I know you, and have your messages up to 2"
                    await expect_closed(first, 1000)  # the old link is closed...
                    # ...and a resent message 1 is recognised as a duplicate.
                    await second.send(cipher2.seal(mesh_module._encode_data(1, b"m1")))
                    await second.send(cipher2.seal(mesh_module._encode_data(2, b"m2")))
                    await until(lambda: target.received_from(Peer(low)) == [b"m0", b"m1", b"m2"])
                    assert target.status_of(Peer(low)) == [True, False, True]
                    assert any("replaces" in r.getMessage() for r in caplog.records)
        finally:
            await close_all(peers)

    run(body())


# --- sending limits and closing -------------------------------------------------------------------


def test_send_checks_and_queue_limit() -> None:
    async def body() -> None:
        a, b, c = identities(3)
        mesh = Mesh(a, TABLE, {b.peer_id, c.peer_id}, lambda who, data: None, lambda who, up: None)
        with pytest.raises(MeshError, match="not allowed"):
            mesh.send(Identity.generate().peer_id, b"x")
        with pytest.raises(MeshError, match="exceeds"):
            mesh.send(b.peer_id, bytes(MAX_PAYLOAD + 1))
        with pytest.raises(TypeError):
            mesh.send(b.peer_id, "text")  # type: ignore[arg-type]
        with pytest.raises(MeshError):
            await mesh.connect(a.peer_id, LOOPBACK, 1)  # itself
        for bad_host in ["localhost", "0.0.0.0", "224.0.0.251", ""]:
            with pytest.raises(MeshError):
                await mesh.connect(b.peer_id, bad_host, 1)
            with pytest.raises(MeshError):
                await mesh.start(bad_host)
        assert mesh._dialers == {}
        mesh.send(b.peer_id, bytes(MAX_PAYLOAD))  # the largest message fits in one frame
        for _ in range(MAX_QUEUE - 1):
            mesh.send(b.peer_id, b"queued while b is away")
        assert mesh.queued(b.peer_id) == MAX_QUEUE and not mesh.dropped_peers()
        # I6: one message too many drops b alone; nothing raises, c is still sent to.
        mesh.send(b.peer_id, b"one too many")
        assert set(mesh.dropped_peers()) == {b.peer_id}
        assert mesh.queued(b.peer_id) == 0 and mesh.queued_bytes(b.peer_id) == 0
        mesh.broadcast(b"to whoever is left")
        assert mesh.queued(c.peer_id) == 1 and mesh.queued(b.peer_id) == 0
        await mesh.close()
        with pytest.raises(MeshError, match="closed"):
            mesh.send(c.peer_id, b"late")
        with pytest.raises(MeshError):
            Mesh(a, "not a table id", set(), lambda who, data: None, lambda who, up: None)

    run(body())


def test_largest_message_crosses_a_link() -> None:
    async def body() -> None:
        peers = await make_peers(identities(2))
        try:
            await link_all(peers)
            big = os.urandom(MAX_PAYLOAD)
            peers[1].mesh.send(peers[0].id, big)
            await until(lambda: peers[0].received_from(peers[1]) == [big])
        finally:
            await close_all(peers)

    run(body())


def test_close_is_clean(caplog: pytest.LogCaptureFixture) -> None:
    async def body() -> None:
        peers = await make_peers(identities(3))
        await link_all(peers)
        # A dialer stuck in its backoff towards a peer that is not there.
        extra = identities(1)[0]
        peers[0].mesh.allow(extra.peer_id)
        if peers[0].id < extra.peer_id:
            await peers[0].mesh.connect(extra.peer_id, LOOPBACK, 9)  # discard port: refused at once
        started = time.perf_counter()
        await close_all(peers)
        assert time.perf_counter() - started < 2.0
        await close_all(peers)  # idempotent
        for peer in peers:
            assert peer.mesh.connected_peers() == set()
        # Peers saw the others leave while they were still open; no callback after close.
        assert peers[2].status_of(peers[0]) == [True, False]
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]

    gc.collect()  # earlier tests' garbage is theirs, not this test's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(body())
        gc.collect()  # "coroutine was never awaited" and unclosed-transport warnings come from finalizers
    assert [str(w.message) for w in caught] == []


# --- a peer that never acknowledges (I6) -------------------------------------------------------------


def test_outbox_is_capped_by_bytes_and_the_peer_over_it_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mesh_module, "MAX_OUTBOX_BYTES", 1024 * 1024)

    async def body() -> None:
        a, b, c = identities(3)
        mesh = Mesh(a, TABLE, {b.peer_id, c.peer_id}, lambda who, data: None, lambda who, up: None)
        chunk = bytes(200 * 1024)
        for _ in range(5):
            mesh.send(b.peer_id, chunk)
        assert mesh.queued_bytes(b.peer_id) == 5 * len(chunk) and not mesh.dropped_peers()
        mesh.broadcast(chunk)  # the sixth would pass 1 MiB for b: b is dropped, c still gets it
        assert set(mesh.dropped_peers()) == {b.peer_id}
        assert "unacknowledged" in mesh.dropped_peers()[b.peer_id]
        assert mesh.queued_bytes(b.peer_id) == 0 and mesh.queued(c.peer_id) == 1
        await mesh.close()

    run(body())


def test_hostile_peer_that_never_acknowledges_is_dropped_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A seated peer (it passes the handshake) reads everything and acknowledges nothing, at the
    socket: first its stalled link is closed, then, as the outbox passes its byte cap, it is dropped
    for good (its dials refused), while an honest peer keeps receiving every message."""
    caplog.set_level(logging.INFO, logger="lanplay.net.mesh")
    monkeypatch.setattr(mesh_module, "MAX_OUTBOX_BYTES", 2 * 1024 * 1024)
    monkeypatch.setattr(mesh_module, "ACK_TIMEOUT", 0.4)

    async def body() -> None:
        low, honest_id, target_id = identities(3)  # low dials the others: it plays the hostile peer by hand
        peers = await make_peers([honest_id, target_id])
        honest, target = peers
        for peer in peers:
            peer.mesh.allow(low.peer_id)
        try:
            await link_all(peers)
            chunk = os.urandom(100 * 1024)
            async with raw_connect(target.port) as ws:
                cipher = await raw_handshake(ws, low)
                await raw_resume(ws, cipher, os.urandom(16))
                await until(lambda: low.peer_id in target.mesh.connected_peers())
                for _ in range(3):
                    target.mesh.broadcast(chunk)
                got = 0
                with contextlib.suppress(ConnectionClosed):
                    async with asyncio.timeout(WAIT):
                        while True:  # read, never acknowledge
                            frame = cipher.open(await ws.recv())
                            got += frame[:1] == b"\x01"
                assert got == 3
                assert ws.close_reason == "messages not acknowledged"
            assert any("nothing acknowledged" in r.getMessage() for r in caplog.records)
            await until(lambda: low.peer_id not in target.mesh.connected_peers())
            # It keeps not acknowledging: past 2 MiB held for it, it is dropped; nothing raises.
            for _ in range(30):
                target.mesh.broadcast(chunk)
                await until(lambda: target.mesh.queued(honest.id) == 0)  # the honest peer keeps up
            assert low.peer_id in target.mesh.dropped_peers()
            assert target.mesh.queued_bytes(low.peer_id) == 0
            async with raw_connect(target.port) as ws:
                with contextlib.suppress(ConnectionClosed):
                    await raw_handshake(ws, low)
                await expect_closed(ws, 1008)
            assert any("was dropped" in m for m in refusals(caplog))
            await until(lambda: len(honest.received_from(target)) == 33)
            assert target.mesh.connected_peers() == {honest.id}
        finally:
            await close_all(peers)

    run(body(), limit=30.0)


def test_a_link_quiet_longer_than_the_ack_timeout_is_not_closed_on_its_next_message(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The acknowledgement clock starts when a message is sent with nothing else outstanding, not when
    the link last carried something: a healthy link quiet for longer than `ACK_TIMEOUT` keeps working
    when it speaks again, as long as the peer acknowledges within `ACK_TIMEOUT` of that."""
    caplog.set_level(logging.INFO, logger="lanplay.net.mesh")
    timeout = 0.4
    monkeypatch.setattr(mesh_module, "ACK_TIMEOUT", timeout)

    async def body() -> None:
        low, target_id = identities(2)  # low dials: a peer played by hand, so the test says when it acknowledges
        (target,) = await make_peers([target_id])
        target.mesh.allow(low.peer_id)
        try:
            async with raw_connect(target.port) as ws:
                cipher = await raw_handshake(ws, low)
                await raw_resume(ws, cipher, os.urandom(16))
                await until(lambda: low.peer_id in target.mesh.connected_peers())

                async def read_data() -> int:
                    async with asyncio.timeout(WAIT):
                        while True:
                            frame = cipher.open(await ws.recv())
                            if frame[:1] == bytes([mesh_module._DATA]):
                                return int(mesh_module._DATA_FORMAT.unpack_from(frame)[1])

                async def acknowledge(expected: int) -> None:
                    await ws.send(cipher.seal(mesh_module._encode_ack(expected)))
                    await until(lambda: target.mesh.queued(low.peer_id) == 0)

                target.mesh.send(low.peer_id, b"first")
                assert await read_data() == 0
                await acknowledge(1)
                await asyncio.sleep(timeout * 1.5)  # quiet, with nothing owed
                target.mesh.send(low.peer_id, b"after the quiet")
                assert await read_data() == 1
                # Unacknowledged for a while, well within the timeout: the writer looks at its clock meanwhile.
                await asyncio.sleep(timeout / 2)
                target.mesh.send(low.peer_id, b"more")
                assert await read_data() == 2
                await acknowledge(3)
                assert low.peer_id in target.mesh.connected_peers()
            assert not any("nothing acknowledged" in r.getMessage() for r in caplog.records)
        finally:
            await close_all([target])

    run(body())
