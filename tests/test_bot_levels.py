"""The bot levels (lanplay.bots.BOT_LEVELS: easy, normal, expert): legal moves from the seat's view
only over random states of every option combination, the same move for the same seed and view,
and the obvious Sixes moves in hand-made positions (X-2.3, X-2.4, X-2.5)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_bots_expert import ALL_CASES, AnyGame, random_states, trapped_view

from engine.sixes import SIXES, SixesOptions, SixesRound, SixesState
from engine.sixes import Play as SixesPlay
from engine.sixth_sense import SIXTH_SENSE
from engine.take6 import TAKE6
from lanplay.bots import BOT_LEVELS
from lanplay.bots.expert import ExpertBot
from lanplay.games import make_bot, searcher_for


@pytest.mark.parametrize(("game", "players", "options"), ALL_CASES, ids=lambda v: str(getattr(v, "id", v)))
def test_every_level_plays_legal_moves_from_its_view_alone(game: AnyGame, players: int, options: Any) -> None:
    """S-4.2, T-3.1, X-2.3/X-2.4 …: each level's move is legal in the full state, and no level
    touches a field its seat cannot see (the view's hidden fields are traps)."""
    rng = random.Random(f"levels {game.id} {players} {options}")
    for state, seat in random_states(game, players, options, rng, 2):
        for level in BOT_LEVELS:
            bot = make_bot(game.id, level, rng.randrange(1000), budget=0.01)
            move = bot.choose(game, trapped_view(game, state, seat), seat)
            assert move in game.legal_moves(state, seat), (level, move)


@pytest.mark.parametrize("level", BOT_LEVELS)
@pytest.mark.parametrize(
    ("game", "players"), [(SIXES, 5), (TAKE6, 4), (SIXTH_SENSE, 4)], ids=lambda v: str(getattr(v, "id", v))
)
def test_same_seed_and_view_same_move_at_every_level(level: str, game: AnyGame, players: int) -> None:
    """A level's random numbers come from its seed and the view: the same seed and view give the
    same move (a search level with a fixed number of worlds, as a replay would)."""
    rng = random.Random(f"{level} {game.id}")

    def bot() -> Any:
        if level == "easy":
            return make_bot(game.id, level, 17)
        return ExpertBot(searcher_for(game.id), seed=17, samples=3)

    for state, seat in random_states(game, players, game.options_from_json({}), rng, 4):
        view = game.view(state, seat)
        assert bot().choose(game, view, seat) == bot().choose(game, view, seat)


def _sixes(hands: tuple[tuple[str, ...], ...], columns: Any, turn: int, lacks: Any = ()) -> SixesState:
    from engine.sixes import column_ends

    r = SixesRound(0, hands, tuple(len(h) for h in hands), columns, column_ends(columns), turn, 0, None, 0, lacks)
    return SixesState(len(hands), SixesOptions(), 1, (10,) * len(hands), 0, r, False)


@pytest.mark.parametrize("level", ["normal", "expert"])
def test_sixes_holds_the_six_that_opens_only_the_others_runs(level: str) -> None:
    """X-2.3: E6 would open E5 … EA and E7 … EK, all in other hands; O5 opens the seat's own O4,
    O3. The search levels play O5 and hold the 6 (the others pass on it, X-2.4)."""
    columns = (("O6", "O6"), ("CA", "CK"), None, ("BA", "BK"))
    hands = (
        ("O3", "O4", "O5", "E6"),
        ("OA", "E5", "E4", "E3", "OJ"),
        ("O2", "E2", "EA", "E7", "O7"),
        ("EJ", "EQ", "EK", "OQ", "OK"),
    )
    state = _sixes(hands, columns, 0)
    assert set(SIXES.legal_moves(state, 0)) == {SixesPlay(0, "O5"), SixesPlay(0, "E6")}
    for seed in range(3):
        if level == "expert":
            bot = ExpertBot(searcher_for("sixes"), seed=seed, samples=30)
        else:
            bot = make_bot("sixes", level, seed)
        assert bot.choose(SIXES, SIXES.view(state, 0), 0) == SixesPlay(0, "O5")
