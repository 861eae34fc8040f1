"""The table screen and the lobby over the real protocol on loopback (127.0.0.1 only).

Games are hosted by `NetTable` as `lanplay play` hosts them: seat 0 is the person at the screen, the
other seats are in-process bot peers with identities of their own that speak the protocol over
loopback (zero bot delay). Key presses go in through a pipe, the screen goes to DummyOutput, and the
assertions read the model and the text its screens render. Every test has its own LANPLAY_HOME.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from engine.games import get_game
from engine.record import replay_text
from lanplay.base.store import load_or_create_identity
from lanplay.net.discovery import interface_from_env
from lanplay.table.runner import BotPlayer, Outcome
from lanplay.table.tables import host_table, join_table
from lanplay.ui import net_table
from lanplay.ui.app import build_app, run_table_app
from lanplay.ui.lobby_model import LobbyModel
from lanplay.ui.lobby_screen import lobby_text, run_lobby
from lanplay.ui.model import TableModel
from lanplay.ui.net_table import NetTable
from lanplay.ui.screens import screen_text
from protocol.identity import Identity
from protocol.table import Exposed, Stopped, Waiting

ENTER, DOWN, LEFT, RIGHT, TAB = "\r", "\x1b[B", "\x1b[D", "\x1b[C", "\t"
LOOPBACK = "127.0.0.1"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("LANPLAY_HOME", str(home))
    monkeypatch.delenv("LANPLAY_INTERFACE", raising=False)  # loopback only
    monkeypatch.setenv("LANPLAY_BOT_DELAY", "0")
    return home


async def _until(condition: Callable[[], bool], timeout: float = 30.0, what: str = "the table") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def _press_enter_until(model: TableModel, pipe: PipeInput, done: Callable[[], bool]) -> None:
    """Tab selects (the next allowed choice) and Enter confirms it, pressed only when the screen asks this seat,
    as a person would."""
    sent = -1
    while not done():
        await _until(lambda: bool(model.moves) or done())
        if done():
            break
        if model.revision != sent:
            sent = model.revision
            pipe.send_text(TAB + ENTER)
        await asyncio.sleep(0.005)


async def _leave(model: TableModel, pipe: PipeInput) -> None:
    pipe.send_text("q")
    await _until(lambda: model.confirm_quit or model.quit_requested)
    if model.confirm_quit:
        pipe.send_text("y")


def _net_table(home: Path, game_id: str, bots: int, options: dict[str, object]) -> tuple[TableModel, NetTable]:
    game = get_game(game_id)
    model = TableModel(game, ["Ann", *(f"Bot {i}" for i in range(1, bots + 1))], 0, "en")
    table = NetTable(
        model, identity=load_or_create_identity(home), data_dir=home, table_dir=home / "journals-play",
        interface=LOOPBACK, name="Ann", bot_delay=0.0,
    ).host(options=game.options_to_json(game.options_from_json(options)), seats=bots + 1, bots=bots)  # fmt: skip
    return model, table


async def _play(model: TableModel, table: NetTable, script: Callable[[TableModel, PipeInput], Any]) -> Any:
    with create_pipe_input() as pipe:
        app = build_app(model, input=pipe, output=DummyOutput())
        running = asyncio.ensure_future(run_table_app(model, table, app=app))
        await _until(lambda: app.is_running)
        await script(model, pipe)
        return await asyncio.wait_for(running, 20)


_CARD = r"(?<![A-Za-z0-9]){}(?![0-9])"


def test_sixth_sense_round_over_the_network_never_shows_another_prediction(_home: Path) -> None:
    """Keys play round 1 of 6th Sense against two bot peers; the screen shows the hand, the trick, whose
    turn it is and "Round 1 confirmed"; no screen before the audit holds a bot's prediction card."""
    model, table = _net_table(_home, "sixth-sense", 2, {})
    screens: list[str] = []
    views: list[Any] = []

    def watch() -> None:
        r = getattr(model.view, "round", None)
        if r is None or r.points is None:  # until round 1 is audited and scored (S-7.1)
            screens.append(screen_text(model))
            views.append(model.view)

    model.listeners.append(watch)
    seen: dict[str, str] = {}

    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _until(lambda: model.kind == "predict")
        seen["predict"] = screen_text(model)
        pipe.send_text(TAB + ENTER)
        await _until(lambda: model.kind == "play")
        seen["play"] = screen_text(model)
        await _press_enter_until(model, pipe, lambda: 1 in model.audits)
        seen["audited"] = screen_text(model)
        await _until(lambda: model.kind == "continue")
        assert "round over: press Enter for the next round" in screen_text(model)
        await _leave(model, pipe)

    asyncio.run(asyncio.wait_for(_play(model, table, script), 90))
    predict = seen["predict"]
    assert "Your hand (" in predict and "Trump:" in predict
    assert "your turn: choose a prediction card" in predict
    assert "Ann·bot1" in predict and "Ann·bot2" in predict and "— Round 1:" in predict
    # Issue 10, item 3: the header says this laptop runs both bots (from the signed plan).
    legend = r"Bots: .Ann·bot1, .Ann·bot2 on .Ann's laptop, which sees their cards"  # numbered in the drawn seat order
    assert re.search(legend, " ".join(predict.split())), predict
    assert "your turn: play a card" in seen["play"] and "Trick 1" in seen["play"]
    assert "Your prediction:" in seen["play"]
    done = seen["audited"]
    assert "Round 1 confirmed" in done and "Round 1 results" in done and "Totals:" in done
    # S-3.4: the bots' prediction cards (never played) appear on no screen before the round is audited,
    # except a card this seat was shown by a peek (S-6.4).
    result = model.round_results[0]
    assert [row.seat for row in result.rows] == [0, 1, 2]
    peeked = {peek.card for peek in model.peeks}
    others = [seat for seat in range(3) if seat != model.my_seat]  # the seat order is drawn (P-3.2)
    for row in result.rows:
        if row.seat == model.my_seat:
            continue
        card = str(row.detail.params["card"])
        assert re.search(_CARD.format(re.escape(card)), done), card  # shown once the round is scored
        if card in peeked:
            continue
        pattern = re.compile(_CARD.format(re.escape(card)))
        leaks = [text for text in screens if pattern.search(text)]
        assert not leaks, f"{card} shown before the audit:\n{leaks[0]}"
    for view in views:
        r = getattr(view, "round", None)
        if r is not None and r.points is None:
            assert all(r.predictions[seat] is None and r.hands[seat] is None for seat in others)
    assert model.quit_requested and table.left_early
    assert table.record_path is not None and table.record_path.parent == _home / "records"
    assert replay_text(table.record_path.read_text()).rounds  # the round so far, checked


def test_take6_round_over_the_network(_home: Path) -> None:
    """Round 1 of 6 nimmt! with three bot peers: the rows, the reveals told card by card, the audit."""
    model, table = _net_table(_home, "take6", 3, {})
    seen: dict[str, str] = {}

    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _until(lambda: model.kind == "play")
        seen["choose"] = screen_text(model)
        await _press_enter_until(model, pipe, lambda: 1 in model.audits)
        seen["audited"] = screen_text(model)
        await _leave(model, pipe)

    asyncio.run(asyncio.wait_for(_play(model, table, script), 90))
    choose = seen["choose"]
    assert all(f"Row {n}" in choose for n in (1, 2, 3, 4)) and "bullheads:" in choose
    assert "Your hand (10)" in choose and "your turn: choose a card to play" in choose
    assert "Rows: " in choose
    done = seen["audited"]
    assert "Round 1 confirmed" in done and "Revealed: " in done
    assert re.search(r"'s \d+ (→ row \d|is the 6th card|takes row \d)", done)  # T-3.3 … T-3.5 placements
    assert "Ann: " in done and "bullheads this round" in done


def test_a_whole_game_ends_on_the_game_over_screen_with_the_saved_record(_home: Path, tmp_path: Path) -> None:
    """Sixes with one chip ends after one round (X-3.1): winners, the record in the data dir and its copy."""
    model, table = _net_table(_home, "sixes", 2, {"chips": 1})
    copy = tmp_path / "copies" / "game.json"
    table.record_copy = copy

    async def script(model: TableModel, pipe: PipeInput) -> None:
        await _press_enter_until(model, pipe, lambda: model.game_over is not None)
        pipe.send_text("q")

    outcome = asyncio.run(asyncio.wait_for(_play(model, table, script), 90))
    assert isinstance(outcome, Outcome) and outcome.finished and outcome.complete and not outcome.exposed
    text = screen_text(model)
    assert "Game over" in text and "Final table" in text and "Record saved to" in text
    # the score sheet: each seat's points in round 1, then its total, as on paper
    sheet = text.split("Round by round")[1].splitlines()
    assert "R1" in sheet[1] and "total" in sheet[1]
    for seat, total in enumerate(model.game_over.totals if model.game_over else ()):
        assert sheet[2 + seat].split()[-1] == str(total)
    assert model.game_over is not None and model.game_over.record_path == str(copy.resolve())
    assert f"Copy saved to {copy.resolve()}" in text
    assert table.record_path is not None and table.record_path.parent == _home / "records"
    assert copy.read_bytes() == table.record_path.read_bytes()
    assert replay_text(copy.read_text()).complete
    assert not (_home / "journals").exists() or not list((_home / "journals").glob("*.jsonl"))


def test_a_person_who_leaves_is_replaced_by_a_bot_when_the_others_go_on_and_the_game_ends_complete(
    _home: Path, tmp_path: Path
) -> None:
    """P-5.7: Bob leaves after the first round; Ann's screen says he is gone and asks; Ann goes on, so her
    laptop runs a bot in his seat (the screen says whose), the scores carry over, and the game reaches its
    end on the game-over screen with the winners, its record continuing the first table's."""
    game = get_game("sixes")
    model = TableModel(game, ["Ann", "Bot 1", "Bob"], 0, "en")
    table = NetTable(
        model, identity=load_or_create_identity(_home), data_dir=_home, table_dir=_home / "journals-play",
        interface=LOOPBACK, name="Ann", bot_delay=0.0,
    ).host(options=game.options_to_json(game.options_from_json({"chips": 10})), seats=3, bots=1)  # fmt: skip
    ports: list[int] = []
    table._on_lobby = (lambda on_lobby: lambda lobby, port: (ports.append(port), on_lobby(lobby, port)))(  # type: ignore[method-assign]
        table._on_lobby
    )
    bob_runner: list[Any] = []

    async def bob() -> Outcome:
        await _until(lambda: bool(ports), what="the lobby")
        return await join_table(
            identity=Identity.generate(), data_dir=tmp_path / "bob", name="Bob", interface=LOOPBACK,
            player=BotPlayer("sixes"), address=(LOOPBACK, ports[0]), on_runner=bob_runner.append,
        )  # fmt: skip

    seen: dict[str, str] = {}

    async def script(model: TableModel, pipe: PipeInput) -> None:
        bob_task = asyncio.ensure_future(bob())
        await _press_enter_until(model, pipe, lambda: 1 in model.audits)  # the first round audited here
        # Confirmed at both laptops before Bob leaves: a round not yet confirmed is void (P-5.5), carried by none.
        sessions = (lambda: table.session, lambda: bob_runner[0].session)
        await _until(lambda: all((s := at()) is not None and len(s.rounds) >= 1 for at in sessions), what="round 1")
        # ten chips each: nobody runs out in one round, so the game is not over when Bob leaves
        assert model.game_over is None and not (table.session and table.session.complete)
        await bob_runner[0].leave()
        try:
            await _until(lambda: model.kind == "go_on", 60, "the question to go on")
        except AssertionError:
            session = table.session
            where = (session.phase, session.present(), session.finished) if session is not None else None
            raise AssertionError(f"no question to go on ({where})\n{screen_text(model)}") from None
        seen["asked"] = screen_text(model)
        pipe.send_text(TAB + ENTER)  # the first choice: go on with a bot
        await _press_enter_until(model, pipe, lambda: model.game_over is not None)
        seen["over"] = screen_text(model)
        await bob_task
        pipe.send_text("q")

    outcome = asyncio.run(asyncio.wait_for(_play(model, table, script), 240))
    asked = " ".join(seen["asked"].split())
    assert "left the table: the round is void, nobody is convicted" in asked
    assert "is gone: go on?" in asked and "Go on with a bot in" in asked and "End the game here" in asked
    over = " ".join(seen["over"].split())
    assert "The game goes on at a new table" in over and "played by a bot run by" in over
    assert isinstance(outcome, Outcome) and outcome.finished and outcome.complete and not outcome.exposed
    assert "Game over" in over and "Final table" in over
    record = json.loads(table.record_path.read_text()) if table.record_path is not None else {}
    assert record["complete"] is True and record["table"]["continues"]["rounds"] >= 1


# --- what the screen says about links, waiting, exposures and stops (no network) -------------------------


def _stub_table(lang: str = "en") -> tuple[TableModel, NetTable]:
    game = get_game("take6")
    model = TableModel(game, ["Ann", "Bob", "Cor"], 0, lang)
    table = NetTable(model, identity=Identity.generate(), data_dir=Path("/nonexistent"), interface=LOOPBACK, name="Ann")
    return model, table


def _dealt_take6(model: TableModel) -> Any:
    game = model.game
    state = game.new_game(3, game.options_from_json({}))
    deal = game.deal_from_json(
        state, {"dealer": 2, "hands": [list(range(1, 11)), list(range(11, 21)), list(range(21, 31))],
                "rows": [50, 60, 70, 80]},
    )  # fmt: skip
    return game.start_round(state, deal)


def _stub_runner(model: TableModel, waiting: list[Waiting], committed: list[int]) -> Any:
    """What NetTable reads of a runner and its session (their public queries), in the play of round 1."""
    state = _dealt_take6(model)
    session = SimpleNamespace(
        me=0, phase="play", round_index=0, complete=False, finished=False, state=state, view=lambda: state,
        committed=lambda: tuple(committed), waiting=lambda now=None: tuple(waiting), present=lambda: (0, 1, 2),
    )  # fmt: skip
    return SimpleNamespace(
        session=session, connected={1, 2}, network_lost=False, can_go_on=lambda: False, resumed=False
    )


def _move_owed(seat: int) -> Waiting:
    return Waiting(seat, "move", 0.0, None, False, True)


@pytest.mark.parametrize("resumed", [False, True])
def test_a_new_table_already_playing_before_its_deal_is_told_never_says_it_resumed(resumed: bool) -> None:
    """The session may be playing before its Dealt reaches the screen (a busy laptop): only a run that started
    from a journal says "Resumed where this laptop stopped"."""
    model, table = _stub_table()
    table.runner = _stub_runner(model, [_move_owed(1)], [])
    table.runner.resumed = resumed
    table.refresh()
    said = any(event.key == "ev_resumed" for event in model.log)
    assert said == resumed, [event.key for event in model.log]


def test_waiting_for_a_laptop_that_dropped_off_says_reconnect() -> None:
    """P-5.5: the screen names whom the table waits for, and a laptop whose link is down as away."""
    model, table = _stub_table()
    table.runner = _stub_runner(model, [_move_owed(1), _move_owed(2)], [])
    table.refresh()
    assert "waiting for ▲Bob and ■Cor" in screen_text(model)
    table.runner.connected = {2}  # Bob's link went down
    table.refresh()
    assert "waiting for ▲Bob's laptop to reconnect" in screen_text(model)
    table.runner.connected = {1, 2}
    table.refresh()
    assert "waiting for ▲Bob and ■Cor" in screen_text(model)


def test_a_laptop_with_no_link_at_all_says_it_lost_the_network_and_that_the_game_is_not_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """P-6.4: with every link down this laptop says it lost the network, rather than waiting on every
    other seat's laptop; given up after the patience, the game is not over: no winners, and the screen
    says how to resume."""
    model, table = _stub_table()
    runner = _stub_runner(model, [_move_owed(1), _move_owed(2)], [])
    table.runner = runner
    runner.connected, runner.network_lost = set(), True
    table.refresh()
    text = screen_text(model)
    assert "lost the network: no link to any other seat" in text
    assert "reconnect" not in text.split("lost the network")[0]

    async def lost(**_: Any) -> Outcome:
        no_rounds: Any = None  # no round was confirmed
        return Outcome(no_rounds, None, network_lost=True)

    monkeypatch.setattr(net_table, "resume_table", lost)
    outcome = asyncio.run(table.resume().run())
    assert outcome is not None and outcome.network_lost
    over = model.game_over
    assert over is not None and over.network_lost and over.stopped and over.winners == ()
    text = screen_text(model)
    assert "Lost the network: the game is not over" in text and "Game over" not in text
    assert "lanplay again (r in the lobby) to resume" in " ".join(text.split())
    assert "Winner" not in text


def test_a_game_stopped_by_a_leave_says_who_and_why_and_shows_no_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """P-5.5, P-5.7: the box of a game that ended early says who left and that nobody is convicted, and
    shows the scores of the confirmed rounds without places or a winner (the game did not end)."""
    model, table = _stub_table()
    table.runner = _stub_runner(model, [], [])

    async def left(**_: Any) -> Outcome:
        no_rounds: Any = SimpleNamespace(rounds=())
        return Outcome(no_rounds, None, finished=True, stops=(Stopped(0, 2, 2, "left", "left the table"),))

    monkeypatch.setattr(net_table, "resume_table", left)
    asyncio.run(table.resume().run())
    over = model.game_over
    assert over is not None and over.stopped and over.winners == () and not over.network_lost
    text = " ".join(screen_text(model).split())
    assert "Game stopped" in text and "■Cor left the table: the round is void, nobody is convicted" in text
    assert "Scores after 0 confirmed round(s)" in text
    assert "Final table" not in text and "1. " not in text.split("Game stopped")[1] and "Winner" not in text


@pytest.mark.parametrize("answer", [True, False])
def test_when_a_seat_is_gone_the_screen_asks_to_go_on_with_a_bot_or_end(answer: bool) -> None:
    """P-5.7: a table that ended early asks the person at it, by name of the seat that emptied, to go on
    with a bot there or to end; the choice made is what the table is told."""
    model, table = _stub_table()
    runner: Any = _stub_runner(model, [], [])
    runner.session.present = lambda: (0, 2)
    runner.plan = SimpleNamespace(seats=(None, None, None))

    async def ask() -> bool:
        asked = asyncio.ensure_future(table._ask_go_on(runner))
        await asyncio.sleep(0)
        text = " ".join(screen_text(model).split())
        assert "▲Bob is gone: go on?" in text  # the prompt, and in the log what each answer does:
        assert "▲Bob is no longer at the table" in text and "One 'end' ends it for everyone" in text
        assert "Go on with a bot in ▲Bob's seat" in text and "End the game here" in text
        choice = next(c for c in model.choices if c.code == ("go_on_bot" if answer else "end_here"))
        model.submit(choice.moves[0])
        return await asked

    assert asyncio.run(ask()) is answer
    assert model.moves == ()  # the question is gone once answered


def test_hidden_choices_already_made_show_as_marks_and_never_as_cards() -> None:
    """T-3.1 on a networked table: a committed card is not applied until every seat has chosen; the
    screen marks who has chosen (this seat's own card beside its name), never another seat's card."""
    model, table = _stub_table()
    committed = [1]
    table.runner = _stub_runner(model, [_move_owed(0), _move_owed(2)], committed)
    table.refresh()
    text = screen_text(model)
    assert "Chosen: ·●Ann ✓▲Bob ·■Cor" in text and "15" not in text.split("Chosen:")[1].split("\n")[0]
    model.recent["my_choice"] = 3
    committed[:] = [0, 1]
    table.refresh()
    assert "Chosen: ✓●Ann 3 ✓▲Bob ·■Cor" in screen_text(model)


def _told(table: NetTable, *events: Any) -> None:
    async def tell() -> None:
        for event in events:
            table.on_event(event)
        table.refresh()

    asyncio.run(tell())


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", "Round 1: ▲Bob broke rule P-5.1: moved out of turn"),
        ("nl", "Ronde 1: ▲Bob overtrad regel P-5.1: speelde terwijl een ander aan de beurt was"),
    ],
)
def test_an_exposure_is_told_in_plain_words(lang: str, words: str) -> None:
    """P-5.4: a seat exposed by a proof: who, which rule, what it means, and the proof's own reason."""
    model, table = _stub_table(lang)
    _told(table, Exposed(1, "P-5.1", "a move of seat 1 when seat 2 was to move", {}))
    text = " ".join(screen_text(model).split())
    assert words in text and "a move of seat 1 when seat 2 was to move" in text
    assert model.audits[1].ok is False


def test_a_stop_and_a_leave_are_told_as_convicting_nobody() -> None:
    """P-5.5, P-5.7: a stop names whom the table waited for and for what, a leave who left; neither is
    told as a broken rule."""
    model, table = _stub_table()
    _told(table, Stopped(0, 1, 2, "move", "waited 120 s for seat 2's move"))
    text = " ".join(screen_text(model).split())
    assert "Round 1: the round stopped and is void, nobody convicted" in text
    assert "▲Bob stopped the round waiting for ■Cor (move)" in text and "broke rule" not in text
    assert model.audits[1].ok is False  # the round is void
    model, table = _stub_table()
    _told(table, Stopped(0, 2, 2, "left", "left the table"))
    text = " ".join(screen_text(model).split())
    assert "■Cor left the table: the round is void, nobody is convicted" in text and "broke rule" not in text


# --- the lobby ---------------------------------------------------------------------------------------------


async def _lobby(home: Path, pipe: PipeInput, tables: list[tuple[TableModel, NetTable]]) -> tuple[LobbyModel, Any]:
    lobbies: list[LobbyModel] = []
    task = asyncio.ensure_future(
        run_lobby(
            identity=load_or_create_identity(home), data_dir=home, interface=interface_from_env(None), name="Ann",
            lang="en", bot_delay=0.0, input=pipe, output=DummyOutput(), on_lobby=lobbies.append,
            on_table=lambda model, table: tables.append((model, table)),
        )
    )
    await _until(lambda: bool(lobbies) or task.done(), what="the lobby")
    return lobbies[0], task


def test_lobby_lists_an_advertised_table_and_joins_it(_home: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        host_id = Identity.generate()
        host = asyncio.ensure_future(
            host_table(
                identity=host_id, data_dir=tmp_path / "host", name="Hostess", game="take6", options={}, seats=2,
                bots=0, interface=LOOPBACK, player=BotPlayer("take6"), advertise=True,
            )
        )
        tables: list[tuple[TableModel, NetTable]] = []
        try:
            with create_pipe_input() as pipe:
                lobby, task = await _lobby(_home, pipe, tables)

                fingerprint = host_id.public.fingerprint

                def mine() -> int | None:
                    return next((i for i, a in enumerate(lobby.tables) if a.host_fingerprint == fingerprint), None)

                await _until(lambda: mine() is not None, 20, "the advertised table in the lobby")
                text = lobby_text(lobby)
                assert "Hostess" in text and host_id.public.fingerprint in text and "6 nimmt!" in text
                assert "1/2" in text
                assert f"You: Ann · fingerprint {load_or_create_identity(_home).public.fingerprint}" in text
                assert "the game starts by itself when every seat is taken" in " ".join(text.split())
                while lobby.selected != mine():
                    pipe.send_text(DOWN)
                    await asyncio.sleep(0.05)
                pipe.send_text(ENTER)
                await _until(lambda: bool(tables), what="the table screen")
                model, _ = tables[0]
                await _until(lambda: model.kind == "play", what="the first decision")
                text = screen_text(model)
                # The seat order is drawn (P-3.2): the host is not always seat 0.
                assert sorted(model.players) == ["Ann", "Hostess"] and model.players[model.my_seat] == "Ann"
                assert "Your hand (10)" in text and "Row 4" in text and "Hostess" in text
                await _leave(model, pipe)
                await _until(lambda: task.done() or lobby.action is None, what="the lobby again")
                pipe.send_text("q")
                assert await asyncio.wait_for(task, 20) == 0
        finally:
            host.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await host

    asyncio.run(asyncio.wait_for(scenario(), 90))


def test_lobby_creates_tables_waits_for_seats_and_comes_back_after_the_game(_home: Path) -> None:
    """c opens the form. First a 6th Sense table for 3 with one bot: the table screen lists the seats
    taken and the free one, the lobby sees the advert, and q leaves at once (nothing has started).
    Then Sixes for 3 with two bots and one chip: played to the game-over screen, q back to the lobby."""

    async def scenario() -> None:
        tables: list[tuple[TableModel, NetTable]] = []
        with create_pipe_input() as pipe:
            lobby, task = await _lobby(_home, pipe, tables)
            me = load_or_create_identity(_home).public.fingerprint
            pipe.send_text("?")
            await _until(lambda: lobby.show_help, what="the lobby's help")
            assert "Read yours aloud and check the host's" in " ".join(lobby_text(lobby).split())
            pipe.send_text("?")
            await _until(lambda: not lobby.show_help, what="the list again")
            pipe.send_text("c")
            await _until(lambda: lobby.form is not None, what="the form")
            pipe.send_text(DOWN + LEFT + DOWN + RIGHT)  # 6th Sense, 3 players, 1 bot
            await _until(lambda: lobby.form is not None and (lobby.form.seats, lobby.form.bots) == (3, 1))
            assert "You take seat 1; 1 bot(s); 1 seat(s) wait for people" in lobby_text(lobby)
            pipe.send_text(ENTER)
            await _until(lambda: bool(tables), what="the table screen")
            model, _ = tables[0]
            await _until(lambda: len(model.seated) == 2, what="the bot in its seat")
            text = screen_text(model)
            assert f" 1. Ann ({me})" in text and " 2. Ann's bot 1 (" in text and " 3. free" in text
            assert "waiting for players: 2 of 3 seats taken" in text
            assert "The game starts by itself when every seat is taken" in text
            # The advert is updated as seats fill: under load the first one seen may still say 1 of 3.
            def advertised() -> bool:
                return any(a.seats_taken == 2 and a.seats_total == 3 for a in lobby.tables if a.host_fingerprint == me)

            await _until(advertised, 20, "our advert: 2 of 3 seats taken")
            pipe.send_text("q")  # before the start: no question asked
            await _until(lambda: lobby.action is None, what="the lobby again")
            await _until(lambda: all(a.host_fingerprint != me for a in lobby.tables), 20, "the advert gone")

            pipe.send_text("c")
            await _until(lambda: lobby.form is not None, what="the form")
            form = lobby.form
            assert form is not None
            pipe.send_text(RIGHT * 2)  # game: 6th Sense → 6 nimmt! → Sixes
            await _until(lambda: form.game_id == "sixes", what="Sixes")
            pipe.send_text(DOWN + LEFT * 5 + DOWN + RIGHT * 3 + DOWN + LEFT * 20)  # 3 players, 2 bots, 1 chip
            await _until(lambda: (form.seats, form.bots, form.values.get("chips")) == (3, 2, 1), what="the form")
            assert "You take seat 1; 2 bot(s); 0 seat(s) wait for people" in lobby_text(lobby)
            pipe.send_text(ENTER)
            await _until(lambda: len(tables) == 2, what="the table screen")
            model, table = tables[1]
            await _press_enter_until(model, pipe, lambda: model.game_over is not None)
            assert "Game over" in screen_text(model) and table.record_path is not None
            pipe.send_text("q")  # back to the lobby
            await _until(lambda: lobby.action is None, what="the lobby again")
            pipe.send_text("q")
            assert await asyncio.wait_for(task, 20) == 0

    asyncio.run(asyncio.wait_for(scenario(), 90))


def test_the_lobby_form_sets_the_tables_patience_and_the_host_signs_it_in_the_plan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """P-5.5: the patience is a field of the create form (how long a laptop that stopped answering is
    waited for), and the table is hosted with it, so it is signed in the plan every seat plays by."""
    from lanplay.ui.lobby_model import CreateForm

    form = CreateForm("sixes", seats=3, bots=2)
    form.field = form.fields().index("patience")
    assert form.action().patience == 120  # by default
    form.change(-1)
    assert form.action().patience == 60
    lobby = LobbyModel("Ann", "abcd", LOOPBACK)
    lobby.form = form
    assert "Wait for a laptop" in lobby_text(lobby) and "1:00 min" in lobby_text(lobby)
    hosted: dict[str, Any] = {}

    async def host_table(**kwargs: Any) -> None:
        hosted.update(kwargs)

    monkeypatch.setattr(net_table, "host_table", host_table)
    _, table = _stub_table()
    table.host(options={}, seats=3, bots=2, patience=form.action().patience)
    asyncio.run(table._start())  # type: ignore[misc]
    assert hosted["reconnect_timeout"] == 60  # the lobby's patience: LobbyHost(patience=...) signs it
