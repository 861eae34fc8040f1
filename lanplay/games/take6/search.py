"""6 nimmt! for the expert bot: worlds, playouts and scores.

Outside logic (T-5.2) the other hands are dealt from the cards this seat has not seen (not on the
table this round, not in its hand; the undealt rest of the deck, T-2.1/T-5.1, is among them). A
seat that has already chosen this turn (T-3.1, `HIDDEN`) gets one card more, and its choice is
made from its sampled hand by the playout policy, as it would have chosen without seeing ours.
With logic the hands are public and only those hidden choices are sampled. A world's round is
played out to its end (T-3.6); it is worth minus the bullheads this seat took in it.

The playout policy is the heuristic (`lanplay.games.take6.bot.Take6Bot`) itself, computed on the
world's full state by `FastHeuristic` with what every seat of one turn shares worked out once:
the same choices as the heuristic on each seat's view, several times faster, so more worlds fit
in the time budget.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from dataclasses import replace
from operator import itemgetter
from typing import Any

from engine.take6 import BULLHEADS, HIDDEN, MAX_CARD, ROW_LIMIT, TAKE6, Pick, Play, Take6State, TakeRow
from lanplay.bots.expert import deal_hidden
from lanplay.games.take6.bot import MEAN_BULLHEADS, Take6Bot, _exactly

PICK_CANDIDATES = 6  # cards searched when drafting (logic)

_PLAYS = tuple(tuple(Play(seat, card) for card in range(105)) for seat in range(10))
_TAKES = tuple(tuple(TakeRow(seat, row) for row in range(4)) for seat in range(10))


class FastHeuristic:
    """`Take6Bot.choose(TAKE6, TAKE6.view(state, seat), seat)` for a full-knowledge state.

    Outside logic the heuristic on a seat's view knows its own hand and the table only, so its
    estimate of a card (`Take6Bot.cost`) depends on the rows, the cards out, its hand and the
    number of other seats: the rows' part is computed once per turn (the seats of one turn all
    choose on the same state), the chance of a row filling up once per (gap, unseen, free places).
    Logic (T-5.2) and profi (T-5.3) go to the heuristic itself, through the seat's view.
    """

    def __init__(self) -> None:
        self.heuristic = Take6Bot(0)
        self._state: Take6State | None = None
        self._rows: tuple[tuple[int, ...], ...] = ()
        self._cheapest = 0.0  # T-3.5: the cheapest row's bullheads
        self._base = 0  # cards not on the table this round (a bit per card)
        self._ends: list[int] = []  # the rows' last cards, lowest first
        # per row, in the order of `_ends`: last card, free places, bullheads if taken (as the heuristic)
        self._by_end: list[tuple[int, int, float]] = []
        self._danger: dict[int, float] = {}  # by (cards in the gap, unseen, other seats, free places)

    def _turn(self, state: Take6State) -> None:
        rows = state.rows
        if rows is not self._rows:
            self._rows = rows
            by_end = []
            cheapest = MAX_CARD * 7
            for row in sorted(rows, key=itemgetter(-1)):
                free = ROW_LIMIT - len(row)
                heads = sum(map(BULLHEADS.__getitem__, row))
                cheapest = min(cheapest, heads)
                by_end.append((row[-1], free, heads + free * MEAN_BULLHEADS))
            self._cheapest = float(cheapest)
            # T-3.3: a card follows the row with the highest last card below it
            self._ends = [end for end, _, _ in by_end]
            self._by_end = by_end
        self._base = ((1 << (state.deck_size + 1)) - 2) & ~state.out
        self._state = state

    def choose(self, state: Take6State, seat: int, rng: random.Random) -> Any:
        stage = state.stage
        if stage == "take_row":
            rows = state.rows
            best = min(range(len(rows)), key=lambda r: (sum(BULLHEADS[c] for c in rows[r]), len(rows[r]), r))
            return _TAKES[seat][best]
        if stage != "play" or state.options.logic or state.options.profi:
            self.heuristic.rng = rng
            # through the seat's view: the heuristic must not see the other seats' choices
            return self.heuristic.choose(TAKE6, TAKE6.view(state, seat), seat)
        hand = state.hands[seat]
        assert hand is not None
        if len(hand) == 1:
            return _PLAYS[seat][hand[0]]
        if state is not self._state:
            self._turn(state)
        unseen = self._base
        for card in hand:
            unseen &= ~(1 << card)
        total = unseen.bit_count()
        others = state.players - 1
        ends = self._ends
        by_end = self._by_end
        cheapest = self._cheapest
        danger_of = self._danger
        seat_key = total << 7 | others << 14
        best_cost = math.inf
        best_card = hand[0]
        for card in hand:
            # as Take6Bot.cost: the chance that exactly the free places fill with other cards in the gap
            place = bisect_left(ends, card) - 1
            if place < 0:
                cost = cheapest  # T-3.5
            else:
                low, free, taken = by_end[place]
                if free > others:  # T-3.4: the row cannot fill this turn
                    cost = -0.1 * BULLHEADS[card]
                else:
                    width = card - low - 1
                    between = ((unseen >> (low + 1)) & ((1 << width) - 1)).bit_count() if width > 0 else 0
                    key = seat_key | between | free << 18
                    danger = danger_of.get(key)
                    if danger is None:
                        danger = danger_of[key] = _exactly((between / total if total else 0.0,) * others, free)
                    cost = danger * taken - 0.1 * BULLHEADS[card]
            # the heuristic compares costs rounded to 6 places, the lower card first on a tie
            if cost < best_cost - 1e-5 or (
                cost != best_cost and cost < best_cost + 1e-5 and round(cost, 6) < round(best_cost, 6)
            ):
                best_cost, best_card = cost, card
        return _PLAYS[seat][best_card]


class Take6Searcher:
    confidence = 0.0  # the best mean wins: measured better than gating (bench_bots)

    def __init__(self) -> None:
        self.heuristic = Take6Bot(0)
        self.fast = FastHeuristic()

    def budget_share(self, moves: tuple[Any, ...]) -> float:
        return 1.0

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        if not isinstance(moves[0], Pick) or len(moves) <= PICK_CANDIDATES:
            return moves
        # T-5.2 drafting offers dozens of cards: search the ones the heuristic rates best
        unseen = Take6Bot.unseen(view, seat)
        return tuple(sorted(moves, key=lambda m: (self.heuristic.pick_cost(view, m.card, [], unseen), -m.card)))[
            :PICK_CANDIDATES
        ]

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        self.heuristic.rng = rng
        return self.heuristic.choose(TAKE6, view, seat)

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        state: Take6State = view
        n = state.players
        # the other hands are read only where they are public (logic, T-5.2)
        hands = list(state.hands) if state.options.logic else [state.hands[s] if s == seat else None for s in range(n)]
        hidden = [s != seat and c == HIDDEN for s, c in enumerate(state.chosen)]
        if not state.options.logic:
            unseen = Take6Bot.unseen(state, seat)
            pool = [card for card in range(1, state.deck_size + 1) if unseen >> card & 1]
            others = [s for s in range(n) if s != seat]
            # a seat whose choice is hidden still holds the chosen card in this world
            sizes = [state.hand_sizes[s] + hidden[s] for s in others]
            dealt, _ = deal_hidden(pool, sizes, [None] * len(others), rng)
            for s, hand in zip(others, dealt, strict=True):
                hands[s] = tuple(sorted(hand))
        # Hidden choices are taken back into the hand and made again in this world (logic: the
        # view's public hand already holds the card again, T-5.2).
        world = replace(
            state,
            hands=tuple(hands),
            chosen=tuple(None if hidden[s] else c for s, c in enumerate(state.chosen)),
            hand_sizes=tuple(size + hidden[s] for s, size in enumerate(state.hand_sizes)),
        )
        if world.stage == "play":
            # T-3.1: the choices are simultaneous, so the other seats choose without seeing ours:
            # once per world, not once per candidate
            for s in range(n):
                if s != seat and world.chosen[s] is None:
                    world = TAKE6.apply(world, self.policy(world, s, rng))
        return world

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        # No random moves: the heuristic is exactly the model of every seat (5 % noise measured no better).
        return self.fast.choose(state, seat, rng)

    def finished(self, state: Any) -> bool:
        return bool(state.stage in ("deal", "over"))

    def utility(self, state: Any, seat: int) -> float:
        return -float(state.penalty[seat])
