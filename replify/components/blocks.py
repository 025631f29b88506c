"""Learners that play one action per block and decide at block boundaries from cumulative
costs alone (docs/evaluation.md, the engine's fast paths): the general framework (§5), FLLB and FTPLB
(§3), FTPLB* (§4), and — with B = 1 — the FTPL and FLL baselines.

:class:`BlockLearner` implements the protocol once: ``update`` adds the cost into the running
total and, after a step s with s % B == 0 and s < T, asks the algorithm for the next action;
``run`` does the same for a whole sequence with numpy, handing the algorithm the cumulative
costs at every boundary of a chunk in one call and filling the actions with ``np.repeat``.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import CostDomain, check_action, check_int, check_next_step, check_remaining
from replify.guarantees.certificates import UnionBound
from replify.components.describe import Described

#: Rows of costs handled at once by :meth:`BlockLearner.run`; bounds its working memory.
CHUNK_ROWS = 1 << 16


@attrs.frozen(kw_only=True)
class BlockParams:
    """The parameters in force for a block learner, the theorem they come from, and what it
    guarantees for them: ``replicability_bound`` is the proof's union bound (``None`` when the
    paper proves no replicability; ``union_bound`` its per-transition form, see
    :mod:`replify.guarantees.certificates`) and ``regret_bound`` the bound on expected regret; ``certified``
    says whether that bound is at most the ρ that was passed (``None`` without a claim)."""

    algorithm: str
    theorem: str
    horizon: int
    n: int
    rho: float | None
    block_size: int
    eps: float
    block_size_theorem: float | None
    overrides: tuple[str, ...]
    n_blocks: int
    replicability_bound: float | None
    regret_bound: float | None
    regret_bound_formula: str
    union_bound: UnionBound | None = None
    certified: bool | None = None  # the bound certifies rho (None: no replicability claim)
    calibration: str | None = None  # set by replify.calibrate: what the parameters were calibrated on

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False) | {
            "overrides": list(self.overrides),
            "union_bound": None if self.union_bound is None else self.union_bound.to_dict(),
        }


@attrs.frozen(kw_only=True)
class OLOParams(BlockParams):
    """:class:`BlockParams` of an online linear optimisation learner, with the ℓ1 diameter D
    of its action set (its regret bounds scale with D)."""

    diameter: float


def batch_argmin(action_set: Any, g: np.ndarray) -> np.ndarray:
    """``action_set.argmin`` over a ``(lanes, k, n)`` stack: ``(lanes, k)`` or ``(lanes, k, n)``."""
    lanes, k, n = g.shape
    out = action_set.argmin(g.reshape(lanes * k, n))
    return out.reshape((lanes, k) + out.shape[1:])


def n_blocks(horizon: int, block_size: int) -> int:
    return -(-horizon // block_size)


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def _sum_rows(rows: np.ndarray, any_order: bool) -> np.ndarray:
    """Sum over the time axis, the second to last: sequentially with ``np.add.reduce`` (along
    a non-innermost axis it adds in order, unlike ``reduceat``), or — when every value is an
    integer, so that any order gives the same exact sum — with a BLAS product, several times
    faster."""
    if any_order:
        return np.matmul(np.ones(rows.shape[-2]), rows)
    return np.add.reduce(rows, axis=-2)


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def reduce_from(rows: np.ndarray, start: np.ndarray, any_order: bool = False) -> np.ndarray:
    """``start + r_1 + r_2 + …`` over axis 1 of ``rows`` (lanes, r, n), added in order: the
    start is folded into the first row, summed with ``np.add.reduce`` (sequential along a
    non-innermost axis, unlike ``reduceat`` and innermost-axis sums), and the row restored.
    With ``any_order`` (integer values: every order gives the same exact sum) it is simply
    ``start + Σ rows``."""
    if rows.shape[1] == 0:
        return start.copy()
    if any_order:
        return start + _sum_rows(rows, True)
    first = rows[:, 0].copy()
    rows[:, 0] += start
    out = np.add.reduce(rows, axis=1)
    rows[:, 0] = first
    return out


def fold_blocks(
    costs: np.ndarray, cum: np.ndarray, acc: np.ndarray, cuts: np.ndarray, block: int, any_order: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The block bookkeeping shared by :class:`BlockLearner` and the evaluation engine.

    ``costs`` (lanes, L, n) are one chunk's rows; ``cum`` (lanes, n) is the total at the last
    block end and ``acc`` the running sum of the block still open; ``cuts`` are the increasing
    row counts (in 1..L) at which blocks end in this chunk. Returns each ended block's sum
    ``(lanes, k, n)`` (added step by step from zero, the open block's rows included), the totals
    after each ``(lanes, k, n)``, and the running sum of the block left open. Reads the costs
    once (the rows are restored bit for bit); no per-step array is made. ``any_order`` may be
    set when every cost is an integer (the sums are then exact whatever the order).
    """
    lanes, length, n = costs.shape
    k = cuts.size
    if k == 0:
        return np.empty((lanes, 0, n)), np.empty((lanes, 0, n)), reduce_from(costs, acc, any_order)
    sums = np.empty((lanes, k, n))
    sums[:, 0] = reduce_from(costs[:, : cuts[0]], acc, any_order)
    # Blocks 1..k-1 have length B, except a last one cut short by the horizon.
    regular = k - 1 if k == 1 or cuts[-1] - cuts[-2] == block else k - 2
    if regular >= 1:
        rows = costs[:, cuts[0] : cuts[regular]].reshape(lanes, regular, block, n)
        sums[:, 1 : regular + 1] = _sum_rows(rows, any_order)
    if regular == k - 2:
        sums[:, k - 1] = _sum_rows(costs[:, cuts[-2] : cuts[-1]], any_order)
    totals = np.cumsum(np.concatenate([cum[:, None], sums], axis=1), axis=1)[:, 1:]
    return sums, totals, reduce_from(costs[:, cuts[-1] :], np.zeros_like(acc), any_order)


def block_ends(t0: int, t1: int, block: int, horizon: int) -> np.ndarray:
    """The steps s in (t0, t1] at which a block ends: multiples of B, and the horizon."""
    ends = np.arange((t0 // block + 1) * block, t1 + 1, block)
    if t1 == horizon and (ends.size == 0 or ends[-1] != horizon):
        ends = np.append(ends, horizon)
    return ends


class BlockLearner(Described):
    """Base class of learners whose action is constant on blocks of ``block_size`` steps and
    is decided at the boundaries from the cumulative costs c_{1:s} (and the learner's own
    randomness). Subclasses set ``self._action`` (the first block's action) and implement
    :meth:`_decide`.

    The cumulative cost is kept as the total at the last block end plus the running sum of the
    block in progress (added step by step from zero, folded in when the block ends): the batch
    ``run`` and the evaluation engine then need one read-only pass over the costs, and produce
    the same floats as ``update``.
    """

    #: ``"experts"`` (actions are indices) or ``"olo"`` (actions are vectors).
    problem: str = "experts"
    #: properties beyond the protocol that :mod:`replify.testing` checks: an update past the
    #: horizon and a cost outside ``domain`` are refused
    enforces = frozenset({"horizon", "domain"})

    def __init__(self, *, n: int, horizon: int, block_size: int, domain: CostDomain) -> None:
        self.n = check_int("n", n, minimum=1)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.block_size = check_int("block_size", block_size, minimum=1)
        self.domain = domain
        self._t = 0
        self._cum = np.zeros(self.n)  # c_{1:s} at the last block end s
        self._acc = np.zeros(self.n)  # the costs of the block in progress
        self._action: Any = None

    @property
    def t(self) -> int:
        """Steps played so far."""
        return self._t

    def _decide(self, cums: np.ndarray, steps: np.ndarray) -> Any:
        """The actions of the blocks that start after steps ``steps`` (1-based, increasing),
        given ``cums[k] = c_{1:steps[k]}``: an array of k indices (experts) or ``(k, n)``."""
        raise NotImplementedError

    @property
    def action_source(self) -> str:
        """Who decided the actions, for error messages."""
        return type(self).__name__

    def _check(self, action: Any, step: int) -> Any:
        return check_action(action, n=self.n, problem=self.problem, step=step, source=self.action_source)

    @classmethod
    def decide_batch(cls, learners: list, cums: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """:meth:`_decide` for many learners of this class at once (the evaluation engine's
        lanes): ``cums`` is ``(lanes, k, n)``; returns ``(lanes, k)`` or ``(lanes, k, n)``.
        Subclasses whose decision is an argmin over cumulative costs plus per-learner noise
        override it with one numpy call; this default asks each learner in turn."""
        return np.stack([np.asarray(lr._decide(cums[i], steps)) for i, lr in enumerate(learners)])

    # -- the learner protocol -------------------------------------------------------------
    def act(self) -> Any:
        """The action for the current step (constant within a block)."""
        return self._action

    def update(self, cost: Any) -> None:
        """Reveal the current step's cost vector; at the end of a block, decide the next."""
        t, horizon = self._t, self.horizon
        if t >= horizon:
            check_next_step(t, horizon)  # raises
        self._acc += self.domain.check(cost, n=self.n, step=t + 1)
        self._t = t = t + 1
        if t % self.block_size == 0 or t == horizon:
            self._cum = self._cum + self._acc
            self._acc = np.zeros(self.n)
            if self._t < self.horizon:
                self._action = self._check(self._decide(self._cum[None, :], np.array([self._t]))[0], self._t + 1)

    def run(self, costs: Any) -> np.ndarray:
        """Play a cost sequence ``(L, n)`` from the current state; return the actions ``(L,)``
        (experts) or ``(L, n)`` (OLO), bit-identical to L calls of act()/update()."""
        c = self.domain.check_matrix(costs, n=self.n, first_step=self._t + 1)
        rows_total = c.shape[0]
        check_remaining(self._t, rows_total, self.horizon)
        parts = []
        for start in range(0, rows_total, CHUNK_ROWS):
            chunk = np.array(c[start : start + CHUNK_ROWS])  # ours: fold_blocks writes (and restores) rows
            t0, rows = self._t, chunk.shape[0]
            ends = block_ends(t0, t0 + rows, self.block_size, self.horizon)
            _, totals, acc = fold_blocks(chunk[None], self._cum[None], self._acc[None], ends - t0, self.block_size)
            live = ends < self.horizon
            values = [np.asarray([self._action])]
            if live.any():
                decided = self._validated(self._decide(totals[0][live], ends[live]), ends[live])
                values.append(decided)
                self._action = int(decided[-1]) if self.problem == "experts" else decided[-1].copy()
            values = np.concatenate(values)
            cuts = np.concatenate([[0], ends - t0, [rows]])
            lengths = np.diff(cuts)
            if values.shape[0] < lengths.size:  # a block ends at the horizon: nothing follows it
                values = np.concatenate([values, values[-1:]])
            parts.append(np.repeat(values, lengths, axis=0))
            if ends.size:
                self._cum = totals[0, -1].copy()
            self._acc = acc[0]
            self._t += rows
        if not parts:
            return np.empty(0, dtype=np.int64) if self.problem == "experts" else np.empty((0, self.n))
        out = np.concatenate(parts)
        return out.astype(np.int64, copy=False) if self.problem == "experts" else out

    def _validated(self, decided: Any, ends: np.ndarray) -> np.ndarray:
        """Check a whole batch of decided actions at once (a Python check per block would undo
        the vectorisation of the baselines, which decide at every step)."""
        arr = np.asarray(decided)
        if self.problem == "experts":
            if arr.shape != ends.shape or arr.dtype.kind not in "iu" or not (arr.min() >= 0 and arr.max() < self.n):
                bad = next(i for i, a in enumerate(decided) if not (isinstance(a, (int, np.integer)) and 0 <= a < self.n))
                self._check(decided[bad], int(ends[bad]) + 1)
            return arr.astype(np.int64, copy=False)
        if arr.shape != (ends.size, self.n) or not np.isfinite(arr).all():
            for a, s in zip(decided, ends):
                self._check(a, int(s) + 1)
        return arr.astype(np.float64, copy=False)


class OLOBlockLearner(BlockLearner):
    """A block learner over an action set (paper §3): costs of ℓ1 norm at most 1, actions from
    ``action_set.argmin``; the experts' simplex makes it play expert indices."""

    def __init__(self, *, action_set: Any, horizon: int, params: BlockParams) -> None:
        super().__init__(
            n=action_set.dim, horizon=horizon, block_size=params.block_size,
            domain=CostDomain(low=-1.0, high=1.0, l1=True),
        )
        self.action_set = action_set
        self.problem = "experts" if action_set.experts else "olo"
        self.params = params

    @property
    def eps(self) -> float:
        return self.params.eps

    def _first(self, g: np.ndarray) -> Any:
        """The action for t = 1, a transition: the leader on the noise alone (c_{1:0} = 0)."""
        first = self.action_set.argmin(g[None, :])[0]
        return int(first) if self.problem == "experts" else first
