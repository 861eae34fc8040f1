"""Every field of a seat plan is checked by each signer before it commits or signs (P-6.7): the
options by the engine, the mesh addresses, who runs each bot (only that laptop may say so), and the
version of the rules the plan pins. A field that fails is one clear refusal in the lobby (at the host
when a joiner brings it, at each joiner when a modified host puts it in a roster) and again in
`TablePlan.verify`, never an exception once a table has started."""

from __future__ import annotations

import asyncio
import dataclasses
import os

import pytest
from websockets.asyncio.client import connect

from lanplay.net import lobby as lobby_module
from lanplay.net.lobby import LobbyError, LobbyHost, MeshAddressTaken, _JoinerSeat, join_lobby
from lanplay.table.tables import MESH_PORT_TRIES, join_on_a_free_port
from protocol.identity import Identity
from protocol.plan import (
    PlanDraw,
    PlanError,
    Roster,
    SeatInfo,
    TablePlan,
    bot_vouch,
    build_plan,
    check_mesh_address,
    order_commitment,
)
from protocol.table import PROTOCOL_VERSION
from protocol.version import RULES_DIGEST

HOST = "127.0.0.1"
LOBBY = "cd" * 16
GAME = "sixth-sense"


def _roster(n: int = 3, **changes: object) -> tuple[list[Identity], Roster]:
    people = [Identity.generate() for _ in range(n)]
    seats = tuple(SeatInfo(f"P{i}", p.public.hex(), HOST, 6300 + i) for i, p in enumerate(people))
    return people, dataclasses.replace(Roster(LOBBY, GAME, {}, seats), **changes)  # type: ignore[arg-type]


def _signed_plan(roster: Roster, people: list[Identity]) -> TablePlan:
    """A plan every listed key signed (colluders all, or a test): `verify` must still check its fields."""
    shares = [order_commitment(roster, i, os.urandom(32)) for i in range(len(roster.seats))]
    plan = build_plan(roster, [c for c, _ in shares], [o for _, o in shares])
    by_key = {p.public.hex(): p for p in people}
    return plan.with_signatures([plan.sign(by_key[s.public_key]) for s in plan.seats])


def _joiner(people: list[Identity], roster: Roster, index: int = 1) -> _JoinerSeat:
    return _JoinerSeat(people[index], roster.lobby_id, roster.seats[index], people[0].public.hex(), roster.game)


# --- options, by the engine ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "options", "seats", "why"),
    [
        (GAME, {"bogus": 1}, 3, "bogus"),
        ("sixes", {"chips": 0}, 3, "chips"),
        ("sixes", {}, 2, "3–8 players"),
        ("no-such-game", {}, 3, "unknown game"),
    ],
)
def test_options_the_engine_refuses_are_one_clear_refusal_at_every_signer(
    game: str, options: dict[str, object], seats: int, why: str
) -> None:
    """A modified host offers options (or a seat count) the engine refuses: no joiner commits to the
    draw (one line naming the field, P-6.7), a plan carrying them fails `verify` (the runner's check),
    and the real host refuses to open such a lobby at all."""
    people, roster = _roster(seats, game=game, options=options)
    with pytest.raises(PlanError, match=why) as refused:
        PlanDraw(roster, people[1], os.urandom)
    assert refused.value.rule == "P-6.7"
    with pytest.raises(PlanError, match=why):  # `join_lobby` says "the host's lobby is not to be trusted: ..."
        _joiner(people, roster).handle({"draw": {"attempt": 1, "roster": roster.to_json()}}, None)
    with pytest.raises(PlanError, match=why):
        _signed_plan(roster, people).verify()

    async def host() -> None:
        lobby = LobbyHost(people[0], game, options, seats, roster.seats[0])
        with pytest.raises(LobbyError, match=f"cannot host: .*{why}"):
            await lobby.start(HOST)
        await lobby.close()

    asyncio.run(host())


def test_options_the_engine_knows_pass() -> None:
    people, roster = _roster(3, game="sixes", options={"chips": 12})
    PlanDraw(roster, people[1], os.urandom)
    _signed_plan(roster, people).verify()


# --- mesh addresses --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "224.0.0.251",  # multicast (mDNS's own)
        "239.1.2.3",
        "ff02::1",
        "::ffff:224.0.0.1",  # the same, as IPv4-mapped IPv6
        "::ffff:127.0.0.1",  # a second spelling of 127.0.0.1: it could name another seat's listener
        "::ffff:7f00:1",
        "0.0.0.0",  # unspecified
        "::",
        "0.1.2.3",  # "this network"
        "255.255.255.255",  # limited broadcast
        "240.0.0.7",  # reserved
        "fe80::1%eth0",  # a zone means nothing on another laptop
        "127.000.000.001",
        "evil.example",
        "",
    ],
)
def test_an_address_no_peer_can_listen_on_is_refused(address: str) -> None:
    with pytest.raises(PlanError) as refused:
        check_mesh_address(address)
    assert refused.value.rule == "P-6.7"
    people, roster = _roster(3)
    raw = roster.to_json()
    raw["seats"][2]["mesh"] = [address, 6302]  # type: ignore[index]
    with pytest.raises(PlanError):  # a modified host's roster: refused before this seat commits
        _joiner(people, roster).handle({"draw": {"attempt": 1, "roster": raw}}, None)


@pytest.mark.parametrize("address", ["127.0.0.1", "192.168.1.20", "10.0.0.255", "169.254.3.4", "::1", "fd00::5"])
def test_an_address_a_peer_can_listen_on_passes(address: str) -> None:
    assert check_mesh_address(address) == address


def test_two_seats_naming_one_mesh_address_are_refused() -> None:
    """One port has one listener: a seat naming another's mesh address (its own link would lead to the
    other seat) is refused by every signer."""
    people, roster = _roster(3)
    seats = list(roster.seats)
    seats[2] = dataclasses.replace(seats[2], address=seats[0].address, port=seats[0].port)
    roster = dataclasses.replace(roster, seats=tuple(seats))
    with pytest.raises(PlanError, match="name one mesh address"):
        PlanDraw(roster, people[1], os.urandom)
    with pytest.raises(PlanError, match="name one mesh address"):
        _signed_plan(roster, people).verify()


async def _raw_join(port: int, lobby_id: str, identity: Identity, join: dict[str, object]) -> object:
    """A modified joiner: it sends ``join`` as it likes and returns the host's first answer."""
    async with connect(f"ws://{HOST}:{port}/", compression=None, proxy=None) as ws:
        cipher, _ = await lobby_module._handshake(ws, identity, lobby_id, initiator=True)
        await lobby_module._send(ws, cipher, {"join": join})
        return await lobby_module._recv(ws, cipher)


def _join(mesh: list[object], **more: object) -> dict[str, object]:
    return {"name": "Mallory", "mesh": mesh, "protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST, **more}


def test_the_host_refuses_a_joiner_whose_mesh_address_cannot_be_its_own() -> None:
    """A joiner announcing a multicast address, or the host's own mesh address, is refused at its
    join with one line (P-6.7); the lobby goes on and an honest joiner is seated."""

    async def scenario() -> list[object]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 2, SeatInfo("Host", host.public.hex(), HOST, 6310))
        port = await lobby.start(HOST)
        try:
            answers = [
                await _raw_join(port, lobby.lobby_id, Identity.generate(), _join(["224.0.0.251", 6311])),
                await _raw_join(port, lobby.lobby_id, Identity.generate(), _join([HOST, 6310])),
            ]
            with pytest.raises(LobbyError, match="multicast"):  # the real joiner says so before it dials
                await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Bob", ("224.0.0.251", 6312))
            plan = await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Ann", (HOST, 6313))
            plan.verify()
        finally:
            await lobby.close()
        return answers

    multicast, taken = asyncio.run(scenario())
    assert isinstance(multicast, dict) and "multicast" in str(multicast.get("error")), multicast
    assert isinstance(taken, dict) and "'Host''s" in str(taken.get("error")), taken


def test_a_joiner_that_drew_a_seated_peers_port_draws_another_and_is_seated() -> None:
    """Two laptops on one address can draw one free port at once (a port is announced before it
    listens): the lobby refuses the second as a taken mesh address (P-6.7), and that joiner draws another
    port and asks again, so the table fills. A joiner refused every time stops after `MESH_PORT_TRIES`
    draws, saying why."""

    async def scenario() -> tuple[list[tuple[str, int]], TablePlan, int]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 2, SeatInfo("Host", host.public.hex(), HOST, 6330))
        port = await lobby.start(HOST)
        drawn: list[tuple[str, int]] = []
        stubborn: list[tuple[str, int]] = []

        async def first_draw_collides(mesh: tuple[str, int]) -> TablePlan:
            drawn.append(mesh)
            announced = (HOST, 6330) if len(drawn) == 1 else mesh  # the host's own port, drawn at once
            return await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Bob", announced)

        async def always_collides(mesh: tuple[str, int]) -> TablePlan:
            stubborn.append(mesh)
            return await join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Eve", (HOST, 6330))

        try:
            with pytest.raises(MeshAddressTaken, match="'Host''s"):
                await join_on_a_free_port(HOST, always_collides)
            plan = await join_on_a_free_port(HOST, first_draw_collides)
        finally:
            await lobby.close()
        return drawn, plan, len(stubborn)

    drawn, plan, stubborn_tries = asyncio.run(scenario())
    plan.verify()
    assert len(drawn) == 2 and drawn[1][1] != 6330
    assert sorted(s.port for s in plan.seats) == sorted([6330, drawn[1][1]])
    assert stubborn_tries == MESH_PORT_TRIES


# --- who runs a bot: only that laptop may say so ---------------------------------------------------


def test_a_joiner_cannot_name_an_honest_laptop_as_its_bot_host() -> None:
    """Mallory joins saying she is a bot on Ann's laptop (so Ann would sign that she sees Mallory's
    cards, and the record would say so): without Ann's word, with a word Mallory made up, or with Ann's
    word for another of Ann's bots, the host refuses her at her join (P-6.7). Ann's own bot, with
    Ann's word, is seated, and the signed plan says Ann runs it."""

    async def scenario() -> tuple[list[object], TablePlan]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, SeatInfo("Host", host.public.hex(), HOST, 6320))
        port = await lobby.start(HOST)
        ann, mallory, ann_bot = Identity.generate(), Identity.generate(), Identity.generate()
        ann_key = ann.public.hex()
        try:
            ann_task = asyncio.create_task(join_lobby(ann, lobby.lobby_id, HOST, port, "Ann", (HOST, 6321)))
            for _ in range(100):
                if len(lobby.taken) == 2:
                    break
                await asyncio.sleep(0.02)
            other_vouch = bot_vouch(ann, lobby.lobby_id, ann_bot.public.hex())
            answers = [
                await _raw_join(port, lobby.lobby_id, mallory, _join([HOST, 6322], bot=ann_key)),
                await _raw_join(port, lobby.lobby_id, mallory,
                                _join([HOST, 6322], bot=ann_key,
                                      vouch=bot_vouch(mallory, lobby.lobby_id, mallory.public.hex()))),
                await _raw_join(port, lobby.lobby_id, mallory, _join([HOST, 6322], bot=ann_key, vouch=other_vouch)),
            ]  # fmt: skip
            bot = join_lobby(ann_bot, lobby.lobby_id, HOST, port, "Ann's bot 1", (HOST, 6323), runs_on=ann_key,
                             vouch=other_vouch)  # fmt: skip
            plans = await asyncio.gather(ann_task, bot, lobby.wait_plan())
        finally:
            await lobby.close()
        assert plans[0] == plans[1] == plans[2]
        return answers, plans[0]

    answers, plan = asyncio.run(scenario())
    for answer in answers:
        assert isinstance(answer, dict) and "did not say so" in str(answer.get("error")), answer
    plan.verify()
    bot = next(s for s in plan.seats if s.name == "Ann's bot 1")
    assert bot.runs_on == next(s.public_key for s in plan.seats if s.name == "Ann")


def test_a_roster_naming_a_laptop_that_did_not_say_so_is_refused_by_every_signer() -> None:
    """A modified host seats Mallory as a bot on Ann's laptop: Ann, Bob and the runner refuse it,
    as they refuse a bot said to run on a laptop with no seat at the table."""
    people, roster = _roster(4)
    ann, mallory = people[1], people[3]
    seats = list(roster.seats)
    seats[3] = dataclasses.replace(seats[3], runs_on=ann.public.hex())
    lying = dataclasses.replace(roster, seats=tuple(seats))
    for signer in (1, 2):
        with pytest.raises(PlanError, match="did not say so"):
            PlanDraw(lying, people[signer], os.urandom)
    with pytest.raises(PlanError, match="did not say so"):
        _signed_plan(lying, people).verify()
    seats[3] = dataclasses.replace(seats[3], runs_on=Identity.generate().public.hex())
    with pytest.raises(PlanError, match="no seat at this table"):
        PlanDraw(dataclasses.replace(roster, seats=tuple(seats)), people[1], os.urandom)
    # Ann's word makes it so; a bot on a laptop of its own needs nobody's.
    seats[3] = dataclasses.replace(seats[3], runs_on=ann.public.hex(),
                                   vouch=bot_vouch(ann, LOBBY, mallory.public.hex()))  # fmt: skip
    PlanDraw(dataclasses.replace(roster, seats=tuple(seats)), people[2], os.urandom)
    seats[3] = dataclasses.replace(seats[3], runs_on=mallory.public.hex(), vouch=None)
    PlanDraw(dataclasses.replace(roster, seats=tuple(seats)), people[2], os.urandom)


# --- the rules' version --------------------------------------------------------------------------


def test_the_plan_pins_the_rules_and_a_laptop_of_other_rules_signs_nothing() -> None:
    """P-6.7: the plan pins the digest of the rules (`protocol.version`); a roster or plan of other
    rules is refused by every signer and by the runner's check, naming both versions; the real host
    refuses a joiner of other rules at its join."""
    other = "0" * 64
    people, roster = _roster(3, rules=other)
    assert roster.to_json()["rules"] == other
    with pytest.raises(PlanError, match=f"version {other[:12]}, this laptop's {RULES_DIGEST[:12]}"):
        PlanDraw(roster, people[1], os.urandom)
    with pytest.raises(PlanError, match="rules are version"):
        _signed_plan(roster, people).verify()
    people, roster = _roster(3)
    plan = _signed_plan(roster, people)
    assert plan.unsigned_json()["rules"] == RULES_DIGEST  # in what every seat signs, and in the table id
    assert plan.table_id != dataclasses.replace(plan, rules=other).table_id
    raw = plan.to_json()
    del raw["rules"]
    with pytest.raises(PlanError, match="pins the version of its rules"):
        TablePlan.from_json(raw)

    async def scenario() -> object:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 2, SeatInfo("Host", host.public.hex(), HOST, 6330))
        port = await lobby.start(HOST)
        try:
            return await _raw_join(port, lobby.lobby_id, Identity.generate(), _join([HOST, 6331], rules=other))
        finally:
            await lobby.close()

    answer = asyncio.run(scenario())
    assert isinstance(answer, dict) and "rules version 000000000000" in str(answer.get("error")), answer
