"""Attacks on the table protocol by modified clients, through the public API of `TableSession`, grouped
by the invariant each checks (shared/specs/protocol.md P-6): accuracy (P-6.1), completeness and
agreement (P-6.2), no input raises (P-6.3), every table ends or visibly waits (P-6.4), bounded
resources (P-6.6). A cheat signs on its real history (`named_history`) with its own identity; faults of
the network are drops and holds through the table's `rewrite` hook. An attack the protocol does not yet
withstand is marked `xfail(strict=True)` with the property it breaks."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest
from tablenet import TABLE, Table, make_table

from engine.api import JSONObject
from protocol.encoding import canonical, decode
from protocol.errors import ProtocolError
from protocol.signed import SignedMessage, sign_message
from protocol.table import Decided, Leave, Received, Refused, verify
from protocol.table.messages import private_channel

# -- helpers ---------------------------------------------------------------------------------------


def check_invariants(table: Table, honest: Iterable[int], cheats: Iterable[int] = (), waits: int = 6) -> None:
    """P-6.1 .. P-6.4 at every honest seat after the table has had time to end (`waits` patiences)."""
    honest = tuple(honest)
    for _ in range(waits):
        table.wait(31)
    sessions = [table.sessions[s] for s in honest]
    for seat in honest:  # P-6.3: no input raised
        crashes = [e for e in table.of(seat, Refused) if "could not be handled" in e.message]  # type: ignore[attr-defined]
        assert not crashes, f"seat {seat}: {crashes[0]}"
    for session in sessions:  # P-6.1: no honest seat exposed anywhere honest
        assert not (session.exposed & set(honest)), (session.me, session.convicted_lines())
        assert set(session.exposed) <= set(cheats), (session.me, session.convicted_lines())
    assert len({s.exposed for s in sessions}) == 1, [(s.me, sorted(s.exposed)) for s in sessions]  # P-6.2
    assert len({len(s.rounds) for s in sessions}) == 1, [(s.me, len(s.rounds)) for s in sessions]
    for session in sessions:  # P-6.4: finished, or says whom it waits for (a seat that left is done)
        if session.me in session.left:
            continue
        assert session.finished or session.waiting(table.now) or session.decision(), (session.me, session.phase)
    finished = [canonical(s.summary()) for s in sessions if s.finished and s.me not in s.left]
    assert len(set(finished)) <= 1  # P-5.8: one signed record digest (the whole records: tests of their own)


def sign_next(table: Table, seat: int, kind: str, body: JSONObject, on: JSONObject | None = None) -> SignedMessage:
    """The next public message of `seat`'s chain as its own session would number it, on its real history."""
    session = table.sessions[seat]
    chain = session.ledger.chains[seat]
    prev = chain[-1].digest() if chain else "0" * 64
    history = on if on is not None else session.named_history()
    return sign_message(
        table.identities[seat], TABLE, session.round_index, len(chain), prev, kind, {**body, "on": history}
    )


def send(table: Table, sender: int, data: bytes, to: Iterable[int]) -> None:
    for seat in to:
        table.feed(seat, Received(sender, data, table.now))
    table.deliver_all()


def others(table: Table, seat: int) -> list[int]:
    return [s for s in range(table.n) if s != seat]


def run_until(table: Table, done: Callable[[], bool], limit: int = 400) -> None:
    for _ in range(limit):
        if done():
            return
        if not table.step():
            break
    table.deliver_all()


# -- P-6.3 / P-6.4: a message whose history cannot be read ---------------------------------------------


@pytest.mark.parametrize("damage", ["rec", "missing", "heads"])
def test_a_public_message_with_an_unreadable_history_is_exposed_and_raises_nothing(damage: str) -> None:
    table = make_table("sixes", 3, {}, seed=5)
    for _ in range(3):
        table.step()
    table.deliver_all()
    cheat = 2
    on = table.sessions[cheat].named_history()
    if damage == "rec":
        on["rec"] = "00" * 32
    elif damage == "heads":
        on["heads"] = [[0, "zz"]] * 3
    msg = sign_next(table, cheat, "wait", {}, on=on)
    if damage == "missing":
        body = {k: v for k, v in msg.body.items() if k != "on"}
        session = table.sessions[cheat]
        msg = sign_message(table.identities[cheat], TABLE, session.round_index, msg.seq, msg.prev, "wait", body)
    table.silent.add(cheat)
    send(table, cheat, msg.to_wire(), others(table, cheat))
    table.run(200)
    check_invariants(table, (0, 1), (cheat,))
    assert all(table.sessions[s].exposed == {cheat} for s in (0, 1))


# -- P-6.1: proofs a cheat assembles against honest messages -------------------------------------------


def _named_prefix(table: Table, judge: int, msg: SignedMessage, author: int) -> list[SignedMessage]:
    """The messages `msg` (by `author`) names, as seat `judge` holds them."""
    from protocol.table.messages import read_history

    history = read_history(msg.body, table.n, author, msg.seq, msg.prev)
    chains = table.sessions[judge].ledger.chains
    return [m for seat in range(table.n) for m in chains[seat][: history.count(seat)]]


def _wire(table: Table, proof: JSONObject, key: str) -> bytes:
    seat_of = table.sessions[0].seat_of
    refs = []
    for item in proof[key]:  # type: ignore[union-attr]
        msg = SignedMessage.from_json(item)
        refs.append([seat_of[msg.author], msg.seq, msg.digest()])
    return canonical({"proof": {**proof, key: refs}})


def test_a_refusal_proof_padded_with_a_leave_the_stop_never_named_convicts_nobody() -> None:
    """Seat 0 withholds its seed reveal and then its secrets; seat 1 rightly stops it for its secrets.
    Seat 0 then signs a leave and sends a refusal proof of seat 1's stop whose history carries the
    leave too: the stop must still hold on the history it names (P-5.2, P-5.4)."""
    table = make_table("sixes", 3, {}, seed=5)
    cheat, stopper = 0, 1
    table.silent.add(cheat)
    table.run(50)
    for _ in range(6):
        table.wait(31)
    judge = table.sessions[stopper]
    stop = next(
        m
        for m in judge.ledger.chains[stopper]
        if m.kind == "stop" and m.body.get("owed") == "secrets" and m.body.get("seat") == cheat
    )
    leave = sign_next(table, cheat, "leave", {})
    history = [m.to_json() for m in _named_prefix(table, stopper, stop, stopper)] + [leave.to_json()]
    proof: JSONObject = {"kind": "refused", "round": judge.round_index, "message": stop.to_json(), "history": history}
    with pytest.raises(ProtocolError):
        verify(judge.plan, proof, judge.rounds)
    send(table, cheat, leave.to_wire(), (1, 2))
    send(table, cheat, _wire(table, proof, "history"), (1, 2))
    check_invariants(table, (1, 2), (cheat,), waits=1)


# -- P-6.2: a fault seen by one seat is exposed at every honest seat --------------------------------


def _bad_hand_keys(table: Table, cheat: int, victim: int) -> None:
    """`cheat` sends `victim` its hand keys in the wrong order (a key for another position, P-4.3)."""
    identity = table.identities[cheat]

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if sender != cheat or to != victim:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("kind") != "p.keys" or raw.get("author") != identity.peer_id:
            return data
        msg = SignedMessage.from_json(raw)
        body = dict(msg.body)
        body["openings"] = list(reversed(body["openings"]))  # type: ignore[call-overload]
        return sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body).to_wire()

    table.rewrite = rewrite


@pytest.mark.parametrize("game", ["sixes", "sixth-sense", "take6"])
def test_bad_hand_keys_to_one_seat_are_exposed_at_every_honest_seat(game: str) -> None:
    table = make_table(game, 3, {}, seed=21)
    _bad_hand_keys(table, cheat=2, victim=0)
    table.run(100)
    check_invariants(table, (0, 1), (2,))
    assert all(table.sessions[s].exposed == {2} for s in (0, 1))


def test_proofs_that_never_resolve_do_not_crowd_out_a_real_proof() -> None:
    table = make_table("sixes", 3, {}, seed=21)
    cheat, victim, bystander = 2, 0, 1
    _bad_hand_keys(table, cheat, victim)
    for index in range(20):  # before the deal's keys: the round is still dealing
        junk = {"kind": "refused", "round": 0, "message": {}, "history": [[0, 1000 + index, "00" * 32]]}
        table.feed(bystander, Received(cheat, canonical({"proof": junk}), table.now))
    table.run(100)
    check_invariants(table, (victim, bystander), (cheat,))
    assert all(table.sessions[s].exposed == {cheat} for s in (victim, bystander))


def test_honest_seats_write_the_same_record_when_stops_cross() -> None:
    table = make_table("sixes", 3, {}, seed=21)
    _bad_hand_keys(table, cheat=2, victim=0)
    table.run(100)
    for _ in range(6):
        table.wait(31)
    assert all(table.sessions[s].finished for s in (0, 1))
    assert canonical(table.sessions[0].record_json()) == canonical(table.sessions[1].record_json())


# -- P-6.4 / P-5.8: the end ------------------------------------------------------------------------


def _false_end(table: Table, cheat: int) -> None:
    """`cheat` signs its end signature for a record digest nobody else holds, then says nothing more."""
    identity = table.identities[cheat]
    done: set[int] = set()

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if sender != cheat:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("author") != identity.peer_id:
            return data
        msg = SignedMessage.from_json(raw)
        if done and msg.seq > min(done):
            return None
        if msg.kind != "end":
            return data
        done.add(msg.seq)
        body = {**msg.body, "record": "ee" * 32}
        return sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body).to_wire()

    table.rewrite = rewrite


def test_an_end_signed_for_another_record_is_waited_for_and_the_rest_finish() -> None:
    table = make_table("sixes", 3, {}, seed=23)
    cheat, leaver = 2, 0
    _false_end(table, cheat)
    run_until(table, lambda: bool(table.sessions[leaver].rounds))
    table.feed(leaver, Leave(table.now))
    table.run()
    check_invariants(table, (1,), (cheat,), waits=8)
    assert table.sessions[1].finished


# -- P-6.6: bounded resources, charged to the right author -------------------------------------------


def test_a_flood_of_a_cheats_own_messages_is_bounded() -> None:
    """P-6.6: messages past a gap, future-round messages and proofs are kept within their caps."""
    from protocol.table.session import MAX_FUTURE_BYTES, MAX_HELD, MAX_PENDING_PROOFS

    table = make_table("sixes", 3, {}, seed=29)
    cheat, victim = 2, 0
    session = table.sessions[victim]
    chain = table.sessions[cheat].ledger.chains[cheat]
    for seq in range(len(chain) + 5, len(chain) + 5 + MAX_HELD + 50):  # past a gap
        msg = sign_message(table.identities[cheat], TABLE, 0, seq, "11" * 32, "wait", {"pad": "x" * 2000})
        table.feed(victim, Received(cheat, msg.to_wire(), table.now))
    for seq in range(400):  # the next round
        prev = "0" * 64 if seq == 0 else "22" * 32
        msg = sign_message(table.identities[cheat], TABLE, 1, seq, prev, "wait", {"pad": "y" * 20000})
        table.feed(victim, Received(cheat, msg.to_wire(), table.now))
    for index in range(100):
        junk = {"kind": "refused", "round": 0, "message": {}, "history": [[1, 5000 + index, "00" * 32]]}
        table.feed(victim, Received(cheat, canonical({"proof": junk}), table.now))
    kept = session.kept()
    assert max(kept["held"]) <= MAX_HELD
    assert max(kept["future_bytes"]) <= MAX_FUTURE_BYTES
    assert max(kept["pending_proofs"]) <= MAX_PENDING_PROOFS
    table.deliver_all()
    assert not session.exposed


def test_padded_relays_of_an_honest_seats_messages_do_not_use_up_its_cap() -> None:
    """The direct link from seat 0 to seat 1 loses public messages (gossip brings them); the cheat's
    relays reach seat 1 first, padded to fill seat 0's per-round byte cap there (P-6.6). Seat 0's
    later messages must still be taken: a cap is one author's, not charged by the relay."""
    from protocol.signed import MAX_MESSAGE_BYTES
    from protocol.table.messages import MAX_ROUND_BYTES

    table = make_table("take6", 4, {}, seed=31)
    honest, victim, cheat = 0, 1, 2
    kept = table.sessions[victim].public  # only to size the padding as a cheat would estimate it

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if to == victim and sender == honest and not decode(data, 1 << 22).get("kind", "").startswith("p."):
            return None  # the direct link loses every public message: gossip must bring them
        if sender == cheat and to == victim:
            raw = decode(data, 1 << 22)
            if raw.get("author") == table.identities[honest].peer_id:
                room = MAX_ROUND_BYTES - table.sessions[victim].public[honest].bytes - 300
                size = max(len(data), min(MAX_MESSAGE_BYTES, room))
                return data[:-1] + b" " * (size - len(data)) + b"}"
        return data

    assert kept is not None
    table.rewrite = rewrite
    run_until(table, lambda: bool(table.sessions[victim].rounds) or table.sessions[victim].phase == "stopping")
    check_invariants(table, (0, 1, 3), (cheat,), waits=3)
    stops = [e for e in table.events[victim] if type(e).__name__ == "Stopped"]
    assert table.sessions[victim].rounds and not stops, (stops, table.sessions[victim].waiting(table.now))


# -- P-6.1 / P-6.2: forks of every kind to every subset of the other seats ---------------------------


def fork_to(table: Table, cheat: int, kind: str, victims: Iterable[int], nth: int = 0) -> dict[int, SignedMessage]:
    """`cheat` sends `victims` a second version of its `nth` message of `kind` (to each seat): the same
    step on a history that claims one more private message from itself (a valid shape). Returns the
    versions sent, by seat."""
    identity = table.identities[cheat]
    victims = set(victims)
    seen: dict[int, list[tuple[str, int, int]]] = {}
    forked: dict[int, SignedMessage] = {}
    inner = table.rewrite  # faults already on the links (another cheat, drops) still apply

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if inner is not None:
            got = inner(sender, to, data)
            if got is None:
                return None
            data = got
        if sender != cheat or to not in victims:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("author") != identity.peer_id or raw.get("kind") != kind:
            return data
        msg = SignedMessage.from_json(raw)
        places = seen.setdefault(to, [])
        place = (msg.table, msg.round, msg.seq)
        if place not in places:
            places.append(place)
        if places.index(place) != nth:
            return data
        body = dict(msg.body)
        on = dict(body["on"])  # type: ignore[arg-type]
        got = list(on["got"])  # type: ignore[arg-type]
        got[cheat] += 1
        body["on"] = {**on, "got": got}
        other = sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body)
        forked[to] = other
        return other.to_wire()

    table.rewrite = rewrite
    queued = [(sender, to, rewrite(sender, to, data)) for sender, to, data in table.links]  # sent, not yet delivered
    table.links.clear()
    table.links.extend((sender, to, data) for sender, to, data in queued if data is not None)
    return forked


def _play_one_round_then_leave(table: Table, leaver: int) -> None:
    session = table.sessions[leaver]
    run_until(table, lambda: bool(session.rounds) or session.phase in ("stopping", "ending", "finished"))
    if not session.finished and session.phase not in ("stopping", "ending"):
        table.feed(leaver, Leave(table.now))
    table.run()


FORKS = [
    ("sixes", {}, "seed.commit"),
    ("sixes", {}, "seed.reveal"),
    ("take6", {}, "shuffle"),
    ("sixth-sense", {}, "lock"),
    ("sixes", {}, "open"),
    ("take6", {}, "p.keys"),
    ("sixes", {}, "move"),
    ("sixth-sense", {}, "move"),
    ("sixth-sense", {}, "commit"),
    ("take6", {}, "commit"),
    ("take6", {"logic": True}, "reveal"),
    ("sixes", {}, "secrets"),
    ("take6", {}, "end"),
]


@pytest.mark.parametrize("victims", [(0,), (1,), (0, 1)], ids=["to-0", "to-1", "to-both"])
@pytest.mark.parametrize(
    ("game", "options", "kind"), FORKS, ids=[f"{g}-{k}{'-logic' if o else ''}" for g, o, k in FORKS]
)
def test_a_fork_of_any_kind_to_any_seats_exposes_only_the_forker(
    game: str, options: JSONObject, kind: str, victims: tuple[int, ...]
) -> None:
    table = make_table(game, 3, options, seed=41)
    cheat = 2
    forked = fork_to(table, cheat, kind, victims)
    _play_one_round_then_leave(table, leaver=1)
    assert forked, "the cheat never sent that kind"
    check_invariants(table, (0, 1), (cheat,), waits=3)
    if len(victims) == 1 and kind not in ("p.keys", "secrets", "end"):
        # Seen by one seat, the other version by the other: the two meet (a fork to every seat is
        # one version; a private one, a round's last message or the end may never meet the other).
        assert table.sessions[0].exposed == {cheat}, table.sessions[0].phase


def test_honest_seats_write_the_same_record_after_a_fork() -> None:
    """P-6.2: each exposed seat's one proof is the least by digest of those seen (each smaller one passed
    on), and an exposed seat's stops are left out, so seats that met different versions of its chain
    write the same record byte for byte."""
    table = make_table("sixes", 3, {}, seed=41)
    fork_to(table, 2, "seed.commit", (0,))
    table.run()
    for _ in range(3):
        table.wait(31)
    assert all(table.sessions[s].finished for s in (0, 1))
    assert canonical(table.sessions[0].record_json()) == canonical(table.sessions[1].record_json())


def _fork_secrets(table: Table, cheat: int, victim: int) -> None:
    """`cheat` sends `victim` secrets whose permutation does not reproduce its shuffle (two entries swapped),
    and everyone else its true secrets: the last message of its round."""
    identity = table.identities[cheat]

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if sender != cheat or to != victim:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("author") != identity.peer_id or raw.get("kind") != "secrets" or raw.get("round") != 0:
            return data
        msg = SignedMessage.from_json(raw)
        if not isinstance(msg.body.get("secrets"), dict):
            return data
        secrets = dict(msg.body["secrets"])  # type: ignore[arg-type]
        permutation = list(secrets["permutation"])  # type: ignore[arg-type]
        permutation[0], permutation[1] = permutation[1], permutation[0]
        body = {**msg.body, "secrets": {**secrets, "permutation": permutation}}
        return sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body).to_wire()

    table.rewrite = rewrite


def test_a_fork_of_the_last_secrets_of_a_round_exposes_the_forker_alone() -> None:
    """The cheat's secrets, its last message of round 0, reach seat 0 in a version that does not
    reproduce its shuffle and seat 1 in the true one: seat 1 confirms the round and deals the next,
    seat 0's audit exposes the cheat and the proof reaches seat 1. Nobody honest is exposed (P-6.1),
    and both end with the same confirmed rounds (P-6.2)."""
    table = make_table("sixes", 3, {}, seed=41)
    cheat = 2
    _fork_secrets(table, cheat, victim=0)
    run_until(table, lambda: bool(table.sessions[1].rounds) or table.sessions[1].phase == "stopping")
    table.run(50)
    check_invariants(table, (0, 1), (cheat,), waits=4)


def _swap_next_move(table: Table, cheat: int, victims: Iterable[int], move: JSONObject) -> None:
    """The cheat's next move message reaches `victims` as `move` instead, signed at the same place on
    the same history (a fork of one step)."""
    identity = table.identities[cheat]
    victims = set(victims)
    place: list[int] = []

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        if sender != cheat or to not in victims:
            return data
        raw = decode(data, 1 << 22)
        if raw.get("author") != identity.peer_id or raw.get("kind") != "move":
            return data
        if place and raw.get("seq") != place[0]:
            return data
        msg = SignedMessage.from_json(raw)
        place.append(msg.seq)
        body = {**msg.body, "move": move}
        return sign_message(identity, msg.table, msg.round, msg.seq, msg.prev, msg.kind, body).to_wire()

    table.rewrite = rewrite


def test_a_false_pass_forked_to_one_seat_never_frames_the_seat_that_asked_for_the_audit() -> None:
    """Issue 29, finding 3 (X-2.4): both honest seats passed; the cheat signs a false pass to seat 1 (a
    whole round of passes: its play ends for the audit) and a legal play to seat 0 at the same place.
    Nobody honest is exposed; the two versions expose the cheat at both."""
    table = make_table("sixes", 3, {}, seed=17)
    cheat = 2
    session = table.sessions[cheat]
    for _ in range(300):
        table.deliver_all()
        moves = session.decision_json()
        log = session.ledger.log
        passed = len(log) >= 2 and all(m.get("pass") is True for _, m in log[-2:])
        if passed and any("play" in m for m in moves):
            break
        assert table.step()
    play = next(m for m in session.decision_json() if "play" in m)
    _swap_next_move(table, cheat, (1,), {"seat": cheat, "pass": True})
    table.feed(cheat, Decided(play, table.now))
    table.run(200)
    check_invariants(table, (0, 1), (cheat,), waits=4)
    assert all(table.sessions[s].exposed == {cheat} for s in (0, 1))


def _peek_fork_table() -> tuple[Table, JSONObject, JSONObject]:
    """6th Sense, 3 seats: seat 0 led an 8 and seat 1 played; seat 2 (the cheat) plays last, where one
    card lets seat 1 win the trick (seat 0 may peek at seat 1, S-6.4) and another wins it itself."""
    table = make_table("sixth-sense", 3, {}, seed=6)
    cheat = table.sessions[2]
    game = cheat.game
    for _ in range(400):
        table.deliver_all()
        if cheat.decision_json() and game.expected(cheat.my_state).kind != "predict":
            break
        assert table.step()
    outcomes = {}
    for move in cheat.decision_json():
        state = game.apply(cheat.my_state, game.move_from_json(move))
        outcomes[str(move["play"])] = {(p.peeker, p.target) for p in game.peeks_due(state)}
    assert (0, 1) in outcomes["B5"] and (0, 1) not in outcomes["B14"], outcomes
    position = cheat._reference("B14")["pos"]
    other = {"seat": 2, "play": {"pos": position, "keys": cheat._card_keys(position)}}
    return table, {"seat": 2, "play": "B5"}, other


def test_a_forked_card_never_makes_an_honest_peek_answer_look_unasked_for() -> None:
    """Issue 29, finding 1: seat 1 sees the card that lets it win (and answers seat 0's peek); seat 0
    sees the other card (no peek at seat 1). Seat 1's answer names the version it saw: seat 0 waits
    for it, the two versions expose the cheat, and seat 1 is never exposed."""
    table, seen_by_winner, seen_by_peeker = _peek_fork_table()
    _swap_next_move(table, 2, (0,), seen_by_peeker)
    table.feed(2, Decided(seen_by_winner, table.now))
    table.run(100)
    assert table.sessions[1].peeks_answered.get(0) == 1  # seat 1 answered the peek it saw granted
    check_invariants(table, (0, 1), (2,), waits=4)
    assert all(table.sessions[s].exposed == {2} for s in (0, 1))


def test_colluders_cannot_turn_an_honest_peek_answer_into_a_proof() -> None:
    """Issue 29, finding 2: the peeker colludes with the forker and builds refusal proofs of the honest
    answer on either version of the forked card, padded with the rest of the round: none verifies."""
    table, seen_by_winner, seen_by_peeker = _peek_fork_table()
    _swap_next_move(table, 2, (0,), seen_by_peeker)
    table.feed(2, Decided(seen_by_winner, table.now))
    table.run(100)
    peeker, winner = table.sessions[0], table.sessions[1]
    answer = next(m for m in peeker.private_in[1].msgs if m.kind == "p.peek")
    versions = [winner.ledger.chains, peeker.ledger.chains]  # the winner's version of the card, the peeker's
    for chains in versions:
        for padded in (False, True):
            history = [m for seat in range(3) for m in chains[seat][: _count(answer, seat)]]
            if padded:
                history = [m for seat in range(3) for m in chains[seat]]
            proof = {
                "kind": "refused",
                "round": peeker.round_index,
                "message": answer.to_json(),
                "history": [m.to_json() for m in history],
            }
            with pytest.raises(ProtocolError):
                verify(peeker.plan, proof, peeker.rounds)


def _count(msg: SignedMessage, seat: int) -> int:
    head = msg.body["on"]["heads"][seat]  # type: ignore[index]
    return 0 if head is None else int(head[0]) + 1  # type: ignore[index]


# -- P-6.3 / P-6.2: garbage of valid shape, signed by a seat, is refused provably ----------------------

GARBAGE_MOVES: list[object] = [
    None,
    5,
    "B5",
    [],
    {},
    {"pos": -1, "keys": []},
    {"pos": 10**6, "keys": []},
    {"pos": "0", "keys": []},
    {"pos": True, "keys": []},
    {"pos": 0},
    {"keys": []},
    {"pos": 0, "keys": None},
    {"pos": 0, "keys": [None, None, None]},
    {"pos": 0, "keys": [{}, {}, {}]},
    {"pos": 0, "keys": [{"position": 0, "key": "00" * 32}] * 3},
    {"pos": 0, "keys": [{"position": 0, "key": "zz"}] * 3},
    {"pos": 0, "keys": [[0, 1]] * 3},
    {"pos": 0, "keys": [{}, {}, {}], "x": 1},
    {"pos": [0], "keys": []},
]


def _garbage_bodies(game: str, cheat: int, hand: list[int]) -> list[tuple[str, JSONObject]]:
    field = {"sixes": "play", "sixth-sense": "play", "take6": "play"}[game]
    position = hand[0]
    bodies: list[tuple[str, JSONObject]] = []
    for card in [*GARBAGE_MOVES, {"pos": position, "keys": []}, {"pos": position, "keys": [None] * 3}]:
        bodies.append(("move", {"move": {"seat": cheat, field: card}}))
    for move in [
        {},
        {"seat": cheat},
        {"seat": True, field: None},
        {"seat": -1, field: None},
        {"seat": 99, field: None},
        {"seat": cheat, "pass": False},
        {"seat": cheat, "pass": True, "play": None},
        {"seat": cheat, "predict": {"pos": position}},
        {"seat": cheat, "take_row": 7},
        {"seat": cheat, "take_row": True},
        {"seat": cheat, "pick": {"pos": position}},
        {"seat": str(cheat), field: None},
        {"seat": cheat, field: {"pos": position, "keys": [None] * 3}, "extra": [[[[]]]]},
    ]:
        bodies.append(("move", {"move": move}))
    bodies += [
        ("move", {"move": "x"}),
        ("move", {"move": {"seat": cheat, field: None}, "extra": 1}),
        ("commit", {"digest": "zz"}),
        ("commit", {"digest": 5}),
        ("commit", {}),
        ("reveal", {"value": "00", "nonce": "00", "keys": None}),
        ("open", {"late": False, "openings": [{"position": "x", "key": 5}]}),
        ("open", {"late": None, "openings": None}),
        ("shuffle", {"points": [], "key_base": "00", "proof": None}),
        ("lock", {"points": 5}),
        ("seed.commit", {"digest": "00" * 32}),
        ("seed.reveal", {"value": "zz", "nonce": []}),
        ("secrets", {"secrets": {"scalar": 1}, "openings": {}}),
        ("secrets", {"secrets": None, "openings": {"0": {"value": "zz", "nonce": 1}}}),
        ("secrets", {"secrets": None, "openings": {"\u00b2": {}}}),
        ("secrets", {"secrets": None, "openings": []}),
        ("stop", {"seat": 7, "owed": 5, "to": "x", "reason": 5}),
        ("stop", {"seat": 0, "owed": "move", "to": None, "reason": "\x00\x1b[2J" * 50}),
        ("stop", {"seat": None}),
        ("end", {"record": 5}),
        ("end", {"record": "00" * 32, "x": 1}),
        ("leave", {"why": "x"}),
        ("wait", {"got": [9, 9, 9]}),
    ]
    return bodies


@pytest.mark.parametrize("game", ["sixes", "sixth-sense", "take6"])
def test_garbage_of_valid_shape_is_refused_provably_and_raises_nothing(game: str) -> None:
    """Every body a cheat can sign on its real history at its turn is either taken or refused by the
    reference replay without raising (P-6.3), and a refusal's proof convicts the cheat (P-5.4)."""
    from protocol.table.ledger import replay_round
    from protocol.table.verify import round_start

    table = make_table(game, 3, {}, seed=43)
    cheat = 2
    session = table.sessions[cheat]
    for _ in range(400):
        table.deliver_all()
        if session.decision_json():
            break
        assert table.step()
    judge = table.sessions[0]
    held = [m for seat in range(3) for m in judge.ledger.chains[seat][: judge.ledger.cursor[seat]]]
    hand = list(session.ledger.layout_hands[cheat])
    start = round_start(judge.plan, judge.rounds)
    unproven, proven = [], 0
    for kind, body in _garbage_bodies(game, cheat, hand):
        msg = sign_next(table, cheat, kind, body)
        ledger = replay_round(start, [*held, msg])  # P-6.3: never raises
        faults = [f for f in ledger.faults if f.message is not None and f.message.digest() == msg.digest()]
        taken = ledger.cursor[cheat] == msg.seq + 1 and not faults
        if taken:
            assert kind in ("stop", "wait", "leave", "end"), (kind, body)  # notes of any content are kept
            continue
        proof = {
            "kind": "refused",
            "round": judge.round_index,
            "message": msg.to_json(),
            "history": [m.to_json() for m in held],
        }
        try:
            conviction = verify(judge.plan, proof, judge.rounds)
        except ProtocolError as exc:
            unproven.append((kind, body, exc.message))
            continue
        assert conviction.seat == cheat
        proven += 1
    assert not unproven, unproven
    assert proven >= 50, proven


# -- stops and wait notes ----------------------------------------------------------------------------


def _to_play(table: Table, seat: int) -> None:
    session = table.sessions[seat]
    for _ in range(400):
        table.deliver_all()
        if session.decision_json():
            return
        assert table.step()


@pytest.mark.parametrize(
    ("owed", "to"),
    [
        ("shuffle", None),
        ("lock", None),
        ("secrets", None),
        ("end", None),
        ("p.keys", 2),
        ("p.peek", 2),
        ("dance", None),
    ],
)
def test_a_stop_naming_a_seat_that_owes_nothing_exposes_the_stopper_alone(owed: str, to: int | None) -> None:
    """P-5.5: a stop is valid only for a step owed on the history it names; otherwise it proves a fault
    of its signer, at every honest seat."""
    table = make_table("sixes", 3, {}, seed=47)
    cheat = 2
    _to_play(table, cheat)
    stop = sign_next(table, cheat, "stop", {"seat": 0, "owed": owed, "to": to, "reason": "x"})
    table.silent.add(cheat)
    send(table, cheat, stop.to_wire(), (0, 1))
    table.run(50)
    check_invariants(table, (0, 1), (cheat,), waits=4)
    assert all(table.sessions[s].exposed == {cheat} for s in (0, 1))


def test_a_stop_for_hand_keys_it_says_it_never_got_voids_the_round_and_convicts_nobody() -> None:
    """A seat may lie in its own `got` counts (it alone knows what it received): its stop for hand keys
    it holds is then valid on the history it names; the round is void, nobody is exposed (P-6.1)."""
    table = make_table("sixes", 3, {}, seed=47)
    cheat = 2
    _to_play(table, cheat)
    on = table.sessions[cheat].named_history()
    on["got"] = [0, 0, 0]  # denies hand keys it holds
    wait = sign_next(table, cheat, "wait", {}, on=on)
    send(table, cheat, wait.to_wire(), (0, 1))
    stop = sign_message(
        table.identities[cheat],
        TABLE,
        wait.round,
        wait.seq + 1,
        wait.digest(),
        "stop",
        {"seat": 0, "owed": "p.keys", "to": cheat, "reason": "x", "on": {**on, "heads": _heads_after(on, cheat, wait)}},
    )
    table.silent.add(cheat)
    send(table, cheat, stop.to_wire(), (0, 1))
    table.run(50)
    check_invariants(table, (0, 1), (cheat,), waits=4)
    assert not any(table.sessions[s].exposed for s in (0, 1))


def _heads_after(on: JSONObject, seat: int, msg: SignedMessage) -> list[object]:
    heads = list(on["heads"])  # type: ignore[arg-type]
    heads[seat] = [msg.seq, msg.digest()]
    return heads


def test_a_seat_that_stops_and_then_withholds_its_secrets_is_stopped_for_them_and_the_rest_finish() -> None:
    """P-6.4: after a stop every seat owes its secrets; one that keeps only talking (wait notes) is
    stopped for them past the patience, and the honest seats finish without it."""
    table = make_table("take6", 3, {}, seed=47)
    cheat = 2
    _to_play(table, cheat)
    stop = sign_next(table, cheat, "stop", {"seat": None, "owed": None, "to": None, "reason": "audit"})
    table.silent.add(cheat)
    send(table, cheat, stop.to_wire(), (0, 1))
    previous = stop
    for _ in range(3):
        table.wait(20)
        on = {**table.sessions[0].named_history(), "got": table.sessions[cheat].named_history()["got"]}
        heads = list(on["heads"])
        heads[cheat] = [previous.seq, previous.digest()]
        note = sign_message(
            table.identities[cheat],
            TABLE,
            0,
            previous.seq + 1,
            previous.digest(),
            "wait",
            {"on": {**on, "heads": heads}},
        )
        send(table, cheat, note.to_wire(), (0, 1))
        previous = note
    check_invariants(table, (0, 1), (cheat,), waits=4)
    assert all(table.sessions[s].finished for s in (0, 1))


def test_next_round_messages_of_a_cheat_never_crowd_out_an_honest_seats() -> None:
    from protocol.table import Stopped

    table = make_table("sixes", 3, {}, seed=53)
    cheat, victim = 2, 1
    for seq in range(1000, 1229):  # held past a gap, never linked: no fork to expose
        msg = sign_message(table.identities[cheat], TABLE, 1, seq, "22" * 32, "wait", {"pad": "y" * 18000})
        table.feed(victim, Received(cheat, msg.to_wire(), table.now))
    held: list[tuple[int, int, bytes]] = []
    first = table.identities[0].peer_id

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        raw = decode(data, 1 << 22)
        if to == victim and raw.get("author") == first and raw.get("kind") == "secrets" and raw.get("round") == 0:
            held.append((sender, to, data))  # seat 0's secrets reach seat 1 late: it lags a round
            return None
        return data

    table.rewrite = rewrite
    run_until(table, lambda: bool(table.sessions[0].rounds), limit=800)
    for _ in range(20):
        table.step()
    table.deliver_all()
    assert held and table.sessions[victim].round_index == 0 < table.sessions[0].round_index
    table.rewrite = None
    table.links.extend(held)
    table.deliver_all()  # the late secrets arrive (run_until may return before it delivers anything)
    run_until(table, lambda: len(table.sessions[0].rounds) >= 2 or table.sessions[0].phase != "play", limit=800)
    check_invariants(table, (0, 1), (cheat,), waits=3)
    stops = [e for s in (0, 1) for e in table.of(s, Stopped)]
    assert not stops, stops


# -- P-6.3: bytes of any size and depth; replays -------------------------------------------------------


def test_oversized_deep_and_replayed_input_changes_nothing() -> None:
    from protocol.signed import MAX_MESSAGE_BYTES

    table = make_table("sixth-sense", 3, {}, seed=59)
    run_until(table, lambda: bool(table.sessions[0].rounds))
    cheat, victim = 2, 0
    session = table.sessions[victim]
    old = table.sessions[cheat].ledger.chains[cheat][0]  # this round's first message, replayed
    other_private = table.sessions[1].private_out[2][0]  # seat 1's private message to the cheat, replayed
    nested = sign_next(table, cheat, "wait", {}).to_wire()
    inputs = [
        b"{" * 100_000,
        b"[" * 10_000 + b"]" * 10_000,
        b" " * (MAX_MESSAGE_BYTES + 1),
        b'{"proof": ' * 3000 + b"1" + b"}" * 3000,
        b"[" * 200_000,
        old.to_wire(),
        other_private.to_wire(),
        nested.replace(b'"body":{', b'"body":{"x":' + b"[" * 40 + b"]" * 40 + b",", 1),
        nested.replace(b'"body":{', b'"body":{"x":' + b"[" * 31 + b"]" * 31 + b",", 1),
        canonical({"proof": {"kind": "fork", "first": old.to_json(), "second": old.to_json()}}),
        canonical({"proof": {"kind": "audit", "round": 1, "seat": 1, "messages": [[0, 0, "00" * 32]] * 20_001}}),
    ]
    before = [len(c) for c in session.ledger.chains]
    for data in inputs:
        table.feed(victim, Received(cheat, data, table.now))
    assert [len(c) for c in session.ledger.chains] == before
    table.run(30)
    check_invariants(table, (0, 1, 2), (), waits=0)


def test_proofs_built_around_honest_messages_expose_nobody() -> None:
    """P-6.1: a fork of one honest message with itself (or with its signature altered), an audit of an
    honest round, a refusal of an honest move: sent to every seat, none convicts."""
    table = make_table("sixes", 3, {}, seed=61)
    for _ in range(12):
        table.step()
    table.deliver_all()
    session = table.sessions[0]
    honest = next(m for m in session.ledger.chains[1] if m.kind == "move")
    raw = honest.to_json()
    sig = bytes.fromhex(str(raw["sig"]))
    bent = {**raw, "sig": (sig[:32] + bytes([sig[32] ^ 1]) + sig[33:]).hex()}
    held = [[s, m.seq, m.digest()] for s in range(3) for m in session.ledger.chains[s][: session.ledger.cursor[s]]]
    proofs: list[JSONObject] = [
        {"kind": "fork", "first": raw, "second": raw},
        {"kind": "fork", "first": raw, "second": bent},
        {"kind": "audit", "round": 0, "seat": 1, "messages": held},
        {"kind": "refused", "round": 0, "message": raw, "history": [h for h in held if h[0] != 1]},
        {"kind": "refused", "round": 0, "message": raw, "history": held},
    ]
    for proof in proofs:
        send(table, 2, canonical({"proof": proof}), (0, 1))
    table.run(40)
    check_invariants(table, (0, 1, 2), (), waits=2)
    assert not any(table.sessions[s].exposed for s in range(3))


# -- two colluders, and faults at the same time ----------------------------------------------------


@pytest.mark.parametrize("kind", ["shuffle", "lock", "move", "secrets"])
def test_two_colluders_forking_to_different_seats_are_both_exposed_and_nobody_else(kind: str) -> None:
    table = make_table("sixes", 4, {}, seed=67)
    forks = {2: fork_to(table, 2, kind, (0,)), 3: fork_to(table, 3, kind, (1,))}
    _play_one_round_then_leave(table, leaver=1)
    check_invariants(table, (0, 1), (2, 3), waits=3)
    # a round the first fork stopped may end before the other cheat forks anything
    sent = {cheat for cheat, versions in forks.items() if versions}
    assert sent
    if kind != "secrets":
        assert table.sessions[0].exposed == sent


@pytest.mark.parametrize("kind", ["shuffle", "move"])
def test_a_fork_with_a_silent_seat_and_a_lossy_link_exposes_only_the_forker(kind: str) -> None:
    """A fork to one seat while another seat's lid is closed and gossip from seat 1 to seat 0 is lost."""
    table = make_table("sixes", 4, {}, seed=71)

    def lossy(sender: int, to: int, data: bytes) -> bytes | None:
        raw = decode(data, 1 << 22)
        if sender == 1 and to == 0 and raw.get("author") not in (None, table.identities[1].peer_id):
            return None
        return data

    table.rewrite = lossy
    fork_to(table, 2, kind, (0,))
    run_until(table, lambda: table.sessions[0].phase != "seed")
    table.silent.add(3)
    _play_one_round_then_leave(table, leaver=1)
    check_invariants(table, (0, 1), (2,), waits=4)
    assert table.sessions[0].exposed == table.sessions[1].exposed == {2}


@pytest.mark.parametrize("victims", [(0,), (0, 1)], ids=["to-0", "to-both"])
def test_a_fork_of_the_late_trump_keys_exposes_only_the_forker(victims: tuple[int, ...]) -> None:
    """S-8.3: the second `open` of a round (late: true), forked."""
    table = make_table("sixth-sense", 3, {"late_trump": True}, seed=73)
    forked = fork_to(table, 2, "open", victims, nth=1)
    _play_one_round_then_leave(table, leaver=1)
    assert forked, "no late trump was opened"
    check_invariants(table, (0, 1), (2,), waits=3)
    if len(victims) == 1:
        assert table.sessions[0].exposed == {2}


def test_a_forked_peek_answer_is_judged_on_the_version_its_recipient_got() -> None:
    """S-6.4: the peeked seat (the cheat) answers the peek with a second version of its private answer;
    one recipient holds one version: nothing to expose, nothing raised, the table goes on."""
    table, _, _ = _peek_fork_table()
    forked = fork_to(table, 2, "p.peek", (0,))
    table.feed(2, Decided({"seat": 2, "play": "B14"}, table.now))
    table.run(60)
    assert forked and any(type(e).__name__ == "PeekResult" for e in table.events[0])
    check_invariants(table, (0, 1), (2,), waits=2)


@pytest.mark.parametrize("kind", ["leave", "stop", "wait"])
@pytest.mark.parametrize("victims", [(0,), (0, 1)], ids=["to-0", "to-both"])
def test_a_fork_of_a_note_exposes_only_the_forker(kind: str, victims: tuple[int, ...]) -> None:
    table = make_table("sixes", 4, {}, seed=79)
    cheat = 2
    forked = fork_to(table, cheat, kind, victims)
    if kind == "leave":
        run_until(table, lambda: bool(table.sessions[cheat].rounds))
        table.feed(cheat, Leave(table.now))
    elif kind == "stop":
        table.silent.add(3)  # a closed lid: the cheat stops it past the patience
        table.run(50)
        table.wait(31)
    else:
        keys = private_channel(TABLE, table.identities[1].peer_id, table.identities[cheat].peer_id)

        def lose(sender: int, to: int, data: bytes) -> bytes | None:
            return None if decode(data, 1 << 22).get("table") == keys else data  # seat 1's keys to the cheat

        inner = table.rewrite
        table.rewrite = lambda s, t, d: None if lose(s, t, d) is None else (inner(s, t, d) if inner else d)
        run_until(table, lambda: table.sessions[0].phase == "play")
        table.wait(3)
        from protocol.table import NoteWaiting

        table.feed(cheat, NoteWaiting(table.now))
    table.run(50)
    assert forked, f"the cheat sent no {kind}"
    check_invariants(table, (0, 1), (cheat,), waits=4)
    if len(victims) == 1:
        assert table.sessions[0].exposed == {cheat}


def test_a_stop_that_crosses_a_leave_is_judged_alike_at_every_seat() -> None:
    """Seat 0's lid is closed; seat 1 stops it for its seed reveal, then for its secrets. The lid opens
    and its person leaves (leave, then secrets) while seat 1's second stop is still on its way to seat
    2. Every seat is honest: all take the same stops, and nobody's message is refused."""
    from protocol.table import Tick

    table = make_table("sixes", 3, {}, seed=5)
    lid, stopper, judge = 0, 1, 2
    table.silent.add(lid)
    table.run(50)
    held: list[tuple[int, int, bytes]] = []
    author = table.identities[stopper].peer_id

    def rewrite(sender: int, to: int, data: bytes) -> bytes | None:
        raw = decode(data, 1 << 22)
        body = raw.get("body")
        if to == judge and raw.get("author") == author and isinstance(body, dict) and body.get("owed") == "secrets":
            held.append((sender, to, data))
            return None
        return data

    table.rewrite = rewrite
    for _ in range(3):  # only the stopper's clock runs out
        table.now += 31
        table.feed(stopper, Tick(table.now))
        due = table.sessions[stopper].due(table.now)
        if due is not None:
            table.feed(stopper, due)
        table.deliver_all()
    assert held
    table.silent.discard(lid)
    table.feed(lid, Leave(table.now))
    table.deliver_all()
    table.rewrite = None
    table.links.extend(held)
    check_invariants(table, (1, 2), (), waits=4)
    stops = [sorted(canonical(s) for s in table.sessions[seat].record_json()["stops"]) for seat in (1, 2)]  # type: ignore[union-attr]
    assert stops[0] == stops[1]
    assert not [e for e in table.of(judge, Refused) if "shows nothing" in e.message]  # type: ignore[attr-defined]


def test_a_late_fork_of_a_confirmed_rounds_message_exposes_the_forker_alone() -> None:
    """After round 0 is confirmed, the cheat signs a second version of one of its round-0 messages and
    sends both as a fork proof: it is exposed; no honest seat is (P-6.1), and they agree (P-6.2)."""
    table = make_table("sixes", 3, {}, seed=83)
    cheat = 2
    run_until(table, lambda: bool(table.sessions[0].rounds))
    for _ in range(5):
        table.step()
    table.deliver_all()
    assert table.sessions[0].round_index == 1
    first = _round_zero_message(table, cheat)
    body = dict(first.body)
    body["on"] = {**body["on"], "got": [1, 1, 1]}  # type: ignore[dict-item]
    second = sign_message(table.identities[cheat], first.table, 0, first.seq, first.prev, first.kind, body)
    proof = {"kind": "fork", "first": first.to_json(), "second": second.to_json()}
    send(table, cheat, canonical({"proof": proof}), (0, 1))
    table.run(50)
    check_invariants(table, (0, 1), (cheat,), waits=4)
    assert all(table.sessions[s].exposed == {cheat} for s in (0, 1))
    # Nothing an honest seat signed makes a fork with anything else it signed: any two messages at one
    # place of one chain, wherever received, would convict their author.
    honest = {table.identities[s].peer_id for s in (0, 1)}
    signed: dict[tuple[str, str, int, int], SignedMessage] = {}
    for event in (e for journal in table.journals for e in journal):
        data = getattr(event, "data", None)
        raw = decode(data, 1 << 22) if data is not None else {}
        if "sig" not in raw or raw.get("author") not in honest:
            continue
        msg = SignedMessage.from_json(raw)
        place = (msg.author, msg.table, msg.round, msg.seq)
        other = signed.setdefault(place, msg)
        if other.digest() != msg.digest():
            fork = {"kind": "fork", "first": other.to_json(), "second": msg.to_json()}
            with pytest.raises(ProtocolError):
                verify(table.sessions[0].plan, fork, ())


def _round_zero_message(table: Table, seat: int) -> SignedMessage:
    """`seat`'s round-0 shuffle pass, as another seat received it."""
    for journal in table.journals:  # every seat journals what it received
        for event in journal:
            data = getattr(event, "data", None)
            if data is None:
                continue
            raw = decode(data, 1 << 22)
            mine = raw.get("author") == table.identities[seat].peer_id
            if mine and raw.get("round") == 0 and raw.get("kind") == "shuffle":
                return SignedMessage.from_json(raw)
    raise AssertionError("no round-0 shuffle of that seat was received")
