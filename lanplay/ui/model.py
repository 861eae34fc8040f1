"""The table as the terminal client shows it: a plain value that back ends feed and keys act on.

Nothing here knows prompt_toolkit or where events come from (pyvim's model apart from layout): a
`TableFeed` (feed.py) writes the game into it from the events of its source, an in-process engine
(`LocalTable`) or the protocol's session (`NetTable`). The model only ever holds what its seat may know:
that seat's `Game.view`, public events, and private results (a peek) meant for this seat alone.

Choosing a move is a small state machine over the legal moves the back end offers:
the moves are grouped by what the player points at (a card, a row, a button); a group with several
moves (the 6/9 card played as 6 or 9, a 0 played plain or blocking one of the trick's cards) asks a
second question. Pointing at a card that has no legal move now is refused with the rule's reason.

Selecting and confirming are two steps, so no key plays a card the player did not see selected:
arrows and typed numbers only select (a number that is not a choice says so and selects nothing),
Enter confirms the selection. A decision starts with nothing selected, so a key meant for the turn
before is never carried into it; only a forced move (one allowed choice) starts selected, and the
footer says it is the only one. A mouse click on an option selects and confirms it at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.api import Game, IllegalMove
from lanplay.games import game_bundle
from lanplay.ui.i18n import Msg, t
from lanplay.ui.names import marker, short_names

# The values the model holds live in values.py (a game's bundle builds them); they are importable from here too.
from lanplay.ui.values import CONTINUE as CONTINUE
from lanplay.ui.values import END_HERE as END_HERE
from lanplay.ui.values import GO_ON as GO_ON
from lanplay.ui.values import Audit as Audit
from lanplay.ui.values import Choice as Choice
from lanplay.ui.values import Continue as Continue
from lanplay.ui.values import Event as Event
from lanplay.ui.values import GameOver as GameOver
from lanplay.ui.values import PeekResult as PeekResult
from lanplay.ui.values import ResultRow as ResultRow
from lanplay.ui.values import RoundResult as RoundResult

AnyGame = Game[Any, Any, Any, Any]


Submit = Callable[[Any], None]


class TableModel:
    """Everything one seat's screen shows, and the actions its keys take."""

    def __init__(
        self,
        game: AnyGame,
        players: Sequence[str],
        my_seat: int,
        lang: str = "en",
        submit: Submit | None = None,
    ) -> None:
        self.game = game
        bundle = game_bundle(game.id)
        self.look = bundle.look  # how this game's table is drawn and its choices made (lanplay/games/GAME/look.py)
        self.words = bundle.words  # how its cards, moves and rounds are told
        self.players = tuple(players)
        self.short = short_names(self.players)  # as the screen shows each seat (lanplay/ui/names.py)
        self.my_seat = my_seat
        self.lang = lang
        self.submit = submit
        self.view: Any = None
        self.round_no = 0
        # the decision
        self.kind = ""
        self.moves: tuple[Any, ...] = ()
        self.choices: tuple[Choice, ...] = ()
        self.question: Choice | None = None
        self.cursor = 0
        self.typed = ""  # digits typed so far towards a number (see `type_digit`)
        self.typed_wrong = ""  # digits typed so far that are no choice: more digits before the pause extend them
        # Where the screen last drew each option (index -> (line, column)): ↑↓ move by screen row.
        self.option_grid: dict[int, tuple[int, int]] = {}
        # what the table is doing
        self.status: Msg | None = None
        self.waiting: tuple[int, ...] = ()
        self.reconnecting = False
        self.error: Msg | None = None
        self.log: list[Event] = []
        self.log_scroll = 0  # lines scrolled back from the newest
        self.round_results: list[RoundResult] = []
        self.peeks: list[PeekResult] = []
        self.audits: dict[int, Audit] = {}
        self.recent: dict[str, Any] = {}  # what just happened on the table (the last trick, the last reveal)
        self.game_over: GameOver | None = None
        # screen state that belongs to the session, not the game
        self.show_help = False
        self.help_scroll = 0
        self.confirm_quit = False
        self.quit_requested = False
        self.pre_game = False  # seats still being taken: leaving costs nobody anything, so q leaves at once
        self.quit_question = "quit_question"  # "quit_question_net" where people on other laptops play too
        self.go_on_seats: tuple[int, ...] = ()  # the seats a bot would fill if the table goes on (P-5.7)
        # Play again (lanplay.table.again): offered at the game-over screen of a networked table this seat
        # finished at; `a` asks for it (the screen closes, and the next table screen plays again).
        self.can_play_again = False
        self.again_requested = False
        # Before a play-again table hosted here starts: `s` starts it with the players who came.
        self.start_now: Callable[[], bool] | None = None
        self.seated: tuple[str, ...] = ()  # before the game: who has taken a seat ("Bob (ab12-…)")
        self.seats_total: int | None = None
        # Each bot seat and the seat whose laptop runs it, which can see its cards (None: a laptop of its own).
        self.bots: tuple[tuple[int, int | None], ...] = ()
        self.revision = 0
        self.listeners: list[Callable[[], None]] = []

    # --- change notification ---------------------------------------------------------------
    def _changed(self) -> None:
        self.revision += 1
        for listener in list(self.listeners):
            listener()

    def text(self, key: str, **params: object) -> str:
        return t(key, self.lang, **params)

    def name(self, seat: int | None) -> str:
        """A seat as every part of the screen names it: its marker and short, distinct name (`▲Alex·bot1`);
        this seat is its own name too, so every line reads the same at every laptop."""
        if seat is None:
            return self.text("nobody")
        return f"{marker(seat)}{self.short[seat]}" if 0 <= seat < len(self.short) else f"#{seat}"

    def names(self) -> tuple[str, ...]:
        """Every seat as `name` shows it, in seat order (for lines that name several seats)."""
        return tuple(self.name(seat) for seat in range(len(self.players)))

    # --- methods the back end calls ----------------------------------------------------------
    def set_players(self, players: Sequence[str], my_seat: int) -> None:
        """The seats as the table finally has them (a networked table knows them once every seat is taken)."""
        self.players = tuple(players)
        self.short = short_names(self.players)
        self.my_seat = my_seat
        self._changed()

    def set_bots(self, bots: Sequence[tuple[int, int | None]]) -> None:
        """Which seats are bots and where each runs (from the signed plan): the header tells every seat."""
        self.bots = tuple(bots)
        self._changed()

    def set_seated(self, seated: Sequence[str], total: int | None) -> None:
        """Before the game: the seats taken so far (name and fingerprint), of `total`."""
        self.seated = tuple(seated)
        self.seats_total = total
        self._changed()

    def update_state(self, view: Any, round_no: int | None = None) -> None:
        """The seat's current view (`Game.view(state, my_seat)`); never another seat's or the full state."""
        self.view = view
        if round_no is not None:
            self.round_no = round_no
        if self.moves and self.kind not in ("continue", "go_on"):
            self._rebuild_choices()
        self._changed()

    def start_round(self, round_no: int) -> None:
        """A new deal: what belonged to the last round (the last trick, peeks) leaves the table."""
        self.round_no = round_no
        self.recent.clear()
        self.peeks.clear()
        self._changed()

    def set_decision(self, moves: Sequence[Any], kind: str | None = None) -> None:
        """The legal moves this seat must choose from now (empty: none)."""
        self.moves = tuple(moves)
        if kind is None:
            kind = self.game.expected(self.view).kind if self.view is not None and self.moves else ""
        self.kind = kind if self.moves else ""
        self.question = None
        self.cursor = -1  # nothing selected: a key meant for the turn before is never carried into this one
        self.typed = self.typed_wrong = ""
        self._rebuild_choices()
        if self.moves:
            self.waiting = ()
            if self.error is not None and self.error.key in ("not_your_turn", "no_such_card", "no_such_choice"):
                self.error = None  # it is now; a number typed before the turn says nothing about this one
        self._changed()

    def clear_decision(self) -> None:
        self.set_decision(())

    def ask_continue(self) -> None:
        """Between rounds: one button; confirming it submits CONTINUE."""
        self.set_decision((CONTINUE,), "continue")

    def ask_go_on(self, empty: Sequence[int]) -> None:
        """A seat left or was stopped for, and the table ended early (P-5.7): go on with a bot in the
        empty seats (`GO_ON`), or end the game here (`END_HERE`)."""
        self.go_on_seats = tuple(empty)
        self.add_event("ev_go_on_asked", names=self.name_list(empty))
        self.set_decision((GO_ON, END_HERE), "go_on")

    def set_status(self, key: str | None, **params: object) -> None:
        self.status = Msg(key, params) if key is not None else None
        self._changed()

    def set_waiting(self, seats: Sequence[int], reconnecting: bool = False) -> None:
        """Whom the table waits for; `reconnecting`: their laptop dropped off and is expected back."""
        self.waiting = tuple(seats)
        self.reconnecting = reconnecting
        self._changed()

    def add_event(self, key: str, private: bool = False, **params: object) -> None:
        self.add_events([Event(key, params, private)])

    def add_events(self, events: Sequence[Event]) -> None:
        if not events:
            return
        self.log.extend(events)
        if self.log_scroll:
            self.log_scroll += len(events)  # keep the lines the reader scrolled to in place
        self._changed()

    def set_recent(self, key: str, value: Any) -> None:
        self.recent[key] = value
        self._changed()

    def add_round_result(self, result: RoundResult) -> None:
        self.round_results.append(result)
        self._changed()

    def show_peek(self, trick: int, target: int, card: str) -> None:
        """S-6.4: the peek result, for the peeker's model only."""
        self.peeks.append(PeekResult(trick, target, card))
        self.add_event("ev_peek_result", private=True, trick=trick, name=self.name(target), card=card)

    def set_audit(self, round_no: int, ok: bool, key: str, **params: object) -> None:
        audit = Audit(round_no, ok, Msg(key, {"round": round_no, **params}))
        self.audits[round_no] = audit
        self.add_events([Event(audit.message.key, audit.message.params)])

    def set_error(self, key: str | None, **params: object) -> None:
        self.error = Msg(key, params) if key is not None else None
        self._changed()

    def set_game_over(
        self,
        winners: Sequence[int],
        totals: Sequence[int],
        record_path: str | None,
        stopped: bool = False,
        network_lost: bool = False,
        reason: str = "",
        rounds: int = 0,
    ) -> None:
        self.game_over = GameOver(
            tuple(winners), tuple(totals), record_path, stopped or network_lost, network_lost, reason, rounds
        )
        self.moves, self.choices, self.kind, self.question = (), (), "", None
        self.waiting = ()
        self.confirm_quit = False
        self.error = None  # a refusal from before the end says nothing now
        self._changed()

    # --- methods keys call --------------------------------------------------------------------
    @property
    def options(self) -> tuple[Choice, ...]:
        """What the cursor moves over now: the choices, or the second question's answers."""
        if self.question is not None:
            return second_question(self, self.question)
        return self.choices

    def move_cursor(self, delta: int) -> None:
        """←→: the previous or next option that may be chosen (greyed ones are skipped, unless no option
        may be chosen: then the cursor visits them, so their refusals can still be read)."""
        options = self.options
        if not options:
            return
        self.typed = self.typed_wrong = ""
        step = 1 if delta > 0 else -1
        if not 0 <= self.cursor < len(options):  # nothing selected: → starts at the first option, ← at the last
            self.cursor = -1 if step > 0 else len(options)
        any_enabled = any(o.enabled for o in options)
        for _ in range(abs(delta)):
            index = self.cursor
            for _ in range(len(options)):
                index = (index + step) % len(options)
                if options[index].enabled or not any_enabled:
                    break
            self.cursor = index
        self._changed()

    def move_row(self, delta: int) -> None:
        """↑↓: the option one screen row up or down, nearest in column; on a single row, like ←→."""
        options = self.options
        grid = {i: place for i, place in self.option_grid.items() if i < len(options)}
        rows = sorted({line for line, _ in grid.values()})
        if len(rows) < 2 or self.cursor not in grid:
            self.move_cursor(delta)
            return
        self.typed = self.typed_wrong = ""
        line, column = grid[self.cursor]
        later = [r for r in rows if (r > line if delta > 0 else r < line)]
        for row in later if delta > 0 else reversed(later):
            here = [i for i, (r, _) in grid.items() if r == row]
            enabled = [i for i in here if options[i].enabled] or (here if not any(o.enabled for o in options) else [])
            if enabled:
                self.cursor = min(enabled, key=lambda i: (abs(grid[i][1] - column), i))
                self._changed()
                return

    # --- typing a number: one rule per decision, shown in the footer -------------------------------
    def numbers_are_cards(self) -> bool:
        """6 nimmt! cards are numbers: typing 62 picks card 62. Everywhere else a number is the n-th choice."""
        return self.look.NUMBERS_ARE_CARDS and self.question is None and bool(self.options) and all(
            o.kind == "card" for o in self.options
        )

    def number_labels(self) -> list[str]:
        """What typing selects, option by option: the card's number, or its position (1, 2, …)."""
        if self.numbers_are_cards():
            return [o.code for o in self.options]
        return [str(i) for i in range(1, len(self.options) + 1)]

    def index_for_number(self, typed: str) -> int | None:
        labels = self.number_labels()
        return labels.index(typed) if typed in labels else None

    def type_digit(self, digit: str) -> bool:
        """A digit key: it extends the number being typed and selects the option with that number, never
        confirming it (Enter does). A number that no option has or starts with says so and selects nothing.
        True: a number is being typed; the caller calls `finish_typing` after a pause without digits,
        and the next digit after that starts a new number."""
        options = self.options
        if not options:
            self.typed = self.typed_wrong = ""
            if self.game_over is None:
                self.set_error("not_your_turn")
            return False
        if self.typed_wrong:  # 9 then 1 with no card 91: the error names 91, and nothing is selected
            self._no_such_number(self.typed_wrong + digit)
            return True
        typed = self.typed + digit
        labels = self.number_labels()
        if not any(label.startswith(typed) for label in labels):
            self._no_such_number(typed)
            return True
        self.typed = typed
        exact = self.index_for_number(typed)
        self.cursor = exact if exact is not None else -1  # "9" of 93: nothing selected until the number is whole
        option = options[exact] if exact is not None else None
        self.error = refusal(self, option) if option is not None and not option.enabled else None
        self._changed()
        return True

    def finish_typing(self) -> None:
        """The pause after a digit: the number typed so far is whole. It stays selected (Enter confirms it);
        a number that is only the start of others (9 of 93, no 9) says there is no such choice."""
        typed, self.typed, self.typed_wrong = self.typed, "", ""
        if not typed:
            return
        if self.index_for_number(typed) is None:
            self._no_such_number(typed, whole=True)
            return
        self._changed()

    def _no_such_number(self, typed: str, whole: bool = False) -> None:
        """Say there is no choice `typed` and select nothing; `whole`: the number is complete (the pause,
        Enter), else digits typed before the pause still extend it."""
        self.typed, self.typed_wrong = "", "" if whole else typed
        self.cursor = -1  # selects nothing: Enter now plays no card the player did not choose
        if self.numbers_are_cards():
            self.set_error("no_such_card", number=typed)
        else:
            self.set_error("no_such_choice", number=typed, count=len(self.options))

    def only_choice(self) -> Choice | None:
        """The one option that may be chosen now, if there is exactly one (a forced move)."""
        enabled = [o for o in self.options if o.enabled]
        return enabled[0] if len(enabled) == 1 else None

    def choose(self, index: int) -> None:
        """Select option `index` (0-based) and confirm it at once: a mouse click, or a number and Enter
        typed as one line (`--plain`)."""
        self.typed = self.typed_wrong = ""
        options = self.options
        if not options:
            if self.game_over is None:
                self.set_error("not_your_turn")
            return
        if not 0 <= index < len(options):
            self.set_error("no_such_choice", number=index + 1, count=len(options))
            return
        self.cursor = index
        self.confirm()

    def confirm(self) -> None:
        """Enter: play (or answer with) the selected option; a number being typed is taken as whole."""
        options = self.options
        if not options:
            if self.game_over is None:
                self.set_error("not_your_turn")
            return
        if self.typed_wrong:
            self._no_such_number(self.typed_wrong, whole=True)
            return
        if self.typed:
            typed, self.typed = self.typed, ""
            index = self.index_for_number(typed)
            if index is None:
                self._no_such_number(typed, whole=True)
                return
            self.cursor = index
        if not 0 <= self.cursor < len(options):
            self.set_error("nothing_selected")
            return
        option = options[self.cursor]
        if not option.enabled:
            self.error = refusal(self, option)
            self._changed()
            return
        if self.question is None and len(option.moves) > 1:
            self.question = option
            self.cursor = -1  # the answer is selected and confirmed like any choice
            self.typed = ""
            self.error = None
            self._changed()
            return
        self._submit(option.moves[0])

    def back(self) -> None:
        """Leave the second question for the first."""
        self.typed = self.typed_wrong = ""
        if self.question is not None:
            code = self.question.code
            self.question = None
            self.cursor = next((i for i, c in enumerate(self.choices) if c.code == code), 0)
            self._changed()

    def _submit(self, move: Any) -> None:
        if self.submit is None:
            self.set_error("not_your_turn")
            return
        saved = (self.moves, self.kind, self.choices, self.question, self.cursor)
        # Cleared first: a back end may offer the next decision from inside `submit`.
        self.moves, self.kind, self.choices, self.question, self.cursor = (), "", (), None, -1
        self.error = None
        try:
            self.submit(move)
        except IllegalMove as exc:
            self.moves, self.kind, self.choices, self.question, self.cursor = saved
            self.error = Msg("refused", {"rule": exc.rule, "reason": exc.message})
        self._changed()

    def scroll_log(self, delta: int) -> None:
        """Positive: back in time."""
        self.log_scroll = max(0, min(len(self.log) - 1, self.log_scroll + delta)) if self.log else 0
        self._changed()

    def toggle_help(self) -> None:
        self.show_help = not self.show_help
        self.help_scroll = 0
        self._changed()

    def scroll_help(self, delta: int) -> None:
        self.help_scroll = max(0, self.help_scroll + delta)
        self._changed()

    def request_quit(self) -> None:
        """`q`: ask first while a game is on; before it starts and after it ends leave at once."""
        if self.game_over is not None or self.pre_game:
            self.quit_requested = True
        else:
            self.confirm_quit = True
        self._changed()

    def request_again(self) -> None:
        """`a` at the game-over screen: play again with the same players (the screen closes for the new table)."""
        if self.game_over is not None and self.can_play_again:
            self.again_requested = self.quit_requested = True
            self._changed()

    def request_start_now(self) -> None:
        """`s` while a play-again table hosted here waits: start it with the players who came."""
        if self.start_now is not None and self.pre_game and not self.start_now():
            self.set_error("again_cannot_start")

    def answer_quit(self, leave: bool) -> None:
        self.confirm_quit = False
        self.quit_requested = leave
        self._changed()

    # --- what the screen says ----------------------------------------------------------------
    def status_msg(self) -> Msg:
        if self.game_over is not None:
            return Msg("game_over_status_again" if self.can_play_again else "game_over_status")
        if self.moves:
            if self.question is not None:
                return Msg("second_question", {"card": self.option_label(self.question)})
            return prompt_msg(self)
        if self.waiting:
            names = self.name_list(self.waiting)
            return Msg("waiting_reconnect" if self.reconnecting else "waiting_for", {"names": names})
        if self.status is not None:
            return self.status
        return Msg("status_idle")

    def option_label(self, option: Choice) -> str:
        """An option as the screen names it: a card by its shown name (the 6/9 card is `G6/9`)."""
        if option.kind == "card":
            return self.words.card_name(option.code)
        if option.kind == "row":
            return self.text("row_n", row=int(option.code) + 1)
        return self.text(option.code, **option.params)

    def name_list(self, seats: Sequence[int]) -> str:
        names = [self.name(s) for s in seats]
        if len(names) <= 1:
            return "".join(names)
        return self.text("and_list", first=", ".join(names[:-1]), last=names[-1])

    def _rebuild_choices(self) -> None:
        if not self.moves:
            self.choices = ()
            self.question = None
            self.cursor = -1
            return
        old = self.options[self.cursor].code if 0 <= self.cursor < len(self.options) else None
        self.choices = build_choices(self)
        if self.question is not None:
            return
        codes = [c.code for c in self.choices]
        enabled = [i for i, c in enumerate(self.choices) if c.enabled]
        if old in codes:
            self.cursor = codes.index(old)
        elif "split_no" in codes:  # S-6.5: a stray Enter keeps the count as it is
            self.cursor = codes.index("split_no")
        elif len(enabled) == 1:  # a forced move: selected, and the footer says it is the only one
            self.cursor = enabled[0]
        else:
            self.cursor = -1


# --- choices ----------------------------------------------------------------------------------------


def build_choices(model: TableModel) -> tuple[Choice, ...]:
    if model.kind == "continue":
        return (Choice("button", "next_round", model.moves),)
    if model.kind == "go_on":
        names = model.name_list(model.go_on_seats)
        return (
            Choice("button", "go_on_bot", (GO_ON,), params={"names": names}),
            Choice("button", "end_here", (END_HERE,)),
        )
    return model.look.choices(model.view, model.my_seat, model.moves)


def second_question(model: TableModel, group: Choice) -> tuple[Choice, ...]:
    """The answers for a card with several moves: 6/9 as 6 or 9 (S-6.3), a 0 plain or blocking (S-6.1)."""
    out = []
    for move in group.moves:
        as_value = getattr(move, "as_value", None)
        block = getattr(move, "block", None)
        if as_value is not None:
            out.append(Choice("button", "as_value", (move,), params={"value": as_value}))
        elif block is not None:
            owner = next((p.seat for p in model.view.round.trick if p.card is block), None)
            out.append(Choice("button", "block_card", (move,), params={"name": model.name(owner), "card": str(block)}))
        elif hasattr(move, "block"):
            out.append(Choice("button", "plain_zero", (move,)))
        else:
            out.append(Choice("button", "move_text", (move,), params={"text": str(move)}))
    return tuple(out)


def prompt_msg(model: TableModel) -> Msg:
    if model.kind == "continue":
        return Msg("round_over_continue")
    if model.kind == "go_on":
        return Msg("net_go_on", {"names": model.name_list(model.go_on_seats)})
    return model.look.prompt(model)


def refusal(model: TableModel, option: Choice) -> Msg:
    """Why `option` is not allowed now, in the player's words where the rule is a common one."""
    if option.probe is None or model.view is None:
        return Msg("not_allowed_now")
    try:
        model.game.apply(model.view, option.probe)
    except IllegalMove as exc:
        said = model.look.refusal(model, option, exc)  # the game's own words for its common rules
        return said if said is not None else Msg("refused", {"rule": exc.rule, "reason": exc.message})
    return Msg("not_allowed_now")
