"""Logs larger than memory (docs/offpolicy.md, "Logs larger than memory"): the estimates of every
candidate by every estimator in one pass over a log read in chunks — a Parquet file or a partitioned
Parquet dataset (a folder of files), :func:`parquet_chunks` — on this machine (:func:`compare_stream`)
or on a Dask cluster's workers (:func:`compare_dask`), equal to :func:`replify.offpolicy.compare` on
the whole log in memory — and the certified decisions (:func:`select_stream`, :func:`value_stream`),
the same as :func:`replify.offpolicy.select` and :func:`replify.offpolicy.replicable_value` on the
whole log.

**How.** Every estimate here is a function of sums over the interactions: an estimator whose value is
a mean of per-row terms t (IPS, the direct method, DR, Switch-DR, DRos and sub-Gaussian IPS, with
their λ and cost model fixed) needs Σt, Σt², Σt³ and the largest |t|; a self-normalised one (SNIPS,
SNDR) is the linear combination t = D + (e − R·w)/w̄ of three per-row parts (the direct term D, the
weighted residual e = w(c − ĉ) and the weight w) whose coefficients are known only at the end, so
the sums of every product of up to three parts are kept; and beside them the weights' Σw and Σw²
(the effective sample size), the largest weight, the costs' and the cost model's least and greatest
values, each arm's share of the policy's play, the arms logged and, on a simulated log, the true
value. Each chunk is a :class:`~replify.offpolicy.Log` (every row checked as anywhere), its sums are
added, and the estimate and its interval are computed from the totals by the same code as in
memory (:class:`~replify.offpolicy.estimators.Moments`). The totals differ from the in-memory sums
only by the order of the floating-point additions: the tests hold every value and interval to 1e-12
of the in-memory one.

**What a pass cannot do.** A cost model fitted on the log, cross-fitting and a λ tuned on the log
each need the rows twice (fit, then estimate): give ``model=`` (fitted elsewhere, or on a sample)
and ``lam=``; the bootstrap resamples the whole log. Each is refused by name. Estimated propensities
would be fitted chunk by chunk: refused too. The certified choice needs the costs' range before the
pass (its estimates are taken about the range's middle): declared, or refused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import attrs
import numpy as np

from replify.errors import InvalidArgumentError, MissingExtraError
from replify.offpolicy.compare import Comparison
from replify.offpolicy.estimators import (
    ESTIMATORS, MODELLED, TUNED, Estimate, Moments, _bernstein, _checked_lam, _effective_weight, _interval, _term_range,
    bernstein_applies,
    _terms, largest_weight, row_parts,
)
from replify.offpolicy.log import Log, policy_probabilities, unlogged_text
from replify.offpolicy.policies import model_scores
from replify.offpolicy.select import (
    _LOGGING_POLICY, Replicable, Summary, _baseline, _check_rowwise, _cost_range, _rounded, candidates, chosen, single,
    summary,
)

#: Rows a chunk holds by default (10 arms, 10 features, 8 candidates by 8 estimators: a peak of 1.3 GiB)
CHUNK_ROWS = 250_000


def parquet_chunks(path: str | Path, *, rows: int = CHUNK_ROWS, n: int, min_propensity: Any = None,
                   cost_range: Any = None, columns: Mapping[str, Any] | None = None, ignore: Any = None,
                   rewards: bool = False) -> Iterator[Log]:
    """A Parquet log — one file, or a folder of them (a partitioned dataset) — as a sequence of
    :class:`~replify.offpolicy.Log` chunks of at most ``rows`` interactions, with the columns and
    keywords of :meth:`Log.from_parquet` (``n`` is required: one chunk cannot say how many arms the
    log has). Needs pyarrow."""
    try:
        import pyarrow as pa  # an optional extra: imported where it is used
        import pyarrow.dataset as ds
    except ImportError:
        raise MissingExtraError("parquet_chunks needs pyarrow, which is not installed: pip install "
                                "'replify[offpolicy]'") from None
    p = Path(path)
    if not p.exists():
        raise InvalidArgumentError(f"path: no Parquet log at {str(p)!r}")
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 2:
        raise InvalidArgumentError(f"rows must be an integer >= 2, the interactions a chunk holds; got {rows!r}")
    try:
        dataset = ds.dataset(p, format="parquet")
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"path: cannot read the Parquet log {str(p)!r}: {exc}") from None
    first = 0
    # no read-ahead: pyarrow would otherwise hold a dozen chunks of every file in memory at once
    for batch in dataset.to_batches(batch_size=rows, batch_readahead=0, fragment_readahead=0):  # one chunk at a time
        if not batch.num_rows:
            continue
        yield Log._from_table(pa.Table.from_batches([batch]), p, n=n, min_propensity=min_propensity,
                              cost_range=cost_range, columns=columns, ignore=ignore, rewards=rewards,
                              propensities="logged", first_row=first)
        first += batch.num_rows


@attrs.define
class _Sums:
    """One candidate's and estimator's sums over the chunks so far (module docstring), about a shift:
    the parts' values on the first row summed, so that terms that are all the same sum to exactly 0
    (raw sums of squares would leave a rounding error where the spread is 0, and the rule of three
    would not see it); sums about another shift are moved to this one when added."""

    parts: int  # 1 for a mean of terms, 3 for a self-normalised estimate (D, e, w)
    rows: float = 0.0
    shift: Any = None
    s1: Any = None  # Σ v, Σ v vᵀ, Σ v⊗v⊗v over v = u − shift
    s2: Any = None
    s3: Any = None
    biggest: Any = None  # each part's largest |u|
    weight: float = 0.0  # Σ w and Σ w², the weights' (for the effective sample size)
    weight2: float = 0.0

    def add(self, u: np.ndarray, k: np.ndarray | None, weights: tuple[float, float, float]) -> None:
        """Add the rows' parts ``u`` (stored, parts), their counts ``k``, and the interactions, Σw and
        Σw² of the chunk (``weights``: the same for every estimator of a candidate)."""
        if self.shift is None:
            self.shift = u[0].copy()
        self.merge_in(_Sums.of(u, k, weights, self.shift, self.parts))

    @classmethod
    def of(cls, u: np.ndarray, k: np.ndarray | None, weights: tuple[float, float, float], shift: np.ndarray,
           parts: int) -> _Sums:
        """The sums of one chunk's parts ``u`` (stored, parts) with counts ``k`` (None: one each)."""
        rows, weight, weight2 = weights
        biggest = np.maximum(u.max(axis=0), -u.min(axis=0))
        if parts == 1:  # one part: dot products, no matrices
            v = u[:, 0] - shift[0]
            kv = v if k is None else v * k
            vv = kv * v
            return cls(parts=parts, rows=rows, shift=shift, s1=np.array([kv.sum()]), s2=np.array([[vv.sum()]]),
                       s3=np.array([[[vv @ v]]]), biggest=biggest, weight=weight, weight2=weight2)
        v = u - shift
        kv = v if k is None else v * k[:, None]
        s2 = kv.T @ v  # matrix products (BLAS), not an einsum over the rows
        s3 = np.stack([(kv * v[:, i:i + 1]).T @ v for i in range(v.shape[1])])  # a loop over the few parts
        return cls(parts=parts, rows=rows, shift=shift, s1=kv.sum(axis=0), s2=s2, s3=s3, biggest=biggest,
                   weight=weight, weight2=weight2)

    def moved(self, shift: np.ndarray) -> _Sums:
        """These sums about ``shift`` instead (v′ = v + δ, δ = old shift − new)."""
        d = self.shift - shift
        if not d.any():
            return self
        n, s1, s2 = self.rows, self.s1, self.s2
        s3 = (self.s3 + np.einsum("i,jk->ijk", d, s2) + np.einsum("j,ik->ijk", d, s2) + np.einsum("k,ij->ijk", d, s2)
              + np.einsum("i,j,k->ijk", d, d, s1) + np.einsum("i,k,j->ijk", d, d, s1) + np.einsum("j,k,i->ijk", d, d, s1)
              + n * np.einsum("i,j,k->ijk", d, d, d))
        s2n = s2 + np.outer(d, s1) + np.outer(s1, d) + n * np.outer(d, d)
        return attrs.evolve(self, shift=shift, s1=s1 + n * d, s2=s2n, s3=s3)

    def merge_in(self, other: _Sums) -> None:
        """Add ``other``'s sums (chunks added in any order: a cluster's workers')."""
        if other.s1 is None:
            return
        if self.s1 is None:
            for f in attrs.fields(_Sums):
                setattr(self, f.name, getattr(other, f.name))
            return
        o = other.moved(self.shift)
        self.rows += o.rows
        self.s1, self.s2, self.s3 = self.s1 + o.s1, self.s2 + o.s2, self.s3 + o.s3
        self.biggest = np.maximum(self.biggest, o.biggest)
        self.weight += o.weight
        self.weight2 += o.weight2

    def total(self, c: np.ndarray) -> float:
        """Σ c·u over the interactions."""
        return float(c @ self.s1) + self.rows * float(c @ self.shift)

    def moments(self, c: np.ndarray) -> tuple[float, float, float, float]:
        """The mean, central second and third moments (over the interactions) and the largest |t|
        (bounded by the parts') of the terms t = c·u."""
        n = self.rows
        a = float(c @ self.s1) / n  # the mean of c·v
        e2 = float(c @ self.s2 @ c) / n
        e3 = float(np.einsum("ijk,i,j,k->", self.s3, c, c, c)) / n
        m2 = max(e2 - a * a, 0.0)
        m3 = e3 - 3.0 * a * e2 + 2.0 * a**3
        return a + float(c @ self.shift), m2, m3, float(np.abs(c) @ self.biggest)


@attrs.define
class _Candidate:
    """One candidate's sums over the chunks: per estimator, and what every estimator shares."""

    sums: dict[str, _Sums]
    mass: Any = None  # Σ π(a|x) per arm, and the arms logged
    logged: Any = None
    truth: float = 0.0
    truth_known: bool = True
    big: float = 0.0
    bounded: bool = True
    cost_lo: float = math.inf
    cost_hi: float = -math.inf
    hat_lo: float = math.inf
    hat_hi: float = -math.inf

    def merge(self, other: _Candidate) -> _Candidate:
        """These totals and ``other``'s (the per-estimator sums are added into this candidate's own)."""
        if other.mass is None:
            return self
        if self.mass is None:
            return other
        for key in self.sums:
            self.sums[key].merge_in(other.sums[key])
        return _Candidate(sums=self.sums, mass=self.mass + other.mass,
                          logged=self.logged | other.logged, truth=self.truth + other.truth,
                          truth_known=self.truth_known and other.truth_known, big=max(self.big, other.big),
                          bounded=self.bounded and other.bounded, cost_lo=min(self.cost_lo, other.cost_lo),
                          cost_hi=max(self.cost_hi, other.cost_hi), hat_lo=min(self.hat_lo, other.hat_lo),
                          hat_hi=max(self.hat_hi, other.hat_hi))


def _checked(estimators: Sequence[str], model: Any, lam: Any, interval: str) -> dict[str, float | None]:
    """The estimators' λ, each refused where a single pass cannot compute it (module docstring)."""
    if isinstance(estimators, str) or not estimators or any(e not in ESTIMATORS for e in estimators):
        raise InvalidArgumentError(f"estimators must be a non-empty sequence of names from {ESTIMATORS}; got "
                                   f"{estimators!r}")
    if interval not in ("normal", "bernstein"):
        raise InvalidArgumentError(f"interval must be 'normal' or 'bernstein' on a log read in chunks (the bootstrap "
                                   f"resamples the whole log); got {interval!r}")
    fitted = [e for e in estimators if e in MODELLED and model is None]
    if fitted:
        raise InvalidArgumentError(f"{fitted[0]!r} needs a cost model, and one fitted on this log would take a pass of "
                                   "its own: give model= (fitted elsewhere, or on a sample of the log)")
    lams = {}
    for e in estimators:  # lam: one number for every estimator with a λ, or a mapping of them
        given = lam.get(e) if isinstance(lam, Mapping) else lam
        lams[e] = _checked_lam(e, given) if e in TUNED else None
        if e in TUNED and lams[e] is None:
            raise InvalidArgumentError(f"{e!r}: a lam tuned on this log would take a pass of its own: give lam=")
    return lams


def _chunk(log: Log, policies: Sequence[Any], estimators: Sequence[str], model: Any,
           lams: Mapping[str, float | None]) -> list[_Candidate]:
    """Every candidate's sums over one chunk."""
    if log.propensity_model is not None:
        raise InvalidArgumentError(f"{log.name}: propensities estimated chunk by chunk would differ from one fitted on "
                                   "the whole log; read it in memory")
    k = None if log.weights is None else log.weights.astype(np.float64)  # None: one interaction a row
    rows = np.arange(log.stored)
    # the cost model's predictions, once a chunk for every candidate and estimator
    hat = model_scores(model, log.contexts, log.n) if any(e in MODELLED for e in estimators) else None
    out = []
    for policy in policies:  # a loop over the candidates: each policy called once on the chunk
        pi = policy_probabilities(policy, log)
        w = pi[rows, log.actions] / log.propensities
        cand = _Candidate(sums={e: _Sums(parts=3 if e in ("snips", "sndr") else 1) for e in estimators})
        weights = ((float(log.stored), float(w.sum()), float(w @ w)) if k is None
                   else (float(k.sum()), float(k @ w), float(k @ (w * w))))
        with np.errstate(over="ignore", invalid="ignore"):
            parts = {}  # the direct terms and residuals, once for the estimators with a model and once without
            for e in estimators:  # a loop over the estimators
                key = e in MODELLED
                if key not in parts:
                    parts[key] = row_parts(log, pi, e, model, None, None, hat)
                direct, err, used = parts[key]
                if e in ("snips", "sndr"):
                    u = np.stack([direct, w * err, w], axis=1)
                else:
                    u = _terms(e, w, log.costs, direct, err, lams[e])[:, None]
                cand.sums[e].add(u, k, weights)
                if used is not None:
                    cand.hat_lo, cand.hat_hi = float(used.min()), float(used.max())
        cand.mass = pi.sum(axis=0) if k is None else k @ pi
        cand.logged = np.bincount(log.actions, minlength=log.n) > 0
        cand.truth_known = log.means is not None
        if log.means is not None:
            truth = (pi * log.means).sum(axis=1)
            cand.truth = float(truth.sum() if k is None else k @ truth)
        cand.big, cand.bounded = largest_weight(log, pi)
        cand.cost_lo, cand.cost_hi = float(log.costs.min()), float(log.costs.max())
        out.append(cand)
    return out


def _estimate(cand: _Candidate, estimator: str, lam: float | None, *, name: str, cost_range: Any,
              confidence: float, interval: str, propensities_floor: float) -> Estimate:
    """The estimate from a candidate's totals, by the code :func:`replify.offpolicy.estimate` runs."""
    s = cand.sums[estimator]
    rows = int(round(s.rows))
    if rows < 2:
        raise InvalidArgumentError(f"log: an interval needs at least 2 rows; got {rows}")
    if s.parts == 3:  # t = D + a·e − b·w: a = 1/w̄, b = R/w̄, R = Σe/Σw
        sum_w = s.total(np.array([0.0, 0.0, 1.0]))
        mean_w = sum_w / s.rows
        if mean_w <= 0.0:
            raise InvalidArgumentError(f"{estimator}: the policy gives probability 0 to every logged action of {name}; "
                                       "its self-normalised estimate is undefined")
        ratio = s.total(np.array([0.0, 1.0, 0.0])) / sum_w
        coef = np.array([1.0, 1.0 / mean_w, -ratio / mean_w])
        value = s.total(np.array([1.0, 0.0, 0.0])) / s.rows + ratio
    else:
        coef = np.array([1.0])
        value = math.nan  # the terms' mean, below
    mean, m2, m3, biggest = s.moments(coef)
    if s.parts == 1:
        value = mean
    se = math.sqrt(m2 * rows / (rows - 1)) / math.sqrt(rows)
    if not (math.isfinite(value) and math.isfinite(se)):
        raise InvalidArgumentError(f"{estimator}: the estimate on {name} overflows float64 (propensities down to "
                                   f"{propensities_floor:g}); rescale the costs (the estimate scales with them)")
    moments = Moments(rows=rows, name=name, cost_range=cost_range, cost_lo=cand.cost_lo, cost_hi=cand.cost_hi,
                      mean=mean, m2=m2, m3=m3, biggest=biggest,
                      hat_lo=None if not math.isfinite(cand.hat_lo) else cand.hat_lo,
                      hat_hi=None if not math.isfinite(cand.hat_hi) else cand.hat_hi)
    ess = s.weight**2 / s.weight2 if s.weight2 > 0 else 0.0
    big = _effective_weight(estimator, cand.big, lam)
    got, kind, caveat = _interval(moments, estimator, value, se, ess, confidence, (big, cand.bounded),
                                  _term_range(moments, estimator, value, big))
    if interval == "bernstein" and bernstein_applies(estimator, "given"):  # one pass: a model is always given
        got, kind, caveat = _bernstein(moments, value, confidence, (big, cand.bounded),
                                       _term_range(moments, estimator, value, big))
    missing = unlogged_text(name, cand.mass / s.rows, cand.logged)
    if missing:  # as in memory: IPS and SNIPS count those rows as nothing; a cost model stands in for them
        caveat = "; ".join(filter(None, [caveat, f"the policy: {missing}" + (
            " (the cost model stands in for it)" if estimator in MODELLED else "")]))
    return Estimate(estimator=estimator, value=value, interval=got, standard_error=se, confidence=confidence,
                    rows=rows, true_value=cand.truth / s.rows if cand.truth_known else None, ess=ess, caveat=caveat,
                    interval_kind=kind, lam=lam, tuned=False)


def _table(candidates: list[_Candidate], names: list[str], estimators: Sequence[str], lams: Mapping[str, Any], *,
           name: str, cost_range: Any, confidence: float, interval: str, floor: float) -> Comparison:
    rows = tuple(tuple(_estimate(c, e, lams[e], name=name, cost_range=cost_range, confidence=confidence,
                                 interval=interval, propensities_floor=floor) for e in estimators) for c in candidates)
    total = int(round(candidates[0].sums[estimators[0]].rows))
    return Comparison(log=name, rows=total, candidates=tuple(names), estimators=tuple(estimators), estimates=rows)


def _named(policies: Mapping[str, Any] | Sequence[Any]) -> tuple[list[str], list[Any]]:
    named = list(policies.items()) if isinstance(policies, Mapping) else [(str(i), p) for i, p in enumerate(policies)]
    if not named:
        raise InvalidArgumentError("policies: expected at least one policy to compare; got none")
    for key, pol in named:
        if not callable(pol):
            raise InvalidArgumentError(f"candidate {key!r}: a log read in chunks needs each policy as a function of the "
                                       "contexts (an array of its choices cannot follow the chunks)")
    return [k for k, _ in named], [p for _, p in named]


def compare_stream(chunks: Iterable[Log], policies: Mapping[str, Any] | Sequence[Any],
                   estimators: Sequence[str] = ("ips", "snips"), *, model: Callable[[np.ndarray], Any] | None = None,
                   lam: Any = None, interval: str = "normal", confidence: float = 0.95,
                   choose: Mapping[str, Any] | None = None) -> Comparison:
    """Every candidate by every estimator over ``chunks`` (logs of one system: :func:`parquet_chunks`,
    or any iterable of :class:`~replify.offpolicy.Log`) in one pass, each chunk released before the
    next is read (module docstring). ``choose``: :func:`select_stream`'s keywords (``rho``, ``seed``,
    ...) to make the certified choice among the same policies in the same pass (the result's
    ``choice``)."""
    names, pols = _named(policies)
    lams = _checked(estimators, model, lam, interval)
    choice = None if choose is None else _Choice(dict(zip(names, pols)), **{
        "cost_bound": None, "min_propensity": None, "min_rows": None, "incumbent": None, "variance": "worst-case",
        **dict(choose)})
    totals: list[_Candidate] | None = None
    first: Log | None = None
    floor = math.inf
    for log in chunks:  # a loop over the chunks
        if not isinstance(log, Log):
            raise InvalidArgumentError(f"chunks must be replify.offpolicy.Log chunks; got {type(log).__name__}")
        if first is None:
            first = log
        elif (log.n, log.cost_range, log.min_propensity) != (first.n, first.cost_range, first.min_propensity):
            raise InvalidArgumentError(f"{log.name}: its chunks disagree on the arms, the cost range or the least "
                                       "propensity; expected one log's chunks")
        floor = min(floor, float(log.propensities.min()))
        got = _chunk(log, pols, estimators, model, lams)
        totals = got if totals is None else [a.merge(b) for a, b in zip(totals, got)]
        if choice is not None:
            choice.add(log)
    if totals is None:
        raise InvalidArgumentError("chunks: expected at least one chunk of the log; got none")
    table = _table(totals, names, estimators, lams, name=first.name, cost_range=first.cost_range,
                   confidence=float(confidence), interval=interval, floor=floor)
    return table if choice is None else attrs.evolve(table, choice=choice.finish())


def compare_dask(path: str | Path, policies: Mapping[str, Any] | Sequence[Any], estimators: Sequence[str] = ("ips", "snips"),
                 *, n: int, client: Any = None, rows: int = CHUNK_ROWS, model: Callable[[np.ndarray], Any] | None = None,
                 lam: Any = None, interval: str = "normal", confidence: float = 0.95, min_propensity: Any = None,
                 cost_range: Any = None, columns: Mapping[str, Any] | None = None, ignore: Any = None,
                 rewards: bool = False) -> Comparison:
    """:func:`compare_stream` over a Parquet log's files (a partitioned dataset: one task per file,
    read in chunks of ``rows`` on the worker) on Dask (``client``: a ``dask.distributed.Client``; by
    default Dask's own scheduler), the workers' sums added in any order: the same estimates, to the
    order of floating-point additions. The policies and model must pickle (functions defined in a
    module, not lambdas typed at a prompt, where the workers are other processes). Needs dask."""
    try:
        import dask  # the engine's optional backend: imported where it is used
    except ImportError:
        raise MissingExtraError("compare_dask needs dask, which is not installed: pip install 'replify[dask]'") from None
    names, pols = _named(policies)
    lams = _checked(estimators, model, lam, interval)
    p = Path(path)
    files = sorted(q for q in p.rglob("*.parquet")) if p.is_dir() else [p]
    if not files:
        raise InvalidArgumentError(f"path: no Parquet files at {str(p)!r}")
    kw = dict(rows=rows, n=n, min_propensity=min_propensity, cost_range=cost_range, columns=columns, ignore=ignore,
              rewards=rewards)
    tasks = [dask.delayed(_file_sums)(f, pols, estimators, model, lams, kw) for f in files]
    parts = client.gather(client.compute(tasks)) if client is not None else dask.compute(*tasks)
    totals = None
    floor = math.inf
    meta = None
    for got, low, info in parts:  # the workers' sums, added
        totals = got if totals is None else [a.merge(b) for a, b in zip(totals, got)]
        floor = min(floor, low)
        if meta is None:
            meta = info
        elif meta != info:
            raise InvalidArgumentError(f"{str(p)!r}: its files disagree on the arms, the cost range or the least "
                                       "propensity; expected one log's files")
    return _table(totals, names, estimators, lams, name=p.name, cost_range=meta[1], confidence=float(confidence),
                  interval=interval, floor=floor)


def _file_sums(path: Path, policies: list[Any], estimators: Sequence[str], model: Any, lams: Mapping[str, Any],
               kw: Mapping[str, Any]) -> tuple[list[_Candidate], float, tuple]:
    """One file's sums (a Dask task): its chunks read and added on the worker."""
    totals, floor, info = None, math.inf, None
    for log in parquet_chunks(path, **kw):  # a loop over the file's chunks
        floor = min(floor, float(log.propensities.min()))
        info = (log.n, log.cost_range, log.min_propensity)
        got = _chunk(log, policies, estimators, model, lams)
        totals = got if totals is None else [a.merge(b) for a, b in zip(totals, got)]
    return totals, floor, info


class _Choice:
    """The certified choice's sums over the chunks (:func:`select_stream`), added chunk by chunk."""

    def __init__(self, policies: Any, *, rho: float, seed: Any, cost_bound: Any,
                 min_propensity: Any, min_rows: Any, incumbent: Any, variance: str, value: bool = False) -> None:
        self.value = value  # one policy's replicable value (replicable_value's), else the choice
        if value:
            if not callable(policies):
                raise InvalidArgumentError(f"policy must be a function of the contexts; got {type(policies).__name__}")
            self.names, self.pols, self.incumbent, self.factor = None, [policies], None, 1.0
        else:
            self.names, self.pols, self.incumbent, self.factor = candidates(policies, incumbent, variance)
        self.kw = dict(rho=rho, seed=seed, min_propensity=min_propensity, cost_bound=cost_bound, min_rows=min_rows,
                       variance=variance)
        self.first: Log | None = None
        self.offset = 0

    def add(self, log: Log) -> None:
        """Add one chunk (the first fixes the costs' range, the baseline and the candidates' checks)."""
        if self.first is None:
            if self.kw["cost_bound"] is None and log.cost_range is None:
                raise InvalidArgumentError("a certified choice in one pass needs the costs' range before the pass (every "
                                           "estimate is taken about its middle): give cost_bound=, or read the log "
                                           "with cost_range=")
            self.first = log
            (self.lo, self.hi), _ = _cost_range(summary(log), self.kw["cost_bound"])
            self.b = _baseline(self.lo, self.hi)
            k_pol = len(self.pols)
            self.d, self.truth, self.overlap = np.zeros(k_pol), np.zeros(k_pol), np.zeros(k_pol)
            self.mass, self.logged = np.zeros((k_pol, log.n)), np.zeros(log.n, dtype=bool)
            self.facts = dict(rows=0, propensity_min=math.inf, distribution_min=math.inf, cost_lo=math.inf,
                              cost_hi=-math.inf, means=True, distribution=True)
        first, b = self.first, self.b
        if (log.n, log.cost_range, log.min_propensity) != (first.n, first.cost_range, first.min_propensity):
            raise InvalidArgumentError("chunks: expected Log chunks of one log (the same arms, cost range and least "
                                       "propensity)")
        bad = summary(log).outside(self.lo, self.hi)
        if bad is not None:
            raise InvalidArgumentError(f"cost_bound=[{self.lo:g}, {self.hi:g}]: row {self.offset + bad[0]} of {log.name} "
                                       f"costs {bad[1]!r}, outside it; give the range the costs respect")
        k = np.ones(log.stored) if log.weights is None else log.weights.astype(np.float64)
        rows = np.arange(log.stored)
        self.logged |= np.bincount(log.actions, minlength=log.n) > 0
        for j, policy in enumerate(self.pols):  # a loop over the candidates: each called once on the chunk
            if policy is _LOGGING_POLICY:  # on-policy: every weight 1, q = 1
                self.d[j] += float(k @ (log.costs - b))
                self.truth[j] += float(k @ log.means[rows, log.actions]) if log.means is not None else 0.0
                self.overlap[j] += float(k.sum())
                continue
            pi = policy_probabilities(policy, log)
            if log is first:
                _check_rowwise(policy, log, pi)
            with np.errstate(over="ignore"):
                self.d[j] += float(k @ (pi[rows, log.actions] / log.propensities * (log.costs - b)))
            self.mass[j] += k @ pi
            if log.means is not None:
                self.truth[j] += float(k @ (pi * log.means).sum(axis=1))
            if log.distribution is not None:
                self.overlap[j] += float(k @ (pi * pi / np.maximum(log.distribution, np.finfo(float).tiny)).sum(axis=1))
        f = self.facts
        f["rows"] += log.rows
        f["propensity_min"] = min(f["propensity_min"], float(log.propensities.min()))
        f["cost_lo"], f["cost_hi"] = min(f["cost_lo"], float(log.costs.min())), max(f["cost_hi"], float(log.costs.max()))
        f["means"] &= log.means is not None
        f["distribution"] &= log.distribution is not None
        if log.distribution is not None:
            f["distribution_min"] = min(f["distribution_min"], float(log.distribution.min()))
        self.offset += log.stored

    def finish(self) -> Replicable:
        """The choice from the totals, by the code :func:`replify.offpolicy.select` runs."""
        if self.first is None:
            raise InvalidArgumentError("chunks: expected at least one chunk of the log; got none")
        f, first, n_rows = self.facts, self.first, self.facts["rows"]
        whole = Summary(name=first.name, rows=n_rows, cost_range=first.cost_range, min_propensity=first.min_propensity,
                        propensity_model=first.propensity_model, propensity_min=f["propensity_min"],
                        distribution_min=f["distribution_min"] if f["distribution"] else None,
                        cost_lo=f["cost_lo"], cost_hi=f["cost_hi"])

        def estimates(baseline: float) -> list[tuple[float, float | None, str | None, float | None]]:
            if baseline != self.b:  # the range is fixed before the pass: the baseline cannot move
                raise InvalidArgumentError(f"the costs' range moved during the pass (baseline {self.b:g}, then "
                                           f"{baseline:g})")
            return [(self.d[j] / n_rows, self.truth[j] / n_rows if f["means"] else None,
                     None if pol is _LOGGING_POLICY else unlogged_text(first.name, self.mass[j] / n_rows, self.logged),
                     self.overlap[j] / n_rows if f["distribution"] or pol is _LOGGING_POLICY else None)
                    for j, pol in enumerate(self.pols)]

        got, order = _rounded(whole, policies=self.pols, factor=self.factor, estimates=estimates, **self.kw)
        return single(got) if self.value else chosen(got, order, self.names, self.incumbent)


def value_stream(chunks: Iterable[Log], policy: Callable[[np.ndarray], Any], *, rho: float, seed: Any,
                 cost_bound: Any = None, min_propensity: Any = None, min_rows: Any = None,
                 variance: str = "worst-case") -> Replicable:
    """:func:`replify.offpolicy.replicable_value` over a log read in chunks, in one pass: the same
    rounded value, width, cell and certificate as on the whole log in memory (the costs' range known
    before the pass, as for :func:`select_stream`)."""
    value = _Choice(policy, rho=rho, seed=seed, cost_bound=cost_bound, min_propensity=min_propensity,
                    min_rows=min_rows, incumbent=None, variance=variance, value=True)
    for log in chunks:  # a loop over the chunks: one in memory at a time
        if not isinstance(log, Log):
            raise InvalidArgumentError(f"chunks must be replify.offpolicy.Log chunks; got {type(log).__name__}")
        value.add(log)
    return value.finish()


def select_stream(chunks: Iterable[Log], policies: Sequence[Any] | Mapping[Any, Any], *, rho: float, seed: Any,
                  cost_bound: Any = None, min_propensity: Any = None, min_rows: Any = None, incumbent: Any = None,
                  variance: str = "worst-case") -> Replicable:
    """:func:`replify.offpolicy.select` over a log read in chunks, in one pass (module docstring): the
    same choice, width, cells and certificate as on the whole log in memory. The costs' range must be
    known before the pass (``cost_bound``, or the range the chunks declare), since every estimate is
    taken about its middle; each policy is checked to decide row by row on the first chunk."""
    choice = _Choice(policies, rho=rho, seed=seed, cost_bound=cost_bound, min_propensity=min_propensity,
                     min_rows=min_rows, incumbent=incumbent, variance=variance)
    for log in chunks:  # a loop over the chunks: one in memory at a time
        if not isinstance(log, Log):
            raise InvalidArgumentError(f"chunks must be replify.offpolicy.Log chunks; got {type(log).__name__}")
        choice.add(log)
    return choice.finish()
