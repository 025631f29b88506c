"""The conformance checks of a learner (docs/plugins.md, "Testing a plugin"): valid actions, ``rng``
its only randomness, ``run`` equal to stepping, the horizon and domain it declares, inputs
untouched, and each batched form (segments, batches, lanes, cycles) equal to stepping;
:func:`check_learner` runs them all on any learner :func:`replify.evaluate` takes."""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Mapping

import attrs
import numpy as np

from replify.base.checks import CostDomain, check_action, check_feedback, check_int, check_rho
from replify.base.checks import check_learner as check_protocol
from replify.errors import ActionError, InvalidArgumentError, ReplifyWarning
from replify.components.bandits import is_bandit
from replify.components.bandit_lanes import lane_form
from replify.components.contextual import DRAW_BLOCK, is_contextual
from replify.engine.cycles import checked_cycle
from replify.plugins.registry import registry
from replify.plugins.specs import ENFORCEABLE, AdversarySpec, LearnerSpec
from replify.sources import learner_arg
from replify.testing.common import (
    CHECK_HORIZON, CHECK_N, LANE_CHECK_HORIZON, _act, _build, _context_arg, _costs, _enforces, _step, check_contexts,
    named_spec,
)


def check_run_equals_stepping(spec: Any) -> None:
    """``run(costs)`` returns the actions a loop of act()/update() plays, bit for bit."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 1)
    if not callable(getattr(learner, "run", None)):
        return
    costs = _costs(spec, n, horizon, 2)
    stepped = [_step(learner, c) for c in costs]
    other, _, _ = _build(spec, 1)
    batch = np.asarray(other.run(costs))
    assert np.array_equal(np.asarray(stepped), batch), f"{spec.name}: run() differs from stepping"


def check_horizon(spec: Any) -> None:
    """An update past the horizon is refused — for a learner that declares it (``"horizon"`` in
    its spec's ``enforces``, or in the learner's own ``enforces`` attribute)."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 3)
    if "horizon" not in _enforces(spec, learner):
        return
    for c in _costs(spec, n, horizon, 4):
        _step(learner, c)
    try:
        _step(learner, _costs(spec, n, 1, 5)[0])
    except (ValueError, RuntimeError):
        return
    raise AssertionError(f"{spec.name}: update() past the horizon T={horizon} was accepted")


def check_inputs_untouched(spec: Any) -> None:
    """The caller's cost arrays — and a contextual learner's contexts, whether stepped or given a
    batch's or a cycle's first context — are never written to."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 6)
    costs = _costs(spec, n, horizon, 7)
    before = costs.copy()
    if is_contextual(learner):
        contexts = check_contexts(n, horizon, seed=7)  # a new context every step (one repeated, if it needs that)
        if getattr(learner, "needs_fixed_contexts", False):
            contexts = np.repeat(contexts[:1], horizon, axis=0)
        shown = contexts.copy()
        for t, c in enumerate(costs):
            a = int(learner.act(contexts[t]))
            learner.update(a, float(c[a]))
        assert np.array_equal(contexts, shown), f"{spec.name}: act(context) wrote into the context it was given"
        for method in ("next_batch", "next_cycle"):
            if callable(getattr(learner, method, None)):
                fresh, _, _ = _build(spec, 6)
                context = check_contexts(n)
                kept = context.copy()
                getattr(fresh, method)(context)
                assert np.array_equal(context, kept), f"{spec.name}: {method}(context) wrote into the context it was given"
    elif callable(getattr(learner, "run", None)):
        learner.run(costs)
    else:
        for c in costs:
            _step(learner, c)
    assert np.array_equal(costs, before), f"{spec.name}: the caller's costs were modified"


def _read_only(arrays: tuple) -> tuple:
    """Read-only views of the arrays a check hands a learner, as the engine hands them."""
    out = []
    for a in arrays:
        v = np.asarray(a).view()
        v.flags.writeable = False
        out.append(v)
    return tuple(out)


def check_domain_enforced(spec: Any) -> None:
    """A cost outside the declared domain is refused (the learner checks what it is given; a NaN,
    for one that takes any real cost) — for a learner that declares it (``"domain"`` in its spec's or its own ``enforces``)."""
    spec = _spec(spec)
    learner, n, _ = _build(spec, 8)
    if "domain" not in _enforces(spec, learner):
        return
    # the learner's own domain when it declares one; where it takes any real cost (Gaussian noise),
    # a NaN is what lies outside it
    domain = getattr(learner, "domain", None)
    high = domain.high if isinstance(domain, CostDomain) else spec.cost_range[1]
    bad = np.full(n, high + 1.0 if math.isfinite(high) else math.nan)
    try:
        _step(learner, bad)
    except ValueError:
        return
    raise AssertionError(f"{spec.name}: a cost {bad.tolist()} outside its declared domain was accepted")


def check_segments_equal_stepping(spec: Any) -> None:
    """A learner with the engine's segment protocol (``next_segment``, ``advance``) plays, when
    each summed segment is handed the exact sum of its steps, the actions stepping plays. The
    costs are 0/1 (scaled into the domain), so every sum is exact in any order."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 14)
    if not (callable(getattr(learner, "next_segment", None)) and callable(getattr(learner, "advance", None))):
        return
    low, high = spec.cost_range
    costs = low + (high - low) * (np.random.default_rng(15).random((horizon, n)) < 0.5)
    costs = costs / n if spec.norm == "l1" else costs
    stepper, _, _ = _build(spec, 14)
    stepped = [_step(stepper, c) for c in costs]
    played, t = [], 0
    while t < horizon:
        steps, summed = learner.next_segment()
        assert 1 <= steps <= horizon - t, f"{spec.name}: next_segment() at step {t} gave {steps} steps"
        if summed:
            played += [np.array(learner.act(), copy=True)] * steps
            learner.advance(costs[t : t + steps].sum(axis=0), steps)
        else:
            played += list(np.asarray(learner.run(costs[t : t + steps])))
        t += steps
    assert np.array_equal(np.asarray(played), np.asarray(stepped)), \
        f"{spec.name}: playing by segments differs from stepping"


def check_bandit_batches_equal_stepping(spec: Any) -> None:
    """A bandit learner with batches (``next_batch``/``observe``) plays, batch by batch and seeing
    only its arms' costs, the arms that stepping it (``act``/``update(a, c[a])``) plays."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 16)
    if not (is_bandit(learner) and callable(getattr(learner, "next_batch", None))):
        return
    costs = _costs(spec, n, horizon, 17)
    stepper, _, _ = _build(spec, 16)
    stepped = [int(_step(stepper, c)) for c in costs]
    played: list[int] = []
    while len(played) < horizon:
        given = _context_arg(learner, n)
        arms = np.array(learner.next_batch(*_read_only(given)))  # a copy: the engine copies a batch too
        assert arms.ndim == 1 and 1 <= arms.size <= horizon - len(played) and arms.dtype.kind in "iu", \
            f"{spec.name}: next_batch() after {len(played)} steps gave {arms!r}, not 1..{horizon - len(played)} integer arms"
        t = len(played)
        played += arms.tolist()
        learner.observe(costs[t : t + arms.size][np.arange(arms.size), arms])
    assert played == stepped, f"{spec.name}: playing by batches differs from stepping"


def check_lanes_equal_stepping(spec: Any) -> None:
    """A bandit learner whose class offers the lane-batched form (``for_lanes``) plays, in lanes,
    every lane's arms exactly as stepping that lane's learner alone does — bit for bit, whichever
    other lanes share the object (each lane keeps its own generator). Lanes see 0/1 and
    fractional costs; the lanes' object takes learners built alike with different seeds."""
    spec = _spec(spec)
    probe, n, horizon = _build(spec, 30)
    make = getattr(type(probe), "for_lanes", None)
    if not (is_bandit(probe) and callable(make)):
        return
    # long enough for what a lane form draws ahead in blocks to be drawn again (a refill that
    # mixes the lanes' streams shows only then): a contextual lane form draws DRAW_BLOCK steps at
    # once, so two refills after the first draw
    contextual = is_contextual(probe)
    horizon = max(horizon, 2 * DRAW_BLOCK + 1 if contextual else LANE_CHECK_HORIZON)
    lanes = 6
    costs, contexts = [], []
    for i in range(lanes):  # fractional costs, and 0/1 costs (their own branch in some learners)
        c = _costs(spec, n, horizon, 40 + i)
        costs.append(np.round(c) if i % 2 else c)
        # contextual learners: contexts that change at every step, each lane its own
        contexts.append(check_contexts(n, horizon, seed=60 + i) if contextual else None)
    stepped = []
    for i in range(lanes):
        learner, _, _ = _build(spec, 30 + i, horizon)
        if contextual:
            played = []
            for t in range(horizon):
                a = int(learner.act(contexts[i][t]))
                learner.update(a, float(costs[i][t, a]))
                played.append(a)
            stepped.append(played)
        else:
            stepped.append([int(_step(learner, c)) for c in costs[i]])
    for group in (list(range(lanes)), [3, 0], [4]):
        built = [_build(spec, 30 + i, horizon)[0] for i in group]
        form = lane_form(built)  # the engine's own call and checks
        if form is None:  # the class declines (a subclass that steps its own way): the engine steps it alone
            return
        for t in range(horizon):
            # contexts read-only, as the engine hands them: a lane form that writes into them fails here
            arms = np.asarray(form.act(_read_only((np.stack([contexts[i][t] for i in group]),))[0]) if contextual
                              else form.act())
            assert arms.shape == (len(group),) and arms.dtype.kind in "iu", \
                f"{spec.name}: the lanes' act() at step {t + 1} gave {arms!r}, not one integer arm per lane"
            assert ((arms >= 0) & (arms < n)).all(), f"{spec.name}: the lanes' act() at step {t + 1} gave {arms!r}, " \
                f"arms outside [0, {n})"
            want = [stepped[i][t] for i in group]
            assert arms.tolist() == want, (
                f"{spec.name}: in lanes {group}, step {t + 1} played {arms.tolist()}; stepped alone, the same learners "
                f"play {want}")
            form.update(arms, np.array([costs[i][t, a] for i, a in zip(group, arms.tolist())]))


def check_cycles_equal_stepping(spec: Any) -> None:
    """A bandit learner with round-robin batches (``next_cycle``/``observe_sums``) plays, cycle by
    cycle and told only each arm's cost sum and pulls, the arms that stepping it plays."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 22)
    if not (is_bandit(learner) and callable(getattr(learner, "next_cycle", None))
            and callable(getattr(learner, "observe_sums", None))):
        return
    costs = np.round(_costs(spec, n, horizon, 23))  # 0/1 costs: the sums are exact in any order
    stepper, _, _ = _build(spec, 22)
    stepped = np.array([int(_step(stepper, c)) for c in costs], dtype=np.int64)
    t = 0
    while t < horizon:
        try:  # the engine's own check of (arms, length): integer arms in [0, n), an integer length
            arms, length = checked_cycle(learner.next_cycle(*_read_only(_context_arg(learner, n))), n=n,
                                         left=horizon - t, step=t + 1, name=spec.name)
        except ValueError as exc:
            raise AssertionError(str(exc)) from None
        played = arms[np.arange(int(length)) % arms.size]
        assert np.array_equal(played, stepped[t : t + int(length)]), \
            f"{spec.name}: the cycle from step {t + 1} plays {played[:10].tolist()}…; stepping plays {stepped[t : t + 10].tolist()}…"
        seen = costs[t : t + int(length)][np.arange(int(length)), played]
        learner.observe_sums(np.bincount(played, weights=seen, minlength=n), np.bincount(played, minlength=n))
        t += int(length)


def check_actions_valid(spec: Any) -> None:
    """Every ``act()`` over a run is a valid action: an expert index in [0, n) (an OLO learner: a
    finite vector of shape (n,); a learner playing mixed strategies, ``mixed = True``: a
    probability vector over the experts) — what the engine would refuse mid-evaluation."""
    spec = _spec(spec)
    learner, n, horizon = _build(spec, 18)
    check_protocol(learner, source=f"{spec.name}'s factory")
    mixed = bool(getattr(learner, "mixed", False))
    for t, c in enumerate(_costs(spec, n, horizon, 19)):
        action = _act(learner, n)
        try:
            if mixed:
                p = check_action(action, n=n, problem="olo", step=t + 1, source=f"{spec.name}: act()")
                if np.any(p < 0) or not np.isclose(p.sum(), 1.0):
                    raise AssertionError(f"{spec.name}: act() returned {p.tolist()} at step {t + 1}, a mixed strategy "
                                         "that is not a probability vector")
            else:
                check_action(action, n=n, problem=getattr(learner, "problem", spec.problem), step=t + 1,
                             source=f"{spec.name}: act()")
        except ActionError as exc:
            raise AssertionError(str(exc)) from None
        if is_bandit(learner):
            arm = int(action) if not mixed else int(np.argmax(action))
            learner.update(arm, float(c[arm]))
        else:
            learner.update(c)


def check_rng_only(spec: Any) -> None:
    """``rng`` is the learner's only source of randomness: two learners built from generators seeded
    alike and fed the same costs play the same actions (a learner drawing from numpy's global
    state, or from the clock, does not) — the paired runs of an evaluation rely on it."""
    spec = _spec(spec)
    costs = None
    plays = []
    for _ in range(2):
        learner, n, horizon = _build(spec, 20)
        costs = _costs(spec, n, horizon, 21) if costs is None else costs
        plays.append(np.asarray([_step(learner, c) for c in costs]))
    assert np.array_equal(plays[0], plays[1]), (
        f"{spec.name}: two learners built from generators seeded alike played differently on the same costs; "
        "rng must be its only source of randomness (not numpy's global state, not the clock)")


LEARNER_CHECKS: tuple[Callable[[Any], None], ...] = (
    check_actions_valid, check_rng_only, check_run_equals_stepping, check_horizon, check_inputs_untouched,
    check_domain_enforced, check_segments_equal_stepping, check_bandit_batches_equal_stepping,
    check_lanes_equal_stepping, check_cycles_equal_stepping,
)

def check_learner(
    spec: Any, *, n: int | None = None, horizon: int | None = None, label: str | None = None,
    learner_params: Mapping[str, Any] | None = None, rho: float | None = None,
) -> None:
    """Run every learner check on ``spec``: a :class:`~replify.LearnerSpec`, or anything
    :func:`replify.evaluate` takes as a learner (:func:`learner_spec`; ``n``, ``horizon`` and
    ``learner_params`` size and configure it, ``rho`` is the ρ to build a learner that needs one
    at — a class wrapped without ``rho``, say —, ``label`` names it in the failures)."""
    spec = learner_spec(spec, n=n, horizon=horizon, label=label, learner_params=learner_params, rho=rho,
                        argument="spec", caller="check_learner")
    for check in LEARNER_CHECKS:
        check(spec)


def learner_spec(
    learner: Any, *, n: int | None = None, horizon: int | None = None, label: str | None = None,
    learner_params: Mapping[str, Any] | None = None, rho: float | None = None, argument: str = "learner",
    caller: str = "learner_spec",
) -> LearnerSpec:
    """The :class:`~replify.LearnerSpec` the checks run on, for any learner argument: a spec or a
    registered name as it is (with ``rho``, its ``test_params`` build it at that ρ); a learner of
    yours (:func:`replify.sources.learner_arg`) as a spec whose factory builds it — its problem,
    cost domain and feedback read off one built learner (``domain``, ``problem``, ``feedback``
    attributes; costs in [0, 1] and full information when it declares none), its ``enforces`` from
    the class. ``n`` and ``horizon`` default to the checks' sizes, or to the sizes a wrapped class
    or a ``seed -> learner`` callable was built for (its ``n`` and ``horizon`` attributes);
    ``learner_params`` are passed to the factory, and ``rho`` to a learner that takes one (a class
    wrapped without ``rho`` needs it). :func:`check_learner` and :func:`parametrize_with_checks`
    accept the same learners (list ``learner_spec(MyClass, rho=0.1)`` among the latter's specs to
    give one its ρ)."""
    rho = None if rho is None else check_rho(rho)
    if isinstance(learner, str) and learner in registry().learners():
        learner = registry().learner(learner)
    if isinstance(learner, LearnerSpec):
        return learner if rho is None else _spec_at_rho(learner, rho, caller)
    arg = learner_arg(learner, label=label, argument=argument)
    if arg.kind == "registered":
        return arg.spec if rho is None else _spec_at_rho(arg.spec, rho, caller)
    if arg.needs_rho() and rho is None:
        how = (f"list learner_spec({arg.label}, rho=0.1) among the specs instead" if caller == "parametrize_with_checks"
               else f"{caller}({arg.label}, rho=0.1)")
        raise InvalidArgumentError(
            f"{arg.label!r} was wrapped without rho, and {caller}() builds it to check it; expected rho in (0, 1), the "
            f"rho to build it at: {how}; or wrap it with one, @replify.wrap(rho=..., ...)"
        )
    if rho is not None and not (arg.kind == "replicable" or arg.takes_rho()):
        raise InvalidArgumentError(
            f"rho applies to a learner built with one (a wrapped class, a factory taking rho); {arg.label!r} takes none: "
            f"leave rho out of {caller}()"
        )
    params = dict(learner_params or {})
    fixed = arg.obj.options if arg.kind == "replicable" else {}
    if arg.kind == "seeded":
        probe = arg.obj(0)
        n = n if n is not None else getattr(probe, "n", None)
        horizon = horizon if horizon is not None else getattr(probe, "horizon", None)
        if n is None or horizon is None:
            raise InvalidArgumentError(
                f"learner {arg.label!r} is a callable seed -> learner whose learner has no n and horizon attributes; "
                "expected n= and horizon= (the sizes it builds its learner for)"
            )
    n = check_int("n", n if n is not None else fixed.get("n", CHECK_N), minimum=2)
    horizon = check_int("horizon", horizon if horizon is not None else fixed.get("horizon", CHECK_HORIZON), minimum=1)
    factory = _SizedFactory(arg, params, rho)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        probe = check_protocol(factory(n=n, horizon=horizon, rng=np.random.default_rng(0)),
                               source=f"learner {arg.label!r}")
    domain = getattr(probe, "domain", None)
    low, high = (domain.low, domain.high) if domain is not None else (0.0, 1.0)
    declared = getattr(getattr(arg.obj, "__wrapped__", arg.obj), "enforces", ())
    return LearnerSpec(
        arg.label, factory, getattr(probe, "problem", "experts"),
        norm="l1" if domain is not None and domain.l1 else "linf",
        cost_range=(low, high) if (low, high) in ((0.0, 1.0), (-1.0, 1.0)) else (0.0, 1.0),
        feedback=check_feedback(probe), test_params={"n": n, "horizon": horizon},
        enforces=frozenset(declared) & ENFORCEABLE if isinstance(declared, (set, frozenset, tuple, list)) else (),
    )


def _spec_at_rho(spec: LearnerSpec, rho: float, caller: str) -> LearnerSpec:
    """A registered learner's spec whose ``test_params`` build it at ``rho``."""
    if spec.parameters is None and spec.guarantee is None:
        raise InvalidArgumentError(
            f"rho applies to a learner built with one; {spec.name!r} is not replicable and takes none: leave rho out of "
            f"{caller}()"
        )
    given = spec.test_params

    def at_rho(n: int, horizon: int) -> dict[str, Any]:
        return {**(given(n, horizon) if callable(given) else given), "rho": rho}

    return attrs.evolve(spec, test_params=at_rho)


class _SizedFactory:
    """``factory(n=, horizon=, rng=)`` for any learner argument: the rng's first draw is the seed of
    a wrapped class or a ``seed -> learner`` callable (two generators seeded alike build the same
    learner, as the checks need)."""

    def __init__(self, arg: Any, params: Mapping[str, Any], rho: float | None = None) -> None:
        self.arg, self.params, self.rho = arg, dict(params), rho

    def __call__(self, *, n: int, horizon: int, rng: np.random.Generator, **kw: Any) -> Any:
        if self.arg.kind == "factory":
            extra = {} if self.rho is None else {"rho": self.rho}
            return self.arg.obj(n=n, horizon=horizon, rng=rng, **self.params, **extra, **kw)
        seed = int(rng.integers(2**63))
        if self.arg.kind == "seeded":
            return self.arg.obj(seed)
        return self.arg.builder(n=n, horizon=horizon, rho=self.rho, params={**self.params, **kw})(seed)


def _spec(spec: Any) -> LearnerSpec:
    """The spec a learner check runs on: a spec or registered name as it is, or any learner
    :func:`replify.evaluate` takes (:func:`learner_spec`)."""
    if not isinstance(spec, (LearnerSpec, AdversarySpec)):
        return learner_spec(spec, argument="spec")
    return named_spec(spec, "learner")
