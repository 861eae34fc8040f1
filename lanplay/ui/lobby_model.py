"""The lobby as the terminal client shows it: a plain value (no prompt_toolkit), like `TableModel`.

It lists the tables mDNS announces on this laptop's interface (`TableBrowser` feeds `set_tables`),
shows this player's name and key fingerprint, offers a small form to create a table, and records what
the person chose (`action`): create, join the selected table, resume the unfinished game, or quit.
The screen (lobby_screen.py) leaves the lobby when an action is set; the loop there carries it out.

How a game starts: joining takes a seat, and that is all "ready" means; the host's lobby sends the
table plan once every seat is taken, and the game starts by itself (lanplay/net/lobby.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.api import Game, RuleError
from engine.games import all_games, get_game
from engine.sixes import MAX_CHIPS, MIN_CHIPS
from lanplay.bots import BOT_LEVELS
from lanplay.games import BUNDLES
from lanplay.net.address import AddressError, parse_address
from lanplay.net.discovery import TableAdvert
from lanplay.net.network import Network
from lanplay.ui.i18n import Msg, t
from protocol.encoding import JSONObject
from protocol.table import PROTOCOL_VERSION

GAME_ORDER = tuple(bundle.id for bundle in BUNDLES)

# The options the form offers, per game, and the values each cycles through (the first is the default).
PATIENCES = (30, 60, 120, 300, 600)  # the form's choices of the table's patience, in seconds (P-5.5)
FORM_OPTIONS: Mapping[str, tuple[tuple[str, tuple[object, ...]], ...]] = {bundle.id: bundle.form for bundle in BUNDLES}


def options_text(options: Mapping[str, object]) -> str:
    """Table options in a few words: `beginner, target 20`; defaults (false, none) are left out."""
    parts = []
    for key, value in sorted(options.items()):
        if value is True:
            parts.append(key)
        elif value is False or value is None:
            continue
        else:
            parts.append(f"{key} {value}")
    return ", ".join(parts) or "–"


@dataclass(frozen=True, slots=True)
class Create:
    game: str
    options: JSONObject
    seats: int
    bots: int
    bot_kind: str = "normal"  # a kind of lanplay.bots.BOT_KINDS
    patience: int = 120  # seconds an owed step is waited for (a field of the signed plan, P-5.5)


@dataclass(frozen=True, slots=True)
class Join:
    advert: TableAdvert


@dataclass(frozen=True, slots=True)
class JoinAddress:
    """Join the table at HOST:PORT typed in (for networks that drop mDNS)."""

    address: tuple[str, int]


@dataclass(frozen=True, slots=True)
class ChangeNetwork:
    """Play on this network from now on (remembered in the data directory)."""

    network: Network


@dataclass(frozen=True, slots=True)
class Resume:
    pass


@dataclass(frozen=True, slots=True)
class Quit:
    pass


Action = Create | Join | JoinAddress | ChangeNetwork | Resume | Quit
MAX_ADDRESS_CHARS = 80


@dataclass(frozen=True, slots=True)
class ResumeOffer:
    """The game this laptop's journal says it stopped in the middle of."""

    game: str
    names: tuple[str, ...]
    # A table that went on without this laptop's person, whose seat may be taken back there (P-5.7): the
    # advert of its take-back desk (lanplay.table.takeback). None: a journal's unfinished game.
    back: TableAdvert | None = None


@dataclass
class CreateForm:
    """The create-a-table form: game, players, bots for empty seats, the game's options."""

    game_id: str = GAME_ORDER[0]
    seats: int = 4
    bots: int = 0
    level: str = "normal"  # the bots' level: easy, normal, expert (lanplay.bots.BOT_LEVELS)
    patience: int = 120  # seconds a laptop that stopped answering is waited for (PATIENCES)
    values: dict[str, object] = field(default_factory=dict)
    field: int = 0

    def __post_init__(self) -> None:
        self._defaults()

    @property
    def game(self) -> Game[Any, Any, Any, Any]:
        return get_game(self.game_id)

    def fields(self) -> list[str]:
        # the bots' level last: the fields people already know keep their places
        return [
            "game", "seats", "bots", *(f"opt:{key}" for key, _ in FORM_OPTIONS.get(self.game_id, ())), "level",
            "patience",
        ]  # fmt: skip

    def _defaults(self) -> None:
        game = self.game
        self.seats = max(game.min_players, min(self.seats, game.max_players))
        self.bots = max(0, min(self.bots, self.seats - 1))
        self.values = {key: choices[0] for key, choices in FORM_OPTIONS.get(self.game_id, ())}

    def move(self, delta: int) -> None:
        self.field = (self.field + delta) % len(self.fields())

    def change(self, delta: int) -> None:
        """←/→ on the focused field."""
        name = self.fields()[self.field]
        if name == "game":
            games = [g for g in GAME_ORDER if g in all_games()]
            self.game_id = games[(games.index(self.game_id) + delta) % len(games)]
            self._defaults()
            self.field = 0
        elif name == "seats":
            game = self.game
            self.seats = max(game.min_players, min(game.max_players, self.seats + delta))
            self.bots = min(self.bots, self.seats - 1)
        elif name == "bots":
            self.bots = max(0, min(self.seats - 1, self.bots + delta))
        elif name == "level":
            self.level = BOT_LEVELS[(BOT_LEVELS.index(self.level) + delta) % len(BOT_LEVELS)]
        elif name == "patience":
            index = PATIENCES.index(self.patience) if self.patience in PATIENCES else PATIENCES.index(120)
            self.patience = PATIENCES[max(0, min(len(PATIENCES) - 1, index + delta))]
        else:
            key = name.removeprefix("opt:")
            choices = dict(FORM_OPTIONS[self.game_id])[key]
            if key == "chips":
                value = self.values[key]
                assert isinstance(value, int)
                self.values[key] = max(MIN_CHIPS, min(MAX_CHIPS, value + delta))
            else:
                index = choices.index(self.values[key]) if self.values[key] in choices else 0
                self.values[key] = choices[(index + delta) % len(choices)]

    def options_json(self) -> JSONObject:
        """The options as the engine reads them (RuleError if the engine refuses them)."""
        game = self.game
        return game.options_to_json(game.options_from_json(dict(self.values)))

    def action(self) -> Create:
        return Create(self.game_id, self.options_json(), self.seats, self.bots, self.level, self.patience)


class LobbyModel:
    """Everything the lobby screen shows, and the actions its keys take."""

    def __init__(
        self,
        name: str,
        fingerprint: str,
        interface: str,
        lang: str = "en",
        *,
        network_label: str | None = None,
        networks: Sequence[Network] = (),
        network_fixed: str | None = None,
    ) -> None:
        self.name = name
        self.fingerprint = fingerprint
        self.interface = interface  # the address played on ("" until one is chosen)
        self.network_label = network_label if network_label is not None else interface
        self.networks: tuple[Network, ...] = tuple(networks)
        self.network_fixed = network_fixed  # "--interface" / "LANPLAY_INTERFACE": the lobby cannot change it
        self.choosing: int | None = None  # the network chooser is open, on this row
        self.address_text: str | None = None  # the join-by-address line is open, with this text
        self.lang = lang
        self.tables: list[TableAdvert] = []
        self.selected = 0
        self.form: CreateForm | None = None
        self.show_help = False
        self.error: Msg | None = None
        self.resume: ResumeOffer | None = None
        # The journal's unfinished game while a take-back desk for this laptop is offered in its place: the
        # table it stopped in went on, and taking the seat back there is the way back (P-5.7); offered again
        # if that desk goes or is declined.
        self._journal_offer: ResumeOffer | None = None
        self.resume_selected = True  # with an offer, the resume line is selected first: Enter resumes
        self.damaged: tuple[Path, ...] = ()  # journals just found damaged and set aside: the screen names them
        self.forget_requested = False  # x: never offer that unfinished game again
        self.declined: set[str] = set()  # tables whose seat this laptop's person chose not to take back (x)
        self.action: Action | None = None
        self.revision = 0
        self.listeners: list[Callable[[], None]] = []

    def _changed(self) -> None:
        self.revision += 1
        for listener in list(self.listeners):
            listener()

    def text(self, key: str, **params: object) -> str:
        return t(key, self.lang, **params)

    # --- fed by the browser -------------------------------------------------------------------------
    def set_tables(self, tables: Mapping[str, TableAdvert]) -> None:
        """The tables mDNS lists now; the selection stays on the same table when it is still there. A
        play-again table is left out: its players join it from their game-over screen (lanplay.table.again)."""
        current = self.selected_table
        listed = [a for a in tables.values() if a.again_of is None and not a.back]
        desks = (a for a in tables.values() if self.fingerprint in a.back and a.table_id not in self.declined)
        desk = next(desks, None)
        if desk is not None:
            if self.resume is None or self.resume.back != desk:  # a seat to take back: offered like a resume
                if self.resume is not None and self.resume.back is None:
                    self._journal_offer = self.resume
                self.resume, self.resume_selected = ResumeOffer(desk.game, (desk.host_name,), desk), True
        elif self.resume is not None and self.resume.back is not None:
            # that table ended, or the seat was taken back
            self.resume, self._journal_offer = self._journal_offer, None
            self.resume_selected = self.resume is not None
        self.tables = sorted(listed, key=lambda a: (a.game, a.host_name.lower(), a.table_id))
        ids = [a.table_id for a in self.tables]
        if current is not None and current.table_id in ids:
            self.selected = ids.index(current.table_id)
        else:
            self.selected = max(0, min(self.selected, len(self.tables) - 1))
        self._changed()

    def set_damaged(self, paths: Sequence[Path]) -> None:
        """Journals of unfinished games found damaged (and set aside, I3) by the last look for one."""
        if paths:
            self.damaged = tuple(paths)
            self._changed()

    def set_resume(self, offer: ResumeOffer | None) -> None:
        self.resume = offer
        self.resume_selected = offer is not None
        self._changed()

    @property
    def on_resume_line(self) -> bool:
        """The selection is the resume line (it comes before the tables): Enter resumes."""
        return self.resume is not None and (self.resume_selected or not self.tables)

    @property
    def selected_table(self) -> TableAdvert | None:
        if self.on_resume_line:
            return None
        return self.tables[self.selected] if 0 <= self.selected < len(self.tables) else None

    def set_error(self, key: str | None, **params: object) -> None:
        self.error = Msg(key, params) if key is not None else None
        self._changed()

    @property
    def mode(self) -> str:
        """What the keys act on: "help", "networks", "address", "form" or "list"."""
        if self.show_help:
            return "help"
        if self.choosing is not None:
            return "networks"
        if self.address_text is not None:
            return "address"
        if self.form is not None:
            return "form"
        return "list"

    def set_network(self, address: str, label: str) -> None:
        self.interface, self.network_label = address, label
        self.tables, self.selected = [], 0
        self._changed()

    # --- the network chooser (i) ----------------------------------------------------------------------
    def open_networks(self, networks: Sequence[Network] | None = None) -> None:
        """i: choose the network; refused when --interface or LANPLAY_INTERFACE set it."""
        if self.network_fixed is not None:
            self.set_error("net_fixed", source=self.network_fixed)
            return
        if networks is not None:
            self.networks = tuple(networks)
        current = [n.address for n in self.networks]
        self.choosing = current.index(self.interface) if self.interface in current else 0
        self.error = None
        self._changed()

    def choose_network(self) -> None:
        """Enter in the chooser: play on the network of that row."""
        if self.choosing is None or not self.networks:
            return
        network = self.networks[self.choosing]
        self.choosing = None
        self.action = ChangeNetwork(network)
        self._changed()

    def _close_networks(self) -> None:
        if not self.interface:
            # First start: Esc plays on this laptop only for now, and asks again next time.
            self.action = ChangeNetwork(self.networks[-1] if self.networks else Network("lo", "127.0.0.1"))
        self.choosing = None

    # --- join by address (a) ------------------------------------------------------------------------
    def open_address(self) -> None:
        self.address_text = ""
        self.error = None
        self._changed()

    def type_text(self, text: str) -> None:
        if self.address_text is not None:
            printable = "".join(c for c in text if c.isprintable())
            self.address_text = (self.address_text + printable)[:MAX_ADDRESS_CHARS]
            self.error = None
            self._changed()

    def erase(self) -> None:
        if self.address_text:
            self.address_text = self.address_text[:-1]
            self._changed()

    def join_address(self) -> None:
        """Enter on the address line: join HOST:PORT, or say what is wrong with it."""
        if self.address_text is None:
            return
        try:
            address = parse_address(self.address_text)
        except AddressError as exc:
            self.set_error("addr_bad", reason=str(exc))
            return
        self.address_text = None
        self.error = None
        self.action = JoinAddress(address)
        self._changed()

    # --- keys ---------------------------------------------------------------------------------------
    def move(self, delta: int) -> None:
        if self.choosing is not None:
            if self.networks:
                self.choosing = (self.choosing + delta) % len(self.networks)
        elif self.form is not None:
            self.form.move(delta)
        elif self.resume is not None and self.tables:  # the resume line, then the tables
            place = -1 if self.on_resume_line else self.selected
            place = (place + 1 + delta) % (len(self.tables) + 1) - 1
            self.resume_selected = place < 0
            self.selected = max(0, place)
        elif self.tables:
            self.selected = (self.selected + delta) % len(self.tables)
        self.error = None
        self._changed()

    def change(self, delta: int) -> None:
        if self.form is not None:
            self.form.change(delta)
            self._changed()

    def confirm(self) -> None:
        """Enter: choose the network, join the typed address, create the table of the form, resume the
        unfinished game (its line selected), or join the selected table."""
        if self.choosing is not None:
            self.choose_network()
            return
        if self.address_text is not None:
            self.join_address()
            return
        if self.form is not None:
            try:
                self.action = self.form.action()
            except RuleError as exc:
                self.set_error("refused", rule=exc.rule, reason=exc.message)
                return
            self.form = None
            self._changed()
            return
        if self.on_resume_line:
            self.request_resume()
            return
        self.join_selected()

    def join_selected(self) -> None:
        advert = self.selected_table
        if advert is None:
            self.set_error("lobby_no_table")
            return
        if advert.seats_taken >= advert.seats_total:
            self.set_error("lobby_no_free_seat")
            return
        if advert.game not in all_games() or advert.protocol_version != PROTOCOL_VERSION:
            self.set_error("lobby_failed", reason=f"{advert.game} (protocol {advert.protocol_version})")
            return
        self.error = None
        self.action = Join(advert)
        self._changed()

    def open_form(self) -> None:
        if self.form is None:
            self.form = CreateForm()
            self.error = None
            self._changed()

    def back(self) -> None:
        """Esc: close the help, the chooser, the address line or the form."""
        if self.show_help:
            self.show_help = False
        elif self.choosing is not None:
            self._close_networks()
        elif self.address_text is not None:
            self.address_text = None
        elif self.form is not None:
            self.form = None
        self.error = None
        self._changed()

    def toggle_help(self) -> None:
        self.show_help = not self.show_help
        self._changed()

    def request_resume(self) -> None:
        """r: resume the unfinished game, or say there is none."""
        if self.resume is None:
            self.set_error("lobby_nothing_to_resume")
            return
        self.action = Resume()
        self._changed()

    def forget_resume(self) -> None:
        if self.resume is not None and self.resume.back is not None:  # not that seat: it is not offered again
            self.declined.add(self.resume.back.table_id)
            self.resume, self._journal_offer = self._journal_offer, None
            self._changed()
        elif self.resume is not None:
            self.resume = None
            self.forget_requested = True
            self._changed()

    def quit(self) -> None:
        self.action = Quit()
        self._changed()


def seat_text(advert: TableAdvert) -> str:
    return f"{advert.seats_taken}/{advert.seats_total}"


def game_title(lang: str, game_id: str) -> str:
    text = t(f"game_{game_id}", lang)
    return game_id if text == f"game_{game_id}" else text


def names_text(names: Sequence[str]) -> str:
    return ", ".join(names)
