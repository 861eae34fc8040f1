"""Finding tables on the LAN with mDNS / DNS-SD (service type ``_lanplay._tcp.local.``).

A host advertises each open table with a :class:`TableAdvertiser`; every peer runs a
:class:`TableBrowser` that keeps a live ``table_id -> TableAdvert`` view of what mDNS
currently says.

What mDNS says is *not* liveness. A peer that crashes (or loses Wi-Fi) sends no goodbye
packet, so its records linger in every cache until their TTL runs out. Whether a host is
really there is decided by the links (WebSocket heartbeats), never by this module; the
browser only reports announcements, updates and goodbyes.

Every Zeroconf instance here is pinned to exactly one IPv4 interface address, which the
caller must pass explicitly; there is deliberately no "all interfaces" default.
``interface_from_env`` defaults to loopback (127.0.0.1), which is safe offline and lets
several processes on one machine find each other; to play across laptops on a real LAN,
run with ``--interface <your LAN address>`` (or set ``LANPLAY_INTERFACE``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import socket
import sys
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from zeroconf import IPVersion, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from lanplay.base.aio import cancel_and_wait
from protocol.encoding import TABLE_ID_MAX_BYTES, TABLE_ID_MIN_BYTES

log = logging.getLogger(__name__)

SERVICE_TYPE = "_lanplay._tcp.local."
INSTANCE_PREFIX = "lanplay-"
DEFAULT_INTERFACE = "127.0.0.1"
ENV_INTERFACE = "LANPLAY_INTERFACE"

# RFC 6762 recommends 75 minutes for PTR/TXT records, which would keep a crashed host's
# table in everybody's list for over an hour. Two minutes bounds that staleness; the
# extra refresh queries are negligible for a handful of tables on one LAN.
ADVERT_TTL = 120

# Bounds for values read from the network. The TXT wire format caps one "key=value"
# string at 255 bytes; the tighter field limits keep a hostile advert from bloating
# the UI or the logs.
# Same table ids the protocol accepts (imported, so the two cannot drift apart).
MIN_TABLE_ID_LEN = 2 * TABLE_ID_MIN_BYTES
MAX_TABLE_ID_LEN = 2 * TABLE_ID_MAX_BYTES
MAX_LABEL_BYTES = 63  # DNS limit for one label, here the service instance name
MAX_GAME_LEN = 32
MAX_OPTIONS_BYTES = 255 - len("opts=")
MAX_HOST_NAME_CHARS = 64
MAX_HOST_NAME_BYTES = 200
MAX_FINGERPRINT_LEN = 128
MAX_SEATS = 64
MAX_BACK = 12  # fingerprints in one "back" TXT value (each at most 255 bytes)
MAX_PROTOCOL_VERSION = 65535
MAX_INT_DIGITS = 6

TXT_KEYS = ("v", "game", "opts", "table", "taken", "seats", "host", "fp")
# Keys an older host does not send: a missing one takes its default.
OPTIONAL_TXT_KEYS = ("bots", "again", "back")

_TABLE_ID_RE = re.compile(rf"[0-9a-f]{{{MIN_TABLE_ID_LEN},{MAX_TABLE_ID_LEN}}}")
_GAME_RE = re.compile(rf"[a-z0-9][a-z0-9_-]{{0,{MAX_GAME_LEN - 1}}}")
_FINGERPRINT_RE = re.compile(rf"[A-Za-z0-9+/=:_-]{{8,{MAX_FINGERPRINT_LEN}}}")
_UINT_RE = re.compile(rf"[0-9]{{1,{MAX_INT_DIGITS}}}")
# Control, format (bidi overrides, zero-width), surrogate and line/paragraph separators:
# a host name is shown verbatim in a terminal UI, so these could spoof or corrupt it.
_FORBIDDEN_NAME_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# Linux delivers multicast for *any* group joined on *any* interface to every socket
# bound to the port unless IP_MULTICAST_ALL is cleared. Python 3.11's socket module
# lacks the constant; the value is fixed in <linux/in.h>.
_IP_MULTICAST_ALL = 49


class DiscoveryError(Exception):
    """Base class for errors raised by this module."""


class AdvertError(DiscoveryError, ValueError):
    """A table advert is malformed; the message says which field and why."""


class InterfaceError(DiscoveryError, ValueError):
    """The interface address is unusable for mDNS."""


def _show(value: object, limit: int = 40) -> str:
    """Quote a possibly hostile value for an error message: escaped and truncated."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _instance_label(table_id: str) -> str:
    # The longest table ids (64 hex digits) do not fit in a DNS label; the first 55 digits
    # (220 bits) are still unique for any table not deliberately forged, and a forger
    # could spoof mDNS anyway.
    return INSTANCE_PREFIX + table_id[: MAX_LABEL_BYTES - len(INSTANCE_PREFIX)]


def _service_name(table_id: str) -> str:
    return f"{_instance_label(table_id)}.{SERVICE_TYPE}"


def _encode_options(options: Mapping[str, object]) -> str:
    return json.dumps(options, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _check_int(name: str, value: object, low: int, high: int) -> int:
    # bool is an int subclass; True seats is a bug, not a number.
    if not isinstance(value, int) or isinstance(value, bool):
        raise AdvertError(f"{name} must be an int, got {_show(value)}")
    if not low <= value <= high:
        raise AdvertError(f"{name} must be in {low}..{high}, got {value}")
    return value


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise AdvertError(f"{name} must be a str, got {_show(value)}")
    return value


def _check_ipv4(name: str, value: object) -> str:
    text = _check_str(name, value)
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        raise AdvertError(f"{name} must be an IPv4 address, got {_show(value)}") from None
    if address.is_unspecified or address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255"):
        raise AdvertError(f"{name} must be a unicast address, got {text}")
    return str(address)


@dataclass(frozen=True)
class TableAdvert:
    """One table as announced over mDNS. Construction validates every field.

    ``address``/``port`` come from the SRV and A records, the rest from TXT. ``options``
    is stored as its JSON round trip so an advert compares equal to its parsed form.
    """

    table_id: str
    game: str
    options: dict[str, object]
    seats_taken: int
    seats_total: int
    host_name: str
    host_fingerprint: str
    protocol_version: int
    address: str
    port: int
    host_bots: int = 0  # bot seats the host's laptop runs (and so can see the cards of)
    # A "play again" table: the id of the finished table whose players it is for (only they may sit).
    again_of: str | None = None
    # A table playing now where seats a bot holds may be taken back (P-5.7): the fingerprints of the keys that
    # may come back; the advert's address is the take-back desk of the laptop running those bots.
    back: tuple[str, ...] = ()
    _options_json: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        table_id = _check_str("table_id", self.table_id)
        if not _TABLE_ID_RE.fullmatch(table_id):
            raise AdvertError(
                f"table_id must be {MIN_TABLE_ID_LEN}..{MAX_TABLE_ID_LEN} lowercase hex digits, got {_show(table_id)}"
            )
        if not _GAME_RE.fullmatch(_check_str("game", self.game)):
            raise AdvertError(
                f"game must be a lowercase id ([a-z0-9_-], at most {MAX_GAME_LEN}), got {_show(self.game)}"
            )
        self._check_options()
        total = _check_int("seats_total", self.seats_total, 1, MAX_SEATS)
        _check_int("seats_taken", self.seats_taken, 0, total)
        self._check_host_name()
        if not _FINGERPRINT_RE.fullmatch(_check_str("host_fingerprint", self.host_fingerprint)):
            raise AdvertError(
                f"host_fingerprint must be 8..{MAX_FINGERPRINT_LEN} of [A-Za-z0-9+/=:_-],"
                f" got {_show(self.host_fingerprint)}"
            )
        _check_int("protocol_version", self.protocol_version, 0, MAX_PROTOCOL_VERSION)
        # Canonical form, so "127.0.0.1" and an equivalent spelling compare equal.
        object.__setattr__(self, "address", _check_ipv4("address", self.address))
        _check_int("port", self.port, 1, 65535)
        _check_int("host_bots", self.host_bots, 0, total)
        if not isinstance(self.back, tuple) or len(self.back) > MAX_BACK or not all(
            isinstance(fp, str) and _FINGERPRINT_RE.fullmatch(fp) for fp in self.back
        ):
            raise AdvertError(f"back must be fingerprints of keys, got {_show(self.back)}")
        if self.again_of is not None and not _TABLE_ID_RE.fullmatch(_check_str("again_of", self.again_of)):
            raise AdvertError(f"again_of must be a table id of lowercase hex digits, got {_show(self.again_of)}")

    def _check_options(self) -> None:
        if not isinstance(self.options, dict) or not all(isinstance(k, str) for k in self.options):
            raise AdvertError(f"options must be a dict with str keys, got {_show(self.options)}")
        try:
            encoded = _encode_options(self.options)
        except (TypeError, ValueError) as exc:
            raise AdvertError(f"options must be plain JSON values: {exc}") from None
        decoded = json.loads(encoded)
        # Tuples, non-str nested keys etc. would silently change on the wire; refuse them
        # here so what is advertised is exactly what the caller asked for.
        if decoded != self.options:
            raise AdvertError(f"options do not survive a JSON round trip: {_show(self.options)}")
        if len(encoded.encode()) > MAX_OPTIONS_BYTES:
            raise AdvertError(f"options are {len(encoded.encode())} bytes as JSON, limit {MAX_OPTIONS_BYTES}")
        # A private copy: the dataclass is frozen but a shared dict would not be.
        object.__setattr__(self, "options", decoded)
        object.__setattr__(self, "_options_json", encoded)

    def _check_host_name(self) -> None:
        name = _check_str("host_name", self.host_name)
        if not name.strip():
            raise AdvertError("host_name must not be blank")
        if len(name) > MAX_HOST_NAME_CHARS or len(name.encode(errors="surrogatepass")) > MAX_HOST_NAME_BYTES:
            raise AdvertError(f"host_name is longer than {MAX_HOST_NAME_CHARS} characters: {_show(name)}")
        bad = [c for c in name if unicodedata.category(c) in _FORBIDDEN_NAME_CATEGORIES]
        if bad:
            raise AdvertError(f"host_name contains control/format characters: {_show(name)}")

    @property
    def seats_free(self) -> int:
        return self.seats_total - self.seats_taken

    def to_txt(self) -> dict[str, str]:
        return {
            "v": str(self.protocol_version),
            "game": self.game,
            "opts": self._options_json,
            "table": self.table_id,
            "taken": str(self.seats_taken),
            "seats": str(self.seats_total),
            "host": self.host_name,
            "fp": self.host_fingerprint,
            "bots": str(self.host_bots),
            **({"again": self.again_of} if self.again_of is not None else {}),
            **({"back": ",".join(self.back)} if self.back else {}),
        }

    @classmethod
    def from_txt(cls, txt: Mapping[str, str | None], *, address: str, port: int) -> TableAdvert:
        """Parse TXT values received from the network. Raises AdvertError with the reason.

        Keys are matched case-insensitively (RFC 6763); unknown keys are ignored so a newer
        peer can add fields without older peers dropping its tables.
        """
        values: dict[str, str] = {}
        for raw_key, value in txt.items():
            key = raw_key.lower()
            if key not in TXT_KEYS and key not in OPTIONAL_TXT_KEYS:
                continue
            if key in values:
                raise AdvertError(f"TXT key {key!r} appears twice")
            if value is None:
                raise AdvertError(f"TXT key {key!r} has no value")
            values[key] = value
        missing = [k for k in TXT_KEYS if k not in values]
        if missing:
            raise AdvertError(f"TXT record lacks key(s) {', '.join(missing)}")

        def uint(key: str) -> int:
            if not _UINT_RE.fullmatch(values[key]):
                raise AdvertError(f"TXT {key!r} must be a decimal integer, got {_show(values[key])}")
            return int(values[key])

        return cls(
            table_id=values["table"],
            game=values["game"],
            options=_decode_options(values["opts"]),
            seats_taken=uint("taken"),
            seats_total=uint("seats"),
            host_name=values["host"],
            host_fingerprint=values["fp"],
            protocol_version=uint("v"),
            address=address,
            port=port,
            host_bots=uint("bots") if "bots" in values else 0,
            again_of=values.get("again"),
            back=tuple(values["back"].split(",")) if values.get("back") else (),
        )

    @classmethod
    def from_service_info(cls, info: ServiceInfo) -> TableAdvert:
        """Parse a resolved mDNS service. Raises AdvertError with the reason."""
        txt: dict[str, str | None] = {}
        for raw_key, raw_value in info.properties.items():
            try:
                key = raw_key.decode("ascii")
                value = None if raw_value is None else raw_value.decode("utf-8")
            except UnicodeDecodeError:
                raise AdvertError(f"TXT entry {_show(raw_key)} is not valid text") from None
            txt[key] = value
        addresses = info.parsed_addresses(IPVersion.V4Only)
        if not addresses:
            raise AdvertError("service has no IPv4 address record")
        if info.port is None:
            raise AdvertError("service has no port (SRV record)")
        advert = cls.from_txt(txt, address=addresses[0], port=info.port)
        # One service name per table id keeps the browser's table_id -> advert map
        # unambiguous: a second name claiming someone else's table id is refused.
        instance = info.get_name()
        if instance.lower() != _instance_label(advert.table_id):
            raise AdvertError(f"instance name {_show(instance)} does not match table id {advert.table_id}")
        return advert

    def service_info(self) -> AsyncServiceInfo:
        return AsyncServiceInfo(
            SERVICE_TYPE,
            _service_name(self.table_id),
            port=self.port,
            properties=self.to_txt(),
            # A host name per table: several tables (separate Zeroconf instances) on one
            # machine then never contend for the same A record.
            server=f"{_instance_label(self.table_id)}.local.",
            host_ttl=ADVERT_TTL,
            other_ttl=ADVERT_TTL,
            parsed_addresses=[self.address],
        )


def _reject_constant(name: str) -> object:
    raise AdvertError(f"TXT 'opts' contains {name}, which is not JSON")


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise AdvertError(f"TXT 'opts' repeats key {_show(key)}")
        result[key] = value
    return result


def _decode_options(raw: str) -> dict[str, object]:
    if len(raw.encode(errors="surrogatepass")) > MAX_OPTIONS_BYTES:
        raise AdvertError(f"TXT 'opts' is longer than {MAX_OPTIONS_BYTES} bytes")
    try:
        value = json.loads(raw, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicate_keys)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise AdvertError(f"TXT 'opts' is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AdvertError(f"TXT 'opts' must be a JSON object, got {_show(raw)}")
    return value


# --- interfaces ---------------------------------------------------------------------------


def check_interface(address: str, source: str = "interface") -> str:
    try:
        parsed = ipaddress.IPv4Address(address.strip())
    except ValueError:
        raise InterfaceError(f"{source} must be an IPv4 address, got {_show(address)}") from None
    # 0.0.0.0 would let the kernel pick the default route's interface: exactly the
    # "whole network" behaviour the pinning exists to avoid.
    if parsed.is_unspecified or parsed.is_multicast or parsed == ipaddress.IPv4Address("255.255.255.255"):
        raise InterfaceError(f"{source} must be the address of one local interface, got {parsed}")
    return str(parsed)


def interface_from_env(cli_value: str | None) -> str:
    """The interface address to use: ``--interface``, else $LANPLAY_INTERFACE, else 127.0.0.1.

    The loopback default only finds tables on this machine; a real LAN needs
    ``--interface <your LAN address>``. Raises InterfaceError if the value is not an IPv4
    address of a single interface.
    """
    if cli_value is not None:
        return check_interface(cli_value, "--interface")
    env_value = os.environ.get(ENV_INTERFACE, "")
    if env_value.strip():
        return check_interface(env_value, ENV_INTERFACE)
    return DEFAULT_INTERFACE


async def _open_zeroconf(interface: str) -> AsyncZeroconf:
    """An AsyncZeroconf bound to one IPv4 interface, verified to have a working sender."""
    _check_local(interface)
    try:
        # interfaces must be a list (zeroconf type-checks it) of exactly this one address.
        aiozc = AsyncZeroconf(interfaces=[interface], ip_version=IPVersion.V4Only)
    except OSError as exc:
        raise InterfaceError(f"cannot open mDNS sockets on {interface}: {exc}") from exc
    try:
        await aiozc.zeroconf.async_wait_for_start()
        # Zeroconf only logs when it cannot bind or join the group on an address, then
        # silently sends nothing; a table nobody can see is worse than an error.
        if not aiozc.zeroconf.engine.senders:
            raise InterfaceError(
                f"cannot use {interface} for mDNS (not an address of this machine, or no multicast there)"
            )
        _restrict_to_joined_groups(aiozc.zeroconf)
    except BaseException:
        await aiozc.async_close()
        raise
    return aiozc


def _check_local(interface: str) -> None:
    """Fail early, with a clear message, if the address does not belong to this machine.

    Binding sends nothing, so this costs no traffic; zeroconf itself would only log and
    carry on without sockets.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((interface, 0))
        except OSError as exc:
            raise InterfaceError(f"{interface} is not an address of this machine ({exc.strerror})") from None


def _restrict_to_joined_groups(zc: Zeroconf) -> None:
    """Stop the wildcard listen socket hearing mDNS joined on *other* interfaces.

    Zeroconf's listen socket is bound to 0.0.0.0:5353. On Linux (IP_MULTICAST_ALL=1 by
    default) it would also receive mDNS from, say, the Wi-Fi interface whenever any other
    program there (avahi) joined 224.0.0.251 — a loopback-pinned browser would list LAN
    tables, and unicast replies to LAN queriers would leave through that socket.
    Best effort: it reaches into zeroconf's engine, so failure is only logged.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        for reader in zc.engine.readers:
            sock = reader.transport.get_extra_info("socket")
            if sock is None or sock.family != socket.AF_INET or sock.getsockname()[0] != "0.0.0.0":
                continue
            sock.setsockopt(socket.IPPROTO_IP, _IP_MULTICAST_ALL, 0)
    except (AttributeError, OSError) as exc:
        log.debug("could not clear IP_MULTICAST_ALL on the mDNS listen socket: %s", exc)


# --- advertising ---------------------------------------------------------------------------


class TableAdvertiser:
    """Advertises one table on one interface until stopped.

    Use ``async with TableAdvertiser(advert, interface=addr):`` or start()/stop().
    stop() sends goodbye packets so browsers drop the table at once; a crash cannot,
    which is why liveness is the links' business, not discovery's.
    """

    def __init__(self, advert: TableAdvert, *, interface: str) -> None:
        self._interface = check_interface(interface)
        self._advert = advert
        self._info: AsyncServiceInfo | None = None
        self._aiozc: AsyncZeroconf | None = None
        self._announcing: set[asyncio.Future[None]] = set()

    @property
    def advert(self) -> TableAdvert:
        return self._advert

    @property
    def interface(self) -> str:
        return self._interface

    async def start(self) -> None:
        """Probe for the name and register; returns once peers can start seeing it.

        The repeated announcements continue in the background.
        """
        if self._aiozc is not None:
            raise DiscoveryError("advertiser already started")
        aiozc = await _open_zeroconf(self._interface)
        info = self._advert.service_info()
        try:
            self._track(await aiozc.async_register_service(info))
        except BaseException:
            await aiozc.async_close()
            raise
        self._aiozc, self._info = aiozc, info

    async def update(self, advert: TableAdvert) -> None:
        """Re-announce the table with new contents (seats taken, options...)."""
        if advert.table_id != self._advert.table_id:
            raise DiscoveryError(f"update must keep table id {self._advert.table_id}, got {advert.table_id}")
        self._advert = advert
        if self._aiozc is None:
            return  # not advertising yet: start() will announce the new contents
        await self._cancel_announcements()  # an old, slower announcement must not land last
        self._info = advert.service_info()
        self._track(await self._aiozc.async_update_service(self._info))

    async def stop(self) -> None:
        """Send goodbyes and close the sockets. Safe to call more than once."""
        aiozc, info = self._aiozc, self._info
        self._aiozc = self._info = None
        if aiozc is None or info is None:
            return
        # A pending announcement sent after the goodbye would resurrect the table.
        await self._cancel_announcements()
        try:
            # Awaited so the goodbyes are on the wire before the sockets close.
            await (await aiozc.async_unregister_service(info))
        finally:
            await aiozc.async_close()

    def _track(self, announcing: Awaitable[None]) -> None:
        future = asyncio.ensure_future(announcing)
        self._announcing.add(future)
        future.add_done_callback(self._announcing.discard)

    async def _cancel_announcements(self) -> None:
        await cancel_and_wait(list(self._announcing))

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


# --- browsing ------------------------------------------------------------------------------

TablesCallback = Callable[[dict[str, TableAdvert]], None]


class TableBrowser:
    """Keeps ``tables`` (table_id -> TableAdvert) in step with mDNS on one interface.

    ``on_change(tables)`` is called (on the event loop, with a copy) whenever the set of
    tables or any advert changes, so a UI can redraw. Malformed or unresolvable adverts
    never reach ``tables``: they are logged once and listed in ``rejected`` (lower-cased
    service name -> reason) until they are fixed or withdrawn.
    A table staying here says only that mDNS still caches it, not that its host is alive.
    """

    def __init__(
        self,
        *,
        interface: str,
        on_change: TablesCallback | None = None,
        resolve_timeout: float = 3.0,
    ) -> None:
        self._interface = check_interface(interface)
        self._on_change = on_change
        self._resolve_timeout_ms = resolve_timeout * 1000
        self._tables: dict[str, TableAdvert] = {}
        self._table_by_name: dict[str, str] = {}
        self._rejected: dict[str, str] = {}
        self._resolving: dict[str, asyncio.Task[None]] = {}
        self._changed = asyncio.Event()
        self._aiozc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None

    @property
    def interface(self) -> str:
        return self._interface

    @property
    def tables(self) -> dict[str, TableAdvert]:
        return dict(self._tables)

    @property
    def rejected(self) -> dict[str, str]:
        return dict(self._rejected)

    async def start(self) -> None:
        if self._aiozc is not None:
            raise DiscoveryError("browser already started")
        aiozc = await _open_zeroconf(self._interface)
        self._aiozc = aiozc
        self._browser = AsyncServiceBrowser(aiozc.zeroconf, SERVICE_TYPE, handlers=[self._on_service_event])

    async def stop(self) -> None:
        """Stop browsing and close the sockets. ``tables`` keeps its last contents."""
        aiozc, browser = self._aiozc, self._browser
        self._aiozc = self._browser = None
        # The browser first: an event arriving while the resolvers are cancelled would start a new one
        # on a Zeroconf that is closing (NotRunningException in a task nobody awaits).
        if browser is not None:
            await browser.async_cancel()
        tasks = list(self._resolving.values())
        self._resolving.clear()
        await cancel_and_wait(tasks)
        if aiozc is not None:
            await aiozc.async_close()

    async def wait_for(self, predicate: Callable[[TableAdvert], bool], timeout: float) -> TableAdvert:
        """The first table (already known or yet to come) matching predicate.

        Raises TimeoutError if none shows up within timeout seconds.
        """

        def match() -> TableAdvert | None:
            return next((t for t in self._tables.values() if predicate(t)), None)

        async with asyncio.timeout(timeout):
            while True:
                changed = self._changed  # taken before checking, so no change slips between
                found = match()
                if found is not None:
                    return found
                await changed.wait()

    async def wait_gone(self, table_id: str, timeout: float) -> None:
        """Return once table_id is no longer listed; TimeoutError after timeout seconds."""
        async with asyncio.timeout(timeout):
            while table_id in self._tables:
                await self._changed.wait()

    def _on_service_event(
        self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        # Called synchronously by zeroconf on the loop: anything slow goes into a task.
        if self._aiozc is None:
            return  # stopping: no new resolver on a Zeroconf that is closing
        key = name.lower()
        previous = self._resolving.pop(key, None)
        if previous is not None:
            previous.cancel()  # superseded: only the newest records matter
        if state_change is ServiceStateChange.Removed:
            self._rejected.pop(key, None)
            self._drop(key)
            return
        task = asyncio.get_running_loop().create_task(self._resolve(zeroconf, name, key))
        self._resolving[key] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._resolving.get(key) is done:  # a newer task may have taken the slot
                del self._resolving[key]

        task.add_done_callback(forget)

    async def _resolve(self, zeroconf: Zeroconf, name: str, key: str) -> None:
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(zeroconf, self._resolve_timeout_ms):
            reason = f"did not resolve within {self._resolve_timeout_ms / 1000:g} s"
            if key in self._table_by_name:
                # Keep the earlier advert: a slow answer is not a goodbye.
                log.info("keeping last advert for %s: update %s", _show(key, 120), reason)
            else:
                self._reject(key, reason)
            return
        try:
            advert = TableAdvert.from_service_info(info)
        except AdvertError as exc:
            self._reject(key, str(exc))
            self._drop(key)
            return
        self._rejected.pop(key, None)
        old_id = self._table_by_name.get(key)
        if old_id == advert.table_id and self._tables.get(old_id) == advert:
            return
        self._table_by_name[key] = advert.table_id
        self._tables[advert.table_id] = advert
        self._notify()

    def _reject(self, key: str, reason: str) -> None:
        if self._rejected.get(key) != reason:  # log once, not on every re-announcement
            log.warning("ignoring mDNS advert %s: %s", _show(key, 120), reason)
        self._rejected[key] = reason
        self._wake_waiters()

    def _drop(self, key: str) -> None:
        table_id = self._table_by_name.pop(key, None)
        if table_id is not None and self._tables.pop(table_id, None) is not None:
            self._notify()

    def _wake_waiters(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _notify(self) -> None:
        self._wake_waiters()
        if self._on_change is not None:
            try:
                self._on_change(dict(self._tables))
            except Exception:
                # A UI bug must not stop discovery.
                log.exception("TableBrowser on_change callback failed")

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
