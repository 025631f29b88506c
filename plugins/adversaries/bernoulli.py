"""The ``"iid-bernoulli"`` adversary: every step, expert a costs ``scale`` with probability
``means[a]`` and 0 otherwise, independently — the iid setting of paper §6."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_means, check_scale, check_sizes
from replify.base.checks import check_int, check_real
from replify.errors import InvalidArgumentError


class IidBernoulli(ChunkedSequence):
    """D_t = ⊗_a Bernoulli(means[a]) for every t."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, means: Any = 0.5, scale: float = 1.0
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        self.means = check_means("means", means, n)  # ours: later changes to the caller's array don't leak in
        self.scale = check_scale(scale)
        self.integer_costs = self.scale == 1.0
        # the same law at every step: a segment's sums depend only on its length (the engine's
        # block-sum path for batched bandit learners relies on it), and every cost is 0 or scale
        self.iid = True
        self.cost_bounds = (min(0.0, self.scale), max(0.0, self.scale))

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

    def arm_law(self, start: int, stop: int) -> tuple[str, np.ndarray, float]:
        """Every arm's law at steps start+1..stop, the arms independent (the engine then draws only
        the cost a bandit learner plays: replify.engine.played): Bernoulli(means[a]) times scale."""
        return "bernoulli", self.means[None, :], self.scale

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The cost sums of the segments (starts[k], stops[k]], drawn directly: a Bernoulli
        coordinate with a constant mean sums to a Binomial — the same law as summing the steps."""
        lengths = (np.asarray(stops) - np.asarray(starts))[:, None]
        sums = rng.binomial(lengths, self.means[None, :]).astype(np.float64)
        return sums if self.scale == 1.0 else sums * self.scale

    def expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The expected cost sums of the segments (starts[k], stops[k]]: length · means · scale
        (for the pseudo-regret against the best mean, ``Report.pseudo_regret``)."""
        lengths = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[:, None]
        return lengths * self.means[None, :] * self.scale


def BernoulliArms(
    *, n: int, horizon: int, rng: np.random.Generator, gap: float = 0.1, base: float = 0.5, best: int = 0
) -> IidBernoulli:
    """The stochastic bandit instance with one good arm: arm ``best`` costs 1 with probability
    ``base − gap``, every other arm with probability ``base`` (Lai & Robbins' two-point instance,
    the gap Δ = ``gap`` of every suboptimal arm)."""
    n, horizon = check_sizes(n, horizon)
    gap, base = check_real("gap", gap), check_real("base", base)
    if not (0.0 < gap <= base <= 1.0):
        raise InvalidArgumentError(f"need 0 < gap <= base <= 1 (means base - gap and base); got gap={gap}, base={base}")
    best = check_int("best", best, minimum=0)
    if best >= n:
        raise InvalidArgumentError(f"best must be an arm in [0, {n}); got {best}")
    means = np.full(n, base)
    means[best] = base - gap
    return IidBernoulli(n=n, horizon=horizon, rng=rng, means=means)


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
    register(
        replify.AdversarySpec(
            "bernoulli-arms",
            BernoulliArms,
            description="stochastic bandit with one good arm: Bernoulli costs with means base - gap (arm best) and base",
            param_docs={"gap": "the gap of every suboptimal arm (default 0.1)", "base": "mean cost of the others (default 0.5)",
                        "best": "the good arm (default 0)"},
        )
    )
