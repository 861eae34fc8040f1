"""The terminal client's model, driven with real engine states and no screen.

Choosing moves (with the second question for the 6/9 card and blocks), refusals with a visible
reason, and the rule that matters most at a table of laptops: another seat's prediction and a peek
result never reach the text a seat's screen can show (S-3.4, S-6.4).
"""

from __future__ import annotations

import asyncio
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.data_structures import Point
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType

from engine.api import IllegalMove
from engine.record import replay_text
from engine.sixes import DECK, SIXES, hand_sizes_for
from engine.sixes import Pass as SixesPass
from engine.sixth_sense import HAND_SIZE, SIXTH_SENSE, Card, Play, Predict, SixthSenseState, deck_for
from engine.take6 import HIDDEN, TAKE6, TakeRow
from engine.take6 import Play as Take6Play
from lanplay.ui.i18n import EN, NL, RULES, detect_lang, rules_summary, t
from lanplay.ui.local_table import LocalTable
from lanplay.ui.model import CONTINUE, TableModel
from lanplay.ui.screens import hand_area, screen_text

NAMES = ("Ann", "Bob", "Cor")


# --- 6th Sense states from explicit cards --------------------------------------------------------------


def sixth_sense_deal(hands: Mapping[int, Sequence[str]], trump: str = "B14", players: int = 3) -> SixthSenseState:
    """A round dealt with the given cards first in each hand, filled from the deck; seat 0 leads (S-2.5)."""
    used = {code for cards in hands.values() for code in cards} | {trump}
    pool = [card.code for card in deck_for(players) if card.code not in used]
    full: list[list[str]] = []
    for seat in range(players):
        cards = list(hands.get(seat, ()))
        need = HAND_SIZE[players] - len(cards)
        cards += pool[:need]
        pool = pool[need:]
        full.append(cards)
    state = SIXTH_SENSE.new_game(players, SIXTH_SENSE.options_from_json({}))
    deal = SIXTH_SENSE.deal_from_json(state, {"dealer": players - 1, "hands": full, "trump": trump})
    return SIXTH_SENSE.start_round(state, deal)


def predicted_round() -> SixthSenseState:
    """Seat 0 holds R8 (peek), G6 (the 6/9 card) and Y0; seat 1 holds R0 and R14; every seat has predicted:
    Ann Y5, Bob P14, Cor P13. Seat 0 leads the first trick."""
    state = sixth_sense_deal({0: ["R8", "G6", "Y0", "Y5"], 1: ["R0", "R14", "P14", "P12"], 2: ["R1", "P13"]})
    for seat, code in ((0, "Y5"), (1, "P14"), (2, "P13")):
        state = SIXTH_SENSE.apply(state, Predict(seat, Card.parse(code)))
    return state


def model_for(game: Any, state: Any, seat: int, submitted: list[Any] | None = None) -> TableModel:
    model = TableModel(game, NAMES[: game.players(state)], seat, "en")
    if submitted is not None:
        model.submit = submitted.append
    view = game.view(state, seat)
    model.update_state(view)
    model.set_decision(game.legal_moves(view, seat))
    return model


def option_codes(model: TableModel) -> list[str]:
    return [option.code for option in model.options]


# --- choosing ------------------------------------------------------------------------------------------


def test_prediction_is_chosen_with_the_cursor_and_handed_to_submit() -> None:
    state = sixth_sense_deal({0: ["R8", "G6"]})
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, state, 0, submitted)
    assert model.kind == "predict"
    assert "choose a prediction card" in screen_text(model)
    hand = [c.code for c in state.round.hands[0]]  # type: ignore[union-attr]
    assert option_codes(model) == hand  # S-3.2: any card may be the prediction
    model.move_cursor(3)  # nothing selected at first: the first step selects the first card
    model.confirm()
    assert submitted == [Predict(0, Card.parse(hand[2]))]
    assert model.moves == () and model.error is None


def test_digits_choose_directly_and_an_unknown_number_is_refused_visibly() -> None:
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, sixth_sense_deal({}), 0, submitted)
    model.choose(40)
    assert submitted == []
    assert "there is no choice 41" in screen_text(model)
    model.choose(0)
    assert len(submitted) == 1 and isinstance(submitted[0], Predict)


def test_the_6_9_card_asks_whether_it_is_6_or_9() -> None:
    """S-6.3: one card, two moves: the model asks a second question."""
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, predicted_round(), 0, submitted)
    assert model.kind == "play"
    model.choose(option_codes(model).index("G6"))
    assert submitted == [] and model.question is not None
    assert [o.params.get("value") for o in model.options] == [6, 9]
    text = screen_text(model)
    assert "how do you play G6/9?" in text and "[as 6]" in text and "[as 9]" in text
    model.back()
    assert model.question is None and model.options[model.cursor].code == "G6"
    model.confirm()
    model.choose(1)
    assert submitted == [Play(0, Card.parse("G6"), 9)]


def test_a_zero_asks_whether_to_block_and_names_the_blocked_card_and_its_owner() -> None:
    """S-6.1: a 0 may be played plain or block one card of the trick."""
    state = SIXTH_SENSE.apply(predicted_round(), Play(0, Card.parse("R8")))
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, state, 1, submitted)
    model.choose(option_codes(model).index("R0"))
    text = screen_text(model)
    assert "[as a plain 0]" in text and "[block ●Ann's R8]" in text
    model.choose(1)
    assert submitted == [Play(1, Card.parse("R0"), None, Card.parse("R8"))]


def test_not_following_the_led_colour_is_refused_with_the_reason() -> None:
    """S-4.2: Bob holds red, so P12 is shown but refused, and nothing is submitted."""
    state = SIXTH_SENSE.apply(predicted_round(), Play(0, Card.parse("R8")))
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, state, 1, submitted)
    p12 = option_codes(model).index("P12")
    assert not model.options[p12].enabled
    model.choose(p12)
    assert submitted == []
    assert "P12 is not allowed: you must follow the led colour Red (S-4.2)" in screen_text(model)
    assert model.moves  # the decision stays open


def test_a_move_the_back_end_refuses_keeps_the_decision_and_shows_the_rule() -> None:
    model = model_for(SIXTH_SENSE, sixth_sense_deal({}), 0)

    def refuse(move: Any) -> None:
        raise IllegalMove("S-3.1", "the table has moved on")

    model.submit = refuse
    model.move_cursor(1)
    model.confirm()
    assert model.moves and model.kind == "predict"
    assert "not allowed (S-3.1): the table has moved on" in screen_text(model)


def test_a_mouse_click_on_a_card_chooses_it() -> None:
    """Cards carry prompt_toolkit mouse handlers; a click (button up) chooses like a digit."""
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, sixth_sense_deal({0: ["R8"]}), 0, submitted)
    fragments = [f for line in hand_area(model) for f in line if len(f) == 3]
    target = next(f for f in fragments if f[1] == "R8")
    handler: Any = target[2]
    handler(MouseEvent(Point(0, 0), MouseEventType.MOUSE_MOVE, MouseButton.NONE, frozenset()))
    assert submitted == []
    handler(MouseEvent(Point(0, 0), MouseEventType.MOUSE_UP, MouseButton.LEFT, frozenset()))
    assert submitted == [Predict(0, Card.parse("R8"))]


def test_continue_button_between_rounds() -> None:
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, sixth_sense_deal({}), 0, submitted)
    model.ask_continue()
    assert "press Enter for the next round" in screen_text(model)
    model.confirm()
    assert submitted == [CONTINUE]


# --- what a seat may see ---------------------------------------------------------------------------------


def test_other_predictions_are_never_rendered_until_the_round_is_scored() -> None:
    """S-3.4: Bob's P14 and Cor's P13 are hidden from Ann; Ann sees her own Y5."""
    state = sixth_sense_deal({0: ["R8", "G6", "Y0", "Y5"], 1: ["R0", "R14", "P14", "P12"], 2: ["R1", "P13"]})
    state = SIXTH_SENSE.apply(state, Predict(1, Card.parse("P14")))
    text = screen_text(model_for(SIXTH_SENSE, state, 0))
    assert "·●Ann" in text and "✓▲Bob" in text and "·■Cor" in text  # who has predicted is public, never what
    assert "P14" not in text
    text = screen_text(model_for(SIXTH_SENSE, predicted_round(), 0))
    assert "Your prediction: Y5" in text
    assert "P14" not in text and "P13" not in text


def test_the_peek_result_reaches_the_peeker_only() -> None:
    """S-6.4: Ann leads R8, Bob wins with R14: Ann sees Bob's P14; Cor learns only that Ann peeked."""
    state = predicted_round()
    models = {seat: model_for(SIXTH_SENSE, state, seat) for seat in range(3)}
    for move in (Play(0, Card.parse("R8")), Play(1, Card.parse("R14")), Play(2, Card.parse("R1"))):
        before, state = state, SIXTH_SENSE.apply(state, move)
        for seat, model in models.items():
            model.add_events(model.words.move_events(model, before, move, state))
            model.update_state(SIXTH_SENSE.view(state, seat))
    assert state.round is not None and state.round.peeks  # the engine granted the peek
    ann, bob, cor = (screen_text(models[seat]) for seat in range(3))
    assert "Peek (only you see this): after trick 1, ▲Bob predicted P14" in ann
    assert "Peek, trick 1: ▲Bob predicted P14" in ann
    assert "P14" not in cor and "●Ann peeks at ▲Bob's prediction card" in cor
    assert "Ann peeks at your prediction card" in bob
    assert "P13" not in ann and "P13" not in bob


def test_a_whole_local_game_feeds_only_this_seats_view(tmp_path: Path) -> None:
    """Every update the model gets from a LocalTable hides the other hands and predictions, and the
    saved record replays as a complete game."""
    model = TableModel(SIXTH_SENSE, NAMES, 1, "en")
    table = LocalTable(model, SIXTH_SENSE.options_from_json({}), bot_delay=0, record_dir=tmp_path, seed=7)
    leaks: list[str] = []

    def check() -> None:
        r = model.view.round if model.view is not None else None
        if r is None or r.points is not None:
            return
        for seat in (0, 2):
            peeked = any(p.peeker == 1 and p.target == seat for p in r.peeks)  # S-6.4: seen by a peek
            if r.hands[seat] is not None or (r.predictions[seat] is not None and not peeked):
                leaks.append(f"seat {seat} visible in round {model.round_no}")

    model.listeners.append(check)

    async def play() -> None:
        task = asyncio.ensure_future(table.run())
        while not task.done():
            await asyncio.sleep(0)
            if model.moves:
                if model.cursor < 0:
                    model.move_cursor(1)
                model.confirm()
        task.result()

    asyncio.run(asyncio.wait_for(play(), 30))
    assert leaks == []
    assert model.game_over is not None and model.game_over.record_path is not None
    assert len(model.round_results) == 6  # S-2.2: 3 players play 6 rounds
    assert model.audits == {}  # nothing was audited, and nothing claims it was
    replay = replay_text(Path(model.game_over.record_path).read_text())
    assert replay.complete and replay.players == NAMES


# --- 6 nimmt! and Sixes -----------------------------------------------------------------------------


def test_take6_row_choice_when_the_card_is_lower_than_every_row() -> None:
    """T-3.5: Ann's 1 is lower than every row end: she chooses a row to take."""
    state = TAKE6.new_game(2, TAKE6.options_from_json({}))
    deal = TAKE6.deal_from_json(
        state, {"dealer": 1, "hands": [list(range(1, 11)), list(range(11, 21))], "rows": [50, 60, 70, 80]}
    )
    state = TAKE6.start_round(state, deal)
    state = TAKE6.apply(state, Take6Play(0, 1))
    bob_view = TAKE6.view(state, 1)
    assert bob_view.chosen[0] == HIDDEN  # T-3.1: Bob knows only that Ann has chosen
    state = TAKE6.apply(state, Take6Play(1, 11))
    submitted: list[Any] = []
    model = model_for(TAKE6, state, 0, submitted)
    assert model.kind == "take_row" and [o.kind for o in model.options] == ["row"] * 4
    text = screen_text(model)
    assert "your card 1 is lower than every row: choose a row to take (T-3.5)" in text
    assert "Row 3   70³" in text and "bullheads: 3" in text
    assert "Still to place:  ●Ann 1  ▲Bob 11" in text
    model.choose(2)
    assert submitted == [TakeRow(0, 2)]


def test_sixes_without_a_playable_card_offers_only_pass() -> None:
    """X-2.4: Ann holds nothing that fits after O6; cards are shown but refused; Pass is offered."""
    ann = ["CA", "C2", "C3", "C4", "C5", "EA", "E2", "E3", "E4", "E5", "BA", "B2", "B3", "B4"]
    sizes = hand_sizes_for(3, 2)
    rest = [card for card in DECK if card not in ann and card != "O6"]
    cor = ["O6", *rest[: sizes[2] - 1]]
    bob = rest[sizes[2] - 1 :]
    state = SIXES.new_game(3, SIXES.options_from_json({"chips": 3}))
    state = SIXES.start_round(state, SIXES.deal_from_json(state, {"dealer": 2, "hands": [ann, bob, cor]}))
    state = SIXES.apply(state, SIXES.legal_moves(state, 2)[0])  # Cor opens with O6
    submitted: list[Any] = []
    model = model_for(SIXES, state, 0, submitted)
    assert option_codes(model)[-1] == "pass_button" and model.cursor == len(ann)
    assert "[Pass] is the only choice: Enter confirms it" in screen_text(model)  # a forced move still takes a key
    model.choose(0)
    assert submitted == []
    text = screen_text(model)
    assert "CA does not fit on a column now (X-2.3)" in text
    assert "no card fits: pass and pay a chip (X-2.4)" in text and "[Pass]" in text
    model.choose(len(ann))
    assert submitted == [SixesPass(0)]


# --- typing numbers: select, then Enter confirms ------------------------------------------------------


def take6_hand_model(hand: Sequence[int]) -> tuple[TableModel, list[Any], Any]:
    """6 nimmt! for two, Ann (seat 0) to choose a card from `hand` (T-3.1); numbers are the cards'."""
    others = [card for card in range(11, 50) if card not in hand][: len(hand)]
    state = TAKE6.new_game(2, TAKE6.options_from_json({}))
    deal = TAKE6.deal_from_json(state, {"dealer": 1, "hands": [list(hand), others], "rows": [50, 60, 70, 80]})
    state = TAKE6.start_round(state, deal)
    submitted: list[Any] = []
    return model_for(TAKE6, state, 0, submitted), submitted, state


HAND = (1, 2, 3, 5, 9, 30, 37, 62, 93, 100)


def test_a_typed_number_selects_a_card_and_only_enter_plays_it() -> None:
    model, submitted, _ = take6_hand_model(HAND)
    assert model.type_digit("3") and model.type_digit("7")
    assert submitted == [] and option_codes(model)[model.cursor] == "37"
    assert "number 37… (another digit, or Enter to confirm)" in screen_text(model)
    model.finish_typing()  # the pause: still only selected
    assert submitted == [] and option_codes(model)[model.cursor] == "37"
    model.confirm()
    assert submitted == [Take6Play(0, 37)]


def test_enter_after_a_played_number_does_not_play_in_the_next_turn() -> None:
    """`3` `7` Enter plays 37; the next turn starts with nothing selected, so a second Enter plays nothing."""
    model, submitted, state = take6_hand_model(HAND)
    model.type_digit("3")
    model.type_digit("7")
    model.confirm()
    assert submitted == [Take6Play(0, 37)]
    model.set_decision(TAKE6.legal_moves(TAKE6.view(state, 0), 0))  # the next turn (any list of cards will do)
    assert model.cursor == -1 and model.typed == ""
    model.confirm()
    assert submitted == [Take6Play(0, 37)]
    assert "nothing selected: choose with ←→ or a number first, then Enter" in screen_text(model)


@pytest.mark.parametrize("typed", ["91", "36", "4", "101"])
def test_a_number_that_is_not_a_choice_says_so_and_selects_nothing(typed: str) -> None:
    """No 91 (but a 9 and a 93), no 36 (but a 30 and a 37), no 4 at all, no 101 (but a 100)."""
    model, submitted, _ = take6_hand_model(HAND)
    model.move_cursor(1)  # something was selected before: the wrong number unselects it
    for digit in typed:
        model.type_digit(digit)
    assert model.cursor == -1 and model.typed == ""
    assert f"no card {typed} to choose here" in screen_text(model)
    model.confirm()
    assert submitted == []
    model.finish_typing()  # after the pause a digit starts a new number
    model.type_digit("5")
    assert option_codes(model)[model.cursor] == "5" and model.error is None


def test_a_number_is_whole_at_enter() -> None:
    """Typing 9 with 9 and 93 in hand selects the 9; Enter plays it without waiting for the pause."""
    model, submitted, _ = take6_hand_model(HAND)
    assert model.type_digit("9")
    model.confirm()
    assert submitted == [Take6Play(0, 9)]


def test_keys_pressed_before_the_turn_are_not_carried_into_it() -> None:
    model, submitted, state = take6_hand_model(HAND)
    model.clear_decision()  # not this seat's turn yet
    assert not model.type_digit("3")
    model.confirm()
    assert "not your turn yet" in screen_text(model) and model.typed == ""
    model.set_decision(TAKE6.legal_moves(TAKE6.view(state, 0), 0))
    model.finish_typing()  # a pause timer from before the turn fires late
    assert model.cursor == -1 and model.typed == "" and model.error is None
    model.confirm()
    assert submitted == []


def test_a_selection_can_be_changed_before_confirming() -> None:
    model, submitted, _ = take6_hand_model(HAND)
    model.type_digit("3")
    model.type_digit("7")
    model.finish_typing()
    model.type_digit("6")  # after the pause: a new number
    model.type_digit("2")
    assert option_codes(model)[model.cursor] == "62"
    model.move_cursor(1)
    assert option_codes(model)[model.cursor] == "93"
    model.confirm()
    assert submitted == [Take6Play(0, 93)]


def test_the_n_th_choice_is_selected_by_its_place_and_refusals_show_at_once() -> None:
    """6th Sense numbers the cards 1, 2, …; a greyed card typed is selected, and says why it may not be played."""
    state = SIXTH_SENSE.apply(predicted_round(), Play(0, Card.parse("R8")))
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, state, 1, submitted)
    p12 = option_codes(model).index("P12")
    for digit in str(p12 + 1):
        model.type_digit(digit)
    model.finish_typing()
    assert model.cursor == p12 and submitted == []
    assert "P12 is not allowed: you must follow the led colour Red (S-4.2)" in screen_text(model)
    model.confirm()
    assert submitted == [] and model.moves


def test_a_forced_move_is_selected_and_says_it_is_the_only_choice() -> None:
    """S-4.2: Bob holds one red card after a red lead: it is selected, the footer says it is the only
    choice, and it is still played by a key (Enter), never by itself."""
    state = sixth_sense_deal({0: ["R8"], 1: ["R0", "P14", "P12", "Y5", "G5"]}, players=3)
    hands = state.round.hands  # type: ignore[union-attr]
    assert [c.code for c in hands[1] if c.colour == "R"] == ["R0"]
    for seat, code in ((0, hands[0][-1].code), (1, "P14"), (2, hands[2][-1].code)):
        state = SIXTH_SENSE.apply(state, Predict(seat, Card.parse(code)))
    state = SIXTH_SENSE.apply(state, Play(0, Card.parse("R8")))
    submitted: list[Any] = []
    model = model_for(SIXTH_SENSE, state, 1, submitted)
    assert option_codes(model)[model.cursor] == "R0"
    assert "R0 is the only choice: Enter confirms it" in screen_text(model)
    assert submitted == []
    model.confirm()  # R0: plain, or block R8 (S-6.1): the second question, nothing selected in it
    assert submitted == [] and model.question is not None and model.cursor == -1
    model.type_digit("1")
    model.confirm()
    assert submitted == [Play(1, Card.parse("R0"))]


# --- words -------------------------------------------------------------------------------------------


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_message_exists_in_both_languages_with_the_same_parameters() -> None:
    assert set(EN) == set(NL)
    for key in EN:
        assert _fields(EN[key]) == _fields(NL[key]), key
        assert NL[key].strip(), key


def test_rules_summaries_exist_for_every_game_in_both_languages_with_rule_ids() -> None:
    assert set(RULES) == {"sixth-sense", "take6", "sixes"}
    for game_id, prefix in (("sixth-sense", "S-"), ("take6", "T-"), ("sixes", "X-")):
        for lang in ("en", "nl"):
            lines = rules_summary(game_id, lang)
            assert lines and lines[0].startswith(prefix)
        assert len(rules_summary(game_id, "en")) == len(rules_summary(game_id, "nl"))


def test_language_choice() -> None:
    assert detect_lang("nl") == "nl" and detect_lang("en", {"LANG": "nl_NL.UTF-8"}) == "en"
    assert detect_lang(None, {"LANG": "nl_BE.UTF-8"}) == "nl"
    assert detect_lang(None, {"LC_ALL": "en_GB.UTF-8", "LANG": "nl_NL"}) == "en"
    assert detect_lang(None, {}) == "en"
    assert t("waiting_for", "nl", names="Bob") == "wachten op Bob"
    assert t("refuse_follow", "nl", card="P1", colour="R", rule="S-4.2").count("Rood") == 1


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_a_dutch_or_english_screen_has_no_untranslated_ids(lang: str) -> None:
    model = model_for(SIXTH_SENSE, predicted_round(), 0)
    model.lang = lang
    model.add_event("ev_trick_won", trick=1, name="Bob")
    text = screen_text(model)
    for key in EN:
        if len(key) > 6 and "_" in key:
            assert key not in text, key


def test_a_6_9_trump_card_is_named_6_9_on_the_trump_line() -> None:
    """S-1.1: the 6/9 card turned as trump reads P6/9 on the table, as everywhere else (not P6)."""
    model = model_for(SIXTH_SENSE, sixth_sense_deal({}, trump="P6"), 0)
    text = screen_text(model)
    assert "(P6/9)" in text and "(P6)" not in text


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_the_rules_card_says_what_wins_under_reversal(lang: str) -> None:
    """S-6.2: under reversal a card of another colour beats the led colour, which beats trump (not only: the
    lowest card wins)."""
    text = " ".join(" ".join(rules_summary("sixth-sense", lang)).split())
    assert {"en": "then another colour beats the led colour, which beats trump",
            "nl": "dan wint een andere kleur van de gevraagde, die wint van troef"}[lang] in text
