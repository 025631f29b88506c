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
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import itertools
import json
import math
import os
import re
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import attrs

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks to take
    fcntl = None

from replify._version import __version__
from replify.base.checks import check_int, check_output_path, check_step_size, public
from replify.engine import limits
from replify.errors import ArgumentTypeError, InvalidArgumentError, ReplifyWarning, ResultsFileWarning, warn
from replify.evaluation.evaluate import evaluate
from replify.plugins.factory import accepts
from replify.sources import LearnerArg, adversary_arg, label_of, learner_arg, merged_params
from replify.wrapper import ReplicableFactory
from replify.base.files import open_sibling, resolve
from replify.evaluation.sequential import holm
from replify.base.progress import reporter
from replify.evaluation.provenance import jsonable
from replify.experiments.results import _FileState, _load, _locked, check_results_file, identity, row_digest


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
    given (anything it takes as a learner: see :func:`replify.sources.learner_arg`) and the
    ``overrides`` passed with it (``eps``, ``block_size``, hyperparameters)."""

    label: str
    learner: Any
    overrides: dict[str, Any]
    #: whether the user gave the label; a label made from a callable's name may be shared by two
    #: callables (two lambdas), so its rows are reused only for the callable that wrote them
    labelled: bool = False
    #: what the learner is (its kind, spec and whether it takes rho)
    arg: LearnerArg | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def code(self) -> str | None:
        """Where a callable learner is defined (None for a registered name): stored with its rows."""
        return None if isinstance(self.learner, str) else code_of(self.learner)

    @property
    def spec(self) -> Any:
        return self.arg.spec

    def takes_rho(self) -> bool:
        return self.arg.takes_rho()


def learner_entries(learners: Sequence[Any]) -> list[LearnerEntry]:
    """A sweep's ``learners``: each anything :func:`evaluate` takes as a learner (a registered name,
    a learner factory taking n, horizon, rng, a wrapped class, a callable seed -> learner, a
    ``"module:Name"`` or ``"file.py:Name"`` reference), or a dict ``{"learner": ..., "label":
    "...", "learner_params": {...}, **overrides}`` that gives a label (required to tell two
    configurations of one callable apart) and per-configuration overrides (``eps``,
    ``block_size``, hyperparameters; ``learner_params`` holds those named like a key of the dict)."""
    entries, labels = [], {}
    for item in learners:
        if isinstance(item, Mapping):
            if "learner" not in item:
                raise InvalidArgumentError(f"a learner given as a dict needs a 'learner' key (a name or a callable); got {dict(item)!r}")
            rest = merged_params({k: v for k, v in item.items() if k not in ("learner", "label", "learner_params")},
                                 item.get("learner_params"))
            obj = item["learner"]
            label = item.get("label")
        else:
            obj, rest, label = item, {}, None
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise InvalidArgumentError(f"a learner's label must be a non-empty string; got {label!r}")
        arg = learner_arg(obj, label=label, argument="learners")
        obj = arg.obj  # a reference is loaded once, here
        given = label is not None
        label = arg.label
        if not given and rest:
            label += "(" + ", ".join(f"{k}={v!r}" for k, v in sorted(rest.items())) + ")"
        if label in labels and (not _same_learner(labels[label].learner, obj) or labels[label].overrides != rest):
            raise InvalidArgumentError(
                f"learners: two learners of the sweep have the label {label!r} but differ ({labels[label].learner!r} "
                f"and {obj!r}); expected one label per learner: give each its own with "
                "{'learner': ..., 'label': '...'}"
            )
        entry = LearnerEntry(label, obj, dict(rest), labelled=given, arg=arg)
        labels[label] = entry
        entries.append(entry)
    return entries


def _same_learner(a: Any, b: Any) -> bool:
    """One learner given twice: the same registered name (two equal strings), or the same object."""
    return a is b or (isinstance(a, str) and a == b)


def code_of(learner: Callable[..., Any]) -> str:
    """What a callable learner *is*, so that a results row is reused only for the code that wrote
    it: its qualified name and a sha256 digest of its code — the source file it is defined in (a
    change anywhere in that file counts), else its source text, else its compiled code — and of the
    arguments a ``functools.partial`` or the decorator form fixes. Two classes that share a
    qualified name (``__main__.Learner``, or ``mylearn.py:MyHedge`` from two folders) have the same
    code only when their files are the same."""
    inner, fixed = learner, []
    while True:
        if isinstance(inner, functools.partial):
            fixed.append(repr(sorted(inner.keywords.items())) + repr(inner.args))
            inner = inner.func
        elif isinstance(inner, ReplicableFactory):
            fixed.append(repr(sorted(inner.options.items())))
            inner = inner.__wrapped__
        else:
            break
    digest = hashlib.sha256()
    for part in fixed:
        digest.update(part.encode())
    digest.update(_code_bytes(inner))
    with contextlib.suppress(TypeError, OSError):  # which of the file's definitions (two lambdas share a file)
        digest.update(inspect.getsource(inner).encode())
    code = getattr(inner, "__code__", None)
    line = f", line {code.co_firstlineno}" if code is not None else ""
    module = getattr(inner, "__module__", None) or type(inner).__module__
    return f"{module}.{label_of(learner)}{line} sha256:{digest.hexdigest()[:16]}"


def _code_bytes(obj: Any) -> bytes:
    try:
        source = inspect.getsourcefile(obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj))
        if source and os.path.isfile(source):
            with open(source, "rb") as fh:
                return fh.read()
    except (TypeError, OSError):
        pass
    try:
        return inspect.getsource(obj).encode()
    except (TypeError, OSError):
        pass
    # No source to read (a script given on standard input or with -c, code run by exec): the compiled
    # code itself. Its pickle would not do: a class of ``__main__`` pickles by name, and two scripts'
    # ``__main__.Learner`` would be one learner.
    return _compiled(obj, set())


#: What a repr of an object without one holds that changes from run to run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _compiled(obj: Any, seen: set[int]) -> bytes:
    """What ``obj`` computes, from its compiled code: a function's bytecode, constants, names,
    defaults, closure and the simple module constants it reads; a class's own attributes and
    methods, and those of its bases defined beside it; an instance's class and attributes."""
    if id(obj) in seen:
        return b"<seen>"
    seen.add(id(obj))
    if isinstance(obj, types.CodeType):
        consts = b"|".join(_compiled(c, seen) if isinstance(c, types.CodeType) else _ADDRESS.sub("", repr(c)).encode()
                           for c in obj.co_consts)
        return b"code:" + obj.co_code + repr((obj.co_names, obj.co_varnames)).encode() + consts
    if isinstance(obj, (staticmethod, classmethod)):
        return _compiled(obj.__func__, seen)
    if isinstance(obj, property):
        return b"|".join(_compiled(f, seen) for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
    if inspect.ismethod(obj):
        return _compiled(obj.__func__, seen)
    if inspect.isfunction(obj):
        names = set(obj.__code__.co_names)
        for const in obj.__code__.co_consts:  # the names nested functions and comprehensions read
            if isinstance(const, types.CodeType):
                names |= set(const.co_names)
        constants = sorted((k, repr(v)) for k, v in obj.__globals__.items()
                           if k in names and isinstance(v, (bool, int, float, complex, str, bytes, tuple, type(None))))
        cells = [_compiled(c.cell_contents, seen) if callable(c.cell_contents) else
                 _ADDRESS.sub("", repr(c.cell_contents)).encode() for c in (obj.__closure__ or ())]
        return (b"function:" + _compiled(obj.__code__, seen) + b"|".join(cells)
                + _ADDRESS.sub("", repr((obj.__defaults__, obj.__kwdefaults__, constants))).encode())
    if inspect.isclass(obj):
        parts = [f"class:{obj.__module__}.{obj.__qualname__}".encode()]
        for base in obj.__mro__[1:]:
            parts.append(f"base:{base.__module__}.{base.__qualname__}".encode())
            if base.__module__ == obj.__module__:
                parts.append(_compiled(base, seen))
        for name, value in sorted(vars(obj).items()):
            if name in ("__dict__", "__weakref__", "__module__"):
                continue
            parts.append(name.encode() + b"=" + (_compiled(value, seen) if callable(value) or isinstance(
                value, (staticmethod, classmethod, property)) else _ADDRESS.sub("", repr(value)).encode()))
        return b"|".join(parts)
    body = getattr(obj, "__dict__", None)
    return (_compiled(type(obj), seen) + b"|instance:"
            + _ADDRESS.sub("", repr(sorted((body or {}).items(), key=lambda kv: kv[0]))).encode())


def adversary_parameters(name: str) -> frozenset[str] | None:
    """The parameters the adversary ``name`` (registered, or a ``"module:Name"`` reference) takes,
    from its factory's signature (what :func:`~replify.make_adversary` checks), or None when it
    takes any (``**params``)."""
    return adversary_arg(name, argument="adversaries").parameters()


def check_adversary_params(adversaries: Sequence[str], adversary_params: Mapping[str, Any] | None) -> None:
    """A sweep's ``adversary_params`` — each of its adversaries' parameters — checked before any row
    runs: a key that is not one of the sweep's adversaries (a typo, or parameters given flat as to
    :func:`evaluate`) would be ignored and its adversary run with its defaults, and a parameter the
    adversary does not take would stop the sweep only when its first row runs."""
    for i, name in enumerate(adversaries):
        if not isinstance(name, str):  # a row names its adversary in the results file: a name or a reference
            raise ArgumentTypeError(
                f"adversaries must hold registered names or 'module:Name' / 'file.py:Name' references (each row of a "
                f"results file names its adversary); got {name!r} ({type(name).__name__}) at position {i}"
            )
        adversary_arg(name, argument="adversaries")  # unknown names fail here, before any row runs
    for key, params in (adversary_params or {}).items():
        if key not in adversaries:
            takes = [a for a in adversaries if key in (adversary_parameters(a) or ())]
            hint = f" ({key!r} is a parameter of {takes[0]!r}: give {{{takes[0]!r}: {{{key!r}: ...}}}})" if takes else ""
            raise InvalidArgumentError(
                f"adversary_params: {key!r} is not an adversary of the sweep; expected a mapping from the sweep's "
                f"adversaries ({', '.join(map(repr, adversaries))}) to their parameters{hint}"
            )
        if not isinstance(params, Mapping):
            raise InvalidArgumentError(
                f"adversary_params[{key!r}] must be a mapping from parameter names to values; got {params!r}"
            )
        known = adversary_parameters(key)
        unknown = [] if known is None else sorted(set(params) - known)
        if unknown:
            raise InvalidArgumentError(
                f"adversary_params[{key!r}]: {', '.join(map(repr, unknown))} "
                f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} of adversary {key!r}; "
                f"its parameters: {', '.join(sorted(known)) or 'none'}"
            )


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
        check_step_size("ns[...]", n, minimum=2, budget=limits.MEMORY_BUDGET, holds="n costs")
    check_adversary_params(adversaries, adversary_params)
    configs, seen = [], set()
    entries = learner_entries(learners)
    for entry, adversary, T, n, rho, mult in itertools.product(entries, adversaries, horizons, ns, rhos, block_multipliers):
        spec = entry.spec
        takes_rho = entry.takes_rho() and "rho" not in entry.overrides
        if takes_rho and rho is None and entry.arg.needs_rho():
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
