"""What the simulator knows of the wire: a signed message's envelope (protocol.signed, P-1.3).

The only module of tests/sim that reads message fields. An attack sees a `Message` (kind, seq,
round, author seat, body) and asks the context for new signed versions; it never builds bytes itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from protocol.identity import Identity
from protocol.signed import SignedMessage, sign_message


def parse(data: bytes) -> SignedMessage | None:
    """The signed message in `data`, or None where it is not one (garbage, another framing)."""
    try:
        return SignedMessage.from_wire(data)
    except Exception:
        return None


def resign(identity: Identity, msg: SignedMessage, **changes: Any) -> SignedMessage:
    """`msg` signed again by `identity` with some envelope fields or the body changed
    (`body`, `kind`, `round`, `seq`, `prev`, `table`)."""
    fields: dict[str, Any] = {
        "table": msg.table,
        "round": msg.round,
        "seq": msg.seq,
        "prev": msg.prev,
        "kind": msg.kind,
        "body": msg.body,
    }
    fields.update(changes)
    return sign_message(
        identity, fields["table"], fields["round"], fields["seq"], fields["prev"], fields["kind"], fields["body"]
    )


def substitute(value: object, digests: Mapping[str, str]) -> object:
    """`value` with every string that is a key of `digests` replaced by its value (a JSON tree)."""
    if isinstance(value, str):
        return digests.get(value, value)
    if isinstance(value, list):
        return [substitute(v, digests) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, digests) for k, v in value.items()}
    return value
