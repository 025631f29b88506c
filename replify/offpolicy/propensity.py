"""Propensities a log did not record, estimated by a stated model (docs/offpolicy.md, "A log
without propensities").

**The model.** Multinomial logistic regression of the logged action on the row's context — the shared
context (rows, d), or every arm's features side by side (rows, n·d) — with an intercept per arm and
an L2 penalty λ/2·‖W‖² on the weights (λ = ``PENALTY``/N: the penalty fades as the log grows), fitted
by full-batch gradient descent with Nesterov's momentum on the mean negative log-likelihood, step
1/L with L = ½ λ_max(X̃ᵀX̃/N) + λ the gradient's Lipschitz constant (X̃ the contexts with the
intercept's column), from zero, until the gradient's largest entry is below ``TOLERANCE`` or
``ITERATIONS`` steps; the features are standardised first (the fitted model is the same up to that
reparametrisation). Each row's propensity is the model's probability of the action logged there.

**What it costs the numbers.** Every estimate from such a log is measured, not certified: the
estimators are unbiased only for the logging policy's own propensities, and a model of them carries
its own error (a misspecified model biases IPS by E[w(1 − μ/μ̂)c]), which no interval here accounts
for. The estimates say so (``caveat``), and the replicable decisions are not certified on it (their
certificate needs the logging policy's smallest propensity, which an estimate does not bound).
Where your log can record the propensities, record them: this is the fallback OBP's and SCOPE-RL's
users most often ask for, not a substitute.
"""

from __future__ import annotations

import numpy as np

#: The penalty's scale (λ = PENALTY/N), the gradient's tolerance and the most steps (module docstring)
PENALTY, TOLERANCE, ITERATIONS = 1.0, 1e-6, 5000

#: How the propensities were estimated, in words (a log keeps it, every estimate from it says it)
MODEL = ("estimated by multinomial logistic regression of the logged action on the context (replify.offpolicy."
         "propensity: L2 penalty 1/N, fitted on this log)")


def estimated_propensities(contexts: np.ndarray, actions: np.ndarray, n: int) -> np.ndarray:
    """Every arm's probability on every row (rows, n) under the model of the module docstring,
    fitted on ``contexts`` (rows, d) or (rows, n, d) and the logged ``actions``."""
    x = contexts.reshape(contexts.shape[0], -1).astype(np.float64)
    rows = x.shape[0]
    sd = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    z = np.hstack([z, np.ones((rows, 1))])  # the intercept's column (not penalised)
    y = np.zeros((rows, n))
    y[np.arange(rows), actions] = 1.0
    lam = PENALTY / rows
    penal = np.ones(z.shape[1])
    penal[-1] = 0.0
    step = 1.0 / (0.5 * float(np.linalg.eigvalsh(z.T @ z / rows).max()) + lam)
    w = np.zeros((z.shape[1], n))
    ahead, t = w.copy(), 1.0
    for _ in range(ITERATIONS):  # a loop over the descent's steps (each one pass over the log)
        grad = z.T @ (_softmax(z @ ahead) - y) / rows + lam * penal[:, None] * ahead
        nxt = ahead - step * grad
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        ahead, w, t = nxt + (t - 1.0) / t_next * (nxt - w), nxt, t_next
        if np.abs(grad).max() < TOLERANCE:
            break
    return _softmax(z @ w)


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
