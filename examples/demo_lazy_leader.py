"""FLL is not replicable (paper §3.1, example:FLL-not-replicable); FLLB is.

Run:  python examples/demo_lazy_leader.py [--quick]

Day 1 gives the worse action a bonus; after it, iid costs favour the other. Follow the (lazy or
perturbed) leader starts on the bonus action and switches when the cumulative costs overtake the
bonus — at a step that depends on the draw, so two runs with the same internal randomness but
independent costs S and S' switch at different steps. FLLB updates only at block boundaries and
rounds to a random grid: both runs land on the same grid point, hence the same actions.
"""

import sys

import numpy as np

import replify
from replify.components.actions import Simplex
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence

QUICK = "--quick" in sys.argv
T, rho = (2_000 if QUICK else 10_000), 0.1
B = T // 4
settings = {
    "ftpl": dict(actions=Simplex(2), eps=1.0),  # noise of width 1: the bonus decides the first leader
    "fll": dict(eps=1.0),                       # a grid of spacing 1
    "fllb": dict(rho=rho, block_size=B, eps=replify.certified_eps("fllb", horizon=T, n=2, rho=rho, block_size=B)),
}
trap = replify.make_adversary("lazy-leader-trap", n=2, horizon=T, seed=0)
root = seed_sequence(0)
for name, kw in settings.items():
    # One pair by hand: the same learner seed (shared R), two independent draws S and S'.
    runs = [replify.make(name, n=2, horizon=T, seed=child(root, INTERNAL, 0), **kw)
            .run(trap.sample(np.random.default_rng(child(root, DATA, 0, side)))) for side in (0, 1)]
    switches = [int(np.argmax(r != r[0])) + 1 if (r != r[0]).any() else None for r in runs]
    report = replify.evaluate(name, "lazy-leader-trap", n=2, horizon=T, pairs=60 if QUICK else 200, seed=0, **kw)
    print(f"{name:5s} switches on S / S': {switches[0]} / {switches[1]}   rho_hat {report.rho_hat:.2f} "
          f"{tuple(round(x, 3) for x in report.rho_ci)}")
