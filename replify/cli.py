"""The ``replify`` command line: ``list``, ``run``, ``sweep``, ``stress``, ``calibrate``, ``demo``.

Errors of replify's own (and the system's, such as a missing folder) are one line on stderr
(``replify: error: …``) and exit status 2; ``--traceback`` shows them in full; any other exception
is a bug and keeps its traceback. Every output path is checked before any work, and none may be
the sweep's config or another output of the command (links resolved); ``--json`` and ``--plot``
files are written whole or not at all (:mod:`replify.files`). A progress bar goes to stderr for
anything that runs longer than a second, unless stderr is not a terminal or ``--quiet`` is given."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import replify
from replify._version import __version__
from replify.checks import check_output_path
from replify.components.bandits import reference_learners
from replify.errors import OutputPathError, ReplifyError, ReplifyWarning
from replify.experiments.lower_bounds import DEMOS
from replify.experiments.sweeps import check_results_file
from replify.files import atomic_write, resolve
from replify.plots import PLOT_SUFFIXES, require_matplotlib, rho_interval_label
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
        out[key] = _value(value, flag=flag, key=key)
    return out


def _learner_params(spec: Any) -> str:
    """A learner's own parameters, from its factory's signature (what ``make`` passes on)."""
    import inspect

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


def _same_file(a: str | Path, b: str | Path) -> bool:
    """Two paths naming one file: equal once links are resolved, or one file under two names."""
    if resolve(a) == resolve(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet: only its resolved name can match
        return False


#: typeguard's report of a value that matches no member of a union, as the public boundary
#: words it (replify.checks.public): one line per member, which the command line folds into one.
_UNION = re.compile(r'argument "(?P<name>[^"]+)" \((?P<got>\S+) did not match any element in the union:\n'
                    r'(?P<members>(?:  .*\n?)+)\) in (?P<func>\S+)', re.DOTALL)


def _one_line(message: str) -> str:
    """An error message on one line: a union mismatch becomes ``argument "x" of f(): expected A or
    B, got C``; any other line break becomes "; "."""
    match = _UNION.fullmatch(message)
    if match is not None:
        expected = []
        for member in match["members"].strip("\n").split("\n"):
            name, _, why = member.strip().partition(": ")
            name = "None" if name == "NoneType" else name
            expected.append(name if why.startswith("is not an instance of") else f"{name} ({why})")
        return f'argument "{match["name"]}" of {match["func"]}: expected {" or ".join(expected)}, got {match["got"]}'
    return "; ".join(line.strip() for line in message.splitlines() if line.strip())


def _check_outputs(args: argparse.Namespace, plot: Any = None, output: Any = None, *,
                   output_option: str = "--output", plot_option: str = "--plot", config: Any = None) -> None:
    """Every output path is checked before any work: a long run never ends in a refusal, and no
    output overwrites an input (the sweep's config) or another output of the same command."""
    named: list[tuple[str, Any]] = [("the config file", config)] if config else []
    if getattr(args, "json", None):
        check_output_path(args.json, what="--json")
        named.append(("--json", args.json))
    for value in (getattr(args, "plot", None), plot):
        if value:
            check_output_path(value, what=plot_option, suffixes=PLOT_SUFFIXES)
            require_matplotlib(plot_option)
            named.append((plot_option, value))
            break  # --plot given on the command line replaces the config's plot
    if output:
        check_output_path(output, what=output_option)
        named.append((output_option, output))
    for i, (what, value) in enumerate(named):
        for other_what, other in named[:i]:
            if _same_file(value, other):
                raise OutputPathError(
                    f"{what} {str(value)!r} and {other_what} {str(other)!r} are the same file; expected different "
                    f"files: {what} would overwrite {other_what}"
                )
    if output:  # after the clashes: "--output is the config" says more than "the config is not results"
        check_results_file(output, what=output_option)


def cmd_list(args: argparse.Namespace) -> int:
    print("learners (any learner of your own goes wherever a name does, as 'package.module:Name' or "
          "'path/to/file.py:Name'):")
    learners, adversaries = replify.learners(), replify.adversaries()
    w = max([16, *map(len, learners)])  # the widest name sets the column
    print(f"  {'name':<{w}} {'problem':<8} {'feedback':<8} {'guarantee':<12} {'needs':<5} description")
    for name, spec in learners.items():
        takes = "rho" if spec.parameters is not None or spec.guarantee else "-"
        print(f"  {name:<{w}} {spec.problem:<8} {spec.feedback:<8} {spec.guarantee or 'none':<12} {takes:<5} "
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


def _report_table(report: Any) -> str:
    lo, hi = report.rho_ci
    rlo, rhi = report.regret_ci
    lines = [
        f"{report.learner} on {report.adversary}: n={report.n}, T={report.horizon}, {report.pairs} pairs, seed={report.seed}"
        + (" (block-sum fast path)" if report.fast_path else ""),
        f"  rho_hat          {report.rho_hat:.4f}   {rho_interval_label([report.rho_ci_kind])} CI [{lo:.4f}, {hi:.4f}]   "
        f"({report.failures} of {report.pairs} pairs differ; measured)",
    ]
    params = report.params or {}
    bound = params.get("replicability_bound", params.get("rho_bound"))  # block learners; the bandit ones
    if (report.params or {}).get("calibration"):
        lines.append(f"  claim            {report.params['calibration']}")
    if bound is not None and report.certified is False and bound >= 1:
        lines.append(f"  rho bound        none   NOT certified: the proof's union bound for the parameters in force is "
                     f"{bound:.4g} >= 1, which bounds nothing")
    elif bound is not None and report.certified is False:
        lines.append(f"  rho bound        {bound:.4g}   NOT certified: the proof's bound for the parameters in force "
                     f"exceeds rho={report.params.get('rho')}")
    elif bound is not None:
        lines.append(f"  rho bound        {bound:.4g}   (certified: the proof's union bound for the parameters in force)")
    elif report.certified is False:
        lines.append("  rho bound        none: the proof does not apply to the parameters in force (not certified)")
    lines += [
        f"  regret           {report.regret_mean:.2f}   95% CI [{rlo:.2f}, {rhi:.2f}]   (measured)"
        + (f"   bound {report.regret_bound:.4g} (certified)" if report.regret_bound is not None else ""),
        f"  agreement        {report.agreement_mean:.4f} of steps (measured)",
    ]
    if report.regret_bound is None and report.regret_bound_note:
        lines.append(f"  regret bound     {report.regret_bound_note}")
    if report.decision is not None:
        lines.append(f"  decision         rho {report.decision} {report.target} after {report.pairs} pairs   (measured, "
                     f"sequential at alpha={report.alpha:g}; the rho_hat interval above is its anytime-valid sequence)")
    if report.learning_gain is not None:
        glo, ghi = report.learning_gain_ci
        lines.append(f"  gain over constant {report.learning_gain:.2f}   95% CI [{glo:.2f}, {ghi:.2f}]   (measured on the same "
                     "draws, against constant's expected regret over the expert it draws; <= 0: it has not learned)")
    if report.max_step_disagreement is not None:
        mlo, mhi = report.max_step_disagreement_ci
        lines.append(f"  max step disagreement {report.max_step_disagreement:.4f}   95% CI [{mlo:.4f}, {mhi:.4f}]   "
                     "(measured, simultaneous)")
    if report.first_divergence_median is not None:
        lines.append(f"  first divergence median step {report.first_divergence_median:.0f} (measured, over the pairs that part)")
    if report.params and "block_size" not in report.params:  # a learner of phases (the bandit eliminations)
        p = report.params
        shown = {k: p[k] for k in ("pulls", "width_scale", "pull_scale", "confidence_scale") if p.get(k) is not None}
        lines.append("  parameters       " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    elif report.params:
        p = report.params
        name = p.get("algorithm") or report.learner
        if report.certified is False:  # the theorem does not apply to these parameters: do not cite it as if it did
            outside = f"outside {p['theorem']}: not certified" if p.get("theorem") else "no theorem: measured"
            lines.append(f"  parameters       {name}: B={p.get('block_size')}, eps={p.get('eps')} ({outside})")
        else:
            theorem = f" ({p['theorem']})" if p.get("theorem") else ""
            lines.append(f"  parameters       {name}{theorem}: B={p.get('block_size')}, eps={p.get('eps')}")
    return "\n".join(lines)


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
    _check_outputs(args)
    overrides = _params(args.param)
    for key in ("block_size", "eps"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    learner = learner_arg(args.name, label=args.label, argument="NAME")
    adversary = adversary_arg(args.adversary, argument="--adversary")
    adversary_params, spread = _adversary_params(args)
    report = replify.evaluate(
        learner.obj, adversary.obj, n=args.n, horizon=args.T, pairs=args.pairs, seed=args.seed, rho=args.rho,
        adversary_params=adversary_params, n_jobs=args.n_jobs, label=learner.label,
        fast_path=False if args.no_fast_path else None, progress=_bar(args),
        target=args.decide, sequential=args.decide is not None, learner_params=overrides,
    )
    print(_report_table(report))
    if spread:
        print(f"  adversary        iid-bernoulli with means spread evenly over [{SPREAD[0]}, {SPREAD[1]}], expert 0 the "
              "best (the command line's default instance; --adversary-param 'means=[...]' sets others)")
    experts = report.action_counts is not None or (learner.spec is not None and learner.spec.problem == "experts")
    if learner.replicable and experts and not args.no_references and args.name != "constant":
        # A replicable learner is shown beside constant (replicable, learns nothing) and a baseline that
        # learns and is not replicable (hedge; ucb1 under bandit feedback), on the same draws.
        feedback = learner.spec.feedback if learner.spec is not None else getattr(learner.obj, "feedback", "full")
        for ref in reference_learners(feedback == "bandit"):
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
    if args.json:
        atomic_write(args.json, json.dumps(report.to_dict(per_pair=True), indent=2, sort_keys=True) + "\n", what="--json")
    if args.plot:

        plot_agreement(report, path=args.plot)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    _check_outputs(args)
    cal = replify.calibrate(learner_arg(args.name, argument="NAME").obj, n=args.n, horizon=args.T, rho=args.rho,
                            seed=args.seed, budget=args.budget, test_pairs=args.test_pairs, label=_label(args),
                            progress=_bar(args))
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
    if args.json:
        atomic_write(args.json, json.dumps(cal.to_dict(), indent=2, sort_keys=True) + "\n", what="--json")
    if args.plot:

        plot_frontier(cal.frontier(seed=args.seed), path=args.plot)
    return 0


def cmd_stress(args: argparse.Namespace) -> int:
    _check_outputs(args)
    result = replify.stress(learner_arg(args.name, argument="NAME").obj, n=args.n, horizon=args.T, rho=args.rho,
                            budget=args.budget, seed=args.seed, families=args.family or None, progress=_bar(args),
                            label=_label(args), learner_params=_params(args.param))
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
    if args.json:
        atomic_write(args.json, json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n", what="--json")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    path = Path(args.config)
    if not path.is_file():
        raise ReplifyError(f"config file {str(path)!r} not found")
    try:
        config = tomllib.loads(path.read_text())
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
    _check_outputs(args, plot=config.get("plot"), output=out, config=path,
                   output_option=("--output" if args.output else "the config's output" if config.get("output")
                                  else "the results file (CONFIG.jsonl)"),
                   plot_option="--plot" if args.plot or not config.get("plot") else "the config's plot")
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
            f"{rec['rho_ci_high']:.3f}] regret={rec['regret_mean']:.1f} (measured; certified={rec['certified']})"
        )
    print(f"results: {out} ({result.reused} rows reused from the file, {len(result.rows) - result.reused} computed"
          + (f"; {result.stale} rows for other settings kept but not reused" if result.stale else "")
          + (f"; {result.rejected} damaged lines set aside in {result.rejected_path}" if result.rejected else "") + ")")
    plot = args.plot or config.get("plot")
    if plot:

        plot_sweep(result, path=plot)
    return 0


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

    _check_outputs(args)
    demo = DEMOS[args.demo](quick=args.quick, seed=args.seed, progress=_bar(args))
    print(f"replify demo {args.demo}: {demo.settings_line()}")
    print(demo.table())
    print(demo.note)
    if args.json:
        atomic_write(args.json, json.dumps(demo.to_dict(), indent=2, sort_keys=True) + "\n", what="--json")
    if args.plot:
        demo.plot(args.plot)
    return 0


class _Help(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default, when it has one worth saying (not None or off)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or default is None or default is False or default is argparse.SUPPRESS
                or default == [] or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


LEARNER_HELP = ("a registered learner (replify list), or one of your own: 'package.module:Name' or "
                "'path/to/file.py:Name' naming a class or factory taking n, horizon, rng, a class decorated with "
                "@replify.wrap, or a callable seed -> learner")
ADVERSARY_HELP = ("a registered adversary (replify list), or one of your own: 'package.module:Name' or "
                  "'path/to/file.py:Name' naming a class or factory taking n, horizon, rng, or an object with "
                  f"sample(rng). iid-bernoulli without means gets means spread over [{SPREAD[0]}, {SPREAD[1]}]")


def _common(sub: argparse.ArgumentParser, *, seed_help: str = "the seed every pair's seeds derive from") -> None:
    sub.add_argument("--seed", type=int, default=0, help=seed_help)
    sub.add_argument("--quiet", action="store_true",
                     help="no progress bar (by default one appears on a terminal's stderr once a run lasts 2 s)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="replify", description="Replicable online learning: measure replicability and regret.",
                                formatter_class=_Help)
    p.add_argument("--version", action="version", version=f"replify {__version__}")
    p.add_argument("--traceback", action="store_true", help="show the full traceback of an error, not one line")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="learners and adversaries, with their feedback, guarantees and parameters",
                   formatter_class=_Help).set_defaults(func=cmd_list)

    run = sub.add_parser("run", help="evaluate one learner on one adversary over paired runs", formatter_class=_Help,
                         epilog="example: replify run mylearners.py:MyHedge -n 10 -T 20000 --pairs 100")
    run.add_argument("name", metavar="NAME", help=LEARNER_HELP)
    run.add_argument("--adversary", default="iid-bernoulli", help=ADVERSARY_HELP)
    run.add_argument("-n", type=int, required=True, help="number of experts (arms) or the dimension; required")
    run.add_argument("-T", type=int, required=True, help="the horizon, steps per run; required")
    run.add_argument("--rho", type=float, default=None,
                     help="replicability parameter, for learners whose parameters come from a replicability theorem "
                          "(and wrapped classes without one)")
    run.add_argument("--pairs", type=int, default=200, help="pairs of runs; each pair shares the learner's randomness R")
    _common(run)
    run.add_argument("--label", default=None, help="the learner's name in the report and --json (default: NAME)")
    run.add_argument("--block-size", dest="block_size", type=int, default=None,
                     help="the block size B, overriding the theorem's (the certificate then follows the new B)")
    run.add_argument("--eps", type=float, default=None, help="the grid or noise parameter, overriding the theorem's")
    run.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="a hyperparameter of the learner (repeatable; JSON values: --param eta=0.1)")
    run.add_argument("--adversary-param", action="append", default=[], metavar="KEY=VALUE",
                     help="an adversary parameter (repeatable; JSON values: --adversary-param 'means=[0.4,0.6]')")
    run.add_argument("--decide", type=float, default=None, metavar="RHO",
                     help="sequential test: stop as soon as rho is decided below or above RHO (--pairs is the budget)")
    run.add_argument("--n-jobs", dest="n_jobs", type=int, default=1,
                     help="local worker processes (joblib: pip install 'replify[parallel]'); results do not depend on it")
    run.add_argument("--no-fast-path", action="store_true", help="draw per-step costs even when block sums would do")
    run.add_argument("--json", metavar="PATH", help="write the full report as JSON")
    run.add_argument("--plot", metavar="PATH", help="save the agreement-over-time plot (.png, .svg or .pdf)")
    run.add_argument("--no-references", dest="no_references", action="store_true",
                     help="skip the reference rows (constant, and hedge or, for a bandit learner, ucb1) printed beside a replicable learner")
    run.set_defaults(func=cmd_run)

    ca = sub.add_parser("calibrate", help="knobs with the lowest measured regret that pass the stress suite's tests",
                        formatter_class=_Help)
    ca.add_argument("name", metavar="NAME",
                    help="ftplb-star, fllb, iid-experts or split-commit (their knob grids), or any learner as for run "
                         "(the learner as given is the one candidate)")
    ca.add_argument("-n", type=int, required=True, help="number of experts; required")
    ca.add_argument("-T", type=int, required=True, help="the horizon; required")
    ca.add_argument("--rho", type=float, required=True, help="the replicability target; required")
    _common(ca)
    ca.add_argument("--label", default=None, help="the learner's name in the output (default: NAME)")
    ca.add_argument("--budget", type=int, default=80_000, help="pairs the tests and stress searches spend in all")
    ca.add_argument("--test-pairs", dest="test_pairs", type=int, default=4_000, help="most pairs of one sequential test")
    ca.add_argument("--json", metavar="PATH", help="write the calibration as JSON")
    ca.add_argument("--plot", metavar="PATH", help="the regret-replicability frontier (.png, .svg or .pdf)")
    ca.set_defaults(func=cmd_calibrate)

    st = sub.add_parser("stress", help="search the stress suite for the adversary that parts a learner's runs most",
                        formatter_class=_Help)
    st.add_argument("name", metavar="NAME", help=LEARNER_HELP)
    st.add_argument("-n", type=int, required=True, help="number of experts; required")
    st.add_argument("-T", type=int, required=True, help="the horizon; required")
    st.add_argument("--rho", type=float, default=None, help="replicability parameter, for learners that take one")
    st.add_argument("--budget", type=int, default=2000, help="pairs in all")
    _common(st)
    st.add_argument("--label", default=None, help="the learner's name in the output (default: NAME)")
    st.add_argument("--family", action="append", default=[],
                    help="a family to search (repeatable; default: ties, crossing, block-switch, and at n = 2 coin and "
                         "lazy-leader-trap)")
    st.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="a hyperparameter of the learner (repeatable; JSON values)")
    st.add_argument("--json", metavar="PATH", help="write every candidate as JSON")
    st.set_defaults(func=cmd_stress)

    sw = sub.add_parser("sweep", help="evaluate a grid of configurations from a TOML file, resumably",
                        formatter_class=_Help, epilog="a commented example ships as examples/sweep.toml")
    sw.add_argument("config", help="TOML with learners, adversaries, horizons, ns, rhos, block_multipliers, pairs, seed; "
                                   "learners and adversaries may be 'module:Name' or 'file.py:Name' references")
    sw.add_argument("--output", help="JSONL results file (default: the config's `output`, or CONFIG.jsonl)")
    sw.add_argument("--plot", metavar="PATH", help="save regret-vs-T and rho-vs-block-size plots")
    sw.add_argument("--quiet", action="store_true",
                    help="no progress bar (by default one appears on a terminal's stderr once a run lasts 2 s)")
    sw.set_defaults(func=cmd_sweep)

    demo = sub.add_parser("demo", help="the paper's lower bounds (bandit-coin: under bandit feedback) and the FLL example, "
                                       "from one command", formatter_class=_Help)
    demo.add_argument("demo", choices=["coin", "phases", "lazy-leader", "bandit-coin"], help="which demo")
    demo.add_argument("--quick", action="store_true", help="small sizes: about 2 s (bandit-coin 1 s) instead of coin 30 s, phases 15 s, lazy-leader 3 s, bandit-coin 20 s")
    _common(demo, seed_help="the demo's seed")
    demo.add_argument("--json", metavar="PATH", help="write the table and settings as JSON")
    demo.add_argument("--plot", metavar="PATH", help="save the demo's plot (.png, .svg or .pdf)")
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", ReplifyWarning)  # each warning once
            warnings.showwarning = lambda message, category, *a, **k: print(  # one line, no source echo
                f"replify: warning: {message}", file=sys.stderr
            )
            return args.func(args)
    except BrokenPipeError:  # the reader went away (``replify list | head``): nothing to say
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("replify: interrupted", file=sys.stderr)
        return 130
    except (ReplifyError, OSError) as exc:
        # Only replify's own errors (and the system's: a full disk, a missing file) become one line;
        # anything else is a bug somewhere and keeps its traceback.
        if args.traceback:
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"replify: error: {_one_line(str(message))}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
