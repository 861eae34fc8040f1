"""A whole-peer deterministic simulator of lanplay tables (docs/TESTING.md): one seed reproduces a
whole run of several real sessions over a modelled mesh, with faults and Byzantine seats composed,
checked for the invariants P-6.1-6.4 and P-6.6 at every honest seat.

    python -m tests.sim --seed 123 --game sixes --seats 4 --adversary fork:move@2 --fault crash:1@5+3
"""

from . import proofs as _proofs  # noqa: F401  (registers the attacks with proofs)
from . import scenarios as _scenarios  # noqa: F401  (registers the named attacks)
from . import shapes as _shapes  # noqa: F401  (registers the attack of odd shapes)
from . import stops as _stops  # noqa: F401  (registers the attacks on stops and notes)
from .adversary import Attack, AttackContext, Outgoing, make_attack
from .gen import random_spec
from .shrink import shrink
from .world import Result, Spec, run

__all__ = ["Attack", "AttackContext", "Outgoing", "Result", "Spec", "make_attack", "random_spec", "run", "shrink"]
