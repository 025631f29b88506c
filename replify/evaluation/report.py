"""What :func:`replify.evaluate` measured, pair by pair, and its summaries (:class:`Report`); one
pair run again from its seeds (:class:`Replay`) is :mod:`replify.evaluation.replay`'s."""

from __future__ import annotations

import math
import pickle
from typing import Any

import attrs
import numpy as np

# REPLAY_BYTES and Replay lived here: they import from here still
from replify.evaluation.replay import REPLAY_BYTES, Replay, _from_data_reason, _Pickled, replay_pair
from replify.evaluation.reportdata import ARRAYS, check_summaries, report_fields
from replify.evaluation.stats import clopper_pearson, t_interval, t_quantile
from replify.guarantees.certificates import UnionBound


#: Transitions listed one by one in :meth:`Report.to_dict` (beyond this the arrays stay in the report).
MAX_LISTED_TRANSITIONS = 1000


def _seed_record(seed: Any) -> Any:
    if isinstance(seed, np.random.SeedSequence):
        return {"entropy": seed.entropy, "spawn_key": list(seed.spawn_key)}
    return seed


@attrs.frozen(eq=False, kw_only=True)
class Report:
    """What :func:`evaluate` measured, pair by pair, and its summaries.

    Per pair: ``identical`` (the two whole action sequences agree), ``agreement`` (fraction of
    steps on which they agree), ``first_divergence`` (the first step, counted from 1 as in the
    paper, on which they differ; 0 when they never do) and ``regret`` (shape ``(pairs, 2)``,
    each run against the best fixed action in hindsight on its own costs). ``agreement_curve``
    is, per time bin (``curve_edges``, steps), the fraction of (pair, step) on which the two runs
    play the same action; ``action_counts`` (experts) is ``(pairs, 2, n)``: how many steps each run
    played each expert.

    Reference and diagnostics (paper §1's approximate replicability; the proofs' assumptions):
    ``constant_regret`` (experts, ``(pairs, 2)``) is the regret of ``constant`` — an expert drawn
    from R and never changed — on the very same draws and with the pair's own R (the expert
    ``make("constant", seed=...)`` plays with the pair's seed), so ``learning_gain`` says how much
    the learner learned, and ``constant`` against itself gains exactly 0; ``disagreement_counts`` counts, per segment (a block of
    ``segment_length`` steps for block learners, else a step), the pairs whose runs play
    different actions there (``None`` for learners without blocks beyond 2^25 steps, to bound
    memory); ``drift`` holds, per pair, ‖c_(1:t) − c'_(1:t)‖₁ and
    max − min of c_(1:t) − c'_(1:t) at the transitions ``drift_steps``.

    ``regret_curve_values`` is ``(pairs, 2, k)``: each run's regret at the steps ``curve_steps``
    (the ends of the time bins; for block learners the first block end at or after each, where
    their sums are known); :attr:`regret_curve` summarises it.

    ``pseudo_regret`` (experts, ``(pairs, 2)``, when the adversary knows its means through
    ``expected_sums``): Σ_t μ_t(a_t) − min_a Σ_t μ_t(a), the regret against the best mean —
    free of the draw's noise in the best expert's total.

    ``cost_range`` (``(low, high)`` or None): the range the engine held every cost to — the
    learner's declared cost domain — which bounds what the regrets can be.
    """

    learner: str
    adversary: str
    n: int
    horizon: int
    pairs: int
    seed: Any
    confidence: float
    identical: np.ndarray
    agreement: np.ndarray
    first_divergence: np.ndarray
    regret: np.ndarray
    params: dict[str, Any] | None
    regret_bound: float | None
    fast_path: bool = False
    agreement_curve: np.ndarray | None = None
    curve_edges: np.ndarray | None = None
    action_counts: np.ndarray | None = None
    constant_regret: np.ndarray | None = None
    disagreement_counts: np.ndarray | None = None
    segment_length: int = 1
    drift_steps: np.ndarray | None = None
    drift: np.ndarray | None = None
    pseudo_regret: np.ndarray | None = None
    #: what :meth:`replay` needs (the learner callable, the adversary, the evaluation's root seed);
    #: not part of the report's data (never in to_dict)
    replay_source: Any = attrs.field(default=None, repr=False)
    curve_steps: np.ndarray | None = None
    regret_curve_values: np.ndarray | None = None
    target: float | None = None
    decision: str | None = None
    sequential_interval: tuple[float, float] | None = None
    alpha: float | None = None
    sequential_p_value: float | None = None  # 1/sup_t M_t(target): anytime-valid, for Holm across many tests
    #: versions, BLAS, the seed's entropy and the configuration (:func:`replify.evaluation.provenance.provenance`)
    provenance: dict[str, Any] | None = None
    #: why ``regret_bound`` is None when the learner registers a bound that does not cover the
    #: hyperparameters in force (:meth:`replify.LearnerSpec.regret_bound_for`)
    regret_bound_note: str | None = None
    #: (low, high): the range every cost of the evaluation lay in, as the engine enforced it (the
    #: learner's declared cost domain); None when unknown. It bounds what the regrets can be
    #: (:meth:`from_dict` holds them to it).
    cost_range: tuple[float, float] | None = None

    def __reduce__(self) -> Any:
        # A report pickles whatever built it: what replay needs (the user's learner callable, the
        # adversary) goes along when it pickles, and is otherwise replaced by the reason it cannot,
        # which replay() then gives. The measured data always survive.
        # It goes along as bytes, unpickled only when replay() needs it: a report unpickles anywhere,
        # also where the user's learner module cannot be imported (replay then says why it cannot).
        fields = {a.name: getattr(self, a.name) for a in attrs.fields(type(self))}
        source = fields["replay_source"]
        if source is not None and not isinstance(source, (str, _Pickled)):
            try:
                fields["replay_source"] = _Pickled(pickle.dumps(source))
            except Exception as exc:  # noqa: BLE001 - any failure to pickle means the same here
                fields["replay_source"] = (f"it was pickled, and its learner or adversary could not be "
                                           f"({type(exc).__name__}: {exc}); replay it where it was made")
        return (_rebuild, (type(self), fields))

    @property
    def failures(self) -> int:
        """Pairs whose two action sequences differ somewhere."""
        return int(self.pairs - self.identical.sum())

    @property
    def rho_hat(self) -> float:
        """The estimated probability that the two runs of a pair differ."""
        return self.failures / self.pairs

    @property
    def sequential(self) -> bool:
        """Whether the number of pairs was decided by the data (``evaluate(sequential=True)``)."""
        return self.decision is not None

    @property
    def rho_ci(self) -> tuple[float, float]:
        """The interval for ρ (see :attr:`rho_ci_kind`). With a fixed number of pairs: the exact
        Clopper–Pearson interval at level ``confidence``. After a sequential run, which stopped
        when the data said so: the anytime-valid confidence sequence at that stop
        (``sequential_interval``, level 1 − ``alpha``), which keeps its coverage at a
        data-dependent stopping time; a fixed-n interval does not (its coverage there falls below
        its level, see :attr:`rho_ci_fixed_n`)."""
        if self.sequential:
            return self.sequential_interval
        return self.rho_ci_fixed_n

    @property
    def rho_ci_kind(self) -> str:
        """What :attr:`rho_ci` is, in words a paper can quote."""
        if self.sequential:
            return (f"anytime-valid {1 - self.alpha:.0%} confidence sequence (beta-binomial mixture, Howard et al. "
                    f"2021) at the sequential stop, {self.pairs} pairs")
        return f"exact Clopper-Pearson {self.confidence:.0%} interval, {self.pairs} pairs fixed in advance"

    @property
    def rho_ci_fixed_n(self) -> tuple[float, float]:
        """The exact Clopper–Pearson interval at level ``confidence`` *as if* the number of pairs
        had been fixed in advance. After a sequential stop this is not a valid confidence
        interval (the stop depends on the failures; measured coverage 91–95 % at a nominal 95 %):
        it is kept for comparison only, under this name."""
        return clopper_pearson(self.failures, self.pairs, self.confidence)

    @property
    def agreement_mean(self) -> float:
        return float(self.agreement.mean())

    @property
    def first_divergence_median(self) -> float | None:
        """Median first divergent step over the pairs that diverge (None if none does)."""
        steps = self.first_divergence[self.first_divergence > 0]
        return float(np.median(steps)) if steps.size else None

    @property
    def regret_mean(self) -> float:
        return float(self.regret.mean())

    @property
    def trivial_regret(self) -> float:
        """The regret every learner is within: T times the width of the cost range the engine held
        the costs to (``cost_range``; 1, costs in [0, 1], where none is known)."""
        width = 1.0 if self.cost_range is None else float(self.cost_range[1] - self.cost_range[0])
        return float(self.horizon) * width

    @property
    def regret_bound_vacuous(self) -> bool | None:
        """Whether the certified ``regret_bound`` says nothing: it is at least :attr:`trivial_regret`,
        which any learner meets (``None`` when there is no bound). A learner whose bound is capped at
        T (``perturbed-bandit``) or whose theorem's bound exceeds it at this horizon (``iid-experts``
        at small T) is then certified for nothing here."""
        return None if self.regret_bound is None else self.regret_bound >= self.trivial_regret

    @property
    def regret_ci(self) -> tuple[float, float]:
        """Student's t interval for the expected regret at level ``confidence``. The two runs of
        a pair share R, so the interval is built on the per-pair mean regrets, which are iid."""
        return t_interval(self.regret.mean(axis=1), self.confidence)

    @property
    def certified(self) -> bool | None:
        """Whether the learner's parameters certify the ρ it was given (docs/claims.md); None for a
        learner that makes no replicability claim."""
        return None if self.params is None else self.params.get("certified")

    @property
    def claim(self) -> str:
        """What the replicability numbers may claim (docs/claims.md): ``"calibrated"`` for a learner
        built by :meth:`replify.Calibration.make` (its ``params["calibration"]`` says on what),
        ``"certified"`` when the parameters in force certify ρ, else ``"measured"``."""
        params = self.params or {}
        if params.get("calibration"):
            return "calibrated"
        return "certified" if params.get("certified") else "measured"

    def replay(self, k: int) -> Replay:
        """Pair ``k`` again, from its seeds (nothing is stored): the learner built from the pair's
        seed, each run on the per-step costs drawn from its own data seed — the costs, both action
        sequences and both regrets, to look inside one pair. Memory: two (T, n) cost arrays."""
        return replay_pair(self, k)

    @property
    def regret_curve(self) -> dict[str, Any] | None:
        """Measured: the mean cumulative regret over time, ``{"steps", "mean", "low", "high"}``,
        with a Student-t interval at each step on the per-pair means (the two runs of a pair share R)."""
        if self.regret_curve_values is None or self.curve_steps is None:
            return None
        per_pair = self.regret_curve_values.mean(axis=1)  # (pairs, k)
        intervals = _t_intervals(per_pair, self.confidence)
        return {"steps": self.curve_steps.copy(), "mean": per_pair.mean(axis=0), "low": intervals[:, 0],
                "high": intervals[:, 1]}

    @property
    def pseudo_regret_mean(self) -> float | None:
        """Measured: the mean pseudo-regret (against the best mean); None when the adversary does
        not know its means."""
        return None if self.pseudo_regret is None else float(self.pseudo_regret.mean())

    @property
    def pseudo_regret_ci(self) -> tuple[float, float] | None:
        """Student's t interval for :attr:`pseudo_regret_mean`, on the per-pair means (iid)."""
        return None if self.pseudo_regret is None else t_interval(self.pseudo_regret.mean(axis=1), self.confidence)

    # -- reference: the learning gain over `constant` ---------------------------------------------
    @property
    def learning_gain(self) -> float | None:
        """Measured: the regret of ``constant`` minus the learner's, each run on the same cost draws
        and with the same R (``constant_regret - regret``, averaged over the pairs' runs; experts,
        None for OLO). Near zero or below: the learner has not learned anything."""
        return None if self.constant_regret is None else float((self.constant_regret - self.regret).mean())

    @property
    def learning_gain_ci(self) -> tuple[float, float] | None:
        """Student's t interval for :attr:`learning_gain`, on the per-pair differences (iid)."""
        if self.constant_regret is None:
            return None
        return t_interval((self.constant_regret - self.regret).mean(axis=1), self.confidence)

    # -- approximate replicability ---------------------------------------------------------------
    @property
    def step_disagreement(self) -> np.ndarray | None:
        """Per segment (block for block learners, step otherwise): the fraction of pairs whose two
        runs play different actions there."""
        return None if self.disagreement_counts is None else self.disagreement_counts / self.pairs

    @property
    def max_step_disagreement(self) -> float | None:
        """max_t of the fraction of pairs with a_t ≠ a'_t (the paper's remark on approximate
        replicability, §1): how far from replicable the worst single step is."""
        return None if self.disagreement_counts is None else int(self.disagreement_counts.max()) / self.pairs

    @property
    def max_step_disagreement_ci(self) -> tuple[float, float] | None:
        """A simultaneous interval for max_t P(a_t ≠ a'_t) at level ``confidence``: the lower end is
        the exact lower bound of the most-disagreeing segment with a Bonferroni correction over all
        segments (α/2 shared among them); the upper end is the smaller of the same Bonferroni
        bound (α/4) and the exact upper bound on ρ (α/4), which bounds every step's rate."""
        if self.disagreement_counts is None:
            return None
        alpha, segments = 1.0 - self.confidence, self.disagreement_counts.size
        worst = int(self.disagreement_counts.max())
        lower = clopper_pearson(worst, self.pairs, 1.0 - alpha / segments)[0]
        upper_all = clopper_pearson(worst, self.pairs, 1.0 - alpha / (2 * segments))[1]
        upper_rho = clopper_pearson(self.failures, self.pairs, 1.0 - alpha / 2)[1]
        return lower, min(upper_all, upper_rho)

    # -- where pairs part, against the proof -----------------------------------------------------
    def _transitions(self) -> int | None:
        if self.segment_length <= 1 or self.disagreement_counts is None:
            return None
        return self.disagreement_counts.size - 1

    @property
    def transition_divergence(self) -> np.ndarray | None:
        """Block learners: for each transition k = 1..⌈T/B⌉−1 (step kB+1), the fraction of pairs
        whose runs first differ there. It sums to ρ̂ (the first block is played from R alone)."""
        k = self._transitions()
        if k is None:
            return None
        first = self.first_divergence[self.first_divergence > 0]
        counts = np.bincount((first - 1) // self.segment_length, minlength=k + 1)
        return counts[1:] / self.pairs

    @property
    def transition_bound(self) -> np.ndarray | None:
        """The proof's bound on each transition (certified), where the learner declares its union
        bound: compare with :attr:`transition_divergence`."""
        k = self._transitions()
        union = (self.params or {}).get("union_bound")
        if k is None or union is None:
            return None
        return UnionBound(**union).per_transition(
            float(self.params["eps"]), horizon=self.horizon, block_size=self.segment_length
        )

    @property
    def concentration(self) -> list[dict[str, Any]] | None:
        """The proof's assumption, measured: at sampled transitions t, the drift between the two
        draws of a pair in the norm the proof charges (‖Δ‖₁ or max Δ − min Δ), its mean and
        quantiles over pairs, beside the mean the union bound assumes (``mean_bound``, certified)
        and the high-probability radius the paper's theorem uses (``radius``, exceeded with
        probability at most ``tail`` per step)."""
        union = (self.params or {}).get("union_bound")
        if self.drift is None or union is None:
            return None
        column = 0 if union["norm"] == "l1" else 1
        rows = []
        for j, t in enumerate(self.drift_steps.tolist()):
            values = self.drift[:, j, column]
            q50, q90, q99 = np.quantile(values, [0.5, 0.9, 0.99]).tolist()
            radius = None if union["radius"] is None else union["radius"] * math.sqrt(t)
            rows.append({
                "step": t, "norm": union["norm"], "mean": float(values.mean()), "q50": q50, "q90": q90, "q99": q99,
                "max": float(values.max()), "mean_bound": union["mean"] * math.sqrt(t), "radius": radius,
                "tail": union["tail"], "above_radius": None if radius is None else float((values > radius).mean()),
            })
        return rows

    def to_dict(self, *, per_pair: bool = False) -> dict[str, Any]:
        """A JSON-ready summary (``per_pair=True`` adds the per-pair arrays)."""
        out: dict[str, Any] = {
            "learner": self.learner,
            "adversary": self.adversary,
            "n": self.n,
            "horizon": self.horizon,
            "pairs": self.pairs,
            "seed": _seed_record(self.seed),
            "confidence": self.confidence,
            "failures": self.failures,
            "rho_hat": self.rho_hat,
            "rho_ci": list(self.rho_ci),
            "rho_ci_kind": self.rho_ci_kind,
            "rho_ci_fixed_n": list(self.rho_ci_fixed_n),
            "agreement_mean": self.agreement_mean,
            "first_divergence_median": self.first_divergence_median,
            "regret_mean": self.regret_mean,
            "regret_ci": list(self.regret_ci),
            "regret_bound": self.regret_bound,
            "regret_bound_note": self.regret_bound_note,
            "fast_path": self.fast_path,
            "certified": self.certified,
            "claim": self.claim,
            "params": self.params,
            "pseudo_regret_mean": self.pseudo_regret_mean,
            "pseudo_regret_ci": None if self.pseudo_regret_ci is None else list(self.pseudo_regret_ci),
            "learning_gain": self.learning_gain,
            "learning_gain_ci": None if self.learning_gain_ci is None else list(self.learning_gain_ci),
            "max_step_disagreement": self.max_step_disagreement,
            "max_step_disagreement_ci": None if self.max_step_disagreement_ci is None else list(self.max_step_disagreement_ci),
            "concentration": self.concentration,
            "provenance": self.provenance,
        }
        if self.decision is not None:
            out |= {"target": self.target, "decision": self.decision, "pairs_run": self.pairs, "alpha": self.alpha,
                    "sequential_interval": list(self.sequential_interval), "sequential_p_value": self.sequential_p_value}
        divergence, bound = self.transition_divergence, self.transition_bound
        if divergence is not None and divergence.size <= MAX_LISTED_TRANSITIONS:
            out["transition_divergence"] = divergence.tolist()
            out["transition_bound"] = None if bound is None else bound.tolist()
        if self.agreement_curve is not None:
            out["agreement_curve"] = {"edges": self.curve_edges.tolist(), "fraction": self.agreement_curve.tolist()}
        curve = self.regret_curve
        if curve is not None:
            out["regret_curve"] = {k: np.asarray(v).tolist() for k, v in curve.items()}
        if per_pair:  # every stored array, so that from_dict rebuilds the report
            for name in ARRAYS:
                value = getattr(self, name)
                if value is not None and name != "agreement_curve":  # listed above with its edges
                    out[name] = _plain(value)
            out["segment_length"] = self.segment_length
            out["cost_range"] = None if self.cost_range is None else [float(v) for v in self.cost_range]
        return out

    @classmethod
    def from_dict(cls, data: Any) -> "Report":
        """The report that :meth:`to_dict` ``(per_pair=True)`` described — after a JSON round
        trip too: ``Report.from_dict(json.loads(json.dumps(r.to_dict(per_pair=True))))`` has
        the same fields, hence the same summaries, as ``r``. It cannot :meth:`replay` (the
        learner and adversary are objects, not data; :meth:`replay` says what to do instead —
        evaluate again with the configuration ``provenance`` records, or pickle the report, which
        keeps them).

        Every field is checked, and the fields against each other — every relation the engine's
        outcomes obey, and every summary against the rows (:mod:`replify.evaluation.reportdata`
        lists them): a hand-edited or damaged report is refused with the fields named, never read
        back as measured numbers."""
        report = cls(**report_fields(data), replay_source=_from_data_reason(data))
        check_summaries(report, data)
        return report


def _t_intervals(columns: np.ndarray, confidence: float) -> np.ndarray:
    """:func:`~replify.evaluation.stats.t_interval` of every column, (k, 2) — the same floats, with
    the t quantile (one bisection) found once for all the columns, which share their size."""
    k = columns.shape[0]
    if k < 2 or not np.isfinite(columns).all():  # t_interval refuses them, and says why
        return np.array([t_interval(columns[:, j], confidence) for j in range(columns.shape[1])])
    q = t_quantile(0.5 + confidence / 2.0, k - 1)
    out = np.empty((columns.shape[1], 2))
    for j in range(columns.shape[1]):
        values = columns[:, j].astype(np.float64)  # contiguous, as t_interval sums it
        mean = float(values.mean())
        half = q * float(values.std(ddof=1)) / math.sqrt(k)
        out[j] = mean - half, mean + half
    return out


def _rebuild(cls: type, fields: dict[str, Any]) -> Any:
    return cls(**fields)


def _plain(array: np.ndarray) -> list:
    """An array as nested lists of plain JSON values: NaN (a step not reached, a drift not
    measured) becomes None, which strict JSON allows and :meth:`Report.from_dict` reads back."""
    a = np.asarray(array)
    if a.dtype.kind == "f" and np.isnan(a).any():
        obj = a.astype(object)
        obj[np.isnan(a)] = None
        return obj.tolist()
    return a.tolist()
