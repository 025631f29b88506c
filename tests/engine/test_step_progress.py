"""Progress inside a pair: a learner stepped in Python tells how far it is before its first pair ends."""

import io
import sys

import numpy as np

import replify
from replify.base import progress
from replify.engine import limits


class Stepped:
    """A user's own learner stepped in Python, act() and update() a step."""

    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self):
        return 0

    def update(self, cost):
        pass


class SteppedContextual:
    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng):
        pass

    def act(self, context):
        return int(np.argmin(context[:, 0]))

    def update(self, action, cost):
        pass


def test_a_learner_stepped_in_python_reports_the_steps_of_the_pairs_under_way(monkeypatch):
    monkeypatch.setattr(limits, "PROGRESS_SECONDS", 0.0)  # every report, however fast the steps
    monkeypatch.setattr(limits, "STEPPED_CHUNK_ROWS", 100)
    for learner, adversary, params in [(Stepped, "iid-bernoulli", {}),           # the per-step path
                                       (Stepped, "random-signs", {}),
                                       (SteppedContextual, "linear-gaussian", {"contexts": "sphere", "d": 2})]:
        seen = []
        report = replify.evaluate(learner, adversary, n=3, horizon=1000, pairs=4, seed=0, adversary_params=params,
                                  progress=lambda done, total: seen.append((done, total)))
        done = [d for d, _ in seen]
        assert all(t == 4 for _, t in seen) and done == sorted(done) and done[-1] == report.pairs == 4
        # the four pairs run in one group: before it ends, the steps played are told as a share of the pairs
        assert 0 < done[0] < 1 and len([d for d in done if d < 4]) >= 10, (adversary, done[:5])


def test_the_log_line_shows_the_share_done_and_the_time_left_before_a_pair_ends(monkeypatch):
    monkeypatch.setattr(limits, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(limits, "STEPPED_CHUNK_ROWS", 100)
    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.01)
    log = io.StringIO()  # not a terminal: a progress line every LINE_INTERVAL seconds
    monkeypatch.setattr(sys, "stderr", log)

    class Slow(Stepped):
        def act(self):
            progress.time.sleep(2e-5)
            return 0

    replify.evaluate(Slow, "iid-bernoulli", n=3, horizon=4000, pairs=2, seed=0)
    lines = [line for line in log.getvalue().splitlines() if "(done)" not in line and "started" not in line]
    assert any(line.split(": ")[2].startswith("0.") and "left" in line for line in lines), lines[:5]


def test_a_bar_shows_a_fraction_of_a_pair_to_a_tenth():
    shown = io.StringIO()
    bar = progress.TqdmProgress("evaluate", stream=shown)
    bar(0.123456, 4)
    assert bar.bar.n == 0.1
    bar(4, 4)
    bar.close()
    assert "4/4" in shown.getvalue()
