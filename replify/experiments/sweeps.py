"""Sweeps: :func:`evaluate` over a grid of (learner, adversary, T, n, ρ, block-size multiplier),
one tidy row per configuration, written to JSONL as each row finishes, resumable.

Every row carries its configuration, its seed, the settings that determine it (pairs, the sweep
seed, options) and replify's version. A row's seed is derived from the sweep seed and the
configuration itself (not its position), and rows are written in grid order with sorted keys and
no timestamps: a sweep interrupted half way and run again skips the finished rows and leaves
exactly the file an uninterrupted run would have written. Each row carries a digest of its content,
checked before the row is reused. Nothing a user wrote is lost: damaged lines (and rows that fail
their checks) are set aside in ``<file>.rejected``, one writer holds the file at a time, and the
file is rewritten only atomically, through a symbolic link to it if that is what it is.

The configurations (:func:`grid`, each row's key and seed) are :mod:`replify.experiments.configurations`',
what a callable learner is (:func:`code_of`) :mod:`replify.experiments.learner_code`'s, the results
file :mod:`replify.experiments.results`'.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks to take
    fcntl = None

from replify._version import __version__
from replify.base.checks import check_int, check_output_path, public
from replify.errors import InvalidArgumentError, ReplifyWarning, ResultsFileWarning, warn
from replify.evaluation.evaluate import evaluate
from replify.base.files import open_sibling, resolve
from replify.evaluation.sequential import holm
from replify.base.progress import reporter
from replify.evaluation.provenance import jsonable
from replify.experiments.results import _FileState, _load, _locked, check_results_file, identity, row_digest
# a sweep's configurations and what a callable learner is lived here: they import from here still
from replify.experiments.configurations import (
    LearnerEntry, adversary_parameters, check_adversary_params, grid, learner_entries, row_key, row_seed,
)
from replify.experiments.learner_code import code_of


@attrs.frozen(eq=False)
class SweepResult:
    """The rows of a sweep, in grid order: dicts with ``config``, ``seed``, ``replify_version``
    and the report's ``to_dict()`` under ``report``."""

    rows: list[dict[str, Any]]
    #: rows taken from the results file instead of being computed again
    reused: int = 0
    #: damaged lines of the results file set aside (in ``rejected_path``), never deleted
    rejected: int = 0
    rejected_path: str | None = None
    #: rows in the file for other settings (pairs, seed, options, replify version): kept, not reused
    stale: int = 0
    #: with ``target=``: each row's decision after Holm's adjustment over all rows (family-wise error alpha)
    holm: tuple[str, ...] | None = None

    def records(self) -> list[dict[str, Any]]:
        """Flat rows: the configuration's fields and the report's scalar summaries."""
        out = []
        for row in self.rows:
            flat = dict(row["config"]) | {"seed": row["seed"], "replify_version": row["replify_version"],
                                          "pairs": row.get("pairs")}
            for key, value in row["report"].items():
                if key in ("rho_ci", "regret_ci"):
                    flat[f"{key}_low"], flat[f"{key}_high"] = value
                elif key == "provenance":  # the environment, flat; the configuration is the row's own
                    flat |= {"numpy_version": value["numpy"], "python_version": value["python"],
                             "blas": f"{value['blas']['name']} {value['blas']['version']}"}
                elif key not in ("learner", "params", "agreement_curve", "regret_curve", "seed", "concentration", "transition_divergence",
                                 "transition_bound", "learning_gain_ci", "max_step_disagreement_ci", "pseudo_regret_ci"):
                    flat[key] = value
            params = row["report"].get("params") or {}
            flat["block_size"] = params.get("block_size")
            flat["eps"] = params.get("eps")
            out.append(flat)
        if self.holm is not None:
            for flat, decision in zip(out, self.holm):
                flat["holm_decision"] = decision
        return out

    def to_pandas(self) -> Any:
        """The flat rows as a pandas DataFrame (pandas is not a dependency of replify)."""
        try:
            import pandas as pd
        except ImportError:
            raise InvalidArgumentError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame.from_records(self.records())


def _run_row(
    config: Mapping[str, Any], *, seed: int, pairs: int, evaluate_kw: Mapping[str, Any], entry: LearnerEntry
) -> dict[str, Any]:

    spec = entry.spec
    extra: dict[str, Any] = dict(entry.overrides)
    if config["block_multiplier"] is not None:
        with warnings.catch_warnings():  # only the theorem's B is wanted here, not its clipping
            warnings.simplefilter("ignore", ReplifyWarning)
            theorem = spec.parameters(horizon=config["horizon"], n=config["n"], rho=config["rho"])
        extra["block_size"] = max(1, min(config["horizon"], round(config["block_multiplier"] * theorem.block_size_theorem)))
    s = row_seed(seed, config)
    report = evaluate(
        entry.learner, config["adversary"], n=config["n"], horizon=config["horizon"], pairs=pairs, seed=s,
        rho=config["rho"], adversary_params=config["adversary_params"] or None, label=entry.label,
        learner_params=extra, progress=False, **evaluate_kw,
    )
    row = {"config": dict(config), "seed": s, "replify_version": __version__, "report": jsonable(report.to_dict()),
           "pairs": pairs, "sweep_seed": seed, "options": _options(evaluate_kw)}
    if entry.code is not None:
        row["learner_code"] = entry.code
    row["digest"] = row_digest(row)
    return row


def _options(evaluate_kw: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluate options that change results (n_jobs and the backend do not)."""
    keys = ("fast_path", "target", "sequential", "alpha")
    return {k: evaluate_kw.get(k) for k in keys if k == "fast_path" or evaluate_kw.get(k) is not None}


@public
def sweep(
    *,
    learners: Sequence[Any],
    adversaries: Sequence[str],
    horizons: Sequence[int],
    ns: Sequence[int],
    pairs: int,
    seed: int,
    rhos: Sequence[float | None] = (None,),
    block_multipliers: Sequence[float] = (1.0,),
    adversary_params: Mapping[str, Mapping[str, Any]] | None = None,
    path: str | Path | None = None,
    progress: bool | Callable[[int, int], None] | None = None,
    target: float | None = None,
    alpha: float = 0.05,
    **evaluate_kw: Any,
) -> SweepResult:
    """Evaluate every configuration of the grid (see :func:`grid`) with ``pairs`` pairs.

    ``learners`` holds what :func:`evaluate` takes as a learner (registered names, a learner
    factory taking n, horizon, rng, such as a class or a ``functools.partial`` of one, a class
    decorated with :func:`replify.wrap`, a callable seed -> learner, ``"module:Name"`` references)
    and dicts ``{"learner": ..., "label": ..., **overrides}`` for per-configuration overrides
    (``eps``, ``block_size``, hyperparameters) — see :func:`learner_entries`. ``adversaries``
    holds registered names and ``"module:Name"`` / ``"file.py:Name"`` references. A row is identified by the
    learner's label and overrides: a callable's code is not part of it, so give a changed callable
    a new label (or a new file) rather than reuse rows computed with the old one. A label made from
    a callable's name is reused only for the callable that wrote the rows (where it is defined is
    stored with them): two lambdas are refused, with an error asking for a label.

    ``adversary_params`` maps each of ``adversaries`` to its parameters (checked before any row:
    see :func:`check_adversary_params`). ``block_multipliers`` scale each learner's theorem block
    size (the ρ̂-against-block-size curve). With ``path`` (a new file, or a results file: a file
    that does not begin with a row is refused, see :func:`check_results_file`), each row is appended (and flushed to disk) to that JSONL file as soon as
    it finishes, under an exclusive lock (one writer per file: a second sweep on the same file
    raises :class:`~replify.errors.SweepLockedError`). A row already in the file is reused only when
    everything that determines it matches — configuration, ``pairs``, ``seed``, the options that
    change results and replify's version (:func:`identity`) — and when the row passes its checks:
    its ``digest`` matches its content, its ``rho_hat`` is its ``failures / pairs`` and its measured
    numbers are finite; a row that fails them (edited by hand, or written by an earlier replify
    without a digest) is set aside like a damaged line and measured again. Rows for other settings
    stay in the file untouched. Damaged lines are moved to ``<file>.rejected``, never deleted, with a
    :class:`~replify.errors.ResultsFileWarning`; exact duplicate lines are kept once. The result
    says what happened (``reused``, ``stale``, ``rejected``, ``rejected_path``). Warnings the rows
    raise are summarised once per kind. ``evaluate_kw`` (``n_jobs``, ``backend``, ``fast_path``, …)
    are passed to :func:`evaluate`. With ``target=ρ`` every row runs the sequential test
    (``pairs`` is each row's budget) and the result's ``holm`` holds the decisions after Holm's
    step-down adjustment of the rows' anytime-valid p-values: family-wise error at most ``alpha``
    over all rows. ``progress=True`` draws a bar over the rows (a callable ``progress(done, total)``
    is called after each row).
    """
    pairs = check_int("pairs", pairs, minimum=2)
    seed = check_int("seed", seed, minimum=0)  # a negative seed is refused here as by every other command
    configs = grid(
        learners=learners, adversaries=adversaries, horizons=horizons, ns=ns, rhos=rhos,
        block_multipliers=block_multipliers, adversary_params=adversary_params,
    )
    entries = {e.label: e for e in learner_entries(learners)}
    out = None
    if path is not None:
        check_output_path(path, what="path")
        check_results_file(path, what="path")
        # the file itself, not a link to it: its siblings (.lock, .rejected) sit beside the file, every
        # name of it takes one lock, and a repair rewrites the file the link points to
        out = resolve(path)
        if out != Path(os.path.abspath(path)):  # a link (or a folder on the way is one): check where it leads
            check_output_path(out, what=f"path {str(path)!r}, a link to")
    if target is not None:
        # each row tests at alpha/m so that it runs until its evidence can survive Holm's adjustment
        evaluate_kw = dict(evaluate_kw, target=target, sequential=True, alpha=alpha / len(configs))
    with contextlib.ExitStack() as stack:
        bar = reporter(progress, "sweep")
        if bar is not None:
            stack.callback(bar.close)
        state = _FileState({}, 0, None, 0)
        options = _options(evaluate_kw)
        keys = [identity(config, pairs=pairs, sweep_seed=seed, options=options) for config in configs]
        if out is not None:
            stack.enter_context(_locked(out))
            state = _load(out, frozenset(keys))
            if state.rejected:
                warn(f"{state.rejected} damaged line(s) of {str(path)!r} were set aside in {state.rejected_path!r} "
                     f"(nothing deleted): {state.explain()}; the sweep resumes from the other rows and measures "
                     "those configurations again", ResultsFileWarning)
            _check_callables(state.done, configs, keys, entries, path)
        rows, reused, caught = [], 0, []
        for i, config in enumerate(configs):
            row = state.done.get(keys[i])
            if row is None:
                with warnings.catch_warnings(record=True) as record:
                    warnings.simplefilter("always", ReplifyWarning)
                    row = _run_row(config, seed=seed, pairs=pairs, evaluate_kw=evaluate_kw, entry=entries[config["learner"]])
                caught += [w for w in record if issubclass(w.category, ReplifyWarning)]
                if out is not None:
                    fd = open_sibling(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, what="results file")
                    with os.fdopen(fd, "a") as fh:
                        fh.write(json.dumps(row, sort_keys=True) + "\n")
                        fh.flush()
                        os.fsync(fh.fileno())
            else:
                reused += 1
            rows.append(row)
            if bar is not None:
                bar(i + 1, len(configs))
    _summarise(caught, len(configs))
    adjusted = None
    if target is not None:
        p_values = [float(r["report"].get("sequential_p_value", 1.0)) for r in rows]
        sides = ["below" if r["report"]["rho_hat"] < target else "above" for r in rows]
        adjusted = tuple(holm(p_values, sides, alpha))
    return SweepResult(rows, reused=reused, rejected=state.rejected, rejected_path=state.rejected_path, stale=state.stale,
                       holm=adjusted)


def _check_callables(done: Mapping[str, dict[str, Any]], configs: Sequence[Mapping[str, Any]], keys: Sequence[str],
                     entries: Mapping[str, LearnerEntry], path: Any) -> None:
    """A row is reused only for the code that wrote it (:func:`code_of`): two classes may share a
    qualified name or a label, and the second must never be answered with the first's numbers. A
    row of the label written by other code is refused by name."""
    for config, key in zip(configs, keys):
        row, entry = done.get(key), entries[config["learner"]]
        if row is None or row.get("learner_code") == entry.code:
            continue
        wrote = row.get("learner_code") or f"the registered learner {config['learner']!r}"
        raise InvalidArgumentError(
            f"learners: {str(path)!r} holds rows for the label {config['learner']!r} written by {wrote}, but this "
            f"sweep's {config['learner']!r} is {entry.code or 'the registered learner ' + repr(entry.learner)} "
            f"({entry.learner!r}), other code; expected one learner per label: give this one its own label with "
            f"{{'learner': ..., 'label': '...'}}, or use another file (rows are reused only for the code that wrote them)"
        )


def _summarise(caught: list, total: int) -> None:
    """One warning per cause for the whole sweep: the first message of each kind, and how many
    rows gave one (each row's JSON says the rest, e.g. ``certified: false``)."""
    by_kind: dict[type, list] = {}
    for w in caught:
        by_kind.setdefault(w.category, []).append(w)
    for category, items in by_kind.items():
        rows = len({str(w.message) for w in items})
        more = f" ({rows} rows of {total} gave a {category.__name__}; e.g.)" if rows > 1 else ""
        warn(f"{more} {items[0].message}".strip(), category)
