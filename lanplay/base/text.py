"""Text from other laptops, made safe to show (I7).

Player names, table names, blame reasons and rule ids come from peers: a modified client can put
terminal escapes in them (ANSI colour, cursor moves, OSC window titles or hyperlinks, a bell) or
bidirectional overrides that make text read differently from what it is. `shown` is the one place
that strips them; every display boundary (lobby list, table header, blame lines) passes peer text
through it. The text a peer signed is left as it is (records and evidence stay verifiable); only
what reaches the screen is cleaned.
"""

from __future__ import annotations

import re
import unicodedata

# A whole escape sequence, so no visible residue ("[31m") is left behind: CSI (ESC [ or the C1 CSI,
# parameters, final byte), OSC/DCS/PM/APC/SOS strings up to their terminator (BEL or ST), and
# two-character ESC sequences.
_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# Bidirectional embeddings, overrides and isolates, and the zero-width marks around them.
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c")


def shown(text: object, limit: int | None = None) -> str:
    """``text`` as it may be put on a screen: escape sequences removed whole, then every other C0 and
    C1 control, DEL, and bidirectional control dropped (a tab or newline becomes a space); cut to
    ``limit`` characters (with "…") when given. Anything that is not a string is shown by its str()."""
    raw = text if isinstance(text, str) else str(text)
    raw = _ESCAPE.sub("", raw)
    out = []
    for char in raw:
        if char in "\t\n\r":
            out.append(" ")
        elif char in _BIDI or unicodedata.category(char) in ("Cc", "Cs"):  # C0, DEL, C1; lone surrogates
            continue
        else:
            out.append(char)
    cleaned = "".join(out)
    if limit is not None and len(cleaned) > limit:
        cleaned = cleaned[: max(0, limit - 1)] + "…"
    return cleaned
