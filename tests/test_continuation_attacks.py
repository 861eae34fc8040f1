"""A modified client at the end of a table that ended early (P-5.7): what a seat may put into the offers
and signatures that decide the continuation, and what every honest seat must still refuse. The
continuation is a plan like the lobby's (P-6.7): every field is checked by each signer, one identity
sits in one seat, a seat exposed at a table does not sit at its continuations (P-5.4, P-5.7), and
nothing from a peer raises (P-6.3)."""

from __future__ import annotations

import pytest
from tablenet import make_table
from test_table_attacks import fork_to

from protocol.continuation import Continuation, Offer, decide, make_offer
from protocol.errors import ProtocolError
from protocol.identity import Identity
from protocol.plan import SeatInfo

GAME, OPTIONS = "sixes", {"chips": 6}


def _exposed_table():  # type: ignore[no-untyped-def]
    """A 4-seat table whose seat 3 forks its shuffle of round 1 to seat 0: seat 3 is exposed at every
    seat, and seats 0, 1 and 2 finish the table early, with seat 3 no longer present."""
    table = make_table(GAME, 4, OPTIONS, seed=3)
    for _ in range(2000):
        if table.sessions[0].rounds:
            break
        assert table.step()
    fork_to(table, 3, "shuffle", (0,))
    for _ in range(30):
        table.run()
        table.wait(31)
        if all(table.sessions[s].finished for s in (0, 1, 2)):
            break
    for seat in (0, 1, 2):
        session = table.sessions[seat]
        assert session.finished and not session.complete and 3 in session.convictions
        assert session.present() == (0, 1, 2)
    return table


def _decide(table, offers_by_seat, present=(0, 1, 2)):  # type: ignore[no-untyped-def]
    s0 = table.sessions[0]
    prior, digest = s0.settings.table, s0.record_digest()
    keys = [i.public.hex() for i in table.identities]
    seats = [SeatInfo(f"P{s}", keys[s], "127.0.0.1", 40000 + s) for s in range(table.n)]
    offers = {
        seat: Offer.from_json(
            make_offer(prior, digest, seat, True, table.identities[seat], offers_by_seat.get(seat, {})).to_json(), keys
        )
        for seat in present
    }
    return decide(prior, digest, seats, present, s0.summary()["rounds"], GAME, OPTIONS, 30, offers)


@pytest.mark.xfail(
    strict=True,
    reason="P-5.4/P-5.7: a seat exposed at a table sits at its continuation as a colluder's 'bot': decide and "
    "Continuation.check never compare a bot's key with the seats of the table it goes on from",
)
def test_an_exposed_seat_never_sits_again_as_a_bot_a_colluder_offers() -> None:
    """Seat 3 was exposed; seat 2 (its colluder) offers to run a 'bot' in seat 3 whose key is seat 3's own.
    Every honest seat must refuse that continuation (the exposed identity would play on, under another
    seat's name, with a record that says a bot sits there)."""
    table = _exposed_table()
    exposed = table.identities[3]
    plan = _decide(table, {2: {3: (exposed, "127.0.0.1", 41003)}})
    if plan is None:
        return  # refused at the decision: the invariant holds
    with pytest.raises(ProtocolError):
        plan.check()
        signed = plan.with_signatures([plan.sign(i) for i in table.identities])
        Continuation.from_json(signed.to_json()).verify()


@pytest.mark.xfail(
    strict=True,
    reason="P-6.7: a continuation that lists one identity in two seats checks and verifies (check_table has no "
    "test of duplicate keys; only the lobby's _seats_from_json has), and the honest seat's one signature "
    "counts for both of its seats; played, the honest laptop's TableRunner takes seat 0 (list.index) while its "
    "TableSession takes seat 3 (a dict of peer ids: the last), the colluder's 'bot' seat",
)
def test_a_bot_offered_with_another_seats_key_is_refused() -> None:
    """Seat 2 offers, for the exposed seat 3, a 'bot' whose key is honest seat 0's. The honest seat signs
    the continuation once, for its own seat; nobody else can sign for that key, so the plan must be
    refused before anyone signs (P-6.7: one identity, one seat)."""
    table = _exposed_table()
    victim = table.identities[0]
    plan = _decide(table, {2: {3: (victim, "127.0.0.1", 41003)}})
    if plan is None:
        return
    assert plan.seats[3].public_key == plan.seats[0].public_key
    signature_of_seat_0 = plan.sign(victim)
    signed = plan.with_signatures(
        [signature_of_seat_0, plan.sign(table.identities[1]), plan.sign(table.identities[2]), signature_of_seat_0]
    )
    with pytest.raises(ProtocolError):
        signed.verify()


@pytest.mark.xfail(
    strict=True,
    reason="P-6.7/P-5.6: an offered bot's port is never range-checked: the continuation with port 70000 checks "
    "and verifies, but its own JSON (the journal's copy) no longer parses, so no seat can resume it",
)
def test_an_offered_bot_with_a_port_no_socket_has_is_refused_before_anyone_signs() -> None:
    table = _exposed_table()
    bot = Identity.generate()
    plan = _decide(table, {2: {3: (bot, "127.0.0.1", 70000)}})
    assert plan is not None
    identities = [*table.identities[:3], bot]
    try:
        plan.check()
    except ProtocolError:
        return  # refused before anyone signs
    signed = plan.with_signatures([plan.sign(i) for i in identities])
    signed.verify()
    Continuation.from_json(signed.to_json()).verify()  # what a resumed seat reads back from its journal


@pytest.mark.xfail(
    strict=True,
    reason="P-6.3: Offer.from_json takes a seat key that str.isdigit() accepts and int() does not ('²', or "
    "5000 digits) and raises ValueError instead of PlanError; TableRunner.go_on catches only ProtocolError",
)
@pytest.mark.parametrize("key", ["\u00b2", "9" * 5000])
def test_an_offer_naming_its_seat_in_digits_int_cannot_read_is_refused_with_a_clear_line(key: str) -> None:
    table = _exposed_table()
    s0 = table.sessions[0]
    keys = [i.public.hex() for i in table.identities]
    raw = make_offer(s0.settings.table, s0.record_digest(), 2, True, table.identities[2], {}).to_json()
    raw["bots"] = {key: {"key": keys[2], "mesh": ["127.0.0.1", 41000], "vouch": "00" * 64}}
    with pytest.raises(ProtocolError):
        Offer.from_json(raw, keys)
