"""Words for people: moves, rounds and whole replays as text (used by `lanplay replay` and `lanplay play`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.record import Replay
from lanplay.lobby import SeatInfo


def seat_name(players: Sequence[str], seat: int | None) -> str:
    if seat is None:
        return "nobody"
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"


def move_text(players: Sequence[str], move: dict[str, object]) -> str:
    """One record move as a person reads it: 'Ann plays R5 (blocks Y4)'."""
    who = seat_name(players, move.get("seat") if isinstance(move.get("seat"), int) else None)  # type: ignore[arg-type]
    if "predict" in move:
        return f"{who} lays a prediction card" + (f" ({move['predict']})" if move["predict"] else "")
    if "play" in move:
        text = f"{who} plays {move['play']}"
        if "as" in move:
            text += f" as {move['as']}"
        if "block" in move:
            text += f", blocking {move['block']}"
        return text
    if "split" in move:
        return f"{who} {'splits the trick into two' if move['split'] else 'keeps the trick whole'}"
    if "take_row" in move:
        return f"{who} takes row {int(move['take_row']) + 1}"  # type: ignore[call-overload]
    if "pick" in move:
        return f"{who} picks {move['pick']}"
    if move.get("pass"):
        return f"{who} passes"
    return f"{who}: {move}"


def replay_lines(replay: Replay) -> Iterator[str]:
    """The whole game, round by round and trick by trick, for a person."""
    players = replay.players
    game = replay.game
    yield f"{game.title} — {', '.join(players)}"
    for index, played in enumerate(replay.rounds):
        deal = played.deal
        yield ""
        header = f"Round {index + 1}: {seat_name(players, deal.get('dealer'))} deals"  # type: ignore[arg-type]
        if deal.get("trump"):
            header += f", trump {deal['trump']}"
        if "rows" in deal:
            header += f", rows {deal['rows']}"
        yield header
        if game.id == "sixth-sense":
            yield from _sixth_sense_round(players, played.moves)
        else:
            for move, _ in played.moves:
                yield "  " + move_text(players, move)
        yield "  " + _report_text(players, played.report)
    yield ""
    totals = ", ".join(f"{name} {total}" for name, total in zip(players, game.totals(replay.final_state), strict=True))
    yield f"Totals: {totals}"
    winners = game.winners(replay.final_state)
    if winners is None:
        yield "The record stops before the game ends."
    else:
        yield "Winner: " + " and ".join(seat_name(players, w) for w in winners)


def _sixth_sense_round(players: Sequence[str], moves: Sequence[tuple[dict[str, object], Any]]) -> Iterator[str]:
    trick: list[str] = []
    done = 0
    for move, state in moves:
        if "predict" in move:
            yield "  " + move_text(players, move)
            continue
        if "split" in move:
            yield "    " + move_text(players, move)
            continue
        trick.append(move_text(players, move).replace(" plays ", " "))
        winners = state.round.trick_winners
        if len(winners) > done:
            done = len(winners)
            yield f"  Trick {done}: {'; '.join(trick)} → {seat_name(players, winners[-1])} wins"
            trick = []
            for peek in state.round.peeks:
                if peek.trick == done - 1:
                    peeker, target = seat_name(players, peek.peeker), seat_name(players, peek.target)
                    yield f"    {peeker} peeks at {target}'s prediction card"


def _report_text(players: Sequence[str], report: dict[str, object]) -> str:
    parts = []
    for key, value in report.items():
        if key == "dealer" or key == "trick_winners":
            continue
        if isinstance(value, list) and len(value) == len(players):
            value = ", ".join(f"{name} {v}" for name, v in zip(players, value, strict=True))
        parts.append(f"{key}: {value}")
    return "; ".join(parts)


def bot_seats(seats: Sequence[SeatInfo]) -> tuple[tuple[int, int | None], ...]:
    """Each bot seat and the seat whose laptop runs it (None: a laptop with no other seat here, which
    keeps the bot's cards to itself). Seats that are no bots are left out."""
    by_key = {seat.public_key: index for index, seat in enumerate(seats)}
    out: list[tuple[int, int | None]] = []
    for index, seat in enumerate(seats):
        if seat.runs_on is None:
            continue
        host = by_key.get(seat.runs_on)
        out.append((index, None if host == index else host))
    return tuple(out)


def bot_lines(seats: Sequence[SeatInfo]) -> list[str]:
    """'Bot 1 runs on Ann's laptop, which can see its cards.' for every bot seat."""
    lines = []
    for bot, host in bot_seats(seats):
        name = seats[bot].name
        if host is None:
            lines.append(f"{name} runs on a laptop of its own: no seat here can see its cards.")
        else:
            lines.append(f"{name} runs on {seats[host].name}'s laptop, which can see its cards.")
    return lines
