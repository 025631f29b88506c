"""The paired-run engine: bit-identical to stepping, exact block-sum fast path, the same results
whatever the parallelism, and memory bounded whatever the horizon."""

import math
import sys

import numpy as np
import pytest

import replify
from replify.engine import limits as engine  # the engine's sizes, which tests shrink
from replify.components.actions import Box
from replify.components.blocks import BlockLearner
from replify.base.checks import CostDomain
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence

from conftest import RandomHedge


class UniformCosts:
    """Non-integer costs, so that the order of every float addition shows."""

    def __init__(self, n, horizon, scale=1.0, chunked=True):
        self.n, self.horizon, self.scale = n, horizon, scale
        if not chunked:
            self.sample_chunk = None  # an adversary that can only draw whole sequences

    def sample(self, rng):
        return rng.random((self.horizon, self.n)) * self.scale

    def sample_chunk(self, rng, start, stop):
        return rng.random((stop - start, self.n)) * self.scale


def reference(build, seq, *, n, horizon, pairs, seed, action_set=None):
    """What evaluate() must produce, computed the slow way: every pair, every step, act() then
    update(). Regret adds each block's cost sums (from zero within a block, then block after
    block; a block is one step for a learner without blocks), as the learners themselves do."""
    root = seed_sequence(seed)
    identical, agreement, first, regret = [], [], [], []
    for k in range(pairs):
        runs = []
        for side in (0, 1):
            learner = build(child(root, INTERNAL, k))
            costs = np.asarray(seq.sample(np.random.default_rng(child(root, DATA, k, side))))
            acts = []
            for c in costs:
                acts.append(np.array(learner.act(), copy=True))
                learner.update(c)
            acts = np.array(acts)
            b = learner.block_size if isinstance(learner, BlockLearner) else 1
            paid, total = 0.0, np.zeros(n)
            for s in range(0, horizon, b):
                block = np.zeros(n)
                for c in costs[s : s + b]:
                    block = block + c
                a = acts[s]
                paid = paid + (block[a] if acts.ndim == 1 else float(np.sum(a * block)))
                total = total + block
            best = total.min() if acts.ndim == 1 else action_set.min_cost(total)
            runs.append(acts)
            regret.append(paid - best)
        same = runs[0] == runs[1] if runs[0].ndim == 1 else (runs[0] == runs[1]).all(axis=1)
        identical.append(same.all())
        agreement.append(same.mean())
        first.append(0 if same.all() else int(np.argmin(same)) + 1)
    return np.array(identical), np.array(agreement), np.array(first), np.array(regret).reshape(-1, 2)


class StepOnly:
    """A black-box learner without run(): the engine must step it."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon, self.rng, self.total = n, horizon, rng, np.zeros(n)

    def act(self):
        return int(np.argmin(self.total - self.rng.random(self.n) * 0.3))

    def update(self, cost):
        self.total += cost


CASES = {
    "ftplb-star": lambda s: replify.make("ftplb-star", n=4, horizon=700, seed=s, rho=0.1, block_size=30, eps=0.2),
    "wrapped hedge": lambda s: replify.wrap("hedge", n=4, horizon=700, rho=0.1, seed=s, block_size=45, eps=0.5),
    "hedge": lambda s: replify.make("hedge", n=4, horizon=700, seed=s),
    "step-only": lambda s: StepOnly(n=4, horizon=700, rng=np.random.default_rng(s)),
    "iid-experts switching": lambda s: replify.make("iid-experts", n=4, horizon=700, seed=s, rho=0.1, K_constant=0.004),
}


@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_per_step_path_is_bit_identical_to_stepping(case, chunked, monkeypatch):
    # Tiny memory budget and groups: many chunks, blocks cut across chunks, several lane groups.
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 4 * 8 * 4 * 37)
    monkeypatch.setattr(engine, "MAX_GROUP_PAIRS", 2)
    seq = UniformCosts(4, 700, chunked=chunked)
    report = replify.evaluate(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11, fast_path=False)
    identical, agreement, first, regret = reference(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11)
    assert not report.fast_path
    assert np.array_equal(report.identical, identical)
    assert np.array_equal(report.agreement, agreement)
    assert np.array_equal(report.first_divergence, first)
    assert np.array_equal(report.regret, regret)


def test_olo_per_step_path_is_bit_identical_to_stepping(monkeypatch):
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 2000)
    build = lambda s: replify.make("fllb", actions=Box(3), horizon=500, seed=s, rho=0.1, block_size=40, eps=0.3)  # noqa: E731
    seq = UniformCosts(3, 500, scale=1 / 3)
    report = replify.evaluate(build, seq, n=3, horizon=500, pairs=4, seed=2, fast_path=False, actions=None)
    ref = reference(build, seq, n=3, horizon=500, pairs=4, seed=2, action_set=Box(3))
    assert np.array_equal(report.regret, ref[3]) and np.array_equal(report.first_divergence, ref[2])


@pytest.mark.slow
def test_the_fast_path_has_the_law_of_the_per_step_path():
    # Parameters where replication fails often and regret varies, so that both laws are
    # spread out. Per path m = 1500 pairs (was 2000). Two-sample bounds with total false-alarm 1e-6:
    # proportions differ by at most 2*sqrt(ln(4/1e-6)/(2m)); empirical CDFs of the per-pair mean
    # regret by at most 2*sqrt(ln(4/1e-6)/(2m)) as well (DKW for each sample, union bound).
    m = 1500
    kw = dict(n=3, horizon=2000, pairs=m, rho=0.1, block_size=100, eps=0.05,
              adversary_params={"means": [0.45, 0.5, 0.55]})
    fast = replify.evaluate("ftplb-star", "iid-bernoulli", seed=1, fast_path=True, **kw)
    slow = replify.evaluate("ftplb-star", "iid-bernoulli", seed=2, fast_path=False, **kw)
    assert fast.fast_path and not slow.fast_path
    d = 2 * math.sqrt(math.log(4 / 1e-6) / (2 * m))
    assert 0.2 < slow.rho_hat < 0.8  # a law with room to differ
    assert abs(fast.rho_hat - slow.rho_hat) <= d
    a, b = np.sort(fast.regret.mean(axis=1)), np.sort(slow.regret.mean(axis=1))
    grid = np.union1d(a, b)
    ks = np.abs(np.searchsorted(a, grid, side="right") / m - np.searchsorted(b, grid, side="right") / m).max()
    assert ks <= d
    # per-pair agreement lies in [0, 1]: Hoeffding for each mean, union bound, the same d
    assert abs(fast.agreement_mean - slow.agreement_mean) <= d


def test_fast_path_is_chosen_when_possible_and_refused_when_not():
    kw = dict(n=3, horizon=300, pairs=2, seed=0)
    assert replify.evaluate("ftplb-star", "iid-bernoulli", rho=0.1, block_size=30, **kw).fast_path
    assert not replify.evaluate("hedge", "iid-bernoulli", **kw).fast_path
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"fast_path=True needs block learners"):
        replify.evaluate("hedge", "iid-bernoulli", fast_path=True, **kw)


def test_results_do_not_depend_on_n_jobs():
    kw = dict(n=5, horizon=3000, pairs=12, seed=3, rho=0.1, block_size=200, eps=0.01, fast_path=False)
    one = replify.evaluate("ftplb-star", "iid-bernoulli", n_jobs=1, **kw)
    two = replify.evaluate("ftplb-star", "iid-bernoulli", n_jobs=2, **kw)
    assert one.to_dict(per_pair=True) == two.to_dict(per_pair=True)
    user = lambda s: RandomHedge(n=5, horizon=3000, rng=np.random.default_rng(s))  # noqa: E731
    a = replify.evaluate(user, "iid-bernoulli", n=5, horizon=3000, pairs=6, seed=1, n_jobs=1)
    b = replify.evaluate(user, "iid-bernoulli", n=5, horizon=3000, pairs=6, seed=1, n_jobs=2)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.first_divergence, b.first_divergence)


@pytest.mark.slow
def test_results_on_a_real_local_dask_cluster_are_the_same():
    kw = dict(n=5, horizon=3000, pairs=12, seed=3, rho=0.1, block_size=200, eps=0.01)
    here = replify.evaluate("ftplb-star", "iid-bernoulli", **kw)
    on_dask = replify.evaluate("ftplb-star", "iid-bernoulli", backend="dask", n_jobs=2, **kw)
    assert here.to_dict(per_pair=True) == on_dask.to_dict(per_pair=True)


# n = 10, T = 3*10^6, per-step path: drawing each lane's costs whole would take 8 lanes x 240 MB, 1.9 GB. The
# peak is the child's own (VmHWM, which starts afresh at exec; ru_maxrss keeps the parent's, pytest's,
# across it): about 95 MiB. Run ahead in the background (conftest.py, early_subprocess).
LONG_HORIZON_CODE = (
    "import replify\n"
    "r = replify.evaluate('ftplb-star', 'iid-bernoulli', n=10, horizon=3 * 10**6, pairs=4, seed=0, rho=0.1, fast_path=False)\n"
    "print(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')))\n"
)


@pytest.mark.slow
@pytest.mark.early_subprocess([sys.executable, "-W", "ignore", "-c", LONG_HORIZON_CODE], timeout=900)
def test_peak_memory_stays_bounded_on_a_long_horizon(early_subprocess):
    out = early_subprocess
    out.check_returncode()  # CalledProcessError, as subprocess.run(check=True) raised
    peak_kib = int(out.stdout.split()[-1])
    assert peak_kib < 2**20, f"peak RSS {peak_kib / 2**10:.0f} MiB"


def test_agreement_curve_matches_per_step_agreement():
    build = CASES["hedge"]
    seq = UniformCosts(4, 700)
    report = replify.evaluate(build, seq, n=4, horizon=700, pairs=5, seed=11)
    # recompute per-step agreement directly
    root = seed_sequence(11)
    same = []
    for k in range(5):
        acts = [build(child(root, INTERNAL, k)).run(seq.sample(np.random.default_rng(child(root, DATA, k, s)))) for s in (0, 1)]
        same.append(acts[0] == acts[1])
    same = np.array(same)
    edges = report.curve_edges
    expected = [same[:, a:b].mean() for a, b in zip(edges[:-1], edges[1:])]
    assert np.allclose(report.agreement_curve, expected)
    assert report.agreement_curve.mean() == pytest.approx(report.agreement_mean, rel=0.05)
    fast = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=1000, pairs=20, seed=0, rho=0.1, block_size=100, eps=0.05)
    assert fast.fast_path and np.all((fast.agreement_curve >= 0) & (fast.agreement_curve <= 1))
    assert np.sum(fast.agreement_curve * np.diff(fast.curve_edges)) / 1000 == pytest.approx(fast.agreement_mean)


@pytest.mark.parametrize("scale", [1.0, 0.3])
def test_integer_costs_are_summed_in_any_order_and_stay_bit_identical(scale, monkeypatch):
    # Bernoulli costs at scale 1 are integers: the engine sums them with BLAS, which must give
    # exactly the sequential sums; at scale 0.3 it must add step by step.
    monkeypatch.setattr(engine, "LANE_CHUNK_BYTES", 8 * 4 * 97)
    seq = replify.make_adversary("iid-bernoulli", n=4, horizon=700, seed=0, means=[0.2, 0.4, 0.6, 0.8], scale=scale)
    assert seq.integer_costs == (scale == 1.0)
    build = CASES["ftplb-star"]
    report = replify.evaluate(build, seq, n=4, horizon=700, pairs=5, seed=3, fast_path=False)
    ref = reference(build, seq, n=4, horizon=700, pairs=5, seed=3)
    assert np.array_equal(report.regret, ref[3]) and np.array_equal(report.first_divergence, ref[2])


class FixedRows:
    """0/1 costs that are a fixed function of the lane's seed (not of how they are drawn): the
    segment path and the per-step path then see exactly the same costs, and every sum is exact."""

    integer_costs = True

    def __init__(self, n, horizon):
        self.n, self.horizon = n, horizon

    def rows(self, rng):
        seq = rng.bit_generator.seed_seq
        local = np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=seq.spawn_key))
        means = np.linspace(0.6, 0.4, self.n)  # close means (pairs part); expert 0, played first, the worst
        return (local.random((self.horizon, self.n)) < means).astype(float)

    def sample(self, rng):
        return self.rows(rng)

    def sample_chunk(self, rng, start, stop):
        return self.rows(rng)[start:stop]

    def sample_sums(self, rng, starts, stops):
        c = np.concatenate([np.zeros((1, self.n)), np.cumsum(self.rows(rng), axis=0)])
        return c[np.asarray(stops)] - c[np.asarray(starts)]


def _iid_threshold_constant(T, n, rho, threshold):
    """The K_constant that puts iid-experts' fallback threshold at ``threshold``."""
    ll = math.log(math.log(T))
    unit_K = (1 / rho) * ll**2 * math.log(n * ll / rho) * math.sqrt(T)
    return (threshold + 2 * math.sqrt(T * math.log(n))) / unit_K


@pytest.mark.parametrize("threshold", [1e9, 120.0, 40.0])
def test_iid_experts_segment_path_equals_the_per_step_path_on_the_same_costs(threshold, monkeypatch):
    # The same costs on both paths: every outcome, the agreement curve and the per-step
    # disagreement must be equal. Threshold 1e9: blocks summed whole; 120: summed up to near the
    # threshold, then steps (MIN_SUMMED lowered so that both happen at this T), the fallback firing
    # in most lanes near t = 800; 40: it fires early (t ~ 200) and FTPL runs step by step after it.
    from replify_plugins.learners import iid_experts

    monkeypatch.setattr(iid_experts, "MIN_SUMMED", 16)
    monkeypatch.setattr(iid_experts, "CHUNK_ROWS", 97)
    T, n, rho = 2000, 4, 0.3
    C = _iid_threshold_constant(T, n, rho, threshold)
    seq = FixedRows(n, T)
    kw = dict(n=n, horizon=T, pairs=6, seed=5, rho=rho, K_constant=C, noise_scale=1.0 if threshold < 1e9 else 500.0)
    fast = replify.evaluate("iid-experts", seq, fast_path=True, **kw)
    slow = replify.evaluate("iid-experts", seq, fast_path=False, **kw)
    assert fast.fast_path and not slow.fast_path
    for field in ("identical", "agreement", "first_divergence", "regret", "action_counts", "constant_regret",
                  "agreement_curve", "disagreement_counts"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field
    assert slow.rho_hat > 0  # pairs that part: first divergences and disagreement are exercised


def test_iid_experts_advance_refuses_what_next_segment_did_not_offer():
    learner = replify.make("iid-experts", n=3, horizon=1000, seed=0, rho=0.1)
    steps, summed = learner.next_segment()
    assert summed and steps == learner.params.block_lengths[0]
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"can take at most 32 summed steps"):
        learner.advance(np.zeros(3), steps + 1)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"total must be 3 finite cost sums"):
        learner.advance(np.array([1.0, np.nan, 0.0]), steps)


@pytest.mark.slow
def test_iid_experts_segment_path_has_the_law_of_the_per_step_path():
    # The fallback fires in some pairs and not in others (threshold 150 at T = 3000): both laws
    # are spread out. m = 600 pairs per path; two-sample bounds with total false alarm 1e-6 as in
    # test_the_fast_path_has_the_law_of_the_per_step_path: d = 2 sqrt(ln(4/1e-6) / (2m)) = 0.225 (0.142
    # at the former m = 1500) for the failure rates, the fallback rates and the KS distance of the
    # per-pair mean regrets.
    m, T, n, rho = 600, 3000, 3, 0.3
    kw = dict(n=n, horizon=T, pairs=m, rho=rho, K_constant=_iid_threshold_constant(T, n, rho, 150.0),
              noise_scale=30.0, adversary_params={"means": [0.45, 0.5, 0.55]})
    fast = replify.evaluate("iid-experts", "iid-bernoulli", seed=1, fast_path=True, **kw)
    slow = replify.evaluate("iid-experts", "iid-bernoulli", seed=2, fast_path=False, **kw)
    d = 2 * math.sqrt(math.log(4 / 1e-6) / (2 * m))
    assert 0.1 < slow.rho_hat < 0.9
    assert abs(fast.rho_hat - slow.rho_hat) <= d
    a, b = np.sort(fast.regret.mean(axis=1)), np.sort(slow.regret.mean(axis=1))
    grid = np.union1d(a, b)
    assert np.abs(np.searchsorted(a, grid, side="right") / m - np.searchsorted(b, grid, side="right") / m).max() <= d
    assert abs(fast.agreement_mean - slow.agreement_mean) <= d


def whole_sequence_memory(learner):
    """The whole-sequence memory test's command for ``learner``: prints the peak's growth in KiB."""
    code = (
        "import warnings, numpy as np, replify\n"
        "warnings.simplefilter('ignore')\n"
        "def peak_kib(): return next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
        "class User:\n"
        "    def __init__(self, n, horizon): self.n, self.horizon = n, horizon\n"
        "    def sample(self, rng): return rng.random((self.horizon, self.n))\n"
        f"kw = {{'rho': 0.1}} if {learner!r} != 'hedge' else {{}}\n"
        "replify.evaluate('constant', User(10, 100), n=10, horizon=100, pairs=2, seed=0)\n"
        "base = peak_kib()\n"
        f"replify.evaluate({learner!r}, User(10, 5 * 10**5), n=10, horizon=5 * 10**5, pairs=3, seed=0, **kw)\n"
        "print(peak_kib() - base)\n"
    )
    return pytest.param(learner, marks=pytest.mark.early_subprocess([sys.executable, "-c", code], timeout=600))


@pytest.mark.parametrize("learner", [whole_sequence_memory("ftplb-star"), whole_sequence_memory("hedge")])
@pytest.mark.slow
def test_a_whole_sequence_adversary_runs_in_two_sequences_of_memory(learner, early_subprocess):
    # A user's adversary with only sample(rng): 3 pairs at n = 10, T = 5 x 10^5 (38 MiB a sequence).
    # Kept for all of a group's lanes, as before, it took 6 sequences (229 MiB); one pair at a time, each
    # lane's draw freed once folded or played, the peak above the interpreter's is at most two
    # sequences plus the engine's chunks (2 MiB each) and the learner's state: bound 2 x 38 + 40 MiB
    # (hedge measured 89 MiB; at T = 10^6, 186 MiB against 193, in twice the time). The peaks are the
    # child's own (VmHWM, which starts afresh at exec): ru_maxrss keeps the parent's, pytest's, across
    # exec, which hid any growth below pytest's own size. The command runs ahead in the background
    # (conftest.py, early_subprocess).
    out = early_subprocess
    out.check_returncode()  # CalledProcessError, as subprocess.run(check=True) raised
    grown_mib = int(out.stdout.split()[-1]) / 2**10
    sequence_mib = 5 * 10**5 * 10 * 8 / 2**20
    assert grown_mib < 2 * sequence_mib + 40, f"peak grew by {grown_mib:.0f} MiB"


@pytest.mark.parametrize("case", ["hedge", "step-only", "ftplb-star", "iid-experts switching"])
def test_a_whole_sequence_adversary_gives_the_per_step_results(case, monkeypatch):
    # The pair-by-pair path (whole-sequence adversaries) against the reference, with small
    # chunks so that a lane is played in many pieces.
    monkeypatch.setattr(engine, "PAIR_CHUNK_BYTES", 4 * 8 * 37)
    seq = UniformCosts(4, 700, chunked=False)
    report = replify.evaluate(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11)
    identical, agreement, first, regret = reference(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11)
    assert np.array_equal(report.identical, identical) and np.array_equal(report.first_divergence, first)
    assert np.array_equal(report.agreement, agreement) and np.array_equal(report.regret, regret)


@pytest.mark.parametrize("case", ["hedge", "ftplb-star", "iid-experts switching"])
@pytest.mark.parametrize("chunked", [True, False])
def test_the_regret_curve_is_the_regret_at_its_steps(case, chunked, monkeypatch):
    # Stepping every pair on the same costs, the regret after each of the curve's steps must be
    # what the report holds (to the last bit for the per-step paths; block learners at their
    # block ends). Small chunks: checkpoints fall inside chunks and across lane groups.
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 4 * 8 * 4 * 37)
    monkeypatch.setattr(engine, "PAIR_CHUNK_BYTES", 4 * 8 * 37)
    seq = UniformCosts(4, 700, chunked=chunked)
    report = replify.evaluate(CASES[case], seq, n=4, horizon=700, pairs=3, seed=5, fast_path=False)
    steps = report.curve_steps
    assert steps[-1] == 700 and np.all(np.diff(steps) > 0)
    root = seed_sequence(5)
    for k in range(3):
        for side in (0, 1):
            learner = CASES[case](child(root, INTERNAL, k))
            costs = np.asarray(seq.sample(np.random.default_rng(child(root, DATA, k, side))))
            acts = np.array([(learner.act(), learner.update(c))[0] for c in costs])
            paid = np.cumsum(costs[np.arange(700), acts])
            best = np.cumsum(costs, axis=0).min(axis=1)
            assert np.allclose(report.regret_curve_values[k, side], (paid - best)[steps - 1], rtol=0, atol=1e-9)
    assert report.regret_curve["mean"][-1] == pytest.approx(report.regret_mean)
    lo, hi = report.regret_curve["low"], report.regret_curve["high"]
    assert np.all(lo <= report.regret_curve["mean"]) and np.all(report.regret_curve["mean"] <= hi)


@pytest.mark.parametrize("case", ["iid-experts segments", "whole sequences", "mixed"])
def test_the_new_paths_give_the_same_report_whatever_n_jobs(case):
    from test_user_code import MixedHedge

    if case == "iid-experts segments":
        learner, adversary, kw = "iid-experts", "iid-bernoulli", dict(rho=0.1, noise_scale=30.0)
    elif case == "whole sequences":
        learner, adversary, kw = "hedge", UniformCosts(4, 3000, chunked=False), {}
    else:
        learner, adversary, kw = MixedHedge, "iid-bernoulli", {}
    one = replify.evaluate(learner, adversary, n=4, horizon=3000, pairs=10, seed=3, n_jobs=1, **kw)
    two = replify.evaluate(learner, adversary, n=4, horizon=3000, pairs=10, seed=3, n_jobs=2, **kw)
    assert one.to_dict(per_pair=True) == two.to_dict(per_pair=True)
    assert np.array_equal(one.regret_curve_values, two.regret_curve_values)


class WholeBernoulli:
    """0/1 costs, whole sequences only, no integer_costs declared: the engine finds the whole
    numbers itself and sums them with BLAS, which must still equal stepping bit for bit."""

    def __init__(self, n, horizon):
        self.n, self.horizon = n, horizon

    def sample(self, rng):
        return (rng.random((self.horizon, self.n)) < 0.5).astype(float)


@pytest.mark.parametrize("case", ["ftplb-star", "wrapped hedge"])
def test_whole_numbers_from_a_whole_sequence_adversary_stay_bit_identical(case, monkeypatch):
    monkeypatch.setattr(engine, "WHOLE_SLICE_BYTES", 4 * 8 * 53)  # slices cut across blocks
    seq = WholeBernoulli(4, 700)
    report = replify.evaluate(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11)
    identical, agreement, first, regret = reference(CASES[case], seq, n=4, horizon=700, pairs=5, seed=11)
    assert np.array_equal(report.regret, regret) and np.array_equal(report.first_divergence, first)
    assert np.array_equal(report.identical, identical) and np.array_equal(report.agreement, agreement)


class BlockLeader(BlockLearner):
    """Follow the leader on blocks over costs of any magnitude up to 2^60."""

    def __init__(self, *, n, horizon, rng, block_size=30):
        super().__init__(n=n, horizon=horizon, block_size=block_size, domain=CostDomain(low=-(2.0**60), high=2.0**60))
        self._action = int(rng.integers(n))

    def _decide(self, cums, steps):
        return np.argmin(cums, axis=1)


class WholeIntegers:
    """Whole-sequence integer costs of a given magnitude, signs mixed."""

    def __init__(self, n, horizon, magnitude):
        self.n, self.horizon, self.magnitude = n, horizon, magnitude

    def sample(self, rng):
        return rng.integers(-self.magnitude, self.magnitude, size=(self.horizon, self.n)).astype(float)


@pytest.mark.parametrize("magnitude", [2**40, 2**51])
def test_large_whole_numbers_stay_bit_identical(magnitude, monkeypatch):
    # Whole numbers are summed with BLAS only when every partial sum of a lane is an exact integer
    # (magnitude below 2^53 / T); 2^40 at T = 700 is (BLAS path), 2^51 is not (sums in order, as
    # stepping adds them: rounding happens, identically). Either way the engine equals stepping.
    monkeypatch.setattr(engine, "WHOLE_SLICE_BYTES", 4 * 8 * 53)
    build = lambda s: BlockLeader(n=4, horizon=700, rng=np.random.default_rng(s))  # noqa: E731
    seq = WholeIntegers(4, 700, magnitude)
    report = replify.evaluate(build, seq, n=4, horizon=700, pairs=6, seed=2)
    identical, agreement, first, regret = reference(build, seq, n=4, horizon=700, pairs=6, seed=2)
    assert np.array_equal(report.regret, regret) and np.array_equal(report.first_divergence, first)
    assert np.array_equal(report.identical, identical) and np.array_equal(report.agreement, agreement)


class OneBadCost:
    """0/1 costs, whole sequences only, with one entry replaced at a given step."""

    def __init__(self, n, horizon, step, value):
        self.n, self.horizon, self.step, self.value = n, horizon, step, value

    def sample(self, rng):
        costs = (rng.random((self.horizon, self.n)) < 0.5).astype(float)
        costs[self.step - 1, 2] = self.value
        return costs


@pytest.mark.parametrize("value", [1.5, -0.25, np.nan, np.inf])
def test_a_whole_sequence_cost_outside_the_domain_is_refused_with_its_step(value, monkeypatch):
    # In a later slice than the first (slices of 53 rows), so the check must run on every slice.
    monkeypatch.setattr(engine, "WHOLE_SLICE_BYTES", 4 * 8 * 53)
    with pytest.raises(replify.errors.CostError, match="step 613"):
        replify.evaluate(CASES["ftplb-star"], OneBadCost(4, 700, 613, value), n=4, horizon=700, pairs=2, seed=0)


def test_negative_zero_is_a_cost_in_zero_one():
    # -0.0's bit pattern is above 1.0's: the one-pass check of [0, 1] fails on it and the extrema
    # decide, which accept it — and the report is the one +0.0 gives.
    minus = replify.evaluate(CASES["ftplb-star"], OneBadCost(4, 700, 300, -0.0), n=4, horizon=700, pairs=3, seed=0)
    plus = replify.evaluate(CASES["ftplb-star"], OneBadCost(4, 700, 300, 0.0), n=4, horizon=700, pairs=3, seed=0)
    assert minus.to_dict(per_pair=True) == plus.to_dict(per_pair=True)


class NaNAt:
    """Uniform costs, drawn chunk by chunk (or only whole, ``whole=True``), with a NaN for expert 1
    at one step."""

    def __init__(self, n, horizon, step, whole=False):
        self.n, self.horizon, self.step = n, horizon, step
        if whole:
            self.sample_chunk = None

    def _rows(self, rng, start, stop):
        out = rng.random((stop - start, self.n))
        if start < self.step <= stop:
            out[self.step - start - 1, 1] = np.nan
        return out

    def sample_chunk(self, rng, start, stop):
        return self._rows(rng, start, stop)

    def sample(self, rng):
        return self._rows(rng, 0, self.horizon)


@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("learner", ["step-only", "run", "mixed"])
def test_a_nan_beyond_the_first_chunk_is_reported_at_its_own_step(learner, whole, monkeypatch):
    # Learners that declare no cost domain: nothing held the draws to one, and a NaN was found only
    # in a chunk's running total — "by step 1024" (the chunk's end), or by a learner counting rows
    # inside its chunk. The step is the draw's own, in the run: 2001.
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 4 * 8 * 3 * 97)  # chunks of 97 steps: step 2001 is in the 21st
    monkeypatch.setattr(engine, "PAIR_CHUNK_BYTES", 8 * 3 * 97)
    from test_user_code import MixedHedge

    class WithRun(StepOnly):
        def run(self, costs):
            out = []
            for c in costs:
                out.append(self.act())
                self.update(c)
            return np.array(out)

    cls = {"step-only": StepOnly, "run": WithRun, "mixed": MixedHedge}[learner]
    with pytest.raises(replify.errors.CostError, match=r"costs drawn by the adversary at step 2001 must be finite, got \[.*nan"):
        replify.evaluate(cls, NaNAt(3, 3000, 2001, whole=whole), n=3, horizon=3000, pairs=2, seed=0, progress=False)


def test_a_learner_whose_n_is_not_an_integer_is_refused_by_type():
    # '4' != 4, and the message read "built with n=4, but evaluate() was given n=4"
    class Stringly(StepOnly):
        def __init__(self, *, n, horizon, rng):
            super().__init__(n=n, horizon=horizon, rng=rng)
            self.n = str(n)

    with pytest.raises(replify.errors.InvalidArgumentError,
                       match=r"learner has n='4' \(str\); expected the integer n=4 that evaluate\(\) was given"):
        replify.evaluate(Stringly, "iid-bernoulli", n=4, horizon=20, pairs=2, seed=0)


def test_an_action_outside_the_experts_is_reported_at_its_step(monkeypatch):
    monkeypatch.setattr(engine, "MEMORY_BUDGET", 4 * 8 * 3 * 97)

    class Strays:
        def __init__(self, *, n, horizon, rng):
            self.t = 0

        def run(self, costs):
            out = np.zeros(costs.shape[0], dtype=np.int64)
            out[(np.arange(self.t, self.t + costs.shape[0]) == 1500)] = 7  # step 1501
            self.t += costs.shape[0]
            return out

        def act(self):
            return 0

        def update(self, cost):
            pass

    with pytest.raises(replify.errors.ActionError, match=r"learner\.run\(\) decided the action 7 at step 1501, outside \[0, 3\)"):
        replify.evaluate(Strays, "iid-bernoulli", n=3, horizon=3000, pairs=2, seed=0, progress=False)
