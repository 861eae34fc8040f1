"""How 6th Sense is told: its cards (the 6/9 card is G6/9, S-1.1), why a trick went as it did (S-4.5, S-5,
S-6), a round of a record for `lanplay replay`, the table's log move by move, its options (S-8).

What happened is the engine's account (engine/sixth_sense_events.py), and why a trick went as it did is built from
the engine's own `trick_winner`: this module never decides a rule itself, it says what the engine decided. Each
phrase is a `Msg` (lanplay/ui/i18n.py holds the words)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.sixth_sense import BLOCK, DOUBLE, PEEK, REVERSAL, SIXTH_SENSE, trick_winner
from engine.sixth_sense_events import Peeked, Played, Predicted, SplitChosen, TrickDone, TrumpTurned
from engine.sixth_sense_events import move_events as told
from engine.sixth_sense_events import reveal_events as told_reveal
from lanplay.games.bundle import Moves
from lanplay.ui.describe import move_text, plural, seat_name, sentence
from lanplay.ui.i18n import Msg, t
from lanplay.ui.values import Event, ResultRow, RoundResult, TableView

OPTION_HELP: Mapping[str, str] = {
    "beginner": "true: no trump; points by distance to the prediction (S-8.1)",
    "target": "N: play until someone reaches N points (S-8.2)",
    "late_trump": "true: trump is turned after the predictions (S-8.3)",
}


def card_name(code: str) -> str:
    """A 6th Sense card as people name it: the 6/9 card is `G6/9` everywhere it is shown (S-1.1);
    records keep the code `G6`."""
    return f"{code[0]}6/9" if code[1:] == "6" else code


def option_notes(options: Mapping[str, object]) -> list[str]:
    """Options that are allowed together but where one changes nothing, said rather than accepted in silence.
    The rules let options combine freely (S-8), so such a table is not refused."""
    notes = []
    if options.get("beginner") is True and options.get("late_trump") is True:
        notes.append("late_trump=true changes nothing with beginner=true: a beginner game turns no trump "
                     "(S-8.1, S-8.3)")
    return notes


def form_notes(values: Mapping[str, object]) -> tuple[str, ...]:
    """The lobby form's notes (message ids) for these option values."""
    if values.get("beginner") is True and values.get("late_trump") is True:
        return ("form_late_trump_beginner",)
    return ()


# --- the story of a trick ---------------------------------------------------------------------------------


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
    plays = tuple(plays)
    winner, counting, led = trick_winner(plays, trump)

    def name(play: Any) -> str:
        return names[play.seat] if 0 <= play.seat < len(names) else f"#{play.seat}"

    def card(play: Any) -> str:
        return card_name(play.card.code)

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


# --- a round of a record ------------------------------------------------------------------------------


def round_lines(players: Sequence[str], dealt: Any, moves: Moves) -> Iterator[str]:
    r = dealt.round
    if r.trump is not None:
        yield f"  Trump: {card_name(r.trump.code)} ({t('colour_' + r.trump.colour)})"
    elif dealt.options.beginner:
        yield "  No trump (beginner)"
    texts: list[str] = []
    state = dealt
    for move, after in moves:
        for event in told(state, SIXTH_SENSE.move_from_json(move), after):
            if isinstance(event, Predicted):
                yield "  " + move_text(players, move, card_name)
            elif isinstance(event, SplitChosen):
                yield "    " + move_text(players, move, card_name)
            elif isinstance(event, Played):
                texts.append(move_text(players, move, card_name).replace(" plays ", " "))
            elif isinstance(event, TrickDone):
                story = trick_story(event.trick_no, event.plays, event.trump, players)
                outcome = f"{seat_name(players, story.winner)} wins" if story.winner is not None else "nobody wins"
                yield f"  Trick {event.trick_no}: {'; '.join(texts)} → {outcome}"
                for note in story.notes():
                    yield "    " + sentence(note.text("en"))
                texts = []
            elif isinstance(event, Peeked):
                peeker, target = seat_name(players, event.peeker), seat_name(players, event.target)
                yield f"    {peeker} led an 8 and looks at {target}'s prediction card (S-6.4)"
        state = after
    last = moves[-1][1].round if moves else None
    if last is not None and last.points is not None:
        for seat, name in enumerate(players):
            prediction = last.predictions[seat]
            card = card_name(prediction.code) if prediction is not None else "?"
            points = last.points[seat]
            yield (f"  {name}: predicted {card}, {plural(last.tricks[seat], 'trick', 'tricks')},"
                   f" {points:+d} {'point' if abs(points) == 1 else 'points'}")


# --- the table's log ------------------------------------------------------------------------------------


def round_start_events(model: TableView, view: Any, round_no: int) -> list[Event]:
    r = view.round
    events = [Event("ev_round_start", {"round": round_no, "name": model.name(r.dealer)})]
    if view.options.beginner:
        events.append(Event("ev_no_trump"))
    elif r.trump is None:
        events.append(Event("ev_trump_late"))
    else:
        events.append(Event("ev_trump", {"colour": r.trump.colour}))
    return events


def move_events(model: TableView, before: Any, move: Any, after: Any) -> list[Event]:
    """The engine's account of `move` in the table's words; a peek's card goes to the peeker's model alone."""
    me = model.my_seat
    events: list[Event] = []
    for event in told(before, move, after):
        if isinstance(event, Predicted):
            if event.seat == me:
                assert event.card is not None
                events.append(Event("ev_you_predicted", {"card": str(event.card)}))
            else:
                events.append(Event("ev_predicted", {"name": model.name(event.seat)}))  # S-3.4: never which card
        elif isinstance(event, TrumpTurned):
            events.append(Event("ev_trump", {"colour": event.trump.colour}))  # S-8.3
        elif isinstance(event, SplitChosen):
            story = model.recent.get("last_trick")
            if isinstance(story, TrickStory):
                model.recent["last_trick"] = story.with_split(event.split)
            events.append(Event("ev_split" if event.split else "ev_nosplit", {"name": model.name(event.seat)}))
        elif isinstance(event, Played):
            name, card = model.name(event.seat), str(event.card)
            if event.block is not None:
                events.append(Event("ev_play_block", {"name": name, "card": card, "card2": str(event.block)}))
            elif event.as_value is not None:
                events.append(Event("ev_play_as", {"name": name, "card": card, "value": event.as_value}))
            else:
                events.append(Event("ev_play", {"name": name, "card": card}))
        elif isinstance(event, TrickDone):
            story = trick_story(event.trick_no, event.plays, event.trump, model.names())
            model.recent["last_trick"] = story
            if event.winner is None:
                events.append(Event("ev_trick_void", {"trick": event.trick_no}))
            else:
                events.append(Event("ev_trick_won", {"trick": event.trick_no, "name": model.name(event.winner)}))
            # S-6: why it went so, one indented line each (the last, the split, comes with the Split move)
            events.extend(Event(note.key, note.params) for note in story.why if note.key != "tw_all_blocked")
        elif isinstance(event, Peeked):  # S-6.4: only the peeker learns the card
            if event.peeker == me:
                if event.card is not None:
                    model.show_peek(event.trick + 1, event.target, str(event.card))
            elif event.target == me:
                events.append(Event("ev_peek_you", {"name": model.name(event.peeker)}))
            else:
                events.append(Event("ev_peek", {"name": model.name(event.peeker), "name2": model.name(event.target)}))
    return events


def reveal_events(before: Any, after: Any) -> list[Event]:
    """What the table learns when late cards are turned: the trump, after the predictions (S-8.3)."""
    return [Event("ev_trump", {"colour": event.trump.colour}) for event in told_reveal(before, after)
            if isinstance(event, TrumpTurned)]


def round_result(model: TableView, state: Any, round_no: int) -> RoundResult | None:
    """The finished round in public words (S-7.1: every prediction is revealed now)."""
    totals = model.game.totals(state)
    rows: list[ResultRow] = []
    r = state.round
    if r is None or r.points is None:
        return None
    for seat in range(state.players):
        prediction = r.predictions[seat]
        detail = Event("ev_ss_result", {"name": model.name(seat), "card": str(prediction),
                                        "tricks": r.tricks[seat], "points": r.points[seat]})
        rows.append(ResultRow(seat, detail, r.points[seat], totals[seat]))
    return RoundResult(round_no, tuple(rows))


def round_end_events(model: TableView, state: Any) -> list[Event]:
    return []
