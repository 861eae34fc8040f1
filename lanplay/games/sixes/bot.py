"""A heuristic Sixes player: hold the cards that keep others locked out, release the ones that lead
to its own cards.

Every card of a suit beyond a column's end waits for the card at that end (X-2.3). So for each
playable card the bot looks at the cards that playing it would (eventually) free, in the direction
the card extends its column (both ways for a 6):

* its own cards there are progress: playing the card is the only way to reach them;
* the other cards there are gifts to the other players, chiefly those before its own next card
  there (they become playable for others right away or soon); once its own card is the next one,
  the suit stays locked for everyone else.

A card with nothing of its own beyond it (a blocker) is held as long as any other play exists;
an A or K frees nothing and is a safe play that keeps every block in place.
"""

from __future__ import annotations

import random
from collections.abc import Set
from typing import Any

from engine.api import Game
from engine.sixes import DECK, RANK_OF, SIX, SixesState, cards_beyond, opened_by

OWN_CARD = 4.0  # each own card beyond the played one (reachable only through it)
OWN_NEXT = 1.0  # the very next card is own: the suit stays locked for the others
GIFT_NEAR = 0.5  # each other card freed before the bot's own next card in that direction
GIFT_FAR = 0.1  # each other card further on
MOBILITY = 0.5  # each own card playable right after this play (fewer passes next turn)


def _compute_chains(card: str) -> tuple[tuple[str, ...], ...]:
    beyond = cards_beyond(card)
    if RANK_OF[card] == SIX:  # a 6 opens both ways: below (5..A) then above (7..K)
        return (beyond[:SIX], beyond[SIX:])
    return (beyond,)


_CHAINS = {card: tuple(chain for chain in _compute_chains(card) if chain) for card in DECK}


def play_score(card: str, mine: Set[str]) -> float:
    """How good it is to play `card` now while holding `mine` (higher is better)."""
    score = 0.0
    for chain in _CHAINS[card]:
        if chain[0] in mine:
            score += OWN_NEXT
        seen_own = False
        for later in chain:
            if later in mine:
                score += OWN_CARD
                seen_own = True
            else:
                score -= GIFT_FAR if seen_own else GIFT_NEAR
    return score


def move_score(card: str, rest: Set[str], ends: Set[str]) -> float:
    """The heuristic's rating of playing `card` while keeping `rest`, with `ends` playable now."""
    return play_score(card, rest) + MOBILITY * (len(rest & ends) + len(rest & opened_by(card)))


class SixesBot:
    """Heuristic Sixes bot (see module docstring); ties are broken by its own seeded rng."""

    name = "heuristic"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game[Any, Any, Any, Any], view: Any, seat: int) -> Any:
        moves = game.legal_moves(view, seat)
        if len(moves) == 1:
            return moves[0]
        assert isinstance(view, SixesState) and view.round is not None
        hand = view.round.hands[seat]
        mine = frozenset(hand or ())
        ends = view.round.playable
        best: list[Any] = []
        best_score = float("-inf")
        for move in moves:
            score = move_score(move.card, mine - {move.card}, ends)
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return best[0] if len(best) == 1 else self.rng.choice(best)
