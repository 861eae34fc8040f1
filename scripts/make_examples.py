"""Write the example game records in examples/ by letting seeded heuristic bots play.

Usage: .venv/bin/python scripts/make_examples.py   (deterministic: same seeds, same records)
"""

from __future__ import annotations

import random
from pathlib import Path

from engine.games import all_games
from engine.playout import play_game
from lanplay.bots import Bot, bot_chooser
from lanplay.games import make_bot

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NAMES = ("Ann", "Bob", "Cas", "Dee", "Eva", "Fay", "Gus", "Hal")
# (game, players, options, seed)
TABLES: tuple[tuple[str, int, dict[str, object], int], ...] = (
    ("sixth-sense", 4, {}, 1),
    ("sixth-sense", 2, {}, 2),
    ("sixth-sense", 5, {"beginner": True, "late_trump": True, "target": 25}, 3),
    ("take6", 4, {}, 4),
    ("take6", 3, {"logic": True, "profi": True}, 5),
    ("sixes", 5, {"chips": 5}, 6),
)


def main() -> None:
    games = all_games()
    EXAMPLES.mkdir(exist_ok=True)
    for game_id, players, raw_options, seed in TABLES:
        if game_id not in games:
            continue
        game = games[game_id]
        options = game.options_from_json(raw_options)
        bots: dict[int, Bot] = {seat: make_bot(game_id, "heuristic", seed * 10 + seat) for seat in range(players)}
        _, record = play_game(game, NAMES[:players], options, bot_chooser(game, bots), random.Random(seed))
        suffix = "-".join(key for key, value in raw_options.items() if value) or "standard"
        path = EXAMPLES / f"{game_id}-{players}p-{suffix}.json"
        path.write_text(record.dumps(), encoding="utf-8")
        print(f"wrote {path.relative_to(EXAMPLES.parent)}")


if __name__ == "__main__":
    main()
