"""A modified client (or a colluding pair) against what a table keeps across a go-on: the continuation a seat
plays before every signature came (`check_plan`, P-5.6, P-6.7), the proofs late secrets bring and the halt
they cause (`OwedSecrets.take_proof`, `TableRunner.barred`, P-5.4, P-5.7), the late sets every seat passes
on (`TableRunner._pass_on`, P-6.2, P-6.6), and the take-back desk's links (`BackDesk`, P-5.7, P-6.6).

The tables are those of tests/test_take_back_owed_attacks.py: 3 seats of Sixes; seat 2's laptop died in
round 2 owing its secrets; the continuation (T2) has a bot in seat 2. In the `_cheat` one, present seat 1
(Y) published bad shuffle secrets that only seat 2's late secrets expose."""

from __future__ import annotations

import asyncio
import copy
import random
import types
from pathlib import Path
from typing import Any

import pytest
from tablenet import make_table
from test_take_back import GAME as SIXES
from test_take_back import OPTIONS, _first_continuation, _late, _leave_after_a_round, _offers
from test_take_back_owed_attacks import (
    RETURNING,
    _back,
    _cheat_continuation,
    _killed,
    _Mesh,
    _runner,
    _t2_base,
)
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

import lanplay.table.runner as runner_module
import lanplay.table.takeback as takeback
from lanplay.base.store import Journal, journal_path
from lanplay.net.lobby import LobbyError
from lanplay.table.runner import (
    MAX_LATE_PROOFS,
    BotPlayer,
    TableRunner,
    begin_journal,
    check_plan,
    free_port,
    unfinished_journal,
)
from protocol.continuation import Continuation, decide, make_take_back
from protocol.encoding import canonical, decode
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.plan import SeatInfo
from protocol.table.verify import verify

LOOPBACK = "127.0.0.1"
Y = 1  # the present seat the late audit exposes in the `_cheat` table


def _proof_message(data: bytes) -> bytes:
    return canonical({"go-on-proof": data.hex()})


def _junk_proof(index: int) -> bytes:
    """A proof-shaped message that names messages nobody holds: kept pending, never resolved."""
    return canonical({"proof": {"kind": "refused", "round": 1, "seat": 0, "history": [[0, index, "00" * 32]]}})


def _sent_proofs(mesh: _Mesh) -> list[dict[str, Any]]:
    out = []
    for data in mesh.sent:
        raw = decode(data, 1 << 20)
        if set(raw) == {"go-on-proof"}:
            proof = decode(bytes.fromhex(str(raw["go-on-proof"])), 1 << 20)["proof"]
            assert isinstance(proof, dict)
            out.append(proof)
    return out


# -- 1. a continuation not every seat signed (P-5.6, P-6.7) --------------------------------------------------
def _partly_signed(c1: Continuation, identities: list[Identity], signers: tuple[int, ...]) -> Continuation:
    sigs = [c1.signatures[i] if i in signers else "" for i in range(len(c1.seats))]
    return c1.with_signatures(sigs)


def test_a_continuation_the_seat_did_not_sign_itself_is_refused_however_many_others_did() -> None:
    """P-6.7: `check_plan` lets a seat play a continuation only every seat signed, or one it signed itself;
    a peer's (or desk's) copy signed by every other seat, or with this seat's slot holding another seat's or
    another table's signature, or with too few slots, or with a field changed after signing, is refused."""
    _, c1, identities = _first_continuation()
    keys = [info.public_key for info in c1.seats]
    me = 0
    check_plan(c1, keys[me])  # every seat signed: played
    check_plan(_partly_signed(c1, identities, (me,)), keys[me])  # only this seat: played (P-5.6)
    others = tuple(i for i in range(len(c1.seats)) if i != me)
    cases = {
        "every other seat signed": _partly_signed(c1, identities, others),
        "another seat's signature in this slot": c1.with_signatures([c1.signatures[1], "", ""]),
        "too few slots": c1.with_signatures([c1.signatures[me]]),
        "no slots": c1.with_signatures(()),
        "junk in this slot": c1.with_signatures(["00" * 64, "", ""]),
    }
    for plan in cases.values():
        with pytest.raises(ProtocolError):
            check_plan(plan, keys[me])
        with pytest.raises(LobbyError):  # the runner refuses it with one line
            TableRunner(plan, identities[me], Path("/nonexistent"), BotPlayer(SIXES, "easy"), LOOPBACK)
    stranger = Identity.generate()
    with pytest.raises(ProtocolError):
        check_plan(_partly_signed(c1, identities, (me,)), stranger.public.hex())  # a key of no seat
    changed = Continuation.from_json({**c1.to_json(), "patience": c1.patience + 1})
    with pytest.raises(ProtocolError):  # this seat's signature is on another plan
        check_plan(changed.with_signatures([c1.signatures[me], "", ""]), keys[me])


def test_a_journal_holding_another_seats_partly_signed_continuation_is_not_offered_to_resume(tmp_path: Path) -> None:
    """P-5.6, P-6.7: a journal begun by another laptop (its seat, signed only by that seat) copied into this
    laptop's data directory under this seat's number is not offered: only the seat that signed may play it."""
    _, c1, identities = _first_continuation()
    theirs = _partly_signed(c1, identities, (1,))
    path = begin_journal(theirs, identities[1], tmp_path)
    assert unfinished_journal(tmp_path) is not None  # seat 1's own, on seat 1's laptop: offered
    first = Journal(path).read()[0]
    path.unlink()
    Journal(journal_path(tmp_path, c1.table_id, 0)).append({**first, "seat": 0})
    assert unfinished_journal(tmp_path) is None  # set aside, saying why (seat 0 did not sign it)
    assert list((tmp_path / "journals").glob("*.broken"))


def _partly_signed_loopback(patience: int) -> tuple[Continuation, list[Identity]]:
    """As `_first_continuation` (P2 left, P0's bot in seat 2), with free loopback ports and `patience`,
    signed by seat 0 alone: what seat 0's journal holds when the others' signatures never came."""
    table = _leave_after_a_round(make_table(SIXES, 3, OPTIONS, seed=5), 2)
    s0 = table.sessions[0]
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    p2 = table.identities[2].public.hex()
    seats = [SeatInfo(f"P{s}", i.public.hex(), LOOPBACK, free_port(LOOPBACK)) for s, i in enumerate(table.identities)]
    offers = _offers(table, (0, 1), {2: (bot, LOOPBACK, free_port(LOOPBACK))}, left={0: {2: p2}, 1: {2: p2}})
    plan = decide(s0.settings.table, s0.record_digest(), seats, (0, 1), s0.summary()["rounds"], SIXES, OPTIONS,
                  patience, offers)  # fmt: skip
    assert plan is not None
    identities = [table.identities[0], table.identities[1], bot]
    return plan.with_signatures([plan.sign(identities[0]), "", ""]), identities


def test_a_seat_shuffles_at_a_continuation_only_once_every_seat_signed_it(tmp_path: Path) -> None:
    """P-6.7: "the seat plan is signed by every seat before the first shuffle". Seat 0's go-on gave up (seat 1
    never signed: it decided another continuation, its offers equivocated by a colluder, or withheld); the
    journal begun before seat 0's signature left is offered at the next start (`unfinished_journal`) and
    played. Its session must not deal (shuffle) before it holds every seat's signature."""
    plan, identities = _partly_signed_loopback(1)
    begin_journal(plan, identities[0], tmp_path)
    found = unfinished_journal(tmp_path)
    assert found is not None and found[0].table_id == plan.table_id  # offered to resume
    runner = TableRunner(found[0], identities[0], tmp_path, BotPlayer(SIXES, "easy"), LOOPBACK)

    async def scenario() -> bool:
        task = asyncio.create_task(runner.run())
        try:
            for _ in range(100):
                if runner.session is not None and runner.session.ledger.chains[runner.me]:
                    return True
                if task.done():
                    return False
                await asyncio.sleep(0.02)
            return False
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    shuffled = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert not shuffled


@pytest.mark.parametrize(
    "started",
    [True, False],
)
def test_a_continuation_nobody_else_signed_ends_as_gone_when_no_seat_answers_its_resume(
    started: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/PROTOCOL.md: a seat plays a continuation it signed whose other signatures had not come; "if they
    never did, nobody comes and the table is gone". A resumed table that no seat answers ends as gone
    (`Outcome.table_gone`, after max(2 x patience, GONE_AFTER)); so must this one."""
    monkeypatch.setattr(runner_module, "GONE_AFTER", 1.0)
    plan, identities = _partly_signed_loopback(1)
    path = begin_journal(plan, identities[0], tmp_path)
    if started:  # the control: it had started (a journal with its start) when the laptop stopped
        Journal(path).append({"t": "start", "ms": 0})
    found = unfinished_journal(tmp_path)
    assert found is not None
    runner = TableRunner(found[0], identities[0], tmp_path, BotPlayer(SIXES, "easy"), LOOPBACK)

    async def scenario() -> Any:
        try:
            return await asyncio.wait_for(runner.run(), 5)
        except TimeoutError:
            return None

    outcome = asyncio.run(scenario())
    assert outcome is not None and outcome.table_gone


# -- 2. proofs late secrets bring (P-5.4, P-5.7, P-6.3, P-6.6) ------------------------------------------------
@pytest.mark.parametrize("case", ["not a string", "not hex", "odd hex", "oversize", "not a proof", "a message",
                                  "extra key", "junk proof", "bytes of nothing"])  # fmt: skip
def test_go_on_proofs_that_are_no_proof_raise_nothing_expose_nobody_and_halt_nothing(case: str, tmp_path: Path) -> None:
    table = _killed()
    c1, identities, _ = copy.deepcopy(_t2_base())
    runner = _runner(c1, identities[0], table.sessions[0], tmp_path)
    mesh = _Mesh()
    runner.mesh = mesh  # type: ignore[assignment]
    late = _late(copy.deepcopy(table))
    messages = {
        "not a string": canonical({"go-on-proof": 5}),
        "not hex": canonical({"go-on-proof": "zz" * 10}),
        "odd hex": canonical({"go-on-proof": "abc"}),
        "oversize": canonical({"go-on-proof": ("7b2270726f6f66223a" + "20" * (1 << 19))}),
        "not a proof": _proof_message(b'{"x": 1}'),
        "a message": _proof_message(canonical(late[0])),
        "extra key": canonical({"go-on-proof": _junk_proof(0).hex(), "x": 1}),
        "junk proof": _proof_message(_junk_proof(0)),
        "bytes of nothing": _proof_message(b'{"proof":' + b"\xff" * 40),
    }
    for sender in (1, 2, 0, -1, 7):
        runner._go_on_received(sender, messages[case])  # P-6.3
    assert not table.sessions[0].convictions and not runner.barred
    assert not _sent_proofs(mesh)  # nothing passed on that exposed nobody
    assert len(runner.owed.proofs) <= MAX_LATE_PROOFS  # type: ignore[union-attr]


def test_a_real_proof_is_taken_and_passed_on_once_however_often_and_by_whomever_it_comes(tmp_path: Path) -> None:
    """The proof honest seat 0 finds settling the returning seat's late secrets (exposing Y at T1), sent to
    seat 0 again by Y, by the bot's seat and by itself, many times: Y is exposed and barred once, the proof
    passed on once (P-6.6: no amplification), and the proof checks offline (P-5.4)."""
    table, c1, identities, t2 = _cheat_continuation()
    p2 = table.identities[RETURNING]
    late = _late(table)
    finder = _runner(c1, identities[0], copy.deepcopy(table.sessions[0]), tmp_path / "finder")
    finder.mesh = _Mesh()  # type: ignore[assignment]
    finder.hold_back(_back(p2, t2, late), late, tell=False)
    found = [m for m in finder.mesh.sent if m.startswith(b'{"go-on-proof"')]  # type: ignore[attr-defined]
    assert found
    digest, rounds = table.sessions[0].record_digest(), list(table.sessions[0].rounds)
    other = _runner(c1, identities[0], table.sessions[0], tmp_path / "other")
    mesh = _Mesh()
    other.mesh = mesh  # type: ignore[assignment]
    for _ in range(20):
        for sender in (1, 2, 0):
            for data in found:
                other._go_on_received(sender, data)
    session = table.sessions[0]
    assert set(session.convictions) == {Y} and other.barred == {Y}
    assert session.record_digest() == digest and session.rounds == rounds  # P-5.8
    assert len(_sent_proofs(mesh)) == len(found)
    assert verify(session.plan, session.proofs[Y], session.rounds[: int(str(session.proofs[Y]["round"]))]).seat == Y


@pytest.mark.parametrize(
    "junk",
    [0, MAX_LATE_PROOFS],
)
def test_a_seats_junk_proofs_do_not_keep_a_real_proof_from_being_passed_on(junk: int, tmp_path: Path) -> None:
    """P-5.4: "a proof ... is passed on to every seat at once". Y (the seat the late audit will expose) first
    sends honest seat 0 eight distinct proof-shaped messages that resolve to nothing; then the returning
    laptop's late secrets reach seat 0 and expose Y. Seat 0 must still pass that proof on (the bound on kept
    proofs is per sender, or counts only proofs that exposed someone)."""
    table, c1, identities, t2 = _cheat_continuation()
    p2 = table.identities[RETURNING]
    late = _late(table)
    runner = _runner(c1, identities[0], table.sessions[0], tmp_path)
    mesh = _Mesh()
    runner.mesh = mesh  # type: ignore[assignment]
    for index in range(junk):
        runner._go_on_received(Y, _proof_message(_junk_proof(index)))
    assert not table.sessions[0].convictions
    runner.hold_back(_back(p2, t2, late), late, tell=False)
    assert set(table.sessions[0].convictions) == {Y}  # seat 0 itself found it
    assert any(proof.get("seat") == Y for proof in _sent_proofs(mesh))


def _seat_hearing_a_return(
    tmp_path: Path,
) -> tuple[Any, TableRunner, _Mesh, Identity, Continuation, list[dict[str, object]]]:
    """Seat 1 at the table playing on (its runner, on a recording mesh) where the killed seat asks back: the
    ended table, that runner and mesh, the returning key, the table playing now, and the returning seat's late set."""
    table = _killed()
    c1, identities, t2 = copy.deepcopy(_t2_base())
    late = _late(copy.deepcopy(table))
    runner = _runner(c1, identities[1], table.sessions[1], tmp_path)
    mesh = _Mesh()
    runner.mesh = mesh  # type: ignore[assignment]
    return table, runner, mesh, table.identities[RETURNING], t2, late


def test_late_sets_are_passed_on_once_per_digest_however_often_they_come(tmp_path: Path) -> None:
    """P-6.6 (no amplification): the same signed request and late set sent to a seat 50 times by every
    sender is settled once and rebroadcast once; a fifth distinct set is neither settled nor passed on."""
    table, runner, mesh, p2, t2, late = _seat_hearing_a_return(tmp_path)
    message = canonical({"go-on-back": _back(p2, t2, late).to_json(), "late": late})
    for _ in range(50):
        for sender in (0, 2, 1):
            runner._go_on_received(sender, message)
    assert len([m for m in mesh.sent if m.startswith(b'{"go-on-back"')]) == 1
    assert RETURNING in runner.take_backs and not table.sessions[1].convictions
    # other requests of the same seat (other ports: other digests only if the set differs)
    for port in range(42001, 42040):
        runner._go_on_received(0, canonical({"go-on-back": _back(p2, t2, late, port).to_json(), "late": late}))
    assert len([m for m in mesh.sent if m.startswith(b'{"go-on-back"')]) == 1


# -- 4. the take-back desk's links (P-5.7, P-6.6) -------------------------------------------------------------
def _desk(tmp_path: Path) -> tuple[Continuation, Identity, takeback.BackDesk, Identity]:
    table, c1, identities = _first_continuation()
    runner = TableRunner(c1, identities[0], tmp_path / "ann", BotPlayer("sixth-sense", "easy"), LOOPBACK)
    return c1, table.identities[2], takeback.BackDesk(runner, "Ann", LOOPBACK), table.identities[1]


async def _first_answer(port: int, identity: Identity, table_id: str) -> Any:
    async with connect(f"ws://{LOOPBACK}:{port}/", max_size=takeback.MAX_DESK_MESSAGE, proxy=None) as ws:
        cipher, _ = await takeback._handshake(ws, identity, table_id, initiator=True)
        return await takeback._recv(ws, cipher, 10)


def test_a_key_the_plan_does_not_leave_a_seat_to_cannot_take_over_a_held_request(tmp_path: Path) -> None:
    """Bob's request is held; a stranger (and a seat's person at the table) asking with Bob's very request
    on its own link is told no, and Bob's link stays the one the desk tells (P-5.7)."""
    c1, bob, desk, cor = _desk(tmp_path)
    seat_person = cor

    async def scenario() -> tuple[list[Any], Any]:
        async with serve(desk._serve, LOOPBACK, 0, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            back = make_take_back(bob, c1.table_id, 2, "Bob", LOOPBACK, 42000)
            held = takeback._Asking(None, None, back, asyncio.Event())  # type: ignore[arg-type]
            desk._asking[2] = held
            answers = [await _first_answer(port, who, c1.table_id) for who in (Identity.generate(), seat_person)]
            held.done.set()
            return answers, held.ws

    answers, ws = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert all(set(a) == {"error"} for a in answers) and ws is None


def test_silent_links_of_a_stranger_do_not_keep_the_person_from_the_desk(tmp_path: Path) -> None:
    """Anyone on the LAN may open links to the desk (its address is advertised) and say nothing: each is
    held until the handshake's timeout, and the desk serves `MAX_DESK_LINKS` at once. The person whose seat
    the desk keeps must still be shown the plan (a per-key share, or the link bound after the handshake)."""
    c1, bob, desk, _ = _desk(tmp_path)

    async def scenario() -> Any:
        async with serve(desk._serve, LOOPBACK, 0, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            silent = [
                await connect(f"ws://{LOOPBACK}:{port}/", max_size=takeback.MAX_DESK_MESSAGE, proxy=None)
                for _ in range(takeback.MAX_DESK_LINKS)
            ]
            try:
                while desk._opening < takeback.MAX_DESK_LINKS:  # every silent link is in the handshake
                    await asyncio.sleep(0.01)
                return await _first_answer(port, bob, c1.table_id)
            except Exception as exc:  # closed unanswered
                return {"refused": type(exc).__name__}
            finally:
                for ws in silent:
                    await ws.close()

    answer = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert "plan" in answer


def test_a_returning_laptop_cannot_make_the_seats_pass_on_more_late_sets_than_they_settle(tmp_path: Path) -> None:
    """P-6.6: the returning laptop (its key signs any request it likes) sends a seat 40 distinct late sets, each
    with its own signed request. The seat settles at most four, and passes on no more than it settles: every
    seat rebroadcasts what it passes on, so each set passed on costs every link of the mesh."""
    _, runner, mesh, p2, t2, late = _seat_hearing_a_return(tmp_path)
    for seq in range(40):
        other = [*late[:4], {**late[5], "seq": 100 + seq}]
        runner._go_on_received(0, canonical({"go-on-back": _back(p2, t2, other).to_json(), "late": other}))
    passed = [m for m in mesh.sent if m.startswith(b'{"go-on-back"')]
    assert len(passed) <= 4


def test_a_desk_whose_person_never_comes_for_the_signed_continuation_closes_after_the_patience(tmp_path: Path) -> None:
    """P-6.6: the desk stays open after the go-on only until the person it gives the seat back to was told, or
    the patience: a returning laptop that never asks again cannot keep it (and its port) open."""
    c1, bob, desk, _ = _desk(tmp_path)
    back = make_take_back(bob, c1.table_id, 2, "Bob", LOOPBACK, 42000)

    class _Gone:  # the link the person asked on, dropped
        async def send(self, data: Any) -> None:
            raise ConnectionError("gone")

        async def close(self) -> None:
            return None

    asking = takeback._Asking(_Gone(), None, back, asyncio.Event())  # type: ignore[arg-type]
    desk._asking[2] = asking
    given = types.SimpleNamespace(seats={2: back.info()})

    async def scenario() -> None:
        await desk.close_when_told(given, 0.3)  # type: ignore[arg-type]

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert asking.done.is_set() and not asking.told


def test_the_person_asking_again_with_another_request_keeps_the_request_the_seats_hold(tmp_path: Path) -> None:
    """P-5.7: after a blip the desk takes the person's new link, but never a new request: the one every seat
    holds (its address, its late set's digest) stays what the continuation is built from."""
    c1, bob, desk, _ = _desk(tmp_path)
    first = make_take_back(bob, c1.table_id, 2, "Bob", LOOPBACK, 42000)
    other = make_take_back(bob, c1.table_id, 2, "Bob", LOOPBACK, 42001)

    async def scenario() -> Any:
        async with serve(desk._serve, LOOPBACK, 0, max_size=takeback.MAX_DESK_MESSAGE) as server:
            port = server.sockets[0].getsockname()[1]
            held = takeback._Asking(None, None, first, asyncio.Event())  # type: ignore[arg-type]
            desk._asking[2] = held
            async with connect(f"ws://{LOOPBACK}:{port}/", max_size=takeback.MAX_DESK_MESSAGE, proxy=None) as ws:
                cipher, _ = await takeback._handshake(ws, bob, c1.table_id, initiator=True)
                assert "plan" in await takeback._recv(ws, cipher, 10)
                await takeback._send(ws, cipher, {"back": other.to_json()})
                answer = await takeback._recv(ws, cipher, 10)
                held.done.set()
            return answer, held

    answer, held = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert answer == {"held": 2} and held.back == first and held.ws is not None
