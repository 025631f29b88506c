"""The paper's lower bounds (§7) and the "FLL is not replicable" example (§3.1), as code you can run.

* :func:`majority_decoder` and :func:`coin_reduction` — the reduction in the proof of
  ``thm:lower_bound_n=2_vanilla_replicability_experts``: a low-regret learner on the coin costs
  c_t = (ĉ_t, 1 − ĉ_t) plays the cheaper expert most of the time, so the majority of its actions
  decodes the coin's bias; a ρ-replicable learner thus solves the coin problem replicably, which
  needs ρ ≳ 1/(τ√T) (``lemma:coin_problem``), hence regret ≳ √T/ρ.
* :func:`coin_demo`, :func:`phases_demo`, :func:`lazy_leader_demo` — the three demos behind
  ``replify demo``. An empirical demo of a lower bound is evidence, not a proof: it shows the
  algorithms' measured regret growing with 1/ρ as the bound says it must, for these parameters.

One module a concept: ``demo`` (:class:`Demo`, what every demo gives, and each demo's figure by
name), ``reduction`` (the proof's reduction), and one module a demo, with its figure: ``coin``,
``phases``, ``lazy_leader``, ``bandit_coin``, ``adversarial_bandit``. Every name imports from here.

May import: what an experiment may (everything below, ``replify.plots`` included). Inside it,
``demo`` and ``reduction`` import nothing of this package; a demo imports ``demo``, the coin demo
``reduction`` too, and the bandit coin demo the coin demo's rows (``coin._coin_cells``).
"""

from __future__ import annotations

from replify.experiments.lower_bounds.demo import PLOTS, Demo
from replify.experiments.lower_bounds.reduction import CoinReduction, coin_reduction, majority_decoder

# the demos, in the order PLOTS names them (each enters its figure there as it is imported)
from replify.experiments.lower_bounds.coin import COIN_REFERENCES, COIN_REPLICABLE, _plot_coin, coin_demo
from replify.experiments.lower_bounds.phases import _plot_phases, phases_demo
from replify.experiments.lower_bounds.lazy_leader import _plot_lazy, lazy_leader_demo
from replify.experiments.lower_bounds.bandit_coin import (
    BANDIT_REFERENCES, BANDIT_REPLICABLE, _plot_bandit_coin, bandit_coin_demo,
)
from replify.experiments.lower_bounds.adversarial_bandit import (
    ADVERSARIAL_BANDITS, _plot_adversarial_bandit, adversarial_bandit_demo, threshold_range_attack,
)

DEMOS = {"coin": coin_demo, "phases": phases_demo, "lazy-leader": lazy_leader_demo, "bandit-coin": bandit_coin_demo,
         "adversarial-bandit": adversarial_bandit_demo}
