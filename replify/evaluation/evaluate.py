"""The paired-run replicability check (paper §2): ρ̂ and regret over many pairs of runs that
share the learner's randomness R and see two independent draws S, S' of the costs."""

from __future__ import annotations

import math
import warnings
import numbers
from typing import Any, Callable, Literal, Mapping

import attrs
import numpy as np

from replify.base.checks import check_int, check_learner, check_real, check_rho, check_step_size, public
from replify.engine import limits
from replify.engine.declarations import declared_bounds, declared_pieces, declared_second_moment
from replify.engine.dispatch import dispatch
from replify.engine.outcomes import Outcomes
from replify.errors import InvalidArgumentError, LearnerProtocolError, ReplifyError, ReplifyWarning
from replify.evaluation.provenance import provenance
from replify.evaluation.report import Report
from replify.evaluation.sequential import BetaBinomialCS, batches
from replify.components.actions import ActionSet
from replify.plugins.factory import make_adversary
from replify.base.progress import reporter
from replify.base.randomness import ADVERSARY, INTERNAL, Streams, child, seed_sequence
from replify.sources import adversary_arg, build_adversary, learner_arg, merged_params


@public
def evaluate(
    learner: Any,  # anything a user holds: replify.sources.learner_arg decides, naming what came
    adversary: str | Any,
    *,
    n: int,
    horizon: int,
    pairs: int,
    seed: int | np.random.SeedSequence,
    rho: float | None = None,
    actions: ActionSet | None = None,
    adversary_params: Mapping[str, Any] | None = None,
    confidence: float = 0.95,
    n_jobs: int = 1,
    backend: Literal["processes", "dask"] = "processes",
    scheduler: str | None = None,
    fast_path: bool | None = None,
    progress: bool | Callable[[int, int], None] | None = None,
    target: float | None = None,
    sequential: bool = False,
    alpha: float | None = None,
    label: str | None = None,
    learner_params: Mapping[str, Any] | None = None,
    **overrides: Any,
) -> Report:
    """Measure replicability and regret over ``pairs`` paired runs (paper §2).

    ``learner`` is a registered name (built with :func:`replify.make`, passing on ``rho``,
    ``actions`` and ``overrides`` such as ``block_size=``), a learner factory called with keyword
    arguments ``n``, ``horizon``, ``rng`` (a class such as the README's ``MyHedge``, or
    ``functools.partial(MyHedge, eta=0.1)``; ``rho`` and ``overrides`` are passed to it), a class
    decorated with :func:`replify.wrap` (or a wrapped learner: it is rebuilt for every run from its
    ``factory``, with ``rho`` unless the decorator fixed it), a callable ``seed -> learner``, or a
    reference ``"package.module:Name"`` / ``"path/to/file.py:Name"`` to any of these
    (:func:`replify.sources.learner_arg` decides which). ``label`` names the learner in the report
    (default: the registered name, or the callable's name); ``learner_params`` are hyperparameters
    passed like ``overrides`` — the way to pass one whose name is an argument of this function
    (``label``, ``seed``, …). Pair k builds the learner twice from the
    same seed — the two runs share R — and runs one copy on each of two independent draws S, S'
    of ``adversary`` (a registered name built with ``adversary_params``, or a distribution
    sequence, a class or factory called with ``n``, ``horizon``, ``rng`` and ``adversary_params``,
    or a reference to one). The adversary is built once, from the evaluation seed's ``adversary`` stream.
    Every pair has its own child seeds, so results do not depend on how the pairs are run.

    The pairs run in the engine of :mod:`replify.engine`, many at once, streaming over time.
    ``fast_path`` (default: whenever possible) draws block sums instead of per-step costs for
    block learners, and for learners with the segment protocol (``iid-experts``), on adversaries
    that can draw them — exact in law; ``False`` forces the per-step path, ``True`` insists. An
    adversary with only ``sample(rng)`` runs one pair at a time (peak memory: two sequences). ``n_jobs`` > 1 runs in local processes (joblib);
    ``backend="dask"`` runs on a Dask cluster (``scheduler`` address, or a local cluster of
    ``n_jobs`` workers). Results are identical whatever ``n_jobs`` and the backend.
    ``progress`` (default ``None``: a tqdm bar on stderr, with the time left, when stderr is a
    terminal and the run lasts more than a couple of seconds) draws the bar always with ``True``,
    never with ``False``; a callable ``progress(done, total)`` is called as pairs finish, and in
    between (at most once a second, on one worker) with ``done`` the pairs finished plus the
    share of steps played by the pairs under way: a fraction, so that a slow learner shows how
    far it is before its first pair ends.

    ``sequential=True`` with ``target=ρ`` runs the pairs in batches (``pairs`` is then the budget)
    and stops as soon as the anytime-valid beta-binomial confidence sequence of
    :mod:`replify.evaluation.sequential` (Howard et al. 2021) lies wholly below ρ (``decision="below"``) or
    wholly above it (``"above"``), or the budget is spent (``"undecided"``); a wrong decision has
    probability at most ``alpha`` (default 0.05; it applies only here) whatever the true rate. The
    report then carries ``decision``, ``pairs`` (the pairs run) and ``sequential_interval`` (the
    sequence at stopping), which is then also its ``rho_ci``: a fixed-n interval is not valid at a
    stop the data chose (docs/claims.md, "What each interval is").

    Returns a :class:`Report`: ρ̂ with an exact Clopper–Pearson interval, the agreement and
    first divergence of the two runs, and regret with a t interval, beside the learner's
    parameters and regret bound when it declares them.
    """
    n = check_step_size("n", n, minimum=2, budget=limits.MEMORY_BUDGET)
    horizon = check_int("horizon", horizon, minimum=1)
    pairs = check_int("pairs", pairs, minimum=2)
    confidence = check_real("confidence", confidence)
    if not 0.0 < confidence < 1.0:
        raise InvalidArgumentError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    _check_sequential(sequential, target, alpha)
    root = seed_sequence(seed)
    hyper = merged_params(overrides, learner_params)
    setup = _resolve(learner, adversary, n=n, horizon=horizon, root=root, rho=rho, actions=actions,
                     adversary_params=adversary_params, hyper=hyper, label=label)
    run = lambda ids, report_progress: dispatch(  # noqa: E731
        setup.build, setup.seq, n=n, horizon=horizon, root=root, pair_ids=ids, fast_path=fast_path,
        action_set=actions, n_jobs=check_int("n_jobs", n_jobs, minimum=1), backend=backend, scheduler=scheduler,
        progress=report_progress, domain=setup.domain,
    )
    bar = reporter(progress, f"evaluate {setup.label} on {setup.adversary_label}")
    try:
        if sequential:
            run_ = _run_sequential(run, pairs=pairs, target=check_rho(target, "target"),
                                   alpha=0.05 if alpha is None else alpha, bar=bar)
        else:
            run_ = _Run(run(range(pairs), bar), pairs)
    finally:
        if bar is not None:
            bar.close()
    bound, bound_note = _regret_bound(run_.outcomes.params, setup.spec, horizon=horizon, n=n, hyper=hyper)
    alpha = (0.05 if alpha is None else alpha) if sequential else None
    configuration = {
        "learner": setup.label, "adversary": setup.adversary_label, "n": n, "horizon": horizon, "pairs": run_.pairs,
        "rho": rho, "adversary_params": dict(adversary_params or {}), "overrides": hyper, "confidence": confidence,
        "fast_path": fast_path, "sequential": sequential, "target": target, "alpha": alpha,
    }
    return _report(run_, setup, n=n, horizon=horizon, seed=seed, confidence=confidence, bound=bound,
                   bound_note=bound_note, target=target, alpha=alpha, replay_source=(setup.build, setup.seq, root, actions, setup.domain),
                   provenance=provenance(seed, configuration))


@attrs.frozen
class _Setup:
    """What an evaluation runs: ``build`` (seed -> learner), the adversary's sequence, their labels,
    the learner's spec (registered names) and declared cost domain."""

    build: Callable[[Any], Any]
    seq: Any
    label: str
    adversary_label: str
    spec: Any
    domain: Any


@attrs.frozen
class _Run:
    """The pairs' outcomes, how many ran, and — for a sequential test — its decision, the interval
    at stopping and its p-value."""

    outcomes: Outcomes
    pairs: int
    decision: str | None = None
    interval: tuple[float, float] | None = None
    p_value: float | None = None


def _check_sequential(sequential: bool, target: float | None, alpha: float | None) -> None:
    if sequential and target is None:
        raise InvalidArgumentError("sequential=True needs target= (the rho to decide against); got none")
    if not sequential and target is not None:
        raise InvalidArgumentError("target applies only with sequential=True; got target without it")
    if not sequential and alpha is not None:
        raise InvalidArgumentError(
            f"alpha applies only with sequential=True (the level of its test; a fixed-n interval's level is "
            f"confidence=); got alpha={alpha} without it"
        )


def _resolve(learner: Any, adversary: Any, *, n: int, horizon: int, root: np.random.SeedSequence, rho: float | None,
             actions: ActionSet | None, adversary_params: Mapping[str, Any] | None, hyper: Mapping[str, Any],
             label: str | None) -> _Setup:
    """The learner and the adversary resolved (:mod:`replify.sources`), the adversary built from
    the evaluation seed's ``adversary`` stream, and one learner built as a probe."""
    arg = learner_arg(learner, label=label)
    adv = adversary_arg(adversary)
    seq = build_adversary(adv, n=n, horizon=horizon, seed=Streams(root).sequence(ADVERSARY), params=adversary_params,
                          make_adversary=make_adversary)
    build = arg.builder(n=n, horizon=horizon, rho=rho, actions=actions, params=hyper)
    _check_sequence(seq, n=n, horizon=horizon, label=adv.label)
    probe = _probe(build, arg, root)
    # The learner's own declared domain (an instance knows its action set's), else its spec's.
    domain = getattr(probe, "domain", None) or (arg.spec.domain if arg.spec is not None else None)
    return _Setup(build, seq, arg.label, adv.label, arg.spec, domain)


def _probe(build: Callable[[Any], Any], arg: Any, root: np.random.SeedSequence) -> Any:
    """One learner built before any pair: a broken factory fails now with a clear message, and each
    warning its parameters cause (a block size clipped to T, an uncertified rho) is shown once,
    pointing at the caller's line; the pairs' own builds are silent (engine.simulate)."""
    source = f"learner {arg.label!r}" if arg.spec is not None else f"the learner callable {arg.label!r}"
    try:
        probe = build(child(root, INTERNAL, 0))
    except Exception as exc:
        if arg.kind != "seeded" or isinstance(exc, ReplifyError):  # replify's own errors say what happened
            raise
        # not a learner at all (math.sqrt): say what it was taken for
        raise LearnerProtocolError(
            f"learner {arg.label!r} was taken for a callable seed -> learner (it takes one argument and no rng), but "
            f"calling it with a seed raised {type(exc).__name__}: {exc}; expected a learner class or factory taking "
            "n, horizon, rng, or a callable that returns an object with act() and update(cost)"
        ) from exc
    return check_learner(probe, source=source)


def _run_sequential(run: Callable[..., Outcomes], *, pairs: int, target: float, alpha: float, bar: Any) -> _Run:
    """Pairs in batches until the anytime-valid confidence sequence decides against ``target``, or
    ``pairs`` (the budget) are spent; pair k keeps its own seeds: batching changes only when we look."""
    cs = BetaBinomialCS(alpha=alpha)
    parts, done, decision, evidence, failures = [], 0, "undecided", 0.0, 0
    for look in batches(pairs):
        parts.append(run(range(done, look), None))
        done = look
        if bar is not None:
            bar(done, pairs)
        failures = int(sum(int((~p.identical).sum()) for p in parts))
        evidence = max(evidence, cs.log_evidence(failures, done, target))
        decision = cs.decide(failures, done, target)
        if decision != "undecided":
            break
    return _Run(Outcomes.concatenate(parts), done, decision, cs.interval(failures, done), min(1.0, math.exp(-evidence)))


def _regret_bound(params: Mapping[str, Any] | None, spec: Any, *, horizon: int, n: int,
                  hyper: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """The certified regret bound the learner declares for the parameters in force, or the reason
    it has none."""
    if params is not None and params.get("regret_bound") is not None:
        return float(params["regret_bound"]), None
    if params is not None and params.get("regret_bound_note"):
        return None, str(params["regret_bound_note"])
    if spec is not None and spec.parameters is None and spec.guarantee is None:
        # the bound for the hyperparameters in force (``overrides``), or withheld with the reason
        return spec.regret_bound_for(horizon=horizon, n=n, params=hyper)
    return None, None


def _report(run: _Run, setup: _Setup, **fields: Any) -> Report:
    """The report built from the outcomes of the pairs."""
    o = run.outcomes
    return Report(
        learner=setup.label, adversary=setup.adversary_label, pairs=run.pairs, identical=o.identical,
        agreement=o.agreement, first_divergence=o.first_divergence, regret=o.regret,
        params=_moment_checked(_noise_checked(_iid_checked(o.params, setup.seq, setup.spec, fields["horizon"]), setup.seq),
                              setup.seq),
        regret_bound=fields.pop("bound"), regret_bound_note=fields.pop("bound_note"), fast_path=o.fast_path,
        agreement_curve=o.agreement_curve, curve_edges=o.bin_edges, action_counts=o.action_counts,
        constant_regret=o.constant_regret, pseudo_regret=o.pseudo_regret, curve_steps=o.curve_steps,
        regret_curve_values=o.regret_curve, disagreement_counts=o.disagreement, segment_length=o.segment,
        drift_steps=o.drift_steps, drift=o.drift, decision=run.decision, sequential_interval=run.interval,
        sequential_p_value=run.p_value, cost_range=o.cost_range, **fields,
    )


def _iid_checked(params: Mapping[str, Any] | None, seq: Any, spec: Any, horizon: int) -> Mapping[str, Any] | None:
    """An iid certificate (a learner registered with ``guarantee="iid"``) covers costs whose law is
    the same at every step: on an adversary that does not declare ``iid = True`` — a switching one
    declares ``law_changes``, a user's declares nothing — it is void, and the report says so (the
    ``adversarial-bandit`` demo refutes one there)."""
    if not params or not params.get("certified") or "iid" not in (getattr(spec, "guarantee", None), params.get("guarantee")):
        return params
    pieces = declared_pieces(seq, horizon)  # iid = True, or law_changes that change nothing: one piece
    if pieces is not None and len(pieces) == 1:
        return params
    why = ("its law changes at the steps its law_changes declares" if getattr(seq, "law_changes", None) is not None
           else "it does not declare iid = True")
    warnings.warn(f"the learner's certificate holds for iid costs, and {type(seq).__name__} is not known to be iid: "
                  f"{why}; rho is measured, not certified", ReplifyWarning, stacklevel=4)
    return {**params, "certified": False, "certificate_note": f"void here: it holds for iid costs, and the adversary's "
                                                              f"are not known to be iid ({why})"}


def _noise_checked(params: Mapping[str, Any] | None, seq: Any) -> Mapping[str, Any] | None:
    """A certificate that assumes σ-sub-Gaussian noise (``sigma`` among the learner's parameters:
    ``rep-linear-elimination``) holds only if the adversary's noise is no larger. The adversary's
    scale is the ``noise_scale`` it declares (linear-gaussian's σ, 1/2 for 0/1 costs), else the one
    its declared ``cost_bounds`` (low, high) imply — a cost in a range of width r is
    r/2-sub-Gaussian about its mean (Hoeffding's lemma) —, else unknown: a scale above the
    learner's ``sigma``, or none at all, voids the certificate, and the report says so."""
    if not params or not params.get("certified") or params.get("sigma") is None:
        return params
    noise, source = getattr(seq, "noise_scale", None), "declares noise_scale"
    bounds = getattr(seq, "cost_bounds", None)
    if noise is None and bounds is not None and math.isfinite(float(bounds[1]) - float(bounds[0])):
        noise, source = (float(bounds[1]) - float(bounds[0])) / 2.0, f"declares cost_bounds {tuple(bounds)}, so noise up to"
    if noise is not None and float(params["sigma"]) >= float(noise):
        return params
    sigma = float(params["sigma"])
    said = (f"{type(seq).__name__} declares neither noise_scale nor finite cost_bounds, so its noise could be of any "
            "scale" if noise is None else f"{type(seq).__name__} {source} {float(noise):g}")
    warnings.warn(f"the learner's certificate assumes noise of scale sigma={sigma:g}, but {said}: rho is measured, not "
                  "certified (declare the adversary's noise_scale or cost_bounds where they are known)", ReplifyWarning,
                  stacklevel=4)
    return {**params, "certified": False,
            "certificate_note": f"void: it assumes noise of scale sigma={sigma:g}; {said}"}


def _moment_checked(params: Mapping[str, Any] | None, seq: Any) -> Mapping[str, Any] | None:
    """A certificate that assumes E[(c − b)² | context] ≤ M² (``cost_scale`` M and ``cost_center`` b
    among the learner's parameters: the contextual conversion of ``replify.wrap``, ``rep-ridge``'s
    centred forms) holds only where the adversary's costs are known to qualify: its declared
    ``cost_bounds`` lie in [b − M, b + M], or (b = 0, the declared form) the bound on E[c² | context]
    it declares (``cost_second_moment``) is at most M². The measured form assumes |c − b| ≤ M
    surely, which only ``cost_bounds`` says. Else the certificate is void, and the report says so."""
    if not params or not params.get("certified") or params.get("cost_scale") is None:
        return params
    m, b = float(params["cost_scale"]), float(params.get("cost_center") or 0.0)
    measured = params.get("variance") == "measured"
    bounds, moment = declared_bounds(seq), declared_second_moment(seq)  # a malformed one (NaN, say) is refused
    if bounds is not None and b - m <= float(bounds[0]) and float(bounds[1]) <= b + m:
        return params
    if moment is not None and b == 0.0 and not measured and float(moment) <= m * m:
        return params
    assumed = (f"costs within [{b - m:g}, {b + m:g}]" if measured else
               f"E[(c - {b:g})^2 | context] <= {m * m:g}" if b else f"E[c^2 | context] <= {m * m:g}")
    said = (f"declares cost_bounds {tuple(bounds)}, outside [{b - m:g}, {b + m:g}]" if bounds is not None else
            f"declares cost_second_moment {float(moment):g} > cost_scale² = {m * m:g}" if moment is not None and not measured and b == 0.0 else
            f"declares cost_second_moment {float(moment):g} but no cost_bounds, which this certificate needs" if moment is not None else
            "declares neither cost_bounds nor cost_second_moment, so its costs' second moment could be any")
    warnings.warn(f"the learner's certificate assumes {assumed} (cost_scale={m:g}, cost_center={b:g}), but "
                  f"{type(seq).__name__} {said}: rho is measured, not certified (wrap with a larger cost_scale, or "
                  "declare the adversary's cost_bounds or cost_second_moment)", ReplifyWarning, stacklevel=4)
    return {**params, "certified": False,
            "certificate_note": f"void: it assumes {assumed}; {type(seq).__name__} {said}"}


def _check_sequence(seq: Any, *, n: int, horizon: int, label: str) -> None:
    """An adversary object built for other sizes than the evaluation's is refused up front
    (a sequence for T = 500 evaluated at T = 5 000 would otherwise run on, or fail deep in numpy)."""
    for attr, expected in (("n", n), ("horizon", horizon)):
        got = getattr(seq, attr, None)
        if got is not None and (isinstance(got, bool) or not isinstance(got, numbers.Integral)):
            raise InvalidArgumentError(
                f"adversary {label!r} has {attr}={got!r} ({type(got).__name__}); expected the integer {attr}={expected} "
                "that evaluate() was given"
            )
        if got is not None and got != expected:
            raise InvalidArgumentError(
                f"adversary {label!r} was built with {attr}={got}, but evaluate() was given {attr}={expected}; "
                f"build it for the same {attr}, or pass its registered name"
            )
