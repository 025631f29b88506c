"""Replicability of logged decisions, measured (docs/offpolicy.md): :func:`replicability`, how often
two independent logs make different decisions over many pairs, as a
:class:`~replify.evaluation.report.Report`, and :func:`parting_probability`, the probability over R
that two given logs' decisions differ, computed exactly over the grid's offset and R's order — the
attacks' currency, averaged over pairs of logs drawn in law. The decisions and their certificates
are :mod:`replify.offpolicy.select`'s."""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from replify.base.randomness import child, Seed, seed_sequence
from replify.errors import InvalidArgumentError
from replify.evaluation.report import Report
from replify.offpolicy.log import Log
from replify.components.grid import LADDER_STEP
from replify.offpolicy.select import Replicable, _baseline, _width


#: The quadrature points over the ladder's offset v in :func:`parting_probability` (midpoints).
LADDER_POINTS = 64


def parting_probability(a: Replicable, b: Replicable) -> float:
    """P over R that two logs' decisions differ, given the two logs: exact over the grid's offset u
    and R's order of the candidates, by quadrature (``LADDER_POINTS`` midpoints) over the ladder's
    offset v. The choice on each log is the R-first of its least cell, S on one log and S′ on the
    other, so given u they differ with probability 1 − |S ∩ S′|/|S ∪ S′| (with an incumbent i: 0 where
    both hold it, 1 where one does; :mod:`replify.offpolicy.select`'s docstring); the
    cells change only where u crosses a fractional part of an estimate over the width, so the
    integral over u is a finite sum. Two values differ where their ladder index or cell does.
    Averaged over pairs of logs drawn in law, this is the decision's parting probability with the
    randomness of R integrated out: what the attacks in docs/offpolicy.md report."""
    if (a.chosen is None) != (b.chosen is None) or np.size(a.estimates) != np.size(b.estimates):
        raise InvalidArgumentError("parting_probability compares two decisions of one kind: two values, or two "
                                   "selections among the same candidates")
    if (a.rho_bound, a.factor, a.cost_range, a.min_rows, a.incumbent, a.variance) != (
            b.rho_bound, b.factor, b.cost_range, b.min_rows, b.incumbent, b.variance):
        raise InvalidArgumentError("parting_probability compares decisions made with the same rho, candidates, cost "
                                   "range, min_rows and incumbent (what two runs share)")
    base = _baseline(*a.cost_range)
    d = [np.atleast_1d(np.asarray(o.estimates, dtype=np.float64)) - base for o in (a, b)]
    raws = [o.factor * o.s / (o.rho_cells or o.rho_bound) for o in (a, b)]
    if a.ladder is not None:  # midpoints on the pieces of [0, 1) where neither ladder index changes (the rungs'
        # breakpoints are the fractional parts of log2(raw)/h: splitting there makes the index exact)
        cuts = np.unique(np.r_[0.0, [np.mod(math.log2(r) / LADDER_STEP, 1.0) for r in raws], 1.0])
        per = max(2, LADDER_POINTS // (cuts.size - 1))
        vs = np.concatenate([lo_ + (hi_ - lo_) * (np.arange(per) + 0.5) / per for lo_, hi_ in zip(cuts[:-1], cuts[1:])])
        dv = np.concatenate([np.full(per, (hi_ - lo_) / per) for lo_, hi_ in zip(cuts[:-1], cuts[1:])])
    else:
        vs, dv = np.array([0.0]), np.array([1.0])
    (wa, ka), (wb, kb) = (zip(*(_width(r, float(v), a.ladder is not None) for v in vs)) for r in raws)
    x = [d[0][None, :] / np.array(wa)[:, None], d[1][None, :] / np.array(wb)[:, None]]  # (V, K) each
    ends = np.broadcast_to([0.0, 1.0], (vs.size, 2))
    cuts = np.sort(np.concatenate([ends, np.mod(x[0], 1.0), np.mod(x[1], 1.0)], axis=1), axis=1)  # (V, 2K + 2)
    mids, lengths = (cuts[:, 1:] + cuts[:, :-1]) / 2.0, np.diff(cuts, axis=1)  # u's segments, on each v
    cells = [np.floor(xi[:, None, :] - mids[:, :, None]) for xi in x]  # (V, segments, K)
    if a.chosen is None:  # a value: its ladder index and cell
        apart = (np.array(ka, dtype=object) != np.array(kb, dtype=object))[:, None] | (cells[0][..., 0] != cells[1][..., 0])
    else:
        least = [c == c.min(axis=2, keepdims=True) for c in cells]
        apart = 1.0 - (least[0] & least[1]).sum(axis=2) / (least[0] | least[1]).sum(axis=2)
        if a.incumbent is not None:  # kept where it is in the least cell: both keep it, or one does, or R's order
            i = a.incumbent
            kept = [s_[..., i] for s_ in least]
            apart = np.where(kept[0] & kept[1], 0.0, np.where(kept[0] | kept[1], 1.0, apart))
    return float(np.sum(dv * np.sum(lengths * apart, axis=1)))


def _error(outcome: Replicable) -> tuple[float, bool]:
    """A decision's error, and whether it is against the truth: a choice's true value minus the
    best candidate's, a value's distance from the true value — against the log's own unrounded
    estimates where the truth is not known (what rounding cost)."""
    known = outcome.true_values is not None
    ref = outcome.true_values if known else outcome.estimates
    if outcome.chosen is not None:
        return float(ref[outcome.chosen] - np.min(ref)), known
    return abs(float(outcome.value) - float(ref)), known


def replicability(logs: Callable[[np.random.SeedSequence], Log] | tuple[Callable[[np.random.SeedSequence], Log],
                                                                         Callable[[np.random.SeedSequence], Log]] | Log,
                  decide: Callable[[Log, Any], Replicable], *, pairs: int | np.integer, seed: Seed,
                  confidence: float = 0.95) -> Report:
    """How often two independent logs make different decisions: ``pairs`` pairs, one R a pair, as a
    :class:`~replify.evaluation.report.Report` — ``rho_hat``, its exact interval ``rho_ci``
    (Clopper–Pearson), ``claim``, ``to_dict`` — as :func:`replify.evaluate` reports paired runs of a
    learner.

    ``logs``: a function ``draw_log(seed)`` returning a log, called with a
    :class:`numpy.random.SeedSequence` (pass it on as a seed: ``Log.simulate(..., seed=seed)``, or
    ``numpy.random.default_rng(seed)``; two independent seeds a pair: simulated logs); or a pair of
    such functions, the first drawing each pair's first log and the second its second (two
    systems, or two weeks of one, whose logs may differ in size); or one :class:`Log` — a real log,
    whose rows :meth:`Log.split` deals at random into 2·``pairs`` disjoint parts, pair i being
    parts 2i and 2i + 1: independent logs of the same system where its rows are iid, each of
    rows/(2·pairs) interactions. ``decide(log, R)`` receives R as a ``SeedSequence`` too, shared by
    the pair.

    In the report, ``identical`` says per pair whether the two decisions agree (compared exactly:
    :attr:`Replicable.key`), ``regret`` holds each log's error (a choice's true value minus the best
    candidate's; a value's distance from the true value — on a log that does not know its true
    values, from the log's own unrounded estimate, and ``params["regret"]`` says which),
    ``horizon`` the rows of a log, ``n`` its arms, ``params`` the certificate's ρ, its bound over
    these pairs ``rho_bound`` (ρ, plus the width's ladder where the pairs' sizes differ:
    :meth:`Replicable.rho_between`), the width, whether every decision was certified, how often
    each candidate was chosen (``chosen``: a selection), and a ``caveat`` where the grid is wider
    than the cost range (the decisions are then R's more than the data's, and agreement says
    little)."""
    if isinstance(pairs, (bool, np.bool_)) or not isinstance(pairs, numbers.Integral) or pairs < 1:
        raise InvalidArgumentError(f"pairs must be an integer >= 1; got {pairs!r}")
    pairs = int(pairs)
    if not callable(decide):
        raise InvalidArgumentError(f"decide must be a function (log, R) -> a replicable value or choice; got "
                                   f"{type(decide).__name__}")
    root = seed_sequence(seed)
    split_seed, pair_seeds = child(root, 0), child(root, 1)  # the caller's SeedSequence is never moved
    if isinstance(logs, Log):
        if logs.rows < 2 * pairs:
            raise InvalidArgumentError(f"pairs={pairs}: {logs.name} has {logs.rows} rows, fewer than the 2 x {pairs} "
                                       "parts the pairs need (one row a part at least)")
        parts = logs.split(2 * pairs, seed=split_seed)
        draw = lambda k, _s: parts[k]  # noqa: E731
    elif isinstance(logs, tuple) and len(logs) == 2 and all(callable(f) for f in logs):
        draw = lambda k, s: logs[k % 2](s)  # noqa: E731
    elif callable(logs):
        draw = lambda _k, s: logs(s)  # noqa: E731
    else:
        raise InvalidArgumentError(f"logs must be a function seed -> Log (simulated logs), a pair of them (each pair's "
                                   f"first and second log), or a Log (a real log, split into independent parts); got "
                                   f"{type(logs).__name__}")
    same, errors, known, outcomes, first, bounds = [], [], True, [], None, []
    for i, pair in enumerate(pair_seeds.spawn(pairs)):
        r, s_a, s_b = pair.spawn(3)
        got = []
        for k, s in ((2 * i, s_a), (2 * i + 1, s_b)):
            log = draw(k, s)
            if not isinstance(log, Log):
                raise InvalidArgumentError(f"logs(seed) must return a replify.offpolicy.Log; got {type(log).__name__}")
            first = first or log
            out = decide(log, r)
            if not isinstance(out, Replicable):
                raise InvalidArgumentError(f"decide must return a replicable value or choice (replicable_value, "
                                           f"select); got {type(out).__name__}")
            err, truth = _error(out)
            known &= truth
            got.append(out)
            errors.append(err)
        a, b = got
        same.append(a.key == b.key)
        bounds.append(max(a.rho_between(b.rows), b.rho_between(a.rows)))
        outcomes += got
    identical = np.array(same, dtype=bool)
    caveats = sorted({o.caveat.split("; ")[0] for o in outcomes if o.caveat and "wider than" in o.caveat})
    params = {"rho": outcomes[0].rho_bound, "rho_bound": max(bounds), "certified": all(o.certified for o in outcomes),
              "width": max(o.width for o in outcomes), "min_propensity": outcomes[0].min_propensity,
              "rows": sorted({o.rows for o in outcomes}) if len({o.rows for o in outcomes}) <= 4 else
                      [min(o.rows for o in outcomes), max(o.rows for o in outcomes)],
              "caveat": caveats[0] if caveats else None,
              "regret": ("the decision's error against the true values: a choice's true value minus the best "
                         "candidate's, a value's distance from the true value") if known else
                        ("the decision's error against the log's own unrounded estimates (its true values are not "
                         "known): what rounding cost")}
    if outcomes[0].chosen is not None:  # how often each candidate was chosen, over every log and R
        counts = np.bincount([o.chosen for o in outcomes], minlength=len(outcomes[0].cells))
        names = outcomes[0].names or tuple(str(k) for k in range(counts.size))
        params["chosen"] = {name: int(c) for name, c in zip(names, counts)}
    label = getattr(decide, "__name__", type(decide).__name__)
    if label == "<lambda>":
        label = "select" if outcomes[0].chosen is not None else "replicable_value"
    return Report(learner=label, adversary=first.name, n=first.n,
                  horizon=first.rows, pairs=pairs, seed=seed, confidence=confidence, identical=identical,
                  agreement=identical.astype(np.float64), first_divergence=(~identical).astype(np.int64),
                  regret=np.array(errors, dtype=np.float64).reshape(pairs, 2), params=params, regret_bound=None,
                  cost_range=outcomes[0].cost_range)
