"""Which network lanplay plays on, and bad input on the command line: one clear line, exit 2.

No test here sends a packet: addresses are only checked against this laptop's interfaces (ifaddr) and,
where a command runs, it stops at the check (or stays on 127.0.0.1).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lanplay.base.store import SavedNetwork, StoreError, data_dir, load_network, save_record
from lanplay.cli.commands import main
from lanplay.net.address import AddressError, parse_address
from lanplay.net.discovery import InterfaceError
from lanplay.net.network import (
    LOOPBACK_LABEL,
    Network,
    check_on_this_laptop,
    find_saved,
    local_networks,
    network_in_use,
    networks_text,
    remember,
)

LANPLAY = Path(sys.executable).parent / "lanplay"
# TEST-NET-1 (RFC 5737): documentation only, on no laptop's interface.
NOT_HERE = "192.0.2.254"
WIFI = Network("wlan0", "192.168.1.23")


def lanplay(*args: str, home: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANPLAY_")}
    env.update({"LANPLAY_HOME": str(home), "LANPLAY_INTERFACE": "127.0.0.1", **(env_extra or {})})
    env = {k: v for k, v in env.items() if v != ""}
    return subprocess.run(
        [str(LANPLAY), *args], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


def one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


# --- the listing ------------------------------------------------------------------------------------


def test_local_networks_end_with_this_laptop_only() -> None:
    networks = local_networks()
    assert networks[-1] == Network("lo", "127.0.0.1")
    assert networks[-1].label == LOOPBACK_LABEL
    assert all(not n.loopback for n in networks[:-1])
    assert WIFI.label == "wlan0 192.168.1.23"


def test_an_address_not_on_this_laptop_is_refused_with_the_list() -> None:
    with pytest.raises(InterfaceError) as caught:
        check_on_this_laptop(NOT_HERE, "--interface")
    text = str(caught.value)
    assert NOT_HERE in text and "not an address of this laptop" in text
    assert "this laptop only 127.0.0.1" in text
    assert check_on_this_laptop("127.0.0.1", "--interface").loopback
    assert check_on_this_laptop("192.168.1.23", "x", [WIFI, Network("lo", "127.0.0.1")]) == WIFI


def test_saved_choice_follows_the_interface_when_its_address_changes() -> None:
    here = [Network("wlan0", "192.168.1.40"), Network("lo", "127.0.0.1")]
    assert find_saved(SavedNetwork("wlan0", "192.168.1.23"), here) == here[0]
    assert find_saved(SavedNetwork("eth9", "192.168.1.40"), here) == here[0]
    assert find_saved(SavedNetwork("eth9", "10.0.0.9"), here) is None
    assert networks_text(here) == "wlan0 192.168.1.40, this laptop only 127.0.0.1"


def test_precedence_flag_env_saved_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANPLAY_INTERFACE", raising=False)
    assert network_in_use(None, tmp_path, ask=True) is None  # first start: the lobby asks
    chosen = network_in_use(None, tmp_path)
    assert chosen is not None and (chosen.address, chosen.source) == ("127.0.0.1", "default")
    remember(tmp_path, Network("lo", "127.0.0.1"))
    saved = network_in_use(None, tmp_path, ask=True)
    assert saved is not None and saved.source == "saved"
    monkeypatch.setenv("LANPLAY_INTERFACE", "127.0.0.1")
    env = network_in_use(None, tmp_path)
    assert env is not None and env.source == "LANPLAY_INTERFACE"
    flag = network_in_use("127.0.0.1", tmp_path)
    assert flag is not None and flag.source == "--interface"
    with pytest.raises(InterfaceError):
        network_in_use(NOT_HERE, tmp_path)


def test_a_saved_network_that_is_gone_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANPLAY_INTERFACE", raising=False)
    remember(tmp_path, Network("wlan-gone", NOT_HERE))
    assert network_in_use(None, tmp_path, ask=True) is None
    with pytest.raises(InterfaceError, match="not on this laptop now"):
        network_in_use(None, tmp_path)


def test_unreadable_saved_choice(tmp_path: Path) -> None:
    (tmp_path / "network.json").write_text("{not json")
    with pytest.raises(StoreError, match=r"network\.json is damaged.*--interface"):
        load_network(tmp_path)
    (tmp_path / "network.json").write_text(json.dumps({"interface": "wlan0"}))
    with pytest.raises(StoreError, match="address"):
        load_network(tmp_path)


def test_choice_file_is_owner_only(tmp_path: Path) -> None:
    path = remember(tmp_path, WIFI)
    assert load_network(tmp_path) == SavedNetwork("wlan0", "192.168.1.23")
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- HOST:PORT ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("127.0.0.1:99999", "bad port"),
        ("127.0.0.1:0", "bad port"),
        ("127.0.0.1:http", "bad port"),
        ("127.0.0.1", "no port"),
        (":4000", "bad host"),
        ("bad host!:4000", "bad host"),
        ("999.1.1.1:4000", "bad host"),
    ],
)
def test_bad_addresses(text: str, why: str) -> None:
    with pytest.raises(AddressError, match=why):
        parse_address(text)


def test_good_addresses() -> None:
    assert parse_address("192.168.1.23:40123") == ("192.168.1.23", 40123)
    assert parse_address(" anns-laptop.local:80 ") == ("anns-laptop.local", 80)


# --- the data directory -------------------------------------------------------------------------------


def test_data_dir_is_the_platform_convention(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANPLAY_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = data_dir()
    if sys.platform.startswith("linux"):
        assert path == tmp_path / ".local" / "share" / "lanplay"
    assert path.is_dir() and (os.name != "posix" or stat.S_IMODE(path.stat().st_mode) == 0o700)
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "mine"))
    assert data_dir() == tmp_path / "mine"


def test_records_are_owner_only(tmp_path: Path) -> None:
    path = save_record(tmp_path, "ab" * 16, "{}")
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# --- the command line: one line, exit 2 ------------------------------------------------------------------

needs_command = pytest.mark.skipif(not LANPLAY.exists(), reason=f"no lanplay command beside {sys.executable}")


@needs_command
def test_join_with_a_bad_port_is_one_line(tmp_path: Path) -> None:
    line = one_line_exit_2(lanplay("join", "127.0.0.1:99999", home=tmp_path))
    assert "bad port '99999'" in line and "1 to 65535" in line


@needs_command
def test_an_address_not_on_this_laptop_is_one_line(tmp_path: Path) -> None:
    line = one_line_exit_2(lanplay("host", "--game", "sixes", "--interface", NOT_HERE, home=tmp_path))
    assert NOT_HERE in line and "not an address of this laptop" in line and "127.0.0.1" in line
    line = one_line_exit_2(lanplay("bot", "--game", "sixes", home=tmp_path, env_extra={"LANPLAY_INTERFACE": NOT_HERE}))
    assert "LANPLAY_INTERFACE" in line and NOT_HERE in line


@needs_command
def test_an_unreadable_saved_choice_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "network.json").write_bytes(b"\xff\xfe garbage")
    # No LANPLAY_INTERFACE: the saved choice is read (and refused) before anything touches a network.
    line = one_line_exit_2(lanplay("host", "--game", "sixes", home=tmp_path, env_extra={"LANPLAY_INTERFACE": ""}))
    assert "network.json" in line and "damaged" in line and "--interface" in line


def test_version_and_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("lanplay ")
    assert main(["where"]) == 0
    out = capsys.readouterr().out
    assert f"data directory: {tmp_path}" in out
    assert "identity: " in out and "network: this laptop only (127.0.0.1, from LANPLAY_INTERFACE)" in out
    assert "unfinished games: none" in out
