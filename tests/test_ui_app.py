"""The full-screen application driven by key presses through a pipe (no terminal): a LocalTable with
zero-delay bots plays each game until at least one round has ended.

Keys go in as the bytes a terminal sends; the screen goes to prompt_toolkit's DummyOutput, so the
assertions read the model and the text its screens render.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from engine.games import get_game
from engine.record import replay_text
from lanplay.ui.app import build_app, run_table_app
from lanplay.ui.local_table import LocalTable
from lanplay.ui.model import TableModel
from lanplay.ui.screens import screen_text

ENTER, RIGHT, TAB = "\r", "\x1b[C", "\t"


async def _until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the table")
        await asyncio.sleep(0.002)


async def _play(
    game_id: str, players: int, options: dict[str, object], record_dir: Path, script: Callable[..., Any]
) -> tuple[TableModel, LocalTable, Any]:
    game = get_game(game_id)
    names = ["Ann", *(f"Bot {i}" for i in range(1, players))]
    model = TableModel(game, names, 0, "en")
    table = LocalTable(model, game.options_from_json(options), bot_delay=0, record_dir=record_dir, seed=11)
    with create_pipe_input() as pipe:
        app = build_app(model, input=pipe, output=DummyOutput())
        runner = asyncio.ensure_future(run_table_app(model, table, app=app))
        await _until(lambda: app.is_running)
        await script(model, pipe)
        result = await asyncio.wait_for(runner, 10)
    return model, table, result


async def _press_enter_until(model: TableModel, pipe: PipeInput, done: Callable[[], bool]) -> None:
    """Tab selects (the next allowed choice) and Enter confirms it; only pressed when the model waits for this
    seat, as a person would."""
    sent = -1
    while not done():
        await _until(lambda: bool(model.moves) or done())
        if done():
            break
        if model.revision != sent:  # one press per new screen, so presses never pile up ahead of the table
            sent = model.revision
            pipe.send_text(TAB + ENTER)
        await asyncio.sleep(0.002)


async def _leave(model: TableModel, pipe: PipeInput) -> None:
    pipe.send_text("q")
    await _until(lambda: model.confirm_quit or model.quit_requested)
    if model.confirm_quit:
        pipe.send_text("y")


@pytest.mark.parametrize(
    ("game_id", "players", "options"),
    [("sixth-sense", 3, {}), ("take6", 4, {}), ("sixes", 4, {"chips": 3})],
)
def test_keys_play_a_round_of_each_game(
    game_id: str, players: int, options: dict[str, object], tmp_path: Path
) -> None:
    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _press_enter_until(model, pipe, lambda: bool(model.round_results))
        text = screen_text(model)
        assert "round over: press Enter for the next round" in text  # the round's end is on screen
        assert model.audits == {} and "audit" not in text  # and a local game claims no audit
        assert "Ann" in text and "Bot 1" in text
        await _leave(model, pipe)

    model, table, result = asyncio.run(_play(game_id, players, options, tmp_path, script))
    assert result is None  # left before the end: the back end was stopped
    assert model.quit_requested
    assert model.round_results[0].round_no == 1
    assert len(model.round_results[0].rows) == players
    saved = table.save_record()
    assert saved is not None
    assert replay_text(saved.read_text()).rounds  # the rounds so far replay cleanly


def test_arrows_and_digits_choose_and_help_and_quit_dialogs(tmp_path: Path) -> None:
    """→ then Enter predicts the second card; ? shows the rules; q asks first and n stays; a digit
    pointing at a card that may not be played shows why."""

    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _until(lambda: model.kind == "predict")
        hand = model.view.round.hands[0]
        pipe.send_text(RIGHT + RIGHT)  # nothing is selected at first: → selects the first card, → the second
        await _until(lambda: model.cursor == 1)
        pipe.send_text(ENTER)
        await _until(lambda: model.view.round.predictions[0] is not None)
        assert model.view.round.predictions[0] == hand[1]
        pipe.send_text("?")
        await _until(lambda: model.show_help)
        assert "S-6.4 8 led" in screen_text(model)
        pipe.send_text("?")
        await _until(lambda: not model.show_help)
        pipe.send_text("q")
        await _until(lambda: model.confirm_quit)
        assert "Leave the game?" in screen_text(model)
        pipe.send_text("n")
        await _until(lambda: not model.confirm_quit)
        assert not model.quit_requested
        await _until(lambda: model.kind == "play")
        before = len(model.view.round.hands[0])
        playable = next(i for i, option in enumerate(model.options) if option.enabled)
        if playable > 0:  # S-4.2: a card that does not follow is refused on screen, and nothing is played
            pipe.send_text("1")
            await _until(lambda: model.error is not None)
            assert "you must follow the led colour" in screen_text(model)
            pipe.send_text(ENTER)
            await _until(lambda: model.cursor == 0 and not model.typed)
        pipe.send_text(RIGHT * ((playable - model.cursor) % len(model.options)) + ENTER)
        await _until(lambda: model.question is not None or len(model.view.round.hands[0]) < before)
        if model.question is not None:  # the 6/9 card or a 0: the digit selects the answer, Enter confirms it
            pipe.send_text("1" + ENTER)
            await _until(lambda: len(model.view.round.hands[0]) < before)
        await _leave(model, pipe)

    model, _, _ = asyncio.run(_play("sixth-sense", 3, {}, tmp_path, script))
    assert model.quit_requested


def test_a_whole_game_to_the_game_over_screen(tmp_path: Path) -> None:
    """Sixes with one chip ends after the first round where someone pays their last chip (X-3.1)."""

    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _press_enter_until(model, pipe, lambda: model.game_over is not None)
        text = screen_text(model)
        assert "Game over" in text and "Final table" in text and "Record saved to" in text
        assert ("Winner: " in text) or ("Winners: " in text)
        pipe.send_text("q")  # after the game q leaves at once

    model, table, record = asyncio.run(_play("sixes", 4, {"chips": 1}, tmp_path, script))
    assert model.game_over is not None and table.record_path is not None
    assert record is not None and replay_text(table.record_path.read_text()).complete


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_client_log_is_private_like_every_file_of_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging
    import stat

    from lanplay.ui.app import log_to_file

    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # as when lanplay starts: nobody configured logging yet
    (tmp_path / "client.log").write_text("from an older lanplay\n")
    (tmp_path / "client.log").chmod(0o644)
    try:
        log_to_file(tmp_path)
        assert stat.S_IMODE((tmp_path / "client.log").stat().st_mode) == 0o600
    finally:
        for handler in root.handlers:
            handler.close()
    assert (tmp_path / "client.log").read_text().startswith("from an older lanplay")
