"""Shuffling exactly as `random.Random.shuffle` does, faster: every deal of every game (`Game.deal_shuffled`,
`engine.playout.shuffled_deal`) shuffles here, so seeded deals, records and tests depend on its result.
Imports nothing of the engine, so the rules and the playout loop can both use it.
"""

from __future__ import annotations

import random
from typing import Any


def _shuffle_inline(cards: list[Any], rng: random.Random, keep: int) -> None:
    """`rng.shuffle(cards)` itself (Fisher–Yates over `random.Random._randbelow_with_getrandbits`):
    the same draws in the same order, so the same deal and the same generator state after it, without
    two Python calls per card. Positions from `keep` on are final once drawn and never read again, so
    they are left as they are: only the card drawn into a lower position moves."""
    getrandbits = rng.getrandbits
    upper, lower = _STEPS.get((len(cards), keep)) or _steps(len(cards), keep)  # made once per deck and deal
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
