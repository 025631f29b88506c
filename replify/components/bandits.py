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
A batched learner whose batches are round robins, and which learns only each arm's cost sums,
may also offer

- ``next_cycle() -> (arms, length)``: the next batch plays ``arms[j % len(arms)]`` for j < length;
- ``observe_sums(sums, pulls)``: each arm's cost sum and pull count over that batch, both (n,);

the engine then plays it on an iid (or piecewise-iid) adversary with no per-step draw at all (its
block-sum path: each arm's pulls drawn as one segment sum; docs/bandits.md).

**The lane-batched form** (``for_lanes``, for speed across the many paired runs of an evaluation)
lives in :mod:`replify.components.bandit_lanes`; the exploring learners' base (``ExploringBandit``,
uniform exploration on a schedule) in :mod:`replify.components.exploring`.

Regret is against the best fixed arm in hindsight on the adversary's draws (and pseudo-regret
against the best mean, when the adversary knows its means); where its arms are independent given
the step the engine draws only the played arm's cost and every arm's total as block sums
(replify.engine.played).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import (
    NO_COST, PLAIN_INTS, CostDomain, check_action, check_feedback, check_int, check_next_step, refuse_cost_vector_update,
)
from replify.errors import ActionError, CostError, InvalidArgumentError, LearnerProtocolError
from replify.components.describe import Described
from replify._moved import names_getattr


def is_bandit(learner: Any) -> bool:
    """Whether ``learner`` declares bandit feedback (``feedback = "bandit"``). A ``feedback``
    other than "full" or "bandit" ("Bandit", say) is refused rather than read as full
    information, which would hand a bandit learner whole cost vectors."""
    return check_feedback(learner) == "bandit"


def reference_learners(bandit: bool, contextual: bool = False) -> tuple[str, str]:
    """The reference rows shown beside a replicable learner: ``constant`` (replicable, learns
    nothing) and a non-replicable baseline that learns — ``hedge``, ``ucb1`` under bandit
    feedback (a bandit learner is not compared with one that sees whole cost vectors), ``linucb``
    for a contextual learner (one that sees the contexts)."""
    return ("constant", "linucb" if contextual else "ucb1" if bandit else "hedge")


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

    def play(self, costs: Any, t0: int) -> np.ndarray:
        """The arms played on ``costs`` (L, n), steps t0+1..t0+L; the learner sees c_t(a_t) only.
        ``costs`` is the (L, n) array, or anything indexed as it is (``costs[t, a]``, and with
        arrays of steps and arms): the engine's view of the played arm's costs alone."""
        rows = costs.shape[0]
        out = np.empty(rows, dtype=np.int64)
        t, lr = 0, self.learner
        if not callable(self.batch):
            act, update, n = lr.act, lr.update, self.n
            for t in range(rows):  # a learner without batches adapts every step: nothing to vectorise
                a = act()
                if not (type(a) in PLAIN_INTS and 0 <= a < n):  # the common case inline; the rest checked, named
                    a = check_action(a, n=n, problem="experts", step=t0 + t + 1, source="learner.act()")
                out[t] = a
                update(int(a), float(costs[t, a]))
            return out
        while t < rows:
            if self.pending.size == 0:
                self.pending = self._batch(t0 + t)
                self.seen = []
            k = min(rows - t, self.pending.size)
            arms = self.pending[:k]
            out[t : t + k] = arms
            self.seen.append(costs[np.arange(t, t + k), arms])
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
        # a copy: a learner that reuses its own array for the next batch must not change this one
        # while it is still being played (the engine plays a batch across its chunks)
        return arms.astype(np.int64, copy=True)


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

    def update(self, action: Any, cost: Any = NO_COST) -> None:
        """Reveal the cost of the arm played at this step."""
        if cost is NO_COST:
            refuse_cost_vector_update(self, action, step=self._t + 1)
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

    def _batch_costs(self, arms: np.ndarray, costs: Any) -> np.ndarray:
        """For a batched learner's ``observe``: ``costs`` checked against ``arms`` (the last
        ``next_batch()``, empty if none is pending) and the cost range, then counted into ``pulls``
        and ``sums`` one by one, in order (the sums stepping makes, bit for bit). Returns them."""
        c = np.asarray(costs, dtype=np.float64)
        if arms.size == 0:
            raise InvalidArgumentError(f"observe() at step {self._t + 1} needs a next_batch() first (nothing is pending)")
        if c.shape != arms.shape:
            raise InvalidArgumentError(f"observe() needs the {arms.size} costs of the last next_batch(); got shape {c.shape}")
        low, high = self.cost_range
        ok = (c >= low) & (c <= high)  # NaN fails too
        if not ok.all():
            bad = int(np.argmax(~ok))
            raise CostError(f"cost at step {self._t + bad + 1} must be a number in [{low:g}, {high:g}]; got {float(c[bad])!r}")
        np.add.at(self.pulls, arms, 1)
        np.add.at(self.sums, arms, c)
        return c

    def _cycle_sums(self, sums: Any, pulls: Any, length: int) -> np.ndarray:
        """For ``observe_sums``: each arm's cost sum and pull count over the ``length`` steps of the
        last ``next_cycle()``, checked (shapes, counts adding up, sums that costs in the range can
        make) and counted into ``pulls`` and ``sums``. Returns the sums."""
        c, m = np.asarray(sums, dtype=np.float64), np.asarray(pulls)
        if c.shape != (self.n,) or m.shape != (self.n,) or m.dtype.kind not in "iuf" or m.sum() != length:
            raise InvalidArgumentError(f"observe_sums() needs {self.n} cost sums and pull counts adding up to the "
                                       f"{length} steps of the cycle; got shapes {c.shape} and {m.shape}")
        low, high = self.cost_range
        if not (np.all(c >= low * m) and np.all(c <= high * m)):  # NaN fails too
            raise CostError(f"cost sums {c.tolist()} over {m.tolist()} pulls are outside what costs in [{low:g}, {high:g}] add up to")
        self.pulls += m.astype(np.int64)
        self.sums += c
        return c

    def _choose(self) -> int:
        raise NotImplementedError


@typeguard_ignore  # a validator run each step: it checks its own arguments
def _real_cost(cost: Any, step: int) -> float:
    """One arm's cost as a float: a real number (a 0-d real array included), never a bool, a
    string or a complex number."""
    if isinstance(cost, np.ndarray) and cost.ndim == 0 and cost.dtype.kind in "iuf":
        return float(cost)
    if isinstance(cost, (bool, np.bool_)) or not isinstance(cost, numbers.Real):
        raise CostError(f"cost at step {step} must be a real number (the played arm's cost); "
                        f"got {cost!r} ({type(cost).__name__})")
    return float(cost)


# the names that moved to their own modules, kept importable from here (replify._moved)
__getattr__ = names_getattr(__name__, {
    "BanditLanes": "replify.components.bandit_lanes",
    "LaneBandit": "replify.components.bandit_lanes",
    "lane_form": "replify.components.bandit_lanes",
    "offers_lanes": "replify.components.bandit_lanes",
    "LaneFeed": "replify.components.bandit_lanes",
    "MAX_BATCH": "replify.components.exploring",
    "exploration_schedule": "replify.components.exploring",
    "ExploringBandit": "replify.components.exploring",
})
