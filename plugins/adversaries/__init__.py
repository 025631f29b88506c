"""The built-in oblivious adversaries: iid and switching Bernoulli costs, Gaussian arms, point
masses, mixtures, the bootstrap of real data, the paper's coin embeddings and lazy-leader trap,
random signs and the stress suite."""
