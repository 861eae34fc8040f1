"""P-6.1-6.4 and P-6.6 at every honest seat of seeded random tables in the whole-peer simulator
(tests/sim, docs/TESTING.md): every game, option set and seat count, half with adversaries at 1 to
n-1 seats and faults composed (loss, duplicates, partitions, suspends, crashes with a journal
restart). A failure prints its checks and the command that replays the table;
`scripts/soak.py` runs thousands more of the same tables."""

from __future__ import annotations

import pytest
from sim import random_spec, run

TABLES = 150  # CI-sized; the soak draws from the same seeds upwards

# Tables the session on main fails (found by this simulator; the replay command is in the reason). A
# fix makes its case pass, strict xfail then fails, and the mark is to be removed.
KNOWN: dict[int, str] = {}


def seeds() -> list[object]:
    return [
        pytest.param(seed, marks=pytest.mark.xfail(strict=True, reason=KNOWN[seed])) if seed in KNOWN else seed
        for seed in range(TABLES)
    ]


@pytest.mark.parametrize("seed", seeds())
def test_a_random_table_keeps_every_invariant_at_every_honest_seat(seed: int) -> None:
    spec = random_spec(seed)
    result = run(spec)
    assert result.ok, f"{result.summary()}\nreplay: {spec.command()} --shrink"


def test_half_the_tables_have_adversaries_and_every_game_is_drawn() -> None:
    specs = [random_spec(seed) for seed in range(TABLES)]
    assert 0.35 * TABLES < sum(bool(s.adversaries) for s in specs) < 0.65 * TABLES
    assert {s.game for s in specs} == {"sixth-sense", "take6", "sixes"}
    assert any(len(s.adversaries) > 1 for s in specs)  # colluders
    assert {f.split(":")[0] for s in specs for f in s.faults} >= {"loss", "dup", "crash", "part", "suspend", "cut"}
