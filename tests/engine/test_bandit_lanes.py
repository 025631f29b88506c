"""The lane-batched form of bandit learners: every lane of a group advances in one call per step,
and a pair's results are the same floats as when each run is stepped alone — for every built-in
that offers the form, on several adversaries, across chunk and group boundaries."""

import math

import numpy as np
import pytest
import typeguard

import replify
import replify.components.bandit_lanes as bandit_lanes
import replify.engine.paths as paths
import replify.engine.run as run
from replify.components.bandit_lanes import BanditLanes, LaneBandit
from replify.engine import limits as engine  # the engine's sizes, which tests shrink
from replify.errors import ActionError, LearnerProtocolError
from replify.testing import check_lanes_equal_stepping
from replify_plugins.bandits.thompson import ThompsonLanes
from replify_plugins.contextual.linucb import LinEpsGreedy

from test_engine import UniformCosts

#: Every field of a report that a pair's runs decide.
FIELDS = ("regret", "identical", "first_divergence", "agreement", "action_counts", "pseudo_regret", "regret_curve",
          "constant_regret", "disagreement_counts", "agreement_curve")


def stepped_alone(monkeypatch):
    """Turn the lane form off: the engine then plays every lane's learner by itself."""
    monkeypatch.setattr(paths, "lane_form", lambda learners: None)
    monkeypatch.setattr(run, "offers_lanes", lambda learner: False)


def same(x, y, field):
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys(), field
        for key in x:
            same(x[key], y[key], f"{field}[{key!r}]")
    elif isinstance(x, tuple):
        assert isinstance(y, tuple) and len(x) == len(y), field
        for u, v in zip(x, y):
            same(u, v, field)
    elif x is None or y is None:
        assert x is None and y is None, field
    else:
        x, y = np.asarray(x), np.asarray(y)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), field


def same_reports(a, b):
    for field in FIELDS:
        same(getattr(a, field), getattr(b, field), field)


LEARNERS = {
    "ucb1": {},
    "exp3": {},
    "exp3-doubling": {},
    "thompson": {},
}
ADVERSARIES = {
    "bernoulli-arms": {"gap": 0.2},
    "switching-bernoulli": {"means": [[0.2, 0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5, 0.2]], "switch_at": [150]},
    "drifting-bernoulli": {"start": 0.2, "end": 0.8},
    "coin": {"tau": 0.1},
}


@pytest.mark.parametrize("adversary", sorted(ADVERSARIES))
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_lanes_play_every_pair_as_stepping_alone_does(learner, adversary, monkeypatch):
    # chunks of 37 steps and groups of 3 pairs (4 pairs: groups of 3 and 1)
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 2 * 3 * 5 * 8 * 37)
    monkeypatch.setattr(engine, "LANE_GROUP_PAIRS", 3)
    n = 2 if adversary == "coin" else 5
    kw = dict(n=n, horizon=250, pairs=4, seed=4, adversary_params=ADVERSARIES[adversary], progress=False)
    lanes = replify.evaluate(learner, adversary, **kw)
    with monkeypatch.context() as m:
        stepped_alone(m)
        alone = replify.evaluate(learner, adversary, **kw)
    same_reports(lanes, alone)


@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_lanes_on_fractional_costs_and_a_whole_sequence_adversary(learner, chunked, monkeypatch):
    # fractional costs (Thompson's coin flips), and an adversary with only sample(rng): its lanes'
    # draws are held by the group (a budget of three pairs' draws: groups of 3 and 2)
    monkeypatch.setattr(engine, "WHOLE_LANES_BYTES", 3 * 2 * 300 * 4 * 8)
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 6 * 4 * 8 * 50)
    seq = UniformCosts(4, 300, chunked=chunked)
    kw = dict(n=4, horizon=300, pairs=5, seed=9, progress=False)
    lanes = replify.evaluate(learner, seq, **kw)
    with monkeypatch.context() as m:
        stepped_alone(m)
        alone = replify.evaluate(learner, seq, **kw)
    same_reports(lanes, alone)


def test_sub_gaussian_ucb1_in_lanes_on_gaussian_arms(monkeypatch):
    kw = dict(n=3, horizon=800, pairs=4, seed=2, sigma=0.5, progress=False)
    lanes = replify.evaluate("ucb1", "gaussian-arms", **kw)
    stepped_alone(monkeypatch)
    same_reports(lanes, replify.evaluate("ucb1", "gaussian-arms", **kw))


def test_a_pairs_results_do_not_depend_on_its_group(monkeypatch):
    kw = dict(n=4, horizon=400, seed=6, progress=False)
    many = replify.evaluate("exp3", "bernoulli-arms", pairs=6, **kw)
    monkeypatch.setattr(engine, "LANE_GROUP_PAIRS", 1)
    alone = replify.evaluate("exp3", "bernoulli-arms", pairs=6, **kw)
    same_reports(many, alone)
    assert np.array_equal(replify.evaluate("exp3", "bernoulli-arms", pairs=2, **kw).regret, many.regret[:2])


def test_lanes_run_in_parallel_as_here():
    kw = dict(n=4, horizon=400, pairs=6, seed=1, progress=False)
    same_reports(replify.evaluate("ucb1", "bernoulli-arms", n_jobs=2, **kw), replify.evaluate("ucb1", "bernoulli-arms", **kw))


# -- a user's lane form --------------------------------------------------------------------------
class GreedyLanes(BanditLanes):
    """Explore each arm with probability 0.1 (the lane's own generator), else the cheapest mean."""

    per_lane = ("sums", "pulls")

    def __init__(self, *, n, horizon, rng):
        super().__init__(n=n, horizon=horizon, rngs=[rng])
        self.sums, self.pulls = np.zeros((1, n)), np.ones((1, n))

    def _choose(self):
        u = np.array([rng.random() for rng in self.rngs])
        explore = np.array([rng.integers(self.n) for rng in self.rngs])
        return np.where(u < 0.1, explore, (self.sums / self.pulls).argmin(axis=1))

    def _learn(self, flat, costs):
        self.sums.put(flat, self.sums.take(flat) + costs)
        self.pulls.put(flat, self.pulls.take(flat) + 1.0)


class Greedy(LaneBandit):
    uses = []  # the lane objects the engine asked for

    def __init__(self, *, n, horizon, rng):
        super().__init__(n=n, horizon=horizon)
        self._start(GreedyLanes(n=self.n, horizon=self.horizon, rng=rng))

    @classmethod
    def for_lanes(cls, learners):
        form = super().for_lanes(learners)
        cls.uses.append(form.lanes)
        return form


class SharedStream(Greedy):
    """Wrong: its lanes draw from one generator, so a lane's arms depend on its neighbours."""

    @classmethod
    def for_lanes(cls, learners):
        form = LaneBandit.for_lanes.__func__(cls, learners)
        form.rngs = [form.rngs[0]] * form.lanes
        return form


def test_a_users_lane_form_is_used_checked_and_equal_to_stepping(monkeypatch):
    Greedy.uses.clear()
    kw = dict(n=3, horizon=300, pairs=5, seed=8, progress=False)
    lanes = replify.evaluate(Greedy, "bernoulli-arms", **kw)
    assert Greedy.uses == [10]  # one object for the five pairs' ten lanes
    stepped_alone(monkeypatch)
    same_reports(lanes, replify.evaluate(Greedy, "bernoulli-arms", **kw))
    check_lanes_equal_stepping(Greedy)


def test_the_conformance_check_catches_lanes_that_share_a_stream():
    with pytest.raises(AssertionError, match="stepped alone"):
        check_lanes_equal_stepping(SharedStream)


class BadArms(Greedy):
    arms = None

    @classmethod
    def for_lanes(cls, learners):
        form = super().for_lanes(learners)
        bad = cls.arms
        form.act = lambda: bad(form.lanes)
        return form


@pytest.mark.parametrize("arms, message", [
    (lambda k: np.full(k, 3), "lane 0 arm 3, outside \\[0, 3\\)"),
    (lambda k: np.full(k, -1), "lane 0 arm -1"),
    (lambda k: np.zeros(k + 1, dtype=np.int64), "integer array of shape \\(4,\\)"),
    (lambda k: np.zeros(k), "integer array of shape"),
])
def test_bad_arms_from_a_lane_form_are_named(arms, message, monkeypatch):
    monkeypatch.setattr(BadArms, "arms", staticmethod(arms))
    with pytest.raises(ActionError, match=message):
        replify.evaluate(BadArms, "bernoulli-arms", n=3, horizon=50, pairs=2, seed=0, progress=False)


class NoUpdate(Greedy):
    @classmethod
    def for_lanes(cls, learners):
        return object()


def test_a_lane_form_without_act_and_update_is_refused():
    with pytest.raises(LearnerProtocolError, match="for_lanes\\(\\) must return an object with act\\(\\) and update"):
        replify.evaluate(NoUpdate, "bernoulli-arms", n=3, horizon=50, pairs=2, seed=0, progress=False)


def test_lanes_refuse_what_the_protocol_forbids():
    form = replify.make("ucb1", n=3, horizon=2, seed=0)._lane
    form.update(form.act(), np.array([0.5]))
    with pytest.raises(LearnerProtocolError, match="before act"):
        form.update(np.array([1]), np.array([1.0]))
    form.update(form.act(), np.array([0.5]))
    with pytest.raises(LearnerProtocolError, match="after the horizon"):
        form.act()
    # learners built differently (another sigma) are not stacked: the engine steps them alone
    mixed = [replify.make("ucb1", n=3, horizon=9, seed=0), replify.make("ucb1", n=3, horizon=9, seed=0, sigma=2.0)]
    assert bandit_lanes.lane_form(mixed) is None
    assert bandit_lanes.lane_form([replify.make("ucb1", n=3, horizon=9, seed=0), replify.make("exp3", n=3, horizon=9, seed=0)]) is None


# -- Thompson sampling's posterior draws ---------------------------------------------------------
def beta_cdf(x, a, b):
    """The Beta(a, b) CDF for whole a, b: P(Binomial(a + b − 1, x) ≥ a)."""
    m = a + b - 1
    return sum(math.comb(m, j) * x**j * (1 - x) ** (m - j) for j in range(a, m + 1))


def test_thompsons_posterior_draws_have_the_beta_law():
    # 4000 lanes, each with its own generator, drawing three times (the third and later draws
    # use the reserve of replacements too: Marsaglia & Tsang reject ~5% of proposals at shape 1).
    # DKW: P(sup_x |F_m(x) - F(x)| > eps) <= 2 exp(-2 m eps^2); eps below makes it 1e-6 per arm
    # and draw, so a correct sampler fails with probability < 3e-5 over the 30 checks (seeds fixed).
    m, draws = 4000, 3
    eps = math.sqrt(math.log(2 / 1e-6) / (2 * m))
    shapes = [(1, 1), (1, 6), (4, 1), (7, 12), (40, 25)]
    lanes = ThompsonLanes.stack([ThompsonLanes(n=len(shapes), horizon=10, rng=np.random.default_rng(s)) for s in range(m)])
    a = np.array([p[0] for p in shapes], dtype=float)
    b = np.array([p[1] for p in shapes], dtype=float)
    lanes.successes[:], lanes.failures[:] = a - 1, b - 1
    lanes._d[:] = np.concatenate([a, b]) - 1.0 / 3.0
    lanes._c[:] = 1.0 / np.sqrt(9.0 * lanes._d)
    for _ in range(draws):
        theta = lanes.posterior_draws()
        for k, (ak, bk) in enumerate(shapes):
            x = np.sort(theta[:, k])
            exact = beta_cdf(x, ak, bk)
            gap = max(np.max(np.arange(1, m + 1) / m - exact), np.max(exact - np.arange(m) / m))
            assert gap < eps, (ak, bk, gap)
    # and the test has the power to see a shape off by one
    x = np.sort(theta[:, 3])
    assert np.max(np.abs(np.arange(1, m + 1) / m - beta_cdf(x, 8, 12))) > eps


# -- what an independent review found --------------------------------------------------------------
class Fractional:
    """Costs uniform on [0, 1] (fractional), chunked; with the means, for the pseudo-regret."""

    def __init__(self, n, horizon, chunked=True, means=None):
        self.n, self.horizon = n, horizon
        self.mu = np.linspace(0.2, 0.8, n) if means is None else np.asarray(means)
        if chunked:
            self.sample_chunk = lambda rng, start, stop: np.clip(rng.random((stop - start, n)) * 2 * self.mu, 0, 1)

    def sample(self, rng):
        return np.clip(rng.random((self.horizon, self.n)) * 2 * self.mu, 0, 1)

    def expected_sums(self, starts, stops):  # not exactly the clipped means: all that matters is that it is one function
        return np.outer(np.asarray(stops) - np.asarray(starts), self.mu)


@pytest.mark.parametrize("eta", [800.0, 1e6])
def test_exp3_with_a_huge_rate_stays_finite_and_equal_in_lanes(eta, monkeypatch):
    # the weights are kept as logarithms relative to the largest: none overflows or underflows to
    # an all-zero row (multiplying weights by exp(-eta c/p) did, and then a NaN lane kept its
    # neighbours from being rescaled)
    kw = dict(n=2, horizon=300, pairs=3, seed=5, eta=eta, progress=False)
    lanes = replify.evaluate("exp3", Fractional(2, 300), **kw)
    assert np.isfinite(lanes.regret).all()
    learner = replify.make("exp3", n=2, horizon=50, seed=0, eta=eta)
    for _ in range(50):
        a = learner.act()
        learner.update(a, 1.0 if a == 0 else 2.5e-4)
    assert np.isfinite(learner.probabilities).all() and learner.probabilities[1] > 0.5  # it learned arm 1
    stepped_alone(monkeypatch)
    same_reports(lanes, replify.evaluate("exp3", Fractional(2, 300), **kw))


def test_a_whole_sequence_adversary_with_means_gives_the_same_pseudo_regret(monkeypatch):
    kw = dict(n=4, horizon=37, pairs=5, seed=3, progress=False)
    lanes = replify.evaluate("ucb1", Fractional(4, 37, chunked=False), **kw)
    stepped_alone(monkeypatch)
    same_reports(lanes, replify.evaluate("ucb1", Fractional(4, 37, chunked=False), **kw))


def test_a_subclass_that_steps_its_own_way_is_not_played_in_lanes(monkeypatch):
    from replify_plugins.bandits.ucb1 import UCB1

    class RiskAverse(UCB1):
        def update(self, action, cost):
            super().update(action, cost**0.5)

    kw = dict(n=3, horizon=200, pairs=3, seed=0, progress=False)
    assert RiskAverse.for_lanes([RiskAverse(n=3, horizon=9), RiskAverse(n=3, horizon=9)]) is None
    lanes = replify.evaluate(RiskAverse, Fractional(3, 200), **kw)
    plain = replify.evaluate("ucb1", Fractional(3, 200), **kw)
    assert not np.array_equal(lanes.action_counts, plain.action_counts)
    stepped_alone(monkeypatch)
    same_reports(lanes, replify.evaluate(RiskAverse, Fractional(3, 200), **kw))


def test_for_lanes_must_be_a_classmethod():
    class Plain(Greedy):
        def for_lanes(self, learners):  # an instance method: the engine would call it without the class
            return None

    with pytest.raises(LearnerProtocolError, match="for_lanes must be a classmethod"):
        replify.evaluate(Plain, "bernoulli-arms", n=3, horizon=50, pairs=2, seed=0, progress=False)

    class Static(Greedy):  # a staticmethod taking the learners is fine
        for_lanes = staticmethod(lambda learners: Greedy.for_lanes.__func__(Static, learners))

    assert replify.evaluate(Static, "bernoulli-arms", n=3, horizon=50, pairs=2, seed=0, progress=False).pairs == 2


def test_lane_authoring_mistakes_are_named():
    class NoStart(LaneBandit):
        def __init__(self, *, n, horizon, rng):
            super().__init__(n=n, horizon=horizon)

    with pytest.raises(LearnerProtocolError, match="must end with self._start"):
        NoStart.for_lanes([NoStart(n=3, horizon=9, rng=None)])
    # (the test suite runs typeguard, which names the argument first; without it replify does)
    with pytest.raises((LearnerProtocolError, typeguard.TypeCheckError), match="rngs"):
        BanditLanes(n=3, horizon=9, rngs=np.random.default_rng(0))

    class Column(GreedyLanes):
        def _choose(self):
            return np.zeros((self.lanes, 1), dtype=np.int64)

    class ColumnGreedy(LaneBandit):
        def __init__(self, *, n, horizon, rng):
            super().__init__(n=n, horizon=horizon)
            self._start(Column(n=self.n, horizon=self.horizon, rng=rng))

    with pytest.raises(ActionError, match="shape \\(1,\\)"):
        ColumnGreedy(n=3, horizon=9, rng=np.random.default_rng(0))
    with pytest.raises(NotImplementedError, match="must implement _learn"):
        BanditLanes(n=3, horizon=9, rngs=[None])._learn(np.array([0]), np.array([0.5]))


class LateSharing(BanditLanes):
    """Wrong only from step 129: its second block of uniforms is drawn from lane 0's generator."""

    per_lane = ("sums", "pulls", "_u")
    shared = ("_next",)
    BLOCK = 128

    def __init__(self, *, n, horizon, rng):
        super().__init__(n=n, horizon=horizon, rngs=[rng])
        self.sums, self.pulls = np.zeros((1, n)), np.ones((1, n))
        self._u, self._next = rng.random((1, self.BLOCK)), 0

    def _choose(self):
        if self._next == self.BLOCK:
            self._u, self._next = self.rngs[0].random((self.lanes, self.BLOCK)), 0
        u = self._u[:, self._next]
        self._next += 1
        return np.where(u < 0.2, (u * 5 * self.n).astype(np.int64), (self.sums / self.pulls).argmin(axis=1))

    def _learn(self, flat, costs):
        self.sums.put(flat, self.sums.take(flat) + costs)
        self.pulls.put(flat, self.pulls.take(flat) + 1.0)


class LateGreedy(LaneBandit):
    def __init__(self, *, n, horizon, rng):
        super().__init__(n=n, horizon=horizon)
        self._start(LateSharing(n=self.n, horizon=self.horizon, rng=rng))


def test_the_check_plays_long_enough_to_see_a_late_refill():
    with pytest.raises(AssertionError, match="stepped alone"):
        check_lanes_equal_stepping(LateGreedy)


class NextArm:
    """Wrong: its lane form plays the next arm after the one each learner plays alone."""

    @classmethod
    def for_lanes(cls, learners):
        form = super().for_lanes(learners)
        choose = form._choose
        form._choose = lambda: (choose() + 1) % form.n
        return form


class OtherRule(NextArm, Greedy):
    """A bandit learner whose lane form plays another rule."""


@pytest.mark.parametrize("learner, step", [(SharedStream, r"\d+"), (LateGreedy, r"(129|1[3-9]\d|2[0-5]\d)"),
                                            (OtherRule, r"\d+")],
                         ids=["one shared generator", "shared from step 129", "another rule"])
@pytest.mark.parametrize("adversary, params", [("bernoulli-arms", {}), ("drifting-bernoulli", {"start": 0.2, "end": 0.8})],
                         ids=["played-arm path", "full draw"])
def test_evaluate_refuses_a_lane_form_that_plays_other_arms_than_stepping(learner, step, adversary, params):
    # once ρ̂ 1.0 in lanes against 0.0 stepped, and n_jobs = 1 and 2 disagreeing; LateGreedy parts from
    # stepping at step 129 at the earliest (where its lanes first share a generator)
    with pytest.raises(replify.errors.LearnerProtocolError,
                       match=rf"lane \d played arm \d at step {step}, but the same learner stepped alone"):
        replify.evaluate(learner, adversary, n=3, horizon=400, pairs=3, seed=0, progress=False, adversary_params=params)


class SharedContextStream(LinEpsGreedy):
    """Wrong: a contextual learner whose lanes draw their exploration from one generator."""

    @classmethod
    def for_lanes(cls, learners):
        form = super().for_lanes(learners)
        form.rngs = [form.rngs[0]] * form.lanes
        return form


class OtherContextRule(NextArm, LinEpsGreedy):
    """A contextual learner whose lane form plays another rule."""


@pytest.mark.parametrize("learner, adversary", [
    (SharedContextStream, "linear-gaussian"), (OtherContextRule, "linear-gaussian"),
    (OtherContextRule, "linear-bernoulli"), (OtherRule, "linear-bernoulli"), (SharedStream, "linear-bernoulli")],
    ids=["contextual, one shared generator", "contextual, another rule", "contextual, 0/1 costs",
         "bandit on contexts, another rule", "bandit on contexts, one shared generator"])
@pytest.mark.parametrize("contexts", ["fixed", "sphere"])
def test_evaluate_refuses_a_contextual_lane_form_that_plays_other_arms_than_stepping(learner, adversary, contexts):
    kw = dict(n=3, horizon=400, pairs=3, seed=0, progress=False, adversary_params={"d": 3, "contexts": contexts})
    with pytest.raises(replify.errors.LearnerProtocolError,
                       match=r"lane \d played arm \d at step \d+, but the same learner stepped alone"):
        replify.evaluate(learner, adversary, **kw)
    honest = LinEpsGreedy if issubclass(learner, LinEpsGreedy) else Greedy
    replify.evaluate(honest, adversary, **kw)  # the honest learner's lanes pass
