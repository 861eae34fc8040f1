"""The networked back end of the table screen: the model's seat plays through the real protocol.

`NetTable` hosts a table (`lanplay.table.tables.host_table`, with in-process bot peers that speak the
protocol over loopback like any laptop), joins one (`join_table`) or resumes the game this laptop
was in (`resume_table`). It is the networked `TableSource` (feed.py): it turns the runner's session events
into the events its `TableFeed` tells the model, the same the in-process `LocalTable` tells:

- `Dealt` and `Moved` into `RoundDealt` and `MovePlayed` with the states before and after each move: the
  session hands its events over in batches after the fact, so `NetTable` keeps its own copy of the seat's
  state (`shadow`) and applies each move to it through the engine;
- `RoundConfirmed` into `RoundScored` (audited: "Round 1 confirmed"), `PeekResult` (the session gives it to
  the peeker alone) into `PeekSeen`, a broken rule from `Exposed` (a proof every seat checks) and a stop or a
  leave, which convicts nobody, from `Stopped` into `RoundVoided`, in plain words;
- its decisions: the runner asks `ScreenPlayer.decide`, the feed offers the moves, the person's confirmed
  move resolves the decision;
- what no event says, polled: whom the table waits for (a laptop whose link is down shows as
  "reconnecting"), hidden choices made (`ChoicesMade`), a turned trump card;
- the game-over sheet (`TableOver`) from the `Outcome`, with the path of the saved record.

Between rounds the finished round stays on screen until the person presses Enter (the others play
on meanwhile; their events are held here and told once the person is back). Nothing here is game-specific.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from engine.api import RuleError
from engine.record import replay
from lanplay.base.store import record_label, save_record
from lanplay.base.text import shown
from lanplay.base.text import shown as shown_name
from lanplay.net.discovery import TableAdvert
from lanplay.net.lobby import LobbyHost, SeatBarred, SeatInfo
from lanplay.table.again import again_answers, play_again
from lanplay.table.runner import AnyPlan, Outcome, TableRunner
from lanplay.table.tables import RECONNECT_TIMEOUT, host_table, join_table, play_on, resume_table
from lanplay.table.takeback import back_to_table
from lanplay.ui.feed import (
    CardsTurned,
    ChoicesMade,
    MovePlayed,
    PeekSeen,
    RoundDealt,
    RoundScored,
    RoundVoided,
    TableFeed,
    TableOver,
    ViewShown,
    WaitingFor,
)
from lanplay.ui.model import TableModel
from protocol.continuation import Continuation
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.plan import bot_seats
from protocol.table import (
    Dealt,
    Event,
    Exposed,
    GameOver,
    Moved,
    PeekResult,
    Refused,
    RoundConfirmed,
    Stopped,
    TableSession,
)

log = logging.getLogger(__name__)

POLL = 0.1  # how often links and waiting are looked at (a link going down is no event)

# Which plain-words explanation (i18n "why_<key>") a broken rule gets.
_WHY = {
    "P-1.1": "identity",
    "P-1.2": "equivocation",
    "P-1.3": "order",
    "P-2.2": "desync",
    "P-3.2": "commit",
    "P-3.3": "commit",
    "P-4.2": "deck",
    "P-4.3": "deck",
    "P-4.4": "deck",
    "P-4.5": "peek",
    "P-5.1": "turn",
    "P-5.2": "audit",
    "P-5.3": "withhold",
}


def why_key(rule: str) -> str:
    """The plain-words explanation of a broken rule: protocol rules by id, any game rule as "the rules"."""
    if rule in _WHY:
        return _WHY[rule]
    if rule[:2] in ("S-", "T-", "X-"):
        return "rules"
    return "other"


class ScreenPlayer:
    """The `LocalPlayer` of the seat at this screen: each decision goes to the model, the person answers."""

    def __init__(self, table: NetTable) -> None:
        self.table = table

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        return await self.table.decide(moves)


Start = Callable[[], Coroutine[Any, Any, Outcome | None]]


class NetTable:
    """Plays `model`'s seat at a networked table; `run()` returns the `Outcome` (None: nothing to resume).

    Choose what to do with `host`, `join` or `resume` before `run`. `data_dir` holds the identity's
    records; `table_dir` (default: `data_dir`) the journals of this table. `record_copy`: where the
    record is copied at the end (the `--record` of `lanplay play`)."""

    def __init__(
        self,
        model: TableModel,
        *,
        identity: Identity,
        data_dir: Path,
        interface: str,
        name: str,
        table_dir: Path | None = None,
        bot_delay: float = 0.0,
        step_timeout: float = 20.0,
        record_copy: Path | None = None,
        pause_between_rounds: bool = True,
    ) -> None:
        self.model = model
        self.feed = TableFeed(model, pause_between_rounds=pause_between_rounds)
        self.feed.on_resume = self._flush  # the events held while the round's results were on screen
        self.game = model.game
        self.identity = identity
        self.data_dir = data_dir
        self.table_dir = table_dir if table_dir is not None else data_dir
        self.interface = interface
        self.name = name
        self.bot_delay = bot_delay
        self.step_timeout = step_timeout
        self.record_copy = record_copy
        self.player = ScreenPlayer(self)
        self.runner: TableRunner | None = None
        self.lobby: LobbyHost | None = None
        self.seated: tuple[SeatInfo, ...] = ()
        self.seats_taken: int | None = None
        self.seats_total: int | None = None
        self.outcome: Outcome | None = None
        self.record_path: Path | None = None  # the record in the data dir (also after leaving early)
        self.shown_record: Path | None = None  # what the game-over screen names: the copy if there is one
        self.left_early = False
        # Set before the screen closes for a signal (SIGTERM, SIGHUP): the game stays journaled to resume,
        # instead of being left on purpose.
        self.keep_journal = False
        self.hosted_at: str | None = None  # HOST:PORT of the lobby of a table this laptop hosts and advertises
        self._advertise = False
        self.shadow: Any = None  # this seat's state as of the last event told
        self.round_no = 0
        self._start: Start | None = None
        self._queue: deque[Event] = deque()
        self._flush_scheduled = False
        self._hidden_mine: dict[str, Any] = {}  # kind -> this seat's own hidden move of this round
        self._winners: tuple[int, ...] | None = None
        self._ever_connected: set[int] = set()
        self._shown: tuple[object, ...] | None = None
        self._again_of: AnyPlan | None = None  # playing again after this finished table
        self._again_hosts: frozenset[int] = frozenset()  # its seats whose laptops host a play-again table
        self._back_from: AnyPlan | None = None  # taking a seat back: the plan where a bot held it

    # --- what to play --------------------------------------------------------------------------------
    def host(
        self,
        *,
        options: JSONObject,
        seats: int,
        bots: int,
        bot_kind: str = "heuristic",
        advertise: bool = False,
        patience: float | None = None,
    ) -> NetTable:
        """Host a table on `interface` (seat 0); `bots` seats are filled by in-process bot peers."""
        self.seats_total = seats
        self._advertise = advertise
        if seats - 1 - bots > 0:
            self.model.quit_question = "quit_question_net"

        async def start() -> Outcome:
            return await host_table(
                identity=self.identity, data_dir=self.table_dir, name=self.name, game=self.game.id,
                options=options, seats=seats, bots=bots, interface=self.interface, player=self.player,
                bot_delay=self.bot_delay, step_timeout=self.step_timeout, advertise=advertise,
                on_event=self.on_event, on_runner=self._on_runner, on_lobby=self._on_lobby, bot_kind=bot_kind,
                go=self._ask_go_on, reconnect_timeout=patience if patience is not None else RECONNECT_TIMEOUT,
            )  # fmt: skip

        self._start = start
        return self

    def join(self, address: tuple[str, int], seats_total: int | None = None) -> NetTable:
        """Take a seat at the table whose lobby listens at `address` (from its advert)."""
        self.seats_total = seats_total
        self.model.quit_question = "quit_question_net"

        async def start() -> Outcome:
            return await join_table(
                identity=self.identity, data_dir=self.table_dir, name=self.name, interface=self.interface,
                player=self.player, address=address, step_timeout=self.step_timeout, on_event=self.on_event,
                on_runner=self._on_runner, on_seats=self._on_seats, on_notice=self._on_barred,
            )  # fmt: skip

        self._start = start
        return self

    def again(self, prior: AnyPlan, bot_kind: str = "normal") -> NetTable:
        """Play again after finished table `prior`, with its players and options (`lanplay.table.again`):
        this laptop hosts the new table or joins it, with the bots it ran at `prior`."""
        self.model.quit_question = "quit_question_net"
        self._again_of = prior
        self.seats_total = len(prior.seats)
        self.model.add_event("ev_again")

        async def start() -> Outcome:
            return await play_again(
                prior=prior, identity=self.identity, data_dir=self.table_dir, name=self.name,
                interface=self.interface, player=self.player, bot_kind=bot_kind, bot_delay=self.bot_delay,
                on_event=self.on_event, on_runner=self._on_runner, on_lobby=self._on_again_lobby,
                on_seats=self._on_seats, go=self._ask_go_on, on_hosting=self._on_again_hosts,
            )  # fmt: skip

        self._start = start
        return self

    def _on_again_hosts(self, seats: frozenset[int]) -> None:
        """The laptops hosting a play-again table of the finished one: they said yes (`again_answers`)."""
        self._again_hosts = seats
        self._shown = None
        self._show_seats()

    def _on_again_lobby(self, lobby: LobbyHost, port: int) -> None:
        self.lobby = lobby
        self.model.start_now = lobby.start_with_those_here
        self._shown = None
        self._show_seats()

    def back(self, advert: TableAdvert) -> NetTable:
        """Take back the seat this laptop's person left, at the table that went on without them (P-5.7;
        `advert`: its take-back desk, which names this laptop's key)."""
        self.model.quit_question = "quit_question_net"

        async def start() -> Outcome:
            self.model.set_status("net_back")
            return await back_to_table(
                advert, identity=self.identity, data_dir=self.table_dir, name=self.name, interface=self.interface,
                player=self.player, on_event=self.on_event, on_runner=self._on_runner, on_plan=self._on_back_plan,
            )  # fmt: skip

        self._start = start
        return self

    def _on_back_plan(self, plan: Continuation, seat: int) -> None:
        self._back_from = plan  # where the seat was a bot's: the next plan has this laptop in it again

    def resume(self) -> NetTable:
        """Carry on the game this laptop's journal says it was in (run() returns None if there is none)."""
        self.model.quit_question = "quit_question_net"

        async def start() -> Outcome | None:
            return await resume_table(
                identity=self.identity, data_dir=self.table_dir, interface=self.interface, player=self.player,
                step_timeout=self.step_timeout, on_event=self.on_event, on_runner=self._on_runner,
                bot_delay=self.bot_delay,
            )  # fmt: skip

        self._start = start
        return self

    # --- the back end's life ---------------------------------------------------------------------------
    async def run(self) -> Outcome | None:
        assert self._start is not None, "call host(), join() or resume() first"
        self.model.pre_game = self.runner is None
        self.model.set_status("net_connecting")
        poll = asyncio.ensure_future(self._poll())
        try:
            outcome = await self._start()
        except asyncio.CancelledError:
            if not self.keep_journal:
                self._leave_early()
            raise
        finally:
            poll.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poll
        if outcome is not None and self.runner is not None and self.runner.can_go_on():
            # P-5.7: the people still at the table choose to go on with a bot in the empty seat, or to end.
            self._flush()
            outcome = await play_on(
                self.runner, outcome, interface=self.interface, player=self.player, go=self._ask_go_on,
                on_event=self.on_event, on_runner=self._on_runner, bot_delay=self.bot_delay,
            )  # fmt: skip
        self.outcome = outcome
        if outcome is not None:
            self._finish(outcome)
        return outcome

    async def _ask_go_on(self, runner: TableRunner) -> bool:
        """Ask this seat's person whether to go on with a bot in the seats no longer present (P-5.7)."""
        session = runner.session
        assert session is not None
        self._flush()
        present = session.present()
        empty = [seat for seat in range(len(runner.plan.seats)) if seat not in present]
        go = await self.feed.ask_go_on(empty)
        self.model.set_status("net_go_on_wait" if go else "net_saving")
        return go


    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL)
            try:
                if self.runner is None:
                    self._show_seats()
                else:
                    self._flush()
            except Exception:  # the screen must not stop the game
                log.exception("refreshing the table screen failed")

    def _on_runner(self, runner: TableRunner) -> None:
        runner.may_go_on = True  # P-5.7: the person is asked whether to go on if the table ends early
        before = self.runner
        if before is not None:
            # The game goes on at a new table (P-5.7): the same screen, the scores carried, a bot in the
            # seat that emptied, named after the laptop that runs it.
            self._flush()
            self.round_no = 0
            self.shadow = None
            self._winners = None
            self._hidden_mine.clear()
        self.runner = runner
        names = runner.settings.names
        self.model.pre_game = False
        self.model.set_players(names, runner.me)
        self.model.set_bots(bot_seats(runner.plan.seats))
        # Each seat as the whole screen names it (marker, short name), with the fingerprint to check it by.
        name = self.model.name
        seats = [f"{name(index)} ({seat.fingerprint})" for index, seat in enumerate(runner.plan.seats)]
        self.model.add_event("ev_seats", names=", ".join(seats))
        for bot, host in bot_seats(runner.plan.seats):
            if host is None:
                self.model.add_event("ev_bot_own", bot=name(bot))
            else:
                self.model.add_event("ev_bot_runs_on", bot=name(bot), host=name(host))
        self.model.set_status("net_starting")
        previous = before.plan if before is not None else self._back_from
        if previous is not None and isinstance(runner.plan, Continuation):
            # A seat a bot held is a person's again (P-5.7): every screen says from which round.
            for seat, info in enumerate(runner.plan.seats):
                was = previous.seats[seat] if seat < len(previous.seats) else None
                if info.runs_on is None and was is not None and was.public_key != info.public_key:
                    self.model.add_event("ev_back", name=name(seat), round=len(runner.plan.rounds) + 1)
        if before is not None:
            old_bots = {seat for seat, _ in bot_seats(before.plan.seats)}
            for bot, host in bot_seats(runner.plan.seats):
                if host is not None and bot not in old_bots:
                    self.model.add_event("ev_go_on", names=name(bot), host=name(host))

    def _on_lobby(self, lobby: LobbyHost, port: int) -> None:
        self.lobby = lobby
        if self._advertise:
            self.hosted_at = f"{self.interface}:{port}"
            self.model.add_event("ev_hosting_at", address=self.hosted_at, fingerprint=self.identity.public.fingerprint)
        self._show_seats()

    def _on_barred(self, notice: SeatBarred) -> None:
        """The host barred a seat of the seat draw for withholding its part (P-3.2): say who and why."""
        self.model.add_event("ev_barred", name=shown(notice.name), fingerprint=notice.fingerprint, why=notice.why)

    def _on_seats(self, seats: list[SeatInfo]) -> None:
        if self.lobby is not None and self._again_of is not None:  # joined another laptop's table instead
            self.lobby = None
            self.model.start_now = None
        self.seated = tuple(seats)
        self._show_seats()

    def _show_seats(self) -> None:
        if self.runner is not None:
            return
        if self.lobby is not None:
            self.seated, self.seats_total = self.lobby.taken, self.lobby.seats
        if not self.seated:
            return
        self.seats_taken = len(self.seated)
        shown: tuple[object, ...] = ("seats", self.seated, self.seats_total)
        if shown == self._shown:
            return
        self._shown = shown
        self.model.set_seated([f"{seat.name} ({seat.fingerprint})" for seat in self.seated], self.seats_total)
        if self._again_of is not None:
            prior = self._again_of
            yes, not_here = again_answers(prior, self.seated, self._again_hosts)
            names = [shown_name(prior.seats[seat].name) for seat in not_here]
            self.model.set_status(
                "net_again_host" if self.model.start_now is not None else "net_again",
                yes=", ".join(shown_name(prior.seats[seat].name) for seat in yes) or "–",
                not_here=", ".join(names) or "–",
            )  # fmt: skip
        elif self.seats_total is None:
            self.model.set_status("net_seats_some", taken=self.seats_taken)
        else:
            self.model.set_status("net_seats", taken=self.seats_taken, total=self.seats_total)

    @property
    def session(self) -> TableSession | None:
        return self.runner.session if self.runner is not None else None

    # --- decisions -------------------------------------------------------------------------------------
    async def decide(self, moves: tuple[Any, ...]) -> Any:
        """The person's move among `moves`; None if the game stopped meanwhile."""
        self._flush()
        await self.feed.ready()  # the last round's results stay until the person has seen them
        self._flush()
        session = self.session
        if session is None or session.phase in ("stopping", "ending", "finished") or not moves:
            return None
        kind = self.game.expected(session.view()).kind
        move = await self.feed.offer(moves)
        if move is None:
            return None
        self._hidden_mine[kind] = move
        if self.game.hidden_choice(kind) is not None:  # shown as mine until the table applies it
            card: Any = getattr(move, "card", None)
            self.model.set_recent("my_choice", getattr(card, "code", card))
        return move

    # --- events ---------------------------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        """The runner's listener: called for each event of a batch after the session made the whole
        batch, so the session's state is already past them; they are told once the batch is in."""
        self._queue.append(event)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def refresh(self) -> None:
        """Tell the events heard so far and catch the screen up with the runner (links, whom the table
        waits for, hidden choices made); run() does it every POLL seconds."""
        self._flush()

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self.feed.paused and any(isinstance(e, Exposed | Stopped) for e in self._queue):
            self.feed.resume()  # the game stopped: nothing more to wait for (the feed flushes again)
            return
        while self._queue and not self.feed.paused:
            self._handle(self._queue.popleft())
        if not self.feed.paused:
            self._sync()

    def _handle(self, event: Event) -> None:
        if isinstance(event, Dealt):
            self._dealt(event)
        elif isinstance(event, Moved):
            self._moved(event)
        elif isinstance(event, PeekResult):
            self._peek(event)
        elif isinstance(event, RoundConfirmed):
            self._audited(event)
        elif isinstance(event, Exposed):
            self._exposed(event)
        elif isinstance(event, Stopped):
            self.feed.tell(RoundVoided(self.round_no, "audit_stopped", {"reason": shown(self._stop_words(event))}))
        elif isinstance(event, GameOver):
            self._winners = event.winners
            self.feed.drop_decision()
            self.model.set_status("net_saving")
        elif isinstance(event, Refused):
            log.info("refused input from seat %s: %s %s", event.sender, event.rule, event.message)

    def _dealt(self, event: Dealt) -> None:
        self.round_no = event.round + 1
        self.shadow = self._deal_state()
        self._hidden_mine.clear()
        self.feed.tell(RoundDealt(self.round_no, self.shadow))

    def _stop_words(self, event: Stopped) -> str:
        model = self.model
        if event.owed == "left":
            return model.name(event.by) + " left the table: the round is void, nobody is convicted"
        if event.seat is None:
            return f"{model.name(event.by)} stopped the round for an audit: {event.reason}"
        return f"{model.name(event.by)} stopped the round waiting for {model.name(event.seat)} ({event.owed})"

    def _deal_state(self) -> Any:
        """The seat's state right after the deal: the session may already have applied later moves."""
        session = self.session
        assert session is not None
        return session.dealt_state if session.dealt_state is not None else session.view()

    def _revealed(self, state: Any) -> Any:
        """S-8.3: the table card turned after the predictions (no event says so: it shows in the state)."""
        session = self.session
        assert session is not None
        late = session.late_cards()
        if late is None:
            return state
        after = self.game.reveal(state, list(late))
        self._tell_trump(state, after)
        return after

    def _tell_trump(self, before: Any, after: Any) -> None:
        self.feed.tell(CardsTurned(before, after))

    def _moved(self, event: Moved) -> None:
        before = self.shadow
        if before is None:
            return
        game = self.game
        if game.expected(before).phase == "reveal":
            before = self._revealed(before)
        try:
            move = game.move_from_json(event.move)
            kind = game.expected(before).kind
            hidden = game.hidden_choice(kind) is not None
            if event.seat == self.model.my_seat and hidden and event.move.get(kind) is None:
                move = self._my_hidden_move(kind, move)  # the session tells only that I chose
            after = game.apply(before, move)
        except RuleError as exc:  # never expected: the session applied the same move; resynchronise
            log.warning("cannot follow move %s: %s", event.move, exc)
            self.shadow = self.session.view() if self.session is not None else None
            return
        self.shadow = after
        self.feed.tell(MovePlayed(before, move, after))

    def _my_hidden_move(self, kind: str, move: Any) -> Any:
        mine = self._hidden_mine.pop(kind, None)
        if mine is not None:
            return mine
        # Resumed from the journal: the session's own state holds this seat's real choice.
        session = self.session
        if session is not None and kind == "predict":
            card = session.view().round.predictions[session.me]
            if card is not None:
                return type(move)(move.seat, card)
        return move

    def _peek(self, event: PeekResult) -> None:
        trick = 0
        r = getattr(self.shadow, "round", None)
        for peek in getattr(r, "peeks", ()):
            if peek.peeker == self.model.my_seat and peek.target == event.target:
                trick = peek.trick + 1
        self.feed.tell(PeekSeen(trick, event.target, event.card))

    def _audited(self, event: RoundConfirmed) -> None:
        """S-7.1: the round is confirmed and every prediction is public now."""
        session = self.session
        assert session is not None
        round_no = event.round + 1
        if len(session.rounds) == round_no:
            full = session.state
        else:  # never expected: the session is past this round already
            full = replay(session.record()).rounds[event.round].moves[-1][1]
        self.shadow = full
        self.feed.tell(RoundScored(round_no, full, audited=True))

    def _exposed(self, event: Exposed) -> None:
        """A proof every seat checks showed `event.seat`'s fault (P-5.4)."""
        params = {
            "name": self.model.name(event.seat), "rule": shown(event.rule, 40), "why": why_key(event.rule),
            "reason": shown(event.reason),  # derived from a peer's message (P-6.7)
        }  # fmt: skip
        self.feed.tell(RoundVoided(self.round_no, "audit_blame", params))

    # --- what the screen shows between events ---------------------------------------------------------
    def _sync(self) -> None:
        """Catch the screen up with the session (a turned trump card and links going down are no events)."""
        session, runner, model = self.session, self.runner, self.model
        if session is None or runner is None or model.game_over is not None:
            return
        state = session.view()
        playing = session.phase == "play"
        if self.round_no == 0 and playing and runner.resumed:
            self.round_no = session.round_index + 1  # resumed from the journal: no Dealt was told
            # (a new table's Dealt may still be on its way here when its session is already playing)
            model.add_event("ev_resumed", round=self.round_no)
        if self.shadow is not None and state is not self.shadow and playing:
            self._tell_trump(self.shadow, state)
        if playing or self.shadow is None:
            self.shadow = state
        if self.shadow is not None and not session.complete:
            self.feed.tell(ViewShown(self.shadow, self.round_no or None))
        self._show_committed(session)
        self._show_waiting(session, runner)

    def _show_committed(self, session: TableSession) -> None:
        """Who has made a hidden choice (a prediction, a 6 nimmt! card) that is not applied yet: public,
        shown as the in-process table shows it (a mark, never the card)."""
        self.feed.tell(ChoicesMade(session.committed() if session.phase == "play" else ()))

    def _show_waiting(self, session: TableSession, runner: TableRunner) -> None:
        model = self.model
        me = session.me
        self._ever_connected |= runner.connected
        waiting = session.waiting()
        seats: tuple[int, ...] = ()
        reconnecting = False
        status: str | None = None
        phase = session.phase
        if session.complete:
            status = "net_saving"
        elif runner.network_lost:  # every link down: "waiting for everyone to reconnect" would blame the others
            status = "net_lost"
        elif waiting:
            others = sorted({w.seat for w in waiting if w.seat != me})
            gone = tuple(s for s in others if s in self._ever_connected and s not in runner.connected)
            if gone:
                seats, reconnecting = gone, True
            elif all(w.automatic for w in waiting) and phase in ("seed", "deal", "audit"):
                status = {"seed": "net_starting", "deal": "net_dealing", "audit": "net_auditing"}[phase]
            else:
                seats = tuple(others)
        shown = ("waiting", seats, reconnecting, status, bool(model.moves))
        if shown == self._shown:
            return
        self._shown = shown
        self.feed.tell(WaitingFor(seats, reconnecting, status))

    # --- the end ----------------------------------------------------------------------------------------
    def _finish(self, outcome: Outcome) -> None:
        self._flush()
        self.feed.resume()  # tells what was held behind the last round's results
        model = self.model
        session = self.session
        self.record_path = self._keep_record(outcome.record_path)
        state = session.state if session is not None else None
        totals = self.game.totals(state) if state is not None else (0,) * len(model.players)
        stopped = not outcome.complete
        winners = () if stopped else (self._winners or self.game.winners(state) or ())
        shown = self.shown_record or self.record_path
        runner = self.runner
        model.can_play_again = (
            runner is not None and outcome.finished and not outcome.left and not outcome.network_lost
            and not outcome.table_gone and self.me_in_last_table()
        )  # fmt: skip
        self.feed.tell(TableOver(
            tuple(winners), tuple(totals), str(shown) if shown is not None else None, stopped=stopped,
            network_lost=outcome.network_lost, reason=self._why_stopped(outcome) if stopped else "",
            rounds=len(outcome.record.rounds) if outcome.record is not None else 0,
        ))  # fmt: skip

    def me_in_last_table(self) -> bool:
        """This laptop's seat is still in the last table played (not exposed), so it can say "play again"."""
        session = self.session
        return session is not None and session.me in session.present()

    @property
    def last_plan(self) -> AnyPlan | None:
        """The plan of the last table played here: what "play again" plays again."""
        return self.runner.plan if self.runner is not None else None

    def _why_stopped(self, outcome: Outcome) -> str:
        """Why a game ended before its end, and by whom, for the game-over box (P-5.5: nobody is
        convicted by a stop or a leave; only an exposure names a cheat, by its proof)."""
        if outcome.left:
            return "You left the table: the round in progress is void, nobody is convicted."
        if outcome.table_gone:
            return ("The table is gone: no other seat answered since this laptop came back (they ended the game "
                    "or went on without it). It is not offered again.")  # fmt: skip
        if outcome.exposed:
            return "Exposed by a proof anyone can check: " + "; ".join(outcome.exposed)
        voiding = [stop for stop in outcome.stops if stop.owed != "end"] or list(outcome.stops)
        if voiding:
            return self._stop_words(voiding[0]) + "."
        return "The table ended before the game's end."

    def _keep_record(self, path: Path | None) -> Path | None:
        """The record into the data dir's records (from a `table_dir` of its own), and its copy."""
        if path is None:
            return None
        if path.parent != self.data_dir / "records":
            text = path.read_text(encoding="utf-8")
            runner = self.runner
            table = runner.settings.table if runner is not None else path.stem
            label = record_label(runner.settings.game, runner.settings.names) if runner is not None else None
            moved = save_record(self.data_dir, table, text, label)
            with contextlib.suppress(OSError):
                path.unlink()
            path = moved
        self.model.add_event("ev_record_saved", path=str(path))
        if self.record_copy is not None:
            try:
                self.record_copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, self.record_copy)
                self.shown_record = self.record_copy.resolve()
                self.model.add_event("ev_record_copied", path=str(self.shown_record))
            except OSError as exc:
                log.warning("cannot copy the record to %s: %s", self.record_copy, exc)
        return path

    async def leave(self) -> bool:
        """The person pressed q during the game: a signed leave (P-5.7) unless the screen closes for a
        signal (the game then stays journaled, to resume). True if a leave went out."""
        runner, session = self.runner, self.session
        if self.keep_journal or runner is None or session is None or session.finished or self.outcome is not None:
            return False
        self.left_early = True
        await runner.leave()
        return True

    def _leave_early(self) -> None:
        """The person left mid-game: keep the rounds so far, and do not offer to resume a game left on purpose."""
        self.left_early = True
        runner, session = self.runner, self.session
        if runner is None or session is None:
            return
        with contextlib.suppress(Exception):
            runner.journal.append({"t": "done"})
        record = session.record()
        if record.rounds:
            try:
                label = record_label(runner.settings.game, runner.settings.names)
                path = save_record(self.data_dir, runner.settings.table, record.dumps(), label)
                self.record_path = self._keep_record(path)
            except Exception as exc:  # leaving must not fail for want of a record
                log.warning("cannot save the rounds so far: %s", exc)
