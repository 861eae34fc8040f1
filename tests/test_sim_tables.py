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
HONEST_EXPOSED = "P-6.1: honest seats exposed on their own secrets, keys or lock (see the report of deliverable 7)"
KNOWN = {
    14: "P-6.4: a seat in 'ending' waits with nothing in waiting() (the end signature is no owed step)",
    24: HONEST_EXPOSED + ": a lock held back 12 s, a stop, then every honest seat's secrets refused",
    32: "P-6.4: a 2-seat take6 whose honest seat waits for a leaker's commit after a crash and a partition",
    41: HONEST_EXPOSED + ": a lock held back 9.5 s and a leave",
    77: "P-6.4: an honest 3-seat take6 (jitter 3 s, a crash) waits for honest moves and commits for ever",
    113: HONEST_EXPOSED + ": an honest 4-seat take6 logic table, a seat leaves after round 1",
    127: "P-6.2: honest seats finish on different record digests",
    131: HONEST_EXPOSED + ": an honest 3-seat take6, a seat leaves after round 1 (lock 'owed by none')",
    136: "P-6.2: honest seats finish on different record digests",
}


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
