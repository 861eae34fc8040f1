"""6 nimmt! (Take 5): simultaneous card choices placed on four ascending rows (rules T-1 … T-5).

Rule ids refer to shared/rules/take6.md. The state is one immutable `Take6State`; a finished round
stays readable from it (rows, penalties) until the next deal.

Hidden information: outside the logic option (T-5.2) a seat knows only its own hand. A turn's
choices are simultaneous (T-3.1): a seat's pending choice is hidden from the others until all have
chosen. A peer that learns of another seat's choice only as a commitment applies `Play(seat, None)`;
once every seat has chosen, such a state waits in phase "reveal" for `reveal(state, cards)` with
the cards of the hidden choices (the seats of `Expected.seats`, in that order), then places them.
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat, starmap
from operator import call, is_, itemgetter
from typing import Literal

from engine.api import (
    DealLayout,
    Expected,
    FormatError,
    Game,
    HiddenMode,
    IllegalMove,
    JSONObject,
    check_keys,
    require_bool,
    require_int,
    winners_by,
)
from engine.fastvalue import builder_class, fast_constructor, lookup_all
from engine.shuffle import shuffle

MAX_CARD = 104  # T-1.1
ROWS = 4  # T-2.1
HAND_SIZE = 10  # T-2.1
ROW_LIMIT = 5  # T-3.4: the sixth card takes five
END_ABOVE = 66  # T-4.1
HIDDEN = 0  # in `Take6State.chosen`: this seat has chosen, the card is unknown to this state

Side = Literal["left", "right"]
Stage = Literal["deal", "pick", "play", "reveal", "take_row", "over"]


def bullheads(card: int) -> int:
    """T-1.1: 55 → 7; other multiples of 11 → 5; of 10 → 3; of 5 → 2; else 1."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


BULLHEADS: tuple[int, ...] = (0, *(bullheads(card) for card in range(1, MAX_CARD + 1)))


def row_bullheads(row: Sequence[int]) -> int:
    taken = 0
    for card in row:  # a plain loop: `sum(map(BULLHEADS.__getitem__, row))` calls a method wrapper per card
        taken += BULLHEADS[card]
    return taken


def deck_size(players: int, tactic: bool) -> int:
    """T-5.1: with tactic only cards 1 … 10·n + 4 are used; else all 104 (T-1.1)."""
    return HAND_SIZE * players + ROWS if tactic else MAX_CARD


def placement_target(rows: Sequence[Sequence[int]], card: int, profi: bool = False) -> tuple[int, Side] | None:
    """Where `card` goes: (row index, side), or None when it fits nowhere and takes a row (T-3.5).

    T-3.3: the row whose last card is the highest still lower than the card. T-5.3 (profi): also
    left of a row whose first card is higher; the smallest difference wins, equal goes right.
    """
    right = left = -1
    right_diff = left_diff = MAX_CARD + 1
    if not profi:  # the common case, with one comparison per row (placement is the hot path)
        for index, row in enumerate(rows):
            diff = card - row[-1]
            if 0 < diff < right_diff:
                right, right_diff = index, diff
        return (right, "right") if right >= 0 else None
    for index, row in enumerate(rows):
        diff = card - row[-1]
        if 0 < diff < right_diff:
            right, right_diff = index, diff
        if profi:
            diff = row[0] - card
            if 0 < diff < left_diff:
                left, left_diff = index, diff
    if right >= 0 and right_diff <= left_diff:
        return right, "right"
    if left >= 0:
        return left, "left"
    return None


@dataclass(frozen=True, slots=True)
class Take6Options:
    tactic: bool = False  # T-5.1
    logic: bool = False  # T-5.2
    profi: bool = False  # T-5.3


# --- moves ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play:
    """T-3.1: choose a card face down. `card` is None for another seat's commitment whose card
    this state does not learn until the reveal."""

    seat: int
    card: int | None


@dataclass(frozen=True, slots=True)
class TakeRow:
    """T-3.5: the owner of a card lower than every row end takes row `row` (0–3)."""

    seat: int
    row: int


@dataclass(frozen=True, slots=True)
class Pick:
    """T-5.2: logic drafting, take one face-up card from the pool."""

    seat: int
    card: int


Take6Move = Play | TakeRow | Pick


@dataclass(frozen=True, slots=True)
class Take6Deal:
    """A round's deal. Without logic: `hands` (None where unknown to this peer) and `rows`; with
    logic: `rows` and the face-up `pool`, no hands (T-5.2)."""

    dealer: int
    rows: tuple[int, ...]
    hands: tuple[tuple[int, ...] | None, ...] = ()
    pool: tuple[int, ...] = ()
    logic: bool = False
    # What the engine knows of a deal it built itself, so that `start_round` need not find it out
    # again (never compared, hashed or printed, not part of the value): every hand is a sorted
    # tuple; (players, deck size) where it dealt the whole deck 1 … size to such a table itself.
    _sorted: bool = field(default=False, init=False, repr=False, compare=False)
    _dealt_for: tuple[int, int] | None = field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Take6State:
    """The whole game as one value. `hands[s]` is None where seat s's hand is unknown to the
    holder; a seat whose choice is `HIDDEN` still holds the chosen card in a known hand (logic)
    until the reveal, while `hand_sizes` already counts it as played."""

    players: int
    options: Take6Options
    round_index: int  # the current (or last finished) round; -1 before the first deal
    dealer: int | None  # the current round's dealer
    stage: Stage
    totals: tuple[int, ...]  # bullheads over all moves (T-3.6)
    penalty: tuple[int, ...]  # bullheads taken this round
    rows: tuple[tuple[int, ...], ...]
    hands: tuple[tuple[int, ...] | None, ...]  # sorted; None where unknown to this state
    hand_sizes: tuple[int, ...]  # cards in hand, not counting a pending choice
    pool: tuple[int, ...]  # logic: the face-up cards not (yet) picked
    chosen: tuple[int | None, ...]  # this turn: the chosen card, HIDDEN, or None (not chosen yet)
    pending: tuple[tuple[int, int], ...]  # revealed (card, seat) still to place; the first owes a row
    out: int  # bit c set: card c has been seen on the table this round (row starts, revealed plays)
    turn: int  # turns completed this round
    # A cache of what `expected` derives from the fields above, filled at most once per state:
    # never compared, hashed or printed, not part of the value.
    _expected: Expected | None = field(default=None, init=False, repr=False, compare=False)
    # Another, set where a round starts or `_place` built the state (not part of the value either), so
    # that the next placement starts from them: the rows' last cards in ascending order, then
    # `_ABOVE_ALL`, then the index of each of those rows in the same order (nine small ints: no
    # per-card table to read; a list, never changed once a state holds it).
    _ends: list[int] | None = field(default=None, init=False, repr=False, compare=False)
    # Another: each seat's `Play` moves of its hand (None where the hand is unknown, () where the
    # seat has chosen: what `legal_moves` returns), made by the first `legal_moves` of a play stage
    # and carried on by the turn that plays from the hands (each seat's moves lose the played card's
    # move), so the next turn's `legal_moves` is a lookup.
    _plays: tuple[tuple[Play, ...] | None, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def deck_size(self) -> int:
        return deck_size(self.players, self.options.tactic)


# Moves are immutable: build them once (the hot path of every playout).
_PLAYS = tuple(tuple(Play(seat, card) for card in range(MAX_CARD + 1)) for seat in range(10))
_PICKS = tuple(tuple(Pick(seat, card) for card in range(MAX_CARD + 1)) for seat in range(10))
_TAKES = tuple(tuple(TakeRow(seat, row) for row in range(ROWS)) for seat in range(10))
_CODES = {str(card): card for card in range(1, MAX_CARD + 1)}
_CODE_SET: frozenset[object] = frozenset(_CODES)
_new_state = fast_constructor(Take6State)
_new_turn: Callable[..., Take6State] = fast_constructor(Take6State, caches=True)  # and `_expected`, `_ends`, `_plays`
_new_deal: Callable[..., Take6Deal] = fast_constructor(Take6Deal, caches=True)  # and what it knows
# What `_new_turn` fills, for the states a turn's placement builds inline (`Take6._place`: a call fewer)
_BUILDER = builder_class(Take6State)
_DECK_SETS: dict[int, frozenset[int]] = {size: frozenset(range(1, size + 1)) for size in range(MAX_CARD + 1)}
_LAYOUTS: dict[tuple[int, bool, bool], DealLayout] = {}
_PLAY_EXPECTED: dict[tuple[bool, ...], Expected] = {}
_SEATS = tuple(tuple(range(count)) for count in range(11))
_ROW_INDICES = tuple(range(ROWS))
_ABOVE_ALL = MAX_CARD + 1  # above every row end (`Take6State._ends`)
_last = itemgetter(-1)
_NONES = tuple((None,) * count for count in range(11))  # unknown hands, choices not made yet
_ZEROS = tuple((0,) * count for count in range(11))
_NUMBERS = tuple(tuple(range(1, size + 1)) for size in range(MAX_CARD + 1))  # the decks 1 … size (T-1.1, T-5.1)
# `_SIZES[n][k]`: n hands of k cards, the hand sizes a turn starts with (T-3.1), found by identity
_SIZES = tuple(tuple((size,) * count for size in range(HAND_SIZE + 1)) for count in range(11))
_TENS = tuple(sizes[HAND_SIZE] for sizes in _SIZES)  # full hands (T-2.1)
# Values a turn would otherwise build per card, made once: a card's bit in `Take6State.out`, the
# pending entry (card, seat), a row of the one card.
_BITS = tuple(1 << card for card in range(MAX_CARD + 1))
_PAIRS = tuple(tuple((card, seat) for card in range(MAX_CARD + 1)) for seat in range(10))
_SINGLES = tuple((card,) for card in range(MAX_CARD + 1))


def _ends_of(lasts: Sequence[int]) -> list[int]:
    """`Take6State._ends` of rows whose last cards are `lasts`: those ascending, `_ABOVE_ALL`, the
    rows' indices in the same order."""
    ends = sorted(lasts)
    ends.append(_ABOVE_ALL)
    ends.extend(map(lasts.index, ends[:ROWS]))  # the row ends are distinct cards
    return ends


def _dropper(size: int, index: int) -> Callable[[Sequence[object]], tuple[object, ...]]:
    """A C-level function giving the tuple without its item `index` (of `size` items)."""
    if index == 0:
        return itemgetter(slice(1, None))  # one slice: cheaper than an item per card
    if index == size - 1:
        return itemgetter(slice(0, index))
    return itemgetter(*(k for k in range(size) if k != index))  # two or more items: a tuple


# `_DROP[size][index]`: a hand of `size` cards without its card at `index` (and its moves without that card's move)
_DROP = tuple(tuple(_dropper(size, index) for index in range(size)) for size in range(HAND_SIZE + 1))


def _hand_plays(state: Take6State) -> tuple[tuple[Play, ...] | None, ...]:
    """T-3.1: every seat's moves of its hand (None where unknown, none once it has chosen), remembered
    on the state (`_plays`)."""
    # only the hands that are tuples (no other seat's hand is read otherwise: a view's unknown hand
    # is None, and `legal_moves` reads the asked seat's hand itself where this gives None)
    chosen = state.chosen
    plays = tuple([
        () if chosen[seat] is not None else lookup_all(_PLAYS[seat], hand) if type(hand) is tuple else None
        for seat, hand in enumerate(state.hands)
    ])
    _remember(state, "_plays", plays)
    return plays


def _play_expected(owing: tuple[bool, ...]) -> Expected:
    """T-3.1: the seats with `owing[seat]` true still owe their choice of a card (made once per set)."""
    expected = _PLAY_EXPECTED.get(owing)
    if expected is None:
        seats = tuple(seat for seat, owes in enumerate(owing) if owes)
        expected = _PLAY_EXPECTED[owing] = Expected("move", seats, "play")
    return expected


_DEAL_EXPECTED = Expected("deal")  # made once: a frozen dataclass's own constructor is slow
_OVER_EXPECTED = Expected("over")
_TAKE_ROW_EXPECTED = tuple(Expected("move", (seat,), "take_row") for seat in range(10))
_PICK_EXPECTED = tuple(Expected("move", (seat,), "pick") for seat in range(10))
_PLAY_ALL = tuple(_play_expected((True,) * count) for count in range(11))  # a turn's start


_ONE_FEWER: dict[tuple[int, ...], tuple[int, ...]] = {}


def _one_card_fewer(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """Every seat's hand size after a turn (T-3.1), made once per sizes (in play every hand has the same)."""
    fewer = _ONE_FEWER.get(sizes)
    if fewer is None:
        fewer = tuple([size - 1 for size in sizes])
        if len(_ONE_FEWER) < 1000:
            _ONE_FEWER[sizes] = fewer
    return fewer


def _charge(
    penalty: tuple[int, ...], totals: tuple[int, ...], seat: int, row: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """T-3.4, T-3.5: `seat` takes `row`; its bullheads go to the seat's round penalty and total (T-3.6)."""
    taken = 0
    for card in row:  # `row_bullheads` inline: a call costs as much as the loop
        taken += BULLHEADS[card]
    new_penalty = list(penalty)
    new_totals = list(totals)
    new_penalty[seat] += taken
    new_totals[seat] += taken
    return tuple(new_penalty), tuple(new_totals)


def _layout(players: int, tactic: bool, logic: bool) -> DealLayout:
    """The deal layout (made once per table kind): hands, then the rows; with logic (T-5.2) 4 row
    starts, then the face-up pool, and no hands."""
    layout = _LAYOUTS.get((players, tactic, logic))
    if layout is None:
        size = deck_size(players, tactic)
        deck = _DECK_CODES[:size]
        if logic:
            layout = DealLayout(deck, ((),) * players, table=tuple(range(size)))
        else:
            hands = tuple(tuple(range(seat * HAND_SIZE, (seat + 1) * HAND_SIZE)) for seat in range(players))
            layout = DealLayout(deck, hands, table=tuple(range(players * HAND_SIZE, players * HAND_SIZE + ROWS)))
        _LAYOUTS[players, tactic, logic] = layout
    return layout
_HAND_RUNS: dict[int, tuple[Callable[[list[int]], tuple[list[int], ...]], slice]] = {}


def _deal_of_numbers(
    dealer: int, numbers: list[int], players: int, dealt_for: tuple[int, int] | None = None
) -> Take6Deal:
    """The deal (without logic) of the cards at each layout position: the hands and the rows lie
    in runs of positions (`_layout`), so each is one slice; the hands sorted (`Take6Deal._sorted`)."""
    runs = _HAND_RUNS.get(players)
    if runs is None:
        layout = _layout(players, False, False)  # tactic changes the deck, not the positions
        positions = (*layout.hands, layout.table)
        assert all(run == tuple(range(run[0], run[-1] + 1)) for run in positions)
        cuts = [slice(run[0], run[-1] + 1) for run in positions]
        # every hand's slice in one C call (two or more hands: itemgetter gives a tuple)
        runs = _HAND_RUNS[players] = (itemgetter(*cuts[:-1]), cuts[-1])
    hands_of, table = runs
    hands = tuple(map(tuple, map(sorted, hands_of(numbers))))  # one C-level chain
    return _new_deal(dealer, tuple(numbers[table]), hands, (), False, True, dealt_for)


# Fills the cache field of a frozen state (the value itself is unchanged: see the field comment).
_remember = object.__setattr__
_DECK_CODES = tuple(str(card) for card in range(1, MAX_CARD + 1))


def parse_card_code(code: object) -> int:
    """A card from its code at the API boundary ("17")."""
    card = _CODES.get(code) if isinstance(code, str) else None
    if card is None:
        raise FormatError(f"unknown 6 nimmt! card {code!r} (T-1.1: a number 1–104)")
    return card


def _card_json(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_CARD:
        raise FormatError(f"{what}: unknown 6 nimmt! card {value!r} (T-1.1: a number 1–104)")
    return value


def _cards_json(value: object, what: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise FormatError(f"{what} must be a list of cards, got {value!r}")
    return tuple(_card_json(card, what) for card in value)


class Take6(Game[Take6Options, Take6State, Take6Move, Take6Deal]):
    id = "take6"
    title = "6 nimmt!"
    min_players = 2
    max_players = 10

    # --- options and set-up -------------------------------------------------------------
    def options_from_json(self, raw: Mapping[str, object]) -> Take6Options:
        what = "take6 options"
        check_keys(raw, {"tactic", "logic", "profi"}, what)
        return Take6Options(
            tactic=require_bool(raw, "tactic", what, False),
            logic=require_bool(raw, "logic", what, False),
            profi=require_bool(raw, "profi", what, False),
        )

    def options_to_json(self, options: Take6Options) -> JSONObject:
        return {"tactic": options.tactic, "logic": options.logic, "profi": options.profi}

    def new_game(self, players: int, options: Take6Options) -> Take6State:
        if not self.min_players <= players <= self.max_players:
            raise IllegalMove("T-1.2", f"6 nimmt! is for 2–10 players, not {players}")
        zeros, nones = _ZEROS[players], _NONES[players]
        return _new_state(players, options, -1, None, "deal", zeros, zeros, (), nones, zeros, (), nones, (), 0, 0)

    # what a table protocol must know (engine.api.Game)
    def hand_card_fields(self) -> tuple[str, ...]:
        return ("play",)

    def hidden_choice(self, kind: str) -> HiddenMode | None:
        return "turn" if kind == "play" else None  # T-3.1: cards are chosen face down

    def hands_public(self, options: Take6Options) -> bool:
        return options.logic  # T-5.2

    def card_to_json(self, code: str) -> object:
        return parse_card_code(code)

    def players(self, state: Take6State) -> int:
        return state.players

    def expected_dealer(self, state: Take6State) -> int | None:
        if state.dealer is None:
            return None  # the first round: any seat
        return (state.dealer + 1) % state.players  # T-5.4

    def layout(self, state: Take6State, dealer: int) -> DealLayout:
        return _layout(state.players, state.options.tactic, state.options.logic)

    def deal_from_cards(self, state: Take6State, dealer: int, cards: Sequence[str | None]) -> Take6Deal:
        layout = self.layout(state, dealer)
        if len(cards) != len(layout.deck):
            raise FormatError(f"a deal needs {len(layout.deck)} positions, got {len(cards)}")
        try:
            distinct = set(cards)
        except TypeError:  # an unhashable code: named below
            distinct = set()
        if len(distinct) != len(cards) or not distinct <= _CODE_SET:  # not the common case: full knowledge
            try:
                known = [_CODES[code] for code in cards if code is not None]
            except (KeyError, TypeError):
                known = [parse_card_code(code) for code in cards if code is not None]  # names the bad code
            if len(set(known)) != len(known):
                twice = sorted(card for card in set(known) if known.count(card) > 1)
                raise IllegalMove("T-2.1", f"card {twice[0]} is dealt twice")

        def table_card(position: int) -> int:
            code = cards[position]
            if code is None:
                raise FormatError(f"position {position} lies face up on the table but is not known")
            return _CODES[code]  # checked above

        if None not in distinct and len(distinct) == len(cards) and not state.options.logic:
            # the common case (a local deal, a replay): every card known, checked above
            return _deal_of_numbers(dealer, list(map(_CODES.__getitem__, cards)), state.players)  # type: ignore[arg-type]
        if state.options.logic:
            rows = tuple(table_card(p) for p in layout.table[:ROWS])
            pool = tuple(sorted(table_card(p) for p in layout.table[ROWS:]))
            return Take6Deal(dealer, rows, (), pool, True)
        hands: list[tuple[int, ...] | None] = []
        for seat, positions in enumerate(layout.hands):
            codes = [cards[p] for p in positions]
            if None not in codes:  # checked above: every known code is a card
                hands.append(tuple(sorted(map(_CODES.__getitem__, codes))))  # type: ignore[arg-type]
            elif all(code is None for code in codes):
                hands.append(None)
            else:
                raise FormatError(f"seat {seat}'s hand is only partly known")
        return Take6Deal(dealer, tuple(table_card(p) for p in layout.table), tuple(hands))

    def deal_shuffled(self, state: Take6State, dealer: int, rng: random.Random) -> Take6Deal:
        """`deal_from_cards` of the deck shuffled by `rng` (engine.api.Game), built from the numbers:
        a shuffle's draws depend only on the deck's length, so the numbers 1 … size (the deck's
        codes in order) end in the order the codes would, and the engine's own deck needs no checks."""
        if state.options.logic:
            return super().deal_shuffled(state, dealer, rng)
        n = state.players
        size = HAND_SIZE * n + ROWS if state.options.tactic else MAX_CARD  # `deck_size`, inline (T-5.1, T-1.1)
        numbers = list(_NUMBERS[size])
        shuffle(numbers, rng, HAND_SIZE * n + ROWS)  # the positions dealt (`_layout`): the rest is stock
        return _deal_of_numbers(dealer, numbers, n, (n, size))

    def deal_from_json(self, state: Take6State, raw: Mapping[str, object]) -> Take6Deal:
        dealer = require_int(raw, "dealer", "take6 deal")
        rows = _cards_json(raw.get("rows"), "take6 deal: 'rows'")
        if state.options.logic:
            check_keys(raw, {"dealer", "rows", "pool"}, "take6 deal with logic (T-5.2: no hands)")
            pool = _cards_json(raw.get("pool"), "take6 deal: 'pool'")
            return Take6Deal(dealer, rows, (), tuple(sorted(pool)), True)
        check_keys(raw, {"dealer", "hands", "rows"}, "take6 deal")
        hands_raw = raw.get("hands")
        if not isinstance(hands_raw, list):
            raise FormatError(f"take6 deal: 'hands' must be a list of card lists, got {hands_raw!r}")
        hands = tuple(tuple(sorted(_cards_json(hand, "take6 deal: a hand"))) for hand in hands_raw)
        return _new_deal(dealer, rows, hands, (), False, True)

    def deal_to_json(self, deal: Take6Deal) -> JSONObject:
        if deal.logic:
            return {"dealer": deal.dealer, "rows": list(deal.rows), "pool": list(deal.pool)}
        return {
            "dealer": deal.dealer,
            "hands": [list(hand) if hand is not None else None for hand in deal.hands],
            "rows": list(deal.rows),
        }

    def start_round(self, state: Take6State, deal: Take6Deal) -> Take6State:
        n = state.players
        if state.stage != "deal":
            if state.stage == "over":
                raise IllegalMove("T-4.1", "the game is over: no more rounds")
            raise IllegalMove("T-3.6", "a new round is dealt only after the 10 turns of the current one")
        dealer = deal.dealer
        if not 0 <= dealer < n:
            raise FormatError(f"dealer {dealer} is not a seat of this {n}-player table")
        previous = state.dealer
        if previous is not None and dealer != (previous + 1) % n:  # `expected_dealer`, inline
            want = (previous + 1) % n
            raise IllegalMove("T-5.4", f"the dealer rotates left each round: seat {want} deals, not seat {dealer}")
        logic = state.options.logic
        if deal.logic != logic:
            raise FormatError(
                "with logic a deal has rows and a pool, no hands (T-5.2)"
                if logic
                else "without logic a deal has hands and rows, no pool"
            )
        size = HAND_SIZE * n + ROWS if state.options.tactic else MAX_CARD  # `deck_size`, inline (T-5.1, T-1.1)
        if len(deal.rows) != ROWS:
            raise IllegalMove("T-2.1", f"4 cards start the rows, the deal turns {len(deal.rows)}")
        hands_dealt = deal.hands
        if deal._dealt_for == (n, size):  # the engine's own deal of this deck to this table (`deal_shuffled`)
            known = True
        elif not logic and len(hands_dealt) == n and None not in hands_dealt:
            # the common case, every card known: checked as one set (else card by card below, for the message)
            try:
                every = set(deal.rows).union(*hands_dealt)  # type: ignore[arg-type]  # no None (checked)
            except TypeError:  # something unhashable: named card by card below
                every = set()
            known = (
                len(every) == ROWS + HAND_SIZE * n
                and tuple(map(len, hands_dealt)) == _TENS[n]  # type: ignore[arg-type]
                and every <= _DECK_SETS[size]
            )
        else:
            known = False
        if known:
            first, second, third, fourth = deal.rows
            hands_known: tuple[tuple[int, ...], ...] = (
                hands_dealt if deal._sorted else tuple([tuple(sorted(hand)) for hand in hands_dealt])  # type: ignore[assignment, arg-type]
            )
            return _new_turn(  # T-3.1: every seat chooses a card
                n, state.options, state.round_index + 1, dealer, "play", state.totals, _ZEROS[n],
                ((first,), (second,), (third,), (fourth,)), hands_known, _TENS[n], (), _NONES[n], (),
                1 << first | 1 << second | 1 << third | 1 << fourth, 0, _PLAY_ALL[n],
                None if state.options.profi else _ends_of(deal.rows),  # (profi places otherwise: no ends kept)
                # the engine's own deal (a playout's, a local game's): each seat's moves of its hand, made
                # at once in C (an `itemgetter` of the hand's cards on the seat's moves), for `legal_moves`
                tuple(map(call, starmap(itemgetter, hands_known), _PLAYS)) if deal._dealt_for is not None else None,
            )
        seen: set[int] = set()

        def take(card: int, seat: int | None = None) -> None:
            if not 1 <= card <= MAX_CARD:
                raise FormatError(f"unknown 6 nimmt! card {card!r}", seat)
            if card > size:
                raise IllegalMove("T-5.1", f"card {card} is not in the tactic deck 1–{size}", seat)
            if card in seen:
                raise IllegalMove("T-2.1", f"card {card} is dealt twice", seat)
            seen.add(card)

        def take_all(cards: Sequence[int], seat: int | None = None) -> None:
            """`take` each card: checked as a set first, card by card for the message."""
            try:
                distinct = set(cards)
            except TypeError:  # something unhashable: named card by card
                distinct = set()
            if len(distinct) == len(cards) and distinct <= _DECK_SETS[size] and seen.isdisjoint(distinct):
                seen.update(distinct)
                return
            for card in cards:
                take(card, seat)

        take_all(deal.rows)
        rows_mask = 0
        for card in deal.rows:
            rows_mask |= 1 << card
        if state.options.logic:
            take_all(deal.pool)
            if len(deal.pool) != size - ROWS:
                missing = next(c for c in range(1, size + 1) if c not in seen)
                raise IllegalMove("T-5.2", f"all other cards of the deck lie face up: card {missing} is missing")
            hands: tuple[tuple[int, ...] | None, ...] = ((),) * n
            sizes = (0,) * n
            pool = tuple(sorted(deal.pool))
            stage: Stage = "pick"
        else:
            if len(deal.hands) != n:
                raise IllegalMove("T-2.1", f"{n} players get {n} hands, the deal has {len(deal.hands)}")
            for seat, hand in enumerate(deal.hands):
                if hand is None:
                    continue
                if len(hand) != HAND_SIZE:
                    raise IllegalMove("T-2.1", f"each player gets 10 cards; seat {seat} gets {len(hand)}", seat)
                take_all(hand, seat)
            hands = tuple(tuple(sorted(hand)) if hand is not None else None for hand in deal.hands)
            sizes = (HAND_SIZE,) * n
            pool = ()
            stage = "play"
        return _new_state(
            n,
            state.options,
            state.round_index + 1,
            deal.dealer,
            stage,
            state.totals,
            (0,) * n,
            tuple((card,) for card in deal.rows),
            hands,
            sizes,
            pool,
            (None,) * n,
            (),
            rows_mask,
            0,
        )

    # --- play ----------------------------------------------------------------------------
    def expected(self, state: Take6State) -> Expected:
        expected = state._expected
        if expected is None:
            expected = self._expected(state)
            _remember(state, "_expected", expected)
        return expected

    def _expected(self, state: Take6State) -> Expected:
        stage = state.stage
        if stage == "play":
            return _play_expected(tuple(map(is_, state.chosen, repeat(None))))
        if stage == "take_row":
            return _TAKE_ROW_EXPECTED[state.pending[0][1]]
        if stage == "pick":
            return _PICK_EXPECTED[self._picker(state)]
        if stage == "reveal":
            return Expected("reveal", tuple([s for s, c in enumerate(state.chosen) if c == HIDDEN]), "play")
        return _DEAL_EXPECTED if stage == "deal" else _OVER_EXPECTED

    @staticmethod
    def _picker(state: Take6State) -> int:
        """T-5.2: picks go round the table starting left of the dealer."""
        assert state.dealer is not None
        return (state.dealer + 1 + sum(state.hand_sizes)) % state.players

    def legal_moves(self, state: Take6State, seat: int) -> tuple[Take6Move, ...]:
        plays = state._plays
        if plays is not None and seat >= 0 and state.stage == "play":  # the hot path: a lookup
            moves = plays[seat]  # (past the last seat: the IndexError of `state.chosen[seat]` below)
            if moves is not None:
                return moves
        stage = state.stage
        if stage == "take_row":
            return _TAKES[seat] if state.pending[0][1] == seat else ()
        if stage == "play":
            if state.chosen[seat] is not None:
                return ()
            if seat >= 0:  # (a negative seat reads `_PLAYS` from its end, as it always did: below)
                moves = (plays or _hand_plays(state))[seat]
                if moves is not None:
                    return moves
            hand = state.hands[seat]
            if hand is None:
                raise IllegalMove("format", f"seat {seat}'s hand is not known to this state")
            return lookup_all(_PLAYS[seat], hand)
        if stage == "pick" and seat == self._picker(state):
            return lookup_all(_PICKS[seat], state.pool)
        return ()

    def apply(self, state: Take6State, move: Take6Move) -> Take6State:
        seat = move.seat
        kind = type(move)
        if kind is TakeRow and state.stage == "take_row":  # T-3.5 (here, and first: a row is taken in most
            # turns of a playout)
            row_index: int = move.row  # type: ignore[union-attr]  # a TakeRow (no isinstance: hot path)
            owed = state.pending
            card: int | None
            card, owner = owed[0]
            if seat != owner:  # (the owner is a seat of the table: any other seat is checked first)
                self._check_seat(state, seat)
                raise IllegalMove("T-3.5", f"seat {owner} takes a row for card {card}, not seat {seat}", seat)
            if not 0 <= row_index < ROWS:
                raise FormatError(f"there is no row {row_index}: rows are 0–3", seat)
            rows = list(state.rows)
            taken = rows[row_index]
            heads = 0  # T-3.6 (`_charge` inline: a call costs as much)
            for taken_card in taken:
                heads += BULLHEADS[taken_card]
            penalty, totals = list(state.penalty), list(state.totals)
            penalty[seat] += heads
            totals[seat] += heads
            rows[row_index] = _SINGLES[card]
            ends = state._ends
            if ends is not None:  # the card is lower than every end: its row comes first (`Take6State._ends`)
                ends = ends[:]  # (`_place` goes on with this list)
                at = ends.index(row_index, ROWS + 1)  # where the row's index is, after `_ABOVE_ALL`
                del ends[at]
                del ends[at - ROWS - 1]  # and its end
                ends.insert(0, card)
                ends.insert(ROWS + 1, row_index)
            return self._place(
                state, rows, tuple(penalty), tuple(totals), owed[1:], state.hands, state.hand_sizes, state.out, ends,
                state._plays,
            )
        n = state.players
        self._check_seat(state, seat)
        if kind is TakeRow:
            row_index = move.row  # type: ignore[union-attr]
            if state.stage == "play":
                raise IllegalMove("T-3.5", f"seat {seat} owes no row: no card is lower than every row end", seat)
            raise self._not_now(state, seat, f"take row {row_index}")
        if kind is Play:  # T-3.1, inline: the hot path of every playout
            card = move.card  # type: ignore[union-attr]  # a Play (no isinstance: hot path)
            if state.stage != "play":
                raise self._not_now(state, seat, f"play card {card}")
            chosen = list(state.chosen)
            if chosen[seat] is not None:
                raise IllegalMove("T-3.1", f"seat {seat} has already chosen a card this turn", seat)
            hands = state.hands
            hand = hands[seat]
            if card is None:  # a commitment: the card stays in a known hand until the reveal
                chosen[seat] = HIDDEN
            else:
                if hand is not None and card in hand:  # the common case, full knowledge of the hand
                    index = hand.index(card)
                    new_hands = list(hands)  # lists, not tuple slicing
                    new_hands[seat] = hand[:index] + hand[index + 1 :]
                    hands = tuple(new_hands)
                else:
                    self._check_card(state, seat, card)
                chosen[seat] = card
            sizes = list(state.hand_sizes)
            sizes[seat] -= 1
            if None in chosen:
                return _new_turn(  # the rows unchanged: their ends too
                    n, state.options, state.round_index, state.dealer, "play", state.totals, state.penalty,
                    state.rows, hands, tuple(sizes), state.pool, tuple(chosen), state.pending, state.out,
                    state.turn, None, state._ends,
                )
            if HIDDEN in chosen:
                return _new_turn(  # the rows unchanged: their ends too
                    n, state.options, state.round_index, state.dealer, "reveal", state.totals, state.penalty,
                    state.rows, hands, tuple(sizes), state.pool, tuple(chosen), state.pending, state.out,
                    state.turn, None, state._ends,
                )
            # T-3.2: every card is known: placed lowest first (cards are distinct, so by card)
            cards: list[int] = chosen  # type: ignore[assignment]  # no None left (checked above)
            pending = sorted(zip(cards, _SEATS[n], strict=True))
            out = state.out
            for placed, _ in pending:
                out |= 1 << placed
            ends = state._ends
            return self._place(
                state, list(state.rows), state.penalty, state.totals, pending, hands, tuple(sizes), out,
                None if ends is None else ends[:],
            )
        if kind is Pick:
            assert isinstance(move, Pick)
            return self._pick(state, move)
        raise FormatError(f"not a 6 nimmt! move: {move!r}", seat)

    def apply_moves(self, state: Take6State, moves: Sequence[Take6Move]) -> Take6State:
        """`apply` of each move in order (engine.api.Game). A turn's joint action, every seat's card
        from a known hand (T-3.1), is placed at once (T-3.2) without the states in between; any
        other sequence, or one that breaks a rule, goes move by move (the same errors)."""
        n = state.players
        # a turn's start: every seat owes its card (the Expected a turn's start state carries, else the fields)
        if len(moves) == n and (
            state._expected is _PLAY_ALL[n] or (state.stage == "play" and state.chosen == _NONES[n])
        ):
            dealt = state.hands
            plays = state._plays  # each seat's moves, where `legal_moves` made them: kept up to date
            joint = False  # every seat's card found in its hand (then `pending`, `hands`, `new_plays`, `out`)
            pending: list[tuple[int, int]]  # the turn's (card, seat), lowest first once sorted
            hands: tuple[tuple[int, ...] | None, ...]  # each seat's hand after the turn
            new_plays: tuple[tuple[Play, ...] | None, ...] | None  # and its moves
            if n == 4 and plays is not None:  # four seats, the common table: the loop below, unrolled (no
                # loop, list or subscript per seat; the same checks, the same result)
                move0, move1, move2, move3 = moves
                hand0, hand1, hand2, hand3 = dealt
                own0, own1, own2, own3 = plays
                try:
                    card0: int = move0.card  # type: ignore[union-attr, assignment]  # (a TakeRow: AttributeError)
                    index0 = hand0.index(card0)  # type: ignore[union-attr]  # (an unknown hand: AttributeError)
                    drop0 = _DROP[len(hand0)][index0]  # type: ignore[arg-type]  # (above 10 cards: IndexError)
                    card1: int = move1.card  # type: ignore[union-attr, assignment]
                    index1 = hand1.index(card1)  # type: ignore[union-attr]
                    drop1 = _DROP[len(hand1)][index1]  # type: ignore[arg-type]
                    card2: int = move2.card  # type: ignore[union-attr, assignment]
                    index2 = hand2.index(card2)  # type: ignore[union-attr]
                    drop2 = _DROP[len(hand2)][index2]  # type: ignore[arg-type]
                    card3: int = move3.card  # type: ignore[union-attr, assignment]
                    index3 = hand3.index(card3)  # type: ignore[union-attr]
                    drop3 = _DROP[len(hand3)][index3]  # type: ignore[arg-type]
                    joint = (  # the moves are interned: only one built elsewhere needs the type and seat checked
                        (own0[index0] is move0 or (type(move0) is Play and move0.seat == 0))  # type: ignore[index]
                        and (own1[index1] is move1 or (type(move1) is Play and move1.seat == 1))  # type: ignore[index]
                        and (own2[index2] is move2 or (type(move2) is Play and move2.seat == 2))  # type: ignore[index]
                        and (own3[index3] is move3 or (type(move3) is Play and move3.seat == 3))  # type: ignore[index]
                    )
                except (ValueError, AttributeError, IndexError, TypeError):  # (TypeError: moves unknown)
                    pass
                if joint:
                    pending = [_PAIRS[0][card0], _PAIRS[1][card1], _PAIRS[2][card2], _PAIRS[3][card3]]
                    out = state.out | _BITS[card0] | _BITS[card1] | _BITS[card2] | _BITS[card3]
                    hands = (drop0(hand0), drop1(hand1), drop2(hand2), drop3(hand3))  # type: ignore[assignment, arg-type]
                    new_plays = (drop0(own0), drop1(own1), drop2(own2), drop3(own3))  # type: ignore[assignment, arg-type]
            if not joint:
                hand_list: list[tuple[int, ...] | None] = []
                play_list: list[tuple[Play, ...] | None] | None = None if plays is None else []
                pending = []
                out = state.out
                # In seat order, the common one (any other goes move by move below: the same result), so
                # every seat plays once and its hand is the dealt one.
                for seat in _SEATS[n]:
                    move = moves[seat]
                    hand = dealt[seat]
                    try:
                        card: int = move.card  # type: ignore[union-attr, assignment]  # (a TakeRow: AttributeError)
                        index = hand.index(card)  # type: ignore[union-attr]  # None: the AttributeError below
                        drop = _DROP[len(hand)][index]  # type: ignore[arg-type]  # (a hand above 10 cards: IndexError)
                    except (ValueError, AttributeError, IndexError):  # not in the hand, the hand unknown: `apply`
                        break  # checks
                    if play_list is None:
                        if type(move) is not Play or move.seat != seat:
                            break
                    else:
                        own = plays[seat]  # type: ignore[index]
                        if own[index] is not move and (type(move) is not Play or move.seat != seat):  # type: ignore[index]
                            break  # (the moves are interned: only one built elsewhere needs the check)
                        play_list.append(drop(own))  # type: ignore[arg-type]  # the moves without the card's
                    hand_list.append(drop(hand))  # type: ignore[arg-type]  # known (found above)
                    pending.append(_PAIRS[seat][card])
                    out |= _BITS[card]
                else:
                    joint = True
                    hands = tuple(hand_list)
                    new_plays = None if play_list is None else tuple(play_list)
            if joint:
                pending.sort()  # T-3.2: lowest first (cards are distinct)
                sizes = state.hand_sizes
                left = sizes[0]  # every hand the same size (the common case): the next sizes by identity
                same = _SIZES[n]
                if 0 < left <= HAND_SIZE and sizes is same[left]:
                    sizes = same[left - 1]
                else:
                    sizes = _ONE_FEWER.get(sizes) or _one_card_fewer(sizes)
                ends = state._ends  # (kept only without profi)
                if ends is not None and pending[0][0] < ends[0]:  # T-3.5: the lowest card is lower than every
                    # row end: its owner takes a row before anything is placed (`_place`'s first step, here
                    # without the call: a row is owed in most turns of a playout; the rows and ends kept)
                    built = _BUILDER()
                    built.players = n
                    built.options = state.options
                    built.round_index = state.round_index
                    built.dealer = state.dealer
                    built.stage = "take_row"
                    built.totals = state.totals
                    built.penalty = state.penalty
                    built.rows = state.rows
                    built.hands = hands
                    built.hand_sizes = sizes
                    built.pool = state.pool
                    built.chosen = _NONES[n]
                    built.pending = tuple(pending)
                    built.out = out
                    built.turn = state.turn
                    built._expected = _TAKE_ROW_EXPECTED[pending[0][1]]
                    built._ends = ends
                    built._plays = new_plays
                    built.__class__ = Take6State
                    return built  # type: ignore[no-any-return]
                return self._place(
                    state, list(state.rows), state.penalty, state.totals, pending, hands, sizes, out,
                    None if ends is None else ends[:], new_plays,
                )
        if len(moves) == 1:
            return self.apply(state, moves[0])
        for move in moves:
            state = self.apply(state, move)
        return state

    @staticmethod
    def _check_seat(state: Take6State, seat: int) -> None:
        n = state.players
        if not 0 <= seat < n:
            raise FormatError(f"there is no seat {seat} at this {n}-player table", seat)

    def _not_now(self, state: Take6State, seat: int, doing: str) -> IllegalMove:
        stage = state.stage
        if stage == "over":
            return IllegalMove("T-4.1", f"the game is over: seat {seat} cannot {doing}", seat)
        if stage == "deal":
            return IllegalMove("T-2.1", f"no round is in progress: seat {seat} cannot {doing} before the deal", seat)
        if stage == "take_row":
            card, owner = state.pending[0]
            return IllegalMove(
                "T-3.5", f"seat {owner} must first take a row for card {card}; seat {seat} cannot {doing}", seat
            )
        if stage == "pick":
            return IllegalMove(
                "T-5.2", f"the cards are being picked (seat {self._picker(state)}'s turn); seat {seat} cannot {doing}",
                seat,
            )
        if stage == "reveal":
            return IllegalMove("T-3.1", f"this turn's cards are being revealed; seat {seat} cannot {doing}", seat)
        return IllegalMove("T-3.1", f"every player chooses a card now; seat {seat} cannot {doing}", seat)

    def _check_card(self, state: Take6State, seat: int, card: int) -> None:
        """A played card must be in the seat's hand (T-3.1); where the hand is unknown, one this
        state has not seen elsewhere."""
        if not 1 <= card <= state.deck_size:
            if state.options.tactic and 1 <= card <= MAX_CARD:
                raise IllegalMove("T-5.1", f"card {card} is not in the tactic deck 1–{state.deck_size}", seat)
            raise FormatError(f"unknown 6 nimmt! card {card!r}", seat)
        hand = state.hands[seat]
        if hand is not None:
            if card not in hand:
                raise IllegalMove("T-3.1", f"card {card} is not in seat {seat}'s hand", seat)
            return
        if state.out >> card & 1:
            raise IllegalMove("T-3.1", f"card {card} has already been on the table this round", seat)
        for other, other_hand in enumerate(state.hands):
            if other_hand is not None and card in other_hand:
                raise IllegalMove("T-3.1", f"card {card} is in seat {other}'s hand, not seat {seat}'s", seat)
        if card in state.chosen or card in state.pool:
            raise IllegalMove("T-3.1", f"card {card} is not in seat {seat}'s hand", seat)

    def reveal(self, state: Take6State, cards: Sequence[str]) -> Take6State:
        """Partial knowledge: the hidden choices of this turn (the seats of `Expected.seats`, in
        seat order) have been opened (T-3.1)."""
        if state.stage != "reveal":
            raise IllegalMove("T-3.1", "no chosen cards are waiting to be revealed")
        hidden = [seat for seat, card in enumerate(state.chosen) if card == HIDDEN]
        if len(cards) != len(hidden):
            raise FormatError(f"{len(hidden)} hidden choices are revealed, not {len(cards)}")
        chosen = list(state.chosen)
        hands = list(state.hands)
        for seat, code in zip(hidden, cards, strict=True):
            card = parse_card_code(code)
            self._check_card(replace(state, chosen=tuple(chosen), hands=tuple(hands)), seat, card)
            hand = hands[seat]
            if hand is not None:
                index = hand.index(card)
                hands[seat] = hand[:index] + hand[index + 1 :]
            chosen[seat] = card
        return self._reveal_all(state, tuple(chosen), tuple(hands), state.hand_sizes)

    def _reveal_all(
        self,
        state: Take6State,
        chosen: tuple[int | None, ...],
        hands: tuple[tuple[int, ...] | None, ...],
        sizes: tuple[int, ...],
    ) -> Take6State:
        """T-3.1/T-3.2: every card is revealed, then placed lowest first."""
        pending = sorted([(card, seat) for seat, card in enumerate(chosen) if card is not None])
        out = state.out
        for card, _ in pending:
            out |= 1 << card
        ends = state._ends
        return self._place(
            state, list(state.rows), state.penalty, state.totals, pending, hands, sizes, out,
            None if ends is None else ends[:],
        )

    def _place(
        self,
        state: Take6State,
        rows: list[tuple[int, ...]],
        penalty: tuple[int, ...],
        totals: tuple[int, ...],
        pending: Sequence[tuple[int, int]],
        hands: tuple[tuple[int, ...] | None, ...],
        sizes: tuple[int, ...],
        out: int,
        known_ends: list[int] | None,
        plays: tuple[tuple[Play, ...] | None, ...] | None = None,
    ) -> Take6State:
        """T-3.2 … T-3.6: place the revealed cards of `pending` (lowest first) on `rows`; the state
        after the turn, or the state waiting for a row to be taken (T-3.5). `known_ends`:
        `Take6State._ends` of `rows` where the caller has them, as a list this call takes over (and
        may change), else None; `plays`: the moves
        of `hands` where known (`Take6State._plays`), else None."""
        n = state.players
        ends: list[int] | None = None  # without profi: `Take6State._ends`, kept for the next placement
        if state.options.profi:
            for index, (card, seat) in enumerate(pending):
                target = placement_target(rows, card, True)
                if target is None:
                    return self._owe_row(
                        state, rows, penalty, totals, pending[index:], hands, sizes, out, None, plays
                    )
                row_index, side = target
                row = rows[row_index]
                if len(row) >= ROW_LIMIT:  # T-3.4 (T-5.3: on either side)
                    penalty, totals = _charge(penalty, totals, seat, row)
                    rows[row_index] = _SINGLES[card]
                elif side == "right":
                    rows[row_index] = (*row, card)
                else:
                    rows[row_index] = (card, *row)
        else:
            # T-3.3 as one pass over the row ends in ascending order (the hot path of every playout):
            # cards come lowest first, and a card replaces the end it follows (the highest lower than
            # itself), so the ends stay sorted and the next card's row is at the same position or
            # further on. `ends[ROWS + 1 + k]` is the index of the row whose last card is `ends[k]`.
            ends = _ends_of(list(map(_last, rows))) if known_ends is None else known_ends
            above = 0  # the position in `ends` of the lowest end above the card (the row's end is just below)
            for card, seat in pending:
                while ends[above] < card:
                    above += 1
                if not above:  # T-3.5: lower than every row end, the player chooses a row to take (only
                    # ever the first card of a turn: `above` never falls, so the whole turn is still pending,
                    # and the rows are still the state's: kept as they are, not copied; in a playout
                    # `apply_moves` finds this before the call)
                    return _new_turn(
                        n, state.options, state.round_index, state.dealer, "take_row", totals, penalty, state.rows,
                        hands, sizes, state.pool, _NONES[n], tuple(pending), out, state.turn, _TAKE_ROW_EXPECTED[seat],
                        ends, plays,
                    )
                row_index = ends[above + 4]  # ROWS + 1 past the row's end (a constant: no global lookup)
                ends[above - 1] = card
                row = rows[row_index]
                if len(row) < 5:  # ROW_LIMIT (a constant: no global lookup)
                    rows[row_index] = row + _SINGLES[card]  # one tuple built
                else:  # T-3.4: the sixth card takes five (`_charge` inline: a call costs as much)
                    heads = 0
                    for taken_card in row:
                        heads += BULLHEADS[taken_card]
                    new_penalty, new_totals = list(penalty), list(totals)
                    new_penalty[seat] += heads
                    new_totals[seat] += heads
                    penalty, totals = tuple(new_penalty), tuple(new_totals)
                    rows[row_index] = _SINGLES[card]
        # T-3.6: the turn is over; after the tenth the round is.
        if sizes[0] or any(sizes):  # T-3.1: every seat chooses again (the first hand decides the common case
            # without a call); what `_new_turn` would build, inline (a call fewer)
            built = _BUILDER()
            built.players = n
            built.options = state.options
            built.round_index = state.round_index
            built.dealer = state.dealer
            built.stage = "play"
            built.totals = totals
            built.penalty = penalty
            built.rows = tuple(rows)
            built.hands = hands
            built.hand_sizes = sizes
            built.pool = state.pool
            built.chosen = _NONES[n]
            built.pending = ()
            built.out = out
            built.turn = state.turn + 1
            built._expected = _PLAY_ALL[n]
            built._ends = ends
            built._plays = plays
            built.__class__ = Take6State
            return built  # type: ignore[no-any-return]
        over = max(totals) > END_ABOVE  # T-4.1
        return _new_turn(
            n, state.options, state.round_index, state.dealer, "over" if over else "deal", totals, penalty, tuple(rows),
            hands, sizes, state.pool, _NONES[n], (), out, state.turn + 1, _OVER_EXPECTED if over else _DEAL_EXPECTED,
        )

    @staticmethod
    def _owe_row(
        state: Take6State,
        rows: Sequence[tuple[int, ...]],
        penalty: tuple[int, ...],
        totals: tuple[int, ...],
        pending: Sequence[tuple[int, int]],
        hands: tuple[tuple[int, ...] | None, ...],
        sizes: tuple[int, ...],
        out: int,
        ends: Sequence[int] | None,
        plays: tuple[tuple[Play, ...] | None, ...] | None,
    ) -> Take6State:
        """T-3.5: the owner of `pending[0]`, a card lower than every row end, chooses a row to take.
        `ends`: `Take6State._ends` of `rows`, or None (profi keeps none); `plays` as `_place` has them.
        A tuple given for `rows` is kept as it is."""
        n = state.players
        return _new_turn(
            n, state.options, state.round_index, state.dealer, "take_row", totals, penalty, tuple(rows), hands, sizes,
            state.pool, _NONES[n], tuple(pending), out, state.turn, _TAKE_ROW_EXPECTED[pending[0][1]],
            None if ends is None else list(ends), plays,
        )

    def _pick(self, state: Take6State, move: Pick) -> Take6State:
        seat, card = move.seat, move.card
        if state.stage != "pick":
            if state.stage == "play":
                raise IllegalMove("T-5.2", f"the drafting is over: seat {seat} cannot pick card {card}", seat)
            raise self._not_now(state, seat, f"pick card {card}")
        picker = self._picker(state)
        if seat != picker:
            raise IllegalMove("T-5.2", f"it is seat {picker}'s turn to pick, not seat {seat}'s", seat)
        try:
            index = state.pool.index(card)
        except ValueError:
            raise IllegalMove("T-5.2", f"card {card} does not lie face up in the pool", seat) from None
        hand = list(state.hands[seat] or ())
        insort(hand, card)
        sizes = (*state.hand_sizes[:seat], state.hand_sizes[seat] + 1, *state.hand_sizes[seat + 1 :])
        return _new_state(
            state.players, state.options, state.round_index, state.dealer,
            "play" if sum(sizes) == HAND_SIZE * state.players else "pick", state.totals, state.penalty,
            state.rows, (*state.hands[:seat], tuple(hand), *state.hands[seat + 1 :]), sizes,
            state.pool[:index] + state.pool[index + 1 :], state.chosen, state.pending, state.out, state.turn,
        )

    def view(self, state: Take6State, seat: int) -> Take6State:
        n = state.players
        if not 0 <= seat < n:
            raise FormatError(f"there is no seat {seat} at this {n}-player table")
        chosen = state.chosen
        # T-3.1: another seat's chosen card shows only as HIDDEN; a choice not made yet stays None.
        view_chosen = tuple([
            card if other == seat or card is None else HIDDEN for other, card in enumerate(chosen)
        ])
        hands = state.hands
        if state.options.logic:  # T-5.2: the hands are public, the choices are not
            if view_chosen == chosen:
                return state  # nothing is hidden from this seat: the view is the state itself
            view_hands = list(hands)
            for other, (hand, card) in enumerate(zip(hands, chosen, strict=True)):
                if other != seat and card and hand is not None:  # a chosen card is still held
                    view_hands[other] = tuple(sorted((*hand, card)))
            new_hands = tuple(view_hands)
        else:
            new_hands = (*_NONES[seat], hands[seat], *_NONES[n - seat - 1])
        view = _new_state(
            n, state.options, state.round_index, state.dealer, state.stage, state.totals, state.penalty,
            state.rows, new_hands, state.hand_sizes, state.pool, view_chosen, state.pending, state.out, state.turn,
        )
        if state._expected is not None and state.stage != "reveal":  # the same moves are owed (a reveal
            # waits for every HIDDEN choice, and the view hides more)
            _remember(view, "_expected", state._expected)
        return view

    # --- wire forms ----------------------------------------------------------------------
    def move_from_json(self, raw: Mapping[str, object]) -> Take6Move:
        seat = require_int(raw, "seat", "take6 move")
        if seat < 0:
            raise FormatError(f"take6 move: no seat {seat}", seat)
        if "play" in raw:
            check_keys(raw, {"seat", "play"}, "take6 play move")
            value = raw["play"]
            return Play(seat, None if value is None else _card_json(value, "take6 play move"))
        if "take_row" in raw:
            check_keys(raw, {"seat", "take_row"}, "take6 take_row move")
            row = require_int(raw, "take_row", "take6 take_row move")
            if not 0 <= row < ROWS:
                raise FormatError(f"take6 take_row move: there is no row {row}: rows are 0–3", seat)
            return TakeRow(seat, row)
        if "pick" in raw:
            check_keys(raw, {"seat", "pick"}, "take6 pick move")
            return Pick(seat, _card_json(raw["pick"], "take6 pick move"))
        raise FormatError("a take6 move has 'play', 'take_row' or 'pick'", seat)

    def move_to_json(self, move: Take6Move) -> JSONObject:
        if isinstance(move, Play):
            return {"seat": move.seat, "play": move.card}
        if isinstance(move, TakeRow):
            return {"seat": move.seat, "take_row": move.row}
        return {"seat": move.seat, "pick": move.card}

    def move_seat(self, move: Take6Move) -> int:
        return move.seat

    # --- results ------------------------------------------------------------------------
    def round_report(self, state: Take6State) -> JSONObject:
        return {
            "dealer": state.dealer,
            "penalty": list(state.penalty),
            "rows": [list(row) for row in state.rows],
        }

    def totals(self, state: Take6State) -> tuple[int, ...]:
        return state.totals

    def winners(self, state: Take6State) -> tuple[int, ...] | None:
        return winners_by(state.totals, highest=False) if state.stage == "over" else None  # T-4.2

    def public_state(self, state: Take6State) -> JSONObject:
        out: JSONObject = {
            "game": self.id,
            "players": state.players,
            "options": self.options_to_json(state.options),
            "round": state.round_index,
            "dealer": state.dealer,
            "over": state.stage == "over",
            "turn": state.turn,
            "totals": list(state.totals),
            "penalty": list(state.penalty),
            "rows": [list(row) for row in state.rows],
            "hand_sizes": list(state.hand_sizes),
            "chose": [card is not None for card in state.chosen],
            "pending": [[card, seat] for card, seat in state.pending],
            "pool": list(state.pool),
        }
        if state.options.logic:  # T-5.2: hands are public; a pending choice still counts as held
            hands: list[object] = []
            for hand, card in zip(state.hands, state.chosen, strict=True):
                if hand is not None and card is not None and card != HIDDEN:
                    hand = tuple(sorted((*hand, card)))
                hands.append(list(hand) if hand is not None else None)
            out["hands"] = hands
        return out


# --- search support: full-knowledge states from a seat's view -------------------------------


def unseen_cards(view: Take6State, seat: int) -> tuple[int, ...]:
    """The cards of the deck that `seat` cannot place from its view, lowest first: the other hands,
    the other seats' hidden choices (outside logic, T-5.2) and the cards nobody was dealt. What a
    search samples `determinize`'s hidden cards from."""
    seen = view.out
    for hand in view.hands:
        for card in hand or ():
            seen |= 1 << card
    for choice in (*view.pool, *view.chosen):
        if choice is not None and choice != HIDDEN:
            seen |= 1 << choice
    return tuple(card for card in range(1, view.deck_size + 1) if not seen >> card & 1)


def determinize(
    view: Take6State, seat: int, hands: Mapping[int, Sequence[int]], chosen: Mapping[int, int] | None = None
) -> Take6State:
    """The full-knowledge state that `view` (what `seat` knows) becomes once its hidden cards are
    assigned: `hands[s]` for every seat whose hand the view lacks (exactly `hand_sizes[s]` cards,
    the card it may have chosen this turn not counted), and `chosen[s]` for every seat whose choice
    this turn is hidden (T-3.1): with logic (T-5.2) one of the cards of its public hand, else an
    unseen card.

    For a search (information-set Monte Carlo): sample the assignment from `unseen_cards`, then
    play on the result with `legal_moves` / `apply` like any state. Every assigned card must be
    unseen by `seat` (or, with logic, a chosen card from the chooser's hand), none twice;
    FormatError names what is wrong."""
    chosen = chosen or {}
    if view.stage == "reveal":
        raise FormatError("determinize: reveal this turn's choices first (the state waits in phase 'reveal')")
    hidden_hands = {s for s, hand in enumerate(view.hands) if hand is None}
    hidden_choices = {s for s, card in enumerate(view.chosen) if card == HIDDEN}
    if set(hands) != hidden_hands:
        raise FormatError(f"determinize: hands are needed for seats {sorted(hidden_hands)}, not {sorted(hands)}")
    if set(chosen) != hidden_choices:
        wanted, given = sorted(hidden_choices), sorted(chosen)
        raise FormatError(f"determinize: chosen cards are needed for seats {wanted}, not {given}")
    unseen = set(unseen_cards(view, seat))
    full_hands = list(view.hands)
    assigned: list[int] = []
    for s, hand in hands.items():
        if len(hand) != view.hand_sizes[s]:
            raise FormatError(f"determinize: seat {s} holds {view.hand_sizes[s]} cards, not {len(hand)}")
        assigned.extend(hand)
        full_hands[s] = tuple(sorted(hand))
    for s, card in chosen.items():
        known = view.hands[s]
        if known is not None:  # T-5.2 logic: the choice is one of the cards of the public hand
            if card not in known:
                raise FormatError(f"determinize: seat {s} cannot have chosen card {card}: its hand is {list(known)}")
            index = known.index(card)
            full_hands[s] = known[:index] + known[index + 1 :]
        else:
            assigned.append(card)
    if len(set(assigned)) != len(assigned) or not unseen.issuperset(assigned):
        bad = sorted({c for c in assigned if c not in unseen or assigned.count(c) > 1})
        raise FormatError(f"determinize: cards seen by seat {seat} or assigned twice: {', '.join(map(str, bad))}")
    full_chosen = tuple(chosen.get(s, card) for s, card in enumerate(view.chosen))
    return _new_state(
        view.players, view.options, view.round_index, view.dealer, view.stage, view.totals, view.penalty,
        view.rows, tuple(full_hands), view.hand_sizes, view.pool, full_chosen, view.pending, view.out, view.turn,
    )


TAKE6 = Take6()

__all__ = [
    "BULLHEADS",
    "HIDDEN",
    "TAKE6",
    "Pick",
    "Play",
    "Take6",
    "Take6Deal",
    "Take6Move",
    "Take6Options",
    "Take6State",
    "TakeRow",
    "bullheads",
    "deck_size",
    "determinize",
    "parse_card_code",
    "placement_target",
    "row_bullheads",
    "unseen_cards",
]
