"""``replify offpolicy``: estimates of your policies from a log, and replicable decisions
(docs/offpolicy.md). The log is a CSV or Parquet file (``action``, ``cost``, ``propensity``, ``x0``,
``x1``, …) or, with ``--simulate NAME``, one simulated from a registered contextual adversary under uniform
logging (``--simulate classification-bandit``: the wine data as a log)."""

from __future__ import annotations

import argparse
import warnings
import math
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np

from replify.base.checks import check_rho
from replify.base.references import load_reference
from replify.cli.outputs import say_outside_files
from replify.errors import InvalidArgumentError, ReplifyError, SmallSampleWarning
from replify.offpolicy import ESTIMATORS, INTERVALS, Log, Replicable, compare, replicable_value, select
from replify.offpolicy.select import LOGGING, VARIANCES
from replify.offpolicy.log import check_simulated_size, logged_system


def _cost_bound(text: str) -> float | tuple[float, float]:
    """``--cost-bound``: M (every cost in [-M, M], M > 0) or LO,HI (LO < HI), finite numbers."""
    try:
        parts = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected M or LO,HI (numbers); got {text!r}") from None
    if len(parts) not in (1, 2) or not all(math.isfinite(v) for v in parts):
        raise argparse.ArgumentTypeError(f"expected M or LO,HI (finite numbers); got {text!r}")
    if len(parts) == 1 and parts[0] <= 0:
        raise argparse.ArgumentTypeError(f"expected M > 0 (every cost in [-M, M]) or LO,HI with LO < HI; got {text!r}")
    if len(parts) == 2 and parts[0] >= parts[1]:
        raise argparse.ArgumentTypeError(f"expected LO,HI with LO < HI (every cost in [LO, HI]); got {text!r}")
    return parts[0] if len(parts) == 1 else (parts[0], parts[1])


def _column(text: str) -> tuple[str, Any]:
    """``--column NAME=COLUMN``: replify's name (action, cost, propensity, or context with its columns
    COLUMN,COLUMN,... in order) and the file's own."""
    name, sep, column = text.partition("=")
    if not sep or not column or name not in ("action", "cost", "propensity", "context"):
        raise argparse.ArgumentTypeError(f"expected NAME=COLUMN with NAME one of action, cost, propensity, context "
                                         f"(context=COL,COL,... in order); got {text!r}")
    return (name, column.split(",")) if name == "context" else (name, column)


def _guarded(ref: str, policy: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
    """``policy`` (``--policy ref``), whose failures are said in one line naming it and where it
    raised (its traceback kept as the cause, which ``--traceback`` shows), and whose ``sys.exit``
    is said, with its code, rather than ending replify without a word."""
    def call(contexts: np.ndarray) -> Any:
        try:
            return policy(contexts)
        except ReplifyError:
            raise
        except SystemExit as exc:
            raise InvalidArgumentError(f"--policy {ref!r} exited with sys.exit({exc.code!r}) as it was called; expected "
                                       "a function of the contexts returning arms or probabilities") from exc
        except Exception as exc:  # the user's code failed: said, with where, as one line
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            raise InvalidArgumentError(f"--policy {ref!r} raised {type(exc).__name__}: {exc} (at {frame.filename}:"
                                       f"{frame.lineno}, in {frame.name}; --traceback shows it all)") from exc
    return call


def _is_parquet(path: str) -> bool:
    """A Parquet log: named ``.parquet`` or ``.pq``, or starting with Parquet's magic bytes ``PAR1``."""
    if Path(path).suffix.lower() in (".parquet", ".pq"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:  # unreadable: Log.from_csv says why
        return False


def add_offpolicy(sub: Any, formatter: Any) -> None:
    """The ``offpolicy`` subcommand's options."""
    op = sub.add_parser("offpolicy", help="off-policy estimates of your policies from a log, and replicable decisions",
                        formatter_class=formatter,
                        epilog="example: replify offpolicy --simulate classification-bandit -n 3 --rows 20000 "
                               "--policy mypolicies.py:Greedy --policy mypolicies.py:Random --rho 0.1")
    op.add_argument("log", metavar="LOG", nargs="?", help="a CSV or Parquet log (.parquet, .pq, or Parquet's PAR1 "
                    "bytes; needs pyarrow): columns action, cost, propensity, x0, x1, ...")
    op.add_argument("--simulate", metavar="NAME", help="instead of LOG, a log simulated from this registered contextual "
                    "adversary under uniform logging")
    op.add_argument("-n", type=int, help="the number of arms (a CSV log: by default the largest action + 1)")
    op.add_argument("--rows", type=int, default=10_000, help="rows of a simulated log")
    op.add_argument("--policy", action="append", required=True, metavar="REF",
                    help="'path/to/file.py:Name' or 'package.module:Name': a function of the contexts (all rows at "
                         "once) returning arms or probabilities; give it once per candidate")
    op.add_argument("--column", type=_column, action="append", metavar="NAME=COLUMN",
                    help="your log's own column names: action=arm, cost=reward, propensity=p, context=age,visits (in "
                         "order); give it once per name")
    op.add_argument("--ignore", action="append", metavar="COLUMN", help="a column of your log to leave out (an id, a "
                    "timestamp); every other column must be read")
    op.add_argument("--estimate-propensities", action="store_true", help="the log has no propensity column: estimate "
                    "them by a stated model (multinomial logistic regression on the context); every number is then "
                    "measured, not certified")
    op.add_argument("--rewards", action="store_true", help="the cost column holds rewards: each cost is its reward "
                    "negated (lower is better)")
    op.add_argument("--estimator", choices=ESTIMATORS, action="append",
                    help="estimators to print (default: all of them)")
    op.add_argument("--interval", choices=INTERVALS, default="normal",
                    help="the intervals: normal (asymptotic), bootstrap (resampled from --seed), or bernstein "
                         "(finite-sample, for ips; the others keep the normal one and say so)")
    op.add_argument("--plot", metavar="PATH", help="also a figure of every estimate (.png, .svg or .pdf)")
    op.add_argument("--rho", type=float, help="also the replicable value of each policy and, for two or more, the "
                    "replicable choice among them")
    op.add_argument("--min-propensity", type=float, help="the logging policy's smallest probability of any arm (what "
                    "the certificate needs; known for a simulated log)")
    op.add_argument("--cost-bound", type=_cost_bound, metavar="M|LO,HI",
                    help="every cost in [-M, M], or in [LO, HI] (default: the range a simulated log's adversary "
                         "declares; none declared: the log's own, and nothing is certified)")
    op.add_argument("--min-rows", type=int, metavar="N", help="the least number of rows of any log the decisions are "
                    "compared with (a week's log against another's): the certificate's rho then holds for logs of any "
                    "sizes >= N; without it, logs of N and N' rows get rho + |log2(N'/N)|")
    op.add_argument("--variance", choices=VARIANCES, default="worst-case",
                    help="what sets the grid's width: the worst case over policies, or the candidates' overlap with the "
                         "logging policy, measured on a log that records its logging distribution (a simulated log "
                         "does), its price charged in rho (docs/offpolicy.md, 'The overlap')")
    op.add_argument("--incumbent", metavar="REF", help="a --policy (as given) or 'logging' (the logging policy itself): "
                    "kept by the replicable choice where it shares the least cell, rather than R's order")
    op.add_argument("--seed", type=int, default=0, help="the seed of R (and of a simulated log's rows)")
    op.set_defaults(func=cmd_offpolicy)


def _claim(decision: Replicable) -> str:
    """A decision's grid width, what it certifies (for logs of which sizes) or why it does not, and its
    caveat, if any."""
    return (f"(grid width {decision.width:.3g}; {decision.certificate})"
            + (f"\n    note: {decision.caveat}" if decision.caveat else ""))


def cmd_offpolicy(args: argparse.Namespace) -> int:
    if (args.log is None) == (args.simulate is None):
        raise InvalidArgumentError("give a CSV log (LOG) or --simulate NAME, one of the two")
    if args.seed < 0:
        raise InvalidArgumentError(f"--seed must be an integer >= 0; got {args.seed}")
    if args.rho is None:
        given = [flag for flag, value in (("--min-propensity", args.min_propensity), ("--cost-bound", args.cost_bound),
                                          ("--min-rows", args.min_rows), ("--incumbent", args.incumbent),
                                          ("--variance", None if args.variance == "worst-case" else args.variance))
                 if value is not None]
        if given:
            raise InvalidArgumentError(f"{' and '.join(given)} {'serve' if len(given) > 1 else 'serves'} the "
                                       "certificate of --rho; give --rho too: the estimates and their intervals use "
                                       "neither the logging policy's least propensity, nor a cost bound, nor the "
                                       "logs' least size, nor an incumbent, nor the variance's form, so without "
                                       "--rho it would change nothing")
    else:
        check_rho(args.rho, "--rho")
    if args.incumbent is not None and args.incumbent != LOGGING and args.incumbent not in args.policy:
        raise InvalidArgumentError(f"--incumbent must be one of the --policy references as given, or '{LOGGING}'; got "
                                   f"{args.incumbent!r}")
    if args.simulate is not None:
        if args.n is None:
            raise InvalidArgumentError("--simulate needs -n, the number of arms")
        # --rows 100000000: refused with the memory it needs, before anything is drawn
        check_simulated_size(logged_system(args.simulate, n=args.n, rows=args.rows, instance_seed=0,
                                           adversary_params=None), n=args.n, rows=args.rows, argument="--rows")
        log = Log.simulate(args.simulate, n=args.n, rows=args.rows, seed=args.seed)
    else:
        bound = args.cost_bound
        cost_range = None if bound is None else ((-bound, bound) if isinstance(bound, float) else bound)
        read = Log.from_parquet if _is_parquet(args.log) else Log.from_csv
        log = read(args.log, n=args.n, min_propensity=args.min_propensity, cost_range=cost_range,
                   columns=dict(args.column or ()), ignore=args.ignore, rewards=args.rewards,
                   propensities="estimate" if args.estimate_propensities else "logged")
    say_outside_files("offpolicy", args.policy)
    policies = [(ref, _guarded(ref, load_reference(ref, argument="--policy"))) for ref in args.policy]
    decisions: list[str] = []
    if args.rho is not None:  # first: everything the certificate needs is checked before anything is printed
        kw = dict(rho=args.rho, seed=args.seed, min_propensity=args.min_propensity, cost_bound=args.cost_bound,
                  min_rows=args.min_rows, variance=args.variance)
        for ref, policy in policies:
            v = replicable_value(log, policy, **kw)
            decisions.append(f"  {ref:<28} replicable value {v.value:.5g} {_claim(v)}")
        if len(policies) >= 2:
            chosen = select(log, dict(policies), incumbent=args.incumbent, **kw)
            decisions.append(f"  replicable choice: {chosen.name} {_claim(chosen)}")
    print(f"{log.name}: {log.rows} rows, {log.n} arms")
    kinds: dict[str, list[str]] = {}  # what each estimator's numbers are, said once below them
    with warnings.catch_warnings():  # a small sample's warning is printed as the estimate's note
        warnings.simplefilter("ignore", SmallSampleWarning)
        table = compare(log, dict(policies), args.estimator or ESTIMATORS, interval=args.interval,
                        seed=args.seed if args.interval == "bootstrap" else None)
    for ref, row in zip(table.candidates, table.estimates):
        for e in row:
            name = e.estimator
            interval = "no interval" if e.interval is None else \
                f"{e.confidence:.0%} [{e.interval[0]:.5g}, {e.interval[1]:.5g}]"
            truth = "" if e.true_value is None else f"   true {e.true_value:.5g}"
            label = name if e.lam is None else f"{name} lam={e.lam:g}"
            print(f"  {ref:<28} {label:<6} {e.value:.5g}   {interval}{truth}")
            if e.caveat:
                print(f"    note: {e.caveat}")
            if name not in kinds.setdefault(e.kind, []):
                kinds[e.kind].append(name)
    if args.plot:
        table.plot(path=args.plot)
    for kind, names in kinds.items():
        print(f"  ({', '.join(names)}: {kind})")
    for line in decisions:
        print(line)
    return 0
