"""Every exception and warning replify raises, in one place (docs/errors.md).

Each error subclasses the built-in a caller would naturally catch (``ValueError``,
``TypeError``, ``KeyError``, ``ImportError``), and every message names the argument,
what was expected and what came.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings


class ReplifyError(Exception):
    """Base class of every replify error."""


class InvalidArgumentError(ReplifyError, ValueError):
    """An argument has the right type but a value outside what is accepted."""


class ArgumentTypeError(ReplifyError, TypeError):
    """An argument of the wrong type, reported at the public boundary (typeguard)."""


class CostError(InvalidArgumentError):
    """A cost vector or cost matrix that is NaN, infinite, of the wrong shape or out of range."""


class HorizonError(InvalidArgumentError):
    """More updates than the learner's horizon, or cost sequences of the wrong length."""


class ActionError(InvalidArgumentError):
    """A learner returned an action that is not a valid action for its problem."""


class LearnerProtocolError(ReplifyError, TypeError):
    """A learner factory that is not callable, or returns an object without act()/update()."""


class UnknownNameError(ReplifyError, KeyError):
    """No learner or adversary is registered under the requested name.

    The message lists the known names. ``str()`` gives the message itself rather than
    ``KeyError``'s quoted repr, so it reads well in tracebacks and on the command line.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class DuplicateNameError(ReplifyError, ValueError):
    """Two plugins registered a learner (or an adversary) under the same name."""


class SweepLockedError(ReplifyError, RuntimeError):
    """Another sweep is writing the same results file."""


class OutputPathError(InvalidArgumentError):
    """An output path that cannot be written, checked before any work starts."""


class PluginLoadError(ReplifyError, ImportError):
    """A plugin failed to load while strict plugin loading is on (``REPLIFY_STRICT_PLUGINS=1``)."""


class MissingExtraError(ReplifyError, ImportError):
    """An optional feature needs a package that is not installed; the message names the extra
    (``pip install 'replify[data]'``) that brings it."""


class ReplifyWarning(UserWarning):
    """Base class of every replify warning."""


class BlockSizeWarning(ReplifyWarning):
    """The block size reaches the horizon: the learner plays a single block."""


class ReplicabilityWarning(ReplifyWarning):
    """The parameters in force do not certify the ρ that was passed (their proof's bound is
    larger); ``params.certified`` is False and every report says so."""


class ResultsFileWarning(ReplifyWarning):
    """Damaged lines of a results file were set aside (never deleted)."""


class PlotDataWarning(ReplifyWarning):
    """Rows, reports or points a figure cannot draw (NaN where a number belongs) were left out of
    it, each named."""


class SmallSampleWarning(ReplifyWarning):
    """An asymptotic (normal) interval on too few effective rows for the central limit theorem to
    hold: the message names the effective sample size and what the rule of thumb needs."""


class PluginLoadWarning(ReplifyWarning):
    """A plugin failed to load; the others keep working."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _internal_dirs() -> tuple[str, ...]:
    """replify's own folders: the core, and the built-in plugins (installed as replify_plugins)."""
    plugins = sys.modules.get("replify_plugins")
    extra = getattr(plugins, "__file__", None)
    return (_PACKAGE_DIR + os.sep,) + ((os.path.dirname(os.path.abspath(extra)) + os.sep,) if extra else ())


@functools.lru_cache(maxsize=1024)
def _inside(filename: str, dirs: tuple[str, ...]) -> bool:
    return os.path.abspath(filename).startswith(dirs)


def warn(message: str, category: type[Warning]) -> None:
    """Warn with the location of the first caller outside replify and its built-in plugins, so
    that the warning points at the user's line, however deep inside it was raised."""
    dirs = _internal_dirs()
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is warn()'s caller
    while frame is not None and _inside(frame.f_code.co_filename, dirs):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class DeclarationError(InvalidArgumentError):
    """What an adversary declares for the engine's shortcuts (``iid``, ``law_changes``,
    ``cost_bounds``, ``expected_sums``) is contradicted by its own draws: the block-sum paths and
    the pseudo-regret would be computed on a law that is not the adversary's."""
