"""The reduction in the proof of ``thm:lower_bound_n=2_vanilla_replicability_experts``: a
low-regret learner on the coin costs c_t = (ĉ_t, 1 − ĉ_t) plays the cheaper expert most of the
time, so the majority of its actions decodes the coin's bias (:func:`majority_decoder`,
:func:`coin_reduction`)."""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from replify.base.checks import check_int, public
from replify.errors import InvalidArgumentError
from replify.evaluation.evaluate import evaluate
from replify.evaluation.stats import clopper_pearson, t_interval
from replify.plugins.factory import make_adversary


def majority_decoder(actions: Any) -> int:
    """The expert (0 or 1) played on most steps — the proof's decoder: expert 2 (index 1) in
    the majority means "bias ½ + τ". Ties go to expert 1 (index 0)."""
    a = np.asarray(actions)
    if a.ndim != 1 or a.size == 0 or not np.isin(a, (0, 1)).all():
        raise InvalidArgumentError(f"actions must be a non-empty sequence of experts 0 and 1, got shape {a.shape}")
    return int(np.count_nonzero(a == 1) > a.size / 2)


@attrs.frozen(kw_only=True)
class CoinReduction:
    """What the reduction measured over both signs of the coin: the decoder's success rate (one
    run per pair, so the trials are independent) with an exact interval, ρ̂ with an exact
    interval, and regret with a t interval."""

    tau: float
    horizon: int
    pairs: int
    successes: int
    trials: int
    failures: int
    regret_mean: float
    regret_ci: tuple[float, float]
    regret_bound: float | None

    @property
    def success_rate(self) -> float:
        return self.successes / self.trials

    @property
    def success_ci(self) -> tuple[float, float]:
        return clopper_pearson(self.successes, self.trials)

    @property
    def rho_hat(self) -> float:
        return self.failures / (2 * self.pairs)

    @property
    def rho_ci(self) -> tuple[float, float]:
        return clopper_pearson(self.failures, 2 * self.pairs)


@public
def coin_reduction(
    learner: str | Callable[..., Any], *, horizon: int, pairs: int, seed: int, tau: float | None = None,
    K: float | None = None, rho: float | None = None, **overrides: Any,
) -> CoinReduction:
    """Run ``learner`` on the coin adversary with s = +1 and s = −1 (``pairs`` pairs each) and
    decode every first run of a pair by :func:`majority_decoder`."""
    horizon, pairs = check_int("horizon", horizon, minimum=1), check_int("pairs", pairs, minimum=2)
    tau = make_adversary("coin", n=2, horizon=horizon, seed=seed, tau=tau, K=K, sign=1).tau  # tau, or K/(T/16)
    successes = failures = 0
    per_pair, bound = [], None
    for k, sign in enumerate((1, -1)):
        report = evaluate(
            learner, "coin", n=2, horizon=horizon, pairs=pairs, seed=seed * 2 + k, rho=rho,
            adversary_params={"tau": tau, "sign": sign}, **overrides,
        )
        best = 1 if sign > 0 else 0
        decoded = (report.action_counts[:, 0, 1] > horizon / 2).astype(int)  # the decoder, from the counts
        successes += int((decoded == best).sum())
        failures += report.failures
        per_pair.append(report.regret.mean(axis=1))
        bound = report.regret_bound
    regrets = np.concatenate(per_pair)
    return CoinReduction(
        tau=tau, horizon=horizon, pairs=pairs, successes=successes,
        trials=2 * pairs, failures=failures, regret_mean=float(regrets.mean()), regret_ci=t_interval(regrets),
        regret_bound=bound,
    )
