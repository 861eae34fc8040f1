"""The simulator's view of the real table session (protocol.table, the contract in its docstring)."""

from __future__ import annotations

import hashlib
import random
from typing import Any, ClassVar

from engine.games import get_game
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.table import (
    Decided,
    Exposed,
    Finished,
    Leave,
    LinkChanged,
    NoteWaiting,
    Plan,
    Received,
    RoundConfirmed,
    Send,
    Start,
    StopFor,
    TableSession,
    TableSettings,
    Tick,
    verify,
)

PATIENCE = 10.0  # seconds of simulated time an automatic step is waited for before a stop


class RealBackend:
    name = "real"
    Start, Received, Decided, Tick, LinkChanged = Start, Received, Decided, Tick, LinkChanged
    StopFor, Leave, NoteWaiting, Send = StopFor, Leave, NoteWaiting, Send
    Exposed, RoundConfirmed, Finished = Exposed, RoundConfirmed, Finished
    GAMES: ClassVar[dict[str, tuple[int, int, tuple[dict[str, Any], ...]]]] = {
        "sixth-sense": (2, 6, ({"target": 1}, {"target": 1, "late_trump": True}, {"target": 1, "beginner": True})),
        "take6": (2, 10, ({}, {"tactic": True}, {"logic": True}, {"profi": True}, {"tactic": True, "logic": True})),
        "sixes": (3, 8, ({"chips": 1}, {"chips": 2})),
    }

    def __init__(self) -> None:
        self._bots: dict[tuple[int, str], Any] = {}

    def settings(self, game: str, options: dict[str, Any], identities: list[Identity], seed: int) -> Any:
        table = hashlib.sha256(f"sim-table-id/{seed}".encode()).hexdigest()[:32]
        return TableSettings(
            table=table,
            game=game,
            options=options,
            seats=tuple(i.public for i in identities),
            names=tuple(f"seat {i}" for i in range(len(identities))),
            patience=PATIENCE,
        )

    def session(self, settings: Any, identity: Identity, seed: bytes) -> Any:
        return TableSession(settings, identity, seed=seed)

    def verify(self, settings: Any, proof: Any, rounds: Any) -> int | None:
        """The seat `verify` convicts on `proof` (None: it refuses it); `rounds`: the rounds the
        checking seat confirmed (a proof of round r is judged on the first r)."""
        game = get_game(settings.game)
        plan = Plan(settings.table, game, game.options_from_json(settings.options), settings.seats)
        index = proof.get("round") if isinstance(proof, dict) else None
        before = tuple(rounds)[:index] if isinstance(index, int) and index >= 0 else tuple(rounds)
        try:
            return verify(plan, proof, before).seat
        except ProtocolError:
            return None

    def choose(self, session: Any, rng: random.Random, bot: str) -> dict[str, Any] | None:
        moves = session.decision_json()
        if not moves:
            return None
        if bot == "random":
            return dict(rng.choice(moves))
        from lanplay.games import make_bot

        key = (session.me, bot)
        if key not in self._bots:
            self._bots[key] = make_bot(session.game.id, bot, rng.randrange(1 << 30))
        engine_moves = session.decision()
        choice = self._bots[key].choose(session.game, session.view(), session.me)
        return dict(moves[engine_moves.index(choice)]) if choice in engine_moves else dict(rng.choice(moves))
