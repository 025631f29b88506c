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

**The lane-batched form**, for speed across the many paired runs of an evaluation. Every pair
runs the same learner on the same kind of instance, so the runs of a group — its *lanes* — can
advance together, one numpy operation per step across all of them. A learner class offers it with

- ``for_lanes(learners) -> lanes`` (a classmethod): one object holding the state of every learner in
  ``learners`` (all of that class, built alike, none played yet) as arrays with a leading lanes
  axis, or ``None`` when it cannot (the engine then steps them one by one);

and the object has

- ``act() -> arms``: every lane's arm for the current step, an integer array of shape (lanes,)
  (idempotent within a step);
- ``update(arms, costs)``: ``arms`` what ``act()`` returned, ``costs`` the (lanes,) costs
  c_t(a_t) each lane observed — nothing else of c_t.

Each lane keeps its own random stream (the generator its learner was built with), so a pair's
results are the same floats whichever form plays it, and whatever other pairs share its group:
the conformance check ``check_lanes_equal_stepping`` (:mod:`replify.testing`) tests it, and
:class:`BanditLanes` is a base that keeps the step and the per-lane arrays (its subclasses
implement ``_choose`` and ``_learn``). :class:`LaneBandit` is a per-lane learner that steps a
lane object of one lane, so the two forms are one implementation: ``ucb1``, ``thompson``,
``exp3`` and ``exp3-doubling`` are built so.

The adversary still draws whole cost vectors: regret is against the best fixed arm in hindsight on
those vectors (and pseudo-regret against the best mean, when the adversary knows its means).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from typing import Any, ClassVar, Sequence

import numpy as np

from replify.base.checks import (
    NO_COST, PLAIN_INTS, CostDomain, check_action, check_feedback, check_int, check_next_step, refuse_cost_vector_update,
)
from replify.errors import ActionError, CostError, InvalidArgumentError, LearnerProtocolError
from replify.components.describe import Described


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


#: The most arms one ExploringBandit.next_batch() hands out (8 MiB of them): a block runs as several.
MAX_BATCH = 1 << 20


def exploration_schedule(*, horizon: int, n: int, blocks: int | None, explore: int | None,
                         objective: Any) -> tuple[int, int]:
    """(K, m) for an :class:`ExploringBandit`: those given (checked: K ≤ T, and n·m exploration
    steps fit in a block of ⌈T/K⌉), the others the least ``objective(K, m)`` over powers of two
    (K from 2 to 1024, m while n·m fits a block)."""
    if blocks is not None:
        blocks = check_int("blocks", blocks, minimum=1)
        if blocks > horizon:
            raise InvalidArgumentError(f"blocks must be at most horizon={horizon} (a block has a step at least); got {blocks}")
    if explore is not None:
        explore = check_int("explore", explore, minimum=1)
    if blocks is None or explore is None:
        best = None
        for k in [blocks] if blocks is not None else [2**i for i in range(1, 11)]:
            for m in [explore] if explore is not None else [2**j for j in range(40)]:
                if n * m > -(-horizon // k):
                    break
                value = objective(k, m)
                if best is None or value < best[0]:
                    best = (value, k, m)
        if best is None:
            raise InvalidArgumentError(f"no schedule fits: horizon={horizon} is too short for n={n} arms to be explored "
                                       f"once in each of {blocks or 2} blocks")
        blocks, explore = best[1], best[2]
    size = -(-horizon // blocks)
    if n * explore > size:
        raise InvalidArgumentError(f"explore={explore} per arm and block needs n*explore={n * explore} steps, more than a "
                                   f"block of {size} (horizon={horizon}, blocks={blocks})")
    return blocks, explore


class ExploringBandit(BanditLearner):
    """Base of the bandit learners that explore on steps drawn from R and commit in between
    (``perturbed-bandit``, and ``replify.wrap(..., feedback="bandit")``): blocks of
    ``self.block_size`` steps; in each of the first ``self.decisions`` blocks a stretch of
    n·``self.explore`` steps at an offset drawn from ``self._rng`` (cyclically in the block) explores
    every arm ``explore`` times in the order of a permutation drawn with it; the other steps play
    ``self.committed``. At each of those blocks' ends the subclass's :meth:`_commit` gets the
    explored sums of the blocks it reads (the last ``self.window``; or, with ``self.restart`` = W, those of the
    current epoch of W blocks, the epoch's last decision reading all W and the next epoch starting afresh; or
    all) and returns the next
    committed arm. A block is a few round robins (segments), so the learner plays step by step, in
    batches (``next_batch``/``observe``, at most :data:`MAX_BATCH` arms) or as round robins on block
    sums (``next_cycle``/``observe_sums``, the engine's block-sum path); all three draw the same
    randomness in the same order and play the same arms. Each step of a block is arm a's u-th
    exploration step with probability 1/L (the offset is uniform), so an arm's explored mean is an
    unbiased estimate of its average cost over the block against any oblivious adversary."""

    def _start(self, *, rng: np.random.Generator, block_size: int, decisions: int, explore: int,
               window: int | None, first: int, restart: int | None = None) -> None:
        self._rng = rng
        self.block_size, self.decisions, self.explore, self.window = block_size, decisions, explore, window
        self.restart = restart
        self._explored = np.zeros(self.n)  # each arm's cost sum on the current block's exploration steps
        self._read: list[np.ndarray] = []  # the explored sums of the blocks a decision reads
        self.block = 0
        self.committed = first  # block 1's arm
        self._given = np.empty(0, dtype=np.int64)
        self._plan()

    def _commit(self, total: np.ndarray) -> int:
        """The arm for the next block, from the explored sums ``total`` of the blocks read."""
        raise NotImplementedError

    def _decide(self) -> None:
        self._read.append(self._explored)
        if self.window is not None:
            self._read = self._read[-self.window:]
        self._explored = np.zeros(self.n)
        # added in block order: the same floats on every path
        self.committed = int(self._commit(functools.reduce(np.add, self._read)))
        if self.restart is not None and (self.block + 1) % self.restart == 0:
            self._read = []  # the next block starts an epoch: its decisions read it afresh

    def _plan(self) -> None:
        """Block ``self.block``'s segments, in time order: (round-robin arms, length, explores)."""
        start = self.block * self.block_size
        length = min(self.block_size, self.horizon - start)
        commit = np.array([self.committed], dtype=np.int64)
        if self.block < self.decisions:
            width = self.n * self.explore
            offset, order = int(self._rng.integers(length)), self._rng.permutation(self.n).astype(np.int64)
            wrap = max(0, offset + width - length)  # exploration steps past the block's end, played at its start
            parts = [(np.roll(order, -((width - wrap) % self.n)), wrap, True), (commit, offset - wrap, False),
                     (order, width - wrap, True), (commit, length - offset - width + wrap, False)]
        else:  # the last block decides nothing: no exploration
            parts = [(commit, length, False)]
        self._segments = [part for part in parts if part[1] > 0]
        self._seg, self._j = 0, 0
        self._action = self._arm()

    def _arm(self) -> int:
        arms = self._segments[self._seg][0]
        return int(arms[self._j % arms.size])

    def _advance(self, steps: int) -> None:
        """``steps`` more steps of the current segment were played (their costs already counted)."""
        self._j += steps
        if self._j == self._segments[self._seg][1]:
            self._seg, self._j = self._seg + 1, 0
            if self._seg == len(self._segments):
                if self.block < self.decisions:
                    self._decide()
                self.block += 1
                if self._t < self.horizon:
                    self._plan()

    # -- stepping (act/update): the base class calls _learn then _choose
    def _learn(self, action: int, cost: float) -> None:
        if self._segments[self._seg][2]:
            self._explored[action] += cost
        self._advance(1)

    def _choose(self) -> int:
        return self._arm()

    # -- batches: the current segment, in slices of at most MAX_BATCH arms
    def next_batch(self) -> np.ndarray:
        """The next arms of the current segment (at most ``MAX_BATCH``): fixed by R and the commit."""
        arms, length, _ = self._segments[self._seg]
        size = min(MAX_BATCH, length - self._j)
        self._given = arms[(self._j + np.arange(size)) % arms.size]
        return self._given.copy()

    def observe(self, costs: Any) -> None:
        """The costs of the arms the last :meth:`next_batch` gave, in order."""
        arms = self._given
        c = self._batch_costs(arms, costs)
        if self._segments[self._seg][2]:
            np.add.at(self._explored, arms, c)  # one by one, in order: the sums stepping makes, bit for bit
        self._t += arms.size
        self._given = np.empty(0, dtype=np.int64)
        self._advance(arms.size)

    # -- round robins: the rest of the current segment, for the engine's block-sum path
    def next_cycle(self) -> tuple[np.ndarray, int]:
        """The rest of the current segment as ``(arms, length)``: its steps play ``arms[j % len(arms)]``
        for j < length. The engine's block-sum path asks for it on an iid or piecewise-iid adversary
        and answers with :meth:`observe_sums`."""
        arms, length, _ = self._segments[self._seg]
        return np.roll(arms, -(self._j % arms.size)), length - self._j

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum ``sums`` and pull count ``pulls`` (both (n,)) over the steps of the
        last :meth:`next_cycle`."""
        length = self._segments[self._seg][1] - self._j
        c = self._cycle_sums(sums, pulls, length)
        if self._segments[self._seg][2]:
            self._explored += c
        self._t += length
        self._advance(length)



def _real_cost(cost: Any, step: int) -> float:
    """One arm's cost as a float: a real number (a 0-d real array included), never a bool, a
    string or a complex number."""
    if isinstance(cost, np.ndarray) and cost.ndim == 0 and cost.dtype.kind in "iuf":
        return float(cost)
    if isinstance(cost, (bool, np.bool_)) or not isinstance(cost, numbers.Real):
        raise CostError(f"cost at step {step} must be a real number (the played arm's cost); "
                        f"got {cost!r} ({type(cost).__name__})")
    return float(cost)


class BanditLanes:
    """Base of the lane-batched form (module docstring): every lane's state as arrays with a
    leading lanes axis, the step ``t`` the lanes share, and each lane's generator (``rngs``).

    ``act()`` asks :meth:`_choose` once per step and keeps the answer until ``update``, which
    hands the lanes' arms and observed costs to :meth:`_learn`. :meth:`stack` joins lane objects
    of one class — lanes of learners built alike, at the same step — into one; a subclass names
    its per-lane arrays in ``per_lane`` and the settings every lane must share in ``shared``."""

    #: names of the arrays whose first axis is the lanes (joined by :meth:`stack`)
    per_lane: ClassVar[tuple[str, ...]] = ()
    #: names of the settings every stacked lane must share (compared by :meth:`stack`)
    shared: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any]) -> None:
        self.n, self.horizon = n, horizon
        if not isinstance(rngs, (list, tuple)):
            raise LearnerProtocolError(f"{type(self).__name__}: rngs must be a list with one generator per lane "
                                       f"(one lane: [rng]); got {type(rngs).__name__}")
        self.rngs = list(rngs)
        self.t = 0  # steps every lane has played
        self._arms: np.ndarray | None = None  # the current step's arms, once act() has chosen them
        self._offsets = np.arange(len(self.rngs), dtype=np.int64) * n  # lane i's arm a is flat index i·n + a

    @property
    def lanes(self) -> int:
        """How many lanes this object plays."""
        return len(self.rngs)

    def act(self) -> np.ndarray:
        """Every lane's arm for step t + 1, shape (lanes,)."""
        if self._arms is None:
            if self.t >= self.horizon:
                raise LearnerProtocolError(f"{type(self).__name__}.act() after the horizon ({self.horizon} steps played)")
            self._arms = self._choose()
        return self._arms

    def update(self, arms: np.ndarray, costs: np.ndarray) -> None:
        """The costs ``costs`` (lanes,) the lanes observed for the ``arms`` that :meth:`act` chose."""
        if self._arms is None:
            raise LearnerProtocolError(f"{type(self).__name__}.update() at step {self.t + 1} before act()")
        self._learn(self._offsets + arms, costs)
        self.t += 1
        self._arms = None

    def _choose(self) -> np.ndarray:
        """Every lane's arm for the step, an integer array of shape (lanes,)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _choose() -> arms, one per lane")

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        """Learn from each lane's cost; ``flat`` is lane i's arm as the index i·n + a into the
        flattened (lanes, n) arrays (``np.take``/``np.put`` read and write them in place)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _learn(flat, costs)")

    @classmethod
    def stack(cls, parts: Sequence[BanditLanes]) -> BanditLanes | None:
        """One object playing every lane of ``parts`` (each lane keeps its own generator), or
        None when they cannot be joined: another class, another size or setting, another step."""
        first = parts[0]
        names = ("n", "horizon", "t") + cls.shared
        if any(type(p) is not cls or any(getattr(p, k) != getattr(first, k) for k in names) for p in parts):
            return None
        pending = first._arms is not None
        if any((p._arms is not None) != pending for p in parts):
            return None
        out = object.__new__(cls)
        out.__dict__.update(first.__dict__)
        for name in cls.per_lane + (("_arms",) if pending else ()):
            setattr(out, name, np.concatenate([getattr(p, name) for p in parts]))
        out.rngs = [r for p in parts for r in p.rngs]
        out._offsets = np.arange(len(out.rngs), dtype=np.int64) * out.n
        return out


class LaneBandit(BanditLearner):
    """A bandit learner stepped through a lane object of one lane (``self._lane``, built by the
    subclass's ``__init__``, which then calls :meth:`_start`): stepping it and playing it in
    lanes run the same code, so they agree bit for bit. ``for_lanes`` stacks the learners' own
    lane objects."""

    _lane: BanditLanes

    def _start(self, lane: BanditLanes) -> None:
        self._lane = lane
        self._action = self._choose()

    @classmethod
    def for_lanes(cls, learners: Sequence[Any]) -> BanditLanes | None:
        """The lane-batched form of ``learners`` (module docstring), or None when they are not
        all of this class, built alike, at the same step — or when the class changes how it
        steps (a subclass overriding ``act``, ``update``, ``_learn`` or ``_choose``: its lane
        object would not play what it does, so it is stepped lane by lane)."""
        if not learners or any(type(lr) is not cls for lr in learners) or cls._steps_its_own_way():
            return None
        return type(learners[0]._own_lane()).stack([lr._own_lane() for lr in learners])

    def _own_lane(self) -> BanditLanes:
        lane = getattr(self, "_lane", None)
        if not isinstance(lane, BanditLanes):
            raise LearnerProtocolError(f"{type(self).__name__}.__init__ must end with self._start(lane), lane a "
                                       f"BanditLanes of one lane; got {lane!r}")
        return lane

    @classmethod
    def _steps_its_own_way(cls) -> bool:
        return not (cls.act is BanditLearner.act and cls.update is BanditLearner.update
                    and cls._learn is LaneBandit._learn and cls._choose is LaneBandit._choose)

    def _learn(self, action: int, cost: float) -> None:
        self._own_lane().update(np.array([action], dtype=np.int64), np.array([cost]))

    def _choose(self) -> int:
        arms = np.asarray(self._own_lane().act())
        if arms.shape != (1,) or arms.dtype.kind not in "iu":
            raise ActionError(f"{type(self._lane).__name__}.act() on one lane must return an integer array of shape (1,); "
                              f"got shape {arms.shape}, dtype {arms.dtype}")
        return int(arms[0])


def lane_form(learners: Sequence[Any]) -> Any:
    """The lane-batched form of a group's bandit learners when their class offers one
    (``for_lanes``) and it takes them, else None (the engine steps them one by one)."""
    cls = type(learners[0])
    make = getattr(cls, "for_lanes", None)
    if not callable(make) or any(type(lr) is not cls for lr in learners) or not is_bandit(learners[0]):
        return None
    if not (inspect.ismethod(make) or isinstance(inspect.getattr_static(cls, "for_lanes"), staticmethod)):
        # a plain function, an instance method: it would be called without the class
        raise LearnerProtocolError(f"{cls.__name__}.for_lanes must be a classmethod (or staticmethod) taking the list "
                                   f"of learners; got {type(make).__name__} {make!r}")
    lanes = make(list(learners))
    if lanes is None:
        return None
    for method in ("act", "update"):
        if not callable(getattr(lanes, method, None)):
            raise LearnerProtocolError(f"{cls.__name__}.for_lanes() must return an object with act() and update(arms, costs) "
                                       f"(a contextual learner's: act(contexts)); {type(lanes).__name__} has no {method}()")
    return lanes


def offers_lanes(learner: Any) -> bool:
    """Whether ``learner`` is a bandit learner whose class offers the lane-batched form (a
    :class:`LaneBandit` subclass that steps its own way does not)."""
    cls = type(learner)
    if isinstance(learner, LaneBandit) and cls._steps_its_own_way():
        return False
    return callable(getattr(cls, "for_lanes", None)) and is_bandit(learner)


class LaneFeed:
    """What the engine hands a lane-batched bandit learner (module docstring): per step, every
    lane's arm in one ``act()`` call and every lane's observed cost c_t(a_t) in one ``update``
    call — nothing else of c_t. Each step's arms are checked (an integer array of shape
    (lanes,), every arm in [0, n)) before any cost is looked up."""

    def __init__(self, lanes: Any, n: int) -> None:
        self.lanes, self.n = lanes, n
        self.name = type(lanes).__name__

    def play(self, costs: np.ndarray, t0: int) -> tuple[np.ndarray, np.ndarray]:
        """The arms played on ``costs`` (lanes, L, n), steps t0+1..t0+L, and the cost each lane
        paid (the one it observed), both (lanes, L). ``costs`` may be the first L rows of a
        larger (lanes, R, n) buffer: its costs are read in place."""
        lanes, rows, n = costs.shape
        # lane i's cost of arm a at row t is at i·s_lane + t·s_row + a in the underlying memory
        if costs.strides[1:] == (n * 8, 8) and costs.dtype == np.float64 and costs.strides[0] % 8 == 0:
            stride = costs.strides[0] // 8
            flat = np.lib.stride_tricks.as_strided(costs, shape=((lanes - 1) * stride + rows * n,), strides=(8,))
        else:
            stride = rows * n
            flat = np.ascontiguousarray(costs, dtype=np.float64).reshape(-1)
        base = np.arange(lanes, dtype=np.int64) * stride + np.arange(0, rows * n, n, dtype=np.int64)[:, None]
        arms_out = np.empty((rows, lanes), dtype=np.int64)
        paid = np.empty((rows, lanes))
        act, update = self.lanes.act, self.lanes.update
        for t in range(rows):
            arms = act()
            if not (type(arms) is np.ndarray and arms.shape == (lanes,) and arms.dtype == np.int64
                    and arms.view(np.uint64).max() < n):  # a negative arm is a huge unsigned one
                arms = self._checked(arms, lanes, t0 + t + 1)
            arms_out[t] = arms
            seen = flat.take(base[t] + arms)
            paid[t] = seen  # kept before the learner sees it: it may write into what it is given
            update(arms, seen)
        return arms_out.T.copy(), paid.T.copy()

    def play_law(self, kind: str, loc: np.ndarray, scale: float, variates: np.ndarray,
                 t0: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`play` where only the played arm's cost is drawn (replify.engine.played): step t's
        cost for lane i's arm a is ``scale·[U < loc[t, a]]`` (``"bernoulli"``) or ``loc[t, a] +
        scale·Z`` (``"normal"``), from the lane's variate of the step (``variates``: (lanes, L))."""
        lanes, rows = variates.shape
        n = self.n
        arms_out = np.empty((rows, lanes), dtype=np.int64)
        paid = np.empty((rows, lanes))
        act, update = self.lanes.act, self.lanes.update
        flat_loc = loc.reshape(-1)
        step = n if loc.shape[0] > 1 else 0  # one row: the same law at every step of the chunk
        u = np.ascontiguousarray(variates.T)  # (L, lanes): a step's variates in one row
        bernoulli = kind == "bernoulli"
        for t in range(rows):
            arms = act()
            if not (type(arms) is np.ndarray and arms.shape == (lanes,) and arms.dtype == np.int64
                    and arms.view(np.uint64).max() < n):
                arms = self._checked(arms, lanes, t0 + t + 1)
            arms_out[t] = arms
            p = flat_loc.take(arms + t * step) if step else flat_loc.take(arms)
            seen = paid[t]
            if bernoulli:
                np.less(u[t], p, out=seen, casting="unsafe")  # 0.0 / 1.0
                if scale != 1.0:
                    seen *= scale
            else:
                np.multiply(u[t], scale, out=seen)
                seen += p
            update(arms, seen.copy())  # kept before the learner sees it: it may write into what it is given
        return arms_out.T.copy(), paid.T.copy()

    def _checked(self, arms: Any, lanes: int, step: int) -> np.ndarray:
        a = np.asarray(arms)
        if a.shape != (lanes,) or a.dtype.kind not in "iu":
            raise ActionError(f"{self.name}.act() at step {step} must return an integer array of shape ({lanes},), "
                              f"one arm per lane; got {type(arms).__name__} of shape {a.shape}, dtype {a.dtype}")
        bad = (a < 0) | (a >= self.n)
        if bad.any():
            i = int(np.argmax(bad))
            raise ActionError(f"{self.name}.act() at step {step} gave lane {i} arm {int(a[i])}, outside [0, {self.n})")
        return a.astype(np.int64)
