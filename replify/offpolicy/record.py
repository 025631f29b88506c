"""A log recorded from a learner at work: :func:`record` runs a replify contextual learner (or any
object with ``act(context)`` and ``update(action, cost)``) on a contextual adversary's rows, with
ε-greedy exploration around it so that every arm keeps a known propensity — how logs of deployed
bandit learners are gathered for off-policy evaluation (Li, Chu, Langford & Schapire, WWW 2010;
Bietti, Agarwal & Langford, JMLR 2021).

At each row, with probability 1 − ε the learner's own arm a* is played and the learner is told its
cost; with probability ε a uniform arm is played (the learner, asked for a* on a copy, is not told:
it learns from its own steps only). The logging distribution is therefore ε/n + (1 − ε)·1[a = a*],
recorded whole, and every propensity is at least ε/n (the log's ``min_propensity``). The contexts and
costs come from the adversary as in :meth:`Log.simulate` (``seed``'s first stream), the exploration
from its second, the learner's randomness from its third."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from replify.base.checks import public
from replify.base.randomness import child, Seed, seed_sequence
from replify.engine.declarations import declared_bounds
from replify.errors import InvalidArgumentError
from replify.offpolicy.log import Log, check_simulated_size, logged_system
from replify.offpolicy.policies import check_epsilon
from replify.plugins.factory import make


@public
def record(learner: Any, adversary: Any, *, n: int, rows: int, seed: Seed, epsilon: float | np.floating = 0.1,
           learner_params: dict[str, Any] | None = None, adversary_params: dict[str, Any] | None = None,
           instance_seed: Seed = 0) -> Log:
    """A log of ``rows`` interactions of ``learner`` — a registered contextual learner's name
    (``"linucb"``, built for ``rows`` steps with ``learner_params``) or an object with
    ``act(context)`` and ``update(action, cost)`` — on ``adversary`` (as in :meth:`Log.simulate`),
    explored ε-greedily around it (module docstring): the logged propensities are the logging
    distribution's, every one at least ε/n."""
    epsilon = check_epsilon(epsilon)
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise InvalidArgumentError(f"rows must be an integer >= 1; got {rows!r}")
    rows = int(rows)
    root = seed_sequence(seed)  # children without spawning: the caller's SeedSequence is never moved
    s_data, s_explore, s_learner = (child(root, k) for k in range(3))
    seq = logged_system(adversary, n=n, rows=rows, instance_seed=instance_seed, adversary_params=adversary_params)
    check_simulated_size(seq, n=n, rows=rows)
    if isinstance(learner, str):
        agent = make(learner, n=n, horizon=rows, seed=s_learner, **(learner_params or {}))
    elif learner_params:
        raise InvalidArgumentError("learner_params builds a registered learner by name; a learner object comes built")
    else:
        agent = learner
    if not (callable(getattr(agent, "act", None)) and callable(getattr(agent, "update", None))):
        raise InvalidArgumentError(f"learner must be a registered contextual learner's name or an object with "
                                   f"act(context) and update(action, cost); got {type(agent).__name__}")
    x, c, m = (np.asarray(v) for v in seq.sample_contexts(np.random.default_rng(s_data), 0, rows))
    if x.ndim != 3 or x.shape[:2] != (rows, n):
        raise InvalidArgumentError(f"record needs contexts of shape (rows, n, d), one feature vector per arm, for the "
                               f"learner's act(context); the adversary shows shape {x.shape}")
    rng = np.random.default_rng(s_explore)
    explore, uniform = rng.random(rows) < epsilon, rng.integers(0, n, rows)
    own = np.empty(rows, dtype=np.int64)
    actions = np.empty(rows, dtype=np.int64)
    for t in range(rows):  # the learner adapts row by row: one decision a row is what recording it means
        if explore[t]:
            own[t] = _arm(copy.deepcopy(agent).act(x[t]), n, t)
            actions[t] = uniform[t]
        else:
            own[t] = actions[t] = _arm(agent.act(x[t]), n, t)
            agent.update(int(actions[t]), float(c[t, actions[t]]))
    dist = np.full((rows, n), epsilon / n)
    dist[np.arange(rows), own] += 1.0 - epsilon
    name = f"{learner if isinstance(learner, str) else type(agent).__name__} on " \
           f"{adversary if isinstance(adversary, str) else type(seq).__name__}"
    return Log.from_arrays(contexts=x, actions=actions, costs=c[np.arange(rows), actions],
                           propensities=dist[np.arange(rows), actions], n=n, distribution=dist, means=m, name=name,
                           min_propensity=epsilon / n, cost_range=declared_bounds(seq))


def _arm(action: Any, n: int, t: int) -> int:
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) or not 0 <= action < n:
        raise InvalidArgumentError(f"learner.act() at row {t} returned {action!r}; expected an arm in [0, {n})")
    return int(action)
