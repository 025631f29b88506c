"""Calibration: parameters chosen by measurement, for learners that must learn at practical
horizons (issue 11; DESIGN.md §7: *calibrated* — "measured ρ̂ below ρ on these N adversaries",
never a guarantee for others).

The theorems' parameters certify ρ against every oblivious adversary, and at T = 10⁴…10⁷ they buy
that with so much noise that the learner barely learns. :func:`calibrate` searches the learner's
knobs for the lowest measured regret on a reference adversary, subject to: on every adversary of
the stress suite — including the worst that :func:`replify.stress` finds at the candidate's own
parameters — the sequential test (:mod:`replify.sequential`, anytime-valid at level α) decides
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

from .checks import check_int, check_real, check_rho, public
from .errors import InvalidArgumentError, LearnerProtocolError, ReplifyWarning, UnknownNameError
from .evaluation import evaluate
from .factory import make, make_adversary
from .progress import reporter
from .randomness import seed_sequence
from .sequential import BetaBinomialCS
from .stress import stress
from .provenance import jsonable
from .theory import certified_eps

#: The learners calibrate knows the knobs of.
CALIBRATABLE = ("ftplb-star", "fllb", "iid-experts", "split-commit")

#: ε (or noise) multipliers of the certified value tried, and block sizes as fractions of T.
MULTIPLIERS = tuple(2.0 ** (k / 2) for k in range(21))  # 1, √2, 2, …, 1024
BLOCK_FRACTIONS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 0.2, 1 / 3, 0.5)

#: iid-experts' K_constant values tried: the paper's, and one whose fallback threshold K − 2√(T ln n)
#: lies within practical horizons (regret capped near K: at T = 10⁵, n = 10, ρ = 0.1, K ≈ 0.1·T).
IID_K_CONSTANTS = (1000.0, 0.1)

#: Candidates whose regret is measured again on ``refine_pairs`` before the tests.
REFINE_TOP = 12

#: Pairs of the screen run before any sequential test: a candidate whose rate on two-way ties is
#: clearly above ρ (the exact 95% interval's lower end above it) is not worth a test. A heuristic
#: that saves time, permissive so as not to drop a candidate whose rate is near ρ; the claim
#: rests on the sequential tests alone.
SCREEN_PAIRS = 100


def _suite(
    n: int, block: int, horizon: int, iid: bool = False, reference: tuple[str, dict[str, Any]] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The fixed part of the stress suite at a candidate's block size, after the ``reference``
    itself (a learner calibrated to learn there must be replicable there: spread means hold many
    near-ties); :func:`replify.stress` adds the worst adversary it finds at the candidate's
    parameters. A learner whose guarantee is iid replicability is held to the iid part (ties,
    near-ties, and an iid reference): it claims nothing about the others."""
    head = [] if reference is None else [reference]
    suite = [("ties", {}), ("ties", {"k": 2}), ("ties", {"k": 2, "gap": 0.01})]
    if iid:
        return head + suite
    suite = head + suite[:2] + [("crossing", {"at": 0.5, "gap": 0.02})]
    if 1 < block < horizon:
        suite.append(("block-switch", {"block_size": block, "offset": block - 1, "gap": 0.05}))
    return suite


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
    #: the learner calibrated, when it is a user's factory rather than a registered name
    factory: Any = attrs.field(default=None, repr=False)

    @property
    def label(self) -> str:
        return (f"calibrated on {len(self.checks)} adversaries (measured: the sequential test at alpha={self.alpha:g} "
                f"decided rho below {self.rho:g} on each), not certified")

    def _rho(self) -> dict[str, Any]:
        """``{"rho": ρ}`` for a registered learner that takes ρ (a theorem's or a claimed guarantee)."""
        from .plugins import registry

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
        import replify

        from .plugins import registry

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
            @replify.hookimpl
            def register_learners(self, register: Any) -> None:
                register(replify.LearnerSpec(label, factory, spec.problem, norm=spec.norm, cost_range=spec.cost_range,
                                             description=description))

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
                "candidates_tried": self.candidates_tried,
                "refused": [{"knobs": k, "by": c.to_dict()} for k, c in self.refused]})


def _grid(
    name: str, *, n: int, horizon: int, rho: float, fractions: Sequence[float] = BLOCK_FRACTIONS,
    multipliers: Sequence[float] = MULTIPLIERS,
) -> list[tuple[dict[str, Any], float]]:
    """Candidate knobs, each with its multiplier of the certified ε or noise (1: certified)."""
    out: list[tuple[dict[str, Any], float]] = []
    grid_m = tuple(multipliers)
    if name in ("ftplb-star", "fllb"):
        for frac in fractions:
            B = max(1, int(round(frac * horizon)))
            if B >= horizon:
                continue
            base = certified_eps(name, horizon=horizon, n=n, rho=rho, block_size=B)
            for m in grid_m:
                eps = base * m
                if name == "ftplb-star" and eps > 1.0:
                    continue
                out.append(({"block_size": B, "eps": eps}, m))
    elif name == "iid-experts":
        # noise_scale: the proof's noise is ~1e3·sqrt(t), so the grid reaches 2^16; K_constant: the
        # paper's 1000 (the fallback never fires at practical T) and two that cap the regret at K
        # by falling back to FTPL, which the replicability tests then judge.
        scales = tuple(grid_m) + tuple(m for m in (2.0**11, 2.0**12, 2.0**14, 2.0**16) if m > max(grid_m))
        out = [({"noise_scale": m}, m) for m in scales]
        # A fallback that fires runs FTPL step by step: every fourth scale (16× apart) is enough to
        # see whether capping the regret at K can pass the tests, at a fraction of the cost.
        out += [({"noise_scale": m, "K_constant": c}, m) for c in IID_K_CONSTANTS if c != 1000.0 for m in scales[::4]]
    elif name == "split-commit":
        for frac in (0.05, 0.1, 0.25, 0.5):
            base = make("split-commit", n=n, horizon=horizon, seed=0, rho=rho, fraction=frac).params.eps
            out += [({"fraction": frac, "eps": base * m}, m) for m in grid_m[:11:2]]
    return out


def _check_arguments(
    *, n: int, horizon: int, rho: float, seed: Any, adversaries: Any, reference: Any, budget: Any, alpha: Any,
    regret_pairs: Any, refine_pairs: Any, test_pairs: Any, block_fractions: Any, multipliers: Any,
) -> None:
    """Every argument of :func:`calibrate` checked before any pair runs, each error naming its own
    argument: a calibration that would claim something from nothing (no adversary, a test that can
    never decide "below ρ") is refused, not run for minutes."""
    check_int("seed", seed, minimum=0)
    check_int("budget", budget, minimum=100)
    check_int("regret_pairs", regret_pairs, minimum=2)
    check_int("refine_pairs", refine_pairs, minimum=2)
    alpha = check_real("alpha", alpha)
    if not 0.0 < alpha < 1.0:
        raise InvalidArgumentError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    test_pairs = check_int("test_pairs", test_pairs, minimum=2)
    # The sequential test decides "below rho" only once even a clean record (no pair parts) is
    # evidence enough; fewer pairs than that make every candidate fail, whatever it is.
    least = least_pairs_below(rho, alpha, test_pairs)
    if least is None:
        raise InvalidArgumentError(
            f"test_pairs={test_pairs} is too few for the sequential test to ever decide below rho={rho:g} at "
            f"alpha={alpha:g}, even if no pair parts; expected at least {least_pairs_below(rho, alpha, 10**7)}"
        )
    for argument, values, low, high in (("block_fractions", block_fractions, 0.0, 1.0),
                                         ("multipliers", multipliers, 0.0, math.inf)):
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence) or len(values) == 0:
            raise InvalidArgumentError(f"{argument} must be a non-empty list of numbers, got {values!r}")
        for v in values:
            x = check_real(f"{argument} entry", v)
            if not low < x < high:
                where = f"strictly between {low:g} and {high:g}" if high < math.inf else f"> {low:g}"
                raise InvalidArgumentError(f"{argument} entries must be {where}, got {v!r} in {list(values)!r}")
    if isinstance(adversaries, str):
        if adversaries != "stress":
            raise InvalidArgumentError(
                f"adversaries must be 'stress' or a non-empty list of (name, params) pairs, got {adversaries!r}"
            )
        listed = []
    else:
        listed = list(adversaries) if isinstance(adversaries, Sequence) else None
        if not listed:
            raise InvalidArgumentError(
                "adversaries must be 'stress' or a non-empty list of (name, params) pairs: a calibration on no "
                f"adversary would claim nothing; got {adversaries!r}"
            )
    named = [("adversaries", a) for a in listed] + ([] if reference is None else [("reference", reference)])
    for argument, entry in named:
        if (not isinstance(entry, (tuple, list)) or len(entry) != 2 or not isinstance(entry[0], str)
                or not isinstance(entry[1], Mapping)):
            raise InvalidArgumentError(f"{argument} entries must be (name, params) pairs (params a dict), got {entry!r}")
        try:  # built once here, so a typo in a name or a parameter fails now, not after minutes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ReplifyWarning)
                make_adversary(entry[0], n=n, horizon=horizon, seed=0, **dict(entry[1]))
        except (InvalidArgumentError, UnknownNameError, LearnerProtocolError) as exc:
            raise InvalidArgumentError(f"{argument}: {entry[0]!r} with {dict(entry[1])!r} cannot be built: {exc}") from None


def least_pairs_below(rho: float, alpha: float, budget: int) -> int | None:
    """The fewest pairs (at most ``budget``) after which the sequential test of
    :mod:`replify.sequential` decides "below ``rho``" when no pair has parted, or None."""
    cs = BetaBinomialCS(alpha=alpha)
    t = 1
    while t <= budget:
        if cs.decide(0, t, rho) == "below":
            # the first t with that decision: evidence grows with t at zero failures, so bisect back
            lo = t // 2
            while t - lo > 1:
                mid = (lo + t) // 2
                lo, t = (lo, mid) if cs.decide(0, mid, rho) == "below" else (mid, t)
            return t
        t = min(budget, 2 * t) if t < budget else budget + 1
    return None


def _user_build(factory: Any, *, n: int, horizon: int, rho: float, knobs: Mapping[str, Any]) -> Any:
    """``seed -> learner`` for a user's factory with ``knobs``; ``rho`` only if it takes one."""
    from .factory import accepts, learner_builder

    takes_rho = accepts(factory, "rho")
    build, _, _ = learner_builder(factory, n=n, horizon=horizon, rho=rho if takes_rho else None, overrides=dict(knobs))
    return build


@public
def calibrate(
    name: str | Callable[..., Any],
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
    pairs: the minimum of noisy estimates is biased low. ``budget`` caps the pairs the sequential
    tests and stress searches spend in all; each test stops at ``test_pairs``. ``block_fractions``
    (of T) and ``multipliers`` (of the certified ε or noise; 1 is the certified point) set the
    grid. ``progress=True`` draws a bar (regret measurements, then test pairs against the
    budget); a callable ``progress(done, total)`` is called as they are spent. Returns a
    :class:`Calibration`.

    Any other learner — a registered name, or a factory of yours taking n, horizon, rng (a class,
    or a ``functools.partial`` of one) — is calibrated over ``grid``, a list of knob dicts passed
    to it as keyword arguments (``rho`` too, if it takes one; without ``grid``, the learner as
    given is the one candidate), against the whole stress suite; it has no certified point
    (``certified_knobs`` is None).
    """
    from .factory import label_of
    from .plugins import registry

    n, horizon, rho = check_int("n", n, minimum=2), check_int("horizon", horizon, minimum=16), check_rho(rho)
    _check_arguments(n=n, horizon=horizon, rho=rho, seed=seed, adversaries=adversaries, reference=reference,
                     budget=budget, alpha=alpha, regret_pairs=regret_pairs, refine_pairs=refine_pairs,
                     test_pairs=test_pairs, block_fractions=block_fractions, multipliers=multipliers)
    user = not isinstance(name, str)
    if grid is None and (user or name not in CALIBRATABLE):
        grid = [{}]  # knobs unknown: the learner as given is the one candidate (its tests still decide)
    if grid is not None and (isinstance(grid, (str, Mapping)) or len(grid) == 0
                             or not all(isinstance(g, Mapping) for g in grid)):
        raise InvalidArgumentError(f"grid must be a non-empty list of dicts of knobs; got {grid!r}")
    label = label_of(name) if user else name
    spec = None if user else registry().learner(name)
    spec_guarantee = None if spec is None else spec.guarantee
    # rho goes to a registered learner whose parameters come from a replicability theorem (or that
    # claims one); a user's factory gets it when it takes it (_user_build)
    named_rho = {} if spec is None or (spec.parameters is None and spec.guarantee is None) else {"rho": rho}
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
    # progress: regret measurements (one unit each) and then the tests' pairs against the budget
    work = len(points) + min(REFINE_TOP, len(points)) + budget
    bar = reporter(progress, f"calibrate {label}")

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
                              adversary_params=dict(params), **extra, **kw)
        if kw.get("sequential"):
            used += report.pairs  # the budget is for the tests (and stress searches) that back the claim
        else:
            measured += 1
        if bar is not None:
            bar(min(work, measured + used), work)
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
            if used >= budget:
                break
            tried += 1
            screen = measure(knobs, "ties", {"k": 2, **scale}, SCREEN_PAIRS, seed + 2)
            if screen.rho_ci[0] > rho:
                refused.append((dict(knobs), AdversaryCheck(adversary="ties", params={"k": 2, **scale}, decision="screened out",
                                                             pairs=screen.pairs, rho_hat=screen.rho_hat, interval=screen.rho_ci)))
                continue
            block = int(knobs.get("block_size", 1))
            iid = spec_guarantee == "iid"
            suite = (_suite(n, block, horizon, iid, (ref_name, ref_params)) if adversaries == "stress"
                     else [(a, dict(p)) for a, p in adversaries])
            suite = [(a, {**p, **scale} if a in ("ties", "crossing", "block-switch") else p) for a, p in suite]
            checks, passed = [], True
            if adversaries == "stress":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ReplifyWarning)
                    found = stress(learner_for(knobs), n=n, horizon=horizon, budget=min(400, max(100, budget - used)),
                                   seed=seed, families=["ties"] if iid else None,
                                   **({} if user else dict(knobs, **named_rho)))
                used += found.pairs_used
                suite.append((found.worst.family, found.worst.params))
            for adversary, params in suite:
                report = measure(knobs, adversary, params, test_pairs, seed + 1, target=rho, sequential=True, alpha=alpha)
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
                                   grid=tuple((dict(k), float(m), float(r)) for (k, m), r in zip(points, regrets)),
                                   refused=tuple(refused))
        raise InvalidArgumentError(
            f"calibrate({label!r}) found no candidate that the sequential test decided below rho={rho} on every adversary "
            f"within budget={budget} pairs ({tried} tried); raise budget or test_pairs"
            + ("" if certified is None else f", or use the certified parameters {certified}")
        )
    finally:
        if bar is not None:
            bar.close()
