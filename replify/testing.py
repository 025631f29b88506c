"""Replicability and conformance in a user's own test suite.

* :func:`assert_replicable` — a statistical assertion built on the sequential test of
  :mod:`replify.evaluation.sequential`: it passes as soon as the anytime-valid interval for ρ lies below the
  target, and fails with ρ̂, the interval and the pairs run otherwise.
* :func:`check_learner`, :func:`check_adversary`, :func:`parametrize_with_checks` — the
  deterministic conformance checks a plugin author runs in CI, as scikit-learn's
  ``check_estimator``/``parametrize_with_checks`` do: every action is valid, ``rng`` is the
  learner's only source of randomness (two learners seeded alike play alike), stepping equals
  ``run`` bit for bit, the lane-batched form of a bandit learner plays each lane as stepping it
  alone does, the caller's arrays are untouched, consecutive chunks equal one ``sample``, ``sample_sums`` has the
  law of the summed steps, and a learner with the engine's segment protocol plays by segments
  what it plays by steps. A check demands only what the protocol demands (docs/wrapper.md):
  refusing an update past the horizon and a cost outside the declared domain are properties a
  learner *declares* (``LearnerSpec(enforces={"horizon", "domain"})``, or a class attribute
  ``enforces``), and are checked only then. A spec's ``test_params`` supply the arguments a check
  needs (``n`` and ``horizon`` among them). :func:`check_learner` takes any learner
  :func:`replify.evaluate` takes — a registered name or spec, your class or factory, a wrapped
  class, a callable ``seed -> learner``, a ``"module:Name"`` reference.

The pytest plugin ``replify_pytest`` (entry point ``pytest11``) provides the fixture
``assert_replicable``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, Iterator, Mapping

import attrs
import numpy as np

from replify.base.checks import check_action, check_feedback, check_int, check_probability, check_rho
from replify.base.checks import check_learner as check_protocol
from replify.errors import ActionError, ArgumentTypeError, InvalidArgumentError, ReplifyWarning
from replify.evaluation.evaluate import evaluate
from replify.components.bandits import is_bandit, lane_form
from replify.engine.declarations import contradiction, declared_bounds, declared_pieces
from replify.plugins.registry import registry
from replify.plugins.specs import ENFORCEABLE, AdversarySpec, LearnerSpec
from replify.sources import learner_arg

#: Sizes the conformance checks use unless a spec's ``test_params`` say otherwise.
CHECK_N, CHECK_HORIZON = 3, 120
#: The horizon of the lane-form check, at least.
LANE_CHECK_HORIZON = 2_500


def assert_replicable(
    learner: Any, adversary: Any, *, rho: float, n: int, horizon: int, alpha: float = 0.05, max_pairs: int = 2000,
    seed: int = 0, **evaluate_kw: Any,
) -> Any:
    """Assert that ``learner`` is ρ-replicable on ``adversary`` (measured): run pairs in batches
    until the anytime-valid confidence sequence for the failure rate lies below ``rho`` (pass; the
    report is returned) or above it, or ``max_pairs`` are spent (fail, with ρ̂, the interval and
    the pairs run). False alarms: a learner whose failure rate is at most ρ is declared "above" with
    probability at most ``alpha``; it can also fail "undecided" when its rate is so close to ρ that
    ``max_pairs`` do not separate them (about (1/(ρ − rate))²·ln(1/α) pairs are needed).

    ``learner`` is anything :func:`replify.evaluate` takes; one that cannot be built without ρ (a
    replicable registered learner, a class wrapped without ``rho``) is built at ``rho``. The
    other keywords (``label``, ``adversary_params``, hyperparameters, …) go to evaluate."""
    # Checked here, so that a bad value is named as this function's argument, not evaluate()'s
    # (rho is evaluate's target, max_pairs its pairs).
    rho = check_rho(rho)
    alpha = check_probability("alpha", alpha, open_low=True, open_high=True)
    max_pairs = check_int("max_pairs", max_pairs, minimum=2)
    if "rho" in evaluate_kw:
        raise InvalidArgumentError(
            "assert_replicable(rho=...) is the rho asserted, and the rho a learner that needs one is built with; "
            f"got another rho={evaluate_kw['rho']!r} in the keywords for evaluate"
        )
    if learner_arg(learner, label=evaluate_kw.get("label")).needs_rho():
        evaluate_kw["rho"] = rho
    report = evaluate(learner, adversary, n=n, horizon=horizon, pairs=max_pairs, seed=seed, target=rho,
                      sequential=True, alpha=alpha, **evaluate_kw)
    if report.decision != "below":
        lo, hi = report.sequential_interval
        raise AssertionError(
            f"{report.learner} is not shown {rho}-replicable on {report.adversary}: decision {report.decision!r} "
            f"after {report.pairs} pairs, rho_hat={report.rho_hat:.4f}, anytime-valid {1 - alpha:.0%} interval "
            f"[{lo:.4f}, {hi:.4f}]"
        )
    return report


# -- conformance checks ----------------------------------------------------------------------------


def _params(spec: Any, n: int, horizon: int) -> dict[str, Any]:
    tp = spec.test_params
    return dict(tp(n, horizon) if callable(tp) else tp)


def _sizes(spec: Any) -> tuple[int, int, dict[str, Any]]:
    first = _params(spec, CHECK_N, CHECK_HORIZON)
    n = check_int(f"{spec.name}: test_params['n']", first.pop("n", CHECK_N), minimum=2)
    horizon = check_int(f"{spec.name}: test_params['horizon']", first.pop("horizon", CHECK_HORIZON), minimum=1)
    params = _params(spec, n, horizon)
    params.pop("n", None)
    params.pop("horizon", None)
    return n, horizon, params


def _costs(spec: Any, n: int, horizon: int, seed: int) -> np.ndarray:
    """Costs inside the spec's declared domain (ℓ1-bounded ones scaled by 1/n)."""
    rng = np.random.default_rng(seed)
    low, high = spec.cost_range
    costs = rng.uniform(low, high, size=(horizon, n))
    return costs / n if spec.norm == "l1" else costs


def _build(spec: Any, seed: int, horizon: int | None = None) -> tuple[Any, int, int]:
    n, sized, params = _sizes(spec)
    horizon = sized if horizon is None else horizon
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        learner = spec.factory(n=n, horizon=horizon, rng=np.random.default_rng(seed), **params)
    if isinstance(spec, LearnerSpec):  # a learner, not an adversary: the protocol, with errors that say what is missing
        check_protocol(learner, source=f"{spec.name}'s factory")
    return learner, n, horizon


def _step(learner: Any, cost: np.ndarray) -> Any:
    """One step of the protocol the learner declares: act(), then update(c) — or, for a bandit
    learner, update(a, c[a]) with the arm it played. Returns the action."""
    action = np.array(learner.act(), copy=True)
    if is_bandit(learner):
        learner.update(int(action), float(cost[int(action)]))
    else:
        learner.update(cost)
    return action


def check_run_equals_stepping(spec: Any) -> None:
    """``run(costs)`` returns the actions a loop of act()/update() plays, bit for bit."""
    spec = _spec(spec, "learner")
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
    spec = _spec(spec, "learner")
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
    """The caller's cost arrays are never written to."""
    spec = _spec(spec, "learner")
    learner, n, horizon = _build(spec, 6)
    costs = _costs(spec, n, horizon, 7)
    before = costs.copy()
    if callable(getattr(learner, "run", None)):
        learner.run(costs)
    else:
        for c in costs:
            _step(learner, c)
    assert np.array_equal(costs, before), f"{spec.name}: the caller's costs were modified"


def check_domain_enforced(spec: Any) -> None:
    """A cost outside the declared domain is refused (the learner checks what it is given) — for
    a learner that declares it (``"domain"`` in its spec's or its own ``enforces``)."""
    spec = _spec(spec, "learner")
    learner, n, _ = _build(spec, 8)
    if "domain" not in _enforces(spec, learner):
        return
    bad = np.full(n, spec.cost_range[1] + 1.0)
    try:
        _step(learner, bad)
    except ValueError:
        return
    raise AssertionError(f"{spec.name}: a cost {bad.tolist()} outside its declared domain was accepted")


def check_sample(spec: Any) -> None:
    """``sample(rng)`` draws a finite ``(horizon, n)`` array; two generators seeded alike agree."""
    spec = _spec(spec, "adversary")
    seq, n, horizon = _build(spec, 9)
    a = np.asarray(seq.sample(np.random.default_rng(10)))
    b = np.asarray(seq.sample(np.random.default_rng(10)))
    assert a.shape == (horizon, n) and np.isfinite(a).all(), f"{spec.name}: sample() gave shape {a.shape}"
    assert np.array_equal(a, b), f"{spec.name}: sample() is not a function of its generator"


#: Independent draws of ``sample`` that :func:`check_declarations` holds an adversary's
#: declarations to (generators seeded ``DECLARATION_SEED + i``): 400 make a mean difference of a
#: tenth of the cost range visible at a false-alarm probability of 1e-6 at the default sizes (T = 120).
DECLARATION_DRAWS = 400
#: Fewer draws (at least 50) for an adversary whose test sizes are large: draws × T × n ≤ this.
DECLARATION_FLOATS = 1 << 21
DECLARATION_SEED = 1_000
#: The probability that :func:`check_declarations` fails an adversary whose declarations all hold.
DECLARATION_FALSE_ALARM = 1e-6


def check_declarations(spec: Any) -> None:
    """Each declaration an adversary makes for the engine's shortcuts holds against its own draws
    (:mod:`replify.engine.declarations` has the statistics): m = :data:`DECLARATION_DRAWS`
    independent ``sample`` draws (fixed seeds; fewer, down to 50, when m·T·n would pass
    :data:`DECLARATION_FLOATS`) at the spec's test sizes. An adversary whose declarations hold
    fails with probability at most :data:`DECLARATION_FALSE_ALARM` = 1e-6 over all the comparisons
    together (union bound: δ = 1e-6 / their number, per coordinate and test).

    * Well formed: ``iid`` True or False, ``law_changes`` increasing steps in [1, T − 1],
      ``cost_bounds`` (low, high) with low ≤ high — the engine refuses anything else.
    * ``cost_bounds``: every cost of the m draws lies in [low, high], and every ``sample_sums`` sum
      over a quarter of the horizon (20 draws) in L·[low, high]. A violation that each cost commits
      with probability p is seen with probability at least 1 − (1 − p)^(m·T·n).
    * ``iid`` / ``law_changes`` (one law inside each declared piece): inside each piece, the costs
      at even steps against those at the next odd steps, and each quarter of the piece against the
      next, step by step in order. With ``cost_bounds`` (range R), a difference Δ between the mean
      costs of a coordinate at the compared steps is caught with probability at least 1 − 1e-6 once
      |Δ| ≥ 2R·√(2 ln(2/δ)/M), M the compared pairs (m·L/2 for even/odd, m·L/4 for quarters of a
      piece of L steps): at the default sizes (m = 400, T = 120, n = 3, R = 1) |Δ| ≥ 0.08 (even/odd)
      and 0.11 (quarters). A sign test needs no bound: it catches
      |P(first > second) − P(first < second)| ≥ 2√(2 ln(2/δ)/M) with the same probability.
    * ``expected_sums``: on each quarter of the horizon and the whole, against the mean of the m
      draws' sums. With ``cost_bounds`` an error |e| in an expected sum over L steps is caught with
      probability at least 1 − 1e-6 once |e| ≥ 2r, r = R·√(L ln(2/δ)/(2m)) when the steps are
      independent (``iid`` or ``law_changes`` declared; at the defaults an error of 0.06·R per
      step), L·R·√(ln(2/δ)/(2m)) otherwise (0.3·R per step). Without ``cost_bounds`` no exact bound
      exists for unbounded costs: the threshold is z = √(2 ln(2/δ)) sample standard errors, a
      normal approximation."""
    spec = _spec(spec, "adversary")
    seq, n, horizon = _build(spec, 13)
    try:
        pieces = declared_pieces(seq, horizon)
        bounds = declared_bounds(seq)
    except InvalidArgumentError as exc:
        raise AssertionError(f"{spec.name}: {exc}") from None
    expected = getattr(seq, "expected_sums", None)
    if pieces is None and bounds is None and not callable(expected):
        return  # nothing declared
    m = int(min(DECLARATION_DRAWS, max(50, DECLARATION_FLOATS // (horizon * n))))
    draws = np.stack([np.asarray(seq.sample(np.random.default_rng(DECLARATION_SEED + i)), dtype=np.float64)
                      for i in range(m)])
    if draws.shape[1:] != (horizon, n):
        return  # check_sample names the wrong shape
    cuts = sorted({0, horizon // 4, horizon // 2, 3 * horizon // 4, horizon})
    segments = [(a, b) for a, b in zip(cuts[:-1], cuts[1:])] + ([(0, horizon)] if len(cuts) > 2 else [])
    found = contradiction(seq, draws, np.arange(horizon), horizon=horizon, false_alarm=DECLARATION_FALSE_ALARM,
                          windows=4, expected=segments, approximate=True, name=spec.name, what=f"{m} draws")
    if found is not None:
        raise AssertionError(found)
    if bounds is not None and callable(getattr(seq, "sample_sums", None)):
        starts, stops = np.array(cuts[:-1]), np.array(cuts[1:])
        length = (stops - starts).astype(np.float64)[:, None]
        slack = 1e-9 * np.maximum(length, 1.0)  # the engine's own slack for float sums
        for i in range(20):
            sums = np.asarray(seq.sample_sums(np.random.default_rng(DECLARATION_SEED + i), starts, stops), dtype=np.float64)
            outside = ~((sums >= length * bounds[0] - slack) & (sums <= length * bounds[1] + slack))
            if sums.shape == length.shape[:1] + (n,) and outside.any():
                k = int(np.argwhere(outside)[0][0])
                raise AssertionError(f"{spec.name}: declares cost_bounds {bounds}, but sample_sums() gave {sums[k].tolist()} "
                                     f"over steps {starts[k] + 1}..{stops[k]}, which such costs cannot add up to")


def check_chunks_equal_sample(spec: Any) -> None:
    """Consecutive ``sample_chunk`` calls from one generator equal one ``sample`` call."""
    spec = _spec(spec, "adversary")
    seq, n, horizon = _build(spec, 11)
    if not callable(getattr(seq, "sample_chunk", None)):
        return
    whole = np.asarray(seq.sample(np.random.default_rng(12)))
    rng = np.random.default_rng(12)
    cuts = [0, horizon // 3, horizon // 3 + 1, horizon]
    parts = [np.asarray(seq.sample_chunk(rng, a, b)) for a, b in zip(cuts[:-1], cuts[1:])]
    assert np.array_equal(np.concatenate(parts), whole), f"{spec.name}: chunks differ from one sample()"


def check_sums_law(spec: Any) -> None:
    """``sample_sums`` has the law of the summed steps: over 400 seeded draws the mean of every
    segment sum matches the mean of the summed ``sample`` rows within 6 standard errors (normal
    approximation; a false alarm below 1e-8 per coordinate)."""
    spec = _spec(spec, "adversary")
    seq, n, horizon = _build(spec, 13)
    if not callable(getattr(seq, "sample_sums", None)):
        return
    starts = np.array([0, horizon // 4, horizon // 2])
    stops = np.array([horizon // 4, horizon // 2, horizon])
    draws = 400
    sums = np.stack([np.asarray(seq.sample_sums(np.random.default_rng(100 + i), starts, stops)) for i in range(draws)])
    steps = np.stack([
        np.add.reduceat(np.asarray(seq.sample(np.random.default_rng(10_000 + i))), starts, axis=0) for i in range(draws)
    ])
    se = np.sqrt((sums.var(axis=0) + steps.var(axis=0)) / draws) + 1e-12
    assert np.all(np.abs(sums.mean(axis=0) - steps.mean(axis=0)) <= 6 * se + 1e-9), \
        f"{spec.name}: sample_sums() does not have the law of the summed steps"


def check_segments_equal_stepping(spec: Any) -> None:
    """A learner with the engine's segment protocol (``next_segment``, ``advance``) plays, when
    each summed segment is handed the exact sum of its steps, the actions stepping plays. The
    costs are 0/1 (scaled into the domain), so every sum is exact in any order."""
    spec = _spec(spec, "learner")
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
    spec = _spec(spec, "learner")
    learner, n, horizon = _build(spec, 16)
    if not (is_bandit(learner) and callable(getattr(learner, "next_batch", None))):
        return
    costs = _costs(spec, n, horizon, 17)
    stepper, _, _ = _build(spec, 16)
    stepped = [int(_step(stepper, c)) for c in costs]
    played: list[int] = []
    while len(played) < horizon:
        arms = np.asarray(learner.next_batch())
        assert arms.ndim == 1 and 1 <= arms.size <= horizon - len(played), \
            f"{spec.name}: next_batch() after {len(played)} steps gave {arms.size} arms"
        t = len(played)
        learner.observe(costs[t : t + arms.size][np.arange(arms.size), arms])
        played += arms.tolist()
    assert played == stepped, f"{spec.name}: playing by batches differs from stepping"


def check_lanes_equal_stepping(spec: Any) -> None:
    """A bandit learner whose class offers the lane-batched form (``for_lanes``) plays, in lanes,
    every lane's arms exactly as stepping that lane's learner alone does — bit for bit, whichever
    other lanes share the object (each lane keeps its own generator). Lanes see 0/1 and
    fractional costs; the lanes' object takes learners built alike with different seeds."""
    spec = _spec(spec, "learner")
    probe, n, horizon = _build(spec, 30)
    make = getattr(type(probe), "for_lanes", None)
    if not (is_bandit(probe) and callable(make)):
        return
    # long enough for what a lane form draws ahead in blocks to be drawn again (a refill that
    # mixes the lanes' streams shows only then)
    horizon = max(horizon, LANE_CHECK_HORIZON)
    lanes = 6
    costs = []
    for i in range(lanes):  # fractional costs, and 0/1 costs (their own branch in some learners)
        c = _costs(spec, n, horizon, 40 + i)
        costs.append(np.round(c) if i % 2 else c)
    stepped = []
    for i in range(lanes):
        learner, _, _ = _build(spec, 30 + i, horizon)
        stepped.append([int(_step(learner, c)) for c in costs[i]])
    for group in (list(range(lanes)), [3, 0], [4]):
        form = lane_form([_build(spec, 30 + i, horizon)[0] for i in group])  # the engine's own call and checks
        if form is None:  # the class declines (a subclass that steps its own way): the engine steps it alone
            return
        for t in range(horizon):
            arms = np.asarray(form.act())
            assert arms.shape == (len(group),) and arms.dtype.kind in "iu", \
                f"{spec.name}: the lanes' act() at step {t + 1} gave {arms!r}, not one integer arm per lane"
            want = [stepped[i][t] for i in group]
            assert arms.tolist() == want, (
                f"{spec.name}: in lanes {group}, step {t + 1} played {arms.tolist()}; stepped alone, the same learners "
                f"play {want}")
            form.update(arms, np.array([costs[i][t, a] for i, a in zip(group, arms.tolist())]))


def check_cycles_equal_stepping(spec: Any) -> None:
    """A bandit learner with round-robin batches (``next_cycle``/``observe_sums``) plays, cycle by
    cycle and told only each arm's cost sum and pulls, the arms that stepping it plays."""
    spec = _spec(spec, "learner")
    learner, n, horizon = _build(spec, 22)
    if not (is_bandit(learner) and callable(getattr(learner, "next_cycle", None))
            and callable(getattr(learner, "observe_sums", None))):
        return
    costs = np.round(_costs(spec, n, horizon, 23))  # 0/1 costs: the sums are exact in any order
    stepper, _, _ = _build(spec, 22)
    stepped = np.array([int(_step(stepper, c)) for c in costs], dtype=np.int64)
    t = 0
    while t < horizon:
        arms, length = learner.next_cycle()
        arms = np.asarray(arms)
        assert arms.ndim == 1 and arms.size and 1 <= int(length) <= horizon - t, \
            f"{spec.name}: next_cycle() after {t} steps gave {arms!r} for {length!r} steps"
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
    spec = _spec(spec, "learner")
    learner, n, horizon = _build(spec, 18)
    check_protocol(learner, source=f"{spec.name}'s factory")
    mixed = bool(getattr(learner, "mixed", False))
    for t, c in enumerate(_costs(spec, n, horizon, 19)):
        action = learner.act()
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
    spec = _spec(spec, "learner")
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
ADVERSARY_CHECKS: tuple[Callable[[Any], None], ...] = (check_sample, check_chunks_equal_sample, check_sums_law,
                                                       check_declarations)


def _enforces(spec: Any, learner: Any) -> frozenset:
    declared = getattr(learner, "enforces", ())
    return frozenset(spec.enforces) | frozenset(declared if isinstance(declared, (set, frozenset, tuple, list)) else ())


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


def check_adversary(spec: Any) -> None:
    """Run every adversary check on an :class:`~replify.AdversarySpec` (or a registered name)."""
    spec = _spec(spec, "adversary")
    for check in ADVERSARY_CHECKS:
        check(spec)


def _spec(spec: Any, kind: str) -> Any:
    """A :class:`LearnerSpec` (``kind="learner"``: any learner argument, see :func:`learner_spec`)
    or :class:`AdversarySpec`, given as one or as a registered name; anything else is refused,
    naming what came."""
    if kind == "learner" and not isinstance(spec, (LearnerSpec, AdversarySpec)):
        return learner_spec(spec, argument="spec")
    if isinstance(spec, str):
        return registry().learner(spec) if kind == "learner" else registry().adversary(spec)
    cls = LearnerSpec if kind == "learner" else AdversarySpec
    if not isinstance(spec, cls):
        raise ArgumentTypeError(
            f"spec must be {'a' if kind == 'learner' else 'an'} {cls.__name__} or the name of a registered {kind}; "
            f"got {spec!r} ({type(spec).__name__})"
        )
    return spec


def _any_spec(spec: Any) -> Any:
    """A learner or adversary spec: a spec as it is, a registered name (learners first), or —
    as :func:`check_learner` takes them — any learner :func:`replify.evaluate` takes
    (:func:`learner_spec`)."""
    if isinstance(spec, (LearnerSpec, AdversarySpec)):
        return spec
    if isinstance(spec, str) and spec not in registry().learners() and spec in registry().adversaries():
        return registry().adversary(spec)
    if isinstance(spec, str) or callable(spec):
        return learner_spec(spec, argument="specs", caller="parametrize_with_checks")
    raise ArgumentTypeError(
        f"specs must hold LearnerSpec or AdversarySpec objects, registered names, or learners as check_learner takes "
        f"them (a class or factory, a wrapped class, a callable seed -> learner, a 'module:Name' reference); got "
        f"{spec!r} ({type(spec).__name__})"
    )


def _cases(specs: Iterable[Any]) -> Iterator[tuple[Any, Callable[[Any], None]]]:
    if isinstance(specs, (str, LearnerSpec, AdversarySpec)) or not isinstance(specs, Iterable):
        raise ArgumentTypeError(
            f"specs must be an iterable of specs (or registered names), e.g. replify.learners().values(); "
            f"got {specs!r} ({type(specs).__name__})"
        )
    for spec in map(_any_spec, specs):
        checks = LEARNER_CHECKS if isinstance(spec, LearnerSpec) else ADVERSARY_CHECKS
        for check in checks:
            yield spec, check


def parametrize_with_checks(specs: Any) -> Any:
    """A ``pytest.mark.parametrize("spec, check", ...)`` over every check of every spec, as
    scikit-learn's ``parametrize_with_checks``: ``def test_conformance(spec, check): check(spec)``.
    ``specs`` holds specs, registered names, and any learner :func:`check_learner` takes (a class
    wrapped without ``rho``: ``learner_spec(MyClass, rho=0.1)``)."""
    import pytest  # only in a test run: replify itself does not depend on pytest

    cases = list(_cases(specs))
    return pytest.mark.parametrize("spec, check", cases, ids=[f"{s.name}-{c.__name__}" for s, c in cases])
