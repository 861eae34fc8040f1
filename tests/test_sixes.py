"""Sixes (rules X-1 … X-3, shared/rules/sixes.md): rule tests, record faults, property tests over
random legal games for 3-8 players, partial knowledge and record round trips.

Everything goes through the public engine API (`deal_from_json`, `start_round`, `move_from_json`,
`apply`) or through `engine.record.replay`, the same paths as a replay of a record."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import FormatError, IllegalMove, JSONObject, RuleError
from engine.games import get_game
from engine.playout import play_game, random_chooser, shuffled_deal
from engine.record import FORMAT, RecordFault, replay, replay_text
from engine.sixes import (
    DECK,
    SIXES,
    Pass,
    Play,
    SixesOptions,
    SixesState,
    cards_beyond,
    column_ends,
    hand_sizes_for,
    on_table,
    playable_cards,
)

GAME = SIXES
SEQUENCE = "A234567JQK"  # written again from the rules file


# --- helpers -------------------------------------------------------------------------------


def sizes_by_rule(players: int, dealer: int) -> list[int]:
    """X-1.3 written again: one card at a time from the dealer's left until all 40 are gone."""
    sizes = [0] * players
    seat = dealer
    for _ in range(40):
        seat = (seat + 1) % players
        sizes[seat] += 1
    return sizes


def make_deal(players: int, dealer: int, fixed: Mapping[int, Sequence[str]]) -> JSONObject:
    """A deal (record JSON): each seat gets its listed cards, filled up to its X-1.3 size with the
    rest of the deck in canonical order."""
    sizes = sizes_by_rule(players, dealer)
    taken = {card for cards in fixed.values() for card in cards}
    rest = [card for card in DECK if card not in taken]
    hands: list[list[str]] = []
    for seat in range(players):
        hand = list(fixed.get(seat, ()))
        while len(hand) < sizes[seat]:
            hand.append(rest.pop(0))
        hands.append(hand)
    assert not rest
    return {"dealer": dealer, "hands": hands}


def start(deal: JSONObject, players: int | None = None, chips: int = 10, state: SixesState | None = None) -> SixesState:
    if state is None:
        hands = deal["hands"]
        assert isinstance(hands, list)
        state = GAME.new_game(players or len(hands), SixesOptions(chips))
    return GAME.start_round(state, GAME.deal_from_json(state, deal))


def move(state: SixesState, raw: JSONObject) -> SixesState:
    return GAME.apply(state, GAME.move_from_json(raw))


def play(seat: int, card: str) -> JSONObject:
    return {"seat": seat, "play": card}


def pass_(seat: int) -> JSONObject:
    return {"seat": seat, "pass": True}


def refused(state: SixesState, raw: JSONObject) -> RuleError:
    with pytest.raises(RuleError) as info:
        move(state, raw)
    return info.value


def record(
    deals_and_moves: Sequence[tuple[JSONObject, Sequence[JSONObject]]], players: int = 5, chips: int = 10
) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "game": "sixes",
            "players": [f"P{i}" for i in range(players)],
            "options": {"chips": chips},
            "rounds": [{"deal": deal, "moves": list(moves)} for deal, moves in deals_and_moves],
        }
    )


def fault(text: str) -> RecordFault:
    with pytest.raises(RecordFault) as info:
        replay_text(text)
    return info.value


# The standard scene: 5 players, dealer 4 (8 cards each). Seat 0 holds O6; seat 1 holds nothing
# playable after O6; seat 2 holds O5, O7 and C6.
SCENE = make_deal(
    5,
    4,
    {
        0: ["O6", "OK", "CK", "EK", "BK"],
        1: ["OA", "O2", "CA", "C2", "EA", "E2", "BA", "B2"],
        2: ["O5", "O7", "C6", "OJ"],
        3: ["E6", "O4"],
        4: ["B6", "OQ"],
    },
)


def scene(chips: int = 10) -> SixesState:
    return start(SCENE, chips=chips)


# --- X-1 material --------------------------------------------------------------------------


def test_x_1_1_deck_has_40_cards_of_four_suits_and_ten_ranks() -> None:
    assert len(DECK) == len(set(DECK)) == 40
    assert {card[0] for card in DECK} == set("OCEB")
    assert [card[1] for card in DECK[:10]] == list(SEQUENCE)


def test_x_1_2_sequence_runs_7_then_j() -> None:
    """X-1.2: J follows 7 directly (no 8, 9, 10): after O7, OJ is playable."""
    assert cards_beyond("O7") == ("OJ", "OQ", "OK")
    state = scene()
    state = move(state, play(0, "O6"))
    state = move(state, pass_(1))
    state = move(state, play(2, "O7"))
    assert "OJ" in column_ends(state.round.columns)  # type: ignore[union-attr]
    state = move(state, play(3, "E6"))
    state = move(state, play(4, "B6"))
    state = move(state, pass_(0))
    state = move(state, pass_(1))
    state = move(state, play(2, "OJ"))
    assert state.round is not None and state.round.columns[0] == ("O6", "OJ")
    with pytest.raises(FormatError):
        GAME.move_from_json(play(3, "O8"))  # no 8s in the deck


@pytest.mark.parametrize("players", range(3, 9))
def test_x_1_3_hand_sizes_for_3_to_8_players(players: int) -> None:
    """X-1.3: all 40 cards are dealt one at a time from the dealer's left; the first seats after
    the dealer get the extra cards with 3, 6 or 7 players."""
    for dealer in range(players):
        sizes = hand_sizes_for(players, dealer)
        assert list(sizes) == sizes_by_rule(players, dealer)
        assert sum(sizes) == 40 and max(sizes) - min(sizes) <= 1
        state = GAME.new_game(players, SixesOptions())
        layout = GAME.layout(state, dealer)
        assert layout.deck == DECK and not layout.table and not layout.late_table
        for position in range(40):
            assert layout.owner(position) == (dealer + 1 + position) % players
    assert hand_sizes_for(3, 0) == (13, 14, 13)  # seat 1 is dealt first: 14 cards
    assert hand_sizes_for(5, 2) == (8,) * 5


def test_x_1_3_player_count() -> None:
    for players in (2, 9):
        with pytest.raises(IllegalMove) as info:
            GAME.new_game(players, SixesOptions())
        assert info.value.rule == "X-1.3"


def test_x_1_4_chips_option() -> None:
    assert GAME.options_from_json({}) == SixesOptions(10)
    assert GAME.options_from_json({"chips": 1}).chips == 1
    assert GAME.options_from_json({"chips": 50}).chips == 50
    assert GAME.options_to_json(SixesOptions(7)) == {"chips": 7}
    for bad in (0, 51, True, "10", 2.5, None):
        with pytest.raises(FormatError):
            GAME.options_from_json({"chips": bad})
    with pytest.raises(FormatError):
        GAME.options_from_json({"chip": 10})
    state = GAME.new_game(4, SixesOptions(7))
    assert GAME.totals(state) == (7, 7, 7, 7)


# --- X-2 a round ---------------------------------------------------------------------------


def test_x_2_1_deal_from_cards_follows_the_layout() -> None:
    state = GAME.new_game(3, SixesOptions())
    cards = list(reversed(DECK))
    deal = GAME.deal_from_cards(state, 1, cards)
    assert [len(h or ()) for h in deal.hands] == [13, 13, 14]  # seat 2 is left of dealer 1
    assert deal.hands[2] is not None and deal.hands[2][0] == cards[0]
    assert deal.hands[0] is not None and deal.hands[0][0] == cards[1]
    partial = GAME.deal_from_cards(state, 1, [c if i % 3 == 1 else None for i, c in enumerate(cards)])
    assert partial.hands[0] is not None and partial.hands[1] is None and partial.hands[2] is None
    started = GAME.start_round(state, partial)
    assert started.round is not None and started.round.hand_sizes == (13, 13, 14)
    assert GAME.deal_to_json(deal)["hands"] == [list(h or ()) for h in deal.hands]


def test_x_2_2_the_holder_of_o6_opens_with_it() -> None:
    state = scene()
    assert GAME.expected(state).seats == (0,) and GAME.expected(state).kind == "play"
    assert not GAME.expected(state).one_of
    assert GAME.legal_moves(state, 0) == (Play(0, "O6"),)
    assert GAME.legal_moves(state, 3) == ()
    assert refused(state, play(3, "E6")).rule == "X-2.2"  # not the holder
    assert refused(state, pass_(3)).rule == "X-2.2"
    assert refused(state, play(0, "OK")).rule == "X-2.2"  # the holder, another card
    assert refused(state, pass_(0)).rule == "X-2.2"  # the holder may not pass
    after = move(state, play(0, "O6"))
    assert after.round is not None and after.round.opener == 0 and after.round.columns[0] == ("O6", "O6")
    assert GAME.expected(after).seats == (1,)  # then play goes left


def test_x_2_2_partial_knowledge_does_not_know_the_holder() -> None:
    state = scene()
    holder_view = GAME.view(state, 0)
    assert GAME.expected(holder_view) == GAME.expected(state)
    other_view = GAME.view(state, 3)
    expected = GAME.expected(other_view)
    assert expected.seats == (0, 1, 2, 4) and expected.one_of and not expected.simultaneous
    assert refused(other_view, play(3, "E6")).rule == "X-2.2"  # I know I don't hold O6
    assert refused(other_view, play(1, "OA")).rule == "X-2.2"  # only O6 opens
    settled = move(other_view, play(0, "O6"))  # the first valid O6 play settles it
    assert GAME.expected(settled).seats == (1,)
    assert settled.round is not None and settled.round.opener == 0 and settled.round.hand_sizes[0] == 7
    assert GAME.public_state(settled) == GAME.public_state(move(state, play(0, "O6")))


def test_x_2_3_play_goes_left_and_extends_columns() -> None:
    state = move(scene(), play(0, "O6"))
    assert refused(state, play(2, "O5")).rule == "X-2.3"  # out of turn
    state = move(state, pass_(1))
    assert set(GAME.legal_moves(state, 2)) == {Play(2, "O5"), Play(2, "O7"), Play(2, "C6")}
    state = move(state, play(2, "C6"))  # a 6 opens its suit's column
    assert state.round is not None and state.round.columns == (("O6", "O6"), ("C6", "C6"), None, None)
    assert refused(state, play(3, "O4")).rule == "X-2.3"  # not adjacent: O5 is missing
    state = move(state, play(3, "E6"))
    state = move(state, play(4, "B6"))
    assert GAME.expected(state).seats == (0,)  # seat 4 -> seat 0: clockwise wraps around
    assert GAME.legal_moves(state, 0) == (Pass(0),)
    state = move(state, pass_(0))
    state = move(state, pass_(1))
    assert refused(state, play(2, "OJ")).rule == "X-2.3"  # O7 is not yet down
    assert refused(state, play(2, "E5")).rule == "X-2.3"  # playable, but not seat 2's card
    state = move(state, play(2, "O5"))
    state = move(state, play(3, "O4"))
    assert state.round is not None and state.round.columns[0] == ("O4", "O6")
    assert refused(state, play(4, "O5")).rule == "X-2.3"  # already on the table
    assert on_table(state.round.columns, "O5") and not on_table(state.round.columns, "O3")


def test_x_2_3_helpers() -> None:
    assert column_ends((None, None, None, None)) == {"O6"}
    columns = (("O5", "O7"), None, ("EA", "EK"), ("B6", "BQ"))
    assert column_ends(columns) == {"O4", "OJ", "C6", "B5", "BK"}
    assert playable_cards(columns, ["OA", "O4", "BK", "C6", "E2"]) == ("O4", "BK", "C6")
    assert cards_beyond("O6") == ("O5", "O4", "O3", "O2", "OA", "O7", "OJ", "OQ", "OK")
    assert cards_beyond("CA") == () and cards_beyond("CK") == ()
    assert cards_beyond("E3") == ("E2", "EA")


def test_x_2_4_passing_pays_one_chip_to_the_pot() -> None:
    state = move(scene(), play(0, "O6"))
    assert GAME.legal_moves(state, 1) == (Pass(1),)
    state = move(state, pass_(1))
    assert state.chips == (10, 9, 10, 10, 10) and state.pot == 1
    assert GAME.round_report(state) == {"dealer": 4, "winner": None, "pot": 1, "chips": [10, 9, 10, 10, 10]}


def test_x_2_4_must_play_when_able() -> None:
    state = move(move(scene(), play(0, "O6")), pass_(1))
    error = refused(state, pass_(2))
    assert error.rule == "X-2.4" and "O5" in error.message and error.seat == 2


def test_x_2_4_a_player_without_chips_passes_free() -> None:
    state = move(scene(chips=1), play(0, "O6"))
    state = move(state, pass_(1))
    assert state.chips == (1, 0, 1, 1, 1) and state.pot == 1
    assert GAME.expected(state).phase == "move"  # is judged at the end of the round only
    for seat, card in ((2, "O7"), (3, "E6"), (4, "B6")):
        state = move(state, play(seat, card))
    state = move(state, pass_(0))
    assert state.chips == (0, 0, 1, 1, 1) and state.pot == 2
    state = move(state, pass_(1))  # no chips: free
    assert state.chips == (0, 0, 1, 1, 1) and state.pot == 2


def test_x_2_5_the_first_player_out_takes_the_pot() -> None:
    """X-2.5: the round ends as soon as a player has played their last card; the pot is theirs."""
    state = move(move(scene(), play(0, "O6")), pass_(1))
    r = state.round
    assert r is not None
    # Shrink seat 2's hand to the single card O5 (a value-level edit: one play from going out).
    hands = (*r.hands[:2], ("O5",), *r.hands[3:])
    sizes = (*r.hand_sizes[:2], 1, *r.hand_sizes[3:])
    near_end = replace(state, round=replace(r, hands=hands, hand_sizes=sizes))
    done = move(near_end, play(2, "O5"))
    assert done.round is not None and done.round.winner == 2
    assert done.chips == (10, 9, 11, 10, 10) and done.pot == 0
    assert GAME.round_report(done) == {"dealer": 4, "winner": 2, "pot": 1, "chips": [10, 9, 11, 10, 10]}
    assert GAME.expected(done).phase == "deal" and GAME.expected_dealer(done) == 0
    assert refused(done, play(3, "O4")).rule == "X-2.5"  # the round has ended


def test_x_2_6_the_o6_player_deals_next() -> None:
    state = GAME.new_game(4, SixesOptions())
    assert GAME.expected_dealer(state) is None  # the first dealer is drawn
    rng = random.Random(5)
    state = GAME.start_round(state, shuffled_deal(GAME, state, rng))
    chooser = random_chooser(GAME, rng)
    while GAME.expected(state).phase == "move":
        seat = GAME.expected(state).seats[0]
        state = GAME.apply(state, chooser(state, seat))
    assert state.round is not None and state.round.opener is not None
    assert GAME.expected_dealer(state) == state.round.opener
    wrong = (state.round.opener + 1) % 4
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_cards(state, wrong, DECK))
    assert info.value.rule == "X-2.6"
    nxt = GAME.start_round(state, GAME.deal_from_cards(state, state.round.opener, DECK))
    assert nxt.rounds_started == 2


# --- X-3 end -------------------------------------------------------------------------------


def finish_round(state: SixesState, rng: random.Random) -> SixesState:
    chooser = random_chooser(GAME, rng)
    while GAME.expected(state).phase == "move":
        state = GAME.apply(state, chooser(state, GAME.expected(state).seats[0]))
    return state


def test_x_3_1_game_ends_when_a_player_has_no_chips_after_a_round() -> None:
    rng = random.Random(11)
    state = GAME.new_game(5, SixesOptions(1))
    rounds = 0
    while GAME.expected(state).phase != "over":
        assert GAME.winners(state) is None
        state = finish_round(GAME.start_round(state, shuffled_deal(GAME, state, rng)), rng)
        rounds += 1
        assert (min(state.chips) == 0) == (GAME.expected(state).phase == "over")
    best = max(state.chips)
    assert GAME.winners(state) == tuple(s for s, c in enumerate(state.chips) if c == best)
    with pytest.raises(IllegalMove) as info:
        GAME.start_round(state, GAME.deal_from_cards(state, GAME.expected_dealer(state) or 0, DECK))
    assert info.value.rule == "X-3.1"
    assert refused(state, pass_(0)).rule == "X-3.1"


def test_x_3_1_ties_share_the_win() -> None:
    """X-3.1: the player with the most chips wins; equal most share the win."""
    state = replace(GAME.new_game(5, SixesOptions()), chips=(12, 0, 12, 11, 15), over=True)
    assert GAME.winners(state) == (4,)
    state = replace(state, chips=(12, 0, 12, 14, 12))
    assert GAME.winners(state) == (3,)
    state = replace(state, chips=(12, 0, 12, 11, 12))
    assert GAME.winners(state) == (0, 2, 4)
    assert GAME.winners(replace(state, over=False)) is None
    assert GAME.totals(state) == (12, 0, 12, 11, 12)


# --- moves and wire forms ------------------------------------------------------------------


def test_move_json_round_trip_and_format_errors() -> None:
    for raw in (play(2, "O5"), pass_(3)):
        assert GAME.move_to_json(GAME.move_from_json(raw)) == raw
    assert GAME.move_seat(GAME.move_from_json(play(4, "BA"))) == 4
    for bad in (
        {"seat": 1, "play": "X6"},
        {"seat": 1, "play": "o6"},
        {"seat": 1, "play": 6},
        {"seat": 1, "pass": False},
        {"seat": 1, "pass": 1},
        {"seat": 1},
        {"seat": "1", "play": "O6"},
        {"seat": True, "pass": True},
        {"seat": -1, "pass": True},
        {"seat": 1, "play": "O6", "pass": True},
        {"seat": 1, "play": "O6", "as": 6},
    ):
        with pytest.raises(FormatError):
            GAME.move_from_json(bad)


def test_seat_outside_the_table_is_refused() -> None:
    state = move(scene(), play(0, "O6"))
    assert refused(state, pass_(7)).rule == "X-1.3"
    assert refused(scene(), play(7, "O6")).rule == "X-1.3"


def test_public_state_is_canonical_and_equal_for_every_view() -> None:
    state = move(move(scene(), play(0, "O6")), pass_(1))
    public = GAME.public_state(state)
    assert json.loads(json.dumps(public, sort_keys=True)) == public
    for seat in range(5):
        assert GAME.public_state(GAME.view(state, seat)) == public
    assert public["chips"] == [10, 9, 10, 10, 10] and public["pot"] == 1
    round_ = public["round"]
    assert isinstance(round_, dict)
    assert round_["columns"] == {"O": ["O6", "O6"], "C": None, "E": None, "B": None}
    assert round_["turn"] == 2 and round_["hand_sizes"] == [7, 8, 8, 8, 8]


def test_view_hides_other_hands_only() -> None:
    state = scene()
    view = GAME.view(state, 2)
    assert view.round is not None and state.round is not None
    assert view.round.hands[2] == state.round.hands[2]
    assert all(view.round.hands[s] is None for s in (0, 1, 3, 4))
    assert view.round.hand_sizes == state.round.hand_sizes
    with pytest.raises(RuleError):
        GAME.legal_moves(GAME.view(move(state, play(0, "O6")), 3), 1)  # seat 1's hand is unknown


def test_history_is_public_and_names_only_moves_the_table_saw() -> None:
    """X-2.3/X-2.4: every play and every pass is seen by the whole table, so the round's history is
    the same in every view; it names cards already on the table and the seats that passed, never a
    card still in a hand, and the views still differ from the full state in the hands alone."""
    state = scene()
    for chosen in (play(0, "O6"), pass_(1)):
        state = move(state, chosen)
    r = state.round
    assert r is not None
    assert r.history == ((0, "O6"), (1, None))
    rng = random.Random(3)
    while GAME.expected(state).phase == "move":
        seat = GAME.expected(state).seats[0]
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state, seat)))
        r = state.round
        assert r is not None
        held = {card for hand in r.hands for card in hand or ()}
        assert all(card is None or (on_table(r.columns, card) and card not in held) for _, card in r.history)
        assert all(r.lacks[s] for s, card in r.history if card is None)  # a pass shows a lack
        for seat in range(5):
            view = GAME.view(state, seat).round
            assert view is not None and view.history == r.history
            assert replace(view, hands=r.hands) == r  # nothing else hidden, nothing else added
    assert r.history[-1] == (r.winner, r.history[-1][1]) and r.history[-1][1] is not None


def test_partial_knowledge_checks_what_it_can() -> None:
    """A peer refuses a card it knows to be elsewhere or not adjacent, and leaves false passes to
    the audit (X-2.4 is checked with full knowledge)."""
    state = move(scene(), play(0, "O6"))
    view2 = GAME.view(state, 2)
    assert refused(view2, play(1, "O5")).rule == "X-2.3"  # O5 is in seat 2's own hand
    assert refused(view2, play(1, "OJ")).rule == "X-2.3"  # not adjacent
    assert refused(view2, play(1, "O6")).rule == "X-2.3"  # already on the table
    after = move(view2, play(1, "E6"))  # possible as far as seat 2 knows (false: seat 3 holds it)
    assert after.round is not None and after.round.hand_sizes[1] == 7
    state = move(move(move(state, pass_(1)), play(2, "O5")), play(3, "E6"))
    view0 = GAME.view(state, 0)
    false_pass = move(view0, pass_(4))  # seat 4 holds B6 and O4 may be played: accepted here
    assert false_pass.pot == state.pot + 1
    assert refused(state, pass_(4)).rule == "X-2.4"  # the audit's full knowledge refuses it


# --- deal faults (through the record: RecordFault names the rule) ----------------------------


def hands_of(deal: JSONObject) -> list[list[str]]:
    hands = deal["hands"]
    assert isinstance(hands, list)
    return [list(h) for h in hands]


def test_good_record_replays() -> None:
    result = replay_text(record([(SCENE, [play(0, "O6"), pass_(1)])]))
    assert not result.complete and result.to_json()["winners"] is None
    assert result.to_json()["rounds"] == [{"dealer": 4, "winner": None, "pot": 1, "chips": [10, 9, 10, 10, 10]}]
    assert result.to_json()["totals"] == [10, 9, 10, 10, 10]


def test_deal_fault_missing_card_x_1_3() -> None:
    hands = hands_of(SCENE)
    lost = hands[2].pop()
    error = fault(record([({"dealer": 4, "hands": hands}, [])]))
    assert (error.rule, error.round, error.move, error.seat) == ("X-1.3", 0, None, 2)
    assert lost in error.message


def test_deal_fault_wrong_sizes_x_1_3() -> None:
    hands = hands_of(SCENE)
    hands[1].append(hands[2].pop())  # 9 and 7 cards
    assert fault(record([({"dealer": 4, "hands": hands}, [])])).rule == "X-1.3"
    # 3 players: the seat left of the dealer gets 14 cards, not another seat
    deal = make_deal(3, 0, {})
    hands = hands_of(deal)
    assert [len(h) for h in hands] == [13, 14, 13]
    assert fault(record([({"dealer": 2, "hands": hands}, [])], players=3)).rule == "X-1.3"
    replay_text(record([(deal, [])], players=3))


def test_deal_fault_duplicate_x_1_1() -> None:
    hands = hands_of(SCENE)
    hands[3][-1] = hands[4][-1]
    error = fault(record([({"dealer": 4, "hands": hands}, [])]))
    assert error.rule == "X-1.1" and hands[4][-1] in error.message


def test_deal_fault_unknown_card_and_shape() -> None:
    hands = hands_of(SCENE)
    hands[0][1] = "O9"
    assert fault(record([({"dealer": 4, "hands": hands}, [])])).rule == "format"
    assert fault(record([({"dealer": 4, "hands": hands_of(SCENE)[:4]}, [])])).rule == "format"
    assert fault(record([({"dealer": 4, "hands": hands_of(SCENE), "rows": []}, [])])).rule == "format"
    assert fault(record([({"hands": hands_of(SCENE)}, [])])).rule == "format"


def test_deal_fault_wrong_dealer_x_2_6() -> None:
    """X-2.6: any seat deals the first round; afterwards the player who played O6."""
    bad_dealer = {"dealer": 9, "hands": hands_of(SCENE)}
    assert fault(record([(bad_dealer, [])])).rule == "X-2.6"
    replay_text(record([({"dealer": 0, "hands": hands_of(SCENE)}, [])]))  # 8 cards each for any dealer
    rng = random.Random(3)
    _, rec = play_game(GAME, ["a", "b", "c"], SixesOptions(10), random_chooser(GAME, rng), rng, max_rounds=2)
    raw = json.loads(rec.dumps())
    opener = raw["rounds"][0]["moves"][0]["seat"]
    assert raw["rounds"][1]["deal"]["dealer"] == opener
    raw["rounds"][1]["deal"] = make_deal(3, (opener + 1) % 3, {})
    error = fault(json.dumps(raw))
    assert (error.rule, error.round, error.move) == ("X-2.6", 1, None)


# --- move faults (through the record) -------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "rule", "seat"),
    [
        ([play(3, "E6")], "X-2.2", 3),  # first move not by the O6 holder
        ([play(0, "OK")], "X-2.2", 0),  # the holder, but not O6
        ([pass_(0)], "X-2.2", 0),
        ([play(0, "O6"), play(2, "O5")], "X-2.3", 2),  # out of turn
        ([play(0, "O6"), play(1, "OA")], "X-2.3", 1),  # not adjacent (and in hand)
        ([play(0, "O6"), pass_(1), play(2, "O4")], "X-2.3", 2),  # not adjacent (not in hand either)
        ([play(0, "O6"), pass_(1), pass_(2)], "X-2.4", 2),  # holds O5, O7, C6
        ([play(0, "O6"), pass_(1), play(2, "O5"), play(3, "E6"), play(4, "O4")], "X-2.3", 4),  # not in hand
        ([play(0, "O6"), pass_(1), play(2, "O5"), pass_(3)], "X-2.4", 3),  # holds O4 and E6
        ([play(0, "O6"), {"seat": 1, "play": "C8"}], "format", 1),  # unknown card code
        ([play(0, "O6"), {"seat": 1, "pass": True, "chips": 1}], "format", 1),
        ([play(0, "O6"), pass_(9)], "X-1.3", 9),
    ],
)
def test_record_move_faults(moves: list[JSONObject], rule: str, seat: int) -> None:
    error = fault(record([(SCENE, moves)]))
    assert (error.rule, error.round, error.move, error.seat) == (rule, 0, len(moves) - 1, seat)
    assert error.to_json()["error"]["rule"] == rule  # type: ignore[index]


def test_record_moves_after_the_round_ended() -> None:
    rng = random.Random(8)
    _, rec = play_game(GAME, ["a", "b", "c", "d"], SixesOptions(10), random_chooser(GAME, rng), rng, max_rounds=1)
    raw = json.loads(rec.dumps())
    raw["rounds"][0]["moves"].append(pass_(0))
    assert fault(json.dumps(raw)).rule == "X-2.5"


# --- property tests: random legal games ----------------------------------------------------

games = st.fixed_dictionaries(
    {
        "players": st.integers(3, 8),
        "chips": st.sampled_from([1, 2, 3, 10, 50]),
        "seed": st.integers(0, 2**32 - 1),
    }
)
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_cards(state: SixesState) -> None:
    """X-1.1/X-2.1: hands and columns hold every card exactly once; sizes match the hands."""
    r = state.round
    assert r is not None
    in_hands = [card for hand in r.hands if hand is not None for card in hand]
    on_columns = [card for card in DECK if on_table(r.columns, card)]
    assert Counter(in_hands + on_columns) == Counter(DECK)
    assert r.hand_sizes == tuple(len(hand) for hand in r.hands if hand is not None)
    assert r.playable == column_ends(r.columns) | ({"C6", "E6", "B6"} if r.columns[0] is None else set())


@SETTINGS
@given(games)
def test_random_games_keep_the_rules_and_views_agree(game: dict[str, Any]) -> None:
    """Random legal games for 3-8 players and several chip counts, with every seat's partial view
    kept in parallel:

    * cards are conserved (X-1.1, X-2.1); chips plus pot stay constant (X-2.4, X-2.5);
    * the O6 holder opens (X-2.2), turns go left (X-2.3), a pass only without a playable card
      and paying a chip if any (X-2.4), the first player out takes the pot (X-2.5), the O6 player
      deals next (X-2.6), the game ends exactly when a round leaves someone without chips (X-3.1);
    * every view accepts every move the full state accepts, ends in the same state as the view of
      the full state, and all views agree on the public state.
    """
    n, chips, rng = game["players"], game["chips"], random.Random(game["seed"])
    state = GAME.new_game(n, SixesOptions(chips))
    total = n * chips
    rounds = 0
    while GAME.expected(state).phase == "deal" and rounds < 3:
        want_dealer = GAME.expected_dealer(state)
        deal = shuffled_deal(GAME, state, rng)
        if want_dealer is not None:
            assert deal.dealer == want_dealer
        state = GAME.start_round(state, deal)
        rounds += 1
        assert state.round is not None
        assert state.round.hand_sizes == tuple(sizes_by_rule(n, deal.dealer))
        views = [GAME.view(state, seat) for seat in range(n)]
        first = True
        while GAME.expected(state).phase == "move":
            check_cards(state)
            expected = GAME.expected(state)
            assert len(expected.seats) == 1 and expected.kind == "play"
            seat = expected.seats[0]
            legal = GAME.legal_moves(state, seat)
            assert legal
            r = state.round
            assert r is not None
            hand = r.hands[seat]
            assert hand is not None
            if first:
                assert "O6" in hand and legal == (Play(seat, "O6"),)
            playable = [c for c in hand if c in column_ends(r.columns)]
            assert legal == (tuple(Play(seat, c) for c in playable) or (Pass(seat),))
            for other in range(n):
                if other != seat:
                    assert GAME.legal_moves(state, other) == ()
            chosen = rng.choice(legal)
            before = state
            state = GAME.apply(state, chosen)
            assert sum(state.chips) + state.pot == total
            if isinstance(chosen, Pass):
                paid = 1 if before.chips[seat] > 0 else 0
                assert state.chips[seat] == before.chips[seat] - paid and state.pot == before.pot + paid
            views = [GAME.apply(view, chosen) for view in views]
            public = GAME.public_state(state)
            for other, view in enumerate(views):
                assert view == GAME.view(state, other)
                assert GAME.public_state(view) == public
            after = state.round
            assert after is not None
            if after.winner is None:
                assert GAME.expected(state).seats == ((seat + 1) % n,)
            else:
                assert after.winner == seat and after.hand_sizes[seat] == 0
                assert all(after.hand_sizes[s] for s in range(n) if s != seat)
                assert state.chips[seat] == before.chips[seat] + before.pot and state.pot == 0
                assert GAME.round_report(state)["pot"] == before.pot
            first = False
        check_cards(state)
        assert state.round is not None and state.round.winner is not None
        assert GAME.expected_dealer(state) == state.round.opener
        over = min(state.chips) == 0
        assert (GAME.expected(state).phase == "over") == over
        best = tuple(s for s in range(n) if state.chips[s] == max(state.chips))
        assert GAME.winners(state) == (best if over else None)
        assert GAME.round_report(state)["chips"] == list(state.chips)


@settings(max_examples=25, deadline=None)
@given(games)
def test_record_round_trip(game: dict[str, Any]) -> None:
    """play_game -> record -> replay gives the same totals, winners and last round report."""
    n, rng = game["players"], random.Random(game["seed"])
    chips = min(game["chips"], 3)  # play whole games: few chips end them quickly
    players = [f"p{i}" for i in range(n)]
    final, rec = play_game(GAME, players, SixesOptions(chips), random_chooser(GAME, rng), rng, max_rounds=40)
    result = replay_text(rec.dumps())
    out = result.to_json()
    assert out["game"] == "sixes"
    assert out["totals"] == list(GAME.totals(final))
    assert result.complete == (GAME.expected(final).phase == "over")
    winners = GAME.winners(final)
    assert out["winners"] == (list(winners) if winners is not None else None)
    rounds = out["rounds"]
    assert isinstance(rounds, list) and len(rounds) == len(rec.rounds)
    assert rounds[-1] == GAME.round_report(final)
    assert replay(rec).final_state == final


def test_registry_and_long_game() -> None:
    assert get_game("sixes") is GAME
    rng = random.Random(2024)
    final, rec = play_game(GAME, ["a", "b", "c", "d", "e"], SixesOptions(10), random_chooser(GAME, rng), rng)
    assert GAME.expected(final).phase == "over" and min(final.chips) == 0
    assert sum(final.chips) == 50
    out = replay_text(rec.dumps()).to_json()
    assert out["complete"] and out["winners"] == list(GAME.winners(final) or ())
