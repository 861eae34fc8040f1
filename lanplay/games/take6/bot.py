"""A heuristic 6 nimmt! player: estimate each card's expected bullheads this turn, play the least.

For a card that fits a row (T-3.3, T-5.3) the danger is being the sixth card (T-3.4): that happens
when exactly the row's free places are filled by other players' cards lower than ours in the same
gap. Each other seat plays one card; where its hand is known (logic, T-5.2) the chance that it lands
in the gap is the share of its hand there, else the share of all unseen cards. A card lower than
every row end (T-3.5) costs the cheapest row. When a row is owed, take the cheapest. In logic
drafting pick the card that is cheapest by the same measure.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from engine.api import Game
from engine.take6 import (
    BULLHEADS,
    HIDDEN,
    ROW_LIMIT,
    Pick,
    Play,
    Take6State,
    TakeRow,
    placement_target,
    row_bullheads,
)

MEAN_BULLHEADS = 171 / 104  # T-1.1


def _between(cards: int, low: int, high: int) -> int:
    """How many of the cards (a bit per card) lie strictly between low and high."""
    width = high - low - 1
    return ((cards >> (low + 1)) & ((1 << width) - 1)).bit_count() if width > 0 else 0


@lru_cache(maxsize=4096)
def _exactly(probabilities: tuple[float, ...], k: int) -> float:
    """P(exactly k of independent events with these probabilities happen)."""
    dist = [1.0]
    for p in probabilities:
        nxt = [0.0] * (len(dist) + 1)
        for count, q in enumerate(dist):
            nxt[count] += q * (1 - p)
            nxt[count + 1] += q * p
        dist = nxt
    return dist[k] if k < len(dist) else 0.0


class Take6Bot:
    name = "heuristic"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game[Any, Any, Any, Any], view: Any, seat: int) -> Any:
        moves = game.legal_moves(view, seat)
        if len(moves) == 1 or not isinstance(view, Take6State):
            return moves[0] if len(moves) == 1 else self.rng.choice(moves)
        first = moves[0]
        if isinstance(first, TakeRow):
            return min(moves, key=lambda m: (row_bullheads(view.rows[m.row]), len(view.rows[m.row]), m.row))
        others = self._other_cards(view, seat)
        unseen = self.unseen(view, seat)
        if isinstance(first, Play):
            return min(moves, key=lambda m: (round(self.cost(view, m.card, others, unseen), 6), m.card))
        if isinstance(first, Pick):
            return min(moves, key=lambda m: (round(self.pick_cost(view, m.card, others, unseen), 6), -m.card))
        return self.rng.choice(moves)

    @staticmethod
    def _other_cards(view: Take6State, seat: int) -> list[Sequence[int] | None]:
        """Per other seat that still plays this turn: its known hand, or None (unseen cards)."""
        result: list[Sequence[int] | None] = []
        for other in range(view.players):
            if other == seat:
                continue
            choice = view.chosen[other]
            if choice is not None and choice != HIDDEN:
                result.append((choice,))
            elif view.stage == "pick" or not view.options.logic:
                result.append(None)  # unknown (T-5.2: hands are public only with logic), or still being drafted
            else:
                hand = view.hands[other]
                result.append(hand if hand else None)
        return result

    @staticmethod
    def unseen(view: Take6State, seat: int) -> int:
        """Cards `seat` has not seen (a bit per card): not on the table, not in a known hand (its
        own; with logic every hand, T-5.2), not played."""
        known = view.out
        for hand in view.hands if view.options.logic else (view.hands[seat],):
            for card in hand or ():
                known |= 1 << card
        for choice in view.chosen:
            if choice:
                known |= 1 << choice
        if view.stage != "pick":
            for card in view.pool:  # unpicked cards are out for the round (T-5.2)
                known |= 1 << card
        return ((1 << (view.deck_size + 1)) - 2) & ~known

    def pick_cost(self, view: Take6State, card: int, others: list[Sequence[int] | None], unseen: int) -> float:
        """How bad a card is to hold for the coming turns (logic drafting): its bullheads first
        (cards we hold tend to end in rows we take), then the unseen cards between it and the
        row end it would follow now."""
        target = placement_target(view.rows, card, view.options.profi)
        if target is None:
            between = unseen.bit_count()
        else:
            row = view.rows[target[0]]
            low, high = (row[-1], card) if target[1] == "right" else (card, row[0])
            between = _between(unseen, low, high)
        return 1000 * BULLHEADS[card] + between

    def cost(self, view: Take6State, card: int, others: list[Sequence[int] | None], unseen: int) -> float:
        """Expected bullheads of playing `card` now."""
        rows = view.rows
        target = placement_target(rows, card, view.options.profi)
        if target is None:  # T-3.5: we will take the cheapest row
            return float(min(row_bullheads(row) for row in rows))
        index, side = target
        row = rows[index]
        low, high = (row[-1], card) if side == "right" else (card, row[0])
        total_unseen = unseen.bit_count()
        unseen_share = _between(unseen, low, high) / total_unseen if total_unseen else 0.0
        probabilities = []
        for hand in others:
            if hand is None:
                probabilities.append(unseen_share)
            elif hand:
                probabilities.append(sum(1 for c in hand if low < c < high) / len(hand))
        free = ROW_LIMIT - len(row)
        danger = _exactly(tuple(probabilities), free)
        taken = row_bullheads(row) + free * MEAN_BULLHEADS
        # rid the hand of costly cards while they are safe (they tend to end in our own rows)
        return danger * taken - 0.1 * BULLHEADS[card]
