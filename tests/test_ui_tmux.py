"""End to end in a real terminal: tmux runs `lanplay play` in an 80×24 window and a person's keys
play a whole game (Tab selects the next allowed choice, Enter confirms it), while capture-pane reads the screens.

`lanplay play` hosts the table on 127.0.0.1 and its bots are peers in the same process that speak the
real protocol (shuffle, commit–reveal, audit); the record lands in $LANPLAY_HOME/records. Each game
is kept short (6th Sense for beginners to a target of 1 point, Sixes with one chip) and bots answer
at once (LANPLAY_BOT_DELAY=0).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.record import replay_text

TMUX = shutil.which("tmux")
LANPLAY = Path(sys.executable).parent / "lanplay"
GAME_TIMEOUT = 60.0

pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the terminal end-to-end test needs it"),
    pytest.mark.skipif(not LANPLAY.exists(), reason=f"no lanplay command beside {sys.executable}"),
]


class Terminal:
    """One tmux server of its own (its own socket), with one 80×24 window."""

    def __init__(self, name: str, command: str, cwd: Path, env: dict[str, str]) -> None:
        assert TMUX is not None
        self.base = [TMUX, "-L", f"lanplay-test-{os.getpid()}-{name}"]
        self.env = env
        self.run("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-c", str(cwd), command)

    def run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], env=self.env, capture_output=True, text=True, timeout=10)
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], env=self.env, capture_output=True, timeout=10)


def play_whole_game(tmp_path: Path, name: str, args: list[str], seen: list[str]) -> tuple[str, str, Path]:
    """Press Tab and Enter until the game-over screen; then q. Returns (a screen during play that shows every
    word of `seen`, the game-over screen, the saved record)."""
    home = tmp_path / "home"
    home.mkdir()
    data = home / "data"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")},  # loopback only
        "HOME": str(home), "LANPLAY_HOME": str(data), "LANPLAY_BOT_DELAY": "0", "TERM": "xterm-256color",
        "LC_CTYPE": "C.UTF-8",
    }  # fmt: skip
    env.pop("TMUX", None)
    command = f"{LANPLAY} play --name Ann {' '.join(args)}; echo LANPLAY-EXIT=$?; sleep 60"
    terminal = Terminal(name, command, home, env)
    try:
        playing = ""
        deadline = time.monotonic() + GAME_TIMEOUT
        while True:
            assert time.monotonic() < deadline, f"no game-over screen within {GAME_TIMEOUT}s:\n{terminal.screen()}"
            screen = terminal.screen()
            assert "Traceback" not in screen, screen
            if not playing and all(word in screen for word in seen):
                playing = screen
            if "Final table" in screen or "Eindstand" in screen:
                break
            terminal.keys("Tab", "Enter")
            time.sleep(0.02)
        over = screen
        terminal.keys("q")
        while "LANPLAY-EXIT=" not in (after := terminal.screen()):
            assert time.monotonic() < deadline + 5, after
            time.sleep(0.05)
        assert "LANPLAY-EXIT=0" in after, after
    finally:
        terminal.close()
    records = list((data / "records").glob("*.json"))
    assert len(records) == 1, records
    assert not list(home.glob("lanplay-*.json"))  # nothing left in the current folder without --record
    return playing, over, records[0]


def test_take6_whole_game_in_a_terminal(tmp_path: Path) -> None:
    playing, over, record = play_whole_game(
        tmp_path, "take6", ["--game", "take6", "--bots", "3", "--lang", "en"],
        ["Row 4", "Your hand", "Scores", "Ann·bot3"],
    )
    assert playing, "no screen showed the rows, the hand and the scores together"
    assert "Game over" in over and "Final table" in over and "Record saved to" in over
    assert "Winner" in over
    assert replay_text(record.read_text()).complete


def test_sixth_sense_whole_game_in_a_terminal(tmp_path: Path) -> None:
    playing, over, record = play_whole_game(
        tmp_path,
        "sixth-sense",
        # S-8.1 scores are never negative, so with S-8.2 target 1 the first round nearly always ends it
        ["--game", "sixth-sense", "--bots", "2", "--option", "beginner=true", "--option", "target=1", "--lang", "en"],
        ["Trump:", "Trick", "Your hand", "Scores"],
    )
    assert playing
    assert "Game over" in over and "Record saved to" in over
    replay = replay_text(record.read_text())
    assert replay.complete and max(replay.game.totals(replay.final_state)) >= 1  # S-8.2


def test_sixes_whole_game_in_dutch_with_a_copy_of_the_record(tmp_path: Path) -> None:
    copy = tmp_path / "home" / "kopie.json"
    playing, over, record = play_whole_game(
        tmp_path,
        "sixes",
        ["--game", "sixes", "--bots", "3", "--option", "chips=1", "--lang", "nl", "--record", str(copy)],
        ["Oros", "Bastos", "Jouw hand", "Stand", "fiches"],
    )
    assert playing
    assert "Spel voorbij" in over and "Verslag bewaard in" in over and "kopie.json" in over
    assert replay_text(record.read_text()).complete
    assert copy.read_bytes() == record.read_bytes()


def test_a_trick_with_a_4_says_the_order_reversed_on_the_screen(tmp_path: Path) -> None:
    """S-6.2: play 6th Sense with Tab and Enter until a trick holds a counting 4; the screen (the trick as it is
    played, the last trick and the log) says so in words: "P4 reverses: lowest wins", or two 4s cancel."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")},
        "HOME": str(home), "LANPLAY_HOME": str(home / "data"), "LANPLAY_BOT_DELAY": "0",
        "LANPLAY_INTERFACE": "127.0.0.1", "TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8",
    }  # fmt: skip
    env.pop("TMUX", None)
    command = f"{LANPLAY} play --name Ann --game sixth-sense --bots 3 --lang en; echo LANPLAY-EXIT=$?; sleep 60"
    terminal = Terminal("reversal", command, home, env)
    told = re.compile(r"[RYGBP]4 reverses: lowest wins|[RYGBP]4, [RYGBP]4 cancel each other")
    try:
        deadline = time.monotonic() + GAME_TIMEOUT * 2
        while not told.search(screen := terminal.screen()):
            assert time.monotonic() < deadline, f"no trick with a 4 was explained:\n{screen}"
            assert "Traceback" not in screen and "Final table" not in screen, screen
            terminal.keys("Tab", "Enter")
            time.sleep(0.05)
        terminal.keys("q")
        while "Leave the game?" not in terminal.screen():
            assert time.monotonic() < deadline + 5
            time.sleep(0.05)
        terminal.keys("y")
        while "LANPLAY-EXIT=" not in (after := terminal.screen()):
            assert time.monotonic() < deadline + 10, after
            time.sleep(0.05)
        assert "LANPLAY-EXIT=0" in after, after
    finally:
        terminal.close()


def test_lanplay_join_by_address_opens_the_table_screen_and_q_leaves(tmp_path: Path) -> None:
    """`lanplay join HOST:PORT`, the line the host's screen tells friends to type, gives the same full-screen
    table as the lobby (the hand, the rows, the footer), not lines of Python values, and q, y leave it."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")},
        "LANPLAY_INTERFACE": "127.0.0.1", "LANPLAY_BOT_DELAY": "0", "TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8",
    }  # fmt: skip
    env.pop("TMUX", None)
    homes = [tmp_path / "host", tmp_path / "joiner"]
    for home in homes:
        home.mkdir()
    host_env = {**env, "HOME": str(homes[0]), "LANPLAY_HOME": str(homes[0] / "data")}
    host = subprocess.Popen(
        [str(LANPLAY), "host", "--game", "take6", "--seats", "2", "--headless", "--name", "Ann"],
        env=host_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    terminal = None
    try:
        assert host.stdout is not None
        address = ""
        while not address:
            line = host.stdout.readline()
            assert line, "lanplay host ended before printing its address"
            if line.startswith("join with: lanplay join "):
                address = line.split()[-1]
        joiner_env = {**env, "HOME": str(homes[1]), "LANPLAY_HOME": str(homes[1] / "data")}
        command = f"{LANPLAY} join {address} --name Bob --lang en; echo LANPLAY-EXIT=$?; sleep 60"
        terminal = Terminal("join", command, homes[1], joiner_env)
        deadline = time.monotonic() + GAME_TIMEOUT
        while "Your hand (10)" not in (screen := terminal.screen()):
            assert time.monotonic() < deadline, screen
            assert "Traceback" not in screen and "{'" not in screen, screen
            time.sleep(0.1)
        assert "Row 4" in screen and "Enter: confirm" in screen and "Bob" in screen
        terminal.keys("q")
        while "Leave the game?" not in terminal.screen():
            assert time.monotonic() < deadline, terminal.screen()
            time.sleep(0.05)
        terminal.keys("y")
        while "LANPLAY-EXIT=" not in (after := terminal.screen()):
            assert time.monotonic() < deadline, after
            time.sleep(0.05)
        assert "LANPLAY-EXIT=0" in after, after
    finally:
        if terminal is not None:
            terminal.close()
        host.kill()
        host.wait()
