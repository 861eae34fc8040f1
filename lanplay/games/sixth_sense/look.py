"""The 6th Sense table: trump, the trick as it is played (blocked cards marked), who has predicted
(never what), my prediction, a peek I made, and every prediction once the round is scored (S-7.1)."""

from __future__ import annotations

from typing import Any

from engine.api import IllegalMove
from engine.sixth_sense import ROUNDS, SIX_NINE, Play, SixthSenseState, Split, required_colour
from lanplay.games.sixth_sense.words import TrickStory, trick_story
from lanplay.games.sixth_sense.words import card_name as _card_name
from lanplay.ui.i18n import Msg
from lanplay.ui.lines import Line, Lines, flow, hand_with_options, me_mark, text_line, wrap_text
from lanplay.ui.values import Choice, TableView

CARD_MARK = ""
OWN_GRID_KINDS: frozenset[str] = frozenset()
HIGHEST_FIRST = True
NUMBERS_ARE_CARDS = False


def card_look(code: str) -> tuple[str, str]:
    return f"class:card.{code[0].lower()}", _card_name(code)


def _card(code: str, extra: str = "") -> tuple[str, str]:
    style, text = card_look(code)
    return (f"{style} {extra}".strip(), text)


def _play_text(play: Play) -> str:
    """S-6.3: the 6/9 card shows the value declared for it: `G6/9=9`."""
    text = card_look(play.card.code)[1]
    return f"{text}={play.as_value}" if play.as_value is not None else text


def header_detail(model: TableView) -> str:
    view: SixthSenseState = model.view
    r = view.round
    parts = []
    if view.rounds_started:
        if view.options.target is None:
            parts.append(model.text("round_of", round=view.rounds_started, rounds=ROUNDS[view.players]))
        else:
            parts.append(model.text("round_to_target", round=view.rounds_started, target=view.options.target))
    if r is not None:
        parts.append(model.text("dealer", name=model.name(r.dealer)))
    return " · ".join(parts)


def _trump_line(model: TableView) -> Line:
    view: SixthSenseState = model.view
    r = view.round
    label = ("class:label", model.text("trump") + ": ")
    if view.options.beginner:
        return [label, ("", model.text("trump_none"))]
    if r is None or r.trump is None:
        return [label, ("class:disabled", model.text("trump_hidden"))]
    colour = r.trump.colour
    return [label, (f"class:card.{colour.lower()} reverse", f" {colour} "), ("", " " + model.text(f"colour_{colour}")),
            ("class:disabled", f"  ({_card_name(r.trump.code)})")]  # the 6/9 card: P6/9, not P6


def table_area(model: TableView, width: int) -> Lines:
    view: SixthSenseState = model.view
    r = view.round
    lines: Lines = [_trump_line(model), text_line("")]
    if r is None:
        return lines
    if r.points is not None:
        return lines + _results(model)
    names = max(len(model.name(s)) for s in range(view.players))
    if all(r.predicted):
        trick_no = len(r.trick_winners) + 1
        lines.append([("class:label", model.text("trick_n", trick=trick_no)),
                      ("", " · " + model.text("leads", name=model.name(r.leader)))])
        blocked = {p.block for p in r.trick if p.block is not None}
        for play in r.trick:
            row: Line = [("", f"  {model.name(play.seat):<{names}}  ")]
            if play.card in blocked:
                row += [_card(play.card.code, "strike class:disabled"), ("class:disabled", " " + model.text("blocked"))]
            else:
                row.append((card_look(play.card.code)[0], _play_text(play)))
                if play.block is not None:
                    row.append(("class:disabled", " " + model.text("blocks", card=_card_name(play.block.code))))
            lines.append(row)
        for offset in range(len(r.trick), view.players):
            seat = (r.leader + offset) % view.players
            mark = "▸" if offset == len(r.trick) else "·"
            lines.append([("", f"  {model.name(seat):<{names}}  "), ("class:disabled", mark)])
        lines.extend(_in_force(model, width))
    lines.extend(_last_trick(model, width))
    if not all(r.predicted):  # once everyone has predicted the marks say nothing new
        predicted: list[Line] = [[("class:label", model.text("predicted_label") + ":")]]
        for seat in range(view.players):
            done = r.predicted[seat] or seat in model.recent.get("committed", ())
            predicted.append([("class:ok" if done else "class:disabled", f"{'✓' if done else '·'}{model.name(seat)}")])
        lines.extend(flow(predicted, width))
    mine = r.predictions[model.my_seat]
    committed = model.recent.get("my_choice") if model.my_seat in model.recent.get("committed", ()) else None
    if mine is not None:
        lines.append([("", model.text("your_prediction", card="")), _card(mine.code)])
    elif committed is not None:  # a networked table: laid face down, applied once everyone has
        lines.append([("", model.text("your_prediction", card="")), _card(str(committed))])
    else:
        lines.append(text_line(model.text("your_prediction_none"), "class:disabled"))
    for peek in model.peeks:
        lines.append(text_line(model.text("peek_line", trick=peek.trick, name=model.name(peek.target),
                                          card=peek.card), "class:private"))
    return lines


def _in_force(model: TableView, width: int) -> Lines:
    """While a trick is played: a reversal in force, or two 4s cancelling (S-6.2), said before it decides."""
    view: SixthSenseState = model.view
    r = view.round
    if r is None or not r.trick:
        return []
    trump = r.trump.colour if r.trump is not None and not view.options.beginner else None
    story = trick_story(len(r.trick_winners) + 1, r.trick, trump, model.names())
    notes = [n.text(model.lang) for n in story.why if n.key in ("tw_reverse", "tw_reverse_many", "tw_cancel")]
    if not notes:
        return []
    return wrap_text(model.text("trick_now", notes="; ".join(notes)), width - 1, "class:why", indent="    ",
                     first="  ")


def _last_trick(model: TableView, width: int) -> Lines:
    """The last trick with its blocked and blocking cards marked, and why it went as it did (S-4.5, S-6)."""
    story: Any = model.recent.get("last_trick")
    if not isinstance(story, TrickStory):
        return []
    if story.winner is not None:
        title = model.text("last_trick", trick=story.trick_no, name=model.name(story.winner))
    else:
        title = model.text("last_trick_void", trick=story.trick_no)
    lines: Lines = [[("class:label", title)]]
    items: list[Line] = []
    for play in story.plays:
        item: Line = [("class:disabled", model.name(play.seat) + " ")]
        if play is story.blocked:
            item += [_card(play.card.code, "strike class:disabled"), ("class:disabled", f" ({model.text('blocked')})")]
        elif play is story.blocker:
            item += [_card(play.card.code, "class:disabled"),
                     ("class:disabled", f" ({model.text('blocks', card=_card_name(play.block.code))})")]
        else:
            item.append((card_look(play.card.code)[0], _play_text(play)))
        items.append(item)
    lines.extend(flow(items, width, gap=2, indent=1))
    notes = "; ".join(note.text(model.lang) for note in story.notes(skip_marked=True))
    if notes:
        lines.extend(wrap_text(notes[0].upper() + notes[1:] + ".", width - 1, "class:why", indent=" ", first=" "))
    return lines


def _results(model: TableView) -> Lines:
    view: SixthSenseState = model.view
    r = view.round
    assert r is not None and r.points is not None
    names = max(6, *(len(model.name(s)) for s in range(view.players)))
    lines: Lines = [text_line(model.text("round_results", round=view.rounds_started), "class:label")]
    lines.append(text_line(
        f" {'':<{names}} {model.text('col_prediction'):>6} {model.text('col_tricks'):>6}"
        f" {model.text('col_points'):>5} {model.text('col_total'):>6}", "class:disabled"))
    for seat in range(view.players):
        prediction = r.predictions[seat]
        code = prediction.code if prediction is not None else "?"
        shown = card_look(code)[1] if prediction is not None else "?"
        lines.append([
            ("", f" {model.name(seat):<{names}} "),
            (card_look(code)[0] if prediction is not None else "", f"{shown:>6}"),
            ("", f" {r.tricks[seat]:>6} "),
            ("class:ok" if r.points[seat] > 0 else "class:error" if r.points[seat] < 0 else "",
             f"{r.points[seat]:>+5}"),
            ("", f" {view.totals[seat]:>6}"),
        ])
    for peek in model.peeks:
        lines.append(text_line(model.text("peek_line", trick=peek.trick, name=model.name(peek.target),
                                          card=peek.card), "class:private"))
    return lines


def scores(model: TableView, width: int) -> Lines:
    view: SixthSenseState | None = model.view
    if view is None:
        return []
    r = view.round
    names = width - 15
    lines: Lines = [text_line(
        f"{model.text('scores'):<{names}} {model.text('col_tricks')[:6]:>6} {model.text('col_total')[:6]:>6}",
        "class:label")]
    for seat in range(view.players):
        tricks = r.tricks[seat] if r is not None else 0
        predicted = r is not None and (r.predicted[seat] or seat in model.recent.get("committed", ()))
        mark = "✓" if r is not None and predicted and r.points is None else " "
        style = "class:me" if seat == model.my_seat else ""
        name = f"{me_mark(model, seat)}{model.name(seat)[: names - 1]}"
        lines.append(text_line(f"{name:<{names}} {mark}{tricks:>5} {view.totals[seat]:>6}", style))
    return lines


def hand_area(model: TableView, width: int) -> Lines:
    view: SixthSenseState | None = model.view
    r = view.round if view is not None else None
    hand = r.hands[model.my_seat] if r is not None else None
    return hand_with_options(model, [c.code for c in hand or ()], width)


# --- what the player points at ---------------------------------------------------------------------------


def choices(view: Any, seat: int, moves: tuple[Any, ...]) -> tuple[Choice, ...]:
    if moves and isinstance(moves[0], Split):
        return tuple(Choice("button", "split_yes" if m.split else "split_no", (m,)) for m in moves)
    hand = view.round.hands[seat] if view is not None and view.round is not None else None
    cards = hand if hand is not None else tuple(dict.fromkeys(m.card for m in moves))
    out = []
    for card in cards:
        of_card = tuple(m for m in moves if m.card is card)
        probe = Play(seat, card, SIX_NINE if card.value == SIX_NINE else None)
        out.append(Choice("card", card.code, of_card, probe))
    return tuple(out)


def prompt(model: TableView) -> Msg:
    return Msg({"predict": "your_turn_predict", "split": "your_turn_split"}.get(model.kind, "your_turn_play"))


def refusal(model: TableView, option: Choice, exc: IllegalMove) -> Msg | None:
    if exc.rule == "S-4.2":
        colour = required_colour(model.view.round.trick) or "?"
        return Msg("refuse_follow", {"card": model.option_label(option), "colour": colour, "rule": exc.rule})
    return None
