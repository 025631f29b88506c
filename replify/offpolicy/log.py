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

import copy
import csv
import io
import math
import numbers
import os
import re
from pathlib import Path
from typing import Any, Mapping

import attrs
import numpy as np

from replify.base.checks import as_float_array, byte_size
from replify.base.randomness import Seed, child, seed_sequence
from replify.engine.declarations import AUDIT_SLOT, audit_support, declared_bounds
from replify.errors import InvalidArgumentError, MissingExtraError
from replify.offpolicy.propensity import MODEL, estimated_propensities
from replify.offpolicy.files import SNIFF_BYTES, bounded_lines, file_columns, per_arm_columns, refuse_binary, renamed
from replify.offpolicy.policies import bad_row, logging_probabilities, probabilities_on
from replify.plugins.factory import make_adversary


_BAD_ROW = re.compile(r"(\w+): row (\d+) ")


def _real(name: str, values: Any, ndim: tuple[int, ...]) -> np.ndarray:
    """``values`` as the log's own float64 array: a copy (nothing the caller keeps can change it,
    and the caller's array stays as it was), read-only."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged nested lists
        raise InvalidArgumentError(f"{name} must be an array of real numbers; got {type(values).__name__}") from None
    if raw.dtype.kind == "b":
        raise InvalidArgumentError(f"{name} must be an array of real numbers; got booleans")
    a = as_float_array(name, raw)  # strings, complex numbers and objects refused, not converted
    if a.ndim not in ndim:
        raise InvalidArgumentError(f"{name} must have {' or '.join(f'{k} dimensions' for k in ndim)}; got shape {a.shape}")
    return _own(a, raw)


def _own(a: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """``a``, copied unless converting ``raw`` already made it a new array, and made read-only."""
    if np.may_share_memory(a, raw):
        a = a.copy()
    a.flags.writeable = False
    return a


def _arms(actions: Any, rows: int, costs: Any, x: np.ndarray) -> np.ndarray:
    """The actions as they came (integers, or floats holding integers), shape (rows,) checked."""
    a = np.asarray(actions)
    if a.shape != (rows,):
        if a.ndim == 1 and np.shape(costs) == a.shape:  # actions and costs agree: the contexts are off
            raise InvalidArgumentError(f"contexts must have one row per action: {a.shape[0]} actions and costs; "
                                       f"got contexts of shape {x.shape}")
        raise InvalidArgumentError(f"actions must have one entry per row of contexts, shape ({rows},); got {a.shape}")
    if a.dtype.kind not in "iuf":  # booleans, complex numbers and strings are not arms
        raise InvalidArgumentError(f"actions must be integer arms; got dtype {a.dtype}")
    if a.dtype.kind == "f":
        whole = np.isfinite(a) & (a == np.round(a))
        if not whole.all():
            bad_row("actions", whole, a, "an integer arm")
    return a


def _number_of_arms(n: Any, x: np.ndarray, dist: np.ndarray | None, a: np.ndarray) -> tuple[int, str | None]:
    """``n`` checked, or inferred (the contexts' (rows, n, d), else the distribution's columns, else
    the largest action + 1), and where an inferred one came from (None: given)."""
    origin = None
    if n is None:
        if x.ndim == 3:
            n, origin = x.shape[1], "the contexts' shape (rows, n, d)"
        elif dist is not None:
            n, origin = dist.shape[1], "the distribution's columns"
        else:
            n, origin = int(a.max()) + 1, "the largest action + 1"
            if n < 2:
                raise InvalidArgumentError(f"n: the largest action is {n - 1}, so the log shows fewer than 2 arms; "
                                           "give n, the number of arms")
            if n > MAX_INFERRED_ARMS:
                i = int(np.argmax(a))
                raise InvalidArgumentError(f"actions: row {i} is {a[i].item()!r}, so n (inferred from the largest "
                                           f"action + 1) would be {n:,}; expected arms below {MAX_INFERRED_ARMS:,} "
                                           "(give n, the number of arms, to take more)")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise InvalidArgumentError(f"n must be an integer >= 2, the number of arms; got {n!r}")
    return int(n), origin


#: The most arms a log's largest action may imply when ``n`` is not given: a stray value (a 64-bit
#: integer's maximum, a row id in the action column) would otherwise become a log of billions of
#: arms, whose (rows, n) probabilities no estimate could hold.
MAX_INFERRED_ARMS = 1 << 20


def _arm_layout(flat: np.ndarray, columns: Any) -> np.ndarray:
    """A file's context columns (rows, k) as the log holds them: (rows, n, d) where ``columns`` lists
    each arm's features (:func:`~replify.offpolicy.files.per_arm_columns`), else as they are."""
    arms = per_arm_columns((columns or {}).get("context"))
    if arms is None:
        return flat
    n = len(columns["context"])
    return flat.reshape(flat.shape[0], n, flat.shape[1] // n)


def _logged(propensities: Any) -> bool:
    """Whether a file log's propensities are read from it (``"logged"``) or estimated (``"estimate"``)."""
    if propensities not in ("logged", "estimate"):
        raise InvalidArgumentError(f"propensities must be 'logged' (a column of the file) or 'estimate' (a stated "
                                   f"model fitted on the log); got {propensities!r}")
    return propensities == "logged"


def _checked(*, contexts: Any, actions: Any, costs: Any, propensities: Any, n: Any, distribution: Any, means: Any,
             name: Any, min_propensity: Any, weights: Any, cost_range: Any, propensity_model: Any) -> dict[str, Any]:
    """Every field of a :class:`Log`, checked row by row, as the log's own read-only arrays (module
    docstring; :meth:`Log.from_arrays` says what is checked). ``propensities="estimate"`` estimates
    them (:mod:`replify.offpolicy.propensity`), and ``propensity_model`` then says how."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"name must be a string, the log's name; got {type(name).__name__}")
    x = _real("contexts", contexts, (2, 3))
    rows = x.shape[0]
    if rows == 0:
        raise InvalidArgumentError(f"contexts: the log {name!r} has no rows; expected at least one logged interaction")
    a = _arms(actions, rows, costs, x)
    if isinstance(propensities, str):
        if propensities != "estimate":
            raise InvalidArgumentError(f"propensities must be the logging policy's probabilities of the actions taken, "
                                       f"or 'estimate' (a stated model fitted on the log); got {propensities!r}")
        if distribution is not None or min_propensity is not None:
            raise InvalidArgumentError("propensities='estimate' with a logging distribution or min_propensity: a log "
                                       "that knows its logging policy has its propensities; give them")
        bad_row("contexts", np.isfinite(x.reshape(rows, -1)).all(axis=1), x, "finite features")
        arms = n if n is not None else (x.shape[1] if x.ndim == 3 else None)
        arms = int(np.max(np.asarray(a, dtype=np.float64))) + 1 if arms is None else int(arms)
        bad_row("actions", (np.asarray(a) >= 0) & (np.asarray(a) < arms), np.asarray(a), f"an arm in [0, {arms})")
        fitted = estimated_propensities(x, np.asarray(a).astype(np.int64), arms)
        propensities = fitted[np.arange(rows), np.asarray(a).astype(np.int64)]
        propensity_model = MODEL
    elif propensity_model is not None and not isinstance(propensity_model, str):
        raise InvalidArgumentError(f"propensity_model must say in words how the propensities were estimated; got "
                                   f"{type(propensity_model).__name__}")
    c = _real("costs", costs, (1,))
    p = _real("propensities", propensities, (1,))
    for nm, v in (("costs", c), ("propensities", p)):
        if v.shape != (rows,):
            raise InvalidArgumentError(f"{nm} must have one entry per row of contexts, shape ({rows},); got {v.shape}")
    dist = None if distribution is None else _real("distribution", distribution, (2,))
    n, origin = _number_of_arms(n, x, dist, a)
    if x.ndim == 3 and x.shape[1] != n:
        raise InvalidArgumentError(f"contexts of shape (rows, n, d) must have n={n} arms; got shape {x.shape}")
    bad_row("contexts", np.isfinite(x.reshape(rows, -1)).all(axis=1), x, "finite features")
    bad_row("actions", (a >= 0) & (a < n), a, f"an arm in [0, {n})")  # on the given dtype: uint64 is not wrapped
    a = a.astype(np.int64)  # a copy: the log's own
    a.flags.writeable = False
    bad_row("costs", np.isfinite(c), c, "a finite cost")
    bad_row("propensities", (p > 0) & (p <= 1), p, "a probability in (0, 1] (the logging policy's for the action taken)")
    if dist is not None:
        if dist.shape != (rows, n):
            raise InvalidArgumentError(f"distribution must have shape (rows, n) = ({rows}, {n}); got {dist.shape}")
        ok = np.isfinite(dist).all(axis=1) & (dist >= 0).all(axis=1) & (np.abs(dist.sum(axis=1) - 1) <= 1e-9)
        bad_row("distribution", ok, dist, "probabilities of the n arms adding up to 1")
        bad_row("propensities", np.abs(dist[np.arange(rows), a] - p) <= 1e-9, p,
                 "the distribution's probability of the action taken")
    m = None if means is None else _real("means", means, (2,))
    if m is not None:
        if m.shape != (rows, n):
            raise InvalidArgumentError(f"means must have shape (rows, n) = ({rows}, {n}); got {m.shape}")
        bad_row("means", np.isfinite(m).all(axis=1), m, "finite expected costs")
    if min_propensity is not None:
        if isinstance(min_propensity, (bool, np.bool_)) or not isinstance(min_propensity, numbers.Real) \
                or not 0 < min_propensity <= 1:
            raise InvalidArgumentError(f"min_propensity must be in (0, 1]; got {min_propensity!r}")
        bad_row("propensities", p >= min_propensity * (1 - 1e-12), p, f"at least min_propensity={min_propensity:g}")
        min_propensity = float(min_propensity)
    if cost_range is not None:
        cr = np.asarray(cost_range) if not isinstance(cost_range, (str, bytes)) else np.asarray([])
        if cr.shape != (2,) or cr.dtype.kind not in "iuf" or not (np.isfinite(cr).all() and cr[0] < cr[1]):
            raise InvalidArgumentError(f"cost_range must be (lo, hi), finite numbers with lo < hi; got {cost_range!r:.80}")
        cost_range = (float(cr[0]), float(cr[1]))
        bad_row("costs", (c >= cost_range[0]) & (c <= cost_range[1]), c, f"a cost in cost_range={list(cost_range)}")
    if weights is not None:
        raw = np.asarray(weights)
        if raw.shape != (rows,) or raw.dtype.kind not in "iu":
            raise InvalidArgumentError(f"weights must be integers of shape ({rows},), how many interactions each stored "
                                       f"row stands for; got {raw.dtype} of shape {raw.shape}")
        bad_row("weights", raw >= 1, raw, "a count >= 1 (the interactions the row stands for)")
        bad_row("weights", raw <= 2**62, raw, "a count <= 2**62 (an int64 count)")
        total = sum(int(v) for v in raw) if raw.size < 4096 else int(raw.astype(object).sum())
        if total > 2**62:  # the rows' total is an int64 everywhere it is used: past it the sum wraps
            raise InvalidArgumentError(f"weights: the log stands for {total} interactions; expected at most 2**62 "
                                       "(an int64 count)")
        weights = raw.astype(np.int64)
        weights.flags.writeable = False
    return dict(contexts=x, actions=a, costs=c, propensities=p, n=n, distribution=dist, means=m, name=name,
                min_propensity=min_propensity, weights=weights, cost_range=cost_range, n_origin=origin,
                propensity_model=propensity_model)


@attrs.frozen(eq=False)
class Log:
    """Logged interactions (module docstring). ``distribution`` (rows, n), the logging policy's
    probabilities of every arm, and ``means`` (rows, n), every arm's expected cost given the row's
    contexts, are optional (a simulated log has both). However it is built (``Log(...)``,
    :meth:`from_arrays`, ``attrs.evolve``), every row is checked as :meth:`from_arrays` says, and the
    log holds read-only copies: what the caller keeps can neither change it nor be changed by it."""

    contexts: np.ndarray
    actions: np.ndarray
    costs: np.ndarray
    propensities: np.ndarray
    #: the number of arms (None: inferred as :meth:`from_arrays` says)
    n: int = None  # type: ignore[assignment]  (an int once built)
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
    #: how the propensities were estimated, in words, where the log did not record them (None: logged);
    #: every number from such a log is measured, not certified (replify.offpolicy.propensity)
    propensity_model: str | None = None
    #: where an inferred ``n`` came from, in words (None: given), for messages that depend on it
    n_origin: str | None = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # every construction is checked, not only the named constructors': a log with a zero
        # propensity or a NaN cost would give NaN estimates without a word
        fields = {f.name: getattr(self, f.name) for f in attrs.fields(Log) if f.init}
        for key, value in _checked(**fields).items():
            object.__setattr__(self, key, value)

    def _derived(self, **changes: Any) -> Log:
        """This log with fields replaced by ones derived from its checked rows (a subset of them, new
        weights), which keep every row-wise check: not checked again, for speed."""
        out = copy.copy(self)  # no __init__, so no second pass over the rows
        for key, value in changes.items():
            object.__setattr__(out, key, value)
        return out

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
        to the distribution's, else to the largest action + 1. ``distribution`` (rows, n): the
        logging policy's probabilities of every arm on each row; ``means`` (rows, n): every arm's
        expected cost on each row, where it is known (a simulated log: what :meth:`true_value`
        needs). ``min_propensity``: the logging
        policy's smallest probability of any arm, where it is known (no logged propensity may be below it);
        ``cost_range``: (lo, hi), the range of every cost of the logged system, where it is known (no
        logged cost may lie outside it). ``propensities="estimate"``: the log did not record them, so
        a stated model estimates them from the contexts and actions
        (:mod:`replify.offpolicy.propensity`), and every number from the log says it is measured, not
        certified. The log holds read-only copies of the arrays; the caller's are left as they were."""
        return cls(contexts=contexts, actions=actions, costs=costs, propensities=propensities, n=n,
                   distribution=distribution, means=means, name=name, min_propensity=min_propensity,
                   cost_range=cost_range)

    @classmethod
    def from_csv(cls, path: str | Path, *, n: int | None = None, min_propensity: Any = None,
                 cost_range: Any = None, columns: Mapping[str, Any] | None = None, ignore: Any = None,
                 rewards: bool = False, propensities: str = "logged") -> Log:
        """A log from a CSV file with a header: ``action``, ``cost``, ``propensity`` and the shared
        context's columns ``x0``, ``x1``, … (any other column is refused, so that none is silently
        ignored). ``columns`` maps those names to the file's own — ``{"action": "arm", "cost":
        "reward", "propensity": "p", "context": ["age", "visits"]}`` (per-arm features: one list per
        arm, ``"context": [["a0_price", "a0_rank"], ["a1_price", "a1_rank"]]``, read as (rows, n, d))
        — and ``ignore`` names columns
        to leave out (an id, a timestamp); ``rewards=True`` reads the cost column as rewards, so each
        cost is its reward negated (lower is better, as everywhere in replify; ``cost_range`` is then
        in costs). ``propensities="estimate"`` reads a file with no propensity column and estimates
        them (:meth:`from_arrays`: measured, not certified). A row that does not parse is refused with
        its line number. ``n``,
        ``min_propensity`` and ``cost_range``: what the file cannot say about the logged system, as
        in :meth:`from_arrays` (each row is checked against them)."""
        path = Path(path)
        try:
            binary = path.open("rb", buffering=SNIFF_BYTES)
        except OSError as exc:
            raise InvalidArgumentError(f"path: cannot read the log {str(path)!r}: {exc.strerror or exc}") from None
        values: list[list[float]] = []
        lines: list[int] = []  # each data row's line in the file
        try:
            with binary:
                refuse_binary(binary.peek(SNIFF_BYTES)[:SNIFF_BYTES], path)
                handle = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")  # -sig: the mark spreadsheets write
                reader = csv.reader(bounded_lines(handle, path))
                header = next(reader, None)
                if header is None:
                    raise InvalidArgumentError(f"path: the log {str(path)!r} is empty; expected a header line")
                header = renamed([h.strip() for h in header], columns, ignore, path)
                logged = _logged(propensities)
                features = file_columns(header, path, propensity=logged)
                col = {h: k for k, h in enumerate(header)}
                wanted = ["action", "cost", *(["propensity"] if logged else []), *features]
                for row in reader:
                    line = reader.line_num  # the row's last line in the file (a quoted field may span lines)
                    if not row or all(not f.strip() for f in row):  # a blank line (at the end, say)
                        continue
                    if len(row) != len(header):
                        raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: {len(row)} fields, expected "
                                                   f"{len(header)}")
                    fields = [row[col[h]] for h in wanted]
                    try:
                        if any("_" in f for f in fields):  # float() reads 1_0 as 10: not a number in a CSV file
                            raise ValueError
                        values.append([float(f) for f in fields])
                    except ValueError:
                        raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: a field is not a number: "
                                                   f"{str(row):.300}") from None
                    lines.append(line)
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"path: the log {str(path)!r} is not a text (UTF-8) CSV file: {exc.reason} at "
                                       f"byte {exc.start}") from None
        except csv.Error as exc:  # a field over the csv module's limit, a NUL byte past the first read, ...
            raise InvalidArgumentError(f"the log {str(path)!r}, line {reader.line_num}: not a CSV row this reader "
                                       f"takes: {exc}") from None
        v = np.asarray(values, dtype=np.float64).reshape(-1, len(wanted))
        if not lines:
            raise InvalidArgumentError(f"path: the log {str(path)!r} has a header and no rows; expected at least one "
                                       "logged interaction")
        first = 3 if logged else 2
        try:
            return cls.from_arrays(contexts=_arm_layout(v[:, first:], columns), actions=v[:, 0], costs=0.0 - v[:, 1] if rewards else v[:, 1],
                                   propensities=v[:, 2] if logged else "estimate", n=n, name=path.name,
                                   min_propensity=min_propensity, cost_range=cost_range)
        except InvalidArgumentError as exc:  # a row named by its line in the file too
            found = _BAD_ROW.match(str(exc))
            if found is None:
                raise
            line = lines[int(found.group(2))]
            raise InvalidArgumentError(f"the log {str(path)!r}, line {line}: {exc}") from None

    @classmethod
    def from_parquet(cls, path: str | Path, *, n: int | None = None, min_propensity: Any = None,
                     cost_range: Any = None, columns: Mapping[str, Any] | None = None, ignore: Any = None,
                     rewards: bool = False, propensities: str = "logged") -> Log:
        """A log from a Parquet file with the columns and keywords of :meth:`from_csv` (``columns``,
        ``ignore``, ``rewards`` and ``propensities`` included; needs pyarrow: ``pip install
        "replify[offpolicy]"``); a missing value is refused with its row."""
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
        return cls._from_table(table, path, n=n, min_propensity=min_propensity, cost_range=cost_range, columns=columns,
                               ignore=ignore, rewards=rewards, propensities=propensities)

    @classmethod
    def _from_table(cls, table: Any, path: Path, *, n: int | None, min_propensity: Any, cost_range: Any,
                    columns: Mapping[str, Any] | None, ignore: Any, rewards: bool, propensities: str,
                    first_row: int = 0) -> Log:
        """A log from a pyarrow table read from ``path`` (:meth:`from_parquet`; a chunk of a larger
        log starting at row ``first_row``, :mod:`replify.offpolicy.stream`)."""
        names = renamed(list(table.column_names), columns, ignore, path)
        logged = _logged(propensities)
        features = file_columns(names, path, propensity=logged)
        index = {h: k for k, h in enumerate(names)}
        data = {}
        for h in ["action", "cost", *(["propensity"] if logged else []), *features]:
            column = table.column(index[h])
            if column.null_count:
                row = first_row + int(np.flatnonzero(np.asarray(column.is_null()))[0])
                raise InvalidArgumentError(f"{h}: row {row} of the Parquet log {str(path)!r} is missing")
            kind = str(column.type)
            if not (kind.startswith(("int", "uint")) or kind in ("float", "double", "halffloat")):
                # strings, booleans, decimals and dates are refused, not converted
                raise InvalidArgumentError(f"{h}: the Parquet log {str(path)!r}'s column is {kind}; expected "
                                           "numbers (integers or floats)")
            values = np.asarray(column.to_numpy(zero_copy_only=False))
            # the actions keep their integer type (a uint64 arm read as float64, then int64, would wrap);
            # the rest are real numbers
            data[h] = values if h == "action" and values.dtype.kind in "iu" else values.astype(np.float64)
        if not table.num_rows:
            raise InvalidArgumentError(f"path: the Parquet log {str(path)!r} has no rows; expected at least one "
                                       "logged interaction")
        contexts = _arm_layout(np.stack([data[h] for h in features], axis=1), columns)
        try:
            return cls.from_arrays(contexts=contexts, actions=data["action"],
                                   costs=0.0 - data["cost"] if rewards else data["cost"],
                                   propensities=data["propensity"] if logged else "estimate", n=n, name=path.name,
                                   min_propensity=min_propensity, cost_range=cost_range)
        except InvalidArgumentError as exc:  # a bad row: the file named too (and the chunk's place in it)
            if _BAD_ROW.match(str(exc)) is None:
                raise
            where = f" (the chunk from row {first_row})" if first_row else ""
            raise InvalidArgumentError(f"the Parquet log {str(path)!r}{where}: {exc}") from None

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
        root = seed_sequence(seed)  # children without spawning: the caller's SeedSequence is never moved
        s_data, s_act = child(root, 0), child(root, 1)
        seq = logged_system(adversary, n=n, rows=int(rows), instance_seed=instance_seed, adversary_params=adversary_params)
        if compact:
            return cls._compact(seq, n=n, rows=int(rows), logging=logging, rng=np.random.default_rng(s_data),
                                name=adversary if isinstance(adversary, str) else type(seq).__name__,
                                audit_seed=seed_sequence(seed))
        check_simulated_size(seq, n=n, rows=int(rows))  # rows=10**10: refused with the memory it needs, not numpy's
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
            owner = f"{type(seq).__name__}.support_weights"
            if w.shape != (support,):
                raise InvalidArgumentError(f"{owner} must be {support} probabilities adding up to 1, one per row of its "
                                           f"support; got shape {w.shape}")
            bad_row(owner, np.isfinite(w) & (w >= 0), w, "a probability >= 0 (one per row of the support)")
            raise InvalidArgumentError(f"{owner} must be {support} probabilities adding up to 1, one per row of its "
                                       f"support; they add up to {w.sum()!r}")
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
        return log._derived(weights=weights)  # counts of a multinomial: integers >= 1, one per stored row

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
        return self._derived(contexts=pick(self.contexts), actions=pick(self.actions), costs=pick(self.costs),
                            propensities=pick(self.propensities), distribution=pick(self.distribution),
                            means=pick(self.means), weights=weights)

    def true_value(self, policy: Any) -> float:
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


def check_simulated_size(seq: Any, *, n: int, rows: int, argument: str = "rows") -> None:
    """Refuse ``rows`` interactions of ``seq`` (a system :func:`logged_system` returned) whose arrays
    could not be held in this machine's memory, before any is drawn: ``rows=10**10`` is a clear
    refusal naming the estimate, not numpy's MemoryError. (A compact log holds its support only.)"""
    x = np.asarray(seq.sample_contexts(np.random.default_rng(0), 0, 1)[0])  # one row: every row's shape
    per_row = x[0].size
    # float64 numbers a row holds while the log is built: the contexts twice (as drawn, and the
    # log's own copy), costs, means and probabilities (each n, and copies of two), and a few per row
    need = 8 * int(rows) * (2 * per_row + 7 * n + 8)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # a system that does not say: numpy's own error stands
        return
    if need > total:
        raise InvalidArgumentError(f"{argument} {int(rows):,}: a simulated log of {n} arms, {per_row} context numbers a "
                                   f"row, needs about {byte_size(need)} of memory while it is built, more than this "
                                   f"machine's {byte_size(total)}; expected fewer rows (at most about "
                                   f"{total // (need // int(rows)):,})")


def policy_probabilities(policy: Any, log: Log) -> np.ndarray:
    """A target policy's probabilities of every arm on every row of ``log`` (rows, n): ``policy``
    maps the contexts (all rows at once) to arms (rows,) or to probabilities (rows, n), or is those
    arms or probabilities as an array."""
    return probabilities_on(policy, log.contexts, log.n, n_origin=log.n_origin)


def unlogged_arms(log: Log, pi: np.ndarray) -> str | None:
    """What a reader should know where a policy (its probabilities ``pi``, (rows, n)) plays arms the
    log never shows: the estimate has no data on them (IPS counts them as nothing, a baseline or a
    cost model stands in for them). None where every arm it plays was logged."""
    logged = np.zeros(log.n, dtype=bool)
    logged[np.unique(log.actions)] = True
    return unlogged_text(log.name, np.array([log.mean(pi[:, a]) for a in range(log.n)]), logged)


def unlogged_text(name: str, share: np.ndarray, logged: np.ndarray) -> str | None:
    """:func:`unlogged_arms` from each arm's share of the policy's play and whether the log shows it."""
    missing = np.flatnonzero(~logged & (share > 0))
    if missing.size == 0:
        return None
    arms = ", ".join(f"{int(a)} ({share[a]:.0%} of its play)" for a in missing)
    return (f"it plays arm{'s' if missing.size > 1 else ''} {arms}, which {name} never logged: the estimate has "
            "no data there")
