"""Red team 8: attacks on 8ffff55 (red team 7's fixes: a decision due after this seat's own claim is
not owed; an over seat convicts on a complete set of claims; a reference to a held message stands for
it; a waiting blame is read again only after `progress` moved) and on 4b0db40 (a claimant still
handles the others' messages and takes its automatic steps, making no decision).

Each test is an attack by a modified client at one or two seats, the real `TableSession` everywhere
else, checked with `protocol.testing.check_invariants` (I1 no honest seat blamed, I2 honest seats agree,
I3 nothing raises, I4 every table ends, I6 bounded resources). An attack that breaks an invariant is a
strict xfail, the comment "BROKE" above it saying what breaks and where in the code; an attack the code
withstands is a plain test that asserts the invariants on a table where the attack fired (`applied > 0`).
"""

from __future__ import annotations

import pytest
from test_redteam7 import HeavyPendingBlameItems
from test_redteam_equiv import STEP

import protocol.signed as signed_module
from protocol.identity import PublicIdentity
from protocol.signed import SignedMessage, sign_message
from protocol.testing import TICK, Faults, Harness

# --- 1: a waiting blame read again on every held message -------------------------------------------


def _pending_heavy_blame(variant: str) -> Harness:
    """Red team 7's heavy pending blame (seat 2 blames seat 0, waiting at seat 1 on a `secrets` item)."""
    attack = HeavyPendingBlameItems(bystander=1, variant=variant)
    h = Harness(
        "sixth-sense", 3, {}, seed=3, step_timeout=STEP, turn_timeout=3 * STEP, adversaries={2: attack},
        catch=True, faults=Faults(gossip_delay=0.05),
    )  # fmt: skip
    h.run(until=lambda x: bool(x.sessions[1].pending_blames), max_deliveries=60_000, tick_every=TICK, max_time=100)
    assert attack.blame is not None and 2 in h.sessions[1].pending_blames
    return h


def _held_junk(h: Harness, count: int) -> list[bytes]:
    """Seat 2's own small, validly signed moves at seqs its chain never reaches: each is held as an
    out-of-order message (`inbox._hold`: one signature check, then kept within `MAX_HELD`)."""
    identity, table = h.identities[2], h.settings.table
    rnd = h.sessions[1].round_index
    return [
        sign_message(identity, table, rnd, (1 << 20) + i, "00" * 32, "move", {"step": 0}).to_wire()
        for i in range(count)
    ]


# BROKE (I6, CPU): a waiting blame is read again whenever `progress` moved (`blame._on_blame`), and
# `inbox._hold` bumps `progress` for every out-of-order message it keeps. A held message costs its
# sender nothing (not charged to any quota: `_hold` says so; up to `MAX_HELD` = 4096 per chain),
# so red team 7's heavy pending blame is re-read, every item's signature checked
# again, on every held message: ~580 checks per 0.3 KB input ("claims"), as on every duplicate before
# 8ffff55. 4096 held messages per chain (public, and each private channel) pin seat 1 for minutes.
# Repro: .venv/bin/pytest -n 0 tests/test_redteam8.py -k held_message
@pytest.mark.xfail(strict=True, reason="red team 8 #1: a held message bumps progress: the heavy blame re-read (I6)")
@pytest.mark.parametrize("variant", ["claims", "forks", "own"])
def test_a_pending_blame_is_not_reread_on_every_held_message(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    h = _pending_heavy_blame(variant)
    junk = _held_junk(h, 10)
    checks = [0]
    verify = signed_module.SignedMessage.verify

    def counting_verify(self: SignedMessage, public_key: PublicIdentity) -> None:
        checks[0] += 1
        verify(self, public_key)

    monkeypatch.setattr(signed_module.SignedMessage, "verify", counting_verify)
    for data in junk:
        h.sessions[1].receive(2, data, h.now)
    assert h.sessions[1].stage != "ended"
    assert len(h.sessions[1].held) >= 10  # every one kept: it fired
    assert checks[0] / 10 <= 50, f"{checks[0] / 10} signature checks per held message"
