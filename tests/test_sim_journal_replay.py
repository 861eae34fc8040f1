"""Every input that changes what a seat holds is journaled, so a seat that crashes and restarts from
its journal signs exactly what it had signed (P-5.6) and ends with the rounds the others end with
(P-6.2). The attack is `forkthenpast` (tests/sim/stops.py): a cheat forks its first message of a new
round (and is exposed), then sends another version of its last step of the confirmed round before."""

from __future__ import annotations

from sim import Spec, run


def test_a_proof_against_an_exposed_seat_that_voids_a_confirmed_round_is_journaled() -> None:
    spec = Spec(5, "take6", 4, "{}", 2, ((3, "forkthenpast:0.05"),), ("crash:1@13.42+3",))
    result = run(spec)
    assert len(result.firings) == 2, "the attack did not fire"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"


def test_the_same_attack_without_a_crash_voids_the_round_at_every_honest_seat() -> None:
    result = run(Spec(5, "take6", 4, "{}", 2, ((3, "forkthenpast:0.05"),)))
    assert result.ok, result.summary()
    assert set(result.confirmed.values()) == {0}, result.summary()
    assert all(seats == {3} for seats in result.exposed.values()), result.summary()
