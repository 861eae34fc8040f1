"""`lanplay` with no arguments: the full-screen lobby, then the table screen, then the lobby again.

The lobby lists the tables found live on the network (`TableBrowser` on `interface_from_env(None)`,
redrawn whenever mDNS changes), with game, options, seats taken/total, host name and fingerprint,
and this player's own name and fingerprint so people in the room can check who is who. Keys create
a table (a small form: game, players, bots for empty seats, options), join the selected one, resume
an unfinished game, or quit. A created or joined table opens the table screen (`NetTable`); q on it
(before the start, or after the game) comes back here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
from prompt_toolkit.output import Output

from engine.games import get_game
from lanplay.base.store import (
    Journal,
    data_dir,
    load_network,
    newly_set_aside,
    remove_finished_journals,
    set_aside_journals,
)
from lanplay.games import game_bundle
from lanplay.net.discovery import TableBrowser
from lanplay.net.lobby import fetch_table_info
from lanplay.net.network import LOOPBACK_LABEL, NetworkInUse, find_saved, local_networks, network_in_use, remember
from lanplay.table.runner import unfinished_journal
from lanplay.table.tables import bot_name, load_identity
from lanplay.ui.app import STYLE, _columns, log_to_file, run_table_app
from lanplay.ui.describe import default_player_name
from lanplay.ui.i18n import Msg, detect_lang
from lanplay.ui.lines import Line, Lines, join, plain, text_line, wrap_path, wrap_text
from lanplay.ui.lobby_model import (
    GAME_ORDER,
    ChangeNetwork,
    Create,
    Join,
    JoinAddress,
    LobbyModel,
    Quit,
    Resume,
    ResumeOffer,
    game_title,
    options_text,
    seat_text,
)
from lanplay.ui.local_table import bot_delay_from_env
from lanplay.ui.model import TableModel
from lanplay.ui.net_table import NetTable
from lanplay.ui.screens import SCREEN_WIDTH
from protocol.identity import Identity

log = logging.getLogger(__name__)

HELP_PARAGRAPHS = 5


# --- what the lobby looks like ------------------------------------------------------------------------


def header(model: LobbyModel, width: int = SCREEN_WIDTH) -> Line:
    left = " " + model.text("lobby_title", interface=_network_label(model, model.network_label))
    return [("class:header", left + " " * max(1, width - len(left)))]


def _you(model: LobbyModel, width: int) -> Lines:
    lines: Lines = [[("class:label", model.text("lobby_you", name=model.name, fingerprint=model.fingerprint))]]
    lines.extend(wrap_text(model.text("lobby_you_hint"), width - 1, "class:disabled"))
    return lines


def _network_label(model: LobbyModel, label: str) -> str:
    return model.text("net_loopback") if label == LOOPBACK_LABEL else label


def _networks(model: LobbyModel, width: int) -> Lines:
    lines: Lines = [text_line(model.text("net_title"), "class:label"), text_line("")]
    lines.extend(wrap_text(model.text("net_hint"), width - 1, "class:disabled"))
    lines.append(text_line(""))
    for index, network in enumerate(model.networks):
        chosen = index == model.choosing
        label = _network_label(model, network.label)
        row = f" {'▸' if chosen else ' '} {label}" + (f"  ({network.address})" if network.loopback else "")
        lines.append(text_line(row[:width], "class:cursor" if chosen else ""))
    return lines


def _address_entry(model: LobbyModel, width: int) -> Lines:
    lines: Lines = [text_line(model.text("addr_title"), "class:label"), text_line("")]
    lines.extend(wrap_text(model.text("addr_hint"), width - 1, "class:disabled"))
    lines.append(text_line(""))
    lines.append([("class:label", " > "), ("class:cursor", (model.address_text or "") + " ")])
    return lines


def _selected_detail(model: LobbyModel, width: int) -> Lines:
    """Where the selected table is, whose laptop runs its bots, and the join command of one's own table."""
    advert = model.selected_table
    if advert is None:
        return []
    address = f"{advert.address}:{advert.port}"
    if advert.host_fingerprint == model.fingerprint:
        text = model.text("lobby_yours", address=address)
    else:
        text = model.text("lobby_selected", host=advert.host_name, address=address)
    if advert.host_bots:
        text += " " + model.text("lobby_selected_bots", bots=advert.host_bots, host=advert.host_name)
    return wrap_text(text, width - 1, "class:disabled")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _table_list(model: LobbyModel, width: int) -> Lines:
    lines: Lines = [text_line(f"{model.text('lobby_tables')} ({len(model.tables)})", "class:label")]
    if not model.tables:
        lines.append(text_line("  " + model.text("lobby_none"), "class:disabled"))
        return lines
    head = (
        f"   {model.text('lobby_col_game'):<10} {model.text('lobby_col_options'):<18} "
        f"{model.text('lobby_col_seats'):<8} {model.text('lobby_col_host'):<12} {model.text('lobby_col_fp')}"
    )
    lines.append(text_line(head[:width], "class:disabled"))
    for index, advert in enumerate(model.tables):
        selected = index == model.selected and not model.on_resume_line
        full = advert.seats_taken >= advert.seats_total
        seats = seat_text(advert) + (f" {model.text('lobby_full')}" if full else "")
        row = (
            f" {'▸' if selected else ' '} {game_title(model.lang, advert.game)[:10]:<10} "
            f"{_cut(options_text(advert.options), 18):<18} {seats[:8]:<8} {_cut(advert.host_name, 12):<12} "
            f"{advert.host_fingerprint}"
        )
        style = "class:cursor" if selected else ("class:disabled" if full else "")
        lines.append(text_line(row[:width], style))
    lines.append(text_line(""))
    lines.extend(_selected_detail(model, width))
    return lines


def _value_text(model: LobbyModel, value: object) -> str:
    if value is True:
        return model.text("form_on")
    if value is False:
        return model.text("form_off")
    if value is None:
        return model.text("form_none")
    return str(value)


def _form(model: LobbyModel, width: int) -> Lines:
    form = model.form
    assert form is not None
    lines: Lines = [text_line(model.text("form_title"), "class:label"), text_line("")]
    labels = {
        "game": "form_game", "seats": "form_seats", "bots": "form_bots", "level": "form_level",
        "patience": "form_patience",
    }  # fmt: skip
    for index, name in enumerate(form.fields()):
        if name == "game":
            value = game_title(model.lang, form.game_id)
        elif name == "seats":
            value = f"{form.seats}  ({form.game.min_players}–{form.game.max_players})"
        elif name == "bots":
            value = str(form.bots)
        elif name == "level":
            value = model.text(f"level_{form.level}")
        elif name == "patience":
            value = model.text("patience_value", minutes=form.patience // 60, seconds=form.patience % 60)
        else:
            value = _value_text(model, form.values[name.removeprefix("opt:")])
        label = model.text(labels.get(name, f"form_opt_{name.removeprefix('opt:')}"))
        focused = index == form.field
        lines.append([
            ("class:label" if focused else "", f" {'▸' if focused else ' '} {label:<24} "),
            ("class:cursor" if focused else "class:button", f"◂ {value} ▸"),
        ])
    lines.append(text_line(""))
    free = form.seats - 1 - form.bots
    lines.extend(wrap_text(model.text("form_summary", bots=form.bots, free=free), width - 1))
    for note in game_bundle(form.game_id).words.form_notes(form.values):
        lines.extend(wrap_text(model.text(note), width - 1, "class:disabled"))
    return lines


def _help(model: LobbyModel, width: int) -> Lines:
    lines: Lines = [text_line(model.text("lobby_help_title"), "class:label"), text_line("")]
    for number in range(1, HELP_PARAGRAPHS + 1):
        lines.extend(wrap_text(model.text(f"lobby_help_{number}"), width - 1))
        lines.append(text_line(""))
    lines.append(text_line(""))
    lines.append(text_line(model.text("lobby_help_keys"), "class:keys"))
    return lines


def body(model: LobbyModel, width: int = SCREEN_WIDTH) -> Lines:
    if model.show_help:
        return _help(model, width)
    if model.choosing is not None:
        return _networks(model, width)
    lines = _you(model, width)
    if model.address_text is not None:
        lines.append(text_line(""))
        lines.extend(_address_entry(model, width))
        return lines
    lines.append(text_line(""))
    for path in model.damaged:  # the path breaks only between its parts
        lines.extend(wrap_text(model.text("lobby_damaged", path="").rstrip(), width - 1, "class:error"))
        lines.extend(text_line("  " + part, "class:error") for part in wrap_path(str(path), width - 3))
        lines.append(text_line(""))
    if model.resume is not None:
        offer = model.resume
        key = "lobby_resume" if offer.back is None else "lobby_back"
        text = model.text(key, game=game_title(model.lang, offer.game), names=", ".join(offer.names))
        chosen = model.on_resume_line and model.form is None
        lines.extend(wrap_text(text, width - 1, "class:cursor" if chosen else "class:status.mine",
                               indent="   ", first=" ▸ " if chosen else "   "))  # fmt: skip
        lines.append(text_line(""))
    lines.extend(_form(model, width) if model.form is not None else _table_list(model, width))
    lines.append(text_line(""))
    lines.extend(wrap_text(model.text("lobby_how"), width - 1, "class:disabled"))
    return lines


def footer(model: LobbyModel, width: int = SCREEN_WIDTH) -> Lines:
    error = model.error.text(model.lang) if model.error is not None else ""
    if model.choosing is not None:
        keys = model.text("net_keys")
    elif model.address_text is not None:
        keys = model.text("addr_keys")
    elif model.form is not None:
        keys = model.text("form_keys")
    elif model.resume is not None:
        keys = model.text("lobby_keys_resume_net")
    else:
        keys = model.text("lobby_keys_net")
    return [text_line(" " + error[: width - 2], "class:error"), text_line(" " + keys[: width - 2], "class:keys")]


def lobby_text(model: LobbyModel, width: int = SCREEN_WIDTH) -> str:
    """The whole lobby screen as plain text (tests)."""
    return "\n".join(plain(part) for part in ([header(model, width)], body(model, width), footer(model, width)))


# --- keys and the application ---------------------------------------------------------------------------


def lobby_key_bindings(model: LobbyModel) -> KeyBindings:
    kb = KeyBindings()
    listing = Condition(lambda: model.mode == "list")
    helping = Condition(lambda: model.mode == "help")
    normal = Condition(lambda: model.mode not in ("help", "address"))
    typing = Condition(lambda: model.mode == "address")

    def leave_if_chosen(event: KeyPressEvent) -> None:
        if model.action is not None:
            event.app.exit()

    @kb.add("up", filter=normal)
    @kb.add("s-tab", filter=normal)
    def _up(event: KeyPressEvent) -> None:
        model.move(-1)

    @kb.add("down", filter=normal)
    @kb.add("tab", filter=normal)
    def _down(event: KeyPressEvent) -> None:
        model.move(1)

    @kb.add("left", filter=normal)
    def _left(event: KeyPressEvent) -> None:
        model.change(-1)

    @kb.add("right", filter=normal)
    def _right(event: KeyPressEvent) -> None:
        model.change(1)

    @kb.add("enter", filter=normal | typing)
    def _enter(event: KeyPressEvent) -> None:
        model.confirm()
        leave_if_chosen(event)

    @kb.add("i", filter=listing)
    def _network(event: KeyPressEvent) -> None:
        model.open_networks(local_networks())

    @kb.add("a", filter=listing)
    def _address(event: KeyPressEvent) -> None:
        model.open_address()

    @kb.add("<any>", filter=typing)
    def _type(event: KeyPressEvent) -> None:
        model.type_text(event.data)

    @kb.add("backspace", filter=typing)
    def _erase(event: KeyPressEvent) -> None:
        model.erase()

    @kb.add("c", filter=listing)
    @kb.add("n", filter=listing)
    def _create(event: KeyPressEvent) -> None:
        model.open_form()

    @kb.add("r", filter=listing)
    def _resume(event: KeyPressEvent) -> None:
        model.request_resume()
        leave_if_chosen(event)

    @kb.add("x", filter=listing)
    def _forget(event: KeyPressEvent) -> None:
        model.forget_resume()

    @kb.add("?", filter=normal)
    @kb.add("?", filter=helping)
    def _help(event: KeyPressEvent) -> None:
        model.toggle_help()

    @kb.add("escape")
    def _back(event: KeyPressEvent) -> None:
        model.back()
        leave_if_chosen(event)  # Esc in the first chooser plays on this laptop only for now

    @kb.add("q", filter=listing)
    @kb.add("c-c")
    def _quit(event: KeyPressEvent) -> None:
        model.quit()
        leave_if_chosen(event)

    @kb.add("q", filter=~listing & ~typing)
    def _close(event: KeyPressEvent) -> None:
        model.back()
        leave_if_chosen(event)

    return kb


def build_lobby_app(
    model: LobbyModel, *, input: Input | None = None, output: Output | None = None
) -> Application[None]:
    def control(render: Callable[[], Lines]) -> FormattedTextControl:
        return FormattedTextControl(lambda: join(render()), focusable=False, show_cursor=False)

    layout = HSplit([
        Window(control(lambda: [header(model, _columns())]), height=1),
        Window(control(lambda: body(model, _columns())), wrap_lines=False),
        Window(control(lambda: footer(model, _columns())), height=2),
    ])
    return Application(
        layout=Layout(layout), key_bindings=lobby_key_bindings(model), style=STYLE, full_screen=True,
        input=input, output=output,
    )  # fmt: skip


# --- the loop: lobby, table, lobby ------------------------------------------------------------------------


def _resume_offer(data_dir: Path, model: LobbyModel | None = None) -> tuple[ResumeOffer, Path] | None:
    """The unfinished game to offer; a journal found damaged on the way (set aside, I3) is named on the
    lobby's screen (`model.damaged`), so a new game never starts in silence where one was expected."""
    before = set_aside_journals(data_dir)
    try:
        found = unfinished_journal(data_dir)
    except Exception as exc:  # a damaged journal must not keep anyone out of the lobby
        log.warning("cannot read the journals: %s", exc)
        found = None
    if model is not None:
        model.set_damaged(newly_set_aside(data_dir, before))
    if found is None:
        return None
    plan, path = found
    return ResumeOffer(plan.game, tuple(seat.name for seat in plan.seats)), path


async def run_lobby(
    *,
    identity: Identity,
    data_dir: Path,
    interface: str | NetworkInUse | None,
    name: str,
    lang: str,
    bot_delay: float = 0.3,
    step_timeout: float = 20.0,
    input: Input | None = None,
    output: Output | None = None,
    on_lobby: Callable[[LobbyModel], None] | None = None,
    on_table: Callable[[TableModel, NetTable], None] | None = None,
    notice: Msg | None = None,
) -> int:
    """The lobby until the person quits; each table chosen there is played on the table screen.
    `interface` None: nothing chosen yet, the lobby opens on the network chooser (`notice`: said in its
    footer, e.g. that the network chosen before is gone)."""
    network = NetworkInUse(interface, "caller", interface) if isinstance(interface, str) else interface
    model = LobbyModel(
        name, identity.public.fingerprint, network.address if network else "", lang,
        network_label=network.label if network else "", networks=local_networks(),
        network_fixed=network.source if network and network.source in ("--interface", "LANPLAY_INTERFACE") else None,
    )  # fmt: skip
    offer = _resume_offer(data_dir, model)
    model.resume = offer[0] if offer is not None else None
    model.resume_selected = True
    if network is None:
        model.open_networks()
        if notice is not None:
            model.error = notice
    if on_lobby is not None:
        on_lobby(model)
    browser: TableBrowser | None = None

    async def browse(address: str) -> TableBrowser:
        started = TableBrowser(interface=address, on_change=model.set_tables)
        await started.start()
        return started

    if network is not None:
        browser = await browse(network.address)
    try:
        while True:
            model.action = None
            app = build_lobby_app(model, input=input, output=output)

            def redraw(app: Application[None] = app) -> None:
                app.invalidate()

            model.listeners.append(redraw)
            try:
                await app.run_async()
            finally:
                model.listeners.remove(redraw)
            if model.forget_requested and offer is not None:
                with contextlib.suppress(Exception):
                    Journal(offer[1]).append({"t": "done"})
                offer = None
                model.forget_requested = False
            action = model.action
            if action is None or isinstance(action, Quit):
                return 0
            if isinstance(action, ChangeNetwork):
                if browser is not None:
                    await browser.stop()
                    browser = None
                chosen = action.network
                model.set_network(chosen.address, chosen.label)
                try:
                    browser = await browse(chosen.address)
                except Exception as exc:  # the address went away meanwhile: say so, choose again
                    model.set_error("lobby_failed", reason=str(exc))
                    model.open_networks(local_networks())
                    continue
                if model.interface and not (model.error is not None and model.error.key == "lobby_failed"):
                    remember(data_dir, chosen)
                    model.set_error("net_saved", label=_network_label(model, chosen.label))
                continue
            assert browser is not None
            game_id: str | None = None
            if isinstance(action, JoinAddress):
                try:  # which game it is, before the table screen opens (no advert says it)
                    info = await fetch_table_info(*action.address)
                    get_game(info.game)
                    game_id = info.game
                except Exception as exc:
                    model.set_error("lobby_failed", reason=str(exc) or type(exc).__name__)
                    continue
            table_model, table = _table_for(
                action, model, identity=identity, data_dir=data_dir, interface=model.interface, name=name,
                lang=lang, bot_delay=bot_delay, step_timeout=step_timeout, game_id=game_id,
            )  # fmt: skip
            if on_table is not None:
                on_table(table_model, table)
            await run_table_app(table_model, table, input=input, output=output)
            while table_model.again_requested and table.last_plan is not None:
                # Play again (lanplay.table.again): the same players and options, at a new table.
                prior = table.last_plan
                table_model = TableModel(get_game(prior.game), [name], 0, lang)  # the seats come with the plan
                table = NetTable(
                    table_model, identity=identity, data_dir=data_dir, interface=model.interface, name=name,
                    bot_delay=bot_delay, step_timeout=step_timeout,
                ).again(prior, bot_kind=getattr(action, "bot_kind", "normal"))  # fmt: skip
                if on_table is not None:
                    on_table(table_model, table)
                await run_table_app(table_model, table, input=input, output=output)
            offer = _resume_offer(data_dir, model)
            model.set_resume(offer[0] if offer is not None else None)
            model.set_tables(browser.tables)
    finally:
        if browser is not None:
            await browser.stop()


def _table_for(
    action: Create | Join | JoinAddress | Resume,
    lobby: LobbyModel,
    *,
    identity: Identity,
    data_dir: Path,
    interface: str,
    name: str,
    lang: str,
    bot_delay: float,
    step_timeout: float,
    game_id: str | None = None,
) -> tuple[TableModel, NetTable]:
    common: dict[str, Any] = {
        "identity": identity, "data_dir": data_dir, "interface": interface, "name": name, "bot_delay": bot_delay,
        "step_timeout": step_timeout,
    }  # fmt: skip
    if isinstance(action, Create):
        players = [name, *(bot_name(i, name) for i in range(1, action.bots + 1))]
        model = TableModel(get_game(action.game), players, 0, lang)
        table = NetTable(model, **common).host(
            options=action.options, seats=action.seats, bots=action.bots, advertise=True, bot_kind=action.bot_kind,
            patience=action.patience,
        )
        return model, table
    if isinstance(action, Join):
        advert = action.advert
        model = TableModel(get_game(advert.game), [name], 0, lang)
        table = NetTable(model, **common).join((advert.address, advert.port), advert.seats_total)
        return model, table
    if isinstance(action, JoinAddress):
        model = TableModel(get_game(game_id or GAME_ORDER[0]), [name], 0, lang)
        return model, NetTable(model, **common).join(action.address, None)
    assert lobby.resume is not None
    if lobby.resume.back is not None:  # the seat its person left, at the table that went on (P-5.7)
        model = TableModel(get_game(lobby.resume.game), [name], 0, lang)
        return model, NetTable(model, **common).back(lobby.resume.back)
    model = TableModel(get_game(lobby.resume.game), lobby.resume.names, 0, lang)
    return model, NetTable(model, **common).resume()


def lobby_command(name: str | None, lang: str | None, interface: str | None) -> int:
    """`lanplay` (or `lanplay lobby`). An address not on this laptop or an unreadable saved choice raise
    (`InterfaceError`, `StoreError`): `lanplay.cli.commands.main` says so in one line, exit 2."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("lanplay: the lobby needs a terminal (standard input and output are not one); without one, "
              "`lanplay play --plain` plays by typing numbers and `lanplay join HOST:PORT --plain` joins a table",
              file=sys.stderr)  # fmt: skip
        return 2
    directory = data_dir()
    network = network_in_use(interface, directory, ask=True)
    saved = load_network(directory)
    gone = network is None and saved is not None and find_saved(saved, local_networks()) is None
    log_to_file(directory)
    remove_finished_journals(directory)
    identity = load_identity(directory)
    return asyncio.run(
        run_lobby(
            identity=identity, data_dir=directory, interface=network, name=name or default_player_name(),
            lang=detect_lang(lang), bot_delay=bot_delay_from_env(),
            notice=Msg("net_gone", {"label": f"{saved.interface} {saved.address}"}) if gone and saved else None,
        )
    )
