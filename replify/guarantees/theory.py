"""Parameters and bounds of the paper's general framework (§5), as functions of (T, n, ρ).

Natural logarithms throughout (docs/algorithms.md). Every block size is rounded to an integer and
clipped to [1, T]; when it reaches the horizon the learner plays one block, and a
:class:`~replify.errors.BlockSizeWarning` says so with the numbers.
"""

from __future__ import annotations

import math
from typing import Callable, Literal

import attrs

from replify.base.checks import check_int, check_positive, check_rho, public
from replify.errors import BlockSizeWarning, InvalidArgumentError, ReplicabilityWarning, warn
from replify.guarantees.certificates import UnionBound, certify, drift_l1, radius_l1, sqrt_sum
from replify.components.exploring import exploration_schedule
from replify.components.blocks import BlockParams, n_blocks
from replify.plugins.registry import registry

Norm = Literal["linf", "l1"]

ALGORITHMS = {"l1": "general-framework", "linf": "general-framework-ell-infty"}
THEOREMS = {"l1": "thm:general-framework-guarantees", "linf": "thm:general-framework-guarantees-ell-infty"}


def concentration_radius(horizon: int, n: int, rho: float, norm: Norm = "l1") -> float:
    """m of ``thm:general-framework-guarantees(-ell-infty)``, corrected (docs/certificates.md):
    the radius that ‖c_{1:t} − c'_{1:t}‖₁ exceeds at a given t ≤ T with probability at most
    γ = ρ/(4T), for the costs each variant accepts — ℓ1-bounded (``norm="l1"``):
    m = √(2nT) + 2√(T ln(4T/ρ)); in [−1, 1]^n (``norm="linf"``): m = n√T(√2 + 2√(ln(4T/ρ))).
    See :func:`replify.guarantees.certificates.radius_l1`; it sets the theorems' default block sizes."""
    return radius_l1(n, norm, horizon=horizon, tail=rho / (4.0 * horizon))


def theorem_block_size(horizon: int, n: int, rho: float, norm: Norm) -> float:
    """The theorem's (unrounded) block size, with the corrected radius m: ``sqrt(8mT/ρ)`` for
    ℓ∞, ``sqrt(8nmT/ρ)`` for ℓ1. With ε = 2/B (2n/B) the proof's union bound is then at most
    ρ/2 + ρ/(2B) ≤ ρ, and the tighter one replify prints is smaller still."""
    m = concentration_radius(horizon, n, rho, norm)
    scale = 1.0 if norm == "linf" else float(n)
    return math.sqrt(8.0 * scale * m * horizon / rho)


def eps_for_block_size(block_size: float, n: int, norm: Norm) -> float:
    """The theorem's relation between ε and B, which balances B against the grid term:
    ε = 2/B (ℓ∞, B = 2/ε) and ε = 2n/B (ℓ1, B = 2n/ε)."""
    return (2.0 if norm == "linf" else 2.0 * n) / block_size


def clip_block_size(requested: float, horizon: int, *, source: str, context: str) -> int:
    """Round to an integer and clip to [1, T], warning (with the numbers) when the block size
    reaches the horizon, because then the learner plays a single block (docs/algorithms.md)."""
    block = min(max(int(round(requested)), 1), horizon)
    if requested >= horizon:
        warn(
            f"{source} block size B={requested:.6g} reaches the horizon T={horizon} ({context}); "
            f"using B={block}: the learner plays a single block, its first action throughout. "
            f"Pass block_size= for a smaller block, at the price of the theorem's guarantee.",
            BlockSizeWarning,
        )
    return block


def framework_union_bound(horizon: int, n: int, rho: float, norm: Norm = "l1") -> UnionBound:
    """The replicability bound of ``thm:general-framework-guarantees(-ell-infty)``, tightened
    (:mod:`replify.guarantees.certificates`): at transition k the grid points g (of c_{1:kB}) and g' (of
    c_{1:(k-1)B}) each differ between the runs with probability at most ε·E‖Δ‖₁ ≤ ε·M·√t, with
    M = √(2n) (ℓ1-bounded costs) or n√2 (costs in [−1, 1]^n); g' at k = 1 is the origin in both
    runs and is not charged."""
    drift = drift_l1(n, norm)
    return UnionBound(
        now=drift, prev=drift, norm="l1", mean=drift,
        radius=concentration_radius(horizon, n, rho, norm) / math.sqrt(horizon), tail=rho / (4.0 * horizon),
        source="grid rounding: P(g != g') <= eps * E||c_{1:t} - c'_{1:t}||_1 <= eps * M * sqrt(t)",
    )


@attrs.frozen(kw_only=True)
class FrameworkParams(BlockParams):
    """:class:`~replify.components.blocks.BlockParams` of a wrapped learner, plus the general framework's
    own: ``norm``, the corrected concentration radius ``m`` and its tail ``γ`` = ρ/(4T) (they set
    the theorem's B), the ``normaliser`` (B + 2/ε or B + 2n/ε) and whether ``rounding`` is on.
    ``replicability_bound`` is the tightened union bound of :func:`framework_union_bound` (``None``,
    with ``certified`` False, when ``rounding`` is off: the proof needs the grids).
    ``regret_bound`` is ``normaliser · Regret_{T/B}(internal)`` (``lem:regret-general-framework``
    and its ℓ∞ twin, on the scale of the vectors fed) when the internal learner declares a
    regret bound, else ``None``."""

    norm: Norm
    m: float
    gamma: float
    normaliser: float
    rounding: bool
    #: why ``regret_bound`` is None: the internal learner's bound does not cover its parameters
    regret_bound_note: str | None = None


def framework_params(
    *,
    horizon: int,
    n: int,
    rho: float,
    norm: Norm,
    block_size: int | None = None,
    eps: float | None = None,
    rounding: bool = True,
) -> FrameworkParams:
    """Parameters of Alg. ``general-framework`` (ℓ1) or ``general-framework-ell-infty`` (ℓ∞).

    Defaults are the theorem's B and ε (``thm:general-framework-guarantees`` and
    ``thm:general-framework-guarantees-ell-infty``, with the corrected radius m of
    :func:`concentration_radius`). ``block_size`` and ``eps`` override them; overriding only
    ``block_size`` keeps the theorem's relation ε = 2/B (ℓ∞) or 2n/B (ℓ1). The regret bound is
    filled in by the wrapper, which knows its internal learner.
    """
    b_theorem = theorem_block_size(horizon, n, rho, norm)
    block, eps_used, overrides = resolve_block_and_eps(
        b_theorem, horizon=horizon, block_size=block_size, eps=eps,
        eps_of_block=lambda b: eps_for_block_size(b, n, norm), context=f"n={n}, rho={rho}",
    )
    width = "2/eps" if norm == "linf" else "2n/eps"
    if rounding:
        union = framework_union_bound(horizon, n, rho, norm)
        bound = union.value(eps_used, horizon=horizon, block_size=block)
        certified = certify(bound, rho, algorithm=ALGORITHMS[norm], detail=f"B={block}, eps={eps_used:.4g}")
    else:
        # Without the random grids the proof's argument is gone (exact block sums differ between
        # the two runs almost surely): no bound, and the parameters certify nothing.
        union, bound, certified = None, None, False
        warn(
            f"{ALGORITHMS[norm]} with rounding=False feeds the exact block sums: the replicability theorem does not "
            f"apply, no bound is stated and params.certified is False (reports say claim 'measured')",
            ReplicabilityWarning,
        )
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
        m=concentration_radius(horizon, n, rho, norm),
        gamma=rho / (4.0 * horizon),
        normaliser=block + (2.0 if norm == "linf" else 2.0 * n) / eps_used,
        n_blocks=n_blocks(horizon, block),
        replicability_bound=bound,
        union_bound=union,
        certified=certified,
        regret_bound=None,
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
    learner: str | None = None,
    *,
    horizon: int,
    n: int,
    rho: float,
    block_size: int,
    norm: Norm | None = None,
) -> float:
    """The largest ε for which the replicability proof's union bound certifies ρ at block size
    B (docs/claims.md: *certified*).

    ``learner=None`` (or a registered learner without a guarantee of its own, which
    :func:`replify.wrap` would make replicable): the general framework of ``norm``
    (``thm:general-framework-guarantees(-ell-infty)``; default ``"linf"``, or the registered
    learner's norm, as :func:`replify.wrap` chooses). A registered learner whose spec declares
    its proof's union bound (``"fllb"``, ``"ftplb-star"``): that bound. Every bound here is
    ε·Σ_k(…), the corrected and tightened proofs of :mod:`replify.guarantees.certificates`, so the answer is
    ρ divided by the sum.

    The ℓ∞ framework's own B exceeds T up to T ≈ 7·10⁷ at n = 10, ρ = 0.1 (later for larger n or
    smaller ρ); this is how to pick a smaller B and keep the proof's guarantee, at a larger regret bound.
    """
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    rho, block_size = check_rho(rho), check_int("block_size", block_size, minimum=1)
    if n_blocks(horizon, block_size) < 2:
        raise InvalidArgumentError(
            f"block_size={block_size} >= horizon={horizon} leaves no transition: one block is replicable for any eps"
        )
    spec = None
    if learner is not None:
        spec = registry().learner(learner)
    if spec is not None and spec.union_bound is not None:
        if norm is not None:
            raise InvalidArgumentError(
                f"norm applies to the general framework (learner=None or a learner to wrap); learner {learner!r} "
                f"has a replicability proof of its own; got norm={norm!r}"
            )
        union = spec.union_bound(horizon=horizon, n=n, rho=rho)
    elif spec is not None and spec.guarantee is not None:
        raise InvalidArgumentError(
            f"learner {learner!r} declares no replicability union bound (guarantee: {spec.guarantee}); "
            "certified_eps applies to adversarially replicable learners with a union bound, and to the wrapper"
        )
    else:
        chosen = norm or (spec.norm if spec is not None else "linf")
        if spec is not None and spec.norm == "l1" and chosen == "linf":
            raise InvalidArgumentError(
                f"norm must be 'l1' for learner {learner!r}, which expects l1-bounded costs; got 'linf'"
            )
        union = framework_union_bound(horizon, n, rho, chosen)
    return union.certified_eps(rho, horizon=horizon, block_size=block_size)


@attrs.frozen(kw_only=True)
class BanditConversionParams:
    """The general conversion under bandit feedback (``replify.wrap(..., feedback="bandit")``):
    K blocks of B steps, m explorations per arm in each of the first K − 1, the grid's ε, the
    certificate and — with the internal learner's regret bound, when it states one — the regret
    bound (:func:`bandit_conversion_params`; docs/certificates.md, "The general conversion under
    bandit feedback")."""

    algorithm: str
    horizon: int
    n: int
    rho: float
    blocks: int
    block_size: int
    explore: int
    decisions: int
    eps: float
    normaliser: float
    replicability_bound: float
    certified: bool
    overrides: tuple[str, ...]
    regret_bound: float | None = None
    regret_bound_note: str | None = None
    regret_bound_formula: str = "n m (K-1) + B + B (1 + 2/eps) Regret_{K-1}(internal) (x2 with the map (x+1)/2)"
    calibration: str | None = None

    def to_dict(self) -> dict:
        return attrs.asdict(self, recurse=False) | {"overrides": list(self.overrides)}


def bandit_drift(decisions: int, explore: int, n: int) -> float:
    """Σ_{k ≤ D} n(√(k/(2m)) + √((k − 1)/(2m))): the grid charges of the D = K − 1 decisions per unit
    of ε. At decision k the two runs' cumulative block-mean estimates Ĉ_k differ, arm by arm, by
    (1/m)·Σ (c_s − c'_s) over the k·m explored steps — shared steps, independent draws, each term of
    variance at most ½ — so E‖Ĉ_k − Ĉ'_k‖₁ ≤ n√(k/(2m)); the grid points of Ĉ_k and Ĉ_{k−1} (fresh
    offsets) each differ with probability at most ε times that (the cube overlap of paper §5)."""
    return n / math.sqrt(2.0 * explore) * (sqrt_sum(decisions) + sqrt_sum(decisions - 1))


def bandit_conversion_params(*, horizon: int, n: int, rho: float, blocks: int | None = None,
                             explore: int | None = None, eps: float | None = None) -> BanditConversionParams:
    """K, m and ε of the conversion (given, or the least regret bound with Hedge's √(D ln n/2)
    inside over a grid of powers of two; ε the largest :func:`bandit_drift` certifies at ρ), and its
    certificate ε·:func:`bandit_drift`."""
    horizon, n, rho = check_int("horizon", horizon, minimum=2), check_int("n", n, minimum=2), float(check_rho(rho))
    overrides = tuple(k for k, v in (("blocks", blocks), ("explore", explore), ("eps", eps)) if v is not None)

    def shape(k: int, m: int) -> tuple[int, int, float]:
        size = -(-horizon // k)
        decisions = -(-horizon // size) - 1
        e = rho / bandit_drift(decisions, m, n) if decisions else math.inf
        return size, decisions, e

    def proxy(k: int, m: int) -> float:  # the regret bound with Hedge's sqrt(D ln n / 2) inside
        size, decisions, e = shape(k, m)
        return n * m * decisions + size + size * (1.0 + 2.0 / e) * 2.0 * math.sqrt(decisions * math.log(n) / 2.0)

    blocks, explore = exploration_schedule(horizon=horizon, n=n, blocks=blocks, explore=explore, objective=proxy)
    size, decisions, certified_eps_ = shape(blocks, explore)
    used = certified_eps_ if eps is None else check_positive("eps", eps)
    if not math.isfinite(used):
        used = 1.0  # one block: no decision, nothing to round
    bound = min(1.0, used * bandit_drift(decisions, explore, n))
    return BanditConversionParams(
        algorithm="general-framework, bandit feedback", horizon=horizon, n=n, rho=rho, blocks=-(-horizon // size),
        block_size=size, explore=explore, decisions=decisions, eps=used, normaliser=1.0 + 2.0 / used,
        replicability_bound=bound, overrides=overrides,
        certified=certify(bound, rho, algorithm="bandit conversion", detail=f"K={blocks}, m={explore}, eps={used:.4g}"),
    )
