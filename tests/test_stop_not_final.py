"""A stop is not final (`stopped -> ended`, I2): a seat that stopped with nobody convicted turns its
stop into the conviction another seat reached at the same instant, on evidence it checks without
playing on, and on nothing else (I1). Red teams 7 and 8 found the race (tests/test_redteam7.py,
tests/test_redteam8.py); these tests pin the transition itself, seat by seat.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from test_redteam7 import QUIET
from test_redteam10 import no_move
from test_redteam_equiv import run_table

from protocol.encoding import MAX_DEPTH
from protocol.errors import ProtocolError
from protocol.session import Blamed, Refused, Send, Stopped, TableSession
from protocol.signed import SignedMessage, sign_message
from protocol.table._state import MAX_SMALL_DEPTH
from protocol.testing import KEEP, AttackContext, Emit, Faults, Harness, Strategy, settled

ALICE, MALLORY, BOB = 0, 1, 2


def dealt(h: Harness) -> bool:
    return all(s.stage == "play" for s in h.sessions)


def table() -> Harness:
    h = Harness("take6", 3, seed=91)
    h.run(until=dealt)
    h._drain_in_flight(100_000)  # every message sent so far is in, so Mallory's next one is in order
    return h


def stopped_by_mallory(h: Harness) -> TableSession:
    """Mallory (a modified client) sends Alice alone a bare `stop` (I2: Alice stops, nobody convicted)."""
    mallory, alice = h.sessions[MALLORY], h.sessions[ALICE]
    stop = mallory._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    out = alice.receive(MALLORY, stop.to_wire(), h.now)
    assert alice.stage == "stopped" and any(isinstance(o, Stopped) for o in out), out
    return alice


def own_message(outputs: list[object], kind: str) -> bytes:
    sent = [o.data for o in outputs if isinstance(o, Send) and not o.forward and f'"kind":"{kind}"'.encode() in o.data]
    assert sent, f"no {kind} sent: {outputs}"
    return sent[-1]


def junk_from_mallory(h: Harness) -> SignedMessage:
    """A signed message of a kind the protocol has not: its signer's fault, provable anywhere (P-1.3)."""
    mallory = h.sessions[MALLORY]
    return sign_message(
        h.identities[MALLORY], h.settings.table, mallory.round_index, mallory.my_seq, mallory.my_prev, "junk", {"x": 1}
    )


def test_a_stopped_seat_turns_its_stop_into_the_conviction_another_seat_reached() -> None:
    h = table()
    alice = stopped_by_mallory(h)
    bob = h.sessions[BOB]
    convicted = bob.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now)  # P-1.3 at Bob
    assert [b.seat for b in convicted if isinstance(b, Blamed)] == [MALLORY]
    out = alice.receive(BOB, own_message(convicted, "blame"), h.now + 0.1)
    blames = [o for o in out if isinstance(o, Blamed)]
    assert [(b.seat, b.rule) for b in blames] == [(MALLORY, "P-1.3")], out
    assert settled(alice) == "ended" and alice.blame == blames[0]
    # Alice publishes the same checkable verdict, so a third seat still stopped reaches it from her too.
    assert own_message(out, "blame")


def test_a_fault_sent_to_a_stopped_seat_itself_convicts_there() -> None:
    h = table()
    alice = stopped_by_mallory(h)
    out = alice.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now + 0.1)
    assert [(b.seat, b.rule) for b in out if isinstance(b, Blamed)] == [(MALLORY, "P-1.3")], out
    assert settled(alice) == "ended"


def test_a_blame_that_needs_the_play_leaves_a_stopped_seat_stopped() -> None:
    """Bob's blame quotes one of Mallory's public messages (an honest one, here): judging it would
    need the play Alice stopped, so it proves nothing at her seat (I1) and she stays stopped."""
    h = table()
    alice = stopped_by_mallory(h)
    bob = h.sessions[BOB]
    quoted = bob.tracker.messages(h.settings.seats[MALLORY].peer_id)[-1]
    blame = bob._publish("blame", {"seat": MALLORY, "rule": "P-5.1", "message": "x", "evidence": [quoted.to_json()]})
    out = alice.receive(BOB, blame.to_wire(), h.now + 0.1)
    assert not [o for o in out if isinstance(o, Blamed)], out
    assert any(isinstance(o, Refused) for o in out), out
    assert alice.stage == "stopped" and alice.blame is None


def test_a_blame_a_stopped_seat_cannot_decide_yet_waits_there() -> None:
    """Bob's blame names a message of Mallory's that Alice does not hold yet (a reference, as a blame
    too big to quote whole carries). A stopped seat plays on in silence (`inbox._shadow`), so what the
    evidence needs may still come: the blame waits, read again whenever anything moved (one kept per
    blamer and seq, bounded by the blamer's quota: I6), rather than being refused at once as it was when a
    stopped seat played no further. A blamer's next blame does not displace it (red team 20 #2)."""
    h = table()
    alice, bob, mallory = stopped_by_mallory(h), h.sessions[BOB], h.sessions[MALLORY]
    author = mallory.identity.peer_id
    ahead = {"table": h.settings.table, "author": author, "seq": mallory.my_seq + 5, "digest": "ab" * 32}
    for n in range(2):
        blame = bob._publish("blame", {"seat": MALLORY, "rule": "P-5.1", "message": f"x{n}", "evidence": [ahead]})
        assert blame is not None
        out = alice.receive(BOB, blame.to_wire(), h.now + 0.1)
        assert not [o for o in out if isinstance(o, Blamed | Refused)], out
    assert alice.stage == "stopped" and {blamer for blamer, _ in alice.late_blames} == {BOB}
    kept = sorted(str(msg.body["message"]) for msg, _ in alice.late_blames.values())
    assert kept == ["x0", "x1"], "each waiting blame of a blamer is kept"


def test_claims_against_a_stopped_seat_itself_never_convert_its_stop() -> None:
    """Every other seat's claim that Alice withheld a step (two colluders at three seats): Alice knows
    she owes nothing once stopped, so the claims convict nobody at her seat (I1, P-5.3)."""
    h = table()
    alice = stopped_by_mallory(h)
    for seat in (MALLORY, BOB):
        claim = h.sessions[seat]._publish("timeout", {"seat": ALICE, "step": "0/play/0/3/3/x", "what": "x"})
        out = alice.receive(seat, claim.to_wire(), h.now + 0.1)
        assert not [o for o in out if isinstance(o, Blamed)], out
    out = alice.tick(h.now + 600)
    assert not [o for o in out if isinstance(o, Blamed)] and alice.stage == "stopped", out


def own_sends(outputs: list[object]) -> list[Send]:
    """What a seat sent of its own (not another seat's message passed on: gossip, P-1.3)."""
    return [o for o in outputs if isinstance(o, Send) and not o.forward]


def test_a_stopped_seat_makes_no_move_and_sends_nothing_of_its_own() -> None:
    """Alice and Mallory chose their cards before Alice stopped; Bob chooses after. Live, his choice,
    the last one in, would make Alice publish her reveal (T-3.1); stopped, she takes it in in silence
    and reveals nothing, so the turn waits for her at every seat: her own next step is never taken
    (I2, I5), and nothing of hers is signed or sent, however long she waits."""
    h = table()
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    assert alice.round is not None and set(alice.round.phase_commits) == {ALICE, MALLORY}
    stopped_by_mallory(h)
    assert alice.decision() == () and alice.waiting() is None
    seq, step = alice.my_seq, alice.round.step
    out: list[object] = []
    for msg in own_sends(bob.decide(bob.decision()[0], h.now)):
        out += alice.receive(BOB, msg.data, h.now + 0.1)
    assert not own_sends(out) and alice.my_seq == seq, out
    assert set(alice.round.phase_commits) == {ALICE, BOB, MALLORY}, "Bob's choice was judged and taken in"
    assert alice.stage == "stopped" and alice.round.step == step
    out = alice.tick(h.now + 600)
    assert not own_sends(out) and alice.stage == "stopped", out


def test_a_stopped_seat_convicts_a_fault_of_play_that_comes_after_its_stop() -> None:
    """Mallory stops Alice, then shows her choice openly (a move for a step that must be hidden,
    T-3.1, P-5.1). Live, Alice convicts on it; stopped, she judges it in silence as she would have
    live and turns her stop into the conviction (red team 10 #1: before, a stopped seat passed such a
    fault over while the seat it was raced to convicted)."""
    h = table()
    alice, mallory = stopped_by_mallory(h), h.sessions[MALLORY]
    assert alice.round is not None
    body = {"step": alice.round.step, "state": mallory.state_hash(), "move": {"seat": MALLORY, "card": 1}}
    shown = mallory._publish("move", body)
    assert shown is not None
    out = alice.receive(MALLORY, shown.to_wire(), h.now + 0.1)
    assert [(b.seat, b.rule) for b in out if isinstance(b, Blamed)] == [(MALLORY, "P-5.1")], out
    assert settled(alice) == "ended" and own_message(out, "blame")


def test_one_of_claims_never_convert_a_stop() -> None:
    """A step one of several seats owes is claimed naming nobody (P-5.3, X-2.2); who owes it follows
    from who may be stuck (blames waiting), which a stopped seat no longer follows (red team 9 #4: it
    convicted an honest seat whose excuse it had dropped). So every seat but Bob claiming such a step,
    Alice's claim made before she stopped, convicts nobody at her seat, however long it stands (I1)."""
    h = table()
    alice = h.sessions[ALICE]
    key = "0/play/0/3/3/one-of"
    alice._claim(None, key, "open")
    alice.drain()
    stopped_by_mallory(h)
    claim = h.sessions[MALLORY]._publish("timeout", {"seat": None, "step": key, "what": "open"})
    out = alice.receive(MALLORY, claim.to_wire(), h.now + 0.1)
    out += alice.tick(h.now + 600)
    assert set(alice.claims[(None, key)]) == {ALICE, MALLORY}, "both claims are in"
    assert not [o for o in out if isinstance(o, Blamed)] and alice.stage == "stopped", out


class ColludeAtTheFirstDecision(Strategy):
    """One of two colluders: at its first decision it sends `to` alone either a move that is no move
    (`stop=False`: a fault that shows only by playing on, P-5.1) or a bare `stop` (`stop=True`), and
    nothing more of its own. Both colluders decide at one instant (a hidden choice every seat owes)."""

    name = "collude-at-the-first-decision"

    def __init__(self, to: int, stop: bool) -> None:
        self.to = to
        self.stop = stop
        self.done = False

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        return () if msg.kind in QUIET or self.done else (KEEP,)

    def before(self, ctx: AttackContext, msg: SignedMessage, occurrence: int) -> None:
        if self.done or msg.kind not in ("move", "commit"):
            return
        self.done = True
        ctx.applied += 1
        if self.stop:
            ctx.publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []}, to=[self.to])
        else:
            ctx.publish("move", no_move(msg), to=[self.to])


# The colluding pair's version of red team 10 #1 (docs/PROTOCOL.md, Limits, until this fix): seat 3
# stops seat 0 with a `stop` of its own while seat 2 sends seat 1 alone a fault of play. The stop is in
# seat 3's chain and the fault in seat 2's, so no chain orders them; with 0-100 ms per delivery either
# may reach either honest seat first. A stopped seat judges play on in silence (`inbox._shadow`), so
# the fault convicts seat 2 at both honest seats, whichever came first (I1: nobody honest; I2). The
# simultaneous first step of both games (a hidden choice) makes the two colluders act at one instant.
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("game", ["sixth-sense", "take6"])
def test_a_colluders_stop_and_the_others_fault_of_play_end_every_seat_alike(game: str, seed: int) -> None:
    strategies = {2: ColludeAtTheFirstDecision(to=1, stop=False), 3: ColludeAtTheFirstDecision(to=0, stop=True)}
    table = run_table(game, 4, {}, seed, strategies, faults=Faults(max_delay=0.1, gossip_delay=0.05))
    assert table.applied >= 2, table.report()
    assert table.invariants() == [], table.report()
    assert [b.seat for s in (0, 1) for b in table.harness.blames(s)[:1]] == [2, 2], table.report()


def nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_a_stop_quoting_a_message_too_deep_to_quote_is_still_published() -> None:
    """Mallory's blame names no seat (so Alice stops) and carries evidence nested as deep as a message
    can be: quoted whole in Alice's stop it would nest past `MAX_DEPTH` and could not be signed. The
    stop is published all the same, naming the blame by reference: a seat that stopped or ended in
    silence would be waited for and claimed by the others (I1; red team 11 #1)."""
    h = table()
    alice, mallory = h.sessions[ALICE], h.sessions[MALLORY]
    deepest = None
    for depth in range(MAX_DEPTH, 0, -1):
        try:
            body = {"seat": "x", "rule": "P-5.2", "message": "m", "evidence": [nested(depth)]}
            deepest = mallory._publish("blame", body)
            break
        except ProtocolError:
            continue
    assert deepest is not None
    out = alice.receive(MALLORY, deepest.to_wire(), h.now + 0.1)
    assert alice.stage == "stopped" and any(isinstance(o, Stopped) for o in out), out
    stop = SignedMessage.from_wire(own_message(out, "stop"))
    assert stop.body["evidence"] == [
        {"table": h.settings.table, "author": deepest.author, "seq": deepest.seq, "digest": deepest.digest()}
    ]


def test_a_message_nested_deeper_than_any_honest_one_is_refused_not_blamed() -> None:
    """A move, key or pass nested deeper than `MAX_SMALL_DEPTH` could not be quoted whole in a blame
    (red team 11 #1): it is refused on receipt, not chained and not blamed, as one too big is (I1)."""
    h = table()
    alice, mallory = h.sessions[ALICE], h.sessions[MALLORY]
    assert alice.round is not None
    body = {"step": alice.round.step, "state": mallory.state_hash(), "move": nested(MAX_SMALL_DEPTH + 1)}
    deep = mallory._publish("move", body)
    assert deep is not None
    out = alice.receive(MALLORY, deep.to_wire(), h.now + 0.1)
    assert not [o for o in out if isinstance(o, Blamed)] and any(isinstance(o, Refused) for o in out), out
    assert alice.stage == "play" and not alice.last_input_kept


class WithholdThePeekAnswer(Strategy):
    """One of two colluders (6th Sense, S-6.4): it keeps back from the peeker the prediction it owes
    it, so the peeker handles none of its moves (the answer comes first, `play._on_move`)."""

    name = "withhold-the-peek-answer"

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "p.peek" and "peeker" not in ctx.shared and to in (0, 1):
            ctx.shared["peeker"] = to
            ctx.applied += 1
            return ()
        return (KEEP,)


class MoveTwiceBehindTheWithheldAnswer(Strategy):
    """The other colluder: its first move after that sends every seat the same move twice, a fault
    that shows only by playing on (P-5.1: a move for a step that is past)."""

    name = "move-twice-behind-the-withheld-answer"

    def __init__(self) -> None:
        self.done = False

    def outgoing(self, ctx: AttackContext, to: int, msg: SignedMessage, occurrence: int) -> Sequence[Emit]:
        if msg.kind == "move" and "peeker" in ctx.shared and not self.done:
            ctx.applied += to == ctx.n - 1 or (to == ctx.n - 2 and ctx.seat == ctx.n - 1)
            self.done = to == max(s for s in range(ctx.n) if s != ctx.seat)
            return (KEEP, KEEP)
        return (KEEP,)


# A peeker handles no move of the peeked seat before its answer (S-6.4), so while one colluder keeps the
# answer back, the peeker is behind the other seats, and a fault of play the other colluder makes there
# convicts at the seats that are not: the peeker's own claim for its answer is joined by nobody and it
# stops. A stopped seat judging on in silence makes no decision the answer is for, so it waits for none
# (`play._on_move`, `silent`) and convicts the double move too (I2). Seat 2 withholds, seat 3 (next in
# turn after it) moves twice before either honest seat's turn; seeds of 0-15 where an honest seat leads an
# 8 that seat 2 wins (seat 0 peeks in seed 4, seat 1 in 5, 10 and 12).
@pytest.mark.parametrize("seed", [4, 5, 10, 12])
def test_a_fault_of_play_behind_a_colluders_withheld_peek_answer_ends_every_seat_alike(seed: int) -> None:
    strategies = {2: WithholdThePeekAnswer(), 3: MoveTwiceBehindTheWithheldAnswer()}
    table = run_table("sixth-sense", 4, {}, seed, strategies, rounds=3)
    assert table.harness.attackers[2].shared.get("peeker") in (0, 1) and table.applied >= 2, table.report()
    assert table.invariants() == [], table.report()
    assert [b.seat for s in (0, 1) for b in table.harness.blames(s)[:1]] == [3, 3], table.report()


# --- the window after a stop (`blame._may_convict`, I2; red team 13) ------------------------------------


def test_a_proof_past_the_window_after_a_stop_convicts_nowhere_and_the_stop_stands() -> None:
    """Dolev-Strong: with no other seat's blame naming Mallory, a proof convicts a stopped seat only within
    one `convert_step` of its first knowing of a stop. Later, the other seats may have stopped for good
    (their links closed, `listen_until`), so the stop stands here too and the proof is shown once."""
    h = table()
    alice = stopped_by_mallory(h)
    step = h.settings.convert_step
    assert alice.listen_until() == pytest.approx(h.now + 2 * step)  # 3 seats: at most one other seat vouches
    out = alice.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now + step + 0.1)
    assert not [o for o in out if isinstance(o, Blamed)], out
    assert [o for o in out if isinstance(o, Refused) and "too late after the stop" in o.message], out
    assert alice.stage == "stopped" and alice.blame is None


def test_another_seats_blame_widens_the_window_by_one_step() -> None:
    """Bob convicted Mallory and published his blame: with one seat vouching, Alice converts up to two
    steps after the stop (Bob's blame is one delivery behind his own window), and not later."""
    for late, converts in ((1.5, True), (2.1, False)):
        h = table()
        alice = stopped_by_mallory(h)
        step = h.settings.convert_step
        bob = h.sessions[BOB]
        convicted = bob.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now)
        out = alice.receive(BOB, own_message(convicted, "blame"), h.now + late * step)
        blames = [(b.seat, b.rule) for b in out if isinstance(b, Blamed)]
        assert blames == ([(MALLORY, "P-1.3")] if converts else []), (late, out)
        assert settled(alice) == ("ended" if converts else "stopped")


def test_a_seat_whose_link_just_came_back_opens_no_window_of_its_own() -> None:
    """Red team 13 #4: a seat away while the stop went round hears of it late; a window of its own would
    open late, past the others'. A stop first heard of within a step of a link coming back opens none:
    Mallory's proof sent to Alice alone convicts nowhere, while Bob's blame (one seat vouching) still
    converts her stop."""
    h = table()
    alice = h.sessions[ALICE]
    alice.set_connected(BOB, False, h.now - 1.0)
    alice.set_connected(BOB, True, h.now - 0.5)
    stopped_by_mallory(h)
    out = alice.receive(MALLORY, junk_from_mallory(h).to_wire(), h.now + 0.1)
    assert not [o for o in out if isinstance(o, Blamed)] and alice.stage == "stopped", out
    convicted = h.sessions[BOB].receive(MALLORY, junk_from_mallory(h).to_wire(), h.now)
    out = alice.receive(BOB, own_message(convicted, "blame"), h.now + 0.2)
    assert [(b.seat, b.rule) for b in out if isinstance(b, Blamed)] == [(MALLORY, "P-1.3")], out


def test_a_stop_counts_from_when_it_is_chained_not_from_when_its_turn_comes() -> None:
    """Red team 13 #1: Mallory's `stop` follows a move of hers that Alice cannot take yet (a move of a
    later turn: her chain waits), so the stop is handled only much later; its window counts from when
    it came in, as at the seats that took it at once."""
    h = table()
    alice, mallory = h.sessions[ALICE], h.sessions[MALLORY]
    assert alice.round is not None
    later = {"step": alice.round.step + 5, "state": mallory.state_hash(), "move": {"seat": MALLORY, "card": 1}}
    ahead = mallory._publish("move", later)
    stop = mallory._publish("stop", {"rule": "P-5.3", "message": "stopped", "evidence": []})
    assert ahead is not None and stop is not None
    alice.receive(MALLORY, ahead.to_wire(), h.now)
    alice.receive(MALLORY, stop.to_wire(), h.now)
    assert alice.stop_known_at == h.now
    assert alice.listen_until() == pytest.approx(h.now + 2 * h.settings.convert_step)


def test_a_fork_is_passed_on_once() -> None:
    """Red team 13 #3: stopped seats past their windows declined a fork and passed its halves on, and
    each other seat did the same on getting them: without end. The halves go out once per fork (I6)."""
    h = table()
    alice = stopped_by_mallory(h)
    mallory = h.sessions[MALLORY]
    seq, prev = mallory.my_seq, mallory.my_prev
    halves = [
        sign_message(h.identities[MALLORY], h.settings.table, mallory.round_index, seq, prev, "timeout",
                     {"seat": BOB, "step": f"0/play/9/{n}", "what": "x"})
        for n in range(2)
    ]  # fmt: skip
    late = h.now + 10 * h.settings.convert_step
    sent = []
    for _ in range(3):
        for half in halves:
            sent += [o for o in alice.receive(MALLORY, half.to_wire(), late) if isinstance(o, Send)]
    forwarded = [o for o in sent if o.forward]
    assert len(forwarded) <= 3, forwarded  # the first half as taken in, then the two halves of the fork once
    assert alice.stage == "stopped"
