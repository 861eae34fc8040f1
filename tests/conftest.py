"""Test configuration shared by every test module.

Every test keeps lanplay on loopback: the machine running the tests may have a real LAN, and a
test must never advertise a table or send multicast there. A test that needs another interface makes
it itself (a network namespace) and passes it explicitly.
"""

import os

import pytest

os.environ["LANPLAY_INTERFACE"] = "127.0.0.1"

# Tests that touch the world (sockets on 127.0.0.1, mDNS, processes, tmux, network namespaces) run
# one after another within each of two groups, each group in one xdist worker, so a world test runs
# beside at most one other (of the other group) and the third worker takes the in-memory tests: the
# world tests mostly wait (links, timers, processes), the in-memory ones compute. Every table a test
# starts is found by its own id, address or fingerprint, never as "any table", so a table of the other
# group on loopback cannot catch it; namespace names carry the worker's pid. The split evens the time:
# tables found by mDNS on loopback in one group, namespaces, tmux and the rest in the other.
LOOPBACK_FILES = frozenset({
    "test_cli.py", "test_discovery.py", "test_lobby.py", "test_lobby_chooser.py", "test_net_faults.py",
    "test_network_choice.py", "test_play_again.py", "test_play_again_attacks.py", "test_take_back_net.py",
    "test_take_back_net_attacks.py", "test_take_back_resume_attacks.py", "test_trust_net.py", "test_ui_net.py",
})
APART_FILES = frozenset({
    "test_bots_expert.py", "test_game_night_netns.py", "test_lobby_mesh_address_attacks.py", "test_mesh.py",
    "test_net_loopback.py", "test_net_netns.py", "test_play_resume.py", "test_store.py",
    "test_take_back_owed_net_attacks.py", "test_ui_tmux.py",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in LOOPBACK_FILES:
            item.add_marker(pytest.mark.xdist_group("world-loopback"))
        elif item.path.name in APART_FILES:
            item.add_marker(pytest.mark.xdist_group("world-apart"))
