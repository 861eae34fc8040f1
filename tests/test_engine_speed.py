"""What the engine's speed work must not change, and the search support it adds.

* Cached derivations (`expected` is computed once per state and kept on it) give the same answers
  as a cold state, and a move object from `legal_moves` (interned) and an equal one parsed from the
  wire give the same next state: the fast path and the checked path agree.
* `fast_constructor` builds values equal to the dataclass's own constructor.
* `engine.shuffle.shuffle` is `random.Random.shuffle`, result and generator state alike (seeded
  deals, records and tests depend on it).
* `determinize(view, seat, ...)` of each game rebuilds the full state from a seat's view and the
  true hidden cards, and gives a playable state from any consistent sampled assignment.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from engine import sixes, sixth_sense, take6
from engine.api import FormatError, IllegalMove, RuleError
from engine.fastvalue import fast_constructor
from engine.games import get_game
from engine.playout import shuffled_deal
from engine.shuffle import shuffle

AnyState = Any

COMBOS: list[tuple[str, int, dict[str, object]]] = [
    *(
        ("sixth-sense", n, {"beginner": b, "late_trump": lt, "target": t})
        for n in (2, 3, 4, 6)
        for b in (False, True)
        for lt in (False, True)
        for t in (None, 25)
    ),
    *(
        ("take6", n, {"tactic": a, "logic": lo, "profi": p})
        for n in (2, 4, 7)
        for a in (False, True)
        for lo in (False, True)
        for p in (False, True)
    ),
    *(("sixes", n, {"chips": c}) for n in (3, 5, 8) for c in (1, 10)),
]
IDS = [f"{g}-{n}p-{'-'.join(k for k, v in o.items() if v) or 'plain'}" for g, n, o in COMBOS]


def cold(state: AnyState) -> AnyState:
    """An equal state without any cached derivation (a new object built by the dataclass)."""
    return replace(state)


def random_states(game_id: str, players: int, opts: dict[str, object], seed: int, rounds: int = 2) -> Iterator[Any]:
    """Every state of a few random full-knowledge rounds where some move is owed."""
    game = get_game(game_id)
    rng = random.Random(seed)
    state = game.new_game(players, game.options_from_json(opts))
    for _ in range(rounds):
        if game.expected(state).phase != "deal":
            return
        state = game.start_round(state, shuffled_deal(game, state, rng))
        while (expected := game.expected(state)).phase == "move":
            yield state
            moves = [rng.choice(game.legal_moves(state, seat)) for seat in expected.seats]
            for move in moves:
                state = game.apply(state, move)


@pytest.mark.parametrize(("game_id", "players", "opts"), COMBOS, ids=IDS)
def test_cached_and_checked_paths_agree(game_id: str, players: int, opts: dict[str, object]) -> None:
    """Over random games of every option combination: warm states (expected cached) and cold
    copies agree on expected and legal moves, and applying the interned legal move object or an
    equal move from the wire gives equal states with the same public state."""
    game = get_game(game_id)
    for state in random_states(game_id, players, opts, seed=players * 7 + len(opts)):
        fresh = cold(state)
        assert fresh == state
        assert game.expected(fresh) == game.expected(state)
        for seat in game.expected(state).seats:
            legal = game.legal_moves(state, seat)
            assert game.legal_moves(fresh, seat) == legal
            for move in legal:
                wire = game.move_from_json(game.move_to_json(move))
                fast = game.apply(state, move)
                checked = game.apply(cold(state), wire)
                assert fast == checked
                assert game.public_state(fast) == game.public_state(checked)
                assert game.expected(fast) == game.expected(cold(fast))


def test_fast_constructor_builds_equal_frozen_values() -> None:
    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: tuple[int, ...] = ()

    build = fast_constructor(Point)
    point = build(1, (2, 3))
    assert point == Point(1, (2, 3)) and hash(point) == hash(Point(1, (2, 3)))
    assert type(point) is Point and repr(point) == repr(Point(1, (2, 3)))
    assert build(4) == Point(4) and build(y=(5,), x=6) == Point(6, (5,))
    with pytest.raises(AttributeError):
        point.x = 2  # type: ignore[misc]
    game = sixth_sense.SIXTH_SENSE
    start = game.new_game(3, sixth_sense.SixthSenseOptions())
    r = game.start_round(start, shuffled_deal(game, start, random.Random(1))).round
    assert r is not None and sixth_sense._new_round(*(getattr(r, f) for f in r.__slots__)) == r


def test_fast_constructor_refuses_what_it_cannot_build() -> None:
    @dataclass(frozen=True)
    class NoSlots:
        x: int

    @dataclass(slots=True)
    class NotFrozen:
        x: int

    for cls in (NoSlots, NotFrozen, int):
        with pytest.raises(TypeError):
            fast_constructor(cls)


@pytest.mark.parametrize("length", [0, 1, 2, 40, 70, 104])
def test_playout_shuffle_is_the_library_shuffle(length: int) -> None:
    for seed in range(30):
        ours, theirs = list(range(length)), list(range(length))
        mine, library = random.Random(seed), random.Random(seed)
        shuffle(ours, mine)
        library.shuffle(theirs)
        assert ours == theirs
        assert mine.getstate() == library.getstate()


@pytest.mark.parametrize("length", [0, 1, 2, 3, 40, 70, 104])
def test_playout_shuffle_keeps_the_first_positions_of_the_library_shuffle(length: int) -> None:
    """`shuffle(cards, rng, keep)` (a deal that uses only part of its deck) gives the first `keep`
    positions the library's shuffle gives them and leaves the generator in the same state."""
    for keep in sorted({0, 1, 2, length // 2, max(length - 1, 0), length, length + 2}):
        for seed in range(10):
            ours, theirs = list(range(length)), list(range(length))
            mine, library = random.Random(seed), random.Random(seed)
            shuffle(ours, mine, keep)
            library.shuffle(theirs)
            assert ours[:keep] == theirs[:keep]
            assert sorted(ours) == list(range(length)) or keep < length  # the rest may repeat cards
            assert mine.getstate() == library.getstate()


# --- joint actions and engine-built deals ------------------------------------------------------


def sequential(game: Any, state: AnyState, moves: list[Any]) -> AnyState:
    for move in moves:
        state = game.apply(state, move)
    return state


def outcome(game: Any, run: Callable[[], AnyState]) -> tuple[object, ...]:
    """A state's full and public value, or the error's kind, rule, seat and message."""
    try:
        state = run()
    except RuleError as error:
        return (type(error).__name__, error.rule, error.seat, error.message)
    return ("state", state, game.public_state(state))


@pytest.mark.parametrize(("game_id", "players", "opts"), COMBOS, ids=IDS)
def test_joint_action_is_the_moves_applied_one_by_one(game_id: str, players: int, opts: dict[str, object]) -> None:
    """`apply_moves(state, moves)` (a simultaneous turn's joint action at once, 6 nimmt! T-3.1/T-3.2)
    gives the state `apply` gives move by move, over random games of every option combination, both
    for the owed seats' moves and for spoilt ones (a card not held, a seat twice, a seat missing, a
    move of the wrong kind, a seat that is not at the table): the same error, rule id and seat."""
    game = get_game(game_id)
    rng = random.Random(players * 11 + len(opts))
    for state in random_states(game_id, players, opts, seed=players * 5 + sum(map(bool, opts.values()))):
        expected = game.expected(state)
        moves = [rng.choice(game.legal_moves(state, seat)) for seat in expected.seats]
        joint = game.apply_moves(state, moves)
        assert joint == sequential(game, state, moves)
        assert game.public_state(joint) == game.public_state(sequential(game, state, moves))
        assert game.expected(joint) == game.expected(cold(joint))
        if game_id != "take6" or len(moves) < 2:
            continue
        first = moves[0]
        other_seat = moves[1].seat
        spoilt = [
            [take6.Play(first.seat, next(c for c in range(1, 105) if c not in state.hands[first.seat])), *moves[1:]],
            [*moves[:-1], moves[0]],  # a seat twice, the last seat missing
            moves[:-1],  # a seat missing
            [*moves[:-1], take6.TakeRow(moves[-1].seat, 0)],
            [take6.Play(players, first.card), *moves[1:]],
            [take6.Play(-1, first.card), *moves[1:]],
            [take6.Play(first.seat, None), *moves[1:]],
            [*moves, take6.Play(other_seat, moves[1].card)],  # one move too many
        ]
        for bad in spoilt:
            joint_outcome = outcome(game, lambda: game.apply_moves(state, bad))  # noqa: B023
            assert joint_outcome == outcome(game, lambda: sequential(game, state, bad))  # noqa: B023


def test_joint_action_error_names_the_seat_and_rule() -> None:
    """T-3.1: a joint action with a card its seat does not hold is refused for that seat."""
    game = take6.TAKE6
    start = game.new_game(4, take6.Take6Options())
    state = game.start_round(start, shuffled_deal(game, start, random.Random(5)))
    moves = [game.legal_moves(state, seat)[0] for seat in range(4)]
    foreign = state.hands[3][0]  # seat 3's card, played by seat 2
    with pytest.raises(IllegalMove) as refused:
        game.apply_moves(state, [*moves[:2], take6.Play(2, foreign), moves[3]])
    assert refused.value.rule == "T-3.1" and refused.value.seat == 2
    assert f"card {foreign} is in seat 3's hand" in str(refused.value) or "not in seat 2's hand" in str(refused.value)
    with pytest.raises(IllegalMove) as twice:
        game.apply_moves(state, [moves[0], moves[0], moves[2], moves[3]])
    assert twice.value.rule == "T-3.1" and twice.value.seat == 0 and "already chosen" in twice.value.message


@pytest.mark.parametrize(("game_id", "players", "opts"), COMBOS, ids=IDS)
def test_engine_built_deal_is_the_deal_of_the_shuffled_cards(
    game_id: str, players: int, opts: dict[str, object]
) -> None:
    """`deal_shuffled` (6 nimmt!: built from the numbers, unchecked) is `deal_from_cards` of the
    layout's deck shuffled by the same generator, which ends in the same state."""
    game = get_game(game_id)
    state = game.new_game(players, game.options_from_json(opts))
    for seed in range(15):
        dealer = seed % players
        ours, theirs = random.Random(seed), random.Random(seed)
        cards: list[str | None] = list(game.layout(state, dealer).deck)
        theirs.shuffle(cards)
        deal = game.deal_shuffled(state, dealer, ours)
        assert deal == game.deal_from_cards(state, dealer, cards)
        assert ours.getstate() == theirs.getstate()
        assert game.start_round(state, deal) == game.start_round(state, game.deal_from_cards(state, dealer, cards))


@pytest.mark.parametrize("players", [2, 4, 10])
def test_take6_engine_deal_is_started_like_an_unknown_one(players: int) -> None:
    """T-2.1: `start_round` trusts a deal `deal_shuffled` made for this very table (it knows it
    dealt the deck, hands sorted), and starts the same round from an equal deal built by hand
    (checked card by card, hands sorted); the deal of another table is checked like any other."""
    game = take6.TAKE6
    for tactic in (False, True):
        state = game.new_game(players, take6.Take6Options(tactic=tactic))
        for seed in range(5):
            deal = game.deal_shuffled(state, seed % players, random.Random(seed))
            by_hand = take6.Take6Deal(deal.dealer, deal.rows, tuple(tuple(reversed(h)) for h in deal.hands))  # type: ignore[arg-type]
            started = game.start_round(state, deal)
            assert started == game.start_round(state, by_hand) == game.start_round(state, replace(deal))
            assert all(hand == tuple(sorted(hand)) for hand in started.hands)  # type: ignore[arg-type]
            assert game.expected(started) == game.expected(cold(started))
        other = game.new_game(players + 1 if players < 10 else players - 1, take6.Take6Options(tactic=tactic))
        foreign = game.deal_shuffled(other, 0, random.Random(1))
        with pytest.raises(IllegalMove) as refused:
            game.start_round(state, foreign)
        assert refused.value.rule in ("T-2.1", "T-5.1")  # hands of another size, or cards beyond the deck
        assert outcome(game, lambda: game.start_round(state, foreign)) == outcome(  # noqa: B023
            game, lambda: game.start_round(state, replace(foreign))  # noqa: B023
        )


# --- determinize -------------------------------------------------------------------------------

Hidden = dict[str, Any]


def true_hidden(game_id: str, state: AnyState, view: AnyState) -> Hidden:
    """The hidden part of `state` that `view` lacks, as determinize's keyword arguments."""
    if game_id == "sixth-sense":
        r, v = state.round, view.round
        out: Hidden = {"hands": {s: r.hands[s] for s, h in enumerate(v.hands) if h is None}}
        out["predictions"] = {
            s: r.predictions[s] for s in range(state.players) if v.predicted[s] and v.predictions[s] is None
        }
        hidden_trump = v.trump is None and view.options.late_trump and not view.options.beginner
        out["trump"] = r.trump if hidden_trump else None
        return out
    if game_id == "take6":
        return {
            "hands": {s: state.hands[s] for s, h in enumerate(view.hands) if h is None},
            "chosen": {s: state.chosen[s] for s, c in enumerate(view.chosen) if c == take6.HIDDEN},
        }
    return {"hands": {s: state.round.hands[s] for s, h in enumerate(view.round.hands) if h is None}}


DETERMINIZE: dict[str, Callable[..., Any]] = {
    "sixth-sense": sixth_sense.determinize,
    "take6": take6.determinize,
    "sixes": sixes.determinize,
}
UNSEEN: dict[str, Callable[..., tuple[Any, ...]]] = {
    "sixth-sense": sixth_sense.unseen_cards,
    "take6": take6.unseen_cards,
    "sixes": sixes.unseen_cards,
}


def sampled_hidden(game_id: str, view: AnyState, seat: int, rng: random.Random) -> Hidden:
    """A random assignment of unseen cards of the right sizes (ignoring what play revealed)."""
    pool = list(UNSEEN[game_id](view, seat))
    rng.shuffle(pool)
    out: Hidden = {}
    if game_id == "sixth-sense":  # S-4.2: no card of a colour its seat showed it lacks
        r = view.round
        out["hands"] = {}
        for s in sorted((s for s, h in enumerate(r.hands) if h is None), key=lambda s: -len(r.voids[s])):
            fits = [card for card in pool if card.colour not in r.voids[s]][: r.hand_sizes[s]]
            if len(fits) < r.hand_sizes[s]:
                return sampled_hidden(game_id, view, seat, rng)  # an unlucky draw: draw again
            out["hands"][s] = fits
            pool = [card for card in pool if card not in fits]
        out["predictions"] = {
            s: pool.pop() for s in range(view.players) if r.predicted[s] and r.predictions[s] is None
        }
        hidden_trump = r.trump is None and view.options.late_trump and not view.options.beginner
        out["trump"] = pool.pop() if hidden_trump else None
    elif game_id == "take6":
        out["hands"] = {
            s: [pool.pop() for _ in range(view.hand_sizes[s])] for s, h in enumerate(view.hands) if h is None
        }
        out["chosen"] = {
            s: (rng.choice(view.hands[s]) if view.hands[s] is not None else pool.pop())
            for s, c in enumerate(view.chosen)
            if c == take6.HIDDEN
        }
    else:
        r = view.round
        out["hands"] = {s: [pool.pop() for _ in range(r.hand_sizes[s])] for s, h in enumerate(r.hands) if h is None}
    return out


@pytest.mark.parametrize(("game_id", "players", "opts"), COMBOS, ids=IDS)
def test_determinize_rebuilds_the_state_and_plays_on(game_id: str, players: int, opts: dict[str, object]) -> None:
    game = get_game(game_id)
    determinize = DETERMINIZE[game_id]
    rng = random.Random(5)
    for index, state in enumerate(random_states(game_id, players, opts, seed=11, rounds=1)):
        for seat in range(players):
            view = game.view(state, seat)
            rebuilt = determinize(view, seat, **true_hidden(game_id, state, view))
            assert rebuilt == state
            assert game.public_state(rebuilt) == game.public_state(state)
        if index % 7:
            continue
        seat = game.expected(state).seats[0]
        view = game.view(state, seat)
        sample = determinize(view, seat, **sampled_hidden(game_id, view, seat, rng))
        assert game.public_state(sample) == game.public_state(state)
        while (expected := game.expected(sample)).phase == "move":  # the engine plays it to the end
            moves = [rng.choice(game.legal_moves(sample, s)) for s in expected.seats]
            for move in moves:
                sample = game.apply(sample, move)
        assert expected.phase in ("deal", "over")


def some_view(game_id: str, opts: dict[str, object]) -> tuple[AnyState, AnyState, int]:
    state = next(s for i, s in enumerate(random_states(game_id, 3, opts, seed=3, rounds=1)) if i == 4)
    seat = get_game(game_id).expected(state).seats[0]
    return state, get_game(game_id).view(state, seat), seat


@pytest.mark.parametrize("game_id", ["sixth-sense", "take6", "sixes"])
def test_determinize_names_a_bad_assignment(game_id: str) -> None:
    state, view, seat = some_view(game_id, {})
    hidden = true_hidden(game_id, state, view)
    determinize = DETERMINIZE[game_id]
    other = next(iter(hidden["hands"]))
    own_card = (view.round.hands if game_id != "take6" else view.hands)[seat][0]
    bad_hands = [
        {**hidden["hands"], other: (own_card, *hidden["hands"][other][1:])},  # a card the seat holds
        {**hidden["hands"], other: hidden["hands"][other][1:]},  # one card short
        {s: h for s, h in hidden["hands"].items() if s != other},  # a seat left out
    ]
    if game_id == "sixth-sense":
        r = view.round
        voided = {s: r.voids[s] for s in hidden["hands"] if r.voids[s]}
        for s, colours in voided.items():  # S-4.2: a colour the seat showed it lacks
            lacking = next(c for c in sixth_sense.unseen_cards(view, seat) if c.colour in colours)
            if lacking not in hidden["hands"][s]:
                bad_hands.append({**hidden["hands"], s: (lacking, *hidden["hands"][s][1:])})
    for hands in bad_hands:
        with pytest.raises(FormatError, match="determinize"):
            determinize(view, seat, **{**hidden, "hands": hands})


def test_fast_constructor_fills_caches_when_asked() -> None:
    """With caches=True the init=False fields come last as arguments: a value is built with its
    cache filled; the cache stays outside equality, and defaults to its default when not given."""

    @dataclass(frozen=True, slots=True)
    class Counted:
        x: int
        _count: int | None = field(default=None, init=False, repr=False, compare=False)

    build = fast_constructor(Counted, caches=True)  # type: ignore[call-arg]
    filled = build(1, 7)  # type: ignore[call-arg]
    assert filled == Counted(1) and filled._count == 7 and repr(filled) == repr(Counted(1))
    assert build(2)._count is None and build(x=3, _count=4)._count == 4  # type: ignore[call-arg]
    assert fast_constructor(Counted)(5)._count is None
    with pytest.raises(TypeError):
        fast_constructor(Counted)(5, 6)  # type: ignore[call-arg]  # without caches: not an argument


def rule_plays(state: sixth_sense.SixthSenseState, seat: int) -> list[sixth_sense.Play]:
    """The plays of `seat` as the rules list them, card by card in hand order: S-4.2 follow the
    led colour if possible, S-6.3 the 6/9 card as 6 and as 9, S-6.1 a 0 may also block any card
    of a trick that has no block yet. The oracle `legal_moves` must match, order included."""
    r = state.round
    assert r is not None
    hand = r.hands[seat]
    assert hand is not None
    colour = sixth_sense.required_colour(r.trick)
    following = [card for card in hand if card.colour == colour]
    plays: list[sixth_sense.Play] = []
    for card in following or hand:
        if card.value == sixth_sense.SIX_NINE:
            plays += [sixth_sense.Play(seat, card, 6), sixth_sense.Play(seat, card, 9)]
        else:
            plays.append(sixth_sense.Play(seat, card))
        if card.value == sixth_sense.BLOCK and r.trick and all(p.block is None for p in r.trick):
            plays += [sixth_sense.Play(seat, card, None, p.card) for p in r.trick]
    return plays


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_sixth_sense_legal_plays_are_the_rules_in_hand_order(players: int) -> None:
    """Over many random rounds (blocks, 6/9 cards, void colours among them), every play
    `legal_moves` offers is what the rules allow, in hand order, and each applies."""
    game = sixth_sense.SIXTH_SENSE
    blocks = 0
    for seed in range(6):
        for state in random_states("sixth-sense", players, {}, seed=seed, rounds=2):
            expected = game.expected(state)
            if expected.kind != "play":
                continue
            seat = expected.seats[0]
            legal = game.legal_moves(state, seat)
            assert list(legal) == rule_plays(state, seat)
            blocks += sum(1 for move in legal if isinstance(move, sixth_sense.Play) and move.block is not None)
            for move in legal:
                game.apply(state, move)
    assert blocks > 0  # the block plays were among those checked


def test_sixth_sense_deal_from_cards_reads_known_unknown_and_bad_cards() -> None:
    """A fully known shuffle, one with a hand unknown to this peer (None), and one with a bad
    code: the one-pass reading of a known deal gives the deal its JSON form describes, a hidden
    hand is None with its size kept, and a bad code is named (P-4: a peer knows only its hand)."""
    game = sixth_sense.SIXTH_SENSE
    for options in (sixth_sense.SixthSenseOptions(), sixth_sense.SixthSenseOptions(beginner=True)):
        state = game.new_game(4, options)
        layout = game.layout(state, 0)
        cards: list[str | None] = list(layout.deck)
        random.Random(5).shuffle(cards)
        deal = game.deal_from_cards(state, 0, cards)
        assert deal == game.deal_from_json(state, game.deal_to_json(deal))
        assert deal.hands == tuple(tuple(sixth_sense.Card.parse(cards[p]) for p in hand) for hand in layout.hands)
        hidden = list(cards)
        for position in layout.hands[2]:
            hidden[position] = None
        partial = game.deal_from_cards(state, 0, hidden)
        assert partial.hands[2] is None and partial.hand_sizes == deal.hand_sizes
        assert partial.hands[:2] + partial.hands[3:] == deal.hands[:2] + deal.hands[3:]
        assert partial.trump == deal.trump
        bad = list(cards)
        bad[layout.hands[1][3]] = "X9"
        with pytest.raises(FormatError, match="X9"):
            game.deal_from_cards(state, 0, bad)


@pytest.mark.parametrize("opts", [{}, {"beginner": True}, {"late_trump": True}], ids=["plain", "beginner", "late"])
@pytest.mark.parametrize("players", [2, 4, 6])
def test_sixth_sense_apply_accepts_exactly_the_legal_plays(players: int, opts: dict[str, object]) -> None:
    """The play path of `apply` (S-4.1 card held, S-6.3 declaration, S-6.1 block, S-4.2 follow
    the led colour) accepts a play exactly when `legal_moves` offers it, over every card of the
    mover's hand with every declaration and block target, in random rounds; a refused play is
    refused alike by a cold copy (same rule, seat and message), an accepted one gives the state
    a cold copy gives for the equal move from the wire."""
    game = sixth_sense.SIXTH_SENSE
    refused_rules: set[str] = set()
    for index, state in enumerate(random_states("sixth-sense", players, opts, seed=players + len(opts), rounds=1)):
        expected = game.expected(state)
        if expected.kind != "play" or index % 3:
            continue
        seat = expected.seats[0]
        r = state.round
        legal = set(game.legal_moves(state, seat))
        targets = [None, *(p.card for p in r.trick), next(c for c in r.hands[seat])]
        for card in r.hands[seat]:
            for as_value in (None, 6, 9):
                for block in targets:
                    move = sixth_sense.Play(seat, card, as_value, block)
                    warm = outcome(game, lambda: game.apply(state, move))  # noqa: B023
                    wire = game.move_from_json(game.move_to_json(move))
                    assert warm == outcome(game, lambda: game.apply(cold(state), wire))  # noqa: B023
                    assert (warm[0] == "state") == (move in legal), move
                    if warm[0] != "state":
                        refused_rules.add(str(warm[1]))
    assert {"S-6.3", "S-6.1"} <= refused_rules  # wrong declarations and blocks were among those tried
