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
                    min(j, w)·m; with ``restart`` = W, of the current epoch of W blocks: M_j =
                    ((j − 1) mod W + 1)·m); draw fresh iid standard Gumbel G from R and commit
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
learning rates η_j = ε_j·m (in block-mean units), each drawn afresh, and nonincreasing (a later
decision reads more pulls, so its ε is smaller). Hedge's bound with nonincreasing rates holds pathwise
on the sequence ĉ_1, …, ĉ_{K−1}, c̄_K (the last block needs no estimate: no decision reads it); in
expectation the learner pays ⟨p_j, c̄_j⟩ per step of a committed block (Σ⟨p_j, ĉ_j⟩ has that mean, ĉ_j
being unbiased given p_j) and the best estimated total has mean at most the best true one,
E min_a Σ_j ĉ_j(a) ≤ min_a Σ_j c̄_j(a) (Jensen on the min), so the bound on the estimates bounds the
expected regret. Block 1's arm e was chosen by no estimate: it costs at most B, Hedge's uniform
first weights at least 0, and their rate can be taken η_1 (the next block's), keeping the rates
nonincreasing. With costs in [0, 1],

    E Regret ≤ n·m·(K − 1)   (exploration)
               + B·(1 + ln n/η_{K−1} + η_1/8 + Σ_{j<K} η_j/8)   (block 1, and Hedge on the blocks)

(``regret_bound``, stated at most T).

**Switching comparators, restarts** (ours). With ``restart`` = W, time is cut into epochs of W blocks;
a decision reads only the blocks of its epoch so far (the epoch's last decision reads all W and picks
the next epoch's first arm), so each epoch runs the argument above afresh: its first block costs at
most B, the others are Hedge restarted on the epoch's estimates, with the rates of its decisions. Against
any comparator that changes arm at most S times (``switches`` = S), the epochs in which it does not
change are bounded as above and each of the at most S others by its length, W·B:

    E Regret_S ≤ n·m·(K − 1) + Σ_epochs B·(1 + ln n/η_last + η_first/8 + Σ_{epoch} η_j/8) + S·W·B.

With ``switches`` given and no ``restart``, the default (K, m, W) is the grid's least value of this
bound (W over :data:`RESTARTS`); without either, S = 0 and one epoch (the bound above). At n = 10,
ρ = 0.1 both bounds exceed the regret of uniform exploration on every instance we ran — ρ's noise,
about 0.1 in mean units at T = 10⁹, is the larger part — so they rank schedules and state a worst
case; what each schedule learns is measured (docs/bandits.md, "Against any oblivious adversary").

With a ``window`` the decisions read the last w blocks (sliding) — they can follow a best arm that
changes — and no regret bound is stated (``regret_bound`` is None: neither argument above covers a
sliding window); the certificate holds as above with M_j = min(j, w)·m.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

import replify
from replify.base.checks import check_int, check_rho
from replify.components.exploring import ExploringBandit, exploration_schedule
from replify.errors import InvalidArgumentError
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
    restart: int | None  # or those of its epoch of W blocks (None: one epoch)
    switches: int | None  # the comparator's switches the regret bound allows (None: a fixed arm)
    eps_schedule: tuple[float, ...]
    replicability_bound: float
    certified: bool
    regret_bound: float | None
    overrides: tuple[str, ...]
    regret_bound_formula: str = ("n m (K-1) + sum over epochs of B (1 + ln n / eta_last + eta_first / 8 + sum_j eta_j / 8) "
                                 "+ S W B, eta_j = eps_j m (one epoch and S = 0 without restart/switches)")
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = attrs.asdict(self, recurse=False)
        return d | {"eps_schedule": list(self.eps_schedule), "overrides": list(self.overrides)}


#: Epoch lengths (in blocks) the default searches when ``switches`` is given: restarting every W blocks
#: (W = 1, a decision reading one block, is left out: its bound is the trivial T whatever the schedule).
RESTARTS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024)


@functools.lru_cache(maxsize=1024)
def _read_eps(share: float, explore: int, n: int, most: int) -> np.ndarray:
    """ε of a decision that reads r = 1..``most`` blocks of ``explore`` pulls per arm, at ``share`` of ρ each
    (read-only; cached: the default's search asks for the same ones under every epoch length)."""
    eps = np.asarray(gumbel_eps(share, explore * np.arange(1.0, most + 1.0), n, bandit=True), dtype=np.float64)
    eps.setflags(write=False)
    return eps


def _schedule(horizon: int, n: int, rho: float, blocks: int, explore: int, window: int | None = None,
              restart: int | None = None, switches: int = 0) -> tuple[tuple[float, ...], float, float]:
    """Each decision's ε at ρ/(K − 1), the certificate Σ b, and the regret bound against every comparator
    that switches arms ``switches`` times (module docstring; with a ``window`` no bound is stated, and the
    formula, Hedge's over all blocks, only ranks the (K, m) of the search)."""
    size = -(-horizon // blocks)
    decisions = -(-horizon // size) - 1  # every block but the last decides (all of them full: B steps)
    if decisions == 0:
        return (), 0.0, float(horizon)
    j = np.arange(decisions)  # decision j, at the end of block j, picks block j + 1's arm
    if window is not None:
        read = np.minimum(j + 1, window)  # the last w blocks
    elif restart is not None:
        read = j % restart + 1  # the epoch's blocks so far
    else:
        read = j + 1  # every block so far
    eps = _read_eps(rho / decisions, explore, n, decisions)[read - 1]
    bound = float(np.sum(gumbel_bandit_bound(eps, explore * read.astype(np.float64), n)))
    epoch = restart or decisions + 1
    # Hedge restarted each epoch: its rates are those of the epoch's decisions but the one that opens it
    inside = (j + 1) % epoch != 0
    which, eta = (j + 1)[inside] // epoch, (eps * explore)[inside]
    hedge = np.full(-(-(decisions + 1) // epoch), float(size))  # each epoch's first block, played before it learns
    if eta.size:
        starts = np.flatnonzero(np.diff(which, prepend=-1))
        # Hedge over the epoch's blocks, its uniform first weights at the rate of the second block's
        hedge[which[starts]] += size * (math.log(n) / np.minimum.reduceat(eta, starts)
                                        + (np.add.reduceat(eta, starts) + eta[starts]) / 8.0)
    regret = n * explore * decisions + float(np.sum(hedge)) + switches * epoch * size
    return tuple(float(e) for e in eps), bound, float(regret)  # compared uncapped; stated at most T


def _best_restart(horizon: int, n: int, rho: float, blocks: int, explore: int, switches: int) -> tuple[float, int]:
    """The least S-switch regret bound over the epoch lengths :data:`RESTARTS` that fit the blocks played
    (one epoch of all of them when none does), and its epoch length."""
    played = -(-horizon // -(-horizon // blocks))
    lengths = [w for w in RESTARTS if w <= played] or [played]
    return min((_schedule(horizon, n, rho, blocks, explore, None, w, switches)[2], w) for w in lengths)


@functools.lru_cache(maxsize=128)
def _parameters(horizon: int, n: int, rho: float, blocks: int | None, explore: int | None, window: int | None,
                restart: int | None, switches: int | None, overrides: tuple[str, ...]) -> PerturbedBanditParams:
    searching = switches is not None and restart is None and window is None
    s = switches or 0
    objective = ((lambda k, m: _best_restart(horizon, n, rho, k, m, s)[0]) if searching
                 else (lambda k, m: _schedule(horizon, n, rho, k, m, window, restart, s)[2]))
    blocks, explore = exploration_schedule(horizon=horizon, n=n, blocks=blocks, explore=explore, objective=objective)
    if searching:
        restart = _best_restart(horizon, n, rho, blocks, explore, s)[1]
    size = -(-horizon // blocks)
    eps, bound, regret = _schedule(horizon, n, rho, blocks, explore, window, restart, s)
    return PerturbedBanditParams(
        algorithm=ALGORITHM, horizon=horizon, n=n, rho=rho, blocks=-(-horizon // size), block_size=size, explore=explore,
        window=window, restart=restart, switches=switches,
        eps_schedule=eps, replicability_bound=bound, certified=bound <= rho * (1.0 + 1e-9),
        regret_bound=min(regret, horizon) if window is None else None,  # Hedge's bound needs every block
        overrides=overrides,
    )


def parameters(*, horizon: int, n: int, rho: float, blocks: int | None = None, explore: int | None = None,
               window: int | None = None, restart: int | None = None, switches: int | None = None) -> PerturbedBanditParams:
    """K blocks and m explorations per arm and block (given, or the grid's least regret bound:
    module docstring), each decision's ε, the certificate and the regret bound. Blocks have
    B = ⌈T/K⌉ steps, so fewer than K may be played (``params.blocks`` says how many). ``switches`` = S
    makes the bound the one against comparators that switch arms S times, and (``restart`` not given) the
    default restarts every W blocks, W of least bound."""
    horizon, n, rho = check_int("horizon", horizon, minimum=2), check_int("n", n, minimum=2), float(check_rho(rho))
    blocks, explore, window, restart = (None if v is None else check_int(k, v, minimum=1) for k, v in (
        ("blocks", blocks), ("explore", explore), ("window", window), ("restart", restart)))
    switches = None if switches is None else check_int("switches", switches, minimum=0)
    if window is not None and restart is not None:
        raise InvalidArgumentError(f"give window= or restart=, not both (a decision reads the last {window} blocks, "
                                   f"or its epoch of {restart}); got window={window}, restart={restart}")
    if window is not None and switches is not None:
        raise InvalidArgumentError(f"switches={switches} asks for a regret bound against switching comparators, which "
                                   f"a window has none of (restart= has one); got window={window}")
    given = (("blocks", blocks), ("explore", explore), ("window", window), ("restart", restart), ("switches", switches))
    overrides = tuple(k for k, v in given if v is not None)
    params = _parameters(horizon, n, rho, blocks, explore, window, restart, switches, overrides)
    certify(params.replicability_bound, rho, algorithm=ALGORITHM, detail=f"K={params.blocks}, m={params.explore}")
    return params


class PerturbedBandit(ExploringBandit):
    """The bandit perturbed-commit conversion (module docstring), on the exploration machinery of
    :class:`replify.components.bandits.ExploringBandit`."""

    _params = ("blocks", "explore", "window", "restart", "switches")

    def __init__(self, *, n: int, horizon: int, rng: np.random.Generator, rho: float, blocks: int | None = None,
                 explore: int | None = None, window: int | None = None, restart: int | None = None,
                 switches: int | None = None) -> None:
        super().__init__(n=n, horizon=horizon)
        self.params = parameters(horizon=self.horizon, n=self.n, rho=rho, blocks=blocks, explore=explore, window=window,
                                 restart=restart, switches=switches)
        p = self.params
        self.rho, self.blocks = p.rho, p.blocks
        self._start(rng=rng, block_size=p.block_size, decisions=len(p.eps_schedule), explore=p.explore,
                    window=p.window, restart=p.restart, first=int(rng.integers(self.n)))  # block 1's arm e, from R

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
