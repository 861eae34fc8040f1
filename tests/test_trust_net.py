"""Finding 9 of issue 9 as real processes on 127.0.0.1 (I4: every table ends, and a seat that comes
back is not blamed for the time it was away).

A `lanplay bot` seat is taken away *during a deal* (its shuffle/lock/keys are owed or awaited) for
longer than the step limit but well under the reconnect limit — stopped with SIGSTOP and cut off (its
links aborted with ``ss -K``), or killed with SIGKILL and started again with the same command — and
then comes back. The game must complete with byte-identical records at every seat and no blame
anywhere (P-5.3 names nobody: the seat was within the reconnect limit, and the others had done their
steps).
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netutil import BotProcess, Table, assert_complete_game, start_table
from test_net_faults import _ss_kill_port, _ss_kill_works, plan_of, seat_of

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
