"""The first dealer from a jointly random seed (P-3.2, S-2.5)."""

from __future__ import annotations

from protocol.commitment import Commitment, draw_below, joint_random, verify_opening
from protocol.errors import CheatDetected
from protocol.signed import SignedMessage
from protocol.table._core import SessionCore
from protocol.table._round import _opening
from protocol.table._state import SEED_TAG


class SeedMixin(SessionCore):
    def _on_seed_commit(self, seat: int, msg: SignedMessage) -> bool:
        if self.stage != "seed" or seat in self.seed_commits:
            raise CheatDetected("P-3.2", "a second seed commitment", seat)
        self.seed_commits[seat] = Commitment.from_hex(msg.body.get("digest"))
        if len(self.seed_commits) == self.n and self.my_seed is not None:
            opening = self.my_seed
            self._publish("seed.reveal", {"value": opening.value.hex(), "nonce": opening.nonce.hex()})
        return True

    def _on_seed_reveal(self, seat: int, msg: SignedMessage) -> bool:
        if self.stage != "seed" or len(self.seed_commits) < self.n:
            return False
        opening = _opening(msg.body, seat)
        verify_opening(self.seed_commits[seat], opening, SEED_TAG, self.settings.table, 0, seat)
        self.seed_reveals[seat] = opening.value
        if len(self.seed_reveals) == self.n:
            seed = joint_random([self.seed_reveals[s] for s in range(self.n)])
            self._start_round(draw_below(seed, self.n, "first dealer"))
        return True
