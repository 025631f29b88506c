"""What every lower-bound demo gives (:class:`Demo`: its rows, a readable table, JSON, its plot),
each demo's figure by name (:data:`PLOTS`), and the helpers the demos share."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import attrs

from replify.errors import InvalidArgumentError


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



#: Each demo's figure, by name (what :meth:`Demo.from_dict` plots with). Each demo's module enters
#: its own as it is imported; :mod:`replify.experiments.lower_bounds` imports them all, in this order:
#: coin, phases, lazy-leader, bandit-coin, adversarial-bandit.
PLOTS: dict[str, Callable[[Demo, Any], Any]] = {}


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



def _ticker(bar: Any, total: int) -> Callable[[], None]:
    """A callable that moves ``bar`` (None: no bar) one cell on, out of ``total``."""
    done = [0]

    def tick() -> None:
        done[0] += 1
        if bar is not None:
            bar(done[0], total)

    return tick
