"""Simulated tables found by sweeping the session on main with colluders and faults (docs/TESTING.md):
each names the invariant it breaks and the command that replays it."""

from __future__ import annotations

import pytest
from sim import Spec, run
from test_sim_scenarios import check


@pytest.mark.xfail(
    strict=True,
    reason="P-6.2/P-6.4: a mutated version of the forker's secrets to one of four honest seats (5-seat 6th Sense, "
    "jitter): seats 3 and 4 confirm round 1 and finish, seat 2 (holding the version that fails) confirms nothing "
    "and stays in 'ending' waiting for nobody; replay: python -m tests.sim --seed 3012 --game sixth-sense "
    "--seats 5 --rounds 1 --adversary fork:secrets@0 --fault jitter:0.2 --keep 0",
)
def test_a_mutated_version_of_the_secrets_to_one_seat_leaves_every_honest_seat_on_one_record() -> None:
    spec = Spec(3012, "sixth-sense", 5, "{}", 1, adversaries=((0, "fork:secrets"),), faults=("jitter:0.2",), keep=(0,))
    check(run(spec), 0, exposed=True)
