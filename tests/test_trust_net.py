"""Findings 9 and 10 of issue 9 on 127.0.0.1. Finding 9 as real processes (I4: every table ends, and
a seat that comes back is not blamed for the time it was away); finding 10 in-process (I6: junk from a
seated peer costs no disk and no unbounded memory, and the table goes on).

A `lanplay bot` seat is taken away *during a deal* (its shuffle/lock/keys are owed or awaited) for
longer than the step limit but well under the reconnect limit — stopped with SIGSTOP and cut off (its
links aborted with ``ss -K``), or killed with SIGKILL and started again with the same command — and
then comes back. The game must complete with byte-identical records at every seat and no blame
anywhere (P-5.3 names nobody: the seat was within the reconnect limit, and the others had done their
steps).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from netutil import LOOPBACK, BotProcess, Table, assert_complete_game, start_table
from test_net_faults import _ss_kill_port, _ss_kill_works, plan_of, seat_of

from lanplay import runner as runner_module
from lanplay import tables
from lanplay.mesh import MeshError
from lanplay.runner import BotPlayer, Outcome, TableRunner
from protocol.identity import Identity
from protocol.signed import ZERO_DIGEST, sign_message
from protocol.table import Refused

STEP = 2.0  # the step limit (P-5.3), short to keep the test fast
RECONNECT = 60.0  # the reconnect limit, far above the time away
AWAY = 3 * STEP  # longer than the step limit
GAME_LIMIT = 180.0


@pytest.fixture
def processes() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        bot.kill(signal.SIGCONT)  # a stopped process must run to die of SIGKILL's cleanup path
        bot.kill()


def _trace_lines(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    lines = []
    for raw in path.read_text("utf-8", "replace").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # a line being written
    return lines


def _dealing(trace: Path, seat: int) -> int | None:
    """The round whose deal `seat` has begun and not finished (it has drawn its secrets, and does not
    hold its hand yet), if any, from round 1 on (mid-game, past the first dealer's seed)."""
    lines = [line for line in _trace_lines(trace) if line.get("seat") == seat]
    begun = {line["round"] for line in lines if line.get("event") == "round"}
    dealt = {line["round"] for line in lines if line.get("event") == "dealt"}
    pending = [r for r in begun - dealt if isinstance(r, int) and r >= 1]
    return max(pending) if pending else None


def _table(tmp_path: Path, processes: list[BotProcess]) -> tuple[Table, Path]:
    trace = tmp_path / "trace.jsonl"
    table = start_table(
        tmp_path, "sixth-sense", 4, step_timeout=STEP, reconnect_timeout=RECONNECT,
        env_extra={"LANPLAY_TRACE": str(trace)}, started=processes.append,
    )  # fmt: skip
    return table, trace


def _catch_in_a_deal(table: Table, trace: Path, victim: BotProcess, stop: int) -> int:
    """Signal `victim` with `stop` while a deal of its is pending; the round it was caught in.
    If a deal slipped through before the signal landed, let it go (SIGCONT) and wait for the next."""
    deadline = time.monotonic() + GAME_LIMIT
    while time.monotonic() < deadline:
        assert victim.running(), victim.describe()
        seat = _seat(victim)
        if seat is not None:
            round_ = _dealing(trace, seat)
            if round_ is not None:
                victim.kill(stop)
                time.sleep(0.2)  # a "dealt" line written just before the signal is on disk by now
                if _dealing(trace, seat) == round_:
                    return round_
                if stop == signal.SIGSTOP:
                    victim.kill(signal.SIGCONT)
                else:
                    raise AssertionError("killed just after its deal")  # pragma: no cover (retry below)
        time.sleep(0.01)
    raise AssertionError(f"no deal of {victim.name} caught within {GAME_LIMIT} s\n{table.describe()}")


def _seat(bot: BotProcess) -> int | None:
    return seat_of(bot) if bot.journal_paths() else None


def _assert_no_blame(table: Table) -> None:
    for bot in table.bots:
        assert "BLAME" not in bot.stdout(), bot.describe()
        assert "Traceback" not in bot.all_stderr(), bot.describe()


def test_a_bot_stopped_and_cut_off_during_the_deal_comes_back_and_nobody_is_blamed(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    if not _ss_kill_works():
        pytest.skip("`ss -K` cannot destroy sockets here (no ss, or no CONFIG_INET_DIAG_DESTROY)")
    table, trace = _table(tmp_path, processes)
    victim = table.bots[2]
    _catch_in_a_deal(table, trace, victim, signal.SIGSTOP)
    stopped = time.monotonic()
    for seat in plan_of(table.host)["seats"]:  # cut off: every link of the table aborted under it
        _ss_kill_port(seat["mesh"][1])
    time.sleep(AWAY)
    assert time.monotonic() - stopped > STEP
    assert all(bot.running() for bot in table.bots), table.describe()  # nobody gave up meanwhile
    victim.kill(signal.SIGCONT)  # the lid opens
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    _assert_no_blame(table)
    assert_complete_game(table.bots, "sixth-sense")
    # The seat noticed it had been away, and waited for its links before judging any time limit.
    assert "did not run for" in victim.stderr(), victim.describe()
    assert "time limits start again" in victim.stderr(), victim.describe()


def test_a_bot_killed_during_the_deal_and_restarted_after_the_step_limit_is_not_blamed(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    table, trace = _table(tmp_path, processes)
    victim = table.bots[1]
    for _attempt in range(5):
        try:
            _catch_in_a_deal(table, trace, victim, signal.SIGKILL)
            break
        except AssertionError as exc:
            if "killed just after its deal" not in str(exc):
                raise
            victim.start()  # it resumes; try the next deal
    else:
        pytest.fail("every kill landed just after a deal")
    assert victim.proc is not None and victim.proc.returncode == -9
    time.sleep(AWAY)
    assert all(bot.running() for bot in table.bots if bot is not victim), table.describe()
    victim.start()  # the very same command and LANPLAY_HOME
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    _assert_no_blame(table)
    assert_complete_game(table.bots, "sixth-sense")
    assert "resuming table" in victim.stderr() and "time limits start again" in victim.stderr(), victim.describe()


# --- finding 10: junk from a seated peer costs no disk and no unbounded memory (I6) ---------------


def recorded_runners(monkeypatch: pytest.MonkeyPatch) -> list[TableRunner]:
    """Every `TableRunner` the tables module makes from now on (the host's and its in-process bots')."""
    runners: list[TableRunner] = []

    class Recorded(TableRunner):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            runners.append(self)

    monkeypatch.setattr(tables, "TableRunner", Recorded)
    return runners


class GatedBot(BotPlayer):
    """The host's seat: sets `asked` at its first decision and holds it until `gate` is set (a player
    has no time limit), while the test acts as another seat's modified client."""

    def __init__(self, game_id: str, asked: asyncio.Event, gate: asyncio.Event) -> None:
        super().__init__(game_id)
        self.asked = asked
        self.gate = gate

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        self.asked.set()
        await self.gate.wait()
        return await super().decide(runner, moves)



@pytest.mark.parametrize("signed", [False, True], ids=["garbage", "signed-unknown-kind"])
def test_junk_from_a_seated_peer_costs_no_disk_and_the_table_goes_on_or_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: bool
) -> None:
    """One seat's laptop (an in-process bot here, taken over after the start) sends the host 120
    messages of 200 KB over its real, authenticated link. Random bytes: the host refuses each, its
    journal grows by nothing of it, its set of seen digests does not grow, and the game completes with
    identical records and no blame. Messages the seat signed (60 KB: a no-kind message over 64 KiB is
    refused, not blamed, since no blame could quote it), of a kind no honest peer sends: proof against
    that seat (P-1.3), which the host names; its journal keeps at most the one that proves it."""
    runners = recorded_runners(monkeypatch)
    asked = asyncio.Event()
    gate = asyncio.Event()

    refused: list[Refused] = []

    me = Identity.generate()

    async def attack() -> tuple[int, int, int, int]:
        (host,) = [r for r in runners if r.identity is me]
        hostile = next(r for r in runners if r is not host)
        assert host.mesh is not None and hostile.mesh is not None
        before = host.journal.path.stat().st_size
        seen = len(host._seen)
        deadline = asyncio.get_running_loop().time() + 90
        for i in range(120):
            if host.session is not None and host.session.blame is not None:
                break
            if not signed:  # bytes that are no message at all
                junk = os.urandom(200 * 1024)
            else:  # validly signed by the seat, of a kind no honest peer sends: refused before chaining
                junk = sign_message(hostile.identity, hostile.settings.table, 0, 10_000 + i, ZERO_DIGEST,
                                    "x.junk", {"pad": "z" * 60_000}).to_wire()  # fmt: skip
            try:
                hostile.mesh.send(host.identity.peer_id, junk)
            except MeshError:  # the hostile seat's game ended: it was named
                assert signed
                break
            while hostile.mesh.queued(host.identity.peer_id) > 20:  # within its own outbox cap (I6)
                assert asyncio.get_running_loop().time() < deadline, f"the host stopped acknowledging at {i}"
                if host.session is not None and host.session.blame is not None:
                    break
                await asyncio.sleep(0.01)
        while len(refused) < 120 and not (signed and host.session and host.session.blame):
            assert asyncio.get_running_loop().time() < deadline, f"{len(refused)} of 120 junk messages seen"
            await asyncio.sleep(0.05)
        return before, host.journal.path.stat().st_size, len(host._seen) - seen, hostile.me

    async def body() -> tuple[Outcome, tuple[int, int, int, int]]:
        hosting = tables.host_table(
            identity=me, data_dir=tmp_path, name="Host", game="sixth-sense",
            options={"beginner": False, "target": None, "late_trump": False}, seats=3, bots=2,
            interface=LOOPBACK, player=GatedBot("sixth-sense", asked, gate), advertise=False,
            on_event=lambda e: refused.append(e) if isinstance(e, Refused) else None,
        )  # fmt: skip
        game = asyncio.create_task(hosting)
        try:
            async with asyncio.timeout(60):
                await asyncio.wait({game, asyncio.create_task(asked.wait())}, return_when=asyncio.FIRST_COMPLETED)
            assert asked.is_set(), "the game ended before the host was asked to move"
            sizes = await attack()
        finally:
            gate.set()
        async with asyncio.timeout(GAME_LIMIT):
            return await game, sizes

    outcome, (before, after, seen_growth, hostile_seat) = asyncio.run(body())
    if signed:
        assert outcome.blame is not None and outcome.blame.rule == "P-1.3", outcome.blame
        assert outcome.blame.seat == hostile_seat
        # The proof (one 60 KB message, hex in the journal) and no more of the 7 MB sent.
        assert after - before < 1024 * 1024, f"the journal grew by {after - before} bytes"
        return
    assert after - before < 16 * 1024, f"the journal grew by {after - before} bytes under 24 MB of junk"
    assert seen_growth < 10, "refused junk must not be remembered"
    assert all(r.sender is not None for r in refused[:120])
    assert outcome.blame is None, outcome.blame
    assert outcome.record_path is not None
    records = [outcome.record_path, *sorted((tmp_path / "bots").glob("*/records/*.json"))]
    assert len(records) == 3 and len({p.read_bytes() for p in records}) == 1


def test_runner_dedup_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The digests kept to drop gossip copies are capped: the oldest go first."""
    monkeypatch.setattr(runner_module, "MAX_SEEN", 100)
    runner = object.__new__(TableRunner)
    runner._seen = {}
    for i in range(1000):
        runner._remember(i.to_bytes(32, "big"))
    assert len(runner._seen) == 100
    assert (999).to_bytes(32, "big") in runner._seen and (0).to_bytes(32, "big") not in runner._seen


# --- a stop is not final (I2; red team 8 #2 on real links) -----------------------------------------


def test_a_fault_to_one_seat_and_a_stop_to_another_end_both_convicting_the_cheater(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bot's laptop (taken over after the start) sends, at one instant, the host a signed message
    of a kind no honest peer sends (its own provable fault, P-1.3) and the other bot a bare `stop`.
    The other bot stops first; the host's blame then reaches it within its window (`listen_until`),
    and it turns its stop into the same conviction (`stopped -> ended`): both honest seats name the
    cheater, neither ends merely stopped."""
    runners = recorded_runners(monkeypatch)
    asked = asyncio.Event()
    gate = asyncio.Event()

    me = Identity.generate()

    async def attack() -> tuple[TableRunner, TableRunner]:
        (host,) = [r for r in runners if r.identity is me]
        hostile, bystander = [r for r in runners if r is not host]
        session = hostile.session
        assert session is not None and hostile.mesh is not None
        stop = session._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
        session.drain()  # the modified client sends it to one seat only, below
        junk = sign_message(hostile.identity, hostile.settings.table, session.round_index, session.my_seq,
                            session.my_prev, "x.junk", {"x": 1})  # fmt: skip
        hostile.mesh.send(bystander.identity.peer_id, stop.to_wire())
        hostile.mesh.send(host.identity.peer_id, junk.to_wire())
        return host, bystander

    async def body() -> tuple[Outcome, TableRunner]:
        hosting = tables.host_table(
            identity=me, data_dir=tmp_path, name="Host", game="sixth-sense",
            options={"beginner": False, "target": None, "late_trump": False}, seats=3, bots=2,
            interface=LOOPBACK, player=GatedBot("sixth-sense", asked, gate), advertise=False,
        )  # fmt: skip
        game = asyncio.create_task(hosting)
        try:
            async with asyncio.timeout(60):
                await asyncio.wait({game, asyncio.create_task(asked.wait())}, return_when=asyncio.FIRST_COMPLETED)
            assert asked.is_set(), "the game ended before the host was asked to move"
            _, bystander = await attack()
        finally:
            gate.set()
        async with asyncio.timeout(GAME_LIMIT):
            return await game, bystander

    outcome, bystander = asyncio.run(body())
    cheater = next(r.me for r in runners if r.identity is not me and r is not bystander)
    assert outcome.blame is not None and (outcome.blame.seat, outcome.blame.rule) == (cheater, "P-1.3"), outcome
    session = bystander.session
    assert session is not None and session.stopped is not None, "the other seat stopped first"
    assert session.blame is not None and session.blame.seat == cheater, (session.stage, session.stopped)
