"""The paired-run engine behind :func:`replify.evaluate` (paper §2; docs/evaluation.md).

Pair k builds its learner twice from one seed (the two runs share R) and runs the copies on two
independent draws of the adversary's costs. The engine runs many pairs at once as *lanes*
(lanes 2k and 2k+1 are pair k's two runs), streaming over time in chunks so that memory stays
bounded whatever the horizon:

* **per-step path** — each lane's costs are drawn chunk by chunk from its own generator (so a
  pair's results do not depend on which other pairs run with it, or where). For block
  learners of one class, each lane's chunk is drawn into a cache-sized buffer and folded into
  block sums at once (:func:`replify.blocks.fold_blocks`); the cost paid is a block's sum at
  the block's action, the agreement is counted per block, and all lanes decide in one call at
  each block boundary — no per-step array is ever made. Any other learner runs its own
  ``run`` (or ``act``/``update``) lane by lane on a ``(lanes, rows, n)`` chunk.
* **block-sum fast path** — block learners decide only at block boundaries, from cumulative
  costs there, and pay a block's cost sum; when the adversary can draw the sum of a block's
  costs directly (``sample_sums``), the engine draws block sums and never a per-step cost.
  This is exact in law, not an approximation: regret and replicability have the same
  distribution as on the per-step path (the draws differ, so single results differ).
* **segment path** — a learner whose blocks are not a fixed grid, or that must look at single
  steps only sometimes (``iid-experts``: blocks of lengths T^{1−2^{−i}}, and a fallback check
  that can fire only near its threshold), says segment by segment what it needs:
  ``next_segment() -> (steps, summed)``; a summed segment is one exact ``sample_sums`` draw and
  one ``advance(total, steps)``, any other is drawn step by step and played by ``run``. Pairs
  run one after the other, each lane alone, and the two runs are compared over the union of
  their segment boundaries. Exact in law, as the block-sum path; on the same costs it gives the
  per-step path's results exactly (tested).
* **whole-sequence adversaries** — one with only ``sample(rng)`` runs one pair at a time: block
  learners fold each lane's draw slice by slice (whole numbers summed with BLAS, exactly), other
  learners are played lane by lane (the pair-by-pair path); a lane's draw is freed as soon as it
  has been used, so peak memory is two sequences whatever the number of pairs.

Every sum that a result depends on is accumulated sequentially, in time order, so the per-step
path gives the same floats as stepping the learners one step at a time — except that when an
adversary declares ``integer_costs`` (0/1 Bernoulli costs) the sums are taken with BLAS, which
is exact, and so still identical, in any order.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from .bandits import BanditFeed, is_bandit
from .blocks import BlockLearner, block_ends, fold_blocks, reduce_from
from .checks import L1_SLACK, CostDomain, as_float_array, check_action, check_learner
from .errors import ActionError, CostError, InvalidArgumentError, ReplifyWarning
from .mixtures import sample_by_inversion
from .randomness import DATA, INTERNAL, MIXED, child

#: Bytes the engine may spend on one chunk's cost and cumulative-cost arrays. Peak memory is a
#: small multiple of this (plus the learners), whatever the horizon and the number of pairs.
MEMORY_BUDGET = 24 * 2**20

#: Time bins of the agreement curve (the fraction of pairs whose two runs agree, over time).
CURVE_BINS = 100

#: Most segments whose disagreement counts are kept (int32 each: 128 MiB).
MAX_SEGMENTS = 1 << 25

#: Transitions at which the drift between the two draws is recorded (Report.concentration).
DRIFT_SAMPLES = 32

#: Most pairs run together in one group; more pairs run group after group. Small groups keep
#: a chunk's arrays near the cache, and cost only one batched decision call per group.
MAX_GROUP_PAIRS = 32


@attrs.frozen(eq=False)
class Outcomes:
    """Per pair: both runs identical, fraction of agreeing steps, first divergent step (1-based,
    0 if none), and the two runs' regrets; plus the first learner's parameters, if any; the
    per-segment disagreement counts (summed over pairs), and for block learners the drift
    between the pair's two cost draws at sampled transitions. No claims: the report sets these
    beside the bounds."""

    identical: np.ndarray
    agreement: np.ndarray
    first_divergence: np.ndarray
    regret: np.ndarray
    params: dict[str, Any] | None
    fast_path: bool
    agree_steps: np.ndarray  # per time bin: pair-steps on which the two runs agree
    bin_edges: np.ndarray
    action_counts: np.ndarray | None = None  # experts: (pairs, 2, n) steps each run played each expert
    constant_regret: np.ndarray | None = None  # experts: (pairs, 2) mean expert cost - best expert cost
    disagreement: np.ndarray | None = None  # per segment (block, or step): pairs whose runs differ there
    segment: int = 1  # steps per segment: the block size for block learners, else 1
    drift_steps: np.ndarray | None = None  # block learners: sampled transitions t = kB
    drift: np.ndarray | None = None  # (pairs, len(drift_steps), 2): ||c_{1:t} - c'_{1:t}||_1 and its range
    pseudo_regret: np.ndarray | None = None  # (pairs, 2): against the best mean, when the adversary knows its means
    curve_steps: np.ndarray | None = None  # the checkpoints of regret_curve
    regret_curve: np.ndarray | None = None  # (pairs, 2, checkpoints): the regret at each checkpoint

    @classmethod
    def concatenate(cls, parts: Sequence[Outcomes]) -> Outcomes:
        return cls(
            identical=np.concatenate([p.identical for p in parts]),
            agreement=np.concatenate([p.agreement for p in parts]),
            first_divergence=np.concatenate([p.first_divergence for p in parts]),
            regret=np.concatenate([p.regret for p in parts]),
            params=parts[0].params,
            fast_path=parts[0].fast_path,
            agree_steps=np.sum([p.agree_steps for p in parts], axis=0),
            bin_edges=parts[0].bin_edges,
            action_counts=None if parts[0].action_counts is None else np.concatenate([p.action_counts for p in parts]),
            constant_regret=None if parts[0].constant_regret is None else np.concatenate([p.constant_regret for p in parts]),
            disagreement=_sum_counts([p.disagreement for p in parts]),
            segment=parts[0].segment,
            drift_steps=parts[0].drift_steps,
            drift=None if parts[0].drift is None else np.concatenate([p.drift for p in parts]),
            pseudo_regret=None if parts[0].pseudo_regret is None else np.concatenate([p.pseudo_regret for p in parts]),
            curve_steps=parts[0].curve_steps,
            regret_curve=None if parts[0].regret_curve is None else np.concatenate([p.regret_curve for p in parts]),
        )

    @property
    def agreement_curve(self) -> np.ndarray:
        """Per time bin, the fraction of (pair, step) with both runs playing the same action."""
        return self.agree_steps / (np.diff(self.bin_edges) * self.identical.size)


def _sum_counts(counts: list) -> np.ndarray | None:
    present = [c for c in counts if c is not None]
    if not present:
        return None
    total = present[0].copy()
    for c in present[1:]:
        total += c
    return total


def step_costs(actions: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """cost(a_t, c_t) for every step (and lane): c_t(a_t) for expert indices, a_t·c_t for
    action vectors. One implementation, used by the engine and by the reference in the tests."""
    if actions.ndim == costs.ndim - 1:
        return np.take_along_axis(costs, actions[..., None], axis=-1)[..., 0]
    return (actions * costs).sum(axis=-1)


def accumulate(start: np.ndarray, increments: np.ndarray) -> np.ndarray:
    """``start + Σ increments`` along the last axis, added one step at a time (np.cumsum is
    sequential), so a total does not depend on how time was cut into chunks."""
    stacked = np.concatenate([start[..., None], increments], axis=-1)
    return np.cumsum(stacked, axis=-1)[..., -1]


def _block_class(learners: list) -> type | None:
    """The class of the learners when all are block learners of one class, block size and
    action set, so that one call can decide for all; else None."""
    first = learners[0]
    cls = type(first)
    if not isinstance(first, BlockLearner):
        return None
    same = all(
        type(lr) is cls and lr.block_size == first.block_size and lr.t == 0
        and getattr(lr, "action_set", None) == getattr(first, "action_set", None)
        for lr in learners
    )
    return cls if same else None


class _Lanes:
    """The running state of one group of lanes."""

    def __init__(
        self, learners: list, rngs: list, seq: Any, *, n: int, horizon: int, action_set: Any, block: int | None,
        domain: CostDomain | None = None, samplers: list | None = None,
    ) -> None:
        self.learners, self.rngs, self.seq = learners, rngs, seq
        self.samplers = samplers or []  # per lane: the pair's stream for sampling mixed strategies
        self.domain = domain if isinstance(domain, CostDomain) else None
        self.n, self.horizon = n, horizon
        self.problem = getattr(learners[0], "problem", "experts")
        self.action_set = getattr(learners[0], "action_set", None) or action_set
        lanes = len(learners)
        pairs = lanes // 2
        self.cum = np.zeros((lanes, n))
        self.acc = np.zeros((lanes, n))  # block learners: the costs of the block in progress
        self.paid = np.zeros(lanes)
        self.agree = np.zeros(pairs)
        self.first = np.zeros(pairs, dtype=np.int64)
        self.counts = np.zeros((lanes, n)) if self.problem == "experts" else None
        # An adversary that knows its means (expected_sums): each lane's expected cost of the
        # actions it played, for the pseudo-regret against the best mean.
        expected = getattr(seq, "expected_sums", None)
        self.expected_sums = expected if callable(expected) and self.problem == "experts" else None
        self.expected_paid = np.zeros(lanes)
        self.edges = np.unique(np.linspace(0, horizon, CURVE_BINS + 1).round().astype(np.int64))
        self.curve = np.zeros(self.edges.size - 1)
        self._full: list[np.ndarray | None] = [None] * lanes
        self.feeds: list[BanditFeed | None] = [None] * lanes  # bandit learners: what each run may see
        self.act: np.ndarray | None = None  # block learners: the action of the open block
        # Disagreement per segment: per block for block learners (actions are constant on blocks),
        # per step otherwise; summed over groups of pairs, it gives the step-disagreement curve.
        self.segment = block or 1
        segments = -(-horizon // self.segment)
        # Beyond MAX_SEGMENTS (learners without blocks at T > 3.3e7) the counts are not kept:
        # memory stays bounded, and the report says None rather than something approximate.
        self.disagree = np.zeros(segments, dtype=np.int32) if segments <= MAX_SEGMENTS else None
        self.disagree_steps: np.ndarray | None = None  # the segment path's running differences
        # Regret over time: each lane's paid cost and cumulative costs at checkpoints — the ends of
        # the time bins, or for block learners the first block end at or after each (their
        # actions and sums are known only there).
        ends = self.edges[1:]
        if block is not None:
            ends = np.unique(np.minimum(-(-ends // block) * block, horizon))
        self.checkpoints = ends.astype(np.int64)
        self.curve_paid = np.full((lanes, self.checkpoints.size), np.nan)
        self.curve_best = np.full((lanes, self.checkpoints.size), np.nan)
        # The drift between the two draws at up to DRIFT_SAMPLES transitions (block learners).
        self.drift_steps = self.drift = None
        if block is not None and -(-horizon // block) > 1:
            k = np.unique(np.linspace(1, -(-horizon // block) - 1, DRIFT_SAMPLES).round().astype(np.int64))
            self.drift_steps = k * block
            self.drift = np.full((pairs, k.size, 2), np.nan)

    def start_blocks(self) -> None:
        """The first block's actions. Only for block learners, whose act() is idempotent: a
        learner that draws in act() must see exactly one act() per step."""
        acts = [check_action(lr.act(), n=self.n, problem=self.problem, step=1, source="learner.act()") for lr in self.learners]
        self.act = np.asarray(acts, dtype=np.int64 if self.problem == "experts" else np.float64)

    # -- drawing ----------------------------------------------------------------------------
    def draw_rows(self, t0: int, t1: int) -> np.ndarray:
        """Every lane's costs for steps t0+1..t1, from its own generator."""
        costs = np.empty((len(self.learners), t1 - t0, self.n))
        for i in range(len(self.rngs)):  # one numpy draw per lane and chunk
            self.draw_lane(i, t0, t1, costs[i])
        return costs

    def draw_lane(self, i: int, t0: int, t1: int, out: np.ndarray) -> None:
        """Lane ``i``'s costs for steps t0+1..t1, into ``out``, from the lane's own generator."""
        rng = self.rngs[i]
        sample_chunk = getattr(self.seq, "sample_chunk", None)
        if callable(sample_chunk):
            try:
                sample_chunk(rng, t0, t1, out=out)
            except TypeError:  # an adversary whose sample_chunk has no out=
                got = as_float_array(f"the adversary's sample_chunk(rng, {t0}, {t1})", sample_chunk(rng, t0, t1))
                if got.shape != out.shape:
                    raise CostError(
                        f"the adversary's sample_chunk(rng, {t0}, {t1}) must return costs of shape {out.shape}; "
                        f"got shape {got.shape}"
                    ) from None
                out[...] = got
            self.check_rows(out, t0)
            return
        # An adversary that can only draw whole sequences: draw once per lane, then slice.
        out[...] = self.full_rows(i)[t0:t1]

    def full_rows(self, i: int, check: bool = True) -> np.ndarray:
        """Lane ``i``'s whole draw from an adversary that only has ``sample(rng)``: drawn once,
        its shape checked, and its domain too unless ``check=False`` (the caller checks it slice
        by slice); kept until the lane's group ends (one pair)."""
        if self._full[i] is None:
            full = as_float_array("the adversary's sample(rng)", self.seq.sample(self.rngs[i]))
            if full.shape != (self.horizon, self.n):
                raise CostError(f"the adversary must sample costs of shape ({self.horizon}, {self.n}); got shape {full.shape}")
            if full.dtype != np.float64 or not full.flags.writeable:
                full = np.array(full, dtype=np.float64)  # ours to fold (fold_blocks restores what it touches)
            if check:
                self.check_rows(full, 0)
            self._full[i] = full
        return self._full[i]

    def check_rows(self, rows: np.ndarray, t0: int, extrema: tuple[float, float] | None = None) -> None:
        """Refuse costs outside the learner's declared domain: two extrema (and the rows' ℓ1
        norms for an ℓ1 domain) over a chunk that is still in cache; the step is found only on
        failure. ``rows`` is (L, n) or (lanes, L, n), its first row step t0 + 1."""
        d = self.domain
        if d is None or rows.size == 0:
            return
        low, high = (rows.min(), rows.max()) if extrema is None else extrema
        ok = low >= d.low and high <= d.high  # NaN fails both comparisons
        if ok and d.l1:
            ok = np.abs(rows).sum(axis=-1).max() <= 1.0 + L1_SLACK
        if not ok:  # find the lane and step with CostDomain's own check, which names them
            for lane in rows.reshape(-1, rows.shape[-2], rows.shape[-1]):
                d.check_matrix(lane, n=lane.shape[-1], name="costs drawn by the adversary", first_step=t0 + 1)

    def check_sums(self, sums: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> None:
        """On the block-sum path: every block sum must be one that costs in the domain can add
        up to (L·low ≤ sum ≤ L·high per coordinate, ‖sum‖₁ ≤ L for an ℓ1 domain)."""
        d = self.domain
        if d is None or sums.size == 0:
            return
        length = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[None, :, None]
        slack = 1e-9 * np.maximum(length, 1.0)
        ok = np.isfinite(sums) & (sums >= d.low * length - slack) & (sums <= d.high * length + slack)
        ok = ok.all(axis=-1)
        if d.l1:
            ok &= np.abs(sums).sum(axis=-1) <= length[..., 0] * (1.0 + L1_SLACK) + slack[..., 0]
        if not ok.all():
            lane, k = np.argwhere(~ok)[0]
            raise CostError(
                f"the adversary's cost sum over steps {int(starts[k]) + 1}..{int(stops[k])} is {sums[lane, k].tolist()}, "
                f"which no costs with {d.describe()} can add up to"
            )

    def set_cum(self, cum: np.ndarray, t1: int) -> None:
        # NaN and ±inf propagate through sums, so a finite running total means finite costs.
        if not np.isfinite(cum).all():
            raise CostError(f"the adversary drew non-finite costs by step {t1}")
        self.cum = cum

    # -- accounting -------------------------------------------------------------------------
    def account(self, actions: np.ndarray, paid: np.ndarray, lengths: np.ndarray, starts: np.ndarray) -> None:
        """Add one chunk of steps: ``actions`` and the ``paid`` cost per lane and step."""
        self.paid = accumulate(self.paid, paid)
        self.account_segments(actions, lengths, starts)

    def account_expected(self, actions: np.ndarray, starts: np.ndarray, stops: np.ndarray, lanes: Any = slice(None)) -> None:
        """Add Σ over segments of E[c over the segment][action played] to ``lanes``' expected
        paid cost (the pseudo-regret's), one segment at a time in time order (:func:`accumulate`):
        a lane's total is then the same floats however the pairs were grouped into lanes or time
        into chunks, as long as the segments are — steps, whole blocks, or one pair's own runs."""
        if self.expected_sums is None or starts.size == 0:
            return
        mean = as_float_array("the adversary's expected_sums(starts, stops)", self.expected_sums(starts, stops))
        if mean.shape != (starts.size, self.n):
            raise CostError(
                f"the adversary's expected_sums(starts, stops) must return one row of {self.n} expected cost sums per "
                f"segment, shape ({starts.size}, {self.n}); got shape {mean.shape}"
            )
        per_segment = np.take_along_axis(mean[None], actions[..., None], axis=-1)[..., 0]
        self.expected_paid[lanes] = accumulate(self.expected_paid[lanes], per_segment)

    def account_segments(
        self, actions: np.ndarray, lengths: np.ndarray, starts: np.ndarray, pair: int | None = None,
        expected: bool = True,
    ) -> None:
        """Agreement of the two runs of every pair over segments (steps or blocks) of the given
        ``lengths`` starting at steps ``starts`` (0-based), with ``actions`` per lane and segment.
        With ``pair``, ``actions`` holds that pair's two lanes only, over segments of any lengths
        (the segment path: its disagreement is spread over every step of a segment).
        ``expected=False``: the caller accounts the expected costs itself (the block path does,
        by whole blocks, since its segments here are pieces cut by chunks)."""
        lanes = actions.shape[0]
        sel = slice(None) if pair is None else slice(pair, pair + 1)
        lane_sel = slice(None) if pair is None else slice(2 * pair, 2 * pair + 2)
        if self.counts is not None:  # steps each lane spent on each expert (for the majority decoder)
            flat = (np.arange(lanes)[:, None] * self.n + actions).ravel()
            weights = np.broadcast_to(lengths, actions.shape).ravel()
            self.counts[lane_sel] += np.bincount(flat, weights=weights, minlength=lanes * self.n).reshape(lanes, self.n)
        if expected:
            live = lengths > 0
            self.account_expected(actions[:, live], starts[live], (starts + lengths)[live], lanes=lane_sel)
        a, b = actions[0::2], actions[1::2]
        same = a == b if self.problem == "experts" else (a == b).all(axis=-1)
        self.agree[sel] += (same * lengths).sum(axis=1)
        # Spread each segment's agreeing pairs over the time bins it overlaps: F(e), the agreeing
        # pair-steps before step e, at every bin edge (segments are contiguous and in time order;
        # O(segments + bins), whatever the number of segments).
        stops = starts + lengths
        weight = same.sum(axis=0).astype(np.float64)
        before = np.concatenate([[0.0], np.cumsum(weight * lengths)])
        j = np.searchsorted(stops, self.edges, side="right")
        inside = j < stops.size
        jj = np.minimum(j, stops.size - 1)
        part = np.where(inside, weight[jj] * np.clip(self.edges - starts[jj], 0, lengths[jj]), 0.0)
        self.curve += np.diff(before[j] + part)
        first = self.first[sel]  # a view: assigning into it sets self.first
        new = (first == 0) & ~same.all(axis=1)
        first[new] = starts[np.argmin(same[new], axis=1)] + 1
        if pair is not None:
            if self.disagree is not None:  # +1 on every step of each differing segment
                differ = ~same[0]
                np.add.at(self.disagree_steps, starts[differ], 1)
                np.add.at(self.disagree_steps, (starts + lengths)[differ], -1)
            return
        # Pieces of one block (cut by chunks) carry the same count: assign, don't add.
        if self.disagree is not None:
            live = lengths > 0  # the block path closes a chunk with an empty segment at its end
            self.disagree[starts[live] // self.segment] = (~same[:, live]).sum(axis=0)

    def record_drift(self, ends: np.ndarray, totals: np.ndarray) -> None:
        """‖c_{1:t} − c'_{1:t}‖₁ and max − min of c_{1:t} − c'_{1:t} for every pair at the sampled
        transitions among ``ends`` (totals: (lanes, k, n) at those ends)."""
        if self.drift_steps is None:
            return
        hit = np.isin(ends, self.drift_steps)
        if not hit.any():
            return
        cols = np.searchsorted(self.drift_steps, ends[hit])
        delta = totals[0::2][:, hit] - totals[1::2][:, hit]
        self.drift[:, cols, 0] = np.abs(delta).sum(axis=-1)
        self.drift[:, cols, 1] = delta.max(axis=-1) - delta.min(axis=-1)

    def checkpoint(self, step: int, lanes: Any = slice(None), paid: Any = None, cum: Any = None) -> None:
        """Record the regret at ``step`` if it is a checkpoint: paid and best cumulative cost (of
        ``lanes``; by default the state's own)."""
        k = int(np.searchsorted(self.checkpoints, step))
        if k >= self.checkpoints.size or self.checkpoints[k] != step:
            return
        paid = self.paid[lanes] if paid is None else paid
        cum = self.cum[lanes] if cum is None else cum
        self.curve_paid[lanes, k] = paid
        self.curve_best[lanes, k] = self._best(cum)

    def checkpoints_at(self, steps: np.ndarray, lane: int, paid: np.ndarray, cum: np.ndarray) -> None:
        """:meth:`checkpoint` for one lane at many steps at once: ``paid`` (k,), ``cum`` (k, n)."""
        k = np.searchsorted(self.checkpoints, steps)
        hit = k < self.checkpoints.size
        hit[hit] = self.checkpoints[k[hit]] == steps[hit]
        if hit.any():
            self.curve_paid[lane, k[hit]] = paid[hit]
            self.curve_best[lane, k[hit]] = self._best(cum[hit])

    def checkpoints_inside(
        self, t0: int, t1: int, paid_before: np.ndarray, paid: np.ndarray, cum_before: np.ndarray, costs: np.ndarray,
        lanes: Any = slice(None),
    ) -> None:
        """Record the checkpoints in (t0, t1] of a per-step chunk: ``paid`` (lanes, L) and
        ``costs`` (lanes, L, n) added in time order to the totals before the chunk — the very
        additions :func:`accumulate` makes, so the values are those stepping would give."""
        inside = self.checkpoints[(self.checkpoints > t0) & (self.checkpoints <= t1)]
        if inside.size == 0:
            return
        j = inside - t0  # steps of the chunk played at each checkpoint
        run_paid = np.cumsum(np.concatenate([paid_before[..., None], paid], axis=-1), axis=-1)[..., j]
        # the totals at the checkpoints, segment by segment in time order (a loop over the few
        # checkpoints, not the steps): the very additions stepping makes
        totals, total, prev = [], cum_before, 0
        for m in j:
            total = reduce_from(costs[:, prev:m], total)
            totals.append(total)
            prev = m
        run_cum = np.stack(totals, axis=1)
        k = np.searchsorted(self.checkpoints, inside)
        self.curve_paid[lanes, k] = run_paid
        self.curve_best[lanes, k] = self._best(run_cum)

    def _best(self, cum: np.ndarray) -> np.ndarray:
        if self.problem == "experts":
            return cum.min(axis=-1)
        if self.action_set is None:
            return np.full(cum.shape[:-1], np.nan)  # reported as missing: regret needs the action set
        flat = np.asarray(cum).reshape(-1, cum.shape[-1])
        return np.array([self.action_set.min_cost(c) for c in flat]).reshape(cum.shape[:-1])

    def regret_curve(self) -> np.ndarray:
        """(lanes, checkpoints): the regret at each checkpoint."""
        return self.curve_paid - self.curve_best

    def regrets(self) -> np.ndarray:
        if self.problem == "experts":
            best = self.cum.min(axis=1)
        elif self.action_set is None:
            raise InvalidArgumentError(
                "the regret of vector (OLO) actions needs the action set: pass actions= to evaluate(), "
                "or give the learner an action_set attribute"
            )
        else:
            best = np.array([self.action_set.min_cost(c) for c in self.cum])
        return self.paid - best

    def pseudo_regrets(self) -> np.ndarray | None:
        """Experts, on an adversary that knows its means: Σ_t μ_t(a_t) − min_a Σ_t μ_t(a)."""
        if self.expected_sums is None:
            return None
        best = float(np.min(self.expected_sums(np.array([0]), np.array([self.horizon]))[0]))
        return self.expected_paid - best

    def constant_regrets(self) -> np.ndarray | None:
        """Experts: the expected regret of ``constant`` (an expert drawn uniformly, never changed)
        on these very draws — the average expert's total cost minus the best one's."""
        if self.problem != "experts":
            return None
        return self.cum.mean(axis=1) - self.cum.min(axis=1)


def _check_decided(decided: np.ndarray, n: int, problem: str, source: str = "learners") -> np.ndarray:
    if problem == "experts":
        if decided.size and decided.dtype.kind not in "iu":
            raise ActionError(
                f"{source} returned actions of dtype {decided.dtype} (e.g. {decided.ravel()[:3].tolist()}); "
                f"expected integer expert indices in [0, {n})"
            )
        if decided.size and (decided.dtype.kind not in "iu" or decided.min() < 0 or decided.max() >= n):
            raise ActionError(f"learners decided actions outside [0, {n}): {np.unique(decided)[:10].tolist()}")
        return decided.astype(np.int64, copy=False)
    if not np.isfinite(decided).all():
        raise ActionError("learners decided non-finite action vectors")
    return decided


#: Bytes of one lane's chunk on the block path: small enough to stay in cache between the draw
#: and the one pass that folds it into block sums.
LANE_CHUNK_BYTES = 256 * 2**10


def _per_step(state: _Lanes, block_cls: type | None, budget: int) -> None:
    lanes, n, horizon = len(state.learners), state.n, state.horizon
    if block_cls is not None:
        # Lane by lane through a cache-sized buffer: draw, fold into block sums, move on. Only
        # the per-block sums of all lanes are kept, for one batched decision per chunk.
        b = state.learners[0].block_size
        # An adversary whose costs are all integers lets the sums be taken in any order (exact).
        any_order = bool(getattr(state.seq, "integer_costs", False))
        rows = max(1, min(budget // (n * 8), LANE_CHUNK_BYTES // (n * 8)))
        if not callable(getattr(state.seq, "sample_chunk", None)):
            _whole_blocks(state, block_cls, max(1, min(budget, WHOLE_SLICE_BYTES) // (n * 8)), any_order)
            return
        buf = np.empty((rows, n))
        for t0 in range(0, horizon, rows):
            t1 = min(horizon, t0 + rows)
            chunk = buf[: t1 - t0]
            ends = block_ends(t0, t1, b, horizon)
            sums, totals = np.empty((lanes, ends.size, n)), np.empty((lanes, ends.size, n))
            for i in range(lanes):
                state.draw_lane(i, t0, t1, chunk)
                s_i, tot_i, acc_i = fold_blocks(
                    chunk[None], state.cum[i : i + 1], state.acc[i : i + 1], ends - t0, b, any_order
                )
                sums[i], totals[i], state.acc[i] = s_i[0], tot_i[0], acc_i[0]
            _blocks(state, block_cls, ends, sums, totals, t0, t1)
        return
    rows = max(1, budget // (lanes * n * 8))
    for t0 in range(0, horizon, rows):
        t1 = min(horizon, t0 + rows)
        costs = state.draw_rows(t0, t1)
        played = [_play(state, i, costs[i], t0) for i in range(lanes)]  # each learner gets its own copy
        actions, paid = np.stack([a for a, _ in played]), np.stack([p for _, p in played])
        state.checkpoints_inside(t0, t1, state.paid, paid, state.cum, costs)
        state.set_cum(reduce_from(costs, state.cum), t1)  # in time order, as stepping adds
        state.account(actions, paid, np.ones(t1 - t0), np.arange(t0, t1))


def _whole_numbers(
    rows: np.ndarray, scratch: np.ndarray, same: np.ndarray, low: float, high: float, limit: float
) -> bool:
    """Every entry an integer, and (``low``, ``high`` being the extrema) of magnitude below
    ``limit`` (2^53 / T: then every sum of up to T of them is an exact integer, in any order)."""
    if not (-limit < low and high < limit):  # NaN fails too
        return False
    np.rint(rows, out=scratch)
    return bool(np.equal(scratch, rows, out=same).all())


def _whole_blocks(state: _Lanes, block_cls: type, rows: int, any_order: bool) -> None:
    """Block learners on an adversary that draws whole sequences (one lane at a time): each
    lane's draw is checked and folded slice by cache-sized slice (a view: no copy; the data are
    read from memory once for both), its block sums kept, the draw freed before the next lane
    draws, and all blocks decided in one call."""
    lanes, n, horizon, b = len(state.learners), state.n, state.horizon, state.learners[0].block_size
    ends = block_ends(0, horizon, b, horizon)
    sums, totals = np.empty((lanes, ends.size, n)), np.empty((lanes, ends.size, n))
    scratch = np.empty((min(rows, horizon), n))
    same = np.empty((min(rows, horizon), n), dtype=bool)
    # Whole numbers of magnitude below 2^53 / T: every partial sum of a lane is an exact integer,
    # whatever the order of the additions.
    limit = 2.0**53 / horizon
    # A box domain [0, high] is checked in one pass over the bit patterns instead of two (min and
    # max): non-negative doubles are ordered as their patterns are, and a negative one (sign bit
    # set), a NaN or one above high has a larger pattern than high's. Whatever fails it (-0.0
    # included) is judged by the extrema, as before.
    d = state.domain
    top = None
    if d is not None and d.low == 0.0 and not d.l1 and 0.0 <= d.high < limit:
        top = np.float64(d.high).view(np.uint64)
    for i in range(lanes):
        full = state.full_rows(i, check=False)
        done = 0  # blocks ended so far in this lane
        for t0 in range(0, horizon, rows):
            t1 = min(horizon, t0 + rows)
            chunk = full[t0:t1]
            if top is not None and chunk.view(np.uint64).max() <= top:
                low, high = 0.0, d.high  # bounds rather than extrema: enough for the whole-number test
            else:
                low, high = float(chunk.min()), float(chunk.max())
                state.check_rows(chunk, t0, extrema=(low, high))
            # A slice of whole numbers (0/1 costs, say) sums exactly in any order: BLAS then gives
            # the sequential sums bit for bit, several times faster — the check costs two passes
            # in cache.
            exact = any_order or _whole_numbers(chunk, scratch[: t1 - t0], same[: t1 - t0], low, high, limit)
            cut = block_ends(t0, t1, b, horizon)
            s_i, tot_i, acc_i = fold_blocks(chunk[None], state.cum[i : i + 1], state.acc[i : i + 1], cut - t0, b, exact)
            sums[i, done : done + cut.size], totals[i, done : done + cut.size] = s_i[0], tot_i[0]
            state.acc[i] = acc_i[0]
            if cut.size:
                state.cum[i] = tot_i[0, -1]
            done += cut.size
        state.cum[i] = 0.0  # _blocks takes the totals from here on
        # This lane's costs are folded: free them (every reference) before the next lane draws, so
        # the allocator hands the same pages back instead of faulting in fresh ones.
        state._full[i] = None
        del full, chunk
    _blocks(state, block_cls, ends, sums, totals, 0, horizon)


def _blocks(state: _Lanes, block_cls: type, ends: np.ndarray, sums: np.ndarray, totals: np.ndarray, t0: int, t1: int) -> None:
    """Account for the blocks that end at ``ends`` (and the one left open at t1), then decide
    the next blocks' actions for every lane in one call."""
    live = ends < state.horizon
    if live.any():
        decided = _check_decided(block_cls.decide_batch(state.learners, totals[:, live], ends[live]), state.n, state.problem)
        values = np.concatenate([state.act[:, None], decided], axis=1)
    else:
        values = state.act[:, None]
    if ends.size:
        # the cost of every ended block at the action played in it: S_k[a_k]
        block_paid = step_costs(values[:, : ends.size], sums)
        hit = np.flatnonzero(np.isin(ends, state.checkpoints))
        if hit.size:  # paid after each ended block, added in order as accumulate adds it
            running = np.cumsum(np.concatenate([state.paid[:, None], block_paid], axis=1), axis=1)[:, 1:]
            k = np.searchsorted(state.checkpoints, ends[hit])
            state.curve_paid[:, k] = running[:, hit]
            state.curve_best[:, k] = state._best(totals[:, hit])
        state.paid = accumulate(state.paid, block_paid)
        # Expected costs by whole blocks (a block's start is the previous multiple of B), never
        # by the pieces a chunk boundary cuts a block into: the pseudo-regret is then the same
        # floats on every block path and for every chunking.
        b = state.segment
        state.account_expected(values[:, : ends.size], (ends - 1) // b * b, ends)
        state.record_drift(ends, totals)
        state.set_cum(totals[:, -1].copy(), int(ends[-1]))
    starts = np.concatenate([[t0], ends])
    stops = np.append(ends, t1)
    segments = values if values.shape[1] == starts.size else np.concatenate([values, values[:, -1:]], axis=1)
    state.account_segments(segments, stops - starts, starts, expected=False)
    state.act = values[:, -1]


def _play(state: _Lanes, i: int, costs: np.ndarray, t0: int) -> tuple[np.ndarray, np.ndarray]:
    """Lane ``i``'s actions for one chunk and the cost paid at each step (:func:`play_chunk`,
    with the lane's bandit feed and its pair's stream for mixed strategies)."""
    learner = state.learners[i]
    if is_bandit(learner) and state.feeds[i] is None:
        state.feeds[i] = BanditFeed(learner, state.n)
    sampler = state.samplers[i] if state.samplers else None
    return play_chunk(learner, costs, n=state.n, problem=state.problem, t0=t0, sampler=sampler, feed=state.feeds[i])


def play_chunk(
    learner: Any, costs: np.ndarray, *, n: int, problem: str, t0: int, sampler: np.random.Generator | None,
    feed: BanditFeed | None,
) -> tuple[np.ndarray, np.ndarray]:
    """A learner's actions on one chunk of costs (steps t0+1…) and the cost paid at each step.
    The learner gets its own copy of the chunk: one that writes into what it is given (zeroing it
    after reading, say) cannot change the costs the engine accounts with.

    A bandit learner (``feedback = "bandit"``) is played through its ``feed``
    (:class:`~replify.bandits.BanditFeed`): it sees c_t(a_t) only. A learner that plays mixed
    strategies (``mixed = True``: ``act()`` returns a probability vector over the experts, ``run`` a
    ``(L, n)`` array of them) is played by sampling each step's action by inversion from a uniform
    of ``sampler`` — the pair's own stream (part of R, shared by the two runs: replicability is
    judged on the actions played) — and pays the expected cost p_t·c_t."""
    if feed is not None:
        actions = feed.play(costs, t0)
        return actions, step_costs(actions, costs)
    if not getattr(learner, "mixed", False):
        actions = _run_lane(learner, costs.copy(), n, problem, t0)
        return actions, step_costs(actions, costs)
    probs = _mixed_lane(learner, costs.copy(), n, t0)
    actions = sample_by_inversion(probs, sampler.random(costs.shape[0]))
    return actions, np.einsum("ij,ij->i", probs, costs)


def _mixed_lane(learner: Any, costs: np.ndarray, n: int, t0: int) -> np.ndarray:
    """A mixed learner's probability vectors for one chunk ``(L, n)``, checked: finite,
    non-negative, summing to 1 (to 1e-9 per expert)."""
    if callable(getattr(learner, "run", None)):
        probs = np.asarray(learner.run(costs), dtype=np.float64)
    else:
        probs = np.empty_like(costs)
        for t in range(costs.shape[0]):  # a black-box learner without run(): nothing to vectorise
            p = np.asarray(learner.act(), dtype=np.float64)
            if p.shape != (n,):
                raise ActionError(f"a mixed learner's act() must return a probability vector of shape ({n},); "
                                  f"got shape {p.shape} at step {t0 + t + 1}")
            probs[t] = p
            learner.update(costs[t])
    if probs.shape != costs.shape:
        raise ActionError(f"a mixed learner must give probability vectors of shape ({n},) per step; got {probs.shape[1:]}")
    bad = ~(np.isfinite(probs).all(axis=1) & (probs >= 0).all(axis=1) & (np.abs(probs.sum(axis=1) - 1.0) <= 1e-9 * n))
    if bad.any():
        t = int(np.argmax(bad))
        raise ActionError(
            f"a mixed learner returned {probs[t].tolist()} at step {t0 + t + 1}; expected a probability vector "
            f"over the {n} experts (finite, >= 0, summing to 1)"
        )
    return probs


def _run_lane(learner: Any, costs: np.ndarray, n: int, problem: str, t0: int) -> np.ndarray:
    """One lane's actions for one chunk: the learner's own ``run`` (resumable), else stepping."""
    if callable(getattr(learner, "run", None)):
        actions = np.asarray(learner.run(costs))
        expected = (costs.shape[0],) if problem == "experts" else costs.shape
        if actions.shape != expected:
            raise ActionError(f"learner.run() returned actions of shape {actions.shape}, expected {expected}")
        return _check_decided(actions, n, problem, source="learner.run()")
    out = np.empty(costs.shape[0], dtype=np.int64) if problem == "experts" else np.empty_like(costs)
    for t in range(costs.shape[0]):  # a black-box learner without run(): nothing to vectorise
        out[t] = check_action(learner.act(), n=n, problem=problem, step=t0 + t + 1, source="learner.act()")
        learner.update(costs[t])
    return out


def _fast(state: _Lanes, block_cls: type, budget: int) -> None:
    lanes, n, horizon = len(state.learners), state.n, state.horizon
    b = state.learners[0].block_size
    all_ends = block_ends(0, horizon, b, horizon)
    per_chunk = max(1, budget // (lanes * n * 8 * 2))
    prev = 0
    for c0 in range(0, all_ends.size, per_chunk):
        ends = all_ends[c0 : c0 + per_chunk]
        starts = np.concatenate([[prev], ends[:-1]])
        sums = np.empty((lanes, ends.size, n))
        for i, rng in enumerate(state.rngs):  # one exact block-sum draw per lane and chunk
            got = as_float_array("the adversary's sample_sums(rng, starts, stops)", state.seq.sample_sums(rng, starts, ends))
            if got.shape != sums.shape[1:]:
                raise CostError(
                    f"the adversary's sample_sums(rng, starts, stops) must return sums of shape {sums.shape[1:]} "
                    f"(one row per segment); got shape {got.shape}"
                )
            sums[i] = got
        state.check_sums(sums, starts, ends)
        totals = np.cumsum(np.concatenate([state.cum[:, None], sums], axis=1), axis=1)[:, 1:]
        _blocks(state, block_cls, ends, sums, totals, prev, int(ends[-1]))
        prev = int(ends[-1])


#: Bytes of a slice of a whole-sequence draw checked at once: its passes (extrema, whole numbers)
#: run in cache.
WHOLE_SLICE_BYTES = 1 * 2**20

#: Bytes of one lane's chunk on the pair-by-pair path: the learner, the engine and numpy make a
#: few temporaries of this size, small beside the one sequence a whole-sequence adversary draws.
PAIR_CHUNK_BYTES = 2 * 2**20


def _segment_learners(learners: list) -> bool:
    """Learners that say, segment by segment, whether a segment's cost sum is all they need
    (``next_segment() -> (steps, summed)``, ``advance(total, steps)``): ``iid-experts``."""
    return all(callable(getattr(lr, "next_segment", None)) and callable(getattr(lr, "advance", None)) for lr in learners)


def _play_lane(state: _Lanes, i: int, sums: bool, chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Run lane ``i`` alone from step 0 to T, as its learner asks (``next_segment``; a learner
    without it takes chunks of ``chunk_rows`` steps): with ``sums``, a summed segment is one exact
    ``sample_sums`` draw and one ``advance``; any other segment is drawn step by step and played
    by the learner's ``run`` (or stepping). Returns the lane's actions run-length encoded: the
    steps (0-based) where a new action starts, and the actions."""
    lr, rng, n, horizon = state.learners[i], state.rngs[i], state.n, state.horizon
    starts: list[np.ndarray] = []
    acts: list[np.ndarray] = []
    paid, cum, t = np.zeros(1), np.zeros(n), 0
    segment = getattr(lr, "next_segment", None)
    while t < horizon:
        steps, summed = segment() if callable(segment) else (min(chunk_rows, horizon - t), False)
        if not (isinstance(steps, (int, np.integer)) and 1 <= steps <= horizon - t):
            raise InvalidArgumentError(
                f"{type(lr).__name__}.next_segment() at step {t} must give 1..{horizon - t} steps; got {steps!r}"
            )
        steps = int(steps)
        if summed and sums:
            # One draw for the segment, cut at the checkpoints inside it (the pieces' sums, exact
            # in law); the learner advances once, the regret is recorded at every cut.
            action = check_action(lr.act(), n=n, problem=state.problem, step=t + 1, source="learner.act()")
            inside = state.checkpoints[(state.checkpoints > t) & (state.checkpoints < t + steps)]
            lo, hi = np.concatenate([[t], inside]), np.concatenate([inside, [t + steps]])
            parts = as_float_array("the adversary's sample_sums(rng, starts, stops)", state.seq.sample_sums(rng, lo, hi))
            if parts.shape != (lo.size, n):
                raise CostError(f"the adversary's sample_sums(rng, starts, stops) must return sums of shape ({lo.size}, {n}); "
                                f"got shape {parts.shape}")
            state.check_sums(parts[None], lo, hi)
            running = np.cumsum(np.concatenate([cum[None], parts]), axis=0)[1:]
            lr.advance(parts.sum(axis=0), steps)
            piece_paid = np.cumsum(np.concatenate([paid, parts[:, action]]))[1:]
            state.checkpoints_at(hi, i, piece_paid, running)
            paid, cum = piece_paid[-1:], running[-1]
            starts.append(lo[:1])
            acts.append(np.array([action]))
        else:
            rows = np.empty((int(steps), n))
            state.draw_lane(i, t, t + steps, rows)
            actions, step_paid = _play(state, i, rows, t)
            state.checkpoints_inside(t, t + steps, paid, step_paid[None], cum[None], rows[None], lanes=slice(i, i + 1))
            paid = accumulate(paid, step_paid[None])
            cum = reduce_from(rows[None], cum[None])[0]
            change = np.concatenate([[0], np.flatnonzero(actions[1:] != actions[:-1]) + 1])
            starts.append(t + change)
            acts.append(actions[change])
        t += int(steps)
        if not np.isfinite(cum).all():
            raise CostError(f"the adversary drew non-finite costs by step {t}")
    state._full[i] = None  # a whole-sequence adversary's draw: this lane is done with it
    state.paid[i], state.cum[i] = paid[0], cum
    s, a = np.concatenate(starts), np.concatenate(acts)
    keep = np.concatenate([[True], a[1:] != a[:-1]])  # a block and the next may play the same action
    return s[keep], a[keep]


def _pair_by_pair(state: _Lanes, sums: bool, budget: int) -> None:
    """Pair by pair, each lane run alone (:func:`_play_lane`), then the two runs compared over
    the union of their segment boundaries: the segment path (``sums``), and the path of an
    adversary that only draws whole sequences (a lane's draw is freed once the lane has run).
    Memory: one lane's costs and two lanes' run-length encoded actions at a time, and one
    per-step count array below ``MAX_SEGMENTS`` steps."""
    horizon = state.horizon
    rows = max(1, min(budget, PAIR_CHUNK_BYTES) // (state.n * 8))
    if state.disagree is not None:
        state.disagree_steps = np.zeros(horizon + 1, dtype=np.int32)
    for p in range(len(state.learners) // 2):
        (sa, aa), (sb, ab) = _play_lane(state, 2 * p, sums, rows), _play_lane(state, 2 * p + 1, sums, rows)
        starts = np.union1d(sa, sb)
        actions = np.stack([aa[np.searchsorted(sa, starts, side="right") - 1],
                            ab[np.searchsorted(sb, starts, side="right") - 1]])
        state.account_segments(actions, np.diff(np.append(starts, horizon)), starts, pair=p)
    if state.disagree is not None:
        state.disagree = np.cumsum(state.disagree_steps[:-1], dtype=np.int32)


def simulate(
    build: Callable[[np.random.SeedSequence], Any],
    seq: Any,
    *,
    n: int,
    horizon: int,
    root: np.random.SeedSequence,
    pair_ids: Sequence[int],
    fast_path: bool | None = None,
    action_set: Any = None,
    budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    domain: CostDomain | None = None,
) -> Outcomes:
    """Run the pairs ``pair_ids`` (their seeds are fixed children of ``root``) and return
    their outcomes. ``fast_path``: None uses block sums when possible, False never, True
    insists (and raises when it is not possible). ``progress(done, total)`` is called after each
    group of pairs. ``domain`` is the cost domain the learner declares (block learners carry
    their own): every drawn chunk is checked against it (chunk extrema, and row ℓ1 norms for
    ℓ1 domains), and on the block-sum path every block sum against what such costs can sum to."""
    with warnings.catch_warnings():
        # Every pair builds the same learner: a warning its parameters cause was shown once, by
        # the caller (evaluate builds one learner first); here it would repeat twice per pair.
        warnings.simplefilter("ignore", ReplifyWarning)
        return _simulate(build, seq, n=n, horizon=horizon, root=root, pair_ids=pair_ids, fast_path=fast_path,
                         action_set=action_set, budget=budget, progress=progress, domain=domain)


def _simulate(
    build: Callable[[np.random.SeedSequence], Any], seq: Any, *, n: int, horizon: int, root: np.random.SeedSequence,
    pair_ids: Sequence[int], fast_path: bool | None, action_set: Any, budget: int | None,
    progress: Callable[[int, int], None] | None, domain: CostDomain | None,
) -> Outcomes:
    budget = MEMORY_BUDGET if budget is None else budget
    parts = []
    disagree = None  # summed group by group: one array per worker, whatever the number of pairs
    # An adversary that can only draw whole sequences (``sample(rng)``, the documented minimum)
    # runs one pair at a time: its lanes' (T, n) draws are alive only while their pair runs, so
    # peak memory is two sequences (plus O(blocks·n)) whatever the number of pairs. Block
    # learners fold each lane's draw into block sums and free it before the next lane draws, so
    # for them groups grow again once the first pair has shown what the learners are: as many
    # pairs as keep a group's block sums within WHOLE_SLICE_BYTES (per-pair costs amortised).
    whole = not callable(getattr(seq, "sample_chunk", None))
    group = 1 if whole else MAX_GROUP_PAIRS
    g0 = 0
    while g0 < len(pair_ids):
        ids = list(pair_ids[g0 : g0 + group])
        learners, rngs, samplers = [], [], []
        for k in ids:
            pair_seed = child(root, INTERNAL, k)
            for side in (0, 1):
                learner = check_learner(build(pair_seed), source="the learner callable")
                for attr, expected in (("n", n), ("horizon", horizon)):
                    got = getattr(learner, attr, expected)
                    if got != expected:
                        raise InvalidArgumentError(f"learner built with {attr}={got}, but evaluate() was given {attr}={expected}")
                learners.append(learner)
                rngs.append(np.random.default_rng(child(root, DATA, k, side)))
                # a mixed strategy's draws: one stream per pair, the same for its two runs (part of R)
                samplers.append(np.random.default_rng(child(root, INTERNAL, k, MIXED)))
        block_cls = _block_class(learners)
        state = _Lanes(learners, rngs, seq, samplers=samplers, n=n, horizon=horizon, action_set=action_set,
                       block=learners[0].block_size if block_cls is not None else None,
                       domain=getattr(learners[0], "domain", None) or domain)
        segmented = block_cls is None and _segment_learners(learners)
        can_fast = (block_cls is not None or segmented) and callable(getattr(seq, "sample_sums", None))
        if fast_path and not can_fast:
            raise InvalidArgumentError(
                "fast_path=True needs block learners (the paper's replicable algorithms, iid-experts or a wrapped learner) "
                f"and an adversary that can draw block sums; got {type(learners[0]).__name__} and {type(seq).__name__}"
            )
        use_fast = can_fast and fast_path is not False
        if block_cls is not None:
            state.start_blocks()
        if use_fast and segmented:
            _pair_by_pair(state, True, budget)
        elif use_fast:
            _fast(state, block_cls, budget)
        elif whole and block_cls is None:
            _pair_by_pair(state, False, budget)
        else:
            _per_step(state, block_cls, budget)
        params = getattr(learners[0], "params", None)
        parts.append(
            Outcomes(
                identical=state.first == 0,
                agreement=state.agree / horizon,
                first_divergence=state.first,
                regret=state.regrets().reshape(-1, 2),
                params=None if params is None else (params.to_dict() if hasattr(params, "to_dict") else dict(params)),
                fast_path=use_fast,
                agree_steps=state.curve,
                bin_edges=state.edges,
                action_counts=None if state.counts is None else state.counts.reshape(-1, 2, n),
                constant_regret=None if (c := state.constant_regrets()) is None else c.reshape(-1, 2),
                disagreement=None,
                segment=state.segment,
                drift_steps=state.drift_steps,
                drift=state.drift,
                pseudo_regret=None if (q := state.pseudo_regrets()) is None else q.reshape(-1, 2),
                curve_steps=state.checkpoints,
                regret_curve=state.regret_curve().reshape(-1, 2, state.checkpoints.size),
            )
        )
        if state.disagree is not None:
            disagree = state.disagree if disagree is None else disagree + state.disagree
        if progress is not None:
            progress(g0 + len(ids), len(pair_ids))
        g0 += len(ids)
        if whole and block_cls is not None and not use_fast:
            per_pair = 2 * 2 * -(-horizon // learners[0].block_size) * n * 8  # sums and totals of two lanes
            group = int(min(MAX_GROUP_PAIRS, max(1, WHOLE_SLICE_BYTES // per_pair)))
    return attrs.evolve(Outcomes.concatenate(parts), disagreement=disagree)
