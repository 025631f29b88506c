"""Calibration: measured, labelled, never passed off as certified."""

import json
import sys
import warnings

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError

from conftest import TEMP_DIR

# A small grid keeps the search to seconds: block sizes T/10 and T/4, eps 1, 2, 4 times the certified one.
# With these seeds the best-learning candidate (B = T/4, 4x the certified eps) passes every test when
# tried first, and the certified point (B = T/4, 1x) is another grid point; the top candidates' regret
# is refined on 100 pairs (the default 400 only sharpens the ranking, which no test here depends on).
SMALL = dict(n=3, horizon=4_000, rho=0.2, seed=0, budget=20_000, test_pairs=1_000, block_fractions=(0.1, 0.25),
             multipliers=(1.0, 2.0, 4.0), refine_pairs=100)


@pytest.fixture(scope="module")
def calibration():
    return replify.calibrate("ftplb-star", **SMALL)


def test_calibration_passes_every_test_and_learns_at_least_as_well_as_the_certified_point(calibration):
    c = calibration
    assert c.checks and all(ch.decision == "below" for ch in c.checks)
    assert all(ch.interval[1] < c.rho for ch in c.checks)
    assert {ch.adversary for ch in c.checks} >= {"ties", "crossing"}
    assert c.regret <= c.certified_regret  # the certified point is a candidate too
    assert "calibrated on" in c.label and "not certified" in c.label
    d = c.to_dict()
    assert json.loads(json.dumps(d))["knobs"] == c.knobs


def test_a_calibrated_learner_is_labelled_in_every_report(calibration):
    learner = calibration.make(0)
    assert learner.params.calibration == calibration.label
    report = replify.evaluate(calibration.make, "iid-bernoulli", n=3, horizon=4_000, pairs=10, seed=1)
    assert report.claim == "calibrated" and report.to_dict()["claim"] == "calibrated"
    name = calibration.register()
    try:
        by_name = replify.evaluate(name, "iid-bernoulli", n=3, horizon=4_000, pairs=10, seed=1)
        assert by_name.claim == "calibrated" and np.array_equal(by_name.regret, report.regret)
        with pytest.raises(InvalidArgumentError, match=r"was calibrated for n=3, horizon=4000; got n=4"):
            replify.make(name, n=4, horizon=4_000, seed=0)
    finally:
        replify.registry().unregister(name=name)


def test_claims_of_uncalibrated_learners():
    eps = replify.certified_eps("ftplb-star", horizon=4000, n=3, rho=0.2, block_size=400)
    certified = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=4000, pairs=4, seed=0, rho=0.2,
                                 block_size=400, eps=eps)
    assert certified.claim == "certified"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loose = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=4000, pairs=4, seed=0, rho=0.2,
                                 block_size=400, eps=0.5)
    assert loose.claim == "measured"


def test_calibrate_refuses_what_it_cannot_calibrate():
    # hedge's knobs are unknown: hedge as it is is the one candidate, and its runs part on ties
    with pytest.raises(InvalidArgumentError, match=r"calibrate\('hedge'\) found no candidate .* \(1 tried\)"):
        replify.calibrate("hedge", n=3, horizon=1000, rho=0.1, test_pairs=200, budget=3000)
    with pytest.raises(InvalidArgumentError, match=r"grid must be a non-empty list of dicts of knobs; got \[\]"):
        replify.calibrate("hedge", n=3, horizon=1000, rho=0.1, grid=[])


# The command runs in a new directory (conftest.py, early_subprocess). Its grid holds two candidates, one of
# them the built-in grid's pick at these settings (B = 600, eps = 0.0083: 18 s to find over the whole grid, which
# the calibration fixture above searches through the API); the command line's part is the output and the file.
@pytest.mark.slow  # the command line's calibrate, in the default tier: test_outputs_kept.py's grid from --grid
@pytest.mark.early_subprocess([sys.executable, "-m", "replify.cli", "calibrate", "ftplb-star", "-n", "3", "-T", "3000",
                               "--rho", "0.3", "--budget", "20000", "--test-pairs", "1000", "--json", "c.json",
                               "--grid", "block_size=[300, 600]", "--grid", "eps=[0.0083]"],
                              cwd=TEMP_DIR, timeout=None)
def test_cli_calibrate(early_subprocess):
    out = early_subprocess
    assert out.returncode == 0, out.stderr
    assert "claim            calibrated on" in out.stdout and "not certified" in out.stdout
    data = json.loads((out.cwd / "c.json").read_text())
    assert data["learner"] == "ftplb-star" and all(c["decision"] == "below" for c in data["checks"])
    assert data["knobs"]["eps"] == 0.0083 and data["knobs"]["block_size"] in (300, 600)  # from the grid given


@pytest.mark.slow
def test_no_candidate_is_an_honest_refusal():
    # split-commit's certificate is near-tight on ties: at rho = 0.2 and 100 test pairs no
    # candidate can be decided below rho, and calibrate says so instead of returning one. The grid:
    # its 4 fractions at the certified eps (multiplier 1), ranked on 100 refine pairs; all four are
    # tried, and each is left undecided by ties or by the reference.
    with pytest.raises(InvalidArgumentError, match=r"found no candidate that the sequential test decided below rho=0\.2"):
        replify.calibrate("split-commit", n=3, horizon=2000, rho=0.2, seed=0, budget=3000, test_pairs=100,
                          multipliers=(1.0,), refine_pairs=100)


def test_the_frontier_figure(calibration, tmp_path):
    from replify.plots import plot_frontier

    frontier = calibration.frontier(pairs=20)
    assert len(frontier["points"]) == len(calibration.grid) == 6  # 2 block sizes x 3 multipliers
    assert sum(p["calibrated"] for p in frontier["points"]) == 1 and sum(p["certified"] for p in frontier["points"]) == 1
    assert frontier["references"]["hedge"]["rho_hat"] >= 0.9 and frontier["references"]["constant"]["rho_hat"] == 0.0
    plot_frontier(frontier, path=tmp_path / "f.pdf")
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"


def test_an_iid_learner_is_held_to_the_iid_part_of_the_suite():
    from replify.experiments.candidates import _suite

    iid = _suite(10, 100, 1000, iid=True)
    full = _suite(10, 100, 1000)
    assert {a for a, _ in iid} == {"ties"} and len(iid) == 3
    assert {a for a, _ in full} == {"ties", "crossing", "block-switch"}
    assert ("block-switch", {"block_size": 100, "offset": 99, "gap": 0.05}) in full
    reference = ("iid-bernoulli", {"means": [0.3, 0.5, 0.7]})
    assert _suite(10, 100, 1000, iid=True, reference=reference)[0] == reference  # tested first: where it must learn
    assert _suite(10, 100, 1000, reference=reference)[0] == reference


def test_the_calibrated_learner_is_replicable_on_the_reference_it_learns_on(calibration):
    first = calibration.checks[0]
    assert first.adversary == "iid-bernoulli" and first.decision == "below"


@pytest.mark.slow
def test_iid_experts_calibration_refuses_what_fails_a_test_and_says_which():
    # The candidates that learn best have little noise (a near follow-the-leader) or a fallback
    # (K_constant = 0.1) that hands over to FTPL step by step: both part the runs on ties or on the
    # reference. The calibration must not return a candidate whose tests did not all decide
    # "below", must try the better-learning ones first, and must record who refused what.
    # T = 2000, regret on 20 pairs refined on 40 (the default grid at multipliers 1 and 32: 8
    # candidates); at these seeds the best by refined regret is noise x 16384 with K_constant = 0.1,
    # refused like the near follow-the-leaders (noise x 2048 to x 65536) and K_constant = 0.1 at
    # noise x 1 before noise x 32 passes (the same outcome with 100 or 400 refine pairs, and at
    # T = 1000 or 5000).
    cal = replify.calibrate("iid-experts", n=5, horizon=2_000, rho=0.2, seed=0, budget=10_000, test_pairs=1_000,
                            multipliers=(1.0, 32.0), regret_pairs=20, refine_pairs=40)
    assert any(k.get("K_constant") == 0.1 for k, _, _ in cal.grid)
    refused = {json.dumps(k, sort_keys=True): c for k, c in cal.refused}
    assert refused and all(c.decision != "below" for c in refused.values())
    best = min(cal.grid, key=lambda g: g[2])[0]
    assert best != cal.knobs and json.dumps(best, sort_keys=True) in refused  # the best learner parts its runs
    assert cal.candidates_tried == len(cal.refused) + 1 and cal.knobs not in [k for k, _ in cal.refused]
    assert cal.checks[0].adversary == "iid-bernoulli" and all(c.decision == "below" for c in cal.checks)
    assert json.loads(json.dumps(cal.to_dict()))["refused"][0]["by"]["decision"] != "below"


def test_the_budget_bounds_the_whole_search_and_a_grid_it_cannot_pay_for_is_refused_at_once(capsys, monkeypatch):
    from replify.cli import main
    from replify.experiments import calibration as module

    spent = []
    real = module.evaluate

    def counting(*args, **kwargs):
        report = real(*args, **kwargs)
        spent.append(report.pairs)
        return report

    monkeypatch.setattr(module, "evaluate", counting)
    # 60 x 60 candidates on a budget of 300 pairs: refused before any pair runs, naming the grid's size
    argv = ["calibrate", "ftplb-star", "-n", "4", "-T", "1000", "--rho", "0.2", "--budget", "300", "--quiet",
            "--grid", f"eps={[round(0.01 * (k + 1), 2) for k in range(60)]}",
            "--grid", f"block_size={[10 * (k + 1) for k in range(60)]}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the grid has 3600 candidates" in err and "budget=300" in err and not spent
    # a grid it can pay for: every pair the calibration runs (measurements, screen, stress, tests and the
    # final measurements) is within the budget; the old code spent its budget on the tests alone (and
    # let the last test and the measurements run past it)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            replify.calibrate("ftplb-star", n=3, horizon=1000, rho=0.2, seed=0, budget=1200, test_pairs=400,
                              regret_pairs=4, refine_pairs=20, block_fractions=(0.25,), multipliers=(1.0, 4.0),
                              progress=lambda done, total: seen.append((done, total)))
        except InvalidArgumentError as exc:  # out of budget before a decision: said so, and nothing over
            assert "raise budget" in str(exc)
    assert spent and sum(spent) <= 1200
    assert seen and all(total == 1200 and done <= total for done, total in seen)


def test_a_grid_knob_given_twice_or_naming_rho_is_refused(capsys):
    from replify.cli import main

    base = ["calibrate", "ftplb-star", "-n", "3", "-T", "1000", "--rho", "0.2", "--quiet"]
    assert main(base + ["--grid", "eps=[0.1]", "--grid", "eps=[0.2]"]) == 2
    assert "--grid eps is given twice" in capsys.readouterr().err
    assert main(base + ["--grid", "rho=[0.9]"]) == 2
    assert "'rho' is calibrate's own argument" in capsys.readouterr().err
    with pytest.raises(InvalidArgumentError, match=r"'rho' is calibrate's own argument .* got \{'rho': 0.9\}"):
        replify.calibrate("ftplb-star", n=3, horizon=1000, rho=0.2, grid=[{"rho": 0.9}])
