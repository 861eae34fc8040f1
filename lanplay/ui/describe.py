"""Words for people that are the same for every game: names, record moves, a record's fault, where the bots
run. What is a game's own (a trick's story, where a 6 nimmt! card went, a round of a replay) is told by its
bundle's words (lanplay/games/GAME/words.py), with these.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.record import RecordFault
from protocol.plan import bot_seats

if TYPE_CHECKING:
    from lanplay.net.lobby import SeatInfo

# --- names ---------------------------------------------------------------------------------------------


def seat_name(players: Sequence[str], seat: int | None) -> str:
    if seat is None:
        return "nobody"
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"


def default_player_name() -> str:
    """The login name, so a sentence reads "Ann plays R5" rather than "You plays R5"."""
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = ""
    return login.capitalize()[:12] or "Player"


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# --- moves and records -------------------------------------------------------------------------------


def move_text(players: Sequence[str], move: dict[str, object], card_name: Callable[[str], str] = str) -> str:
    """One record move as a person reads it: 'Ann plays R5', 'Ann plays R0, blocking Y4'; `card_name` names a
    card as the game shows it (its bundle's words)."""
    seat = move.get("seat")
    who = seat_name(players, seat if isinstance(seat, int) else None)
    if "predict" in move:
        shown = f" ({card_name(str(move['predict']))})" if move["predict"] else ""
        return f"{who} lays a prediction card{shown}"
    if "play" in move:
        text = f"{who} plays {card_name(str(move['play']))}"
        if "as" in move:
            text += f" as {move['as']}"
        if "block" in move:
            text += f", blocking {card_name(str(move['block']))}"
        return text
    if "split" in move:
        return f"{who} {'splits the trick: it counts as two' if move['split'] else 'keeps the trick as one'}"
    if "take_row" in move:
        row = move["take_row"]
        return f"{who} takes row {row + 1 if isinstance(row, int) else row}"
    if "pick" in move:
        return f"{who} picks {move['pick']}"
    if move.get("pass"):
        return f"{who} passes"
    return f"{who}: {move}"


def fault_text(fault: RecordFault, players: Sequence[str] | None) -> str:
    """A record's fault in the replay's own numbering and names ("Round 1, move 12, Bot 1"); the JSON
    error object keeps the spec's 0-based indexes."""
    where = []
    if fault.round is not None:
        where.append(f"Round {fault.round + 1}")
    if fault.move is not None:
        where.append(f"move {fault.move + 1}")
    if fault.seat is not None:
        where.append(seat_name(players, fault.seat) if players else f"seat {fault.seat + 1}")
    return f"faulty record ({', '.join(where) or 'header'}): {fault.rule}: {fault.message}"


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def bot_lines(seats: Sequence[SeatInfo]) -> list[str]:
    """'Bot 1 runs on Ann's laptop, which can see its cards.' for every bot seat."""
    lines = []
    for bot, host in bot_seats(seats):
        name = seats[bot].name
        if host is None:
            lines.append(f"{name} runs on a laptop of its own: no seat here can see its cards.")
        else:
            lines.append(f"{name} runs on {seats[host].name}'s laptop, which can see its cards.")
    return lines
