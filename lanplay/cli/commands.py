"""The `lanplay` command."""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.api import RuleError
from engine.games import all_games, get_game
from engine.record import GameRecord, RecordFault, load_record_text, parse_record, replay_text
from lanplay.base.store import StoreError, data_dir, load_or_create_identity, set_aside_journals
from lanplay.base.text import shown
from lanplay.bots import BOT_KINDS, add_budget_argument, apply_budget_argument
from lanplay.cli.local import play_local
from lanplay.cli.netcli import CommandError, add_network_commands
from lanplay.cli.options import OptionError, parse_options
from lanplay.games import BUNDLES, game_bundle, option_keys_text, option_notes, options_help, replay_lines
from lanplay.net.address import AddressError
from lanplay.net.discovery import DiscoveryError
from lanplay.net.network import network_in_use
from lanplay.table.runner import unfinished_journal
from lanplay.ui.describe import default_player_name, fault_text
from lanplay.ui.i18n import detect_lang, t
from protocol.errors import ProtocolError
from protocol.table.verify import check_end, check_record


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for top, own in (("top_name", "name"), ("top_lang", "lang")):
        if getattr(args, top) is not None and getattr(args, own, None) is None:
            setattr(args, own, getattr(args, top))
    try:
        if args.command is None:  # `lanplay` alone: the lobby
            from lanplay.ui.lobby_screen import lobby_command  # here: start-up speed (prompt_toolkit)

            return lobby_command(args.top_name, args.top_lang, None)
        apply_budget_argument(getattr(args, "bot_budget", None))
        result: int = args.run(args)
    except (AddressError, CommandError, DiscoveryError, StoreError) as exc:
        # Bad input (an address not on this laptop, a bad port, an unreadable file): one line, exit 2.
        print(f"lanplay: {exc}", file=sys.stderr)
        return 2
    return result


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lanplay")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lanplay", description="Card games across laptops on one local network.")
    parser.add_argument("--version", action="version", version=f"lanplay {_version()}")
    parser.set_defaults(command=None)
    # `lanplay --name Ann` is the lobby's --name; before a command it is that command's default
    parser.add_argument("--name", dest="top_name", metavar="NAME", help="your name at the table")
    parser.add_argument("--lang", dest="top_lang", choices=["en", "nl"], help="language of the screens")
    sub = parser.add_subparsers(dest="command")

    where = sub.add_parser(
        "where", help="where lanplay keeps its files: data directory, identity, network in use, unfinished games"
    )
    where.add_argument("--interface", help="the IPv4 address to play on (as for the other commands)")
    where.set_defaults(run=run_where)

    rules = sub.add_parser("rules", help="print a game's rules with their ids (as the engine plays them)")
    rules.add_argument("game", choices=sorted(all_games()), help="the game")
    rules.set_defaults(run=run_rules)

    replay = sub.add_parser("replay", help="replay and check a game record")
    replay.add_argument("file", type=Path, help="a lanplay-record/1 file")
    replay.add_argument("--json", action="store_true", help="print the machine-readable result")
    replay.set_defaults(run=run_replay)

    verify = sub.add_parser("verify", help="check every proof in a table's game record again, offline")
    verify.add_argument("file", type=Path, help="a record a table wrote (in the data directory's records/)")
    verify.set_defaults(run=run_verify)

    lobby = sub.add_parser("lobby", help="the full-screen lobby of tables on the network (also: lanplay alone)")
    lobby.add_argument("--name", help="your name at the table (default: your login name)")
    lobby.add_argument("--lang", choices=["en", "nl"], help="language of the screens (default: from the locale)")
    lobby.add_argument("--interface", help="the IPv4 address to play on (default $LANPLAY_INTERFACE or 127.0.0.1)")
    lobby.set_defaults(run=run_lobby)

    # --- `lanplay play` (its options, their help and their checks live together here and in run_play)

    play = sub.add_parser(
        "play", help="play on this laptop against bots", description="Play a game on this laptop against bots.",
        epilog=options_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    play.add_argument("--game", choices=sorted(all_games()), default=BUNDLES[0].id,
                      help="the game to play (default: sixth-sense)")
    play.add_argument("--bots", type=int, default=3, help="how many bots join you (default: 3)")
    play.add_argument("--name", default=None, help="your name at the table (default: your login name)")
    play.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE",
        help="a table option, repeatable, e.g. --option target=20 (the keys of each game are listed below)",
    )  # fmt: skip
    play.add_argument("--bot-kind", choices=BOT_KINDS, default="normal",
                      help="how the bots play: easy, normal or expert (default: normal); random is easy, "
                      "heuristic the rule-of-thumb player without search")
    add_budget_argument(play)
    play.add_argument(
        "--record", type=Path,
        help="also copy the game record here (it is saved in the data directory's records/; with --plain or "
        "--offline: where to save it, default the current folder)",
    )  # fmt: skip
    play.add_argument("--plain", action="store_true",
                      help="play by typing numbers, as plain text (for any terminal or a script)")
    play.add_argument(
        "--offline", action="store_true",
        help="the full-screen table on an in-process engine (no protocol, no network sockets)",
    )  # fmt: skip
    play.add_argument("--lang", choices=["en", "nl"], help="language of the table (default: from the locale)")
    play.set_defaults(run=run_play)


    add_network_commands(sub)
    return parser


def rules_text(game_id: str) -> str:
    """The full rules of a game with their ids (S-…, T-…, X-…), shipped in its bundle (lanplay/games/GAME/rules.md)."""
    return game_bundle(game_id).rules_text()


def run_rules(args: argparse.Namespace) -> int:
    try:
        print(rules_text(args.game), end="")
    except BrokenPipeError:  # `lanplay rules take6 | head`
        sys.stderr.close()
    return 0


def run_replay(args: argparse.Namespace) -> int:

    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fault = RecordFault(None, None, None, "format", f"cannot read {args.file}: {exc}")
        return _report_fault(fault, args.json)
    try:
        replay = replay_text(text)
    except RecordFault as fault:
        return _report_fault(fault, args.json, text)
    if args.json:
        print(json.dumps(replay.to_json()))
    else:
        try:
            for line in replay_lines(replay):
                print(line)
        except BrokenPipeError:  # `lanplay replay FILE | head`: the reader has seen enough
            sys.stderr.close()
    return 0


def run_verify(args: argparse.Namespace) -> int:
    """One line per proof: who did what, by which rule (P-5.4); exit 2 if any proof shows nothing."""
    try:
        raw = load_record_text(args.file.read_text(encoding="utf-8"))
        names, results = check_record(raw)
        signed = check_end(raw) if "end" in raw else None
    except (OSError, UnicodeDecodeError) as exc:
        print(f"lanplay: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    except (RecordFault, ProtocolError) as exc:
        print(f"lanplay: {args.file} cannot be checked: {exc}", file=sys.stderr)
        return 2
    if signed is not None:
        print("end signed by: " + (", ".join(shown(names[s]) for s in signed) or "nobody"))
    if not results:
        print("no proofs: nobody was exposed at this table")
    bad = 0
    for check in results:
        if check.conviction is not None:
            print(f"proof {check.index + 1}: holds: {shown(check.conviction.line(list(names)))}")
        else:
            bad += 1
            print(f"proof {check.index + 1}: shows nothing: {shown(str(check.error))}")
    return 2 if bad else 0


def _report_fault(fault: RecordFault, as_json: bool, text: str = "") -> int:
    """`--json`: the spec's error object (0-based indexes); else the replay's own words (Round 1, Bot 1)."""

    if as_json:
        print(json.dumps(fault.to_json()))
    else:
        players = None
        with contextlib.suppress(RecordFault):  # a header too broken to name the players: seat numbers
            players = parse_record(load_record_text(text)).players if text else None
        print(fault_text(fault, players), file=sys.stderr)
    return 2


def run_play(args: argparse.Namespace) -> int:
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
        options = game.options_from_json(parse_options(args.option, game.id))
    except OptionError as exc:
        print(f"lanplay play: {exc}", file=sys.stderr)
        return 2
    except RuleError as exc:
        print(f"lanplay play: bad option: {exc.message} (options of {game.id}: {option_keys_text(game.id)})",
              file=sys.stderr)
        return 2
    for note in option_notes(game.id, game.options_to_json(options)):
        print(f"lanplay play: note: {note}", file=sys.stderr)
    if not (sys.stdin.isatty() and sys.stdout.isatty()) and not args.plain:
        print("lanplay play: the full-screen table needs a terminal (standard input and output are not one); "
              "use --plain to play by typing numbers", file=sys.stderr)
        return 2
    args.name = args.name or default_player_name()
    path: Path = args.record or Path(f"lanplay-{game.id}-{secrets.token_hex(4)}.json")

    if not args.plain:
        from lanplay.ui.play import play_net_table, play_offline_table  # here: start-up speed (prompt_toolkit)

        if args.offline:
            return play_offline_table(
                game, options, name=args.name, bots=args.bots, bot_kind=args.bot_kind, lang=detect_lang(args.lang),
                record_dir=path.parent, record_name=path.name,
            )
        return play_net_table(
            game, options, name=args.name, bots=args.bots, bot_kind=args.bot_kind, lang=detect_lang(args.lang),
            record_copy=args.record,
        )
    record = play_local(game, args.name, args.bots, options, args.bot_kind, sys.stdin, sys.stdout,
                        lang=detect_lang(args.lang))
    if not any(played.moves for played in record.rounds):  # left before any move: no file in the current folder
        print(t("no_move_nothing_saved", detect_lang(args.lang)))
        return 0
    save_record(record, path)
    print(f"Game record saved to {path}")
    return 0


def run_where(args: argparse.Namespace) -> int:
    directory = data_dir()
    identity = load_or_create_identity(directory)
    network = network_in_use(args.interface, directory, ask=True)  # a bad choice is one line, before the rest
    print(f"data directory: {directory}")
    print(f"identity: {identity.public.fingerprint} ({directory / 'identity.key'})")
    if network is None:
        print("network: none chosen yet (the lobby asks; the commands play on this laptop only)")
    else:
        print(f"network: {network.label} ({network.address}, from {network.source})")
    found = unfinished_journal(directory)
    if found is None:
        print("unfinished games: none")
    else:
        plan, path = found
        names = ", ".join(seat.name for seat in plan.seats)
        print(f"unfinished games: {get_game(plan.game).title} with {names} ({path}); `lanplay`, then r, resumes it")
    aside = set_aside_journals(directory)
    if aside:  # I3: journals that could not be resumed, kept for a look (the log says why)
        print(f"journals set aside, they could not be resumed: {', '.join(str(p) for p in aside)}")
    print(f"records: {directory / 'records'}")
    return 0


def run_lobby(args: argparse.Namespace) -> int:
    from lanplay.ui.lobby_screen import lobby_command  # here: start-up speed (prompt_toolkit)

    return lobby_command(args.name, args.lang, args.interface)


def save_record(record: GameRecord, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(record.dumps(), encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
