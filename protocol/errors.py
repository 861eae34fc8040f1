"""Typed errors of the table protocol.

Every refusal names the property of `shared/specs/protocol.md` it enforces (``rule``, e.g. ``P-4.4``)
and says in words what was wrong (``message``). Two kinds matter to callers:

* `ProtocolError`: input that must be refused, but that does not by itself prove who is at fault
  (a forged or corrupted packet could come from anyone on the LAN);
* `CheatDetected`: input that is provably the work of one seat (it carries that seat's signature,
  or breaks a rule only that seat could break). ``seat`` names it, or is ``None`` when the fault is
  certain but its author is only found later (the end-of-round audit names it).
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Input the protocol refuses; ``rule`` is the property id (``P-1.3``), ``message`` the reason."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message


class CheatDetected(ProtocolError):
    """Proof that a seat broke the protocol; ``seat`` is the seat to blame (``None``: not yet known)."""

    def __init__(self, rule: str, message: str, seat: int | None) -> None:
        who = "unknown seat" if seat is None else f"seat {seat}"
        # The base keeps rule and message; the text shown to people also says who is to blame.
        super().__init__(rule, message)
        self.args = (f"{rule}: {who}: {message}",)
        self.seat = seat
        # Signed messages of the accused the check read, published with the blame beside the message
        # that triggered it: a seat holding other versions of them gets the fork proof from it (I2).
        self.evidence: tuple[dict[str, object], ...] = ()
