"""The example plugin package under examples/plugin is installed for real and found through its
entry point, in a separate interpreter so the test session's registry is left alone."""

import subprocess
import sys
import textwrap
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"


def test_example_plugin_installs_and_is_found_through_its_entry_point(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(EXAMPLE)],
        check=True, capture_output=True, cwd=tmp_path,
    )
    script = textwrap.dedent(
        """
        import sys, numpy as np, replify
        sys.path.insert(0, sys.argv[1])
        assert "example-ftl" in replify.learners(), list(replify.learners())
        assert replify.learners()["hedge"].name == "hedge"      # the built-ins are still there
        report = replify.evaluate("example-ftl", "example-alternating", n=2, horizon=1000, pairs=3, seed=0)
        print(report.rho_hat, report.regret_mean)
        """
    )
    out = subprocess.run([sys.executable, "-c", script, str(target)], check=True, capture_output=True, text=True, cwd=tmp_path)
    rho_hat, regret = map(float, out.stdout.split())
    # FTL replicates the deterministic sequence exactly, and the trap costs it about T/2.
    assert rho_hat == 0.0 and regret >= 490
