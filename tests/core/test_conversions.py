"""The conversions are plugins (replify.conversions, docs/plugins.md "Registering a conversion"):
wrap resolves the learner once and hands it to the registered conversion that serves it; a
conversion's misplaced option is refused naming the conversion that takes it; a third party
registers one through the same hook."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

import replify
from replify.conversions import ContextualOptions, ExpertsOptions, ReplicableContextual, ReplicableLearner
from replify.errors import DuplicateNameError, InvalidArgumentError


class Linear:
    """A user's contextual learner: greedy on a fixed direction."""

    problem, feedback = "contextual", "bandit"

    def __init__(self, *, n, horizon, rng):
        self.n = n

    def act(self, context):
        return int(np.argmin(np.asarray(context).sum(axis=1)))

    def update(self, action, cost):
        pass


def test_the_built_in_conversions_are_registered_with_their_options():
    table = replify.conversions()
    assert set(table) >= {"experts", "bandit", "contextual"}
    assert table["experts"].options is ExpertsOptions and "norm" in table["experts"].option_names
    assert table["contextual"].options is ContextualOptions and "feed_rows" in table["contextual"].option_names
    assert table["bandit"].feedback == ("bandit",) and table["contextual"].problems == ("contextual",)
    assert all(c.default and c.docs for c in table.values() if c.name in ("experts", "bandit", "contextual"))


@pytest.mark.parametrize("learner,kind", [("hedge", ReplicableLearner), (Linear, ReplicableContextual)])
def test_wrap_resolves_the_learner_once(monkeypatch, learner, kind):
    import sys

    import replify.wrapper as wrapper

    resolving = sys.modules["replify.conversions.resolve"]

    calls = []
    original = resolving.resolve

    def counted(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(wrapper, "resolve", counted)
    monkeypatch.setattr(resolving, "resolve", counted)
    looked_up = []
    registry = replify.registry()
    lookup = type(registry).learner
    monkeypatch.setattr(type(registry), "learner", lambda self, name: looked_up.append(name) or lookup(self, name))
    built = replify.wrap(learner, n=3, horizon=1_000, rho=0.1, seed=0, block_size=10) if learner == "hedge" else \
        replify.wrap(learner, n=3, horizon=1_000, rho=0.1, seed=0)
    assert isinstance(built, kind)
    assert len(calls) == 1 and len(looked_up) == (1 if learner == "hedge" else 0), (calls, looked_up)


@attrs.frozen(kw_only=True)
class FrozenOptions:
    learner_params: dict | None = None
    colour: str = "blue"


class Frozen:
    """A throwaway conversion: the learner's first action throughout (a function of R alone)."""

    problem, feedback = "experts", "full"

    def __init__(self, learner, *, n, horizon, rho, seed, options):
        inner = learner.factory(n=n, horizon=horizon, rng=replify.Streams.from_seed(seed).internal,
                                **(options.learner_params or {}))
        self.action, self.n, self.horizon, self.colour, self.name = int(inner.act()), n, horizon, options.colour, \
            learner.name

    def act(self):
        return self.action

    def update(self, cost):
        pass


class FrozenPlugin:
    @replify.hookimpl
    def register_conversions(self, register):
        register(replify.ConversionSpec("frozen", Frozen, FrozenOptions, ("experts",), ("full",)))


@pytest.fixture
def frozen():
    plugin = FrozenPlugin()
    replify.registry().register(plugin, name="throwaway-conversion")
    yield
    replify.registry().unregister(plugin)


def test_a_third_party_registers_a_conversion_through_the_hook(frozen):
    built = replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, conversion="frozen", colour="red")
    assert isinstance(built, Frozen) and built.colour == "red" and built.name == "hedge"
    assert {built.act() for _ in range(3)} == {built.action}
    # the default stays the built-in where none is named
    assert isinstance(replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, block_size=10), ReplicableLearner)
    # its own option anywhere else is refused, naming it; a built-in's option given to it likewise
    with pytest.raises(InvalidArgumentError, match="colour='red' is an option of the 'frozen' conversion"):
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, block_size=10, colour="red")
    with pytest.raises(InvalidArgumentError, match="served by the 'frozen' conversion.*block_size=5 is an option of the "
                                                   "'experts' conversion"):
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, conversion="frozen", block_size=5)
    # the decorator form takes it too
    factory = replify.wrap(horizon=100, rho=0.1, conversion="frozen")(replify.learners()["hedge"].factory)
    assert isinstance(factory(n=3, seed=0), Frozen)
    # a conversion that does not serve the learner's problem is refused
    with pytest.raises(InvalidArgumentError, match="conversion='frozen' serves experts learners"):
        replify.wrap(Linear, n=3, horizon=100, rho=0.1, seed=0, conversion="frozen")


def test_an_option_of_no_conversion_and_a_duplicate_name_are_refused(frozen):
    with pytest.raises(InvalidArgumentError, match="size=3 is an option of no registered conversion"):
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, size=3)
    with pytest.raises(replify.errors.UnknownNameError, match="no conversion named 'melt'"):
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, conversion="melt")

    class Again:
        @replify.hookimpl
        def register_conversions(self, register):
            register(replify.ConversionSpec("frozen", Frozen, FrozenOptions, ("experts",)))

    again = Again()
    replify.registry().register(again, name="again")
    try:
        with pytest.raises(DuplicateNameError, match="conversion name 'frozen' is registered twice"):
            replify.conversions()
    finally:
        replify.registry().unregister(again)


def test_a_conversion_spec_checks_what_it_is_given():
    with pytest.raises(InvalidArgumentError, match="options must be an attrs class"):
        replify.ConversionSpec("x", Frozen, dict, ("experts",))
    with pytest.raises(InvalidArgumentError, match="problems must be a non-empty tuple"):
        replify.ConversionSpec("x", Frozen, FrozenOptions, ("bandits",))
