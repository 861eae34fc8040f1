"""The lobby without a screen: the network chooser, join by address, resume with nothing to resume,
where a table and its bots are; and the lobby pieces they rest on (table info, a full table, bot seats)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from lanplay.net.discovery import TableAdvert
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo, TableFull, TablePlan, fetch_table_info, join_lobby
from lanplay.net.network import Network
from lanplay.table.tables import bot_name
from lanplay.ui.describe import bot_lines
from lanplay.ui.lobby_model import ChangeNetwork, JoinAddress, LobbyModel, Resume, ResumeOffer
from lanplay.ui.lobby_screen import footer, lobby_text
from protocol.identity import Identity
from protocol.plan import Roster, bot_seats, build_plan, order_commitment
from protocol.table import PROTOCOL_VERSION

NETWORKS = (Network("eth0", "10.20.0.5"), Network("wlan0", "192.168.1.23"), Network("lo", "127.0.0.1"))
HOST = "127.0.0.1"


def first_start() -> LobbyModel:
    model = LobbyModel("Ann", "abcd-ef01", "", "en", network_label="", networks=NETWORKS)
    model.open_networks()
    return model


def test_first_start_asks_for_the_network_by_the_names_a_person_knows() -> None:
    model = first_start()
    assert model.mode == "networks"
    text = lobby_text(model)
    assert "Which network do you play on?" in text
    assert "wlan0 192.168.1.23" in text and "eth0 10.20.0.5" in text
    assert "this laptop only  (127.0.0.1)" in text
    assert "Enter play on this network" in text
    model.move(1)
    model.confirm()
    assert model.action == ChangeNetwork(NETWORKS[1])
    assert model.mode == "list"


def test_escape_at_first_start_plays_on_this_laptop_only() -> None:
    model = first_start()
    model.back()
    assert model.action == ChangeNetwork(NETWORKS[-1])


def test_the_lobby_says_its_network_and_i_changes_it() -> None:
    model = LobbyModel("Ann", "abcd-ef01", "192.168.1.23", "en", network_label="wlan0 192.168.1.23", networks=NETWORKS)
    text = lobby_text(model)
    assert "tables on wlan0 192.168.1.23" in text
    assert "i network" in text and "a address" in text
    model.open_networks()
    assert model.choosing == 1  # the network in use is the one under the cursor
    model.move(1)
    model.confirm()
    assert model.action == ChangeNetwork(NETWORKS[2])


def test_a_network_set_on_the_command_line_is_not_changed_in_the_lobby() -> None:
    model = LobbyModel("Ann", "f", "127.0.0.1", "en", networks=NETWORKS, network_fixed="LANPLAY_INTERFACE")
    model.open_networks()
    assert model.mode == "list"
    assert "The network is set by LANPLAY_INTERFACE" in lobby_text(model)


def test_join_by_address_refuses_a_bad_port_and_joins_a_good_one() -> None:
    model = LobbyModel("Ann", "f", "127.0.0.1", "en")
    model.open_address()
    assert model.mode == "address"
    model.type_text("10.0.0.7:99999")
    model.confirm()
    assert model.action is None
    assert "bad port '99999'" in lobby_text(model)
    for _ in "99999":
        model.erase()
    model.type_text("40123")
    model.confirm()
    assert model.action == JoinAddress(("10.0.0.7", 40123))


def test_r_with_nothing_to_resume_says_so() -> None:
    model = LobbyModel("Ann", "f", "127.0.0.1", "en")
    model.request_resume()
    assert model.action is None
    assert "There is no unfinished game to resume." in " ".join(plain for plain in lobby_text(model).split("\n"))
    model.set_resume(ResumeOffer("take6", ("Ann", "Ann's bot 1")))
    model.request_resume()
    assert model.action == Resume()
    assert "Enter join/resume" in "".join(text for _, text in footer(model)[1])


def test_enter_on_the_resume_line_resumes_and_the_tables_follow_it() -> None:
    """After a crash the lobby opens on the resume line: Enter resumes (not "no table is selected");
    ↓ moves on to the tables, ↑ back."""
    model = LobbyModel("Ann", "f", "127.0.0.1", "en")
    model.set_resume(ResumeOffer("take6", ("Ann", "Ann's bot 1")))
    assert "▸ This laptop stopped in the middle of a game of 6 nimmt!" in lobby_text(model)
    assert "Enter or r resumes it" in " ".join(lobby_text(model).split())
    model.confirm()
    assert model.action == Resume()
    model.action = None
    model.set_tables({"x": advert("cccc-dddd")})
    assert model.on_resume_line  # a table appearing does not take the selection away
    model.move(1)
    assert model.selected_table is not None and "▸ This laptop" not in lobby_text(model)
    model.move(1)  # round again to the resume line
    assert model.on_resume_line
    model.move(-1)
    assert model.selected_table is not None
    model.confirm()
    assert model.action != Resume()  # Enter on a table joins it (this advert's old protocol is refused)


def advert(fp: str, bots: int = 0) -> TableAdvert:
    return TableAdvert("ab" * 16, "take6", {}, 1, 4, "Bob", fp, 1, "10.0.0.9", 40999, host_bots=bots)


def test_the_selected_table_says_where_it_is_and_whose_laptop_runs_its_bots() -> None:
    model = LobbyModel("Ann", "aaaa-bbbb", "10.0.0.5", "en")
    model.set_tables({"x": advert("cccc-dddd", bots=2)})
    text = " ".join(lobby_text(model).split())
    assert "Hosted by Bob at 10.0.0.9:40999." in text
    assert "2 bot(s) run on Bob's laptop, which can see their cards." in text
    model.set_tables({"x": advert("aaaa-bbbb")})  # a table this laptop hosts: the command to join it
    assert "Your table: friends join with lanplay join 10.0.0.9:40999" in " ".join(lobby_text(model).split())


def test_bots_txt_round_trip_and_older_hosts() -> None:
    ad = advert("cccc-dddd", bots=2)
    assert TableAdvert.from_txt(ad.to_txt(), address=ad.address, port=ad.port) == ad
    older = {k: v for k, v in ad.to_txt().items() if k != "bots"}
    assert TableAdvert.from_txt(older, address=ad.address, port=ad.port).host_bots == 0


# --- the lobby pieces ------------------------------------------------------------------------------


def _seat(identity: Identity, name: str, runs_on: Identity | None = None) -> SeatInfo:
    return SeatInfo(name, identity.public.hex(), HOST, 5000, runs_on.public.hex() if runs_on else None)


def test_bot_seats_say_whose_laptop_runs_them() -> None:
    ann, bob, bot1, spare = (Identity.generate() for _ in range(4))
    seats = [_seat(ann, "Ann"), _seat(bot1, bot_name(1, "Ann"), ann), _seat(bob, "Bob"), _seat(spare, "Bot 9f", spare)]
    assert bot_seats(seats) == ((1, 0), (3, None))
    assert bot_lines(seats) == [
        "Ann's bot 1 runs on Ann's laptop, which can see its cards.",
        "Bot 9f runs on a laptop of its own: no seat here can see its cards.",
    ]
    roster = Roster("ab" * 16, "take6", {}, tuple(seats))  # the seat order is drawn (P-3.2)
    shares = [order_commitment(roster, i, os.urandom(32)) for i in range(len(seats))]
    plan = build_plan(roster, [c for c, _ in shares], [o for _, o in shares])
    assert TablePlan.from_json(plan.to_json()) == plan
    # A table without bots keeps the JSON (and so the table id) it had before bot seats were marked.
    assert "bot" not in _seat(ann, "Ann").to_json()
    assert len(bot_name(1, "A" * 60)) == 40


def test_table_info_and_a_full_table_refuses_as_full() -> None:
    async def scenario() -> None:
        host = Identity.generate()
        lobby = LobbyHost(host, "take6", {}, 2, SeatInfo("Host", host.public.hex(), HOST, 5000))
        port = await lobby.start(HOST)
        info = await fetch_table_info(HOST, port)
        assert (info.lobby_id, info.game, info.seats, info.taken) == (lobby.lobby_id, "take6", 2, 1)
        assert info.protocol == PROTOCOL_VERSION
        await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 5001))
        with pytest.raises(TableFull):
            await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Late", (HOST, 5002))
        await lobby.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("version", [None, PROTOCOL_VERSION + 1, "2"])
def test_join_by_address_stops_at_a_table_of_another_protocol_version(version: object, tmp_path: Any) -> None:
    """`lanplay join HOST:PORT` has no advert to read the version from: the lobby's /table says it,
    and a table of another version (or an older lanplay's, which says none) is refused before its
    lobby is joined, naming both versions."""
    from lanplay.table.runner import BotPlayer
    from lanplay.table.tables import join_table

    answer = {"lobby": "ab" * 16, "game": "take6", "seats": 3, "taken": 1}
    if version is not None:
        answer["protocol"] = version
    body = json.dumps(answer).encode()
    joins: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.read(4096)
        joins.append(request)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()

    async def scenario() -> str:
        server = await asyncio.start_server(serve, HOST, 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(LobbyError) as refused:
                await join_table(
                    identity=Identity.generate(), data_dir=tmp_path, name="Ann", interface=HOST,
                    player=BotPlayer("take6", "random"), address=(HOST, port),
                )  # fmt: skip
            return str(refused.value)
        finally:
            server.close()
            await server.wait_closed()

    why = asyncio.run(scenario())
    assert f"this lanplay speaks {PROTOCOL_VERSION}" in why, why
    assert ("none (an older lanplay)" if version is None else f"version {version}") in why, why
    assert all(b"GET /table" in request for request in joins)  # no websocket join was tried


def test_a_journal_damaged_in_the_middle_is_named_in_the_lobby_not_passed_over(tmp_path: Path) -> None:
    """I3: a journal whose middle is damaged cannot be resumed; it is set aside, and the lobby says so and
    where it went, instead of silently offering nothing."""
    from lanplay.ui.lobby_screen import _resume_offer

    folder = tmp_path / "journals"
    folder.mkdir()
    (folder / "00112233aabbccdd-seat0.jsonl").write_text('{"t": "table"}\nnot a journal line\n{"t": "x"}\n')
    model = LobbyModel("Ann", "f", "127.0.0.1", "en")
    assert _resume_offer(tmp_path, model) is None
    text = " ".join(lobby_text(model).split())
    assert "The journal of an unfinished game is damaged, so that game cannot be resumed." in text
    assert "00112233aabbccdd-seat0.jsonl.broken" in text
    assert (folder / "00112233aabbccdd-seat0.jsonl.broken").exists()
