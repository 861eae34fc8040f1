"""The values a table's model holds and back ends and games hand it: log lines (`Event`), what the player
can point at (`Choice`), a round's results, a peek's result, the end of the game. Plain frozen values:
a game's bundle (lanplay/games/) builds them without knowing the model (lanplay/ui/model.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from lanplay.ui.i18n import Msg


class Continue:
    """The move of a "next round" button: the back end waits for it between rounds."""

    def __repr__(self) -> str:
        return "CONTINUE"


CONTINUE = Continue()


@dataclass(frozen=True, slots=True)
class GoOnAnswer:
    """The moves of the question asked when a seat left or was stopped for (P-5.7): go on with a bot in
    its seat, or end the game here."""

    go: bool

    def __repr__(self) -> str:
        return "GO_ON" if self.go else "END_HERE"


GO_ON = GoOnAnswer(True)
END_HERE = GoOnAnswer(False)


@dataclass(frozen=True, slots=True)
class Event(Msg):
    """One line of the table's log."""

    private: bool = False  # only this seat sees it (a peek result); shown marked in the log


@dataclass(frozen=True, slots=True)
class Choice:
    """One thing the player can point at now. `moves` empty: visible but refused (`probe` explains)."""

    kind: str  # "card", "row" or "button"
    code: str  # the card's code, the row's index, or the button's message id
    moves: tuple[Any, ...]
    probe: Any = None  # a move whose refusal by the engine says why this choice is not allowed now
    params: Mapping[str, object] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return bool(self.moves)


@dataclass(frozen=True, slots=True)
class ResultRow:
    seat: int
    detail: Msg  # e.g. "predicted R3, won 3 tricks"
    points: int  # this round's points (6th Sense), bullheads (6 nimmt!), chips won (Sixes)
    total: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    round_no: int  # 1-based
    rows: tuple[ResultRow, ...]


@dataclass(frozen=True, slots=True)
class PeekResult:
    """S-6.4: what this seat saw when it peeked; never given to a model of another seat."""

    trick: int  # 1-based
    target: int
    card: str


@dataclass(frozen=True, slots=True)
class Audit:
    round_no: int
    ok: bool
    message: Msg


@dataclass(frozen=True, slots=True)
class GameOver:
    winners: tuple[int, ...]
    totals: tuple[int, ...]
    record_path: str | None
    stopped: bool = False  # left before the end (a record of the rounds so far)
    network_lost: bool = False  # no link for the whole reconnect limit: not over, the journal resumes it
    reason: str = ""  # a stopped game: why, and who (a stop, a leave, an exposure), in plain words
    rounds: int = 0  # a stopped game: how many rounds were confirmed and kept


class TableView(Protocol):
    """What a game's look and words (lanplay/games/GAME/) and the screen pieces (lines.py) read of a table's model
    and do to it; lanplay/ui/model.py's `TableModel` is one. Named here, below the games, so that they need not
    know the model."""

    game: Any
    look: Any
    players: tuple[str, ...]
    my_seat: int
    lang: str
    view: Any
    kind: str
    moves: tuple[Any, ...]
    choices: tuple[Choice, ...]
    question: Choice | None
    cursor: int
    option_grid: dict[int, tuple[int, int]]
    peeks: list[PeekResult]
    recent: dict[str, Any]

    @property
    def options(self) -> tuple[Choice, ...]: ...

    def text(self, key: str, **params: object) -> str: ...

    def name(self, seat: int | None) -> str: ...
    def names(self) -> tuple[str, ...]: ...

    def option_label(self, option: Choice) -> str: ...

    def choose(self, index: int) -> None: ...

    def show_peek(self, trick: int, target: int, card: str) -> None: ...
