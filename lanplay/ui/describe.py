"""Words for people: why a trick went as it did, where a 6 nimmt! card went, moves, rounds and whole
replays as text (used by `lanplay replay`, `lanplay play --plain` and the full-screen table).

The stories are built from the engines' own decisions (`trick_winner`, `placement_target`): this module
never decides a rule itself, it says what the engine decided. Each phrase is a `Msg` (a message id and
its parameters, lanplay/ui/i18n.py holds the words), so the table shows it in English or Dutch and the
replay prints the English.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.record import RecordFault, Replay
from lanplay.net.lobby import SeatInfo
from lanplay.ui.i18n import Msg, t
from protocol.plan import bot_seats

# --- names ---------------------------------------------------------------------------------------------


def seat_name(players: Sequence[str], seat: int | None) -> str:
    if seat is None:
        return "nobody"
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"


def default_player_name() -> str:
    """The login name, so a sentence reads "Ann plays R5" rather than "You plays R5"."""
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = ""
    return login.capitalize()[:12] or "Player"


def sixth_sense_card_name(code: str) -> str:
    """A 6th Sense card as people name it: the 6/9 card is `G6/9` everywhere it is shown (S-1.1);
    records keep the code `G6`."""
    return f"{code[0]}6/9" if code[1:] == "6" else code


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# --- 6th Sense: the story of a trick ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrickStory:
    """What the engine decided about one complete trick, and the words that say why (S-4.5, S-5, S-6)."""

    trick_no: int  # 1-based
    plays: tuple[Any, ...]  # engine.sixth_sense.Play, in the order played
    winner: int | None
    why: tuple[Msg, ...]  # the reasons, in the order a reader needs them
    blocked: Any = None  # the Play a 0 blocked (S-6.1)
    blocker: Any = None
    split: bool | None = None  # S-6.5: the winner's decision, once made
    splittable: bool = False  # a 12 counts: the winner may count two tricks
    names: tuple[str, ...] = field(default=())

    def with_split(self, split: bool) -> TrickStory:
        return replace(self, split=split)

    def notes(self, skip_marked: bool = False) -> tuple[Msg, ...]:
        """The reasons and the split decision; `skip_marked`: leave out the block itself, which the
        table already marks on the cards."""
        notes = tuple(m for m in self.why if not (skip_marked and m.key == "tw_block"))
        if self.split is not None and self.winner is not None:
            notes += (Msg("tw_split_yes" if self.split else "tw_split_no", {"name": self.name_of(self.winner)}),)
        return notes

    def name_of(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"#{seat}"


def trick_story(trick_no: int, plays: Sequence[Any], trump: str | None, names: Sequence[str]) -> TrickStory:
    """Why a complete trick went as it did, from `engine.sixth_sense.trick_winner` (the one place that
    resolves a trick): which cards a block took out, who set the led colour after a block of the led
    card, the 4s (reversal or cancelling), why the winning card won, and a 12 that allows a split."""
    from engine.sixth_sense import BLOCK, DOUBLE, PEEK, REVERSAL, trick_winner

    plays = tuple(plays)
    winner, counting, led = trick_winner(plays, trump)

    def name(play: Any) -> str:
        return names[play.seat] if 0 <= play.seat < len(names) else f"#{play.seat}"

    def card(play: Any) -> str:
        return sixth_sense_card_name(play.card.code)

    why: list[Msg] = []
    out = [p for p in plays if p not in counting]  # S-5: the cards the engine left out
    blocker = next((p for p in out if p.block is not None and p.card.value == BLOCK), None)
    blocked = next((p for p in out if p is not blocker), None)
    if blocker is not None and blocked is not None:  # S-6.1
        why.append(Msg("tw_block", {"name": name(blocker), "card": card(blocker), "card2": card(blocked)}))
        if blocked.card.value in (REVERSAL, PEEK, DOUBLE):
            why.append(Msg("tw_block_action", {"card": card(blocked)}))
        if blocked is plays[0] and counting and led is not None:
            after = plays.index(blocker) + 1
            setter = plays[after] if after < len(plays) else counting[0]
            why.append(Msg("tw_led_set", {"name": name(setter), "card": card(setter), "colour": led}))
    if winner is None:
        story_why = (*why, Msg("tw_all_blocked"))
        return TrickStory(trick_no, plays, None, story_why, blocked, blocker, names=tuple(names))
    fours = [p for p in counting if p.card.value == REVERSAL]
    reversed_order = len(fours) % 2 == 1  # S-6.2: an odd number reverses, two cancel
    fours_text = ", ".join(card(p) for p in fours)
    if len(fours) == 1:
        why.append(Msg("tw_reverse", {"card": fours_text}))
    elif fours:
        why.append(Msg("tw_reverse_many" if reversed_order else "tw_cancel", {"cards": fours_text}))
    winning = next(p for p in counting if p.seat == winner)
    # The winning card's reason is worth a line only when "highest of the led colour" is not the whole
    # story: a reversal, a block, or another colour (trump) taking the trick.
    if fours or blocker is not None or winning.card.colour != led:
        if trump is not None and winning.card.colour == trump:
            key = "tw_win_trump_low" if reversed_order else "tw_win_trump"
        elif winning.card.colour == led:
            key = "tw_win_led_low" if reversed_order else "tw_win_led"
        else:
            key = "tw_win_off"  # S-6.2: only under a reversal does another colour win
        why.append(Msg(key, {"name": name(winning), "card": card(winning), "colour": winning.card.colour}))
        off_colour_ties = [p for p in counting if p is not winning and p.value == winning.value
                           and p.card.colour not in (led, trump)]
        if key == "tw_win_off" and off_colour_ties:
            why.append(Msg("tw_tie"))  # S-6.2: of equally low cards the last played wins
    twelves = [p for p in counting if p.card.value == DOUBLE]
    if twelves:  # S-6.5
        why.append(Msg("tw_twelve", {"card": card(twelves[0]), "name": names[winner] if winner < len(names) else ""}))
    return TrickStory(trick_no, plays, winner, tuple(why), blocked, blocker, None, bool(twelves), tuple(names))


# --- 6 nimmt!: where each revealed card goes ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """One revealed card placed (T-3.3, T-5.3), or taking a full row as its sixth card (T-3.4)."""

    card: int
    seat: int
    row: int  # 0-based
    side: str  # "right" or "left"
    took: tuple[int, ...] = ()  # the cards taken (T-3.4)


def placements(
    rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]], profi: bool
) -> tuple[list[Placement], int]:
    """Place `pending` (card, seat) lowest first onto `rows` (changed in place) as the engine's
    `placement_target` says, until a card that fits nowhere and owes a row choice (T-3.5). Returns the
    placements and how many cards of `pending` were placed."""
    from engine.take6 import ROW_LIMIT, placement_target

    done: list[Placement] = []
    for card, seat in pending:
        target = placement_target(rows, card, profi)
        if target is None:
            break
        index, side = target
        row = rows[index]
        if len(row) >= ROW_LIMIT:
            done.append(Placement(card, seat, index, side, tuple(row)))
            rows[index] = (card,)
        elif side == "right":
            done.append(Placement(card, seat, index, side))
            rows[index] = (*row, card)
        else:
            done.append(Placement(card, seat, index, side))
            rows[index] = (card, *row)
    return done, len(done)


def placement_msg(names: Sequence[str], placement: Placement) -> Msg:
    from engine.take6 import row_bullheads

    params: dict[str, object] = {"name": seat_name(names, placement.seat), "card": placement.card,
                                 "row": placement.row + 1}
    if placement.took:
        return Msg("ev_sixth", {**params, "bulls": row_bullheads(placement.took)})
    return Msg("ev_placed" if placement.side == "right" else "ev_placed_left", params)


def rows_text(rows: Sequence[Sequence[int]]) -> str:
    """Rows labelled 1–4 as the table labels them (T-2.1): `row 1: 19 23 · row 2: 52 …`."""
    return " · ".join(f"row {i}: {' '.join(str(c) for c in row)}" for i, row in enumerate(rows, 1))


def row_lines(rows: Sequence[Sequence[int]], indent: str) -> Iterator[str]:
    """One line per row, with the bullheads it holds (T-1.1)."""
    from engine.take6 import row_bullheads

    for i, row in enumerate(rows, 1):
        cards = " ".join(str(c) for c in row)
        yield f"{indent}row {i}: {cards} ({plural(row_bullheads(row), 'bullhead', 'bullheads')})"


# --- table options (`--option KEY=VALUE`) --------------------------------------------------------------

# What each game's option does, for `lanplay play --help` and the error of a bad key. The keys are the
# engines' own (`options_to_json`); tests/test_cli.py checks that the two lists agree.
OPTION_HELP: dict[str, dict[str, str]] = {
    "sixth-sense": {
        "beginner": "true: no trump; points by distance to the prediction (S-8.1)",
        "target": "N: play until someone reaches N points (S-8.2)",
        "late_trump": "true: trump is turned after the predictions (S-8.3)",
    },
    "take6": {
        "tactic": "true: only cards 1 to 10 x players + 4 (T-5.1)",
        "logic": "true: cards are picked in turn from an open pool (T-5.2)",
        "profi": "true: a card may also go left of a row (T-5.3)",
    },
    "sixes": {"chips": "N: chips each player starts with, 1-50 (default 10, X-1.4)"},
}


def valid_option_keys(game_id: str) -> tuple[str, ...]:
    from engine.games import get_game

    game = get_game(game_id)
    return tuple(game.options_to_json(game.options_from_json({})))


def option_keys_text(game_id: str) -> str:
    return ", ".join(valid_option_keys(game_id))


def option_notes(game_id: str, options: Mapping[str, object]) -> list[str]:
    """Options that are allowed together but where one changes nothing, said rather than accepted in silence.
    The rules let options combine freely (S-8), so such a table is not refused."""
    notes = []
    if game_id == "sixth-sense" and options.get("beginner") is True and options.get("late_trump") is True:
        notes.append("late_trump=true changes nothing with beginner=true: a beginner game turns no trump "
                     "(S-8.1, S-8.3)")
    return notes


def options_help() -> str:
    """The epilog of `lanplay play --help`: every game's option keys and what they do."""
    from engine.games import all_games, get_game

    lines = ["table options (--option KEY=VALUE, repeatable):"]
    for game_id in sorted(all_games()):
        lines.append(f"  {game_id} ({get_game(game_id).title}):")
        for key in valid_option_keys(game_id):
            lines.append(f"    {key:<11} {OPTION_HELP.get(game_id, {}).get(key, '')}")
    lines.append("example: lanplay play --game take6 --bots 4 --option logic=true")
    return "\n".join(lines)


# --- moves -------------------------------------------------------------------------------------------------


def _card_text(game_id: str, code: object) -> str:
    return sixth_sense_card_name(str(code)) if game_id == "sixth-sense" else str(code)


def move_text(players: Sequence[str], move: dict[str, object], game_id: str = "sixth-sense") -> str:
    """One record move as a person reads it: 'Ann plays R5', 'Ann plays R0, blocking Y4'."""
    seat = move.get("seat")
    who = seat_name(players, seat if isinstance(seat, int) else None)
    if "predict" in move:
        shown = f" ({_card_text(game_id, move['predict'])})" if move["predict"] else ""
        return f"{who} lays a prediction card{shown}"
    if "play" in move:
        text = f"{who} plays {_card_text(game_id, move['play'])}"
        if "as" in move:
            text += f" as {move['as']}"
        if "block" in move:
            text += f", blocking {_card_text(game_id, move['block'])}"
        return text
    if "split" in move:
        return f"{who} {'splits the trick: it counts as two' if move['split'] else 'keeps the trick as one'}"
    if "take_row" in move:
        row = move["take_row"]
        return f"{who} takes row {row + 1 if isinstance(row, int) else row}"
    if "pick" in move:
        return f"{who} picks {move['pick']}"
    if move.get("pass"):
        return f"{who} passes"
    return f"{who}: {move}"


# --- the replay ----------------------------------------------------------------------------------------------


def fault_text(fault: RecordFault, players: Sequence[str] | None) -> str:
    """A record's fault in the replay's own numbering and names ("Round 1, move 12, Bot 1"); the JSON
    error object keeps the spec's 0-based indexes."""
    where = []
    if fault.round is not None:
        where.append(f"Round {fault.round + 1}")
    if fault.move is not None:
        where.append(f"move {fault.move + 1}")
    if fault.seat is not None:
        where.append(seat_name(players, fault.seat) if players else f"seat {fault.seat + 1}")
    return f"faulty record ({', '.join(where) or 'header'}): {fault.rule}: {fault.message}"


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
    describe_round = {"sixth-sense": _sixth_sense_round, "take6": _take6_round, "sixes": _sixes_round}[game.id]
    state = game.new_game(len(players), replay.final_state.options)
    for index, played in enumerate(replay.rounds):
        yield ""
        yield f"Round {index + 1}: {seat_name(players, _int(played.deal.get('dealer')))} deals"
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


Moves = Sequence[tuple[dict[str, object], Any]]


def _sixth_sense_round(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    from engine.sixth_sense import SIXTH_SENSE, Play

    r = dealt.round
    if r.trump is not None:
        yield f"  Trump: {sixth_sense_card_name(r.trump.code)} ({t('colour_' + r.trump.colour)})"
    elif dealt.options.beginner:
        yield "  No trump (beginner)"
    trick: list[Any] = []
    texts: list[str] = []
    for move, after in moves:
        if "predict" in move:
            yield "  " + move_text(players, move)
            continue
        if "split" in move:
            yield "    " + move_text(players, move)
            continue
        play = SIXTH_SENSE.move_from_json(move)
        assert isinstance(play, Play)
        trick.append(play)
        texts.append(move_text(players, move).replace(" plays ", " "))
        winners = after.round.trick_winners
        if len(trick) < dealt.players:
            continue
        trump = after.round.trump.colour if after.round.trump is not None and not dealt.options.beginner else None
        story = trick_story(len(winners), trick, trump, players)
        outcome = f"{seat_name(players, story.winner)} wins" if story.winner is not None else "nobody wins"
        yield f"  Trick {len(winners)}: {'; '.join(texts)} → {outcome}"
        for note in story.notes():
            yield "    " + _sentence(note.text("en"))
        trick, texts = [], []
        for peek in after.round.peeks:
            if peek.trick == len(winners) - 1:
                peeker, target = seat_name(players, peek.peeker), seat_name(players, peek.target)
                yield f"    {peeker} led an 8 and looks at {target}'s prediction card (S-6.4)"
    last = moves[-1][1].round if moves else None
    if last is not None and last.points is not None:
        for seat, name in enumerate(players):
            prediction = last.predictions[seat]
            card = sixth_sense_card_name(prediction.code) if prediction is not None else "?"
            points = last.points[seat]
            yield (f"  {name}: predicted {card}, {plural(last.tricks[seat], 'trick', 'tricks')},"
                   f" {points:+d} {'point' if abs(points) == 1 else 'points'}")


def _take6_round(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    from engine.take6 import row_bullheads

    yield "  Rows: " + rows_text(dealt.rows)
    state = dealt
    turn = 0
    for move, after in moves:
        if "pick" in move:
            yield "  " + move_text(players, move, "take6")
        elif "take_row" in move:
            row = _int(move.get("take_row")) or 0
            card, seat = state.pending[0]
            taken = state.rows[row]
            yield (f"    {seat_name(players, seat)}'s {card} is lower than every row: takes row {row + 1}"
                   f" ({' '.join(str(c) for c in taken)}: {plural(row_bullheads(taken), 'bullhead', 'bullheads')})")
            work = list(state.rows)
            work[row] = (card,)
            yield from _placement_lines(players, work, state.pending[1:], dealt.options.profi)
        elif sum(1 for c in state.chosen if c is None) == 1:  # T-3.1: the last choice reveals them all
            turn += 1
            seat = _int(move.get("seat")) or 0
            chosen = [(c, s) for s, c in enumerate(state.chosen) if c is not None]
            revealed = sorted([*chosen, (int(str(move["play"])), seat)])  # T-3.2: lowest first
            yield f"  Turn {turn}: revealed " + ", ".join(f"{seat_name(players, s)} {c}" for c, s in revealed)
            yield from _placement_lines(players, list(state.rows), revealed, dealt.options.profi)
        if after.stage in ("deal", "over") and state.stage not in ("deal", "over"):
            yield "  Rows at the end:"
            yield from row_lines(after.rows, "    ")
            yield "  Bullheads this round: " + ", ".join(
                f"{n} {p}" for n, p in zip(players, after.penalty, strict=True))
        state = after


def _placement_lines(players: Sequence[str], rows: list[tuple[int, ...]], pending: Sequence[tuple[int, int]],
                     profi: bool) -> Iterator[str]:
    done, _ = placements(rows, pending, profi)
    for placement in done:
        yield "    " + placement_msg(players, placement).text("en")


def _sixes_round(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    state = dealt
    for move, after in moves:
        seat = _int(move.get("seat"))
        if move.get("pass"):
            paid = "pays a chip" if seat is not None and state.chips[seat] > 0 else "has no chip to pay"
            yield f"  {seat_name(players, seat)} passes and {paid}"
        else:
            yield "  " + move_text(players, move, "sixes")
        state = after
    r = state.round
    if r is not None and r.winner is not None:
        pot = plural(r.pot_won, "chip", "chips")
        yield f"  {seat_name(players, r.winner)} is out of cards and wins the pot of {pot}"
        yield "  Columns at the end: " + sixes_columns_text(r.columns)


def sixes_columns_text(columns: Sequence[Any]) -> str:
    """Each suit's column as its lowest and highest card (X-2.3): `Oros A–K, Copas 3–J, …`."""
    from engine.sixes import SUITS

    parts = []
    for suit, column in zip(SUITS, columns, strict=True):
        name = t(f"suit_{suit}")
        parts.append(f"{name} {column[0][1:]}–{column[1][1:]}" if column is not None else f"{name} not opened")
    return ", ".join(parts)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
