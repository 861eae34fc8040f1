"""Bots that fill empty seats. A bot sees only its seat's view of the game (`Game.view`)."""

from __future__ import annotations

import argparse
import os
import random
from typing import Any, Protocol

from engine.api import Game
from lanplay.bots.expert import BUDGET_ENV, DEFAULT_BUDGET, parse_budget


class Bot(Protocol):
    name: str

    def choose(self, game: Game[Any, Any, Any, Any], view: Any, seat: int) -> Any:
        """A legal move for `seat`, decided from `view` (what that seat may know) alone."""
        ...


class RandomBot:
    """Plays a uniformly random legal move."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, game: Game[Any, Any, Any, Any], view: Any, seat: int) -> Any:
        return self.rng.choice(game.legal_moves(view, seat))


BOT_LEVELS = ("easy", "normal", "expert")  # what the lobby's form and `lanplay play` offer
# Every kind make_bot (lanplay.games) builds: the levels, "random" (the same as easy) and "heuristic" (each game's
# rule-of-thumb player, the search's starting point and playout policy; benchmarks play against it).
BOT_KINDS = (*BOT_LEVELS, "random", "heuristic")
NORMAL_BUDGET = 0.05  # seconds of search per decision at the normal level (p95 goal 0.1 s: bench_bots)


def bot_chooser(game: Game[Any, Any, Any, Any], bots: dict[int, Bot]) -> Any:
    """A chooser for engine.playout.play_game that asks each seat's bot with that seat's view."""

    def choose(state: Any, seat: int) -> Any:
        return bots[seat].choose(game, game.view(state, seat), seat)

    return choose


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    """`--bot-budget SECONDS`: the expert bots' search time per decision (sets LANPLAY_BOT_BUDGET,
    so every bot this command starts, in this process or another, uses it)."""
    def budget(raw: str) -> float:
        try:
            return parse_budget(raw, "--bot-budget")
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parser.add_argument(
        "--bot-budget", type=budget, metavar="SECONDS",
        help=f"expert bots: seconds of search per decision (default ${BUDGET_ENV} or {DEFAULT_BUDGET})",
    )  # fmt: skip


def apply_budget_argument(budget: float | None) -> None:
    if budget is not None:
        os.environ[BUDGET_ENV] = repr(budget)
