"""Seats taken away and junk from seated peers, on 127.0.0.1 (P-5.5, P-6.1, P-6.3, P-6.4, P-6.6).

A `lanplay bot` seat is taken away *during a deal* (its shuffle/lock/keys are owed or awaited):
stopped with SIGSTOP and cut off (its links aborted with ``ss -K``) for less than the table's
patience, it comes back and the game completes with nobody stopped and nobody exposed; killed with
SIGKILL and started again only after the patience ran out, the others have stopped the round naming
it, and all four seats, the one that came back too, sign one record, cut short, with nobody exposed.
A clock never convicts.

In-process: junk from a seated peer is refused at no cost in disk, and the table goes on; a seat that
forks a message to one seat and leaves at once is exposed by every honest seat (the leave stopped
the round first at one of them: a stop is never a verdict, and a proof still counts after it).
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
from netutil import (
    STOPPED_LINE,
    BotProcess,
    Table,
    assert_complete_game,
    assert_finished,
    assert_same_signed_record,
    replay_json,
    start_table,
    verify_record,
)
from test_net_faults import _ss_kill_port, _ss_kill_works, plan_of, seat_of

from lanplay.net.mesh import MeshError
from lanplay.table import tables
from lanplay.table.runner import BotPlayer, Outcome, TableRunner
from lanplay.table.trace import TRACE_ENV
from protocol.identity import Identity
from protocol.signed import ZERO_DIGEST, sign_message
from protocol.table import Exposed, Refused

LOOPBACK = "127.0.0.1"
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
    """The round whose deal `seat` has begun and not finished (it knows the round's dealer, and does
    not hold its hand yet), if any, from round 1 on (mid-game), from the bots' LANPLAY_TRACE lines."""
    lines = [line for line in _trace_lines(trace) if line.get("seat") == seat]
    begun = {line["round"] for line in lines if line.get("event") == "round"}
    dealt = {line["round"] for line in lines if line.get("event") == "dealt"}
    pending = [r for r in begun - dealt if isinstance(r, int) and r >= 1]
    return max(pending) if pending else None


def _table(tmp_path: Path, processes: list[BotProcess], patience: float) -> tuple[Table, Path]:
    trace = tmp_path / "trace.jsonl"
    table = start_table(
        tmp_path, "sixth-sense", 4, patience=patience, env_extra={TRACE_ENV: str(trace)}, started=processes.append
    )
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


def _no_tracebacks(table: Table) -> None:
    for bot in table.bots:
        assert "Traceback" not in bot.all_stderr(), bot.describe()


def test_a_bot_stopped_and_cut_off_during_the_deal_within_the_patience_comes_back_and_the_game_completes(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    """A closed lid in the middle of a deal, with every link of the table aborted under it: the others
    only wait (P-5.5), and once it is back the deal goes on; nobody stopped, nobody exposed."""
    if not _ss_kill_works():
        pytest.skip("`ss -K` cannot destroy sockets here (no ss, or no CONFIG_INET_DIAG_DESTROY)")
    table, trace = _table(tmp_path, processes, patience=60.0)
    victim = table.bots[2]
    _catch_in_a_deal(table, trace, victim, signal.SIGSTOP)
    for seat in plan_of(table.host)["seats"]:  # cut off: every link of the table aborted under it
        _ss_kill_port(seat["mesh"][1])
    time.sleep(3.0)
    assert all(bot.running() for bot in table.bots), table.describe()  # nobody gave up meanwhile
    victim.kill(signal.SIGCONT)  # the lid opens
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    assert_complete_game(table.bots, "sixth-sense")
    _no_tracebacks(table)


def test_a_bot_killed_during_the_deal_and_back_after_the_patience_is_stopped_for_and_nobody_is_convicted(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    """Killed in a deal, the seat owes its deal step; past the patience the others stop the round naming
    it (P-5.5). Started again with the same command while its secrets are waited for, it resumes from its
    journal (P-5.6), publishes its secrets like every seat, and all four sign one record: the rounds
    before stand, the stopped one is void, the game is cut short, and nobody is exposed (P-6.1)."""
    table, trace = _table(tmp_path, processes, patience=8.0)
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
    seat = seat_of(victim)
    others = [bot for bot in table.bots if bot is not victim]
    deadline = time.monotonic() + 60
    while not any(STOPPED_LINE.search(bot.stdout()) for bot in others):  # the patience ran out
        assert time.monotonic() < deadline and all(bot.running() for bot in others), table.describe()
        time.sleep(0.05)
    victim.start()  # the very same command and LANPLAY_HOME
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * 4, table.describe()
    assert "resumed the unfinished game" in victim.stdout(), victim.describe()
    for bot in table.bots:
        assert_finished(bot, "cut short")
        stops = STOPPED_LINE.findall(bot.stdout())
        assert stops and all(waited == str(seat) for _by, waited, _owed, _why in stops), bot.describe()
    path = assert_same_signed_record(table.bots)
    record = json.loads(path.read_text())
    assert len(record["end"]["signatures"]) == 4 and record["exposed"] == []
    assert len(record["rounds"]) >= 1 and replay_json(path)["complete"] is False  # the rounds before stand
    _no_tracebacks(table)


# --- junk from a seated peer costs no disk, and the table goes on (P-6.3, P-6.6) -------------------------


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


async def _hosted(tmp_path: Path, me: Identity, attack: Any, **kwargs: Any) -> Outcome:
    """A 6th Sense table for 3: the host (gated at its first decision) and two in-process bots; `attack`
    runs while the host holds its decision, then the game goes on to its end."""
    asked, gate = asyncio.Event(), asyncio.Event()
    hosting = tables.host_table(
        identity=me, data_dir=tmp_path, name="Host", game="sixth-sense",
        options={"beginner": False, "target": None, "late_trump": False}, seats=3, bots=2,
        interface=LOOPBACK, player=GatedBot("sixth-sense", asked, gate), advertise=False, **kwargs,
    )  # fmt: skip
    game = asyncio.create_task(hosting)
    try:
        async with asyncio.timeout(60):
            await asyncio.wait({game, asyncio.create_task(asked.wait())}, return_when=asyncio.FIRST_COMPLETED)
        assert asked.is_set(), "the game ended before the host was asked to move"
        await attack()
    finally:
        gate.set()
    async with asyncio.timeout(GAME_LIMIT):
        return await game


@pytest.mark.parametrize("signed", [False, True], ids=["garbage", "signed-unknown-kind"])
def test_junk_from_a_seated_peer_is_refused_costs_no_disk_and_the_table_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signed: bool
) -> None:
    """One seat's laptop (an in-process bot here, taken over after the start) sends the host 120
    messages of 200 KB over its real, authenticated link: random bytes, or messages that seat signed of
    a kind no honest peer sends. The host refuses each (a `Refused` naming the link it came on, no
    proof: nothing in them is a step of the table), its journal grows by nothing of them, and the game
    completes with identical records and nobody exposed."""
    runners = recorded_runners(monkeypatch)
    refused: list[Refused] = []
    me = Identity.generate()
    sizes: dict[str, int] = {}

    async def attack() -> None:
        (host,) = [r for r in runners if r.identity is me]
        hostile = next(r for r in runners if r is not host)
        assert host.mesh is not None and hostile.mesh is not None
        sizes["before"] = host.journal.path.stat().st_size
        sizes["hostile"] = hostile.me
        deadline = asyncio.get_running_loop().time() + 90
        for i in range(120):
            if not signed:  # bytes that are no message at all
                junk = os.urandom(200 * 1024)
            else:  # validly signed by the seat, of a kind no honest peer sends
                junk = sign_message(hostile.identity, hostile.settings.table, 0, 10_000 + i, ZERO_DIGEST,
                                    "x.junk", {"pad": "z" * 200_000}).to_wire()  # fmt: skip
            hostile.mesh.send(host.identity.peer_id, junk)
            while hostile.mesh.queued(host.identity.peer_id) > 20:  # within its own outbox cap (I6)
                assert asyncio.get_running_loop().time() < deadline, f"the host stopped acknowledging at {i}"
                await asyncio.sleep(0.01)
        while len([r for r in refused if r.sender == hostile.me]) < 120:
            assert asyncio.get_running_loop().time() < deadline, f"{len(refused)} of 120 junk messages refused"
            await asyncio.sleep(0.05)
        sizes["after"] = host.journal.path.stat().st_size

    outcome = asyncio.run(
        _hosted(tmp_path, me, attack, on_event=lambda e: refused.append(e) if isinstance(e, Refused) else None)
    )
    growth = sizes["after"] - sizes["before"]
    assert growth < 16 * 1024, f"the journal grew by {growth} bytes under 24 MB of junk"
    assert all(r.sender == sizes["hostile"] for r in refused), refused[:3]
    assert outcome.finished and outcome.complete and not outcome.exposed and not outcome.stops, outcome
    assert outcome.record_path is not None
    records = [outcome.record_path, *sorted((tmp_path / "bots").glob("*/records/*.json"))]
    assert len(records) == 3 and len({p.read_bytes() for p in records}) == 1


# --- a proof still counts after a stop (P-5.4, P-6.2) -----------------------------------------------------


def test_a_fork_to_one_seat_and_a_leave_at_once_expose_the_forker_at_every_honest_seat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bot's laptop (taken over after the start) signs a second version of one of its public
    messages for the host alone, and at once leaves the table (a signed leave, which stops the round at
    every seat). The other bot may see the leave, and stop, before it holds any proof; the host's fork
    proof reaches it by gossip, and it exposes the forker too, by the proof `verify` accepts (P-1.3):
    both honest seats finish with one signed record that exposes the forker, and nobody else."""
    runners = recorded_runners(monkeypatch)
    me = Identity.generate()
    exposed: list[Exposed] = []
    roles: dict[str, TableRunner] = {}

    async def attack() -> None:
        (host,) = [r for r in runners if r.identity is me]
        hostile, bystander = [r for r in runners if r is not host]
        roles.update(hostile=hostile, bystander=bystander)
        assert host.session is not None and host.mesh is not None and hostile.mesh is not None
        original = host.session.ledger.chains[hostile.me][-1]  # one the host holds already
        fork = sign_message(hostile.identity, original.table, original.round, original.seq, original.prev,
                            original.kind, {**original.body, "fork": 1})  # fmt: skip
        try:
            hostile.mesh.send(host.identity.peer_id, fork.to_wire())
        except MeshError as exc:  # pragma: no cover (the link is up: the host is waiting for a move)
            raise AssertionError(exc) from exc
        await hostile.leave()

    def on_event(event: Any) -> None:
        if isinstance(event, Exposed):
            exposed.append(event)

    outcome = asyncio.run(_hosted(tmp_path, me, attack, reconnect_timeout=5.0, on_event=on_event))
    hostile, bystander = roles["hostile"], roles["bystander"]
    assert [(e.seat, e.rule) for e in exposed] == [(hostile.me, "P-1.3")], exposed
    assert outcome.finished and not outcome.complete and len(outcome.exposed) == 1, outcome
    assert any(stop.owed == "left" and stop.by == hostile.me for stop in outcome.stops), outcome.stops
    session = bystander.session
    assert session is not None and session.finished and session.exposed == {hostile.me}
    assert outcome.record_path is not None
    record = json.loads(outcome.record_path.read_text())
    assert record["end"] == session.record_json()["end"]  # one digest, signed by both honest seats
    assert len(record["end"]["signatures"]) == 2
    assert [e["seat"] for e in record["exposed"]] == [hostile.me]
    code, text = verify_record(outcome.record_path)
    assert code == 0 and "proof 1: holds" in text and "P-1.3" in text, text
