"""What `replify run` prints: parameters to 4 significant figures (the exact values in --json), and a
regret bound that certifies nothing said to be vacuous."""

import json

import pytest

import replify
from replify.cli import main
from replify.cli.text import report_table


def test_parameters_print_to_four_significant_figures_and_json_keeps_them_exact(capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main(["run", "split-commit", "-n", "4", "-T", "3000", "--rho", "0.1", "--pairs", "2", "--quiet",
                 "--no-references", "--json", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    eps = json.loads(out.read_text())["params"]["eps"]
    assert len(repr(eps)) > 10  # 0.0012909944487358056: a float with every digit
    assert f"eps={eps:.4g}" in printed
    assert repr(eps) not in printed


def test_a_bound_within_rounding_of_rho_prints_as_rho():
    report = replify.evaluate("perturbed-commit", "iid-bernoulli", n=4, horizon=10**7, pairs=2, seed=0, rho=0.1,
                              progress=False)
    assert report.params["replicability_bound"] != 0.1  # 0.09999999999999988
    table = report_table(report)
    assert "rho bound        0.1   (certified" in table and "0.09999" not in table


def test_a_regret_bound_of_at_least_t_is_said_to_be_vacuous():
    report = replify.evaluate("perturbed-bandit", "bernoulli-arms", n=10, horizon=10**9, pairs=2, seed=0, rho=0.1,
                              switches=3, progress=False)
    assert report.regret_bound == report.horizon and report.regret_bound_vacuous
    assert "bound 1e+09 (certified); vacuous: at least T x (cost range) = 1e+09" in report_table(report)
    # a bound below T is not
    hedge = replify.evaluate("hedge", "iid-bernoulli", n=4, horizon=2_000, pairs=2, seed=0, progress=False)
    assert hedge.regret_bound < hedge.horizon and hedge.regret_bound_vacuous is False
    assert "vacuous" not in report_table(hedge)
    # iid-experts' theorem at a small horizon: far above T
    iid = replify.evaluate("iid-experts", "iid-bernoulli", n=4, horizon=10**4, pairs=2, seed=0, rho=0.1, progress=False)
    assert iid.regret_bound > iid.horizon and "vacuous" in report_table(iid)


@pytest.mark.parametrize("value, shown", [(0.09999999999999992, "0.1"), ((0.5, 0.12345678), "(0.5, 0.1235)"),
                                          ([1.0], "[1]"), ((16, 32), (16, 32)), ("x", "x")])
def test_figures(value, shown):
    from replify.cli.text import _figures

    assert _figures(value) == shown
