"""The stress suite: oblivious adversaries built to make the two runs of a pair part.

Each is a Bernoulli adversary (costs 0/1, block sums drawn exactly), and each documents why it is
hard for a replicable learner. Two runs part when a decision at a transition depends on the draw:
for a leader-based learner, when the leader is not clear at the transition.

* ``ties`` — the first k experts have equal (``gap`` = 0) or near-equal means, so the leader among
  them is decided by the draw's noise alone at every transition: the hardest case for a perturbed
  or lazy leader, whose only defence is its noise (or grid) being wider than the drift √t.
* ``crossing`` — the means of the two best experts cross at step ``at``: before it one leads, after
  it the other, and the cumulative leader switches near the step where the cumulative costs cross —
  a step that differs between S and S' by about √T/gap.
* ``block-switch`` — the best expert alternates at steps placed against a block grid the adversary
  knows (the algorithm and its B are public; R is not): every ``every`` blocks, ``offset`` steps
  into a block. Switching just after a transition leaves the learner a whole block on the worse
  expert; switching just before one makes the transition's decision a coin flip between runs.

They are what :func:`replify.stress` searches over, with the existing ``coin`` and
``lazy-leader-trap``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import replify
from replify.components.sequences import check_sizes
from replify.base.checks import check_int, check_real
from replify.errors import InvalidArgumentError
from replify_plugins.adversaries.bernoulli import IidBernoulli
from replify_plugins.adversaries.switching import SwitchingBernoulli


def _unit(name: str, value: Any, *, low: float = 0.0, high: float = 1.0) -> float:
    v = check_real(name, value)
    if not low <= v <= high:
        raise InvalidArgumentError(f"{name} must lie in [{low:g}, {high:g}], got {v}")
    return v


def _within(what: str, value: float, fix: str) -> float:
    """A mean the parameters imply, which must be a probability: refused, never clipped — a
    clipped mean is another adversary than the one asked for (its ties or gap would silently
    change)."""
    if not 0.0 <= value <= 1.0:
        raise InvalidArgumentError(f"{what} = {value:g} must lie in [0, 1] (a Bernoulli mean); {fix}")
    return value


def _others(n: int, first: int, mean: float, margin: float) -> np.ndarray:
    """Means: ``mean + margin`` for the experts from ``first`` on (none when first = n)."""
    if first < n:
        _within("mean + margin", mean + margin, "lower mean or margin (default 0.2)")
    return np.full(n, mean + margin)


def Ties(*, n: int, horizon: int, rng: np.random.Generator, k: int | None = None, gap: float = 0.0,
         mean: float = 0.5, margin: float = 0.2, scale: float = 1.0) -> IidBernoulli:
    """The first ``k`` experts (default all, 2 ≤ k ≤ n) have means mean, mean + gap/(k−1), …,
    mean + gap; the others mean + ``margin``. iid over time."""
    n, horizon = check_sizes(n, horizon)
    k = n if k is None else check_int("k", k, minimum=2)
    if k > n:
        raise InvalidArgumentError(f"k must be at most n={n} (the experts that tie), got {k}")
    mean, gap = _unit("mean", mean), _unit("gap", gap)
    _within("mean + gap", mean + gap, "lower mean or gap")
    means = _others(n, k, mean, _unit("margin", margin))
    means[:k] = mean + gap * np.arange(k) / (k - 1)
    return IidBernoulli(n=n, horizon=horizon, rng=rng, means=means, scale=scale)


def _pair(mean: float, gap: float) -> np.ndarray:
    """The two leading experts' means, mean ∓ gap/2, both probabilities."""
    _within("mean - gap/2", mean - gap / 2, "raise mean or lower gap")
    _within("mean + gap/2", mean + gap / 2, "lower mean or gap")
    return np.array([mean - gap / 2, mean + gap / 2])


def Crossing(*, n: int, horizon: int, rng: np.random.Generator, at: float = 0.5, gap: float = 0.1,
             mean: float = 0.5, margin: float = 0.2, scale: float = 1.0) -> SwitchingBernoulli:
    """Experts 0 and 1 have means mean ∓ gap/2 until step ``at`` (a fraction of T if < 1, else a
    step), then mean ± gap/2; the others mean + ``margin``."""
    n, horizon = check_sizes(n, horizon)
    at = check_real("at", at)
    if at >= 1 and at != int(at):  # step 2.5 is no step: refused, not truncated to 2
        raise InvalidArgumentError(f"at must be a fraction in (0, 1) or a whole step; got {at}")
    step = int(round(at * horizon)) if 0 < at < 1 else int(at)
    if not 1 <= step < horizon:
        raise InvalidArgumentError(f"at must give a step in [1, {horizon - 1}] (a fraction in (0, 1) or a step); got {at}")
    mean, gap = _unit("mean", mean), _unit("gap", gap)
    before = _others(n, 2, mean, _unit("margin", margin))
    before[:2] = _pair(mean, gap)
    after = before.copy()
    after[:2] = before[1::-1][:2]
    return SwitchingBernoulli(n=n, horizon=horizon, rng=rng, means=np.stack([before, after]), switch_at=[step], scale=scale)


def BlockSwitch(*, n: int, horizon: int, rng: np.random.Generator, block_size: int, offset: int = 0, every: int = 1,
                gap: float = 0.1, mean: float = 0.5, margin: float = 0.2, scale: float = 1.0) -> SwitchingBernoulli:
    """The best of experts 0 and 1 alternates after steps k·every·B + offset (k ≥ 1), B the
    learner's block size (public), ``offset`` in [0, B)."""
    n, horizon = check_sizes(n, horizon)
    B = check_int("block_size", block_size, minimum=1)
    offset = check_int("offset", offset, minimum=0)
    if offset >= B:
        raise InvalidArgumentError(f"offset must lie in [0, block_size={B}), got {offset}")
    every = check_int("every", every, minimum=1)
    mean, gap = _unit("mean", mean), _unit("gap", gap)
    switches = np.arange(every * B + offset, horizon, every * B)
    switches = switches[(switches >= 1) & (switches < horizon)]
    a = _others(n, 2, mean, _unit("margin", margin))
    a[:2] = _pair(mean, gap)
    b = a.copy()
    b[:2] = a[1::-1][:2]
    means = np.stack([a if j % 2 == 0 else b for j in range(switches.size + 1)])
    return SwitchingBernoulli(n=n, horizon=horizon, rng=rng, means=means, switch_at=switches if switches.size else None,
                              scale=scale)


@replify.hookimpl
def register_adversaries(register):
    common = {"mean": "the base mean (default 0.5)", "margin": "how much worse the other experts are (default 0.2)",
              "scale": "cost of a 1 (default 1; 1/n gives l1-bounded costs)"}
    register(replify.AdversarySpec(
        "ties", Ties,
        description="k experts with equal or near-equal means: the leader is decided by the draw alone (stress suite)",
        param_docs={"k": "how many experts tie (default all)", "gap": "spread of the k means (default 0: exact ties)",
                    **common},
    ))
    register(replify.AdversarySpec(
        "crossing", Crossing,
        description="the means of the two best experts cross at a chosen step (stress suite)",
        param_docs={"at": "the crossing: a fraction of T in (0, 1), or a step (default 0.5)",
                    "gap": "the two experts' mean gap (default 0.1)", **common},
    ))
    register(replify.AdversarySpec(
        "block-switch", BlockSwitch, test_params={"block_size": 10},
        description="the best expert alternates at steps placed against the learner's block grid (stress suite)",
        param_docs={"block_size": "the learner's block size B (public)", "offset": "steps into a block, in [0, B)",
                    "every": "switch every this many blocks (default 1)", "gap": "mean gap (default 0.1)", **common},
    ))
