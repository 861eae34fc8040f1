"""Helpers for the networked tests: `lanplay bot` processes on loopback (or in network namespaces
the tests create), each with its own LANPLAY_HOME, their output in files, and their game records.

Safety: every process gets an explicit ``--interface`` (127.0.0.1 unless a test passes a namespace
address) and never inherits $LANPLAY_INTERFACE; `BotProcess.kill` and `Table.close` end only the
processes started here, by pid (each in its own process group).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
RECORD_LINE = re.compile(r"^game record saved to (\S+)\s*$", re.M)
# What the plain commands print (lanplay/cli/netcli.py) about how a table goes.
EXPOSED_LINE = re.compile(r"^EXPOSED: seat (\d+) broke (\S+): (.*)$", re.M)
STOPPED_LINE = re.compile(
    r"^STOPPED by seat (\d+)(?: \(waited for seat (\d+)'s (\S+)\))?, nobody convicted: (.*)$", re.M
)
LEFT_LINE = re.compile(r"^LEFT: seat (\d+) left the table", re.M)
FINISHED_LINE = re.compile(r"^table finished: every seat signed the record \((complete|cut short)\)$", re.M)
LOBBY_LINE = re.compile(r"table ([0-9a-f]+): lobby on ([0-9.]+):(\d+)")
MESH_LINE = re.compile(r"mesh for table ([0-9a-f]+) listening on ([0-9.]+):(\d+)")


def lanplay_command() -> list[str]:
    """The `lanplay` entry point of the environment running the tests."""
    script = Path(sys.executable).with_name("lanplay")
    if script.exists():
        return [str(script)]
    found = shutil.which("lanplay")
    if found:
        return [found]
    return [sys.executable, "-m", "lanplay.cli"]


def clean_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")}
    env["LANPLAY_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


@dataclass
class BotProcess:
    """One `lanplay bot` process (restartable with the same command and the same LANPLAY_HOME)."""

    name: str
    home: Path
    args: list[str]
    prefix: list[str] = field(default_factory=list)  # e.g. ["ip", "netns", "exec", NS]
    env_extra: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    runs: int = 0

    @property
    def out_path(self) -> Path:
        return self.home.parent / f"{self.name}.{self.runs}.out"

    @property
    def err_path(self) -> Path:
        return self.home.parent / f"{self.name}.{self.runs}.err"

    def start(self) -> BotProcess:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.home.mkdir(parents=True, exist_ok=True)
        self.runs += 1
        env = clean_env(self.home, self.env_extra)
        # The rule-of-thumb bot unless a test says otherwise: these tests are about the table and the network,
        # and the default (searching) level thinks 0.05 s a move on the cores the peers share.
        kind = [] if "--kind" in self.args else ["--kind", "heuristic"]
        command = [*self.prefix, *lanplay_command(), "bot", *self.args, *kind]
        if self.prefix:
            # Through `ip netns exec` too, the lanplay process gets exactly these, whatever sudo or ip keep.
            keys = ("LANPLAY_HOME", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", *self.env_extra)
            wanted = {k: env[k] for k in keys}
            command = [*self.prefix, "env", *(f"{k}={v}" for k, v in wanted.items()), *command[len(self.prefix) :]]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=self.home,
                start_new_session=True,
            )  # fmt: skip
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stdout(self) -> str:
        return self.out_path.read_text("utf-8", "replace") if self.out_path.exists() else ""

    def stderr(self) -> str:
        return self.err_path.read_text("utf-8", "replace") if self.err_path.exists() else ""

    def all_stderr(self) -> str:
        """stderr of every run so far."""
        parts = []
        for run in range(1, self.runs + 1):
            path = self.home.parent / f"{self.name}.{run}.err"
            if path.exists():
                parts.append(path.read_text("utf-8", "replace"))
        return "".join(parts)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def describe(self, tail: int = 3000) -> str:
        code = None if self.proc is None else self.proc.poll()
        return (
            f"--- {self.name} (pid {self.proc.pid if self.proc else None}, exit {code}, run {self.runs})\n"
            f"stdout:\n{self.stdout()[-tail:]}\nstderr:\n{self.stderr()[-tail:]}"
        )

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float, stream: str = "stdout") -> re.Match[str]:
        """The first match of `pattern` in the process's stdout (or stderr) of this run."""
        regex = re.compile(pattern, re.M) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            text = self.stdout() if stream == "stdout" else self.stderr()
            found = regex.search(text)
            if found:
                return found
            if not self.running():
                text = self.stdout() if stream == "stdout" else self.stderr()
                found = regex.search(text)
                if found:
                    return found
                raise AssertionError(f"{self.name} exited without printing {regex.pattern!r}\n{self.describe()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: no {regex.pattern!r} within {timeout} s\n{self.describe()}")
            time.sleep(0.05)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} still running after {timeout} s\n{self.describe()}") from None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal this process (and its own process group: `ip netns exec` forks)."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            proc.send_signal(sig)
        if sig == signal.SIGKILL:
            proc.wait(10)

    def record_paths(self) -> list[Path]:
        folder = self.home / "records"
        return sorted(folder.glob("*.json")) if folder.is_dir() else []

    def journal_paths(self) -> list[Path]:
        folder = self.home / "journals"
        return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []

    def journal_records(self) -> list[dict[str, Any]]:
        """The records of this seat's journal (complete lines only: it may be being written)."""
        out: list[dict[str, Any]] = []
        for path in self.journal_paths():
            data = path.read_bytes()
            for line in data.split(b"\n")[:-1]:
                try:
                    out.append(json.loads(line)["record"])
                except (ValueError, KeyError):
                    break
        return out

    def vm_rss_kib(self) -> int | None:
        """VmRSS of the lanplay process itself (not of an `ip netns exec` wrapper)."""
        if self.proc is None:
            return None
        try:
            text = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        found = re.search(r"^VmRSS:\s+(\d+) kB", text, re.M)
        return int(found.group(1)) if found else None


def bot_args(
    game: str,
    *,
    interface: str = LOOPBACK,
    host_seats: int | None = None,
    table: str | None = None,
    options: Sequence[str] = (),
    patience: float | None = None,
    verbose: bool = True,
    extra: Sequence[str] = (),
) -> list[str]:
    args = ["--game", game, "--interface", interface]
    if host_seats is not None:
        args += ["--host", "--seats", str(host_seats)]
    elif table is not None:
        args += ["--table", table]
    for option in options:
        args += ["--option", option]
    if patience is not None:  # how long an owed step is waited for before a stop (P-5.5)
        args += ["--patience", str(patience)]
    if verbose:
        args.append("-v")
    return [*args, *extra]


@dataclass
class Table:
    """A host bot and joiner bots, all separate processes, at one table found by mDNS."""

    bots: list[BotProcess]
    table_id: str
    lobby: tuple[str, int]

    @property
    def host(self) -> BotProcess:
        return self.bots[0]

    def wait_all(self, timeout: float) -> list[int]:
        deadline = time.monotonic() + timeout
        codes = []
        for bot in self.bots:
            try:
                codes.append(bot.wait(max(0.1, deadline - time.monotonic())))
            except AssertionError:  # the cause is often another seat's output: show the whole table's
                raise AssertionError(f"{bot.name} still running after {timeout} s\n{self.describe()}") from None
        return codes

    def close(self) -> None:
        for bot in self.bots:
            bot.kill()

    def describe(self) -> str:
        return "\n".join(b.describe() for b in self.bots)


def start_table(
    base: Path,
    game: str,
    seats: int,
    *,
    options: Sequence[str] = (),
    interfaces: Sequence[str] | None = None,
    prefixes: Sequence[Sequence[str]] | None = None,
    patience: float | None = None,
    env_extra: dict[str, str] | None = None,
    join_by_table_id: bool = True,
    timeout: float = 30.0,
    started: Callable[[BotProcess], None] | None = None,
    extra: Sequence[str] = (),
) -> Table:
    """Start a hosting bot, read its lobby id from its -v log, then start `seats - 1` bots that find
    the table by mDNS (by its advertised id, so that other tables on this machine cannot catch them).

    `started` is called with each process as soon as it is started (so a caller can clean up even if
    this function fails half way)."""
    addresses = list(interfaces) if interfaces is not None else [LOOPBACK] * seats
    wrappers = [list(p) for p in prefixes] if prefixes is not None else [[] for _ in range(seats)]
    common = {"options": options, "patience": patience, "extra": extra}
    host = BotProcess(
        "seat-host", base / "h0", bot_args(game, interface=addresses[0], host_seats=seats, **common),  # type: ignore[arg-type]
        prefix=wrappers[0], env_extra=dict(env_extra or {}),
    )  # fmt: skip
    host.start()
    if started:
        started(host)
    found = host.wait_for(LOBBY_LINE, timeout, stream="stderr")
    table_id, lobby = found.group(1), (found.group(2), int(found.group(3)))
    bots = [host]
    for i in range(1, seats):
        bot = BotProcess(
            f"seat-{i}", base / f"h{i}",
            bot_args(game, interface=addresses[i], table=table_id if join_by_table_id else None, **common),  # type: ignore[arg-type]
            prefix=wrappers[i], env_extra=dict(env_extra or {}),
        )  # fmt: skip
        bot.start()
        if started:
            started(bot)
        bots.append(bot)
    return Table(bots, table_id, lobby)


def record_of(bot: BotProcess) -> Path:
    """The record file a finished bot printed."""
    found = RECORD_LINE.search(bot.stdout())
    assert found, f"{bot.name} printed no record path\n{bot.describe()}"
    path = Path(found.group(1))
    assert path.is_file(), f"{bot.name}: {path} does not exist"
    return path


def assert_identical_records(bots: Iterable[BotProcess]) -> Path:
    """Every bot saved one record, all byte-identical; returns one of them."""
    paths = [record_of(b) for b in bots]
    contents = [p.read_bytes() for p in paths]
    assert contents[0], "empty record"
    for path, data in zip(paths[1:], contents[1:], strict=True):
        assert data == contents[0], f"{path} differs from {paths[0]}"
    return paths[0]


def assert_same_signed_record(bots: Iterable[BotProcess]) -> Path:
    """Every bot saved a record whose end every present seat signed (P-5.8), one digest for all, with the
    same confirmed rounds and exposures; returns one of them. (What is outside the digest, the stops in
    the order each seat heard of them, may differ.)"""
    paths = [record_of(b) for b in bots]
    records = [json.loads(p.read_text()) for p in paths]
    first = records[0]
    assert first["end"]["signatures"], f"{paths[0]}: nobody signed the end"
    for path, record in zip(paths[1:], records[1:], strict=True):
        for key in ("end", "rounds", "exposed", "complete", "players"):
            assert record[key] == first[key], f"{path} differs from {paths[0]} in {key!r}"
    return paths[0]


def replay_json(path: Path) -> dict[str, Any]:
    """`lanplay replay FILE --json`, which must exit 0."""
    done = subprocess.run(
        [*lanplay_command(), "replay", str(path), "--json"],
        capture_output=True, text=True, timeout=60, env=clean_env(path.parent), check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"replay exited {done.returncode}: {done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def assert_finished(bot: BotProcess, how: str) -> None:
    """The bot said the table finished (`how`: "complete" or "cut short") and exposed nobody."""
    found = FINISHED_LINE.search(bot.stdout())
    assert found is not None and found.group(1) == how, bot.describe()
    assert not EXPOSED_LINE.search(bot.stdout()), bot.describe()


def assert_complete_game(bots: Sequence[BotProcess], game: str) -> dict[str, Any]:
    """Every bot finished the game complete, exposed nobody and saw no stop; their records are
    byte-identical and replay as a complete game."""
    for bot in bots:
        assert_finished(bot, "complete")
        assert not STOPPED_LINE.search(bot.stdout()) and not LEFT_LINE.search(bot.stdout()), bot.describe()
    path = assert_identical_records(bots)
    result = replay_json(path)
    assert result["game"] == game
    assert result["complete"] is True, result
    return result


def verify_record(path: Path) -> tuple[int, str]:
    """`lanplay verify FILE`: every proof of the record checked again offline; (exit code, stdout)."""
    done = subprocess.run(
        [*lanplay_command(), "verify", str(path)],
        capture_output=True, text=True, timeout=60, env=clean_env(path.parent), check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr
