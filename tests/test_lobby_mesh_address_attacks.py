"""A lobby refuses a joiner whose mesh address a seated peer announced (P-6.7), and an honest joiner
then draws another port and asks again (`join_on_a_free_port`, at most `MESH_PORT_TRIES` ports). What
a modified peer can make of that path: a host that says every port is taken is left after a bounded
number of tries with one clear line; a host that says so after seating a joiner (after the reveals,
once it knows the order) is left, not asked again, so it cannot re-roll the seat order (P-3.2); a
joiner that announces a seated peer's address is refused and changes nothing for that peer; two
honest joiners that drew one port are both seated."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect

from lanplay.net import lobby as lobby_module
from lanplay.net.lobby import (
    MAX_WHY,
    LobbyError,
    LobbyHost,
    MeshAddressTaken,
    TableFull,
    _HostDraw,
    _JoinerSeat,
    join_lobby,
)
from lanplay.table.tables import MESH_PORT_TRIES, join_on_a_free_port
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.plan import SeatInfo, TablePlan
from protocol.table import PROTOCOL_VERSION
from protocol.version import RULES_DIGEST

HOST = "127.0.0.1"
GAME = "sixth-sense"
GUARD = 30.0  # only so that a broken build fails instead of hanging: nothing here is timed


def _host_seat(identity: Identity, port: int) -> SeatInfo:
    return SeatInfo("Host", identity.public.hex(), HOST, port)


Join = Callable[[tuple[str, int]], Awaitable[TablePlan]]


def _counted(join: Join, drawn: list[tuple[str, int]], announce: Callable[[tuple[str, int]], tuple[str, int]]) -> Join:
    """`join` that records each mesh address drawn for it and announces ``announce(drawn)`` instead."""

    async def counted(mesh: tuple[str, int]) -> TablePlan:
        drawn.append(mesh)
        return await join(announce(mesh))

    return counted


async def _raw_join(port: int, lobby_id: str, identity: Identity, mesh: list[object]) -> JSONObject:
    """A modified joiner: it announces ``mesh`` as it likes and returns the host's first answer."""
    join = {"name": "Mallory", "mesh": mesh, "protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST}
    async with connect(f"ws://{HOST}:{port}/", compression=None, proxy=None) as ws:
        cipher, _ = await lobby_module._handshake(ws, identity, lobby_id, initiator=True)
        await lobby_module._send(ws, cipher, {"join": join})
        return await lobby_module._recv(ws, cipher)


async def _seated(lobby: LobbyHost, count: int) -> None:
    while len(lobby.taken) < count:
        await asyncio.sleep(0.01)


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return True
    return False


# --- a host that says every port is taken ------------------------------------------------------------


@dataclasses.dataclass
class _EveryPortTakenHost(LobbyHost):
    """A modified host: every joiner's mesh address is "taken", said with a long why full of controls."""

    why: str = ""

    def _mesh_address_taken(self, info: SeatInfo) -> str | None:
        return self.why


def test_a_host_that_says_every_port_is_taken_is_left_after_a_bounded_number_of_draws() -> None:
    """The joiner draws `MESH_PORT_TRIES` distinct ports, then stops with one line of at most `MAX_WHY`
    characters of the host's text, free of controls; nothing it drew is left listening and the host
    holds no seat for it."""
    why = "\x1b[2J\x1b]0;pwned\x07" + "taken\n\r\u202e" * 5000  # ~50 kB: within one lobby message

    async def scenario() -> tuple[MeshAddressTaken, list[tuple[str, int]], LobbyHost]:
        host = Identity.generate()
        lobby = _EveryPortTakenHost(host, GAME, {}, 2, _host_seat(host, 6400), why=why)
        port = await lobby.start(HOST)
        drawn: list[tuple[str, int]] = []
        join = functools.partial(join_lobby, Identity.generate(), lobby.lobby_id, HOST, port, "Bob")
        try:
            async with asyncio.timeout(GUARD):
                with pytest.raises(MeshAddressTaken) as refused:
                    await join_on_a_free_port(HOST, _counted(join, drawn, lambda mesh: mesh))
            return refused.value, drawn, lobby
        finally:
            await lobby.close()

    refused, drawn, lobby = asyncio.run(scenario())
    assert len(drawn) == MESH_PORT_TRIES == len(set(drawn))
    line = str(refused)
    assert line.startswith("the host refused: taken")
    assert len(line) <= len("the host refused: ") + MAX_WHY
    assert all(c.isprintable() and c not in "\u202e" for c in line), repr(line[:80])
    assert not any(_listening(p) for _, p in drawn)
    assert lobby.taken == (lobby.host_seat,)


@pytest.mark.parametrize(
    ("message", "raised"),
    [
        ({"error": "taken", "mesh_taken": 1}, LobbyError),  # only true itself asks for another port
        ({"error": "taken", "mesh_taken": "true"}, LobbyError),
        ({"error": "taken", "mesh_taken": [True]}, LobbyError),
        ({"error": "taken", "mesh_taken": None}, LobbyError),
        ({"error": lobby_module.TABLE_FULL, "mesh_taken": True}, TableFull),
        ({"error": {"why": ["x"] * 3}, "mesh_taken": True}, MeshAddressTaken),  # shown by its str(), one line
        ({"error": "taken", "mesh_taken": True, "seats": [], "draw": {"attempt": 1}}, MeshAddressTaken),
    ],
)
def test_a_mesh_taken_answer_asks_for_another_port_only_when_it_says_exactly_that(
    message: JSONObject, raised: type[LobbyError]
) -> None:
    """A refusal is one line naming what the host said; only ``"mesh_taken": true`` in the answer to a
    join is worth another port, and nothing else in that answer is acted on (no seat list is shown)."""
    me, host = Identity.generate(), Identity.generate()
    seat = _JoinerSeat(me, "ab" * 16, SeatInfo("Bob", me.public.hex(), HOST, 6401), host.public.hex(), GAME)
    shown_seats: list[object] = []
    with pytest.raises(LobbyError) as refused:
        seat.handle(message, shown_seats.append)
    assert type(refused.value) is raised
    assert "\n" not in str(refused.value) and str(refused.value).startswith("the host refused: ")
    assert not shown_seats


# --- a host that says so once it knows the order -----------------------------------------------------


@dataclasses.dataclass
class _RerollingHost(LobbyHost):
    """A modified host that dislikes the first seat orders it draws: once every reveal is in (it knows the
    order), it tells each joiner its mesh address is taken instead of passing the reveals on, and seats
    them afresh when they come back, never barring anyone."""

    rerolls: int = 2
    orders: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    async def _tell(self, draw: _HostDraw, message: JSONObject) -> None:
        if "reveals" in message and draw.plan is not None and len(self.orders) < self.rerolls:
            self.orders.append(tuple(s.name for s in draw.plan.seats))
            for joiner in draw.joiners:
                joiner.revealing = False  # its leaving is not withholding: it comes back with another port
                taken = f"the mesh address {HOST}:{joiner.info.port} is 'Eve''s (P-6.7)"
                await lobby_module._send(joiner.ws, joiner.cipher, {"error": taken, "mesh_taken": True})
            return
        await super()._tell(draw, message)


def test_a_host_cannot_redraw_the_seat_order_by_saying_a_seated_joiners_port_is_taken() -> None:
    """P-3.2: an honest host refuses a taken mesh address only in answer to a join. A joiner told so
    after it was seated (here: after its reveal, when the host knows the drawn order) leaves with one
    line, and draws no other port: asking again would be a fresh joiner in a fresh draw, and the host
    could re-roll the order it saw (`MESH_PORT_TRIES` - 1 times per joiner) with nobody barred."""

    async def scenario() -> tuple[list[object], list[list[tuple[str, int]]], _RerollingHost]:
        host = Identity.generate()
        lobby = _RerollingHost(host, GAME, {}, 3, _host_seat(host, 6410))
        port = await lobby.start(HOST)
        drawn: list[list[tuple[str, int]]] = [[], []]
        joins = [
            join_on_a_free_port(HOST, _counted(
                functools.partial(join_lobby, Identity.generate(), lobby.lobby_id, HOST, port, name), tries,
                lambda mesh: mesh))
            for name, tries in zip(("Ann", "Bob"), drawn, strict=True)
        ]  # fmt: skip
        try:
            async with asyncio.timeout(GUARD):
                results: list[object] = list(await asyncio.gather(*joins, return_exceptions=True))
        finally:
            await lobby.close()
        return results, drawn, lobby

    results, drawn, lobby = asyncio.run(scenario())
    assert len(lobby.orders) == 1, f"the host drew the order {len(lobby.orders)} times: {lobby.orders}"
    for result in results:
        assert type(result) is LobbyError, result
        assert "P-3.2" in str(result) and "\n" not in str(result)
    assert [len(d) for d in drawn] == [1, 1]


@pytest.mark.parametrize(
    "refusal", [{"error": "the mesh address is taken", "mesh_taken": True}, {"error": lobby_module.TABLE_FULL}]
)
def test_a_refusal_of_the_join_once_seated_is_no_reason_to_join_again(refusal: JSONObject) -> None:
    """After the host's first seat list (the join was answered: this seat is seated), "your mesh
    address is taken" or "the table is full" is no refusal of the join: the joiner leaves naming P-3.2,
    and neither draws another port nor tries the next table (the host's own, under another lobby id,
    as like as not), either of which would put it in a fresh draw of the seat order."""
    me, host = Identity.generate(), Identity.generate()
    info = SeatInfo("Bob", me.public.hex(), HOST, 6402)
    seat = _JoinerSeat(me, "ab" * 16, info, host.public.hex(), GAME)
    seat.handle({"seats": [_host_seat(host, 6403).to_json(), info.to_json()], "you": 1}, None)
    with pytest.raises(LobbyError) as refused:
        seat.handle(refusal, None)
    assert type(refused.value) is LobbyError
    assert "P-3.2" in str(refused.value) and "\n" not in str(refused.value)


# --- a joiner that announces a seated peer's address ---------------------------------------------------


def test_a_joiner_announcing_a_seated_peers_address_is_refused_and_that_seat_keeps_it() -> None:
    """Mallory announces Ann's mesh address (and then the host's): she is refused as a taken address,
    naming whose; Ann keeps her seat and her address, is told nothing, and the table fills with an
    honest joiner, the plan listing Ann at her own address."""

    async def scenario() -> tuple[list[JSONObject], list[int], TablePlan, LobbyHost]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, _host_seat(host, 6420))
        port = await lobby.start(HOST)
        told: list[int] = []
        ann = asyncio.create_task(join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 6421),
                                             on_seats=lambda seats: told.append(len(seats))))  # fmt: skip
        try:
            async with asyncio.timeout(GUARD):
                await _seated(lobby, 2)
                while not told:
                    await asyncio.sleep(0.01)
                mallory = Identity.generate()
                answers = [await _raw_join(port, lobby.lobby_id, mallory, [HOST, p]) for p in (6421, 6420)]
                seen = list(told)
                bob = join_on_a_free_port(HOST, functools.partial(
                    join_lobby, Identity.generate(), lobby.lobby_id, HOST, port, "Bob"))  # fmt: skip
                plans = await asyncio.gather(ann, bob, lobby.wait_plan())
        finally:
            ann.cancel()
            await lobby.close()
        assert plans[0] == plans[1] == plans[2]
        return answers, seen, plans[0], lobby

    answers, seen, plan, _ = asyncio.run(scenario())
    assert answers[0].get("mesh_taken") is True and "'Ann''s" in str(answers[0].get("error")), answers[0]
    assert answers[1].get("mesh_taken") is True and "'Host''s" in str(answers[1].get("error")), answers[1]
    assert seen == [2], "Ann was told of Mallory's refused join"
    plan.verify()
    assert next(s for s in plan.seats if s.name == "Ann").port == 6421
    assert "Mallory" not in {s.name for s in plan.seats}


# --- two honest joiners that drew one port ---------------------------------------------------------


def test_two_joiners_that_drew_one_port_at_once_are_both_seated() -> None:
    """Two laptops on one address drew one port at once: the host seats the first and refuses the
    second (nothing between its check and the seat yields), which draws another and is seated."""

    async def scenario() -> tuple[list[list[tuple[str, int]]], TablePlan]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, _host_seat(host, 6430))
        port = await lobby.start(HOST)
        drawn: list[list[tuple[str, int]]] = [[], []]

        def same_first_port(tries: list[tuple[str, int]]) -> Callable[[tuple[str, int]], tuple[str, int]]:
            return lambda mesh: (HOST, 6431) if len(tries) == 1 else mesh

        joins = [
            join_on_a_free_port(HOST, _counted(
                functools.partial(join_lobby, Identity.generate(), lobby.lobby_id, HOST, port, name), tries,
                same_first_port(tries)))
            for name, tries in zip(("Ann", "Bob"), drawn, strict=True)
        ]  # fmt: skip
        try:
            async with asyncio.timeout(GUARD):
                plans: list[Any] = list(await asyncio.gather(*joins, lobby.wait_plan()))
        finally:
            await lobby.close()
        assert plans[0] == plans[1] == plans[2]
        return drawn, plans[0]

    drawn, plan = asyncio.run(scenario())
    plan.verify()
    assert sorted(len(d) for d in drawn) == [1, 2]
    ports = sorted(s.port for s in plan.seats)
    assert len(set(ports)) == 3 and 6431 in ports


def test_a_stranger_at_a_play_again_table_learns_nothing_of_its_seats_from_their_addresses() -> None:
    """A play-again lobby is for the players of the table it plays again (and their bots): a stranger
    announcing a seated player's mesh address is told the table is not for it, not whose address that
    is, and is not asked to draw another port."""

    async def scenario() -> JSONObject:
        host, ann = Identity.generate(), Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, _host_seat(host, 6440), only=frozenset({host.public.hex(),
                                                                                  ann.public.hex()}))  # fmt: skip
        port = await lobby.start(HOST)
        seated = asyncio.create_task(join_lobby(ann, lobby.lobby_id, HOST, port, "Ann", (HOST, 6441)))
        try:
            async with asyncio.timeout(GUARD):
                await _seated(lobby, 2)
                return await _raw_join(port, lobby.lobby_id, Identity.generate(), [HOST, 6441])
        finally:
            seated.cancel()
            await lobby.close()

    answer = asyncio.run(scenario())
    assert "for the players of the table it plays again" in str(answer.get("error")), answer
    assert "Ann" not in str(answer) and "mesh_taken" not in answer
