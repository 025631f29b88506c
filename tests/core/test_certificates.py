"""Every certificate replify prints, against the worst internal learner and adversary we know for
its proof (replify.experiments.audit): the claim must not be refuted.

Statistics: each audit's failures are Binomial(pairs, p) with p <= bound if the certificate holds.
A check fails when P(Bin(pairs, bound) >= failures) < 1e-6, so a true certificate fails a check
with probability at most 1e-6; the seeds are fixed, so the outcome is deterministic. To show the
check has teeth, the paper's original l-infinity certificate (the l1 radius misapplied) is refuted
by the same audit.
"""

import math

import numpy as np
import pytest

import replify
from replify.experiments.audit import CASES, HistoryHash, audit_certificates
from replify.errors import InvalidArgumentError
from replify.evaluation.stats import binomial_upper_tail
from replify.guarantees.theory import framework_params

ALPHA = 1e-6


@pytest.mark.parametrize("n", [2, 64])
@pytest.mark.slow
def test_block_certificates_survive_their_adversarial_audit(n):
    audits = audit_certificates(["wrap-linf", "wrap-l1", "fllb", "ftplb-star"], n=n, horizon=20_000, rho=0.1,
                                block_size=1_000, pairs=300, seed=1)
    for a in audits:
        assert a.bound == pytest.approx(0.1, rel=1e-9), a.case  # the eps in force is certified_eps's
        assert not a.refuted(ALPHA), a.to_dict()
    # The wrapper's audit comes near its bound (drift 0.80 of the charged one; at n = 2 half the
    # partings collide in HistoryHash's action): the tightened certificate is not vacuous. At
    # n = 64 at least 4% of pairs part (7-9% measured at 400 pairs): P(Bin(300, 0.07) < 12) is
    # about 0.015, and the seeds are fixed.
    if n >= 64:
        wrap = [a for a in audits if a.case.startswith("wrap")]
        assert all(a.failures >= 12 for a in wrap), [a.to_dict() for a in wrap]


def test_iid_certificate_survives_tied_iid_costs():
    (a,) = audit_certificates(["iid-experts"], n=4, horizon=3_000, rho=0.1, block_size=1, pairs=200, seed=2)
    assert a.bound == pytest.approx(0.1, rel=1e-9) and not a.refuted(ALPHA), a.to_dict()


@pytest.mark.slow
def test_the_papers_linf_certificate_is_refuted_and_the_corrected_one_is_not():
    # n = 256, T = 20 000, B = 1 000: the corollary's eps, from the l1 radius
    # m = (sqrt(2 ln(4T/rho)/n) + 2) sqrt(nT) and the union bound 2(gamma + eps m)(T/B - 1).
    T, n, rho, B, pairs = 20_000, 256, 0.1, 1_000, 300
    m_old = (math.sqrt(2 * math.log(4 * T / rho) / n) + 2) * math.sqrt(n * T)
    gamma_old = math.exp(-((m_old / math.sqrt(n * T) - 2) ** 2) * n / 2)
    eps_old = (rho / (T // B - 1) / 2 - gamma_old) / m_old
    eps_new = replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B, norm="linf")
    assert eps_new < eps_old / 4

    def run(eps):
        return replify.evaluate(
            lambda s: replify.wrap(HistoryHash, n=n, horizon=T, rho=rho, seed=s, norm="linf", block_size=B, eps=eps),
            "random-signs", n=n, horizon=T, pairs=pairs, seed=3,
        )

    old, new = run(eps_old), run(eps_new)
    assert binomial_upper_tail(old.failures, pairs, rho) < ALPHA  # the printed 0.1 is false
    assert binomial_upper_tail(new.failures, pairs, rho) >= ALPHA


def test_history_hash_parts_whenever_a_fed_vector_differs():
    a, b = HistoryHash(n=7, horizon=3, rng=np.random.default_rng(0)), HistoryHash(n=7, horizon=3, rng=np.random.default_rng(0))
    seen = set()
    for x in np.linspace(-1, 1, 50):
        a.update(np.array([x, 0.0]))
        seen.add(a.act())
    assert len(seen) == 7  # it uses every action
    a2 = HistoryHash(n=2**31, horizon=3, rng=np.random.default_rng(0))
    b.update(np.array([0.5, 0.0]))
    a2.update(np.array([0.5, 1e-16]))
    assert b.state != a2.state


def test_random_signs_block_sums_have_the_law_of_the_steps():
    # E and Var of each coordinate of a block sum of L steps: 0 and L (linf), 0 and L/n (l1),
    # checked on 4000 exact draws against the per-step sampler; 6 standard errors (normal
    # approximation of means of bounded variables) leave a false alarm below 1e-8 per check.
    L, n, k = 50, 4, 4000
    for norm, var in (("linf", L), ("l1", L / n)):
        seq = replify.make_adversary("random-signs", n=n, horizon=L * k, seed=0, norm=norm)
        sums = seq.sample_sums(np.random.default_rng(1), np.arange(k) * L, np.arange(1, k + 1) * L)
        steps = seq.sample(np.random.default_rng(2)).reshape(k, L, n).sum(axis=1)
        for draws in (sums, steps):
            assert abs(draws.mean()) <= 6 * math.sqrt(var / draws.size)
            assert abs(draws.var() / var - 1) <= 6 * math.sqrt(2 / draws.size) * 1.5
        costs = seq.sample(np.random.default_rng(3))
        if norm == "l1":
            assert np.all(np.abs(costs).sum(axis=1) == 1.0)
        else:
            assert set(np.unique(costs)) == {-1.0, 1.0}


def test_tight_and_per_transition_bounds_agree():
    p = framework_params(horizon=10_000, n=8, rho=0.1, norm="l1", block_size=700, eps=1e-4)
    per = p.union_bound.per_transition(p.eps, horizon=10_000, block_size=700)
    assert per.size == p.n_blocks - 1
    assert per.sum() == pytest.approx(p.replicability_bound, rel=1e-12)
    # the first transition charges only g (g' is the origin in both runs)
    assert per[0] == pytest.approx(p.eps * math.sqrt(2 * 8) * math.sqrt(700))


def test_audit_refuses_unknown_cases():
    with pytest.raises(InvalidArgumentError, match=r"cases must be among .*unknown \['wrap'\]"):
        audit_certificates(["wrap"], n=2, horizon=100, rho=0.1, block_size=10, pairs=2)
    assert set(CASES) == {"wrap-linf", "wrap-l1", "fllb", "ftplb-star", "ftplb-star-sweep", "iid-experts"}


# -- the geometric-noise certificate, each run charged its own side ----------------------------------


def _exact_parting(C, Cp, eps, cut):
    """P_X(argmin(C − X) ≠ argmin(C' − X)) for X iid Geo(eps) on {1, 2, …}, by summing over every X up to
    ``cut`` per expert (ties to the lowest index, as the learners break them); and the mass summed."""
    n = len(C)
    x = np.arange(1, cut + 1)
    X = np.stack([g.ravel() for g in np.meshgrid(*([x] * n), indexing="ij")], axis=1)
    w = np.prod(eps * (1 - eps) ** (X - 1), axis=1)
    differ = np.argmin(C - X, axis=1) != np.argmin(Cp - X, axis=1)
    return w[differ].sum(), w.sum()


@pytest.mark.parametrize("n", [2, 3])
def test_the_sharper_geometric_bound_holds_exactly_for_given_costs(n):
    # The per-decision inequality of replify.guarantees.certificates.geometric_sharp, given the costs:
    # P(part) <= min(eps (R + 1), (eps/2)(R + 2) + (eps^2/2) R (R + 1)), R = max Delta - min Delta, checked
    # against the exact parting probability (no sampling) on integer, fractional and tied costs. The
    # mass beyond the cut (below n * 1e-10) is added to the bound, so the check is exact.
    rng = np.random.default_rng(n)
    tightest = 0.0
    for _ in range(120 if n == 2 else 30):  # n = 3 sums cut**3 terms: larger eps keep the cut short
        eps = float(rng.choice([0.1, 0.2, 0.3] if n == 2 else [0.3, 0.5]))
        cut = int(math.ceil(math.log(1e-10) / math.log(1 - eps)))
        C = rng.integers(0, 6, n).astype(float) + rng.choice([0.0, 1.0]) * rng.random(n)
        Cp = C - rng.integers(-4, 5, n) * rng.choice([1.0, 0.37])
        part, mass = _exact_parting(C, Cp, eps, cut)
        R = float((C - Cp).max() - (C - Cp).min())
        bound = min(eps * (R + 1), eps / 2 * (R + 2) + eps**2 / 2 * R * (R + 1))
        assert part <= bound + (1 - mass) + 1e-12, (C, Cp, eps, part, bound)
        tightest = max(tightest, part / bound)
    assert tightest > 0.3  # the cases reach the bound's scale: the check is not vacuous


@pytest.mark.slow
def test_the_sharper_certificate_doubles_the_certified_eps_and_its_sweep_attack_stays_below():
    # The threshold sweep (replify.experiments.audit.ThresholdSweep) makes the union over transitions
    # nearly an equality at n = 2. At the certified eps for rho = 0.1 it parts 0.065 of 3 000 pairs
    # (measured, seed 1; bound / rho_hat = 1.54); here 1 500 pairs. Refuted would mean
    # P(Bin(1500, 0.1) >= failures) < 1e-6 (ALPHA); the ratio is asserted at the fixed seed below 2.5
    # ("within 2x" is met offline at 1.54), and the old certificate's bound at the same eps
    # — the first form alone, eps (2 sqrt(t ln n) + 1) per transition — is about 0.2: it would have
    # certified only half this eps.
    T, B = 20_000, 1_000
    (a,) = audit_certificates(["ftplb-star-sweep"], n=2, horizon=T, rho=0.1, block_size=B, pairs=1_500, seed=1)
    assert a.bound == pytest.approx(0.1, rel=1e-9) and not a.refuted(ALPHA), a.to_dict()
    assert a.bound / a.rho_hat < 2.5, a.to_dict()
    union = replify.learners()["ftplb-star"].union_bound(horizon=T, n=2, rho=0.1)
    old = a.eps * union.weight(horizon=T, block_size=B)
    assert old > 0.19 and old / a.rho_hat > 3.0  # the old certificate: more than 3x the attack


@pytest.mark.slow
def test_iid_experts_certificate_against_the_balanced_coin():
    # iid-experts at its default, our certified schedule at rho = 0.1, on the coin with bias 1/2 (c = (b, 1 - b):
    # the largest variance of the experts' cost difference, 1 a step, and a gap whose mean stays where the
    # fresh noise of every decision is densest). Measured offline: 0.073 [0.065, 0.082] of 4 000 pairs at
    # T = 1e4 and 0.076 [0.068, 0.084] at 1e6 (bound / attack 1.37 and 1.32; the proof's own noise parts next
    # to none: 38-46x). Refuted would mean P(Bin(500, 0.1) >= failures) < 1e-6; the ratio is asserted below
    # 2.5 at the fixed seed.
    report = replify.evaluate("iid-experts", "coin", n=2, horizon=10_000, pairs=500, seed=1, rho=0.1,
                              adversary_params={"tau": 1e-9})
    bound = report.params["replicability_bound"]
    assert report.params["certificate"] == "ours" and bound == pytest.approx(0.1, rel=1e-9)
    assert binomial_upper_tail(report.failures, report.pairs, bound) >= ALPHA
    assert bound / report.rho_hat < 2.5, (report.failures, report.pairs)
