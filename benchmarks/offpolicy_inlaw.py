"""The off-policy certificates' worst attacks, their parting probability computed in law:
docs/offpolicy.md, "Attacked".

    python benchmarks/offpolicy_inlaw.py [--pairs 20000] [--seed 0]

Every attack logs uniformly over n arms and its candidates are "always arm k", so a log's estimates
are a function of the counts of (arm, cost) over its rows: one multinomial, drawn directly — the
law of a compact log of the same system (replify.offpolicy.Log.simulate(..., compact=True)). Given
two logs, the probability over R that their decisions differ is replify.offpolicy.parting_probability:
exact over the grid's offset and R's order, by quadrature over the ladder's offset. The table
averages it over --pairs pairs of logs (Monte Carlo over the logs only: its standard error is
printed); the value's attack is also computed exactly over the logs (the law of the arm-0 count
difference by convolution), with no sampling at all.

Each line: the attack, the bound, the parting probability in law, bound ÷ it, and the same without
the width's ladder (min_rows declared: the width c_K s/ρ exactly, as replify had it before logs of
unequal sizes were certified)."""

from __future__ import annotations

import argparse
import math

import attrs
import numpy as np

from replify.offpolicy import Log, Replicable, parting_probability, replicable_value, select

RHO = 0.1


def template(n: int, k: int, rows: int, cost_range: tuple[float, float], min_rows: int | None) -> Replicable:
    """A decision made by replify on a real (compact) log of the system, whose estimates the
    attack replaces with ones drawn in law: everything else (s, c_K, ρ, the range) is replify's."""
    lo, hi = cost_range
    contexts = np.zeros((2 * n, n, 1))
    log = Log.from_arrays(contexts=contexts, actions=np.tile(np.arange(n), 2), costs=np.repeat([lo, hi], n),
                          propensities=np.full(2 * n, 1.0 / n), min_propensity=1.0 / n, cost_range=cost_range)
    log = attrs.evolve(log, weights=np.r_[np.full(2 * n - 1, rows // (2 * n)), rows - (2 * n - 1) * (rows // (2 * n))])
    pols = [lambda c, a=a: np.full(c.shape[0], a) for a in range(k)]
    if k == 1:
        return replicable_value(log, pols[0], rho=RHO, seed=0, min_rows=min_rows)
    return select(log, pols, rho=RHO, seed=0, min_rows=min_rows)


def draw_estimates(rng: np.random.Generator, means: np.ndarray, k: int, rows: int, cost_range: tuple[float, float],
                   pairs: int) -> np.ndarray:
    """(pairs, 2, k) estimates b + n/N Σ 1{a = j}(c − b) of the first k arms, costs lo or hi
    (hi with probability means[j]), logged uniformly over n = means.size arms, in law."""
    n = means.size
    lo, hi = cost_range
    probs = np.stack([means / n, (1 - means) / n], axis=1).ravel()  # (arm, cost hi), (arm, cost lo), ...
    counts = rng.multinomial(rows, probs, size=(pairs, 2)).reshape(pairs, 2, n, 2)[:, :, :k]
    b, m = lo / 2 + hi / 2, hi / 2 - lo / 2
    return b + n / rows * m * (counts[..., 0] - counts[..., 1])


def in_law(base: Replicable, estimates: np.ndarray) -> tuple[float, float]:
    """The mean over the pairs of logs of the parting probability over R, and its standard error."""
    one = base.chosen is None
    p = np.array([parting_probability(attrs.evolve(base, estimates=float(e[0, 0]) if one else e[0]),
                                      attrs.evolve(base, estimates=float(e[1, 0]) if one else e[1])) for e in estimates])
    return float(p.mean()), float(p.std(ddof=1) / math.sqrt(p.size))


def value_exactly(rows: int, n: int, min_rows: int | None) -> float:
    """The value's attack (sign costs ±1, arm 0, uniform logging over n arms) exactly: the estimate
    is n/N·D with D = (#rows of arm 0 costing 1) − (# costing −1), whose law is the N-fold
    convolution of (1/2n, 1 − 1/n, 1/2n) on {−1, 0, 1}; two logs differ with probability
    E min(1, n|D − D′|/(N w)) at a shared width, integrated over the ladder."""
    step = np.array([1 / (2 * n), 1 - 1 / n, 1 / (2 * n)])
    law, power, r = np.array([1.0]), step, rows
    while r:  # the N-fold convolution by squaring (FFT-free: np.convolve on at most 2N + 1 points)
        if r & 1:
            law = np.convolve(law, power)
        power, r = np.convolve(power, power), r >> 1
        power[power < 1e-300] = 0.0
    diff = np.convolve(law, law[::-1])  # D − D′ on −2N .. 2N
    gap = n / rows * np.abs(np.arange(-2 * rows, 2 * rows + 1))
    base = template(n, 1, rows, (-1.0, 1.0), min_rows)
    raw = base.s / RHO
    if min_rows is not None:
        return float(np.sum(diff * np.minimum(1.0, gap / raw)))
    t = (np.arange(256) + 0.5) / 256  # the width raw·2^{t/2}, t uniform (the ladder of ratio √2)
    return float(np.mean([np.sum(diff * np.minimum(1.0, gap / (raw * 2 ** (x / 2)))) for x in t]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{'attack':<44} {'bound':>6} {'in law':>16} {'bound/in law':>12} {'no ladder':>16} {'ratio':>6}")
    exact = {m: value_exactly(4000, 4, m) for m in (None, 4000)}
    print(f"{'value, sign costs, n = 4, N = 4000 (exact)':<44} {RHO:>6} {exact[None]:>16.4f} {RHO / exact[None]:>12.2f} "
          f"{exact[4000]:>16.4f} {RHO / exact[4000]:>6.2f}")
    attacks = []
    attacks.append(("select, K = 4 tied, sign costs, N = 4000", np.full(4, 0.5), 4, 4000, (-1.0, 1.0)))
    for k in (2, 8, 64):
        rows = 4000 if k <= 8 else 2_000_000
        s = 0.5 * math.sqrt(2 / (rows / k))
        for spacing in (1, 2):
            means = 0.5 + spacing * s * (np.arange(k) - (k - 1) / 2)
            attacks.append((f"select, K = {k}, values {spacing}s apart, N = {rows}", means, k, rows, (0.0, 1.0)))
    for name, means, k, rows, cost_range in attacks:
        got = []
        for min_rows in (None, rows):
            base = template(means.size, k, rows, cost_range, min_rows)
            est = draw_estimates(rng, means, k, rows, cost_range, args.pairs)
            got.append(in_law(base, est))
        (p, se), (q, sq) = got
        print(f"{name:<44} {RHO:>6} {p:>9.4f} ± {2 * se:.4f} {RHO / p:>12.2f} {q:>9.4f} ± {2 * sq:.4f} {RHO / q:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
