"""6th Sense: trick-taking with a hidden prediction card and action cards (rules S-1 … S-8).

Rule ids refer to shared/rules/sixth-sense.md. The state is one immutable `SixthSenseState`;
the current round lives in `Round` and stays readable after the round ends (until the next deal).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import TypeVar

from engine.api import (
    DealLayout,
    Expected,
    FormatError,
    Game,
    HiddenMode,
    IllegalMove,
    JSONObject,
    PeekDue,
    check_keys,
    require_bool,
    require_int,
    winners_by,
)
from engine.fastvalue import fast_constructor, lookup_all
from engine.shuffle import shuffle

# S-1.2: colour codes in canonical deck order; S-1.1: the 14 values (6 is the 6/9 card).
COLOURS = ("R", "Y", "G", "B", "P")
VALUES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14)
SIX_NINE = 6
BLOCK = 0
REVERSAL = 4
PEEK = 8
DOUBLE = 12
TWO_PLAYER_REMOVED = "P"  # S-2.1 [decision]
ROUNDS = {2: 6, 3: 6, 4: 4, 5: 5, 6: 6}  # S-2.2
HAND_SIZE = {2: 15, 3: 14, 4: 14, 5: 13, 6: 11}  # S-2.3
BEGINNER_POINTS = (6, 4, 3, 2, 1)  # S-8.1: distance 0..4; 5 or more scores 0


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    """One of the 70 cards. Cards are interned: `Card("R", 5) is Card("R", 5)`, so equality is
    identity (fast in the playout hot path). Never iterate a set of cards: order would vary."""

    colour: str
    value: int

    def __new__(cls, colour: str, value: int) -> Card:
        interned = _INTERNED.get((colour, value))
        return interned if interned is not None else object.__new__(cls)

    @property
    def code(self) -> str:
        return f"{self.colour}{self.value}"

    def __str__(self) -> str:
        return f"{self.colour}6/9" if self.value == SIX_NINE else self.code

    @staticmethod
    def parse(code: object) -> Card:
        card = _CARDS_BY_CODE.get(code) if isinstance(code, str) else None
        if card is None:
            raise FormatError(f"unknown 6th Sense card {code!r} (S-1.1: colour R/Y/G/B/P + value)")
        return card


_INTERNED: dict[tuple[str, int], Card] = {}
for _colour in COLOURS:
    for _value in VALUES:
        _INTERNED[_colour, _value] = Card(_colour, _value)
_CARDS_BY_CODE: dict[str, Card] = {card.code: card for card in _INTERNED.values()}


def hand_order(card: Card) -> tuple[int, int]:
    """Hands are shown sorted by colour (deck order R Y G B P), then value."""
    return _HAND_ORDER[card]


def deck_for(players: int) -> tuple[Card, ...]:
    """The game's cards in canonical order (S-1.1; S-2.1 without Purple for 2 players)."""
    return _DECKS[2 if players == 2 else 3]


def _make_deck(players: int) -> tuple[Card, ...]:
    colours = [c for c in COLOURS if not (players == 2 and c == TWO_PLAYER_REMOVED)]
    return tuple(_CARDS_BY_CODE[f"{c}{v}"] for c in colours for v in VALUES)


# Tables made once: dealing and sorting hands look cards up instead of recomputing.
_DECKS = {players: _make_deck(players) for players in (2, 3)}
_DECK_SETS = {players: frozenset(deck) for players, deck in _DECKS.items()}
_DECK_CODES = {players: tuple(card.code for card in deck) for players, deck in _DECKS.items()}
_HAND_ORDER: dict[Card, tuple[int, int]] = {
    card: (COLOURS.index(card.colour), card.value) for card in _INTERNED.values()
}
_OF_COLOUR: dict[str, frozenset[Card]] = {
    colour: frozenset(card for card in _INTERNED.values() if card.colour == colour) for colour in COLOURS
}
_IS_COLOUR = {colour: cards.__contains__ for colour, cards in _OF_COLOUR.items()}
_BLOCK_CARDS = frozenset(card for card in _INTERNED.values() if card.value == BLOCK)


# Hand order (`hand_order`) is canonical deck order: hands are sorted by position in the deck.
_BY_POSITION: tuple[Card, ...] = _DECKS[3]
_POSITION: dict[Card, int] = {card: index for index, card in enumerate(_BY_POSITION)}


def _sorted_hand(hand: Sequence[Card]) -> tuple[Card, ...]:
    if len(hand) < 2:
        return tuple(hand)
    # itemgetter looks every card up in one C call (no bound-method call per card)
    return itemgetter(*sorted(itemgetter(*hand)(_POSITION)))(_BY_POSITION)  # type: ignore[no-any-return]


def _in_deck(card: Card, players: int) -> bool:
    return card in _DECK_SETS[2 if players == 2 else 3]


@dataclass(frozen=True, slots=True)
class SixthSenseOptions:
    beginner: bool = False  # S-8.1
    target: int | None = None  # S-8.2
    late_trump: bool = False  # S-8.3


# --- moves ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Predict:
    """S-3.1: lay a prediction card face down. `card` is None where the card is hidden from the
    holder of the state (another seat's commitment)."""

    seat: int
    card: Card | None


@dataclass(frozen=True, slots=True)
class Play:
    """S-4: play a card; `as_value` declares the 6/9 card (S-6.3); `block` names the card a 0 blocks (S-6.1)."""

    seat: int
    card: Card
    as_value: int | None = None
    block: Card | None = None

    @property
    def value(self) -> int:
        return self.as_value if self.as_value is not None else self.card.value


@dataclass(frozen=True, slots=True)
class Split:
    """S-6.5: the winner of a trick with a counting 12 counts it as two tricks (or not)."""

    seat: int
    split: bool


Move = Predict | Play | Split


@dataclass(frozen=True, slots=True)
class Deal:
    dealer: int
    hands: tuple[tuple[Card, ...] | None, ...]
    hand_sizes: tuple[int, ...]
    trump: Card | None
    # (the layout key (players, beginner, late trump) of the table whose own deck `deal_shuffled`
    # dealt this from, the hands sorted): `start_round` of that table needs no checks and no
    # sorting. Not part of the value.
    _dealt_for: tuple[tuple[int, bool, bool], tuple[tuple[Card, ...], ...]] | None = field(
        default=None, init=False, repr=False, compare=False
    )


@dataclass(frozen=True, slots=True)
class Peek:
    """S-6.4: after trick `trick`, `peeker` may look at `target`'s prediction card."""

    trick: int
    peeker: int
    target: int


@dataclass(frozen=True, slots=True)
class Round:
    dealer: int
    hands: tuple[tuple[Card, ...] | None, ...]
    hand_sizes: tuple[int, ...]
    trump: Card | None  # the turned card; None with beginner, or not yet known to this peer
    predicted: tuple[bool, ...]
    predictions: tuple[Card | None, ...]  # known prediction cards
    leader: int
    trick: tuple[Play, ...]
    trick_winners: tuple[int | None, ...]
    tricks: tuple[int, ...]
    split_owed: int | None
    voids: tuple[frozenset[str], ...]  # colours each seat has shown it lacks (S-4.2)
    played: tuple[Card, ...]  # in order of play
    peeks: tuple[Peek, ...]
    points: tuple[int, ...] | None  # set when the round has been scored


@dataclass(frozen=True, slots=True)
class SixthSenseState:
    players: int
    options: SixthSenseOptions
    rounds_started: int
    first_dealer: int | None
    totals: tuple[int, ...]
    round_points: tuple[tuple[int, ...], ...]
    round: Round | None
    over: bool
    # Caches of what `expected` and `legal_moves` derive from the fields above, filled at most once
    # per state: never compared, hashed or printed, not part of the value.
    _expected: Expected | None = field(default=None, init=False, repr=False, compare=False)
    # (the colour to follow, whether the trick holds its block): `_led_colour(round.trick)`
    _led: tuple[str | None, bool] | None = field(default=None, init=False, repr=False, compare=False)


# Fills a cache field of a frozen state (the value itself is unchanged: see the field comment).
_remember = object.__setattr__


# --- pure rule helpers (shared with bots and UI) -----------------------------------------


def required_colour(trick: Sequence[Play]) -> str | None:
    """The colour the next player must follow (S-4.2), or None when free to choose.

    A blocked led card hands the choice to the next card after the block (S-6.1)."""
    if not trick:
        return None
    for play in trick:
        if play.block is not None:
            break
    else:  # no block: the common case, decided without searching for a target
        return trick[0].card.colour
    block_index, target_index = _block_in(trick)
    if target_index == 0:
        if block_index == len(trick) - 1:
            return None
        return trick[block_index + 1].card.colour
    return trick[0].card.colour


def _led_colour(trick: Sequence[Play]) -> tuple[str | None, bool]:
    """The colour the next player must follow (S-4.2, `required_colour`) and whether the trick
    already holds its one block (S-6.1); without a block, decided from the led card alone."""
    for play in trick:
        if play.block is not None:
            return required_colour(trick), True
    return (trick[0].card.colour if trick else None), False


def _block_in(trick: Sequence[Play]) -> tuple[int, int]:
    """(index of the blocking play, index of the blocked play), or (-1, -1)."""
    for index, play in enumerate(trick):
        if play.block is not None:
            for target_index, target in enumerate(trick):
                if target.card == play.block:
                    return index, target_index
    return -1, -1


def trick_winner(trick: Sequence[Play], trump: str | None) -> tuple[int | None, tuple[Play, ...], str | None]:
    """(winning seat or None, the plays that count, led colour) of a complete trick.

    S-5: blocked and blocking cards do not count. S-4.5: highest trump, else highest of the led
    colour. S-6.2: an odd number of counting 4s reverses: lowest of the lowest class wins, off-colour
    below led colour below trump; of equally low cards the last played wins.
    """
    led: str | None
    for play in trick:
        if play.block is not None:  # S-6.1: blocked and blocking cards do not count
            counting, led = _counting_and_led(trick)
            if not counting:
                return None, counting, led
            break
    else:  # the common case: every card counts, the first sets the led colour
        counting = tuple(trick)
        led = trick[0].card.colour
    return _winning_seat(counting, trump, led), counting, led  # type: ignore[arg-type]  # counting: led is set


def _winning_seat(counting: Sequence[Play], trump: str | None, led: str) -> int:
    """The seat that wins a trick of these counting plays (S-4.5, S-6.2; see `trick_winner`)."""
    # One pass over (class, value): trump 2, led colour 1, other 0 (S-4.5), as the one int
    # class * 16 + value (values are below 16), looked up per card. The highest wins, the first of
    # equals, unless an odd number of 4s reversed the order (S-6.2): then the lowest, the last of equals.
    ranks = _RANKS[trump][led]
    reversed_order = False
    high = low = counting[0]
    high_key, low_key = -16, 48
    for play in counting:
        card = play.card
        key = ranks[card]
        if play.as_value is not None:  # S-6.3: the 6/9 card counts as declared
            key += play.as_value - SIX_NINE
        elif card.value == REVERSAL:
            reversed_order = not reversed_order
        if key > high_key:
            high, high_key = play, key
        if key <= low_key:
            low, low_key = play, key
    return (low if reversed_order else high).seat


# By trump colour (None: no trump) and led colour: each card's class * 16 + value (S-4.5: trump
# 2, led colour 1, other 0); the 6/9 card with value 6.
_RANKS: dict[str | None, dict[str, dict[Card, int]]] = {
    trump: {
        led: {
            card: (32 if card.colour == trump else 16 if card.colour == led else 0) + card.value
            for card in _INTERNED.values()
        }
        for led in COLOURS
    }
    for trump in (None, *COLOURS)
}


def _counting_and_led(trick: Sequence[Play]) -> tuple[tuple[Play, ...], str | None]:
    """The plays of a trick with a block that count, and its led colour (S-6.1)."""
    block_index, target_index = _block_in(trick)
    if block_index < 0:
        return tuple(trick), trick[0].card.colour
    counting = tuple(p for i, p in enumerate(trick) if i not in (block_index, target_index))
    if target_index != 0:
        return counting, trick[0].card.colour
    if block_index + 1 < len(trick):
        return counting, trick[block_index + 1].card.colour
    # S-6.1 [decision]: the block was last; the earliest card still counting sets it
    return counting, counting[0].card.colour if counting else None


def round_score(prediction: Card, tricks: int, beginner: bool) -> int:
    """S-7.2/S-7.3 (and S-8.1 with beginner); the 6/9 card is hit by 6 or 9 (S-3.3)."""
    if prediction.value == SIX_NINE:
        distance = min(abs(tricks - 6), abs(tricks - 9))
        hit_points = tricks
    else:
        distance = abs(tricks - prediction.value)
        hit_points = prediction.value
    if beginner:
        return BEGINNER_POINTS[distance] if distance < len(BEGINNER_POINTS) else 0
    return hit_points if distance == 0 else -distance


# --- the game ------------------------------------------------------------------------


class SixthSense(Game[SixthSenseOptions, SixthSenseState, Move, Deal]):
    id = "sixth-sense"
    title = "6th Sense"
    min_players = 2
    max_players = 6

    # options and set-up
    def options_from_json(self, raw: Mapping[str, object]) -> SixthSenseOptions:
        check_keys(raw, {"beginner", "target", "late_trump"}, "sixth-sense options")
        target = raw.get("target")
        if target is not None and (not isinstance(target, int) or isinstance(target, bool) or target < 1):
            raise FormatError(
                f"sixth-sense options: 'target' (S-8.2: the total that ends the game) must be a whole number of "
                f"points, 1 or more, or be left out to play the set number of rounds; got {target!r}"
            )
        return SixthSenseOptions(
            beginner=require_bool(raw, "beginner", "sixth-sense options", False),
            target=target,
            late_trump=require_bool(raw, "late_trump", "sixth-sense options", False),
        )

    def options_to_json(self, options: SixthSenseOptions) -> JSONObject:
        return {"beginner": options.beginner, "target": options.target, "late_trump": options.late_trump}

    def new_game(self, players: int, options: SixthSenseOptions) -> SixthSenseState:
        if not self.min_players <= players <= self.max_players:
            raise IllegalMove("S-1.3", f"6th Sense is for 2–6 players, not {players}")
        return SixthSenseState(players, options, 0, None, (0,) * players, (), None, False)

    # what a table protocol must know (engine.api.Game)
    def hand_card_fields(self) -> tuple[str, ...]:
        return ("play", "predict")

    def hidden_choice(self, kind: str) -> HiddenMode | None:
        return "round" if kind == "predict" else None  # S-3.4: predictions stay hidden

    def hands_public(self, options: SixthSenseOptions) -> bool:
        return False

    def peeks_due(self, state: SixthSenseState) -> tuple[PeekDue, ...]:
        r = state.round
        return () if r is None else tuple(PeekDue(p.trick, p.peeker, p.target) for p in r.peeks)  # S-6.4

    def tricks_ended(self, state: SixthSenseState) -> int:
        return 0 if state.round is None else len(state.round.trick_winners)

    def players(self, state: SixthSenseState) -> int:
        return state.players

    def expected_dealer(self, state: SixthSenseState) -> int | None:
        if state.first_dealer is None:
            return None
        return (state.first_dealer + state.rounds_started) % state.players  # S-2.5

    def layout(self, state: SixthSenseState, dealer: int) -> DealLayout:
        options = state.options
        return _LAYOUTS[state.players, options.beginner, options.late_trump and not options.beginner]

    def deal_from_cards(self, state: SixthSenseState, dealer: int, cards: Sequence[str | None]) -> Deal:
        options = state.options
        key = state.players, options.beginner, options.late_trump and not options.beginner
        layout = _LAYOUTS[key]
        if len(cards) != len(layout.deck):
            raise FormatError(f"a deal needs {len(layout.deck)} positions, got {len(cards)}")
        size = HAND_SIZE[state.players]
        trump: Card | None = None
        turned = layout.table or layout.late_table
        try:  # the common case: every hand known, all read in one pass
            dealt = itemgetter(*_HAND_POSITIONS[key](cards))(_CARDS_BY_CODE)  # every hand has a card
            if turned and cards[turned[0]] is not None:
                trump = Card.parse(cards[turned[0]])
            hands_known = tuple([dealt[start : start + size] for start in range(0, len(dealt), size)])
            return _new_deal(dealer, hands_known, _HAND_SIZES[len(layout.hands)], trump)
        except (KeyError, TypeError):
            pass  # a hand unknown to this peer (None), or a bad code: hand by hand below
        hands: list[tuple[Card, ...] | None] = []
        for positions in layout.hands:
            codes = [cards[p] for p in positions]
            if None in codes:
                hands.append(None)
                continue
            try:
                hands.append(tuple(map(_CARDS_BY_CODE.__getitem__, codes)))  # type: ignore[arg-type]
            except (KeyError, TypeError):
                hands.append(tuple(Card.parse(c) for c in codes))  # raises, naming the bad code
        if turned and cards[turned[0]] is not None:
            trump = Card.parse(cards[turned[0]])
        return _new_deal(dealer, tuple(hands), _HAND_SIZES[len(layout.hands)], trump)

    def deal_shuffled(self, state: SixthSenseState, dealer: int, rng: random.Random) -> Deal:
        """`deal_from_cards` of the layout's deck shuffled by `rng` (engine.api.Game), built from the
        deck positions: a shuffle's draws depend only on the deck's length, so positions 0 … size end
        in the order the codes would, and the engine's own deck needs no checks (`Deal._dealt_for`)."""
        options = state.options
        n = state.players
        key = n, options.beginner, options.late_trump and not options.beginner
        size = HAND_SIZE[n]
        dealt = n * size
        deck = _DECKS[2 if n == 2 else 3]
        positions = list(range(len(deck)))
        shuffle(positions, rng, dealt + 1)  # the hands and the trump (S-2.4): the rest is stock
        cuts = [positions[start : start + size] for start in range(0, dealt, size)]
        hands = tuple([itemgetter(*cut)(deck) for cut in cuts])
        # hand order is deck order (`_sorted_hand`): a sorted hand is its sorted positions
        in_order = tuple([itemgetter(*sorted(cut))(deck) for cut in cuts])
        trump = None if options.beginner else deck[positions[dealt]]  # S-8.1: none turned
        return _new_deal(dealer, hands, _HAND_SIZES[n], trump, (key, in_order))

    def deal_from_json(self, state: SixthSenseState, raw: Mapping[str, object]) -> Deal:
        check_keys(raw, {"dealer", "hands", "trump"}, "sixth-sense deal")
        dealer = require_int(raw, "dealer", "sixth-sense deal")
        hands_raw = raw.get("hands")
        if not isinstance(hands_raw, list) or not all(isinstance(h, list) for h in hands_raw):
            raise FormatError("sixth-sense deal: 'hands' must be a list of card lists")
        hands = tuple(tuple(Card.parse(code) for code in hand) for hand in hands_raw)
        trump_raw = raw.get("trump")
        trump = None if trump_raw is None else Card.parse(trump_raw)
        if trump is None and not state.options.beginner:
            raise IllegalMove("S-2.4", "the deal has no trump card, but only the beginner variant plays without")
        return Deal(dealer, hands, tuple(len(h) for h in hands), trump)

    def deal_to_json(self, deal: Deal) -> JSONObject:
        return {
            "dealer": deal.dealer,
            "hands": [[c.code for c in hand] if hand is not None else None for hand in deal.hands],
            "trump": deal.trump.code if deal.trump is not None else None,
        }

    def start_round(self, state: SixthSenseState, deal: Deal) -> SixthSenseState:
        n = state.players
        if self.expected(state).phase != "deal":
            raise IllegalMove("S-2.3", "a new round is dealt only after the last one ended")
        if not 0 <= deal.dealer < n:
            raise IllegalMove("S-2.5", f"dealer {deal.dealer} is not a seat of this {n}-player table")
        want_dealer = self.expected_dealer(state)
        if want_dealer is not None and deal.dealer != want_dealer:
            raise IllegalMove(
                "S-2.5", f"the dealer moves one seat left each round: seat {want_dealer} deals, not {deal.dealer}"
            )
        if len(deal.hands) != n or len(deal.hand_sizes) != n:
            raise IllegalMove("S-2.3", f"{n} players need {n} hands, the deal has {len(deal.hands)}")
        hands = deal.hands
        options = state.options
        dealt_for = deal._dealt_for
        if dealt_for is not None and dealt_for[0] == (n, options.beginner, options.late_trump and not options.beginner):
            return self._started(state, deal, dealt_for[1])  # this table's own deck
        deck = _DECK_SETS[2 if n == 2 else 3]
        seen: set[Card] | frozenset[Card] = set()
        if deal.hand_sizes == _HAND_SIZES[n] and None not in hands:
            known: tuple[tuple[Card, ...], ...] = hands  # type: ignore[assignment]  # no hand is None
            dealt = frozenset().union(*known) if tuple(map(len, known)) == _HAND_SIZES[n] else frozenset()
            if len(dealt) == n * HAND_SIZE[n] and dealt <= deck:
                seen = dealt  # the common case: every hand known and valid, checked as one set
        for seat, hand in enumerate(hands if not seen else ()):
            if deal.hand_sizes[seat] != HAND_SIZE[n] or (hand is not None and len(hand) != HAND_SIZE[n]):
                message = f"with {n} players each hand holds {HAND_SIZE[n]} cards; seat {seat}'s does not"
                raise IllegalMove("S-2.3", message, seat)
            cards = frozenset(hand or ())
            if len(cards) == len(hand or ()) and cards <= deck and seen.isdisjoint(cards):
                seen = seen | cards  # checked as sets; else card by card for the message
                continue
            for card in hand or ():
                if card not in deck:
                    raise IllegalMove("S-2.1", f"{card.code} is not in the {n}-player deck", seat)
                if card in seen:
                    raise IllegalMove("S-2.3", f"{card.code} is dealt twice")
                seen = seen | {card}
        if deal.trump is not None:
            if state.options.beginner:
                raise IllegalMove("S-8.1", "the beginner variant turns no trump card")
            if deal.trump not in deck:
                raise IllegalMove("S-2.1", f"trump card {deal.trump.code} is not in the {n}-player deck")
            if deal.trump in seen:
                raise IllegalMove("S-2.4", f"trump card {deal.trump.code} is also dealt to a hand")
        return self._started(state, deal, tuple([_sorted_hand(h) if h is not None else None for h in hands]))

    def _started(
        self, state: SixthSenseState, deal: Deal, hands: tuple[tuple[Card, ...] | None, ...]
    ) -> SixthSenseState:
        """The state of a round starting from `deal` (checked), its hands sorted (`hands`)."""
        n = state.players
        round_ = _new_round(
            deal.dealer,
            hands,
            deal.hand_sizes,
            deal.trump,
            (False,) * n,
            _NONES[n],
            (deal.dealer + 1) % n,  # S-2.5: the dealer's left leads
            (),
            (),
            (0,) * n,
            None,
            _NO_VOIDS[n],
            (),
            (),
            None,
        )
        first = state.first_dealer if state.first_dealer is not None else deal.dealer
        return _new_state(
            n, state.options, state.rounds_started + 1, first, state.totals, state.round_points, round_, state.over
        )

    # play
    def expected(self, state: SixthSenseState) -> Expected:
        expected = state._expected
        if expected is None:
            expected = self._expected(state)
            _remember(state, "_expected", expected)
        return expected

    def _expected(self, state: SixthSenseState) -> Expected:
        r = state.round
        if (  # the common case first: a card to play
            r is not None
            and r.split_owed is None
            and r.points is None
            and (r.trump is not None or state.options.beginner or not state.options.late_trump)
            and all(r.predicted)
            and any(r.hand_sizes)
        ):
            return _PLAY_EXPECTED[(r.leader + len(r.trick)) % state.players]
        if state.over:
            return _EXPECT_OVER
        if r is None or r.points is not None:
            return _EXPECT_DEAL
        if not all(r.predicted):
            expected = _PREDICT_EXPECTED.get(r.predicted)
            if expected is None:
                expected = Expected("move", tuple(s for s in range(state.players) if not r.predicted[s]), "predict")
                _PREDICT_EXPECTED[r.predicted] = expected  # 2**players keys at most
            return expected
        if r.trump is None and state.options.late_trump and not state.options.beginner:
            return _EXPECT_REVEAL
        if r.split_owed is not None:
            return _SPLIT_EXPECTED[r.split_owed]
        if any(r.hand_sizes):
            return _PLAY_EXPECTED[(r.leader + len(r.trick)) % state.players]
        return _EXPECT_UNSETTLED  # all cards played, but some prediction is unknown to this peer

    def legal_moves(self, state: SixthSenseState, seat: int) -> tuple[Move, ...]:
        r = state.round
        expected = state._expected or self.expected(state)
        if r is None or expected.phase != "move" or seat not in expected.seats:
            return ()
        hand = r.hands[seat]
        if hand is None:
            raise IllegalMove("format", f"seat {seat}'s hand is not known to this state")
        kind = expected.kind
        if kind != "play":
            return lookup_all(_PREDICTS[seat], hand) if kind == "predict" else _SPLITS[seat]
        trick = r.trick
        playable = hand
        colour, blocked = state._led or _led_of(state)
        if colour is not None:  # S-4.2: follow the led colour if possible
            following = tuple(filter(_IS_COLOUR[colour], hand))
            if following:
                playable = following
        if _SPECIAL_CARDS.isdisjoint(playable):  # one play per card
            if len(playable) > 1:
                return itemgetter(*playable)(_SINGLE_PLAYS[seat])  # type: ignore[no-any-return]
            return (_SINGLE_PLAYS[seat][playable[0]],) if playable else ()
        plain = _PLAIN_BY_SEAT[seat]
        if not trick or blocked or _BLOCK_CARDS.isdisjoint(playable):  # no block possible
            # each card's plays looked up in one C call and joined (no Python call per card)
            return sum(itemgetter(*playable)(plain), ()) if len(playable) > 1 else plain[playable[0]]
        blocks = _BLOCKS_BY_SEAT[seat]
        found: list[Move] = []
        for card in playable:
            found.extend(plain[card])
            if card.value == BLOCK:  # S-6.1: a 0 may block any card of the trick
                by_target = blocks[card]
                found.extend([by_target[p.card] for p in trick])
        return tuple(found)

    def apply(self, state: SixthSenseState, move: Move) -> SixthSenseState:
        expected = state._expected or self.expected(state)
        # The hot path of every playout: the seat whose turn it is plays a card (S-4.1). Everything
        # else, and every move refused before its card is looked at, goes through `_apply_other`.
        if expected.kind != "play" or not isinstance(move, Play) or move.seat != expected.seats[0]:
            return self._apply_other(state, expected, move)
        r: Round = state.round  # type: ignore[assignment]  # a play is owed only in a round
        seat = move.seat
        card = move.card
        hands = r.hands
        hand = hands[seat]
        if hand is not None:
            try:  # where the card is, and whether it is there, in one pass
                index = hand.index(card)
            except ValueError:
                raise IllegalMove("S-4.1", f"{card.code} is not in seat {seat}'s hand", seat) from None
        else:
            if r.hand_sizes[seat] == 0:
                raise IllegalMove("S-4.3", f"seat {seat} has no cards left", seat)
            self._check_unseen(state, r, seat, card, "S-4.1")
        if card.value == SIX_NINE:
            if move.as_value not in (6, 9):
                raise IllegalMove("S-6.3", f"the 6/9 card {card.code} must be declared 6 or 9", seat)
        elif move.as_value is not None:
            raise IllegalMove("S-6.3", f"only the 6/9 card is declared, not {card.code}", seat)
        trick = r.trick
        led = state._led or _led_of(state)
        colour, blocked = led
        block = move.block
        if block is not None:
            if card.value != BLOCK:
                raise IllegalMove("S-6.1", f"only a 0 blocks, not {card.code}", seat)
            if not trick:
                raise IllegalMove("S-6.1", "a player may not lead with a block", seat)
            if blocked:
                raise IllegalMove("S-6.1", "at most one block per trick", seat)
            if all(p.card != block for p in trick):
                raise IllegalMove("S-6.1", f"{block.code} has not been played in this trick", seat)
        voids = r.voids
        shown = voids[seat]
        if colour is not None and card.colour != colour:  # S-4.2: the seat shows it lacks the led colour
            if hand is not None and not _OF_COLOUR[colour].isdisjoint(hand):
                holds = " ".join(c.code for c in hand if c.colour == colour)
                raise IllegalMove("S-4.2", f"must follow the led colour {colour}: holds {holds}", seat)
            if card.colour in shown:
                message = f"seat {seat} showed earlier it has no {card.colour}, yet plays {card.code}"
                raise IllegalMove("S-4.2", message, seat)
            if colour not in shown:
                voids = _replace_at(voids, seat, shown | {colour})
        elif card.colour in shown:
            message = f"seat {seat} showed earlier it has no {card.colour}, yet plays {card.code}"
            raise IllegalMove("S-4.2", message, seat)
        new_hands = hands
        if hand is not None:
            listed = list(hands)  # cheaper than slicing and joining the tuple
            listed[seat] = hand[:index] + hand[index + 1 :]
            new_hands = tuple(listed)
        after = _SIZES_AFTER_PLAY.get(r.hand_sizes) or _sizes_after_play(r.hand_sizes)
        sizes, cards_left = after[seat]
        # The trick's led colour and block after this card: kept by a card that is no block once a
        # colour is led; a lead sets them; after a block or a blocked lead (rare) they are found again.
        next_led = led if block is None and colour is not None else None if trick else _LED_BY[card.colour]
        trick += (move,)
        played = r.played + (card,)  # noqa: RUF005  # one new tuple, not a list made into one
        n = state.players
        if len(trick) < n:
            return _new_state(
                n, state.options, state.rounds_started, state.first_dealer, state.totals, state.round_points,
                _new_round(
                    r.dealer, new_hands, sizes, r.trump, r.predicted, r.predictions, r.leader, trick,
                    r.trick_winners, r.tricks, r.split_owed, voids, played, r.peeks, r.points,
                ),
                state.over,
                # S-4.1: the next seat plays (what `expected` would find: nothing else changed)
                _NEXT_PLAY_OWED[n][seat] if cards_left else None,
                next_led,
            )
        return self._finish_trick(state, r, new_hands, sizes, cards_left, trick, next_led, voids, played)

    def apply_moves(self, state: SixthSenseState, moves: Sequence[Move]) -> SixthSenseState:
        """`apply` of each move in order (engine.api.Game); the joint prediction of every seat that
        owes one (S-3.1), each card from a known hand, builds one state instead of one per seat."""
        expected = state._expected or self.expected(state)
        if expected.kind == "predict" and len(moves) == len(expected.seats):
            joint = self._predict_all(state, expected.seats, moves)
            if joint is not None:
                return joint
        return super().apply_moves(state, moves)

    def _predict_all(
        self, state: SixthSenseState, seats: tuple[int, ...], moves: Sequence[Move]
    ) -> SixthSenseState | None:
        """The state after `moves`, one `Predict` of a card from its known hand by each of `seats`
        (the seats that owe one) in that order, as `apply` one at a time gives it (S-3.1, S-3.2);
        None for any other moves, which go one at a time (and raise there what they break)."""
        r: Round = state.round  # type: ignore[assignment]  # a prediction is owed only in a round
        hands = list(r.hands)
        predictions = list(r.predictions)
        sizes = list(r.hand_sizes)
        for seat, move in zip(seats, moves):  # noqa: B905  # the same length (checked)
            if type(move) is not Predict or move.seat != seat:
                return None
            hand = hands[seat]
            card = move.card
            if hand is None or card is None or card not in hand:
                return None
            hands[seat] = _without(hand, card)
            predictions[seat] = card
            sizes[seat] -= 1
        return _with_round(state, _new_round(
            r.dealer, tuple(hands), tuple(sizes), r.trump, _ALL_PREDICTED[state.players], tuple(predictions),
            r.leader, r.trick, r.trick_winners, r.tricks, r.split_owed, r.voids, r.played, r.peeks, r.points,
        ))

    def _apply_other(self, state: SixthSenseState, expected: Expected, move: Move) -> SixthSenseState:
        """`apply` of a prediction or a split, or of a play refused for whose turn it is."""
        r = state.round
        if r is None or expected.phase != "move":
            rule = {"over": "S-7.4", "reveal": "S-8.3", "deal": "S-7.1", "unsettled": "S-7.1"}[expected.phase]
            raise IllegalMove(rule, f"no move is expected now (the game is at '{expected.phase}')", move.seat)
        seat = move.seat
        n = state.players
        if not 0 <= seat < n:
            raise IllegalMove("S-1.3", f"seat {seat} is not at this table", seat)
        if not isinstance(move, Play):
            if isinstance(move, Split):
                if expected.kind != "split" or seat != r.split_owed:
                    raise IllegalMove("S-6.5", f"seat {seat} has no trick to split now", seat)
                return self._split(state, r, move)
            return self._predict(state, r, expected, move)
        if expected.kind != "play":
            if expected.kind == "predict":
                raise IllegalMove("S-3.1", "every player first chooses a prediction card", seat)
            raise IllegalMove("S-6.5", f"seat {r.split_owed} must first decide whether to split the trick", seat)
        # `apply` takes the play of the seat whose turn it is itself
        raise IllegalMove("S-4.1", f"it is seat {expected.seats[0]}'s turn to play, not seat {seat}'s", seat)

    def _split(self, state: SixthSenseState, r: Round, move: Split) -> SixthSenseState:
        tricks = _bump(r.tricks, move.seat, 1) if move.split else r.tricks
        return self._after_trick(state, _new_round(
            r.dealer, r.hands, r.hand_sizes, r.trump, r.predicted, r.predictions, r.leader, r.trick,
            r.trick_winners, tricks, None, r.voids, r.played, r.peeks, r.points,
        ))

    def _predict(self, state: SixthSenseState, r: Round, expected: Expected, move: Predict) -> SixthSenseState:
        seat = move.seat
        if expected.kind != "predict":
            if expected.kind == "split":
                raise IllegalMove("S-6.5", f"seat {r.split_owed} must first decide the split of the trick", seat)
            raise IllegalMove("S-3.1", "predictions are made before the first card is played", seat)
        if r.predicted[seat]:
            raise IllegalMove("S-3.1", f"seat {seat} has already chosen a prediction card", seat)
        hand = r.hands[seat]
        if move.card is None:
            if hand is not None:
                raise IllegalMove("S-3.1", "a prediction needs a card from the hand", seat)
        elif hand is not None:
            if move.card not in hand:
                raise IllegalMove("S-3.2", f"{move.card.code} is not in seat {seat}'s hand", seat)
        else:
            self._check_unseen(state, r, seat, move.card, "S-3.2")
        card = move.card
        hands = r.hands
        if hand is not None and card is not None:
            hands = _replace_at(hands, seat, _without(hand, card))
        return _with_round(state, _new_round(
            r.dealer, hands, _bump(r.hand_sizes, seat, -1), r.trump, _replace_at(r.predicted, seat, True),
            _replace_at(r.predictions, seat, card), r.leader, r.trick, r.trick_winners, r.tricks,
            r.split_owed, r.voids, r.played, r.peeks, r.points,
        ))

    def _check_unseen(self, state: SixthSenseState, r: Round, seat: int, card: Card, rule: str) -> None:
        """Partial knowledge: a card from an unknown hand must be one this peer has not seen elsewhere."""
        if not _in_deck(card, state.players):
            raise IllegalMove("S-2.1", f"{card.code} is not in the {state.players}-player deck", seat)
        if card in r.played or card == r.trump:
            raise IllegalMove(rule, f"{card.code} has already been seen on the table", seat)
        for other, hand in enumerate(r.hands):
            if other != seat and hand is not None and card in hand:
                raise IllegalMove(rule, f"{card.code} is in another hand, not seat {seat}'s", seat)
        for other, prediction in enumerate(r.predictions):
            if prediction == card and other != seat:
                raise IllegalMove(rule, f"{card.code} is another seat's prediction card", seat)

    def _finish_trick(
        self,
        state: SixthSenseState,
        r: Round,
        hands: tuple[tuple[Card, ...] | None, ...],
        sizes: tuple[int, ...],
        cards_left: bool,
        trick: tuple[Play, ...],
        led: tuple[str | None, bool] | None,
        voids: tuple[frozenset[str], ...],
        played: tuple[Card, ...],
    ) -> SixthSenseState:
        """The round after the last card of `trick` (the other fields as they are in `r`; `led`:
        `_led_colour(trick)`, if known)."""
        trump = r.trump.colour if r.trump is not None and not state.options.beginner else None
        winner: int | None
        if led is not None and not led[1]:  # no block: every card counts (S-6.1)
            counting = trick
            winner = _winning_seat(trick, trump, led[0])  # type: ignore[arg-type]  # a card has led
        else:
            winner, counting, _ = trick_winner(trick, trump)
        if winner is None:  # S-6.1: a 2-player block removes every card; the same leader leads again
            return self._after_trick(state, _new_round(
                r.dealer, hands, sizes, r.trump, r.predicted, r.predictions, r.leader, (), (*r.trick_winners, None),
                r.tricks, r.split_owed, voids, played, r.peeks, r.points,
            ))
        peeks = r.peeks
        lead = trick[0]
        if lead.card.value == PEEK and lead in counting and winner != lead.seat:  # S-6.4
            peeks = (*peeks, Peek(len(r.trick_winners), lead.seat, winner))
        split_owed = None
        for play in counting:  # S-6.5
            if play.card.value == DOUBLE:
                split_owed = winner
                break
        tricks = list(r.tricks)
        tricks[winner] += 1
        after = _new_round(
            r.dealer, hands, sizes, r.trump, r.predicted, r.predictions,
            winner,  # S-4.6
            (), r.trick_winners + (winner,), tuple(tricks),  # noqa: RUF005  # one new tuple
            split_owed, voids, played, peeks, r.points,
        )
        # What `expected` would find (a play was owed, so only the split and the cards left differ):
        # the winner splits its trick or leads the next one (S-6.5, S-4.6); else the round ends.
        if split_owed is not None:
            expected = None if state.over else _SPLIT_EXPECTED[winner]
        elif cards_left:
            expected = _PLAY_EXPECTED[winner]
        else:
            return self._after_trick(state, after)
        return _new_state(
            state.players, state.options, state.rounds_started, state.first_dealer, state.totals,
            state.round_points, after, state.over, expected, _NO_LED,
        )

    def _after_trick(self, state: SixthSenseState, r: Round) -> SixthSenseState:
        if r.split_owed is not None or r.trick or any(r.hand_sizes):
            return _new_state(
                state.players, state.options, state.rounds_started, state.first_dealer, state.totals,
                state.round_points, r, state.over, None, None if r.trick else _NO_LED,
            )
        predictions = r.predictions
        if any(p is None for p in predictions):
            return _with_round(state, r)  # phase "unsettled": the scores need every prediction
        beginner = state.options.beginner
        points = tuple(round_score(p, t, beginner) for p, t in zip(predictions, r.tricks, strict=True) if p is not None)
        totals = tuple(a + b for a, b in zip(state.totals, points, strict=True))
        target = state.options.target
        if target is None:
            over = state.rounds_started >= ROUNDS[state.players]  # S-2.2
        else:
            over = max(totals) >= target  # S-8.2
        scored = _new_round(
            r.dealer, r.hands, r.hand_sizes, r.trump, r.predicted, r.predictions, r.leader, r.trick,
            r.trick_winners, r.tricks, r.split_owed, r.voids, r.played, r.peeks, points,
        )
        return _new_state(
            state.players, state.options, state.rounds_started, state.first_dealer, totals,
            (*state.round_points, points), scored, over, _EXPECT_OVER if over else _EXPECT_DEAL,  # S-7.4, S-7.1
        )

    def reveal(self, state: SixthSenseState, cards: Sequence[str]) -> SixthSenseState:
        r = state.round
        if r is None or self.expected(state).phase != "reveal":
            raise IllegalMove("S-8.3", "no trump card is waiting to be turned")
        if len(cards) != 1:
            raise FormatError(f"one trump card is turned, not {len(cards)}")
        trump = Card.parse(cards[0])
        self._check_unseen(state, r, -1, trump, "S-2.4")
        return replace(state, round=replace(r, trump=trump))

    def view(self, state: SixthSenseState, seat: int) -> SixthSenseState:
        r = state.round
        if r is None or r.points is not None:
            return state  # between rounds everything of the finished round is public (S-7.1)
        n = state.players
        hide_trump = state.options.late_trump and not all(r.predicted)
        if 0 <= seat < n:
            hands = (*_NONES[seat], r.hands[seat], *_NONES[n - seat - 1])
        else:
            hands = _NONES[n]
        peeks = r.peeks
        if peeks:
            peeked = {peek.target for peek in peeks if peek.peeker == seat}  # S-6.4: the peeker saw these
            predictions = tuple([p if s == seat or s in peeked else None for s, p in enumerate(r.predictions)])
        elif 0 <= seat < n:
            predictions = (*_NONES[seat], r.predictions[seat], *_NONES[n - seat - 1])
        else:
            predictions = _NONES[n]
        view_round = _new_round(
            r.dealer, hands, r.hand_sizes, None if hide_trump else r.trump, r.predicted, predictions, r.leader,
            r.trick, r.trick_winners, r.tricks, r.split_owed, r.voids, r.played, r.peeks, r.points,
        )
        # The same moves are owed (`expected` reads nothing the view hides: a late trump is hidden
        # only while predictions are owed, S-8.3), and the same trick is led.
        return _new_state(
            n, state.options, state.rounds_started, state.first_dealer, state.totals, state.round_points,
            view_round, state.over, state._expected, state._led,
        )

    # wire forms
    def move_from_json(self, raw: Mapping[str, object]) -> Move:
        seat = require_int(raw, "seat", "move")
        if "predict" in raw:
            check_keys(raw, {"seat", "predict"}, "predict move")
            card = raw["predict"]
            return Predict(seat, None if card is None else Card.parse(card))
        if "play" in raw:
            check_keys(raw, {"seat", "play", "as", "block"}, "play move")
            as_value = raw.get("as")
            if as_value is not None and (not isinstance(as_value, int) or isinstance(as_value, bool)):
                raise FormatError(f"play move: 'as' must be 6 or 9, got {as_value!r}", seat)
            block = raw.get("block")
            return Play(seat, Card.parse(raw["play"]), as_value, None if block is None else Card.parse(block))
        if "split" in raw:
            check_keys(raw, {"seat", "split"}, "split move")
            return Split(seat, require_bool(raw, "split", "split move", True))
        raise FormatError("a 6th Sense move has 'predict', 'play' or 'split'", seat)

    def move_to_json(self, move: Move) -> JSONObject:
        if isinstance(move, Predict):
            return {"seat": move.seat, "predict": move.card.code if move.card is not None else None}
        if isinstance(move, Split):
            return {"seat": move.seat, "split": move.split}
        out: JSONObject = {"seat": move.seat, "play": move.card.code}
        if move.as_value is not None:
            out["as"] = move.as_value
        if move.block is not None:
            out["block"] = move.block.code
        return out

    def move_seat(self, move: Move) -> int:
        return move.seat

    # results
    def round_report(self, state: SixthSenseState) -> JSONObject:
        r = state.round
        if r is None:
            return {}
        return {
            "dealer": r.dealer,
            "trick_winners": list(r.trick_winners),
            "tricks": list(r.tricks),
            "points": list(r.points) if r.points is not None else None,
        }

    def totals(self, state: SixthSenseState) -> tuple[int, ...]:
        return state.totals

    def winners(self, state: SixthSenseState) -> tuple[int, ...] | None:
        return winners_by(state.totals, highest=True) if state.over else None  # S-7.4

    def public_state(self, state: SixthSenseState) -> JSONObject:
        out: JSONObject = {
            "game": self.id,
            "players": state.players,
            "options": self.options_to_json(state.options),
            "rounds_started": state.rounds_started,
            "totals": list(state.totals),
            "over": state.over,
        }
        r = state.round
        if r is None:
            return out
        finished = r.points is not None
        hide_trump = state.options.late_trump and not all(r.predicted)
        out["round"] = {
            "dealer": r.dealer,
            "hand_sizes": list(r.hand_sizes),
            "trump": r.trump.code if r.trump is not None and not hide_trump else None,
            "predicted": list(r.predicted),
            "predictions": [p.code if p else None for p in r.predictions] if finished else None,
            "leader": r.leader,
            "trick": [self.move_to_json(p) for p in r.trick],
            "trick_winners": list(r.trick_winners),
            "tricks": list(r.tricks),
            "split_owed": r.split_owed,
            "points": list(r.points) if r.points is not None else None,
        }
        return out


T = TypeVar("T")


def _replace_at(values: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*values[:index], value, *values[index + 1 :])


# Immutable moves and expectations are made once, not in the hot path of every playout.
_PLAY_EXPECTED = tuple(Expected("move", (seat,), "play") for seat in range(6))
# At a table of n, after the play of seat s (owed since (leader + cards in the trick) % n == s):
# the next seat's play.
_NEXT_PLAY_OWED = {n: tuple(_PLAY_EXPECTED[(seat + 1) % n] for seat in range(n)) for n in range(2, 7)}
_ALL_PREDICTED = tuple((True,) * count for count in range(7))  # S-3.1: every seat has predicted
_NONES = tuple((None,) * count for count in range(7))  # hands and predictions a view does not know
_NO_VOIDS: tuple[tuple[frozenset[str], ...], ...] = tuple((frozenset(),) * count for count in range(7))
_HAND_SIZES = {players: (size,) * players for players, size in HAND_SIZE.items()}  # S-2.3
_PREDICT_EXPECTED: dict[tuple[bool, ...], Expected] = {}  # by who has predicted
_SPLIT_EXPECTED = tuple(Expected("move", (seat,), "split") for seat in range(6))
_EXPECT_OVER = Expected("over")
_EXPECT_DEAL = Expected("deal")
_EXPECT_REVEAL = Expected("reveal")
_EXPECT_UNSETTLED = Expected("unsettled")
_PREDICTS: tuple[dict[Card, Predict], ...] = tuple(
    {card: Predict(seat, card) for card in _INTERNED.values()} for seat in range(6)
)
_SPLITS: tuple[tuple[Split, Split], ...] = tuple((Split(seat, True), Split(seat, False)) for seat in range(6))
# The non-blocking plays of each card by each seat: both declarations of the 6/9 card (S-6.3).
_PLAIN_BY_SEAT: tuple[dict[Card, tuple[Play, ...]], ...] = tuple(
    {
        card: (Play(seat, card, 6), Play(seat, card, 9)) if card.value == SIX_NINE else (Play(seat, card),)
        for card in _INTERNED.values()
    }
    for seat in range(6)
)
_LAYOUTS: dict[tuple[int, bool, bool], DealLayout] = {}
for _players, _size in HAND_SIZE.items():
    _hands = tuple(tuple(range(seat * _size, (seat + 1) * _size)) for seat in range(_players))
    _trump_position = (_players * _size,)  # S-2.4: the top card of the stock
    _deck_codes = _DECK_CODES[2 if _players == 2 else 3]
    _LAYOUTS[_players, True, False] = DealLayout(_deck_codes, _hands)  # S-8.1 beginner: no card is turned
    _LAYOUTS[_players, False, True] = DealLayout(_deck_codes, _hands, late_table=_trump_position)  # S-8.3
    _LAYOUTS[_players, False, False] = DealLayout(_deck_codes, _hands, table=_trump_position)
# Every hand position of each layout, seat by seat: a deal's hands read in one C-level call.
_HAND_POSITIONS = {key: itemgetter(*(p for hand in layout.hands for p in hand)) for key, layout in _LAYOUTS.items()}
_new_round = fast_constructor(Round)
_new_deal: Callable[..., Deal] = fast_constructor(Deal, caches=True)  # `_dealt_for` last, optional
# The fields of a state, then optionally its `_expected` (known at once after most moves).
_new_state: Callable[..., SixthSenseState] = fast_constructor(SixthSenseState, caches=True)


# The play of each card that has one play only (no 6/9 card, no block).
_SINGLE_PLAYS: tuple[dict[Card, Play], ...] = tuple(
    {card: plays[0] for card, plays in by_card.items() if len(plays) == 1} for by_card in _PLAIN_BY_SEAT
)
_SPECIAL_CARDS = frozenset(card for card in _INTERNED.values() if card.value in (BLOCK, SIX_NINE))
# S-6.1: each seat's play of each 0 blocking each card.
_BLOCKS_BY_SEAT: tuple[dict[Card, dict[Card, Play]], ...] = tuple(
    {card: {target: Play(seat, card, None, target) for target in _INTERNED.values()} for card in _BLOCK_CARDS}
    for seat in range(6)
)


def _plain_plays(seat: int, card: Card) -> tuple[Play, ...]:
    """The non-blocking plays of `card` (both declarations of the 6/9 card, S-6.3)."""
    return _PLAIN_BY_SEAT[seat][card]


def _without(hand: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    index = hand.index(card)
    return hand[:index] + hand[index + 1 :]


def _with_round(state: SixthSenseState, r: Round) -> SixthSenseState:
    return _new_state(
        state.players,
        state.options,
        state.rounds_started,
        state.first_dealer,
        state.totals,
        state.round_points,
        r,
        state.over,
    )


_LED_BY = {colour: (colour, False) for colour in COLOURS}  # `_led` of a trick a card of each colour leads
_NO_LED: tuple[str | None, bool] = (None, False)  # no card played yet: any card may lead


def _led_of(state: SixthSenseState) -> tuple[str | None, bool]:
    """`state._led`, found and kept on the state (which holds a round: a move is owed)."""
    led = _led_colour(state.round.trick)  # type: ignore[union-attr]
    _remember(state, "_led", led)
    return led


# hand sizes -> for each seat, (the sizes after it played a card, whether any card is left)
_SIZES_AFTER_PLAY: dict[tuple[int, ...], tuple[tuple[tuple[int, ...], bool], ...]] = {}


def _sizes_after_play(sizes: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], bool], ...]:
    after = tuple((fewer, any(fewer)) for fewer in (_bump(sizes, seat, -1) for seat in range(len(sizes))))
    if len(_SIZES_AFTER_PLAY) < 10_000:  # the sizes a round goes through: a few hundred
        _SIZES_AFTER_PLAY[sizes] = after
    return after


def _bump(values: tuple[int, ...], index: int, delta: int) -> tuple[int, ...]:
    return (*values[:index], values[index] + delta, *values[index + 1 :])


SIXTH_SENSE = SixthSense()


# --- search support: full-knowledge states from a seat's view -------------------------------


def unseen_cards(view: SixthSenseState, seat: int) -> tuple[Card, ...]:
    """The cards `seat` cannot place from its view, in deck order: the other hands, the other seats'
    hidden prediction cards, a trump not yet turned (S-8.3) and the stock. What a search samples
    `determinize`'s hidden cards from (the seat's own knowledge, e.g. a peek, narrows it further)."""
    r = view.round
    if r is None:
        return ()
    seen: set[Card] = set(r.played)
    for hand in r.hands:
        seen.update(hand or ())
    seen.update(card for card in r.predictions if card is not None)
    if r.trump is not None:
        seen.add(r.trump)
    return tuple(card for card in deck_for(view.players) if card not in seen)


def determinize(
    view: SixthSenseState,
    seat: int,
    hands: Mapping[int, Sequence[Card]],
    predictions: Mapping[int, Card] | None = None,
    trump: Card | None = None,
) -> SixthSenseState:
    """The full-knowledge state that `view` (what `seat` knows) becomes once its hidden cards are
    assigned: `hands[s]` for every seat whose hand the view lacks (exactly `hand_sizes[s]` cards),
    `predictions[s]` for every seat that has predicted without the view knowing its card (S-3.4),
    and `trump` when the view has not seen it turned (S-8.3 late trump), else None. A hand holds
    no card of a colour its seat has shown it lacks (`Round.voids`, S-4.2).

    For a search (information-set Monte Carlo): sample the assignment from `unseen_cards`, then
    play on the result with `legal_moves` / `apply` like any state. Every assigned card must be
    unseen by `seat`, none twice; FormatError names what is wrong. Cheap: one new round."""
    r = view.round
    if r is None or r.points is not None:
        if hands or predictions or trump is not None:
            raise FormatError("determinize: no round is being played, so nothing is hidden")
        return view
    predictions = predictions or {}
    hidden_hands = {s for s, hand in enumerate(r.hands) if hand is None}
    hidden_predictions = {s for s in range(view.players) if r.predicted[s] and r.predictions[s] is None}
    if set(hands) != hidden_hands:
        raise FormatError(f"determinize: hands are needed for seats {sorted(hidden_hands)}, not {sorted(hands)}")
    if set(predictions) != hidden_predictions:
        wanted, given = sorted(hidden_predictions), sorted(predictions)
        raise FormatError(f"determinize: prediction cards are needed for seats {wanted}, not {given}")
    trump_hidden = r.trump is None and view.options.late_trump and not view.options.beginner
    if (trump is not None) != trump_hidden:
        raise FormatError("determinize: a trump card is given exactly when the view has not seen it (S-8.3)")
    assigned: list[Card] = [card for s in sorted(hands) for card in hands[s]]
    assigned.extend(predictions[s] for s in sorted(predictions))
    if trump is not None:
        assigned.append(trump)
    unseen = set(unseen_cards(view, seat))
    if len(set(assigned)) != len(assigned) or not unseen.issuperset(assigned):
        bad = sorted({c.code for c in assigned if c not in unseen or assigned.count(c) > 1})
        raise FormatError(f"determinize: cards seen by seat {seat} or assigned twice: {', '.join(bad)}")
    for s, hand in hands.items():
        if len(hand) != r.hand_sizes[s]:
            raise FormatError(f"determinize: seat {s} holds {r.hand_sizes[s]} cards, not {len(hand)}")
        lacking = [card.code for card in hand if card.colour in r.voids[s]]
        if lacking:  # S-4.2: the seat has shown it holds no card of these colours
            raise FormatError(f"determinize: seat {s} showed it lacks the colour of {', '.join(lacking)}")
    full_hands = tuple(_sorted_hand(hands[s]) if h is None else h for s, h in enumerate(r.hands))
    full_predictions = tuple(predictions.get(s, p) for s, p in enumerate(r.predictions))
    return _with_round(view, _new_round(
        r.dealer, full_hands, r.hand_sizes, r.trump if trump is None else trump, r.predicted, full_predictions,
        r.leader, r.trick, r.trick_winners, r.tricks, r.split_owed, r.voids, r.played, r.peeks, r.points,
    ))
