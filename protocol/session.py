"""The table session (P-1 … P-5): kept importable here; the code lives in `protocol.table`."""

from protocol.table._state import CHOICE_TAG, PROTOCOL_VERSION, SEED_TAG
from protocol.table.session import TableSession
from protocol.table.values import (
    Blamed,
    Dealt,
    Event,
    GameOver,
    Moved,
    NetworkLost,
    Output,
    PeekResult,
    Refused,
    RoundAudited,
    Send,
    Stopped,
    TableSettings,
    Verdict,
    Waiting,
    private_channel,
)

__all__ = [
    "CHOICE_TAG",
    "PROTOCOL_VERSION",
    "SEED_TAG",
    "Blamed",
    "Dealt",
    "Event",
    "GameOver",
    "Moved",
    "NetworkLost",
    "Output",
    "PeekResult",
    "Refused",
    "RoundAudited",
    "Send",
    "Stopped",
    "TableSession",
    "TableSettings",
    "Verdict",
    "Waiting",
    "private_channel",
]
