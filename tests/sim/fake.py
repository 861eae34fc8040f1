"""A tiny table session with the real session's interface (events in, outputs out), for testing the
simulator's own machinery (network model, journal and restart, attacks, shrinking) without the cost
or the moving parts of the real one.

The fake game: seats take turns (seat 0, 1, ... of each round) to sign a public `move` {"n": 0..2};
`steps` turns make a round, confirmed once every seat's last move of it has come; `rounds` rounds
make the game. Every new message straight from its author is passed on to every other seat (gossip),
and two signed messages at one (author, seq) expose their author (P-1.3). `leave` ends the table.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

from protocol.identity import Identity, PublicIdentity
from protocol.signed import ChainTracker, EquivocationDetected, OutOfOrder, SignedMessage, sign_message

# The interface's values are the real session's (`protocol.table.values`): only the session is fake.
from protocol.table.values import (
    Decided,
    Exposed,
    Finished,
    Leave,
    LinkChanged,
    NoteWaiting,
    Received,
    Refused,
    RoundConfirmed,
    Send,
    Start,
    StopFor,
    Tick,
    Waiting,
)


@dataclass(frozen=True, slots=True)
class FakeSettings:
    table: str
    seats: tuple[PublicIdentity, ...]
    steps: int = 3
    rounds: int = 2
    game: str = "fake"


@dataclass(frozen=True, slots=True)
class FakeRecord:
    rounds: tuple[tuple[int, ...], ...]

    def to_json(self) -> dict[str, Any]:
        return {"rounds": [list(r) for r in self.rounds]}


MAX_HELD = 256


@dataclass
class TableSession:
    settings: FakeSettings
    identity: Identity
    seed: bytes
    me: int = field(init=False)
    last_kept: bool = False
    phase: str = "seed"
    exposed: frozenset[int] = frozenset()
    left: frozenset[int] = frozenset()
    finished: bool = False
    complete: bool = False

    def __post_init__(self) -> None:
        ids = [p.peer_id for p in self.settings.seats]
        self.me = ids.index(self.identity.peer_id)
        self.n = len(ids)
        self.seat_of = {pid: i for i, pid in enumerate(ids)}
        self.tracker = ChainTracker(self.settings.table, self.settings.seats, self.seat_of)
        self.moves: list[int] = []  # the table's moves in order
        self.held: list[SignedMessage] = []
        self.confirmed: list[tuple[int, ...]] = []
        self._proofs: list[dict[str, Any]] = []
        self.since = 0.0
        self.seq = 0
        self.prev = "0" * 64

    # --- queries ---
    @property
    def round_index(self) -> int:
        return len(self.moves) // (self.settings.steps * self.n)

    def _turn(self) -> int:
        return len(self.moves) % self.n

    def decision_json(self) -> tuple[dict[str, Any], ...]:
        if self.phase != "play" or self._turn() != self.me or self._mine_pending():
            return ()
        return tuple({"seat": self.me, "n": k} for k in range(3))

    def decision(self) -> tuple[dict[str, Any], ...]:
        return self.decision_json()

    def _mine_pending(self) -> bool:
        return self.tracker.next_seq(self.identity.peer_id) > sum(
            1 for i in range(len(self.moves)) if i % self.n == self.me
        )

    def waiting(self, now: float) -> tuple[Waiting, ...]:
        if self.phase != "play":
            return ()
        return (Waiting(self._turn(), "move", self.since, None, False, True),)

    def due(self, now: float) -> StopFor | None:
        return None

    def note_due(self, now: float) -> bool:
        return False

    def record(self) -> FakeRecord:
        return FakeRecord(tuple(self.confirmed))

    def proofs(self) -> tuple[dict[str, Any], ...]:
        return tuple(self._proofs)

    # --- the one entry point ---
    def handle(self, event: object) -> tuple[object, ...]:
        self.last_kept = False
        out: list[object] = []
        if isinstance(event, Start):
            self.phase = "play"
            self.since = event.now
        elif isinstance(event, Received):
            self._received(event, out)
        elif isinstance(event, Decided):
            if event.move in self.decision_json():
                self._publish("move", {"n": event.move["n"]}, out)
                self._pump(out, event.now)
            else:
                out.append(Refused(None, "P-5.1", "that move is not open to you now"))
        elif isinstance(event, Leave) and self.phase != "finished":
            self._publish("leave", {}, out)
            self._finish(out)
        return tuple(out)

    def _publish(self, kind: str, body: dict[str, Any], out: list[object]) -> None:
        msg = sign_message(self.identity, self.settings.table, 0, self.seq, self.prev, kind, body)
        self.tracker.accept(msg)
        self.seq += 1
        self.prev = msg.digest()
        self.held.append(msg)
        out.append(Send(None, msg.to_wire()))

    def _received(self, event: Received, out: list[object]) -> None:
        try:
            msg = SignedMessage.from_wire(event.data)
        except Exception as exc:
            out.append(Refused(event.sender, "P-1.3", f"unreadable: {exc}"))
            return
        if msg.author == self.identity.peer_id:
            return
        try:
            verdict = self.tracker.accept(msg)
        except OutOfOrder:
            if len(self.held) < MAX_HELD and msg not in self.held:
                self.held.append(msg)
                self.last_kept = True
            return
        except EquivocationDetected as exc:
            self.last_kept = True
            seat = self.seat_of[msg.author]
            if seat not in self.exposed:
                self.exposed |= {seat}
                proof = exc.proof.to_json()
                self._proofs.append(proof)
                out.append(Exposed(seat, "P-1.3", "two messages at one seq", proof))
                out.append(Send(None, exc.proof.first.to_wire()))
                out.append(Send(None, exc.proof.second.to_wire()))
                self._finish(out)
            return
        except Exception as exc:
            out.append(Refused(event.sender, "P-1.3", str(exc)))
            return
        if verdict.value == "duplicate":
            return
        self.last_kept = True
        self.held.append(msg)
        if event.sender == self.seat_of[msg.author]:
            out.append(Send(None, event.data))  # gossip
        self._pump(out, event.now)

    def _pump(self, out: list[object], now: float) -> None:
        progress = True
        while progress and self.phase == "play":
            progress = False
            for msg in list(self.held):
                if not self.tracker.holds(msg):
                    try:
                        self.tracker.accept(msg)
                    except Exception:
                        continue
                seat = self.seat_of[msg.author]
                if msg.kind == "leave":
                    self.held.remove(msg)
                    self.left |= {seat}
                    self._finish(out)
                    return
                if seat == self._turn():
                    self.held.remove(msg)
                    self.moves.append(int(msg.body.get("n", 0)) % 3)
                    self.since = now
                    progress = True
                    per_round = self.settings.steps * self.n
                    if len(self.moves) % per_round == 0:
                        self.confirmed.append(tuple(self.moves[-per_round:]))
                        out.append(RoundConfirmed(len(self.confirmed) - 1, {}))
                        if len(self.confirmed) == self.settings.rounds:
                            self.complete = True
                            self._finish(out)
                            return

    def _finish(self, out: list[object]) -> None:
        if self.phase != "finished":
            self.phase = "finished"
            self.finished = True
            out.append(Finished(self.record(), self.complete))


class FakeBackend:
    """The simulator's view of a session implementation (see `tests.sim.world.Backend`)."""

    name = "fake"
    Start, Received, Decided, Tick, LinkChanged = Start, Received, Decided, Tick, LinkChanged
    StopFor, Leave, NoteWaiting, Send = StopFor, Leave, NoteWaiting, Send
    Exposed, RoundConfirmed, Finished = Exposed, RoundConfirmed, Finished
    GAMES: ClassVar[dict[str, tuple[int, int, tuple[dict[str, Any], ...]]]] = {"fake": (2, 6, ({}, {"steps": 2}))}

    def settings(self, game: str, options: dict[str, Any], identities: list[Identity], seed: int) -> FakeSettings:
        table = hashlib.sha256(f"fake-table/{seed}".encode()).hexdigest()[:32]
        return FakeSettings(table, tuple(i.public for i in identities), steps=int(options.get("steps", 3)))

    def session(self, settings: Any, identity: Identity, seed: bytes) -> Any:
        return TableSession(settings, identity, seed)

    def verify(self, settings: Any, proof: dict[str, Any], rounds: Any) -> int | None:
        from protocol.signed import Equivocation, verify_equivocation

        try:
            eq = Equivocation.from_json(proof)
            seat = [p.peer_id for p in settings.seats].index(eq.first.author)
            verify_equivocation(eq, settings.seats[seat])
            return seat
        except Exception:
            return None

    def choose(self, session: Any, rng: Any, bot: str) -> dict[str, Any] | None:
        moves = session.decision_json()
        return rng.choice(moves) if moves else None
