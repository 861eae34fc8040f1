"""A heuristic 6th Sense player: predicts from its hand and the trump, then plays to hit it.

It decides from its own seat's view only (`Game.view`), as a real peer would.
"""

from __future__ import annotations

import math
import random
from typing import Any

from engine.api import Game
from engine.sixth_sense import (
    DOUBLE,
    SIX_NINE,
    Card,
    Play,
    Predict,
    SixthSenseState,
    Split,
    trick_winner,
)


def card_strength(card: Card, trump: str | None) -> float:
    """Rough chance that this card wins a trick on its own (tuned by self-play, not exact)."""
    if trump is not None and card.colour == trump:
        return 0.95 if card.value >= 11 else 0.75 if card.value >= 7 else 0.45
    if card.value >= 14:
        return 0.55
    if card.value >= 13:
        return 0.4
    if card.value >= DOUBLE:
        return 0.3
    if card.value >= 10:
        return 0.15
    return 0.03


def expected_tricks(hand: tuple[Card, ...], trump: str | None, players: int) -> float:
    base: float = sum(card_strength(card, trump) for card in hand)
    return base * math.sqrt(4 / players)  # more players: every card faces more rivals


def prediction_distance(card: Card, tricks: float) -> float:
    if card.value == SIX_NINE:
        return min(abs(tricks - 6), abs(tricks - 9))
    return abs(tricks - card.value)


def visible_trump(state: SixthSenseState) -> str | None:
    """The trump colour as far as every seat knows it: none with beginner (S-8.1), none yet while
    a late trump is still face down (S-8.3)."""
    r = state.round
    if r is None or state.options.beginner or (state.options.late_trump and not all(r.predicted)):
        return None
    return r.trump.colour if r.trump is not None else None


class SixthSenseBot:
    name = "heuristic"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game[Any, Any, Any, Any], view: Any, seat: int) -> Any:
        state: SixthSenseState = view
        moves = game.legal_moves(state, seat)
        r = state.round
        assert r is not None and moves
        trump = visible_trump(state)
        first = moves[0]
        if isinstance(first, Predict):
            return self._predict(state, moves, trump)
        if isinstance(first, Split):
            target = self._target(state, seat)
            return Split(seat, r.tricks[seat] + 1 < target)
        return self._play(state, seat, moves, trump)

    def _predict(self, state: SixthSenseState, moves: tuple[Any, ...], trump: str | None) -> Any:
        r = state.round
        assert r is not None

        def cost(move: Predict) -> tuple[float, float]:
            assert move.card is not None
            rest = tuple(c for c in (r.hands[move.seat] or ()) if c is not move.card)
            estimate = expected_tricks(rest, trump, state.players)
            # ties: give up the card that would have won least
            return prediction_distance(move.card, estimate), card_strength(move.card, trump)

        return min(moves, key=cost)

    def _target(self, state: SixthSenseState, seat: int) -> int:
        r = state.round
        assert r is not None
        prediction = r.predictions[seat]
        if prediction is None:
            return 0
        if prediction.value == SIX_NINE:
            return 6 if r.tricks[seat] <= 6 else 9
        return prediction.value

    def _play(self, state: SixthSenseState, seat: int, moves: tuple[Any, ...], trump: str | None) -> Any:
        r = state.round
        assert r is not None
        want_more = r.tricks[seat] < self._target(state, seat)
        last_to_play = len(r.trick) == state.players - 1
        plain = [m for m in moves if isinstance(m, Play) and m.block is None] or list(moves)

        def power(move: Play) -> float:
            bonus = 100 if trump is not None and move.card.colour == trump else 0
            return bonus + move.value

        def wins_now(move: Play) -> bool:
            if not r.trick:
                return card_strength(move.card, trump) >= 0.4
            winner, _, _ = trick_winner((*r.trick, move), trump)
            return winner == seat

        winning = [m for m in plain if wins_now(m)]
        losing = [m for m in plain if m not in winning]
        if want_more:
            if winning:
                return min(winning, key=power) if last_to_play else max(winning, key=power)
            return min(plain, key=power)
        if losing:
            return max(losing, key=power)
        blocks = [m for m in moves if isinstance(m, Play) and m.block is not None]
        if blocks:  # a 0 that blocks the winning card may save us a trick we do not want
            return self.rng.choice(blocks)
        return min(plain, key=power)
