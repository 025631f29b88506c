"""``replify offpolicy``: estimates and replicable decisions from a log on the command line."""

from __future__ import annotations

from replify.cli import main
from replify.offpolicy import Log

POLICIES = '''import numpy as np
def alcohol(contexts):  # high alcohol: cultivar 0, else 1
    return np.where(contexts[:, 0, 1] > 0, 0, 1)
def first(contexts):
    return np.zeros(contexts.shape[0], dtype=int)
'''


def test_estimates_and_a_replicable_choice_from_a_simulated_wine_log(tmp_path, capsys):
    (tmp_path / "pols.py").write_text(POLICIES)
    code = main(["offpolicy", "--simulate", "classification-bandit", "-n", "3", "--rows", "5000",
                 "--policy", f"{tmp_path}/pols.py:alcohol", "--policy", f"{tmp_path}/pols.py:first", "--rho", "0.1"])
    out = capsys.readouterr().out
    assert code == 0 and "classification-bandit: 5000 rows, 3 arms" in out
    assert out.count(" ips ") == 2 and "no interval" in out and "cost model's bias" in out and "true " in out
    assert "replicable choice: " in out and "pols.py:alcohol" in out.split("replicable choice: ")[1]
    assert "certified: rho <= 0.1" in out and "note:" not in out
    # on 100 rows the grid is wider than the cost range: said beside the certificate
    assert main(["offpolicy", "--simulate", "classification-bandit", "-n", "3", "--rows", "100",
                 "--policy", f"{tmp_path}/pols.py:first", "--estimator", "ips", "--rho", "0.1"]) == 0
    assert "note: the grid (width" in capsys.readouterr().out


def test_a_csv_log_and_the_errors_said_in_one_line(tmp_path, capsys):
    (tmp_path / "pols.py").write_text(POLICIES)
    log = Log.simulate("classification-bandit", n=3, rows=300, seed=0, adversary_params={"features_as": "same"})
    z = log.contexts[:, 0]
    lines = ["action,cost,propensity," + ",".join(f"x{j}" for j in range(z.shape[1]))]
    lines += [",".join(map(str, [int(a), c, p, *r])) for a, c, p, r in zip(log.actions, log.costs, log.propensities, z)]
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    code = main(["offpolicy", str(tmp_path / "log.csv"), "-n", "3", "--policy", f"{tmp_path}/pols.py:first",
                 "--estimator", "ips", "--rho", "0.1"])
    out = capsys.readouterr().out
    assert code == 0 and "log.csv: 300 rows, 3 arms" in out and "measured, not certified" in out
    assert main(["offpolicy", "--policy", f"{tmp_path}/pols.py:first"]) == 2
    assert "give a CSV log (LOG) or --simulate NAME" in capsys.readouterr().err
    # what the certificate is told is checked before anything is printed (each row of a CSV log against it)
    for extra, words in [(["--rho", "0.1", "--min-propensity", "0.5"], "at least min_propensity=0.5"),
                         (["--rho", "0.1", "--cost-bound", "0,0.5"], "a cost in cost_range=[0.0, 0.5]"),
                         (["--rho", "1.5"], "--rho must lie strictly between 0 and 1, got 1.5"),
                         (["--min-propensity", "0.2"], "--min-propensity serves the certificate of --rho; give --rho"),
                         (["--seed", "-1"], "--seed must be an integer >= 0; got -1")]:
        assert main(["offpolicy", str(tmp_path / "log.csv"), "--policy", f"{tmp_path}/pols.py:first", *extra]) == 2
        out, err = capsys.readouterr()
        assert out == "" and words in err, (extra, err)


def test_the_offpolicy_demo_on_wine(tmp_path, capsys):
    import json

    code = main(["demo", "offpolicy", "--quick", "--quiet", "--json", str(tmp_path / "d.json")])
    out = capsys.readouterr().out
    assert code == 0 and "replify demo offpolicy: wine log of 2000 rows" in out
    data = json.loads((tmp_path / "d.json").read_text())
    assert set(data["estimates"]) == {"rule A", "rule B", "always 0", "always 2"}
    for got in data["estimates"].values():
        for e in ("ips", "snips", "dr"):  # each estimate, its interval around it, the truth the log knows
            lo, hi = got[e]["interval"]
            assert lo <= got[e]["value"] <= hi and 0 <= got[e]["true_value"] <= 1
    assert data["choice"]["certified"] and data["choice"]["policy"] in data["estimates"]
    for decision in ("replicable choice", "replicable value"):
        rows = data["measured"][decision]
        assert [r["rho"] for r in rows] == [0.05, 0.1, 0.2] and all(r["pairs"] == 10 for r in rows)
        assert all(r["rho_hat"] == r["failures"] / 10 and r["rho_ci"][0] <= r["rho_hat"] <= r["rho_ci"][1] for r in rows)
    assert f"{data['measured']['replicable value'][1]['failures']} of 10 pairs of logs disagree" in out


def test_a_parquet_log_is_read_and_a_duplicate_csv_column_refused(tmp_path, capsys):
    import pytest

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    (tmp_path / "pols.py").write_text(POLICIES)
    log = Log.simulate("classification-bandit", n=3, rows=200, seed=0, adversary_params={"features_as": "same"})
    z = log.contexts[:, 0]
    table = pa.table({"action": log.actions, "cost": log.costs, "propensity": log.propensities,
                      **{f"x{j}": z[:, j] for j in range(z.shape[1])}})
    pq.write_table(table, tmp_path / "log.parquet")
    pq.write_table(table, tmp_path / "log.data")  # no telling name: Parquet's magic bytes say it
    for name in ("log.parquet", "log.data"):
        code = main(["offpolicy", str(tmp_path / name), "-n", "3", "--policy", f"{tmp_path}/pols.py:first",
                     "--estimator", "ips"])
        out, err = capsys.readouterr()
        assert code == 0 and f"{name}: 200 rows, 3 arms" in out, err
    (tmp_path / "dup.csv").write_text("action,cost,propensity,x0,action\n0,0.5,0.5,1,1\n1,0.5,0.5,1,0\n")
    assert main(["offpolicy", str(tmp_path / "dup.csv"), "--policy", f"{tmp_path}/pols.py:first"]) == 2
    assert "names the column 'action' twice, as columns 1 and 5" in capsys.readouterr().err


RAISING = '''import sys
def divides(contexts):
    return 1 / 0
def quits(contexts):
    raise SystemExit(3)
'''


def test_a_policy_that_raises_or_exits_is_said_in_one_line(tmp_path, capsys):
    import pytest

    (tmp_path / "pols.py").write_text(RAISING)
    simulated = ["offpolicy", "--simulate", "classification-bandit", "-n", "3", "--rows", "200", "--estimator", "ips"]
    assert main([*simulated, "--policy", f"{tmp_path}/pols.py:divides"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2  # a note on where the file is, the error
    assert f"--policy '{tmp_path}/pols.py:divides' raised ZeroDivisionError: division by zero (at {tmp_path}/pols.py:3" in err
    assert main([*simulated, "--policy", f"{tmp_path}/pols.py:quits"]) == 2
    assert "--policy" in (err := capsys.readouterr().err) and "exited with sys.exit(3)" in err
    with pytest.raises(Exception) as raised:  # --traceback: the whole story, the policy's own error its cause
        main(["--traceback", *simulated, "--policy", f"{tmp_path}/pols.py:divides"])
    assert isinstance(raised.value.__cause__, ZeroDivisionError)


def test_what_the_command_is_told_is_said_back_as_given(tmp_path, capsys, monkeypatch):
    import pytest

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere" / "pols.py").write_text(POLICIES)
    monkeypatch.chdir(tmp_path / "here")
    simulated = ["offpolicy", "--simulate", "classification-bandit", "-n", "3"]
    assert main([*simulated, "--rows", "300", "--policy", "../elsewhere/pols.py:first"]) == 0
    out, err = capsys.readouterr()
    assert "imports 1 file from outside the working folder" in err and "../elsewhere/pols.py" in err
    kinds = [line for line in out.splitlines() if line.startswith("  (")]
    # what the intervals are, each said once: the normal one, and the normal one of a lam tuned on the log
    assert len(kinds) == len(set(kinds)) and out.count("central limit theorem") == 2
    assert main([*simulated, "--rows", "100000000", "--policy", "../elsewhere/pols.py:first"]) == 2
    assert "--rows 100,000,000: a simulated log of 3 arms" in (err := capsys.readouterr().err) and "GiB" in err
    with pytest.raises(SystemExit):
        main([*simulated, "--policy", "../elsewhere/pols.py:first", "--rho", "0.1", "--cost-bound", "-1"])
    assert "expected M > 0 (every cost in [-M, M]) or LO,HI with LO < HI; got '-1'" in capsys.readouterr().err
    assert main([*simulated, "--policy", "../elsewhere/pols.py:first", "--min-propensity", "0.2"]) == 2
    assert "the estimates and their intervals use neither" in capsys.readouterr().err


def test_the_command_line_certifies_logs_of_other_sizes_and_says_what_a_small_sample_cannot_support(tmp_path, capsys):
    (tmp_path / "pols.py").write_text(POLICIES)
    base = ["offpolicy", "--simulate", "classification-bandit", "-n", "3", "--policy", f"{tmp_path}/pols.py:alcohol",
            "--policy", f"{tmp_path}/pols.py:first", "--rho", "0.1"]
    assert main(base + ["--rows", "5000", "--min-rows", "4000"]) == 0
    out = capsys.readouterr().out
    assert "certified: rho <= 0.1 for two logs of at least 4000 rows (this one has 5000)" in out
    assert "replicable choice: " + f"{tmp_path}/pols.py:alcohol" in out  # the candidate's name, not an index
    assert main(base + ["--rows", "5000"]) == 0
    assert "of N and N' rows, rho + |log2(N'/N)|" in capsys.readouterr().out
    assert main(base + ["--rows", "3000", "--min-rows", "4000"]) == 2
    assert "min_rows=4000, but classification-bandit has 3000 rows" in capsys.readouterr().err
    # a small log: the estimate's note names the effective sample size (printed, not a Python warning)
    assert main(base[:-2] + ["--rows", "60", "--estimator", "ips"]) == 0
    out, err = capsys.readouterr()
    assert "note: too few effective rows for the normal interval (effective sample size" in out and "Warning" not in err


def test_the_command_line_keeps_an_incumbent_and_takes_the_overlap_form(tmp_path, capsys):
    (tmp_path / "pols.py").write_text(POLICIES)
    alcohol, first = f"{tmp_path}/pols.py:alcohol", f"{tmp_path}/pols.py:first"
    base = ["offpolicy", "--simulate", "classification-bandit", "-n", "3", "--policy", alcohol, "--policy", first,
            "--estimator", "ips"]
    # 300 rows: one cell for every candidate, so the incumbent is kept whatever R's order
    assert main(base + ["--rows", "300", "--rho", "0.1", "--incumbent", first]) == 0
    out = capsys.readouterr().out
    assert f"replicable choice: {first}" in out and "the incumbent was kept" in out
    assert main(base + ["--rows", "200000", "--rho", "0.1", "--variance", "overlap", "--incumbent", "logging"]) == 0
    out = capsys.readouterr().out
    assert "the overlap form: the grid given" in out and "replicable choice: " in out
    for extra, words in [(["--rho", "0.1", "--incumbent", "other.py:f"], "--incumbent must be one of the --policy"),
                         (["--incumbent", first], "--incumbent serves the certificate of --rho"),
                         (["--rho", "0.1", "--rows", "500", "--variance", "overlap"], "500 rows leave too little")]:
        assert main(base + ["--rows", "300"] + extra if "--rows" not in extra else base + extra) == 2
        assert words in capsys.readouterr().err, extra


def team_log(tmp_path):
    """A team's export: its own column names, an id and a timestamp, rewards (1 for a right label)."""
    log = Log.simulate("classification-bandit", n=3, rows=400, seed=0, adversary_params={"features_as": "same"})
    z = log.contexts[:, 0]
    lines = ["event_id,when,alcohol,intercept,malic,arm,reward,p"]
    for i in range(log.rows):
        lines.append(f"{i},2026-11-{1 + i % 28:02d},{float(z[i, 1])!r},{float(z[i, 0])!r},{float(z[i, 2])!r},"
                     f"{log.actions[i]},{1.0 - float(log.costs[i])!r},{float(log.propensities[i])!r}")
    (tmp_path / "team.csv").write_text("\n".join(lines) + "\n")
    return log


def test_a_teams_own_columns_and_rewards_read_as_the_log(tmp_path, capsys):
    # the same interactions as replify's own log; rewards r read as costs -r, so every estimate is minus
    # the reward's: the alcohol rule's cost is its mistakes less 1
    import numpy as np
    import pytest

    log = team_log(tmp_path)
    mapping = {"action": "arm", "cost": "reward", "propensity": "p", "context": ["intercept", "alcohol", "malic"]}
    team = Log.from_csv(tmp_path / "team.csv", columns=mapping, ignore=["event_id", "when"], rewards=True, n=3)
    assert np.array_equal(team.actions, log.actions) and np.allclose(team.costs, log.costs - 1.0)
    assert np.array_equal(team.contexts, log.contexts[:, 0, :3])
    with np.errstate(all="ignore"):
        with pytest.raises(Exception, match="'event_id' is none of them: map your names with columns=, or leave a "
                                            "column out with ignore="):
            Log.from_csv(tmp_path / "team.csv", columns=mapping, n=3)
    (tmp_path / "pols.py").write_text("import numpy as np\ndef alcohol(contexts):  # a file's shared context (rows, d)\n"
                                      "    return np.where(contexts[:, 1] > 0, 0, 1)\n")
    args = ["offpolicy", str(tmp_path / "team.csv"), "-n", "3", "--column", "action=arm", "--column", "cost=reward",
            "--column", "propensity=p", "--column", "context=intercept,alcohol,malic", "--ignore", "event_id",
            "--ignore", "when", "--rewards", "--policy", f"{tmp_path}/pols.py:alcohol", "--estimator", "ips",
            "--interval", "bernstein", "--plot", str(tmp_path / "table.png")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "team.csv: 400 rows, 3 arms" in out and "finite-sample" in out and (tmp_path / "table.png").exists()
    with pytest.raises(SystemExit):  # the names swapped: argparse refuses it, naming what it expects
        main(args[:2] + ["--column", "arm=action", "--policy", f"{tmp_path}/pols.py:alcohol"])
    assert "expected NAME=COLUMN with NAME one of action, cost, propensity, context" in capsys.readouterr().err


def test_per_arm_features_exported_as_columns_are_read_as_each_arms_features(tmp_path):
    # the layout a team exports for per-arm features: one column per arm and feature; read as (rows, n, d),
    # the same log as replify's own, from CSV and from Parquet
    import numpy as np
    import pytest

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    log = Log.simulate("classification-bandit", n=3, rows=300, seed=2)  # block features: (rows, 3, 42)
    d = log.contexts.shape[2]
    names = [[f"arm{a}_f{j}" for j in range(d)] for a in range(3)]
    table = {"arm": log.actions, "loss": log.costs, "p": log.propensities}
    table.update({names[a][j]: log.contexts[:, a, j] for a in range(3) for j in range(d)})
    pq.write_table(pa.table(table), tmp_path / "arms.parquet")
    header = list(table)
    rows = [",".join(repr(float(table[h][i])) if h != "arm" else str(int(table[h][i])) for h in header)
            for i in range(log.rows)]
    (tmp_path / "arms.csv").write_text(",".join(header) + "\n" + "\n".join(rows) + "\n")
    mapping = {"action": "arm", "cost": "loss", "propensity": "p", "context": names}
    for read, name in ((Log.from_csv, "arms.csv"), (Log.from_parquet, "arms.parquet")):
        got = read(tmp_path / name, columns=mapping, n=3)
        assert got.contexts.shape == log.contexts.shape and np.array_equal(got.contexts, log.contexts), name
    with pytest.raises(Exception, match="all of one length"):
        Log.from_csv(tmp_path / "arms.csv", columns={**mapping, "context": [names[0], names[1][:-1], names[2]]})
