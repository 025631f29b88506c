"""The ``"classification-bandit"`` adversary: a classification data set turned into a contextual
bandit, the standard benchmark of contextual-bandit libraries (Bietti, Agarwal & Langford, "A
Contextual Bandit Bake-off", JMLR 2021; coba; Vowpal Wabbit). At every step a row is drawn
uniformly (with replacement) from the data — an iid bootstrap, so two runs of a pair see two
independent resamplings — its features are shown, and arm a costs 0 if a is the row's label, 1
otherwise. The expected cost given the row is that cost itself, so the best policy (the true label)
pays 0: regret and pseudo-regret count the learner's mistakes.

The arms' features (``features_as``): ``"blocks"`` (default) gives arm a the row's features in
block a of an n(d+1)-vector, with a constant 1 — x_{t,a} = e_a ⊗ (1, z_t) — so that one linear
model over the arms' features (a shared ridge estimate) is a per-class linear model; ``"same"``
gives every arm the row's features and a constant 1, (1, z_t), for learners with a model per arm (LinUCB's
``model="disjoint"``). Either is divided by the largest norm in the data, so every feature vector
lies in the unit ball. The default data are :func:`replify.datasets.wine`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.base.checks import as_float_array, as_int_array
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.datasets import wine
from replify.errors import InvalidArgumentError


class ClassificationBandit(ChunkedSequence):
    """Rows drawn uniformly with replacement; cost 0 for the row's label, 1 otherwise."""

    integer_costs = True
    cost_bounds = (0.0, 1.0)
    iid = True  # rows drawn uniformly with replacement: the same law at every step
    noise_scale = 0.5  # costs in [0, 1]
    fixed_contexts = None

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, features: Any = None, labels: Any = None,
                 features_as: str = "blocks", name: str | None = None) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        if (features is None) != (labels is None):
            raise InvalidArgumentError("features and labels go together (a data set); give both or neither (wine)")
        if features is None:
            data = wine()
            features, labels, name = data.features, data.labels, name or data.name
        z = as_float_array("features", features)
        y = as_int_array("labels", labels)
        if z.ndim != 2 or z.shape[0] == 0 or not np.isfinite(z).all():
            raise InvalidArgumentError(f"features must be a finite (rows, d) array; got shape {z.shape}")
        if y.shape != (z.shape[0],):
            raise InvalidArgumentError(f"labels must have one entry per row of features, shape ({z.shape[0]},); got {y.shape}")
        if y.min() < 0 or y.max() >= n:
            raise InvalidArgumentError(f"labels must be classes in [0, n) = [0, {n}) (one arm per class); got labels in "
                                       f"[{int(y.min())}, {int(y.max())}]")
        if int(y.max()) + 1 != n:  # an arm no label names would always cost 1: a mistake, not an instance
            raise InvalidArgumentError(f"n must be the number of classes, one arm each: the labels name "
                                       f"{int(y.max()) + 1} classes (0..{int(y.max())}); got n={n}")
        if features_as not in ("blocks", "same"):
            raise InvalidArgumentError(f"features_as must be 'blocks' or 'same'; got {features_as!r}")
        self.features_as = features_as
        self.rows, self.labels, self.name = z.copy(), y.copy(), name
        k = z.shape[1]
        self.d = n * (k + 1) if features_as == "blocks" else k + 1
        if features_as == "blocks":  # arm a's block: (1, z) at positions a(k+1) .. a(k+1)+k
            self._blocks = np.zeros((z.shape[0], n, self.d))
            for a in range(n):  # a loop over the few arms
                self._blocks[:, a, a * (k + 1)] = 1.0
                self._blocks[:, a, a * (k + 1) + 1 : (a + 1) * (k + 1)] = z
        else:  # every arm: (1, z)
            same = np.concatenate([np.ones((z.shape[0], 1)), z], axis=1)
            self._blocks = np.broadcast_to(same[:, None, :], (z.shape[0], n, k + 1))

        # every feature vector in the unit ball (one scale for the whole data: the learners'
        # certificates, rep-ridge's, assume a bound on the features' norm)
        self._blocks = self._blocks / np.sqrt(np.einsum("rnd,rnd->rn", self._blocks, self._blocks).max())

    def sample_contexts(self, rng: np.random.Generator, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps start+1..stop: each a row drawn uniformly; (contexts, costs, means), means = costs."""
        rows = rng.integers(self.labels.size, size=stop - start)
        costs = np.ones((stop - start, self.n))
        costs[np.arange(stop - start), self.labels[rows]] = 0.0
        return self._blocks[rows], costs, costs.copy()

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        return self.sample_contexts(rng, start, stop)[1]

    def context_support(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every row a step can show (drawn uniformly): its contexts (R, n, d), costs and means
        (R, n). The engine's finite-support path draws a stretch's rows as multinomial counts."""
        costs = np.ones((self.labels.size, self.n))
        costs[np.arange(self.labels.size), self.labels] = 0.0
        return self._blocks, costs, costs.copy()


@replify.hookimpl
def register_adversaries(register):
    register(replify.AdversarySpec(
        "classification-bandit", ClassificationBandit, test_params={"n": 3},
        description="a classification data set as a contextual bandit: a row's features shown, cost 1 for a wrong label (wine by default)",
        param_docs={"features": "the (rows, d) features (default: wine's, standardised)", "labels": "the rows' classes in [0, n)",
                    "features_as": "'blocks' (e_a x (1, z), default) or 'same' (every arm sees (1, z))",
                    "name": "the data's name, which figures show"},
    ))
