"""The coin embedding of the lower bounds (paper §7, ``thm:lower_bound_n=2_vanilla_replicability_experts``).

``"coin"``: a 0–1 coin of bias ½ + sτ, with s = ±1 chosen once by the adversary's own
stream (or given); the costs are c_t = (ĉ_t, 1 − ĉ_t). With s = +1 expert 2 (index 1) is the
better one. With n > 2 experts the others cost 1 at every step (out of the game, as in
``coin-phases``): the lower bound's instance is n = 2, and a larger n attacks a certificate that
charges every expert's drift while only two experts can lead. τ is given, or comes from a regret
level K as τ = K/(δT), δ = 1/16, as in the theorem's proof. ``random_bias=True`` is the variant
the coin lemma's replicability condition needs: the bias is drawn once, uniformly in (½ − τ, ½ + τ).

``"coin-phases"`` (n = 2^m, ``thm:lower_bound_vanilla_replicability_experts``): m phases of
length T/m. In each, a coin between the two halves of the surviving experts (the first half
costs ĉ_t, the second 1 − ĉ_t); experts already out cost 1; the next phase recurses into the
half the coin favours. All signs are drawn from the adversary's stream before any cost.

Both draw block sums exactly (a Binomial per phase) and have integer costs.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_flag, check_sizes
from replify.base.checks import check_real
from replify.errors import InvalidArgumentError

DELTA = 1.0 / 16.0  # the coin lemma's failure probability, as in the theorem


def coin_tau(*, horizon: int, tau: float | None, K: float | None) -> float:
    """τ given directly, or τ = K/(δT) with δ = 1/16; it must lie in (0, ½)."""
    if (tau is None) == (K is None):
        raise InvalidArgumentError("give exactly one of tau= or K= (then tau = K / (T/16))")
    value = check_real("tau", tau) if tau is not None else check_real("K", K) / (DELTA * horizon)
    if not 0.0 < value < 0.5:
        raise InvalidArgumentError(f"tau must lie in (0, 1/2), got {value}" + ("" if tau is not None else f" from K={K}"))
    return value


def _sign(sign: Any, rng: np.random.Generator) -> int:
    if sign is None:
        return int(rng.choice([-1, 1]))
    # True == 1 in Python, and an array compared with (-1, 1) is ambiguous: only numbers qualify.
    if isinstance(sign, (bool, np.bool_)) or not isinstance(sign, numbers.Real) or sign not in (-1, 1):
        raise InvalidArgumentError(f"sign must be +1 or -1, got {sign!r}")
    return int(sign)


class Coin(ChunkedSequence):
    integer_costs = True
    #: the same law at every step (the bias is fixed before any cost is drawn), costs 0 or 1
    iid = True
    cost_bounds = (0.0, 1.0)

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, tau: float | None = None, K: float | None = None,
        sign: int | None = None, random_bias: bool = False,
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        self.tau = coin_tau(horizon=horizon, tau=tau, K=K)
        self.sign = _sign(sign, rng)  # fixed before any cost is drawn
        random_bias = check_flag("random_bias", random_bias)
        self.bias = (0.5 + rng.uniform(-self.tau, self.tau)) if random_bias else 0.5 + self.sign * self.tau
        self.best = 1 if self.bias > 0.5 else 0  # the expert with the lower expected cost

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        out = np.ones((stop - start, self.n))  # experts 3.. cost 1: out of the game, as in coin-phases
        out[:, 0] = (rng.random(stop - start) < self.bias).astype(np.float64)
        out[:, 1] = 1.0 - out[:, 0]
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        lengths = np.asarray(stops) - np.asarray(starts)
        heads = rng.binomial(lengths, self.bias).astype(np.float64)
        out = np.repeat(lengths.astype(np.float64)[:, None], self.n, axis=1)
        out[:, 0], out[:, 1] = heads, lengths - heads
        return out


class CoinPhases(ChunkedSequence):
    integer_costs = True

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, tau: float | None = None, K: float | None = None,
        signs: Any = None,
    ) -> None:
        n, horizon = check_sizes(n, horizon)
        m = n.bit_length() - 1
        if 2**m != n:
            raise InvalidArgumentError(f"coin-phases needs n = 2^m experts, got n={n}")
        if horizon < m:
            raise InvalidArgumentError(f"horizon must be at least m = log2(n) = {m} (a step per phase), got {horizon}")
        self.n, self.horizon, self.m = n, horizon, m
        self.bounds = np.linspace(0, horizon, m + 1).round().astype(np.int64)  # phase j: steps bounds[j]+1..bounds[j+1]
        self.tau = coin_tau(horizon=int(self.bounds[1]), tau=tau, K=K)
        if signs is not None and np.ndim(signs) != 1:
            raise InvalidArgumentError(f"signs must be a sequence of {m} signs (+1 or -1), one per phase; got {signs!r}")
        self.signs = np.array([_sign(None, rng) for _ in range(m)] if signs is None else [_sign(s, rng) for s in signs])
        if self.signs.size != m:
            raise InvalidArgumentError(f"signs must give one sign per phase ({m}), got {len(self.signs)}")
        # The surviving interval [lo, hi) of experts in each phase, fixed before any cost is drawn.
        lo, hi, self.alive = 0, n, []
        for s in self.signs:
            self.alive.append((lo, hi))
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if s > 0 else (lo, mid)  # s = +1: the second half costs 1 − ĉ, the cheaper
        self.best = lo  # the single survivor: the best expert

    def _phase_rows(self, start: int, stop: int):
        for j in range(self.m):
            a, b = max(start, self.bounds[j]), min(stop, self.bounds[j + 1])
            if a < b:
                yield j, a, b

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        out = np.ones((stop - start, self.n))
        for j, a, b in self._phase_rows(start, stop):
            lo, hi = self.alive[j]
            mid = (lo + hi) // 2
            flips = (rng.random(b - a) < 0.5 + self.signs[j] * self.tau).astype(np.float64)
            out[a - start : b - start, lo:mid] = flips[:, None]
            out[a - start : b - start, mid:hi] = 1.0 - flips[:, None]
        return out

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        out = np.zeros((len(starts), self.n))
        for j in range(self.m):  # a loop over phases
            lo, hi = self.alive[j]
            mid = (lo + hi) // 2
            overlap = np.clip(np.minimum(stops, self.bounds[j + 1]) - np.maximum(starts, self.bounds[j]), 0, None)
            heads = rng.binomial(overlap, 0.5 + self.signs[j] * self.tau).astype(np.float64)
            out[:, :lo] += overlap[:, None]
            out[:, hi:] += overlap[:, None]
            out[:, lo:mid] += heads[:, None]
            out[:, mid:hi] += (overlap - heads)[:, None]
        return out


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "coin", Coin, test_params={"n": 2, "tau": 0.1},
            description="n=2 coin embedding: c_t = (coin, 1-coin), bias 1/2 + s*tau (sec. 7); draws block sums exactly",
            param_docs={"tau": "the coin's bias offset", "K": "or a regret level: tau = K/(T/16)",
                        "sign": "+1 or -1 (default: drawn by the adversary)", "random_bias": "bias uniform in (1/2-tau, 1/2+tau)"},
        )
    )
    register(
        replify.AdversarySpec(
            "coin-phases", CoinPhases, test_params={"n": 4, "tau": 0.1},
            description="n=2^m: m phases, a coin between the halves of the surviving experts (sec. 7); exact block sums",
            param_docs={"tau": "each phase coin's bias offset", "K": "or tau = K/(L/16), L = T/m",
                        "signs": "one sign per phase (default: drawn by the adversary)"},
        )
    )
