"""A table that cannot start says so in one line and leaves nothing listening (I3, P-6.7): a plan
with a field no seat may sign is refused before anything opens; a mesh that cannot link a peer is
closed before the error goes on; whatever fails once the mesh listens closes it again."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from test_lobby_draw import Lobby, _draw_until_reveals, _finish

from engine.api import FormatError
from lanplay.net.lobby import LobbyError
from lanplay.net.mesh import Mesh, MeshError
from lanplay.table import runner as runner_module
from lanplay.table.runner import BotPlayer, TableRunner, free_port
from protocol.identity import Identity
from protocol.plan import Roster, TablePlan, build_plan, order_commitment

HOST = "127.0.0.1"


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def _plan(change: Callable[[Roster], Roster] | None = None) -> tuple[TablePlan, list[Identity]]:
    """A two-seat plan every seat signed; with ``change`` to its roster (which a signer would refuse),
    signed anyway, as two colluders could."""
    lobby = Lobby.make(2)
    if change is None:
        signed, _ = _finish(lobby, 1, _draw_until_reveals(lobby, 1))
    else:
        roster = change(lobby.roster)
        shares = [order_commitment(roster, i, os.urandom(32)) for i in range(2)]
        plan = build_plan(roster, [c for c, _ in shares], [o for _, o in shares])
        keys = {i.public.hex(): i for i in [lobby.host, *lobby.joiners]}
        signed = plan.with_signatures([plan.sign(keys[s.public_key]) for s in plan.seats])
    by_key = {i.public.hex(): i for i in [lobby.host, *lobby.joiners]}
    return signed, [by_key[s.public_key] for s in signed.seats]


def test_a_plan_with_a_field_no_seat_may_sign_is_refused_before_anything_opens(tmp_path: Path) -> None:
    def bogus(roster: Roster) -> Roster:
        return dataclasses.replace(roster, options={"bogus": 1})

    def multicast(roster: Roster) -> Roster:
        seats = (roster.seats[0], dataclasses.replace(roster.seats[1], address="224.0.0.251"))
        return dataclasses.replace(roster, seats=seats)

    for change, why in ((bogus, "bogus"), (multicast, "multicast")):
        plan, idents = _plan(change)
        with pytest.raises(LobbyError, match=why) as refused:
            TableRunner(plan, idents[0], tmp_path, BotPlayer(plan.game), HOST)
        assert "\n" not in str(refused.value) and "refusing to play table" in str(refused.value)
        assert not _listening(plan.seats[0].port)


def test_a_mesh_that_cannot_link_a_peer_is_closed_before_the_error() -> None:
    async def scenario() -> tuple[bool, bool]:
        me, peer = Identity.generate(), Identity.generate()
        mesh = Mesh(me, "ab" * 16, [peer.peer_id], lambda *_: None, lambda *_: None)
        port = free_port(HOST)
        with pytest.raises(MeshError, match="not the address of one interface"):
            await mesh.open(HOST, port, [(peer.peer_id, "224.0.0.251", 5000)])
        refused_first = not _listening(port)  # the address was checked before anything listened

        async def broken(*_: object) -> None:
            raise MeshError("no way to that peer")

        good = Mesh(me, "ab" * 16, [peer.peer_id], lambda *_: None, lambda *_: None)
        good.connect = broken  # type: ignore[method-assign]  # a failure once the mesh listens
        with pytest.raises(MeshError, match="no way"):
            await good.open(HOST, port, [(peer.peer_id, HOST, free_port(HOST))])
        return refused_first, not _listening(port)

    assert asyncio.run(scenario()) == (True, True)


@pytest.mark.parametrize("failure", ["session", "mesh"])
def test_a_table_that_fails_once_its_mesh_listens_says_so_in_one_line_and_closes_it(
    failure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever fails at the start after the mesh listens (here: the session refusing the settings,
    or a peer's link) is one `LobbyError` line, and the port no longer listens."""
    plan, idents = _plan()
    if failure == "session":

        def refuse(*_: object, **__: object) -> None:
            raise FormatError("sixth-sense options: unknown key(s) bogus")

        monkeypatch.setattr(runner_module, "TableSession", refuse)
    else:

        async def broken(*_: object) -> None:
            raise MeshError("224.0.0.251 is not the address of one interface")

        monkeypatch.setattr(Mesh, "connect", broken)
    runner = TableRunner(plan, idents[0], tmp_path, BotPlayer(plan.game), HOST)
    with pytest.raises(LobbyError) as refused:
        asyncio.run(runner.run())
    why = str(refused.value)
    assert why.startswith(f"cannot start table {plan.table_id}: ") and "\n" not in why, why
    assert ("bogus" if failure == "session" else "224.0.0.251") in why
    assert not _listening(plan.seats[0].port)
