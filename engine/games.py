"""The registry of games by id (the ids used in records and table options)."""

from __future__ import annotations

from typing import Any

from engine.api import FormatError, Game
from engine.sixes import SIXES
from engine.sixth_sense import SIXTH_SENSE
from engine.take6 import TAKE6

AnyGame = Game[Any, Any, Any, Any]

_GAMES: tuple[AnyGame, ...] = (SIXTH_SENSE, TAKE6, SIXES)


def all_games() -> dict[str, AnyGame]:
    return {game.id: game for game in _GAMES}


def get_game(game_id: str) -> AnyGame:
    games = all_games()
    if game_id not in games:
        raise FormatError(f"unknown game {game_id!r}; known: {', '.join(sorted(games))}")
    return games[game_id]
