"""What a group of pairs produced (:class:`Outcomes`), and the cost sums every path shares."""

from __future__ import annotations

from typing import Any, Sequence

import attrs
import numpy as np


@attrs.frozen(eq=False)
class Outcomes:
    """Per pair: both runs identical, fraction of agreeing steps, first divergent step (1-based,
    0 if none), and the two runs' regrets; plus the first learner's parameters, if any; the
    per-segment disagreement counts (summed over pairs), and for block learners the drift
    between the pair's two cost draws at sampled transitions. No claims: the report sets these
    beside the bounds."""

    identical: np.ndarray
    agreement: np.ndarray
    first_divergence: np.ndarray
    regret: np.ndarray
    params: dict[str, Any] | None
    fast_path: bool
    agree_steps: np.ndarray  # per time bin: pair-steps on which the two runs agree
    bin_edges: np.ndarray
    action_counts: np.ndarray | None = None  # experts: (pairs, 2, n) steps each run played each expert
    constant_regret: np.ndarray | None = None  # experts: (pairs, 2) mean expert cost - best expert cost
    disagreement: np.ndarray | None = None  # per segment (block, or step): pairs whose runs differ there
    segment: int = 1  # steps per segment: the block size for block learners, else 1
    drift_steps: np.ndarray | None = None  # block learners: sampled transitions t = kB
    drift: np.ndarray | None = None  # (pairs, len(drift_steps), 2): ||c_{1:t} - c'_{1:t}||_1 and its range
    pseudo_regret: np.ndarray | None = None  # (pairs, 2): against the best mean, when the adversary knows its means
    curve_steps: np.ndarray | None = None  # the checkpoints of regret_curve
    regret_curve: np.ndarray | None = None  # (pairs, 2, checkpoints): the regret at each checkpoint
    #: (low, high): the range the engine held every cost to (the learner's declared domain, checked
    #: on every path), when finite; what bounds the regrets (Report.cost_range)
    cost_range: tuple[float, float] | None = None

    @classmethod
    def concatenate(cls, parts: Sequence[Outcomes]) -> Outcomes:
        return cls(
            identical=np.concatenate([p.identical for p in parts]),
            agreement=np.concatenate([p.agreement for p in parts]),
            first_divergence=np.concatenate([p.first_divergence for p in parts]),
            regret=np.concatenate([p.regret for p in parts]),
            params=parts[0].params,
            fast_path=parts[0].fast_path,
            agree_steps=np.sum([p.agree_steps for p in parts], axis=0),
            bin_edges=parts[0].bin_edges,
            action_counts=None if parts[0].action_counts is None else np.concatenate([p.action_counts for p in parts]),
            constant_regret=None if parts[0].constant_regret is None else np.concatenate([p.constant_regret for p in parts]),
            disagreement=_sum_counts([p.disagreement for p in parts]),
            segment=parts[0].segment,
            drift_steps=parts[0].drift_steps,
            drift=None if parts[0].drift is None else np.concatenate([p.drift for p in parts]),
            pseudo_regret=None if parts[0].pseudo_regret is None else np.concatenate([p.pseudo_regret for p in parts]),
            curve_steps=parts[0].curve_steps,
            regret_curve=None if parts[0].regret_curve is None else np.concatenate([p.regret_curve for p in parts]),
            cost_range=parts[0].cost_range,
        )

    @property
    def agreement_curve(self) -> np.ndarray:
        """Per time bin, the fraction of (pair, step) with both runs playing the same action."""
        return self.agree_steps / (np.diff(self.bin_edges) * self.identical.size)


def _sum_counts(counts: list) -> np.ndarray | None:
    present = [c for c in counts if c is not None]
    if not present:
        return None
    total = present[0].copy()
    for c in present[1:]:
        total += c
    return total


def step_costs(actions: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """cost(a_t, c_t) for every step (and lane): c_t(a_t) for expert indices, a_t·c_t for
    action vectors. One implementation, used by the engine and by the reference in the tests."""
    if actions.ndim == costs.ndim - 1:
        return np.take_along_axis(costs, actions[..., None], axis=-1)[..., 0]
    return (actions * costs).sum(axis=-1)


def accumulate(start: np.ndarray, increments: np.ndarray) -> np.ndarray:
    """``start + Σ increments`` along the last axis, added one step at a time (np.cumsum is
    sequential), so a total does not depend on how time was cut into chunks."""
    stacked = np.concatenate([start[..., None], increments], axis=-1)
    return np.cumsum(stacked, axis=-1)[..., -1]
