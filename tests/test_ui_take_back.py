"""Taking a seat back on the screens (P-5.7): the lobby offers the seat of a table that went on without
this laptop's person (its take-back desk names this key) like a resume, and every table screen says who
is back from which round."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from engine.games import get_game
from lanplay.net.discovery import TableAdvert
from lanplay.ui.lobby_model import LobbyModel, Resume, ResumeOffer
from lanplay.ui.lobby_screen import lobby_text
from lanplay.ui.model import TableModel
from lanplay.ui.net_table import NetTable
from lanplay.ui.screens import screen_text
from protocol.continuation import Continuation
from protocol.identity import Identity
from protocol.plan import SeatInfo

HOST = "127.0.0.1"


def _desk(fingerprint: str) -> TableAdvert:
    return TableAdvert("ab" * 16, "take6", {}, 3, 3, "Ann", "aaaa-bbbb", 1, "10.0.0.9", 40999, back=(fingerprint,))


def test_the_lobby_offers_the_seat_back_like_a_resume_and_enter_asks_for_it() -> None:
    model = LobbyModel("Bob", "bbbb-cccc", HOST, "en")
    open_table = TableAdvert("cd" * 16, "take6", {}, 1, 4, "Cor", "cccc-dddd", 1, "10.0.0.8", 40998)
    model.set_tables({"desk": _desk("bbbb-cccc"), "open": open_table})
    text = " ".join(lobby_text(model).split())
    assert "Ann's table of 6 nimmt! went on without you: Enter or r takes your seat back (from the next round)" in text
    assert [t.table_id for t in model.tables] == [open_table.table_id]  # the desk is no table to join
    model.confirm()
    assert model.action == Resume() and model.resume is not None and model.resume.back is not None
    model.set_tables({"open": open_table})  # the desk closed (the game ended): nothing to take back
    assert model.resume is None


def test_x_declines_the_seat_and_it_is_not_offered_again() -> None:
    model = LobbyModel("Bob", "bbbb-cccc", HOST, "en")
    model.set_tables({"desk": _desk("bbbb-cccc")})
    model.forget_resume()
    assert model.resume is None and not model.forget_requested  # no journal of this laptop's is touched
    model.set_tables({"desk": _desk("bbbb-cccc")})
    assert model.resume is None


def test_a_laptop_that_was_killed_is_offered_its_seat_back_before_its_journal_and_the_journal_after() -> None:
    """After a kill -9 the journal's unfinished game is offered; once a desk names this laptop's key (the table
    went on without it), taking the seat back is offered in its place (resuming would find nobody); if the
    desk closes or is declined, the journal's line comes back."""
    model = LobbyModel("Bob", "bbbb-cccc", HOST, "en")
    journal = ResumeOffer("take6", ("Ann", "Bob", "Cor"))
    model.set_resume(journal)
    model.set_tables({"desk": _desk("bbbb-cccc")})
    assert model.resume is not None and model.resume.back is not None and model.on_resume_line
    model.set_tables({})
    assert model.resume == journal
    model.set_tables({"desk": _desk("bbbb-cccc")})
    model.forget_resume()
    assert model.resume == journal and not model.forget_requested


def test_a_desk_for_another_key_offers_nothing() -> None:
    model = LobbyModel("Eve", "eeee-ffff", HOST, "en")
    model.set_tables({"desk": _desk("bbbb-cccc")})
    assert model.resume is None and model.tables == []


def _plan(seats: tuple[SeatInfo, ...], rounds: int) -> Continuation:
    return Continuation("ab" * 16, "cd" * 32, "take6", {}, seats, tuple({} for _ in range(rounds)))


def _runner(plan: Continuation, me: int) -> Any:
    return SimpleNamespace(plan=plan, me=me, settings=SimpleNamespace(names=[s.name for s in plan.seats]),
                           session=None, may_go_on=False)  # fmt: skip


def test_every_screen_says_who_is_back_from_which_round() -> None:
    ann, bob, bot = (Identity.generate().public.hex() for _ in range(3))
    with_bot = (SeatInfo("Ann", ann, HOST, 5000), SeatInfo("Ann's bot 2", bot, HOST, 5001, ann))
    back = (SeatInfo("Ann", ann, HOST, 5000), SeatInfo("Bob", bob, HOST, 5002))
    # Ann's screen: the table with her bot in Bob's seat, then the one with Bob back after 3 rounds.
    model = TableModel(get_game("take6"), ["Ann"], 0, "en")
    table = NetTable(model, identity=Identity.generate(), data_dir=Path("/nonexistent"), interface=HOST, name="Ann")
    table._on_runner(_runner(_plan(with_bot, 2), 0))
    table._on_runner(_runner(_plan(back, 3), 0))
    assert "— ▲Bob is back from round 4 —" in screen_text(model)
    # Bob's screen: he asked at the table where the bot held his seat (the desk's plan), then plays the next.
    model = TableModel(get_game("take6"), ["Bob"], 0, "en")
    table = NetTable(model, identity=Identity.generate(), data_dir=Path("/nonexistent"), interface=HOST, name="Bob")
    table._on_back_plan(_plan(with_bot, 2), 1)
    table._on_runner(_runner(_plan(back, 3), 1))
    assert "— ▲Bob is back from round 4 —" in screen_text(model)


def test_the_take_back_words_exist_in_every_language() -> None:
    from lanplay.ui.i18n import MESSAGES

    for lang, words in MESSAGES.items():
        assert {"lobby_back", "ev_back", "net_back"} <= set(words), lang
