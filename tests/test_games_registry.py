"""Every game is registered once on each side and brings all its parts (docs/ARCHITECTURE.md, "A game is one
bundle"): the engine's games and lanplay's bundles are the same ids, and each bundle has its rules text, its title in
every language, a rule-of-thumb bot that plays legal moves, and a lobby form whose keys are the engine's options."""

from __future__ import annotations

import random

import pytest

from engine.games import all_games
from engine.playout import play_game
from lanplay.bots import bot_chooser
from lanplay.cli.commands import rules_text
from lanplay.games import BUNDLES, game_bundle, make_bot, valid_option_keys
from lanplay.games.bundle import GameBundle
from lanplay.ui.i18n import LANGUAGES, MESSAGES, RULES, add_game_texts, rules_summary


def test_the_engine_and_lanplay_register_the_same_games_once() -> None:
    ids = [bundle.id for bundle in BUNDLES]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(all_games())


def test_an_unknown_game_is_named_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"unknown game 'chess'; known: sixes, sixth-sense, take6"):
        game_bundle("chess")


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda bundle: bundle.id)
def test_a_bundle_brings_its_rules_title_form_and_bot(bundle: GameBundle) -> None:
    game = bundle.game
    assert rules_text(bundle.id).strip()
    assert all(f"game_{bundle.id}" in MESSAGES[lang] for lang in LANGUAGES)
    assert {key for key, _ in bundle.form} <= set(valid_option_keys(bundle.id))
    assert set(bundle.words.OPTION_HELP) == set(valid_option_keys(bundle.id))
    players = game.min_players
    bots = {seat: make_bot(bundle.id, "heuristic", seat) for seat in range(players)}
    options = game.options_from_json({})
    _, record = play_game(game, [f"P{s}" for s in range(players)], options, bot_chooser(game, bots),
                              random.Random(3), max_rounds=1)
    assert record.rounds and record.rounds[0].moves


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda bundle: bundle.id)
def test_a_bundles_words_are_in_every_language_and_reach_the_shared_table(bundle: GameBundle) -> None:
    assert set(bundle.texts) == set(LANGUAGES) == set(bundle.rules)
    keys = {frozenset(words) for words in bundle.texts.values()}
    assert len(keys) == 1
    for lang in LANGUAGES:
        assert all(MESSAGES[lang][key] == text for key, text in bundle.texts[lang].items())
        assert rules_summary(bundle.id, lang) == bundle.rules[lang]


def test_a_games_word_may_not_change_a_word_already_in_use() -> None:
    taken = {"en": {"your_hand": "Cards"}, "nl": {"your_hand": "Kaarten"}}
    with pytest.raises(ValueError, match=r"game chess: its words \['your_hand'\] already mean something else"):
        add_game_texts("chess", taken, {"en": (), "nl": ()})
    with pytest.raises(ValueError, match="game chess: words and rules are needed in en, nl"):
        add_game_texts("chess", {"en": {}}, {"en": ()})
    assert MESSAGES["en"]["your_hand"] == "Your hand" and "chess" not in RULES
