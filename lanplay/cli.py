"""The `lanplay` command."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.api import RuleError
from engine.games import all_games, get_game
from engine.record import GameRecord, RecordFault, replay_text
from lanplay.bots import BOT_KINDS, add_budget_argument, apply_budget_argument


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `lanplay` alone: the lobby
        from lanplay.ui.lobby_screen import lobby_command

        return lobby_command(None, None, None)
    apply_budget_argument(getattr(args, "bot_budget", None))
    result: int = args.run(args)
    return result


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lanplay", description="Card games across laptops on one local network.")
    parser.set_defaults(command=None)
    sub = parser.add_subparsers(dest="command")

    replay = sub.add_parser("replay", help="replay and check a game record")
    replay.add_argument("file", type=Path, help="a lanplay-record/1 file")
    replay.add_argument("--json", action="store_true", help="print the machine-readable result")
    replay.set_defaults(run=run_replay)

    lobby = sub.add_parser("lobby", help="the full-screen lobby of tables on the network (also: lanplay alone)")
    lobby.add_argument("--name", help="your name at the table (default: your login name)")
    lobby.add_argument("--lang", choices=["en", "nl"], help="language of the screens (default: from the locale)")
    lobby.add_argument("--interface", help="the IPv4 address to play on (default $LANPLAY_INTERFACE or 127.0.0.1)")
    lobby.set_defaults(run=run_lobby)

    play = sub.add_parser("play", help="play on this laptop against bots")
    play.add_argument("--game", choices=sorted(all_games()), default="sixth-sense")
    play.add_argument("--bots", type=int, default=3, help="how many bots join you")
    play.add_argument("--name", default="You")
    play.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="a table option, e.g. target=20"
    )
    play.add_argument("--bot-kind", choices=BOT_KINDS, default="heuristic", help="random (easy), heuristic, expert")
    add_budget_argument(play)
    play.add_argument(
        "--record", type=Path,
        help="also copy the game record here (it is saved in the data directory's records/; with --plain or "
        "--offline: where to save it, default the current folder)",
    )  # fmt: skip
    play.add_argument("--plain", action="store_true", help="the plain-text loop instead of the full-screen table")
    play.add_argument(
        "--offline", action="store_true",
        help="the full-screen table on an in-process engine (no protocol, no network sockets)",
    )  # fmt: skip
    play.add_argument("--lang", choices=["en", "nl"], help="language of the table (default: from the locale)")
    play.set_defaults(run=run_play)

    from lanplay.netcli import add_network_commands

    add_network_commands(sub)
    return parser


def run_replay(args: argparse.Namespace) -> int:
    from lanplay.describe import replay_lines

    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fault = RecordFault(None, None, None, "format", f"cannot read {args.file}: {exc}")
        return _report_fault(fault, args.json)
    try:
        replay = replay_text(text)
    except RecordFault as fault:
        return _report_fault(fault, args.json)
    if args.json:
        print(json.dumps(replay.to_json()))
    else:
        for line in replay_lines(replay):
            print(line)
    return 0


def _report_fault(fault: RecordFault, as_json: bool) -> int:
    if as_json:
        print(json.dumps(fault.to_json()))
    else:
        where = ", ".join(
            f"{label} {value}"
            for label, value in (("round", fault.round), ("move", fault.move), ("seat", fault.seat))
            if value is not None
        )
        print(f"faulty record ({where or 'header'}): {fault.rule}: {fault.message}", file=sys.stderr)
    return 2


def parse_options(pairs: Sequence[str]) -> dict[str, object]:
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--option wants KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def run_play(args: argparse.Namespace) -> int:
    from lanplay.local import play_local

    game = get_game(args.game)
    players = 1 + args.bots
    if not game.min_players <= players <= game.max_players:
        print(
            f"{game.title} is for {game.min_players}–{game.max_players} players: "
            f"use --bots {game.min_players - 1} to {game.max_players - 1}",
            file=sys.stderr,
        )
        return 2
    try:
        options = game.options_from_json(parse_options(args.option))
    except RuleError as exc:
        print(f"bad option: {exc.message}", file=sys.stderr)
        return 2
    path: Path = args.record or Path(f"lanplay-{game.id}-{secrets.token_hex(4)}.json")
    if not args.plain:
        from lanplay.ui.app import play_local_table, play_net_table
        from lanplay.ui.i18n import detect_lang

        if args.offline:
            return play_local_table(
                game, options, name=args.name, bots=args.bots, bot_kind=args.bot_kind, lang=detect_lang(args.lang),
                record_dir=path.parent, record_name=path.name,
            )
        return play_net_table(
            game, options, name=args.name, bots=args.bots, bot_kind=args.bot_kind, lang=detect_lang(args.lang),
            record_copy=args.record,
        )
    record = play_local(game, args.name, args.bots, options, args.bot_kind, sys.stdin, sys.stdout)
    save_record(record, path)
    print(f"Game record saved to {path}")
    return 0


def run_lobby(args: argparse.Namespace) -> int:
    from lanplay.ui.lobby_screen import lobby_command

    return lobby_command(args.name, args.lang, args.interface)


def save_record(record: GameRecord, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(record.dumps(), encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
