"""Whole games between separate `lanplay bot` processes on 127.0.0.1: the joiners find the host's
table by mDNS (on loopback only), every seat plays over the encrypted mesh, and every process writes
the same record, byte for byte, which `lanplay replay --json` checks as a complete game.

Each process has its own LANPLAY_HOME (so its own identity and journal) under the test's tmp_path.
The joiners look for the advertised table id (`--table`, still found by mDNS), so tables of other
test runs on this machine cannot catch them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netutil import BotProcess, assert_complete_game, start_table

GAME_LIMIT = 120.0  # seconds for a whole game; they take 3–12 s here


@pytest.fixture
def processes() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        bot.kill()


CASES = [
    pytest.param("sixth-sense", 2, (), id="sixth-sense-2"),
    pytest.param("sixth-sense", 4, (), id="sixth-sense-4"),
    pytest.param("sixth-sense", 6, (), id="sixth-sense-6"),
    pytest.param("take6", 2, ("tactic=true",), id="take6-2-tactic"),
    pytest.param("take6", 4, ("tactic=true",), id="take6-4-tactic"),
    pytest.param("take6", 6, ("tactic=true",), id="take6-6-tactic"),
]


@pytest.mark.parametrize(("game", "seats", "options"), CASES)
def test_bots_find_the_table_and_play_a_whole_game(
    tmp_path: Path, processes: list[BotProcess], game: str, seats: int, options: tuple[str, ...]
) -> None:
    began = time.monotonic()
    table = start_table(tmp_path, game, seats, options=options, started=processes.append)
    assert len(table.bots) == seats
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * seats, table.describe()
    result = assert_complete_game(table.bots, game)
    assert len(result["rounds"]) >= 1
    # Every joiner found the table by mDNS, and the host's lobby seated all of them.
    for bot in table.bots[1:]:
        assert f"found table {table.table_id}" in bot.stderr(), bot.describe()
    host_log = table.host.stderr()
    assert host_log.count("took seat") == seats - 1, table.describe()
    for bot in table.bots:  # nobody exposed, no stop, every seat signed the complete record (P-5.8)
        assert "game over: winners" in bot.stdout(), bot.describe()
        assert "Traceback" not in bot.stderr(), bot.describe()
    assert time.monotonic() - began < GAME_LIMIT
