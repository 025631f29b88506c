"""Replicability asserted in a test suite (:func:`assert_replicable`), and every check of every spec
as pytest cases (:func:`parametrize_with_checks`)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator


from replify.base.checks import check_int, check_probability, check_rho
from replify.errors import ArgumentTypeError, InvalidArgumentError
from replify.evaluation.evaluate import evaluate
from replify.plugins.registry import registry
from replify.plugins.specs import AdversarySpec, LearnerSpec
from replify.sources import learner_arg
from replify.testing.adversaries import ADVERSARY_CHECKS
from replify.testing.learners import LEARNER_CHECKS, learner_spec


def assert_replicable(
    learner: Any, adversary: Any, *, rho: float, n: int, horizon: int, alpha: float = 0.05, max_pairs: int = 2000,
    seed: int = 0, **evaluate_kw: Any,
) -> Any:
    """Assert that ``learner`` is ρ-replicable on ``adversary`` (measured): run pairs in batches
    until the anytime-valid confidence sequence for the failure rate lies below ``rho`` (pass; the
    report is returned) or above it, or ``max_pairs`` are spent (fail, with ρ̂, the interval and
    the pairs run). False alarms: a learner whose failure rate is at most ρ is declared "above" with
    probability at most ``alpha``; it can also fail "undecided" when its rate is so close to ρ that
    ``max_pairs`` do not separate them (about (1/(ρ − rate))²·ln(1/α) pairs are needed).

    ``learner`` is anything :func:`replify.evaluate` takes; one that cannot be built without ρ (a
    replicable registered learner, a class wrapped without ``rho``) is built at ``rho``. The
    other keywords (``label``, ``adversary_params``, hyperparameters, …) go to evaluate."""
    # Checked here, so that a bad value is named as this function's argument, not evaluate()'s
    # (rho is evaluate's target, max_pairs its pairs).
    rho = check_rho(rho)
    alpha = check_probability("alpha", alpha, open_low=True, open_high=True)
    max_pairs = check_int("max_pairs", max_pairs, minimum=2)
    if "rho" in evaluate_kw:
        raise InvalidArgumentError(
            "assert_replicable(rho=...) is the rho asserted, and the rho a learner that needs one is built with; "
            f"got another rho={evaluate_kw['rho']!r} in the keywords for evaluate"
        )
    if learner_arg(learner, label=evaluate_kw.get("label")).needs_rho():
        evaluate_kw["rho"] = rho
    report = evaluate(learner, adversary, n=n, horizon=horizon, pairs=max_pairs, seed=seed, target=rho,
                      sequential=True, alpha=alpha, **evaluate_kw)
    if report.decision != "below":
        lo, hi = report.sequential_interval
        raise AssertionError(
            f"{report.learner} is not shown {rho}-replicable on {report.adversary}: decision {report.decision!r} "
            f"after {report.pairs} pairs, rho_hat={report.rho_hat:.4f}, anytime-valid {1 - alpha:.0%} interval "
            f"[{lo:.4f}, {hi:.4f}]"
        )
    return report


def _any_spec(spec: Any) -> Any:
    """A learner or adversary spec: a spec as it is, a registered name (learners first), or —
    as :func:`check_learner` takes them — any learner :func:`replify.evaluate` takes
    (:func:`learner_spec`)."""
    if isinstance(spec, (LearnerSpec, AdversarySpec)):
        return spec
    if isinstance(spec, str) and spec not in registry().learners() and spec in registry().adversaries():
        return registry().adversary(spec)
    if isinstance(spec, str) or callable(spec):
        return learner_spec(spec, argument="specs", caller="parametrize_with_checks")
    raise ArgumentTypeError(
        f"specs must hold LearnerSpec or AdversarySpec objects, registered names, or learners as check_learner takes "
        f"them (a class or factory, a wrapped class, a callable seed -> learner, a 'module:Name' reference); got "
        f"{spec!r} ({type(spec).__name__})"
    )


def _cases(specs: Iterable[Any]) -> Iterator[tuple[Any, Callable[[Any], None]]]:
    if isinstance(specs, (str, LearnerSpec, AdversarySpec)) or not isinstance(specs, Iterable):
        raise ArgumentTypeError(
            f"specs must be an iterable of specs (or registered names), e.g. replify.learners().values(); "
            f"got {specs!r} ({type(specs).__name__})"
        )
    for spec in map(_any_spec, specs):
        checks = LEARNER_CHECKS if isinstance(spec, LearnerSpec) else ADVERSARY_CHECKS
        for check in checks:
            yield spec, check


def parametrize_with_checks(specs: Any) -> Any:
    """A ``pytest.mark.parametrize("spec, check", ...)`` over every check of every spec, as
    scikit-learn's ``parametrize_with_checks``: ``def test_conformance(spec, check): check(spec)``.
    ``specs`` holds specs, registered names, and any learner :func:`check_learner` takes (a class
    wrapped without ``rho``: ``learner_spec(MyClass, rho=0.1)``)."""
    import pytest  # only in a test run: replify itself does not depend on pytest

    cases = list(_cases(specs))
    return pytest.mark.parametrize("spec, check", cases, ids=[f"{s.name}-{c.__name__}" for s, c in cases])
