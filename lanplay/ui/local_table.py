"""An in-process table: the engine, bots in every other seat, and one person at the model's seat.

The engine runs with full knowledge here, but the model is fed as a networked peer's would be:
`Game.view(state, my_seat)` only, events that say what the whole table may know (a prediction is
"laid", never shown, until the round is scored; a take6 choice is "chosen" until the reveal), and a
peek result only when this seat is the peeker. The narration works from engine values alone, so
the networked runner can tell the same story from the states and reveals it receives.

Shuffling uses a `random.Random` seeded from `secrets` (engine.playout.shuffled_deal); local games
have nothing to audit, and say so rather than claim a check that was not made.
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

from engine.api import IllegalMove
from engine.playout import shuffled_deal
from engine.record import GameRecord, record_from_moves
from lanplay.bots import Bot
from lanplay.games import make_bot
from lanplay.ui.model import CONTINUE, Event, RoundResult, TableModel

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
    """Runs one game against bots and feeds `model`; the model's confirmed moves come back by `submit`.

    The one offline loop: the full screen (`lanplay play --offline`) answers through the model's keys, and
    `--plain` (lanplay/cli/local.py) is this table with its hooks (`dealt`, `decide`, `moved`, `round_ended`)
    printing the model and reading typed numbers."""

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
    ) -> None:
        self.model = model
        self.game = model.game
        self.players = model.players
        self.me = model.my_seat
        self.options = options
        self.bot_delay = bot_delay
        self.record_dir = record_dir
        self.record_name = record_name
        self.pause_between_rounds = pause_between_rounds
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
        self._offered: tuple[Any, ...] = ()
        self._human: asyncio.Future[Any] | None = None
        self._continue: asyncio.Future[None] | None = None
        model.submit = self.submit

    # --- the model's side -------------------------------------------------------------------------
    def submit(self, move: Any) -> None:
        """A move the person confirmed; IllegalMove if it is not one offered now (the model shows why)."""
        if move is CONTINUE:
            if self._continue is None or self._continue.done():
                raise IllegalMove("format", "no round is waiting to start")
            self._continue.set_result(None)
            return
        if self._human is None or self._human.done():
            raise IllegalMove("format", "no move is expected from you now")
        if move not in self._offered:
            raise IllegalMove("format", "that move is not one of the moves allowed now")
        self._offered = ()
        self._human.set_result(move)
        self._update_waiting()

    # --- the game loop ---------------------------------------------------------------------------
    async def run(self) -> GameRecord:
        game = self.game
        while True:
            expected = game.expected(self.state)
            if expected.phase == "over":
                break
            if expected.phase == "deal":
                self._deal()
                self.dealt()
                continue
            if expected.phase != "move":
                raise RuntimeError(f"a full-knowledge game cannot be in phase {expected.phase!r}")
            await self._collect(expected.seats)
            self.moved()
            if game.expected(self.state).phase in ("deal", "over"):
                await self._round_over()
        self.finished = True
        self.save_record()
        winners = game.winners(self.state) or ()
        path = str(self.record_path) if self.record_path is not None else None
        self.model.set_game_over(winners, game.totals(self.state), path)
        return self.record()

    def _deal(self) -> None:
        game = self.game
        deal = shuffled_deal(game, self.state, self.rng)
        self.state = game.start_round(self.state, deal)
        self.rounds.append((deal, []))
        self.model.start_round(len(self.rounds))
        self._show()
        self.model.add_events(round_start_events(self.model, self.view(), len(self.rounds)))
        self._update_waiting()

    async def _collect(self, seats: Sequence[int]) -> None:
        """Every listed seat's move. Simultaneous choices are applied as they come: each seat's view
        hides the others' choices (T-3.1, S-3.1), so no bot can use another's."""
        loop = asyncio.get_running_loop()
        human_owes = self.me in seats
        if human_owes:
            self._human = loop.create_future()
            self._offered = self.game.legal_moves(self.state, self.me)
            self.model.set_decision(self._offered)
            self.decide()
        applied_human = False
        for seat in seats:
            if seat == self.me:
                continue
            if self.bot_delay:
                await asyncio.sleep(self.bot_delay)
            else:
                await asyncio.sleep(0)  # let the screen and keys run between bot moves
            if human_owes and not applied_human and self._human is not None and self._human.done():
                self._apply(self._human.result())
                applied_human = True
            move = self.bots[seat].choose(self.game, self.game.view(self.state, seat), seat)
            self._apply(move)
        if human_owes and not applied_human:
            assert self._human is not None
            move = await self._human
            self._apply(move)
        self._human = None

    def _apply(self, move: Any) -> None:
        before = self.state
        self.state = self.game.apply(before, move)
        self.rounds[-1][1].append(move)
        self._show()
        self.model.add_events(move_events(self.model, before, move, self.state))
        self._update_waiting()

    def _update_waiting(self) -> None:
        """Whom the table waits for, when it is not waiting for this seat's own decision."""
        expected = self.game.expected(self.state)
        others = [s for s in expected.seats if s != self.me] if expected.phase == "move" else []
        self.model.set_waiting(others if not self.model.moves else ())

    async def _round_over(self) -> None:
        model = self.model
        round_no = len(self.rounds)
        result = round_result(model, self.state, round_no)
        if result is not None:
            model.add_round_result(result)
        model.add_events(round_end_events(model, self.state))
        model.set_audit(round_no, True, "audit_local")
        self.round_ended()
        if self.game.expected(self.state).phase == "over" or not self.pause_between_rounds:
            return
        self._continue = asyncio.get_running_loop().create_future()
        model.ask_continue()
        await self._continue
        self._continue = None

    # --- hooks: a front end that is not the full screen follows the game here (nothing by default) ---------------
    def dealt(self) -> None:
        """A round was dealt and its start told."""

    def decide(self) -> None:
        """This seat owes a move now, offered on the model: the full screen's keys answer through `submit`
        whenever they come; a front end that asks in turn answers here."""

    def moved(self) -> None:
        """The moves owed were made and told."""

    def round_ended(self) -> None:
        """The round is over: its result and the totals are told."""

    # --- views and records ---------------------------------------------------------------------------
    def view(self) -> Any:
        return self.game.view(self.state, self.me)

    def _show(self) -> None:
        self.model.update_state(self.view(), len(self.rounds))

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


# --- narration: engine values to public words (each game's own, from its bundle's words) ---------------------


def round_start_events(model: TableModel, view: Any, round_no: int) -> list[Event]:
    return model.words.round_start_events(model, view, round_no)


def move_events(model: TableModel, before: Any, move: Any, after: Any) -> list[Event]:
    """What the table learns from `move`; private results go to the model directly (a peek)."""
    return model.words.move_events(model, before, move, after)


def round_result(model: TableModel, state: Any, round_no: int) -> RoundResult | None:
    """The finished round in public words."""
    return model.words.round_result(model, state, round_no)


def round_end_events(model: TableModel, state: Any) -> list[Event]:
    events: list[Event] = model.words.round_end_events(model, state)  # the game's own, before the results
    result = model.round_results[-1] if model.round_results else None
    if result is not None:
        events.extend(Event(row.detail.key, row.detail.params) for row in result.rows)
    totals = model.game.totals(state)
    events.append(Event("ev_totals", {"totals": ", ".join(f"{model.name(s)} {t}" for s, t in enumerate(totals))}))
    return events
