"""The ``"mixture"`` adversary: some coordinates are stochastic, the others a fixed adversarial
sequence — the paper's point that its model covers iid inputs, adversarial inputs "and their
mixtures, which can be modeled by setting certain distributions as point-masses" (abstract)."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_means, check_sizes
from replify.components.userdata import load_cost_matrix
from replify.base.checks import as_int_array
from replify.errors import InvalidArgumentError


class Mixture(ChunkedSequence):
    """Coordinates in ``stochastic`` cost 1 with probability ``means`` (iid over time); the others
    follow the fixed ``costs`` (an array or ``path``, shape (T, n); its stochastic columns are
    ignored)."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, stochastic: Any, means: Any = 0.5,
        costs: Any = None, path: Any = None,
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        idx = np.unique(as_int_array("stochastic", stochastic).reshape(-1))  # 0.5 is no coordinate, not coordinate 0
        if idx.size == 0 or idx.min() < 0 or idx.max() >= n:
            raise InvalidArgumentError(f"stochastic must list coordinates in [0, {n}); got {np.asarray(stochastic).tolist()}")
        self.stochastic = idx
        self.means = check_means("means", means, n)[idx]
        self.fixed = load_cost_matrix(costs, path, n=n, horizon=horizon)

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        out = np.array(self.fixed[start:stop])
        out[:, self.stochastic] = rng.random((stop - start, self.stochastic.size)) < self.means
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Exact: Binomial sums for the stochastic coordinates, the fixed costs' own sums for the rest."""
        out = np.add.reduceat(self.fixed[: int(stops[-1])], np.asarray(starts, dtype=np.intp), axis=0)
        lengths = (np.asarray(stops) - np.asarray(starts))[:, None]
        out[:, self.stochastic] = rng.binomial(lengths, self.means[None, :])
        return out


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "mixture", Mixture,
            test_params=lambda n, horizon: {"stochastic": [0], "costs": np.full((horizon, n), 0.5)},
            description="some coordinates iid Bernoulli, the others a fixed cost sequence; draws block sums exactly",
            param_docs={
                "stochastic": "the stochastic coordinates",
                "means": "their probabilities of costing 1 (number or shape (n,))",
                "costs": "the fixed (T, n) costs of the other coordinates", "path": "or a .csv / .npy file",
            },
        )
    )
