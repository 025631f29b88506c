"""replify's version, from the installed distribution's metadata (the ground floor: it imports
nothing of replify's, so every layer may read it at module level)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("replify")
except PackageNotFoundError:  # running from a checkout that is not installed
    __version__ = "0+unknown"
