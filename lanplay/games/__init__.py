"""The games lanplay plays, each one bundle (lanplay/games/GAME/, see bundle.py), registered here once; and
what is done the same way for every game: bots by kind, option help, the replay of a record.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from engine.games import all_games, get_game
from engine.record import Replay
from lanplay.bots import BOT_KINDS, NORMAL_BUDGET, Bot, RandomBot
from lanplay.bots.expert import ExpertBot, Searcher
from lanplay.games import sixes, sixth_sense, take6
from lanplay.games.bundle import GameBundle
from lanplay.ui.describe import int_or_none, seat_name
from lanplay.ui.i18n import add_game_texts

# The registry: one line a game, in the order the lobby offers them.
BUNDLES: tuple[GameBundle, ...] = (sixth_sense.BUNDLE, take6.BUNDLE, sixes.BUNDLE)

_BY_ID = {bundle.id: bundle for bundle in BUNDLES}
for _bundle in BUNDLES:
    add_game_texts(_bundle.id, _bundle.texts, _bundle.rules)


def game_bundle(game_id: str) -> GameBundle:
    bundle = _BY_ID.get(game_id)
    if bundle is None:
        raise ValueError(f"unknown game {game_id!r}; known: {', '.join(sorted(_BY_ID))}")
    return bundle


def searcher_for(game_id: str) -> Searcher:
    """A fresh searcher of the game's bundle for one expert bot (it keeps state between decisions)."""
    bundle = _BY_ID.get(game_id)
    if bundle is None:
        raise ValueError(f"no expert bot for game {game_id!r}")
    return bundle.searcher()


def make_bot(game_id: str, kind: str, seed: int | None = None, budget: float | None = None) -> Bot:
    """A bot by kind (`BOT_KINDS`): "easy" or "random" (a random legal move), "normal" (the expert's
    search at `NORMAL_BUDGET` a decision), "expert" (the search, lanplay/bots/expert.py with the game's
    searcher; `budget` seconds a decision, default LANPLAY_BOT_BUDGET or 0.25), or "heuristic" (each
    game's own rule-of-thumb player, no search)."""
    if kind in ("easy", "random"):
        return RandomBot(seed)
    if kind == "normal":
        return ExpertBot(searcher_for(game_id), seed, NORMAL_BUDGET)
    if kind == "expert":
        return ExpertBot(searcher_for(game_id), seed, budget)
    if kind != "heuristic":
        raise ValueError(f"unknown bot kind {kind!r}: use one of {', '.join(BOT_KINDS)}")
    bundle = _BY_ID.get(game_id)
    if bundle is None:
        raise ValueError(f"no heuristic bot for game {game_id!r}")
    return bundle.heuristic(seed)


# --- table options (`--option KEY=VALUE`) --------------------------------------------------------------

# What each game's option does, for `lanplay play --help` and the error of a bad key. The keys are the
# engines' own (`options_to_json`); tests/test_cli.py checks that the two lists agree.
OPTION_HELP: Mapping[str, Mapping[str, str]] = {bundle.id: bundle.words.OPTION_HELP for bundle in BUNDLES}


def valid_option_keys(game_id: str) -> tuple[str, ...]:
    game = get_game(game_id)
    return tuple(game.options_to_json(game.options_from_json({})))


def option_keys_text(game_id: str) -> str:
    return ", ".join(valid_option_keys(game_id))


def option_notes(game_id: str, options: Mapping[str, object]) -> list[str]:
    """Options that are allowed together but where one changes nothing, said rather than accepted in silence."""
    bundle = _BY_ID.get(game_id)
    return bundle.words.option_notes(options) if bundle is not None else []


def options_help() -> str:
    """The epilog of `lanplay play --help`: every game's option keys and what they do."""
    lines = ["table options (--option KEY=VALUE, repeatable):"]
    for game_id in sorted(all_games()):
        lines.append(f"  {game_id} ({get_game(game_id).title}):")
        for key in valid_option_keys(game_id):
            lines.append(f"    {key:<11} {OPTION_HELP.get(game_id, {}).get(key, '')}")
    lines.append("example: lanplay play --game take6 --bots 4 --option logic=true")
    return "\n".join(lines)


# --- the replay ----------------------------------------------------------------------------------------------


def replay_lines(replay: Replay) -> Iterator[str]:
    """The whole game, round by round and turn by turn, for a person."""
    players = replay.players
    game = replay.game
    hosts = {bot.seat: bot.host for bot in replay.bots}

    def at_table(seat: int) -> str:
        if seat not in hosts:
            return players[seat]
        host = hosts[seat]
        where = "on a laptop of its own" if host is None else f"run by {seat_name(players, host)}'s laptop"
        return f"{players[seat]} (a bot {where})"

    yield f"{game.title} — {', '.join(at_table(seat) for seat in range(len(players)))}"
    describe_round = game_bundle(game.id).words.round_lines
    state = game.new_game(len(players), replay.final_state.options)
    for index, played in enumerate(replay.rounds):
        yield ""
        yield f"Round {index + 1}: {seat_name(players, int_or_none(played.deal.get('dealer')))} deals"
        state = game.start_round(state, game.deal_from_json(state, played.deal))
        yield from describe_round(players, state, played.moves)
        if played.moves:
            state = played.moves[-1][1]
        if game.expected(state).phase in ("deal", "over"):
            totals = ", ".join(f"{n} {v}" for n, v in zip(players, game.totals(state), strict=True))
            yield f"  Totals after round {index + 1}: {totals}"
        else:
            yield f"  Round {index + 1} is not finished: the record stops here."
    yield ""
    totals = ", ".join(f"{name} {total}" for name, total in zip(players, game.totals(replay.final_state), strict=True))
    yield f"Totals: {totals}"
    winners = game.winners(replay.final_state)
    if winners is None:
        yield "The record stops before the game ends."
    else:
        word = "Winner" if len(winners) == 1 else "Winners"
        yield f"{word}: " + " and ".join(seat_name(players, w) for w in winners)
