"""Bot benchmark: every level against its opponents in every game, duplicate, and decision times.

One JSON line per figure: `metric`, `value`, `unit`, the 95 % interval `ci_low`/`ci_high`, the
rounds it rests on (`n`) and, where issue 32 sets one, its `goal` and whether it is `met`.

Every comparison is **duplicate**: round i is one deal (drawn from a seed of its own index), played
by the bot measured (the subject) in a seat that rotates with i, the other seats by their bots
(seeded by i and the seat, so the same at every table), then again with a reference bot in the
subject's seat and everything else the same. A difference of the two is the seats' difference on
the same cards. The comparisons:

* 6th Sense: expert vs 3 heuristic (reference: heuristic); normal vs 3 easy (reference: easy).
* 6 nimmt!: expert vs 3 heuristic (references: the heuristic, and `mcs-200`: a plain Monte Carlo
  bot written here, below); normal vs 3 easy.
* Sixes: expert vs 4 heuristic and vs 4 random (reference: heuristic); normal vs 4 easy
  (reference: easy).
* In every game, normal vs the heuristic players (reference: heuristic): how hard it is to beat.

A Sixes round is scored in chips: the pot to the seat that went out, minus the chips each seat
paid for passing (X-2.4, X-2.5), from 10 chips each (X-1.4).

The decision times are those of the subject's decisions with more than one legal move, with
`--workers` rounds played side by side (a table's peers run beside each other on one laptop).

`--sixes-variants` instead measures how much a Sixes seat's one-card policy matters at all: variants
of the heuristic's weights (and a random player), each duplicate against the heuristic in the same
seat, 4 heuristic or 4 random opponents, `--rounds` deals (default 6,000; no search, so seconds).

Usage: .venv/bin/python scripts/bench_bots.py [--quick] [--rounds N] [--budget 0.25] [--workers 2]
[--games ...] [--only expert|normal ...] [--against heuristic|random|easy ...] [--first I] [--rows PATH]
[--sixes-variants]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.games import get_game
from engine.playout import shuffled_deal
from engine.take6 import TAKE6
from lanplay.bots import NORMAL_BUDGET, Bot
from lanplay.bots.expert import DEFAULT_BUDGET, ExpertBot
from lanplay.games import make_bot, searcher_for
from lanplay.games.take6.search import Take6Searcher

PLAYERS = {"sixth-sense": 4, "take6": 4, "sixes": 5}
GAMES = tuple(PLAYERS)
BOOTSTRAP = 2000
MCS_PLAYOUTS = 200


@dataclass(frozen=True)
class Match:
    """One comparison: `subject` in the rotating seat, `others` everywhere else, and each of
    `references` in the subject's seat on the same deals."""

    game: str
    subject: str
    others: str
    references: tuple[str, ...]
    rounds: int  # a full run's rounds
    quick: int  # --quick's rounds


MATCHES = (
    Match("sixth-sense", "expert", "heuristic", ("heuristic",), 400, 16),
    Match("sixth-sense", "normal", "easy", ("easy",), 300, 16),
    Match("take6", "expert", "heuristic", ("heuristic", "mcs-200"), 300, 8),
    Match("take6", "normal", "easy", (), 300, 16),
    Match("sixes", "expert", "heuristic", ("heuristic",), 5000, 150),
    Match("sixes", "expert", "random", ("heuristic",), 1000, 60),
    Match("sixes", "normal", "easy", ("easy",), 1000, 60),
    # how hard normal is to beat: against the heuristic players, the heuristic in its seat
    Match("sixth-sense", "normal", "heuristic", ("heuristic",), 300, 8),
    Match("take6", "normal", "heuristic", ("heuristic",), 300, 8),
    Match("sixes", "normal", "heuristic", ("heuristic",), 1000, 30),
)


class RandomPlayoutSearcher(Take6Searcher):
    """`mcs-200`'s search: every legal move, hidden cards dealt uniformly from the unseen ones, the
    other seats' hidden choices and the rest of the round played by uniformly random legal moves
    (every seat, this one too), the fewest bullheads chosen. No heuristic anywhere."""

    confidence = 0.0

    def candidates(self, view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Any, ...]:
        return moves

    def prior(self, view: Any, seat: int, rng: random.Random) -> Any:
        return TAKE6.legal_moves(view, seat)[0]

    def policy(self, state: Any, seat: int, rng: random.Random) -> Any:
        legal = TAKE6.legal_moves(state, seat)
        return legal[int(rng.random() * len(legal))]


def build(game_id: str, kind: str, seed: int, budget: float) -> Bot:
    if kind == "mcs-200":
        bot = ExpertBot(searcher_for(game_id), seed, samples=MCS_PLAYOUTS)
        bot.searcher = RandomPlayoutSearcher()
        return bot
    return make_bot(game_id, kind, seed, budget if kind == "expert" else None)


@dataclass(frozen=True)
class Table:
    """One round's end, per seat: `score` (6th Sense points, 6 nimmt! bullheads, Sixes net chips),
    `hits` (6th Sense), `winner` (Sixes)."""

    score: tuple[float, ...]
    hits: tuple[bool, ...]
    winner: int | None


@dataclass(frozen=True)
class RoundResult:
    match: int
    index: int
    seat: int
    subject: Table
    references: tuple[Table, ...]
    decision_times: tuple[float, ...]


def emit(metric: str, value: float, unit: str, ci: tuple[float, float] | None, n: int, **extra: Any) -> None:
    line: dict[str, Any] = {"metric": metric, "value": round(value, 4), "unit": unit}
    if ci is not None:
        line["ci_low"], line["ci_high"] = round(ci[0], 4), round(ci[1], 4)
    line["n"] = n
    line.update(extra)
    print(json.dumps(line), flush=True)


def play_round(game_id: str, index: int, bots: dict[int, Bot], timed: int | None) -> tuple[Table, list[float]]:
    game = get_game(game_id)
    players = PLAYERS[game_id]
    rng = random.Random(f"bench-bots {game_id} {index}")  # the same deal for every table
    state = game.new_game(players, game.options_from_json({}))
    state = game.start_round(state, shuffled_deal(game, state, rng))
    start = state
    times: list[float] = []
    while True:
        expected = game.expected(state)
        if expected.phase != "move":
            return outcome(game_id, start, state), times
        moves = []
        for seat in expected.seats:
            view = game.view(state, seat)
            began = time.perf_counter()
            moves.append(bots[seat].choose(game, view, seat))
            spent = time.perf_counter() - began
            if seat == timed and len(game.legal_moves(view, seat)) > 1:
                times.append(spent)
        for move in moves:
            state = game.apply(state, move)


def outcome(game_id: str, start: Any, state: Any) -> Table:
    if game_id == "sixth-sense":
        from engine.sixth_sense import round_score

        r = state.round
        # a hit is a distance of 0, which the beginner table scores 6 (S-8.1)
        hits = tuple(round_score(p, t, beginner=True) == 6 for p, t in zip(r.predictions, r.tricks, strict=True))
        return Table(tuple(float(p) for p in r.points), hits, None)
    if game_id == "take6":
        return Table(tuple(float(p) for p in state.penalty), (), None)
    return Table(tuple(float(c - b) for c, b in zip(state.chips, start.chips, strict=True)), (), state.round.winner)


def run_round(job: tuple[int, int, float]) -> RoundResult:
    match_index, index, budget = job
    match = MATCHES[match_index]
    game_id = match.game
    players = PLAYERS[game_id]
    seat = index % players

    def table(kind: str, seed: int) -> dict[int, Bot]:  # fresh bots per table: their random numbers are their own
        bots = {s: build(game_id, match.others, 1000 * index + s, budget) for s in range(players)}
        bots[seat] = build(game_id, kind, seed, budget)
        return bots

    subject, times = play_round(game_id, index, table(match.subject, 7_000_000 + index), seat)
    references = tuple(
        play_round(game_id, index, table(kind, 1000 * index + seat), None)[0] for kind in match.references
    )
    return RoundResult(match_index, index, seat, subject, references, tuple(times))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Normal-approximation 95 % interval of a mean."""
    n = len(values)
    if n < 2:
        return (math.nan, math.nan)
    m = mean(values)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = 1.96 * sd / math.sqrt(n)
    return (m - half, m + half)


def proportion_ci(successes: int, n: int) -> tuple[float, float]:
    """Wilson 95 % interval of a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    z = 1.96
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def bootstrap_ci(rows: Sequence[Any], statistic: Any, seed: int = 1) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of statistic(rows), resampling whole rounds."""
    rng = random.Random(seed)
    n = len(rows)
    values = sorted(statistic([rows[rng.randrange(n)] for _ in range(n)]) for _ in range(BOOTSTRAP))
    return (values[int(0.025 * BOOTSTRAP)], values[int(0.975 * BOOTSTRAP) - 1])


def p95(times: Sequence[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)] if ordered else math.nan


def p95_ci(times: Sequence[float]) -> tuple[float, float]:
    """Distribution-free 95 % interval of the 95th percentile: order statistics around rank 0.95 n."""
    ordered = sorted(times)
    n = len(ordered)
    if not n:
        return (math.nan, math.nan)
    half = 1.96 * math.sqrt(n * 0.95 * 0.05)
    low = max(0, math.floor(0.95 * n - half) - 1)
    high = min(n - 1, math.ceil(0.95 * n + half) - 1)
    return (ordered[low], ordered[high])


def seat_ratio(rows: Sequence[RoundResult]) -> float:
    """The subject's bullheads over the mean of the other seats' at its tables."""
    mine = sum(r.subject.score[r.seat] for r in rows)
    others = sum((sum(r.subject.score) - r.subject.score[r.seat]) / (len(r.subject.score) - 1) for r in rows)
    return mine / others if others else math.nan


def share(rows: Sequence[RoundResult], which: int | None) -> tuple[int, int]:
    """(rounds won by the subject's seat, rounds): `which` None for the subject, else a reference."""
    won = sum((r.subject if which is None else r.references[which]).winner == r.seat for r in rows)
    return won, len(rows)


def report(match: Match, rows: list[RoundResult]) -> None:
    n = len(rows)
    g, s, o = match.game, match.subject, match.others
    seat_of = {"sixth-sense": 3, "take6": 3, "sixes": 4}[g]
    if g == "sixth-sense":
        hits = sum(r.subject.hits[r.seat] for r in rows)
        ref_hits = sum(r.references[0].hits[r.seat] for r in rows)
        ref = match.references[0]
        goal: dict[str, Any] = {}
        if s == "expert":
            goal = {"goal": ">= 0.55", "met": hits / n >= 0.55}
        else:
            low = proportion_ci(hits, n)[0]
            goal = {"goal": f"ci_low above {ref}'s hit rate", "met": low > ref_hits / n}
        emit(f"sixth-sense {s} hit rate vs {seat_of} {o}", hits / n, "rate", proportion_ci(hits, n), n, **goal)
        emit(f"sixth-sense {ref} hit rate vs {seat_of} {o} (same deals and seats)", ref_hits / n, "rate",
             proportion_ci(ref_hits, n), n)
        diff = [r.subject.score[r.seat] - r.references[0].score[r.seat] for r in rows]
        emit(f"sixth-sense {s} minus {ref} points per round (duplicate)", mean(diff), "points", mean_ci(diff), n)
    elif g == "take6":
        value = seat_ratio(rows)
        if s == "expert":
            emit("take6 expert/heuristic bullheads ratio", value, "ratio", bootstrap_ci(rows, seat_ratio), n,
                 goal="<= 0.70", met=value <= 0.70)
        else:
            ci = bootstrap_ci(rows, seat_ratio)
            emit(f"take6 {s}/{o} bullheads ratio", value, "ratio", ci, n, goal="ci_high < 1 (parity)",
                 met=ci[1] < 1)
        mine = [r.subject.score[r.seat] for r in rows]
        emit(f"take6 {s} mean bullheads per round vs {seat_of} {o}", mean(mine), "bullheads", mean_ci(mine), n)
        for i, ref in enumerate(match.references):
            theirs = [r.references[i].score[r.seat] for r in rows]
            emit(f"take6 {ref} mean bullheads per round vs {seat_of} {o} (same deals and seats)", mean(theirs),
                 "bullheads", mean_ci(theirs), n)
            diff = [a - b for a, b in zip(mine, theirs, strict=True)]
            ci = mean_ci(diff)
            extra: dict[str, Any] = {"goal": "ci_high < 0", "met": ci[1] < 0} if ref == "mcs-200" else {}
            emit(f"take6 {s} minus {ref} bullheads per round (duplicate)", mean(diff), "bullheads", ci, n, **extra)
    else:
        won, _ = share(rows, None)
        ci = proportion_ci(won, n)
        if s == "expert" and o == "heuristic":
            met = won / n >= 0.24 and ci[0] > 0.2 and n >= 5000
            goal = {"goal": ">= 0.24 and ci_low > 0.20, n >= 5000", "met": met}
        elif s == "expert":
            goal = {"goal": ">= 0.40", "met": won / n >= 0.40}
        else:
            goal = {"goal": "ci_low > 0.20 (parity)", "met": ci[0] > 0.2}
        emit(f"sixes {s} share of rounds won vs {seat_of} {o}", won / n, "share", ci, n, **goal)
        for i, ref in enumerate(match.references):
            ref_won, _ = share(rows, i)
            emit(f"sixes {ref} share of rounds won vs {seat_of} {o} (same deals and seats)", ref_won / n, "share",
                 proportion_ci(ref_won, n), n)
        chips = [r.subject.score[r.seat] for r in rows]
        ci = mean_ci(chips)
        emit(f"sixes {s} net chips per round vs {seat_of} {o}", mean(chips), "chips", ci, n,
             **({"goal": "ci_low > 0", "met": ci[0] > 0} if s == "expert" and o == "heuristic" else {}))
        for i, ref in enumerate(match.references):
            diff = [c - r.references[i].score[r.seat] for c, r in zip(chips, rows, strict=True)]
            emit(f"sixes {s} minus {ref} net chips per round (duplicate)", mean(diff), "chips", mean_ci(diff), n)


# --sixes-variants: (name, weights) with the weights of `lanplay.games.sixes.bot` (OWN_CARD, OWN_NEXT,
# GIFT_NEAR, GIFT_FAR, MOBILITY), then RESERVE (subtracted when the play leaves no own card playable)
# and DEPTH (an own card beyond counts that much less per step it lies further off).
SIXES_VARIANTS: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("gifts weigh double", (4, 1, 1.0, 0.2, 0.5, 0, 0)),
    ("gifts weigh half", (4, 1, 0.25, 0.05, 0.5, 0, 0)),
    ("gifts ignored", (4, 0, 0, 0, 0.5, 0, 0)),
    ("own cards weigh double", (8, 1, 0.5, 0.1, 0.5, 0, 0)),
    ("mobility double", (4, 1, 0.5, 0.1, 1.0, 0, 0)),
    ("mobility half", (4, 1, 0.5, 0.1, 0.25, 0, 0)),
    ("no bonus for an own next card", (4, 0, 0.5, 0.1, 0.5, 0, 0)),
    ("keep an own card playable (reserve 3)", (4, 1, 0.5, 0.1, 0.5, 3, 0)),
    ("near own cards first (depth 0.3)", (4, 1, 0.5, 0.1, 0.5, 0, 0.3)),
)


class SixesVariant:
    """A Sixes seat scoring each playable card like the heuristic, with other weights."""

    name = "variant"

    def __init__(self, weights: tuple[float, ...], seed: int) -> None:
        self.weights = weights
        self.rng = random.Random(seed)

    def choose(self, game: Any, view: Any, seat: int) -> Any:
        from engine.sixes import opened_by
        from lanplay.games.sixes.bot import _CHAINS

        own_card, own_next, gift_near, gift_far, mobility, reserve, depth = self.weights
        moves = game.legal_moves(view, seat)
        if len(moves) == 1:
            return moves[0]
        mine = frozenset(view.round.hands[seat])
        ends = view.round.playable
        best: list[Any] = []
        best_score = -math.inf
        for move in moves:
            rest = mine - {move.card}
            score = 0.0
            for chain in _CHAINS[move.card]:
                score += own_next if chain[0] in rest else 0.0
                seen = False
                for step, later in enumerate(chain, 1):
                    if later in rest:
                        score += own_card - depth * step
                        seen = True
                    else:
                        score -= gift_far if seen else gift_near
            after = (rest & ends) | (rest & opened_by(move.card))
            score += mobility * len(after) - (reserve if rest and not after else 0.0)
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return best[0] if len(best) == 1 else self.rng.choice(best)


def sixes_variants(rounds: int) -> None:
    """Each variant (and a random seat) against the heuristic in the same seat, duplicate."""
    for others in ("heuristic", "random"):
        def seat_bot(kind: str, weights: tuple[float, ...], seed: int) -> Bot:
            return SixesVariant(weights, seed) if kind == "variant" else make_bot("sixes", kind, seed)

        base: list[tuple[bool, float]] = []
        for index in range(rounds):
            base.append(_sixes_seat_result(index, others, seat_bot("heuristic", (), 7_000_000 + index)))
        won = sum(w for w, _ in base)
        emit(f"sixes heuristic share of rounds won vs 4 {others} (variants' reference)", won / rounds, "share",
             proportion_ci(won, rounds), rounds)
        for name, weights in (("random", ()), *SIXES_VARIANTS):
            kind = "random" if name == "random" else "variant"
            rows = [
                _sixes_seat_result(index, others, seat_bot(kind, weights, 7_000_000 + index))
                for index in range(rounds)
            ]
            wins = [float(w) - float(b[0]) for (w, _), b in zip(rows, base, strict=True)]
            chips = [c - b[1] for (_, c), b in zip(rows, base, strict=True)]
            emit(f"sixes {name} minus heuristic share of rounds won vs 4 {others} (duplicate)", mean(wins), "share",
                 mean_ci(wins), rounds, weights=list(weights))
            emit(f"sixes {name} minus heuristic net chips per round vs 4 {others} (duplicate)", mean(chips), "chips",
                 mean_ci(chips), rounds)


def _sixes_seat_result(index: int, others: str, bot: Bot) -> tuple[bool, float]:
    seat = index % PLAYERS["sixes"]
    bots = {s: make_bot("sixes", others, 1000 * index + s) for s in range(PLAYERS["sixes"])}
    bots[seat] = bot
    table, _ = play_round("sixes", index, bots, None)
    return table.winner == seat, table.score[seat]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds of each comparison (a smoke test)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of every comparison (default: each its own)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="expert seconds per decision")
    parser.add_argument("--workers", type=int, default=2, help="rounds played side by side (default 2)")
    parser.add_argument("--games", nargs="+", choices=GAMES, default=list(GAMES))
    parser.add_argument("--only", nargs="+", choices=("expert", "normal"), default=["expert", "normal"],
                        help="the levels measured (default both)")
    parser.add_argument("--against", nargs="+", choices=("heuristic", "random", "easy"),
                        default=["heuristic", "random", "easy"], help="the opponents (default all)")
    parser.add_argument("--first", type=int, default=0,
                        help="the first deal's index (default 0): a later run adds new deals to an earlier one's")
    parser.add_argument("--rows", metavar="PATH", default=None,
                        help="also write every round's result to PATH, one JSON line each (to pair two runs)")
    parser.add_argument("--sixes-variants", action="store_true",
                        help="only: how much the Sixes one-card policy matters (heuristic weight variants)")
    args = parser.parse_args(argv)
    if args.rounds is not None and args.rounds < 2:
        parser.error("--rounds must be at least 2 (a confidence interval needs them)")
    if not 0 < args.budget <= 60:
        parser.error("--budget must be more than 0 and at most 60 seconds")
    if args.first < 0:
        parser.error("--first must not be negative")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    started = time.perf_counter()
    if args.sixes_variants:
        sixes_variants(args.rounds or (600 if args.quick else 6000))
        emit("bench_bots wall time", time.perf_counter() - started, "s", None, args.rounds or 0)
        return 0
    chosen = [
        i for i, m in enumerate(MATCHES) if m.game in args.games and m.subject in args.only and m.others in args.against
    ]
    rounds = {i: args.rounds or (MATCHES[i].quick if args.quick else MATCHES[i].rounds) for i in chosen}
    jobs = [(i, index, args.budget) for i in chosen for index in range(args.first, args.first + rounds[i])]
    times: dict[str, list[float]] = {"expert": [], "normal": []}
    results: dict[int, list[RoundResult]] = {i: [] for i in chosen}
    with multiprocessing.Pool(args.workers) as pool:
        for result in pool.imap_unordered(run_round, jobs, chunksize=2):
            results[result.match].append(result)
            times[MATCHES[result.match].subject].extend(result.decision_times)
    for i in chosen:
        report(MATCHES[i], sorted(results[i], key=lambda r: r.index))
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as out:
            for i in chosen:
                for r in sorted(results[i], key=lambda r: r.index):
                    m = MATCHES[i]
                    row = {"game": m.game, "subject": m.subject, "others": m.others, "index": r.index, "seat": r.seat,
                           "subject_table": asdict(r.subject), "references": dict(
                               zip(m.references, (asdict(t) for t in r.references), strict=True))}
                    out.write(json.dumps(row) + "\n")
    for level, limit, budget in (("expert", 0.5, args.budget), ("normal", 0.1, NORMAL_BUDGET)):
        if times[level]:
            value = p95(times[level])
            emit(f"{level} decision time p95", value, "s", p95_ci(times[level]), len(times[level]),
                 budget=budget, workers=args.workers, goal=f"<= {limit}", met=value <= limit)
    emit("bench_bots wall time", time.perf_counter() - started, "s", None, len(jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
