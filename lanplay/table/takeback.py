"""Taking a seat back (P-5.7, `protocol.continuation.TakeBack`): the way between the laptop of a person who
left and the table that went on without them.

The laptop that runs a bot in a seat its person may take back (`Continuation.left`) opens a **desk**: a
WebSocket address with the lobby's authenticated, encrypted link handshake (bound to the table playing
now), advertised by mDNS with the fingerprints of the keys that may come back (`TableAdvert.back`).
The returning laptop, resuming the table it left (`resume_table`), looks for a desk naming its own key
and asks there:

- it sends ``{"back": TakeBack}``, signed on the table the advert names, by the key it proved in the
  handshake; the desk's seat keeps it (`TableRunner.hold_back`) and passes it on to every seat, and the
  bot in that seat leaves at the end of the round, so the table ends and the seats go on. A laptop that
  went away without its secrets of the stopped round (killed, or cut off for the table's patience; the
  plan's `owes`) first signs a leave and those secrets at the table it went away from (`publish_owed`) and
  sends them beside the request, ``{"back": ..., "late": [...]}``: every seat settles them there before it
  holds the request (P-5.5);
- the desk answers ``{"plan": ...}``: the plan of the table playing now (which the returning laptop did
  not play), then, once the seats decided the continuation, ``{"sign": ...}``; the returning laptop checks
  it (`check_back`) and answers ``{"sig": ...}``, which the desk passes on as that seat's signature;
- last ``{"start": ...}``, the continuation signed by every seat: the returning laptop plays it.
  ``{"error": why}`` at any point ends the way back (the game ended, the request did not hold).

A link that drops once the request is out is made again and the same request sent: the desk keeps the
request it holds, takes the new link and tells it where the continuation has got to (``sign`` again, or
``start``); it stays open after the go-on until the person it gives a seat back to was told, or a patience.
Only a key the plan's `left` names is shown the plan; a desk serves a few links at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, WebSocketException

from lanplay.base.store import Journal, ResumeFailed, StoreError, journal_path
from lanplay.base.text import shown
from lanplay.net.discovery import TableAdvert, TableAdvertiser, TableBrowser
from lanplay.net.lobby import LobbyError, sealed_handshake, sealed_recv, sealed_send
from lanplay.table.runner import (
    MAX_GO_ON_BYTES,
    AnyPlan,
    LocalPlayer,
    Outcome,
    TableRunner,
    free_port,
    plan_from_json,
    publish_owed,
    unfinished_journal,
)
from protocol.continuation import Continuation, TakeBack, check_back, make_take_back
from protocol.encoding import JSONObject
from protocol.errors import ProtocolError
from protocol.identity import Identity, PublicIdentity
from protocol.link import LinkCipher
from protocol.table import PROTOCOL_VERSION, Event

log = logging.getLogger(__name__)

MAX_DESK_MESSAGE = MAX_GO_ON_BYTES + 4096  # a whole continuation, with the rounds played so far
DESK_TIMEOUT = 10.0  # the handshake, and each answer the returning laptop owes
MAX_DESK_LINKS = 8  # links of people who may come back a desk serves at once
MAX_DESK_OPENING = 64  # links in the handshake at once (each at most DESK_TIMEOUT)
BACK_TRIES = 6  # links a returning laptop makes for one request (a blip drops one; a busy desk turns one away)


class BackFailed(LobbyError):
    """The way back did not work out: the line says why (the game ended, the request did not hold)."""


async def _handshake(ws: Connection, identity: Identity, table: str, initiator: bool) -> tuple[LinkCipher, str]:
    async with asyncio.timeout(DESK_TIMEOUT):
        return await sealed_handshake(ws, identity, table, initiator, MAX_DESK_MESSAGE, BackFailed)


_send = sealed_send


async def _recv(ws: Connection, cipher: LinkCipher, timeout: float | None = None) -> JSONObject:
    async with asyncio.timeout(timeout):
        return await sealed_recv(ws, cipher, MAX_DESK_MESSAGE, BackFailed)


@dataclass
class _Asking:
    ws: ServerConnection  # the link the person asks on now (a blip and a new link replace it)
    cipher: LinkCipher
    back: TakeBack
    done: asyncio.Event
    plan: Continuation | None = None  # the continuation told last: to sign, or signed by every seat
    signed: bool = False
    told: bool = False  # the signed one reached the person's link
    moved: asyncio.Event = field(default_factory=asyncio.Event)  # set when a new link takes this one's place

    async def wait(self) -> None:
        """Until the way back is over, or another link of the person took this one's place."""
        moved = self.moved
        waits = {asyncio.ensure_future(self.done.wait()), asyncio.ensure_future(moved.wait())}
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()


class BackDesk:
    """Where the people who left the table `runner` plays may ask for their seats back (module docstring).
    Opened by the laptop that runs the bots in those seats, for one table."""

    def __init__(self, runner: TableRunner, name: str, interface: str) -> None:
        self.runner = runner
        self.name = name
        self.interface = interface
        self._server: Server | None = None
        self._advertiser: TableAdvertiser | None = None
        self._asking: dict[int, _Asking] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._links = 0  # links of people who may come back, open now
        self._opening = 0  # links still in the handshake
        runner.on_continuation = self._on_continuation

    @staticmethod
    def wanted(runner: TableRunner) -> tuple[str, ...]:
        """The fingerprints of the people who may take back a seat whose bot runs on this laptop."""
        plan = runner.plan
        if not isinstance(plan, Continuation):
            return ()
        mine = runner.identity.public.hex()
        return tuple(
            PublicIdentity.from_hex(key).fingerprint for seat, key in sorted(plan.left.items())
            if plan.seats[seat].runs_on == mine
        )  # fmt: skip

    async def start(self) -> None:
        back = self.wanted(self.runner)
        self._server = await serve(self._serve, self.interface, 0, compression=None, max_size=MAX_DESK_MESSAGE)
        port: int = self._server.sockets[0].getsockname()[1]
        settings, plan = self.runner.settings, self.runner.plan
        advert = TableAdvert(
            settings.table, plan.game, dict(plan.options), len(plan.seats), len(plan.seats), self.name,
            self.runner.identity.public.fingerprint, PROTOCOL_VERSION, self.interface, port, back=back,
        )  # fmt: skip
        self._advertiser = TableAdvertiser(advert, interface=self.interface)
        await self._advertiser.start()
        log.info("take-back desk for table %s on %s:%d (for %s)", settings.table, self.interface, port, back)

    async def close(self, why: str = "the game ended before the seat could be taken back") -> None:
        if self._tasks:  # the last words to a returning laptop (its continuation to start) go out first
            await asyncio.wait(list(self._tasks), timeout=DESK_TIMEOUT)
        for asking in list(self._asking.values()):
            if not asking.told:
                with contextlib.suppress(Exception):
                    await _send(asking.ws, asking.cipher, {"error": why})
            asking.done.set()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._advertiser is not None:
            await self._advertiser.stop()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, ws: ServerConnection) -> None:
        runner = self.runner
        if self._opening >= MAX_DESK_OPENING:  # P-6.6: links not yet authenticated, each for DESK_TIMEOUT at most
            await ws.close()
            return
        self._opening += 1
        counted = False
        try:
            try:
                cipher, key = await _handshake(ws, runner.identity, runner.settings.table, initiator=False)
            finally:
                self._opening -= 1
            plan = runner.plan
            if not isinstance(plan, Continuation) or key not in plan.left.values():
                # The plan (every seat's address, the rounds so far) goes only to a person who may come back.
                await _send(ws, cipher, {"error": "this table keeps no seat for that key"})
                return
            if self._links >= MAX_DESK_LINKS:  # a few people come back at once: only they count here
                await _send(ws, cipher, {"busy": True})
                return
            self._links += 1
            counted = True
            await _send(ws, cipher, {"plan": plan.to_json()})  # which seat it left: the plan says
            message = await _recv(ws, cipher, DESK_TIMEOUT)
            raw_late = message.get("late", [])
            late = [m for m in raw_late if isinstance(m, dict)] if isinstance(raw_late, list) else []
            try:
                back = TakeBack.from_json(message.get("back"))
                if not isinstance(raw_late, list) or len(late) != len(raw_late) or set(message) - {"back", "late"}:
                    raise ProtocolError("P-5.7", "a take-back comes with a list of late messages and nothing else")
            except ProtocolError as exc:
                await _send(ws, cipher, {"error": exc.message})
                return
            if back.key != key:
                await _send(ws, cipher, {"error": "a take-back is asked by the key that signs it"})
                return
            held = self._asking.get(back.seat)
            if held is not None and held.back.key == key:
                # The same person on a new link (a blip): the request held stays, the link is this one, and
                # the continuation is told again where it has got to.
                held.ws, held.cipher = ws, cipher
                moved, held.moved = held.moved, asyncio.Event()
                moved.set()  # the old link's wait ends: one link a person counts
                await _send(ws, cipher, {"held": back.seat})
                if held.plan is not None and held.signed:
                    await self._tell(held.plan, True, back.seat, held)
                    return
                if held.plan is not None:
                    self._spawn(self._tell(held.plan, False, back.seat, held))
                await held.wait()
                return
            if held is not None or not runner.hold_back(back, late):
                why = f"seat {back.seat} is not one this key may take back at table {runner.settings.table} now"
                plan = runner.plan
                if isinstance(plan, Continuation) and back.seat in plan.owes:
                    why += " (or its late secrets do not settle what it owes at the table before)"
                await _send(ws, cipher, {"error": why})
                return
            asking = _Asking(ws, cipher, back, asyncio.Event())
            self._asking[back.seat] = asking
            log.info("%s asks for seat %d back at table %s", back.name, back.seat, runner.settings.table)
            await _send(ws, cipher, {"held": back.seat})
            await asking.wait()
        except (ProtocolError, LobbyError, ConnectionClosed, WebSocketException, TimeoutError) as exc:
            log.warning("take-back desk: %s", exc)
        finally:
            if counted:
                self._links -= 1
            with contextlib.suppress(Exception):
                await ws.close()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_continuation(self, plan: Continuation, signed: bool) -> None:
        for seat, asking in list(self._asking.items()):
            if plan.seats[seat] != asking.back.info():
                continue
            asking.plan, asking.signed = plan, signed
            self._spawn(self._tell(plan, signed, seat, asking))

    async def _tell(self, plan: Continuation, signed: bool, seat: int, asking: _Asking) -> None:
        ws, cipher = asking.ws, asking.cipher
        try:
            if signed:
                await _send(ws, cipher, {"start": plan.to_json()})
                asking.told = True
                asking.done.set()
                return
            await _send(ws, cipher, {"sign": plan.to_json()})
            answer = await _recv(ws, cipher, DESK_TIMEOUT)
            signature = answer.get("sig")
            if isinstance(signature, str):
                self.runner.add_signature(plan.table_id, seat, signature)  # every seat checks it (collect)
        except (ProtocolError, LobbyError, ConnectionClosed, WebSocketException, TimeoutError) as exc:
            # The person may ask again on a new link while this desk is open: told again there.
            log.warning("take-back desk: %s", exc)

    async def close_when_told(self, plan: Continuation | None, patience: float) -> None:
        """Close once every person the continuation `plan` gives a seat back to was told it signed, or after
        `patience` (a link that dropped may be made again meanwhile); the others are told at once why not."""
        for seat, asking in list(self._asking.items()):
            if plan is None or plan.seats[seat] != asking.back.info():
                with contextlib.suppress(Exception):
                    await _send(asking.ws, asking.cipher, {"error": "the seat was not given back at this round's end"})
                asking.done.set()
                del self._asking[seat]
        deadline = asyncio.get_running_loop().time() + patience
        while any(not a.told for a in self._asking.values()) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
        await self.close()


async def find_desk(interface: str, identity: Identity, timeout: float) -> TableAdvert:
    """The take-back desk that names this laptop's key (TimeoutError if none shows up in `timeout`)."""
    fingerprint = identity.public.fingerprint
    async with TableBrowser(interface=interface) as browser:
        return await browser.wait_for(lambda advert: fingerprint in advert.back, timeout)


def _table_left(data_dir: Path, table_id: str, seat: int, key: str) -> AnyPlan | None:
    """The plan of table `table_id` if this laptop sat at it in `seat` (its journal there says so)."""
    try:
        records = Journal(journal_path(data_dir, table_id, seat)).read()
        plan = plan_from_json(records[0].get("plan")) if records else None
    except (StoreError, ProtocolError):
        return None
    if plan is None or plan.table_id != table_id or plan.seats[seat].public_key != key:
        return None
    return plan


def _check_descends(prior: Continuation, seat: int, key: str, data_dir: Path) -> AnyPlan:
    """The desk's table goes on from a table this laptop sat at, in this seat, and each of its seats is that
    table's person or a bot one of that table's laptops vouched for (its plan is signed by every seat of it):
    a desk of strangers cannot seat this laptop at a table of their own. The plan of the table it left."""
    left = _table_left(data_dir, prior.prior, seat, key)
    if left is None:
        raise BackFailed("the desk's table does not go on from a table this laptop sat at")
    people = {info.public_key for info in left.seats}
    for index, info in enumerate(prior.seats):
        if info.public_key != left.seats[index].public_key and info.runs_on not in people:
            raise BackFailed(f"seat {index} of the desk's table is nobody of the table this laptop left")
    return left


@dataclass
class _Request:
    """What the returning laptop asked, kept across links to the desk: the same signed request is asked again
    after a blip (a new one would name another port, and the desk holds the first)."""

    prior: Continuation | None = None
    back: TakeBack | None = None
    late: list[JSONObject] = field(default_factory=list)


class _LinkLost(Exception):
    """The link to the desk dropped after the request was sent: worth asking again."""


async def take_back(
    advert: TableAdvert,
    *,
    identity: Identity,
    name: str,
    interface: str,
    data_dir: Path,
    on_plan: Callable[[Continuation, int], None] | None = None,
) -> Continuation:
    """Ask the desk of `advert` for the seat this laptop's key left back (the desk's plan says which);
    returns the continuation that gives it back, signed by every seat and checked. `data_dir`: this laptop's
    journals; the desk's table must go on from a table it sat at there (`_check_descends`). `on_plan`: told the
    plan of the table playing now and the seat, once the request is held there. A link to the desk that drops
    once the request is out (a Wi-Fi blip) is made again, up to `BACK_TRIES` times, and the same request asked
    again: the desk keeps it, and tells the continuation where it has got to. `BackFailed` saying why otherwise."""
    request = _Request()
    port = free_port(interface)
    for attempt in range(BACK_TRIES):
        try:
            return await _ask(advert, request, identity, name, interface, data_dir, port, on_plan)
        except _LinkLost as exc:
            if attempt + 1 == BACK_TRIES:
                raise BackFailed(f"cannot reach the table's take-back desk: {exc}") from None
            log.info("the link to the take-back desk dropped or was turned away (%s): asking again", exc)
            await asyncio.sleep(min(4.0, 0.5 * 2**attempt))
    raise AssertionError("unreachable")


async def _ask(
    advert: TableAdvert,
    request: _Request,
    identity: Identity,
    name: str,
    interface: str,
    data_dir: Path,
    port: int,
    on_plan: Callable[[Continuation, int], None] | None,
) -> Continuation:
    key = identity.public.hex()
    try:
        async with ws_connect(
            f"ws://{advert.address}:{advert.port}/", compression=None, max_size=MAX_DESK_MESSAGE, proxy=None,
            open_timeout=DESK_TIMEOUT,
        ) as ws:  # fmt: skip
            cipher, desk_key = await _handshake(ws, identity, advert.table_id, initiator=True)
            if PublicIdentity.from_hex(desk_key).fingerprint != advert.host_fingerprint:
                raise BackFailed("the take-back desk proved another key than its advert names: refusing it")
            first = await _recv(ws, cipher, DESK_TIMEOUT)
            if "busy" in first:
                raise _LinkLost("the desk is busy")
            if "error" in first:
                raise BackFailed(f"the seat was not given back: {shown(str(first['error']))[:200]}")
            if request.prior is None or request.back is None:
                prior = Continuation.from_json(first.get("plan"))
                prior.verify()
                seats = [seat for seat, left in prior.left.items() if left == key]
                if prior.table_id != advert.table_id or not seats:
                    raise BackFailed("the desk's table left no seat to this laptop")
                left = _check_descends(prior, seats[0], key, data_dir)
                if seats[0] in prior.owes:  # P-5.5: the secrets of the round it went away in, published first
                    try:
                        request.late = publish_owed(left, identity, data_dir)
                    except (ResumeFailed, StoreError) as exc:
                        raise BackFailed(f"cannot publish the secrets this seat owes: {exc}") from None
                request.prior = prior
                request.back = make_take_back(identity, advert.table_id, seats[0], name, interface, port, request.late)
            prior, back = request.prior, request.back
            if first.get("plan") != prior.to_json():
                raise BackFailed("the take-back desk shows another table than the one this laptop asked at")
            asked: JSONObject = {"back": back.to_json()}
            if request.late:
                asked["late"] = list(request.late)
            await _send(ws, cipher, asked)
            while True:
                try:
                    message = await _recv(ws, cipher)
                except (ConnectionClosed, OSError) as exc:
                    raise _LinkLost(str(exc) or type(exc).__name__) from None
                if "error" in message:
                    raise BackFailed(f"the seat was not given back: {shown(str(message['error']))[:200]}")
                if "held" in message:
                    if on_plan is not None:
                        on_plan(prior, back.seat)
                elif "sign" in message:
                    new = Continuation.from_json(message["sign"])
                    check_back(new, prior, back)
                    await _send(ws, cipher, {"sig": new.sign(identity)})
                elif "start" in message:
                    new = Continuation.from_json(message["start"])
                    check_back(new.with_signatures(()), prior, back)
                    new.verify()
                    return new
                else:
                    raise BackFailed("the take-back desk said something out of turn")
    except ProtocolError as exc:
        raise BackFailed(f"the way back does not hold: {exc.message}") from None
    except (OSError, TimeoutError, WebSocketException) as exc:
        # The desk holds a request that is out; one it turned away or never got may be asked again too.
        raise _LinkLost(str(exc) or type(exc).__name__) from None


async def back_to_table(
    advert: TableAdvert,
    *,
    identity: Identity,
    data_dir: Path,
    name: str,
    interface: str,
    player: LocalPlayer,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    on_plan: Callable[[Continuation, int], None] | None = None,
) -> Outcome:
    """This laptop's person takes back the seat they left at the table `advert`'s desk is for (P-5.7):
    the continuation that gives it back, then its game, played from the next round like any table.
    `BackFailed` saying why if the seat is not given back."""
    plan = await take_back(
        advert, identity=identity, name=name, interface=interface, data_dir=data_dir, on_plan=on_plan
    )
    found = unfinished_journal(data_dir)
    if found is not None and identity.public.hex() in {s.public_key for s in found[0].seats}:
        with contextlib.suppress(Exception):  # the table this laptop left went on: never offered again
            Journal(found[1]).append({"t": "done"})
    runner = TableRunner(plan, identity, data_dir, player, interface, on_event=on_event)
    if on_runner is not None:
        on_runner(runner)
    return await runner.run()
