"""What is not a learner (or an adversary) is refused at once, with one error that names the
argument, says what was expected and what came — never a bare TypeError from argument binding."""

import functools
import warnings

import numpy as np
import pytest

import replify
from replify.errors import ArgumentTypeError, InvalidArgumentError, LearnerProtocolError, ReplifyWarning, UnknownNameError

import own_learners
from own_learners import N, T

HERE = own_learners.__file__

BAD_LEARNERS = [
    pytest.param(3, ArgumentTypeError, r"learner must be a registered name .*; got 3 \(int\)", id="a number"),
    pytest.param(own_learners.Minimal(n=3, horizon=10, rng=np.random.default_rng(0)), ArgumentTypeError,
                 r"learner must be .*got an instance of Minimal \(a learner already built\): pass its class",
                 id="an instance"),
    pytest.param(own_learners.NoRng, InvalidArgumentError,
                 r"learner 'NoRng' takes \(n, horizon\): expected a factory taking keyword arguments n, horizon and rng",
                 id="a factory without rng"),
    pytest.param(lambda: None, InvalidArgumentError, r"takes \(\): expected a factory .* or a callable seed -> learner",
                 id="a callable of nothing"),
    pytest.param("no-such-learner", UnknownNameError,
                 r"learner: no learner named 'no-such-learner'; known learners: .*hedge.*or give a learner of your own "
                 r"as 'package.module:Name'", id="an unknown name"),
    pytest.param(f"{HERE}:Nothing", InvalidArgumentError,
                 r"learner '.*own_learners.py:Nothing': .* has no 'Nothing'; expected one of the names it defines: .*Minimal",
                 id="a missing name in a file"),
    pytest.param("/no/such/file.py:X", InvalidArgumentError,
                 r"'/no/such/file.py' is not a Python file; expected 'path/to/file.py:Name' \(got no such file\)",
                 id="a missing file"),
    pytest.param("no_such_module_xyz:X", InvalidArgumentError,
                 r"cannot import module 'no_such_module_xyz' .*expected an importable 'package.module:Name'",
                 id="a missing module"),
    pytest.param(replify.wrap(horizon=T, rho=0.2, seed=3)(own_learners.Minimal), InvalidArgumentError,
                 r"was wrapped with seed=3; expected a wrapped class without a seed", id="a wrapped class with a seed"),
    pytest.param(replify.learners()["hedge"], InvalidArgumentError,
                 r"got the LearnerSpec 'hedge'; register it .* and pass its name", id="a spec"),
]


@pytest.mark.parametrize("learner, error, message", BAD_LEARNERS)
def test_what_is_no_learner_is_refused_by_every_entry_point(learner, error, message):
    calls = {
        "evaluate": lambda: replify.evaluate(learner, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0),
        "stress": lambda: replify.stress(learner, n=N, horizon=T, budget=16),
        "sweep": lambda: replify.sweep(learners=[learner], adversaries=["iid-bernoulli"], horizons=[T], ns=[N],
                                       pairs=2, seed=0),
    }
    for name, call in calls.items():
        with pytest.raises(error, match=message if name != "sweep" else
                           message.replace("learner must", "learners must").replace("learner '", "learners '")
                           .replace("learner: no", "learners: no")):
            call()


def test_a_file_that_fails_to_import_is_reported_with_its_own_error(tmp_path):
    bad = tmp_path / "broken_learner_file.py"
    bad.write_text("raise RuntimeError('my module is broken')\n")
    with pytest.raises(InvalidArgumentError, match=r"importing .*broken_learner_file.py' raised RuntimeError: my module is broken"):
        replify.evaluate(f"{bad}:X", "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0)


def test_a_file_named_like_another_module_is_still_loaded(tmp_path):
    other = tmp_path / "json.py"  # the standard library's json is already imported
    other.write_text("import numpy as np\n\n\nclass Mine:\n    def __init__(self, *, n, horizon, rng):\n"
                     "        self.n, self.rng, self.total = n, rng, np.zeros(n)\n\n    def act(self):\n"
                     "        return int(np.argmin(self.total - self.rng.random(self.n)))\n\n"
                     "    def update(self, cost):\n        self.total += cost\n")
    report = replify.evaluate(f"{other}:Mine", "iid-bernoulli", n=N, horizon=T, pairs=4, seed=0)
    assert report.learner == "Mine"
    # loaded under a name of its own, which worker processes cannot import: its objects go by value
    parallel = replify.evaluate(f"{other}:Mine", "iid-bernoulli", n=N, horizon=T, pairs=4, seed=0, n_jobs=2)
    assert np.array_equal(parallel.regret, report.regret) and np.array_equal(parallel.identical, report.identical)


def test_a_wrapped_class_refuses_sizes_and_rho_other_than_its_own():
    wrapped = own_learners.WrappedGradient
    with pytest.raises(InvalidArgumentError, match=rf"horizon must match the horizon={T} that 'WrappedGradient' was "
                                                   rf"wrapped with; got horizon={T + 1}"):
        replify.evaluate(wrapped, "iid-bernoulli", n=N, horizon=T + 1, pairs=2, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"rho must match the rho=0.2 that 'WrappedGradient' was wrapped with; "
                                                   r"got rho=0.3"):
        replify.evaluate(wrapped, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0, rho=0.3)
    with pytest.raises(InvalidArgumentError, match=r"'WrappedLater' was wrapped without rho, and none was given; "
                                                   r"expected rho in \(0, 1\)"):
        replify.evaluate(own_learners.WrappedLater, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"'step' cannot be passed to 'WrappedGradient', a wrapped class; "
                                                   r"expected options of replify.wrap .*learner_params"):
        replify.evaluate(wrapped, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0, step=0.1)
    # the internal learner's own hyperparameters go in learner_params, as wrap takes them
    report = replify.evaluate(wrapped, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0,
                              learner_params={"learner_params": {"step": 0.1}})
    assert report.pairs == 2


def test_a_callable_seed_learner_takes_nothing_else():
    with pytest.raises(InvalidArgumentError, match=r"rho, eta applies only when learner is a registered name, a factory "
                                                   r"taking n, horizon, rng, or a wrapped class; 'gradient_from_seed' is a "
                                                   r"callable seed -> learner"):
        replify.evaluate(own_learners.gradient_from_seed, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0, rho=0.1,
                         eta=1.0)


def test_a_bandit_learner_is_refused_by_wrap_before_any_warning():
    for learner in ("ucb1", own_learners.EpsilonGreedy, functools.partial(own_learners.EpsilonGreedy, explore=0.1)):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            with pytest.raises(LearnerProtocolError, match=r"replify.wrap needs a full-information learner: .* declares "
                                                           r"feedback='bandit'"):
                replify.wrap(learner, n=N, horizon=10**6, rho=0.1, seed=0)
        assert not [w for w in record if issubclass(w.category, ReplifyWarning)], [str(w.message) for w in record]


def test_a_learner_that_disagrees_with_its_spec_on_feedback_is_refused():
    reg = replify.registry()

    class Plugin:
        @replify.hookimpl
        def register_learners(self, register):
            register(replify.LearnerSpec("says-full", own_learners.BanditMismatch, "experts"))

    reg.register(Plugin(), name="says-full-plugin")
    try:
        with pytest.raises(LearnerProtocolError, match=r"'says-full' is registered with feedback='full' but the learner "
                                                       r"its factory builds declares feedback='bandit'"):
            replify.evaluate("says-full", "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0)
    finally:
        reg.unregister(name="says-full-plugin")
    with pytest.raises(InvalidArgumentError, match=r"feedback must be one of \('full', 'bandit'\), got 'partial'"):
        replify.LearnerSpec("x", own_learners.Minimal, "experts", feedback="partial")
    with pytest.raises(InvalidArgumentError, match=r"enforces must hold only 'domain', 'horizon'; got \[\"'speed'\"\]"):
        replify.LearnerSpec("x", own_learners.Minimal, "experts", enforces={"speed"})


BAD_ADVERSARIES = [
    pytest.param(own_learners.Minimal, LearnerProtocolError,
                 r"adversary factory 'Minimal' must return an object with sample\(rng\); got Minimal", id="a learner class"),
    pytest.param(3, ArgumentTypeError, r"adversary must be a registered name .*; got 3 \(int\)", id="a number"),
    pytest.param("no-such-adversary", UnknownNameError, r"adversary: no adversary named 'no-such-adversary'",
                 id="an unknown name"),
    pytest.param(f"{HERE}:Nope", InvalidArgumentError, r"has no 'Nope'", id="a missing name"),
]


@pytest.mark.parametrize("adversary, error, message", BAD_ADVERSARIES)
def test_what_is_no_adversary_is_refused(adversary, error, message):
    with pytest.raises(error, match=message):
        replify.evaluate("hedge", adversary, n=N, horizon=T, pairs=2, seed=0)


def test_an_adversary_factory_is_checked_like_a_registered_one():
    with pytest.raises(InvalidArgumentError, match=r"adversary factory 'Coins' does not accept 'second'; it accepts "
                                                   r"first, horizon, n, rng"):
        replify.evaluate("hedge", own_learners.Coins, n=N, horizon=T, pairs=2, seed=0, adversary_params={"second": 1})
    seq = own_learners.Coins(n=N, horizon=T, rng=None)
    with pytest.raises(InvalidArgumentError, match=r"adversary_params applies only when the adversary is a registered "
                                                   r"name or a factory; 'Coins' is a distribution sequence already built"):
        replify.evaluate("hedge", seq, n=N, horizon=T, pairs=2, seed=0, adversary_params={"first": 0.1})


SCRIPT = '''
import numpy as np, pickle, warnings, replify

class Leader:
    def __init__(self, *, n, horizon, rng):
        self.n, self.rng, self.total = n, rng, np.zeros(n)
    def act(self):
        return int(np.argmin(self.total - self.rng.random(self.n)))
    def update(self, cost):
        self.total += cost

@replify.wrap(horizon=2000, rho=0.2, block_size=500)
class Wrapped(Leader):
    pass

if __name__ == "__main__":
    warnings.simplefilter("ignore")
    one = replify.evaluate(Wrapped, "iid-bernoulli", n=3, horizon=2000, pairs=4, seed=0)
    two = replify.evaluate(Wrapped, "iid-bernoulli", n=3, horizon=2000, pairs=4, seed=0, n_jobs=2)
    assert np.array_equal(one.regret, two.regret) and np.array_equal(one.identical, two.identical)
    again = pickle.loads(pickle.dumps(one))
    assert np.array_equal(again.regret, one.regret)
    print("ok")
'''


def test_a_class_decorated_in_a_script_runs_in_worker_processes(tmp_path):
    # A script's __main__ is not the workers': the decorated class must reach them (by value), and
    # its report pickles (without what replay needs, which plain pickle cannot take from __main__).
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("learner, message", [
    (own_learners.OutOfRange, r"OutOfRange: act\(\) returned action 6 at step 1; expected an integer expert index in \[0, 3\)"),
    (own_learners.GlobalRandom, r"GlobalRandom: two learners built from generators seeded alike played differently"),
])
def test_the_checks_catch_what_evaluate_would_refuse_or_cannot_see(learner, message):
    with pytest.raises(AssertionError, match=message):
        replify.testing.check_learner(learner)


@pytest.mark.parametrize("learner, message", [
    (own_learners.NoUpdate, r"must return a learner with callable act\(\) and update\(cost\); got NoUpdate without update"),
    (own_learners.BanditOneArgument, r"declares feedback='bandit', so it is updated as update\(action, cost\) — the arm "
                                     r"it played and that arm's cost; its update takes \(cost\)"),
])
def test_a_learner_off_the_protocol_is_refused_by_name(learner, message):
    with pytest.raises(LearnerProtocolError, match=message):
        replify.testing.check_learner(learner)
    with pytest.raises(LearnerProtocolError, match=message):
        replify.evaluate(learner, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0)


def test_a_sweep_refuses_an_adversary_it_cannot_name_in_its_rows():
    with pytest.raises(ArgumentTypeError, match=r"adversaries must hold registered names or 'module:Name' / 'file.py:Name' "
                                                r"references .*; got <class 'own_learners.Coins'> \(type\) at position 1"):
        replify.sweep(learners=["hedge"], adversaries=["iid-bernoulli", own_learners.Coins], horizons=[T], ns=[N],
                      pairs=2, seed=0)


def test_a_decorated_class_keeps_what_it_fixed_and_refuses_bandit_learners_where_decorated():
    with pytest.raises(InvalidArgumentError, match=r"rho was fixed when 'WrappedGradient' was wrapped \(rho=0.2\); got "
                                                   r"rho=0.3"):
        own_learners.WrappedGradient(n=N, seed=1, rho=0.3)
    assert own_learners.WrappedGradient(n=N, seed=1, rho=0.2).params.rho == 0.2  # the same value is no conflict
    with pytest.raises(LearnerProtocolError, match=r"replify.wrap needs a full-information learner"):
        replify.wrap(horizon=T, rho=0.1)(own_learners.EpsilonGreedy)


def test_wrap_takes_references_and_hints_at_a_missing_name():
    learner = replify.wrap(f"{HERE}:ProjectedGradient", n=N, horizon=T, rho=0.2, seed=0, block_size=50,
                           eps=own_learners.EPS)
    assert learner.params.certified
    with pytest.raises(UnknownNameError, match=r"did you mean '.*own_learners.py:Name', naming the class in that file"):
        replify.evaluate(HERE, "iid-bernoulli", n=N, horizon=T, pairs=2, seed=0)


class ArmAndCost(own_learners.BanditMismatch):
    """Learns from the played arm's cost, but forgot to declare feedback = "bandit"."""

    feedback = "full"


def test_a_bandit_learner_that_forgot_to_say_so_is_told():
    with pytest.raises(replify.errors.LearnerProtocolError, match="declare feedback = 'bandit'"):
        replify.evaluate(ArmAndCost, "bernoulli-arms", n=3, horizon=50, pairs=2, seed=0, progress=False)
