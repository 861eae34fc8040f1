"""A plain-text game on one laptop against bots (no network): the simplest way to play.

The full-screen client replaces this for normal use; this loop stays useful on any terminal,
in scripts and in tests, since it reads moves as numbers from a text stream.
"""

from __future__ import annotations

import random
import secrets
from typing import Any, TextIO

from engine.api import Game
from engine.playout import shuffled_deal
from engine.record import GameRecord, record_from_moves
from lanplay.bots import Bot, make_bot
from lanplay.describe import move_text, seat_name

HUMAN = 0


def play_local(
    game: Game[Any, Any, Any, Any],
    name: str,
    bots: int,
    options: Any,
    bot_kind: str,
    stdin: TextIO,
    out: TextIO,
    seed: int | None = None,
) -> GameRecord:
    """Play until the game ends or input ends; returns the record of what was played."""
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    players = [name, *(f"Bot {i}" for i in range(1, bots + 1))]
    seat_bots: dict[int, Bot] = {
        seat: make_bot(game.id, bot_kind, rng.randrange(1 << 30)) for seat in range(1, len(players))
    }
    state = game.new_game(len(players), options)
    rounds: list[tuple[Any, list[Any]]] = []
    print(f"{game.title}: {', '.join(players)}. Type the number of a move; 'q' stops.", file=out)
    while True:
        expected = game.expected(state)
        if expected.phase == "over":
            break
        if expected.phase == "deal":
            if rounds:
                print("Round over: " + _report(game, state, players), file=out)
            deal = shuffled_deal(game, state, rng)
            state = game.start_round(state, deal)
            rounds.append((deal, []))
            print(f"\n— Round {len(rounds)} —", file=out)
            continue
        moves = []
        for seat in expected.seats:
            view = game.view(state, seat)
            if seat == HUMAN:
                move = _ask(game, view, players, stdin, out)
                if move is None:
                    return record_from_moves(game, players, options, rounds)
            else:
                move = seat_bots[seat].choose(game, view, seat)
            moves.append(move)
        for move in moves:
            state = game.apply(state, move)
            rounds[-1][1].append(move)
            if game.move_seat(move) != HUMAN:
                shown = game.move_to_json(move)
                if "predict" in shown:
                    shown["predict"] = None  # another seat's prediction stays hidden (S-3.4)
                print("  " + move_text(players, shown), file=out)
    print("Round over: " + _report(game, state, players), file=out)
    winners = game.winners(state) or ()
    print("Game over. Winner: " + " and ".join(seat_name(players, w) for w in winners), file=out)
    return record_from_moves(game, players, options, rounds)


def _report(game: Game[Any, Any, Any, Any], state: Any, players: list[str]) -> str:
    report = game.round_report(state)
    totals = ", ".join(f"{p} {t}" for p, t in zip(players, game.totals(state), strict=True))
    return f"{report}; totals: {totals}"


def _ask(game: Game[Any, Any, Any, Any], view: Any, players: list[str], stdin: TextIO, out: TextIO) -> Any:
    moves = game.legal_moves(view, HUMAN)
    public = game.public_state(view)
    print(f"\nTable: {public.get('round', public)}", file=out)
    for index, move in enumerate(moves, 1):
        print(f"  {index:2}. {move_text(players, game.move_to_json(move))}", file=out)
    while True:
        print("Your move> ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line or line.strip().lower() in {"q", "quit"}:
            print("\nStopped.", file=out)
            return None
        text = line.strip()
        if text.isdigit() and 1 <= int(text) <= len(moves):
            return moves[int(text) - 1]
        print(f"Please type a number from 1 to {len(moves)}.", file=out)
