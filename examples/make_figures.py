"""Regenerate the README's figures (docs/*.png) without a notebook.

Run:  python examples/make_figures.py      (needs the plot extra: pip install -e '.[plot]')
"""

import warnings
from pathlib import Path

import numpy as np

import replify
from replify.experiments.lower_bounds import DEMOS
from replify.plots import plot_frontier, plot_sweep

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOCS.mkdir(exist_ok=True)

for name, demo in DEMOS.items():  # docs/demo-coin.png, -phases, -lazy-leader, -bandit-coin (about 8 min)
    demo(seed=0).plot(DOCS / f"demo-{name}.png")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", replify.errors.BlockSizeWarning)
    result = replify.sweep(
        learners=["ftplb-star", "fllb"], adversaries=["iid-bernoulli"], horizons=[10**4, 10**5, 10**6, 10**7], ns=[10],
        rhos=[0.1], block_multipliers=[0.03, 0.1, 0.3], pairs=100, seed=0,
        adversary_params={"iid-bernoulli": {"means": list(np.linspace(0.3, 0.7, 10))}},
    )
plot_sweep(result, path=DOCS / "sweep.png")

# docs/frontier.png: the calibration of FTPLB* at n = 10, T = 10^5, rho = 0.1 and its frontier
# (the same as `replify calibrate ftplb-star -n 10 -T 100000 --rho 0.1 --plot docs/frontier.png`)
plot_frontier(replify.calibrate("ftplb-star", n=10, horizon=10**5, rho=0.1, seed=0).frontier(seed=0),
              path=DOCS / "frontier.png")
print("wrote", sorted(p.name for p in DOCS.glob("*.png")))
