"""The expert bots: information-set Monte Carlo search over the cards a seat cannot see.

For each decision the bot samples a *world*: a full-knowledge state that agrees with everything
its view shows (its own hand, the cards seen, what other seats have proved they lack), with the
hidden cards dealt at random among the seats that may hold them. In that world it plays every
candidate move, then plays the round out with fast playout policies (the heuristic bots, with a
little randomness) on the real engine, and scores the end of the round for its seat. Every
candidate is played out once per world with the same random numbers (common random numbers, so
a difference in results is the move's and not the dice's); the move with the best total wins.

What a game contributes is a `Searcher` (its bundle's search.py, lanplay/games/GAME/): how to sample a
world, which moves to search, the playout policy, and what the end of a round is worth. The rules stay
in `engine/`.

Determinism: the search's random numbers come from the bot's seed and the view alone (a digest
of both), and playouts run in whole batches (one world, every candidate), so the result after k
batches is a pure function of (seed, view, k). With a fixed `samples` count (tests, replays)
the move depends on the seed and the view only. With a time budget (live play) only the number
of batches depends on the clock; a bot that resumes after a crash does not decide again what it
had decided: the runner journals every decision as the move chosen and replays that move.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from engine.api import Game

DEFAULT_BUDGET = 0.25  # seconds of search per decision
BUDGET_ENV = "LANPLAY_BOT_BUDGET"
MAX_BATCHES = 100_000  # a bound for a budget the clock never ends (it always does)

AnyGame = Game[Any, Any, Any, Any]
Card = TypeVar("Card")


def budget_from_env(default: float = DEFAULT_BUDGET) -> float:
    """The search time per decision from LANPLAY_BOT_BUDGET (seconds), else `default`."""
    raw = os.environ.get(BUDGET_ENV)
    if raw is None or raw.strip() == "":
        return default
    return parse_budget(raw, BUDGET_ENV)


def parse_budget(raw: str, what: str) -> float:
    try:
        budget = float(raw)
    except ValueError:
        raise ValueError(f"{what}: the bot's time per decision must be a number of seconds, got {raw!r}") from None
    if not 0 < budget <= 60:
        raise ValueError(f"{what}: the bot's time per decision must be more than 0 and at most 60 s, got {raw!r}")
    return budget


class Searcher(Protocol):
    """What one game tells the search."""

    # standard errors by which a move must beat the heuristic's to replace it (`ExpertBot._pick`)
    confidence: float

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        """The moves worth searching (all of `moves`, or the most promising of many)."""
        ...

    def budget_share(self, moves: tuple[Any, ...]) -> float:
        """How many times the time budget this decision may take (1.0 for most; more for a
        decision made once a round that weighs on all the rest, like 6th Sense's prediction)."""
        ...

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        """The move the game's heuristic makes from `view`: kept unless the search finds better."""
        ...

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        """A full-knowledge state consistent with `view`, hidden cards dealt at random."""
        ...

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A fast playout move for `seat` in the full state, using only what `seat` could know."""
        ...

    def finished(self, state: Any) -> bool:
        """Whether the round being played out is over."""
        ...

    def utility(self, state: Any, seat: int) -> float:
        """What the finished round is worth to `seat` (higher is better)."""
        ...


def deal_hidden(
    pool: Sequence[Card],
    sizes: Sequence[int],
    allowed: Sequence[Callable[[Card], bool] | None],
    rng: random.Random,
    tries: int = 20,
) -> tuple[list[list[Card]], list[Card]]:
    """Deal `sizes[i]` cards of `pool` to each holder i, only cards `allowed[i]` accepts (None: any).

    Holders with the fewest acceptable cards are served first, from a fresh shuffle each try; if
    every try fails (the constraints leave no room, which a consistent view never does) the
    constraints are dropped rather than the decision. Returns the hands and the cards left over.
    """
    cards = list(pool)
    order = sorted(
        range(len(sizes)),
        key=lambda i: sum(1 for c in cards if allowed[i] is None or allowed[i](c)) - sizes[i],  # type: ignore[misc]
    )
    for attempt in range(tries + 1):
        rng.shuffle(cards)
        rest = cards
        hands: list[list[Card]] = [[] for _ in sizes]
        for i in order:
            accept = allowed[i] if attempt < tries else None
            if accept is None:
                hands[i], rest = rest[: sizes[i]], rest[sizes[i] :]
                continue
            picked: list[Card] = []
            kept: list[Card] = []
            for card in rest:
                if len(picked) < sizes[i] and accept(card):
                    picked.append(card)
                else:
                    kept.append(card)
            if len(picked) < sizes[i]:
                break
            hands[i], rest = picked, kept
        else:
            return hands, rest
    raise AssertionError("unreachable: the last try deals without constraints")  # pragma: no cover


def decision_rng(game: AnyGame, view: Any, seat: int, moves: tuple[Any, ...], seed: int) -> random.Random:
    """Random numbers that depend on the bot's seed and on the view only (not on earlier calls)."""
    public = json.dumps(game.public_state(view), sort_keys=True, separators=(",", ":"))
    options = json.dumps([game.move_to_json(m) for m in moves], sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(f"{seed}|{seat}|{public}|{options}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def playout(game: AnyGame, searcher: Searcher, world: Any, move: Any, seat: int, rng: random.Random) -> float:
    """Apply `move` in `world`, play the round out with the playout policies, score it for `seat`."""
    state = game.apply(world, move)
    while not searcher.finished(state):
        expected = game.expected(state)
        if expected.phase != "move":
            break
        # a simultaneous choice is made by every seat on the same state (no one sees another's)
        moves = [searcher.policy(state, other, rng) for other in expected.seats]
        state = game.apply_moves(state, moves)
    return searcher.utility(state, seat)


class ExpertBot:
    """The search bot for one game, given that game's `searcher` (its bundle's, lanplay/games/GAME/search.py).
    `budget`: seconds per decision (default LANPLAY_BOT_BUDGET, else 0.25 s); `samples`: a fixed number of
    sampled worlds per decision instead (deterministic)."""

    name = "expert"  # for the normal level too: a network seat runs a bot of this name off the event loop

    def __init__(
        self, searcher: Searcher, seed: int | None = None, budget: float | None = None, samples: int | None = None
    ) -> None:
        if samples is not None and samples < 1:
            raise ValueError(f"an expert bot needs at least 1 sampled world per decision, not {samples}")
        self.searcher = searcher
        self.seed = seed if seed is not None else random.randrange(1 << 62)
        self.budget = budget if budget is not None else budget_from_env()
        if not 0 < self.budget <= 60:
            raise ValueError(f"the bot's time per decision must be more than 0 and at most 60 s, got {self.budget}")
        self.samples = samples
        self.last_batches = 0  # worlds searched for the last decision (benchmarks report it)

    def choose(self, game: AnyGame, view: Any, seat: int) -> Any:
        start = time.perf_counter()
        moves = game.legal_moves(view, seat)
        if len(moves) == 1:
            self.last_batches = 0
            return moves[0]
        candidates = self.searcher.candidates(view, seat, moves)
        if len(candidates) == 1:
            self.last_batches = 0
            return candidates[0]
        rng = decision_rng(game, view, seat, moves, self.seed)
        prior = self.searcher.prior(view, seat, rng)
        candidates = (prior, *(m for m in candidates if m != prior))
        # Paired results against the prior (the same world and dice for every candidate).
        gain = [0.0] * len(candidates)
        gain_squares = [0.0] * len(candidates)
        deadline = start + self.budget * self.searcher.budget_share(moves)
        slowest = 0.0
        batches = 0
        limit = self.samples if self.samples is not None else MAX_BATCHES
        while batches < limit:
            if self.samples is None and batches and time.perf_counter() + slowest > deadline:
                break  # another batch would overrun the budget
            began = time.perf_counter()
            world = self.searcher.sample(view, seat, rng)
            dice = rng.getrandbits(64)
            results = [playout(game, self.searcher, world, move, seat, random.Random(dice)) for move in candidates]
            for index, result in enumerate(results):
                difference = result - results[0]
                gain[index] += difference
                gain_squares[index] += difference * difference
            slowest = max(slowest, time.perf_counter() - began)
            batches += 1
        self.last_batches = batches
        return candidates[self._pick(gain, gain_squares, batches, self.searcher.confidence)]

    @staticmethod
    def _pick(gain: list[float], gain_squares: list[float], batches: int, confidence: float) -> int:
        """The candidate with the best mean gain over the prior, if that gain stands out of the noise
        (more than `confidence` standard errors); else the prior. Few playouts thus fall back on the
        heuristic instead of on chance, and many let the search overrule it."""
        best = max(range(len(gain)), key=lambda i: (gain[i], -i))
        if best == 0 or batches < 2:
            return 0
        mean = gain[best] / batches
        variance = max(0.0, gain_squares[best] / batches - mean * mean) * batches / (batches - 1)
        return best if mean > confidence * math.sqrt(variance / batches) else 0
