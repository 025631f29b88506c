"""Audits of the certificates replify prints (docs/claims.md: a printed guarantee must survive an
adversarial learner or adversary).

A certificate says: with these parameters, the two runs of a pair part with probability at most
``bound``. An audit runs the certified learner, with the worst internal learner and adversary
replify knows for that proof, and asks whether the measured failures refute the claim:

* the internal learner :class:`HistoryHash` plays a hash of *everything* it has been fed, so
  any difference in any fed vector parts the runs (up to a 1/n collision per block) — the
  general framework's theorem claims ρ for *any* internal learner, this is the hardest one;
* the adversary ``random-signs`` makes two draws drift apart as fast as the cost domain allows
  (0.80 of the expected drift the proofs charge); ``iid-bernoulli`` with equal means (ties) for
  the leader-based learners on [0, 1] costs;
* :class:`ThresholdSweep` attacks the geometric-noise certificate (FTPLB*) where its union over
  transitions is tight: the noise is drawn once, so ties at every transition mostly probe the same
  noise values, but a leader gap whose mean moves by a few standard deviations per block makes each
  transition probe fresh ones (case ``"ftplb-star-sweep"``).

The verdict is exact: ``p_value`` = P(Binomial(pairs, bound) ≥ failures), the chance of seeing
at least that many failures if the certificate were exactly tight; the claim is refuted at level
α when ``p_value < α``.
"""

from __future__ import annotations

import zlib
from typing import Any

import attrs
import numpy as np

from replify.base.checks import check_int, check_real, check_rho, check_step_size, public
from replify.engine import limits
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.errors import InvalidArgumentError
from replify.evaluation.evaluate import evaluate
from replify.evaluation.stats import binomial_upper_tail
from replify.guarantees.theory import certified_eps
from replify.wrapper import wrap

CASES: tuple[str, ...] = ("wrap-linf", "wrap-l1", "fllb", "ftplb-star", "ftplb-star-sweep", "iid-experts")


class ThresholdSweep(ChunkedSequence):
    """Experts 0 and 1 as a coin, c_t = (b_t, 1 − b_t) (the largest variance of their cost
    difference: 1 a step), the others at cost 1 (never leaders); b_t ~ Bernoulli(p_k) in block k, with
    p_k chosen so that the expected gap D = c_{1:t}(0) − c_{1:t}(1) at the k-th transition t_k = kB
    sits ``spacing`` standard deviations (√t_k) beyond the previous one. Two runs part at transition k
    only if the shared noise difference X_0 − X_1 falls between their gaps D_k and D'_k (width of
    order √t_k around the mean), so windows ``spacing`` apart are nearly disjoint: the union over
    transitions is nearly an equality, as the certificate assumes. Piecewise iid (its law changes
    at the blocks' ends), with exact segment sums."""

    integer_costs = True
    cost_bounds = (0.0, 1.0)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, block_size: int,
                 spacing: float = 2.5) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        block_size = check_int("block_size", block_size, minimum=1)
        cuts = np.arange(block_size, horizon, block_size, dtype=np.int64)
        self.bounds = np.concatenate([[0], cuts, [horizon]])
        t = self.bounds[1:].astype(np.float64)
        target = np.cumsum(spacing * np.sqrt(t))  # the mean gap at each block's end
        drift = np.diff(np.concatenate([[0.0], target])) / np.diff(self.bounds)
        self.bias = np.clip((1.0 + np.minimum(drift, 1.0)) / 2.0, 0.0, 1.0)  # E(2b − 1) = drift per step
        self.law_changes = tuple(int(c) for c in cuts)

    def _pair(self, heads: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        out = np.ones((len(lengths), self.n)) * np.asarray(lengths, dtype=np.float64)[:, None]
        out[:, 0], out[:, 1] = heads, lengths - heads
        return out

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        piece = np.searchsorted(self.bounds, np.arange(start, stop), side="right") - 1
        heads = (rng.random(stop - start) < self.bias[piece]).astype(np.float64)
        return self._pair(heads, np.ones(stop - start))

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        starts, stops = np.asarray(starts, dtype=np.int64), np.asarray(stops, dtype=np.int64)
        heads = np.zeros(len(starts))
        for j in range(len(self.bias)):  # a loop over blocks
            overlap = np.clip(np.minimum(stops, self.bounds[j + 1]) - np.maximum(starts, self.bounds[j]), 0, None)
            heads += rng.binomial(overlap, self.bias[j])
        return self._pair(heads, stops - starts)

    def expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        starts, stops = np.asarray(starts, dtype=np.int64), np.asarray(stops, dtype=np.int64)
        overlap = np.clip(np.minimum(stops[:, None], self.bounds[None, 1:]) - np.maximum(starts[:, None], self.bounds[None, :-1]),
                          0, None).astype(np.float64)
        heads = overlap @ self.bias
        return self._pair(heads, (stops - starts).astype(np.float64))


class HistoryHash:
    """An internal learner whose action is a hash (CRC-32) of every vector it has been fed, modulo
    n: two runs that were ever fed different vectors play unrelated actions from then on."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        self.n, self.state = n, 0

    def act(self) -> int:
        return self.state % self.n

    def update(self, cost: np.ndarray) -> None:
        self.state = zlib.crc32(np.ascontiguousarray(cost, dtype=np.float64).tobytes(), self.state)


@attrs.frozen(kw_only=True)
class CertificateAudit:
    """One audit: the certificate (``bound`` for the parameters in force) against the measured
    failures over ``pairs`` paired runs on ``adversary``; ``p_value`` = P(Bin(pairs, bound) ≥
    failures)."""

    case: str
    adversary: str
    n: int
    horizon: int
    block_size: int | None
    eps: float | None
    bound: float
    pairs: int
    failures: int
    rho_ci: tuple[float, float]
    p_value: float

    @property
    def rho_hat(self) -> float:
        return self.failures / self.pairs

    def refuted(self, alpha: float = 1e-6) -> bool:
        """Whether the failures refute the certificate at level ``alpha``: P(Bin(pairs, bound) ≥
        failures) < alpha. ``alpha`` must lie in (0, 1): a level of 0 refutes nothing and one of 1
        or more refutes every certificate, whatever was measured."""
        alpha = check_real("alpha", alpha)
        if not 0.0 < alpha < 1.0:
            raise InvalidArgumentError(f"alpha must lie strictly between 0 and 1, got {alpha}")
        return self.p_value < alpha

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self) | {"rho_hat": self.rho_hat, "rho_ci": list(self.rho_ci)}


def _run_case(case: str, *, n: int, horizon: int, rho: float, block_size: int, pairs: int, seed: int) -> Any:

    if case in ("wrap-linf", "wrap-l1"):
        norm = case[5:]
        eps = certified_eps(horizon=horizon, n=n, rho=rho, block_size=block_size, norm=norm)

        def build(s: Any) -> Any:
            return wrap(HistoryHash, n=n, horizon=horizon, rho=rho, seed=s, norm=norm,
                                  block_size=block_size, eps=eps)

        return "random-signs", evaluate(build, "random-signs", n=n, horizon=horizon, pairs=pairs, seed=seed,
                                                   adversary_params={"norm": norm})
    if case == "fllb":
        eps = certified_eps("fllb", horizon=horizon, n=n, rho=rho, block_size=block_size)
        return "random-signs", evaluate("fllb", "random-signs", n=n, horizon=horizon, pairs=pairs, seed=seed,
                                                   rho=rho, block_size=block_size, eps=eps, adversary_params={"norm": "l1"})
    if case == "ftplb-star-sweep":
        eps = certified_eps("ftplb-star", horizon=horizon, n=n, rho=rho, block_size=block_size)
        sweep = ThresholdSweep(n=n, horizon=horizon, rng=np.random.default_rng(0), block_size=block_size)
        return "threshold-sweep", evaluate("ftplb-star", sweep, n=n, horizon=horizon, pairs=pairs, seed=seed,
                                           rho=rho, block_size=block_size, eps=eps)
    if case == "ftplb-star":
        eps = certified_eps("ftplb-star", horizon=horizon, n=n, rho=rho, block_size=block_size)
        return "iid-bernoulli", evaluate("ftplb-star", "iid-bernoulli", n=n, horizon=horizon, pairs=pairs,
                                                    seed=seed, rho=rho, block_size=block_size, eps=eps)
    # the iid guarantee, at the theorem's own parameters, on iid costs with every mean tied
    return "iid-bernoulli", evaluate("iid-experts", "iid-bernoulli", n=n, horizon=horizon, pairs=pairs,
                                                seed=seed, rho=rho)


@public
def audit_certificates(
    cases: list[str] | tuple[str, ...] = CASES,
    *,
    n: int,
    horizon: int,
    rho: float,
    block_size: int,
    pairs: int,
    seed: int = 0,
) -> list[CertificateAudit]:
    """Audit each certificate in ``cases`` (``"wrap-linf"``, ``"wrap-l1"``: the general framework
    of paper §5 around :class:`HistoryHash` on ``random-signs``; ``"fllb"`` on ℓ1
    ``random-signs``; ``"ftplb-star"`` on tied iid Bernoulli costs — each at block size
    ``block_size`` and the ε that :func:`replify.certified_eps` certifies for ρ; ``"iid-experts"``
    at its theorem's parameters on tied iid costs). Returns one :class:`CertificateAudit` each;
    ``refuted(alpha)`` says whether the measured failures refute the printed bound."""
    n = check_step_size("n", n, minimum=2, budget=limits.MEMORY_BUDGET)
    horizon = check_int("horizon", horizon, minimum=2)
    rho, pairs = check_rho(rho), check_int("pairs", pairs, minimum=2)
    block_size = check_int("block_size", block_size, minimum=1)
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise InvalidArgumentError(f"cases must be among {list(CASES)}; got unknown {unknown}")
    out = []
    for case in cases:
        adversary, report = _run_case(case, n=n, horizon=horizon, rho=rho, block_size=block_size, pairs=pairs, seed=seed)
        params = report.params or {}
        bound = params.get("replicability_bound")
        bound = rho if bound is None else float(bound)  # the iid algorithm's theorem states rho itself
        out.append(
            CertificateAudit(
                case=case, adversary=adversary, n=n, horizon=horizon,
                block_size=params.get("block_size"), eps=params.get("eps"), bound=bound, pairs=pairs,
                failures=report.failures, rho_ci=report.rho_ci,
                p_value=binomial_upper_tail(report.failures, pairs, min(bound, 1.0)),
            )
        )
    return out
