"""Red team 16: attacks on 7ee1c6c, af8ec5a, 0bc8805 and 150b6e0 (a stop turns into a verdict only
within a Dolev-Strong window, `blame._may_convict`; a declined proof convicts when another seat's blame
vouches, `blame._convert_declined`; a fork half that is a signed blame vouches, `SessionCore._note_vouch`).

Four seats, driven seat by seat with explicit clocks as tests/test_redteam15.py: Alice (0) and Bob (2)
run the real `TableSession`; Mallory (1) and Carol (3) are modified clients that sign what they like
with their own keys (their sessions serve only to sign in chain order). Breaks found: #1 a vouch
chained past a fork counted at one honest seat only (I2); #2 two cheaters' faults, one to each honest
seat, with no stop (I2, the documented two-cheater limit in another shape); #3 a
restart lost a forked vouch (I2); #4 a restart replayed a different blame at the same seq and an honest
seat convicted the restarted one of equivocation (I1). All four are fixed and pass as the attacks.
`Journaled` keeps the journal `lanplay.runner.TableRunner` keeps.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from test_redteam14 import relay, shown_choice, verdicts
from test_redteam15 import blame_by, faults_past_every_own_window, gossip, named, stopped_table

from engine.api import JSONObject
from protocol.identity import Identity
from protocol.session import Blamed, Output, Send, Stopped, TableSession
from protocol.signed import SignedMessage, sign_message
from protocol.table.values import TableSettings
from protocol.testing import Harness

ALICE, MALLORY, BOB, CAROL = 0, 1, 2, 3


def signed_at(h: Harness, author: int, seq: int, prev: str, kind: str, body: JSONObject) -> SignedMessage:
    """`author`'s message at `seq` after `prev`, signed by hand (a fork, or a chain built on one)."""
    rnd = h.sessions[ALICE].round_index
    return sign_message(h.identities[author], h.settings.table, rnd, seq, prev, kind, body)


def stop_body(message: str) -> JSONObject:
    return {"rule": "P-5.3", "message": message, "evidence": []}


def vouch_body(accused: int | None) -> JSONObject:
    return {"seat": accused, "rule": "P-5.1", "message": "vouch", "evidence": []}


# FIXED (I2; was a strict xfail), red team 16 #1: a held blame now vouches (`inbox._hold`). The attack:
# the vouch two messages past a fork. 0bc8805 counts a blame that is a fork
# HALF; Carol forks one seq earlier still. At stop + step + 0.6 s Bob gets Y at seq s and Alice X (both
# stops); their gossip crosses, each sees the fork (declined: past every window for Carol). At stop + 2
# steps - 0.01 s Alice gets Z at s + 1 (linking to X) and the blame B at s + 2 naming Mallory: k = 1 at
# Alice, who converts ("declined": on her declined proof of Mallory's fault; "quoted": on the fault B
# quotes, sent to nobody). At Bob, Z does not link to Y (fork halves Y, Z: no blame among them) and B is
# held out of order for good (the gap at s + 1 never fills here), so Bob counts Alice's blame alone: k = 1,
# window stop + 2 steps, which Alice's blame misses by 0.08 s. Alice ends naming Mallory, Bob stays
# stopped. Where: `inbox._queue` / `_blame_equivocation` count a vouch only when chained here or a fork
# half; Alice's blame does not carry the vouches it counted (a Dolev-Strong value must carry its k
# signatures). Suggested fix: a blame converted by `_convert_declined`/within a widened window quotes (or
# references) the vouching blames, and a seat counts the vouches a checked blame carries.
@pytest.mark.parametrize("how", ["declined", "quoted"])
def test_a_vouch_chained_past_a_fork_counts_at_one_honest_seat_only(how: str) -> None:
    h, alice, bob = stopped_table()
    step = h.settings.convert_step
    evidence: list[JSONObject] = []
    if how == "declined":
        faults_past_every_own_window(h, (MALLORY,))
    else:
        evidence = [shown_choice(h, MALLORY).to_json()]  # sent to nobody: only quoted in Carol's blame
    carol = h.sessions[CAROL]
    s, prev = carol.my_seq, carol.my_prev
    y = signed_at(h, CAROL, s, prev, "stop", stop_body("for Bob"))
    x = signed_at(h, CAROL, s, prev, "stop", stop_body("for Alice"))
    z = signed_at(h, CAROL, s + 1, x.digest(), "stop", stop_body("after x"))
    b = signed_at(h, CAROL, s + 2, z.digest(), "blame", {**vouch_body(MALLORY), "evidence": evidence})
    fork_at = h.now + step + 0.6  # X to Alice and Y to Bob at once, then each one's gossip crosses
    out_bob = bob.receive(CAROL, y.to_wire(), fork_at)
    out_alice = alice.receive(CAROL, x.to_wire(), fork_at)
    out = gossip(out_bob, BOB, alice, fork_at + 0.1) + gossip(out_alice, ALICE, bob, fork_at + 0.1)
    assert not verdicts(out) and alice.stage == bob.stage == "stopped", out  # Carol's fork: declined at both
    assert CAROL in alice.declined and CAROL in bob.declined
    edge = h.now + 2 * step - 0.01
    out_alice = []
    for m in (z, b):
        out_alice += alice.receive(CAROL, m.to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY], out_alice  # the attack fired
    gossip(out_alice, ALICE, bob, edge + 0.09)
    assert CAROL in bob.blamers.get(MALLORY, set()), bob.blamers  # fixed: held at Bob, the vouch counts
    for s_ in (alice, bob):
        s_.tick(h.now + 3 * step + 1)  # past every listen_until
    assert named(alice)[1] in (None, MALLORY) and named(bob)[1] in (None, MALLORY)  # I1 holds
    assert named(alice) == named(bob), f"Alice {named(alice)}, Bob {named(bob)}"


def dealt_table() -> tuple[Harness, TableSession, TableSession]:
    h = Harness("take6", 4, seed=91)
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    return h, h.sessions[ALICE], h.sessions[BOB]


# FIXED (I2; was a strict xfail): every seat convicted by listen_until, the lowest shown
# (`blame.settle_verdict`). The attack, red team 16 #2, the documented two-cheater limit in a shape
# with no stop at all: Mallory
# shows her choice to Alice and Carol hers to Bob at the same instant. No stop is known anywhere, so
# `_may_convict` is True at once (`stop_known_at is None`), Alice convicts Mallory and Bob Carol, and
# each one's gossip of the other fault comes to a seat already `ended`. Both guilty (I1 holds), but the
# honest seats name different seats: no window is involved, a verdict is final on the first fault.
def test_two_cheaters_each_fault_to_one_honest_seat_without_any_stop() -> None:
    h, alice, bob = dealt_table()
    t = h.now
    to_alice, to_bob = shown_choice(h, MALLORY), shown_choice(h, CAROL)
    out_alice = alice.receive(MALLORY, to_alice.to_wire(), t)
    out_bob = bob.receive(CAROL, to_bob.to_wire(), t)
    assert verdicts(out_alice) == [MALLORY] and verdicts(out_bob) == [CAROL]  # the attack fired
    gossip(out_alice, ALICE, bob, t + 0.1)
    gossip(out_bob, BOB, alice, t + 0.1)
    assert named(alice)[1] in (MALLORY, CAROL) and named(bob)[1] in (MALLORY, CAROL)  # I1 holds
    assert named(alice) == named(bob), f"Alice {named(alice)}, Bob {named(bob)}"
    assert set(alice.convicted) == set(bob.convicted) == {MALLORY, CAROL}


# Held (idea 4, three seats): Mallory's stop goes to Alice alone at t (Bob knows of it by Alice's gossip
# at t + 0.1); her own fault, next in her chain, goes to Bob alone at t + step + 0.05: past Alice's own
# window, inside Bob's. Bob convicts; Alice declines the forwarded fault, then Bob's blame gives her
# k = 1 (window t + 2 steps) and she converts on the declined proof (`_convert_declined`).
def test_a_cheaters_stop_then_its_fault_to_another_seat_at_the_window_edge() -> None:
    h = Harness("take6", 3, seed=91)
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    alice, bob = h.sessions[0], h.sessions[2]
    t, step = h.now, h.settings.convert_step
    stop = h.sessions[1]._publish("stop", stop_body("stopped"))
    assert stop is not None
    out_alice = alice.receive(1, stop.to_wire(), t)
    out_bob = gossip(out_alice, 0, bob, t + 0.1)
    relay(out_bob, 2, alice, t + 0.2)
    assert alice.stop_known_at == t and bob.stop_known_at == t + 0.1
    fault = shown_choice(h, 1)
    out_bob = bob.receive(1, fault.to_wire(), t + step + 0.05)
    assert verdicts(out_bob) == [1], out_bob  # the attack fired: Bob convicts inside his own window
    out_alice = gossip(out_bob, 2, alice, t + step + 0.15)
    assert named(alice) == named(bob) == ("ended", 1), (named(alice), named(bob), out_alice)


# Held (idea 3): Mallory flaps her links to both honest seats just before her stop, so neither has a
# window of its own (`own_window` False: k = 0 proofs are declined everywhere); Carol's vouch for
# Mallory then goes to Alice alone. Alice (k = 1) converts on her declined proof and passes Carol's
# blame on with hers: Bob holds k = 2 and converts too. Without the vouch both stay stopped (agreed).
@pytest.mark.parametrize("vouch", [True, False])
def test_flapped_links_deny_both_windows_and_one_vouch_goes_to_one_seat(vouch: bool) -> None:
    h, alice, bob = dealt_table()
    t, step = h.now, h.settings.convert_step
    for s_ in (alice, bob):
        s_.set_connected(MALLORY, False, t - 0.3)
        s_.set_connected(MALLORY, True, t - 0.2)
    stop = h.sessions[MALLORY]._publish("stop", stop_body("stopped"))
    assert stop is not None
    out_alice = alice.receive(MALLORY, stop.to_wire(), t)
    out_bob = bob.receive(MALLORY, stop.to_wire(), t)
    relay(out_bob, BOB, alice, t + 0.1)
    relay(out_alice, ALICE, bob, t + 0.1)
    assert alice.stage == bob.stage == "stopped" and not alice.own_window and not bob.own_window
    fault = shown_choice(h, MALLORY)
    out = alice.receive(MALLORY, fault.to_wire(), t + 0.5) + bob.receive(MALLORY, fault.to_wire(), t + 0.5)
    assert not verdicts(out)  # declined at both: no window of their own
    if vouch:
        out_alice = alice.receive(CAROL, blame_by(h, CAROL, MALLORY).to_wire(), t + 2 * step - 0.01)
        assert verdicts(out_alice) == [MALLORY], out_alice
        gossip(out_alice, ALICE, bob, t + 2 * step + 0.09)
    for s_ in (alice, bob):
        s_.tick(t + 3 * step + 1)
    expected = ("ended", MALLORY) if vouch else ("stopped", None)
    assert named(alice) == named(bob) == expected, (named(alice), named(bob))


def internal_errors(outputs: Sequence[object]) -> list[object]:
    return [o for o in outputs if "internal error" in repr(o)]


# Held (I3, I6): blames and fork halves whose `seat` is no seat (True, False, -1, n, "1", a list, a big
# int, a dict) and forks at 150 seqs of Carol's chain, each half a blame, chained or not. Nothing
# raises out of `receive`/`tick`; `blamers` keys stay seats (or null) with at most n authors each;
# `forks_passed` grows by one per fork place, `declined_proofs` by one per accused; nothing converts.
def test_junk_vouches_and_many_forks_stay_bounded_and_raise_nothing() -> None:
    h, alice, bob = stopped_table()
    late = faults_past_every_own_window(h, (MALLORY,))
    n = len(h.settings.seats)
    out: list[Output] = []
    junk: list[object] = [True, False, -1, n, "1", [1], 1 << 52, {"seat": 1}]
    carol = h.sessions[CAROL]
    for i, accused in enumerate(junk * 20):
        body: JSONObject = {"seat": accused, "rule": "P-5.1", "message": "vouch", "evidence": []}
        chained = carol._publish("blame", body)
        assert chained is not None
        other = signed_at(h, CAROL, chained.seq, chained.prev, "blame", {**body, "message": f"fork {i}"})
        for s_ in (alice, bob):
            at = late + 0.01 * i
            out += s_.receive(CAROL, chained.to_wire(), at) + s_.receive(CAROL, other.to_wire(), at)
            out += s_.tick(at)
    assert not internal_errors(out), internal_errors(out)[:3]
    for s_ in (alice, bob):
        assert all(k is None or (type(k) is int and 0 <= k < n) for k in s_.blamers), s_.blamers
        assert all(len(v) <= n for v in s_.blamers.values())
        assert len(s_.forks_passed) == len(junk) * 20 and len(s_.declined_proofs) <= n
        assert s_.stage == "stopped", named(s_)  # no vouch names Mallory: nothing converts


SEED = 91


def _own_output(output: object) -> bool:
    """`lanplay.runner._own_output`: what the runner's journal must let a replay reach again."""
    return isinstance(output, Blamed | Stopped) or (isinstance(output, Send) and not output.forward)


class Journaled(TableSession):
    """The real session, with the journal `lanplay.runner.TableRunner` would write for it: a received
    message only when the session kept it or it led to a message or verdict of this seat's own
    (`TableRunner._receive`), a tick only when it had outputs (`TableRunner._tick`)."""

    def __init__(self, settings: TableSettings, identity: Identity, now: float, entropy: Any) -> None:
        super().__init__(settings, identity, now, entropy)
        self.journal: list[tuple[Any, ...]] = []

    def start(self, now: float) -> list[Output]:
        self.journal.append(("start", now))
        return super().start(now)

    def receive(self, sender: int | None, data: bytes, now: float) -> list[Output]:
        out = super().receive(sender, data, now)
        if self.last_input_kept or any(_own_output(o) for o in out):
            self.journal.append(("in", sender, data, now))
        return out

    def tick(self, now: float) -> list[Output]:
        out = super().tick(now)
        if out:
            self.journal.append(("tick", now))
        return out

    def decide(self, move: Any, now: float) -> list[Output]:
        out = super().decide(move, now)
        self.journal.append(("decide", self.game.move_to_json(move), now))
        return out

    def set_connected(self, seat: int, connected: bool, now: float) -> None:
        self.journal.append(("link", seat, connected, now))
        super().set_connected(seat, connected, now)


def journaled_stopped_table() -> tuple[Harness, TableSession, TableSession, float, float]:
    """A dealt 6 nimmt! table whose Bob keeps the runner's journal, stopped by Mallory's stop at t at
    both honest seats, each one's stop relayed to the other 0.1 s later: (h, Alice, Bob, t, step)."""
    h = Harness("take6", 4, seed=SEED, factories={BOB: Journaled})
    h.run(until=lambda h: all(s.stage == "play" for s in h.sessions))
    h._drain_in_flight(100_000)
    alice, bob = h.sessions[ALICE], h.sessions[BOB]
    t, step = h.now, h.settings.convert_step
    stop = h.sessions[MALLORY]._publish("stop", stop_body("stopped"))
    assert stop is not None
    out_alice, out_bob = alice.receive(MALLORY, stop.to_wire(), t), bob.receive(MALLORY, stop.to_wire(), t)
    relay(out_bob, BOB, alice, t + 0.1)
    relay(out_alice, ALICE, bob, t + 0.1)
    return h, alice, bob, t, step


def restarted(h: Harness, seat: int, now: float) -> TableSession:
    """`TableRunner._restore` then `resumed`: a fresh session fed the journal, as after a crash."""
    old = h.sessions[seat]
    assert isinstance(old, Journaled)
    fresh = TableSession(h.settings, h.identities[seat], 0.0, random.Random(SEED * 1000 + seat).randbytes)
    for item in old.journal:
        if item[0] == "start":
            fresh.start(item[1])
        elif item[0] == "in":
            fresh.receive(item[1], item[2], item[3])
        elif item[0] == "tick":
            fresh.tick(item[1])
        elif item[0] == "decide":
            fresh.decide(fresh.game.move_from_json(item[1]), item[2])
        else:
            fresh.set_connected(item[1], item[2], item[3])
    fresh.resumed(now)
    h.sessions[seat] = fresh
    return fresh


# FIXED (I2; was a strict xfail), red team 16 #3: a fork half's vouch now marks its input kept
# (`SessionCore._note_vouch`), so the runner journals it. The attack: a restart loses a forked vouch. Red
# team 15 #1's fork (Carol's blame naming
# Alice to Bob, the same seq naming Mallory to Alice at stop + 2 steps - 0.01 s; Alice converts on her
# declined proof); Bob takes Alice's gossip of Carol's version in (the fork half vouches: k = 2 at Bob,
# `_note_vouch`) and his process is killed before Alice's blame comes; it is restarted 0.01 s later. A fork
# half is never chained (`last_input_kept` False) and, at a seat stopped past its window, makes no message
# or verdict of its own, so `TableRunner._receive` does not journal it: the replay has k = 1 at Bob, and
# Alice's blame, 0.1 s after hers, misses his window (stop + 2 steps). Without the restart both convict.
@pytest.mark.parametrize(
    "restart",
    [
        pytest.param(
            True
        ),
        False,
    ],
)
def test_a_restart_between_a_forked_vouch_and_the_blame_it_backs(restart: bool) -> None:
    h, alice, bob, t, step = journaled_stopped_table()
    faults_past_every_own_window(h, (MALLORY,))
    to_bob = blame_by(h, CAROL, ALICE)
    to_alice = signed_at(h, CAROL, to_bob.seq, to_bob.prev, "blame", vouch_body(MALLORY))
    assert not verdicts(bob.receive(CAROL, to_bob.to_wire(), t + 2 * step - 0.5))
    edge = t + 2 * step - 0.01
    out_alice = alice.receive(CAROL, to_alice.to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY], out_alice
    forwarded = [o for o in out_alice if isinstance(o, Send) and o.forward]
    own = [o for o in out_alice if isinstance(o, Send) and not o.forward and o.to is None]
    for o in forwarded:
        bob.receive(ALICE, o.data, edge + 0.05)
    assert bob.blamers[MALLORY] == {CAROL}  # the fork half vouched
    if restart:
        before = bob
        bob = restarted(h, BOB, edge + 0.06)
        # The replay is faithful (its own chain, its stop, its declined proof) but for the fork half.
        assert (bob.stage, bob.my_seq, bob.stop_known_at) == (before.stage, before.my_seq, before.stop_known_at)
        assert set(bob.declined_proofs) >= {MALLORY} and bob.own_window == before.own_window
    for o in own:
        bob.receive(ALICE, o.data, edge + 0.1)
    for s_ in (alice, bob):
        s_.tick(t + 3 * step + 1)
    assert named(alice) == named(bob) == ("ended", MALLORY), f"Alice {named(alice)}, Bob {named(bob)}"


# Held (idea 1, the runner's order): `TableRunner` sends a seat's own messages at once and passes gossip
# on FORWARD_DELAY later, so in red team 15 #1's fork Alice's blame reaches Bob before her gossip of
# Carol's forked version: Bob reads the blame with k = 1, past that window ("proves nothing here"), then
# the fork half vouches (k = 2) and nothing is judged on it (`_blame_equivocation` pumps nothing). The
# runner's next tick pumps the stopped seat (`tick` -> `_pump` -> `_convert_declined`), within the k = 2
# window: Bob converts. Without ticks he would not.
def test_a_forked_vouch_after_the_blame_it_backs_converts_on_the_next_tick() -> None:
    h, alice, bob = stopped_table()
    step = h.settings.convert_step
    faults_past_every_own_window(h, (MALLORY,))
    to_bob = blame_by(h, CAROL, ALICE)
    to_alice = signed_at(h, CAROL, to_bob.seq, to_bob.prev, "blame", vouch_body(MALLORY))
    assert not verdicts(bob.receive(CAROL, to_bob.to_wire(), h.now + 2 * step - 0.5))
    edge = h.now + 2 * step - 0.01
    out_alice = alice.receive(CAROL, to_alice.to_wire(), edge)
    assert verdicts(out_alice) == [MALLORY], out_alice
    own = [o for o in out_alice if isinstance(o, Send) and not o.forward and o.to is None]
    forwarded = [o for o in out_alice if isinstance(o, Send) and o.forward]
    out_bob: list[Output] = []
    for o in own:
        out_bob += bob.receive(ALICE, o.data, edge + 0.05)
    for o in forwarded:
        out_bob += bob.receive(ALICE, o.data, edge + 0.1)
    assert bob.stage == "stopped" and bob.blamers[MALLORY] == {ALICE, CAROL}, out_bob  # the attack fired
    bob.tick(edge + 0.25)
    assert named(alice) == named(bob) == ("ended", MALLORY), f"Alice {named(alice)}, Bob {named(bob)}"


def junk(h: Harness, author: int) -> SignedMessage:
    """A signed message of a kind the protocol has not, next in `author`'s chain: proven once signed
    (P-1.3), refused before it is chained or forwarded, so it reaches only the seat it is sent to."""
    s = h.sessions[author]
    return sign_message(h.identities[author], h.settings.table, s.round_index, s.my_seq, s.my_prev, "junk", {"x": 1})


# FIXED (I1; was a strict xfail), red team 16 #4: a new declined proof marks its input kept
# (`blame._decline`), so the runner journals it. The attack: a restart makes an honest seat sign two
# blames at one seq, and an honest seat
# convicts it of equivocation. A proof declined at a stopped seat from an input that is never chained (a
# signed message of no kind) makes no message of this seat's own, so the runner does not journal it. Bob:
# Mallory's junk J (to Bob alone, past his window: `declined_proofs[MALLORY]` = J), then her fault of play
# F (to both, declined; Bob keeps J, the first). Carol forks (Y to Alice, X to Bob; #1) and, with Mallory,
# publishes a blame naming Bob (k = 2 for Bob at Alice: window stop + 3 steps). Carol's vouch V naming
# Mallory two past her fork reaches Bob at stop + 2 steps - 0.01: Bob converts on J and signs blame B1 at
# seq m; at Alice V is held (#1) and B1 misses her k = 1 window: she stays stopped. Bob's process is then
# killed and restarted: the replay has no J, converts on F at V and signs B2 (another rule, message and
# evidence) at the same seq m, which the runner sends again (`TableRunner._restore`'s sends). Alice holds B1
# at m: two messages of Bob at one seq, and her window for Bob is open (k = 2): she convicts honest Bob.
def test_a_restart_replays_a_different_blame_and_the_honest_seat_is_convicted() -> None:
    h, alice, bob, t, step = journaled_stopped_table()
    assert alice.stage == bob.stage == "stopped" and alice.stop_known_at == bob.stop_known_at == t
    # Mallory's junk to Bob alone, then her fault of play to both: both past every own window.
    assert not verdicts(bob.receive(MALLORY, junk(h, MALLORY).to_wire(), t + step + 0.1))
    fault = shown_choice(h, MALLORY)
    out = alice.receive(MALLORY, fault.to_wire(), t + step + 0.2) + bob.receive(
        MALLORY, fault.to_wire(), t + step + 0.2
    )
    assert not verdicts(out) and bob.declined_proofs[MALLORY][0] == "P-1.3", bob.declined_proofs
    # Carol's fork (Y to Alice, X to Bob at once; the gossip crosses).
    carol = h.sessions[CAROL]
    s, prev = carol.my_seq, carol.my_prev
    y = signed_at(h, CAROL, s, prev, "stop", stop_body("for Alice"))
    x = signed_at(h, CAROL, s, prev, "stop", stop_body("for Bob"))
    fork_at = t + step + 0.5
    out_alice, out_bob = alice.receive(CAROL, y.to_wire(), fork_at), bob.receive(CAROL, x.to_wire(), fork_at)
    gossip(out_alice, ALICE, bob, fork_at + 0.1)
    gossip(out_bob, BOB, alice, fork_at + 0.1)
    # Mallory and Carol vouch against Bob at Alice (Carol's on her Y branch).
    against_bob = [
        blame_by(h, MALLORY, BOB),
        signed_at(h, CAROL, s + 1, y.digest(), "blame", vouch_body(BOB)),
    ]
    for author, m in zip((MALLORY, CAROL), against_bob, strict=True):
        alice.receive(author, m.to_wire(), t + step + 1)
    assert alice.blamers[BOB] == {MALLORY, CAROL} and alice.stage == "stopped"
    # Carol's vouch for Mallory, past her fork on the X branch (two past the end of her Y branch at
    # Alice, so it is held there for good), to Bob at his k = 1 edge.
    z1 = signed_at(h, CAROL, s + 1, x.digest(), "stop", stop_body("after x"))
    z2 = signed_at(h, CAROL, s + 2, z1.digest(), "stop", stop_body("after z1"))
    v = signed_at(h, CAROL, s + 3, z2.digest(), "blame", vouch_body(MALLORY))
    edge = t + 2 * step - 0.01
    out_bob = []
    for m in (z1, z2, v):
        out_bob += bob.receive(CAROL, m.to_wire(), edge)
    assert verdicts(out_bob) == [MALLORY], out_bob  # Bob converts on J: blame B1
    b1 = next(m for m in bob.tracker.messages(h.settings.seats[BOB].peer_id) if m.kind == "blame")
    gossip(out_bob, BOB, alice, edge + 0.09)
    # B1 chained at Alice. Before the fix of #1 it came past her window and she stayed stopped; now
    # Carol's held vouch counts there too and she converts on Mallory as Bob did.
    assert alice.tracker.holds(b1) and set(alice.convicted) <= {MALLORY}, alice.convicted
    # Bob's process is killed and restarted; the runner sends what the replay signed.
    before = bob
    bob = restarted(h, BOB, edge + 0.5)
    b2 = next(m for m in bob.tracker.messages(h.settings.seats[BOB].peer_id) if m.kind == "blame")
    assert bob.my_seq == before.my_seq
    # Fixed: J left a declined proof, so the runner journals it (`last_input_kept`), and the replay
    # converts on J again, signing the very blame B1 that went out before.
    assert any(item[0] == "in" and b'"junk"' in item[2] for item in before.journal)  # type: ignore[attr-defined]
    assert b2.seq == b1.seq and b2.digest() == b1.digest(), "Bob signed two blames at one seq"
    alice.receive(BOB, b2.to_wire(), edge + 0.6)  # among the replay's sends, which the runner sends again
    assert named(alice)[1] != BOB, f"honest Bob convicted at Alice: {named(alice)}"  # I1


# Held (idea 2): a restart inside the window, when every input that moved the session was chained. Bob
# declines Mallory's fault of play (chained: journaled), his process is killed and restarted at once
# (`stop_known_at`, `own_window`, `declined_proofs` come back from the replay), then Carol's vouch for
# Mallory reaches both within k = 1: both convert.
def test_a_restart_inside_the_window_keeps_a_chained_declined_proof() -> None:
    h, alice, bob, t, step = journaled_stopped_table()
    faults_past_every_own_window(h, (MALLORY,))
    before = bob
    bob = restarted(h, BOB, t + step + 1)
    assert (bob.stop_known_at, bob.own_window) == (before.stop_known_at, before.own_window)
    assert set(bob.declined_proofs) == {MALLORY}
    vouch = blame_by(h, CAROL, MALLORY)
    out = alice.receive(CAROL, vouch.to_wire(), t + 2 * step - 0.2) + bob.receive(
        CAROL, vouch.to_wire(), t + 2 * step - 0.2
    )
    assert named(alice) == named(bob) == ("ended", MALLORY), (named(alice), named(bob), out)
