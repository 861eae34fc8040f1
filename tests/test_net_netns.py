"""Three laptops on one LAN, made of network namespaces: real multicast mDNS, real TCP between
different addresses.

Layout (all created here, all deleted afterwards, names unique per run):

    <p>br  a namespace holding only a bridge `br0`, no address: it switches, it routes nothing
    <p>1, <p>2, <p>3  one peer each: `eth0` 10.77.0.N/24 (a veth whose other end is on br0), `lo`

The root namespace gets no interface, address or route: nothing here can reach the machine's real
network. One `lanplay bot` runs in each peer namespace with `--interface 10.77.0.N`; the joiners find
the host's table by multicast mDNS over the bridge and the three play a whole 6th Sense game.

Skipped, with the reason, where network namespaces cannot be made (not root, no `ip`, no permission).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from netutil import BotProcess, assert_complete_game, start_table

SUBNET = "10.77.0"
PEERS = 3
GAME_LIMIT = 120.0


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


def _delete(namespaces: list[str]) -> None:
    for ns in namespaces:
        _ip("netns", "del", ns, check=False)


@pytest.fixture
def lan() -> Iterator[list[str]]:
    """The peer namespaces of a fresh bridged LAN; deleted (with the bridge's) at the end."""
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (iproute2) to make network namespaces")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)")
    prefix = f"lanplay{os.getpid()}"
    bridge_ns = f"{prefix}br"
    peers = [f"{prefix}p{i}" for i in range(1, PEERS + 1)]
    made: list[str] = []
    try:
        for ns in (bridge_ns, *peers):
            done = _ip("netns", "add", ns, check=False)
            if done.returncode != 0:
                pytest.skip(f"`ip netns add` is not permitted here: {done.stderr.strip()}")
            made.append(ns)
        try:
            _ip("-n", bridge_ns, "link", "add", "br0", "type", "bridge")
            _ip("-n", bridge_ns, "link", "set", "br0", "up")
            for i, ns in enumerate(peers, start=1):
                # Made inside the namespaces: the root namespace never sees these interfaces.
                _ip("-n", bridge_ns, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
                _ip("-n", bridge_ns, "link", "set", f"v{i}", "master", "br0")
                _ip("-n", bridge_ns, "link", "set", f"v{i}", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", ns, "addr", "add", f"{SUBNET}.{i}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "multicast", "on", "up")
        except subprocess.CalledProcessError as exc:
            pytest.skip(f"cannot build the namespace LAN: {' '.join(exc.cmd)}: {exc.stderr.strip()}")
        # No default route anywhere: only the /24 on eth0 (and lo).
        for ns in peers:
            routes = _ip("-n", ns, "route", "show").stdout
            assert "default" not in routes, routes
        yield peers
    finally:
        _delete(made)
        leftover = [ns for ns in _ip("netns", "list", check=False).stdout.split() if ns.startswith(prefix)]
        _delete(leftover)


@pytest.fixture
def processes() -> Iterator[list[BotProcess]]:
    started: list[BotProcess] = []
    yield started
    for bot in started:
        bot.kill()


def test_three_namespaces_find_each_other_by_multicast_and_play(
    tmp_path: Path, lan: list[str], processes: list[BotProcess]
) -> None:
    table = start_table(
        tmp_path, "sixth-sense", PEERS,
        interfaces=[f"{SUBNET}.{i}" for i in range(1, PEERS + 1)],
        prefixes=[["ip", "netns", "exec", ns] for ns in lan],
        started=processes.append,
    )  # fmt: skip
    assert table.lobby[0] == f"{SUBNET}.1"
    codes = table.wait_all(GAME_LIMIT)
    assert codes == [0] * PEERS, table.describe()
    result = assert_complete_game(table.bots, "sixth-sense")
    assert len(result["rounds"]) >= 1
    for i, bot in enumerate(table.bots[1:], start=2):
        log = bot.stderr()
        assert f"found table {table.table_id}" in log, bot.describe()
        # It listened on its own namespace's address, and talked to the others on theirs.
        assert f"listening on {SUBNET}.{i}:" in log, bot.describe()
    assert "Traceback" not in "".join(b.stderr() for b in table.bots), table.describe()
