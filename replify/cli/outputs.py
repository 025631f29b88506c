"""What the command line writes, checked before any work: nothing a user gave or wrote is lost
(docs/evaluation.md, "Files").

An output path (``--json``, ``--plot``, a sweep's results file) is refused when it is

* one of the run's inputs — the learner's or adversary's own source file, a data file or a config
  named in the parameters (links and second names of one file resolved);
* not a regular file: a FIFO, a terminal, ``/dev/null`` or ``/dev/stdout`` would be replaced by a
  regular file (written whole, then renamed into place) or would block; ``--json -`` writes to
  standard output instead, and the printed summary then goes to standard error;
* an existing file that replify did not write (a JSON document of replify's, a figure, a
  results file), or another output of the same command.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from replify._version import __version__
from replify.base.checks import check_output_path, same_file
from replify.errors import OutputPathError
from replify.experiments.sweeps import check_results_file
from replify.base.files import atomic_write
from replify.plots import PLOT_SUFFIXES, require_matplotlib
from replify.base.references import is_reference

#: ``--json -``: the document goes to standard output.
STDOUT = "-"

#: Top-level keys of the JSON documents replify's commands wrote before they carried
#: ``replify_version`` (a demo's, a stress search's, a calibration's): such a file is still replify's.
_LEGACY_DOCUMENTS = (
    frozenset({"demo", "note", "rows", "settings"}),
    frozenset({"budget", "candidates", "horizon", "learner", "n", "pairs_used", "rho", "worst"}),
)

#: Files larger than this are not read to decide whether they are replify's (a report of a million
#: pairs is far smaller): such a file is not replaced.
_LARGEST_READ = 1 << 30

#: How the first bytes of a figure replify saved (through matplotlib) begin, by suffix, and the
#: mark matplotlib leaves in it.
_FIGURE_MARKS = {".png": b"Matplotlib", ".pdf": b"Matplotlib", ".svg": b"Matplotlib"}


def is_replify_json(path: Path) -> bool:
    """Whether ``path`` holds a JSON document a replify command wrote: a report (its
    ``provenance`` names replify), or a document carrying ``replify_version``."""
    try:
        if os.path.getsize(path) > _LARGEST_READ:
            return False
        with open(path, "rb") as fh:
            data = json.loads(fh.read())
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    if not isinstance(data, dict):
        return False
    provenance = data.get("provenance")
    return ("replify_version" in data or (isinstance(provenance, dict) and "replify" in provenance)
            or frozenset(data) in _LEGACY_DOCUMENTS)


def is_replify_figure(path: Path) -> bool:
    """Whether ``path`` holds a figure saved by matplotlib (as every replify figure is): its first
    or last 64 KiB carry matplotlib's mark (a PNG's text chunk, an SVG's comment near the start; a
    PDF's producer in its information dictionary, which may sit at the end)."""
    mark = _FIGURE_MARKS.get(path.suffix.lower())
    if mark is None:
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
            fh.seek(max(0, path.stat().st_size - (1 << 16)))
            tail = fh.read(1 << 16)
    except OSError:
        return False
    return mark in head or mark in tail


def input_files(objects: Iterable[Any] = (), params: Iterable[Any] = (), references: Iterable[Any] = ()) -> list[Path]:
    """The files a run reads: the source files of ``objects`` (a user's learner and adversary),
    the files that ``references`` (``"path/file.py:Name"``) name, and every string in ``params``
    (nested in lists and dicts too) that names an existing file (a data file, a config)."""
    found: list[Path] = []
    for obj in objects:
        source = _source_file(obj)
        if source is not None:
            found.append(source)
    for ref in references:
        if is_reference(ref):
            where = ref.rpartition(":")[0]
            if where.endswith(".py"):
                found.append(Path(where))
    for value in _strings(list(params)):
        if os.path.isfile(value):
            found.append(Path(value))
    return found


def say_outside_files(command: str, references: Iterable[Any], home: Path | None = None,
                      who: str = "the command", where: str = "the working folder") -> None:
    """``"file.py:Name"`` references to files outside ``home`` (by default the working folder),
    named on stderr before any is imported: importing a file runs its code, and a command typed (or
    a config copied) from elsewhere should not run code from elsewhere without a word."""
    home = (home or Path.cwd()).resolve()
    outside: dict[Path, str] = {}  # each file once, as first written
    for ref in references:
        if not is_reference(ref):
            continue
        file_ref = ref.rpartition(":")[0]
        if not file_ref.endswith(".py"):
            continue  # a module reference: imported as any installed package is
        try:
            file = Path(file_ref).expanduser().resolve()
        except (OSError, ValueError):  # a NUL byte, say: loading the reference refuses it, in its words
            continue
        if not file.is_relative_to(home):
            outside.setdefault(file, f"{file_ref} ({file})" if str(file) != file_ref else file_ref)
    if outside:
        many = len(outside) > 1
        print(f"replify {command}: {who} imports {len(outside)} file{'s' if many else ''} from outside {where} {home}, "
              f"which runs {'their' if many else 'its'} code: {', '.join(outside.values())}", file=sys.stderr)


def _source_file(obj: Any) -> Path | None:
    if isinstance(obj, str) or obj is None:
        return None
    inner = getattr(obj, "func", obj)  # a functools.partial's function
    try:
        source = inspect.getsourcefile(inner if inspect.isclass(inner) or inspect.isroutine(inner) else type(inner))
    except (TypeError, OSError):
        return None
    return Path(source) if source and os.path.isfile(source) else None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


#: The standard streams under the names a shell gives them: ``--json /dev/stdout`` is ``--json -``.
_STANDARD_OUTPUT = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
_STANDARD_ERROR = ("/dev/stderr", "/dev/fd/2", "/proc/self/fd/2")


def output_options(args: argparse.Namespace) -> None:
    """The output options as typed (``--json``, ``--plot``, ``--output``), checked before anything
    runs: an empty path is refused (it would write nothing, silently), as is a path ending in a
    separator (a folder: replify writes files); ``--json /dev/stdout`` is ``--json -`` (the document
    on standard output, the summary on standard error), and standard error is refused for it."""
    for option in ("json", "plot", "output"):
        value = getattr(args, option, None)
        if value is None:
            continue
        flag = f"--{option}"
        what = "a file path, or - for standard output" if option == "json" else "a file path"
        if value == "":
            raise OutputPathError(f"{flag} needs {what}; got an empty string")
        if option == "json" and value == STDOUT:
            continue
        if value.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
            raise OutputPathError(
                f"{flag} {value!r} ends in a path separator, so it names a folder; expected {what} "
                f"(such as {value.rstrip(os.sep + (os.altsep or '')) or '.'}{os.sep}"
                f"{ {'json': 'report.json', 'plot': 'figure.png', 'output': 'results.jsonl'}[option]})"
            )
        if option == "json" and value in _STANDARD_OUTPUT:
            args.json = STDOUT
        elif option == "json" and value in _STANDARD_ERROR:
            raise OutputPathError(
                f"--json {value!r} is standard error; expected {what}: --json - writes the document to standard output "
                "and the summary to standard error"
            )


#: The process that runs the command (:func:`started`): a process forked from it by a user's code
#: that goes on running the command must not write its output too.
_STARTED: list[int] = []


def started() -> None:
    """Record this process as the one that runs the command (``main`` calls it first)."""
    _STARTED[:] = [os.getpid()]


def only_the_starter(doing: str) -> None:
    """Called before the command writes its output or its error, and before it exits: in a process
    that a learner's or adversary's code forked (``os.fork()``, at import or as it ran) and that went
    on running replify's command, say so in one line and end that process at once (``os._exit``: no
    output of its own, none of the buffers it inherited flushed, no exit handlers), so that only the
    process that started writes the output."""
    if _STARTED and os.getpid() != _STARTED[0]:
        line = (f"replify: error: process {os.getpid()} was forked from replify's process {_STARTED[0]} by the learner's "
                f"or adversary's code (os.fork) and went on running the command; it stops here, without {doing}: only "
                "the process that started writes the output (a child a learner forks must end itself, with os._exit)\n")
        try:
            os.write(2, line.encode("utf-8", "replace"))
        finally:
            os._exit(2)


def check_outputs(args: argparse.Namespace, plot: Any = None, output: Any = None, *, inputs: Iterable[Path] = (),
                  output_option: str = "--output", plot_option: str = "--plot", config: Any = None) -> None:
    """Every output path of a command checked before any work (module docstring): a long run
    never ends in a refusal, and no output replaces an input, a file replify did not write, or
    another output of the same command."""
    inputs = [*inputs, *([config] if config else [])]
    named: list[tuple[str, Any]] = [("the config file", config)] if config else []
    json_path = getattr(args, "json", None)
    if json_path and json_path != STDOUT:
        check_output_path(json_path, what="--json", inputs=inputs, ours=is_replify_json, kind="JSON document")
        named.append(("--json", json_path))
    for value in (getattr(args, "plot", None), plot):
        if value:
            check_output_path(value, what=plot_option, suffixes=PLOT_SUFFIXES, inputs=inputs, ours=is_replify_figure,
                              kind="figure")
            require_matplotlib(plot_option)
            named.append((plot_option, value))
            break  # --plot given on the command line replaces the config's plot
    if output:
        check_output_path(output, what=output_option, inputs=[i for i in inputs if i != config], kind="results file")
        named.append((output_option, output))
    for i, (what, value) in enumerate(named):
        for other_what, other in named[:i]:
            if same_file(value, other):
                raise OutputPathError(
                    f"{what} {str(value)!r} and {other_what} {str(other)!r} are the same file; expected different "
                    f"files: {what} would overwrite {other_what}"
                )
    if output:  # after the clashes: "--output is the config" says more than "the config is not results"
        check_results_file(output, what=output_option)


def write_json(args: argparse.Namespace, document: Mapping[str, Any]) -> None:
    """``document`` as JSON at ``--json`` (written whole, or not at all), or on standard output for
    ``--json -``. A document other than a report (which names replify in its provenance) carries
    ``replify_version``, so that a later run recognises the file as replify's to replace."""
    only_the_starter("writing its output")
    if not args.json:
        return
    if "provenance" not in document:
        document = {**document, "replify_version": __version__}
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if args.json == STDOUT:
        stdout = getattr(args, "stdout", None) or sys.stdout
        stdout.write(text)
        stdout.flush()
    else:
        atomic_write(args.json, text, what="--json")


__all__ = ["STDOUT", "check_outputs", "input_files", "is_replify_figure", "is_replify_json", "only_the_starter",
           "output_options", "started", "write_json"]
