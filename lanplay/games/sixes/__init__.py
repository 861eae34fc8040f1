"""Sixes as lanplay plays it: the rules (engine/sixes.py), its look and words, its bot, its option."""

from __future__ import annotations

from engine.sixes import SIXES
from lanplay.bots.sixes import SixesBot
from lanplay.games.bundle import GameBundle
from lanplay.games.sixes import look, words

BUNDLE = GameBundle(
    game=SIXES,
    look=look,
    words=words,
    heuristic=SixesBot,
    form=(("chips", (10,)),),  # a number: ←/→ step it (X-1.4: 1 to 50)
)
