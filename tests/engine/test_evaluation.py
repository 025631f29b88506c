import json
import math

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError
from replify.base.randomness import DATA, child, seed_sequence
from replify.evaluation.stats import binomial_upper_tail, clopper_pearson, t_interval


def test_wrapped_hedge_is_replicable_where_hedge_is_not():
    # Parameters for which the (tightened) proof of thm:general-framework-guarantees-ell-infty
    # certifies rho: 4 blocks, and the eps that certified_eps gives.
    T, n, rho, pairs = 10_000, 10, 0.1, 200
    B = T // 4
    eps = replify.certified_eps(horizon=T, n=n, rho=rho, block_size=B, norm="linf")

    def wrapped(seed):
        return replify.wrap("hedge", n=n, horizon=T, rho=rho, seed=seed, block_size=B, eps=eps)

    report = replify.evaluate(wrapped, "iid-bernoulli", n=n, horizon=T, pairs=pairs, seed=0)
    # The failures are Binomial(200, p) with p <= rho by the theorem. Hedge on [0, 1] Bernoulli
    # costs is far from the worst case the bound is built for (the adversarial audits in
    # test_certificates.py are near it): its drift is a quarter of the charged one and a moved grid
    # point rarely moves Hedge's sampled action, so p is a few per cent at most. The check
    # is that the claim is not refuted: P(Bin(200, 0.1) >= failures) >= 1e-6, a check that a true
    # certificate fails with probability at most 1e-6.
    assert binomial_upper_tail(report.failures, pairs, rho) >= 1e-6
    assert report.regret_mean <= report.regret_bound

    # The same learner unwrapped, with the same seeds: Hedge re-samples every step from weights
    # that differ between S and S', so nearly every pair diverges somewhere.
    plain = replify.evaluate("hedge", "iid-bernoulli", n=n, horizon=T, pairs=pairs, seed=0)
    assert plain.rho_hat >= 0.9
    assert plain.first_divergence_median is not None and plain.agreement_mean < 1.0


def test_hedge_regret_stays_under_its_bound():
    report = replify.evaluate("hedge", "iid-bernoulli", n=10, horizon=10_000, pairs=50, seed=1)
    assert report.regret_bound == pytest.approx(np.sqrt(10_000 * np.log(10) / 2))
    assert report.regret_ci[1] <= report.regret_bound


class FollowTheLeader:
    """Deterministic, no run(): drives the step-by-step path of evaluate()."""

    def __init__(self, *, n, horizon, rng):
        self.n, self.horizon, self.total = n, horizon, np.zeros(n)

    def act(self):
        return int(np.argmin(self.total))

    def update(self, cost):
        self.total += cost


def test_report_matches_a_hand_computation_of_every_pair():
    n, T, pairs, seed = 3, 400, 12, 5
    report = replify.evaluate(
        lambda s: FollowTheLeader(n=n, horizon=T, rng=None), "iid-bernoulli", n=n, horizon=T, pairs=pairs,
        seed=seed, adversary_params={"means": [0.1, 0.6, 0.9]},
    )
    root = seed_sequence(seed)
    means = np.array([0.1, 0.6, 0.9])
    for k in range(pairs):
        runs, regrets = [], []
        for side in (0, 1):
            costs = (np.random.default_rng(child(root, DATA, k, side)).random((T, n)) < means).astype(float)
            cum = np.vstack([np.zeros(n), np.cumsum(costs, axis=0)[:-1]])
            actions = np.argmin(cum, axis=1)
            runs.append(actions)
            regrets.append(costs[np.arange(T), actions].sum() - costs.sum(axis=0).min())
        same = runs[0] == runs[1]
        assert report.identical[k] == same.all()
        assert report.agreement[k] == same.mean()
        assert report.first_divergence[k] == (0 if same.all() else np.argmin(same) + 1)
        assert np.array_equal(report.regret[k], regrets)
    assert 0 < report.failures < pairs  # both outcomes occur, so the check above is not vacuous
    assert report.rho_ci == clopper_pearson(report.failures, pairs)
    assert report.regret_ci == t_interval(report.regret.mean(axis=1))


def test_a_learner_without_run_is_stepped_and_gives_the_same_report():
    class StepOnly:
        def __init__(self, inner):
            self.inner = inner

        def act(self):
            return self.inner.act()

        def update(self, cost):
            self.inner.update(cost)

    kw = dict(n=4, horizon=500, pairs=6, seed=2)
    a = replify.evaluate("hedge", "iid-bernoulli", **kw)
    b = replify.evaluate(lambda s: StepOnly(replify.make("hedge", n=4, horizon=500, seed=s)), "iid-bernoulli", **kw)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.first_divergence, b.first_divergence)


def test_point_masses_are_replicated_by_any_learner_that_shares_its_randomness():
    costs = np.random.default_rng(3).random((300, 4))
    report = replify.evaluate("hedge", "point-mass", n=4, horizon=300, pairs=5, seed=0, adversary_params={"costs": costs})
    assert report.rho_hat == 0.0 and report.agreement_mean == 1.0 and report.first_divergence_median is None


def test_same_seed_same_report_and_to_dict_is_json():
    kw = dict(n=3, horizon=200, pairs=8, adversary_params={"means": 0.3})
    a = replify.evaluate("ftpl", "iid-bernoulli", seed=9, **kw)
    b = replify.evaluate("ftpl", "iid-bernoulli", seed=9, **kw)
    c = replify.evaluate("ftpl", "iid-bernoulli", seed=10, **kw)
    assert a.to_dict(per_pair=True) == b.to_dict(per_pair=True)
    assert not np.array_equal(a.regret, c.regret)
    d = json.loads(json.dumps(a.to_dict(per_pair=True)))
    assert d["rho_hat"] == a.rho_hat and d["rho_ci"] == list(a.rho_ci) and len(d["regret"]) == 8
    assert d["seed"] == 9 and d["learner"] == "ftpl" and d["adversary"] == "iid-bernoulli"


def test_report_carries_the_wrapped_learners_parameters():
    report = replify.evaluate(
        lambda s: replify.wrap("hedge", n=3, horizon=1000, rho=0.2, seed=s, block_size=100),
        "iid-bernoulli", n=3, horizon=1000, pairs=3, seed=0,
    )
    assert report.params["block_size"] == 100 and report.params["theorem"].startswith("thm:general-framework")
    assert report.regret_bound == report.params["regret_bound"]


def test_rho_is_passed_to_a_registered_replicable_learner():
    seen = {}

    class Replicable(FollowTheLeader):
        def __init__(self, *, n, horizon, rng, rho):
            super().__init__(n=n, horizon=horizon, rng=rng)
            seen["rho"] = rho

    class Plugin:
        @replify.hookimpl
        def register_learners(self, register):
            register(replify.LearnerSpec("throwaway-replicable", Replicable, "experts", guarantee="adversarial"))

    plugin = Plugin()
    replify.registry().register(plugin)
    try:
        replify.evaluate("throwaway-replicable", "iid-bernoulli", n=3, horizon=50, pairs=2, seed=0, rho=0.25)
        assert seen["rho"] == 0.25
        with pytest.raises(InvalidArgumentError, match=r"'throwaway-replicable' is adversarial-replicable and needs rho"):
            replify.make("throwaway-replicable", n=3, horizon=50, seed=0)
    finally:
        replify.registry().unregister(plugin)


def test_evaluate_accepts_a_distribution_sequence_object():
    seq = replify.make_adversary("iid-bernoulli", n=3, horizon=100, seed=1, means=0.2)
    report = replify.evaluate("ftpl", seq, n=3, horizon=100, pairs=3, seed=0)
    assert report.adversary == "IidBernoulli"
    with pytest.raises(InvalidArgumentError, match="adversary_params applies only"):
        replify.evaluate("ftpl", seq, n=3, horizon=100, pairs=3, seed=0, adversary_params={"means": 0.1})


def test_evaluate_refuses_vector_actions_with_a_clear_error():
    class Vector(FollowTheLeader):
        def act(self):
            return np.full(self.n, 1.0 / self.n)

    with pytest.raises(replify.errors.ActionError, match=r"expected an integer expert index"):
        replify.evaluate(lambda s: Vector(n=3, horizon=10, rng=None), "iid-bernoulli", n=3, horizon=10, pairs=2, seed=0)


# -- a report read back from data: every relation between its fields -----------------------------

@pytest.fixture(scope="module")
def genuine():
    """Three genuine reports as data: a per-step learner whose pairs part (hedge), a block learner
    whose pairs part, with drift and disagreement counts per block (ftplb-star, B = 50), and one whose
    pairs never part (constant); each with the cost range the engine held every cost to (the
    learner's domain, which ``Outcomes.cost_range`` carries)."""
    import attrs
    import warnings

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", replify.errors.ReplifyWarning)  # B = 50 is not the theorem's
        for key, learner, kw in (
            ("hedge", "hedge", dict(horizon=100, pairs=6, seed=0)),
            ("blocks", "ftplb-star", dict(horizon=600, pairs=12, seed=1, rho=0.1, block_size=50, eps=0.5, fast_path=False,
                                          adversary_params={"means": [0.4, 0.5, 0.6]})),
            ("constant", "constant", dict(horizon=100, pairs=6, seed=0)),
        ):
            report = replify.evaluate(learner, "iid-bernoulli", n=3, **kw)
            # the domain the engine enforces: the learner's own, else its spec's (as evaluate hands it over)
            built = replify.make(learner, n=3, horizon=kw["horizon"], seed=0, **({"rho": 0.1} if "rho" in kw else {}))
            domain = getattr(built, "domain", None) or replify.learners()[learner].domain
            # constant takes any finite cost (it never looks at one): its spec's range, which these costs lie in
            finite = math.isfinite(domain.low) and math.isfinite(domain.high)
            report = attrs.evolve(report, cost_range=(domain.low, domain.high) if finite else
                                  replify.learners()[learner].cost_range)
            out[key] = json.loads(json.dumps(report.to_dict(per_pair=True)))
    assert out["hedge"]["failures"] > 0 and out["blocks"]["failures"] > 0 and out["constant"]["failures"] == 0
    return out


def _edit(data, field, change):
    """``data`` with ``field`` changed by ``change`` (a function of a copy of its value)."""
    out = json.loads(json.dumps(data))
    out[field] = change(out[field])
    return out


def _at(value, index, new):
    """A nested list with the entry at ``index`` (a tuple) set to ``new``."""
    inner = value
    for i in index[:-1]:
        inner = inner[i]
    inner[index[-1]] = new(inner[index[-1]]) if callable(new) else new
    return value


def _parted(data):
    return next(k for k, f in enumerate(data["first_divergence"]) if f > 0)


def _identical(data):
    return next(k for k, same in enumerate(data["identical"]) if same)


def _swap_unequal_bins(curve):
    """The agreement curve with two bins of one width and different fractions swapped: the same
    total, other bins."""
    f, e = curve["fraction"], curve["edges"]
    i = next(i for i in range(1, len(f)) if f[i] != f[0] and e[i + 1] - e[i] == e[1] - e[0])
    f[0], f[i] = f[i], f[0]
    return curve


def _move_one_step(counts, pair):
    """Run 0 of ``pair`` credited with one step more of its least played expert, one less of its
    most played: the same total."""
    row = counts[pair][0]
    row[row.index(min(row))] += 1
    row[row.index(max(row))] -= 1
    return counts


RELATIONS = [
    # a pair that parts agrees on fewer than T steps (and on the f - 1 before its first divergence)
    ("hedge", lambda d: _edit(d, "agreement", lambda a: _at(a, (_parted(d),), 1.0)),
     r"pair \d+ parts at first_divergence=\d+, so its runs agree .* got 1\.0"),
    ("hedge", lambda d: _edit(d, "agreement", lambda a: _at(a, (_parted(d),), lambda v: v - 0.001)),
     r"agreement .* is not a whole number of the horizon=100 steps"),
    ("blocks", lambda d: _edit(d, "first_divergence", lambda f: _at(f, (_parted(d),), lambda v: v + 1)),
     r"pair \d+ first differs at step \d+, inside a segment of segment_length=50 steps"),
    # every pair identical, yet pairs said to differ on a segment
    ("constant", lambda d: _edit(d, "disagreement_counts", lambda c: _at(c, (0,), 3)),
     r"disagreement_counts\[0\] = 3 pairs differ on steps 1\.\.100, but only 0 have parted by then"),
    ("blocks", lambda d: _edit(d, "disagreement_counts", lambda c: _at(c, (0,), 3)),
     r"disagreement_counts\[0\] = 3 pairs differ on steps 1\.\.50, but only 0 have parted"),
    ("blocks", lambda d: _edit(d, "disagreement_counts", lambda c: [0] * len(c)),
     r"disagreement_counts\[1\] = 0, but 2 pairs first differ on steps 51\.\.100"),
    ("blocks", lambda d: _edit(d, "disagreement_counts", lambda c: _at(c, (2,), lambda v: v + 1)),
     r"disagreement_counts add up to \d+ pair-steps .* but agreement leaves \d+"),
    ("blocks", lambda d: _edit(d, "disagreement_counts", lambda c: c[:-1]),
     r"one count per segment of segment_length=50 steps, ceil\(horizon / segment_length\) = 12; got 11"),
    ("hedge", lambda d: _edit(d, "agreement_curve", lambda c: c | {"fraction": _at(c["fraction"], (0,), 0.5)}),
     r"agreement_curve adds up to .* but agreement gives"),
    ("hedge", lambda d: _edit(d, "agreement_curve", _swap_unequal_bins),
     r"agreement_curve\[\d+\] = .* but disagreement_counts put"),
    # each run plays one expert a step; a pair's runs differ only where they disagree
    ("hedge", lambda d: _edit(d, "action_counts", lambda c: _at(c, (0, 0, 0), lambda v: v + 1)),
     r"action_counts\[0\]\[0\] add up to 101 steps, but every run plays one expert at each of the horizon=100"),
    ("blocks", lambda d: _edit(d, "action_counts", lambda c: _move_one_step(c, _identical(d))),
     r"pair \d+'s two runs' action_counts differ by 2 \(l1\), but they disagree on 0 steps"),
    ("hedge", lambda d: _edit(d, "action_counts", lambda c: _at(_at(c, (0, 0, 0), lambda v: v + 0.5), (0, 0, 1),
                                                                lambda v: v - 0.5)),
     r"action_counts must be whole numbers of steps"),
    ("hedge", lambda d: _edit(d, "constant_regret", lambda c: None), r"action_counts and constant_regret come together"),
    # regrets: what costs in the cost range can give, and the regret curve ends at the regret
    ("hedge", lambda d: _edit(d, "constant_regret", lambda c: _at(c, (0, 0), -1.0)), r"constant_regret must be numbers >= 0"),
    ("hedge", lambda d: _edit(d, "constant_regret", lambda c: _at(c, (0, 0), 1e9)),
     r"constant_regret\[0, 0\] = 1000000000\.0, but with every cost in cost_range \[0, 1\] one expert's total"),
    ("hedge", lambda d: _edit(d, "pseudo_regret", lambda c: _at(c, (0, 1), -1e9)),
     r"pseudo_regret\[0, 1\] = -1000000000\.0, but with every cost in cost_range \[0, 1\] a pseudo-regret over "
     r"horizon=100 steps is at most 100"),
    ("hedge", lambda d: _edit(d, "regret", lambda c: _at(c, (0, 0), 150.0)), r"regret\[0, 0\] = 150\.0, but with every"),
    ("hedge", lambda d: _edit(d, "regret_curve_values", lambda c: _at(c, (0, 1, -1), lambda v: v + 1.0)),
     r"regret_curve_values\[0\]\[1\] ends at .* at step 100, but the run's regret is .*: the curve's last point"),
    ("blocks", lambda d: _edit(d, "curve_steps", lambda s: _at(s, (0,), 40)),
     r"curve_steps must be the ends of agreement_curve's bins"),
    ("blocks", lambda d: _edit(d, "drift_steps", lambda s: _at(s, (0,), 49)),
     r"drift_steps must be block ends inside the horizon"),
    ("blocks", lambda d: _edit(d, "drift", lambda s: _at(s, (0, 0, 0), 0.0) if s[0][0][1] > 0 else _at(s, (0, 0, 1), 1.0)),
     r"drift\[0\]\[0\] = .* the l1 norm of c_\(1:t\) - c'_\(1:t\) is at least its max minus its min"),
    ("blocks", lambda d: _edit(d, "curve_edges", lambda e: _at(e, (1,), lambda v: v + 1)),
     r"curve_edges .* differ from agreement_curve's edges"),
    ("hedge", lambda d: _edit(d, "cost_range", lambda r: [1.0, 0.0]), r"cost_range must be \[low, high\] with low <= high"),
    # what params, provenance and the summaries state
    ("blocks", lambda d: _edit(d, "regret_bound", lambda b: b * 2), r"params state the learner's regret bound"),
    ("hedge", lambda d: _edit(d, "provenance", lambda p: p | {"configuration": p["configuration"] | {"n": 4}}),
     r"provenance's configuration has n=4, but the report's n is 3"),
    ("hedge", lambda d: _edit(d, "provenance", lambda p: p | {"seed_entropy": 1}),
     r"provenance's seed_entropy 1 .* is not the report's seed 0"),
    ("hedge", lambda d: d | {"pseudo_regrets": [[0.0, 0.0]] * 6}, r"unknown field 'pseudo_regrets'"),
]


#: What to_dict states beside the fields, computed from them.
SUMMARIES = ("failures", "rho_hat", "rho_ci", "rho_ci_kind", "rho_ci_fixed_n", "agreement_mean", "first_divergence_median",
             "regret_mean", "regret_ci", "certified", "claim", "pseudo_regret_mean", "pseudo_regret_ci", "learning_gain",
             "learning_gain_ci", "max_step_disagreement", "max_step_disagreement_ci", "concentration", "pairs_run",
             "transition_divergence", "transition_bound", "regret_curve")


@pytest.mark.parametrize("which, change, message", RELATIONS, ids=[m[:40] for _, _, m in RELATIONS])
def test_from_dict_holds_every_field_to_the_others(genuine, which, change, message):
    data = genuine[which]
    replify.Report.from_dict(data)  # the untouched data read back
    with pytest.raises(InvalidArgumentError, match=message):
        replify.Report.from_dict(change(data))
    # a relation between fields holds on the fields alone, without the summaries that might also
    # give an edit away
    fields = {k: v for k, v in data.items() if k not in SUMMARIES}
    replify.Report.from_dict(fields)
    with pytest.raises(InvalidArgumentError, match=message):
        replify.Report.from_dict(change(fields))


@pytest.mark.parametrize("summary, change, message", [
    ("learning_gain", lambda g: g + 1.0, r"learning_gain is stated as .* but the per-pair rows give .* \(from constant_regret "
                                         r"- regret\)"),
    ("regret_curve", lambda c: c | {"mean": _at(c["mean"], (0,), lambda v: v + 1.0)}, r"regret_curve is stated as"),
    ("rho_ci", lambda c: [0.0, 1.0], r"rho_ci is stated as \[0\.0, 1\.0\]"),
    ("max_step_disagreement", lambda m: m / 2, r"max_step_disagreement is stated as .* \(from disagreement_counts, pairs\)"),
])
def test_from_dict_holds_every_summary_to_the_rows(genuine, summary, change, message):
    with pytest.raises(InvalidArgumentError, match=message):
        replify.Report.from_dict(_edit(genuine["hedge"], summary, change))


def test_one_edited_array_without_its_cost_range_is_still_refused_by_the_summaries_it_feeds(genuine):
    # no cost range to bound them: a constant regret of 1e9 (a learning gain of 1e9) and a
    # pseudo-regret of -1e9 contradict the summaries stated beside them
    data = _edit(genuine["hedge"], "cost_range", lambda r: None)
    replify.Report.from_dict(data)
    with pytest.raises(InvalidArgumentError, match=r"learning_gain is stated as .* \(from constant_regret - regret\)"):
        replify.Report.from_dict(_edit(data, "constant_regret", lambda c: _at(c, (0, 0), 1e9)))
    with pytest.raises(InvalidArgumentError, match=r"pseudo_regret_mean is stated as"):
        replify.Report.from_dict(_edit(data, "pseudo_regret", lambda c: _at(c, (0, 1), -1e9)))


def test_a_sequential_report_is_held_to_its_confidence_sequence():
    report = replify.evaluate("hedge", "ties", n=2, horizon=50, pairs=64, seed=0, target=0.5, sequential=True,
                              adversary_params={"k": 2})
    data = json.loads(json.dumps(report.to_dict(per_pair=True)))
    replify.Report.from_dict(data)
    lo, hi = data["sequential_interval"]
    with pytest.raises(InvalidArgumentError, match=r"sequential_interval .* is not the confidence sequence at alpha=0\.05"):
        replify.Report.from_dict(data | {"sequential_interval": [lo - 0.01, hi], "rho_ci": [lo - 0.01, hi]})
    flipped = 0.5 if data["sequential_p_value"] <= 0.05 else 0.01
    with pytest.raises(InvalidArgumentError, match=r"sequential_p_value .* and decision .* disagree"):
        replify.Report.from_dict(data | {"sequential_p_value": flipped})


def test_a_report_read_back_says_why_it_cannot_replay_and_what_to_do():
    report = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=50, pairs=4, seed=7)
    back = replify.Report.from_dict(json.loads(json.dumps(report.to_dict(per_pair=True))))
    with pytest.raises(InvalidArgumentError, match=r"read back by Report.from_dict.*replify\.evaluate\('hedge', "
                                                   r"'iid-bernoulli', n=3, horizon=50, seed=<this report's seed>.*pickling"):
        back.replay(0)
    # what it says to do works: the same configuration and seed give pair 0 again
    again = replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=50, pairs=4, seed=7)
    assert again.replay(0).regret == pytest.approx(tuple(back.regret[0]))
