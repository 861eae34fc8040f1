"""Tests for lanplay.net.discovery. Every Zeroconf instance here is pinned to 127.0.0.1 (IPv4 only):
nothing may leave the machine."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import socket
import sys
from collections.abc import Callable
from typing import Any

import pytest
from zeroconf import IPVersion, ServiceInfo
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from lanplay.net import discovery
from lanplay.net.discovery import (
    ENV_INTERFACE,
    SERVICE_TYPE,
    TXT_KEYS,
    AdvertError,
    InterfaceError,
    TableAdvert,
    TableAdvertiser,
    TableBrowser,
    interface_from_env,
)

LOOPBACK = "127.0.0.1"
WAIT = 5.0  # generous per-step timeout; steps normally take well under 2 s


def make_advert(**changes: Any) -> TableAdvert:
    fields: dict[str, Any] = {
        "table_id": secrets.token_hex(8),
        "game": "sixth_sense",
        "options": {"rounds": 3, "variant": "classic"},
        "seats_taken": 1,
        "seats_total": 4,
        "host_name": "Ana's laptop",
        "host_fingerprint": "9f86-d081-884c-7d65",  # protocol.identity.fingerprint_of form
        "protocol_version": 1,
        "address": LOOPBACK,
        "port": 45123,
    }
    fields.update(changes)
    return TableAdvert(**fields)


def good_txt() -> dict[str, str | None]:
    return dict(make_advert(table_id="00112233aabbccdd").to_txt())


# --- TXT encoding and parsing (no network) -------------------------------------------------


def test_txt_round_trip() -> None:
    advert = make_advert()
    txt = advert.to_txt()
    assert set(txt) == {*TXT_KEYS, "bots"}  # "again" only for a play-again table
    assert txt["opts"] == '{"rounds":3,"variant":"classic"}'  # compact, sorted keys
    assert txt["table"] == advert.table_id
    assert (txt["v"], txt["taken"], txt["seats"]) == ("1", "1", "4")
    assert TableAdvert.from_txt(txt, address=LOOPBACK, port=45123) == advert


def test_a_play_again_advert_names_the_finished_table_and_round_trips() -> None:
    advert = dataclasses.replace(make_advert(), again_of="ab" * 16)
    txt = advert.to_txt()
    assert set(txt) == {*TXT_KEYS, "bots", "again"} and txt["again"] == "ab" * 16
    assert TableAdvert.from_txt(txt, address=LOOPBACK, port=45123) == advert


def test_a_take_back_desk_names_the_keys_that_may_come_back_and_round_trips() -> None:
    advert = dataclasses.replace(make_advert(), back=("aaaa-bbbb-cccc-dddd", "eeee-ffff-0000-1111"))
    txt = advert.to_txt()
    assert txt["back"] == "aaaa-bbbb-cccc-dddd,eeee-ffff-0000-1111"
    assert TableAdvert.from_txt(txt, address=LOOPBACK, port=45123) == advert
    with pytest.raises(AdvertError, match="back must be fingerprints"):
        TableAdvert.from_txt({**good_txt(), "back": "aaaa-bbbb,not a key!"}, address=LOOPBACK, port=1)


def test_a_play_again_advert_naming_no_table_id_is_refused() -> None:
    with pytest.raises(AdvertError, match="again_of must be a table id"):
        TableAdvert.from_txt({**good_txt(), "again": "not-a-table"}, address=LOOPBACK, port=1)


def test_txt_keys_are_case_insensitive_and_unknown_keys_ignored() -> None:
    txt = {key.upper(): value for key, value in good_txt().items()}
    txt["future-field"] = "whatever"
    advert = TableAdvert.from_txt(txt, address=LOOPBACK, port=1)
    assert advert.table_id == "00112233aabbccdd"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"table": None}, "lacks key"),
        ({"v": None, "fp": None}, r"lacks key\(s\) v, fp"),
        ({"opts": "{not json"}, "not valid JSON"),
        ({"opts": "[1, 2]"}, "must be a JSON object"),
        ({"opts": '{"a": NaN}'}, "NaN"),
        ({"opts": '{"a": 1, "a": 2}'}, "repeats key"),
        ({"opts": json.dumps({"k": "x" * 300})}, "longer than"),
        ({"taken": "two"}, "decimal integer"),
        ({"taken": "-1"}, "decimal integer"),
        ({"seats": "١٢"}, "decimal integer"),  # int() would accept Arabic-Indic digits
        ({"v": "9" * 20}, "decimal integer"),
        ({"taken": "5", "seats": "4"}, "seats_taken must be in 0..4"),
        ({"seats": "0"}, "seats_total must be in"),
        ({"table": "XYZ"}, "table_id must be"),
        ({"table": "ab"}, "table_id must be"),
        ({"table": "ab" * 33}, "table_id must be"),
        ({"game": "Sixth Sense"}, "game must be"),
        ({"host": ""}, "blank"),
        ({"host": "h" * 65}, "longer than"),
        ({"host": "evil\x1b[2J"}, "control"),
        ({"host": "abc\u202eexe"}, "control"),  # bidi override
        ({"fp": "not a fingerprint!"}, "host_fingerprint"),
    ],
)
def test_malformed_txt_is_rejected_with_reason(changes: dict[str, str | None], reason: str) -> None:
    txt = good_txt()
    for key, value in changes.items():
        if value is None:
            del txt[key]
        else:
            txt[key] = value
    with pytest.raises(AdvertError, match=reason):
        TableAdvert.from_txt(txt, address=LOOPBACK, port=1)


def test_key_without_value_and_duplicate_keys_are_rejected() -> None:
    txt = good_txt()
    txt["host"] = None
    with pytest.raises(AdvertError, match="'host' has no value"):
        TableAdvert.from_txt(txt, address=LOOPBACK, port=1)
    txt = good_txt()
    txt["GAME"] = "sixes"
    with pytest.raises(AdvertError, match="appears twice"):
        TableAdvert.from_txt(txt, address=LOOPBACK, port=1)


@pytest.mark.parametrize(
    ("address", "port", "reason"),
    [("0.0.0.0", 1, "unicast"), ("224.0.0.251", 1, "unicast"), ("::1", 1, "IPv4"), (LOOPBACK, 0, "port")],
)
def test_bad_address_or_port_is_rejected(address: str, port: int, reason: str) -> None:
    with pytest.raises(AdvertError, match=reason):
        TableAdvert.from_txt(good_txt(), address=address, port=port)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"seats_total": True}, "must be an int"),
        ({"options": {"order": (1, 2)}}, "round trip"),
        ({"options": {"f": float("nan")}}, "plain JSON"),
        ({"options": {"f": object()}}, "plain JSON"),
        ({"options": {1: "x"}}, "str keys"),
        ({"host_name": 42}, "must be a str"),
    ],
)
def test_local_construction_is_validated_too(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(AdvertError, match=reason):
        make_advert(**changes)


def test_advert_copies_options() -> None:
    options: dict[str, object] = {"rounds": 3}
    advert = make_advert(options=options)
    options["rounds"] = 99
    assert advert.options == {"rounds": 3}


def test_longest_table_id_still_fits_a_dns_label() -> None:
    advert = make_advert(table_id="ab" * 32)
    info = advert.service_info()
    assert len(info.get_name().encode()) == 63
    assert TableAdvert.from_service_info(info) == advert


def _service_info(instance: str, properties: dict[bytes, bytes | None]) -> ServiceInfo:
    return ServiceInfo(
        SERVICE_TYPE,
        f"{instance}.{SERVICE_TYPE}",
        port=4000,
        properties=properties,
        server="x.local.",
        parsed_addresses=[LOOPBACK],
    )


def test_from_service_info() -> None:
    advert = make_advert()
    info = advert.service_info()
    assert info.get_name() == f"lanplay-{advert.table_id}"
    assert TableAdvert.from_service_info(info) == advert

    properties: dict[bytes, bytes | None] = {k.encode(): v.encode() for k, v in advert.to_txt().items()}
    with pytest.raises(AdvertError, match="does not match table id"):
        TableAdvert.from_service_info(_service_info("lanplay-0000000000000000", properties))

    properties[b"host"] = b"\xff\xfe"
    with pytest.raises(AdvertError, match="not valid text"):
        TableAdvert.from_service_info(_service_info(f"lanplay-{advert.table_id}", properties))


# --- interface selection (no network) --------------------------------------------------------


def test_interface_from_env_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_INTERFACE, raising=False)
    assert interface_from_env(None) == "127.0.0.1"
    monkeypatch.setenv(ENV_INTERFACE, "  ")
    assert interface_from_env(None) == "127.0.0.1"
    monkeypatch.setenv(ENV_INTERFACE, "10.1.2.3")
    assert interface_from_env(None) == "10.1.2.3"
    assert interface_from_env("192.168.1.20") == "192.168.1.20"


@pytest.mark.parametrize("value", ["", "localhost", "::1", "0.0.0.0", "224.0.0.251", "10.0.0.300"])
def test_interface_must_be_one_ipv4_address(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.delenv(ENV_INTERFACE, raising=False)
    with pytest.raises(InterfaceError, match="--interface"):
        interface_from_env(value)
    monkeypatch.setenv(ENV_INTERFACE, value or "nonsense")
    with pytest.raises(InterfaceError, match=ENV_INTERFACE):
        interface_from_env(None)


def test_classes_require_an_explicit_interface() -> None:
    with pytest.raises(TypeError):
        TableAdvertiser(make_advert())  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        TableBrowser()  # type: ignore[call-arg]
    with pytest.raises(InterfaceError):
        TableAdvertiser(make_advert(), interface="0.0.0.0")
    with pytest.raises(InterfaceError):
        TableBrowser(interface="0.0.0.0")


def test_address_not_on_this_machine_is_refused_before_any_socket_opens() -> None:
    # 198.51.100.0/24 is TEST-NET-2: never assigned, so the bind probe fails and
    # zeroconf is never started.
    async def scenario() -> None:
        with pytest.raises(InterfaceError, match="not an address of this machine"):
            await TableBrowser(interface="198.51.100.7").start()

    asyncio.run(scenario())


# --- on the wire, loopback only ------------------------------------------------------------------


def test_zeroconf_sockets_are_pinned_to_the_interface() -> None:
    async def scenario() -> None:
        aiozc = await discovery._open_zeroconf(LOOPBACK)
        try:
            engine = aiozc.zeroconf.engine
            assert [s.sock_name for s in engine.senders] == [(LOOPBACK, 5353)]
            for reader in engine.readers:
                assert reader.sock_name[0] in (LOOPBACK, "0.0.0.0")
            sender = engine.senders[0].transport.get_extra_info("socket")
            multicast_if = sender.getsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, 4)
            assert socket.inet_ntoa(multicast_if) == LOOPBACK
            if sys.platform.startswith("linux"):
                for reader in engine.readers:
                    sock = reader.transport.get_extra_info("socket")
                    if sock.getsockname()[0] == "0.0.0.0":
                        assert sock.getsockopt(socket.IPPROTO_IP, discovery._IP_MULTICAST_ALL) == 0
        finally:
            await aiozc.async_close()

    asyncio.run(scenario())


async def _eventually(condition: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def test_advertise_update_and_withdraw_on_loopback() -> None:
    async def scenario() -> None:
        advert = make_advert()
        mine = advert.table_id
        seen: list[dict[str, TableAdvert]] = []
        # Other processes on this machine may be advertising tables on loopback too, so
        # everything below looks only at this test's own random table ids.
        bad_name = f"lanplay-{secrets.token_hex(8)}.{SERVICE_TYPE}"
        bad_txt = {k: v for k, v in advert.to_txt().items() if k != "fp"}
        bad_info = AsyncServiceInfo(
            SERVICE_TYPE,
            bad_name,
            port=4000,
            properties=bad_txt,
            server="lanplay-bad.local.",
            parsed_addresses=[LOOPBACK],
        )

        async with TableBrowser(interface=LOOPBACK, on_change=seen.append) as browser:
            with pytest.raises(TimeoutError):
                await browser.wait_for(lambda t: t.table_id == mine, timeout=0.1)

            raw = AsyncZeroconf(interfaces=[LOOPBACK], ip_version=IPVersion.V4Only)
            advertiser = TableAdvertiser(advert, interface=LOOPBACK)
            try:
                # Both probe concurrently (~1.5 s) to keep the test short.
                await asyncio.gather(advertiser.start(), raw.async_register_service(bad_info))

                found = await browser.wait_for(lambda t: t.table_id == mine, timeout=WAIT)
                assert found == advert
                assert any(mine in tables for tables in seen)

                # A malformed advert is reported, never listed, and does not stop the browser.
                await _eventually(lambda: bad_name.lower() in browser.rejected, WAIT)
                assert "lacks key(s) fp" in browser.rejected[bad_name.lower()]
                assert all(t.host_fingerprint for t in browser.tables.values())

                updated = make_advert(table_id=mine, seats_taken=3, options={"rounds": 5})
                await advertiser.update(updated)
                found = await browser.wait_for(lambda t: t.table_id == mine and t.seats_taken == 3, WAIT)
                assert found == updated
                assert found.options == {"rounds": 5}

                await advertiser.stop()  # goodbye packets
                await browser.wait_gone(mine, timeout=WAIT)
                assert mine not in browser.tables
                assert mine not in seen[-1]
            finally:
                await advertiser.stop()
                await raw.async_close()

    asyncio.run(scenario())


def test_a_table_of_another_protocol_version_is_skipped_or_refused_by_id(tmp_path: Any) -> None:
    """A table advertised with another table protocol version is never picked for a game search, and
    `lanplay join TABLE_ID` for it stops before the lobby, naming both versions (a table's seats of
    different versions would read each other's honest passes as faults)."""
    from lanplay.net.lobby import LobbyError
    from lanplay.table.runner import BotPlayer
    from lanplay.table.tables import find_table, join_table
    from protocol.identity import Identity
    from protocol.table import PROTOCOL_VERSION

    old = make_advert(game="take6", options={}, protocol_version=PROTOCOL_VERSION + 1)

    async def scenario() -> tuple[str, str]:
        advertiser = TableAdvertiser(old, interface=LOOPBACK)
        await advertiser.start()
        try:
            with pytest.raises(TimeoutError):
                await find_table(LOOPBACK, "take6", None, 1.5, frozenset())
            with pytest.raises(LobbyError) as refused:
                await join_table(
                    identity=Identity.generate(), data_dir=tmp_path, name="Ann", interface=LOOPBACK,
                    player=BotPlayer("take6", "random"), table_id=old.table_id,
                )  # fmt: skip
            found = await find_table(LOOPBACK, None, old.table_id, WAIT)
            return str(refused.value), found.table_id
        finally:
            await advertiser.stop()

    why, found_id = asyncio.run(scenario())
    assert found_id == old.table_id
    assert f"speaks table protocol version {PROTOCOL_VERSION + 1}, this lanplay speaks {PROTOCOL_VERSION}" in why, why
