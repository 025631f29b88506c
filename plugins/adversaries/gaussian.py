"""The ``"gaussian-arms"`` adversary: the stochastic bandit instance with one good arm and Gaussian
costs — every step, arm a costs N(μ_a, σ²) independently, μ_best = base − gap and μ_a = base for
the others (the instance of the Gaussian regret lower bounds, Lattimore & Szepesvári, *Bandit
Algorithms*, 2020, §16). Costs are unbounded: learners tuned for [0, 1] refuse them; ``ucb1`` with
``sigma=`` takes them."""

from __future__ import annotations

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.base.checks import check_int, check_positive, check_real
from replify.errors import InvalidArgumentError


class GaussianArms(ChunkedSequence):
    """D_t = ⊗_a N(μ_a, σ²) for every t."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, gap: float = 0.1, base: float = 0.5,
                 sigma: float = 0.1, best: int = 0) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        gap, base = check_real("gap", gap), check_real("base", base)
        if not gap > 0.0:
            raise InvalidArgumentError(f"gap must be positive (the best arm's mean is base - gap); got {gap}")
        self.sigma = check_positive("sigma", sigma)
        best = check_int("best", best, minimum=0)
        if best >= n:
            raise InvalidArgumentError(f"best must be an arm in [0, {n}); got {best}")
        self.means = np.full(n, base)
        self.means[best] = base - gap
        # the same law at every step: a segment's sums depend only on its length (the engine's
        # block-sum path for batched bandit learners relies on it)
        self.iid = True

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        """Steps start+1..stop; consecutive chunks from one generator are one ``sample``'s rows."""
        draw = rng.normal(self.means, self.sigma, size=(stop - start, self.n))
        if out is None:
            return draw
        out[...] = draw
        return out

    def arm_law(self, start: int, stop: int) -> tuple[str, np.ndarray, float]:
        """Every arm's law at steps start+1..stop, the arms independent (the engine then draws only
        the cost a bandit learner plays: replify.engine.played): N(means[a], sigma²)."""
        return "normal", self.means[None, :], self.sigma

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The segments' cost sums drawn directly: a sum of L iid N(μ, σ²) is N(Lμ, Lσ²)."""
        lengths = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[:, None]
        return rng.normal(lengths * self.means[None, :], self.sigma * np.sqrt(lengths))

    def expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """length · means (for the pseudo-regret against the best mean)."""
        lengths = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[:, None]
        return lengths * self.means[None, :]


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "gaussian-arms", GaussianArms,
            description="stochastic bandit with one good arm: Gaussian costs N(base - gap, sigma^2) (arm best) and N(base, sigma^2)",
            param_docs={"gap": "the gap of every suboptimal arm (default 0.1)", "base": "mean cost of the others (default 0.5)",
                        "sigma": "the costs' standard deviation (default 0.1)", "best": "the good arm (default 0)"},
        )
    )
