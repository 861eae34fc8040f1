"""6th Sense as lanplay plays it: the rules (engine/sixth_sense.py), its look and words, its bots (the heuristic,
bot.py, and the expert search's part, search.py), its options."""

from __future__ import annotations

from engine.sixth_sense import SIXTH_SENSE
from lanplay.games.bundle import GameBundle
from lanplay.games.sixth_sense import look, texts, words
from lanplay.games.sixth_sense.bot import SixthSenseBot
from lanplay.games.sixth_sense.search import SixthSenseSearcher

BUNDLE = GameBundle(
    package=__name__,  # its files: rules.md
    game=SIXTH_SENSE,
    look=look,
    words=words,
    heuristic=SixthSenseBot,
    searcher=SixthSenseSearcher,
    texts={"en": texts.EN, "nl": texts.NL},
    rules=texts.RULES,
    form=(
        ("beginner", (False, True)),
        ("target", (None, 1, 5, 10, 15, 20, 25, 30, 40, 50)),
        ("late_trump", (False, True)),
    ),
)
