"""The lower-bound adversaries, the coin reduction and the demos (paper §7 and §3.1)."""

import json
import math
import sys

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.experiments.lower_bounds import coin_reduction, lazy_leader_demo, majority_decoder

from conftest import TEMP_DIR


def hoeffding(k, outcomes=1, false_alarm=1e-6):
    return math.sqrt(math.log(2 * outcomes / false_alarm) / (2 * k))


def test_coin_draws_the_theorems_law_with_the_sign_fixed_first():
    T = 40_000
    seq = replify.make_adversary("coin", n=2, horizon=T, seed=3, tau=0.1)
    a, b = seq.sample(np.random.default_rng(0)), seq.sample(np.random.default_rng(1))
    assert seq.sign in (-1, 1) and seq.bias == 0.5 + seq.sign * 0.1  # chosen once, before any draw
    for c in (a, b):
        assert np.array_equal(c[:, 1], 1 - c[:, 0]) and set(np.unique(c[:, 0])) <= {0.0, 1.0}
        assert abs(c[:, 0].mean() - seq.bias) < hoeffding(T, outcomes=2)
    assert seq.best == (1 if seq.sign > 0 else 0)
    signs = {replify.make_adversary("coin", n=2, horizon=10, seed=s, tau=0.1).sign for s in range(20)}
    assert signs == {-1, 1}  # the adversary's stream decides
    assert replify.make_adversary("coin", n=2, horizon=1600, seed=0, K=10.0).tau == pytest.approx(10 / (1600 / 16))
    varied = [replify.make_adversary("coin", n=2, horizon=10, seed=s, tau=0.1, random_bias=True).bias for s in range(50)]
    assert all(0.4 < p < 0.6 for p in varied) and len(set(varied)) == 50
    sums = seq.sample_sums(np.random.default_rng(2), np.array([0, 100]), np.array([100, 350]))
    assert np.array_equal(sums.sum(axis=1), [100, 250])
    wide = replify.make_adversary("coin", n=4, horizon=50, seed=0, tau=0.1)  # n > 2: the others out, at cost 1
    draw, sums = wide.sample(np.random.default_rng(3)), wide.sample_sums(np.random.default_rng(3), np.array([0]), np.array([50]))
    assert np.array_equal(draw[:, 1], 1 - draw[:, 0]) and np.all(draw[:, 2:] == 1) and np.all(sums[0, 2:] == 50)
    with pytest.raises(InvalidArgumentError, match=r"tau must lie in \(0, 1/2\), got 0.625 from K=50"):
        replify.make_adversary("coin", n=2, horizon=1280, seed=0, K=50)


def test_coin_phases_means_per_phase_and_dead_experts():
    n, T = 8, 30_000
    seq = replify.make_adversary("coin-phases", n=n, horizon=T, seed=5, tau=0.2)
    c = seq.sample(np.random.default_rng(0))
    assert np.array_equal(seq.signs, replify.make_adversary("coin-phases", n=n, horizon=T, seed=5, tau=0.2).signs)
    alive = [(0, n)]
    for j, s in enumerate(seq.signs):
        lo, hi = alive[-1]
        assert (lo, hi) == seq.alive[j]
        mid = (lo + hi) // 2
        rows = c[seq.bounds[j] : seq.bounds[j + 1]]
        assert np.all(rows[:, :lo] == 1) and np.all(rows[:, hi:] == 1)  # experts already out cost 1
        assert np.all(rows[:, lo:mid] == rows[:, [lo]]) and np.array_equal(rows[:, mid:hi], 1 - rows[:, lo:mid])
        assert abs(rows[:, lo].mean() - (0.5 + s * 0.2)) < hoeffding(len(rows), outcomes=3)
        alive.append((mid, hi) if s > 0 else (lo, mid))
    assert alive[-1] == (seq.best, seq.best + 1) and np.argmin(c.sum(axis=0)) == seq.best
    with pytest.raises(InvalidArgumentError, match=r"coin-phases needs n = 2\^m experts, got n=6"):
        replify.make_adversary("coin-phases", n=6, horizon=100, seed=0, tau=0.1)


def test_lazy_leader_trap_has_the_day_one_bonus_in_every_draw():
    seq = replify.make_adversary("lazy-leader-trap", n=2, horizon=20_000, seed=0)
    for r in range(3):
        c = seq.sample(np.random.default_rng(r))
        assert np.array_equal(c[0], [0.0, -1.0]) and np.abs(c).sum(axis=1).max() <= 1.0
        assert np.all(np.abs(c[1:].mean(axis=0) - np.array([0.3, 0.5]) * 0.5) < 0.5 * hoeffding(20_000, outcomes=6))


def test_majority_decoder():
    assert majority_decoder([1, 1, 0]) == 1 and majority_decoder([0, 1]) == 0 and majority_decoder(np.zeros(5, int)) == 0
    with pytest.raises(InvalidArgumentError, match="experts 0 and 1"):
        majority_decoder([0, 2])


def test_the_majority_decoder_recovers_the_bias_from_a_low_regret_learner():
    # The proof: with regret at most K and tau = K/(delta T), the majority is right with
    # probability >= 1 - delta = 15/16. Hedge's regret bound gives K. Over both signs, 2 x 150
    # independent runs; the exact 95% interval's lower end must clear 15/16.
    T = 10_000
    K = math.sqrt(T * math.log(2) / 2)
    red = coin_reduction("hedge", horizon=T, pairs=150, seed=0, K=K)
    assert red.tau == pytest.approx(16 * K / T)
    assert red.success_ci[0] >= 15 / 16
    assert red.regret_mean <= K


def demo_command(name):
    """``replify demo NAME --quick --json d.json --plot d.png`` (seed 0, the default), run ahead in
    the background in a new directory (conftest.py, early_subprocess). The tests that carry the same
    mark share its one run: the command-line test, and the coin and bandit-coin tests below, which
    read the demo's rows and settings from that JSON (the demo's ``to_dict()``) instead of running
    the demo a second time in this process, where typeguard's instrumentation makes bandit-coin's
    Python-stepped baselines take about 20 s."""
    return pytest.mark.early_subprocess(
        [sys.executable, "-m", "replify.cli", "demo", name, "--quick", "--json", "d.json", "--plot", "d.png"],
        cwd=TEMP_DIR, timeout=600,
    )


def demo_json(out):
    """The demo's JSON as the command line wrote it (rows and settings, ``Demo.to_dict()``)."""
    assert out.returncode == 0, out.stderr
    return json.loads((out.cwd / "d.json").read_text())


# coin's, phases' and lazy-leader's commands run in the full tier only (those demos run in the default tier in
# process: coin in tests/experiments/test_outputs_kept.py, the others below); bandit-coin's and
# adversarial-bandit's in both tiers
@pytest.mark.parametrize("name", [pytest.param(name, marks=[demo_command(name), *([pytest.mark.slow] if name in ("coin", "phases", "lazy-leader") else [])])
                                  for name in ("coin", "phases", "lazy-leader", "bandit-coin", "adversarial-bandit")])
def test_demo_quick_from_the_command_line(name, early_subprocess):
    out = early_subprocess
    assert out.returncode == 0, out.stderr
    assert f"replify demo {name}" in out.stdout and "rho_hat" in out.stdout
    data = json.loads((out.cwd / "d.json").read_text())
    assert data["demo"] == name and len(data["rows"]) >= 2
    png = out.cwd / "d.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_lazy_leader_demo_shows_ftpl_not_replicable_and_fllb_replicable():
    demo = lazy_leader_demo(quick=True, seed=0)
    rows = {r["algorithm"]: r for r in demo.rows}
    assert rows["ftpl"]["rho_hat"] >= 0.5 and rows["fll"]["rho_hat"] >= 0.5
    assert rows["fllb"]["rho_ci"][1] <= demo.settings["rho"]
    assert rows["ftpl"]["switch on S"] != rows["ftpl"]["switch on S'"] and rows["fllb"]["identical"]


def test_coin_reduction_checks_its_arguments():
    from replify.errors import ArgumentTypeError

    with pytest.raises(ArgumentTypeError, match=r'argument "horizon"'):
        coin_reduction("hedge", horizon="100", pairs=5, seed=0, tau=0.1)
    with pytest.raises(InvalidArgumentError, match=r"pairs must be an integer >= 2, got 1"):
        coin_reduction("hedge", horizon=100, pairs=1, seed=0, tau=0.1)
    with pytest.raises(InvalidArgumentError, match=r"give exactly one of tau= or K="):
        coin_reduction("hedge", horizon=100, pairs=5, seed=0)


@demo_command("coin")
@pytest.mark.slow
def test_coin_demo_is_a_frontier_with_both_reference_rows(early_subprocess):
    from replify.evaluation.stats import binomial_upper_tail

    demo = demo_json(early_subprocess)  # coin_demo(quick=True, seed=0).to_dict()
    assert demo["demo"] == "coin"
    rows = {(r["algorithm"], r["certified rho"]): r for r in demo["rows"]}
    assert {a for a, _ in rows} == {"ftplb-star", "split-commit", "wrapped hedge", "constant", "hedge"}
    assert rows[("constant", "0 (any)")]["rho_hat"] == 0.0  # replicable ...
    assert rows[("hedge", "none")]["rho_hat"] == 1.0  # ... and not
    pairs = 2 * demo["settings"]["pairs per sign"]
    grid = demo["settings"]["grid"]
    for cell in grid:
        if cell["rho"] is not None:  # every certified learner, at every tau: the certificate is not refuted
            assert binomial_upper_tail(round(cell["rho_hat"] * pairs), pairs, cell["rho"]) >= 1e-6, cell
    # the frontier point is the worst regret over the tau grid
    for (label, rho), row in rows.items():
        cells = [c for c in grid if c["algorithm"] == label and c["rho"] == (rho if isinstance(rho, float) else None)]
        assert len(cells) == len(demo["settings"]["taus"]) and row["worst regret"] == max(c["regret"] for c in cells)
    # a certified learner decodes the coin at the largest tau (it learns), constant does not (40 trials:
    # split-commit measured 40/40 at both rhos; constant's success is its random expert's, about 1/2)
    assert rows[("split-commit", 0.1)]["decoder success at tau=0.24"] >= 0.9
    assert rows[("constant", "0 (any)")]["decoder success at tau=0.24"] <= 0.75


@demo_command("bandit-coin")
def test_bandit_coin_demo_shows_the_replicable_learners_beside_the_references(early_subprocess):
    from replify.evaluation.stats import binomial_upper_tail

    demo = demo_json(early_subprocess)  # bandit_coin_demo(quick=True, seed=0).to_dict()
    assert demo["demo"] == "bandit-coin"
    rows = {(r["algorithm"], r["scale"]): r for r in demo["rows"]}
    assert {a for a, _ in rows} == {"rep-elimination", "rep-etc", "rep-gap-elimination", "constant", "ucb1", "thompson",
                                    "exp3"}
    assert rows[("rep-gap-elimination", 1.0)]["knob"] == "pull_scale" and rows[("rep-etc", 1.0)]["knob"] == "width_scale"
    assert rows[("constant", "-")]["rho_hat"] == 0.0
    assert min(rows[(b, "-")]["rho_hat"] for b in ("ucb1", "thompson", "exp3")) >= 0.5  # measured 1.0
    pairs = 2 * demo["settings"]["pairs per sign"]
    for cell in demo["settings"]["grid"]:  # the certified grid: the iid bound rho = 0.1 is not refuted at any tau
        if cell["scale"] == 1.0:
            assert binomial_upper_tail(round(cell["rho_hat"] * pairs), pairs, 0.1) >= 1e-6, cell
    for (label, scale), row in rows.items():
        cells = [c for c in demo["settings"]["grid"] if c["algorithm"] == label
                 and c["scale"] == (None if scale == "-" else scale)]
        assert len(cells) == len(demo["settings"]["taus"]) and row["worst regret"] == max(c["regret"] for c in cells)
    assert rows[("rep-elimination", 1.0)]["rho claim"] == "certified (iid)"
    assert rows[("rep-elimination", 0.01)]["rho claim"] == "measured"


def test_phases_and_lazy_leader_demos_show_the_reference_rows():
    from replify.experiments.lower_bounds import phases_demo

    rows = phases_demo(quick=True, seed=0).rows
    assert all({"constant regret", "hedge regret", "hedge rho_hat"} <= set(r) for r in rows)
    assert all(r["hedge rho_hat"] >= 0.5 for r in rows)
    lazy = {r["algorithm"]: r for r in lazy_leader_demo(quick=True, seed=0).rows}
    assert lazy["constant"]["rho_hat"] == 0.0 and lazy["constant"]["identical"]


@demo_command("adversarial-bandit")
def test_adversarial_bandit_demo_sets_each_printed_bound_against_the_changing_law(early_subprocess):
    # Quick (T = 1e6, 60 pairs): the rows, their printed bounds and what each assumes, and the verdicts. At the
    # full size (T = 1e8, 500 pairs) rep-gap-elimination's iid bound is refuted (0.176 [0.144, 0.212] against
    # 0.1); that refutation is tested in tests/algorithms/test_rep_gap_elimination.py.
    demo = demo_json(early_subprocess)
    rows = {r["algorithm"]: r for r in demo["rows"]}
    assert set(rows) == {"rep-gap-elimination", "perturbed-bandit", "constant"}
    assert rows["rep-gap-elimination"]["bound assumes"] == "iid only" and rows["rep-gap-elimination"]["printed bound"] <= 0.1
    assert rows["perturbed-bandit"]["printed bound"] <= 0.1 and not rows["perturbed-bandit"]["refuted at 1e-6"]
    assert rows["constant"]["rho_hat"] == 0.0 and not rows["constant"]["refuted at 1e-6"]
    assert len(demo["settings"]["switch_at"]) == len(demo["settings"]["means"]) - 1
