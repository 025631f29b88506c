"""Policies over a log's rows (docs/offpolicy.md): the logging policies replify states
(:func:`epsilon_greedy`, :func:`softmax`, uniform, or any function of the contexts) and a target
policy's probabilities of every arm on given contexts, checked. Below the log: what takes a
:class:`~replify.offpolicy.Log` lives in :mod:`replify.offpolicy.log`."""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from replify.errors import InvalidArgumentError

def bad_row(name: str, ok: np.ndarray, values: np.ndarray, expected: str) -> None:
    """Refuse the first row where ``ok`` is False, naming the column, the row and its value."""
    if not ok.all():
        i = int(np.argmin(ok))
        value = values[i].tolist() if values.ndim > 1 else values[i].item()
        raise InvalidArgumentError(f"{name}: row {i} is {value!r}; expected {expected}")


#: How a refused row starts (:func:`bad_row`): a file log adds where it is in the file.


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
    bad_row("logging", ok, p, f"probabilities of the {n} arms adding up to 1")
    return p


def probabilities_on(policy: Any, contexts: np.ndarray, n: int, *,
                     n_origin: str | None = None) -> np.ndarray:
    """:func:`policy_probabilities` on ``contexts`` (rows, n, d) or (rows, d) of ``n`` arms (inferred
    from ``n_origin``, in words, where it was not given: a refusal says so)."""
    whence = "" if n_origin is None else f" (n = {n}, inferred from {n_origin}; give n if the log has more arms)"
    rows = contexts.shape[0]
    if isinstance(policy, np.ndarray):  # the action distribution precomputed on these rows, as OBP takes it
        got = policy
        if got.ndim not in (1, 2) or got.shape[0] != rows:
            raise InvalidArgumentError(f"policy given as an array must hold one row per row of the log: arms of shape "
                                       f"({rows},) or probabilities of shape ({rows}, {n}); got shape {got.shape}")
    elif not callable(policy):
        raise InvalidArgumentError(f"policy must be a function of the contexts (rows at once) returning arms or "
                                   f"probabilities, or those arms or probabilities as an array; got {type(policy).__name__}")
    else:
        got = np.asarray(policy(contexts))
    if got.shape == (rows,) and got.dtype.kind in "iu":
        if got.min() < 0 or got.max() >= n:
            i = int(np.argmax((got < 0) | (got >= n)))
            raise InvalidArgumentError(f"policy: row {i} is arm {int(got[i])}, outside [0, {n}){whence}")
        out = np.zeros((rows, n))
        out[np.arange(rows), got] = 1.0
        return out
    if got.shape == (rows, n) and got.dtype.kind == "f":
        ok = np.isfinite(got).all(axis=1) & (got >= 0).all(axis=1) & (np.abs(got.sum(axis=1) - 1) <= 1e-9)
        if not ok.all():
            i = int(np.argmin(ok))
            raise InvalidArgumentError(f"policy: row {i} is {got[i].tolist()}; expected probabilities adding up to 1")
        return got.astype(np.float64)
    if n_origin is not None and got.ndim == 2 and got.shape[0] == rows:
        whence = f" (n = {n}, inferred from {n_origin}; the policy gave {got.shape[1]} columns: give n if the log has more arms)"
    raise InvalidArgumentError(f"policy(contexts) must return integer arms of shape ({rows},) or probabilities of shape "
                               f"({rows}, {n}); got {got.dtype} of shape {got.shape}{whence}")


def model_scores(model: Callable[[np.ndarray], Any], contexts: np.ndarray, n: int) -> np.ndarray:
    s = np.asarray(model(contexts), dtype=np.float64)
    if s.shape != (contexts.shape[0], n):
        raise InvalidArgumentError(f"the model must return finite scores of shape ({contexts.shape[0]}, {n}); got "
                                   f"{s.shape}")
    bad_row("the model's scores", np.isfinite(s).all(axis=1), s, "finite scores")
    return s


def check_epsilon(epsilon: Any) -> float:
    """ε-greedy's exploration rate, a real number in (0, 1] (numpy's too; booleans refused), as a float."""
    if isinstance(epsilon, (bool, np.bool_)) or not (isinstance(epsilon, numbers.Real) and 0.0 < epsilon <= 1.0):
        raise InvalidArgumentError(f"epsilon must be in (0, 1] (every arm then has probability at least epsilon / n); "
                                   f"got {epsilon!r}")
    return float(epsilon)  # a numpy float32 would carry its precision into the propensities


def epsilon_greedy(model: Callable[[np.ndarray], Any], epsilon: float | np.floating,
                   n: int) -> Callable[[np.ndarray], np.ndarray]:
    """A logging policy: the arm of least ``model`` score (rows, n) with probability 1 − ε, a
    uniform arm with probability ε (every propensity at least ε/n, its ``min_propensity``)."""
    epsilon = check_epsilon(epsilon)

    def probabilities(contexts: np.ndarray) -> np.ndarray:
        best = np.argmin(model_scores(model, contexts, n), axis=1)
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
        s = -model_scores(model, contexts, n) / temperature
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return probabilities
