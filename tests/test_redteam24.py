"""Red team 24: 1db4cb5 (back from a network loss `resumed(now, paused)` moves each step clock AND the
first-due bound `_first_due` on by the pause, the bound by at most the reconnect limit in all per owed
step, `_forgiven`; a full restart clears `_forgiven`; a second loss inside a network-back's settling keeps
the earliest loss start, `TableRunner._settle`), attacked by modified clients blinking every link to the
one honest seat (Alice), by Alice's own flaky Wi-Fi with two colluders, and by crafted journals.

Harnesses: tests/test_redteam22.py's `withheld_secrets` (Mallory withholds her secrets of round 0; Bob
and Carol are modified clients too) and tests/test_redteam23.py's `bob_owes_secrets` / `outage` (Bob's
secrets in flight when Alice's Wi-Fi dies), both on tests/test_redteam19.py's four-seat table of real
`TableRunner`s (`Sim`: mesh cut out, our clock) with tests/test_redteam21.py's `FakeTime` (the runner's
`time` on that clock): `_on_status` is the mesh telling Alice's runner a link went down or came up, and
`_tick` is her loop's tick (every 0.25 s, and at once after a status change). Limits: step 20 s,
reconnect 120 s; SETTLE_MIN 0.5 s, SETTLE_LIMIT 1.5 s, LINK_CHANGE_INTERVAL 1 s.

Breaks (each with a BROKE comment: what, where, a suggested fix; and FIXED: how):
1. (I4: every table ends; "a seat that keeps dropping and restoring its link cannot stall the table")
   a settling never ends if the links keep being lost and restored inside it. Every 1.05 s the three
   other seats drop every link to Alice at once (10 ms; each drop is told to the session, 1.05 s >
   LINK_CHANGE_INTERVAL, so the session says NetworkLost and judges nothing), and 0.25 s after they
   come back Mallory alone drops again (so the settling cannot end early: not every link is up). Each
   return calls `_settle`, which sets `_settle_until` afresh from now (`TableRunner._settle`), so the
   SETTLE_LIMIT never comes; `_judging_time` either settles or, with no link, ticks a session that knows
   every link is down. `resumed` is never called, nothing is judged, the runner never gives up (never
   120 s without a link): after 600 s (step + 2 x reconnect is 260 s) Alice still waits, no claim. Not
   new in 1db4cb5 (fails alike at 79cc14f: the settling was always re-armed), but it voids the bound
   this commit promises.
   Fix: a settling ends within SETTLE_LIMIT of its first start however the links go meanwhile (keep
   `_settle_until` when one is pending; the loss and its pause still count from the earliest start).
   FIXED: as suggested (`TableRunner._settle`).
2. (I4: "claims and unconfirmed blames end within three times the limit") the pause moves
   `claim_seen` (and `pending_blames`' times) on with no cap (`clocks.resumed`, the `paused` branch),
   unlike `_first_due`. Alice has claimed Mallory's withheld secrets; the colluders never copy the
   claim and blink every link so that nearly all time is "paused" (down 10 ms, back, the settling's
   0.5 s, then down again 1 ms after the tick that resumed, which they can cause by sending anything):
   the claim is as fresh after 400 s as when it was made, Alice neither convicts nor stops, and the
   table never ends. Steady links (control, held): stopped 44 s after the claim; the rt22 pattern with
   0.25 s linked per blink: stopped after 141 s. Not new in 1db4cb5 (fails alike at 79cc14f: a056238
   shifted `claim_seen` uncapped); with #1 fixed it is what blinking peers fall back on.
   Fix: cap the forgiveness of `claim_seen` and of each pending blame the same way as `_first_due`
   (at most the reconnect limit in all per claim / blame), or judge the stop deadline on a second
   clock that pauses only up to that cap.
   FIXED (with #3): every clock forgives every pause, and what each was forgiven is kept
   (`_forgiven`, `_claim_forgiven`, `_blame_forgiven`); once that passes the reconnect limit and the
   time past it would have run the clock out, the session says `away_past_limit` and the runner
   leaves the table unfinished naming nobody (`clocks._note_away`), within 3 limits + the reconnect
   limit of wall time for a claim or blame, the limit + 2 x reconnect limit for a withheld step.
3. (I1 with two colluders; I4 without them: "a laptop with no link blames nobody") after the cap is
   spent, this laptop's own outages count against the bound again. Bob (honest) had sent his secrets
   when Alice's Wi-Fi died; it dies three times for 100 s (each under the reconnect limit: her runner
   never gives up), back for 3 s between with Bob's link still in the mesh's redial backoff (BACKOFF_MAX
   5 s) and back 6.25 s after hers at the end. Forgiven: 120 s of the 306 s with no link; at the first
   tick after her third settling Alice claims Bob (first-due bound: 192 s > step + reconnect), before his
   link is even back; Mallory and Carol copy the claim and Alice convicts Bob of withholding. No hostile
   network is needed: a flaky Wi-Fi and the mesh's own backoff. Two outages (control): no claim (at
   79cc14f two already claimed: red team 23 #1, which 1db4cb5 fixed up to the cap). Fix:
   when the bound runs out only because of pauses past the cap (it would not have, all pauses forgiven),
   do not name the seat: stop the table with nobody convicted (or leave it unfinished, as a network
   loss past the reconnect limit does); blinking peers then still end the table within the bound.
   FIXED: the second way, as #2: a claim is made on linked time only; the third outage makes Alice
   leave the table unfinished, naming nobody.

Held (plain tests): the three others blinking every link together every 1.05 s (every drop told) get
Mallory claimed within step + 2 x reconnect limit of wall time, and the near-100 %-paused pattern of #2
before the claim ends the table as well (at 1db4cb5 by the capped `_first_due`, since the fix of #3 by
Alice leaving unfinished at 260 s + the settling); a claim under steady links stops 2..3 limits later;
Alice's network twice out 100 s (Bob back 6.25 s late) claims nobody; a journal whose every `resumed`
record is edited to a huge `paused` (INT_MAX ms) replays, twice alike, into a session whose clocks are
not in the future (I3, P-5.4); a suspend after more than the reconnect limit was forgiven clears
`_forgiven` and restarts the bound, and replays into the same session (P-5.4).
Noted, no test: `_owed_past_limit` (a seat judging claims against itself) reads its own `_first_due`,
which a network-back now moves on by up to the reconnect limit; that only turns "true" into "wait and
see" (None), never into "false" (a dispute that stops the table), and the claims against it come from
clocks the others restarted when its link came back (no earlier than its own moved bound, give or take
the settling), so it still agrees past its limit; the stop deadline it falls back on is #2's clock.
A 2-seat table's one cheater cannot run #1's cycle as such (its mid-settling drop is every link; not
run); a 3-seat table's two colluders can (the same runner code; not run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_redteam19 import ALICE, BOB, CAROL, MALLORY
from test_redteam21 import FakeTime, ids, replayed, same_session
from test_redteam22 import withheld_secrets
from test_redteam23 import bob_owes_secrets, outage

from lanplay import runner as runner_module
from lanplay.store import Journal
from protocol.encoding import INT_MAX

CHEATERS = (MALLORY, BOB, CAROL)
STEP, RECONNECT = 20.0, 120.0
BOUND = STEP + 2 * RECONNECT  # what 1db4cb5 promises for a withheld step whatever the blinks


def now(t: Any) -> float:
    return t.clock.ms / 1000


def tick(t: Any, seconds: float) -> None:
    t.advance(seconds)
    t.runners[ALICE]._tick()


def links(t: Any, seats: tuple[int, ...], up: bool) -> None:
    """The mesh tells Alice's runner these links went down / came up; her loop wakes and ticks."""
    alice = t.runners[ALICE]
    pid = ids(t)
    for seat in seats:
        alice._on_status(pid[seat], up)
    alice._tick()


def staggered_blink(t: Any) -> float:
    """#1's cycle (1.05 s): every link down 10 ms, back; 0.25 s later Mallory's alone drops, until the
    next cycle drops the others."""
    links(t, (BOB, CAROL) if MALLORY not in t.runners[ALICE].connected else CHEATERS, False)
    tick(t, 0.01)
    links(t, CHEATERS, True)
    tick(t, 0.25)
    links(t, (MALLORY,), False)
    tick(t, 0.25)
    tick(t, 0.25)
    tick(t, 0.25)
    t.advance(0.04)
    return 1.05


def together_blink(t: Any) -> float:
    """Control for #1: every link down 10 ms and back every 1.05 s, nothing dropped inside a settling."""
    links(t, CHEATERS, False)
    tick(t, 0.01)
    links(t, CHEATERS, True)
    for _ in range(4):
        tick(t, 0.25)
    t.advance(0.04)
    return 1.05


def paused_blink(t: Any, linked: float = 0.001) -> float:
    """#2's cycle: every link down 10 ms, back, the settling (0.5 s: every link up), then down again
    `linked` after the tick that resumed the clocks: nearly all of the time is "paused"."""
    links(t, CHEATERS, False)
    tick(t, 0.01)
    links(t, CHEATERS, True)
    tick(t, 0.25)
    tick(t, 0.25)
    assert t.runners[ALICE]._settle_until is None  # the settling ended: `resumed(now, paused)` ran
    t.advance(linked)
    return 0.51 + linked


def steady(t: Any) -> float:
    tick(t, 0.25)
    return 0.25


# --- 1. a settling re-armed by every loss inside it -----------------------------------------------


# BROKE (I4: every table ends; a seat that keeps dropping and restoring its link cannot stall the
# table). Mallory withholds her secrets; she, Bob and Carol (modified clients) run `staggered_blink`:
# every 1.05 s all three links to Alice drop for 10 ms (each drop told to the session: NetworkLost, it
# judges nothing), and 0.25 s after they are back Mallory's drops alone, so the settling cannot end
# early (not every link up). Each return is a network-back: `TableRunner._settle` sets `_settle_until`
# = now + SETTLE_LIMIT afresh, so the settling's limit is never reached and `session.resumed` is never
# called; no tick is ever judged, the `_first_due` bound included, and the runner never gives up (never
# 120 s without a link). After 600 s (the promised bound is 260 s) Alice has claimed nobody and still
# waits. Not new in 1db4cb5 (fails alike at 79cc14f: the settling was always re-armed at each
# network-back), but it voids the bound this commit promises. Where:
# `TableRunner._settle` / `_judging_time`. Suggested fix: a settling ends within SETTLE_LIMIT of its
# first start whatever the links do meanwhile: when a settling is pending, keep its `_settle_until`
# (and `_settle_from`), the pause still counted from the earliest loss (the min already there).
# FIXED: as suggested. The table now ends within the bound either way: Mallory claimed (linked time), or
# Alice, away past the reconnect limit in all, leaves it unfinished naming nobody.
@pytest.mark.parametrize(
    "blink",
    [
        pytest.param("together"),
        pytest.param("staggered"),
    ],
)
def test_blinking_links_cannot_hold_a_settling_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blink: str
) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    cycle = staggered_blink if blink == "staggered" else together_blink
    start, spent = now(t), 0.0
    while spent < 600 and s.my_claim is None and s.stage == "audit" and not alice._gave_up:
        spent += cycle(t)
    ended = (s.my_claim is not None and s.my_claim[0] == MALLORY) or (alice._gave_up and s.my_claim is None)
    assert ended and now(t) - start <= BOUND + 5, (
        f"after {now(t) - start:.0f} s of {blink} blinks (bound {BOUND:.0f} s) Alice has claimed "
        f"{s.my_claim}; settling pending: {alice._settle_until is not None}, paused since "
        f"{(t.clock.ms - (alice._paused_from_ms or t.clock.ms)) / 1000:.0f} s"
    )


# --- 2. a claim's stop deadline under a near-100 %-paused blink ------------------------------------


# Held (I4): the near-100 %-paused blink (`paused_blink`: each cycle 0.511 s, 1 ms of it linked) does not
# keep the table from ending within the bound: at 1db4cb5 Mallory claimed (`_first_due` forgave at most the
# reconnect limit); since #3's fix, Alice (1 ms linked a cycle: her own network, for all she can tell)
# leaves the table unfinished naming nobody.
def test_a_paused_blink_still_meets_the_first_due_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    start, spent = now(t), 0.0
    while spent < 2 * BOUND and s.my_claim is None and s.stage == "audit" and not alice._gave_up:
        spent += paused_blink(t)
    ended = (s.my_claim is not None and s.my_claim[0] == MALLORY) or (alice._gave_up and s.my_claim is None)
    assert ended, f"neither a claim nor a stop after {spent:.0f} s"
    assert BOUND - 5 <= now(t) - start <= BOUND + 5, now(t) - start


# BROKE (I4: "claims and unconfirmed blames end within three times the limit"; every table ends).
# Alice claimed Mallory's withheld secrets (steady links, 20 s); the three modified clients never copy
# the claim, so it must stop the table (2..3 limits, `_stop_deadline`). Instead they run `paused_blink`:
# down 10 ms, back, the 0.5 s settling, down again 1 ms after the tick that resumed (they can cause that
# tick: anything they send wakes Alice's loop): each network-back's `resumed(now, paused)` moves
# `claim_seen` on by the whole pause, with no cap (unlike `_first_due`), so the claim is never older than
# a few ms of linked time: after 400 s Alice is still in the audit with her claim pending, and so
# forever. "steady" (control): stopped 44 s after the claim; 0.25 s linked per blink (red team 22's
# pattern): stopped after 141 s. The same shift moves `pending_blames`' times (an unconfirmed blame never
# stops either). Where: `clocks.resumed`, the `paused` branch (`claim_seen`, `pending_blames`). Suggested
# fix: forgive those at most the reconnect limit in all per claim / blame, like `_first_due` (a
# `_forgiven` entry each), so the stop comes within 3 x limit + reconnect limit of wall time.
# FIXED: each claim's forgiven time is kept (`_claim_forgiven`); past the reconnect limit, Alice leaves the
# table unfinished within that time, naming nobody (her lone claim is no conviction either way).
@pytest.mark.parametrize(
    "links_then",
    [
        pytest.param("steady"),
        pytest.param("paused blink"),
    ],
)
def test_an_unconfirmed_claim_stops_the_table_whatever_the_blinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links_then: str
) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    while s.my_claim is None:
        steady(t)
    claimed, spent = now(t), 0.0
    cycle = steady if links_then == "steady" else paused_blink
    while spent < 400 and s.stage == "audit" and not alice._gave_up:
        spent += cycle(t)
    ended = s.stage == "stopped" or (links_then != "steady" and alice._gave_up and not s.convicted)
    assert ended and now(t) - claimed <= 3 * STEP + RECONNECT + 5, (
        f"{now(t) - claimed:.0f} s after her unconfirmed claim Alice is {s.stage}; the claim counts "
        f"{now(t) - min(s.claim_seen.values()):.2f} s"
    )


# --- 3. Alice's own outages past the cap ---------------------------------------------------------


# BROKE (I1 with two colluders; I4 without: "a laptop with no link blames nobody", "a seat that comes
# back within the reconnect limit is not blamed for time away"). Bob (honest) had sent his secrets of
# round 0 when Alice's Wi-Fi died (held in flight). It dies three times for 100 s (each under the
# reconnect limit, so her runner never gives up), back 3 s between, Mallory's and Carol's links at once,
# Bob's still in the mesh's redial backoff; at the end his link is back 6.25 s after hers (BACKOFF_MAX
# x 1.25). The bound forgave 120 s (the cap) of the ~306 s with no link: at the first tick after her
# third settling (SETTLE_LIMIT, Bob's link not up) Alice claims Bob by the first-due bound (192 s since
# it "first became due" > step + reconnect; `clocks._tick` checks it before the "gone" check), before his
# link and secrets are back. Mallory and Carol copy the claim (its step key is public) and Alice
# convicts Bob of withholding (I1); without colluders her lone claim names Bob and stops the table. No
# hostile network needed: a flaky Wi-Fi and the mesh's own backoff. (Two outages of 119 s plus a hostile
# network holding Bob's link 17 s more do it too.) "two outages" (control, held): no claim. Where:
# `clocks.resumed` (the cap) with `clocks._tick` (the bound names the seat). Suggested fix: keep the
# cap for I4, but when the bound runs out only because of pauses past it (with every pause forgiven it
# would not have), do not name a seat: stop the table with nobody convicted (I2's stop), or leave it
# unfinished as a network loss past the reconnect limit does; peers that blink every link then still
# see the table end within step + 2 x reconnect limit, and no honest seat is named for Alice's outages.
# FIXED: the bound is judged on linked time only (every pause forgiven); away past the reconnect limit in
# all, Alice leaves the table unfinished naming nobody (`away_past_limit`), here after the third outage.
@pytest.mark.parametrize(
    "outages",
    [
        pytest.param(2),
        pytest.param(3),
    ],
)
def test_a_flaky_wifi_frames_no_seat_whose_link_lags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outages: int
) -> None:
    t = bob_owes_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    for i in range(outages):
        last = i == outages - 1
        outage(t, 100, {MALLORY: 0, CAROL: 0, **({BOB: 6.25} if last else {})})
        if not last:
            for _ in range(12):  # 3 s linked to Mallory and Carol; Bob's link still in the backoff
                tick(t, 0.25)
            assert BOB not in alice.connected
    assert alice.connected == set(CHEATERS) and alice._gave_up == (outages == 3)
    claim = s.my_claim
    for data in t.held:  # Bob's link is back: his secrets, sent before the first outage, come in
        alice._receive(BOB, data)
    if claim is not None:  # Mallory and Carol copy the claim
        for seat in (MALLORY, CAROL):
            m = t.session(seat)
            msg = m._publish("timeout", {"seat": claim[0], "step": claim[1], "what": "x"})
            m.drain()
            assert msg is not None
            alice._receive(seat, msg.to_wire())
    assert claim is None and BOB not in s.convicted, (
        f"Alice, back from {outages} outages of 100 s, claimed seat {claim and claim[0]} (link back 6.25 s "
        f"after hers); with the copies she is {s.stage}, convicting {sorted(s.convicted, key=str)}"
    )


# --- 4. journals and full restarts ------------------------------------------------------------------


# Held (I3, P-5.4): Alice's journal after 30 network-backs, every `resumed` record's `paused` edited to
# INT_MAX ms (a rewritten journal with its chain intact), replays twice alike; no clock or bound is in the
# future, and what was forgiven is no more than the time that passed.
def test_huge_pauses_replay_alike_within_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = withheld_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    start = now(t)
    for _ in range(30):
        paused_blink(t, 0.2)
    alice = t.runners[ALICE]
    alice.journal.sync()
    records = Journal(alice.journal.path).read()
    assert sum(1 for r in records if r.get("t") == "resumed" and "paused" in r) >= 30
    live = t.session(ALICE)
    same_session(live, replayed(t, ALICE))
    assert live._forgiven == replayed(t, ALICE)._forgiven
    edited = [dict(r, paused=INT_MAX) if r.get("t") == "resumed" else r for r in records]
    alice.journal.path.unlink()
    rewritten = Journal(alice.journal.path)
    for record in edited:
        rewritten.append(record, sync=False)
    rewritten.sync()
    a, b = replayed(t, ALICE), replayed(t, ALICE)
    same_session(a, b)
    assert a._forgiven == b._forgiven and a._first_due == b._first_due and a._due == b._due
    assert a._forgiven and all(0 <= f <= now(t) - start for f in a._forgiven.values())
    assert all(v <= now(t) for v in [*a._first_due.values(), *a._due.values(), *a.claim_seen.values()])


# Held (I4, P-5.4): once more than the reconnect limit was forgiven (two 100 s outages), a suspend (this
# process did not run: a full restart) clears `_forgiven` and restarts the bound at its `resumed`, and the
# journal replays into the same session with the same `_forgiven` / `_first_due`.
def test_a_suspend_after_the_cap_restarts_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = bob_owes_secrets(tmp_path)
    monkeypatch.setattr(runner_module, "time", FakeTime(t))
    alice, s = t.runners[ALICE], t.session(ALICE)
    outage(t, 100, {MALLORY: 0, CAROL: 0, BOB: 0})
    outage(t, 100, {MALLORY: 0, CAROL: 0, BOB: 0})
    for _ in range(8):
        tick(t, 0.25)
    assert s._forgiven and all(f > RECONNECT for f in s._forgiven.values())
    assert not alice._gave_up and not s.away_past_limit
    t.advance(30)
    alice._settle("this process did not run for 30 s (stopped, or the laptop slept)")
    for _ in range(8):
        tick(t, 0.25)
    assert alice._settle_until is None and not s._forgiven and s.my_claim is None and not s.away_past_limit
    assert all(now(t) - first <= 2 for first in s._first_due.values())
    again = replayed(t, ALICE)
    same_session(s, again)
    assert s._forgiven == again._forgiven and s._first_due == again._first_due
