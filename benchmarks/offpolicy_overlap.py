"""replify.offpolicy's decisions at a practitioner's size, worst-case against overlap widths:
docs/offpolicy.md, "The overlap".

    python benchmarks/offpolicy_overlap.py [--logs 40] [--rows 100000]

A practitioner's log: 10 arms, contexts one of 50 kinds (uniform), arm a's cost on kind x Bernoulli
with a mean drawn once (seed 0) and the best arm's mean about 0.04; logged ε-greedily (ε = 0.2) around
the best arm, so every propensity is at least 0.02. Five candidates: the best arm on each kind (true
cost about 0.04), the second best, the third best, a fixed arm and the worst arm. For --logs logs
of --rows rows (seeds 0, 1, ...; R independent, one per log): the replicable value of the best
candidate at ρ = 0.1 — its grid width ÷ its IPS 95% half-width — and the replicable choice among
the five at ρ = 0.1 — how often within 0.05 of the best, with the drawn R — each with the
worst-case variance and with the overlap (``variance="overlap"``)."""

from __future__ import annotations

import argparse
import time

import numpy as np

from replify.components.sequences import ChunkedSequence
from replify.offpolicy import Log, epsilon_greedy, estimate, replicable_value, select

KINDS, ARMS = 50, 10


class Kinds(ChunkedSequence):
    """Contexts one-hot over KINDS kinds (the same row for every arm), costs Bernoulli(means[kind])."""

    fixed_contexts, d, iid, cost_bounds = None, KINDS, True, (0.0, 1.0)

    def __init__(self, means: np.ndarray) -> None:
        self.means, self.n, self.horizon = means, means.shape[1], 1

    def sample_contexts(self, rng: np.random.Generator, start: int, stop: int):
        kind = rng.integers(KINDS, size=stop - start)
        x = np.broadcast_to(np.eye(KINDS)[kind][:, None, :], (stop - start, self.n, KINDS)).copy()
        m = self.means[kind]
        return x, (rng.random(m.shape) < m).astype(np.float64), m

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int):
        return self.sample_contexts(rng, start, stop)[1]


def instance() -> tuple[np.ndarray, dict]:
    rng = np.random.default_rng(0)
    means = np.sort(rng.uniform(0.0, 1.0, (KINDS, ARMS)), axis=1)
    means[:, 0] = rng.uniform(0.0, 0.08, KINDS)  # the best arm on each kind: about 0.04
    perm = np.argsort(rng.random((KINDS, ARMS)), axis=1)  # which arm is best differs by kind
    means = np.take_along_axis(means, np.argsort(perm, axis=1), axis=1)
    rank = np.argsort(means, axis=1)
    kind = lambda c: np.argmax(c[:, 0, :], axis=1)  # noqa: E731
    pols = {"best": lambda c: rank[kind(c), 0], "second": lambda c: rank[kind(c), 1],
            "third": lambda c: rank[kind(c), 2], "arm 0": lambda c: np.zeros(c.shape[0], dtype=np.int64),
            "worst": lambda c: rank[kind(c), -1]}
    return means, pols


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=40)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    means, pols = instance()
    logging = epsilon_greedy(lambda c: means[np.argmax(c[:, 0, :], axis=1)], 0.2, ARMS)
    t = time.perf_counter()
    ratio = {v: [] for v in ("worst-case", "overlap")}
    good = {v: 0 for v in ratio}
    truth = None
    variances = {name: [] for name in pols}  # each candidate's IPS terms' variance, log by log
    for s in range(args.logs):
        log = Log.simulate(Kinds(means), n=ARMS, rows=args.rows, seed=s, logging=logging)
        for name, pol in pols.items():
            pi = np.zeros((log.rows, ARMS))
            pi[np.arange(log.rows), pol(log.contexts)] = 1.0
            variances[name].append(float(np.var(pi[np.arange(log.rows), log.actions] / log.propensities * log.costs)))
        ips = estimate(log, pols["best"], "ips")
        half = (ips.interval[1] - ips.interval[0]) / 2
        for variance in ratio:
            value = replicable_value(log, pols["best"], rho=0.1, seed=10_000 + s, variance=variance)
            ratio[variance].append(value.width / half)
            choice = select(log, pols, rho=0.1, seed=10_000 + s, variance=variance)
            truth = choice.true_values
            good[variance] += bool(truth[choice.chosen] <= truth.min() + 0.05)
    print(f"{args.rows} rows, true values {np.round(truth, 3).tolist()}")
    for variance in ratio:
        r = np.array(ratio[variance])
        print(f"  {variance:<10}: value's width / IPS half-width {r.mean():.1f} (range {r.min():.1f}-{r.max():.1f}); "
              f"choice within 0.05 of the best in {good[variance]} of {args.logs} logs")
    # what agreeing on a variance measured from the costs would cost: two independent logs' IPS-term
    # variances, E|ln(V/V')| over the pairs of logs (0 and 1, 2 and 3, ...)
    spread = {name: float(np.mean(np.abs(np.log(np.array(v[0::2]) / np.array(v[1::2]))))) for name, v in variances.items()}
    print("  two logs' IPS-term variances, E|ln(V/V')|: " + ", ".join(f"{k} {v:.3f}" for k, v in spread.items()))
    print(f"  ({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
