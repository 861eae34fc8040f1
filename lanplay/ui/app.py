"""The prompt_toolkit application: windows that read the model, keys that call its methods.

The table's source (a `NetTable`, or an in-process `LocalTable`: lanplay/ui/feed.py's `TableSource`) runs as a
task beside the application; every change of the model calls `app.invalidate()`, so the screen redraws after
the source's events and key presses alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import Frame

from lanplay.ui import screens
from lanplay.ui.feed import TableSource
from lanplay.ui.model import TableModel

STYLE = Style.from_dict(
    {
        "header": "reverse bold",
        "label": "bold",
        "disabled": "ansibrightblack",
        "cursor": "reverse bold",
        "button": "bold",
        "error": "ansired bold",
        "ok": "ansigreen",
        "private": "ansicyan italic",
        "why": "ansicyan",
        "audit": "ansigreen",
        "status": "bold",
        "status.mine": "bold ansiyellow",
        "keys": "ansibrightblack",
        "me": "bold",
        "winner": "bold ansigreen",
        "sep": "ansibrightblack",
        # 6th Sense colours (S-1.2)
        "card.r": "ansired bold",
        "card.y": "ansiyellow bold",
        "card.g": "ansigreen bold",
        "card.b": "ansibrightblue bold",
        "card.p": "ansimagenta bold",
        # 6 nimmt! bullheads (T-1.1): the more, the louder
        "bulls2": "ansicyan",
        "bulls3": "ansiyellow",
        "bulls5": "ansired",
        "bulls7": "ansimagenta bold",
        # Sixes suits
        "suit.o": "ansiyellow bold",
        "suit.c": "ansired bold",
        "suit.e": "ansibrightblue bold",
        "suit.b": "ansigreen bold",
    }
)


DIGIT_PAUSE = 1.0  # seconds after which the next digit starts a new number
MIN_COLUMNS, MIN_ROWS = 80, 24  # the screens are planned for 80×24 (screens.py)


def _size() -> tuple[int, int]:
    try:
        size = get_app().output.get_size()
        return size.columns, size.rows
    except Exception:  # no running application
        return screens.SCREEN_WIDTH, screens.SCREEN_HEIGHT


def too_small_text(model: TableModel, columns: int, rows: int) -> str:
    return model.text("window_too_small", columns=MIN_COLUMNS, rows=MIN_ROWS, now=f"{columns}×{rows}")


def _columns() -> int:
    try:
        return max(40, get_app().output.get_size().columns)
    except Exception:  # no running application (a test rendering a layout by hand)
        return screens.SCREEN_WIDTH


LEAVE_DRAIN = 6.0  # seconds the back end may take to send a signed leave and the round's secrets


def key_bindings(model: TableModel) -> KeyBindings:
    kb = KeyBindings()
    quitting = Condition(lambda: model.confirm_quit)
    helping = Condition(lambda: model.show_help and not model.confirm_quit)
    playing = Condition(lambda: not model.confirm_quit and not model.show_help)

    def leave_if_asked(event: KeyPressEvent) -> None:
        if model.quit_requested:
            event.app.exit()

    @kb.add("y", filter=quitting)
    @kb.add("j", filter=quitting)
    def _leave(event: KeyPressEvent) -> None:
        model.answer_quit(True)
        leave_if_asked(event)

    @kb.add("n", filter=quitting)
    @kb.add("escape", filter=quitting)
    def _stay(event: KeyPressEvent) -> None:
        model.answer_quit(False)

    @kb.add("?", filter=helping)
    @kb.add("escape", filter=helping)
    @kb.add("enter", filter=helping)
    def _close_help(event: KeyPressEvent) -> None:
        model.toggle_help()

    @kb.add("up", filter=helping)
    def _help_up(event: KeyPressEvent) -> None:
        model.scroll_help(-1)

    @kb.add("down", filter=helping)
    def _help_down(event: KeyPressEvent) -> None:
        model.scroll_help(1)

    @kb.add("?", filter=playing)
    def _help(event: KeyPressEvent) -> None:
        model.toggle_help()

    @kb.add("q", filter=~quitting)
    @kb.add("c-c")
    def _quit(event: KeyPressEvent) -> None:
        model.show_help = False
        model.request_quit()
        leave_if_asked(event)

    @kb.add("a", filter=playing & Condition(lambda: model.game_over is not None))
    def _again(event: KeyPressEvent) -> None:
        model.request_again()
        leave_if_asked(event)

    @kb.add("s", filter=playing & Condition(lambda: model.start_now is not None and model.pre_game))
    def _start_now(event: KeyPressEvent) -> None:
        model.request_start_now()

    @kb.add("left", filter=playing)
    @kb.add("h", filter=playing)
    @kb.add("s-tab", filter=playing)
    def _previous(event: KeyPressEvent) -> None:
        model.move_cursor(-1)

    @kb.add("right", filter=playing)
    @kb.add("l", filter=playing)
    @kb.add("tab", filter=playing)
    def _next(event: KeyPressEvent) -> None:
        model.move_cursor(1)

    @kb.add("up", filter=playing)
    @kb.add("k", filter=playing)
    def _row_up(event: KeyPressEvent) -> None:
        model.move_row(-1)

    @kb.add("down", filter=playing)
    @kb.add("j", filter=playing)
    def _row_down(event: KeyPressEvent) -> None:
        model.move_row(1)

    @kb.add("enter", filter=playing)
    @kb.add(" ", filter=playing)
    def _confirm(event: KeyPressEvent) -> None:
        model.confirm()

    @kb.add("escape", filter=playing)
    @kb.add("backspace", filter=playing)
    def _back(event: KeyPressEvent) -> None:
        model.back()

    # A number may take several digits (card 62, the 13th card): each digit selects (never plays), and
    # after DIGIT_PAUSE without a digit the number is whole, so the next digit starts a new one.
    pending: list[asyncio.TimerHandle] = []

    def digit_handler(digit: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            for handle in pending:
                handle.cancel()
            pending.clear()
            if model.type_digit(digit):
                pending.append(asyncio.get_running_loop().call_later(DIGIT_PAUSE, model.finish_typing))

        return handler

    for digit in "1234567890":
        kb.add(digit, filter=playing)(digit_handler(digit))

    @kb.add("pageup")
    def _log_back(event: KeyPressEvent) -> None:
        model.scroll_log(5)

    @kb.add("pagedown")
    def _log_forward(event: KeyPressEvent) -> None:
        model.scroll_log(-5)

    return kb


def build_layout(model: TableModel) -> Layout:
    def control(render: Callable[[], StyleAndTextTuples], **kwargs: Any) -> FormattedTextControl:
        return FormattedTextControl(render, focusable=False, show_cursor=False, **kwargs)

    def table_width() -> int:
        return _columns() - screens.SIDE_WIDTH - 1

    def hand_lines() -> list[screens.Line]:
        return screens.hand_area(model, _columns())

    def log_text() -> StyleAndTextTuples:
        return screens.join(screens.log_window(model, screens.SIDE_WIDTH)[0])

    def log_cursor() -> Point:
        # The window scrolls to keep this row in view: the newest line unless the reader scrolled back.
        return Point(0, screens.log_window(model, screens.SIDE_WIDTH)[1])

    header = Window(control(lambda: screens.join([screens.header(model, _columns())])), height=1)
    bots = Window(
        control(lambda: screens.join(screens.bots_lines(model, _columns()))),
        height=lambda: Dimension.exact(len(screens.bots_lines(model, _columns()))),
    )
    table = Window(control(lambda: screens.join(screens.table_area(model, table_width()))), wrap_lines=False)
    side = HSplit(
        [
            Window(
                control(lambda: screens.join(screens.scores(model, screens.SIDE_WIDTH))),
                height=lambda: Dimension.exact(len(model.players) + 1),
            ),
            Window(height=1, char="─", style="class:sep"),
            Window(control(lambda: screens.join([screens.log_title(model)])), height=1),
            Window(
                control(log_text, get_cursor_position=log_cursor),
                wrap_lines=False,
            ),
        ],
        width=screens.SIDE_WIDTH,
    )
    hand = Window(
        control(lambda: screens.join(hand_lines())),
        height=lambda: Dimension.exact(min(12, len(hand_lines()))),
        wrap_lines=False,
    )
    footer = Window(control(lambda: screens.join(screens.footer(model, _columns()))), height=3)
    def too_small() -> Window:
        return Window(control(lambda: [("class:error", too_small_text(model, *_size()))]), wrap_lines=True)

    def fits() -> bool:
        columns, rows = _size()
        return columns >= MIN_COLUMNS and rows >= MIN_ROWS

    table_screen = HSplit(
        [
            header,
            bots,
            VSplit([table, Window(width=1, char="│", style="class:sep"), side], window_too_small=too_small()),
            Window(height=1, char="─", style="class:sep"),
            hand,
            footer,
        ],
        window_too_small=too_small(),
    )
    body = HSplit([
        ConditionalContainer(table_screen, filter=Condition(fits)),
        ConditionalContainer(too_small(), filter=~Condition(fits)),
    ])  # fmt: skip

    def dialog(
        render: Callable[[], list[screens.Line]],
        shown: Callable[[], bool],
        right: int | None = None,
        top: int | None = None,
        width: int | Callable[[], int] | None = None,
    ) -> Float:
        frame = Frame(Window(control(lambda: screens.join(render())), wrap_lines=True))
        return Float(ConditionalContainer(frame, filter=Condition(shown)), right=right, top=top, width=width)

    floats = [
        # Over the side panel, so the last round's results (every prediction revealed) stay readable.
        dialog(lambda: screens.game_over_lines(model), lambda: model.game_over is not None and not model.show_help,
               right=0, top=1, width=lambda: screens.game_over_width(model, _columns())),
        dialog(lambda: screens.help_lines(model), lambda: model.show_help),
        dialog(lambda: screens.quit_lines(model), lambda: model.confirm_quit, width=screens.QUIT_WIDTH + 2),
    ]
    return Layout(FloatContainer(body, floats))


def build_app(model: TableModel, *, input: Input | None = None, output: Output | None = None) -> Application[None]:
    return Application(
        layout=build_layout(model),
        key_bindings=key_bindings(model),
        style=STYLE,
        full_screen=True,
        mouse_support=True,
        input=input,
        output=output,
    )


async def run_table_app(
    model: TableModel,
    source: TableSource,
    *,
    input: Input | None = None,
    output: Output | None = None,
    app: Application[None] | None = None,
) -> Any:
    """Run the screen and the table's source together until the player leaves; returns the source's
    result if it finished (the game's record for a `LocalTable`, the `Outcome` for a `NetTable`), else None."""
    app = app or build_app(model, input=input, output=output)

    def redraw() -> None:
        app.invalidate()

    model.listeners.append(redraw)
    task = asyncio.ensure_future(source.run())

    def backend_done(done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            model.set_error("backend_failed", reason=str(done.exception()))

    task.add_done_callback(backend_done)
    try:
        await app.run_async()
    finally:
        model.listeners.remove(redraw)
        if not task.done():
            # P-5.7: a person who leaves a table says so, signed, so the others know at once and nobody
            # waits for them; the source then ends by itself once its last messages are out.
            with contextlib.suppress(Exception):
                if await source.leave():
                    await asyncio.wait([task], timeout=LEAVE_DRAIN)
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled() or task.exception() is not None:
        return None
    return task.result()


def log_to_file(directory: Path) -> None:
    """Log lines would land on the full screen: send them to `<data dir>/client.log` instead."""
    root = logging.getLogger()
    if root.handlers:
        return  # configured by whoever runs us (a test, -v)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "client.log"
        # Private like every file of the data directory (0600): it names peers, addresses and tables.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        os.chmod(path, 0o600)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)

