"""The table's wire vocabulary: message kinds, the history every message names, caps and channels.

Every signed message (P-1.3) of a table is signed under a channel id (its ``table`` field) and a round:
public messages under the table id itself, private ones under `private_channel` (one per ordered pair of
seats). Sequence numbers restart at 0 on every (channel, round), so a round is self-contained: its state
at the start is the record of the rounds confirmed before it, which every message names by digest.

The history a message names (P-5.2) is its body's ``on`` field:

    "on": {"rec": <digest of the confirmed record before this round>,
           "heads": [[seq, digest] or null, one per seat],   # the last public message of each seat held
           "got": [count, one per seat]}                      # private messages received from each seat

``heads[author]`` must be the author's own previous message (its ``seq - 1`` and ``prev``). A message is
judged only on the history it names (`protocol.table.ledger`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from protocol.encoding import JSONObject, canonical, sha256_hex
from protocol.errors import CheatDetected

# The protocol's version, pinned in every plan (P-6.7): seats of different versions never judge each other.
PROTOCOL_VERSION = 3

SEED_TAG = "lanplay/seed"
CHOICE_TAG = "lanplay/choice"
PRIVATE_DOMAIN = b"lanplay/private-channel/v1\x00"
RECORD_DOMAIN = b"lanplay/record-prefix/v1\x00"

# Public kinds that are steps of the round: each is owed by some seat at some point, and is taken
# (consumed) when the round reaches that point (`ledger.RoundLedger`).
STEP_KINDS = frozenset({"seed.commit", "seed.reveal", "shuffle", "lock", "open", "move", "commit", "reveal", "secrets"})
# Public kinds that are notes beside the steps: taken as soon as their history is here.
NOTE_KINDS = frozenset({"stop", "leave", "wait", "end"})
PRIVATE_KINDS = frozenset({"p.keys", "p.peek"})
PUBLIC_KINDS = STEP_KINDS | NOTE_KINDS
KINDS = PUBLIC_KINDS | PRIVATE_KINDS

# P-6.6: what one seat may make another keep.
MAX_ROUND_MESSAGES = 2000  # messages one author may send in one round (public and private)
MAX_ROUND_BYTES = 2 << 20  # ... and their bytes (an honest busiest round is about 400 KiB: 6 nimmt!, 10 seats)
MAX_BODY_BYTES = 96 << 10  # an honest seat's largest message is a 104-card lock pass, about 30 KiB
MAX_TEXT = 300  # characters of peer-written text (a stop's reason) kept
MAX_ROUNDS = 10_000  # no game has more rounds than this
STEP_KEY = re.compile(r"0|[1-9][0-9]{0,8}")  # a step number in ASCII digits ("²".isdigit() is True)
_DIGEST = re.compile(r"[0-9a-f]{64}")

# What each owed step is called on a screen.
OWED_WORDS: Mapping[str, str] = {
    "seed.commit": "seed commitment",
    "seed.reveal": "seed reveal",
    "shuffle": "shuffle pass",
    "lock": "lock pass",
    "open": "table card keys",
    "open.late": "late trump keys",
    "move": "move",
    "commit": "hidden choice",
    "reveal": "choice reveal",
    "secrets": "round secrets",
    "p.keys": "hand keys",
    "p.peek": "peek answer",
    "end": "end signature",
}


def private_channel(table: str, author: str, recipient: str) -> str:
    """The channel id private messages from `author` to `recipient` are signed under: they can never
    be replayed to another seat or mistaken for a public message (P-1.3)."""
    data = PRIVATE_DOMAIN + table.encode() + bytes.fromhex(author) + bytes.fromhex(recipient)
    return hashlib.sha256(data).digest()[:16].hex()


def record_digest(rounds: Sequence[JSONObject]) -> str:
    """The digest of the confirmed rounds before a round: what its messages name in ``on.rec``."""
    return sha256_hex(RECORD_DOMAIN + canonical(list(rounds)))


def is_digest(value: object) -> bool:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def is_index(value: object, bound: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < bound


@dataclass(frozen=True, slots=True)
class History:
    """The history a message names (P-5.2)."""

    rec: str
    heads: tuple[tuple[int, str] | None, ...]
    got: tuple[int, ...]

    def to_json(self) -> JSONObject:
        return {
            "rec": self.rec,
            "heads": [None if head is None else [head[0], head[1]] for head in self.heads],
            "got": list(self.got),
        }

    def holds(self, seat: int, seq: int) -> bool:
        """The message at `seq` of `seat`'s public chain is part of this history."""
        head = self.heads[seat]
        return head is not None and seq <= head[0]

    def count(self, seat: int) -> int:
        """How many of `seat`'s public messages this history holds."""
        head = self.heads[seat]
        return 0 if head is None else head[0] + 1


def read_history(
    body: Mapping[str, object], n: int, author: int, seq: int, prev: str, private: bool = False
) -> History:
    """The ``on`` field of a body, shape-checked (P-6.3); a malformed one is its author's fault. A
    public message names its own previous message as its author's head; a private one (on a chain of
    its own) names the author's public chain like any other."""
    raw = body.get("on")
    if not isinstance(raw, Mapping) or set(raw) != {"rec", "heads", "got"}:
        raise CheatDetected("P-5.2", "a message must name its history: 'on' with rec, heads and got", author)
    rec, heads_raw, got_raw = raw["rec"], raw["heads"], raw["got"]
    if not is_digest(rec):
        raise CheatDetected("P-5.2", "'on.rec' must be a digest", author)
    if not isinstance(heads_raw, list) or len(heads_raw) != n or not isinstance(got_raw, list) or len(got_raw) != n:
        raise CheatDetected("P-5.2", f"'on.heads' and 'on.got' must have one entry per seat ({n})", author)
    heads: list[tuple[int, str] | None] = []
    for item in heads_raw:
        if item is None:
            heads.append(None)
            continue
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not is_index(item[0], MAX_ROUND_MESSAGES)
            or not is_digest(item[1])
        ):
            raise CheatDetected("P-5.2", "a head in 'on.heads' must be [seq, digest] or null", author)
        heads.append((item[0], item[1]))
    got: list[int] = []
    for item in got_raw:
        if not is_index(item, MAX_ROUND_MESSAGES):
            raise CheatDetected("P-5.2", "'on.got' entries must be counts", author)
        got.append(item)
    own = heads[author]
    if private:
        return History(rec, tuple(heads), tuple(got))
    if seq == 0 and own is not None:
        raise CheatDetected("P-5.2", "a first message names a message of its own before it", author)
    if seq > 0 and own != (seq - 1, prev):
        raise CheatDetected("P-5.2", "'on.heads' must name the author's own previous message", author)
    return History(rec, tuple(heads), tuple(got))


def body_fields(body: Mapping[str, object], allowed: frozenset[str], author: int, what: str) -> None:
    """A body has exactly the fields of its kind (and ``on``): anything else is its author's fault."""
    extra = set(body) - allowed - {"on"}
    if extra:
        names = ", ".join(sorted(str(key)[:20] for key in extra))
        raise CheatDetected("P-6.3", f"a {what} with unexpected field(s) {names}", author)


def clean_text(value: object) -> str:
    """Peer-written text as shown: no control characters, bounded length (P-6.7)."""
    text = value if isinstance(value, str) else ""
    return "".join(ch if ch.isprintable() else " " for ch in text[:MAX_TEXT])
