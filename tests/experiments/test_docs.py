"""The README's Python blocks and the examples run as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import guide_pages

ROOT = Path(__file__).resolve().parents[2]


# The tests that are one subprocess with fixed arguments (the blocks, about 20 s; the quick start,
# 8 s; the demo scripts) run it ahead in the background, beside the rest of the suite (conftest.py,
# early_subprocess).
@pytest.mark.early_subprocess([sys.executable, ROOT / "tests" / "doc_blocks.py"], cwd=ROOT, timeout=600)
@pytest.mark.slow
def test_readme_and_guide_python_blocks_run_in_order(early_subprocess):
    out = early_subprocess
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    assert "blocks ran" in out.stdout


@pytest.mark.slow
def test_the_documentation_site_builds_with_warnings_as_errors(tmp_path):
    # mkdocs.yml sets strict: a broken link, a missing page or a docstring mkdocstrings cannot
    # render fails the build
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "Measure replicability and regret" in api  # evaluate's docstring, rendered
    assert {p.name for p in guide_pages()} <= {p.name for p in (ROOT / "docs").glob("*.md")}
    assert "docs/data.md" in (ROOT / "README.md").read_text()  # the README links into the guide


def test_readme_test_command_is_what_ci_runs():
    # the README gives two commands: the default tier (development) and the full tier, which CI runs,
    # exactly as written there (the last line of .ci/run)
    readme = (ROOT / "README.md").read_text()
    default = 'python -m pip install -e ".[test]" && python -m pytest'
    full = 'python -m pip install -e ".[test]" && python -m pytest --full'
    assert f"\n{default}\n" in readme and f"\n{full}\n" in readme
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == full and sum(default in line for line in ci) == 1


# run with every replify warning an error: the quick start shows certified parameters and warns of nothing
STRICT = ("import runpy, sys, warnings; from replify.errors import ReplifyWarning; "
          "warnings.simplefilter('error', ReplifyWarning); runpy.run_path(sys.argv[1], run_name='__main__')")


@pytest.mark.slow
@pytest.mark.early_subprocess([sys.executable, "-c", STRICT, ROOT / "examples" / "quickstart.py"], timeout=600)
def test_quickstart_runs_and_reports_a_replicable_learner(early_subprocess):
    out = early_subprocess
    out.check_returncode()  # CalledProcessError, as subprocess.run(check=True) raised; a replify warning is an error
    assert "Warning" not in out.stderr, out.stderr
    assert "wrapped MyHedge" in out.stdout and "plain Hedge" in out.stdout
    assert "constant" in out.stdout and "split-commit" in out.stdout and "gain over constant" in out.stdout
    assert re.search(r"interval for rho ends at 0\.\d+ \(<= rho = 0\.1\)", out.stdout), out.stdout


@pytest.mark.parametrize("script", [
    pytest.param(script, marks=pytest.mark.early_subprocess([sys.executable, ROOT / "examples" / script, "--quick"],
                                                            timeout=600))
    for script in ("demo_coin.py", "demo_phases.py", "demo_lazy_leader.py")
])
def test_demo_examples_run_quick(script, early_subprocess):
    out = early_subprocess
    out.check_returncode()  # CalledProcessError, as subprocess.run(check=True) raised
    assert "rho_hat" in out.stdout


def test_readme_main_job_is_the_coin_demo():
    assert "python -m pip install -e . && replify demo coin" in (ROOT / "README.md").read_text()


def test_the_api_page_renders_docstring_mathematics_and_links_guide_pages():
    # docs/griffe_sphinx_roles.py: ``...`` with a sub- or superscript becomes MathJax inline mathematics,
    # and "docs/claims.md" a link to the page (only pages that exist: a wrong name stays text, so the
    # strict build never fails on it). The browser test checks that the API page typesets them.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
    try:
        import griffe_sphinx_roles as roles
    finally:
        sys.path.pop(0)
    assert roles.mathematics("regret ``(B + 2/ε)·Regret_{T/B}(internal)`` and ``code``") == (
        "regret \\((B + 2/ε)\\cdot Regret_{T/B}(internal)\\) and ``code``")
    assert roles.page_links("see docs/claims.md (and docs/nothere.md)") == "see [claims](claims.md) (and docs/nothere.md)"
