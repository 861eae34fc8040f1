"""A note (a leave, a stop for an audit) signed by a cheat at the next place of its chain of a round
every honest seat has confirmed and moved on from, sent to some honest seats only or to all of them.
Whatever it does to that round, no honest seat may be exposed (P-6.1) and the honest seats must end
with the same rounds and the same record (P-6.2). The attack is `pastnote` (tests/sim/stops.py)."""

from __future__ import annotations

import pytest
from sim import Spec, run

PAST_NOTES = [
    # one cheat, a leave of round 0 to the last honest seat alone, once it plays round 1
    pytest.param(Spec(5, "take6", 4, "{}", 2, ((3, "pastnote:leave"),)), id="take6-4-leave-to-one"),
    pytest.param(Spec(6, "take6", 3, "{}", 2, ((2, "pastnote:leave"),)), id="take6-3-leave-to-one"),
    pytest.param(Spec(5, "sixes", 4, '{"chips":3}', 2, ((3, "pastnote:leave"),)), id="sixes-4-leave-to-one"),
    # a stop for an audit (naming nobody) of round 0 to every honest seat
    pytest.param(Spec(6, "take6", 4, "{}", 2, ((3, "pastnote:stop:0.1.2"),)), id="take6-4-stop-to-all"),
]


@pytest.mark.parametrize("spec", PAST_NOTES)
def test_a_note_of_a_confirmed_round_exposes_no_honest_seat_and_leaves_the_honest_seats_agreeing(spec: Spec) -> None:
    result = run(spec)
    assert result.firings, "the attack never fired"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(Spec(5, "take6", 4, "{}", 2, ((3, "pastnote:end"),)), id="take6-4-end-to-one"),
        pytest.param(Spec(6, "take6", 4, "{}", 2, ((3, "pastnote:leave:0.1.2"),)), id="take6-4-leave-to-all"),
    ],
)
def test_a_note_of_a_confirmed_round_that_voids_nothing_or_reaches_all_leaves_the_honest_seats_agreeing(
    spec: Spec,
) -> None:
    result = run(spec)
    assert result.firings, "the attack never fired"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"


def test_notes_of_a_confirmed_round_are_kept_within_the_per_author_byte_cap() -> None:
    result = run(Spec(5, "take6", 4, "{}", 2, ((3, "pastflood:60"),)))
    assert result.firings, "the attack never fired"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"
