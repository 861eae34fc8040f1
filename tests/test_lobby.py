"""The lobby on loopback: seats are taken and freed, the plan reaches every seat, a full table refuses;
the seat order is drawn and the plan signed by every seat (I7), and a modified host cannot seat a
phantom, leave a joiner out, reorder the seats or lie about its key; peer text is inert on screen."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from lanplay.base.text import shown
from lanplay.cli import netcli
from lanplay.net import lobby as lobby_module
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo, TablePlan, fetch_lobby_id, join_lobby
from protocol.commitment import Opening
from protocol.identity import Identity
from protocol.plan import PlanDraw, Roster, commitment_from_json, opening_from_json, order_commitment
from protocol.table import PROTOCOL_VERSION, Exposed
from protocol.version import RULES_DIGEST

HOST = "127.0.0.1"
VERSION = {"protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST}  # what the real joiner adds to its join


def _host(seats: int, seen: list[int]) -> tuple[Identity, LobbyHost]:
    identity = Identity.generate()
    lobby = LobbyHost(
        identity, "sixth-sense", {}, seats, SeatInfo("Host", identity.public.hex(), HOST, 5000),
        on_change=lambda taken: seen.append(len(taken)),
    )  # fmt: skip
    return identity, lobby


def test_a_seat_left_before_the_start_is_free_again() -> None:
    async def scenario() -> tuple[list[int], int]:
        seen: list[int] = []
        _, lobby = _host(3, seen)
        port = await lobby.start(HOST)
        joiner = asyncio.create_task(
            join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 5001))
        )
        await asyncio.sleep(0.5)
        joiner.cancel()
        await asyncio.sleep(0.5)
        await lobby.close()
        return seen, len(lobby.taken)

    seen, taken = asyncio.run(scenario())
    assert seen == [2, 1] and taken == 1


def test_every_seat_gets_the_same_plan_and_a_full_table_refuses() -> None:
    async def scenario() -> None:
        seen: list[int] = []
        host, lobby = _host(2, seen)
        port = await lobby.start(HOST)
        assert await fetch_lobby_id(HOST, port) == lobby.lobby_id  # for `lanplay join HOST:PORT`
        guest = Identity.generate()
        plan = await join_lobby(guest, lobby.lobby_id, HOST, port, "Ann", (HOST, 5001))
        assert plan == await lobby.wait_plan()
        assert sorted(s.public_key for s in plan.seats) == sorted([host.public.hex(), guest.public.hex()])
        assert plan.draw.joined == (host.public.hex(), guest.public.hex())  # join order; seats are drawn
        assert plan.settings().table == plan.table_id
        with pytest.raises((LobbyError, OSError)):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Late", (HOST, 5002))
        await lobby.close()

    asyncio.run(scenario())


# --- I7: the lobby is signed; attacks by a modified host -------------------------------------------


def test_the_seat_order_is_drawn_and_every_seat_holds_the_same_signed_plan() -> None:
    async def scenario() -> tuple[Identity, list[TablePlan], TablePlan]:
        host, lobby = _host(4, [])
        port = await lobby.start(HOST)
        guests = [Identity.generate() for _ in range(3)]
        plans = await asyncio.gather(
            *(join_lobby(g, lobby.lobby_id, HOST, port, f"G{i}", (HOST, 5001 + i),
                         host_fingerprint=host.public.fingerprint, game="sixth-sense")
              for i, g in enumerate(guests))
        )  # fmt: skip
        hosted = await lobby.wait_plan()
        await lobby.close()
        return host, list(plans), hosted

    host, plans, hosted = asyncio.run(scenario())
    assert all(p == hosted for p in plans)
    hosted.verify()  # every seat's signature, the drawn order
    assert len(hosted.signatures) == 4
    assert hosted.draw.joined[0] == host.public.hex()  # the host joined first; where it sits was drawn


def test_a_joiner_pins_the_host_key_from_the_advert() -> None:
    async def scenario() -> None:
        _, lobby = _host(2, [])
        port = await lobby.start(HOST)
        impostor = Identity.generate().public.fingerprint  # what a lying advert (or another host) names
        with pytest.raises(LobbyError, match="advert"):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 5001),
                             host_fingerprint=impostor)  # fmt: skip
        with pytest.raises(LobbyError, match="advertised take6"):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 5001), game="take6")
        assert len(lobby.taken) == 1 or not lobby._plan or not lobby._plan.done()
        await lobby.close()

    asyncio.run(scenario())


def _hostile_host(mode: str) -> tuple[Identity, str, Callable[[Any], Awaitable[None]]]:
    """A modified host, by hand: it lists a phantom seat (someone's key, who never joined), leaves the
    joiner out, swaps the seats after the draw, or opens its own share wrongly."""
    me = Identity.generate()
    alice = Identity.generate()  # never joins
    lobby_id = secrets.token_hex(16)

    async def handler(ws: Any) -> None:
        with contextlib.suppress(ConnectionClosed):
            cipher, key = await lobby_module._handshake(ws, me, lobby_id, initiator=False)
            join = (await lobby_module._recv(ws, cipher))["join"]
            assert isinstance(join, dict)
            guest = SeatInfo.from_json({**join, "key": key})
            host_seat = SeatInfo("Host", me.public.hex(), HOST, 5000)
            seats: tuple[SeatInfo, ...] = (host_seat, guest)
            if mode == "phantom":
                seats = (host_seat, guest, SeatInfo("Alice", alice.public.hex(), HOST, 5002))
            elif mode == "leave-out":
                seats = (host_seat, SeatInfo("Alice", alice.public.hex(), HOST, 5002))
            roster = Roster(lobby_id, "sixth-sense", {}, seats)
            await lobby_module._send(ws, cipher, {"draw": {"attempt": 1, "roster": roster.to_json()}})
            reply = (await lobby_module._recv(ws, cipher))["commit"]
            assert isinstance(reply, dict)
            mine = PlanDraw(roster, me, os.urandom)
            made_up = order_commitment(roster, 2, os.urandom(32))  # the phantom's share, made up by the host
            commitments = [mine.commitment, commitment_from_json(reply["digest"])]
            if mode == "phantom":
                commitments.append(made_up[0])
            host_open = mine.reveal(commitments)
            if mode == "bad-reveal":
                host_open = Opening(os.urandom(32), host_open.nonce)
            await lobby_module._send(ws, cipher, {"commits": {
                "attempt": 1, "list": [c.hex() for c in commitments],
                "host": {"value": host_open.value.hex(), "nonce": host_open.nonce.hex()}}})  # fmt: skip
            reveal = (await lobby_module._recv(ws, cipher))["reveal"]
            openings = [mine.opening, opening_from_json(reveal)]
            if mode == "phantom":
                openings.append(made_up[1])
            await lobby_module._send(ws, cipher, {"reveals": {"attempt": 1, "list": [
                {"value": o.value.hex(), "nonce": o.nonce.hex()} for o in openings]}})  # fmt: skip
            plan, _ = mine.plan(openings)
            signed = (await lobby_module._recv(ws, cipher))["sign"]
            assert isinstance(signed, dict)
            theirs = str(signed["signature"])
            if mode == "reorder":  # the host turns the drawn order around (say, to sit first), and signs that
                plan = dataclasses.replace(plan, seats=tuple(reversed(plan.seats)))
            by_key = {me.public.hex(): plan.sign(me), guest.public_key: theirs}
            forged = plan.sign(me)  # in Alice's place: the host cannot make her signature
            final = plan.with_signatures([by_key.get(s.public_key, forged) for s in plan.seats])
            await lobby_module._send(ws, cipher, {"start": final.to_json()})
            await asyncio.sleep(1)

    return me, lobby_id, handler


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("phantom", "did not sign"),
        ("leave-out", "does not list this seat"),
        ("reorder", "not the one this seat drew"),
        ("bad-reveal", "does not match"),
    ],
)
def test_a_modified_host_cannot_start_a_table_with_a_plan_of_its_own(mode: str, why: str) -> None:
    async def scenario() -> None:
        me, lobby_id, handler = _hostile_host(mode)
        async with serve(handler, HOST, 0) as server:
            port = server.sockets[0].getsockname()[1]
            with pytest.raises(LobbyError, match=why):
                await join_lobby(Identity.generate(), lobby_id, HOST, port, "Bob", (HOST, 5001),
                                 host_fingerprint=me.public.fingerprint)  # fmt: skip

    asyncio.run(scenario())


def test_the_host_cannot_reuse_a_draw_with_another_roster() -> None:
    """Even with every value valid, a start arriving before this seat drew is refused."""

    async def scenario() -> None:
        me = Identity.generate()
        lobby_id = secrets.token_hex(16)

        async def handler(ws: Any) -> None:
            with contextlib.suppress(ConnectionClosed):
                cipher, _ = await lobby_module._handshake(ws, me, lobby_id, initiator=False)
                await lobby_module._recv(ws, cipher)
                await lobby_module._send(ws, cipher, {"start": {"lobby": lobby_id}})
                await asyncio.sleep(1)

        async with serve(handler, HOST, 0) as server:
            port = server.sockets[0].getsockname()[1]
            with pytest.raises(LobbyError, match="without drawing"):
                await join_lobby(Identity.generate(), lobby_id, HOST, port, "Bob", (HOST, 5001))

    asyncio.run(scenario())


@pytest.mark.parametrize("theirs", [None, PROTOCOL_VERSION - 1, "2"])
def test_a_joiner_of_another_protocol_version_is_refused_and_told_why(theirs: object) -> None:
    """Seats of different table protocol versions would read each other's honest passes as faults:
    the host refuses the join (none, an older version, a look-alike string), naming both versions."""

    async def scenario() -> tuple[object, int]:
        _, lobby = _host(3, [])
        port = await lobby.start(HOST)
        try:
            async with connect(f"ws://{HOST}:{port}/", proxy=None) as ws:
                cipher, _ = await lobby_module._handshake(ws, Identity.generate(), lobby.lobby_id, initiator=True)
                join: dict[str, object] = {"name": "Old", "mesh": [HOST, 5003]}
                if theirs is not None:
                    join["protocol"] = theirs
                await lobby_module._send(ws, cipher, {"join": join})
                answer = (await lobby_module._recv(ws, cipher)).get("error")
            return answer, len(lobby.taken)
        finally:
            await lobby.close()

    answer, taken = asyncio.run(scenario())
    assert isinstance(answer, str) and "protocol versions differ" in answer, answer
    assert f"speaks {PROTOCOL_VERSION}" in answer and f"the joiner {theirs if theirs is not None else 'none'}" in answer
    assert taken == 1  # the host alone: no seat was given


def test_the_real_joiner_names_its_version_and_is_seated() -> None:
    async def scenario() -> int:
        _, lobby = _host(3, [])
        port = await lobby.start(HOST)
        joiner = asyncio.create_task(join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 5001)))
        try:
            for _ in range(50):
                if len(lobby.taken) == 2:
                    break
                await asyncio.sleep(0.1)
            return len(lobby.taken)
        finally:
            joiner.cancel()
            await asyncio.gather(joiner, return_exceptions=True)
            await lobby.close()

    assert asyncio.run(scenario()) == 2



# --- names and peer text on screen (I7) ---------------------------------------------------------


def test_names_with_escapes_are_refused_by_joiner_and_host() -> None:
    async def scenario() -> None:
        _, lobby = _host(3, [])
        port = await lobby.start(HOST)
        with pytest.raises(LobbyError, match="control"):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "\x1b]0;pwned\x07Eve", (HOST, 5001))
        # A modified joiner that sends the name anyway is told why by the host, and gets no seat.
        async with connect(f"ws://{HOST}:{port}/", proxy=None) as ws:
            guest = Identity.generate()
            cipher, _ = await lobby_module._handshake(ws, guest, lobby.lobby_id, initiator=True)
            await lobby_module._send(ws, cipher, {"join": {"name": "Eve\x1b[2J", "mesh": [HOST, 5002], **VERSION}})
            answer = await lobby_module._recv(ws, cipher)
            assert "control" in str(answer.get("error")), answer
        assert len(lobby.taken) == 1
        await lobby.close()
        # Nor may the host call itself so.
        identity = Identity.generate()
        bad = LobbyHost(identity, "take6", {}, 2, SeatInfo("\x1b[5mHost", identity.public.hex(), HOST, 5000))
        with pytest.raises(LobbyError, match="control"):
            await bad.start(HOST)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07x", "x"),
        ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("bell\x07 del\x7f c1\x85\x9b2J", "bell del c1"),
        ("Ann\u202egnp.exe", "Anngnp.exe"),
        ("two\nlines\tand tab", "two lines and tab"),
        ("Zoë 李", "Zoë 李"),
    ],
)
def test_shown_strips_escapes_and_controls(raw: str, clean: str) -> None:
    assert shown(raw) == clean
    assert all(unicodedata.category(c) != "Cc" for c in shown(raw))


def test_exposure_lines_show_no_peer_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    """An exposure's rule and reason come from a peer's message: printed, they are inert (P-6.7)."""
    show = netcli.printer()
    show(Exposed(1, "P-5.1\x1b[2J", "a move\x1b]0;owned\x07 out of turn\x1b[8m", {}))
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "EXPOSED: seat 1 broke P-5.1: a move out of turn" in out
