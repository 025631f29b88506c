"""The ``"local-bootstrap"`` adversary: D_t resamples the rows of a user's own cost matrix in a
window around t — so a user can audit replicability on their own data. Two draws S, S' are two
independent local bootstraps of the same data; ``window`` trades locality (time-varying
distributions, as in the paper's adversarial model) against variety.

Block sums are not drawn directly (a sum of resampled rows has no closed form): the evaluation
engine draws this adversary step by step."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_sizes
from replify.components.userdata import load_cost_matrix
from replify.base.checks import check_int
from replify.errors import InvalidArgumentError


class LocalBootstrap(ChunkedSequence):
    """Step t draws a row uniformly from rows max(1, t−window)..min(T, t+window) of ``costs``."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, costs: Any = None, path: Any = None, window: int = 50,
        name: str | None = None,
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        self.data = load_cost_matrix(costs, path, n=n, horizon=horizon)
        self.window = check_int("window", window, minimum=0)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidArgumentError(f"name must be a non-empty string (the dataset's, for figures and reports); got {name!r}")
        #: what figures call these costs (a dataset's name), instead of "local-bootstrap"
        self.name = name
        # A window of T or more already reaches every row; the same window in int64 arithmetic
        # (a window of 10**30 would overflow it), the same draws.
        self._reach = min(self.window, horizon)

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        t = np.arange(start, stop)  # 0-based rows
        lo = np.maximum(t - self._reach, 0)
        hi = np.minimum(t + self._reach, self.horizon - 1)
        rows = lo + (rng.random(t.size) * (hi - lo + 1)).astype(np.int64)
        return self.data[np.minimum(rows, hi)]


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "local-bootstrap", LocalBootstrap,
            test_params=lambda n, horizon: {"costs": np.random.default_rng(0).random((horizon, n)), "window": 5},
            description="resamples a user's cost matrix in a window around each step; drawn step by step",
            param_docs={"costs": "the user's (T, n) costs", "path": "or a .csv / .npy file", "window": "half-width in steps (default 50)",
                        "name": "the data's name, which figures show (Dataset.bootstrap() gives it)"},
        )
    )
