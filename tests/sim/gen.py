"""Random tables from one seed: game, options, seats, adversaries and faults."""

from __future__ import annotations

import json
import random
from typing import Any

from .world import Spec, backend_named

ATTACKS = (
    "fork", "fork", "fork", "rewrite", "withhold", "sulk", "replay", "garbage", "nogossip", "falsestop",
    "delay", "leak", "fork+withhold", "fork+nogossip", "rewrite+replay",
)  # fmt: skip


def random_faults(rng: random.Random, seats: int) -> tuple[str, ...]:
    faults: list[str] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(("loss", "dup", "jitter", "cut", "part", "crash", "crash", "suspend", "leave"))
        at = round(rng.uniform(0, 20), 1)
        span = round(rng.uniform(0.5, 15), 1)
        seat = rng.randrange(seats)
        if kind == "loss":
            faults.append(f"loss:{rng.choice((0.02, 0.05, 0.2))}")
        elif kind == "dup":
            faults.append(f"dup:{rng.choice((0.05, 0.2))}")
        elif kind == "jitter":
            faults.append(f"jitter:{rng.choice((0.2, 1.0, 3.0))}")
        elif kind == "cut":
            other = rng.choice([s for s in range(seats) if s != seat])
            faults.append(f"cut:{seat}.{other}@{at}+{span}")
        elif kind == "part":
            group = sorted(rng.sample(range(seats), rng.randint(1, max(1, seats - 1))))
            faults.append(f"part:{'.'.join(map(str, group))}@{at}+{span}")
        elif kind == "leave":
            faults.append(f"leave:{seat}@{at}")
        else:
            faults.append(f"{kind}:{seat}@{at}+{span}")
    return tuple(faults)


def random_spec(seed: int, backend: str = "real", adversarial: bool | None = None) -> Spec:
    """The table `seed` stands for: half of them (unless `adversarial` says) with 1 to n-1
    adversaries and faults composed; small tables mostly (a table costs about seats squared)."""
    rng = random.Random(f"sim-table/{seed}")
    games: dict[str, tuple[int, int, tuple[dict[str, Any], ...]]] = backend_named(backend).GAMES
    game = rng.choice(sorted(games))
    low, high, options = games[game]
    seats = min(high, rng.choice((low, low, low + 1, low + 1, low + 1, low + 2, low + 3)))
    opts = json.dumps(rng.choice(options), sort_keys=True, separators=(",", ":"))
    bad = rng.random() < 0.5 if adversarial is None else adversarial
    adversaries: tuple[tuple[int, str], ...] = ()
    faults: tuple[str, ...] = ()
    if bad:
        count = 1 if seats == 2 or rng.random() < 0.7 else rng.randint(2, seats - 1)
        chosen = sorted(rng.sample(range(seats), count))
        adversaries = tuple((s, rng.choice(ATTACKS)) for s in chosen)
        if rng.random() < 0.6:
            faults = random_faults(rng, seats)
    elif rng.random() < 0.3:
        faults = tuple(f for f in random_faults(rng, seats) if not f.startswith("leave"))
    return Spec(seed, game, seats, opts, 1, adversaries, faults, backend=backend)
