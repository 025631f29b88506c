"""Logged bandit data (docs/offpolicy.md), layer 7, beside ``experiments``: a :class:`Log` of
interactions a logging policy took — read from arrays or a CSV file, or simulated from any replify
contextual adversary with a stated logging policy — and the off-policy estimates of another
policy's expected cost from it (:func:`estimate`: inverse propensity scoring, its self-normalised
form, the direct method and the doubly robust estimator, each with a confidence interval).

``log`` (the log, its checks, its constructors), ``files`` (reading a log's file), ``policies`` (the
logging policies and a target's probabilities on a log's rows), ``record`` (a log of a
learner at work, explored ε-greedily), ``estimators`` (the
estimates), ``compare`` (every candidate by every estimator: a table and its figure), ``learn`` (a policy
learned from a log, replicably, and the uncertified classifier beside it), ``propensity`` (the
stated model for a log without propensities), ``stream`` (logs larger than memory: estimates and the
certified choice in one pass over Parquet chunks, here or on Dask), ``select`` (a rounded estimate and a choice among policies that two independent logs
make alike with probability ≥ 1 − ρ, certified), ``measure`` (their replicability measured over
pairs of logs, as a :class:`replify.Report`, and computed over R for two given logs), ``plan`` (the
rows a choice needs, before any log is collected). May import: everything below (the ground floor, components,
plugins, sources, engine's declarations, evaluation, plots). Costs are losses, lower is better, as everywhere in replify.
"""

from replify.offpolicy.estimators import ESTIMATORS, INTERVALS, Estimate, estimate
from replify.offpolicy.compare import Comparison, compare
from replify.offpolicy.learn import ClassifierPolicy, LearnedPolicy, learn_classifier, learn_policy
from replify.offpolicy.stream import compare_dask, compare_stream, parquet_chunks, select_stream, value_stream
from replify.offpolicy.log import Log
from replify.offpolicy.policies import epsilon_greedy, softmax
from replify.offpolicy.record import record
from replify.offpolicy.measure import parting_probability, replicability
from replify.offpolicy.plan import RowsPlan, rows_for
from replify.offpolicy.select import Replicable, incumbent_factor, replicable_value, select, selection_factor

__all__ = ["compare_dask", "compare_stream", "parquet_chunks", "select_stream", "value_stream", "ClassifierPolicy", "LearnedPolicy", "learn_classifier", "learn_policy", "Comparison", "ESTIMATORS", "INTERVALS", "Estimate", "compare", "Log", "Replicable", "epsilon_greedy", "estimate", "incumbent_factor", "parting_probability", "replicability", "rows_for", "RowsPlan",
           "record", "replicable_value", "select", "selection_factor", "softmax"]
