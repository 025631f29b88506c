"""Every bad input to the public functions is refused with a replify error that names the argument
(docs/api.md): never a raw numpy traceback, a KeyError or TypeError from deep inside, and never a
silent clip or coercion. One table-driven test per category: (callable, kwargs, error class, a
substring of the message that names the argument)."""

import numpy as np
import pytest
from typeguard import suppress_type_checks

import replify
from replify import testing
from replify.evaluation import stats
from replify.components.bandits import BanditLearner, is_bandit
from replify.base.checks import CostDomain, check_learner
from replify.errors import (
    ActionError,
    ArgumentTypeError,
    CostError,
    InvalidArgumentError,
    LearnerProtocolError,
    UnknownNameError,
)
from replify.experiments.stress import Candidate, StressResult

from conftest import RandomHedge

NAN, INF = float("nan"), float("inf")


def _refused(func, kwargs, error, names):
    # The suite instruments every replify function with typeguard (--typeguard-packages in
    # pyproject.toml), which would refuse a str where an int is annotated before replify's own
    # check runs; a user's run has no such hook. Checks are suppressed here so that the error
    # tested is the one users get.
    with suppress_type_checks(), pytest.raises(error) as info:
        func(**kwargs)
    assert names in str(info.value), str(info.value)


# -- stats ----------------------------------------------------------------------------------------

STATS = [
    (stats.clopper_pearson, dict(successes=3, trials=0), InvalidArgumentError, "trials must be an integer >= 1"),
    (stats.clopper_pearson, dict(successes=3, trials=-2), InvalidArgumentError, "trials"),
    (stats.clopper_pearson, dict(successes=-1, trials=10), InvalidArgumentError, "successes must be an integer >= 0"),
    (stats.clopper_pearson, dict(successes=11, trials=10), InvalidArgumentError, "successes must be at most trials=10"),
    (stats.clopper_pearson, dict(successes=0.5, trials=10), InvalidArgumentError, "successes"),
    (stats.clopper_pearson, dict(successes=True, trials=10), InvalidArgumentError, "successes"),
    (stats.clopper_pearson, dict(successes="3", trials=10), InvalidArgumentError, "successes"),
    (stats.clopper_pearson, dict(successes=3, trials=10.0), InvalidArgumentError, "trials"),
    (stats.clopper_pearson, dict(successes=3, trials=10, confidence=1.5), InvalidArgumentError, "confidence must lie in (0, 1)"),
    (stats.clopper_pearson, dict(successes=3, trials=10, confidence=0), InvalidArgumentError, "confidence"),
    (stats.clopper_pearson, dict(successes=3, trials=10, confidence=NAN), InvalidArgumentError, "confidence"),
    (stats.clopper_pearson, dict(successes=3, trials=10, confidence=None), InvalidArgumentError, "confidence"),
    (stats.binomial_upper_tail, dict(successes=3, trials=10, p=1.5), InvalidArgumentError, "p must lie in [0, 1]"),
    (stats.binomial_upper_tail, dict(successes=3, trials=10, p=-0.1), InvalidArgumentError, "p must lie in [0, 1]"),
    (stats.binomial_upper_tail, dict(successes=3, trials=10, p=NAN), InvalidArgumentError, "p must be finite"),
    (stats.binomial_upper_tail, dict(successes=3, trials=10, p="0.1"), InvalidArgumentError, "p must be a real number"),
    (stats.binomial_upper_tail, dict(successes=3, trials=-1, p=0.1), InvalidArgumentError, "trials"),
    (stats.binomial_upper_tail, dict(successes=-1, trials=10, p=0.1), InvalidArgumentError, "successes"),
    (stats.binomial_upper_tail, dict(successes=11, trials=10, p=0.1), InvalidArgumentError, "successes must be at most"),
    (stats.binomial_upper_tail, dict(successes=INF, trials=10, p=0.1), InvalidArgumentError, "successes"),
    (stats.t_quantile, dict(q=0.9, df=0), InvalidArgumentError, "df must be an integer >= 1"),
    (stats.t_quantile, dict(q=0.9, df=2.5), InvalidArgumentError, "df"),
    (stats.t_quantile, dict(q=1.0, df=3), InvalidArgumentError, "q must lie in [0.5, 1)"),
    (stats.t_quantile, dict(q=NAN, df=3), InvalidArgumentError, "q must be finite"),
    (stats.t_quantile, dict(q="0.9", df=3), InvalidArgumentError, "q must be a real number"),
    (stats.t_interval, dict(values=[1.0]), InvalidArgumentError, "values must hold at least 2"),
    (stats.t_interval, dict(values=[]), InvalidArgumentError, "values"),
    (stats.t_interval, dict(values=[1.0, NAN, 2.0]), InvalidArgumentError, "values must be finite, got nan at index 1"),
    (stats.t_interval, dict(values=[1.0, INF]), InvalidArgumentError, "values must be finite"),
    (stats.t_interval, dict(values=[[1.0, 2.0], [3.0, 4.0]]), InvalidArgumentError, "values must be a 1-d array"),
    (stats.t_interval, dict(values=["a", "b"]), InvalidArgumentError, "values must be real numbers"),
    (stats.t_interval, dict(values=[1.0, 2.0], confidence=2), InvalidArgumentError, "confidence"),
    (stats.bisect, dict(f=None, lo=0.0, hi=1.0), ArgumentTypeError, "f must be a callable"),
    (stats.bisect, dict(f=lambda x: x, lo=1.0, hi=0.0), InvalidArgumentError, "need lo <= hi"),
    (stats.bisect, dict(f=lambda x: x, lo=NAN, hi=1.0), InvalidArgumentError, "lo must be finite"),
]


@pytest.mark.parametrize("func, kwargs, error, names", STATS)
def test_stats_refuse_bad_inputs(func, kwargs, error, names):
    _refused(func, kwargs, error, names)


# -- testing ----------------------------------------------------------------------------------------

HALF_N = replify.LearnerSpec("half-n", RandomHedge, "experts", test_params={"n": 2.5})
ASSERT = dict(learner="constant", adversary="iid-bernoulli", rho=0.5, n=2, horizon=5, max_pairs=20)

TESTING = [
    (testing.check_learner, dict(spec=5), ArgumentTypeError, "spec must be a registered name"),
    (testing.check_adversary, dict(spec=None), ArgumentTypeError, "spec must be an AdversarySpec"),
    (testing.check_adversary, dict(spec=replify.learners()["hedge"]), ArgumentTypeError, "spec must be an AdversarySpec"),
    (testing.check_run_equals_stepping, dict(spec=replify.adversaries()["ties"]), ArgumentTypeError, "spec must be a LearnerSpec"),
    (testing.check_horizon, dict(spec=3.5), ArgumentTypeError, "spec"),
    (testing.check_inputs_untouched, dict(spec=None), ArgumentTypeError, "spec"),
    (testing.check_domain_enforced, dict(spec=[]), ArgumentTypeError, "spec"),
    (testing.check_segments_equal_stepping, dict(spec=True), ArgumentTypeError, "spec"),
    (testing.check_bandit_batches_equal_stepping, dict(spec=object()), ArgumentTypeError, "spec"),
    (testing.check_sample, dict(spec="no-such-adversary"), UnknownNameError, "no adversary named 'no-such-adversary'"),
    (testing.check_chunks_equal_sample, dict(spec=1), ArgumentTypeError, "spec"),
    (testing.check_sums_law, dict(spec=None), ArgumentTypeError, "spec"),
    (testing.check_run_equals_stepping, dict(spec=HALF_N), InvalidArgumentError, "half-n: test_params['n'] must be an integer"),
    (testing.parametrize_with_checks, dict(specs=5), ArgumentTypeError, "specs must be an iterable of specs"),
    (testing.parametrize_with_checks, dict(specs="hedge"), ArgumentTypeError, "specs must be an iterable of specs"),
    (testing.parametrize_with_checks, dict(specs=[5]), ArgumentTypeError, "specs must hold LearnerSpec or AdversarySpec"),
    (testing.parametrize_with_checks, dict(specs=None), ArgumentTypeError, "specs"),
    (testing.assert_replicable, dict(ASSERT, rho=1.5), InvalidArgumentError, "rho must lie strictly between 0 and 1"),
    (testing.assert_replicable, dict(ASSERT, rho="0.1"), InvalidArgumentError, "rho must be a real number"),
    (testing.assert_replicable, dict(ASSERT, alpha=0), InvalidArgumentError, "alpha must lie in (0, 1)"),
    (testing.assert_replicable, dict(ASSERT, alpha=None), InvalidArgumentError, "alpha"),
    (testing.assert_replicable, dict(ASSERT, max_pairs=1), InvalidArgumentError, "max_pairs must be an integer >= 2"),
    (testing.assert_replicable, dict(ASSERT, max_pairs=10.0), InvalidArgumentError, "max_pairs"),
]


@pytest.mark.parametrize("func, kwargs, error, names", TESTING)
def test_testing_refuses_bad_inputs(func, kwargs, error, names):
    _refused(func, kwargs, error, names)


# -- adversary parameters -----------------------------------------------------------------------------


def _adversary(name, n=3, horizon=10, **params):
    return replify.make_adversary(name, n=n, horizon=horizon, seed=0, **params)


FIXED = np.full((10, 3), 0.5)
PIECES = [[0.2, 0.5, 0.8], [0.8, 0.5, 0.2]]

ADVERSARIES = [
    # ties: k > n and means outside [0, 1] were clipped silently
    (dict(name="ties", k=4), "k must be at most n=3"),
    (dict(name="ties", k=2, mean=0.9), "mean + margin = 1.1 must lie in [0, 1]"),
    (dict(name="ties", mean=0.98, gap=0.05), "mean + gap = 1.03 must lie in [0, 1]"),
    (dict(name="crossing", mean=0.05, gap=0.2), "mean - gap/2"),
    (dict(name="crossing", n=2, mean=0.95, gap=0.2), "mean + gap/2"),
    (dict(name="crossing", mean=0.9), "mean + margin"),
    (dict(name="crossing", at=2.5), "at must be a fraction in (0, 1) or a whole step"),
    (dict(name="block-switch", block_size=5, gap=0.9, mean=0.3), "mean - gap/2"),
    (dict(name="block-switch", block_size=5, margin=0.6), "mean + margin"),
    # switch_at and stochastic: fractions, booleans and strings were truncated or parsed
    (dict(name="switching-bernoulli", means=PIECES, switch_at=[2.5]), "switch_at must be integers"),
    (dict(name="switching-bernoulli", means=PIECES, switch_at="3"), "switch_at must be integers"),
    (dict(name="switching-bernoulli", means=PIECES, switch_at=[True]), "switch_at must be integers"),
    (dict(name="switching-bernoulli", means=PIECES, switch_at=[NAN]), "switch_at must be integers"),
    (dict(name="switching-bernoulli", means=[[True] * 3]), "means must be numbers in [0, 1], not booleans"),
    (dict(name="mixture", stochastic=[0.5], costs=FIXED), "stochastic must be integers"),
    (dict(name="mixture", stochastic="0", costs=FIXED), "stochastic must be integers"),
    (dict(name="mixture", stochastic=None, costs=FIXED), "stochastic must be integers"),
    (dict(name="mixture", stochastic=[NAN], costs=FIXED), "stochastic must be integers"),
    # means: booleans were read as 0 and 1
    (dict(name="iid-bernoulli", means=True), "means must be numbers in [0, 1], not booleans"),
    (dict(name="drifting-bernoulli", start=False, end=0.5), "start must be numbers in [0, 1], not booleans"),
    # coin: True is not +1, an array is not a sign, "no" is not False
    (dict(name="coin", n=2, tau=0.1, sign=True), "sign must be +1 or -1"),
    (dict(name="coin", n=2, tau=0.1, sign=np.array([1, -1])), "sign must be +1 or -1"),
    (dict(name="coin", n=2, tau=0.1, random_bias="no"), "random_bias must be True or False"),
    (dict(name="coin-phases", n=4, tau=0.1, signs=1), "signs must be a sequence of 2 signs"),
    (dict(name="coin-phases", n=8, horizon=2, tau=0.1), "horizon must be at least m = log2(n) = 3"),
    (dict(name="random-signs", norm=np.array(["linf", "l1"])), "norm must be 'linf' or 'l1'"),
]


@pytest.mark.parametrize("kwargs, names", ADVERSARIES)
def test_adversary_factories_refuse_bad_params(kwargs, names):
    _refused(_adversary, kwargs, InvalidArgumentError, names)


@pytest.mark.parametrize("name", sorted(replify.adversaries()))
@pytest.mark.parametrize("sizes, names", [
    (dict(n=3, horizon=-5), "horizon must be an integer >= 1, got -5"),
    (dict(n=3, horizon=2.5), "horizon must be an integer >= 1"),
    (dict(n=0, horizon=10), "n must be an integer >= 2, got 0"),
    (dict(n=True, horizon=10), "n must be an integer >= 2"),
])
def test_adversaries_built_directly_refuse_bad_sizes(name, sizes, names):
    spec = replify.adversaries()[name]
    params = dict(spec.test_params(3, 10) if callable(spec.test_params) else spec.test_params)
    params.pop("n", None), params.pop("horizon", None)
    _refused(spec.factory, dict(sizes, rng=np.random.default_rng(0), **params), InvalidArgumentError, names)


def test_a_bootstrap_window_beyond_the_horizon_draws_from_every_row():
    data = np.arange(30.0).reshape(10, 3)
    wide = _adversary("local-bootstrap", costs=data, window=10**30)  # overflowed int64 before
    whole = _adversary("local-bootstrap", costs=data, window=10)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    assert np.array_equal(wide.sample(rng_a), whole.sample(rng_b))


# -- learners: feedback, bandit updates, complex costs -------------------------------------------------


class Declares:
    """A learner that declares some ``feedback``."""

    def __init__(self, *, n, horizon, rng, feedback="full"):
        self.n, self.horizon, self.feedback = n, horizon, feedback

    def act(self):
        return 0

    def update(self, *feedback):
        pass


def _declaring(feedback):
    return Declares(n=2, horizon=5, rng=None, feedback=feedback)


def _is_bandit(feedback):
    return is_bandit(_declaring(feedback))


def _evaluate_declaring(feedback):
    return replify.evaluate(lambda seed: _declaring(feedback), "iid-bernoulli", n=2, horizon=5, pairs=2, seed=0)


class Arm0(BanditLearner):
    def __init__(self, *, n=3, horizon=5, rng=None):
        super().__init__(n=n, horizon=horizon)

    def _choose(self):
        return 0


def _update(action, cost):
    return Arm0().update(action, cost)


class Complex:
    """A user adversary whose draws are complex (``where``: which method returns them)."""

    def __init__(self, where):
        self.n, self.horizon, self.where = 3, 12, where

    def sample(self, rng):
        return rng.random((12, 3)) + (0.5j if self.where == "sample" else 0)

    def __getattr__(self, name):
        if name == "sample_chunk" and self.where in ("sample_chunk", "sample_sums", "expected_sums"):
            return lambda rng, a, b: rng.random((b - a, 3)) + (0.5j if self.where == "sample_chunk" else 0)
        if name == "sample_sums" and self.where == "sample_sums":
            return lambda rng, s, e: np.zeros((len(s), 3)) + 1j
        if name == "expected_sums" and self.where == "expected_sums":
            return lambda s, e: np.zeros((len(s), 3)) + 1j
        raise AttributeError(name)


def _evaluate_complex(where, learner="hedge", **kw):
    return replify.evaluate(learner, Complex(where), n=3, horizon=12, pairs=2, seed=0, **kw)


LEARNERS = [
    # feedback other than "full"/"bandit" ran as full information
    (_is_bandit, dict(feedback="Bandit"), LearnerProtocolError,
     "Declares.feedback must be one of 'full', 'bandit' (absent means 'full'), got 'Bandit'"),
    (_evaluate_declaring, dict(feedback="Bandit"), LearnerProtocolError, "feedback must be one of 'full', 'bandit'"),
    (_evaluate_declaring, dict(feedback="partial"), LearnerProtocolError, "feedback must be one of 'full', 'bandit'"),
    (_evaluate_declaring, dict(feedback=None), LearnerProtocolError, "got None"),
    (_evaluate_declaring, dict(feedback=1), LearnerProtocolError, "feedback must be one of"),
    (_is_bandit, dict(feedback="BANDIT"), LearnerProtocolError, "feedback"),
    (lambda feedback: check_learner(_declaring(feedback), source="x"), dict(feedback=["bandit"]), LearnerProtocolError, "feedback"),
    # a bandit learner's update: an arm is a whole number, a cost a real one
    (_update, dict(action=0.5, cost=0.5), ActionError, "action must be the integer arm act() returned (0); got 0.5"),
    (_update, dict(action=False, cost=0.5), ActionError, "action must be the integer arm"),
    (_update, dict(action="0", cost=0.5), ActionError, "action must be the integer arm"),
    (_update, dict(action=0, cost="0.5"), CostError, "cost at step 1 must be a real number"),
    (_update, dict(action=0, cost=True), CostError, "cost at step 1 must be a real number"),
    (_update, dict(action=0, cost=None), CostError, "cost at step 1 must be a real number"),
    (_update, dict(action=0, cost=np.complex128(0.5)), CostError, "cost at step 1 must be a real number"),
    (_update, dict(action=0, cost=[0.5]), CostError, "cost at step 1 must be a real number"),
    # complex costs were cast to real
    (_evaluate_complex, dict(where="sample"), CostError, "the adversary's sample(rng) must be an array of real numbers"),
    (_evaluate_complex, dict(where="sample_chunk"), CostError, "sample_chunk(rng, 0, 12) must be an array of real numbers"),
    (_evaluate_complex, dict(where="sample_chunk", learner="ucb1"), CostError, "sample_chunk(rng, 0, 12)"),
    (_evaluate_complex, dict(where="sample_sums", learner="ftplb-star", rho=0.3, block_size=4), CostError,
     "the adversary's sample_sums(rng, starts, stops) must be an array of real numbers"),
    (_evaluate_complex, dict(where="expected_sums"), CostError,
     "the adversary's expected_sums(starts, stops) must be an array of real numbers"),
]


@pytest.mark.filterwarnings("ignore::replify.errors.ReplicabilityWarning")
@pytest.mark.parametrize("func, kwargs, error, names", LEARNERS)
def test_learners_and_their_costs_are_checked(func, kwargs, error, names):
    _refused(func, kwargs, error, names)


# -- stress, make, the registry, cost domains -------------------------------------------------------


def _refutes(**kw):
    worst = Candidate(family="ties", params={}, failures=3, pairs=10)
    result = StressResult(learner="x", n=2, horizon=10, rho=None, budget=10, pairs_used=10, worst=worst, candidates=(worst,))
    return result.refutes(**kw)


def _make(name, **kw):
    return replify.make(name, n=3, horizon=10, seed=0, **kw)


REPLICABLE_BANDITS = "use 'rep-elimination', 'rep-etc', 'blocked-bandit' (docs/bandits.md)"

BOUNDARY = [
    # refutes(bound=2) answered False: a bound outside [0, 1] is no claim
    (_refutes, dict(bound=2), InvalidArgumentError, "bound must lie in [0, 1], got 2.0"),
    (_refutes, dict(bound=-0.1), InvalidArgumentError, "bound must lie in [0, 1]"),
    (_refutes, dict(bound=NAN), InvalidArgumentError, "bound must be finite"),
    (_refutes, dict(bound="0.1"), InvalidArgumentError, "bound must be a real number"),
    (_refutes, dict(bound=True), InvalidArgumentError, "bound must be a real number"),
    (_refutes, dict(bound=0.1, alpha=0), InvalidArgumentError, "alpha must lie in (0, 1)"),
    (_refutes, dict(bound=0.1, alpha=1.5), InvalidArgumentError, "alpha must lie in (0, 1)"),
    # rho for a bandit learner advised replify.wrap, which refuses bandit learners
    (_make, dict(name="ucb1", rho=0.1), InvalidArgumentError, "'ucb1' is a bandit learner (feedback='bandit')"),
    (_make, dict(name="ucb1", rho=0.1), InvalidArgumentError, REPLICABLE_BANDITS),
    (_make, dict(name="exp3-doubling", rho=0.1), InvalidArgumentError, REPLICABLE_BANDITS),
    (_make, dict(name="thompson", rho=0.1), InvalidArgumentError, REPLICABLE_BANDITS),
    # lookups by something that is not a name
    (replify.registry().learner, dict(name=["hedge"]), ArgumentTypeError, "a learner name must be a string, got ['hedge']"),
    (replify.registry().adversary, dict(name=np.array(["ties"])), ArgumentTypeError, "an adversary name must be a string"),
    # cost domains: NaN bounds pass every check, reversed ones none
    (CostDomain, dict(low=NAN, high=1.0), InvalidArgumentError, "low must be a real number (±inf allowed), got nan"),
    (CostDomain, dict(low=1.0, high=0.0), InvalidArgumentError, "high must be >= low=1.0, got 0.0"),
    (CostDomain, dict(low="0", high=1.0), InvalidArgumentError, "low must be a real number"),
    (CostDomain, dict(low=0.0, high=1.0, l1=1), InvalidArgumentError, "l1 must be True or False"),
]


@pytest.mark.parametrize("func, kwargs, error, names", BOUNDARY)
def test_stress_make_registry_and_domains_refuse_bad_inputs(func, kwargs, error, names):
    _refused(func, kwargs, error, names)

