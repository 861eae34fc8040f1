"""What a signed plan pins as the version of the rules every seat judges by (P-6.7).

`RULES_DIGEST` is the SHA-256 of the table protocol version and of the source of the reference
implementation: every ``*.py`` file of the ``engine`` and ``protocol`` packages (but
``protocol/testing.py``, a test harness), by path relative to the package's parent, line ends made
``\\n``. Two laptops hold the same digest exactly when they judge messages by the same code, so a
plan that pins it is signed only by laptops that can never read each other's honest messages as
faults; a laptop with another lanplay refuses to sign and says so (`protocol.plan`, the lobby).

It is computed once, at import, from the files this process runs (a few milliseconds).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from protocol.table.messages import PROTOCOL_VERSION

_DOMAIN = b"lanplay/rules/v1\x00"
_PACKAGES = ("engine", "protocol")
_LEFT_OUT: frozenset[str] = frozenset()  # every file of both packages is run at a table


def _rules_digest() -> str:
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(_DOMAIN + str(PROTOCOL_VERSION).encode("ascii") + b"\x00")
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name in _LEFT_OUT:
                continue
            source = path.read_bytes().replace(b"\r\n", b"\n")
            digest.update(len(name).to_bytes(4, "big") + name.encode())
            digest.update(len(source).to_bytes(8, "big") + source)
    return digest.hexdigest()


RULES_DIGEST = _rules_digest()


def short(digest: str) -> str:
    """A rules digest as a person compares it: its first 12 hex digits."""
    return digest[:12]


__all__ = ["PROTOCOL_VERSION", "RULES_DIGEST", "short"]
