"""6th Sense rules, one or more tests per rule id of shared/rules/sixth-sense.md (S-1 … S-8).

Written from the rules file: each test builds a position from explicit cards (tests/sixth_sense_helpers.py)
and asserts what the rules say must happen. Unless a test says otherwise: the last seat deals, so
seat 0 leads the first trick (S-2.5), and B14 is turned, so Blue is trump (S-2.4).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from sixth_sense_helpers import (
    GAME,
    MoveSpec,
    deck_codes,
    finish_round,
    hand,
    last_trick,
    make_deal,
    new_game,
    one_trick,
    options,
    play,
    predict_all,
    start,
    started,
)

from engine.api import FormatError, IllegalMove, RuleError
from engine.sixth_sense import Card, Peek, Play, Predict, SixthSenseState, Split, round_score

# The tables of the rules file, copied here on purpose (not imported from the engine).
RULE_ROUNDS = {6: 6, 5: 5, 4: 4, 3: 6, 2: 6}  # S-2.2
RULE_HAND_SIZE = {6: 11, 5: 13, 4: 14, 3: 14, 2: 15}  # S-2.3
RULE_BEGINNER = {0: 6, 1: 4, 2: 3, 3: 2, 4: 1, 5: 0, 6: 0, 9: 0}  # S-8.1: distance -> points


def refused(rule: str, state: SixthSenseState, *moves: MoveSpec, match: str | None = None) -> RuleError:
    """Assert that applying `moves` (the last one is the faulty one) is refused naming `rule`."""
    with pytest.raises(IllegalMove) as info:
        play(state, *moves)
    assert info.value.rule == rule, info.value
    if match is not None:
        assert match in info.value.message, info.value.message
    return info.value


def winners(state: SixthSenseState) -> tuple[int | None, ...]:
    assert state.round is not None
    return state.round.trick_winners


# --- S-1 material -----------------------------------------------------------------------


def test_s1_1_deck_has_70_cards_with_one_six_nine_per_colour() -> None:
    """S-1.1/S-1.2: 5 colours x 14 values (0 1 2 3 4 5 6/9 7 8 10 11 12 13 14), no separate 9."""
    deck = deck_codes(3)
    values = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "10", "11", "12", "13", "14"]
    assert sorted(deck) == sorted(c + v for c in "RYGBP" for v in values)
    assert len(set(deck)) == 70
    for bad in ("R9", "X5", "R15", "r5", "", 5):
        with pytest.raises(FormatError):
            Card.parse(bad)


@pytest.mark.parametrize("players", [1, 7])
def test_s1_3_two_to_six_players(players: int) -> None:
    """S-1.3: 2-6 players."""
    with pytest.raises(IllegalMove) as info:
        new_game(players)
    assert info.value.rule == "S-1.3"


# --- S-2 set-up -------------------------------------------------------------------------


def test_s2_1_two_player_deck_has_no_purple() -> None:
    """S-2.1 [decision Purple]: with 2 players the 14 Purple cards are removed, 56 cards remain."""
    state = new_game(2)
    deck = GAME.layout(state, 0).deck
    assert len(deck) == 56 and len(set(deck)) == 56
    assert not [c for c in deck if c.startswith("P")]
    assert len(GAME.layout(new_game(3), 0).deck) == 70


def test_s2_1_two_player_deal_with_a_purple_card_is_refused() -> None:
    """S-2.1: a Purple card in a 2-player hand, or as the turned card, is not a card of this game."""
    deal = make_deal(2, {0: ["P5"]})
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(new_game(2), GAME.deal_from_json(new_game(2), deal))
    assert info.value.rule == "S-2.1"
    deal = make_deal(2, trump="P7")
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(new_game(2), GAME.deal_from_json(new_game(2), deal))
    assert info.value.rule == "S-2.1"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_s2_3_hand_sizes(players: int) -> None:
    """S-2.3: 6 players 11 cards, 5 -> 13, 4 -> 14, 3 -> 14, 2 -> 15; the rest is stock (S-2.4)."""
    state = new_game(players)
    layout = GAME.layout(state, 0)
    assert [len(h) for h in layout.hands] == [RULE_HAND_SIZE[players]] * players
    assert len(layout.table) == 1  # the turned card
    dealt = {p for h in layout.hands for p in h} | set(layout.table)
    assert len(dealt) == players * RULE_HAND_SIZE[players] + 1 <= len(layout.deck)
    state = start(players)
    assert state.round is not None
    assert state.round.hand_sizes == (RULE_HAND_SIZE[players],) * players
    assert all(len(hand(state, s)) == RULE_HAND_SIZE[players] for s in range(players))


@pytest.mark.parametrize("players", [2, 4, 6])
def test_s2_3_deal_with_wrong_hand_size_is_refused(players: int) -> None:
    """S-2.3: every hand holds exactly the rule's number of cards."""
    state = new_game(players)
    short = make_deal(players)
    short["hands"][1].pop()  # type: ignore[index]
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_json(state, short))
    assert info.value.rule == "S-2.3"
    long = make_deal(players)
    dealt = {c for h in long["hands"] for c in h} | {long["trump"]}  # type: ignore[attr-defined]
    long["hands"][0].append(next(c for c in deck_codes(players) if c not in dealt))  # type: ignore[index]
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_json(state, long))
    assert info.value.rule == "S-2.3"


def test_s2_3_deal_with_a_card_twice_is_refused() -> None:
    """S-2.3: a deal deals each card of the deck at most once."""
    state = new_game(4)
    deal = make_deal(4)
    deal["hands"][2][0] = deal["hands"][1][0]  # type: ignore[index]
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_json(state, deal))
    assert info.value.rule == "S-2.3"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_s2_2_number_of_rounds(players: int) -> None:
    """S-2.2: 6 players play 6 rounds, 5 -> 5, 4 -> 4, 3 -> 6, 2 -> 6; then the game is over."""
    rng = random.Random(players)
    state = new_game(players)
    rounds = 0
    while GAME.expected(state).phase == "deal":
        dealer = GAME.expected_dealer(state)
        state = start(players, dealer=dealer if dealer is not None else 0, state=state)
        state = finish_round(state, rng)
        rounds += 1
        assert rounds <= RULE_ROUNDS[players]
    assert rounds == RULE_ROUNDS[players]
    assert GAME.expected(state).phase == "over"
    assert GAME.winners(state) is not None


def test_s2_4_turned_card_sets_trump() -> None:
    """S-2.4: the colour of the turned card is trump: a low trump beats the led colour's 14."""
    moves = ["0:R14", "1:G1", "2:R2"]
    assert winners(one_trick(3, moves, voids={1: "R"}, trump="G7")) == (1,)
    # the same trick with Yellow turned: Green is an ordinary off colour and never wins (S-4.5)
    assert winners(one_trick(3, moves, voids={1: "R"}, trump="Y7")) == (0,)


def test_s2_4_turned_card_is_not_in_a_hand() -> None:
    """S-2.4: the turned card is the top of the stock, not a card of any hand."""
    state = new_game(3)
    deal = make_deal(3, {1: ["G7"]}, trump="B14")
    deal["trump"] = "G7"
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_json(state, deal))
    assert info.value.rule == "S-2.4"


def test_s2_5_first_leader_is_left_of_dealer() -> None:
    """S-2.5: the player left of the dealer (next seat index, wrapping) leads the first trick."""
    for dealer, leader in ((0, 1), (2, 3), (3, 0)):
        state = predict_all(start(4, dealer=dealer))
        expected = GAME.expected(state)
        assert (expected.kind, expected.seats) == ("play", (leader,))


def test_s2_5_dealer_rotates_left_each_round() -> None:
    """S-2.5: any first dealer; then the dealer moves one seat left (wrapping) each round."""
    rng = random.Random(5)
    state = new_game(4)
    assert GAME.expected_dealer(state) is None  # the first dealer comes from the joint seed
    dealers = []
    dealer = 2
    for _ in range(4):
        state = start(4, dealer=dealer, state=state)
        assert state.round is not None
        dealers.append(state.round.dealer)
        state = finish_round(state, rng)
        if GAME.expected(state).phase == "over":
            break
        dealer = (dealer + 1) % 4
        assert GAME.expected_dealer(state) == dealer
    assert dealers == [2, 3, 0, 1]


def test_s2_5_wrong_dealer_is_refused() -> None:
    """S-2.5: after the first round only the next seat to the left may deal."""
    state = finish_round(start(4, dealer=1), random.Random(1))
    for dealer in (0, 1, 3):
        with pytest.raises(IllegalMove) as info:
            start(4, dealer=dealer, state=state)
        assert info.value.rule == "S-2.5"
    start(4, dealer=2, state=state)


# --- S-3 prediction ---------------------------------------------------------------------


def test_s3_2_any_card_may_be_the_prediction() -> None:
    """S-3.2: every card of the hand is a legal prediction card."""
    state = start(4)
    assert {m.card.code for m in GAME.legal_moves(state, 2) if isinstance(m, Predict) and m.card} == set(hand(state, 2))
    expected = GAME.expected(state)
    assert (expected.kind, expected.seats) == ("predict", (0, 1, 2, 3))


def test_s3_2_prediction_card_leaves_the_hand() -> None:
    """S-3.2: the prediction card leaves the hand; the round is played with one card fewer."""
    state = start(4, {1: ["Y7"]})
    state = play(state, "1?Y7")
    assert "Y7" not in hand(state, 1)
    assert state.round is not None and state.round.hand_sizes == (14, 13, 14, 14)
    for seat in (0, 2, 3):
        state = play(state, f"{seat}?{hand(state, seat)[0]}")
    state = finish_round(state, random.Random(3))
    assert state.round is not None
    assert len(state.round.trick_winners) == 13  # 14 cards dealt, one predicted
    assert "Y7" not in [c.code for c in state.round.played]


def test_s3_2_prediction_must_come_from_the_hand() -> None:
    """S-3.2: a prediction card is a card of the predicting player's hand."""
    state = start(4, {1: ["Y7"]})
    refused("S-3.2", state, "0?Y7")


def test_s3_1_predictions_in_any_order_and_only_once() -> None:
    """S-3.1: predictions are simultaneous (any order), one per player."""
    state = start(3)
    state = play(state, f"2?{hand(state, 2)[0]}", f"0?{hand(state, 0)[0]}")
    assert GAME.expected(state).seats == (1,)
    refused("S-3.1", state, f"0?{hand(state, 0)[0]}")


def test_s3_1_no_play_before_every_prediction() -> None:
    """S-3.1: the first card is played only after every player has chosen a prediction card."""
    state = start(3)
    state = play(state, f"0?{hand(state, 0)[-1]}", f"1?{hand(state, 1)[-1]}")
    refused("S-3.1", state, f"0:{hand(state, 0)[0]}")


def test_s3_1_no_prediction_after_play_began() -> None:
    """S-3.1: predictions are all made before the first play; none can come later."""
    state = started(3, {0: ["R5"], 1: ["R6"]})
    state = play(state, "0:R5")
    refused("S-3.1", state, f"1?{hand(state, 1)[0]}")


# --- S-4 playing tricks -----------------------------------------------------------------


def test_s4_1_play_is_clockwise_from_the_leader() -> None:
    """S-4.1: the leader plays, then each next seat in increasing index (wrapping); others wait."""
    state = started(4, {0: ["R5"], 1: ["R7"], 2: ["R8"], 3: ["R10"]}, dealer=1)  # seat 2 leads
    assert GAME.expected(state).seats == (2,)
    refused("S-4.1", state, "0:R5")
    state = play(state, "2:R8")
    assert GAME.expected(state).seats == (3,)
    refused("S-4.1", state, "1:R7")
    state = play(state, "3:R10", "0:R5")
    assert GAME.expected(state).seats == (1,)


def test_s4_1_card_must_be_in_hand() -> None:
    """S-4.1: a player plays a card of their own hand."""
    state = started(3, {0: ["R5"], 1: ["R7"]})
    with pytest.raises(IllegalMove) as info:
        play(state, "0:R7")
    assert "R7" in info.value.message


def test_s4_2_must_follow_the_led_colour() -> None:
    """S-4.2: a player holding the led colour must play it; the refusal names the held card."""
    state = started(3, {0: ["Y5"], 1: ["Y11", "G3"]})
    state = play(state, "0:Y5")
    refused("S-4.2", state, "1:G3", match="Y11")
    moves = GAME.legal_moves(state, 1)
    assert moves and all(isinstance(m, Play) and m.card.colour == "Y" for m in moves)
    play(state, "1:Y11")


def test_s4_2_a_void_player_may_play_any_card_trump_included() -> None:
    """S-4.2: without the led colour any card may be played, trump included."""
    state = started(3, {0: ["Y5"], 1: ["B3", "G3"]}, voids={1: "Y"})
    state = play(state, "0:Y5")
    colours = {m.card.colour for m in GAME.legal_moves(state, 1) if isinstance(m, Play)}
    assert {"B", "G"} <= colours
    assert winners(play(state, "1:B3", f"2:{next(c for c in hand(state, 2) if c[0] == 'Y')}")) == (1,)


def test_s4_2_a_zero_used_to_block_must_follow_suit() -> None:
    """S-4.2/S-6.1: a 0 used to block must itself be a legal card: a player holding the led colour
    may not block with a 0 of another colour, but may with the led colour's 0."""
    state = started(3, {0: ["Y5"], 1: ["G0", "Y0", "Y8"]})
    state = play(state, "0:Y5")
    refused("S-4.2", state, "1:G0/Y5")
    assert all(m.card.code != "G0" for m in GAME.legal_moves(state, 1) if isinstance(m, Play))
    play(state, "1:Y0/Y5")


def test_s4_5_highest_trump_wins() -> None:
    """S-4.5: with trump in the trick the highest trump wins."""
    state = one_trick(4, ["0:R14", "1:B2", "2:B5", "3:R13"], voids={1: "R", 2: "R"})
    assert winners(state) == (2,)


def test_s4_5_highest_led_colour_wins_without_trump() -> None:
    """S-4.5: with no trump in the trick the highest card of the led colour wins."""
    state = one_trick(4, ["0:R5", "1:R11", "2:R2", "3:R10"])
    assert winners(state) == (1,)


def test_s4_5_off_colour_never_wins() -> None:
    """S-4.5: cards of other colours never win, whatever their number."""
    state = one_trick(3, ["0:R1", "1:Y14", "2:G14"], voids={1: "R", 2: "R"})
    assert winners(state) == (0,)


def test_s4_6_winner_counts_the_trick_and_leads_next() -> None:
    """S-4.6: the winner takes the trick (public count) and leads the next one."""
    state = one_trick(3, ["0:R5", "1:R11", "2:R2"])
    assert state.round is not None
    assert state.round.tricks == (0, 1, 0)
    assert GAME.expected(state).seats == (1,)
    assert GAME.public_state(state)["round"]["tricks"] == [0, 1, 0]  # type: ignore[index]


# --- S-6.2 reversal ---------------------------------------------------------------------


def test_s6_2_one_four_makes_the_lowest_led_card_win() -> None:
    """S-6.2: one counting 4: the lowest card of the lowest class present wins (here: led colour)."""
    state = one_trick(3, ["0:R4", "1:R2", "2:R10"])
    assert winners(state) == (1,)


def test_s6_2_reversal_won_by_an_off_colour_card() -> None:
    """S-6.2: under reversal an off-colour card, if any counts, wins, even a high one."""
    state = one_trick(3, ["0:R4", "1:R1", "2:Y13"], voids={2: "R"})
    assert winners(state) == (2,)


def test_s6_2_reversal_prefers_led_colour_over_trump() -> None:
    """S-6.2: trump stays the highest class: without off-colour cards the lowest led card wins, not a trump."""
    state = one_trick(3, ["0:R4", "1:B1", "2:R10"], voids={1: "R"})
    assert winners(state) == (0,)


def test_s6_2_reversal_with_only_trump_lowest_trump_wins() -> None:
    """S-6.2: when trump is led and only trump counts, the lowest trump wins."""
    state = one_trick(3, ["0:B4", "1:B10", "2:B2"], trump="B14")
    assert winners(state) == (2,)


def test_s6_2_equally_low_off_colour_cards_last_played_wins() -> None:
    """S-6.2: off-colour cards of different colours with the same number are equally low: the last played wins."""
    state = one_trick(4, ["0:R4", "1:Y3", "2:G3", "3:R10"], voids={1: "R", 2: "R"})
    assert winners(state) == (2,)
    state = one_trick(4, ["0:R4", "1:G3", "2:R10", "3:Y3"], voids={1: "R", 3: "R"})
    assert winners(state) == (3,)


def test_s6_2_two_fours_cancel() -> None:
    """S-6.2: two counting 4s cancel: the highest led card wins again."""
    state = one_trick(3, ["0:R4", "1:Y4", "2:R10"], voids={1: "R"})
    assert winners(state) == (2,)


def test_s6_2_three_fours_reverse_again() -> None:
    """S-6.2 [decision]: three counting 4s reverse: the off-colour 4 wins, not the trump 4."""
    state = one_trick(4, ["0:R4", "1:Y4", "2:B4", "3:R10"], voids={1: "R", 2: "R"})
    assert winners(state) == (1,)


def test_s6_2_reversal_in_beginner_with_trump_colour_plain() -> None:
    """S-6.2/S-8.1: in beginner there is no trump: a Blue card is just off colour and wins a reversal."""
    state = one_trick(3, ["0:R4", "1:B1", "2:R10"], voids={1: "R"}, beginner=True)
    assert winners(state) == (1,)


# --- S-6.1 block and S-5 --------------------------------------------------------------


def test_s6_1_zero_played_plainly_is_value_zero() -> None:
    """S-6.1: a 0 may be played as an ordinary card of value 0 (lowest)."""
    state = one_trick(3, ["0:R5", "1:R0", "2:R2"])
    assert winners(state) == (0,)


def test_s6_1_blocked_card_and_blocker_do_not_count() -> None:
    """S-6.1/S-5: a blocked card never wins; the 0 that blocks does not count either."""
    state = one_trick(4, ["0:R5", "1:R14", "2:R0/R14", "3:R7"])
    assert winners(state) == (3,)


def test_s6_1_blocking_the_led_card_next_card_sets_the_led_colour() -> None:
    """S-6.1: if the led card is blocked, the next card played after the block sets the led colour;
    the player of that card is free, the players after it follow that colour."""
    state = started(4, {0: ["R14"], 1: ["R0"], 2: ["Y3", "R3"], 3: ["Y10", "R10"]})
    state = play(state, "0:R14", "1:R0/R14")
    free = {m.card.code for m in GAME.legal_moves(state, 2) if isinstance(m, Play)}
    assert {"Y3", "R3"} <= free  # seat 2 holds Red yet may play Yellow
    state = play(state, "2:Y3")
    refused("S-4.2", state, "3:R10", match="Y10")
    state = play(state, "3:Y10")
    assert winners(state) == (3,)


def test_s6_1_block_as_last_card_earliest_counting_card_sets_led_colour() -> None:
    """S-6.1 [decision]: the led card blocked by the last card of the trick: the earliest card still
    counting sets the led colour (here Yellow, so Y14 beats R3)."""
    state = one_trick(4, ["0:R10", "1:Y14", "2:R3", "3:R0/R10"], voids={1: "R"})
    assert winners(state) == (1,)


def test_s6_1_blocking_a_four_cancels_the_reversal() -> None:
    """S-6.1/S-5: a blocked 4 does not count, so no reversal happens."""
    # without the block the R4 would reverse and the lowest led card would win
    assert winners(one_trick(4, ["0:R5", "1:R4", "2:R10", "3:R2"])) == (3,)
    state = one_trick(4, ["0:R5", "1:R4", "2:R10", "3:R0/R4"])
    assert winners(state) == (2,)
    # the led 4 blocked by the last card: no reversal either
    assert winners(one_trick(4, ["0:R4", "1:R2", "2:R10", "3:R0/R4"])) == (2,)


def test_s6_1_blocking_a_twelve_owes_no_split() -> None:
    """S-6.1/S-5/S-6.5: a blocked 12 does not count: its trick cannot be split."""
    state = one_trick(4, ["0:R12", "1:R3", "2:R0/R12", "3:R5"])
    assert winners(state) == (3,)
    assert state.round is not None and state.round.split_owed is None
    expected = GAME.expected(state)
    assert (expected.kind, expected.seats) == ("play", (3,))
    refused("S-6.5", state, "3:split")


def test_s6_1_may_not_lead_with_a_block() -> None:
    """S-6.1: a player may not lead with a block."""
    state = started(3, {0: ["R0", "R5"]})
    refused("S-6.1", state, {"seat": 0, "play": "R0", "block": "R5"})
    assert all(m.block is None for m in GAME.legal_moves(state, 0) if isinstance(m, Play))


def test_s6_1_at_most_one_block_per_trick() -> None:
    """S-6.1: at most one block per trick."""
    state = started(4, {0: ["R5"], 1: ["R0"], 2: ["Y0"], 3: ["Y2"]}, voids={2: "R"})
    state = play(state, "0:R5", "1:R0/R5")
    refused("S-6.1", state, "2:Y0/R0")
    assert all(m.block is None for m in GAME.legal_moves(state, 2) if isinstance(m, Play))


def test_s6_1_only_a_zero_blocks_a_card_of_this_trick() -> None:
    """S-6.1: only a 0 blocks, and only a card already played in this trick."""
    state = started(3, {0: ["R5"], 1: ["R7", "R0"]})
    state = play(state, "0:R5")
    refused("S-6.1", state, "1:R7/R5")
    refused("S-6.1", state, "1:R0/R3")


def test_s6_1_two_player_block_nobody_wins() -> None:
    """S-6.1: with 2 players a block removes every card: nobody wins (trick_winners gets null);
    first trick: the same leader again; later: the winner of the previous trick leads."""
    state = started(2, {0: ["R10", "R5", "Y0"], 1: ["R0", "R7", "Y5"]}, dealer=1)
    state = play(state, "0:R10", "1:R0/R10")
    assert state.round is not None
    assert state.round.trick_winners == (None,) and state.round.tricks == (0, 0)
    assert GAME.expected(state).seats == (0,)
    state = play(state, "0:R5", "1:R7")
    assert winners(state) == (None, 1)
    state = play(state, "1:Y5", "0:Y0/Y5")
    assert winners(state) == (None, 1, None)
    assert GAME.expected(state).seats == (1,)
    assert GAME.round_report(state)["trick_winners"] == [None, 1, None]
    assert state.round is not None and state.round.tricks == (0, 1)


def test_s6_1_two_player_block_of_a_twelve_or_eight_has_no_effect() -> None:
    """S-6.1: the 2-player block cancels the led card's action: no split, no peek."""
    state = one_trick(2, ["0:R12", "1:R0/R12"], dealer=1)
    assert state.round is not None and state.round.split_owed is None and winners(state) == (None,)
    state = one_trick(2, ["0:R8", "1:R0/R8"], dealer=1)
    assert state.round is not None and state.round.peeks == ()


# --- S-6.3 the 6/9 card -----------------------------------------------------------------


def test_s6_3_six_nine_must_be_declared() -> None:
    """S-6.3: the 6/9 card is declared 6 or 9 when played; other cards are never declared."""
    state = started(3, {0: ["R6", "R5"]})
    refused("S-6.3", state, "0:R6")
    refused("S-6.3", state, "0:R6=7")
    refused("S-6.3", state, "0:R5=5")
    assert {m.as_value for m in GAME.legal_moves(state, 0) if isinstance(m, Play) and m.card.code == "R6"} == {6, 9}


@pytest.mark.parametrize(("declared", "winner"), [(9, 0), (6, 1)])
def test_s6_3_declared_value_counts(declared: int, winner: int) -> None:
    """S-6.3/S-4.4: the 6/9 card counts as its declared value (9 beats 8, 6 does not)."""
    state = one_trick(3, [f"0:R6={declared}", "1:R8", "2:R7"])
    assert winners(state) == (winner,)


# --- S-6.4 peek -------------------------------------------------------------------------


def test_s6_4_led_eight_lets_the_leader_peek_at_the_winner() -> None:
    """S-6.4: the leader of an 8 may look at the trick winner's prediction card."""
    state = one_trick(3, ["0:R8", "1:R10", "2:R2"])
    assert winners(state) == (1,)
    assert state.round is not None and state.round.peeks == (Peek(0, 0, 1),)


def test_s6_4_no_peek_when_the_leader_wins() -> None:
    """S-6.4: nothing happens when the leader wins the trick."""
    state = one_trick(3, ["0:R8", "1:R3", "2:R2"])
    assert winners(state) == (0,)
    assert state.round is not None and state.round.peeks == ()


def test_s6_4_no_peek_when_the_eight_is_blocked() -> None:
    """S-6.4/S-6.1: a blocked led 8 does not count at the end of the trick: no peek."""
    state = one_trick(4, ["0:R8", "1:R0/R8", "2:R10", "3:R3"])
    assert winners(state) == (2,)
    assert state.round is not None and state.round.peeks == ()


def test_s6_4_no_peek_when_the_eight_is_not_led() -> None:
    """S-6.4: only an 8 that leads the trick gives a peek (the Dutch text: "leads")."""
    state = one_trick(3, ["0:R5", "1:R8", "2:R10"])
    assert winners(state) == (2,)
    assert state.round is not None and state.round.peeks == ()


def test_s6_4_peek_in_a_later_trick_names_that_trick() -> None:
    """S-6.4: the peek belongs to the trick the 8 led."""
    state = one_trick(3, ["0:R5", "1:R11", "2:R2"], extra={1: ["Y8"], 2: ["Y10"], 0: ["Y1"]})
    state = play(state, "1:Y8", "2:Y10", "0:Y1")
    assert state.round is not None and state.round.peeks == (Peek(1, 1, 2),)


# --- S-6.5 double trick -----------------------------------------------------------------


def test_s6_5_split_counts_the_trick_twice() -> None:
    """S-6.5: a counting 12 lets the winner split the trick: two tricks counted, one trick played."""
    state = one_trick(3, ["0:R12", "1:R14", "2:R2"])
    expected = GAME.expected(state)
    assert (expected.kind, expected.seats) == ("split", (1,))
    split = play(state, "1:split")
    assert split.round is not None
    assert split.round.tricks == (0, 2, 0) and split.round.trick_winners == (1,)
    assert GAME.expected(split).seats == (1,)  # the winner still leads the next trick
    kept = play(state, "1:nosplit")
    assert kept.round is not None and kept.round.tricks == (0, 1, 0)


def test_s6_5_an_off_colour_twelve_also_counts() -> None:
    """S-6.5: any counting 12 (here an off-colour one that cannot win) makes the trick splittable."""
    state = one_trick(3, ["0:R5", "1:Y12", "2:R7"], voids={1: "R"})
    assert winners(state) == (2,)
    assert GAME.expected(state).kind == "split" and GAME.expected(state).seats == (2,)


def test_s6_5_split_only_from_the_winner() -> None:
    """S-6.5: only the trick's winner decides the split."""
    state = one_trick(3, ["0:R12", "1:R14", "2:R2"])
    refused("S-6.5", state, "0:split")
    refused("S-6.5", state, "2:nosplit")


def test_s6_5_no_move_until_the_split_is_decided() -> None:
    """S-6.5: the winner decides right after the trick: no card is played before."""
    state = one_trick(3, ["0:R12", "1:R14", "2:R2"], extra={1: ["Y5"]})
    refused("S-6.5", state, "1:Y5")
    refused("S-6.5", state, "2:" + hand(state, 2)[0])


def test_s6_5_split_of_the_last_trick_is_scored() -> None:
    """S-6.5/S-7.1: the split of the round's last trick counts in the score."""
    state = last_trick(3, ["R12", "R14", "R2"], ["R3", "G5", "Y1"], [1, 4, 1])
    state = play(state, "0:R12", "1:R14", "2:R2")
    assert state.round is not None and state.round.points is None
    state = play(state, "1:split")
    assert state.round is not None and state.round.tricks == (1, 6, 1)
    assert state.round.points == (-2, -1, 1)


# --- S-7 scoring and end ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "tricks", "points"),
    [
        ("R4", 6, -2),  # S-7.3 examples
        ("R4", 2, -2),
        ("R4", 4, 4),
        ("R6", 7, -1),
        ("R6", 6, 6),  # S-7.2: the 6/9 hit scores the number hit
        ("R6", 9, 9),
        ("R6", 8, -1),
        ("R6", 3, -3),
        ("R6", 11, -2),
        ("R0", 0, 0),  # a hit 0 scores 0
        ("R0", 3, -3),
        ("Y14", 0, -14),  # totals may go negative
        ("P12", 12, 12),
    ],
)
def test_s7_2_s7_3_scoring(prediction: str, tricks: int, points: int) -> None:
    """S-7.2/S-7.3: hit -> the prediction's number; miss -> minus the difference (6/9: to the nearer)."""
    assert round_score(Card.parse(prediction), tricks, beginner=False) == points


@pytest.mark.parametrize(
    ("prediction", "before", "points"),
    [("R4", 5, -2), ("R4", 1, -2), ("R4", 3, 4), ("R6", 6, -1), ("R6", 5, 6), ("R6", 8, 9), ("R0", -1, 0)],
)
def test_s7_3_scoring_at_the_end_of_a_round(prediction: str, before: int, points: int) -> None:
    """S-7.1-S-7.3 through play: seat 1 wins the last trick (or, before=-1, seat 0 does and seat 1
    stays at 0 tricks) and is scored with its prediction card."""
    wins_last = before >= 0
    tricks = [1, max(before, 0), 2]
    state = last_trick(3, ["R5", "R11" if wins_last else "R1", "R2"], ["G1", prediction, "Y2"], tricks)
    state = play(state, "0:R5", f"1:{'R11' if wins_last else 'R1'}", "2:R2")
    assert state.round is not None and state.round.points is not None
    assert state.round.points[1] == points
    assert GAME.totals(state)[1] == points
    assert GAME.round_report(state)["points"] == list(state.round.points)


def test_s7_4_winners_share_equal_highest_totals() -> None:
    """S-7.4: after the last round the highest total wins; equal highest totals share the win."""
    state = last_trick(3, ["R5", "R11", "R2"], ["R4", "G4", "Y2"], [4, 3, 1])
    # white box: make this the last (6th, S-2.2) round of the 3-player game, with totals so far
    state = replace(state, rounds_started=6, totals=(3, 3, 7), round_points=((3, 3, 7),) + ((0, 0, 0),) * 4)
    state = play(state, "0:R5", "1:R11", "2:R2")
    assert state.round is not None and state.round.points == (4, 4, -1)
    assert GAME.totals(state) == (7, 7, 6)
    assert GAME.expected(state).phase == "over"
    assert GAME.winners(state) == (0, 1)


def test_s7_4_no_winners_before_the_end() -> None:
    """S-7.4: the winners are known only after the last round."""
    state = finish_round(start(4), random.Random(2))
    assert GAME.expected(state).phase == "deal"
    assert GAME.winners(state) is None


# --- S-8 variants -------------------------------------------------------------------------


@pytest.mark.parametrize("distance", sorted(RULE_BEGINNER))
def test_s8_1_beginner_scoring_table(distance: int) -> None:
    """S-8.1: points by distance: 0 -> 6, 1 -> 4, 2 -> 3, 3 -> 2, 4 -> 1, 5 or more -> 0."""
    assert round_score(Card.parse("R5"), 5 + distance, beginner=True) == RULE_BEGINNER[distance]
    if distance <= 5:
        assert round_score(Card.parse("R5"), 5 - distance, beginner=True) == RULE_BEGINNER[distance]
    assert round_score(Card.parse("R0"), distance, beginner=True) == RULE_BEGINNER[distance]


def test_s8_1_beginner_six_nine_distance_to_the_nearer() -> None:
    """S-8.1/S-3.3: the 6/9 prediction's distance is to the nearer of 6 and 9."""
    assert round_score(Card.parse("G6"), 6, beginner=True) == 6
    assert round_score(Card.parse("G6"), 9, beginner=True) == 6
    assert round_score(Card.parse("G6"), 7, beginner=True) == 4
    assert round_score(Card.parse("G6"), 13, beginner=True) == 1


def test_s8_1_beginner_scores_at_the_end_of_a_round() -> None:
    """S-8.1: beginner scoring is applied when the round is scored."""
    state = last_trick(3, ["R5", "R11", "R2"], ["R1", "R3", "Y10"], [0, 5, 3], trump=None, beginner=True)
    state = play(state, "0:R5", "1:R11", "2:R2")
    assert state.round is not None and state.round.points == (4, 2, 0)  # distances 1, 3, 7


def test_s8_1_beginner_has_no_trump() -> None:
    """S-8.1: no card is turned; a deal with a turned card is refused; no colour beats the led colour."""
    state = new_game(3, beginner=True)
    layout = GAME.layout(state, 0)
    assert layout.table == () and layout.late_table == ()
    with pytest.raises(RuleError):
        GAME.start_round(state, GAME.deal_from_json(state, make_deal(3, trump="B14")))
    state = one_trick(3, ["0:R2", "1:B14", "2:G14"], voids={1: "R", 2: "R"}, beginner=True)
    assert winners(state) == (0,)


def test_s8_1_beginner_still_follows_suit() -> None:
    """S-8.1: follow suit still applies in beginner."""
    state = started(3, {0: ["R2"], 1: ["R7", "B14"]}, trump=None, beginner=True)
    state = play(state, "0:R2")
    refused("S-4.2", state, "1:B14", match="R7")


def test_s8_2_target_score_ends_the_game_at_the_end_of_a_round() -> None:
    """S-8.2: with a target the game ends after the round in which someone reaches it, however many
    rounds that takes; the highest total wins."""
    state = last_trick(3, ["R5", "R11", "R2"], ["R3", "G4", "Y2"], [2, 3, 1], target=4)
    state = play(state, "0:R5", "1:R11", "2:R2")
    assert GAME.totals(state) == (-1, 4, -1)
    assert GAME.expected(state).phase == "over" and GAME.winners(state) == (1,)
    # not reached: the game goes on, even past the S-2.2 number of rounds
    state = last_trick(3, ["R5", "R11", "R2"], ["R3", "G4", "Y2"], [2, 3, 1], target=5)
    state = replace(state, rounds_started=9)  # white box: the 9th round, past S-2.2's 6
    state = play(state, "0:R5", "1:R11", "2:R2")
    assert GAME.expected(state).phase == "deal" and GAME.winners(state) is None


def test_s8_3_late_trump_hidden_in_views_until_all_predicted() -> None:
    """S-8.3: the trump card is turned only after every player has predicted."""
    state = start(3, {0: ["R5"]}, trump="G7", late_trump=True)
    layout = GAME.layout(state, 0)
    assert layout.table == () and len(layout.late_table) == 1
    for seat in range(3):
        assert GAME.view(state, seat).round.trump is None  # type: ignore[union-attr]
    assert GAME.public_state(state)["round"]["trump"] is None  # type: ignore[index]
    state = play(state, "0?R5", f"1?{hand(state, 1)[0]}")
    assert GAME.view(state, 2).round.trump is None  # type: ignore[union-attr]
    state = play(state, f"2?{hand(state, 2)[0]}")
    for seat in range(3):
        assert GAME.view(state, seat).round.trump == Card.parse("G7")  # type: ignore[union-attr]
    assert GAME.public_state(state)["round"]["trump"] == "G7"  # type: ignore[index]


def test_s8_3_late_trump_partial_knowledge_reveal() -> None:
    """S-8.3: a peer's view waits in phase "reveal" once all have predicted; `reveal` turns the trump."""
    full = start(3, {0: ["R5", "R7"]}, trump="G7", late_trump=True)
    view = GAME.view(full, 0)
    view = play(view, "0?R5", Predict(1, None), Predict(2, None))
    assert GAME.expected(view).phase == "reveal"
    with pytest.raises(IllegalMove):
        play(view, "0:R7")
    with pytest.raises(IllegalMove):  # the turned card cannot be a card of this peer's own hand
        GAME.reveal(view, ["R7"])
    view = GAME.reveal(view, ["G7"])
    assert view.round is not None and view.round.trump == Card.parse("G7")
    expected = GAME.expected(view)
    assert (expected.phase, expected.kind, expected.seats) == ("move", "play", (0,))
    with pytest.raises(IllegalMove):
        GAME.reveal(view, ["G7"])


def test_s8_3_late_trump_predictions_before_trump_is_known() -> None:
    """S-8.3: with late trump the prediction is chosen before trump is turned (full knowledge plays on)."""
    state = start(3, trump="G7", late_trump=True)
    assert GAME.expected(state).kind == "predict"
    state = predict_all(state)
    assert GAME.expected(state).kind == "play"


@pytest.mark.parametrize("raw", [{"beginner": 1}, {"target": 0}, {"target": "10"}, {"late": True}])
def test_s8_options_are_validated(raw: dict[str, object]) -> None:
    """S-8: options are beginner (bool), target (positive number or null), late_trump (bool)."""
    with pytest.raises(FormatError):
        GAME.options_from_json(raw)
    assert options(True, 15, True) == GAME.options_from_json({"beginner": True, "target": 15, "late_trump": True})


# --- partial knowledge (a peer's view) ----------------------------------------------------


def _view_after_first_card(viewer: int = 0):  # type: ignore[no-untyped-def]
    """4 players; seat 0 leads R5, then seat 1 (no Red) plays Y3; viewed by `viewer`."""
    full = started(4, {0: ["R5", "G5"], 1: ["Y3", "G2"], 2: ["R7", "R13"], 3: ["R8", "G13"]}, voids={1: "R"})
    view = GAME.view(full, viewer)
    return play(full, "0:R5", "1:Y3"), play(view, "0:R5", "1:Y3")


def test_partial_view_hides_other_hands_and_predictions() -> None:
    """S-3.4: a seat's view knows its own hand and prediction only."""
    full = started(3, {0: ["R5"]})
    view = GAME.view(full, 0)
    assert view.round is not None and full.round is not None
    assert view.round.hands[0] == full.round.hands[0] and view.round.hands[1:] == (None, None)
    assert view.round.predictions[0] is not None and view.round.predictions[1:] == (None, None)
    assert view.round.hand_sizes == full.round.hand_sizes


def test_partial_accepts_hidden_predictions_of_other_seats() -> None:
    """S-3.1/S-3.4: other seats' predictions arrive hidden; the own one needs its card."""
    view = GAME.view(start(3), 1)
    view = play(view, Predict(0, None), Predict(2, None))
    assert GAME.expected(view).seats == (1,)
    with pytest.raises(IllegalMove):
        play(view, Predict(1, None))
    view = play(view, f"1?{hand(view, 1)[0]}")
    assert GAME.expected(view).kind == "play"


def test_partial_refuses_a_card_already_played() -> None:
    """S-4.1: a card already played cannot be played again, even from an unknown hand."""
    _, view = _view_after_first_card(0)
    with pytest.raises(IllegalMove):
        play(view, "2:R5")
    with pytest.raises(IllegalMove):
        play(view, "2:Y3")


def test_partial_refuses_a_card_in_the_peers_own_hand() -> None:
    """S-4.1: another seat cannot play a card this peer holds (or chose as its prediction)."""
    _, view = _view_after_first_card(0)
    with pytest.raises(IllegalMove):
        play(view, "2:G5")
    assert view.round is not None
    own_prediction = view.round.predictions[0]
    assert own_prediction is not None
    with pytest.raises(IllegalMove):
        play(view, f"2:{own_prediction.code}")


def test_partial_refuses_a_move_out_of_turn() -> None:
    """S-4.1: out of turn is refused with partial knowledge too."""
    _, view = _view_after_first_card(0)
    refused("S-4.1", view, "3:R8")


def test_partial_refuses_a_colour_the_seat_showed_it_lacks() -> None:
    """S-4.2: a seat that did not follow Red has shown it holds no Red: it cannot play Red later."""
    full, view = _view_after_first_card(0)
    full = play(full, "2:R7", "3:R8")
    view = play(view, "2:R7", "3:R8")
    assert winners(view) == winners(full) == (3,)
    # seat 3 leads Green; seat 1 later tries a Red card (unknown hand, but it showed no Red)
    view = play(view, "3:G13", "0:G5")
    refused("S-4.2", view, "1:R13", match="R")


def test_partial_round_ends_unsettled() -> None:
    """S-7.1: a peer cannot score with hidden predictions: the round ends in phase "unsettled"."""
    rng = random.Random(11)
    full = start(3)
    views = [GAME.view(full, seat) for seat in range(3)]
    while GAME.expected(full).phase == "move":
        move = rng.choice(GAME.legal_moves(full, GAME.expected(full).seats[0]))
        full = GAME.apply(full, move)
        views = [
            GAME.apply(v, Predict(move.seat, None) if isinstance(move, Predict) and move.seat != s else move)
            for s, v in enumerate(views)
        ]
    assert GAME.expected(full).phase == "deal"
    for view in views:
        assert GAME.expected(view).phase == "unsettled"
        assert view.round is not None and view.round.points is None
        assert view.round.tricks == full.round.tricks  # type: ignore[union-attr]
        with pytest.raises(IllegalMove):
            GAME.apply(view, Split(0, True))


def test_view_of_a_finished_round_is_public() -> None:
    """S-7.1: when the round is over every prediction card is revealed."""
    full = finish_round(start(3), random.Random(4))
    assert GAME.view(full, 0).round.predictions == full.round.predictions  # type: ignore[union-attr]


def test_apply_refuses_seats_not_at_the_table() -> None:
    """S-1.3: a move from a seat that is not at the table is refused."""
    state = start(3)
    with pytest.raises(IllegalMove):
        play(state, Predict(3, Card.parse("R1")))
