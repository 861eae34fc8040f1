"""Nothing lost: `lanplay play` in a real terminal (tmux), killed mid-round and started again.

1. SIGKILL the running `lanplay play` in the middle of round 1; the same command started again shows
   the same round and the same hand, with "Resumed where this laptop stopped" (P-5.4: every seat, the
   bot peers included, replays its journal).
2. SIGTERM the resumed one: the screen closes as a normal exit does (the shell prints again), the
   command says the game is kept, and the journal is not marked done.
3. The third start resumes again and the game completes: one complete record in the data directory,
   and the bots' keys and journals are gone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_ui_tmux import LANPLAY, TMUX, Terminal

from engine.record import replay_text

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the terminal end-to-end test needs it"),
    pytest.mark.skipif(not LANPLAY.exists(), reason="no lanplay command beside the test interpreter"),
]
TIMEOUT = 60.0
HEADER = re.compile(r"round (\d+) · turn (\d+) of")


def hand(screen: str) -> str:
    lines = screen.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("Your hand"):
            return lines[index + 1].strip()
    raise AssertionError(f"no hand on the screen:\n{screen}")


def wait_screen(terminal: Terminal, predicate: object, what: str, press: bool = False) -> str:
    deadline = time.monotonic() + TIMEOUT
    while True:
        screen = terminal.screen()
        assert "Traceback" not in screen, screen
        if callable(predicate) and predicate(screen):
            return screen
        assert time.monotonic() < deadline, f"no {what} within {TIMEOUT}s:\n{screen}"
        if press:
            terminal.keys("Tab", "Enter")
        time.sleep(0.1)


def lanplay_pid(terminal: Terminal) -> int:
    shell = int(terminal.run("display", "-p", "-t", "t", "#{pane_pid}").strip())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True, text=True).stdout.split()
        if found:
            return int(found[0])
        time.sleep(0.1)
    raise AssertionError("no lanplay process under the shell")


def journal_records(data: Path) -> list[dict[str, object]]:
    paths = list((data / "journals").glob("*.jsonl"))
    assert len(paths) == 1, paths
    return [json.loads(line)["record"] for line in paths[0].read_bytes().splitlines()]


def test_kill_mid_round_then_resume_then_sigterm_then_finish(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data = home / "data"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")},
        "HOME": str(home), "LANPLAY_HOME": str(data), "LANPLAY_BOT_DELAY": "0", "LANPLAY_INTERFACE": "127.0.0.1",
        "TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8",
    }  # fmt: skip
    env.pop("TMUX", None)
    play = f"{LANPLAY} play --name Ann --game take6 --bots 3 --lang en"
    command = f"{play}; echo RUN1=$?; {play}; echo RUN2=$?; {play}; echo RUN3=$?; sleep 60"
    terminal = Terminal("resume", command, home, env)
    try:
        # Play two turns of round 1 (Tab selects a card, Enter plays it), then kill -9.
        wait_screen(terminal, lambda s: "Your hand (10)" in s and "Enter: confirm" in s, "first turn")
        terminal.keys("Tab", "Enter")
        before = wait_screen(terminal, lambda s: "Your hand (9)" in s and "Enter: confirm" in s, "the second decision")
        round_before = HEADER.search(before)
        assert round_before is not None and round_before.group(1) == "1", before
        os.kill(lanplay_pid(terminal), signal.SIGKILL)
        records = journal_records(data)
        assert records[-1].get("t") != "done"

        # The same command again: same round, same turn, same hand.
        after = wait_screen(terminal, lambda s: "Resumed where this laptop" in s and "Enter: confirm" in s,
                            "the resumed table")  # fmt: skip
        resumed = HEADER.search(after)
        assert resumed is not None and resumed.groups() == round_before.groups(), (before, after)
        assert hand(after) == hand(before)

        # SIGTERM: the screen closes cleanly, the game is kept.
        os.kill(lanplay_pid(terminal), signal.SIGTERM)
        kept = wait_screen(terminal, lambda s: "RUN2=0" in s, "the end of run 2")
        assert "The game is kept" in kept, kept
        assert journal_records(data)[-1].get("t") != "done"

        # Third start: resumes, plays to the end.
        over = wait_screen(terminal, lambda s: "Final table" in s, "the game-over screen", press=True)
        assert "Traceback" not in over
        terminal.keys("q")
        end = wait_screen(terminal, lambda s: "RUN3=0" in s, "the end of run 3")
        assert "Record saved to" in end, end
    finally:
        terminal.close()
    records = list((data / "records").glob("*.json"))
    assert len(records) == 1, records
    result = replay_text(records[0].read_text())
    assert result.complete, "the resumed game was played to its end"
    # where the bots ran (the seat order is drawn, P-3.2)
    assert sorted(result.players) == ["Ann", "Ann's bot 1", "Ann's bot 2", "Ann's bot 3"]
    assert journal_records(data)[-1].get("t") == "done"
    assert not list((data / "bots").iterdir()), "the bots' keys and journals go with the finished game"


def test_leaving_on_purpose_saves_the_finished_rounds_and_says_where(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data = home / "data"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")},
        "HOME": str(home), "LANPLAY_HOME": str(data), "LANPLAY_BOT_DELAY": "0", "LANPLAY_INTERFACE": "127.0.0.1",
        "TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8",
    }  # fmt: skip
    env.pop("TMUX", None)
    play = f"{LANPLAY} play --name Ann --game take6 --bots 2 --lang en"
    command = f"{play}; echo RUN1=$?; {play}; echo RUN2=$?; sleep 60"
    terminal = Terminal("leave", command, home, env)
    try:
        # Leave in round 1 before it ends: nothing finished, and it says so.
        wait_screen(terminal, lambda s: "Your hand (10)" in s and "your turn" in s, "the first decision")
        terminal.keys("q")
        wait_screen(terminal, lambda s: "Leave the game?" in s, "the leave dialog")
        terminal.keys("y")
        first = wait_screen(terminal, lambda s: "RUN1=0" in s, "the end of run 1")
        assert "No round was finished, so there is no record to keep." in first, first
        # A new game (the one left on purpose is not resumed): play round 1 to its end, then leave.
        wait_screen(terminal, lambda s: "press Enter for the next round" in s or "6 nimmt! · round 2" in s,
                    "the end of round 1", press=True)  # fmt: skip
        assert "Resumed" not in terminal.screen()
        terminal.keys("q")
        wait_screen(terminal, lambda s: "Leave the game?" in s, "the leave dialog")
        terminal.keys("y")
        second = wait_screen(terminal, lambda s: "RUN2=0" in s, "the end of run 2")
        saved = re.search(r"Record saved to (\S+)", " ".join(second.split()))
        assert saved, second
    finally:
        terminal.close()
    records = list((data / "records").glob("*.json"))
    assert len(records) == 1, records
    result = replay_text(records[0].read_text())
    # The finished round is kept (round 2 may have begun: a record holds confirmed rounds only).
    assert len(result.rounds) == 1 and not result.complete
