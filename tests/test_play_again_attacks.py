"""Play again (issue 30, `lanplay.table.again`) against adverts a modified or broken laptop puts on the LAN:
a play-again advert for a finished table that its laptop cannot seat anyone at (a stranger naming a seat's
fingerprint, a crashed host whose advert lingers in the mDNS caches). The laptops that said yes must still
end at one table and play it (P-6.4), opening a bounded number of lobbies and adverts to get there (P-6.6)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from lanplay.net.discovery import TableAdvert, TableAdvertiser
from lanplay.net.lobby import LobbyError, LobbyHost, SeatInfo, join_lobby
from lanplay.table.again import play_again
from lanplay.table.runner import BotPlayer, Outcome
from protocol.identity import Identity
from protocol.plan import TablePlan, bot_vouch
from protocol.table import PROTOCOL_VERSION

LOOPBACK = "127.0.0.1"
GAME, OPTIONS = "sixth-sense", {}  # two players may play; six rounds (S-2.2): a few seconds
# (a target score may take hundreds of rounds: a miss scores below zero, S-7.3)
MAX_LOBBIES = 3  # lobbies one laptop may open on its way to the play-again table here


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "home"))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


async def _finished_table(people: list[Identity]) -> TablePlan:
    """The signed plan of a 3-seat table (its game needs not be played: play again reads only the plan)."""
    host = people[0]
    lobby = LobbyHost(host, GAME, OPTIONS, 3, SeatInfo("P0", host.public.hex(), LOOPBACK, 45000), patience=3)
    port = await lobby.start(LOOPBACK)
    try:
        plans = await asyncio.gather(
            lobby.wait_plan(),
            *(join_lobby(p, lobby.lobby_id, LOOPBACK, port, f"P{i}", (LOOPBACK, 45000 + i))
              for i, p in enumerate(people[1:], start=1)),
        )  # fmt: skip
    finally:
        await lobby.close()
    return plans[0]


def test_an_advert_nobody_can_join_never_keeps_the_players_from_playing_again(tmp_path: Path) -> None:
    """The laptop of the lowest seat never says yes. A stranger (a key that never sat there) advertises a
    play-again table of the finished table under that seat's fingerprint, at a port where nothing listens
    (as a crashed host's advert lingers). The two laptops that said yes try it once, find it is not their
    table, and must still meet at one table and play it, each opening a bounded number of lobbies: not a
    new lobby and mDNS advert every quarter second while the stranger's advert stays up."""

    async def scenario() -> tuple[list[Outcome | BaseException], dict[str, int]]:
        people = [Identity.generate() for _ in range(3)]
        prior = await _finished_table(people)
        by_key = {p.public.hex(): p for p in people}
        low, *yes = (by_key[s.public_key] for s in prior.seats)
        stranger = TableAdvert(
            "cd" * 16, GAME, OPTIONS, 1, 3, "Eve", low.public.fingerprint, PROTOCOL_VERSION, LOOPBACK,
            _closed_port(), again_of=prior.table_id,
        )  # fmt: skip
        advertiser = TableAdvertiser(stranger, interface=LOOPBACK)
        await advertiser.start()
        opened: dict[str, int] = {}

        def player(identity: Identity) -> asyncio.Future[Outcome]:
            name = prior.seats[[s.public_key for s in prior.seats].index(identity.public.hex())].name

            def on_lobby(_lobby: LobbyHost, _port: int) -> None:
                opened[name] = opened.get(name, 0) + 1

            return asyncio.ensure_future(play_again(
                prior=prior, identity=identity, data_dir=tmp_path / name, name=name, interface=LOOPBACK,
                player=BotPlayer(GAME), start_after=3.0, on_lobby=on_lobby,
            ))  # fmt: skip

        games = [player(identity) for identity in yes]
        try:
            for _ in range(600):  # 60 s at most; a few seconds when it works
                if all(g.done() for g in games) or max(opened.values(), default=0) > MAX_LOBBIES:
                    break
                await asyncio.sleep(0.1)
        finally:
            for game in games:
                game.cancel()
            outcomes = list(await asyncio.gather(*games, return_exceptions=True))
            await advertiser.stop()
        return outcomes, opened

    outcomes, opened = asyncio.run(scenario())
    assert max(opened.values(), default=0) <= MAX_LOBBIES, opened  # P-6.6
    assert all(isinstance(o, Outcome) and o.complete for o in outcomes), outcomes  # P-6.4


@pytest.mark.parametrize("vouch", ["none", "junk", "another bot's"])
def test_a_stranger_saying_it_is_a_players_bot_gets_no_seat_at_a_play_again_table(vouch: str) -> None:
    """A play-again lobby seats only the finished table's laptops and the bots they vouch for (`only`). A
    stranger names the host's laptop as the one running it, with no vouch, a junk one, or the vouch the host
    signed for one of its real bots: refused, while the host's real bot sits (P-6.7)."""

    async def scenario() -> None:
        host, stranger, bot = Identity.generate(), Identity.generate(), Identity.generate()
        lobby = LobbyHost(
            host, GAME, OPTIONS, 3, SeatInfo("Ann", host.public.hex(), LOOPBACK, 5000),
            only=frozenset({host.public.hex(), Identity.generate().public.hex()}),
        )  # fmt: skip
        port = await lobby.start(LOOPBACK)
        runs_on = host.public.hex()
        real = bot_vouch(host, lobby.lobby_id, bot.public.hex())
        claim = {"none": None, "junk": "00" * 64, "another bot's": real}[vouch]
        try:
            with pytest.raises(LobbyError, match=r"did not say so|no seat at this table"):
                await join_lobby(stranger, lobby.lobby_id, LOOPBACK, port, "Ann's bot 2", (LOOPBACK, 5001),
                                 runs_on=runs_on, vouch=claim)  # fmt: skip
            joined = asyncio.ensure_future(
                join_lobby(bot, lobby.lobby_id, LOOPBACK, port, "Ann's bot 1", (LOOPBACK, 5002), runs_on=runs_on,
                           vouch=real)
            )  # fmt: skip
            for _ in range(100):
                if len(lobby.taken) == 2:
                    break
                await asyncio.sleep(0.05)
            assert [s.public_key for s in lobby.taken] == [host.public.hex(), bot.public.hex()]
            joined.cancel()
            await asyncio.gather(joined, return_exceptions=True)
        finally:
            await lobby.close()

    asyncio.run(scenario())
