"""The off-policy demo on wine (``replify demo offpolicy``, docs/offpolicy.md): one log of the
supervised-to-bandit construction (Dudík, Langford & Li, ICML 2011) on the shipped wine data,
four policies estimated by IPS, SNIPS and DR with their intervals beside their true values, the
replicable choice among them, and how often pairs of independent logs disagree on the choice and on
a replicable value, against the certified ρ — measured as :class:`replify.Report`s.
Its figure is docs/offpolicy.png. Beside it, the same decision on a fresh log (:func:`fresh_logs`):
the naive and the certified choice over many pairs of independent logs, docs/offpolicy_fresh.png."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import attrs
import numpy as np

from replify.base.checks import public
from replify.base.progress import ProgressArg, reporter
from replify.components.rounded_ridge import population_estimate
from replify.errors import SmallSampleWarning
from replify.evaluation.report import Report
from replify.offpolicy.estimators import Estimate, estimate
from replify.offpolicy.log import Log
from replify.offpolicy.measure import replicability
from replify.offpolicy.select import Replicable, replicable_value, select
from replify.plugins.factory import make_adversary
from replify.plots import colour, figure, figure_legend, save_figure, set_title, styled
from replify.plots.fitting import set_labels

#: The wine log's layout: every arm shown the row (1, z), z the 13 standardised features; z_1 is
#: the alcohol content.
WINE = {"adversary_params": {"features_as": "same"}}

#: The demo's policies, functions of the contexts (rows, 3, 14): rule A plays cultivar 0 where
#: the alcohol content is high, else 1; rule B 0, 1 or 2 by high, low or middling alcohol.
POLICIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "rule A": lambda c: np.where(c[:, 0, 1] > 0, 0, 1),
    "rule B": lambda c: np.where(c[:, 0, 1] > 0.03, 0, np.where(c[:, 0, 1] < -0.03, 1, 2)),
    "always 0": lambda c: np.zeros(c.shape[0], dtype=np.int64),
    "always 2": lambda c: np.full(c.shape[0], 2, dtype=np.int64),
}

ESTIMATES = ("ips", "snips", "dr")


@attrs.frozen
class OffpolicyDemo:
    """The demo's results: ``estimates[policy][estimator]`` on one log of ``rows`` rows, the
    replicable ``choice`` on it at ρ = 0.1, and ``measured[decision]`` — one
    :class:`~replify.evaluation.report.Report` per certified ρ in ``rhos`` — over ``pairs`` pairs of
    independent logs of ``pair_rows`` rows. The interface of replify's other demos: :meth:`table`,
    :meth:`settings_line`, ``note``, :meth:`to_dict`, :meth:`plot`."""

    rows: int
    pair_rows: int
    pairs: int
    seed: int
    rhos: tuple[float, ...]
    estimates: dict[str, dict[str, Estimate]]
    choice: Replicable
    measured: dict[str, list[Report]]
    name: str = "offpolicy"
    note: str = ("certified: the replicable choice's and value's rho (docs/offpolicy.md); the intervals are "
                 "the estimators' normal approximations; every other number is measured (docs/claims.md)")

    def settings_line(self) -> str:
        return (f"wine log of {self.rows} rows (uniform logging), pairs of {self.pair_rows}-row logs: {self.pairs} "
                f"per rho, seed={self.seed}")

    def table(self) -> str:
        lines = [f"{'policy':<10} {'true':>7}  " + "  ".join(f"{e.upper() + ' [95%]':<26}" for e in ESTIMATES)]
        for policy, got in self.estimates.items():
            cells = [f"{got[e].value:.4f} [{got[e].interval[0]:.4f}, {got[e].interval[1]:.4f}]" for e in ESTIMATES]
            lines.append(f"{policy:<10} {got['ips'].true_value:>7.4f}  " + "  ".join(f"{c:<26}" for c in cells))
        chosen = list(self.estimates)[self.choice.chosen]
        lines.append(f"replicable choice at rho = {self.choice.rho_bound:g}: {chosen} (grid width "
                     f"{self.choice.width:.3g}, {'certified' if self.choice.certified else 'measured'})")
        if self.choice.caveat:
            lines.append(f"  note: {self.choice.caveat}")
        for decision, reports in self.measured.items():
            for rho, r in zip(self.rhos, reports):
                lines.append(f"{decision} at certified rho {rho:g}: {r.failures} of {r.pairs} pairs of logs disagree, "
                             f"rho_hat {r.rho_hat:.3f} [{r.rho_ci[0]:.3f}, {r.rho_ci[1]:.3f}] ({r.claim})")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        est = {p: {e: {"value": v.value, "interval": list(v.interval) if v.interval is not None else None,
                       "true_value": v.true_value} for e, v in got.items()} for p, got in self.estimates.items()}
        return {"demo": self.name, "settings": {"rows": self.rows, "pair_rows": self.pair_rows, "pairs": self.pairs,
                                                "seed": self.seed, "rhos": list(self.rhos)},
                "estimates": est, "choice": {"policy": list(self.estimates)[self.choice.chosen],
                                             "width": self.choice.width, "certified": self.choice.certified,
                                             "caveat": self.choice.caveat},
                "measured": {d: [{"rho": rho, "failures": r.failures, "pairs": r.pairs, "rho_hat": r.rho_hat,
                                  "rho_ci": list(r.rho_ci)} for rho, r in zip(self.rhos, reports)]
                             for d, reports in self.measured.items()},
                "note": self.note}

    def plot(self, path: Any = None) -> Any:
        """Left: each policy's IPS, SNIPS and DR estimate with its 95% interval, the true value as a
        black line across the three, drawn over the markers. Right: the fraction of pairs of logs
        that disagree, with exact 95% intervals, against the certified ρ. Drawn in replify's style
        (texts, legend and axes in one font size), legible at a column's width."""
        with styled():
            fig, (left, right) = figure(1, 2)
            policies = list(self.estimates)
            for name, dx in zip(ESTIMATES, (-0.22, 0.0, 0.22)):
                c, m = colour(fig, name.upper())
                values = [self.estimates[p][name] for p in policies]
                mid = np.array([v.value for v in values])
                err = np.array([[v.value - v.interval[0], v.interval[1] - v.value] for v in values]).T
                # small markers and thick bars: at 10^5 rows an interval is narrower than a large marker
                left.errorbar(np.arange(len(policies)) + dx, mid, yerr=err, fmt=m, color=c, capsize=3, markersize=3.5,
                              elinewidth=1.6, label=f"{name.upper()} (95% interval)")
            truth = [self.estimates[p]["ips"].true_value for p in policies]
            left.hlines(truth, np.arange(len(policies)) - 0.36, np.arange(len(policies)) + 0.36, color="black",
                        linewidth=1.0, zorder=5, label="true value")
            left.set_xticks(np.arange(len(policies)), policies)
            set_labels(left, "policy", "expected cost (mistakes)")
            set_title(left, True, f"Off-policy estimates, one log of {self.rows:,} rows; pairs of logs of "
                                  f"{self.pair_rows:,} rows, {self.pairs} pairs")
            rhos = list(self.rhos)
            top = 0.0
            shift = 0.02 * (max(rhos) - min(rhos) or max(rhos))  # the two decisions side by side, never hidden
            for (decision, reports), dx in zip(self.measured.items(), (-shift, shift)):
                c, m = colour(fig, decision)
                err = np.array([[r.rho_hat - r.rho_ci[0], r.rho_ci[1] - r.rho_hat] for r in reports]).T
                right.errorbar(np.array(rhos) + dx, [r.rho_hat for r in reports], yerr=err, fmt=m, color=c, capsize=3,
                               markersize=4, label=f"{decision.split()[-1]}: pairs that disagree", clip_on=False)
                top = max(top, max(r.rho_ci[1] for r in reports))
            right.plot(rhos, rhos, linestyle="--", color="grey", label=r"certified $\rho$")
            # room below 0 and beside the extreme rho: a marker at rho_hat = 0 is drawn whole
            right.set_ylim(-0.04 * max(top, max(rhos)), 1.05 * max(top, max(rhos)))
            right.set_xlim(min(rhos) - 3 * shift, max(rhos) + 3 * shift)
            set_labels(right, r"certified $\rho$", "pairs of logs that disagree")
            figure_legend(left)
            figure_legend(right)
            return save_figure(fig, path)


@public
def wine_demo(*, quick: bool = False, seed: int = 0, pairs: int | None = None, progress: ProgressArg = None) -> OffpolicyDemo:
    """The off-policy demo (module docstring): a log of 10⁵ rows (quick: 2 000) and, at certified
    ρ = 0.05, 0.1 and 0.2, ``pairs`` pairs (default 200; quick: 10) of independent compact logs of
    10⁶ rows, on which the replicable choice among the four policies and the replicable value of
    rule A are measured. About 20 s on two cores (quick: under 2 s)."""
    rows = 2_000 if quick else 10**5
    pairs = (10 if quick else 200) if pairs is None else pairs
    rhos = (0.05, 0.1, 0.2)
    log = Log.simulate("classification-bandit", n=3, rows=rows, seed=seed + 1, **WINE)
    pols = list(POLICIES.values())
    estimates = {p: {e: estimate(log, f, e) for e in ESTIMATES} for p, f in POLICIES.items()}
    choice = select(log, POLICIES, rho=0.1, seed=seed)

    def draw(s: np.random.SeedSequence) -> Log:
        return Log.simulate("classification-bandit", n=3, rows=10**6, seed=s, compact=True, **WINE)

    def choose(rho: float) -> Callable[[Log, Any], Replicable]:
        return lambda lg, r: select(lg, pols, rho=rho, seed=r)

    def value(rho: float) -> Callable[[Log, Any], Replicable]:
        return lambda lg, r: replicable_value(lg, pols[0], rho=rho, seed=r)

    bar = reporter(progress, "offpolicy demo")
    measured: dict[str, list[Report]] = {}
    try:
        for decision, make in (("replicable choice", choose), ("replicable value", value)):
            measured[decision] = []
            for rho in rhos:
                measured[decision].append(replicability(draw, make(rho), pairs=pairs, seed=seed + 3))
                bar(sum(map(len, measured.values())), 2 * len(rhos))
    finally:
        bar.close()
    return OffpolicyDemo(rows=rows, pair_rows=10**6, pairs=pairs, seed=seed, rhos=rhos, estimates=estimates,
                         choice=choice, measured=measured)


@attrs.frozen
class FreshLogs:
    """The same decision on a fresh log (docs/offpolicy.md, "The same decision on a fresh log"), from
    :func:`fresh_logs`: for each of ``sizes`` rows, how often the two logs of a pair chose differently
    (``differ[choice]``) and what the choice cost over the best candidate (``cost[choice]``), for the
    naive least-IPS choice and the certified one, over ``pairs`` pairs. Measured."""

    sizes: tuple[int, ...]
    pairs: int
    differ: dict[str, list[float]]
    cost: dict[str, list[float]]

    def plot(self, path: Any = None) -> Any:
        """Left: the pairs whose logs choose differently, against the rows in each log, beside the
        certificate's ρ. Right: the choice's true cost over the best's. A page wide."""
        with styled():
            fig, (left, right) = figure(1, 2)
            for name in self.differ:
                c, m = colour(fig, name)
                left.plot(self.sizes, self.differ[name], marker=m, color=c, label=name)
                right.plot(self.sizes, self.cost[name], marker=m, color=c)
            left.axhline(0.1, color="grey", linewidth=0.8, linestyle="--", label="the certificate's ρ")
            for ax, label in ((left, "pairs of logs choosing differently"), (right, "true cost over the best's")):
                ax.set_xscale("log")
                set_labels(ax, "rows in each log", label)
            set_title(left, True, f"The same decision on a fresh wine log: {self.pairs:,} pairs of logs a size")
            figure_legend(left)
        return save_figure(fig, path)


def fresh_candidates() -> list[Callable[[np.ndarray], np.ndarray]]:
    """The study's eight candidates on wine's block features: the greedy policy of the ridge limit of
    wine's costs, five perturbations of it (1% to 20% of its norm along random directions: near-ties),
    and two random rules (generator seed 0)."""
    seq = make_adversary("classification-bandit", n=3, horizon=10, seed=0)
    best = population_estimate(seq, center=0.5)[0]
    rng = np.random.default_rng(0)
    weights = [best]
    for eps in (0.01, 0.02, 0.05, 0.1, 0.2):
        step = rng.normal(size=best.size)
        weights.append(best + eps * np.linalg.norm(best) * step / np.linalg.norm(step))
    weights += [rng.normal(size=best.size) * np.linalg.norm(best) for _ in range(2)]
    return [_greedy(w) for w in weights]


def _greedy(w: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.argmin(x @ w, axis=1)


def fresh_logs(*, pairs: int = 1000, sizes: tuple[int, ...] = (10**3, 10**4, 10**5, 10**6),
               rho: float = 0.1) -> FreshLogs:
    """For ``pairs`` pairs of independent compact wine logs at each size (uniform logging, exact in
    law), the naive choice (least IPS estimate) and the certified one (:func:`select` at ``rho``, R
    shared by the pair and drawn afresh for each pair) among :func:`fresh_candidates`."""
    pols = fresh_candidates()
    names = ("naive (least IPS)", f"certified (select, rho = {rho:g})")
    differ: dict[str, list[float]] = {k: [] for k in names}
    cost: dict[str, list[float]] = {k: [] for k in names}
    for rows in sizes:  # a loop over the sizes
        parted, paid = dict.fromkeys(names, 0), dict.fromkeys(names, 0.0)
        for p in range(pairs):  # a loop over the pairs of logs
            picks: dict[str, list[int]] = {k: [] for k in names}
            for side in (0, 1):
                log = Log.simulate("classification-bandit", n=3, rows=rows, seed=2 * p + side, compact=True)
                truth = np.array([log.true_value(pol) for pol in pols])
                with warnings.catch_warnings():  # the naive choice reads the point estimates only
                    warnings.simplefilter("ignore", SmallSampleWarning)
                    naive = int(np.argmin([estimate(log, pol, "ips").value for pol in pols]))
                certified = select(log, pols, rho=rho, seed=10**6 + p).chosen  # R shared by the pair
                for k, c in zip(names, (naive, certified)):
                    picks[k].append(c)
                    paid[k] += float(truth[c] - truth.min()) / (2 * pairs)
            for k in names:
                parted[k] += picks[k][0] != picks[k][1]
        for k in names:
            differ[k].append(parted[k] / pairs)
            cost[k].append(paid[k])
    return FreshLogs(sizes=tuple(sizes), pairs=pairs, differ=differ, cost=cost)
