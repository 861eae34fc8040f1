"""The pieces every screen is drawn with: a line is a list of prompt_toolkit fragments (style, text and
maybe a mouse handler); text wrapped and flowed into lines; a hand of cards with the player's options.
A game's look (lanplay/games/GAME/look.py) draws its table with these; screens.py puts the screen together.
prompt_toolkit is only named for the type checker here, so a program that only tells a game in words
(a bot, `lanplay replay`) does not load it.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import OneStyleAndTextTuple, StyleAndTextTuples
    from prompt_toolkit.mouse_events import MouseEvent

from lanplay.ui.values import Choice, TableView

Line: TypeAlias = "list[OneStyleAndTextTuple]"
Lines: TypeAlias = "list[Line]"


def join(lines: Sequence[Line]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for index, line in enumerate(lines):
        if index:
            out.append(("", "\n"))
        out.extend(line)
    return out


def plain(lines: Sequence[Line]) -> str:
    return "\n".join("".join(fragment[1] for fragment in line) for line in lines)


def line_width(line: Line) -> int:
    return sum(len(fragment[1]) for fragment in line)


def text_line(text: str, style: str = "") -> Line:
    return [(style, text)]


def wrap_text(text: str, width: int, style: str = "", indent: str = "", first: str = "") -> Lines:
    """Words wrapped at spaces only: a card code, a name with a hyphen or a path never breaks inside."""
    parts = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False)
    return [text_line(part, style) for part in parts or [""]]


def flow(
    items: Sequence[Line], width: int, gap: int = 1, indent: int = 0, places: list[tuple[int, int]] | None = None
) -> Lines:
    """Lay items (each a short run of fragments) left to right, wrapping at `width`. `places`, if
    given, receives each item's (line, column), so keys can move by screen row."""
    lines: Lines = []
    current: Line = [("", " " * indent)] if indent else []
    used = indent
    for item in items:
        size = line_width(item)
        if used > indent and used + gap + size > width:
            lines.append(current)
            current, used = ([("", " " * indent)] if indent else []), indent
        if used > indent:
            current.append(("", " " * gap))
            used += gap
        if places is not None:
            places.append((len(lines), used))
        current.extend(item)
        used += size
    if current and used > indent:
        lines.append(current)
    return lines


def path_pieces(path: str) -> list[str]:
    """A path cut after each `/`, `-` or `_`: the places a line may break it."""
    return re.findall(r"[^/\-_]+[/\-_]?|[/\-_]", path)


def wrap_path(path: str, width: int) -> list[str]:
    """A file path in lines of at most `width`, broken only after a `/`, `-` or `_`: never mid-word
    (a single piece longer than `width` is cut only as a last resort, where no wider line is possible)."""
    pieces: list[str] = []
    for piece in path_pieces(path):
        pieces.extend(piece[i : i + width] for i in range(0, len(piece), width))
    lines: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(piece) > width:
            lines.append(current)
            current = ""
        current += piece
    if current:
        lines.append(current)
    return lines


def ranks(totals: Sequence[int], highest_first: bool) -> list[tuple[int, int]]:
    """(place, seat) best first; equal totals share a place and the next place skips ("1, 2, 2, 4")."""
    order = sorted(range(len(totals)), key=lambda s: totals[s], reverse=highest_first)
    sign = 1 if highest_first else -1
    return [(1 + sum(1 for other in totals if sign * other > sign * totals[seat]), seat) for seat in order]


def me_mark(model: TableView, seat: int) -> str:
    """Marks this seat's own line in the score tables."""
    return "▶" if seat == model.my_seat else " "


def clicker(model: TableView, index: int) -> Callable[[MouseEvent], None]:
    """A mouse handler that chooses option `index` on a click (prompt_toolkit calls it with the event)."""

    def handler(event: MouseEvent) -> None:
        from prompt_toolkit.mouse_events import MouseEventType  # here: start-up speed (prompt_toolkit is big)

        if event.event_type == MouseEventType.MOUSE_UP:
            model.choose(index)

    return handler


def card_fragment(model: TableView, code: str, style: str = "") -> OneStyleAndTextTuple:
    card_style, text = model.look.card_look(code)
    return (f"{card_style} {style}".strip(), text)


def option_item(model: TableView, index: int, option: Choice) -> Line:
    """One option as the player points at it: a card in its colours or a button; the cursor reverses it."""
    selected = index == model.cursor
    style = "class:cursor" if selected else ""
    if not option.enabled:
        style = f"{style} class:disabled".strip()
    handler = clicker(model, index)
    if option.kind == "card":
        card_style, text = model.look.card_look(option.code)
        mark = model.look.CARD_MARK if option.enabled else ""
        full = f"{card_style} {style}".strip() if option.enabled else style
        return [(full, f"{mark}{text}", handler)]
    if option.kind == "row":
        label = model.text("row_n", row=int(option.code) + 1)
        return [(f"class:button {style}".strip(), f"[{label}]", handler)]
    label = model.text(option.code, **option.params)
    return [(f"class:button {style}".strip(), f"[{label}]", handler)]


def hand_with_options(model: TableView, hand: Sequence[str], width: int, title: str | None = None) -> Lines:
    """The common hand block: the cards of `hand`; where the options are those cards, they carry the
    cursor and the click handlers, and the remaining options (buttons) follow on their own line."""
    options = model.options
    head = title if title is not None else model.text("your_hand")
    lines: Lines = [[("class:label", f"{head} ({len(hand)})")]]
    card_options = [o for o in options if o.kind == "card"]
    inline = model.question is None and bool(options) and [o.code for o in card_options] == list(hand)
    if inline:
        items = [option_item(model, i, o) for i, o in enumerate(options) if o.kind == "card"]
        rest = [(i, o) for i, o in enumerate(options) if o.kind != "card"]
    else:
        items = [[card_fragment(model, code)] for code in hand]
        rest = list(enumerate(options))
    places: list[tuple[int, int]] = []
    card_lines = flow(items, width - 1, indent=1, places=places)
    grid: dict[int, tuple[int, int]] = {}
    if inline:
        card_indexes = [i for i, o in enumerate(options) if o.kind == "card"]
        grid.update({index: (len(lines) + line, x) for index, (line, x) in zip(card_indexes, places, strict=True)})
    lines.extend(card_lines or [text_line(" " + model.text("no_cards"), "class:disabled")])
    if rest:
        places = []
        top = len(lines)
        lines.extend(flow([option_item(model, i, o) for i, o in rest], width - 1, gap=2, indent=1, places=places))
        grid.update({index: (top + line, x) for (index, _), (line, x) in zip(rest, places, strict=True)})
    if model.kind not in model.look.OWN_GRID_KINDS:  # such options (6 nimmt!'s rows) record their own places
        model.option_grid = grid
    return lines
