"""The ``"switching-bernoulli"`` adversary: piecewise-stationary Bernoulli costs. The horizon is
cut into pieces; within piece j, expert a costs ``scale`` with probability ``means[j, a]``.
An oblivious adversary that changes the distribution at fixed times (paper §2)."""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import ChunkedSequence, check_scale, check_sizes
from replify.base.checks import as_float_array, as_int_array
from replify.errors import InvalidArgumentError


class SwitchingBernoulli(ChunkedSequence):
    """``means`` has shape (pieces, n); ``switch_at`` are the steps (increasing, in 1..T−1)
    after which the next piece starts — by default the pieces have equal lengths."""

    def __init__(
        self, *, n: int, horizon: int, rng: np.random.Generator, means: Any,
        switch_at: Any = None, scale: float = 1.0,
    ) -> None:
        self.n, self.horizon = check_sizes(n, horizon)
        if np.asarray(means).dtype.kind == "b":
            raise InvalidArgumentError(f"means must be numbers in [0, 1], not booleans; got {means!r}")
        m = as_float_array("means", means)
        if m.ndim != 2 or m.shape[1] != n or m.shape[0] == 0:
            raise InvalidArgumentError(f"means must have shape (pieces, {n}) with entries in [0, 1]; got shape {m.shape}")
        if not (np.isfinite(m).all() and m.min() >= 0 and m.max() <= 1):
            raise InvalidArgumentError(f"means must have shape (pieces, {n}) with entries in [0, 1]; got {m.tolist()}")
        pieces = m.shape[0]
        if switch_at is None:
            cuts = np.linspace(0, horizon, pieces + 1).round().astype(np.int64)[1:-1]
        else:
            cuts = as_int_array("switch_at", switch_at).reshape(-1)  # step 2.5 is refused, not read as 2
            if cuts.size != pieces - 1 or np.any(np.diff(cuts) <= 0) or (cuts.size and (cuts[0] < 1 or cuts[-1] >= horizon)):
                raise InvalidArgumentError(
                    f"switch_at must be {pieces - 1} increasing steps in [1, {horizon - 1}]; got {np.asarray(switch_at).tolist()}"
                )
        self.means = m.copy()
        self.bounds = np.concatenate([[0], cuts, [horizon]])  # piece j covers steps bounds[j]+1..bounds[j+1]
        self.scale = check_scale(scale)
        self.integer_costs = self.scale == 1.0
        # piecewise iid: the law is the same at every step between these (0-based) steps, and every
        # cost is 0 or scale (the engine's block-sum path for batched bandit learners relies on both)
        self.law_changes = tuple(int(c) for c in cuts)
        self.cost_bounds = (min(0.0, self.scale), max(0.0, self.scale))

    def _means_rows(self, start: int, stop: int) -> np.ndarray:
        piece = np.searchsorted(self.bounds, np.arange(start, stop), side="right") - 1
        return self.means[piece]

    def sample_chunk(self, rng: np.random.Generator, start: int, stop: int) -> np.ndarray:
        return (rng.random((stop - start, self.n)) < self._means_rows(start, stop)) * self.scale

    def arm_law(self, start: int, stop: int) -> tuple[str, np.ndarray, float]:
        """Every arm's law at steps start+1..stop, the arms independent (the engine then draws only
        the cost a bandit learner plays: replify.engine.played): Bernoulli of the piece's means,
        times scale — one row when the steps lie in one piece."""
        first, last = np.searchsorted(self.bounds, [start, stop - 1], side="right") - 1
        return "bernoulli", self.means[first][None, :] if first == last else self._means_rows(start, stop), self.scale

    def sample_sums(self, rng: np.random.Generator, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """Exact: a segment's sum is a sum of Binomials, one per piece it overlaps. Only the
        segments a piece overlaps are drawn (segments come in increasing order), so many pieces
        and many segments cost O(pieces + segments), not their product."""
        starts, stops = np.asarray(starts), np.asarray(stops)
        out = np.zeros((len(starts), self.n))
        ordered = starts.size < 2 or bool(np.all(np.diff(starts) >= 0) and np.all(np.diff(stops) >= 0))
        for j in range(self.means.shape[0]):  # a loop over pieces
            lo, hi = self.bounds[j], self.bounds[j + 1]
            first, last = (int(np.searchsorted(stops, lo, side="right")), int(np.searchsorted(starts, hi, side="left"))) \
                if ordered else (0, starts.size)
            if first >= last:
                continue
            overlap = np.clip(np.minimum(stops[first:last], hi) - np.maximum(starts[first:last], lo), 0, None)
            out[first:last] += rng.binomial(overlap[:, None], self.means[j][None, :])
        return out * self.scale


    def expected_sums(self, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
        """The expected cost sums of the segments (starts[k], stops[k]]: each piece's means times
        the steps the segment shares with it, times ``scale``."""
        starts, stops = np.asarray(starts), np.asarray(stops)
        overlap = np.clip(np.minimum(stops[:, None], self.bounds[None, 1:]) - np.maximum(starts[:, None], self.bounds[None, :-1]),
                          0, None).astype(np.float64)
        return overlap @ self.means * self.scale


@replify.hookimpl
def register_adversaries(register):
    register(
        replify.AdversarySpec(
            "switching-bernoulli", SwitchingBernoulli,
            test_params={"n": 3, "means": [[0.2, 0.5, 0.8], [0.8, 0.5, 0.2]]},
            description="piecewise-stationary Bernoulli costs that switch means at fixed steps; draws block sums exactly",
            param_docs={
                "means": "shape (pieces, n): the probability that each expert costs `scale` in each piece",
                "switch_at": "the steps after which the next piece starts (default: equal pieces)",
                "scale": "cost of a 1 (default 1; 1/n gives l1-bounded costs)",
            },
        )
    )
