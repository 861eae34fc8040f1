"""protocol.plan (I7, P-3.2): the seat order is drawn jointly, and a plan starts only with every
seat's signature on the very same plan. Every attack is a modified host or seat editing the values."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter

import pytest

from protocol.commitment import Opening
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import Identity
from protocol.plan import (
    PlanDraw,
    PlanError,
    Roster,
    SeatInfo,
    TablePlan,
    build_plan,
    check_name,
    draw_order,
    order_commitment,
)

LOBBY = "ab" * 16


def _people(n: int) -> tuple[list[Identity], Roster]:
    identities = [Identity.generate() for _ in range(n)]
    seats = tuple(SeatInfo(f"P{i}", ident.public.hex(), "127.0.0.1", 6000 + i) for i, ident in enumerate(identities))
    return identities, Roster(LOBBY, "sixth-sense", {}, seats)


def _signed(n: int = 4) -> tuple[list[Identity], Roster, TablePlan]:
    """A whole honest draw: every seat runs its own PlanDraw; the host relays."""
    identities, roster = _people(n)
    draws = [PlanDraw(roster, ident, os.urandom) for ident in identities]
    commitments = [d.commitment for d in draws]
    openings = [d.reveal(commitments) for d in draws]
    results = [d.plan(openings) for d in draws]
    assert all(r[0] == results[0][0] for r in results)  # every seat derived the same plan on its own
    plan = results[0][0]
    by_key = {ident.public.hex(): sig for ident, (_, sig) in zip(identities, results, strict=True)}
    signed = plan.with_signatures([by_key[s.public_key] for s in plan.seats])
    for d in draws:
        assert d.finish(signed) == signed
    return identities, roster, signed


def test_an_honest_draw_gives_every_seat_the_same_verified_plan() -> None:
    _, roster, plan = _signed(4)
    plan.verify()
    assert sorted(s.public_key for s in plan.seats) == sorted(s.public_key for s in roster.seats)
    assert TablePlan.from_json(plan.to_json()) == plan  # the journal keeps it as JSON
    assert plan.settings().table == plan.table_id
    assert [p.hex() for p in plan.settings().seats] == [s.public_key for s in plan.seats]


def test_seat_order_is_drawn_not_the_join_order() -> None:
    """P-3.2: over many draws the host (join index 0) sits everywhere; the order is a permutation."""
    _, roster = _people(4)
    host_seat: Counter[int] = Counter()
    for _ in range(200):
        pairs = [order_commitment(roster, i, os.urandom(32)) for i in range(4)]
        order = draw_order(roster, [c for c, _ in pairs], [o for _, o in pairs])
        assert sorted(order) == [0, 1, 2, 3]
        host_seat[order.index(0)] += 1
    assert set(host_seat) == {0, 1, 2, 3}
    assert all(count > 20 for count in host_seat.values()), host_seat  # ~50 each


def test_one_share_changes_the_order_and_nobody_can_open_another_value() -> None:
    _, roster = _people(5)
    pairs = [order_commitment(roster, i, os.urandom(32)) for i in range(5)]
    commitments, openings = [c for c, _ in pairs], [o for _, o in pairs]
    base = draw_order(roster, commitments, openings)
    assert draw_order(roster, commitments, openings) == base  # deterministic for everyone
    # The last to reveal cannot swap in another value: it does not open its commitment (P-3.3).
    forged = [*openings[:-1], Opening(os.urandom(32), openings[-1].nonce)]
    with pytest.raises(CheatDetected) as info:
        draw_order(roster, commitments, forged)
    assert info.value.seat == 4
    # Nor reuse another seat's commitment: commitments are bound to the join index.
    with pytest.raises(CheatDetected):
        draw_order(roster, [commitments[0], commitments[0], *commitments[2:]], [openings[0], *openings[1:]])
    # A commitment for another roster (another lobby, other seats) does not open here either.
    _, other = _people(5)
    elsewhere = [order_commitment(other, i, o.value, o.nonce)[0] for i, o in enumerate(openings)]
    with pytest.raises(CheatDetected):
        draw_order(roster, elsewhere, openings)


def test_a_phantom_seat_cannot_start() -> None:
    """The host lists Alice, who never joined: it can make up her share of the draw, not her signature."""
    identities, roster = _people(3)
    alice = Identity.generate()  # never in the lobby
    phantom = Roster(
        LOBBY, roster.game, roster.options, (*roster.seats, SeatInfo("Alice", alice.public.hex(), "127.0.0.1", 7000))
    )
    pairs = [order_commitment(phantom, i, os.urandom(32)) for i in range(4)]
    plan = build_plan(phantom, [c for c, _ in pairs], [o for _, o in pairs])
    honest = {ident.public.hex(): plan.sign(ident) for ident in identities}
    forged = identities[0].sign(plan.statement()).hex()  # the host signs in her place
    signatures = [honest.get(s.public_key, forged) for s in plan.seats]
    with pytest.raises(PlanError, match=r"Alice.*did not sign"):
        plan.with_signatures(signatures).verify()
    with pytest.raises(PlanError, match="3 signatures for 4 seats"):
        plan.with_signatures(
            [sig for seat, sig in zip(plan.seats, signatures, strict=True) if seat.name != "Alice"]
        ).verify()


def test_a_reordered_or_edited_plan_does_not_verify() -> None:
    identities, _, plan = _signed(4)
    # The host puts itself first (or anyone anywhere) after the draw, and everyone signs that.
    reordered = dataclasses.replace(plan, seats=(plan.seats[1], plan.seats[0], *plan.seats[2:]), signatures=())
    by_key = {i.public.hex(): i for i in identities}
    resigned = reordered.with_signatures([reordered.sign(by_key[s.public_key]) for s in reordered.seats])
    with pytest.raises(PlanError, match="not the one the joint draw gives"):
        resigned.verify()
    # An edited seat (another mesh address for a victim): the old signatures no longer hold.
    moved = dataclasses.replace(plan.seats[2], port=1)
    edited = dataclasses.replace(plan, seats=(*plan.seats[:2], moved, plan.seats[3]))
    with pytest.raises(PlanError):
        edited.verify()
    assert edited.table_id != plan.table_id
    # Another game under the same signatures (the draw was bound to the roster of this game, too).
    with pytest.raises(PlanError):
        dataclasses.replace(plan, game="take6").verify()
    # A seat that joined is left out: the seats are not the peers that joined.
    dropped = dataclasses.replace(plan, seats=plan.seats[:3], signatures=plan.signatures[:3])
    with pytest.raises(PlanError, match="exactly the peers that joined"):
        dropped.verify()
    # Signatures swapped between seats, or garbage.
    swapped = plan.with_signatures([plan.signatures[1], plan.signatures[0], *plan.signatures[2:]])
    with pytest.raises(PlanError, match="seat 0"):
        swapped.verify()
    with pytest.raises(PlanError):
        plan.with_signatures(["zz", *plan.signatures[1:]]).verify()


def test_a_seat_refuses_what_it_did_not_draw_and_sign() -> None:
    identities, roster = _people(3)
    mine = PlanDraw(roster, identities[1], os.urandom)
    others = [PlanDraw(roster, i, os.urandom) for i in (identities[0], identities[2])]
    commitments = [others[0].commitment, mine.commitment, others[1].commitment]
    # The relayed commitments must hold this seat's own, untouched.
    with pytest.raises(PlanError, match="own"):
        mine.reveal([others[0].commitment, others[1].commitment, others[1].commitment])
    with pytest.raises(PlanError):
        mine.reveal(commitments[:2])
    opening = mine.reveal(commitments)
    openings = [others[0].reveal(commitments), opening, others[1].reveal(commitments)]
    with pytest.raises(PlanError, match="own"):
        mine.plan([openings[0], openings[2], openings[2]])
    plan, _ = mine.plan(openings)
    # A start for another plan (here: another draw of the same people) is refused.
    _, _, other = _signed(3)
    with pytest.raises(PlanError, match="not the one this seat drew"):
        mine.finish(other)
    with pytest.raises(PlanError, match="signatures"):
        mine.finish(plan)  # unsigned


def test_plan_json_is_shape_checked() -> None:
    _, _, plan = _signed(2)
    raw = plan.to_json()
    for broken in (
        {**raw, "draw": "x"},
        {k: v for k, v in raw.items() if k != "draw"},
        {**raw, "seats": []},
        {**raw, "seats": [raw["seats"][0], raw["seats"][0]]},  # type: ignore[index]
        {**raw, "signatures": "x"},
        {**raw, "seats": [{"name": "A", "key": "00" * 32, "mesh": ["127.0.0.1", 1]}]},
        {**raw, "seats": [{"name": "A", "key": plan.seats[0].public_key, "mesh": ["host.example", 1]}]},
        "not a plan",
    ):
        with pytest.raises(ProtocolError):
            TablePlan.from_json(broken)


@pytest.mark.parametrize(
    "name",
    ["\x1b[2J\x1b[HYou won", "Bob\x07", "Ann\u202egnp.exe", "two\nlines", "\x9b31mred", "", "   ", "x" * 41, 7],
)
def test_names_with_controls_escapes_or_bidi_are_refused(name: object) -> None:
    with pytest.raises(PlanError):
        check_name(name)
    with pytest.raises(PlanError):
        SeatInfo.from_json({"name": name, "key": Identity.generate().public.hex(), "mesh": ["127.0.0.1", 1]})


def test_ordinary_names_are_fine() -> None:
    for name in ["Ann", "Zoë", "José María", "李雷", "O'Brien-Smith 2"]:
        assert check_name(name) == name


def test_a_seat_reveals_and_signs_once_per_draw() -> None:
    """P-6.5: a relay that, having seen every reveal, offers the commitments again with a new one of
    its own (which would let it choose the order) gets no second reveal; nor do the reveals offered
    again get a second signature. Even the very same values are refused: each step once per draw."""
    identities, roster = _people(3)
    draws = [PlanDraw(roster, ident, os.urandom) for ident in identities]
    commitments = [d.commitment for d in draws]
    openings = [d.reveal(commitments) for d in draws]
    fresh = PlanDraw(roster, identities[0], os.urandom)  # the relay's new share, chosen after the reveals
    for offered in ([fresh.commitment, *commitments[1:]], commitments):
        with pytest.raises(PlanError, match="second time") as refused:
            draws[1].reveal(offered)
        assert refused.value.rule == "P-6.5"
    draws[1].plan(openings)
    with pytest.raises(PlanError, match="second time"):
        draws[1].plan(openings)
