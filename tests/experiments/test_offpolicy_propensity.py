"""A log without propensities: estimated by the stated model of replify.offpolicy.propensity, and
every number from it measured, not certified."""

from __future__ import annotations

import numpy as np
import pytest

from replify.cli import main
from replify.errors import InvalidArgumentError
from replify.offpolicy import Log, estimate, select


def softmax_logged(rows=20_000, seed=1):
    """Wine logged by a softmax of the alcohol content (a model the estimator can express)."""
    def logging(x):
        s = np.stack([x[:, 0, 1], -x[:, 0, 1], 0 * x[:, 0, 1]], axis=1)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)
    return Log.simulate("classification-bandit", n=3, rows=rows, seed=seed, adversary_params={"features_as": "same"},
                        logging=logging)


def test_the_stated_model_recovers_a_logging_policy_it_can_express():
    full = softmax_logged()
    log = Log.from_arrays(contexts=full.contexts[:, 0, :], actions=full.actions, costs=full.costs,
                          propensities="estimate", n=3)
    # 20 000 rows: measured mean error 0.013, largest 0.046 (the model reads all 14 features; the logger, one)
    assert np.abs(log.propensities - full.propensities).mean() < 0.03
    assert log.propensity_model is not None and "multinomial logistic regression" in log.propensity_model
    rule = lambda x: np.where(x[:, 1] > 0, 0, 1)  # noqa: E731
    got = estimate(log, rule, "ips")
    truth = full.true_value(lambda x: np.where(x[:, 0, 1] > 0, 0, 1))
    assert abs(got.value - truth) < 0.03 and "measured, not certified" in got.caveat


def test_nothing_from_an_estimated_log_is_certified():
    full = softmax_logged(rows=5000)
    log = Log.from_arrays(contexts=full.contexts[:, 0, :], actions=full.actions, costs=full.costs,
                          propensities="estimate", n=3, cost_range=(0.0, 1.0))
    chosen = select(log, {"a": lambda x: np.where(x[:, 1] > 0, 0, 1), "b": lambda x: np.zeros(len(x), dtype=int)},
                    rho=0.1, seed=0)
    assert not chosen.certified and "the logging policy's own propensities" in chosen.certificate
    with pytest.raises(InvalidArgumentError, match="a log that knows its logging policy has its propensities"):
        Log.from_arrays(contexts=full.contexts, actions=full.actions, costs=full.costs, propensities="estimate",
                        distribution=full.distribution)
    with pytest.raises(InvalidArgumentError, match="or 'estimate'"):
        Log.from_arrays(contexts=full.contexts, actions=full.actions, costs=full.costs, propensities="guess")


def test_a_file_without_propensities(tmp_path, capsys):
    full = softmax_logged(rows=2000)
    z = full.contexts[:, 0]
    lines = ["action,cost," + ",".join(f"x{j}" for j in range(z.shape[1]))]
    lines += [f"{a},{float(c)!r}," + ",".join(repr(float(v)) for v in row) for a, c, row in zip(full.actions, full.costs, z)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidArgumentError, match="propensities='estimate' fits a stated model"):
        Log.from_csv(tmp_path / "log.csv", n=3)
    log = Log.from_csv(tmp_path / "log.csv", n=3, propensities="estimate")
    assert log.propensity_model is not None and log.rows == 2000
    (tmp_path / "pols.py").write_text("import numpy as np\ndef alcohol(x):\n    return np.where(x[:, 1] > 0, 0, 1)\n")
    code = main(["offpolicy", str(tmp_path / "log.csv"), "-n", "3", "--estimate-propensities", "--policy",
                 f"{tmp_path}/pols.py:alcohol", "--estimator", "ips"])
    assert code == 0 and "measured, not certified" in capsys.readouterr().out
    (tmp_path / "with.csv").write_text("action,cost,propensity,x0\n0,1,0.5,0.1\n")
    with pytest.raises(InvalidArgumentError, match="has a propensity column"):
        Log.from_csv(tmp_path / "with.csv", n=3, propensities="estimate")
