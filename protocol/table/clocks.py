"""Time limits, timeout claims and stops (P-5.3, I2, I4).

Each owed step has its own clock, keyed by the seat that owes it and the step (named from public
state only), started when the step became due; only the owner's progress on that step, which
changes the key, ends it. A seat whose link is down is waited for up to the reconnect limit; a
seat that comes back, or this seat resuming from its journal (`resumed`), gets a fresh limit, but
a step owed longer than the step limit plus the reconnect limit since it first became due is claimed
whatever the link did meanwhile: a seat that keeps dropping and restoring its link cannot stall.
With every link down this seat says it lost the network and blames nobody.

A clock that runs out is private knowledge, so it never convicts by itself: this seat publishes a
signed `timeout` claim and makes no move of its own until it is settled (`decision`); it still handles
the other seats' messages, so a fault past the claimed step is checked here as everywhere (I2). The
owing seat is convicted only when every other seat has claimed it for the same step; claims that do
not all come within twice the limit (and a secret delay of up to one limit more, `_stop_deadline`, so
nobody can aim a fault at the instant between two seats' stops) stop the game with nobody convicted,
the claims shown (I2); the last claim coming after that still turns the stop into the conviction
(`stopped → ended`).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.api import JSONObject
from protocol.errors import ProtocolError
from protocol.signed import SignedMessage
from protocol.table._core import SessionCore
from protocol.table._round import _is_seat
from protocol.table._state import MAX_TEXT
from protocol.table.values import NetworkLost, Output, Refused, Stopped, Waiting


class ClockMixin(SessionCore):
    def tick(self, now: float) -> list[Output]:
        """Time passes. A step withheld past its limit is claimed, signed, against the seat that owes
        it (P-5.3); that seat is convicted only when every other seat has claimed it (I2). Never raises."""
        self.now = now
        try:
            self._tick()
            if self.stage == "stopped":
                # Messages that waited are judged on in silence (`inbox._shadow`) though none may come
                # again: the stop came from this seat's own clock, and what waited for it (a deal
                # without this seat's hand, `deal._try_deal`; a move behind a withheld peek answer,
                # `play._on_move`) can go on now (red team 12 #1).
                self._pump_safely()
                self.settle_verdict()
        except Exception as exc:  # I3
            self._out.append(Refused(None, "P-1.3", f"time could not be handled (internal error): {exc!r}"))
        self._touch_clocks()
        return self.drain()

    def settle(self, now: float) -> list[Output]:
        """The end of listening (`listen_until`), judging no clock: a stopped seat that convicted ends
        with the settled verdict (`Verdict`); one halted by a blame nothing proved shows the stop. The
        runner calls it at `listen_until` even while it judges no time (a link just back, the laptop
        just awake), and after a resume past it: a seat's verdict must not depend on whether a tick
        came in time (red team 19 #1, #2). Never raises."""
        self.now = now
        try:
            if self.stage == "stopped":
                self.settle_verdict()
        except Exception as exc:  # I3
            self._out.append(Refused(None, "P-1.3", f"the verdict could not be settled (internal error): {exc!r}"))
        return self.drain()

    def _tick(self) -> None:
        if self.stage in ("ended", "over", "stopped"):
            if self.stage != "ended":
                self._judge_claims()  # the last claims (a one-of claim is judged once it has stood)
            return
        others = [s for s in range(self.n) if s != self.me]
        if others and all(s in self.disconnected for s in others):
            if self.network_lost_since is None:  # I4: this laptop lost the network; nobody is blamed
                self.network_lost_since = self.now
                self._out.append(NetworkLost(self.now))
            return
        self.network_lost_since = None
        self._judge_claims()
        self._judge_pending_blames()
        if self.stage == "ended" or self.my_claim is not None:
            return
        self._touch_clocks()
        waiting = self.waiting()
        if waiting is None:
            return
        key = self._step_key(waiting.what)
        for owing in waiting.seats:
            # A seat whose move for this step is here but waits (its state hash is not ours) is past
            # thinking: it gets the step limit, and a claim naming it; the others keep theirs (I1).
            held = self._holds_step_message(owing)
            limit = self.settings.step_timeout if waiting.automatic or held else self._others_turn_limit()
            # Which of several seats owes a one-of step is private knowledge (each seat knows only its
            # own hand): the claim names none of them, so every seat's claim is the same claim (D).
            seat: int | None = None if waiting.one_of and not held else owing
            if owing == self.me or owing in self.pending_blames or any(owing in by for by in self.claims.values()):
                continue  # a seat that published a blame or a claim waits for its outcome: never blamed for it (I1)
            first = self._first_due.get((owing, key), self.now)
            if limit is not None and self.now - first > limit + self.settings.reconnect_timeout:
                self._claim(seat, key, waiting.what)  # I4: time away is forgiven once, not without end
                return
            if limit is not None:
                self._note_away(first, self._forgiven.get((owing, key), 0.0), limit + self.settings.reconnect_timeout)
            gone = self.disconnected.get(owing)
            if gone is not None:  # time away counts only against the reconnect limit (I4)
                if self.now - gone > self.settings.reconnect_timeout:
                    self._claim(seat, key, waiting.what)  # the same claim as on the step limit: replays alike
                    return
                continue
            due = self._due.get((owing, key), self.now)
            if limit is not None and self.now - due > limit:
                self._claim(seat, key, waiting.what)
                return

    def _others_turn_limit(self) -> float | None:
        """How long this seat waits for another seat's decision before claiming it. A person's turn
        starts when their seat can decide, which may be later there than here: a private message it
        needed (its hand keys) may come up to just under the step limit late without anyone claiming
        it. So this seat allows the step limit on top, while the deciding seat judges claims against
        it by the turn limit on its own clock (`_owed_past_limit`): a person within their limit is
        never convicted elsewhere while they stop here (I1, I2)."""
        turn = self.settings.turn_timeout
        return None if turn is None else turn + self.settings.step_timeout

    def set_connected(self, seat: int, connected: bool, now: float) -> None:
        """The runner reports a seat's link going down or coming back. A seat that comes back gets a
        fresh limit for whatever step it owes (I4)."""
        if connected == (seat in self.disconnected):
            self.steady_since = now
        if connected:
            self.disconnected.pop(seat, None)
            for key in self._due:
                if key[0] == seat:
                    self._due[key] = now
        else:
            self.disconnected.setdefault(seat, now)

    def resumed(self, now: float, paused: float | None = None) -> list[Output]:
        """The runner judges time again. Without `paused`: it replayed this seat's journal (or this
        process did not run: a suspend), so time spent down is nobody's fault and every clock restarts
        now (I4). With `paused`: this laptop's links were all down (then settling) for that many
        seconds, which it cannot tell from every other seat dropping it: every clock (step clocks, the
        first-due bound, claims, waiting blames) moves on by that much only, so time linked still
        counts (red team 22 #3: a restart at every blink stalled a withheld step for good) and this
        laptop's own outages count against nobody (red team 23 #1, red team 24 #3: outages under the
        reconnect limit each, with a peer's link back later, claimed that peer). What each clock was
        forgiven is kept: once it passes the reconnect limit, the time past it would have run that
        clock out, and the session says `away_past_limit` instead of naming anyone (`_note_away`);
        the runner then leaves the table unfinished, as after one outage past the limit. So peers that
        blink every link (nearly all the time "paused") still end the table within the limit plus
        twice the reconnect limit of wall time (red team 24 #2). Either way every link counts as up
        until the runner says otherwise. Call it once after a replay, before the first live `tick`."""
        self.now = self.steady_since = now
        if paused is None:
            for key in self._due:
                self._due[key] = now
                self._first_due[key] = now
            for claim in self.claim_seen:
                self.claim_seen[claim] = now
            self.pending_blames = {seat: (msg, now) for seat, (msg, _) in self.pending_blames.items()}
            self._forgiven.clear()
            self._claim_forgiven.clear()
            self._blame_forgiven.clear()
            self.away_past_limit = False
        else:
            shift = max(0.0, paused)
            for key, due in self._due.items():
                self._due[key] = min(now, due + shift)
            for key, first in self._first_due.items():
                self._first_due[key] = moved = min(now, first + shift)
                self._forgiven[key] = self._forgiven.get(key, 0.0) + (moved - first)
            for claim, seen in self.claim_seen.items():
                self.claim_seen[claim] = moved = min(now, seen + shift)
                self._claim_forgiven[claim] = self._claim_forgiven.get(claim, 0.0) + (moved - seen)
            blames: dict[int, tuple[SignedMessage, float]] = {}
            blame_forgiven: dict[tuple[int, int], float] = {}
            for seat, (msg, since) in self.pending_blames.items():
                blames[seat] = (msg, min(now, since + shift))
                blame = (seat, msg.seq)  # a later blame of the same seat starts with nothing forgiven
                blame_forgiven[blame] = self._blame_forgiven.get(blame, 0.0) + (blames[seat][1] - since)
            self.pending_blames, self._blame_forgiven = blames, blame_forgiven
        self.disconnected.clear()
        self.network_lost_since = None
        return self.drain()

    def _note_away(self, since: float, forgiven: float, limit: float) -> None:
        """A clock started at `since` (moved on by `forgiven` seconds of this laptop's own outages)
        has not run out, but would have, counting the outages past the reconnect limit: this laptop
        was away too long to judge it (I4), and that names nobody (I1)."""
        over = forgiven - self.settings.reconnect_timeout
        if over > 0 and self.now - since + over > limit:
            self.away_past_limit = True

    def waiting(self) -> Waiting | None:
        rd = self.round
        pending: list[int]
        if self.stage == "seed":
            if len(self.seed_commits) < self.n:
                pending = [s for s in range(self.n) if s not in self.seed_commits]
            else:
                pending = [s for s in range(self.n) if s not in self.seed_reveals]
            return self._waiting(pending, "open the seed for the first dealer", True)
        if rd is None or self.stage in ("over", "stopped", "ended"):
            return None
        if rd.aborting or self.stage == "audit":
            pending = [s for s in range(self.n) if s not in rd.secrets]
            return self._waiting(pending, "publish the round's secrets for the audit", True)
        if self.stage == "deal":
            if len(rd.shuffles) < self.n:
                return self._waiting((len(rd.shuffles),), "shuffle the deck", True)
            if len(rd.locks) < self.n:
                return self._waiting((len(rd.locks),), "lock the deck", True)
            pending = [s for s in range(self.n) if s != self.me and (s not in rd.keys_from or s not in rd.opens_from)]
            return self._waiting(pending, "send the keys of the deal", True)
        expected = self.game.expected(self.state)
        if expected.phase == "reveal":
            pending = [s for s in range(self.n) if s not in rd.late_from]
            return self._waiting(pending, "turn the table card", True)
        if rd.peeks_owed:
            trick = min(rd.peeks_owed)
            return self._waiting((rd.peeks_owed[trick],), "show the peeked prediction card", True)
        hidden = self.game.hidden_choice(expected.kind)
        if expected.phase == "move" and hidden is not None:
            if len(rd.phase_commits) < len(expected.seats):
                pending = [s for s in expected.seats if s not in rd.phase_commits]
                return self._waiting(pending, f"choose ({expected.kind})", False)
            pending = [s for s in expected.seats if s not in rd.phase_reveals]
            return self._waiting(pending, "reveal the chosen card", True)
        if expected.phase == "move":
            return self._waiting(expected.seats, expected.kind, False, one_of=expected.one_of)
        return None

    def _waiting(self, seats: Sequence[int], what: str, automatic: bool, one_of: bool = False) -> Waiting:
        key = self._waiting_key = self._step_key(what)
        since = min((self._due.get((s, key), self.now) for s in seats), default=self.now)
        return Waiting(tuple(seats), what, automatic, since, one_of)

    def _step_key(self, what: str) -> str:
        """The owed step, named from public state only, so every honest seat names it alike."""
        rd = self.round
        if rd is None:
            return f"{self.round_index}/{self.stage}/{len(self.seed_commits)}/{what}"
        return f"{rd.index}/{self.stage}/{rd.step}/{len(rd.shuffles)}/{len(rd.locks)}/{what}"

    def _touch_clocks(self) -> None:
        """Start a clock for each step that became due; drop the clocks of steps no longer owed."""
        waiting = self.waiting() if self.stage not in ("ended", "over", "stopped") else None
        if waiting is None:
            self._due.clear()
            self._first_due.clear()
            self._forgiven.clear()
            return
        key = self._waiting_key  # computed by `waiting()` just now
        live = {(seat, key) for seat in waiting.seats}
        for owed in live:
            self._due.setdefault(owed, self.now)
            self._first_due.setdefault(owed, self.now)
        if len(self._due) != len(live):
            for owed in [k for k in self._due if k not in live]:
                del self._due[owed]
                self._first_due.pop(owed, None)
                self._forgiven.pop(owed, None)

    def _claim(self, seat: int | None, key: str, what: str) -> None:
        """This seat's clock for `seat`'s step ran out: say so, signed, and wait for the others'."""
        self.my_claim = (seat, key)
        self._publish("timeout", {"seat": seat, "step": key, "what": what[:MAX_TEXT]})
        self._pump_safely()

    def _on_timeout(self, seat: int, msg: SignedMessage) -> bool:
        accused = msg.body.get("seat")
        key = msg.body.get("step")
        named = accused is None or _is_seat(accused, self.n)
        what = msg.body.get("what")
        shaped = set(msg.body) == {"seat", "step", "what"} and isinstance(what, str) and len(what) <= MAX_TEXT
        if not named or accused == seat or not isinstance(key, str) or len(key) > MAX_TEXT or not shaped:
            raise ProtocolError("P-5.3", f"seat {seat} sent a timeout claim of the wrong shape: ignored")
        claim = (None if accused is None else int(str(accused)), key)
        self.claims.setdefault(claim, {})[seat] = msg
        self.claim_seen.setdefault(claim, self.now)
        self._judge_claims()
        return True

    def _judge_claims(self) -> None:
        """I2: convict when every other seat claimed the same step of the same seat; otherwise stop
        with nobody convicted once the claims have had time to come in."""
        if self.stage == "ended":
            return
        limit = max(self.settings.step_timeout, self.settings.turn_timeout or 0.0)
        for claim, by in self.claims.items():
            named = claim[0]
            if named is None and self.stage == "stopped":
                # Who owes a one-of step follows from who may be stuck (`_owes_one_of`: blames waiting
                # here), which a stopped seat no longer follows (red team 9: it convicted an honest seat
                # whose excuse, a blame, it had dropped at its stop). Only a named claim converts a stop.
                continue
            accused = named if named is not None else self._owes_one_of(claim, by, limit)
            if accused is not None and all(s in by for s in range(self.n) if s != accused):
                owed = self._owed_past_limit(claim[1]) if accused == self.me else True
                if owed is None:
                    continue  # this seat owes that step, its own limit not yet run out: judged again later
                if not owed:
                    if self.stage == "stopped":
                        continue  # stopped already: claims this seat knows false convert nothing (I1)
                    # I1: with two seats (or every other seat colluding) the claims alone would
                    # convict; this seat knows it does not owe that step.
                    who = ", ".join(str(s) for s in sorted(by))
                    why = f"seat(s) {who} say this seat withheld a step it does not owe: the table could not agree"
                    self._stop("P-5.3", why, tuple(by[s].to_json() for s in sorted(by)))
                    return
                what = str(by[min(by)].body.get("what"))[:MAX_TEXT]
                why = f"seat {accused} withheld a step: every other seat waited past the limit for it to {what}"
                self._blame(accused, "P-5.3", why, tuple(by[s].to_json() for s in sorted(by)))
                return
        if self.stage in ("over", "stopped"):
            # A claimant takes the claimed step in when it comes and may finish the game; the last
            # claim still convicts here as at a claimant still in the last audit (I2; red team 7).
            # An incomplete claim stops nobody after the game: a seat still auditing stops, and its
            # stop reaches this seat (`_on_stop`). A stopped seat turns its stop into the conviction
            # when the last claim comes after it (red team 7: the last claim timed at twice the limit).
            return
        for claim, since in self.claim_seen.items():
            self._note_away(since, self._claim_forgiven.get(claim, 0.0), self._stop_deadline())
            if self.now - since > self._stop_deadline() and claim in self.claims:
                accused, _ = claim
                by = self.claims[claim]
                who = ", ".join(str(s) for s in sorted(by))
                whom = "one of the seats that could owe it" if accused is None else f"seat {accused}"
                what = str(by[min(by)].body.get("what"))[:MAX_TEXT]  # shape-checked in `_on_timeout`
                why = (
                    f"seat(s) {who} say {whom} withheld a step ({what}); the other seats do not: "
                    "the table could not agree"
                )
                self._stop("P-5.3", why, tuple(m.to_json() for m in by.values()))
                return

    def _stop_deadline(self) -> float:
        """How long after it came a claim that not every seat made, or a blame never checkable here,
        stops this seat: twice the limit, and a secret part of the limit more (`stop_delay`, I2)."""
        limit = max(self.settings.step_timeout, self.settings.turn_timeout or 0.0)
        return (2 + self.stop_delay) * limit

    def _owed_past_limit(self, key: str) -> bool | None:
        """Whether claims against this seat for the step `key` can be true: True when it owes that
        step and has owed it past its limit by its own clock; None when it owes it but its own
        clock has not run out yet (a clock that started late here: wait and see); False when it
        does not owe that step, the step is a decision that came due after this seat's own claim,
        or the step has no limit (no honest seat claims such a step)."""
        waiting = self.waiting() if self.stage not in ("ended", "over", "stopped") else None
        if waiting is None or self.me not in waiting.seats or self._waiting_key != key:
            return False
        if self.my_claim is not None and self.my_claim[1] != key and not waiting.automatic:
            # A decision that came due after this seat's own claim, which keeps it from deciding
            # (`decision`): not withheld (I1; red team 7, a claimant gone on to its own move).
            return False
        held = self._holds_step_message(self.me)
        limit = self.settings.step_timeout if waiting.automatic or held else self.settings.turn_timeout
        if limit is None:
            return False
        # Owed as soon as any honest seat's clock could have run out, and no sooner: on time linked since
        # the step came due (its fresh limit after a return), or on the first-due bound, which does not
        # forgive this laptop's outages (to the others it was away): neither a true claim disputed (red
        # team 25) nor a seat back within the reconnect limit convicting itself (red team 26).
        first = self._first_due.get((self.me, key), self.now)
        wall_first = first - self._forgiven.get((self.me, key), 0.0)
        past = self.now - first >= limit or self.now - wall_first >= limit + self.settings.reconnect_timeout
        return True if past else None

    def _owes_one_of(self, claim: tuple[int | None, str], by: dict[int, SignedMessage], limit: float) -> int | None:
        """The seat that owes a one-of step (a claim naming none, D), if the claims show it: an
        honest seat that does not owe the step claims it and an honest seat that owes it moves, so
        when every seat but one has claimed, that one owes it — unless it is stuck itself (it
        claimed a step before this one, or has a blame standing: an honest seat that never got its
        hand cannot move, nor tell whether it owes the step). A claim for a later step does not
        excuse it: its chain would hold its move before that claim. Judged only once the claims have stood for the
        limit, so that such a seat's own claim has had time to come in at every seat (I1, I2)."""
        unclaimed = [s for s in range(self.n) if s not in by]
        if len(unclaimed) != 1 or self.now - self.claim_seen.get(claim, self.now) < limit:
            return None
        seat = unclaimed[0]
        here = _point(claim[1])
        stuck = any(seat in others and _point(key) < here for (_, key), others in self.claims.items())
        return None if stuck or seat in self.pending_blames else seat

    def _stop(self, rule: str, message: str, evidence: tuple[JSONObject, ...]) -> None:
        """I2: the game stops with nobody convicted; every seat is told, with the claims shown."""
        if self.stage in ("stopped", "ended") or self.silent:
            return
        self.shadow_stage = self.stage
        # No other seat's stop chained here before: this stop is its own, and opens the windows with the
        # same away check as every first end (red team 18 #1: a seat just back, stopped on a groundless
        # blame, opened a window of its own and convicted a second cheater after the others settled).
        self._end_known()
        self.stopped = Stopped(rule, message, evidence)
        self._out.append(self.stopped)
        self._publish_quoting("stop", {"rule": rule, "message": message}, evidence)
        self._enter("stopped")

    def _on_stop(self, seat: int, msg: SignedMessage) -> bool:
        message = str(msg.body.get("message"))[:MAX_TEXT]
        self._stop("P-5.3", f"seat {seat} stopped the game: {message}", (msg.to_json(),))
        return True


_STAGE_ORDER = {"seed": 0, "deal": 1, "play": 2, "audit": 3}


def _point(key: str) -> tuple[int, int, int]:
    """Where in the game a claim's step key (`_step_key`) is: (round, stage, step); a key of
    another shape sorts last, so it excuses nobody."""
    parts = key.split("/")
    try:
        return int(parts[0]), _STAGE_ORDER[parts[1]], int(parts[2]) if parts[1] != "seed" else 0
    except (IndexError, KeyError, ValueError):
        return (1 << 30, 0, 0)
