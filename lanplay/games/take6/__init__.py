"""6 nimmt! as lanplay plays it: the rules (engine/take6.py), its look and words, its bot, its options."""

from __future__ import annotations

from engine.take6 import TAKE6
from lanplay.bots.take6 import Take6Bot
from lanplay.games.bundle import GameBundle
from lanplay.games.take6 import look, words

BUNDLE = GameBundle(
    game=TAKE6,
    look=look,
    words=words,
    heuristic=Take6Bot,
    form=(("tactic", (False, True)), ("logic", (False, True)), ("profi", (False, True))),
)
