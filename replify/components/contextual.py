"""Contextual and linear bandits: before each step the adversary shows a context — a feature
vector per arm — and the learner, seeing it, picks an arm and then observes that arm's cost only
(docs/contextual.md).

**The adversary's side.** An adversary that shows contexts has, beside ``n`` and ``horizon``,

- ``d``: the dimension of an arm's feature vector;
- ``sample_contexts(rng, start, stop) -> (contexts, costs, means)``: steps start+1..stop, drawn
  together — ``contexts`` (L, n, d) (row a of a step: arm a's features), ``costs`` (L, n) and
  ``means`` (L, n), each arm's expected cost given that step's context (for the pseudo-regret).
  Consecutive chunks from one generator are one draw, as for ``sample_chunk``;
- ``fixed_contexts``: the (n, d) features when the context never changes (a linear bandit with a
  finite action set), else ``None``. Such an adversary is an ordinary iid (or piecewise iid)
  bandit adversary too — ``sample_chunk``, ``sample_sums``, ``expected_sums`` — so every learner
  runs on it, on every path of the engine.

The two runs of a pair draw from two independent streams: they see independent contexts as well as
independent costs. Replicability is over the data, contexts included.

**The learner's side.** A contextual learner declares ``problem = "contextual"`` and
``feedback = "bandit"`` and has

- ``act(context) -> int``: the arm for the current step, ``context`` the (n, d) features of this
  step (idempotent within a step);
- ``update(action, cost)``: the arm played and its cost — nothing else of the step's costs;

and optionally

- ``policy() -> array``: a 1-d array that names the rule in force for the current step (a map from
  contexts to arms: a rounded estimate, say). Two runs whose policies are equal play the same arm
  on the same context. On an adversary whose contexts change, two runs see different contexts, so
  their arms differ even when they follow one rule: the engine then compares the runs' policies at
  every step, and ρ̂ is the probability that the two policy sequences differ. A learner without
  ``policy()`` is compared by its arms. On fixed contexts the arms are compared, always;
- ``next_batch(context) -> arms`` / ``observe(costs)``: the arms of the next L ≥ 1 steps,
  committed before their costs are seen (``context`` is the first step's), then their L costs;
- ``next_cycle(context) -> (arms, length)`` / ``observe_sums(sums, pulls)``: as for bandit
  learners (:mod:`replify.components.bandits`), on an adversary with ``fixed_contexts``: the
  engine's block-sum path, with no per-step draw;
- ``needs_fixed_contexts = True``: the learner is for a linear bandit with a finite action set
  (its features never change); the engine refuses to run it where the contexts change;
- ``for_lanes(learners) -> lanes`` (a classmethod), the lane-batched form: ``lanes.act(contexts)``
  with contexts (lanes, n, d) returns every lane's arm (lanes,), ``lanes.update(arms, costs)``
  hands each lane its observed cost, and ``lanes.policy()`` (optional) returns (lanes, p).

:class:`ContextLanes` is a base for the lane form and :class:`ContextualLearner` a per-lane
learner that steps a lane object of one lane, so the two forms are one implementation and agree
bit for bit (``check_lanes_equal_stepping`` in :mod:`replify.testing`). :class:`RidgeLanes` keeps
ridge-regression statistics for every lane — shared (one θ over the arms' features) or disjoint
(one θ per arm) — updated by Sherman–Morrison rank-one steps.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any, ClassVar, Sequence

import numpy as np
from typeguard import typeguard_ignore

from replify.base.checks import NO_COST, CostDomain, check_next_step, refuse_cost_vector_update
from replify.components.describe import Described
from replify.errors import ActionError, CostError, HorizonError, InvalidArgumentError, LearnerProtocolError

#: Steps of random numbers a lane draws at once from its generator (the per-lane learner draws in
#: the same blocks, so both forms consume the same numbers in the same order).
DRAW_BLOCK = 256


def is_contextual(learner: Any) -> bool:
    """Whether ``learner`` declares the contextual protocol (``problem = "contextual"``)."""
    return getattr(learner, "problem", "experts") == "contextual"


def shows_contexts(seq: Any) -> bool:
    """Whether the adversary shows contexts (``sample_contexts``)."""
    return callable(getattr(seq, "sample_contexts", None))


def varying_contexts(seq: Any) -> bool:
    """An adversary whose contexts change from step to step (it shows contexts and declares no
    ``fixed_contexts``)."""
    return shows_contexts(seq) and getattr(seq, "fixed_contexts", None) is None


def check_contexts(contexts: Any, shape: tuple[int, ...], source: str) -> np.ndarray:
    """Contexts of ``shape`` with finite entries, as float64."""
    x = np.asarray(contexts)
    if x.shape != shape or x.dtype.kind not in "iuf":
        raise InvalidArgumentError(f"{source}: contexts must be a real array of shape {shape}; got "
                                   f"{type(contexts).__name__} of shape {x.shape}, dtype {x.dtype}")
    x = x.astype(np.float64, copy=False)
    if not np.isfinite(x).all():
        raise InvalidArgumentError(f"{source}: contexts must be finite; got {x[~np.isfinite(x)][:3].tolist()}")
    return x


class ContextLanes:
    """Base of the lane-batched contextual form (module docstring): every lane's state as arrays
    with a leading lanes axis, allocated at the first context (when ``d`` is known), the step ``t``
    the lanes share and each lane's generator. Subclasses implement :meth:`_setup`, :meth:`_choose`
    and :meth:`_learn`; ``shared`` names the settings every stacked lane must share."""

    shared: ClassVar[tuple[str, ...]] = ()
    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any]) -> None:
        if not isinstance(rngs, (list, tuple)):
            raise LearnerProtocolError(f"{type(self).__name__}: rngs must be a list with one generator per lane; "
                                       f"got {type(rngs).__name__}")
        self.n, self.horizon, self.rngs = n, horizon, list(rngs)
        self.t, self.d = 0, None
        self._arms: np.ndarray | None = None
        self._x: np.ndarray | None = None
        self._buffers: dict[str, tuple[int, np.ndarray]] = {}

    @property
    def lanes(self) -> int:
        return len(self.rngs)

    def act(self, contexts: Any) -> np.ndarray:
        """Every lane's arm for step t + 1, given each lane's (n, d) context: shape (lanes,)."""
        return self._act(contexts, checked=False)

    def _act(self, contexts: Any, checked: bool) -> np.ndarray:
        # checked: the engine's own contexts, already found finite and of the right shape (a float64 array)
        if self._arms is None and checked and self.d is not None:
            if self.t >= self.horizon:
                raise LearnerProtocolError(f"{type(self).__name__}.act() after the horizon ({self.horizon} steps played)")
            self._x = contexts
            self._arms = np.asarray(self._choose(), dtype=np.int64)
        if self._arms is not None and not checked and not np.array_equal(np.asarray(contexts), self._x):
            raise LearnerProtocolError(f"{type(self).__name__}.act() at step {self.t + 1} was called again with other "
                                       "contexts before update(): the lanes pick one arm each per step")
        if self._arms is None:
            if self.t >= self.horizon:
                raise LearnerProtocolError(f"{type(self).__name__}.act() after the horizon ({self.horizon} steps played)")
            x = np.asarray(contexts)
            if self.d is None:
                if x.ndim != 3 or x.shape[-1] < 1:
                    raise InvalidArgumentError(f"{type(self).__name__}.act(): contexts must have shape (lanes, n, d); "
                                               f"got shape {x.shape}")
                self.d = int(x.shape[-1])
                self._setup(self.d)
            self._x = check_contexts(contexts, (self.lanes, self.n, self.d), f"{type(self).__name__}.act()")
            self._arms = np.asarray(self._choose(), dtype=np.int64)
        return self._arms

    def update(self, arms: np.ndarray, costs: np.ndarray) -> None:
        """The costs (lanes,) each lane observed for the arms :meth:`act` chose."""
        if self._arms is None:
            raise LearnerProtocolError(f"{type(self).__name__}.update() at step {self.t + 1} before act()")
        rows = np.arange(self.lanes)
        self._learn(self._arms, self._x[rows, self._arms], np.asarray(costs, dtype=np.float64))
        self.t += 1
        self._arms = None

    def policy(self) -> np.ndarray | None:
        """(lanes, p): the rule each lane follows at the current step, or None when the learner
        names none (it is then compared by its arms)."""
        return None

    def _uniforms(self, k: int) -> np.ndarray:
        """This step's ``k`` uniforms per lane, (lanes, k), from each lane's own generator."""
        return self._draw("random", k)

    def _normals(self, k: int) -> np.ndarray:
        """This step's ``k`` standard normals per lane, (lanes, k), from each lane's own generator."""
        return self._draw("standard_normal", k)

    def _draw(self, kind: str, k: int) -> np.ndarray:
        # Drawn in blocks of DRAW_BLOCK steps, lane by lane (one generator call per lane and block,
        # not per step); a lane stepped alone draws the same blocks, so the same numbers.
        block, row = divmod(self.t, DRAW_BLOCK)
        got = self._buffers.get(kind)
        if got is None or got[0] != block or got[1].shape[2] != k:
            got = (block, np.stack([getattr(r, kind)((DRAW_BLOCK, k)) for r in self.rngs]))
            self._buffers[kind] = got
        return got[1][:, row]

    def _setup(self, d: int) -> None:
        """Allocate the per-lane state once ``d`` is known."""

    def _choose(self) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement _choose() -> arms, one per lane")

    def _learn(self, arms: np.ndarray, x: np.ndarray, costs: np.ndarray) -> None:
        """Learn from each lane's played features ``x`` (lanes, d) and cost."""
        raise NotImplementedError(f"{type(self).__name__} must implement _learn(arms, x, costs)")

    @classmethod
    def stack(cls, parts: Sequence[ContextLanes]) -> ContextLanes | None:
        """One object playing every lane of ``parts`` (none played yet, one class and setting),
        or None when they cannot be joined."""
        first = parts[0]
        names = ("n", "horizon") + cls.shared
        if any(type(p) is not cls or p.t != 0 or p.d is not None or p._arms is not None
               or any(getattr(p, k) != getattr(first, k) for k in names) for p in parts):
            return None
        out = object.__new__(cls)
        out.__dict__.update(first.__dict__)
        out.rngs = [r for p in parts for r in p.rngs]
        out._buffers = {}
        return out


class RidgeLanes(ContextLanes):
    """Ridge-regression statistics for every lane: V = λI + Σ x xᵀ (kept as its inverse, updated by
    Sherman–Morrison: (V + xxᵀ)⁻¹ = V⁻¹ − V⁻¹x xᵀV⁻¹ / (1 + xᵀV⁻¹x)), b = Σ c x and θ̂ = V⁻¹b —
    one model over the arms' features (``model="shared"``) or one per arm (``"disjoint"``, the
    played arm's only is updated)."""

    shared = ("lam", "model")

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any], lam: float = 1.0, model: str = "shared") -> None:
        super().__init__(n=n, horizon=horizon, rngs=rngs)
        self.lam, self.model = lam, model

    def _setup(self, d: int) -> None:
        k = self.n if self.model == "disjoint" else 1
        self.inv = np.broadcast_to(np.eye(d) / self.lam, (self.lanes, k, d, d)).copy()
        self.b = np.zeros((self.lanes, k, d))
        self.theta = np.zeros((self.lanes, k, d))

    # (batched matmul, not einsum: BLAS for the lanes' small products, several times faster)
    def _means(self) -> np.ndarray:
        """⟨x_a, θ̂⟩ for every lane and arm of the current context, (lanes, n)."""
        if self.model == "shared":
            return np.matmul(self._x, self.theta[:, 0, :, None])[..., 0]
        return np.einsum("lnd,lnd->ln", self._x, self.theta)

    def _widths(self) -> np.ndarray:
        """‖x_a‖ in the norm of V⁻¹ for every lane and arm, (lanes, n)."""
        x = self._x
        y = np.matmul(x, self.inv[:, 0]) if self.model == "shared" else np.matmul(x[:, :, None, :], self.inv)[:, :, 0]
        return np.sqrt(np.maximum(np.einsum("lnd,lnd->ln", y, x), 0.0))

    def _learn(self, arms: np.ndarray, x: np.ndarray, costs: np.ndarray) -> None:
        shared = self.model == "shared"
        rows = np.arange(self.lanes)
        # the shared model's statistics are updated in place (views); a disjoint model's played arm's
        # are gathered, updated and written back
        inv = self.inv[:, 0] if shared else self.inv[rows, arms]
        b = self.b[:, 0] if shared else self.b[rows, arms]
        v = np.matmul(inv, x[:, :, None])[..., 0]
        inv -= v[:, :, None] * v[:, None, :] / (1.0 + (x * v).sum(axis=1))[:, None, None]
        b += costs[:, None] * x
        theta = np.matmul(inv, b[:, :, None])[..., 0]
        if shared:
            self.theta[:, 0] = theta
        else:
            self.inv[rows, arms], self.b[rows, arms], self.theta[rows, arms] = inv, b, theta


class ContextualLearner(Described):
    """A contextual learner stepped through a lane object of one lane (built by the subclass's
    ``__init__`` and handed to :meth:`_start`): stepping it and playing it in lanes run the same
    code. Checks what the engine and users hand it: each context's shape, the arm updated, a
    finite cost in ``cost_range``, the horizon."""

    problem = "contextual"
    feedback = "bandit"
    #: the costs it accepts: any real cost by default (Gaussian noise is unbounded)
    cost_range: tuple[float, float] = (-math.inf, math.inf)
    _lane: ContextLanes

    def _start(self, lane: ContextLanes, *, n: int, horizon: int) -> None:
        self.n, self.horizon = n, horizon
        self._lane = lane
        self._action: int | None = None

    @property
    def t(self) -> int:
        """Steps played so far."""
        return self._lane.t

    @property
    def domain(self) -> CostDomain:
        return CostDomain(low=self.cost_range[0], high=self.cost_range[1])

    def act(self, context: Any) -> int:
        """The arm for the current step, given its (n, d) ``context``. Called again before
        ``update``, with the same context, it returns the same arm; with another context it is
        refused (a learner decides once per step: scoring a policy offline on many contexts needs a
        copy per context, or the rule itself, ``policy()``)."""
        if self._action is not None and not np.array_equal(np.asarray(context), self._context):
            raise LearnerProtocolError(
                f"{type(self).__name__}.act() at step {self.t + 1} was called again with another context before "
                f"update(): a learner picks one arm per step; call update(action, cost) first"
            )
        if self._action is None:
            if self.t >= self.horizon:
                raise HorizonError(f"{type(self).__name__}.act() for step {self.t + 1}, past the horizon T={self.horizon}")
            x = np.asarray(context)
            if x.ndim != 2 or x.shape[0] != self.n:
                raise InvalidArgumentError(f"{type(self).__name__}.act(context): context must have shape (n, d) = "
                                           f"({self.n}, d), one feature vector per arm; got shape {x.shape}")
            if self._lane.d is not None and x.shape[1] != self._lane.d:
                raise InvalidArgumentError(f"{type(self).__name__}.act(context) at step {self.t + 1}: context has "
                                           f"d={x.shape[1]} features per arm; the earlier steps had d={self._lane.d}")
            self._action = int(self._lane.act(x[None])[0])
            self._context = np.array(x, copy=True)
        return self._action

    def update(self, action: Any, cost: Any = NO_COST) -> None:
        """The cost of the arm played at this step."""
        if cost is NO_COST:
            refuse_cost_vector_update(self, action, step=self.t + 1)
        check_next_step(self.t, self.horizon)
        if self._action is None:
            raise LearnerProtocolError(f"{type(self).__name__}.update() at step {self.t + 1} before act(context)")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral) or int(action) != self._action:
            raise ActionError(f"update() at step {self.t + 1}: action must be the arm act() returned ({self._action}); "
                              f"got {action!r}")
        if isinstance(cost, (bool, np.bool_)) or not isinstance(cost, (numbers.Real, np.ndarray)) or np.ndim(cost) != 0:
            raise CostError(f"cost at step {self.t + 1} must be a real number (the played arm's cost); got {cost!r}")
        c = float(cost)
        low, high = self.cost_range
        if not (math.isfinite(c) and low <= c <= high):
            raise CostError(f"cost at step {self.t + 1} must be a finite number in [{low:g}, {high:g}]; got {cost!r}")
        self._lane.update(np.array([self._action], dtype=np.int64), np.array([c]))
        self._action = None

    def policy(self) -> np.ndarray | None:
        """The rule in force for the current step (module docstring), or None."""
        p = self._lane.policy()
        return None if p is None else p[0]

    @classmethod
    def for_lanes(cls, learners: Sequence[Any]) -> ContextLanes | None:
        """The lane-batched form of ``learners`` (all of this class, built alike, none played),
        or None. A subclass that overrides ``act`` or ``update`` steps its own way: None."""
        if (not learners or any(type(lr) is not cls for lr in learners)
                or cls.act is not ContextualLearner.act or cls.update is not ContextualLearner.update):
            return None
        return type(learners[0]._lane).stack([lr._lane for lr in learners])


def _checked_arms(arms: Any, shape: tuple[int, ...], n: int, source: str, step: int) -> np.ndarray:
    a = np.asarray(arms)
    if a.shape != shape or a.dtype.kind not in "iu":
        raise ActionError(f"{source} at step {step} must return integer arms of shape {shape}; got "
                          f"{type(arms).__name__} of shape {a.shape}, dtype {a.dtype}")
    bad = (a < 0) | (a >= n)
    if bad.any():
        raise ActionError(f"{source} at step {step} returned arm {int(a[bad][0])}, outside [0, {n})")
    return a.astype(np.int64, copy=False)


@typeguard_ignore  # a validator run each step: it checks its own arguments
def _policy_of(obj: Any, lanes: int | None, source: str, step: int) -> np.ndarray | None:
    """The object's ``policy()`` as a float array ((lanes, p) or (p,)), or None when it has none."""
    method = getattr(obj, "policy", None)
    if not callable(method):
        return None
    p = method()
    if p is None:
        return None
    want = "a 1-d array of finite numbers" if lanes is None else f"an array of shape ({lanes}, p) of finite numbers"
    try:
        a = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise LearnerProtocolError(f"{source}.policy() at step {step} must return {want}; got {p!r:.80} "
                                   f"({type(p).__name__})") from None
    if (lanes is None and a.ndim != 1) or (lanes is not None and (a.ndim != 2 or a.shape[0] != lanes)):
        raise LearnerProtocolError(f"{source}.policy() at step {step} must return {want}; got shape {a.shape}")
    if not np.isfinite(a).all():  # NaN != NaN: the two runs' policies would never agree, silently
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise LearnerProtocolError(f"{source}.policy() at step {step} must return {want}; got {a[where]} at index "
                                   f"{where[0] if len(where) == 1 else where}")
    return a


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that a learner cannot write into: the contexts a learner is shown are what
    the two runs were shown and what regret is measured on."""
    v = a.view()
    v.flags.writeable = False
    return v


def _if_wrote(exc: ValueError, source: str, step: int) -> None:
    """Raise the clear error for a learner that wrote into the (read-only) contexts it was given;
    return for any other ValueError (the caller re-raises it)."""
    if "read-only" in str(exc):
        raise LearnerProtocolError(
            f"{source} at step {step} wrote into a read-only array ({exc}): the contexts it is given are read-only, and "
            "a learner must not change them (they are what the run was shown, and what its regret is measured on); "
            "copy them first, e.g. np.array(context)") from exc


class ContextFeed:
    """What the engine hands one contextual learner: each step's context, then the played arm's
    cost (or, for a batched learner, the first context of a batch and then the batch's costs)."""

    def __init__(self, learner: Any, n: int) -> None:
        self.learner, self.n = learner, n
        self.name = type(learner).__name__
        self.batch = getattr(learner, "next_batch", None)
        self.pending = np.empty(0, dtype=np.int64)
        self.seen: list[np.ndarray] = []

    def play(self, contexts: np.ndarray, costs: np.ndarray, t0: int, policies: bool) -> tuple[np.ndarray, Any]:
        """Arms played on (L, n, d) contexts and (L, n) costs, steps t0+1..t0+L; with ``policies``,
        the learner's policy at each step too ((L, p), or None when it names none)."""
        rows = costs.shape[0]
        out = np.empty(rows, dtype=np.int64)
        pol: list[Any] = []
        lr, contexts, t = self.learner, _read_only(contexts), 0
        if callable(self.batch):
            while t < rows:
                if self.pending.size == 0:
                    try:
                        self.pending = self._batch(contexts[t], t0 + t + 1)
                    except ValueError as exc:
                        _if_wrote(exc, f"{self.name}.next_batch(context)", t0 + t + 1)
                        raise
                    self.seen = []
                k = min(rows - t, self.pending.size)
                arms = self.pending[:k]
                out[t : t + k] = arms
                if policies:
                    p = _policy_of(lr, None, self.name, t0 + t + 1)
                    pol.extend([p] * k)
                self.seen.append(costs[t : t + k][np.arange(k), arms])
                self.pending, t = self.pending[k:], t + k
                if self.pending.size == 0:
                    lr.observe(np.concatenate(self.seen))
        else:
            try:
                for t in range(rows):  # a learner that adapts every step: nothing to vectorise
                    got = lr.act(contexts[t])
                    if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Integral):
                        raise ActionError(f"{self.name}.act(context) at step {t0 + t + 1} must return an integer arm "
                                          f"in [0, {self.n}); got {got!r} ({type(got).__name__})")
                    a = int(got)
                    if not 0 <= a < self.n:
                        raise ActionError(f"{self.name}.act(context) at step {t0 + t + 1} returned arm {a}, outside "
                                          f"[0, {self.n})")
                    out[t] = a
                    if policies:
                        pol.append(_policy_of(lr, None, self.name, t0 + t + 1))
                    lr.update(a, float(costs[t, a]))
            except ValueError as exc:
                _if_wrote(exc, f"{self.name}.act(context)", t0 + t + 1)
                raise
        return out, _stack_policies(pol) if policies else None

    def _batch(self, context: np.ndarray, step: int) -> np.ndarray:
        arms = np.asarray(self.batch(context))
        if arms.ndim != 1 or arms.size == 0:
            raise ActionError(f"{self.name}.next_batch(context) at step {step} must return a non-empty 1-d array of "
                              f"integer arms; got {arms!r}")
        # a copy: the learner may reuse its own array for its next batch while this one is still played
        return _checked_arms(arms, arms.shape, self.n, f"{self.name}.next_batch(context)", step).copy()


def _stack_policies(pol: list[Any]) -> np.ndarray | None:
    if not pol or pol[0] is None:
        return None
    if any(p is None or p.shape != pol[0].shape for p in pol):
        raise LearnerProtocolError("a learner's policy() must return arrays of one shape at every step, or None always")
    return np.stack(pol)


class ContextLaneFeed:
    """What the engine hands a lane-batched contextual learner: every lane's context in one
    ``act(contexts)`` call, every lane's observed cost in one ``update`` call."""

    def __init__(self, lanes: Any, n: int) -> None:
        self.lanes, self.n = lanes, n
        self.name = type(lanes).__name__

    def play(self, contexts: np.ndarray, costs: np.ndarray, t0: int, policies: bool) -> tuple[np.ndarray, Any]:
        """Arms (lanes, L) played on contexts (lanes, L, n, d) and costs (lanes, L, n); with
        ``policies``, every lane's policy at each step ((lanes, L, p)) or None."""
        lanes, rows, n = costs.shape
        out = np.empty((rows, lanes), dtype=np.int64)
        pol: list[Any] = []
        idx = np.arange(lanes)
        # the engine's contexts are checked already: replify's own lane objects skip checking them again
        act = functools.partial(self.lanes._act, checked=True) if isinstance(self.lanes, ContextLanes) else self.lanes.act
        contexts, t = _read_only(contexts), 0
        try:
            for t in range(rows):
                arms = act(contexts[:, t])
                if not (type(arms) is np.ndarray and arms.shape == (lanes,) and arms.dtype == np.int64
                        and arms.view(np.uint64).max() < n):
                    arms = _checked_arms(arms, (lanes,), n, f"{self.name}.act(contexts)", t0 + t + 1)
                out[t] = arms
                if policies:
                    pol.append(_policy_of(self.lanes, lanes, self.name, t0 + t + 1))
                self.lanes.update(arms, costs[idx, t, arms].copy())
        except ValueError as exc:
            _if_wrote(exc, f"{self.name}.act(contexts)", t0 + t + 1)
            raise
        p = _stack_policies(pol) if policies else None
        return out.T.copy(), None if p is None else p.transpose(1, 0, 2)
