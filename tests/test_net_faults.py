"""Faults and hostile input on a running table, all on 127.0.0.1.

- a bot process SIGKILLed mid-round and started again with the same command and LANPLAY_HOME
  resumes from its journal (P-5.6): the game completes, records identical, nobody stopped or exposed;
- a peer that never comes back is waited for, then stopped for past the patience (P-5.5), convicting
  nobody: the others finish with one record, cut short; alone at a table of two, a seat says it lost
  the network, leaves the table resumable, and the two resume it to the end;
- links dropped and restored (closed or aborted in-process, and killed under live processes with
  ``ss -K``): the session resumes with no move lost or applied twice;
- hostile input at the sockets of a running table (garbage, text and oversized frames, a bad handshake
  signature, strangers, another table, a browser page, a stranger at the closed lobby): refused
  with a clear log line, and the table plays on to the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from netutil import (
    EXPOSED_LINE,
    FINISHED_LINE,
    LEFT_LINE,
    LOOPBACK,
    STOPPED_LINE,
    BotProcess,
    Table,
    assert_complete_game,
    assert_same_signed_record,
    clean_env,
    lanplay_command,
    replay_json,
    start_table,
    verify_record,
)
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Origin

from lanplay.base.store import load_or_create_identity
from lanplay.net.lobby import fetch_lobby_id
from lanplay.net.mesh import MAX_MESSAGE
from lanplay.table import runner as runner_module
from lanplay.table.runner import BotPlayer, Outcome, TableRunner, unfinished_journal
from lanplay.table.tables import host_table, join_table, resume_table
from protocol.identity import Identity
from protocol.link import Handshake, LinkCipher
from protocol.table import Event, Moved

GAME_LIMIT = 120.0


@pytest.fixture
def processes() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        bot.kill()


# --- helpers ----------------------------------------------------------------------------------------


def decisions(bot: BotProcess) -> int:
    """How many of its own moves the bot has journaled (each is on disk before it is sent)."""
    return sum(path.read_bytes().count(b'"t":"decide"') for path in bot.journal_paths())


def wait_decisions(bot: BotProcess, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while decisions(bot) < count:
        assert bot.running(), f"{bot.name} ended before making {count} moves\n{bot.describe()}"
        assert time.monotonic() < deadline, f"{bot.name} made no {count} moves in {timeout} s\n{bot.describe()}"
        time.sleep(0.02)


def seat_of(bot: BotProcess) -> int:
    (path,) = bot.journal_paths()
    found = re.search(r"-seat(\d+)\.jsonl$", path.name)
    assert found
    return int(found.group(1))


def plan_of(bot: BotProcess) -> dict[str, Any]:
    """The table plan at the head of a bot's journal."""
    (path,) = bot.journal_paths()
    first = json.loads(path.read_bytes().split(b"\n", 1)[0])
    plan: dict[str, Any] = first["record"]["plan"]
    return plan


def no_tracebacks(table: Table) -> None:
    for bot in table.bots:
        assert "Traceback" not in bot.all_stderr(), bot.describe()


# --- (a) a bot killed mid-round comes back ------------------------------------------------------------


@pytest.mark.parametrize("victim", [0, 2], ids=["host", "joiner"])
def test_killed_bot_restarts_with_the_same_command_and_the_game_completes(
    tmp_path: Path, processes: list[BotProcess], victim: int
) -> None:
    table = start_table(tmp_path, "sixth-sense", 4, started=processes.append)
    bot = table.bots[victim]
    wait_decisions(bot, 3)  # past the deal and the predictions: mid-round, with moves journaled
    bot.kill()
    assert bot.proc is not None and bot.proc.returncode == -9
    journal = bot.journal_records()
    assert journal[-1].get("t") != "done" and any(r.get("t") == "decide" for r in journal)
    time.sleep(0.5)  # the others notice the dead links before it comes back
    bot.start()  # the very same command, the same LANPLAY_HOME
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    assert "resumed the unfinished game" in bot.stdout(), bot.describe()
    assert "resuming table" in bot.stderr(), bot.describe()
    # Back well within the patience: nobody stopped the round, nobody exposed, the same complete record.
    result = assert_complete_game(table.bots, "sixth-sense")
    assert len(result["rounds"]) >= 1
    no_tracebacks(table)


# --- (b) a peer that never comes back ----------------------------------------------------------------


def test_a_peer_that_never_comes_back_is_waited_for_then_stopped_and_the_others_go_on_with_a_bot(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    """P-5.5, P-5.7, P-6.1, P-6.4: a seat killed mid-round owes a step; the others wait for it, and past
    the table's patience a waiting seat publishes a stop naming it. A stop convicts nobody: the round is
    void, and the two seats left sign one record, cut short. Bot processes then go on: a new table that
    continues it, the rounds kept, a bot in the empty seat run by the lowest seat left (every record says
    whose laptop), played to the game's end; both exit 0 with the same record."""
    patience = 3.0
    table = start_table(tmp_path, "sixth-sense", 3, options=["target=2"], patience=patience, started=processes.append)
    victim = table.bots[1]
    wait_decisions(victim, 3)
    seat = seat_of(victim)
    victim.kill()
    survivors = [b for b in table.bots if b is not victim]
    codes = [bot.wait(GAME_LIMIT) for bot in survivors]
    assert codes == [0, 0], table.describe()
    for bot in survivors:
        stops = STOPPED_LINE.findall(bot.stdout())
        assert stops, bot.describe()
        # Every stop was made by a seat still there and names the vanished seat as the one waited for.
        assert all(by != str(seat) and waited == str(seat) for by, waited, _owed, _why in stops), bot.describe()
        finished = FINISHED_LINE.findall(bot.stdout())
        assert finished[0] == "cut short" and finished[-1] == "complete", bot.describe()
        assert not LEFT_LINE.search(bot.stdout()) and not EXPOSED_LINE.search(bot.stdout()), bot.describe()
        # The game is over: a restart would not resume it.
        assert all(json.loads(line)["record"] == {"t": "done"} for line in _last_lines(bot)), bot.describe()
    path = assert_same_signed_record(survivors)
    record = json.loads(path.read_text())
    assert replay_json(path)["complete"] is True
    assert record["exposed"] == [] and record["proofs"] == []
    assert len(record["end"]["signatures"]) == 3  # the two seats still there, and the bot in the third
    continues = record["table"]["continues"]
    first = [json.loads(p.read_text()) for p in survivors[0].record_paths()]
    first = [r for r in first if "continues" not in r["table"]]
    assert len(first) == 1 and first[0]["table"]["id"] == continues["table"]  # the table it goes on from
    assert first[0]["end"]["digest"] == continues["digest"] and first[0]["complete"] is False
    assert record["rounds"][: continues["rounds"]] == first[0]["rounds"]  # the rounds kept, carried
    host = min(s for s in range(3) if s != seat)
    assert {"seat": seat, "host": host} in record["bots"], record["bots"]  # run by the lowest seat left
    assert record["players"][seat].endswith(f"'s bot {seat + 1}")
    code, text = verify_record(path)
    assert code == 0 and "no proofs: nobody was exposed at this table" in text, text
    no_tracebacks(table)


def _last_lines(bot: BotProcess) -> list[str]:
    """The last line of each of the bot's journals (one per table it sat at)."""
    return [path.read_text().splitlines()[-1] for path in bot.journal_paths()]


def test_a_seat_with_no_link_at_all_says_it_lost_the_network_then_both_resume_and_complete(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    """P-6.4: at a table of two, the other seat killed leaves this one with no link at all: it says it
    lost the network and stops nobody (it cannot tell its own outage from the other's); past the
    patience it leaves the table unfinished (exit 4, the journal kept). The same two commands started
    again resume the game from their journals (P-5.6), and it completes with nobody stopped or exposed."""
    table = start_table(tmp_path, "sixth-sense", 2, patience=3.0, started=processes.append)
    alone, victim = table.bots
    wait_decisions(victim, 3)
    victim.kill()
    assert alone.wait(60.0) == 4, alone.describe()
    assert "lost the network: no link to any other seat" in alone.stdout(), alone.describe()
    assert "run lanplay again to resume" in alone.stderr(), alone.describe()
    assert not STOPPED_LINE.search(alone.stdout()) and "table finished" not in alone.stdout(), alone.describe()
    assert alone.journal_records()[-1].get("t") != "done"
    for bot in table.bots:  # the very same commands, the same LANPLAY_HOMEs
        bot.start()
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0, 0], table.describe()
    assert all("resumed the unfinished game" in bot.stdout() for bot in table.bots), table.describe()
    assert_complete_game(table.bots, "sixth-sense")
    no_tracebacks(table)


# --- (c) links dropped and restored ------------------------------------------------------------------


def _moves_of(record_path: Path) -> list[dict[str, Any]]:
    record = json.loads(record_path.read_text())
    return [move for r in record["rounds"] for move in r["moves"]]


def _run(coro: Any, limit: float) -> Any:
    async def body() -> Any:
        async with asyncio.timeout(limit):
            return await coro

    return asyncio.run(body())


def _bot_records(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "bots").glob("*/records/*.json"))


def test_every_seat_records_the_bot_and_the_laptop_that_runs_it_byte_for_byte(tmp_path: Path) -> None:
    """Issue 10, item 3: Ann's laptop runs a bot and so sees its cards; the record of every seat (Ann, her
    bot, Bob on another laptop) says so from the signed plan, and all three are the same bytes."""

    async def body() -> list[Any]:
        lobbies: list[int] = []
        hosting = asyncio.create_task(
            host_table(
                identity=Identity.generate(), data_dir=tmp_path / "ann", name="Ann", game="sixes",
                options={"chips": 1}, seats=3, bots=1, interface=LOOPBACK, player=BotPlayer("sixes"),
                advertise=False, on_lobby=lambda lobby, port: lobbies.append(port),
            )
        )  # fmt: skip
        while not lobbies:
            await asyncio.sleep(0.02)
        joining = join_table(
            identity=Identity.generate(), data_dir=tmp_path / "bob", name="Bob", interface=LOOPBACK,
            player=BotPlayer("sixes"), address=(LOOPBACK, lobbies[0]),
        )  # fmt: skip
        return list(await asyncio.gather(hosting, joining))

    outcomes = _run(body(), GAME_LIMIT)
    assert all(o.finished and o.complete and not o.exposed and o.record_path is not None for o in outcomes), outcomes
    paths = [o.record_path for o in outcomes] + _bot_records(tmp_path / "ann")
    assert len(paths) == 3
    assert len({p.read_bytes() for p in paths}) == 1, "records differ"
    record = json.loads(paths[0].read_text())
    players = record["players"]
    assert record["bots"] == [{"seat": players.index("Ann's bot 1"), "host": players.index("Ann")}]
    assert replay_json(paths[0])["complete"] is True


def test_links_dropped_and_restored_in_process_lose_and_repeat_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """All seats in this process (the host's in-process bots join over loopback like anyone): links
    of the host are closed (cleanly, or aborted like a pulled cable) again and again mid-game."""
    caplog.set_level(logging.INFO, logger="lanplay.net.mesh")
    moved: list[Moved] = []
    runners: list[TableRunner] = []
    drops: list[str] = []
    rng = random.Random(7)

    async def dropper() -> None:
        while not runners or runners[0].mesh is None:
            await asyncio.sleep(0.01)
        mesh = runners[0].mesh
        while len(drops) < 8:
            await asyncio.sleep(rng.uniform(0.15, 0.45))
            links = dict(mesh._links)
            if not links:
                continue
            peer = rng.choice(sorted(links))
            ws = links[peer].ws
            if len(drops) % 2:
                ws.transport.abort()  # no close frame: as if the cable was pulled
                drops.append("abort")
            else:
                await ws.close()
                drops.append("close")

    async def body() -> Any:
        task = asyncio.create_task(dropper())
        try:
            return await host_table(
                identity=Identity.generate(), data_dir=tmp_path, name="Host", game="sixth-sense",
                options={"beginner": False, "target": None, "late_trump": False}, seats=4, bots=3,
                interface=LOOPBACK, player=BotPlayer("sixth-sense"), advertise=False,
                on_event=lambda e: moved.append(e) if isinstance(e, Moved) else None, on_runner=runners.append,
            )  # fmt: skip
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    outcome = _run(body(), GAME_LIMIT)
    assert outcome.finished and outcome.complete and not outcome.exposed and not outcome.stops, outcome
    assert len(drops) >= 4, f"the game ended before links were dropped: {drops}"
    # 4 seats: 6 links, each up on both sides at the start (12); every drop brings one back up.
    ups = [r for r in caplog.records if re.fullmatch(r"link .* up", r.getMessage())]
    assert len(ups) >= 12 + len(drops), [r.getMessage() for r in caplog.records]
    assert outcome.record_path is not None
    paths = [outcome.record_path, *_bot_records(tmp_path)]
    assert len(paths) == 4
    data = {p.read_bytes() for p in paths}
    assert len(data) == 1, "records differ"
    result = replay_json(outcome.record_path)
    assert result["complete"] is True
    # Every move applied here exactly once, in the order of the record.
    recorded = _moves_of(outcome.record_path)
    assert [m.seat for m in moved] == [m["seat"] for m in recorded]
    for event, move in zip(moved, recorded, strict=True):
        if all(v is not None for v in event.move.values()):
            assert event.move == move


def _ss_kill_port(port: int) -> None:
    """Abort (RST) every TCP connection dialled to 127.0.0.1:port: the links into one seat's mesh."""
    subprocess.run(
        ["ss", "-K", "-t", "state", "established", "dst", LOOPBACK, "dport", "=", f":{port}"],
        capture_output=True, check=True, timeout=10,
    )  # fmt: skip


def _ss_kill_works() -> bool:
    if shutil.which("ss") is None:
        return False
    import socket

    with socket.socket() as server:
        server.bind((LOOPBACK, 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection((LOOPBACK, port)) as client:
            accepted, _ = server.accept()
            with accepted:
                try:
                    _ss_kill_port(port)
                except (subprocess.SubprocessError, OSError):
                    return False
                try:
                    client.settimeout(2)
                    client.sendall(b"x")
                    return client.recv(1) == b""
                except OSError:
                    return True


def test_links_killed_under_live_processes_resume(tmp_path: Path, processes: list[BotProcess]) -> None:
    if not _ss_kill_works():
        pytest.skip("`ss -K` cannot destroy sockets here (no ss, or no CONFIG_INET_DIAG_DESTROY)")
    table = start_table(tmp_path, "sixth-sense", 4, started=processes.append)
    wait_decisions(table.host, 2)
    ports = [seat["mesh"][1] for seat in plan_of(table.host)["seats"]]
    for round_ in range(3):
        for port in ports:  # every link of the table, at once
            _ss_kill_port(port)
        time.sleep(0.6 + 0.2 * round_)
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    # 4 seats: 6 links, each logged up on both sides (12), then again after every round of kills.
    ups = sum(len(re.findall(r"link .* up$", b.stderr(), re.M)) for b in table.bots)
    assert ups >= 2 * 12, table.describe()
    assert all("closed: no close frame" in b.stderr() for b in table.bots), table.describe()
    assert_complete_game(table.bots, "sixth-sense")
    no_tracebacks(table)


# --- (3) hostile input at the sockets -------------------------------------------------------------------


class _WrongKey:
    """Claims one identity in the handshake, but signs with another key."""

    def __init__(self, claimed: Identity, signer: Identity) -> None:
        self.public = claimed.public
        self.peer_id = claimed.peer_id
        self.sign = signer.sign


def _low_identity() -> Identity:
    """An identity whose peer id is below (almost) any other: it dials every other seat."""
    while True:
        identity = Identity.generate()
        if identity.peer_id.startswith("00"):
            return identity


async def _handshake(ws: ClientConnection, identity: Any, table: str) -> LinkCipher:
    """Our side (initiator) of the link handshake, by hand."""
    handshake = Handshake(identity, table, None, "initiator")
    await ws.send(handshake.start())
    reply = handshake.receive(await ws.recv(decode=False))
    assert reply is not None
    await ws.send(reply)
    handshake.receive(await ws.recv(decode=False))
    return handshake.done


async def _closed(ws: ClientConnection, timeout: float = 10.0) -> int | None:
    """Wait until the far side closes; its close code."""
    with contextlib.suppress(ConnectionClosed):
        async with asyncio.timeout(timeout):
            while True:
                await ws.recv()
    return ws.close_code


async def _until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def _stranger_cli(tmp: Path, address: str) -> tuple[int, str]:
    """`lanplay join ADDRESS` as a stranger with its own LANPLAY_HOME; (exit code, stderr)."""
    home = tmp / f"stranger-{address.replace(':', '-')}"
    home.mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        *lanplay_command(), "join", address, "--interface", LOOPBACK,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(home),
    )  # fmt: skip
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode() + err.decode()


def test_hostile_input_is_refused_and_the_table_plays_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lanplay.net.mesh")
    host_identity = _low_identity()
    asked = asyncio.Event()
    gate = asyncio.Event()
    runners: list[TableRunner] = []
    lobbies: list[int] = []
    events: list[Event] = []

    class GatedBot(BotPlayer):
        """The host's seat: holds its first decision (no time limit on a player) while we attack."""

        async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
            asked.set()
            await gate.wait()
            return await super().decide(runner, moves)

    def refused(text: str) -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name == "lanplay.net.mesh" and r.levelno >= logging.WARNING and text in r.getMessage()
        ]

    async def attack() -> None:
        runner = runners[0]
        table = runner.settings.table
        seats = runner.plan.seats
        host_port = seats[runner.me].port
        uri = f"ws://{LOOPBACK}:{host_port}/"
        higher = [s for s in range(len(seats)) if s != runner.me and runner.peer_ids[s] > host_identity.peer_id]
        assert higher, "no seat with a higher peer id than the host"
        victim_port = seats[higher[0]].port
        victim_uri = f"ws://{LOOPBACK}:{victim_port}/"
        stranger = Identity.generate()

        # Garbage instead of a handshake.
        async with connect(uri, proxy=None) as ws:
            await ws.send(os.urandom(200))
            assert await _closed(ws) == 1008
        await _until(lambda: bool(refused("handshake failed")))
        # A text frame.
        async with connect(uri, proxy=None) as ws:
            await ws.send("hello, is this the table?")
            assert await _closed(ws) == 1003
        await _until(lambda: bool(refused("text frame")))
        # A frame larger than any link accepts.
        async with connect(uri, proxy=None, max_size=None) as ws:
            with contextlib.suppress(ConnectionClosed):
                await ws.send(b"\0" * (MAX_MESSAGE + 1))
            assert await _closed(ws) == 1009
        await _until(lambda: bool(refused(f"message larger than {MAX_MESSAGE} bytes")))
        # A stranger with a well-formed handshake.
        async with connect(uri, proxy=None) as ws:
            with contextlib.suppress(ConnectionClosed):
                await _handshake(ws, stranger, table)
            assert await _closed(ws) == 1008
        await _until(lambda: any(stranger.peer_id in m for m in refused("stranger")))
        # Someone at another table.
        async with connect(uri, proxy=None) as ws:
            await ws.send(Handshake(stranger, "ff" * 16, None, "initiator").start())
            assert await _closed(ws) == 1008
        await _until(lambda: bool(refused("another table")))
        # An impostor: presents the host's key to another seat, cannot sign for it.
        async with connect(victim_uri, proxy=None) as ws:
            with contextlib.suppress(ConnectionClosed):
                await _handshake(ws, _WrongKey(host_identity, stranger), table)
            assert await _closed(ws) == 1008
        await _until(lambda: bool(refused("bad signature")))
        # A buggy peer with the host's real key: after the handshake, garbage, then a malformed frame.
        async with connect(victim_uri, proxy=None) as ws:
            cipher = await _handshake(ws, host_identity, table)
            await ws.send(os.urandom(64))
            assert await _closed(ws) == 1008
        await _until(lambda: bool(refused("frame failed to decrypt")))
        async with connect(victim_uri, proxy=None) as ws:
            cipher = await _handshake(ws, host_identity, table)
            await ws.send(cipher.seal(b"\x07not a resume"))
            assert await _closed(ws) == 1008
        await _until(lambda: bool(refused("expected a RESUME frame")))
        # A web page.
        with pytest.raises(InvalidStatus):
            async with connect(uri, proxy=None, origin=Origin("http://evil.example")):
                pass
        await _until(lambda: bool(refused("web page")))
        # Raw bytes that are not even HTTP.
        reader, writer = await asyncio.open_connection(LOOPBACK, host_port)
        writer.write(os.urandom(512) + b"\r\n\r\n")
        await writer.drain()
        async with asyncio.timeout(10):
            await reader.read()  # the server hangs up
        writer.close()
        # The lobby closed when the game started: a stranger is turned away, and told why.
        with pytest.raises(OSError):
            await fetch_lobby_id(LOOPBACK, lobbies[0])
        code, text = await _stranger_cli(tmp_path, f"{LOOPBACK}:{lobbies[0]}")
        assert code == 2 and "cannot join the table" in text and "Traceback" not in text, text
        # ... and a stranger who takes the mesh port for a lobby, likewise.
        code, text = await _stranger_cli(tmp_path, f"{LOOPBACK}:{host_port}")
        assert code == 2 and "Traceback" not in text, text
        assert "no lanplay table answers" in text or "cannot join the table" in text, text
        # None of it touched the table's own links.
        assert runner.mesh is not None
        assert runner.mesh.connected_peers() == {p for s, p in enumerate(runner.peer_ids) if s != runner.me}

    async def body() -> Any:
        hosting = host_table(
            identity=host_identity, data_dir=tmp_path, name="Host", game="sixth-sense",
            options={"beginner": False, "target": None, "late_trump": False}, seats=3, bots=2,
            interface=LOOPBACK, player=GatedBot("sixth-sense"), advertise=False, on_event=events.append,
            on_runner=runners.append, on_lobby=lambda lobby, port: lobbies.append(port),
        )  # fmt: skip
        game = asyncio.create_task(hosting)
        try:
            async with asyncio.timeout(60):
                await asyncio.wait({game, asyncio.create_task(asked.wait())}, return_when=asyncio.FIRST_COMPLETED)
            assert asked.is_set(), "the game ended before the host was asked to move"
            await attack()
        finally:
            gate.set()
        return await game

    outcome = _run(body(), GAME_LIMIT)
    assert outcome.finished and outcome.complete and not outcome.exposed and not outcome.stops, outcome
    assert outcome.record_path is not None
    paths = [outcome.record_path, *_bot_records(tmp_path)]
    assert len(paths) == 3
    assert len({p.read_bytes() for p in paths}) == 1, "records differ"
    assert replay_json(outcome.record_path)["complete"] is True
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


def test_a_resume_into_a_table_the_others_ended_says_the_table_is_gone_and_is_not_offered_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30, P-6.4: Bob's process dies mid-game; Ann waits the table's patience, stops for him and
    ends the table without him. Bob's laptop resumes its journal later: no seat ever answers, so after a
    while it says the table is gone (not "lost the network"), keeps its rounds, and the journal is done, so
    nothing offers to resume that table again."""
    monkeypatch.setattr(runner_module, "GONE_AFTER", 0.5)
    bob_runners: list[TableRunner] = []

    async def body() -> tuple[Outcome, Outcome | None]:
        lobbies: list[int] = []
        hosting = asyncio.ensure_future(
            host_table(
                identity=Identity.generate(), data_dir=tmp_path / "ann", name="Ann", game="sixes",
                options={"chips": 3}, seats=3, bots=1, interface=LOOPBACK, player=BotPlayer("sixes"),
                advertise=False, on_lobby=lambda lobby, port: lobbies.append(port), reconnect_timeout=1.0,
            )
        )  # fmt: skip
        while not lobbies:
            await asyncio.sleep(0.02)
        bob = tmp_path / "bob"
        joining = asyncio.ensure_future(
            join_table(
                identity=load_or_create_identity(bob), data_dir=bob, name="Bob", interface=LOOPBACK,
                player=BotPlayer("sixes", delay=0.05), address=(LOOPBACK, lobbies[0]), on_runner=bob_runners.append,
            )
        )  # fmt: skip
        while not (bob_runners and bob_runners[0].session is not None and bob_runners[0].session.decision()):
            await asyncio.sleep(0.01)
        joining.cancel()  # Bob's process dies with its turn owed; its journal stays
        with contextlib.suppress(asyncio.CancelledError):
            await joining
        ann = await hosting
        resumed = await resume_table(
            identity=load_or_create_identity(bob), data_dir=bob, interface=LOOPBACK, player=BotPlayer("sixes")
        )
        return ann, resumed

    ann, resumed = _run(body(), GAME_LIMIT)
    assert ann.finished and not ann.complete and not ann.exposed
    assert resumed is not None and resumed.table_gone and not resumed.network_lost and not resumed.finished
    assert unfinished_journal(tmp_path / "bob") is None  # never offered again
