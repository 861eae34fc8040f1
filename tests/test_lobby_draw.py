"""The lobby's joint seat draw and signed plan against a modified host or joiner (I7, P-3.2, P-6.5):
the host's messages fed to real joiner seats (`_JoinerSeat`, sans-IO), and modified joiners against
the real host on loopback. Each test is an attack the lobby must withstand: it fails if the defence
named in it is removed."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import secrets
from typing import Any

import pytest
from test_mesh import until
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

from lanplay.net import lobby as lobby_module
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo, _JoinerSeat, join_lobby
from lanplay.table.runner import free_port
from protocol.commitment import Commitment, Opening
from protocol.encoding import JSONObject
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.plan import (
    PlanDraw,
    PlanError,
    Roster,
    TablePlan,
    commitment_from_json,
    draw_order,
    opening_from_json,
    order_commitment,
)
from protocol.table import PROTOCOL_VERSION
from protocol.version import RULES_DIGEST

HOST = "127.0.0.1"
GAME = "sixth-sense"
VERSION = {"protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST}  # what the real joiner adds to its join

# --- a modified host, sans-IO: the host's messages fed to real joiner seats (`_JoinerSeat`) ----------


@dataclasses.dataclass
class Lobby:
    host: Identity
    joiners: list[Identity]
    roster: Roster
    seats: list[_JoinerSeat]  # seats[i] is join index i + 1

    @staticmethod
    def make(n: int) -> Lobby:
        lobby_id = secrets.token_hex(16)
        host, joiners = Identity.generate(), [Identity.generate() for _ in range(n - 1)]
        infos = tuple(
            SeatInfo(f"P{i}", ident.public.hex(), HOST, free_port(HOST)) for i, ident in enumerate([host, *joiners])
        )
        roster = Roster(lobby_id, GAME, {}, infos)
        seats = [_JoinerSeat(ident, lobby_id, infos[i + 1], host.public.hex(), GAME) for i, ident in enumerate(joiners)]
        return Lobby(host, joiners, roster, seats)


@dataclasses.dataclass
class Attempt:
    mine: PlanDraw
    commitments: list[Commitment]
    openings: list[Opening]

    @property
    def order(self) -> tuple[int, ...]:
        return self.order_of(self.openings)

    def order_of(self, openings: list[Opening]) -> tuple[int, ...]:
        return draw_order(self.mine.roster, self.commitments, openings)


def _opening_json(o: Opening) -> JSONObject:
    return {"value": o.value.hex(), "nonce": o.nonce.hex()}


def _draw_until_reveals(lobby: Lobby, attempt: int, roster: Roster | None = None) -> Attempt:
    """The host runs the protocol honestly up to the point where it holds every reveal (it relays them,
    so it always sees them all before anyone else)."""
    roster = roster or lobby.roster
    mine = PlanDraw(roster, lobby.host, os.urandom)
    commitments = [mine.commitment]
    for seat in lobby.seats:
        reply, _ = seat.handle({"draw": {"attempt": attempt, "roster": roster.to_json()}}, None)
        assert reply is not None
        commitments.append(commitment_from_json(reply["commit"]["digest"]))  # type: ignore[index]
    host_open = mine.reveal(commitments)
    openings = [host_open]
    body = {"attempt": attempt, "list": [c.hex() for c in commitments], "host": _opening_json(host_open)}
    for seat in lobby.seats:
        reply, _ = seat.handle({"commits": body}, None)
        assert reply is not None
        openings.append(opening_from_json(reply["reveal"]))
    return Attempt(mine, commitments, openings)


def _finish(lobby: Lobby, attempt: int, drawn: Attempt) -> tuple[TablePlan, list[TablePlan | None]]:
    """The rest of an honest draw: reveals relayed, every seat signs, the host starts the plan."""
    plan, host_sig = drawn.mine.plan(drawn.openings)
    sigs = {lobby.host.public.hex(): host_sig}
    body = {"attempt": attempt, "list": [_opening_json(o) for o in drawn.openings]}
    for seat, ident in zip(lobby.seats, lobby.joiners, strict=True):
        reply, _ = seat.handle({"reveals": body}, None)
        assert reply is not None
        sigs[ident.public.hex()] = str(reply["sign"]["signature"])  # type: ignore[index]
    signed = plan.with_signatures([sigs[s.public_key] for s in plan.seats])
    return signed, [seat.handle({"start": signed.to_json()}, None)[1] for seat in lobby.seats]


def test_an_honest_relay_gives_every_joiner_the_signed_plan() -> None:
    """The harness above is the real protocol: every joiner returns the same verified plan."""
    lobby = Lobby.make(3)
    signed, plans = _finish(lobby, 1, _draw_until_reveals(lobby, 1))
    assert plans == [signed, signed]
    signed.verify()


def test_the_host_cannot_re_roll_the_draw_after_seeing_every_reveal() -> None:
    """P-3.2: the host relays every reveal, so it knows the drawn order first. A host that dislikes it
    and simply starts a new draw for the very same roster is left by every joiner, with an error that
    names the host's re-draw: it never gets to seat itself first by re-rolling."""
    forced, refusals = 0, []
    for _ in range(8):
        lobby = Lobby.make(3)
        for attempt in range(1, 65):
            try:
                drawn = _draw_until_reveals(lobby, attempt)
            except LobbyError as exc:  # a joiner refused the re-draw: the attack ends here
                refusals.append((attempt, str(exc)))
                break
            if drawn.order[0] == 0:  # the host (join index 0) would sit first
                signed, plans = _finish(lobby, attempt, drawn)
                if plans[0] == signed:
                    forced += 1
                break
    # Honestly the host sits first 1/3 of the time; 8 tables in a row is (1/3)^8.
    assert forced < 8, f"the host seated itself first at {forced} of 8 tables by re-rolling"
    # Every re-draw was refused at once (the second draw), and the refusal says the host did it.
    assert refusals and all(attempt == 2 for attempt, _ in refusals), refusals
    assert all("host started the seat draw again for the same seats" in why and "P-3.2" in why for _, why in refusals)


def _reveal_then(lobby: Lobby, message: JSONObject, seat: int = 0) -> None:
    """Every joiner commits and reveals in draw 1; then joiner ``seat`` gets ``message`` from the host."""
    _draw_until_reveals(lobby, 1)
    lobby.seats[seat].handle(message, None)


def _redraw(lobby: Lobby, roster: Roster, attempt: int = 2, seat: int = 0) -> None:
    lobby.seats[seat].handle({"draw": {"attempt": attempt, "roster": roster.to_json()}}, None)


def _barred_notice(lobby: Lobby, index: int, why: str = "it sent no reveal", step: str = "reveal") -> JSONObject:
    return {"barred": {"key": lobby.roster.seats[index].public_key, "step": step, "why": why}}


def test_a_host_that_drops_a_joiner_and_re_adds_it_cannot_re_draw() -> None:
    """Variants of the re-roll: the roster changed (a joiner dropped and put back, one swapped for a new
    key, the join order shuffled) after the reveals, with no seat barred: refused, naming the host."""
    for change in ("re-added", "swapped", "reordered"):
        lobby = Lobby.make(3)
        _draw_until_reveals(lobby, 1)
        seats = list(lobby.roster.seats)
        if change == "re-added":  # seat list without joiner 2, then with it again
            lobby.seats[0].handle({"seats": [s.to_json() for s in seats[:2]]}, None)
            lobby.seats[0].handle({"seats": [s.to_json() for s in seats]}, None)
        elif change == "swapped":
            seats[2] = SeatInfo("P9", Identity.generate().public.hex(), HOST, free_port(HOST))
        else:
            seats[1], seats[2] = seats[2], seats[1]
        with pytest.raises(LobbyError, match=r"host started the seat draw again .*without barring.*P-3\.2"):
            _redraw(lobby, dataclasses.replace(lobby.roster, seats=tuple(seats)))


def test_a_bar_pays_for_one_re_draw_and_is_seen_by_every_joiner() -> None:
    """The only re-draw after the reveals a joiner takes part in: one the host paid for by barring a
    seat of that draw (it withheld its reveal), which this joiner is told about; the barred seat may not
    come back, and the host cannot re-draw without bound by barring one accomplice after another."""
    lobby = Lobby.make(3)
    _draw_until_reveals(lobby, 1)
    joiner = lobby.seats[0]
    joiner.handle(_barred_notice(lobby, 2), None)
    (notice,) = joiner.take_notices()
    assert notice.name == "P2" and notice.fingerprint == lobby.roster.seats[2].fingerprint
    assert "P2" in str(notice) and "barred" in str(notice) and "sent no reveal" in str(notice)
    newcomer = SeatInfo("P3", Identity.generate().public.hex(), HOST, free_port(HOST))
    roster = dataclasses.replace(lobby.roster, seats=(*lobby.roster.seats[:2], newcomer))
    reply, _ = joiner.handle({"draw": {"attempt": 2, "roster": roster.to_json()}}, None)
    assert reply is not None and "commit" in reply
    with pytest.raises(LobbyError, match="back in"):  # the barred seat listed again
        joiner.handle({"seats": [s.to_json() for s in lobby.roster.seats]}, None)
    with pytest.raises(LobbyError, match="back in the seat draw after barring"):
        _redraw(lobby, lobby.roster, attempt=3)
    # one accomplice barred after another: each buys one re-draw, MAX_REDRAWS in all
    lobby = Lobby.make(3)
    joiner, roster = lobby.seats[0], lobby.roster
    with pytest.raises(LobbyError, match="too many re-draws"):
        for attempt in range(1, lobby_module.MAX_REDRAWS + 3):
            body = {"draw": {"attempt": attempt, "roster": roster.to_json()}}
            reply, _ = joiner.handle(body, None)
            assert reply is not None
            mine = PlanDraw(roster, lobby.host, os.urandom)
            commitments = [mine.commitment, commitment_from_json(reply["commit"]["digest"])]  # type: ignore[index]
            commitments.append(PlanDraw(roster, lobby.host, os.urandom).commitment)  # the accomplice's (made up)
            host_open = mine.reveal(commitments)
            opened = {"attempt": attempt, "list": [c.hex() for c in commitments], "host": _opening_json(host_open)}
            joiner.handle({"commits": opened}, None)
            joiner.handle({"barred": {"key": roster.seats[2].public_key, "step": "reveal", "why": "no reveal"}}, None)
            accomplice = SeatInfo(f"A{attempt}", Identity.generate().public.hex(), HOST, free_port(HOST))
            roster = dataclasses.replace(roster, seats=(*roster.seats[:2], accomplice))
    assert joiner.redraws == lobby_module.MAX_REDRAWS + 1


def test_a_joiner_the_host_falsely_bars_says_it_had_revealed() -> None:
    """A host that pretends an honest joiner withheld (to re-draw) loses that joiner, which leaves
    saying it had sent its reveal; the others see the bar (and so can tell a lobby that keeps barring)."""
    lobby = Lobby.make(3)
    _draw_until_reveals(lobby, 1)
    with pytest.raises(LobbyError, match=r"had sent its reveal.*P-3\.2"):
        lobby.seats[1].handle(_barred_notice(lobby, 2), None)
    lobby.seats[0].handle(_barred_notice(lobby, 2), None)
    assert lobby.seats[0].take_notices()


def test_different_rosters_for_different_joiners_never_start() -> None:
    """The host shows joiner 1 one roster and joiner 2 another (its own mesh port differs), and makes up
    the other joiner's share in each: both joiners pass every check of their own and sign, but they
    signed different plans, so no start carries signatures that joiner 1 (or any runner) accepts."""
    lobby = Lobby.make(3)
    host_seat = lobby.roster.seats[0]
    other = dataclasses.replace(lobby.roster, seats=(dataclasses.replace(host_seat, port=host_seat.port + 1),
                                                     *lobby.roster.seats[1:]))  # fmt: skip
    signed: list[tuple[TablePlan, str, str]] = []
    for j, roster in ((0, lobby.roster), (1, other)):
        seat, absent = lobby.seats[j], 2 - j  # the join index of the joiner shown the other roster
        reply, _ = seat.handle({"draw": {"attempt": 1, "roster": roster.to_json()}}, None)
        mine = PlanDraw(roster, lobby.host, os.urandom)
        made_up = order_commitment(roster, absent, os.urandom(32))
        commitments = [mine.commitment, made_up[0], made_up[0]]
        commitments[j + 1] = commitment_from_json(reply["commit"]["digest"])  # type: ignore[index]
        host_open = mine.reveal(commitments)
        body = {"attempt": 1, "list": [c.hex() for c in commitments], "host": _opening_json(host_open)}
        reply, _ = seat.handle({"commits": body}, None)
        openings = [host_open, made_up[1], made_up[1]]
        openings[j + 1] = opening_from_json(reply["reveal"])  # type: ignore[index]
        reply, _ = seat.handle({"reveals": {"attempt": 1, "list": [_opening_json(o) for o in openings]}}, None)
        plan, host_sig = mine.plan(openings)
        signed.append((plan, host_sig, str(reply["sign"]["signature"])))  # type: ignore[index]
    (plan_a, host_a, sig_a), (plan_b, _, sig_b) = signed
    assert plan_a.table_id != plan_b.table_id
    by_key = {lobby.host.public.hex(): host_a, lobby.joiners[0].public.hex(): sig_a,
              lobby.joiners[1].public.hex(): sig_b}  # fmt: skip
    start = plan_a.with_signatures([by_key[s.public_key] for s in plan_a.seats])
    with pytest.raises(PlanError, match="did not sign"):
        lobby.seats[0].handle({"start": start.to_json()}, None)
    with pytest.raises(PlanError, match="did not sign"):
        start.verify()  # what the runner checks before the first shuffle


def test_a_joiner_sees_no_other_joiners_reveal_before_its_own() -> None:
    """With three seats or more, a joiner commits and reveals knowing only the host's share: the host
    message that carries the commitments holds no joiner's reveal (it would let that joiner steer)."""
    lobby = Lobby.make(3)
    mine = PlanDraw(lobby.roster, lobby.host, os.urandom)
    replies = [seat.handle({"draw": {"attempt": 1, "roster": lobby.roster.to_json()}}, None)[0] for seat in lobby.seats]
    commitments = [mine.commitment, *(commitment_from_json(r["commit"]["digest"]) for r in replies if r)]  # type: ignore[index]
    # A host that hands joiner 2 the reveal of joiner 1 early gains nothing the protocol accepts:
    # joiner 2 reveals on the commits message alone, before any "reveals".
    body = {"attempt": 1, "list": [c.hex() for c in commitments], "host": _opening_json(mine.reveal(commitments))}
    reply, _ = lobby.seats[1].handle({"commits": body}, None)
    assert reply is not None and "reveal" in reply


@pytest.mark.parametrize(
    "lie",
    ["other-lobby", "other-game", "my-name", "my-mesh", "left-out", "host-not-first", "bot-flag"],
)
def test_a_roster_that_lies_about_this_seat_or_the_host_is_refused(lie: str) -> None:
    lobby = Lobby.make(3)
    r = lobby.roster
    me = r.seats[1]
    seats = list(r.seats)
    if lie == "other-lobby":
        r = dataclasses.replace(r, lobby_id=secrets.token_hex(16))
    elif lie == "other-game":
        r = dataclasses.replace(r, game="take6")
    elif lie == "my-name":
        seats[1] = dataclasses.replace(me, name="Mallory")
    elif lie == "my-mesh":
        seats[1] = dataclasses.replace(me, port=me.port + 1)  # so this seat's mesh is never dialled
    elif lie == "left-out":
        seats[1] = SeatInfo("P1", Identity.generate().public.hex(), HOST, 6001)
    elif lie == "host-not-first":
        seats[0], seats[2] = seats[2], seats[0]
    elif lie == "bot-flag":
        seats[1] = dataclasses.replace(me, runs_on=lobby.host.public.hex())
    if lie not in ("other-lobby", "other-game"):
        r = dataclasses.replace(r, seats=tuple(seats))
    with pytest.raises(LobbyError):
        lobby.seats[0].handle({"draw": {"attempt": 1, "roster": r.to_json()}}, None)


@pytest.mark.parametrize("lie", ["own-commit", "host-reveal", "other-reveal", "reordered-start", "old-lobby-start"])
def test_a_host_that_edits_the_draw_or_the_plan_is_refused(lie: str) -> None:
    lobby = Lobby.make(3)
    seat = lobby.seats[0]
    mine = PlanDraw(lobby.roster, lobby.host, os.urandom)
    replies = [s.handle({"draw": {"attempt": 1, "roster": lobby.roster.to_json()}}, None)[0] for s in lobby.seats]
    commitments = [mine.commitment, *(commitment_from_json(r["commit"]["digest"]) for r in replies if r)]  # type: ignore[index]
    host_open = mine.reveal(commitments)
    listed = list(commitments)
    if lie == "own-commit":
        listed[1] = PlanDraw(lobby.roster, lobby.joiners[0], os.urandom).commitment
    shown_open = Opening(os.urandom(32), host_open.nonce) if lie == "host-reveal" else host_open
    body = {"attempt": 1, "list": [c.hex() for c in listed], "host": _opening_json(shown_open)}
    if lie in ("own-commit", "host-reveal"):
        with pytest.raises(ProtocolError):
            seat.handle({"commits": body}, None)
        return
    openings = [host_open]
    for s in lobby.seats:
        reply, _ = s.handle({"commits": body}, None)
        openings.append(opening_from_json(reply["reveal"]))  # type: ignore[index]
    if lie == "other-reveal":  # joiner 2's share swapped for a value of the host's choosing
        bad = [*openings[:2], Opening(os.urandom(32), openings[2].nonce)]
        with pytest.raises(ProtocolError):
            seat.handle({"reveals": {"attempt": 1, "list": [_opening_json(o) for o in bad]}}, None)
        return
    signed, plans = _finish(lobby, 1, Attempt(mine, commitments, openings))
    assert plans[0] == signed  # the honest start; now the host sends seat 0 another one
    if lie == "reordered-start":
        fake = dataclasses.replace(signed, seats=tuple(reversed(signed.seats)))
    else:  # a complete, validly signed plan of another lobby (the same three people)
        roster = dataclasses.replace(lobby.roster, lobby_id=secrets.token_hex(16))
        pairs = zip(lobby.joiners, roster.seats[1:], strict=True)
        seats = [_JoinerSeat(ident, roster.lobby_id, info, lobby.host.public.hex(), GAME) for ident, info in pairs]
        other = Lobby(lobby.host, lobby.joiners, roster, seats)
        fake, _ = _finish(other, 1, _draw_until_reveals(other, 1))
        fake.verify()  # valid in itself
    with pytest.raises((LobbyError, ProtocolError)):
        seat.handle({"start": fake.to_json()}, None)


def test_a_signature_from_another_plan_does_not_verify() -> None:
    """Replaying a seat's plan signature from another lobby or another draw (I7): the statement binds
    the table id, which hashes lobby, roster and draw."""
    a = Lobby.make(2)
    signed_a, _ = _finish(a, 1, _draw_until_reveals(a, 1))
    b = Lobby(
        a.host,
        a.joiners,
        a.roster,
        [_JoinerSeat(a.joiners[0], a.roster.lobby_id, a.roster.seats[1], a.host.public.hex(), GAME)],
    )
    signed_b, _ = _finish(b, 2, _draw_until_reveals(b, 2))  # the same people and lobby, a second draw
    assert signed_a.table_id != signed_b.table_id
    by_key = dict(zip((x.public_key for x in signed_a.seats), signed_a.signatures, strict=True))
    replayed = signed_b.with_signatures([by_key[x.public_key] for x in signed_b.seats])
    with pytest.raises(PlanError, match="did not sign"):
        replayed.verify()


_JUNK_HOST: list[JSONObject] = [
    {},
    {"error": {"nested": [1, 2]}},
    {"seats": "x"},
    {"seats": [{"name": "\x1b[2J", "key": "00", "mesh": ["h", 1]}]},
    {"draw": {"attempt": [1], "roster": 5}},
    {"draw": {"attempt": 1, "roster": {"lobby": 1}}},
    {"draw": {"attempt": 1, "roster": {"lobby": "x", "game": GAME, "options": {}, "seats": [{}] * 40}}},
    {"commits": {"attempt": 1, "list": [5, None, "zz"], "host": "x"}},
    {"commits": {"attempt": 1, "list": "nope"}},
    {"reveals": {"attempt": 1, "list": [{"value": 1}]}},
    {"reveals": {"attempt": 1}},
    {"start": 5},
    {"start": {"lobby": "x", "game": GAME, "options": {}, "seats": [], "draw": {}}},
]


@pytest.mark.parametrize("stage", ["fresh", "drawing", "revealed"])
def test_junk_from_a_host_is_a_lobby_error_never_a_crash(stage: str) -> None:
    """I3 at the joiner: every host message of the wrong shape, at every stage, either is ignored or
    raises `LobbyError`/`ProtocolError` (which `join_lobby` reports as "not to be trusted")."""
    for junk in _JUNK_HOST:
        lobby = Lobby.make(3)
        seat = lobby.seats[0]
        if stage == "drawing":
            seat.handle({"draw": {"attempt": 1, "roster": lobby.roster.to_json()}}, None)
        if stage == "revealed":
            _draw_until_reveals(lobby, 1)
        with contextlib.suppress(LobbyError, ProtocolError):
            seat.handle(junk, lambda seats: None)


# --- a modified joiner on loopback -----------------------------------------------------------------


async def _joiner_that_withholds(
    identity: Identity, lobby_id: str, port: int, withhold: bool, leave: bool = False
) -> str:
    """A modified joiner: it runs the real joiner seat but, when `withhold`, sends no reveal once it has
    the host's share (in a two-seat table it then knows the order before anyone else); with `leave` it
    hangs up there instead. Returns what became of it: 'drawing' (the host started a draw with it),
    'refused: why' or 'barred: why' (the host's error, before or after it took a seat), 'dropped' (the
    link closed without a word), 'left'."""
    me = SeatInfo("Eve", identity.public.hex(), HOST, free_port(HOST))
    async with connect(f"ws://{HOST}:{port}/", compression=None, proxy=None) as ws:
        cipher, host_key = await lobby_module._handshake(ws, identity, lobby_id, initiator=True)
        await lobby_module._send(ws, cipher, {"join": {"name": me.name, "mesh": [HOST, me.port], **VERSION}})
        seat = _JoinerSeat(identity, lobby_id, me, host_key, None)
        try:
            while True:
                message = await lobby_module._recv(ws, cipher)
                if "error" in message:
                    return f"{'barred' if seat.revealed is not None else 'refused'}: {message['error']}"
                if "draw" in message and not withhold:
                    return "drawing"
                if "commits" in message and withhold:
                    seat.revealed = seat.draw.roster if seat.draw else None  # Eve knows the order now: no reveal
                    if leave:
                        return "left"
                    continue
                reply, _ = seat.handle(message, None)
                if reply is not None:
                    await lobby_module._send(ws, cipher, reply)
        except ConnectionClosed:
            return "dropped"


@pytest.mark.parametrize("leave", [False, True])
def test_a_joiner_that_withheld_its_reveal_gets_no_fresh_draw(monkeypatch: pytest.MonkeyPatch, leave: bool) -> None:
    """P-3.2 last-revealer bias: in a two-seat lobby the host reveals first, so the joiner knows the
    order before it reveals. Withholding its reveal (or hanging up instead) gets it barred from the
    lobby by key, told why; coming back with the same key is refused: no fresh draw, no re-roll."""
    monkeypatch.setattr(lobby_module, "LOBBY_TIMEOUT", 1.0)

    async def scenario() -> tuple[str, str, dict[str, str]]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 2, SeatInfo("Host", host.public.hex(), HOST, 6099))
        port = await lobby.start(HOST)
        eve = Identity.generate()
        try:
            async with asyncio.timeout(10):
                first = await _joiner_that_withholds(eve, lobby.lobby_id, port, withhold=True, leave=leave)
                if leave:
                    await until(lambda: bool(lobby.barred))
                second = await _joiner_that_withholds(eve, lobby.lobby_id, port, withhold=False)
        finally:
            await lobby.close()
        return first, second, dict(lobby.barred)

    first, second, barred = asyncio.run(scenario())
    why = "left during the seat draw" if leave else "no reveal"
    if leave:
        assert first == "left"
    else:
        assert first.startswith("barred:") and why in first and "P-3.2" in first, first
    assert second != "drawing", "the seat that withheld its reveal was given a fresh draw of the seat order"
    assert second.startswith("refused:") and "barred" in second and why in second, second
    assert len(barred) == 1 and why in next(iter(barred.values()))


def test_the_others_are_told_who_withheld_and_the_table_forms_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three seats: Eve withholds her reveal after Bob revealed. Bob is told Eve is barred and why,
    takes part in the new draw (paid for by the bar) when Carol fills the seat, and every seat gets one
    plan without Eve."""
    monkeypatch.setattr(lobby_module, "LOBBY_TIMEOUT", 1.0)

    async def scenario() -> tuple[list[TablePlan], list[str], str, str]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, SeatInfo("Host", host.public.hex(), HOST, 6097))
        port = await lobby.start(HOST)
        eve, notices = Identity.generate(), list[lobby_module.SeatBarred]()
        try:
            async with asyncio.timeout(15):
                bob = asyncio.create_task(join_lobby(
                    Identity.generate(), lobby.lobby_id, HOST, port, "Bob", (HOST, 6096),
                    host_fingerprint=host.public.fingerprint, game=GAME, on_notice=notices.append))  # fmt: skip
                await until(lambda: len(lobby.taken) == 2)
                first = await _joiner_that_withholds(eve, lobby.lobby_id, port, withhold=True)
                carol = join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Carol", (HOST, 6095))
                plans = list(await asyncio.gather(bob, carol, lobby.wait_plan()))
                second = await _joiner_that_withholds(eve, lobby.lobby_id, port, withhold=False)
        finally:
            await lobby.close()
        return plans, notices, first, second

    plans, notices, first, second = asyncio.run(scenario())
    assert first.startswith("barred:")
    assert plans[0] == plans[1] == plans[2]
    plans[0].verify()
    assert [s.name for s in plans[0].seats if s.name == "Eve"] == []
    assert len(notices) == 1 and notices[0].name == "Eve" and "no reveal" in notices[0].why, notices
    assert second.startswith("refused:")


def test_two_colluding_withholders_are_both_barred(monkeypatch: pytest.MonkeyPatch) -> None:
    """Four seats: two joiners withhold their reveals together. Both are barred at once, Bob is told
    about both, and the table forms with two new seats. (Had one hung up instead, the draw would end
    at once with that one barred: one bar per re-draw either way.)"""
    monkeypatch.setattr(lobby_module, "LOBBY_TIMEOUT", 1.0)

    async def scenario() -> tuple[list[TablePlan], list[lobby_module.SeatBarred], dict[str, str]]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 4, SeatInfo("Host", host.public.hex(), HOST, 6089))
        port = await lobby.start(HOST)
        notices: list[lobby_module.SeatBarred] = []
        try:
            async with asyncio.timeout(20):
                bob = asyncio.create_task(join_lobby(
                    Identity.generate(), lobby.lobby_id, HOST, port, "Bob", (HOST, 6088), on_notice=notices.append))
                await until(lambda: len(lobby.taken) == 2)
                await asyncio.gather(
                    _joiner_that_withholds(Identity.generate(), lobby.lobby_id, port, withhold=True),
                    _joiner_that_withholds(Identity.generate(), lobby.lobby_id, port, withhold=True),
                )  # fmt: skip
                await until(lambda: len(lobby.barred) == 2)
                others = [join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, name, (HOST, 6086 - i))
                          for i, name in enumerate(["Carol", "Dan"])]  # fmt: skip
                plans = list(await asyncio.gather(bob, *others, lobby.wait_plan()))
        finally:
            await lobby.close()
        return plans, notices, dict(lobby.barred)

    plans, notices, barred = asyncio.run(scenario())
    assert all(plan == plans[0] for plan in plans) and len(plans) == 4
    assert sorted(s.name for s in plans[0].seats) == ["Bob", "Carol", "Dan", "Host"]
    assert len(barred) == 2 and len(notices) == 2 and {n.name for n in notices} == {"Eve"}
    assert {n.fingerprint for n in notices} == {SeatInfo("x", k, HOST, 1).fingerprint for k in barred}


def test_a_host_that_holds_the_draw_up_after_the_reveals_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A modified host that has every reveal and then neither relays them nor bars anyone (it may be
    waiting for a pretext to re-draw): the joiner does not wait for ever, it leaves saying why."""
    monkeypatch.setattr(lobby_module, "LOBBY_TIMEOUT", 0.3)
    me, lobby_id = Identity.generate(), secrets.token_hex(16)

    async def handler(ws: Any) -> None:
        with contextlib.suppress(ConnectionClosed):
            cipher, key = await lobby_module._handshake(ws, me, lobby_id, initiator=False)
            join = (await lobby_module._recv(ws, cipher))["join"]
            assert isinstance(join, dict)
            roster = Roster(lobby_id, GAME, {}, (SeatInfo("Host", me.public.hex(), HOST, 6090),
                                                 SeatInfo.from_json({**join, "key": key})))  # fmt: skip
            await lobby_module._send(ws, cipher, {"draw": {"attempt": 1, "roster": roster.to_json()}})
            reply = (await lobby_module._recv(ws, cipher))["commit"]
            assert isinstance(reply, dict)
            mine = PlanDraw(roster, me, os.urandom)
            commitments = [mine.commitment, commitment_from_json(reply["digest"])]
            host_open = _opening_json(mine.reveal(commitments))
            body = {"attempt": 1, "list": [c.hex() for c in commitments], "host": host_open}
            await lobby_module._send(ws, cipher, {"commits": body})
            await lobby_module._recv(ws, cipher)  # the reveal: the host knows the order now, and sits on it
            for _ in range(100):
                await lobby_module._send(ws, cipher, {"seats": [s.to_json() for s in roster.seats]})  # chatter
                await asyncio.sleep(0.1)

    async def scenario() -> float:
        async with serve(handler, HOST, 0) as server:
            port = server.sockets[0].getsockname()[1]
            began = asyncio.get_running_loop().time()
            with pytest.raises(LobbyError, match=r"did not go on with the seat draw .*P-3\.2"):
                async with asyncio.timeout(5):
                    await join_lobby(Identity.generate(), lobby_id, HOST, port, "Bob", (HOST, 6091),
                                     host_fingerprint=me.public.fingerprint)  # fmt: skip
            return asyncio.get_running_loop().time() - began

    assert asyncio.run(scenario()) < 3


def test_junk_joiners_never_crash_the_host_and_the_table_still_forms(caplog: pytest.LogCaptureFixture) -> None:
    """I3 at the host: text frames, oversized frames, a first message that is not a join, escapes in
    the name, out-of-turn and malformed draw messages: each costs only that link; no handler
    traceback; two honest seats then get their plan."""
    caplog.set_level(logging.WARNING)

    async def junk(port: int, lobby_id: str, mode: str) -> None:
        ident = Identity.generate()
        with contextlib.suppress(ConnectionClosed, LobbyError, ProtocolError, TimeoutError):
            async with connect(f"ws://{HOST}:{port}/", compression=None, proxy=None, max_size=None) as ws:
                if mode == "text":
                    await ws.send("hello")
                    await ws.recv()
                    return
                if mode == "huge":
                    await ws.send(b"\x00" * (lobby_module.MAX_LOBBY_MESSAGE + 10))
                    await ws.recv()
                    return
                cipher, _ = await lobby_module._handshake(ws, ident, lobby_id, initiator=True)
                if mode == "not-join":
                    await lobby_module._send(ws, cipher, {"commit": {"attempt": 1}})
                elif mode == "escape-name":
                    await lobby_module._send(ws, cipher, {
                        "join": {"name": "\x1b]0;pwned\x07", "mesh": [HOST, 6200], **VERSION}
                    })
                elif mode == "bad-mesh":
                    await lobby_module._send(ws, cipher, {
                        "join": {"name": "M", "mesh": ["evil.example", 80], **VERSION}
                    })
                elif mode == "junk-body":
                    await lobby_module._send(ws, cipher, {"join": {"name": "J", "mesh": [HOST, 6201], **VERSION}})
                    for body in ({"commit": 5}, {"sign": {"attempt": None}}, {"a": 1, "b": 2}):
                        await lobby_module._send(ws, cipher, body)
                elif mode == "undecryptable":
                    await lobby_module._send(ws, cipher, {"join": {"name": "U", "mesh": [HOST, 6202], **VERSION}})
                    await ws.send(os.urandom(200))
                while True:
                    await ws.recv()

    async def scenario() -> list[TablePlan]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 2, SeatInfo("Host", host.public.hex(), HOST, 6199))
        port = await lobby.start(HOST)
        try:
            async with asyncio.timeout(20):
                modes = ["text", "huge", "not-join", "escape-name", "bad-mesh", "junk-body", "undecryptable"]
                await asyncio.gather(*(junk(port, lobby.lobby_id, m) for m in modes))
                joined = join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Bob", (HOST, 6198),
                                    host_fingerprint=host.public.fingerprint, game=GAME)  # fmt: skip
                return list(await asyncio.gather(joined, lobby.wait_plan()))
        finally:
            await lobby.close()

    plans = asyncio.run(scenario())
    assert plans[0] == plans[1]
    plans[0].verify()
    crashes = [r for r in caplog.records if r.exc_info or "handler failed" in r.getMessage()]
    assert not crashes, [r.getMessage() for r in crashes]


# --- each step once per attempt; a failed attempt names who failed it (P-6.5) ----------------------


def test_a_host_that_re_sends_the_commitments_to_choose_the_order_is_left() -> None:
    """The host holds every reveal, so it knows which share of its own would seat it first. Sending
    the commitments of the same attempt again with that share in place of its first would have every
    joiner reveal again and sign the order it chose: each joiner refuses it (P-6.5), and refuses the
    same attempt drawn again, an older attempt, and the reveals sent twice."""
    lobby = Lobby.make(3)
    drawn = _draw_until_reveals(lobby, 1)
    chosen = None
    for _ in range(200):  # the host's search, offline: a share whose order seats the host (join index 0) first
        mine = PlanDraw(lobby.roster, lobby.host, os.urandom)
        commitments = [mine.commitment, *drawn.commitments[1:]]
        if draw_order(lobby.roster, commitments, [mine.opening, *drawn.openings[1:]])[0] == 0:
            chosen = mine
            break
    assert chosen is not None
    commitments = [chosen.commitment, *drawn.commitments[1:]]
    again = {"attempt": 1, "list": [c.hex() for c in commitments], "host": _opening_json(chosen.opening)}
    for seat in lobby.seats:
        with pytest.raises(ProtocolError, match="second time") as refused:
            seat.handle({"commits": again}, None)
        assert refused.value.rule == "P-6.5"
    for attempt in (5, 4):  # the same attempt again, or an older one, before anything was revealed
        fresh = Lobby.make(3)
        fresh.seats[0].handle({"draw": {"attempt": 5, "roster": fresh.roster.to_json()}}, None)
        with pytest.raises(LobbyError, match=rf"started attempt {attempt} of the seat draw again.*P-6\.5"):
            fresh.seats[0].handle({"draw": {"attempt": attempt, "roster": fresh.roster.to_json()}}, None)
    reveals = {"reveals": {"attempt": 1, "list": [_opening_json(o) for o in drawn.openings]}}
    reply, _ = lobby.seats[1].handle(reveals, None)
    assert reply is not None and "sign" in reply
    with pytest.raises(ProtocolError, match="second time"):
        lobby.seats[1].handle(reveals, None)


def test_a_bar_for_a_reveal_the_seat_was_passed_shows_the_host_failed_the_attempt() -> None:
    """The host passed every reveal (Carol's among them), then bars Carol for withholding hers, to
    draw again: Bob, who holds Carol's reveal, leaves saying the host fails this attempt (P-6.5)."""
    lobby = Lobby.make(3)
    drawn = _draw_until_reveals(lobby, 1)
    lobby.seats[0].handle({"reveals": {"attempt": 1, "list": [_opening_json(o) for o in drawn.openings]}}, None)
    with pytest.raises(LobbyError, match=r"barred P2 .*for withholding its reveal, yet passed this seat.*P-6\.5"):
        lobby.seats[0].handle(_barred_notice(lobby, 2), None)


def test_a_host_that_passes_the_reveals_to_some_seats_only_fails_the_attempt() -> None:
    """The host passes the reveals to Bob alone, then bars Bob for his signature (or Carol for hers):
    Carol, who revealed and was never passed the reveals, knows the host held them back from her and
    leaves saying the host fails this attempt (P-6.5); barred herself, she says the same. Bob, who was
    passed them, cannot tell and is shown the bar. A bar for a signature after an honest relay is
    shown as it is."""
    for barred in (1, 2):
        lobby = Lobby.make(3)
        drawn = _draw_until_reveals(lobby, 1)
        passed = {"reveals": {"attempt": 1, "list": [_opening_json(o) for o in drawn.openings]}}
        lobby.seats[0].handle(passed, None)
        notice = _barred_notice(lobby, barred, "it sent no signature", step="signature")
        if barred == 2:
            with pytest.raises(LobbyError, match=r"never passed the reveals to sign.*not others.*P-6\.5"):
                lobby.seats[1].handle(notice, None)
            lobby.seats[0].handle(notice, None)
            assert [n.name for n in lobby.seats[0].take_notices()] == ["P2"]
        else:
            with pytest.raises(LobbyError, match=r"barred P1 .*never passed this seat the reveals.*P-6\.5"):
                lobby.seats[1].handle(notice, None)
    lobby = Lobby.make(3)
    drawn = _draw_until_reveals(lobby, 1)
    for seat in lobby.seats:
        seat.handle({"reveals": {"attempt": 1, "list": [_opening_json(o) for o in drawn.openings]}}, None)
    lobby.seats[0].handle(_barred_notice(lobby, 2, "it sent no signature", step="signature"), None)
    assert [n.name for n in lobby.seats[0].take_notices()] == ["P2"]


def test_seats_that_withhold_in_turn_cannot_re_roll_at_the_host_without_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A joiner that dislikes the order withholds (here it hangs up once it has the commitments) and
    comes back under a fresh key each time (keys cost nothing), so an accomplice seated with it gets
    a fresh roll each time. Each is barred; after `MAX_REDRAWS` such re-draws the host holds no more:
    its lobby ends with one line saying so (P-6.5), which the seat still waiting (Bob, honest) is told
    too, as every honest joiner would leave such a host."""
    monkeypatch.setattr(lobby_module, "LOBBY_TIMEOUT", 1.0)

    async def scenario() -> tuple[int, BaseException | None, BaseException | None]:
        host = Identity.generate()
        lobby = LobbyHost(host, GAME, {}, 3, SeatInfo("Host", host.public.hex(), HOST, free_port(HOST)))
        port = await lobby.start(HOST)
        plan = asyncio.ensure_future(lobby.wait_plan())
        bob = asyncio.ensure_future(
            join_lobby(Identity.generate(), lobby.lobby_id, HOST, port, "Bob", (HOST, free_port(HOST)))
        )
        try:
            async with asyncio.timeout(20):
                await until(lambda: len(lobby.taken) == 2)
                for tries in range(1, lobby_module.MAX_REDRAWS + 5):
                    await _joiner_that_withholds(Identity.generate(), lobby.lobby_id, port, withhold=True, leave=True)
                    await until(lambda n=tries: len(lobby.barred) == n or plan.done())  # type: ignore[misc]
                    if plan.done():
                        await asyncio.wait([bob])
                        return tries, plan.exception(), bob.exception()
        finally:
            await lobby.close()
        return -1, None, None

    tries, error, bob = asyncio.run(scenario())
    assert tries == lobby_module.MAX_REDRAWS + 1, tries
    assert isinstance(error, LobbyError) and "too many re-draws" in str(error) and "P-6.5" in str(error)
    assert isinstance(bob, LobbyError) and "host refused" in str(bob) and "too many re-draws" in str(bob), bob
