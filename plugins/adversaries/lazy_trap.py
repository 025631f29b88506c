"""The ``"lazy-leader-trap"`` adversary (paper §3.1, ``example:FLL-not-replicable``), two actions:
day 1 gives the worse action (index 1) a bonus, c_1 = (0, −bonus), in every draw; after it,
iid costs ``scale``·Bernoulli(``means``) favour action 0. A leader-follower switches from action 1
to action 0 when the gap closes — at a different step in S and S'. Costs have ℓ1 norm ≤ 1."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_means, check_scale, check_sizes
from replify.base.checks import check_real
from replify.errors import InvalidArgumentError


class LazyLeaderTrap(ChunkedSequence):
    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, bonus: float = 1.0, means: Any = (0.3, 0.5),
        scale: float = 0.5,
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        if n != 2:
            raise InvalidArgumentError(f"the lazy-leader trap has n = 2 actions, got n={n}")
        self.bonus = check_real("bonus", bonus)
        if not 0.0 < self.bonus <= 1.0:
            raise InvalidArgumentError(f"bonus must be in (0, 1] (costs of l1 norm <= 1), got {self.bonus}")
        self.means, self.scale = check_means("means", means, 2), check_scale(scale)
        if self.scale > 0.5:
            raise InvalidArgumentError(f"scale must be <= 0.5 so that costs have l1 norm <= 1, got {self.scale}")

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        out = (rng.random((stop - start, 2)) < self.means) * self.scale
        if start == 0 and stop > 0:
            out[0] = (0.0, -self.bonus)  # the same day-1 bonus in every draw (a point mass)
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        starts, stops = np.asarray(starts), np.asarray(stops)
        random_steps = stops - np.maximum(starts, 1)  # step 1 is not random
        out = rng.binomial(random_steps[:, None], self.means[None, :]) * self.scale
        first = starts == 0
        out[first] += (0.0, -self.bonus)
        return out


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "lazy-leader-trap", LazyLeaderTrap, test_params={"n": 2},
            description="sec. 3.1: a day-1 bonus for the worse action, then iid costs favouring the other; exact block sums",
            param_docs={"bonus": "day-1 bonus of action 2 (default 1)", "means": "Bernoulli means after day 1 (default (0.3, 0.5))",
                        "scale": "cost of a 1 (default 0.5, so l1 norms stay <= 1)"},
        )
    )
