"""The README's and the guide's Python blocks, run in reading order with the checks on what
they measured. Run by tests/experiments/test_docs.py in a subprocess: outside pytest's typeguard import hook
(which instruments every replify function and triples these blocks' time); the rest of the suite
runs under it."""

import re
import sys
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def guide_pages() -> list[Path]:
    """The documentation site's pages in the order of its navigation (mkdocs.yml)."""
    nav = re.findall(r"^  - [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    return [ROOT / "docs" / page for page in nav]


def python_blocks():
    """The README's Python blocks, then every guide page's, in reading order: a page may use
    what the README or an earlier page defined."""
    blocks = []
    for path in [ROOT / "README.md", *guide_pages()]:
        found = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
        blocks += [(f"{path.relative_to(ROOT)} python block {i + 1}", block) for i, block in enumerate(found)]
    return blocks


def main() -> None:
    import replify
    from replify.errors import BlockSizeWarning, ReplifyWarning

    blocks = python_blocks()
    assert len(blocks) >= 20, len(blocks)
    namespace: dict = {"__name__": "readme"}
    for name, block in blocks:
        with warnings.catch_warnings():
            if name.startswith("README"):
                # The README's code runs without a single replify warning: it shows certified parameters.
                warnings.simplefilter("error", ReplifyWarning)
            else:
                warnings.simplefilter("ignore", BlockSizeWarning)  # the guide shows default-parameter wraps
            exec(compile(block, name, "exec"), namespace)
    # The quick start measured what it says.
    assert namespace["report"].rho_ci[1] <= 0.1
    assert namespace["actions"].shape == (100_000,)
    # The plugin block registers a working learner and adversary.
    reg = replify.Registry(entry_points=())
    reg.register(types.SimpleNamespace(**{k: namespace[k] for k in ("register_learners", "register_adversaries")}))
    assert list(reg.learners()) == ["my-ftl"] and list(reg.adversaries()) == ["my-coin-flips"]
    replify.registry().register(types.SimpleNamespace(register_learners=namespace["register_learners"],
                                                      register_adversaries=namespace["register_adversaries"]),
                                name="readme-plugin")
    try:
        report = replify.evaluate("my-ftl", "my-coin-flips", n=3, horizon=200, pairs=4, seed=0)
        assert report.pairs == 4
    finally:
        replify.registry().unregister(name="readme-plugin")
    print(f"{len(blocks)} blocks ran")


if __name__ == "__main__":
    sys.exit(main())
