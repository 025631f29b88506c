"""The sequential test (replify.evaluation.sequential; evaluate(sequential=True)): anytime-valid, and fast
when the answer is clear."""

import math
import sys

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.evaluation.sequential import BetaBinomialCS, batches
from replify.evaluation.stats import binomial_upper_tail


def test_the_interval_is_the_set_where_the_mixture_martingale_is_below_one_over_alpha():
    cs = BetaBinomialCS(alpha=0.05)
    lo, hi = cs.interval(7, 100)
    log_m = lambda p: (math.lgamma(1 + 7) + math.lgamma(1 + 93) - math.lgamma(2 + 100)) - 7 * math.log(p) - 93 * math.log1p(-p)  # noqa: E731
    assert log_m(lo) >= math.log(20) - 1e-9 and log_m(hi) >= math.log(20) - 1e-9  # its ends are (just) excluded
    assert log_m(lo + 1e-6) < math.log(20) and log_m(hi - 1e-6) < math.log(20)
    assert lo < 0.07 < hi and cs.interval(0, 0) == (0.0, 1.0)
    assert cs.decide(0, 80, 0.1) == "below" and cs.decide(0, 64, 0.1) == "undecided" and cs.decide(60, 100, 0.1) == "above"
    # the one-evaluation decision agrees with the interval
    for t in (16, 50, 200, 1000):
        for s_ in range(0, t + 1, max(1, t // 40)):
            lo, hi = cs.interval(s_, t)
            expected = "below" if hi < 0.1 else "above" if lo > 0.1 else "undecided"
            assert cs.decide(s_, t, 0.1) == expected, (s_, t)


def test_false_decisions_stay_under_alpha_at_the_target():
    # A Bernoulli(rho) process, p exactly at the target: every decision is wrong. 1000 seeded
    # repetitions, looks at replify's schedule up to 3000 pairs. If the false decision rate is <= alpha
    # = 0.05, the count is Binomial(1000, <= 0.05); P(Bin(1000, 0.05) >= 78) < 1e-4 (checked below),
    # so at most 77 false decisions are allowed.
    rho, alpha, reps, budget = 0.1, 0.05, 1000, 3000
    limit = 77
    assert binomial_upper_tail(limit + 1, reps, alpha) < 1e-4
    cs = BetaBinomialCS(alpha=alpha)
    looks = np.array(batches(budget))
    draws = np.random.default_rng(2024).random((reps, budget)) < rho
    counts = np.cumsum(draws, axis=1)[:, looks - 1]
    false = 0
    for r in range(reps):
        for t, s in zip(looks.tolist(), counts[r].tolist()):
            if cs.decide(int(s), t, rho) != "undecided":
                false += 1
                break
    assert false <= limit, false


def test_evaluate_stops_early_and_reports_the_decision():
    # rate 0: "below" within 100 pairs (at 80: (t + 1) 0.9^t <= 1/20 first holds at t = 71)
    r = replify.evaluate("constant", "iid-bernoulli", n=4, horizon=500, pairs=2000, seed=0, target=0.1, sequential=True)
    assert (r.decision, r.pairs) == ("below", 80) and r.sequential_interval[1] < 0.1
    d = r.to_dict()
    assert (d["decision"], d["pairs_run"], d["target"]) == ("below", 80, 0.1)
    # rate 1 (Hedge re-samples every step): "above" at the first look
    h = replify.evaluate("hedge", "iid-bernoulli", n=4, horizon=500, pairs=2000, seed=0, target=0.1, sequential=True)
    assert (h.decision, h.pairs) == ("above", 16) and h.sequential_interval[0] > 0.1
    # a budget too small to decide
    u = replify.evaluate("constant", "iid-bernoulli", n=4, horizon=500, pairs=40, seed=0, target=0.1, sequential=True)
    assert (u.decision, u.pairs) == ("undecided", 40)


def test_batching_does_not_change_any_pair():
    seq = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=300, pairs=20, seed=5, target=0.999, sequential=True)
    plain = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=300, pairs=seq.pairs, seed=5)
    assert np.array_equal(seq.regret, plain.regret) and np.array_equal(seq.first_divergence, plain.first_divergence)


def test_sequential_arguments_are_checked():
    with pytest.raises(InvalidArgumentError, match=r"sequential=True needs target="):
        replify.evaluate("constant", "iid-bernoulli", n=3, horizon=10, pairs=20, seed=0, sequential=True)
    with pytest.raises(InvalidArgumentError, match=r"target applies only with sequential=True"):
        replify.evaluate("constant", "iid-bernoulli", n=3, horizon=10, pairs=20, seed=0, target=0.1)
    with pytest.raises(InvalidArgumentError, match=r"target must lie strictly between 0 and 1, got 1\.5"):
        replify.evaluate("constant", "iid-bernoulli", n=3, horizon=10, pairs=20, seed=0, target=1.5, sequential=True)
    with pytest.raises(InvalidArgumentError, match=r"alpha must lie strictly between 0 and 1"):
        BetaBinomialCS(alpha=0.0)


# the command runs ahead in the background (conftest.py, early_subprocess)
@pytest.mark.early_subprocess([sys.executable, "-m", "replify.cli", "run", "constant", "--adversary", "iid-bernoulli",
                               "-n", "4", "-T", "500", "--pairs", "2000", "--decide", "0.1", "--quiet"], timeout=None)
def test_cli_decides_sequentially(early_subprocess):
    out = early_subprocess
    assert out.returncode == 0, out.stderr
    assert "decision         rho below 0.1 after 80 pairs" in out.stdout


def test_holm_controls_the_family_and_steps_down():
    from replify.evaluation.sequential import holm

    # m = 4, alpha = 0.05: thresholds 0.0125, 0.0167, 0.025, 0.05 in order of p
    assert holm([0.01, 0.04, 0.03, 0.2], ["below", "above", "below", "below"], 0.05) == \
        ["below", "undecided", "undecided", "undecided"]
    assert holm([0.001, 0.015, 0.02, 0.04], ["below"] * 4, 0.05) == ["below"] * 4
    assert holm([0.02, 0.001], ["above", "below"], 0.05) == ["above", "below"]


def test_a_sweep_reports_holm_adjusted_decisions(tmp_path):
    result = replify.sweep(learners=["constant", "hedge"], adversaries=["iid-bernoulli"], horizons=[300, 400], ns=[3],
                           pairs=2000, seed=0, target=0.1, path=tmp_path / "s.jsonl")
    recs = result.records()
    assert [r["learner"] for r in recs] == ["constant", "constant", "hedge", "hedge"]
    assert [r["holm_decision"] for r in recs] == ["below", "below", "above", "above"]
    # each row ran its sequential test at alpha/m = 0.0125, so it needed more pairs than at 0.05
    assert all(r["pairs_run"] > 80 for r in recs if r["learner"] == "constant")
    assert all(r["sequential_p_value"] <= 0.05 / 4 for r in recs)
