"""The seat plan of a table, signed by every seat, with the seat order drawn jointly (I7, P-3.2).

Sans-IO: `lanplay.net.lobby` carries these values over the lobby links; nothing here touches a socket.

Why: the host of a lobby used to write the plan alone. It could list a *phantom seat* under anyone's
public key (who would then be blamed for withholding at a table they never joined), and it always sat
first, hence locked the deck first. Now:

1. The *roster* (`Roster`) is the peers that joined, in the order they joined, the host first. Each
   of them proved its key over its own authenticated lobby link, and each checks the roster lists it
   as it joined.
2. The seat order is drawn jointly (P-3.2), never chosen: every seat commits to 32 random bytes
   (`commit` under `ORDER_TAG`, bound to the roster's digest and the seat's join index), and only when
   all commitments are known do the seats reveal. The order is a Fisher–Yates shuffle of the join
   order driven by ``joint_random`` of all reveals in join order (`draw_order`): nobody can fix it
   while one seat's bytes are random. The host reveals first, together with the list of commitments,
   so it cannot wait to see the others' reveals before choosing whether to open its own.
3. The resulting `TablePlan` (game, options, every seat's key, name and mesh address in the drawn
   order, and the draw itself, so anyone can re-derive the order) has a table id, the hash of all of
   it. **Every seat signs** ``PLAN_DOMAIN ‖ table id ‖ SHA-256(plan)`` with its identity key, and a
   seat does not start until it holds a valid signature of *every* seat on the very same plan
   (`TablePlan.verify`). A phantom seat cannot sign, so a plan that lists one never starts; a host that
   shows different plans (or draws) to different seats gets signatures over different bytes, and
   nobody starts.

4. Every field is checked by each signer before it commits or signs (P-6.7, `check_table`): the
   rules' version the plan pins (`protocol.version.RULES_DIGEST`), the game and options (by the
   engine), every mesh address (`check_mesh_address`), and who runs each bot (only that laptop may
   say so: its signature, `bot_vouch`).

`PlanDraw` is one seat's part of steps 2–3 as a small state machine, each step taken once (P-6.5);
the host runs one too.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import unicodedata
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from engine.api import RuleError
from engine.games import get_game
from engine.record import BotSeat
from protocol.commitment import (
    NONCE_BYTES,
    Commitment,
    Opening,
    commit,
    draw_below,
    joint_random,
    verify_opening,
)
from protocol.encoding import JSONObject, canonical, h2b
from protocol.errors import CheatDetected, ProtocolError
from protocol.identity import SIGNATURE_BYTES, Identity, PublicIdentity
from protocol.table.values import TableSettings
from protocol.version import RULES_DIGEST, short

RULE = "P-1.1"  # who sits at the table, and that each of them agreed
ORDER_RULE = "P-3.2"  # the seat order is drawn jointly
DRAW_RULE = "P-6.5"  # no seat can draw again: each step once per attempt, a failed attempt names who failed it
MAX_LEVEL_CHARS = 16
DEFAULT_PATIENCE = 120
MIN_PATIENCE, MAX_PATIENCE = 1, 3600
FIELD_RULE = "P-6.7"  # every field of the plan is checked by each signer; the plan pins the rules' version
ORDER_TAG = "lanplay/seat-order"
PLAN_DOMAIN = b"lanplay/table-plan/v1\x00"
BOT_DOMAIN = b"lanplay/bot-seat/v1\x00"
ORDER_VALUE_BYTES = 32
MAX_NAME_CHARS = 40
MAX_SEATS = 16
# Names are shown on every seat's screen: no controls, escapes, bidi overrides or line breaks (I7).
_FORBIDDEN_NAME_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class PlanError(ProtocolError):
    """A plan, roster or draw that must not be played (the message says what is wrong)."""


def check_name(name: object) -> str:
    """A player name as a plan may carry it: 1 to 40 characters, none of them a control or format
    character (so no terminal escape and no bidirectional override reaches anyone's screen)."""
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS or not name.strip():
        raise PlanError(RULE, f"a seat's name is 1 to {MAX_NAME_CHARS} characters, not blank")
    if any(unicodedata.category(c) in _FORBIDDEN_NAME_CATEGORIES for c in name):
        raise PlanError(RULE, f"a seat's name may not contain control or format characters: {name[:60]!r}")
    return name


def check_mesh_address(host: object) -> str:
    """A seat's mesh address as a plan may carry it (P-6.7): an IP address written the one way Python
    writes it, that one peer can listen on and the others dial. Refused: names, multicast, the
    unspecified address, IPv4 "this network" (0.0.0.0/8), reserved and limited-broadcast addresses
    (240.0.0.0/4), IPv6 with a zone (it means nothing on another laptop), and any IPv4-mapped IPv6
    address: a second spelling of an IPv4 one, under which a seat could name another seat's listener
    and pass the check that no two seats name one address."""
    if not isinstance(host, str):
        raise PlanError(FIELD_RULE, "a seat's mesh address is an IP address")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise PlanError(FIELD_RULE, f"a seat's mesh address is an IP address, not {host[:60]!r}") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise PlanError(FIELD_RULE, f"a seat's mesh address is written {str(address.ipv4_mapped)!r}, not {host[:60]!r}")
    if str(address) != host:
        raise PlanError(FIELD_RULE, f"a seat's mesh address is written {str(address)!r}, not {host[:60]!r}")
    why = None
    if address.is_multicast:
        why = "a multicast address"
    elif address.is_unspecified:
        why = "the unspecified address"
    elif isinstance(address, ipaddress.IPv4Address) and (address.is_reserved or address in _THIS_NETWORK):
        why = "a reserved or broadcast address"
    elif isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        why = "an IPv6 address with a zone"
    if why is not None:
        raise PlanError(FIELD_RULE, f"{host} cannot be a peer's mesh address: it is {why}")
    return host


_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")


def bot_statement(lobby_id: str, bot_key: str) -> bytes:
    """What the laptop that runs a bot seat signs to say so (P-6.7): the lobby and the bot's key."""
    return BOT_DOMAIN + lobby_id.encode("utf-8") + b"\x00" + bytes.fromhex(bot_key)


def bot_vouch(laptop: Identity, lobby_id: str, bot_key: str) -> str:
    """The signature (hex) by which ``laptop`` says it runs the bot seat ``bot_key`` in this lobby, and
    so can see its cards. Only that laptop can make it: no seat can name another as its bot host."""
    return laptop.sign(bot_statement(lobby_id, bot_key)).hex()


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """One peer at the table: its name, its identity key (hex) and where its mesh listens."""

    name: str
    public_key: str  # hex
    address: str
    port: int
    # A bot seat: the public key (hex) of the seat whose laptop runs it (its own key: a laptop of its own).
    # Left out of the JSON when None.
    runs_on: str | None = None
    # For a bot run by another seat's laptop: that laptop's signature on `bot_statement` (`bot_vouch`).
    vouch: str | None = None

    @property
    def fingerprint(self) -> str:
        return PublicIdentity.from_hex(self.public_key).fingerprint

    def to_json(self) -> JSONObject:
        out: JSONObject = {"name": self.name, "key": self.public_key, "mesh": [self.address, self.port]}
        if self.runs_on is not None:
            out["bot"] = self.runs_on
        if self.vouch is not None:
            out["vouch"] = self.vouch
        return out

    @staticmethod
    def from_json(raw: object) -> SeatInfo:
        if not isinstance(raw, dict):
            raise PlanError(RULE, "a seat is an object")
        name, key, mesh = check_name(raw.get("name")), raw.get("key"), raw.get("mesh")
        if not isinstance(key, str):
            raise PlanError(RULE, "a seat's key is hex")
        try:
            PublicIdentity.from_hex(key)
        except ProtocolError as exc:
            raise PlanError(RULE, f"a seat's key: {exc.message}") from None
        if (
            not isinstance(mesh, list)
            or len(mesh) != 2
            or not isinstance(mesh[0], str)
            or not isinstance(mesh[1], int)
            or isinstance(mesh[1], bool)
            or not 0 < mesh[1] < 65536
        ):
            raise PlanError(RULE, "a seat's mesh address is [address, port]")
        check_mesh_address(mesh[0])
        runs_on, vouch = raw.get("bot"), raw.get("vouch")
        if runs_on is not None:
            try:
                if not isinstance(runs_on, str):
                    raise ProtocolError(RULE, "not hex")
                PublicIdentity.from_hex(runs_on)
            except ProtocolError:
                raise PlanError(RULE, "a bot seat names the key of the laptop that runs it") from None
        if vouch is not None:
            if runs_on is None or runs_on == key:
                raise PlanError(FIELD_RULE, "only a bot run by another seat's laptop carries that laptop's word")
            try:
                h2b(vouch, SIGNATURE_BYTES, "vouch")
            except ProtocolError as exc:
                raise PlanError(FIELD_RULE, f"a bot seat's vouch: {exc.message}") from None
        return SeatInfo(name, key, mesh[0], mesh[1], runs_on, vouch if isinstance(vouch, str) else None)

    def check_bot(self, lobby_id: str, keys: Collection[str]) -> None:
        """`PlanError` unless what this seat says about running a bot is said by that laptop (P-6.7): a
        bot on a laptop of its own needs no word; a bot on another seat's laptop is a seat of ``keys``
        and carries that laptop's signature (`bot_vouch`) for this lobby and this bot."""
        if self.runs_on is None or self.runs_on == self.public_key:
            return
        if self.runs_on not in keys:
            raise PlanError(FIELD_RULE, f"{self.name!r} says it is a bot on a laptop that has no seat at this table")
        host = PublicIdentity.from_hex(self.runs_on)
        try:
            if self.vouch is None:
                raise ProtocolError(FIELD_RULE, "no vouch")
            host.verify(h2b(self.vouch, SIGNATURE_BYTES, "vouch"), bot_statement(lobby_id, self.public_key))
        except ProtocolError:
            raise PlanError(
                FIELD_RULE,
                f"{self.name!r} says it is a bot on the laptop of {host.fingerprint}, which did not say so",
            ) from None


def sign_as_seat(seats: Sequence[SeatInfo], identity: Identity, statement: bytes, what: str, rule: str = RULE) -> str:
    """`identity`'s signature (hex) on `statement`, the bytes of a `what` (a plan, a continuation) it
    has a seat in."""
    if identity.public.hex() not in {s.public_key for s in seats}:
        raise PlanError(rule, f"only a seat of the {what} signs it")
    return identity.sign(statement).hex()


def check_seat_signature(
    seats: Sequence[SeatInfo], seat: int, signature: object, statement: bytes, what: str, rule: str = RULE
) -> None:
    """`PlanError` naming ``seat`` unless ``signature`` is its signature on `statement`, a `what`'s bytes."""
    if not isinstance(signature, str):
        raise PlanError(rule, f"seat {seat}'s signature on the {what} is missing")
    try:
        PublicIdentity.from_hex(seats[seat].public_key).verify(h2b(signature, SIGNATURE_BYTES, "signature"), statement)
    except ProtocolError:
        raise PlanError(rule, f"seat {seat} ({seats[seat].name!r}) did not sign this {what}") from None


def check_all_signed(
    seats: Sequence[SeatInfo], signatures: Sequence[str], statement: bytes, what: str, rule: str = RULE
) -> None:
    """`PlanError` unless there is one signature per seat and each is that seat's on `statement`."""
    if len(signatures) != len(seats):
        raise PlanError(rule, f"the {what} carries {len(signatures)} signatures for {len(seats)} seats")
    for seat, signature in enumerate(signatures):
        check_seat_signature(seats, seat, signature, statement, what, rule)


def table_settings(
    table: str,
    game: str,
    options: JSONObject,
    seats: Sequence[SeatInfo],
    patience: int,
    carried: tuple[JSONObject, ...] = (),
    continues: tuple[str, str] | None = None,
) -> TableSettings:
    """Every seat's table settings from a signed plan's fields (a lobby's plan, or a continuation's)."""
    return TableSettings(
        table=table,
        game=game,
        options=dict(options),
        seats=tuple(PublicIdentity.from_hex(s.public_key) for s in seats),
        names=tuple(s.name for s in seats),
        patience=float(patience),
        bots=tuple(BotSeat(bot, host) for bot, host in bot_seats(seats)),
        # In one key order (canonical's) whichever way the plan reached this seat, decided here or read from
        # a peer's bytes: every seat writes the same record bytes (P-5.8).
        carried=tuple(json.loads(canonical(list(carried)))),
        continues=continues,
    )


def check_game(game_id: str, options: JSONObject, seats: int) -> None:
    """The game knows these options and seats this many (P-6.7), asked of the engine itself, so a
    table it would refuse never starts: `PlanError` with the engine's words."""
    try:
        game = get_game(game_id)
        if not game.min_players <= seats <= game.max_players:
            raise PlanError(FIELD_RULE, f"{game.title} is for {game.min_players}–{game.max_players} players, "
                                        f"not {seats}")  # fmt: skip
        game.new_game(seats, game.options_from_json(options))
    except RuleError as exc:
        raise PlanError(FIELD_RULE, f"the table's game or options: {exc.message}") from None


def check_table(lobby_id: str, game_id: str, options: JSONObject, seats: Sequence[SeatInfo], rules: str) -> None:
    """Every field of a roster or plan that a signer can check (P-6.7), before it commits or signs:
    the rules' version is the one this laptop judges by; the game knows the options and seats this
    many; every mesh address can be a peer's, and no two seats name one; every bot host said so.
    `PlanError` naming the first field that fails."""
    if rules != RULES_DIGEST:
        raise PlanError(
            FIELD_RULE,
            f"the table's rules are version {short(rules)}, this laptop's {short(RULES_DIGEST)}: install the same "
            "lanplay on every laptop",
        )
    check_game(game_id, options, len(seats))
    keys = {s.public_key for s in seats}
    where: dict[tuple[str, int], SeatInfo] = {}
    for seat in seats:
        check_mesh_address(seat.address)
        other = where.setdefault((seat.address, seat.port), seat)
        if other is not seat:  # one port, one listener: at most one of them is that seat's
            raise PlanError(FIELD_RULE, f"{other.name!r} and {seat.name!r} name one mesh address, "
                                        f"{seat.address}:{seat.port}")  # fmt: skip
        seat.check_bot(lobby_id, keys)


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


def _seats_from_json(raw: object, what: str) -> tuple[SeatInfo, ...]:
    if not isinstance(raw, list) or not 0 < len(raw) <= MAX_SEATS:
        raise PlanError(RULE, f"{what} lists 1 to {MAX_SEATS} seats")
    seats = tuple(SeatInfo.from_json(s) for s in raw)
    if len({s.public_key for s in seats}) != len(seats):
        raise PlanError(RULE, f"{what} lists one identity twice")
    return seats


def check_patience(value: object) -> int:
    """The table's patience (P-5.5): whole seconds an owed step is waited for before a seat may stop the
    round, the same at every seat because the plan pins it."""
    if not isinstance(value, int) or isinstance(value, bool) or not MIN_PATIENCE <= value <= MAX_PATIENCE:
        raise PlanError(FIELD_RULE, f"the table's patience is whole seconds from {MIN_PATIENCE} to {MAX_PATIENCE}")
    return value


def check_level(value: object) -> str | None:
    """The level the table's bots play at (the lobby form's, signed in the plan so that a bot that takes a
    seat later plays at it too, P-5.7): None, or a short lowercase word the laptop that runs a bot reads."""
    if value is None:
        return None
    word = isinstance(value, str) and value.isascii() and value.isalpha() and value.islower()
    if not word or not 1 <= len(str(value)) <= MAX_LEVEL_CHARS:
        raise PlanError(FIELD_RULE, f"the table's bot level is a lowercase word of at most {MAX_LEVEL_CHARS} letters")
    return str(value)


def _header_from_json(raw: object, what: str) -> tuple[str, str, JSONObject, str, int]:
    if not isinstance(raw, dict):
        raise PlanError(RULE, f"{what} is an object")
    lobby, game, options, rules = raw.get("lobby"), raw.get("game"), raw.get("options"), raw.get("rules")
    if not isinstance(lobby, str) or not isinstance(game, str) or not isinstance(options, dict):
        raise PlanError(RULE, f"{what} names lobby, game and options")
    if not isinstance(rules, str) or len(rules) != 64 or any(c not in "0123456789abcdef" for c in rules):
        raise PlanError(FIELD_RULE, f"{what} pins the version of its rules (a SHA-256 digest, lowercase hex)")
    return lobby, game, options, rules, check_patience(raw.get("patience"))


@dataclass(frozen=True, slots=True)
class Roster:
    """The peers that joined a lobby, in the order they joined (the host first)."""

    lobby_id: str
    game: str
    options: JSONObject
    seats: tuple[SeatInfo, ...]
    rules: str = RULES_DIGEST  # the version of the rules the table is judged by (`protocol.version`)
    patience: int = DEFAULT_PATIENCE  # seconds an owed step is waited for (P-5.5)
    level: str | None = None  # the table's bot level (`check_level`); left out of the JSON when None

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "lobby": self.lobby_id,
            "game": self.game,
            "options": self.options,
            "patience": self.patience,
            "seats": [s.to_json() for s in self.seats],
            "rules": self.rules,
        }
        if self.level is not None:
            out["level"] = self.level
        return out

    @staticmethod
    def from_json(raw: object) -> Roster:
        lobby, game, options, rules, patience = _header_from_json(raw, "a roster")
        assert isinstance(raw, dict)
        seats = _seats_from_json(raw.get("seats"), "a roster")
        return Roster(lobby, game, options, seats, rules, patience, check_level(raw.get("level")))

    def check(self) -> None:
        """Every field a seat checks before it commits to a draw of this roster (`check_table`)."""
        check_table(self.lobby_id, self.game, self.options, self.seats, self.rules)

    @property
    def digest(self) -> str:
        """What the seat-order commitments are bound to (as their "table")."""
        return hashlib.sha256(canonical(self.to_json())).hexdigest()

    def index_of(self, public_key: str) -> int:
        for index, seat in enumerate(self.seats):
            if seat.public_key == public_key:
                return index
        raise PlanError(RULE, "this identity is not in the roster")


def order_commitment(
    roster: Roster, index: int, value: bytes, nonce: bytes | None = None
) -> tuple[Commitment, Opening]:
    """Seat ``index`` (join order) commits to its share of the seat order (P-3.1)."""
    return commit(ORDER_TAG, roster.digest, 0, index, value, nonce)


def draw_order(roster: Roster, commitments: Sequence[Commitment], openings: Sequence[Opening]) -> tuple[int, ...]:
    """The seat order: ``order[k]`` is the join index of the peer at seat ``k``. Every opening is
    checked against its commitment (`CheatDetected` P-3.3 names the join index that does not open)."""
    n = len(roster.seats)
    if len(commitments) != n or len(openings) != n:
        raise PlanError(ORDER_RULE, f"the seat draw needs {n} commitments and {n} reveals")
    for index, (commitment, opening) in enumerate(zip(commitments, openings, strict=True)):
        verify_opening(commitment, opening, ORDER_TAG, roster.digest, 0, index)
        if len(opening.value) != ORDER_VALUE_BYTES:
            raise CheatDetected("P-3.3", f"a seat-order share is {ORDER_VALUE_BYTES} bytes", index)
    seed = joint_random([o.value for o in openings])
    order = list(range(n))
    for i in range(n - 1, 0, -1):  # Fisher–Yates, every draw independent (its own label)
        j = draw_below(seed, i + 1, f"seat-order/{i}")
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def _opening_json(opening: Opening) -> JSONObject:
    return {"value": opening.value.hex(), "nonce": opening.nonce.hex()}


def opening_from_json(raw: object) -> Opening:
    if not isinstance(raw, dict):
        raise PlanError(ORDER_RULE, "a seat-order reveal is {value, nonce}")
    try:
        return Opening(h2b(raw.get("value"), ORDER_VALUE_BYTES, "value"), h2b(raw.get("nonce"), NONCE_BYTES, "nonce"))
    except ProtocolError as exc:
        raise PlanError(ORDER_RULE, f"a seat-order reveal: {exc.message}") from None


def commitment_from_json(raw: object) -> Commitment:
    try:
        return Commitment.from_hex(raw)
    except ProtocolError as exc:
        raise PlanError(ORDER_RULE, f"a seat-order commitment: {exc.message}") from None


@dataclass(frozen=True, slots=True)
class SeatDraw:
    """The draw behind a plan, in join order: who joined, what each committed, what each revealed."""

    joined: tuple[str, ...]  # public keys
    commitments: tuple[Commitment, ...]
    openings: tuple[Opening, ...]

    def to_json(self) -> JSONObject:
        return {
            "joined": list(self.joined),
            "commits": [c.hex() for c in self.commitments],
            "reveals": [_opening_json(o) for o in self.openings],
        }

    @staticmethod
    def from_json(raw: object) -> SeatDraw:
        if not isinstance(raw, dict):
            raise PlanError(ORDER_RULE, "a seat draw is an object")
        joined, commits, reveals = raw.get("joined"), raw.get("commits"), raw.get("reveals")
        if not isinstance(joined, list) or not all(isinstance(k, str) for k in joined):
            raise PlanError(ORDER_RULE, "a seat draw lists the keys that joined")
        if not isinstance(commits, list) or not isinstance(reveals, list):
            raise PlanError(ORDER_RULE, "a seat draw lists commitments and reveals")
        return SeatDraw(
            tuple(joined),
            tuple(commitment_from_json(c) for c in commits),
            tuple(opening_from_json(o) for o in reveals),
        )


@dataclass(frozen=True, slots=True)
class TablePlan:
    """What the lobby agrees on: enough to build every seat's `TableSettings` and mesh, the draw that
    fixed the seat order, and (once complete) every seat's signature on all of it."""

    lobby_id: str
    game: str
    options: JSONObject
    seats: tuple[SeatInfo, ...]  # in the drawn seat order
    draw: SeatDraw
    signatures: tuple[str, ...] = ()  # hex, one per seat in seat order; empty until every seat signed
    rules: str = RULES_DIGEST  # the version of the rules the table is judged by (`protocol.version`)
    patience: int = DEFAULT_PATIENCE  # seconds an owed step is waited for (P-5.5)
    level: str | None = None  # the table's bot level (`check_level`); left out of the JSON when None

    def unsigned_json(self) -> JSONObject:
        return {
            "lobby": self.lobby_id,
            "game": self.game,
            "options": self.options,
            "patience": self.patience,
            "seats": [s.to_json() for s in self.seats],
            "draw": self.draw.to_json(),
            "rules": self.rules,
            **({"level": self.level} if self.level is not None else {}),
        }

    def to_json(self) -> JSONObject:
        return {**self.unsigned_json(), "signatures": list(self.signatures)}

    @staticmethod
    def from_json(raw: object) -> TablePlan:
        """Parse (shape only: `verify` checks the draw and the signatures)."""
        lobby, game, options, rules, patience = _header_from_json(raw, "a table plan")
        assert isinstance(raw, dict)
        seats = _seats_from_json(raw.get("seats"), "a table plan")
        if "draw" not in raw:
            raise PlanError(ORDER_RULE, "a table plan carries the draw of its seat order")
        draw = SeatDraw.from_json(raw["draw"])
        signatures = raw.get("signatures", [])
        if not isinstance(signatures, list) or not all(isinstance(s, str) for s in signatures):
            raise PlanError(RULE, "a table plan's signatures are hex strings")
        level = check_level(raw.get("level"))
        return TablePlan(lobby, game, options, seats, draw, tuple(signatures), rules, patience, level)

    @property
    def table_id(self) -> str:
        """The game's table id: the hash of the plan (signatures aside), so every seat must hold the same one."""
        return hashlib.sha256(canonical(self.unsigned_json())).hexdigest()[:32]

    def statement(self) -> bytes:
        """The bytes every seat signs: the table id and the full SHA-256 of the plan."""
        return PLAN_DOMAIN + self.table_id.encode("ascii") + hashlib.sha256(canonical(self.unsigned_json())).digest()

    def roster(self) -> Roster:
        """The roster the draw was about, rebuilt from the seats and the join order."""
        by_key = {s.public_key: s for s in self.seats}
        if sorted(self.draw.joined) != sorted(by_key) or len(self.draw.joined) != len(self.seats):
            raise PlanError(RULE, "the seats are not exactly the peers that joined")
        joined = tuple(by_key[k] for k in self.draw.joined)
        return Roster(self.lobby_id, self.game, self.options, joined, self.rules, self.patience, self.level)

    def sign(self, identity: Identity) -> str:
        """This seat's signature on the plan (hex)."""
        return sign_as_seat(self.seats, identity, self.statement(), "plan")

    def check_signature(self, seat: int, signature: object) -> None:
        """`PlanError` naming ``seat`` unless ``signature`` is its signature on this plan."""
        check_seat_signature(self.seats, seat, signature, self.statement(), "plan")

    def with_signatures(self, signatures: Sequence[str]) -> TablePlan:
        return TablePlan(
            self.lobby_id, self.game, self.options, self.seats, self.draw, tuple(signatures), self.rules, self.patience,
            self.level,
        )

    def verify(self) -> None:
        """Everything a seat checks before it plays (I7, P-6.7): the seats are exactly the peers that
        joined, every field holds (`check_table`: rules' version, game and options, mesh addresses, bot
        hosts), the order is the one the draw gives, and every seat signed this very plan. `PlanError`
        says what fails."""
        roster = self.roster()
        roster.check()
        try:
            order = draw_order(roster, self.draw.commitments, self.draw.openings)
        except ProtocolError as exc:
            raise PlanError(ORDER_RULE, f"the seat draw does not hold: {exc.message}") from None
        if tuple(roster.seats[i] for i in order) != self.seats:
            raise PlanError(ORDER_RULE, "the seat order is not the one the joint draw gives")
        check_all_signed(self.seats, self.signatures, self.statement(), "plan")

    def settings(self) -> TableSettings:
        """Every seat's table settings, all from the signed plan (its patience too, P-5.5)."""
        return table_settings(self.table_id, self.game, self.options, self.seats, self.patience)


def build_plan(roster: Roster, commitments: Sequence[Commitment], openings: Sequence[Opening]) -> TablePlan:
    """The unsigned plan the draw gives."""
    order = draw_order(roster, commitments, openings)
    draw = SeatDraw(tuple(s.public_key for s in roster.seats), tuple(commitments), tuple(openings))
    seats = tuple(roster.seats[i] for i in order)
    return TablePlan(
        roster.lobby_id, roster.game, roster.options, seats, draw, rules=roster.rules, patience=roster.patience,
        level=roster.level,
    )


@dataclass
class PlanDraw:
    """One seat's part in drawing the seat order and signing the plan, given the roster it checked.

    ``commitment`` goes out first, once every field of the roster checks (`Roster.check`); `reveal`
    (once every commitment is known) gives the opening to send; `plan` (once every opening is known)
    gives the unsigned plan and this seat's signature; `finish` (once every signature is known) gives
    the verified, signed plan. Each step is taken once (P-6.5): commitments or openings offered a
    second time, even the same ones, are refused, so nobody can have this seat reveal or sign again
    in one draw (a relay that swaps its own commitment after seeing every reveal would choose the
    order)."""

    roster: Roster
    identity: Identity
    entropy: Callable[[int], bytes]
    index: int = field(init=False)
    commitment: Commitment = field(init=False)
    opening: Opening = field(init=False)
    _commitments: tuple[Commitment, ...] = ()
    _unsigned: TablePlan | None = None

    def __post_init__(self) -> None:
        self.index = self.roster.index_of(self.identity.public.hex())
        self.roster.check()
        self.commitment, self.opening = order_commitment(
            self.roster, self.index, self.entropy(ORDER_VALUE_BYTES), self.entropy(NONCE_BYTES)
        )

    @property
    def has_reveals(self) -> bool:
        """Every seat's opening is known to this seat (`plan` was taken)."""
        return self._unsigned is not None

    def reveal(self, commitments: Sequence[Commitment]) -> Opening:
        """Every seat's commitment is known: check ours is among them, untouched; our opening."""
        if self._commitments:
            raise PlanError(DRAW_RULE, "the commitments of this draw came a second time: a seat reveals once per draw")
        if len(commitments) != len(self.roster.seats):
            raise PlanError(ORDER_RULE, f"{len(commitments)} seat-order commitments for {len(self.roster.seats)} seats")
        if commitments[self.index] != self.commitment:
            raise PlanError(ORDER_RULE, "the commitments relayed do not hold this seat's own")
        self._commitments = tuple(commitments)
        return self.opening

    def plan(self, openings: Sequence[Opening]) -> tuple[TablePlan, str]:
        """Every opening is known: the unsigned plan and this seat's signature on it."""
        if not self._commitments:
            raise PlanError(ORDER_RULE, "reveals before commitments")
        if self._unsigned is not None:
            raise PlanError(DRAW_RULE, "the reveals of this draw came a second time: a seat signs once per draw")
        if len(openings) != len(self.roster.seats) or openings[self.index] != self.opening:
            raise PlanError(ORDER_RULE, "the reveals relayed do not hold this seat's own")
        self._unsigned = build_plan(self.roster, self._commitments, openings)
        return self._unsigned, self._unsigned.sign(self.identity)

    def finish(self, plan: TablePlan) -> TablePlan:
        """The plan as it came back with every seat's signature: it must be the plan this seat drew
        and signed, and verify in full."""
        if self._unsigned is None:
            raise PlanError(RULE, "a signed plan before the draw was done")
        if plan.unsigned_json() != self._unsigned.unsigned_json():
            raise PlanError(RULE, "the plan to start is not the one this seat drew and signed")
        plan.verify()
        return plan
