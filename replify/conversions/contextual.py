"""The general conversion for contextual bandits (ours): ``replify.wrap`` on a contextual learner
returns a :class:`ReplicableContextual`, iid ρ-replicable with a certificate (docs/contextual.md,
"A contextual learner's model made replicable").

**What it does.** The wrapper explores on a schedule both runs share and, phase by phase, lets
the user's learner decide every committed step on what it was fed. At each phase boundary it fits
an estimate of the learner's *model* on the explored samples and rounds it on a random grid drawn
from R (:mod:`replify.components.rounded_ridge`: the schedule, the estimate and the rounding). The
model is linear in the features — ``"shared"`` (one θ over the arms' features, as a textbook
LinUCB) or ``"disjoint"`` (one θ per arm, as Li et al.'s disjoint LinUCB) — taken from the
learner's ``model`` attribute where it names one, else from ``wrap(..., model=)``, else shared. The
estimate is the wrapper's own ridge fit: no learner's estimator can be certified without a
statement of its stability (a learner could return any function of its data), so the wrapper
certifies what it *feeds* the learner, and the learner decides. Exploration is a round robin over
the arms from the start of each exploring stretch: on fixed features a stretch is one round robin,
which the engine's block-sum path plays without a per-step draw (:meth:`ReplicableContextual.next_cycle`),
and on contexts of finite support (a bootstrapped data set) a stretch is a round robin or the
learner's arm on each of the support's rows, which the engine's finite-support path draws as
multinomial counts (:meth:`ReplicableContextual.next_stretch`): so horizons of 10⁸–10¹⁰ take
seconds.

**The learner decides** (:class:`FedLearner`). At decision k the learner is built afresh from its
factory with an ``rng`` drawn from R, and fed ``rows`` pseudo-rows (``FEED_PER_DIM`` = 1 024 per
dimension of the estimate, at most ``FEED_MAX`` = 16 384 and at most the N_k explored samples the
estimate read; ``wrap(..., feed_rows=)`` sets it): contexts drawn from R, every arm's
features uniform on the sphere of radius L, and as each arm's cost the rounded estimate's
prediction ⟨x_a, θ̃_k⟩ (⟨x_a, θ̃_{k,a}⟩ for the disjoint model), without noise, clipped to the costs the
learner declares it accepts (its ``cost_range``, where it declares one). It plays them as
it plays any step — ``act`` on the context, ``update`` with the arm it chose — so a linear learner
learns θ̃_k in its own way (optimism, sampling, greed; its confidence is that of ``rows``
noiseless rows), and any other learner learns whatever it learns from them. It is then frozen: every committed
step asks a fresh copy of the frozen state whose ``rng`` is that step's own from R (so nothing it
sees on committed steps moves what it plays, and a learner that draws at every act, as LinTS does,
gets fresh draws at every step, exact in law). The feed is a function of θ̃_k and R alone. Hence,
for **any learner deterministic given its rng and what it is fed**, two runs whose rounded
estimates agree feed it alike, and its committed policy — the map from a step's context to an arm,
step by step — is the same in both. Checked, refused with a ``LearnerProtocolError`` naming the
learner: at the first decision a twin built from the same seed and fed the same rows must play
them alike (the first ``TWIN_ROWS`` = 1 024); at every decision the frozen learner's act on ``PROBES`` contexts from R, asked
twice of copies with the same rng, must agree; and neither the feed nor those acts may touch numpy's
or Python's global generators. Checks are not a proof: a learner that reads the clock only on some
contexts, or whose act depends on ``hash()`` of strings (which differs between processes under
``PYTHONHASHSEED``) or on ``id()``, is outside the certificate and may pass them. ``evaluate``
compares two runs by what the learner was fed (θ̃, :meth:`ReplicableContextual.policy`); their play
follows from the assumption. What it costs: the feed (an act and an update call per row, ``rows`` per decision, and the twin's
at the first), a copy of the learner per committed act, and a learner whose ``act`` draws from its rng
plays one step at a time on the fast paths (a stretch of one step, where any act of it drew).

**The certificate.** Assume (i) the contexts and costs are iid over time: each step's (n, d)
context and its costs drawn from one law, independently of the other steps; (ii) every feature
vector has norm at most L (``feature_bound``, default 1; a larger one is refused); (iii) every cost
has second moment at most M² given its context, E[c² | x] ≤ M² (``cost_scale``, default 1; costs
in [−1, 1] qualify, as do Gaussian costs with |mean|² + σ² ≤ M²). No linear model is assumed for
replicability.

Given R the exploring steps and arms are fixed and shared, and the N exploration samples (z_j, c_j)
(z the played arm's features, or its block features e_a ⊗ x_a for the disjoint model: the same
norm) are independent. With A = λ₀N·I + Σ z zᵀ, θ̂ = A⁻¹ Σ c z, and sample j replaced by an
independent copy (z', c'), A'(θ̂' − θ̂) = z_j r_j − z' r' with residuals r = ⟨z, θ̂⟩ − c at the old
estimate, and A' ⪰ λ₀N·I, so ‖θ̂' − θ̂‖² ≤ (2L²/(λ₀N)²)(r_j² + r'²). The ridge objective at θ̂ is at
most its value at 0: Σ r_j² + λ₀N‖θ̂‖² ≤ Σ c_j², hence E Σ_j r_j² ≤ N M², E‖θ̂‖² ≤ M²/λ₀ and
E r'² ≤ 2L² E‖θ̂‖² + 2 E c'² ≤ 2M²(1 + L²/λ₀). Efron–Stein, coordinate by coordinate, summed:

    E‖θ̂ − Eθ̂‖² ≤ ½ Σ_j E‖θ̂ − θ̂^{(j)}‖² ≤ L²M²(3 + 2L²/λ₀) / (λ₀² N),

so two runs' estimates, independent given R, have E‖θ̂ − θ̂'‖₂ ≤ β/√N with
β = L·M·sqrt(2(3 + 2L²/λ₀))/λ₀. A coordinate's two roundings on one offset differ with probability
at most |θ̂_i − θ̂'_i|/w; over the p = d (shared) or n·d (disjoint) coordinates and by Cauchy–Schwarz
P(θ̃_k ≠ θ̃'_k) ≤ √p·β/(w_k·√N_k). With w_k = √p·β·D/(ρ·√N_k) each of the D decisions costs ρ/D:
**ρ ≤ Σ_k ρ/D = ρ** (``params.rho_bound``). The runs part only where some θ̃_k differ: the exploring
arms are shared, and equal rounded estimates feed the learner alike ("The learner decides"), so it
plays the same arm on the same context. The two runs are compared by what the learner was fed (θ̃). The bound holds for every
learner deterministic given R and its feed, whatever it does with the feed: a learner built to
amplify the smallest difference in it parts exactly where the feeds do
(``tests/algorithms/test_contextual_wrap.py``), at most P(some θ̃_k differ) — 0.0433 in law on the
attack below, bound ÷ worst 2.31.

What is ours and what is the literature's: rounding on a randomly shifted grid is the mechanism
of replicable learning (Impagliazzo, Lei, Pitassi & Sorrell, STOC 2022) and of the paper's §5
conversion; the Efron–Stein stability argument for ridge regression with a regulariser that grows
with the sample is in the manner of Bousquet & Elisseeff (JMLR 2002); the wrapper, the
second-moment form of the bound and every constant are ours. The engine voids the certificate
where (i) or (iii) is not known to hold on the adversary (``replify.evaluate``: "measured, not
certified", with the reason). Its attacks (ties, duplicated and collinear arms, noise at the
declared scale, the estimate's largest variance) and bound ÷ measured are in
``tests/algorithms/test_contextual_wrap.py`` and docs/contextual.md.

**Centre, measured variance, schedule.** ``cost_center`` b makes (iii) a bound on E[(c − b)² | x]
(the ridge fits c − b: the derivation above with c − b for c; the feed carries the estimate of c − b,
a shift that leaves every arm's order alone); ``variance="measured"`` sets each decision's width by
the explored costs' own second moment about b, agreed on through R, for costs within M of b surely
(:mod:`replify.components.rounded_ridge`, "The measured variance": its charge is taken from each
decision's share, so the bound stays ρ); ``phases`` and ``explore_share`` set the schedule.

**Regret** (not certified): phase 0 (a quarter of T with the default K = 3) and a share f of every
later phase explore; the committed steps cost what the learner's policy on the rounded ridge
estimate loses (a LinUCB's optimism on the feed's confidence, the estimate's shrinkage towards 0 by
λ₀; an always-arm-0 learner pays arm 0's regret).
"""

from __future__ import annotations

import copy
import math
import numbers
import random
from typing import Any, Callable, Mapping

import numpy as np

from replify.base.checks import check_int
from replify.base.protocol import check_learner
from replify.base.randomness import Seed, Streams, child, seed_sequence
import attrs

from replify.components.contextual import check_contexts, is_contextual
from replify.components.rounded_ridge import RidgeParams, RoundedRidgeLanes, RoundedRidgeLearner, ridge_parameters
from replify.conversions.resolve import Resolved
from replify.errors import InvalidArgumentError, LearnerProtocolError
from replify.plugins.factory import check_accepts

MODELS = ("shared", "disjoint")


@attrs.frozen(kw_only=True)
class ContextualOptions:
    """The contextual conversion's options (:func:`replify.wrap`'s, for a contextual learner):
    ``model`` (``"shared"`` or ``"disjoint"``; the learner's ``model`` attribute by default),
    ``cost_scale`` M (1), ``cost_center`` b (0), ``variance`` (``"declared"``: M² bounds the costs'
    second moment about b; ``"measured"``: the explored costs' own, for costs within M of b),
    ``feature_bound`` L (1), ``phases`` K (3) and ``explore_share`` f (0.1) of the schedule,
    ``feed_rows`` (the pseudo-rows fed to the learner at each decision; module docstring) and
    ``learner_params``."""

    model: str | None = None
    cost_scale: float | None = None
    cost_center: float | None = None
    variance: str | None = None
    feature_bound: float | None = None
    phases: int | None = None
    explore_share: float | None = None
    feed_rows: int | None = None
    learner_params: Mapping[str, Any] | None = None


def build(learner: Resolved, *, n: int, horizon: int, rho: float, seed: Seed,
          options: ContextualOptions) -> ReplicableContextual:
    """The conversion around ``learner`` (the ``build`` of its :class:`~replify.ConversionSpec`)."""
    params = dict(options.learner_params or {})
    if not set(params) & {"n", "horizon", "rng", "rho"}:  # those the conversion refuses, in its own words
        # an unknown parameter named with the learner and what it takes, not the factory's bare TypeError
        check_accepts(learner.factory, {"n": None, "horizon": None, "rng": None, **params},
                      what=f"learner {learner.name!r}", missing_ok=True)
    return ReplicableContextual(
        learner.factory, n=n, horizon=horizon, rho=rho, seed=seed, model=options.model,
        cost_scale=options.cost_scale, feature_bound=options.feature_bound,
        learner_params=options.learner_params, name=learner.name, feed_rows=options.feed_rows,
        cost_center=options.cost_center, variance=options.variance, phases=options.phases,
        explore_share=options.explore_share,
    )


def conversion_parameters(*, horizon: int, n: int, rho: float, cost_scale: float | None = None,
                          feature_bound: float | None = None, phases: int | None = None, explore: float | None = None,
                          lam: float | None = None, grid_scale: float | None = None, cost_center: float | None = None,
                          variance: str | None = None) -> RidgeParams:
    """The conversion's schedule and certificate (module docstring): M = ``cost_scale`` (1 by
    default) about b = ``cost_center`` (0), L = ``feature_bound`` (1 by default), ``variance``
    declared or measured; the other knobs as ``rep-ridge``'s."""
    return ridge_parameters(horizon=horizon, n=n, rho=rho, phases=phases, explore=explore, lam=lam,
                            feature_bound=feature_bound, grid_scale=grid_scale,
                            cost_scale=1.0 if cost_scale is None else cost_scale,
                            cost_center=0.0 if cost_center is None else cost_center, variance=variance)


def model_of(learner: Any, model: str | None) -> str:
    """The linear model the conversion fits: ``model`` where given, else the learner's own
    ``model`` attribute where it names one of :data:`MODELS`, else ``"shared"``."""
    if model is not None:
        if model not in MODELS:
            raise InvalidArgumentError(f"model must be one of {MODELS} (one θ over the arms' features, or one per "
                                       f"arm); got {model!r}")
        return model
    own = getattr(learner, "model", None)
    return own if isinstance(own, str) and own in MODELS else "shared"


#: Spawn keys, under the wrapper's seed, of the streams of the learner it runs (module docstring,
#: "The learner decides"): a decision's learner's own ``rng`` (its twin's too, at the first decision),
#: the feed's design, and a committed step's ``rng``.
FEED_KEY, DESIGN_KEY, STEP_KEY = 0x6665, 0x6473, 0x7374

#: Pseudo-rows fed per estimate dimension (the learner sees ``FEED_PER_DIM * p`` rows, at most
#: ``FEED_MAX`` and never more than the explored samples the estimate read): noiseless rows on the sphere of radius L, so a linear learner's estimate is the
#: rounded one up to its own regulariser, and its confidence width about L·(p/rows)^½ = L/32.
FEED_PER_DIM, FEED_MAX = 1024, 16_384


def _declared_range(learner: Any) -> tuple[float, float]:
    """The costs ``learner`` declares it accepts (its ``cost_range``, as replify's contextual learners
    declare it), else the whole real line."""
    got = getattr(learner, "cost_range", None)
    try:
        lo, hi = (float(v) for v in got)
    except (TypeError, ValueError):
        return -math.inf, math.inf
    return (lo, hi) if lo <= hi else (-math.inf, math.inf)


class FedLearner:
    """The user's learner as the conversion runs it (module docstring, "The learner decides"): at
    each decision rebuilt from its factory with an ``rng`` from R, fed pseudo-rows that carry the
    rounded estimate, then frozen — a committed step asks a copy (with that step's ``rng`` from R
    where its ``act`` draws), so nothing it sees on committed steps moves what it plays."""

    def __init__(self, factory: Callable[..., Any], *, n: int, horizon: int, seed: np.random.SeedSequence,
                 params: Mapping[str, Any], name: str, feature_bound: float, rows: int | None) -> None:
        self.factory, self.n, self.horizon, self.seed = factory, n, horizon, seed
        self.params, self.name, self.feature_bound, self.rows = dict(params), name, feature_bound, rows
        self.learner: Any = None
        self.phase = -1
        self._rng: np.random.Generator | None = None
        self._probes: np.ndarray | None = None

    def _build(self, key: tuple[int, ...]) -> tuple[Any, np.random.Generator]:
        rng = np.random.default_rng(child(self.seed, *key))
        return self.factory(n=self.n, horizon=self.horizon, rng=rng, **self.params), rng

    def feed(self, phase: int, rounded: np.ndarray, model: str, d: int, samples: int) -> None:
        """Build the learner for decision ``phase`` and feed it the pseudo-rows of ``rounded``
        ((blocks, d): θ̃ for the shared model, one per arm for the disjoint), estimated from
        ``samples`` explored steps: never more rows than those."""
        dim = rounded.size
        rows = self.rows if self.rows is not None else min(FEED_MAX, FEED_PER_DIM * dim, samples)
        rows = max(1, min(self.horizon, rows))
        design = np.random.default_rng(child(self.seed, DESIGN_KEY, phase))
        # the feed's rows, then PROBES contexts to check the frozen learner's acts on
        z = design.normal(size=(rows + PROBES, self.n, d))
        z *= self.feature_bound / np.maximum(np.linalg.norm(z, axis=2, keepdims=True), 1e-300)
        costs = (z @ rounded[0]) if model == "shared" else np.einsum("jnd,nd->jn", z, rounded)  # (rows, n)
        state = _global_state()
        z, self._probes = z[:rows], z[rows:]
        costs = costs[:rows]
        learner, self._rng = self._build((FEED_KEY, phase))
        costs = np.clip(costs, *_declared_range(learner))  # within the costs the learner accepts
        played = self._play(learner, z, costs, phase)
        if _global_state() != state:
            raise LearnerProtocolError(
                f"{self.name!r} drew from numpy's or Python's global random generator while it was fed: two runs that "
                "share R would not play alike; draw every random number from the rng you are given")
        if self.phase < 0:  # the first decision: a twin from the same seed, fed alike, must play alike
            twin, _ = self._build((FEED_KEY, phase))
            head = min(rows, TWIN_ROWS)
            if not np.array_equal(self._play(twin, z[:head], costs[:head], phase), played[:head]):
                raise LearnerProtocolError(
                    f"{self.name!r} played differently on two copies built from one seed and fed the same rows: the "
                    "contextual conversion certifies learners that are deterministic given their rng and what they "
                    "are fed (draw every random number from the rng you are given)")
        # never asked itself again: every later act goes to a copy, answered or not (a learner that
        # refuses a second act before an update, as replify's own do, is never asked twice)
        self.learner, self.phase = learner, phase
        self._check_acts()

    def _play(self, learner: Any, z: np.ndarray, costs: np.ndarray, phase: int) -> np.ndarray:
        arms = np.empty(z.shape[0], dtype=np.int64)
        j = 0
        try:
            for j in range(z.shape[0]):  # a loop over the feed's rows: the user's learner takes one at a time
                a = self._checked(learner.act(z[j]), "fed")
                learner.update(a, float(costs[j, a]))
                arms[j] = a
        except Exception as exc:  # the user's own error, said where it happened
            exc.add_note(f"raised by {self.name!r} while replify.wrap's contextual conversion fed it row {j + 1} of "
                         f"{z.shape[0]} at decision {phase} (docs/contextual.md, \"What it does\")")
            raise
        return arms

    def _checked(self, arm: Any, when: str) -> int:
        if isinstance(arm, (bool, np.bool_)) or not isinstance(arm, numbers.Integral) or not 0 <= arm < self.n:
            raise LearnerProtocolError(f"{self.name!r}.act() returned {arm!r} while {when}; expected an arm in "
                                       f"[0, {self.n})")
        return int(arm)

    def _check_acts(self) -> None:
        """The frozen learner's acts on the probe contexts, each asked twice of fresh copies with the
        same rng, must agree, and must not touch the global generators: a learner whose committed
        play depends on anything but its state, its rng and the context is refused here."""
        state = _global_state()
        for j, x in enumerate(self._probes):
            first, second = (self.act(x, 2**62 + j)[0] for _ in range(2))
            if first != second:
                raise LearnerProtocolError(
                    f"{self.name!r} played arm {first}, then arm {second}, on one context from two copies of its frozen "
                    "state given the same rng: the contextual conversion certifies learners whose act depends only on "
                    "their state, their rng and the context")
        if _global_state() != state:
            raise LearnerProtocolError(
                f"{self.name!r} drew from numpy's or Python's global random generator in act: two runs that share R "
                "would not play alike; draw every random number from the rng you are given")

    def act(self, context: np.ndarray, step: int) -> tuple[int, bool]:
        """The frozen learner's arm on ``context`` at committed step ``step`` (1-based), asked of a
        fresh copy whose rng is that step's own from R (the frozen state never moves), and whether
        it drew from that rng (then a stretch cannot be tabulated: each step draws afresh)."""
        rng = np.random.default_rng(child(self.seed, STEP_KEY, self.phase, step))
        start = rng.bit_generator.state
        learner = copy.deepcopy(self.learner, {id(self._rng): rng})
        arm = self._checked(learner.act(context), f"playing step {step}")
        return arm, rng.bit_generator.state != start

    def arm(self, context: np.ndarray, step: int) -> int:
        """The frozen learner's arm on ``context`` at committed step ``step`` (:meth:`act`)."""
        return self.act(context, step)[0]


#: Contexts from R on which the frozen learner's act is checked at every decision (:meth:`FedLearner._check_acts`),
#: and the rows of the first feed a twin replays (a learner that goes astray later is met by the probes).
PROBES, TWIN_ROWS = 8, 1024


def _global_state() -> tuple[Any, Any]:
    """numpy's and Python's global generators' states, comparable with ``==``."""
    kind, keys, pos, gauss, cached = np.random.get_state()
    return (kind, keys.tobytes(), pos, gauss, cached), random.getstate()


class ConversionLanes(RoundedRidgeLanes):
    """The conversion's lanes: the rounded-ridge mechanism, round-robin exploration, and the
    committed steps decided by the user's learner (``decide``), fed at every decision
    (``decided``). One lane: the user's learner is not batched."""

    label = "replify.wrap (contextual)"
    decide: Callable[[np.ndarray], int] | None = None
    decided: Callable[[], None] | None = None

    @classmethod
    def stack(cls, parts: Any) -> None:
        return None

    def _choose(self) -> np.ndarray:
        if self._exploring() or self.decide is None:
            return super()._choose()
        self.check_features(self._x, self.t + 1)
        return np.array([self.decide(self._x[0])], dtype=np.int64)

    def _decide(self) -> None:
        super()._decide()
        if self.decided is not None:
            self.decided()


class ReplicableContextual(RoundedRidgeLearner):
    """A contextual learner made iid ρ-replicable by the general contextual conversion (module
    docstring). Build it with :func:`replify.wrap`; ``internal`` is the user's learner, built once
    (with R's ``internal`` stream) for its model, ``fed`` the learner that decides the committed
    steps (:class:`FedLearner`), ``params`` the schedule and the certificate; ``feed_rows`` the
    pseudo-rows fed at each decision (module docstring; by default 1 024 per dimension, at most
    16 384)."""

    def __init__(self, factory: Callable[..., Any], *, n: int, horizon: int, rho: float, seed: Seed,
                 model: str | None = None, cost_scale: float | None = None, feature_bound: float | None = None,
                 learner_params: Mapping[str, Any] | None = None, name: str | None = None,
                 feed_rows: int | None = None, cost_center: float | None = None, variance: str | None = None,
                 phases: int | None = None, explore_share: float | None = None) -> None:
        n, horizon = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=1)
        self.name = name or getattr(factory, "__qualname__", None) or type(factory).__name__
        self.seed = seed_sequence(seed)
        streams = Streams(self.seed)
        clash = sorted(set(learner_params or {}) & {"n", "horizon", "rng", "rho"})
        if clash:
            raise InvalidArgumentError(f"learner_params must not set {', '.join(clash)}: the wrapper derives them; got "
                                       f"{dict(learner_params or {})!r}")
        self.internal = check_learner(factory(n=n, horizon=horizon, rng=streams.internal, **dict(learner_params or {})),
                                      source=f"learner factory {self.name!r}")
        if not is_contextual(self.internal):
            raise LearnerProtocolError(f"{self.name!r} is not a contextual learner (it declares problem="
                                       f"{getattr(self.internal, 'problem', 'experts')!r}); the contextual conversion "
                                       "wraps learners that declare problem = 'contextual'")
        self.model = model_of(self.internal, model)
        self.params = conversion_parameters(horizon=horizon, n=n, rho=rho, cost_scale=cost_scale,
                                            feature_bound=feature_bound, cost_center=cost_center, variance=variance,
                                            phases=phases, explore=explore_share)
        self.rho = self.params.rho
        if feed_rows is not None:
            feed_rows = check_int("feed_rows", feed_rows, minimum=1)
        self.fed = FedLearner(factory, n=n, horizon=horizon, seed=child(self.seed, FEED_KEY),
                              params=learner_params or {}, name=self.name, feature_bound=self.params.feature_bound,
                              rows=feed_rows)
        lane = ConversionLanes(n=n, horizon=horizon, rngs=[streams.grid], params=self.params, model=self.model,
                               exploration="round-robin")
        lane.decide, lane.decided = self._committed_arm, self._feed  # methods, not closures: it pickles
        self._start(lane, n=n, horizon=horizon)
        self._cycle: tuple[np.ndarray, int] | None = None

    def __repr__(self) -> str:
        p = self.params
        return (f"ReplicableContextual({self.name!r}, n={self.n}, horizon={self.horizon}, rho={p.rho}, "
                f"model={self.model!r}, cost_scale={p.cost_scale:g}, phases={len(p.starts)})")

    def _committed_arm(self, x: np.ndarray) -> int:
        return self.fed.arm(x, self._lane.t + 1)

    def _feed(self) -> None:
        lane = self._lane
        self.fed.feed(lane._phase, lane.rounded[0], self.model, lane.d, int(self.params.samples[lane._phase - 1]))

    # -- round robins on cost sums, on fixed features (the engine's block-sum path)
    def next_cycle(self, context: Any) -> tuple[np.ndarray, int]:
        """The rest of the current stretch as ``(arms, length)``: an exploring stretch is a round
        robin over every arm, a committed one the rounded estimate's arm on these (fixed) features."""
        lane = self._lane
        if lane.t >= self.horizon:
            raise LearnerProtocolError(f"{type(self).__name__}.next_cycle() after the horizon ({self.horizon} steps)")
        if lane.d is None:
            x = np.asarray(context)
            if x.ndim != 2 or x.shape[0] != self.n:
                raise InvalidArgumentError(f"{type(self).__name__}.next_cycle(context): context must have shape (n, d) = "
                                           f"({self.n}, d); got shape {x.shape}")
            lane.d = int(x.shape[1])
            lane._setup(lane.d)
        x = check_contexts(context, (self.n, lane.d), f"{type(self).__name__}.next_cycle()")
        lane.check_features(x, lane.t + 1)
        self._features = x
        boundary = int(lane._starts[lane._phase + 1])
        if lane._exploring():
            arms, length = np.roll(np.arange(self.n), -lane.explored_arm()), lane._explore_until - lane.t
        else:  # the learner decides: one arm for the stretch, or one step at a time where its act draws
            arm, drew = self.fed.act(x, lane.t + 1)
            arms, length = np.array([arm]), 1 if drew else boundary - lane.t
        self._cycle = (arms, int(length))
        return arms.copy(), int(length)

    def next_stretch(self, contexts: Any) -> tuple[str, Any, int]:
        """As :meth:`RoundedRidgeLearner.next_stretch`, with the committed stretch's arm on each of the
        support's rows asked of the learner (tabulated once per stretch; a stretch of one step where
        its act draws from R)."""
        kind, arms, length = super().next_stretch(contexts)
        if kind != "policy":
            return kind, arms, length
        lane, x = self._lane, self._support
        asked = [self.fed.act(row, lane.t + 1) for row in x]  # a loop over the support's rows
        arms = np.array([a for a, _ in asked], dtype=np.int64)
        if any(drew for _, drew in asked):  # it draws afresh at every step: a stretch of one
            self._stretch = 1
        return "policy", arms, self._stretch

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum and pull count over the last :meth:`next_cycle`."""
        if self._cycle is None:
            raise LearnerProtocolError(f"{type(self).__name__}.observe_sums() before next_cycle()")
        lane, (_, length) = self._lane, self._cycle
        c, m = np.asarray(sums, dtype=np.float64), np.asarray(pulls)
        if (c.shape != (self.n,) or m.shape != (self.n,) or m.dtype.kind not in "iu" or (m < 0).any()
                or int(m.sum()) != length or not np.isfinite(c).all()):
            raise InvalidArgumentError(f"observe_sums() needs {self.n} finite cost sums and non-negative integer pull "
                                       f"counts adding up to the {length} steps of the cycle; got shapes {c.shape} "
                                       f"and {m.shape}")
        if lane._exploring():
            arms = np.arange(self.n)[None]
            lane.add_samples(arms, self._features[None], m[None].astype(np.float64), c[None])
        lane.t += length
        self._cycle = None
        lane.advanced(lane.t)
