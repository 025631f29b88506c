"""Adversaries that show contexts (docs/contextual.md): the contextual path — every lane's contexts,
costs and means drawn chunk by chunk, the learners stepped on each step's context (in lanes when
their class offers it), regret against the best policy on the same draws — and what it holds such
an adversary to: fixed features checked once and shown read-only, ``fixed_contexts`` that its own
draws must show, and means that its costs must not contradict."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from replify.base.checks import as_float_array
from replify.components.bandit_lanes import LaneFeed, lane_form
from replify.components.blocks import reduce_from
from replify.components.contextual import ContextFeed, ContextLaneFeed, is_contextual, varying_contexts
from replify.engine import limits
from replify.engine.declarations import declared_bounds
from replify.engine.lanes import _Lanes
from replify.engine.outcomes import accumulate
from replify.engine.paths import _check_twin, _play_told, _stepped
from replify.errors import CostError, DeclarationError


def fixed_features(state: _Lanes, fixed: Any, d: int) -> np.ndarray:
    """An adversary's ``fixed_contexts``, checked once: finite, of shape (n, d), read-only."""
    if state._fixed is None:
        x = as_float_array("the adversary's fixed_contexts", fixed)
        if x.shape != (state.n, d) or not np.isfinite(x).all():
            raise CostError(f"the adversary's fixed_contexts must be finite features of shape ({state.n}, {d}); "
                            f"got shape {x.shape}")
        x = x.copy()
        x.flags.writeable = False
        state._fixed = x
        _probe_fixed(state, x)
    return state._fixed

def _probe_fixed(state: _Lanes, x: np.ndarray) -> None:
    """A declaration the paths rely on, held to the adversary's own draws: the contexts its
    ``sample_contexts`` shows at the first and last steps (drawn from a generator of their own,
    so that no lane's draws change) must be the ``fixed_contexts`` it declares — the block-sum
    path shows the declared ones and never draws a context."""
    sample = getattr(state.seq, "sample_contexts", None)
    if not callable(sample):
        return
    for start in sorted({0, max(0, state.horizon - 2)}):
        stop = min(state.horizon, start + 2)
        got = sample(np.random.default_rng(start), start, stop)
        if isinstance(got, tuple) and len(got) == 3:
            check_fixed(state, as_float_array("the adversary's sample_contexts(...)[0]", got[0]), start)

def check_means(state: _Lanes, costs: np.ndarray, means: np.ndarray, t0: int) -> None:
    """The means an adversary shows with its contexts, held to its own costs (lanes, L, n) for
    steps t0+1..: given each step's context a cost's mean is the mean shown, so per lane and arm
    S = Σ (cost − mean) is a martingale. With ``cost_bounds`` of width r its increments lie in a
    range of width r (Azuma–Hoeffding: P(|S| ≥ r·√(L·ln(2/δ)/2)) ≤ δ over L steps); with a
    declared ``noise_scale`` σ (sub-Gaussian noise) P(|S| ≥ σ·√(2L·ln(2/δ))) ≤ δ. The k-th
    test of a run spends δ = 10⁻⁶/(lanes·n·k(k+1)), so all of them together raise a false alarm
    with probability at most 10⁻⁶. An adversary that declares neither is not held."""
    lanes, rows, n = costs.shape
    bounds = getattr(state.seq, "cost_bounds", None)
    sigma = getattr(state.seq, "noise_scale", None)
    width = math.inf
    if bounds is not None:
        width = float(bounds[1]) - float(bounds[0])
    if state._mean_gap is None:
        state._mean_gap = np.zeros((lanes, n))
    state._mean_gap += (costs - means).sum(axis=1)
    state._mean_steps += rows
    state._mean_tests += 1
    k, steps = state._mean_tests, state._mean_steps
    log = math.log(2.0 * lanes * n * k * (k + 1) / 1e-6)
    # the tighter of the bounds the adversary's declarations give (each name kept for the message)
    held = {"cost_bounds": width * math.sqrt(steps * log / 2.0)}
    if isinstance(sigma, (int, float, np.floating)) and math.isfinite(sigma) and sigma > 0:
        held["noise_scale"] = float(sigma) * math.sqrt(2.0 * steps * log)
    source, limit = min(held.items(), key=lambda item: item[1])
    if not math.isfinite(limit):
        return
    worst = np.abs(state._mean_gap)
    if (worst > limit).any():
        i, a = (int(v) for v in np.unravel_index(int(np.argmax(worst)), worst.shape))
        raise DeclarationError(
            f"the adversary's means contradict its own costs: over steps 1..{t0 + rows}, arm {a}'s costs minus its "
            f"means add up to {float(state._mean_gap[i, a]):.4g} in one run, beyond the {limit:.4g} that costs with "
            f"those means could reach but with probability 1e-6 (from its declared {source}); sample_contexts must "
            "return each step's expected costs given its context")


def check_fixed(state: _Lanes, contexts: np.ndarray, t0: int) -> None:
    """Contexts an adversary that declares ``fixed_contexts`` drew for steps t0+1.., (L, n, d):
    each must be the declared one."""
    fixed = state._fixed
    if fixed is None or contexts.shape[1:] != fixed.shape:
        return
    differs = ~(contexts == fixed).all(axis=(1, 2))
    if differs.any():
        t = int(np.argmax(differs))
        raise DeclarationError(
            f"the adversary declares fixed_contexts (the same features at every step), but its sample_contexts "
            f"shows other contexts at step {t0 + t + 1} (largest difference {float(np.abs(contexts[t] - fixed).max()):.3g}); "
            "declare fixed_contexts only for an adversary whose contexts never change")


def _draw_contexts(state: _Lanes, t0: int, t1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every lane's contexts (lanes, L, n, d), costs and means (lanes, L, n) for steps t0+1..t1,
    each from the lane's own generator, checked: shapes, finite contexts and means, costs in the
    learner's domain."""
    lanes, n, rows = len(state.rngs), state.n, t1 - t0
    d = int(state.seq.d)
    fixed = getattr(state.seq, "fixed_contexts", None)
    # Fixed features are one (n, d) array, checked once: every lane and step is a view of it.
    contexts = None if fixed is None else np.broadcast_to(fixed_features(state, fixed, d), (lanes, rows, n, d))
    if contexts is None:
        contexts = np.empty((lanes, rows, n, d))
    costs, means = np.empty((lanes, rows, n)), np.empty((lanes, rows, n))
    source = f"the adversary's sample_contexts(rng, {t0}, {t1})"
    for i, rng in enumerate(state.rngs):
        got = state.seq.sample_contexts(rng, t0, t1)
        if not (isinstance(got, tuple) and len(got) == 3):
            raise CostError(f"{source} must return (contexts, costs, means); got {type(got).__name__}")
        x, c, m = (as_float_array(f"{source}[{k}]", v) for k, v in enumerate(got))
        if x.shape != (rows, n, d) or c.shape != (rows, n) or m.shape != (rows, n):
            raise CostError(f"{source} must return contexts of shape {(rows, n, d)} and costs and means of shape "
                            f"{(rows, n)}; got {x.shape}, {c.shape} and {m.shape}")
        if not np.isfinite(m).all() or (fixed is None and not np.isfinite(x).all()):
            raise CostError(f"{source} returned contexts or means that are not finite")
        if fixed is None:
            contexts[i] = x
        else:  # the contexts it declares are the ones shown: they must be the ones it draws
            check_fixed(state, x, t0)
        costs[i], means[i] = c, m
    state.check_rows(costs, t0)
    bounds = declared_bounds(state.seq)  # what a certificate may rely on (the contextual conversion's) is held to
    if bounds is not None and costs.size and not (costs.min() >= bounds[0] and costs.max() <= bounds[1]):
        worst = float(costs.min()) if costs.min() < bounds[0] else float(costs.max())
        raise CostError(f"the adversary declares cost_bounds {bounds}, but {source} drew the cost {worst!r}, outside them")
    check_means(state, costs, means, t0)  # regret is measured against the means: they must be the costs' own
    return contexts, costs, means


def _contextual(state: _Lanes, budget: int) -> None:
    """An adversary whose contexts change (docs/contextual.md): every lane's contexts, costs and
    means drawn chunk by chunk from its own generator; contextual learners see each step's context
    (in lanes when their class offers it), other learners play as on the per-step path. Regret and
    pseudo-regret are against the best policy — at each step the arm of least expected cost given
    its context — on these very draws; a pair's runs are compared by their policies when the
    learner names them (``policy()``), else by their arms."""
    lanes, n, horizon = len(state.learners), state.n, state.horizon
    d = int(state.seq.d)
    fixed = getattr(state.seq, "fixed_contexts", None) is not None  # then no per-lane copy of the contexts
    rows = max(1, budget // (lanes * n * (3 if fixed else d + 3) * 8))
    contextual = is_contextual(state.learners[0])
    form = lane_form(state.learners)
    feed = None if form is None else (ContextLaneFeed(form, n) if contextual else LaneFeed(form, n))
    cfeeds = [ContextFeed(lr, n) for lr in state.learners] if contextual and feed is None else None
    if feed is None and _stepped(state):
        rows = min(rows, limits.STEPPED_CHUNK_ROWS)
    # Fixed contexts (a linear bandit): regret against the best fixed arm, as on every other path;
    # contexts that change: against the best policy.
    changing = varying_contexts(state.seq)
    if changing:
        state.policy_paid, state.expected_best = np.zeros(lanes), np.zeros(lanes)
        state.expected_sums = None  # the means come with each step's context
    rows_of = np.arange(lanes)[:, None]
    for t0 in range(0, horizon, rows):
        t1 = min(horizon, t0 + rows)
        contexts, costs, means = _draw_contexts(state, t0, t1)
        policies, paid = None, None
        if contextual and feed is not None:
            actions, policies = feed.play(contexts, costs, t0, True)
            _check_twin(state, form, costs, actions, t0, contexts)
        elif contextual:
            played = []
            for i in range(lanes):  # lane by lane, each told to the progress reporter
                played.append(cfeeds[i].play(contexts[i], costs[i], t0, True))
                state.played(t0 * lanes + (i + 1) * (t1 - t0))
            actions = np.stack([a for a, _ in played])
            if all(p is not None for _, p in played):
                policies = np.stack([p for _, p in played])
        elif feed is not None:
            actions, paid = feed.play(costs, t0)
            _check_twin(state, form, costs, actions, t0)
        else:  # a mixed strategy pays its expected cost, as on the per-step path
            played = [_play_told(state, i, costs[i], t0) for i in range(lanes)]
            actions, paid = np.stack([a for a, _ in played]), np.stack([p for _, p in played])
        steps = np.arange(t1 - t0)
        if paid is None:
            paid = costs[rows_of, steps, actions]
        if changing:
            star = np.argmin(means, axis=-1)  # the best policy's arm (lowest index among ties)
            best_paid = costs[rows_of, steps, star]
            inside = state.checkpoints[(state.checkpoints > t0) & (state.checkpoints <= t1)]
            if inside.size:
                k = np.searchsorted(state.checkpoints, inside)
                running = np.cumsum(np.concatenate([state.paid[:, None], paid], axis=1), axis=1)
                state.curve_paid[:, k] = running[:, inside - t0]
                running = np.cumsum(np.concatenate([state.policy_paid[:, None], best_paid], axis=1), axis=1)
                state.curve_best[:, k] = running[:, inside - t0]
            state.policy_paid = accumulate(state.policy_paid, best_paid)
            state.expected_best = accumulate(state.expected_best, means.min(axis=-1))
        else:
            state.checkpoints_inside(t0, t1, state.paid, paid, state.cum, costs)
        if changing or state.expected_sums is not None:
            state.expected_paid = accumulate(state.expected_paid, means[rows_of, steps, actions])
        state.set_cum(reduce_from(costs, state.cum, state.any_order), t1)
        same = None
        if policies is not None:
            same = (policies[0::2] == policies[1::2]).all(axis=-1)
        state.paid = accumulate(state.paid, paid)
        state.account_segments(actions, np.ones(t1 - t0), np.arange(t0, t1), expected=False, same=same)
        state.played(t1 * lanes)
