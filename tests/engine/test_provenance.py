"""Provenance in every report and results row; reports round-trip through JSON; learners and
specs print their configuration."""

import json
import platform

import numpy as np
import pytest

import replify
from replify.evaluation.report import Report
from replify.errors import InvalidArgumentError

from test_user_code import MixedHedge

CASES = {
    "block learner, block sums": ("ftplb-star", "iid-bernoulli", dict(rho=0.1, block_size=50)),
    "block learner, per step (drift, NaN-padded)": ("ftplb-star", "iid-bernoulli", dict(rho=0.1, block_size=50, fast_path=False)),
    "per-step baseline": ("hedge", "iid-bernoulli", {}),
    "sequential test": ("iid-experts", "iid-bernoulli", dict(rho=0.1, sequential=True, target=0.5)),
    "mixed strategy": (MixedHedge, "iid-bernoulli", {}),
}


@pytest.mark.filterwarnings("ignore::replify.errors.ReplicabilityWarning")  # B = 50 is not the theorem's
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [7, np.random.SeedSequence(11, spawn_key=(3,))])
def test_a_report_round_trips_through_strict_json(case, seed):
    learner, adversary, kw = CASES[case]
    report = replify.evaluate(learner, adversary, n=3, horizon=600, pairs=12, seed=seed, **kw)
    data = report.to_dict(per_pair=True)
    back = Report.from_dict(json.loads(json.dumps(data, allow_nan=False)))  # strict JSON: no NaN
    assert back.to_dict(per_pair=True) == data
    for name in ("identical", "regret", "first_divergence", "agreement_curve", "regret_curve_values", "drift", "pseudo_regret"):
        a, b = getattr(report, name), getattr(back, name)
        assert (a is None and b is None) or np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    assert back.rho_hat == report.rho_hat and back.regret_ci == report.regret_ci


def test_from_dict_needs_the_per_pair_arrays():
    report = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=100, pairs=4, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"per_pair=True.*missing identical"):
        Report.from_dict(report.to_dict())


@pytest.mark.filterwarnings("ignore::replify.errors.ReplicabilityWarning")
def test_a_report_records_its_provenance():
    seed = np.random.SeedSequence(12345, spawn_key=(2,))
    report = replify.evaluate("ftplb-star", "iid-bernoulli", n=3, horizon=300, pairs=4, seed=seed, rho=0.2, block_size=30)
    p = report.provenance
    assert p["replify"] == replify.__version__ and p["numpy"] == np.__version__
    assert p["python"] == platform.python_version()
    assert p["blas"]["name"] == np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    assert p["seed_entropy"] == 12345 and p["seed_spawn_key"] == [2]
    assert p["configuration"]["learner"] == "ftplb-star" and p["configuration"]["rho"] == 0.2
    assert p["configuration"]["overrides"] == {"block_size": 30}
    assert report.to_dict()["provenance"] == p
    json.dumps(p, allow_nan=False)  # plain JSON


def test_results_rows_record_their_provenance(tmp_path):
    out = tmp_path / "rows.jsonl"
    result = replify.sweep(learners=["hedge"], adversaries=["iid-bernoulli"], horizons=[200], ns=[3], pairs=4, seed=1, path=out)
    row = json.loads(out.read_text().splitlines()[0])
    assert row["report"]["provenance"]["numpy"] == np.__version__
    flat = result.records()[0]
    assert flat["numpy_version"] == np.__version__ and flat["python_version"] == platform.python_version()


@pytest.mark.parametrize("name, expected", [
    ("hedge", {"n": 4, "horizon": 1000, "eta": pytest.approx((8 * np.log(4) / 1000) ** 0.5)}),
    ("ftplb-star", {"n": 4, "horizon": 1000, "rho": 0.1, "block_size": 100, "eps": 0.01}),
    ("iid-experts", {"n": 4, "horizon": 1000, "rho": 0.1, "noise_scale": 2.0, "K_constant": 1000.0}),
    ("ewa", {"n": 4, "horizon": 1000, "eta": 0.3}),
])
def test_learners_report_their_parameters(name, expected):
    kw = {"ftplb-star": dict(rho=0.1, block_size=100, eps=0.01), "iid-experts": dict(rho=0.1, noise_scale=2.0),
          "ewa": dict(eta=0.3)}.get(name, {})
    learner = replify.make(name, n=4, horizon=1000, seed=0, **kw)
    assert learner.get_params() == expected
    text = repr(learner)
    assert text.startswith(type(learner).__name__ + "(") and all(f"{k}=" in text for k in expected)


def test_specs_print_what_they_register():
    text = repr(replify.learners()["ftplb-star"])
    assert text.startswith("LearnerSpec('ftplb-star'") and "adversarial-replicable" in text and "0x" not in text
    text = repr(replify.adversaries()["iid-bernoulli"])
    assert text.startswith("AdversarySpec('iid-bernoulli'") and "0x" not in text
