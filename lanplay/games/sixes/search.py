"""Sixes for the expert bot: worlds, playouts and scores.

The other hands are dealt from the cards neither on the table nor in this seat's hand, and a
seat never gets a card it has shown it lacks: a pass proves it held none of the cards playable
then (X-2.4, `SixesRound.lacks`).

The plays say more than the passes. Every card played is public (`SixesRound.history`), so in a
world every earlier decision of another seat can be replayed: its hand then was its hand in the
world plus the cards it has played since. A seat that plays like the table's heuristic (hold
the blockers, release the cards that lead to its own, X-2.3) would have made its choices far
more likely with some hands than with others. The worlds are therefore drawn by a Markov chain
(Metropolis: swap one card between two other hands, keep the swap with the ratio of the
likelihoods) whose worlds come in proportion to how well they explain the choices seen, each
choice explained by the heuristic's move with probability 1 - `SLIP`, by any legal card
with `SLIP` (so a seat that plays otherwise only weakens the inference, never breaks it). A
choice with one legal card says only that the seat had no other (X-2.4: it must play).

Whom a seat plays like is inferred too. Each other seat is, with prior `TYPE_PRIOR`, a seat that
plays like the heuristic (slipping with `SLIP`), else one that plays any legal card; its choices
weigh the two by their likelihoods (`typed_score`: a seat that keeps choosing the heuristic's card
is soon one, a random seat soon random), and in each world a seat's type is drawn from that
posterior: a heuristic seat plays the heuristic in the playouts, a random one random cards.

A world's round is played out until somebody goes out (X-2.5), and it is worth the **chips** it
brings this seat: the pot if it went out first, minus the chips it paid for passing (X-2.4). That
is what the game is played for, and it rewards holding back: a card held that another seat needs
makes that seat pass and pay into the pot (measured: more chips a round than scoring a win as 1,
with about the same share of rounds won; docs/BOTS.md).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.sixes import DECK, SIXES, Card, SixesRound, SixesState, on_table, opened_by
from lanplay.bots.expert import deal_hidden
from lanplay.games.sixes.bot import SixesBot, move_score

SLIP = 0.02  # probability that a heuristic-like seat's choice is not the heuristic's (the inference's softness)
TYPE_PRIOR = 0.8  # prior probability that another seat plays like the heuristic (else: any legal card)
BURN_IN = 200  # chain steps before the first world of a decision
STEPS = 16  # chain steps between two worlds (fewer, more nearly independent worlds: docs/BOTS.md)


@dataclass(frozen=True, slots=True)
class Choice:
    """One earlier play of another seat, as a world replays it."""

    card: Card  # what it played
    playable: frozenset[Card]  # what was playable then
    later: frozenset[Card]  # the cards it played from then on: in its hand then, gone now


def choices_by_seat(r: SixesRound, players: int) -> list[list[Choice]]:
    """Per seat, its plays of this round (after the forced O6, X-2.2), from `r.history`."""
    playable: frozenset[Card] = frozenset(card for card in DECK if card[1] == "6")  # the sixes
    steps: list[tuple[int, Card, frozenset[Card]]] = []
    for index, (mover, card) in enumerate(r.history):
        if card is None:
            continue
        if index:
            steps.append((mover, card, playable))
        playable = (playable - {card}) | opened_by(card)
    out: list[list[Choice]] = [[] for _ in range(players)]
    later: list[frozenset[Card]] = [frozenset()] * players
    for mover, card, then in reversed(steps):
        later[mover] = later[mover] | {card}
        out[mover].append(Choice(card, then, later[mover]))
    return out


def log_likelihood(hand: frozenset[Card], choices: Sequence[Choice]) -> float:
    """How well a seat holding `hand` now explains its `choices` (log-probability, see the module
    docstring), whichever type the seat is."""
    return typed_score(log_likelihoods(hand, choices))


def log_likelihoods(hand: frozenset[Card], choices: Sequence[Choice], slip: float = SLIP) -> tuple[float, float]:
    """(log-probability of `choices` from a seat holding `hand` now that plays like the heuristic but
    for `slip`, the same for a seat that plays any legal card)."""
    total = 0.0
    uniform = 0.0
    for choice in choices:
        then = hand | choice.later
        legal = then & choice.playable
        if len(legal) == 1:
            continue  # forced: nothing to explain
        scores = {card: move_score(card, then - {card}, choice.playable) for card in legal}
        best = max(scores.values())
        ties = sum(1 for s in scores.values() if s == best)
        chosen = (1.0 - slip) / ties if scores[choice.card] == best else 0.0
        total += math.log(chosen + slip / len(legal))
        uniform -= math.log(len(legal))
    return total, uniform


def typed_score(pair: tuple[float, float]) -> float:
    """The log-likelihood of a seat's choices over both types: `pair` from `log_likelihoods`."""
    heuristic, uniform = pair
    m = max(heuristic, uniform)
    return m + math.log(TYPE_PRIOR * math.exp(heuristic - m) + (1.0 - TYPE_PRIOR) * math.exp(uniform - m))


def heuristic_chance(pair: tuple[float, float]) -> float:
    """The posterior probability that the seat plays like the heuristic."""
    d = (math.log(1.0 - TYPE_PRIOR) + pair[1]) - (math.log(TYPE_PRIOR) + pair[0])
    return 1.0 / (1.0 + math.exp(d)) if d < 700 else 0.0


class _Chain:
    """The Metropolis chain of one decision: the other hands, their log-likelihoods."""

    def __init__(self, hands: dict[int, list[Card]], lacks: Sequence[frozenset[Card]], choices: list[list[Choice]]):
        self.hands = hands
        self.lacks = lacks
        self.choices = choices
        self.seats = [s for s, hand in hands.items() if hand]
        self.known: dict[tuple[int, frozenset[Card]], float] = {}  # a chain often returns to a hand
        self.pairs: dict[tuple[int, frozenset[Card]], tuple[float, float]] = {}
        self.score = {s: self.explains(s, hand) for s, hand in hands.items()}

    def explains(self, seat: int, hand: list[Card]) -> float:
        key = (seat, frozenset(hand))
        score = self.known.get(key)
        if score is None:
            pair = self.pairs[key] = log_likelihoods(key[1], self.choices[seat])
            score = self.known[key] = typed_score(pair)
        return score

    def heuristic_chance(self, seat: int) -> float:
        """How likely the seat plays like the heuristic, given its hand in the chain's world."""
        return heuristic_chance(self.pairs[(seat, frozenset(self.hands[seat]))])

    def step(self, rng: random.Random) -> None:
        if len(self.seats) < 2:
            return
        s, t = rng.sample(self.seats, 2)
        hs, ht = self.hands[s], self.hands[t]
        i, j = rng.randrange(len(hs)), rng.randrange(len(ht))
        a, b = hs[i], ht[j]
        if b in self.lacks[s] or a in self.lacks[t]:
            return
        new_s, new_t = [*hs[:i], b, *hs[i + 1 :]], [*ht[:j], a, *ht[j + 1 :]]
        score_s, score_t = self.explains(s, new_s), self.explains(t, new_t)
        delta = score_s + score_t - self.score[s] - self.score[t]
        if delta >= 0 or rng.random() < math.exp(delta):
            self.hands[s], self.hands[t] = new_s, new_t
            self.score[s], self.score[t] = score_s, score_t


class SixesSearcher:
    confidence = 0.0  # the best mean of chips wins (docs/BOTS.md)

    def __init__(self) -> None:
        self._base_chips: tuple[int, ...] = ()  # the chips of the decision's view (the world's start)
        self._random_seats: frozenset[int] = frozenset()  # seats of this world that play any legal card
        self.heuristic = SixesBot(0)
        # The chain of the decision being searched, known by its view and its random numbers (by
        # identity): every decision draws a fresh `decision_rng`, so each starts a new chain, and
        # the same seed and view give the same worlds.
        self._chain: _Chain | None = None
        self._chain_of: tuple[Any, random.Random] | None = None

    def budget_share(self, moves: tuple[Any, ...]) -> float:
        return 1.0

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        return moves

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        self._base_chips = view.chips  # every world of this decision starts with them
        self.heuristic.rng = rng
        return self.heuristic.choose(SIXES, view, seat)

    def _start(self, state: SixesState, seat: int, rng: random.Random) -> _Chain:
        r = state.round
        assert r is not None
        n = state.players
        mine = set(r.hands[seat] or ())
        pool = [card for card in DECK if card not in mine and not on_table(r.columns, card)]
        others = [s for s in range(n) if s != seat]
        lacks = r.lacks or (frozenset(),) * n
        allowed = [(lambda card, gone=lacks[s]: card not in gone) if lacks[s] else None for s in others]
        dealt, _ = deal_hidden(pool, [r.hand_sizes[s] for s in others], allowed, rng)
        chain = _Chain(dict(zip(others, dealt, strict=True)), lacks, choices_by_seat(r, n))
        for _ in range(BURN_IN):
            chain.step(rng)
        return chain

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        state: SixesState = view
        r = state.round
        assert r is not None
        of = self._chain_of
        if self._chain is None or of is None or of[0] is not view or of[1] is not rng:
            self._chain, self._chain_of = self._start(state, seat, rng), (view, rng)
        else:
            for _ in range(STEPS):
                self._chain.step(rng)
        self._base_chips = state.chips
        chain = self._chain
        # each other seat's type in this world, drawn from its posterior
        self._random_seats = frozenset(s for s in chain.hands if rng.random() >= chain.heuristic_chance(s))
        hands: list[tuple[str, ...] | None] = [None] * state.players
        hands[seat] = r.hands[seat]
        for s, hand in self._chain.hands.items():
            hands[s] = tuple(hand)
        world = SixesRound(
            r.dealer, tuple(hands), r.hand_sizes, r.columns, r.playable, r.turn, r.opener, r.winner, r.pot_won,
            r.lacks, r.history,
        )
        return SixesState(state.players, state.options, state.rounds_started, state.chips, state.pot, world, state.over)

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        if seat in self._random_seats:
            return rng.choice(SIXES.legal_moves(state, seat))
        self.heuristic.rng = rng  # the heuristic reads only its own hand and the table
        return self.heuristic.choose(SIXES, state, seat)

    def finished(self, state: Any) -> bool:
        r = state.round
        return bool(r is None or r.winner is not None)

    def utility(self, state: Any, seat: int) -> float:
        r = state.round
        assert r is not None
        return float(state.chips[seat] - self._base_chips[seat])  # the pot won, the passes paid
