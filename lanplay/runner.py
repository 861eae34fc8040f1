"""The lockstep runner: one asyncio task per seat that feeds the mesh and the clock into the
protocol's `TableSession` and sends what it gives back. Nothing game-specific lives here.

Persistence (P-5.4): before anything the session produces leaves this process, the input that
produced it is in the seat's journal (fsync): every message received, every decision, every tick
that mattered, and every random byte the session drew. The session is a deterministic function of
those, so a seat killed at any point and started again replays its journal into a fresh session,
reaches exactly the state it had (its secrets included), resends everything it had sent (the others
drop duplicates), and plays on. Only inputs the session kept are journaled (I6): a refused message
(unreadable, badly signed, of an unknown kind) costs no disk, and the digests of handled messages are
remembered in a bounded set.

Time away (I4): the session judges withheld steps by the clock, so the runner makes sure the time this
seat could not take part counts against nobody. After a journal resume, after the process was stopped
or the laptop slept (the loop notices a jump of the wall clock), and after this seat had lost every
link, it does not let the session judge time until the links have had a chance to come up (every link
up, or `SETTLE_LIMIT`), then restarts the session's clocks (`resumed`) and tells it which links are
still down: those seats are judged by the reconnect limit from now, and each gets a fresh step limit
when its link comes back. The window is short on purpose: the others' timeout claims must meet ours
within twice the step limit. Link changes go to the session (`set_connected`) and into the journal,
so a replay sees them too. With no link at all the seat says it
lost the network and blames nobody; it gives up after the reconnect limit without ending the game, so
the next `lanplay` command resumes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
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

from engine.api import IllegalMove, RuleError
from engine.record import GameRecord
from lanplay.lobby import LobbyError, TablePlan
from lanplay.mesh import Mesh, MeshError
from lanplay.store import Journal, ResumeFailed, StoreError, journal_path, save_record
from lanplay.text import shown
from protocol.encoding import JSONObject, check_int, h2b
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.session import (
    PROTOCOL_VERSION,
    Blamed,
    Dealt,
    Event,
    Moved,
    Output,
    RoundAudited,
    Send,
    Stopped,
    TableSession,
    Verdict,
    Waiting,
)

log = logging.getLogger(__name__)

TICK = 0.25  # how often time is given to the session (P-5.3 limits are whole seconds)
FORWARD_DELAY = 0.05  # how long another seat's message waits before it is passed on (gossip)
DRAIN_TIMEOUT = 5.0  # at the end, how long to wait for the others to acknowledge our last messages
# After a stop, the links stay up for as long as a conviction reached elsewhere can still turn it into
# the same verdict here (protocol `stopped -> ended`, `TableSession.listen_until`, I2), and this much
# more, so a verdict reached at the very end still goes out to the others.
VERDICT_MARGIN = 1.0
TRACE_ENV = "LANPLAY_TRACE"  # a file to append timing lines to (for scripts/bench_net.py); off when unset
SUSPEND_GAP = 3.0  # a loop that wakes every TICK but finds this much wall-clock time gone was stopped or asleep
SETTLE_MIN = 0.5  # after coming back, at least this long for dead links to be noticed before judging time
SETTLE_LIMIT = 1.5  # ... and at most this long waiting for every link; the reconnect limit covers the rest
MAX_SEEN = 1 << 16  # digests of handled messages kept for deduplication (gossip brings each several times)
# I6: a link going down is told to the session (and journaled) at most once per this interval per seat;
# one that comes sooner is told, if the link is still down, at the first loop turn after it. A link coming
# back is told at once (it follows a told down, so a seat costs two records a second at most). A seated
# peer that keeps re-dialling (red team 19 #5: 150 flaps in 1.5 s, two journal records each, for as long
# as a person thinks) is thus bounded, and the session never holds a linked seat as away for longer than
# a loop turn (red team 21: a budget that stopped telling held a linked seat as away for the rest of the
# game, read as a lost network, and claimed a linked honest seat; a rate on both directions still held
# each flapper down for up to the interval, and three flappers in turn read as a lost network).
LINK_CHANGE_INTERVAL = 1.0


class LocalPlayer(Protocol):
    """Whoever decides for this seat: a bot, a person at a terminal, the UI."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any: ...


_handed_out: set[int] = set()
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
ANNOUNCED_PORTS = 12_000  # how many ports below the ephemeral range a seat's port is drawn from


def announced_port_range() -> range:
    """Ports a seat announces and listens on: just below the kernel's ephemeral range. A seat that
    restarts (a crash, a kill) must listen on its announced port again, and a port in the ephemeral
    range can meanwhile be the local end of any outgoing connection on this laptop, not least the
    other seats' own redials to it; one below the range no outgoing connection ever takes."""
    try:
        low = int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default; elsewhere the kernel's own choice (below) still works
    return range(max(1024, low - ANNOUNCED_PORTS), max(1024, low))


def free_port(host: str) -> int:
    """A port free right now on `host`, for a mesh that must be announced before it listens.
    Never the same port twice in one process (in-process bot seats ask at the same moment)."""
    ports = announced_port_range()
    draws = [ports[secrets.randbelow(len(ports))] for _ in range(64)] if ports else []
    for wanted in itertools.chain(draws, itertools.repeat(0)):  # 0: the range busy, any port the kernel gives
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, wanted))
            except OSError:
                continue  # another program listens there, or it is on its way out: draw again
            port = int(probe.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise AssertionError("unreachable: the draws end in an endless repeat")


class PortTaken(StoreError):
    """The port this seat announced (its journal's table record holds it) is taken by another program:
    the other seats would not find it elsewhere. The journal stays for the next try."""


@dataclass(frozen=True)
class Outcome:
    record: GameRecord
    blame: Blamed | None
    record_path: Path | None
    # No link for the whole reconnect limit (at once, or in all while one step or claim waited,
    # `TableSession.away_past_limit`): the game is not over, it can be resumed.
    network_lost: bool = False
    stopped: Stopped | None = None  # the game stopped with nobody convicted (the table could not agree, I2)


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
        try:
            plan.verify()  # I7: every seat signed this very plan, and its seat order is the drawn one
        except ProtocolError as exc:
            raise LobbyError(f"refusing to play table {plan.table_id}: {exc.message}") from None
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
        self._seen: dict[bytes, None] = {}  # insertion-ordered: the oldest go first past MAX_SEEN
        # Entropy drawn while an input is being handled waits here, to be journaled right after that
        # input (so a kill between the two never leaves draws the replay would give to another input).
        self._held_draws: list[JSONObject] | None = None
        self._wake = asyncio.Event()
        self._decider: asyncio.Task[None] | None = None
        self._forwards: list[bytes] = []
        self.connected: set[int] = set()
        self.ever_linked = False  # a link has been up since this process started
        self._settle_until: float | None = None  # monotonic deadline while time is not judged (see module doc)
        self._settle_from = 0.0
        self._lost_since: float | None = None  # monotonic time the last link went down
        self._lost_from_ms = 0  # the same, on the session's clock (`_ms`)
        # While settling after a network loss: when (session clock) time stopped being judged, so that
        # `resumed` moves the clocks on by the pause only; None for a full restart (a resume, a suspend).
        self._paused_from_ms: int | None = None
        self._gave_up = False
        self._was_linked = False  # whether a link had been up before the last time there was none
        self._told_up: dict[int, bool] = {}  # per seat, the link state the session was last told
        self._told_at: dict[int, float] = {}  # per seat, when (session clock, s) it was last told a link down
        self._verdict_told = False  # a `Verdict` reached the listeners in this process
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
        record: JSONObject = {"t": "entropy", "hex": data.hex()}
        if self._held_draws is not None:
            self._held_draws.append(record)
        else:
            self.journal.append(record, sync=False)  # synced before anything leaves
        return data

    def _journal_after(self, record: JSONObject, draws: list[JSONObject]) -> None:
        """An input handled before it was journaled (so refused ones need not be), then the draws it made."""
        self.journal.append(record, sync=False)
        for draw in draws:
            self.journal.append(draw, sync=False)

    @staticmethod
    def _ms() -> int:
        return int(time.time() * 1000)

    def _remember(self, digest: bytes) -> None:
        self._seen[digest] = None
        if len(self._seen) > MAX_SEEN:
            del self._seen[next(iter(self._seen))]

    def _receive(self, seat: int, data: bytes) -> None:
        digest = hashlib.sha256(data).digest()
        if digest in self._seen or self.session is None:
            return  # a copy already handled (gossip sends each message several ways)
        ms = self._ms()
        self._held_draws = []
        try:
            outputs = self.session.receive(seat, data, ms / 1000)
        finally:
            draws, self._held_draws = self._held_draws, None
        # The one place a received message is journaled: after the session has seen it, before
        # anything it caused leaves (`_dispatch` syncs first). Kept are the inputs the session kept,
        # and any that drew entropy or led to a message or verdict of ours (a replay must reach it too).
        if draws or self.session.last_input_kept or any(_own_output(o) for o in outputs):
            self._remember(digest)
            self._journal_after({"t": "in", "from": seat, "data": data.hex(), "ms": ms}, draws)
        self._dispatch(outputs)

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
        self._tell_links()  # a link change held back by `LINK_CHANGE_INTERVAL`
        if not self._judging_time():
            return
        ms = self._ms()
        self._held_draws = []
        try:
            outputs = session.tick(ms / 1000)
        finally:
            draws, self._held_draws = self._held_draws, None
        if outputs or draws:
            self._journal_after({"t": "tick", "ms": ms}, draws)
            self._dispatch(outputs)
        if session.away_past_limit and not self._gave_up:
            # This laptop's own outages, past the reconnect limit in all, would have run out a limit
            # here: it leaves the table unfinished (it can be resumed) and names nobody (I1, I4).
            log.warning("this laptop had no link for longer than the reconnect limit in all: leaving the table "
                        "unfinished (it can be resumed)")  # fmt: skip
            self._gave_up = True

    def _dispatch(self, outputs: list[Output]) -> None:
        if any(isinstance(o, Send) and not o.forward for o in outputs):
            self.journal.sync()  # every input behind our own messages is on disk before they leave
        for output in outputs:
            if isinstance(output, Send):
                self._send(output)
            else:
                self._verdict_told |= isinstance(output, Verdict)
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
        try:
            if output.to is None:
                mesh.broadcast(output.data)
            else:
                mesh.send(self.peer_ids[output.to], output.data)
        except MeshError as exc:
            # I3: the session keeps its own messages small enough (MAX_OWN_EVIDENCE_BYTES); should one
            # not be, the table goes on without it (the clocks settle what it carried) rather than
            # the command dying and every resume dying the same way.
            log.warning("could not send a %d-byte message: %s", len(output.data), exc)

    def _flush_forwards(self) -> None:
        forwards, self._forwards = self._forwards, []
        if self.mesh is None:
            return
        # The table may have ended (mesh closed) while these waited; gossip is best effort.
        with contextlib.suppress(MeshError):
            for data in forwards:
                self.mesh.broadcast(data, passed_on=True)

    # --- start, resume, run -------------------------------------------------------------------------

    def _restore(self, records: list[JSONObject]) -> list[Send]:
        """Replay the journal's records after its first (the table) into a fresh session; returns every
        message it had sent. I3: every record is shape-checked before the first is replayed, and a
        record of the wrong shape, or a replay that does not go as it went (a move no longer open, a
        draw of another size, entropy left over), raises `ResumeFailed` naming the journal, the line
        and the fault, never a bare KeyError or ValueError."""
        path = self.journal.path
        inputs = journal_inputs(records, len(self.peer_ids), self.me, path)
        self._replaying = deque(item.data for item in inputs if item.kind == "entropy")
        session = self.session
        assert session is not None
        sends: list[Send] = []

        def keep(outputs: list[Output]) -> None:
            sends.extend(o for o in outputs if isinstance(o, Send))

        for item in inputs:
            now = item.ms / 1000
            try:
                if item.kind == "start":
                    keep(session.start(now))
                elif item.kind == "in":
                    self._remember(hashlib.sha256(item.data).digest())
                    keep(session.receive(item.seat, item.data, now))
                elif item.kind == "link":
                    session.set_connected(item.seat, item.up, now)
                elif item.kind == "resumed":
                    keep(session.resumed(now, None if item.paused is None else item.paused / 1000))
                elif item.kind == "decide":
                    assert item.move is not None
                    keep(session.decide(session.game.move_from_json(item.move), now))
                elif item.kind == "tick":
                    keep(session.tick(now))
                elif item.kind == "settle":
                    keep(session.settle(now))
            except Exception as exc:  # whatever a diverged replay raises, this journal cannot go on (I3)
                why = f"line {item.line} ({item.kind!r}) does not replay: {type(exc).__name__}: {exc}"
                raise ResumeFailed(path, why) from exc
        if self._replaying:
            unused = [item.line for item in inputs if item.kind == "entropy"][-len(self._replaying) :]
            raise ResumeFailed(path, f"line {unused[0]}: the replay used fewer random draws than journaled "
                                     f"({len(unused)} left)")  # fmt: skip
        return sends

    def _journal_records(self) -> list[JSONObject]:
        """The journal of this seat at this table (empty: a new game), its first record checked to be
        this very table and seat. `ResumeFailed` if it cannot be read or is another's."""
        path = self.journal.path
        if not path.exists():
            return []
        try:
            records = self.journal.read()
        except StoreError as exc:
            raise ResumeFailed(path, str(exc)) from None
        if records and records[0].get("protocol") != PROTOCOL_VERSION:
            raise ResumeFailed(path, _other_version(records[0]))
        if records and records[0] != _table_record(self.plan, self.me):
            raise ResumeFailed(path, f"its first line is not the record of table {self.plan.table_id}, seat {self.me}")
        return records

    def _set_aside(self, failed: ResumeFailed) -> ResumeFailed:
        """Move a journal that cannot be resumed out of the way, so every command works again (I3)."""
        try:
            moved = self.journal.set_aside()
        except StoreError as exc:
            log.warning("%s; %s", failed, exc)
            return failed
        reported = ResumeFailed(failed.path, failed.why, moved)
        log.warning("%s", reported)
        return reported

    async def run(self) -> Outcome:
        """Play until the game ends or a blame stops it (the record is saved either way), or until
        this seat had no link for the whole reconnect limit, at once or in all while the table
        waited (`Outcome.network_lost`)."""
        seat_info = self.plan.seats[self.me]
        # A journal is replayed before anything is opened: one that cannot be resumed is set aside and
        # reported (`ResumeFailed`), with no socket or task left behind (I3).
        resent: list[Send] | None = None
        try:
            records = self._journal_records()
            if len(records) > 1:  # (a table record alone: stopped before the game started here)
                log.info("resuming table %s from %d journal records", self.settings.table, len(records))
                self.session = TableSession(self.settings, self.identity, time.time(), self._entropy)
                resent = self._restore(records[1:])
        except ResumeFailed as failed:
            self.session = None
            if self._trace is not None:
                self._trace.close()
            raise self._set_aside(failed) from failed.__cause__
        self.mesh = Mesh(
            self.identity,
            self.settings.table,
            [pid for seat, pid in enumerate(self.peer_ids) if seat != self.me],
            self._on_message,
            self._on_status,
        )
        peers = [(self.peer_ids[seat], info.address, info.port) for seat, info in enumerate(self.plan.seats)
                 if seat != self.me]  # fmt: skip
        try:
            await self.mesh.open(self.interface, seat_info.port, peers)  # all or nothing: closed if it fails
        except MeshError as exc:
            self.mesh = None
            if self._trace is not None:
                self._trace.close()
            raise LobbyError(f"cannot start table {self.settings.table}: {exc}") from exc
        except OSError as exc:
            # The other seats know this seat by the port it announced; another program holds it now.
            # The journal stays, so the same command resumes once the port is free (I3).
            await self.mesh.close()
            self.mesh = None
            if self._trace is not None:
                self._trace.close()
            raise PortTaken(
                f"cannot listen on {self.interface}:{seat_info.port}, this seat's port at table "
                f"{self.settings.table}: {exc.strerror or exc}. The game is kept: run the same command "
                "again once that port is free"
            ) from exc
        try:
            if self.session is not None and resent is not None:
                for send in resent:
                    self._send(send)
                self._sync_links()
                self._settle("resumed from the journal")
                self._wake.set()
            else:
                self.session = TableSession(self.settings, self.identity, time.time(), self._entropy)
                if not records:
                    self.journal.append(_table_record(self.plan, self.me))
                ms = self._ms()
                self.journal.append({"t": "start", "ms": ms})
                self._dispatch(self.session.start(ms / 1000))
                self._sync_links()
        except BaseException as exc:  # whatever fails at the start, nothing is left listening or dialling (I3)
            await self.mesh.close()
            if self._trace is not None:
                self._trace.close()
            if isinstance(exc, (ProtocolError, RuleError)):
                raise LobbyError(f"cannot start table {self.settings.table}: {exc}") from exc
            raise
        last = time.time()
        leaving = False
        try:
            while self.session.stage not in ("over", "ended") and not self._gave_up:
                if self.session.stage == "stopped":
                    until = self.session.listen_until()
                    if self._settle_verdict() or until is None or self._ms() / 1000 >= until + VERDICT_MARGIN:
                        break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(TICK):
                        await self._wake.wait()
                self._wake.clear()
                wall = time.time()
                if wall - last > SUSPEND_GAP:
                    self._settle(f"this process did not run for {wall - last:.1f} s (stopped, or the laptop slept)")
                last = wall
                self._tick()
                self._maybe_decide()
            # Gossip still waiting goes out now: the last message of the game may have come to this seat
            # alone, and completed its audit (red team 19 #6: a cheater's last secrets sent to one seat;
            # the others never had them and stopped while this one showed the game over). The drain
            # waits for it only on live links (`_drain`).
            self._flush_forwards()
            if not self._gave_up:
                await self._drain()
                leaving = True
        finally:
            if self._decider is not None and not self._decider.done():
                self._decider.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._decider
            # Only a seat for which the table is over says LEAVE (so the others need not wait to pass
            # it the last gossip); one that quits to resume (Ctrl-C, the journal kept) or gives up on the
            # network closes without it, and is waited for as a broken link (red team 22 #1).
            await self.mesh.close(leaving=leaving)
            if self._trace is not None:
                self._trace.close()
        return self._finish()

    def _settle_verdict(self) -> bool:
        """At `listen_until` the session settles its verdict (`TableSession.settle`). Not a time limit, so
        not held back while time is not judged (a link just back, the laptop just awake: `_judging_time`),
        and journaled, so a replay ends where this seat ended (red team 19 #1, #2: a runner that missed
        the settling tick, or resumed past it, showed its first conviction rather than the verdict)."""
        session = self.session
        assert session is not None
        until = session.listen_until()
        ms = self._ms()
        if session.stage != "stopped" or until is None or ms / 1000 < until:
            return False
        outputs = session.settle(ms / 1000)
        if outputs:
            self.journal.append({"t": "settle", "ms": ms}, sync=False)
            self._dispatch(outputs)
        return _ended(session)

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
                # A seat that left (the table is over for it: it said LEAVE, `Mesh.left_peers`) needs no
                # gossip from us, and waiting for it would hold every game's end for the whole timeout; a
                # link that only broke, or a seat that quit to resume, may come back within it and still
                # needs the last message passed on (red teams 21 #4, 22 #1). Our own last messages
                # (secrets the audit needs) are waited for whatever the link.
                while any(mesh.queued(pid, own_only=pid in mesh.left_peers()) for pid in self._drain_peers()):
                    await asyncio.sleep(0.05)

    def _drain_peers(self) -> list[str]:
        mesh = self.mesh
        assert mesh is not None and self.session is not None
        if self.session.stage in ("stopped", "ended"):
            # after a blame or a stop, a seat whose link is down (the one blamed for vanishing) acknowledges nothing
            return sorted(mesh.connected_peers())
        return [pid for seat, pid in enumerate(self.peer_ids) if seat != self.me]

    def _finish(self) -> Outcome:
        session = self.session
        assert session is not None
        verdict = session.settled_verdict()
        if verdict is not None and not self._verdict_told:
            # Ended in the replay of the journal (killed after the settle): what the others were told,
            # this seat's person is told too (red team 21 #6).
            self._dispatch([verdict])
        record = session.record()
        path = save_record(self.data_dir, self.settings.table, record.dumps()) if record.rounds else None
        if self._gave_up:  # not over: the journal stays open, and the next command resumes the game
            return Outcome(record, None, path, network_lost=True)
        self.journal.append({"t": "done"})
        return Outcome(record, session.blame, path, stopped=session.stopped if session.blame is None else None)

    # --- time away (I4) ----------------------------------------------------------------------------

    def _settle(self, why: str, paused_from_ms: int | None = None) -> None:
        """Judge no time until the links have had their chance to come up (module docstring).
        `paused_from_ms`: a network loss since then, for which the clocks move on by the pause only;
        a full restart (this process did not run) already pending stays one."""
        log.info("%s: judging no time limit until the links are back", why)
        settling = self._settle_until is not None
        full_pending = settling and self._paused_from_ms is None
        if paused_from_ms is None or full_pending:
            self._paused_from_ms = None
        elif settling and self._paused_from_ms is not None:
            # A second loss inside a network-back's settling: the pause runs from the first loss, so the
            # links' short blink between is not counted as linked time (red team 23, noted).
            self._paused_from_ms = min(self._paused_from_ms, paused_from_ms)
        else:
            self._paused_from_ms = paused_from_ms
        if not settling:
            # A settling already under way keeps its end: peers that drop every link again inside it
            # cannot hold it open, judging nothing, for ever (red team 24 #1).
            self._settle_from = time.monotonic()
            self._settle_until = self._settle_from + SETTLE_LIMIT

    def _judging_time(self) -> bool:
        """Whether the session may judge time limits now; ends a settling period when it is over."""
        session = self.session
        assert session is not None
        clock = time.monotonic()
        if self.n_others and not self.connected:
            # No link at all: this laptop lost the network (or everyone else did). Blame nobody; the
            # session, ticked while it knows every link is down, says so (`NetworkLost`) and judges nothing.
            if self._lost_since is None:
                self._lost_since = clock
                self._lost_from_ms = self._ms()
                self._was_linked = self.ever_linked
                if self.ever_linked:
                    log.warning("lost the network: no link to any other seat; blaming nobody while it lasts")
            elif clock - self._lost_since > self.settings.reconnect_timeout:
                gone = clock - self._lost_since
                log.warning("no link for %.0f s: leaving the table unfinished (it can be resumed)", gone)
                self._gave_up = True
            # Ticked only to say `NetworkLost`: so only once it was told every link is down (a drop held
            # back by `LINK_CHANGE_INTERVAL` would leave a seat "up" there, judged on clocks no pause has
            # moved yet), and never while a settling waits for `resumed` (red team 25 #1, #2: a blink
            # inside it claimed a seat for this laptop's own outage). Before the first link there is no
            # network to have lost.
            told_down = all(seat in session.disconnected for seat in range(len(self.peer_ids)) if seat != self.me)
            return self.ever_linked and self._settle_until is None and told_down
        if self._lost_since is not None:
            self._lost_since = None
            if self._was_linked:  # (the first link of all restarts nothing: the clocks started with the game)
                self._settle("a link is back after the network was lost", self._lost_from_ms)
        if self._settle_until is None:
            return True
        everyone = len(self.connected) == self.n_others
        if clock < self._settle_until and not (everyone and clock - self._settle_from >= SETTLE_MIN):
            return False
        self._settle_until = None
        ms = self._ms()
        record: JSONObject = {"t": "resumed", "ms": ms}
        paused: float | None = None
        if self._paused_from_ms is not None:
            paused_ms = record["paused"] = max(0, ms - self._paused_from_ms)
            paused = paused_ms / 1000
        self.journal.append(record, sync=False)
        log.info("links up for %d of %d seats: time limits start again now", len(self.connected), self.n_others)
        self._dispatch(session.resumed(ms / 1000, paused))
        self._sync_links()  # the session counts every link as up after `resumed`: say which are not
        return True

    @property
    def n_others(self) -> int:
        return len(self.peer_ids) - 1

    @property
    def network_lost(self) -> bool:
        """No link to any other seat, after there had been one (the UI says "lost the network")."""
        return self.ever_linked and self.n_others > 0 and not self.connected

    def _sync_links(self) -> None:
        """Tell a fresh (or just replayed, or `resumed`) session which links are up right now, where it
        holds otherwise (a fresh or `resumed` session counts every link as up; a replayed one, as its
        journal left it). Every such seat, whatever `LINK_CHANGE_INTERVAL`: this comes only at a start,
        a resume, or back from a suspend or a network loss; and only those, so that a network that
        blinks costs no record for a link that is where the session holds it (red team 22 #6)."""
        session = self.session
        assert session is not None
        ms = self._ms()
        for seat in range(len(self.peer_ids)):
            if seat != self.me:
                up = self._told_up[seat] = seat in self.connected
                if up == (seat not in session.disconnected):
                    continue
                self.journal.append({"t": "link", "seat": seat, "up": up, "ms": ms}, sync=False)
                session.set_connected(seat, up, ms / 1000)

    def _tell_links(self) -> None:
        """Tell the session (and the journal) of each link that went up or down since it was last told: a
        link back at once, a link down at most once per `LINK_CHANGE_INTERVAL` per seat (I6); a down held
        back is told at a later loop turn if the link is still down by then (a flap that came and went is
        no change at all)."""
        session = self.session
        assert session is not None
        ms = self._ms()
        for seat in range(len(self.peer_ids)):
            if seat == self.me:
                continue
            up = seat in self.connected
            if self._told_up.get(seat, True) == up:
                continue
            if not up:
                # On the session's clock (the wall clock, as journaled); one set back tells at once.
                if 0 <= ms / 1000 - self._told_at.get(seat, float("-inf")) < LINK_CHANGE_INTERVAL:
                    continue
                self._told_at[seat] = ms / 1000
            self._told_up[seat] = up
            self.journal.append({"t": "link", "seat": seat, "up": up, "ms": ms}, sync=False)
            session.set_connected(seat, up, ms / 1000)  # a seat back gets a fresh limit

    # --- mesh callbacks ----------------------------------------------------------------------------

    def _on_message(self, peer_id: str, data: bytes) -> None:
        seat = self.seat_of.get(peer_id)
        if seat is not None:
            self._receive(seat, data)

    def _on_status(self, peer_id: str, connected: bool) -> None:
        seat = self.seat_of.get(peer_id)
        if seat is None:
            return
        if connected:
            self.connected.add(seat)
            self.ever_linked = True
        else:
            self.connected.discard(seat)
        if self.session is not None:  # before the session exists, `_sync_links` tells it
            self._tell_links()
        self._wake.set()

    # --- for the UI --------------------------------------------------------------------------------

    def waiting_text(self) -> str:
        """'waiting for Bob', 'waiting for Bob's laptop to reconnect', or that this laptop lost the network."""
        if self.network_lost:
            return "lost the network: no link to any other seat (blaming nobody; waiting for it to come back)"
        session = self.session
        waiting: Waiting | None = session.waiting() if session else None
        if waiting is None or not waiting.seats:
            return ""
        names = [shown(self.settings.names[s]) for s in waiting.seats if s != self.me]
        if not names:
            return ""
        gone = [shown(self.settings.names[s]) for s in waiting.seats if s != self.me and s not in self.connected]
        if gone:
            return f"waiting for {', '.join(gone)}'s laptop to reconnect"
        return f"waiting for {', '.join(names)} ({waiting.what})"


def _ended(session: TableSession) -> bool:
    """Read apart from the checks before it, which narrow the session's stage for the type checker."""
    return session.stage == "ended"


def _own_output(output: Output) -> bool:
    """A message of this seat's own, or a verdict: what a replay of the journal must reproduce."""
    return isinstance(output, Blamed | Stopped) or (isinstance(output, Send) and not output.forward)


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


@dataclass(frozen=True, slots=True)
class JournalInput:
    """One journaled input of this seat, shape-checked (I3); ``line`` is its line in the journal."""

    line: int
    kind: str  # one of INPUT_KINDS
    ms: int = 0  # when it was handled (wall clock, milliseconds)
    data: bytes = b""  # entropy: the bytes drawn; in: the message received
    seat: int = -1  # in: the seat it came from; link: the seat whose link changed
    up: bool = False  # link: whether it came up
    move: JSONObject | None = None  # decide: the move, as the game writes it
    paused: int | None = None  # resumed: milliseconds of a network loss (the clocks move on), or a full restart


# What the runner journals after the table record, and the fields each kind must carry.
INPUT_KINDS: dict[str, tuple[str, ...]] = {
    "start": ("ms",),
    "entropy": ("hex",),
    "in": ("from", "data", "ms"),
    "link": ("seat", "up", "ms"),
    "resumed": ("ms",),
    "decide": ("move", "ms"),
    "tick": ("ms",),
    "settle": ("ms",),
    "done": (),
}


def journal_inputs(
    records: list[JSONObject], seats: int, me: int, path: Path, first_line: int = 2
) -> list[JournalInput]:
    """The records of a journal after its table record (the first of them on line ``first_line``),
    each checked to be of the shape the runner writes: `ResumeFailed` naming the line and what is
    wrong with it otherwise (a hand edit, another version, a bug). Nothing is replayed from a journal
    before all of it passed (I3)."""
    inputs: list[JournalInput] = []
    for line, record in enumerate(records, start=first_line):
        kind = record.get("t")
        try:
            if not isinstance(kind, str) or kind not in INPUT_KINDS:
                raise ProtocolError("P-5.4", f"a record of kind {str(kind)[:40]!r}, which this version does not write")
            if (kind == "start") != (line == first_line):
                raise ProtocolError("P-5.4", "the start must be the first record after the table, and only there")
            missing = [name for name in INPUT_KINDS[kind] if name not in record]
            if missing:
                raise ProtocolError("P-5.4", f"a {kind!r} record without {', '.join(missing)}")
            ms = check_int(record["ms"], "ms", "P-5.4") if "ms" in INPUT_KINDS[kind] else 0
            if kind == "entropy":
                inputs.append(JournalInput(line, kind, data=h2b(record["hex"], None, "hex")))
            elif kind == "in":
                seat = check_int(record["from"], "from", "P-5.4", 0, seats - 1)
                if seat == me:
                    raise ProtocolError("P-5.4", "a message from this very seat")
                inputs.append(JournalInput(line, kind, ms, data=h2b(record["data"], None, "data"), seat=seat))
            elif kind == "link":
                seat = check_int(record["seat"], "seat", "P-5.4", 0, seats - 1)
                if seat == me or not isinstance(record["up"], bool):
                    raise ProtocolError("P-5.4", "a link record names another seat and whether its link is up")
                inputs.append(JournalInput(line, kind, ms, seat=seat, up=record["up"]))
            elif kind == "decide":
                move = record["move"]
                if not isinstance(move, dict):
                    raise ProtocolError("P-5.4", "a decision's move is an object")
                inputs.append(JournalInput(line, kind, ms, move=move))
            elif kind == "resumed":
                paused = None if "paused" not in record else check_int(record["paused"], "paused", "P-5.4")
                inputs.append(JournalInput(line, kind, ms, paused=paused))
            elif kind != "done":
                inputs.append(JournalInput(line, kind, ms))
        except ProtocolError as exc:
            raise ResumeFailed(path, f"line {line} is not a record this runner wrote: {exc.message}") from None
    return inputs


def _table_record(plan: TablePlan, seat: int) -> JSONObject:
    """A journal's first line: which table and seat, and the protocol its messages speak."""
    return {"t": "table", "plan": plan.to_json(), "seat": seat, "protocol": PROTOCOL_VERSION}


def _other_version(first: JSONObject) -> str:
    """Why a journal of another protocol version is not replayed: its peers' honest messages of
    that version would read as faults under this one, and blame them."""
    found = first.get("protocol", 1)
    return f"it was written by table protocol version {shown(str(found))[:20]}; this lanplay speaks {PROTOCOL_VERSION}"


def unfinished_journal(data_dir: Path) -> tuple[TablePlan, Path] | None:
    """The table this installation was playing when it stopped, if its game has not ended. A journal
    that could not be resumed (damaged, a plan that does not verify, a record of the wrong shape) is
    set aside (`Journal.set_aside`) with a warning, so that it is not offered again and every command
    works as before (I3); `lanplay where` lists what was set aside."""
    folder = data_dir / "journals"
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            records = Journal(path).read()
            if not records or records[-1].get("t") == "done":
                continue
            first = records[0]
            if first.get("t") != "table" or "plan" not in first:
                raise ResumeFailed(path, "its first line is not a table record")
            if first.get("protocol") != PROTOCOL_VERSION:
                raise ResumeFailed(path, _other_version(first))
            try:
                plan = TablePlan.from_json(first["plan"])
                plan.verify()
                seat = check_int(first.get("seat"), "seat", "P-5.4", 0, len(plan.seats) - 1)
            except ProtocolError as exc:
                raise ResumeFailed(path, f"its table plan is not valid: {exc.message}") from None
            journal_inputs(records[1:], len(plan.seats), seat, path)
            return plan, path
        except StoreError as exc:  # (ResumeFailed among them) I3: say why, and leave the other commands usable
            failed = exc if isinstance(exc, ResumeFailed) else ResumeFailed(path, str(exc))
            try:
                moved = Journal(path).set_aside()
            except StoreError as aside:
                log.warning("%s (%s)", failed, aside)
                continue
            log.warning("%s", ResumeFailed(path, failed.why, moved))
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
