"""Cumulative costs, the only thing the paper's block algorithms read (docs/evaluation.md)."""

from __future__ import annotations

import numpy as np


def running_sums(start: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """``(rows + 1, n)``: ``start``, ``start + c_1``, ``start + c_1 + c_2``, …

    ``np.cumsum`` accumulates sequentially, so every row is the same sequence of float
    additions as ``total += c`` once per step: a learner's batch ``run`` built on this is
    bit-identical to stepping it.
    """
    sums = np.empty((costs.shape[0] + 1, costs.shape[1]))
    sums[0], sums[1:] = start, costs
    return np.cumsum(sums, axis=0, out=sums)
