"""Action sets for online linear optimisation (paper §3), each given by its linear-minimisation
oracle ``argmin_{a ∈ A} a·g`` and its ℓ1 diameter D (``theorem:regret-replicable-FTPLB``).

``argmin`` works on many cost vectors at once (rows of ``g``) so that an algorithm can decide
every transition of a chunk in one call. The experts' :class:`Simplex` plays expert indices
(``int``); the others play vectors of shape ``(dim,)``.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from replify.base.checks import as_float_array, check_int
from replify.errors import InvalidArgumentError


class ActionSet:
    """Base class: ``dim``, ``diameter`` (ℓ1), ``experts`` (actions are indices) and the oracle."""

    dim: int
    experts: bool = False

    @property
    def diameter(self) -> float:
        raise NotImplementedError

    def argmin(self, g: np.ndarray) -> np.ndarray:
        """For each row of ``g`` (shape ``(k, dim)``), an action minimising ``a·g``."""
        raise NotImplementedError

    def vectors(self, actions: np.ndarray) -> np.ndarray:
        """Actions as vectors ``(k, dim)`` (indices are mapped to their vertices)."""
        return np.asarray(actions, dtype=np.float64)

    def min_cost(self, total: np.ndarray) -> float:
        """``min_{a ∈ A} a·total``: the best fixed action's cost in hindsight."""
        best = self.vectors(self.argmin(total[None, :]))[0]
        return float(best @ total)


@attrs.frozen
class Simplex(ActionSet):
    """The probability simplex in R^n, through its vertices e_1..e_n: the experts problem.
    D = 2. Actions are expert indices."""

    dim: int = attrs.field(converter=lambda v: check_int("Simplex dimension", v, minimum=2))
    experts = True

    @property
    def diameter(self) -> float:
        return 2.0

    def argmin(self, g: np.ndarray) -> np.ndarray:
        return np.argmin(g, axis=1)

    def vectors(self, actions: np.ndarray) -> np.ndarray:
        return np.eye(self.dim)[np.asarray(actions)]

    def min_cost(self, total: np.ndarray) -> float:
        return float(total.min())


@attrs.frozen
class Box(ActionSet):
    """The box [0,1]^n. D = n. The oracle sets a_i = 1 exactly where g_i < 0."""

    dim: int = attrs.field(converter=lambda v: check_int("Box dimension", v, minimum=1))

    @property
    def diameter(self) -> float:
        return float(self.dim)

    def argmin(self, g: np.ndarray) -> np.ndarray:
        return (g < 0.0).astype(np.float64)


@attrs.frozen
class L1Ball(ActionSet):
    """The unit ℓ1 ball {a : ‖a‖₁ ≤ 1}. D = 2. The oracle plays the vertex −sign(g_j)·e_j at
    the coordinate j of largest |g_j| (−e_j when g_j = 0)."""

    dim: int = attrs.field(converter=lambda v: check_int("L1Ball dimension", v, minimum=1))

    @property
    def diameter(self) -> float:
        return 2.0

    def argmin(self, g: np.ndarray) -> np.ndarray:
        j = np.argmax(np.abs(g), axis=1)
        out = np.zeros_like(g, dtype=np.float64)
        out[np.arange(g.shape[0]), j] = np.where(g[np.arange(g.shape[0]), j] >= 0.0, -1.0, 1.0)
        return out


def _points(value: Any) -> np.ndarray:
    pts = as_float_array("Finite points", value)
    if pts.ndim != 2 or pts.shape[0] < 2 or not np.isfinite(pts).all():
        raise InvalidArgumentError(
            f"Finite points must be a finite array of shape (k, dim) with k >= 2, got shape {pts.shape}"
        )
    pts = pts.copy()
    pts.flags.writeable = False
    return pts


#: Up to this dimension Finite computes its ℓ1 diameter exactly; above it, an upper bound.
EXACT_DIAMETER_DIM = 12


def l1_diameter(points: np.ndarray) -> float:
    """The largest ℓ1 distance between two rows, without comparing all pairs: ‖x − y‖₁ =
    max over sign vectors s of s·(x − y), so D = max_s (max_i s·p_i − min_i s·p_i), over the
    2^(dim−1) sign vectors up to a global flip — O(k·dim·2^dim) with BLAS, chunked. Above
    :data:`EXACT_DIAMETER_DIM` that is too many sign vectors, and the sum of the coordinates'
    ranges — an upper bound on D, O(k·dim) — is returned instead: D only scales regret bounds,
    which stay bounds."""
    k, dim = points.shape
    if dim > EXACT_DIAMETER_DIM:
        return float((points.max(axis=0) - points.min(axis=0)).sum())
    best = 0.0
    codes = np.arange(2 ** (dim - 1))
    for start in range(0, codes.size, 256):
        c = codes[start : start + 256]
        signs = np.where((c[:, None] >> np.arange(dim)[None, :]) & 1, -1.0, 1.0)  # first coordinate fixed to +1
        proj = signs @ points.T  # (signs, k)
        best = max(best, float((proj.max(axis=1) - proj.min(axis=1)).max()))
    return best


@attrs.frozen(eq=False)
class Finite(ActionSet):
    """A finite set of action vectors (the rows of ``points``). D = the largest ℓ1 distance
    between two of them (exact up to dimension :data:`EXACT_DIAMETER_DIM`, in O(k·dim·2^dim);
    above, the sum of the coordinates' ranges, an upper bound, in O(k·dim): see
    :func:`l1_diameter`); ties in the oracle go to the first row."""

    points: np.ndarray = attrs.field(converter=_points)
    _diameter: float = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        d = l1_diameter(self.points)
        if d == 0.0:
            raise InvalidArgumentError("Finite points must not all be equal: the l1 diameter D is 0")
        object.__setattr__(self, "_diameter", d)

    @property
    def dim(self) -> int:  # type: ignore[override]
        return int(self.points.shape[1])

    @property
    def diameter(self) -> float:
        return self._diameter

    def argmin(self, g: np.ndarray) -> np.ndarray:
        return self.points[np.argmin(g @ self.points.T, axis=1)]


def resolve_actions(n: int, actions: ActionSet | None) -> ActionSet:
    """The action set of an OLO learner: ``actions``, or the experts' simplex on n vertices.
    Its dimension must be n and its ℓ1 diameter D positive (the regret bounds scale with D)."""
    if actions is None:
        return Simplex(n)
    if not isinstance(actions, ActionSet):
        raise InvalidArgumentError(f"actions must be a replify.components.actions.ActionSet, got {type(actions).__name__}")
    if actions.dim != n:
        raise InvalidArgumentError(f"actions has dimension {actions.dim}, but n={n}")
    if not actions.diameter > 0.0:
        raise InvalidArgumentError(f"actions must have a positive l1 diameter D, got D={actions.diameter}")
    return actions
