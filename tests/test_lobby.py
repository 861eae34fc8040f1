"""The lobby on loopback: seats are taken and freed, the plan reaches every seat, a full table refuses."""

from __future__ import annotations

import asyncio

import pytest

from lanplay.lobby import LobbyError, LobbyHost, SeatInfo, fetch_lobby_id, join_lobby
from protocol.identity import Identity

HOST = "127.0.0.1"


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
        assert [s.public_key for s in plan.seats] == [host.public.hex(), guest.public.hex()]
        assert plan.settings().table == plan.table_id
        with pytest.raises((LobbyError, OSError)):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Late", (HOST, 5002))
        await lobby.close()

    asyncio.run(scenario())
