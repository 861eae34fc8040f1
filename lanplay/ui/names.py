"""Who is who on a table screen: every seat's short, distinct name and a marker of its own.

The seats' names are what the signed plan and the record hold (at most 40 characters, bots named after the
laptop that runs them: `Alexandra's bot 2`). A screen of 80 columns has room for about nine characters of a
name in its scoreboard, trick lines and log, so each seat is shown as its marker and a short name that no
other seat shares, the same everywhere on the screen (scoreboard, trick, rows, chosen line, log, dialogs):

- a person's name as it is, cut to `SHORT` characters with `…` when longer;
- a bot as its host's name, cut, and `·bot` with a number counted in seat order among that host's bots
  (`Alex·bot1`), whatever number its full name carries;
- names still alike after that end in a digit in seat order (`Dan1`, `Dan2`).

The marker is one glyph per seat (`MARKERS`), so even two seats with alike names are told apart at a glance.
Only the screen uses these: the record and the lists with fingerprints keep the full names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SHORT = 9  # characters of a shown name (the marker comes before it)
MARKERS = ("●", "▲", "■", "◆", "▼", "♣", "♠", "♥", "♦", "✚")  # one per seat: take6 seats up to 10
_BOT = re.compile(r"^(?P<host>.+)'s bot (?P<number>\d+)$")


def marker(seat: int) -> str:
    return MARKERS[seat % len(MARKERS)]


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1].rstrip() + "…"


def short_names(players: Sequence[str], width: int = SHORT) -> tuple[str, ...]:
    """Each seat's shown name: at most `width` characters, and no two alike."""
    shown: list[str] = []
    bots_of: dict[str, int] = {}
    for name in players:
        found = _BOT.match(name)
        if found is None:
            shown.append(_cut(name.strip() or "?", width))
            continue
        host = found["host"]
        bots_of[host] = bots_of.get(host, 0) + 1
        tail = f"·bot{bots_of[host]}"
        shown.append(host[: max(1, width - len(tail))].rstrip() + tail)
    for name in set(shown):
        seats = [seat for seat, other in enumerate(shown) if other == name]
        if len(seats) > 1:
            for number, seat in enumerate(seats, 1):
                digits = str(number)
                shown[seat] = name[: width - len(digits)] + digits
    return tuple(shown)
