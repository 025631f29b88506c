"""A sweep's configurations (:func:`grid`): its learners (:class:`LearnerEntry`, each a label, what
:func:`~replify.evaluate` is given and its overrides), each adversary's parameters checked before
any row runs, and each row's key and seed — a function of the sweep seed and the configuration
only, never of its position in the grid."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from typing import Any, Mapping, Sequence

import attrs

from replify.base.checks import check_int, check_step_size
from replify.engine import limits
from replify.errors import ArgumentTypeError, InvalidArgumentError
from replify.plugins.factory import accepts
from replify.sources import LearnerArg, adversary_arg, learner_arg, merged_params
from replify.evaluation.provenance import jsonable
from replify.experiments.learner_code import code_of



def row_key(config: Mapping[str, Any]) -> str:
    """The configuration as canonical JSON: identifies a row in a results file."""
    return json.dumps(jsonable(config), sort_keys=True)


def row_seed(seed: int, config: Mapping[str, Any]) -> int:
    """The row's seed: a function of the sweep seed and the configuration only."""
    digest = hashlib.sha256(f"{seed}|{row_key(config)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")

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
