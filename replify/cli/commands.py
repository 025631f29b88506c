"""The command line's commands: ``list``, ``run``, ``calibrate``, ``stress``, ``sweep``, ``demo``
(docs/evaluation.md, "Command line"). Each checks every output path before any work (:mod:`replify.cli.outputs`)."""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import sys
import tomllib
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import replify
from replify.base.checks import check_path, check_step_size
from replify.cli.outputs import check_outputs, input_files, say_outside_files, write_json
from replify.cli.text import report_table
from replify.components.bandits import reference_learners
from replify.engine import limits
from replify.errors import ReplifyError
from replify.experiments.lower_bounds import DEMOS
from replify.offpolicy.demo import wine_demo
from replify.plots import plot_agreement, plot_frontier, plot_sweep
from replify.sources import adversary_arg, is_reference, learner_arg

#: Text that starts like JSON must be JSON: ``means=[0.4`` is an error, not the string "[0.4".
_JSON_START = tuple("[{\"-0123456789") + ("true", "false", "null")


def _value(text: str, *, flag: str, key: str) -> Any:
    """A ``key=value`` value: JSON when it looks like JSON (numbers, lists, objects, true/false,
    null), else plain text (a name such as ``linf``)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text.strip().startswith(_JSON_START):
            raise ReplifyError(f"{flag} {key}={text!r}: the value is not valid JSON ({exc.msg} at character {exc.pos})") from None
        return text


def _params(items: Sequence[str], flag: str = "--param") -> dict[str, Any]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ReplifyError(f"{flag} must look like key=value, got {item!r}")
        if key in out:  # a second value for one key would silently replace the first
            raise ReplifyError(f"{flag} {key} is given twice ({key}={out[key]!r} and {item!r}); give it once"
                               + (f", with every value in one list: {flag} '{key}=[v1, v2]'" if flag == "--grid" else ""))
        out[key] = _value(value, flag=flag, key=key)
    return out


def _learner_params(spec: Any) -> str:
    """A learner's own parameters, from its factory's signature (what ``make`` passes on)."""
    try:
        sig = inspect.signature(spec.factory)
    except (TypeError, ValueError):
        return ""
    names = []
    for p in sig.parameters.values():
        if p.name in ("n", "horizon", "rng") or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        names.append(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}")
    return ", ".join(names)


def cmd_list(args: argparse.Namespace) -> int:
    print("learners (any learner of your own goes wherever a name does, as 'package.module:Name' or "
          "'path/to/file.py:Name'):")
    learners, adversaries = replify.learners(), replify.adversaries()
    w = max([16, *map(len, learners)])  # the widest name sets the column
    print(f"  {'name':<{w}} {'problem':<10} {'feedback':<8} {'guarantee':<12} {'needs':<5} description")
    for name, spec in learners.items():
        takes = "rho" if spec.parameters is not None or spec.guarantee else "-"
        print(f"  {name:<{w}} {spec.problem:<10} {spec.feedback:<8} {spec.guarantee or 'none':<12} {takes:<5} "
              f"{spec.description}")
        own = _learner_params(spec)
        if own:
            print(f"  {'':<{w}}   parameters: {own}")
    print("adversaries:")
    v = max([20, *map(len, adversaries)])
    for name, spec in adversaries.items():
        print(f"  {name:<{v}} {spec.description}")
        for pname, doc in spec.param_docs.items():
            print(f"  {'':<{v}}   {pname}: {doc}")
    return 0


#: The iid instance the command line uses unless told otherwise: means spread over [0.3, 0.7], so
#: that a learner has something to learn (equal means leave nothing to learn, and every learner
#: looks as good as ``constant``).
SPREAD = (0.3, 0.7)
#: Steps (pairs x 2 x T) beyond which ``run`` skips a reference row that steps every run (hedge,
#: ucb1: about 0.15-0.3 us a step, so minutes), saying so.
REFERENCE_STEPS = 10**9


def _adversary_params(args: argparse.Namespace) -> tuple[dict[str, Any] | None, bool]:
    """The adversary's parameters from ``--adversary-param``, and whether the command line chose
    them: ``iid-bernoulli`` without ``means`` gets means spread over :data:`SPREAD`."""
    params = _params(args.adversary_param, "--adversary-param")
    spread = args.adversary == "iid-bernoulli" and "means" not in params
    if spread:
        params["means"] = [round(float(m), 6) for m in np.linspace(*SPREAD, args.n)]
    return params or None, spread


def cmd_run(args: argparse.Namespace) -> int:
    # before the default means are spread over n arms (n numbers): -n 1000000000 is refused at once
    check_step_size("-n", args.n, minimum=2, budget=limits.MEMORY_BUDGET, holds="n costs")
    overrides = _params(args.param)
    for key in ("block_size", "eps"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    say_outside_files("run", [args.name, args.adversary])
    learner = learner_arg(args.name, label=args.label, argument="NAME")
    adversary = adversary_arg(args.adversary, argument="--adversary")
    adversary_params, spread = _adversary_params(args)
    check_outputs(args, inputs=input_files([learner.obj, adversary.obj], [overrides, adversary_params],
                                           [args.name, args.adversary]))
    report = replify.evaluate(
        learner.obj, adversary.obj, n=args.n, horizon=args.T, pairs=args.pairs, seed=args.seed, rho=args.rho,
        adversary_params=adversary_params, n_jobs=args.n_jobs, label=learner.label,
        fast_path=False if args.no_fast_path else None, progress=_bar(args),
        target=args.decide, sequential=args.decide is not None, learner_params=overrides,
    )
    print(report_table(report))
    if spread:
        print(f"  adversary        iid-bernoulli with means spread evenly over [{SPREAD[0]}, {SPREAD[1]}], expert 0 the "
              "best (the command line's default instance; --adversary-param 'means=[...]' sets others)")
    experts = report.action_counts is not None or (learner.spec is not None and learner.spec.problem != "olo")
    if learner.replicable and experts and not args.no_references and args.name != "constant":
        # A replicable learner is shown beside constant (replicable, learns nothing) and a baseline that
        # learns and is not replicable (hedge; ucb1 under bandit feedback), on the same draws.
        feedback = learner.spec.feedback if learner.spec is not None else getattr(learner.obj, "feedback", "full")
        contextual = (learner.spec.problem if learner.spec is not None else getattr(learner.obj, "problem", "")) == "contextual"
        for ref in reference_learners(feedback == "bandit", contextual):
            if ref != "constant" and 2 * args.pairs * args.T > REFERENCE_STEPS:
                print(f"  reference {ref:<9} skipped: it steps every run, 2 x {args.pairs} x {args.T} steps "
                      f"(more than {REFERENCE_STEPS:.0e}); run it at a smaller -T, or pass --no-references")
                continue
            r = replify.evaluate(ref, adversary.obj, n=args.n, horizon=args.T, pairs=args.pairs, seed=args.seed,
                                 adversary_params=adversary_params, n_jobs=args.n_jobs, progress=_bar(args))
            rlo, rhi = r.regret_ci
            lo, hi = r.rho_ci
            print(f"  reference {ref:<9} rho_hat {r.rho_hat:.4f} [{lo:.4f}, {hi:.4f}]   regret {r.regret_mean:.2f} "
                  f"[{rlo:.2f}, {rhi:.2f}]   (measured, same seeds" + ("; one expert drawn per pair)" if ref == "constant"
                                                                       else ")"))
    write_json(args, report.to_dict(per_pair=True))
    if args.plot:
        plot_agreement(report, path=args.plot)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    say_outside_files("calibrate", [args.name])
    learner = learner_arg(args.name, argument="NAME")
    grid = _grid(args.grid)
    check_outputs(args, inputs=input_files([learner.obj], grid or [], [args.name]))
    if grid is not None and not args.quiet:  # the search's size, said before it starts
        print(f"replify calibrate: {len(grid)} candidate{'s' if len(grid) != 1 else ''} from --grid, "
              f"within a budget of {args.budget} pairs", file=sys.stderr)
    cal = replify.calibrate(learner.obj, n=args.n, horizon=args.T, rho=args.rho, seed=args.seed, budget=args.budget,
                            test_pairs=args.test_pairs, regret_pairs=args.regret_pairs, refine_pairs=args.refine_pairs,
                            label=_label(args), progress=_bar(args), grid=grid)
    print(f"replify calibrate {cal.learner}: n={cal.n}, T={cal.horizon}, rho={cal.rho}, {cal.candidates_tried} candidates tried")
    print(f"  knobs            {json.dumps(cal.knobs, sort_keys=True)}")
    print(f"  claim            {cal.label}")
    for c in cal.checks:
        lo, hi = c.interval
        print(f"  {c.adversary:<16} {c.decision:<9} after {c.pairs:>4} pairs   rho_hat {c.rho_hat:.3f}   anytime-valid "
              f"[{lo:.3f}, {hi:.3f}]   {json.dumps(c.to_dict()['params'], sort_keys=True)}")
    ci = "" if cal.regret_ci is None else f" [{cal.regret_ci[0]:.1f}, {cal.regret_ci[1]:.1f}]"
    print(f"  regret on {cal.reference} (measured on fresh pairs): calibrated {cal.regret:.1f}{ci} "
          f"({cal.regret / cal.constant_regret:.2f} x constant)   "
          + ("" if cal.certified_regret is None else
             f"certified {cal.certified_regret:.1f} {json.dumps(cal.certified_knobs, sort_keys=True)}   ")
          + f"constant {cal.constant_regret:.1f}")
    write_json(args, cal.to_dict())
    if args.plot:
        plot_frontier(cal.frontier(seed=args.seed), path=args.plot)
    return 0


def cmd_stress(args: argparse.Namespace) -> int:
    say_outside_files("stress", [args.name])
    learner, params = learner_arg(args.name, argument="NAME"), _params(args.param)
    check_outputs(args, inputs=input_files([learner.obj], [params], [args.name]))
    result = replify.stress(learner.obj, n=args.n, horizon=args.T, rho=args.rho, budget=args.budget, seed=args.seed,
                            families=args.family or None, progress=_bar(args), label=_label(args),
                            learner_params=params)
    w = result.worst
    lo, hi = w.rho_ci
    print(f"replify stress {result.learner}: n={result.n}, T={result.horizon}, rho={result.rho}, "
          f"{result.pairs_used} of {result.budget} pairs, {len(result.candidates)} candidates")
    print(f"  worst: {w.family} {json.dumps(w.params, sort_keys=True)}")
    print(f"  rho_hat {w.rho_hat:.4f}   95% CI [{lo:.4f}, {hi:.4f}]   ({w.failures} of {w.pairs} pairs differ; measured "
          "on the adversaries tried)")
    for c in sorted(result.candidates, key=lambda c: -c.rho_hat):
        clo, chi = c.rho_ci
        print(f"  {c.family:<18} rho_hat {c.rho_hat:.3f} [{clo:.3f}, {chi:.3f}] over {c.pairs:>5} pairs  "
              f"{json.dumps(c.params, sort_keys=True)}")
    write_json(args, result.to_dict())
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    path = check_path("the config file", args.config)
    if not path.is_file():
        raise ReplifyError(f"config file {str(path)!r} {'is a folder' if path.is_dir() else 'not found'}; expected a TOML file")
    data = path.read_bytes()
    try:  # TOML is UTF-8; a byte-order mark (some editors write one) is read past
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReplifyError(
            f"config file {str(path)!r} is not UTF-8 text (byte {data[exc.start:exc.start + 1]!r} at offset {exc.start}); "
            "expected a TOML file, which is UTF-8 (examples/sweep.toml is one)"
        ) from None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ReplifyError(f"config file {str(path)!r} is not valid TOML: {exc}") from None
    known = {"learners", "adversaries", "horizons", "ns", "rhos", "block_multipliers", "pairs", "seed", "output",
             "adversary_params", "n_jobs", "fast_path", "plot"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ReplifyError(f"config file {str(path)!r} has unknown keys {unknown}; known keys: {sorted(known)}")
    missing = sorted({"learners", "adversaries", "horizons", "ns", "pairs", "seed"} - set(config))
    if missing:
        raise ReplifyError(f"config file {str(path)!r} is missing {missing}")
    config["learners"] = [_beside(path, item) for item in config["learners"]] if isinstance(config["learners"], list) \
        else config["learners"]
    config["adversaries"] = [_beside(path, item) for item in config["adversaries"]] \
        if isinstance(config["adversaries"], list) else config["adversaries"]
    if isinstance(config.get("adversary_params"), dict):  # keyed by the references as written
        config["adversary_params"] = {_beside(path, key): value for key, value in config["adversary_params"].items()}
    out = args.output or config.get("output") or str(path.with_suffix(".jsonl"))
    references = [item.get("learner") if isinstance(item, dict) else item
                  for key in ("learners", "adversaries") for item in (config[key] if isinstance(config[key], list) else [])]
    check_outputs(args, plot=config.get("plot"), output=out, config=path,
                  inputs=input_files(params=[config.get("adversary_params") or {}, config["learners"]],
                                     references=references),
                   output_option=("--output" if args.output else "the config's output" if config.get("output")
                                  else "the results file (CONFIG.jsonl)"),
                   plot_option="--plot" if args.plot or not config.get("plot") else "the config's plot")
    say_outside_files("sweep", references, path.resolve().parent, path.name, "its folder")
    result = replify.sweep(
        learners=config["learners"], adversaries=config["adversaries"], horizons=config["horizons"], ns=config["ns"],
        rhos=config.get("rhos", [None]), block_multipliers=config.get("block_multipliers", [1.0]),
        adversary_params=config.get("adversary_params"), pairs=config["pairs"], seed=config["seed"], path=out,
        progress=_bar(args), n_jobs=config.get("n_jobs", 1), fast_path=config.get("fast_path"),
    )
    records = result.records()
    width = max([12] + [len(str(rec["learner"])) for rec in records])
    adversary_width = max([16] + [len(str(rec["adversary"])) for rec in records])
    for rec in records:
        print(
            f"{rec['learner']:<{width}} {rec['adversary']:<{adversary_width}} T={rec['horizon']:<9} n={rec['n']:<4} "
            f"rho={rec['rho']} B={rec['block_size']} rho_hat={rec['rho_hat']:.3f} [{rec['rho_ci_low']:.3f}, "
            f"{rec['rho_ci_high']:.3f}] regret={rec['regret_mean']:.1f} (measured; the learner's claim: {_claim(rec)})"
        )
    print(f"results: {out} ({result.reused} rows reused from the file, {len(result.rows) - result.reused} computed"
          + (f"; {result.stale} rows for other settings kept but not reused" if result.stale else "")
          + (f"; {result.rejected} damaged lines set aside in {result.rejected_path}" if result.rejected else "") + ")")
    plot = args.plot or config.get("plot")
    if plot:
        plot_sweep(result, path=plot)
    return 0


def _claim(record: dict[str, Any]) -> str:
    """What a sweep row's learner claims, as its JSON says it (``claim``: certified, calibrated or
    none, docs/claims.md)."""
    claim = record.get("claim")
    if claim:
        return str(claim)
    return "certified" if record.get("certified") else "none"


def _grid(items: Sequence[str]) -> list[dict[str, Any]] | None:
    """``calibrate --grid KEY=[v1, v2, ...]`` (repeatable): the candidates are every combination of
    the values given (a single value stands for a list of one)."""
    if not items:
        return None
    axes = _params(items, "--grid")
    values = [v if isinstance(v, list) else [v] for v in axes.values()]
    for key, vals in zip(axes, values):
        if not vals:
            raise ReplifyError(f"--grid {key}=[]: expected at least one value, as in --grid {key}='[0.01, 0.02]'")
    return [dict(zip(axes, combo)) for combo in itertools.product(*values)]


def _beside(config: Path, item: Any) -> Any:
    """A config's ``"path/file.py:Name"`` reference read relative to the config's folder when the
    file is there (else relative to where the command runs, as on the command line)."""
    if isinstance(item, dict) and "learner" in item:
        return dict(item, learner=_beside(config, item["learner"]))
    if not is_reference(item):
        return item
    where, _, name = item.rpartition(":")
    if where.endswith(".py") and not Path(where).is_absolute() and (config.parent / where).is_file():
        return f"{config.parent / where}:{name}"
    return item


def _bar(args: argparse.Namespace) -> bool | None:
    """The ``progress=`` the command passes on: the default bar (tqdm on a terminal's stderr, for a
    run that lasts), or none with ``--quiet``."""
    return False if getattr(args, "quiet", False) else None


def _label(args: argparse.Namespace) -> str | None:
    """``--label``, else the name given (a reference is named by what follows its colon)."""
    return args.label or (args.name.rpartition(":")[2] if is_reference(args.name) else None)


def cmd_demo(args: argparse.Namespace) -> int:
    check_outputs(args)
    make_demo = wine_demo if args.demo == "offpolicy" else DEMOS[args.demo]
    demo = make_demo(quick=args.quick, seed=args.seed, progress=_bar(args))
    print(f"replify demo {args.demo}: {demo.settings_line()}")
    print(demo.table())
    print(demo.note)
    write_json(args, demo.to_dict())
    if args.plot:
        demo.plot(args.plot)
    return 0


