"""Game records (`lanplay-record/1`, see docs/RECORDS.md): build, write, read, validate, replay.

Replay runs every deal and move through the game's rules with full knowledge, so a record that
replays cleanly is a record of a legal game; a faulty one is refused with a `RecordFault` naming
round, move, seat and rule.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.api import FormatError, Game, JSONObject, RuleError
from engine.games import get_game

FORMAT = "lanplay-record/1"
TABLE_KEYS = frozenset({"table", "complete", "exposed", "proofs", "stops", "void", "end"})


@dataclass(frozen=True, slots=True)
class RoundRecord:
    deal: JSONObject
    moves: tuple[JSONObject, ...] = ()


@dataclass(frozen=True, slots=True)
class BotSeat:
    """A seat played by a bot, and the seat whose laptop runs it (None: a laptop of its own). The host
    laptop can see the bot's cards, so every seat is told (issue 10, item 3)."""

    seat: int
    host: int | None

    def to_json(self) -> JSONObject:
        return {"seat": self.seat, "host": self.host}


@dataclass(frozen=True, slots=True)
class GameRecord:
    game: str
    players: tuple[str, ...]
    options: JSONObject
    rounds: tuple[RoundRecord, ...] = ()
    bots: tuple[BotSeat, ...] = ()  # in seat order; written only when there are any

    def to_json(self) -> JSONObject:
        out: JSONObject = {"format": FORMAT, "game": self.game, "players": list(self.players)}
        if self.bots:  # a table without bots writes the very bytes it wrote before the field existed
            out["bots"] = [bot.to_json() for bot in self.bots]
        out["options"] = dict(self.options)
        out["rounds"] = [{"deal": r.deal, "moves": list(r.moves)} for r in self.rounds]
        return out

    def dumps(self) -> str:
        """The record as a file holds it: one round per line block, readable and diffable."""
        return json.dumps(self.to_json(), indent=1, sort_keys=False) + "\n"

    def with_deal(self, deal: JSONObject) -> GameRecord:
        return replace(self, rounds=(*self.rounds, RoundRecord(deal)))

    def with_move(self, move: JSONObject) -> GameRecord:
        if not self.rounds:
            raise ValueError("a move before any deal")
        last = self.rounds[-1]
        return replace(self, rounds=(*self.rounds[:-1], RoundRecord(last.deal, (*last.moves, move))))


class RecordFault(Exception):
    """A record that breaks a rule or the format (spec: the error object of `replay --json`)."""

    def __init__(
        self, round: int | None, move: int | None, seat: int | None, rule: str, message: str
    ) -> None:
        super().__init__(f"round {round}, move {move}, seat {seat}: {rule}: {message}")
        self.round = round
        self.move = move
        self.seat = seat
        self.rule = rule
        self.message = message

    def to_json(self) -> JSONObject:
        return {
            "error": {
                "round": self.round,
                "move": self.move,
                "seat": self.seat,
                "rule": self.rule,
                "message": self.message,
            }
        }


@dataclass(frozen=True)
class ReplayedRound:
    deal: JSONObject
    report: JSONObject
    moves: tuple[tuple[JSONObject, Any], ...]  # each move's JSON and the state after it


@dataclass(frozen=True)
class Replay:
    game: Game[Any, Any, Any, Any]
    players: tuple[str, ...]
    complete: bool
    rounds: tuple[ReplayedRound, ...]
    final_state: Any
    states_after_deal: tuple[Any, ...] = field(default=())
    bots: tuple[BotSeat, ...] = ()  # for the text; the spec's JSON output has no place for it

    def to_json(self) -> JSONObject:
        return {
            "game": self.game.id,
            "complete": self.complete,
            "rounds": [r.report for r in self.rounds],
            "totals": list(self.game.totals(self.final_state)),
            "winners": list(w) if (w := self.game.winners(self.final_state)) is not None else None,
        }


def load_record_text(text: str) -> JSONObject:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordFault(None, None, None, "format", f"not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise RecordFault(None, None, None, "format", "a record is a JSON object")
    return raw


def parse_record(raw: Mapping[str, object]) -> GameRecord:
    """Check the record's shape (not its rules) and return it as a value."""

    def fault(message: str, round: int | None = None) -> RecordFault:
        return RecordFault(round, None, None, "format", message)

    if raw.get("format") != FORMAT:
        raise fault(f"'format' must be {FORMAT!r}, got {raw.get('format')!r}")
    # What a table adds (its keys, proofs, stops, the void round, the end: docs/RECORDS.md) is read by
    # `protocol.table.verify.check_record`; a game's replay does not depend on it.
    known = {"format", "game", "players", "bots", "options", "rounds", *TABLE_KEYS}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise fault(f"unknown top-level key(s): {', '.join(unknown)}")
    game_id = raw.get("game")
    if not isinstance(game_id, str):
        raise fault("'game' must be a string")
    players = raw.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise fault("'players' must be a list of names")
    bots = _parse_bots(raw.get("bots", []), len(players))
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise fault("'options' must be an object")
    rounds_raw = raw.get("rounds")
    if not isinstance(rounds_raw, list):
        raise fault("'rounds' must be a list")
    rounds: list[RoundRecord] = []
    for index, round_raw in enumerate(rounds_raw):
        if not isinstance(round_raw, dict) or set(round_raw) - {"deal", "moves"}:
            raise fault("a round is an object with 'deal' and 'moves'", index)
        deal = round_raw.get("deal")
        moves = round_raw.get("moves", [])
        if not isinstance(deal, dict):
            raise fault("'deal' must be an object", index)
        if not isinstance(moves, list):
            raise fault("'moves' must be a list", index)
        for move_index, move in enumerate(moves):
            if not isinstance(move, dict):
                raise RecordFault(index, move_index, None, "format", "a move must be an object")
        rounds.append(RoundRecord(deal, tuple(moves)))
    return GameRecord(game_id, tuple(players), options, tuple(rounds), bots)


def _parse_bots(raw: object, seats: int) -> tuple[BotSeat, ...]:
    """The optional `bots` list: each entry a seat of the table, once, in seat order, with the seat that
    hosts it (another seat of the table) or null."""

    def is_seat(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < seats

    if not isinstance(raw, list):
        raise RecordFault(None, None, None, "format", "'bots' must be a list of {\"seat\", \"host\"} objects")
    def entry_fault(index: int, message: str, seat: int | None = None) -> RecordFault:
        return RecordFault(None, None, seat, "format", f"'bots' entry {index}: {message}")

    bots: list[BotSeat] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict) or set(entry) != {"seat", "host"}:
            raise entry_fault(index, 'must be an object with exactly "seat" and "host"')
        seat, host = entry["seat"], entry["host"]
        if not is_seat(seat):
            raise entry_fault(index, f"'seat' must be a seat of the table (0 to {seats - 1}), got {seat!r}")
        assert isinstance(seat, int)
        if bots and seat <= bots[-1].seat:
            order = f"seat {seat} comes after seat {bots[-1].seat}: bots are listed once each, in seat order"
            raise entry_fault(index, order, seat)
        if host is not None and not is_seat(host):
            raise entry_fault(index, f"'host' must be a seat (0 to {seats - 1}) or null, got {host!r}", seat)
        if host == seat:
            raise entry_fault(index, "a bot on a laptop of its own has 'host' null, not its own seat", seat)
        assert host is None or isinstance(host, int)
        bots.append(BotSeat(seat, host))
    return tuple(bots)


def replay(record: GameRecord) -> Replay:
    """Replay a record with full knowledge; RecordFault for the first fault found."""
    try:
        game = get_game(record.game)
        options = game.options_from_json(record.options)
        state = game.new_game(len(record.players), options)
    except RuleError as exc:
        raise RecordFault(None, None, exc.seat, exc.rule, exc.message) from exc
    rounds: list[ReplayedRound] = []
    for index, round_record in enumerate(record.rounds):
        phase = game.expected(state).phase
        if phase == "over":
            raise RecordFault(index, None, None, "format", "a round after the game has ended")
        if phase != "deal":
            raise RecordFault(
                index - 1, None, None, "format", "the round ends before all its moves were made"
            )
        try:
            deal = game.deal_from_json(state, round_record.deal)
            state = game.start_round(state, deal)
        except RuleError as exc:
            raise RecordFault(index, None, exc.seat, exc.rule, exc.message) from exc
        played: list[tuple[JSONObject, Any]] = []
        for move_index, move_raw in enumerate(round_record.moves):
            seat = move_raw.get("seat")
            try:
                move = game.move_from_json(move_raw)
                state = game.apply(state, move)
            except RuleError as exc:
                fault_seat = exc.seat if exc.seat is not None else seat
                raise RecordFault(
                    index,
                    move_index,
                    fault_seat if isinstance(fault_seat, int) else None,
                    exc.rule,
                    exc.message,
                ) from exc
            played.append((move_raw, state))
        rounds.append(ReplayedRound(round_record.deal, game.round_report(state), tuple(played)))
    complete = game.expected(state).phase == "over"
    return Replay(game, record.players, complete, tuple(rounds), state, bots=record.bots)


def replay_text(text: str) -> Replay:
    return replay(parse_record(load_record_text(text)))


def record_from_moves(
    game: Game[Any, Any, Any, Any],
    players: Sequence[str],
    options: Any,
    rounds: Sequence[tuple[Any, Sequence[Any]]],
    bots: Sequence[BotSeat] = (),
) -> GameRecord:
    """A record from engine values: each round's deal and its moves in order."""
    return GameRecord(
        game.id,
        tuple(players),
        game.options_to_json(options),
        tuple(
            RoundRecord(game.deal_to_json(deal), tuple(game.move_to_json(m) for m in moves))
            for deal, moves in rounds
        ),
        tuple(bots),
    )


__all__ = [
    "FORMAT",
    "BotSeat",
    "FormatError",
    "GameRecord",
    "RecordFault",
    "Replay",
    "RoundRecord",
    "load_record_text",
    "parse_record",
    "record_from_moves",
    "replay",
    "replay_text",
]
