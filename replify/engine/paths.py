"""The paths a group of lanes runs on: per step, block sums, segments, pair by pair for
whole-sequence adversaries, and contexts that change (contextual bandits); and how one lane plays one chunk (its bandit feed, mixed strategies)."""

from __future__ import annotations

from typing import Any

import numpy as np

from replify.base.checks import PLAIN_INTS, as_float_array, check_action
from replify.engine import limits
from replify.engine.lanes import _Lanes, _check_decided
from replify.engine.outcomes import accumulate, step_costs
from replify.errors import ActionError, CostError, InvalidArgumentError, LearnerProtocolError
from replify.components.bandits import BanditFeed, is_bandit
from replify.components.bandit_lanes import LaneFeed, lane_form
from replify.components.contextual import ContextFeed
from replify.engine.played import Drawn, PlayedArms, played_law
from replify.components.blocks import block_ends, fold_blocks, reduce_from
from replify.components.mixtures import sample_by_inversion


def _per_step(state: _Lanes, block_cls: type | None, budget: int) -> None:
    lanes, n, horizon = len(state.learners), state.n, state.horizon
    if block_cls is not None:
        # Lane by lane through a cache-sized buffer: draw, fold into block sums, move on. Only
        # the per-block sums of all lanes are kept, for one batched decision per chunk.
        b = state.learners[0].block_size
        # An adversary whose costs are all integers lets the sums be taken in any order (exact).
        any_order = bool(getattr(state.seq, "integer_costs", False))
        rows = max(1, min(budget // (n * 8), limits.LANE_CHUNK_BYTES // (n * 8)))
        if not callable(getattr(state.seq, "sample_chunk", None)):
            _whole_blocks(state, block_cls, max(1, min(budget, limits.WHOLE_SLICE_BYTES) // (n * 8)), any_order)
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
            state.played(t1 * lanes)
        return
    rows = max(1, budget // (lanes * n * 8))
    # Bandit learners that offer the lane-batched form play every lane at once, step by step.
    form = lane_form(state.learners)
    feed = None if form is None else LaneFeed(form, n)
    if feed is None and _stepped(state):
        rows = min(rows, limits.STEPPED_CHUNK_ROWS)
    # Bandit learners on an adversary whose arms are independent given the step: one variate per
    # lane and step, turned into the played arm's cost; the other arms' totals as block sums
    # (replify.engine.played; exact in law). Their chunks hold (lanes, L) variates, not costs.
    if all(is_bandit(lr) for lr in state.learners) and played_law(state.seq, horizon, state.domain):
        _played_arms(state, feed, max(rows, min(horizon, limits.LANE_CHUNK_BYTES // (lanes * 8))))
        return
    # Their chunks are drawn into one buffer (nothing keeps a chunk: they see copies of costs);
    # learners stepped lane by lane get a fresh array, as one may keep what it was given.
    buf = None if feed is None else np.empty((lanes, min(rows, horizon), n))
    for t0 in range(0, horizon, rows):
        t1 = min(horizon, t0 + rows)
        costs = state.draw_rows(t0, t1, out=buf)
        if feed is not None:
            actions, paid = feed.play(costs, t0)
            _check_twin(state, form, costs, actions, t0)
        else:
            played = [_play_told(state, i, costs[i], t0) for i in range(lanes)]  # each learner gets its own copy
            actions, paid = np.stack([a for a, _ in played]), np.stack([p for _, p in played])
        state.played(t1 * lanes)
        state.checkpoints_inside(t0, t1, state.paid, paid, state.cum, costs)
        state.set_cum(reduce_from(costs, state.cum, state.any_order), t1)  # in time order, as stepping adds
        state.account(actions, paid, np.ones(t1 - t0), np.arange(t0, t1))


def _played_arms(state: _Lanes, feed: LaneFeed | None, rows: int) -> None:
    """Bandit learners where only the played arm's cost is drawn (replify.engine.played): in lanes
    when their class offers it, else each lane's learner through its feed; chunks of ``rows`` steps."""
    lanes, n, horizon = len(state.learners), state.n, state.horizon
    draws = PlayedArms(state)
    for t0 in range(0, horizon, rows):
        t1 = min(horizon, t0 + rows)
        kind, loc, scale, u = draws.chunk(t0, t1)
        if feed is not None:
            actions, paid = feed.play_law(kind, loc, scale, u, t0)
            _check_twin(state, feed.lanes, [Drawn(kind, loc, scale, ui, n) for ui in u], actions, t0)
        else:
            actions, paid = np.empty((lanes, t1 - t0), dtype=np.int64), np.empty((lanes, t1 - t0))
            for i in range(lanes):  # each lane's learner alone, told only its arm's cost
                actions[i], paid[i] = _play_told(state, i, Drawn(kind, loc, scale, u[i], n), t0)
        state.played(t1 * lanes)
        draws.settle(t0, t1, actions, paid)
        state.account(actions, paid, np.ones(t1 - t0), np.arange(t0, t1))


#: Steps over which a learner's lane form is compared with the learner stepped alone (:func:`_check_twin`).
TWIN_STEPS = 256


def _check_twin(state: _Lanes, form: Any, costs: Any, arms: np.ndarray, t0: int, contexts: Any = None) -> None:
    """Once an evaluation, on the first chunk: each learner of ``state.twin`` (the first lane's and
    the last lane's, built again from their seeds) stepped alone, act/update, on what its lane saw
    (``costs[i]``: the lane's chunk, an array or a :class:`Drawn`; a contextual learner's lane form
    also ``contexts[i]``, the lane's contexts) over the first :data:`TWIN_STEPS` steps, must play
    the lane's ``arms[i]``. A lane form that plays other arms
    than its learners — another rule, or lanes drawing from one shared generator, which makes a
    pair's runs depend on the lanes beside them (and on ``n_jobs``) — is refused: its numbers would
    not be its learner's."""
    twins, state.twin = state.twin or [], None
    k = min(TWIN_STEPS, arms.shape[1])
    for i, twin in twins:
        seen = costs[i]
        part = seen[:k] if isinstance(seen, np.ndarray) else Drawn(
            seen.kind, seen.loc[:k] if seen.rows > 1 else seen.loc, seen.scale, seen.u[:k], state.n)
        alone = np.asarray(BanditFeed(twin, state.n).play(part, t0) if contexts is None
                           else ContextFeed(twin, state.n).play(contexts[i][:k], part, t0, False)[0])
        if not np.array_equal(alone, arms[i, :k]):
            t = int(np.flatnonzero(alone != arms[i, :k])[0])
            name = type(state.learners[0]).__name__
            raise LearnerProtocolError(
                f"{name}.for_lanes(): lane {i} played arm {int(arms[i, t])} at step {t0 + t + 1}, but the same learner "
                f"stepped alone (act/update, built from the same seed, on the same costs) plays arm {int(alone[t])}; the "
                f"lane form ({type(form).__name__}) must play what each of its learners plays alone, each lane drawing "
                "from its own generator (lanes that share one make a pair's runs depend on the lanes beside them, and "
                "on n_jobs)")


def _whole_numbers(
    rows: np.ndarray, scratch: np.ndarray, same: np.ndarray, low: float, high: float, limit: float
) -> bool:
    """Every entry an integer, and (``low``, ``high`` being the extrema) of magnitude below
    ``limit`` (2^53 / T: then every sum of up to T of them is an exact integer, in any order)."""
    if not (-limit < low and high < limit):  # NaN fails too
        return False
    head = rows[:64]  # a slice of fractional costs shows it in its first rows: no full pass then
    if not np.equal(np.rint(head), head).all():
        return False
    np.rint(rows, out=scratch)
    return bool(np.equal(scratch, rows, out=same).all())


#: 1.0's bit pattern (0.0's is all zeros)
_ONE_BITS = np.float64(1.0).view(np.uint64)


def _zeros_and_ones(rows: np.ndarray, same: np.ndarray, other: np.ndarray) -> bool:
    """Every entry 0.0 or 1.0, judged on the bit patterns (two comparisons in cache): such a slice
    lies in a domain [0, high ≥ 1] and is whole, so it needs neither the domain's pass nor the
    whole-number test. Anything else (-0.0 included) answers False, and the slice is judged as
    before."""
    bits = rows.view(np.uint64)
    np.equal(bits, _ONE_BITS, out=same)
    np.equal(bits, 0, out=other)
    return bool(np.logical_or(same, other, out=same).all())


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
    # 0/1 costs (Bernoulli draws, the common case) in a domain [0, high >= 1]: one test for both
    zero_one = top is not None and d.high >= 1.0
    other = np.empty_like(same) if zero_one else None
    for i in range(lanes):
        full = state.full_rows(i, check=False)
        done = 0  # blocks ended so far in this lane
        for t0 in range(0, horizon, rows):
            t1 = min(horizon, t0 + rows)
            chunk = full[t0:t1]
            whole = zero_one and _zeros_and_ones(chunk, same[: t1 - t0], other[: t1 - t0])
            if whole:
                low, high = 0.0, 1.0
            elif top is not None and chunk.view(np.uint64).max() <= top:
                low, high = 0.0, d.high  # bounds rather than extrema: enough for the whole-number test
            else:
                low, high = float(chunk.min()), float(chunk.max())
                state.check_rows(chunk, t0, extrema=(low, high))
            # A slice of whole numbers (0/1 costs, say) sums exactly in any order: BLAS then gives
            # the sequential sums bit for bit, several times faster — the check costs two passes
            # in cache.
            exact = any_order or whole or _whole_numbers(chunk, scratch[: t1 - t0], same[: t1 - t0], low, high, limit)
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
        decided = _check_decided(block_cls.decide_batch(state.learners, totals[:, live], ends[live]), state.n, state.problem,
                                 steps=ends[live] + 1, time_axis=1)  # each decides the block from step end + 1
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


def _play(state: _Lanes, i: int, costs: np.ndarray | Drawn, t0: int) -> tuple[np.ndarray, np.ndarray]:
    """Lane ``i``'s actions for one chunk and the cost paid at each step (:func:`play_chunk`,
    with the lane's bandit feed and its pair's stream for mixed strategies)."""
    learner = state.learners[i]
    if is_bandit(learner) and state.feeds[i] is None:
        state.feeds[i] = BanditFeed(learner, state.n)
    sampler = state.samplers[i] if state.samplers else None
    return play_chunk(learner, costs, n=state.n, problem=state.problem, t0=t0, sampler=sampler, feed=state.feeds[i])


def _stepped(state: _Lanes) -> bool:
    """Whether the lanes' learners are stepped in Python, one act() and update() a step (no ``run``)."""
    return not callable(getattr(state.learners[0], "run", None))


def _play_told(state: _Lanes, i: int, costs: np.ndarray | Drawn, t0: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_play` for lane ``i`` of a chunk the lanes play one after another (steps t0+1…), the
    steps played so far then told to the progress reporter."""
    out = _play(state, i, costs, t0)
    state.played(t0 * len(state.learners) + (i + 1) * costs.shape[0])
    return out


def play_chunk(
    learner: Any, costs: np.ndarray | Drawn, *, n: int, problem: str, t0: int, sampler: np.random.Generator | None,
    feed: BanditFeed | None,
) -> tuple[np.ndarray, np.ndarray]:
    """A learner's actions on one chunk of costs (steps t0+1…) and the cost paid at each step.
    The learner gets its own copy of the chunk: one that writes into what it is given (zeroing it
    after reading, say) cannot change the costs the engine accounts with.

    A bandit learner (``feedback = "bandit"``) is played through its ``feed``
    (:class:`~replify.components.bandits.BanditFeed`): it sees c_t(a_t) only. A learner that plays mixed
    strategies (``mixed = True``: ``act()`` returns a probability vector over the experts, ``run`` a
    ``(L, n)`` array of them) is played by sampling each step's action by inversion from a uniform
    of ``sampler`` — the pair's own stream (part of R, shared by the two runs: replicability is
    judged on the actions played) — and pays the expected cost p_t·c_t."""
    if feed is not None:  # (costs may be a Drawn: the played arm's costs only, indexed as the array is)
        actions = feed.play(costs, t0)
        return actions, costs[np.arange(actions.size), actions]
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
        return _check_decided(actions, n, problem, source="learner.run()", steps=t0 + 1 + np.arange(costs.shape[0]),
                              time_axis=0)
    out = np.empty(costs.shape[0], dtype=np.int64) if problem == "experts" else np.empty_like(costs)
    act, update = learner.act, learner.update
    for t in range(costs.shape[0]):  # a black-box learner without run(): nothing to vectorise
        a = act()
        # the common case inline (an integer in range), the rest checked and named by check_action
        if problem == "experts" and type(a) in PLAIN_INTS and 0 <= a < n:
            out[t] = a
        else:
            out[t] = check_action(a, n=n, problem=problem, step=t0 + t + 1, source="learner.act()")
        update(costs[t])
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
            state.account_expected(np.array([[action]]), np.array([t]), np.array([t + steps]), lanes=slice(i, i + 1))
            piece_paid = np.cumsum(np.concatenate([paid, parts[:, action]]))[1:]
            state.checkpoints_at(hi, i, piece_paid, running)
            paid, cum = piece_paid[-1:], running[-1]
            starts.append(lo[:1])
            acts.append(np.array([action]))
        else:
            rows = np.empty((int(steps), n))
            state.draw_lane(i, t, t + steps, rows)
            actions, step_paid = _play(state, i, rows, t)
            # expected costs step by step, as the per-step path adds them (the same floats)
            state.account_expected(actions[None], np.arange(t, t + steps), np.arange(t + 1, t + steps + 1),
                                   lanes=slice(i, i + 1))
            state.checkpoints_inside(t, t + steps, paid, step_paid[None], cum[None], rows[None], lanes=slice(i, i + 1))
            paid = accumulate(paid, step_paid[None])
            cum = reduce_from(rows[None], cum[None], state.any_order)[0]
            change = np.concatenate([[0], np.flatnonzero(actions[1:] != actions[:-1]) + 1])
            starts.append(t + change)
            acts.append(actions[change])
        t += int(steps)
        state.played(i * horizon + t)  # the lanes run in order, each from step 0 to T
        if not np.isfinite(cum).all():  # the draws were refused at their step: an overflow is left
            raise CostError(f"the adversary's costs add up to a non-finite total by step {t}: they overflow double precision")
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
    per-step count array below ``limits.MAX_SEGMENTS`` steps."""
    horizon = state.horizon
    rows = max(1, min(budget, limits.PAIR_CHUNK_BYTES) // (state.n * 8))
    if _stepped(state):
        rows = min(rows, limits.STEPPED_CHUNK_ROWS)
    if state.disagree is not None:
        state.disagree_steps = np.zeros(horizon + 1, dtype=np.int32)
    for p in range(len(state.learners) // 2):
        (sa, aa), (sb, ab) = _play_lane(state, 2 * p, sums, rows), _play_lane(state, 2 * p + 1, sums, rows)
        starts = np.union1d(sa, sb)
        actions = np.stack([aa[np.searchsorted(sa, starts, side="right") - 1],
                            ab[np.searchsorted(sb, starts, side="right") - 1]])
        state.account_segments(actions, np.diff(np.append(starts, horizon)), starts, pair=p, expected=False)
    if state.disagree is not None:
        state.disagree = np.cumsum(state.disagree_steps[:-1], dtype=np.int32)


# -- batched bandit learners on an iid adversary: block sums ------------------------------------
