"""The doubling trick's epochs (Cesa-Bianchi & Lugosi, *Prediction, Learning, and Games*, 2006,
§2.3): epoch m = 0, 1, 2, … covers the 1-based steps 2^m … 2^{m+1} − 1, and a learner restarted at
every epoch with the rate tuned for 2^m steps pays at most :data:`DOUBLING_FACTOR` times its
known-horizon √T bound. Used by ``ewa-doubling`` and ``exp3-doubling``."""

from __future__ import annotations

import math

#: √2/(√2 − 1): Σ_{m ≤ log2 T} √(2^m) ≤ this · √T.
DOUBLING_FACTOR = math.sqrt(2.0) / (math.sqrt(2.0) - 1.0)


def epoch_of(step: int) -> int:
    """The doubling epoch of 1-based step t: m with 2^m ≤ t < 2^{m+1}."""
    return step.bit_length() - 1
