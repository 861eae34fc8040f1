"""Red team 25: 2b03feb (back from a network loss `resumed(now, paused)` moves every clock on by the whole
pause and keeps what each was forgiven, `_forgiven` / `_claim_forgiven` / `_blame_forgiven`; past the
reconnect limit, where that would have run a clock out, `clocks._note_away` sets `away_past_limit` and the
runner leaves the table unfinished, resumable; a settling keeps its end when links drop inside it).

Harnesses: tests/test_redteam19.py's four-seat table of real `TableRunner`s (`Sim`: mesh cut out, our
clock) with tests/test_redteam21.py's `FakeTime`; tests/test_redteam22.py's `withheld_secrets` (Mallory
withholds her round-0 secrets, the three others are modified clients), tests/test_redteam23.py's
`bob_owes_secrets` (Bob's secrets in flight to Alice) and tests/test_redteam24.py's `tick` / `paused_blink`.
`_on_status` is the mesh telling Alice's runner a link went down or came up, `_tick` her loop's tick.
Limits: step 20 s, reconnect 120 s; SETTLE_MIN 0.5 s, SETTLE_LIMIT 1.5 s, LINK_CHANGE_INTERVAL 1 s.

Breaks (each with a BROKE comment: what, where, a suggested fix; and FIXED: how):
1. (I1 with two colluders; I4 without: "a laptop with no link blames nobody", "a seat that comes back
   within the reconnect limit is not blamed for time away") the session is judged BEFORE `resumed` while
   a settling is pending. `TableRunner._judging_time`'s no-link branch returns `self.ever_linked` whether
   or not a settling is pending, so every tick with no link ticks the session; it is harmless only while
   the session knows every link is down (`NetworkLost`). A link drop told less than LINK_CHANGE_INTERVAL
   after the last one is held back (`_tell_links`), and then the session believes that link is up and
   judges time with clocks not yet moved by the pause (`disconnected`, `_first_due`, `claim_seen`).
   (a) network-back: Bob's link has been down 30 s (his secrets in flight), then Alice's Wi-Fi dies for
   95 s (under the reconnect limit); back, it blinks twice inside the settling (down, 0.2 s up, down
   again: the second drop held back): at that tick Alice claims Bob (away "125 s", 95 of them her own
   outage), before `resumed(now, 95 s)` would have cleared it. (b) resume: Alice's command was stopped
   for 200 s while Bob's secrets were in flight (or she gave up on the network and ran lanplay again);
   the replayed session's clocks are the old ones, and the same double blink of one link during the
   resume settling makes her claim Bob by the first-due bound (200 s > step + reconnect), before the full
   `resumed(now)` would have restarted it. Mallory and Carol copy the claim (its key is public): Bob is
   convicted. Steady links after the return (controls): no claim. Not new in 2b03feb (the no-link branch
   is older), but it defeats what this commit promises.
   Where: `TableRunner._judging_time` (no-link branch) with `_tell_links`' held-back drop.
   Fix: judge nothing while a settling is pending: in the no-link branch return False when
   `_settle_until is not None` (the give-up on the reconnect limit runs before the return either way;
   `NetworkLost` can come from the runner, or tick the session only once it is told every link down).
2. (I4: the table is resumable, "a full `resumed(now)` clears it"; the give-up comes only after the
   reconnect limit) a journal whose replay sets `away_past_limit` makes the resumed runner give up
   at once. The flag is set by whichever input crosses the limit; when that is a kept input (here a
   colluder's timeout claim arriving between two ticks: `_on_timeout` -> `_judge_claims` ->
   `_note_away`), the replay sets it too. On the next command the runner checks `away_past_limit` after
   every `_tick`, and (#1) the session is ticked with no link while the resume settling is pending,
   before `resumed(now)` clears the flag: one link up, then down 0.25 s later, and Alice gives up again
   ("no link for longer than the reconnect limit") 0.5 s after she resumed. Steady links (control):
   the settling ends, `resumed(now)` clears the flag, no give-up.
   Where: `TableRunner._tick` (reads the flag before any `resumed` in this process) with #1.
   Fix: #1's fix; and/or clear `away_past_limit` at the end of `_restore` (the replay judged nothing
   live), or have the runner act on it only once `resumed` has run in this process.
   FIXED (both, 2b03feb's successor): with no link the runner ticks the session only once it was told
   every link is down, and never while a settling waits for `resumed`; so the flag is read only after
   `resumed(now)` has cleared it.

Held (plain tests): a single cheater at a four-seat table (Mallory, blinking only her own link while she
withholds her secrets) never makes Alice give up (she always has a link: no `paused`, nothing forgiven)
and is claimed within step + reconnect limit; Alice's Wi-Fi out 100 s on each of two successive owed
steps (200 s forgiven in all, more than the reconnect limit) neither gives up nor claims: what was
forgiven goes with the step (`_touch_clocks`); a journal from a natural give-up (paused blinks, the limit
crossed at a tick, which is not journaled) replays without the flag, and the resumed runner settles, restarts
every clock and goes on (P-5.4: the replay differs from the live session only in that flag).
Noted, no test: `_owed_past_limit` reads this seat's own `_first_due`, which `resumed(paused)` now moves
with no cap and `_note_away` never checks for the seat's own steps (`owing == self.me` is skipped); with
a turn limit (the protocol's `turn_timeout`; `lanplay`'s runner sets none) a seat whose own outages
during its person's turn add up past step + reconnect limit answers "not yet" (None), and, once it moves,
"not owed" (a stop), while the others convict it by their first-due bound: an I2 split at the protocol
level (at 1db4cb5 the move was capped at the reconnect limit). Fixed with #1 (no test: the runner sets
no turn limit): `_owed_past_limit` reads its own step on wall time since it first became due (its
`_first_due` less what was forgiven), as the others' clocks do. Alice's give-up (she leaves unfinished,
her link down for good) makes the others claim her after the reconnect limit for any step she then owes:
the same as the existing give-up after one outage of 120 s, not new. At a table where the others are
honest and Mallory withholds, Alice's give-up leaves Bob's and Carol's claims of Mallory incomplete: they
stop (nobody convicted), the same at every seat once Alice resumes (she takes in their stop).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_redteam19 import ALICE, BOB, CAROL, MALLORY, Sim
from test_redteam21 import FakeTime, ids, replayed
from test_redteam22 import withheld_secrets
from test_redteam23 import bob_owes_secrets, outage
from test_redteam24 import now, paused_blink, tick

from lanplay import runner as runner_module
from lanplay.store import Journal
from protocol.session import TableSession

STEP, RECONNECT = 20.0, 120.0


def set_links(runner: Sim, t: Any, seats: tuple[int, ...], up: bool) -> None:
    pid = ids(t)
    for seat in seats:
        runner._on_status(pid[seat], up)
    runner._tick()


def double_blink(runner: Sim, t: Any, seats: tuple[int, ...]) -> None:
    """Inside a settling, the links in `seats` (every link this laptop has) drop, come back 0.2 s later
    and drop again 0.2 s after that: the second drop is held back (LINK_CHANGE_INTERVAL), then they
    come back."""
    set_links(runner, t, seats, False)
    t.advance(0.2)
    set_links(runner, t, seats, True)
    t.advance(0.2)
    set_links(runner, t, seats, False)
    t.advance(0.2)
    set_links(runner, t, seats, True)


def copy_claim(t: Any, at: Sim, claim: tuple[int | None, str], seats: tuple[int, ...]) -> None:
    """The colluders copy `at`'s claim (its step key is public) and send it to `at`."""
    for seat in seats:
        m = t.session(seat)
        msg = m._publish("timeout", {"seat": claim[0], "step": claim[1], "what": "x"})
        m.drain()
        assert msg is not None
        at._receive(seat, msg.to_wire())


def resumed_alice(t: Any) -> Sim:
    """Alice's command run again: a fresh runner replays her journal, then (as `TableRunner.run`)
    syncs the links (none is up yet) and settles before judging time."""
    old = t.runners[ALICE]
    old.journal.sync()
    fresh = Sim(t.plan, t.idents[ALICE], old.data_dir, t.clock)
    fresh.session = TableSession(fresh.settings, fresh.identity, t.clock.ms / 1000, fresh._entropy)
    records = Journal(fresh.journal.path).read()
    fresh._restore(records[1:])
    fresh._sync_links()
    fresh._settle("resumed from the journal")
    fresh._tick()  # no link yet: nothing judged (before the first link there is no network to have lost)
    t.runners[ALICE] = fresh
    return fresh


# --- 1. a held-back drop inside a settling: the session judged before `resumed` -----------------------


# BROKE (I1 with two colluders; I4 without: "a laptop with no link blames nobody", "a seat that comes back
# within the reconnect limit is not blamed for time away"). Bob (honest) had sent his round-0 secrets to
# Alice (in flight). "network-back": his link at Alice is down 30 s, then Alice's Wi-Fi dies for 95 s
# (under the reconnect limit: her runner does not give up). Back, it blinks inside the settling: every
# link down, 0.2 s up, down again 0.2 s later; that second drop is held back (`_tell_links`,
# LINK_CHANGE_INTERVAL), so her session believes Mallory and Carol linked, and `_judging_time`'s no-link
# branch returns `ever_linked` (True) although a settling is pending: the session is ticked before
# `resumed(now, paused)`, with Bob "gone" since 125 s, 95 of them her own outage, and Alice claims him.
# "resume": Alice's command was stopped 200 s with Bob's secrets in flight (or she had given up on the
# network and ran lanplay again); the replayed clocks are the old ones and the same double blink of her
# links in the resume settling makes her claim Bob by the first-due bound (200 s > step + reconnect),
# before the full `resumed(now)` restarts it. Mallory and Carol copy the claim: Bob is convicted (I1).
# "steady" controls: no claim. Not new in 2b03feb (the no-link branch is older). Where:
# `TableRunner._judging_time` (no-link branch, settling pending) with `_tell_links`' held-back drop.
# Suggested fix: judge nothing while a settling is pending (return False from the no-link branch when
# `_settle_until is not None`, after the reconnect-limit give-up check), or tick the session there only
# once it has been told every link is down.
# FIXED: both: with no link the session is ticked only once it was told every link is down, and never
# while a settling waits for `resumed` (`TableRunner._judging_time`).
@pytest.mark.parametrize(
    ("when", "links"),
    [
        pytest.param("network-back", "steady"),
        pytest.param("network-back", "double blink"),
        pytest.param("resume", "steady"),
        pytest.param("resume", "double blink"),
    ],
)
def test_a_blink_inside_a_settling_frames_no_seat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str, links: str
) -> None:
    t = bob_owes_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    others = (MALLORY, CAROL)
    if when == "network-back":
        alice = t.runners[ALICE]
        set_links(alice, t, (BOB,), False)
        for _ in range(120):  # 30 s: Bob's link down, under the reconnect limit
            tick(t, 0.25)
        set_links(alice, t, others, False)
        for _ in range(380):  # 95 s with no link at all: Alice's Wi-Fi
            tick(t, 0.25)
        assert not alice._gave_up and t.session(ALICE).my_claim is None
        set_links(alice, t, others, True)
        tick(t, 0.25)
        assert alice._settle_until is not None  # settling: Bob's link is still in the mesh's redial backoff
    else:
        t.advance(200)  # Alice's command did not run
        alice = resumed_alice(t)
        set_links(alice, t, others, True)
        tick(t, 0.25)
        assert alice._settle_until is not None  # Bob's link not up yet
    if links == "double blink":
        double_blink(alice, t, others)
    for _ in range(12):
        tick(t, 0.25)
    s = t.session(ALICE)
    assert alice._settle_until is None and not alice._gave_up
    claim = s.my_claim
    if claim is not None:
        copy_claim(t, alice, claim, others)
    assert claim is None and BOB not in s.convicted, (
        f"Alice ({when}, {links}) claimed seat {claim and claim[0]}, whose link was down for less than the "
        f"reconnect limit of her linked time; with the copies she is {s.stage}, convicting {sorted(s.convicted)}, "
        f"blamed: {s.blame and s.blame.seat}"
    )


# --- 2. a journal whose replay sets `away_past_limit` -------------------------------------------------


def gave_up_on_a_kept_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`withheld_secrets`: Alice claims Mallory (steady links), then the three modified clients blink
    every link (`paused_blink`) until just before Alice's claim would be past the reconnect limit in
    all; Bob's timeout claim (of anything) arrives 0.1 s after that instant, between two ticks: it is
    kept (journaled), and its `_judge_claims` sets `away_past_limit`; Alice's next tick gives up."""
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    while s.my_claim is None:
        tick(t, 0.25)
    claim = s.my_claim
    # `_note_away`: now - seen + forgiven - reconnect > deadline; seen - forgiven is the claim's first sight.
    crossing = s.claim_seen[claim] + RECONNECT + s._stop_deadline()
    while now(t) < crossing - 2:
        paused_blink(t)
    assert not alice._gave_up and not s.away_past_limit and s._claim_forgiven[claim] > RECONNECT
    t.advance(crossing - now(t) + 0.1)
    bob = t.session(BOB)
    msg = bob._publish("timeout", {"seat": MALLORY, "step": "0/audit/99/4/4/x", "what": "x"})
    bob.drain()
    assert msg is not None
    alice._receive(BOB, msg.to_wire())
    assert s.away_past_limit
    alice._tick()
    assert alice._gave_up and s.my_claim == claim and not s.convicted
    assert replayed(t, ALICE).away_past_limit  # the kept claim sets it again in the replay
    return t


# BROKE (I4: resumable; "a full `resumed(now)` clears it"; a give-up only after the reconnect limit with no
# link). Alice left the table unfinished (`away_past_limit`) on a kept input: Bob's timeout claim came
# between two ticks just past the limit (`gave_up_on_a_kept_input`), so her journal's replay sets the flag
# again. She runs lanplay again: one link comes up, and drops 0.25 s later (the flaky Wi-Fi that made her
# give up, or the colluders): the no-link branch of `_judging_time` ticks the session while the resume
# settling is pending (#1), before `resumed(now)` has cleared the flag, and `TableRunner._tick` reads the
# flag: she gives up again 0.5 s after resuming ("no link for longer than the reconnect limit"), and so on
# every resume while the links do that. "steady" (control, held): the settling ends, `resumed(now)` clears
# the flag, no give-up. Where: `TableRunner._tick` (acts on the flag before any `resumed` in this process)
# with `_judging_time` (#1). Suggested fix: #1's (no session tick while settling); and clear
# `away_past_limit` at the end of `_restore`, or act on it only once `resumed` ran in this process.
# FIXED: by #1's fix: the runner ticks the session (and reads the flag) only once a settling is over,
# after `resumed(now)` cleared it.
@pytest.mark.parametrize(
    "links",
    [
        pytest.param("steady"),
        pytest.param("one up, then down"),
    ],
)
def test_a_resume_after_a_give_up_does_not_give_up_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: str
) -> None:
    t = gave_up_on_a_kept_input(tmp_path, monkeypatch)
    t.advance(30)  # the person runs lanplay again
    alice = resumed_alice(t)
    s = t.session(ALICE)
    assert s.away_past_limit  # replayed; the full `resumed(now)` at the end of the settling clears it
    set_links(alice, t, (BOB,), True)
    tick(t, 0.25)
    if links == "steady":
        set_links(alice, t, (MALLORY, CAROL), True)
    else:
        set_links(alice, t, (BOB,), False)
    for _ in range(4):
        tick(t, 0.25)
    assert not alice._gave_up, (
        f"Alice gave up again within 1.25 s of resuming ({links}); away_past_limit={s.away_past_limit}, "
        f"settling pending: {alice._settle_until is not None}"
    )
    if links == "steady":
        assert not s.away_past_limit and not s._claim_forgiven and alice._settle_until is None


# --- holds ---------------------------------------------------------------------------------------------


# Held (I4, I1): a single cheater at a four-seat table cannot make Alice give up: Mallory withholds her
# secrets and blinks only her own link (down 10 ms, up, every 1.05 s); Alice always has a link to Bob and
# Carol, so no network-back, no `paused`, nothing forgiven; Mallory is claimed within step + reconnect.
def test_one_cheater_blinking_its_own_link_cannot_make_alice_give_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    start = now(t)
    while now(t) - start < 300 and s.my_claim is None and not alice._gave_up:
        set_links(alice, t, (MALLORY,), False)
        tick(t, 0.01)
        set_links(alice, t, (MALLORY,), True)
        for _ in range(4):
            tick(t, 0.25)
        t.advance(0.04)
        assert not s._forgiven and not s._claim_forgiven and not s.away_past_limit
    assert not alice._gave_up and s.my_claim is not None and s.my_claim[0] == MALLORY
    assert now(t) - start <= STEP + RECONNECT + 2


# Held (I4, I1): Alice's Wi-Fi out 100 s while Bob's secrets are owed, and again 100 s while the next owed
# step waits (200 s forgiven in all, past the reconnect limit): what was forgiven goes with its step
# (`_touch_clocks`), so Alice neither gives up nor claims anyone.
def test_outages_on_successive_steps_do_not_add_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = bob_owes_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    outage(t, 100, {MALLORY: 0, BOB: 0, CAROL: 0})
    for _ in range(8):
        tick(t, 0.25)
    first = dict(s._forgiven)
    assert first and all(90 <= f <= 101 for f in first.values())
    for data in t.held:  # Bob's secrets come in at every seat; nothing else is delivered yet
        for seat in (ALICE, MALLORY, CAROL):
            t.runners[seat]._receive(BOB, data)
    t.hold, t.held = None, []
    tick(t, 0.25)
    waiting = s.waiting()
    assert waiting is not None and ALICE not in waiting.seats and not (s._forgiven.keys() & first.keys())
    outage(t, 100, {MALLORY: 0, BOB: 0, CAROL: 0})
    for _ in range(16):
        tick(t, 0.25)
    assert s._forgiven and all(f <= 101 for f in s._forgiven.values())
    assert not alice._gave_up and not s.away_past_limit and s.my_claim is None
    t.route()  # and the table goes on
    assert s.my_claim is None and not s.convicted


# Held (P-5.4, I4): a natural give-up (paused blinks: the limit crossed at a tick with no output, not
# journaled) replays without the flag; the resumed runner settles with steady links, `resumed(now)`
# restarts every clock and clears what was forgiven, and it goes on.
def test_a_natural_give_up_replays_without_the_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    while s.my_claim is None and not alice._gave_up:
        paused_blink(t)
    assert alice._gave_up and s.away_past_limit and s.my_claim is None
    assert not replayed(t, ALICE).away_past_limit
    t.advance(30)
    alice = resumed_alice(t)
    set_links(alice, t, (MALLORY, BOB, CAROL), True)
    for _ in range(4):
        tick(t, 0.25)
    again = t.session(ALICE)
    assert alice._settle_until is None and not alice._gave_up and not again._forgiven
    assert all(now(t) - first <= 1.5 for first in again._first_due.values())
