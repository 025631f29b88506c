"""The paper's lower bounds (§7) and the "FLL is not replicable" example (§3.1), as code you can run.

* :func:`majority_decoder` and :func:`coin_reduction` — the reduction in the proof of
  ``thm:lower_bound_n=2_vanilla_replicability_experts``: a low-regret learner on the coin costs
  c_t = (ĉ_t, 1 − ĉ_t) plays the cheaper expert most of the time, so the majority of its actions
  decodes the coin's bias; a ρ-replicable learner thus solves the coin problem replicably, which
  needs ρ ≳ 1/(τ√T) (``lemma:coin_problem``), hence regret ≳ √T/ρ.
* :func:`coin_demo`, :func:`phases_demo`, :func:`lazy_leader_demo` — the three demos behind
  ``replify demo``. An empirical demo of a lower bound is evidence, not a proof: it shows the
  algorithms' measured regret growing with 1/ρ as the bound says it must, for these parameters.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Any, Callable, Iterator

import attrs
import numpy as np

from replify.base.checks import check_int, public
from replify.errors import BlockSizeWarning, InvalidArgumentError, ReplifyWarning
from replify.evaluation.evaluate import evaluate
from replify.evaluation.stats import binomial_upper_tail, clopper_pearson, t_interval
from replify.guarantees.theory import certified_eps
from replify.components.actions import Simplex
from replify.plots import colour, figure, figure_legend, log_axis, save_figure, set_title
from replify.plots.style import RHO_HAT, rho_hat_text
from replify.plugins.factory import make, make_adversary
from replify.base.progress import ProgressArg, reporter
from replify.base.randomness import DATA, INTERNAL, child, seed_sequence
from replify.wrapper import wrap


def majority_decoder(actions: Any) -> int:
    """The expert (0 or 1) played on most steps — the proof's decoder: expert 2 (index 1) in
    the majority means "bias ½ + τ". Ties go to expert 1 (index 0)."""
    a = np.asarray(actions)
    if a.ndim != 1 or a.size == 0 or not np.isin(a, (0, 1)).all():
        raise InvalidArgumentError(f"actions must be a non-empty sequence of experts 0 and 1, got shape {a.shape}")
    return int(np.count_nonzero(a == 1) > a.size / 2)


@attrs.frozen(kw_only=True)
class CoinReduction:
    """What the reduction measured over both signs of the coin: the decoder's success rate (one
    run per pair, so the trials are independent) with an exact interval, ρ̂ with an exact
    interval, and regret with a t interval."""

    tau: float
    horizon: int
    pairs: int
    successes: int
    trials: int
    failures: int
    regret_mean: float
    regret_ci: tuple[float, float]
    regret_bound: float | None

    @property
    def success_rate(self) -> float:
        return self.successes / self.trials

    @property
    def success_ci(self) -> tuple[float, float]:
        return clopper_pearson(self.successes, self.trials)

    @property
    def rho_hat(self) -> float:
        return self.failures / (2 * self.pairs)

    @property
    def rho_ci(self) -> tuple[float, float]:
        return clopper_pearson(self.failures, 2 * self.pairs)


@public
def coin_reduction(
    learner: str | Callable[..., Any], *, horizon: int, pairs: int, seed: int, tau: float | None = None,
    K: float | None = None, rho: float | None = None, **overrides: Any,
) -> CoinReduction:
    """Run ``learner`` on the coin adversary with s = +1 and s = −1 (``pairs`` pairs each) and
    decode every first run of a pair by :func:`majority_decoder`."""
    horizon, pairs = check_int("horizon", horizon, minimum=1), check_int("pairs", pairs, minimum=2)
    tau = make_adversary("coin", n=2, horizon=horizon, seed=seed, tau=tau, K=K, sign=1).tau  # tau, or K/(T/16)
    successes = failures = 0
    per_pair, bound = [], None
    for k, sign in enumerate((1, -1)):
        report = evaluate(
            learner, "coin", n=2, horizon=horizon, pairs=pairs, seed=seed * 2 + k, rho=rho,
            adversary_params={"tau": tau, "sign": sign}, **overrides,
        )
        best = 1 if sign > 0 else 0
        decoded = (report.action_counts[:, 0, 1] > horizon / 2).astype(int)  # the decoder, from the counts
        successes += int((decoded == best).sum())
        failures += report.failures
        per_pair.append(report.regret.mean(axis=1))
        bound = report.regret_bound
    regrets = np.concatenate(per_pair)
    return CoinReduction(
        tau=tau, horizon=horizon, pairs=pairs, successes=successes,
        trials=2 * pairs, failures=failures, regret_mean=float(regrets.mean()), regret_ci=t_interval(regrets),
        regret_bound=bound,
    )


@attrs.frozen
class Demo:
    """A demo's rows, a readable table, JSON, and its plot."""

    name: str
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    plot_fn: Callable[[Demo, Any], Any] = attrs.field(repr=False)
    note: str = "certified: a theorem's bound for the parameters used; every other number is measured (docs/claims.md)"

    def table(self) -> str:
        keys = list(self.rows[0])
        cells = [[_fmt(r[k]) for k in keys] for r in self.rows]
        widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
        lines = ["  ".join(k.ljust(w) for k, w in zip(keys, widths))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"demo": self.name, "settings": self.settings, "rows": self.rows, "note": self.note}

    def settings_line(self) -> str:
        return ", ".join(f"{k}={_fmt(v)}" for k, v in self.settings.items() if k not in ("traces", "grid"))

    def plot(self, path: Any = None) -> Any:
        return self.plot_fn(self, path)

    @classmethod
    def from_dict(cls, data: Any) -> Demo:
        """The demo :meth:`to_dict` wrote (the command line's ``--json``), to plot it again
        without running it again."""
        if not isinstance(data, dict) or data.get("demo") not in PLOTS or not {"rows", "settings"} <= set(data):
            raise InvalidArgumentError(
                f"Demo.from_dict takes a demo's to_dict() (demo, rows, settings, note; demo one of {', '.join(PLOTS)}); "
                f"got {str(data)[:80]!r}"
            )
        return cls(data["demo"], data["rows"], data["settings"], PLOTS[data["demo"]],
                   note=data.get("note", attrs.fields(cls).note.default))


@contextlib.contextmanager
def _closing(bar: Any) -> Iterator[None]:
    """Close a progress bar however the block ends (an interrupt included)."""
    try:
        yield
    finally:
        if bar is not None:
            bar.close()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


# -- the coin demo ---------------------------------------------------------------------------
#: The coin demo's learners: the ρ-replicable ones (certified for ρ at the parameters used), then
#: the two reference rows every replicable learner is shown beside (docs/claims.md).
COIN_REPLICABLE = ("ftplb-star", "split-commit", "wrapped hedge")
COIN_REFERENCES = ("constant", "hedge")


def _coin_learner(label: str, *, T: int, rho: float, B: int) -> tuple[Any, dict[str, Any]]:
    """The learner and its keyword arguments for :func:`coin_reduction`, at parameters that
    certify ρ (the reference rows take none)."""
    if label == "ftplb-star":
        return "ftplb-star", dict(rho=rho, block_size=B, eps=certified_eps("ftplb-star", horizon=T, n=2, rho=rho, block_size=B))
    if label == "split-commit":
        return "split-commit", dict(rho=rho)
    if label == "wrapped hedge":
        eps = certified_eps(horizon=T, n=2, rho=rho, block_size=B, norm="linf")
        return (lambda s: wrap("hedge", n=2, horizon=T, rho=rho, seed=s, block_size=B, eps=eps)), {}
    return label, {}


def _ticker(bar: Any, total: int) -> Callable[[], None]:
    """A callable that moves ``bar`` (None: no bar) one cell on, out of ``total``."""
    done = [0]

    def tick() -> None:
        done[0] += 1
        if bar is not None:
            bar(done[0], total)

    return tick


def _coin_cells(learner: Any, kw: dict[str, Any], *, cell: dict[str, Any], taus: list[float], T: int, pairs: int,
                seed: int, tick: Callable[[], None]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One learner's row of a coin demo: a cell per τ (``cell`` names the learner), and the row's
    summary — the worst regret over τ (the frontier point) and where, the decoder's success at the
    largest τ, and the largest ρ̂ with its interval."""
    cells = []
    for tau in taus:
        red = coin_reduction(learner, horizon=T, pairs=pairs, seed=seed, tau=tau, **kw)
        tick()
        cells.append({**cell, "tau": tau, "regret": red.regret_mean, "decoder success": red.success_rate,
                      "rho_hat": red.rho_hat, "rho_ci": list(red.rho_ci)})
    worst, worst_rho = max(cells, key=lambda c: c["regret"]), max(cells, key=lambda c: c["rho_hat"])
    return cells, {"worst regret": worst["regret"], "at tau": worst["tau"],
                   f"decoder success at tau={taus[-1]:g}": cells[-1]["decoder success"],
                   "rho_hat": worst_rho["rho_hat"], "rho_ci": worst_rho["rho_ci"]}


@public
def coin_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """The coin lower bound (``thm:lower_bound_n=2_vanilla_replicability_experts``) as a frontier.

    The theorem: a ρ-replicable learner whose actions decode the coin's bias ½ ± τ must pay regret
    ≳ min(√T/ρ, T/64) on some τ. For each ρ, each replicable learner runs — at parameters that
    *certify* ρ — on coins over a grid of τ from 0.5/√T to 0.24; a row gives its worst regret over
    the grid (the frontier point), the τ where it occurs, its decoder's success at the largest τ
    (does it learn?) and the largest ρ̂ measured. ``constant`` (replicable, never learns) and
    ``hedge`` (learns, not replicable) are the reference rows. The grid of every (learner, ρ, τ)
    is in ``settings["grid"]``.
    """
    # T large enough that the certified learners decode the coin at the largest tau (FTPLB* 0.7-1.0,
    # split-commit 1.0 at T = 200 000); smaller, they are replicable only because they do not learn.
    T = 4_000 if quick else 200_000
    pairs = 20 if quick else 40
    rhos = [0.1, 0.3] if quick else [0.05, 0.1, 0.2, 0.4]
    taus = np.geomspace(0.5 / math.sqrt(T), 0.24, 4 if quick else 6).tolist()
    B = T // 8
    grid, rows = [], []
    bar = reporter(progress, "demo coin")
    total = (len(COIN_REPLICABLE) * len(rhos) + len(COIN_REFERENCES)) * len(taus)
    tick = _ticker(bar, total)
    with warnings.catch_warnings(), _closing(bar):
        warnings.simplefilter("ignore", BlockSizeWarning)
        for label in COIN_REPLICABLE + COIN_REFERENCES:
            for rho in (rhos if label in COIN_REPLICABLE else [None]):
                learner, kw = _coin_learner(label, T=T, rho=rho if rho is not None else 0.0, B=B) if rho else (label, {})
                cells, summary = _coin_cells(learner, kw, cell={"algorithm": label, "rho": rho}, taus=taus, T=T,
                                             pairs=pairs, seed=seed, tick=tick)
                grid += cells
                ref = math.sqrt(T) / rho if rho else None
                rows.append({
                    "algorithm": label, "certified rho": rho if rho else ("0 (any)" if label == "constant" else "none"),
                    **summary, "sqrt(T)/rho": ref,
                    "worst/(sqrt(T)/rho)": None if ref is None else summary["worst regret"] / ref,
                })
    settings = {"T": T, "pairs per sign": pairs, "rhos": rhos, "taus": taus, "block_size": B, "seed": seed,
                "grid": grid}
    return Demo("coin", rows, settings, _plot_coin)


def _plot_coin(demo: Demo, path: Any) -> Any:
    T = demo.settings["T"]
    fig, (left, right) = figure(1, 2)
    rhos = np.array(demo.settings["rhos"])
    for row_label in COIN_REPLICABLE:
        rows = [r for r in demo.rows if r["algorithm"] == row_label]
        c, m = colour(fig, row_label)
        left.plot([r["certified rho"] for r in rows], [r["worst regret"] for r in rows], marker=m, color=c,
                  label=f"{row_label} (certified $\\rho$)")
    for ref_label, style in (("constant", ":"), ("hedge", "-.")):
        row = next(r for r in demo.rows if r["algorithm"] == ref_label)
        left.axhline(row["worst regret"], linestyle=style, color=colour(fig, ref_label)[0], linewidth=1,
                     label=f"{ref_label} (reference, {rho_hat_text(row['rho_hat'])})")
    left.plot(rhos, np.minimum(math.sqrt(T) / rhos, T / 64), linestyle="--", color="grey",
              label=r"$\min(\sqrt{T}/\rho,\ T/64)$: the bound's shape, constant unknown")
    log_axis(left, "x", rhos)
    log_axis(left, "y", [r["worst regret"] for r in demo.rows] + [T / 64])
    left.set_xlabel(r"certified $\rho$")
    left.set_ylabel(r"worst regret over $\tau$ (measured)")
    left.set_title(r"Regret frontier: worst case over $\tau$")
    figure_legend(left)
    mid = sorted(rhos)[len(rhos) // 2 - 1] if len(rhos) > 1 else rhos[0]
    for label in COIN_REPLICABLE + COIN_REFERENCES:
        cells = [cell for cell in demo.settings["grid"] if cell["algorithm"] == label and cell["rho"] in (mid, None)]
        c, m = colour(fig, label)
        right.plot([cell["tau"] for cell in cells], [cell["decoder success"] for cell in cells], marker=m, color=c,
                   label=label + ("" if label in COIN_REFERENCES else f" ($\\rho$={mid:g})"))
    right.axhline(0.5, color="grey", linewidth=1, linestyle="--", label="chance")
    log_axis(right, "x", [cell["tau"] for cell in demo.settings["grid"]])
    right.set_ylim(0, 1.05)
    right.set_xlabel(r"coin bias $\tau$")
    right.set_ylabel("decoder success (measured)")
    right.set_title("Do they learn? Decoding the coin")
    figure_legend(right)
    fig.suptitle(f"Coin lower bound: $n$=2, $T$={T}, {demo.settings['pairs per sign']} pairs per sign and $\\tau$")
    return save_figure(fig, path)


# -- the phases demo ---------------------------------------------------------------------------
@public
def phases_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """n = 2, 4, …, 64: FTPLB* on the coin-phases adversary (m = log2 n phases of T/m steps, each
    coin at τ = 1/(ρ√(T/m))), beside √(T log n)/ρ, the adversarial lower bound's shape, and the
    reference rows ``constant`` and ``hedge``."""
    T = 8_000 if quick else 64_000
    ns = [2, 4, 8] if quick else [2, 4, 8, 16, 32, 64]
    pairs = 20 if quick else 100
    rho = 0.1
    rows = []
    bar = reporter(progress, "demo phases")
    with warnings.catch_warnings(), _closing(bar):
        warnings.simplefilter("ignore", BlockSizeWarning)
        for n in ns:
            m = int(round(math.log2(n)))
            L = T // m
            tau = min(0.24, 1.0 / (rho * math.sqrt(L)))
            B = max(1, L // 4)  # blocks inside phases
            eps = certified_eps("ftplb-star", horizon=T, n=n, rho=rho, block_size=B)
            report = evaluate("ftplb-star", "coin-phases", n=n, horizon=T, pairs=pairs, seed=seed, rho=rho,
                              block_size=B, eps=eps, adversary_params={"tau": tau})
            # the reference rows: constant (replicable, never learns) and hedge (learns, not replicable;
            # per step, so fewer pairs)
            const = evaluate("constant", "coin-phases", n=n, horizon=T, pairs=pairs, seed=seed, adversary_params={"tau": tau})
            hedge = evaluate("hedge", "coin-phases", n=n, horizon=T, pairs=max(2, pairs // 5), seed=seed,
                             adversary_params={"tau": tau})
            ref = math.sqrt(T * math.log(n)) / rho
            rows.append({"n": n, "phases": m, "tau": tau, "regret": report.regret_mean, "sqrt(T ln n)/rho": ref,
                         "regret/reference": report.regret_mean / ref, "rho_hat": report.rho_hat,
                         "rho_ci": list(report.rho_ci), "constant regret": const.regret_mean,
                         "hedge regret": hedge.regret_mean, "hedge rho_hat": hedge.rho_hat})
            if bar is not None:
                bar(len(rows), len(ns))
    return Demo("phases", rows, {"T": T, "rho": rho, "pairs": pairs, "seed": seed, "learner": "ftplb-star"}, _plot_phases)


def _plot_phases(demo: Demo, path: Any) -> Any:
    fig, ax = figure()
    ns = [r["n"] for r in demo.rows]
    regret = [r["regret"] for r in demo.rows]
    ref = np.array([r["sqrt(T ln n)/rho"] for r in demo.rows])
    c, m = colour(fig, "ftplb-star")
    ax.plot(ns, regret, marker=m, color=c, label=r"FTPLB* on coin-phases (certified $\rho$)")
    for name, key, text in (("constant", "constant regret", "constant (replicable, never learns)"),
                            ("hedge", "hedge regret", "hedge (learns, not replicable)")):
        rc, rm = colour(fig, name)
        ax.plot(ns, [r[key] for r in demo.rows], marker=rm, linestyle=":", color=rc, label=text)
    ax.plot(ns, ref * regret[0] / ref[0], linestyle="--", color="grey",
            label=r"$\sqrt{T \ln n}/\rho$, scaled to the first point")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    log_axis(ax, "y", regret + [r["constant regret"] for r in demo.rows] + [r["hedge regret"] for r in demo.rows])
    ax.set_xlabel("experts $n$")
    ax.set_ylabel("regret (measured)")
    set_title(ax, True, f"Adversarial lower bound, $T$={demo.settings['T']}, $\\rho$={demo.settings['rho']}")
    figure_legend(ax)
    return save_figure(fig, path)


# -- the lazy-leader demo ------------------------------------------------------------------------
def _switch(actions: np.ndarray) -> int | None:
    """The first step (1-based) at which the action differs from the first one, or None."""
    moved = np.flatnonzero(actions != actions[0])
    return int(moved[0]) + 1 if moved.size else None


@public
def lazy_leader_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """Paper §3.1: on the lazy-leader trap, FTPL and FLL switch leaders at different steps on S
    and S' (not replicable); FLLB, with blocks and the ε its proof certifies, plays identical
    action sequences."""
    T = 2_000 if quick else 10_000
    pairs = 60 if quick else 200
    rho = 0.1
    B = T // 4
    algorithms = {
        "ftpl": dict(actions=Simplex(2), eps=1.0),
        "fll": dict(eps=1.0),
        "fllb": dict(rho=rho, block_size=B, eps=certified_eps("fllb", horizon=T, n=2, rho=rho, block_size=B)),
        "constant": {},  # the replicable reference that never learns
    }
    seq = make_adversary("lazy-leader-trap", n=2, horizon=T, seed=seed)
    root = seed_sequence(seed)
    rows, traces = [], {}
    bar = reporter(progress, "demo lazy-leader")
    with _closing(bar):
        for name, kw in algorithms.items():
            report = evaluate(name, "lazy-leader-trap", n=2, horizon=T, pairs=pairs, seed=seed, **kw)
            if bar is not None:
                bar(len(rows) + 1, len(algorithms))
            runs = []
            for side in (0, 1):  # pair 0, replayed to show its two action sequences
                learner = make(name, n=2, horizon=T, seed=child(root, INTERNAL, 0), **kw)
                runs.append(learner.run(seq.sample(np.random.default_rng(child(root, DATA, 0, side)))))
            traces[name] = [r.tolist() for r in runs]
            rows.append({"algorithm": name, "switch on S": _switch(runs[0]), "switch on S'": _switch(runs[1]),
                         "identical": bool(np.array_equal(*runs)), "rho_hat": report.rho_hat, "rho_ci": list(report.rho_ci),
                         "regret": report.regret_mean})
    return Demo("lazy-leader", rows, {"T": T, "pairs": pairs, "rho": rho, "block_size": B, "seed": seed, "traces": traces},
                _plot_lazy)


def _plot_lazy(demo: Demo, path: Any) -> Any:
    traces = demo.settings["traces"]
    fig, axes = figure(len(traces), 1, sharex=True)
    for ax, (name, (s, s2)) in zip(axes, traces.items()):
        t = np.arange(1, len(s) + 1)
        c, _ = colour(fig, name)
        ax.step(t, s, where="post", color=c, label="on S")
        ax.step(t, np.asarray(s2) + 0.04, where="post", color=c, label="on S'", linestyle="--", alpha=0.7)
        row = next(r for r in demo.rows if r["algorithm"] == name)
        ax.set_ylabel("action")
        ax.set_yticks([0, 1])
        ax.set_title(f"{name}: {rho_hat_text(row['rho_hat'])}", loc="left")
        figure_legend(ax)
    log_axis(axes[-1], "x", [1, len(next(iter(traces.values()))[0])])  # the switch comes early: show the first steps
    axes[-1].set_xlabel("step $t$ (action 1: the one the day-1 bonus favours)")
    fig.suptitle("FLL is not replicable:\nthe runs switch at different steps")
    return save_figure(fig, path)


# -- the bandit coin demo ----------------------------------------------------------------------
#: The bandit coin demo's learners: the replicable ones (iid-certified at width_scale 1, measured
#: below it), then the reference rows: ``constant`` and the non-replicable bandit baselines.
BANDIT_REPLICABLE = {"rep-elimination": "width_scale", "rep-etc": "width_scale", "rep-gap-elimination": "pull_scale"}
BANDIT_REFERENCES = ("constant", "ucb1", "thompson", "exp3")


@public
def bandit_coin_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """The coin lower bound under bandit feedback: regret against ρ for the replicable
    bandit learners, beside ``constant`` and the non-replicable UCB1, Thompson sampling and Exp3.

    The instance is the coin of ``thm:lower_bound_n=2_vanilla_replicability_experts``: two arms
    with mean costs ½ ∓ τ. Seeing only the played arm's cost makes learning harder, never easier, so
    the full-information bound (regret ≳ min(√T/ρ, T/64) on some τ) binds bandit learners too. Each
    replicable learner runs at ρ = 0.1 over a grid of its ``scale`` — ``width_scale`` for
    ``rep-elimination`` and ``rep-etc``, ``pull_scale`` for ``rep-gap-elimination`` (1: the schedule
    its iid bound certifies; below 1, finer grids or shorter phases whose ρ is only measured); a row
    gives its worst regret over the grid of τ, the largest ρ̂ over that grid with its exact interval,
    and its decoder's success at the largest τ. Every (learner, scale, τ) cell is in
    ``settings["grid"]``.
    """
    # the baselines play their lanes together (about 0.2-0.8 us a step): about 20 s in all on 2 cores
    T = 1_000 if quick else 20_000
    pairs = 8 if quick else 20
    taus = np.geomspace(0.5 / math.sqrt(T), 0.24, 3 if quick else 5).tolist()
    scales = [1.0, 0.01] if quick else [1.0, 0.1, 0.03, 0.01, 0.003, 0.001]
    rho = 0.1
    grid, rows = [], []
    runs = [(label, s) for label in BANDIT_REPLICABLE for s in scales] + [(label, None) for label in BANDIT_REFERENCES]
    bar = reporter(progress, "demo bandit-coin")
    tick = _ticker(bar, len(runs) * len(taus))
    with _closing(bar):
        for label, scale in runs:
            knob = BANDIT_REPLICABLE.get(label, "-")
            kw = {} if scale is None else {"rho": rho, knob: scale}
            cells, summary = _coin_cells(label, kw, cell={"algorithm": label, "knob": knob, "scale": scale}, taus=taus,
                                         T=T, pairs=pairs, seed=seed, tick=tick)
            grid += cells
            claim = ("certified (iid)" if scale == 1.0 else "measured") if scale is not None else (
                "none" if label != "constant" else "0 (any)")
            rows.append({"algorithm": label, "knob": knob, "scale": "-" if scale is None else scale, "rho claim": claim,
                         **summary})
    settings = {"T": T, "pairs per sign": pairs, "rho": rho, "scales": scales, "taus": taus, "seed": seed,
                "grid": grid}
    return Demo("bandit-coin", rows, settings, _plot_bandit_coin)


def _plot_bandit_coin(demo: Demo, path: Any) -> Any:
    T = demo.settings["T"]
    fig, ax = figure()
    regrets = []
    for k, label in enumerate(BANDIT_REPLICABLE):
        rows = [r for r in demo.rows if r["algorithm"] == label]
        if not rows:
            continue
        c, m = colour(fig, label)
        # at n = 2 the two elimination rules play alike: the second is dashed and hollow, so that both show
        ax.plot([r["rho_hat"] for r in rows], [r["worst regret"] for r in rows], marker=m, color=c,
                linestyle=("-", "--")[k % 2], fillstyle=("full", "none")[k % 2], markersize=(5, 9)[k % 2],
                label=f"{label}, {rows[0]['knob']} {rows[0]['scale']:g} ... {rows[-1]['scale']:g}")
        regrets += [r["worst regret"] for r in rows]
    # the references: hollow, each smaller than the one before and drawn over it, so that points
    # that coincide (the non-replicable ones all at rho_hat = 1, ucb1's and exp3's regrets alike)
    # all stay in sight, one inside the other; the legend says which share a point
    seen: list[tuple[str, float, float]] = []
    for k, (label, marker) in enumerate(zip(BANDIT_REFERENCES, ("s", "^", "v", "D"))):
        row = next(r for r in demo.rows if r["algorithm"] == label)
        x, y = float(row["rho_hat"]), float(row["worst regret"])
        same = [other for other, ox, oy in seen if abs(ox - x) <= 0.02 and abs(oy - y) <= 0.05 * max(abs(oy), abs(y), 1e-12)]
        ax.scatter([x], [y], marker=marker, s=(90, 60, 34, 14)[k % 4], facecolors="none",
                   edgecolors=colour(fig, label)[0], linewidths=1.3, zorder=3 + k,
                   label=f"{label} (reference)" + (f", at {' and '.join(same)}'s point" if same else ""))
        seen.append((label, x, y))
        regrets.append(row["worst regret"])
    rhos = np.geomspace(0.02, 1.0, 50)
    bound = np.minimum(math.sqrt(T) / rhos, T / 64)
    ax.plot(rhos, bound, linestyle="--", color="grey", label=r"$\min(\sqrt{T}/\rho,\ T/64)$: the bound's shape, constant unknown")
    ax.set_xlabel(f"largest {RHO_HAT} over $\\tau$ (measured)")
    ax.set_ylabel(r"worst regret over $\tau$ (measured)")
    log_axis(ax, "y", regrets + bound.tolist())
    set_title(ax, True, f"Bandit coin, $n$=2, $T$={T}, {demo.settings['pairs per sign']} pairs per sign and $\\tau$ "
              f"(nominal $\\rho$={demo.settings['rho']}); at $n$=2 rep-elimination and rep-etc play alike")
    figure_legend(ax)
    return save_figure(fig, path)


# -- the adversarial bandit demo --------------------------------------------------------------
#: The adversarial bandit demo's learners and the guarantee each prints its bound under.
ADVERSARIAL_BANDITS = {"rep-gap-elimination": "iid only", "perturbed-bandit": "any oblivious adversary",
                       "constant": "rho = 0 (never switches)"}


def threshold_range_attack(*, horizon: int, rho: float = 0.1, depth: float = 2.0) -> dict[str, Any]:
    """The ``switching-bernoulli`` parameters of a two-arm adversary aimed at ``rep-gap-elimination``'s
    iid certificate: in each of its phases (both arms active, round robin: phase p ends at step
    2·N_p) arm 1's gap sits ``depth`` standard deviations of the phase's gap estimate above the bottom
    of that phase's threshold range, so every phase charges it and it survives to be charged again —
    the gap moves, which the charge-once argument (iid costs) rules out."""
    p = make("rep-gap-elimination", n=2, horizon=horizon, rho=rho, seed=0).params
    fresh = np.diff(np.concatenate([[0], p.pulls]))
    gaps = [lo + depth * math.sqrt(0.5 / f) for lo, f in zip(p.lows, fresh)]
    return {"means": [[0.5 - g / 2, 0.5 + g / 2] for g in gaps], "switch_at": [2 * x for x in p.pulls][:len(gaps) - 1]}


@public
def adversarial_bandit_demo(*, quick: bool = False, seed: int = 0, progress: ProgressArg = None) -> Demo:
    """Replicability under bandit feedback against an adversary whose law changes: the iid-certified
    ``rep-gap-elimination`` beside ``perturbed-bandit`` (certified against any oblivious adversary)
    and ``constant``, on :func:`threshold_range_attack` (two arms, T = 10⁸, 500 pairs on block sums; about
    50 s on 2 cores).
    Each row: the printed bound and what it assumes, ρ̂ with its exact interval, whether the
    measured failures refute the printed bound (P(Bin(pairs, bound) ≥ failures) < 1e-6), and the
    pseudo-regret. The iid bound is refuted here; the adversarial one holds (docs/bandits.md)."""
    T = 10**6 if quick else 10**8
    pairs = 60 if quick else 500
    rho = 0.1
    attack = threshold_range_attack(horizon=T, rho=rho)
    rows = []
    bar = reporter(progress, "demo adversarial-bandit")
    tick = _ticker(bar, len(ADVERSARIAL_BANDITS))
    with _closing(bar):
        for name, guarantee in ADVERSARIAL_BANDITS.items():
            with warnings.catch_warnings():
                # the demo's point: an iid certificate on a law that changes (its table says "iid only")
                warnings.filterwarnings("ignore", message=".*not known to be iid", category=ReplifyWarning)
                report = evaluate(name, "switching-bernoulli", n=2, horizon=T, pairs=pairs, seed=seed,
                                  adversary_params=attack, **({} if name == "constant" else {"rho": rho}), progress=False)
            tick()
            params = report.params or {}
            bound = 0.0 if name == "constant" else float(params.get("replicability_bound", params.get("rho_bound")))
            tail = binomial_upper_tail(report.failures, report.pairs, bound) if bound > 0 else float(report.failures == 0)
            rows.append({"algorithm": name, "printed bound": bound, "bound assumes": guarantee,
                         "rho_hat": report.rho_hat, "rho_ci": list(report.rho_ci),
                         "refuted at 1e-6": bool(tail < 1e-6), "pseudo-regret": report.pseudo_regret_mean})
    settings = {"T": T, "n": 2, "pairs": pairs, "rho": rho, "seed": seed, "adversary": "switching-bernoulli",
                "means": attack["means"], "switch_at": attack["switch_at"]}
    return Demo("adversarial-bandit", rows, settings, _plot_adversarial_bandit)


def _plot_adversarial_bandit(demo: Demo, path: Any) -> Any:
    fig, ax = figure()
    for k, row in enumerate(demo.rows):
        c, m = colour(fig, row["algorithm"])
        lo, hi = row["rho_ci"]
        ax.errorbar([k], [row["rho_hat"]], yerr=[[row["rho_hat"] - lo], [hi - row["rho_hat"]]], marker=m, color=c,
                    capsize=3, linestyle="none", label=f"{row['algorithm']}: {RHO_HAT} (measured)")
        ax.plot([k - 0.3, k + 0.3], [row["printed bound"]] * 2, color=c, linestyle="--",
                label=f"printed bound ({row['bound assumes']})")
    ax.set_xticks(range(len(demo.rows)))
    ax.set_xticklabels([r["algorithm"] for r in demo.rows])
    ax.set_ylabel(f"{RHO_HAT}, exact 95% interval")
    set_title(ax, True, f"A law that changes at each phase: $n$=2, $T$=$10^{{{round(math.log10(demo.settings['T']))}}}$, "
              f"{demo.settings['pairs']} pairs")
    figure_legend(ax)
    return save_figure(fig, path)


#: Each demo's figure, by name (what :meth:`Demo.from_dict` plots with).
PLOTS = {"coin": _plot_coin, "phases": _plot_phases, "lazy-leader": _plot_lazy, "bandit-coin": _plot_bandit_coin,
         "adversarial-bandit": _plot_adversarial_bandit}
DEMOS = {"coin": coin_demo, "phases": phases_demo, "lazy-leader": lazy_leader_demo, "bandit-coin": bandit_coin_demo,
         "adversarial-bandit": adversarial_bandit_demo}
