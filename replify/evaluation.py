"""The paired-run replicability check (paper §2): ρ̂ and regret over many pairs of runs that
share the learner's randomness R and see two independent draws S, S' of the costs."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import attrs
import numpy as np

from .checks import check_action, check_int, check_real, public
from .errors import ActionError, CostError, InvalidArgumentError
from .actions import ActionSet
from .factory import make, make_adversary
from .plugins import registry
from .randomness import ADVERSARY, DATA, INTERNAL, Streams, child, seed_sequence
from .stats import clopper_pearson, t_interval


def _seed_record(seed: Any) -> Any:
    if isinstance(seed, np.random.SeedSequence):
        return {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)}
    return seed


@attrs.frozen(eq=False, kw_only=True)
class Report:
    """What :func:`evaluate` measured, pair by pair, and its summaries.

    Per pair: ``identical`` (the two whole action sequences agree), ``agreement`` (fraction of
    steps on which they agree), ``first_divergence`` (the first step, counted from 1 as in the
    paper, on which they differ; 0 when they never do) and ``regret`` (shape ``(pairs, 2)``,
    each run against the best fixed action in hindsight on its own costs).
    """

    learner: str
    adversary: str
    n: int
    horizon: int
    pairs: int
    seed: Any
    confidence: float
    identical: np.ndarray
    agreement: np.ndarray
    first_divergence: np.ndarray
    regret: np.ndarray
    params: dict[str, Any] | None
    regret_bound: float | None

    @property
    def failures(self) -> int:
        """Pairs whose two action sequences differ somewhere."""
        return int(self.pairs - self.identical.sum())

    @property
    def rho_hat(self) -> float:
        """The estimated probability that the two runs of a pair differ."""
        return self.failures / self.pairs

    @property
    def rho_ci(self) -> tuple[float, float]:
        """Exact (Clopper–Pearson) interval for ρ at level ``confidence``."""
        return clopper_pearson(self.failures, self.pairs, self.confidence)

    @property
    def agreement_mean(self) -> float:
        return float(self.agreement.mean())

    @property
    def first_divergence_median(self) -> float | None:
        """Median first divergent step over the pairs that diverge (None if none does)."""
        steps = self.first_divergence[self.first_divergence > 0]
        return float(np.median(steps)) if steps.size else None

    @property
    def regret_mean(self) -> float:
        return float(self.regret.mean())

    @property
    def regret_ci(self) -> tuple[float, float]:
        """Student's t interval for the expected regret at level ``confidence``. The two runs of
        a pair share R, so the interval is built on the per-pair mean regrets, which are iid."""
        return t_interval(self.regret.mean(axis=1), self.confidence)

    def to_dict(self, *, per_pair: bool = False) -> dict[str, Any]:
        """A JSON-ready summary (``per_pair=True`` adds the per-pair arrays)."""
        out: dict[str, Any] = {
            "learner": self.learner,
            "adversary": self.adversary,
            "n": self.n,
            "horizon": self.horizon,
            "pairs": self.pairs,
            "seed": _seed_record(self.seed),
            "confidence": self.confidence,
            "failures": self.failures,
            "rho_hat": self.rho_hat,
            "rho_ci": list(self.rho_ci),
            "agreement_mean": self.agreement_mean,
            "first_divergence_median": self.first_divergence_median,
            "regret_mean": self.regret_mean,
            "regret_ci": list(self.regret_ci),
            "regret_bound": self.regret_bound,
            "params": self.params,
        }
        if per_pair:
            out |= {
                "identical": self.identical.tolist(),
                "agreement": self.agreement.tolist(),
                "first_divergence": self.first_divergence.tolist(),
                "regret": self.regret.tolist(),
            }
        return out


def play(learner: Any, costs: np.ndarray, *, n: int, problem: str = "experts") -> np.ndarray:
    """The actions of ``learner`` on ``costs``: its own ``run`` when it has one, otherwise
    act()/update() step by step (the only way to drive an arbitrary black-box learner).
    Experts actions come back as ``(T,)`` indices, OLO actions as ``(T, n)`` vectors."""
    horizon = costs.shape[0]
    if callable(getattr(learner, "run", None)):
        actions = np.asarray(learner.run(costs))
        if problem == "experts":
            ok = actions.shape == (horizon,) and actions.dtype.kind in "iu"
            if not ok or (horizon and not (actions.min() >= 0 and actions.max() < n)):
                raise ActionError(
                    f"learner.run() must return {horizon} integer expert indices in [0, {n}); "
                    f"got an array of shape {actions.shape} and dtype {actions.dtype}"
                )
        elif actions.shape != (horizon, n) or actions.dtype.kind not in "iuf" or not np.isfinite(actions).all():
            raise ActionError(
                f"learner.run() must return {horizon} finite action vectors, shape ({horizon}, {n}); "
                f"got shape {actions.shape} and dtype {actions.dtype}"
            )
        return actions
    out = np.empty(horizon, dtype=np.int64) if problem == "experts" else np.empty((horizon, n))
    for t in range(horizon):
        out[t] = check_action(learner.act(), n=n, problem=problem, step=t + 1, source="learner.act()")
        learner.update(costs[t])
    return out


def regret(costs: np.ndarray, actions: np.ndarray, action_set: ActionSet | None = None) -> float:
    """Σ_t cost(a_t, c_t) − min_a Σ_t cost(a, c_t) (paper §2): c_t(a_t) for experts (integer
    actions), a_t·c_t over ``action_set`` for OLO (vector actions)."""
    if actions.ndim == 1:
        return float(costs[np.arange(costs.shape[0]), actions].sum() - costs.sum(axis=0).min())
    if action_set is None:
        raise InvalidArgumentError(
            "the regret of vector (OLO) actions needs the action set: pass actions= to evaluate(), "
            "or give the learner an action_set attribute"
        )
    return float(np.einsum("ij,ij->", actions, costs) - action_set.min_cost(costs.sum(axis=0)))


def _divergence(a: np.ndarray, b: np.ndarray) -> tuple[bool, float, int]:
    same = a == b if a.ndim == 1 else (a == b).all(axis=1)
    first = 0 if same.all() else int(np.argmin(same)) + 1
    return first == 0, float(same.mean()), first


@public
def evaluate(
    learner: str | Callable[[np.random.SeedSequence], Any],
    adversary: str | Any,
    *,
    n: int,
    horizon: int,
    pairs: int,
    seed: int | np.random.SeedSequence,
    rho: float | None = None,
    actions: ActionSet | None = None,
    adversary_params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    **overrides: Any,
) -> Report:
    """Measure replicability and regret over ``pairs`` paired runs (paper §2).

    ``learner`` is a registered name (built with :func:`replify.make`, passing on ``rho``,
    ``actions`` and ``overrides`` such as ``block_size=``) or a callable ``seed -> learner``. Pair k builds the learner twice from the
    same seed — the two runs share R — and runs one copy on each of two independent draws S, S'
    of ``adversary`` (a registered name built with ``adversary_params``, or a distribution
    sequence). The adversary is built once, from the evaluation seed's ``adversary`` stream.
    Every pair has its own child seeds, so results do not depend on how the pairs are run.

    Returns a :class:`Report`: ρ̂ with an exact Clopper–Pearson interval, the agreement and
    first divergence of the two runs, and regret with a t interval, beside the learner's
    parameters and regret bound when it declares them.
    """
    n = check_int("n", n, minimum=2)
    horizon = check_int("horizon", horizon, minimum=1)
    pairs = check_int("pairs", pairs, minimum=2)
    confidence = check_real("confidence", confidence)
    if not 0.0 < confidence < 1.0:
        raise InvalidArgumentError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    root = seed_sequence(seed)
    streams = Streams(root)

    if isinstance(adversary, str):
        seq = make_adversary(adversary, n=n, horizon=horizon, seed=streams.sequence(ADVERSARY), **dict(adversary_params or {}))
        adversary_label = adversary
    else:
        if adversary_params:
            raise InvalidArgumentError("adversary_params applies only when adversary is a registered name")
        if not callable(getattr(adversary, "sample", None)):
            raise InvalidArgumentError(
                f"adversary must be a registered name or an object with sample(rng); got {type(adversary).__name__}"
            )
        seq, adversary_label = adversary, type(adversary).__name__

    spec = None
    if isinstance(learner, str):
        spec = registry().learner(learner)
        name = learner
        build = lambda s: make(name, n=n, horizon=horizon, seed=s, rho=rho, actions=actions, **overrides)  # noqa: E731
        label = learner
    else:
        if not callable(learner):
            raise InvalidArgumentError(f"learner must be a registered name or a callable seed -> learner, got {learner!r}")
        given = [k for k, v in (("rho", rho), *overrides.items()) if v is not None]
        if given:
            raise InvalidArgumentError(
                f"{', '.join(given)} applies only when learner is a registered name; pass it inside your callable"
            )
        build, label = learner, getattr(learner, "__qualname__", type(learner).__name__)

    identical = np.empty(pairs, dtype=bool)
    agreement = np.empty(pairs)
    first = np.empty(pairs, dtype=np.int64)
    regrets = np.empty((pairs, 2))
    params = None
    for k in range(pairs):  # one Python iteration per pair: each pair builds two learners
        pair_seed = child(root, INTERNAL, k)
        runs = []
        for side in (0, 1):
            run_learner = build(pair_seed)
            for attr, expected in (("n", n), ("horizon", horizon)):
                got = getattr(run_learner, attr, expected)
                if got != expected:
                    raise InvalidArgumentError(f"learner built with {attr}={got}, but evaluate() was given {attr}={expected}")
            costs = np.asarray(seq.sample(np.random.default_rng(child(root, DATA, k, side))))
            if costs.shape != (horizon, n) or not np.isfinite(costs).all():
                raise CostError(
                    f"adversary {adversary_label!r} must sample finite costs of shape ({horizon}, {n}); "
                    f"got shape {costs.shape}"
                )
            problem = getattr(run_learner, "problem", spec.problem if spec is not None else "experts")
            played = play(run_learner, costs, n=n, problem=problem)
            regrets[k, side] = regret(costs, played, getattr(run_learner, "action_set", None) or actions)
            runs.append(played)
            if params is None and hasattr(run_learner, "params"):
                p = run_learner.params
                params = p.to_dict() if hasattr(p, "to_dict") else dict(p)
        identical[k], agreement[k], first[k] = _divergence(*runs)

    bound = None
    if params is not None and params.get("regret_bound") is not None:
        bound = float(params["regret_bound"])
    elif spec is not None and spec.regret_bound is not None and spec.parameters is None and spec.guarantee is None:
        bound = float(spec.regret_bound(horizon=horizon, n=n))
    return Report(
        learner=label,
        adversary=adversary_label,
        n=n,
        horizon=horizon,
        pairs=pairs,
        seed=seed,
        confidence=confidence,
        identical=identical,
        agreement=agreement,
        first_divergence=first,
        regret=regrets,
        params=params,
        regret_bound=bound,
    )
