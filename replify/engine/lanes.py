"""The running state of one group of lanes: cumulative costs, regret and agreement accounting,
checkpoints for the regret curve, the drift between a pair's draws."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import CostDomain, L1_SLACK, as_float_array, check_action
from replify.engine import limits
from replify.engine.outcomes import accumulate
from replify.errors import ActionError, CostError, InvalidArgumentError
from replify.components.bandits import BanditFeed
from replify.components.contextual import varying_contexts
from replify.components.blocks import BlockLearner, reduce_from


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
        domain: CostDomain | None = None, samplers: list | None = None, reference: np.ndarray | None = None,
    ) -> None:
        self.learners, self.rngs, self.seq = learners, rngs, seq
        # (lane, a second build of its learner) for the first lane and the last, stepped alone beside the
        # lanes' first steps (engine.paths)
        self.twin: list[tuple[int, Any]] | None = None
        # per lane: the expert `constant` plays with the lane's R (the learning gain's reference)
        self.reference = None if reference is None else np.asarray(reference, dtype=np.int64)
        # the progress reporter's ear inside the group: the fraction of its lanes' steps played (run.py)
        self.on_steps: Any = None
        self.samplers = samplers or []  # per lane: the pair's stream for sampling mixed strategies
        self.domain = domain if isinstance(domain, CostDomain) else None
        self.n, self.horizon = n, horizon
        # An adversary whose costs are all integers (0/1 Bernoulli costs) lets sums over time be
        # taken in any order, with BLAS: they are exact, so the same floats as adding in order.
        self.any_order = bool(getattr(seq, "integer_costs", False))
        problem = getattr(learners[0], "problem", "experts")
        # a contextual learner picks one of n arms: accounted as experts are (docs/contextual.md)
        self.contextual = problem == "contextual"
        self.problem = "experts" if self.contextual else problem
        # On an adversary whose contexts change (the contextual path): what the best policy (the
        # arm of least expected cost given each step's context) paid on these draws, and its
        # expected cost — the comparator of regret and pseudo-regret there; None elsewhere.
        self._fixed: np.ndarray | None = None  # an adversary's fixed_contexts, once checked
        # the means an adversary that shows contexts draws, held to its costs: per lane and arm, the
        # running sum of cost - mean, the steps summed and the tests made so far (replify.engine.contexts.check_means)
        self._mean_gap: np.ndarray | None = None
        self._mean_steps, self._mean_tests = 0, 0
        self.policy_paid: np.ndarray | None = None
        self.expected_best: np.ndarray | None = None
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
        # (contexts that change bring each step's means along: the contextual path takes them there)
        self.expected_sums = expected if callable(expected) and self.problem == "experts" and not varying_contexts(seq) else None
        self.expected_paid = np.zeros(lanes)
        self.edges = curve_edges(horizon)
        self.curve = np.zeros(self.edges.size - 1)
        self._full: list[np.ndarray | None] = [None] * lanes
        self.feeds: list[BanditFeed | None] = [None] * lanes  # bandit learners: what each run may see
        self.act: np.ndarray | None = None  # block learners: the action of the open block
        # Disagreement per segment: per block for block learners (actions are constant on blocks),
        # per step otherwise; summed over groups of pairs, it gives the step-disagreement curve.
        self.segment = block or 1
        segments = -(-horizon // self.segment)
        # Beyond limits.MAX_SEGMENTS (learners without blocks at T > 3.3e7) the counts are not kept:
        # memory stays bounded, and the report says None rather than something approximate.
        self.disagree = np.zeros(segments, dtype=np.int32) if segments <= limits.MAX_SEGMENTS else None
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
        # The drift between the two draws at up to limits.DRIFT_SAMPLES transitions (block learners).
        self.drift_steps = self.drift = None
        if block is not None and -(-horizon // block) > 1:
            k = np.unique(np.linspace(1, -(-horizon // block) - 1, limits.DRIFT_SAMPLES).round().astype(np.int64))
            self.drift_steps = k * block
            self.drift = np.full((pairs, k.size, 2), np.nan)

    def start_blocks(self) -> None:
        """The first block's actions. Only for block learners, whose act() is idempotent: a
        learner that draws in act() must see exactly one act() per step."""
        acts = [check_action(lr.act(), n=self.n, problem=self.problem, step=1, source="learner.act()") for lr in self.learners]
        self.act = np.asarray(acts, dtype=np.int64 if self.problem == "experts" else np.float64)

    # -- drawing ----------------------------------------------------------------------------
    def draw_rows(self, t0: int, t1: int, out: np.ndarray | None = None) -> np.ndarray:
        """Every lane's costs for steps t0+1..t1, from its own generator (into ``out``, a
        (lanes, ≥ t1 − t0, n) buffer, when given: its first t1 − t0 rows)."""
        costs = np.empty((len(self.learners), t1 - t0, self.n)) if out is None else out[:, : t1 - t0]
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
        if rows.size == 0:
            return
        if d is None:
            self._check_finite(rows, t0, extrema)
            return
        low, high = (rows.min(), rows.max()) if extrema is None else extrema
        ok = low >= d.low and high <= d.high  # NaN fails both comparisons
        if ok and d.l1:
            ok = np.abs(rows).sum(axis=-1).max() <= 1.0 + L1_SLACK
        if not ok:  # find the lane and step with CostDomain's own check, which names them
            # named with the learner whose domain it is (it declared it: its cost_range, or sigma= for ucb1)
            try:
                for lane in rows.reshape(-1, rows.shape[-2], rows.shape[-1]):
                    d.check_matrix(lane, n=lane.shape[-1], name="costs drawn by the adversary", first_step=t0 + 1)
            except CostError as exc:
                learner = type(self.learners[0]).__name__
                raise CostError(f"{exc}: that is the domain {learner} declares; run {learner} on an adversary whose "
                                "costs lie in it, or these costs with a learner that takes them") from None

    @staticmethod
    def _check_finite(rows: np.ndarray, t0: int, extrema: tuple[float, float] | None = None) -> None:
        """No domain to hold the costs to, but a NaN or an infinity is never a cost: refused at its
        step, before a learner sees it (one pass over a chunk still in cache: a sum is finite unless
        a cost is not, or the sum overflows — then the rows are looked at one by one)."""
        total = float(extrema[0]) + float(extrema[1]) if extrema is not None else float(np.add.reduce(rows, axis=None))
        if math.isfinite(total):
            return
        bad = ~np.isfinite(rows).all(axis=-1)  # (L,) or (lanes, L)
        if bad.any():
            row = int(np.nonzero(bad)[-1].min())  # the earliest step of any lane
            lane = rows if rows.ndim == 2 else rows[int(np.argmax(bad[:, row]))]
            raise CostError(f"costs drawn by the adversary at step {t0 + row + 1} must be finite, got {lane[row].tolist()}")

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def check_sums(self, sums: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> None:
        """On the block-sum path: every block sum must be one that costs in the domain can add
        up to (L·low ≤ sum ≤ L·high per coordinate, ‖sum‖₁ ≤ L for an ℓ1 domain)."""
        d = self.domain
        if sums.size == 0:
            return
        if d is None:  # no domain, but a sum of costs is finite
            bad = ~np.isfinite(sums).all(axis=-1)
            if bad.any():
                lane, k = np.argwhere(bad)[0]
                raise CostError(f"the adversary's cost sum over steps {int(starts[k]) + 1}..{int(stops[k])} is "
                                f"{sums[lane, k].tolist()}, which is not finite: a NaN or infinite cost in those steps")
            return
        length = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[None, :, None]
        slack = 1e-9 * np.maximum(length, 1.0)
        low, high = _sum_bounds(d, length)
        ok = np.isfinite(sums) & (sums >= low - slack) & (sums <= high + slack)
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
        # NaN and ±inf propagate through sums, so a finite running total means finite costs; the
        # draws were refused at their step already (check_rows, check_sums): what is left is an
        # overflow of finite costs.
        if not np.isfinite(cum).all():
            raise CostError(f"the adversary's costs add up to a non-finite total by step {t1}: they overflow double "
                            "precision")
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
        mean = self._expected_sums(starts, stops)
        per_segment = np.take_along_axis(mean[None], actions[..., None], axis=-1)[..., 0]
        self.expected_paid[lanes] = accumulate(self.expected_paid[lanes], per_segment)

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def _expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The adversary's ``expected_sums(starts, stops)``, checked: real numbers of shape
        (segments, n), and — for a learner with a cost domain — sums that costs in the domain can
        have (the pseudo-regret is then bounded as the regret is; a report read back relies on it)."""
        mean = as_float_array("the adversary's expected_sums(starts, stops)", self.expected_sums(starts, stops))
        if mean.shape != (starts.size, self.n):
            raise CostError(
                f"the adversary's expected_sums(starts, stops) must return one row of {self.n} expected cost sums per "
                f"segment, shape ({starts.size}, {self.n}); got shape {mean.shape}"
            )
        d = self.domain
        if d is not None:  # an expected sum of costs in the domain lies where such sums do (the report relies on it)
            length = (np.asarray(stops) - np.asarray(starts)).astype(np.float64)[:, None]
            slack = 1e-9 * np.maximum(length, 1.0) * max(1.0, abs(d.low), abs(d.high))
            low, high = _sum_bounds(d, length)
            bad = ~((mean >= low - slack) & (mean <= high + slack)).all(axis=1)
            if bad.any():
                k = int(np.argmax(bad))
                raise CostError(
                    f"the adversary's expected_sums over steps {int(starts[k]) + 1}..{int(stops[k])} is {mean[k].tolist()}, "
                    f"which no costs with {d.describe()} can have as expected sums"
                )
        return mean

    def account_segments(
        self, actions: np.ndarray, lengths: np.ndarray, starts: np.ndarray, pair: int | None = None,
        expected: bool = True, same: np.ndarray | None = None,
    ) -> None:
        """Agreement of the two runs of every pair over segments (steps or blocks) of the given
        ``lengths`` starting at steps ``starts`` (0-based), with ``actions`` per lane and segment.
        With ``pair``, ``actions`` holds that pair's two lanes only, over segments of any lengths
        (the segment path: its disagreement is spread over every step of a segment).
        ``expected=False``: the caller accounts the expected costs itself (the block path does,
        by whole blocks, since its segments here are pieces cut by chunks). ``same`` (pairs,
        segments): whether each pair's two runs agree, when the caller judges it (by policies)."""
        lanes = actions.shape[0]
        sel = slice(None) if pair is None else slice(pair, pair + 1)
        lane_sel = slice(None) if pair is None else slice(2 * pair, 2 * pair + 2)
        if self.counts is not None:  # steps each lane spent on each expert (for the majority decoder)
            flat = (np.arange(lanes)[:, None] * self.n + actions).ravel()
            if (lengths == 1).all():  # single steps: a count (exact, as the weighted sum of ones is)
                weights = None
            else:
                weights = np.broadcast_to(lengths, actions.shape).ravel()
            self.counts[lane_sel] += np.bincount(flat, weights=weights, minlength=lanes * self.n).reshape(lanes, self.n)
        if expected:
            live = lengths > 0
            # whole steps, as the adversary's expected_sums(starts, stops) expects (lengths may be floats)
            stops = (starts + lengths).astype(np.int64)
            self.account_expected(actions[:, live], starts[live], stops[live], lanes=lane_sel)
        a, b = actions[0::2], actions[1::2]
        if same is None:  # given: the contextual path compares the runs' policies
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

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
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
            total = reduce_from(costs[:, prev:m], total, self.any_order)
            totals.append(total)
            prev = m
        run_cum = np.stack(totals, axis=1)
        k = np.searchsorted(self.checkpoints, inside)
        self.curve_paid[lanes, k] = run_paid
        self.curve_best[lanes, k] = self._best(run_cum)

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
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
        if self.policy_paid is not None:  # contexts that change: against the best policy
            return self.paid - self.policy_paid
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
        if self.expected_best is not None:  # contexts that change: against the best policy's expected cost
            return self.expected_paid - self.expected_best
        if self.expected_sums is None:
            return None
        best = float(np.min(self._expected_sums(np.array([0]), np.array([self.horizon]))[0]))
        return self.expected_paid - best

    def played(self, lane_steps: int) -> None:
        """``lane_steps`` steps played so far by this group's lanes together (of lanes × T): said to
        the progress reporter, so that a slow learner shows its steps before a pair ends."""
        if self.on_steps is not None:
            self.on_steps(lane_steps / (len(self.learners) * self.horizon))

    def constant_regrets(self) -> np.ndarray | None:
        """Experts: the regret of ``constant`` on these very draws and with the lane's R — the total
        cost of the expert it plays (``reference``) minus the best expert's (the best policy's where
        contexts change); without a reference, its expectation over R: the average expert's total."""
        if self.problem != "experts":
            return None
        played = self.cum.mean(axis=1) if self.reference is None else self.cum[np.arange(self.cum.shape[0]), self.reference]
        if self.policy_paid is not None:
            return played - self.policy_paid
        return played - self.cum.min(axis=1)


def curve_edges(horizon: int) -> np.ndarray:
    """The regret curve's time bins, 0 = e_0 < e_1 < … < e_k = T: their ends are the checkpoints of
    learners without blocks."""
    return np.unique(np.linspace(0, horizon, limits.CURVE_BINS + 1).round().astype(np.int64))


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def _sum_bounds(d: CostDomain, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The least and largest sums of ``length`` costs in the domain's box: L·low and L·high, and 0
    for an empty segment whatever the bounds (an infinite bound times 0 would be NaN)."""
    if math.isfinite(d.low) and math.isfinite(d.high):  # the common case, on the segment path's hot loop
        return d.low * length, d.high * length
    empty = np.zeros_like(length)
    return (np.multiply(d.low, length, out=empty.copy(), where=length > 0),
            np.multiply(d.high, length, out=empty, where=length > 0))


def _check_decided(decided: np.ndarray, n: int, problem: str, source: str = "learners",
                   steps: np.ndarray | None = None, time_axis: int = -1) -> np.ndarray:
    """Actions the learners decided, checked: integer expert indices in [0, n), or finite action
    vectors. ``steps`` (1-based) are the steps along ``time_axis`` (for vector actions, of the
    array without its last axis): the first bad action is reported at its step in the run."""
    decided = np.asarray(decided)
    if problem == "experts":
        if decided.size and decided.dtype.kind not in "iu":
            raise ActionError(
                f"{source} returned actions of dtype {decided.dtype} (e.g. {decided.ravel()[:3].tolist()}); "
                f"expected integer expert indices in [0, {n})"
            )
        bad = (decided < 0) | (decided >= n) if decided.size else np.zeros(decided.shape, dtype=bool)
        if bad.any():
            where = np.argwhere(bad)[0]
            at = "" if steps is None else f" at step {int(steps[where[time_axis]])}"
            raise ActionError(f"{source} decided the action {int(decided[tuple(where)])}{at}, outside [0, {n}) "
                              f"(all such: {np.unique(decided[bad])[:10].tolist()})")
        return decided.astype(np.int64, copy=False)
    bad = ~np.isfinite(decided).all(axis=-1) if decided.ndim else ~np.isfinite(decided)
    if bad.any():
        where = np.argwhere(bad)[0]
        at = "" if steps is None else f" at step {int(steps[where[time_axis]])}"
        raise ActionError(f"{source} decided a non-finite action vector{at}: {decided[tuple(where)].tolist()}")
    return decided
