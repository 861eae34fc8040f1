"""Proofs from a cheat that show nothing, or that name messages nobody brings, must not make an honest
seat keep (journal) without bound (P-6.6: per-author caps by count and bytes; proofs refer by digest to
messages the receiver holds), and expose nobody (P-6.1). The attacks are in tests/sim/proofs.py."""

from __future__ import annotations

from sim import Spec, run


def test_refused_proofs_sent_again_and_again_are_not_kept_without_bound() -> None:
    result = run(Spec(7, "sixes", 3, '{"chips":1}', adversaries=((2, "proofspam"),)))
    assert result.firings, "the attack never fired"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"


def test_proofs_naming_messages_that_never_come_are_kept_within_a_cap() -> None:
    result = run(Spec(7, "sixes", 3, '{"chips":1}', adversaries=((2, "proofref"),)))
    assert result.firings, "the attack never fired"
    assert result.ok, f"{result.summary()}\nreplay: {result.spec.command()}"
    assert max(result.kept_bytes.values()) < 1 << 20, result.summary()
