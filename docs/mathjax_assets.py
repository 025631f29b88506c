"""MkDocs hook (mkdocs.yml, `hooks:`): copy MathJax into the built site, so that the mathematics
renders with nothing fetched from the network.

MathJax 3 (Apache License 2.0) comes from the PyPI package `django-static-mathjax`, installed by the
`docs` and `test` extras; its files are not kept in this repository. The page loads
`javascripts/mathjax/tex-chtml.js` (mkdocs.yml, `extra_javascript`), which finds its fonts and the
components it loads on demand beside itself."""

import shutil
from importlib.util import find_spec
from pathlib import Path

from mkdocs.exceptions import PluginError

# The TeX-to-HTML bundle, its fonts, and what it may load later: TeX extensions it autoloads, the
# context menu's accessibility tools (the explorer needs sre, the speech rule engine).
PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y", "sre")


def mathjax_dir() -> Path:
    """The folder of MathJax's `es5` build inside the installed package."""
    spec = find_spec("mathjax")
    root = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
    es5 = root / "static" / "mathjax" / "es5" if root else None
    if es5 is None or not (es5 / "tex-chtml.js").is_file():
        raise PluginError("MathJax not found: the site needs the django-static-mathjax package "
                          "(python -m pip install -e \".[docs]\")")
    return es5


def on_post_build(config, **kwargs):
    es5 = mathjax_dir()
    dest = Path(config["site_dir"]) / "javascripts" / "mathjax"
    for part in PARTS:
        src, out = es5 / part, dest / part
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, out, dirs_exist_ok=True)
        else:
            shutil.copy2(src, out)
    shutil.copy2(es5.parent / "LICENSE", dest / "LICENSE")
