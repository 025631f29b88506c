"""One pair of an evaluation run again from its seeds (:meth:`replify.Report.replay`, :class:`Replay`),
and what a report keeps to do it: the learner callable, the adversary and the evaluation's root
seed, pickled as bytes when the report is (:class:`_Pickled`), or the reason it cannot replay."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import numpy as np

from replify.base.checks import as_float_array, check_int
from replify.engine.paths import play_chunk
from replify.engine.played import played_law, replay_lane
from replify.errors import InvalidArgumentError
from replify.components.bandits import BanditFeed, is_bandit
from replify.components.contextual import ContextFeed, is_contextual, shows_contexts, varying_contexts
from replify.base.randomness import DATA, INTERNAL, MIXED, child


#: The most memory :meth:`Report.replay` may use for the two runs' per-step costs.
REPLAY_BYTES = 2 * 2**30


@attrs.frozen(eq=False, kw_only=True)
class Replay:
    """One pair of an evaluation, run again from its seeds (:meth:`Report.replay`): both runs'
    per-step costs ``(T, n)``, actions, and regrets, whether the runs are identical and where they
    first part (1-based, 0 if never). ``as_evaluated`` says whether these are the very draws the
    report's pair was scored on — True on the per-step paths (the regrets then equal the report's,
    up to float rounding for block learners, which add a block's costs first); the block-sum and
    segment paths drew block sums instead (the same law, other draws)."""

    pair: int
    costs: tuple[np.ndarray, np.ndarray]
    actions: tuple[np.ndarray, np.ndarray]
    regret: tuple[float, float]
    identical: bool
    first_divergence: int
    as_evaluated: bool


@attrs.frozen
class _Pickled:
    """What replay needs, pickled, kept as bytes until it is needed."""

    data: bytes


def replay_pair(report: Any, k: int) -> Replay:
    """Pair ``k`` of ``report`` (a :class:`~replify.Report`) again, from its seeds: what
    :meth:`replify.Report.replay` gives."""
    if report.replay_source is None:
        raise InvalidArgumentError(
            "this report cannot replay: it was not made by evaluate(), so it holds no learner or adversary to run "
            "again; evaluate them with this report's seed, and replay that report"
        )
    if isinstance(report.replay_source, str):
        raise InvalidArgumentError(f"this report cannot replay: {report.replay_source}")
    k = check_int("k", k, minimum=0)
    if k >= report.pairs:
        raise InvalidArgumentError(f"k must be a pair of this report, in [0, {report.pairs}); got {k}")
    need = 2 * report.horizon * report.n * 8
    if need > REPLAY_BYTES:  # a block-sum run at T = 10^9 never held a step's costs: a replay would
        raise InvalidArgumentError(
            f"this report cannot replay: a replay holds both runs' per-step costs, 2 x {report.horizon} x {report.n} "
            f"floats ({need / 2**30:.3g} GiB, more than {REPLAY_BYTES / 2**30:g} GiB); evaluate the same learner "
            "at a smaller horizon to look inside a pair"
        )
    source = report.replay_source
    if isinstance(source, _Pickled):
        try:
            source = pickle.loads(source.data)
        except Exception as exc:  # noqa: BLE001 - the learner's module is not importable here, say
            raise InvalidArgumentError(
                f"this report cannot replay here: its learner or adversary could not be unpickled "
                f"({type(exc).__name__}: {exc}); replay it where their module can be imported"
            ) from None
    build, seq, root, action_set, *rest = source
    domain = rest[0] if rest else None  # the learner's cost domain, which decides the engine's path
    costs, actions, regrets, policies = [], [], [], []
    for side in (0, 1):
        learner = build(child(root, INTERNAL, k))
        rng = np.random.default_rng(child(root, DATA, k, side))
        if shows_contexts(seq):  # contexts before each step (docs/contextual.md): as the engine plays them
            a, c, regret, policy = _replay_contextual(learner, seq, rng, report.n, report.horizon)
            costs.append(c), actions.append(a), regrets.append(regret), policies.append(policy)
            continue
        if is_bandit(learner) and played_law(seq, report.horizon, domain):
            # only the played arm's cost was drawn (replify.engine.played): the same draws again
            a, step_paid, c = replay_lane(learner, seq, rng, n=report.n, horizon=report.horizon)
            total = np.cumsum(c, axis=0)[-1] if c.shape[0] else np.zeros(report.n)
            costs.append(c), actions.append(a)
            regrets.append((float(np.cumsum(step_paid)[-1]) if c.shape[0] else 0.0) - float(total.min()))
            continue
        # a copy (the learner must not write into the draw the regret is scored on), real-valued
        c = np.array(as_float_array("the adversary's sample", seq.sample(rng)))
        # as the engine plays it: bandit feedback, mixed strategies sampled from the pair's stream
        feed = BanditFeed(learner, report.n) if is_bandit(learner) else None
        sampler = np.random.default_rng(child(root, INTERNAL, k, MIXED))
        a, step_paid = play_chunk(learner, c, n=report.n, problem=getattr(learner, "problem", "experts"), t0=0,
                                  sampler=sampler, feed=feed)
        paid = float(np.cumsum(step_paid)[-1]) if c.shape[0] else 0.0
        total = np.cumsum(c, axis=0)[-1] if c.shape[0] else np.zeros(report.n)
        if a.ndim == 1:
            best = float(total.min())
        else:  # vector actions: the best fixed action of the set in hindsight
            action_set = action_set or getattr(learner, "action_set", None)
            if action_set is None:
                raise InvalidArgumentError("replay of vector actions needs the action set: pass actions= to evaluate()")
            best = float(action_set.min_cost(total))
        costs.append(c)
        actions.append(a)
        regrets.append(paid - best)
    same = actions[0] == actions[1] if actions[0].ndim == 1 else (actions[0] == actions[1]).all(axis=-1)
    if policies and policies[0] is not None and varying_contexts(seq):  # the runs' policies, as evaluate compares
        same = (policies[0] == policies[1]).all(axis=-1)
    first = 0 if same.all() else int(np.argmin(same)) + 1
    return Replay(pair=k, costs=(costs[0], costs[1]), actions=(actions[0], actions[1]),
                  regret=(regrets[0], regrets[1]), identical=bool(same.all()), first_divergence=first,
                  as_evaluated=not report.fast_path)


def _from_data_reason(data: Any) -> str:
    """Why a report read back from data cannot replay, and what to do: the configuration its
    provenance records (same seed: the same pairs) evaluated again gives a report that can."""
    config = (data.get("provenance") or {}).get("configuration") if isinstance(data, dict) else None
    again = ""
    if isinstance(config, dict) and {"learner", "adversary", "n", "horizon"} <= set(config):
        again = (f" (here replify.evaluate({config['learner']!r}, {config['adversary']!r}, n={config['n']}, "
                 f"horizon={config['horizon']}, seed=<this report's seed>, ...), with the rest of "
                 "provenance['configuration'])")
    return ("it was read back by Report.from_dict, and a report's data hold no learner or adversary to run again. "
            f"Evaluate the same learner and adversary with the same seed and configuration{again} — pair k then has "
            "the same seeds — and replay that report; or keep a report by pickling it, which keeps what replay needs")


def _replay_contextual(learner: Any, seq: Any, rng: np.random.Generator, n: int,
                       horizon: int) -> tuple[np.ndarray, np.ndarray, float, Any]:
    """One run of a replay on an adversary that shows contexts: the arms, the costs, the regret
    (against the best fixed arm on fixed features, the best policy where contexts change) and the
    learner's policies (None when it names none)."""
    x, c, means = (np.array(as_float_array("the adversary's sample_contexts", v))
                   for v in seq.sample_contexts(rng, 0, horizon))
    if is_contextual(learner):
        a, policy = ContextFeed(learner, n).play(x, c, 0, True)
        paid = float(np.cumsum(c[np.arange(horizon), a])[-1]) if horizon else 0.0
    else:
        feed = BanditFeed(learner, n) if is_bandit(learner) else None
        a, step_paid = play_chunk(learner, c.copy(), n=n, problem="experts", t0=0, sampler=None, feed=feed)
        paid, policy = float(np.cumsum(step_paid)[-1]) if horizon else 0.0, None
    if varying_contexts(seq):
        best = float(np.cumsum(c[np.arange(horizon), np.argmin(means, axis=1)])[-1]) if horizon else 0.0
    else:
        best = float(np.cumsum(c, axis=0)[-1].min()) if horizon else 0.0
    return a, c, paid - best, policy
