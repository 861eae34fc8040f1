"""A returning seat's late secrets (P-5.5, P-5.7) against a modified client: what the returning laptop (or
the desk it asks, or a present seat) may send or sign so that the ended table's sessions settle something
else than its honest chain of the stopped round. Whatever comes, only the returning seat is exposed, and
only by a proof `verify` accepts (P-5.4, P-6.1); the seats that settle one set agree (P-6.2); the ended
table's confirmed rounds and record digest stay (P-5.8); nothing raises (P-6.3); what is kept is bounded
(P-6.6); and the seat is given back only when every present seat settled the very same request (P-5.7).

The table: 3 seats of Sixes; seat 2's laptop dies three moves into round 2 (round index 1), seats 0 and 1
stop the round for its move, then for its secrets, and end the table (`_killed_after_a_round`). Its journal
(its session) holds its chain of the round: shuffle, lock, open, move (seqs 0-3); coming back it signs a
leave (4) and its secrets (5) (`_late`)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest
from tablenet import Table, make_table
from test_take_back import (
    GAME,
    HOST,
    OPTIONS,
    _away_continuation,
    _bot_left,
    _decide_back,
    _killed_after_a_round,
    _late,
    _plan_seats,
    _take_back_offers,
)

from lanplay.table.runner import BotPlayer, OwedSecrets, TableRunner
from protocol.continuation import (
    MAX_LATE_MESSAGES,
    Continuation,
    Offer,
    TakeBack,
    decide,
    late_digest,
    make_offer,
    make_take_back,
    settle_owed,
)
from protocol.deck import ShuffleSecret
from protocol.encoding import JSONObject, canonical
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.signed import SignedMessage, sign_message
from protocol.table import Decided, LinkChanged, Received, TableSession
from protocol.table.session import MAX_HELD
from protocol.table.verify import check_end, verify

RETURNING = 2
PRESENT = (0, 1)


# -- the tables, built once (deep copies are cheap) ---------------------------------------------------------
@functools.cache
def _killed_base() -> Table:
    return _killed_after_a_round()


@functools.cache
def _cheat_base() -> Table:
    """As `_killed_after_a_round`, but present seat 1 (Y) published, after the stop, shuffle secrets that do
    not reproduce its shuffle pass (a swapped permutation, self-consistent in its own chain). The audit that
    would show it needs every seat's secrets: seat 2's never came, so the table ends with nobody exposed."""
    table = make_table(GAME, 3, OPTIONS, seed=5)
    table.confirm_round()
    for _ in range(3):
        table.step()
    y = table.sessions[1]
    assert y.my_shuffle is not None
    permutation = list(y.my_shuffle.permutation)
    permutation[0], permutation[1] = permutation[1], permutation[0]
    y.my_shuffle = ShuffleSecret(y.my_shuffle.scalar, tuple(permutation))
    table.silent.add(RETURNING)
    for seat in PRESENT:
        table.feed(seat, LinkChanged(RETURNING, False, table.now))
    table.finish(PRESENT, 20)
    assert all(table.sessions[s].finished and not table.sessions[s].convictions for s in PRESENT)
    return table


@functools.cache
def _t2_base() -> tuple[Continuation, list[Identity], Table]:
    """The continuation (seat 2 left, owing its secrets) and its table, which played a round; its bot leaves."""
    c1, identities = _away_continuation(copy.deepcopy(_killed_base()))
    return c1, identities, _bot_left(c1, identities)


def _killed() -> Table:
    return copy.deepcopy(_killed_base())


# -- building late messages -------------------------------------------------------------------------------
def _sign(identity: Identity, m: JSONObject, **changes: Any) -> JSONObject:
    f = {**m, **changes}
    return sign_message(identity, str(f["table"]), int(str(f["round"])), int(str(f["seq"])), str(f["prev"]),
                        str(f["kind"]), f["body"]).to_json()  # type: ignore[arg-type]  # fmt: skip


def _digest(m: JSONObject) -> str:
    return SignedMessage.from_json(m).digest()


def _relinked(identity: Identity, messages: list[JSONObject], start: int) -> list[JSONObject]:
    """Messages from `start` on signed again as one chain (seq, prev and the author's own head in `on`)."""
    out = list(messages[:start])
    for index in range(start, len(messages)):
        m = copy.deepcopy(messages[index])
        prev = _digest(out[-1]) if out else "0" * 64
        body = m["body"]
        assert isinstance(body, dict)
        on = body["on"]
        assert isinstance(on, dict) and isinstance(on["heads"], list)
        on["heads"][RETURNING] = [index - 1, prev] if out else None
        out.append(_sign(identity, m, seq=index, prev=prev, body=body))
    return out


def _padded(m: JSONObject) -> JSONObject:
    body = copy.deepcopy(m["body"])
    assert isinstance(body, dict)
    return {**m, "body": {**body, "pad": 1}}


def _head(session: TableSession, seat: int, seq: int) -> list[object]:
    return [seq, session.ledger.chains[seat][seq].digest()]


# -- what must hold at every seat that settles -------------------------------------------------------------
def _settle_all(table: Table, late: list[JSONObject], seats: tuple[int, ...] = PRESENT) -> dict[int, bool]:
    """Settle `late` at each seat, checking what must always hold there; the seats' verdicts."""
    out = {}
    for seat in seats:
        session = table.sessions[seat]
        digest, rounds, end = session.record_digest(), list(session.rounds), check_end(session.record_json())
        kept = settle_owed(session, RETURNING, late, table.now)  # P-6.3: never raises
        out[seat] = kept
        assert session.record_digest() == digest and session.rounds == rounds  # P-5.8: the confirmed rounds stay
        assert check_end(session.record_json()) == end  # the record still says the same seats signed its end
        assert set(session.convictions) <= {RETURNING}  # P-6.1: no present (honest) seat exposed
        for accused, proof in session.proofs.items():  # exposed only by a proof anyone checks
            round_of = proof["round"] if "round" in proof else proof["first"]["round"]  # type: ignore[index]
            assert verify(session.plan, proof, session.rounds[: int(str(round_of))]).seat == accused
        if kept:
            assert RETURNING not in session.convictions and RETURNING in session.ledger.secrets
        held = session.kept()
        assert all(h <= MAX_HELD for h in held["held"])  # P-6.6
    return out


def _agree(table: Table) -> None:
    """P-6.2: the seats that settled the same late messages expose the same seats with the same proofs."""
    a, b = (table.sessions[s] for s in PRESENT)
    assert set(a.convictions) == set(b.convictions)
    assert a.proofs == b.proofs


# -- 1. late messages --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seq", range(6), ids=["shuffle", "lock", "open", "move", "leave", "secrets"])
def test_another_version_of_a_late_step_exposes_only_the_returning_seat_with_a_proof(seq: int) -> None:
    """A second version of one of its messages (signed by it; the others hold the first for seqs 0-3, the
    rest of its chain names the first for 4-5): the returning seat is exposed at every seat, by a fork or by
    the refusal of the version no rule allows, and settles nothing; the ended table's record stays."""
    table = _killed()
    late = _late(table)
    p2 = table.identities[RETURNING]
    lying = [*late[:seq], _sign(p2, _padded(late[seq])), *late[seq + 1 :]]
    assert _settle_all(table, lying) == {0: False, 1: False}
    assert all(set(table.sessions[s].convictions) == {RETURNING} for s in PRESENT)
    _agree(table)


def test_a_whole_other_chain_of_the_stopped_round_is_a_fork_of_the_one_the_seats_hold() -> None:
    """The returning laptop signs every step of the round anew (another move at seq 3, a chain that hangs
    together): the seats hold the first move, so the second is a fork: exposed, nothing settled."""
    table = _killed()
    late = _late(table)
    p2 = table.identities[RETURNING]
    lying = _relinked(p2, [*late[:3], _padded(late[3]), *late[4:]], 3)
    assert _settle_all(table, lying) == {0: False, 1: False}
    assert all(table.sessions[s].convictions[RETURNING].kind == "fork" for s in PRESENT)
    _agree(table)


@pytest.mark.parametrize("seq", range(2), ids=["shuffle", "lock"])
def test_a_fork_of_a_confirmed_rounds_step_exposes_the_returning_seat_and_the_round_stays_confirmed(
    seq: int,
) -> None:
    """A second version of one of its messages of the round before (round index 0, confirmed): a fork in a
    confirmed round. It exposes the returning seat, and, the table having ended, changes no confirmed round
    (P-5.8: a proof that comes later is appended outside the digest)."""
    table = _killed()
    late = _late(table)
    p2 = table.identities[RETURNING]
    past = table.sessions[0].prev_ledger
    assert past is not None and table.sessions[0].rounds
    old = _sign(p2, _padded(past.chains[RETURNING][seq].to_json()))
    assert _settle_all(table, [*late, old]) == {0: False, 1: False}
    assert all(set(table.sessions[s].convictions) == {RETURNING} for s in PRESENT)
    _agree(table)


def _history_case(table: Table, case: str) -> list[JSONObject]:
    """The late leave (and the secrets after it) naming a history of another kind."""
    late = _late(table)
    p2 = table.identities[RETURNING]
    leave = copy.deepcopy(late[4])
    body = leave["body"]
    assert isinstance(body, dict)
    on = body["on"]
    if case == "no history":
        del body["on"]
    elif case == "its own head skipped":
        on["heads"][RETURNING] = [1, _digest(late[1])]
    elif case == "another record":
        on["rec"] = "ab" * 32
    elif case == "a history nobody holds":
        on["heads"][0] = [0, "cd" * 32]
    elif case == "a newer history than exists":
        on["heads"][1] = [40, "cd" * 32]
    elif case == "an older history than its move named":
        on["heads"][0] = on["heads"][1] = None
    elif case == "got more than came":
        on["got"] = [5, 5, 5]
    if case in ("no history", "its own head skipped"):  # signed as it is, the secrets after it linked to it
        return _relinked(p2, [*late[:4], _sign(p2, leave), late[5]], 5)
    return _relinked(p2, [*late[:4], leave, late[5]], 4)


HISTORY_CASES = [
    "another record",
    "a history nobody holds",
    "a newer history than exists",
    "an older history than its move named",
    "its own head skipped",
    "got more than came",
    "no history",
]


@pytest.mark.parametrize("case", HISTORY_CASES)
def test_late_messages_naming_another_history_expose_only_the_returning_seat_or_settle_nothing(case: str) -> None:
    """A leave naming another record of the rounds before, heads nobody holds, an older history than its
    own message before, a wrong head of its own, or none: judged on the history it names, it is refused
    (exposing the returning seat with a refusal proof) or waits for a history nobody brings (nothing
    settled, nobody exposed); either way at both seats alike, the record unchanged."""
    table = _killed()
    lying = _history_case(table, case)
    verdicts = _settle_all(table, lying)
    assert verdicts[0] == verdicts[1]
    if case != "got more than came":
        assert verdicts == {0: False, 1: False}
    _agree(table)


def test_a_late_move_on_the_history_before_the_stop_settles_and_changes_no_round() -> None:
    """The returning laptop, replayed, is given the moves made before the stops (they are in every seat's
    chain) and makes the move it was stopped for, then leaves: a step judged on the history it names, the
    stop still stands, the round stays void; nobody exposed, both seats alike, the record digest unchanged."""
    table = _killed()
    returning, s0 = table.sessions[RETURNING], table.sessions[0]
    for seat in PRESENT:
        kinds = [m.kind for m in s0.ledger.chains[seat]]
        for m in s0.ledger.chains[seat][: kinds.index("stop")]:
            returning.handle(Received(seat, m.to_wire(), table.now))
    moves = returning.decision_json()
    assert moves
    returning.handle(Decided(moves[0], table.now))
    late = _late(table)
    assert [m["kind"] for m in late][3:] == ["move", "move", "leave", "secrets"]
    assert _settle_all(table, late) == {0: True, 1: True}
    assert not any(table.sessions[s].convictions for s in PRESENT)
    _agree(table)


def test_a_late_chain_with_a_gap_settles_nothing_until_the_gap_is_filled() -> None:
    """Its leave left out (a gap at seq 4): the secrets wait past the gap (bounded), nothing settles and
    nobody is exposed; the whole chain, a second try, settles."""
    table = _killed()
    late = _late(table)
    assert _settle_all(table, [*late[:4], late[5]]) == {0: False, 1: False}
    assert all(not table.sessions[s].convictions for s in PRESENT)
    assert _settle_all(table, late) == {0: True, 1: True}
    _agree(table)


def test_duplicate_late_messages_and_a_second_settle_change_nothing() -> None:
    table = _killed()
    late = _late(table)
    assert _settle_all(table, [*late, *late, late[0]]) == {0: True, 1: True}
    assert _settle_all(table, late) == {0: True, 1: True}
    assert all(not table.sessions[s].convictions for s in PRESENT)


@pytest.mark.parametrize("case", ["next round", "far round", "another table", "an old round's message"])
def test_late_messages_of_another_round_or_table_settle_nothing_and_expose_nobody(case: str) -> None:
    """Its leave and secrets signed for the round after, a round far ahead, another table's id, or the
    round before (a note there is no step of the stopped round): the stopped round's debt stays, and
    nobody is exposed (no version of anything held here was signed twice)."""
    table = _killed()
    late = _late(table)
    p2 = table.identities[RETURNING]
    index = int(str(late[0]["round"]))
    changes = {"next round": {"round": index + 1}, "far round": {"round": index + 7},
               "another table": {"table": "ef" * 16}, "an old round's message": {"round": index - 1}}[case]  # fmt: skip
    moved = [late[4], late[5]]
    if case == "an old round's message":  # a leave at the end of its chain of the confirmed round
        past = table.sessions[0].prev_ledger
        assert past is not None
        chain = past.chains[RETURNING]
        leave = copy.deepcopy(late[4])
        leave["body"]["on"]["heads"][RETURNING] = [len(chain) - 1, chain[-1].digest()]  # type: ignore[index]
        moved = [_sign(p2, leave, round=index - 1, seq=len(chain), prev=chain[-1].digest())]
    else:
        moved = [_sign(p2, m, **changes) for m in moved]
    assert _settle_all(table, [*late[:4], *moved]) == {0: False, 1: False}
    assert all(RETURNING not in table.sessions[s].convictions for s in PRESENT)


def test_a_late_message_of_another_seat_or_not_signed_by_the_returning_key_exposes_nobody() -> None:
    """A version of a present seat's message (refused whole: only the returning seat's own come this way), a
    message naming the returning key but signed by another, another version of a held step with a broken
    signature: no proof can come of them, so nobody is exposed (P-6.1), and nothing settles."""
    for case in ("a present seat's", "signed by another key", "a broken signature"):
        table = _killed()
        late = _late(table)
        s0 = table.sessions[0]
        p1 = table.identities[1]
        present_fork = _sign(p1, _padded(s0.ledger.chains[1][0].to_json()))
        stolen = {**_sign(p1, {**late[4], "author": p1.peer_id}), "author": late[4]["author"]}
        broken = {**_padded(late[3]), "sig": "00" * 64}
        lying = {
            "a present seat's": [*late, present_fork],
            "signed by another key": [*late[:4], stolen, late[5]],
            "a broken signature": [*late[:3], broken, *late[3:]],  # dropped: the honest chain settles
        }[case]
        verdicts = _settle_all(table, lying)
        assert not any(table.sessions[s].convictions for s in PRESENT), case
        assert verdicts == ({0: True, 1: True} if case == "a broken signature" else {0: False, 1: False}), case


@pytest.mark.parametrize("case", ["permutation", "scalar", "lock keys", "no deck secrets"])
def test_late_secrets_that_do_not_hold_expose_the_returning_seat_alike_at_every_seat(case: str) -> None:
    """P-5.3: late secrets that do not open what the round dealt (another permutation or scalar, other lock
    keys), or none where the deck was locked: the returning seat is exposed
    at both seats with the same proof anyone checks; nothing settles; the record stays."""
    table = _killed()
    late = _late(table)
    secrets = copy.deepcopy(late[5])
    body = secrets["body"]
    assert isinstance(body, dict)
    deck = body["secrets"]
    if case == "permutation":
        deck["permutation"][0], deck["permutation"][1] = deck["permutation"][1], deck["permutation"][0]
    elif case == "scalar":
        deck["scalar"] = table.sessions[1].my_shuffle.scalar.hex()  # type: ignore[union-attr]
    elif case == "lock keys":
        deck["keys"][0], deck["keys"][1] = deck["keys"][1], deck["keys"][0]
    else:
        body["secrets"] = None
    lying = [*late[:5], _sign(table.identities[RETURNING], secrets)]
    assert _settle_all(table, lying) == {0: False, 1: False}
    assert all(set(table.sessions[s].convictions) == {RETURNING} for s in PRESENT)
    _agree(table)


@pytest.mark.parametrize("case", ["too many", "none", "garbage", "unreadable fields", "huge text", "nested"])
def test_oversize_or_garbage_late_lists_settle_nothing_and_raise_nothing(case: str) -> None:
    table = _killed()
    late = _late(table)
    author = late[0]["author"]
    lists: dict[str, list[Any]] = {
        "too many": [*late, *([late[0]] * (MAX_LATE_MESSAGES + 1 - len(late)))],
        "none": [],
        "garbage": [*late[:5], {"author": author}],
        "unreadable fields": [*late[:5], {**late[5], "seq": -1}, {**late[5], "kind": "nonsense"}],
        "huge text": [*late[:5], {**late[5], "body": {"x": "y" * 300_000}}],
        "nested": [*late[:5], {"author": author, "body": functools.reduce(lambda a, _: [a], range(200), [])}],
    }
    session = table.sessions[0]
    before = [len(c) for c in session.ledger.chains]
    if case == "nested":  # deeper than canonical JSON goes (P-2.1): a ProtocolError, as the mesh's decode gives
        with pytest.raises(ProtocolError):
            late_digest(lists[case])
        with pytest.raises(ProtocolError):
            settle_owed(session, RETURNING, lists[case], table.now)
        lists[case] = lists[case][:5]
    assert _settle_all(table, lists[case]) == {0: False, 1: False}
    assert not any(table.sessions[s].convictions for s in PRESENT)
    if case in ("too many", "none"):
        assert [len(c) for c in session.ledger.chains] == before  # nothing of it was fed


def _honest_seat_named_as_owing_secrets(table: Table) -> list[JSONObject]:
    """The returning seat's late chain with a stop before its leave naming present seat 0 for its secrets, on
    a history it may name (every head there is held by the seats: seat 0 and 1 up to their stops for seat
    2's move, before their secrets): on that history seat 0 did owe them, so the stop holds."""
    late = _late(table)
    p2 = table.identities[RETURNING]
    s0 = table.sessions[0]
    kinds = [[m.kind for m in s0.ledger.chains[s]] for s in PRESENT]
    on = copy.deepcopy(late[4]["body"]["on"])  # type: ignore[index]
    on["heads"][0] = _head(s0, 0, kinds[0].index("secrets") - 1)
    on["heads"][1] = _head(s0, 1, kinds[1].index("secrets") - 1)
    stop = {**late[4], "kind": "stop",
            "body": {"seat": 0, "owed": "secrets", "to": None, "reason": "waited", "on": on}}  # fmt: skip
    leave = {**late[4], "body": {"on": copy.deepcopy(on)}}
    secrets = {**late[5], "body": {**late[5]["body"], "on": copy.deepcopy(on)}}  # type: ignore[dict-item]
    return _relinked(p2, [*late[:4], stop, leave, secrets], 4)


def test_a_late_stop_naming_an_honest_seat_does_not_change_who_signed_the_ended_tables_end() -> None:
    """The ended table's record names the seats that signed its end (`check_end`); late messages of the
    returning seat (a stop of seat 0 for its secrets, on a history where they were owed) must not unseat an
    honest seat that signed there, nor count against it: its secrets came before the table ended."""
    table = _killed()
    lying = _honest_seat_named_as_owing_secrets(table)
    s0 = table.sessions[0]
    signed = check_end(s0.record_json())
    assert signed == PRESENT
    settle_owed(s0, RETURNING, lying, table.now)
    assert s0.present() == PRESENT
    assert check_end(s0.record_json()) == signed


def test_a_late_stop_naming_an_honest_seat_exposes_nobody_and_changes_no_round() -> None:
    """What holds of the same late stop: nobody is exposed, the rounds and digest stay."""
    table = _killed()
    lying = _honest_seat_named_as_owing_secrets(table)
    for seat in PRESENT:
        session = table.sessions[seat]
        digest = session.record_digest()
        settle_owed(session, RETURNING, lying, table.now)
        assert not session.convictions and session.record_digest() == digest


def test_another_version_of_a_private_late_message_exposes_the_returning_seat_at_every_seat() -> None:
    """The late set carries another version of the hand keys seat 2 sent seat 0 before its laptop died (a
    private message, on the channel to seat 0). Both seats settle the same set; seat 0 holds the first
    version and exposes seat 2 with a fork proof; seat 1 cannot read that channel. P-6.2: the proof is
    passed on, so every honest seat exposes the same seats: seat 1's record must name seat 2 too."""
    table = _killed()
    late = _late(table)
    held = table.sessions[0].private_in[RETURNING].msgs[0].to_json()
    forked = _sign(table.identities[RETURNING], _padded(held))
    found: dict[int, list[bytes]] = {s: [] for s in PRESENT}
    verdicts = {s: settle_owed(table.sessions[s], RETURNING, [*late, forked], table.now, found[s]) for s in PRESENT}
    assert verdicts[0] is False and set(table.sessions[0].convictions) == {RETURNING} and found[0]
    for seat in PRESENT:  # each proof passed on to the other seat, as the runner does (go-on-proof)
        for proof in found[1 - seat]:
            table.sessions[seat].handle(Received(1 - seat, proof, table.now))
    _agree(table)


def test_another_version_of_a_private_late_message_gives_the_seat_back_at_no_seat() -> None:
    """What holds of the same attack: seat 0 does not hold the request, so no continuation gives the seat
    back, and both seats decide the same one."""
    table = _killed()
    late = _late(table)
    held = table.sessions[0].private_in[RETURNING].msgs[0].to_json()
    lying = [*late, _sign(table.identities[RETURNING], _padded(held))]
    verdicts = {s: settle_owed(table.sessions[s], RETURNING, lying, table.now) for s in PRESENT}
    c1, _, t2 = copy.deepcopy(_t2_base())
    back = make_take_back(table.identities[RETURNING], t2.sessions[0].settings.table, 2, "P2", HOST, 42000, lying)
    held_by = {s: {RETURNING: back} for s in PRESENT if verdicts[s]}
    offers = _take_back_offers(t2, c1, held_by, Identity.generate())
    plans = [_decide_back(t2, c1, dict(order)) for order in (offers.items(), reversed(offers.items()))]
    assert plans[0] is not None and plans[1] is not None and plans[0].table_id == plans[1].table_id
    assert plans[0].seats[RETURNING].runs_on is not None and plans[0].owes == (RETURNING,)


# -- 2. colluders: present seats, the desk -----------------------------------------------------------------
def _back(identity: Identity, t2: Table, late: list[JSONObject], port: int = 42000) -> TakeBack:
    return make_take_back(identity, t2.sessions[0].settings.table, RETURNING, "P2", HOST, port, late)


def _variant(table: Table) -> list[JSONObject]:
    """Another honest-looking end of the returning seat's chain: its leave and secrets naming the whole
    history the seats hold now (every message there exists), not the one its journal stopped at."""
    late = _late(table)
    s0 = table.sessions[0]
    leave = copy.deepcopy(late[4])
    on = leave["body"]["on"]  # type: ignore[index]
    for seat in PRESENT:
        on["heads"][seat] = _head(s0, seat, len(s0.ledger.chains[seat]) - 1)
    secrets = copy.deepcopy(late[5])
    secrets["body"]["on"] = copy.deepcopy(on)  # type: ignore[index]
    return _relinked(table.identities[RETURNING], [*late[:4], leave, secrets], 4)


@pytest.mark.parametrize("case", ["one seat omits it", "one seat holds another set", "one seat holds it bare",
                                  "the desk told one seat only", "two sets, one per seat"])  # fmt: skip
def test_a_seat_that_owes_is_given_back_only_when_every_present_seat_holds_one_settled_request(case: str) -> None:
    """A colluder among the present seats (or the desk that reaches only some, or the returning laptop
    sending a different late set to each seat): whatever the offers hold, every seat decides the same
    continuation, and it gives the seat back only if every present seat holds the same request, which names
    the late set they settled."""
    table = _killed()
    c1, _, t2 = copy.deepcopy(_t2_base())
    p2 = table.identities[RETURNING]
    late = _late(copy.deepcopy(table))
    other = _variant(copy.deepcopy(table))
    assert late_digest(other) != late_digest(late)
    named, another, bare = _back(p2, t2, late), _back(p2, t2, other), _back(p2, t2, [])
    held = {
        "one seat omits it": {0: {2: named}},
        "one seat holds another set": {0: {2: named}, 1: {2: another}},
        "one seat holds it bare": {0: {2: named}, 1: {2: bare}},
        "the desk told one seat only": {1: {2: named}},
        "two sets, one per seat": {0: {2: another}, 1: {2: named}},
    }[case]
    offers = _take_back_offers(t2, c1, held, Identity.generate())
    plans = [_decide_back(t2, c1, dict(order)) for order in (offers.items(), reversed(offers.items()))]
    assert plans[0] is not None and plans[1] is not None and plans[0].table_id == plans[1].table_id
    assert plans[0].seats[RETURNING].public_key != p2.public.hex() and plans[0].owes == (RETURNING,)
    both = _take_back_offers(t2, c1, {0: {2: named}, 1: {2: named}}, Identity.generate())
    given = _decide_back(t2, c1, both)
    assert given is not None and given.seats[RETURNING] == named.info() and given.owes == ()


@pytest.mark.parametrize("case", ["one seat omits owes", "one seat names another key", "one seat omits left"])
def test_a_present_seat_lying_in_left_or_owes_cannot_drop_the_debt(case: str) -> None:
    """At the table's end, a colluder's offer leaves `owes` out (so the seat could come back bare), names
    another key as the one that left (a stranger would come back), or leaves the seat out of `left`: the
    debt stays recorded (any offer that says so), and no key but the one that left is ever recorded."""
    table = _killed()
    s0 = table.sessions[0]
    p2 = table.identities[RETURNING].public.hex()
    stranger = Identity.generate().public.hex()
    left = {0: {2: p2}, 1: {2: stranger if case == "one seat names another key" else p2}}
    if case == "one seat omits left":
        left[1] = {}
    owes = {0: (2,), 1: () if case != "one seat names another key" else (2,)}
    if case == "one seat omits left":
        owes[1] = ()
    bot = Identity.generate()
    keys = [s.public_key for s in _plan_seats(table)]
    offers = {
        seat: Offer.from_json(make_offer(s0.settings.table, s0.record_digest(), seat, True, table.identities[seat],
                                         {2: (bot, HOST, 41000)} if seat == 0 else {}, (), left[seat], None,
                                         owes[seat]).to_json(), keys)
        for seat in PRESENT
    }  # fmt: skip
    c1 = decide(s0.settings.table, s0.record_digest(), _plan_seats(table), PRESENT, s0.summary()["rounds"], GAME,
                OPTIONS, 30, offers)  # fmt: skip
    assert c1 is not None
    assert set(c1.left.values()) <= {p2}
    if c1.left:
        assert c1.owes == (2,)


# -- the runner: OwedSecrets and hold_back ------------------------------------------------------------------
def _runner(c1: Continuation, identity: Identity, session: TableSession, data_dir: Path) -> TableRunner:
    runner = TableRunner(c1, identity, data_dir, BotPlayer(GAME, "easy"), HOST)
    runner.owed = OwedSecrets(session, data_dir)
    return runner


def test_a_seat_settles_at_most_four_late_sets_and_a_mismatched_digest_none(tmp_path: Path) -> None:
    """P-6.6 at a laptop: a take-back whose digest does not name its late set, or names none, is refused
    before anything is fed; each distinct late set is settled once, at most four per seat; what the laptop
    keeps is the settled set only."""
    table = _killed()
    c1, identities, t2 = copy.deepcopy(_t2_base())
    p2 = table.identities[RETURNING]
    late = _late(table)
    session = table.sessions[0]
    runner = _runner(c1, identities[0], session, tmp_path)
    before = [len(c) for c in session.ledger.chains]
    assert not runner.hold_back(_back(p2, t2, late), late[:5], tell=False)  # the digest names another set
    assert not runner.hold_back(_back(p2, t2, []), late, tell=False)  # names none
    assert [len(c) for c in session.ledger.chains] == before and runner.owed is not None
    bad = [[*late[:4], {**late[5], "seq": seq}] for seq in (9, 10, 11, 12)]  # each a set of its own
    for tries, gap in enumerate([*bad, bad[0]]):
        assert not runner.hold_back(_back(p2, t2, gap, 42000 + tries), gap, tell=False)
    assert not runner.hold_back(_back(p2, t2, late), late, tell=False)  # a fifth set: not fed
    assert RETURNING not in session.ledger.secrets and not session.convictions
    assert RETURNING not in runner.take_backs


def test_a_runner_holds_the_take_back_once_its_late_set_settles(tmp_path: Path) -> None:
    table = _killed()
    c1, identities, t2 = copy.deepcopy(_t2_base())
    p2 = table.identities[RETURNING]
    late = _late(table)
    runner = _runner(c1, identities[1], table.sessions[1], tmp_path)
    message = canonical({"go-on-back": _back(p2, t2, late).to_json(), "late": late})
    for garbage in (b'{"go-on-back": 1, "late": 2}', b'{"go-on-back"', b"\xff" * 64,
                    canonical({"go-on-back": _back(p2, t2, late).to_json(), "late": [1, 2]}),
                    canonical({"go-on-back": _back(p2, t2, late).to_json(), "late": late, "x": 1})):  # fmt: skip
        runner._go_on_received(0, garbage)  # P-6.3: nothing raises
    assert RETURNING not in runner.take_backs
    runner._go_on_received(0, message)
    assert runner.take_backs[RETURNING].owed == late_digest(late) and not table.sessions[1].convictions


def test_two_late_sets_sent_to_two_seats_expose_the_returning_seat_at_both(tmp_path: Path) -> None:
    """The returning laptop, with the desk, sends seat 0 its honest late set and seat 1 another version of its
    leave and secrets (as `_variant`: every step valid on the history it names). Each seat holds what it got
    and passes it on over the mesh (`go-on-back` with `late`), as the runner does. The seat 2 signed two
    versions of its leave: once each seat heard both, each must expose it (P-6.2: a fault whose effect
    reaches an honest seat is exposed there), and the seats' records of the ended table agree."""
    table = _killed()
    c1, identities, t2 = copy.deepcopy(_t2_base())
    p2 = table.identities[RETURNING]
    late = _late(copy.deepcopy(table))
    other = _variant(copy.deepcopy(table))
    runners = [_runner(c1, identities[s], table.sessions[s], tmp_path / str(s)) for s in PRESENT]
    sets = [(_back(p2, t2, late), late), (_back(p2, t2, other), other)]
    for runner, (back, messages) in zip(runners, sets, strict=True):
        assert runner.hold_back(back, messages, tell=False)
    for seat, runner in enumerate(runners):  # each hears what the other held, as over the mesh
        back, messages = sets[1 - seat]
        runner._go_on_received(1 - seat, canonical({"go-on-back": back.to_json(), "late": messages}))
    assert all(set(table.sessions[s].convictions) == {RETURNING} for s in PRESENT)


# -- 3. a late audit exposing a present seat ----------------------------------------------------------------
def test_a_late_audit_exposes_the_present_seat_that_cheated_with_a_proof_and_not_the_returning_one() -> None:
    """Present seat 1 (Y) published bad shuffle secrets for the stopped round; only the returning seat's late
    secrets complete the audit. At honest seat 0 it exposes Y, with a proof `verify` accepts, written beside
    the ended table's record (the confirmed rounds and digest unchanged), and the returning seat settles."""
    table = copy.deepcopy(_cheat_base())
    late = _late(table)
    s0 = table.sessions[0]
    digest, rounds = s0.record_digest(), list(s0.rounds)
    assert settle_owed(s0, RETURNING, late, table.now)
    assert set(s0.convictions) == {1} and s0.convictions[1].kind == "audit"
    assert verify(s0.plan, s0.proofs[1], s0.rounds[: int(str(s0.proofs[1]["round"]))]).seat == 1
    assert s0.record_digest() == digest and s0.rounds == rounds


def _cheat_continuation() -> tuple[Table, Continuation, list[Identity], Table]:
    table = copy.deepcopy(_cheat_base())
    c1, identities = _away_continuation(copy.deepcopy(table))
    return table, c1, identities, _bot_left(c1, identities)


def test_a_present_seat_the_late_audit_exposes_sits_at_no_later_table(tmp_path: Path) -> None:
    """The same table went on (T2: seat 1 is Y, a present seat; seat 2 a bot, owing). The returning laptop's
    late secrets expose Y at T1 when the seats of T2 settle them: the returning seat has settled, every
    seat holds its take-back, and T2's seats decide the next continuation. P-5.4: "the exposed seat does not
    sit at that table again"; P-5.7: "a seat barred from one is barred from its continuations". So no
    continuation decided after Y's exposure may seat Y's key."""
    table, c1, identities, t2 = _cheat_continuation()
    p2 = table.identities[RETURNING]
    late = _late(table)
    runner = _runner(c1, identities[0], table.sessions[0], tmp_path)
    back = _back(p2, t2, late)
    runner.hold_back(back, late, tell=False)  # honest seat 0 settles it: the audit exposes Y at T1
    assert set(table.sessions[0].convictions) == {1}
    assert runner.barred == {1}  # Y sits here with the same key: this seat stops the round and ends the game
    s0 = t2.sessions[0]
    keys = [s.public_key for s in c1.seats]
    go = {0: not runner.barred, 1: True}  # seat 0 answers as its runner does (go_on); Y wants to go on
    offers = {
        seat: Offer.from_json(make_offer(s0.settings.table, s0.record_digest(), seat, go[seat], t2.identities[seat],
                                         {}, (), None, {2: back}).to_json(), keys)
        for seat in PRESENT
    }  # fmt: skip
    c2 = _decide_back(t2, c1, offers)
    y = identities[1].public.hex()
    assert c2 is None or all(info.public_key != y for info in c2.seats)


class _Mesh:
    """What a runner broadcasts over the continuation's mesh, kept to be delivered by hand."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def broadcast(self, data: bytes) -> None:
        self.sent.append(data)


def test_a_returning_seat_exposed_where_its_late_secrets_reach_is_exposed_at_every_present_seat(
    tmp_path: Path,
) -> None:
    """The way a take-back travels: the desk's seat (0) gets it first and settles it; it passes on over the mesh
    only what it holds. Late secrets the audit refuses expose the returning seat at seat 0; P-5.4: "a proof
    ... is passed on to every seat at once", so seat 1, once it had everything seat 0 sent, exposes it too."""
    table = _killed()
    c1, identities, t2 = copy.deepcopy(_t2_base())
    p2 = table.identities[RETURNING]
    late = _late(table)
    secrets = copy.deepcopy(late[5])
    deck = secrets["body"]["secrets"]  # type: ignore[index]
    deck["permutation"][0], deck["permutation"][1] = deck["permutation"][1], deck["permutation"][0]
    lying = [*late[:5], _sign(p2, secrets)]
    desk, other = (_runner(c1, identities[s], table.sessions[s], tmp_path / str(s)) for s in PRESENT)
    mesh = _Mesh()
    desk.mesh = mesh  # type: ignore[assignment]
    assert not desk.hold_back(_back(p2, t2, lying), lying)  # tell: passed on if held
    assert set(table.sessions[0].convictions) == {RETURNING}
    for data in mesh.sent:
        other._go_on_received(0, data)
    assert set(table.sessions[1].convictions) == {RETURNING}
