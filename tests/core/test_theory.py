import math

import pytest

import replify
from replify.errors import BlockSizeWarning
from replify.guarantees.certificates import radius_l1, sqrt_sum
from replify.guarantees.theory import concentration_radius, framework_params

CASES = [(10**6, 10, 0.1), (10**7, 2, 0.05), (5 * 10**7, 64, 0.2), (2 * 10**6, 1000, 0.01), (10**11, 2, 0.5), (10**12, 10, 0.1)]


def paper_B_eps(T, n, rho, norm):
    """The theorems' formulas with the corrected radius (docs/certificates.md; derivation in
    docs/certificates.md), written out independently of replify.guarantees.theory: McDiarmid over the 2t
    vectors with bounded differences 2 (l1-bounded costs) or 2n (costs in [-1,1]^n), the mean
    bounded by sqrt(2nt) or n sqrt(2t), tail gamma = rho/(4T)."""
    L = math.log(4 * T / rho)
    m = math.sqrt(2 * n * T) + 2 * math.sqrt(T * L) if norm == "l1" else n * math.sqrt(T) * (math.sqrt(2) + 2 * math.sqrt(L))
    if norm == "linf":  # thm:general-framework-guarantees-ell-infty
        B = math.sqrt(8 * m * T / rho)
        return m, B, 2 / B
    B = math.sqrt(8 * n * m * T / rho)  # thm:general-framework-guarantees
    return m, B, 2 * n / B


@pytest.mark.parametrize("T,n,rho", CASES)
@pytest.mark.parametrize("norm", ["linf", "l1"])
def test_theorem_parameters_match_the_paper(T, n, rho, norm):
    m, B, _ = paper_B_eps(T, n, rho, norm)
    if B >= T:  # clipped to the horizon, with a warning
        with pytest.warns(BlockSizeWarning, match=f"reaches the horizon T={T}"):
            p = framework_params(horizon=T, n=n, rho=rho, norm=norm)
        assert (p.block_size, p.n_blocks, p.replicability_bound) == (T, 1, 0.0)
        return
    p = framework_params(horizon=T, n=n, rho=rho, norm=norm)
    assert p.m == pytest.approx(m, rel=1e-12)
    assert p.block_size_theorem == pytest.approx(B, rel=1e-12)
    assert p.block_size == round(B)
    # epsilon keeps the theorem's relation with the block size in force
    assert p.eps == pytest.approx((2 if norm == "linf" else 2 * n) / round(B), rel=1e-12)
    assert p.normaliser == pytest.approx(2 * p.block_size, rel=1e-12)  # B = 2/eps (or 2n/eps)
    assert p.gamma == pytest.approx(rho / (4 * T), rel=1e-9)  # m was chosen for exactly this tail
    assert p.theorem == ("thm:general-framework-guarantees-ell-infty" if norm == "linf" else "thm:general-framework-guarantees")
    assert p.n_blocks == -(-T // p.block_size)
    # The tightened union bound: eps * M * sum_k (sqrt(kB) + sqrt((k-1)B)), M = sqrt(2n) or n sqrt(2).
    M = math.sqrt(2 * n) if norm == "l1" else n * math.sqrt(2)
    B_ = p.block_size
    expected = p.eps * M * sum(math.sqrt(k * B_) + math.sqrt((k - 1) * B_) for k in range(1, p.n_blocks))
    assert p.replicability_bound == pytest.approx(expected, rel=1e-9)
    # ... and it is below the corrected theorem's 2(gamma + eps m)(T/B), which is at most rho.
    assert p.replicability_bound <= 2 * (p.gamma + p.eps * p.m) * (p.n_blocks - 1) <= rho


def test_the_cases_cover_both_unclipped_and_clipped_block_sizes():
    clipped = [paper_B_eps(T, n, rho, norm)[1] >= T for T, n, rho in CASES for norm in ("linf", "l1")]
    assert any(clipped) and not all(clipped)


def test_overrides_block_size_keeps_the_relation_and_eps_is_honoured():
    p = framework_params(horizon=10**5, n=10, rho=0.1, norm="l1", block_size=500)
    assert (p.block_size, p.eps, p.overrides) == (500, 2 * 10 / 500, ("block_size",))
    q = framework_params(horizon=10**5, n=10, rho=0.1, norm="linf", block_size=500, eps=1e-3)
    assert (q.block_size, q.eps, q.overrides) == (500, 1e-3, ("block_size", "eps"))
    assert q.normaliser == pytest.approx(500 + 2 / 1e-3)


def test_warns_with_the_numbers_when_the_block_size_reaches_the_horizon():
    with pytest.warns(BlockSizeWarning, match=r"B=82932\.8 reaches the horizon T=10000 \(n=10, rho=0\.1\); using B=10000"):
        p = framework_params(horizon=10_000, n=10, rho=0.1, norm="linf")
    assert p.block_size == 10_000 and p.n_blocks == 1
    with pytest.warns(BlockSizeWarning, match="requested block size B=20000 reaches the horizon T=1000"):
        assert framework_params(horizon=1000, n=2, rho=0.5, norm="linf", block_size=20000).block_size == 1000


def test_wrap_exposes_the_parameters_in_force(spy):
    learner = replify.wrap(spy, n=4, horizon=10**8, rho=0.2, seed=0)
    assert learner.block_size == learner.params.block_size and learner.eps == learner.params.eps
    assert learner.params.regret_bound is None  # a plain factory declares no regret bound
    hedge = replify.wrap("hedge", n=4, horizon=10**8, rho=0.2, seed=0)
    k = hedge.params.n_blocks
    # Hedge's bound sqrt(k ln n / 2) on [0,1] costs doubles on the [-1,1] scale it is fed on.
    expected = hedge.params.normaliser * 2 * math.sqrt(k * math.log(4) / 2)
    assert hedge.params.regret_bound == pytest.approx(expected)
    assert hedge.params.to_dict()["regret_bound"] == hedge.params.regret_bound


def test_the_l1_lemma_constant_is_corrected_on_its_exact_counterexample():
    # lemma:concentration_in_ell_1_norm at n = 2 with v, w uniform on {+e1, -e1}: ||sum (v_i - w_i)||_1
    # is |S| for S a sum of 2t independent signs, so its tail is an exact binomial tail.
    from scipy.stats import binom

    t, n, c = 10**6, 2, 8.0
    threshold = c * math.sqrt(t * n)
    # |S| > threshold  <=>  heads > t + threshold/2 or heads < t - threshold/2, heads ~ Bin(2t, 1/2)
    exact = 2 * binom.sf(math.floor(t + threshold / 2), 2 * t, 0.5)
    assert exact > math.exp(-((c - 2) ** 2) * n / 2)  # the lemma as printed is refuted (1.25e-15 > 2.3e-16)
    assert exact <= math.exp(-((c - 2) ** 2) * n / 4)  # the corrected tail holds
    # replify's radius for tail gamma is never exceeded with probability above gamma here
    for gamma in (1e-3, 1e-8, 1e-15):
        r = radius_l1(n, "l1", horizon=t, tail=gamma)
        assert 2 * binom.sf(math.floor(t + r / 2), 2 * t, 0.5) <= gamma


def test_the_linf_radius_holds_where_the_l1_radius_fails():
    # Costs uniform on {-1, +1}^n: ||Delta_t||_1 sums n independent |2 Bin(2t, 1/2) - 2t| (exact law per
    # coordinate). At n = 256 the old l1 radius (sqrt(2 ln(4T/rho)/n) + 2) sqrt(nT) sits below the
    # typical drift n sqrt(4t/pi); the corrected l-infinity radius sits above it.
    T, n, rho = 20_000, 256, 0.1
    old = (math.sqrt(2 * math.log(4 * T / rho) / n) + 2) * math.sqrt(n * T)
    typical = n * math.sqrt(4 * T / math.pi)  # E||Delta_T||_1 for these costs
    assert old < typical < concentration_radius(T, n, rho, "linf")


def test_sqrt_sum_is_exact_then_an_upper_bound():
    assert sqrt_sum(0) == 0.0 and sqrt_sum(1) == 1.0
    assert sqrt_sum(1000) == pytest.approx(sum(math.sqrt(k) for k in range(1, 1001)), rel=1e-14)
    N = 3 * 10**6  # past EXACT_TERMS: the concave bound, above the sum by less than 0.21
    import numpy as np

    exact = math.fsum(np.sqrt(np.arange(1, N + 1, dtype=np.float64)).tolist())
    assert exact <= sqrt_sum(N) <= exact + 0.21


@pytest.mark.slow  # the full tier instruments the package (tests/conftest.py, TYPECHECKED)
def test_the_test_run_instruments_the_package_with_typeguard():
    # The full tier runs with typeguard's import hook on replify and replify_plugins: internal
    # functions are type-checked too, not only the public boundary.
    from typeguard import TypeCheckError

    with pytest.raises(TypeCheckError):
        concentration_radius("3", 100, 0.1)


@pytest.mark.parametrize("T,n,rho,B", [(10_000, 10, 0.1, 2500), (10**6, 2, 0.05, 10**5), (12345, 7, 0.3, 1000)])
@pytest.mark.parametrize("norm", ["linf", "l1"])
def test_certified_eps_makes_the_union_bound_exactly_rho(T, n, rho, B, norm):
    eps = replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B, norm=norm)
    p = framework_params(horizon=T, n=n, rho=rho, norm=norm, block_size=B, eps=eps)
    assert p.replicability_bound == pytest.approx(rho, rel=1e-12)
    if norm == "linf":  # the default is the l-infinity framework, as for wrap() of a plain factory
        assert replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B) == eps


def test_certified_eps_refuses_impossible_requests():
    from replify.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="leaves no transition"):
        replify.certified_eps(horizon=100, n=2, rho=0.1, block_size=100)


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(BlockSizeWarning) as record:
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0)
    assert record[0].filename == __file__


def test_the_theorems_block_size_exceeds_T_up_to_about_7e7_as_the_readme_says():
    # README and certified_eps' docstring: "exceeds T up to T ≈ 7·10⁷ at n = 10, ρ = 0.1"
    with pytest.warns(BlockSizeWarning, match="reaches the horizon"):  # replify warns, as the README says
        assert framework_params(horizon=7 * 10**7, n=10, rho=0.1, norm="linf").block_size_theorem >= 7 * 10**7
    assert framework_params(horizon=8 * 10**7, n=10, rho=0.1, norm="linf").block_size_theorem < 8 * 10**7
