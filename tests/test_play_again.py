"""Play again (issue 30): a table of `lanplay bot` processes on 127.0.0.1 finishes its game and plays
again with the same players and options: a new table (its own seat draw and plan) advertised for the
finished one, found by mDNS, hosted by the laptop of the lowest seat that said yes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from netutil import RECORD_LINE, BotProcess, start_table

# Two games of Sixes with one chip each: a game ends at the end of the round in which a player has none left
# mostly the first. (A 6th Sense target score may take hundreds of rounds: a miss scores below
# zero, S-7.3.)
GAME_LIMIT = 120.0
AGAIN_LINE = re.compile(r"^playing again \(1 of 1\) after table ([0-9a-f]+)$", re.M)


@pytest.fixture
def processes() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        bot.kill()


def test_a_table_of_bot_processes_finishes_and_plays_again_with_the_same_players(
    tmp_path: Path, processes: list[BotProcess]
) -> None:
    table = start_table(
        tmp_path, "sixes", 3, options=("chips=1",), extra=("--again", "1"), started=processes.append
    )
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0, 0, 0], table.describe()
    firsts, seconds = set(), set()
    for bot in table.bots:
        out = bot.stdout()
        again = AGAIN_LINE.search(out)
        assert again is not None, bot.describe()
        records = [Path(p) for p in RECORD_LINE.findall(out)]
        assert len(records) == 2, bot.describe()  # one record per game
        first, second = (json.loads(p.read_text()) for p in records)
        assert out.count("game over: winners") == 2, bot.describe()
        firsts.add(json.dumps(first, sort_keys=True))
        seconds.add(json.dumps(second, sort_keys=True))
        assert again.group(1) == first["table"]["id"], bot.describe()
        assert "Traceback" not in bot.stderr(), bot.describe()
    # Every seat wrote the same record of each game; the second game is another table of the same players.
    assert len(firsts) == 1 and len(seconds) == 1
    first, second = json.loads(firsts.pop()), json.loads(seconds.pop())
    assert first["table"]["id"] != second["table"]["id"]
    assert first["game"] == second["game"] and first["options"] == second["options"]
    assert first["complete"] and second["complete"]
    assert sorted(first["players"]) == sorted(second["players"])
