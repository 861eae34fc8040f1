"""The table's bot level (issue 32: "a seat taken over by a bot when its person leaves plays at the table's
level"): the lobby form's level is signed in the plan, carried into every continuation (P-5.7), and is the
kind a laptop's bot plays at that table, whoever's laptop runs it."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace

import pytest
from tablenet import make_table
from test_take_back import HOST, _leave_after_a_round, _offers, _plan_seats

from lanplay.net.lobby import LobbyHost, SeatInfo, join_lobby
from lanplay.table.tables import table_level
from protocol.continuation import Continuation, decide
from protocol.identity import Identity
from protocol.plan import PlanError, TablePlan

GAME, OPTIONS = "sixes", {"chips": 6}


def test_the_lobby_forms_level_is_signed_in_the_plan_every_seat_gets() -> None:
    async def scenario() -> tuple[TablePlan, TablePlan]:
        host, guest = Identity.generate(), Identity.generate()
        lobby = LobbyHost(host, "take6", {}, 2, SeatInfo("Ann", host.public.hex(), HOST, 5000), level="expert")
        port = await lobby.start(HOST)
        try:
            joined = await join_lobby(guest, lobby.lobby_id, HOST, port, "Bob", (HOST, 5001))
            return joined, await lobby.wait_plan()
        finally:
            await lobby.close()

    joined, hosted = asyncio.run(scenario())
    assert joined == hosted and joined.level == "expert"
    joined.verify()
    assert TablePlan.from_json(joined.to_json()).table_id == joined.table_id
    with pytest.raises(PlanError):  # the level is in what the seat draw and every signature are bound to
        replace(joined, level="easy").verify()


def test_a_plan_naming_a_level_that_is_no_word_is_refused_in_one_line() -> None:
    raw = {"level": "Expert; rm -rf"}
    with pytest.raises(PlanError, match="bot level is a lowercase word"):
        Continuation.from_json({**_continuation().to_json(), **raw})


def _continuation(level: str | None = "easy") -> Continuation:
    table = _leave_after_a_round(make_table(GAME, 3, OPTIONS, seed=5), 2)
    s0 = table.sessions[0]
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    offers = _offers(table, (0, 1), {2: (bot, HOST, 41000)})
    plan = decide(s0.settings.table, s0.record_digest(), _plan_seats(table), (0, 1), s0.summary()["rounds"], GAME,
                  OPTIONS, 30, offers, level=level)  # fmt: skip
    assert plan is not None
    return plan


def test_a_bot_that_takes_a_seat_plays_at_the_tables_level() -> None:
    plan = _continuation("easy")
    assert plan.level == "easy" and Continuation.from_json(plan.to_json()).level == "easy"
    assert plan.seats[2].runs_on is not None  # the bot in the seat its person left
    assert table_level(plan, "heuristic") == "easy"  # what the laptop that runs it makes it play at


def test_a_table_without_a_level_lets_the_laptop_choose() -> None:
    plan = _continuation(None)
    assert "level" not in plan.to_json() and table_level(plan, "normal") == "normal"
    assert table_level(replace(plan, level="grandmaster"), "normal") == "normal"  # a level this lanplay lacks
