"""Bandit feedback: the learner sees only the cost of the arm it played (the partial-information
setting the paper names as its main open direction).

**The protocol.** A learner that declares ``feedback = "bandit"`` has

- ``act() -> int``: the arm for the current step (idempotent within a step);
- ``update(action, cost)``: ``action`` the arm played (what ``act()`` returned), ``cost`` the
  float c_t(action) — nothing else of c_t;

and, optionally, for speed, the batch form the batched (and replicable) algorithms have:

- ``next_batch() -> actions``: the arms of the next L ≥ 1 steps, committed before any of their
  costs is seen (an elimination round, a commit phase);
- ``observe(costs)``: the L costs of those arms, in order.

When ``next_batch`` exists the engine uses it (and ``act``/``update`` are not called); a batch may
run across the engine's chunks. Both forms must play the same arms on the same costs — the
conformance check ``check_bandit_batches_equal_stepping`` (:mod:`replify.testing`) tests it.

The adversary still draws whole cost vectors: regret is against the best fixed arm in hindsight on
those vectors (and pseudo-regret against the best mean, when the adversary knows its means).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from replify.checks import CostDomain, check_action, check_feedback, check_int, check_next_step
from replify.errors import ActionError, CostError, LearnerProtocolError
from replify.components.describe import Described


def is_bandit(learner: Any) -> bool:
    """Whether ``learner`` declares bandit feedback (``feedback = "bandit"``). A ``feedback``
    other than "full" or "bandit" ("Bandit", say) is refused rather than read as full
    information, which would hand a bandit learner whole cost vectors."""
    return check_feedback(learner) == "bandit"


class BanditFeed:
    """What the engine hands a bandit learner: per step (``act``/``update``) or batch by batch
    (``next_batch``/``observe``), only the played arm's cost. One feed per run: it carries a
    batch that is not yet played to its end across the engine's chunks."""

    def __init__(self, learner: Any, n: int) -> None:
        if getattr(learner, "mixed", False):
            raise LearnerProtocolError(f"{type(learner).__name__}: a bandit learner plays an arm, not a mixture (mixed = True)")
        self.learner, self.n = learner, n
        self.batch = getattr(learner, "next_batch", None)
        self.pending = np.empty(0, dtype=np.int64)  # the arms of the current batch still to play
        self.seen: list[np.ndarray] = []  # the costs of its arms played so far

    def play(self, costs: np.ndarray, t0: int) -> np.ndarray:
        """The arms played on ``costs`` (L, n), steps t0+1..t0+L; the learner sees c_t(a_t) only."""
        rows = costs.shape[0]
        out = np.empty(rows, dtype=np.int64)
        t, lr = 0, self.learner
        if not callable(self.batch):
            for t in range(rows):  # a learner without batches adapts every step: nothing to vectorise
                a = check_action(lr.act(), n=self.n, problem="experts", step=t0 + t + 1, source="learner.act()")
                out[t] = a
                lr.update(a, float(costs[t, a]))
            return out
        while t < rows:
            if self.pending.size == 0:
                self.pending = self._batch(t0 + t)
                self.seen = []
            k = min(rows - t, self.pending.size)
            arms = self.pending[:k]
            out[t : t + k] = arms
            self.seen.append(costs[t : t + k][np.arange(k), arms])
            self.pending, t = self.pending[k:], t + k
            if self.pending.size == 0:
                lr.observe(np.concatenate(self.seen))
        return out

    def _batch(self, done: int) -> np.ndarray:
        arms = np.asarray(self.batch())
        if arms.ndim != 1 or arms.size == 0 or arms.dtype.kind not in "iu":
            raise ActionError(
                f"{type(self.learner).__name__}.next_batch() at step {done + 1} must return a non-empty 1-d array of "
                f"integer arms; got {arms!r}"
            )
        if arms.min() < 0 or arms.max() >= self.n:
            raise ActionError(f"{type(self.learner).__name__}.next_batch() at step {done + 1} returned arms outside "
                              f"[0, {self.n}): {np.unique(arms)[:10].tolist()}")
        return arms.astype(np.int64, copy=False)


class BanditLearner(Described):
    """Base of the bandit plugins: keeps the step count and the per-arm pull counts and cost
    sums (``pulls``, ``sums``), checks each ``update`` (the arm that was played, a finite cost in
    the learner's range, not past the horizon), and asks :meth:`_choose` for the next arm."""

    feedback = "bandit"
    problem = "experts"
    #: the range of a cost the learner accepts (its tuning assumes it)
    cost_range = (0.0, 1.0)

    def __init__(self, *, n: int, horizon: int) -> None:
        self.n = check_int("n", n, minimum=2)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self._t = 0
        self.pulls = np.zeros(self.n, dtype=np.int64)
        self.sums = np.zeros(self.n)
        self._action = 0

    @property
    def t(self) -> int:
        """Steps played so far."""
        return self._t

    @property
    def domain(self) -> CostDomain:
        """The costs the learner accepts (the engine refuses a draw outside them up front)."""
        return CostDomain(low=self.cost_range[0], high=self.cost_range[1])

    def act(self) -> int:
        return self._action

    def update(self, action: Any, cost: Any) -> None:
        """Reveal the cost of the arm played at this step."""
        check_next_step(self._t, self.horizon)
        # An arm is a whole number and a cost a real one: 0.5 is not arm 0, '0.5' and True are not
        # costs, and a complex cost is not its real part.
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
            raise ActionError(f"update() at step {self._t + 1}: action must be the integer arm act() returned "
                              f"({self._action}); got {action!r} ({type(action).__name__})")
        if int(action) != self._action:
            raise ActionError(f"update() at step {self._t + 1} was given arm {action}, but act() played {self._action}")
        c = _real_cost(cost, self._t + 1)
        low, high = self.cost_range
        if not (math.isfinite(c) and low <= c <= high):  # NaN and ±inf fail too
            raise CostError(f"cost at step {self._t + 1} must be a number in [{low:g}, {high:g}]; got {cost!r}")
        self._t += 1
        self.pulls[self._action] += 1
        self.sums[self._action] += c
        self._learn(self._action, c)
        if self._t < self.horizon:
            self._action = int(self._choose())

    def _learn(self, action: int, cost: float) -> None:
        """Per-learner state beyond pulls and sums (importance weights, posteriors)."""

    def _choose(self) -> int:
        raise NotImplementedError


def _real_cost(cost: Any, step: int) -> float:
    """One arm's cost as a float: a real number (a 0-d real array included), never a bool, a
    string or a complex number."""
    if isinstance(cost, np.ndarray) and cost.ndim == 0 and cost.dtype.kind in "iuf":
        return float(cost)
    if isinstance(cost, (bool, np.bool_)) or not isinstance(cost, numbers.Real):
        raise CostError(f"cost at step {step} must be a real number (the played arm's cost); "
                        f"got {cost!r} ({type(cost).__name__})")
    return float(cost)
