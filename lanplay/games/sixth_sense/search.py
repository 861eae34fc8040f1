"""6th Sense for the expert bot: worlds, candidates, playouts and scores.

A world deals the cards this seat has not seen (S-2.3/S-2.4: other hands, other prediction
cards, the stock, a trump not yet turned with late trump S-8.3) so that no seat holds a colour it
has shown it lacks (S-4.2, `Round.voids`), and a prediction seen by a peek (S-6.4) stays what it
was. A hidden prediction card is chosen like a player would: of a few cards from the unseen ones,
the one nearest to what the seat's whole holding (its hand now and the cards it has played) is
expected to take. The prediction candidates are the cards the heuristic rates nearest; the search
then plays each out and keeps the one whose playouts score best (S-7.2/S-7.3).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from engine.sixth_sense import (
    BEGINNER_POINTS,
    SIXTH_SENSE,
    Card,
    Play,
    Predict,
    Round,
    SixthSenseState,
    deck_for,
    round_score,
)
from lanplay.bots.expert import deal_hidden
from lanplay.games.sixth_sense.bot import (
    SixthSenseBot,
    card_strength,
    expected_tricks,
    prediction_distance,
    visible_trump,
)

PREDICTION_CANDIDATES = 4  # predictions searched: the heuristic's nearest ones
# The prediction (once a round, S-3.1) decides most of a round's hit and its playouts are whole
# rounds: it may take this many times the time budget (0.45 s at the default 0.25 s, within the
# expert's 0.5 s goal; 0.09 s at normal's 0.05 s), so that its candidates get about 2.7 times the
# worlds they got with 6 candidates at 1 budget.
PREDICTION_BUDGET_SHARE = 1.8
PREDICTION_DRAWS = 3  # a hidden prediction: the best of this many unseen cards for that holding
NOISE = 0.05  # share of random moves in the playouts
HIT_BONUS = 10.0  # a hit is worth more than its points: hitting often is what wins games (tuned by bench_bots)


def plays_by_seat(r: Round, players: int) -> list[list[Card]]:
    """The cards each seat has played this round, rebuilt from the public order of play (S-4.6:
    the winner leads the next trick; S-6.1: after a trick nobody won, the same leader again)."""
    out: list[list[Card]] = [[] for _ in range(players)]
    leader = (r.dealer + 1) % players  # S-2.5
    done = len(r.trick_winners)
    for trick in range(done):
        for offset, card in enumerate(r.played[trick * players : (trick + 1) * players]):
            out[(leader + offset) % players].append(card)
        winner = r.trick_winners[trick]
        if winner is not None:
            leader = winner
    for play in r.trick:
        out[play.seat].append(play.card)
    return out


class SixthSenseSearcher:
    confidence = 1.0  # the prediction and early plays get few worlds: noise must not overrule the heuristic
    def __init__(self) -> None:
        self.heuristic = SixthSenseBot(0)

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        if not isinstance(moves[0], Predict):
            return moves
        r = view.round
        trump = visible_trump(view)

        def cost(move: Predict) -> tuple[float, float, int]:
            assert move.card is not None
            rest = tuple(c for c in (r.hands[seat] or ()) if c is not move.card)
            estimate = expected_tricks(rest, trump, view.players)
            return prediction_distance(move.card, estimate), card_strength(move.card, trump), moves.index(move)

        return tuple(sorted(moves, key=cost)[:PREDICTION_CANDIDATES])

    def budget_share(self, moves: tuple[Any, ...]) -> float:
        return PREDICTION_BUDGET_SHARE if isinstance(moves[0], Predict) else 1.0

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        self.heuristic.rng = rng
        return self.heuristic.choose(SIXTH_SENSE, view, seat)

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        state: SixthSenseState = view
        r = state.round
        assert r is not None
        n = state.players
        # Only what this seat may know is read: its hand, its prediction, the predictions it peeked
        # (S-6.4), the cards played, the trump once turned.
        peeked = {peek.target for peek in r.peeks if peek.peeker == seat}
        known_predictions = {s: r.predictions[s] for s in sorted({seat} | peeked)}
        known: set[Card] = set(r.hands[seat] or ())
        known.update(r.played)
        known.update(p for p in known_predictions.values() if p is not None)
        trump_known = not state.options.beginner and not (state.options.late_trump and not all(r.predicted))
        if trump_known and r.trump is not None:
            known.add(r.trump)
        pool = [card for card in deck_for(n) if card not in known]
        others = [s for s in range(n) if s != seat]
        sizes = [r.hand_sizes[s] for s in others]
        allowed = [_lacking(r.voids[s]) for s in others]
        dealt, rest = deal_hidden(pool, sizes, allowed, rng)
        hands: list[tuple[Card, ...] | None] = [None] * n
        hands[seat] = r.hands[seat]
        for s, hand in zip(others, dealt, strict=True):
            hands[s] = tuple(hand)
        trump_card = r.trump if trump_known else None
        if not trump_known and not state.options.beginner:  # S-8.3: the trump is still face down
            trump_card = rest.pop(rng.randrange(len(rest)))
        trump = trump_card.colour if trump_card is not None and not state.options.beginner else None
        predictions: list[Card | None] = [known_predictions.get(s) for s in range(n)]
        played = plays_by_seat(r, n)
        for s in others:
            if r.predicted[s] and predictions[s] is None:
                holding = (*hands[s], *played[s])  # type: ignore[misc]
                estimate = expected_tricks(holding, trump, n)
                draws = [rng.randrange(len(rest)) for _ in range(PREDICTION_DRAWS)]
                pick = min(draws, key=lambda i: prediction_distance(rest[i], estimate))
                predictions[s] = rest.pop(pick)
        world = replace(state, round=replace(r, hands=tuple(hands), predictions=tuple(predictions), trump=trump_card))
        for s in others:
            # S-3.1: predictions are simultaneous, so a seat still to predict does so without seeing
            # ours: once per world, not once per candidate
            if not r.predicted[s]:
                world = SIXTH_SENSE.apply(world, self.policy(world, s, rng))
        return world

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        if rng.random() < NOISE:
            return rng.choice(SIXTH_SENSE.legal_moves(state, seat))
        self.heuristic.rng = rng  # the heuristic reads only its own seat's hand and prediction
        return self.heuristic.choose(SIXTH_SENSE, state, seat)

    def finished(self, state: Any) -> bool:
        r = state.round
        return bool(state.over or r is None or r.points is not None)

    def utility(self, state: Any, seat: int) -> float:
        r = state.round
        assert r is not None
        prediction = r.predictions[seat]
        assert prediction is not None
        points = round_score(prediction, r.tricks[seat], state.options.beginner)
        hit = round_score(prediction, r.tricks[seat], True) == BEGINNER_POINTS[0]  # distance 0 (S-8.1)
        return points + HIT_BONUS * hit


def _lacking(voids: frozenset[str]) -> Any:
    if not voids:
        return None
    return lambda card: card.colour not in voids


__all__ = ["Play", "SixthSenseSearcher", "plays_by_seat"]
