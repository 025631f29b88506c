"""replify.testing: the conformance checks over every registered learner and adversary, the
statistical assertion, and the pytest plugin."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import replify
from replify.testing import (
    LEARNER_CHECKS, assert_replicable, check_adversary, check_learner, learner_spec, parametrize_with_checks,
)


@parametrize_with_checks(list(replify.learners().values()) + list(replify.adversaries().values()))
def test_every_registered_plugin_conforms(spec, check):
    check(spec)


def test_the_checks_catch_what_they_are_for():
    class Sloppy:
        """run() differs from stepping, writes into its input, ignores the horizon and the domain."""

        def __init__(self, *, n, horizon, rng):
            self.n = n

        def act(self):
            return 0

        def update(self, cost):
            pass

        def run(self, costs):
            costs[...] = 0.0
            return np.ones(costs.shape[0], dtype=np.int64)

    # it declares that it refuses updates past the horizon and costs outside its domain: the checks hold it to that
    spec = replify.LearnerSpec("sloppy", Sloppy, "experts", enforces={"horizon", "domain"})
    for check, message in (
        (replify.testing.check_run_equals_stepping, "run\\(\\) differs from stepping"),
        (replify.testing.check_horizon, "past the horizon"),
        (replify.testing.check_inputs_untouched, "costs were modified"),
        (replify.testing.check_domain_enforced, "outside its declared domain was accepted"),
    ):
        with pytest.raises(AssertionError, match=message):
            check(spec)
    # without the declaration the protocol asks neither, and those two checks pass
    undeclared = replify.LearnerSpec("sloppy", Sloppy, "experts")
    replify.testing.check_horizon(undeclared)
    replify.testing.check_domain_enforced(undeclared)

    class Chunky:
        def __init__(self, *, n, horizon, rng):
            self.n, self.horizon = n, horizon

        def sample(self, rng):
            return rng.random((self.horizon, self.n))

        def sample_chunk(self, rng, start, stop):
            return np.zeros((stop - start, self.n))

        def sample_sums(self, rng, starts, stops):
            return np.zeros((len(starts), self.n))

    bad = replify.AdversarySpec("chunky", Chunky)
    with pytest.raises(AssertionError, match="chunks differ from one sample"):
        replify.testing.check_chunks_equal_sample(bad)
    with pytest.raises(AssertionError, match="does not have the law of the summed steps"):
        replify.testing.check_sums_law(bad)
    check_learner("hedge")
    check_adversary("iid-bernoulli")


def test_assert_replicable_passes_and_fails_with_the_numbers():
    report = assert_replicable("constant", "iid-bernoulli", rho=0.1, n=3, horizon=500)
    assert report.decision == "below" and report.pairs == 80
    with pytest.raises(AssertionError, match=r"hedge is not shown 0\.1-replicable on iid-bernoulli: decision 'above' "
                                             r"after 16 pairs, rho_hat=1\.0000, anytime-valid 95% interval"):
        assert_replicable("hedge", "iid-bernoulli", rho=0.1, n=3, horizon=500)


def test_the_pytest_plugin_gives_users_a_fixture(tmp_path):
    test = tmp_path / "test_user.py"
    test.write_text(textwrap.dedent("""
        def test_constant_is_replicable(assert_replicable):
            assert_replicable("constant", "iid-bernoulli", rho=0.1, n=3, horizon=200)
    """))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout


def test_the_segment_check_catches_a_learner_whose_segments_lie():
    # iid-experts whose advance forgets to open the next block: by segments it keeps expert 1,
    # by steps it moves on; with a small K_constant the per-step branch runs too.
    from replify_plugins.learners.iid_experts import IidExperts

    class Forgetful(IidExperts):
        def advance(self, total, steps):
            self._paid += float(np.asarray(total)[self._action])
            self._cum = self._cum + np.asarray(total)
            self._t += steps

    good = replify.LearnerSpec("iid-good", IidExperts, "experts", cost_range=(0.0, 1.0),
                               test_params={"rho": 0.1, "horizon": 400, "K_constant": 0.05})
    check_learner(good)
    bad = replify.LearnerSpec("iid-forgetful", Forgetful, "experts", cost_range=(0.0, 1.0),
                              test_params={"rho": 0.1, "horizon": 400})
    with pytest.raises(AssertionError, match=r"iid-forgetful: next_segment\(\) at step 20 gave 0 steps"):
        check_learner(bad)  # stuck at the end of block 1, it offers no steps

    class Lagging(IidExperts):  # opens the next block, then plays the expert after its leader
        def advance(self, total, steps):
            block = self._block
            super().advance(total, steps)
            if self._block != block:
                self._action = (self._action + 1) % self.n

    lagging = replify.LearnerSpec("iid-lagging", Lagging, "experts", cost_range=(0.0, 1.0),
                                  test_params={"rho": 0.1, "horizon": 400})
    with pytest.raises(AssertionError, match=r"iid-lagging: playing by segments differs from stepping"):
        check_learner(lagging)


class Leader:
    """Follow the leader, with a touch of its own randomness."""

    def __init__(self, *, n, horizon, rng):
        self.total, self.noise = np.zeros(n), rng.random(n) * 1e-9

    def act(self):
        return int(np.argmin(self.total - self.noise))

    def update(self, cost):
        self.total += cost


def test_check_learner_says_how_to_give_a_class_wrapped_without_rho_its_rho():
    wrapped = replify.wrap(horizon=60)(Leader)
    # it said "pass rho=", which check_learner did not take
    with pytest.raises(replify.errors.InvalidArgumentError,
                       match=r"'Leader' was wrapped without rho, and check_learner\(\) builds it to check it; expected "
                             r"rho in \(0, 1\), the rho to build it at: check_learner\(Leader, rho=0\.1\)"):
        check_learner(wrapped)
    check_learner(wrapped, rho=0.1)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"list learner_spec\(Leader, rho=0\.1\) among the specs"):
        parametrize_with_checks([wrapped])
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"'hedge' is not replicable and takes none"):
        check_learner("hedge", rho=0.1)


def test_parametrize_with_checks_takes_every_learner_check_learner_takes():
    # it refused a class (and a wrapped class) that check_learner accepts

    wrapped = replify.wrap(horizon=60, rho=0.1)(Leader)
    mark = parametrize_with_checks([Leader, wrapped, learner_spec(replify.wrap(horizon=60)(Leader), rho=0.2),
                                    "iid-bernoulli"])
    specs = mark.args[1]
    assert [s.name for s, c in specs].count("Leader") == 3 * len(LEARNER_CHECKS)
    for spec, check in specs[: len(LEARNER_CHECKS)]:
        check(spec)
