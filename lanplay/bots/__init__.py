"""Bots that fill empty seats. A bot sees only its seat's view of the game (`Game.view`)."""

from __future__ import annotations

import argparse
import os
import random
from typing import Any, Protocol

from engine.api import Game


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
# Every kind make_bot builds: the levels, "random" (the same as easy) and "heuristic" (each game's
# rule-of-thumb player, the search's starting point and playout policy; benchmarks play against it).
BOT_KINDS = (*BOT_LEVELS, "random", "heuristic")
NORMAL_BUDGET = 0.05  # seconds of search per decision at the normal level (p95 goal 0.1 s: bench_bots)


def make_bot(game_id: str, kind: str, seed: int | None = None, budget: float | None = None) -> Bot:
    """A bot by kind (`BOT_KINDS`): "easy" or "random" (a random legal move), "normal" (the expert's
    search at `NORMAL_BUDGET` a decision), "expert" (the search, lanplay/bots/expert; `budget`
    seconds a decision, default LANPLAY_BOT_BUDGET or 0.25), or "heuristic" (each game's own
    rule-of-thumb player, no search)."""
    if kind in ("easy", "random"):
        return RandomBot(seed)
    if kind == "normal":
        from lanplay.bots.expert import ExpertBot

        return ExpertBot(game_id, seed, NORMAL_BUDGET)
    if kind == "expert":
        from lanplay.bots.expert import ExpertBot

        return ExpertBot(game_id, seed, budget)
    if kind != "heuristic":
        raise ValueError(f"unknown bot kind {kind!r}: use one of {', '.join(BOT_KINDS)}")
    if game_id == "sixth-sense":
        from lanplay.bots.sixth_sense import SixthSenseBot

        return SixthSenseBot(seed)
    if game_id == "take6":
        from lanplay.bots.take6 import Take6Bot

        return Take6Bot(seed)
    if game_id == "sixes":
        from lanplay.bots.sixes import SixesBot

        return SixesBot(seed)
    raise ValueError(f"no heuristic bot for game {game_id!r}")


def bot_chooser(game: Game[Any, Any, Any, Any], bots: dict[int, Bot]) -> Any:
    """A chooser for engine.playout.play_game that asks each seat's bot with that seat's view."""

    def choose(state: Any, seat: int) -> Any:
        return bots[seat].choose(game, game.view(state, seat), seat)

    return choose


def add_budget_argument(parser: argparse.ArgumentParser) -> None:
    """`--bot-budget SECONDS`: the expert bots' search time per decision (sets LANPLAY_BOT_BUDGET,
    so every bot this command starts, in this process or another, uses it)."""
    from lanplay.bots.expert import BUDGET_ENV, DEFAULT_BUDGET, parse_budget

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
        from lanplay.bots.expert import BUDGET_ENV

        os.environ[BUDGET_ENV] = repr(budget)
