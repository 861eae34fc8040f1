"""The one game API that every lanplay game implements.

A game is a `Game` object: stateless rules that take immutable state values and give new ones
(OpenSpiel's shape: expected / legal_moves / apply / view / result). States know their seats'
hands only as far as the holder of the state knows them:

* full knowledge (replay, audit, local games): every hand is a tuple of cards, every rule is checked;
* partial knowledge (a peer at a real table): other seats' hands are ``None`` with only their size
  known; a move is checked against everything that knowledge allows, and the rest is left to the
  audit, which replays the round with full knowledge.

A round starts from a `Deal`: the game's `layout` says which deck positions go to which seat,
which are turned face up on the table at once, which are turned later (`reveal`), and the rest
stays in a stock nobody sees. Shuffling is not the engine's business: the protocol (or a local
game, with `secrets`) hands it the cards in position order.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from engine.shuffle import shuffle

JSONObject = dict[str, object]

Phase = Literal[
    "deal",  # waiting for `start_round`; a finished round, if any, is still readable from the state
    "reveal",  # partial knowledge: waiting for `reveal` of late table cards (6th Sense late trump)
    "move",  # waiting for one or more seats' moves (`Expected.kind` says which kind)
    "unsettled",  # partial knowledge: the round is played out but cannot be scored (6th Sense: a hidden prediction)
    "over",  # the game has ended
]


class RuleError(Exception):
    """A move, deal or record that breaks a rule; `rule` is the rule id (``S-4.2``) or ``format``."""

    def __init__(self, rule: str, message: str, seat: int | None = None) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.seat = seat


class IllegalMove(RuleError):
    """A move the rules refuse."""


class FormatError(RuleError):
    """Input that is not a well-formed value of the expected kind (rule id ``format``)."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__("format", message, seat)


@dataclass(frozen=True, slots=True)
class Expected:
    """What the game waits for. With several seats in a "move" phase the choice is simultaneous:
    every listed seat owes a move, and nothing is resolved until all have made it."""

    phase: Phase
    seats: tuple[int, ...] = ()
    kind: str = ""  # the kind of move owed, e.g. "predict", "play", "split", "take_row", "pick"
    # True where exactly one of `seats` will move and this peer cannot tell which (partial
    # knowledge: the holder of a card that must open the round); the first valid move settles it.
    one_of: bool = False

    @property
    def simultaneous(self) -> bool:
        return len(self.seats) > 1 and not self.one_of


@dataclass(frozen=True, slots=True)
class DealLayout:
    """Where each position of the shuffled deck goes. Positions index `deck` order after shuffling.

    `deck` lists the card codes of the round's deck in canonical (unshuffled) order; every position
    not named in `hands`, `table` or `late_table` is stock, never seen until the audit.
    """

    deck: tuple[str, ...]
    hands: tuple[tuple[int, ...], ...]
    table: tuple[int, ...] = ()
    late_table: tuple[int, ...] = ()

    def owner(self, position: int) -> int | None:
        for seat, positions in enumerate(self.hands):
            if position in positions:
                return seat
        return None


@dataclass(frozen=True, slots=True)
class PeekDue:
    """A look at a hidden choice the rules grant (6th Sense S-6.4): after trick `trick`, `peeker`
    sees `target`'s hidden choice. The table protocol has the target open it privately."""

    trick: int
    peeker: int
    target: int


HiddenMode = Literal["round", "turn"]

OptionsT = TypeVar("OptionsT")
StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT")
DealT = TypeVar("DealT")


class Rules(ABC, Generic[OptionsT, StateT, MoveT, DealT]):
    """The rules of one game: set-up, the deal, legal moves, applying them, what a seat may know, results.
    Instances hold no state; every method is a pure function."""

    id: str
    title: str
    min_players: int
    max_players: int

    # --- set-up and the deal ---------------------------------------------------------------
    @abstractmethod
    def new_game(self, players: int, options: OptionsT) -> StateT:
        """The state before the first deal (phase "deal")."""

    @abstractmethod
    def expected_dealer(self, state: StateT) -> int | None:
        """The dealer the rules require for the next round, or None where any seat may deal
        (the first round: the protocol draws it from the jointly random seed)."""

    @abstractmethod
    def layout(self, state: StateT, dealer: int) -> DealLayout: ...

    @abstractmethod
    def deal_from_cards(self, state: StateT, dealer: int, cards: Sequence[str | None]) -> DealT:
        """Build the deal from the cards at each layout position (None where unknown to this peer)."""

    def deal_shuffled(self, state: StateT, dealer: int, rng: random.Random) -> DealT:
        """The deal of the layout's deck shuffled by `rng` exactly as `rng.shuffle` does
        (`engine.shuffle.shuffle`), for local games and playouts. A game may build the same deal
        faster: these cards come from its own deck, so they need none of `deal_from_cards`'s checks."""
        cards: list[str | None] = list(self.layout(state, dealer).deck)
        shuffle(cards, rng)
        return self.deal_from_cards(state, dealer, cards)

    @abstractmethod
    def start_round(self, state: StateT, deal: DealT) -> StateT:
        """Validate the deal against the rules and start the round."""

    # --- play ----------------------------------------------------------------------------
    @abstractmethod
    def expected(self, state: StateT) -> Expected: ...

    @abstractmethod
    def legal_moves(self, state: StateT, seat: int) -> tuple[MoveT, ...]:
        """Every move `seat` may make now (empty when it owes none). Needs that seat's hand."""

    @abstractmethod
    def apply(self, state: StateT, move: MoveT) -> StateT:
        """The state after `move`, or IllegalMove naming the rule it breaks."""

    def apply_moves(self, state: StateT, moves: Sequence[MoveT]) -> StateT:
        """The state after `moves`, applied in order: always the state (or the error, raised for the
        first move that breaks a rule) that `apply` gives one move at a time.

        A simultaneous phase's joint action (OpenSpiel's `ApplyActions`): a playout passes every
        owing seat's move of a turn at once, which lets a game build one state for the turn instead
        of one per seat. This default applies them one by one."""
        for move in moves:
            state = self.apply(state, move)
        return state

    def reveal(self, state: StateT, cards: Sequence[str]) -> StateT:
        """Partial knowledge: the late table cards (phase "reveal") have been opened."""
        raise IllegalMove("format", f"{self.id} has no late table cards")

    @abstractmethod
    def view(self, state: StateT, seat: int) -> StateT:
        """The state as `seat` may know it: other hands and hidden choices removed."""

    @abstractmethod
    def move_seat(self, move: MoveT) -> int: ...

    # --- results ------------------------------------------------------------------------
    @abstractmethod
    def totals(self, state: StateT) -> tuple[int, ...]: ...

    @abstractmethod
    def winners(self, state: StateT) -> tuple[int, ...] | None:
        """Winning seats once the game is over, else None."""

    @abstractmethod
    def players(self, state: StateT) -> int: ...


class WireForms(ABC, Generic[OptionsT, StateT, MoveT, DealT]):
    """The canonical JSON of a game's options, deals, moves and cards (records and the table's messages carry
    these), and the reports made from its states."""

    @abstractmethod
    def options_from_json(self, raw: Mapping[str, object]) -> OptionsT:
        """Validate table options (missing keys take defaults); raise FormatError naming the key."""

    @abstractmethod
    def options_to_json(self, options: OptionsT) -> JSONObject: ...

    @abstractmethod
    def deal_from_json(self, state: StateT, raw: Mapping[str, object]) -> DealT: ...

    @abstractmethod
    def deal_to_json(self, deal: DealT) -> JSONObject: ...

    @abstractmethod
    def move_from_json(self, raw: Mapping[str, object]) -> MoveT: ...

    @abstractmethod
    def move_to_json(self, move: MoveT) -> JSONObject: ...

    def card_to_json(self, code: str) -> object:
        """A card code as this game's moves write it."""
        return code

    # --- reports ------------------------------------------------------------------------
    @abstractmethod
    def round_report(self, state: StateT) -> JSONObject:
        """The current (or just finished) round as `lanplay replay --json` reports it."""

    @abstractmethod
    def public_state(self, state: StateT) -> JSONObject:
        """What every seat knows, in canonical JSON values: peers hash it to detect desync."""


class TableHooks(Generic[OptionsT, StateT]):
    """What a table protocol must know about the game. A peer-to-peer table hides hands and some choices;
    these say which, so that the protocol never names a game. Defaults describe a game with no hidden hand."""

    def hand_card_fields(self) -> tuple[str, ...]:
        """Move fields that name a card from the mover's own hand (on a table with hidden hands
        the protocol carries such a card as a deck position plus every seat's key, P-4.3)."""
        return ()

    def hidden_choice(self, kind: str) -> HiddenMode | None:
        """How a move of `kind` is made at a table: None (shown at once), "round" (committed and
        opened only at the round's end, e.g. 6th Sense predictions), or "turn" (committed, then
        opened once every owing seat has committed, e.g. 6 nimmt! cards)."""
        return None

    def hands_public(self, options: OptionsT) -> bool:
        """True where every hand is public (6 nimmt! logic, T-5.2): a card may then travel by name."""
        return True

    def peeks_due(self, state: StateT) -> tuple[PeekDue, ...]:
        """Every look at a hidden choice granted so far this round, in the order granted."""
        return ()

    def tricks_ended(self, state: StateT) -> int:
        """How many tricks of the round have ended in `state` (0 for games without tricks)."""
        return 0


class Game(
    Rules[OptionsT, StateT, MoveT, DealT],
    WireForms[OptionsT, StateT, MoveT, DealT],
    TableHooks[OptionsT, StateT],
):
    """One game as every part of lanplay uses it: its `Rules`, its `WireForms` and its `TableHooks`.
    Instances hold no state; every method is a pure function."""


def require_int(raw: Mapping[str, object], key: str, what: str) -> int:
    value = raw.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormatError(f"{what}: '{key}' must be an integer, got {value!r}")
    return value


def require_str(raw: Mapping[str, object], key: str, what: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise FormatError(f"{what}: '{key}' must be a string, got {value!r}")
    return value


def require_list(raw: Mapping[str, object], key: str, what: str) -> list[object]:
    value = raw.get(key)
    if not isinstance(value, list):
        raise FormatError(f"{what}: '{key}' must be a list, got {value!r}")
    return value


def check_keys(raw: Mapping[str, object], allowed: set[str], what: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise FormatError(f"{what}: unknown key(s) {', '.join(unknown)}")


def winners_by(totals: Sequence[int], *, highest: bool) -> tuple[int, ...]:
    """Seats sharing the best total (ties share the win)."""
    best = max(totals) if highest else min(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)


def require_bool(raw: Mapping[str, object], key: str, what: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise FormatError(f"{what}: '{key}' must be true or false, got {value!r}")
    return value
