"""Test configuration shared by every test module.

Every test keeps lanplay on loopback: the machine running the tests may have a real LAN, and a
test must never advertise a table or send multicast there. A test that needs another interface makes
it itself (a network namespace) and passes it explicitly.
"""

import os

os.environ["LANPLAY_INTERFACE"] = "127.0.0.1"
