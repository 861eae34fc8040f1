"""What a game brings to lanplay: one `GameBundle`, made in lanplay/games/GAME/__init__.py and listed once in
lanplay/games/__init__.py. Nothing outside a game's bundle and that list names a game.

A bundle holds the game's rules (its engine module, engine/GAME.py, listed in engine/games.py), how its table
is drawn and its choices offered (`GameLook`, the bundle's look.py), how its cards, moves and rounds are told
(`GameWords`, its words.py), its rule-of-thumb bot (bot.py), its part of the expert search (`Searcher`, search.py)
and the option form the lobby offers.
Its words in both languages and its rules summary on `?` are its texts.py (the registry adds them to
lanplay/ui/i18n.py's shared words); its full rules with their ids, for `lanplay rules`, are its rules.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Protocol

from engine.api import Game, IllegalMove
from lanplay.bots import Bot
from lanplay.bots.expert import Searcher
from lanplay.ui.i18n import Msg
from lanplay.ui.lines import Lines
from lanplay.ui.values import Choice, Event, RoundResult, TableView

AnyGame = Game[Any, Any, Any, Any]
# A round as a record replays it: each move's JSON and the state after it.
Moves = Sequence[tuple[dict[str, object], Any]]


class GameLook(Protocol):
    """How the game's table is drawn and what its player points at (a bundle's look.py)."""

    CARD_MARK: str  # put before a card that may be played (Sixes: "▸"), else ""
    OWN_GRID_KINDS: frozenset[str]  # decisions whose options the table area places itself (6 nimmt!'s rows)
    HIGHEST_FIRST: bool  # the game-over ranking: the highest total first (6 nimmt!: the fewest bullheads win)
    NUMBERS_ARE_CARDS: bool  # typing a number picks the card of that number (6 nimmt!), not the n-th choice

    def card_look(self, code: str) -> tuple[str, str]: ...
    def header_detail(self, model: TableView) -> str: ...
    def table_area(self, model: TableView, width: int) -> Lines: ...
    def scores(self, model: TableView, width: int) -> Lines: ...
    def hand_area(self, model: TableView, width: int) -> Lines: ...
    def choices(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Choice, ...]: ...
    def prompt(self, model: TableView) -> Msg: ...
    def refusal(self, model: TableView, option: Choice, exc: IllegalMove) -> Msg | None: ...


class GameWords(Protocol):
    """How the game is told (a bundle's words.py): cards, record moves and rounds for `lanplay replay`, the
    table's log line by line, its options."""

    OPTION_HELP: Mapping[str, str]  # option key -> what it does (`lanplay play --help`)

    def card_name(self, code: str) -> str: ...
    def option_notes(self, options: Mapping[str, object]) -> list[str]: ...
    def form_notes(self, values: Mapping[str, object]) -> tuple[str, ...]: ...
    def round_lines(self, players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]: ...
    def round_start_events(self, model: TableView, view: Any, round_no: int) -> list[Event]: ...
    def move_events(self, model: TableView, before: Any, move: Any, after: Any) -> list[Event]: ...
    def reveal_events(self, before: Any, after: Any) -> list[Event]: ...
    def round_result(self, model: TableView, state: Any, round_no: int) -> RoundResult | None: ...
    def round_end_events(self, model: TableView, state: Any) -> list[Event]: ...


@dataclass(frozen=True)
class GameBundle:
    package: str  # the bundle's package (lanplay.games.GAME): its rules.md, the full rules for `lanplay rules`
    game: AnyGame  # the rules: engine/GAME.py
    look: GameLook
    words: GameWords
    heuristic: Callable[[int | None], Bot]  # its rule-of-thumb bot, from a seed
    searcher: Callable[[], Searcher]  # a fresh searcher for one expert bot (it keeps state between decisions)
    form: tuple[tuple[str, tuple[object, ...]], ...]  # the lobby's option form: key, values it cycles through
    texts: Mapping[str, Mapping[str, str]]  # its words by language (its texts.py): registered with the shared ones
    rules: Mapping[str, tuple[str, ...]]  # its rules summary on `?`, by language

    @property
    def id(self) -> str:
        return self.game.id

    def rules_text(self) -> str:
        """The game's full rules with their ids (S-…, T-…, X-…), shipped in its package (rules.md)."""
        return files(self.package).joinpath("rules.md").read_text(encoding="utf-8")
