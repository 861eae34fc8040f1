"""Playing whole games locally: dealing from a seeded shuffle and looping until the game ends.

Used by local games, bots' self-play, tests, benchmarks and the example records. The only
randomness is the `random.Random` passed in (the engine never seeds itself).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from engine.api import Game
from engine.record import GameRecord, record_from_moves

# chooser(state, seat) -> move; it receives the full state and decides what to show its player.
Chooser = Callable[[Any, int], Any]


def shuffled_deal(game: Game[Any, Any, Any, Any], state: Any, rng: random.Random) -> Any:
    """The next round's deal from a shuffle drawn from `rng` (first dealer drawn too, S-2.5)."""
    dealer = game.expected_dealer(state)
    if dealer is None:
        dealer = rng.randrange(game.players(state))
    return game.deal_shuffled(state, dealer, rng)


def play_game(
    game: Game[Any, Any, Any, Any],
    players: Sequence[str],
    options: Any,
    chooser: Chooser,
    rng: random.Random,
    max_rounds: int | None = None,
) -> tuple[Any, GameRecord]:
    """Play a game to its end (or `max_rounds` rounds) and return the final state and its record.

    Simultaneous choices are all asked of the same state before any is applied, so no seat's
    choice can depend on another's.
    """
    state = game.new_game(len(players), options)
    rounds: list[tuple[Any, list[Any]]] = []
    while True:
        expected = game.expected(state)
        if expected.phase == "over":
            break
        if expected.phase == "deal":
            if max_rounds is not None and len(rounds) >= max_rounds:
                break
            deal = shuffled_deal(game, state, rng)
            state = game.start_round(state, deal)
            rounds.append((deal, []))
            continue
        if expected.phase != "move":
            raise RuntimeError(f"a full-knowledge game cannot be in phase {expected.phase!r}")
        moves = [chooser(state, seat) for seat in expected.seats]
        state = game.apply_moves(state, moves)  # a simultaneous turn's joint action at once
        rounds[-1][1].extend(moves)
    return state, record_from_moves(game, players, options, rounds)


def random_chooser(game: Game[Any, Any, Any, Any], rng: random.Random) -> Chooser:
    def choose(state: Any, seat: int) -> Any:
        return rng.choice(game.legal_moves(state, seat))

    return choose
