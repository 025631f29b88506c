"""replify's speed targets, each printed as a ratio measured in one run (the machines are
shared and noisy, so every figure is compared with a baseline timed in the same process).

Run:  python benchmarks/bench.py            (about two minutes on 2 cores)
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import replify
from replify.components.bandit_lanes import BanditLanes, LaneBandit
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from quickstart import MyHedge  # noqa: E402

warnings.simplefilter("ignore", replify.errors.BlockSizeWarning)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def engine_vs_floor(pairs=200, T=10**5, n=10):
    """evaluate() with the fast path off, over drawing the same per-step costs with numpy."""
    kw = dict(n=n, horizon=T, pairs=pairs, seed=0, rho=0.1)
    engine, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", fast_path=False, **kw))
    seq = replify.make_adversary("iid-bernoulli", n=n, horizon=T, seed=0)
    root = seed_sequence(0)

    def draw():
        for k in range(pairs):
            for side in (0, 1):  # each draw discarded at once, as the engine's chunks are
                seq.sample(np.random.default_rng(child(root, DATA, k, side)))

    floor, _ = timed(draw)
    return engine, floor


class UserBernoulli:
    """An adversary written the way a user would: only ``sample(rng)``, a whole sequence a call."""

    def __init__(self, n, horizon, means):
        self.n, self.horizon, self.means = n, horizon, np.asarray(means)

    def sample(self, rng):
        return (rng.random((self.horizon, self.n)) < self.means).astype(float)


def user_adversary_vs_floor(learner, pairs=100, T=10**5, n=10, repeats=3, **kw):
    """evaluate() on a user's whole-sequence adversary, over merely drawing its sequences: the
    median of ``repeats`` ratios, each of one engine run and one draw timed back to back (a
    shared machine's noise moves single timings by a third)."""
    seq = UserBernoulli(n, T, np.linspace(0.3, 0.7, n))
    replify.evaluate(learner, seq, n=n, horizon=T, pairs=2, seed=0, **kw)  # warm: imports, plugin loading
    root = seed_sequence(0)

    def draw():
        for k in range(pairs):
            for side in (0, 1):
                seq.sample(np.random.default_rng(child(root, DATA, k, side)))

    runs = []
    for _ in range(repeats):
        floor, _ = timed(draw)
        engine, _ = timed(lambda: replify.evaluate(learner, seq, n=n, horizon=T, pairs=pairs, seed=0, **kw))
        runs.append((engine / floor, engine, floor))
    return sorted(runs)[len(runs) // 2]


def naive_pair(seq, root, k, T, n):
    """What a user would otherwise write: two learners per pair, stepped one step at a time."""
    runs, regrets = [], []
    for side in (0, 1):
        learner = replify.make("ftplb-star", n=n, horizon=T, seed=child(root, INTERNAL, k), rho=0.1)
        costs = seq.sample(np.random.default_rng(child(root, DATA, k, side)))
        actions = np.empty(T, dtype=np.int64)
        for t in range(T):
            actions[t] = learner.act()
            learner.update(costs[t])
        runs.append(actions)
        regrets.append(costs[np.arange(T), actions].sum() - costs.sum(axis=0).min())
    return (runs[0] == runs[1]).all(), regrets


# -- bandit learners in lanes -------------------------------------------------------------------
BANDIT = dict(T=20_000, n=10, pairs=100)


def numpy_ucb1(costs):
    """A user's UCB1 in numpy, stepping: every arm once, then argmin of mean - sqrt(2 ln t / pulls)."""
    T, n = costs.shape
    pulls, sums, actions = np.zeros(n), np.zeros(n), np.empty(T, dtype=np.int64)
    for t in range(T):
        a = t if t < n else int(np.argmin(sums / pulls - np.sqrt(2.0 * math.log(t) / pulls)))
        actions[t] = a
        pulls[a] += 1.0
        sums[a] += costs[t, a]
    return costs[np.arange(T), actions].sum() - costs.sum(axis=0).min()


def numpy_hedge(costs, rng, sample="choice"):
    """A user's Hedge in numpy, stepping: p ∝ exp(-eta L), the action drawn with rng.choice (or,
    ``sample="inversion"``, by inverting the cumulative weights with one uniform)."""
    T, n = costs.shape
    eta = math.sqrt(8.0 * math.log(n) / T)
    cum, actions = np.zeros(n), np.empty(T, dtype=np.int64)
    for t in range(T):
        w = np.exp(-eta * (cum - cum.min()))
        if sample == "choice":
            actions[t] = rng.choice(n, p=w / w.sum())
        else:
            c = np.cumsum(w)
            actions[t] = np.searchsorted(c, rng.random() * c[-1])
        cum += costs[t]
    return costs[np.arange(T), actions].sum() - costs.sum(axis=0).min()


def per_run(fn, runs):
    """Seconds per run of ``fn(costs)`` on fresh iid Bernoulli costs (drawn in numpy, untimed)."""
    T, n = BANDIT["T"], BANDIT["n"]
    rng = np.random.default_rng(0)
    total = 0.0
    for _ in range(runs):
        costs = (rng.random((T, n)) < np.linspace(0.3, 0.7, n)).astype(float)
        total += timed(lambda: fn(costs))[0]
    return total / runs


def engine_per_run(learner, adversary="bernoulli-arms", **kw):
    """Seconds per run (one lane) of evaluate() at BANDIT's sizes."""
    T, n, pairs = BANDIT["T"], BANDIT["n"], BANDIT["pairs"]
    replify.evaluate(learner, adversary, n=n, horizon=2_000, pairs=4, seed=0, progress=False, **kw)  # warm
    seconds, _ = timed(lambda: replify.evaluate(learner, adversary, n=n, horizon=T, pairs=pairs, seed=0, progress=False, **kw))
    return seconds / (2 * pairs)


class NullLanes(BanditLanes):
    """A lane form that does nothing (arm 0 every step): what the engine costs around a learner."""

    def __init__(self, *, n, horizon):
        super().__init__(n=n, horizon=horizon, rngs=[None])

    def _choose(self):
        return np.zeros(self.lanes, dtype=np.int64)

    def _learn(self, flat, costs):
        pass


class Null(LaneBandit):
    def __init__(self, *, n, horizon, rng=None):
        super().__init__(n=n, horizon=horizon)
        self._start(NullLanes(n=self.n, horizon=self.horizon))


def mabwiser_per_run():
    """mabwiser's UCB1 through its online partial_fit, one step at a time (None when it is not
    installed); timed over 2 000 steps and scaled to BANDIT's T."""
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        return None
    T, n, steps = BANDIT["T"], BANDIT["n"], 2_000
    rng = np.random.default_rng(0)
    costs = (rng.random((steps, n)) < np.linspace(0.3, 0.7, n)).astype(float)
    mab = MAB(arms=list(range(n)), learning_policy=LearningPolicy.UCB1(alpha=1.0), seed=0)
    mab.fit(decisions=list(range(n)), rewards=[0.5] * n)

    def loop():
        for t in range(steps):
            a = mab.predict()
            mab.partial_fit([a], [1.0 - costs[t, a]])

    return timed(loop)[0] * T / steps


def bandit_lanes(results):
    ucb_loop = per_run(numpy_ucb1, 3)
    print(f"  numpy UCB1 loop {ucb_loop / BANDIT['T'] * 1e6:.2f} us/step, {ucb_loop * 1e3:.1f} ms per run "
          f"(T={BANDIT['T']}, n={BANDIT['n']})")
    floor = engine_per_run(Null)
    # the goals: 30x for ucb1 and exp3; 15x for thompson, which must draw 2n Gamma variates a step
    for name, goal in (("ucb1", 30), ("thompson", 15), ("exp3", 30)):
        run = engine_per_run(name)
        results.append((f"numpy UCB1 loop / {name} in lanes, per run, n=10 T=2e4 100 pairs", ucb_loop / run,
                        f">= {goal}", ucb_loop / run >= goal))
        print(f"  {name}: {run / BANDIT['T'] * 1e9:.0f} ns a step per run")
    results.append(("numpy UCB1 loop / the engine around a lane learner that does nothing (the ceiling of any "
                    "lane learner's ratio)", ucb_loop / floor, "-", True))
    mab = mabwiser_per_run()
    if mab is not None:
        results.append(("mabwiser UCB1 partial_fit per run / numpy UCB1 loop per run", mab / ucb_loop, "-", True))
    else:
        print("  mabwiser is not installed: its figure is not printed")
    rng = np.random.default_rng(1)
    hedge_loop = per_run(lambda c: numpy_hedge(c, rng), 2)
    hedge_inversion = per_run(lambda c: numpy_hedge(c, rng, "inversion"), 2)
    for name in ("hedge", "ewa", "ftpl"):
        run = engine_per_run(name, "iid-bernoulli")
        results.append((f"numpy Hedge loop (rng.choice) / {name}, per run, n=10 T=2e4 100 pairs", hedge_loop / run,
                        ">= 20", hedge_loop / run >= 20))
        results.append((f"numpy Hedge loop (inversion) / {name}, per run", hedge_inversion / run, "-", True))
    demo, _ = timed(lambda: subprocess.run([sys.executable, "-m", "replify.cli", "demo", "bandit-coin", "--quiet"],
                                           check=True, capture_output=True))
    results.append(("replify demo bandit-coin (seconds)", demo, "< 60", demo < 60))


def certified_bandits(results):
    """rep-gap-elimination at its certified schedule (rho = 0.1, n = 10, iid means 0.30 ... 0.75):
    pseudo-regret over uniform exploration's at T = 1e8 and 1e9, and 20 pairs at T = 1e9."""
    means = list(np.linspace(0.3, 0.75, 10))
    kw = dict(n=10, rho=0.1, seed=0, progress=False, adversary_params={"means": means})
    for T, target in ((10**8, 0.35), (10**9, 0.1)):
        report = replify.evaluate("rep-gap-elimination", "iid-bernoulli", horizon=T, pairs=100, **kw)
        ratio = report.pseudo_regret_mean / (0.225 * T)
        results.append((f"rep-gap-elimination certified, pseudo-regret / uniform exploration's, T={T:.0e} (100 pairs, "
                        f"rho_hat {report.rho_hat:.2f})", ratio, f"<= {target}", ratio <= target))
    seconds, _ = timed(lambda: replify.evaluate("rep-gap-elimination", "iid-bernoulli", horizon=10**9, pairs=20, **kw))
    results.append(("rep-gap-elimination, 20 pairs at T=1e9, n=10 (seconds)", seconds, "< 120", seconds < 120))


def adversarial_bandits(results):
    """perturbed-bandit (certified against any oblivious adversary, rho = 0.1, n = 10) on a switching
    instance (four pieces, the best arm rotating): 20 pairs at T = 1e9 (target < 120 s), and its
    pseudo-regret over uniform exploration's there (target <= 0.65; measured, not met by the defaults)."""
    means = [np.roll(np.linspace(0.3, 0.7, 10), 3 * p).tolist() for p in range(4)]
    T = 10**9
    kw = dict(n=10, horizon=T, pairs=20, seed=0, progress=False,
              adversary_params={"means": means, "switch_at": [T // 4, T // 2, 3 * T // 4]})
    seconds, report = timed(lambda: replify.evaluate("perturbed-bandit", "switching-bernoulli", rho=0.1, **kw))
    results.append(("perturbed-bandit, 20 pairs at T=1e9, n=10, switching (seconds)", seconds, "< 120", seconds < 120))
    uniform = replify.evaluate("constant", "switching-bernoulli", **kw)
    ratio = report.pseudo_regret_mean / uniform.pseudo_regret_mean
    results.append((f"perturbed-bandit pseudo-regret / uniform exploration's, T=1e9 (rho_hat {report.rho_hat:.2f})",
                    ratio, "<= 0.65", ratio <= 0.65))


def numpy_linucb(contexts, costs, lam=1.0, beta=1.0):
    """A user's LinUCB in numpy, stepping: V⁻¹ kept by Sherman–Morrison, the arm of least
    <x, θ> − beta·||x||_{V⁻¹} (contexts (T, n, d), costs (T, n))."""
    d = contexts.shape[-1]
    inv, b = np.eye(d) / lam, np.zeros(d)
    for t in range(costs.shape[0]):
        x = contexts[t]
        theta = inv @ b
        a = int(np.argmin(x @ theta - beta * np.sqrt(np.einsum("nd,de,ne->n", x, inv, x))))
        v = inv @ x[a]
        inv -= np.outer(v, v) / (1.0 + x[a] @ v)
        b += costs[t, a] * x[a]


def contextual(results):
    """linucb in lanes against a numpy LinUCB loop (per run; linear-gaussian, d=5, n=20 fixed arms,
    T=2e4, 100 pairs), and rep-linear-elimination at its certified schedule (rho = 0.1) on the same
    instance: pseudo-regret over uniform exploration's at T = 1e8 and 1e9, and 20 pairs at 1e9."""
    T, pairs = 20_000, 100
    seq = replify.make_adversary("linear-gaussian", n=20, horizon=T, seed=0, d=5)
    loop = 0.0
    for k in range(2):
        x, c, _ = seq.sample_contexts(np.random.default_rng(k), 0, T)
        loop += timed(lambda: numpy_linucb(x, c))[0] / 2
    replify.evaluate("linucb", seq, n=20, horizon=T, pairs=4, seed=0, progress=False, beta=1.0)  # warm
    lanes, _ = timed(lambda: replify.evaluate("linucb", seq, n=20, horizon=T, pairs=pairs, seed=0, progress=False,
                                              beta=1.0))
    results.append(("numpy LinUCB loop / linucb in lanes, per run, d=5 n=20 T=2e4 100 pairs", loop / (lanes / (2 * pairs)),
                    ">= 10", loop / (lanes / (2 * pairs)) >= 10))
    for T, target in ((10**8, 0.5), (10**9, 0.1)):
        seq = replify.make_adversary("linear-gaussian", n=20, horizon=T, seed=0, d=5)
        uniform = T * (seq.piece_means[0].mean() - seq.piece_means[0].min())
        for sigma in (0.1, 0.5):  # the instance's noise, and the default (any noise of scale 1/2)
            report = replify.evaluate("rep-linear-elimination", seq, n=20, horizon=T, pairs=100, seed=0, rho=0.1,
                                      sigma=sigma, progress=False)
            ratio = report.pseudo_regret_mean / uniform
            results.append((f"rep-linear-elimination certified (sigma={sigma}), pseudo-regret / uniform exploration's, "
                            f"T={T:.0e} (100 pairs, rho_hat {report.rho_hat:.2f})", ratio, f"<= {target}", ratio <= target))
    seconds, _ = timed(lambda: replify.evaluate("rep-linear-elimination", seq, n=20, horizon=10**9, pairs=20, seed=0,
                                                rho=0.1, progress=False))
    results.append(("rep-linear-elimination, 20 pairs at T=1e9, d=5 n=20 (seconds)", seconds, "< 120", seconds < 120))


def main() -> None:
    print(f"replify {replify.__version__}, numpy {np.__version__}, {os.cpu_count()} cores")
    results = []

    bandit_lanes(results)
    contextual(results)
    certified_bandits(results)
    adversarial_bandits(results)

    engine, floor = engine_vs_floor()
    results.append(("engine (fast path off) / drawing the costs, ftplb-star n=10 T=1e5 200 pairs", engine / floor, "<= 1.5", engine / floor <= 1.5))
    print(f"  engine {engine:.2f}s, floor {floor:.2f}s")

    ratio, user, user_floor = user_adversary_vs_floor("ftplb-star", rho=0.1, block_size=1000)
    results.append(("engine / drawing the costs, a user's sample()-only adversary, ftplb-star n=10 T=1e5 100 pairs "
                    "(median of 3)", ratio, "<= 1.5", ratio <= 1.5))
    print(f"  user adversary, ftplb-star: engine {user:.2f}s, floor {user_floor:.2f}s (the median run)")
    # hedge's own per-step work dwarfs the draw: its ratio measures the learner, not the engine
    hedge_ratio, hedge_user, hedge_floor = user_adversary_vs_floor("hedge", repeats=1)
    print(f"  user adversary, hedge (learner-bound, no target): engine {hedge_user:.2f}s, floor {hedge_floor:.2f}s, "
          f"ratio {hedge_ratio:.1f}")

    T, n, few = 10**5, 10, 3
    seq = replify.make_adversary("iid-bernoulli", n=n, horizon=T, seed=0)
    naive, _ = timed(lambda: [naive_pair(seq, seed_sequence(0), k, T, n) for k in range(few)])
    speedup = (naive / few) / (engine / 200)
    results.append(("stepping loop per pair / engine per pair, fast path off", speedup, ">= 50", speedup >= 50))
    default, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", n=n, horizon=T, pairs=200, seed=0, rho=0.1))
    fast_speedup = (naive / few) / (default / 200)
    results.append(("stepping loop per pair / engine per pair, default (block sums)", fast_speedup, ">= 50", fast_speedup >= 50))
    print(f"  naive {naive / few:.2f}s per pair; engine {engine / 200 * 1000:.1f}ms per pair, {default / 200 * 1000:.2f}ms with block sums")

    fast, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", n=10, horizon=10**9, pairs=100, seed=0, rho=0.1))
    results.append(("block-sum fast path, n=10 T=1e9 100 pairs (seconds)", fast, "< 10", fast < 10))
    iid = dict(n=10, pairs=100, seed=0, rho=0.1)
    fast_iid, _ = timed(lambda: replify.evaluate("iid-experts", "iid-bernoulli", horizon=10**9, **iid))
    results.append(("iid-experts segment path, n=10 T=1e9 100 pairs (seconds)", fast_iid, "< 10", fast_iid < 10))
    per_step_iid, _ = timed(lambda: replify.evaluate("iid-experts", "iid-bernoulli", horizon=10**5, fast_path=False, **iid))
    summed_iid, _ = timed(lambda: replify.evaluate("iid-experts", "iid-bernoulli", horizon=10**5, **iid))
    results.append(("iid-experts per-step / segment path, n=10 T=1e5 100 pairs", per_step_iid / summed_iid, ">= 10",
                    per_step_iid / summed_iid >= 10))

    jobs = min(2, os.cpu_count() or 1)
    for name in ("rep-elimination", "blocked-bandit"):
        bandit, _ = timed(lambda: replify.evaluate(name, "bernoulli-arms", n=10, horizon=10**6, pairs=200, seed=0,
                                                   rho=0.1, n_jobs=jobs, adversary_params={"gap": 0.05}))
        results.append((f"bandit path: {name}, n=10 T=1e6 200 pairs, n_jobs={jobs} (seconds)", bandit, "< 60",
                        bandit < 60))

    steps = 200_000
    costs = (np.random.default_rng(0).random((steps, n)) < 0.5).astype(float)
    learner = replify.wrap(MyHedge, n=n, horizon=steps, rho=0.1, seed=0, block_size=10_000)

    def bare():
        acc = np.zeros(n)
        for c in costs:
            acc += c

    def stream():
        for c in costs:
            learner.act()
            learner.update(c)

    bare_t, _ = timed(bare)
    stream_t, _ = timed(stream)
    results.append(("streaming act()+update() of a wrapped learner / bare add loop", stream_t / bare_t, "<= 5", stream_t / bare_t <= 5))
    print(f"  streaming {stream_t / steps * 1e6:.2f}us/step, bare {bare_t / steps * 1e6:.2f}us/step")

    kw = dict(n=10, horizon=10**5, pairs=1000, seed=0, rho=0.1, block_size=10_000, fast_path=False)
    cores = os.cpu_count() or 1
    one, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", n_jobs=1, **kw))
    # 2 workers everywhere (the target); 4, 8, 16 where the machine has the cores (reported, by design)
    for workers in [w for w in (2, 4, 8, 16) if w <= cores] or [1]:
        cold, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", n_jobs=workers, **dict(kw, pairs=8)))
        many, _ = timed(lambda: replify.evaluate("ftplb-star", "iid-bernoulli", n_jobs=workers, **kw))
        efficiency = one / many / workers
        target = ">= 0.8" if workers == 2 else "-"
        results.append((f"parallel efficiency (n_jobs=1 time / n_jobs={workers} time / {workers}) on a {one:.1f}-second "
                        f"workload, workers warm (their start-up, once per process: {cold:.1f} s)", efficiency, target,
                        efficiency >= 0.8))

    print()
    for label, value, target, ok in results:
        verdict = "reported" if target == "-" else ("met" if ok else "NOT met")
        print(f"{value:10.2f}  target {target:<7} {verdict:<8} {label}")


if __name__ == "__main__":
    main()
