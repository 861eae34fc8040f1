"""Engine benchmarks: random playouts per second and the heuristic bots' results.

Prints one JSON line per figure. Usage: .venv/bin/python scripts/bench_engine.py [--quick] [--speed-only]
[--repeats N] [--compare PATH ...]. Speeds are per second of this process's CPU time; each is run N
times (default 3), since the machine may be shared: the line gives the median (`value`), the best run
(`best`) and the goal of issue 12 (`target`, where it sets one).

`--compare PATH` measures another 6 nimmt! engine side by side with ours in this one process: PATH is
a Python file (kept outside the repository: no other project's code is committed here) defining
`random_round(rng)`, one random 4-player round of that engine (a fresh deal, 10 turns of uniformly
random cards, placement, bullheads, a row chosen when a card is below every row). Ours is
`play_round` below, as the speed figures play it; the two alternate in runs of equal CPU time,
`--repeats` times, and the line gives ours over theirs (issue 32 item 3: ahead of every pure-Python
engine found).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from engine import sixes, sixth_sense, take6
from engine.api import Game
from engine.games import all_games
from engine.playout import shuffled_deal
from lanplay.bots import Bot, RandomBot
from lanplay.games import make_bot

# (game, players, options, label, goal in rounds/s: issue 12 item 2)
PLAYOUTS: list[tuple[str, int, dict[str, object], str, float | None]] = [
    ("sixth-sense", 4, {}, "", 3000),
    ("take6", 4, {}, "", 9000),
    ("take6", 4, {"logic": True}, " with logic", None),
    ("sixes", 5, {}, "", None),
]


def emit(metric: str, value: float, unit: str, **extra: Any) -> None:
    print(json.dumps({"metric": metric, "value": round(value, 4), "unit": unit, **extra}), flush=True)


def play_round(game: Game[Any, Any, Any, Any], state: Any, rng: random.Random, bots: dict[int, Bot] | None) -> Any:
    """One round from `state` (phase "deal") to its end, by random moves or by bots."""
    state = game.start_round(state, shuffled_deal(game, state, rng))
    return finish_round(game, state, rng, bots)


def finish_round(game: Game[Any, Any, Any, Any], state: Any, rng: random.Random, bots: dict[int, Bot] | None) -> Any:
    """Random moves (or bots' moves) from `state` until the round has ended. A random move is
    picked uniformly as `legal[int(rng.random() * len(legal))]`, not by `rng.choice`: two Python
    calls fewer a move (about 150 k of the 1,000 k instructions of a 6 nimmt! round went to
    `rng.choice`; a different random stream than before 2026-12-01's third 6 nimmt! pass, so other
    games than before are played), and a move owed by one seat goes to `apply` (what `apply_moves` of
    the one move gives): both only make the harness cheaper, not the engine (docs/ENGINE.md has the
    figures with and without)."""
    uniform = rng.random
    expected_of, legal_moves, apply = game.expected, game.legal_moves, game.apply  # bound once per round
    while True:
        expected = expected_of(state)
        if expected.phase != "move":
            return state
        if bots is None:
            seats = expected.seats
            if len(seats) == 1:
                legal = legal_moves(state, seats[0])
                state = apply(state, legal[int(uniform() * len(legal))])
                continue
            moves = []
            for seat in seats:
                legal = legal_moves(state, seat)
                moves.append(legal[int(uniform() * len(legal))])
        else:
            moves = [bots[seat].choose(game, game.view(state, seat), seat) for seat in expected.seats]
        state = game.apply_moves(state, moves)  # a simultaneous turn's joint action at once


def rate(work: Callable[[], object], seconds: float) -> float:
    """Calls of `work` per second of this process's CPU time, over about `seconds` of it: on a
    shared machine the wall clock also counts the time other processes had the CPU."""
    count = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        work()
        count += 1
    return count / (time.process_time() - start)


def playout_rate(game: Game[Any, Any, Any, Any], players: int, options: dict[str, object], seconds: float) -> float:
    rng = random.Random(1)
    opts = game.options_from_json(options)
    return rate(lambda: play_round(game, game.new_game(players, opts), rng, None), seconds)


def mid_round(game: Game[Any, Any, Any, Any], players: int, moves: int) -> Any:
    """A full-knowledge state `moves` random moves into a round (the same one every run)."""
    rng = random.Random(2)
    state = game.start_round(game.new_game(players, game.options_from_json({})), shuffled_deal(
        game, game.new_game(players, game.options_from_json({})), rng
    ))
    for _ in range(moves):
        seat = game.expected(state).seats[0]
        state = game.apply(state, rng.choice(game.legal_moves(state, seat)))
    return state


def sample_hidden(game_id: str, view: Any, seat: int, rng: random.Random) -> dict[str, Any]:
    """A random assignment of the cards `seat` cannot see, of the right sizes (6th Sense: no card of
    a colour a seat showed it lacks, S-4.2). A plain sampler: the expert bots know more."""
    if game_id == "sixth-sense":
        r = view.round
        pool = list(sixth_sense.unseen_cards(view, seat))
        rng.shuffle(pool)
        hands: dict[int, list[Any]] = {}
        for other in sorted((s for s, h in enumerate(r.hands) if h is None), key=lambda s: -len(r.voids[s])):
            fits = [card for card in pool if card.colour not in r.voids[other]][: r.hand_sizes[other]]
            hands[other] = fits
            pool = [card for card in pool if card not in fits]
        predictions = {s: pool.pop() for s in range(view.players) if r.predicted[s] and r.predictions[s] is None}
        return {"hands": hands, "predictions": predictions}
    if game_id == "take6":
        pool6 = list(take6.unseen_cards(view, seat))
        rng.shuffle(pool6)
        chosen = {s: pool6.pop() for s, c in enumerate(view.chosen) if c == take6.HIDDEN}
        hands6 = {s: [pool6.pop() for _ in range(view.hand_sizes[s])] for s, h in enumerate(view.hands) if h is None}
        return {"hands": hands6, "chosen": chosen}
    r = view.round
    pool_x = list(sixes.unseen_cards(view, seat))
    rng.shuffle(pool_x)
    return {"hands": {s: [pool_x.pop() for _ in range(r.hand_sizes[s])] for s, h in enumerate(r.hands) if h is None}}


DETERMINIZE: dict[str, Callable[..., Any]] = {
    "sixth-sense": sixth_sense.determinize,
    "take6": take6.determinize,
    "sixes": sixes.determinize,
}
# (game, players, random moves into the round before the search starts)
SEARCH_POINTS = [("sixth-sense", 4, 4 + 12), ("take6", 4, 8), ("sixes", 5, 12)]


def search_playout_rate(game_id: str, players: int, moves: int, seconds: float) -> float:
    """What an information-set search does per sample: determinize a seat's view with a random
    assignment of its hidden cards, then play random moves to the end of the round."""
    game = all_games()[game_id]
    state = mid_round(game, players, moves)
    seat = game.expected(state).seats[0]
    view = game.view(state, seat)
    rng = random.Random(3)

    def playout() -> None:
        sample = DETERMINIZE[game_id](view, seat, **sample_hidden(game_id, view, seat, rng))
        finish_round(game, sample, rng, None)

    return rate(playout, seconds)


def repeated(figure: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(median, best) of `repeats` runs."""
    values = [figure() for _ in range(repeats)]
    return statistics.median(values), max(values)


def sixth_sense_hit_rate(seat0: str, others: str, rounds: int) -> float:
    from engine.sixth_sense import SIXTH_SENSE, round_score

    rng = random.Random(7)
    bots: dict[int, Bot] = {0: make_bot("sixth-sense", seat0, 100)}
    bots.update({seat: make_bot("sixth-sense", others, seat) for seat in (1, 2, 3)})
    options = SIXTH_SENSE.options_from_json({})
    hits = 0
    for _ in range(rounds):
        state = play_round(SIXTH_SENSE, SIXTH_SENSE.new_game(4, options), rng, bots)
        r = state.round
        # a hit is a distance of 0, which the beginner table scores 6 (S-8.1)
        hits += round_score(r.predictions[0], r.tricks[0], beginner=True) == 6
    return hits / rounds


def take6_mean_bullheads(seat0: str, games: int) -> float:
    game = all_games()["take6"]
    rng = random.Random(11)
    bots: dict[int, Bot] = {0: make_bot("take6", seat0, 100)}
    bots.update({seat: RandomBot(seat) for seat in (1, 2, 3)})
    total = 0
    for _ in range(games):
        state = game.new_game(4, game.options_from_json({}))
        while game.expected(state).phase == "deal":
            state = play_round(game, state, rng, bots)
        total += game.totals(state)[0]
    return total / games


def sixes_round_share(seat0: str, rounds: int) -> float:
    game = all_games()["sixes"]
    rng = random.Random(13)
    bots: dict[int, Bot] = {0: make_bot("sixes", seat0, 100)}
    bots.update({seat: RandomBot(seat) for seat in (1, 2, 3, 4)})
    won = 0
    for _ in range(rounds):
        state = play_round(game, game.new_game(5, game.options_from_json({})), rng, bots)
        won += game.round_report(state)["winner"] == 0
    return won / rounds


def load_engine(path: str) -> Callable[[random.Random], object]:
    """`random_round` of the Python file at `path` (`--compare`); one clear line if there is none."""
    import importlib.util
    from pathlib import Path

    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"--compare {path}: no such file (a Python file defining random_round(rng))")
    spec = importlib.util.spec_from_file_location(f"compared_{file.stem}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    play = getattr(module, "random_round", None)
    if not callable(play):
        raise SystemExit(f"--compare {path}: the file defines no random_round(rng) (one random 4-player round)")
    return play  # type: ignore[no-any-return]


def compare_take6(paths: list[str], seconds: float, repeats: int) -> None:
    """Ours against each engine of `paths`, alternating runs of `seconds` CPU time in this process."""
    game = all_games()["take6"]
    options = game.options_from_json({})
    for path in paths:
        theirs = load_engine(path)
        name = path.rsplit("/", 1)[-1].removesuffix(".py")
        rng_ours, rng_theirs = random.Random(1), random.Random(1)
        ours_runs: list[float] = []
        their_runs: list[float] = []
        def ours(rng: random.Random = rng_ours) -> object:
            return play_round(game, game.new_game(4, options), rng, None)

        def other(rng: random.Random = rng_theirs, play: Callable[[random.Random], object] = theirs) -> object:
            return play(rng)

        for _ in range(repeats):
            ours_runs.append(rate(ours, seconds))
            their_runs.append(rate(other, seconds))
        ratios = [a / b for a, b in zip(ours_runs, their_runs, strict=True)]
        emit(f"take6 random rounds/s, 4 players, alternating with {name}", statistics.median(ours_runs),
             "rounds/s", best=round(max(ours_runs), 1), runs=repeats)
        emit(f"{name} random rounds/s, 4 players, alternating with lanplay", statistics.median(their_runs),
             "rounds/s", best=round(max(their_runs), 1), runs=repeats)
        ratio = statistics.median(ratios)
        emit(f"take6 engine speed over {name} (one process, alternating runs)", ratio, "ratio",
             lowest=round(min(ratios), 4), highest=round(max(ratios), 4), runs=repeats,
             goal="> 1 (issue 32)", met=ratio > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--speed-only", action="store_true", help="only the engine's speed, not the bots' results")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each speed figure (median and best)")
    parser.add_argument("--compare", nargs="+", metavar="PATH", default=[],
                        help="other 6 nimmt! engines' random_round(rng), measured side by side with ours")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.compare:
        compare_take6(args.compare, 1.0 if args.quick else 2.0, args.repeats)
        return
    seconds = 1.0 if args.quick else 3.0
    scale = 10 if args.quick else 1
    games = all_games()
    for game_id, players, options, label, goal in PLAYOUTS:
        game = games[game_id]
        median, best = repeated(lambda: playout_rate(game, players, options, seconds), args.repeats)  # noqa: B023
        extra: dict[str, Any] = {"best": round(best, 1), "runs": args.repeats}
        if goal is not None:
            extra["target"] = f">= {goal:g}"
        emit(f"{game_id} random rounds/s, {players} players{label}", median, "rounds/s", **extra)
    for game_id, players, moves in SEARCH_POINTS:
        median, best = repeated(lambda: search_playout_rate(game_id, players, moves, seconds), args.repeats)  # noqa: B023
        emit(
            f"{game_id} search playouts/s from mid-round (determinize a view, random moves to the round's end), "
            f"{players} players",
            median, "playouts/s", best=round(best, 1), runs=args.repeats,
        )
    if args.speed_only:
        return
    rounds = 2000 // scale
    emit("sixth-sense heuristic hit rate vs 3 random", sixth_sense_hit_rate("heuristic", "random", rounds), "share")
    emit("sixth-sense random hit rate vs 3 random", sixth_sense_hit_rate("random", "random", rounds), "share")
    emit(
        "sixth-sense heuristic hit rate vs 3 heuristic",
        sixth_sense_hit_rate("heuristic", "heuristic", rounds),
        "share",
    )
    if "take6" in games:
        n = 300 // scale
        emit("take6 heuristic mean bullheads/game vs 3 random", take6_mean_bullheads("heuristic", n), "bullheads")
        emit("take6 random mean bullheads/game vs 3 random", take6_mean_bullheads("random", n), "bullheads")
    if "sixes" in games:
        n = 2000 // scale
        emit("sixes heuristic share of rounds won vs 4 random", sixes_round_share("heuristic", n), "share")
        emit("sixes random share of rounds won vs 4 random", sixes_round_share("random", n), "share")


if __name__ == "__main__":
    main()
