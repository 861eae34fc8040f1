"""6 nimmt! for the expert bot: worlds, playouts and scores.

Outside logic (T-5.2) the other hands are dealt from the cards this seat has not seen (not on the
table this round, not in its hand; the undealt rest of the deck, T-2.1/T-5.1, is among them). A
seat that has already chosen this turn (T-3.1, `HIDDEN`) gets one card more, and its choice is
made from its sampled hand by the playout policy, as it would have chosen without seeing ours.
With logic the hands are public and only those hidden choices are sampled. A world's round is
played out to its end (T-3.6); it is worth minus the bullheads this seat took in it.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from engine.take6 import HIDDEN, TAKE6, Pick, Take6State
from lanplay.bots.expert import deal_hidden
from lanplay.bots.take6 import Take6Bot

NOISE = 0.05  # share of random moves in the playouts
PICK_CANDIDATES = 6  # cards searched when drafting (logic)


class Take6Searcher:
    confidence = 0.0  # the best mean wins: measured better than gating (bench_bots)
    def __init__(self) -> None:
        self.heuristic = Take6Bot(0)

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
        if rng.random() < NOISE:
            return rng.choice(TAKE6.legal_moves(state, seat))
        self.heuristic.rng = rng
        # through the seat's view: the heuristic must not see the other seats' choices
        return self.heuristic.choose(TAKE6, TAKE6.view(state, seat), seat)

    def finished(self, state: Any) -> bool:
        return bool(state.stage in ("deal", "over"))

    def utility(self, state: Any, seat: int) -> float:
        return -float(state.penalty[seat])
