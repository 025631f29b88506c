"""Reading a log's file (:meth:`replify.offpolicy.Log.from_csv`): the header's columns checked in
one pass, binary content refused from a bounded first read, and every line read with a bound, so
that a file of NUL bytes or with no line ends is refused rather than read whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replify.errors import InvalidArgumentError


#: What a file log's header is read as, in replify's names (``columns=`` maps a team's own names to them)
NAMES = ("action", "cost", "propensity", "context")

#: The name an ignored column is read under (never a name a file can give: it holds a NUL)
IGNORED = "\0ignored"


def renamed(header: list[str], columns: Any, ignore: Any, path: Path) -> list[str]:
    """``header`` in replify's names: ``columns`` maps ``"action"``, ``"cost"`` and ``"propensity"``
    to the file's own column names and ``"context"`` to the list of its context columns (read as x0,
    x1, … in that order); the columns of ``ignore`` are read as nothing (every other column must be
    one of them, so that none is silently left out)."""
    mapping = dict(columns or {})
    unknown = sorted(set(mapping) - set(NAMES))
    if unknown:
        raise InvalidArgumentError(f"columns: {unknown} are not among {NAMES} (map replify's names to your file's: "
                                   "columns={'action': 'arm', 'cost': 'loss', 'context': ['age', 'visits']})")
    rename: dict[str, str] = {}
    for name in ("action", "cost", "propensity"):
        if name in mapping:
            if not isinstance(mapping[name], str):
                raise InvalidArgumentError(f"columns[{name!r}] must be the file's column name (a string); got "
                                           f"{mapping[name]!r}")
            rename[mapping[name]] = name
    context = mapping.get("context")
    if context is not None:
        context = per_arm_columns(context) or context
        if isinstance(context, str) or not context or not all(isinstance(c, str) for c in context):
            raise InvalidArgumentError(f"columns['context'] must be a non-empty list of the file's context column names "
                                       f"(or one such list per arm, all of one length); got {mapping['context']!r}")
        rename.update({c: f"x{j}" for j, c in enumerate(context)})
    skip = set([ignore] if isinstance(ignore, str) else (ignore or ()))
    absent = sorted((set(rename) | skip) - set(header))
    if absent:
        raise InvalidArgumentError(f"columns: the log {str(path)!r} has no column {absent[0]!r} (its header: "
                                   f"{header if len(header) <= 20 else [*header[:20], '...']})")
    return [IGNORED if h in skip else rename.get(h, h) for h in header]


def per_arm_columns(context: Any) -> list[str] | None:
    """The context's columns arm after arm where ``context`` lists one list of column names per arm
    (the per-arm features a file exports: arm a's j-th feature is x{a·d + j}, read as (rows, n, d));
    None where it is one flat list."""
    if isinstance(context, str) or not isinstance(context, (list, tuple)) or not context \
            or not all(isinstance(arm, (list, tuple)) for arm in context):
        return None
    if len({len(arm) for arm in context}) != 1 or not context[0]:
        raise InvalidArgumentError(f"columns['context']: one list of column names per arm, all of one length (each arm's "
                                   f"features); got lengths {[len(arm) for arm in context]}")
    return [c for arm in context for c in arm]


def file_columns(header: list[str], path: Path, *, propensity: bool = True) -> list[str]:
    """The context's columns ``x0``, ``x1``, … of a file log's ``header`` (in replify's names,
    :func:`renamed`), in order; the header refused unless it holds exactly action, cost, propensity
    and them, each once, besides the ignored columns (linear in the number of columns: a wide log's
    header is read at once)."""
    header = [h for h in header if h != IGNORED]
    first: dict[str, int] = {}
    for k, h in enumerate(header):
        if h in first:  # the second would silently win
            raise InvalidArgumentError(f"the log {str(path)!r} names the column {h!r} twice, as columns {first[h] + 1} "
                                       f"and {k + 1} of its header; expected each column once")
        first[h] = k
    need = {"action", "cost", "propensity"} if propensity else {"action", "cost"}
    features = [h for h in header if h.startswith("x") and h[1:].isdigit() and h[1:].isascii()]
    other = [h for h in header if h not in need and not (h.startswith("x") and h[1:].isdigit() and h[1:].isascii())]
    if not propensity and "propensity" in first:
        raise InvalidArgumentError(f"the log {str(path)!r} has a propensity column: read it (propensities='logged'), or "
                                   "leave it out with ignore= to estimate them instead")
    if not need <= first.keys() or other or not features:
        shown = header if len(header) <= 20 else [*header[:20], f"... ({len(header)} columns)"]
        hint = (" (no propensities in your log? propensities='estimate' fits a stated model: measured, not certified)"
                if propensity and "propensity" not in first else "")
        raise InvalidArgumentError(f"the log {str(path)!r} must have the columns {', '.join(sorted(need))} and x0, x1, "
                                   f"... (the context); got {shown}" + (f" ({other[0]!r} is none of them: map your "
                                   "names with columns=, or leave a column out with ignore=)" if other else "") + hint)
    index = {int(h[1:]): h for h in features}
    missing = next((j for j in range(len(features)) if j not in index), None)
    if missing is not None or any(h != f"x{int(h[1:])}" for h in features):  # x01 is not x1
        odd = next((h for h in features if h != f"x{int(h[1:])}"), None)
        raise InvalidArgumentError(f"the log {str(path)!r}'s context columns must be x0..x{len(features) - 1} with none "
                                   "missing; " + (f"x{missing} is missing" if odd is None else f"got {odd!r}"))
    return [index[j] for j in range(len(features))]


#: Bytes of a file log read first, before any parsing: binary content (a NUL byte) is refused from
#: them, so that /dev/zero or a file of zeros is not read whole as one line.
SNIFF_BYTES = 1 << 16

#: The longest physical line a CSV log may have (characters): 100 000 context columns fit many
#: times over; a file with no line ends (binary data past the first read) is refused, not read whole.
MAX_LINE = 1 << 26


def refuse_binary(head: bytes, path: Path) -> None:
    at = head.find(b"\x00")
    if at >= 0:
        raise InvalidArgumentError(f"path: the log {str(path)!r} is not a text CSV file: a NUL byte at byte {at} "
                                   "(binary data; a Parquet log is read by Log.from_parquet)")


def bounded_lines(handle: Any, path: Path) -> Any:
    """The lines of a text file, each read with a bound (:data:`MAX_LINE`)."""
    number = 0
    while True:
        line = handle.readline(MAX_LINE)
        if not line:
            return
        number += 1
        if len(line) >= MAX_LINE and not line.endswith("\n"):
            raise InvalidArgumentError(f"the log {str(path)!r}, line {number}: longer than {MAX_LINE:,} characters; "
                                       "expected a CSV file's lines")
        yield line
