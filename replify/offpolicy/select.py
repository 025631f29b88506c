"""Decisions from logs that replicate (ours, after the paper's rounding on a shared random grid):
:func:`replicable_value`, a policy's estimated cost rounded so that two independent logs of the
same logging policy report the same number with probability ≥ 1 − ρ, and :func:`select`, a choice
among candidate policies that two such logs make alike with probability ≥ 1 − ρ — the randomness R
(``seed``) shared, as in the paper. :mod:`replify.offpolicy.measure` measures either over pairs of
logs (a :class:`~replify.evaluation.report.Report`) and computes it over R for two given logs.

**Assumptions.** (i) A log's N rows are iid: a context, the logging policy μ's arm a ~ μ(·|x), its
cost; the two logs are independent, of one system and one logging policy (so one p_min and one cost
range, declared: what the two runs share besides R, ρ and the candidates), of N and N′ rows —
their sizes may differ, as two weeks of logs do (*Logs of other sizes* below). Two halves of one
log dealt at random (:meth:`Log.split`) qualify:
drawing without replacement makes E[Δ²] at most 1 + 1/(2N − 1) times the iid value, negligible. A
log recorded from a learning policy (:func:`replify.offpolicy.record`) is not iid, and the variance
bound below still holds: each row's term has conditional mean V_k − b and conditional second moment
≤ M²/p_min given the rows before it (a martingale), so Var V̂_k ≤ M²/(N p_min) all the same.
(ii) μ gives every arm probability at least p_min (``min_propensity``, declared; the log's own
smallest propensity — and, where the log records it, its logging distribution's smallest
probability — must not be below it). (iii) Costs lie in [lo, hi] (``cost_bound``: a pair, or M for
[−M, M]; by default the range the log declares — a simulated log, its adversary's ``cost_bounds``);
a cost outside is refused. Where neither p_min nor the range is declared, the log's own are used
and the result is measured, not certified. (iv) Each candidate π_k is fixed before the logs are
seen (not fitted on them) and decides each row from that row's contexts alone; a policy whose
probabilities on some rows change when it is shown the two halves of the rows apart, or a few
rows alone, is refused.
Write b = (lo + hi)/2 and M = (hi − lo)/2 — as float64 computes them, b = lo/2 + hi/2 and M the largest
|c − b| over [lo, hi], rounded up by two ulps: on a range a few ulps wide b rounds off the middle, and
an independent review measured ρ̂ = 0.153 at a certified 0.1 with M = hi/2 − lo/2 there.

**The estimate.** V̂_k = b + (1/N) Σ_i w_ik (c_i − b), w_ik = π_k(a_i|x_i)/μ(a_i|x_i): inverse
propensity scoring with the constant baseline b — the doubly robust estimator of Dudík, Langford &
Li (ICML 2011) with the constant cost model b. It is unbiased, as IPS is, since E[w | x] =
Σ_a π_k(a|x) = 1, and its terms have |c − b| ≤ M where IPS's have |c| ≤ max(|lo|, |hi|): for costs
in [0, 1], half the spread.

**The variance.** Var(w (c − b)) ≤ E[w² (c − b)²] ≤ M² E_x[Σ_a μ(a|x) π_k(a|x)²/μ(a|x)²]
= M² E_x[Σ_a π_k(a|x)²/μ(a|x)] ≤ (M²/p_min)·E_x[Σ_a π_k(a|x)²] ≤ M²/p_min. So two independent logs
give Δ_k = V̂_k − V̂'_k with E[Δ_k²] = 2 Var V̂_k ≤ 2M²/(N p_min) =: s², and E|Δ_k| ≤ s (Jensen).
The bound is attained: uniform logging over n arms, a deterministic π_k and costs at lo or hi only
(|c − b| = M on every row) give Var(w (c − b)) = n M² − (V_k − b)².

**The replicable value.** θ̃ = b + w(⌊d/w − u⌋ + u + ½), d = V̂ − b the mean of w (c − b) as
computed, u uniform on [0, 1) from R: a grid shifted by b is as uniformly placed as any, and
rounding d rather than b + d keeps the offset u in floating point where |b| is large against w (at
costs near 2⁴⁹ and w ~ 10⁻², b + d is no longer resolved finely enough to round, and an independent
review measured ρ̂ = 0.49 at a certified 0.1 before this). Given the two estimates, the roundings
differ with probability min(1, |V̂ − V̂'|/w), so P(θ̃ ≠ θ̃') ≤ s/w: the width w = s/ρ certifies ρ, and
|θ̃ − V̂| ≤ w/2.

**Logs of other sizes: the width's ladder.** s depends on the log's rows, so a grid of width s/ρ
would differ between logs of 10 000 and 10 001 rows, and two roundings on different grids almost
never agree (measured: 0.58 of 400 pairs at a certified 0.1, before this). The raw width
w₀ = c·s/ρ is therefore itself rounded up, on a ladder shared through R: a second offset v,
uniform on [0, 1) from R, and the width w = 2^{h(k + v)} with k the least integer such that
w ≥ w₀, step h = ½ (a ladder of ratio √2). Two logs share the index k, and so the grid, unless a
ladder point falls between log₂ w₀ and log₂ w₀′: probability min(1, |log₂(w₀/w₀′)|/h) over v,
which is |log₂(N′/N)| where only the rows differ (s ∝ N^{−½}): 1.4·10⁻⁴ for 10 000 and 10 001
rows, 0.26 for two weeks of 10⁵ and 1.2·10⁵. Where they share k (v fixed), w ≥ max(w₀, w₀′), and
E[Δ_k²] = Var V̂_k + Var V̂′_k ≤ M²(1/N + 1/N′)/p_min ≤ max(s, s′)², so every bound below holds
with the larger of the two s. Rounding up costs width: w/w₀ is 2^{h(1 − v′)} for v′ uniform,
1.19 on average, at most √2. Hence, for logs of N and N′ rows,

    P(the decisions differ) ≤ ρ + min(1, |log₂(N′/N)|),

exactly ρ where N′ = N. Where the logs' least size is declared (``min_rows``: every log has at
least that many rows, checked), s is computed at min_rows, w = w₀ is shared, and the bound is ρ
for any two logs of at least min_rows rows, with no ladder. Cells and ladder indices are integers,
compared exactly (:attr:`Replicable.key`), and the reported value is clipped to [lo, hi] (the
truth lies there; clipping is a function of the cell, so it replicates as the cell does).

**The replicable selection.** Every V̂_k is rounded as above (its cell, an integer, compared exactly)
with one offset u from R on one grid of width w; the choice is the candidate, among those whose rounded value is the least, that comes first in a
random order π of the K candidates drawn from R. Two bounds on P(the choices differ), each for
every pair of logs, so their minimum holds too:

1. *The union.* The choice is a function of the rounded values and π, so the choices differ only
   where some candidate's rounding does: P ≤ Σ_k min(1, |Δ_k|/w) ≤ Σ_k |Δ_k|/w.
2. *The ranks.* Let m̂ = min_k V̂_k. The least rounded value's cell differs between the logs with
   probability min(1, |m̂ − m̂'|/w). Where it is the same, its upper edge θ is shared, θ is uniform on
   (m̂, m̂ + w] as u is on [0, 1), and the candidates in that cell are S = {k : V̂_k < θ} (every
   V̂_k ≥ m̂ > θ − w), S' likewise. The choices differ iff the π-first member of S ∪ S' lies in the
   symmetric difference S △ S'; π is independent of u and of the logs, so given them this has
   probability |S △ S'|/|S ∪ S'|. A k in S △ S' has θ in the interval J_k between V̂_k and V̂'_k, of
   length |Δ_k|, and above a_k = min(V̂_k, V̂'_k); then |S ∪ S'| ≥ #{j : a_j < θ} ≥ r_k, the rank of
   a_k among the a's (ties broken by index). So |S △ S'|/|S ∪ S'| ≤ Σ_k 1{θ ∈ J_k}/r_k, and
   averaging over θ's density 1/w, P ≤ (|m̂ − m̂'| + Σ_k |Δ_k|/r_k)/w.

Taking expectations over the two logs: bound 1 gives Σ_k E|Δ_k| ≤ K s. For bound 2,
|m̂ − m̂'| ≤ max_k |Δ_k| ≤ (Σ_k Δ_k²)^½, and by Cauchy–Schwarz, the ranks being 1..K in some order,
Σ_k |Δ_k|/r_k ≤ (Σ_k Δ_k²)^½ (H⁽²⁾_K)^½, H⁽²⁾_K the sum of r⁻² over r = 1, …, K (< π²/6);
with E(Σ_k Δ_k²)^½ ≤ (Σ_k E Δ_k²)^½ ≤ √K s, bound 2 gives √K (1 + (H⁽²⁾_K)^½) s. So

    P(choices differ) ≤ c_K s / w,   c_K = min(K, √K (1 + (H⁽²⁾_K)^½))

(c_K = K up to K = 4; c_5 = 4.94, c_8 = 6.32, c_16 = 9.0, c_100 = 22.8, growing as 2.28 √K), and
the width w ≥ c_K s/ρ (the ladder above) certifies ρ. The chosen candidate's estimate is below θ ≤ m̂ + w: within w of the least
estimate, its true value within w + 2·max_k |V̂_k − V_k| of the best's.

**The overlap** (``variance="overlap"``; ours). The variance bound above, M²/p_min, is the worst case
over policies; a candidate that mostly agrees with the logging policy has far smaller importance
weights. The step before it is exact: Var(w (c − b)) ≤ M² E_x[q(x)], q(x) = Σ_a π(a|x)²/μ(a|x), and
1 ≤ q ≤ Q = 1/p_min (Cauchy–Schwarz below, p_min above). Where the log records its logging
distribution, q is known on every row, so the K candidates' G(x) = Σ_k q_k(x) ∈ [K, KQ] has a mean
Ḡ on the log whose expectation γ bounds Σ_k Var V̂_k ≤ M²γ/N. Three steps make it a certificate:

1. *An upper bound.* G ≥ 0 with Var G ≤ KQγ, so Bernstein's inequality gives
   P(Ḡ ≤ (1 − t)γ) ≤ exp(−N t²γ/(2KQ(1 + t/3))) ≤ exp(−N t²/(2Q(1 + t/3))) (γ ≥ K), which t makes
   δ = ρ/1000 (:func:`overlap_charge`; a smaller δ costs t little, a larger one 2δ ln Q below). So Ĝ⁺ = Ḡ/(1 − t) ≥ γ but with probability δ a log.
2. *The width.* s̄ = M √(2Ĝ⁺/(K N)) replaces s (bound 1's Σ_k E|Δ_k| ≤ K s̄ and bound 2's
   (Σ_k E Δ_k²)^½ ≤ √K s̄ hold with γ in place of Ĝ⁺), and w₀ = c_K s̄/ρ_g is rounded up on the
   width's ladder (always, since it is measured).
3. *The ladder's charge.* Two logs' indices differ with probability at most |ln(Ḡ/Ḡ′)|/ln 2 (h = ½:
   w₀ ∝ Ĝ⁺^½) plus the rows' |log₂(N′/N)|. Where both Ḡ ≥ (1 − t)γ, |ln Ḡ − ln Ḡ′| ≤ |Ḡ − Ḡ′|/((1 − t)γ)
   and E|Ḡ − Ḡ′| ≤ (2 Var Ḡ)^½; elsewhere (probability 2δ) it is at most ln Q. G lies in [K, KQ], so
   (Bhatia & Davis 2000) Var G ≤ (γ − K)(KQ − γ) = γ²(g − 1)(Q − g)/g² with g = γ/K ∈ [1, Q], whose
   largest value over g (at g = 2Q/(Q + 1)) is γ²(Q − 1)²/(4Q): E|Ḡ − Ḡ′| ≤ γ (Q − 1)(2/N)^½/(2√Q).
   So the charge is [(Q − 1)/(2√Q)·(2/N)^½/(1 − t) + 2δ ln Q]/ln 2 — half what Var G ≤ KQγ gave.
   With δ = ρ/100 and that variance, as this module first had them, 2δ + charge was 0.063 of ρ = 0.1 at
   10⁵ rows with p_min = 0.02; it is now 0.026.

On the event both upper bounds hold and the indices agree, the width is at least the ladder point
above c_K s̄_true/ρ_g, a function of v alone, so the cells' bound ρ_g holds as before. In all,
P(decisions differ) ≤ ρ_g + 2δ + charge for logs of equal size. Where the sizes differ and
``min_rows`` is not declared, t and ρ_g differ too, so the raw widths' ratio has, besides (N′/N)^½
and the overlap's, ((1 − t′)/(1 − t))^½ and ρ_g/ρ_g′: the bound adds |log₂(N′/N)|,
|log₂((1 − t′)/(1 − t))| and 2|log₂(ρ_g′/ρ_g)| and the larger charge (:meth:`Replicable.rho_between`;
an independent review measured 0.356 against a first bound of 0.240 at 10⁵ and 1.1·10⁵ rows), and ρ_g = ρ − 2δ − charge is what the grid is given (``rho_cells``). The price is
ρ_g < ρ: at N = 10⁵ and p_min = 0.02, 2δ + charge = 0.026 of ρ = 0.1; at N = 10⁶ and p_min = 1/4,
0.0021. Where it would take more than three quarters of ρ, the overlap form is refused (use the worst
case, or more rows). It pays where the candidates agree with the logging policy: q ≈ 1.2 against
Q = 50 makes s̄ six times smaller; under uniform logging q = Q for every deterministic policy and it
cannot pay. Assumed besides (i)–(iv): the rows iid (a log recorded from a learning policy is not:
use the worst case there).

**Keeping the incumbent** (``incumbent=``: a candidate named or numbered, or ``"logging"``, the
logging policy itself, added as a candidate whose estimate is the log's mean cost — weights 1, so
its variance is at most M², within the bound). A team that already runs a policy keeps it when it
shares the least cell, and otherwise takes the first in R's order. Bound 1 holds as it is (the
choice is still a function of the rounded values, R's order and the named incumbent i). For bound
2, given a shared least cell: i in both S and S′ gives the same choice; i in exactly one of them
puts θ in J_i; i in neither leaves R's order on S, S′ as before, and i, being above θ, is not among
the a_j below it, so the ranks' argument holds. Hence P ≤ (|m̂ − m̂′| + |Δ_i| + Σ_k |Δ_k|/r_k)/w, and
with E|Δ_i| ≤ s the factor is c_K⁺ = min(K, √K (1 + (H⁽²⁾_K)^½) + 1) (:func:`incumbent_factor`:
K up to 6, c₈⁺ = 7.32): a little more width for a rule a team can act on. In the overlap form
(below), s̄ is the candidates' root mean square and the incumbent's own E|Δ_i| is at most √K s̄, so
there the factor is min(K, √K (2 + (H⁽²⁾_K)^½)) (an independent review's catch).

**The price** is w: at K = 8, uniform logging over 4 arms (p_min = 1/4), costs in [0, 1] (M = ½)
and N = 10⁶ rows, s = 0.0014 and w₀ = 0.089 at ρ = 0.1 (the plain IPS and the union bound, as this
module first had them, gave 0.23); the ladder makes w 0.089–0.126. Where the other candidates are farther than w from the best, the
choice is near-best; where one lies within w, it may be chosen (docs/offpolicy.md measures both).
What is the literature's: IPS (Horvitz & Thompson 1952), the baseline as a constant cost model in
the doubly robust estimator (Dudík, Langford & Li 2011), rounding on a random grid for
replicability (Impagliazzo, Lei, Pitassi & Sorrell, STOC 2022), which also rounds a statistic's
scale on a random grid; the bounds above, the width's ladder and their constants are ours. ``tests/experiments/test_offpolicy.py`` attacks both certificates and reports
bound ÷ the worst measured.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Mapping, Sequence

import attrs
import numpy as np

from replify.base.randomness import Seed, seed_sequence
from replify.components.grid import bernstein_lower, ladder_point
from replify.errors import InvalidArgumentError
from replify.offpolicy.log import Log, policy_probabilities, unlogged_arms
from replify.offpolicy.policies import probabilities_on


@attrs.frozen
class Replicable:
    """A rounded estimate or a choice: ``value`` (the rounded estimate, clipped to the cost range;
    for a selection, every candidate's, (K,)), ``chosen`` (a selection's index, else None; its
    ``name`` where the candidates were named), the grid ``width``, the certificate's ``rho_bound``
    (for logs of equal size, or of at least ``min_rows`` rows: :meth:`rho_between` gives it for
    logs of other sizes) and whether it is ``certified`` (else ``note`` says why), the stability
    constant ``s`` and the ``min_propensity`` and ``cost_range`` (lo, hi) it used; a selection's
    ``factor`` is c_K (module docstring; 1 for a single value); ``cells`` and ``ladder``, the grid's
    cell of each estimate and the width's index on its ladder (integers: :attr:`key` compares two
    decisions exactly); ``rows`` the log's, ``min_rows`` the declared least size (None: the width's
    ladder, module docstring); ``estimates`` and ``true_values`` as below."""

    value: Any
    chosen: int | None
    width: float
    rho_bound: float
    certified: bool
    s: float
    min_propensity: float
    cost_range: tuple[float, float]
    factor: float = 1.0
    note: str | None = None
    #: the estimates before rounding (a selection: (K,)), and the candidates' true values on the
    #: log's contexts where the log is simulated (else None): what a decision's error is measured on
    estimates: Any = None
    true_values: Any = None
    #: a selection: how many candidates shared the least cell (more than 1: R's order chose among them)
    tied: int = 1
    #: per candidate, the arms it plays that the log never shows (None where there are none)
    unlogged: Any = None
    cells: Any = None
    ladder: int | None = None
    rows: int = 0
    min_rows: int | None = None
    names: tuple[str, ...] | None = None
    #: a selection's incumbent (its index), kept where it shares the least cell; None: R's order
    incumbent: int | None = None
    #: what set the variance bound ("worst-case" or "overlap"), and the share of ρ left to the grid's
    #: cells (ρ less, in the overlap form, what agreeing on the overlap costs)
    variance: str = "worst-case"
    rho_cells: float | None = None

    @property
    def name(self) -> str | None:
        """The chosen candidate's name, where the candidates were given names (a mapping)."""
        return None if self.chosen is None or self.names is None else self.names[self.chosen]

    @property
    def key(self) -> Any:
        """What two decisions are compared on, exactly: a selection's choice; a value's grid (its
        ladder index, or the declared ``min_rows``) and cell, integers."""
        if self.chosen is not None:
            return self.chosen
        return (self.ladder, self.min_rows, int(self.cells))

    def rho_between(self, rows: int) -> float:
        """The certificate's bound on P(this decision and one from an independent log of ``rows``
        rows differ), R shared: ρ + min(1, |log₂(rows/N)|) on the width's ladder, ρ where the least
        size ``min_rows`` was declared and both logs have at least as many rows (module docstring)."""
        if isinstance(rows, (bool, np.bool_)) or not isinstance(rows, numbers.Integral) or rows < 1:
            raise InvalidArgumentError(f"rows must be an integer >= 1 (the other log's rows); got {rows!r}")
        if self.min_rows is not None:
            return self.rho_bound if rows >= self.min_rows else 1.0
        extra = 0.0
        if self.variance == "overlap" and rows != self.rows:
            # the overlap form's t and rho_g depend on N too (module docstring, "The overlap"): the two raw
            # widths differ by (1 - t')/(1 - t) under the root and rho_g'/rho_g besides the rows and the overlap
            mine, other = (overlap_charge(r, self.min_propensity, self.rho_bound) for r in (self.rows, rows))
            grid = [self.rho_bound - 2.0 * d - c for d, _, c in (mine, other)]
            if other[1] >= 1.0 or grid[1] <= 0.0:
                return 1.0
            extra = max(0.0, other[2] - mine[2]) + abs(math.log2((1.0 - other[1]) / (1.0 - mine[1]))) + \
                2.0 * abs(math.log2(grid[1] / grid[0]))
        return min(1.0, self.rho_bound + extra + min(1.0, abs(math.log2(rows / self.rows))))

    @property
    def certificate(self) -> str:
        """What the certificate says, in one line, or why there is none."""
        if not self.certified:
            return self.note or "measured, not certified"
        form = ""
        if self.variance == "overlap" and self.rho_cells is not None:
            form = f" (the overlap form: the grid given {self.rho_cells:.3g} of it, the rest for agreeing on the overlap)"
        return self._sizes() + form

    def _sizes(self) -> str:
        """The certificate's statement about the logs' sizes."""
        if self.min_rows is not None:
            return (f"certified: rho <= {self.rho_bound:g} for two logs of at least {self.min_rows} rows "
                    f"(this one has {self.rows})")
        return (f"certified: rho <= {self.rho_bound:g} for two logs of {self.rows} rows; of N and N' rows, "
                f"rho + |log2(N'/N)| (declare the logs' least size, min_rows= or --min-rows, for logs whose sizes differ)")

    @property
    def caveat(self) -> str | None:
        """What a reader of the decision should know beside the certificate: a grid wider than the
        cost range (too few rows for this ρ: the rounded values say little, and a choice is R's,
        not the data's), a choice made by R's order among tied candidates; None when neither."""
        said = []
        if self.width >= self.cost_range[1] - self.cost_range[0]:
            said.append(f"the grid (width {self.width:.3g}) is wider than the cost range {list(self.cost_range)}: too few "
                        "rows for this rho, the rounded values say little and a choice is made by R more than by the "
                        "data (the width falls as 1/sqrt(rows))")
        if self.tied > 1:
            kept = self.incumbent is not None and self.chosen == self.incumbent
            said.append(f"{self.tied} candidates share the least cell: " + ("the incumbent was kept" if kept else
                                                                           "R's order chose among them"))
        for k, why in enumerate(self.unlogged or ()):
            if why:
                who = "the policy" if self.chosen is None else f"candidate {self.names[k] if self.names else k}"
                said.append(f"{who}: {why} (the baseline stands in for it)")
        return "; ".join(said) or None


def selection_factor(k: int) -> float:
    """c_K = min(K, √K (1 + √H)), H the sum of r⁻² over r = 1, …, K: the price of choosing among K
    candidates, in units of s/ρ (module docstring)."""
    h2 = float(np.sum(1.0 / np.arange(1, k + 1, dtype=np.float64) ** 2))
    return float(min(k, math.sqrt(k) * (1.0 + math.sqrt(h2))))


def incumbent_factor(k: int, *, overlap: bool = False) -> float:
    """c_K⁺ = min(K, √K (1 + √H) + 1): the price of choosing among K candidates while keeping an
    incumbent that shares the least cell (module docstring, "Keeping the incumbent"); in the overlap
    form, whose s̄ is the candidates' root mean square, the incumbent's E|Δ_i| is at most √K s̄, and
    the factor is min(K, √K (2 + √H))."""
    h2 = float(np.sum(1.0 / np.arange(1, k + 1, dtype=np.float64) ** 2))
    return float(min(k, math.sqrt(k) * (1.0 + math.sqrt(h2)) + (math.sqrt(k) if overlap else 1.0)))


#: The incumbent ``"logging"``: the logging policy itself, a candidate whose estimate is the log's
#: mean cost (every weight 1), named "logging" where no candidate has that name.
LOGGING = "logging"


class _LoggingPolicy:
    """The logging policy as a candidate (never a user's object: the string "logging" given as a
    policy is refused as any non-function is)."""


_LOGGING_POLICY = _LoggingPolicy()


#: The sizes of the small groups of rows, spread over the log, that a candidate is shown alone
#: besides the two halves: a statistic of the batch (a mean, a median, a standardisation) is nearly
#: the same on two halves of iid rows, but not on one row or a few.
PROBE_GROUPS = (1, 1, 2, 3, 5, 8)


def _check_rowwise(policy: Callable[[np.ndarray], Any], log: Log, pi: np.ndarray) -> None:
    """Refuse a policy whose probabilities on some row change when it is shown other rows with it:
    the two halves of the log apart, then small groups of rows spread over it (``PROBE_GROUPS``). A
    policy given as an array of its choices on the log is refused: nothing shows that it was fixed
    before the log was seen."""
    if isinstance(policy, np.ndarray):
        raise InvalidArgumentError(
            f"policy: given as an array of its choices on {log.name}'s rows; a certified decision needs the policy "
            "as a function of the contexts, fixed before the log is seen (an array could have been fitted on this "
            "log's costs, which voids the certificate): pass the function that computed it")
    stored = log.stored
    groups = [np.arange(stored // 2), np.arange(stored // 2, stored)]
    spread = np.linspace(0, stored - 1, sum(PROBE_GROUPS)).round().astype(np.int64)
    groups += np.split(spread, np.cumsum(PROBE_GROUPS)[:-1])
    for rows in groups:
        rows = np.unique(rows)
        if rows.size == 0 or rows.size == stored:
            continue
        try:
            apart = probabilities_on(policy, log.contexts[rows], log.n)
        except Exception as exc:  # noqa: BLE001  (the user's policy, shown fewer rows: said, with its error)
            raise InvalidArgumentError(
                f"policy: shown {rows.size} row(s) of {log.name} alone it raised {type(exc).__name__}: {exc}; the "
                "certificate needs a policy that decides each row from that row's contexts alone, on any "
                "number of rows") from exc
        gap = np.abs(apart - pi[rows]).max(axis=1)
        if gap.max() > 1e-12:
            row = int(rows[np.argmax(gap)])
            raise InvalidArgumentError(
                f"policy: its probabilities on row {row} of {log.name} change when the other rows change (it was "
                f"shown {rows.size} row(s) alone); the certificate needs a policy that decides each row from that "
                "row's contexts alone, fixed before the log is seen (not fitted on it)")


def _estimate(log: Log, policy: Any, baseline: float) -> tuple[float, float | None, str | None, float | None]:
    """d = mean of w (c − b), the estimate less the baseline b (module docstring: rounding d, not
    b + d, keeps the grid's offset where b is large against w); and the policy's true value where
    the log is simulated (else None); the arms it plays that the log never shows; and its overlap
    with the logging policy, the mean over the rows of q(x) = Σ_a π(a|x)²/μ(a|x) where the log
    records its logging distribution (else None; module docstring, "The overlap"). The policy must
    decide each row from that row's contexts: it is checked on the two halves of the rows apart and
    on a few rows alone."""
    if policy is _LOGGING_POLICY:  # the logging policy: on-policy, every weight 1 (and q = Σ μ²/μ = 1)
        rows = np.arange(log.stored)
        truth = None if log.means is None else log.mean(log.means[rows, log.actions])
        return log.mean(log.costs - baseline), truth, None, 1.0
    pi = policy_probabilities(policy, log)
    _check_rowwise(policy, log, pi)
    with np.errstate(over="ignore"):  # an overflow is refused by the caller, naming the cost range
        d = log.mean(pi[np.arange(log.stored), log.actions] / log.propensities * (log.costs - baseline))
    overlap = None
    if log.distribution is not None:  # q(x) >= 1 (Cauchy–Schwarz), <= 1/p_min
        overlap = log.mean((pi * pi / np.maximum(log.distribution, np.finfo(float).tiny)).sum(axis=1))
    return (d, None if log.means is None else log.mean((pi * log.means).sum(axis=1)), unlogged_arms(log, pi),
            overlap)


@attrs.frozen
class Summary:
    """What a replicable decision reads of a log beside its candidates' estimates: its ``name``, the
    interactions ``rows``, the declared ``cost_range`` and ``min_propensity``, how its propensities
    were estimated (``propensity_model``, None: logged), its least propensity, its logging
    distribution's least entry (None where it records none), its least and greatest cost, and the
    first cost outside a range (:meth:`outside`; a stream checks its chunks as it reads them).
    :func:`summary` takes it from a log in memory; :mod:`replify.offpolicy.stream` adds it up."""

    name: str
    rows: int
    cost_range: tuple[float, float] | None
    min_propensity: float | None
    propensity_model: str | None
    propensity_min: float
    distribution_min: float | None
    cost_lo: float
    cost_hi: float
    costs: np.ndarray | None = None  # a log in memory: its costs, for the row named by :meth:`outside`

    def outside(self, lo: float, hi: float) -> tuple[int, float] | None:
        """The first row whose cost lies outside [lo, hi], and its cost (None: none)."""
        if self.costs is None:
            return None
        out = (self.costs < lo) | (self.costs > hi)
        if not out.any():
            return None
        i = int(np.argmax(out))
        return i, float(self.costs[i])


def summary(log: Log) -> Summary:
    """A log's :class:`Summary`."""
    return Summary(name=log.name, rows=log.rows, cost_range=log.cost_range, min_propensity=log.min_propensity,
                   propensity_model=log.propensity_model, propensity_min=float(log.propensities.min()),
                   distribution_min=None if log.distribution is None else float(log.distribution.min()),
                   cost_lo=float(log.costs.min()), cost_hi=float(log.costs.max()), costs=log.costs)


def _cost_range(log: Log | Summary, cost_bound: Any) -> tuple[tuple[float, float], bool]:
    """(lo, hi) from ``cost_bound`` (M, a pair, or None: the log's declared range), every cost of
    the log checked to lie in it, and whether it was declared (else the log's own least and
    greatest costs are used, and nothing is certified)."""
    log = summary(log) if isinstance(log, Log) else log
    if cost_bound is None:
        if log.cost_range is None:
            lo, hi = log.cost_lo, log.cost_hi
            return (lo, hi if hi > lo else lo + 1.0), False
        cost_bound = log.cost_range
    if isinstance(cost_bound, numbers.Real) and not isinstance(cost_bound, (bool, np.bool_)):
        if not 0 < cost_bound < math.inf:
            raise InvalidArgumentError(f"cost_bound must be a finite number > 0 (costs in [-M, M]) or a pair (lo, hi); "
                                       f"got {cost_bound!r}")
        lo, hi = -float(cost_bound), float(cost_bound)
    else:
        try:
            lo, hi = (float(v) for v in cost_bound)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"cost_bound must be a number M (costs in [-M, M]) or a pair (lo, hi); "
                                       f"got {cost_bound!r:.80}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidArgumentError(f"cost_bound must be a pair (lo, hi) of finite numbers with lo < hi; got {cost_bound!r}")
    declared = log.cost_range
    if declared is not None and (lo > declared[0] or hi < declared[1]):  # a range the log itself says is too narrow
        raise InvalidArgumentError(f"cost_bound=[{lo:g}, {hi:g}], but {log.name} declares its costs lie in "
                                   f"[{declared[0]:g}, {declared[1]:g}]: a bound narrower than the log's own range "
                                   "contradicts it (give one that contains it, or none)")
    outside = log.outside(lo, hi)
    if outside is not None:
        i, cost = outside
        raise InvalidArgumentError(f"cost_bound=[{lo:g}, {hi:g}]: row {i} of {log.name} costs {cost!r}, "
                                   f"outside it; give the range the costs respect")
    return (lo, hi), True


def _stability(log: Summary, rho: Any, min_propensity: Any, cost_bound: Any,
               min_rows: Any) -> tuple[float, float, bool, str | None, tuple[float, float]]:
    """s (at the log's rows, or at the declared ``min_rows``), the p_min used, whether certified, why
    not, and the cost range (module docstring)."""
    if isinstance(rho, (bool, np.bool_)) or not (isinstance(rho, numbers.Real) and 0.0 < rho < 1.0):
        raise InvalidArgumentError(f"rho must be a number in (0, 1); got {rho!r}")
    if min_rows is not None:
        if isinstance(min_rows, (bool, np.bool_)) or not isinstance(min_rows, numbers.Integral) or min_rows < 1:
            raise InvalidArgumentError(f"min_rows must be an integer >= 1 (the least number of rows of any log the "
                                       f"decision is compared with); got {min_rows!r}")
        if log.rows < min_rows:
            raise InvalidArgumentError(f"min_rows={int(min_rows)}, but {log.name} has {log.rows} rows: a log must have "
                                       "at least the declared least size")
    (lo, hi), ranged = _cost_range(log, cost_bound)
    seen = log.propensity_min
    notes = []
    if log.propensity_model is not None:  # an estimate bounds no propensity: nothing here is certified
        notes.append(f"the logging policy's own propensities ({log.name}'s were {log.propensity_model})")
    if min_propensity is None:
        min_propensity = log.min_propensity
    if min_propensity is None:
        p = seen
        notes.append("the logging policy's smallest propensity, declared (min_propensity=); the log's own smallest "
                     "was used")
    else:
        if isinstance(min_propensity, (bool, np.bool_)) or not (isinstance(min_propensity, numbers.Real)
                                                                and 0.0 < min_propensity <= 1.0):
            raise InvalidArgumentError(f"min_propensity must be in (0, 1]; got {min_propensity!r}")
        if log.distribution_min is not None:  # the whole logging distribution, where the log records it
            seen = min(seen, log.distribution_min)
        if log.min_propensity is not None:  # what the log itself declares
            seen = min(seen, float(log.min_propensity))
        if seen < min_propensity * (1 - 1e-12):
            raise InvalidArgumentError(f"min_propensity={min_propensity:g}, but {log.name} logs a probability of {seen:g}: "
                                       "the logging policy's smallest probability of an arm is below what was declared")
        p = float(min_propensity)
    if not ranged:
        notes.append("the range of every cost, declared (cost_bound=, or a log's cost_range); the log's own least and "
                     "greatest costs were used")
    note = None if not notes else "measured, not certified: the certificate needs " + "; and ".join(notes)
    rows = log.rows if min_rows is None else int(min_rows)
    return _half_range(lo, hi) * math.sqrt(2.0 / (rows * float(p))), float(p), not notes, note, (lo, hi)


def _baseline(lo: float, hi: float) -> float:
    """b, the middle of [lo, hi] as float64 computes it (lo/2 + hi/2: a range near ±1.8e308 has no
    finite sum)."""
    return lo / 2.0 + hi / 2.0


def _half_range(lo: float, hi: float) -> float:
    """M, the largest |c − b| over [lo, hi] with b as computed: on a range a few ulps wide b rounds off
    the middle (onto lo, for [1, 1 + 2⁻⁵²]), and (hi − lo)/2 would understate it by half; rounded up
    by two ulps."""
    b = _baseline(lo, hi)
    return float(np.nextafter(np.nextafter(max(hi - b, b - lo), np.inf), np.inf))


def _width(raw: float, v: float, ladder: bool) -> tuple[float, int | None]:
    """The grid's width and its ladder index: ``raw`` rounded up to the ladder 2^{h(k + v)} (v from
    R), or ``raw`` itself where the least size was declared (module docstring)."""
    return ladder_point(raw, v) if ladder else (raw, None)


def _finite(log: Summary, what: str, value: Any, lo: float, hi: float) -> None:
    """Refuse an estimate or a width that overflowed float64 (costs near ±1.8e308 over small
    propensities), rather than return infinity marked certified."""
    if not np.all(np.isfinite(value)):
        raise InvalidArgumentError(f"cost_bound=[{lo:g}, {hi:g}]: the {what} on {log.name} overflows float64 (costs "
                                   f"this large over propensities down to {log.propensity_min:g}); rescale "
                                   "the costs (the decision is the same in any unit)")


def overlap_charge(rows: int, min_propensity: float, rho: float) -> tuple[float, float, float]:
    """The overlap form's price (module docstring, "The overlap"): δ = ρ/1000, t with
    exp(−N t²/(2Q(1 + t/3))) = δ (Q = 1/p_min), and the ladder's charge
    [(Q − 1)/(2√Q)·√(2/N)/(1 − t) + 2δ ln Q]/ln 2 (Var G by Bhatia & Davis); returns (δ, t, charge)."""
    q, delta = 1.0 / min_propensity, rho / 1000.0
    t = bernstein_lower(rows, q, delta)
    charge = ((q - 1.0) / (2.0 * math.sqrt(q)) * math.sqrt(2.0 / rows) / (1.0 - t) + 2.0 * delta * math.log(q)) / math.log(2.0) if t < 1.0 else math.inf
    return delta, t, charge


#: What sets a decision's variance bound: the worst case over policies (M²/p_min) or the candidates'
#: overlap with the logging policy, measured on the log and rounded (module docstring).
VARIANCES = ("worst-case", "overlap")


def _rounded(log: Log | Summary, rho: Any, seed: Seed, min_propensity: Any, cost_bound: Any, min_rows: Any,
             policies: Sequence[Any], factor: float, variance: Any = "worst-case",
             estimates: Callable[[float], Any] | None = None) -> tuple[dict[str, Any], np.ndarray]:
    """The candidates' estimates rounded on one grid: its width (c·s/ρ on the ladder), offset u and
    R's order of the candidates, the cells (integers) and the clipped values (module docstring).
    ``log`` is a log in memory, or a stream's :class:`Summary` with ``estimates(b)``, every
    candidate's (d, true value, unlogged arms, overlap) about the baseline b."""
    if variance not in VARIANCES:
        raise InvalidArgumentError(f"variance must be one of {VARIANCES}; got {variance!r}")
    if isinstance(log, Log):
        whole = log
        log = summary(whole)
        estimates = lambda b: [_estimate(whole, pol, b) for pol in policies]  # noqa: E731
    s, p, certified, note, (lo, hi) = _stability(log, rho, min_propensity, cost_bound, min_rows)
    rho = float(rho)  # a numpy float32 would carry its precision into the width
    rng = np.random.default_rng(seed_sequence(seed))
    u, order, v = float(rng.random()), rng.permutation(len(policies)), float(rng.random())
    b = _baseline(lo, hi)
    d, truth, unlogged, overlap = zip(*estimates(b))
    rho_cells, ladder_on = rho, min_rows is None
    if variance == "overlap":
        if log.distribution_min is None:
            raise InvalidArgumentError(f"variance='overlap' needs the logging policy's whole distribution on every row "
                                       f"(Log.distribution), which {log.name} does not record; use "
                                       "variance='worst-case'")
        n_rows = log.rows if min_rows is None else int(min_rows)
        delta, t, charge = overlap_charge(n_rows, p, rho)
        rho_cells = rho - 2.0 * delta - charge
        if t >= 0.5 or rho_cells < rho / 4.0:
            raise InvalidArgumentError(f"variance='overlap': {n_rows} rows leave too little of rho={rho:g} for the grid "
                                       f"(agreeing on the overlap costs {2 * delta + charge:.3g}; it falls as "
                                       f"1/sqrt(rows x min_propensity)); use variance='worst-case' or more rows")
        k = len(policies)
        upper = float(np.sum(overlap)) / (1.0 - t)  # >= the candidates' summed E q, but with probability delta
        s = _half_range(lo, hi) * math.sqrt(2.0 * upper / (k * n_rows))
        ladder_on = True  # the overlap is measured: its rounding on the ladder is what both runs agree on
    raw = factor * s / rho_cells
    _finite(log, "grid's width", raw * math.sqrt(2.0), lo, hi)  # the ladder widens it by up to √2
    if not raw > 0.0:
        raise InvalidArgumentError(f"cost_bound=[{lo:g}, {hi:g}]: the grid's width underflows float64 (a cost range "
                                   f"this narrow); rescale the costs (the decision is the same in any unit)")
    width, ladder = _width(raw, v, ladder_on)
    d = np.array(d)
    _finite(log, "estimate", d, lo, hi)
    scaled = d / width - u
    if not np.all(np.abs(scaled) < 2.0**62):  # an int64 cell: past it the cast wraps (a declared p_min of 1e-60)
        raise InvalidArgumentError(f"{log.name}: an estimate lies {float(np.abs(scaled).max()):.3g} grid cells from the "
                                   "baseline, more than an integer cell can hold; the declared min_propensity or cost "
                                   "range is far from what the log shows")
    cells = np.floor(scaled).astype(np.int64)  # integers: compared exactly
    values = np.clip(b + width * (cells + u + 0.5), lo, hi)  # the truth lies in [lo, hi]
    return dict(value=values, width=width, rho_bound=rho, certified=certified, s=s, min_propensity=p,
                cost_range=(lo, hi), note=note, estimates=b + d, true_values=None if truth[0] is None else np.array(truth),
                cells=cells, ladder=ladder, rows=log.rows, min_rows=None if min_rows is None else int(min_rows),
                factor=factor, unlogged=unlogged if any(unlogged) else None, variance=variance,
                rho_cells=rho_cells), order


def replicable_value(log: Log, policy: Callable[[np.ndarray], Any], *, rho: float | np.floating, seed: Seed,
                     min_propensity: float | np.floating | None = None, cost_bound: Any = None,
                     min_rows: Any = None, variance: str = "worst-case") -> Replicable:
    """The policy's estimated cost (IPS with the baseline at the middle of the cost range) rounded
    on a grid of width at least s/ρ with an offset from R (``seed``): two independent logs of N and N′
    rows report the same number with probability ≥ 1 − ρ − |log₂(N′/N)| (≥ 1 − ρ for logs of at
    least ``min_rows`` rows, where declared; module docstring). ``cost_bound``: M (costs in
    [−M, M]) or (lo, hi); by default the log's declared range (none declared: the log's own range,
    and the result is measured, not certified). The value is clipped to the cost range.
    ``variance="overlap"``: the width set by the policy's overlap with the logging policy, measured
    on the log (it must record its logging distribution) and rounded replicably, its price charged
    in ρ (module docstring, "The overlap")."""
    got, _ = _rounded(log, rho, seed, min_propensity, cost_bound, min_rows, [policy], 1.0, variance)
    return single(got)


def single(got: dict[str, Any]) -> Replicable:
    """One policy's rounded value (:func:`_rounded`'s, with one candidate) as a :class:`Replicable`."""
    got.update(value=float(got["value"][0]), cells=int(got["cells"][0]), estimates=float(got["estimates"][0]),
               true_values=None if got["true_values"] is None else float(got["true_values"][0]))
    return Replicable(chosen=None, **got)


def select(log: Log, policies: Sequence[Any] | Mapping[Any, Any], *,
           rho: float | np.floating, seed: Seed, min_propensity: float | np.floating | None = None,
           cost_bound: Any = None, min_rows: Any = None, incumbent: Any = None,
           variance: str = "worst-case") -> Replicable:
    """The candidate of least rounded estimate (ties: the incumbent where one is named and shares the
    least cell, else the first in a random order from R), the
    estimates (IPS with the baseline at the middle of the cost range) rounded with one offset from
    R on a grid of width at least c_K·s/ρ: two independent logs choose alike with probability
    ≥ 1 − ρ (for logs of N and N′ rows, ≥ 1 − ρ − |log₂(N′/N)| unless ``min_rows`` is declared;
    module docstring). ``policies``: a sequence, or a mapping of names to policies (the result's
    ``name`` is then the chosen one's). ``cost_bound`` as in :func:`replicable_value`. ``incumbent``:
    a candidate's index or name (with a mapping, its own key), or ``"logging"`` (the logging policy,
    added as the last candidate, named "logging"; where a candidate is named "logging", that
    candidate), kept where it shares the least cell (module docstring, "Keeping the
    incumbent": the width's factor is then c_K⁺). ``variance`` as in :func:`replicable_value`."""
    names, policies, incumbent, factor = candidates(policies, incumbent, variance)
    got, order = _rounded(log, rho, seed, min_propensity, cost_bound, min_rows, policies, factor, variance)
    return chosen(got, order, names, incumbent)


def chosen(got: dict[str, Any], order: np.ndarray, names: tuple[str, ...] | None, incumbent: int | None) -> Replicable:
    """The choice among rounded estimates (:func:`_rounded`'s): the least cell, the incumbent where it
    shares it, else the first in R's order."""
    cells = got["cells"]
    lowest = np.flatnonzero(cells == cells.min())
    pick = incumbent if incumbent is not None and incumbent in lowest else int(order[np.isin(order, lowest)][0])
    return Replicable(chosen=pick, tied=int(lowest.size), names=names, incumbent=incumbent, **got)


def candidates(policies: Sequence[Any] | Mapping[Any, Any], incumbent: Any,
               variance: str) -> tuple[tuple[str, ...] | None, list[Any], int | None, float]:
    """:func:`select`'s candidates checked: their names (None for a sequence), the policies (the
    logging policy appended where it is the incumbent), the incumbent's index, and the width's
    factor c_K (c_K⁺ with an incumbent)."""
    names = keys = None
    if isinstance(policies, Mapping):
        keys = list(policies)
        names = tuple(str(k) for k in keys)
        policies = list(policies.values())
        if incumbent is not None and not isinstance(incumbent, str) and incumbent in keys:
            incumbent = names[keys.index(incumbent)]  # a mapping's own key (an int, say): its name, not an index
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence) or len(policies) < 2:
        raise InvalidArgumentError(f"policies must be a sequence (or a mapping of names) of at least 2 candidate "
                                   f"policies; got {policies!r:.80}")
    policies = list(policies)
    for k, pol in enumerate(policies):
        if not callable(pol):
            raise InvalidArgumentError(f"policies: candidate {names[k] if names else k} is {pol!r:.60} "
                                       f"({type(pol).__name__}); expected a function of the contexts (the logging "
                                       "policy itself is incumbent='logging')")
    if isinstance(incumbent, str) and incumbent == LOGGING and (names is None or LOGGING not in names):
        names = (names or tuple(str(k) for k in range(len(policies)))) + (LOGGING,)
        policies.append(_LOGGING_POLICY)
        incumbent = len(policies) - 1
    elif isinstance(incumbent, str):
        if names is None or incumbent not in names:
            raise InvalidArgumentError(f"incumbent must be a candidate's index, a name of the mapping of candidates, or "
                                       f"'logging' (the logging policy); got {incumbent!r}"
                                       + ("" if names is None else f" (the names: {list(names)})"))
        incumbent = names.index(incumbent)
    elif incumbent is not None:
        if isinstance(incumbent, (bool, np.bool_)) or not isinstance(incumbent, numbers.Integral) \
                or not 0 <= incumbent < len(policies):
            raise InvalidArgumentError(f"incumbent must be a candidate's index in [0, {len(policies)}), a name, or "
                                       f"'logging'; got {incumbent!r}")
        incumbent = int(incumbent)
    k = len(policies)
    factor = selection_factor(k) if incumbent is None else incumbent_factor(k, overlap=variance == "overlap")
    return names, policies, incumbent, factor

