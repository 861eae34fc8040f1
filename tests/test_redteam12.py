"""Red team 12: attacks on 083037a (a stopped seat's silent play deals without its own hand when a seat
kept its hand keys back, `deal._try_deal`, and waits for no peek answer, `play._on_move`; `clocks.tick`
pumps a stopped seat whose silent play is still in the deal).

Each test is an attack by a modified client at one or two seats, the real `TableSession` everywhere
else, checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats agree,
I3 nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an invariant is a
strict xfail, the comment "BROKE" above it saying what breaks, where in the code, a repro and a fix; an
attack the code withstands is a plain test that asserts the invariants on a table where the attack fired
(`applied > 0`), the comment above it saying what it tried.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

import nacl.bindings as sodium
import pytest
import test_redteam11 as redteam11
from test_redteam7 import QUIET
from test_redteam10 import no_move
from test_redteam_equiv import run_table
from test_stop_not_final import MoveTwiceBehindTheWithheldAnswer, WithholdThePeekAnswer

from engine.api import JSONObject
from engine.sixes import column_ends
from protocol.deck import SeatSecrets, ShuffleOutput, shuffle_pass
from protocol.session import Dealt, Output, Refused, TableSession
from protocol.signed import SignedMessage
from protocol.table import deal as deal_module
from protocol.table._round import BUILT_ON
from protocol.testing import KEEP, TICK, AttackContext, Emit, Faults, Harness, Strategy

# --- 1: a peeker stopped by its own clock never runs its silent play -------------------------------------


class Hush:
    """Mixed into a colluder: its session's verdicts stay home, and once the colluders' fault is out
    (`shared["done"]`) it sends nothing at all, not even another seat's message passed on (gossip)."""

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind in QUIET or ctx.shared.get("done"):
            return ()
        return super().outgoing(ctx, to, msg, occurrence)  # type: ignore[misc,no-any-return]

    def forward(self, ctx: AttackContext, to: int, data: bytes) -> bool:
        return not ctx.shared.get("done")


class HushedWithholdThePeekAnswer(Hush, WithholdThePeekAnswer):
    name = "hushed-withhold-the-peek-answer"


class HushedMoveTwice(Hush, MoveTwiceBehindTheWithheldAnswer):
    name = "hushed-move-twice"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        out = super().outgoing(ctx, to, msg, occurrence)
        if self.done:
            ctx.shared["done"] = True  # the double move went to every seat: from now on, silence
        return out


# BROKE (I2; 083037a's "waits for no peek answer" only runs when something else pumps the stopped seat):
# the case of tests/test_stop_not_final.py (`..._behind_a_colluders_withheld_peek_answer_...`), with the
# colluders silent once the double move is out (no claim, blame or stop of their sessions, no gossip).
# The live peeker handles no move of the peeked seat before its answer (S-6.4), so the double move sits in
# its queue; the other honest seat convicts seat 3 (P-5.1) and ends. The peeker's claim for the answer is
# joined by nobody (or the other seat's blame never becomes checkable there): it stops in `clocks._tick`
# (`_judge_claims` / `_judge_pending_blames` -> `_stop`) at its deadline. `tick` then pumps only a stopped
# seat whose shadow stage is "deal" (`if self.stage == "stopped" and self.shadow_stage == "deal"`), and no
# message ever comes again to run `_pump`: the queued moves are never handled in silence, and the peeker
# stays Stopped while the other honest seat convicted seat 3. In the existing test the colluders' own
# claims and gossip reach the peeker after its stop and pump it, which hides the gap.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam12.py -k stopped_by_its_own_clock --runxfail
# Fix: pump after any stop made by the clock, not only in the deal: in `ClockMixin.tick`, call
# `self._pump_safely()` whenever `self.stage == "stopped"` after `_tick()` (cheap: every queue head returns
# at once when nothing moved), or have `_stop` mark the seat for one pump at the end of the public call that
# stopped it. Checked here with that change patched in: both seeds (and 10, 12) end Blamed(3) at both honest seats.
# Fixed (lead): `tick` pumps a stopped seat whatever its shadow stage.
@pytest.mark.parametrize("seed", [4, 5])
def test_a_peeker_stopped_by_its_own_clock_judges_the_queued_fault(seed: int) -> None:
    strategies = {2: HushedWithholdThePeekAnswer(), 3: HushedMoveTwice()}
    table = run_table("sixth-sense", 4, {}, seed, strategies, rounds=3)
    assert table.harness.attackers[2].shared.get("peeker") in (0, 1) and table.applied >= 2, table.report()
    assert table.invariants() == [], table.report()
    assert [b.seat for s in (0, 1) for b in table.harness.blames(s)[:1]] == [3, 3], table.report()


# --- 2: Sixes, the one game where a seat without its hand follows several moves before its own ----------


class StarveThenUnplayable(Strategy):
    """The cheater keeps back its hand keys for `starved` (so that seat, stopped, deals without its hand),
    optionally stops every seat at its first move, and makes that move a card of its own hand, sent as
    position and keys, that the columns refuse (X-2.3; at the opening, any card but O6, X-2.2): a fault
    only the play's state shows, judged on public knowledge."""

    name = "starve-then-unplayable"

    def __init__(self, starved: int, stop: bool) -> None:
        self.starved = starved
        self.stop = stop
        self.fault: SignedMessage | None = None
        self.fired = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.fault is None and msg.kind == "move":
            self.fault = msg
            if self.stop:
                ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == self.starved:
            ctx.applied += 1
            return ()
        if msg is self.fault:
            body = self.unplayable(ctx, msg)
            self.fired |= body is not None
            return (KEEP,) if body is None else (Emit(body=body),)
        return () if msg.kind in QUIET and self.fault is not None else (KEEP,)

    def unplayable(self, ctx: AttackContext, msg: SignedMessage) -> JSONObject | None:
        session = ctx.session
        rd = session.round
        assert rd is not None
        ends = column_ends(session.state.round.columns)
        for position, card in sorted(rd.my_cards.items()):
            if position not in rd.used and card not in ends:
                return {**msg.body, "move": {"seat": ctx.seat, "play": session._wire_card(card)}}
        return None


# Withstood (I2, I1): Sixes is the game whose play goes seat by seat from the opening, so a
# seat without its hand follows the opening and every move up to its own turn. The starved seat, stopped
# (or, without the stop, live in the deal until it stops at its claim's or the blame's deadline, and the
# tick pumps it in the deal), deals without its hand (`deal._try_deal`), applies the opening and the moves
# before the fault on public knowledge (its own hand unknown: `_o6_candidates` counts it among the seats
# that may hold O6, `_take` checks nothing against it), and convicts the unplayable card as the seats with
# their hands do. Every honest seat Blamed(cheater, X-2.2/X-2.3). Probed over 3-4 seats x every starved
# seat x seeds 0-7 x stop or not (64 tables, no violation; these are four of them where the fault fires).
@pytest.mark.parametrize(
    ("players", "starved", "seed", "stop"), [(3, 0, 6, True), (4, 1, 5, False), (4, 2, 7, True), (4, 0, 1, False)]
)
def test_a_seat_without_its_hand_follows_sixes_play_to_the_fault(
    players: int, starved: int, seed: int, stop: bool
) -> None:
    cheater = players - 1
    attack = StarveThenUnplayable(starved, stop)
    table = run_table("sixes", players, {"chips": 1}, seed, {cheater: attack})
    assert attack.fired and table.applied > 0, table.report()
    assert table.invariants() == [], table.report()
    assert {b.seat for s in range(cheater) for b in table.harness.blames(s)[:1]} == {cheater}, table.report()
    assert all(table.harness.blames(s) for s in range(cheater)), table.report()


# --- 3: a deal that stopped for an audit, redone on every tick and every input at a stopped seat ---------


def fresh_point(label: str) -> bytes:
    """A valid point of no card that nobody knows a discrete log of."""
    return bytes(sodium.crypto_core_ed25519_from_uniform(hashlib.sha256(label.encode()).digest()))


class SumKeepingShuffle(TableSession):
    """The cheater's real session, whose shuffle pass moves a fresh point's worth from a stock position to
    the first table position: the points' sum, and with it the shuffle proof, are unchanged
    (tests/test_deck.py, `keep_sum_replace`), so the pass is accepted, and that table card opens to no
    card at every seat: certain cheating whose author only the audit can name (P-4.3, P-5.2)."""

    def _my_shuffle(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.shuffles[-1].points if rd.shuffles else rd.ctx.cards.points
        out = shuffle_pass(rd.ctx, self.me, deck, rd.my_shuffle, self.entropy)
        dealt = set(rd.table_positions) | {p for hand in rd.layout_hands for p in hand}
        table, stock = rd.table_positions[0], next(p for p in range(rd.ctx.size) if p not in dealt)
        delta = fresh_point("red team 12")
        points = list(out.points)
        points[table] = bytes(sodium.crypto_core_ed25519_add(points[table], delta))
        points[stock] = bytes(sodium.crypto_core_ed25519_sub(points[stock], delta))
        rd.my_shuffle_out = out = ShuffleOutput(out.seat, tuple(points), out.key_base, out.proof)
        self._publish("shuffle", {**out.to_json(), BUILT_ON: self._pass_input()})


class StopBeforeTheTableKeys(Strategy):
    """Just before its table keys (the last ones the deal needs) the cheater stops every seat with a bare
    `stop`, so every honest seat meets the card of no card in silence, where no secrets are published:
    the round's audit can never complete, the deal never happens, the seat stays in the deal."""

    name = "stop-before-the-table-keys"

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind == "open" and occurrence == 0:
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in (*QUIET, "abort", "secrets") else (KEEP,)


# BROKE (I6; new in 083037a): `inbox._shadow` now calls `deal._try_deal` before it handles each message of a
# stopped seat still in the deal, and `clocks.tick` pumps such a seat on every tick. When the deal stopped
# for an audit (a card opened to no card: `_open` -> `_abort_round` -> `_Aborted`, `rd.dealt` stays False)
# and the audit can never complete (every honest seat stopped before its secrets), `_try_deal` opens every
# hand card and table card again each time, up to the card of no card: one `open_position` (a scalar
# multiplication and a key check per seat) per card, 11 for a 3-seat 6 nimmt! deal (about 10 ms), on every
# tick (4 a second) for each message the cheater parks at the head of a queue (a move for a step of a play
# that never comes, a message of the next round), and on every duplicate it sends: a duplicate costs
# microseconds at a live seat, about 10 ms here. lanplay's runner keeps a stopped table for
# until `listen_until` only, which bounds the damage there, not in the session.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam12.py -k deal_that_stopped_for_an_audit --runxfail
# Fix: remember that the deal stopped for the audit (`_Round.deal_failed`, set where `_try_deal` catches
# `_Aborted`, and return early on it): the keys and points do not change, so neither does the answer. Not
# "return when `rd.aborting`": a live seat still deals after another seat's abort, and judges play on.
# Fixed (lead) as suggested: `_Round.deal_failed`.
def test_a_deal_that_stopped_for_an_audit_is_not_opened_again_and_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cheater = 2
    h = Harness(
        "take6",
        3,
        seed=5,
        step_timeout=20.0,
        turn_timeout=60.0,
        adversaries={cheater: StopBeforeTheTableKeys()},
        factories={cheater: SumKeepingShuffle},
        faults=Faults(gossip_delay=0.05),
    )
    h.run(max_deliveries=20_000, tick_every=TICK, max_time=30)
    alice = h.sessions[0]
    assert alice.round is not None and alice.round.aborting and not alice.round.dealt, alice.stage
    assert alice.stage == "stopped" and alice.shadow_stage == "deal"
    # One message parked at the head of the cheater's queue there: a move for a play that never comes.
    (parked,) = h.attackers[cheater].publish("move", {"step": 0, "state": "x", "move": {"seat": cheater}}, to=[0])
    h._drain_in_flight(h.delivered + 1000)
    assert list(alice.inbox[cheater]) == [parked]
    opened = [0]
    real = deal_module.open_position

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(deal_module, "open_position", counted)
    for i in range(100):
        alice.tick(h.now + TICK * (i + 1))
    for _ in range(100):
        alice.receive(cheater, parked.to_wire(), h.now + 30)  # a duplicate: refused at once at a live seat
    assert alice.stage == "stopped" and not alice.round.dealt
    # One deal's worth of cards at most: the answer cannot change.
    assert opened[0] <= len(alice.round.layout_hands[0]) + len(alice.round.table_positions), opened[0]


# --- fuzz: a random stop, withholding and fault at a random kind, with random network faults ----------

FUZZ_KINDS = ("shuffle", "lock", "open", "commit", "move", "reveal", "secrets", "p.keys", "p.peek")
FUZZ_GAMES: tuple[tuple[str, JSONObject], ...] = (
    ("sixth-sense", {}),
    ("sixth-sense", {"late_trump": True}),
    ("take6", {}),
    ("take6", {"logic": True}),
    ("sixes", {"chips": 1}),
)
FUZZ_FAULTS = (
    Faults(gossip_delay=0.05),
    Faults(max_delay=0.1, gossip_delay=0.05),
    Faults(max_delay=0.05, duplicate=0.1, drop=0.05, resend_after=1.0, gossip_delay=0.05),
)


class Fuzzed(Strategy):
    """A cheater drawn at random: a bare `stop` at its `nth` message of a kind (to every seat or one), a
    private message (hand keys, a peek answer) or its table keys withheld from one honest seat or sent late,
    a fault at its first decision before or after the stop (a move that is no move, a hidden choice shown,
    the move sent twice, a pass, another card of its hand), to every seat or one; its session's own
    verdicts kept home or not, and, once the fault is out, silence (no gossip either) or not."""

    name = "fuzzed"

    def __init__(self, rng: random.Random, honest: Sequence[int]) -> None:
        self.stop_kind = rng.choice((*FUZZ_KINDS, None))
        self.stop_nth = rng.choice((0, 0, 1, 2))
        self.stop_to = rng.choice((None, [rng.choice(honest)]))
        self.starve_kind = rng.choice(("p.keys", "p.keys", "p.peek", "p.peek", "open", None))
        self.starved = rng.choice(honest)
        self.starve_delay = rng.choice((None, None, 0.3, 5.0, 25.0))  # None: never sent
        self.fault = rng.choice(("no-move", "shown", "twice", "pass", "other-card", None))
        self.fault_to = rng.choice((None, [rng.choice(honest)]))
        self.after_stop = rng.random() < 0.7
        self.quiet = rng.random() < 0.6
        self.hush = rng.random() < 0.4
        self.stopped = self.faulted = False

    def describe(self) -> str:
        return (
            f"stop={self.stop_kind}#{self.stop_nth}->{self.stop_to} withhold={self.starve_kind}@{self.starved}"
            f"/{self.starve_delay} fault={self.fault}->{self.fault_to} after_stop={self.after_stop} "
            f"quiet={self.quiet} hush={self.hush}"
        )

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if not self.stopped and msg.kind == self.stop_kind and occurrence == self.stop_nth:
            self.stopped = True
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []}, to=self.stop_to)

    def forward(self, ctx: AttackContext, to: int, data: bytes) -> bool:
        return not (self.hush and self.faulted)

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if (self.quiet and msg.kind in QUIET) or (self.hush and self.faulted):
            return ()
        if msg.kind == self.starve_kind and to == self.starved:
            ctx.applied += 1
            return () if self.starve_delay is None else (Emit(delay=self.starve_delay),)
        due = self.fault is not None and not self.faulted and (self.stopped or not self.after_stop)
        if not due or msg.kind not in ("move", "commit") or (self.fault_to is not None and to not in self.fault_to):
            return (KEEP,)
        emits = self.faulty(ctx, msg)
        if emits is None:
            return (KEEP,)
        ctx.applied += 1
        self.faulted = self.fault_to is not None or to == max(s for s in range(ctx.n) if s != ctx.seat)
        return emits

    def faulty(self, ctx: AttackContext, msg: SignedMessage) -> Sequence[Emit] | None:
        step, state = msg.body["step"], msg.body["state"]
        if self.fault == "no-move":
            return (Emit(kind="move", body=no_move(msg)),)
        if self.fault == "shown":
            return (Emit(kind="move", body={"step": step, "state": state, "move": {"seat": ctx.seat, "card": 1}}),)
        if self.fault == "twice":
            return (KEEP, KEEP)
        if self.fault == "pass":
            return (Emit(kind="move", body={"step": step, "state": state, "move": {"seat": ctx.seat, "pass": True}}),)
        move = msg.body.get("move")
        rd = ctx.session.round
        if self.fault != "other-card" or not isinstance(move, dict) or rd is None:
            return None
        for name in ctx.session.game.hand_card_fields():
            wire = move.get(name)
            if isinstance(wire, dict) and "pos" in wire:
                others = [c for p, c in sorted(rd.my_cards.items()) if p not in rd.used and p != wire["pos"]]
                if others:
                    other = ctx.session._wire_card(others[0])
                    return (Emit(body={**msg.body, "move": {**move, name: other}}),)
        return None


def fuzz_table(seed: int) -> tuple[list[str], str]:
    """One fuzzed table: the invariants broken (I2 between two cheaters each convicted by some honest seat
    is left out: both verdicts are true), and a description to reproduce it."""
    rng = random.Random(f"red team 12/{seed}")
    game, options = rng.choice(FUZZ_GAMES)
    players = rng.choice((3, 4))
    cheaters = sorted(rng.sample(range(players), rng.choice((1, 1, 2))))
    honest = [s for s in range(players) if s not in cheaters]
    strategies = {s: Fuzzed(random.Random(f"red team 12/{seed}/{s}"), honest) for s in cheaters}
    table = run_table(game, players, options, seed, strategies, faults=rng.choice(FUZZ_FAULTS))
    h = table.harness
    broken = {v.invariant for v in table.violations if not (v.invariant == "I3" and v.seat in cheaters)}
    if broken == {"I2"} and all(h.blames(s) and h.blames(s)[0].seat in cheaters for s in honest):
        broken = set()
    internal = [e for s in honest for e in h.events[s] if isinstance(e, Refused) and "internal error" in e.message]
    if internal:
        broken.add("I3")
    what = " | ".join(f"{s}: {st.describe()}" for s, st in strategies.items())
    return sorted(broken), f"seed {seed}: {game} {options} {players} seats, {what}\n{table.report()}\n{internal[:2]}"


# Withstood (I1-I4, I6): run over seeds 0-510 while this was written (and about 700 tables of an earlier draft
# without the peek and silence draws): every game, 3-4 seats, one or two cheaters, no honest seat blamed, no
# exception or internal error at an honest seat, no disagreement but between two cheaters each caught by
# some honest seat. A cheater's own session can raise out of `decide` (EquivocationDetected: an honest
# seat's blame quoted a version of the cheater's message that the attacker's kit signed and its session
# never made, which the session then took into its own chain): an artefact of the kit, not counted. The
# random draws did not find #1 or #3 (both need a precise sequence); these seeds stay as a regression.
# Repro of any seed: `fuzz_table(seed)` (its report names the draws).
@pytest.mark.parametrize("seed", range(6))
def test_fuzzed_stops_withholdings_and_faults_keep_the_invariants(seed: int) -> None:
    broken, report = fuzz_table(seed)
    assert broken == [], report


# --- 4: hand keys that come after the deal without them ----------------------------------------------


class LateKeysAfterTheStop(Strategy):
    """The cheater keeps back its hand keys for `starved`, stops every seat at its first decision, then
    sends the keys a second later: the real ones (`bad=False`), or with two openings swapped (P-4.3: a key
    for another position), after the starved seat's silent play dealt without them (`deal._try_deal`)."""

    name = "late-keys-after-the-stop"

    def __init__(self, starved: int, bad: bool) -> None:
        self.starved = starved
        self.bad = bad
        self.held: SignedMessage | None = None
        self.sent = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind in ("move", "commit") and self.held is not None and not self.sent:
            self.sent = True
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
            body = dict(self.held.body)
            if self.bad:
                openings = list(body["openings"])  # type: ignore[arg-type]
                openings[0], openings[1] = openings[1], openings[0]
                body["openings"] = openings
            ctx.send_version(self.starved, self.held, Emit(body=body, delay=1.0))

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == self.starved and self.held is None:
            self.held = msg
            return ()
        return () if msg.kind in QUIET else (KEEP,)


# Withstood (I1, I2): the starved seat, stopped, deals without its hand on the next message it judges in
# silence; the keys then come into a round already dealt here (`_on_private_keys` checks them all the same,
# `_try_deal` does nothing more). Bad keys convict the cheater there (P-4.3, checked against its lock
# commitments, as a live seat would on receipt), and the other honest seat checks the quoted private
# message against the same commitments (`blame._private_fault`): both Blamed(cheater). Good keys change
# nothing: nobody blamed, both stopped. 6 nimmt! and 6th Sense (a hidden first step every seat owes),
# Sixes (play seat by seat).
@pytest.mark.parametrize("bad", [True, False])
@pytest.mark.parametrize(("game", "options"), [("take6", {}), ("sixth-sense", {}), ("sixes", {"chips": 1})])
def test_hand_keys_after_a_deal_without_them_convict_only_when_bad(game: str, options: JSONObject, bad: bool) -> None:
    attack = LateKeysAfterTheStop(starved=1, bad=bad)
    table = run_table(game, 3, options, 0, {2: attack})
    assert attack.sent and table.applied > 0, table.report()
    assert table.invariants() == [], table.report()
    sessions = table.harness.sessions
    starved = sessions[1].round
    assert starved is not None and starved.dealt and not starved.my_cards, table.report()
    assert (2 in starved.keys_from) is not bad, "good keys are taken in after the deal, bad ones convict"
    if bad:
        assert [b.seat for s in (0, 1) for b in table.harness.blames(s)[:1]] == [2, 2], table.report()
    else:
        assert all(sessions[s].stage == "stopped" and not table.harness.blames(s) for s in (0, 1)), table.report()


# --- 5: a stopped seat without its hand sends nothing of its own, and tells its player nothing ------------

DEALT_AFTER_STOP: list[tuple[int, str]] = []  # (seat, hand) of every deal a seat told after its stop


class Watched(redteam11.Watched):
    """Red team 11's watch on what a seat sends of its own after its stop, and every deal it tells then."""

    def drain(self) -> list[Output]:
        out = super().drain()
        if self._seen_stop:
            DEALT_AFTER_STOP.extend((self.me, str(o.hand)) for o in out if isinstance(o, Dealt))
        return out


class StarveStopPlayOn(Strategy):
    """The cheater keeps back its hand keys for seat 1 and stops every seat with a bare `stop` at its table
    keys, then plays its own session on as if nothing had happened (its session sees no stop, claim or
    blame, and sends none): seat 1's silent play deals without its hand, the other's with it, and both take
    the cheater's moves, reveals, peek answers and secrets in."""

    name = "starve-stop-play-on"

    def __init__(self) -> None:
        self.stopped = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if not self.stopped and msg.kind == "open":
            self.stopped = True
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == 1:
            return ()
        return () if msg.kind in QUIET else (KEEP,)

    def incoming(self, ctx: AttackContext, sender: int, msg: SignedMessage) -> bool:
        return msg.kind not in QUIET


# Withstood (I5): `_publish` makes no game message in silence and `_send_private` sends nothing; the deal
# without a hand (its hand shown as "?" in `Dealt`) is filtered out of what the player is told
# (`inbox._shadow` keeps only sends and verdicts). Neither honest seat sends anything of its own after its
# stop, nor tells a deal; both stay Stopped, nobody convicted. Three games.
@pytest.mark.parametrize(("game", "options"), [("take6", {}), ("sixth-sense", {}), ("sixes", {"chips": 1})])
def test_a_seat_without_its_hand_sends_and_tells_nothing_after_its_stop(game: str, options: JSONObject) -> None:
    redteam11.OWN_AFTER_STOP.clear()
    DEALT_AFTER_STOP.clear()
    table = run_table(game, 3, options, 1, {2: StarveStopPlayOn()}, factories={0: Watched, 1: Watched})
    assert table.applied > 0, table.report()
    assert table.invariants() == [], table.report()
    assert redteam11.OWN_AFTER_STOP == [] and DEALT_AFTER_STOP == [], (redteam11.OWN_AFTER_STOP, DEALT_AFTER_STOP)
    starved = table.harness.sessions[1]
    assert starved.stage == "stopped" and starved.round is not None and starved.round.dealt, table.report()
    assert not starved.round.my_cards, "dealt without its hand"


# --- 6: a peek answer that comes after the silent peeker moved on -------------------------------------


class SlowPeekAnswer(Strategy):
    """The peeked seat sends its peek answer `delay` seconds late (an honest seat on a slow link, or, with
    `bad`, one whose answer opens its commitment wrongly: P-4.5) and plays on at once; `shared["peek"]`
    tells its partner the answer is on its way."""

    name = "slow-peek-answer"

    def __init__(self, bad: bool, delay: float = 5.0) -> None:
        self.bad = bad
        self.delay = delay

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind != "p.peek" or "peek" in ctx.shared or to not in (0, 1):
            return (KEEP,)
        ctx.shared["peek"] = (to, msg.body["trick"])
        ctx.applied += 1
        body = dict(msg.body)
        if self.bad:
            body["nonce"] = "00" * (len(str(body["nonce"])) // 2)
        return (Emit(body=body, delay=self.delay),)


class StopAtThePeek(Strategy):
    """Its partner: the moment the answer is on its way it stops every seat with a bare `stop`."""

    name = "stop-at-the-peek"

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if "peek" in ctx.shared and "stopped" not in ctx.shared:
            ctx.shared["stopped"] = now
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in QUIET else (KEEP,)


# Withstood (I1, I2): the peeker is stopped before the answer comes, so its silent play applies the peeked
# seat's next moves without waiting (`play._on_move`, `silent`); the answer comes later, against a state a
# trick or more on. It is judged as on time: the peek stays granted for the whole round
# (`engine.sixth_sense.peeks_due`: every peek of the round), the commitment and keys are those of the
# round. Honest but slow: nobody blamed (the slow seat is counted as a cheater by `check_invariants` for
# its delay, so I1 is checked by hand), every honest seat Stopped. Bad, 2 s late: the peeker convicts it
# (P-4.5), the other honest seat checks the quoted answer (`_private_fault` -> `_check_peek`) and convicts
# too. Bad, 5 s late: past the peeker's window after the stop (`blame._may_convict`, one `convert_step`
# with no other seat's blame), so it convicts nowhere: every honest seat stays stopped (I2).
@pytest.mark.parametrize(("seed", "bad", "delay"), [(4, False, 5.0), (5, False, 5.0), (4, True, 2.0), (4, True, 5.0)])
def test_a_peek_answer_after_the_silent_peeker_moved_on_is_judged_as_on_time(
    seed: int, bad: bool, delay: float
) -> None:
    strategies = {2: SlowPeekAnswer(bad, delay), 3: StopAtThePeek()}
    table = run_table("sixth-sense", 4, {}, seed, strategies, rounds=3)
    h = table.harness
    assert "peek" in h.attackers[2].shared and "stopped" in h.attackers[3].shared, table.report()
    peeker, trick = h.attackers[2].shared["peek"]
    assert table.invariants() == [], table.report()
    assert h.game_over(peeker) is None
    firsts = [b.seat for s in (0, 1) for b in h.blames(s)[:1]]
    if bad and delay < h.settings.convert_step:
        assert firsts == [2, 2], table.report()
    else:
        assert firsts == [] and all(h.sessions[s].stage == "stopped" for s in (0, 1)), table.report()
        assert not any(b.seat == 2 for s in range(4) for b in h.blames(s)), table.report()
    # The peeker applied the peeked seat's lead of the next trick before the answer came (silent play),
    # and then took the answer in (good) or convicted on it (bad).
    session = h.sessions[peeker]
    r = session.state.round
    moved_on = r is not None and (r.trick or session.game.tricks_ended(session.state) > trick + 1)
    assert moved_on, table.report()
    assert session.round is not None and (bad or session.round.peeks_owed == {}), session.round.peeks_owed
    if bad and delay > h.settings.convert_step:
        assert any(isinstance(o, Refused) and "too late after the stop" in o.message for o in h.events[peeker])


# --- 7: an audit in silence at a seat that dealt without its hand -----------------------------------------


class AbortStarveStopThenSecrets(Strategy):
    """The cheater keeps back seat 1's hand keys and asks for an audit (`abort`) just before its table keys,
    so every honest seat publishes its secrets live; at the next tick it stops every seat, and a second
    later sends its own secrets: every honest seat's audit then runs in silence, seat 1's on a round it dealt
    without its hand. An audit that finds no fault convicts its requester (P-5.2)."""

    name = "abort-starve-stop-then-secrets"

    def __init__(self) -> None:
        self.asked = self.stopped = False

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind == "open" and not self.asked:
            self.asked = True
            ctx.applied += 1
            ctx.publish("abort", {"rule": "P-5.2", "reason": "audit", "step": 0, "move": None})

    def on_tick(self, ctx: AttackContext, now: float) -> None:
        if not self.asked or self.stopped:
            return
        self.stopped = True
        ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
        rd = ctx.session.round
        assert rd is not None
        mine = SeatSecrets(ctx.seat, rd.my_shuffle, rd.my_lock).to_json()
        ctx.publish("secrets", {"secrets": mine, "openings": {}}, delay=1.0)

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.keys" and to == 1:
            return ()
        return () if msg.kind in (*QUIET, "secrets", "abort") else (KEEP,)


# Withstood (I1, I2): the audit's full-knowledge replay needs nothing of a seat's own hand (`audit._audit`
# rebuilds the deck from every seat's secrets), so the seat that dealt without it in silence audits exactly
# as the seat with its hand: both find no fault and convict the requester, nobody honest.
@pytest.mark.parametrize(("game", "options"), [("take6", {}), ("sixes", {"chips": 1})])
def test_a_silent_audit_of_a_round_dealt_without_the_hand_convicts_alike(game: str, options: JSONObject) -> None:
    table = run_table(game, 3, options, 2, {2: AbortStarveStopThenSecrets()})
    assert table.applied > 0, table.report()
    assert table.invariants() == [], table.report()
    assert [(b.seat, b.rule) for s in (0, 1) for b in table.harness.blames(s)[:1]] == [(2, "P-5.2")] * 2, table.report()
    starved = table.harness.sessions[1].round
    assert starved is not None and starved.dealt and not starved.my_cards, "audited a round dealt without the hand"


class StopAndKeepTheTableKeys(Strategy):
    """The cheater stops every seat and never sends its table keys: every honest seat stays stopped in the
    deal (the tick pumps it, `clocks.tick`), and the cheater parks what it likes at the head of its queues."""

    name = "stop-and-keep-the-table-keys"

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if msg.kind == "open" and occurrence == 0:
            ctx.applied += 1
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in (*QUIET, "open") else (KEEP,)


# Withstood (I6), the common case of the tick pump: a stopped seat whose deal cannot happen (a seat's table
# keys missing) judges only the head of each queue on a tick, and each head returns at once (`_on_move` ->
# `_check_step`: not in play; a message of the next round: not yet); `_try_deal` returns before opening
# anything. 400 ticks with a message parked at the head of the cheater's queue: no card opened, two calls
# of `_shadow` (the parked head and nothing else) per tick at most.
def test_the_tick_pump_of_a_seat_stuck_in_the_deal_is_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    cheater = 2
    h = Harness("take6", 3, seed=5, step_timeout=20.0, adversaries={cheater: StopAndKeepTheTableKeys()})
    h.run(max_deliveries=20_000, tick_every=TICK, max_time=30)
    alice = h.sessions[0]
    assert alice.stage == "stopped" and alice.shadow_stage == "deal", alice.stage
    h.attackers[cheater].publish("move", {"step": 0, "state": "x", "move": {"seat": cheater}}, to=[0])
    h.attackers[cheater].publish("move", {"step": 0, "state": "x", "move": {"seat": cheater}}, round=1, to=[0])
    h._drain_in_flight(h.delivered + 1000)
    queued = [m.kind for m in alice.inbox[cheater]]
    assert queued[-2:] == ["move", "move"], queued
    opened, shadowed = [0], [0]
    real_open, real_shadow = deal_module.open_position, TableSession._shadow

    def counted_open(*args: Any, **kwargs: Any) -> Any:
        opened[0] += 1
        return real_open(*args, **kwargs)

    def counted_shadow(self: TableSession, *args: Any, **kwargs: Any) -> bool:
        shadowed[0] += 1
        return real_shadow(self, *args, **kwargs)

    monkeypatch.setattr(deal_module, "open_position", counted_open)
    monkeypatch.setattr(TableSession, "_shadow", counted_shadow)
    for i in range(400):
        alice.tick(h.now + TICK * (i + 1))
    assert alice.stage == "stopped" and [m.kind for m in alice.inbox[cheater]] == queued
    assert opened[0] == 0 and shadowed[0] <= 400, (opened, shadowed)
