"""Where replify's modules and names used to live, so that a user's ``import`` keeps working after
a restructure, with a :class:`DeprecationWarning` that names the new place (docs/api.md, "Moved
names").

Two kinds of moves are kept: a module that moved (``replify.stats`` is now
``replify.evaluation.stats``) is found by a finder on ``sys.meta_path`` that hands out the new
module itself, so ``import replify.stats`` and ``from replify.stats import x`` give the very
objects the new path gives; a name whose module became a package (``from replify.evaluation
import Report``) is found by the package's ``__getattr__`` (:func:`names_getattr`). The table is
the record of every path a user could import before: extend it when a module moves again."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from typing import Any, Callable, Mapping

#: old module -> new module
MODULES: dict[str, str] = {
    # the restructure into folders by layer
    "replify.actions": "replify.components.actions",
    "replify.bandits": "replify.components.bandits",
    "replify.blocks": "replify.components.blocks",
    "replify.cumulative": "replify.components.cumulative",
    "replify.describe": "replify.components.describe",
    "replify.doubling": "replify.components.doubling",
    "replify.grid": "replify.components.grid",
    "replify.mixtures": "replify.components.mixtures",
    "replify.adversary": "replify.components.sequences",
    "replify.userdata": "replify.components.userdata",
    "replify.provenance": "replify.evaluation.provenance",
    "replify.reportdata": "replify.evaluation.reportdata",
    "replify.sequential": "replify.evaluation.sequential",
    "replify.stats": "replify.evaluation.stats",
    "replify.audit": "replify.experiments.audit",
    "replify.calibration": "replify.experiments.calibration",
    "replify.lower_bounds": "replify.experiments.lower_bounds",
    "replify.stress": "replify.experiments.stress",
    "replify.sweeps": "replify.experiments.sweeps",
    "replify.certificates": "replify.guarantees.certificates",
    "replify.theory": "replify.guarantees.theory",
    "replify.factory": "replify.plugins.factory",
    "replify.specs": "replify.plugins.specs",
    "replify.framework": "replify.wrapper",
    # the conversions, one room
    "replify.internal_learner": "replify.conversions.internal",
    "replify.contextual_wrap": "replify.conversions.resolve",
    "replify.components.contextual_conversion": "replify.conversions.contextual",
    # the ground floor, grouped under replify.base
    "replify.checks": "replify.base.checks",
    "replify.randomness": "replify.base.randomness",
    "replify.files": "replify.base.files",
    "replify.progress": "replify.base.progress",
    "replify.references": "replify.base.references",
    # the built-in plugins, in folders by kind
    **{f"replify_plugins.{name}": f"replify_plugins.learners.{name}" for name in (
        "boa", "constant", "ewa", "fllb", "ftpl", "ftplb", "ftplb_star", "hedge", "iid_experts", "ml_poly",
        "split_commit")},
    **{f"replify_plugins.{name}": f"replify_plugins.bandits.{name}" for name in (
        "blocked_bandit", "exp3", "rep_elimination", "thompson", "ucb1")},
    **{f"replify_plugins.{name}": f"replify_plugins.adversaries.{name}" for name in (
        "bernoulli", "bootstrap", "coin", "drifting", "gaussian", "lazy_trap", "mixture", "point_mass", "signs",
        "stress", "switching")},
}

#: package that was a module -> {name it held: the module that holds it now}
NAMES: dict[str, dict[str, str]] = {
    "replify.evaluation": {
        "Report": "replify.evaluation.report", "Replay": "replify.evaluation.replay",
        "MAX_LISTED_TRANSITIONS": "replify.evaluation.report", "evaluate": "replify.evaluation.evaluate",
    },
    "replify.engine": {
        "simulate": "replify.engine.run", "play_chunk": "replify.engine.paths", "Outcomes": "replify.engine.outcomes",
        "step_costs": "replify.engine.outcomes", "accumulate": "replify.engine.outcomes",
        **{name: "replify.engine.limits" for name in (
            "MEMORY_BUDGET", "CURVE_BINS", "MAX_SEGMENTS", "DRIFT_SAMPLES", "MAX_GROUP_PAIRS", "LANE_CHUNK_BYTES",
            "WHOLE_SLICE_BYTES", "PAIR_CHUNK_BYTES")},
    },
    "replify.plugins": {
        name: "replify.plugins.registry" for name in (
            # (``registry`` itself is now the name of the module that holds it: replify.registry() is the function)
            "Hookspecs", "PluginFailure", "Registry", "learners", "adversaries", "check_pending", "hookimpl",
            "hookspec", "PROJECT", "BLOCK_ENV", "STRICT_ENV")
    },
}


def _warn(message: str) -> None:
    """A DeprecationWarning attributed to the user's line, so that Python's default filters show
    it there: this module's frames are skipped here, the import machinery's by ``warnings`` itself."""
    frame, level = sys._getframe(1), 2
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or frame.f_code.co_filename.startswith("<frozen importlib")):
        if frame.f_code.co_filename == __file__:
            level += 1
        frame = frame.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


class _Alias(importlib.abc.Loader):
    """Loads an old module name as the new module object itself (one module, two names)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(self.new)

    def exec_module(self, module: Any) -> None:
        pass  # already executed under its new name


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`MODULES` by their old names."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        new = MODULES.get(fullname)
        if new is None:
            return None
        _warn(f"{fullname} has moved to {new}; import it from there (the old name will be removed in a later release)")
        return importlib.util.spec_from_loader(fullname, _Alias(new))


class _Package(types.ModuleType):
    """replify's own module type. Importing a submodule sets it as an attribute of its package, so
    ``import replify.stress`` (an old path, now ``replify.experiments.stress``) would replace the
    function ``replify.stress`` by the module for the rest of the process, and every later
    ``replify.stress(...)`` would fail. A public function keeps its name here, as it did when the
    module lived under it (the package's ``from .stress import stress`` bound the function last)."""

    def __setattr__(self, name: str, value: Any) -> None:
        held = vars(self).get(name)
        if isinstance(value, types.ModuleType) and callable(held) and not isinstance(held, types.ModuleType):
            return
        super().__setattr__(name, value)

    def __reduce__(self) -> tuple[Callable[[str], Any], tuple[str]]:
        # A module of this class is pickled as plain modules are (by name, re-imported where it is
        # unpickled): a function or class of a user's script that refers to ``replify`` is pickled
        # by value (cloudpickle, which joblib and Dask use for ``__main__``), its globals with it,
        # and pickle knows no ModuleType subclass without this.
        return importlib.import_module, (self.__name__,)


def install(package: str = "replify") -> None:
    """Put the finder on ``sys.meta_path`` once (after the normal finders: a module that exists
    under an old name is never shadowed), and keep ``package``'s public functions from being
    shadowed by the modules that moved from their names (:class:`_Package`)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
    sys.modules[package].__class__ = _Package


def names_getattr(package: str, table: Mapping[str, str] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that hands out the names it held as a module
    (:data:`NAMES`) from where they live now, with a DeprecationWarning naming that place."""
    moved = dict(NAMES[package] if table is None else table)

    def __getattr__(name: str) -> Any:
        new = moved.get(name)
        if new is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        _warn(f"{package}.{name} has moved to {new}.{name}; import it from there (or from replify itself where it "
              "is public)")
        value = getattr(importlib.import_module(new), name)
        setattr(sys.modules[package], name, value)  # warned once: ``from p import x`` looks twice
        return value

    return __getattr__
