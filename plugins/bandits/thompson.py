"""Thompson sampling for Bernoulli bandits (Thompson 1933; Agrawal & Goyal, "Analysis of Thompson
sampling for the multi-armed bandit problem", COLT 2012, Alg. 2), for costs in [0, 1]: each
step's cost c is turned into a Bernoulli success with probability 1 − c (exact for 0/1 costs),
each arm keeps a Beta(successes + 1, failures + 1) posterior, and the arm with the largest
posterior draw is played.

Its expected regret is O(Σ_a ln T / Δ_a) (Agrawal & Goyal 2012, Thm 2), and O(sqrt(n T ln T))
problem-independently. It draws from its own generator every step: not replicable.

**As computed.** A posterior draw is X/(X + Y) with X ~ Gamma(a), Y ~ Gamma(b) (a, b ≥ 1), each
Gamma drawn by Marsaglia & Tsang's method ("A simple method for generating gamma variables", ACM
TOMS 26, 2000): with d = a − 1/3, c = 1/sqrt(9d), a standard normal x and a uniform u, propose
d·(1 + c x)³ and accept it when 1 + c x > 0 and u < 1 − 0.0331 x⁴ or
ln u < x²/2 + d(1 − v + ln v), v = (1 + c x)³; a rejected proposal is replaced by a fresh one. The
draws are exact in law. The proposals' normals and uniforms (2n a step, and one more uniform for
a fractional cost's coin: success when u < 1 − c, which for 0/1 costs is the cost itself) are
drawn from the learner's generator a block of steps ahead, and a rejected proposal's replacement
from a small reserve of its own (refilled from the same generator when it runs out): so a step's
draws are a fixed number of array operations, and :class:`ThompsonLanes` plays every lane of an
evaluation at once (the lane-batched form of :mod:`replify.components.bandits`), each lane from
its own generator. A learner stepped alone runs the same code on one lane.
"""

from __future__ import annotations

import numpy as np

import replify
from replify.components.bandit_lanes import BanditLanes, LaneBandit


#: Variates drawn ahead per lane at a time: the proposals of up to this many (and at most 64) steps.
BLOCK_VARIATES = 4096
#: Marsaglia & Tsang's squeeze constant.
SQUEEZE = 0.0331


def marsaglia_tsang(x: np.ndarray, u: np.ndarray, d: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Marsaglia & Tsang's proposals d·(1 + c x)³ for Gamma(d + 1/3) from standard normals ``x``
    and uniforms ``u`` (elementwise), and which of them are accepted."""
    v = 1.0 + c * x
    positive = v > 0.0
    v = v * v * v
    x2 = x * x
    accept = u < 1.0 - SQUEEZE * x2 * x2
    accept &= positive
    doubt = np.flatnonzero(positive & ~accept)
    if doubt.size:  # the squeeze failed: the exact test, with logarithms
        xd, vd = x.flat[doubt], v.flat[doubt]
        with np.errstate(divide="ignore"):  # ln 0 = -inf accepts, as it should
            exact = np.log(u.flat[doubt]) < 0.5 * xd * xd + d.flat[doubt] * (1.0 - vd + np.log(vd))
        accept.flat[doubt] = exact
    return d * v, accept


class ThompsonLanes(BanditLanes):
    """Thompson sampling on many lanes at once: each lane's successes and failures per arm, the
    Gamma shapes' d and c, and its normals and uniforms drawn ahead (module docstring)."""

    per_lane = ("successes", "failures", "_d", "_c", "_normals", "_uniforms", "_coins", "_spare_x", "_spare_u",
                "_spare_at")
    shared = ("_row",)

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(n=n, horizon=horizon, rngs=[rng])
        self.successes = np.zeros((1, n))
        self.failures = np.zeros((1, n))
        # the 2n Gamma shapes: successes + 1 (arms 0..n-1), then failures + 1
        self._d = np.full((1, 2 * n), 1.0 - 1.0 / 3.0)
        self._c = 1.0 / np.sqrt(9.0 * self._d)
        self._block = max(1, min(64, BLOCK_VARIATES // (2 * n)))  # steps drawn ahead at once
        self._normals, self._uniforms = np.empty((1, 0, 2 * n)), np.empty((1, 0, 2 * n))
        self._coins = np.empty((1, 0))
        self._row = 0  # the next step's row in the block
        self._reserve = max(64, 2 * n)  # replacements for rejected proposals, per lane
        self._spare_x, self._spare_u = np.empty((1, self._reserve)), np.empty((1, self._reserve))
        self._spare_at = np.full(1, self._reserve)  # the next unused spare (none yet)

    def _draw_block(self) -> None:
        steps = min(self._block, self.horizon - self.t)
        k = 2 * self.n
        self._normals = np.empty((self.lanes, steps, k))
        self._uniforms = np.empty((self.lanes, steps, k))
        self._coins = np.empty((self.lanes, steps))
        for i, rng in enumerate(self.rngs):
            rng.standard_normal(out=self._normals[i])
            rng.random(out=self._uniforms[i])
            rng.random(out=self._coins[i])
        self._row = 0

    def _spares(self, lanes: np.ndarray) -> None:
        """Refill the reserve of every lane in ``lanes``: the unused spares move to the front,
        fresh ones from the lane's generator follow."""
        for i in lanes.tolist():
            at = int(self._spare_at[i])
            left = self._reserve - at
            rng = self.rngs[i]
            self._spare_x[i, :left] = self._spare_x[i, at:]
            self._spare_u[i, :left] = self._spare_u[i, at:]
            rng.standard_normal(out=self._spare_x[i, left:])
            rng.random(out=self._spare_u[i, left:])
            self._spare_at[i] = 0

    def posterior_draws(self) -> np.ndarray:
        """This step's draw from every lane's posterior over every arm, (lanes, n): Beta(successes
        + 1, failures + 1), independently (module docstring). Called once a step, by ``act()``."""
        if self._row == self._normals.shape[1]:
            self._draw_block()
        x, u = self._normals[:, self._row], self._uniforms[:, self._row]
        self._row += 1
        gamma, accept = marsaglia_tsang(x, u, self._d, self._c)
        if not accept.all():
            self._replace(gamma, accept)
        n = self.n
        return gamma[:, :n] / (gamma[:, :n] + gamma[:, n:])

    def _choose(self) -> np.ndarray:
        return self.posterior_draws().argmax(axis=1)

    def _replace(self, gamma: np.ndarray, accept: np.ndarray) -> None:
        """Fresh proposals for the rejected ones, round by round from each lane's reserve (in the
        order of its entries), until every one is accepted."""
        k = 2 * self.n
        todo = np.flatnonzero(~accept)  # flat (lane, shape) entries, lanes in order
        while todo.size:
            lane = todo // k
            counts = np.bincount(lane, minlength=self.lanes)
            short = self._spare_at + counts > self._reserve
            if short.any():  # lanes whose reserve runs out this round
                self._spares(np.flatnonzero(short))
            rank = np.arange(todo.size) - np.searchsorted(lane, lane)  # this entry's place among its lane's
            at = self._spare_at[lane] + rank
            g, ok = marsaglia_tsang(self._spare_x[lane, at], self._spare_u[lane, at], self._d.flat[todo], self._c.flat[todo])
            self._spare_at += counts
            gamma.flat[todo[ok]] = g[ok]
            todo = todo[~ok]

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        # Agrawal & Goyal's reduction: a success with probability 1 - c (for c in {0, 1}: c == 0)
        success = self._coins[:, self._row - 1] < 1.0 - costs
        wins = self.successes.take(flat) + success
        losses = self.failures.take(flat) + ~success
        self.successes.put(flat, wins)
        self.failures.put(flat, losses)
        shape = np.where(success, wins, losses) + 1.0
        d = shape - 1.0 / 3.0
        entry = flat + self._offsets + self.n * ~success  # lane i's shape entry: i·2n + arm (+ n for failures)
        self._d.put(entry, d)
        self._c.put(entry, 1.0 / np.sqrt(9.0 * d))


class BernoulliThompson(LaneBandit):
    """Thompson sampling with Beta(1, 1) priors; costs in [0, 1] become Bernoulli successes."""

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator) -> None:
        super().__init__(n=n, horizon=horizon)
        self._rng = rng
        self._start(ThompsonLanes(n=self.n, horizon=self.horizon, rng=rng))

    @property
    def successes(self) -> np.ndarray:
        """Each arm's successes so far."""
        return self._lane.successes[0]

    @property
    def failures(self) -> np.ndarray:
        """Each arm's failures so far."""
        return self._lane.failures[0]


@replify.hookimpl
def register_learners(register):
    register(
        replify.LearnerSpec(
            "thompson", BernoulliThompson, "experts", norm="linf", cost_range=(0.0, 1.0),
            enforces={"horizon", "domain"}, feedback="bandit", description="Thompson sampling, Beta-Bernoulli (Agrawal & Goyal 2012), bandit feedback; not replicable",
        )
    )
