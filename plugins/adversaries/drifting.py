"""The ``"drifting-bernoulli"`` adversary: Bernoulli costs whose means drift linearly from
``start`` (step 1) to ``end`` (step T) — a slowly moving oblivious adversary (paper §2).

Block sums are not drawn directly: a sum of Bernoullis with different means is not a Binomial,
so the evaluation engine draws this adversary step by step."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_means, check_scale, check_sizes


class DriftingBernoulli(ChunkedSequence):
    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, start: Any, end: Any, scale: float = 1.0) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        self.start, self.end = check_means("start", start, n), check_means("end", end, n)
        self.scale = check_scale(scale)
        self.integer_costs = self.scale == 1.0

    def means_at(self, start: int, stop: int) -> np.ndarray:
        """Means of steps start+1..stop."""
        frac = np.arange(start, stop) / max(self.horizon - 1, 1)
        return self.start + frac[:, None] * (self.end - self.start)

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        return (rng.random((stop - start, self.n)) < self.means_at(start, stop)) * self.scale


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "drifting-bernoulli", DriftingBernoulli, test_params={"start": 0.2, "end": 0.8},
            description="Bernoulli costs with means drifting linearly from `start` to `end`; drawn step by step",
            param_docs={"start": "means at step 1", "end": "means at step T", "scale": "cost of a 1 (default 1)"},
        )
    )
