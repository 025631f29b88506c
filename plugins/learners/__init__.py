"""The built-in full-information learners: the paper's algorithms (FLLB, FTPLB, FTPLB*, the
iid-replicable experts algorithm, split-commit), the baselines (Hedge, FTPL/FLL, constant) and
the aggregation rules (EWA, ML-Poly, BOA), one module per algorithm."""
