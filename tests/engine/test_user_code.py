"""The engine for users' own code: a learner class, a partial of one, or a callable
seed -> learner wherever a learner is accepted; sweeps over Python callables with overrides."""

import functools
import json

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.base.randomness import INTERNAL, child, seed_sequence

from conftest import RandomHedge


class TunedHedge:
    """A user's learner with a hyperparameter: exponential weights at rate ``eta``, greedy (so
    that its runs part on close means), with rho accepted and recorded (a replicable learner of
    the user's)."""

    def __init__(self, *, n, horizon, rng, eta=0.5, rho=None):
        self.n, self.horizon, self.eta, self.rho = n, horizon, eta, rho
        self.loss = np.zeros(n)
        self.noise = rng.random(n) * 1e-9

    def act(self):
        return int(np.argmin(self.eta * self.loss - self.noise))

    def update(self, cost):
        self.loss += cost


def test_evaluate_accepts_a_learner_class_as_it_is():
    report = replify.evaluate(RandomHedge, "iid-bernoulli", n=4, horizon=500, pairs=6, seed=0)
    by_hand = replify.evaluate(lambda s: RandomHedge(n=4, horizon=500, rng=np.random.default_rng(s)), "iid-bernoulli",
                               n=4, horizon=500, pairs=6, seed=0)
    assert report.learner == "MyHedge"
    # the class is built as the callable builds it: rng = default_rng(the pair's seed)
    assert np.array_equal(report.regret, by_hand.regret) and np.array_equal(report.identical, by_hand.identical)


def test_a_partial_and_overrides_reach_the_users_factory():
    a = replify.evaluate(functools.partial(TunedHedge, eta=2.0), "iid-bernoulli", n=3, horizon=300, pairs=4, seed=1)
    b = replify.evaluate(TunedHedge, "iid-bernoulli", n=3, horizon=300, pairs=4, seed=1, eta=2.0, rho=0.3)
    assert a.learner == "TunedHedge(eta=2.0)"
    assert np.array_equal(a.regret, b.regret)
    seen = []

    def spy(*, n, horizon, rng, **kw):
        seen.append(kw)
        return TunedHedge(n=n, horizon=horizon, rng=rng, **kw)

    replify.evaluate(spy, "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0, eta=0.7, rho=0.2)
    assert seen and all(kw == {"eta": 0.7, "rho": 0.2} for kw in seen)


def test_what_a_users_factory_cannot_take_is_refused_by_name():
    with pytest.raises(InvalidArgumentError, match=r"learner factory 'MyHedge' does not accept 'block_size'; it accepts horizon, n, rng"):
        replify.evaluate(RandomHedge, "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0, block_size=10)
    with pytest.raises(InvalidArgumentError, match=r"rho applies only when learner is a registered name, a factory .* callable seed -> learner"):
        replify.evaluate(lambda s: RandomHedge(n=3, horizon=100, rng=np.random.default_rng(s)), "iid-bernoulli", n=3,
                         horizon=100, pairs=2, seed=0, rho=0.1)
    with pytest.raises(replify.errors.ArgumentTypeError, match=r"learner must be a registered name .*; got 3 \(int\)"):
        replify.evaluate(3, "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0)


def test_a_learner_class_runs_the_same_in_parallel():
    kw = dict(n=4, horizon=400, pairs=6, seed=2)
    one = replify.evaluate(TunedHedge, "iid-bernoulli", n_jobs=1, **kw)
    two = replify.evaluate(TunedHedge, "iid-bernoulli", n_jobs=2, **kw)
    assert one.to_dict(per_pair=True) == two.to_dict(per_pair=True)


def test_stress_and_the_coin_reduction_take_a_learner_class():
    found = replify.stress(TunedHedge, n=2, horizon=400, budget=64, seed=0, eta=1.0)
    assert found.learner == "TunedHedge" and found.pairs_used <= 64
    # A greedy leader on ties parts its runs; 64 pairs: the worst candidate's rate is high.
    assert found.worst.rho_hat > 0.3
    from replify.experiments.lower_bounds import coin_reduction

    coin = coin_reduction(TunedHedge, horizon=400, pairs=4, seed=0, K=4)
    assert coin.trials == 8


def test_sweep_over_names_callables_and_overrides(tmp_path):
    learners = [
        "hedge",
        RandomHedge,
        {"learner": functools.partial(TunedHedge, eta=0.3), "label": "tuned-0.3"},
        {"learner": TunedHedge, "eta": 3.0},
        {"learner": "ftplb-star", "eps": 0.01, "block_size": 100},
    ]
    kw = dict(adversaries=["iid-bernoulli"], horizons=[400], ns=[3], pairs=4, seed=0, rhos=[0.1])
    with pytest.warns(replify.errors.ReplicabilityWarning):  # ftplb-star's eps=0.01 does not certify 0.1
        res = replify.sweep(learners=learners, path=tmp_path / "s.jsonl", **kw)
    records = {r["learner"]: r for r in res.records()}
    assert list(records) == ["hedge", "MyHedge", "tuned-0.3", "TunedHedge(eta=3.0)", "ftplb-star(block_size=100, eps=0.01)"]
    assert records["ftplb-star(block_size=100, eps=0.01)"]["block_size"] == 100
    assert records["ftplb-star(block_size=100, eps=0.01)"]["eps"] == 0.01
    assert records["TunedHedge(eta=3.0)"]["rho"] == 0.1  # it accepts rho
    assert records["MyHedge"]["rho"] is None  # it does not
    # each row is what evaluate gives for the same learner and row seed
    row = res.rows[3]
    direct = replify.evaluate(TunedHedge, "iid-bernoulli", n=3, horizon=400, pairs=4, seed=row["seed"], rho=0.1, eta=3.0)
    assert row["report"]["regret_mean"] == direct.regret_mean
    # rows are reused from the file by label and overrides
    again = replify.sweep(learners=learners, path=tmp_path / "s.jsonl", **kw)  # reused rows: nothing runs, nothing warns
    assert again.reused == len(learners)
    lines = [json.loads(x) for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert lines[4]["config"]["overrides"] == {"block_size": 100, "eps": 0.01}


def test_sweep_refuses_two_learners_under_one_label():
    with pytest.raises(InvalidArgumentError, match=r"two learners of the sweep have the label 'x'"):
        replify.sweep(learners=[{"learner": TunedHedge, "label": "x"}, {"learner": RandomHedge, "label": "x"}],
                      adversaries=["iid-bernoulli"], horizons=[100], ns=[3], pairs=2, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"a learner given as a dict needs a 'learner' key"):
        replify.sweep(learners=[{"eta": 1.0}], adversaries=["iid-bernoulli"], horizons=[100], ns=[3], pairs=2, seed=0)


def test_the_factory_build_is_the_pairs_learner():
    from replify.sources import learner_arg

    arg = learner_arg(TunedHedge)
    learner = arg.builder(n=3, horizon=10, params={"eta": 0.25})(child(seed_sequence(0), INTERNAL, 0))
    assert isinstance(learner, TunedHedge) and learner.eta == 0.25 and arg.spec is None and arg.label == "TunedHedge"
    assert arg.kind == "factory"


class MixedHedge:
    """Exponential weights that play the distribution itself (a mixed strategy)."""

    mixed = True

    def __init__(self, *, n, horizon, rng, eta=0.5):
        self.n, self.eta, self.loss = n, eta, np.zeros(n)

    def act(self):
        w = np.exp(-self.eta * (self.loss - self.loss.min()))
        return w / w.sum()

    def update(self, cost):
        self.loss += cost


class MixedHedgeRun(MixedHedge):
    def run(self, costs):
        out = np.empty_like(costs)
        for t, c in enumerate(costs):
            out[t] = self.act()
            self.update(c)
        return out


@pytest.mark.parametrize("cls", [MixedHedge, MixedHedgeRun])
def test_a_mixed_strategy_is_sampled_from_the_pairs_stream_and_pays_its_expected_cost(cls):
    from replify.engine.outcomes import step_costs  # noqa: F401 - the engine's accounting is what is checked
    from replify.base.randomness import DATA, MIXED

    n, T = 3, 400
    report = replify.evaluate(cls, "iid-bernoulli", n=n, horizon=T, pairs=4, seed=2, adversary_params={"means": [0.4, 0.5, 0.6]})
    root = seed_sequence(2)
    for k in range(4):
        u = np.random.default_rng(child(root, INTERNAL, k, MIXED)).random(T)  # one stream, both runs
        runs = []
        for side in (0, 1):
            learner = cls(n=n, horizon=T, rng=None)
            costs = replify.make_adversary("iid-bernoulli", n=n, horizon=T, seed=0, means=[0.4, 0.5, 0.6]).sample(
                np.random.default_rng(child(root, DATA, k, side)))
            probs = np.array([(learner.act(), learner.update(c))[0] for c in costs])
            cdf = np.cumsum(probs, axis=1)
            runs.append((cdf < u[:, None] * cdf[:, -1:]).sum(axis=1))
            expected_paid = np.cumsum((probs * costs).sum(axis=1))[-1]  # regret on the expected loss
            assert report.regret[k, side] == pytest.approx(expected_paid - costs.sum(axis=0).min(), abs=1e-9)
            assert np.array_equal(np.bincount(runs[-1], minlength=n), report.action_counts[k, side])
        assert report.identical[k] == np.array_equal(*runs)


def test_a_mixed_strategy_on_identical_costs_is_replicable():
    # The same costs in both runs (a point mass) give the same distributions; the shared uniforms
    # then give the same actions: rho_hat = 0 exactly. Independent sampling would part them.
    costs = (np.random.default_rng(0).random((300, 3)) < 0.5).astype(float)
    r = replify.evaluate(MixedHedge, "point-mass", n=3, horizon=300, pairs=20, seed=0, adversary_params={"costs": costs})
    assert r.rho_hat == 0.0 and r.action_counts.sum() == 20 * 2 * 300


def test_a_mixed_learner_that_plays_no_distribution_is_refused_with_the_step():
    class Broken(MixedHedge):
        def act(self):
            return np.array([0.5, 0.6, -0.1]) if self.loss.sum() > 3 else super().act()

    with pytest.raises(replify.errors.ActionError, match=r"a mixed learner returned \[0\.5, 0\.6, -0\.1\] at step \d+; expected a probability vector"):
        replify.evaluate(Broken, "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0)


class BlockedLeader:
    """A user's replicable-by-design learner: follow the leader, re-decided every ``block``
    steps with noise of scale ``noise`` drawn from its own rng (the paper's recipe, by hand)."""

    def __init__(self, *, n, horizon, rng, block=1000, noise=1.0):
        self.n, self.block, self.rng = n, block, rng
        self.noise_scale, self.t, self.loss, self.choice = noise, 0, np.zeros(n), 0

    def act(self):
        return self.choice

    def update(self, cost):
        self.loss += cost
        self.t += 1
        if self.t % self.block == 0:
            self.choice = int(np.argmin(self.loss - self.rng.exponential(self.noise_scale, self.n)))

    def run(self, costs):
        """The same as stepping, a block at a time."""
        out = np.empty(len(costs), dtype=np.int64)
        pos = 0
        while pos < len(costs):
            stop = min(len(costs), pos + self.block - self.t % self.block)
            out[pos:stop] = self.choice
            self.loss += costs[pos:stop].sum(axis=0)
            self.t += stop - pos
            if self.t % self.block == 0:
                self.choice = int(np.argmin(self.loss - self.rng.exponential(self.noise_scale, self.n)))
            pos = stop
        return out


def test_calibrate_a_users_learner_over_its_own_grid():
    # Greedy (noise 1) re-decisions part the runs on ties; heavy noise (1e6) keeps them together
    # but learns nothing. The calibration must pick a setting whose every test decided "below".
    # refine_pairs=100 (default 400) here and below: what is checked is the knobs chosen and their tests
    grid = [{"block": 250, "noise": 1.0}, {"block": 250, "noise": 300.0}, {"block": 250, "noise": 1e6}]
    cal = replify.calibrate(BlockedLeader, n=3, horizon=1_000, rho=0.2, seed=0, budget=6_000, test_pairs=600, grid=grid,
                            refine_pairs=100)
    assert cal.learner == "BlockedLeader" and cal.certified_knobs is None and cal.certified_regret is None
    assert cal.knobs in grid and cal.knobs["noise"] > 1.0  # the greedy one parts its runs on ties
    assert {c.adversary for c in cal.checks} >= {"iid-bernoulli", "ties", "crossing"}
    assert all(c.decision == "below" for c in cal.checks)
    learner = cal.make(0)
    assert isinstance(learner, BlockedLeader) and learner.noise_scale == cal.knobs["noise"]
    with pytest.raises(InvalidArgumentError, match=r"register\(\) names registered learners' calibrations"):
        cal.register()
    as_given = replify.calibrate(BlockedLeader, n=3, horizon=1_000, rho=0.2, seed=0, budget=6_000, test_pairs=600,
                                 refine_pairs=100)
    assert as_given.knobs == {} and as_given.candidates_tried == 1  # no grid: the learner as given
    json.dumps(cal.to_dict())
