"""Sixes (Spanish "Seises"): build four suit columns outward from the sixes (rules X-1 … X-3).

Rule ids refer to shared/rules/sixes.md. Cards are their codes (suit letter + rank: ``O6``, ``BA``,
``EQ``). The state is one immutable `SixesState`; the current round lives in `SixesRound` and stays
readable after the round ends (until the next deal).

Everything a move is checked against is public except the hands: the columns on the table decide
which cards are playable, so with partial knowledge only two things are left to the audit — that a
seat whose hand is unknown really held the card it played, and that a pass was not a false pass
(X-2.4, a pass while holding a playable card).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.api import (
    DealLayout,
    Expected,
    FormatError,
    Game,
    IllegalMove,
    JSONObject,
    check_keys,
    require_int,
    winners_by,
)
from engine.fastvalue import fast_constructor

Card = str  # a card code, X-1.1

SUITS: tuple[str, ...] = ("O", "C", "E", "B")  # oros, copas, espadas, bastos
SUIT_NAMES: tuple[str, ...] = ("oros", "copas", "espadas", "bastos")
RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "J", "Q", "K")  # J follows 7
SIX = 5  # rank index of the 6
DECK: tuple[Card, ...] = tuple(suit + rank for suit in SUITS for rank in RANKS)  # canonical order
OPENING_CARD: Card = "O6"
MIN_CHIPS, MAX_CHIPS, DEFAULT_CHIPS = 1, 50, 10
MIN_PLAYERS, MAX_PLAYERS = 3, 8

CARD_INDEX: dict[Card, int] = {card: index for index, card in enumerate(DECK)}
SUIT_OF: dict[Card, int] = {card: index // len(RANKS) for index, card in enumerate(DECK)}
RANK_OF: dict[Card, int] = {card: index % len(RANKS) for index, card in enumerate(DECK)}

# A column is (lowest card, highest card) of a suit on the table, or None before its 6 is played.
Column = tuple[Card, Card] | None
Columns = tuple[Column, ...]  # indexed by suit: O, C, E, B
HistoryEntry = tuple[int, Card | None]  # (seat, card played) or (seat, None) for a pass
NO_COLUMNS: Columns = (None, None, None, None)


def card_at(suit: int, rank: int) -> Card:
    return DECK[suit * len(RANKS) + rank]


def _compute_opened_by(card: Card) -> frozenset[Card]:
    suit, rank = SUIT_OF[card], RANK_OF[card]
    if rank == SIX:
        return frozenset({card_at(suit, SIX - 1), card_at(suit, SIX + 1)})
    if rank < SIX:
        return frozenset({card_at(suit, rank - 1)}) if rank > 0 else frozenset()
    return frozenset({card_at(suit, rank + 1)}) if rank < len(RANKS) - 1 else frozenset()


_OPENS: dict[Card, frozenset[Card]] = {card: _compute_opened_by(card) for card in DECK}
_ALONE: dict[Card, frozenset[Card]] = {card: frozenset({card}) for card in DECK}
_SIXES: frozenset[Card] = frozenset(card_at(suit, SIX) for suit in range(len(SUITS)))


# --- pure helpers (shared with bots and UI) ------------------------------------------------


def opened_by(card: Card) -> frozenset[Card]:
    """The cards that become playable when `card` is played onto its column (X-2.3)."""
    return _OPENS[card]


def column_ends(columns: Columns) -> frozenset[Card]:
    """Every card that may be played on `columns` (X-2.3); only O6 before the round is opened (X-2.2)."""
    if columns[0] is None:
        return frozenset({OPENING_CARD})
    out: set[Card] = set()
    for suit, column in enumerate(columns):
        if column is None:
            out.add(card_at(suit, SIX))
            continue
        low, high = RANK_OF[column[0]], RANK_OF[column[1]]
        if low > 0:
            out.add(card_at(suit, low - 1))
        if high < len(RANKS) - 1:
            out.add(card_at(suit, high + 1))
    return frozenset(out)


def playable_cards(columns: Columns, hand: Iterable[Card]) -> tuple[Card, ...]:
    """The cards of `hand` that may be played on `columns` now (X-2.2, X-2.3), in hand order."""
    ends = column_ends(columns)
    return tuple(card for card in hand if card in ends)


def on_table(columns: Columns, card: Card) -> bool:
    """Whether `card` has already been played onto its column."""
    column = columns[SUIT_OF[card]]
    return column is not None and RANK_OF[column[0]] <= RANK_OF[card] <= RANK_OF[column[1]]


def cards_beyond(card: Card) -> tuple[Card, ...]:
    """The cards of `card`'s suit that can only be played after it, nearest first, in the direction(s)
    it extends its column: below for A–5, above for 7–K, both (lower side first) for the 6."""
    return _BEYOND[card]


def _compute_cards_beyond(card: Card) -> tuple[Card, ...]:
    suit, rank = SUIT_OF[card], RANK_OF[card]
    below = tuple(card_at(suit, r) for r in range(rank - 1, -1, -1))
    above = tuple(card_at(suit, r) for r in range(rank + 1, len(RANKS)))
    if rank == SIX:
        return below + above
    return below if rank < SIX else above


_BEYOND: dict[Card, tuple[Card, ...]] = {card: _compute_cards_beyond(card) for card in DECK}


def extend_column(columns: Columns, card: Card) -> Columns:
    """The columns after `card` is played (which must be playable)."""
    suit, rank = SUIT_OF[card], RANK_OF[card]
    column = columns[suit]
    if column is None:
        new: Column = (card, card)
    elif rank < SIX:
        new = (card, column[1])
    else:
        new = (column[0], card)
    out = list(columns)
    out[suit] = new
    return tuple(out)


def hand_sizes_for(players: int, dealer: int) -> tuple[int, ...]:
    """X-1.3: 40 cards dealt one at a time starting left of the dealer."""
    sizes = _SIZES.get((players, dealer))
    return sizes if sizes is not None else tuple(len(positions) for positions in _positions(players, dealer))


def _positions(players: int, dealer: int) -> tuple[tuple[int, ...], ...]:
    """Deck position p goes to seat (dealer + 1 + p) % players (X-1.3, X-2.1)."""
    return tuple(
        tuple(p for p in range(len(DECK)) if (dealer + 1 + p) % players == seat) for seat in range(players)
    )


_LAYOUTS: dict[tuple[int, int], DealLayout] = {
    (n, dealer): DealLayout(DECK, _positions(n, dealer))
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
    for dealer in range(n)
}
_SIZES: dict[tuple[int, int], tuple[int, ...]] = {
    key: tuple(len(positions) for positions in layout.hands) for key, layout in _LAYOUTS.items()
}


def parse_card(code: object, seat: int | None = None) -> Card:
    if not isinstance(code, str) or code not in CARD_INDEX:
        raise FormatError(
            f"unknown Sixes card {code!r} (X-1.1: suit O/C/E/B + rank A,2,3,4,5,6,7,J,Q,K, e.g. 'O6')", seat
        )
    return code


# --- values ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SixesOptions:
    chips: int = DEFAULT_CHIPS


@dataclass(frozen=True, slots=True)
class Play:
    """X-2.3: play `card` onto its column."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Pass:
    """X-2.4: no playable card; pay one chip to the pot (none without chips)."""

    seat: int


Move = Play | Pass


@dataclass(frozen=True, slots=True)
class SixesDeal:
    dealer: int
    hands: tuple[tuple[Card, ...] | None, ...]  # None where unknown to this peer


@dataclass(frozen=True, slots=True)
class SixesRound:
    dealer: int
    hands: tuple[tuple[Card, ...] | None, ...]  # sorted in deck order; None: unknown to this state
    hand_sizes: tuple[int, ...]
    columns: Columns
    playable: frozenset[Card]  # the cards playable on `columns`, the four 6s before O6
    turn: int | None  # seat to move; None before O6 is played and after the round ended
    opener: int | None  # seat that played O6 (X-2.6: it deals next)
    winner: int | None  # seat that went out
    pot_won: int  # chips the winner took from the pot
    # Per seat, the cards it has shown it does not hold: a pass proves it held none of the cards
    # playable then, and cards never come back to a hand. Public, like the passes.
    lacks: tuple[frozenset[Card], ...] = ()  # () until somebody passes
    # Every move of the round in order, O6 first: (seat, card) for a play, (seat, None) for a pass.
    # Public like the columns (every card played and every pass is seen by the table); a search
    # reads from it what a seat chose to play while it could have played something else.
    history: tuple[HistoryEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class SixesState:
    players: int
    options: SixesOptions
    rounds_started: int
    chips: tuple[int, ...]
    pot: int
    round: SixesRound | None
    over: bool


_DECK_SET: frozenset[object] = frozenset(DECK)
_new_round = fast_constructor(SixesRound)
_new_state = fast_constructor(SixesState)

# Immutable move and expectation values are shared, not rebuilt in the hot path.
_PLAYS: tuple[dict[Card, Play], ...] = tuple({c: Play(seat, c) for c in DECK} for seat in range(MAX_PLAYERS))
_PASSES: tuple[Pass, ...] = tuple(Pass(seat) for seat in range(MAX_PLAYERS))
_PLAYED: tuple[dict[Card, HistoryEntry], ...] = tuple({c: (seat, c) for c in DECK} for seat in range(MAX_PLAYERS))
_PASSED: tuple[HistoryEntry, ...] = tuple((seat, None) for seat in range(MAX_PLAYERS))
_EXPECT_PLAY: tuple[Expected, ...] = tuple(Expected("move", (seat,), "play") for seat in range(MAX_PLAYERS))
_EXPECT_DEAL = Expected("deal")
_EXPECT_OVER = Expected("over")


def _play(seat: int, card: Card) -> Play:
    return _PLAYS[seat][card] if 0 <= seat < MAX_PLAYERS and card in CARD_INDEX else Play(seat, card)


def _pass(seat: int) -> Pass:
    return _PASSES[seat] if 0 <= seat < MAX_PLAYERS else Pass(seat)


def _o6_candidates(r: SixesRound) -> tuple[int, ...]:
    """Seats that may hold O6: its holder if known, else every seat whose hand is unknown."""
    for seat, hand in enumerate(r.hands):
        if hand is not None and OPENING_CARD in hand:
            return (seat,)
    return tuple(seat for seat, hand in enumerate(r.hands) if hand is None)


def _unplayable_reason(columns: Columns, card: Card) -> str:
    suit = SUIT_OF[card]
    if on_table(columns, card):
        return f"{card} is already on the table"
    column = columns[suit]
    if column is None:
        return f"the {SUIT_NAMES[suit]} column is not open yet: only {card_at(suit, SIX)} may open it"
    low, high = RANK_OF[column[0]], RANK_OF[column[1]]
    fits = [card_at(suit, r) for r in (low - 1, high + 1) if 0 <= r < len(RANKS)]
    run = column[0] if low == high else f"{column[0]}–{column[1]}"
    return (
        f"{card} does not fit the {SUIT_NAMES[suit]} column {run}: only the card directly below or above it "
        f"({' or '.join(fits)}) may go there"
    )


# --- the game --------------------------------------------------------------------------------


class Sixes(Game[SixesOptions, SixesState, Move, SixesDeal]):
    id = "sixes"
    title = "Sixes"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    # options and set-up
    def options_from_json(self, raw: Mapping[str, object]) -> SixesOptions:
        check_keys(raw, {"chips"}, "sixes options")
        chips = raw.get("chips", DEFAULT_CHIPS)
        if not isinstance(chips, int) or isinstance(chips, bool) or not MIN_CHIPS <= chips <= MAX_CHIPS:
            raise FormatError(
                f"sixes options: 'chips' must be a whole number from {MIN_CHIPS} to {MAX_CHIPS} (X-1.4), got {chips!r}"
            )
        return SixesOptions(chips)

    def options_to_json(self, options: SixesOptions) -> JSONObject:
        return {"chips": options.chips}

    def new_game(self, players: int, options: SixesOptions) -> SixesState:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise IllegalMove("X-1.3", f"Sixes is for {MIN_PLAYERS}–{MAX_PLAYERS} players, not {players}")
        if not MIN_CHIPS <= options.chips <= MAX_CHIPS:
            raise IllegalMove("X-1.4", f"every player starts with {MIN_CHIPS}–{MAX_CHIPS} chips, not {options.chips}")
        return SixesState(players, options, 0, (options.chips,) * players, 0, None, False)

    # what a table protocol must know (engine.api.Game)
    def hand_card_fields(self) -> tuple[str, ...]:
        return ("play",)

    def hands_public(self, options: SixesOptions) -> bool:
        return False

    def players(self, state: SixesState) -> int:
        return state.players

    def expected_dealer(self, state: SixesState) -> int | None:
        r = state.round
        return r.opener if r is not None else None  # the first dealer is drawn

    def layout(self, state: SixesState, dealer: int) -> DealLayout:
        layout = _LAYOUTS.get((state.players, dealer))
        if layout is None:
            raise IllegalMove("X-2.6", f"dealer {dealer} is not a seat of this {state.players}-player table")
        return layout

    def deal_from_cards(self, state: SixesState, dealer: int, cards: Sequence[str | None]) -> SixesDeal:
        layout = self.layout(state, dealer)
        if len(cards) != len(DECK):
            raise FormatError(f"a Sixes deal has {len(DECK)} positions (X-1.3), got {len(cards)}")
        hands: list[tuple[Card, ...] | None] = []
        for positions in layout.hands:
            codes = [cards[p] for p in positions]
            if None in codes:
                hands.append(None)
            elif _DECK_SET.issuperset(codes):  # the common case, checked at once
                hands.append(tuple(codes))  # type: ignore[arg-type]
            else:
                hands.append(tuple(parse_card(c) for c in codes))  # names the bad code
        return SixesDeal(dealer, tuple(hands))

    def deal_from_json(self, state: SixesState, raw: Mapping[str, object]) -> SixesDeal:
        check_keys(raw, {"dealer", "hands"}, "sixes deal")
        dealer = require_int(raw, "dealer", "sixes deal")
        hands_raw = raw.get("hands")
        if not isinstance(hands_raw, list) or not all(isinstance(h, list) for h in hands_raw):
            raise FormatError("sixes deal: 'hands' must be a list of card lists, one per seat")
        if len(hands_raw) != state.players:
            raise FormatError(f"sixes deal: {state.players} players need {state.players} hands, got {len(hands_raw)}")
        return SixesDeal(
            dealer,
            tuple(tuple(parse_card(code, seat) for code in hand) for seat, hand in enumerate(hands_raw)),
        )

    def deal_to_json(self, deal: SixesDeal) -> JSONObject:
        return {"dealer": deal.dealer, "hands": [list(h) if h is not None else None for h in deal.hands]}

    def start_round(self, state: SixesState, deal: SixesDeal) -> SixesState:
        n = state.players
        if state.over:
            raise IllegalMove("X-3.1", "the game is over: a player has run out of chips")
        if state.round is not None and state.round.winner is None:
            raise IllegalMove("X-2.5", "the round is still being played: nobody has gone out yet")
        if not 0 <= deal.dealer < n:
            raise IllegalMove("X-2.6", f"dealer {deal.dealer} is not a seat of this {n}-player table")
        want = self.expected_dealer(state)
        if want is not None and deal.dealer != want:
            raise IllegalMove(
                "X-2.6", f"seat {want} played O6 last round and deals this one, not seat {deal.dealer}"
            )
        if len(deal.hands) != n:
            raise FormatError(f"{n} players need {n} hands, the deal has {len(deal.hands)}")
        sizes = hand_sizes_for(n, deal.dealer)
        seen: set[Card] = set()
        for seat, hand in enumerate(deal.hands):
            try:
                distinct: set[object] = set(hand or ())
            except TypeError:  # something unhashable: named card by card below
                distinct = {None}
            if len(distinct) == len(hand or ()) and distinct <= _DECK_SET and seen.isdisjoint(distinct):
                seen.update(hand or ())  # the common case, checked as sets; else card by card for the message
                continue
            for card in hand or ():
                parse_card(card, seat)
                if card in seen:
                    raise IllegalMove("X-1.1", f"{card} is dealt twice: the deck has one of each card", seat)
                seen.add(card)
        everything_known = all(hand is not None for hand in deal.hands)
        for seat, hand in enumerate(deal.hands):
            if hand is not None and len(hand) != sizes[seat]:
                missing = [c for c in DECK if c not in seen] if everything_known else []
                lacking = f" ({', '.join(missing)} not dealt)" if missing else ""
                raise IllegalMove(
                    "X-1.3",
                    f"seat {seat} is dealt {len(hand)} cards; all 40 are dealt one at a time from the dealer's "
                    f"left, so with {n} players and dealer {deal.dealer} it gets {sizes[seat]}{lacking}",
                    seat,
                )
        hands = tuple(
            tuple(sorted(hand, key=CARD_INDEX.__getitem__)) if hand is not None else None for hand in deal.hands
        )
        round_ = _new_round(deal.dealer, hands, sizes, NO_COLUMNS, _SIXES, None, None, None, 0)
        return _new_state(n, state.options, state.rounds_started + 1, state.chips, state.pot, round_, False)

    # play
    def expected(self, state: SixesState) -> Expected:
        r = state.round
        if r is not None and r.turn is not None:
            return _EXPECT_PLAY[r.turn]
        if state.over:
            return _EXPECT_OVER
        if r is None or r.winner is not None:
            return _EXPECT_DEAL
        seats = _o6_candidates(r)  # the holder of O6 opens
        return Expected("move", seats, "play", one_of=len(seats) > 1)

    def legal_moves(self, state: SixesState, seat: int) -> tuple[Move, ...]:
        r = state.round
        if r is None or r.winner is not None or state.over:
            return ()
        hand = r.hands[seat] if 0 <= seat < state.players else None
        if r.turn is None:
            if hand is not None:
                return (_PLAYS[seat][OPENING_CARD],) if OPENING_CARD in hand else ()
        elif seat != r.turn:
            return ()
        if hand is None:
            raise IllegalMove("format", f"seat {seat}'s hand is not known to this state")
        playable = r.playable
        plays = _PLAYS[seat]
        moves = tuple([plays[card] for card in hand if card in playable])
        return moves or (_PASSES[seat],)

    def apply(self, state: SixesState, move: Move) -> SixesState:
        r = state.round
        seat = move.seat
        if r is None or r.turn is None:
            return self._open(state, move)
        if seat != r.turn:
            if not 0 <= seat < state.players:
                raise IllegalMove("X-1.3", f"seat {seat} is not at this {state.players}-player table", seat)
            raise IllegalMove("X-2.3", f"it is seat {r.turn}'s turn, not seat {seat}'s", seat)
        n = state.players
        hand = r.hands[seat]
        if type(move) is Pass:
            if hand is not None:
                playable = r.playable
                for card in hand:
                    if card in playable:
                        holds = " ".join(c for c in hand if c in playable)
                        raise IllegalMove("X-2.4", f"seat {seat} may not pass while holding playable {holds}", seat)
            chips = state.chips
            pot = state.pot
            if chips[seat] > 0:  # one chip to the pot; nothing without chips
                chips = (*chips[:seat], chips[seat] - 1, *chips[seat + 1 :])
                pot += 1
            turn = seat + 1 if seat + 1 < n else 0
            lacks = r.lacks or (frozenset(),) * n
            lacks = (*lacks[:seat], lacks[seat] | r.playable, *lacks[seat + 1 :])
            history = (*r.history, _PASSED[seat])
            new_round = _new_round(
                r.dealer, r.hands, r.hand_sizes, r.columns, r.playable, turn, r.opener, None, 0, lacks, history
            )
            return _new_state(n, state.options, state.rounds_started, chips, pot, new_round, False)
        if type(move) is not Play:
            raise FormatError(f"not a Sixes move: {move!r}", seat)
        card = move.card
        if card not in r.playable:
            parse_card(card, seat)
            raise IllegalMove("X-2.3", _unplayable_reason(r.columns, card), seat)
        new_hand = self._take(r, seat, card)
        # Lists, not tuple slicing: this is the hot path of every playout.
        size_list = list(r.hand_sizes)
        size_list[seat] -= 1
        size = size_list[seat]
        sizes = tuple(size_list)
        hands = r.hands
        if hand is not None:
            hand_list = list(hands)
            hand_list[seat] = new_hand
            hands = tuple(hand_list)
        columns = extend_column(r.columns, card)
        playable = (r.playable - _ALONE[card]) | _OPENS[card]
        history = (*r.history, _PLAYED[seat][card])
        if size:
            turn = seat + 1 if seat + 1 < n else 0
            new_round = _new_round(
                r.dealer, hands, sizes, columns, playable, turn, r.opener, None, 0, r.lacks, history
            )
            return _new_state(n, state.options, state.rounds_started, state.chips, state.pot, new_round, False)
        # the first player out ends the round and takes the whole pot.
        pot = state.pot
        chips = (*state.chips[:seat], state.chips[seat] + pot, *state.chips[seat + 1 :])
        new_round = _new_round(r.dealer, hands, sizes, columns, playable, None, r.opener, seat, pot, r.lacks, history)
        over = min(chips) == 0
        return _new_state(n, state.options, state.rounds_started, chips, 0, new_round, over)

    def _take(self, r: SixesRound, seat: int, card: Card) -> tuple[Card, ...] | None:
        """The seat's hand without `card` (None if unknown, after checking what this state knows)."""
        hand = r.hands[seat]
        if hand is not None:
            try:
                index = hand.index(card)
            except ValueError:
                raise IllegalMove("X-2.3", f"{card} is not in seat {seat}'s hand", seat) from None
            return hand[:index] + hand[index + 1 :]
        # Partial knowledge: the card must not be known to be elsewhere (it is not on the table:
        # it is playable). Whether the seat really holds it is left to the audit.
        for other_hand in r.hands:
            if other_hand is not None and card in other_hand:
                raise IllegalMove("X-2.3", f"{card} is in another hand, not seat {seat}'s", seat)
        return None

    def _open(self, state: SixesState, move: Move) -> SixesState:
        """The first move of a round: the holder of O6 plays it (X-2.2)."""
        r = state.round
        seat = move.seat
        if state.over:
            raise IllegalMove("X-3.1", "the game is over: no more moves", seat)
        if r is None or r.winner is not None:
            raise IllegalMove("X-2.5", "no round is being played: the next round must be dealt first", seat)
        n = state.players
        if not 0 <= seat < n:
            raise IllegalMove("X-1.3", f"seat {seat} is not at this {n}-player table", seat)
        if type(move) is not Play and type(move) is not Pass:
            raise FormatError(f"not a Sixes move: {move!r}", seat)
        candidates = _o6_candidates(r)
        if seat not in candidates:
            if len(candidates) == 1:
                raise IllegalMove("X-2.2", f"seat {candidates[0]} holds O6 and opens the round, not seat {seat}", seat)
            raise IllegalMove("X-2.2", f"seat {seat} does not hold O6: the holder of O6 opens the round", seat)
        if type(move) is Pass:
            raise IllegalMove("X-2.2", f"seat {seat} holds O6 and must open the round with it, not pass", seat)
        assert isinstance(move, Play)
        if move.card != OPENING_CARD:
            parse_card(move.card, seat)
            raise IllegalMove("X-2.2", f"the round opens with O6, not {move.card}", seat)
        hand = r.hands[seat]
        new_hand = self._take(r, seat, OPENING_CARD)
        hands = r.hands if hand is None else (*r.hands[:seat], new_hand, *r.hands[seat + 1 :])
        sizes = (*r.hand_sizes[:seat], r.hand_sizes[seat] - 1, *r.hand_sizes[seat + 1 :])
        columns = extend_column(r.columns, OPENING_CARD)
        playable = (r.playable - _ALONE[OPENING_CARD]) | _OPENS[OPENING_CARD]
        turn = (seat + 1) % n
        # A hand of one card cannot happen (X-1.3: at least 5 cards each), so O6 never ends the round.
        history = (_PLAYED[seat][OPENING_CARD],)
        new_round = _new_round(r.dealer, hands, sizes, columns, playable, turn, seat, None, 0, r.lacks, history)
        return _new_state(n, state.options, state.rounds_started, state.chips, state.pot, new_round, False)

    def view(self, state: SixesState, seat: int) -> SixesState:
        r = state.round
        if r is None:
            return state
        hands = tuple(h if s == seat else None for s, h in enumerate(r.hands))
        new_round = _new_round(
            r.dealer, hands, r.hand_sizes, r.columns, r.playable, r.turn, r.opener, r.winner, r.pot_won, r.lacks,
            r.history,
        )
        return _new_state(
            state.players, state.options, state.rounds_started, state.chips, state.pot, new_round, state.over
        )

    # wire forms
    def move_from_json(self, raw: Mapping[str, object]) -> Move:
        seat = require_int(raw, "seat", "sixes move")
        if seat < 0:
            raise FormatError(f"sixes move: 'seat' must not be negative, got {seat}", seat)
        if "play" in raw:
            check_keys(raw, {"seat", "play"}, "sixes play move")
            return _play(seat, parse_card(raw["play"], seat))
        if "pass" in raw:
            check_keys(raw, {"seat", "pass"}, "sixes pass move")
            if raw["pass"] is not True:
                raise FormatError(f"sixes pass move: 'pass' must be true, got {raw['pass']!r}", seat)
            return _pass(seat)
        raise FormatError("a Sixes move has 'play' (a card) or 'pass': true", seat)

    def move_to_json(self, move: Move) -> JSONObject:
        if isinstance(move, Pass):
            return {"seat": move.seat, "pass": True}
        return {"seat": move.seat, "play": move.card}

    def move_seat(self, move: Move) -> int:
        return move.seat

    # results
    def round_report(self, state: SixesState) -> JSONObject:
        r = state.round
        if r is None:
            return {"dealer": None, "winner": None, "pot": state.pot, "chips": list(state.chips)}
        # [decision] "pot" of a finished round is the pot its winner took; of a running round,
        # the chips in the pot now.
        return {
            "dealer": r.dealer,
            "winner": r.winner,
            "pot": r.pot_won if r.winner is not None else state.pot,
            "chips": list(state.chips),
        }

    def totals(self, state: SixesState) -> tuple[int, ...]:
        return state.chips

    def winners(self, state: SixesState) -> tuple[int, ...] | None:
        return winners_by(state.chips, highest=True) if state.over else None

    def public_state(self, state: SixesState) -> JSONObject:
        out: JSONObject = {
            "game": self.id,
            "players": state.players,
            "options": self.options_to_json(state.options),
            "rounds_started": state.rounds_started,
            "chips": list(state.chips),
            "pot": state.pot,
            "over": state.over,
        }
        r = state.round
        if r is None:
            return out
        out["round"] = {
            "dealer": r.dealer,
            "hand_sizes": list(r.hand_sizes),
            "columns": {
                SUITS[suit]: list(column) if column is not None else None for suit, column in enumerate(r.columns)
            },
            "turn": r.turn,
            "opener": r.opener,
            "winner": r.winner,
            "pot_won": r.pot_won,
        }
        return out


SIXES = Sixes()


# --- search support: full-knowledge states from a seat's view -------------------------------


def unseen_cards(view: SixesState, seat: int) -> tuple[Card, ...]:
    """The cards `seat` cannot place from its view, in deck order: those of the hands it does not
    know (every card not on the table is in some hand, X-1.3). What a search samples from."""
    r = view.round
    if r is None:
        return ()
    known = {card for hand in r.hands for card in hand or ()}
    return tuple(card for card in DECK if card not in known and not on_table(r.columns, card))


def determinize(view: SixesState, seat: int, hands: Mapping[int, Sequence[Card]]) -> SixesState:
    """The full-knowledge state that `view` (what `seat` knows) becomes once `hands[s]` is assigned
    to every seat whose hand the view lacks (exactly `hand_sizes[s]` cards each, all of them
    `unseen_cards`, none twice; FormatError names what is wrong). A search samples the hands
    consistently with what the seat saw (a pass proves its seat held no playable card, X-2.4) and
    plays on the result with `legal_moves` / `apply` like any state."""
    r = view.round
    if r is None:
        if hands:
            raise FormatError("determinize: no round has been dealt, so nothing is hidden")
        return view
    hidden = {s for s, hand in enumerate(r.hands) if hand is None}
    if set(hands) != hidden:
        raise FormatError(f"determinize: hands are needed for seats {sorted(hidden)}, not {sorted(hands)}")
    assigned = [card for s in sorted(hands) for card in hands[s]]
    unseen = set(unseen_cards(view, seat))
    if len(set(assigned)) != len(assigned) or not unseen.issuperset(assigned):
        bad = sorted({str(c) for c in assigned if c not in unseen or assigned.count(c) > 1})
        raise FormatError(f"determinize: cards seen by seat {seat} or assigned twice: {', '.join(bad)}")
    full: list[tuple[Card, ...] | None] = list(r.hands)
    for s, hand in hands.items():
        if len(hand) != r.hand_sizes[s]:
            raise FormatError(f"determinize: seat {s} holds {r.hand_sizes[s]} cards, not {len(hand)}")
        full[s] = tuple(sorted(hand, key=CARD_INDEX.__getitem__))
    new_round = _new_round(
        r.dealer, tuple(full), r.hand_sizes, r.columns, r.playable, r.turn, r.opener, r.winner, r.pot_won, r.lacks,
        r.history,
    )
    return _new_state(view.players, view.options, view.rounds_started, view.chips, view.pot, new_round, view.over)
