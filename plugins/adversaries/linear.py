"""Linear bandits, the adversaries: arm a's cost at step t has mean ⟨x_{t,a}, θ_t⟩, its features
x_{t,a} shown to the learner before it acts (:mod:`replify.components.contextual`, docs/contextual.md).

- ``linear-gaussian``: c = ⟨x, θ⟩ + σ·N(0, 1) — unbounded costs, σ-sub-Gaussian noise (the model
  of OFUL, Abbasi-Yadkori, Pál & Szepesvári, NeurIPS 2011, and of phased elimination with G-optimal
  designs, Lattimore & Szepesvári, *Bandit Algorithms*, 2020, ch. 21–22). By default the n arms'
  features and θ are drawn once, uniformly on the unit sphere of R^d, from the adversary's stream:
  the means lie in [−1, 1].
- ``linear-bernoulli``: c ~ Bernoulli(⟨x, θ⟩), costs in {0, 1}. The mean must be a probability:
  every default feature vector is x = (1, u)/2, u on the unit sphere of R^{d−1}, and θ = (1, v), v
  a unit vector, so ⟨x, θ⟩ = (1 + ⟨u, v⟩)/2 ∈ [0, 1] — a linear model whose first feature is the
  constant 1/2. Given features or θ whose means leave [0, 1] are refused, never clipped.
- ``linear-switching``: ``linear-gaussian`` whose θ changes at ``pieces − 1`` evenly spaced steps
  (a fresh unit θ per piece): piecewise iid, a test for learners that stop learning.

``contexts="fixed"`` (the default) keeps the features of the n arms the same at every step: a
linear bandit with a finite action set, also an ordinary iid (piecewise iid) bandit instance —
``sample_sums`` draws a segment's sums exactly (a Gaussian's N(Lμ, Lσ²), a Bernoulli's Binomial
counts) and every bandit learner runs on it. ``contexts="sphere"`` draws every arm's features
afresh at every step, uniformly on the unit sphere (``linear-bernoulli``: x = (1, u)/2 as above),
and ``contexts="gaussian"`` (``linear-gaussian`` only) from N(0, I/d): a contextual bandit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.base.checks import as_float_array, check_int, check_positive, check_step_size
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.engine import limits
from replify.errors import InvalidArgumentError

LAWS = ("fixed", "sphere", "gaussian")


def _sphere(rng: np.random.Generator, shape: tuple[int, ...], d: int) -> np.ndarray:
    """Points drawn uniformly on the unit sphere of R^d, shape (*shape, d)."""
    z = rng.standard_normal((*shape, d))
    norm = np.linalg.norm(z, axis=-1, keepdims=True)
    return z / np.where(norm > 0, norm, 1.0)


class LinearCosts(ChunkedSequence):
    """Costs with means ⟨x_{t,a}, θ_t⟩ (module docstring). ``theta``: (d,) or, piecewise,
    (pieces, d); ``arms``: the fixed (n, d) features; ``contexts``: ``"fixed"``, ``"sphere"`` or
    ``"gaussian"``; ``pieces``: how many θ (evenly spaced changes)."""

    #: the noise: "gaussian" or "bernoulli"
    noise = "gaussian"

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, d: int = 5, theta: Any = None,
                 arms: Any = None, contexts: str = "fixed", sigma: float = 0.1, pieces: int = 1) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        # d numbers per arm and step: d = 10**12 is refused here, not a MemoryError drawing theta
        self.d = check_step_size("d", d, minimum=2 if self.noise == "bernoulli" else 1, budget=limits.MEMORY_BUDGET,
                                 per=self.n, holds=f"n x d = {self.n} x d features")
        if contexts not in LAWS or (self.noise == "bernoulli" and contexts == "gaussian"):
            allowed = LAWS if self.noise == "gaussian" else LAWS[:2]
            raise InvalidArgumentError(f"contexts must be one of {allowed}; got {contexts!r}")
        self.law = contexts
        self.sigma = check_positive("sigma", sigma) if self.noise == "gaussian" else 0.5
        pieces = check_int("pieces", pieces, minimum=1)
        if pieces > horizon:
            raise InvalidArgumentError(f"pieces must be at most horizon={horizon}; got {pieces}")
        self.theta = self._theta(theta, pieces, rng)
        if arms is not None and contexts != "fixed":
            raise InvalidArgumentError(f"arms are fixed features: they go with contexts='fixed', not {contexts!r}")
        self.arms = self._arms(arms, rng) if contexts == "fixed" else None
        cuts = np.linspace(0, horizon, self.theta.shape[0] + 1).round().astype(np.int64)
        self.bounds = cuts  # piece j covers steps bounds[j]+1..bounds[j+1]
        self._check_means()
        #: the features shown at every step, or None when they change (docs/contextual.md)
        self.fixed_contexts = None if self.arms is None else self.arms
        # The same law at every step (or between law_changes): the engine's block-sum paths and the
        # iid certificates rely on it. Contexts drawn afresh each step are iid too.
        if self.theta.shape[0] == 1:
            self.iid = True
        else:
            self.law_changes = tuple(int(c) for c in cuts[1:-1])
        if self.arms is not None:
            self.piece_means = self.theta @ self.arms.T  # (pieces, n)
        #: the noise's sub-Gaussian scale (c − mean): σ, or 1/2 for 0/1 costs. A learner whose
        #: certificate assumes a smaller one (rep-linear-elimination's sigma) is reported uncertified.
        self.noise_scale = self.sigma
        self.integer_costs = self.noise == "bernoulli"
        if self.noise == "bernoulli":
            self.cost_bounds = (0.0, 1.0)
        else:
            #: a bound on E[c² | context] at every step, |mean|² + σ² (None where the means are unbounded:
            #: Gaussian contexts); the contextual conversion's certificate assumes one (docs/contextual.md)
            self.cost_second_moment = self._second_moment()

    def _second_moment(self) -> float | None:
        if self.arms is not None:
            top = float(np.abs(self.piece_means).max())
        elif self.law == "sphere":  # |<x, θ>| ≤ ‖θ‖ on unit features
            top = float(np.linalg.norm(self.theta, axis=1).max())
        else:
            return None
        return top * top + self.sigma * self.sigma

    # -- construction -------------------------------------------------------------------------
    def _theta(self, theta: Any, pieces: int, rng: np.random.Generator) -> np.ndarray:
        d = self.d
        if theta is None:
            if self.noise == "bernoulli":  # θ = (1, v): means (1 + <u, v>)/2 in [0, 1]
                return np.concatenate([np.ones((pieces, 1)), _sphere(rng, (pieces,), d - 1)], axis=1)
            return _sphere(rng, (pieces,), d)
        t = as_float_array("theta", theta)
        # one piece: theta (d,) or (1, d); pieces > 1: one theta per piece, (pieces, d) — never fewer
        # or more rows than pieces, which would play another number of pieces than asked for
        allowed = f"({d},) or (1, {d})" if pieces == 1 else f"({pieces}, {d}), one theta per piece"
        if t.ndim == 2 and t.shape[1] == d and t.shape[0] != pieces:
            raise InvalidArgumentError(
                f"theta has {t.shape[0]} rows (one theta per piece) but pieces={pieces}; expected shape {allowed}: give "
                f"pieces={t.shape[0]} to play {t.shape[0]} pieces" + (", or one theta" if pieces == 1 else ""))
        t = t[None] if t.ndim == 1 and pieces == 1 else t
        if t.ndim != 2 or t.shape[1] != d or t.shape[0] != pieces:
            raise InvalidArgumentError(f"theta must be of shape {allowed} (d={d}, pieces={pieces}); got shape "
                                       f"{np.shape(theta)}")
        if not np.isfinite(t).all():
            raise InvalidArgumentError(f"theta must be finite; got {t[~np.isfinite(t)][0]} in {t.tolist()}")
        return t.copy()

    def _arms(self, arms: Any, rng: np.random.Generator) -> np.ndarray:
        n, d = self.n, self.d
        if arms is None:
            if self.noise == "bernoulli":
                return np.concatenate([np.full((n, 1), 0.5), 0.5 * _sphere(rng, (n,), d - 1)], axis=1)
            return _sphere(rng, (n,), d)
        x = as_float_array("arms", arms)
        if x.shape != (n, d) or not np.isfinite(x).all():
            raise InvalidArgumentError(f"arms must be finite features of shape (n, d) = ({n}, {d}); got shape {x.shape}")
        out = x.copy()
        out.flags.writeable = False
        return out

    def _check_means(self) -> None:
        if self.noise != "bernoulli":
            return
        if self.arms is not None:
            means = self.theta @ self.arms.T
            low, high = float(means.min()), float(means.max())
        else:  # x = (1, u)/2, u on the unit sphere: <x, theta> ranges over (t0 -+ |t_rest|)/2
            rest = np.linalg.norm(self.theta[:, 1:], axis=1)
            low, high = float(((self.theta[:, 0] - rest) / 2).min()), float(((self.theta[:, 0] + rest) / 2).max())
        # (to rounding: unit vectors normalised in floating point reach 1 ± 1e-16)
        if low < -1e-12 or high > 1.0 + 1e-12:
            raise InvalidArgumentError(f"linear-bernoulli needs means <x, theta> in [0, 1] (they are probabilities); "
                                       f"the given arms and theta reach [{low:.6g}, {high:.6g}]")

    # -- drawing ------------------------------------------------------------------------------
    def _pieces(self, start: int, stop: int) -> np.ndarray:
        return np.searchsorted(self.bounds, np.arange(start, stop), side="right") - 1

    def _features(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        n, d = self.n, self.d
        if self.arms is not None:
            return np.broadcast_to(self.arms, (rows, n, d))
        if self.law == "gaussian":
            return rng.standard_normal((rows, n, d)) / np.sqrt(d)
        if self.noise == "bernoulli":
            out = np.empty((rows, n, d))
            out[..., 0] = 0.5
            out[..., 1:] = 0.5 * _sphere(rng, (rows, n), d - 1)
            return out
        return _sphere(rng, (rows, n), d)

    def sample_contexts(self, rng: np.random.Generator, start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps start+1..stop: (contexts (L, n, d), costs (L, n), means (L, n)); the contexts
        first, then the noise, from ``rng``."""
        rows = stop - start
        x = self._features(rng, rows)
        pieces = self._pieces(start, stop)
        if self.arms is not None:
            means = self.piece_means[pieces]  # (L, n)
        else:
            means = np.matmul(x, self.theta[pieces][:, :, None])[..., 0]
        if self.noise == "bernoulli":
            costs = (rng.random((rows, self.n)) < means).astype(np.float64)
        else:
            costs = means + self.sigma * rng.standard_normal((rows, self.n))
        return x, costs, means

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        """The costs of :meth:`sample_contexts` (the same draws)."""
        costs = self.sample_contexts(rng, start, stop)[1]
        if out is None:
            return costs
        out[...] = costs
        return out

    def _overlaps(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """(segments, pieces): how many steps of each segment each piece holds."""
        lo, hi = self.bounds[:-1], self.bounds[1:]
        s, e = np.asarray(starts)[:, None], np.asarray(stops)[:, None]
        return np.clip(np.minimum(e, hi) - np.maximum(s, lo), 0, None)

    def expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Fixed features: each segment's expected cost sums, (segments, n)."""
        if self.arms is None:
            raise InvalidArgumentError("expected_sums needs fixed features (contexts='fixed'): the contextual "
                                       "path takes each step's means from sample_contexts")
        return self._overlaps(starts, stops).astype(np.float64) @ self.piece_means

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Fixed features: each segment's cost sums drawn directly — a sum of L Gaussian costs is
        N(Σ means, Lσ²); of Bernoulli costs, a Binomial count per piece it overlaps. Exact in law."""
        if self.arms is None:
            raise InvalidArgumentError("sample_sums needs fixed features (contexts='fixed')")
        counts = self._overlaps(starts, stops)
        if self.noise == "bernoulli":
            out = np.zeros((counts.shape[0], self.n))
            for j in range(counts.shape[1]):  # a loop over the few pieces
                out += rng.binomial(counts[:, j][:, None], self.piece_means[j][None, :])
            return out
        lengths = counts.sum(axis=1).astype(np.float64)[:, None]
        return rng.normal(counts.astype(np.float64) @ self.piece_means, self.sigma * np.sqrt(lengths))


class LinearGaussian(LinearCosts):
    """c = ⟨x, θ⟩ + σ·N(0, 1) (module docstring)."""

    noise = "gaussian"


class LinearBernoulli(LinearCosts):
    """c ~ Bernoulli(⟨x, θ⟩) (module docstring)."""

    noise = "bernoulli"

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, d: int = 5, theta: Any = None,
                 arms: Any = None, contexts: str = "fixed", pieces: int = 1) -> None:
        super().__init__(n=n, horizon=horizon, rng=rng, d=d, theta=theta, arms=arms, contexts=contexts, pieces=pieces)


def linear_switching(*, n: int, horizon: int, rng: np.random.Generator, pieces: int = 4, **params: Any) -> LinearGaussian:
    """``linear-gaussian`` whose θ changes at ``pieces − 1`` evenly spaced steps."""
    return LinearGaussian(n=n, horizon=horizon, rng=rng, pieces=pieces, **params)


_DOCS = {
    "d": "the features' dimension (default 5)",
    "theta": "the parameter, (d,) or (pieces, d) (default: drawn, unit norm)",
    "arms": "the fixed (n, d) features (default: drawn on the unit sphere)",
    "contexts": "'fixed' (a linear bandit), 'sphere' or 'gaussian' (drawn every step)",
}


@replify.hookimpl
def register_adversaries(register):
    register(replify.AdversarySpec(
        "linear-gaussian", LinearGaussian, test_params={"d": 3},
        description="linear bandit: cost <x, theta> + N(0, sigma^2), the arms' features x shown first (fixed or drawn each step)",
        param_docs={**_DOCS, "sigma": "the noise's standard deviation (default 0.1)", "pieces": "how many theta (default 1)"},
    ))
    register(replify.AdversarySpec(
        "linear-bernoulli", LinearBernoulli, test_params={"d": 3},
        description="linear bandit with 0/1 costs: Bernoulli(<x, theta>), x = (1, u)/2 and theta = (1, v) by default",
        param_docs={**_DOCS, "pieces": "how many theta (default 1)"},
    ))
    register(replify.AdversarySpec(
        "linear-switching", linear_switching, test_params={"d": 3},
        description="linear-gaussian whose theta changes at pieces - 1 evenly spaced steps (piecewise iid)",
        param_docs={**_DOCS, "sigma": "the noise's standard deviation (default 0.1)", "pieces": "how many theta (default 4)"},
    ))
