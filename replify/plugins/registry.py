"""The plugin system (docs/plugins.md): pluggy hooks, entry-point loading and the registry.

Plugins — the built-ins included — are found through the ``"replify"`` entry-point group and
loaded lazily, on the first lookup, never at import time. A plugin implements any of the
callback-style hooks and calls ``register(spec)`` once per learner, adversary or conversion::

    import replify

    @replify.hookimpl
    def register_learners(register):
        register(replify.LearnerSpec("my-learner", MyLearner, "experts"))

Environment variables:

* ``REPLIFY_BLOCK_PLUGINS=a,b`` — do not load the plugins (entry-point names) ``a`` and ``b``;
* ``REPLIFY_STRICT_PLUGINS=1`` — a plugin that fails to load raises
  :class:`~replify.errors.PluginLoadError` instead of a warning.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

import attrs
import pluggy

from replify.errors import ArgumentTypeError, DuplicateNameError, PluginLoadError, PluginLoadWarning, UnknownNameError, warn
from replify.plugins.specs import AdversarySpec, ConversionSpec, LearnerSpec

PROJECT = "replify"
BLOCK_ENV = "REPLIFY_BLOCK_PLUGINS"
STRICT_ENV = "REPLIFY_STRICT_PLUGINS"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Hookspecs:
    """The hooks a replify plugin may implement."""

    @hookspec
    def register_learners(self, register: Callable[[LearnerSpec], None]) -> None:
        """Call ``register(LearnerSpec(...))`` once for each learner the plugin provides."""

    @hookspec
    def register_adversaries(self, register: Callable[[AdversarySpec], None]) -> None:
        """Call ``register(AdversarySpec(...))`` once for each adversary the plugin provides."""

    @hookspec
    def register_conversions(self, register: Callable[[ConversionSpec], None]) -> None:
        """Call ``register(ConversionSpec(...))`` once for each conversion the plugin provides."""


@attrs.frozen
class PluginFailure:
    """A plugin that could not be loaded or whose hook raised: which one, from which
    distribution, and why."""

    name: str
    distribution: str
    error: str

    def __str__(self) -> str:
        return f"replify plugin {self.name!r} (distribution {self.distribution}) failed: {self.error}"


def _distribution(ep: Any) -> str:  # an EntryPoint, or anything with its name/load/dist
    dist = getattr(ep, "dist", None)
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown"


def _strict() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def _blocked() -> set[str]:
    return {name.strip() for name in os.environ.get(BLOCK_ENV, "").split(",") if name.strip()}


class Registry:
    """A pluggy plugin manager and the learners and adversaries its plugins register.

    ``entry_points`` are the entry points to load on first lookup (by default the installed
    ``"replify"`` group; pass ``()`` for an empty registry, as the tests do). Plugins may also
    be added and removed by hand with :meth:`register` and :meth:`unregister`.
    """

    def __init__(self, entry_points: Iterable[Any] | None = None) -> None:
        self.manager = pluggy.PluginManager(PROJECT)
        self.manager.add_hookspecs(Hookspecs)
        self._entry_points = entry_points
        self._loaded = False
        self._load_failures: list[PluginFailure] = []
        self._tables: tuple[dict[str, LearnerSpec], dict[str, AdversarySpec], list[PluginFailure],
                            dict[str, ConversionSpec]] | None = None
        self._distributions: dict[str, str] = {}
        self._tried: set[str] = set()  # entry points whose import was tried: never tried twice
        self._interrupted: set[str] = set()  # entry points whose import a KeyboardInterrupt stopped once
        self._unreported: list[tuple[PluginFailure, BaseException]] = []  # failures to report once all are tried

    # -- plugins ---------------------------------------------------------------------------
    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """Add a plugin object: a module, class or instance with hook implementations
        (``@replify.hookimpl`` functions). Anything else — 42, a spec, a learner class — is
        refused: pluggy would take it and return a name, and it would register nothing."""
        if name is not None and not isinstance(name, str):
            raise ArgumentTypeError(f"name must be a string (the plugin's name) or None; got {name!r} ({type(name).__name__})")
        if not _implements_hooks(plugin):
            text = repr(plugin)
            text = text if len(text) <= 60 else text[:57] + "..."
            what = ("; a spec is registered from a plugin's hook: register(spec) inside @replify.hookimpl def "
                    "register_learners(register)" if isinstance(plugin, (LearnerSpec, AdversarySpec))
                    else ", with no hook implementation")
            raise ArgumentTypeError(
                f"register() expects a plugin: a module, class or instance with @replify.hookimpl functions "
                f"(register_learners, register_adversaries, register_conversions); got {text} ({type(plugin).__name__}{what})"
            )
        self._tables = None
        return self.manager.register(plugin, name=name)

    def unregister(self, plugin: Any = None, name: str | None = None) -> None:
        self._tables = None
        self.manager.unregister(plugin, name=name)

    @property
    def failures(self) -> tuple[PluginFailure, ...]:
        """Plugins that failed to load, or whose hook raised, so far."""
        self._ensure()
        assert self._tables is not None
        return (*self._load_failures, *self._tables[2])

    def check_pending(self) -> None:
        """Load the plugins and raise if one implements a hook that does not exist
        (a misspelt ``register_learner``, say): pluggy's ``check_pending``."""
        self._load()
        self.manager.check_pending()

    def _fail(self, failure: PluginFailure, exc: BaseException) -> None:
        if _strict():
            raise PluginLoadError(f"{failure} (set {STRICT_ENV}=0 to load the others anyway)") from exc
        warn(f"{failure}; the other plugins keep working", PluginLoadWarning)

    def _load(self) -> None:
        if self._loaded:
            return
        # Interrupted (Ctrl-C while a slow plugin imports): the interrupt goes on, naming the
        # plugin, and the next lookup tries that plugin once more, in full (a Ctrl-C is not the
        # plugin's fault). A plugin interrupted a second time raises KeyboardInterrupt itself: it is
        # reported as failed and never tried again, so that it cannot refuse every lookup.
        self._load_all()
        self._loaded = True
        # Every plugin is tried before anything is reported, so that strict mode refuses the same
        # way on every lookup instead of leaving a registry with the later plugins missing.
        errors, self._unreported = self._unreported, []
        for failure, exc in errors:
            self._fail(failure, exc)

    def _load_all(self) -> None:
        """Load every entry point not tried or blocked yet; each failure is kept, to report once
        all are tried. Each plugin's import is tried once."""
        eps = entry_points(group=PROJECT) if self._entry_points is None else self._entry_points
        blocked = _blocked()
        for ep in eps:
            if ep.name in blocked:
                self.manager.set_blocked(ep.name)
                continue
            if ep.name in self._tried or self.manager.has_plugin(ep.name) or self.manager.is_blocked(ep.name):
                continue
            self._tried.add(ep.name)
            again = ep.name in self._interrupted
            self._distributions[ep.name] = _distribution(ep)
            try:
                self.manager.register(ep.load(), name=ep.name)
            except KeyboardInterrupt as exc:
                if self.manager.has_plugin(ep.name):
                    self.manager.unregister(name=ep.name)
                failure = PluginFailure(ep.name, _distribution(ep), "KeyboardInterrupt while it was imported, twice "
                                        "(not tried again in this process)")
                if again:  # its import raises KeyboardInterrupt itself: a broken plugin, reported like the others
                    self._load_failures.append(failure)
                    self._unreported.append((failure, exc))
                    continue
                self._interrupted.add(ep.name)
                self._tried.discard(ep.name)  # a Ctrl-C: tried once more, in full, at the next lookup
                exc.add_note(f"while importing {failure.name!r} (distribution {failure.distribution}), a replify plugin; "
                             f"block it with {BLOCK_ENV}={failure.name} if its import is what stops")
                raise
            except (Exception, SystemExit) as exc:  # a broken plugin (even one calling sys.exit) must not take the others down
                if self.manager.has_plugin(ep.name):  # all or nothing per plugin
                    self.manager.unregister(name=ep.name)
                failure = PluginFailure(ep.name, _distribution(ep), f"{type(exc).__name__}: {exc}")
                self._load_failures.append(failure)
                self._unreported.append((failure, exc))

    def _collect(self, hook_name: str, kind: type, label: str) -> tuple[dict[str, Any], list[PluginFailure]]:
        table: dict[str, Any] = {}
        owner: dict[str, str] = {}
        failures: list[PluginFailure] = []
        # Call each implementation ourselves rather than through the hook caller, so that a
        # duplicate or a failure can be pinned on the plugin that caused it.
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
            pending: dict[str, Any] = {}  # a plugin's registrations count only if its hook completes

            def register(spec: Any, _plugin: str = impl.plugin_name, _pending: dict = pending) -> None:
                if not isinstance(spec, kind):
                    raise ArgumentTypeError(f"register() expects a {kind.__name__}, got {type(spec).__name__}")
                if spec.name in table or spec.name in _pending:
                    first = owner.get(spec.name, _plugin)
                    raise DuplicateNameError(
                        f"{label} name {spec.name!r} is registered twice: by plugin {first!r} "
                        f"and by plugin {_plugin!r}; block one with {BLOCK_ENV}={_plugin}"
                    )
                _pending[spec.name] = spec

            args = {"register": register}
            try:
                impl.function(*(args[a] for a in impl.argnames))
                table.update(pending)
                owner.update(dict.fromkeys(pending, impl.plugin_name))
            except DuplicateNameError:
                raise
            except (Exception, SystemExit) as exc:
                dist = self._distributions.get(impl.plugin_name, "unknown")
                failure = PluginFailure(impl.plugin_name, dist, f"{hook_name}: {type(exc).__name__}: {exc}")
                failures.append(failure)
                self._fail(failure, exc)
        return table, failures

    def _ensure(self) -> None:
        self._load()
        if self._load_failures and _strict():  # strict mode refuses on every lookup, not only the first
            first = self._load_failures[0]
            raise PluginLoadError(f"{first} (set {STRICT_ENV}=0 to load the others anyway)")
        if self._tables is None:
            learners, lf = self._collect("register_learners", LearnerSpec, "learner")
            adversaries, af = self._collect("register_adversaries", AdversarySpec, "adversary")
            conversions, cf = self._collect("register_conversions", ConversionSpec, "conversion")
            self._tables = (learners, adversaries, lf + af + cf, conversions)

    # -- lookups ---------------------------------------------------------------------------
    def learners(self) -> Mapping[str, LearnerSpec]:
        """name → LearnerSpec, for every learner the loaded plugins register."""
        self._ensure()
        assert self._tables is not None
        return MappingProxyType(dict(sorted(self._tables[0].items())))

    def adversaries(self) -> Mapping[str, AdversarySpec]:
        """name → AdversarySpec, for every adversary the loaded plugins register."""
        self._ensure()
        assert self._tables is not None
        return MappingProxyType(dict(sorted(self._tables[1].items())))

    def conversions(self) -> Mapping[str, ConversionSpec]:
        """name → ConversionSpec, for every conversion the loaded plugins register."""
        self._ensure()
        assert self._tables is not None
        return MappingProxyType(dict(sorted(self._tables[3].items())))

    def conversion(self, name: str) -> ConversionSpec:
        return _lookup(self.conversions(), name, "conversion", "conversions")

    def learner(self, name: str) -> LearnerSpec:
        return _lookup(self.learners(), name, "learner", "learners")

    def adversary(self, name: str) -> AdversarySpec:
        return _lookup(self.adversaries(), name, "adversary", "adversaries")


def _implements_hooks(plugin: Any) -> bool:
    """Whether ``plugin`` has a function marked with :data:`hookimpl` (pluggy's own test, by the
    marker it sets), whatever its hook is named (:meth:`Registry.check_pending` catches a misspelt one)."""
    marker = f"{PROJECT}_impl"
    for attr in dir(plugin):
        try:
            value = getattr(plugin, attr, None)
        except Exception:  # noqa: BLE001 - a property that raises is no hook implementation
            continue
        if callable(value) and isinstance(getattr(value, marker, None), dict):
            return True
    return False


def _lookup(table: Mapping[str, Any], name: str, label: str, plural: str) -> Any:
    if not isinstance(name, str):  # a list would fail as unhashable, a number as merely unknown
        article = "an" if label[0] in "aeiou" else "a"
        raise ArgumentTypeError(f"{article} {label} name must be a string, got {name!r} ({type(name).__name__})")
    try:
        return table[name]
    except KeyError:
        known = ", ".join(table) or "(none: no plugin registered any)"
        raise UnknownNameError(f"no {label} named {name!r}; known {plural}: {known}") from None


_default: Registry | None = None


def registry() -> Registry:
    """The process-wide registry that :func:`replify.make`, :func:`replify.wrap` and
    :func:`replify.evaluate` look names up in."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def learners() -> Mapping[str, LearnerSpec]:
    """name → :class:`LearnerSpec` for every registered learner, built-ins and installed plugins."""
    return registry().learners()


def adversaries() -> Mapping[str, AdversarySpec]:
    """name → :class:`AdversarySpec` for every registered adversary."""
    return registry().adversaries()


def conversions() -> Mapping[str, ConversionSpec]:
    """name → :class:`ConversionSpec` for every registered conversion (what :func:`replify.wrap` builds)."""
    return registry().conversions()


def check_pending() -> None:
    """Load every plugin and raise if one implements an unknown hook (pluggy's check_pending)."""
    registry().check_pending()
