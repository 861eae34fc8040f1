"""The lobby: gathering the seats of a table before the game's mesh exists (I7: the lobby is signed).

The host of a table listens on one WebSocket address (advertised by mDNS, or given as
`lanplay join HOST:PORT`). A joiner dials it and runs the same authenticated, encrypted link
handshake as the mesh (`protocol.link`, accepting any identity: this is where strangers become
players). When the table was found by mDNS, the joiner **pins the host key**: the key the host proves
in the handshake must be the one whose fingerprint the advert carries, or the joiner leaves. Then,
one JSON object per message:

- joiner: ``{"join": {"name", "mesh": [address, port], "protocol", "rules"}}`` (and, for a bot seat,
  ``"bot"``: the key of the laptop that runs it, with ``"vouch"``: that laptop's signature when it is
  another seat's); the host answers ``{"seats": [...], "you": i}`` (the peers seated so far, in the
  order they joined) whenever that list changes, or ``{"error": why}`` (another version, a mesh
  address that cannot be this peer's, a bot host that did not say so: P-6.7); a mesh address a
  seated peer announced is refused with ``"mesh_taken": true`` as well, and the joiner may draw
  another port and join again; a full table is ``{"error": "the table is full"}``, and a joiner
  that found it by mDNS may try the next table. Either only when it is the answer to the join: once
  seated, a new join would be a new draw of the seat order (P-3.2), and the joiner leaves;
- once every seat is taken, the seat order is drawn jointly and the plan signed
  (`protocol.plan`): host ``{"draw": {"attempt", "roster"}}``; every joiner checks the roster
  lists it as it joined and the host as the peer of this link, and answers
  ``{"commit": {"attempt", "digest"}}``; host ``{"commits": {"attempt", "list", "host"}}`` (all
  commitments, and the host's own reveal); joiners ``{"reveal": {"attempt", "value", "nonce"}}``;
  host ``{"reveals": {"attempt", "list"}}``; every seat derives the same order and plan and signs it,
  ``{"sign": {"attempt", "signature"}}``; host ``{"start": plan}`` with every seat's signature.
  A joiner returns the plan only once it verifies in full (`TablePlan.verify`); the runner checks
  it again before the first shuffle. Every seat checks every field of the roster before it commits
  (`protocol.plan.check_table`), and takes each step once per attempt, attempts in increasing order:
  commitments, reveals or a draw sent again make a joiner leave, naming the host (P-6.5).

A seat that leaves or stalls (`LOBBY_TIMEOUT` per step) while the commitments are gathered frees its
seat; the draw starts again, under a new ``attempt``, when the table is full again. Once the host has
sent the commitments (the reveals have begun), whoever reveals last may already know the order, so a
restart would be a free re-roll for it (P-3.2): a seat that then withholds its reveal or its
signature, or leaves, is **barred** from this lobby by key. It is told ``{"error": why}``, every other
seat of the draw ``{"barred": {"key", "step", "why"}}`` (the step it failed: reveal, signature, left),
and its key is refused if it comes back; after `MAX_REDRAWS` attempts failed so, the host's lobby
ends. A joiner that can tell a bar is false (a seat barred for a reveal this joiner was passed, or
for a signature while this joiner was never passed the reveals) leaves: the host fails that attempt
(P-6.5). A joiner, for
its part, takes part in a new draw after it revealed only if the host barred a seat of that draw
meanwhile (and never with a barred seat in it), and in at most `MAX_REDRAWS` such draws: a host that
re-draws on its own (the same seats, or a seat dropped and put back, or swapped for another) is left
at once with an error that names it. The game's table id is the hash of the plan, so two peers told
different plans cannot play at one table: their messages would not even verify; and a plan listing a
peer that did not join cannot start, since that peer never signs it.

Browser origins are refused, as on the mesh. Nothing here touches the game itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.http11 import Request, Response

from lanplay.base.text import shown
from protocol.commitment import Commitment, Opening, verify_opening
from protocol.encoding import JSONObject, canonical, decode
from protocol.errors import ProtocolError
from protocol.identity import Identity, PublicIdentity
from protocol.link import Handshake, LinkCipher
from protocol.plan import (
    DEFAULT_PATIENCE,
    DRAW_RULE,
    FIELD_RULE,
    ORDER_RULE,
    ORDER_TAG,
    PlanDraw,
    Roster,
    SeatInfo,
    TablePlan,
    check_game,
    check_level,
    check_mesh_address,
    check_name,
    check_patience,
    commitment_from_json,
    opening_from_json,
)
from protocol.table import PROTOCOL_VERSION
from protocol.version import RULES_DIGEST, short

log = logging.getLogger(__name__)

MAX_LOBBY_MESSAGE = 64 * 1024
LOBBY_TIMEOUT = 10.0
# How many times a joiner lets the seat draw start again after it revealed (each time because the host
# barred a seat of that draw). Every such restart is a re-roll of the order, so a host that bars one
# accomplice after another cannot re-roll without bound (P-3.2).
MAX_REDRAWS = 2
MAX_WHY = 200  # a bar's reason, as a joiner shows it


TABLE_FULL = "the table is full"


class LobbyError(Exception):
    """The lobby refused us, or a lobby message was not what it should be."""


class TableFull(LobbyError):
    """The host refused us because every seat is taken (a joiner may try the next table)."""


class MeshAddressTaken(LobbyError):
    """The host refused us because a seated peer announced the same mesh address: two laptops' probes
    found one port free at once (a joiner may draw another port and ask again)."""


@dataclass(frozen=True, slots=True)
class SeatBarred:
    """What a joiner is told when the host bars a seat of its draw (P-3.2): who, and why (the why is
    the host's text, already made safe to show)."""

    name: str
    fingerprint: str
    why: str

    def __str__(self) -> str:
        return (f"{shown(self.name)} ({self.fingerprint}) is barred from this lobby: {self.why}; "
                f"the seat order is drawn again without it ({ORDER_RULE})")  # fmt: skip


# --- one encrypted lobby link -----------------------------------------------------------------


async def sealed_handshake(
    ws: Connection, identity: Identity, channel: str, initiator: bool, max_frame: int, fail: type[LobbyError]
) -> tuple[LinkCipher, str]:
    """The link handshake (protocol/link.py) over a websocket, for `channel` (a lobby's id, a table's): the
    sealing cipher and the peer's key. `fail` is raised for a text frame. The caller bounds the time."""
    hs = Handshake(identity, channel, None, "initiator" if initiator else "responder", max_frame=max_frame)
    await ws.send(hs.start())
    while not hs.complete:
        data = await ws.recv()
        if not isinstance(data, bytes):
            raise fail("text frames are not part of this link")
        reply = hs.receive(data)
        if reply is not None:
            await ws.send(reply)
    peer = hs.peer
    assert peer is not None
    return hs.done, peer.hex()


async def sealed_send(ws: Connection, cipher: LinkCipher, message: JSONObject) -> None:
    await ws.send(cipher.seal(canonical(message)))


async def sealed_recv(ws: Connection, cipher: LinkCipher, max_size: int, fail: type[LobbyError]) -> JSONObject:
    data = await ws.recv()
    if not isinstance(data, bytes):
        raise fail("text frames are not part of this link")
    return decode(cipher.open(data), max_size)


async def _handshake(ws: Connection, identity: Identity, lobby_id: str, initiator: bool) -> tuple[LinkCipher, str]:
    async with asyncio.timeout(LOBBY_TIMEOUT):
        return await sealed_handshake(ws, identity, lobby_id, initiator, MAX_LOBBY_MESSAGE, LobbyError)


_send = sealed_send


async def _recv(ws: Connection, cipher: LinkCipher) -> JSONObject:
    return await sealed_recv(ws, cipher, MAX_LOBBY_MESSAGE, LobbyError)


def _refuse_browsers(connection: ServerConnection, request: Request) -> Response | None:
    if request.headers.get("Origin") is not None:
        log.warning("lobby: refused a browser page (Origin %s)", request.headers.get("Origin"))
        return connection.respond(HTTPStatus.FORBIDDEN, "lanplay peers only\n")
    return None


async def _http_get(host: str, port: int, path: str) -> tuple[bytes, bytes]:
    async with asyncio.timeout(LOBBY_TIMEOUT):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
            response = await reader.read(4096)
        finally:
            writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    return head, body


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What a lobby says about its table before one joins (`lanplay join HOST:PORT` has no advert)."""

    lobby_id: str
    game: str
    seats: int
    taken: int
    protocol: int


def version_mismatch(theirs: object) -> str:
    """Why a table and a joiner of different table protocol versions cannot play together."""
    shown_theirs = shown(str(theirs), 20) if theirs is not None else "none"
    return (
        f"the table protocol versions differ: this table speaks {PROTOCOL_VERSION}, the joiner {shown_theirs}; "
        "install the same lanplay on every laptop"
    )


def rules_mismatch(theirs: object, who: str) -> str:
    """Why two laptops whose rules differ cannot play together (P-6.7: the plan pins the rules)."""
    shown_theirs = shown(theirs[:12]) if isinstance(theirs, str) else "none"
    return (
        f"{who} judges by rules version {shown_theirs}, this laptop by {short(RULES_DIGEST)} ({FIELD_RULE}): "
        "install the same lanplay on every laptop"
    )


async def fetch_table_info(host: str, port: int) -> TableInfo:
    """The game and seats of the table at host:port: a plain HTTP GET of /table. `LobbyError` if no
    lanplay lobby answers there, or one of another table protocol version (its seats would read our
    honest passes as faults: the same check as the advert's `v` on the mDNS path)."""
    head, body = await _http_get(host, port, "/table")
    try:
        raw = decode(body.strip(), 4096) if head.startswith(b"HTTP/1.1 200") else None
    except ProtocolError:
        raw = None
    if raw is None:
        raise LobbyError(f"no lanplay table answers at {host}:{port}")
    lobby, game, seats, taken = raw.get("lobby"), raw.get("game"), raw.get("seats"), raw.get("taken")
    if not (isinstance(lobby, str) and isinstance(game, str) and isinstance(seats, int) and isinstance(taken, int)):
        raise LobbyError(f"the table at {host}:{port} describes itself badly")
    protocol = raw.get("protocol")
    if protocol != PROTOCOL_VERSION or not isinstance(protocol, int):
        theirs = "none (an older lanplay)" if protocol is None else shown(str(protocol), 20)
        raise LobbyError(
            f"the table at {host}:{port} speaks table protocol version {theirs}, this lanplay speaks "
            f"{PROTOCOL_VERSION}: install the same lanplay on every laptop"
        )
    if raw.get("rules") != RULES_DIGEST:
        raise LobbyError(rules_mismatch(raw.get("rules"), f"the table at {host}:{port}"))
    return TableInfo(lobby, game, seats, taken, protocol)


async def fetch_lobby_id(host: str, port: int) -> str:
    """The lobby id of the table at host:port (for `lanplay join HOST:PORT`, which has no mDNS
    advert to read it from): a plain HTTP GET of /lobby-id."""
    head, body = await _http_get(host, port, "/lobby-id")
    lobby_id = body.decode("ascii", "replace").strip()
    if not head.startswith(b"HTTP/1.1 200") or not lobby_id or any(c not in "0123456789abcdef" for c in lobby_id):
        raise LobbyError(f"no lanplay table answers at {host}:{port}")
    return lobby_id




# --- the host -------------------------------------------------------------------------------


@dataclass(eq=False)
class _Joiner:
    ws: ServerConnection
    cipher: LinkCipher
    info: SeatInfo
    # In a draw whose reveals have begun: leaving or stalling now bars this seat (P-3.2).
    revealing: bool = False


@dataclass(eq=False)
class _HostDraw:
    """One attempt at drawing the seat order and signing the plan, as the host runs it."""

    attempt: int
    roster: Roster
    mine: PlanDraw
    joiners: tuple[_Joiner, ...]  # join index i + 1 is joiners[i]
    commits: dict[int, Commitment] = field(default_factory=dict)  # join index -> commitment
    reveals: dict[int, Opening] = field(default_factory=dict)
    signatures: dict[int, str] = field(default_factory=dict)  # join index -> signature
    plan: TablePlan | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class LobbyHost:
    """Gathers `seats` players, the host first, then joiners in the order they came; then draws the
    seat order with them and collects every seat's signature on the plan (module docstring)."""

    identity: Identity
    game: str
    options: JSONObject
    seats: int
    host_seat: SeatInfo
    patience: int = DEFAULT_PATIENCE  # signed in the plan: every seat waits as long (P-5.5)
    lobby_id: str = field(default_factory=lambda: secrets.token_hex(16))
    on_change: Callable[[tuple[SeatInfo, ...]], None] | None = None
    # A play-again lobby: only these keys (the laptops of the finished table) and bots they run may sit.
    only: frozenset[str] | None = None
    level: str | None = None  # the table's bot level, signed in the plan (P-5.7: a bot taking a seat plays at it)
    _joiners: list[_Joiner] = field(default_factory=list)
    _server: Server | None = None
    _plan: asyncio.Future[TablePlan] | None = None
    _draw: _HostDraw | None = None
    _draw_task: asyncio.Task[None] | None = None
    _attempts: int = 0
    _barred: dict[str, str] = field(default_factory=dict)  # public key -> why (P-6.5)
    _failed: set[int] = field(default_factory=set)  # attempts that failed after their reveals began
    _background: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def barred(self) -> Mapping[str, str]:
        """The keys barred from this lobby, and why (a seat that withheld its part of the seat draw)."""
        return dict(self._barred)

    async def start(self, host: str, port: int = 0) -> int:
        try:
            check_name(self.host_seat.name)
            check_mesh_address(self.host_seat.address)
            check_game(self.game, self.options, self.seats)  # the engine's own word on them (P-6.7)
            check_patience(self.patience)
            self.level = check_level(self.level)
        except ProtocolError as exc:
            raise LobbyError(f"cannot host: {exc.message}") from None
        self._plan = asyncio.get_running_loop().create_future()
        self._server = await serve(
            self._serve, host, port, compression=None, max_size=MAX_LOBBY_MESSAGE, process_request=self._http
        )
        bound: int = self._server.sockets[0].getsockname()[1]
        return bound

    @property
    def taken(self) -> tuple[SeatInfo, ...]:
        return (self.host_seat, *(j.info for j in self._joiners))

    async def wait_plan(self) -> TablePlan:
        assert self._plan is not None
        return await self._plan

    @property
    def drawing(self) -> bool:
        """The seat draw has begun (or the plan is made): the seats are no longer free to leave for another table."""
        return self._draw is not None or (self._plan is not None and self._plan.done())

    def start_with_those_here(self) -> bool:
        """The table becomes the seats taken now, and the seat draw begins (a play-again table whose
        other players did not come). False if the draw has begun, or the game is not for that many."""
        if self._plan is None or self._plan.done() or self._draw is not None or len(self.taken) == self.seats:
            return False
        try:
            check_game(self.game, self.options, len(self.taken))
        except ProtocolError:
            return False
        self.seats = len(self.taken)
        self._spawn(self._announce())
        return True

    async def close(self) -> None:
        self._stop_draw()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path == "/lobby-id":
            return connection.respond(HTTPStatus.OK, self.lobby_id + "\n")
        if request.path == "/table":
            info = {
                "lobby": self.lobby_id, "game": self.game, "seats": self.seats, "taken": len(self.taken),
                "protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST,
            }  # fmt: skip
            return connection.respond(HTTPStatus.OK, canonical(info).decode() + "\n")
        return _refuse_browsers(connection, request)

    async def _serve(self, ws: ServerConnection) -> None:
        joiner: _Joiner | None = None
        try:
            cipher, key = await _handshake(ws, self.identity, self.lobby_id, initiator=False)
            message = await _recv(ws, cipher)
            join = message.get("join")
            if not isinstance(join, dict):
                raise LobbyError("the first lobby message is a join")
            try:
                # The key is the one this peer proved in the handshake, never one it names.
                info = SeatInfo.from_json({**join, "key": key})
            except ProtocolError as exc:
                await _send(ws, cipher, {"error": exc.message})
                raise LobbyError(exc.message) from None
            if join.get("protocol") != PROTOCOL_VERSION:  # its seats would read our honest passes as faults
                why = version_mismatch(join.get("protocol"))
                await _send(ws, cipher, {"error": why})
                raise LobbyError(why)
            if join.get("rules") != RULES_DIGEST:  # nor can a plan pin one version of the rules for both
                why = rules_mismatch(join.get("rules"), "the joiner")
                await _send(ws, cipher, {"error": why})
                raise LobbyError(why)
            if key in self._barred:  # no fresh draw for a seat that withheld its part of the last one (P-3.2)
                why = f"this identity is barred from this lobby: {self._barred[key]}"
                await _send(ws, cipher, {"error": why})
                raise LobbyError(why)
            if any(s.public_key == key for s in self.taken):
                await _send(ws, cipher, {"error": "this identity already has a seat"})
                raise LobbyError("this identity already has a seat")
            if self.only is not None and info.public_key not in self.only and info.runs_on not in self.only:
                why = "this table is for the players of the table it plays again, and their bots"
                await _send(ws, cipher, {"error": why})  # first: a stranger learns nothing of the seats
                raise LobbyError(why)
            taken_by = self._mesh_address_taken(info)
            if taken_by is not None:  # P-6.7; an honest joiner draws another port and asks again
                await _send(ws, cipher, {"error": taken_by, "mesh_taken": True})
                raise LobbyError(taken_by)
            fault = self._field_fault(info)
            if fault is not None:  # what every seat would refuse to sign (P-6.7): said to this joiner alone
                await _send(ws, cipher, {"error": fault})
                raise LobbyError(fault)
            if len(self.taken) >= self.seats or self._plan is None or self._plan.done():
                await _send(ws, cipher, {"error": TABLE_FULL})
                return
            joiner = _Joiner(ws, cipher, info)
            self._joiners.append(joiner)
            taken = len(self.taken)
            log.info("lobby: %s (%s) took seat %d of %d (the order is drawn when all are taken)",
                     info.name, info.fingerprint, taken, self.seats)  # fmt: skip
            await self._announce()
            while True:
                self._on_draw_message(joiner, await _recv(ws, cipher))
        except (ProtocolError, LobbyError, ConnectionClosed, WebSocketException, TimeoutError) as exc:
            if joiner is None:
                log.warning("lobby: refused a joiner: %s", exc)
            elif not isinstance(exc, ConnectionClosed):
                log.warning("lobby: dropped %s: %s", joiner.info.name, exc)
        finally:
            if self._plan is not None and not self._plan.done() and joiner in self._joiners:
                draw = self._draw
                self._stop_draw()
                if joiner.revealing and draw is not None:  # leaving now is withholding (P-3.2)
                    with contextlib.suppress(Exception):
                        await self._bar(draw, [joiner], "left", "it left during the seat draw, after the reveals began")
                else:
                    self._joiners.remove(joiner)  # a seat came free again: tell the others and mDNS
                    with contextlib.suppress(Exception):
                        await self._announce()
            with contextlib.suppress(Exception):
                await ws.close()

    def _mesh_address_taken(self, info: SeatInfo) -> str | None:
        """Why a joiner's mesh address cannot be in the plan (P-6.7): a seated peer announced it. None if free."""
        for seat in self.taken:
            if (seat.address, seat.port) == (info.address, info.port):
                return f"the mesh address {info.address}:{info.port} is {seat.name!r}'s ({FIELD_RULE})"
        return None

    def _field_fault(self, info: SeatInfo) -> str | None:
        """Why a joiner's seat cannot be in the plan (P-6.7), or None: it says it is a bot on a laptop
        that did not say so."""
        try:
            info.check_bot(self.lobby_id, {*(s.public_key for s in self.taken), info.public_key})
        except ProtocolError as exc:
            return f"{exc.message} ({exc.rule})"
        return None

    async def _announce(self) -> None:
        seats = [s.to_json() for s in self.taken]
        if self.on_change is not None:
            self.on_change(self.taken)
        for index, joiner in enumerate(list(self._joiners), start=1):
            with contextlib.suppress(ConnectionClosed):
                await _send(joiner.ws, joiner.cipher, {"seats": seats, "you": index})
        if len(self.taken) == self.seats and self._plan is not None and not self._plan.done() and self._draw is None:
            self._attempts += 1
            roster = Roster(self.lobby_id, self.game, self.options, self.taken, patience=self.patience,
                            level=self.level)  # fmt: skip
            draw = _HostDraw(self._attempts, roster, PlanDraw(roster, self.identity, secrets.token_bytes),
                             tuple(self._joiners))  # fmt: skip
            self._draw = draw
            self._draw_task = asyncio.get_running_loop().create_task(self._run_draw(draw))

    def _stop_draw(self) -> None:
        if self._draw_task is not None and not self._draw_task.done():
            self._draw_task.cancel()
        self._draw, self._draw_task = None, None

    def _on_draw_message(self, joiner: _Joiner, message: JSONObject) -> None:
        """A joiner's commit, reveal or signature for the current draw (a stale attempt is ignored)."""
        draw = self._draw
        (kind, body), *rest = message.items() if message else ((None, None),)
        if rest or kind not in ("commit", "reveal", "sign") or not isinstance(body, dict):
            raise LobbyError("expected one of commit, reveal, sign")
        if draw is None or body.get("attempt") != draw.attempt or joiner not in draw.joiners:
            return
        index = draw.joiners.index(joiner) + 1
        if kind == "commit" and index not in draw.commits:
            draw.commits[index] = commitment_from_json(body.get("digest"))
        elif kind == "reveal" and len(draw.commits) == len(draw.roster.seats) and index not in draw.reveals:
            opening = opening_from_json(body)
            verify_opening(draw.commits[index], opening, ORDER_TAG, draw.roster.digest, 0, index)
            draw.reveals[index] = opening
        elif kind == "sign" and draw.plan is not None and index not in draw.signatures:
            seat = [s.public_key for s in draw.plan.seats].index(joiner.info.public_key)
            draw.plan.check_signature(seat, body.get("signature"))
            draw.signatures[index] = str(body["signature"])
        else:
            raise LobbyError(f"a {kind} out of turn")
        draw.changed.set()

    async def _run_draw(self, draw: _HostDraw) -> None:
        n = len(draw.roster.seats)
        try:
            log.info("lobby: every seat is taken; drawing the seat order (attempt %d)", draw.attempt)
            await self._tell(draw, {"draw": {"attempt": draw.attempt, "roster": draw.roster.to_json()}})
            draw.commits[0] = draw.mine.commitment
            if not await self._gather(draw, "commit", draw.commits):
                return
            commitments = [draw.commits[i] for i in range(n)]
            draw.reveals[0] = draw.mine.reveal(commitments)
            host_reveal = {"value": draw.reveals[0].value.hex(), "nonce": draw.reveals[0].nonce.hex()}
            for joiner in draw.joiners:  # from here, whoever reveals last may know the order (P-3.2)
                joiner.revealing = True
            await self._tell(draw, {"commits": {"attempt": draw.attempt, "list": [c.hex() for c in commitments],
                                                "host": host_reveal}})  # fmt: skip
            if not await self._gather(draw, "reveal", draw.reveals):
                return
            openings = [draw.reveals[i] for i in range(n)]
            reveals = [{"value": o.value.hex(), "nonce": o.nonce.hex()} for o in openings]
            plan, signature = draw.mine.plan(openings)
            draw.plan, draw.signatures[0] = plan, signature
            await self._tell(draw, {"reveals": {"attempt": draw.attempt, "list": reveals}})
            if not await self._gather(draw, "signature", draw.signatures):
                return
            by_key = {s.public_key: i for i, s in enumerate(draw.roster.seats)}
            signed = plan.with_signatures([draw.signatures[by_key[s.public_key]] for s in plan.seats])
            signed = draw.mine.finish(signed)
            await self._tell(draw, {"start": signed.to_json()})
            log.info("lobby: plan signed by every seat; table %s", signed.table_id)
            if self._plan is not None and not self._plan.done():
                self._plan.set_result(signed)
        except (ProtocolError, LobbyError) as exc:  # cannot happen with the host's own values
            log.warning("lobby: the seat draw failed: %s", exc)
        finally:
            for joiner in draw.joiners:  # this draw is over: leaving now re-rolls nothing
                joiner.revealing = False
            if self._draw is draw and (self._plan is None or not self._plan.done()):
                self._draw = None  # a new attempt may start when the table is full again
                if len(self.taken) == self.seats:  # (it filled up while this attempt was ending)
                    self._spawn(self._announce())

    async def _tell(self, draw: _HostDraw, message: JSONObject) -> None:
        for joiner in draw.joiners:
            with contextlib.suppress(ConnectionClosed):
                await _send(joiner.ws, joiner.cipher, message)

    async def _gather(self, draw: _HostDraw, what: str, got: Mapping[int, object]) -> bool:
        """Wait until every seat sent its ``what``; a seat that does not within `LOBBY_TIMEOUT` is
        dropped (its seat comes free, and the draw starts again when the table is full)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LOBBY_TIMEOUT):
                while len(got) < len(draw.roster.seats):
                    draw.changed.clear()
                    await draw.changed.wait()
                return True
        late = [j for i, j in enumerate(draw.joiners, start=1) if i not in got]
        if what == "commit":  # nothing is open yet: a restart re-rolls nothing, the seat is only freed
            for joiner in late:
                log.warning("lobby: %s sent no commit for the seat draw in %g s", joiner.info.name, LOBBY_TIMEOUT)
                with contextlib.suppress(Exception):
                    await _send(joiner.ws, joiner.cipher, {"error": "no commit for the seat draw in time"})
                self._spawn_close(joiner.ws)
        else:  # shielded: another seat leaving meanwhile cancels this draw, but must not cut a bar in half
            why = f"it committed to the seat draw and sent no {what} within {LOBBY_TIMEOUT:g} s"
            await asyncio.shield(self._spawn(self._bar(draw, late, what, why)))
        return False  # this attempt is over; the late joiners' leaving re-announces the seats

    async def _bar(self, draw: _HostDraw, joiners: list[_Joiner], step: str, why: str) -> None:
        """Bar seats that withheld their part of a draw whose reveals had begun (P-6.5): a restart is a
        fresh roll of the order, which the last to reveal may have seen already. Every bar is recorded
        before anyone is told or closed, so a close that cancels the draw cannot leave one unbarred.
        The seat is told why; every other seat of the draw is told who, for which ``step`` ("reveal",
        "signature" or "left") and why (the order of the messages on each link puts the bar before the
        new seat list). The draw after `MAX_REDRAWS` such bars is not held: the lobby ends, as each
        joiner leaves a host that re-draws more often, so seats that withhold in turn (fresh keys cost
        nothing) cannot re-roll the order at this host without bound either."""
        fresh = [j for j in joiners if j.info.public_key not in self._barred]
        if fresh and draw.attempt not in self._failed:
            self._failed.add(draw.attempt)
            if len(self._failed) > MAX_REDRAWS and self._plan is not None and not self._plan.done():
                self._plan.set_exception(LobbyError(
                    f"{len(self._failed)} seat draws failed after their reveals had begun, each time a seat "
                    f"withheld its part: too many re-draws of the seat order to trust ({DRAW_RULE}); the lobby "
                    "closes"))  # fmt: skip
        for joiner in fresh:
            self._barred[joiner.info.public_key] = why
            if joiner in self._joiners:  # its seat is free at once: no seat list may show it again
                self._joiners.remove(joiner)
            log.warning("lobby: barred %s (%s) from this lobby: %s", joiner.info.name, joiner.info.fingerprint, why)
        for joiner in fresh:
            for other in draw.joiners:
                if other is not joiner and other.info.public_key not in self._barred:
                    with contextlib.suppress(Exception):
                        bar = {"key": joiner.info.public_key, "step": step, "why": why}
                        await _send(other.ws, other.cipher, {"barred": bar})
        for joiner in fresh:
            with contextlib.suppress(Exception):
                await _send(joiner.ws, joiner.cipher, {"error": f"barred from this lobby ({ORDER_RULE}): {why}"})
            self._spawn_close(joiner.ws)
        ended = self._plan is not None and self._plan.done() and self._plan.exception() is not None
        if fresh and ended:  # the lobby is over: every seat still here is told why, and let go
            assert self._plan is not None
            for joiner in list(self._joiners):
                with contextlib.suppress(Exception):
                    await _send(joiner.ws, joiner.cipher, {"error": str(self._plan.exception())})
                self._spawn_close(joiner.ws)
        elif fresh:
            with contextlib.suppress(Exception):
                await self._announce()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` on its own, kept referenced until it is done (the loop holds tasks weakly)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _spawn_close(self, ws: ServerConnection) -> None:
        self._spawn(ws.close())


# --- the joiner -----------------------------------------------------------------------------


async def join_lobby(
    identity: Identity,
    lobby_id: str,
    host: str,
    port: int,
    name: str,
    mesh: tuple[str, int],
    on_seats: Callable[[list[SeatInfo]], None] | None = None,
    runs_on: str | None = None,
    *,
    host_fingerprint: str | None = None,
    game: str | None = None,
    on_notice: Callable[[SeatBarred], None] | None = None,
    vouch: str | None = None,
) -> TablePlan:
    """Take a seat at the table whose lobby listens at host:port; returns the plan, signed by every
    seat and verified, once the game starts. `runs_on`: this seat is a bot run by the laptop with that
    public key (hex); unless that is this seat's own key, ``vouch`` is that laptop's word for it
    (`protocol.plan.bot_vouch`), without which no seat signs the plan (P-6.7). ``host_fingerprint``
    (and ``game``), from the mDNS advert, pin the host: a host that proves another key (or offers
    another game) is refused. `TableFull` if every seat is taken.
    ``on_notice`` is told (and the log warned) what the lobby did that the player should know: a seat
    barred for withholding its part of the seat draw, and who it was."""
    try:
        check_name(name)
        check_mesh_address(mesh[0])
        me = SeatInfo(name, identity.public.hex(), mesh[0], mesh[1], runs_on, vouch)
    except ProtocolError as exc:
        raise LobbyError(f"cannot take a seat: {exc.message}") from None
    async with ws_connect(
        f"ws://{host}:{port}/", compression=None, max_size=MAX_LOBBY_MESSAGE, proxy=None, open_timeout=LOBBY_TIMEOUT
    ) as ws:
        cipher, host_key = await _handshake(ws, identity, lobby_id, initiator=True)
        host_identity = PublicIdentity.from_hex(host_key)
        if host_fingerprint is not None and host_identity.fingerprint != host_fingerprint:
            raise LobbyError(
                f"the host at {host}:{port} proved key {host_identity.fingerprint}, but its advert names "
                f"{host_fingerprint}: refusing it"
            )
        join: JSONObject = {"name": name, "mesh": [mesh[0], mesh[1]], "protocol": PROTOCOL_VERSION,
                            "rules": RULES_DIGEST}  # fmt: skip
        if runs_on is not None:
            join["bot"] = runs_on
        if vouch is not None:
            join["vouch"] = vouch
        await _send(ws, cipher, {"join": join})
        seat = _JoinerSeat(identity, lobby_id, me, host_key, game)
        deadline: float | None = None  # while the host owes the next step of the draw
        parts = 0  # this seat's reveals and signatures sent so far: each starts the host's clock anew
        while True:
            if not seat.host_owes:
                deadline = None
            elif deadline is None or parts != seat.parts_sent:  # an honest host goes on within LOBBY_TIMEOUT
                deadline, parts = asyncio.get_running_loop().time() + 3 * LOBBY_TIMEOUT, seat.parts_sent
            try:
                async with asyncio.timeout_at(deadline):
                    message = await _recv(ws, cipher)
            except TimeoutError:
                raise LobbyError(
                    f"the host did not go on with the seat draw for {3 * LOBBY_TIMEOUT:g} s after this seat sent its "
                    f"part: it holds the draw up ({ORDER_RULE}); leaving"
                ) from None
            try:
                reply, plan = seat.handle(message, on_seats)
            except ProtocolError as exc:
                raise LobbyError(f"the host's lobby is not to be trusted: {exc.message} ({exc.rule})") from None
            finally:
                for notice in seat.take_notices():
                    log.warning("lobby: %s", notice)
                    if on_notice is not None:
                        on_notice(notice)
            if reply is not None:
                await _send(ws, cipher, reply)
            if plan is not None:
                return plan


@dataclass
class _JoinerSeat:
    """A joiner's side of the lobby, message by message (`handle`).

    P-3.2 against the host, which relays every reveal and so knows the drawn order before anyone: once
    this seat has revealed in a draw (``revealed``, that draw's roster), it takes part in another draw
    only if the host barred a seat of that roster since (``bars_since``), at most `MAX_REDRAWS` times,
    and never in a roster that lists a barred seat. A host that re-draws for any other reason is
    re-rolling the order it saw, and this seat leaves saying so."""

    identity: Identity
    lobby_id: str
    me: SeatInfo
    host_key: str
    game: str | None
    attempt: object = None
    attempts: set[int] = field(default_factory=set)  # every attempt this seat drew in: each is drawn once
    draw: PlanDraw | None = None
    revealed: Roster | None = None
    bars_since: set[str] = field(default_factory=set)  # keys of ``revealed`` barred since this seat revealed
    barred: dict[str, str] = field(default_factory=dict)  # every key the host barred, and its name
    redraws: int = 0
    notices: list[SeatBarred] = field(default_factory=list)
    host_owes: bool = False  # this seat sent its reveal or signature: the host owes the next step
    parts_sent: int = 0
    answered: bool = False  # the host answered the join (a refusal, or the first seat list)

    def take_notices(self) -> list[SeatBarred]:
        notices, self.notices = self.notices, []
        return notices

    def handle(
        self, message: JSONObject, on_seats: Callable[[list[SeatInfo]], None] | None
    ) -> tuple[JSONObject | None, TablePlan | None]:
        """The reply to send (if any) and the verified plan (once the game starts)."""
        first, self.answered = not self.answered, True
        if "error" in message:
            why = shown(message["error"], MAX_WHY)
            again = message["error"] == TABLE_FULL or message.get("mesh_taken") is True
            if again and not first:
                # An honest host says so only in answer to a join, before it seats the joiner. Joining again
                # now (another port, the next table) would be a fresh joiner in a fresh draw: an order the
                # host may have seen already, re-rolled (P-3.2).
                raise LobbyError(
                    f"the host refused: {why}; it said so after seating this seat, and this seat does not join "
                    f"again: a new join would let the host draw the seat order anew ({ORDER_RULE})"
                )
            if message["error"] == TABLE_FULL:
                raise TableFull(f"the host refused: {TABLE_FULL}")
            if message.get("mesh_taken") is True:  # another port may be drawn and the join asked again
                raise MeshAddressTaken(f"the host refused: {why}")
            raise LobbyError(f"the host refused: {why}")
        if "barred" in message:
            self._on_barred(message["barred"])
            self.host_owes = False
            return None, None
        if "seats" in message:
            self.draw = None  # the seats changed: any draw under way is void
            raw = message["seats"]
            seats = [SeatInfo.from_json(s) for s in raw] if isinstance(raw, list) else []
            back = [s for s in seats if s.public_key in self.barred]
            if back:
                raise LobbyError(
                    f"the host let {shown(back[0].name)} ({back[0].fingerprint}) back in after barring it from the "
                    f"seat draw: it could re-draw the seat order at will ({ORDER_RULE})"
                )
            if on_seats is not None:
                on_seats(seats)
            return None, None
        draw = message.get("draw")
        if isinstance(draw, dict):
            attempt = draw.get("attempt")
            if not isinstance(attempt, int) or isinstance(attempt, bool):
                raise LobbyError("a seat draw names its attempt by number")
            if attempt in self.attempts or (self.attempts and attempt < max(self.attempts)):
                raise LobbyError(
                    f"the host started attempt {attempt} of the seat draw again: each attempt is drawn once "
                    f"({DRAW_RULE})"
                )
            roster = Roster.from_json(draw.get("roster"))
            self._check_roster(roster)
            self._check_redraw(roster)
            self.attempts.add(attempt)
            self.attempt = attempt
            self.draw = PlanDraw(roster, self.identity, secrets.token_bytes)
            self.host_owes = False
            return {"commit": {"attempt": self.attempt, "digest": self.draw.commitment.hex()}}, None
        if self.draw is None:
            if "start" in message:
                raise LobbyError("the host started a table without drawing its seat order with this seat")
            return None, None
        for kind in ("commits", "reveals"):
            body = message.get(kind)
            if isinstance(body, dict) and body.get("attempt") == self.attempt:
                raw = body.get("list")
                if not isinstance(raw, list):
                    raise LobbyError(f"{kind} without a list")
                if kind == "commits":
                    commitments = [commitment_from_json(c) for c in raw]
                    opening = self.draw.reveal(commitments)
                    # The host opened its share before seeing anyone else's: check it now.
                    host_opening = opening_from_json(body.get("host"))
                    verify_opening(commitments[0], host_opening, ORDER_TAG, self.draw.roster.digest, 0, 0)
                    # From here the host may learn the order: another draw must be paid for by a bar.
                    self.revealed, self.bars_since = self.draw.roster, set()
                    self.host_owes, self.parts_sent = True, self.parts_sent + 1
                    return {"reveal": {"attempt": self.attempt, "value": opening.value.hex(),
                                       "nonce": opening.nonce.hex()}}, None  # fmt: skip
                _, signature = self.draw.plan([opening_from_json(o) for o in raw])
                self.host_owes, self.parts_sent = True, self.parts_sent + 1
                return {"sign": {"attempt": self.attempt, "signature": signature}}, None
        if "start" in message:
            plan = self.draw.finish(TablePlan.from_json(message["start"]))
            return None, plan
        return None, None

    def _on_barred(self, body: object) -> None:
        """The host barred a seat for withholding its part of the draw: remember it, and say so. A bar
        this seat can tell is false shows the host failed the attempt (P-6.5), and this seat leaves
        saying so: a seat barred for its reveal whose reveal this seat was passed, or a seat barred for
        its signature while this seat, which revealed, was never passed the reveals to sign (an honest
        host passes them to every seat at once, before any bar for a signature)."""
        if not isinstance(body, dict) or not isinstance(body.get("key"), str) or not isinstance(body.get("why"), str):
            raise LobbyError("a bar names the key of the seat barred and why")
        key, why, step = str(body["key"]), shown(body["why"], MAX_WHY), body.get("step")
        if step not in ("reveal", "signature", "left"):
            raise LobbyError("a bar names the step the seat failed: reveal, signature or left")
        passed = self.draw is not None and self.draw.has_reveals  # this seat was passed every reveal
        held_back = step == "signature" and self.draw is not None and self.revealed is not None and not passed
        if key == self.me.public_key:
            if held_back:
                why += (f"; this seat was never passed the reveals to sign: the host passed them to some seats and "
                        f"not others, and fails this attempt ({DRAW_RULE})")  # fmt: skip
            elif self.revealed is not None:
                why += (f"; this seat had sent its reveal: if it did not arrive late, the host is re-drawing the "
                        f"seat order ({ORDER_RULE})")  # fmt: skip
            elif self.draw is not None:
                why += "; this seat was never sent the commitments to reveal against"
            raise LobbyError(f"the host barred this seat from the lobby: {why}")
        rosters = [r for r in (self.revealed, self.draw.roster if self.draw else None) if r is not None]
        seat = next((s for r in rosters for s in r.seats if s.public_key == key), None)
        if seat is None:
            return  # not a seat of this seat's draw: it changes nothing here
        if step == "reveal" and passed:
            raise LobbyError(
                f"the host barred {shown(seat.name)} ({seat.fingerprint}) for withholding its reveal, yet passed this "
                f"seat that very reveal: the host fails this attempt ({DRAW_RULE}); leaving"
            )
        if held_back:
            raise LobbyError(
                f"the host barred {shown(seat.name)} ({seat.fingerprint}) for withholding its signature, yet never "
                f"passed this seat the reveals to sign: it passes them to some seats and not others, and fails this "
                f"attempt ({DRAW_RULE}); leaving"
            )
        self.barred[key] = seat.name
        if self.revealed is not None and key in {s.public_key for s in self.revealed.seats}:
            self.bars_since.add(key)
        self.notices.append(SeatBarred(seat.name, seat.fingerprint, why))

    def _check_redraw(self, roster: Roster) -> None:
        """A draw after this seat revealed in another is a re-roll of an order the host may have seen:
        only a bar (of a seat of that draw, since) pays for it, and only `MAX_REDRAWS` times (P-3.2)."""
        listed = [s for s in roster.seats if s.public_key in self.barred]
        if listed:
            raise LobbyError(
                f"the host put {shown(listed[0].name)} ({listed[0].fingerprint}) back in the seat draw after "
                f"barring it: it could re-draw the seat order at will ({ORDER_RULE})"
            )
        if self.revealed is None:
            return  # nothing was revealed yet: a restart tells nobody anything
        if not self.bars_since:
            same = {s.public_key for s in roster.seats} == {s.public_key for s in self.revealed.seats}
            raise LobbyError(
                "the host started the seat draw again "
                + ("for the same seats " if same else "with other seats ")
                + "after the reveals had begun, without barring a seat that withheld: a host that does this "
                f"picks the seat order it likes from the reveals it relayed ({ORDER_RULE})"
            )
        self.redraws += 1
        if self.redraws > MAX_REDRAWS:
            raise LobbyError(
                f"the host started the seat draw again {self.redraws} times after its reveals had begun, barring "
                f"a seat each time: too many re-draws of the seat order to trust ({ORDER_RULE})"
            )
        self.revealed, self.bars_since = None, set()

    def _check_roster(self, roster: Roster) -> None:
        """The roster must be this lobby's and game, list this seat exactly as it joined, and have the
        peer of this link (the host whose key was pinned) as its first seat."""
        if roster.lobby_id != self.lobby_id:
            raise LobbyError("the roster is for another lobby")
        if self.game is not None and roster.game != self.game:
            raise LobbyError(f"the host advertised {self.game} but offers {roster.game}")
        mine = [s for s in roster.seats if s.public_key == self.me.public_key]
        if mine != [self.me]:
            raise LobbyError("the roster does not list this seat as it joined")
        if roster.seats[0].public_key != self.host_key:
            raise LobbyError("the roster's first seat is not the host this seat is linked to")


__all__ = [
    "TABLE_FULL",
    "LobbyError",
    "LobbyHost",
    "SeatBarred",
    "SeatInfo",
    "TableFull",
    "TableInfo",
    "TablePlan",
    "fetch_lobby_id",
    "fetch_table_info",
    "join_lobby",
]
