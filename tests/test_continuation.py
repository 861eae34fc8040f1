"""A table outlives a seat (P-5.7): the seats still present go on, as a new table that names the one it
goes on from and its signed record digest, carries its confirmed rounds (scores carried over), and puts
a bot, run by a laptop that says so, in the seat of the person who left."""

from __future__ import annotations

import random

import pytest
from tablenet import make_table, table_from

from protocol.continuation import Continuation, Offer, decide, end_digest, make_offer
from protocol.identity import Identity
from protocol.plan import PlanError, SeatInfo
from protocol.table import Leave

GAME, OPTIONS = "sixes", {"chips": 6}


def _ended_early(seed: int = 5):  # type: ignore[no-untyped-def]
    """A 3-seat table whose seat 2 leaves once round 1 is confirmed: seats 0 and 1 finish with it."""
    table = make_table(GAME, 3, OPTIONS, seed=seed)
    for _ in range(2000):
        if table.sessions[0].rounds and table.sessions[2].rounds:
            break
        assert table.step()
    table.feed(2, Leave(table.now))
    for _ in range(20):
        table.run()
        table.wait(31)
        if table.sessions[0].finished and table.sessions[1].finished:
            break
    assert table.sessions[0].finished and table.sessions[1].finished
    return table


def _seats(n: int) -> list[SeatInfo]:
    return [SeatInfo(f"P{s}", "", "127.0.0.1", 40000 + s) for s in range(n)]


def _go_on(table, bot: Identity, host: int = 0):  # type: ignore[no-untyped-def]
    s0 = table.sessions[0]
    prior, digest = s0.settings.table, s0.record_digest()
    rounds = s0.summary()["rounds"]
    keys = [i.public.hex() for i in table.identities]
    seats = [SeatInfo(f"P{s}", keys[s], "127.0.0.1", 40000 + s) for s in range(3)]
    hosted = {2: (bot, "127.0.0.1", 41000)}
    offers = {
        seat: make_offer(prior, digest, seat, True, table.identities[seat], hosted if seat == host else {})
        for seat in (0, 1)
    }
    # every offer travels as JSON and is checked against the prior plan's keys
    offers = {seat: Offer.from_json(o.to_json(), keys) for seat, o in offers.items()}
    plan = decide(prior, digest, seats, (0, 1), rounds, GAME, OPTIONS, 30, offers)
    assert plan is not None
    return plan


def test_the_seats_still_present_go_on_with_a_bot_and_the_scores_carried() -> None:
    """P-5.7: the continuation keeps the seat order, names whose laptop runs the bot, carries the
    confirmed rounds, and its game goes on from their scores to the game's end."""
    table = _ended_early()
    s0 = table.sessions[0]
    carried = len(s0.rounds)
    assert carried >= 1 and not s0.complete
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    plan = _go_on(table, bot)
    assert plan.seats[2].name == "P0's bot 3" and plan.seats[2].runs_on == table.identities[0].public.hex()
    assert plan.digest == end_digest(plan.prior, plan.rounds) == s0.record_digest()
    identities = [table.identities[0], table.identities[1], bot]
    signed = plan.with_signatures([plan.sign(i) for i in identities])
    again = Continuation.from_json(signed.to_json())
    again.verify()
    assert again.table_id == signed.table_id != plan.prior
    new = table_from(again.settings(), identities)
    new.run()
    for _ in range(5):
        new.wait(1)
        new.run()
    sessions = new.sessions
    assert all(s.finished and s.complete for s in sessions), [s.phase for s in sessions]
    assert len({s.record_digest() for s in sessions}) == 1
    record = sessions[0].record_json()
    assert record["rounds"][:carried] == s0.record_json()["rounds"]  # the scores go on from the kept rounds
    assert len(record["rounds"]) > carried
    assert record["table"]["continues"] == {"table": plan.prior, "digest": plan.digest, "rounds": carried}
    assert record["bots"] == [{"seat": 2, "host": 0}]  # the record says whose laptop runs the bot


def test_one_seat_choosing_to_end_ends_the_game_at_every_seat() -> None:
    table = _ended_early()
    s0 = table.sessions[0]
    prior, digest = s0.settings.table, s0.record_digest()
    bot = Identity.from_private_bytes(bytes(32))
    offers = {
        0: make_offer(prior, digest, 0, True, table.identities[0], {2: (bot, "127.0.0.1", 41000)}),
        1: make_offer(prior, digest, 1, False, table.identities[1], {}),
    }
    seats = [SeatInfo(f"P{s}", table.identities[s].public.hex(), "127.0.0.1", 40000 + s) for s in range(3)]
    assert decide(prior, digest, seats, (0, 1), s0.summary()["rounds"], GAME, OPTIONS, 30, offers) is None


def test_a_continuation_is_refused_when_its_rounds_are_not_the_signed_ones_or_a_seat_did_not_sign() -> None:
    table = _ended_early()
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    plan = _go_on(table, bot)
    identities = [table.identities[0], table.identities[1], bot]
    forged = Continuation(plan.prior, plan.digest, plan.game, plan.options, plan.seats, plan.rounds[:-1] or ({},),
                          (), plan.rules, plan.patience)  # fmt: skip
    with pytest.raises(PlanError, match="carried rounds"):
        forged.check()
    unsigned = plan.with_signatures([plan.sign(identities[0]), plan.sign(identities[0]), plan.sign(bot)])
    with pytest.raises(PlanError, match="seat 1"):
        unsigned.verify()


def test_a_bot_named_on_a_laptop_that_did_not_say_so_is_refused() -> None:
    """P-6.7: only the laptop that runs a bot can put it in a seat, in a continuation as in a lobby."""
    table = _ended_early()
    bot = Identity.from_private_bytes(random.Random(9).randbytes(32))
    plan = _go_on(table, bot)
    wrong = plan.seats[2]
    claimed = SeatInfo(wrong.name, wrong.public_key, wrong.address, wrong.port, table.identities[1].public.hex(),
                       wrong.vouch)  # fmt: skip
    moved = Continuation(plan.prior, plan.digest, plan.game, plan.options, (*plan.seats[:2], claimed),
                         plan.rounds, (), plan.rules, plan.patience)  # fmt: skip
    with pytest.raises(PlanError, match="did not say so"):
        moved.check()


def test_an_offer_signed_by_another_seat_is_refused() -> None:
    table = _ended_early()
    s0 = table.sessions[0]
    keys = [i.public.hex() for i in table.identities]
    offer = make_offer(s0.settings.table, s0.record_digest(), 1, True, table.identities[0], {})
    with pytest.raises(PlanError, match="seat 1 did not sign"):
        Offer.from_json(offer.to_json(), keys)
