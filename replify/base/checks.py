"""Validation at the public boundary: every check raises an error from :mod:`replify.errors`
whose message names the argument, what was expected and what came.

The per-step checks (:meth:`CostDomain.check`) sit on the streaming hot path, so they use
two numpy reductions and build the long message only once something is wrong.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import stat
import typing
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import attrs
import numpy as np
from typeguard import TypeCheckError, check_type

from replify.errors import (
    ActionError,
    ArgumentTypeError,
    CostError,
    HorizonError,
    InvalidArgumentError,
    LearnerProtocolError,
    OutputPathError,
)

_F64 = np.dtype(np.float64)

#: Slack allowed on the ℓ1 norm of a cost vector: a vector such as ``np.full(10, 0.1)`` sums
#: to 1.0000000000000002 in floating point, and rejecting it would be pedantry, not safety.
L1_SLACK = 1e-9


def check_int(name: str, value: Any, *, minimum: int) -> int:
    """``value`` as an ``int`` ≥ ``minimum`` (bools and non-integral numbers are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(
            f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise InvalidArgumentError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_step_size(name: str, value: Any, *, minimum: int, budget: int, per: int = 1, holds: str | None = None) -> int:
    """``value`` as an ``int`` ≥ ``minimum`` (:func:`check_int`) small enough that what one step of
    one run holds — ``value`` × ``per`` float64 numbers, ``holds`` in words — fits the engine's memory
    budget of ``budget`` bytes (``replify.engine.limits.MEMORY_BUDGET``, which the caller passes):
    ``n=10**9`` is refused at once, with the limit and why, not after numpy tried to allocate 8 GB."""
    v = check_int(name, value, minimum=minimum)
    most = max(minimum, budget // (8 * max(1, per)))
    if v > most:
        raise InvalidArgumentError(
            f"{name} must be at most {most:,}, got {v:,}: every step of every run holds {holds or name + ' costs'} as "
            f"float64 numbers (8 bytes each: {_size(8 * v * per)} a step here), and one step must fit within the "
            f"engine's memory budget of {_size(budget)} (replify.engine.limits.MEMORY_BUDGET)"
        )
    return v


def check_features(seq: Any, *, n: int, budget: int) -> int:
    """The ``d`` an adversary that shows contexts declares (its features per arm): an integer ≥ 1
    whose ``n``·d numbers a step fit the engine's memory budget of ``budget`` bytes — read once, before
    the engine sizes any array by it (2.5 is not silently 2, 10**12 is not a MemoryError)."""
    owner = f"the adversary {type(seq).__name__}"
    if not hasattr(seq, "d"):
        raise InvalidArgumentError(
            f"{owner} shows contexts, so it must declare d, the number of features per arm (an integer >= 1); it has "
            "no attribute d"
        )
    return check_step_size(f"{owner}'s d (features per arm)", seq.d, minimum=1, budget=budget, per=n,
                           holds=f"n x d = {n} x d contexts")


def _size(count: int) -> str:
    """``count`` bytes in words: ``24 MiB``, ``7.45 GiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} bytes"


def check_real(name: str, value: Any) -> float:
    """``value`` as a finite ``float`` (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(
            f"{name} must be a real number, got {value!r} ({type(value).__name__})"
        )
    out = float(value)
    if not np.isfinite(out):
        raise InvalidArgumentError(f"{name} must be finite, got {out}")
    return out


def check_rho(value: Any, name: str = "rho") -> float:
    """The replicability parameter: a real number strictly inside (0, 1)."""
    rho = check_real(name, value)
    if not 0.0 < rho < 1.0:
        raise InvalidArgumentError(f"{name} must lie strictly between 0 and 1, got {rho}")
    return rho


def check_positive(name: str, value: Any) -> float:
    """A finite real number > 0."""
    out = check_real(name, value)
    if out <= 0.0:
        raise InvalidArgumentError(f"{name} must be > 0, got {out}")
    return out


def check_probability(name: str, value: Any, *, open_low: bool = False, open_high: bool = False) -> float:
    """A finite real number in [0, 1] — or in (0, 1], [0, 1), (0, 1) with ``open_low`` /
    ``open_high``."""
    p = check_real(name, value)
    low_ok = p > 0.0 if open_low else p >= 0.0
    high_ok = p < 1.0 if open_high else p <= 1.0
    if not (low_ok and high_ok):
        interval = f"{'(' if open_low else '['}0, 1{')' if open_high else ']'}"
        raise InvalidArgumentError(f"{name} must lie in {interval}, got {p}")
    return p


def as_int_array(name: str, value: Any) -> np.ndarray:
    """``value`` (a number or a sequence of them) as an int64 array of its entries, refusing
    what is not a whole number: 1.5 is not silently step 1, True is not 1, '3' is not 3."""
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged nested sequences
        raise InvalidArgumentError(f"{name} must be integers, got {value!r}") from None
    if arr.dtype.kind == "f" and np.isfinite(arr).all() and np.array_equal(arr, np.round(arr)) \
            and (arr.size == 0 or np.abs(arr).max() < 2.0**53):
        return arr.astype(np.int64)  # whole floats (2.0) are whole numbers: no information lost
    if arr.dtype.kind not in "iu" or arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        shown = arr.tolist() if arr.dtype.kind in "biufc" else value
        raise InvalidArgumentError(
            f"{name} must be integers (not booleans, strings or fractions), got {shown!r}"
            + (f" of dtype {arr.dtype}" if arr.dtype.kind in "bc" or arr.dtype == object else "")
        )
    return arr.astype(np.int64)


#: The values a learner's ``feedback`` attribute may take (docs/bandits.md); absent means "full".
FEEDBACK = ("full", "bandit")


def check_feedback(learner: Any) -> str:
    """The learner's declared ``feedback``: "full" (the default, when the attribute is absent) or
    "bandit". Anything else is refused — a learner declaring ``feedback = "Bandit"`` must not run
    as a full-information learner and see whole cost vectors."""
    value = getattr(learner, "feedback", "full")
    if not (isinstance(value, str) and value in FEEDBACK):
        raise LearnerProtocolError(
            f"{type(learner).__name__}.feedback must be one of {', '.join(map(repr, FEEDBACK))} "
            f"(absent means 'full'), got {value!r}"
        )
    return value


def as_float_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array, refusing what would be converted with loss or by guesswork
    (complex numbers, strings, objects). The caller's array is never written to."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise CostError(
            f"{name} must be an array of real numbers, got an array of dtype {arr.dtype}"
        )
    return arr.astype(np.float64, copy=False)


def _bound(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    # ±inf is a bound (ucb1 with sigma= takes any real cost); NaN is none, and would pass every check.
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise InvalidArgumentError(
            f"{attribute.name} must be a real number (±inf allowed), got {value!r} ({type(value).__name__})"
        )


def _ordered(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    _bound(instance, attribute, value)
    if not instance.low <= value:
        raise InvalidArgumentError(f"high must be >= low={instance.low}, got {value}")


def _flag(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"{attribute.name} must be True or False, got {value!r} ({type(value).__name__})")


@attrs.frozen
class CostDomain:
    """The set of cost vectors a learner accepts: the box ``[low, high]^n``, intersected with
    the unit ℓ1 ball when ``l1`` is set (OLO costs of ℓ1 norm at most 1, paper §2)."""

    low: float = attrs.field(validator=_bound)
    high: float = attrs.field(validator=_ordered)
    l1: bool = attrs.field(default=False, validator=_flag)

    @classmethod
    def for_input(cls, norm: Literal["linf", "l1"], cost_range: tuple[float, float]) -> CostDomain:
        return cls(low=float(cost_range[0]), high=float(cost_range[1]), l1=norm == "l1")

    def describe(self) -> str:
        box = f"entries in [{self.low:g}, {self.high:g}]"
        return f"{box} and l1 norm <= 1" if self.l1 else box

    def check(self, cost: Any, *, n: int, step: int, name: str = "cost") -> np.ndarray:
        """One cost vector of shape ``(n,)``, received at time step ``step`` (1-based).

        This sits on the streaming hot path. For short vectors Python's min/max/sum over
        ``tolist()`` beat numpy's reductions, whose fixed cost dominates at small n; the sum
        catches NaN and ±inf, which min and max can step over."""
        if type(cost) is np.ndarray and cost.dtype == _F64 and cost.shape == (n,):
            c = cost
        else:
            c = as_float_array(name, cost)
            if c.shape != (n,):
                raise CostError(f"{name} at step {step} must have shape ({n},), got shape {c.shape}")
        if n <= 64:
            v = c.tolist()
            ok = min(v) >= self.low and max(v) <= self.high and math.isfinite(sum(v))
            ok = ok and (not self.l1 or sum(map(abs, v)) <= 1.0 + L1_SLACK)
        else:  # NaN makes both comparisons False, so this also catches NaN and ±inf
            ok = c.min() >= self.low and c.max() <= self.high and (not self.l1 or np.abs(c).sum() <= 1.0 + L1_SLACK)
        if not ok:
            self._raise(c[None, :], name=name, first_step=step)
        return c

    def check_matrix(self, costs: Any, *, n: int, name: str = "costs", first_step: int = 1) -> np.ndarray:
        """A ``(T, n)`` cost matrix whose first row is time step ``first_step``."""
        c = as_float_array(name, costs)
        if c.ndim != 2 or c.shape[1] != n:
            raise CostError(f"{name} must have shape (T, {n}), got shape {c.shape}")
        if c.size and not (
            c.min() >= self.low
            and c.max() <= self.high
            and (not self.l1 or np.abs(c).sum(axis=1).max() <= 1.0 + L1_SLACK)
        ):
            self._raise(c, name=name, first_step=first_step)
        return c

    def _raise(self, c: np.ndarray, *, name: str, first_step: int) -> None:
        finite = np.isfinite(c).all(axis=1)
        in_box = finite & (c >= self.low).all(axis=1) & (c <= self.high).all(axis=1)
        ok = in_box & (np.abs(c).sum(axis=1) <= 1.0 + L1_SLACK) if self.l1 else in_box
        row = int(np.argmin(ok))
        where = f"{name} at step {first_step + row}"
        if not finite[row]:
            raise CostError(f"{where} must be finite, got {c[row].tolist()}")
        if not in_box[row]:
            raise CostError(f"{where} must have {self.describe()}, got {c[row].tolist()}")
        raise CostError(
            f"{where} must have {self.describe()}, got l1 norm {np.abs(c[row]).sum():.12g}"
        )


def check_path(name: str, value: Any) -> Path:
    """A file path a user gave (a ``str`` or ``os.PathLike``) as a :class:`~pathlib.Path`, refusing
    one with a NUL byte, which no file system accepts (Python's own error is "embedded null byte")."""
    if not isinstance(value, (str, os.PathLike)):
        raise InvalidArgumentError(f"{name} must be a file path (a str or pathlib.Path), got {value!r} ({type(value).__name__})")
    text = os.fspath(value)
    if "\x00" in (text if isinstance(text, str) else text.decode("latin-1")):
        raise InvalidArgumentError(f"{name} must be a file path without NUL bytes (no file system accepts one), got {text!r}")
    return Path(os.fsdecode(text))


def check_output_path(path: Any, *, what: str, suffixes: tuple[str, ...] | None = None,
                      inputs: Sequence[Any] = (), ours: Callable[[Path], bool] | None = None,
                      kind: str = "file") -> Path:
    """An output file to write later, checked now — before any work — so that a long run never
    ends in a refusal and nothing a user gave or wrote is lost (docs/evaluation.md, "Files"): a
    supported suffix, an existing folder, write permission; if the file exists, a regular file (a
    FIFO, a device or a terminal would be replaced by, or block on, a file of replify's: ``-``
    writes to standard output where the command offers it) that is none of ``inputs`` (the
    learner's and adversary's files, data, configs: links and second names resolved) and, when
    ``ours`` is given, one that ``ours`` recognises as replify's own ``kind`` of file."""
    p = check_path(what, path)
    if suffixes is not None and p.suffix.lower() not in suffixes:
        raise OutputPathError(
            f"{what} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}; got {str(p)!r}"
        )
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise OutputPathError(f"{what} {str(p)!r}: the folder {str(folder)!r} does not exist")
    for given in inputs:
        if same_file(p, given):
            raise OutputPathError(
                f"{what} {str(p)!r} is an input of this run ({str(given)!r}); expected a new file or one of replify's "
                f"own {kind}s: writing there would replace the input"
            )
    if p.exists():
        mode = os.stat(p).st_mode  # the file a link leads to: that is what a write would replace
        if not stat.S_ISREG(mode):
            kind_of = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                       else "a character device (a terminal, /dev/null or /dev/stdout)" if stat.S_ISCHR(mode)
                       else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                       else "not a regular file")
            raise OutputPathError(
                f"{what} {str(p)!r} is {kind_of}; expected a regular file, which replify writes whole and then "
                "renames into place" + (" (use - for standard output)" if kind != "results file" else "")
            )
        if not os.access(p, os.W_OK):
            raise OutputPathError(f"{what} {str(p)!r} exists and is not a writable file")
        if ours is not None and not ours(p):
            raise OutputPathError(
                f"{what} {str(p)!r} exists and is not a {kind} of replify's; replify does not replace a file it did "
                "not write: give a new path, or move that file"
            )
    elif not os.access(folder, os.W_OK):
        raise OutputPathError(f"{what} {str(p)!r}: the folder {str(folder)!r} is not writable")
    return p


def same_file(a: Any, b: Any) -> bool:
    """Two paths naming one file: equal once links are resolved, or one file under two names
    (a hard link)."""
    if os.path.realpath(os.fspath(a)) == os.path.realpath(os.fspath(b)):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: only its resolved name can match
        return False


def check_next_step(t: int, horizon: int) -> None:
    """Refuse an update beyond the horizon (``t`` steps played so far)."""
    if t >= horizon:
        raise HorizonError(f"update() called for step {t + 1}, past the horizon T={horizon}")


def check_remaining(t: int, rows: int, horizon: int) -> None:
    """Refuse a cost sequence longer than the steps left before the horizon."""
    if t + rows > horizon:
        raise HorizonError(f"costs has {rows} rows but only {horizon - t} steps remain before the horizon T={horizon}")


#: integer types an action may have that are never booleans (bool is an int, and refused as an action)
PLAIN_INTS = frozenset({int, np.int64, np.int32, np.intp, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8})


def check_action(action: Any, *, n: int, problem: str, step: int, source: str) -> Any:
    """An experts (or contextual) action is an ``int`` in ``[0, n)``; an OLO action a finite vector
    of shape ``(n,)``."""
    if problem in ("experts", "contextual"):
        # a Python or numpy integer, checked without the ABC machinery of numbers.Integral (this runs
        # once per step for a learner stepped in Python: the ABC check was most of its time)
        if type(action) in PLAIN_INTS and 0 <= action < n:
            return int(action)
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action < n:
            raise ActionError(
                f"{source} returned action {action!r} at step {step}; "
                f"expected an integer expert index in [0, {n})"
            )
        return int(action)
    vec = np.asarray(action)
    if vec.shape != (n,) or vec.dtype.kind not in "biuf" or not np.isfinite(vec).all():
        raise ActionError(
            f"{source} returned action {action!r} at step {step}; "
            f"expected a finite real vector of shape ({n},)"
        )
    return vec


class _NoCost:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


#: The default of a bandit learner's ``cost`` in ``update(action, cost)``: a call with one argument
#: (a cost vector, as a full-information learner takes) reaches the learner, which refuses it with
#: :func:`refuse_cost_vector_update` instead of Python's bare "missing 1 required positional argument".
NO_COST: Any = _NoCost()


def refuse_cost_vector_update(learner: Any, given: Any, *, step: int) -> typing.NoReturn:
    """Refuse ``update(given)`` on a bandit learner: it takes ``(action, cost)``."""
    shape = np.shape(given) if isinstance(given, (np.ndarray, list, tuple)) else ()
    what = (f"a sequence of shape {shape}, a whole cost vector" if len(shape) >= 1 else
            f"{given!r} ({type(given).__name__})")
    raise LearnerProtocolError(
        f"{type(learner).__name__}.update() at step {step}: a bandit learner (feedback='bandit') is updated as "
        f"update(action, cost) — the arm act() returned and that arm's cost, one number; got one argument, {what}"
        + ("; under bandit feedback only the played arm's cost is seen: update(action, costs[action])"
           if len(shape) >= 1 else "")
    )


def check_learner(obj: Any, *, source: str) -> Any:
    """An object that satisfies the learner protocol: callable ``act`` and ``update``, and a
    ``feedback`` attribute, if it has one, among :data:`FEEDBACK`."""
    missing = [m for m in ("act", "update") if not callable(getattr(obj, m, None))]
    if missing:
        raise LearnerProtocolError(
            f"{source} must return a learner with callable act() and update(cost); "
            f"got {type(obj).__name__} without {' and '.join(missing)}()"
        )
    feedback = check_feedback(obj)
    act = getattr(obj, "act")
    contextual = getattr(obj, "problem", None) == "contextual"
    if contextual and not _takes(type(obj), act, 1):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} that declares problem='contextual', so it acts as act(context) "
            f"on the step's (n, d) features; its act takes {_parameters(act)}"
        )
    if not contextual and not _takes(type(obj), act, 0) and _takes(type(obj), act, 1):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} whose act takes {_parameters(act)}, but it does not declare "
            f"problem = 'contextual', so it would be called as act(); if it acts on a context, declare "
            f"problem = 'contextual' and feedback = 'bandit' (docs/contextual.md)"
        )
    update = getattr(obj, "update")
    if feedback == "bandit" and not _takes(type(obj), update, 2):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} that declares feedback='bandit', so it is updated as "
            f"update(action, cost) — the arm it played and that arm's cost; its update takes "
            f"{_parameters(update)}"
        )
    if feedback == "full" and not _takes(type(obj), update, 1) and _takes(type(obj), update, 2):
        raise LearnerProtocolError(
            f"{source} returned a {type(obj).__name__} without feedback = 'bandit', so it is updated as update(cost) "
            f"with the whole cost vector; its update takes {_parameters(update)} — if it learns from the played "
            f"arm's cost only, declare feedback = 'bandit' (docs/bandits.md)"
        )
    return obj


def _takes(cls: type, method: Any, count: int) -> bool:
    """Whether ``method`` (a learner's bound ``act`` or ``update``) can be called with ``count``
    positional arguments; read once per class (the engine builds a learner for every run of every pair)."""
    func = getattr(method, "__func__", None)
    if func is not None and getattr(cls, getattr(func, "__name__", ""), None) is func:
        return _binds(func, count + 1)  # the function itself, self included
    try:
        return _binds(method, count)
    except TypeError:  # an unhashable callable: read it uncached
        return _binds.__wrapped__(method, count)


@functools.lru_cache(maxsize=256)
def _binds(function: Any, count: int) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read: let the call decide
        return True
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _parameters(method: Any) -> str:
    try:
        return f"({', '.join(p for p in inspect.signature(method).parameters)})"
    except (TypeError, ValueError):
        return "(unknown)"


def check_factory(factory: Any, *, name: str) -> Any:
    if not callable(factory):
        raise LearnerProtocolError(
            f"{name} must be callable (a class or function taking n, horizon, rng), "
            f"got {factory!r} ({type(factory).__name__})"
        )
    return factory


def public(func: Any) -> Any:
    """typeguard at the public boundary: every argument is checked against its
    annotation on every call, and a mismatch raises :class:`~replify.errors.ArgumentTypeError`
    (a ``TypeError``) naming the argument, e.g. ``argument "horizon" (str) did not match any
    element in the union: int: is not an instance of int ...``.

    The check is explicit (``typeguard.check_type`` on the bound arguments) rather than
    ``@typechecked``, so users and the test run — where typeguard's import hook instruments the
    whole package and replaces ``@typechecked`` — see the same error.
    """
    sig = inspect.signature(func)
    hints: dict[str, Any] | None = None

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        nonlocal hints
        if hints is None:  # resolved on first call: annotations may name later definitions
            hints = typing.get_type_hints(func)
        bound = sig.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            param = sig.parameters[name]
            if name not in hints or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            try:
                check_type(value, hints[name])
            except TypeCheckError as exc:
                raise ArgumentTypeError(f'argument "{name}" ({exc}) in {func.__name__}()') from None
        return func(*args, **kwargs)

    return checked
