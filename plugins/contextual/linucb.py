"""The non-replicable contextual baselines, on a ridge estimate of the costs' linear model, for
costs to be minimised (docs/contextual.md). Each keeps V = λI + Σ x xᵀ and b = Σ c x — one model
over the arms' features (``model="shared"``) or one per arm (``"disjoint"``, Li, Chu, Langford &
Schapire, WWW 2010) — and plays, in lanes across the pairs of an evaluation (Sherman–Morrison
updates of V⁻¹, one numpy operation per step for every lane):

- ``linucb``: the arm of least lower confidence bound ⟨x, θ̂⟩ − β‖x‖_{V⁻¹}. With ``beta`` the
  width is fixed, β = ``beta`` (Li et al.'s multiplier α: mabwiser's and river's ``alpha``); without it,
  OFUL's radius (Abbasi-Yadkori, Pál & Szepesvári, NeurIPS 2011, Thm 2) at δ = 1/T,
  β_t = σ·sqrt(2 ln T + d ln(1 + t/(λd))) + sqrt(λ)·S, for σ-sub-Gaussian noise (``sigma``) and
  ‖θ‖ ≤ S (``norm``) — shared-model regret O(d√T log T) (their Thm 3).
- ``lin-ts``: linear Thompson sampling (Agrawal & Goyal, ICML 2013): θ̃ ~ N(θ̂, v²V⁻¹), the arm of
  least ⟨x, θ̃⟩; v = ``scale`` (default σ).
- ``lin-eps-greedy``: with probability ε (``epsilon``) an arm drawn uniformly, else the arm of least
  ⟨x, θ̂⟩.

Ties go to the lowest arm. None is replicable: each adapts at every step to the costs it sees.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import replify
from replify.base.checks import check_int, check_positive
from replify.components.contextual import ContextualLearner, RidgeLanes
from replify.errors import InvalidArgumentError


def _model(model: Any) -> str:
    if model not in ("shared", "disjoint"):
        raise InvalidArgumentError(f"model must be 'shared' (one theta over the arms' features) or 'disjoint' (one "
                                   f"per arm); got {model!r}")
    return model


def _fraction(name: str, value: Any) -> float:
    v = check_positive(name, value) if value != 0 else 0.0
    if not 0.0 <= v <= 1.0:
        raise InvalidArgumentError(f"{name} must be in [0, 1]; got {value!r}")
    return float(v)


class LinUCBLanes(RidgeLanes):
    """LinUCB for every lane (module docstring)."""

    shared = RidgeLanes.shared + ("beta", "sigma", "norm")

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], lam: float, model: str, beta: float | None,
                 sigma: float, norm: float) -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs, lam=lam, model=model)
        self.beta, self.sigma, self.norm = beta, sigma, norm

    def radius(self) -> float:
        """β for the current step: ``beta``, or OFUL's radius at δ = 1/T."""
        if self.beta is not None:
            return self.beta
        d, t = self.d, self.t
        return (self.sigma * math.sqrt(2.0 * math.log(max(self.horizon, 2)) + d * math.log(1.0 + t / (self.lam * d)))
                + math.sqrt(self.lam) * self.norm)

    def _choose(self) -> np.ndarray:
        return np.argmin(self._means() - self.radius() * self._widths(), axis=1)


class LinTSLanes(RidgeLanes):
    """Linear Thompson sampling for every lane (module docstring)."""

    shared = RidgeLanes.shared + ("scale",)

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], lam: float, model: str, scale: float) -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs, lam=lam, model=model)
        self.scale = scale

    def _choose(self) -> np.ndarray:
        k = self.theta.shape[1]
        z = self._normals(k * self.d).reshape(self.lanes, k, self.d)
        # θ̃ = θ̂ + v·L z with L Lᵀ = V⁻¹ (V⁻¹ symmetrised: rank-one updates leave rounding asymmetry)
        chol = np.linalg.cholesky(0.5 * (self.inv + np.swapaxes(self.inv, -1, -2)))
        sample = self.theta + self.scale * np.einsum("lkij,lkj->lki", chol, z)
        return np.argmin(np.einsum("lnd,lnd->ln", self._x, np.broadcast_to(sample, self._x.shape)), axis=1)


class EpsGreedyLanes(RidgeLanes):
    """ε-greedy on the ridge estimate for every lane (module docstring)."""

    shared = RidgeLanes.shared + ("epsilon",)

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], lam: float, model: str, epsilon: float) -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs, lam=lam, model=model)
        self.epsilon = epsilon

    def _choose(self) -> np.ndarray:
        u = self._uniforms(2)
        greedy = np.argmin(self._means(), axis=1)
        return np.where(u[:, 0] < self.epsilon, np.minimum((u[:, 1] * self.n).astype(np.int64), self.n - 1), greedy)


class LinUCB(ContextualLearner):
    """LinUCB (module docstring)."""

    _params = ("beta", "lam", "model", "sigma", "norm")

    def __init__(self, *, n: int, horizon: int, rng: Any = None, beta: float | None = None, lam: float = 1.0,
                 model: str = "shared", sigma: float = 0.1, norm: float = 1.0) -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.beta = None if beta is None else float(check_positive("beta", beta))
        self.lam, self.model = float(check_positive("lam", lam)), _model(model)
        self.sigma, self.norm = float(check_positive("sigma", sigma)), float(check_positive("norm", norm))
        self._start(LinUCBLanes(n=n, horizon=horizon, rngs=[rng], lam=self.lam, model=self.model, beta=self.beta,
                                sigma=self.sigma, norm=self.norm), n=n, horizon=horizon)


class LinTS(ContextualLearner):
    """Linear Thompson sampling (module docstring)."""

    _params = ("scale", "lam", "model")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, scale: float = 0.1, lam: float = 1.0,
                 model: str = "shared") -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.scale, self.lam, self.model = float(check_positive("scale", scale)), float(check_positive("lam", lam)), _model(model)
        self._start(LinTSLanes(n=n, horizon=horizon, rngs=[rng], lam=self.lam, model=self.model, scale=self.scale),
                    n=n, horizon=horizon)


class LinEpsGreedy(ContextualLearner):
    """ε-greedy on a ridge estimate (module docstring)."""

    _params = ("epsilon", "lam", "model")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, epsilon: float = 0.05, lam: float = 1.0,
                 model: str = "shared") -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.epsilon = _fraction("epsilon", epsilon)
        self.lam, self.model = float(check_positive("lam", lam)), _model(model)
        self._start(EpsGreedyLanes(n=n, horizon=horizon, rngs=[rng], lam=self.lam, model=self.model,
                                   epsilon=self.epsilon), n=n, horizon=horizon)


@replify.hookimpl
def register_learners(register):
    common = {"feedback": "bandit", "enforces": {"horizon", "domain"}, "test_params": {}}
    register(replify.LearnerSpec(
        "linucb", LinUCB, "contextual", **common,
        description="LinUCB / OFUL on a ridge estimate (shared or disjoint models); contexts, bandit feedback; not replicable",
    ))
    register(replify.LearnerSpec(
        "lin-ts", LinTS, "contextual", **common,
        description="linear Thompson sampling (Agrawal & Goyal 2013); contexts, bandit feedback; not replicable",
    ))
    register(replify.LearnerSpec(
        "lin-eps-greedy", LinEpsGreedy, "contextual", **common,
        description="epsilon-greedy on a ridge estimate; contexts, bandit feedback; not replicable",
    ))
