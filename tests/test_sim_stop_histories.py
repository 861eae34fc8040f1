"""A stop is judged on the history it names (P-5.5), and that history is the one its author held
(P-5.2): a stop may not name a history older than the one its author's own earlier messages named,
so that a seat is never counted in the record as waited for on a step it had made long before. The
attack is `stalestop` (tests/sim/stops.py): during play, a stop naming an honest seat for its seed
commitment, on a history holding no other seat's message."""

from __future__ import annotations

from sim import Spec
from sim.world import World


def test_a_stop_on_a_history_older_than_its_authors_own_counts_nothing_against_an_honest_seat() -> None:
    world = World(Spec(11, "sixes", 3, '{"chips":1}', adversaries=((2, "stalestop"),)))
    result = world.run()
    assert result.firings, "the attack never fired"
    assert result.ok, result.summary()
    for seat in result.spec.honest:
        stops = world.peers[seat].session.record_json()["stops"]
        against = [s for s in stops if s["by"] == 2 and s["seat"] in result.spec.honest]
        assert not against, f"seat {seat}'s record counts {against} against an honest seat"
