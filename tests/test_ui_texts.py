"""The table explains itself: why a trick went as it did (S-4.5, S-5, S-6), in English and Dutch, as
the last-trick lines and the log show it; choosing from long lists by typing a number; ↑↓ by screen
row and ←→ past greyed cards; the game-over screen; `--plain`.

Tricks are played on an explicit 3-player deal where nobody can follow anyone else's colour (Ann
holds the reds, Bob the yellows, Cor the greens), so any card may follow any lead (S-4.2) and each
test picks exactly the cards it needs.
"""

from __future__ import annotations

import asyncio
import io
import re
from typing import Any

import pytest

from engine.sixth_sense import SIXTH_SENSE, Card, Play, Predict, SixthSenseState, Split, deck_for
from engine.take6 import TAKE6, Pick
from lanplay.cli.local import play_local
from lanplay.games.sixth_sense.words import trick_story
from lanplay.ui.app import too_small_text
from lanplay.ui.lines import plain, ranks, wrap_path
from lanplay.ui.local_table import LocalTable
from lanplay.ui.model import TableModel
from lanplay.ui.screens import game_over_lines, hand_area, screen_text

NAMES = ("Ann", "Bob", "Cor")
TRUMP = "R13"


def colour_deal(beginner: bool = False) -> SixthSenseState:
    """Ann: every red but the trump R13, and B1; Bob: the yellows; Cor: the greens. Seat 0 leads."""
    reds = [c.code for c in deck_for(3) if c.colour == "R" and c.code != TRUMP] + ["B1"]
    hands = [reds, [c.code for c in deck_for(3) if c.colour == "Y"], [c.code for c in deck_for(3) if c.colour == "G"]]
    state = SIXTH_SENSE.new_game(3, SIXTH_SENSE.options_from_json({"beginner": beginner}))
    raw = {"dealer": 2, "hands": hands, "trump": None if beginner else TRUMP}
    state = SIXTH_SENSE.start_round(state, SIXTH_SENSE.deal_from_json(state, raw))
    for seat, code in ((0, "B1"), (1, "Y13"), (2, "G13")):  # S-3.1: out of the way of the tricks below
        state = SIXTH_SENSE.apply(state, Predict(seat, Card.parse(code)))
    return state


def play_trick(plays: list[Play], lang: str = "en", seat: int = 0) -> tuple[TableModel, SixthSenseState]:
    """Play `plays` through the engine, narrated to `seat`'s model as the local table narrates them."""
    state = colour_deal()
    model = TableModel(SIXTH_SENSE, NAMES, seat, lang)
    model.update_state(SIXTH_SENSE.view(state, seat))
    for play in plays:
        before, state = state, SIXTH_SENSE.apply(state, play)
        model.update_state(SIXTH_SENSE.view(state, seat))
        model.add_events(model.words.move_events(model, before, play, state))
    return model, state


def P(seat: int, code: str, as_value: int | None = None, block: str | None = None) -> Play:
    return Play(seat, Card.parse(code), as_value, Card.parse(block) if block else None)


def flat(text: str) -> str:
    """The screen's words with line breaks and runs of spaces as single spaces (wrapped lines read whole)."""
    return " ".join(text.split())


# --- 6th Sense: why a trick went as it did --------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["Last trick (trick 1): ■Cor won", "G4 reverses: lowest wins",
                "G4 is the lowest card of another colour"]),
        ("nl", ["Vorige slag (slag 1): ■Cor won", "G4 keert om: de laagste wint",
                "G4 is de laagste kaart van een andere kleur"]),
    ],
)
def test_a_counting_4_reverses_and_an_off_colour_card_beats_trump(lang: str, words: list[str]) -> None:
    """S-6.2: one counting 4 reverses; the lowest card of another colour beats the trump R8 and Y14."""
    model, state = play_trick([P(0, "R8"), P(1, "Y14"), P(2, "G4")], lang)
    assert state.round is not None and state.round.trick_winners == (2,)
    text = flat(screen_text(model))
    for phrase in words:
        assert phrase in text
    assert "won (1)" not in text


def test_the_reversal_in_force_shows_while_the_trick_is_played() -> None:
    model, _ = play_trick([P(0, "R8"), P(1, "Y4")])
    assert "Now: Y4 reverses: lowest wins" in flat(screen_text(model))
    model, _ = play_trick([P(0, "R4"), P(1, "Y4")], "nl")
    assert "Nu: R4, Y4 heffen elkaar op: de hoogste wint" in flat(screen_text(model))


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["R4, Y4 cancel each other: highest wins", "R4 is the highest trump", "Trick 1: ●Ann wins"]),
        ("nl", ["R4, Y4 heffen elkaar op: de hoogste wint", "R4 is de hoogste troef", "Slag 1: ●Ann wint"]),
    ],
)
def test_two_4s_cancel(lang: str, words: list[str]) -> None:
    """S-6.2: two counting 4s cancel: the highest trump wins as usual."""
    model, state = play_trick([P(0, "R4"), P(1, "Y4"), P(2, "G14")], lang)
    assert state.round is not None and state.round.trick_winners == (0,)
    text = flat(screen_text(model))
    for phrase in words:
        assert phrase in text


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", ["Ann R8 (blocked)", "Bob Y0 (blocks R8)", "Cor's G5 set the led colour: Green",
                "Bob's Y0 blocks R8: neither counts"]),
        ("nl", ["Ann R8 (geblokkeerd)", "Bob Y0 (blokkeert R8)", "G5 van Cor bepaalde de gevraagde kleur: Groen",
                "Y0 van Bob blokkeert R8: beide tellen niet"]),
    ],
)
def test_a_block_of_the_led_card_names_who_set_the_led_colour(lang: str, words: list[str]) -> None:
    """S-6.1: the blocked led card and its blocker stop counting; the next card sets the led colour (and
    Dutch readers read the colour's name, not its letter)."""
    model, state = play_trick([P(0, "R8"), P(1, "Y0", block="R8"), P(2, "G5")], lang)
    assert state.round is not None and state.round.trick_winners == (2,)
    text = flat(screen_text(model))
    for phrase in words:
        assert phrase in text


def test_a_blocked_4_does_not_reverse() -> None:
    """S-6.1/S-5: a blocked 4's action is cancelled, so the highest card wins."""
    model, state = play_trick([P(0, "R10"), P(1, "Y4"), P(2, "G0", block="Y4")])
    assert state.round is not None and state.round.trick_winners == (0,)
    text = flat(screen_text(model))
    assert "the blocked Y4 does nothing" in text and "reverses" not in text


@pytest.mark.parametrize(
    ("lang", "offer", "after"),
    [
        ("en", "R12 counts: Ann may count two tricks", "Ann counts it as two tricks"),
        ("nl", "R12 telt: Ann mag twee slagen tellen", "Ann telt hem als twee slagen"),
    ],
)
def test_a_12_split_is_offered_said_and_a_stray_enter_keeps_the_count(lang: str, offer: str, after: str) -> None:
    """S-6.5: a counting 12 lets the winner count two tricks; the question's default keeps one."""
    model, state = play_trick([P(0, "R12"), P(1, "Y1"), P(2, "G2")], lang)
    submitted: list[Any] = []
    model.submit = submitted.append
    model.set_decision(SIXTH_SENSE.legal_moves(SIXTH_SENSE.view(state, 0), 0))
    assert offer in flat(screen_text(model))
    model.confirm()  # Enter without choosing
    assert submitted == [Split(0, False)]
    before, state = state, SIXTH_SENSE.apply(state, Split(0, True))
    model.add_events(model.words.move_events(model, before, Split(0, True), state))
    assert after in flat(screen_text(model))


def test_the_story_comes_from_the_engines_resolution() -> None:
    """One place decides: the story's winner is `trick_winner`'s for every trick of a replayed example."""
    from engine.sixth_sense import trick_winner

    plays = [P(0, "R8"), P(1, "Y0", block="R8"), P(2, "G5")]
    story = trick_story(1, plays, "R", NAMES)
    assert story.winner == trick_winner(plays, "R")[0] == 2
    assert story.blocked is plays[0] and story.blocker is plays[1]


def test_the_6_9_card_has_one_name_everywhere() -> None:
    """S-1.1: the hand, the log and the refusal all say G6/9 (records keep the code G6)."""
    model, state = play_trick([P(0, "R8")], seat=1)
    model.set_decision(SIXTH_SENSE.legal_moves(SIXTH_SENSE.view(state, 1), 1))
    text = screen_text(model)
    assert "Y6/9" in text and not re.search(r"Y6(?!/9)", text)
    model.choose([o.code for o in model.options].index("Y6"))
    assert "how do you play Y6/9?" in screen_text(model)
    submitted: list[Any] = []
    model.submit = submitted.append
    model.choose(1)
    assert submitted == [P(1, "Y6", 9)]
    before, state = state, SIXTH_SENSE.apply(state, submitted[0])
    model.update_state(SIXTH_SENSE.view(state, 1))
    model.add_events(model.words.move_events(model, before, submitted[0], state))
    assert "Bob plays Y6/9 as 9" in screen_text(model) and "Y6/9=9" in screen_text(model)


# --- choosing from long lists ---------------------------------------------------------------------------


def take6_pool_model() -> tuple[TableModel, list[Any]]:
    """6 nimmt! with logic: the pool holds 104 - 4 row cards (T-5.2), far more than nine digits reach."""
    state = TAKE6.new_game(2, TAKE6.options_from_json({"logic": True}))
    state = TAKE6.start_round(state, TAKE6.deal_from_json(state, {"dealer": 1, "rows": [1, 2, 3, 4],
                                                                  "pool": list(range(5, 105))}))
    submitted: list[Any] = []
    model = TableModel(TAKE6, ("Ann", "Bob"), 0, "en", submitted.append)
    model.update_state(TAKE6.view(state, 0))
    model.set_decision(TAKE6.legal_moves(TAKE6.view(state, 0), 0))
    return model, submitted


def test_typing_62_selects_card_62_from_the_pool_and_enter_picks_it() -> None:
    model, submitted = take6_pool_model()
    assert "←→↑↓ or a card's number: select · Enter: confirm" in screen_text(model)
    assert model.type_digit("6")  # 6, 60–69: the number may grow
    assert "number 6…" in screen_text(model) and model.options[model.cursor].code == "6"
    assert model.type_digit("2")
    assert submitted == [] and model.options[model.cursor].code == "62"  # selected, not played
    model.confirm()
    assert submitted == [Pick(0, 62)]


def test_a_typed_number_that_is_only_the_start_of_others_is_no_choice() -> None:
    model, submitted = take6_pool_model()
    assert model.type_digit("1")
    assert model.cursor == -1  # 1 is not in the pool (it starts a row), only 10–19 and 100–104 are
    model.finish_typing()  # the pause: the number is whole
    assert submitted == [] and model.cursor == -1 and "no card 1 to choose here" in screen_text(model)
    assert model.type_digit("1") and model.type_digit("0")
    model.finish_typing()
    assert submitted == [] and model.options[model.cursor].code == "10"
    model.confirm()
    assert submitted == [Pick(0, 10)]


def test_the_13th_card_of_a_14_card_hand_is_two_digits() -> None:
    """6th Sense: a number is the n-th card; 1 then 3 selects the 13th (S-3.1 prediction), Enter predicts it."""
    state = colour_deal()
    state = SIXTH_SENSE.new_game(3, state.options)
    raw = {"dealer": 2, "hands": [[c.code for c in deck_for(3)][i * 14:(i + 1) * 14] for i in range(3)],
           "trump": "P14"}
    state = SIXTH_SENSE.start_round(state, SIXTH_SENSE.deal_from_json(state, raw))
    submitted: list[Any] = []
    model = TableModel(SIXTH_SENSE, NAMES, 0, "en", submitted.append)
    model.update_state(SIXTH_SENSE.view(state, 0))
    model.set_decision(SIXTH_SENSE.legal_moves(SIXTH_SENSE.view(state, 0), 0))
    assert "←→↑↓ or 1–14: select · Enter: confirm" in screen_text(model)
    hand = state.round.hands[0]  # type: ignore[union-attr]
    assert model.type_digit("1") and model.type_digit("3")
    assert submitted == []
    model.confirm()
    assert submitted == [Predict(0, hand[12])]


def test_arrows_skip_greyed_cards_and_up_down_move_by_screen_row() -> None:
    """A 14-card hand where only the reds may be played (Bob leads R, Ann must follow, S-4.2)."""
    raw_hands = [
        ["R0", "R1", "Y0", "Y1", "Y2", "Y3", "Y4", "Y5", "Y7", "Y8", "Y10", "Y11", "Y12", "R14"],
        ["R2", "R3", "R4", "R5", "R7", "R8", "R10", "R11", "R12", "G0", "G1", "G2", "G3", "G4"],
        ["G5", "G7", "G8", "G10", "G11", "G12", "G14", "B0", "B1", "B2", "B3", "B4", "B5", "B7"],
    ]
    state = SIXTH_SENSE.new_game(3, SIXTH_SENSE.options_from_json({}))
    state = SIXTH_SENSE.start_round(state, SIXTH_SENSE.deal_from_json(state, {"dealer": 0, "hands": raw_hands,
                                                                              "trump": "P14"}))
    for seat, code in ((0, "Y12"), (1, "G4"), (2, "B7")):
        state = SIXTH_SENSE.apply(state, Predict(seat, Card.parse(code)))
    state = SIXTH_SENSE.apply(state, P(1, "R8"))  # S-2.5: seat 1 leads
    state = SIXTH_SENSE.apply(state, P(2, "G5"))
    model = TableModel(SIXTH_SENSE, NAMES, 0, "en")
    model.update_state(SIXTH_SENSE.view(state, 0))
    model.set_decision(SIXTH_SENSE.legal_moves(SIXTH_SENSE.view(state, 0), 0))
    codes = [o.code for o in model.options]
    assert model.cursor == -1  # nothing selected until a key says so
    model.move_cursor(1)
    assert codes[model.cursor] == "R0"
    model.move_cursor(1)
    assert codes[model.cursor] == "R1"
    model.move_cursor(1)
    assert codes[model.cursor] == "R14"
    model.move_cursor(1)  # past the yellows, which may not be played, round to the first red
    assert codes[model.cursor] == "R0"
    model.move_cursor(-1)
    assert codes[model.cursor] == "R14"
    # ↑↓: draw the hand narrow enough to wrap, then move down a row
    hand_area(model, 24)  # 13 cards over several lines
    rows = sorted({line for line, _ in model.option_grid.values()})
    assert len(rows) >= 2
    model.cursor = codes.index("R0")
    model.move_row(1)  # the row below has no red card: nothing to move to, the cursor stays
    assert codes[model.cursor] == "R0"


def test_down_moves_to_the_nearest_card_on_the_next_row() -> None:
    model, _ = take6_pool_model()
    hand_area(model, 40)
    grid = model.option_grid
    first_line = min(line for line, _ in grid.values())
    model.cursor = next(i for i, (line, x) in sorted(grid.items()) if line == first_line and x > 10)
    line, column = grid[model.cursor]
    model.move_row(1)
    new_line, new_column = grid[model.cursor]
    assert new_line == line + 1 and abs(new_column - column) <= 4
    model.move_row(-1)
    assert grid[model.cursor] == (line, column)


# --- the game-over screen and the window -----------------------------------------------------------------


def test_equal_totals_share_a_rank() -> None:
    assert ranks([5, -1, -1, -3], highest_first=True) == [(1, 0), (2, 1), (2, 2), (4, 3)]
    assert ranks([30, 12, 12], highest_first=False) == [(1, 1), (1, 2), (3, 0)]  # T-4.2: fewest first
    model = TableModel(SIXTH_SENSE, ("Ann", "Bot 1", "Bot 2", "Bot 3"), 0, "en")
    model.set_game_over((0,), (5, -1, -1, -3), None)
    text = screen_text(model)
    assert re.search(r"2\. ▲Bot 1 +-1", text) and re.search(r"2\. ■Bot 2 +-1", text) and "4. ◆Bot 3" in text


def test_the_record_path_never_breaks_inside_a_word() -> None:
    path = "/home/annemarie/.local/share/lanplay/records/lanplay-sixth-sense-20261201-093012-ab12cd34.json"
    parts = wrap_path(path, 34)
    assert "".join(parts) == path and all(len(p) <= 34 for p in parts)
    assert all(p[-1] in "/-_" for p in parts[:-1])
    model = TableModel(SIXTH_SENSE, NAMES, 0, "en")
    model.set_game_over((0,), (1, 0, 0), path)
    lines = [plain([line]).strip() for line in game_over_lines(model)]
    start = lines.index("Record saved to")
    assert "".join(lines[start + 1 : start + 1 + len(parts)]) == path


def test_window_too_small_says_the_minimum_size() -> None:
    model = TableModel(SIXTH_SENSE, NAMES, 0, "nl")
    assert too_small_text(model, 60, 20) == "Venster te klein: de tafel heeft minstens 80×24 nodig (nu 60×20)."


# --- plain mode --------------------------------------------------------------------------------------------


def plain_game(game_id: str, options: dict[str, object], bots: int, lang: str = "en") -> str:
    """A whole game typed as numbers: 1, 2, … over and over (6 nimmt!: every card number in turn)."""
    from engine.games import get_game

    game = get_game(game_id)
    top = 105 if game_id == "take6" else 15
    numbers = "\n".join(str(n) for _ in range(60) for n in range(1, top))
    out = io.StringIO()
    play_local(game, "Ann", bots, game.options_from_json(options), "heuristic", io.StringIO(numbers + "\n"), out,
               seed=3, lang=lang)
    return out.getvalue()


def test_plain_6_nimmt_shows_the_rows_and_the_hand() -> None:
    text = plain_game("take6", {}, 3)
    assert "Row 1" in text and "Row 4" in text and "bullheads:" in text and "Your hand (10)" in text
    assert "Table: 0" not in text and "{'" not in text
    assert "→ row" in text  # where each revealed card went (T-3.3)


def test_plain_6th_sense_shows_trump_tricks_and_the_last_trick_in_words() -> None:
    text = plain_game("sixth-sense", {}, 2)
    assert "Trump:" in text and "Your prediction:" in text and "Last trick (trick 1):" in text
    assert "{'" not in text and "None" not in text
    assert "Final table" in text or "Stopped." in text


def test_plain_sixes_in_dutch() -> None:
    text = plain_game("sixes", {"chips": 1}, 3, "nl")
    assert "Oros" in text and "Jouw hand" in text and "Eindstand" in text
    assert "1 fiches" not in text


@pytest.mark.parametrize(("game_id", "options", "bots"), [("take6", {}, 3), ("sixth-sense", {}, 2), ("sixes", {}, 3)])
def test_plain_tells_every_line_of_the_offline_tables_log(game_id: str, options: dict[str, object], bots: int) -> None:
    """`--plain` is the offline table printed: the same seed and the same typed numbers on the full screen's
    `LocalTable` leave a log whose every line `--plain` printed, in order (round ends included)."""
    from engine.games import get_game

    game = get_game(game_id)
    top = 105 if game_id == "take6" else 15
    numbers = [str(n) for _ in range(60) for n in range(1, top)]
    model = TableModel(game, ("Ann", *(f"Bot {i}" for i in range(1, bots + 1))), 0)
    table = LocalTable(model, game.options_from_json(options), bot_delay=0.0, seed=3, pause_between_rounds=False)

    async def play() -> None:
        run = asyncio.create_task(table.run())
        typed = iter(numbers)
        while not run.done():
            await asyncio.sleep(0)
            while model.moves and not run.done():  # as --plain reads them: the next number, whole
                index = model.index_for_number(next(typed))
                if index is not None:
                    model.choose(index)
                    model.set_error(None)
        await run

    asyncio.run(play())
    printed = iter(plain_game(game_id, options, bots).splitlines())
    # (a log line may follow the prompt on its line: the prompt waits for input without a newline)
    missing = [e.text("en") for e in model.log if not any(line.endswith("  " + e.text("en")) for line in printed)]
    assert model.log and missing == []
    assert sum(e.key == "ev_totals" for e in model.log) == len(table.rounds)  # every round's end is told
    assert not any(e.key.startswith("audit_") for e in model.log)  # and no audit claimed for a local game


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_every_footer_key_line_fits_an_80_column_screen(lang: str) -> None:
    from lanplay.ui.i18n import t

    # a second question's answers are always numbered by place (model.numbers_are_cards)
    for key, digits in (("keys_hint", t("digits_card", lang)), ("keys_hint", t("digits_place", lang, count=15)),
                        ("keys_hint_question", t("digits_place", lang, count=6))):
        assert len(" " + t(key, lang, digits=digits)) <= 78, (key, digits)
    for key in ("keys_hint_over", "keys_hint_wait", "typing"):
        assert len(" " + t(key, lang, typed="104")) <= 78


def test_up_and_down_move_between_the_rows_of_6_nimmt_to_take() -> None:
    """T-3.5: the four rows are the choices, one per screen line; ↓ selects row 1, ↓ ↓ Enter takes row 3."""
    from engine.take6 import Play as Take6Play
    from engine.take6 import TakeRow
    from lanplay.ui.screens import table_area

    state = TAKE6.new_game(2, TAKE6.options_from_json({}))
    deal = TAKE6.deal_from_json(state, {"dealer": 1, "hands": [list(range(1, 11)), list(range(11, 21))],
                                        "rows": [50, 60, 70, 80]})
    state = TAKE6.apply(TAKE6.apply(TAKE6.start_round(state, deal), Take6Play(0, 1)), Take6Play(1, 11))
    submitted: list[Any] = []
    model = TableModel(TAKE6, ("Ann", "Bob"), 0, "en", submitted.append)
    model.update_state(TAKE6.view(state, 0))
    model.set_decision(TAKE6.legal_moves(TAKE6.view(state, 0), 0))
    table_area(model)
    hand_area(model)
    model.move_row(1)
    model.move_row(1)
    model.move_row(1)
    model.confirm()
    assert submitted == [TakeRow(0, 2)]


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", ["Bots: ▲Ann·bot1, ■Ann·bot2 on ●Ann's laptop, which sees their cards", "▼Bob·bot1 on ◆Bob's laptop,"
                " which sees its cards", "♣Bot 5 on a laptop of its own"]),
        ("nl", ["Bots: ▲Ann·bot1, ■Ann·bot2 op de laptop van ●Ann, die hun kaarten ziet", "▼Bob·bot1 op de laptop"
                " van ◆Bob, die zijn kaarten ziet", "♣Bot 5 op een eigen laptop"]),
    ],
)
def test_the_header_says_which_laptop_runs_each_bot_within_80_columns(lang: str, said: list[str]) -> None:
    """Issue 10, item 3: a laptop that runs a bot can see its cards, so every seat's screen says so,
    one phrase per laptop."""
    from lanplay.ui.screens import bots_lines, header

    model = TableModel(SIXTH_SENSE, ("Ann", "Ann's bot 1", "Ann's bot 2", "Bob", "Bob's bot 1", "Bot 5"), 3, lang)
    assert bots_lines(model, 80) == []  # no bots: the screen is as it was
    model.set_bots([(1, 0), (2, 0), (4, 3), (5, None)])
    lines = bots_lines(model, 80)
    assert 1 <= len(lines) <= 3 and all(len(plain([line])) <= 80 for line in [header(model, 80), *lines])
    text = " ".join(plain(lines).split())
    assert text == " · ".join(said), text
    screen = screen_text(model)
    assert screen.splitlines()[1] == plain(lines).splitlines()[0]  # right under the header


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_every_key_line_fits_the_footer_of_an_80_column_screen(lang: str) -> None:
    """Footers are cut at 78 columns (80 less the margins): a key line longer than that once lost its end
    ("… ? help · q q"). Filled with the longest words each can hold."""
    from lanplay.ui.i18n import MESSAGES, t

    digits = max(t("digits_card", lang), t("digits_place", lang, count=104), key=len)
    choice = "[" + max((t(k, lang) for k in ("next_round", "split_yes", "split_no", "pass_button")), key=len) + "]"
    params = {"digits": digits, "choice": choice, "game": "sixth-sense"}
    lines = {key: t(key, lang, **params) for key in MESSAGES[lang] if "keys" in key}
    assert len(lines) >= 10
    too_long = {key: line for key, line in lines.items() if len(line) > 78}
    assert too_long == {}


@pytest.mark.parametrize("lang", ["en", "nl"])
@pytest.mark.parametrize("question", ["quit_question", "quit_question_net"])
def test_the_leave_dialog_wraps_between_words_inside_its_box(lang: str, question: str) -> None:
    """The dialog's box is QUIT_WIDTH wide: its text is wrapped at spaces there, never split inside a word."""
    from lanplay.ui.i18n import t
    from lanplay.ui.screens import QUIT_WIDTH, plain, quit_lines

    model = TableModel(TAKE6, ("Ann", "Bob"), 0, lang)
    model.quit_question = question
    lines = plain(quit_lines(model)).splitlines()
    assert all(len(line) <= QUIT_WIDTH for line in lines)
    assert " ".join(lines[:-2]).split() == t(question, lang).split()


# --- who is who ----------------------------------------------------------------------------------------------


def test_every_seat_gets_a_short_distinct_name_and_bots_count_in_seat_order() -> None:
    from lanplay.ui.names import SHORT, short_names

    players = ["Alexandra", "Alexandra's bot 3", "Alexandra's bot 1", "Dan", "Dan's bot 1", "Dan",
               "Bartholomew the Great"]  # fmt: skip
    shown = short_names(players)
    assert shown == ("Alexandra", "Alex·bot1", "Alex·bot2", "Dan1", "Dan·bot1", "Dan2", "Bartholo…")
    assert len(set(shown)) == len(shown) and all(len(name) <= SHORT for name in shown)
    assert short_names(["Ann", "Bob"]) == ("Ann", "Bob")  # short names stay as they are


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_a_seat_has_the_same_marker_and_name_on_the_scoreboard_the_trick_and_the_log(lang: str) -> None:
    """Six seats of long and alike names (five of them Alexandra's or Dan's): each shows as one marker and
    short name on the scoreboard, in the trick and in the log, and every line fits 80 columns."""
    from lanplay.ui.screens import scores, table_area

    players = ("Alexandra", "Alexandra's bot 1", "Alexandra's bot 2", "Dan", "Dan's bot 1", "Dan")
    from engine.sixth_sense import HAND_SIZE

    codes = [card.code for card in deck_for(6)]
    size = HAND_SIZE[6]
    hands = [codes[i * size:(i + 1) * size] for i in range(6)]
    state = SIXTH_SENSE.new_game(6, SIXTH_SENSE.options_from_json({}))
    state = SIXTH_SENSE.start_round(state, SIXTH_SENSE.deal_from_json(
        state, {"dealer": 5, "hands": hands, "trump": codes[6 * size]}))
    for seat in range(6):
        state = SIXTH_SENSE.apply(state, Predict(seat, state.round.hands[seat][0]))  # type: ignore[union-attr]
    leader = state.round.leader  # type: ignore[union-attr]
    model = TableModel(SIXTH_SENSE, players, 0, lang)
    before = state
    move = SIXTH_SENSE.legal_moves(state, leader)[0]
    state = SIXTH_SENSE.apply(state, move)
    model.update_state(SIXTH_SENSE.view(state, 0), 1)
    model.add_events(model.words.move_events(model, before, move, state))
    shown = [model.name(seat) for seat in range(6)]
    assert len(set(shown)) == 6 and len({name[0] for name in shown}) == 6  # distinct names, distinct markers
    board = plain(scores(model))
    assert all(name in board for name in shown)
    assert shown[leader] in plain(table_area(model)) and shown[leader] in " ".join(e.text(lang) for e in model.log)
    assert all(len(line) <= 80 for line in screen_text(model).splitlines())


@pytest.mark.parametrize("lang", ["en", "nl"])
@pytest.mark.parametrize("game", [SIXTH_SENSE, TAKE6])
def test_the_rules_dialog_fits_an_80_by_24_screen_with_its_keys(lang: str, game: Any) -> None:
    """The ? dialog (its frame included) shows every summary line and its key line, which names the full
    rules' command, without scrolling."""
    from lanplay.ui.screens import help_lines

    lines = plain(help_lines(TableModel(game, ("Ann", "Bob"), 0, lang))).splitlines()
    assert len(lines) + 2 <= 24 and all(len(line) + 2 <= 80 for line in lines)
    assert f"lanplay rules {game.id}" in lines[-1]


@pytest.mark.parametrize("lang", ["en", "nl"])
def test_a_6_nimmt_turn_names_each_seat_in_the_log_as_the_reveal_line_does(lang: str) -> None:
    """Bots whose full names number them out of seat order ("Ann's bot 2" sits before "Ann's bot 1"): the
    placement lines of a turn name each seat by its screen name, as the "Revealed" line just above them does,
    never by its full name."""
    import random

    players = ("Ann", "Ann's bot 2", "Ann's bot 1", "Bob")
    state = TAKE6.new_game(4, TAKE6.options_from_json({}))
    state = TAKE6.start_round(state, TAKE6.deal_shuffled(state, 0, random.Random(7)))
    model = TableModel(TAKE6, players, 0, lang)
    for seat in range(4):  # T-3.1: each chooses; the last choice reveals them all and places them
        move = TAKE6.legal_moves(state, seat)[-1]  # its highest card: placed in a row
        before, state = state, TAKE6.apply(state, move)
        model.add_events(model.words.move_events(model, before, move, state))
    model.update_state(TAKE6.view(state, 0), 1)
    log = [event.text(lang) for event in model.log]
    placed = [line for line in log if "→" in line]
    assert len(placed) == 4 and all(any(name in line for name in model.names()) for line in placed), log
    assert not any("Ann's bot" in line for line in log), log
