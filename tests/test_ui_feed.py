"""One table screen for both sources: the offline `LocalTable` (engine and bots in-process) and the networked
`NetTable` (the runner's session over loopback, bot peers) tell the same `TableFeed` the same kinds of events,
and the feed alone turns them into the model: the same events give the same screen whichever source told them.

A person is played through the model's public actions (select, confirm); the events are read through the feed's
public `front` hook. Loopback only; every test has its own LANPLAY_HOME.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from engine.api import IllegalMove
from engine.games import get_game
from lanplay.base.store import load_or_create_identity
from lanplay.ui import screens
from lanplay.ui.feed import (
    MovePlayed,
    RoundDealt,
    RoundScored,
    RoundVoided,
    TableEvent,
    TableFeed,
    TableOver,
    WaitingFor,
)
from lanplay.ui.local_table import LocalTable
from lanplay.ui.model import CONTINUE, TableModel
from lanplay.ui.net_table import NetTable
from lanplay.ui.screens import screen_text

NAMES = ["Ann", "Bot 1", "Bot 2", "Bot 3"]
# Lines a networked table writes about the table itself (who sits where, which laptop runs which bot, where the
# record went): no game event tells them, so only the source's own log has them.
TABLE_LINES = {"ev_seats", "ev_bot_own", "ev_bot_runs_on", "ev_record_saved"}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("LANPLAY_HOME", str(home))
    monkeypatch.delenv("LANPLAY_INTERFACE", raising=False)  # loopback only
    return home


class Recorder:
    """A front end that only keeps what the feed was told."""

    def __init__(self) -> None:
        self.events: list[TableEvent] = []

    def told(self, event: TableEvent) -> None:
        self.events.append(event)

    def asked(self) -> None:
        pass


async def _until(condition: Any, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("timed out waiting for the table")
        await asyncio.sleep(0.002)


def _source(kind: str, home: Path) -> tuple[TableModel, Any, Recorder]:
    game = get_game("take6")
    model = TableModel(game, NAMES, 0, "en")
    recorder = Recorder()
    options = game.options_from_json({})
    table: Any
    if kind == "offline":
        table = LocalTable(model, options, bot_delay=0.0, seed=5, front=recorder)
    else:
        table = NetTable(
            model, identity=load_or_create_identity(home), data_dir=home, interface="127.0.0.1", name="Ann",
        ).host(options=game.options_to_json(options), seats=len(NAMES), bots=len(NAMES) - 1)  # fmt: skip
        table.feed.front = recorder
    return model, table, recorder


async def _play_round_one(model: TableModel, table: Any) -> dict[str, Any]:
    """The person confirms the first allowed choice of every decision until round 1's results are on screen,
    then presses Enter for round 2; what the screen showed on the way."""
    task = asyncio.ensure_future(table.run())
    seen: dict[str, Any] = {"kinds": []}
    try:
        while model.kind != "continue":
            await _until(lambda: bool(model.moves) or task.done())
            assert not task.done(), task
            if model.kind != "continue":
                seen["kinds"].append(model.kind)
                seen.setdefault("decision", screen_text(model))
                if model.cursor < 0:
                    model.move_cursor(1)
                model.confirm()
                if not model.moves:
                    seen.setdefault("after_move", model.status_msg().key)
        seen["pause"] = screen_text(model)
        seen["results"] = list(model.round_results)
        model.confirm()  # Enter: [Next round] is the only choice
        await _until(lambda: model.round_no == 2)
        seen["round_two"] = screen_text(model)
    finally:
        if hasattr(table, "leave"):
            with contextlib.suppress(Exception):
                if await table.leave():
                    await asyncio.wait([task], timeout=6)
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
    return seen


def _game_events(recorder: Recorder) -> list[str]:
    """The events that carry the game (not the polled ones: whom the table waits for, marks, a view caught up),
    by kind, a run of moves as one."""
    kinds: list[str] = []
    for event in recorder.events:
        if isinstance(event, RoundDealt | MovePlayed | RoundScored):
            name = type(event).__name__
            if not kinds or kinds[-1] != name or name != "MovePlayed":
                kinds.append(name)
    return kinds


def _retold(model: TableModel, recorder: Recorder, upto: int) -> TableModel:
    """A fresh screen of the same seat told the first `upto` events again."""
    fresh = TableModel(model.game, model.players, model.my_seat, "en")
    feed = TableFeed(fresh)
    for event in recorder.events[:upto]:
        feed.tell(event)
    return fresh


def _table_and_hand(model: TableModel) -> str:
    return screens.plain(screens.table_area(model, 56)) + screens.plain(screens.hand_area(model, 80))


def test_both_sources_tell_a_round_the_same_way_and_the_screen_goes_through_the_same_states(_home: Path) -> None:
    """T-3, T-4: a round of 6 nimmt! offline and over the network: the feed is told the deal, the moves and the
    scored round in that order by both, the person is asked for cards, the table waits for the others after
    each one, the round's results pause the screen until Enter, and Enter deals round 2."""
    runs = {}
    for kind in ("offline", "network"):
        model, table, recorder = _source(kind, _home)
        seen = asyncio.run(asyncio.wait_for(_play_round_one(model, table), 60))
        runs[kind] = (model, recorder, seen)

    for _model, recorder, seen in runs.values():
        told = _game_events(recorder)
        assert told[:4] == ["RoundDealt", "MovePlayed", "RoundScored", "RoundDealt"], told
        moves = sum(isinstance(e, MovePlayed) for e in recorder.events)
        assert moves >= 10 * len(NAMES)  # T-2.1: ten cards each, all played (and any row taken, T-3.5)
        assert set(seen["kinds"]) <= {"play", "pick", "take_row"} and seen["kinds"].count("play") == 10
        assert "Your hand (10)" in seen["decision"]
        assert seen["after_move"] in ("waiting_for", "status_idle")
        assert "round over: press Enter for the next round" in seen["pause"]
        assert [len(r.rows) for r in seen["results"]] == [len(NAMES)]
        assert "Your hand (10)" in seen["round_two"]  # round 2 dealt after Enter
        assert any(isinstance(e, WaitingFor) and e.seats for e in recorder.events)
    offline, network = (runs[k][0] for k in ("offline", "network"))
    # the same lines, in the same words, for the round's end (each seat's bullheads, then the totals)
    ends = {k: [e.key for e in runs[k][0].log if e.key in ("ev_t6_result", "ev_totals")] for k in runs}
    assert ends["offline"] == ends["network"]
    assert offline.audits == {} and network.audits[1].ok  # only the network's round was audited (P-5.3)


@pytest.mark.parametrize("kind", ["offline", "network"])
def test_the_events_a_source_told_give_a_fresh_screen_the_same_table_log_and_results(kind: str, _home: Path) -> None:
    """The feed is the one writer of the game on the screen: the events either source told, told again to a
    fresh screen of the same seat, draw the same table, hand, results and log (but the lines a networked
    table writes about its seats and record)."""
    model, table, recorder = _source(kind, _home)
    scored: dict[str, Any] = {}

    def at_the_pause() -> None:  # the screen as it was when round 1's results came, before Enter
        if model.kind == "continue" and "log" not in scored:
            scored.update(log=list(model.log), screen=_table_and_hand(model), results=list(model.round_results),
                          view=model.view)  # fmt: skip

    model.listeners.append(at_the_pause)
    asyncio.run(asyncio.wait_for(_play_round_one(model, table), 60))
    upto = next(i for i, e in enumerate(recorder.events) if isinstance(e, RoundScored)) + 1
    fresh = _retold(model, recorder, upto)
    assert fresh.view == scored["view"]
    assert fresh.round_results == scored["results"]
    assert _table_and_hand(fresh) == scored["screen"]
    assert fresh.log == [e for e in scored["log"] if e.key not in TABLE_LINES]
    assert fresh.kind == "continue"  # and the fresh screen pauses too


def test_a_voided_round_and_a_stopped_table_show_the_same_box_from_any_source() -> None:
    """P-5.5: a stop voids the round and the sheet of a table stopped early shows no winner, from the events
    alone (no runner): the decision offered is withdrawn, and a move confirmed after it is refused in one line."""
    game = get_game("take6")
    model = TableModel(game, NAMES[:3], 0, "en")
    feed = TableFeed(model)
    state = game.new_game(3, game.options_from_json({}))
    deal = game.deal_from_json(
        state, {"dealer": 2, "hands": [list(range(1, 11)), list(range(11, 21)), list(range(21, 31))],
                "rows": [50, 60, 70, 80]},
    )  # fmt: skip
    state = game.start_round(state, deal)

    async def play() -> Any:
        feed.tell(RoundDealt(1, state))
        offered = feed.offer(game.legal_moves(state, 0))
        assert model.moves
        feed.tell(RoundVoided(1, "audit_stopped", {"reason": "▲Bot 1 left the table"}))
        assert model.moves == () and await offered is None
        with pytest.raises(IllegalMove, match="no move is expected from you now"):
            feed.submit(game.legal_moves(state, 0)[0])
        with pytest.raises(IllegalMove, match="no round is waiting to start"):
            feed.submit(CONTINUE)
        feed.tell(TableOver((), (0, 0, 0), None, stopped=True, reason="Bot 1 left the table."))

    asyncio.run(play())
    text = " ".join(screen_text(model).split())
    assert "Round 1: the round stopped and is void, nobody convicted" in text
    assert "Game stopped" in text and "Bot 1 left the table." in text and "Winner" not in text
