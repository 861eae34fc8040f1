"""How much better than the heuristic can one Sixes seat play? Two measurements behind issue 32's
goal (`sixes expert share of rounds won vs 4 heuristic` >= 0.24, parity 0.20).

* An **oracle**: the expert's search run on the true deal (it sees every hand), against 4
  heuristic bots, on bench_bots' deals and seats. What perfect information is worth.
* The **posterior advantage**: along all-heuristic rounds, at each decision of the rotating seat
  with more than one legal move, the win chance of every candidate under the expert's own worlds
  (its sampler: passes X-2.4 and the choices in the round's history), the round played on by the
  heuristic. The mean of (best candidate - the heuristic's move) bounds what any policy that sees
  only the seat's view gains a decision over the heuristic: the gain of a policy over the heuristic
  is the sum, over its decisions, of its moves' advantages under the heuristic's continuation
  (performance difference lemma), and no move's advantage exceeds the best one's. The best of
  noisy estimates is biased upwards, so the bound is generous. The `ceiling` line adds decisions
  per round x advantage to the heuristic's share.

Usage: .venv/bin/python scripts/bench_sixes_ceiling.py [--rounds 300] [--advantage-rounds 60] [--worlds 500]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench_bots import PLAYERS, emit, mean, mean_ci, proportion_ci

from engine.playout import shuffled_deal
from engine.sixes import SIXES, SixesState
from lanplay.bots.expert import ExpertBot, playout
from lanplay.games import make_bot, searcher_for
from lanplay.games.sixes.search import SixesSearcher

GAME = SIXES
SEATS = PLAYERS["sixes"]
ORACLE_WORLDS = 60  # playouts a decision for the oracle (its world is the truth: only the dice vary)


class WinSearcher(SixesSearcher):
    """The expert's searcher scoring a round 1 for going out first (X-2.5), 0 otherwise: the
    figures here are shares of rounds won (the expert itself scores chips)."""

    def utility(self, state: Any, seat: int) -> float:
        return 1.0 if state.round.winner == seat else 0.0


class TruthSearcher(WinSearcher):
    """The expert's searcher, handed the full state instead of a sampled world."""

    truth: SixesState | None = None

    def sample(self, view: Any, seat: int, rng: random.Random) -> Any:
        return self.truth


def deal(index: int) -> SixesState:
    rng = random.Random(f"bench-bots sixes {index}")  # bench_bots' deal of round `index`
    state = GAME.new_game(SEATS, GAME.options_from_json({}))
    return GAME.start_round(state, shuffled_deal(GAME, state, rng))


def oracle_round(index: int) -> tuple[bool, bool]:
    """(the oracle won, the heuristic in its seat won the same deal)."""
    seat = index % SEATS
    won = []
    for oracle in (True, False):
        bots: dict[int, Any] = {s: make_bot("sixes", "heuristic", 1000 * index + s) for s in range(SEATS)}
        searcher = TruthSearcher()
        if oracle:
            bots[seat] = ExpertBot(searcher_for("sixes"), seed=7_000_000 + index, samples=ORACLE_WORLDS)
            bots[seat].searcher = searcher
            searcher.confidence = 0.0  # the true world: the best mean is the best move
        state = deal(index)
        while GAME.expected(state).phase == "move":
            mover = GAME.expected(state).seats[0]
            searcher.truth = state
            state = GAME.apply(state, bots[mover].choose(GAME, GAME.view(state, mover), mover))
        assert state.round is not None
        won.append(state.round.winner == seat)
    return won[0], won[1]


def advantage_round(job: tuple[int, int]) -> list[float]:
    """Per decision of the rotating seat with a choice: best candidate's win chance minus the heuristic's."""
    index, worlds = job
    seat = index % SEATS
    bots = {s: make_bot("sixes", "heuristic", 1000 * index + s) for s in range(SEATS)}
    searcher = WinSearcher()
    rng = random.Random(f"ceiling {index}")
    out: list[float] = []
    state = deal(index)
    while GAME.expected(state).phase == "move":
        mover = GAME.expected(state).seats[0]
        view = GAME.view(state, mover)
        chosen = bots[mover].choose(GAME, view, mover)
        moves = GAME.legal_moves(view, mover)
        if mover == seat and len(moves) > 1:
            wins = [0.0] * len(moves)
            for _ in range(worlds):
                world = searcher.sample(view, seat, rng)
                dice = rng.getrandbits(64)
                for i, move in enumerate(moves):
                    wins[i] += playout(GAME, searcher, world, move, seat, random.Random(dice))
            out.append((max(wins) - wins[moves.index(chosen)]) / worlds)
        state = GAME.apply(state, chosen)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="oracle rounds (default 300)")
    parser.add_argument("--advantage-rounds", type=int, default=60, help="rounds searched per decision (default 60)")
    parser.add_argument("--worlds", type=int, default=500, help="worlds per decision for the advantage (default 500)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    if args.rounds < 2 or args.advantage_rounds < 2 or args.worlds < 1 or args.workers < 1:
        parser.error("--rounds and --advantage-rounds need at least 2, --worlds and --workers at least 1")
    started = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        results = pool.map(oracle_round, range(args.rounds))
        jobs = [(index, args.worlds) for index in range(args.advantage_rounds)]
        advantages = pool.map(advantage_round, jobs)
    n = len(results)
    oracle_won = sum(o for o, _ in results)
    heuristic_won = sum(h for _, h in results)
    emit("sixes oracle (sees every hand) share of rounds won vs 4 heuristic", oracle_won / n, "share",
         proportion_ci(oracle_won, n), n, worlds=ORACLE_WORLDS)
    emit("sixes heuristic share of rounds won vs 4 heuristic (same deals and seats)", heuristic_won / n, "share",
         proportion_ci(heuristic_won, n), n)
    per_decision = [a for round_ in advantages for a in round_]
    per_round = [float(len(round_)) for round_ in advantages]
    emit("sixes decisions with a choice per round", mean(per_round), "decisions", mean_ci(per_round),
         args.advantage_rounds)
    advantage = mean(per_decision)
    low, high = mean_ci(per_decision)
    emit("sixes posterior advantage of the best move over the heuristic's per decision", advantage, "win chance",
         (low, high), args.advantage_rounds, decisions=len(per_decision), worlds=args.worlds)
    decisions = mean(per_round)
    base = heuristic_won / n
    emit("sixes ceiling share of rounds won from the seat's view (heuristic + decisions x advantage)",
         base + decisions * advantage, "share", (base + decisions * low, base + decisions * high), n,
         goal=">= 0.24 (issue 32)", ci_of="the advantage only")
    emit("bench_sixes_ceiling wall time", time.perf_counter() - started, "s", None, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
