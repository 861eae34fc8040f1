"""Which network this laptop plays on: its IPv4 interfaces as a person knows them, and the choice.

Every peer pins mDNS and its sockets to one IPv4 address (lanplay.net.discovery). Which one, in this order:

1. ``--interface ADDRESS`` on the command line;
2. ``$LANPLAY_INTERFACE`` (how every test and CI run stays on 127.0.0.1);
3. the choice saved in the data directory (``network.json``), made in the lobby;
4. none: the lobby asks; the commands (`host`, `join`, `bot`) play on this laptop only (127.0.0.1)
   and say so.

An address given in 1 or 2 must be one of this laptop's (listed with `ifaddr`, the library zeroconf
itself uses): anything else is refused with the list of those that are. A saved choice is looked up
by interface name first, so a laptop whose Wi-Fi got a new address from DHCP keeps playing on its Wi-Fi.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ifaddr

from lanplay.base.store import SavedNetwork, load_network, save_network
from lanplay.net.discovery import DEFAULT_INTERFACE, ENV_INTERFACE, InterfaceError, check_interface

LOOPBACK_LABEL = "this laptop only"


@dataclass(frozen=True, slots=True)
class Network:
    """One IPv4 address of this laptop: ``interface`` is the system's name for it (``wlan0``, ``en0``)."""

    interface: str
    address: str

    @property
    def loopback(self) -> bool:
        return ipaddress.IPv4Address(self.address).is_loopback

    @property
    def label(self) -> str:
        """``wlan0 192.168.1.23``, or ``this laptop only`` for loopback."""
        return LOOPBACK_LABEL if self.loopback else f"{self.interface} {self.address}"

    def saved(self) -> SavedNetwork:
        return SavedNetwork(self.interface, self.address)


@dataclass(frozen=True, slots=True)
class NetworkInUse:
    """The address to play on and why: ``source`` is ``--interface``, ``LANPLAY_INTERFACE``, ``saved`` or
    ``default`` (nothing chosen: this laptop only)."""

    address: str
    source: str
    label: str


def local_networks() -> tuple[Network, ...]:
    """This laptop's IPv4 addresses: the real interfaces by name, then "this laptop only" (127.0.0.1).
    Other loopback addresses (127.0.1.1 ...) are left out: one way to say "only here" is enough."""
    found: list[Network] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):
                continue  # IPv6: lanplay pins IPv4 only
            address = ipaddress.IPv4Address(ip.ip)
            if address.is_loopback or address.is_link_local or address.is_unspecified:
                continue
            name = adapter.nice_name if isinstance(adapter.nice_name, str) and adapter.nice_name else adapter.name
            found.append(Network(str(name), str(address)))
    found.sort(key=lambda n: (n.interface, ipaddress.IPv4Address(n.address)))
    return (*found, Network("lo", DEFAULT_INTERFACE))


def networks_text(networks: Sequence[Network]) -> str:
    """``wlan0 192.168.1.23, this laptop only 127.0.0.1``: for one-line error messages."""
    return ", ".join(n.label if not n.loopback else f"{n.label} {n.address}" for n in networks)


def check_on_this_laptop(address: str, source: str, networks: Sequence[Network] | None = None) -> Network:
    """The network of `address` (checked to be one IPv4 address of one interface); `InterfaceError`,
    with the list of this laptop's addresses, if it is not one of them."""
    address = check_interface(address, source)
    networks = local_networks() if networks is None else networks
    for network in networks:
        if network.address == address:
            return network
    if ipaddress.IPv4Address(address).is_loopback:
        return Network("lo", address)  # any 127.x works on every laptop
    raise InterfaceError(
        f"{source} {address} is not an address of this laptop; its addresses: {networks_text(networks)}"
    )


def find_saved(saved: SavedNetwork, networks: Sequence[Network]) -> Network | None:
    """The saved choice on this laptop now: the same interface (its address may have changed), else the
    same address; None if neither is here any more."""
    same_name = [n for n in networks if n.interface == saved.interface and not n.loopback]
    if any(n.address == saved.address for n in same_name):
        return next(n for n in same_name if n.address == saved.address)
    if same_name:
        return same_name[0]
    return next((n for n in networks if n.address == saved.address), None)


def network_in_use(cli_value: str | None, directory: Path, *, ask: bool = False) -> NetworkInUse | None:
    """The network to play on (order in the module docstring). None only with ``ask``: nothing is
    chosen yet (or the saved network is gone), so the lobby asks. `InterfaceError` for an address not on
    this laptop; `lanplay.base.store.StoreError` for an unreadable saved choice."""
    env_value = os.environ.get(ENV_INTERFACE, "")
    if cli_value is not None or env_value.strip():
        source = "--interface" if cli_value is not None else ENV_INTERFACE
        network = check_on_this_laptop(cli_value if cli_value is not None else env_value, source)
        return NetworkInUse(network.address, source, network.label)
    saved = load_network(directory)
    networks = local_networks()
    if saved is not None:
        here = find_saved(saved, networks)
        if here is not None:
            if here.saved() != saved:
                save_network(directory, here.saved())  # the Wi-Fi got a new address: follow it
            return NetworkInUse(here.address, "saved", here.label)
        if not ask:
            raise InterfaceError(
                f"the network chosen before ({saved.interface} {saved.address}) is not on this laptop now; "
                f"its addresses: {networks_text(networks)}; choose again in the lobby (lanplay) or pass --interface"
            )
    if ask:
        return None
    return NetworkInUse(DEFAULT_INTERFACE, "default", LOOPBACK_LABEL)


def toward(host: str) -> Network | None:
    """This laptop's network on the way to `host` (the source address the kernel would use), for
    `lanplay join HOST:PORT` with no network chosen: joining the address a friend read out just works.
    Connecting a UDP socket only looks up the route; no packet leaves. None if there is no route (or
    `host` is a name: looking it up could ask a DNS server)."""
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((host, 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    for network in local_networks():
        if network.address == address:
            return network
    return Network("?", address) if ipaddress.IPv4Address(address).is_loopback else None


def remember(directory: Path, network: Network) -> Path:
    """Save the player's choice in the data directory."""
    return save_network(directory, network.saved())
