"""What used to run without a word and now is refused with the reason, or answered right: a
learner's lane form, batches and cycles that break their protocol, contexts written into, policies
that are not numbers, adversaries that draw from numpy's global state, declare fixed contexts they
do not show, or show means their costs contradict."""

import re
import warnings

import numpy as np
import pytest

import replify
from replify.components.sequences import ChunkedSequence
from replify.errors import DeclarationError, InvalidArgumentError, LearnerProtocolError
from replify.testing import check_learner

THETA = np.array([0.6, -0.8, 0.0])
SPHERE = {"d": 3, "theta": THETA, "contexts": "sphere"}


class Greedy:
    """A user's contextual learner: the arm whose context has the least first feature."""

    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self, context):
        return int(np.argmin(context[:, 0]))

    def update(self, action, cost):
        pass


class Scribbler(Greedy):
    """Overwrites the context it is shown (a normalisation done in place)."""

    def act(self, context):
        context /= np.linalg.norm(context, axis=1, keepdims=True) + 1.0
        return super().act(context)


class NaNPolicy(Greedy):
    def policy(self):
        return np.array([np.nan, 1.0])


class WordPolicy(Greedy):
    def policy(self):
        return "greedy"


def run(learner, adversary="linear-gaussian", params=SPHERE, **kw):
    return replify.evaluate(learner, adversary, n=3, horizon=60, pairs=2, seed=0, progress=False,
                            adversary_params=params, **kw)


def test_a_learner_that_writes_into_its_context_is_refused_by_the_engine_and_by_check_learner():
    run(Greedy)  # the well-behaved one runs
    with pytest.raises(LearnerProtocolError, match=r"Scribbler.act\(context\) at step 1 wrote into a read-only array"):
        run(Scribbler)
    with pytest.raises(AssertionError, match="wrote into the context it was given"):
        check_learner(Scribbler, n=3, horizon=20)
    check_learner(Greedy, n=3, horizon=20)


def test_a_policy_that_is_not_finite_numbers_is_refused_with_the_step():
    # NaN never equals NaN: every pair read as parted (rho_hat 1.0); a string: numpy's ValueError
    with pytest.raises(LearnerProtocolError, match=r"NaNPolicy.policy\(\) at step 1 must return a 1-d array of finite "
                                                   r"numbers; got nan at index 0"):
        run(NaNPolicy)
    with pytest.raises(LearnerProtocolError, match=r"WordPolicy.policy\(\) at step 1 .* got 'greedy' \(str\)"):
        run(WordPolicy)


class FloatCycles:
    """A batched bandit learner whose round robins break the protocol in the way ``kind`` says."""

    feedback, problem = "bandit", "experts"

    def __init__(self, *, n, horizon, rng, kind="float arms"):
        self.n, self.kind, self.t = n, kind, 0

    def act(self):
        return self.t % self.n

    def update(self, action, cost):
        self.t += 1

    def next_cycle(self):
        arms = np.arange(self.n)
        if self.kind == "float arms":
            return arms.astype(float), self.n
        return arms, self.n + 0.5  # a length that is not an integer

    def observe_sums(self, sums, pulls):
        self.t += int(pulls.sum())


class FloatBatches(FloatCycles):
    next_cycle = observe_sums = None

    def next_batch(self):
        return np.arange(self.n, dtype=float)

    def observe(self, costs):
        self.t += len(costs)


@pytest.mark.parametrize("kind", ["float arms", "fractional length"])
def test_check_learner_refuses_cycles_the_engine_refuses(kind):
    learner = lambda *, n, horizon, rng: FloatCycles(n=n, horizon=horizon, rng=rng, kind=kind)  # noqa: E731
    with pytest.raises(AssertionError, match=r"next_cycle\(\) at step 1 must give"):
        check_learner(learner, n=3, horizon=30, label="cycles")
    with pytest.raises(InvalidArgumentError, match=r"next_cycle\(\) at step 1 must give"):
        replify.evaluate(learner, "iid-bernoulli", n=3, horizon=30, pairs=2, seed=0, progress=False, fast_path=True)


def test_check_learner_refuses_batches_of_float_arms():
    with pytest.raises(AssertionError, match=r"next_batch\(\) after 0 steps gave array\(\[0., 1., 2.\]\), not"):
        check_learner(FloatBatches, n=3, horizon=30)


class LaneScribbler(Greedy):
    """A contextual learner whose lane form writes into the contexts of every lane."""

    @classmethod
    def for_lanes(cls, learners):
        return _Lanes()


class _Lanes:
    def act(self, contexts):
        contexts[:] = 0.0
        return np.zeros(contexts.shape[0], dtype=np.int64)

    def update(self, arms, costs):
        pass


def test_a_lane_form_that_writes_into_the_contexts_is_refused():
    with pytest.raises(LearnerProtocolError, match=r"_Lanes.act\(contexts\) at step 1 wrote into a read-only array"):
        run(LaneScribbler)
    with pytest.raises(ValueError, match="read-only"):
        check_learner(LaneScribbler, n=3, horizon=20)


class GlobalCoins(ChunkedSequence):
    """Draws from numpy's global random state, not from the rng it is handed."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon = n, horizon

    def sample_chunk(self, rng, start, stop):
        return (np.random.random((stop - start, self.n)) < 0.5).astype(float)


class GlobalHedge:
    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self):
        return int(np.random.randint(self.n))

    def update(self, cost):
        pass


def test_draws_from_numpys_global_state_are_refused_and_who_drew_is_named():
    with pytest.raises(InvalidArgumentError, match=r"the adversary \(GlobalCoins\) drew from numpy's global random"):
        replify.evaluate("hedge", GlobalCoins, n=3, horizon=100, pairs=2, seed=0, progress=False)
    with pytest.raises(InvalidArgumentError, match=r"the learner \(or code it calls\) drew from numpy's global"):
        replify.evaluate(GlobalHedge, "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0, progress=False)
    replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0, progress=False)  # no false alarm


class Shifty(ChunkedSequence):
    """Declares fixed contexts (a linear bandit) but shows fresh ones every step; or, with
    ``lie``, shows the fixed ones with means that contradict its costs."""

    d, iid, cost_bounds = 2, True, (0.0, 1.0)

    def __init__(self, *, n, horizon, rng, lie=False):
        self.n, self.horizon, self.lie = n, horizon, lie
        self.fixed_contexts = np.eye(n, 2)

    def sample_contexts(self, rng, start, stop):
        rows = stop - start
        x = (np.broadcast_to(self.fixed_contexts, (rows, self.n, 2)).copy() if self.lie
             else rng.normal(size=(rows, self.n, 2)))
        costs = (rng.random((rows, self.n)) < 0.5).astype(float)
        means = np.full((rows, self.n), 0.0 if self.lie else 0.5)  # the lie: mean 0 for costs of mean 0.5
        return x, costs, means

    def sample_chunk(self, rng, start, stop):
        return self.sample_contexts(rng, start, stop)[1]

    def sample_sums(self, rng, starts, stops):
        lengths = np.asarray(stops) - np.asarray(starts)
        return rng.binomial(lengths[:, None], 0.5, (len(lengths), self.n)).astype(float)


def test_fixed_contexts_that_the_adversary_does_not_show_are_refused_on_every_path():
    for fast in (False, True):
        with pytest.raises(DeclarationError, match=r"declares fixed_contexts .* shows other contexts at step 1"):
            replify.evaluate(Greedy if not fast else "rep-linear-elimination", Shifty, n=3, horizon=300, pairs=2,
                             seed=0, progress=False, **({"rho": 0.3} if fast else {}))


def test_means_that_contradict_the_costs_are_refused():
    # the user's adversary of the audit: regret -440 in 300 steps, no warning; the bound is Azuma-Hoeffding's
    # at a false-alarm probability of 1e-6 for the whole run (engine/lanes.py, check_means)
    with pytest.raises(DeclarationError, match=r"the adversary's means contradict its own costs"):
        replify.evaluate(Greedy, Shifty, n=3, horizon=300, pairs=2, seed=0, progress=False,
                         adversary_params={"lie": True})
    with warnings.catch_warnings():  # honest means on the shipped adversaries: no false alarm
        warnings.simplefilter("ignore")
        for params in (SPHERE, {"d": 3, "contexts": "gaussian", "sigma": 0.5}):
            replify.evaluate(Greedy, "linear-gaussian", n=3, horizon=2000, pairs=4, seed=1, progress=False,
                             adversary_params=params)
        replify.evaluate(Greedy, "classification-bandit", n=3, horizon=2000, pairs=4, seed=1, progress=False)


class FourCoins(ChunkedSequence):
    """A user's linear bandit with costs in {0, 4}: fixed features, each cost 4·Bernoulli(1/2)
    (noise of scale 2 about the mean), declaring its noise only as ``declare`` says."""

    d, iid = 2, True

    def __init__(self, *, n, horizon, rng, declare=None):
        self.n, self.horizon = n, horizon
        self.fixed_contexts = np.eye(n, 2)
        if declare == "bounds":
            self.cost_bounds = (0.0, 4.0)
        elif declare == "noise":
            self.noise_scale = 2.0

    def sample_contexts(self, rng, start, stop):
        costs = 4.0 * (rng.random((stop - start, self.n)) < 0.5)
        return np.broadcast_to(self.fixed_contexts, (stop - start, self.n, 2)), costs, np.full_like(costs, 2.0)

    def sample_chunk(self, rng, start, stop):
        return self.sample_contexts(rng, start, stop)[1]


@pytest.mark.parametrize("declare, said", [(None, "declares neither noise_scale nor finite cost_bounds"),
                                           ("bounds", r"declares cost_bounds \(0.0, 4.0\), so noise up to 2"),
                                           ("noise", "declares noise_scale 2")])
def test_a_sub_gaussian_certificate_is_void_where_the_noise_is_unknown_or_larger(declare, said):
    with pytest.warns(replify.errors.ReplifyWarning, match="measured, not certified"):
        report = replify.evaluate("rep-linear-elimination", FourCoins, n=3, horizon=2000, pairs=2, seed=0, rho=0.1,
                                  sigma=0.5, progress=False, adversary_params={"declare": declare}, fast_path=False)
    assert report.certified is False and report.claim == "measured"
    assert re.search(said, report.params["certificate_note"])


def test_theta_rows_must_be_the_pieces_asked_for():
    # three rows with pieces=1 played three pieces; linear-switching listed (5,) as allowed and refused it
    with pytest.raises(InvalidArgumentError, match=r"theta has 3 rows .* but pieces=1; .* give pieces=3"):
        replify.make_adversary("linear-gaussian", n=3, horizon=100, seed=0, d=2, theta=np.ones((3, 2)))
    with pytest.raises(InvalidArgumentError, match=r"theta must be of shape \(4, 5\), one theta per piece .* got shape "
                                                   r"\(5,\)"):
        replify.make_adversary("linear-switching", n=3, horizon=100, seed=0, d=5, theta=np.ones(5))
    three = replify.make_adversary("linear-gaussian", n=3, horizon=90, seed=0, d=2, theta=np.eye(3, 2), pieces=3)
    assert three.theta.shape == (3, 2)


def test_a_schedule_of_decisions_must_be_a_sequence_not_a_mapping():
    with pytest.raises(InvalidArgumentError, match=r"decisions must be a sequence of steps .* got dict \{1: 2\}"):
        replify.evaluate("perturbed-commit", "iid-bernoulli", n=3, horizon=100, pairs=2, seed=0, rho=0.1,
                         decisions={1: 2}, progress=False)


def test_a_sweep_config_says_which_files_from_outside_its_folder_it_will_import(tmp_path, capsys, monkeypatch):
    from replify.cli import main

    (tmp_path / "outside").mkdir()
    (tmp_path / "cfg").mkdir()
    learner = ("import sys\nprint('IMPORTED', file=sys.stderr)\n"
               "class L:\n    def __init__(self, *, n, horizon, rng):\n        self.n = n\n"
               "    def act(self):\n        return 0\n    def update(self, cost):\n        pass\n")
    (tmp_path / "outside" / "x.py").write_text(learner)
    (tmp_path / "cfg" / "mine.py").write_text(learner.replace("class L", "class M"))
    absolute = tmp_path / "outside" / "y.py"
    absolute.write_text(learner.replace("class L", "class K"))
    config = tmp_path / "cfg" / "sweep.toml"
    config.write_text(f'learners = ["../outside/x.py:L", "{absolute}:K", "mine.py:M"]\nadversaries = ["iid-bernoulli"]\n'
                      'horizons = [50]\nns = [2]\npairs = 2\nseed = 0\n')
    monkeypatch.chdir(tmp_path / "cfg")
    assert main(["sweep", str(config), "--quiet", "--output", str(tmp_path / "out.jsonl")]) == 0
    err = capsys.readouterr().err
    said = err.index("imports 2 files from outside its folder")
    assert "../outside/x.py" in err[said:] and str(absolute) in err[said:] and "mine.py" not in err[said:err.index("\n", said)]
    assert said < err.index("IMPORTED")  # said before the first import runs the file's code


def test_run_says_which_file_from_outside_the_working_folder_it_will_import(tmp_path, capsys, monkeypatch):
    from replify.cli import main

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text(
        "import sys\nprint('IMPORTED', file=sys.stderr)\nclass L:\n    def __init__(self, *, n, horizon, rng):\n"
        "        self.n = n\n    def act(self):\n        return 0\n    def update(self, cost):\n        pass\n")
    monkeypatch.chdir(tmp_path / "here")
    assert main(["run", "../elsewhere/x.py:L", "-n", "2", "-T", "50", "--pairs", "2", "--quiet"]) == 0
    err = capsys.readouterr().err
    said = err.index("replify run: the command imports 1 file from outside the working folder")
    assert "../elsewhere/x.py" in err[said:] and said < err.index("IMPORTED")


def test_a_cost_outside_a_learners_domain_names_the_domain_the_step_and_the_first_value():
    # rep-ridge takes costs in [0, 1]; on linear-gaussian with 20 arms the message printed twenty floats
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(replify.errors.CostError, match=r"at step 1 must have entries in \[0, 1\], got -?\d\.\d+ at "
                                                           r"entry \d+ of 20 \(\d+ outside\): that is the domain RepRidge"):
            replify.evaluate("rep-ridge", "linear-gaussian", n=20, horizon=200, pairs=2, seed=0, rho=0.1,
                             progress=False, adversary_params={"d": 3, "contexts": "sphere"})
