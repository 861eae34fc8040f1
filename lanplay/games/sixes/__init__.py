"""Sixes as lanplay plays it: the rules (engine/sixes.py), its look and words, its bots (the heuristic,
bot.py, and the expert search's part, search.py), its option."""

from __future__ import annotations

from engine.sixes import SIXES
from lanplay.games.bundle import GameBundle
from lanplay.games.sixes import look, texts, words
from lanplay.games.sixes.bot import SixesBot
from lanplay.games.sixes.search import SixesSearcher

BUNDLE = GameBundle(
    package=__name__,  # its files: rules.md
    game=SIXES,
    look=look,
    words=words,
    heuristic=SixesBot,
    searcher=SixesSearcher,
    texts={"en": texts.EN, "nl": texts.NL},
    rules=texts.RULES,
    form=(("chips", (10,)),),  # a number: ←/→ step it (X-1.4: 1 to 50)
)
