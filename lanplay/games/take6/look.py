"""The 6 nimmt! table: four rows with bullheads, who has chosen, the last reveal, penalties; the
pool while drafting (logic, T-5.2) and a note for profi rows (T-5.3)."""

from __future__ import annotations

from typing import Any

from engine.api import IllegalMove
from engine.take6 import BULLHEADS, HAND_SIZE, HIDDEN, ROW_LIMIT, Pick, Take6State, TakeRow, row_bullheads
from lanplay.ui.i18n import Msg
from lanplay.ui.lines import Line, Lines, clicker, flow, hand_with_options, me_mark, text_line
from lanplay.ui.values import Choice, TableView

CARD_MARK = ""
OWN_GRID_KINDS = frozenset({"take_row"})  # the rows on the table are the options and record their own places
HIGHEST_FIRST = False  # T-4.2: the fewest bullheads win
NUMBERS_ARE_CARDS = True  # 6 nimmt! cards are numbers: typing 62 picks card 62

_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def card_look(code: str) -> tuple[str, str]:
    """A card with its bullheads as a small number: 55⁷ (T-1.1)."""
    bulls = BULLHEADS[int(code)]
    return f"class:bulls{bulls}", code + str(bulls).translate(_SUPERSCRIPT)


def header_detail(model: TableView) -> str:
    view: Take6State = model.view
    parts = []
    if view.round_index >= 0:
        parts.append(model.text("round_n", round=view.round_index + 1))
    if view.stage in ("play", "take_row"):
        parts.append(model.text("trick_turn", turn=min(view.turn + 1, HAND_SIZE), turns=HAND_SIZE))
    options = [name for name, on in (("tactic", view.options.tactic), ("logic", view.options.logic),
                                     ("profi", view.options.profi)) if on]
    if options:
        parts.append("+".join(options))
    return " · ".join(parts)


def _rows(model: TableView, width: int) -> Lines:
    view: Take6State = model.view
    choosing_row = model.kind == "take_row" and model.question is None
    lines: Lines = []
    if choosing_row:  # T-3.5: the rows are the options, one per screen line (↑↓ move between them)
        model.option_grid = {index: (index, 0) for index in range(len(view.rows))}
    for index, row in enumerate(view.rows):
        label = model.text("row_n", row=index + 1)
        if choosing_row:
            selected = model.cursor == index
            head: Line = [("class:button class:cursor" if selected else "class:button", f"{label:<6}",
                           clicker(model, index))]
        else:
            head = [("class:label", f"{label:<6}")]
        cells: Line = []
        for card in row:
            style, text = card_look(str(card))
            cells += [("", " "), (style, f"{text:>4}")]
        for _ in range(ROW_LIMIT - len(row)):
            cells += [("", " "), ("class:disabled", "   ·")]
        full = len(row) >= ROW_LIMIT
        bulls = model.text("bullheads_short", bulls=row_bullheads(row))
        lines.append([*head, *cells, ("class:error" if full else "class:disabled", f"  {bulls}")])
    return lines


def table_area(model: TableView, width: int) -> Lines:
    view: Take6State = model.view
    if view.round_index < 0:
        return []
    lines = _rows(model, width)
    if view.options.profi:
        lines.append(text_line(model.text("profi_note"), "class:disabled"))
    lines.append(text_line(""))
    if view.stage in ("deal", "over"):
        return lines + _results(model)
    if view.stage in ("play", "reveal"):
        chosen: list[Line] = [[("class:label", model.text("chosen_label") + ":")]]
        committed = model.recent.get("committed", ())
        for seat, card in enumerate(view.chosen):
            if card is None and seat in committed:  # a networked table: committed, not yet revealed
                mine = model.recent.get("my_choice") if seat == model.my_seat else None
                if mine is not None:
                    chosen.append([("class:ok", f"✓{model.name(seat)} "), (card_look(str(mine))[0], str(mine))])
                else:
                    chosen.append([("class:ok", f"✓{model.name(seat)}")])
            elif card is None:
                chosen.append([("class:disabled", f"·{model.name(seat)}")])
            elif seat == model.my_seat and card != HIDDEN:
                chosen.append([("class:ok", f"✓{model.name(seat)} "), (card_look(str(card))[0], str(card))])
            else:
                chosen.append([("class:ok", f"✓{model.name(seat)}")])
        lines.extend(flow(chosen, width))
    if view.stage == "take_row" and view.pending:
        items: list[Line] = [[("class:label", model.text("pending_label") + ":")]]
        for card, seat in view.pending:
            items.append([("", model.name(seat) + " "), (card_look(str(card))[0], str(card))])
        lines.extend(flow(items, width, gap=2))
    last = model.recent.get("last_reveal")
    if last:
        items = [[("class:label", model.text("last_reveal") + ":")]]
        for card, seat in last:
            items.append([("", model.name(seat) + " "), (card_look(str(card))[0], str(card))])
        lines.extend(flow(items, width, gap=2))
    if view.options.logic:
        lines.extend(_public_hands(model, width))
    return lines


def _public_hands(model: TableView, width: int) -> Lines:
    """T-5.2: with logic every hand is public knowledge."""
    view: Take6State = model.view
    lines: Lines = [text_line(model.text("hands_public"), "class:label")]
    for seat, hand in enumerate(view.hands):
        if seat == model.my_seat or hand is None:
            continue
        text = " ".join(str(card) for card in hand)
        lines.append(text_line(f" {model.name(seat):<10} {text}"[:width]))
    return lines


def _results(model: TableView) -> Lines:
    view: Take6State = model.view
    names = max(6, *(len(model.name(s)) for s in range(view.players)))
    lines: Lines = [text_line(model.text("round_results", round=view.round_index + 1), "class:label")]
    lines.append(text_line(f" {'':<{names}} {model.text('col_bulls')[:7]:>7} {model.text('col_total'):>6}",
                           "class:disabled"))
    for seat in range(view.players):
        penalty = view.penalty[seat]
        lines.append([("", f" {model.name(seat):<{names}} "),
                      ("class:error" if penalty else "class:ok", f"{penalty:>7}"),
                      ("", f" {view.totals[seat]:>6}")])
    return lines


def scores(model: TableView, width: int) -> Lines:
    view: Take6State | None = model.view
    if view is None:
        return []
    names = width - 15
    lines: Lines = [text_line(
        f"{model.text('scores'):<{names}} {model.text('col_round')[:6]:>6} {model.text('col_total')[:6]:>6}",
        "class:label")]
    for seat in range(view.players):
        chose = view.chosen[seat] is not None or seat in model.recent.get("committed", ())
        mark = "✓" if view.stage == "play" and chose else " "
        style = "class:me" if seat == model.my_seat else ""
        name = f"{me_mark(model, seat)}{model.name(seat)[: names - 1]}"
        lines.append(text_line(f"{name:<{names}} {mark}{view.penalty[seat]:>5} {view.totals[seat]:>6}", style))
    return lines


def hand_area(model: TableView, width: int) -> Lines:
    view: Take6State | None = model.view
    if view is None or view.round_index < 0:
        return hand_with_options(model, [], width)
    hand = [str(card) for card in view.hands[model.my_seat] or ()]
    if view.stage == "pick":
        pool = [str(card) for card in view.pool]
        lines = hand_with_options(model, pool, width, title=model.text("pool_title"))
        mine: list[Line] = [[(card_look(code)[0], card_look(code)[1])] for code in hand]
        lines.append(text_line(f"{model.text('your_hand')} ({len(hand)})", "class:label"))
        lines.extend(flow(mine, width - 1, indent=1))
        return lines
    return hand_with_options(model, hand, width)


# --- what the player points at ---------------------------------------------------------------------------


def choices(view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Choice, ...]:
    if moves and isinstance(moves[0], TakeRow):
        return tuple(Choice("row", str(m.row), (m,)) for m in moves)
    if moves and isinstance(moves[0], Pick):
        return tuple(Choice("card", str(m.card), (m,)) for m in moves)
    return tuple(Choice("card", str(m.card), (m,)) for m in moves)


def prompt(model: TableView) -> Msg:
    kind = model.kind
    if kind == "take_row":
        pending = model.view.pending if model.view is not None else ()
        return Msg("your_turn_take_row", {"card": pending[0][0] if pending else "?"})
    if kind == "pick":
        return Msg("your_turn_pick")
    return Msg("your_turn_choose")


def refusal(model: TableView, option: Choice, exc: IllegalMove) -> Msg | None:
    return None
