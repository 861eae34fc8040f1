"""A card opened in public (a played card, a revealed choice) carries every seat's key for its position
(P-4.3: "the keys are published and anyone checks and decrypts"). A modified client forwards keys that
are not the seats' own but whose product is right, alone (moving a factor between two honest seats'
keys) or with a colluding shuffler that scaled one of its hand positions (P-4.2's proof covers only the
sum). Checked through `TableSession`s on the in-memory table (tests/tablenet.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tablenet import Table, make_table

from engine.api import JSONObject
from protocol.deck import L, ShuffleOutput, _sub, point_sum, scalarmult
from protocol.table import Refused, TableSession
from protocol.table import session as session_module

T = 7  # the factor moved between keys


def _times(key_hex: str, factor: int) -> str:
    value = int.from_bytes(bytes.fromhex(key_hex), "little") * factor % L
    return value.to_bytes(32, "little").hex()


def _forward_keys(session: TableSession, change: Callable[[int, list[JSONObject]], list[JSONObject]]) -> None:
    """`session`'s seat publishes `change(position, keys)` wherever it opens a card of its hand."""
    honest = session._card_keys

    def card_keys(position: object) -> list[JSONObject] | None:
        keys = honest(position)
        if keys is None or not isinstance(position, int):
            return keys
        return change(position, [dict(k) for k in keys])

    session._card_keys = card_keys  # type: ignore[method-assign]


def _play_until(table: Table, done: Callable[[], bool], limit: int = 3000) -> None:
    """Random legal moves (and, when nothing moves, the clocks) until `done` or `limit` moves."""
    for _ in range(limit):
        if done():
            break
        if not table.step():
            table.wait(31)
    table.deliver_all()


def _opened(table: Table, judge: int, seat: int) -> bool:
    """`judge` took a public opening of a card of `seat`'s hand, or exposed somebody."""
    session = table.sessions[judge]
    ledger = session.ledger
    if session.exposed:
        return True
    return ledger.dealt and any(p in ledger.used for p in ledger.layout_hands[seat])


def _no_crash(table: Table, seats: tuple[int, ...]) -> None:
    for seat in seats:  # P-6.3
        crashes = [e for e in table.of(seat, Refused) if "could not be handled" in e.message]  # type: ignore[attr-defined]
        assert not crashes, (seat, crashes[0])


GAMES = [("sixes", {}), ("sixth-sense", {}), ("take6", {})]


@pytest.mark.parametrize("n", [3, 6])
@pytest.mark.parametrize(("game", "options"), GAMES)
def test_a_card_opened_with_keys_not_each_seats_own_exposes_the_seat_that_published_them(
    game: str, options: JSONObject, n: int
) -> None:
    table = make_table(game, n, options, seed=91 + n)
    cheat = n - 1
    a, b = 0, 1  # two honest seats: seat a's key times T, seat b's divided by T (their product unchanged)

    def shift(_position: int, keys: list[JSONObject]) -> list[JSONObject]:
        keys[a]["key"] = _times(str(keys[a]["key"]), T)
        keys[b]["key"] = _times(str(keys[b]["key"]), pow(T, -1, L))
        return keys

    _forward_keys(table.sessions[cheat], shift)
    _play_until(table, lambda: _opened(table, 0, cheat))
    assert _opened(table, 0, cheat), "the cheat never opened a card in public"
    honest = tuple(range(n - 1))
    _no_crash(table, honest)
    for seat in honest:
        session = table.sessions[seat]
        assert not (session.exposed & set(honest)), session.convicted_lines()  # P-6.1 holds either way
        assert session.exposed == {cheat}, (seat, session.convicted_lines(), len(session.rounds))


def _scaled_shuffle(table: Table, shuffler: int, owner: int, seen: dict[str, Any]) -> Callable[..., ShuffleOutput]:
    """Seat `shuffler`'s shuffle pass (the last: it knows where its output lands), with every point that
    lands on a position of `owner`'s hand multiplied by `T`, and an undealt position moved to keep the
    sum, so that the proof made for the honest pass holds (P-4.2 proves the sum only)."""
    honest = session_module.shuffle_pass

    def shuffle_pass(ctx: Any, seat: int, deck: Any, secret: Any, entropy: Any) -> ShuffleOutput:
        out = honest(ctx, seat, deck, secret, entropy)
        if seat != shuffler:
            return out
        ledger = table.sessions[0].ledger  # the layout is public once the dealer is drawn
        dealt = {p for hand in ledger.layout_hands for p in hand} | set(ledger.table_positions)
        dealt |= set(ledger.late_positions)
        j = min(p for p in range(ctx.size) if p not in dealt)
        points = list(out.points)
        for i in ledger.layout_hands[owner]:
            scaled = scalarmult(T.to_bytes(32, "little"), points[i])
            points[j] = point_sum((points[j], _sub(points[i], scaled)))
            points[i] = scaled
        seen["scaled"] = set(ledger.layout_hands[owner])
        return ShuffleOutput(out.seat, tuple(points), out.key_base, out.proof)

    return shuffle_pass


@pytest.mark.parametrize("n", [3, 6])
@pytest.mark.parametrize(("game", "options"), [g for g in GAMES if g[0] != "sixes"])  # sixes deals every card
def test_colluders_cannot_open_a_scaled_position_with_keys_that_are_not_the_seats_own(
    monkeypatch: pytest.MonkeyPatch, game: str, options: JSONObject, n: int
) -> None:
    shuffler, player = n - 1, n - 2
    seen: dict[str, Any] = {}
    table = make_table(game, n, options, seed=57 + n)
    monkeypatch.setattr(session_module, "shuffle_pass", _scaled_shuffle(table, shuffler, player, seen))
    honest_open = session_module.open_position

    def own_view_open(ctx: Any, position: int, point: bytes, openings: Any, commitments: Any, **more: Any) -> Any:
        # Only the player's own view opens its hand here (the ledger has its own import): it knows t.
        if position in seen.get("scaled", ()):
            point = scalarmult(pow(T, -1, L).to_bytes(32, "little"), point)  # it knows t: unscale, then open
        return honest_open(ctx, position, point, openings, commitments, **more)

    monkeypatch.setattr(session_module, "open_position", own_view_open)

    def scale(position: int, keys: list[JSONObject]) -> list[JSONObject]:
        if position in seen.get("scaled", ()):
            keys[0]["key"] = _times(str(keys[0]["key"]), T)  # honest seat 0's key, times t
        return keys

    _forward_keys(table.sessions[player], scale)
    judge = table.sessions[0]
    _play_until(table, lambda: _opened(table, 0, player))
    opened = not judge.exposed  # a card opened with a false key was taken, or its player exposed at once
    _play_until(table, lambda: bool(judge.exposed) or bool(judge.rounds) or judge.finished)  # the audit
    honest = tuple(range(n - 2))
    _no_crash(table, honest)
    assert "scaled" in seen, "the shuffler never shuffled"
    assert opened or player in judge.exposed, "the player never opened a card in public"
    for seat in honest:
        session = table.sessions[seat]
        assert not (session.exposed & set(honest)), session.convicted_lines()  # P-6.1
        assert player in session.exposed, (seat, session.convicted_lines(), len(session.rounds))
