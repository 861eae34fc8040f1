"""The simulator itself (tests/sim): one seed is one run, links are FIFO, a crash replays the
journal, attacks reach the wire through the public hooks, a failure is found, shrunk and replayable.
Run against the simulator's own small session (tests/sim/fake.py), so a fault here is the
simulator's, not the protocol's."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from sim import Attack, AttackContext, Outgoing, Spec, run, shrink
from sim.__main__ import main
from sim.fake import Exposed, FakeBackend, TableSession
from sim.world import World, parse_fault


def fake(seed: int = 1, seats: int = 3, **kw: Any) -> Spec:
    return Spec(seed, "fake", seats, backend="fake", **kw)


def test_one_seed_is_one_run() -> None:
    spec = fake(7, 4, adversaries=((2, "fork"),), faults=("loss:0.2", "jitter:1.0", "crash:0@2+3"))
    a, b = run(spec), run(spec)
    assert (a.firings, a.time, a.kept_bytes, a.exposed) == (b.firings, b.time, b.kept_bytes, b.exposed)
    c = run(dataclasses.replace(spec, seed=8))
    assert (a.firings, a.time) != (c.firings, c.time)


def test_an_honest_table_under_faults_finishes_and_passes_every_check() -> None:
    for seed in range(10):
        result = run(fake(seed, 4, faults=("loss:0.2", "dup:0.2", "part:0.1@1+5", "suspend:2@2+4")))
        assert result.ok, result.summary()
        assert all(result.finished.values())


def test_a_link_delivers_in_the_order_sent_whatever_the_latency_and_loss() -> None:
    world = World(fake(3, 3, faults=("loss:0.3", "jitter:2.0")))
    got: list[tuple[int, bytes]] = []
    for peer in world.peers:
        peer.receive = lambda sender, data, got=got: got.append((sender, data))  # type: ignore[method-assign]
    for i in range(50):
        world.send(0, 1, b"a%d" % i)
        world.send(2, 1, b"b%d" % i)
        world.now += 0.01
    world.run()
    got = [(s, d) for s, d in got if d[:1] in (b"a", b"b")]
    assert [d for s, d in got if s == 0] == [b"a%d" % i for i in range(50)]
    assert [d for s, d in got if s == 2] == [b"b%d" % i for i in range(50)]
    assert [s for s, _ in got] != sorted(s for s, _ in got)  # the two links interleave


def test_a_crash_restarts_from_the_journal_and_sends_the_same_signed_messages() -> None:
    result = run(fake(5, 3, faults=("crash:1@1.5+4",)))
    assert result.ok, result.summary()
    assert result.finished[1]


def test_a_fork_through_the_hooks_reaches_two_seats_and_is_exposed_by_gossip() -> None:
    result = run(fake(2, 4, adversaries=((3, "fork:move:0"),)))
    assert result.ok, result.summary()
    assert all(exposed == {3} for exposed in result.exposed.values())
    assert any("valid version to (0,)" in f for f in result.firings)


def test_a_fork_with_the_gossip_withheld_leaves_each_recipient_a_well_linked_chain() -> None:
    class Quiet(Attack):  # a new attack in a few lines: forks its second message to seat 0 only
        def send(self, ctx: AttackContext, out: Outgoing) -> None:
            if out.own and out.msg.seq == 1 and ctx.fire("fork seq 1 to seat 0"):
                ctx.deliver(out, ctx.mutate(out.msg), to=[0])
                return ctx.deliver(out, to=[s for s in out.recipients if s != 0])
            ctx.deliver(out)

    import sim.adversary as adv

    adv.SCENARIOS["quiet"] = lambda a: Quiet()
    try:
        result = run(fake(4, 3, adversaries=((2, "quiet"),)))
    finally:
        del adv.SCENARIOS["quiet"]
    assert result.firings and result.ok, result.summary()
    assert result.exposed == {0: {2}, 1: {2}}  # seq 2 onwards links to the version each was sent


class FramingSession(TableSession):
    """A broken session: it exposes the seat before it in turn order on its third input."""

    def handle(self, event: object) -> tuple[object, ...]:
        out = super().handle(event)
        self.inputs = getattr(self, "inputs", 0) + 1
        if self.inputs == 3 and self.me == 1:
            self.exposed |= {0}
            return (*out, Exposed(0, "X", "framed", {}))
        return out


class FramingBackend(FakeBackend):
    def session(self, settings: Any, identity: Any, seed: bytes) -> Any:
        return FramingSession(settings, identity, seed)


def test_an_honest_seat_exposed_or_a_proof_that_does_not_verify_is_a_failure() -> None:
    result = World(fake(1, 3), FramingBackend()).run()
    assert "P-6.1 honest seat 0 exposed at seat 1" in result.failures
    assert any(f.startswith("P-5.4") for f in result.failures)
    assert any(f.startswith("P-6.2") for f in result.failures)


class RaisingSession(TableSession):
    def handle(self, event: object) -> tuple[object, ...]:
        if type(event).__name__ == "Received" and b'"n":2' in event.data:  # type: ignore[attr-defined]
            raise ValueError("boom")
        return super().handle(event)


class RaisingBackend(FakeBackend):
    def session(self, settings: Any, identity: Any, seed: bytes) -> Any:
        return RaisingSession(settings, identity, seed)


def test_an_exception_out_of_handle_is_a_failure_and_the_run_goes_on() -> None:
    result = World(fake(1, 3), RaisingBackend()).run()
    assert any(f.startswith("P-6.3 Received raised out of handle") for f in result.failures)


class FragileSession(TableSession):
    """A broken session: a move of n == 3 (no honest seat signs one) raises out of `handle`."""

    def handle(self, event: object) -> tuple[object, ...]:
        if type(event).__name__ == "Received" and b'"n":3' in event.data:  # type: ignore[attr-defined]
            raise ValueError("n out of range")
        return super().handle(event)


class FragileBackend(FakeBackend):
    def session(self, settings: Any, identity: Any, seed: bytes) -> Any:
        return FragileSession(settings, identity, seed)


def fragile(spec: Spec) -> Any:
    return World(spec, FragileBackend()).run()


def test_a_failure_shrinks_to_one_firing_and_no_fault_and_still_fails() -> None:
    spec = fake(26, 4, adversaries=((1, "rewrite:move"),), faults=("loss:0.2", "jitter:1.0", "cut:2.3@1+2"))
    result = fragile(spec)
    assert "P-6.3" in result.kinds() and len(result.firings) > 1
    small = shrink(result, fragile, budget=40)
    assert small.spec.faults == () and small.spec.keep is not None and len(small.spec.keep) == 1
    assert "P-6.3" in small.kinds()
    assert fragile(small.spec).failures == small.failures  # the shrunk spec replays


def test_the_printed_command_replays_the_table(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    import sim.world

    monkeypatch.setattr(sim.world, "backend_named", lambda name: FragileBackend())
    spec = fake(26, 4, adversaries=((1, "rewrite:move"),), faults=("loss:0.2",))
    assert main(spec.command().split()[3:]) == 1
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == spec.command()
    assert "FAIL P-6.3" in printed
    assert main(fake(11, 4).command().split()[3:]) == 0


@pytest.mark.parametrize("text", ["loss", "crash:x@1+2", "flood:0.1", "cut:1@"])
def test_a_bad_fault_is_one_clear_line(text: str) -> None:
    with pytest.raises(ValueError, match="fault"):
        parse_fault(text)
