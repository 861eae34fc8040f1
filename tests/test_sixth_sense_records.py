"""6th Sense game records (shared/specs/game-record.md): every fault the spec lists is refused by
engine.record with the right round, move, seat and rule id (S-… of shared/rules/sixth-sense.md, or
"format"); clean and partial records replay as the spec says."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from sixth_sense_helpers import GAME, make_deal, options

from engine.playout import play_game, random_chooser
from engine.record import RecordFault, parse_record, replay, replay_text

Raw = dict[str, Any]


def base_record(players: int = 4, seed: int = 0, **opts: Any) -> Raw:
    """A complete record of a random legal game, as record JSON."""
    rng = random.Random(seed)
    _, record = play_game(GAME, [f"p{i}" for i in range(players)], options(**opts), random_chooser(GAME, rng), rng)
    return record.to_json()


def fault_of(raw: Raw | str) -> RecordFault:
    text = raw if isinstance(raw, str) else json.dumps(raw)
    with pytest.raises(RecordFault) as info:
        replay_text(text)
    fault = info.value
    # the spec's error object
    error: Any = fault.to_json()["error"]
    assert set(error) == {"round", "move", "seat", "rule", "message"}
    return fault


def first_play(raw: Raw, round_index: int = 0) -> int:
    moves = raw["rounds"][round_index]["moves"]
    return next(i for i, m in enumerate(moves) if "play" in m)


def stock_card(deal: Raw, players: int) -> str:
    """A card of the deck that the deal leaves in the stock (neither in a hand nor turned)."""
    dealt = {c for h in deal["hands"] for c in h} | {deal["trump"]}
    return next(c for c in GAME.layout(GAME.new_game(players, options()), 0).deck if c not in dealt)


def deal_hand(raw: Raw, round_index: int, seat: int) -> list[str]:
    return list(raw["rounds"][round_index]["deal"]["hands"][seat])


def test_clean_record_replays_complete() -> None:
    """A record of a whole game replays: complete, totals, winners (S-7.4) and one report per round."""
    raw = base_record()
    out = replay_text(json.dumps(raw)).to_json()
    assert out["complete"] is True
    assert out["winners"] is not None and len(out["rounds"]) == 4  # type: ignore[arg-type]
    for report in out["rounds"]:  # type: ignore[attr-defined]
        assert set(report) == {"dealer", "trick_winners", "tricks", "points"}
        assert report["points"] is not None and len(report["trick_winners"]) == 13


def test_partial_record_replays_incomplete_without_winners() -> None:
    """Spec: a record that stops early replays with complete false and winners null."""
    raw = base_record()
    fewer = copy.deepcopy(raw)
    del fewer["rounds"][2:]
    out = replay_text(json.dumps(fewer)).to_json()
    assert out["complete"] is False and out["winners"] is None
    assert len(out["rounds"]) == 2  # type: ignore[arg-type]
    cut = copy.deepcopy(raw)
    del cut["rounds"][3]["moves"][20:]
    out = replay_text(json.dumps(cut)).to_json()
    assert out["complete"] is False and out["winners"] is None
    assert out["rounds"][-1]["points"] is None  # type: ignore[index]
    assert out["totals"] == [sum(r["points"][s] for r in out["rounds"][:3]) for s in range(4)]  # type: ignore[index]


def test_unknown_card_is_a_format_fault() -> None:
    """Spec/S-1.1: an unknown card code is a format fault at its move."""
    raw = base_record()
    index = first_play(raw)
    raw["rounds"][0]["moves"][index]["play"] = "R9"
    fault = fault_of(raw)
    seat = raw["rounds"][0]["moves"][index]["seat"]
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, index, seat, "format")
    assert "R9" in fault.message


def test_unknown_card_in_a_deal_is_a_format_fault() -> None:
    """Spec/S-1.1: an unknown card in a deal is a format fault of that round's deal."""
    raw = base_record()
    raw["rounds"][1]["deal"]["hands"][0][0] = "Q3"
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (1, None, "format")


def test_card_not_in_hand_is_refused() -> None:
    """S-4.1: a card that is not in the player's hand (here: one of the next player's) is refused."""
    raw = base_record()
    index = first_play(raw)
    move = raw["rounds"][0]["moves"][index]
    other = (move["seat"] + 1) % 4
    move["play"] = deal_hand(raw, 0, other)[0]
    move.pop("as", None)
    move.pop("block", None)
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, index, move["seat"], "S-4.1")
    assert move["play"] in fault.message


def test_wrong_seat_to_move_is_refused() -> None:
    """S-4.1: the seat after the leader plays a card it holds, but it is the leader's turn."""
    raw = base_record()
    index = first_play(raw)
    leader = raw["rounds"][0]["moves"][index]["seat"]
    intruder = (leader + 1) % 4
    predicted = {m["predict"] for m in raw["rounds"][0]["moves"] if m.get("seat") == intruder and "predict" in m}
    card = next(c for c in deal_hand(raw, 0, intruder) if c not in predicted and not c.endswith("6") and c[1:] != "0")
    raw["rounds"][0]["moves"][index] = {"seat": intruder, "play": card}
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, index, intruder, "S-4.1")


def test_prediction_after_play_began_is_refused() -> None:
    """S-3.1: a prediction after the first card of the round was played."""
    raw = base_record()
    moves = raw["rounds"][0]["moves"]
    index = first_play(raw)
    late = dict(moves[0])  # the first prediction, made again after play began
    moves.insert(index + 1, late)
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, index + 1, late["seat"], "S-3.1")


def test_prediction_missing_before_play_is_refused() -> None:
    """S-3.1: every player predicts before the first card is played."""
    raw = base_record()
    del raw["rounds"][0]["moves"][0]
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (0, first_play(raw), "S-3.1")


@pytest.mark.parametrize(
    ("players", "mutate", "rule"),
    [
        (4, lambda d: d["hands"][2].__setitem__(0, d["hands"][1][0]), "S-2.3"),  # a card twice
        (4, lambda d: d["hands"][3].pop(), "S-2.3"),  # a short hand
        (4, lambda d: d["hands"][0].append(stock_card(d, 4)), "S-2.3"),  # a long hand
        (4, lambda d: d["hands"].pop(), "S-2.3"),  # a hand missing
        (2, lambda d: d["hands"][0].__setitem__(0, "P5"), "S-2.1"),  # Purple is out with 2 players
        (2, lambda d: d.__setitem__("trump", "P14"), "S-2.1"),
        (4, lambda d: d.__setitem__("trump", d["hands"][0][0]), "S-2.4"),  # the turned card is also in a hand
        (4, lambda d: d.__setitem__("trump", None), "S-2.4"),  # no turned card without beginner
    ],
)
def test_deal_that_is_not_a_deal_of_this_deck_is_refused(players: int, mutate: Any, rule: str) -> None:
    """S-2.1/S-2.3/S-2.4: a deal must deal this game's deck: right hand sizes, each card once, a trump."""
    raw = base_record(players)
    mutate(raw["rounds"][1]["deal"])
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (1, None, rule)


def test_beginner_deal_with_a_trump_is_refused() -> None:
    """S-8.1: the beginner variant turns no card."""
    raw = base_record(3, beginner=True)
    assert raw["rounds"][0]["deal"]["trump"] is None
    raw["rounds"][0]["deal"]["trump"] = next(
        c
        for c in GAME.layout(GAME.new_game(3, options()), 0).deck
        if all(c not in h for h in raw["rounds"][0]["deal"]["hands"])
    )
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (0, None, "S-8.1")


def test_wrong_dealer_rotation_is_refused() -> None:
    """S-2.5: the dealer moves one seat left each round."""
    raw = base_record()
    first = raw["rounds"][0]["deal"]["dealer"]
    assert [r["deal"]["dealer"] for r in raw["rounds"]] == [(first + i) % 4 for i in range(4)]
    raw["rounds"][2]["deal"]["dealer"] = (first + 1) % 4  # the dealer of round 1 again
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (2, None, "S-2.5")


def test_missing_split_is_refused() -> None:
    """S-6.5: after a trick with a counting 12 the record must hold the winner's split decision;
    when the next move is a play instead, that play is refused."""
    raw = base_record()
    moves = raw["rounds"][0]["moves"]
    index = next(i for i, m in enumerate(moves) if "split" in m and i + 1 < len(moves))
    owed_by = moves[index]["seat"]
    del moves[index]
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (0, index, "S-6.5")
    assert fault.seat == moves[index]["seat"]
    assert str(owed_by) in fault.message


def test_split_without_a_twelve_is_refused() -> None:
    """S-6.5: a split move only, and always, right after a trick its winner may split."""
    raw = base_record()
    moves = raw["rounds"][0]["moves"]
    at = first_play(raw)  # all have predicted, nothing was played: no trick to split
    leader = moves[at]["seat"]
    moves.insert(at, {"seat": leader, "split": True})
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, at, leader, "S-6.5")


def test_missing_split_at_the_end_of_the_round_is_a_fault() -> None:
    """S-6.5/spec: a round whose last trick's split is missing does not end; the next deal is a fault."""
    for seed in range(50):
        raw = base_record(seed=seed)
        last = raw["rounds"][0]["moves"][-1]
        if "split" in last:
            break
    else:  # pragma: no cover - the seeds above hold one
        pytest.fail("no record with a split of the last trick")
    raw["rounds"][0]["moves"].pop()
    fault = fault_of(raw)
    assert fault.rule == "format" and fault.round == 0


def _renege_record() -> Raw:
    """3 players, seat 0 leads Y5, seat 1 holds Y11 and plays G3."""
    deal = make_deal(3, {0: ["Y5"], 1: ["Y11", "G3"]}, trump="B14", dealer=2)
    keep = {"Y5", "Y11", "G3"}
    moves: list[Raw] = [
        {"seat": s, "predict": next(c for c in reversed(deal["hands"][s]) if c not in keep)}  # type: ignore[index]
        for s in range(3)
    ]
    moves += [{"seat": 0, "play": "Y5"}, {"seat": 1, "play": "G3"}]
    return {
        "format": "lanplay-record/1",
        "game": "sixth-sense",
        "players": ["a", "b", "c"],
        "options": {},
        "rounds": [{"deal": deal, "moves": moves}],
    }


def test_renege_is_refused_naming_the_held_card() -> None:
    """S-4.2: not following the led colour while holding it; the message names the held card."""
    fault = fault_of(_renege_record())
    assert (fault.round, fault.move, fault.seat, fault.rule) == (0, 4, 1, "S-4.2")
    assert "Y11" in fault.message
    fixed = _renege_record()
    fixed["rounds"][0]["moves"][-1]["play"] = "Y11"
    out = replay_text(json.dumps(fixed)).to_json()
    assert out["complete"] is False and out["winners"] is None


def test_undeclared_six_nine_is_refused() -> None:
    """S-6.3: the 6/9 card needs "as": 6 or 9 in a record."""
    raw = base_record()
    for r_index, rnd in enumerate(raw["rounds"]):
        for m_index, move in enumerate(rnd["moves"]):
            if "as" in move:
                del move["as"]
                fault = fault_of(raw)
                assert (fault.round, fault.move, fault.seat, fault.rule) == (r_index, m_index, move["seat"], "S-6.3")
                return
    pytest.fail("no 6/9 card played in the record")  # pragma: no cover


def test_not_json_is_a_format_fault() -> None:
    """Spec: a file that is not JSON is refused as format, with no round or move."""
    fault = fault_of('{"format": "lanplay-record/1", ')
    assert (fault.round, fault.move, fault.seat, fault.rule) == (None, None, None, "format")
    assert fault_of("[1, 2]").rule == "format"


@pytest.mark.parametrize("tag", ["lanplay-record/2", None, "pgn"])
def test_wrong_format_tag_is_a_format_fault(tag: str | None) -> None:
    """Spec: the format tag must be "lanplay-record/1"."""
    raw = base_record()
    raw["format"] = tag
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (None, None, "format")
    with pytest.raises(RecordFault):
        parse_record(raw)


def test_malformed_moves_and_options_are_format_faults() -> None:
    """Spec: unknown move keys, unknown options and a move that is not an object are format faults."""
    raw = base_record()
    raw["rounds"][0]["moves"][0]["colour"] = "R"
    assert fault_of(raw).rule == "format"
    raw = base_record()
    raw["options"] = {"beginner": False, "speed": 3}
    assert fault_of(raw).rule == "format"
    raw = base_record()
    raw["rounds"][0]["moves"][2] = "p1 plays"
    fault = fault_of(raw)
    assert (fault.round, fault.move, fault.rule) == (0, 2, "format")


def test_round_after_the_game_ended_is_a_format_fault() -> None:
    """S-2.2/spec: a 4-player game has 4 rounds; a fifth is a fault."""
    raw = base_record()
    raw["rounds"].append(copy.deepcopy(raw["rounds"][0]))
    fault = fault_of(raw)
    assert fault.round == 4 and fault.rule == "format"


def test_replay_reports_match_the_spec_shape() -> None:
    """Spec: per round dealer, trick_winners (null for unwon tricks), tricks, points; totals; winners."""
    raw = base_record(2, seed=3)
    result = replay(parse_record(raw))
    out = result.to_json()
    assert out["game"] == "sixth-sense" and out["complete"] is True
    rounds = out["rounds"]
    assert isinstance(rounds, list) and len(rounds) == 6
    for index, report in enumerate(rounds):
        assert report["dealer"] == raw["rounds"][index]["deal"]["dealer"]
        assert len(report["trick_winners"]) == 14
        assert all(w in (0, 1, None) for w in report["trick_winners"])
    assert out["totals"] == [sum(r["points"][s] for r in rounds) for s in range(2)]
    totals: Any = out["totals"]
    assert out["winners"] == [s for s in range(2) if totals[s] == max(totals)]
