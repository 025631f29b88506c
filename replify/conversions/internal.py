"""How the experts and bandit conversions of :mod:`replify.wrapper` build their internal learner:
the affine map onto the domain it declares, its construction over the blocks, the refusal of a
bandit learner (they feed it whole cost vectors) and its regret bound."""

from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np

from replify.base.checks import check_learner
from replify.components.bandits import is_bandit
from replify.errors import InvalidArgumentError, LearnerProtocolError
from replify.plugins.factory import check_accepts
from replify.plugins.specs import LearnerSpec


def input_map(spec: LearnerSpec, norm: str) -> bool:
    """Whether the internal learner gets the affine image (x+1)/2 of each fed vector x — the
    framework feeds x ∈ [-1,1]^n (ℓ1 norm ≤ 1 for ``norm="l1"``) — so that it sees exactly the
    domain its spec declares; combinations no map serves are refused.

    * ``cost_range=(-1, 1)``: x as it is (an ℓ1-bounded spec needs ``norm="l1"``).
    * ``cost_range=(0, 1)``, experts, ℓ∞: (x+1)/2 ∈ [0,1]^n; every expert's cost moves by the
      same affine map, so the regret on x is exactly twice the regret on (x+1)/2.
    * ``cost_range=(0, 1)`` with an ℓ1 bound: refused — (x+1)/2 has ℓ1 norm up to (n+1)/2.
    * ``cost_range=(0, 1)`` for OLO: refused — a·(x+1)/2 = (a·x + a·1)/2 shifts each action's
      cost by a·1, which changes the regret unless a·1 is constant on the action set.
    """
    if spec.norm == "l1" and norm == "linf":
        raise InvalidArgumentError(
            f"norm must be 'l1' for learner {spec.name!r}, which expects l1-bounded costs; got 'linf' "
            f"(the l-infinity normalisation can feed it vectors of l1 norm up to n)"
        )
    if spec.cost_range != (0.0, 1.0):
        return False
    if spec.norm == "l1":
        raise InvalidArgumentError(
            f"learner {spec.name!r} declares l1-bounded costs in [0, 1]; the general framework feeds vectors in "
            f"[-1, 1]^n, and no affine map turns them into l1-bounded vectors in [0, 1]^n with the same regret. "
            f"Declare cost_range=(-1, 1) if the learner accepts signed costs"
        )
    if spec.problem != "experts":
        raise InvalidArgumentError(
            f"learner {spec.name!r} is an OLO learner with cost_range=(0, 1): the framework's vectors lie in "
            f"[-1, 1]^n and the map (x+1)/2 shifts each action's cost by a.1/2, changing its regret; "
            f"expected an OLO learner that accepts cost_range=(-1, 1)"
        )
    return True


def build_internal(
    spec: LearnerSpec, *, n: int, horizon: int, rng: np.random.Generator, rho: float, learner_params: Mapping[str, Any]
) -> Any:
    """The internal learner, built over ⌈T/B⌉ steps (it sees one vector per block) as
    :func:`replify.make` builds it: a learner whose parameters come from a replicability theorem
    in ρ (FLLB, FTPLB*, the iid algorithm) receives ``rho`` too, and ``learner_params`` are its
    own hyperparameters."""
    kwargs: dict[str, Any] = dict(n=n, horizon=horizon, rng=rng)
    if spec.parameters is not None or spec.guarantee is not None:
        kwargs["rho"] = rho
    clash = sorted(set(learner_params) & {"n", "horizon", "rng", "rho"})
    if clash:
        raise InvalidArgumentError(
            f"learner_params must not set {', '.join(clash)}: the wrapper derives them; got {dict(learner_params)!r}"
        )
    kwargs.update(learner_params)
    check_accepts(spec.factory, kwargs, what=f"learner {spec.name!r}")
    internal = check_learner(spec.factory(**kwargs), source=f"learner factory {spec.name!r}")
    refuse_bandit(spec, "bandit" if is_bandit(internal) else "full")
    return internal


def declared_feedback(factory: Any, default: str) -> Any:
    """The ``feedback`` a factory declares on itself (a class attribute; a ``functools.partial``'s
    function's), else ``default``."""
    while isinstance(factory, functools.partial):
        factory = factory.func
    return getattr(factory, "feedback", default)


def refuse_bandit(spec: LearnerSpec, feedback: Any) -> None:
    """The construction feeds the internal learner a whole (rounded, rescaled) cost vector per
    block; a bandit learner takes one arm's cost, and the blocks' vectors cannot be handed to it
    piecemeal without changing what the proof rounds. Refuse rather than misfeed it — as soon as
    the spec (or the class) declares it, before any parameter is computed or warned about."""
    if feedback == "bandit":
        raise LearnerProtocolError(
            f"replify.wrap needs a full-information learner: {spec.name!r} declares feedback='bandit' (it sees only the "
            "played arm's cost), and the wrapper feeds its internal learner whole cost vectors. For replicable bandit "
            "learning use a bandit plugin such as 'rep-gap-elimination', 'rep-elimination', 'rep-etc' or 'blocked-bandit' (docs/bandits.md)"
        )


def internal_regret_bound(
    spec: LearnerSpec, internal: Any, *, n: int, blocks: int, learner_params: Mapping[str, Any]
) -> tuple[float | None, str | None]:
    """The internal learner's regret bound over ``blocks`` steps on its own cost scale, for the
    hyperparameters in force: the one its ``params`` state (learners with theorem parameters),
    else its spec's (:meth:`LearnerSpec.regret_bound_for`), else ``(None, why)``."""
    own = getattr(getattr(internal, "params", None), "regret_bound", None)
    if own is not None:
        return float(own), None
    if spec.parameters is not None:
        return None, f"internal learner {spec.name!r} states no regret bound for its parameters"
    bound, note = spec.regret_bound_for(horizon=blocks, n=n, params=learner_params)
    # the wrapped learner's note: it is the internal learner that registers no bound
    return bound, None if note is None else note.replace("the learner registers", "the internal learner registers")
