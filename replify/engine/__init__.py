"""The evaluation engine: runs the pairs, many at once, streaming over time (docs/evaluation.md).

It knows pairs, draws and actions — nothing of claims (certified, calibrated, measured).
``limits`` (memory budgets and sizes, read at call time so that tests may shrink them),
``outcomes`` (what a group of pairs produced), ``lanes`` (the state of every lane of a group:
cumulative costs, accounting, checkpoints), ``paths`` (the per-step, block-sum, segment and
whole-sequence paths, and the bandit feed), ``played`` (bandit learners shown only the played
arm's cost: one variate a lane and step, the other arms' totals as block sums), ``contexts`` (the
contextual path, and what it holds an adversary that shows contexts to), ``cycles`` (the bandit
block-sum path of batched bandit learners), ``support`` (the finite-support path: a bootstrapped data set's
rows drawn as multinomial counts, stretch by stretch), ``declarations`` (an adversary's declarations held against its own draws before
a path trusts them), ``run`` (:func:`simulate`, which picks a path), and ``dispatch`` (the pairs
split over local processes with joblib, or a Dask cluster).

May import: the ground floor and ``replify.components``. Never the
registry, the factory or ``replify.evaluation``: data flow one way, adversary → costs →
learners → actions → outcomes.
"""

from replify._moved import names_getattr

# the names this package held when it was one module, kept importable (replify._moved)
__getattr__ = names_getattr(__name__)
