"""The ``"iid-bernoulli"`` adversary: every step, expert a costs ``scale`` with probability
``means[a]`` and 0 otherwise, independently — the iid setting of paper §6."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.checks import as_float_array, check_real
from replify.errors import InvalidArgumentError


class IidBernoulli:
    """D_t = ⊗_a Bernoulli(means[a]) for every t."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, means: Any = 0.5, scale: float = 1.0
    ) -> None:
        self.n, self.horizon = n, horizon
        m = as_float_array("means", means)
        if m.ndim == 0:
            m = np.full(n, float(m))
        if m.shape != (n,) or not (np.isfinite(m).all() and m.min() >= 0.0 and m.max() <= 1.0):
            raise InvalidArgumentError(
                f"means must be a number or an array of shape ({n},) with entries in [0, 1]; got {np.asarray(means)!r}"
            )
        self.means = m.copy()  # ours: later changes to the caller's array don't leak in
        self.scale = check_real("scale", scale)
        if not 0.0 < self.scale <= 1.0:
            raise InvalidArgumentError(f"scale must be in (0, 1], got {self.scale}")

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.sample_chunk(rng, 0, self.horizon)

    def sample_chunk(
        self, rng: np.random.Generator, start: int, stop: int, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Steps start+1..stop (into ``out`` if given). Consecutive chunks from one generator
        are, bit for bit, the rows of one ``sample`` call: the evaluation engine streams with this."""
        if out is None:
            out = np.empty((stop - start, self.n))
        np.less(rng.random((stop - start, self.n)), self.means, out=out, casting="unsafe")  # 0.0 / 1.0
        if self.scale != 1.0:
            out *= self.scale
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The cost sums of the segments (starts[k], stops[k]], drawn directly: a Bernoulli
        coordinate with a constant mean sums to a Binomial — the same law as summing the steps."""
        lengths = (np.asarray(stops) - np.asarray(starts))[:, None]
        sums = rng.binomial(lengths, self.means[None, :]).astype(np.float64)
        return sums if self.scale == 1.0 else sums * self.scale


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "iid-bernoulli",
            IidBernoulli,
            description="iid Bernoulli costs: expert a costs scale w.p. means[a] at every step; draws block sums exactly",
            param_docs={
                "means": "probability that each expert costs 1 (number or shape (n,)); default 0.5",
                "scale": "costs are scale * Bernoulli; scale = 1/n gives l1-bounded costs for OLO learners; default 1",
            },
        )
    )
