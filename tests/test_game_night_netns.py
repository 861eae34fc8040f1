"""A game night on laptops made of network namespaces (tests/nsutil.py: everything inside namespaces
made here, deleted afterwards; nothing reaches the machine's real network).

- `lanplay host` prints the exact join command on its first lines; run as printed from a laptop whose
  network drops multicast (no mDNS reaches it), it joins and plays a whole game.
- Two 6th Sense tables filled by `lanplay bot --game sixth-sense` alone from 6 joiners: a table that
  refuses as full sends its joiner on to the next one; both tables start and finish.
- The lobby in a real terminal (tmux) in a namespace, first start: it asks for the network and lists the
  namespace's address by interface name; chosen, the table created there is seen by a lobby in a second
  namespace, and the person there joins it and plays a hand.

Skipped, with the reason, where network namespaces cannot be made (not root, no `ip`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netutil import RECORD_LINE, lanplay_command, replay_json
from nsutil import Lan, lan_or_skip, ns_env

GAME_LIMIT = 150.0
JOIN_LINE = re.compile(r"^join with: (lanplay join (\d+\.\d+\.\d+\.\d+):(\d+))$", re.M)
FINGERPRINT_LINE = re.compile(r"^table fingerprint: (\S+)$", re.M)


class Proc:
    """One command in a namespace, its output in files; killed (its process group) at the end."""

    def __init__(self, lan: Lan, peer: int, home: Path, args: list[str], shell: str | None = None) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.name = home.name
        self.out, self.err = home.parent / f"{home.name}.out", home.parent / f"{home.name}.err"
        command = [*lan.exec(peer), *ns_env(str(home))]
        if args[:1] == ["bot"] and "--kind" not in args:
            args = [*args, "--kind", "heuristic"]  # the table and the network are tested, not the bot's play
        command += ["sh", "-c", shell] if shell is not None else [*lanplay_command(), *args]
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=home, start_new_session=True
            )

    def stdout(self) -> str:
        return self.out.read_text("utf-8", "replace")

    def describe(self) -> str:
        return f"--- {self.name} exit {self.proc.poll()}\n{self.stdout()[-2000:]}\n{self.err.read_text()[-3000:]}"

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = pattern.search(self.stdout())
            if found:
                return found
            assert self.proc.poll() is None and time.monotonic() < deadline, self.describe()
            time.sleep(0.05)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER (ns_env): every thread's stack to stderr
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(2)
            raise AssertionError(f"{self.name} still running after {timeout} s\n{self.describe()}") from None

    def kill(self) -> None:
        """SIGKILL this command's own process group (started here, by pid)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill()


def record(proc: Proc) -> Path:
    found = RECORD_LINE.search(proc.stdout())
    assert found, proc.describe()
    return Path(found.group(1))  # absolute: LANPLAY_HOME is


def browse_sees_nothing(lan: Lan, peer: int, home: Path, seconds: float) -> bool:
    """A TableBrowser in that namespace for `seconds`: True if it heard no table at all."""
    script = (
        "import asyncio,sys\n"
        "from lanplay.net.discovery import TableBrowser\n"
        "async def main():\n"
        f"    async with TableBrowser(interface={lan.address(peer)!r}) as b:\n"
        f"        await asyncio.sleep({seconds})\n"
        "        print(len(b.tables))\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [*lan.exec(peer), *ns_env(str(home)), sys.executable, "-c", script],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() == "0"


def test_the_printed_join_command_plays_a_whole_game_without_multicast(tmp_path: Path, procs: list[Proc]) -> None:
    lan = lan_or_skip("mc", "10.79.0", 3, no_multicast=(2,))
    try:
        host = Proc(lan, 1, tmp_path / "host", ["host", "--game", "sixes", "--seats", "3", "--bots", "1", "--headless",
                                                 "--interface", lan.address(1), "--patience", "30"])  # fmt: skip
        procs.append(host)
        joined = host.wait_for(JOIN_LINE, 30)
        fingerprint = host.wait_for(FINGERPRINT_LINE, 5).group(1)
        # The first lines: what to type, then the fingerprint to check.
        assert host.stdout().splitlines()[1:3] == [f"join with: {joined.group(1)}", f"table fingerprint: {fingerprint}"]
        assert joined.group(2) == lan.address(1)
        # Peer 3 (on the same bridge) hears the table; peer 2 (behind a router: no multicast) does not.
        assert not browse_sees_nothing(lan, 3, tmp_path / "probe3", 4.0), "mDNS should work on an open port"
        assert browse_sees_nothing(lan, 2, tmp_path / "probe2", 4.0), "multicast should be blocked for peer 2"
        # The command exactly as printed, with no network chosen: it plays on the way to the host.
        command = f"{' '.join(lanplay_command())} {joined.group(1).removeprefix('lanplay ')}"
        guest = Proc(lan, 2, tmp_path / "guest", [], shell=f"yes 1 | {command}")
        procs.append(guest)
        assert guest.wait(GAME_LIMIT) == 0, guest.describe()
        assert host.wait(30) == 0, host.describe()
        assert f"Host bot ({fingerprint})" in guest.stdout(), guest.describe()  # the seat list shows it to check
        assert "Host bot's bot 1 runs on Host bot's laptop, which can see its cards." in guest.stdout()
        records = [record(host), record(guest)]
        assert records[0].read_bytes() == records[1].read_bytes()
        result = replay_json(records[0])
        assert result["complete"] is True and result["game"] == "sixes"
    finally:
        lan.close()


def test_two_tables_of_6th_sense_fill_from_six_joiners_by_game_alone(tmp_path: Path, procs: list[Proc]) -> None:
    # One namespace: its own loopback, so no other table on this machine can take these joiners.
    lan = lan_or_skip("tt", "10.80.0", 1)
    try:
        common = ["--game", "sixth-sense", "--interface", "127.0.0.1", "--option", "target=1", "-v"]
        hosts = [Proc(lan, 1, tmp_path / f"host{i}", ["bot", "--host", "--seats", "4", *common]) for i in (1, 2)]
        procs.extend(hosts)
        time.sleep(1.0)
        joiners = [Proc(lan, 1, tmp_path / f"joiner{i}", ["bot", *common]) for i in range(1, 7)]
        procs.extend(joiners)
        codes = [p.wait(GAME_LIMIT) for p in (*hosts, *joiners)]
        assert codes == [0] * 8, "\n".join(p.describe() for p in (*hosts, *joiners))
        tables: dict[str, list[Proc]] = {}
        for proc in (*hosts, *joiners):
            tables.setdefault(record(proc).name, []).append(proc)
        assert sorted(len(seated) for seated in tables.values()) == [4, 4], tables
        for seated in tables.values():
            contents = {record(p).read_bytes() for p in seated}
            assert len(contents) == 1
            assert replay_json(record(seated[0]))["complete"] is True
    finally:
        lan.close()


# --- the lobby in a real terminal -------------------------------------------------------------------

TMUX = shutil.which("tmux")
ROUND = re.compile(r"6 nimmt! · round (\d+)")
LANPLAY = Path(sys.executable).parent / "lanplay"


class NsTerminal:
    """tmux (its own server) running `lanplay lobby` inside a namespace, 80×24."""

    def __init__(
        self, name: str, lan: Lan, peer: int, home: Path, who: str, command: tuple[str, ...] = ("lobby",)
    ) -> None:
        assert TMUX is not None
        home.mkdir(parents=True)
        self.base = [TMUX, "-L", f"lanplay-gn-{name}-{lan.prefix}"]
        inner = [*lan.exec(peer), *ns_env(str(home), {"TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8"}),
                 str(LANPLAY), *command, "--name", who, "--lang", "en"]  # fmt: skip
        command = " ".join(inner) + "; echo LOBBY-EXIT=$?; sleep 60"
        self.run("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-c", str(home), command)
        self.home = home

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def wait(self, check: object, what: str, timeout: float = 40.0, press: str | None = None) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            assert "Traceback" not in screen, screen
            if callable(check) and check(screen):
                return screen
            assert time.monotonic() < deadline, f"no {what} within {timeout}s:\n{screen}"
            if press:
                self.keys(press)
            time.sleep(0.15)

    def kill_lanplay(self) -> None:
        """SIGKILL the lanplay process in the pane (kill -9: no leave, no goodbye), its journal left as it is."""
        shell = self.run("list-panes", "-t", "t", "-F", "#{pane_pid}").split()[0]
        subprocess.run(["pkill", "-KILL", "-P", shell], capture_output=True, timeout=10)

    def start_again(self, lan: Lan, peer: int, who: str, command: tuple[str, ...] = ("lobby",)) -> None:
        """The same laptop (its home: key, journals, network) starts lanplay again in the same terminal."""
        inner = [*lan.exec(peer), *ns_env(str(self.home), {"TERM": "xterm-256color", "LC_CTYPE": "C.UTF-8"}),
                 str(LANPLAY), *command, "--name", who, "--lang", "en"]  # fmt: skip
        self.run("respawn-pane", "-k", "-t", "t", " ".join(inner) + "; echo LOBBY-EXIT=$?; sleep 60")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.skipif(not LANPLAY.exists(), reason="no lanplay command beside the test interpreter")
def test_the_lobby_asks_for_the_network_and_two_namespaces_play_a_hand(tmp_path: Path) -> None:
    lan = lan_or_skip("lb", "10.78.0", 2)
    ann = bob = None
    try:
        ann = NsTerminal("ann", lan, 1, tmp_path / "ann", "Ann")
        asked = ann.wait(lambda s: "Which network do you play on?" in s, "the network chooser")
        assert "eth0 10.78.0.1" in asked and "this laptop only" in asked, asked
        ann.keys("Enter")  # the first row: eth0
        ann.wait(lambda s: "tables on eth0 10.78.0.1" in s and "remembered" in s, "the lobby on eth0")
        saved = json.loads((tmp_path / "ann" / "data" / "network.json").read_text())
        assert saved == {"interface": "eth0", "address": "10.78.0.1"}
        # A 6 nimmt! table for two: c, game → 6 nimmt!, seats down to 2, Enter.
        ann.keys("c")
        ann.wait(lambda s: "◂ 6th Sense ▸" in s, "the form")
        ann.keys("Right", "Down", "Left", "Left", "Left", "Left")
        ann.keys("Enter")
        ann.wait(lambda s: "Friends join with: lanplay" in " ".join(s.split()), "the join command on the table screen")

        bob = NsTerminal("bob", lan, 2, tmp_path / "bob", "Bob")
        bob.wait(lambda s: "eth0 10.78.0.2" in s, "the chooser")
        bob.keys("Enter")
        listed = bob.wait(lambda s: "Ann" in s and "1/2" in s, "Ann's table in Bob's lobby")
        assert "Hosted by Ann at 10.78.0.1:" in " ".join(listed.split()), listed
        bob.keys("Enter")
        # Both play (Tab selects a card or row, Enter plays it) until each sees round 1 over: a whole hand.
        deadline = time.monotonic() + GAME_LIMIT
        done = [False, False]
        while not all(done):
            for index, terminal in enumerate((ann, bob)):
                screen = terminal.screen()
                assert "Traceback" not in screen, screen
                shown = ROUND.search(screen)
                if "press Enter for the next round" in screen or (shown is not None and int(shown.group(1)) >= 2):
                    done[index] = True  # round 1 is over here (a key press may already have moved past its end)
                elif not done[index]:
                    terminal.keys("Tab", "Enter")
            assert time.monotonic() < deadline, ann.screen() + bob.screen()
            time.sleep(0.2)
    finally:
        for terminal in (ann, bob):
            if terminal is not None:
                terminal.close()
        lan.close()


def test_ctrl_c_stops_lanplay_host_at_the_first_press(tmp_path: Path, procs: list[Proc]) -> None:
    lan = lan_or_skip("cc", "10.81.0", 1)  # its own loopback: no table of this machine's sees this one
    try:
        host = Proc(lan, 1, tmp_path / "host", ["host", "--game", "sixes", "--seats", "3", "--interface", "127.0.0.1"])
        procs.append(host)
        host.wait_for(JOIN_LINE, 30)
        host.proc.send_signal(signal.SIGINT)  # once
        assert host.wait(10) == 130, host.describe()  # a hang is for ever; a loaded machine may take seconds
        err = host.err.read_text()
        assert "Traceback" not in err and "stopped" in err, err
    finally:
        lan.close()


def test_any_seat_may_bring_a_bot_and_every_seat_is_told_where_it_runs(tmp_path: Path, procs: list[Proc]) -> None:
    lan = lan_or_skip("bb", "10.82.0", 1)  # its own loopback
    try:
        host = Proc(lan, 1, tmp_path / "host", ["host", "--game", "sixes", "--seats", "4", "--headless",
                                                 "--interface", "127.0.0.1"])  # fmt: skip
        procs.append(host)
        address = host.wait_for(JOIN_LINE, 30).group(1).removeprefix("lanplay join ")
        lanplay = " ".join(lanplay_command())
        guest = Proc(lan, 1, tmp_path / "guest", [], shell=f"yes 1 | {lanplay} join {address} --bots 1 --name Cas")
        spare = Proc(lan, 1, tmp_path / "spare", ["bot", "--game", "sixes", "--join", address, "--name", "Spare"])
        procs.extend([guest, spare])
        assert [p.wait(GAME_LIMIT) for p in (host, guest, spare)] == [0, 0, 0], host.describe() + guest.describe()
        for seat in (host, guest, spare):
            out = seat.stdout()
            assert "Cas's bot 1 runs on Cas's laptop, which can see its cards." in out, seat.describe()
            assert "Spare runs on a laptop of its own: no seat here can see its cards." in out, seat.describe()
        result = json.loads(record(host).read_text())
        assert sorted(result["players"]) == sorted(["Host bot", "Cas", "Cas's bot 1", "Spare"])
        assert record(host).read_bytes() == record(guest).read_bytes() == record(spare).read_bytes()
    finally:
        lan.close()


def test_four_laptops_where_one_is_killed_go_on_with_a_bot_and_finish_alike(tmp_path: Path, procs: list[Proc]) -> None:
    """Issue 30, P-5.7: four laptops (a namespace each) play 6 nimmt! as `lanplay bot` processes; one is
    killed with SIGKILL mid-game and never comes back. The other three wait the table's patience, stop for
    it (nobody convicted), go on at a new table with a bot in its seat run by the lowest seat left, and
    finish the game: each exits 0 with the same signed record, which says whose laptop runs the bot."""
    lan = lan_or_skip("kb", "10.83.0", 4)
    try:
        common = ["--game", "take6", "--patience", "3", "-v"]
        host = Proc(lan, 1, tmp_path / "l1", ["bot", *common, "--host", "--seats", "4", "--interface",
                                                lan.address(1)])  # fmt: skip
        procs.append(host)
        deadline = time.monotonic() + 30
        while not (found := re.search(r"table ([0-9a-f]+): lobby on", host.err.read_text())):
            assert time.monotonic() < deadline and host.proc.poll() is None, host.describe()
            time.sleep(0.05)
        table = ["--table", found.group(1)]
        joiners = [
            Proc(lan, peer, tmp_path / f"l{peer}", ["bot", *common, *table, "--interface", lan.address(peer)])
            for peer in (2, 3, 4)
        ]
        procs.extend(joiners)
        victim = joiners[1]
        deadline = time.monotonic() + 60
        while "round 1 audited and confirmed" not in victim.stdout():
            assert time.monotonic() < deadline and victim.proc.poll() is None, victim.describe()
            time.sleep(0.05)
        victim.kill()
        survivors = [host, joiners[0], joiners[2]]
        assert [p.wait(GAME_LIMIT) for p in survivors] == [0, 0, 0], "".join(p.describe() for p in survivors)
        records = [json.loads(record(p).read_text()) for p in survivors]
        assert all(r["end"] == records[0]["end"] and r["rounds"] == records[0]["rounds"] for r in records)
        final = records[0]
        assert final["complete"] is True and final["exposed"] == [] and final["table"]["continues"]["rounds"] >= 1
        assert any(bot["host"] is not None for bot in final["bots"]), final["bots"]  # the new bot, and whose
        for proc in survivors:
            assert "EXPOSED" not in proc.stdout() and "table finished: every seat signed the record (cut short)" in (
                proc.stdout()
            ), proc.describe()
    finally:
        lan.close()


LOBBY_ON = re.compile(r"table ([0-9a-f]+): lobby on ([0-9.]+):(\d+)")


def _bot_host(lan: Lan, tmp_path: Path, common: list[str], procs: list[Proc]) -> tuple[Proc, re.Match[str]]:
    """`lanplay bot --host` for four seats in the first namespace, and its lobby's line (table id, address)."""
    host = Proc(lan, 1, tmp_path / "l1", ["bot", *common, "--host", "--seats", "4", "--interface", lan.address(1),
                                            "-v"])  # fmt: skip
    procs.append(host)
    deadline = time.monotonic() + 30
    while not (found := LOBBY_ON.search(host.err.read_text())):
        assert time.monotonic() < deadline and host.proc.poll() is None, host.describe()
        time.sleep(0.05)
    return host, found


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.skipif(not LANPLAY.exists(), reason="no lanplay command beside the test interpreter")
def test_four_laptops_where_one_leaves_with_q_go_on_with_a_bot_and_finish_alike(
    tmp_path: Path, procs: list[Proc]
) -> None:
    """Issue 30, P-5.7: four laptops (a namespace each): two `lanplay bot` processes and two people at the
    full-screen table, Ann and Bob. Bob presses q, y: a signed leave. Ann's screen says at once that Bob left
    (not that his laptop is reconnecting) and asks whether to go on; she goes on (the first button), and plays
    the game to its end. Nobody is convicted, and Ann's record is byte for byte the bots' own."""
    lan = lan_or_skip("lq", "10.84.0", 4)
    ann = bob = None
    try:
        common = ["--game", "sixth-sense", "--option", "beginner=true", "--option", "target=1", "--patience", "5"]
        host, found = _bot_host(lan, tmp_path, common, procs)
        address = f"{found.group(2)}:{found.group(3)}"
        guest = Proc(lan, 2, tmp_path / "l2", ["bot", *common[:2], "--table", found.group(1), "--interface",
                                                 lan.address(2)])  # fmt: skip
        procs.append(guest)
        ann = NsTerminal("ann", lan, 3, tmp_path / "ann", "Ann", ("join", address))
        bob = NsTerminal("bob", lan, 4, tmp_path / "bob", "Bob", ("join", address))
        bob.wait(lambda s: re.search(r"Your hand \([1-9]", s) is not None, "Bob's cards", timeout=GAME_LIMIT)
        bob.keys("q")
        bob.wait(lambda s: "Leave the game?" in s, "the leave question")
        began = time.monotonic()
        bob.keys("y")
        asked = ann.wait(lambda s: "Bob is gone: go on?" in " ".join(s.split()), "the go-on question", timeout=30)
        waited = time.monotonic() - began
        assert waited < 10, "the question came late"
        print(f"q, y to the go-on question on Ann's screen: {waited:.2f} s (screen polled every 0.15 s)")
        assert "reconnect" not in asked, asked
        # Ann goes on (Tab selects the first allowed choice, the go-on button; Enter confirms) and plays on.
        deadline = time.monotonic() + GAME_LIMIT
        while "Final table" not in (screen := ann.screen()):
            assert "Traceback" not in screen and time.monotonic() < deadline, screen
            ann.keys("Tab", "Enter")
            time.sleep(0.1)
        assert "EXPOSED" not in screen and "convicted" not in screen, screen
        assert [p.wait(GAME_LIMIT) for p in (host, guest)] == [0, 0], host.describe() + guest.describe()
        # Two records at each laptop: the table cut short by the leave, and the one that went on.
        ann_records = {p.read_bytes() for p in (tmp_path / "ann").rglob("records/*.json")}
        bots_records = [{p.read_bytes() for p in (tmp_path / home).rglob("records/*.json")} for home in ("l1", "l2")]
        assert len(ann_records) == 2 and ann_records == bots_records[0] == bots_records[1], bots_records
        final = next(json.loads(r) for r in ann_records if b'"continues"' in r)
        assert final["complete"] is True and final["exposed"] == [], final
    finally:
        for terminal in (ann, bob):
            if terminal is not None:
                terminal.close()
        lan.close()


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest.mark.skipif(not LANPLAY.exists(), reason="no lanplay command beside the test interpreter")
def test_a_laptop_killed_mid_round_comes_back_two_rounds_later_and_takes_its_seat_back(
    tmp_path: Path, procs: list[Proc]
) -> None:
    """Issue 30, P-5.5, P-5.7: four laptops (a namespace each): three `lanplay bot` processes and Bob at the
    full-screen table. Bob's lanplay is killed with SIGKILL in round 2 (no leave, his secrets unpublished). The
    bots wait the table's patience, stop the round and go on with a bot in his seat. Two rounds later Bob
    starts `lanplay` again: his lobby offers the seat back; Enter. His laptop publishes the secrets it owes,
    every seat audits them, and he plays from the next round to the end. Nobody is exposed, and Bob's record of
    the last table is byte for byte the bots' own. Then he presses a: the same four play again."""
    lan = lan_or_skip("kc", "10.85.0", 4)
    bob = None
    try:
        # 6th Sense at four seats: four rounds (S-2.2), the void one not counted: killed in round 2, Bob asks
        # during round 3 (two rounds after the one he was killed in) and plays round 4.
        common = ["--game", "sixth-sense", "--option", "beginner=true", "--patience", "3", "--delay", "0.1",
                  "--again", "1"]
        host, found = _bot_host(lan, tmp_path, common, procs)
        address = f"{found.group(2)}:{found.group(3)}"
        guests = [
            Proc(lan, peer, tmp_path / f"l{peer}", ["bot", *common, "--table", found.group(1), "--interface",
                                                      lan.address(peer)])
            for peer in (2, 3)
        ]
        procs.extend(guests)
        bob = NsTerminal("bob", lan, 4, tmp_path / "bob", "Bob", ("join", address))
        bob.wait(lambda s: re.search(r"Your hand \([1-9]", s) is not None, "Bob's cards", timeout=GAME_LIMIT)
        deadline = time.monotonic() + GAME_LIMIT
        while "round 1 audited and confirmed" not in host.stdout():  # Bob plays round 1
            assert time.monotonic() < deadline and host.proc.poll() is None, host.describe()
            bob.keys("Tab", "Enter")
            time.sleep(0.2)
        bob.wait(lambda s: re.search(r"Your hand \(14", s) is not None, "round 2's cards", timeout=30, press="Enter")
        bob.kill_lanplay()
        killed = time.monotonic()
        bob.wait(lambda s: "LOBBY-EXIT=137" in s, "lanplay killed")
        # The bots go on with a bot in Bob's seat; round 2 is played again (a new deal) before he comes back.
        deadline = time.monotonic() + GAME_LIMIT
        while host.stdout().count("audited and confirmed") < 2:
            assert time.monotonic() < deadline and host.proc.poll() is None, host.describe()
            time.sleep(0.1)
        went_on = time.monotonic() - killed
        bob.start_again(lan, 4, "Bob")
        offered = bob.wait(lambda s: "went on without you" in " ".join(s.split()) or "Which network" in s,
                           "the seat offered back", timeout=30)  # fmt: skip
        if "Which network" in offered:
            bob.keys("Enter")
            bob.wait(lambda s: "went on without you" in " ".join(s.split()), "the seat offered back", timeout=30)
        bob.keys("Enter")
        bob.wait(lambda s: re.search(r"Your hand \([1-9]", s) is not None, "Bob's cards again", timeout=GAME_LIMIT)
        deadline = time.monotonic() + GAME_LIMIT
        while "Final table" not in (screen := bob.screen()):
            assert "Traceback" not in screen and time.monotonic() < deadline, screen
            bob.keys("Tab", "Enter")
            time.sleep(0.15)
        assert "EXPOSED" not in screen and "convicted" not in screen, screen
        bob_records = {p.read_bytes() for p in (tmp_path / "bob").rglob("records/*.json")}
        final = [json.loads(r) for r in bob_records if json.loads(r)["complete"]]
        assert len(final) == 1 and final[0]["exposed"] == [], bob_records

        def bots_records() -> list[set[bytes]]:
            return [{p.read_bytes() for p in (tmp_path / h).rglob("records/*.json")} for h in ("l1", "l2", "l3")]

        deadline = time.monotonic() + 30  # each bot writes it as its seat finishes (and goes on to play again)
        while not all(bob_records & b for b in bots_records()):
            assert time.monotonic() < deadline, "Bob's last record is not the bots' own"
            time.sleep(0.1)
        owed = [json.loads(r) for r in bots_records()[0] if b'"bots"' in r]
        assert owed and all(rec["exposed"] == [] for rec in owed), owed
        print(f"kill -9 to a round confirmed with a bot in the seat: {went_on:.1f} s")
        # And the evening goes on: Bob plays again with the same players (the bots said yes, `--again 1`).
        bob.keys("a")
        bob.wait(lambda s: "Final table" not in s, "a new game", timeout=60)
        deadline = time.monotonic() + GAME_LIMIT
        while "Final table" not in (screen := bob.screen()):
            assert "Traceback" not in screen and time.monotonic() < deadline, screen
            bob.keys("Tab", "Enter")
            time.sleep(0.15)
        assert [p.wait(GAME_LIMIT) for p in (host, *guests)] == [0, 0, 0], "".join(p.describe() for p in procs)
        again = {p.read_bytes() for p in (tmp_path / "bob").rglob("records/*.json")} - bob_records
        assert len(again) == 1 and json.loads(next(iter(again)))["complete"] is True, again
        for home in ("l1", "l2", "l3"):
            assert again <= {p.read_bytes() for p in (tmp_path / home).rglob("records/*.json")}, home
    finally:
        if bob is not None:
            bob.close()
        lan.close()
