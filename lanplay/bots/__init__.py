"""Bots that fill empty seats. A bot sees only its seat's view of the game (`Game.view`)."""

from __future__ import annotations

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


def make_bot(game_id: str, kind: str, seed: int | None = None) -> Bot:
    """A bot by kind: "random" or "heuristic" (each game has its own heuristic player)."""
    if kind == "random":
        return RandomBot(seed)
    if kind != "heuristic":
        raise ValueError(f"unknown bot kind {kind!r}: use 'random' or 'heuristic'")
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
