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
    """Input only one seat could have produced; ``seat`` names it (``None``: certain, but only the audit
    can say whose). The ledger turns it into a refusal of the message that carried it."""

    def __init__(self, rule: str, message: str, seat: int | None) -> None:
        who = "unknown seat" if seat is None else f"seat {seat}"
        # The base keeps rule and message; the text shown to people also says whose input it was.
        super().__init__(rule, message)
        self.args = (f"{rule}: {who}: {message}",)
        self.seat = seat
