"""``perturbed-bandit``: the perturbed-commit conversion under bandit feedback — ρ-replicable
against *every* oblivious adversary, where replify's other replicable bandit learners are
certified for iid costs only.

    blocks j = 1..K of length B = ⌈T/K⌉ (the last one shorter).
    block 1:        play an arm e drawn from R, but for the exploration steps below.
    each block j < K: R draws an offset o uniform in the block and a permutation π of the arms;
                    the n·m steps o, o + 1, …, o + nm − 1 (cyclically in the block) explore, the
                    u-th of them arm π(u mod n) — m steps each arm; the other steps play the
                    committed arm a_j.
    after block j < K: C_a = the sum of arm a's costs on its exploration steps of blocks 1..j
                    (M_j = j·m of them; with ``window`` = w, of the last w blocks only: M_j =
                    min(j, w)·m); draw fresh iid standard Gumbel G from R and commit
                    a_{j+1} = argmin_a C_a − G_a/ε_j.

The exploration stretch is one round robin (wrapping around the block's end: two), so a block is
three or four round robins and the engine plays it on block sums (its block-sum path, exact in law
on iid and piecewise-iid adversaries) — T = 10⁹ costs a few draws per block. Each step of the block
is arm a's u-th exploration step with probability 1/L (o uniform), so ĉ_j(a) = (arm a's explored
sum)/m is an unbiased estimate of the block's average cost of arm a against any oblivious adversary.

**What is ours and what is not.** The question — replicability against an adversary, under
bandit feedback — is the one the paper (Ahmadi, Bhandari & Blum, "Replicable Online Learning",
§ Discussion) leaves open. The shared exploration schedule (both runs explore the same arm at the
same steps, so their estimates differ only through the independent draws of the same costs), the
certificate and the parameter choice are ours. The perturbed leader on the cumulative sums is a draw
from Hedge's weights by an exponential race shared by the runs (the Gumbel-max trick; see
``perturbed-commit``); with importance-free uniform exploration it is the structure of Exp3 with
uniform exploration (Auer, Cesa-Bianchi, Freund & Schapire, SIAM J. Comput. 2002), blocked.

**Replicability, any oblivious adversary (certified).** The runs share e, every exploration
schedule and every G. They play the same arms until some decision differs: the exploration steps
are the same in both runs, and the committed arms agree while the decisions do. At decision j,
given the schedules (drawn independently of the costs), each arm's sum C_a is a sum of M_j costs
in [0, 1] at its own steps — independent across steps, and across the two runs — and G is fresh,
so the exponential race's exact agreement and a tilt back to the weights at the expected sums give

    P(decision j parts) ≤ b(ε_j, M_j, n) ≈ ε_j·√(M_j)·√(1 − 1/n)/2 + (1 − 1/n)·ε_j²·M_j/2

(:func:`replify.guarantees.certificates.gumbel_bandit_bound`, with every constant; docs/certificates.md,
"Gumbel noise under bandit feedback"). By the union bound ρ ≤ Σ_{j<K} b(ε_j, M_j, n)
(``replicability_bound``); each ε_j is the largest with b ≤ ρ/(K − 1). Nothing asks the costs to be
identically distributed, nor the arms' costs at a step to be independent.

**Regret against any oblivious adversary (a bound, ours).** Let c̄_j be block j's average cost
vector and ĉ_j = (arm sums of block j's exploration steps)/m: E ĉ_j = c̄_j given the past (the
steps are uniform in the block and drawn after a_j), so the commits are Hedge on the ĉ_j with
learning rates η_j = ε_j·m (in block-mean units), each drawn afresh. With costs in [0, 1],

    E Regret ≤ n·m·(K − 1)   (exploration)   + B·(ln n/η_{K−1} + Σ_{j<K} η_j/8)   (Hedge on ĉ, per block)
               + 2B   (block 1, whose arm e no estimate chose, at most 1 a step; and the last block,
                      whose estimate no decision uses)

(``regret_bound``; Hedge's bound with non-increasing rates). The default (K, m) is the pair on a
grid that minimises this bound at (T, n, ρ). With a ``window`` the decisions read recent blocks only
— they can follow a best arm that changes — and no regret bound is stated (``regret_bound`` is None:
Hedge's needs every block); the certificate holds as above with M_j = min(j, w)·m.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_rho
from replify.components.bandits import ExploringBandit, exploration_schedule
from replify.guarantees.certificates import certify, gumbel_bandit_bound, gumbel_eps

ALGORITHM = "perturbed-bandit"

@attrs.frozen(kw_only=True)
class PerturbedBanditParams:
    """The schedule in force (blocks, explorations per arm and block, each decision's ε) and the
    certificate and regret bound it gives."""

    algorithm: str
    horizon: int
    n: int
    rho: float
    blocks: int
    block_size: int
    explore: int  # m, explorations per arm and block (blocks 1..K-1)
    window: int | None  # the blocks whose explorations a decision reads: the last w (None: all so far)
    eps_schedule: tuple[float, ...]
    replicability_bound: float
    certified: bool
    regret_bound: float | None
    overrides: tuple[str, ...]
    regret_bound_formula: str = "n m (K-1) + B (ln n / eta_{K-1} + sum_j eta_j / 8) + 2B, eta_j = eps_j m"
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self, recurse=False)
        return d | {"eps_schedule": list(self.eps_schedule), "overrides": list(self.overrides)}


def _schedule(horizon: int, n: int, rho: float, blocks: int, explore: int,
              window: int | None = None) -> tuple[tuple[float, ...], float, float]:
    """Each decision's ε at ρ/(K − 1), the certificate Σ b, and the regret bound's formula (Hedge's,
    which needs every block's estimate: with a ``window`` no bound is reported, and the formula only
    ranks the (K, m) of the search)."""
    size = -(-horizon // blocks)
    decisions = -(-horizon // size) - 1  # every block but the last decides (all of them full: B steps)
    if decisions == 0:
        return (), 0.0, float(horizon)
    read = np.arange(1, decisions + 1, dtype=np.float64)
    pulls = explore * (read if window is None else np.minimum(read, window))
    eps = gumbel_eps(rho / decisions, pulls, n, bandit=True)
    bound = float(np.sum(gumbel_bandit_bound(eps, pulls, n)))
    eta = eps * explore
    regret = n * explore * decisions + size * (math.log(n) / eta[-1] + eta.sum() / 8.0) + 2.0 * size
    return tuple(float(e) for e in eps), bound, float(regret)  # compared uncapped; stated at most T


@functools.lru_cache(maxsize=128)
def _parameters(horizon: int, n: int, rho: float, blocks: int | None, explore: int | None, window: int | None,
                overrides: tuple[str, ...]) -> PerturbedBanditParams:
    blocks, explore = exploration_schedule(horizon=horizon, n=n, blocks=blocks, explore=explore,
                                           objective=lambda k, m: _schedule(horizon, n, rho, k, m, window)[2])
    size = -(-horizon // blocks)
    eps, bound, regret = _schedule(horizon, n, rho, blocks, explore, window)
    return PerturbedBanditParams(
        algorithm=ALGORITHM, horizon=horizon, n=n, rho=rho, blocks=-(-horizon // size), block_size=size, explore=explore,
        window=window,
        eps_schedule=eps, replicability_bound=bound, certified=bound <= rho * (1.0 + 1e-9),
        regret_bound=min(regret, horizon) if window is None else None,  # Hedge's bound needs every block
        overrides=overrides,
    )


def parameters(*, horizon: int, n: int, rho: float, blocks: int | None = None, explore: int | None = None,
               window: int | None = None) -> PerturbedBanditParams:
    """K blocks and m explorations per arm and block (given, or the grid's least regret bound:
    module docstring), each decision's ε, the certificate and the regret bound. Blocks have
    B = ⌈T/K⌉ steps, so fewer than K may be played (``params.blocks`` says how many)."""
    horizon, n, rho = check_int("horizon", horizon, minimum=2), check_int("n", n, minimum=2), float(check_rho(rho))
    blocks, explore, window = (None if v is None else check_int(k, v, minimum=1)
                               for k, v in (("blocks", blocks), ("explore", explore), ("window", window)))
    overrides = tuple(k for k, v in (("blocks", blocks), ("explore", explore), ("window", window)) if v is not None)
    params = _parameters(horizon, n, rho, blocks, explore, window, overrides)
    certify(params.replicability_bound, rho, algorithm=ALGORITHM, detail=f"K={params.blocks}, m={params.explore}")
    return params


class PerturbedBandit(ExploringBandit):
    """The bandit perturbed-commit conversion (module docstring), on the exploration machinery of
    :class:`replify.components.bandits.ExploringBandit`."""

    _params = ("blocks", "explore", "window")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, blocks: int | None = None,
                 explore: int | None = None, window: int | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.params = parameters(horizon=self.horizon, n=self.n, rho=rho, blocks=blocks, explore=explore, window=window)
        p = self.params
        self.rho, self.blocks = p.rho, p.blocks
        self._start(rng=rng, block_size=p.block_size, decisions=len(p.eps_schedule), explore=p.explore,
                    window=p.window, first=int(rng.integers(self.n)))  # block 1's arm e, from R

    def _commit(self, total: np.ndarray) -> int:
        """The end of block j < K: the perturbed leader of the explored sums, fresh Gumbel noise."""
        eps = self.params.eps_schedule[self.block]
        return int(np.argmin(total - self._rng.gumbel(size=self.n) / eps))


@replify.hookimpl
def register_learners(register):
    register(replify.LearnerSpec(
        ALGORITHM, PerturbedBandit, "experts", parameters=parameters, norm="linf", cost_range=(0.0, 1.0),
        guarantee="adversarial", enforces={"horizon", "domain"}, feedback="bandit", test_params={"rho": 0.2},
        description="shared exploration steps, then commits to a Gumbel-perturbed leader of the explored sums "
        "each block: bandit feedback, rho-replicable against any oblivious adversary (our bound)",
    ))
