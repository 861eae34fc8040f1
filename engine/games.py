"""The registry of games by id (the ids used in records and table options)."""

from __future__ import annotations

from typing import Any

from engine.api import FormatError, Game

AnyGame = Game[Any, Any, Any, Any]


def all_games() -> dict[str, AnyGame]:
    from engine.sixth_sense import SIXTH_SENSE

    games: dict[str, AnyGame] = {SIXTH_SENSE.id: SIXTH_SENSE}
    try:
        from engine.take6 import TAKE6

        games[TAKE6.id] = TAKE6
    except ImportError:  # pragma: no cover - while the game is being written
        pass
    try:
        from engine.sixes import SIXES

        games[SIXES.id] = SIXES
    except ImportError:  # pragma: no cover
        pass
    return games


def get_game(game_id: str) -> AnyGame:
    games = all_games()
    if game_id not in games:
        raise FormatError(f"unknown game {game_id!r}; known: {', '.join(sorted(games))}")
    return games[game_id]
