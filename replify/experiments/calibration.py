"""Calibration: parameters chosen by measurement, for learners that must learn at practical
horizons (docs/claims.md: *calibrated* — "measured ρ̂ below ρ on these N adversaries",
never a guarantee for others).

The theorems' parameters certify ρ against every oblivious adversary, and at T = 10⁴…10⁷ they buy
that with so much noise that the learner barely learns. :func:`calibrate` searches the learner's
knobs for the lowest measured regret on a reference adversary, subject to: on every adversary of
the stress suite — including the worst that :func:`replify.stress` finds at the candidate's own
parameters — the sequential test (:mod:`replify.evaluation.sequential`, anytime-valid at level α) decides
"below ρ". Candidates are tried in order of measured regret; the first that passes every test is
the calibration. Each "below" is wrong with probability at most α, so the claim is: on these N
adversaries ρ is below the target, each with confidence 1 − α (not simultaneously, and nothing
about other adversaries).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Mapping, Sequence

import attrs
import numpy as np

from replify.base.checks import check_int, check_rho, check_step_size, public
from replify.engine import limits
from replify.errors import InvalidArgumentError, ReplifyWarning
from replify.evaluation.evaluate import evaluate
from replify.evaluation.provenance import jsonable
from replify.experiments.candidates import BLOCK_FRACTIONS, CALIBRATABLE, MULTIPLIERS, REFINE_TOP, SCREEN_PAIRS, _check_arguments, _grid, _suite, _user_build
from replify.experiments.stress import stress, stress_adversary
from replify.plugins.factory import make
from replify.plugins.registry import hookimpl, registry
from replify.plugins.specs import LearnerSpec
from replify.base.progress import reporter
from replify.base.randomness import seed_sequence
from replify.sources import learner_arg

@attrs.frozen(kw_only=True)
class AdversaryCheck:
    """One adversary's sequential test: decision, pairs run, the anytime-valid interval."""

    adversary: str
    params: dict[str, Any]
    decision: str
    pairs: int
    rho_hat: float
    interval: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        return jsonable(attrs.asdict(self))


@attrs.frozen(kw_only=True)
class Calibration:
    """A calibration's outcome: the learner, its calibrated ``knobs`` (passed to
    :func:`replify.make`), each adversary's test, and the measured regret on the reference beside
    the certified parameters' and ``constant``'s. ``make(seed)`` builds the calibrated learner (its
    ``params.calibration`` says what it was calibrated on); ``register()`` adds it to the registry
    under ``name + "@calibrated"`` so that ``evaluate``, ``sweep`` and the CLI accept it by name."""

    learner: str
    n: int
    horizon: int
    rho: float
    alpha: float
    knobs: dict[str, Any]
    checks: tuple[AdversaryCheck, ...]
    reference: str
    regret: float  # measured afresh on refine_pairs pairs (seed + 3), not the search's estimate
    certified_knobs: dict[str, Any] | None  # None: no certified point (a user's learner, a user's grid)
    certified_regret: float | None
    constant_regret: float
    candidates_tried: int
    #: the t interval of ``regret`` (the confidence of evaluate's default, 95%)
    regret_ci: tuple[float, float] | None = None
    #: every candidate of the grid: (knobs, multiplier of the certified ε or noise, measured regret)
    grid: tuple[tuple[dict[str, Any], float, float], ...] = ()
    #: every candidate tried and refused, in the order tried: its knobs and the test that refused
    #: it (the screen on two-way ties, or the first sequential test not decided "below")
    refused: tuple[tuple[dict[str, Any], AdversaryCheck], ...] = ()
    #: whether the calibrated learner's own parameters also certify rho (the proof's bound; a
    #: wrapped class of yours may be certified as it is)
    certified: bool = False
    #: the learner calibrated, when it is a user's factory rather than a registered name
    factory: Any = attrs.field(default=None, repr=False)

    @property
    def label(self) -> str:
        also = ("; its parameters are also certified for this rho (the proof's bound)" if self.certified
                else ", not certified")
        return (f"calibrated on {len(self.checks)} adversaries (measured: the sequential test at alpha={self.alpha:g} "
                f"decided rho below {self.rho:g} on each){also}")

    def _rho(self) -> dict[str, Any]:
        """``{"rho": ρ}`` for a registered learner that takes ρ (a theorem's or a claimed guarantee)."""
        spec = registry().learner(self.learner)
        return {} if spec.parameters is None and spec.guarantee is None else {"rho": self.rho}

    def make(self, seed: Any) -> Any:
        """The calibrated learner, labelled (``params.calibration``; a user's learner is labelled
        when its ``params`` is an attrs instance or a dict, and left as it is otherwise)."""
        with warnings.catch_warnings():  # its eps is not certified: it says so in its label instead
            warnings.simplefilter("ignore", ReplifyWarning)
            if self.factory is None:
                learner = make(self.learner, n=self.n, horizon=self.horizon, seed=seed, **self._rho(), **self.knobs)
            else:
                learner = _user_build(self.factory, n=self.n, horizon=self.horizon, rho=self.rho, knobs=self.knobs)(
                    seed_sequence(seed))
        return self._labelled(learner)

    def _labelled(self, learner: Any) -> Any:
        """``learner`` with ``params.calibration`` set to :attr:`label` when its params can say it
        (an attrs class with that field, or a dict); left as it is otherwise."""
        params = getattr(learner, "params", None)
        if attrs.has(type(params)) and "calibration" in attrs.fields_dict(type(params)):
            learner.params = attrs.evolve(params, calibration=self.label)
        elif isinstance(params, dict):
            learner.params = dict(params, calibration=self.label)
        return learner

    def register(self, name: str | None = None) -> str:
        """Register the calibrated learner by name (default ``"<learner>@calibrated"``)."""
        if self.factory is not None:
            raise InvalidArgumentError(
                f"register() names registered learners' calibrations; {self.learner!r} is a factory of yours: "
                "use Calibration.make, or register your factory as a plugin first"
            )
        label = name or f"{self.learner}@calibrated"
        spec = registry().learner(self.learner)
        calibration = self

        def factory(*, n: int, horizon: int, rng: np.random.Generator, rho: float | None = None) -> Any:
            if (n, horizon) != (calibration.n, calibration.horizon):
                raise InvalidArgumentError(
                    f"{label} was calibrated for n={calibration.n}, horizon={calibration.horizon}; got n={n}, horizon={horizon}"
                )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReplifyWarning)
                learner = spec.factory(n=n, horizon=horizon, rng=rng, **calibration._rho(), **calibration.knobs)
            return calibration._labelled(learner)

        description = f"{self.learner} with calibrated {self.knobs} ({self.label})"

        class _Plugin:
            @hookimpl
            def register_learners(self, register: Any) -> None:
                register(LearnerSpec(label, factory, spec.problem, norm=spec.norm, cost_range=spec.cost_range,
                                     feedback=spec.feedback, enforces=spec.enforces, description=description))

        registry().register(_Plugin(), name=label)
        return label

    def frontier(self, *, pairs: int = 100, seed: int = 0, reference_pairs: int = 40) -> dict[str, Any]:
        """The regret–replicability frontier (measured): every grid candidate's regret on the
        reference beside its ρ̂ (with an exact interval) on two-way ties, the hardest case for a
        leader; plus ``constant`` and ``hedge`` on the same adversaries. For :func:`replify.plots.plot_frontier`."""
        n, T = self.n, self.horizon
        scale = {"scale": 1.0 / n} if self.learner == "fllb" else {}
        points = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReplifyWarning)
            for knobs, m, regret in self.grid:
                if self.factory is None:
                    r = evaluate(self.learner, "ties", n=n, horizon=T, pairs=pairs, seed=seed, **self._rho(),
                                 adversary_params={"k": 2, **scale}, **knobs)
                else:
                    r = evaluate(_user_build(self.factory, n=n, horizon=T, rho=self.rho, knobs=knobs), "ties", n=n,
                                 horizon=T, pairs=pairs, seed=seed, adversary_params={"k": 2})
                points.append({"knobs": knobs, "multiplier": None if math.isnan(m) else m, "regret": regret,
                               "rho_hat": r.rho_hat,
                               "rho_ci": list(r.rho_ci), "certified": knobs == self.certified_knobs,
                               "calibrated": knobs == self.knobs})
            refs = {}
            ref_params = {"means": np.linspace(0.3, 0.7, n)}
            for name in ("constant", "hedge"):
                ties = evaluate(name, "ties", n=n, horizon=T, pairs=min(pairs, 40), seed=seed, adversary_params={"k": 2})
                regret = evaluate(name, "iid-bernoulli", n=n, horizon=T, pairs=reference_pairs, seed=seed,
                                  adversary_params=ref_params).regret_mean
                refs[name] = {"regret": regret, "rho_hat": ties.rho_hat, "rho_ci": list(ties.rho_ci)}
        return {"learner": self.learner, "n": n, "horizon": T, "rho": self.rho, "points": points, "references": refs,
                "label": self.label}

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"learner": self.learner, "n": self.n, "horizon": self.horizon, "rho": self.rho, "alpha": self.alpha,
                "knobs": self.knobs, "label": self.label, "checks": [c.to_dict() for c in self.checks],
                "reference": self.reference, "regret": self.regret, "certified_knobs": self.certified_knobs,
                "regret_ci": self.regret_ci,
                "certified_regret": self.certified_regret, "constant_regret": self.constant_regret,
                "candidates_tried": self.candidates_tried, "certified": self.certified,
                "refused": [{"knobs": k, "by": c.to_dict()} for k, c in self.refused]})


@public
def calibrate(
    name: Any,  # anything a user holds: replify.sources.learner_arg decides, naming what came
    *,
    n: int,
    horizon: int,
    rho: float,
    seed: int = 0,
    adversaries: str | Sequence[tuple[str, Mapping[str, Any]]] = "stress",
    reference: tuple[str, Mapping[str, Any]] | None = None,
    budget: int = 80_000,
    alpha: float = 0.05,
    regret_pairs: int = 40,
    refine_pairs: int = 400,
    test_pairs: int = 4000,
    block_fractions: Sequence[float] = BLOCK_FRACTIONS,
    multipliers: Sequence[float] = MULTIPLIERS,
    grid: Sequence[Mapping[str, Any]] | None = None,
    progress: bool | Callable[[int, int], None] | None = None,
    label: str | None = None,
) -> Calibration:
    """Calibrate ``name`` (one of ``ftplb-star``, ``fllb``, ``iid-experts``, ``split-commit``) for
    (n, T, ρ): the knobs — block size and ε (a multiple of :func:`replify.certified_eps`), the
    iid algorithm's ``noise_scale``, split-commit's ``fraction`` and ε — with the lowest measured
    regret on ``reference`` (default iid Bernoulli costs with means spread over [0.3, 0.7]) among
    those for which the sequential test decides "below ρ" on every adversary of ``adversaries``
    (``"stress"``: the reference itself, ties, two-way ties, a crossing, a block-switch against the
    candidate's B, and the worst :func:`replify.stress` finds at the candidate — for an
    iid-replicable learner, the iid part only: the reference, ties, two-way ties and near-ties; or
    a list of (name, params)). ``iid-experts``' grid crosses ``noise_scale`` with ``K_constant``
    (the paper's 1000, and values whose fallback can fire at practical T). Every
    candidate's regret is measured on ``regret_pairs`` pairs, the 12 best again on
    ``refine_pairs``; candidates are then screened on 100 pairs of two-way ties (dropped when
    clearly above ρ) and tested in order of regret. The regrets the result
    reports (calibrated, certified, ``constant``) are measured afresh on ``refine_pairs`` new
    pairs: the minimum of noisy estimates is biased low. ``budget`` bounds the pairs the whole
    calibration runs: the grid's regret measurements and the final ones are counted first (a grid
    they alone would exhaust is refused before any pair runs, naming its size), then the screens,
    stress searches and sequential tests spend what is left; each test stops at ``test_pairs``. ``block_fractions``
    (of T) and ``multipliers`` (of the certified ε or noise; 1 is the certified point) set the
    grid. ``progress=True`` draws a bar (the pairs spent against the budget, its label giving the
    grid's size); a callable ``progress(done, total)`` is called as they are spent. Returns a
    :class:`Calibration`.

    Any other learner — a registered name, or one of yours as :func:`replify.evaluate` takes it (a
    factory taking n, horizon, rng, a ``functools.partial`` of one, a class decorated with
    :func:`replify.wrap` — whose knobs are then ``block_size`` and ``eps`` —, a callable
    ``seed -> learner`` with no knobs, or a ``"module:Name"`` reference; ``label`` names it) — is
    calibrated over ``grid``, a list of knob dicts passed
    to it as keyword arguments (``rho`` too, if it takes one; without ``grid``, the learner as
    given is the one candidate), against the whole stress suite; it has no certified point
    (``certified_knobs`` is None). A contextual learner (docs/contextual.md) is measured on
    ``linear-bernoulli`` (d = 3; fixed features for one that needs them, else features on the
    sphere) and tested there and on the worst of the contextual stress families.
    """
    n = check_step_size("n", n, minimum=2, budget=limits.MEMORY_BUDGET)
    horizon, rho = check_int("horizon", horizon, minimum=16), check_rho(rho)
    _check_arguments(n=n, horizon=horizon, rho=rho, seed=seed, adversaries=adversaries, reference=reference,
                     budget=budget, alpha=alpha, regret_pairs=regret_pairs, refine_pairs=refine_pairs,
                     test_pairs=test_pairs, block_fractions=block_fractions, multipliers=multipliers)
    arg = learner_arg(name, label=label, argument="name")
    user = arg.kind != "registered"
    name = arg.obj  # a reference is loaded once, here
    if grid is None and (user or name not in CALIBRATABLE):
        grid = [{}]  # knobs unknown: the learner as given is the one candidate (its tests still decide)
    if grid is not None and (isinstance(grid, (str, Mapping)) or len(grid) == 0
                             or not all(isinstance(g, Mapping) for g in grid)):
        raise InvalidArgumentError(f"grid must be a non-empty list of dicts of knobs; got {grid!r}")
    if grid is not None:
        # what calibrate itself sets is not a knob: rho=0.9 in a grid would report a learner built for
        # another target as calibrated (or certified) for this one
        for knobs in grid:
            taken = sorted(set(knobs) & {"rho", "n", "horizon", "rng", "seed"})
            if taken:
                raise InvalidArgumentError(
                    f"grid entries are knobs of the learner; {', '.join(map(repr, taken))} "
                    f"{'is' if len(taken) == 1 else 'are'} calibrate's own argument{'s' if len(taken) > 1 else ''} "
                    f"(pass {taken[0]}= to calibrate), got {dict(knobs)!r}"
                )
    label = arg.label
    spec = None if user else registry().learner(name)
    spec_guarantee = None if spec is None else spec.guarantee
    # rho goes to a registered learner whose parameters come from a replicability theorem (or that
    # claims one); a user's factory gets it when it takes it (_user_build)
    named_rho = {} if spec is None or (spec.parameters is None and spec.guarantee is None) else {"rho": rho}
    # a contextual learner (docs/contextual.md) is measured and tested on adversaries that show contexts
    contextual = (spec.problem if spec is not None else getattr(name, "problem", None)) == "contextual"
    if reference is None and contextual:
        fixed = getattr(name if user else spec.factory, "needs_fixed_contexts", False)
        reference = ("linear-bernoulli", {"d": 3, "contexts": "fixed" if fixed else "sphere"})
    if reference is None:
        reference = ("iid-bernoulli", {"means": np.linspace(0.3, 0.7, n)})
    ref_name, ref_params = reference[0], dict(reference[1])
    scale = {"scale": 1.0 / n} if name == "fllb" else {}  # FLLB takes l1-bounded costs
    if scale and ref_name == "iid-bernoulli":
        ref_params.setdefault("scale", 1.0 / n)
    used = measured = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplifyWarning)
        if grid is not None:  # the user's knob settings: no multiplier of a certified value, no certified point
            points = [(dict(g), math.nan) for g in grid]
        else:
            points = _grid(name, n=n, horizon=horizon, rho=rho, fractions=block_fractions, multipliers=multipliers)
    # The budget bounds the whole search, in pairs: the grid's regret measurements come first, and
    # a grid whose measurements alone exceed it is refused before any pair runs (not run for hours).
    # The result's regrets are measured afresh at the end (the calibrated point, the certified one,
    # constant: refine_pairs each), so those pairs are set aside from the start.
    refining = min(REFINE_TOP, len(points))
    measuring = len(points) * regret_pairs + (refining + 3) * refine_pairs
    if measuring >= budget:
        raise InvalidArgumentError(
            f"calibrate({label!r}): budget={budget} pairs cannot pay for the search: the grid has {len(points)} "
            f"candidate{'s' if len(points) != 1 else ''}, and measuring regrets takes {len(points)} x "
            f"regret_pairs={regret_pairs} + {refining + 3} x refine_pairs={refine_pairs} = {measuring} pairs before "
            f"any test; expected budget > {measuring} (plus the tests' pairs: test_pairs={test_pairs} each), or a "
            "smaller grid, or fewer regret_pairs/refine_pairs"
        )

    def left_for(pairs: int) -> int:
        """``pairs``, or the fewer the budget still allows (the final measurements set aside)."""
        return min(pairs, budget - 3 * refine_pairs - used)
    # progress: the pairs spent against the budget; the label says the grid's size up front
    work = budget
    bar = reporter(progress, f"calibrate {label} ({len(points)} candidate{'s' if len(points) != 1 else ''}, "
                             f"budget {budget} pairs)")

    def learner_for(knobs: Mapping[str, Any]) -> Any:
        """What evaluate and stress are given: the name (with rho and knobs passed), or the user's
        factory built with its knobs (and rho if it takes one) as a seed -> learner callable."""
        return name if not user else _user_build(name, n=n, horizon=horizon, rho=rho, knobs=knobs)

    def measure(knobs: dict[str, Any], adversary: str, params: Mapping[str, Any], pairs: int, s: int, **kw: Any) -> Any:
        nonlocal used, measured
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReplifyWarning)
            extra = {} if user else dict(knobs, **named_rho)
            report = evaluate(learner_for(knobs), adversary, n=n, horizon=horizon, pairs=pairs, seed=s,
                              adversary_params=dict(params), label=label, progress=False, **extra, **kw)
        used += report.pairs  # every pair the search runs counts against the budget
        measured += not kw.get("sequential")
        if bar is not None:
            bar(min(work, used), work)
        return report

    try:
        candidates = [k for k, _ in points]
        # Regret: a first estimate of every candidate on regret_pairs pairs, then the REFINE_TOP best
        # again on refine_pairs (a learner whose regret hangs on a few random picks, like iid-experts,
        # is ranked by noise on 40 pairs); candidates are tried in the refined order.
        regrets = [measure(k, ref_name, ref_params, regret_pairs, seed).regret_mean for k in candidates]
        top = np.argsort(regrets, kind="stable")[:REFINE_TOP].tolist()
        for i in top:
            regrets[i] = measure(candidates[i], ref_name, ref_params, refine_pairs, seed).regret_mean
        certified_point = [m == 1.0 and k.get("K_constant", 1000.0) >= 1000.0 for k, m in points]
        # the certified point: the best first estimate among the candidates at multiplier 1 (for
        # iid-experts, with the paper's K_constant too: a smaller one loses the certificate)
        certified = None
        if any(certified_point):
            certified = candidates[int(np.argmin([r if c else np.inf for c, r in zip(certified_point, regrets)]))]
        rest = [i for i in np.argsort(regrets, kind="stable").tolist() if i not in top]
        order = sorted(top, key=regrets.__getitem__) + rest
        tried = 0
        refused: list[tuple[dict[str, Any], AdversaryCheck]] = []
        for i in order:
            knobs = candidates[i]
            if left_for(SCREEN_PAIRS) < SCREEN_PAIRS:  # not even a screen is left to spend
                break
            tried += 1
            screen = None if contextual else measure(knobs, "ties", {"k": 2, **scale}, SCREEN_PAIRS, seed + 2)
            if screen is not None and screen.rho_ci[0] > rho:
                refused.append((dict(knobs), AdversaryCheck(adversary="ties", params={"k": 2, **scale}, decision="screened out",
                                                             pairs=screen.pairs, rho_hat=screen.rho_hat, interval=screen.rho_ci)))
                continue
            block = int(knobs.get("block_size", 1))
            iid = spec_guarantee == "iid"
            if adversaries != "stress":
                suite = [(a, dict(p)) for a, p in adversaries]
            elif contextual:  # the reference, then the worst of the contextual stress families (below)
                suite = [(ref_name, dict(ref_params))]
            else:
                suite = _suite(n, block, horizon, iid, (ref_name, ref_params))
            suite = [(a, {**p, **scale} if a in ("ties", "crossing", "block-switch") else p) for a, p in suite]
            checks, passed = [], True
            if adversaries == "stress" and left_for(100) < 100:  # a stress search needs 100 pairs at least
                break
            if adversaries == "stress":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ReplifyWarning)
                    found = stress(learner_for(knobs), n=n, horizon=horizon, budget=left_for(400),
                                   seed=seed, families=["ties"] if iid and not contextual else None, label=label,
                                   progress=False, **({} if user else dict(knobs, **named_rho)))
                used += found.pairs_used
                suite.append((stress_adversary(found.worst.family), found.worst.params))
            for adversary, params in suite:
                if left_for(test_pairs) < 1:
                    passed = False
                    break
                report = measure(knobs, adversary, params, left_for(test_pairs), seed + 1, target=rho, sequential=True,
                                 alpha=alpha)
                checks.append(AdversaryCheck(adversary=adversary, params=dict(params), decision=report.decision,
                                             pairs=report.pairs, rho_hat=report.rho_hat, interval=report.sequential_interval))
                if report.decision != "below":
                    passed = False
                    refused.append((dict(knobs), checks[-1]))
                    break
            if passed:
                # The regrets reported are measured afresh (new pairs): the minimum of noisy estimates
                # is biased low. constant's is its expectation over the expert it draws, on the same
                # fresh draws as the calibrated learner's.
                final = measure(knobs, ref_name, ref_params, refine_pairs, seed + 3)
                cert = None if certified is None else measure(certified, ref_name, ref_params, refine_pairs, seed + 3)
                constant = (float(np.mean(final.constant_regret)) if final.constant_regret is not None else
                            evaluate("constant", ref_name, n=n, horizon=horizon, pairs=refine_pairs, seed=seed + 3,
                                     adversary_params=ref_params).regret_mean)
                return Calibration(learner=label, n=n, horizon=horizon, rho=rho, alpha=alpha, knobs=dict(knobs),
                                   checks=tuple(checks), reference=ref_name, regret=float(final.regret_mean),
                                   regret_ci=tuple(map(float, final.regret_ci)),
                                   certified_knobs=None if certified is None else dict(certified),
                                   certified_regret=None if cert is None else float(cert.regret_mean),
                                   factory=name if user else None,
                                   constant_regret=float(constant), candidates_tried=tried,
                                   certified=final.certified is True,
                                   grid=tuple((dict(k), float(m), float(r)) for (k, m), r in zip(points, regrets)),
                                   refused=tuple(refused))
        decided = [c for _, c in refused if c.decision in ("above", "screened out")]
        if tried and len(decided) == tried:  # every candidate tried was shown above rho: more pairs will not help
            worst = ", ".join(f"{c.adversary} ({c.decision}, rho_hat {c.rho_hat:.3f} over {c.pairs} pairs)"
                              for c in decided[:3])
            advice = (f"every candidate tried was decided above rho (or screened out on two-way ties), so more pairs "
                      f"will not help: {worst}{', ...' if len(decided) > 3 else ''}")
        else:
            undecided = [f"{c.adversary} ({c.decision} after {c.pairs} pairs)" for _, c in refused
                         if c.decision not in ("above", "screened out")]
            advice = ("raise budget or test_pairs" + (f" (undecided: {', '.join(undecided[:3])})" if undecided else ""))
        raise InvalidArgumentError(
            f"calibrate({label!r}) found no candidate that the sequential test decided below rho={rho} on every adversary "
            f"within budget={budget} pairs ({tried} tried); {advice}"
            + ("" if certified is None else f"; or use the certified parameters {certified}")
        )
    finally:
        if bar is not None:
            bar.close()
