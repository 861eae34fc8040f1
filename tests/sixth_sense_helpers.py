"""Helpers for the 6th Sense tests: build deals and states from explicit cards, apply moves.

Rule ids refer to shared/rules/sixth-sense.md. Everything goes through the public engine API
(`deal_from_json`, `start_round`, `move_from_json`, `apply`), so the tests exercise the same paths
as a replay of a record.

Moves may be given as JSON objects (the record's form) or in a compact text form:

* ``"0?R5"``       seat 0 predicts R5 (``"0?"`` alone: a hidden prediction, ``Predict(0, None)``)
* ``"1:R5"``       seat 1 plays R5
* ``"2:G6=9"``     seat 2 plays the 6/9 card G6 declared as 9 (S-6.3)
* ``"3:R0/Y4"``    seat 3 plays R0 to block Y4 (S-6.1)
* ``"1:split"``    seat 1 splits the trick (S-6.5); ``"1:nosplit"`` declines
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.api import JSONObject
from engine.sixth_sense import (
    HAND_SIZE,
    SIXTH_SENSE,
    Card,
    Move,
    Predict,
    SixthSenseOptions,
    SixthSenseState,
    deck_for,
)

GAME = SIXTH_SENSE
MoveSpec = str | Mapping[str, object] | Move


def options(beginner: bool = False, target: int | None = None, late_trump: bool = False) -> SixthSenseOptions:
    return GAME.options_from_json({"beginner": beginner, "target": target, "late_trump": late_trump})


def new_game(players: int, **opts: Any) -> SixthSenseState:
    return GAME.new_game(players, options(**opts))


def deck_codes(players: int) -> list[str]:
    return [card.code for card in deck_for(players)]


def make_deal(
    players: int,
    hands: Mapping[int, Sequence[str]] | Sequence[Sequence[str]] = (),
    trump: str | None = "B14",
    dealer: int | None = None,
    voids: Mapping[int, str] | None = None,
) -> JSONObject:
    """A deal (record JSON) giving each seat the listed cards, filled up to the S-2.3 hand size.

    Filler cards come from the rest of the deck in canonical order, never of a colour listed for that
    seat in `voids` (so a test can make a seat unable to follow suit), never the trump card. The
    default dealer is the last seat, so seat 0 leads the first trick (S-2.5)."""
    size = HAND_SIZE[players]
    wanted = dict(enumerate(hands)) if not isinstance(hands, Mapping) else dict(hands)
    voids = dict(voids or {})
    used = {code for cards in wanted.values() for code in cards}
    if trump is not None:
        used.add(trump)
    pool = [code for code in deck_codes(players) if code not in used]
    out: list[list[str]] = [list(wanted.get(seat, ())) for seat in range(players)]
    # seats with the most excluded colours pick first, so they still find enough cards
    for seat in sorted(range(players), key=lambda s: -len(voids.get(s, ""))):
        for colour in voids.get(seat, ""):
            bad = [c for c in out[seat] if c[0] == colour]
            assert not bad, f"seat {seat} is meant to lack {colour} but is given {bad}"
        need = size - len(out[seat])
        assert need >= 0, f"seat {seat} is given more than {size} cards"
        fill = [c for c in pool if c[0] not in voids.get(seat, "")][:need]
        assert len(fill) == need, f"not enough cards to fill seat {seat}'s hand"
        out[seat].extend(fill)
        pool = [c for c in pool if c not in fill]
    return {"dealer": players - 1 if dealer is None else dealer, "hands": out, "trump": trump}


def start(
    players: int,
    hands: Mapping[int, Sequence[str]] | Sequence[Sequence[str]] = (),
    trump: str | None = "B14",
    dealer: int | None = None,
    voids: Mapping[int, str] | None = None,
    state: SixthSenseState | None = None,
    **opts: Any,
) -> SixthSenseState:
    """A state at the start of a round dealt from explicit cards (see `make_deal`)."""
    if state is None:
        state = new_game(players, **opts)
    deal = GAME.deal_from_json(state, make_deal(players, hands, trump, dealer, voids))
    return GAME.start_round(state, deal)


def hand(state: SixthSenseState, seat: int) -> list[str]:
    r = state.round
    assert r is not None
    cards = r.hands[seat]
    assert cards is not None
    return [c.code for c in cards]


def filler_prediction(state: SixthSenseState, seat: int, keep: Iterable[str] = ()) -> str:
    """A card of `seat`'s hand that is not in `keep` (the last one in hand order)."""
    keep = set(keep)
    return [c for c in hand(state, seat) if c not in keep][-1]


def parse_move(spec: MoveSpec) -> Move:
    if isinstance(spec, str):
        return GAME.move_from_json(move_json(spec))
    if isinstance(spec, Mapping):
        return GAME.move_from_json(spec)
    return spec


def move_json(spec: str) -> JSONObject:
    if "?" in spec:
        seat, card = spec.split("?")
        return {"seat": int(seat), "predict": card or None}
    seat, rest = spec.split(":")
    if rest in ("split", "nosplit"):
        return {"seat": int(seat), "split": rest == "split"}
    out: JSONObject = {"seat": int(seat)}
    if "/" in rest:
        rest, blocked = rest.split("/")
        out["block"] = blocked
    if "=" in rest:
        rest, as_value = rest.split("=")
        out["as"] = int(as_value)
    out["play"] = rest
    return out


def play(state: SixthSenseState, *moves: MoveSpec) -> SixthSenseState:
    """Apply moves in order (each must be accepted)."""
    for spec in moves:
        state = GAME.apply(state, parse_move(spec))
    return state


def predict_all(
    state: SixthSenseState, chosen: Mapping[int, str] | None = None, keep: Iterable[str] = ()
) -> SixthSenseState:
    """Every seat predicts: `chosen[seat]` where given, else a filler card not in `keep`."""
    chosen = dict(chosen or {})
    keep = set(keep)
    for seat in range(state.players):
        state = play(state, f"{seat}?{chosen.get(seat) or filler_prediction(state, seat, keep)}")
    return state


def started(
    players: int,
    hands: Mapping[int, Sequence[str]] | Sequence[Sequence[str]] = (),
    trump: str | None = "B14",
    predictions: Mapping[int, str] | None = None,
    **kwargs: Any,
) -> SixthSenseState:
    """A round dealt (see `start`) and predicted, with the explicitly given cards kept in hand."""
    state = start(players, hands, trump, **kwargs)
    listed = hands.values() if isinstance(hands, Mapping) else hands
    keep = {code for cards in listed for code in cards}
    return predict_all(state, predictions, keep)


def last_trick(
    players: int,
    hands: Sequence[str],
    predictions: Sequence[str],
    tricks: Sequence[int],
    trump: str | None = "B14",
    leader: int = 0,
    **opts: Any,
) -> SixthSenseState:
    """A state just before the last trick of a round: one card per seat, given predictions and
    trick counts. Built from a real started round whose `Round` is then fast-forwarded (white box,
    only to reach the end of a round without playing a scripted 14-trick round)."""
    state = start(players, {s: [hands[s], predictions[s]] for s in range(players)}, trump, **opts)
    r = state.round
    assert r is not None
    played_before = sum(tricks)  # any cards of the deck not in play here; only their number matters
    others = [Card.parse(c) for c in deck_codes(players) if c not in hands and c not in predictions and c != trump][
        : played_before * players
    ]
    r = replace(
        r,
        hands=tuple((Card.parse(hands[s]),) for s in range(players)),
        hand_sizes=(1,) * players,
        predicted=(True,) * players,
        predictions=tuple(Card.parse(p) for p in predictions),
        leader=leader,
        trick_winners=tuple(s for s in range(players) for _ in range(tricks[s])),
        tricks=tuple(tricks),
        played=tuple(others),
    )
    return replace(state, round=r)


def view_move(move: Move, seat: int) -> Move:
    """The move as `seat` learns it: another seat's prediction card stays hidden (S-3.4)."""
    if isinstance(move, Predict) and move.seat != seat:
        return Predict(move.seat, None)
    return move


def one_trick(
    players: int,
    moves: Sequence[str],
    voids: Mapping[int, str] | None = None,
    trump: str | None = "B14",
    extra: Mapping[int, Sequence[str]] | None = None,
    **opts: Any,
) -> SixthSenseState:
    """Deal each seat the cards its `moves` play (plus `extra`), seat 0 leading, predict filler
    cards, and play the moves (compact play forms, see the module docstring)."""
    cards: dict[int, list[str]] = {seat: list(codes) for seat, codes in (extra or {}).items()}
    for spec in moves:
        m = move_json(spec)
        if "play" in m:
            cards.setdefault(int(m["seat"]), []).append(str(m["play"]))  # type: ignore[call-overload]
    if opts.get("beginner"):
        trump = None
    state = started(players, cards, trump, voids=voids, **opts)
    return play(state, *moves)


def finish_round(state: SixthSenseState, rng: Any) -> SixthSenseState:
    """Play random legal moves (full knowledge) until the round is over."""
    while GAME.expected(state).phase == "move":
        expected = GAME.expected(state)
        moves = [rng.choice(GAME.legal_moves(state, seat)) for seat in expected.seats]
        state = play(state, *moves)
    return state
