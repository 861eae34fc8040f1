"""Sixes for the expert bot: worlds, playouts and scores.

The other hands are dealt from the cards neither on the table nor in this seat's hand, and a
seat never gets a card it has shown it lacks: a pass proves it held none of the cards playable
then (X-2.4, `SixesRound.lacks`). A world's round is played out until somebody goes out (X-2.5);
it is worth 1 to the seat that went out, 0 to the others (a small reward per card shed made it
shed cards instead of holding blockers, and win fewer rounds: bench_bots).
"""

from __future__ import annotations

import random
from typing import Any

from engine.sixes import DECK, SIXES, SixesRound, SixesState, on_table
from lanplay.bots.expert import deal_hidden
from lanplay.bots.sixes import SixesBot

NOISE = 0.05  # share of random moves in the playouts


class SixesSearcher:
    confidence = 1.0  # as for 6th Sense: measured better than the plain best mean (bench_bots)
    def __init__(self) -> None:
        self.heuristic = SixesBot(0)

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        return moves

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        self.heuristic.rng = rng
        return self.heuristic.choose(SIXES, view, seat)

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        state: SixesState = view
        r = state.round
        assert r is not None
        n = state.players
        mine = set(r.hands[seat] or ())
        pool = [card for card in DECK if card not in mine and not on_table(r.columns, card)]
        others = [s for s in range(n) if s != seat]
        lacks = r.lacks or (frozenset(),) * n
        allowed = [(lambda card, gone=lacks[s]: card not in gone) if lacks[s] else None for s in others]
        dealt, _ = deal_hidden(pool, [r.hand_sizes[s] for s in others], allowed, rng)
        hands: list[tuple[str, ...] | None] = [None] * n
        hands[seat] = r.hands[seat]
        for s, hand in zip(others, dealt, strict=True):
            hands[s] = tuple(hand)
        world = SixesRound(
            r.dealer, tuple(hands), r.hand_sizes, r.columns, r.playable, r.turn, r.opener, r.winner, r.pot_won,
            r.lacks,
        )
        return SixesState(n, state.options, state.rounds_started, state.chips, state.pot, world, state.over)

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        if rng.random() < NOISE:
            return rng.choice(SIXES.legal_moves(state, seat))
        self.heuristic.rng = rng  # the heuristic reads only its own hand and the table
        return self.heuristic.choose(SIXES, state, seat)

    def finished(self, state: Any) -> bool:
        r = state.round
        return bool(r is None or r.winner is not None)

    def utility(self, state: Any, seat: int) -> float:
        r = state.round
        assert r is not None
        return 1.0 if r.winner == seat else 0.0
