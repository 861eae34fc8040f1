"""The table session through its public API (`handle`, its queries, `verify`): honest tables agree and
finish, a withheld step is waited for and never convicted, a leave voids the round, a journal replays
into the same signatures, faults are exposed by proofs that verify offline (P-5, P-6)."""

from __future__ import annotations

import json

import pytest
from tablenet import TABLE, Table, make_table

from engine.games import get_game
from protocol.encoding import canonical, decode
from protocol.errors import ProtocolError
from protocol.signed import SignedMessage, sign_message
from protocol.table import (
    Dealt,
    Exposed,
    Finished,
    Leave,
    PeekResult,
    Plan,
    Received,
    RoundConfirmed,
    Stopped,
    TableSession,
    verify,
)
from protocol.table.verify import check_end, check_record


def _finished_alike(table: Table) -> dict[str, object]:
    records = [s.record_json() for s in table.sessions]
    assert all(s.finished for s in table.sessions), [s.phase for s in table.sessions]
    assert all(canonical(r) == canonical(records[0]) for r in records[1:])
    return records[0]


def _leave_after_first_round(table: Table, leaver: int) -> None:
    while not table.of(leaver, RoundConfirmed) and table.step():
        pass
    table.deliver_all()
    table.feed(leaver, Leave(table.now))
    table.run()


@pytest.mark.parametrize(
    ("game", "seats", "options"),
    [
        ("sixth-sense", 3, {}),
        ("sixth-sense", 4, {"late_trump": True}),
        ("take6", 3, {}),
        ("take6", 4, {"logic": True}),
        ("sixes", 3, {}),
    ],
)
def test_honest_seats_confirm_the_same_rounds_and_sign_one_record(
    game: str, seats: int, options: dict[str, object]
) -> None:
    """P-6.2 / P-5.8: an honest table confirms the same rounds everywhere and, when a person leaves,
    ends with every present seat's signature on one record; nobody is exposed for leaving (P-5.7)."""
    table = make_table(game, seats, options, seed=seats)
    _leave_after_first_round(table, seats - 1)
    present = [s for s in table.sessions if s.me != seats - 1]
    assert all(s.finished and not s.complete and not s.exposed for s in present)
    records = [canonical(s.record_json()) for s in present]
    assert len(set(records)) == 1
    record = json.loads(records[0])
    assert len(record["rounds"]) >= 1 and record["stops"][0]["owed"] == "left"
    assert all(any(isinstance(e, Stopped) and e.owed == "left" for e in table.events[s.me]) for s in present)


def test_a_whole_game_ends_complete_with_every_seat_signing_the_same_record() -> None:
    table = make_table("sixth-sense", 2, {}, seed=7)
    table.run()
    record = _finished_alike(table)
    assert record["complete"] is True and record["exposed"] == [] and record["proofs"] == []
    assert check_end(record) == (0, 1)  # P-5.8: both seats' signed end messages name this record
    assert get_game("sixth-sense").winners is not None


def test_a_withheld_step_is_waited_for_and_stopped_never_convicted() -> None:
    """P-5.5 / P-6.1: a seat that stops answering (its lid closed) is shown as waited for; past the
    patience another seat stops the round naming it; nobody is exposed, and the rest finish."""
    table = make_table("take6", 3, {}, seed=3, patience=30.0)
    table.silent.add(2)
    table.run()
    waiting = table.sessions[0].waiting(table.now)
    assert waiting and all(w.seat == 2 for w in waiting)
    table.wait(10)
    assert not any(table.of(s, Stopped) for s in (0, 1))  # within the patience: only waited for
    table.wait(25)
    table.wait(31)
    table.wait(31)
    for seat in (0, 1):
        stops = table.of(seat, Stopped)
        assert stops and stops[0].seat == 2  # type: ignore[attr-defined]
        assert not table.sessions[seat].exposed
        assert table.sessions[seat].finished and not table.sessions[seat].complete


def test_a_journal_replays_into_the_same_signed_messages() -> None:
    """P-5.6: a seat's input events with its seed give the same bytes, so a restart never signs two
    versions of one step."""
    table = make_table("sixes", 3, {}, seed=5)
    for _ in range(40):
        table.step()
    table.deliver_all()
    for seat in range(3):
        original = table.sessions[seat]
        again = TableSession(original.settings, original.identity, table.seeds[seat])
        for event in table.journals[seat]:
            again.handle(event)
        assert again.ledger.chains[seat] == original.ledger.chains[seat]
        assert [m.to_wire() for m in again.ledger.chains[seat]] == [m.to_wire() for m in original.ledger.chains[seat]]
        assert again.record_json() == original.record_json()


def _fork_one_shuffle(table: Table, cheat: int, victim: int) -> None:
    """`cheat` signs a second version of its shuffle pass for `victim` alone (P-1.3)."""
    identity = table.identities[cheat]

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if sender != cheat or to != victim:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("kind") != "shuffle" or raw.get("author") != identity.peer_id:
            return data
        msg = SignedMessage.from_json(raw)
        body = dict(msg.body)
        body["points"] = list(reversed(body["points"]))  # type: ignore[call-overload]
        other = sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body)
        return other.to_wire()

    table.rewrite = rewrite


def test_two_versions_of_one_message_expose_their_signer_at_every_honest_seat() -> None:
    """P-6.2: a fork sent to one honest seat meets the other version through gossip; the proof is
    passed on and every honest seat exposes the same seat, by a proof `verify` accepts offline."""
    table = make_table("sixes", 4, {}, seed=11)
    _fork_one_shuffle(table, cheat=1, victim=2)
    table.run()
    table.wait(1)
    for seat in (0, 2, 3):
        exposed = table.of(seat, Exposed)
        assert [e.seat for e in exposed] == [1]  # type: ignore[attr-defined]
        assert table.sessions[seat].exposed == {1}
    proof = table.of(0, Exposed)[0].proof  # type: ignore[attr-defined]
    session = table.sessions[0]
    conviction = verify(session.plan, proof, session.rounds)
    assert conviction.seat == 1 and conviction.kind == "fork"


def test_a_move_out_of_turn_is_refused_on_the_history_it_names_and_its_proof_verifies() -> None:
    """P-5.1 / P-5.4: a signed move from a seat the engine does not expect is refused by every seat and
    exposed by a refusal proof that `verify` accepts; the honest seats are not exposed."""
    table = make_table("sixth-sense", 3, {}, seed=13)
    while table.sessions[0].phase != "play" and table.step():
        pass
    table.deliver_all()
    expected = table.sessions[0].ledger.current()
    assert expected is not None
    mover = expected.seats[0]
    cheat = (mover + 1) % 3
    session = table.sessions[cheat]
    chain = session.ledger.chains[cheat]
    history = session.named_history()  # the cheat signs on its real history
    body = {"move": {"seat": cheat, "predict": None}, "on": history}
    msg = sign_message(
        table.identities[cheat], TABLE, session.round_index, len(chain), chain[-1].digest(), "move", body
    )
    for to in range(3):
        if to != cheat:
            table.feed(to, Received(cheat, msg.to_wire(), table.now))
    table.deliver_all()
    for seat in range(3):
        if seat != cheat:
            assert [e.seat for e in table.of(seat, Exposed)] == [cheat]  # type: ignore[attr-defined]
    proof = table.of((cheat + 1) % 3, Exposed)[0].proof  # type: ignore[attr-defined]
    assert proof["kind"] == "refused"
    assert verify(table.sessions[mover].plan, proof, table.sessions[mover].rounds).seat == cheat


def test_verify_refuses_a_proof_against_an_honest_message() -> None:
    """P-6.1: a 'refusal' built around an honest seat's move shows nothing."""
    table = make_table("sixes", 3, {}, seed=17)
    for _ in range(6):
        table.step()
    table.deliver_all()
    session = table.sessions[0]
    ledger = session.ledger
    honest = next(m for seat in range(3) for m in ledger.chains[seat] if m.kind == "move")
    history = [m.to_json() for seat in range(3) for m in ledger.chains[seat][: ledger.cursor[seat]] if m != honest]
    proof = {"kind": "refused", "round": session.round_index, "message": honest.to_json(), "history": history}
    with pytest.raises(ProtocolError):
        verify(session.plan, proof, session.rounds)
    with pytest.raises(ProtocolError):
        verify(session.plan, {"kind": "fork", "first": honest.to_json(), "second": honest.to_json()}, ())


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b"[]",
        b'{"proof": 1}',
        b'{"proof": {"kind": "audit", "round": 0, "seat": 1, "messages": [[9, 9, 9]]}}',
        b'{"table": 1}',
        b"\xff" * 10,
        json.dumps({"a": [[]] * 40}).encode(),
    ],
)
def test_garbage_from_a_peer_never_raises_and_changes_nothing(data: bytes) -> None:
    """P-6.3: any bytes from a link are refused or ignored; the table plays on."""
    table = make_table("sixes", 3, {}, seed=19)
    before = [len(c) for c in table.sessions[0].ledger.chains]
    table.feed(0, Received(1, data, 0.1))
    assert [len(c) for c in table.sessions[0].ledger.chains] == before
    table.run(max_moves=20)
    assert not table.sessions[0].exposed


def test_a_record_with_proofs_checks_again_offline() -> None:
    """`lanplay verify`: every proof written into the record is checked again by the one `verify`."""
    table = make_table("sixes", 4, {}, seed=11)
    _fork_one_shuffle(table, cheat=1, victim=2)
    table.run()
    table.wait(1)
    table.wait(31)
    record = table.sessions[0].record_json()
    names, results = check_record(json.loads(json.dumps(record)))
    assert [r.conviction.seat for r in results if r.conviction] == [1]  # type: ignore[union-attr]
    assert Plan(TABLE, get_game("sixes"), get_game("sixes").options_from_json({}), ()).table == TABLE
    assert names == ("P0", "P1", "P2", "P3") and all(r.error is None for r in results)
    assert any(isinstance(e, Finished) for e in table.events[0])


def test_two_peeks_at_one_seat_in_a_round_both_answered_and_the_peeker_plays_on() -> None:
    """S-6.4: a seat may peek twice at the same seat in one round; after each answer it moves on (a
    second peek at one target once left the peeker with no move, and the table waited for good)."""
    table = make_table("sixth-sense", 2, {}, seed=30)
    table.run()
    twice = False
    for seat in range(2):
        per_round: dict[tuple[int, int], int] = {}
        round_no = -1
        for event in table.events[seat]:
            if isinstance(event, Dealt):
                round_no = event.round
            elif isinstance(event, PeekResult):
                per_round[(round_no, event.target)] = per_round.get((round_no, event.target), 0) + 1
        twice |= any(count >= 2 for count in per_round.values())
    assert twice, "this seed no longer peeks twice at one seat: choose another"
    assert all(s.finished and s.complete for s in table.sessions), [s.phase for s in table.sessions]
