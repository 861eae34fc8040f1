"""`verify(plan, proof, rounds)`: the one pure check behind every exposure (P-5.4).

A proof is a bundle of signed messages. `verify` derives the fault from them alone, with no clock, no
private key and no state of the checker's own, and says who broke which rule; or it refuses the proof.
Three kinds, as JSON (`Proof.to_json`):

* ``{"kind": "fork", "first": msg, "second": msg}``: two different messages signed by one seat at one
  (channel, round, seq), or a message whose ``prev`` is not the digest of the one before it (P-1.3).
* ``{"kind": "refused", "round": r, "message": msg, "history": [msg, ...]}``: a signed message the
  reference replay (`ledger.RoundLedger`, private ones through `ledger.judge_private`) refuses on the
  history it names; ``history`` holds the round's public messages that history names (any order).
* ``{"kind": "audit", "round": r, "seat": s, "messages": [msg, ...]}``: the round's public messages up
  to and including every seat's secrets; their audit (P-5.3) finds seat ``s`` at fault.

``rounds`` are the rounds confirmed before the proof's round (`engine.record.RoundRecord`), which fix the
state the round starts from; their digest is what every message of the round names (``on.rec``).
On the wire a proof may name messages the receiver holds by (seat, seq, digest) instead of carrying them
(`protocol.table.session`); `verify` itself always gets whole messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.api import Game
from engine.record import RoundRecord
from protocol.encoding import canonical, sha256_hex
from protocol.errors import ProtocolError
from protocol.identity import PublicIdentity
from protocol.signed import SignedMessage
from protocol.table.ledger import RoundStart, judge_private, replay_round
from protocol.table.messages import MAX_ROUNDS, is_index, private_channel, record_digest

RULE = "P-5.4"


@dataclass(frozen=True, slots=True)
class Plan:
    """What `verify` needs of the signed plan: the table, the game and its options, the seats' keys."""

    table: str
    game: Game[Any, Any, Any, Any]
    options: Any
    keys: tuple[PublicIdentity, ...]


@dataclass(frozen=True, slots=True)
class Conviction:
    """What a proof shows: `seat` broke `rule`; `reason` in words."""

    seat: int
    rule: str
    reason: str
    kind: str

    def line(self, names: Sequence[str] | None = None) -> str:
        who = names[self.seat] if names and 0 <= self.seat < len(names) else f"seat {self.seat}"
        return f"{who} ({self.kind}): broke {self.rule}: {self.reason}"


def rounds_json(rounds: Sequence[RoundRecord]) -> list[dict[str, object]]:
    return [{"deal": r.deal, "moves": list(r.moves)} for r in rounds]


def round_start(plan: Plan, rounds: Sequence[RoundRecord]) -> RoundStart:
    """The start of round len(rounds): the full engine state after the confirmed rounds."""
    game = plan.game
    state = game.new_game(len(plan.keys), plan.options)
    for record in rounds:
        deal = game.deal_from_json(state, record.deal)
        state = game.start_round(state, deal)
        for move in record.moves:
            state = game.apply(state, game.move_from_json(move))
    return RoundStart(plan.table, game, plan.options, plan.keys, len(rounds), state, record_digest(rounds_json(rounds)))


def _messages(raw: object, what: str) -> list[SignedMessage]:
    if not isinstance(raw, list) or len(raw) > 20_000:
        raise ProtocolError(RULE, f"a proof's {what} must be a list of signed messages")
    return [SignedMessage.from_json(item) for item in raw]


def _seat_of(plan: Plan, msg: SignedMessage) -> int:
    for seat, key in enumerate(plan.keys):
        if key.peer_id == msg.author:
            msg.verify(key)
            return seat
    raise ProtocolError(RULE, "a message signed by no seat of this table")


def verify(plan: Plan, proof: Mapping[str, object], rounds: Sequence[RoundRecord] = ()) -> Conviction:
    """The fault `proof` shows, or ProtocolError (P-5.4) naming why it shows none. Never anything else."""
    try:
        return _verify(plan, proof, rounds)
    except ProtocolError:
        raise
    except Exception as exc:  # P-6.3: a proof of any shape is refused, never raised through
        raise ProtocolError(RULE, f"the proof could not be read: {type(exc).__name__}") from None


def _verify(plan: Plan, proof: Mapping[str, object], rounds: Sequence[RoundRecord]) -> Conviction:
    kind = proof.get("kind")
    if kind == "fork":
        if set(proof) != {"kind", "first", "second"}:
            raise ProtocolError(RULE, "a fork proof has exactly first and second")
        first, second = SignedMessage.from_json(proof["first"]), SignedMessage.from_json(proof["second"])
        seat = _seat_of(plan, first)
        if second.author != first.author:
            raise ProtocolError(RULE, "a fork's two messages have different authors")
        plan.keys[seat].verify(bytes.fromhex(second.sig), second.signed_bytes(), RULE)
        channels = {plan.table} | {private_channel(plan.table, first.author, k.peer_id) for k in plan.keys}
        if first.table not in channels or first.table != second.table or first.round != second.round:
            raise ProtocolError(RULE, "a fork's messages must be on one channel of this table, in one round")
        if first.seq == second.seq and first.digest() != second.digest():
            return Conviction(
                seat, "P-1.3", f"signed two different messages at {first.kind}/{second.kind} #{first.seq}", "fork"
            )
        if second.seq == first.seq + 1 and second.prev != first.digest():
            return Conviction(seat, "P-1.3", f"message #{second.seq} does not follow its own #{first.seq}", "fork")
        raise ProtocolError(RULE, "not a fork: the messages agree")
    index = proof.get("round")
    if not is_index(index, MAX_ROUNDS) or index != len(rounds):
        raise ProtocolError(RULE, f"a proof of round {str(index)[:12]} needs exactly the rounds confirmed before it")
    start = round_start(plan, rounds)
    if kind == "refused":
        if set(proof) != {"kind", "round", "message", "history"}:
            raise ProtocolError(RULE, "a refusal proof has exactly round, message and history")
        message = SignedMessage.from_json(proof["message"])
        history = _messages(proof["history"], "history")
        seat = _seat_of(plan, message)
        if message.round != index:
            raise ProtocolError(RULE, "the refused message is of another round")
        if message.table == plan.table:
            ledger = replay_round(start, [*history, message])
            for fault in ledger.faults:
                if fault.message is not None and fault.message.digest() == message.digest():
                    return Conviction(seat, fault.rule, fault.reason, "refused")
            raise ProtocolError(RULE, "the replay takes the message on the history it names: no fault")
        recipient = next(
            (
                r
                for r, key in enumerate(plan.keys)
                if private_channel(plan.table, message.author, key.peer_id) == message.table
            ),
            None,
        )
        if recipient is None:
            raise ProtocolError(RULE, "a message of no channel of this table")
        ledger = replay_round(start, history)
        verdict = judge_private(ledger, seat, recipient, message)
        if isinstance(verdict, str) or verdict is None:
            raise ProtocolError(RULE, "the private message holds on the history it names (or that history is missing)")
        return Conviction(seat, verdict.rule, verdict.reason, "refused")
    if kind == "audit":
        if set(proof) != {"kind", "round", "seat", "messages"}:
            raise ProtocolError(RULE, "an audit proof has exactly round, seat and messages")
        accused = proof.get("seat")
        ledger = replay_round(start, _messages(proof["messages"], "messages"))
        audit = ledger.audit
        if audit is None or audit.fault is None or audit.fault.seat != accused:
            raise ProtocolError(RULE, "the audit of these messages finds no fault of that seat")
        return Conviction(audit.fault.seat, audit.fault.rule, audit.fault.reason, "audit")
    raise ProtocolError(RULE, f"unknown proof kind {str(kind)[:20]!r}")


@dataclass(frozen=True, slots=True)
class ProofCheck:
    """One proof of a record, checked again: `conviction`, or `error` saying why it shows nothing."""

    index: int
    conviction: Conviction | None
    error: str | None


def check_end(raw: Mapping[str, object]) -> tuple[int, ...]:
    """The seats whose signed end message in a record names the digest of the record's own summary
    (P-5.8). ProtocolError when the end section is missing or a signature or digest does not hold."""
    table, end = raw.get("table"), raw.get("end")
    if not isinstance(table, Mapping) or not isinstance(end, Mapping):
        raise ProtocolError(RULE, "the record has no 'table' and 'end' sections")
    raw_keys = table.get("keys")
    if not isinstance(raw_keys, list):
        raise ProtocolError(RULE, "the record's table section has no keys")
    keys = [PublicIdentity.from_hex(key) for key in raw_keys]
    digest = sha256_hex(canonical(end.get("summary")))
    if end.get("digest") != digest:
        raise ProtocolError(RULE, "the end digest is not the digest of the record's summary")
    signed: list[int] = []
    signatures = end.get("signatures")
    for item in signatures if isinstance(signatures, list) else []:
        msg = SignedMessage.from_json(item)
        seat = next((s for s, key in enumerate(keys) if key.peer_id == msg.author), None)
        if seat is None or msg.kind != "end" or msg.table != table.get("id"):
            raise ProtocolError(RULE, "an end signature of no seat of this table")
        msg.verify(keys[seat])
        if msg.body.get("record") != digest:
            raise ProtocolError(RULE, f"seat {seat}'s end signature names another record")
        signed.append(seat)
    return tuple(sorted(signed))


def check_record(raw: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[ProofCheck, ...]]:
    """Every proof of a table's record checked again offline (`lanplay verify`): the players' names and
    one result per proof. ProtocolError when the record has no table section to check them against."""
    from engine.games import get_game
    from engine.record import parse_record

    record = parse_record(raw)
    table = raw.get("table")
    if (
        not isinstance(table, Mapping)
        or not isinstance(table.get("keys"), list)
        or not isinstance(table.get("id"), str)
    ):
        raise ProtocolError(RULE, "the record has no 'table' section with the table id and the seats' keys")
    raw_keys = table["keys"]
    assert isinstance(raw_keys, list)
    keys = tuple(PublicIdentity.from_hex(key) for key in raw_keys)
    if len(keys) != len(record.players):
        raise ProtocolError(RULE, "the record's table keys are not one per player")
    game = get_game(record.game)
    plan = Plan(str(table["id"]), game, game.options_from_json(record.options), keys)
    proofs = raw.get("proofs", [])
    if not isinstance(proofs, list):
        raise ProtocolError(RULE, "'proofs' must be a list")
    results: list[ProofCheck] = []
    for index, proof in enumerate(proofs):
        if not isinstance(proof, Mapping):
            results.append(ProofCheck(index, None, "a proof is an object"))
            continue
        round_index = proof.get("round")
        before = record.rounds[: round_index if is_index(round_index, len(record.rounds) + 1) else len(record.rounds)]
        try:
            results.append(ProofCheck(index, verify(plan, proof, before), None))
        except ProtocolError as exc:
            results.append(ProofCheck(index, None, exc.message))
    return record.players, tuple(results)
