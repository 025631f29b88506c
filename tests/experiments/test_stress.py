"""The stress suite and the stress search."""

import json
import subprocess
import sys

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.evaluation.stats import binomial_upper_tail


@pytest.mark.parametrize("name,params,expected", [
    ("ties", {"k": 3, "gap": 0.0, "mean": 0.4}, [0.4, 0.4, 0.4, 0.6]),
    ("ties", {"k": 3, "gap": 0.02, "mean": 0.4}, [0.4, 0.41, 0.42, 0.6]),
])
def test_ties_means(name, params, expected):
    seq = replify.make_adversary(name, n=4, horizon=10, seed=0, **params)
    assert np.allclose(seq.means, expected)


def test_crossing_and_block_switch_place_their_switches():
    cross = replify.make_adversary("crossing", n=3, horizon=1000, seed=0, at=0.3, gap=0.2, mean=0.5)
    assert cross.bounds.tolist() == [0, 300, 1000]
    assert np.allclose(cross.means, [[0.4, 0.6, 0.7], [0.6, 0.4, 0.7]])
    bs = replify.make_adversary("block-switch", n=2, horizon=1000, seed=0, block_size=100, offset=99, every=2, gap=0.2)
    assert bs.bounds.tolist() == [0, 299, 499, 699, 899, 1000]  # just before a transition, every second block
    assert np.allclose(bs.means[0], [0.4, 0.6]) and np.allclose(bs.means[1], [0.6, 0.4])
    with pytest.raises(InvalidArgumentError, match=r"block-switch: offset must lie in \[0, block_size=100\), got 100"):
        replify.make_adversary("block-switch", n=2, horizon=1000, seed=0, block_size=100, offset=100)


def test_stress_block_sums_have_the_law_of_the_steps():
    # many pieces (a switch every block): the per-piece draw must still give each segment the right
    # mean; 2000 segment sums of length 50 across 20 pieces, 6 standard errors (normal approximation)
    seq = replify.make_adversary("block-switch", n=2, horizon=1000, seed=0, block_size=50, offset=25, gap=0.4)
    starts = np.arange(0, 1000, 50)
    sums = np.stack([seq.sample_sums(np.random.default_rng(i), starts, starts + 50) for i in range(100)])
    steps = np.stack([seq.sample(np.random.default_rng(10_000 + i)).reshape(20, 50, 2).sum(axis=1) for i in range(100)])
    sd = np.sqrt(50 * 0.25 / 100)
    assert np.all(np.abs(sums.mean(axis=0) - steps.mean(axis=0)) <= 6 * sd * np.sqrt(2))


@pytest.mark.slow
def test_stress_breaks_ftpl_and_fll_and_not_a_certified_learner():
    # Targets: rho_hat >= 0.5 for ftpl and fll at n = 2 within 2000 pairs; a budget of 500 meets
    # them (worst rho_hat 0.58 for ftpl on coin, 1.0 for fll at these seeds), and stays within it.
    for name in ("ftpl", "fll"):
        r = replify.stress(name, n=2, horizon=2000, budget=500, seed=0)
        assert r.pairs_used <= 500 and r.worst.rho_hat >= 0.5, r.worst.to_dict()
        assert len({c.family for c in r.candidates}) >= 3  # a search over families, not a fixed list
    eps = replify.certified_eps("ftplb-star", horizon=2000, n=2, rho=0.1, block_size=200)
    r = replify.stress("ftplb-star", n=2, horizon=2000, rho=0.1, budget=2000, seed=0, block_size=200, eps=eps)
    # certified: the worst found must not refute rho = 0.1 (P(Bin(pairs, 0.1) >= failures) >= 1e-3; the
    # search selects the highest rate, so the level is small)
    assert not r.refutes(0.1), r.worst.to_dict()
    assert binomial_upper_tail(r.worst.failures, r.worst.pairs, 0.1) >= 1e-3


def test_successive_halving_spends_more_pairs_on_the_worst():
    # budget 500 (was 1000): the same four rounds, 7 pairs for each of 8 candidates up to 135 for the worst
    r = replify.stress("ftpl", n=2, horizon=1000, budget=500, seed=1)
    by_pairs = sorted(r.candidates, key=lambda c: c.pairs)
    assert by_pairs[-1].pairs > 2 * by_pairs[0].pairs
    assert r.worst.pairs == max(c.pairs for c in r.candidates)


def test_stress_arguments_and_cli(tmp_path):
    with pytest.raises(InvalidArgumentError, match=r"families must be a non-empty list among"):
        replify.stress("ftpl", n=2, horizon=100, budget=100, families=["nope"])
    with pytest.raises(InvalidArgumentError, match=r"need n = 2; got n=3"):
        replify.stress("ftpl", n=3, horizon=100, budget=100, families=["coin"])
    out = subprocess.run([sys.executable, "-m", "replify.cli", "stress", "ftpl", "-n", "2", "-T", "500", "--budget", "200",
                          "--family", "ties", "--json", str(tmp_path / "s.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "worst: ties" in out.stdout and "measured on the adversaries tried" in out.stdout
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["worst"]["family"] == "ties" and data["pairs_used"] <= 200
