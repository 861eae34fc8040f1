"""6th Sense as lanplay plays it: the rules (engine/sixth_sense.py), its look and words, its bot, its options."""

from __future__ import annotations

from engine.sixth_sense import SIXTH_SENSE
from lanplay.bots.sixth_sense import SixthSenseBot
from lanplay.games.bundle import GameBundle
from lanplay.games.sixth_sense import look, words

BUNDLE = GameBundle(
    game=SIXTH_SENSE,
    look=look,
    words=words,
    heuristic=SixthSenseBot,
    form=(
        ("beginner", (False, True)),
        ("target", (None, 1, 5, 10, 15, 20, 25, 30, 40, 50)),
        ("late_trump", (False, True)),
    ),
)
