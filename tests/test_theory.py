import math

import pytest

import replify
from replify.errors import BlockSizeWarning
from replify.theory import concentration_radius, concentration_tail, framework_params

CASES = [(10**6, 10, 0.1), (10**7, 2, 0.05), (5 * 10**7, 64, 0.2), (2 * 10**6, 1000, 0.01)]


def paper_B_eps(T, n, rho, norm):
    """The formulas as printed in the paper, written out independently of replify.theory."""
    p = math.sqrt(2 * math.log(4 * T / rho) / n) + 2  # corollaries of sec. 5
    m = p * math.sqrt(n * T)
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
    assert p.replicability_bound == pytest.approx(2 * (p.gamma + p.eps * p.m) * (p.n_blocks - 1))


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
    with pytest.warns(BlockSizeWarning, match=r"B=30204\.3 reaches the horizon T=10000 \(n=10, rho=0\.1\); using B=10000"):
        p = framework_params(horizon=10_000, n=10, rho=0.1, norm="linf")
    assert p.block_size == 10_000 and p.n_blocks == 1
    with pytest.warns(BlockSizeWarning, match="requested block size B=20000 reaches the horizon T=1000"):
        assert framework_params(horizon=1000, n=2, rho=0.5, norm="linf", block_size=20000).block_size == 1000


def test_wrap_exposes_the_parameters_in_force(spy):
    learner = replify.wrap(spy, n=4, horizon=10**6, rho=0.2, seed=0)
    assert learner.block_size == learner.params.block_size and learner.eps == learner.params.eps
    assert learner.params.regret_bound is None  # a plain factory declares no regret bound
    hedge = replify.wrap("hedge", n=4, horizon=10**6, rho=0.2, seed=0)
    k = hedge.params.n_blocks
    # Hedge's bound sqrt(k ln n / 2) on [0,1] costs doubles on the [-1,1] scale it is fed on.
    expected = hedge.params.normaliser * 2 * math.sqrt(k * math.log(4) / 2)
    assert hedge.params.regret_bound == pytest.approx(expected)
    assert hedge.params.to_dict()["regret_bound"] == hedge.params.regret_bound


def test_concentration_tail_is_trivial_below_two():
    assert concentration_tail(1.0, 100, 4) == 1.0
    assert concentration_radius(100, 4, 0.1) > 2 * math.sqrt(400)


def test_the_test_run_instruments_the_package_with_typeguard():
    # The suite runs with --typeguard-packages=replify,replify_plugins: internal functions are
    # type-checked too, not only the public boundary.
    from typeguard import TypeCheckError

    with pytest.raises(TypeCheckError):
        concentration_tail("3", 100, 4)


@pytest.mark.parametrize("T,n,rho,B", [(10_000, 10, 0.1, 2500), (10**6, 2, 0.05, 10**5), (12345, 7, 0.3, 1000)])
def test_certified_eps_makes_the_union_bound_exactly_rho(T, n, rho, B):
    eps = replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B)
    p = framework_params(horizon=T, n=n, rho=rho, norm="linf", block_size=B, eps=eps)
    assert p.replicability_bound == pytest.approx(rho, rel=1e-12)


def test_certified_eps_refuses_impossible_requests():
    from replify.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="leaves no transition"):
        replify.certified_eps(horizon=100, n=2, rho=0.1, block_size=100)


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(BlockSizeWarning) as record:
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0)
    assert record[0].filename == __file__
