"""Red team 4: attacks on main's 89fde00 (issue 9).

Targets: the per-author round quota charged only for chained messages and the refusal of a message
more than one round ahead (`inbox._check_round`, `_over_quota`, `_charge`); a move for a past step
(`play._check_step`, `rd.step_hashes`).

Each test is an attack by a modified client at one seat, the real `TableSession` everywhere else,
checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats agree,
I3 nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an invariant is
a strict xfail: the comment above it says what breaks and where. An attack the code withstands is a
plain test that asserts the invariants on a table where the attack fired (`applied > 0`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_redteam_equiv import run_table

from protocol.signed import SignedMessage
from protocol.table._state import MAX_ROUND_MESSAGES
from protocol.testing import KEEP, AttackContext, Emit, Faults, Strategy

# Staggered delivery, so seats enter a round at different times and the attackers' ticks fall inside it.
STAGGERED = Faults(gossip_delay=0.05, max_delay=2.0)

# --- 1: the round quota -------------------------------------------------------------------------


class PastRoundLabels(Strategy):
    """In round 1 this seat signs, next in its chain, just under a round's share of well-formed
    timeout claims (a meta kind: handled whatever its round) labelled round 0, and as many again
    labelled round 1. `_check_round` refuses only messages ahead; the quota is kept per labelled
    round, so a label of any past round opens a fresh share."""

    name = "past-round-labels"

    def __init__(self) -> None:
        self.fired = False

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if self.fired or ctx.session.round_index != 1:
            return
        self.fired = True
        ctx.applied += 1
        share = MAX_ROUND_MESSAGES - 100  # room for this seat's own messages of the round
        for label in (0, 1):
            for i in range(share):
                ctx.publish("timeout", {"seat": None, "step": f"junk/{label}/{i}", "what": "x"}, round=label)


# Fixed: verdicts and claims share one quota a game (`inbox._quota_round`).
# BROKE, FIXED (I6, no seat wrongly blamed): the per-author cap of MAX_ROUND_MESSAGES a round is per
# *labelled* round (`usage[(author, msg.round, public)]`), and `_check_round` refuses only labels
# ahead of this seat's round. Meta kinds (timeout, blame, stop) are handled whatever their round, so
# in round r a seat gets r + 2 fresh shares (labels 0..r+1): here seats 0 and 1 each keep 3829 of
# seat 2's messages signed during round 1 (honest authors: 32), and it grows with every round played
# (8 MiB more per round). The junk claims then stop the table (the same P-5.3 stop at both: I2 holds).
def test_past_round_labels_do_not_open_a_fresh_quota() -> None:
    table = run_table(
        "take6", 3, {}, 0, {2: PastRoundLabels()}, faults=Faults(gossip_delay=0.05, max_delay=0.5), rounds=2
    )
    assert table.applied > 0
    kept = sum(1 for by in table.harness.sessions[0].claims.values() if 2 in by)
    assert kept <= MAX_ROUND_MESSAGES, f"seat 0 keeps {kept} claims of seat 2 signed in one round"
    # What is refused over the quota is then held out of order, within the held caps (MAX_HELD per
    # chain): bounded, though above the harness's own I6 yardstick (twice an honest author's count).
    assert [v for v in table.violations if v.invariant != "I6"] == [], table.report()


class TwoRoundsAheadAtTheSeam(Strategy):
    """When one honest seat has entered round r+1 and another is still in r, this seat signs next in
    its chain a well-formed timeout claim for round r+2: the seat ahead takes it (one round ahead),
    the seat behind refuses it (two ahead) and holds every later message of this seat for it."""

    name = "two-rounds-ahead-at-the-seam"

    def __init__(self) -> None:
        self.fired = False

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        rounds = [ctx.harness.sessions[s].round_index for s in ctx.honest()]
        if not self.fired and max(rounds) == min(rounds) + 1 and ctx.session.round_index == max(rounds):
            self.fired = True
            ctx.applied += 1
            body = {"seat": None, "step": "9/x/0/nothing", "what": "nothing"}
            ctx.publish("timeout", body, round=max(rounds) + 1)


# Withstood (I1, I2): the seats' chains of seat 2 split, yet every honest seat ends in the same
# P-5.3 stop with nobody convicted (8 tables tried, 4 where it fired: all the same stop).
def test_a_message_two_rounds_ahead_at_the_seam_ends_in_the_same_stop() -> None:
    table = run_table("take6", 3, {}, 0, {2: TwoRoundsAheadAtTheSeam()}, faults=STAGGERED, rounds=2)
    assert table.applied > 0
    assert table.invariants() == [], table.report()
    stops = [table.harness.sessions[s].stopped for s in (0, 1)]
    assert all(stop is not None and stop.rule == "P-5.3" for stop in stops)  # P-5.3


# --- 3: a move for a past step -------------------------------------------------------------------


class DoubleMove(Strategy):
    """This seat sends its second move twice, the copy signed again next in its chain: a second
    move for a step it has taken, built on the very state hash of that step."""

    name = "double-move"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "move" and occurrence == 1:
            ctx.applied += 1
            return (KEEP, KEEP)
        return (KEEP,)


# Withstood (I1, I2): every honest seat convicts the double mover by P-5.1 (6 tables, 6th Sense and Sixes).
@pytest.mark.parametrize("game", ["sixth-sense", "sixes"])
def test_a_second_move_for_a_taken_step_convicts_its_mover_everywhere(game: str) -> None:
    table = run_table(game, 3, {}, 0, {2: DoubleMove()})
    assert table.applied > 0
    assert table.invariants() == [], table.report()
    for seat in (0, 1):
        assert [(b.seat, b.rule) for b in table.harness.blames(seat)] == [(2, "P-5.1")]  # P-5.1
