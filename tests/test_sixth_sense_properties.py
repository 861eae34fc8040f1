"""Property tests: random legal 6th Sense games for 2-6 players under every option combination
(beginner x target x late_trump), checked against the rules (S-1 … S-8) at every move, plus the
bots. Rule ids refer to shared/rules/sixth-sense.md."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sixth_sense_helpers import GAME, deck_codes, options, view_move

from engine.api import RuleError
from engine.playout import play_game, random_chooser
from engine.record import replay, replay_text
from engine.sixth_sense import Play, Predict, SixthSenseState, Split
from lanplay.bots import bot_chooser
from lanplay.games import make_bot

RULE_ROUNDS = {6: 6, 5: 5, 4: 4, 3: 6, 2: 6}  # S-2.2
RULE_HAND_SIZE = {6: 11, 5: 13, 4: 14, 3: 14, 2: 15}  # S-2.3
RULE_BEGINNER = (6, 4, 3, 2, 1)  # S-8.1


def rule_points(prediction: str, tricks: int, beginner: bool) -> int:
    """S-7.2/S-7.3/S-8.1/S-3.3 written again from the rules file (not the engine's helper)."""
    value = int(prediction[1:])
    targets = (6, 9) if value == 6 else (value,)
    distance = min(abs(tricks - t) for t in targets)
    if beginner:
        return RULE_BEGINNER[distance] if distance < 5 else 0
    return tricks if distance == 0 else -distance


def hits(prediction: str, tricks: int) -> bool:
    value = int(prediction[1:])
    return tricks in ((6, 9) if value == 6 else (value,))


games = st.fixed_dictionaries(
    {
        "players": st.integers(2, 6),
        "beginner": st.booleans(),
        "target": st.sampled_from([None, 15]),
        "late_trump": st.booleans(),
        "seed": st.integers(0, 2**32 - 1),
    }
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_conservation(state: SixthSenseState, dealt: list[str], stock: list[str]) -> None:
    """S-2.3/S-2.4/S-3.2: hands + played + predictions + stock is exactly the deck, no card twice."""
    r = state.round
    assert r is not None
    cards = [c.code for h in r.hands if h is not None for c in h]
    cards += [c.code for c in r.played]
    cards += [p.code for p in r.predictions if p is not None]
    assert Counter(cards) == Counter(dealt)
    assert Counter(cards + stock) == Counter(deck_codes(state.players))
    assert r.hand_sizes == tuple(len(h) for h in r.hands if h is not None)


@SETTINGS
@given(games)
def test_random_games_keep_the_rules_and_views_agree(game: dict[str, Any]) -> None:
    """S-2…S-8 over random legal games, with every seat's partial view kept in parallel:

    * cards are conserved (S-2.3, S-2.4, S-3.2); trick counts add up (S-4.6, S-6.1, S-6.5);
    * points follow S-7.2/S-7.3/S-8.1, totals are the sum of round points, winners per S-7.4/S-8.2;
    * the dealer rotates (S-2.5) and the number of rounds is S-2.2's (without target);
    * a peer's view never refuses a move the full-knowledge check accepts, sees the same public
      state, waits for `reveal` with late trump (S-8.3) and ends each round in phase "unsettled".
    """
    n = game["players"]
    opts = options(game["beginner"], game["target"], game["late_trump"])
    rng = random.Random(game["seed"])
    state = GAME.new_game(n, opts)
    totals = [0] * n
    dealers: list[int] = []
    max_rounds = RULE_ROUNDS[n] if game["target"] is None else 3
    while GAME.expected(state).phase == "deal" and len(dealers) < max_rounds:
        dealer = GAME.expected_dealer(state)
        if dealer is None:
            dealer = rng.randrange(n)
        cards: list[str | None] = list(GAME.layout(state, dealer).deck)
        rng.shuffle(cards)
        deal = GAME.deal_from_cards(state, dealer, cards)
        state = GAME.start_round(state, deal)
        dealers.append(dealer)
        dealt = [c for h in GAME.deal_to_json(deal)["hands"] for c in h]  # type: ignore[attr-defined]
        stock = [c for c in deck_codes(n) if c not in dealt]
        assert len(dealt) == n * RULE_HAND_SIZE[n]
        r = state.round
        assert r is not None
        assert r.leader == (dealer + 1) % n  # S-2.5
        assert (r.trump is None) == game["beginner"]  # S-8.1
        views = [GAME.view(state, seat) for seat in range(n)]
        splits = 0
        while GAME.expected(state).phase == "move":
            expected = GAME.expected(state)
            moves = [rng.choice(GAME.legal_moves(state, seat)) for seat in expected.seats]
            for move in moves:
                state = GAME.apply(state, move)
                splits += isinstance(move, Split) and move.split
                for seat in range(n):
                    views[seat] = GAME.apply(views[seat], view_move(move, seat))
                    if GAME.expected(views[seat]).phase == "reveal":  # S-8.3: only with late trump
                        assert game["late_trump"] and not game["beginner"]
                        assert state.round is not None and state.round.trump is not None
                        views[seat] = GAME.reveal(views[seat], [state.round.trump.code])
                check_conservation(state, dealt, stock)
                if GAME.expected(state).phase == "move":
                    public = GAME.public_state(state)
                    for view in views:
                        assert GAME.expected(view) == GAME.expected(state)
                        assert GAME.public_state(view) == public
        r = state.round
        assert r is not None and r.points is not None
        assert len(r.trick_winners) == RULE_HAND_SIZE[n] - 1  # S-3.2: one card fewer
        assert sum(r.tricks) == sum(w is not None for w in r.trick_winners) + splits
        if n > 2:
            assert None not in r.trick_winners  # S-6.1: only a 2-player block leaves a trick unwon
        predictions = [p.code for p in r.predictions if p is not None]
        assert r.points == tuple(
            rule_points(p, t, game["beginner"]) for p, t in zip(predictions, r.tricks, strict=True)
        )
        totals = [a + b for a, b in zip(totals, r.points, strict=True)]
        assert GAME.totals(state) == tuple(totals)
        for seat, view in enumerate(views):
            assert GAME.expected(view).phase == "unsettled"
            assert view.round is not None and view.round.tricks == r.tricks
            assert view.round.predictions[seat] == r.predictions[seat]
    assert dealers == [(dealers[0] + i) % n for i in range(len(dealers))]  # S-2.5
    assert GAME.totals(state) == tuple(sum(p[s] for p in state.round_points) for s in range(n))
    over = GAME.expected(state).phase == "over"
    if game["target"] is None:
        assert over and len(dealers) == RULE_ROUNDS[n]  # S-2.2
    else:  # S-8.2: over exactly when someone reached the target at the end of a round
        assert over == (max(totals) >= game["target"])
        for earlier in range(1, len(dealers)):
            assert max(sum(p[s] for p in state.round_points[:earlier]) for s in range(n)) < game["target"]
    if over:
        best = max(totals)
        assert GAME.winners(state) == tuple(s for s in range(n) if totals[s] == best)  # S-7.4
    else:
        assert GAME.winners(state) is None


@SETTINGS
@given(games)
def test_replaying_a_written_record_gives_the_same_game(game: dict[str, Any]) -> None:
    """A record written by engine.playout.play_game replays (engine.record) to the same totals,
    winners and per-round reports, from the value and from the file text."""
    n = game["players"]
    opts = options(game["beginner"], game["target"], game["late_trump"])
    rng = random.Random(game["seed"])
    pick = random_chooser(GAME, rng)
    reports: dict[int, dict[str, object]] = {}

    def chooser(state: SixthSenseState, seat: int) -> Any:
        move = pick(state, seat)
        reports[state.rounds_started] = GAME.round_report(GAME.apply(state, move))
        return move

    final, record = play_game(GAME, [f"p{i}" for i in range(n)], opts, chooser, rng, max_rounds=8)
    for replayed in (replay(record), replay_text(record.dumps())):
        out = replayed.to_json()
        assert out["game"] == "sixth-sense"
        assert out["totals"] == list(GAME.totals(final))
        over = GAME.expected(final).phase == "over"
        assert out["complete"] is over
        assert out["winners"] == (list(w) if (w := GAME.winners(final)) is not None else None)
        assert out["rounds"] == [reports[i + 1] for i in range(len(record.rounds))]
        assert GAME.public_state(replayed.final_state) == GAME.public_state(final)


# --- an oracle written from the rules file --------------------------------------------------


def oracle_required_colour(trick: list[dict[str, Any]]) -> str | None:
    """S-4.2 with S-6.1: the led colour to follow, or None when the player is free."""
    if not trick:
        return None
    block = next((i for i, p in enumerate(trick) if "block" in p), None)
    if block is not None and trick[0]["play"] == trick[block]["block"]:
        return trick[block + 1]["play"][0] if block + 1 < len(trick) else None
    return str(trick[0]["play"][0])


def oracle_legal_plays(hand: list[str], trick: list[dict[str, Any]], seat: int) -> set[tuple[Any, ...]]:
    """S-4.2, S-6.1 (a 0 may block one card of this trick, not when leading, once per trick), S-6.3."""
    colour = oracle_required_colour(trick)
    playable = [c for c in hand if c[0] == colour] or hand
    out: set[tuple[Any, ...]] = set()
    for card in playable:
        for as_value in (6, 9) if card[1:] == "6" else (None,):
            out.add((seat, card, as_value, None))
        if card[1:] == "0" and trick and not any("block" in p for p in trick):
            out.update((seat, card, None, p["play"]) for p in trick)
    return out


def oracle_trick(trick: list[dict[str, Any]], trump: str | None) -> tuple[int | None, bool, bool]:
    """(winner, split owed, leader peeks) of a complete trick: S-4.5, S-5, S-6.1, S-6.2, S-6.4, S-6.5."""
    block = next((i for i, p in enumerate(trick) if "block" in p), None)
    out: set[int] = set()
    led = trick[0]["play"][0]
    if block is not None:
        target = next(i for i, p in enumerate(trick) if p["play"] == trick[block]["block"])
        out = {block, target}
        if target == 0:
            rest = [p for i, p in enumerate(trick) if i not in out]
            led = trick[block + 1]["play"][0] if block + 1 < len(trick) else (rest[0]["play"][0] if rest else None)
    counting = [(i, p) for i, p in enumerate(trick) if i not in out]
    if not counting:
        return None, False, False

    def value(p: dict[str, Any]) -> int:
        return int(p.get("as", p["play"][1:]))

    def rank(p: dict[str, Any]) -> int:
        return 2 if p["play"][0] == trump else 1 if p["play"][0] == led else 0

    reversal = sum(p["play"][1:] == "4" for _, p in counting) % 2 == 1
    if reversal:
        low = min(rank(p) for _, p in counting)
        lowest = min(value(p) for _, p in counting if rank(p) == low)
        winner = [p for _, p in counting if rank(p) == low and value(p) == lowest][-1]["seat"]
    else:
        top = max(rank(p) for _, p in counting)
        winner = max((p for _, p in counting if rank(p) == top), key=value)["seat"]
    split = any(p["play"][1:] == "12" for _, p in counting)
    peek = counting[0][0] == 0 and trick[0]["play"][1:] == "8" and winner != trick[0]["seat"]
    return winner, split, peek


@SETTINGS
@given(games)
def test_legal_moves_and_trick_outcomes_match_the_rules(game: dict[str, Any]) -> None:
    """S-4.2/S-6.1/S-6.3: the engine's legal plays are exactly those the rules allow, and `apply`
    refuses the others; S-4.5/S-6.1/S-6.2/S-6.4/S-6.5: every trick's winner, split and peek are those
    the rules give (an oracle written from the rules file)."""
    n = game["players"]
    opts = options(game["beginner"], game["target"], game["late_trump"])
    rng = random.Random(game["seed"])
    state = GAME.new_game(n, opts)
    cards: list[str | None] = list(GAME.layout(state, 0).deck)
    rng.shuffle(cards)
    state = GAME.start_round(state, GAME.deal_from_cards(state, rng.randrange(n), cards))
    trick: list[dict[str, Any]] = []
    while GAME.expected(state).phase == "move":
        expected = GAME.expected(state)
        r = state.round
        assert r is not None
        if expected.kind == "play":
            seat = expected.seats[0]
            hand = [c.code for c in r.hands[seat] or ()]
            engine = {
                (m.seat, m.card.code, m.as_value, m.block.code if m.block else None)
                for m in GAME.legal_moves(state, seat)
                if isinstance(m, Play)
            }
            assert engine == oracle_legal_plays(hand, trick, seat)
            # a few moves outside the legal set are refused
            wrong = [(seat, c, None, None) for c in hand if c[1:] != "6"] + [(seat, hand[0], None, hand[0])]
            for m in [w for w in wrong if w not in engine][:3]:
                raw = {"seat": m[0], "play": m[1]} | ({"block": m[3]} if m[3] else {})
                with pytest.raises(RuleError):
                    GAME.apply(state, GAME.move_from_json(raw))
        moves = [rng.choice(GAME.legal_moves(state, seat)) for seat in expected.seats]
        for move in moves:
            before = state
            state = GAME.apply(state, move)
            if not isinstance(move, Play):
                continue
            trick.append(GAME.move_to_json(move))
            if len(trick) == n:
                trump = None if game["beginner"] else before.round.trump.colour  # type: ignore[union-attr]
                winner, split, peek = oracle_trick(trick, trump)
                r = state.round
                assert r is not None and before.round is not None
                assert r.trick_winners[-1] == winner
                assert (r.split_owed is not None) == split and (not split or r.split_owed == winner)
                assert (len(r.peeks) - len(before.round.peeks)) == int(peek)
                if peek:
                    assert (r.peeks[-1].peeker, r.peeks[-1].target) == (trick[0]["seat"], winner)
                next_leader = winner if winner is not None else trick[0]["seat"]  # S-4.6 / S-6.1
                if r.points is None:
                    assert r.leader == next_leader
                trick = []


def test_bot_moves_are_legal_in_every_variant() -> None:
    """Every move the random and heuristic bots return is legal (full-knowledge check), in all variants."""
    for index, (beginner, late_trump) in enumerate([(False, False), (True, False), (False, True), (True, True)]):
        for players in (2, 3, 5, 6):
            rng = random.Random(index * 10 + players)
            bots = {
                s: make_bot("sixth-sense", "heuristic" if s % 2 else "random", rng.randrange(10**6))
                for s in range(players)
            }
            play_game(
                GAME,
                ["x"] * players,
                options(beginner, None, late_trump),
                legal_checked(bot_chooser(GAME, bots)),
                rng,
                max_rounds=1,
            )


def legal_checked(chooser: Any) -> Any:
    def choose(state: SixthSenseState, seat: int) -> Any:
        move = chooser(state, seat)
        assert move in GAME.legal_moves(state, seat), move
        return move

    return choose


def hit_rate(kind: str, rounds: int = 200) -> float:
    hit = total = 0
    for seed in range(rounds):
        rng = random.Random(seed)
        bots = {s: make_bot("sixth-sense", kind, seed * 4 + s) for s in range(4)}
        state, _ = play_game(
            GAME, ["a", "b", "c", "d"], options(), legal_checked(bot_chooser(GAME, bots)), rng, max_rounds=1
        )
        r = state.round
        assert r is not None and r.points is not None
        for prediction, tricks in zip(r.predictions, r.tricks, strict=True):
            assert prediction is not None
            hit += hits(prediction.code, tricks)
            total += 1
    return hit / total


def test_heuristic_bot_hits_its_prediction_more_often_than_random() -> None:
    """Over 200 seeded 4-player rounds (800 predictions) the heuristic bot hits its prediction
    (S-7.2) clearly more often than a random bot, and every move either returns is legal."""
    heuristic = hit_rate("heuristic")
    random_rate = hit_rate("random")
    assert heuristic >= 2 * random_rate and heuristic >= random_rate + 0.15, (heuristic, random_rate)


def test_predict_moves_are_the_hand() -> None:
    """S-3.2: with full knowledge the predict moves are exactly the cards of the hand."""
    rng = random.Random(0)
    state = GAME.new_game(3, options())
    cards: list[str | None] = list(GAME.layout(state, 0).deck)
    rng.shuffle(cards)
    state = GAME.start_round(state, GAME.deal_from_cards(state, 0, cards))
    r = state.round
    assert r is not None and r.hands[1] is not None
    moves = GAME.legal_moves(state, 1)
    assert all(isinstance(m, Predict) for m in moves)
    assert sorted(m.card.code for m in moves if isinstance(m, Predict) and m.card) == sorted(c.code for c in r.hands[1])
    assert not any(isinstance(m, Play) for m in moves)
