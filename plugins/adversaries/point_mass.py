"""The ``"point-mass"`` adversary: D_t is the point mass on a given cost vector, so every draw
is the same sequence — a fully adversarial (deterministic) input, paper §2. The costs come from
an array or from a CSV / NPY file of the user's own."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import check_sizes
from replify.components.userdata import load_cost_matrix


class PointMass:
    """Every draw returns (a copy of) ``costs``, shape ``(horizon, n)``."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, costs: Any = None, path: Any = None
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        self.costs = load_cost_matrix(costs, path, n=n, horizon=horizon)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.costs.copy()

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        return self.costs[start:stop].copy()

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The exact sums of the fixed costs over (starts[k], stops[k]]."""
        return np.add.reduceat(self.costs[: int(stops[-1])], np.asarray(starts, dtype=np.intp), axis=0)


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "point-mass",
            PointMass,
            test_params=lambda n, horizon: {"costs": np.random.default_rng(0).random((horizon, n))},
            description="a fixed cost sequence, the same at every draw; block sums exact",
            param_docs={"costs": "the (horizon, n) cost array", "path": "or a .csv / .npy file holding it"},
        )
    )
