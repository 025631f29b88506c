"""Validation at the public boundary: every check raises an error from :mod:`replify.errors`
whose message names the argument, what was expected and what came.

The per-step checks (:meth:`CostDomain.check`) sit on the streaming hot path, so they use
two numpy reductions and build the long message only once something is wrong.

The learner protocol's checks (act, update, feedback, actions, the horizon) are
:mod:`replify.base.protocol`'s, the checks of a path a user gave :mod:`replify.base.paths`'.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import typing
from typing import Any, Literal

import attrs
import numpy as np
from typeguard import TypeCheckError, check_type, typeguard_ignore

from replify.errors import ArgumentTypeError, CostError, InvalidArgumentError

# the learner protocol's and the paths' checks lived here: they import from here still
from replify.base.paths import check_output_path, check_path, same_file
from replify.base.protocol import (
    FEEDBACK, NO_COST, PLAIN_INTS, check_action, check_factory, check_feedback, check_learner, check_next_step,
    check_remaining, refuse_cost_vector_update,
)

_F64 = np.dtype(np.float64)

#: Slack allowed on the ℓ1 norm of a cost vector: a vector such as ``np.full(10, 0.1)`` sums
#: to 1.0000000000000002 in floating point, and rejecting it would be pedantry, not safety.
L1_SLACK = 1e-9


@typeguard_ignore  # a validator run each step: it checks its own arguments
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
            f"float64 numbers (8 bytes each: {byte_size(8 * v * per)} a step here), and one step must fit within the "
            f"engine's memory budget of {byte_size(budget)} (replify.engine.limits.MEMORY_BUDGET)"
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


def byte_size(count: int) -> str:
    """``count`` bytes in words: ``24 MiB``, ``7.45 GiB``."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} bytes"


@typeguard_ignore  # a validator run each step: it checks its own arguments
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


@typeguard_ignore  # a validator run each step: it checks its own arguments
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

    @typeguard_ignore  # a validator run each step: it checks its own arguments
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
        # a short row in full; a long one by its first offending entry (twenty floats hide the one)
        if not finite[row]:
            a = int(np.argmin(np.isfinite(c[row])))
            got = c[row].tolist() if c.shape[1] <= 6 else f"{float(c[row, a])!r} at entry {a} of {c.shape[1]}"
            raise CostError(f"{where} must be finite, got {got}")
        if not in_box[row]:
            bad = (c[row] < self.low) | (c[row] > self.high)
            a = int(np.argmax(bad))
            got = (f"{c[row].tolist()} (entry {a}: {float(c[row, a])!r})" if c.shape[1] <= 6 else
                   f"{float(c[row, a])!r} at entry {a} of {c.shape[1]} ({int(bad.sum())} outside)")
            raise CostError(f"{where} must have {self.describe()}, got {got}")
        raise CostError(
            f"{where} must have {self.describe()}, got l1 norm {np.abs(c[row]).sum():.12g}"
        )


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
