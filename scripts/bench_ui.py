"""Terminal client benchmark: time from a key press to the end of the redraw it causes.

For each game a LocalTable (bots answering at once) plays until the person must choose; then the
real application (keys through a pipe, screen to an 80×24 DummyOutput) gets N arrow keys, and each
is timed from the moment it is written to the pipe until `app.after_render` fires. The model only
moves its cursor, so every press costs one full redraw of the table. Target: under 50 ms.

Prints one JSON line per figure. Usage: .venv/bin/python scripts/bench_ui.py [--presses N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from engine.games import get_game
from lanplay.ui.app import build_app, run_table_app
from lanplay.ui.local_table import LocalTable
from lanplay.ui.model import TableModel

RIGHT = "\x1b[C"
TABLES = (("sixth-sense", "6th Sense", 4, {}), ("take6", "6 nimmt!", 5, {}), ("sixes", "Sixes", 5, {}))


class Screen80x24(DummyOutput):
    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


def emit(metric: str, value: float, unit: str) -> None:
    print(json.dumps({"metric": metric, "value": round(value, 3), "unit": unit}), flush=True)


async def measure(
    game_id: str, players: int, options: dict[str, object], presses: int, log_events: int = 0
) -> list[float]:
    game = get_game(game_id)
    model = TableModel(game, ["Ann", *(f"Bot {i}" for i in range(1, players))], 0, "en")
    table = LocalTable(model, game.options_from_json(options), bot_delay=0, seed=3)
    rendered = asyncio.Event()
    times: list[float] = []
    with create_pipe_input() as pipe:
        app = build_app(model, input=pipe, output=Screen80x24())
        app.after_render += lambda _app: rendered.set()
        runner = asyncio.ensure_future(run_table_app(model, table, app=app))
        while not (model.moves and app.is_running):
            await asyncio.sleep(0.001)
        for index in range(log_events):  # late in a long game: the log has grown
            model.add_event("ev_play", name=f"Bot {index % players}", card=f"R{index % 14}")
        await asyncio.sleep(0.05)  # let the first full redraw settle
        for _ in range(presses):
            rendered.clear()
            revision = model.revision
            start = time.perf_counter()
            pipe.send_text(RIGHT)
            await rendered.wait()
            # A redraw for another reason came first: wait for ours. (The key changes the model even where
            # the cursor stays: → skips cards that may not be played, and a hand may hold one that may.)
            while model.revision == revision:
                rendered.clear()
                await rendered.wait()
            times.append((time.perf_counter() - start) * 1000)
        pipe.send_text("q")
        pipe.send_text("y")
        await asyncio.wait_for(runner, 10)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--presses", type=int, default=200)
    args = parser.parse_args()
    for game_id, title, players, options in TABLES:
        opts: dict[str, Any] = dict(options)
        times = asyncio.run(measure(game_id, players, opts, args.presses))
        emit(f"ui key-press redraw, {title} table (median of {len(times)})", statistics.median(times), "ms")
        emit(f"ui key-press redraw, {title} table (95th percentile)", statistics.quantiles(times, n=20)[-1], "ms")
    times = asyncio.run(measure("sixth-sense", 6, {}, args.presses, log_events=2000))
    emit(f"ui key-press redraw, 6th Sense 6-player table with a 2000-event log (median of {len(times)})",
         statistics.median(times), "ms")


if __name__ == "__main__":
    main()
