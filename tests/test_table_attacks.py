"""Attacks on the table protocol by modified clients, through the public API of `TableSession`, grouped
by the invariant each checks (shared/specs/protocol.md P-6): accuracy (P-6.1), completeness and
agreement (P-6.2), no input raises (P-6.3), every table ends or visibly waits (P-6.4), bounded
resources (P-6.6). A cheat signs on its real history (`named_history`) with its own identity; faults of
the network are drops and holds through the table's `rewrite` hook. An attack the protocol does not yet
withstand is marked `xfail(strict=True)` with the property it breaks."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import pytest
from tablenet import TABLE, Table, make_table

from engine.api import JSONObject
from protocol.encoding import canonical, decode
from protocol.errors import ProtocolError
from protocol.signed import SignedMessage, sign_message
from protocol.table import Exposed, Leave, Received, Refused, verify
from protocol.table.messages import private_channel

# -- helpers ---------------------------------------------------------------------------------------


def check_invariants(table: Table, honest: Iterable[int], cheats: Iterable[int] = (), waits: int = 6) -> None:
    """P-6.1 .. P-6.4 at every honest seat after the table has had time to end (`waits` patiences)."""
    honest = tuple(honest)
    for _ in range(waits):
        table.wait(31)
    sessions = [table.sessions[s] for s in honest]
    for seat in honest:  # P-6.3: no input raised
        crashes = [e for e in table.of(seat, Refused) if "could not be handled" in e.message]  # type: ignore[attr-defined]
        assert not crashes, f"seat {seat}: {crashes[0]}"
    for session in sessions:  # P-6.1: no honest seat exposed anywhere honest
        assert not (session.exposed & set(honest)), (session.me, session.convicted_lines())
        assert set(session.exposed) <= set(cheats), (session.me, session.convicted_lines())
    assert len({s.exposed for s in sessions}) == 1, [(s.me, sorted(s.exposed)) for s in sessions]  # P-6.2
    assert len({len(s.rounds) for s in sessions}) == 1, [(s.me, len(s.rounds)) for s in sessions]
    for session in sessions:  # P-6.4: finished, or says whom it waits for
        assert session.finished or session.waiting(table.now), (session.me, session.phase)
    finished = [canonical(s.record_json()) for s in sessions if s.finished]
    assert len(set(finished)) <= 1  # P-6.2 / P-5.8: one record


def sign_next(table: Table, seat: int, kind: str, body: JSONObject, on: JSONObject | None = None) -> SignedMessage:
    """The next public message of `seat`'s chain as its own session would number it, on its real history."""
    session = table.sessions[seat]
    chain = session.ledger.chains[seat]
    prev = chain[-1].digest() if chain else "0" * 64
    history = on if on is not None else session.named_history()
    return sign_message(table.identities[seat], TABLE, session.round_index, len(chain), prev, kind, {**body, "on": history})


def send(table: Table, sender: int, data: bytes, to: Iterable[int]) -> None:
    for seat in to:
        table.feed(seat, Received(sender, data, table.now))
    table.deliver_all()


def others(table: Table, seat: int) -> list[int]:
    return [s for s in range(table.n) if s != seat]


def run_until(table: Table, done: Callable[[], bool], limit: int = 400) -> None:
    for _ in range(limit):
        if done():
            return
        if not table.step():
            break
    table.deliver_all()


# -- P-6.3 / P-6.4: a message whose history cannot be read ---------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="P-6.3/P-6.4: a public message with an unreadable 'on' makes _fault_proof re-raise on every input",
)
@pytest.mark.parametrize("damage", ["rec", "missing", "heads"])
def test_a_public_message_with_an_unreadable_history_is_exposed_and_raises_nothing(damage: str) -> None:
    table = make_table("sixes", 3, {}, seed=5)
    for _ in range(3):
        table.step()
    table.deliver_all()
    cheat = 2
    on = table.sessions[cheat].named_history()
    if damage == "rec":
        on["rec"] = "00" * 32
    elif damage == "heads":
        on["heads"] = [[0, "zz"]] * 3
    msg = sign_next(table, cheat, "wait", {}, on=on)
    if damage == "missing":
        body = {k: v for k, v in msg.body.items() if k != "on"}
        session = table.sessions[cheat]
        msg = sign_message(table.identities[cheat], TABLE, session.round_index, msg.seq, msg.prev, "wait", body)
    table.silent.add(cheat)
    send(table, cheat, msg.to_wire(), others(table, cheat))
    table.run(200)
    check_invariants(table, (0, 1), (cheat,))
    assert all(table.sessions[s].exposed == {cheat} for s in (0, 1))
