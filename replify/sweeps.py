"""Sweeps: :func:`evaluate` over a grid of (learner, adversary, T, n, ρ, block-size multiplier),
one tidy row per configuration, written to JSONL as each row finishes, resumable.

Every row carries its configuration, its seed and replify's version. A row's seed is derived
from the sweep seed and the configuration itself (not its position), and rows are written in
grid order with sorted keys and no timestamps: a sweep interrupted half way and run again skips
the finished rows and leaves exactly the file an uninterrupted run would have written.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import attrs
import numpy as np

from .checks import check_int, public
from .errors import InvalidArgumentError
from .evaluation import evaluate
from .plugins import registry


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def row_key(config: Mapping[str, Any]) -> str:
    """The configuration as canonical JSON: identifies a row in a results file."""
    return json.dumps(_jsonable(config), sort_keys=True)


def row_seed(seed: int, config: Mapping[str, Any]) -> int:
    """The row's seed: a function of the sweep seed and the configuration only."""
    digest = hashlib.sha256(f"{seed}|{row_key(config)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@attrs.frozen(eq=False)
class SweepResult:
    """The rows of a sweep, in grid order: dicts with ``config``, ``seed``, ``replify_version``
    and the report's ``to_dict()`` under ``report``."""

    rows: list[dict[str, Any]]

    def records(self) -> list[dict[str, Any]]:
        """Flat rows: the configuration's fields and the report's scalar summaries."""
        out = []
        for row in self.rows:
            flat = dict(row["config"]) | {"seed": row["seed"], "replify_version": row["replify_version"]}
            for key, value in row["report"].items():
                if key in ("rho_ci", "regret_ci"):
                    flat[f"{key}_low"], flat[f"{key}_high"] = value
                elif key not in ("params", "agreement_curve", "seed"):
                    flat[key] = value
            params = row["report"].get("params") or {}
            flat["block_size"] = params.get("block_size")
            flat["eps"] = params.get("eps")
            out.append(flat)
        return out

    def to_pandas(self) -> Any:
        """The flat rows as a pandas DataFrame (pandas is not a dependency of replify)."""
        try:
            import pandas as pd
        except ImportError:
            raise InvalidArgumentError("to_pandas() needs pandas: pip install pandas") from None
        return pd.DataFrame.from_records(self.records())


def grid(
    *,
    learners: Sequence[str],
    adversaries: Sequence[str],
    horizons: Sequence[int],
    ns: Sequence[int],
    rhos: Sequence[float | None] = (None,),
    block_multipliers: Sequence[float] = (1.0,),
    adversary_params: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The configurations of a sweep, in order. A learner without theorem parameters (a
    baseline) runs once per (adversary, T, n), with no ρ and no block-size multiplier."""
    configs, seen = [], set()
    for learner, adversary, T, n, rho, mult in itertools.product(learners, adversaries, horizons, ns, rhos, block_multipliers):
        spec = registry().learner(learner)
        takes_rho = spec.parameters is not None or spec.guarantee is not None
        if takes_rho and rho is None:
            raise InvalidArgumentError(f"learner {learner!r} needs rho: give the sweep a list of rhos")
        config = {
            "learner": learner, "adversary": adversary, "horizon": int(T), "n": int(n),
            "rho": float(rho) if takes_rho else None,
            "block_multiplier": float(mult) if spec.parameters is not None else None,
            "adversary_params": _jsonable(dict((adversary_params or {}).get(adversary, {}))),
        }
        key = row_key(config)
        if key not in seen:
            seen.add(key)
            configs.append(config)
    return configs


def _read_done(path: Path) -> dict[str, dict[str, Any]]:
    """Finished rows of an earlier run; a last line cut short by an interruption is dropped."""
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    lines = path.read_text().splitlines(keepends=True)
    good = 0
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break
        if not line.endswith("\n"):
            break
        done[row_key(row["config"])] = row
        good += len(line)
    if good != sum(len(line) for line in lines):  # drop a torn last line
        with path.open("r+") as fh:
            fh.truncate(good)
    return done


def _run_row(config: Mapping[str, Any], *, seed: int, pairs: int, evaluate_kw: Mapping[str, Any]) -> dict[str, Any]:
    from . import __version__

    spec = registry().learner(config["learner"])
    extra: dict[str, Any] = {}
    if config["block_multiplier"] is not None:
        theorem = spec.parameters(horizon=config["horizon"], n=config["n"], rho=config["rho"])
        extra["block_size"] = max(1, min(config["horizon"], round(config["block_multiplier"] * theorem.block_size_theorem)))
    s = row_seed(seed, config)
    report = evaluate(
        config["learner"], config["adversary"], n=config["n"], horizon=config["horizon"], pairs=pairs, seed=s,
        rho=config["rho"], adversary_params=config["adversary_params"] or None, **extra, **evaluate_kw,
    )
    return {"config": dict(config), "seed": s, "replify_version": __version__, "report": _jsonable(report.to_dict())}


@public
def sweep(
    *,
    learners: Sequence[str],
    adversaries: Sequence[str],
    horizons: Sequence[int],
    ns: Sequence[int],
    pairs: int,
    seed: int,
    rhos: Sequence[float | None] = (None,),
    block_multipliers: Sequence[float] = (1.0,),
    adversary_params: Mapping[str, Mapping[str, Any]] | None = None,
    path: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    **evaluate_kw: Any,
) -> SweepResult:
    """Evaluate every configuration of the grid (see :func:`grid`) with ``pairs`` pairs.

    ``block_multipliers`` scale each learner's theorem block size (the ρ̂-against-block-size
    curve). With ``path``, each row is appended to that JSONL file as soon as it finishes, and
    rows already in the file are not recomputed. ``evaluate_kw`` (``n_jobs``, ``backend``,
    ``fast_path``, …) are passed to :func:`evaluate`.
    """
    pairs = check_int("pairs", pairs, minimum=2)
    configs = grid(
        learners=learners, adversaries=adversaries, horizons=horizons, ns=ns, rhos=rhos,
        block_multipliers=block_multipliers, adversary_params=adversary_params,
    )
    out = Path(path) if path is not None else None
    done = _read_done(out) if out is not None else {}
    rows = []
    for i, config in enumerate(configs):
        key = row_key(config)
        row = done.get(key)
        if row is None:
            row = _run_row(config, seed=seed, pairs=pairs, evaluate_kw=evaluate_kw)
            if out is not None:
                with out.open("a") as fh:
                    fh.write(json.dumps(row, sort_keys=True) + "\n")
        rows.append(row)
        if progress is not None:
            progress(i + 1, len(configs))
    return SweepResult(rows)
