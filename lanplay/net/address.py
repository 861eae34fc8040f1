"""A table's address as a person types it: HOST:PORT, as `lanplay host` prints it."""

from __future__ import annotations

import ipaddress
import re

# A host name as RFC 1123 allows it (letters, digits, hyphens; dot-separated labels).
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*\.?")


class AddressError(Exception):
    """Not a HOST:PORT a table can be at: the message says which part is wrong, in one line."""


def parse_address(text: str) -> tuple[str, int]:
    """HOST:PORT as `lanplay host` prints it: an IPv4 address or a host name, and a port 1–65535.
    `AddressError` saying which part is wrong."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        raise AddressError(f"expected HOST:PORT (e.g. 192.168.1.23:40123), got {text!r}: no port")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise AddressError(f"bad port {port!r} in {text!r}: a port is a number from 1 to 65535")
    try:
        return str(ipaddress.IPv4Address(host)), int(port)
    except ValueError:
        pass
    if not host or not _HOST_NAME.fullmatch(host) or host.replace(".", "").isdigit():
        raise AddressError(f"bad host {host!r} in {text!r}: give the IPv4 address `lanplay host` printed")
    return host, int(port)
