"""Taking a seat back over the network (P-5.7, `lanplay.table.takeback`) with faults at the same time: the
way back runs through one link, the returning laptop's to the take-back desk of the laptop that runs the
bot. Whatever that link does, the returning laptop and the seats that go on must agree on whether it sits
at the next table (P-6.2), a table that waits for it must be one it can find (P-5.6), and a person who
asks again after a blip gets the seat back, or the seats go on without it (P-5.7, P-6.4). And a desk that
lies: a stranger's, for a table the asking laptop never sat at (P-5.7, P-6.7)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_take_back import _first_continuation
from test_take_back_net import Laptop as BaseLaptop
from test_take_back_net import guest, host
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

import lanplay.table.takeback as takeback
from lanplay.net.discovery import TableAdvert
from lanplay.net.lobby import LobbyError, LobbyHost
from lanplay.table.runner import BotPlayer, Outcome, TableRunner, unfinished_journal
from lanplay.table.tables import resume_table
from lanplay.table.takeback import BackFailed, back_to_table, find_desk, take_back
from protocol.continuation import Continuation, TakeBack, end_digest, make_take_back
from protocol.identity import Identity
from protocol.plan import SeatInfo, bot_vouch
from protocol.table import PROTOCOL_VERSION, Event, RoundConfirmed

LOOPBACK = "127.0.0.1"
GAME = "sixth-sense"  # six rounds at three seats (S-2.2): room for a leave, a bot's round and the way back
PATIENCE = 5  # seconds (the table's patience, P-5.5): the go-on exchange waits this long for a signature


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "home"))


class Laptop(BaseLaptop):
    """A laptop of tests/test_take_back_net.py that can say where its person sat."""

    def seated(self, key: str) -> Continuation | None:
        """The first continuation this laptop played with `key` in a person's seat."""
        for runner in self.runners:
            plan = runner.plan
            if isinstance(plan, Continuation) and any(s.public_key == key and s.runs_on is None for s in plan.seats):
                return plan
        return None


@dataclass
class Scene:
    played: Continuation | None  # the table Ann or Cor played with Bob back in his seat
    failed: list[str] = field(default_factory=list)  # what Bob's laptop said each time the way back failed
    found: Any = None  # the unfinished table on Bob's disk at the end (`unfinished_journal`)
    ended: list[bool] = field(default_factory=list)  # Ann's and Cor's games over (their tasks done)
    complete: list[bool] = field(default_factory=list)  # of those over: the game played to its end


def _back_scene(tmp_path: Path, asks: int, done: Callable[[Scene], bool]) -> Scene:
    """Ann hosts 3 seats; Bob leaves after round 1; Ann and Cor go on with a bot in his seat; Bob's laptop
    finds the desk naming its key and asks for the seat back, up to `asks` times while it says it failed.
    Runs until `done` (or 120 s), then stops every laptop."""
    ann, bob, cor = (Laptop(tmp_path, name) for name in ("Ann", "Bob", "Cor"))
    lobby: list[LobbyHost] = []
    scene = Scene(None)
    key = bob.identity.public.hex()

    def bob_leaves_after_a_round(event: Event) -> None:
        if isinstance(event, RoundConfirmed) and len(bob.runners) == 1:
            asyncio.get_running_loop().create_task(bob.runners[0].leave())

    async def bob_comes_back() -> None:
        left = await guest(bob, lobby, PATIENCE, bob_leaves_after_a_round)
        assert left.left
        for _ in range(asks):
            advert = await find_desk(LOOPBACK, bob.identity, 60)
            try:
                await back_to_table(
                    advert, identity=bob.identity, data_dir=bob.data_dir, name="Bob", interface=LOOPBACK,
                    player=bob.player, on_runner=bob.on_runner,
                )  # fmt: skip
                return
            except LobbyError as exc:  # BackFailed: what the screen says
                scene.failed.append(str(exc))

    async def run() -> Scene:
        tasks = [asyncio.ensure_future(t) for t in (host(ann, lobby, PATIENCE), guest(cor, lobby, PATIENCE),
                                                     bob_comes_back())]
        try:
            for _ in range(1200):
                scene.played = ann.seated(key) or cor.seated(key)
                scene.found = unfinished_journal(bob.data_dir)
                scene.ended = [tasks[0].done(), tasks[1].done()]
                scene.complete = [
                    t.done() and not t.cancelled() and isinstance(t.result(), Outcome) and t.result().complete
                    for t in tasks[:2]
                ]  # fmt: skip
                if done(scene):
                    break
                await asyncio.sleep(0.1)
            return scene
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    return asyncio.run(run())


def test_a_link_to_the_desk_that_drops_once_the_returning_laptop_signed_leaves_no_seat_waited_for_in_vain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob asks for his seat back and signs the continuation that gives it back; the desk's link to his
    laptop drops the moment his signature is in (a Wi-Fi blip). If the seats play that continuation with
    Bob in it, Bob's laptop must hold it (its journal, to play or resume it); else nobody plays it."""
    honest_recv = takeback._recv

    async def recv(ws: Any, cipher: Any, timeout: float | None = None) -> Any:
        message = await honest_recv(ws, cipher, timeout)
        if "sig" in message:  # only the desk is sent a signature: the link drops once it has it
            ws.transport.abort()
        return message

    monkeypatch.setattr(takeback, "_recv", recv)

    def done(scene: Scene) -> bool:
        return (scene.played is not None and bool(scene.failed or scene.found)) or all(scene.ended)

    scene = _back_scene(tmp_path, 1, done)
    if scene.played is None:
        return  # nobody plays a table with Bob in it: the seats and Bob agree
    # The seats play Bob's seat back: his laptop must not say it failed, and must hold that table to play it.
    found = scene.found
    assert not scene.failed and found is not None and found[0].table_id == scene.played.table_id, (scene, found)


def test_a_person_whose_link_to_the_desk_blips_after_the_request_is_held_asks_again_and_the_game_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's request is held at the desk; then his laptop's link to it drops (a blip), and his laptop asks
    again. Ann and Cor, who want to go on, must play on: with Bob back in his seat (his laptop at that table),
    or with the bot, a desk still open for him. The game must not end for them because of his blip."""
    honest_recv = takeback._recv
    blips: list[bool] = []

    async def recv(ws: Any, cipher: Any, timeout: float | None = None) -> Any:
        message = await honest_recv(ws, cipher, timeout)
        if "held" in message and not blips:  # only the returning laptop is told its request is held
            blips.append(True)
            ws.transport.abort()
        return message

    monkeypatch.setattr(takeback, "_recv", recv)

    def done(scene: Scene) -> bool:
        return (scene.played is not None and scene.found is not None) or all(scene.ended)

    scene = _back_scene(tmp_path, 3, done)
    assert blips, "the request was never held: nothing to test"
    back = scene.played is not None and scene.found is not None and scene.found[0].table_id == scene.played.table_id
    assert back or not all(scene.ended) or all(scene.complete), scene


def test_the_laptop_running_the_bot_crashed_and_started_again_still_offers_the_seat_back(tmp_path: Path) -> None:
    """Bob leaves after round 1; Ann and Cor go on with a bot in his seat, run by the laptop of the lowest of
    them, which opens the desk naming Bob's key. That laptop's process dies and starts again (its journal
    intact), and resumes the table. While that table plays on, Bob's laptop must find a desk for his seat."""
    ann, bob, cor = (Laptop(tmp_path, name) for name in ("Ann", "Bob", "Cor"))
    for laptop in (ann, bob, cor):
        laptop.player = BotPlayer(GAME, "heuristic", delay=0.3)  # a table that lasts while the laptop restarts
    lobby: list[LobbyHost] = []
    key = bob.identity.public.hex()

    def bob_leaves_after_a_round(event: Event) -> None:
        if isinstance(event, RoundConfirmed) and len(bob.runners) == 1:
            asyncio.get_running_loop().create_task(bob.runners[0].leave())

    async def restarted(laptop: Laptop) -> Outcome | None:
        outcome = await resume_table(
            identity=laptop.identity, data_dir=laptop.data_dir, interface=LOOPBACK, player=laptop.player,
            on_runner=laptop.on_runner,
        )  # fmt: skip
        return None if outcome is None else await laptop.go_on(outcome)

    def desk_laptop() -> tuple[Laptop, Continuation] | None:
        for laptop in (ann, cor):
            for runner in laptop.runners:
                plan = runner.plan
                if isinstance(plan, Continuation) and key in plan.left.values():
                    seat = [s.public_key for s in plan.seats].index(laptop.identity.public.hex())
                    if any(s.runs_on == plan.seats[seat].public_key for s in plan.seats):
                        return laptop, plan
        return None

    async def scenario() -> tuple[bool, bool]:
        tasks = {name: asyncio.ensure_future(t) for name, t in
                 (("Ann", host(ann, lobby, PATIENCE)), ("Cor", guest(cor, lobby, PATIENCE)),
                  ("Bob", guest(bob, lobby, PATIENCE, bob_leaves_after_a_round)))}  # fmt: skip
        try:
            await asyncio.wait_for(find_desk(LOOPBACK, bob.identity, 60), 60)  # the desk is up: Bob could ask now
            found = desk_laptop()
            assert found is not None
            laptop, plan = found
            tasks[laptop.name].cancel()  # its process dies
            await asyncio.gather(tasks[laptop.name], return_exceptions=True)
            tasks[laptop.name] = asyncio.ensure_future(restarted(laptop))  # and starts again
            try:
                advert = await find_desk(LOOPBACK, bob.identity, 8)
                desk = advert.table_id == plan.table_id
            except TimeoutError:
                desk = False
            other = cor if laptop is ann else ann
            playing = any(r.plan.table_id == plan.table_id and r.session is not None and not r.session.finished
                          for r in other.runners)  # fmt: skip
            return desk, playing
        finally:
            for task in tasks.values():
                task.cancel()
            await asyncio.gather(*tasks.values(), return_exceptions=True)

    desk, playing = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert desk or not playing, (desk, playing)


def test_a_desk_for_a_table_this_laptop_never_left_gives_it_no_seat(tmp_path: Path) -> None:
    """Eve, a stranger, runs every seat of a table of her own (her laptop and two bots it vouches for), signed
    by all of them, whose `left` names Bob's key for seat 2; her desk advertises it naming Bob's fingerprint
    (as the lobby screen offers any desk that names this laptop's key). Bob never sat at any table. Asking
    there must fail: the seat is not one his laptop left."""
    bob, eve = Identity.generate(), Identity.generate()
    bots = [Identity.generate() for _ in range(3)]
    made_up = "ef" * 16  # what Eve's table says it goes on from: no table at all

    def bot_seat(name: str, bot: Identity, table: str, port: int) -> SeatInfo:
        vouch = bot_vouch(eve, table, bot.public.hex())
        return SeatInfo(name, bot.public.hex(), LOOPBACK, port, eve.public.hex(), vouch)

    def signed(plan: Continuation, signers: list[Identity]) -> Continuation:
        return plan.with_signatures([plan.sign(i) for i in signers])

    seats = (SeatInfo("Ann", eve.public.hex(), LOOPBACK, 43000), bot_seat("Cor", bots[0], made_up, 43001),
             bot_seat("Ann's bot 3", bots[1], made_up, 43002))  # fmt: skip
    prior = signed(Continuation(made_up, end_digest(made_up, []), GAME, {}, seats, (), left={2: bob.public.hex()}),
                   [eve, bots[0], bots[1]])  # fmt: skip
    prior.verify()

    async def desk(ws: Any) -> None:
        cipher, _key = await takeback._handshake(ws, eve, prior.table_id, initiator=False)
        await takeback._send(ws, cipher, {"plan": prior.to_json()})
        back = TakeBack.from_json((await takeback._recv(ws, cipher, 10))["back"])
        await takeback._send(ws, cipher, {"held": back.seat})
        new = Continuation(prior.table_id, end_digest(prior.table_id, []), GAME, {},
                           (seats[0], bot_seat("Cor", bots[2], prior.table_id, 43003), back.info()), ())  # fmt: skip
        await takeback._send(ws, cipher, {"sign": new.to_json()})
        sig = (await takeback._recv(ws, cipher, 10))["sig"]
        whole = new.with_signatures([new.sign(eve), new.sign(bots[2]), str(sig)])
        await takeback._send(ws, cipher, {"start": whole.to_json()})
        await ws.wait_closed()

    async def scenario() -> Continuation:
        async with serve(desk, LOOPBACK, 0, compression=None, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            advert = TableAdvert(prior.table_id, GAME, {}, 3, 3, "Ann", eve.public.fingerprint, PROTOCOL_VERSION,
                                 LOOPBACK, port, back=(bob.public.fingerprint,))  # fmt: skip
            return await take_back(advert, identity=bob, name="Bob", interface=LOOPBACK, data_dir=tmp_path / "bob")

    with pytest.raises(BackFailed):
        asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_desk_shows_its_table_only_to_a_person_who_may_come_back_and_serves_a_few_links(tmp_path: Path) -> None:
    """The desk's first answer is the plan of the table playing now: every seat's address and the rounds so
    far. A key its `left` does not name gets one line instead and nothing of the table (P-6.7); the person it
    names gets the plan. Past `MAX_DESK_LINKS` people's links at once, a new one is told the desk is busy;
    past `MAX_DESK_OPENING` links in the handshake, a new one is closed unanswered (P-6.6)."""
    table, c1, identities = _first_continuation()
    bob = table.identities[2]
    runner = TableRunner(c1, identities[0], tmp_path / "ann", BotPlayer(GAME, "easy"), LOOPBACK)
    desk = takeback.BackDesk(runner, "Ann", LOOPBACK)

    async def first_answer(port: int, identity: Identity) -> Any:
        async with connect(f"ws://{LOOPBACK}:{port}/", max_size=takeback.MAX_DESK_MESSAGE, proxy=None) as ws:
            cipher, _ = await takeback._handshake(ws, identity, c1.table_id, initiator=True)
            return await takeback._recv(ws, cipher, 10)

    async def scenario() -> tuple[Any, Any, bool]:
        async with serve(desk._serve, LOOPBACK, 0, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            stranger = await first_answer(port, Identity.generate())
            person = await first_answer(port, bob)
            while desk._links:  # the two links above have closed at the desk too
                await asyncio.sleep(0.01)
            desk._links = takeback.MAX_DESK_LINKS  # as many people's links open as it serves
            crowded = await first_answer(port, bob) == {"busy": True}  # asked again later by the returning laptop
            desk._links, desk._opening = 0, takeback.MAX_DESK_OPENING  # as many links in the handshake as it takes
            try:
                await first_answer(port, bob)
                crowded = False
            except (ConnectionClosed, LobbyError, OSError):
                pass
            return stranger, person, crowded

    stranger, person, crowded = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert set(stranger) == {"error"} and "plan" not in stranger
    assert Continuation.from_json(person["plan"]) == c1
    assert crowded


def test_a_person_whose_link_blips_again_and_again_counts_as_one_link_at_the_desk(tmp_path: Path) -> None:
    """P-6.6: each time the returning laptop's link drops it asks again on a new one with the same request
    (held at the desk); the link it replaces stops counting, so ten blips leave one link counted, not ten (a
    desk serves `MAX_DESK_LINKS` people), and the request held is still the first."""
    table, c1, identities = _first_continuation()
    bob = table.identities[2]
    runner = TableRunner(c1, identities[0], tmp_path / "ann", BotPlayer(GAME, "easy"), LOOPBACK)
    desk = takeback.BackDesk(runner, "Ann", LOOPBACK)
    back = make_take_back(bob, c1.table_id, 2, "Bob", LOOPBACK, 45123)

    async def ask(port: int) -> Any:
        ws = await connect(f"ws://{LOOPBACK}:{port}/", max_size=takeback.MAX_DESK_MESSAGE, proxy=None)
        cipher, _ = await takeback._handshake(ws, bob, c1.table_id, initiator=True)
        await takeback._recv(ws, cipher, 10)  # the plan
        await takeback._send(ws, cipher, {"back": back.to_json()})
        answer = await takeback._recv(ws, cipher, 10)
        ws.transport.abort()  # a blip: the link drops without a word
        return answer

    async def scenario() -> tuple[list[Any], int]:
        async with serve(desk._serve, LOOPBACK, 0, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            answers = [await ask(port) for _ in range(10)]
            for _ in range(100):
                if desk._links <= 1:
                    break
                await asyncio.sleep(0.02)
            links = desk._links
            await desk.close()
            return answers, links

    answers, links = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert answers == [{"held": 2}] * 10 and links <= 1
    assert runner.take_backs == {2: back}
