"""The `lanplay` command: its parser and subcommands (commands.py), the plain network commands
(netcli.py) and the plain offline game (local.py)."""

from lanplay.cli.commands import main

__all__ = ["main"]
