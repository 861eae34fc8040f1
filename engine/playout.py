"""Playing whole games locally: dealing from a seeded shuffle and looping until the game ends.

Used by local games, bots' self-play, tests, benchmarks and the example records. The only
randomness is the `random.Random` passed in (the engine never seeds itself).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from engine.api import Game
from engine.record import GameRecord, record_from_moves

T = TypeVar("T")

# chooser(state, seat) -> move; it receives the full state and decides what to show its player.
Chooser = Callable[[Any, int], Any]


def shuffled_deal(game: Game[Any, Any, Any, Any], state: Any, rng: random.Random) -> Any:
    """The next round's deal from a shuffle drawn from `rng` (first dealer drawn too, S-2.5)."""
    dealer = game.expected_dealer(state)
    if dealer is None:
        dealer = rng.randrange(game.players(state))
    return game.deal_shuffled(state, dealer, rng)


def _shuffle_inline(cards: list[Any], rng: random.Random, keep: int) -> None:
    """`rng.shuffle(cards)` itself (Fisher–Yates over `random.Random._randbelow_with_getrandbits`):
    the same draws in the same order, so the same deal and the same generator state after it, without
    two Python calls per card. Positions from `keep` on are final once drawn and never read again, so
    they are left as they are: only the card drawn into a lower position moves."""
    getrandbits = rng.getrandbits
    upper, lower = _steps(len(cards), keep)
    for positions, bits in upper:  # position i draws from 0 … i, with as many bits as i + 1 has
        for i in positions:
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            cards[j] = cards[i]
    for positions, bits in lower:
        for i in positions:
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            cards[i], cards[j] = cards[j], cards[i]


Steps = tuple[tuple[range, int], ...]
_STEPS: dict[tuple[int, int], tuple[Steps, Steps]] = {}


def _steps(size: int, keep: int) -> tuple[Steps, Steps]:
    """The Fisher–Yates steps of a shuffle of `size` items, from the last position down to 1, as
    runs of positions drawn with the same number of random bits: first the positions from `keep`
    on, then those below."""
    steps = _STEPS.get((size, keep))
    if steps is None:
        cut = max(keep, 1)
        runs: tuple[list[tuple[range, int]], list[tuple[range, int]]] = ([], [])
        for i in range(size - 1, 0, -1):
            part = runs[i < cut]
            bits = (i + 1).bit_length()
            if part and part[-1][1] == bits:
                part[-1] = (range(part[-1][0].start, i - 1, -1), bits)
            else:
                part.append((range(i, i - 1, -1), bits))
        steps = tuple(runs[0]), tuple(runs[1])
        if size <= 1000:  # the decks of the games, not every list a caller might shuffle
            _STEPS[size, keep] = steps
    return steps


def _same_as_library() -> bool:
    """Whether `_shuffle_inline` gives exactly `random.Random.shuffle`'s results on this Python."""
    for seed in range(40):
        size = (56, 70, 104)[seed % 3] if seed >= 20 else seed * 7  # the decks, and lists of many sizes
        ours, theirs = list(range(size)), list(range(size))
        mine, library = random.Random(seed), random.Random(seed)
        _shuffle_inline(ours, mine, size)
        library.shuffle(theirs)
        if ours != theirs or mine.getstate() != library.getstate():
            return False
    return True


_INLINE_SHUFFLE_OK = _same_as_library()


def shuffle(cards: list[Any], rng: random.Random, keep: int | None = None) -> None:
    """Shuffle `cards` in place exactly as `rng.shuffle(cards)` does (same result, same `rng` state
    after), faster where that can be done: seeded deals, records and tests depend on the result.
    With `keep`, only the first `keep` positions are needed: they hold what `rng.shuffle` gives
    them, the others are left in an unspecified order (a deal that uses part of its deck)."""
    if _INLINE_SHUFFLE_OK and type(rng) is random.Random:
        _shuffle_inline(cards, rng, len(cards) if keep is None else keep)
    else:  # another generator, or a Python whose shuffle draws differently
        rng.shuffle(cards)


def _choice_inline(seq: Sequence[T], rng: random.Random) -> T:
    """`rng.choice(seq)` itself (`random.Random._randbelow_with_getrandbits`): the same draws, so
    the same element and the same generator state after it, without two Python calls."""
    size = len(seq)
    if not size:
        raise IndexError("Cannot choose from an empty sequence")
    bits = size.bit_length()
    index = rng.getrandbits(bits)
    while index >= size:
        index = rng.getrandbits(bits)
    return seq[index]


def _choice_same_as_library() -> bool:
    """Whether `_choice_inline` gives exactly `random.Random.choice`'s results on this Python."""
    for seed in range(20):
        mine, library = random.Random(seed), random.Random(seed)
        for size in (1, 2, 3, 5, 8, 13, 14, 33, 64, 100):
            items = range(size)
            if _choice_inline(items, mine) != library.choice(items) or mine.getstate() != library.getstate():
                return False
    return True


_INLINE_CHOICE_OK = _choice_same_as_library()


def choice(seq: Sequence[T], rng: random.Random) -> T:
    """`rng.choice(seq)` exactly (same element, same `rng` state after: seeded playouts depend on
    it), cheaper where that can be done (a random playout draws one per move)."""
    if _INLINE_CHOICE_OK and type(rng) is random.Random:
        return _choice_inline(seq, rng)
    return rng.choice(seq)


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
