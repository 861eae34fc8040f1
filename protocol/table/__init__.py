"""The table session, one module per phase (see `protocol.table._state` for the stages)."""

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
