"""The paired-run engine behind :func:`replify.evaluate` (paper §2; docs/evaluation.md).

Pair k builds its learner twice from one seed (the two runs share R) and runs the copies on two
independent draws of the adversary's costs. The engine runs many pairs at once as *lanes*
(lanes 2k and 2k+1 are pair k's two runs), streaming over time in chunks so that memory stays
bounded whatever the horizon:

* **per-step path** — each lane's costs are drawn chunk by chunk from its own generator (so a
  pair's results do not depend on which other pairs run with it, or where). For block
  learners of one class, each lane's chunk is drawn into a cache-sized buffer and folded into
  block sums at once (:func:`replify.components.blocks.fold_blocks`); the cost paid is a block's sum at
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
* **contextual path** — on an adversary that shows contexts (``sample_contexts``; docs/contextual.md)
  and for any contextual learner that is not on the block-sum path: every lane's contexts, costs and
  means drawn chunk by chunk, the learners stepped (in lanes when they offer it) on each step's
  context. Where the contexts change from step to step, every learner plays here, and regret is
  against the best policy on the same draws.
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

import numbers
import time
import warnings
from typing import Any, Callable, Sequence

import attrs
import numpy as np

from replify.base.checks import CostDomain, check_features, check_learner
from replify.components.bandits import is_bandit
from replify.components.bandit_lanes import offers_lanes
from replify.components.contextual import is_contextual, shows_contexts, varying_contexts
from replify.engine import limits
from replify.engine.declarations import AUDIT_SLOT, audit, audit_support
from replify.engine.lanes import _Lanes, _block_class
from replify.engine.outcomes import Outcomes
from replify.engine.cycles import check_cycles, cycle_learners, _cycles
from replify.engine.support import _support, checked_support, support_learners
from replify.engine.contexts import _contextual
from replify.engine.paths import _fast, _pair_by_pair, _per_step, _segment_learners
from replify.engine.played import audit_arm_law, played_law
from replify.errors import InvalidArgumentError, ReplifyWarning
from replify.base.randomness import DATA, INTERNAL, MIXED, Streams, child


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
    before = _global_state()
    with warnings.catch_warnings():
        # Every pair builds the same learner: a warning its parameters cause was shown once, by
        # the caller (evaluate builds one learner first); here it would repeat twice per pair.
        warnings.simplefilter("ignore", ReplifyWarning)
        out = _simulate(build, seq, n=n, horizon=horizon, root=root, pair_ids=pair_ids, fast_path=fast_path,
                        action_set=action_set, budget=budget, progress=progress, domain=domain)
    if _global_state() != before:
        _refuse_global_draws(seq, horizon)
    return out


def _global_state() -> tuple[int, int, bytes]:
    """Where numpy's global random state stands (its position and key), to see whether anything drew
    from it: every draw the engine asks for comes from the generators it hands out."""
    state = np.random.get_state(legacy=False)["state"]
    key = np.asarray(state["key"])
    return int(state["pos"]), int(key[0]), key.tobytes()


def _refuse_global_draws(seq: Any, horizon: int) -> None:
    """numpy's global random state moved during the run: its pairs are not independent draws of one
    law and cannot be reproduced from the seed. Say who drew from it (a small draw of the adversary
    alone: if it does not move the state, the learner did) and refuse the results."""
    rng = np.random.default_rng(0)
    before = _global_state()
    stop = min(horizon, 2)
    for method, args in (("sample_contexts", (rng, 0, stop)), ("sample_chunk", (rng, 0, stop)), ("sample", (rng,))):
        if callable(getattr(seq, method, None)):
            getattr(seq, method)(*args)
            break
    who = (f"the adversary ({type(seq).__name__})" if _global_state() != before
           else "the learner (or code it calls)")
    raise InvalidArgumentError(
        f"{who} drew from numpy's global random state (np.random.random, np.random.seed, ...) during the run instead of "
        "only from the rng it is handed: its pairs would not be independent draws of one law, and the run could not be "
        "reproduced from its seed; draw every random number from the generator replify hands it")


def _simulate(
    build: Callable[[np.random.SeedSequence], Any], seq: Any, *, n: int, horizon: int, root: np.random.SeedSequence,
    pair_ids: Sequence[int], fast_path: bool | None, action_set: Any, budget: int | None,
    progress: Callable[[int, int], None] | None, domain: CostDomain | None,
) -> Outcomes:
    budget = limits.MEMORY_BUDGET if budget is None else budget
    if shows_contexts(seq) or getattr(seq, "fixed_contexts", None) is not None:
        check_features(seq, n=n, budget=limits.MEMORY_BUDGET)  # its d, which the paths size their arrays by
    parts = []
    disagree = None  # summed group by group: one array per worker, whatever the number of pairs
    # An adversary that can only draw whole sequences (``sample(rng)``, the documented minimum)
    # runs one pair at a time: its lanes' (T, n) draws are alive only while their pair runs, so
    # peak memory is two sequences (plus O(blocks·n)) whatever the number of pairs. Block
    # learners fold each lane's draw into block sums and free it before the next lane draws, so
    # for them groups grow again once the first pair has shown what the learners are: as many
    # pairs as keep a group's block sums within limits.WHOLE_SLICE_BYTES (per-pair costs amortised).
    whole = not callable(getattr(seq, "sample_chunk", None))
    group = 1 if whole else limits.MAX_GROUP_PAIRS
    # Learners that play in lanes (bandit learners offering for_lanes) take one numpy operation
    # per step across a group: one learner, built first, says whether they do, and groups grow.
    lanes = bool(pair_ids) and offers_lanes(build(child(root, INTERNAL, pair_ids[0])))
    if lanes:
        per_pair = 2 * horizon * n * 8  # a whole-sequence adversary's two draws
        group = min(limits.LANE_GROUP_PAIRS, max(1, limits.WHOLE_LANES_BYTES // per_pair)) if whole else limits.LANE_GROUP_PAIRS
    g0 = 0
    audited = False  # the adversary's declarations, looked at once (the first group's path is every group's)
    while g0 < len(pair_ids):
        ids = list(pair_ids[g0 : g0 + group])
        learners, rngs, samplers = [], [], []
        for k in ids:
            pair_seed = child(root, INTERNAL, k)
            for side in (0, 1):
                learner = check_learner(build(pair_seed), source="the learner callable")
                _check_sizes(learner, n=n, horizon=horizon)
                learners.append(learner)
                rngs.append(np.random.default_rng(child(root, DATA, k, side)))
                # a mixed strategy's draws: one stream per pair, the same for its two runs (part of R)
                samplers.append(np.random.default_rng(child(root, INTERNAL, k, MIXED)))
        contextual = is_contextual(learners[0])
        if contextual and not shows_contexts(seq):
            raise InvalidArgumentError(
                f"{type(learners[0]).__name__} is a contextual learner (problem='contextual'): it needs an adversary that "
                f"shows contexts (sample_contexts: linear-gaussian, linear-bernoulli, classification-bandit, ...); got "
                f"{type(seq).__name__}"
            )
        # Contexts that change: every learner plays on the contextual path (regret against the best policy).
        changing = varying_contexts(seq)
        if changing and getattr(learners[0], "needs_fixed_contexts", False):
            raise InvalidArgumentError(
                f"{type(learners[0]).__name__} is for a linear bandit with fixed features (needs_fixed_contexts = True); "
                f"{type(seq).__name__} shows contexts that change from step to step"
            )
        block_cls = None if changing else _block_class(learners)
        state = _Lanes(learners, rngs, seq, samplers=samplers, n=n, horizon=horizon, action_set=action_set,
                       block=learners[0].block_size if block_cls is not None else None,
                       domain=getattr(learners[0], "domain", None) or domain,
                       reference=np.repeat([constant_expert(child(root, INTERNAL, k), n) for k in ids], 2))
        if progress is not None:
            state.on_steps = _StepProgress(progress, g0, len(ids), len(pair_ids))
        if lanes and g0 == 0:  # the lane form checked against stepping (engine.paths)
            state.twin = [(i, check_learner(build(child(root, INTERNAL, ids[i // 2])), source="the learner callable"))
                          for i in (0, len(learners) - 1)]  # the first lane and the last
        segmented = block_cls is None and not changing and _segment_learners(learners)
        cycles, why = (False, "") if block_cls is not None or segmented or changing else \
            cycle_learners(learners, seq, state.domain, horizon)
        support, why_support = support_learners(learners, seq, horizon) if changing else (False, "")
        can_fast = ((block_cls is not None or segmented) and callable(getattr(seq, "sample_sums", None))) or cycles \
            or support
        if fast_path and not can_fast:
            bandit = is_bandit(learners[0])
            raise InvalidArgumentError(
                "fast_path=True needs block learners (the paper's replicable algorithms, iid-experts or a wrapped learner) "
                "and an adversary that can draw block sums (sample_sums), or batched bandit learners (next_cycle, "
                "observe_sums) and an iid or piecewise-iid adversary with sample_sums and cost_bounds in the learner's "
                f"domain, or learners that commit stretch by stretch (next_stretch, observe_stretch) on an adversary of "
                f"finite support (context_support); got {type(learners[0]).__name__} and {type(seq).__name__}"
                + (f": {why}" if bandit and why and not changing else f": {why_support}" if changing else "")
            )
        use_fast = can_fast and fast_path is not False
        if (cycles or support) and fast_path is None and horizon * n < limits.CYCLE_MIN_COSTS:
            use_fast = False  # short runs: drawing every step is cheaper than the block-sum path's overhead
        if not audited:
            # What the path about to be taken trusts, looked at on a cheap sample of the audit's own
            # stream (the pairs' draws are untouched): the block-sum path of batched bandit
            # learners trusts iid/law_changes and cost_bounds, a pseudo-regret expected_sums.
            audit(seq, n=n, horizon=horizon, rng=np.random.default_rng(child(root, AUDIT_SLOT)),
                  same_law=use_fast and (cycles or support), expected=state.expected_sums is not None)
            if not use_fast and all(is_bandit(lr) for lr in learners) and played_law(seq, horizon, state.domain):
                # the arms' declared law, held to the adversary's draws, before only the played arm is drawn
                audit_arm_law(seq, n=n, horizon=horizon, rng=np.random.default_rng(child(root, AUDIT_SLOT, 2)))
            if use_fast and support:  # the declared rows and weights, held to the adversary's draws
                audit_support(seq, checked_support(state), n=n, horizon=horizon,
                              rng=np.random.default_rng(child(root, AUDIT_SLOT, 1)))
            audited = True
        if block_cls is not None:
            state.start_blocks()
        if use_fast and support:
            _support(state)
        elif changing or (contextual and not (use_fast and cycles)):
            _contextual(state, budget)
        elif use_fast and cycles:
            if g0 == 0:  # the round robins checked against stepping, on a stream of their own (engine.cycles)
                check_cycles(state, tuple(check_learner(build(child(root, INTERNAL, ids[0])), source="the learner callable")
                                          for _ in range(2)), np.random.default_rng(child(root, AUDIT_SLOT, 3)))
            _cycles(state)
        elif use_fast and segmented:
            _pair_by_pair(state, True, budget)
        elif use_fast:
            _fast(state, block_cls, budget)
        elif whole and block_cls is None and not lanes:
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
                cost_range=_cost_range(state.domain),
            )
        )
        if state.disagree is not None:
            disagree = state.disagree if disagree is None else disagree + state.disagree
        if progress is not None:
            progress(g0 + len(ids), len(pair_ids))
        g0 += len(ids)
        if whole and block_cls is not None and not use_fast:
            per_pair = 2 * 2 * -(-horizon // learners[0].block_size) * n * 8  # sums and totals of two lanes
            group = int(min(limits.MAX_GROUP_PAIRS, max(1, limits.WHOLE_SLICE_BYTES // per_pair)))
    return attrs.evolve(Outcomes.concatenate(parts), disagreement=disagree)


class _StepProgress:
    """Inside a group of pairs, ``progress(done, total)`` with ``done`` the pairs before the group
    plus the group's share of steps played (a fraction of a pair's worth), at most every
    ``limits.PROGRESS_SECONDS``: a learner stepped in Python shows how far it is, and so the time
    left, long before its first pair ends."""

    def __init__(self, progress: Callable[[float, int], None], before: int, size: int, total: int) -> None:
        self.progress, self.before, self.size, self.total = progress, before, size, total
        self.last = time.monotonic()

    def __call__(self, fraction: float) -> None:
        now = time.monotonic()
        if now - self.last >= limits.PROGRESS_SECONDS and fraction < 1.0:
            self.last = now
            self.progress(self.before + self.size * fraction, self.total)


def constant_expert(pair_seed: np.random.SeedSequence, n: int) -> int:
    """The expert ``constant`` plays in a pair whose seed is ``pair_seed``: the first draw of R (the
    pair's ``internal`` stream, as :func:`replify.make` hands it), ``integers(n)``. The learning gain
    compares a learner with this expert on the same draws and the same R, so that ``constant``
    against itself gains exactly 0."""
    return int(Streams.from_seed(pair_seed).internal.integers(n))


def _check_sizes(learner: Any, *, n: int, horizon: int) -> None:
    """A built learner's ``n`` and ``horizon`` attributes, when it has them, must be the integers
    evaluate() runs with: a learner built for other sizes, or one holding the string '4', would
    otherwise be scored at sizes it was not built for."""
    for attr, expected in (("n", n), ("horizon", horizon)):
        got = getattr(learner, attr, expected)
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Integral):
            # compared as they are, '4' and 4 differ, and the message read "built with n=4, but given n=4"
            raise InvalidArgumentError(
                f"learner has {attr}={got!r} ({type(got).__name__}); expected the integer {attr}={expected} that "
                f"evaluate() was given: build it with the integer {attr}"
            )
        if got != expected:
            raise InvalidArgumentError(f"learner built with {attr}={got}, but evaluate() was given {attr}={expected}")


def _cost_range(domain: CostDomain | None) -> tuple[float, float] | None:
    """The range the engine held every cost to: the learner's declared domain (every drawn chunk
    and every block sum is checked against it), when it is finite."""
    if domain is None or not (np.isfinite(domain.low) and np.isfinite(domain.high)):
        return None
    return float(domain.low), float(domain.high)
