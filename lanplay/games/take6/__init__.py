"""6 nimmt! as lanplay plays it: the rules (engine/take6.py), its look and words, its bots (the heuristic,
bot.py, and the expert search's part, search.py), its options."""

from __future__ import annotations

from engine.take6 import TAKE6
from lanplay.games.bundle import GameBundle
from lanplay.games.take6 import look, texts, words
from lanplay.games.take6.bot import Take6Bot
from lanplay.games.take6.search import Take6Searcher

BUNDLE = GameBundle(
    package=__name__,  # its files: rules.md
    game=TAKE6,
    look=look,
    words=words,
    heuristic=Take6Bot,
    searcher=Take6Searcher,
    texts={"en": texts.EN, "nl": texts.NL},
    rules=texts.RULES,
    form=(("tactic", (False, True)), ("logic", (False, True)), ("profi", (False, True))),
)
