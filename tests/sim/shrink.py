"""Shrinking a failing table to a short schedule: drop faults, adversaries and attack firings one at a
time while the table still fails the same way (Hypothesis's and VOPR's idea, greedily)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .world import Result, Spec, run

Runner = Callable[[Spec], Result]


def shrink(result: Result, runner: Runner = run, budget: int = 80) -> Result:
    """The smallest variant of `result.spec` found within `budget` runs that still fails with one
    of the failures' kinds (the rule id each starts with)."""
    kinds = result.kinds()
    best = result
    runs = 0

    def attempt(spec: Spec) -> bool:
        nonlocal best, runs
        if runs >= budget:
            return False
        runs += 1
        candidate = runner(spec)
        if candidate.kinds() & kinds:
            best = candidate
            return True
        return False

    for i in reversed(range(len(best.spec.faults))):  # faults, one at a time
        faults = best.spec.faults[:i] + best.spec.faults[i + 1 :]
        attempt(dataclasses.replace(best.spec, faults=faults))
    for i in reversed(range(len(best.spec.adversaries))):
        adversaries = best.spec.adversaries[:i] + best.spec.adversaries[i + 1 :]
        attempt(dataclasses.replace(best.spec, adversaries=adversaries, keep=None))
    if best.spec.rounds > 1:
        attempt(dataclasses.replace(best.spec, rounds=1))
    if best.spec.adversaries:  # then the attack's firings
        keep = best.spec.keep if best.spec.keep is not None else tuple(range(len(best.firings)))
        if not attempt(dataclasses.replace(best.spec, keep=keep)):
            return best
        if attempt(dataclasses.replace(best.spec, keep=())):
            return best
        i = len(keep) - 1
        while i >= 0 and runs < budget:
            shorter = keep[:i] + keep[i + 1 :]
            if attempt(dataclasses.replace(best.spec, keep=shorter)):
                keep = shorter
            i -= 1
    return best
