"""What the table looks like: pure functions from a `TableModel` to styled lines.

Each part of the screen (header, table, side panel, hand, footer, dialogs) is a list of lines of
prompt_toolkit fragments; app.py puts them in windows, tests join them to text (`screen_text`).
The game-specific table and hand are each game's look (lanplay/games/GAME/look.py); the pieces
every screen is drawn with are in lines.py. Widths are planned for 80×24: the
table takes what the side panel (scores and log, `SIDE_WIDTH`) leaves.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from lanplay.ui.i18n import rules_summary, t
from lanplay.ui.lines import Line as Line  # app.py, local.py and netcli.py use these through `screens` too
from lanplay.ui.lines import (
    Lines,
    path_pieces,
    ranks,
    text_line,
    wrap_path,
    wrap_text,
)
from lanplay.ui.lines import join as join
from lanplay.ui.lines import plain as plain
from lanplay.ui.model import Choice, TableModel

SIDE_WIDTH = 27
SCREEN_WIDTH = 80
TABLE_WIDTH = SCREEN_WIDTH - SIDE_WIDTH - 1
SCREEN_HEIGHT = 24
GAME_OVER_WIDTH = SIDE_WIDTH + 10  # the game-over dialog lies over the side panel, inside its frame


def hand_area(model: TableModel, width: int = SCREEN_WIDTH) -> Lines:
    """My hand (with the cursor when the choices are its cards) and any other choices below it."""
    return list(model.look.hand_area(model, width))


def table_area(model: TableModel, width: int = TABLE_WIDTH) -> Lines:
    if model.view is None:
        if model.pre_game:
            return pre_game_lines(model, width)
        return [text_line(model.text("waiting_deal"), "class:disabled")]
    return list(model.look.table_area(model, width))


def pre_game_lines(model: TableModel, width: int = TABLE_WIDTH) -> Lines:
    """A networked table before its start: who sits, the seats still free, and how the game starts."""
    lines: Lines = [text_line(model.text("seats_title"), "class:label")]
    total = model.seats_total if model.seats_total is not None else len(model.seated)
    for seat in range(max(total, len(model.seated))):
        if seat < len(model.seated):
            lines.extend(wrap_text(f" {seat + 1}. {model.seated[seat]}", width - 1, indent="    "))
        else:
            lines.append(text_line(f" {seat + 1}. " + model.text("seat_free"), "class:disabled"))
    lines.append(text_line(""))
    lines.extend(wrap_text(model.text("net_seats_how"), width - 1, "class:disabled"))
    return lines


def header(model: TableModel, width: int = SCREEN_WIDTH) -> Line:
    left = " " + model.text(f"game_{model.game.id}")
    detail = model.look.header_detail(model) if model.view is not None else ""
    if detail:
        left += " · " + detail
    right = f"{model.players[model.my_seat]} " if 0 <= model.my_seat < len(model.players) else ""
    pad = max(1, width - len(left) - len(right))
    return [("class:header", left + " " * pad + right)]


def bots_lines(model: TableModel, width: int = SCREEN_WIDTH) -> Lines:
    """Under the header, when the table has bots: which laptop runs each, and so sees its cards."""
    if not model.bots:
        return []
    by_host: dict[int | None, list[str]] = {}  # one phrase per laptop: three bots of Ann's take one line, not three
    for bot, host in model.bots:
        by_host.setdefault(host, []).append(model.name(bot))
    where = [
        model.text(("bot_own" if host is None else "bot_on") + ("" if len(bots) == 1 else "_many"),
                   bots=", ".join(bots), host=model.name(host))
        for host, bots in by_host.items()
    ]  # fmt: skip
    return wrap_text(model.text("bots_legend", bots=" · ".join(where)), width - 1, indent="  ", first=" ")


def scores(model: TableModel, width: int = SIDE_WIDTH) -> Lines:
    return list(model.look.scores(model, width))


# The log only grows: each event is wrapped once, not at every redraw (a long game has hundreds).
_LOG_CACHE: WeakKeyDictionary[TableModel, tuple[str, int, int, Lines, list[int]]] = WeakKeyDictionary()


def _wrapped_log(model: TableModel, width: int) -> tuple[Lines, list[int]]:
    """The log's lines wrapped to `width`, and the index of each event's first line."""
    cached = _LOG_CACHE.get(model)
    if cached is not None and cached[:2] == (model.lang, width) and cached[2] <= len(model.log):
        _, _, count, lines, starts = cached
    else:
        count, lines, starts = 0, [], []
    for event in model.log[count:]:
        style = "class:private" if event.private else "class:log"
        if event.key == "ev_round_start":
            style = "class:label"
        elif event.key.startswith("audit_"):
            style = "class:error" if event.key in ("audit_blame", "audit_stopped") else "class:audit"
        starts.append(len(lines))
        path = event.params.get("path")
        if isinstance(path, str) and len(event.text(model.lang)) > width:  # the path breaks between its parts
            lines.extend(wrap_text(t(event.key, model.lang, path="").rstrip(), width, style))
            lines.extend(text_line("  " + part, style) for part in wrap_path(path, width - 2))
        elif event.key.startswith("tw_"):  # why the trick above went so: indented under it
            lines.extend(wrap_text(event.text(model.lang), width, "class:why", indent="    ", first="  "))
        else:
            lines.extend(wrap_text(event.text(model.lang), width, style, indent="  "))
    _LOG_CACHE[model] = (model.lang, width, len(model.log), lines, starts)
    return lines, starts


def log_lines(model: TableModel, width: int = SIDE_WIDTH) -> Lines:
    """Every log event wrapped to the side panel, oldest first."""
    return list(_wrapped_log(model, width)[0])


def log_window(model: TableModel, width: int = SIDE_WIDTH, keep: int = 120) -> tuple[Lines, int]:
    """The end of the log a window can show, and the row to keep in view: the newest line, or the last
    line of the event `model.log_scroll` events back. Older lines are left out of the redraw."""
    lines, starts = _wrapped_log(model, width)
    scroll = min(model.log_scroll, len(starts) - 1) if starts else 0
    newest = starts[len(starts) - scroll] - 1 if scroll > 0 else len(lines) - 1
    first = max(0, newest - keep)
    return lines[first:], max(0, newest - first)


def log_title(model: TableModel) -> Line:
    key = "log_scrolled" if model.log_scroll else "log"
    return [("class:label", model.text(key, n=model.log_scroll))]


def digits_hint(model: TableModel) -> str:
    """The footer's word on typing numbers: the rule of this decision (card numbers, or the n-th choice)."""
    if model.numbers_are_cards():
        return model.text("digits_card")
    if len(model.options) == 1:
        return model.text("digits_one")
    return model.text("digits_place", count=len(model.options))


def option_text(model: TableModel, option: Choice) -> str:
    """An option named in a sentence: a card by its shown name, a button in brackets as drawn."""
    return model.option_label(option) if option.kind == "card" else f"[{model.option_label(option)}]"


def footer(model: TableModel, width: int = SCREEN_WIDTH) -> Lines:
    status = model.status_msg().text(model.lang)
    style = "class:status.mine" if model.moves else "class:status"
    lines = [text_line(" " + status[: width - 2], style)]
    error = model.error.text(model.lang) if model.error is not None else ""
    lines.append(text_line(" " + error[: width - 2], "class:error"))
    if model.game_over is not None:
        keys = model.text("keys_hint_over_again" if model.can_play_again else "keys_hint_over")
    elif model.typed:
        keys = model.text("typing", typed=model.typed)
    elif not model.options:
        keys = model.text("keys_hint_wait")
    elif (only := model.only_choice()) is not None and model.cursor == model.options.index(only):
        keys = model.text("keys_hint_only", choice=option_text(model, only))  # a forced move: it says so
    elif model.question is not None:
        keys = model.text("keys_hint_question", digits=digits_hint(model))
    else:
        keys = model.text("keys_hint", digits=digits_hint(model))
    lines.append(text_line(" " + keys[: width - 2], "class:keys"))
    return lines


# --- dialogs -------------------------------------------------------------------------------------


def help_lines(model: TableModel) -> Lines:
    title = model.text("help_title", game=model.text(f"game_{model.game.id}"))
    lines: Lines = [text_line(title, "class:label"), text_line("")]
    lines.extend(text_line(rule) for rule in rules_summary(model.game.id, model.lang)[model.help_scroll :])
    lines.append(text_line(""))
    lines.append(text_line(model.text("help_keys", game=model.game.id), "class:keys"))
    return lines


QUIT_WIDTH = 60  # the leave dialog's text: wrapped here at spaces, so no word is split at the box edge


def quit_lines(model: TableModel, width: int = QUIT_WIDTH) -> Lines:
    lines = wrap_text(model.text(model.quit_question), width)
    return [*lines, text_line(""), text_line(model.text("quit_keys"), "class:keys")]


def game_over_width(model: TableModel, screen_width: int = SCREEN_WIDTH) -> int:
    """The game-over dialog covers the side panel, and grows (to the screen's width) until the longest
    piece of the record path fits on a line of its own."""
    path = model.game_over.record_path if model.game_over is not None else None
    longest = max((len(piece) for piece in path_pieces(path)), default=0) if path else 0
    return max(GAME_OVER_WIDTH, min(screen_width - 2, longest + 5))


def score_sheet_lines(model: TableModel, width: int) -> Lines:
    """The score sheet: each seat's points round by round (the latest rounds that fit, `…` before them
    when some do not), then its total, as a person keeps score on paper."""
    results = model.round_results
    if not results:
        return []
    name_width, column = 10, 4
    fit = max(1, (width - name_width - 8) // column)
    shown = results[-fit:]
    cut = "…" if len(results) > len(shown) else " "
    lines: Lines = [text_line(""), text_line(model.text("score_sheet"), "class:label")]
    head = "".join(f"{'R' + str(r.round_no):>{column}}" for r in shown)
    lines.append(text_line(f" {'':<{name_width}}{cut}{head} {model.text('sheet_total'):>6}"))
    for seat in range(len(model.players)):
        points = []
        for result in shown:
            row = next((row for row in result.rows if row.seat == seat), None)
            points.append(f"{row.points if row is not None else '':>{column}}")
        total = next((row.total for row in results[-1].rows if row.seat == seat), 0)
        name = model.name(seat)[:name_width]
        lines.append(text_line(f" {name:<{name_width}}{cut}{''.join(points)} {total:>6}"))
    return lines


def game_over_lines(model: TableModel) -> Lines:
    over = model.game_over
    if over is None:
        return []
    title = "game_network_lost" if over.network_lost else "game_stopped" if over.stopped else "game_over"
    lines: Lines = [text_line(model.text(title), "class:label")]
    if over.network_lost:
        lines.extend(wrap_text(model.text("game_network_resume"), game_over_width(model) - 3))
    if over.winners and not over.stopped:
        names = model.name_list(over.winners)
        lines.append(text_line(model.text("winner_is" if len(over.winners) == 1 else "winners_are", names=names),
                               "class:winner"))
    width = game_over_width(model) - 3
    if over.stopped and not over.network_lost:
        # An unfinished game has no ranking and no winner: why it stopped, and the rounds it kept.
        if over.reason:
            lines.extend(wrap_text(over.reason, width))
        lines.append(text_line(""))
        lines.extend(wrap_text(model.text("scores_so_far", rounds=over.rounds), width, "class:label"))
        for seat, total in enumerate(over.totals):
            lines.append(text_line(f"    {model.name(seat):<14} {total:>5}"))
    else:
        lines.append(text_line(""))
        lines.append(text_line(model.text("final_table"), "class:label"))
        for place, seat in ranks(over.totals, highest_first=model.look.HIGHEST_FIRST):  # T-4.2: fewest wins
            crown = " ★" if seat in over.winners and not over.stopped else ""
            lines.append(text_line(f" {place}. {model.name(seat):<14} {over.totals[seat]:>5}{crown}"))
    lines.extend(score_sheet_lines(model, width))
    lines.append(text_line(""))
    if over.record_path:
        label = model.text("record_saved", path="").rstrip()
        lines.append(text_line(label))
        lines.extend(text_line(" " + part) for part in wrap_path(over.record_path, game_over_width(model) - 3))
    else:
        lines.append(text_line(model.text("record_not_saved")))
    if model.can_play_again:
        lines.extend(wrap_text(model.text("again_key"), width, "class:keys"))
    else:
        lines.append(text_line(model.text("leave_key"), "class:keys"))
    return lines


# --- the whole screen as text (tests, and anyone reading the model without a terminal) --------------


def screen_text(model: TableModel, width: int = SCREEN_WIDTH) -> str:
    """Every part of the screen that the model could show now, as plain text. The log is given whole and
    unwrapped, so a test sees every line it could scroll to, and no card code is split by a line end."""
    parts: list[Lines] = [
        [header(model, width)],
        bots_lines(model, width),
        table_area(model, width - SIDE_WIDTH - 1),
        scores(model, SIDE_WIDTH),
        [log_title(model)],
        log_lines(model, 10_000),
        hand_area(model, width),
        footer(model, width),
    ]
    if model.show_help:
        parts.append(help_lines(model))
    if model.confirm_quit:
        parts.append(quit_lines(model))
    if model.game_over is not None:
        parts.append(game_over_lines(model))
    return "\n".join(plain(part) for part in parts)
