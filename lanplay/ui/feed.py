"""The one loop of a seat's table screen: what happened at the table, as events, turned into the model.

Two sources tell a table: `LocalTable` (local_table.py: the engine and in-process bots, no network, no crypto;
`lanplay play --offline` and `--plain`) and `NetTable` (net_table.py: the runner's session events, over the
mesh). Each turns what it knows into the events below and tells them to its `TableFeed`, and awaits the
person's moves from it; the feed is the only writer of the game's part of the model: the seat's view, the log's
lines for deals, moves, reveals and round ends (in the game's own words, lanplay/games/GAME/words.py), the round
results, the decision offered and the move confirmed (`submit`), the "next round" pause, the go-on question
(P-5.7), a voided round and the game-over sheet. So both sources reach the same screens from the same events.

Every event carries engine values only (states, moves): a state is never shown whole, only through
`Game.view(state, my_seat)`, and the words tell a move from the states before and after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.api import IllegalMove
from lanplay.ui.model import CONTINUE, TableModel
from lanplay.ui.values import Event, GoOnAnswer, RoundResult

# --- what a source tells ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundDealt:
    """Round `round_no` (1-based) was dealt: `state` is the table right after the deal."""

    round_no: int
    state: Any


@dataclass(frozen=True, slots=True)
class MovePlayed:
    """`move` took the table from `before` to `after` (a hidden choice: this seat's own, or as the table saw it)."""

    before: Any
    move: Any
    after: Any


@dataclass(frozen=True, slots=True)
class CardsTurned:
    """Cards turned with no move (S-8.3: the trump card after the predictions): told from the two states."""

    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class ViewShown:
    """The table is at `state` with no move told (a game resumed from its journal): the view catches up."""

    state: Any
    round_no: int | None = None


@dataclass(frozen=True, slots=True)
class PeekSeen:
    """S-6.4: this seat peeked at `target`'s prediction after trick `trick` (1-based) and saw `card`."""

    trick: int
    target: int
    card: str


@dataclass(frozen=True, slots=True)
class RoundScored:
    """The round is over and scored at `state`; `audited`: every seat's secrets were checked (P-5.3)."""

    round_no: int
    state: Any
    audited: bool = False


@dataclass(frozen=True, slots=True)
class WaitingFor:
    """Whom the table waits for now (`reconnecting`: their laptop dropped off), or what it does (`status`)."""

    seats: tuple[int, ...] = ()
    reconnecting: bool = False
    status: str | None = None


@dataclass(frozen=True, slots=True)
class ChoicesMade:
    """Seats that made a hidden choice the table has not applied yet (shown as marks, never as cards)."""

    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RoundVoided:
    """The round stopped and is void (P-5.5): `key` and `params` say why (a stop, a leave, an exposure)."""

    round_no: int
    key: str
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableOver:
    """The table ended: the game-over sheet (`stopped`: before the game's end, with `reason`)."""

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    record_path: str | None
    stopped: bool = False
    network_lost: bool = False
    reason: str = ""
    rounds: int = 0


TableEvent = (
    RoundDealt | MovePlayed | CardsTurned | ViewShown | PeekSeen | RoundScored | WaitingFor | ChoicesMade
    | RoundVoided | TableOver
)


class Front(Protocol):
    """A front end that follows the table besides the model's listeners (`--plain` prints and reads here)."""

    def told(self, event: TableEvent) -> None:
        """`event` was told: the model shows it."""

    def asked(self) -> None:
        """This seat owes a move now, offered on the model: a front end that asks in turn answers here, through
        the model (whose `submit` is the feed's); the full screen's keys answer whenever they come."""


class TableSource(Protocol):
    """What drives a table screen: it tells its `feed` what happens and awaits the person's moves from it.
    `run` plays until the table ends (its result: a `GameRecord` offline, an `Outcome` on the network);
    `leave` is the person leaving mid-game (True if the table was told, P-5.7)."""

    feed: TableFeed

    async def run(self) -> Any: ...

    async def leave(self) -> bool: ...


# --- the loop -------------------------------------------------------------------------------------------------


class TableFeed:
    """Turns a source's events into `model`, and the person's confirmed moves (the model's `submit`) into the
    answers the source awaits: `offer` a decision, `ready` to wait out the "next round" pause, `ask_go_on`."""

    def __init__(self, model: TableModel, *, pause_between_rounds: bool = True, front: Front | None = None) -> None:
        self.model = model
        self.game = model.game
        self.pause_between_rounds = pause_between_rounds
        self.front = front
        # Called when the pause ends: a source that held its events meanwhile tells them now.
        self.on_resume: Callable[[], None] | None = None
        self._decision: asyncio.Future[Any] | None = None
        self._offered: tuple[Any, ...] = ()
        self._question: asyncio.Future[Any] | None = None  # a question of the table's own (go on?), not a move
        self._answers: tuple[Any, ...] = ()
        self._paused = False
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._waiting = WaitingFor()
        model.submit = self.submit

    # --- events -------------------------------------------------------------------------------------------
    def tell(self, event: TableEvent) -> None:
        model = self.model
        if isinstance(event, RoundDealt):
            view = self._view(event.state)
            model.start_round(event.round_no)
            model.update_state(view, event.round_no)
            model.add_events(model.words.round_start_events(model, view, event.round_no))
        elif isinstance(event, MovePlayed):
            model.update_state(self._view(event.after))
            model.add_events(model.words.move_events(model, event.before, event.move, event.after))
        elif isinstance(event, CardsTurned):
            model.add_events(model.words.reveal_events(event.before, event.after))
        elif isinstance(event, ViewShown):
            view = self._view(event.state)
            if view != model.view:
                model.update_state(view, event.round_no)
        elif isinstance(event, PeekSeen):
            model.show_peek(event.trick, event.target, event.card)
        elif isinstance(event, RoundScored):
            self._scored(event)
        elif isinstance(event, WaitingFor):
            self._waiting = event
            model.set_status(event.status)
            model.set_waiting(event.seats if not model.moves else (), event.reconnecting)
        elif isinstance(event, ChoicesMade):
            if event.seats != model.recent.get("committed", ()):
                model.set_recent("committed", event.seats)
        elif isinstance(event, RoundVoided):
            self._unpause()
            model.set_audit(max(event.round_no, 1), False, event.key, **event.params)
            self.drop_decision()
        elif isinstance(event, TableOver):
            self._unpause()
            model.set_game_over(
                event.winners, event.totals, event.record_path, stopped=event.stopped,
                network_lost=event.network_lost, reason=event.reason, rounds=event.rounds,
            )  # fmt: skip
        if self.front is not None:
            self.front.told(event)

    def _view(self, state: Any) -> Any:
        return self.game.view(state, self.model.my_seat)

    def _scored(self, event: RoundScored) -> None:
        model, state, round_no = self.model, event.state, event.round_no
        model.update_state(self._view(state), round_no)
        result = round_result(model, state, round_no)
        if result is not None:
            model.add_round_result(result)
        model.add_events(round_end_events(model, state))
        if event.audited:
            model.set_audit(round_no, True, "audit_ok")
        if self.pause_between_rounds and self.game.expected(state).phase != "over":
            self._pause()

    # --- the person's decisions ------------------------------------------------------------------------
    def offer(self, moves: Sequence[Any]) -> asyncio.Future[Any]:
        """Offer `moves` to the person now; the future is the move confirmed, or None if the table no longer
        needs it (`drop_decision`)."""
        self._decision = decision = asyncio.get_running_loop().create_future()
        self._offered = tuple(moves)
        self.model.set_decision(self._offered)
        if self.front is not None:
            self.front.asked()
        return decision

    def drop_decision(self) -> None:
        """The table stopped or ended: the move offered is no longer wanted."""
        decision = self._decision
        self._decision, self._offered = None, ()
        if decision is not None and not decision.done():
            decision.set_result(None)
        self.model.clear_decision()

    def submit(self, move: Any) -> None:
        """A move the person confirmed (the model's `submit`); IllegalMove if it is not open now."""
        question = self._question
        if question is not None and not question.done() and move in self._answers:
            question.set_result(move)
            return
        if isinstance(move, GoOnAnswer):
            raise IllegalMove("format", "nothing is being asked about going on now")
        if move is CONTINUE:
            if not self._paused:
                raise IllegalMove("format", "no round is waiting to start")
            self.resume()
            return
        decision = self._decision
        if decision is None or decision.done():
            raise IllegalMove("format", "no move is expected from you now")
        if move not in self._offered:
            raise IllegalMove("format", "that move is not one of the moves allowed now")
        self._decision, self._offered = None, ()
        decision.set_result(move)
        waiting = self._waiting  # this seat is done: whom the table waits for shows again
        self.model.set_waiting(tuple(s for s in waiting.seats if s != self.model.my_seat), waiting.reconnecting)

    async def ask_go_on(self, empty: Sequence[int]) -> bool:
        """P-5.7: go on with a bot in the `empty` seats, or end the game here? The person's answer."""
        self.resume()  # the last round's results were seen, or are moot now
        self.model.ask_go_on(empty)
        answer: GoOnAnswer = await self.answer()
        return answer.go

    async def answer(self) -> Any:
        """The person's answer to a question of the table's own that the model offers now (its moves are the
        answers: `TableModel.ask_go_on`'s GO_ON and END_HERE); the question leaves the screen once answered."""
        self._question = answer = asyncio.get_running_loop().create_future()
        self._answers = self.model.moves
        try:
            return await answer
        finally:
            self._question, self._answers = None, ()
            self.model.clear_decision()

    # --- between rounds ------------------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        """The finished round stays on screen until the person presses Enter (the source holds its events)."""
        return self._paused

    async def ready(self) -> None:
        """Returns once the person has seen the last round's results (at once if no round waits)."""
        await self._resumed.wait()

    def _pause(self) -> None:
        self._paused = True
        self._resumed.clear()
        self.model.set_waiting(())
        self.model.ask_continue()

    def resume(self) -> None:
        """End the pause (Enter, or the table stopped or ended meanwhile); the source tells what it held."""
        if self._unpause() and self.on_resume is not None:
            self.on_resume()

    def _unpause(self) -> bool:
        if not self._paused:
            return False
        self._paused = False
        self._resumed.set()
        if self.model.kind == "continue":
            self.model.clear_decision()
        return True


# --- the round's end in words ---------------------------------------------------------------------------------


def round_result(model: TableModel, state: Any, round_no: int) -> RoundResult | None:
    """The finished round in public words (the game's own, from its bundle's words)."""
    return model.words.round_result(model, state, round_no)


def round_end_events(model: TableModel, state: Any) -> list[Event]:
    """The log's lines for a round's end: the game's own, each seat's result, then the totals."""
    events: list[Event] = model.words.round_end_events(model, state)
    result = model.round_results[-1] if model.round_results else None
    if result is not None:
        events.extend(Event(row.detail.key, row.detail.params) for row in result.rows)
    totals = model.game.totals(state)
    events.append(Event("ev_totals", {"totals": ", ".join(f"{model.name(s)} {t}" for s, t in enumerate(totals))}))
    return events
