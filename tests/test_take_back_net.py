"""Taking a seat back over the network (P-5.7, `lanplay.table.takeback`), three laptops in one process on
127.0.0.1: Bob leaves after round 1 (a signed leave), Ann and Cor go on with a bot in his seat run by
the lowest laptop left, whose take-back desk names Bob's key by mDNS; Bob's laptop finds it and asks for
his seat back; the bot leaves at the end of a round, the seats go on with Bob back, scores carried, and
every laptop ends the game with the same complete record."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lanplay.net.lobby import LobbyHost
from lanplay.table.runner import BotPlayer, Outcome, TableRunner
from lanplay.table.tables import host_table, join_table, play_on
from lanplay.table.takeback import back_to_table, find_desk
from protocol.continuation import Continuation
from protocol.identity import Identity
from protocol.table import Event, RoundConfirmed

LOOPBACK = "127.0.0.1"
GAME = "sixth-sense"  # six rounds at three seats (S-2.2): room for a leave, a bot's round and the way back


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "home"))


class Laptop:
    def __init__(self, base: Path, name: str) -> None:
        self.name = name
        self.identity = Identity.generate()
        self.data_dir = base / name
        self.runners: list[TableRunner] = []
        self.player = BotPlayer(GAME, "heuristic")

    def on_runner(self, runner: TableRunner) -> None:
        runner.may_go_on = True
        self.runners.append(runner)

    async def go_on(self, outcome: Outcome) -> Outcome:
        if self.runners:
            outcome = await play_on(self.runners[-1], outcome, interface=LOOPBACK, player=self.player,
                                    on_runner=self.on_runner)  # fmt: skip
        return outcome


async def host(ann: Laptop, lobby: list[LobbyHost], patience: float, **more: Any) -> Outcome:
    """Ann hosts a 3-seat table and goes on from it (`Laptop.go_on`); its lobby is appended to `lobby`."""
    outcome = await host_table(
        identity=ann.identity, data_dir=ann.data_dir, name=ann.name, game=GAME, options={}, seats=3, bots=0,
        interface=LOOPBACK, player=ann.player, reconnect_timeout=patience, on_runner=ann.on_runner,
        on_lobby=lambda found, port: lobby.append(found), **more,
    )  # fmt: skip
    return await ann.go_on(outcome)


async def guest(laptop: Laptop, lobby: list[LobbyHost], patience: float, on_event: Any = None) -> Outcome:
    """`laptop` takes a seat at the table of the first lobby in `lobby` and goes on from it."""
    while not lobby:
        await asyncio.sleep(0.05)
    outcome = await join_table(
        identity=laptop.identity, data_dir=laptop.data_dir, name=laptop.name, interface=LOOPBACK,
        player=laptop.player, table_id=lobby[0].lobby_id, on_runner=laptop.on_runner, on_event=on_event,
        reconnect_timeout=patience,
    )  # fmt: skip
    return await laptop.go_on(outcome)


async def killed_in_round_two(tmp_path: Path, bob: Laptop, lobby: list[LobbyHost], patience: float) -> Laptop:
    """Bob's laptop plays round 1 and is killed (its task cancelled: no leave, its journal stays) into round
    2, cards dealt and secrets drawn; the same installation (key, journals) started again, not yet asking."""
    died = asyncio.Event()

    def in_round_two(event: Event) -> None:
        if isinstance(event, RoundConfirmed):
            died.set()

    first = asyncio.ensure_future(guest(bob, lobby, patience, in_round_two))
    await died.wait()
    await asyncio.sleep(0.3)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    again = Laptop(tmp_path, bob.name)
    again.identity = bob.identity
    return again


def test_a_person_who_left_takes_the_seat_back_and_every_laptop_ends_with_the_same_record(tmp_path: Path) -> None:
    ann, bob, cor = (Laptop(tmp_path, name) for name in ("Ann", "Bob", "Cor"))
    lobby: list[LobbyHost] = []
    plans: list[tuple[Continuation, int]] = []

    def bob_leaves_after_a_round(event: Event) -> None:
        if isinstance(event, RoundConfirmed) and len(bob.runners) == 1:
            asyncio.get_running_loop().create_task(bob.runners[0].leave())

    async def bob_comes_back() -> Outcome:
        left = await guest(bob, lobby, 30, bob_leaves_after_a_round)
        assert left.left
        advert = await find_desk(LOOPBACK, bob.identity, 60)
        outcome = await back_to_table(
            advert, identity=bob.identity, data_dir=bob.data_dir, name="Bob", interface=LOOPBACK, player=bob.player,
            on_runner=bob.on_runner, on_plan=lambda plan, seat: plans.append((plan, seat)),
        )  # fmt: skip
        return await bob.go_on(outcome)

    async def scenario() -> list[Outcome]:
        return list(await asyncio.wait_for(asyncio.gather(host(ann, lobby, 30, bot_kind="easy"),
                                                          guest(cor, lobby, 30), bob_comes_back()), 240))

    outcomes = asyncio.run(scenario())
    assert all(o.complete and o.finished for o in outcomes), outcomes
    last = [laptop.runners[-1] for laptop in (ann, cor, bob)]
    assert len({r.settings.table for r in last}) == 1  # one table at the end, Bob at it
    final = last[0].plan
    (held, held_seat), *_ = plans
    assert isinstance(final, Continuation) and final.left == {}
    assert final.level == "easy" and held.level == "easy"  # the table's bot level, carried (issue 32)
    seat = final.seats.index(next(s for s in final.seats if s.public_key == bob.identity.public.hex()))
    assert final.seats[seat].runs_on is None  # his own seat again, no bot
    assert held_seat == seat and held.left == {seat: bob.identity.public.hex()}  # the table that left it to him
    records = {r.session.record_digest() for r in last if r.session is not None}
    assert len(records) == 1
    carried = len(final.rounds)
    assert carried >= 2  # round 1 before Bob left, a round with the bot: the scores went on from them


def test_a_killed_laptop_comes_back_publishes_its_owed_secrets_and_takes_its_seat_back(tmp_path: Path) -> None:
    """P-5.5, P-5.7: Bob's laptop dies in round 2 (its process is gone: no leave, no secrets). Ann and Cor wait
    the table's patience, stop the round, then stop it for Bob's secrets; the table goes on with a bot in his
    seat, recorded as owed. Bob's laptop starts again with its journal, finds the desk, publishes a leave and
    the stopped round's secrets there, every seat settles them (the audit of the void round finds nothing),
    and Bob plays from a later round; every laptop ends with the same complete record, nobody exposed."""
    ann, bob, cor = (Laptop(tmp_path, name) for name in ("Ann", "Bob", "Cor"))
    lobby: list[LobbyHost] = []

    async def bob_is_killed_and_comes_back() -> Outcome:
        again = await killed_in_round_two(tmp_path, bob, lobby, 2)
        advert = await find_desk(LOOPBACK, again.identity, 60)
        outcome = await back_to_table(
            advert, identity=again.identity, data_dir=again.data_dir, name="Bob", interface=LOOPBACK,
            player=again.player, on_runner=again.on_runner,
        )  # fmt: skip
        bob.runners = again.runners
        return await again.go_on(outcome)

    async def scenario() -> list[Outcome]:
        return list(await asyncio.wait_for(asyncio.gather(host(ann, lobby, 2), guest(cor, lobby, 2),
                                                          bob_is_killed_and_comes_back()), 240))

    outcomes = asyncio.run(scenario())
    assert all(o.complete and o.finished and not o.exposed for o in outcomes), outcomes
    last = [laptop.runners[-1] for laptop in (ann, cor, bob)]
    assert len({r.settings.table for r in last}) == 1  # one table at the end, Bob at it
    final = last[0].plan
    assert isinstance(final, Continuation) and final.left == {} and final.owes == ()
    seat = [s.public_key for s in final.seats].index(bob.identity.public.hex())
    assert final.seats[seat].runs_on is None
    owed = [r.plan for r in ann.runners if isinstance(r.plan, Continuation) and r.plan.owes]
    assert owed and owed[0].owes == (seat,)  # the table that went on without him recorded the debt
    assert len({r.session.record_digest() for r in last if r.session is not None}) == 1
