"""The lane-batched form of bandit learners (:mod:`replify.components.bandits` gives the protocol).

For speed across the many paired runs of an evaluation. Every pair
runs the same learner on the same kind of instance, so the runs of a group — its *lanes* — can
advance together, one numpy operation per step across all of them. A learner class offers it with

- ``for_lanes(learners) -> lanes`` (a classmethod): one object holding the state of every learner in
  ``learners`` (all of that class, built alike, none played yet) as arrays with a leading lanes
  axis, or ``None`` when it cannot (the engine then steps them one by one);

and the object has

- ``act() -> arms``: every lane's arm for the current step, an integer array of shape (lanes,)
  (idempotent within a step);
- ``update(arms, costs)``: ``arms`` what ``act()`` returned, ``costs`` the (lanes,) costs
  c_t(a_t) each lane observed — nothing else of c_t.

Each lane keeps its own random stream (the generator its learner was built with), so a pair's
results are the same floats whichever form plays it, and whatever other pairs share its group:
the conformance check ``check_lanes_equal_stepping`` (:mod:`replify.testing`) tests it, and
:class:`BanditLanes` is a base that keeps the step and the per-lane arrays (its subclasses
implement ``_choose`` and ``_learn``). :class:`LaneBandit` is a per-lane learner that steps a
lane object of one lane, so the two forms are one implementation: ``ucb1``, ``thompson``,
``exp3`` and ``exp3-doubling`` are built so.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, Sequence

import numpy as np
from typeguard import typeguard_ignore

from replify.components.bandits import BanditLearner, is_bandit
from replify.errors import ActionError, LearnerProtocolError


class BanditLanes:
    """Base of the lane-batched form (module docstring): every lane's state as arrays with a
    leading lanes axis, the step ``t`` the lanes share, and each lane's generator (``rngs``).

    ``act()`` asks :meth:`_choose` once per step and keeps the answer until ``update``, which
    hands the lanes' arms and observed costs to :meth:`_learn`. :meth:`stack` joins lane objects
    of one class — lanes of learners built alike, at the same step — into one; a subclass names
    its per-lane arrays in ``per_lane`` and the settings every lane must share in ``shared``."""

    #: names of the arrays whose first axis is the lanes (joined by :meth:`stack`)
    per_lane: ClassVar[tuple[str, ...]] = ()
    #: names of the settings every stacked lane must share (compared by :meth:`stack`)
    shared: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, n: int, horizon: int, rngs: Sequence[Any]) -> None:
        self.n, self.horizon = n, horizon
        if not isinstance(rngs, (list, tuple)):
            raise LearnerProtocolError(f"{type(self).__name__}: rngs must be a list with one generator per lane "
                                       f"(one lane: [rng]); got {type(rngs).__name__}")
        self.rngs = list(rngs)
        self.t = 0  # steps every lane has played
        self._arms: np.ndarray | None = None  # the current step's arms, once act() has chosen them
        self._offsets = np.arange(len(self.rngs), dtype=np.int64) * n  # lane i's arm a is flat index i·n + a

    @property
    def lanes(self) -> int:
        """How many lanes this object plays."""
        return len(self.rngs)

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def act(self) -> np.ndarray:
        """Every lane's arm for step t + 1, shape (lanes,)."""
        if self._arms is None:
            if self.t >= self.horizon:
                raise LearnerProtocolError(f"{type(self).__name__}.act() after the horizon ({self.horizon} steps played)")
            self._arms = self._choose()
        return self._arms

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def update(self, arms: np.ndarray, costs: np.ndarray) -> None:
        """The costs ``costs`` (lanes,) the lanes observed for the ``arms`` that :meth:`act` chose."""
        if self._arms is None:
            raise LearnerProtocolError(f"{type(self).__name__}.update() at step {self.t + 1} before act()")
        self._learn(self._offsets + arms, costs)
        self.t += 1
        self._arms = None

    def _choose(self) -> np.ndarray:
        """Every lane's arm for the step, an integer array of shape (lanes,)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _choose() -> arms, one per lane")

    def _learn(self, flat: np.ndarray, costs: np.ndarray) -> None:
        """Learn from each lane's cost; ``flat`` is lane i's arm as the index i·n + a into the
        flattened (lanes, n) arrays (``np.take``/``np.put`` read and write them in place)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _learn(flat, costs)")

    @classmethod
    def stack(cls, parts: Sequence[BanditLanes]) -> BanditLanes | None:
        """One object playing every lane of ``parts`` (each lane keeps its own generator), or
        None when they cannot be joined: another class, another size or setting, another step."""
        first = parts[0]
        names = ("n", "horizon", "t") + cls.shared
        if any(type(p) is not cls or any(getattr(p, k) != getattr(first, k) for k in names) for p in parts):
            return None
        pending = first._arms is not None
        if any((p._arms is not None) != pending for p in parts):
            return None
        out = object.__new__(cls)
        out.__dict__.update(first.__dict__)
        for name in cls.per_lane + (("_arms",) if pending else ()):
            setattr(out, name, np.concatenate([getattr(p, name) for p in parts]))
        out.rngs = [r for p in parts for r in p.rngs]
        out._offsets = np.arange(len(out.rngs), dtype=np.int64) * out.n
        return out


class LaneBandit(BanditLearner):
    """A bandit learner stepped through a lane object of one lane (``self._lane``, built by the
    subclass's ``__init__``, which then calls :meth:`_start`): stepping it and playing it in
    lanes run the same code, so they agree bit for bit. ``for_lanes`` stacks the learners' own
    lane objects."""

    _lane: BanditLanes

    def _start(self, lane: BanditLanes) -> None:
        self._lane = lane
        self._action = self._choose()

    @classmethod
    def for_lanes(cls, learners: Sequence[Any]) -> BanditLanes | None:
        """The lane-batched form of ``learners`` (module docstring), or None when they are not
        all of this class, built alike, at the same step — or when the class changes how it
        steps (a subclass overriding ``act``, ``update``, ``_learn`` or ``_choose``: its lane
        object would not play what it does, so it is stepped lane by lane)."""
        if not learners or any(type(lr) is not cls for lr in learners) or cls._steps_its_own_way():
            return None
        return type(learners[0]._own_lane()).stack([lr._own_lane() for lr in learners])

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def _own_lane(self) -> BanditLanes:
        lane = getattr(self, "_lane", None)
        if not isinstance(lane, BanditLanes):
            raise LearnerProtocolError(f"{type(self).__name__}.__init__ must end with self._start(lane), lane a "
                                       f"BanditLanes of one lane; got {lane!r}")
        return lane

    @classmethod
    def _steps_its_own_way(cls) -> bool:
        return not (cls.act is BanditLearner.act and cls.update is BanditLearner.update
                    and cls._learn is LaneBandit._learn and cls._choose is LaneBandit._choose)

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def _learn(self, action: int, cost: float) -> None:
        self._own_lane().update(np.array([action], dtype=np.int64), np.array([cost]))

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def _choose(self) -> int:
        arms = np.asarray(self._own_lane().act())
        if arms.shape != (1,) or arms.dtype.kind not in "iu":
            raise ActionError(f"{type(self._lane).__name__}.act() on one lane must return an integer array of shape (1,); "
                              f"got shape {arms.shape}, dtype {arms.dtype}")
        return int(arms[0])


def lane_form(learners: Sequence[Any]) -> Any:
    """The lane-batched form of a group's bandit learners when their class offers one
    (``for_lanes``) and it takes them, else None (the engine steps them one by one)."""
    cls = type(learners[0])
    make = getattr(cls, "for_lanes", None)
    if not callable(make) or any(type(lr) is not cls for lr in learners) or not is_bandit(learners[0]):
        return None
    if not (inspect.ismethod(make) or isinstance(inspect.getattr_static(cls, "for_lanes"), staticmethod)):
        # a plain function, an instance method: it would be called without the class
        raise LearnerProtocolError(f"{cls.__name__}.for_lanes must be a classmethod (or staticmethod) taking the list "
                                   f"of learners; got {type(make).__name__} {make!r}")
    lanes = make(list(learners))
    if lanes is None:
        return None
    for method in ("act", "update"):
        if not callable(getattr(lanes, method, None)):
            raise LearnerProtocolError(f"{cls.__name__}.for_lanes() must return an object with act() and update(arms, costs) "
                                       f"(a contextual learner's: act(contexts)); {type(lanes).__name__} has no {method}()")
    return lanes


def offers_lanes(learner: Any) -> bool:
    """Whether ``learner`` is a bandit learner whose class offers the lane-batched form (a
    :class:`LaneBandit` subclass that steps its own way does not)."""
    cls = type(learner)
    if isinstance(learner, LaneBandit) and cls._steps_its_own_way():
        return False
    return callable(getattr(cls, "for_lanes", None)) and is_bandit(learner)


class LaneFeed:
    """What the engine hands a lane-batched bandit learner (module docstring): per step, every
    lane's arm in one ``act()`` call and every lane's observed cost c_t(a_t) in one ``update``
    call — nothing else of c_t. Each step's arms are checked (an integer array of shape
    (lanes,), every arm in [0, n)) before any cost is looked up."""

    def __init__(self, lanes: Any, n: int) -> None:
        self.lanes, self.n = lanes, n
        self.name = type(lanes).__name__

    def play(self, costs: np.ndarray, t0: int) -> tuple[np.ndarray, np.ndarray]:
        """The arms played on ``costs`` (lanes, L, n), steps t0+1..t0+L, and the cost each lane
        paid (the one it observed), both (lanes, L). ``costs`` may be the first L rows of a
        larger (lanes, R, n) buffer: its costs are read in place."""
        lanes, rows, n = costs.shape
        # lane i's cost of arm a at row t is at i·s_lane + t·s_row + a in the underlying memory
        if costs.strides[1:] == (n * 8, 8) and costs.dtype == np.float64 and costs.strides[0] % 8 == 0:
            stride = costs.strides[0] // 8
            flat = np.lib.stride_tricks.as_strided(costs, shape=((lanes - 1) * stride + rows * n,), strides=(8,))
        else:
            stride = rows * n
            flat = np.ascontiguousarray(costs, dtype=np.float64).reshape(-1)
        base = np.arange(lanes, dtype=np.int64) * stride + np.arange(0, rows * n, n, dtype=np.int64)[:, None]
        arms_out = np.empty((rows, lanes), dtype=np.int64)
        paid = np.empty((rows, lanes))
        act, update = self.lanes.act, self.lanes.update
        for t in range(rows):
            arms = act()
            if not (type(arms) is np.ndarray and arms.shape == (lanes,) and arms.dtype == np.int64
                    and arms.view(np.uint64).max() < n):  # a negative arm is a huge unsigned one
                arms = self._checked(arms, lanes, t0 + t + 1)
            arms_out[t] = arms
            seen = flat.take(base[t] + arms)
            paid[t] = seen  # kept before the learner sees it: it may write into what it is given
            update(arms, seen)
        return arms_out.T.copy(), paid.T.copy()

    def play_law(self, kind: str, loc: np.ndarray, scale: float, variates: np.ndarray,
                 t0: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`play` where only the played arm's cost is drawn (replify.engine.played): step t's
        cost for lane i's arm a is ``scale·[U < loc[t, a]]`` (``"bernoulli"``) or ``loc[t, a] +
        scale·Z`` (``"normal"``), from the lane's variate of the step (``variates``: (lanes, L))."""
        lanes, rows = variates.shape
        n, obj = self.n, self.lanes
        arms_out = np.empty((rows, lanes), dtype=np.int64)
        paid = np.empty((rows, lanes))
        # replify's own lane objects are stepped through their _choose and _learn (act and update
        # only wrap them, with checks the engine makes itself: it plays exactly T steps, in order)
        own = (isinstance(obj, BanditLanes) and type(obj).act is BanditLanes.act and type(obj).update is BanditLanes.update
               and not {"act", "update"} & vars(obj).keys())  # (nor on the object itself)
        act, update = (obj._choose, obj._learn) if own else (obj.act, obj.update)
        offsets = obj._offsets if own else 0
        flat_loc = loc.reshape(-1)
        step = n if loc.shape[0] > 1 else 0  # one row: the same law at every step of the chunk
        u = np.ascontiguousarray(variates.T)  # (L, lanes): a step's variates in one row
        bernoulli = kind == "bernoulli"
        # what the learner is handed is a read-only view of the step's row of ``paid`` (what it may
        # not write into: the costs kept), cheaper than a copy a step
        shown = paid.view()
        shown.flags.writeable = False
        t = 0
        try:
            for t, (ut, seen, row, view) in enumerate(zip(u, paid, arms_out, shown)):
                if own:  # (an arm chosen before the first step — at build, say — is the step's own)
                    arms = obj._arms
                    if arms is None:
                        arms = act()
                    else:
                        obj._arms = None
                else:
                    arms = act()
                # the type, shape and dtype each step; the range of every arm once a chunk, below (an arm
                # out of range raises on the way, or is found there before anything it produced is used)
                if not (type(arms) is np.ndarray and arms.shape == (lanes,) and arms.dtype == np.int64):
                    arms = self._checked(arms, lanes, t0 + t + 1)
                row[:] = arms
                p = flat_loc.take(arms + t * step) if step else flat_loc.take(arms)
                if bernoulli:
                    np.less(ut, p, out=seen, casting="unsafe")  # 0.0 / 1.0
                    if scale != 1.0:
                        seen *= scale
                else:
                    np.multiply(ut, scale, out=seen)
                    seen += p
                if own:
                    update(offsets + arms, seen.copy())
                    obj.t += 1
                else:
                    update(arms, seen.copy())
        except Exception:  # an arm out of range may be what made it fail: said as such, if so
            self._range(arms_out[:t], t0)
            if isinstance(arms, np.ndarray) and arms.shape == (lanes,):
                self._checked(arms, lanes, t0 + t + 1)
            raise
        self._range(arms_out, t0)
        return arms_out.T.copy(), paid.T.copy()

    def _range(self, arms: np.ndarray, t0: int) -> None:
        """Every arm of ``arms`` ((steps, lanes), steps t0+1..) in [0, n), or the first that is not
        refused with its step and lane (a negative arm is a huge unsigned one)."""
        if arms.size and arms.view(np.uint64).max() >= self.n:
            t = int(np.argwhere(arms.view(np.uint64) >= self.n)[0][0])
            self._checked(arms[t], arms.shape[1], t0 + t + 1)

    def _checked(self, arms: Any, lanes: int, step: int) -> np.ndarray:
        a = np.asarray(arms)
        if a.shape != (lanes,) or a.dtype.kind not in "iu":
            raise ActionError(f"{self.name}.act() at step {step} must return an integer array of shape ({lanes},), "
                              f"one arm per lane; got {type(arms).__name__} of shape {a.shape}, dtype {a.dtype}")
        bad = (a < 0) | (a >= self.n)
        if bad.any():
            i = int(np.argmax(bad))
            raise ActionError(f"{self.name}.act() at step {step} gave lane {i} arm {int(a[i])}, outside [0, {self.n})")
        return a.astype(np.int64)
