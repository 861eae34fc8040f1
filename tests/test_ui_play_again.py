"""Play again at the game-over screen (issue 30; `lanplay.table.again`): the key, who has said yes and
who is not here yet (still deciding, or gone), the host's "start with those here", and a whole game
played again on loopback with the host's in-process bot coming back with it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput
from test_ui_net import LOOPBACK, _net_table, _play, _press_enter_until, _until

from engine.games import get_game
from lanplay.base.store import load_or_create_identity
from lanplay.net.discovery import TableAdvert
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo, join_lobby
from lanplay.table.runner import Outcome
from lanplay.ui.i18n import MESSAGES
from lanplay.ui.lobby_model import LobbyModel
from lanplay.ui.model import TableModel
from lanplay.ui.net_table import NetTable
from lanplay.ui.screens import footer, screen_text
from protocol.identity import Identity


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("LANPLAY_HOME", str(path))
    monkeypatch.setenv("LANPLAY_BOT_DELAY", "0")
    return path


def _over(can_play_again: bool) -> TableModel:
    model = TableModel(get_game("take6"), ["Ann", "Bob", "Cor"], 0, "en")
    model.can_play_again = can_play_again
    model.set_game_over((1,), (30, 5, 12), "/tmp/record.json")
    return model


def test_the_game_over_box_offers_play_again_and_a_asks_for_it() -> None:
    model = _over(True)
    text = " ".join(screen_text(model).split())
    assert "Press a to play again with the same players and options (a new seat draw), q to leave." in text
    assert "a play again" in "".join(part for _, part in footer(model)[-1])
    assert "game over: press a to play again, q to leave" in text
    model.request_again()
    assert model.again_requested and model.quit_requested  # the screen closes; the next one plays again


def test_without_a_table_to_play_again_the_box_only_offers_to_leave() -> None:
    model = _over(False)
    text = " ".join(screen_text(model).split())
    assert "play again" not in text and "Press q to leave." in text
    model.request_again()
    assert not model.again_requested and not model.quit_requested


def test_play_again_is_not_offered_while_the_game_is_on() -> None:
    model = TableModel(get_game("take6"), ["Ann", "Bob"], 0, "en")
    model.can_play_again = True
    model.request_again()
    assert not model.again_requested


def _seat(name: str, identity: Identity, runs_on: str | None = None) -> SeatInfo:
    return SeatInfo(name, identity.public.hex(), LOOPBACK, 40000 + len(name), runs_on)


def _prior() -> tuple[Any, list[Identity]]:
    ids = [Identity.generate() for _ in range(4)]
    seats = (_seat("Ann", ids[0]), _seat("Bob", ids[1]), _seat("Ann's bot 1", ids[2], ids[0].public.hex()),
             _seat("Cor", ids[3]))  # fmt: skip
    return SimpleNamespace(table_id="ab" * 16, game="take6", options={}, seats=seats, patience=120), ids


def test_the_screen_lists_who_said_yes_and_who_is_still_deciding() -> None:
    """Of the finished table's laptops: those seated at the new table said yes; a bot comes with its laptop
    and is neither."""
    prior, ids = _prior()
    model = TableModel(get_game("take6"), [s.name for s in prior.seats], 0, "en")
    table = NetTable(model, identity=ids[1], data_dir=Path("/nonexistent"), interface=LOOPBACK, name="Bob")
    table.again(prior)
    table._on_seats([prior.seats[0], prior.seats[2], prior.seats[1]])  # Ann's lobby: Ann, her bot, Bob
    text = " ".join(screen_text(model).split())
    assert "play again: said yes: Ann, Bob; not here yet: Cor" in text
    assert "Play again: a new table with the same players and options, and a new seat draw" in text
    assert "s: start with those here" not in text  # only the laptop that hosts it can start it
    table._on_again_hosts(frozenset({3}))  # Cor's laptop said yes too: it hosts one until it sees Ann's
    assert "play again: said yes: Ann, Bob, Cor; not here yet: –" in " ".join(screen_text(model).split())


def test_the_host_of_the_new_table_may_start_it_with_those_here() -> None:
    prior, ids = _prior()
    model = TableModel(get_game("take6"), [s.name for s in prior.seats], 0, "en")
    table = NetTable(model, identity=ids[0], data_dir=Path("/nonexistent"), interface=LOOPBACK, name="Ann")
    table.again(prior)
    started: list[bool] = []

    def start() -> bool:
        started.append(True)
        return False  # e.g. too few players for the game

    lobby: Any = SimpleNamespace(taken=(prior.seats[0], prior.seats[2]), seats=4, start_with_those_here=start)
    model.pre_game = True
    table._on_again_lobby(lobby, 5000)
    text = " ".join(screen_text(model).split())
    assert "s: start with those here · said yes: Ann; not here yet: Bob, Cor" in text
    model.request_start_now()
    assert started == [True]
    assert model.error is not None and "needs more players" in model.error.text("en")


def test_a_finished_game_is_played_again_at_a_new_table_with_the_hosts_bots(home: Path) -> None:
    """Sixes with one chip ends after one round (X-3.1); `a` at the game-over screen plays again: the
    laptop that hosted hosts again (no lower seat said yes), its bots come back, a new seat draw."""
    model, table = _net_table(home, "sixes", 2, {"chips": 1})

    async def finish_then_again(model: TableModel, pipe: PipeInput) -> None:
        await _press_enter_until(model, pipe, lambda: model.game_over is not None)
        assert model.can_play_again
        pipe.send_text("a")

    first = asyncio.run(asyncio.wait_for(_play(model, table, finish_then_again), 90))
    assert isinstance(first, Outcome) and first.complete and model.again_requested
    prior = table.last_plan
    assert prior is not None
    model2 = TableModel(get_game(prior.game), [s.name for s in prior.seats], 0, "en")
    table2 = NetTable(
        model2, identity=load_or_create_identity(home), data_dir=home, table_dir=home / "journals-play",
        interface=LOOPBACK, name="Ann", bot_delay=0.0,
    ).again(prior)  # fmt: skip

    async def finish(model: TableModel, pipe: PipeInput) -> None:
        await _press_enter_until(model, pipe, lambda: model.game_over is not None)
        pipe.send_text("q")

    second = asyncio.run(asyncio.wait_for(_play(model2, table2, finish), 90))
    assert isinstance(second, Outcome) and second.complete
    again = table2.last_plan
    assert again is not None and again.table_id != prior.table_id
    assert again.game == prior.game and dict(again.options) == dict(prior.options)
    assert sorted(s.name for s in again.seats) == sorted(s.name for s in prior.seats)
    assert "Play again: a new table" in screen_text(model2)


@pytest.mark.parametrize("lang", sorted(MESSAGES))
def test_the_play_again_words_exist_in_every_language(lang: str) -> None:
    keys = ("again_key", "keys_hint_over_again", "ev_again", "again_cannot_start", "net_again", "net_again_host",
            "game_over_status_again")  # fmt: skip
    for key in keys:
        assert key in MESSAGES[lang]


def test_a_play_again_lobby_refuses_a_stranger_and_seats_a_player_of_the_finished_table() -> None:
    async def scenario() -> None:
        host, bob, stranger = Identity.generate(), Identity.generate(), Identity.generate()
        lobby = LobbyHost(
            host, "sixth-sense", {}, 3, SeatInfo("Ann", host.public.hex(), LOOPBACK, 5000),
            only=frozenset({host.public.hex(), bob.public.hex()}),
        )  # fmt: skip
        port = await lobby.start(LOOPBACK)
        try:
            with pytest.raises(LobbyError, match="for the players of the table it plays again"):
                await join_lobby(stranger, lobby.lobby_id, LOOPBACK, port, "Eve", (LOOPBACK, 5001))
            joined = asyncio.ensure_future(join_lobby(bob, lobby.lobby_id, LOOPBACK, port, "Bob", (LOOPBACK, 5002)))
            await _until(lambda: len(lobby.taken) == 2)
            assert not lobby.drawing
            # The third player does not come: the host starts with those here (a game for 2 to 6).
            assert lobby.start_with_those_here()
            plan = await asyncio.wait_for(joined, 30)
            assert sorted(s.name for s in plan.seats) == ["Ann", "Bob"] and lobby.drawing
            assert not lobby.start_with_those_here()  # once drawn, nothing more to start
        finally:
            await lobby.close()

    asyncio.run(scenario())


def test_a_lobby_is_not_started_with_fewer_players_than_the_game_needs() -> None:
    async def scenario() -> None:
        host = Identity.generate()
        lobby = LobbyHost(host, "sixes", {}, 3, SeatInfo("Ann", host.public.hex(), LOOPBACK, 5000))
        await lobby.start(LOOPBACK)
        try:
            assert not lobby.start_with_those_here()  # Sixes needs more players than Ann alone
            assert lobby.seats == 3 and not lobby.drawing
        finally:
            await lobby.close()

    asyncio.run(scenario())


def test_the_lobby_list_leaves_out_play_again_tables() -> None:
    """A play-again table is for the players of the finished table, who join it from their game-over screen."""
    model = LobbyModel("Ann", "aaaa-bbbb", "10.0.0.5", "en")
    open_table = TableAdvert("ab" * 16, "take6", {}, 1, 4, "Bob", "cccc-dddd", 1, "10.0.0.9", 40999)
    again = TableAdvert("cd" * 16, "take6", {}, 1, 4, "Cor", "eeee-ffff", 1, "10.0.0.8", 40998, again_of="ef" * 16)
    model.set_tables({open_table.table_id: open_table, again.table_id: again})
    assert [t.table_id for t in model.tables] == [open_table.table_id]
