"""A modified client at the go-on exchange over a real loopback mesh (P-5.7, P-6.2, P-6.6): what one seat
can send that makes honest seats of one table part ways, some playing a continuation the others do not."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lanplay.table.runner import BotPlayer, Outcome, TableRunner, unfinished_journal
from lanplay.table.tables import host_table, join_table
from protocol.continuation import Continuation
from protocol.encoding import canonical
from protocol.identity import Identity

LOOPBACK = "127.0.0.1"


class _Died(Exception):
    """A laptop's process ends here (a crash, a kill): nothing after this point runs."""


PATIENCE = 5.0  # the table's patience (P-5.5): each go-on step waits this long, on a machine busy with other tests


async def _until(condition: Callable[[], bool], timeout: float = 60.0, what: str = "the table") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def _go_on_scene(tmp_path: Path, attack: str) -> tuple[bool, bool, list[str], Continuation]:
    """Ann hosts 4 seats with one bot of her laptop (both honest); Bob leaves after round 1; Cor, which
    goes on by hand (`TableRunner.go_on`), first does `attack`. What Ann and her bot did next, the
    files of Ann's bots, and the continuation Cor got."""
    ann = Identity.generate()
    ports: list[int] = []
    bob_runner: list[TableRunner] = []
    cor_runner: list[TableRunner] = []
    ann_runners: list[TableRunner] = []

    async def yes(_runner: TableRunner) -> bool:
        return True

    async def host() -> Outcome:
        return await host_table(
            identity=ann, data_dir=tmp_path / "ann", name="Ann", game="sixes", options={"chips": 6}, seats=4,
            bots=1, interface=LOOPBACK, player=BotPlayer("sixes"), advertise=False, reconnect_timeout=PATIENCE,
            on_lobby=lambda _lobby, port: ports.append(port), on_runner=ann_runners.append, go=yes,
        )  # fmt: skip

    def cor_ready(runner: TableRunner) -> None:
        runner.may_go_on = True
        cor_runner.append(runner)

    async def joiner(name: str, on_runner: Callable[[TableRunner], None]) -> Outcome:
        await _until(lambda: bool(ports), what="the lobby")
        return await join_table(
            identity=Identity.generate(), data_dir=tmp_path / name, name=name, interface=LOOPBACK,
            player=BotPlayer("sixes"), address=(LOOPBACK, ports[0]), on_runner=on_runner,
            reconnect_timeout=PATIENCE,
        )  # fmt: skip

    async def scene() -> tuple[bool, bool, list[str], Continuation]:
        hosting = asyncio.ensure_future(host())
        bob = asyncio.ensure_future(joiner("Bob", bob_runner.append))
        cor = asyncio.ensure_future(joiner("Cor", cor_ready))
        await _until(lambda: bool(bob_runner) and bob_runner[0].session is not None, what="Bob's seat")
        await _until(lambda: bool(bob_runner[0].session and bob_runner[0].session.rounds), what="round 1")
        runner = cor_runner[0]
        ann_seat = [s.public_key for s in runner.plan.seats].index(ann.public.hex())
        assert runner.mesh is not None
        mesh = runner.mesh
        if attack == "junk":
            for n in range(4 * len(runner.peer_ids)):
                junk = {"go-on-sig": {"table": f"{n:032x}", "seat": 0, "sig": "00"}}
                mesh.send(runner.peer_ids[ann_seat], canonical(junk))
        elif attack == "withhold":
            honest_broadcast = mesh.broadcast

            def broadcast(data: bytes, passed_on: bool = False, **more: Any) -> None:
                if not data.startswith(b'{"go-on-sig'):
                    return honest_broadcast(data, passed_on, **more)
                for seat, peer in enumerate(runner.peer_ids):
                    if seat not in (ann_seat, runner.me):
                        mesh.send(peer, data)

            mesh.broadcast = broadcast  # type: ignore[method-assign]
        elif attack == "die-after-signing":
            waits = runner._until

            async def until(ready: Callable[[], bool]) -> bool:
                if runner._go_on_sigs:  # its own signature is out: it lives long enough for the bytes to leave
                    await asyncio.sleep(1.0)
                    raise _Died  # and dies before the others' signatures are in
                return await waits(ready)

            runner._until = until  # type: ignore[method-assign]
        await bob_runner[0].leave()
        await bob
        await cor
        if attack == "die-after-signing":
            with contextlib.suppress(_Died):
                await runner.go_on(True, {})
            await asyncio.sleep(3 * PATIENCE)
            played = [r.plan for r in ann_runners if r.plan.table_id != runner.plan.table_id]
            hosting.cancel()
            await asyncio.gather(hosting, return_exceptions=True)
            assert played, "Ann never played a continuation: nothing to test"
            return True, True, [], played[0]  # type: ignore[return-value]
        plan = await runner.go_on(True, {})
        assert isinstance(plan, Continuation), "the continuation was not signed by every seat: nothing to test"
        # Ann's go-on ends within a patience of Cor's: each seat has then taken its way (the table it
        # plays next, or none).
        await asyncio.sleep(3 * PATIENCE)
        bot_files = [p.name for p in (tmp_path / "ann" / "bots").rglob("*") if p.is_file()]
        bot_played = any(plan.table_id in name for name in bot_files)
        ann_played = any(r.plan.table_id == plan.table_id for r in ann_runners)
        hosting.cancel()
        await asyncio.gather(hosting, return_exceptions=True)
        return ann_played, bot_played, bot_files, plan

    return asyncio.run(asyncio.wait_for(scene(), 150))


@pytest.mark.parametrize("attack", ["junk", "withhold"])
def test_one_seat_never_parts_the_honest_seats_at_the_go_on(tmp_path: Path, attack: str) -> None:
    """Ann hosts 4 seats with one bot of her laptop; Bob leaves after round 1; Cor, a modified client, goes
    on like an honest seat but first sends Ann 16 `go-on-sig` messages for tables that do not exist
    (`junk`), or sends its signature on the continuation to every seat but Ann (`withhold`). Every honest
    seat must take the same way: all play the continuation, or none does."""
    ann_played, bot_played, bot_files, _plan = _go_on_scene(tmp_path, attack)
    # Every seat signed the continuation, Ann among them; Ann's own bot plays it (its journal names the
    # new table), so Ann must play it too, or neither.
    assert ann_played == bot_played, (ann_played, bot_played, bot_files)


def test_a_seat_that_crashes_after_signing_the_continuation_finds_it_again(tmp_path: Path) -> None:
    """P-5.6: Cor, honest, gets every signature on the continuation, then its process dies before it
    starts the new table. Started again, it must find that table to resume (the others play it)."""
    *_played, plan = _go_on_scene(tmp_path, "crash")
    found = unfinished_journal(tmp_path / "Cor")
    assert found is not None and found[0].table_id == plan.table_id, found


def test_every_seat_a_laptop_signed_the_continuation_for_is_on_its_disk_once_every_signature_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann's laptop hosts a new bot in Bob's empty seat. The moment its `go_on` returns (every signature in,
    the continuation passed on), a crash leaves on disk only what is there now: each seat this laptop signed
    for must be resumable from it (the bot's key beside a journal of the new table, whose plan is the one every
    seat signed: what a resume plays and a take-back desk shows)."""
    from lanplay.base.store import BOTS_DIR, journal_path

    at_return: list[tuple[str, bool, bool]] = []
    honest_go_on = TableRunner.go_on

    async def go_on(self: TableRunner, go: bool, bots: dict[int, Any] | None = None) -> Continuation | None:
        plan = await honest_go_on(self, go, bots)
        if isinstance(plan, Continuation):
            keys = [seat.public_key for seat in plan.seats]
            for identity, _, _ in (bots or {}).values():
                if identity.public.hex() in keys:
                    bot_dir = self.data_dir / BOTS_DIR / identity.public.fingerprint
                    journal = journal_path(bot_dir, plan.table_id, keys.index(identity.public.hex()))
                    resumable = journal.exists() and unfinished_journal(bot_dir) == (plan, journal)
                    at_return.append((identity.public.fingerprint, (bot_dir / "identity.key").exists(), resumable))
        return plan

    monkeypatch.setattr(TableRunner, "go_on", go_on)
    _go_on_scene(tmp_path, "crash")
    assert at_return, "no laptop put a bot of its own in the continuation: nothing to check"
    assert all(key and journal for _, key, journal in at_return), at_return


def test_a_seat_that_dies_once_its_own_signature_on_the_continuation_is_out_finds_it_again(tmp_path: Path) -> None:
    """P-5.6: Cor, honest, signs the continuation; its process dies the moment its signature has left. Ann
    and her bot hold every signature and play the new table. Started again, Cor must find that table."""
    *_played, plan = _go_on_scene(tmp_path, "die-after-signing")
    found = unfinished_journal(tmp_path / "Cor")
    assert found is not None and found[0].table_id == plan.table_id, found
