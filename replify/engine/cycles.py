"""The bandit block-sum path (docs/bandits.md, "The engine's block-sum path for batched bandit
learners"): a learner that commits to a round robin over its active arms before it sees their
costs (``next_cycle``/``observe_sums``), on an adversary whose law is the same at every step or
between the steps it names, is played without a per-step draw — each stretch drawn as one
``sample_sums`` segment per arm, exact in law — and the two runs' agreement counted over their
round robins exactly."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from replify.base.checks import as_float_array, check_action
from replify.engine.declarations import declared_bounds, declared_pieces
from replify.engine.contexts import fixed_features
from replify.engine.lanes import _Lanes
from replify.errors import ActionError, CostError, InvalidArgumentError, LearnerProtocolError
from replify.components.bandits import is_bandit
from replify.components.contextual import is_contextual


def cycle_learners(learners: list, seq: Any, domain: Any, horizon: int) -> tuple[bool, str]:
    """Whether the block-sum path can play these learners on ``seq``, and if not why: bandit
    learners whose batches are round robins (``next_cycle() -> (arms, length)``,
    ``observe_sums(sums, pulls)``) on an adversary whose law is the same at every step (``iid``)
    or between the steps it names (``law_changes``: piecewise iid), that draws segment sums
    (``sample_sums``) and whose costs lie in the learner's domain when it declares one
    (``cost_bounds = (low, high)``: the block-sum path never sees a single cost, so it cannot
    refuse one outside the domain as the per-step path does). A malformed declaration is refused."""
    if not all(is_bandit(lr) and callable(getattr(lr, "next_cycle", None)) and callable(getattr(lr, "observe_sums", None))
               for lr in learners):
        return False, "the learner has no next_cycle() and observe_sums()"
    name = type(seq).__name__
    pieces = declared_pieces(seq, horizon)  # a malformed iid or law_changes is refused here
    if pieces is None:
        return False, f"{name} declares neither iid = True nor law_changes"
    if not callable(getattr(seq, "sample_sums", None)):
        return False, f"{name} has no sample_sums(rng, starts, stops)"
    bounds = declared_bounds(seq)
    if domain is not None and not (domain.low == -math.inf and domain.high == math.inf and not domain.l1):  # any real cost
        if bounds is None:
            return False, f"{name} declares no cost_bounds, so its costs may fall outside the learner's {domain.describe()}"
        if not (domain.low <= bounds[0] and bounds[1] <= domain.high):
            return False, f"{name}'s cost_bounds {bounds} are outside the learner's {domain.describe()}"
    return True, ""


def _round_robin_pulls(arms: np.ndarray, begins: np.ndarray, ends: np.ndarray, n: int) -> np.ndarray:
    """How often each of the n arms is played at steps j = begin..end−1 of ``arms[j % k]``, for
    each (begin, end): (pieces, n)."""
    k = arms.size
    q = np.arange(k)
    per_position = (ends[:, None] - q + k - 1) // k - (begins[:, None] - q + k - 1) // k  # (pieces, k)
    out = np.zeros((begins.size, n), dtype=np.int64)
    np.add.at(out, (slice(None), arms), per_position)  # an arm may hold several positions
    return out


def checked_cycle(got: Any, *, n: int, left: int, step: int, name: str) -> tuple[np.ndarray, int]:
    """What ``next_cycle()`` returned, checked as the protocol demands: ``(arms, length)``, the arms a
    non-empty 1-d integer array in [0, n) (copied: the learner may reuse its array), the length an
    integer in 1..``left`` (the steps still to play)."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        raise InvalidArgumentError(f"{name}.next_cycle() at step {step} must return (arms, length); got {got!r}")
    arms, length = np.asarray(got[0]), got[1]
    if arms.ndim != 1 or arms.size == 0 or arms.dtype.kind not in "iu" or arms.min() < 0 or arms.max() >= n:
        raise ActionError(f"{name}.next_cycle() at step {step} must give a non-empty 1-d array of integer arms in "
                          f"[0, {n}); got {arms!r}")
    if isinstance(length, (bool, np.bool_)) or not (isinstance(length, (int, np.integer)) and 1 <= length <= left):
        raise InvalidArgumentError(f"{name}.next_cycle() at step {step} must give an integer length in "
                                   f"1..{left}; got {length!r} ({type(length).__name__})")
    return arms.astype(np.int64), int(length)


#: Steps over which a learner's round robins are compared with the learner stepped alone (:func:`check_cycles`),
#: fewer where n is large (at most ``CYCLE_TWIN_COSTS`` costs drawn, and never under 256 steps).
CYCLE_TWIN_STEPS = 4096
CYCLE_TWIN_COSTS = 1 << 20


def check_cycles(state: _Lanes, twins: tuple[Any, Any], rng: np.random.Generator) -> None:
    """Once an evaluation, before the block-sum path plays: two more builds of the first pair's
    learner (``twins``, from its seed) — one played by its round robins (next_cycle/observe_sums,
    told each arm's sum and pulls), one stepped alone (act/update) — on the same per-step costs over
    the first cycles (the adversary's own, drawn as one-step sums from ``rng``, a stream of their
    own: no lane's draws change) must play the same arms. A learner whose round robins play other
    arms than its ``act()`` is refused: the block-sum path's numbers would not be its learner's."""
    cycler, stepper = twins
    n, horizon, name = state.n, state.horizon, type(cycler).__name__
    k = min(horizon, CYCLE_TWIN_STEPS, max(256, CYCLE_TWIN_COSTS // n))
    starts = np.arange(k)
    costs = as_float_array("the adversary's sample_sums(rng, starts, stops)", state.seq.sample_sums(rng, starts, starts + 1))
    if costs.shape != (k, n):
        raise CostError(f"the adversary's sample_sums(rng, starts, stops) must return sums of shape ({k}, {n}); "
                        f"got shape {costs.shape}")
    state.check_sums(costs[None], starts, starts + 1)
    fixed = getattr(state.seq, "fixed_contexts", None) if is_contextual(cycler) else None
    context = () if fixed is None else (fixed_features(state, fixed, int(state.seq.d)),)  # checked, read-only
    t = 0
    while t < k:  # the round robins first: a malformed cycle is refused as the path refuses it
        arms, length = checked_cycle(cycler.next_cycle(*context), n=n, left=horizon - t, step=t + 1, name=name)
        played = arms[np.arange(min(length, k - t)) % arms.size]
        for j, arm in enumerate(played.tolist()):
            alone = check_action(stepper.act(*context), n=n, problem="experts", step=t + j + 1, source=f"{name}.act()")
            if alone != arm:
                raise LearnerProtocolError(
                    f"{name}.next_cycle(): the round robin from step {t + 1} plays arm {arm} at step {t + j + 1}, but the "
                    f"same learner stepped alone (act/update, built from the same seed, on the same costs) plays arm "
                    f"{alone}; next_cycle() must give the arms act() plays, each batch told only its arms' cost sums "
                    "(observe_sums)")
            stepper.update(alone, float(costs[t + j, alone]))
        if played.size < length:
            break
        seen = costs[np.arange(t, t + length), played]
        cycler.observe_sums(np.bincount(played, weights=seen, minlength=n), np.bincount(played, minlength=n))
        t += length


def _cycle_lane(state: _Lanes, i: int) -> list[tuple[int, int, np.ndarray]]:
    """Run lane ``i`` alone with block sums: each batch (a round robin fixed before its costs) is
    cut at the checkpoints inside it, and each piece's costs are drawn as one segment per arm, as
    long as that arm's pulls in the piece — all in one ``sample_sums`` call, the segments laid end
    to end inside the batch's steps (the steps an arm is played are a set fixed in advance, so on an
    iid adversary their cost vectors sum as a segment of that length does; the segments are disjoint
    sets of steps, so independent). Arm a observes entry a of
    its own segment; every arm's total over the piece is the sum of all the segments. Exact in law.
    Returns the lane's batches as (start, length, arms)."""
    lr, rng, n, horizon = state.learners[i], state.rngs[i], state.n, state.horizon
    name = type(lr).__name__
    changes = np.asarray(getattr(state.seq, "law_changes", None) or (), dtype=np.int64)  # piecewise iid: cut there too
    declared = getattr(state.seq, "cost_bounds", None)
    bounds = None if declared is None else (float(declared[0]), float(declared[1]))
    batches: list[tuple[int, int, np.ndarray]] = []
    paid, cum, counts, expected, t = 0.0, np.zeros(n), np.zeros(n), 0.0, 0
    # a contextual learner is shown the fixed contexts (docs/contextual.md)
    fixed = getattr(state.seq, "fixed_contexts", None) if is_contextual(lr) else None
    context = None if fixed is None else fixed_features(state, fixed, int(state.seq.d))  # checked, read-only
    while t < horizon:
        arms, length = checked_cycle(lr.next_cycle() if context is None else lr.next_cycle(context), n=n,
                                     left=horizon - t, step=t + 1, name=name)
        inside = np.concatenate([state.checkpoints, changes])
        stops = np.union1d(inside[(inside > t) & (inside < t + length)], [t + length])
        begins = np.concatenate([[t], stops[:-1]])
        # every piece's pulls per arm, (pieces, n), and one sample_sums call for all their segments,
        # laid end to end inside each piece's own steps (disjoint segments: independent draws; inside
        # the piece: its law)
        m = _round_robin_pulls(arms, begins - t, stops - t, n)
        flat = m.ravel()
        seg_stops = (begins[:, None] + np.cumsum(m, axis=1)).ravel()
        seg_starts = seg_stops - flat
        sums = as_float_array("the adversary's sample_sums(rng, starts, stops)",
                              state.seq.sample_sums(rng, seg_starts, seg_stops))
        if sums.shape != (flat.size, n):
            raise CostError(f"the adversary's sample_sums(rng, starts, stops) must return sums of shape ({flat.size}, {n}); "
                            f"got shape {sums.shape}")
        state.check_sums(sums[None], seg_starts, seg_stops)
        if bounds is not None:  # the declaration the path relies on, held to: L·low <= a sum <= L·high
            length_col = flat[:, None].astype(np.float64)
            slack = 1e-9 * np.maximum(length_col, 1.0)
            outside = (sums < length_col * bounds[0] - slack) | (sums > length_col * bounds[1] + slack)
            if outside.any():
                j = int(np.argwhere(outside)[0][0])
                raise CostError(f"the adversary declares cost_bounds {bounds}, but its sum over {int(flat[j])} steps is "
                                f"{sums[j].tolist()}, which such costs cannot add up to")
        sums = sums.reshape(len(stops), n, n)
        observed = np.diagonal(sums, axis1=1, axis2=2)  # (pieces, n): arm a's own segment, entry a
        running_paid = paid + np.cumsum(observed.sum(axis=1))
        running_cum = cum + np.cumsum(sums.sum(axis=1), axis=0)
        state.checkpoints_at(stops, i, running_paid, running_cum)
        paid, cum = float(running_paid[-1]), running_cum[-1]
        seen, pulled = observed.sum(axis=0), m.sum(axis=0)
        if state.expected_sums is not None:  # each segment's expected cost for the arm that plays it
            means = state._expected_sums(seg_starts, seg_stops)  # checked as every path checks them
            expected += float(np.take_along_axis(means, np.tile(np.arange(n), len(stops))[:, None], axis=1).sum())
        if not np.isfinite(cum).all():  # the sums were refused where they are: an overflow is left
            raise CostError(f"the adversary's costs add up to a non-finite total by step {t + length}: they overflow "
                            "double precision")
        lr.observe_sums(seen, pulled)
        counts += pulled
        batches.append((t, length, arms))
        t += length
    state.paid[i], state.cum[i], state.expected_paid[i] = paid, cum, expected
    if state.counts is not None:
        state.counts[i] = counts
    return batches


def _cycle_agreement(a: list, b: list, horizon: int, edges: np.ndarray) -> tuple[float, int, np.ndarray]:
    """The steps on which two runs' round robins play the same arm, their first difference (1-based,
    0 if none) and the agreeing steps in each time bin of ``edges``. On a stretch where run A plays
    ``ca[(ja + u) % ka]`` and run B ``cb[(jb + u) % kb]`` the match pattern repeats every
    lcm(ka, kb) steps: counted over one period, then by whole periods."""
    starts = np.union1d([s for s, _, _ in a], [s for s, _, _ in b])
    stops = np.append(starts[1:], horizon)
    where_a = np.searchsorted([s for s, _, _ in a], starts, side="right") - 1
    where_b = np.searchsorted([s for s, _, _ in b], starts, side="right") - 1
    total, first, curve = 0.0, 0, np.zeros(edges.size - 1)
    for s, e, ia, ib in zip(starts.tolist(), stops.tolist(), where_a.tolist(), where_b.tolist()):
        (sa, _, ca), (sb, _, cb) = a[ia], b[ib]
        period = math.lcm(ca.size, cb.size)
        u = np.arange(min(period, e - s))
        same = ca[(s - sa + u) % ca.size] == cb[(s - sb + u) % cb.size]
        prefix = np.concatenate([[0], np.cumsum(same)])
        per_period = prefix[-1] if u.size == period else None

        def upto(x: np.ndarray) -> np.ndarray:  # agreeing steps among the stretch's first x
            if per_period is None:
                return prefix[x]
            return (x // period) * per_period + prefix[x % period]

        total += float(upto(np.array([e - s]))[0])
        if first == 0 and not same.all():
            first = s + int(np.argmin(same)) + 1
        lo, hi = np.clip(edges[:-1], s, e) - s, np.clip(edges[1:], s, e) - s
        curve += upto(hi) - upto(lo)
    return total, first, curve


def _cycles(state: _Lanes) -> None:
    """Batched bandit learners on an iid adversary, pair by pair, with block sums
    (:func:`_cycle_lane`); the two runs compared over their round robins. The per-step
    disagreement counts are not kept on this path (the report says None)."""
    state.disagree = None
    for p in range(len(state.learners) // 2):
        a, b = _cycle_lane(state, 2 * p), _cycle_lane(state, 2 * p + 1)
        agree, first, curve = _cycle_agreement(a, b, state.horizon, state.edges)
        state.agree[p] = agree
        state.first[p] = first
        state.curve += curve
