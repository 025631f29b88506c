"""A log of bandit interactions: one row per step a logging policy took — the contexts it was
shown, the arm it played, that arm's cost and the probability it had of playing it (its
propensity), and optionally its whole distribution over the arms.

Contexts are (rows, n, d), one feature vector per arm as replify's contextual adversaries show them,
or (rows, d), one vector the arms share. Constructors: :meth:`Log.from_arrays`, :meth:`Log.from_csv`,
:meth:`Log.from_parquet` (the ``offpolicy`` extra) and :meth:`Log.simulate` — any replify contextual adversary (``linear-gaussian``, or
``classification-bandit``: the supervised-to-bandit construction of Dudík, Langford & Li, ICML 2011,
on the wine data replify ships) logged by a stated policy (:func:`epsilon_greedy`, :func:`softmax`,
uniform, or any function of the contexts). A simulated log keeps each row's expected costs, so the
true value of a policy is known (:meth:`Log.true_value`).
"""

from __future__ import annotations

import csv
import math
import numbers
import re
from pathlib import Path
from typing import Any, Callable

import attrs
import numpy as np

from replify.base.checks import as_float_array
from replify.base.randomness import Seed, child, seed_sequence
from replify.engine.declarations import AUDIT_SLOT, audit_support, declared_bounds
from replify.errors import InvalidArgumentError, MissingExtraError
from replify.plugins.factory import make_adversary


def _bad_row(name: str, ok: np.ndarray, values: np.ndarray, expected: str) -> None:
    """Refuse the first row where ``ok`` is False, naming the column, the row and its value."""
    if not ok.all():
        i = int(np.argmin(ok))
        value = values[i].tolist() if values.ndim > 1 else values[i].item()
        raise InvalidArgumentError(f"{name}: row {i} is {value!r}; expected {expected}")


def _real(name: str, values: Any, ndim: tuple[int, ...]) -> np.ndarray:
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged nested lists
        raise InvalidArgumentError(f"{name} must be an array of real numbers; got {type(values).__name__}") from None
    if raw.dtype.kind == "b":
        raise InvalidArgumentError(f"{name} must be an array of real numbers; got booleans")
    a = as_float_array(name, raw)  # strings, complex numbers and objects refused, not converted
    if a.ndim not in ndim:
        raise InvalidArgumentError(f"{name} must have {' or '.join(f'{k} dimensions' for k in ndim)}; got shape {a.shape}")
    return a


@attrs.frozen(eq=False)
class Log:
    """Logged interactions (module docstring). ``distribution`` (rows, n), the logging policy's
    probabilities of every arm, and ``means`` (rows, n), every arm's expected cost given the row's
    contexts, are optional (a simulated log has both)."""

    contexts: np.ndarray
    actions: np.ndarray
    costs: np.ndarray
    propensities: np.ndarray
    n: int
    distribution: np.ndarray | None = None
    means: np.ndarray | None = None
    name: str = "log"
    #: the logging policy's smallest probability of any arm, where it is declared (replify.offpolicy.select)
    min_propensity: float | None = None
    #: a compact log: how many interactions each stored row stands for (None: one each)
    weights: np.ndarray | None = None
    #: (lo, hi), the range every cost of the logged system lies in, where declared (a simulated
    #: log: its adversary's ``cost_bounds``); replify.offpolicy.select's certificates use it
    cost_range: tuple[float, float] | None = None

    @property
    def rows(self) -> int:
        """The interactions logged (a compact log's stored rows count as their weights)."""
        return int(self.actions.size) if self.weights is None else int(self.weights.sum())

    @property
    def stored(self) -> int:
        """The rows stored (one per interaction, or per distinct interaction in a compact log)."""
        return int(self.actions.size)

    def mean(self, values: np.ndarray) -> float:
        """The mean over the interactions of per-row ``values``."""
        return float(values.mean() if self.weights is None else (self.weights * values).sum() / self.weights.sum())

    def std(self, values: np.ndarray) -> float:
        """The sample standard deviation over the interactions of per-row ``values`` (ddof 1)."""
        if self.weights is None:
            return float(values.std(ddof=1))
        m = self.mean(values)
        return float(math.sqrt((self.weights * (values - m) ** 2).sum() / (self.weights.sum() - 1)))

    def __len__(self) -> int:
        return self.rows

    @classmethod
    def from_arrays(cls, *, contexts: Any, actions: Any, costs: Any, propensities: Any, n: int | None = None,
                    distribution: Any = None, means: Any = None, name: str = "log",
                    min_propensity: Any = None, cost_range: Any = None) -> Log:
        """A log from arrays, every row checked: contexts (rows, n, d) or (rows, d), actions in [0, n),
        finite costs, propensities in (0, 1] (and equal to the distribution's entry for the action
        taken, where the distribution is given). ``n`` defaults to the contexts' (rows, n, d), else
        to the distribution's, else to the largest action + 1. ``min_propensity``: the logging
        policy's smallest probability of any arm, where it is known (no logged propensity may be below it);
        ``cost_range``: (lo, hi), the range of every cost of the logged system, where it is known (no
        logged cost may lie outside it)."""
        x = _real("contexts", contexts, (2, 3))
        rows = x.shape[0]
        if rows == 0:
            raise InvalidArgumentError(f"contexts: the log {name!r} has no rows; expected at least one logged interaction")
        a = np.asarray(actions)
        if a.shape != (rows,):
            if a.ndim == 1 and np.shape(costs) == a.shape:  # actions and costs agree: the contexts are off
                raise InvalidArgumentError(f"contexts must have one row per action: {a.shape[0]} actions and costs; "
                                           f"got contexts of shape {x.shape}")
            raise InvalidArgumentError(f"actions must have one entry per row of contexts, shape ({rows},); got {a.shape}")
        if a.dtype.kind not in "iuf":  # booleans, complex numbers and strings are not arms
            raise InvalidArgumentError(f"actions must be integer arms; got dtype {a.dtype}")
        if a.dtype.kind not in "iu":
            frac = a.dtype.kind == "f" and np.isfinite(a).all() and (a == np.round(a)).all()
            if not frac:
                raise InvalidArgumentError(f"actions must be integer arms; got dtype {a.dtype}")
            a = a.astype(np.int64)
        c = _real("costs", costs, (1,))
        p = _real("propensities", propensities, (1,))
        for nm, v in (("costs", c), ("propensities", p)):
            if v.shape != (rows,):
                raise InvalidArgumentError(f"{nm} must have one entry per row of contexts, shape ({rows},); got {v.shape}")
        dist = None if distribution is None else _real("distribution", distribution, (2,))
        if n is None:
            n = x.shape[1] if x.ndim == 3 else dist.shape[1] if dist is not None else None
            if n is None:  # from the actions: the largest + 1
                n = int(a.max()) + 1
                if n < 2:
                    raise InvalidArgumentError(f"n: the largest action is {n - 1}, so the log shows fewer than 2 arms; "
                                               "give n, the number of arms")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise InvalidArgumentError(f"n must be an integer >= 2, the number of arms; got {n!r}")
        n = int(n)
        if x.ndim == 3 and x.shape[1] != n:
            raise InvalidArgumentError(f"contexts of shape (rows, n, d) must have n={n} arms; got shape {x.shape}")
        _bad_row("contexts", np.isfinite(x.reshape(rows, -1)).all(axis=1), x, "finite features")
        _bad_row("actions", (a >= 0) & (a < n), a, f"an arm in [0, {n})")
        _bad_row("costs", np.isfinite(c), c, "a finite cost")
        _bad_row("propensities", (p > 0) & (p <= 1), p, "a probability in (0, 1] (the logging policy's for the action taken)")
        if dist is not None:
            if dist.shape != (rows, n):
                raise InvalidArgumentError(f"distribution must have shape (rows, n) = ({rows}, {n}); got {dist.shape}")
            ok = np.isfinite(dist).all(axis=1) & (dist >= 0).all(axis=1) & (np.abs(dist.sum(axis=1) - 1) <= 1e-9)
            _bad_row("distribution", ok, dist, "probabilities of the n arms adding up to 1")
            _bad_row("propensities", np.abs(dist[np.arange(rows), a] - p) <= 1e-9, p,
                     "the distribution's probability of the action taken")
        m = None if means is None else _real("means", means, (2,))
        if m is not None:
            if m.shape != (rows, n):
                raise InvalidArgumentError(f"means must have shape (rows, n) = ({rows}, {n}); got {m.shape}")
            _bad_row("means", np.isfinite(m).all(axis=1), m, "finite expected costs")
        if min_propensity is not None:
            if isinstance(min_propensity, (bool, np.bool_)) or not isinstance(min_propensity, numbers.Real) \
                    or not 0 < min_propensity <= 1:
                raise InvalidArgumentError(f"min_propensity must be in (0, 1]; got {min_propensity!r}")
            _bad_row("propensities", p >= min_propensity * (1 - 1e-12), p, f"at least min_propensity={min_propensity:g}")
        if cost_range is not None:
            cr = np.asarray(cost_range) if not isinstance(cost_range, (str, bytes)) else np.asarray([])
            if cr.shape != (2,) or cr.dtype.kind not in "iuf" or not (np.isfinite(cr).all() and cr[0] < cr[1]):
                raise InvalidArgumentError(f"cost_range must be (lo, hi), finite numbers with lo < hi; got {cost_range!r:.80}")
            cost_range = (float(cr[0]), float(cr[1]))
            _bad_row("costs", (c >= cost_range[0]) & (c <= cost_range[1]), c, f"a cost in cost_range={list(cost_range)}")
        for v in (x, a, c, p, dist, m):
            if v is not None:
                v.flags.writeable = False
        return cls(contexts=x, actions=a, costs=c, propensities=p, n=n, distribution=dist, means=m, name=name,
                   min_propensity=None if min_propensity is None else float(min_propensity), cost_range=cost_range)

    @classmethod
    def from_csv(cls, path: str | Path, *, n: int | None = None, min_propensity: Any = None,
                 cost_range: Any = None) -> Log:
        """A log from a CSV file with a header: ``action``, ``cost``, ``propensity`` and the shared
        context's columns ``x0``, ``x1``, … (any other column is refused, so that none is silently
        ignored). A row that does not parse is refused with its line number. ``n``,
        ``min_propensity`` and ``cost_range``: what the file cannot say about the logged system, as
        in :meth:`from_arrays` (each row is checked against them)."""
        path = Path(path)
        try:
            handle = path.open(newline="", encoding="utf-8-sig")  # -sig: the byte-order mark spreadsheets write
        except OSError as exc:
            raise InvalidArgumentError(f"path: cannot read the log {str(path)!r}: {exc.strerror or exc}") from None
        values: list[list[float]] = []
        lines: list[int] = []  # each data row's line in the file
        try:
            with handle:
                reader = csv.reader(handle)
                header = next(reader, None)
                if header is None:
                    raise InvalidArgumentError(f"path: the log {str(path)!r} is empty; expected a header line")
                header = [h.strip() for h in header]
                features = _columns(header, path)
                col = {h: k for k, h in enumerate(header)}
                for line, row in enumerate(reader, start=2):
                    if not row or all(not f.strip() for f in row):  # a blank line (at the end, say)
                        continue
                    if len(row) != len(header):
                        raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: {len(row)} fields, expected "
                                                   f"{len(header)}")
                    fields = [row[col[h]] for h in ["action", "cost", "propensity", *features]]
                    try:
                        if any("_" in f for f in fields):  # float() reads 1_0 as 10: not a number in a CSV file
                            raise ValueError
                        values.append([float(f) for f in fields])
                    except ValueError:
                        raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: a field is not a number: "
                                                   f"{row}") from None
                    lines.append(line)
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"path: the log {str(path)!r} is not a text (UTF-8) CSV file: {exc.reason} at "
                                       f"byte {exc.start}") from None
        v = np.asarray(values, dtype=np.float64).reshape(-1, 3 + len(features))
        if not lines:
            raise InvalidArgumentError(f"path: the log {str(path)!r} has a header and no rows; expected at least one "
                                       "logged interaction")
        try:
            return cls.from_arrays(contexts=v[:, 3:], actions=v[:, 0], costs=v[:, 1], propensities=v[:, 2], n=n,
                                   name=path.name, min_propensity=min_propensity, cost_range=cost_range)
        except InvalidArgumentError as exc:  # a row named by its line in the file too
            found = re.match(r"(\w+): row (\d+) ", str(exc))
            if found is None:
                raise
            line = lines[int(found.group(2))]
            raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: {exc}") from None

    @classmethod
    def from_parquet(cls, path: str | Path, *, n: int | None = None, min_propensity: Any = None,
                     cost_range: Any = None) -> Log:
        """A log from a Parquet file with the columns and keywords of :meth:`from_csv` (needs pyarrow:
        ``pip install "replify[offpolicy]"``); a missing value is refused with its row."""
        try:
            import pyarrow.parquet as pq  # an optional extra: imported where it is used
        except ImportError:
            raise MissingExtraError("Log.from_parquet needs pyarrow, which is not installed: pip install "
                                    "'replify[offpolicy]'") from None
        path = Path(path)
        if not path.is_file():
            raise InvalidArgumentError(f"path: cannot read the Parquet log {str(path)!r}: no such file")
        try:
            table = pq.read_table(path)
        except (OSError, ValueError) as exc:  # not Parquet
            raise InvalidArgumentError(f"path: cannot read the Parquet log {str(path)!r}: {exc}") from None
        features = _columns(list(table.column_names), path)
        data = {}
        for h in ["action", "cost", "propensity", *features]:
            column = table.column(h)
            if column.null_count:
                row = int(np.flatnonzero(np.asarray(column.is_null()))[0])
                raise InvalidArgumentError(f"{h}: row {row} of the Parquet log {str(path)!r} is missing")
            kind = str(column.type)
            if not (kind.startswith(("int", "uint")) or kind in ("float", "double", "halffloat")):
                # strings, booleans, decimals and dates are refused, not converted
                raise InvalidArgumentError(f"{h}: the Parquet log {str(path)!r}'s column is {kind}; expected "
                                           "numbers (integers or floats)")
            data[h] = np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
        if not table.num_rows:
            raise InvalidArgumentError(f"path: the Parquet log {str(path)!r} has no rows; expected at least one "
                                       "logged interaction")
        contexts = np.stack([data[h] for h in features], axis=1)
        return cls.from_arrays(contexts=contexts, actions=data["action"], costs=data["cost"],
                               propensities=data["propensity"], n=n, name=path.name,
                               min_propensity=min_propensity, cost_range=cost_range)

    @classmethod
    def simulate(cls, adversary: Any, *, n: int, rows: int, seed: Seed, logging: Any = "uniform",
                 adversary_params: dict[str, Any] | None = None, instance_seed: Seed = 0, compact: bool = False) -> Log:
        """``rows`` interactions with a replify contextual ``adversary`` (a registered name or an
        object with ``sample_contexts``), each arm played with the logging policy's probability:
        ``logging`` is ``"uniform"`` or a function of the contexts (rows, n, d) returning every
        row's probabilities (rows, n) (:func:`epsilon_greedy`, :func:`softmax`). A named adversary
        is built from ``instance_seed`` (its features and θ, say: the system the log comes from, the
        same for every ``seed``); the contexts and costs are drawn from ``seed``'s first stream, the
        actions from its second — so logs of one system under one logging policy differ only by
        ``seed``. ``compact=True``, for an adversary of finite support (``context_support``: a
        bootstrapped data set), draws how many interactions fall on each (row, arm) as one multinomial
        — exact in law — and stores each distinct pair once, with its count as weight: a log of 10⁶
        rows of wine is 534 stored rows."""
        if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
            raise InvalidArgumentError(f"rows must be an integer >= 1; got {rows!r}")
        s_data, s_act = seed_sequence(seed).spawn(2)
        seq = logged_system(adversary, n=n, rows=int(rows), instance_seed=instance_seed, adversary_params=adversary_params)
        if compact:
            return cls._compact(seq, n=n, rows=int(rows), logging=logging, rng=np.random.default_rng(s_data),
                                name=adversary if isinstance(adversary, str) else type(seq).__name__,
                                audit_seed=seed_sequence(seed))
        x, c, m = seq.sample_contexts(np.random.default_rng(s_data), 0, int(rows))
        prob = logging_probabilities(logging, np.asarray(x), n)
        u = np.random.default_rng(s_act).random(int(rows))
        a = np.minimum((np.cumsum(prob, axis=1) < u[:, None]).sum(axis=1), n - 1)  # inversion, one uniform a row
        name = adversary if isinstance(adversary, str) else type(seq).__name__
        floor = 1.0 / n if isinstance(logging, str) else getattr(logging, "min_propensity", None)
        return cls.from_arrays(contexts=x, actions=a, costs=c[np.arange(rows), a], propensities=prob[np.arange(rows), a],
                               n=n, distribution=prob, means=m, name=name, min_propensity=floor,
                               cost_range=declared_bounds(seq))

    @classmethod
    def _compact(cls, seq: Any, *, n: int, rows: int, logging: Any, rng: np.random.Generator, name: str,
                 audit_seed: np.random.SeedSequence) -> Log:
        if not callable(getattr(seq, "context_support", None)):
            raise InvalidArgumentError(f"compact=True needs an adversary of finite support (context_support: "
                                       f"classification-bandit, ...); got {type(seq).__name__}")
        x, c, m = (np.asarray(v, dtype=np.float64) for v in seq.context_support())
        support = x.shape[0]
        w = getattr(seq, "support_weights", None)
        w = np.full(support, 1.0 / support) if w is None else np.asarray(w, dtype=np.float64)
        if w.shape != (support,) or not np.isfinite(w).all() or (w < 0).any() or abs(w.sum() - 1.0) > 1e-9:
            raise InvalidArgumentError(f"{type(seq).__name__}.support_weights must be {support} probabilities adding "
                                       f"up to 1, one per row of its support; got shape {w.shape}")
        # the declared rows, costs and weights held to the adversary's own draws, as the engine holds them
        audit_support(seq, (x, c, m, w), n=n, horizon=rows, rng=np.random.default_rng(child(audit_seed, AUDIT_SLOT)))
        prob = logging_probabilities(logging, x, n)  # (R, n): the logging policy on every row of the support
        counts = rng.multinomial(rows, (w[:, None] * prob).ravel() / (w[:, None] * prob).sum()).reshape(support, n)
        r, a = np.nonzero(counts)
        floor = 1.0 / n if isinstance(logging, str) else getattr(logging, "min_propensity", None)
        log = cls.from_arrays(contexts=x[r], actions=a, costs=c[r, a], propensities=prob[r, a], n=n,
                              distribution=prob[r], means=m[r], name=name, min_propensity=floor,
                              cost_range=declared_bounds(seq))
        weights = counts[r, a].astype(np.int64)
        weights.flags.writeable = False
        return attrs.evolve(log, weights=weights)

    def split(self, parts: int, *, seed: Seed) -> list[Log]:
        """The log's interactions dealt at random (from ``seed``) into ``parts`` disjoint logs of
        ⌊rows/parts⌋ interactions each (the remainder left out): where the rows are iid, independent
        logs of the same system — a real log's pairs for :func:`replify.offpolicy.replicability`. A
        compact log is dealt by its weights (multivariate hypergeometric: exact, as dealing its
        interactions one by one)."""
        if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 2:
            raise InvalidArgumentError(f"parts must be an integer >= 2; got {parts!r}")
        size = self.rows // int(parts)
        if size < 1:
            raise InvalidArgumentError(f"parts={parts}: {self.name} has {self.rows} rows, fewer than one a part")
        rng = np.random.default_rng(seed_sequence(seed, name="seed"))
        if self.weights is None:
            order = rng.permutation(self.stored)
            return [self._subset(order[k * size:(k + 1) * size], None) for k in range(int(parts))]
        left, out = self.weights.astype(np.int64), []
        for _ in range(int(parts)):
            counts = rng.multivariate_hypergeometric(left, size)
            left = left - counts
            keep = np.flatnonzero(counts)
            out.append(self._subset(keep, counts[keep]))
        return out

    def _subset(self, rows: np.ndarray, weights: np.ndarray | None) -> Log:
        """The log of the stored ``rows`` (and, compact, their new ``weights``)."""
        def pick(v: np.ndarray | None) -> np.ndarray | None:
            if v is None:
                return None
            out = np.array(v[rows])
            out.flags.writeable = False
            return out
        if weights is not None:
            weights = np.array(weights, dtype=np.int64)
            weights.flags.writeable = False
        return attrs.evolve(self, contexts=pick(self.contexts), actions=pick(self.actions), costs=pick(self.costs),
                            propensities=pick(self.propensities), distribution=pick(self.distribution),
                            means=pick(self.means), weights=weights)

    def true_value(self, policy: Callable[[np.ndarray], Any]) -> float:
        """The policy's expected cost on this log's contexts, from the expected costs a simulated
        log keeps (``means``): the value every estimator here estimates, conditional on the contexts."""
        if self.means is None:
            raise InvalidArgumentError(f"{self.name}: the true value needs every arm's expected cost (means), which "
                                       "only a simulated log keeps")
        return self.mean((policy_probabilities(policy, self) * self.means).sum(axis=1))


def logged_system(adversary: Any, *, n: int, rows: int, instance_seed: Seed,
                  adversary_params: dict[str, Any] | None) -> Any:
    """The system a simulated log comes from: a registered contextual adversary's name, built from
    ``instance_seed`` (its features and θ, say), or an object that shows contexts."""
    if isinstance(adversary, str):
        seq = make_adversary(adversary, n=n, horizon=max(int(rows), 1), seed=seed_sequence(instance_seed, name="instance_seed"),
                             **(adversary_params or {}))
    else:
        seq = adversary
    if not callable(getattr(seq, "sample_contexts", None)):
        raise InvalidArgumentError(f"adversary must show contexts (sample_contexts: linear-gaussian, "
                                   f"classification-bandit, ...); got {type(seq).__name__}")
    return seq


def _columns(header: list[str], path: Path) -> list[str]:
    """The context's columns ``x0``, ``x1``, … of a file log's ``header``, in order; the header
    refused unless it holds exactly action, cost, propensity and them."""
    features = sorted((h for h in header if h.startswith("x") and h[1:].isdigit()), key=lambda h: int(h[1:]))
    need = {"action", "cost", "propensity"}
    other = [h for h in header if h not in need and h not in features]
    if not need <= set(header) or other or not features:
        raise InvalidArgumentError(f"the log {str(path)!r} must have the columns action, cost, propensity and x0, x1, "
                                   f"... (the context); got {header}")
    if [int(h[1:]) for h in features] != list(range(len(features))):
        raise InvalidArgumentError(f"the log {str(path)!r}'s context columns must be x0..x{len(features) - 1} with none "
                                   f"missing; got {features}")
    return features


def logging_probabilities(logging: Any, contexts: np.ndarray, n: int) -> np.ndarray:
    """The logging policy's probabilities (rows, n), checked."""
    rows = contexts.shape[0]
    if isinstance(logging, str):
        if logging != "uniform":
            raise InvalidArgumentError(f"logging must be 'uniform' or a function of the contexts; got {logging!r}")
        return np.full((rows, n), 1.0 / n)
    if not callable(logging):
        raise InvalidArgumentError(f"logging must be 'uniform' or a function of the contexts; got {type(logging).__name__}")
    p = np.asarray(logging(contexts), dtype=np.float64)
    if p.shape != (rows, n):
        raise InvalidArgumentError(f"logging({rows} contexts) must return probabilities of shape ({rows}, {n}), each "
                                   f"row adding up to 1; got shape {p.shape}")
    ok = np.isfinite(p).all(axis=1) & (p >= 0).all(axis=1) & (np.abs(p.sum(axis=1) - 1) <= 1e-9)
    _bad_row("logging", ok, p, f"probabilities of the {n} arms adding up to 1")
    return p


def policy_probabilities(policy: Callable[[np.ndarray], Any], log: Log) -> np.ndarray:
    """A target policy's probabilities of every arm on every row of ``log`` (rows, n): ``policy``
    maps the contexts (all rows at once) to arms (rows,) or to probabilities (rows, n)."""
    return probabilities_on(policy, log.contexts, log.n)


def probabilities_on(policy: Callable[[np.ndarray], Any], contexts: np.ndarray, n: int) -> np.ndarray:
    """:func:`policy_probabilities` on ``contexts`` (rows, n, d) or (rows, d) of ``n`` arms."""
    if not callable(policy):
        raise InvalidArgumentError(f"policy must be a function of the contexts (rows at once) returning arms or "
                                   f"probabilities; got {type(policy).__name__}")
    got = np.asarray(policy(contexts))
    rows = contexts.shape[0]
    if got.shape == (rows,) and got.dtype.kind in "iu":
        if got.min() < 0 or got.max() >= n:
            i = int(np.argmax((got < 0) | (got >= n)))
            raise InvalidArgumentError(f"policy: row {i} is arm {int(got[i])}, outside [0, {n})")
        out = np.zeros((rows, n))
        out[np.arange(rows), got] = 1.0
        return out
    if got.shape == (rows, n) and got.dtype.kind == "f":
        ok = np.isfinite(got).all(axis=1) & (got >= 0).all(axis=1) & (np.abs(got.sum(axis=1) - 1) <= 1e-9)
        if not ok.all():
            i = int(np.argmin(ok))
            raise InvalidArgumentError(f"policy: row {i} is {got[i].tolist()}; expected probabilities adding up to 1")
        return got.astype(np.float64)
    raise InvalidArgumentError(f"policy(contexts) must return integer arms of shape ({rows},) or probabilities of shape "
                               f"({rows}, {n}); got {got.dtype} of shape {got.shape}")


def _scores(model: Callable[[np.ndarray], Any], contexts: np.ndarray, n: int) -> np.ndarray:
    s = np.asarray(model(contexts), dtype=np.float64)
    if s.shape != (contexts.shape[0], n):
        raise InvalidArgumentError(f"the model must return finite scores of shape ({contexts.shape[0]}, {n}); got "
                                   f"{s.shape}")
    _bad_row("the model's scores", np.isfinite(s).all(axis=1), s, "finite scores")
    return s


def epsilon_greedy(model: Callable[[np.ndarray], Any], epsilon: float | np.floating,
                   n: int) -> Callable[[np.ndarray], np.ndarray]:
    """A logging policy: the arm of least ``model`` score (rows, n) with probability 1 − ε, a
    uniform arm with probability ε (every propensity at least ε/n, its ``min_propensity``)."""
    if isinstance(epsilon, (bool, np.bool_)) or not (isinstance(epsilon, numbers.Real) and 0.0 < epsilon <= 1.0):
        raise InvalidArgumentError(f"epsilon must be in (0, 1] (every arm then has probability at least epsilon / n); "
                                   f"got {epsilon!r}")
    epsilon = float(epsilon)  # a numpy float32 would carry its precision into the propensities

    def probabilities(contexts: np.ndarray) -> np.ndarray:
        best = np.argmin(_scores(model, contexts, n), axis=1)
        p = np.full((contexts.shape[0], n), epsilon / n)
        p[np.arange(best.size), best] += 1.0 - epsilon
        return p

    probabilities.min_propensity = epsilon / n  # type: ignore[attr-defined]  (what its certificate may rely on)
    return probabilities


def softmax(model: Callable[[np.ndarray], Any], temperature: float | np.floating,
            n: int) -> Callable[[np.ndarray], np.ndarray]:
    """A logging policy: arm a with probability ∝ exp(−score_a / temperature) (``model``'s scores,
    rows × n); small temperatures give small propensities, and heavy importance weights."""
    if isinstance(temperature, (bool, np.bool_)) or not (isinstance(temperature, numbers.Real) and temperature > 0
                                                          and math.isfinite(temperature)):
        raise InvalidArgumentError(f"temperature must be a finite number > 0; got {temperature!r}")
    temperature = float(temperature)

    def probabilities(contexts: np.ndarray) -> np.ndarray:
        s = -_scores(model, contexts, n) / temperature
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return probabilities
