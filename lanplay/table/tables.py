"""Hosting, finding, joining and resuming tables: lobby + discovery + runner, for the CLI and UI."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from websockets.exceptions import WebSocketException

from lanplay.base.store import BOTS_DIR, StoreError, load_or_create_identity, save_identity
from lanplay.bots import BOT_KINDS
from lanplay.net.discovery import TableAdvert, TableAdvertiser, TableBrowser
from lanplay.net.lobby import (
    LobbyError,
    LobbyHost,
    MeshAddressTaken,
    SeatBarred,
    SeatInfo,
    TableFull,
    fetch_table_info,
    join_lobby,
)
from lanplay.table.runner import (
    AnyPlan,
    BotPlayer,
    LocalPlayer,
    Outcome,
    OwedSecrets,
    TableRunner,
    free_port,
    owed_from_journal,
    unfinished_journal,
)
from lanplay.table.takeback import BackDesk
from protocol.continuation import Continuation
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.plan import TablePlan, bot_vouch
from protocol.table import PROTOCOL_VERSION, Event

log = logging.getLogger(__name__)

DISCOVERY_TIMEOUT = 30.0
MESH_PORT_TRIES = 4  # ports drawn for one join, should a seated peer have announced the one drawn
RECONNECT_TIMEOUT = 120.0  # how long a seat whose link dropped is waited for (TableSettings.reconnect_timeout)


def _runner(
    plan: AnyPlan,
    identity: Identity,
    data_dir: Path,
    player: LocalPlayer,
    interface: str,
    step_timeout: float,
    on_event: Callable[[Event], None] | None,
    on_runner: Callable[[TableRunner], None] | None = None,
    reconnect_timeout: float = RECONNECT_TIMEOUT,
) -> TableRunner:
    runner = TableRunner(
        plan, identity, data_dir, player, interface,
        on_event=on_event,
    )  # fmt: skip
    if on_runner is not None:
        on_runner(runner)
    return runner


async def host_table(
    *,
    identity: Identity,
    data_dir: Path,
    name: str,
    game: str,
    options: JSONObject,
    seats: int,
    bots: int,
    interface: str,
    player: LocalPlayer,
    bot_delay: float = 0.0,
    step_timeout: float = 20.0,
    reconnect_timeout: float = RECONNECT_TIMEOUT,
    advertise: bool = True,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    on_lobby: Callable[[LobbyHost, int], None] | None = None,
    bot_kind: str = "heuristic",
    go: Callable[[TableRunner], Awaitable[bool]] | None = None,
    again_of: str | None = None,
    only: frozenset[str] | None = None,
) -> Outcome:
    """Host a table (seat 0), advertise it, fill `bots` seats with in-process bot peers that join
    over loopback like anyone else, wait for the other seats, then play. `go`: if the table ends early
    with a seat gone, ask this laptop's person whether to go on with a bot there (P-5.7, `play_on`);
    the bot peers go on with it. None: the game ends there. `again_of`, `only`: a play-again table
    (`lanplay.table.again`): the finished table it is advertised for, and the keys that may sit."""
    mesh_port = free_port(interface)
    host_seat = SeatInfo(name, identity.public.hex(), interface, mesh_port)
    lobby = LobbyHost(
        identity, game, options, seats, host_seat, patience=max(1, round(reconnect_timeout)), only=only,
        level=bot_kind,  # signed in the plan: a bot that takes a seat later plays at it too
    )
    lobby_port = await lobby.start(interface)
    if on_lobby is not None:
        on_lobby(lobby, lobby_port)
    log.info("table %s: lobby on %s:%d", lobby.lobby_id, interface, lobby_port)
    advertiser: TableAdvertiser | None = None
    updates: set[asyncio.Task[None]] = set()  # re-announcements still running
    if advertise:
        advert = TableAdvert(
            lobby.lobby_id, game, dict(options), 1, seats, name, identity.public.fingerprint,
            PROTOCOL_VERSION, interface, lobby_port, host_bots=bots, again_of=again_of,
        )  # fmt: skip
        advertiser = TableAdvertiser(advert, interface=interface)
        await advertiser.start()

        def update(taken: tuple[SeatInfo, ...]) -> None:
            assert advertiser is not None
            new = TableAdvert(
                lobby.lobby_id, game, dict(options), len(taken), lobby.seats, name, identity.public.fingerprint,
                PROTOCOL_VERSION, interface, lobby_port, host_bots=bots, again_of=again_of,
            )  # fmt: skip
            task = asyncio.get_running_loop().create_task(advertiser.update(new))
            updates.add(task)
            task.add_done_callback(updates.discard)

        lobby.on_change = update
    bot_tasks = [
        asyncio.create_task(
            _bot_peer(
                data_dir,
                bot_name(i, name),
                game,
                lobby.lobby_id,
                interface,
                lobby_port,
                bot_delay,
                step_timeout,
                reconnect_timeout,
                bot_kind,
                laptop=identity,
                go_on=go is not None,
            )
        )
        for i in range(1, bots + 1)
    ]
    try:
        plan = await lobby.wait_plan()
    except BaseException:  # cancelled (the host left before the start): its bot peers and lobby go too
        for bot in bot_tasks:
            bot.cancel()
        await asyncio.gather(*bot_tasks, return_exceptions=True)
        await lobby.close()
        raise
    finally:
        if advertiser is not None:
            # An update still running when stop() closes the sockets would fail on them.
            for task in list(updates):
                task.cancel()
            await asyncio.gather(*updates, return_exceptions=True)
            await advertiser.stop()
    await lobby.close()
    runner = _runner(plan, identity, data_dir, player, interface, step_timeout, on_event, on_runner, reconnect_timeout)
    if go is not None:
        runner.may_go_on = True
    try:
        outcome = await runner.run()
        if go is not None and runner.can_go_on():
            outcome = await play_on(
                runner, outcome, interface=interface, player=player, bot_kind=bot_kind, bot_delay=bot_delay, go=go,
                on_event=on_event, on_runner=on_runner,
            )  # fmt: skip
        if not outcome.left:  # a person who leaves takes this laptop's bots along
            await asyncio.gather(*bot_tasks, return_exceptions=True)
    finally:
        for bot in bot_tasks:
            bot.cancel()  # no-op after the game; when the host leaves early, its bot peers leave with it
        await asyncio.gather(*bot_tasks, return_exceptions=True)  # each closes its mesh
    return outcome


async def _bot_peer(
    data_dir: Path,
    name: str,
    game: str,
    lobby_id: str,
    interface: str,
    lobby_port: int,
    delay: float,
    step_timeout: float,
    reconnect_timeout: float = RECONNECT_TIMEOUT,
    bot_kind: str = "heuristic",
    *,
    laptop: Identity | None = None,
    lobby_host: str | None = None,
    go_on: bool = False,
) -> Outcome:
    """An in-process bot seat with an identity of its own: it speaks the real protocol. Its key is kept
    in `data_dir/bots/<fingerprint>/` beside its journal, so a crash of this process loses no game
    (`resume_table` carries its seat on too). `laptop`: the identity of the seat whose laptop runs it,
    which signs that it does (`bot_vouch`, P-6.7); `lobby_host`: where the table's lobby listens
    (default: `interface`, the host's own bots)."""
    identity = Identity.generate()
    bot_dir = data_dir / BOTS_DIR / identity.public.fingerprint
    save_identity(bot_dir, identity)
    runs_on = vouch = None
    if laptop is not None:
        runs_on, vouch = laptop.public.hex(), bot_vouch(laptop, lobby_id, identity.public.hex())
    plan = await join_on_a_free_port(interface, lambda mesh: join_lobby(
        identity, lobby_id, lobby_host or interface, lobby_port, name, mesh, runs_on=runs_on, vouch=vouch,
    ))  # fmt: skip
    player = BotPlayer(plan.game, table_level(plan, bot_kind), delay=delay)
    runner = TableRunner(plan, identity, bot_dir, player, interface)
    runner.may_go_on = go_on  # P-5.7: with its laptop's person, whose laptop offers to run the new bots
    outcome = await runner.run()
    if runner.can_go_on():
        outcome = await play_on(
            runner, outcome, interface=interface, player=player, bot_kind=bot_kind, bot_delay=delay, host_bots=False
        )
    return outcome


def table_level(plan: AnyPlan, fallback: str) -> str:
    """The kind a bot of this laptop plays at a table: the table's level, signed in its plan (the lobby
    form's, carried into every continuation: a bot that takes a seat plays at it, P-5.7), when this lanplay
    knows it; else `fallback`."""
    return plan.level if plan.level in BOT_KINDS else fallback


def bot_name(number: int, host_name: str) -> str:
    """`Ann's bot 1`: the seat's name says whose laptop runs it (and so can see its cards), in every
    seat's list, on the table screen and in the game record (names are at most 40 characters)."""
    tail = f"'s bot {number}"
    return host_name[: 40 - len(tail)] + tail


async def join_on_a_free_port(
    interface: str, join: Callable[[tuple[str, int]], Awaitable[TablePlan]]
) -> TablePlan:
    """`join` with a mesh address on `interface` whose port is free right now. A port is announced before
    it listens (`free_port`), so two laptops on one address may draw the same one at once: the lobby
    refuses the second (P-6.7), which draws another and asks again, up to `MESH_PORT_TRIES` ports."""
    for tries_left in range(MESH_PORT_TRIES - 1, -1, -1):
        mesh = (interface, free_port(interface))
        try:
            return await join(mesh)
        except MeshAddressTaken as exc:
            if not tries_left:
                raise
            log.info("%s: drawing another port", exc)
    raise AssertionError("unreachable: the last try raises")


async def find_table(
    interface: str, game: str | None, table_id: str | None, timeout: float, skip: frozenset[str] = frozenset()
) -> TableAdvert:
    """The first advertised table with a free seat (of `game`, or with id `table_id`), not in `skip`."""

    def wanted(advert: TableAdvert) -> bool:
        if table_id is not None:
            return advert.table_id == table_id
        if advert.table_id in skip or advert.again_of is not None:
            return False  # a play-again table is for the players of the table it plays again
        if advert.protocol_version != PROTOCOL_VERSION:
            return False  # its seats would read our honest messages as faults, and we theirs
        return advert.seats_taken < advert.seats_total and (game is None or advert.game == game)

    async with TableBrowser(interface=interface) as browser:
        return await browser.wait_for(wanted, timeout)


async def join_table(
    *,
    identity: Identity,
    data_dir: Path,
    name: str,
    interface: str,
    player: LocalPlayer,
    address: tuple[str, int] | None = None,
    game: str | None = None,
    table_id: str | None = None,
    step_timeout: float = 20.0,
    reconnect_timeout: float = RECONNECT_TIMEOUT,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    on_seats: Callable[[list[SeatInfo]], None] | None = None,
    runs_on: str | None = None,
    on_notice: Callable[[SeatBarred], None] | None = None,
) -> Outcome:
    """Join a table found by mDNS (or at `address`, for networks that block multicast) and play.
    Found by mDNS with no `table_id`: a table that refuses as full is skipped for the next one with a
    free seat (several tables of one game on one network fill one after the other). `on_notice`: a seat
    of the seat draw was barred for withholding its part (P-3.2).
    `LobbyError`, saying why, if no table is found or its lobby cannot be joined (closed, full, not a
    lanplay lobby)."""
    full: set[str] = set()
    deadline = asyncio.get_running_loop().time() + DISCOVERY_TIMEOUT
    while True:
        if address is None:
            try:
                left = max(0.1, deadline - asyncio.get_running_loop().time())
                advert = await find_table(interface, game, table_id, left, frozenset(full))
            except TimeoutError:
                wanted = f"table {table_id}" if table_id else f"table of {game}" if game else "table"
                raise LobbyError(f"no {wanted} with a free seat found by mDNS on {interface} within "
                                 f"{DISCOVERY_TIMEOUT:g} s") from None  # fmt: skip
            if advert.protocol_version != PROTOCOL_VERSION:  # only a table asked for by id gets here
                raise LobbyError(
                    f"table {advert.table_id} speaks table protocol version {advert.protocol_version}, this lanplay "
                    f"speaks {PROTOCOL_VERSION}: install the same lanplay on every laptop"
                )
            host, port, lobby_id = advert.address, advert.port, advert.table_id
            pinned: str | None = advert.host_fingerprint  # I7: the host must prove the key its advert names
            wanted_game: str | None = advert.game
            log.info("found table %s of %s hosted by %s (%s)", lobby_id, advert.game, advert.host_name, advert.host_fingerprint)  # noqa: E501
        else:
            host, port = address
            pinned = wanted_game = None  # no advert to pin the host by: the key it proves is taken on first use
        try:
            if address is not None:
                lobby_id = (await fetch_table_info(host, port)).lobby_id  # checks its table protocol version too
            plan = await join_on_a_free_port(interface, functools.partial(
                join_lobby, identity, lobby_id, host, port, name, on_seats=on_seats, runs_on=runs_on,
                host_fingerprint=pinned, game=wanted_game, on_notice=on_notice,
            ))  # fmt: skip
            break
        except TableFull:
            if address is not None or table_id is not None:
                raise
            log.info("table %s is full: trying the next table", lobby_id)
            full.add(lobby_id)
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise LobbyError(f"cannot join the table at {host}:{port}: {exc or type(exc).__name__}") from exc
    runner = _runner(plan, identity, data_dir, player, interface, step_timeout, on_event, on_runner, reconnect_timeout)
    return await runner.run()


async def resume_table(
    *,
    identity: Identity,
    data_dir: Path,
    interface: str,
    player: LocalPlayer,
    step_timeout: float = 20.0,
    reconnect_timeout: float = RECONNECT_TIMEOUT,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    bot_delay: float = 0.0,
) -> Outcome | None:
    """Carry on the game this installation was in when it stopped (crash, kill), if any, with the bot
    seats this laptop ran at that table (each goes on with it, `TableRunner.local_bots`), and the take-back
    desk for a seat whose person may come back (P-5.7; `play_on` closes it once the go-on is decided)."""
    found = unfinished_journal(data_dir)
    if found is None:
        return None
    plan, path = found
    log.info("resuming the game journaled in %s", path)
    owed = owed_from_journal(plan, identity, data_dir) if isinstance(plan, Continuation) and plan.owes else None
    local = [bot for bot in (_resumed_bot(bot_dir, plan, interface, bot_delay) for bot_dir in local_bot_dirs(
        data_dir, plan)) if bot is not None]  # fmt: skip
    tasks = [asyncio.create_task(_run_bot(bot)) for bot in local]
    runner = _runner(plan, identity, data_dir, player, interface, step_timeout, on_event, on_runner, reconnect_timeout)
    runner.owed = owed
    runner.local_bots = local
    for bot in local:
        bot.owed = owed
    desk = await _open_desk(runner, plan.seats[runner.me].name, interface)
    try:
        outcome = await runner.run()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if desk is not None and not runner.can_go_on():
            await desk.close()
        else:
            runner.desk = desk  # play_on takes it over: open until the go-on is decided
    return outcome


async def _open_desk(runner: TableRunner, name: str, interface: str) -> BackDesk | None:
    """The take-back desk of `runner`'s table if this laptop runs a bot in a seat its person may take back."""
    if not BackDesk.wanted(runner):
        return None
    desk = BackDesk(runner, name, interface)
    try:
        await desk.start()
    except Exception as exc:  # the game goes on without a way back: said in the log
        log.warning("cannot open the take-back desk: %s", exc)
        await desk.close()
        return None
    return desk


def local_bot_dirs(data_dir: Path, plan: AnyPlan) -> list[Path]:
    """The data directories of the bot seats of `plan` that this laptop runs (their keys are kept there)."""
    folder = data_dir / BOTS_DIR
    if not folder.is_dir():
        return []
    seats = {seat.fingerprint for seat in plan.seats}
    return sorted(path for path in folder.iterdir() if path.name in seats and (path / "identity.key").exists())


def _resumed_bot(bot_dir: Path, plan: AnyPlan, interface: str, delay: float) -> TableRunner | None:
    """The runner of a bot seat this laptop ran at table `plan`, from its key and journal (None: none there)."""
    try:
        identity = load_or_create_identity(bot_dir)
        found = unfinished_journal(bot_dir)
    except StoreError as exc:
        log.warning("cannot resume the bot in %s: %s", bot_dir, exc)
        return None
    if found is None or found[0].table_id != plan.table_id:
        return None
    runner = TableRunner(
        found[0], identity, bot_dir, BotPlayer(plan.game, table_level(plan, "heuristic"), delay=delay), interface,
    )  # fmt: skip
    runner.may_go_on = True  # a bot of this laptop always goes on with it (P-5.7)
    return runner


async def _run_bot(runner: TableRunner) -> Outcome | None:
    try:
        return await runner.run()
    except StoreError as exc:  # (ResumeFailed: its journal was set aside) the person's own seat plays on
        log.warning("cannot resume the bot in %s: %s", runner.data_dir, exc)
        return None


def load_identity(data_dir: Path) -> Identity:
    return load_or_create_identity(data_dir)


async def play_on(
    runner: TableRunner,
    outcome: Outcome,
    *,
    interface: str,
    player: LocalPlayer,
    bot_kind: str = "heuristic",
    bot_delay: float = 0.0,
    go: Callable[[TableRunner], Awaitable[bool]] | None = None,
    host_bots: bool = True,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    desk_name: str = "",
) -> Outcome:
    """P-5.7: while the table ends early with this seat present, go on with the seats still present
    (`go` asks this seat's person; None: always go on), a bot in each empty seat (`host_bots`: this
    laptop offers to run them; the lowest seat that offers does), scores carried, until a table ends
    with the game or the seats choose to end it. `runner` has played its table (`may_go_on` set before);
    returns the last table's outcome at this seat. While this laptop runs a bot in a seat its person may
    take back, it opens a take-back desk (`lanplay.table.takeback`, named `desk_name`): a table that
    ends with that bot gone for its person goes on without asking, the person back in the seat."""

    # This laptop's seats at the table: its person's, then the bots it runs (resumed with it, if it was started
    # again), and the desk a resume opened.
    runners = [runner, *runner.local_bots]
    desk: BackDesk | None = runner.desk
    closing: list[asyncio.Task[None]] = []  # desks of tables gone by, open until their people were told
    try:
        while runner.can_go_on():
            session = runner.session
            assert session is not None
            present = session.present()
            empty = [seat for seat in range(len(runner.plan.seats)) if seat not in present]
            if all(seat in runner.take_backs for seat in empty):
                choice = True  # its person takes the seat back: nothing to ask
            else:
                choice = True if go is None else await go(runner)
            bots: dict[int, tuple[Identity, str, int]] = {}
            if choice and host_bots:
                for seat in empty:
                    bots[seat] = (Identity.generate(), interface, free_port(interface))
            answers = await asyncio.gather(
                runner.go_on(choice, bots),
                *(bot.go_on(True) for bot in runners[1:]),  # a bot of this laptop always goes on
                return_exceptions=True,
            )
            plan = answers[0]
            if desk is not None:
                # Open a little longer for a person it gives a seat back to, whose link may drop before it is
                # told the continuation is signed: asked again, the desk tells it then.
                given = plan if isinstance(plan, Continuation) else None
                closing.append(asyncio.ensure_future(desk.close_when_told(given, runner.settings.patience)))
                desk = None
            if not isinstance(plan, Continuation):
                break
            keys = {info.public_key for info in plan.seats}
            identities = {runner.identity.public.hex(): (runner.identity, runner.data_dir)}
            for bot in runners[1:]:
                identities[bot.identity.public.hex()] = (bot.identity, bot.data_dir)
            for identity, _, _ in bots.values():
                if identity.public.hex() in keys:
                    # `go_on` kept its key beside its begun journal (a crash loses no game) once it was signed
                    bot_dir = runner.data_dir / BOTS_DIR / identity.public.fingerprint
                    identities[identity.public.hex()] = (identity, bot_dir)
            # Where the late secrets of a person coming back to a seat that owes them are settled (P-5.5): this
            # laptop's session of the table that just ended, shared by its seats at the next.
            owed = OwedSecrets(session, runner.data_dir) if plan.owes else None
            runner = TableRunner(plan, runner.identity, runner.data_dir, player, interface, on_event=on_event)
            runner.may_go_on = True
            runner.owed = owed
            if on_runner is not None:
                on_runner(runner)
            runners = [runner]
            for info in plan.seats:
                if info.public_key in identities and info.public_key != runner.identity.public.hex():
                    identity, bot_dir = identities[info.public_key]
                    bot_player = BotPlayer(plan.game, table_level(plan, bot_kind), delay=bot_delay)
                    bot = TableRunner(plan, identity, bot_dir, bot_player, interface)
                    bot.may_go_on = True
                    bot.owed = owed
                    runners.append(bot)
            desk = await _open_desk(runner, desk_name or plan.seats[runner.me].name, interface)
            outcomes = await asyncio.gather(*(r.run() for r in runners), return_exceptions=True)
            if isinstance(outcomes[0], BaseException):
                raise outcomes[0]
            outcome = outcomes[0]
    finally:
        if desk is not None:
            await desk.close()
        await asyncio.gather(*closing, return_exceptions=True)  # each ends within a patience
    return outcome
