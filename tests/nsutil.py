"""Laptops on one LAN made of network namespaces, for the tests that need more than loopback.

`Lan` makes a namespace holding only a bridge `br0` (no address: it switches, it routes nothing) and one
namespace per peer with `eth0` = 10.X.0.N/24 (a veth whose other end is on the bridge) and `lo`. Everything
is created inside namespaces made here and deleted by `close`; the root namespace gets no interface,
address or route, so nothing can reach the machine's real network. A peer may be cut off from multicast
(it sits behind a router namespace on a subnet of its own: unicast is forwarded, mDNS is not), as on a
guest Wi-Fi that drops multicast.

`lan_or_skip` skips the test, with the reason, where namespaces cannot be made (not root, no `ip`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


@dataclass
class Lan:
    prefix: str
    subnet: str  # "10.78.0"
    peers: int
    no_multicast: Sequence[int] = ()  # peer numbers (1-based) whose bridge port drops multicast
    made: list[str] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"{self.prefix}br"

    def ns(self, peer: int) -> str:
        return f"{self.prefix}p{peer}"

    @property
    def router(self) -> str:
        return f"{self.prefix}rt"

    def address(self, peer: int) -> str:
        if peer in self.no_multicast:
            return f"{self._base}.{peer}.2"
        return f"{self.subnet}.{peer}"

    @property
    def _base(self) -> str:
        return self.subnet.rsplit(".", 1)[0]

    def exec(self, peer: int) -> list[str]:
        return ["ip", "netns", "exec", self.ns(peer)]

    def build(self) -> Lan:
        names = [self.bridge, *(self.ns(i) for i in range(1, self.peers + 1))]
        if self.no_multicast:
            names.append(self.router)
        for name in names:
            done = ip("netns", "add", name, check=False)
            if done.returncode != 0:
                self.close()
                pytest.skip(f"`ip netns add` is not permitted here: {done.stderr.strip()}")
            self.made.append(name)
        try:
            ip("-n", self.bridge, "link", "add", "br0", "type", "bridge")
            ip("-n", self.bridge, "link", "set", "br0", "up")
            if self.no_multicast:
                self._build_router()
            for i in range(1, self.peers + 1):
                ns = self.ns(i)
                if i in self.no_multicast:
                    continue
                # Made inside the namespaces: the root namespace never sees these interfaces.
                ip("-n", self.bridge, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
                ip("-n", self.bridge, "link", "set", f"v{i}", "master", "br0")
                ip("-n", self.bridge, "link", "set", f"v{i}", "up")
                ip("-n", ns, "link", "set", "lo", "up")
                ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
                ip("-n", ns, "link", "set", "eth0", "multicast", "on", "up")
                if self.no_multicast:
                    ip("-n", ns, "route", "add", f"{self._base}.0.0/16", "via", f"{self.subnet}.254")
        except subprocess.CalledProcessError as exc:
            self.close()
            pytest.skip(f"cannot build the namespace LAN: {' '.join(exc.cmd)}: {exc.stderr.strip()}")
        for i in range(1, self.peers + 1):
            routes = ip("-n", self.ns(i), "route", "show").stdout
            assert "default" not in routes, routes  # only the /24 on eth0 (and lo)
        return self

    def _build_router(self) -> None:
        """A router between the bridge and each peer cut off from multicast: unicast is forwarded, and
        multicast, mDNS's 224.0.0.251 above all (link-local), is never routed, as across a guest Wi-Fi."""
        rt = self.router
        ip("-n", rt, "link", "set", "lo", "up")
        ip("-n", self.bridge, "link", "add", "vrt", "type", "veth", "peer", "name", "up0", "netns", rt)
        ip("-n", self.bridge, "link", "set", "vrt", "master", "br0")
        ip("-n", self.bridge, "link", "set", "vrt", "up")
        ip("-n", rt, "addr", "add", f"{self.subnet}.254/24", "dev", "up0")
        ip("-n", rt, "link", "set", "up0", "up")
        for i in self.no_multicast:
            ns = self.ns(i)
            ip("-n", rt, "link", "add", f"down{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("-n", rt, "addr", "add", f"{self._base}.{i}.1/24", "dev", f"down{i}")
            ip("-n", rt, "link", "set", f"down{i}", "up")
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "multicast", "on", "up")
            ip("-n", ns, "route", "add", f"{self._base}.0.0/16", "via", f"{self._base}.{i}.1")
        subprocess.run(
            ["ip", "netns", "exec", rt, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip

    def close(self) -> None:
        for name in self.made:
            ip("netns", "del", name, check=False)
        self.made.clear()
        leftover = [n for n in ip("netns", "list", check=False).stdout.split() if n.startswith(self.prefix)]
        for name in leftover:
            ip("netns", "del", name, check=False)


def lan_or_skip(tag: str, subnet: str, peers: int, no_multicast: Sequence[int] = ()) -> Lan:
    if shutil.which("ip") is None:
        pytest.skip("no `ip` command (iproute2) to make network namespaces")
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)")
    return Lan(f"lp{tag}{os.getpid()}", subnet, peers, no_multicast).build()


def ns_env(home: str, extra: dict[str, str] | None = None) -> list[str]:
    """`env -i ...` for a command run through `ip netns exec`: exactly these variables, and no
    LANPLAY_INTERFACE (the namespace has only the test's own interfaces, so nothing else is reachable)."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "LC_CTYPE") if k in os.environ}
    values = {**keep, "HOME": home, "LANPLAY_HOME": f"{home}/data", "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1",
              "LANPLAY_BOT_DELAY": "0", **(extra or {})}  # fmt: skip
    return ["env", "-i", *(f"{k}={v}" for k, v in values.items())]
