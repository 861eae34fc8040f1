"""The networked commands: `lanplay host`, `lanplay join`, `lanplay bot`.

Every one of them first resumes the game this installation was in if it stopped mid-game (P-5.4):
started again with the same command after a crash or a kill, a peer rejoins its table.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from engine.games import all_games, get_game
from lanplay.base.store import ResumeFailed, data_dir, remove_finished_journals
from lanplay.base.text import shown
from lanplay.bots import BOT_KINDS, add_budget_argument
from lanplay.cli.options import OptionError, parse_options
from lanplay.games import option_notes
from lanplay.net.address import parse_address
from lanplay.net.lobby import LobbyError, LobbyHost, SeatBarred, SeatInfo, fetch_lobby_id
from lanplay.net.network import network_in_use, toward
from lanplay.table.again import play_again
from lanplay.table.runner import BotPlayer, LocalPlayer, Outcome, TableRunner
from lanplay.table.tables import (
    RECONNECT_TIMEOUT,
    _bot_peer,
    bot_name,
    host_table,
    join_table,
    load_identity,
    play_on,
    resume_table,
)
from lanplay.ui import screens
from lanplay.ui.describe import bot_lines, default_player_name, move_text
from lanplay.ui.i18n import detect_lang
from lanplay.ui.local_table import bot_delay_from_env
from lanplay.ui.model import TableModel
from protocol.table import Event, Exposed, Finished, GameOver, NetworkLost, PeekResult, RoundConfirmed, Stopped

EXIT_INTERRUPTED = 130  # the shell's convention for a command stopped by Ctrl-C
class CommandError(Exception):
    """Bad input on the command line: `lanplay` prints the message as one line and exits 2."""


def add_network_commands(sub: Any) -> None:
    host = sub.add_parser("host", help="host a table on the network (bots may fill seats)")
    host.add_argument("--game", choices=sorted(all_games()), required=True)
    host.add_argument("--bots", type=int, default=0, help="seats filled by bot peers in this process")
    host.add_argument("--seats", type=int, help="seats at the table (default: you + the bots)")
    host.add_argument("--headless", action="store_true", help="a bot plays your seat too")
    _option_argument(host)
    _common(host)
    host.set_defaults(run=run_host)

    join = sub.add_parser("join", help="join the table at HOST:PORT (for networks that block multicast)")
    join.add_argument("address", metavar="HOST:PORT")
    join.add_argument(
        "--bots", type=int, default=0,
        help="bot seats this laptop brings to the table (it runs them, so it could see their cards); "
        "plays as plain text",
    )  # fmt: skip
    join.add_argument("--plain", action="store_true",
                      help="plain text (typed numbers) instead of the full-screen table; also without a terminal")
    join.add_argument("--lang", choices=["en", "nl"], help="language of the table (default: from the locale)")
    _common(join)
    join.set_defaults(run=run_join)

    bot = sub.add_parser("bot", help="a bot as a full peer: joins a table found by mDNS, or hosts one")
    bot.add_argument("--game", choices=sorted(all_games()), required=True)
    where = bot.add_mutually_exclusive_group()
    where.add_argument("--join", metavar="HOST:PORT", help="the table's address instead of mDNS")
    where.add_argument("--table", metavar="ID", help="the advertised table id to join")
    where.add_argument("--host", action="store_true", help="host a table instead of joining one")
    bot.add_argument("--seats", type=int, default=4, help="with --host: seats at the table")
    bot.add_argument("--kind", choices=BOT_KINDS, default="normal",
                     help="easy, normal (default) or expert; random is easy, heuristic the plain rule-of-thumb player")
    add_budget_argument(bot)
    bot.add_argument(
        "--again", type=int, default=0, metavar="GAMES",
        help="after a game that ended, play again this many times with the same players (a bot always says yes)",
    )  # fmt: skip
    _option_argument(bot)
    bot.add_argument(
        "--delay", type=float, default=None,
        help="seconds a bot thinks before each move (default $LANPLAY_BOT_DELAY or 0)",
    )  # fmt: skip
    _common(bot)
    bot.set_defaults(run=run_bot)


def _option_argument(parser: argparse.ArgumentParser) -> None:
    """Only the commands that open a table take options (`join` sits at a table whose options are set)."""
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a table option when hosting (see `lanplay play --help` for each game's keys)")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument(
        "--interface", default=None,
        help="the IPv4 address to play on (default $LANPLAY_INTERFACE, else the network chosen in the lobby, "
        "else 127.0.0.1: this laptop only)",
    )  # fmt: skip
    parser.add_argument(
        "--patience", "--reconnect-timeout", dest="reconnect_timeout", type=float, default=RECONNECT_TIMEOUT,
        metavar="SECONDS",
        help="the table's patience, signed in its plan when you host: how long a step owed by a seat (or a "
        "person whose laptop dropped off) is waited for before the round may be stopped; nobody is convicted",
    )  # fmt: skip
    parser.set_defaults(step_timeout=20.0)
    parser.add_argument("-v", "--verbose", action="store_true")


class TextPlayer:
    """A person at a plain terminal: the legal moves are numbered, they type one."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        session = runner.session
        assert session is not None
        names = list(session.settings.names)
        print(f"\nYour turn ({session.game.title}, {names[session.me]}):")
        table = TableModel(session.game, names, session.me)  # the table and hand, as the full screen draws them
        table.update_state(session.view())
        for part in (screens.table_area(table, 78), screens.hand_area(table, 78)):
            text = screens.plain(part).rstrip()
            if text:
                print(text)
        for index, move in enumerate(moves, 1):
            print(f"  {index:2}. {move_text(names, session.game.move_to_json(move), table.words.card_name)}")
        while True:
            line = await _read_line()
            if not line:
                await asyncio.sleep(3600)  # input closed: the table waits, as it would for a person
            text = line.strip()
            if text.isdigit() and 1 <= int(text) <= len(moves):
                return moves[int(text) - 1]
            print(f"Type a number from 1 to {len(moves)}.")


async def _read_line() -> str:
    """One line of stdin, read in a daemon thread: a thread of asyncio's executor would keep the process
    waiting for Enter after Ctrl-C (asyncio.run joins its executor's threads on the way out)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        def deliver() -> None:
            if not done.done():
                done.set_result(line)

        loop.call_soon_threadsafe(deliver)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    return await done


def printer(names: list[str] | None = None) -> Any:
    """The plain commands' listener: one line per event a person should read (an exposure, a stop, a
    leave, the end), with anything that came from a peer made inert (`shown`)."""

    def show(event: Event) -> None:
        if isinstance(event, RoundConfirmed):
            print(f"round {event.round + 1} audited and confirmed: {event.report}", flush=True)
        elif isinstance(event, Exposed):  # a proof every seat checks (P-5.4)
            print(f"EXPOSED: seat {event.seat} broke {shown(event.rule, 40)}: {shown(event.reason)}", flush=True)
        elif isinstance(event, Stopped):
            if event.owed == "left":
                print(f"LEFT: seat {event.by} left the table; the round is void, nobody is convicted", flush=True)
            else:
                waited = "" if event.seat is None else f" (waited for seat {event.seat}'s {shown(str(event.owed), 20)})"
                print(f"STOPPED by seat {event.by}{waited}, nobody convicted: {shown(event.reason)}", flush=True)
        elif isinstance(event, Finished):
            how = "complete" if event.complete else "cut short"
            print(f"table finished: every seat signed the record ({how})", flush=True)
        elif isinstance(event, PeekResult):
            print(f"you peek at seat {event.target}'s prediction card: {event.card}", flush=True)
        elif isinstance(event, NetworkLost):
            print("lost the network: no link to any other seat (blaming nobody; waiting for it)", flush=True)
        elif isinstance(event, GameOver):
            print(f"game over: winners {list(event.winners)}", flush=True)

    return show


def _setup(args: argparse.Namespace, join_host: str | None = None) -> tuple[Path, str]:
    """The data directory and the address to play on. `InterfaceError` / `StoreError` (one line, exit 2
    in `lanplay.cli.commands.main`) for an address not on this laptop or an unreadable saved choice. Joining
    `join_host` with no network chosen: the network on the way to it."""
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    directory = data_dir()
    remove_finished_journals(directory)  # games that are over need their journals no more
    network = network_in_use(args.interface, directory)
    assert network is not None
    if network.source == "default" and join_host is not None:
        route = toward(join_host)
        if route is not None and not route.loopback:
            print(f"playing on {route.label}: the way to {join_host}", file=sys.stderr)
            return directory, route.address
    if network.source == "default":
        print(
            "playing on this laptop only (127.0.0.1): to play with other laptops, choose the network in the lobby "
            "(lanplay) or pass --interface",
            file=sys.stderr,
        )
    return directory, network.address


def _on_seats(seats: list[SeatInfo]) -> None:
    """A joiner's seat list, with fingerprints to compare with what the others' screens show."""
    print("seated: " + ", ".join(f"{seat.name} ({seat.fingerprint})" for seat in seats), flush=True)


def _on_notice(notice: SeatBarred) -> None:
    """A seat barred from the lobby for withholding its part of the seat draw (P-3.2): say who."""
    print(f"lobby: {notice}", flush=True)


def _on_runner(runner: TableRunner) -> None:
    for line in bot_lines(runner.plan.seats):
        print(line, flush=True)


def _options(game_id: str, pairs: list[str]) -> dict[str, object]:
    game = get_game(game_id)
    try:
        options = game.options_to_json(game.options_from_json(parse_options(pairs, game_id)))
    except OptionError as exc:
        print(f"lanplay: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    for note in option_notes(game_id, options):
        print(f"lanplay: note: {note}", file=sys.stderr)
    return options


def _report(outcome: Outcome) -> int:
    if outcome.record_path is not None:
        print(f"game record saved to {outcome.record_path}")
    for line in outcome.exposed:
        print(f"exposed: {shown(line)}")
    if outcome.exposed:
        return 3
    if outcome.table_gone:
        print(
            "lanplay: the table is gone: no other seat answered since this laptop came back (they ended the game or "
            "went on without it); the rounds so far are in the record",
            file=sys.stderr,
        )
        return 4
    if outcome.network_lost:
        print(
            "lanplay: lost the network: no link to any other seat for longer than the table's patience; "
            "run lanplay again to resume",
            file=sys.stderr,
        )
        return 4
    return 0


async def _resume_or(coroutine_factory: Any, directory: Path, interface: str, player: LocalPlayer, args: Any) -> int:
    identity = load_identity(directory)
    try:
        resumed = await resume_table(
            identity=identity,
            data_dir=directory,
            interface=interface,
            player=player,
            step_timeout=args.step_timeout,
            reconnect_timeout=args.reconnect_timeout,
            on_event=printer(),
        )
    except ResumeFailed as exc:  # I3: the journal was set aside; say so and do what was asked
        print(f"lanplay: {exc}", file=sys.stderr)
        resumed = None
    if resumed is not None:
        print("resumed the unfinished game")
        return _report(resumed)
    try:
        outcome: Outcome = await coroutine_factory(identity)
    except LobbyError as exc:  # no table found, or its lobby refused us: say so, no traceback
        print(f"lanplay: {exc}", file=sys.stderr)
        return 2
    return _report(outcome)


def _run(main: Any) -> int:
    """Run a command's coroutine; Ctrl-C stops it at the first press (asyncio cancels it, its lobby,
    bots and mesh close), and an unfinished game stays journaled for the same command to resume."""
    try:
        result: int = asyncio.run(main)
    except KeyboardInterrupt:
        print("\nstopped; an unfinished game resumes when you run the same command again", file=sys.stderr)
        return EXIT_INTERRUPTED
    return result


def run_host(args: argparse.Namespace) -> int:
    directory, interface = _setup(args)
    seats = args.seats if args.seats is not None else args.bots + 1
    game = get_game(args.game)
    if not game.min_players <= seats <= game.max_players:
        print(f"{game.title} is for {game.min_players}–{game.max_players} players, not {seats}", file=sys.stderr)
        return 2
    player: LocalPlayer = BotPlayer(args.game) if args.headless else TextPlayer()
    name = args.name or ("Host bot" if args.headless else "Host")

    options = _options(args.game, args.option)

    def lobby_open(lobby: LobbyHost, port: int) -> None:
        # First lines: what a friend types when mDNS is blocked, and the fingerprint to check.
        print(f"hosting {game.title} for {seats} on {interface} as {name}", flush=True)
        print(f"join with: lanplay join {interface}:{port}", flush=True)
        print(f"table fingerprint: {lobby.identity.public.fingerprint}", flush=True)

    def start(identity: Any) -> Any:
        return host_table(
            identity=identity, data_dir=directory, name=name, game=args.game, options=options,
            seats=seats, bots=args.bots, interface=interface, player=player, step_timeout=args.step_timeout,
            reconnect_timeout=args.reconnect_timeout, on_event=printer(), on_lobby=lobby_open, on_runner=_on_runner,
            bot_delay=bot_delay(None),
        )  # fmt: skip

    return _run(_resume_or(start, directory, interface, player, args))


def bot_delay(value: float | None) -> float:
    """--delay, else $LANPLAY_BOT_DELAY, else 0 (bots of the command line answer at once)."""
    return max(0.0, value) if value is not None else bot_delay_from_env(0.0)


def run_join(args: argparse.Namespace) -> int:
    address = parse_address(args.address)
    if not 0 <= args.bots <= 63:
        raise CommandError(f"--bots {args.bots}: a table has at most 64 seats")
    directory, interface = _setup(args, address[0])
    if not (args.plain or args.bots) and sys.stdin.isatty() and sys.stdout.isatty():
        # The full-screen table, as joining from the lobby: the command the host's screen tells friends to type.
        from lanplay.ui.play import join_net_table  # here: start-up speed (prompt_toolkit)

        logging.getLogger().handlers.clear()  # log lines go to client.log, not over the screen
        try:
            return join_net_table(
                address, name=args.name or default_player_name(), lang=detect_lang(args.lang), interface=interface,
                directory=directory, step_timeout=args.step_timeout,
            )  # fmt: skip
        except LobbyError as exc:
            print(f"lanplay: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # nothing listens there, or no route: one line
            why = exc.strerror or str(exc) or "no answer"
            print(f"lanplay: cannot reach a table at {args.address}: {why}", file=sys.stderr)
            return 2
    player = TextPlayer()
    name = args.name or "Guest"

    async def start(identity: Any) -> Outcome:
        seated = asyncio.Event()

        def on_seats(seats: list[SeatInfo]) -> None:
            _on_seats(seats)
            seated.set()

        game = asyncio.create_task(join_table(
            identity=identity, data_dir=directory, name=name, interface=interface, player=player,
            address=address, step_timeout=args.step_timeout, reconnect_timeout=args.reconnect_timeout,
            on_event=printer(), on_seats=on_seats, on_runner=_on_runner, on_notice=_on_notice,
        ))  # fmt: skip
        bots: list[asyncio.Task[Outcome]] = []
        try:
            if args.bots:
                # This laptop's bots sit after its person: they join the same lobby, each with a key of its own.
                await asyncio.wait([game, asyncio.create_task(seated.wait())], return_when=asyncio.FIRST_COMPLETED)
                if not game.done():
                    lobby_id = await fetch_lobby_id(*address)
                    bots = [
                        asyncio.create_task(
                            _bot_peer(
                                directory, bot_name(i, name), "", lobby_id, interface, address[1],
                                bot_delay(None), args.step_timeout, args.reconnect_timeout,
                                laptop=identity, lobby_host=address[0],
                            )
                        )
                        for i in range(1, args.bots + 1)
                    ]
            outcome = await game
            await asyncio.gather(*bots, return_exceptions=True)
            return outcome
        finally:
            for task in (game, *bots):
                task.cancel()
            await asyncio.gather(game, *bots, return_exceptions=True)

    return _run(_resume_or(start, directory, interface, player, args))


def run_bot(args: argparse.Namespace) -> int:
    if not 0 <= args.again <= 1000:
        raise CommandError(f"--again {args.again}: from 0 to 1000 games")
    address = parse_address(args.join) if args.join else None
    directory, interface = _setup(args, address[0] if address else None)
    player = BotPlayer(args.game, args.kind, bot_delay(args.delay))
    runners: list[TableRunner] = []

    def on_runner(runner: TableRunner) -> None:
        runner.may_go_on = True  # P-5.7: a bot process always goes on, offering to run a bot in an empty seat
        runners.append(runner)
        _on_runner(runner)

    def table(identity: Any) -> Any:
        name = args.name or f"Bot {identity.public.fingerprint[:4]}"
        print(f"{name} runs on this laptop alone: no seat at the table sees its cards", flush=True)
        if args.host:
            return host_table(
                identity=identity, data_dir=directory, name=name, game=args.game,
                options=_options(args.game, args.option), seats=args.seats, bots=0, interface=interface,
                player=player, step_timeout=args.step_timeout, reconnect_timeout=args.reconnect_timeout,
                on_event=printer(), on_runner=on_runner, bot_kind=args.kind,
            )  # fmt: skip
        return join_table(
            identity=identity, data_dir=directory, name=name, interface=interface, player=player,
            address=address, game=args.game, table_id=args.table,
            step_timeout=args.step_timeout, reconnect_timeout=args.reconnect_timeout, on_event=printer(),
            on_runner=on_runner, runs_on=identity.public.hex(), on_notice=_on_notice,  # a bot on a laptop of its own
        )  # fmt: skip

    async def go_on(outcome: Outcome) -> Outcome:
        if runners:
            outcome = await play_on(
                runners[-1], outcome, interface=interface, player=player, bot_kind=args.kind or "heuristic",
                on_event=printer(), on_runner=on_runner,
            )  # fmt: skip
        return outcome

    async def start(identity: Any) -> Outcome:
        outcome = await go_on(await table(identity))
        for game in range(1, args.again + 1):
            if not runners or not outcome.finished or outcome.left:
                break
            if outcome.record_path is not None:
                print(f"game record saved to {outcome.record_path}", flush=True)
            prior = runners[-1].plan
            print(f"playing again ({game} of {args.again}) after table {prior.table_id}", flush=True)
            name = args.name or f"Bot {identity.public.fingerprint[:4]}"
            outcome = await go_on(await play_again(
                prior=prior, identity=identity, data_dir=directory, name=name, interface=interface, player=player,
                bot_kind=args.kind or "heuristic", on_event=printer(), on_runner=on_runner,
                start_after=float(prior.patience),
            ))  # fmt: skip
        return outcome

    return _run(_resume_or(start, directory, interface, player, args))
