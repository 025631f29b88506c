"""Unknown horizons: the doubling trick with a split replicability budget."""


import numpy as np
import pytest

import replify
from replify.anytime import epoch_rho
from replify.errors import InvalidArgumentError
from replify.evaluation.stats import binomial_upper_tail


def test_the_budget_split_sums_to_rho():
    assert sum(epoch_rho(0.1, k) for k in range(100_000)) == pytest.approx(0.1, rel=1e-4)
    assert all(epoch_rho(0.1, k) > epoch_rho(0.1, k + 1) for k in range(10))


@pytest.mark.parametrize("wrap", [False, True])
def test_epochs_double_and_stepping_equals_run(wrap):
    name = "hedge" if wrap else "ftplb-star"
    costs = (np.random.default_rng(0).random((1000, 4)) < 0.4).astype(float)
    a = replify.anytime(name, rho=0.1, n=4, seed=3, first_epoch=64, wrap=wrap)
    b = replify.anytime(name, rho=0.1, n=4, seed=3, first_epoch=64, wrap=wrap)
    stepped = []
    for c in costs:
        stepped.append(a.act())
        a.update(c)
    assert np.array_equal(np.array(stepped), np.concatenate([b.run(costs[:300]), b.run(costs[300:])]))
    p = a.params
    assert [e.length for e in p.epochs] == [64, 128, 256, 512, 1024]  # 1000 steps end inside the fifth epoch
    assert [e.start for e in p.epochs] == [0, 64, 192, 448, 960]
    # the summed certificate is the sum of the epochs' own bounds, each within its share rho_k
    assert p.certified and p.replicability_bound == pytest.approx(sum(e.replicability_bound for e in p.epochs))
    assert p.replicability_bound <= 0.1
    assert all(e.certified and e.replicability_bound <= e.rho * (1 + 1e-9) for e in p.epochs)
    assert p.regret_bound == pytest.approx(sum(e.regret_bound for e in p.epochs))


def test_anytime_is_replicable_and_learns_with_evaluate():
    T, n = 20_000, 4
    means = {"means": np.linspace(0.3, 0.7, n)}
    report = replify.evaluate(lambda s: replify.anytime("ftplb-star", rho=0.1, n=n, seed=s, first_epoch=1024),
                              "iid-bernoulli", n=n, horizon=T, pairs=100, seed=0, adversary_params=means)
    # certified for every T: the failures are Binomial(100, <= 0.1); not refuted at 1e-6
    assert binomial_upper_tail(report.failures, 100, 0.1) >= 1e-6
    # No claim that it learns here: with certified parameters in every epoch it does not at T = 2e4
    # (gain over constant within noise of 0), which the report shows rather than hides.
    assert report.learning_gain_ci is not None and report.pairs == 100


def test_anytime_arguments_are_checked():
    with pytest.raises(InvalidArgumentError, match=r"block_fraction must lie strictly between 0 and 1, got 1\.5"):
        replify.anytime("ftplb-star", rho=0.1, n=3, seed=0, block_fraction=1.5)
    with pytest.raises(InvalidArgumentError, match=r"first_epoch must be an integer >= 2, got 1"):
        replify.anytime("ftplb-star", rho=0.1, n=3, seed=0, first_epoch=1)


@pytest.mark.slow
def test_the_anytime_certificate_survives_ties_and_the_wrapped_audit():
    # The certificate (rho for every T) against the hardest adversaries we have: two-way ties for the
    # leader, and random signs for the wrapped Hedge (every grid difference moves its weights). The
    # failures are Binomial(150, <= 0.1) if it holds; a check fails when P(Bin(150, 0.1) >= failures)
    # < 1e-6, so a true certificate fails it with probability <= 1e-6.
    T, n, pairs = 4_000, 3, 150
    ties = replify.evaluate(lambda s: replify.anytime("ftplb-star", rho=0.1, n=n, seed=s, first_epoch=512),
                            "ties", n=n, horizon=T, pairs=pairs, seed=4, adversary_params={"k": 2})
    signs = replify.evaluate(lambda s: replify.anytime("hedge", rho=0.1, n=n, seed=s, first_epoch=512, wrap=True),
                             "random-signs", n=n, horizon=T, pairs=pairs, seed=5)
    for report in (ties, signs):
        assert binomial_upper_tail(report.failures, pairs, 0.1) >= 1e-6, report.rho_hat


def test_the_users_eps_and_block_size_win_and_the_certificate_follows_them():
    # both raised Python's "got multiple values for keyword argument"
    costs = (np.random.default_rng(1).random((700, 3)) < 0.4).astype(float)
    with pytest.warns(replify.errors.ReplicabilityWarning, match=r"epoch 0 \(T_k=128\) is not certified"):
        loose = replify.anytime("ftplb-star", rho=0.1, n=3, seed=0, first_epoch=128, eps=0.01)
        loose.run(costs)
    epochs = loose.params.epochs
    assert [loose._current.params.eps] == [0.01] and not loose.params.certified
    # each epoch states what eps = 0.01 gives, above its share: the certificate follows the user's eps
    assert all(not e.certified and e.replicability_bound > e.rho for e in epochs)
    blocks = replify.anytime("ftplb-star", rho=0.1, n=3, seed=0, first_epoch=128, block_size=16)
    blocks.run(costs)
    assert blocks._current.params.block_size == 16
    # eps certified for B = 16 in every epoch
    assert blocks.params.certified and all(e.certified and e.replicability_bound <= e.rho * (1 + 1e-9)
                                           for e in blocks.params.epochs)
    with pytest.raises(InvalidArgumentError, match=r"anytime\(\) builds each epoch's learner for that epoch .*got "
                                                   r"horizon=500: leave it out"):
        replify.anytime("ftplb-star", rho=0.1, n=3, seed=0, horizon=500)
