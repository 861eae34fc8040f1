"""Dealing (P-4): shuffle passes, lock passes, hand keys in private, table keys in public.

Each received pass is read with its input points, which checks its proofs (`_on_shuffle`,
`_on_lock`; `protocol/deck.py`): a lock that moves or alters a point (issue 9, finding 2) is blamed
on its author before this seat sends any key (I5).
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.api import JSONObject
from protocol.deck import (
    CardTable,
    DeckContext,
    KeyOpening,
    LockOutput,
    LockSecret,
    ShuffleOutput,
    ShuffleSecret,
    check_key_opening,
    key_commitments,
    key_opening,
    lock_pass,
    open_position,
    random_permutation,
    random_scalar,
    shuffle_pass,
)
from protocol.errors import CheatDetected
from protocol.signed import SignedMessage
from protocol.table._core import SessionCore
from protocol.table._round import BUILT_ON, _Aborted, _Ignored, _Round, built_on, is_digest, without_built_on
from protocol.table.values import Dealt


class DealMixin(SessionCore):
    def _start_round(self, dealer: int) -> None:
        layout = self.game.layout(self.full_state, dealer)
        cards = self._card_tables.get(layout.deck)
        if cards is None:
            cards = self._card_tables[layout.deck] = CardTable(self.game.id, layout.deck)
        ctx = DeckContext(self.settings.table, self.round_index, self.n, cards)
        size = len(layout.deck)
        self.round = _Round(
            index=self.round_index,
            dealer=dealer,
            layout_hands=layout.hands,
            table_positions=layout.table,
            late_positions=layout.late_table,
            ctx=ctx,
            my_shuffle=ShuffleSecret(random_scalar(self.entropy), random_permutation(size, self.entropy)),
            my_lock=LockSecret.new(size, entropy=self.entropy),
        )
        self._enter("deal")
        if self.me == 0:
            self._my_shuffle()

    def _my_shuffle(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.shuffles[-1].points if rd.shuffles else rd.ctx.cards.points
        rd.my_shuffle_out = output = shuffle_pass(rd.ctx, self.me, deck, rd.my_shuffle, self.entropy)
        self._publish("shuffle", {**output.to_json(), BUILT_ON: self._pass_input()})

    def _my_lock(self) -> None:
        rd = self.round
        assert rd is not None
        deck = rd.locks[-1].points if rd.locks else rd.shuffles[-1].points
        rd.my_lock_out = output = lock_pass(rd.ctx, self.me, deck, rd.my_shuffle, rd.my_lock, self.entropy)
        self._publish("lock", {**output.to_json(), BUILT_ON: self._pass_input()})

    def _pass_input(self) -> str:
        """The digest of the signed pass the next pass is made on ("" for the first shuffle): what it
        names in `BUILT_ON` (I1), and what a receiver compares with its own copy before any check."""
        rd = self.round
        assert rd is not None
        if len(rd.shuffles) < self.n:
            return rd.shuffle_digests[-1] if rd.shuffles else ""
        return (rd.lock_digests or rd.shuffle_digests)[-1]

    def _on_shuffle(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if self.stage != "deal" or rd is None or len(rd.shuffles) < seat:
            return False
        if len(rd.shuffles) > seat:
            raise CheatDetected("P-4.2", "a second shuffle pass", seat)
        if built_on(msg.body, seat, "shuffle pass", first=seat == 0) != self._pass_input():
            return False  # I1: built on another version of the pass before it (see docs/PROTOCOL.md, I1)
        deck = rd.shuffles[-1].points if rd.shuffles else rd.ctx.cards.points
        if seat == self.me and rd.my_shuffle_out is not None:
            rd.shuffles.append(rd.my_shuffle_out)
        else:  # P-4.2/P-4.4: points, key base and proof checked against this pass's input before use
            rd.shuffles.append(ShuffleOutput.from_json(rd.ctx, seat, without_built_on(msg.body), deck))
        rd.shuffle_digests.append(msg.digest())
        if len(rd.shuffles) == self.n:
            if self.me == 0:
                self._my_lock()
        elif len(rd.shuffles) == self.me:
            self._my_shuffle()
        return True

    def _on_lock(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if self.stage != "deal" or rd is None or len(rd.shuffles) < self.n or len(rd.locks) < seat:
            return False
        if len(rd.locks) > seat:
            raise CheatDetected("P-4.2", "a second lock pass", seat)
        if built_on(msg.body, seat, "lock pass") != self._pass_input():
            return False  # I1: built on another version of the pass before it (see docs/PROTOCOL.md, I1)
        deck = rd.locks[-1].points if rd.locks else rd.shuffles[-1].points
        if seat == self.me and rd.my_lock_out is not None:
            rd.locks.append(rd.my_lock_out)
        else:  # I5: each position's proof checked against this pass's input before any key is sent; a lock
            # that moved or altered a point raises CheatDetected naming its author (the message is the evidence)
            rd.locks.append(LockOutput.from_json(rd.ctx, seat, without_built_on(msg.body), deck))
        rd.lock_digests.append(msg.digest())
        if len(rd.locks) < self.n:
            if len(rd.locks) == self.me:
                self._my_lock()
        else:
            self._send_deal_keys()
        return True

    def _send_deal_keys(self) -> None:
        """P-4.3: each seat's hand keys privately to it; the table cards' keys to everyone."""
        rd = self.round
        assert rd is not None
        for seat, positions in enumerate(rd.layout_hands):
            if seat == self.me:
                continue
            openings = [key_opening(self.me, rd.my_lock, p).to_json() for p in positions]
            self._send_private(seat, "p.keys", {"round": rd.index, "openings": openings, BUILT_ON: rd.lock_digests[-1]})
        openings = [key_opening(self.me, rd.my_lock, p).to_json() for p in rd.table_positions]
        self._publish("open", {"late": False, "openings": openings, BUILT_ON: rd.lock_digests[-1]})
        self._try_deal()

    def _on_private_keys(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        if seat in rd.keys_from:
            raise _Ignored("P-4.3", f"a second set of hand keys from seat {seat}: ignored")
        named = msg.body.get(BUILT_ON)
        if isinstance(named, str) and named != rd.lock_digests[-1] and is_digest(named):
            return False  # I1: keys for another version of the last lock; a malformed name is checked below
        for opening in self._check_hand_keys(rd, seat, self.me, msg.body):
            rd.hand_keys.setdefault(opening.position, {})[seat] = opening
        rd.keys_from.add(seat)
        self._try_deal()
        return True

    def _check_hand_keys(self, rd: _Round, sender: int, recipient: int, body: JSONObject) -> list[KeyOpening]:
        """P-4.3: `sender`'s keys for `recipient`'s hand, checked against `sender`'s public lock
        commitments. The recipient runs it on receipt and every other seat on the evidence of a
        blame, so both reach the same answer from the same signed message (I1)."""
        built_on(body, sender, "set of hand keys")  # its shape: re-checked alike on a blame's evidence
        raw = body.get("openings")
        positions = rd.layout_hands[recipient]
        if not isinstance(raw, list) or len(raw) != len(positions):
            raise CheatDetected("P-4.3", f"hand keys must cover the {len(positions)} dealt positions", sender)
        commitments = key_commitments(rd.shuffles[sender], rd.locks[sender])
        openings = []
        for position, item in zip(positions, raw, strict=True):
            opening = KeyOpening.from_json(rd.ctx, sender, item)
            if opening.position != position:
                raise CheatDetected("P-4.3", f"a key for position {opening.position} instead of {position}", sender)
            check_key_opening(rd.ctx, opening, commitments)
            openings.append(opening)
        return openings

    def _on_open(self, seat: int, msg: SignedMessage) -> bool:
        rd = self.round
        if rd is None or len(rd.locks) < self.n:
            return False
        late = msg.body.get("late") is True
        positions = rd.late_positions if late else rd.table_positions
        if late and self.game.expected(self.state).phase != "reveal":
            return False
        seen = rd.late_from if late else rd.opens_from
        if seat in seen:
            raise CheatDetected("P-4.3", "a second opening of the table cards", seat)
        if built_on(msg.body, seat, "table card opening") != rd.lock_digests[-1]:
            return False  # I1: keys for another version of the last lock (see docs/PROTOCOL.md, I1)
        raw = msg.body.get("openings")
        if not isinstance(raw, list) or len(raw) != len(positions):
            raise CheatDetected("P-4.3", f"table keys must cover the {len(positions)} table positions", seat)
        for position, item in zip(positions, raw, strict=True):
            opening = KeyOpening.from_json(rd.ctx, seat, item)
            if opening.position != position:
                raise CheatDetected("P-4.3", f"a key for position {opening.position} instead of {position}", seat)
            check_key_opening(rd.ctx, opening, key_commitments(rd.shuffles[seat], rd.locks[seat]))
            rd.table_keys.setdefault(position, {})[seat] = opening
        seen.add(seat)
        if late:
            self._try_late_reveal()
        else:
            self._try_deal()
        return True

    def _open(self, position: int, keys: Mapping[int, KeyOpening]) -> str:
        """Open a position; a card that opens to no card (a pass replaced it) stops the round for
        the audit, which names the seat (the fault is certain, its author not yet known)."""
        rd = self.round
        assert rd is not None
        openings = [keys[s] for s in range(self.n)]
        try:
            code = open_position(rd.ctx, position, rd.final_points[position], openings, rd.commitments())
        except CheatDetected as exc:
            if exc.seat is None:  # certain cheating, author unknown: the audit will name it
                self._abort_round("P-4.3", exc.message)
                raise _Aborted() from exc
            raise
        return str(code)

    def _try_deal(self) -> None:
        rd = self.round
        if rd is None or rd.dealt or rd.deal_failed or self.stage != "deal":
            return  # (failed: the same keys open the same cards, and a stopped seat asks on every input: I6)
        others = {s for s in range(self.n) if s != self.me}
        if not (others <= rd.opens_from and self.me in rd.opens_from):
            return
        # A stopped seat judging on in silence (`inbox._shadow`) deals without its hand when a seat
        # kept its hand keys back: it makes no move, so what it judges is every other seat's play on
        # public knowledge, as the seats with their hands do, and it reaches the faults they reach (I2;
        # red team 11 #6). A live seat waits for its hand: it has moves to make.
        keyed = others <= rd.keys_from
        if not (keyed or self.silent):
            return
        try:
            for position in rd.layout_hands[self.me] if keyed else ():
                keys = dict(rd.hand_keys[position])
                keys[self.me] = key_opening(self.me, rd.my_lock, position)
                rd.hand_keys[position] = keys
                rd.my_cards[position] = self._open(position, keys)
            for position in rd.table_positions:
                rd.table_cards[position] = self._open(position, rd.table_keys[position])
        except _Aborted:
            rd.deal_failed = True
            return
        cards: list[str | None] = [None] * rd.ctx.size
        for position, code in {**rd.my_cards, **rd.table_cards}.items():
            cards[position] = code
        deal = self.game.deal_from_cards(self.full_state, rd.dealer, cards)
        self.state = self.game.start_round(self.full_state, deal)
        rd.dealt = True
        self._enter("play")
        hand = tuple(rd.my_cards.get(p, "?") for p in rd.layout_hands[self.me])  # unkeyed: silent, not shown
        self._out.append(Dealt(rd.index, hand, tuple(rd.table_cards[p] for p in rd.table_positions)))
        self._after_change()

    def _try_late_reveal(self) -> None:
        rd = self.round
        assert rd is not None
        if len(rd.late_from) < self.n:
            return
        try:
            codes = [self._open(p, rd.table_keys[p]) for p in rd.late_positions]
        except _Aborted:
            return
        for position, code in zip(rd.late_positions, codes, strict=True):
            rd.table_cards[position] = code
        self.state = self.game.reveal(self.state, codes)
        self._after_change()
