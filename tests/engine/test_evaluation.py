import json

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.randomness import DATA, child, seed_sequence
from replify.evaluation.stats import binomial_upper_tail, clopper_pearson, t_interval


def test_wrapped_hedge_is_replicable_where_hedge_is_not():
    # Parameters for which the (tightened) proof of thm:general-framework-guarantees-ell-infty
    # certifies rho: 4 blocks, and the eps that certified_eps gives.
    T, n, rho, pairs = 10_000, 10, 0.1, 200
    B = T // 4
    eps = replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B, norm="linf")

    def wrapped(seed):
        return replify.wrap("hedge", n=n, horizon=T, rho=rho, seed=seed, block_size=B, eps=eps)

    report = replify.evaluate(wrapped, "iid-bernoulli", n=n, horizon=T, pairs=pairs, seed=0)
    # The failures are Binomial(200, p) with p <= rho by the theorem. Hedge on [0, 1] Bernoulli
    # costs is far from the worst case the bound is built for (the adversarial audits in
    # test_certificates.py are near it): its drift is a quarter of the charged one and a moved grid
    # point rarely moves Hedge's sampled action, so p is a few per cent at most. The check
    # is that the claim is not refuted: P(Bin(200, 0.1) >= failures) >= 1e-6, a check that a true
    # certificate fails with probability at most 1e-6.
    assert binomial_upper_tail(report.failures, pairs, rho) >= 1e-6
    assert report.regret_mean <= report.regret_bound

    # The same learner unwrapped, with the same seeds: Hedge re-samples every step from weights
    # that differ between S and S', so nearly every pair diverges somewhere.
    plain = replify.evaluate("hedge", "iid-bernoulli", n=n, horizon=T, pairs=pairs, seed=0)
    assert plain.rho_hat >= 0.9
    assert plain.first_divergence_median is not None and plain.agreement_mean < 1.0


def test_hedge_regret_stays_under_its_bound():
    report = replify.evaluate("hedge", "iid-bernoulli", n=10, horizon=10_000, pairs=50, seed=1)
    assert report.regret_bound == pytest.approx(np.sqrt(10_000 * np.log(10) / 2))
    assert report.regret_ci[1] <= report.regret_bound


class FollowTheLeader:
    """Deterministic, no run(): drives the step-by-step path of evaluate()."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon, self.total = n, horizon, np.zeros(n)

    def act(self):
        return int(np.argmin(self.total))

    def update(self, cost):
        self.total += cost


def test_report_matches_a_hand_computation_of_every_pair():
    n, T, pairs, seed = 3, 400, 12, 5
    report = replify.evaluate(
        lambda s: FollowTheLeader(n=n, horizon=T, rng=None), "iid-bernoulli", n=n, horizon=T, pairs=pairs,
        seed=seed, adversary_params={"means": [0.1, 0.6, 0.9]},
    )
    root = seed_sequence(seed)
    means = np.array([0.1, 0.6, 0.9])
    for k in range(pairs):
        runs, regrets = [], []
        for side in (0, 1):
            costs = (np.random.default_rng(child(root, DATA, k, side)).random((T, n)) < means).astype(float)
            cum = np.vstack([np.zeros(n), np.cumsum(costs, axis=0)[:-1]])
            actions = np.argmin(cum, axis=1)
            runs.append(actions)
            regrets.append(costs[np.arange(T), actions].sum() - costs.sum(axis=0).min())
        same = runs[0] == runs[1]
        assert report.identical[k] == same.all()
        assert report.agreement[k] == same.mean()
        assert report.first_divergence[k] == (0 if same.all() else np.argmin(same) + 1)
        assert np.array_equal(report.regret[k], regrets)
    assert 0 < report.failures < pairs  # both outcomes occur, so the check above is not vacuous
    assert report.rho_ci == clopper_pearson(report.failures, pairs)
    assert report.regret_ci == t_interval(report.regret.mean(axis=1))


def test_a_learner_without_run_is_stepped_and_gives_the_same_report():
    class StepOnly:
        def __init__(self, inner):
            self.inner = inner

        def act(self):
            return self.inner.act()

        def update(self, cost):
            self.inner.update(cost)

    kw = dict(n=4, horizon=500, pairs=6, seed=2)
    a = replify.evaluate("hedge", "iid-bernoulli", **kw)
    b = replify.evaluate(lambda s: StepOnly(replify.make("hedge", n=4, horizon=500, seed=s)), "iid-bernoulli", **kw)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.first_divergence, b.first_divergence)


def test_point_masses_are_replicated_by_any_learner_that_shares_its_randomness():
    costs = np.random.default_rng(3).random((300, 4))
    report = replify.evaluate("hedge", "point-mass", n=4, horizon=300, pairs=5, seed=0, adversary_params={"costs": costs})
    assert report.rho_hat == 0.0 and report.agreement_mean == 1.0 and report.first_divergence_median is None


def test_same_seed_same_report_and_to_dict_is_json():
    kw = dict(n=3, horizon=200, pairs=8, adversary_params={"means": 0.3})
    a = replify.evaluate("ftpl", "iid-bernoulli", seed=9, **kw)
    b = replify.evaluate("ftpl", "iid-bernoulli", seed=9, **kw)
    c = replify.evaluate("ftpl", "iid-bernoulli", seed=10, **kw)
    assert a.to_dict(per_pair=True) == b.to_dict(per_pair=True)
    assert not np.array_equal(a.regret, c.regret)
    d = json.loads(json.dumps(a.to_dict(per_pair=True)))
    assert d["rho_hat"] == a.rho_hat and d["rho_ci"] == list(a.rho_ci) and len(d["regret"]) == 8
    assert d["seed"] == 9 and d["learner"] == "ftpl" and d["adversary"] == "iid-bernoulli"


def test_report_carries_the_wrapped_learners_parameters():
    report = replify.evaluate(
        lambda s: replify.wrap("hedge", n=3, horizon=1000, rho=0.2, seed=s, block_size=100),
        "iid-bernoulli", n=3, horizon=1000, pairs=3, seed=0,
    )
    assert report.params["block_size"] == 100 and report.params["theorem"].startswith("thm:general-framework")
    assert report.regret_bound == report.params["regret_bound"]


def test_rho_is_passed_to_a_registered_replicable_learner():
    seen = {}

    class Replicable(FollowTheLeader):
        def __init__(self, *, n, horizon, rng, rho):
            super().__init__(n=n, horizon=horizon, rng=rng)
            seen["rho"] = rho

    class Plugin:
        @replify.hookimpl
        def register_learners(self, register):
            register(replify.LearnerSpec("throwaway-replicable", Replicable, "experts", guarantee="adversarial"))

    plugin = Plugin()
    replify.registry().register(plugin)
    try:
        replify.evaluate("throwaway-replicable", "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0, rho=0.25)
        assert seen["rho"] == 0.25
        with pytest.raises(InvalidArgumentError, match=r"'throwaway-replicable' is adversarial-replicable and needs rho"):
            replify.make("throwaway-replicable", n=3, horizon=50, seed=0)
    finally:
        replify.registry().unregister(plugin)


def test_evaluate_accepts_a_distribution_sequence_object():
    seq = replify.make_adversary("iid-bernoulli", n=3, horizon=100, seed=1, means=0.2)
    report = replify.evaluate("ftpl", seq, n=3, horizon=100, pairs=3, seed=0)
    assert report.adversary == "IidBernoulli"
    with pytest.raises(InvalidArgumentError, match="adversary_params applies only"):
        replify.evaluate("ftpl", seq, n=3, horizon=100, pairs=3, seed=0, adversary_params={"means": 0.1})


def test_evaluate_refuses_vector_actions_with_a_clear_error():
    class Vector(FollowTheLeader):
        def act(self):
            return np.full(self.n, 1.0 / self.n)

    with pytest.raises(replify.errors.ActionError, match=r"expected an integer expert index"):
        replify.evaluate(lambda s: Vector(n=3, horizon=10, rng=None), "iid-bernoulli", n=3, horizon=10, pairs=2, seed=0)
