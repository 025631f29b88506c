"""What an adversary declares for the engine's shortcuts (iid, law_changes, cost_bounds,
expected_sums) is held against its own draws: by the conformance checks, which fail every lying
adversary here and pass every built-in one (test_testing.py runs them over the built-ins), and by
the engine, which refuses a path whose declaration a cheap sample contradicts."""

import numpy as np
import pytest

import replify
import replify.engine.run as engine_run
from replify.engine import limits
from replify.errors import DeclarationError
from replify.testing import check_adversary, check_declarations

MEANS = np.array([0.2, 0.5, 0.8])


class Honest:
    """iid Bernoulli(MEANS) costs: every declaration true."""

    iid = True
    cost_bounds = (0.0, 1.0)

    def __init__(self, n=3, horizon=120):
        self.n, self.horizon = n, horizon

    def means(self, start, stop):  # (stop - start, n): each step's mean costs
        return np.broadcast_to(MEANS, (stop - start, self.n))

    def sample_chunk(self, rng, start, stop):
        return (rng.random((stop - start, self.n)) < self.means(start, stop)).astype(float)

    def sample(self, rng):
        return self.sample_chunk(rng, 0, self.horizon)

    def sample_sums(self, rng, starts, stops):
        return np.stack([rng.binomial(1, self.means(a, b)).sum(axis=0) for a, b in zip(starts, stops)]).astype(float)

    def expected_sums(self, starts, stops):
        return np.stack([self.means(a, b).sum(axis=0) for a, b in zip(starts, stops)])


class Alternating(Honest):
    """Declares iid, but expert 0 costs 1 at even steps and 0 at odd ones (expert 1 the reverse;
    expert 2 always 1): the plainest lie (its expected sums are exact, so only iid is false)."""

    def means(self, start, stop):
        even = (np.arange(start, stop) % 2 == 0).astype(float)
        return np.stack([even, 1.0 - even, np.ones(stop - start)], axis=1)


class SlightlyAlternating(Honest):
    """Declares iid; the mean of expert 1 is 0.45 at even steps and 0.55 at odd ones: a difference
    of 0.1, above the 0.08 the check's docstring says it catches at its default sizes."""

    def means(self, start, stop):
        out = np.array(np.broadcast_to(MEANS, (stop - start, self.n)))
        out[:, 1] = np.where(np.arange(start, stop) % 2 == 0, 0.45, 0.55)
        return out


class ZeroMeans(Honest):
    """iid and bounded as declared, but expected_sums says every expert costs 0."""

    def expected_sums(self, starts, stops):
        return np.zeros((len(starts), self.n))


class WrongChanges(Honest):
    """The law changes at T/2 (the means reversed), but law_changes names T/4."""

    iid = False

    @property
    def law_changes(self):
        return (self.horizon // 4,)

    def means(self, start, stop):
        steps = np.arange(start, stop)
        return np.where((steps < self.horizon // 2)[:, None], MEANS, MEANS[::-1])


class Loose(Honest):
    """Declares that every cost lies in [0, 0.5], and draws 1s."""

    cost_bounds = (0.0, 0.5)


class GaussianAlternating:
    """No cost_bounds (Gaussian costs): declares iid, but the mean alternates between 0 and 1."""

    iid = True

    def __init__(self, n=3, horizon=120):
        self.n, self.horizon = n, horizon

    def sample(self, rng):
        shift = (np.arange(self.horizon) % 2)[:, None]
        return rng.normal(shift, 0.3, size=(self.horizon, self.n))


class GaussianZeroMeans(GaussianAlternating):
    """iid N(1, 0.3²), but expected_sums says 0."""

    def sample(self, rng):
        return rng.normal(1.0, 0.3, size=(self.horizon, self.n))

    def expected_sums(self, starts, stops):
        return np.zeros((len(starts), self.n))


def spec(cls):
    return replify.AdversarySpec(cls.__name__.lower(), lambda n, horizon, rng: cls(n, horizon), test_params={"n": 3})


@pytest.mark.parametrize("cls, message", [
    (Alternating, r"declares iid = True, but the costs at even steps and at the next odd steps of steps 1\.\.120 differ"),
    (SlightlyAlternating, r"declares iid = True, but the costs at even steps .* expert 1's mean cost"),
    (ZeroMeans, r"expected_sums gives 0 for expert 0 over steps 1\.\.30, but its 400 draws sum to 6\.\d+"),
    (WrongChanges, r"declares law_changes \(30,\), but the costs at steps \d+\.\.\d+ and at steps \d+\.\.\d+ \(one piece, "
                   r"steps 31\.\.120\) differ"),
    (Loose, r"declares cost_bounds \(0\.0, 0\.5\), but its 400 draws hold the cost 1\.0"),
    (GaussianAlternating, r"declares iid = True, .*\(sign test"),
    (GaussianZeroMeans, r"expected_sums gives 0 .*\(normal approximation"),
])
def test_the_conformance_check_fails_each_false_declaration(cls, message):
    with pytest.raises(AssertionError, match=message):
        check_declarations(spec(cls))


def test_the_conformance_checks_pass_an_adversary_whose_declarations_hold():
    check_adversary(spec(Honest))


class RoundRobin:
    """A batched bandit learner (the block-sum path's kind): arms 1, 0, 1, 0, … in one cycle."""

    feedback = "bandit"

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon, self.t = n, horizon, 0

    def act(self):
        return 1 - self.t % 2

    def update(self, arm, cost):
        self.t += 1

    def next_cycle(self):
        return np.array([1, 0]), self.horizon - self.t

    def observe_sums(self, sums, pulls):
        self.t = self.horizon


def evaluate(learner, seq, **kw):
    return replify.evaluate(learner, seq, n=3, horizon=seq.horizon, pairs=2, seed=0, progress=False, **kw)


def test_the_engine_refuses_the_block_sum_path_on_an_adversary_that_is_not_iid(monkeypatch):
    # Stepped, the round robin plays arm 1 on even steps and arm 0 on odd ones: it pays 0 every
    # step, while each of those experts totals T/2: a regret of -T/2. Trusting iid, the block-sum
    # path drew each arm's pulls as one contiguous segment and reported a regret near 0.
    seq = Alternating(horizon=10_000)
    stepped = evaluate(RoundRobin, seq, fast_path=False)
    assert not stepped.fast_path and np.all(stepped.regret == -5_000)
    with pytest.raises(DeclarationError, match=r"Alternating declares iid = True, but the costs at even steps .* fix the "
                                               r"declaration .* or pass fast_path=False"):
        evaluate(RoundRobin, seq, fast_path=True)
    monkeypatch.setattr(limits, "CYCLE_MIN_COSTS", 0)  # the default (fast_path=None) takes the path too
    with pytest.raises(DeclarationError, match=r"declares iid = True"):
        evaluate(RoundRobin, seq)


def test_the_engine_refuses_law_changes_at_the_wrong_steps():
    with pytest.raises(DeclarationError, match=r"declares law_changes \(2500,\), but the costs at steps 2501\.\.\d+ and "
                                               r"at steps \d+\.\.10000 \(one piece"):
        evaluate(RoundRobin, WrongChanges(horizon=10_000), fast_path=True)


def test_the_engine_refuses_a_pseudo_regret_on_expected_sums_its_draws_contradict():
    # before: every pseudo-regret 0, from means that are not the adversary's
    with pytest.raises(DeclarationError, match=r"ZeroMeans\.expected_sums gives 0 .* fix expected_sums, or leave it out"):
        evaluate("hedge", ZeroMeans(horizon=2_000))


def test_the_engines_look_is_free_for_an_honest_adversary():
    # no false alarm, and the look draws from a stream of its own: the pairs' results are those
    # of an engine that does not look
    seq = Honest(horizon=4_000)
    looked = [evaluate(RoundRobin, seq, fast_path=True), evaluate("hedge", seq)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_run, "audit", lambda *a, **k: None)
        blind = [evaluate(RoundRobin, seq, fast_path=True), evaluate("hedge", seq)]
    for a, b in zip(looked, blind):
        assert np.array_equal(a.regret, b.regret) and np.array_equal(a.pseudo_regret, b.pseudo_regret)


def test_expected_sums_no_costs_in_the_domain_can_have_are_refused():
    # not iid, so not sampled; but hedge's costs lie in [0, 1], and no such costs have an expected
    # sum of 1e9 over one step: the pseudo-regret would have been about -1e9 per step
    class Inflated(ZeroMeans):
        iid = False
        cost_bounds = None

        def expected_sums(self, starts, stops):
            return np.full((len(starts), self.n), 1e9)

    with pytest.raises(replify.errors.CostError, match=r"expected_sums over steps 1\.\.1 is \[1000000000\.0, .* which no "
                                                       r"costs with entries in \[0, 1\] can have as expected sums"):
        evaluate("hedge", Inflated(horizon=200))


def test_no_change_of_law_is_a_declaration_too():
    # switching-bernoulli with one piece declares law_changes = (): an empty tuple is an array of
    # floats to numpy, and was refused as malformed on the block-sum path
    report = replify.evaluate("rep-gap-elimination", "switching-bernoulli", n=3, horizon=4_000, pairs=2, seed=0, rho=0.1,
                              fast_path=True, adversary_params={"means": [[0.2, 0.5, 0.8]]}, progress=False)
    assert report.fast_path
    check_declarations(replify.AdversarySpec("one-piece", lambda n, horizon, rng: replify.make_adversary(
        "switching-bernoulli", n=n, horizon=horizon, seed=0, means=[[0.2, 0.5, 0.8]]), test_params={"n": 3}))
