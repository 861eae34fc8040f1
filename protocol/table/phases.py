"""The table session's phases and the events that move it between them, in one table (as h11 does it).

A seat's phase is derived from what its round's ledger has taken (`TableSession.phase`), so it can never
disagree with the messages; this table states which changes are possible and what causes each.

| from | to | caused by |
| --- | --- | --- |
| seed | deal | every seat's seed reveal taken: the first dealer is drawn (P-3.2) |
| deal | play | every lock pass and every seat's table keys taken (P-4.2, P-4.3) |
| play | audit | the engine ends the round's play, or a card opens to no card, or every seat passed (X-2.4) |
| audit | deal | every seat's secrets taken and the audit confirms the round (P-5.3) |
| audit | ending | ... and it was the game's last round |
| seed, deal, play, audit | stopping | a stop, a leave, or a refused message taken, or a proof verified (P-5.4, P-5.5) |
| stopping | ending | every seat's secrets taken and audited, or every seat still owing them stopped for them |
| ending | finished | every present seat signed the same record digest (P-5.8) |

A stop convicts nobody; only `verify` exposes a seat. `finished` is final.
"""

from __future__ import annotations

from typing import Literal

Phase = Literal["seed", "deal", "play", "audit", "stopping", "ending", "finished"]

TRANSITIONS: frozenset[tuple[Phase, Phase]] = frozenset(
    {
        ("seed", "deal"),
        ("deal", "play"),
        ("play", "audit"),
        ("audit", "deal"),
        ("audit", "ending"),
        *((phase, "stopping") for phase in ("seed", "deal", "play", "audit")),
        ("stopping", "ending"),
        ("ending", "finished"),
    }
)
