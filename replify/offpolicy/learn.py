"""Learning a policy from a log, replicably (docs/offpolicy.md, "Learning a policy from a log"):
:func:`learn_policy` fits a linear cost model on the logged rows and rounds it on a random grid
drawn from R, so that two independent logs of one system give the same policy with probability at
least 1 − ρ, certified; its value is estimated on a held-out part of the log, with an interval.

**The fit.** With the logged arm's features z_i (its row of the contexts (rows, n, d): one θ over
the arms' features, ``model="shared"``; or, for a shared context (rows, d), one θ per arm,
``"disjoint"``: the block features e_a ⊗ x, the same norm), its cost c_i, the cost range's middle b
and half-width M, and the weight v_i = 1/(n·p_i) that turns the logging policy's law into uniform
exploration's (1 under uniform logging; at most W = 1/(n·p_min)),

    θ̂ = (λ₀N·I + Σ v z zᵀ)⁻¹ Σ v (c − b) z,

and θ̃ = w(⌊θ̂/w − u⌋ + u + ½) with u uniform on [0, 1)^p from R (the contextual conversion's
rounding, :mod:`replify.components.rounded_ridge`). The policy plays argmin_a of ⟨x_a, θ̃⟩ (shared)
or ⟨x, θ̃_a⟩ (disjoint), the lowest arm on ties.

**The certificate** (ours; the conversion's Efron–Stein argument with weights). Assume the rows iid
(one system, one logging policy), every feature vector of norm at most L (``feature_bound``, 1 by
default; a larger one is refused), every cost in [b − M, b + M] (the cost range, declared), and
every propensity at least p_min (declared). The objective at θ̂ is at most its value at 0, so
E Σ v_j r_j² ≤ N·E[v(c − b)²] = N·(1/n)Σ_a E(c_a − b)² ≤ N M² and E‖θ̂‖² ≤ M²/λ₀ (r = ⟨z, θ̂⟩ − c + b).
Sample j replaced by an independent copy: A′(θ̂′ − θ̂) = v_j z_j r_j − v′z′r′ with A′ ⪰ λ₀N·I, so
‖θ̂′ − θ̂‖² ≤ (2L²W/(λ₀N)²)(v_j r_j² + v′r′²), and E v′r′² ≤ 2M²(1 + L²/λ₀) (E v′ = 1). Efron–Stein:

    E‖θ̂ − Eθ̂‖² ≤ W L² M² (3 + 2L²/λ₀) / (λ₀² N),

so two logs' estimates have E‖θ̂ − θ̂′‖₂ ≤ √W·β/√N with the conversion's β = L·M·sqrt(2(3 + 2L²/λ₀))/λ₀.
On one offset the roundings differ with probability at most E‖θ̂ − θ̂′‖₁/w ≤ √p·√W·β/(w√N); the
width w = √p·√W·β/(ρ·√N) makes it **ρ, for two logs of N rows each** (the fitted part's rows; the
held-out split is drawn from the seed, and the grid's offset from a stream of its own, so that nothing
the data did — how many draws the split took — moves the grid). The width depends on N, so logs of
other sizes part whatever R does (an independent review: logs of 1 000 and 1 001 rows parted in every
pair): ``fit_rows=N`` fits exactly N interactions of each (the rest held out), and the certificate then
holds for logs of any sizes above it. Where p_min or the cost range is not declared, the log's own
are used and the policy is measured, not certified (two logs would not share them). A log whose
propensities were estimated certifies nothing.

**The value.** The held-out part (``holdout``, a fifth by default) estimates the learned policy's
expected cost by IPS with the finite-sample (empirical Bernstein) interval where the log declares
its smallest propensity, else the normal one (:func:`replify.offpolicy.estimate`); on a simulated
log the true value is known, and beside it the value of the same fit unrounded (not replicable).

**The comparison** (:func:`learn_classifier`, uncertified): an importance-weighted classifier — a
multinomial logistic regression of the logged arm on the context, each row weighted by (hi − c)/p, the
reduction of Beygelzimer & Langford (KDD 2009) that the Open Bandit Pipeline's ``IPWLearner`` uses —
fitted on the same rows, scored on the same held-out ones: what a team would use without replicability.

**What it costs** (measured on wine, uniform logging: docs/offpolicy.md): the grid is coarse until
N is large — the policy's mistakes were 0.36 of uniform's at 10⁶ logged rows and 0.13 at 10⁷ in the
plan of :func:`replify.planned_cost`'s kind, against 0.084 for the unrounded fit.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import attrs
import numpy as np

from replify.base.randomness import child, Seed, seed_sequence
from replify.components.rounded_ridge import DEFAULT_LAM, round_on_grid, stability_constant
from replify.errors import InvalidArgumentError, MissingExtraError
from replify.offpolicy.estimators import Estimate, estimate
from replify.offpolicy.log import Log
from replify.offpolicy.select import _baseline, _cost_range, _half_range

MODELS = ("shared", "disjoint")


@attrs.frozen(kw_only=True, eq=False)
class LearnedPolicy:
    """A policy fitted on a log (module docstring): call it on contexts (rows, n, d) or (rows, d) for
    its arms. ``theta`` the rounded estimate (blocks, d), ``width`` its grid's, ``rho_bound`` and
    ``certified`` (else ``note`` says why not), the ``rows`` it was fitted on, ``value`` its estimate on
    the held-out rows, and on a simulated log ``true_value`` and ``unrounded_true_value``."""

    theta: np.ndarray
    model: str
    width: float
    rho_bound: float
    certified: bool
    note: str | None
    rows: int
    value: Estimate | None = None
    true_value: float | None = None
    unrounded_true_value: float | None = None

    def __call__(self, contexts: Any) -> np.ndarray:
        x = np.asarray(contexts, dtype=np.float64)
        if self.model == "shared":
            if x.ndim != 3 or x.shape[2] != self.theta.shape[1]:
                raise InvalidArgumentError(f"contexts must have shape (rows, n, {self.theta.shape[1]}) for a shared "
                                           f"model; got {x.shape}")
            return np.argmin(x @ self.theta[0], axis=1)
        if x.ndim != 2 or x.shape[1] != self.theta.shape[1]:
            raise InvalidArgumentError(f"contexts must have shape (rows, {self.theta.shape[1]}) for a disjoint model; "
                                       f"got {x.shape}")
        return np.argmin(x @ self.theta.T, axis=1)

    @property
    def certificate(self) -> str:
        """What the certificate says, in one line, or why there is none."""
        if not self.certified:
            return self.note or "measured, not certified"
        return (f"certified: rho <= {self.rho_bound:g} for two logs of {self.rows} fitted rows each (logs of other sizes: "
                f"declare fit_rows=, the same for both)")


def learn_policy(log: Log, *, rho: float | np.floating, seed: Seed, model: str | None = None, holdout: float = 0.2,
                 lam: float | None = None, feature_bound: float | None = None, min_propensity: Any = None,
                 cost_bound: Any = None, confidence: float = 0.95, fit_rows: int | None = None) -> LearnedPolicy:
    """A linear policy fitted on ``log`` and rounded on a grid from ``seed``'s R, iid ρ-replicable
    (module docstring), its value estimated on a held-out share ``holdout`` of the rows. ``model``:
    ``"shared"`` for per-arm features (rows, n, d), ``"disjoint"`` for a shared context (rows, d)
    (the default follows the contexts). ``fit_rows=N`` fits exactly N interactions dealt from the log
    (the rest held out): the certificate is for two logs that fit the same number of rows, so logs of
    different sizes declare it."""
    if not isinstance(log, Log):
        raise InvalidArgumentError(f"log must be a replify.offpolicy.Log; got {type(log).__name__}")
    if isinstance(rho, (bool, np.bool_)) or not (isinstance(rho, numbers.Real) and 0.0 < rho < 1.0):
        raise InvalidArgumentError(f"rho must be a number in (0, 1); got {rho!r}")
    model = ("shared" if log.contexts.ndim == 3 else "disjoint") if model is None else model
    if model not in MODELS or (model == "shared") != (log.contexts.ndim == 3):
        raise InvalidArgumentError(f"model must be 'shared' for per-arm features (rows, n, d) or 'disjoint' for a "
                                   f"shared context (rows, d); got {model!r} with contexts of shape {log.contexts.shape}")
    lam0 = DEFAULT_LAM if lam is None else float(lam)
    bound_l = 1.0 if feature_bound is None else float(feature_bound)
    if not (lam0 > 0 and math.isfinite(lam0) and bound_l > 0 and math.isfinite(bound_l)):
        raise InvalidArgumentError(f"lam and feature_bound must be finite numbers > 0; got {lam!r} and {feature_bound!r}")
    norms = np.sqrt(np.einsum("...d,...d->...", log.contexts, log.contexts)).max()
    if norms > bound_l * (1.0 + 1e-12):
        raise InvalidArgumentError(f"{log.name}: a feature vector of norm {norms:.6g}, above feature_bound={bound_l:g} "
                                   "(the certificate assumes the bound: give the bound your features respect)")
    grid, fit, held = _split(log, seed, holdout, fit_rows)
    (lo, hi), ranged = _cost_range(log, cost_bound)
    center, half = _baseline(lo, hi), _half_range(lo, hi)
    p_min = log.min_propensity if min_propensity is None else float(min_propensity)
    if min_propensity is not None and log.min_propensity is not None and p_min > log.min_propensity:
        raise InvalidArgumentError(f"min_propensity={p_min:g}, but {log.name} declares its logging policy's smallest "
                                   f"probability is {log.min_propensity:g}: a larger one contradicts it")
    notes = []
    if log.propensity_model is not None:
        notes.append(f"the logging policy's own propensities ({log.name}'s were {log.propensity_model})")
    if p_min is None:
        p_min = float(log.propensities.min())
        notes.append("the logging policy's smallest propensity, declared (min_propensity=); the log's own was used")
    elif float(log.propensities.min()) < p_min * (1 - 1e-12):
        raise InvalidArgumentError(f"min_propensity={p_min:g}, but {log.name} logs a propensity of "
                                   f"{float(log.propensities.min()):g}")
    if not ranged:
        notes.append("the range of every cost, declared (cost_bound=, or a log's cost_range); the log's own was used")
    theta = _ridge(fit, model, lam0, center)
    big_w = 1.0 / (log.n * p_min)
    beta = math.sqrt(big_w) * stability_constant(lam0, bound_l, half)
    width = math.sqrt(theta.size) * beta / (float(rho) * math.sqrt(fit.rows))
    rounded = round_on_grid(theta, width, grid.random(theta.shape))  # its own stream: what the data did never moves it
    policy = LearnedPolicy(theta=rounded, model=model, width=width, rho_bound=float(rho), certified=not notes,
                           note=None if not notes else "measured, not certified: the certificate needs "
                           + "; and ".join(notes), rows=fit.rows)
    value = _held_out_value(held, policy, confidence)
    unrounded = attrs.evolve(policy, theta=theta)
    truth = None if log.means is None else log.true_value(policy)
    return attrs.evolve(policy, value=value, true_value=truth,
                        unrounded_true_value=None if log.means is None else log.true_value(unrounded))


@attrs.frozen(kw_only=True, eq=False)
class ClassifierPolicy:
    """The uncertified comparison (module docstring, "The comparison"): a fitted scikit-learn
    classifier of the context to the arm, called on contexts for its arms; ``value`` on the held-out
    rows and, on a simulated log, ``true_value``."""

    classifier: Any
    n: int
    value: Estimate | None = None
    true_value: float | None = None

    def __call__(self, contexts: Any) -> np.ndarray:
        x = np.asarray(contexts, dtype=np.float64)
        scores = np.full((x.shape[0], self.n), -np.inf)
        scores[:, self.classifier.classes_] = self.classifier.predict_proba(x.reshape(x.shape[0], -1))
        return np.argmax(scores, axis=1)


def learn_classifier(log: Log, *, seed: Seed, holdout: float = 0.2, confidence: float = 0.95,
                     cost_bound: Any = None, fit_rows: int | None = None) -> ClassifierPolicy:
    """The importance-weighted classifier policy (module docstring, "The comparison"): a multinomial
    logistic regression (scikit-learn) of the logged arm on the context, each row weighted by its
    reward relative to the worst cost over its propensity, (hi − c)/p — the Open Bandit Pipeline's
    ``IPWLearner`` (Beygelzimer & Langford 2009's reduction) — fitted on the same rows
    :func:`learn_policy` fits, its value on the same held-out rows. Not replicable: measured only.
    Needs scikit-learn (``pip install "replify[offpolicy]"``)."""
    try:
        from sklearn.linear_model import LogisticRegression  # an optional extra: imported where it is used
    except ImportError:
        raise MissingExtraError("learn_classifier needs scikit-learn, which is not installed: pip install "
                                "'replify[offpolicy]'") from None
    if not isinstance(log, Log):
        raise InvalidArgumentError(f"log must be a replify.offpolicy.Log; got {type(log).__name__}")
    _, fit, held = _split(log, seed, holdout, fit_rows)  # learn_policy's split, from the same seed
    (lo, hi), _ = _cost_range(log, cost_bound)
    weight = (hi - fit.costs) / fit.propensities * (1.0 if fit.weights is None else fit.weights)
    x = fit.contexts.reshape(fit.stored, -1)
    classifier = LogisticRegression(max_iter=2000).fit(x, fit.actions, sample_weight=weight)
    policy = ClassifierPolicy(classifier=classifier, n=log.n)
    return attrs.evolve(policy, value=_held_out_value(held, policy, confidence),
                        true_value=None if log.means is None else log.true_value(policy))


def _split(log: Log, seed: Seed, holdout: Any, fit_rows: Any) -> tuple[np.random.Generator, Log, Log]:
    """The grid's stream of R, and the log dealt into its fitted and held-out parts from the split's
    stream (children without spawning: a SeedSequence shared by two calls is never moved)."""
    if isinstance(holdout, (bool, np.bool_)) or not (isinstance(holdout, numbers.Real) and 0.0 < holdout < 1.0):
        raise InvalidArgumentError(f"holdout must be the share of rows held out to estimate the value, in (0, 1); got "
                                   f"{holdout!r}")
    if fit_rows is not None and (isinstance(fit_rows, bool) or not isinstance(fit_rows, numbers.Integral)
                                 or not 1 <= fit_rows < log.rows):
        raise InvalidArgumentError(f"fit_rows must be an integer in [1, {log.rows}) (the interactions fitted; the rest of "
                                   f"{log.name} is held out); got {fit_rows!r}")
    root = seed_sequence(seed)
    held_rows = None if fit_rows is None else log.rows - int(fit_rows)
    fit, held = _deal(log, float(holdout), np.random.default_rng(child(root, 1)), held_rows)
    return np.random.default_rng(child(root, 0)), fit, held


def _held_out_value(held: Log, policy: Any, confidence: float) -> Estimate:
    """A learned policy's IPS estimate on the held-out rows: the finite-sample interval where the log
    declares its smallest propensity, else the normal one."""
    return estimate(held, policy, "ips", confidence=confidence,
                    interval="bernstein" if held.min_propensity is not None else "normal")


def _deal(log: Log, share: float, rng: np.random.Generator, held_rows: int | None = None) -> tuple[Log, Log]:
    """The log's interactions dealt at random into a fitted part and a held-out share ``share`` (or
    exactly ``held_rows``; a compact log by its weights: a multivariate hypergeometric draw, exact)."""
    held_rows = int(round(share * log.rows)) if held_rows is None else held_rows
    if not 1 <= held_rows < log.rows:
        raise InvalidArgumentError(f"holdout={share:g} of {log.name}'s {log.rows} rows leaves no row to fit or to "
                                   "hold out")
    if log.weights is None:
        order = rng.permutation(log.stored)
        return log._subset(np.sort(order[held_rows:]), None), log._subset(np.sort(order[:held_rows]), None)
    held = rng.multivariate_hypergeometric(log.weights.astype(np.int64), held_rows)
    kept = log.weights - held
    a, b = np.flatnonzero(kept), np.flatnonzero(held)
    return log._subset(a, kept[a]), log._subset(b, held[b])


def _ridge(log: Log, model: str, lam0: float, center: float) -> np.ndarray:
    """θ̂ of the module docstring on ``log``'s rows (blocks, d)."""
    rows = np.arange(log.stored)
    v = 1.0 / (log.n * log.propensities)
    if log.weights is not None:
        v = v * log.weights
    c = log.costs - center
    if model == "shared":
        z = log.contexts[rows, log.actions]  # the logged arm's features
        gram = (z * v[:, None]).T @ z
        theta = np.linalg.solve(lam0 * log.rows * np.eye(z.shape[1]) + gram, (z * (v * c)[:, None]).sum(axis=0))
        return theta[None]
    x = log.contexts
    out = np.zeros((log.n, x.shape[1]))
    for a in range(log.n):  # a loop over the arms: one block each
        mine = log.actions == a
        z, vv = x[mine], v[mine]
        out[a] = np.linalg.solve(lam0 * log.rows * np.eye(x.shape[1]) + (z * vv[:, None]).T @ z,
                                 (z * (vv * c[mine])[:, None]).sum(axis=0))
    return out
