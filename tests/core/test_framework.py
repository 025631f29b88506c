import numpy as np
import pytest

import replify
from replify.components import blocks
from replify.errors import BlockSizeWarning
from replify.components.grid import grid_point

from conftest import RandomHedge


def step_all(learner, costs):
    out = []
    for c in costs:
        out.append(learner.act())
        learner.update(c)
    return np.array(out)


@pytest.mark.parametrize("norm", ["linf", "l1"])
@pytest.mark.parametrize("factory", [RandomHedge, "hedge", "ftpl"])
def test_run_is_bit_identical_to_stepping(norm, factory, monkeypatch):
    monkeypatch.setattr(blocks, "CHUNK_ROWS", 97)  # cross many chunk boundaries
    T, n = 6000, 6
    costs = np.random.default_rng(1).uniform(-0.015, 0.015, (T, n))
    costs[:, 0] = np.where(np.arange(T) < T // 5, -0.9, 0.9)  # a leader that turns into a loser
    kw = dict(n=n, horizon=T, rho=0.1, seed=11, norm=norm, block_size=37, eps=0.5)
    stepped = step_all(replify.wrap(factory, **kw), costs)
    batch = replify.wrap(factory, **kw).run(costs)
    mixed = replify.wrap(factory, **kw)
    parts = [mixed.run(costs[:500]), step_all(mixed, costs[500:1234]), mixed.run(costs[1234:])]
    assert np.array_equal(stepped, batch)
    assert np.array_equal(stepped, np.concatenate(parts))
    assert len(set(stepped.tolist())) > 1  # the test would catch a learner stuck on one action


def test_actions_change_only_at_transitions_and_internal_runs_once_per_block(spy):
    T, B = 1000, 64
    costs = np.random.default_rng(2).random((T, 5))
    learner = replify.wrap(spy, n=5, horizon=T, rho=0.1, seed=0, block_size=B, eps=0.5)
    actions = learner.run(costs)
    changes = np.flatnonzero(np.diff(actions)) + 2  # 1-based steps where the action changed
    assert np.all((changes - 1) % B == 0)  # transitions are t = kB + 1
    (internal,) = spy.instances
    assert internal.horizon == -(-T // B) == 16
    assert len(internal.fed) == 15 and internal.acts == 16


@pytest.mark.parametrize("norm", ["linf", "l1"])
def test_without_rounding_the_internal_learner_gets_the_normalised_block_sums(spy, norm):
    T, n, B, eps = 1000, 4, 100, 0.25
    costs = (np.random.default_rng(3).random((T, n)) < 0.3).astype(float) / (n if norm == "l1" else 1)
    learner = replify.wrap(spy, n=n, horizon=T, rho=0.1, seed=0, block_size=B, eps=eps, rounding=False, norm=norm)
    learner.run(costs)
    normaliser = B + (2 if norm == "linf" else 2 * n) / eps
    expected = costs[: T - B].reshape(-1, B, n).sum(axis=1) / normaliser  # blocks 1..9, in order
    assert np.array_equal(np.array(spy.instances[0].fed), expected)


def test_without_rounding_and_unit_blocks_the_wrapper_plays_the_internal_learner(spy):
    T, n, eps = 300, 3, 0.5
    costs = np.random.default_rng(4).random((T, n))
    wrapped = replify.wrap(RandomHedge, n=n, horizon=T, rho=0.1, seed=5, block_size=1, eps=eps, rounding=False)
    direct = RandomHedge(n=n, horizon=T, rng=replify.Streams.from_seed(5).internal)
    assert np.array_equal(wrapped.run(costs), step_all(direct, costs / (1 + 2 / eps)))


def test_a_learner_expecting_unit_costs_gets_the_affine_image(spy):
    spec = replify.LearnerSpec("unit-spy", spy, "experts", cost_range=(0, 1))
    T, n, B, eps = 400, 3, 50, 0.5
    costs = np.random.default_rng(6).random((T, n))
    replify.wrap(spec, n=n, horizon=T, rho=0.1, seed=0, block_size=B, eps=eps, rounding=False).run(costs)
    x = costs[: T - B].reshape(-1, B, n).sum(axis=1) / (B + 2 / eps)
    assert np.allclose(np.array(spy.instances[0].fed), (x + 1) / 2, rtol=1e-12, atol=0)


def test_with_rounding_the_fed_vector_is_a_difference_of_grid_points_in_their_cubes(spy):
    T, n, B, eps = 600, 4, 100, 0.05
    costs = np.random.default_rng(7).random((T, n))
    learner = replify.wrap(spy, n=n, horizon=T, rho=0.1, seed=8, block_size=B, eps=eps)
    learner.run(costs)
    # Replay the grid stream: two fresh offsets per transition, g for c_{1:kB}, g' for c_{1:(k-1)B}.
    u = replify.Streams.from_seed(8).grid.random((5, 2, n))
    cum = np.cumsum(costs, axis=0)[[B * k - 1 for k in range(1, 6)]]
    anchor = np.vstack([np.zeros(n), cum[:-1]])
    g, g_prev = grid_point(cum, u[:, 0], eps), grid_point(anchor, u[:, 1], eps)
    assert np.all((g >= cum) & (g < cum + 1 / eps)) and np.all((g_prev >= anchor) & (g_prev < anchor + 1 / eps))
    assert np.allclose(np.array(spy.instances[0].fed), (g - g_prev) / (B + 2 / eps), rtol=1e-12, atol=0)


def test_same_seed_same_costs_same_actions_and_seeds_matter():
    costs = np.random.default_rng(9).random((2000, 5))
    run = lambda seed: replify.wrap("hedge", n=5, horizon=2000, rho=0.1, seed=seed, block_size=20).run(costs)  # noqa: E731
    assert np.array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


def test_decorator_form_matches_function_form():
    @replify.wrap(horizon=2000, rho=0.1, norm="l1", block_size=50)
    class MyReplicableHedge(RandomHedge):
        """docs survive"""

    assert isinstance(MyReplicableHedge, replify.ReplicableFactory)
    assert MyReplicableHedge.__doc__ == "docs survive"
    costs = np.random.default_rng(10).random((2000, 4)) / 4
    a = MyReplicableHedge(n=4, seed=7)
    b = replify.wrap(RandomHedge, n=4, horizon=2000, rho=0.1, norm="l1", block_size=50, seed=7)
    assert a.params == b.params
    assert np.array_equal(a.run(costs), b.run(costs))


def test_default_parameters_on_a_short_horizon_warn_and_play_one_block():
    with pytest.warns(BlockSizeWarning, match="reaches the horizon T=100000"):
        learner = replify.wrap(RandomHedge, n=10, horizon=100_000, rho=0.1, norm="linf", seed=7)
    assert learner.block_size == 100_000
    actions = learner.run(np.random.default_rng(0).random((100_000, 10)))
    assert np.all(actions == actions[0])


def test_wrap_by_name_uses_the_registered_learner():
    learner = replify.wrap("hedge", n=10, horizon=10**5, rho=0.1, seed=7, block_size=1000)
    assert learner.spec is replify.learners()["hedge"]
    assert type(learner.internal).__name__ == "Hedge"


# -- the input contract: the internal learner sees exactly the domain its spec declares ----------


def _spec(spy, **kw):
    return replify.LearnerSpec("spy", spy, kw.pop("problem", "experts"), **kw)


@pytest.mark.parametrize("norm", ["linf", "l1"])
def test_a_zero_one_experts_learner_is_fed_zero_one_vectors(spy, norm):
    T, n = 4000, 8
    costs = np.random.default_rng(4).choice([-1.0, 1.0], size=(T, n)) / (n if norm == "l1" else 1)
    learner = replify.wrap(_spec(spy, norm="linf", cost_range=(0, 1)), n=n, horizon=T, rho=0.1, seed=0,
                           norm=norm, block_size=50, eps=0.05)
    learner.run(costs)
    fed = np.array(spy.instances[0].fed)
    assert fed.min() >= 0.0 and fed.max() <= 1.0 and fed.std() > 0


def test_an_l1_learner_is_fed_l1_bounded_vectors(spy):
    T, n = 4000, 8
    costs = np.zeros((T, n))
    costs[np.arange(T), np.random.default_rng(5).integers(0, n, T)] = 1.0  # l1 norm exactly 1
    learner = replify.wrap(_spec(spy, norm="l1", cost_range=(-1, 1)), n=n, horizon=T, rho=0.1, seed=0,
                           block_size=50, eps=0.05)
    learner.run(costs)
    fed = np.array(spy.instances[0].fed)
    assert np.abs(fed).sum(axis=1).max() <= 1.0 + 1e-12


def test_combinations_no_map_serves_are_refused(spy):
    kw = dict(n=8, horizon=1000, rho=0.1, seed=0, block_size=10)
    # l1-bounded costs in [0,1]: (x+1)/2 would have l1 norm up to (n+1)/2 (4.5 here).
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"learner 'spy' declares l1-bounded costs in \[0, 1\]"):
        replify.wrap(_spec(spy, norm="l1", cost_range=(0, 1)), norm="l1", **kw)
    # OLO with [0,1] costs: the affine map shifts each action's cost by a.1/2.
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"OLO learner with cost_range=\(0, 1\)"):
        replify.wrap(_spec(spy, problem="olo", cost_range=(0, 1)), **kw)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"norm must be 'l1' for learner 'spy'"):
        replify.wrap(_spec(spy, norm="l1", cost_range=(-1, 1)), norm="linf", **kw)


@pytest.mark.parametrize("name", ["ftplb-star", "fllb", "iid-experts", "hedge"])
def test_every_registered_learner_can_be_wrapped(name):
    T, n = 40_000, 4
    # The block learners' own theorem B would exceed the internal horizon of 400 (a warning).
    inner = {"block_size": 10} if name in ("ftplb-star", "fllb") else None
    learner = replify.wrap(name, n=n, horizon=T, rho=0.1, seed=0, block_size=100, learner_params=inner)
    assert learner.params.n_blocks == 400 and learner.internal.horizon == 400
    assert learner.params.regret_bound is not None and np.isfinite(learner.params.regret_bound)
    costs = (np.random.default_rng(6).random((T, n)) < np.linspace(0.2, 0.8, n)).astype(float) / (n if name == "fllb" else 1)
    actions = learner.run(costs)
    assert actions.shape == (T,) and actions.min() >= 0 and actions.max() < n


def test_learner_params_reach_the_internal_learner():
    learner = replify.wrap("hedge", n=3, horizon=1000, rho=0.1, seed=0, block_size=10, learner_params={"eta": 0.25})
    assert learner.internal.eta == 0.25
    inner = replify.wrap("ftplb-star", n=3, horizon=10_000, rho=0.1, seed=0, block_size=10,
                         learner_params={"block_size": 5, "eps": 0.01})
    assert (inner.internal.block_size, inner.internal.eps) == (5, 0.01)
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"learner_params must not set rho"):
        replify.wrap("ftplb-star", n=3, horizon=1000, rho=0.1, seed=0, block_size=10, learner_params={"rho": 0.2})
    with pytest.raises(replify.errors.InvalidArgumentError, match=r"learner 'hedge' does not accept 'gamma'"):
        replify.wrap("hedge", n=3, horizon=1000, rho=0.1, seed=0, block_size=10, learner_params={"gamma": 1})
