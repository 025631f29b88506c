"""The built-in bandit-feedback learners: UCB1, Thompson sampling, Exp3, blocked-bandit and the
replicable elimination / explore-then-commit learners, one module per algorithm."""
