"""Issue 9's property: seeded tables of every game with one or two malicious seats (the attacker's
kit of `protocol.testing`), checked at every honest seat for I1 (no honest seat blamed), I2 (honest
seats agree), I3 (no exception escaped), I4 (the table ended within the time bound) and I6 (memory
kept per author bounded).

Each case is one strategy at one game (the games taken in turn, so that every strategy runs once
in CI; `LANPLAY_ADVERSARY_FULL=1` runs every strategy at every game it applies to), seeded from
its name so a failure repeats exactly; the failure message ends with the one command that replays
it. `scripts/soak.py` runs thousands of tables in the simulator (tests/sim).
Cases the code on main fails are marked `xfail(strict=True)` with the issue 9 finding they
reproduce: when a fix lands the case passes, strict xfail fails, and the mark is to be removed.
"""

from __future__ import annotations

import hashlib
import os

import pytest

from protocol.testing import (
    COLLUSIONS,
    GAME_SETUPS,
    STRATEGIES,
    Faults,
    Harness,
    Outage,
    TableResult,
    Withhold,
    kept_messages,
    make_strategy,
    run_adversarial,
)

# Which message kinds each game's tables carry (6th Sense predictions open at the audit, so it has
# no "reveal"; Sixes has no hidden choice at all). A strategy aimed at a kind a game never sends
# would prove nothing there.
GAME_KINDS = {
    "sixth-sense": {"seed.commit", "seed.reveal", "shuffle", "lock", "open", "p.keys", "move", "commit", "secrets"},
    "take6": {"seed.commit", "seed.reveal", "shuffle", "lock", "open", "p.keys", "move", "commit", "reveal", "secrets"},
    "sixes": {"seed.commit", "seed.reveal", "shuffle", "lock", "open", "p.keys", "move", "secrets"},
}
# Strategies tied to a game's moves: where they can fire at all.
ONLY_IN = {
    "garbage:card-zz": {"take6"},  # a 6 nimmt! card choice committed as {"card": "zz"}
    "garbage:not-object": {"sixth-sense", "take6"},  # a committed hidden choice
    "garbage:bare-card": {"sixth-sense", "sixes"},  # a hand card played in the open
    "garbage:huge-list": {"sixth-sense", "sixes"},
    "garbage:unknown-kind": {"sixth-sense", "sixes"},
    "garbage:blame-no-evidence": {"sixth-sense", "sixes"},
    "garbage:blame-bad-evidence": {"sixth-sense", "sixes"},
    "replay-other-table-blame:p.keys": {"sixth-sense", "sixes", "take6"},
    "replay-other-table-blame:p.peek": {"sixth-sense"},
    "replay-position:move": {"sixth-sense", "sixes"},
    "abort-to-one": {"sixth-sense", "sixes"},
    "equivocate:move+no-gossip": {"sixth-sense", "sixes"},
    "equivocate-valid:move": {"sixth-sense", "sixes"},  # 6 nimmt!'s card choices are hidden commitments
    "collude-frame": {"sixth-sense", "sixes"},
    "collude-delay-split:move": {"sixth-sense", "sixes"},
    "collude-equivocate+no-gossip": {"sixth-sense", "sixes"},
}

# What the code on main fails, and why. Calibrated on main at b1772b9 (trust-session merged), for
# the CI rotation (in the full matrix other games may differ). Issue 9's findings by number;
# letters are new findings of this harness (see the attack report). None is open now.
# Fixed on main (their marks removed): findings 1, 5, 8 (collusion), 9, 10 and C (`_Aborted`
# escaping `receive`) by trust-session; finding 2 and H by deck-proofs (proofs checked on receipt);
# findings 4, D and G by late-fixes (one-of timeout claims; one signed move per step).
KNOWN: dict[str, str] = {}


def _kind_of(name: str) -> str | None:
    if ":" not in name:
        return None
    kind = name.split(":", 1)[1].split("+")[0].split(".", 1)
    head = kind[0]
    if head in ("seed", "p") and len(kind) > 1:
        return head + "." + kind[1].split(".")[0]
    return head


def _applies(name: str, game: str) -> bool:
    if name in ONLY_IN:
        return game in ONLY_IN[name]
    kind = _kind_of(name)
    every = set().union(*GAME_KINDS.values())
    return kind not in every or kind in GAME_KINDS[game]


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:4], "big") % 100_000


def _options(game: str, seed: int) -> dict[str, object]:
    setups = {g: options for g, _, _, options in GAME_SETUPS}
    return dict(setups[game][seed % len(setups[game])])


def _case_marks(name: str, game: str) -> list[pytest.MarkDecorator]:
    reason = KNOWN.get(f"{name}@{game}")
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


FULL = os.environ.get("LANPLAY_ADVERSARY_FULL") == "1"
GAMES = ("sixth-sense", "take6", "sixes")


def _games(index: int, name: str) -> list[str]:
    games = [g for g in GAMES if _applies(name, g)]
    return games if FULL else [games[index % len(games)]]


SINGLE = [
    pytest.param(name, game, id=f"{name}@{game}", marks=_case_marks(name, game))
    for index, name in enumerate(STRATEGIES)
    for game in _games(index, name)
]
PAIRS = [
    pytest.param(name, game, id=f"{name}@{game}", marks=_case_marks(name, game))
    for index, name in enumerate(COLLUSIONS)
    for game in _games(index, name)
]


def _report(result: TableResult) -> str:
    lines = [f"{v.invariant} at seat {v.seat}: {v.detail}" for v in result.violations]
    lines += [f"verdicts: {result.verdicts}", f"stopped: {result.stopped} at t={result.sim_time:.1f}"]
    lines.append(f"replay: {result.repro()}")
    return "\n".join(lines)


def _assert_holds(result: TableResult, caught: bool) -> None:
    assert result.applied > 0, f"the attack never fired: {_report(result)}"
    assert not result.violations, _report(result)
    if caught:
        assert result.caught, f"a cheat every honest seat must name went unnamed: {_report(result)}"


@pytest.mark.parametrize(("name", "game"), SINGLE)
def test_one_malicious_seat(name: str, game: str) -> None:
    seed = _seed(name, game)
    players = 3
    seat = 0 if name.startswith("lock-alias") else 1 + seed % (players - 1)
    strategy = make_strategy(name)
    result = run_adversarial(game, players, _options(game, seed), seed, {seat: strategy})
    _assert_holds(result, strategy.caught)


@pytest.mark.parametrize(("name", "game"), PAIRS)
def test_two_colluding_seats(name: str, game: str) -> None:
    seed = _seed("pair", name, game)
    first = make_strategy(name)
    result = run_adversarial(game, 4, _options(game, seed), seed, {1: first, 3: make_strategy(name)})
    _assert_holds(result, first.caught)


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("name", ["withhold:shuffle", "mutate:lock", "equivocate:open", "withhold:secrets"])
def test_other_table_sizes(name: str, players: int) -> None:
    seed = _seed("size", name, players)
    strategy = make_strategy(name)
    result = run_adversarial("sixth-sense", players, {}, seed, {players - 1: strategy})
    _assert_holds(result, strategy.caught)


# Finding H (I1): a seat sends two versions of a message, each valid on its own (two passes with
# their proofs, two legal moves), one to each half of the table. The next seat builds on the version
# it got; with gossip slower than that next message (here 3 s; the runner forwards 50 ms late) the
# seats holding the other version must wait for the fork proof instead of blaming that honest seat.
SLOW_GOSSIP = [
    pytest.param(name, game, players, id=f"{name}@{game}-{players}")
    for name in ("equivocate-valid:shuffle", "equivocate-valid:lock", "equivocate-valid:move")
    for game, players in (("sixth-sense", 4), ("take6", 3), ("sixes", 5), ("sixth-sense", 3))
    if _applies(name, game)
]


@pytest.mark.parametrize(("name", "game", "players"), SLOW_GOSSIP)
def test_a_valid_equivocation_never_frames_the_seat_that_built_on_it(name: str, game: str, players: int) -> None:
    seed = _seed("slow-gossip", name, game, players)
    for seat in (0, players - 1):  # the first seat (its input is the card table) and the last
        strategy = make_strategy(name)
        result = run_adversarial(
            game, players, _options(game, seed), seed, {seat: strategy}, faults=Faults(gossip_delay=3.0)
        )
        _assert_holds(result, caught=True)


# Finding J (I1): at a 2-seat table the one other seat's timeout claim is "every other seat's"; a
# claim against a seat that owes nothing, or has owed its step for no time, must convict nobody.
@pytest.mark.parametrize("game", ["sixth-sense", "take6"])
@pytest.mark.parametrize("name", ["false-claim", "false-claim-early"])
@pytest.mark.parametrize("seat", [0, 1])
def test_a_lone_false_timeout_claim_convicts_nobody(game: str, name: str, seat: int) -> None:
    seed = _seed("false-claim", game, name, seat)
    result = run_adversarial(game, 2, _options(game, seed), seed, {seat: make_strategy(name)})
    _assert_holds(result, caught=False)
    assert not any(v.startswith(f"{1 - seat}: blamed") for v in result.verdicts), result.verdicts


# Finding 9: an honest seat away for longer than the step limit (20 s) but well under the
# reconnect limit (120 s), with its own automatic step due, comes back and nobody is blamed.
OUTAGES = [
    pytest.param(
        game, after, seconds, id=f"{game}-away-after-{after}-{seconds:.0f}s", marks=_case_marks("outage", game)
    )
    for game in GAMES
    for after, seconds in (("shuffle", 25.0), ("open", 45.0))
]


@pytest.mark.parametrize(("game", "after", "seconds"), OUTAGES)
def test_an_honest_seat_that_comes_back_is_not_blamed(game: str, after: str, seconds: float) -> None:
    seed = _seed("outage", game, after)
    result = run_adversarial(game, 3, _options(game, seed), seed, {}, outages=[Outage(1, seconds, after=after)])
    assert not result.violations, _report(result)


# The attack report's exact tables (late-fixes), each replayed as reported.
REPORTED = [
    # G: seat 0 gets seat 2's hand keys past the step limit, has claimed a timeout, and must not be
    # offered (or sign) its move while the claim stands; it signed one move per decide() (P-5.1).
    pytest.param("sixes", {"chips": 2}, 98197, {2: "delay-over-one:p.keys"}, False, id="G-late-keys"),
    # B: the game's last secrets forked; the seat that declared the game over reaches the blamer's verdict.
    pytest.param("sixes", {"chips": 1}, 1, {1: "equivocate:secrets"}, True, id="B-fork-after-over"),
    # F: two signed p.keys at one seq of one private channel: an equivocation proof naming its signer
    # (a seed whose second version is readable by its recipient: one addressed elsewhere is refused).
    pytest.param("take6", {"profi": True}, 29660, {1: "equivocate:p.keys"}, True, id="F-private-fork"),
    # D: Sixes' opening move (one of several seats owes it, X-2.2) withheld: the claims name no
    # seat, so every honest seat's claim is the same, and the one seat that did not claim owes it.
    pytest.param("sixes", {"chips": 1}, 93694, {1: "withhold:move"}, True, id="D-one-of-withheld"),
    # K (soak): seat 0's secrets forked; the seat whose audit failed blames with the secrets that
    # completed its audit, which outran the fork's gossip: the blame carries the accused's own
    # secrets (and moves), so the seat whose audit passed finds the fork in it and names seat 0 too.
    pytest.param("sixth-sense", {"late_trump": True, "target": 1}, 20213, {0: "equivocate:secrets"}, True,
                 id="K-audit-blame-outran-fork"),
    # Soak seed 2422: two valid versions of the move that ends a trick, won by seat 0 in one and by
    # seat 2 in the other; each led the next trick at step 6, so each got the other's lead for a step
    # already taken. That is no proof against the leader (it built on the other version): ignored,
    # and gossip's second version names seat 1 at both (I1, P-5.1).
    pytest.param("sixth-sense", {}, 2422, {1: "equivocate-valid:move"}, True, id="L-fork-past-step-lead"),
    # Soak seed 5794: seat 1 committed its prediction in two versions; the seat that peeked at it blamed
    # the answer that did not open its version, and that blame outran the fork's gossip to the seat
    # holding the other version: the blame carries the commitment it was checked against (I2, P-4.5).
    pytest.param("sixth-sense", {"late_trump": True}, 5794, {1: "equivocate:commit"}, True,
                 id="M-peek-blame-outran-commit-fork"),
    # 4: secrets sent mid-play (to one seat first) instead of the opening move: the seat is named.
    pytest.param("sixes", {"chips": 1}, 54454, {1: "abort-to-one"}, True, id="4-abort-to-one"),
]


@pytest.mark.parametrize(("game", "options", "seed", "attacks", "caught"), REPORTED)
def test_reported_tables(
    game: str, options: dict[str, object], seed: int, attacks: dict[int, str], caught: bool
) -> None:
    strategies = {seat: make_strategy(name) for seat, name in attacks.items()}
    result = run_adversarial(game, 3, options, seed, strategies)
    _assert_holds(result, caught)


# --- the harness itself -------------------------------------------------------------------------


def test_an_honest_strategy_changes_nothing() -> None:
    """With the honest base strategy at a seat, the table plays as without it."""
    result = run_adversarial("sixes", 3, {"chips": 1}, 5, {1: make_strategy("no-gossip")})
    plain = Harness("sixes", 3, {"chips": 1}, seed=5)
    plain.run()
    assert not result.violations
    assert plain.game_over(0) is not None


def test_a_dropped_message_keeps_the_chain_valid() -> None:
    """Withholding the shuffle re-signs what follows with a valid chain, so the honest seats blame
    the withholding (P-5.3), not a broken chain (P-1.3)."""
    result = run_adversarial("sixth-sense", 3, {}, 11, {1: Withhold("shuffle")})
    assert result.caught
    assert all("P-5.3" in v for v in result.verdicts), result.verdicts


def test_equivocation_is_signed_correctly_per_recipient() -> None:
    """Two versions of one message, each on a valid chain: only gossip shows the fork (P-1.3)."""
    result = run_adversarial("take6", 3, {}, 12, {2: make_strategy("equivocate:shuffle")})
    assert result.caught, result.verdicts
    assert any("P-1.3" in v for v in result.verdicts), result.verdicts


def test_kept_messages_counts_what_a_session_holds() -> None:
    h = Harness("sixes", 3, {"chips": 1}, seed=2)
    h.run(until=lambda x: all(s.stage == "play" for s in x.sessions))
    kept = kept_messages(h.sessions[0])
    for seat in range(3):
        count, size = kept[h.settings.seats[seat].peer_id]
        assert count >= 3 and size > 1000  # seed commit and reveal, shuffle, lock, open at least


def test_the_invariant_checker_sees_a_framed_seat() -> None:
    """The checker must be able to fail: a replayed blame that convicts an honest seat shows as I1
    (on main; once finding 1 is fixed nobody is convicted and the check holds)."""
    result = run_adversarial("sixes", 3, {"chips": 1}, 3, {1: make_strategy("replay-other-table-blame:p.keys")})
    framed = [v for v in result.violations if v.invariant == "I1"]
    convicted = [v for v in result.verdicts if "blamed 2" in v]
    assert bool(framed) == bool(convicted)
