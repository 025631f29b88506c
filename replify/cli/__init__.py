"""The ``replify`` command line (docs/evaluation.md, "Command line"): ``list``, ``run``, ``sweep``, ``stress``,
``calibrate``, ``demo``, ``offpolicy`` (logged data, docs/offpolicy.md).

Errors of replify's own (and the system's, such as a missing folder) are one line on stderr
(``replify: error: …``) and exit status 2; ``--traceback`` shows them in full; any other exception
is a bug and keeps its traceback. Every output path is checked before any work
(:mod:`replify.cli.outputs`): none may be an input of the run (the learner's or adversary's file,
data, the sweep's config), another output of the command, something other than a regular file, or
an existing file replify did not write; ``--json -`` writes the document to standard output and
the summary to standard error. ``--json`` and ``--plot`` files are written whole or not at all
(:mod:`replify.base.files`). A progress bar goes to stderr for anything that runs longer than a second
on a terminal, progress lines a few times a minute when stderr is a file or a pipe, nothing with
``--quiet``. ``commands`` holds the commands (``offpolicy`` its own), ``outputs`` what they write, ``text`` what they print."""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from typing import Sequence

from replify._version import __version__
from replify.cli.commands import (
    SPREAD, cmd_calibrate, cmd_demo, cmd_list, cmd_run, cmd_stress, cmd_sweep,
)
from replify.cli.offpolicy import add_offpolicy
from replify.experiments.lower_bounds import DEMOS
from replify.cli.outputs import STDOUT, only_the_starter, output_options, started
from replify.cli.text import one_line
from replify.errors import ReplifyError, ReplifyWarning

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
    run.add_argument("--json", metavar="PATH", help="write the full report as JSON (- for standard output, the summary then on standard error)")
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
    ca.add_argument("--budget", type=int, default=80_000,
                    help="pairs the whole search may run: regret measurements, screens, stress searches and tests")
    ca.add_argument("--regret-pairs", dest="regret_pairs", type=int, default=40,
                    help="pairs of each candidate's first regret measurement")
    ca.add_argument("--refine-pairs", dest="refine_pairs", type=int, default=400,
                    help="pairs of the best candidates' second regret measurement, and of the result's")
    ca.add_argument("--test-pairs", dest="test_pairs", type=int, default=4_000, help="most pairs of one sequential test")
    ca.add_argument("--grid", action="append", default=[], metavar="KEY=VALUES",
                    help="a knob and the values to try, e.g. --grid 'eps=[0.01, 0.02]' --grid 'block_size=[500, 1000]' "
                         "(repeatable: every combination is a candidate; replaces the built-in grid)")
    ca.add_argument("--json", metavar="PATH", help="write the calibration as JSON (- for standard output)")
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
    st.add_argument("--json", metavar="PATH", help="write every candidate as JSON (- for standard output, the summary then on standard error)")
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

    demo = sub.add_parser("demo", help="the paper's lower bounds (bandit-coin: under bandit feedback), the FLL example, "
                          "adversarial-bandit (an iid certificate refuted by a changing law, an adversarial one holding) "
                          "and offpolicy (logged wine data: estimates and replicable decisions), from one command",
                          formatter_class=_Help)
    demo.add_argument("demo", choices=[*DEMOS, "offpolicy"], help="which demo")
    demo.add_argument("--quick", action="store_true", help="small sizes: 1.5-6 s (start-up included) instead of coin 30 s, phases 15 s, lazy-leader "
                      "3 s, bandit-coin 20 s, adversarial-bandit 50 s, offpolicy 13 s")
    _common(demo, seed_help="the demo's seed")
    demo.add_argument("--json", metavar="PATH", help="write the table and settings as JSON (- for standard output, the summary then on standard error)")
    demo.add_argument("--plot", metavar="PATH", help="save the demo's plot (.png, .svg or .pdf)")
    demo.set_defaults(func=cmd_demo)
    add_offpolicy(sub, _Help)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    started()  # this process runs the command: one a user's code forks from it writes nothing (outputs.only_the_starter)
    args = parser().parse_args(argv)
    args.stdout = sys.stdout
    try:
        output_options(args)  # '' and 'folder/' refused before any work; --json /dev/stdout is --json -
        # --json -: the document alone on standard output, everything else printed on standard error
        to_stderr = (contextlib.redirect_stdout(sys.stderr) if getattr(args, "json", None) == STDOUT
                     else contextlib.nullcontext())
        with warnings.catch_warnings(), to_stderr:
            warnings.simplefilter("default", ReplifyWarning)  # each warning once
            warnings.showwarning = lambda message, category, *a, **k: print(  # one line, no source echo
                f"replify: warning: {message}", file=sys.stderr
            )
            code = args.func(args)
        only_the_starter("exiting")
        return code
    except BrokenPipeError:  # the reader went away (``replify list | head``): nothing to say
        only_the_starter("exiting")
        sys.stderr.close()
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C, or a user's file interrupted as it was imported (the message says which)
        only_the_starter("reporting the interruption")
        print("replify: interrupted" + (f": {exc}" if str(exc) else ""), file=sys.stderr)
        return 130
    except (ReplifyError, OSError) as exc:
        # Only replify's own errors (and the system's: a full disk, a missing file) become one line;
        # anything else is a bug somewhere and keeps its traceback.
        only_the_starter("reporting its error")
        if args.traceback:
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"replify: error: {one_line(str(message))}", file=sys.stderr)
        return 2


__all__ = ["SPREAD", "main", "parser"]

