"""The networked commands: `lanplay host`, `lanplay join`, `lanplay bot`.

Every one of them first resumes the game this installation was in if it stopped mid-game (P-5.4):
started again with the same command after a crash or a kill, a peer rejoins its table.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from engine.games import all_games, get_game
from lanplay.bots import BOT_KINDS, add_budget_argument
from lanplay.discovery import interface_from_env
from lanplay.lobby import LobbyError
from lanplay.runner import BotPlayer, LocalPlayer, Outcome, TableRunner
from lanplay.store import data_dir
from lanplay.tables import RECONNECT_TIMEOUT, host_table, join_table, load_identity, resume_table
from protocol.session import Blamed, Event, GameOver, PeekResult, RoundAudited


def add_network_commands(sub: Any) -> None:
    host = sub.add_parser("host", help="host a table on the network (bots may fill seats)")
    host.add_argument("--game", choices=sorted(all_games()), required=True)
    host.add_argument("--bots", type=int, default=0, help="seats filled by bot peers in this process")
    host.add_argument("--seats", type=int, help="seats at the table (default: you + the bots)")
    host.add_argument("--headless", action="store_true", help="a bot plays your seat too")
    _common(host)
    host.set_defaults(run=run_host)

    join = sub.add_parser("join", help="join the table at HOST:PORT (for networks that block multicast)")
    join.add_argument("address", metavar="HOST:PORT")
    _common(join)
    join.set_defaults(run=run_join)

    bot = sub.add_parser("bot", help="a bot as a full peer: joins a table found by mDNS, or hosts one")
    bot.add_argument("--game", choices=sorted(all_games()), required=True)
    where = bot.add_mutually_exclusive_group()
    where.add_argument("--join", metavar="HOST:PORT", help="the table's address instead of mDNS")
    where.add_argument("--table", metavar="ID", help="the advertised table id to join")
    where.add_argument("--host", action="store_true", help="host a table instead of joining one")
    bot.add_argument("--seats", type=int, default=4, help="with --host: seats at the table")
    bot.add_argument("--kind", choices=BOT_KINDS, default="heuristic", help="random (easy), heuristic, expert")
    add_budget_argument(bot)
    bot.add_argument("--delay", type=float, default=0.0, help="seconds a bot thinks before each move")
    _common(bot)
    bot.set_defaults(run=run_bot)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=None, help="your name at the table")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a table option")
    parser.add_argument(
        "--interface", default=None, help="the IPv4 address to play on (default $LANPLAY_INTERFACE or 127.0.0.1)"
    )
    parser.add_argument("--step-timeout", type=float, default=20.0, help="seconds an automatic step may take")
    parser.add_argument(
        "--reconnect-timeout", type=float, default=RECONNECT_TIMEOUT,
        help="seconds a seat whose link dropped is waited for before it is blamed for withholding (P-5.3)",
    )  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true")


class TextPlayer:
    """A person at a plain terminal: the legal moves are numbered, they type one."""

    async def decide(self, runner: TableRunner, moves: tuple[Any, ...]) -> Any:
        from lanplay.describe import move_text

        session = runner.session
        assert session is not None
        names = list(session.settings.names)
        print(f"\nYour turn ({session.game.title}). {session.game.public_state(session.view()).get('round', '')}")
        for index, move in enumerate(moves, 1):
            print(f"  {index:2}. {move_text(names, session.game.move_to_json(move))}")
        while True:
            line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
            if not line:
                await asyncio.sleep(3600)  # input closed: the table waits, as it would for a person
            text = line.strip()
            if text.isdigit() and 1 <= int(text) <= len(moves):
                return moves[int(text) - 1]
            print(f"Type a number from 1 to {len(moves)}.")


def _printer(names: list[str] | None = None) -> Any:
    def show(event: Event) -> None:
        if isinstance(event, RoundAudited):
            print(f"round {event.round + 1} audited and confirmed: {event.report}", flush=True)
        elif isinstance(event, Blamed):
            who = "an unknown seat" if event.seat is None else f"seat {event.seat}"
            print(f"BLAME: {who} broke {event.rule}: {event.message}", flush=True)
        elif isinstance(event, PeekResult):
            print(f"you peek at seat {event.target}'s prediction card: {event.card}", flush=True)
        elif isinstance(event, GameOver):
            print(f"game over: winners {list(event.winners)}", flush=True)

    return show


def _setup(args: argparse.Namespace) -> tuple[Path, str]:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s"
    )
    return data_dir(), interface_from_env(args.interface)


def _options(game_id: str, pairs: list[str]) -> dict[str, object]:
    from lanplay.cli import parse_options

    game = get_game(game_id)
    return game.options_to_json(game.options_from_json(parse_options(pairs)))


def _report(outcome: Outcome) -> int:
    if outcome.record_path is not None:
        print(f"game record saved to {outcome.record_path}")
    if outcome.blame is not None:
        return 3
    return 0


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise SystemExit(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


async def _resume_or(coroutine_factory: Any, directory: Path, interface: str, player: LocalPlayer, args: Any) -> int:
    identity = load_identity(directory)
    resumed = await resume_table(
        identity=identity,
        data_dir=directory,
        interface=interface,
        player=player,
        step_timeout=args.step_timeout,
        reconnect_timeout=args.reconnect_timeout,
        on_event=_printer(),
    )
    if resumed is not None:
        print("resumed the unfinished game")
        return _report(resumed)
    try:
        outcome: Outcome = await coroutine_factory(identity)
    except LobbyError as exc:  # no table found, or its lobby refused us: say so, no traceback
        print(f"lanplay: {exc}", file=sys.stderr)
        return 2
    return _report(outcome)


def run_host(args: argparse.Namespace) -> int:
    directory, interface = _setup(args)
    seats = args.seats if args.seats is not None else args.bots + 1
    game = get_game(args.game)
    if not game.min_players <= seats <= game.max_players:
        print(f"{game.title} is for {game.min_players}–{game.max_players} players, not {seats}", file=sys.stderr)
        return 2
    player: LocalPlayer = BotPlayer(args.game) if args.headless else TextPlayer()
    name = args.name or ("Host bot" if args.headless else "Host")

    def start(identity: Any) -> Any:
        print(f"hosting {game.title} for {seats} on {interface} as {name} ({identity.public.fingerprint})")
        return host_table(
            identity=identity, data_dir=directory, name=name, game=args.game, options=_options(args.game, args.option),
            seats=seats, bots=args.bots, interface=interface, player=player, step_timeout=args.step_timeout,
            reconnect_timeout=args.reconnect_timeout, on_event=_printer(),
        )  # fmt: skip

    return asyncio.run(_resume_or(start, directory, interface, player, args))


def run_join(args: argparse.Namespace) -> int:
    directory, interface = _setup(args)
    player = TextPlayer()

    def start(identity: Any) -> Any:
        return join_table(
            identity=identity, data_dir=directory, name=args.name or "Guest", interface=interface, player=player,
            address=_address(args.address), step_timeout=args.step_timeout,
            reconnect_timeout=args.reconnect_timeout, on_event=_printer(),
        )  # fmt: skip

    return asyncio.run(_resume_or(start, directory, interface, player, args))


def run_bot(args: argparse.Namespace) -> int:
    directory, interface = _setup(args)
    player = BotPlayer(args.game, args.kind, args.delay)

    def start(identity: Any) -> Any:
        name = args.name or f"Bot {identity.public.fingerprint[:4]}"
        if args.host:
            return host_table(
                identity=identity, data_dir=directory, name=name, game=args.game,
                options=_options(args.game, args.option), seats=args.seats, bots=0, interface=interface,
                player=player, step_timeout=args.step_timeout, reconnect_timeout=args.reconnect_timeout,
                on_event=_printer(),
            )  # fmt: skip
        return join_table(
            identity=identity, data_dir=directory, name=name, interface=interface, player=player,
            address=_address(args.join) if args.join else None, game=args.game, table_id=args.table,
            step_timeout=args.step_timeout, reconnect_timeout=args.reconnect_timeout, on_event=_printer(),
        )  # fmt: skip

    return asyncio.run(_resume_or(start, directory, interface, player, args))
