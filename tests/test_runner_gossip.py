"""What a seat's runner passes on (gossip, P-6.2): every public message it takes goes to every seat not
known to hold those very bytes already, so never back to its author nor to a seat that sent it here.
Seat 1 is a real `TableRunner`; seats 0 and 2 are bare meshes speaking for real sessions, on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from test_lobby_draw import Lobby

from lanplay.net.mesh import Mesh
from lanplay.table.runner import BotPlayer, TableRunner
from protocol.identity import Identity
from protocol.plan import TablePlan, build_plan, order_commitment
from protocol.table import Send, Start, TableSession

HOST = "127.0.0.1"
WAIT = 10.0


def _plan(n: int) -> tuple[TablePlan, list[Identity]]:
    lobby = Lobby.make(n)
    shares = [order_commitment(lobby.roster, i, os.urandom(32)) for i in range(n)]
    plan = build_plan(lobby.roster, [c for c, _ in shares], [o for _, o in shares])
    keys = {i.public.hex(): i for i in [lobby.host, *lobby.joiners]}
    signed = plan.with_signatures([plan.sign(keys[s.public_key]) for s in plan.seats])
    return signed, [keys[s.public_key] for s in signed.seats]


def _first_message(plan: TablePlan, identity: Identity) -> bytes:
    """The seat's own first signed message (its seed commitment, P-5.2)."""
    outputs = TableSession(plan.settings(), identity, os.urandom(32)).handle(Start(0.0))
    return next(o.data for o in outputs if isinstance(o, Send) and o.to is None and not o.forward)


async def _until(test: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not test():
            await asyncio.sleep(0.005)


def test_a_message_is_passed_on_only_to_the_seats_not_known_to_hold_it(tmp_path: Path) -> None:
    plan, idents = _plan(3)
    ids = [i.peer_id for i in idents]
    got: dict[int, list[tuple[str, bytes]]] = {0: [], 2: []}

    async def scenario() -> None:
        meshes: dict[int, Mesh] = {}
        for seat in (0, 2):

            def record(who: str, data: bytes, seat: int = seat) -> None:
                got[seat].append((who, data))

            meshes[seat] = Mesh(
                idents[seat], plan.table_id, [p for p in ids if p != ids[seat]], record, lambda *_: None
            )
            await meshes[seat].start(HOST, plan.seats[seat].port)
        runner = TableRunner(plan, idents[1], tmp_path, BotPlayer(plan.game), HOST)
        task = asyncio.create_task(runner.run())
        try:
            for seat, mesh in meshes.items():
                for other in range(3):
                    if other != seat:
                        await mesh.connect(ids[other], HOST, plan.seats[other].port)
            await _until(lambda: all(ids[1] in m.connected_peers() for m in meshes.values()))
            mine = {seat: _first_message(plan, idents[seat]) for seat in (0, 2)}
            # Seat 2's message comes to seat 1 from its author and from seat 0: both hold it.
            meshes[2].send(ids[1], mine[2])
            meshes[0].send(ids[1], mine[2])
            await _until(lambda: meshes[2].queued(ids[1]) == 0 and meshes[0].queued(ids[1]) == 0)
            # Seat 0's comes from its author only; with it seat 1 has every commitment and reveals,
            # passing on first every message it took (P-5.2), on the same ordered links.
            meshes[0].send(ids[1], mine[0])

            def revealed(seat: int) -> bool:
                return any(who == ids[1] and b'"kind":"seed.reveal"' in data for who, data in got[seat])

            await _until(lambda: revealed(0) and revealed(2))
            from_1 = {seat: [data for who, data in got[seat] if who == ids[1]] for seat in (0, 2)}
            assert mine[0] not in from_1[0] and mine[2] not in from_1[0]  # nothing back to an author or a sender
            assert mine[0] in from_1[2]  # seat 2 had not got seat 0's message: it is passed on to it
            assert mine[2] not in from_1[2]
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            for mesh in meshes.values():
                await mesh.close()

    asyncio.run(scenario())
