"""The expert bots (lanplay/bots/expert.py with each game's lanplay/games/GAME/search.py): legal moves from a
seat's view alone under every option, worlds consistent with what the seat knows, the obvious move in hand-made
positions, and the same move for the same seed and view. Fixed sample counts keep these fast and deterministic."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import replace
from typing import Any, NoReturn

import pytest

from engine.api import Game
from engine.sixes import DECK, SIXES, SixesOptions, SixesRound, SixesState, on_table
from engine.sixes import Pass as SixesPass
from engine.sixes import Play as SixesPlay
from engine.sixth_sense import (
    SIXTH_SENSE,
    Card,
    Peek,
    Play,
    Round,
    SixthSenseOptions,
    SixthSenseState,
    deck_for,
)
from engine.take6 import TAKE6, Take6Options, Take6State
from engine.take6 import Play as Take6Play
from lanplay.bots import BOT_KINDS, BOT_LEVELS, NORMAL_BUDGET, RandomBot
from lanplay.bots.expert import BUDGET_ENV, DEFAULT_BUDGET, ExpertBot, budget_from_env, deal_hidden
from lanplay.games import make_bot, searcher_for
from lanplay.games.sixes.search import choices_by_seat, log_likelihood

AnyGame = Game[Any, Any, Any, Any]


class Hidden:
    """Stands in for a field the seat may not know: any use of it but `is` fails the test."""

    def _touched(self, *args: object) -> NoReturn:
        raise AssertionError("the bot read a hidden field of the state")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _touched  # type: ignore[assignment]
    __hash__ = __bool__ = __iter__ = __len__ = __contains__ = __getitem__ = _touched  # type: ignore[assignment]

    def __getattr__(self, name: str) -> NoReturn:
        self._touched()


HIDDEN = Hidden()


def _poison(view_values: tuple[Any, ...], full_values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The view's values, with every entry the view hides (None there, known in the full state) a trap."""
    return tuple(HIDDEN if v is None and f is not None else v for v, f in zip(view_values, full_values, strict=True))


def trapped_view(game: AnyGame, state: Any, seat: int) -> Any:
    """`game.view(state, seat)` where each hidden field holds a trap instead of None."""
    view = game.view(state, seat)
    if isinstance(view, SixthSenseState) and view.round is not None:
        r, full = view.round, state.round
        trump = HIDDEN if r.trump is None and full.trump is not None else r.trump
        hands = _poison(r.hands, full.hands)
        predictions = _poison(r.predictions, full.predictions)
        return replace(view, round=replace(r, hands=hands, predictions=predictions, trump=trump))
    if isinstance(view, Take6State):
        return replace(view, hands=_poison(view.hands, state.hands))
    if isinstance(view, SixesState) and view.round is not None:
        return replace(view, round=replace(view.round, hands=_poison(view.round.hands, state.round.hands)))
    return view


def random_states(game: AnyGame, players: int, options: Any, rng: random.Random, count: int) -> list[tuple[Any, int]]:
    """`count` (state, seat) pairs where `seat` owes a move, reached by random play from fresh deals."""
    from engine.playout import shuffled_deal

    out: list[tuple[Any, int]] = []
    while len(out) < count:
        state = game.new_game(players, options)
        state = game.start_round(state, shuffled_deal(game, state, rng))
        steps = rng.randrange(60)
        for _ in range(steps):
            expected = game.expected(state)
            if expected.phase != "move":
                break
            for seat in expected.seats:
                state = game.apply(state, rng.choice(game.legal_moves(state, seat)))
        expected = game.expected(state)
        if expected.phase == "move" and game.legal_moves(state, expected.seats[0]):
            out.append((state, expected.seats[0]))
    return out


SIXTH_SENSE_CASES = [
    (players, SixthSenseOptions(beginner=b, late_trump=lt))
    for b in (False, True)
    for lt in (False, True)
    for players in ((2, 5) if b == lt else (3, 4, 6))
]
TAKE6_CASES = [
    (players, Take6Options(t, lg, p)) for t in (False, True) for lg in (False, True) for p in (False, True)
    for players in ((2, 5) if t == p else (3,))
]  # fmt: skip
SIXES_CASES = [(players, SixesOptions(chips)) for players, chips in ((3, 1), (5, 10), (8, 2))]
ALL_CASES = (
    [(SIXTH_SENSE, p, o) for p, o in SIXTH_SENSE_CASES]
    + [(TAKE6, p, o) for p, o in TAKE6_CASES]
    + [(SIXES, p, o) for p, o in SIXES_CASES]
)


@pytest.mark.parametrize(("game", "players", "options"), ALL_CASES, ids=lambda v: str(getattr(v, "id", v)))
def test_only_legal_moves_and_only_from_the_view(game: AnyGame, players: int, options: Any) -> None:
    """Over random states of every option combination the expert's move is legal in the full
    state (S-4.2, T-3.1, X-2.3/X-2.4 …), and the bot never touches what its seat cannot see."""
    rng = random.Random(f"{game.id} {players} {options}")
    for state, seat in random_states(game, players, options, rng, 4):
        bot = ExpertBot(searcher_for(game.id), seed=rng.randrange(1000), samples=1)
        move = bot.choose(game, trapped_view(game, state, seat), seat)
        assert move in game.legal_moves(state, seat)
        game.apply(state, move)


@pytest.mark.parametrize(("game", "players", "options"), ALL_CASES, ids=lambda v: str(getattr(v, "id", v)))
def test_worlds_agree_with_the_view(game: AnyGame, players: int, options: Any) -> None:
    """A sampled world keeps the seat's own cards and the table, gives every other seat as many
    cards as it holds, no card twice, and no seat a colour (S-4.2) or card (X-2.4) it showed it lacks."""
    rng = random.Random(f"worlds {game.id} {players} {options}")
    searcher = searcher_for(game.id)
    for state, seat in random_states(game, players, options, rng, 4):
        view = game.view(state, seat)
        world = searcher.sample(view, seat, rng)
        if game is SIXTH_SENSE:
            r, w = view.round, world.round
            assert w.hands[seat] == r.hands[seat] and w.played == r.played and w.trick == r.trick
            for s in range(players):
                if s != seat:
                    assert not any(c.colour in r.voids[s] for c in w.hands[s])
                    predicted_in_world = not r.predicted[s]  # the world makes a missing prediction
                    assert len(w.hands[s]) == r.hand_sizes[s] - predicted_in_world
            cards = [c for h in w.hands for c in h] + [p for p in w.predictions if p is not None] + list(w.played)
            assert len(cards) == len(set(cards))
            assert w.trump is not None or options.beginner
        elif game is TAKE6:
            for s in range(players):
                if s != seat and world.hands[s] is not None:
                    assert not any(world.out >> c & 1 for c in world.hands[s])
            assert world.hands[seat] == view.hands[seat] or world.stage != "play"
        else:
            r, w = view.round, world.round
            lacks = r.lacks or (frozenset(),) * players
            for s in range(players):
                assert len(w.hands[s]) == r.hand_sizes[s]
                assert not set(w.hands[s]) & lacks[s]
            held = [c for h in w.hands for c in h]
            assert len(held) == len(set(held))
            assert sorted(held + [c for c in DECK if on_table(r.columns, c)]) == sorted(DECK)


@pytest.mark.parametrize("game", [SIXTH_SENSE, TAKE6, SIXES], ids=lambda g: g.id)
def test_same_seed_and_view_same_move(game: AnyGame) -> None:
    """The move depends on the seed and the view only: not on the bot's earlier decisions."""
    players = {SIXTH_SENSE.id: 4, TAKE6.id: 4, SIXES.id: 5}[game.id]
    rng = random.Random(5)
    states = random_states(game, players, game.options_from_json({}), rng, 6)
    used = ExpertBot(searcher_for(game.id), seed=11, samples=3)
    for state, seat in states:
        view = game.view(state, seat)
        first = ExpertBot(searcher_for(game.id), seed=11, samples=3).choose(game, view, seat)
        assert ExpertBot(searcher_for(game.id), seed=11, samples=3).choose(game, view, seat) == first
        assert used.choose(game, view, seat) == first  # after other decisions too


def test_make_bot_offers_the_expert_and_reads_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    assert BOT_LEVELS == ("easy", "normal", "expert") and set(BOT_LEVELS) < set(BOT_KINDS)
    monkeypatch.setenv(BUDGET_ENV, "0.1")
    bot = make_bot("take6", "expert", 3)
    assert isinstance(bot, ExpertBot) and bot.name == "expert" and bot.budget == 0.1
    assert isinstance(make_bot("sixes", "expert", 3, budget=0.5), ExpertBot)
    monkeypatch.setenv(BUDGET_ENV, "soon")
    with pytest.raises(ValueError, match=BUDGET_ENV):
        budget_from_env()
    with pytest.raises(ValueError, match="expert"):
        make_bot("take6", "grandmaster")
    # the levels: easy is a random player (as "random"), normal the search at a small budget that
    # LANPLAY_BOT_BUDGET (the expert's) does not change
    assert isinstance(make_bot("sixes", "easy", 3), RandomBot) and isinstance(make_bot("sixes", "random", 3), RandomBot)
    normal = make_bot("sixth-sense", "normal", 3)
    assert isinstance(normal, ExpertBot) and normal.budget == NORMAL_BUDGET < DEFAULT_BUDGET
    with pytest.raises(ValueError, match="at least 1"):
        ExpertBot(searcher_for("take6"), samples=0)


def test_only_the_sixth_sense_prediction_takes_more_than_one_budget() -> None:
    """S-3.1: the prediction, once a round, may use more search time; every other decision one budget,
    and never so much that the expert's 0.5 s goal falls at the default budget."""
    from engine.playout import shuffled_deal
    from engine.sixth_sense import Predict

    state = SIXTH_SENSE.new_game(4, SixthSenseOptions())
    state = SIXTH_SENSE.start_round(state, shuffled_deal(SIXTH_SENSE, state, random.Random(2)))
    seat = SIXTH_SENSE.expected(state).seats[0]
    share = searcher_for(SIXTH_SENSE.id).budget_share(SIXTH_SENSE.legal_moves(state, seat))
    assert share > 1 and share * DEFAULT_BUDGET < 0.5
    for game, players in ((SIXTH_SENSE, 4), (TAKE6, 4), (SIXES, 5)):
        for later, other in random_states(game, players, game.options_from_json({}), random.Random(3), 8):
            moves = game.legal_moves(later, other)
            if moves and not isinstance(moves[0], Predict):
                assert searcher_for(game.id).budget_share(moves) == 1.0


def test_deal_hidden_keeps_constraints() -> None:
    rng = random.Random(1)
    pool = list(range(20))
    for _ in range(50):
        hands, rest = deal_hidden(pool, [5, 5, 3], [lambda c: c % 2 == 0, None, lambda c: c < 10], rng)
        assert all(c % 2 == 0 for c in hands[0]) and all(c < 10 for c in hands[2])
        assert sorted([c for h in hands for c in h] + rest) == pool


# --- hand-made positions -----------------------------------------------------------------------


def take6_state(rows: tuple[tuple[int, ...], ...], hands: tuple[tuple[int, ...], ...], logic: bool) -> Take6State:
    out = 0
    for row in rows:
        for card in row:
            out |= 1 << card
    n = len(hands)
    return Take6State(
        n, Take6Options(logic=logic), 0, 0, "play", (0,) * n, (0,) * n, rows, hands, tuple(len(h) for h in hands),
        (), (None,) * n, (), out, 10 - len(hands[0]),
    )  # fmt: skip


def test_take6_plays_the_only_card_that_takes_no_row() -> None:
    """T-3.4: 7 would be the sixth card of the full first row; 22 fits after 21. With logic's public
    hands (T-5.2) the other seat holds 6 and 41: keeping 7 lets its 6 take that row first next turn
    (T-3.2: lowest first), after which 7 is safe; so 22 now costs nothing at all, 7 now costs 6."""
    rows = ((1, 2, 3, 4, 5), (20, 21), (30,), (40,))
    state = take6_state(rows, ((7, 22), (6, 41)), logic=True)
    for seed in range(3):
        bot = ExpertBot(searcher_for("take6"), seed=seed, samples=3)
        assert bot.choose(TAKE6, TAKE6.view(state, 0), 0) == Take6Play(0, 22)


def test_sixth_sense_wins_the_trick_it_needs() -> None:
    """S-4.2/S-4.5: predicted 3, holding 2 tricks, last to play to a blue trick it cannot follow:
    the trump G3 wins it for sure (and R1 led last most likely loses), while after R1 the trump
    G3 led last loses to any of the high greens still out."""
    deck = list(deck_for(4))
    card = Card.parse
    mine = (card("G3"), card("R1"))
    trick_cards = (card("B5"), card("B7"), card("B10"))
    others = ((card("Y2"),), (card("Y3"),), (card("P2"),))
    trump = card("G10")
    predictions = (card("Y5"), card("Y7"), card("P5"), card("R3"))
    used = {*mine, *trick_cards, *[c for h in others for c in h], trump, *predictions}
    # 11 tricks before this one; the high red and green cards are still out, so R1 led last would lose
    played = tuple(c for c in deck if c not in used and not (c.colour in "RG" and c.value >= 10))[:44]
    winners = (0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 0)  # trick 11 is led by seat 0, the last winner
    r = Round(
        dealer=3, hands=(*others, mine), hand_sizes=(1, 1, 1, 2), trump=trump, predicted=(True,) * 4,
        predictions=predictions, leader=0,
        trick=tuple(Play(seat, c) for seat, c in enumerate(trick_cards)), trick_winners=winners,
        tricks=(3, 3, 3, 2), split_owed=None, voids=(frozenset(),) * 4, played=(*played, *trick_cards), peeks=(),
        points=None,
    )  # fmt: skip
    state = SixthSenseState(4, SixthSenseOptions(), 1, 3, (0,) * 4, (), r, False)
    assert set(SIXTH_SENSE.legal_moves(state, 3)) == {Play(3, card("G3")), Play(3, card("R1"))}
    for seed in range(3):
        bot = ExpertBot(searcher_for("sixth-sense"), seed=seed, samples=6)
        assert bot.choose(SIXTH_SENSE, SIXTH_SENSE.view(state, 3), 3) == Play(3, card("G3"))


def test_sixes_opens_its_own_run_not_the_others() -> None:
    """X-2.3/X-2.5: O5 leads only to its own O4, while O7 frees OJ … OK for the others, one of
    whom would then go out first."""
    columns = (("O6", "O6"), ("CA", "CK"), ("EA", "EK"), ("BA", "BK"))
    hands = (("O4", "O5", "O7"), ("OJ", "OQ"), ("OA", "O2", "O3", "OK"))
    playable = frozenset({"O5", "O7"})
    r = SixesRound(0, hands, (3, 2, 4), columns, playable, 0, 2, None, 0)
    state = SixesState(3, SixesOptions(), 1, (5, 5, 5), 3, r, False)
    for seed in range(3):
        bot = ExpertBot(searcher_for("sixes"), seed=seed, samples=8)
        assert bot.choose(SIXES, SIXES.view(state, 0), 0) == SixesPlay(0, "O5")


def test_sixes_reads_hands_from_the_cards_a_seat_chose() -> None:
    """X-2.3: seat 1 answered O6 with O7 while O5 was playable too. Holding O5 with its own run
    below it (O4 …), a player who releases its own runs would have played O5 (X-2.4 lets it choose
    among its playable cards), so seat 1 more likely holds the cards above O7 than the run below
    O5; seat 2 has not moved, so it tells nothing. The sampled worlds say the same."""
    mine = tuple(["CA", "C2", "C3", "C4", "C5", "C7", "CJ", "CQ", "CK", "EA", "E2", "E3", "E4"])
    playable = frozenset({"O5", "OJ", "C6", "E6", "B6"})
    history = ((0, "O6"), (1, "O7"))
    r = SixesRound(2, (mine, None, None), (13, 12, 13), (("O6", "O7"), None, None, None), playable, 2, 0, None, 0,
                   (), history)  # fmt: skip
    view = SixesState(3, SixesOptions(), 1, (10, 10, 10), 0, r, False)
    choices = choices_by_seat(r, 3)
    assert choices[0] == [] and choices[2] == []  # O6 is forced: nothing to read
    (o7,) = choices[1]
    assert o7.card == "O7" and o7.later == {"O7"} and o7.playable == {"O5", "O7", "C6", "E6", "B6"}
    run_above = frozenset({"OJ", "OQ", "OK", "C6", "B2"})
    run_below = frozenset({"O5", "O4", "O3", "C6", "B2"})
    assert log_likelihood(run_above, choices[1]) > log_likelihood(run_below, choices[1]) + math.log(5)
    assert log_likelihood(frozenset({"B2"}), choices[1]) == 0.0  # O7 was its only card: forced
    searcher = searcher_for("sixes")
    rng = random.Random(1)
    held: list[Counter[str]] = [Counter(), Counter(), Counter()]
    for _ in range(300):
        world = searcher.sample(view, 0, rng)
        for s in (1, 2):
            held[s].update(world.round.hands[s])
    assert held[1]["O5"] < 0.8 * held[2]["O5"] and held[1]["OJ"] > 1.25 * held[2]["OJ"]


# --- what the views show (the engine's part) ----------------------------------------------------


def test_a_sixes_pass_shows_what_the_seat_lacks() -> None:
    """X-2.4: a pass proves the seat held none of the cards playable then; every seat knows it."""
    hands = [
        ["O6", "OK", "CK", "EK", "BK", "O3", "C3", "C4"],
        ["OA", "O2", "CA", "C2", "EA", "E2", "BA", "B2"],
        ["O5", "O7", "C6", "OJ", "C5", "C7", "CJ", "CQ"],
        ["E6", "O4", "E3", "E4", "E5", "E7", "EJ", "EQ"],
        ["B6", "OQ", "B3", "B4", "B5", "B7", "BJ", "BQ"],
    ]
    state = SIXES.new_game(5, SixesOptions())
    state = SIXES.start_round(state, SIXES.deal_from_json(state, {"dealer": 4, "hands": hands}))
    state = SIXES.apply(state, SixesPlay(0, "O6"))
    playable = state.round.playable
    state = SIXES.apply(state, SixesPass(1))
    assert state.round.lacks[1] == playable and not state.round.lacks[0]
    assert SIXES.view(state, 3).round.lacks == state.round.lacks
    state = SIXES.apply(state, SixesPlay(2, "O5"))
    assert state.round.lacks[1] == playable  # kept while the round goes on


def test_a_peekers_view_keeps_the_peeked_prediction() -> None:
    """S-6.4: the seat that peeked knows that prediction card; nobody else does."""
    rng = random.Random(2)
    for state, _ in random_states(SIXTH_SENSE, 4, SixthSenseOptions(), rng, 200):
        r = state.round
        if r.peeks and r.points is None:
            peek: Peek = r.peeks[0]
            assert SIXTH_SENSE.view(state, peek.peeker).round.predictions[peek.target] == r.predictions[peek.target]
            bystander = next(s for s in range(4) if s not in (peek.peeker, peek.target))
            if all(p.peeker != bystander or p.target != peek.target for p in r.peeks):
                assert SIXTH_SENSE.view(state, bystander).round.predictions[peek.target] is None
            return
    pytest.fail("no peek in 200 random states")


def test_a_network_seat_searches_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """`BotPlayer` with kind expert answers from the session's view, from a worker thread."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from lanplay.table.runner import BotPlayer

    rng = random.Random(4)
    state, seat = random_states(TAKE6, 4, Take6Options(), rng, 1)[0]
    player = BotPlayer("take6", "expert", seed=1)
    assert isinstance(player.bot, ExpertBot)
    player.bot.samples = 1
    threads: list[threading.Thread] = []
    choose = player.bot.choose

    def spy(game: AnyGame, view: Any, me: int) -> Any:
        threads.append(threading.current_thread())
        return choose(game, view, me)

    monkeypatch.setattr(player.bot, "choose", spy)
    session = SimpleNamespace(game=TAKE6, view=lambda: TAKE6.view(state, seat), me=seat)
    move = asyncio.run(player.decide(SimpleNamespace(session=session), ()))  # type: ignore[arg-type]
    assert move in TAKE6.legal_moves(state, seat)
    assert threads and threads[0] is not threading.main_thread()


def test_the_lobby_form_offers_the_bot_levels() -> None:
    from lanplay.ui.lobby_model import CreateForm

    form = CreateForm("take6", seats=4, bots=2)
    form.field = form.fields().index("level")
    assert form.action().bot_kind == "normal"  # by default
    form.change(1)
    assert form.level == "expert" and form.action().bot_kind == "expert"
    form.change(1)
    assert form.action().bot_kind == "easy"


def test_the_cli_takes_the_expert_and_its_budget(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lanplay.bots import apply_budget_argument
    from lanplay.cli.commands import build_parser

    assert build_parser().parse_args(["play"]).bot_kind == "normal"
    for kind in ("easy", "random", "heuristic"):  # the older names still work
        assert build_parser().parse_args(["play", "--bot-kind", kind]).bot_kind == kind
    args = build_parser().parse_args(["play", "--bot-kind", "expert", "--bot-budget", "0.1"])
    assert args.bot_kind == "expert" and args.bot_budget == 0.1
    monkeypatch.setenv(BUDGET_ENV, "0.25")  # restored after the test
    apply_budget_argument(args.bot_budget)
    assert budget_from_env() == 0.1  # every bot this command starts reads it
    args = build_parser().parse_args(["bot", "--game", "take6", "--kind", "expert", "--host"])
    assert args.kind == "expert" and args.bot_budget is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["play", "--bot-budget", "-1"])
    assert "--bot-budget" in capsys.readouterr().err
