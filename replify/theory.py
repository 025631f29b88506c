"""Parameters and bounds of the paper's general framework (§5), as functions of (T, n, ρ).

Natural logarithms throughout (DESIGN.md §5). Every block size is rounded to an integer and
clipped to [1, T]; when it reaches the horizon the learner plays one block, and a
:class:`~replify.errors.BlockSizeWarning` says so with the numbers.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

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


@public
def certified_eps(*, horizon: int, n: int, rho: float, block_size: int) -> float:
    """The largest ε for which the union bound in the proof of
    ``thm:general-framework-guarantees(-ell-infty)`` certifies ρ at block size B:
    ``2(γ + εm)·(ceil(T/B) − 1) = ρ``, with m and γ from ``lemma:concentration_in_ell_1_norm``.

    The theorem's own B exceeds T until T is in the millions; this is how to pick a smaller B
    and still have the proof's guarantee (at a larger regret bound).
    """
    horizon, n = check_int("horizon", horizon, minimum=1), check_int("n", n, minimum=2)
    rho, block_size = check_rho(rho), check_int("block_size", block_size, minimum=1)
    transitions = -(-horizon // block_size) - 1
    if transitions < 1:
        raise InvalidArgumentError(
            f"block_size={block_size} >= horizon={horizon} leaves no transition: one block is replicable for any eps"
        )
    m = concentration_radius(horizon, n, rho)
    # γ = ρ/(4T) by the choice of m, below ρ/(2·transitions) since transitions < T: always room.
    return (rho / (2.0 * transitions) - concentration_tail(m, horizon, n)) / m


@attrs.frozen(kw_only=True)
class FrameworkParams:
    """The parameters in force for a wrapped learner, where they come from, and what the
    theorem then guarantees.

    ``replicability_bound`` is the proof's union bound ``2(γ + εm)`` per transition, summed
    over the transitions that actually occur (``ceil(T/B) − 1``; the paper writes ``T/B``);
    when it is at most ρ the proof certifies ρ-replicability for these parameters.
    ``regret_bound`` is ``normaliser · Regret_{T/B}(internal)`` (``lem:regret-general-framework``
    and its ℓ∞ twin) when the internal learner's spec declares a regret bound, else ``None``.
    """

    algorithm: str
    theorem: str
    norm: Norm
    horizon: int
    n: int
    rho: float
    block_size: int
    eps: float
    block_size_theorem: float
    overrides: tuple[str, ...]
    m: float
    gamma: float
    normaliser: float
    n_blocks: int
    replicability_bound: float
    regret_bound: float | None
    regret_bound_formula: str
    rounding: bool

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False) | {"overrides": list(self.overrides)}


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
    overrides = tuple(name for name, v in (("block_size", block_size), ("eps", eps)) if v is not None)
    if block_size is None:
        block = clip_block_size(b_theorem, horizon, source="the theorem's", context=f"n={n}, rho={rho}")
    else:
        requested = check_int("block_size", block_size, minimum=1)
        block = clip_block_size(requested, horizon, source="the requested", context=f"n={n}, rho={rho}")
    eps_used = eps_for_block_size(block, n, norm) if eps is None else check_positive("eps", eps)
    m = concentration_radius(horizon, n, rho)
    gamma = concentration_tail(m, horizon, n)
    normaliser = block + (2.0 if norm == "linf" else 2.0 * n) / eps_used
    n_blocks = -(-horizon // block)
    internal = None if internal_regret is None else float(internal_regret(n_blocks))
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
        gamma=gamma,
        normaliser=normaliser,
        n_blocks=n_blocks,
        replicability_bound=2.0 * (gamma + eps_used * m) * (n_blocks - 1),
        regret_bound=None if internal is None else normaliser * internal,
        regret_bound_formula=f"(B + {width}) * Regret_{{T/B}}(internal)",
        rounding=rounding,
    )
