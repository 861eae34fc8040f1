"""Red team on the layers around the session (issue 9): the lobby's joint seat draw and signed plan
(I7, P-3.2), the journal and resume (I3), the mesh under a hostile peer (I6), and link flaps (I4).

Each test is an attack by a modified client. An attack the code withstands is an ordinary regression
test (it fails if the defence named in it is removed); an attack that breaks an invariant is a strict
xfail whose reason says what breaks and where.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from test_lobby_draw import Lobby, _draw_until_reveals, _finish
from test_mesh import identities, make_peers, raw_connect, raw_handshake, raw_resume, run, until
from websockets.exceptions import ConnectionClosed

from lanplay import mesh as mesh_module
from lanplay import netcli
from lanplay.cli import main
from lanplay.lobby import LobbyError
from lanplay.runner import PortTaken, TableRunner, announced_port_range, free_port, unfinished_journal
from lanplay.store import Journal, ResumeFailed, journal_path, set_aside_journals
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.plan import (
    TablePlan,
)
from protocol.session import PROTOCOL_VERSION, Send, TableSession
from protocol.testing import Harness
from protocol.version import RULES_DIGEST

HOST = "127.0.0.1"
GAME = "sixth-sense"
VERSION = {"protocol": PROTOCOL_VERSION, "rules": RULES_DIGEST}  # what the real joiner adds to its join


# --- link flaps and the step clock (I4) ------------------------------------------------------------


def _seed_stage(seed: int) -> tuple[Harness, TableSession]:
    """Seats 0 and 2 have committed their seed shares; seat 1 (Mallory) owes hers and never sends it."""
    h = Harness(GAME, 3, seed=seed)
    a, c = h.sessions[0], h.sessions[2]
    out_a, out_c = a.start(0.0), c.start(0.0)
    for o in out_c:
        if isinstance(o, Send):
            a.receive(2, o.data, 0.1)
    assert out_a
    a.set_connected(1, True, 0.0)
    a.set_connected(2, True, 0.0)
    return h, a


def _claimed_or_judged(session: TableSession, outputs: list[Any]) -> bool:
    return session.my_claim is not None or session.stage == "ended"


def test_a_withholder_with_a_steady_link_is_claimed_within_the_step_limit() -> None:
    """Control for the flap attack below: the same table with no flaps claims Mallory's step."""
    h, a = _seed_stage(301)
    limit = h.settings.step_timeout
    t = 0.0
    while t < 4 * limit and not _claimed_or_judged(a, []):
        t += 1.0
        a.tick(t)
    assert a.my_claim is not None and a.my_claim[0] == 1


def test_a_withholder_that_flaps_its_link_is_still_claimed() -> None:
    h, a = _seed_stage(302)
    limit = h.settings.step_timeout
    reconnect = h.settings.reconnect_timeout
    t, next_flap = 0.0, limit - 5
    while t < 3 * (limit + reconnect) and not _claimed_or_judged(a, []):
        t += 1.0
        if t >= next_flap:
            a.set_connected(1, False, t)
            a.set_connected(1, True, t + 0.2)  # Mallory's redial replaces her link at once
            next_flap += limit - 5
        a.tick(t + 0.5)
    assert _claimed_or_judged(a, []), f"after {t:.0f} s of flapping nobody has claimed Mallory's withheld step"


# --- the journal and resume (I3) -------------------------------------------------------------------


def _two_seat_plan() -> tuple[TablePlan, list[Identity]]:
    lobby = Lobby.make(2)
    signed, _ = _finish(lobby, 1, _draw_until_reveals(lobby, 1))
    by_key = {i.public.hex(): i for i in [lobby.host, *lobby.joiners]}
    return signed, [by_key[s.public_key] for s in signed.seats]


class _Idle:
    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        await asyncio.sleep(3600)


def _damaged_journal(home: Path, plan: TablePlan, damage: str) -> Path:
    """Seat 0's journal of ``plan``, valid JSON in a valid hash chain, with one record of the wrong
    shape (hand-edited, another version) or one that cannot replay."""
    path = journal_path(home, plan.table_id, 0)
    journal = Journal(path)
    seat = 1 if damage == "other-seat" else 0
    journal.append({"t": "table", "plan": plan.to_json(), "seat": seat, "protocol": PROTOCOL_VERSION})
    journal.append({"t": "start", "ms": 1000})
    journal.append({"t": "entropy", "hex": "00" * 32})
    journal.append({"t": "entropy", "hex": "00" * 32})
    damaged: dict[str, JSONObject] = {
        "bad-hex": {"t": "in", "from": 1, "data": "zz", "ms": 1001},
        "upper-hex": {"t": "in", "from": 1, "data": "AB", "ms": 1001},
        "missing-field": {"t": "in", "from": 1, "ms": 1001},
        "wrong-type": {"t": "in", "from": "1", "data": "00", "ms": 1001},
        "superscript": {"t": "tick", "ms": "²"},  # "²".isdigit() is true, int("²") raises
        "own-seat": {"t": "link", "seat": 0, "up": True, "ms": 1001},
        "no-such-seat": {"t": "link", "seat": 7, "up": True, "ms": 1001},
        "unknown-kind": {"t": "teleport", "ms": 1001},
        "second-start": {"t": "start", "ms": 1001},
        "move-not-object": {"t": "decide", "move": [1], "ms": 1001},
        "bad-move": {"t": "decide", "move": {"card": "zz"}, "ms": 1001},  # a replay that diverged
        "short-entropy": {"t": "entropy", "hex": "00"},
        "other-seat": {"t": "tick", "ms": 1001},
    }
    journal.append(damaged[damage])
    return path


# Damage the shape check finds (the rest is found only by replaying: the journal looks fine).
_SHAPE_DAMAGE = ["bad-hex", "upper-hex", "missing-field", "wrong-type", "superscript", "own-seat", "no-such-seat",
                 "unknown-kind", "second-start", "move-not-object"]  # fmt: skip
_REPLAY_DAMAGE = ["bad-move", "short-entropy", "other-seat"]


@pytest.mark.parametrize("damage", _SHAPE_DAMAGE + _REPLAY_DAMAGE)
def test_a_journal_that_cannot_resume_says_why_and_stays_out_of_the_way(tmp_path: Path, damage: str) -> None:
    """I3: a journal whose replay cannot go on (a record of the wrong shape, or a replay that does not
    go as it went) fails the resume with one `ResumeFailed` naming the journal and the line, opens
    nothing (the mesh's port is free), and is set aside: nothing offers it again, `lanplay where`
    lists it, and the same runner then starts its seat afresh."""
    plan, idents = _two_seat_plan()
    path = _damaged_journal(tmp_path, plan, damage)
    port = plan.seats[0].port if plan.seats[0].public_key == idents[0].public.hex() else plan.seats[1].port

    async def resume() -> None:
        runner = TableRunner(plan, idents[0], tmp_path, _Idle(), HOST, step_timeout=5, reconnect_timeout=5)
        async with asyncio.timeout(10):
            await runner.run()

    with pytest.raises(Exception) as caught:  # the point is which exception
        asyncio.run(resume())
    failed = caught.value
    assert isinstance(failed, ResumeFailed), f"resume failed with a bare {type(failed).__name__}: {failed}"
    assert str(path) in str(failed) and ("line 5" in failed.why or "first line" in failed.why), failed.why
    assert failed.set_aside_as is not None and failed.set_aside_as.exists() and not path.exists()
    assert failed.set_aside_as.name in str(failed)
    assert unfinished_journal(tmp_path) is None  # not offered again: `lanplay`, `where`, play all go on
    assert set_aside_journals(tmp_path) == [failed.set_aside_as]
    with socket.socket() as probe:  # nothing was left listening
        probe.bind((HOST, port))


def test_a_seat_whose_port_is_taken_says_so_and_keeps_its_game(tmp_path: Path) -> None:
    """I3: the other seats know a seat by the port it announced. Another program on that port (while
    the seat restarts) fails the start with one `PortTaken` naming the address, leaves nothing open and
    keeps the journal; once the port is free the same command listens there and plays on."""
    plan, idents = _two_seat_plan()
    path = journal_path(tmp_path, plan.table_id, 0)
    Journal(path).append({"t": "table", "plan": plan.to_json(), "seat": 0, "protocol": PROTOCOL_VERSION})
    port = plan.seats[0].port

    def runner() -> TableRunner:
        return TableRunner(plan, idents[0], tmp_path, _Idle(), HOST, step_timeout=5, reconnect_timeout=5)

    async def start_on_a_taken_port() -> None:
        async with asyncio.timeout(10):
            await runner().run()

    with socket.socket() as holder:
        holder.bind((HOST, port))
        holder.listen()
        with pytest.raises(PortTaken, match=f"{HOST}:{port}.*run the same command again"):
            asyncio.run(start_on_a_taken_port())
    assert unfinished_journal(tmp_path) == (plan, path)

    async def listens_once_free() -> bool:
        task = asyncio.create_task(runner().run())
        try:
            for _ in range(200):
                await asyncio.sleep(0.05)
                with socket.socket() as probe:
                    try:
                        probe.bind((HOST, port))
                    except OSError:
                        return True  # the seat listens on its port again
            return False
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    assert asyncio.run(listens_once_free())


def test_a_seat_announces_a_port_no_outgoing_connection_takes() -> None:
    """A seat that restarts must get its announced port back: ports of the kernel's ephemeral range
    are the local ends of outgoing connections (the other seats redialling it, any program), so a
    seat's port is drawn below that range, each one once per process."""
    ports = {free_port(HOST) for _ in range(20)}
    assert len(ports) == 20 and all(port in announced_port_range() for port in ports), sorted(ports)
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert max(announced_port_range()) < low


@pytest.mark.parametrize("damage", _SHAPE_DAMAGE)
def test_a_journal_of_the_wrong_shape_is_never_offered(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    """What `lanplay where`, the lobby's r and every command's resume ask first: a journal that cannot
    be resumed is set aside there, with a warning naming it and the fault, and not offered."""
    plan, _ = _two_seat_plan()
    path = _damaged_journal(tmp_path, plan, damage)
    caplog.set_level(logging.WARNING)
    assert unfinished_journal(tmp_path) is None
    (aside,) = set_aside_journals(tmp_path)
    assert not path.exists() and aside.name == path.name + ".broken"
    assert any(str(path) in r.getMessage() and "line 5" in r.getMessage() for r in caplog.records)
    Journal(aside).read()  # kept whole, for a look


@pytest.mark.parametrize("version", [None, 1, "two"])
def test_a_journal_of_another_protocol_version_is_set_aside_not_replayed(
    tmp_path: Path, version: object, caplog: pytest.LogCaptureFixture
) -> None:
    """A journal written before passes named their input (protocol 1): replayed under this protocol,
    its peers' honest passes would read as P-1.3 faults and blame them. It is set aside, saying so."""
    plan, idents = _two_seat_plan()
    path = journal_path(tmp_path, plan.table_id, 0)
    first: JSONObject = {"t": "table", "plan": plan.to_json(), "seat": 0}
    if version is not None:
        first["protocol"] = version
    Journal(path).append(first)
    Journal(path).append({"t": "start", "ms": 1000})
    caplog.set_level(logging.WARNING)
    assert unfinished_journal(tmp_path) is None
    assert any("protocol version" in r.getMessage() for r in caplog.records)

    async def resume() -> None:  # a runner asked to play that table refuses the journal alike
        Journal(path).append(first)
        runner = TableRunner(plan, idents[0], tmp_path, _Idle(), HOST, step_timeout=5, reconnect_timeout=5)
        async with asyncio.timeout(10):
            await runner.run()

    with pytest.raises(ResumeFailed, match="protocol version"):
        asyncio.run(resume())


def test_a_journal_whose_replay_diverges_is_offered_then_set_aside(tmp_path: Path) -> None:
    """Damage only a replay finds: the journal is offered (it looks fine), the resume fails with
    `ResumeFailed`, and from then on it is set aside (a second damaged one gets its own name)."""
    plan, idents = _two_seat_plan()
    for round_ in range(2):
        path = _damaged_journal(tmp_path, plan, "bad-move")
        assert unfinished_journal(tmp_path) == (plan, path)
        runner = TableRunner(plan, idents[0], tmp_path, _Idle(), HOST, step_timeout=5, reconnect_timeout=5)
        with pytest.raises(ResumeFailed, match=r"line 5 \('decide'\) does not replay"):
            asyncio.run(runner.run())
        assert unfinished_journal(tmp_path) is None
        assert len(set_aside_journals(tmp_path)) == round_ + 1


def test_the_commands_say_a_resume_failed_and_do_what_was_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI path (I3): every network command resumes first; a resume that fails prints one line
    naming the journal and where it was set aside, then the command goes on; `lanplay where` lists
    the journal set aside."""
    plan, idents = _two_seat_plan()
    path = _damaged_journal(tmp_path, plan, "bad-move")
    (tmp_path / "identity.key").write_bytes(idents[0].private_bytes())
    (tmp_path / "identity.key").chmod(0o600)
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path))
    asked: list[Identity] = []

    async def command(identity: Identity) -> Any:
        asked.append(identity)
        raise LobbyError("no table found (the command itself ran)")

    args = argparse.Namespace(step_timeout=5.0, reconnect_timeout=5.0)
    code = asyncio.run(netcli._resume_or(command, tmp_path, HOST, _Idle(), args))
    err = capsys.readouterr().err
    assert code == 2 and len(asked) == 1 and asked[0].public == idents[0].public
    assert f"lanplay: cannot resume the game journaled in {path}" in err and ".broken" in err, err
    assert "Traceback" not in err
    assert main(["where"]) == 0
    out = capsys.readouterr().out
    assert "unfinished games: none" in out and f"journals set aside, they could not be resumed: {path}.broken" in out


# --- replay determinism: does a resumed seat sign exactly what it signed before? -------------------


class _Captured(TableRunner):
    """A real runner (journal, keep rules, link records) with the mesh cut out: what it sends is kept
    here, and its clock is ours."""

    def __init__(self, plan: TablePlan, ident: Identity, home: Path) -> None:
        super().__init__(plan, ident, home, _Idle(), HOST, step_timeout=20, reconnect_timeout=120)
        self.sent: list[Send] = []
        self.clock_ms = 1_000_000

    def _ms(self) -> int:  # type: ignore[override]
        return self.clock_ms

    def _send(self, output: Send) -> None:
        self.sent.append(output)

    def open(self) -> None:
        self.session = TableSession(self.settings, self.identity, self.clock_ms / 1000, self._entropy)
        self.journal.append({"t": "table", "plan": self.plan.to_json(), "seat": self.me, "protocol": PROTOCOL_VERSION})
        self.journal.append({"t": "start", "ms": self.clock_ms})
        self._dispatch(self.session.start(self.clock_ms / 1000))


def _own(sends: list[Send]) -> list[bytes]:
    return [s.data for s in sends if not s.forward]


@pytest.mark.parametrize("flaps", [False, True])
def test_a_replayed_journal_signs_exactly_the_messages_signed_before(tmp_path: Path, flaps: bool) -> None:
    """P-5.4 and I1: the journal holds every input the session kept, link changes and the ticks that
    mattered; replayed into a fresh session it must give the very same signed messages, in order, so a
    resumed seat never signs a second, different message at a seq it used (self-equivocation would get
    it convicted). Here: the deal, link flaps around it, a withheld step and the timeout claim."""
    plan, idents = _two_seat_plan()
    runners = [_Captured(plan, idents[s], tmp_path / f"seat{s}") for s in range(2)]
    peer = [r.peer_ids[1 - r.me] for r in runners]
    for r, p in zip(runners, peer, strict=True):
        r._on_status(p, True)
        r.open()
    delivered = [0, 0]
    withholding = False
    withheld_at = -1

    def route() -> None:
        for s, r in enumerate(runners):
            while delivered[s] < len(r.sent):
                out = r.sent[delivered[s]]
                delivered[s] += 1
                if withholding and s == 1:
                    continue
                runners[1 - s]._receive(s, out.data)

    for step in range(1200):
        for r in runners:
            r.clock_ms += 250
        # seat 1's link drops and comes back: often while the deal goes on, once while it withholds
        flap = (step % 7 == 3 and not withholding) or (withheld_at >= 0 and step == withheld_at + 40)
        if flaps and flap:
            runners[0]._on_status(peer[0], False)
            runners[0].clock_ms += 100
            runners[0]._on_status(peer[0], True)
        if runners[0].session is not None and runners[0].session.stage == "deal" and step > 20:
            withheld_at = step if not withholding else withheld_at
            withholding = True  # from here seat 1 sends nothing (its deal step is owed): seat 0 must claim it
        for r in runners:
            r._tick()
        for r in runners:
            moves = r.session.decision() if r.session else ()
            if moves and not withholding:
                asyncio.run(r.submit(moves[0]))
        route()
        if runners[0].session is not None and runners[0].session.my_claim is not None:
            break
    live = runners[0]
    assert live.session is not None
    assert live.session.my_claim is not None, (live.session.stage, live.session.waiting(), len(live.sent))
    records = live.journal.read()
    fresh = _Captured(plan, idents[0], tmp_path / "seat0")
    fresh.session = TableSession(fresh.settings, fresh.identity, 0.0, fresh._entropy)
    replayed = fresh._restore(records[1:])
    assert _own(replayed) == _own(live.sent), "the replay signed other messages than the live seat did"


# --- the mesh under a seated hostile peer (I6, I3) ---------------------------------------------------


def test_a_peer_that_reconnects_in_a_loop_costs_no_memory_and_blocks_no_one() -> None:
    """A seated peer dials, shakes hands and hangs up 40 times as fast as it can (each new link replaces
    the old one): the mesh holds at most one link for it, leaves no task behind, and the honest peer's
    messages keep flowing. Every flap is reported (down, up): the runner above sees them all, which
    is what the flap attack on the step clock uses (see the xfail above)."""

    async def body() -> None:
        low, honest_id, target_id = identities(3)  # low dials the others
        peers = await make_peers([honest_id, target_id])
        honest, target = peers
        for peer in peers:
            peer.mesh.allow(low.peer_id)
        try:
            await honest.mesh.connect(target.id, "127.0.0.1", target.port)
            await target.mesh.connect(honest.id, "127.0.0.1", honest.port)
            await target.mesh.wait_connected({honest.id}, 5)
            for i in range(40):
                async with raw_connect(target.port) as ws:
                    cipher = await raw_handshake(ws, low)
                    await raw_resume(ws, cipher, os.urandom(16))  # a "new process" every time
                    target.mesh.send(honest.id, f"m{i}".encode())
                await until(lambda: low.peer_id not in target.mesh.connected_peers())
            await until(lambda: len(honest.received_from(target)) == 40)
            assert len(target.mesh._links) <= 1
            assert len(target.mesh._background) < 5
            flaps = [up for who, up in target.statuses if who == low.peer_id]
            assert flaps.count(True) == 40 and flaps.count(False) == 40
        finally:
            for peer in peers:
                await peer.mesh.close()

    run(body(), limit=40.0)


@pytest.mark.parametrize("lie", ["ack-unsent", "resume-unsent", "data-skips-ahead", "junk-after-handshake"])
def test_a_peer_that_lies_about_numbering_loses_only_its_link(lie: str) -> None:
    """After the handshake: an ACK for messages never sent, a RESUME that claims to have received
    more than was ever queued, DATA that skips numbers, a frame of an unknown type. Each closes that
    peer's link (1008) and nothing else; nothing is delivered from it."""

    async def body() -> None:
        low, target_id = identities(2)
        (target,) = await make_peers([target_id], allowed=lambda _: {low.peer_id})
        try:
            async with raw_connect(target.port) as ws:
                cipher = await raw_handshake(ws, low)
                if lie == "resume-unsent":
                    theirs = mesh_module._decode_resume(cipher.open(await ws.recv()))
                    await ws.send(cipher.seal(mesh_module._encode_resume(os.urandom(16), theirs[0], 5, 0)))
                else:
                    await raw_resume(ws, cipher, os.urandom(16))
                    await until(lambda: low.peer_id in target.mesh.connected_peers())
                    frame = {
                        "ack-unsent": mesh_module._encode_ack(7),
                        "data-skips-ahead": mesh_module._encode_data(3, b"x"),
                        "junk-after-handshake": b"\x07" + os.urandom(30),
                    }[lie]
                    await ws.send(cipher.seal(frame))
                with pytest.raises(ConnectionClosed) as info:
                    async with asyncio.timeout(5):
                        while True:
                            await ws.recv()
                assert info.value.rcvd is not None and info.value.rcvd.code == 1008
            assert target.messages == []
            await until(lambda: low.peer_id not in target.mesh.connected_peers())
        finally:
            await target.mesh.close()

    run(body())
