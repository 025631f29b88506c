"""docs/contextual.md's table of learners and adversaries states each one's costs as the code declares them."""

import math
import re
from pathlib import Path

import replify

ROOT = Path(__file__).resolve().parents[2]


def table_costs() -> dict[str, str]:
    """name -> the "costs" cell of the page's table of learners and adversaries."""
    lines = (ROOT / "docs" / "contextual.md").read_text().splitlines()
    header = lines.index("| name | what | costs | replicable |")
    rows = {}
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[re.fullmatch(r"`([\w-]+)`", cells[0]).group(1)] = cells[2]
    return rows


def test_the_table_states_every_contextual_learners_cost_domain():
    rows = table_costs()
    contextual = sorted(name for name, spec in replify.learners().items() if spec.problem == "contextual")
    assert contextual and set(contextual) <= set(rows)
    for name in contextual:
        spec = replify.learners()[name]
        learner = replify.make(name, n=3, horizon=100, seed=0, **({"rho": 0.1} if spec.guarantee else {}))
        low, high = learner.domain.low, learner.domain.high
        if (low, high) == (-math.inf, math.inf):
            assert rows[name].startswith("any real"), (name, rows[name])
        else:
            assert rows[name].startswith(f"[{low:g}, {high:g}]"), (name, (low, high), rows[name])


def test_the_table_states_every_adversarys_costs():
    rows = table_costs()
    for name in ("linear-gaussian", "linear-bernoulli", "linear-switching", "classification-bandit"):
        adversary = replify.make_adversary(name, n=3, horizon=100, seed=0)
        if getattr(adversary, "integer_costs", False):
            assert tuple(adversary.cost_bounds) == (0.0, 1.0) and rows[name] == "0 or 1", (name, rows[name])
        else:
            assert getattr(adversary, "cost_bounds", None) is None and rows[name] == "any real", (name, rows[name])
