"""What every learner and adversary is built from (layer 2, above the ground floor and the
certificates).

Learners: ``blocks`` (learners that act once per block and decide from cumulative costs: the
general framework, FLLB, FTPLB, FTPLB*), ``grid`` (the random grid of the paper's rounding),
``cumulative`` (running sums, float for float as stepping adds), ``actions`` (action sets for online
linear optimisation), ``mixtures`` (learners that play a distribution), ``bandits`` (the
bandit-feedback protocol, its feed and learners' base), ``bandit_lanes`` (their lane-batched form),
``exploring`` (bandit learners that explore on a schedule, then commit), ``contextual`` (contexts before each step: linear and contextual bandits), ``rounded_ridge`` (a ridge
estimate on shared exploration rounded on a random grid: rep-ridge's mechanism and the contextual conversion's),
``doubling`` (doubling-trick epochs), ``describe`` (their ``repr``). The conversions ``replify.wrap`` builds
on them (the grid, the blocks, the exploring schedule, the rounded ridge) are in ``replify.conversions``.
Adversaries: ``sequences`` (distribution sequences drawn chunk by chunk, the form the engine
streams) and ``userdata`` (a user's own cost matrix, from an array or a file). The learners and
adversaries themselves are plugins (``replify_plugins``).

May import: the ground floor (``replify.errors``, ``checks``, ``randomness``) and
``replify.guarantees.certificates``. Never the registry, the engine or anything above.
"""
