"""The ``"random-signs"`` adversary: costs whose two independent draws drift apart as fast as the
cost domain allows — the adversary that replify's certificate audits run against
(:mod:`replify.experiments.audit`; derivation in ``docs/certificates.md``).

The replicability proofs of the general framework (paper §5) and FLLB (§3) charge
ε·E‖c_{1:t} − c'_{1:t}‖₁ per rounding. That drift is largest when every coordinate has the
largest variance the domain allows and mean zero:

* ``norm="linf"`` — c_t uniform on {−1, +1}^n (costs in [−1, 1]^n): E‖Δ_t‖₁ = n·E|2 Bin(2t, ½) − 2t|
  ≈ n√(4t/π), 0.80 of the bound n√(2t) the certificate uses;
* ``norm="l1"`` — c_t uniform on {±e_1, …, ±e_n} (‖c‖₁ = 1): E‖Δ_t‖₁ ≈ √(2/π)·√(2nt), 0.80 of
  the bound √(2nt).

Block sums are drawn exactly (binomial and multinomial counts), so audits run on the engine's
block-sum path.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.errors import InvalidArgumentError


class RandomSigns(ChunkedSequence):
    """D_t uniform on {−1, +1}^n (``norm="linf"``) or on {±e_i} (``norm="l1"``), for every t."""

    integer_costs = True

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, norm: Literal["linf", "l1"] = "linf") -> None:
        if not (isinstance(norm, str) and norm in ("linf", "l1")):  # an array would make `in` ambiguous
            raise InvalidArgumentError(f"norm must be 'linf' or 'l1', got {norm!r}")
        self.n, self.horizon = check_sizes(n, horizon)
        self.norm = norm

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        rows = stop - start
        if out is None:
            out = np.empty((rows, self.n))
        if self.norm == "linf":
            np.multiply(rng.integers(0, 2, size=(rows, self.n)), 2, out=out, casting="unsafe")
            out -= 1.0
        else:
            out[...] = 0.0
            pick = rng.integers(0, 2 * self.n, size=rows)  # a coordinate and a sign, uniformly
            out[np.arange(rows), pick % self.n] = np.where(pick < self.n, 1.0, -1.0)
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Exact segment sums: 2·Bin(L, ½) − L per coordinate (ℓ∞), or the difference of the
        +e_i and −e_i counts of a uniform multinomial over the 2n outcomes (ℓ1)."""
        lengths = np.asarray(stops) - np.asarray(starts)
        if self.norm == "linf":
            return (2 * rng.binomial(lengths[:, None], 0.5, size=(lengths.size, self.n)) - lengths[:, None]).astype(np.float64)
        counts = rng.multinomial(lengths, np.full(2 * self.n, 1.0 / (2 * self.n)))
        return (counts[:, : self.n] - counts[:, self.n :]).astype(np.float64)


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "random-signs",
            RandomSigns,
            description="costs uniform on {-1,+1}^n or {+-e_i}: the largest drift between two draws the domain allows; "
            "draws block sums exactly",
            param_docs={"norm": "'linf': uniform on {-1,+1}^n (default); 'l1': uniform on {+e_i, -e_i}"},
        )
    )
