"""The runner: one asyncio task per seat that turns the mesh, the clock and the player into input
events for the protocol's `TableSession` and sends what it hands back. Nothing game-specific lives here,
and it reads nothing of the session but its public queries.

Journal (P-5.6). A seat's journal is its table record (the signed plan, the seat, the seed all of the
session's randomness comes from) followed by the input events that mattered: every message the session
kept, every decision, stop, leave and wait note. Each is on disk (fsync) before anything it caused
leaves this process, and the session is a deterministic function of them, so a seat killed at any
point and started again replays its journal into a fresh session, reaches exactly the state it had and
can never sign two versions of one step. Ticks sign nothing and are not journaled; links are told anew.

Time only waits (P-5.5). The session says what it waits for (`waiting`) and when the table's patience
for an owed step has run out (`due`); the runner then feeds the stop back as an input, journaled like
any other. A stop convicts nobody. With no link at all the seat says it lost the network and blames
nobody; after the patience it leaves the table unfinished, and the next `lanplay` command resumes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import logging
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.api import IllegalMove, RuleError
from engine.record import GameRecord
from lanplay.base.store import (
    BOTS_DIR,
    Journal,
    ResumeFailed,
    StoreError,
    journal_path,
    record_label,
    save_identity,
    save_record,
)
from lanplay.base.text import shown
from lanplay.games import make_bot
from lanplay.net.lobby import LobbyError, TablePlan
from lanplay.net.mesh import Mesh, MeshError
from lanplay.table.trace import Trace
from protocol.continuation import Continuation, Offer, TakeBack, decide, late_digest, make_offer, settle_owed
from protocol.encoding import JSONObject, canonical, check_int, decode, h2b
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.table import (
    PROTOCOL_VERSION,
    Decided,
    Event,
    Exposed,
    Finished,
    Halt,
    Input,
    Leave,
    LinkChanged,
    NetworkLost,
    NoteWaiting,
    Output,
    Received,
    RoundConfirmed,
    Send,
    Start,
    StopFor,
    Stopped,
    TableSession,
    Tick,
)
from protocol.table.messages import OWED_WORDS

log = logging.getLogger(__name__)

TICK = 0.25  # how often time is given to the session
GONE_AFTER = 30.0  # at least this long with no seat answering a resumed table before it counts as gone
FORWARD_DELAY = 0.05  # another seat's message passed on a moment later: the original usually comes first
DRAIN_TIMEOUT = 5.0  # at the end, how long to wait for the others to acknowledge our last messages
MAX_SEEN = 1 << 16  # digests of handled messages kept to drop gossip's copies before the session reads them
AUTHOR_PREFIX = b'{"author":"'  # a signed message's wire form (canonical JSON, keys sorted) starts with its author


class LocalPlayer(Protocol):
    """Whoever decides for this seat: a bot, a person at a terminal, the UI."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any: ...


_handed_out: set[int] = set()
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
ANNOUNCED_PORTS = 12_000  # how many ports below the ephemeral range a seat's port is drawn from


def announced_port_range() -> range:
    """Ports a seat announces and listens on: just below the kernel's ephemeral range, so that no
    outgoing connection (the other seats' redials to this one among them) takes it while it restarts."""
    try:
        low = int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - ANNOUNCED_PORTS), max(1024, low))


GO_ON_PREFIX = b'{"go-on'  # canonical JSON of an offer or a continuation's signature (`go_on`)
MAX_SETTLE_TRIES = 4  # sets of late secrets settled per returning seat (`OwedSecrets`)
MAX_LATE_PROOFS = 8  # proofs judged per sender, and kept to pass on, per ended table (`OwedSecrets`)
MAX_GO_ON_BYTES = 256 << 10  # a whole signed continuation, with the rounds played so far (the mesh's limit)


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
                continue
            port = int(probe.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise AssertionError("unreachable: the draws end in an endless repeat")


class PortTaken(StoreError):
    """The port this seat announced is taken by another program: the journal stays for the next try."""


@dataclass(frozen=True)
class Outcome:
    """How a table ended at this seat."""

    record: GameRecord  # the confirmed rounds
    record_path: Path | None
    finished: bool = False  # every present seat signed the same record (P-5.8)
    complete: bool = False  # ... and the game reached its end
    exposed: tuple[str, ...] = ()  # one line per exposed seat: who, by which rule
    stops: tuple[Stopped, ...] = ()  # every stop and leave of the game
    network_lost: bool = False  # no link for the table's patience: not over, it can be resumed
    left: bool = False  # this seat's person left the table
    table_gone: bool = False  # resumed, and no other seat answered: the table ended without this laptop


class OwedSecrets:
    """The ended table a continuation goes on from, as this laptop's session of it holds it: where a returning
    person's late secrets for its stopped round are settled (`settle_owed`) before a seat of this laptop holds
    that person's take-back (P-5.5, P-5.7), and where the proofs they bring are kept and passed on (P-5.4). One
    per laptop, shared by its seats at the continuation. A proof is written into that table's record (outside
    its digest, P-5.8)."""

    def __init__(self, session: TableSession, data_dir: Path) -> None:
        self.session = session
        self.data_dir = data_dir
        self._settled: dict[tuple[int, str], bool] = {}
        self.proofs: list[bytes] = []  # the proofs found or taken here that exposed a seat, each once, to pass on
        self._tried: dict[int, int] = {}  # proofs taken from each sender

    def settle(self, seat: int, late: Sequence[JSONObject]) -> bool:
        """True if `late` publishes seat `seat`'s secrets there and nothing exposed it (each set once)."""
        key = (seat, late_digest(late))
        if key not in self._settled and sum(tried == seat for tried, _ in self._settled) >= MAX_SETTLE_TRIES:
            return False  # P-6.6: a few tries a seat, each of a bounded size
        if key not in self._settled:
            exposed = set(self.session.convictions)
            found: list[bytes] = []
            self._settled[key] = settle_owed(self.session, seat, late, time.time(), found)
            self._keep(found, exposed)
        return self._settled[key] and seat not in self.session.convictions

    def take_proof(self, sender: int, data: bytes) -> bool:
        """A proof seat `sender` found settling late secrets (P-5.4): judged here as any proof that seat passes
        on (the seats keep their order from one table to the next); True if it exposed a seat here, and only
        then kept to pass on. A few tries a sender (P-6.6): junk never crowds out a proof that holds."""
        tried = self._tried.get(sender, 0)
        if data in self.proofs or tried >= MAX_LATE_PROOFS or not data.startswith(b'{"proof":'):
            return False
        self._tried[sender] = tried + 1
        exposed = set(self.session.convictions)
        self.session.handle(Received(sender, data, time.time()))
        if set(self.session.convictions) == exposed:
            return False
        self._keep([data], exposed)
        return True

    def settled(self, seat: int, late: Sequence[JSONObject]) -> bool:
        """Whether this very late set was settled here (one of the few tries a seat has)."""
        return (seat, late_digest(late)) in self._settled

    def _keep(self, found: list[bytes], exposed: set[int]) -> None:
        for data in found:
            if data not in self.proofs and len(self.proofs) < MAX_LATE_PROOFS:
                self.proofs.append(data)
        session = self.session
        new = set(session.convictions) - exposed
        if new:
            settings = session.settings
            label = record_label(settings.game, settings.names)
            with contextlib.suppress(StoreError):
                save_record(self.data_dir, settings.table, _dumps(session.record_json()), label)
            lines = session.convicted_lines()
            log.warning("late secrets settled at table %s exposed: %s", settings.table, "; ".join(lines))


class TableRunner:
    """Runs one seat of one table to the end of the game."""

    def __init__(
        self,
        plan: AnyPlan,
        identity: Identity,
        data_dir: Path,
        player: LocalPlayer,
        interface: str,
        *,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        try:
            check_plan(plan, identity.public.hex())  # P-6.7: every seat signed it; its seat order is the drawn one
        except ProtocolError as exc:
            raise LobbyError(f"refusing to play table {plan.table_id}: {exc.message}") from None
        try:
            plan.verify()
            self.agreed = True  # every seat signed it: this seat may deal (else it waits for them, `run`)
        except ProtocolError:
            self.agreed = False
        self.plan = plan
        self.identity = identity
        self.data_dir = data_dir
        self.player = player
        self.interface = interface
        self.settings = plan.settings()  # the patience too: the same at every seat (P-5.5)
        keys = [s.public_key for s in plan.seats]
        self.me = keys.index(identity.public.hex())
        self.peer_ids = [p.peer_id for p in self.settings.seats]
        self.seat_of = {pid: seat for seat, pid in enumerate(self.peer_ids)}
        self.journal = Journal(journal_path(data_dir, self.settings.table, self.me))
        self.listeners: list[Callable[[Event], None]] = [on_event] if on_event else []
        self.session: TableSession | None = None
        self.mesh: Mesh | None = None
        self._seen: dict[bytes, set[int]] = {}  # digest of a message handled -> the seats that sent us these bytes
        self._wake = asyncio.Event()
        self._decider: asyncio.Task[None] | None = None
        self._forwards: list[bytes] = []
        self.connected: set[int] = set()
        self.ever_linked = False
        self._lost_since: float | None = None
        self._gave_up = False
        self._resumed_run = False  # this run resumed a journal
        self.table_gone = False  # resumed, and no other seat ever answered: the table ended without this laptop
        self._leaving = False
        self.stops: list[Stopped] = []
        self._waiting_from = 0.0  # wall time since when this seat has been running and linked (a stop waits a patience)
        self._trace = Trace.from_env(self.me)  # timing lines for scripts/bench_net.py ($LANPLAY_TRACE)
        # P-5.7: whether the mesh stays open after a table that ended early, for `go_on`; and what the
        # other seats said about going on (offers, and signatures on the continuation, by table id).
        self.may_go_on = False
        self._asked_go_on = False  # go_on is asked once: its mesh is closed after
        self._offers: dict[int, JSONObject] = {}
        self._go_on_sigs: dict[tuple[str, int], str] = {}  # this seat's own signatures on a continuation
        self._go_on_sent: dict[int, list[tuple[str, int, str]]] = {}  # from each seat: (table, signer, signature)
        self._go_on_plans: dict[int, JSONObject] = {}  # from each seat: a continuation it holds signed by all
        # Taking a seat back (P-5.7): the take-backs this seat holds for this table, by seat; whether this seat
        # (a bot in a seat its person asks back) leaves at the end of the round; who hears of the continuation.
        self.take_backs: dict[int, TakeBack] = {}
        self.owed: OwedSecrets | None = None  # where late secrets are settled: the table this one goes on from
        self._owed_looked = False  # a laptop started again looked for that table's journal once
        self._late_told: set[str] = set()  # digests of the late sets passed on from here
        self.local_bots: list[TableRunner] = []  # bot seats resumed with this one (`resume_table`)
        self.desk: Any = None  # the take-back desk a resume opened (`lanplay.table.takeback.BackDesk`)
        # Seats sitting here that the table before has exposed since (late secrets brought the proof): this seat
        # stops the round and ends the game at the go-on (P-5.4, P-5.7).
        self.barred: set[int] = set()
        self._leave_at_round_end = False
        self.on_continuation: Callable[[Continuation, bool], None] | None = None

    # --- events in, outputs out ----------------------------------------------------------------------
    def _handle(self, event: Input, record: JSONObject | None) -> tuple[Output, ...]:
        """Hand one event to the session; journal it (when `record` is given) if the session kept it or
        it made this seat sign, before anything it caused leaves."""
        session = self.session
        assert session is not None
        outputs = session.handle(event)
        own = any(isinstance(o, Send) and not o.forward for o in outputs)
        if record is not None and (own or session.last_kept or not isinstance(event, Received)):
            self.journal.append(record, sync=False)
            if own:
                self.journal.sync()
        self._dispatch(outputs)
        return outputs

    def _now(self) -> tuple[int, float]:
        ms = int(time.time() * 1000)
        return ms, ms / 1000

    def _receive(self, seat: int, data: bytes) -> None:
        if data.startswith(GO_ON_PREFIX):
            self._go_on_received(seat, data)
            return
        digest = hashlib.sha256(data).digest()
        holders = self._seen.get(digest)
        if holders is not None:
            holders.add(seat)  # it holds these bytes: nothing to pass on to it
            return  # a copy already handled (gossip sends each message several ways)
        if self.session is None:
            return
        self._seen[digest] = {seat}
        if len(self._seen) > MAX_SEEN:
            del self._seen[next(iter(self._seen))]
        ms, now = self._now()
        self._handle(Received(seat, data, now), {"t": "in", "from": seat, "data": data.hex(), "ms": ms})

    async def submit(self, move: Any) -> None:
        """The local player's move (IllegalMove if it is not open to them now)."""
        session = self.session
        assert session is not None
        if move not in session.decision():
            raise IllegalMove("P-5.1", "that move is not open to you now")
        move_json = session.game.move_to_json(move)
        if self._trace is not None:
            self._trace.submit()
        ms, now = self._now()
        self._handle(Decided(move_json, now), {"t": "decide", "move": move_json, "ms": ms})

    async def leave(self) -> None:
        """This seat's person leaves: a signed leave, then its secrets; the others go on (P-5.7)."""
        if self.session is None or self._leaving:
            return
        ms, now = self._now()
        self._handle(Leave(now), {"t": "leave", "ms": ms})
        self._leaving = True
        self._wake.set()

    def _tick(self) -> None:
        session = self.session
        assert session is not None
        ms, now = self._now()
        self._dispatch(session.handle(Tick(now)))
        if self.n_others and not self.connected:
            if self._lost_since is None:
                self._lost_since = time.monotonic()
                if self.ever_linked:
                    log.warning("lost the network: no link to any other seat; blaming nobody while it lasts")
                    self._dispatch((NetworkLost(now),))
            elif (
                self._resumed_run
                and not self.ever_linked
                and time.monotonic() - self._lost_since > max(2 * self.settings.patience, GONE_AFTER)
            ):
                # Resumed, and no seat of the table ever answered: the others ended it, or went on
                # without this laptop. Said so, and not offered again (its rounds so far are kept).
                log.warning("no seat of table %s answered after a resume: the table is gone", self.settings.table)
                self._gave_up = self.table_gone = True
            elif self.ever_linked and time.monotonic() - self._lost_since > self.settings.patience:
                log.warning(
                    "no link for %.0f s: leaving the table unfinished (it can be resumed)", self.settings.patience
                )
                self._gave_up = True
            return  # with no link, nobody is waited out: the table is this laptop's to find again
        if self._lost_since is not None:  # links again after none at all: this laptop's outage counts against nobody
            self._waiting_from = now
        self._lost_since = None
        # Only time this seat was here to wait counts: not the time it was killed or had no link at all.
        due = session.due(now) if now - self._waiting_from >= self.settings.patience else None
        if due is not None:
            self._handle(due, {"t": "stop", "seat": due.seat, "owed": due.owed, "to": due.to, "ms": ms})
        if session.note_due(now):
            self._handle(NoteWaiting(now), {"t": "note", "ms": ms})

    def _dispatch(self, outputs: tuple[Output, ...]) -> None:
        if not outputs:
            return
        if self._trace is not None and self.session is not None:
            self._trace.phase(self.session)
        for output in outputs:
            if isinstance(output, Send):
                self._send(output)
            else:
                if isinstance(output, RoundConfirmed) and self._leave_at_round_end:
                    self._leave_at_round_end = False  # its person takes the seat back: a bot leaves (P-5.7)
                    asyncio.get_running_loop().create_task(self.leave())
                if isinstance(output, Stopped):
                    self.stops.append(output)
                if self._trace is not None:
                    self._trace.event(output)
                for listener in self.listeners:
                    listener(output)
        self._wake.set()

    def _send(self, output: Send) -> None:
        mesh = self.mesh
        if mesh is None:
            return
        if output.forward and output.to is None:
            self._forwards.append(output.data)
            if len(self._forwards) == 1:
                asyncio.get_running_loop().call_later(FORWARD_DELAY, self._flush_forwards)
            return
        # P-5.2: the messages our own names go out before it, so every gossip copy waiting goes first.
        self._flush_forwards()
        try:
            if output.to is None:
                mesh.broadcast(output.data)
            else:
                mesh.send(self.peer_ids[output.to], output.data)
        except MeshError as exc:
            log.warning("could not send a %d-byte message: %s", len(output.data), exc)

    def _flush_forwards(self) -> None:
        forwards, self._forwards = self._forwards, []
        if self.mesh is None:
            return
        with contextlib.suppress(MeshError):
            for data in forwards:
                self.mesh.broadcast(data, passed_on=True, skip=self._holders(data))

    def _holders(self, data: bytes) -> set[str]:
        """Peers known to hold these very bytes: their author (a signed message's, which it signed) and
        every seat that sent them here. Passing a message on to them would only be a copy they drop;
        every other seat still gets it, so gossip reaches whoever the author left out (P-5.2), and the
        versions of a fork differ in their bytes, so each still goes to every seat not known to hold it."""
        seats = set(self._seen.get(hashlib.sha256(data).digest(), ()))
        if data.startswith(AUTHOR_PREFIX):
            end = data.find(b'"', len(AUTHOR_PREFIX))
            author = self.seat_of.get(data[len(AUTHOR_PREFIX) : end].decode("ascii", "replace")) if end > 0 else None
            if author is not None:
                seats.add(author)
        return {self.peer_ids[seat] for seat in seats if seat != self.me}

    # --- start, resume, run ----------------------------------------------------------------------------
    def _restore(self, records: list[JSONObject]) -> TableSession:
        """A fresh session with the journal's seed, fed every journaled input again. Every record is
        shape-checked before the first is replayed; one that does not replay raises `ResumeFailed`
        naming the line (P-6.3)."""
        path = self.journal.path
        seed = _seed_of(records[0], path)
        inputs = journal_inputs(records[1:], len(self.peer_ids), self.me, path)
        session = TableSession(self.settings, self.identity, seed)
        for line, event in inputs:
            try:
                session.handle(event)
            except Exception as exc:
                raise ResumeFailed(path, f"line {line} does not replay: {type(exc).__name__}: {exc}") from exc
        return session

    def _journal_records(self) -> list[JSONObject]:
        path = self.journal.path
        if not path.exists():
            return []
        try:
            records = self.journal.read()
        except StoreError as exc:
            raise ResumeFailed(path, str(exc)) from None
        if records and records[0].get("protocol") != PROTOCOL_VERSION:
            raise ResumeFailed(path, _other_version(records[0]))
        if records and not _records_table(records[0], self.plan, self.me):
            raise ResumeFailed(path, f"its first line is not the record of table {self.plan.table_id}, seat {self.me}")
        return records

    def _set_aside(self, failed: ResumeFailed) -> ResumeFailed:
        try:
            moved = self.journal.set_aside()
        except StoreError as exc:
            log.warning("%s; %s", failed, exc)
            return failed
        reported = ResumeFailed(failed.path, failed.why, moved)
        log.warning("%s", reported)
        return reported

    async def run(self) -> Outcome:
        """Play until the table is finished (every present seat signed its end), this seat's person
        left, or this seat had no link for the table's patience (`Outcome.network_lost`)."""
        seat_info = self.plan.seats[self.me]
        try:
            records = self._journal_records()
            if len(records) > 1:
                log.info("resuming table %s from %d journal records", self.settings.table, len(records))
                self.session = self._restore(records)
        except ResumeFailed as failed:
            self.session = None
            raise self._set_aside(failed) from failed.__cause__
        resumed = self._resumed_run = self.session is not None
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
            raise LobbyError(f"cannot start table {self.settings.table}: {exc}") from exc
        except OSError as exc:
            # The other seats know this seat by the port it announced; another program holds it now.
            # The journal stays, so the same command resumes once the port is free (P-6.3).
            await self.mesh.close()
            self.mesh = None
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise PortTaken(
                f"cannot open this seat's link at {self.interface}:{seat_info.port} for table "
                f"{self.settings.table}: {why}. The game is kept: run the same command again"
            ) from exc
        if not resumed and not self.agreed and not await self._until_agreed():
            await self.mesh.close()
            log.warning("no seat showed the continuation signed by every seat: table %s is gone", self.settings.table)
            self.table_gone = True
            if records:
                self.journal.append({"t": "done"})
            return self._empty_outcome()
        try:
            if not resumed:
                seed = secrets.token_bytes(32)
                if not records:
                    self.journal.append({**_table_record(self.plan, self.me), "seed": seed.hex()})
                else:  # a table record alone: stopped before the game started here; its seed stands
                    seed = _seed_of(records[0], self.journal.path)
                self.session = TableSession(self.settings, self.identity, seed)
                ms, now = self._now()
                self._handle(Start(now), {"t": "start", "ms": ms})
        except BaseException as exc:  # whatever fails at the start, nothing is left listening or dialling
            await self.mesh.close()
            if isinstance(exc, ProtocolError | RuleError):
                raise LobbyError(f"cannot start table {self.settings.table}: {exc}") from exc
            raise
        session = self.session
        assert session is not None
        for seat in range(len(self.peer_ids)):  # every link counts as down until the mesh says it is up
            if seat != self.me and seat not in self.connected:
                self._dispatch(session.handle(LinkChanged(seat, False, self._now()[1])))
        if resumed:
            self._waiting_from = time.time()  # the clocks in the journal ran on while this seat was not running
            self._wake.set()
        try:
            while not session.finished and not self._gave_up and not (self._leaving and self._left_done()):
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(TICK):
                        await self._wake.wait()
                self._wake.clear()
                self._tick()
                self._maybe_decide()
            self._flush_forwards()
            if not self._gave_up:
                await self._drain()
        finally:
            if self._decider is not None and not self._decider.done():
                self._decider.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._decider
            if not self.can_go_on():
                await self.mesh.close(leaving=not self._gave_up)
            if self._trace is not None:
                self._trace.close()
        return self._finish()

    @property
    def resumed(self) -> bool:
        """This run started from a journal (a crash, a kill, a closed lid), not a new table."""
        return self._resumed_run

    # --- going on after a table that ended early (P-5.7) ------------------------------------------------
    def can_go_on(self) -> bool:
        """The mesh stays open for `go_on`: the table ended before its game, and this seat is present."""
        session = self.session
        return (
            self.may_go_on
            and not self._asked_go_on
            and session is not None
            and session.finished
            and not session.complete
            and not self._gave_up
            and self.me in session.present()
            and len(session.present()) < len(self.peer_ids)
        )

    def _go_on_received(self, seat: int, data: bytes) -> None:
        """An offer to go on, or a signature on a continuation, from seat `seat` (kept, one each)."""
        try:
            raw = decode(data, MAX_GO_ON_BYTES)
        except ProtocolError:
            return
        offer, sig, whole = raw.get("go-on"), raw.get("go-on-sig"), raw.get("go-on-plan")
        if "go-on-proof" in raw and len(raw) == 1:
            proof = raw["go-on-proof"]
            owed = self.owed
            if owed is not None and isinstance(proof, str) and len(proof) <= 2 * MAX_GO_ON_BYTES:
                with contextlib.suppress(ValueError):
                    data = bytes.fromhex(proof)
                    if owed.take_proof(seat, data) and self.mesh is not None:
                        with contextlib.suppress(MeshError):
                            self.mesh.broadcast(canonical({"go-on-proof": proof}))
                    self._drop_exposed()
        elif "go-on-back" in raw and set(raw) <= {"go-on-back", "late"}:
            late = raw.get("late", [])
            if isinstance(late, list) and all(isinstance(m, dict) for m in late):
                with contextlib.suppress(ProtocolError):
                    self.hold_back(TakeBack.from_json(raw["go-on-back"]), late, tell=False)
        elif isinstance(offer, dict) and seat not in self._offers and len(raw) == 1:
            self._offers[seat] = offer
        elif isinstance(whole, dict) and len(raw) == 1:
            self._go_on_plans[seat] = whole  # the latest whole signed continuation from this seat
        elif isinstance(sig, dict) and len(raw) == 1:
            table, signer, signature = sig.get("table"), sig.get("seat"), sig.get("sig")
            if isinstance(table, str) and isinstance(signer, int) and isinstance(signature, str):
                # Kept per sender (a few each): another seat's junk never takes the place of the signature
                # the signer sends; the one that holds is picked once the continuation is known.
                mine = self._go_on_sent.setdefault(seat, [])
                if len(mine) < 2 * len(self.peer_ids):
                    mine.append((table, signer, signature))
        self._wake.set()

    def hold_back(self, back: TakeBack, late: Sequence[JSONObject] = (), tell: bool = True) -> bool:
        """A person who left asks for their seat back at the table that goes on from this one (P-5.7): kept
        if it holds here (signed on this table by the key its seat's plan left it to), one per seat; a seat
        that owes the stopped round's secrets of the table before, only if `late` (the messages the request
        names) publishes them there and nothing exposed it (`OwedSecrets`). `tell`: passed on to every seat.
        Every late set settled here is passed on, held or not, with the proofs it brought, so every seat
        settles the same sets and exposes the same seats (P-5.4, P-6.2); one that exposes the seat drops the
        request held for it. The bot in that seat leaves at the end of the round, so the table ends and the
        seats go on with the person back. False if it does not hold or the seat has one already."""
        plan = self.plan
        left, owes = (plan.left, plan.owes) if isinstance(plan, Continuation) else ({}, ())
        if not back.holds(self.settings.table, left):
            return False
        if back.seat in owes:
            if self.owed is None and not self._owed_looked and isinstance(plan, Continuation):
                self._owed_looked = True  # a laptop started again: that table's journal, replayed once
                self.owed = owed_from_journal(plan, self.identity, self.data_dir)
            owed = self.owed
            if not back.owed or late_digest(late) != back.owed or owed is None:
                return False
            told = len(owed.proofs)
            settled = owed.settle(back.seat, late)
            if owed.settled(back.seat, late):  # only a set settled here: a few a seat, not every one it is sent
                self._pass_on(back, late, owed.proofs[told:])
            self._drop_exposed()
            if owed.session.convictions.get(back.seat) is not None:
                return False  # exposed at the table before: no seat for it (P-5.4)
            if not settled or back.seat in self.take_backs:
                return False
        elif back.seat in self.take_backs:
            return False
        self.take_backs[back.seat] = back
        if back.seat == self.me:
            self._leave_at_round_end = True
        if tell and back.seat not in owes and self.mesh is not None:
            with contextlib.suppress(MeshError):
                self.mesh.broadcast(canonical({"go-on-back": back.to_json()}))
        self._wake.set()
        return True

    def _drop_exposed(self) -> None:
        """A take-back held for a seat the table before has exposed since is dropped; a seat exposed there
        that sits here with the same key is barred: this seat stops the round (P-5.4, P-5.7: "that table" is
        the chain of plans, and the exposed seat does not sit at it again)."""
        owed = self.owed
        if owed is None:
            return
        for seat in [seat for seat in self.take_backs if seat in owed.session.convictions]:
            del self.take_backs[seat]
        before = owed.session.settings.seats
        for seat in owed.session.convictions:
            same = 0 <= seat < len(self.plan.seats) and self.plan.seats[seat].public_key == before[seat].hex()
            if same and seat not in self.barred:
                self.barred.add(seat)
                name = self.settings.names[seat]
                reason = f"{name} was exposed at the table before by a proof late secrets brought"
                log.warning("%s: this seat stops the round, and the game ends at this table's end", reason)
                if self.session is not None and not self.session.finished:
                    ms, now = self._now()
                    self._handle(Halt(reason, now), {"t": "halt", "reason": reason, "ms": ms})

    def _pass_on(self, back: TakeBack, late: Sequence[JSONObject], proofs: Sequence[bytes]) -> None:
        """Each late set once to every seat (whoever sent it here), and each proof it brought (P-5.4, P-6.2)."""
        if self.mesh is None:
            return
        with contextlib.suppress(MeshError):
            if back.owed not in self._late_told:
                self._late_told.add(back.owed)
                self.mesh.broadcast(canonical({"go-on-back": back.to_json(), "late": list(late)}))
            for proof in proofs:
                self.mesh.broadcast(canonical({"go-on-proof": proof.hex()}))

    def add_signature(self, table: str, seat: int, signature: str) -> None:
        """A seat's signature on a continuation that came another way (a returning laptop's, through the
        laptop it asked): passed on to every seat and taken here as if it came from them (P-5.7)."""
        body = {"table": table, "seat": seat, "sig": signature}
        self._go_on_sent.setdefault(self.me, []).append((table, seat, signature))
        if self.mesh is not None:
            with contextlib.suppress(MeshError):
                self.mesh.broadcast(canonical({"go-on-sig": body}))
        self._wake.set()

    def left_here(self) -> dict[int, str]:
        """The persons' seats not present at this table's end, nobody exposed (P-5.7): each left with a signed
        leave, or went away and was stopped for; only that key may take the seat back."""
        session = self.session
        if session is None:
            return {}
        present = session.present()
        return {
            seat: info.public_key for seat, info in enumerate(self.plan.seats)
            if seat not in present and seat not in session.convictions and info.runs_on in (None, info.public_key)
        }  # fmt: skip

    def owes_here(self) -> tuple[int, ...]:
        """The seats of `left_here` whose secrets for the stopped round never came here (P-5.5)."""
        session = self.session
        if session is None:
            return ()
        return tuple(seat for seat in self.left_here() if seat not in session.ledger.secrets)

    async def _until(self, ready: Callable[[], bool], within: float | None = None) -> bool:
        """Wait for `ready`, at most `within` seconds, by default the table's patience (the seats that answer
        nothing end the game); woken by whatever the mesh brings."""
        deadline = time.monotonic() + (self.settings.patience if within is None else within)
        while not ready():
            if time.monotonic() > deadline:
                return False
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK):
                    await self._wake.wait()
        return True

    async def go_on(
        self, go: bool, bots: dict[int, tuple[Identity, str, int]] | None = None
    ) -> Continuation | None:
        """After `run` ended a table early with this seat present (`may_go_on` set before `run`): send
        this seat's signed offer (go on or not; `bots`: for each empty seat, a bot this laptop would run
        there, with where its mesh will listen), wait for every present seat's, and, if all go on,
        sign the continuation (for this seat and for every bot of `bots` it puts in a seat) and wait
        for every seat's signature. The verified continuation, or None: the game ends here. The mesh
        closes either way."""
        session, mesh = self.session, self.mesh
        assert session is not None and mesh is not None
        try:
            if not self.can_go_on():
                return None
            self._asked_go_on = True
            self._drop_exposed()
            if self.barred:
                go = False  # a seat here was exposed at the table before: the game ends (P-5.4)
            present = session.present()
            prior, digest = self.settings.table, session.record_digest()
            my_key = self.identity.public.hex()
            keeps = [
                info.public_key for seat, info in enumerate(self.plan.seats)
                if seat in present and seat != self.me and info.runs_on == my_key
            ]  # fmt: skip
            back = {seat: b for seat, b in self.take_backs.items() if seat not in present}
            offer = make_offer(
                prior, digest, self.me, go, self.identity, bots or {}, keeps, self.left_here(), back, self.owes_here()
            )
            self._offers[self.me] = offer.to_json()
            mesh.broadcast(canonical({"go-on": offer.to_json()}))
            keys = [s.public_key for s in self.plan.seats]
            if not await self._until(lambda: all(s in self._offers for s in present)):
                log.warning("not every seat said whether to go on within the table's patience: the game ends")
                return None
            try:
                offers: dict[int, Offer] = {s: Offer.from_json(self._offers[s], keys) for s in present}
            except ProtocolError as exc:
                log.warning("an offer to go on does not hold (%s): the game ends", exc)
                return None
            if any(o.seat != s for s, o in offers.items()):
                return None
            plan = decide(
                prior, digest, self.plan.seats, present, session.summary()["rounds"],  # type: ignore[arg-type]
                self.plan.game, dict(self.plan.options), self.plan.patience, offers, self.plan.rules,
                self.plan.left if isinstance(self.plan, Continuation) else None, self.plan.level,
                self.plan.owes if isinstance(self.plan, Continuation) else (),
            )  # fmt: skip
            if plan is None:
                return None
            try:
                plan.check()
            except ProtocolError as exc:
                log.warning("the continuation does not check (%s): the game ends", exc)
                return None
            mine = {self.identity.public.hex(): self.identity}
            mine.update({bot.public.hex(): bot for bot, _, _ in (bots or {}).values()})
            signing = {
                index: signer for index, info in enumerate(plan.seats)
                if (signer := mine.get(info.public_key)) is not None
                and (index == self.me or info.runs_on == self.identity.public.hex())
            }  # fmt: skip
            for index, signer in signing.items():
                self._go_on_sigs[(plan.table_id, index)] = plan.sign(signer)
            # P-5.6: on disk before any of these signatures leaves (a laptop that dies once they are out finds
            # the table again): the journal of each seat signed for, the plan with the signatures so far, and
            # each bot's key beside its journal.
            ours = plan.with_signatures([self._go_on_sigs.get((plan.table_id, i), "") for i in range(len(plan.seats))])

            def home(signer: Identity) -> Path:
                """Where a seat this laptop signs for keeps its journal (a bot's, beside its key)."""
                bots = self.data_dir / BOTS_DIR
                return self.data_dir if signer is self.identity else bots / signer.public.fingerprint

            for signer in signing.values():
                if signer is not self.identity and not (home(signer) / "identity.key").exists():
                    save_identity(home(signer), signer)
                begin_journal(ours, signer, home(signer))
            for index in signing:
                body = {"table": plan.table_id, "seat": index, "sig": self._go_on_sigs[(plan.table_id, index)]}
                mesh.broadcast(canonical({"go-on-sig": body}))
            wanted = [(plan.table_id, index) for index in range(len(plan.seats))]
            if self.on_continuation is not None:
                self.on_continuation(plan, False)  # a returning laptop's signature comes that way

            checked: set[tuple[int, str]] = set()  # (signer, signature) already checked: each once

            def collect() -> bool:
                """Take every signature on this continuation that came (alone, or in a whole signed one
                another seat passed on) and checks, each checked once; True once every seat's is here."""
                candidates = [(signer, sig) for sent in self._go_on_sent.values()
                              for table, signer, sig in sent if table == plan.table_id]  # fmt: skip
                for raw_plan in self._go_on_plans.values():
                    got = raw_plan.get("signatures")
                    if isinstance(got, list) and len(got) == len(plan.seats):
                        candidates.extend((index, str(sig)) for index, sig in enumerate(got))
                for signer, signature in candidates:
                    if (plan.table_id, signer) in self._go_on_sigs or (signer, signature) in checked:
                        continue
                    checked.add((signer, signature))
                    with contextlib.suppress(ProtocolError, IndexError):
                        plan.check_signature(signer, signature)
                        self._go_on_sigs[(plan.table_id, signer)] = signature
                return all(key in self._go_on_sigs for key in wanted)

            if not await self._until(collect):
                log.warning("not every seat signed the continuation within the table's patience: the game ends")
                return None
            signed = plan.with_signatures([self._go_on_sigs[k] for k in wanted])
            try:
                signed.verify()
            except ProtocolError as exc:
                log.warning("the continuation's signatures do not hold (%s): the game ends", exc)
                return None
            # The journals begun above now hold the plan every seat signed (what a resume plays and a take-back
            # desk shows): nothing follows their first line yet.
            for index, signer in signing.items():
                journal = Journal(journal_path(home(signer), signed.table_id, index))
                with contextlib.suppress(StoreError):
                    first = journal.read()[0]
                    if first.get("plan") != signed.to_json():
                        journal.rewrite_first({**first, "plan": signed.to_json()})
            # Passed on whole, so a seat that one signer left out (or whose slots another seat filled with
            # junk) still holds every signature (P-6.2).
            with contextlib.suppress(MeshError):  # over a frame's size: the seats rely on the signatures alone
                mesh.broadcast(canonical({"go-on-plan": signed.to_json()}))
            if self.on_continuation is not None:
                self.on_continuation(signed, True)
            await self._drain()  # our signature reaches the others before the mesh closes
            return signed
        finally:
            await mesh.close()

    async def _until_agreed(self) -> bool:
        """P-6.7: a continuation this seat signed, whose other signatures had not come when its laptop stopped,
        is played only once a seat shows it signed by every seat (each link that comes up is told it): adopted
        then, and its journal's first line rewritten with it. False if none came within two patiences (or
        `GONE_AFTER`): the others never played it."""

        def agreed() -> bool:
            for raw in list(self._go_on_plans.values()):
                with contextlib.suppress(ProtocolError):
                    signed = Continuation.from_json(raw)
                    if signed.table_id == self.plan.table_id:
                        signed.verify()
                        self.plan, self.agreed = signed, True
                        with contextlib.suppress(StoreError):
                            first = self.journal.read()[0]
                            self.journal.rewrite_first({**first, "plan": signed.to_json()})
                        return True
            return False

        return await self._until(agreed, max(2 * self.settings.patience, GONE_AFTER))

    def _empty_outcome(self) -> Outcome:
        """The outcome of a table this seat never played (its continuation was never signed by every seat)."""
        settings = self.settings
        return Outcome(GameRecord(settings.game, settings.names, dict(settings.options), (), settings.bots), None,
                       table_gone=True)  # fmt: skip

    def _left_done(self) -> bool:
        """A seat that left has nothing more to do once its leave and secrets are out."""
        return self.session is not None and self.session.me in self.session.left

    def _maybe_decide(self) -> None:
        """Ask the local player when a move is owed, in a task of its own so the clock keeps ticking."""
        session = self.session
        assert session is not None
        if self._leaving:
            return
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
        """Give the others time to receive our last messages (the end signature, our secrets)."""
        mesh = self.mesh
        assert mesh is not None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_TIMEOUT):
                while any(mesh.queued(pid, own_only=True) for pid in sorted(mesh.connected_peers())):
                    await asyncio.sleep(0.05)

    def _finish(self) -> Outcome:
        session = self.session
        assert session is not None
        record = session.record()
        finished = session.finished
        path = None
        if record.rounds or finished:
            label = record_label(self.settings.game, self.settings.names)
            path = save_record(self.data_dir, self.settings.table, _dumps(session.record_json()), label)
        if not self._gave_up or self.table_gone:
            self.journal.append({"t": "done"})
        return Outcome(
            record,
            path,
            finished=finished,
            complete=session.complete,
            exposed=session.convicted_lines(),
            stops=tuple(self.stops),
            network_lost=self._gave_up and not self.table_gone,
            table_gone=self.table_gone,
            left=self.me in session.left,
        )

    @property
    def n_others(self) -> int:
        return len(self.peer_ids) - 1

    @property
    def network_lost(self) -> bool:
        """No link to any other seat, after there had been one (the UI says "lost the network")."""
        return self.ever_linked and self.n_others > 0 and not self.connected

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
            if self.agreed and isinstance(self.plan, Continuation) and self.mesh is not None:
                # A seat that died before every signature on this continuation reached it waits for them (P-6.7):
                # every link that comes up is told the plan every seat signed.
                with contextlib.suppress(MeshError):
                    self.mesh.send(peer_id, canonical({"go-on-plan": self.plan.to_json()}))
        else:
            self.connected.discard(seat)
        if self.session is not None:
            self._dispatch(self.session.handle(LinkChanged(seat, connected, self._now()[1])))
        self._wake.set()

    # --- for the UI ----------------------------------------------------------------------------------
    def waiting_text(self) -> str:
        """Whom the table waits for and for what, with the patience left; or that the network is lost."""
        if self.network_lost:
            return "lost the network: no link to any other seat (blaming nobody; waiting for it to come back)"
        session = self.session
        if session is None:
            return ""
        now = time.time()
        parts = []
        for waiting in session.waiting(now)[:2]:
            name = shown(self.settings.names[waiting.seat])
            what = OWED_WORDS.get(waiting.what, waiting.what)
            if waiting.private_to is not None and waiting.private_to != self.me:
                what += f" to {shown(self.settings.names[waiting.private_to])}"
            if not waiting.linked:
                left = max(0, int(self.settings.patience - (now - waiting.since)))
                parts.append(f"{name}'s laptop is away: {left // 60}:{left % 60:02d} to come back")
            elif waiting.automatic:
                parts.append(f"waiting for {name}'s laptop: its {what}, {int(now - waiting.since)} s")
            else:
                parts.append(f"waiting for {name} ({what})")
        return "; ".join(parts)


def _dumps(record: JSONObject) -> str:
    return json.dumps(record, indent=1) + "\n"


def _seed_of(first: JSONObject, path: Path) -> bytes:
    try:
        return h2b(first.get("seed"), 32, "seed")
    except ProtocolError:
        raise ResumeFailed(path, "its table record has no 32-byte seed") from None


def journal_inputs(
    records: list[JSONObject], seats: int, me: int, path: Path, first_line: int = 2
) -> list[tuple[int, Input]]:
    """The input events of a journal after its table record, each shape-checked: `ResumeFailed`
    naming the line and what is wrong otherwise. Nothing is replayed before all of it passed (P-6.3)."""
    inputs: list[tuple[int, Input]] = []
    for line, record in enumerate(records, start=first_line):
        kind = record.get("t")
        try:
            if kind == "done":
                continue
            if kind not in ("start", "in", "decide", "stop", "leave", "note", "halt"):
                raise ProtocolError("P-5.6", f"a record of kind {str(kind)[:40]!r}, which this version does not write")
            if (kind == "start") != (line == first_line):
                raise ProtocolError("P-5.6", "the start must be the first record after the table, and only there")
            now = check_int(record.get("ms"), "ms", "P-5.6") / 1000
            if kind == "start":
                inputs.append((line, Start(now)))
            elif kind == "in":
                seat = check_int(record.get("from"), "from", "P-5.6", 0, seats - 1)
                if seat == me:
                    raise ProtocolError("P-5.6", "a message from this very seat")
                inputs.append((line, Received(seat, h2b(record.get("data"), None, "data"), now)))
            elif kind == "decide":
                move = record.get("move")
                if not isinstance(move, dict):
                    raise ProtocolError("P-5.6", "a decision's move is an object")
                inputs.append((line, Decided(move, now)))
            elif kind == "stop":
                seat = check_int(record.get("seat"), "seat", "P-5.6", 0, seats - 1)
                owed, to = record.get("owed"), record.get("to")
                if not isinstance(owed, str) or not (to is None or isinstance(to, int)):
                    raise ProtocolError("P-5.6", "a stop names the step owed and to whom")
                inputs.append((line, StopFor(seat, owed, to, now)))
            elif kind == "leave":
                inputs.append((line, Leave(now)))
            elif kind == "halt":
                reason = record.get("reason")
                if not isinstance(reason, str) or len(reason) > 400:
                    raise ProtocolError("P-5.6", "a halt says why in a line")
                inputs.append((line, Halt(reason, now)))
            else:
                inputs.append((line, NoteWaiting(now)))
        except ProtocolError as exc:
            raise ResumeFailed(path, f"line {line} is not a record this runner wrote: {exc.message}") from None
    return inputs


AnyPlan = TablePlan | Continuation  # what a table is played from: a lobby's plan or a continuation (P-5.7)


class _Away:
    """The player of a seat whose table is over: asked nothing."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        return None


def owed_from_journal(plan: Continuation, identity: Identity, data_dir: Path) -> OwedSecrets | None:
    """Where late secrets are settled when this laptop's session of the table `plan` goes on from is gone (the
    laptop started again): that table's journal here, replayed. None if there is none or it does not replay."""
    seat = [info.public_key for info in plan.seats].index(identity.public.hex())
    try:
        records = Journal(journal_path(data_dir, plan.prior, seat)).read()
        prior = plan_from_json(records[0].get("plan")) if records else None
        if prior is None or prior.table_id != plan.prior:
            return None
        runner = TableRunner(prior, identity, data_dir, _Away(), "")
        return OwedSecrets(runner._restore(runner._journal_records()), data_dir)
    except (StoreError, ProtocolError, LobbyError, ValueError):
        return None


def check_plan(plan: AnyPlan, key: str) -> None:
    """P-6.7: every seat signed this very plan (`verify`). Or a continuation the seat of `key` signed, whose other
    signatures had not all come when its laptop stopped (P-5.6: its journal is begun before its signature
    leaves): it checks as any continuation and carries this seat's own signature. Resumed, such a seat deals
    nothing until a seat shows it the plan signed by every seat (`TableRunner._until_agreed`, P-6.7)."""
    try:
        plan.verify()
    except ProtocolError:
        keys = [info.public_key for info in plan.seats]
        if not isinstance(plan, Continuation) or key not in keys:
            raise
        me = keys.index(key)
        if len(plan.signatures) != len(plan.seats):
            raise
        plan.check()
        plan.check_signature(me, plan.signatures[me])


def publish_owed(plan: AnyPlan, identity: Identity, data_dir: Path) -> list[JSONObject]:
    """What a laptop coming back to the seat it went away from publishes first (P-5.5, P-5.7): its journal
    of table `plan` replayed, then a signed leave and the stopped round's secrets (journaled before they are
    handed out, P-5.6: a second call signs nothing new), and its whole chain of that round as the seats take
    it (`settle_owed`). `ResumeFailed` if the journal is missing or does not replay."""
    runner = TableRunner(plan, identity, data_dir, _Away(), "")
    records = runner._journal_records()
    if not records:
        raise ResumeFailed(runner.journal.path, "this laptop has no journal of that table")
    session = runner.session = runner._restore(records)
    ms, now = runner._now()
    runner._handle(Leave(now), {"t": "leave", "ms": ms})
    runner.journal.sync()
    return [message.to_json() for message in session.ledger.chains[session.me]]


def plan_from_json(raw: object) -> AnyPlan:
    """A journal's plan: a lobby's, or a continuation's (it names the table it goes on from, P-5.7)."""
    if isinstance(raw, dict) and "continues" in raw:
        return Continuation.from_json(raw)
    return TablePlan.from_json(raw)


def begin_journal(plan: AnyPlan, identity: Identity, data_dir: Path) -> Path:
    """The journal of ``identity``'s seat at ``plan``'s table, begun (its table record and a fresh seed,
    fsynced) if it has no line yet: what `TableRunner.run` then starts from, or a restart resumes."""
    me = [s.public_key for s in plan.seats].index(identity.public.hex())
    journal = Journal(journal_path(data_dir, plan.table_id, me))
    if not journal.path.exists() or not journal.read():
        journal.append({**_table_record(plan, me), "seed": secrets.token_bytes(32).hex()})
    return journal.path


def _table_record(plan: AnyPlan, seat: int) -> JSONObject:
    """A journal's first line (its seed aside): which table and seat, and the protocol spoken."""
    return {"t": "table", "plan": plan.to_json(), "seat": seat, "protocol": PROTOCOL_VERSION}


def _records_table(first: JSONObject, plan: AnyPlan, seat: int) -> bool:
    """A journal's first line is the record of `plan`'s table at `seat`: the same plan, whatever signatures it
    held when the journal was begun (P-5.6: a continuation's, before every seat's had come)."""
    expected = {k: v for k, v in _table_record(plan, seat).items() if k != "plan"}
    if {k: v for k, v in first.items() if k not in ("seed", "plan")} != expected:
        return False
    try:
        return plan_from_json(first.get("plan")).table_id == plan.table_id
    except ProtocolError:
        return False


def _other_version(first: JSONObject) -> str:
    found = first.get("protocol", 1)
    return f"it was written by table protocol version {shown(str(found))[:20]}; this lanplay speaks {PROTOCOL_VERSION}"


def unfinished_journal(data_dir: Path) -> tuple[AnyPlan, Path] | None:
    """The table this installation was playing when it stopped, if its game has not ended. A journal
    that cannot be resumed is set aside with a warning, so it is not offered again (P-6.3)."""
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
                plan = plan_from_json(first["plan"])
                seat = check_int(first.get("seat"), "seat", "P-5.6", 0, len(plan.seats) - 1)
                check_plan(plan, plan.seats[seat].public_key)
            except ProtocolError as exc:
                raise ResumeFailed(path, f"its table plan is not valid: {exc.message}") from None
            _seed_of(first, path)
            journal_inputs(records[1:], len(plan.seats), seat, path)
            return plan, path
        except StoreError as exc:
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
        self.bot = make_bot(game_id, kind, seed)
        self.delay = delay

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        if self.delay:
            await asyncio.sleep(self.delay)
        session = runner.session
        assert session is not None
        if self.bot.name == "expert":  # a search (normal too): off the event loop, so the mesh and clock run on
            return await asyncio.to_thread(self.bot.choose, session.game, session.view(), session.me)
        return self.bot.choose(session.game, session.view(), session.me)


__all__ = ["BotPlayer", "Exposed", "Finished", "LocalPlayer", "Outcome", "TableRunner"]
