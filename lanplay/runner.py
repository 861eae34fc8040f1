"""The lockstep runner: one asyncio task per seat that feeds the mesh and the clock into the
protocol's `TableSession` and sends what it gives back. Nothing game-specific lives here.

Persistence (P-5.4): before anything the session produces leaves this process, the input that
produced it is in the seat's journal (fsync): every message received, every decision, every tick
that mattered, and every random byte the session drew. The session is a deterministic function of
those, so a seat killed at any point and started again replays its journal into a fresh session,
reaches exactly the state it had (its secrets included), resends everything it had sent (the others
drop duplicates), and plays on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.api import IllegalMove
from engine.record import GameRecord
from lanplay.lobby import TablePlan
from lanplay.mesh import Mesh, MeshError
from lanplay.store import Journal, journal_path, save_record
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.session import Blamed, Dealt, Event, Moved, Output, RoundAudited, Send, TableSession, Waiting

log = logging.getLogger(__name__)

TICK = 0.25  # how often time is given to the session (P-5.3 limits are whole seconds)
FORWARD_DELAY = 0.05  # how long another seat's message waits before it is passed on (gossip)
DRAIN_TIMEOUT = 5.0  # at the end, how long to wait for the others to acknowledge our last messages
TRACE_ENV = "LANPLAY_TRACE"  # a file to append timing lines to (for scripts/bench_net.py); off when unset


class LocalPlayer(Protocol):
    """Whoever decides for this seat: a bot, a person at a terminal, the UI."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any: ...


_handed_out: set[int] = set()


def free_port(host: str) -> int:
    """A port free right now on `host`, for a mesh that must be announced before it listens.
    Never the same port twice in one process (in-process bot seats ask at the same moment)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
            port: int = probe.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port


@dataclass(frozen=True)
class Outcome:
    record: GameRecord
    blame: Blamed | None
    record_path: Path | None


class TableRunner:
    """Runs one seat of one table to the end of the game."""

    def __init__(
        self,
        plan: TablePlan,
        identity: Identity,
        data_dir: Path,
        player: LocalPlayer,
        interface: str,
        *,
        step_timeout: float = 20.0,
        reconnect_timeout: float = 120.0,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.plan = plan
        self.identity = identity
        self.data_dir = data_dir
        self.player = player
        self.interface = interface
        self.settings = plan.settings(step_timeout=step_timeout, reconnect_timeout=reconnect_timeout)
        keys = [s.public_key for s in plan.seats]
        self.me = keys.index(identity.public.hex())
        self.peer_ids = [p.peer_id for p in self.settings.seats]
        self.seat_of = {pid: seat for seat, pid in enumerate(self.peer_ids)}
        self.journal = Journal(journal_path(data_dir, self.settings.table, self.me))
        self.listeners: list[Callable[[Event], None]] = [on_event] if on_event else []
        self.session: TableSession | None = None
        self.mesh: Mesh | None = None
        self._replaying: deque[bytes] = deque()
        self._seen: set[bytes] = set()
        self._wake = asyncio.Event()
        self._decider: asyncio.Task[None] | None = None
        self._forwards: list[bytes] = []
        self.connected: set[int] = set()
        trace = os.environ.get(TRACE_ENV)
        self._trace: _Trace | None = _Trace(Path(trace), self.me) if trace else None

    # --- journal-backed inputs ---------------------------------------------------------------------

    def _entropy(self, n: int) -> bytes:
        if self._replaying:
            data = self._replaying.popleft()
            if len(data) != n:
                raise RuntimeError(f"journal replay out of step: entropy of {len(data)} bytes, {n} asked")
            return data
        if self._trace is not None and self.session is not None:
            self._trace.entropy(self.session)
        data = secrets.token_bytes(n)
        self.journal.append({"t": "entropy", "hex": data.hex()}, sync=False)  # synced before anything leaves
        return data

    @staticmethod
    def _ms() -> int:
        return int(time.time() * 1000)

    def _receive(self, seat: int, data: bytes) -> None:
        digest = hashlib.sha256(data).digest()
        if digest in self._seen or self.session is None:
            return  # a copy already handled (gossip sends each message several ways)
        self._seen.add(digest)
        ms = self._ms()
        self.journal.append({"t": "in", "from": seat, "data": data.hex(), "ms": ms}, sync=False)
        self._dispatch(self.session.receive(seat, data, ms / 1000))

    async def submit(self, move: Any) -> None:
        """The local player's move (IllegalMove if it is not open to them now)."""
        session = self.session
        assert session is not None
        if move not in session.decision():
            raise IllegalMove("P-5.1", "that move is not open to you now")
        if self._trace is not None:
            self._trace.submit(session)
        ms = self._ms()
        self.journal.append({"t": "decide", "move": session.game.move_to_json(move), "ms": ms})
        self._dispatch(session.decide(move, ms / 1000))

    def _tick(self) -> None:
        session = self.session
        assert session is not None
        ms = self._ms()
        outputs = session.tick(ms / 1000)
        if outputs:
            self.journal.append({"t": "tick", "ms": ms})
            self._dispatch(outputs)

    def _dispatch(self, outputs: list[Output]) -> None:
        if any(isinstance(o, Send) and not o.forward for o in outputs):
            self.journal.sync()  # every input behind our own messages is on disk before they leave
        for output in outputs:
            if isinstance(output, Send):
                self._send(output)
            else:
                if self._trace is not None:
                    self._trace.event(output)
                for listener in self.listeners:
                    listener(output)
        self._wake.set()

    def _send(self, output: Send) -> None:
        mesh = self.mesh
        if mesh is None:
            return
        if output.forward:
            # Gossip is a safety net (equivocation, lost links), not the fast path: passing it on a
            # moment later keeps it from competing with the direct messages for the CPU.
            self._forwards.append(output.data)
            if len(self._forwards) == 1:
                asyncio.get_running_loop().call_later(FORWARD_DELAY, self._flush_forwards)
            return
        if output.to is None:
            mesh.broadcast(output.data)
        else:
            mesh.send(self.peer_ids[output.to], output.data)

    def _flush_forwards(self) -> None:
        forwards, self._forwards = self._forwards, []
        if self.mesh is None:
            return
        # The table may have ended (mesh closed) while these waited; gossip is best effort.
        with contextlib.suppress(MeshError):
            for data in forwards:
                self.mesh.broadcast(data)

    # --- start, resume, run -------------------------------------------------------------------------

    def _restore(self, records: list[JSONObject]) -> list[Send]:
        """Replay a journal into a fresh session; returns every message it had sent."""
        self._replaying = deque(bytes.fromhex(str(r["hex"])) for r in records if r.get("t") == "entropy")
        session = self.session
        assert session is not None
        sends: list[Send] = []

        def keep(outputs: list[Output]) -> None:
            sends.extend(o for o in outputs if isinstance(o, Send))

        for record in records:
            kind = record.get("t")
            now = int(str(record.get("ms", 0))) / 1000
            if kind == "start":
                keep(session.start(now))
            elif kind == "in":
                data = bytes.fromhex(str(record["data"]))
                self._seen.add(hashlib.sha256(data).digest())
                keep(session.receive(int(str(record["from"])), data, now))
            elif kind == "decide":
                move_json = record.get("move")
                assert isinstance(move_json, dict)
                keep(session.decide(session.game.move_from_json(move_json), now))
            elif kind == "tick":
                keep(session.tick(now))
        if self._replaying:
            raise RuntimeError("journal replay out of step: entropy left over")
        return sends

    async def run(self) -> Outcome:
        """Play until the game ends or a blame stops it; the record is saved either way."""
        seat_info = self.plan.seats[self.me]
        self.mesh = Mesh(
            self.identity,
            self.settings.table,
            [pid for seat, pid in enumerate(self.peer_ids) if seat != self.me],
            self._on_message,
            self._on_status,
        )
        await self.mesh.start(self.interface, seat_info.port)
        for seat, info in enumerate(self.plan.seats):
            if seat != self.me:
                await self.mesh.connect(self.peer_ids[seat], info.address, info.port)
        records = self.journal.read() if self.journal.path.exists() else []
        self.session = TableSession(self.settings, self.identity, time.time(), self._entropy)
        if records:
            log.info("resuming table %s from %d journal records", self.settings.table, len(records))
            for send in self._restore(records[1:]):
                self._send(send)
            self._wake.set()
        else:
            self.journal.append({"t": "table", "plan": self.plan.to_json(), "seat": self.me})
            ms = self._ms()
            self.journal.append({"t": "start", "ms": ms})
            self._dispatch(self.session.start(ms / 1000))
        try:
            while self.session.stage not in ("over", "ended"):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(TICK):
                        await self._wake.wait()
                self._wake.clear()
                self._tick()
                self._maybe_decide()
            await self._drain()
        finally:
            if self._decider is not None and not self._decider.done():
                self._decider.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._decider
            await self.mesh.close()
            if self._trace is not None:
                self._trace.close()
        return self._finish()

    def _maybe_decide(self) -> None:
        """Ask the local player when a move is owed. The asking runs as a task of its own, so the
        clock keeps ticking (time limits, other seats' withholding) while a person thinks."""
        session = self.session
        assert session is not None
        moves = session.decision()
        if moves and (self._decider is None or self._decider.done()):
            self._decider = asyncio.get_running_loop().create_task(self._decide(moves))

    async def _decide(self, moves: tuple[Any, ...]) -> None:
        session = self.session
        assert session is not None
        try:
            move = await self.player.decide(self, moves)
            if move is not None and move in session.decision():
                await self.submit(move)
        except IllegalMove as exc:  # the table moved on while the player chose: ask again
            log.info("move not taken: %s", exc)
        self._wake.set()

    async def _drain(self) -> None:
        """Give the others time to receive our last messages (the audit needs our secrets)."""
        mesh = self.mesh
        assert mesh is not None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_TIMEOUT):
                while any(mesh.queued(pid) for pid in self._drain_peers()):
                    await asyncio.sleep(0.05)

    def _drain_peers(self) -> list[str]:
        mesh = self.mesh
        assert mesh is not None and self.session is not None
        if self.session.stage == "ended":
            # after a blame, a seat whose link is down (the one blamed for vanishing) acknowledges nothing
            return sorted(mesh.connected_peers())
        return [pid for seat, pid in enumerate(self.peer_ids) if seat != self.me]

    def _finish(self) -> Outcome:
        session = self.session
        assert session is not None
        record = session.record()
        path = save_record(self.data_dir, self.settings.table, record.dumps()) if record.rounds else None
        self.journal.append({"t": "done"})
        return Outcome(record, session.blame, path)

    # --- mesh callbacks ----------------------------------------------------------------------------

    def _on_message(self, peer_id: str, data: bytes) -> None:
        seat = self.seat_of.get(peer_id)
        if seat is not None:
            self._receive(seat, data)

    def _on_status(self, peer_id: str, connected: bool) -> None:
        seat = self.seat_of.get(peer_id)
        if seat is None or self.session is None:
            return
        if connected:
            self.connected.add(seat)
        else:
            self.connected.discard(seat)
        self.session.set_connected(seat, connected, time.time())
        self._wake.set()

    # --- for the UI --------------------------------------------------------------------------------

    def waiting_text(self) -> str:
        """'waiting for Bob', or 'waiting for Bob's laptop to reconnect'."""
        session = self.session
        waiting: Waiting | None = session.waiting() if session else None
        if waiting is None or not waiting.seats:
            return ""
        names = [self.settings.names[s] for s in waiting.seats if s != self.me]
        if not names:
            return ""
        gone = [self.settings.names[s] for s in waiting.seats if s != self.me and s not in self.connected]
        if gone:
            return f"waiting for {', '.join(gone)}'s laptop to reconnect"
        return f"waiting for {', '.join(names)} ({waiting.what})"


class _Trace:
    """Timing lines for benchmarks (``$LANPLAY_TRACE``), one JSON object a line, wall-clock ``t``:
    ``round`` (this seat begins to set up round ``round``: its deal starts), ``dealt`` (this seat has
    its hand), ``submit`` (this seat's player chose a move), ``applied`` (a move was applied here),
    ``audited`` (a round confirmed, with this process's ``rss_kib``). A move is named by
    ``(round, seat, n)``: the n-th move of that seat in that round, on every peer alike."""

    def __init__(self, path: Path, me: int) -> None:
        self.me = me
        self._file = path.open("a", encoding="utf-8", buffering=1)
        self._round = -1  # the round of the last Dealt, which the moves that follow belong to
        self._started = -1  # the last round seen begun
        self._moves: dict[int, int] = {}
        self._submitted = 0

    def _write(self, event: str, **fields: object) -> None:
        line = {"event": event, "seat": self.me, "t": time.time(), **fields}
        self._file.write(json.dumps(line) + "\n")

    def close(self) -> None:
        self._file.close()

    def submit(self, session: TableSession) -> None:
        rd = session.round
        index = -1 if rd is None else rd.index
        if index != self._round:
            self._round, self._moves, self._submitted = index, {}, 0
        self._write("submit", round=index, mover=self.me, n=self._submitted, step=None if rd is None else rd.step)
        self._submitted += 1

    def event(self, event: Event) -> None:
        if isinstance(event, Dealt):
            if event.round != self._round:
                self._round, self._moves, self._submitted = event.round, {}, 0
            self._write("dealt", round=event.round)
        elif isinstance(event, Moved):
            n = self._moves.get(event.seat, 0)
            self._moves[event.seat] = n + 1
            hidden = any(value is None for value in event.move.values())
            self._write("applied", round=self._round, mover=event.seat, n=n, hidden=hidden)
        elif isinstance(event, RoundAudited):
            self._write("audited", round=event.round, rss_kib=_rss_kib())

    def entropy(self, session: TableSession) -> None:
        """A secret is drawn: the first draw for a new round is where its deal begins (the seat's
        shuffle and lock secrets; seat 0 shuffles right after)."""
        if session.my_seed is None:
            return  # the first dealer's seed, before any round
        index = session.round_index
        rd = session.round
        if (rd is None or rd.index != index) and index != self._started:
            self._started = index
            self._write("round", round=index)


def _rss_kib() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def unfinished_journal(data_dir: Path) -> tuple[TablePlan, Path] | None:
    """The table this installation was playing when it stopped, if its game has not ended."""
    folder = data_dir / "journals"
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            records = Journal(path).read()
        except Exception as exc:  # a damaged journal is reported, and not resumed
            log.warning("cannot resume from %s: %s", path, exc)
            continue
        if records and records[0].get("t") == "table" and records[-1].get("t") != "done":
            return TablePlan.from_json(records[0]["plan"]), path
    return None


class BotPlayer:
    """A bot at this seat: it sees only the session's view of its own seat."""

    def __init__(self, game_id: str, kind: str = "heuristic", delay: float = 0.0, seed: int | None = None) -> None:
        from lanplay.bots import make_bot

        self.bot = make_bot(game_id, kind, seed)
        self.delay = delay

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        if self.delay:
            await asyncio.sleep(self.delay)
        session = runner.session
        assert session is not None
        if self.bot.name == "expert":  # a search of ~0.25 s: off the event loop, so the mesh and clock run on
            return await asyncio.to_thread(self.bot.choose, session.game, session.view(), session.me)
        return self.bot.choose(session.game, session.view(), session.me)
