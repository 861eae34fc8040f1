"""A table that outlives a seat (P-5.7): the plan of the table that goes on from one that ended early.

When a table ends before its game does (a leave, a stop, an exposure), the seats still present may go
on: a new table, with a new table id, that names the table it goes on from and the record digest every
present seat signed there (P-5.8), carries that record's confirmed rounds (so the scores carry over),
keeps the seat order, and puts a bot in each seat that is no longer present. A bot's seat names the
laptop that runs it, which signs that it does (`protocol.plan.bot_vouch`): that laptop sees its cards,
and every screen and the record say so.

How the seats agree, with no host: each present seat sends one signed `Offer` (go on or end; and, for
each seat to fill, a bot it would run: the bot's key, where its mesh listens, the vouch). Once every
present seat's offer is in, `decide` gives the same answer at every seat: the game ends if anyone chose
to end or nobody offered to run a bot for some seat; else the `Continuation` with each bot run by the
lowest seat that offered one. Every seat of it then signs it (a bot's seat by the laptop that runs it,
with the bot's key), and it is played once `verify` holds: the carried rounds are the ones the digest
signed, every field checks as a lobby's plan does (`check_table`), and every seat signed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.api import RuleError
from engine.games import get_game
from engine.record import RoundRecord
from protocol.encoding import JSONObject, canonical, check_table_id, h2b, sha256_hex
from protocol.errors import ProtocolError
from protocol.identity import SIGNATURE_BYTES, Identity, PublicIdentity
from protocol.plan import (
    MAX_NAME_CHARS,
    PlanError,
    SeatInfo,
    bot_vouch,
    check_all_signed,
    check_level,
    check_mesh_address,
    check_name,
    check_patience,
    check_seat_signature,
    check_table,
    sign_as_seat,
    table_settings,
)
from protocol.table.messages import is_digest
from protocol.table.session import TableSession
from protocol.table.values import Received, Send, TableSettings
from protocol.table.verify import Plan, round_start
from protocol.version import RULES_DIGEST

RULE = "P-5.7"
CONTINUE_DOMAIN = b"lanplay/continuation/v1\x00"
OFFER_DOMAIN = b"lanplay/continue-offer/v1\x00"
BACK_DOMAIN = b"lanplay/take-back/v1\x00"
MAX_CARRIED_ROUNDS = 1000
# A returning seat's late messages (its chain of the stopped round, its leave and its secrets): a round's
# own messages of one seat are a few dozen (P-6.6).
MAX_LATE_MESSAGES = 128


def end_digest(prior: str, rounds: Sequence[JSONObject], complete: bool = False) -> str:
    """The record digest the seats of table `prior` sign at its end (P-5.8; `TableSession.summary`)."""
    return sha256_hex(canonical({"table": prior, "rounds": list(rounds), "complete": complete}))


def _left(raw: object, seats: int) -> dict[int, str]:
    if not isinstance(raw, dict) or len(raw) > seats:
        raise PlanError(RULE, "a continuation's left seats are seat numbers with keys")
    out: dict[int, str] = {}
    for seat, key in raw.items():
        readable = isinstance(seat, str) and seat.isascii() and seat.isdigit() and len(seat) <= 3
        if not readable or not 0 <= int(seat) < seats or not isinstance(key, str):
            raise PlanError(RULE, "a continuation's left seats are seat numbers with keys")
        try:
            PublicIdentity.from_hex(key)
        except ProtocolError:
            raise PlanError(RULE, "a continuation's left seat names a key that is no key") from None
        out[int(seat)] = key
    return out


def _owes(raw: object, left: Mapping[int, str]) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > 16:
        raise PlanError(RULE, "the seats that owe secrets are a list of seat numbers")
    seats = [seat for seat in raw if isinstance(seat, int) and not isinstance(seat, bool)]
    if len(seats) != len(raw) or seats != sorted(set(seats)) or not set(seats) <= set(left):
        raise PlanError(RULE, "the seats that owe secrets are seats their person left, each once, in order")
    return tuple(seats)


def late_digest(messages: Sequence[JSONObject]) -> str:
    """What a `TakeBack` signs of the late messages it comes with."""
    return sha256_hex(canonical(list(messages)))


def settle_owed(
    session: TableSession, seat: int, messages: Sequence[JSONObject], now: float, found: list[bytes] | None = None
) -> bool:
    """P-5.5, P-5.7: a seat whose secrets for the stopped round of `session`'s table never came (its laptop
    died, or lost the table) publishes them late, coming back: its chain of that round as its journal holds
    it, a signed leave and its secrets, each fed to the ended table's session as any message of the round
    (judged on the history it names; the audit runs once every seat's secrets are in, and a fault it finds
    exposes its seat there with a proof, as at any audit). The confirmed rounds do not change (the round
    stays void). A late set is the seat's own messages of the round's steps, a leave and its secrets: a stop,
    wait or end signed now would speak of a table that ended without it. `found`: where the proofs this
    finds are added, to be passed on to every seat (P-5.4), each in the form `session` sends it. True if the
    seat has now left that table with its secrets and nothing exposed it."""
    key = session.settings.seats[seat].peer_id
    if not 0 < len(messages) <= MAX_LATE_MESSAGES:
        return False
    for raw in messages:
        if not isinstance(raw, dict) or raw.get("author") != key or raw.get("kind") in ("stop", "wait", "end"):
            return False  # only the seat's own steps: nothing of another seat, nothing about the end
    for raw in messages:
        for output in session.handle(Received(None, canonical(raw), now)):
            if found is not None and isinstance(output, Send) and output.data.startswith(b'{"proof":'):
                found.append(output.data)
    return seat in session.left and seat in session.ledger.secrets and seat not in session.convictions


def _rounds(raw: object) -> tuple[RoundRecord, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_CARRIED_ROUNDS:
        raise PlanError(RULE, "a continuation carries a list of confirmed rounds")
    out: list[RoundRecord] = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"deal", "moves"}:
            raise PlanError(RULE, "a carried round is an object with 'deal' and 'moves'")
        deal, moves = item["deal"], item["moves"]
        if not isinstance(deal, dict) or not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
            raise PlanError(RULE, "a carried round's deal is an object and its moves a list of objects")
        out.append(RoundRecord(deal, tuple(moves)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Continuation:
    """The signed plan of a table that goes on from table `prior` (P-5.7). Played as a `TablePlan` is:
    `seats`, `table_id`, `settings()`, `verify()`, `to_json()`."""

    prior: str  # the table id it goes on from
    digest: str  # the record digest every present seat of `prior` signed (P-5.8)
    game: str
    options: JSONObject
    seats: tuple[SeatInfo, ...]  # the seat order of `prior`, a bot in each seat no longer present
    rounds: tuple[JSONObject, ...]  # the confirmed rounds of `prior`, carried (scores go on from them)
    signatures: tuple[str, ...] = ()
    rules: str = RULES_DIGEST
    patience: int = 120
    # Seats a bot holds whose person left with a signed leave: seat -> that person's key, the one key that
    # may take the seat back (`TakeBack`). Left out of the JSON when empty.
    left: Mapping[int, str] = field(default_factory=dict)
    level: str | None = None  # the table's bot level, as its plan said (`protocol.plan.check_level`)
    # Seats of `left` whose person went away without publishing the stopped round's secrets of table `prior`
    # (P-5.5): their take-back comes with them (`settle_owed`). Left out of the JSON when empty.
    owes: tuple[int, ...] = ()

    def unsigned_json(self) -> JSONObject:
        out: JSONObject = {
            "continues": {"table": self.prior, "digest": self.digest},
            "game": self.game,
            "options": self.options,
            "patience": self.patience,
            "seats": [s.to_json() for s in self.seats],
            "rounds": list(self.rounds),
            "rules": self.rules,
        }
        if self.left:
            out["left"] = {str(seat): key for seat, key in sorted(self.left.items())}
        if self.level is not None:
            out["level"] = self.level
        if self.owes:
            out["owes"] = list(self.owes)
        return out

    def to_json(self) -> JSONObject:
        return {**self.unsigned_json(), "signatures": list(self.signatures)}

    @staticmethod
    def from_json(raw: object) -> Continuation:
        """Parse (shape only: `verify` checks the rest)."""
        if not isinstance(raw, dict):
            raise PlanError(RULE, "a continuation is an object")
        known = {"continues", "game", "options", "patience", "seats", "rounds", "rules", "signatures", "left", "level",
                 "owes"}  # fmt: skip
        if set(raw) - known or "continues" not in raw:
            raise PlanError(RULE, "a continuation has exactly the fields of its kind")
        continues = raw["continues"]
        if not isinstance(continues, dict) or set(continues) != {"table", "digest"}:
            raise PlanError(RULE, "a continuation names the table and the record digest it goes on from")
        prior, digest = continues["table"], continues["digest"]
        try:
            check_table_id(prior, "continues.table")
        except ProtocolError:
            raise PlanError(RULE, "a continuation names the table it goes on from by its id") from None
        if not is_digest(digest):
            raise PlanError(RULE, "a continuation names the record digest it goes on from")
        game, options, rules = raw.get("game"), raw.get("options"), raw.get("rules")
        if not isinstance(game, str) or not isinstance(options, dict) or not isinstance(rules, str):
            raise PlanError(RULE, "a continuation names its game, options and rules")
        seats_raw = raw.get("seats")
        if not isinstance(seats_raw, list) or not 1 <= len(seats_raw) <= 16:
            raise PlanError(RULE, "a continuation's seats are a list")
        seats = tuple(SeatInfo.from_json(s) for s in seats_raw)
        rounds = raw.get("rounds")
        _rounds(rounds)
        assert isinstance(rounds, list)
        signatures = raw.get("signatures", [])
        if not isinstance(signatures, list) or not all(isinstance(s, str) for s in signatures):
            raise PlanError(RULE, "a continuation's signatures are hex strings")
        left = _left(raw.get("left", {}), len(seats))
        return Continuation(
            str(prior), str(digest), game, options, seats, tuple(rounds), tuple(signatures), rules,
            check_patience(raw.get("patience")), left, check_level(raw.get("level")), _owes(raw.get("owes", []), left),
        )  # fmt: skip

    @property
    def table_id(self) -> str:
        return hashlib.sha256(canonical(self.unsigned_json())).hexdigest()[:32]

    def statement(self) -> bytes:
        whole = hashlib.sha256(canonical(self.unsigned_json())).digest()
        return CONTINUE_DOMAIN + self.table_id.encode("ascii") + whole

    def sign(self, identity: Identity) -> str:
        return sign_as_seat(self.seats, identity, self.statement(), "continuation", RULE)

    def check_signature(self, seat: int, signature: object) -> None:
        check_seat_signature(self.seats, seat, signature, self.statement(), "continuation", RULE)

    def with_signatures(self, signatures: Sequence[str]) -> Continuation:
        return Continuation(
            self.prior, self.digest, self.game, self.options, self.seats, self.rounds, tuple(signatures),
            self.rules, self.patience, self.left, self.level, self.owes,
        )  # fmt: skip

    def check(self) -> None:
        """Every field a seat checks before it signs: the fields as a lobby's plan (`check_table`, bots
        vouched for by their laptops for this continuation), one key per seat, and the carried rounds
        the very ones the digest signed, which the engine replays."""
        check_table(self.prior, self.game, self.options, self.seats, self.rules)
        if len({s.public_key for s in self.seats}) != len(self.seats):
            raise PlanError(RULE, "one key sits in two seats of the continuation")
        seated = {s.public_key for s in self.seats}
        for seat, key in self.left.items():
            info = self.seats[seat] if 0 <= seat < len(self.seats) else None
            if info is None or info.runs_on is None or info.runs_on == info.public_key or key in seated:
                raise PlanError(RULE, "a seat its person left is held by a bot another seat's laptop runs")
        _owes(list(self.owes), self.left)
        if end_digest(self.prior, self.rounds) != self.digest:
            raise PlanError(RULE, "the carried rounds are not the ones the record digest signed")
        game = get_game(self.game)
        keys = tuple(PublicIdentity.from_hex(s.public_key) for s in self.seats)
        try:
            plan = Plan(self.table_id, game, game.options_from_json(self.options), keys)
            round_start(plan, _rounds(list(self.rounds)))
        except (RuleError, ProtocolError, ValueError, KeyError, TypeError) as exc:
            raise PlanError(RULE, f"the carried rounds do not replay: {exc}") from None

    def verify(self) -> None:
        """`check`, and every seat signed this very continuation."""
        self.check()
        check_all_signed(self.seats, self.signatures, self.statement(), "continuation", RULE)

    def settings(self) -> TableSettings:
        return table_settings(
            self.table_id, self.game, self.options, self.seats, self.patience, tuple(self.rounds),
            (self.prior, self.digest),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class BotOffer:
    """A bot a laptop would run in an empty seat: its key, where its mesh listens, the laptop's vouch."""

    key: str
    address: str
    port: int
    vouch: str


@dataclass(frozen=True, slots=True)
class Offer:
    """One present seat's answer to "go on?" after table `prior` ended early (P-5.7), signed by it."""

    prior: str
    digest: str
    seat: int
    go: bool
    bots: Mapping[int, BotOffer]  # seat to fill -> the bot this seat's laptop would run there
    sig: str = ""
    # The bots this seat's laptop runs already and goes on running: bot key -> its vouch for the continuation.
    keeps: Mapping[str, str] = field(default_factory=dict)
    # The persons' seats not present at the end here, nobody exposed (a signed leave, or stopped for): seat ->
    # key (a seat every present seat names so may be taken back later, `Continuation.left`).
    left: Mapping[int, str] = field(default_factory=dict)
    # Take-backs this seat holds: seat -> the signed request of the person who left it (`TakeBack`); for a
    # seat that owes secrets, only once its late messages settled them here (`settle_owed`).
    back: Mapping[int, TakeBack] = field(default_factory=dict)
    # Seats of `left` whose secrets for the stopped round never came here (P-5.5).
    owes: tuple[int, ...] = ()

    def body(self) -> JSONObject:
        out: JSONObject = {
            "prior": self.prior,
            "digest": self.digest,
            "seat": self.seat,
            "go": self.go,
            "bots": {
                str(seat): {"key": b.key, "mesh": [b.address, b.port], "vouch": b.vouch}
                for seat, b in sorted(self.bots.items())
            },
            "keeps": dict(sorted(self.keeps.items())),
        }
        if self.left:
            out["left"] = {str(seat): key for seat, key in sorted(self.left.items())}
        if self.back:
            out["back"] = {str(seat): b.to_json() for seat, b in sorted(self.back.items())}
        if self.owes:
            out["owes"] = list(self.owes)
        return out

    def to_json(self) -> JSONObject:
        return {**self.body(), "sig": self.sig}

    def signed(self, identity: Identity) -> Offer:
        sig = identity.sign(OFFER_DOMAIN + canonical(self.body())).hex()
        return Offer(
            self.prior, self.digest, self.seat, self.go, self.bots, sig, self.keeps, self.left, self.back, self.owes
        )

    @staticmethod
    def from_json(raw: object, keys: Sequence[str]) -> Offer:
        """Parse and check the signature against seat `seat`'s key in `keys` (the prior plan's)."""
        fields = {"prior", "digest", "seat", "go", "bots", "sig", "keeps"}
        if not isinstance(raw, dict) or not fields <= set(raw) <= fields | {"left", "back", "owes"}:
            raise PlanError(RULE, "an offer to go on has exactly its fields")
        keeps = raw["keeps"]
        if not isinstance(keeps, dict) or not all(isinstance(v, str) for v in keeps.values()):
            raise PlanError(RULE, "an offer's kept bots are keys with their vouches")
        seat, go, bots_raw, sig = raw["seat"], raw["go"], raw["bots"], raw["sig"]
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(keys):
            raise PlanError(RULE, "an offer to go on names its seat")
        if not isinstance(go, bool) or not isinstance(bots_raw, dict) or not isinstance(sig, str):
            raise PlanError(RULE, "an offer to go on says go or not, its bots and its signature")
        if not isinstance(raw["prior"], str) or not is_digest(raw["digest"]):
            raise PlanError(RULE, "an offer to go on names the table and the digest it goes on from")
        bots: dict[int, BotOffer] = {}
        for key, value in bots_raw.items():
            readable = key.isascii() and key.isdigit() and len(key) <= 3
            if not readable or not 0 <= int(key) < len(keys) or not isinstance(value, dict):
                raise PlanError(RULE, "an offered bot names the seat it fills")
            mesh = value.get("mesh")
            bot_key, vouch = value.get("key"), value.get("vouch")
            if (
                not isinstance(bot_key, str)
                or not isinstance(vouch, str)
                or not isinstance(mesh, list)
                or len(mesh) != 2
                or not isinstance(mesh[0], str)
                or not isinstance(mesh[1], int)
                or isinstance(mesh[1], bool)
                or not 0 < mesh[1] < 65536
            ):
                raise PlanError(RULE, "an offered bot has a key, a mesh address and its laptop's vouch")
            check_mesh_address(mesh[0])
            if bot_key in keys:  # a bot is a new key: never a seat of the table, an exposed one above all
                raise PlanError(RULE, "an offered bot has a key of its own, no seat's of the table")
            bots[int(key)] = BotOffer(bot_key, mesh[0], mesh[1], vouch)
        left = _left(raw.get("left", {}), len(keys))
        back_raw = raw.get("back", {})
        if not isinstance(back_raw, dict) or len(back_raw) > len(keys):
            raise PlanError(RULE, "an offer's take-backs are seat numbers with requests")
        back: dict[int, TakeBack] = {}
        for key, value in back_raw.items():
            request = TakeBack.from_json(value)
            if key != str(request.seat):
                raise PlanError(RULE, "an offer's take-back is filed under the seat it asks for")
            back[request.seat] = request
        owes = _owes(raw.get("owes", []), left)
        offer = Offer(str(raw["prior"]), str(raw["digest"]), seat, go, bots, sig, dict(keeps), left, back, owes)
        try:
            signed = OFFER_DOMAIN + canonical(offer.body())
            PublicIdentity.from_hex(keys[seat]).verify(h2b(sig, SIGNATURE_BYTES, "sig"), signed)
        except ProtocolError:
            raise PlanError(RULE, f"an offer to go on that seat {seat} did not sign") from None
        return offer


def make_offer(
    prior: str,
    digest: str,
    seat: int,
    go: bool,
    laptop: Identity,
    bots: Mapping[int, tuple[Identity, str, int]],
    keeps: Sequence[str] = (),
    left: Mapping[int, str] | None = None,
    back: Mapping[int, TakeBack] | None = None,
    owes: Sequence[int] = (),
) -> Offer:
    """This seat's signed offer: `bots` maps each seat this laptop would fill to (the bot's identity,
    the address and port its mesh will listen on); `keeps`, the keys of the bots it runs already at the
    table, which go on with it. Each is vouched for by `laptop` for this continuation. `left`: the seats
    this seat saw leave or stopped for their secrets, not exposed; `owes`: those of them whose secrets of the
    stopped round never came; `back`: the take-backs it holds."""
    offered = {
        seat_: BotOffer(bot.public.hex(), address, port, bot_vouch(laptop, prior, bot.public.hex()))
        for seat_, (bot, address, port) in bots.items()
    }
    kept = {key: bot_vouch(laptop, prior, key) for key in keeps}
    offer = Offer(prior, digest, seat, go, offered, "", kept, dict(left or {}), dict(back or {}), tuple(sorted(owes)))
    return offer.signed(laptop)


def decide(
    prior: str,
    digest: str,
    seats: Sequence[SeatInfo],
    present: Sequence[int],
    rounds: Sequence[JSONObject],
    game: str,
    options: JSONObject,
    patience: int,
    offers: Mapping[int, Offer],
    rules: str = RULES_DIGEST,
    left: Mapping[int, str] | None = None,
    level: str | None = None,
    owes: Sequence[int] = (),
) -> Continuation | None:
    """The same answer at every seat once every present seat's offer is in: None (the game ends here)
    if one chose to end or some seat to fill has no bot offered; else the unsigned continuation, each
    empty seat filled by the bot of the lowest present seat that offered one (its name says whose).
    `left`, `owes`: the seats a bot holds at table `prior` whose person may take them back, and those of
    them that owe secrets (its plan's `Continuation.left` and `.owes`). A person's seat not present here is
    added when every present seat's offer names it with its key (its person left, or went away and was
    stopped for; nothing exposed it), and owes when any offer says its secrets never came. An empty seat
    goes back to its person when a take-back holds there (`TakeBack.holds`: the one key that left it,
    signed on this very table): the first that holds, in seat order; for a seat that owes secrets, only the
    one every present seat's offer holds (each seat settled the late secrets it came with, `settle_owed`).
    Every other seat's person stays recorded in the continuation's `left` (and `owes`)."""
    if any(offers.get(s) is None for s in present):
        raise PlanError(RULE, "not every present seat has answered")
    if not all(offers[s].go and offers[s].prior == prior and offers[s].digest == digest for s in present):
        return None
    keys = [info.public_key for info in seats]
    may_return = dict(left or {})
    owing = {seat for seat in owes if seat in may_return}
    for index, info in enumerate(seats):
        named = {offers[s].left.get(index) for s in present}
        if index not in present and info.runs_on in (None, info.public_key) and named == {info.public_key}:
            may_return[index] = info.public_key  # every present seat saw its person go (P-5.7)
            if any(index in offers[s].owes for s in present):
                owing.add(index)
    new_seats: list[SeatInfo] = []
    new_left: dict[int, str] = {}
    for index, info in enumerate(seats):
        if index not in present:
            wanted = [offers[s].back.get(index) for s in sorted(present)]
            if index in owing:  # held by every present seat, the very same request, which names its late secrets
                first = wanted[0] if wanted else None
                unanimous = first is not None and bool(first.owed) and all(w == first for w in wanted)
                back = first if unanimous and first is not None and first.holds(prior, may_return) else None
            else:
                back = next((b for b in wanted if b is not None and b.holds(prior, may_return)), None)
            if back is not None:  # its person takes the seat back (P-5.7)
                new_seats.append(back.info())
                continue
        if index in may_return:
            new_left[index] = may_return[index]
        if index in present:
            if info.runs_on is not None and info.runs_on != info.public_key:
                # A bot on a seat's laptop goes on only with that laptop's word for this continuation.
                host = keys.index(info.runs_on) if info.runs_on in keys else None
                vouch = offers[host].keeps.get(info.public_key) if host in offers and host is not None else None
                if vouch is None:
                    return None
                info = SeatInfo(info.name, info.public_key, info.address, info.port, info.runs_on, vouch)
            new_seats.append(info)
            continue
        hosts = [s for s in sorted(present) if index in offers[s].bots]
        if not hosts:
            return None
        host = hosts[0]
        bot = offers[host].bots[index]
        name = f"{seats[host].name[: MAX_NAME_CHARS - 9]}'s bot {index + 1}"
        new_seats.append(SeatInfo(name, bot.key, bot.address, bot.port, seats[host].public_key, bot.vouch))
    new_left = {seat: key for seat, key in new_left.items() if new_seats[seat].runs_on not in (None, key)}
    new_owes = tuple(sorted(seat for seat in owing if seat in new_left))
    return Continuation(
        prior, digest, game, options, tuple(new_seats), tuple(rounds), (), rules, patience, new_left, level, new_owes,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class TakeBack:
    """A person who left asks for the seat back (P-5.7): signed by the key that left it, naming the table
    the seats go on from (the one playing now: a take-back signed on another is stale) and where this
    laptop's mesh will listen at the next table; for a seat that owes the secrets of a stopped round
    (`Continuation.owes`), the digest of the late messages that publish them (`settle_owed`)."""

    table: str
    seat: int
    name: str
    key: str
    address: str
    port: int
    sig: str = ""
    # For a seat that owes secrets: the digest of the late messages it comes with (`late_digest`).
    owed: str = ""

    def body(self) -> JSONObject:
        out: JSONObject = {"table": self.table, "seat": self.seat, "name": self.name, "key": self.key,
                           "mesh": [self.address, self.port]}  # fmt: skip
        if self.owed:
            out["owed"] = self.owed
        return out

    def to_json(self) -> JSONObject:
        return {**self.body(), "sig": self.sig}

    def info(self) -> SeatInfo:
        return SeatInfo(self.name, self.key, self.address, self.port)

    def signed(self, identity: Identity) -> TakeBack:
        sig = identity.sign(BACK_DOMAIN + canonical(self.body())).hex()
        return TakeBack(self.table, self.seat, self.name, self.key, self.address, self.port, sig, self.owed)

    def holds(self, table: str, left: Mapping[int, str]) -> bool:
        """It is signed on table `table` (the one the seats go on from), by the key that left its seat."""
        return self.table == table and left.get(self.seat) == self.key

    @staticmethod
    def from_json(raw: object) -> TakeBack:
        """Parse, and check it is signed by the key it names (`holds` checks that key may come back)."""
        fields = {"table", "seat", "name", "key", "mesh", "sig"}
        if not isinstance(raw, dict) or not fields <= set(raw) <= fields | {"owed"}:
            raise PlanError(RULE, "a take-back has exactly its fields")
        owed = raw.get("owed", "")
        if owed != "" and not is_digest(owed):
            raise PlanError(RULE, "a take-back names its late messages by their digest")
        table, seat, name, key, mesh, sig = (raw[k] for k in ("table", "seat", "name", "key", "mesh", "sig"))
        try:
            check_table_id(table, "table")
        except ProtocolError:
            raise PlanError(RULE, "a take-back names the table it goes on from by its id") from None
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < 16:
            raise PlanError(RULE, "a take-back names its seat")
        if (
            not isinstance(mesh, list) or len(mesh) != 2 or not isinstance(mesh[0], str)
            or not isinstance(mesh[1], int) or isinstance(mesh[1], bool) or not 0 < mesh[1] < 65536
        ):  # fmt: skip
            raise PlanError(RULE, "a take-back names where its mesh listens")
        if not isinstance(name, str) or not isinstance(key, str) or not isinstance(sig, str):
            raise PlanError(RULE, "a take-back names its person and key, and is signed")
        check_name(name)
        check_mesh_address(mesh[0])
        back = TakeBack(str(table), seat, name, key, mesh[0], mesh[1], sig, str(owed))
        try:
            PublicIdentity.from_hex(key).verify(h2b(sig, SIGNATURE_BYTES, "sig"), BACK_DOMAIN + canonical(back.body()))
        except ProtocolError:
            raise PlanError(RULE, "a take-back that the key it names did not sign") from None
        return back


def make_take_back(
    identity: Identity, table: str, seat: int, name: str, address: str, port: int, late: Sequence[JSONObject] = ()
) -> TakeBack:
    """This laptop's signed request to take seat `seat` back at the table that goes on from `table`; `late`:
    the messages that publish the secrets it owes (its chain of the stopped round, a leave, its secrets)."""
    owed = late_digest(late) if late else ""
    return TakeBack(table, seat, name, identity.public.hex(), address, port, "", owed).signed(identity)


def check_back(new: Continuation, prior: Continuation, back: TakeBack) -> None:
    """What the returning laptop checks before it signs `new`, the continuation that gives it its seat back:
    `prior` (the plan of the table it goes on from, which this laptop did not play) is signed by every seat
    of it and left the seat to this key; `new` goes on from it with the same game, options, rules and
    patience, checks as any continuation (`check`), puts this request's seat, name and mesh in that seat, keeps
    every other seat's key, and carries at least the rounds `prior` carried."""
    prior.verify()
    new.check()
    if new.prior != prior.table_id:
        raise PlanError(RULE, "the continuation does not go on from the table this seat was taken back at")
    if not back.holds(prior.table_id, prior.left):
        raise PlanError(RULE, "the seat asked for is not the one this key left")
    if back.seat in prior.owes and not back.owed:
        raise PlanError(RULE, "the seat owes the secrets of a stopped round, which the take-back does not publish")
    same = (new.game, new.options, new.rules, new.patience) == (prior.game, prior.options, prior.rules, prior.patience)
    if not same or len(new.seats) != len(prior.seats):
        raise PlanError(RULE, "the continuation changes the game, its options or its seats")
    if new.seats[back.seat] != back.info():
        raise PlanError(RULE, "the continuation does not give the seat back as asked")
    # Every other seat is the one `prior`'s seats signed (a desk may not put its own keys, or a bot of its
    # laptop, in another seat's place), and the scores go on from what `prior` carried: the seats that signed
    # `prior` are the ones the returning laptop goes back to.
    changed = [seat for seat, info in enumerate(new.seats)
               if seat != back.seat and info.public_key != prior.seats[seat].public_key]  # fmt: skip
    if changed:
        raise PlanError(RULE, f"the continuation puts other keys in seats {changed} than its table had")
    if new.rounds[: len(prior.rounds)] != prior.rounds:
        raise PlanError(RULE, "the continuation drops rounds its table carried")
