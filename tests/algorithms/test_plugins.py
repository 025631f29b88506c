import importlib.metadata as md
import textwrap

import pytest
from pluggy import PluginValidationError

import replify
from replify.errors import DuplicateNameError, ReplifyError, PluginLoadError, PluginLoadWarning, UnknownNameError
from replify.plugins.registry import BLOCK_ENV, STRICT_ENV, Registry

from conftest import RandomHedge


class LearnersPlugin:
    def __init__(self, *names):
        self.names = names

    @replify.hookimpl
    def register_learners(self, register):
        for name in self.names:
            register(replify.LearnerSpec(name, RandomHedge, "experts", description=f"test learner {name}"))


class FakeEntryPoint:
    """Duck-types importlib.metadata.EntryPoint, counting loads."""

    def __init__(self, name, target, dist=None):
        self.name, self.target, self.dist, self.loads = name, target, dist, 0

    def load(self):
        self.loads += 1
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


@pytest.fixture
def broken_distribution(tmp_path):
    """A real installed-looking distribution whose entry point names a module that does not exist."""
    info = tmp_path / "broken_replify_plugin-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-replify-plugin\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text("[replify]\nbroken = no_such_module_for_replify_tests\n")
    (dist,) = md.distributions(path=[str(tmp_path)])
    return dist


def test_throwaway_plugin_on_a_fresh_registry():
    reg = Registry(entry_points=())
    plugin = LearnersPlugin("alpha", "beta")
    reg.register(plugin, name="throwaway")
    assert list(reg.learners()) == ["alpha", "beta"]
    assert reg.learner("alpha").description == "test learner alpha"
    reg.unregister(plugin)
    assert dict(reg.learners()) == {}


def test_throwaway_plugin_on_the_process_registry_is_usable_by_name():
    plugin = LearnersPlugin("throwaway-hedge")
    replify.registry().register(plugin)
    try:
        learner = replify.make("throwaway-hedge", n=3, horizon=10, seed=0)
        assert isinstance(learner, RandomHedge)
    finally:
        replify.registry().unregister(plugin)
    with pytest.raises(UnknownNameError):
        replify.make("throwaway-hedge", n=3, horizon=10, seed=0)


def test_duplicate_names_raise_and_name_both_plugins():
    reg = Registry(entry_points=())
    reg.register(LearnersPlugin("same"), name="first")
    reg.register(LearnersPlugin("same"), name="second")
    with pytest.raises(DuplicateNameError, match=r"'same' is registered twice: by plugin '\w+' and by plugin '\w+'"):
        reg.learners()


def test_unknown_name_is_a_key_error_listing_the_known_names():
    reg = Registry(entry_points=())
    reg.register(LearnersPlugin("b-learner", "a-learner"))
    with pytest.raises(KeyError) as info:
        reg.learner("c-learner")
    assert isinstance(info.value, UnknownNameError)
    assert str(info.value) == "no learner named 'c-learner'; known learners: a-learner, b-learner"


def test_broken_plugin_is_reported_by_name_and_distribution_and_the_others_keep_working(broken_distribution, monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    (ep,) = broken_distribution.entry_points
    good = FakeEntryPoint("good", LearnersPlugin("good-learner"))
    reg = Registry(entry_points=[ep, good])
    with pytest.warns(PluginLoadWarning, match=r"plugin 'broken' \(distribution broken-replify-plugin 1.2.3\) failed: ModuleNotFoundError"):
        assert list(reg.learners()) == ["good-learner"]
    (failure,) = reg.failures
    assert (failure.name, failure.distribution) == ("broken", "broken-replify-plugin 1.2.3")


def test_strict_mode_turns_a_broken_plugin_into_an_error(broken_distribution, monkeypatch):
    monkeypatch.setenv(STRICT_ENV, "1")
    (ep,) = broken_distribution.entry_points
    with pytest.raises(PluginLoadError, match=r"'broken' \(distribution broken-replify-plugin 1.2.3\)"):
        Registry(entry_points=[ep]).learners()


def test_a_hook_that_raises_is_reported_and_isolated(monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)

    class Raising:
        @replify.hookimpl
        def register_learners(self, register):
            raise RuntimeError("boom")

    reg = Registry(entry_points=())
    reg.register(Raising(), name="raising")
    reg.register(LearnersPlugin("fine"))
    with pytest.warns(PluginLoadWarning, match=r"plugin 'raising' .*register_learners: RuntimeError: boom"):
        assert list(reg.learners()) == ["fine"]


def test_blocked_plugins_are_not_loaded(monkeypatch):
    monkeypatch.setenv(BLOCK_ENV, "blocked-one, other")
    blocked = FakeEntryPoint("blocked-one", LearnersPlugin("never"))
    allowed = FakeEntryPoint("allowed", LearnersPlugin("kept"))
    reg = Registry(entry_points=[blocked, allowed])
    assert list(reg.learners()) == ["kept"]
    assert blocked.loads == 0


def test_plugins_load_lazily_on_first_lookup_only():
    ep = FakeEntryPoint("lazy", LearnersPlugin("lazy-learner"))
    reg = Registry(entry_points=[ep])
    assert ep.loads == 0
    reg.learners()
    reg.adversaries()
    reg.learner("lazy-learner")
    assert ep.loads == 1


def test_check_pending_catches_a_misspelt_hook():
    class Misspelt:
        @replify.hookimpl
        def register_learner(self, register):  # missing "s"
            pass

    reg = Registry(entry_points=())
    reg.register(Misspelt())
    with pytest.raises(PluginValidationError, match="register_learner"):
        reg.check_pending()


def test_register_rejects_what_is_not_a_spec():
    class Wrong:
        @replify.hookimpl
        def register_adversaries(self, register):
            register("not a spec")

    reg = Registry(entry_points=())
    reg.register(Wrong(), name="wrong")
    with pytest.warns(PluginLoadWarning, match=r"expects a AdversarySpec, got str"):
        assert dict(reg.adversaries()) == {}


def test_builtins_are_registered_through_the_entry_point_group():
    names = {ep.name: ep.value for ep in md.entry_points(group="replify")}
    assert names["hedge"] == "replify_plugins.learners.hedge"
    assert {"hedge", "ftpl"} <= set(replify.learners())
    assert {"iid-bernoulli", "point-mass"} <= set(replify.adversaries())
    replify.check_pending()
    spec = replify.learners()["hedge"]
    assert (spec.problem, spec.norm, spec.cost_range, spec.guarantee) == ("experts", "linf", (0.0, 1.0), None)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(name="", factory=RandomHedge, problem="experts"), "name must be a non-empty string"),
        (dict(name="x", factory=3, problem="experts"), "factory must be callable, got 3"),
        (dict(name="x", factory=RandomHedge, problem="bandits"), r"problem must be one of \('experts', 'olo', 'contextual'\), got 'bandits'"),
        (dict(name="x", factory=RandomHedge, problem="olo", cost_range=(0, 2)), r"cost_range must be \(0, 1\) or \(-1, 1\)"),
        (dict(name="x", factory=RandomHedge, problem="olo", guarantee="strong"), "guarantee must be one of"),
    ],
)
def test_learner_spec_validates_its_fields(kw, match):
    with pytest.raises(ReplifyError, match=match):
        replify.LearnerSpec(**kw)


def test_plugin_docs_example_is_valid_python():
    # The snippet in replify.plugins.registry's docstring, as a plugin module.
    source = textwrap.dedent(replify.plugins.registry.__doc__.split("::")[1].split("Environment")[0])
    namespace = {"MyLearner": RandomHedge}
    exec(compile(source, "<plugins docstring>", "exec"), namespace)
    reg = Registry(entry_points=())
    reg.register(type("P", (), {"register_learners": staticmethod(namespace["register_learners"])}))
    assert list(reg.learners()) == ["my-learner"]


def test_strict_mode_refuses_the_same_way_on_every_lookup(broken_distribution, monkeypatch):
    monkeypatch.setenv(STRICT_ENV, "1")
    (ep,) = broken_distribution.entry_points
    after = FakeEntryPoint("after", LearnersPlugin("after-learner"))
    reg = Registry(entry_points=[ep, after])
    for _ in range(3):  # not once, then a registry silently missing the plugins after the broken one
        with pytest.raises(PluginLoadError, match=r"'broken'"):
            reg.learners()
    assert after.loads == 1  # every plugin was tried
    monkeypatch.setenv(STRICT_ENV, "0")
    with pytest.warns(PluginLoadWarning):
        reg._load_failures and reg._fail(reg._load_failures[0], RuntimeError())
    assert list(reg.learners()) == ["after-learner"]


def test_a_plugin_that_exits_at_import_is_reported_not_fatal(monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)
    class Exits(FakeEntryPoint):
        def load(self):
            raise SystemExit(3)  # a plugin module that calls sys.exit at import

    reg = Registry(entry_points=[Exits("exits", None), FakeEntryPoint("good", LearnersPlugin("g"))])
    with pytest.warns(PluginLoadWarning, match=r"plugin 'exits' .*failed: SystemExit: 3"):
        assert list(reg.learners()) == ["g"]


def test_a_hook_that_fails_half_way_registers_nothing(monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)

    class HalfWay:
        @replify.hookimpl
        def register_learners(self, register):
            register(replify.LearnerSpec("half-1", RandomHedge, "experts"))
            raise RuntimeError("then broke")

    reg = Registry(entry_points=())
    reg.register(HalfWay(), name="half")
    reg.register(LearnersPlugin("whole"))
    with pytest.warns(PluginLoadWarning, match=r"then broke"):
        assert list(reg.learners()) == ["whole"]  # all or nothing per plugin


@pytest.mark.parametrize("thing, message", [
    (42, r"register\(\) expects a plugin: a module, class or instance with @replify.hookimpl functions .*got 42 \(int, "
         r"with no hook implementation\)"),
    ("hedge", r"got 'hedge' \(str, with no hook implementation\)"),
    (replify.LearnerSpec("spec-not-plugin", RandomHedge, "experts"), r"\(LearnerSpec; a spec is registered from a "
                                                                     r"plugin's hook"),
])
def test_register_refuses_what_is_not_a_plugin(thing, message):
    # pluggy takes any object and returns a name for it: 42 was "registered", and registered nothing
    reg = Registry(entry_points=())
    with pytest.raises(replify.errors.ArgumentTypeError, match=message):
        reg.register(thing)
    assert reg.register(LearnersPlugin("fine")) is not None and list(reg.learners()) == ["fine"]


def test_a_plugin_that_raises_keyboardinterrupt_at_import_is_reported_by_name_not_replayed(monkeypatch):
    monkeypatch.delenv(STRICT_ENV, raising=False)

    class Interrupted(FakeEntryPoint):
        def load(self):
            self.loads += 1
            raise KeyboardInterrupt  # a module that raises it at import, every time

    slow = Interrupted("slow", None)
    after = FakeEntryPoint("after", LearnersPlugin("after-learner"))
    reg = Registry(entry_points=[slow, after])
    # the interrupt still interrupts, and says where it came from
    with pytest.raises(KeyboardInterrupt) as info:
        reg.learners()
    assert any("while importing 'slow' (distribution unknown), a replify plugin" in note for note in info.value.__notes__)
    # the next lookup tries it once more (a Ctrl-C is not the plugin's fault: test_robustness retries one in
    # full); interrupted again, it is the plugin's own doing: reported once, by name, and the others load
    with pytest.warns(PluginLoadWarning, match=r"plugin 'slow' \(distribution unknown\) failed: KeyboardInterrupt while it "
                                               r"was imported, twice \(not tried again in this process\)"):
        assert list(reg.learners()) == ["after-learner"]
    assert list(reg.learners()) == ["after-learner"]
    assert slow.loads == 2 and after.loads == 1
    (failure,) = reg.failures
    assert failure.name == "slow"
