"""6 nimmt! rules (T-1 … T-5, shared/rules/take6.md): one test per rule, the record faults, and
property tests over random legal games for 2–10 players and every option combination."""

from __future__ import annotations

import copy
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
from engine.playout import play_game, random_chooser, shuffled_deal
from engine.record import RecordFault, parse_record, record_from_moves, replay, replay_text
from engine.take6 import (
    BULLHEADS,
    HIDDEN,
    TAKE6,
    Pick,
    Play,
    Take6Options,
    Take6State,
    TakeRow,
    bullheads,
    deck_size,
    placement_target,
)

GAME = TAKE6
ALL_OPTIONS = [Take6Options(t, lg, p) for t in (False, True) for lg in (False, True) for p in (False, True)]


# --- helpers ---------------------------------------------------------------------------


def rule_bullheads(card: int) -> int:
    """T-1.1 written again from the rules file."""
    if card == 55:
        return 7
    for divisor, value in ((11, 5), (10, 3), (5, 2)):
        if card % divisor == 0:
            return value
    return 1


def fill_hands(
    players: int, hands: Mapping[int, Sequence[int]], rows: Sequence[int], size: int = 104
) -> list[list[int]]:
    """Each seat's listed cards, filled up to 10 from the unused cards of the deck, lowest last."""
    used = {c for h in hands.values() for c in h} | set(rows)
    spare = [c for c in range(size, 0, -1) if c not in used]
    out = []
    for seat in range(players):
        hand = list(hands.get(seat, ()))
        while len(hand) < 10:
            hand.append(spare.pop(0))
        out.append(sorted(hand))
    return out


def start(
    players: int,
    hands: Mapping[int, Sequence[int]],
    rows: Sequence[int],
    options: Take6Options | None = None,
    dealer: int = 0,
) -> Take6State:
    opts = options or Take6Options()
    state = GAME.new_game(players, opts)
    full = fill_hands(players, hands, rows, deck_size(players, opts.tactic))
    deal = GAME.deal_from_json(state, {"dealer": dealer, "hands": full, "rows": list(rows)})
    return GAME.start_round(state, deal)


def turn(state: Take6State, plays: Mapping[int, int]) -> Take6State:
    for seat, card in plays.items():
        state = GAME.apply(state, Play(seat, card))
    return state


def rows_of(state: Take6State) -> list[list[int]]:
    return [list(row) for row in state.rows]


# --- T-1 material --------------------------------------------------------------------


def test_t1_1_bullhead_values_and_deck_total() -> None:
    """T-1.1: 55 → 7, multiples of 11 → 5, of 10 → 3, of 5 → 2, else 1; the deck totals 171."""
    assert [bullheads(c) for c in (55, 11, 22, 99, 10, 50, 100, 5, 15, 65, 1, 2, 104)] == [
        7, 5, 5, 5, 3, 3, 3, 2, 2, 2, 1, 1, 1,
    ]  # fmt: skip
    assert all(bullheads(c) == rule_bullheads(c) == BULLHEADS[c] for c in range(1, 105))
    assert sum(bullheads(c) for c in range(1, 105)) == 171


def test_t1_2_two_to_ten_players() -> None:
    """T-1.2: 2–10 players."""
    for n in (2, 10):
        assert GAME.new_game(n, Take6Options()).players == n
    for n in (1, 11):
        with pytest.raises(IllegalMove) as err:
            GAME.new_game(n, Take6Options())
        assert err.value.rule == "T-1.2"


# --- T-2 set-up ----------------------------------------------------------------------


def test_t2_1_layout_hands_rows_stock() -> None:
    """T-2.1: positions [10s, 10s+10) are seat s's hand, the next 4 start the rows, the rest is stock."""
    state = GAME.new_game(3, Take6Options())
    layout = GAME.layout(state, 0)
    assert layout.deck == tuple(str(c) for c in range(1, 105))
    assert layout.hands == tuple(tuple(range(10 * s, 10 * s + 10)) for s in range(3))
    assert layout.table == (30, 31, 32, 33)
    cards = [str(c) for c in range(104, 0, -1)]
    deal = GAME.deal_from_cards(state, 0, cards)
    assert deal.hands[0] == tuple(range(95, 105))  # sorted ascending
    assert deal.rows == (74, 73, 72, 71)  # rows keep their position order
    started = GAME.start_round(state, deal)
    assert rows_of(started) == [[74], [73], [72], [71]]
    assert GAME.expected(started).phase == "move" and GAME.expected(started).seats == (0, 1, 2)


def test_t2_1_partial_deal_knows_only_its_own_hand() -> None:
    """T-2.1 with partial knowledge: a peer's deal has its own hand and the rows, others unknown."""
    state = GAME.new_game(2, Take6Options())
    cards: list[str | None] = [None] * 104
    for p in range(10):
        cards[10 + p] = str(p + 1)
    for p in range(4):
        cards[20 + p] = str(50 + p)
    deal = GAME.deal_from_cards(state, 0, cards)
    assert deal.hands == (None, tuple(range(1, 11)))
    started = GAME.start_round(state, deal)
    assert started.hands[0] is None and started.hand_sizes == (10, 10)


@pytest.mark.parametrize(
    ("mutate", "rule"),
    [
        (lambda d: d["hands"][0].pop(), "T-2.1"),
        (lambda d: d["hands"][1].__setitem__(0, d["hands"][0][0]), "T-2.1"),
        (lambda d: d["rows"].pop(), "T-2.1"),
        (lambda d: d["rows"].__setitem__(0, d["hands"][0][3]), "T-2.1"),
        (lambda d: d["hands"].pop(), "T-2.1"),
        (lambda d: d["rows"].__setitem__(0, 105), "format"),
        (lambda d: d["rows"].__setitem__(0, "17"), "format"),
    ],
)
def test_t2_1_bad_deals_are_refused(mutate: Any, rule: str) -> None:
    """T-2.1: 10 cards per hand, 4 rows, cards of the deck, no card twice."""
    state = GAME.new_game(3, Take6Options())
    good: JSONObject = {"dealer": 0, "hands": fill_hands(3, {}, [1, 2, 3, 4]), "rows": [1, 2, 3, 4]}
    GAME.start_round(state, GAME.deal_from_json(state, good))
    bad = copy.deepcopy(good)
    mutate(bad)
    with pytest.raises(RuleError) as err:
        GAME.start_round(state, GAME.deal_from_json(state, bad))
    assert err.value.rule == rule


def test_t2_1_deal_from_cards_refuses_a_card_twice() -> None:
    state = GAME.new_game(2, Take6Options())
    cards = [str(c) for c in range(1, 105)]
    cards[50] = "3"
    with pytest.raises(IllegalMove) as err:
        GAME.deal_from_cards(state, 0, cards)
    assert err.value.rule == "T-2.1" and "3" in err.value.message
    with pytest.raises(FormatError):
        GAME.deal_from_cards(state, 0, ["017", *cards[1:]])


# --- T-3 a turn ----------------------------------------------------------------------


def test_t3_1_choices_are_simultaneous_and_hidden() -> None:
    """T-3.1: every seat chooses; nothing is placed until all have; a choice is hidden from others."""
    state = start(3, {0: [25], 1: [35], 2: [45]}, [10, 20, 30, 40])
    state = GAME.apply(state, Play(1, 35))
    assert GAME.expected(state).seats == (0, 2)
    assert rows_of(state) == [[10], [20], [30], [40]]
    assert GAME.view(state, 0).chosen == (None, HIDDEN, None)
    assert GAME.view(state, 1).chosen == (None, 35, None)
    assert GAME.public_state(GAME.view(state, 0)) == GAME.public_state(GAME.view(state, 1))
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Play(1, state.hands[1][0]))
    assert err.value.rule == "T-3.1" and "already chosen" in err.value.message
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Play(0, 45))
    assert err.value.rule == "T-3.1" and "45" in err.value.message
    state = turn(state, {2: 45, 0: 25})
    assert rows_of(state) == [[10], [20, 25], [30, 35], [40, 45]]
    assert GAME.expected(state).seats == (0, 1, 2) and state.turn == 1


def test_t3_2_placement_lowest_first() -> None:
    """T-3.2: revealed cards are placed lowest first, whatever the order they were chosen in."""
    state = start(3, {0: [28], 1: [22], 2: [25]}, [10, 20, 30, 40])
    state = turn(state, {0: 28, 2: 25, 1: 22})
    assert rows_of(state)[1] == [20, 22, 25, 28]


def test_t3_3_smallest_difference() -> None:
    """T-3.3: a card follows the row whose last card is the highest still lower than it."""
    assert placement_target([[10], [20], [30], [40]], 35) == (2, "right")
    assert placement_target([[10, 33], [20], [30], [40]], 35) == (0, "right")
    assert placement_target([[10], [20], [30], [40]], 104) == (3, "right")
    assert placement_target([[10], [20], [30], [40]], 5) is None
    state = turn(start(2, {0: [35], 1: [11]}, [10, 20, 30, 40]), {0: 35, 1: 11})
    assert rows_of(state) == [[10, 11], [20], [30, 35], [40]]


def test_t3_4_the_sixth_card_takes_five() -> None:
    """T-3.4: a card going to a row of 5 takes those 5 (their bullheads) and starts the row."""
    state = start(2, {0: [11, 12, 13, 14, 15], 1: [50, 51, 52, 53, 54]}, [10, 20, 30, 40])
    for a, b in ((11, 50), (12, 51), (13, 52), (14, 53)):
        state = turn(state, {0: a, 1: b})
    assert rows_of(state)[0] == [10, 11, 12, 13, 14]
    state = turn(state, {0: 15, 1: 54})
    assert rows_of(state)[0] == [15]
    assert state.penalty == (
        sum(rule_bullheads(c) for c in (10, 11, 12, 13, 14)),
        sum(rule_bullheads(c) for c in (40, 50, 51, 52, 53)),
    )
    assert state.penalty == (11, 9) and state.totals == state.penalty
    assert rows_of(state)[3] == [54]


def test_t3_5_a_card_lower_than_every_row_takes_a_chosen_row() -> None:
    """T-3.5: the owner of a card lower than every row end chooses a row, takes it, and the card
    starts it; the choice comes when that card's turn to be placed comes, after lower cards."""
    state = start(3, {0: [3], 1: [5], 2: [12]}, [10, 20, 30, 40])
    state = turn(state, {0: 3, 1: 5, 2: 12})
    e = GAME.expected(state)
    assert (e.phase, e.seats, e.kind) == ("move", (0,), "take_row")
    assert rows_of(state) == [[10], [20], [30], [40]]
    assert GAME.legal_moves(state, 0) == tuple(TakeRow(0, r) for r in range(4))
    assert GAME.legal_moves(state, 1) == ()
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, TakeRow(1, 0))
    assert err.value.rule == "T-3.5"
    with pytest.raises(IllegalMove) as err:  # a play while the row is owed
        GAME.apply(state, Play(1, state.hands[1][0]))
    assert err.value.rule == "T-3.5"
    state = GAME.apply(state, TakeRow(0, 2))
    assert state.penalty == (3, 0, 0)
    # 5 now follows 3 (placed before it); 12 then goes to row 0
    assert rows_of(state) == [[10, 12], [20], [3, 5], [40]]
    assert GAME.expected(state).kind == "play"
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, TakeRow(0, 1))
    assert err.value.rule == "T-3.5"


def test_t3_5_second_low_card_follows_the_first() -> None:
    """T-3.5: two cards lower than every row: the lowest takes a row first (T-3.2), and the other,
    placed knowing that, now follows it."""
    state = start(3, {0: [2], 1: [1], 2: [50]}, [10, 20, 30, 40])
    state = turn(state, {0: 2, 1: 1, 2: 50})
    assert GAME.expected(state).seats == (1,)
    state = GAME.apply(state, TakeRow(1, 3))
    # 2 now fits after 1 (no second take_row); with row 3 taken, 50 follows 30
    assert rows_of(state) == [[10], [20], [30, 50], [1, 2]]
    assert state.penalty == (0, 3, 0)


def test_t3_6_round_of_ten_turns_and_penalties_add_up() -> None:
    """T-3.6: after 10 turns the round ends (phase deal, dealer rotates); totals add over rounds."""
    rng = random.Random(5)
    state = GAME.new_game(4, Take6Options())
    state = GAME.start_round(state, shuffled_deal(GAME, state, rng))
    dealer = state.dealer
    choose = random_chooser(GAME, rng)
    turns_seen = 0
    while GAME.expected(state).phase == "move":
        moves = [choose(state, s) for s in GAME.expected(state).seats]
        for move in moves:
            state = GAME.apply(state, move)
        turns_seen = state.turn
    assert turns_seen == 10 and GAME.expected(state).phase in ("deal", "over")
    first = state.totals
    assert first == state.penalty
    assert GAME.round_report(state)["penalty"] == list(state.penalty)
    assert GAME.expected_dealer(state) == (dealer + 1) % 4
    state = GAME.start_round(state, shuffled_deal(GAME, state, rng))
    assert state.penalty == (0, 0, 0, 0) and state.totals == first


# --- T-4 end -------------------------------------------------------------------------


def last_turn(totals: tuple[int, int]) -> Take6State:
    """2 players, one card each left: seat 0's 5 is below every row and takes row 0 (3 bullheads)."""
    state = start(2, {0: [5], 1: [50]}, [10, 20, 30, 40])
    return replace(state, totals=totals, hands=((5,), (50,)), hand_sizes=(1, 1), turn=9)


def test_t4_1_game_ends_after_the_round_a_total_exceeds_66() -> None:
    """T-4.1: exceeding 66 ends the game after the round; reaching exactly 66 does not."""
    state = GAME.apply(turn(last_turn((63, 0)), {0: 5, 1: 50}), TakeRow(0, 0))
    assert state.totals == (66, 0) and GAME.expected(state).phase == "deal"
    assert GAME.winners(state) is None
    state = GAME.apply(turn(last_turn((64, 0)), {0: 5, 1: 50}), TakeRow(0, 0))
    assert state.totals == (67, 0) and GAME.expected(state).phase == "over"
    with pytest.raises(IllegalMove) as err:
        GAME.start_round(state, shuffled_deal(GAME, state, random.Random(1)))
    assert err.value.rule == "T-4.1"


def test_t4_1_not_before_the_round_ends() -> None:
    """T-4.1: a total above 66 in mid-round does not end the game before the round's end."""
    state = start(2, {0: [5, 6], 1: [50, 51]}, [10, 20, 30, 40])
    state = replace(state, totals=(70, 0), hands=((5, 6), (50, 51)), hand_sizes=(2, 2), turn=8)
    state = GAME.apply(turn(state, {0: 5, 1: 50}), TakeRow(0, 0))
    assert GAME.expected(state).kind == "play"
    state = turn(state, {0: 6, 1: 51})
    assert GAME.expected(state).phase == "over" and GAME.winners(state) == (1,)


def test_t4_2_fewest_wins_ties_share() -> None:
    """T-4.2: fewest points wins; equal fewest share."""
    state = replace(start(3, {}, [1, 2, 3, 4]), stage="over", totals=(64, 3, 3))
    assert GAME.winners(state) == (1, 2)
    assert GAME.winners(replace(state, totals=(70, 3, 4))) == (1,)


# --- T-5 options ---------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 11))
def test_t5_1_tactic_deck_is_10n_plus_4(players: int) -> None:
    """T-5.1: with tactic only cards 1 … 10n+4 are used; every card is in play (no stock)."""
    state = GAME.new_game(players, Take6Options(tactic=True))
    layout = GAME.layout(state, 0)
    assert layout.deck == tuple(str(c) for c in range(1, 10 * players + 5))
    assert sum(len(h) for h in layout.hands) + len(layout.table) == len(layout.deck)
    assert len(GAME.layout(GAME.new_game(players, Take6Options()), 0).deck) == 104


def test_t5_1_tactic_refuses_cards_outside_its_deck() -> None:
    state = GAME.new_game(2, Take6Options(tactic=True))
    deal = {"dealer": 0, "hands": fill_hands(2, {}, [1, 2, 3, 50]), "rows": [1, 2, 3, 50]}
    with pytest.raises(IllegalMove) as err:
        GAME.start_round(state, GAME.deal_from_json(state, deal))
    assert err.value.rule == "T-5.1" and "50" in err.value.message
    started = start(2, {}, [1, 2, 3, 4], Take6Options(tactic=True))
    with pytest.raises(IllegalMove) as err:
        GAME.apply(started, Play(0, 60))
    assert err.value.rule == "T-5.1"


def logic_start(players: int, dealer: int, tactic: bool = False) -> Take6State:
    opts = Take6Options(tactic=tactic, logic=True)
    state = GAME.new_game(players, opts)
    size = deck_size(players, tactic)
    rows = [size, size - 1, size - 2, size - 3]
    deal = {"dealer": dealer, "rows": rows, "pool": list(range(1, size - 3))}
    return GAME.start_round(state, GAME.deal_from_json(state, deal))


def test_t5_2_logic_layout_is_all_face_up() -> None:
    """T-5.2: the first 4 positions start the rows, every other position lies face up; no hands."""
    state = GAME.new_game(3, Take6Options(logic=True))
    layout = GAME.layout(state, 1)
    assert layout.hands == ((), (), ()) and layout.table == tuple(range(104))
    deal = GAME.deal_from_cards(state, 1, [str(c) for c in range(1, 105)])
    assert deal.rows == (1, 2, 3, 4) and deal.pool == tuple(range(5, 105))
    assert GAME.deal_to_json(deal) == {"dealer": 1, "rows": [1, 2, 3, 4], "pool": list(range(5, 105))}


def test_t5_2_logic_drafting_order_and_hands() -> None:
    """T-5.2: picks go one at a time starting left of the dealer until each holds 10; the rest is out."""
    state = logic_start(3, dealer=1)
    order = []
    while GAME.expected(state).kind == "pick":
        e = GAME.expected(state)
        assert len(e.seats) == 1
        seat = e.seats[0]
        order.append(seat)
        wrong = (seat + 1) % 3
        with pytest.raises(IllegalMove) as err:
            GAME.apply(state, Pick(wrong, state.pool[0]))
        assert err.value.rule == "T-5.2"
        state = GAME.apply(state, Pick(seat, state.pool[0]))
    assert order == [2, 0, 1] * 10
    assert state.hands == (
        tuple(range(2, 31, 3)),
        tuple(range(3, 31, 3)),
        tuple(range(1, 31, 3)),
    )
    assert len(state.pool) == 100 - 30
    assert GAME.expected(state).kind == "play"
    # hands are public knowledge: the view keeps them; a pending choice stays hidden
    state = GAME.apply(state, Play(0, 2))
    view = GAME.view(state, 1)
    assert view.hands[0] == tuple(range(2, 31, 3)) and view.chosen[0] == HIDDEN
    assert view.hand_sizes[0] == 9
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Pick(1, state.pool[0]))
    assert err.value.rule == "T-5.2"


def test_t5_2_logic_pick_must_come_from_the_pool() -> None:
    state = logic_start(2, dealer=0)
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Pick(1, 104))  # a row card
    assert err.value.rule == "T-5.2"
    with pytest.raises(IllegalMove) as err:
        GAME.apply(state, Play(1, 5))  # no plays while drafting
    assert err.value.rule == "T-5.2"


def test_t5_2_logic_pool_must_hold_every_other_card() -> None:
    state = GAME.new_game(2, Take6Options(logic=True))
    deal = {"dealer": 0, "rows": [1, 2, 3, 4], "pool": list(range(5, 104))}
    with pytest.raises(IllegalMove) as err:
        GAME.start_round(state, GAME.deal_from_json(state, deal))
    assert err.value.rule == "T-5.2" and "104" in err.value.message
    with pytest.raises(FormatError):
        GAME.deal_from_json(state, {"dealer": 0, "rows": [1, 2, 3, 4], "hands": [[5]]})


def test_t5_3_profi_left_placement() -> None:
    """T-5.3: a card may go left of a row whose first card is higher, by smallest difference."""
    assert placement_target([[50], [60], [70], [80]], 45, profi=True) == (0, "left")
    assert placement_target([[50], [60], [70], [80]], 45, profi=False) is None
    assert placement_target([[10], [60], [70], [80]], 58, profi=True) == (1, "left")
    assert placement_target([[10], [60], [70], [80]], 30, profi=True) == (0, "right")
    state = start(2, {0: [45], 1: [90]}, [50, 60, 70, 80], Take6Options(profi=True))
    state = turn(state, {0: 45, 1: 90})
    assert rows_of(state) == [[45, 50], [60], [70], [80, 90]]


def test_t5_3_profi_tie_goes_right_and_the_manual_example() -> None:
    """T-5.3: equal difference goes right. The manual: a row ends with 13, another starts with 23:
    18 goes right of 13, then 21 goes left of 23."""
    rows = [[5, 13], [23, 30], [60], [90]]
    assert placement_target(rows, 18, profi=True) == (0, "right")
    state = start(2, {0: [18], 1: [21]}, [13, 23, 60, 90], Take6Options(profi=True))
    state = turn(state, {0: 18, 1: 21})
    assert rows_of(state) == [[13, 18], [21, 23], [60], [90]]


def test_t5_3_profi_sixth_card_on_the_left_and_no_place() -> None:
    """T-5.3: a sixth card on the left takes five (T-3.4); a card with no place takes a row (T-3.5)."""
    opts = Take6Options(profi=True)
    state = start(2, {0: [49, 48, 47, 46, 45], 1: [91, 92, 93, 94, 95]}, [50, 60, 70, 80], opts)
    for a, b in ((49, 91), (48, 92), (47, 93), (46, 94)):
        state = turn(state, {0: a, 1: b})
    assert rows_of(state)[0] == [46, 47, 48, 49, 50]
    state = turn(state, {0: 45, 1: 95})
    assert rows_of(state)[0] == [45] and state.penalty[0] == 1 + 1 + 1 + 1 + 3
    assert state.penalty[1] == 3 + 1 + 1 + 1 + 1 and rows_of(state)[3] == [95]
    # every row spans the card: nowhere to go
    assert placement_target([[10, 50], [20, 60], [5, 70], [30, 40]], 35, profi=True) is None


def test_t5_4_dealer_rotates_left() -> None:
    """T-5.4: any first dealer, then one seat left each round; a wrong dealer is refused."""
    state = GAME.new_game(3, Take6Options(logic=True))
    assert GAME.expected_dealer(state) is None
    state = logic_start(3, dealer=2)
    assert GAME.expected_dealer(state) == 0
    bad = {"dealer": 2, "rows": [1, 2, 3, 4], "pool": list(range(5, 105))}
    done = replace(state, stage="deal")
    with pytest.raises(IllegalMove) as err:
        GAME.start_round(done, GAME.deal_from_json(done, bad))
    assert err.value.rule == "T-5.4"


# --- partial knowledge ---------------------------------------------------------------


def test_partial_views_hide_hands_and_choices() -> None:
    state = start(3, {0: [25]}, [10, 20, 30, 40])
    view = GAME.view(state, 1)
    assert view.hands[0] is None and view.hands[2] is None and view.hands[1] == state.hands[1]
    with pytest.raises(IllegalMove) as err:  # a row card cannot be in a hidden hand
        GAME.apply(view, Play(0, 10))
    assert err.value.rule == "T-3.1"
    with pytest.raises(IllegalMove) as err:  # nor a card of this seat's own hand
        GAME.apply(view, Play(0, state.hands[1][0]))
    assert err.value.rule == "T-3.1"
    GAME.apply(view, Play(0, 25))


def test_commitments_then_reveal_place_the_same_as_full_knowledge() -> None:
    """T-3.1: a peer learns other seats' choices as commitments (Play(seat, None)); when all have
    chosen it waits in phase "reveal" and places the revealed cards like full knowledge does."""
    full = start(3, {0: [3], 1: [35], 2: [45]}, [10, 20, 30, 40])
    peer = GAME.view(full, 1)
    peer = GAME.apply(peer, Play(0, None))
    peer = GAME.apply(peer, Play(1, 35))
    peer = GAME.apply(peer, Play(2, None))
    e = GAME.expected(peer)
    assert (e.phase, e.seats) == ("reveal", (0, 2))
    with pytest.raises(IllegalMove):
        GAME.reveal(peer, ["35", "45"])  # 35 is seat 1's own choice
    peer = GAME.reveal(peer, ["3", "45"])
    full = turn(full, {0: 3, 1: 35, 2: 45})
    assert GAME.view(peer, 1) == GAME.view(full, 1)
    assert GAME.expected(peer).kind == "take_row"


# --- records -------------------------------------------------------------------------


def record_json(players: int, opts: Take6Options, seed: int) -> JSONObject:
    rng = random.Random(seed)
    _, rec = play_game(GAME, [f"p{i}" for i in range(players)], opts, random_chooser(GAME, rng), rng)
    return json.loads(rec.dumps())


def fault(raw: JSONObject) -> RecordFault:
    with pytest.raises(RecordFault) as err:
        replay(parse_record(raw))
    return err.value


@pytest.mark.parametrize("opts", ALL_OPTIONS, ids=str)
def test_record_round_trip(opts: Take6Options) -> None:
    """play_game → record text → replay gives the same totals, winners and round reports."""
    rng = random.Random(11)
    state, rec = play_game(GAME, ["a", "b", "c", "d"], opts, random_chooser(GAME, rng), rng)
    result = replay_text(rec.dumps())
    out = result.to_json()
    assert out["complete"] is True
    assert out["totals"] == list(state.totals) == list(GAME.totals(result.final_state))
    assert out["winners"] == list(GAME.winners(state) or ())
    assert out["rounds"][-1] == GAME.round_report(state)
    assert sum(sum(r["penalty"]) for r in out["rounds"]) == sum(state.totals)
    assert set(out["rounds"][0]) == {"dealer", "penalty", "rows"}
    first_deal = rec.to_json()["rounds"][0]["deal"]
    assert set(first_deal) == ({"dealer", "rows", "pool"} if opts.logic else {"dealer", "hands", "rows"})


def moves_of(raw: JSONObject, round_index: int = 0) -> list[dict[str, Any]]:
    return raw["rounds"][round_index]["moves"]


def deal_of(raw: JSONObject, round_index: int = 0) -> dict[str, Any]:
    return raw["rounds"][round_index]["deal"]


def test_record_fault_take_row_when_none_owed() -> None:
    raw = record_json(3, Take6Options(), 1)
    moves_of(raw).insert(1, {"seat": 0, "take_row": 1})
    err = fault(raw)
    assert (err.rule, err.round, err.move, err.seat) == ("T-3.5", 0, 1, 0)


def test_record_fault_missing_take_row() -> None:
    """A play while a take_row is owed is refused with T-3.5."""
    for seed in range(50):
        raw = record_json(3, Take6Options(), seed)
        moves = moves_of(raw)
        for index, move in enumerate(moves[:-1]):
            if "take_row" in move and "play" in moves[index + 1]:
                del moves[index]
                err = fault(raw)
                assert (err.rule, err.round, err.move) == ("T-3.5", 0, index)
                return
    pytest.fail("no take_row followed by a play in 50 games")


def test_record_fault_pick_out_of_turn() -> None:
    raw = record_json(3, Take6Options(logic=True), 2)
    first = moves_of(raw)[0]
    first["seat"] = (first["seat"] + 1) % 3
    err = fault(raw)
    assert (err.rule, err.move) == ("T-5.2", 0)


def test_record_fault_card_not_in_hand() -> None:
    raw = record_json(3, Take6Options(), 3)
    first = moves_of(raw)[0]
    other = (first["seat"] + 1) % 3
    first["play"] = deal_of(raw)["hands"][other][0]
    err = fault(raw)
    assert (err.rule, err.move, err.seat) == ("T-3.1", 0, first["seat"])


def test_record_fault_second_play_in_a_turn() -> None:
    raw = record_json(3, Take6Options(), 4)
    moves = moves_of(raw)
    seat = moves[0]["seat"]
    hand = [c for c in deal_of(raw)["hands"][seat] if c != moves[0]["play"]]
    moves[1] = {"seat": seat, "play": hand[0]}
    err = fault(raw)
    assert (err.rule, err.move, err.seat) == ("T-3.1", 1, seat)


@pytest.mark.parametrize("bad", [105, 0, -3, "17", True, [17]])
def test_record_fault_unknown_card(bad: object) -> None:
    raw = record_json(3, Take6Options(), 5)
    moves_of(raw)[0]["play"] = bad
    err = fault(raw)
    assert (err.rule, err.move) == ("format", 0)


def test_record_fault_hidden_play_never_revealed() -> None:
    """A record is full knowledge: a null (committed, never revealed) play leaves the turn waiting
    for its reveal, and the next move is refused (T-3.1)."""
    raw = record_json(3, Take6Options(), 5)
    moves_of(raw)[0]["play"] = None
    err = fault(raw)
    assert (err.rule, err.move) == ("T-3.1", 3)


def test_record_fault_unknown_key() -> None:
    raw = record_json(3, Take6Options(), 5)
    moves_of(raw)[0]["as"] = 6
    assert fault(raw).rule == "format"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d["hands"][0].pop(),
        lambda d: d["hands"][1].__setitem__(0, d["hands"][0][0]),
        lambda d: d["rows"].append(d["hands"][2].pop()),
    ],
)
def test_record_fault_bad_deal(mutate: Any) -> None:
    raw = record_json(3, Take6Options(), 6)
    mutate(deal_of(raw, 1))
    err = fault(raw)
    assert (err.rule, err.round, err.move) == ("T-2.1", 1, None)


def test_record_fault_wrong_dealer_rotation() -> None:
    raw = record_json(3, Take6Options(), 7)
    deal_of(raw, 1)["dealer"] = deal_of(raw, 0)["dealer"]
    err = fault(raw)
    assert (err.rule, err.round) == ("T-5.4", 1)


def test_record_fault_tactic_card() -> None:
    raw = record_json(2, Take6Options(tactic=True), 8)
    deal_of(raw)["rows"][0] = 60
    assert fault(raw).rule == "T-5.1"


# --- property tests over random games ------------------------------------------------

GAMES = st.fixed_dictionaries(
    {
        "players": st.integers(2, 10),
        "options": st.sampled_from(ALL_OPTIONS),
        "seed": st.integers(0, 2**32 - 1),
    }
)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def present_cards(state: Take6State) -> list[int]:
    cards = [c for hand in state.hands if hand is not None for c in hand]
    cards += [c for row in state.rows for c in row]
    cards += [c for c in state.chosen if c]
    cards += [c for c, _ in state.pending]
    cards += list(state.pool)
    return cards


@SETTINGS
@given(GAMES)
def test_random_games_keep_the_rules(game: dict[str, Any]) -> None:
    """Random legal games, every option combination, 2–10 players:

    * cards are conserved; the bullheads of the cards leaving the table equal the penalty added
      (T-1.1, T-3.4, T-3.5), totals are the sum of the round penalties (T-3.6);
    * the game ends after the first round in which a total exceeds 66 (T-4.1), winners per T-4.2;
    * every seat's view accepts every move the full state accepts, and a peer's state kept in
      parallel (own moves known, others' as commitments, then revealed) stays equal to its view;
    * the record replays to the same totals and winners.
    """
    n, opts = game["players"], game["options"]
    rng = random.Random(game["seed"])
    choose = random_chooser(GAME, rng)
    state = GAME.new_game(n, opts)
    rounds: list[tuple[Any, list[Any]]] = []
    round_totals: list[tuple[int, ...]] = []
    while (phase := GAME.expected(state).phase) != "over":
        assert phase == "deal"
        deal = shuffled_deal(GAME, state, rng)
        state = GAME.start_round(state, deal)
        rounds.append((deal, []))
        dealt = Counter(present_cards(state))
        assert sum(dealt.values()) == (10 * n + 4 if not opts.logic else deck_size(n, opts.tactic))
        assert max(dealt.values()) == 1
        peers = [GAME.view(state, s) for s in range(n)]
        taken: Counter[int] = Counter()
        while (expected := GAME.expected(state)).phase == "move":
            moves = [choose(state, s) for s in expected.seats]
            for move in moves:
                for s in range(n):  # partial knowledge never refuses what full knowledge accepts
                    GAME.apply(GAME.view(state, s), move)
                before = Counter(present_cards(state))
                penalty_before = sum(state.penalty)
                new = GAME.apply(state, move)
                after = Counter(present_cards(new))
                gone = before - after
                assert not after - before  # nothing appears from nowhere
                assert sum(BULLHEADS[c] for c in gone.elements()) == sum(new.penalty) - penalty_before
                taken += gone
                state = new
                rounds[-1][1].append(move)
                for s in range(n):
                    peers[s] = peer_apply(peers[s], s, move)
                    if GAME.expected(peers[s]).phase == "reveal":
                        hidden = GAME.expected(peers[s]).seats
                        peers[s] = GAME.reveal(peers[s], [str(last_choices(rounds[-1][1], n)[h]) for h in hidden])
                    if GAME.expected(peers[s]).phase != "reveal":
                        assert GAME.view(peers[s], s) == GAME.view(state, s)
                        assert GAME.public_state(peers[s]) == GAME.public_state(state)
                assert Counter(present_cards(state)) + taken == dealt
                for row in state.rows:
                    assert 1 <= len(row) <= 5 and list(row) == sorted(row)
        assert all(size == 0 for size in state.hand_sizes) and state.turn == 10
        round_totals.append(state.totals)
        assert sum(taken.values()) + sum(len(r) for r in state.rows) == 10 * n + 4
    assert all(max(t) <= 66 for t in round_totals[:-1]) and max(round_totals[-1]) > 66
    assert GAME.winners(state) == tuple(s for s in range(n) if state.totals[s] == min(state.totals))
    result = replay(record_from_moves(GAME, [f"p{i}" for i in range(n)], opts, rounds))
    assert result.complete and GAME.totals(result.final_state) == state.totals
    assert [r.report["dealer"] for r in result.rounds] == [(rounds[0][0].dealer + i) % n for i in range(len(rounds))]


def last_choices(moves: Sequence[Any], n: int) -> dict[int, int]:
    """The cards of the latest turn's plays, by seat."""
    found: dict[int, int] = {}
    for move in reversed(moves):
        if isinstance(move, Play) and move.seat not in found:
            assert move.card is not None
            found[move.seat] = move.card
            if len(found) == n:
                break
    return found


def peer_apply(peer: Take6State, seat: int, move: Any) -> Take6State:
    """A peer applies its own play with the card, others' plays as commitments."""
    if isinstance(move, Play) and move.seat != seat:
        return GAME.apply(peer, Play(move.seat, None))
    return GAME.apply(peer, move)


def test_public_state_is_the_same_for_every_view() -> None:
    for opts in ALL_OPTIONS:
        rng = random.Random(3)
        state = GAME.new_game(4, opts)
        state = GAME.start_round(state, shuffled_deal(GAME, state, rng))
        choose = random_chooser(GAME, rng)
        for _ in range(30):
            e = GAME.expected(state)
            if e.phase != "move":
                break
            state = GAME.apply(state, choose(state, e.seats[0]))
            public = GAME.public_state(state)
            assert all(GAME.public_state(GAME.view(state, s)) == public for s in range(4))
            json.dumps(public, sort_keys=True)


def test_move_json_round_trip() -> None:
    for move in (Play(0, 55), TakeRow(1, 2), Pick(2, 48), Play(3, None)):
        raw = GAME.move_to_json(move)
        assert GAME.move_from_json(raw) == move
    assert GAME.move_to_json(Play(0, 55)) == {"seat": 0, "play": 55}
    assert GAME.move_to_json(TakeRow(1, 2)) == {"seat": 1, "take_row": 2}
    assert GAME.move_to_json(Pick(2, 48)) == {"seat": 2, "pick": 48}
    for bad in ({"seat": 0}, {"seat": 0, "take_row": 4}, {"seat": "0", "play": 5}, {"seat": 0, "pick": 105}):
        with pytest.raises(FormatError):
            GAME.move_from_json(bad)
