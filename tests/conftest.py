"""Test configuration shared by every test module.

Every test keeps lanplay on loopback: the machine running the tests may have a real LAN, and a
test must never advertise a table or send multicast there. A test that needs another interface makes
it itself (a network namespace) and passes it explicitly.
"""

import os

import pytest

os.environ["LANPLAY_INTERFACE"] = "127.0.0.1"

# Tests that touch the world (sockets on 127.0.0.1, mDNS, processes, tmux, network namespaces) run
# one after another in one xdist worker, as they would alone: they share machine-wide things (mDNS on
# loopback, namespace names) and their timing. The in-memory tests spread over the other worker.
WORLD_FILES = frozenset({
    "test_bots_expert.py", "test_cli.py", "test_discovery.py", "test_game_night_netns.py", "test_lobby.py",
    "test_lobby_chooser.py", "test_mesh.py", "test_net_faults.py", "test_net_loopback.py", "test_net_netns.py",
    "test_network_choice.py", "test_play_again.py", "test_play_again_attacks.py", "test_play_resume.py",
    "test_store.py", "test_take_back_net.py", "test_take_back_net_attacks.py", "test_take_back_owed_net_attacks.py",
    "test_take_back_resume_attacks.py",
    "test_trust_net.py", "test_ui_net.py", "test_ui_tmux.py",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in WORLD_FILES:
            item.add_marker(pytest.mark.xdist_group("world"))
