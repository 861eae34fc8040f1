"""`--option KEY=VALUE` on the command line, for `lanplay play` and `lanplay host`."""

from __future__ import annotations

import json
from collections.abc import Sequence

from lanplay.games import option_keys_text, valid_option_keys


class OptionError(ValueError):
    """A `--option` that is not KEY=VALUE or names no option of the game."""


def parse_options(pairs: Sequence[str], game_id: str | None = None) -> dict[str, object]:
    """`KEY=VALUE` pairs; VALUE is JSON where it parses (true, 20), else a string. With `game_id`, every
    key must be one of that game's options."""
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            hint = f"; for {game_id}: {option_keys_text(game_id)}" if game_id else ""
            raise OptionError(f"--option wants KEY=VALUE, e.g. {key or 'target'}=true, not {pair!r}{hint}")
        if game_id is not None and key not in valid_option_keys(game_id):
            raise OptionError(f"{game_id} has no option {key!r}; its options: {option_keys_text(game_id)}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options
