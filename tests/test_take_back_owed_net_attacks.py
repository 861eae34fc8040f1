"""A killed laptop that comes back with late secrets the rules refuse (P-5.3, P-5.5, P-5.7), over the
network: three laptops in one process on 127.0.0.1 (as tests/test_take_back_net.py). Bob's laptop dies in
round 2; the table goes on with a bot in his seat, owing; his laptop comes back and sends, beside its
take-back, its chain of the stopped round with secrets it signed in a shape no secrets have (a modified
client). The desk's seat settles them: their refusal exposes Bob at the ended table with a proof that
anyone checks again from the record on disk; the seat is not given back (he is told why, one line); the
other two play on to the end with the bot, the same record at both, nobody else exposed."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_take_back_net import Laptop, guest, host, killed_in_round_two

import lanplay.table.takeback as takeback
from lanplay.net.lobby import LobbyHost
from lanplay.table.runner import Outcome
from lanplay.table.takeback import BackFailed, back_to_table, find_desk
from protocol.encoding import JSONObject
from protocol.identity import Identity
from protocol.signed import sign_message
from protocol.table.verify import check_record

LOOPBACK = "127.0.0.1"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANPLAY_HOME", str(tmp_path / "home"))


def _lying_publish(identity: Identity) -> Any:
    real = takeback.publish_owed

    def publish(plan: Any, who: Identity, data_dir: Path) -> list[JSONObject]:
        late = real(plan, who, data_dir)
        secrets = copy.deepcopy(late[-1])
        assert secrets["kind"] == "secrets"
        secrets["body"]["shown"] = "a field no secrets have"  # type: ignore[index]
        forged = sign_message(identity, str(secrets["table"]), int(str(secrets["round"])), int(str(secrets["seq"])),
                              str(secrets["prev"]), "secrets", secrets["body"])  # type: ignore[arg-type]  # fmt: skip
        return [*late[:-1], forged.to_json()]

    return publish


def test_late_secrets_the_rules_refuse_expose_only_their_seat_and_the_table_plays_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann, bob, cor = (Laptop(tmp_path, name) for name in ("Ann", "Bob", "Cor"))
    monkeypatch.setattr(takeback, "publish_owed", _lying_publish(bob.identity))
    lobby: list[LobbyHost] = []
    refused: list[str] = []

    async def bob_is_killed_and_comes_back_lying() -> None:
        again = await killed_in_round_two(tmp_path, bob, lobby, 2)
        advert = await find_desk(LOOPBACK, again.identity, 60)
        try:
            await back_to_table(
                advert, identity=again.identity, data_dir=again.data_dir, name="Bob", interface=LOOPBACK,
                player=again.player, on_runner=again.on_runner,
            )  # fmt: skip
        except BackFailed as exc:
            refused.append(str(exc))

    async def scenario() -> list[Outcome]:
        ends = await asyncio.wait_for(
            asyncio.gather(host(ann, lobby, 2), guest(cor, lobby, 2), bob_is_killed_and_comes_back_lying()), 240
        )
        return [ends[0], ends[1]]

    outcomes = asyncio.run(scenario())
    assert len(refused) == 1 and "not given back" in refused[0] and "\n" not in refused[0]
    assert all(o.complete and o.finished and not o.exposed for o in outcomes), outcomes  # nobody else exposed
    last = [laptop.runners[-1] for laptop in (ann, cor)]
    assert len({r.session.record_digest() for r in last if r.session is not None}) == 1
    assert all(bob.identity.public.hex() not in {s.public_key for s in r.plan.seats} for r in last)
    # The ended table's record, at every laptop that kept one: nobody exposed but Bob, each by a proof that
    # holds again offline (`lanplay verify`); at the laptop whose seat settled his late secrets, Bob exposed.
    t1 = ann.runners[0].settings.table
    bob_seat = [s.public_key for s in ann.runners[0].plan.seats].index(bob.identity.public.hex())
    exposed: list[int] = []
    for laptop in (ann, cor):
        for path in sorted((laptop.data_dir / "records").glob(f"*{t1[:8]}*.json")):
            record = json.loads(path.read_text())
            _, checks = check_record(record)
            assert all(c.conviction is not None and c.conviction.seat == bob_seat for c in checks), path
            exposed.extend(e["seat"] for e in record["exposed"])
    assert exposed and set(exposed) == {bob_seat}
