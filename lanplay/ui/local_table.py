"""The offline source of a table screen: the engine and bots in every other seat, no network, no crypto.

`LocalTable` plays the game with full knowledge and tells its `TableFeed` (feed.py) what happened, as the
networked `NetTable` tells it from the runner's session: the deal, each move with the states before and after
it, the round's end; the feed shows the person only `Game.view(state, my_seat)` and the game's words tell the
rest as the whole table may know it (a prediction is "laid", never shown, until the round is scored; a take6
choice is "chosen" until the reveal; a peek result only to the peeker). The person's moves come back from the
feed; the bots answer here, one after another (`bot_delay` apart, so the screen and keys run between them).

Shuffling uses a `random.Random` seeded from `secrets` (engine.playout.shuffled_deal). A local game has
nothing to audit, and claims no check it did not make.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.playout import shuffled_deal
from engine.record import GameRecord, record_from_moves
from lanplay.bots import Bot
from lanplay.games import make_bot
from lanplay.ui.feed import Front, MovePlayed, RoundDealt, RoundScored, TableFeed, TableOver, WaitingFor
from lanplay.ui.model import TableModel

DEFAULT_BOT_DELAY = 0.3


def bot_delay_from_env(default: float = DEFAULT_BOT_DELAY) -> float:
    """LANPLAY_BOT_DELAY (seconds) lets tests and impatient players make bots answer at once."""
    raw = os.environ.get("LANPLAY_BOT_DELAY")
    if raw is None:
        return default
    try:
        return max(0.0, float(raw))
    except ValueError:
        return default


class LocalTable:
    """A `TableSource` (feed.py): runs one game against bots and tells `model`'s feed; `run()` returns the record.

    The full screen (`lanplay play --offline`) answers through the model's keys; `--plain`
    (lanplay/cli/local.py) is this table with a `front` that prints the model and reads typed numbers."""

    def __init__(
        self,
        model: TableModel,
        options: Any,
        *,
        bot_kind: str = "heuristic",
        bot_delay: float = DEFAULT_BOT_DELAY,
        record_dir: Path | None = None,
        record_name: str | None = None,
        seed: int | None = None,
        pause_between_rounds: bool = True,
        front: Front | None = None,
    ) -> None:
        self.model = model
        self.feed = TableFeed(model, pause_between_rounds=pause_between_rounds, front=front)
        self.game = model.game
        self.players = model.players
        self.me = model.my_seat
        self.options = options
        self.bot_delay = bot_delay
        self.record_dir = record_dir
        self.record_name = record_name
        self.rng = random.Random(seed if seed is not None else secrets.randbits(64))
        self.bots: dict[int, Bot] = {
            seat: make_bot(self.game.id, bot_kind, self.rng.randrange(1 << 30))
            for seat in range(len(self.players))
            if seat != self.me
        }
        self.state: Any = self.game.new_game(len(self.players), options)
        self.rounds: list[tuple[Any, list[Any]]] = []
        self.record_path: Path | None = None
        self.finished = False

    # --- the game loop ---------------------------------------------------------------------------
    async def run(self) -> GameRecord:
        game = self.game
        while True:
            expected = game.expected(self.state)
            if expected.phase == "over":
                break
            if expected.phase == "deal":
                await self.feed.ready()  # the last round's results stay until the person has seen them
                self._deal()
                continue
            if expected.phase != "move":
                raise RuntimeError(f"a full-knowledge game cannot be in phase {expected.phase!r}")
            await self._collect(expected.seats)
            if game.expected(self.state).phase in ("deal", "over"):
                self.feed.tell(RoundScored(len(self.rounds), self.state))
        self.finished = True
        self.save_record()
        path = str(self.record_path) if self.record_path is not None else None
        self.feed.tell(TableOver(tuple(game.winners(self.state) or ()), tuple(game.totals(self.state)), path))
        return self.record()

    async def leave(self) -> bool:
        """Nobody else is told anything when the person leaves an offline game."""
        return False

    def _deal(self) -> None:
        deal = shuffled_deal(self.game, self.state, self.rng)
        self.state = self.game.start_round(self.state, deal)
        self.rounds.append((deal, []))
        self.feed.tell(RoundDealt(len(self.rounds), self.state))
        self._tell_waiting()

    async def _collect(self, seats: Sequence[int]) -> None:
        """Every listed seat's move. Simultaneous choices are applied as they come: each seat's view
        hides the others' choices (T-3.1, S-3.1), so no bot can use another's."""
        human = self.feed.offer(self.game.legal_moves(self.state, self.me)) if self.me in seats else None
        for seat in seats:
            if seat == self.me:
                continue
            if self.bot_delay:
                await asyncio.sleep(self.bot_delay)
            else:
                await asyncio.sleep(0)  # let the screen and keys run between bot moves
            if human is not None and human.done():
                self._apply(human.result())
                human = None
            self._apply(self.bots[seat].choose(self.game, self.game.view(self.state, seat), seat))
        if human is not None:
            self._apply(await human)

    def _apply(self, move: Any) -> None:
        before = self.state
        self.state = self.game.apply(before, move)
        self.rounds[-1][1].append(move)
        self.feed.tell(MovePlayed(before, move, self.state))
        self._tell_waiting()

    def _tell_waiting(self) -> None:
        """Whom the table waits for besides this seat."""
        expected = self.game.expected(self.state)
        others = [s for s in expected.seats if s != self.me] if expected.phase == "move" else []
        self.feed.tell(WaitingFor(tuple(others)))

    # --- the record ----------------------------------------------------------------------------------
    def record(self) -> GameRecord:
        return record_from_moves(self.game, self.players, self.options, self.rounds)

    def save_record(self) -> Path | None:
        """Write the record (of the whole game, or of the rounds so far) into `record_dir`; None, and no
        file, when no move was played (a game left at its first screen leaves nothing behind)."""
        if self.record_dir is None or not any(moves for _, moves in self.rounds):
            return None
        if self.record_path is None:
            name = self.record_name or f"lanplay-{self.game.id}-{time.strftime('%Y%m%d-%H%M%S')}.json"
            self.record_path = (self.record_dir / name).resolve()
        self.record_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.record_path.with_suffix(self.record_path.suffix + ".tmp")
        tmp.write_text(self.record().dumps(), encoding="utf-8")
        tmp.replace(self.record_path)
        self.model.add_event("ev_record_saved", path=str(self.record_path))
        return self.record_path

