"""Play again (issue 30): a new game with the people and options of a table that just finished.

No protocol change: the new table is a table like any other, with a lobby, its own joint seat draw
(P-6.5) and its own signed plan. What is new is how its players find it:

- The lobby is advertised with the finished table's id (`TableAdvert.again_of`) and seats only the
  keys of that table's laptops (a person's, or a `lanplay bot` process's) and bots they vouch for.
  `find_table` and the lobby's list leave such tables out: they are for their people alone.
- Who hosts it: the laptop of the lowest seat of the finished table among those that said yes. No
  laptop knows who else said yes, so each one that does hosts a lobby until it sees the advert of a
  laptop of a lower seat; then it closes its own (before its seat draw begins) and joins that one.
  Every laptop that said yes thus ends in one lobby, whoever left.
- A laptop brings back the bots it ran there (its in-process bots, with their seats' names); they
  join after it, as its bots always do. A `lanplay bot` process is a laptop that always says yes.
- The table starts when every seat of the finished table is back (the lobby is full), or when the
  host starts it with the players who came (`LobbyHost.start_with_those_here`: its person's key `s`,
  or, for a bot process, after `start_after` seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from lanplay.net.discovery import TableAdvert, TableBrowser
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo
from lanplay.table.runner import AnyPlan, LocalPlayer, Outcome, TableRunner
from lanplay.table.tables import _bot_peer, bot_name, host_table, join_table, table_level
from protocol.identity import Identity
from protocol.table import Event

log = logging.getLogger(__name__)

LOOK = 0.25  # how often the adverts are looked at while this laptop hosts or waits


def laptop_seats(plan: AnyPlan) -> list[int]:
    """The seats of `plan` that are laptops: a person's, or a bot process on a laptop of its own (a bot
    run by another seat's laptop comes back with that laptop)."""
    return [seat for seat, info in enumerate(plan.seats) if info.runs_on in (None, info.public_key)]


def again_rank(plan: AnyPlan, advert: TableAdvert) -> int | None:
    """The seat at `plan` of the laptop hosting `advert`, a play-again table of `plan`; None if it is not one."""
    if advert.again_of != plan.table_id:
        return None
    for seat in laptop_seats(plan):
        if plan.seats[seat].fingerprint == advert.host_fingerprint:
            return seat
    return None


def again_answers(
    plan: AnyPlan, seated: tuple[SeatInfo, ...], hosting: frozenset[int] = frozenset()
) -> tuple[list[int], list[int]]:
    """Of the laptops of finished table `plan`: the seats whose players said yes (in the play-again lobby,
    or hosting one of their own: `hosting`), and those not here yet (still deciding, or gone)."""
    keys = {info.public_key for info in seated}
    yes = [seat for seat in laptop_seats(plan) if plan.seats[seat].public_key in keys or seat in hosting]
    return yes, [seat for seat in laptop_seats(plan) if seat not in yes]


def lowest_host(plan: AnyPlan, tables: dict[str, TableAdvert], below: int) -> TableAdvert | None:
    """The play-again table of `plan` hosted by the laptop of the lowest seat under `below`, with a free seat."""
    found: list[tuple[int, TableAdvert]] = []
    for advert in tables.values():
        rank = again_rank(plan, advert)
        if rank is not None and rank < below and advert.seats_taken < advert.seats_total:
            found.append((rank, advert))
    return min(found, key=lambda pair: pair[0])[1] if found else None


async def play_again(
    *,
    prior: AnyPlan,
    identity: Identity,
    data_dir: Path,
    name: str,
    interface: str,
    player: LocalPlayer,
    bot_kind: str = "heuristic",
    bot_delay: float = 0.0,
    on_event: Callable[[Event], None] | None = None,
    on_runner: Callable[[TableRunner], None] | None = None,
    on_lobby: Callable[[LobbyHost, int], None] | None = None,
    on_seats: Callable[[list[SeatInfo]], None] | None = None,
    go: Callable[[TableRunner], Awaitable[bool]] | None = None,
    start_after: float | None = None,
    on_hosting: Callable[[frozenset[int]], None] | None = None,
) -> Outcome:
    """This laptop says yes to playing again after table `prior`: find or host its play-again table
    (module docstring), bring this laptop's bots, play. Returns the new table's outcome; a table that
    ends early goes on as any table does (`play_on`, by the caller, or `go` for a table hosted here).
    `on_hosting`: told the seats whose laptops host a play-again table of `prior` (they said yes)."""
    reconnect_timeout = float(prior.patience)  # the same options: the patience too (P-5.5)
    bot_kind = table_level(prior, bot_kind)  # and the bots' level
    me_key = identity.public.hex()
    me = [info.public_key for info in prior.seats].index(me_key)
    my_bots = [seat for seat, info in enumerate(prior.seats) if info.runs_on == me_key and seat != me]
    only = frozenset(prior.seats[seat].public_key for seat in laptop_seats(prior))
    tried: set[str] = set()  # play-again lobbies that closed under this laptop: each is tried once
    lobbies: list[LobbyHost] = []  # the lobby this laptop hosts, once open

    def opened(lobby: LobbyHost, port: int) -> None:
        lobbies.append(lobby)
        if on_lobby is not None:
            on_lobby(lobby, port)

    def seen(tables: dict[str, TableAdvert]) -> None:
        if on_hosting is not None:
            on_hosting(frozenset(r for r in (again_rank(prior, a) for a in tables.values()) if r is not None))

    async with TableBrowser(interface=interface, on_change=seen) as browser:
        while True:
            advert = lowest_host(prior, {k: v for k, v in browser.tables.items() if k not in tried}, me)
            if advert is not None:
                tried.add(advert.table_id)
                try:
                    return await _join_again(
                        advert, prior, identity=identity, data_dir=data_dir, name=name, interface=interface,
                        player=player, bots=len(my_bots), bot_kind=bot_kind, bot_delay=bot_delay,
                        reconnect_timeout=reconnect_timeout, on_event=on_event, on_runner=on_runner,
                        on_seats=on_seats,
                    )  # fmt: skip
                except LobbyError as exc:  # it closed (its host saw a lower seat's) or refused: look again
                    log.info("play-again table %s: %s; looking again", advert.table_id, exc)
                    await asyncio.sleep(LOOK)
                    continue
            lobbies.clear()
            hosted = host_table(
                identity=identity, data_dir=data_dir, name=name, game=prior.game, options=dict(prior.options),
                seats=len(prior.seats), bots=len(my_bots), interface=interface, player=player,
                bot_delay=bot_delay, reconnect_timeout=reconnect_timeout, on_event=on_event,
                on_runner=on_runner, on_lobby=opened, bot_kind=bot_kind, go=go, again_of=prior.table_id, only=only,
            )  # fmt: skip
            hosting = asyncio.ensure_future(hosted)
            began = time.monotonic()
            yielded = False
            try:
                while not hosting.done():
                    await asyncio.wait([hosting], timeout=LOOK)
                    lobby = lobbies[0] if lobbies else None
                    if hosting.done() or lobby is None or lobby.drawing:
                        continue
                    # Only to one not tried yet: an advert nobody can join (a stranger's, a crashed host's still
                    # cached) would otherwise make every laptop give way to it and host again, forever.
                    untried = {k: v for k, v in browser.tables.items() if k not in tried}
                    if lowest_host(prior, untried, me) is not None:
                        log.info("a laptop of a lower seat hosts the play-again table: joining it instead")
                        yielded = True
                        hosting.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await hosting
                        break
                    if start_after is not None and time.monotonic() - began > start_after:
                        lobby.start_with_those_here()
            except BaseException:
                hosting.cancel()
                with contextlib.suppress(BaseException):
                    await hosting
                raise
            if not yielded:
                return hosting.result()


async def _join_again(
    advert: TableAdvert,
    prior: AnyPlan,
    *,
    identity: Identity,
    data_dir: Path,
    name: str,
    interface: str,
    player: LocalPlayer,
    bots: int,
    bot_kind: str,
    bot_delay: float,
    reconnect_timeout: float,
    on_event: Callable[[Event], None] | None,
    on_runner: Callable[[TableRunner], None] | None,
    on_seats: Callable[[list[SeatInfo]], None] | None,
) -> Outcome:
    """Join the play-again table of `advert` (found by mDNS, its host's key pinned), then this laptop's bots."""
    seated = asyncio.Event()

    def seats_changed(seats: list[SeatInfo]) -> None:
        seated.set()
        if on_seats is not None:
            on_seats(seats)

    joined = join_table(
        identity=identity, data_dir=data_dir, name=name, interface=interface, player=player,
        table_id=advert.table_id, reconnect_timeout=reconnect_timeout, on_event=on_event, on_runner=on_runner,
        on_seats=seats_changed,
    )  # fmt: skip
    game = asyncio.ensure_future(joined)
    helpers: list[asyncio.Task[Outcome]] = []
    try:
        if bots:
            await asyncio.wait([game, asyncio.ensure_future(seated.wait())], return_when=asyncio.FIRST_COMPLETED)
            if not game.done():
                helpers = [
                    asyncio.ensure_future(
                        _bot_peer(
                            data_dir, bot_name(i, name), prior.game, advert.table_id, interface, advert.port,
                            bot_delay, 20.0, reconnect_timeout, bot_kind, laptop=identity,
                            lobby_host=advert.address, go_on=True,
                        )
                    )
                    for i in range(1, bots + 1)
                ]
        outcome = await game
        await asyncio.gather(*helpers, return_exceptions=True)
        return outcome
    finally:
        for task in (game, *helpers):
            task.cancel()
        await asyncio.gather(game, *helpers, return_exceptions=True)
