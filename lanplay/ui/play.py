"""`lanplay play` (full screen): one person against bots, on the one table screen (app.py) and its one loop
(feed.py), from either source: by default a networked table of bot peers of this process (`NetTable`),
journaled like a lobby table; with `--offline` the engine and bots in-process (`LocalTable`). The lines said
after the screen closes (where the record is, who won) are the same for both (`say_outcome`).

The table is hosted on 127.0.0.1 and every bot is a peer of its own that speaks the real protocol
(`lanplay.table.tables.host_table`). Every seat journals into the data directory (the bots under
``bots/<fingerprint>/``, their keys beside their journals), so nothing is lost:

- killed (kill -9, a closed terminal) mid-round, the same command started again resumes the game where it
  was, the person's hand and the bots' included (`resume_table` replays each seat's journal); the lobby's
  r offers it too;
- SIGTERM and SIGHUP leave the screen as a normal exit does (the terminal is restored) and keep the journal
  for that resume: a signal is handled between two steps of the event loop, never inside a journal write;
- leaving on purpose (q, y) saves the record of the finished rounds and says where, or says there is none.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.api import Game
from engine.games import get_game
from lanplay.base.store import data_dir, newly_set_aside, remove_finished_journals, set_aside_journals
from lanplay.net.discovery import DEFAULT_INTERFACE
from lanplay.net.lobby import fetch_table_info
from lanplay.table.runner import AnyPlan, unfinished_journal
from lanplay.table.tables import bot_name, load_identity, local_bot_dirs
from lanplay.ui.app import build_app, log_to_file, run_table_app
from lanplay.ui.describe import default_player_name
from lanplay.ui.local_table import LocalTable, bot_delay_from_env
from lanplay.ui.model import TableModel
from lanplay.ui.net_table import NetTable
from protocol.identity import Identity

# Signals that mean "the terminal is going away" rather than "I want to leave this game".
KEEP_SIGNALS = (signal.SIGTERM, signal.SIGHUP) if hasattr(signal, "SIGHUP") else (signal.SIGTERM,)


def played_against_bots(plan: AnyPlan, identity: Identity, directory: Path) -> bool:
    """True if every other seat of `plan` is a bot this laptop runs (a `lanplay play` game, or a lobby
    table of one person and bots): such a game resumes without anyone else."""
    mine = identity.public.hex()
    others = [seat for seat in plan.seats if seat.public_key != mine]
    return len(local_bot_dirs(directory, plan)) == len(others) and len(others) < len(plan.seats)


def resumable_play(directory: Path, identity: Identity, game: Game[Any, Any, Any, Any], seats: int) -> AnyPlan | None:
    """The unfinished game the same `lanplay play` command left (same game, same number of seats, only
    this laptop's bots), if any."""
    found = unfinished_journal(directory)
    if found is None:
        return None
    plan = found[0]
    if plan.game != game.id or len(plan.seats) != seats or not played_against_bots(plan, identity, directory):
        return None
    return plan


def forget_bots(directory: Path, plan: AnyPlan) -> None:
    """The bots of a game that is over (or left on purpose) are worth nothing: their keys and journals go."""
    for path in local_bot_dirs(directory, plan):
        shutil.rmtree(path, ignore_errors=True)


async def run_keeping_journal(model: TableModel, table: NetTable) -> None:
    """The table screen; SIGTERM/SIGHUP close it as a normal exit does but keep the game resumable."""
    app = build_app(model)
    loop = asyncio.get_running_loop()

    def keep(signame: str) -> None:
        table.keep_journal = True
        if app.is_running:
            app.exit()

    installed = []
    for sig in KEEP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, keep, sig.name)
            installed.append(sig)
    try:
        await run_table_app(model, table, app=app)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def play_net_table(
    game: Game[Any, Any, Any, Any],
    options: Any,
    *,
    name: str,
    bots: int,
    bot_kind: str,
    lang: str,
    record_copy: Path | None = None,
    bot_delay: float | None = None,
    directory: Path | None = None,
) -> int:
    """`lanplay play`: resumes the game the same command left unfinished, else hosts a new one on 127.0.0.1
    whose other seats are bot peers of this process; the record goes to the data directory (and is copied to
    `record_copy`)."""
    if name == "You":  # the command's default: a sentence reads "Ann plays R5" better than "You plays R5"
        name = default_player_name()
    directory = directory if directory is not None else data_dir()
    log_to_file(directory)
    remove_finished_journals(directory)
    identity = load_identity(directory)
    delay = bot_delay if bot_delay is not None else bot_delay_from_env()
    before = set_aside_journals(directory)
    plan = resumable_play(directory, identity, game, bots + 1)
    damaged = newly_set_aside(directory, before)
    common: dict[str, Any] = {
        "identity": identity, "data_dir": directory, "interface": DEFAULT_INTERFACE, "bot_delay": delay,
        "record_copy": record_copy,
    }  # fmt: skip
    if plan is not None:
        names = [seat.name for seat in plan.seats]
        me = [seat.public_key for seat in plan.seats].index(identity.public.hex())
        model = TableModel(get_game(plan.game), names, me, lang)
        _say(model.text("play_resuming", game=model.text(f"game_{plan.game}"), names=", ".join(names)))
        table = NetTable(model, name=names[me], **common).resume()
    else:
        model = TableModel(game, [name, *(bot_name(i, name) for i in range(1, bots + 1))], 0, lang)
        table = NetTable(model, name=name, **common).host(
            options=game.options_to_json(options), seats=bots + 1, bots=bots, bot_kind=bot_kind
        )
    say_damaged(model, damaged)
    asyncio.run(run_keeping_journal(model, table))
    model, table = _play_again(model, table, common, lang, bot_kind, lambda done: forget_bots(directory, done))
    if table.keep_journal and table.outcome is None:
        _say(model.text("play_kept"))
        return 0
    lost = table.outcome is not None and table.outcome.network_lost  # not over: the same command resumes it
    if table.runner is not None and ((table.outcome is not None and not lost) or table.left_early):
        forget_bots(directory, table.runner.plan)
    _say_net_outcome(model, table)
    return 0


def play_offline_table(
    game: Game[Any, Any, Any, Any],
    options: Any,
    *,
    name: str,
    bots: int,
    bot_kind: str,
    lang: str,
    record_dir: Path,
    record_name: str | None = None,
    bot_delay: float | None = None,
) -> int:
    """`lanplay play --offline`: the same table screen on an in-process engine (no protocol, no sockets); the
    record of the game, or of the rounds played before leaving, is saved in `record_dir`."""
    if name == "You":  # the command's default: a sentence reads "Ann plays R5" better than "You plays R5"
        name = default_player_name()
    model = TableModel(game, [name, *(f"Bot {i}" for i in range(1, bots + 1))], 0, lang)
    delay = bot_delay if bot_delay is not None else bot_delay_from_env()
    table = LocalTable(model, options, bot_kind=bot_kind, bot_delay=delay, record_dir=record_dir,
                       record_name=record_name)  # fmt: skip
    asyncio.run(run_table_app(model, table))
    say_outcome(model, table.record_path if table.finished else table.save_record(), "no_move_nothing_saved")
    return 0


def join_net_table(
    address: tuple[str, int],
    *,
    name: str,
    lang: str,
    interface: str,
    directory: Path,
    step_timeout: float = 20.0,
) -> int:
    """`lanplay join HOST:PORT` in a terminal: the same full-screen table as joining from the lobby (its
    `a`). Like every network command it first resumes the game this laptop left unfinished (P-5.4).
    `LobbyError` (one line, exit 2) if no lanplay table answers at `address`."""
    log_to_file(directory)
    remove_finished_journals(directory)
    identity = load_identity(directory)
    common: dict[str, Any] = {
        "identity": identity, "data_dir": directory, "interface": interface, "step_timeout": step_timeout,
    }  # fmt: skip
    before = set_aside_journals(directory)
    found = unfinished_journal(directory)
    damaged = newly_set_aside(directory, before)
    if found is not None:
        plan = found[0]
        names = [seat.name for seat in plan.seats]
        me = [seat.public_key for seat in plan.seats].index(identity.public.hex())
        model = TableModel(get_game(plan.game), names, me, lang)
        _say(model.text("play_resuming", game=model.text(f"game_{plan.game}"), names=", ".join(names)))
        table = NetTable(model, name=names[me], **common).resume()
    else:
        info = asyncio.run(fetch_table_info(*address))  # which game it is, before the table screen opens
        model = TableModel(get_game(info.game), [name], 0, lang)
        table = NetTable(model, name=name, **common).join(address, info.seats)
    say_damaged(model, damaged)
    asyncio.run(run_keeping_journal(model, table))
    model, table = _play_again(model, table, common, lang)
    if table.keep_journal and table.outcome is None:
        _say(model.text("play_kept"))
        return 0
    _say_net_outcome(model, table)
    return 0


def say_damaged(model: TableModel, damaged: list[Path]) -> None:
    """A journal of the unfinished game was found damaged (and set aside, I3): the table's log says so at
    its top, so the new game does not start in silence where the old one was expected."""
    for path in damaged:
        model.add_event("ev_journal_damaged", path=str(path))
    if damaged:
        model.set_error("journal_damaged")  # the footer's red line, until another message takes its place


def _play_again(
    model: TableModel,
    table: NetTable,
    common: dict[str, Any],
    lang: str,
    bot_kind: str = "normal",
    done: Callable[[AnyPlan], None] | None = None,
) -> tuple[TableModel, NetTable]:
    """While the person pressed `a` at the game-over screen: the same players and options at a new table
    (lanplay.table.again), on a new table screen. `done`: called with each finished table's plan."""
    while model.again_requested and table.last_plan is not None:
        _say_net_outcome(model, table)
        prior = table.last_plan
        if done is not None:
            done(prior)
        model = TableModel(get_game(prior.game), [table.name], 0, lang)  # the seats come with the plan
        table = NetTable(model, name=table.name, **common).again(prior, bot_kind=bot_kind)
        asyncio.run(run_keeping_journal(model, table))
    return model, table


def _say_net_outcome(model: TableModel, table: NetTable) -> None:
    nothing = "play_nothing_saved" if table.left_early and table.runner is not None else None
    say_outcome(model, table.shown_record or table.record_path, nothing)


def say_outcome(model: TableModel, path: Path | None, nothing: str | None) -> None:
    """After the table screen closed: where the record is (or the line `nothing` if there is none), and who won."""
    if path is not None:
        _say(model.text("record_saved", path=str(path)))
    elif nothing is not None:
        _say(model.text(nothing))
    if model.game_over is not None and model.game_over.winners:
        _say(model.text("winner_is" if len(model.game_over.winners) == 1 else "winners_are",
                        names=model.name_list(model.game_over.winners)))  # fmt: skip


def _say(line: str) -> None:
    # After SIGHUP the terminal may be gone: a line nobody can read must not turn into a traceback.
    with contextlib.suppress(OSError):
        print(line, flush=True)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
