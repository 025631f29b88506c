"""Parameters and bounds of the paper's general framework (§5), as functions of (T, n, ρ).

Natural logarithms throughout (DESIGN.md §5). Every block size is rounded to an integer and
clipped to [1, T]; when it reaches the horizon the learner plays one block, and a
:class:`~replify.errors.BlockSizeWarning` says so with the numbers.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Literal

import attrs

from .blocks import BlockParams, UnionBound, n_blocks
from .checks import check_int, check_positive, check_rho, public
from .errors import BlockSizeWarning, InvalidArgumentError, warn

Norm = Literal["linf", "l1"]

ALGORITHMS = {"l1": "general-framework", "linf": "general-framework-ell-infty"}
THEOREMS = {"l1": "thm:general-framework-guarantees", "linf": "thm:general-framework-guarantees-ell-infty"}


def concentration_radius(horizon: int, n: int, rho: float) -> float:
    """m of the corollaries to ``thm:general-framework-guarantees(-ell-infty)``:
    ``m = (sqrt(2 ln(4T/ρ)/n) + 2) · sqrt(nT)``, the ℓ1 radius that, by
    ``lemma:concentration_in_ell_1_norm``, two independent cumulative cost trajectories
    exceed at a given step with probability at most ρ/(4T)."""
    return (math.sqrt(2.0 * math.log(4.0 * horizon / rho) / n) + 2.0) * math.sqrt(n * horizon)


def concentration_tail(m: float, horizon: int, n: int) -> float:
    """γ: the bound ``exp(-(c-2)^2 n/2)`` of ``lemma:concentration_in_ell_1_norm`` on
    P(‖c_{1:t} − d_{1:t}‖₁ > m) for any t ≤ T, where m = c·sqrt(nT). It is 1 when c ≤ 2,
    where the lemma says nothing."""
    c = m / math.sqrt(n * horizon)
    return 1.0 if c <= 2.0 else math.exp(-((c - 2.0) ** 2) * n / 2.0)


def theorem_block_size(horizon: int, n: int, rho: float, norm: Norm) -> float:
    """The theorem's (unrounded) block size: ``sqrt(8mT/ρ)`` for ℓ∞, ``sqrt(8nmT/ρ)`` for ℓ1."""
    m = concentration_radius(horizon, n, rho)
    scale = 1.0 if norm == "linf" else float(n)
    return math.sqrt(8.0 * scale * m * horizon / rho)


def eps_for_block_size(block_size: float, n: int, norm: Norm) -> float:
    """The theorem's relation between ε and B, which balances B against the grid term:
    ε = 2/B (ℓ∞, B = 2/ε) and ε = 2n/B (ℓ1, B = 2n/ε)."""
    return (2.0 if norm == "linf" else 2.0 * n) / block_size


def clip_block_size(requested: float, horizon: int, *, source: str, context: str) -> int:
    """Round to an integer and clip to [1, T], warning (with the numbers) when the block size
    reaches the horizon, because then the learner plays a single block (DESIGN.md §5)."""
    block = min(max(int(round(requested)), 1), horizon)
    if requested >= horizon:
        warn(
            f"{source} block size B={requested:.6g} reaches the horizon T={horizon} ({context}); "
            f"using B={block}: the learner plays a single block, its first action throughout. "
            f"Pass block_size= for a smaller block, at the price of the theorem's guarantee.",
            BlockSizeWarning,
        )
    return block


def framework_union_bound(horizon: int, n: int, rho: float) -> UnionBound:
    """The proof of ``thm:general-framework-guarantees(-ell-infty)``: at a transition the grid
    points g and g' each differ between the two runs with probability at most γ + εm."""
    m = concentration_radius(horizon, n, rho)
    return UnionBound(tail=2.0 * concentration_tail(m, horizon, n), slope=2.0 * m)


@attrs.frozen(kw_only=True)
class FrameworkParams(BlockParams):
    """:class:`~replify.blocks.BlockParams` of a wrapped learner, plus the general framework's
    own: ``norm``, the concentration radius ``m`` and tail ``γ``, the ``normaliser``
    (B + 2/ε or B + 2n/ε) and whether ``rounding`` is on. ``regret_bound`` is
    ``normaliser · Regret_{T/B}(internal)`` (``lem:regret-general-framework`` and its ℓ∞
    twin) when the internal learner's spec declares a regret bound, else ``None``."""

    norm: Norm
    m: float
    gamma: float
    normaliser: float
    rounding: bool


def framework_params(
    *,
    horizon: int,
    n: int,
    rho: float,
    norm: Norm,
    block_size: int | None = None,
    eps: float | None = None,
    internal_regret: Any = None,
    rounding: bool = True,
) -> FrameworkParams:
    """Parameters of Alg. ``general-framework`` (ℓ1) or ``general-framework-ell-infty`` (ℓ∞).

    Defaults are the theorem's B and ε (``thm:general-framework-guarantees`` and
    ``thm:general-framework-guarantees-ell-infty``, with m from
    ``lemma:concentration_in_ell_1_norm``). ``block_size`` and ``eps`` override them;
    overriding only ``block_size`` keeps the theorem's relation ε = 2/B (ℓ∞) or 2n/B (ℓ1).
    ``internal_regret(k)`` is the internal learner's regret bound over k steps on the scale
    of the vectors fed to it, if known.
    """
    b_theorem = theorem_block_size(horizon, n, rho, norm)
    block, eps_used, overrides = resolve_block_and_eps(
        b_theorem, horizon=horizon, block_size=block_size, eps=eps,
        eps_of_block=lambda b: eps_for_block_size(b, n, norm), context=f"n={n}, rho={rho}",
    )
    m = concentration_radius(horizon, n, rho)
    normaliser = block + (2.0 if norm == "linf" else 2.0 * n) / eps_used
    blocks = n_blocks(horizon, block)
    internal = None if internal_regret is None else float(internal_regret(blocks))
    width = "2/eps" if norm == "linf" else "2n/eps"
    return FrameworkParams(
        algorithm=ALGORITHMS[norm],
        theorem=THEOREMS[norm],
        norm=norm,
        horizon=horizon,
        n=n,
        rho=rho,
        block_size=block,
        eps=eps_used,
        block_size_theorem=b_theorem,
        overrides=overrides,
        m=m,
        gamma=concentration_tail(m, horizon, n),
        normaliser=normaliser,
        n_blocks=blocks,
        replicability_bound=framework_union_bound(horizon, n, rho).value(eps_used, blocks - 1),
        regret_bound=None if internal is None else normaliser * internal,
        regret_bound_formula=f"(B + {width}) * Regret_{{T/B}}(internal)",
        rounding=rounding,
    )


def resolve_block_and_eps(
    theorem_block: float,
    *,
    horizon: int,
    block_size: int | None,
    eps: float | None,
    eps_of_block: Callable[[int], float],
    context: str,
) -> tuple[int, float, tuple[str, ...]]:
    """The block size and ε in force: the theorem's B (rounded, clipped to [1, T], with a
    warning when it reaches T) unless ``block_size`` overrides it, and ``eps_of_block(B)`` —
    the theorem's relation, applied to the B in force — unless ``eps`` overrides it."""
    overrides = tuple(name for name, v in (("block_size", block_size), ("eps", eps)) if v is not None)
    if block_size is None:
        block = clip_block_size(theorem_block, horizon, source="the theorem's", context=context)
    else:
        requested = check_int("block_size", block_size, minimum=1)
        block = clip_block_size(requested, horizon, source="the requested", context=context)
    eps_used = eps_of_block(block) if eps is None else check_positive("eps", eps)
    return block, eps_used, overrides


@public
def certified_eps(
    learner: str | None = None, *, horizon: int, n: int, rho: float, block_size: int
) -> float:
    """The largest ε for which the union bound in the replicability proof certifies ρ at block
    size B: for the general framework (``learner=None``, ``thm:general-framework-guarantees``)
    or a registered learner whose spec declares its proof's union bound (``"fllb"``,
    ``"ftplb-star"``). The bound is ``(tail + ε·slope)·(ceil(T/B) − 1)``.

    The theorems' own B exceeds T until T is in the millions; this is how to pick a smaller B
    and keep the proof's guarantee, at a larger regret bound.
    """
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    rho, block_size = check_rho(rho), check_int("block_size", block_size, minimum=1)
    transitions = n_blocks(horizon, block_size) - 1
    if transitions < 1:
        raise InvalidArgumentError(
            f"block_size={block_size} >= horizon={horizon} leaves no transition: one block is replicable for any eps"
        )
    if learner is None:
        union = framework_union_bound(horizon, n, rho)
    else:
        from .plugins import registry  # the registry sits above theory in the import order

        spec = registry().learner(learner)
        if spec.union_bound is None:
            raise InvalidArgumentError(
                f"learner {learner!r} declares no replicability union bound (guarantee: {spec.guarantee}); "
                "certified_eps applies to adversarially replicable learners"
            )
        union = spec.union_bound(horizon=horizon, n=n, rho=rho)
    # Every proof here has a tail of at most ρ/(2T) < ρ/(2·transitions): there is always room.
    return union.certified_eps(rho, transitions)
