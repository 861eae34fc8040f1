"""Simulated tables found by sweeping the session on main with colluders and faults (docs/TESTING.md):
each names the invariant it breaks and the command that replays it."""

from __future__ import annotations

import pytest
from sim import Spec, run
from test_sim_scenarios import check

SECRETS_FORKS = [
    # python -m tests.sim --seed 3012 --game sixth-sense --seats 5 --rounds 1 --adversary fork:secrets@0
    #     --fault jitter:0.2 --keep 0
    Spec(3012, "sixth-sense", 5, "{}", 1, adversaries=((0, "fork:secrets"),), faults=("jitter:0.2",), keep=(0,)),
    # python -m tests.sim --seed 3113 --game take6 --seats 5 --rounds 1 --adversary fork:secrets@0 --keep 0
    Spec(3113, "take6", 5, "{}", 1, adversaries=((0, "fork:secrets"),), keep=(0,)),
]


@pytest.mark.parametrize("spec", SECRETS_FORKS, ids=[f"{s.game}-{s.seed}" for s in SECRETS_FORKS])
def test_another_version_of_the_secrets_to_some_seats_leaves_every_honest_seat_on_one_record(spec: Spec) -> None:
    check(run(spec), 0, exposed=True)
