"""Issue 13's property: honest tables of every game, every option combination and every table size,
under reordering, duplication and loss (`protocol.testing.HONEST_FAULTS`), end with no seat
blamed, byte-identical records at every seat, and records that replay (engine/record.py) to the
round results and winners the table reached.

How the tables are kept short: each is judged on its first round (every seat must confirm it,
P-5.2), or on the whole game where the options end it by then (Sixes with one chip, X-1.4; 6th
Sense with a target of one point, S-8.2). A table's cost grows with the square of its seats
(gossip), so every size from 2 to the maximum is run once per game with the option combinations
taken in turn, and the two smallest sizes run every combination with three seeds.
`scripts/soak.py` runs thousands of tables in the simulator (tests/sim).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.games import get_game
from protocol.testing import Harness, Withhold, check_honest, option_combinations, run_honest

GAMES = ("sixth-sense", "take6", "sixes")
# Issue 13 (P-2.2 desync blamed on an honest seat under reordering with late trump, S-8.3) is fixed
# on main (9b9375d); these seeds did not hit it before the fix either, so no case is marked xfail.


def _label(options: dict[str, object]) -> str:
    return "+".join(sorted(k for k, v in options.items() if v and k != "chips")) or (
        f"chips{options['chips']}" if "chips" in options else "plain"
    )


def cases() -> Iterator[tuple[str, int, dict[str, object], int]]:
    for game in GAMES:
        spec = get_game(game)
        combos = option_combinations(game)
        sizes = list(range(spec.min_players, spec.max_players + 1))
        for i, players in enumerate(sizes):
            yield game, players, combos[i % len(combos)], 100 + i
        for players in sizes[:2]:
            for c, options in enumerate(combos):
                for seed in range(3):
                    yield game, players, options, 1000 * players + 10 * c + seed


def _param(game: str, players: int, options: dict[str, object], seed: int) -> object:
    return pytest.param(game, players, options, seed, id=f"{game}-{players}-{_label(options)}-{seed}")


@pytest.mark.parametrize(("game", "players", "options", "seed"), [_param(*c) for c in cases()])
def test_honest_table_under_faults(game: str, players: int, options: dict[str, object], seed: int) -> None:
    result = run_honest(game, players, options, seed)
    assert result.clean, "\n".join(result.problems())
    assert result.rounds >= 1 or result.game_over


def test_every_size_and_combination_is_covered() -> None:
    seen = {(g, p) for g, p, _, _ in cases()}
    for game in GAMES:
        spec = get_game(game)
        assert {p for g, p in seen if g == game} == set(range(spec.min_players, spec.max_players + 1))
        combos = {repr(sorted(o.items())) for g, _, o, _ in cases() if g == game}
        assert len(combos) == len(option_combinations(game))


def test_a_whole_game_under_faults_replays_to_its_winners() -> None:
    """A whole game (Sixes with one chip), its winners checked against the record's replay."""
    result = run_honest("sixes", 4, {"chips": 1}, 77, rounds=None)
    assert result.game_over
    assert result.clean, "\n".join(result.problems())


def test_the_check_sees_a_blame() -> None:
    """The check must be able to fail: a seat that withholds its shuffle is blamed (P-5.3)."""
    h = Harness("sixes", 3, {"chips": 1}, seed=4, adversaries={1: Withhold("shuffle")})
    h.run()
    result = check_honest(h, 1)
    assert not result.clean
    assert any("blamed 1 for P-5.3" in p for p in result.blamed)
