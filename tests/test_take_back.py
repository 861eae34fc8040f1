"""Taking a seat back (P-5.7): a person who left with a signed leave, whose seat a bot took at the table
that went on, comes back: at a later table that goes on (the bot leaves at a round's end), that seat is
the person's laptop again, the scores carried, signed by every seat of it. And the attacks: a laptop
claiming a seat that is not its own, a take-back signed on a stale table, two take-backs at once, a
forged one, a seat not every present seat saw its person leave."""

from __future__ import annotations

import copy
import random
from dataclasses import replace

import pytest
from tablenet import make_table, table_from

from protocol.continuation import (
    Continuation,
    Offer,
    TakeBack,
    check_back,
    decide,
    end_digest,
    late_digest,
    make_offer,
    make_take_back,
    settle_owed,
)
from protocol.identity import Identity
from protocol.plan import PlanError, SeatInfo, bot_vouch
from protocol.signed import sign_message
from protocol.table import Halt, Leave, LinkChanged

GAME, OPTIONS = "sixes", {"chips": 6}
HOST = "127.0.0.1"


def _leave_after_a_round(table, seat: int):  # type: ignore[no-untyped-def]
    """Play until every session has a confirmed round more, then `seat` leaves; the others finish the table."""
    others = [s for s in range(len(table.sessions)) if s != seat]
    table.confirm_round()
    table.feed(seat, Leave(table.now))
    table.finish(others, 20)
    assert all(table.sessions[s].finished and not table.sessions[s].complete for s in others)
    return table


def _offers(table, present, bots, *, left=None, back=None, keys=None):  # type: ignore[no-untyped-def]
    """Every present seat's signed offer, sent as JSON and checked against the plan's keys."""
    s0 = table.sessions[present[0]]
    prior, digest = s0.settings.table, s0.record_digest()
    keys = keys or [s.public_key for s in _plan_seats(table)]
    offers = {
        seat: make_offer(prior, digest, seat, True, table.identities[seat], bots if seat == present[0] else {}, (),
                         (left or {}).get(seat), (back or {}).get(seat))
        for seat in present
    }
    return {seat: Offer.from_json(o.to_json(), keys) for seat, o in offers.items()}


def _plan_seats(table) -> list[SeatInfo]:  # type: ignore[no-untyped-def]
    return [SeatInfo(f"P{s}", i.public.hex(), HOST, 40000 + s) for s, i in enumerate(table.identities)]


def _first_continuation():  # type: ignore[no-untyped-def]
    """P2 leaves a 3-seat table after round 1; P0 and P1 go on with P0's bot in seat 2, and both saw P2
    leave, so the continuation records P2's key as the one that may take seat 2 back."""
    table = _leave_after_a_round(make_table(GAME, 3, OPTIONS, seed=5), 2)
    s0 = table.sessions[0]
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    p2 = table.identities[2].public.hex()
    offers = _offers(table, (0, 1), {2: (bot, HOST, 41000)}, left={0: {2: p2}, 1: {2: p2}})
    plan = decide(s0.settings.table, s0.record_digest(), _plan_seats(table), (0, 1), s0.summary()["rounds"],
                  GAME, OPTIONS, 30, offers)  # fmt: skip
    assert plan is not None and plan.left == {2: p2}
    identities = [table.identities[0], table.identities[1], bot]
    signed = plan.with_signatures([plan.sign(i) for i in identities])
    signed = Continuation.from_json(signed.to_json())
    signed.verify()
    return table, signed, identities


def _bot_left(c1: Continuation, identities: list[Identity]):  # type: ignore[no-untyped-def]
    """The continuation's table plays a round; then its bot (seat 2) leaves at the round's end."""
    t2 = table_from(c1.settings(), identities)
    return _leave_after_a_round(t2, 2)


def _take_back_offers(t2, c1: Continuation, back: dict[int, dict[int, TakeBack]], bot: Identity):  # type: ignore[no-untyped-def]
    keys = [s.public_key for s in c1.seats]
    s0 = t2.sessions[0]
    prior, digest = s0.settings.table, s0.record_digest()
    offers = {
        seat: make_offer(prior, digest, seat, True, t2.identities[seat], {2: (bot, HOST, 41001)} if seat == 0 else {},
                         (), None, back.get(seat))
        for seat in (0, 1)
    }
    return {seat: Offer.from_json(o.to_json(), keys) for seat, o in offers.items()}


def _decide_back(t2, c1: Continuation, offers):  # type: ignore[no-untyped-def]
    s0 = t2.sessions[0]
    return decide(s0.settings.table, s0.record_digest(), c1.seats, (0, 1), s0.summary()["rounds"], GAME, OPTIONS,
                  30, offers, left=c1.left, owes=c1.owes)  # fmt: skip


def test_a_person_who_left_takes_the_seat_back_at_a_later_table_with_the_scores_carried() -> None:
    table, c1, identities = _first_continuation()
    p2 = table.identities[2]
    t2 = _bot_left(c1, identities)
    t2_id = t2.sessions[0].settings.table
    back = make_take_back(p2, t2_id, 2, "P2", HOST, 42000)
    offers = _take_back_offers(t2, c1, {0: {2: back}}, Identity.generate())
    c2 = _decide_back(t2, c1, offers)
    assert c2 is not None
    assert c2.seats[2] == SeatInfo("P2", p2.public.hex(), HOST, 42000)  # a person's seat again: no bot
    assert c2.left == {} and c2.prior == t2_id
    check_back(c2, c1, back)  # what the returning laptop checks before it signs
    people = [table.identities[0], table.identities[1], p2]
    signed = Continuation.from_json(c2.with_signatures([c2.sign(i) for i in people]).to_json())
    signed.verify()
    t3 = table_from(signed.settings(), people)
    t3.run()
    for _ in range(5):
        t3.wait(1)
        t3.run()
    sessions = t3.sessions
    assert all(s.finished and s.complete for s in sessions)
    record = sessions[0].record_json()
    carried = len(t2.sessions[0].summary()["rounds"])
    assert record["rounds"][:carried] == t2.sessions[0].summary()["rounds"]  # the scores go on from them
    assert "bots" not in record  # every seat is a person's again


def test_a_take_back_signed_by_another_key_gives_it_no_seat() -> None:
    """A laptop claiming a seat that is not its own (its key did not leave that seat): a bot fills it."""
    table, c1, identities = _first_continuation()
    t2 = _bot_left(c1, identities)
    t2_id = t2.sessions[0].settings.table
    intruder = Identity.generate()
    claim = make_take_back(intruder, t2_id, 2, "Eve", HOST, 42000)
    p1_claims = make_take_back(table.identities[1], t2_id, 2, "P1", HOST, 42001)  # a present seat's key
    c2 = _decide_back(t2, c1, _take_back_offers(t2, c1, {0: {2: claim}, 1: {2: p1_claims}}, Identity.generate()))
    assert c2 is not None
    assert c2.seats[2].public_key not in (intruder.public.hex(), table.identities[1].public.hex())
    assert c2.seats[2].runs_on == table.identities[0].public.hex()  # a bot again, P0's
    assert c2.left == {2: table.identities[2].public.hex()}  # the seat still waits for its person


def test_a_take_back_signed_on_a_stale_table_is_not_taken() -> None:
    """Signed on the table before (where the bot was already playing): not the table the seats go on from."""
    table, c1, identities = _first_continuation()
    t2 = _bot_left(c1, identities)
    stale = make_take_back(table.identities[2], c1.prior, 2, "P2", HOST, 42000)
    c2 = _decide_back(t2, c1, _take_back_offers(t2, c1, {0: {2: stale}}, Identity.generate()))
    assert c2 is not None and c2.seats[2].public_key != table.identities[2].public.hex()
    with pytest.raises(PlanError, match="not the one this key left"):
        check_back(replace(c2, seats=(*c2.seats[:2], stale.info()), left={}), c1, stale)


def test_two_take_backs_at_once_give_every_seat_the_same_continuation() -> None:
    """The same person asks twice (two laptops, two mesh addresses), each reaching another seat: every seat
    decides the same continuation (the first that holds, in seat order), so all sign one plan."""
    table, c1, identities = _first_continuation()
    t2 = _bot_left(c1, identities)
    t2_id = t2.sessions[0].settings.table
    p2 = table.identities[2]
    first, second = (make_take_back(p2, t2_id, 2, "P2", HOST, port) for port in (42000, 42001))
    bot = Identity.generate()
    offers = _take_back_offers(t2, c1, {0: {2: second}, 1: {2: first}}, bot)
    plans = [_decide_back(t2, c1, dict(order)) for order in (offers.items(), reversed(offers.items()))]
    assert plans[0] is not None and plans[1] is not None and plans[0].table_id == plans[1].table_id
    c2 = plans[0]
    assert c2.seats[2] == second.info()  # the one seat 0's offer holds
    with pytest.raises(PlanError, match="does not give the seat back as asked"):
        check_back(c2, c1, first)  # the laptop that sent the other one does not sign it


def test_a_forged_take_back_is_refused_with_the_offer_that_carries_it() -> None:
    table, c1, identities = _first_continuation()
    t2 = _bot_left(c1, identities)
    back = make_take_back(table.identities[2], t2.sessions[0].settings.table, 2, "P2", HOST, 42000)
    forged = replace(back, port=42999)  # moved to another mesh address after it was signed
    with pytest.raises(PlanError, match="the key it names did not sign"):
        TakeBack.from_json(forged.to_json())
    offer = make_offer(t2.sessions[0].settings.table, t2.sessions[0].record_digest(), 0, True, t2.identities[0], {},
                       (), None, {2: forged})  # fmt: skip
    with pytest.raises(PlanError, match="did not sign"):
        Offer.from_json(offer.to_json(), [s.public_key for s in c1.seats])


def test_a_seat_not_every_present_seat_saw_its_person_leave_cannot_be_taken_back() -> None:
    table = _leave_after_a_round(make_table(GAME, 3, OPTIONS, seed=5), 2)
    s0 = table.sessions[0]
    p2 = table.identities[2].public.hex()
    bot = Identity.generate()
    offers = _offers(table, (0, 1), {2: (bot, HOST, 41000)}, left={0: {2: p2}})  # seat 1 does not say so
    plan = decide(s0.settings.table, s0.record_digest(), _plan_seats(table), (0, 1), s0.summary()["rounds"],
                  GAME, OPTIONS, 30, offers)  # fmt: skip
    assert plan is not None and plan.left == {}


def test_a_continuation_that_names_a_persons_seat_as_left_is_refused() -> None:
    _, c1, _ = _first_continuation()
    wrong = replace(c1, left={0: Identity.generate().public.hex()}, signatures=())
    with pytest.raises(PlanError, match="held by a bot"):
        wrong.check()


def test_the_returning_laptop_refuses_a_continuation_that_changes_the_options() -> None:
    table, c1, identities = _first_continuation()
    t2 = _bot_left(c1, identities)
    back = make_take_back(table.identities[2], t2.sessions[0].settings.table, 2, "P2", HOST, 42000)
    c2 = _decide_back(t2, c1, _take_back_offers(t2, c1, {0: {2: back}}, Identity.generate()))
    assert c2 is not None
    with pytest.raises(PlanError):
        check_back(replace(c2, options={"chips": 7}), c1, back)
    with pytest.raises(PlanError, match="seat 2"):
        check_back(c2, replace(c1, signatures=(*c1.signatures[:2], c1.signatures[0])), back)


@pytest.mark.parametrize("liar", ["stranger", "bot host"])
def test_the_returning_laptop_refuses_a_continuation_the_seats_of_its_table_did_not_make(liar: str) -> None:
    """The desk the returning laptop asks (found by mDNS, pinned only to the key its own advert names) builds
    the continuation it asks P2 to sign: a stranger who got the table's plan from the real desk (it hands the
    plan to any key) and seats itself and a bot of its own under the names P0 and P1; or P0's laptop, which
    runs the bot, putting a new bot of its own in honest P1's seat. Both carry no rounds (the scores reset).
    Every seat of it signs it, P2 too if its laptop accepts it: it must refuse."""
    table, c1, _ = _first_continuation()
    p2 = table.identities[2]
    back = make_take_back(p2, c1.table_id, 2, "P2", HOST, 42000)
    laptop = Identity.generate() if liar == "stranger" else table.identities[0]
    bot = Identity.generate()
    vouch = bot_vouch(laptop, c1.table_id, bot.public.hex())
    seats = (
        SeatInfo("P0", laptop.public.hex(), HOST, 43000),
        SeatInfo("P1", bot.public.hex(), HOST, 43001, laptop.public.hex(), vouch),
        back.info(),
    )
    lie = Continuation(c1.table_id, end_digest(c1.table_id, []), c1.game, c1.options, seats, (), (), c1.rules,
                       c1.patience, {}, c1.level)  # fmt: skip
    lie.with_signatures([lie.sign(laptop), lie.sign(bot), lie.sign(p2)]).verify()  # signed by every seat of it
    with pytest.raises(PlanError):
        check_back(lie, c1, back)  # what the returning laptop checks before it signs, and again before it plays


def _killed_after_a_round(seed: int = 5):  # type: ignore[no-untyped-def]
    """Seat 2's laptop dies three moves into round 2 (kill -9, a closed lid): the others stop the round for
    it, publish their secrets, stop it for its own, and the table ends with seat 2 not present. Its session
    stays as the laptop's journal left it (what `publish_owed` replays)."""
    table = make_table(GAME, 3, OPTIONS, seed=seed)
    table.confirm_round()
    for _ in range(3):
        table.step()
    table.silent.add(2)
    for seat in (0, 1):
        table.feed(seat, LinkChanged(2, False, table.now))  # its link is down: its move is waited out (P-5.5)
    table.finish((0, 1))
    return table


def _away_continuation(table):  # type: ignore[no-untyped-def]
    """P0 and P1 go on with P0's bot in seat 2; each names seat 2 as gone without its secrets (what
    `TableRunner.left_here` and `owes_here` give), so the continuation records it in `left` and `owes`."""
    s0 = table.sessions[0]
    p2 = table.identities[2].public.hex()
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    offers = {
        seat: Offer.from_json(
            make_offer(s0.settings.table, s0.record_digest(), seat, True, table.identities[seat],
                       {2: (bot, HOST, 41000)} if seat == 0 else {}, (), {2: p2}, None, (2,)).to_json(),
            [s.public_key for s in _plan_seats(table)],
        )
        for seat in (0, 1)
    }  # fmt: skip
    c1 = decide(s0.settings.table, s0.record_digest(), _plan_seats(table), (0, 1), s0.summary()["rounds"], GAME,
                OPTIONS, 30, offers)  # fmt: skip
    assert c1 is not None
    identities = [table.identities[0], table.identities[1], bot]
    signed = Continuation.from_json(c1.with_signatures([c1.sign(i) for i in identities]).to_json())
    signed.verify()
    return signed, identities


def _late(table) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    """What the dead laptop publishes coming back: its chain of the stopped round, a leave, its secrets."""
    returning = table.sessions[2]
    returning.handle(Leave(table.now))
    return [m.to_json() for m in returning.ledger.chains[2]]


def test_a_seat_stopped_for_its_secrets_is_recorded_as_left_owing_them() -> None:
    """P-5.5, P-5.7: a laptop that died mid-round never published its secrets; the table that goes on
    records its person as the one who may come back, and that the secrets are owed."""
    table = _killed_after_a_round()
    s0 = table.sessions[0]
    assert s0.finished and not s0.complete and s0.present() == (0, 1) and 2 not in s0.left
    stopped = {(stop.get("seat"), stop.get("owed")) for stop in s0.stops}
    assert (2, "move") in stopped and (2, "secrets") in stopped and 2 not in s0.ledger.secrets
    c1, _ = _away_continuation(table)
    assert c1.left == {2: table.identities[2].public.hex()} and c1.owes == (2,)
    assert Continuation.from_json(c1.to_json()) == c1


def test_a_seat_that_owes_secrets_is_taken_back_once_every_present_seat_settled_them() -> None:
    """The returning laptop's late messages settle its debt at every present seat's session of the table it
    went away from (the audit runs and finds nothing, the confirmed rounds unchanged); the take-back names
    them by digest, every present seat holds it, and the seat is the person's again with nothing owed."""
    table = _killed_after_a_round()
    c1, identities = _away_continuation(table)
    late = _late(table)
    before = [table.sessions[s].record_digest() for s in (0, 1)]
    assert all(settle_owed(table.sessions[s], 2, late, table.now) for s in (0, 1))
    assert [table.sessions[s].record_digest() for s in (0, 1)] == before  # the round stays void
    assert all(not table.sessions[s].convictions for s in (0, 1))
    t2 = _bot_left(c1, identities)
    back = make_take_back(table.identities[2], t2.sessions[0].settings.table, 2, "P2", HOST, 42000, late)
    assert back.owed == late_digest(late)
    c2 = _decide_back(t2, c1, _take_back_offers(t2, c1, {0: {2: back}, 1: {2: back}}, Identity.generate()))
    assert c2 is not None and c2.seats[2] == back.info() and c2.left == {} and c2.owes == ()
    check_back(c2, c1, back)
    with pytest.raises(PlanError, match="owes"):  # the returning laptop never asks without them
        check_back(c2, c1, replace(back, owed=""))


def test_a_take_back_of_a_seat_that_owes_secrets_needs_them_and_every_present_seat() -> None:
    """Without its late secrets, or held by one present seat only (the other never settled them: a colluder
    cannot vouch alone), the take-back of a seat that owes gives it no seat: the bot keeps it, and the
    person stays recorded as owing."""
    table = _killed_after_a_round()
    c1, identities = _away_continuation(table)
    t2 = _bot_left(c1, identities)
    t2_id = t2.sessions[0].settings.table
    bare = make_take_back(table.identities[2], t2_id, 2, "P2", HOST, 42000)
    late = _late(table)
    named = make_take_back(table.identities[2], t2_id, 2, "P2", HOST, 42000, late)
    cases = ({0: {2: bare}, 1: {2: bare}}, {0: {2: named}}, {1: {2: named}}, {0: {2: named}, 1: {2: bare}})
    for backs in cases:
        c2 = _decide_back(t2, c1, _take_back_offers(t2, c1, backs, Identity.generate()))
        assert c2 is not None and c2.seats[2].public_key != table.identities[2].public.hex()
        assert c2.left == c1.left and c2.owes == (2,)


def test_late_secrets_that_fail_the_audit_expose_their_seat_and_give_it_nothing() -> None:
    """P-5.3, P-5.4: secrets that do not match the round's shuffle (a permutation not the one it used,
    signed by the returning key) fail the audit at every seat that settles them: the seat is exposed there
    with a proof anyone checks, and no seat holds its take-back. The confirmed rounds do not change."""
    table = _killed_after_a_round()
    late = _late(table)
    secrets = late[-1]
    assert secrets["kind"] == "secrets"
    body = copy.deepcopy(secrets["body"])
    permutation = body["secrets"]["permutation"]  # type: ignore[index]
    permutation[0], permutation[1] = permutation[1], permutation[0]
    forged = sign_message(table.identities[2], str(secrets["table"]), int(str(secrets["round"])),
                          int(str(secrets["seq"])), str(secrets["prev"]), "secrets", body)  # fmt: skip
    lying = [*late[:-1], forged.to_json()]
    for seat in (0, 1):
        session = table.sessions[seat]
        before = session.record_digest()
        assert not settle_owed(session, 2, lying, table.now)
        assert set(session.convictions) == {2} and session.record_digest() == before
        record = session.record_json()
        assert [e["seat"] for e in record["exposed"]] == [2] and len(record["proofs"]) == 1


def test_late_messages_of_another_seat_settle_nothing() -> None:
    """Only the returning seat's own messages come with its take-back: another seat's are refused whole."""
    table = _killed_after_a_round()
    late = _late(table)
    other = [m.to_json() for m in table.sessions[1].ledger.chains[1]]
    session = table.sessions[0]
    assert not settle_owed(session, 2, [*late, other[-1]], table.now)
    assert not settle_owed(session, 2, [], table.now)
    assert 2 not in session.ledger.secrets  # nothing of it was fed


def test_a_halt_stops_the_round_at_every_seat_and_convicts_nobody() -> None:
    """A seat that holds a proof from the table before against a seat sitting here stops the round (`Halt`,
    P-5.5's audit stop, naming no seat): every seat stops, publishes its secrets, the round is void, and
    nobody is exposed here; the table ends early, so the seats are asked whether to go on (P-5.7)."""
    table = make_table(GAME, 3, OPTIONS, seed=7)
    table.confirm_round()
    for _ in range(2):
        table.step()
    table.feed(0, Halt("P1 was exposed at the table before", table.now))
    table.finish(range(table.n), 10)
    assert all(s.finished and not s.complete and not s.convictions for s in table.sessions)
    assert all(s.present() == (0, 1, 2) for s in table.sessions)
    stops = table.sessions[1].record_json()["stops"]
    assert [(stop["by"], stop["seat"], stop["reason"]) for stop in stops] == [
        (0, None, "P1 was exposed at the table before")
    ]
    assert len({s.record_digest() for s in table.sessions}) == 1
