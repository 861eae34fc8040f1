"""The lobby: gathering the seats of a table before the game's mesh exists.

The host of a table listens on one WebSocket address (advertised by mDNS, or given as
`lanplay join HOST:PORT`). A joiner dials it, runs the same authenticated, encrypted link handshake
as the mesh (`protocol.link`, accepting any identity: this is where strangers become players), and
sends ``{"join": {"name", "mesh": [address, port]}}``. The host answers with the seat list
(``{"seats": [...], "you": seat}``) whenever it changes, and once every seat is taken, with
``{"start": {...}}``: the table's settings (game, options, every seat's public key and name) and
where each seat's mesh listens. The game's table id is the hash of those settings, so two peers
told different settings cannot play at one table: their messages would not even verify.

Browser origins are refused, as on the mesh. Nothing here touches the game itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus

from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.http11 import Request, Response

from protocol.encoding import JSONObject, canonical, decode
from protocol.errors import ProtocolError
from protocol.identity import Identity, PublicIdentity
from protocol.link import Handshake, LinkCipher
from protocol.session import TableSettings

log = logging.getLogger(__name__)

MAX_LOBBY_MESSAGE = 64 * 1024
LOBBY_TIMEOUT = 10.0


TABLE_FULL = "the table is full"


class LobbyError(Exception):
    """The lobby refused us, or a lobby message was not what it should be."""


class TableFull(LobbyError):
    """The host refused us because every seat is taken (a joiner may try the next table)."""


@dataclass(frozen=True, slots=True)
class SeatInfo:
    name: str
    public_key: str  # hex
    address: str
    port: int
    # A bot seat: the public key (hex) of the seat whose laptop runs it (its own key: a laptop of its own).
    # Left out of the JSON when None, so a table without bots hashes to the same table id as before.
    runs_on: str | None = None

    @property
    def fingerprint(self) -> str:
        return PublicIdentity.from_hex(self.public_key).fingerprint

    def to_json(self) -> JSONObject:
        out: JSONObject = {"name": self.name, "key": self.public_key, "mesh": [self.address, self.port]}
        if self.runs_on is not None:
            out["bot"] = self.runs_on
        return out

    @staticmethod
    def from_json(raw: object) -> SeatInfo:
        if not isinstance(raw, dict):
            raise LobbyError("a seat is an object")
        name, key, mesh = raw.get("name"), raw.get("key"), raw.get("mesh")
        if not isinstance(name, str) or not 0 < len(name) <= 40:
            raise LobbyError("a seat's name is 1 to 40 characters")
        if not isinstance(key, str):
            raise LobbyError("a seat's key is hex")
        PublicIdentity.from_hex(key)
        if (
            not isinstance(mesh, list)
            or len(mesh) != 2
            or not isinstance(mesh[0], str)
            or not isinstance(mesh[1], int)
            or not 0 < mesh[1] < 65536
        ):
            raise LobbyError("a seat's mesh address is [address, port]")
        runs_on = raw.get("bot")
        if runs_on is not None:
            if not isinstance(runs_on, str):
                raise LobbyError("a bot seat names the key of the laptop that runs it")
            PublicIdentity.from_hex(runs_on)
        return SeatInfo(name, key, mesh[0], mesh[1], runs_on)


@dataclass(frozen=True, slots=True)
class TablePlan:
    """What the lobby agrees on: enough to build every seat's `TableSettings` and mesh."""

    lobby_id: str
    game: str
    options: JSONObject
    seats: tuple[SeatInfo, ...]

    def to_json(self) -> JSONObject:
        return {
            "lobby": self.lobby_id,
            "game": self.game,
            "options": self.options,
            "seats": [s.to_json() for s in self.seats],
        }

    @staticmethod
    def from_json(raw: object) -> TablePlan:
        if not isinstance(raw, dict):
            raise LobbyError("a table plan is an object")
        lobby, game, options, seats = raw.get("lobby"), raw.get("game"), raw.get("options"), raw.get("seats")
        if not isinstance(lobby, str) or not isinstance(game, str) or not isinstance(options, dict):
            raise LobbyError("a table plan names lobby, game and options")
        if not isinstance(seats, list) or not seats:
            raise LobbyError("a table plan lists the seats")
        return TablePlan(lobby, game, options, tuple(SeatInfo.from_json(s) for s in seats))

    @property
    def table_id(self) -> str:
        """The game's table id: the hash of the plan, so every seat must hold the same one."""
        return hashlib.sha256(canonical(self.to_json())).hexdigest()[:32]

    def settings(self, **timeouts: float) -> TableSettings:
        return TableSettings(
            table=self.table_id,
            game=self.game,
            options=dict(self.options),
            seats=tuple(PublicIdentity.from_hex(s.public_key) for s in self.seats),
            names=tuple(s.name for s in self.seats),
            **timeouts,
        )


# --- one encrypted lobby link -----------------------------------------------------------------


async def _handshake(ws: Connection, identity: Identity, lobby_id: str, initiator: bool) -> tuple[LinkCipher, str]:
    hs = Handshake(identity, lobby_id, None, "initiator" if initiator else "responder", max_frame=MAX_LOBBY_MESSAGE)
    async with asyncio.timeout(LOBBY_TIMEOUT):
        await ws.send(hs.start())
        while not hs.complete:
            data = await ws.recv()
            if not isinstance(data, bytes):
                raise LobbyError("text frames are not part of the lobby")
            reply = hs.receive(data)
            if reply is not None:
                await ws.send(reply)
    peer = hs.peer
    assert peer is not None
    return hs.done, peer.hex()


async def _send(ws: Connection, cipher: LinkCipher, message: JSONObject) -> None:
    await ws.send(cipher.seal(canonical(message)))


async def _recv(ws: Connection, cipher: LinkCipher) -> JSONObject:
    data = await ws.recv()
    if not isinstance(data, bytes):
        raise LobbyError("text frames are not part of the lobby")
    return decode(cipher.open(data), MAX_LOBBY_MESSAGE)


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


async def fetch_table_info(host: str, port: int) -> TableInfo:
    """The game and seats of the table at host:port: a plain HTTP GET of /table. `LobbyError` if no
    lanplay lobby answers there."""
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
    return TableInfo(lobby, game, seats, taken)


async def fetch_lobby_id(host: str, port: int) -> str:
    """The lobby id of the table at host:port (for `lanplay join HOST:PORT`, which has no mDNS
    advert to read it from): a plain HTTP GET of /lobby-id."""
    head, body = await _http_get(host, port, "/lobby-id")
    lobby_id = body.decode("ascii", "replace").strip()
    if not head.startswith(b"HTTP/1.1 200") or not lobby_id or any(c not in "0123456789abcdef" for c in lobby_id):
        raise LobbyError(f"no lanplay table answers at {host}:{port}")
    return lobby_id


# --- the host -------------------------------------------------------------------------------


@dataclass
class _Joiner:
    ws: ServerConnection
    cipher: LinkCipher
    info: SeatInfo


@dataclass
class LobbyHost:
    """Gathers `seats` players: the host's own seat (0) first, then joiners in the order they came."""

    identity: Identity
    game: str
    options: JSONObject
    seats: int
    host_seat: SeatInfo
    lobby_id: str = field(default_factory=lambda: secrets.token_hex(16))
    on_change: Callable[[tuple[SeatInfo, ...]], None] | None = None
    _joiners: list[_Joiner] = field(default_factory=list)
    _server: Server | None = None
    _plan: asyncio.Future[TablePlan] | None = None

    async def start(self, host: str, port: int = 0) -> int:
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

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.path == "/lobby-id":
            return connection.respond(HTTPStatus.OK, self.lobby_id + "\n")
        if request.path == "/table":
            info = {"lobby": self.lobby_id, "game": self.game, "seats": self.seats, "taken": len(self.taken)}
            return connection.respond(HTTPStatus.OK, canonical(info).decode() + "\n")
        return _refuse_browsers(connection, request)

    async def _serve(self, ws: ServerConnection) -> None:
        try:
            cipher, key = await _handshake(ws, self.identity, self.lobby_id, initiator=False)
            message = await _recv(ws, cipher)
            join = message.get("join")
            if not isinstance(join, dict):
                raise LobbyError("the first lobby message is a join")
            info = SeatInfo.from_json({**join, "key": key})
            if any(s.public_key == key for s in self.taken):
                raise LobbyError("this identity already has a seat")
            if len(self.taken) >= self.seats or self._plan is None or self._plan.done():
                await _send(ws, cipher, {"error": TABLE_FULL})
                return
            self._joiners.append(_Joiner(ws, cipher, info))
            log.info("lobby: %s (%s) took seat %d", info.name, info.fingerprint, len(self.taken) - 1)
            await self._announce()
            await ws.wait_closed()
        except (ProtocolError, LobbyError, ConnectionClosed, WebSocketException, TimeoutError) as exc:
            log.warning("lobby: refused a joiner: %s", exc)
        finally:
            if self._plan is not None and not self._plan.done():
                before = len(self._joiners)
                self._joiners = [j for j in self._joiners if j.ws is not ws]
                if len(self._joiners) != before:  # a seat came free again: tell the others and mDNS
                    with contextlib.suppress(Exception):
                        await self._announce()

    async def _announce(self) -> None:
        seats = [s.to_json() for s in self.taken]
        if self.on_change is not None:
            self.on_change(self.taken)
        for seat, joiner in enumerate(self._joiners, start=1):
            with contextlib.suppress(ConnectionClosed):
                await _send(joiner.ws, joiner.cipher, {"seats": seats, "you": seat})
        if len(self.taken) == self.seats and self._plan is not None and not self._plan.done():
            plan = TablePlan(self.lobby_id, self.game, self.options, self.taken)
            for joiner in self._joiners:
                with contextlib.suppress(ConnectionClosed):
                    await _send(joiner.ws, joiner.cipher, {"start": plan.to_json()})
            self._plan.set_result(plan)


async def join_lobby(
    identity: Identity,
    lobby_id: str,
    host: str,
    port: int,
    name: str,
    mesh: tuple[str, int],
    on_seats: Callable[[list[SeatInfo]], None] | None = None,
    runs_on: str | None = None,
) -> TablePlan:
    """Take a seat at the table whose lobby listens at host:port; returns once the game starts.
    `runs_on`: this seat is a bot run by the laptop with that public key (hex). `TableFull` if every
    seat is taken."""
    async with ws_connect(
        f"ws://{host}:{port}/", compression=None, max_size=MAX_LOBBY_MESSAGE, proxy=None, open_timeout=LOBBY_TIMEOUT
    ) as ws:
        cipher, _ = await _handshake(ws, identity, lobby_id, initiator=True)
        join: JSONObject = {"name": name, "mesh": [mesh[0], mesh[1]]}
        if runs_on is not None:
            join["bot"] = runs_on
        await _send(ws, cipher, {"join": join})
        while True:
            message = await _recv(ws, cipher)
            if "error" in message:
                if message["error"] == TABLE_FULL:
                    raise TableFull(f"the host refused: {TABLE_FULL}")
                raise LobbyError(f"the host refused: {message['error']}")
            if "seats" in message and on_seats is not None:
                raw = message["seats"]
                on_seats([SeatInfo.from_json(s) for s in raw] if isinstance(raw, list) else [])
            if "start" in message:
                plan = TablePlan.from_json(message["start"])
                if plan.lobby_id != lobby_id or not any(s.public_key == identity.public.hex() for s in plan.seats):
                    raise LobbyError("the host's table plan does not include this seat")
                return plan
