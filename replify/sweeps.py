"""Sweeps: :func:`evaluate` over a grid of (learner, adversary, T, n, ρ, block-size multiplier),
one tidy row per configuration, written to JSONL as each row finishes, resumable.

Every row carries its configuration, its seed, the settings that determine it (pairs, the sweep
seed, options) and replify's version. A row's seed is derived from the sweep seed and the
configuration itself (not its position), and rows are written in grid order with sorted keys and
no timestamps: a sweep interrupted half way and run again skips the finished rows and leaves
exactly the file an uninterrupted run would have written. Nothing a user wrote is lost: damaged
lines are set aside in ``<file>.rejected``, and one writer holds the file at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks to take
    fcntl = None

from .checks import check_int, check_output_path, public
from .errors import InvalidArgumentError, ReplifyWarning, ResultsFileWarning, SweepLockedError, warn
from .evaluation import evaluate
from .factory import accepts, label_of, rho_optional, takes_rng
from .files import atomic_write, open_sibling, resolve
from .sequential import holm
from .plugins import registry
from .progress import reporter
from .provenance import jsonable


def row_key(config: Mapping[str, Any]) -> str:
    """The configuration as canonical JSON: identifies a row in a results file."""
    return json.dumps(jsonable(config), sort_keys=True)


def row_seed(seed: int, config: Mapping[str, Any]) -> int:
    """The row's seed: a function of the sweep seed and the configuration only."""
    digest = hashlib.sha256(f"{seed}|{row_key(config)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


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


@attrs.frozen
class LearnerEntry:
    """One learner of a sweep: its ``label`` (the row's ``learner``), what :func:`evaluate` is
    given (a registered name, a factory taking n, horizon, rng, or a callable seed -> learner)
    and the ``overrides`` passed with it (``eps``, ``block_size``, hyperparameters)."""

    label: str
    learner: Any
    overrides: dict[str, Any]

    @property
    def spec(self) -> Any:
        return registry().learner(self.learner) if isinstance(self.learner, str) else None

    def takes_rho(self) -> bool:
        if self.spec is not None:
            return self.spec.parameters is not None or self.spec.guarantee is not None
        return takes_rng(self.learner) and accepts(self.learner, "rho")


def learner_entries(learners: Sequence[Any]) -> list[LearnerEntry]:
    """A sweep's ``learners``: each a registered name, a Python callable (a learner factory taking
    n, horizon, rng — a class, or a ``functools.partial`` of one — or a callable seed -> learner),
    or a dict ``{"learner": name or callable, "label": "...", **overrides}`` that gives a label
    (required to tell two configurations of one callable apart) and per-configuration overrides
    (``eps``, ``block_size``, hyperparameters)."""
    entries, labels = [], {}
    for item in learners:
        if isinstance(item, Mapping):
            if "learner" not in item:
                raise InvalidArgumentError(f"a learner given as a dict needs a 'learner' key (a name or a callable); got {dict(item)!r}")
            rest = {k: v for k, v in item.items() if k not in ("learner", "label")}
            obj = item["learner"]
            label = item.get("label")
        else:
            obj, rest, label = item, {}, None
        if isinstance(obj, str):
            registry().learner(obj)  # unknown names fail here, before any row runs
        elif not callable(obj):
            raise InvalidArgumentError(
                f"learners must be registered names, callables or dicts with a 'learner' key; got {obj!r} ({type(obj).__name__})"
            )
        if label is None:
            label = obj if isinstance(obj, str) else label_of(obj)
            if rest:
                label += "(" + ", ".join(f"{k}={v!r}" for k, v in sorted(rest.items())) + ")"
        if not isinstance(label, str) or not label:
            raise InvalidArgumentError(f"a learner's label must be a non-empty string; got {label!r}")
        if label in labels and (labels[label].learner is not obj or labels[label].overrides != rest):
            raise InvalidArgumentError(
                f"two learners of the sweep have the label {label!r}: give each its own with {{'label': ...}}"
            )
        entry = LearnerEntry(label, obj, dict(rest))
        labels[label] = entry
        entries.append(entry)
    return entries


def grid(
    *,
    learners: Sequence[Any],
    adversaries: Sequence[str],
    horizons: Sequence[int],
    ns: Sequence[int],
    rhos: Sequence[float | None] = (None,),
    block_multipliers: Sequence[float] = (1.0,),
    adversary_params: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The configurations of a sweep, in order. A learner without theorem parameters (a
    baseline) runs once per (adversary, T, n), with no ρ and no block-size multiplier; so does a
    callable's, which gets ρ only when it accepts ``rho``. ``learners`` as in :func:`learner_entries`."""
    for name, value in (("learners", learners), ("adversaries", adversaries), ("horizons", horizons), ("ns", ns),
                        ("rhos", rhos), ("block_multipliers", block_multipliers)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
            raise InvalidArgumentError(
                f"{name} must be a non-empty list; got {value!r}" + (f" (did you mean [{value!r}]?)" if isinstance(value, str) else "")
            )
    for mult in block_multipliers:
        if isinstance(mult, bool) or not isinstance(mult, (int, float)) or not math.isfinite(mult) or mult <= 0:
            raise InvalidArgumentError(f"block_multipliers must be finite numbers > 0; got {mult!r} in {list(block_multipliers)!r}")
    for T in horizons:
        check_int("horizons[...]", T, minimum=1)
    for n in ns:
        check_int("ns[...]", n, minimum=2)
    configs, seen = [], set()
    entries = learner_entries(learners)
    for entry, adversary, T, n, rho, mult in itertools.product(entries, adversaries, horizons, ns, rhos, block_multipliers):
        spec = entry.spec
        takes_rho = entry.takes_rho() and "rho" not in entry.overrides
        if takes_rho and rho is None and spec is not None and not rho_optional(spec.factory):
            raise InvalidArgumentError(f"learner {entry.label!r} needs rho: give the sweep a list of rhos")
        takes_rho = takes_rho and rho is not None
        # a block-size multiplier applies to a learner whose theorem sets a block size (not, say, to
        # an elimination algorithm's phases, which have parameters but no blocks)
        scaled = (spec is not None and spec.parameters is not None and accepts(spec.factory, "block_size")
                  and "block_size" not in entry.overrides)
        config = {
            "learner": entry.label, "adversary": adversary, "horizon": int(T), "n": int(n),
            "rho": float(rho) if takes_rho else None,
            "block_multiplier": float(mult) if scaled else None,
            "adversary_params": jsonable(dict((adversary_params or {}).get(adversary, {}))),
        }
        if entry.overrides:  # absent when empty: rows of plain names keep their keys
            config["overrides"] = jsonable(entry.overrides)
        key = row_key(config)
        if key not in seen:
            seen.add(key)
            configs.append(config)
    return configs


def identity(config: Mapping[str, Any], *, pairs: int, sweep_seed: int, options: Mapping[str, Any]) -> str:
    """Everything that determines a row: its configuration, the pairs, the sweep seed, the options
    that change results (``fast_path``) and replify's version. A row in the file is reused only
    when all of these match."""
    from . import __version__

    return json.dumps(jsonable({"config": config, "pairs": pairs, "sweep_seed": sweep_seed, "options": options,
                                 "replify_version": __version__}), sort_keys=True)


def _row_identity(row: Any) -> str | None:
    if not isinstance(row, dict) or not isinstance(row.get("config"), dict) or not isinstance(row.get("report"), dict):
        return None
    if not {"pairs", "sweep_seed", "options", "replify_version"} <= set(row):
        return None  # a row written before rows carried their settings: kept, never reused
    return json.dumps(jsonable({k: row[k] for k in ("config", "pairs", "sweep_seed", "options", "replify_version")}),
                      sort_keys=True)


@attrs.frozen
class _FileState:
    done: dict[str, dict[str, Any]]
    rejected: int
    rejected_path: str | None
    stale: int


def _load(path: Path) -> _FileState:
    """Read an earlier run's rows from ``path`` (resolved: the file itself, not a link to it).
    Lines that are not complete rows — a line torn by an interruption, bytes that are not UTF-8,
    text that is not JSON, JSON that is not a row — are moved to ``<file>.rejected`` (appended and
    synced, so nothing is ever lost) and the file is rewritten with the good rows only
    (atomically: :func:`replify.files.atomic_write`). Rows repeated byte for byte (two writers) are kept once;
    a row whose identity repeats with other content is set aside too."""
    if not path.exists():
        return _FileState({}, 0, None, 0)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    good: list[bytes] = []
    bad: list[bytes] = []
    done: dict[str, dict[str, Any]] = {}
    seen_lines: set[bytes] = set()
    stale = 0
    for raw in lines:
        if raw in seen_lines:
            continue  # an exact duplicate (two sweeps wrote the same row): one copy is enough
        try:
            if not raw.endswith(b"\n"):
                raise ValueError("torn")
            row = json.loads(raw.decode("utf-8"))
            if not isinstance(row, dict) or not isinstance(row.get("config"), dict) or "report" not in row:
                raise ValueError("not a row")
        except (UnicodeDecodeError, ValueError):
            bad.append(raw)
            continue
        key = _row_identity(row)
        if key is not None and key in done:
            bad.append(raw)  # same identity, other content: set aside, never silently dropped
            continue
        seen_lines.add(raw)
        good.append(raw)
        if key is None:
            stale += 1
        else:
            done[key] = row
    rejected_path = None
    if bad:
        rejected = path.with_name(path.name + ".rejected")
        # appended, never through a link (a link there would send the lines into a file of the
        # user's), and on disk before the results file is rewritten without them
        fd = open_sibling(rejected, os.O_WRONLY | os.O_APPEND | os.O_CREAT, what="the file of set-aside lines")
        with os.fdopen(fd, "ab") as fh:
            fh.write(b"".join(raw if raw.endswith(b"\n") else raw + b"\n" for raw in bad))
            fh.flush()
            os.fsync(fh.fileno())
        rejected_path = str(rejected)
    if bad or len(good) != len(lines):
        atomic_write(path, b"".join(good), what="results file")
    return _FileState(done, len(bad), rejected_path, stale)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer per results file: an exclusive lock on ``<file>.lock`` for the whole sweep.

    ``path`` is resolved, so every name of one file (a symbolic link to it) takes the same lock.
    The lock file is created without following a link and removed when the sweep ends — only
    while its lock is held, so that nobody else holds it then. A sweep that opened the file just
    before it was removed then holds a lock on a file no longer at the path, which locks nothing:
    after locking, the file open must still be the one at the path, else the sweep opens it again."""
    lock_path = path.with_name(path.name + ".lock")
    if fcntl is None:  # pragma: no cover - not POSIX: no advisory locks to take
        yield
        return
    for _ in range(100):
        fd = open_sibling(lock_path, os.O_RDWR | os.O_CREAT, what="the sweep's lock file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SweepLockedError(
                f"another sweep is writing {str(path)!r} (it holds {str(lock_path)!r}); let it finish, then run "
                "this one again: it will reuse the finished rows"
            ) from None
        held = os.fstat(fd)
        try:
            now = os.stat(lock_path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # its holder removed it after we opened it: take the one at the path now
    else:  # pragma: no cover - a hundred other sweeps finished while this one tried: not seen in practice
        raise SweepLockedError(f"could not take the lock {str(lock_path)!r} of {str(path)!r}: other sweeps kept "
                               "replacing it; run this one again")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock_path)
        os.close(fd)


def _run_row(
    config: Mapping[str, Any], *, seed: int, pairs: int, evaluate_kw: Mapping[str, Any], entry: LearnerEntry
) -> dict[str, Any]:
    from . import __version__

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
        rho=config["rho"], adversary_params=config["adversary_params"] or None, **extra, **evaluate_kw,
    )
    return {"config": dict(config), "seed": s, "replify_version": __version__, "report": jsonable(report.to_dict()),
            "pairs": pairs, "sweep_seed": seed, "options": _options(evaluate_kw)}


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

    ``learners`` holds registered names, Python callables (a learner factory taking n, horizon,
    rng, such as a class or a ``functools.partial`` of one, or a callable seed -> learner) and
    dicts ``{"learner": ..., "label": ..., **overrides}`` for per-configuration overrides (``eps``,
    ``block_size``, hyperparameters) — see :func:`learner_entries`. A row is identified by the
    learner's label and overrides: a callable's code is not part of it, so give a changed callable
    a new label (or a new file) rather than reuse rows computed with the old one.

    ``block_multipliers`` scale each learner's theorem block size (the ρ̂-against-block-size
    curve). With ``path``, each row is appended (and flushed to disk) to that JSONL file as soon as
    it finishes, under an exclusive lock (one writer per file: a second sweep on the same file
    raises :class:`~replify.errors.SweepLockedError`). A row already in the file is reused only when
    everything that determines it matches — configuration, ``pairs``, ``seed``, the options that
    change results and replify's version (:func:`identity`); rows for other settings stay in the
    file untouched. Damaged lines are moved to ``<file>.rejected``, never deleted, with a
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
    configs = grid(
        learners=learners, adversaries=adversaries, horizons=horizons, ns=ns, rhos=rhos,
        block_multipliers=block_multipliers, adversary_params=adversary_params,
    )
    entries = {e.label: e for e in learner_entries(learners)}
    out = None
    if path is not None:
        check_output_path(path, what="path")
        # the file itself, not a link to it: its siblings (.lock, .rejected) sit beside the file, every
        # name of it takes one lock, and a repair rewrites the file the link points to
        out = resolve(path)
        if out != Path(path):
            check_output_path(out, what=f"path {str(path)!r}, a link to")
    if target is not None:
        # each row tests at alpha/m so that it runs until its evidence can survive Holm's adjustment
        evaluate_kw = dict(evaluate_kw, target=target, sequential=True, alpha=alpha / len(configs))
    with contextlib.ExitStack() as stack:
        bar = reporter(progress, "sweep")
        if bar is not None:
            stack.callback(bar.close)
        state = _FileState({}, 0, None, 0)
        if out is not None:
            stack.enter_context(_locked(out))
            state = _load(out)
            if state.rejected:
                warn(f"{state.rejected} damaged line(s) of {str(out)!r} were set aside in {state.rejected_path!r} "
                     "(nothing deleted); the sweep resumes from the other rows", ResultsFileWarning)
        rows, reused, caught = [], 0, []
        options = _options(evaluate_kw)
        for i, config in enumerate(configs):
            row = state.done.get(identity(config, pairs=pairs, sweep_seed=seed, options=options))
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
