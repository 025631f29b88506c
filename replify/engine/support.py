"""The finite-support path (docs/contextual.md, "Contexts of finite support"): an adversary whose
every step is one of finitely many rows — its context, costs and means fixed by the row — drawn
independently with fixed probabilities (a bootstrapped data set: ``classification-bandit``), and
learners that commit each stretch of steps before it is played, are played without stepping.

**The protocols.** The adversary declares ``iid = True`` and ``context_support() -> (contexts,
costs, means)``, shapes (R, n, d), (R, n) and (R, n), and optionally ``support_weights`` (R,), the
rows' probabilities (uniform by default). The learner has ``next_stretch(contexts) -> (kind, arms,
length)``: ``kind == "cycle"``, a round robin over ``arms`` (its j-th step plays ``arms[j % k]``,
whatever the row), ``kind == "pulls"``, ``arms`` a function ``size -> counts`` giving each arm's
number of steps among the stretch's next ``size`` (arms drawn independently of the rows, by the
learner: uniform arms from R, say; called piece by piece, in order), or
``kind == "policy"``, ``arms`` of shape (R,) the arm it plays on each row —
for the next ``length`` steps; then ``observe_stretch(counts, costs)``: ``counts`` (n, R) how often
each arm was played on each row, ``costs`` (n, R) the cost it paid there (NaN where it never played:
what it saw, and nothing else).

**Exact in law.** The rows of a stretch's steps are independent draws; on a round robin the arm of
each step is fixed in advance, so the rows of arm a's L_a steps are Multinomial(L_a, w) counts,
independent across arms (for ``"pulls"``, each piece's pulls are the learner's own draws); on a
policy stretch the rows are Multinomial(L, w) and each row's arm is the
policy's. The stretch is drawn piece by piece between the report's checkpoints (independent steps:
the pieces' counts are independent multinomials), so the regret curve is exact too. Regret and
pseudo-regret are against the best policy (the arm of least mean on each row), on these draws.
The two runs of a pair are compared by the learner's ``policy()`` at the start of each stretch,
over the steps the stretches overlap, as the per-step path compares them step by step: a learner
that names no policy is played on the per-step path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from replify.base.checks import as_float_array
from replify.components.contextual import _policy_of
from replify.engine.cycles import _round_robin_pulls
from replify.engine.declarations import declared_pieces
from replify.engine.lanes import _Lanes
from replify.errors import ActionError, CostError, InvalidArgumentError


#: what a stretch may be (module docstring)
KINDS = ("cycle", "pulls", "policy")


def support_learners(learners: list, seq: Any, horizon: int) -> tuple[bool, str]:
    """Whether the finite-support path can play these learners on ``seq``, and if not why."""
    if not all(callable(getattr(lr, "next_stretch", None)) and callable(getattr(lr, "observe_stretch", None))
               for lr in learners):
        return False, "the learner has no next_stretch() and observe_stretch()"
    if not all(callable(getattr(lr, "policy", None)) for lr in learners):
        # where contexts change, runs are compared by their policies, or step by step by their arms,
        # which no stretch of counts can say: a learner naming no policy is played step by step
        return False, "the learner names no policy() (its runs are compared step by step, by their arms)"
    name = type(seq).__name__
    if not callable(getattr(seq, "context_support", None)):
        return False, f"{name} declares no context_support()"
    pieces = declared_pieces(seq, horizon)
    if pieces is None or len(pieces) != 1:
        return False, f"{name} does not declare iid = True"
    return True, ""


def checked_support(state: _Lanes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The adversary's support (contexts (R, n, d), costs (R, n), means (R, n), weights (R,)),
    checked once: shapes, finite values, costs in the learner's domain, weights a distribution."""
    seq, n = state.seq, state.n
    got = seq.context_support()
    source = f"{type(seq).__name__}.context_support()"
    if not (isinstance(got, tuple) and len(got) == 3):
        raise CostError(f"{source} must return (contexts, costs, means); got {type(got).__name__}")
    try:  # copies: the adversary's own arrays stay as they are (the path makes its contexts read-only)
        x, c, m = (np.array(as_float_array(f"{source}[{k}]", v)) for k, v in enumerate(got))
    except ValueError as exc:  # a ragged entry
        raise CostError(f"{source} must return arrays (contexts (R, {n}, d), costs and means (R, {n})): {exc}") from None
    rows = c.shape[0] if c.ndim == 2 else -1
    if x.ndim != 3 or x.shape[:2] != (rows, n) or c.shape != (rows, n) or m.shape != (rows, n) or rows < 1:
        raise CostError(f"{source} must return contexts (R, {n}, d), costs and means (R, {n}); got {x.shape}, {c.shape} "
                        f"and {m.shape}")
    if not (np.isfinite(x).all() and np.isfinite(c).all() and np.isfinite(m).all()):
        raise CostError(f"{source} returned contexts, costs or means that are not finite")
    state.check_rows(c[None], 0)
    w = getattr(seq, "support_weights", None)
    w = np.full(rows, 1.0 / rows) if w is None else as_float_array(f"{type(seq).__name__}.support_weights", w)
    if w.shape != (rows,) or (w < 0).any() or not abs(w.sum() - 1.0) <= 1e-9:
        raise CostError(f"{type(seq).__name__}.support_weights must be {rows} probabilities adding up to 1; got shape "
                        f"{w.shape}, sum {float(w.sum()) if w.size else 0.0:g}")
    x.flags.writeable = False
    return x, c, m, w / w.sum()


def checked_stretch(got: Any, *, n: int, rows: int, left: int, step: int, name: str) -> tuple[str, Any, int]:
    """What ``next_stretch()`` returned, checked: ``(kind, arms, length)``."""
    if not (isinstance(got, (tuple, list)) and len(got) == 3 and got[0] in KINDS):
        raise InvalidArgumentError(f"{name}.next_stretch() at step {step} must return (kind, arms, length) with kind "
                                   f"one of {KINDS}; got {got!r:.120}")
    kind, length = got[0], got[2]
    if isinstance(length, (bool, np.bool_)) or not (isinstance(length, (int, np.integer)) and 1 <= length <= left):
        raise InvalidArgumentError(f"{name}.next_stretch() at step {step} must give an integer length in 1..{left}; "
                                   f"got {length!r}")
    if kind == "pulls":  # a function: each arm's pulls over the next `size` steps, drawn from the learner's R
        if not callable(got[1]):
            raise ActionError(f"{name}.next_stretch() at step {step} must give 'pulls' as a function size -> each arm's "
                              f"pulls over that many steps; got {got[1]!r:.120}")
        return kind, got[1], int(length)
    try:
        arms = np.asarray(got[1])
    except ValueError:  # a ragged list
        raise ActionError(f"{name}.next_stretch() at step {step} must give its arms as a 1-d integer array; got "
                          f"{got[1]!r:.120}") from None
    shape_ok = arms.ndim == 1 and arms.size > 0 if kind == "cycle" else arms.shape == (rows,)
    if not shape_ok or arms.dtype.kind not in "iu" or arms.min() < 0 or arms.max() >= n:
        want = "a non-empty 1-d array of arms" if kind == "cycle" else f"an arm for each of the {rows} rows"
        raise ActionError(f"{name}.next_stretch() at step {step} must give {want}, integers in [0, {n}); got "
                          f"{arms!r:.120}")
    return kind, arms.astype(np.int64), int(length)


def _pulls(got: Any, n: int, size: int, name: str, step: int) -> np.ndarray:
    a = np.asarray(got)
    if a.shape != (n,) or a.dtype.kind not in "iu" or a.min() < 0 or int(a.sum()) != size:
        raise ActionError(f"{name}.next_stretch()'s pulls function (stretch from step {step}) must give {n} "
                          f"non-negative integer counts adding up to {size}; got {got!r:.120}")
    return a.astype(np.int64)


def _support_lane(state: _Lanes, i: int, support: tuple) -> list[tuple[int, Any]]:
    """Run lane ``i`` alone, stretch by stretch (module docstring); returns (start, key) per stretch,
    the key its two runs are compared by."""
    x, c, m, w = support
    lr, rng, n, horizon = state.learners[i], state.rngs[i], state.n, state.horizon
    name, rows = type(lr).__name__, c.shape[0]
    star = np.argmin(m, axis=1)  # the best policy's arm on each row (lowest index among ties)
    best_cost, best_mean = c[np.arange(rows), star], m[np.arange(rows), star]
    paid = best = exp_paid = exp_best = 0.0
    cum, pulls = np.zeros(n), np.zeros(n)
    stretches: list[tuple[int, Any]] = []
    t = 0
    while t < horizon:
        key = _policy_of(lr, None, name, t + 1)
        if key is None:
            raise InvalidArgumentError(f"{name}.policy() at step {t + 1} returned None: on the finite-support path the "
                                       "two runs are compared by the policies they name; return the rule in force")
        kind, arms, length = checked_stretch(lr.next_stretch(x), n=n, rows=rows, left=horizon - t, step=t + 1, name=name)
        stops = np.union1d(state.checkpoints[(state.checkpoints > t) & (state.checkpoints < t + length)], [t + length])
        begins = np.concatenate([[t], stops[:-1]])
        if kind != "policy":  # each piece's pulls per arm, then each arm's rows: (pieces, n, R)
            if kind == "cycle":
                per_arm = _round_robin_pulls(arms, begins - t, stops - t, n)
            else:  # the learner's own draws, piece by piece (a loop over the few checkpoints)
                per_arm = np.stack([_pulls(arms(size), n, size, name, t + 1) for size in (stops - begins).tolist()])
            counts = rng.multinomial(per_arm.ravel(), w).reshape(len(stops), n, rows)
        else:  # each piece's rows, played with the policy's arm of each row
            row_counts = rng.multinomial(stops - begins, w)  # (pieces, R)
            counts = np.zeros((len(stops), n, rows), dtype=np.int64)
            counts[:, arms, np.arange(rows)] = row_counts
        rows_seen = counts.sum(axis=1)  # (pieces, R)
        run_paid = paid + np.cumsum(np.einsum("pnr,rn->p", counts, c))
        run_best = best + np.cumsum(rows_seen @ best_cost)
        k = np.searchsorted(state.checkpoints, stops)
        hit = k < state.checkpoints.size
        hit[hit] = state.checkpoints[k[hit]] == stops[hit]
        state.curve_paid[i, k[hit]], state.curve_best[i, k[hit]] = run_paid[hit], run_best[hit]
        paid, best = float(run_paid[-1]), float(run_best[-1])
        exp_paid += float(np.einsum("pnr,rn->", counts, m))
        exp_best += float(rows_seen.sum(axis=0) @ best_mean)
        total = counts.sum(axis=0)  # (n, R)
        cum += rows_seen.sum(axis=0) @ c
        pulls += total.sum(axis=1)
        lr.observe_stretch(total, np.where(total > 0, c.T, np.nan))
        stretches.append((t, key))
        t += length
    state.paid[i], state.cum[i], state.expected_paid[i] = paid, cum, exp_paid
    state.policy_paid[i], state.expected_best[i] = best, exp_best
    if state.counts is not None:
        state.counts[i] = pulls
    return stretches


def _agreement(a: list, b: list, horizon: int, edges: np.ndarray) -> tuple[float, int, np.ndarray]:
    """The steps on which two runs' stretches carry the same key, their first difference (1-based,
    0 if none) and the agreeing steps in each time bin of ``edges``."""
    starts = np.union1d([s for s, _ in a], [s for s, _ in b])
    stops = np.append(starts[1:], horizon)
    ia = np.searchsorted([s for s, _ in a], starts, side="right") - 1
    ib = np.searchsorted([s for s, _ in b], starts, side="right") - 1
    total, first, curve = 0.0, 0, np.zeros(edges.size - 1)
    for s, e, ja, jb in zip(starts.tolist(), stops.tolist(), ia.tolist(), ib.tolist()):
        ka, kb = a[ja][1], b[jb][1]
        if ka.shape == kb.shape and np.array_equal(ka, kb):
            total += e - s
            curve += np.clip(edges[1:], s, e) - np.clip(edges[:-1], s, e)
        elif first == 0:
            first = s + 1
    return total, first, curve


def _support(state: _Lanes) -> None:
    """Learners that commit stretch by stretch on an adversary of finite support, pair by pair
    (module docstring). The per-step disagreement counts are not kept on this path."""
    support = checked_support(state)
    lanes = len(state.learners)
    state.disagree = None
    state.expected_sums = None
    state.policy_paid, state.expected_best = np.zeros(lanes), np.zeros(lanes)
    for p in range(lanes // 2):
        a, b = _support_lane(state, 2 * p, support), _support_lane(state, 2 * p + 1, support)
        agree, first, curve = _agreement(a, b, state.horizon, state.edges)
        state.agree[p], state.first[p] = agree, first
        state.curve += curve
        state.played((2 * p + 2) * state.horizon)
