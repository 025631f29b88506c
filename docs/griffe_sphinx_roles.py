"""Griffe extension (mkdocs.yml, the mkdocstrings handler's `extensions:`): the docstrings' Sphinx
roles become cross-references in the API reference.

The docstrings are written for `help()` and for Sphinx-minded readers: ":func:`replify.wrap`",
":class:`~replify.LearnerSpec`", ":meth:`Report.replay`". Markdown shows those literally. On
loading, each role is rewritten to an *optional* autorefs cross-reference whose identifier is the
object's canonical path, resolved from where the docstring is (as Sphinx would: the object's own
members, its class, its module's names and imports), shown as inline code:

    :meth:`Report.replay`  ->  <autoref identifier="replify.evaluation.report.Report.replay" optional>`Report.replay`</autoref>

mkdocs-autorefs turns it into a link when the API page renders that object, and into the inline
code alone when it does not (a private helper, `os.replace`): `mkdocs build --strict` never fails on
a role. A leading `~` shows the last component only; "title <target>" shows the title.

Two more rewrites make the page read as the guide does: a docstring's mathematics in double
backquotes with sub- or superscripts (``c_{1:t-1} + [0,1/ε)^n``) becomes MathJax inline
mathematics (pymdownx.arithmatex marks \\( … \\)), and a mention of a guide page
(docs/claims.md) becomes a link to it when the page exists."""

import html
import re
from pathlib import Path

from griffe import (
    AliasResolutionError,
    CyclicAliasError,
    Extension,
    NameResolutionError,
    Object,
)

ROLE = re.compile(r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|exc|obj|const):`(?P<body>[^`]+)`")
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", flags=re.DOTALL)
#: ``...`` holding a sub- or superscript: mathematics, not code
MATH = re.compile(r"``(?P<body>[^`]*?[_^]\{[^`]*?)``")
#: a guide page named in prose, "docs/claims.md"
PAGE = re.compile(r"(?<![\w/`])(?<!\]\()docs/(?P<page>[a-z0-9_-]+)\.md\b")
DOCS = Path(__file__).resolve().parent


def mathematics(text: str) -> str:
    """Double-backquoted mathematics (``2B·Regret_{T/B}``) as inline MathJax: \\( … \\)."""
    return MATH.sub(lambda m: "\\(" + m["body"].replace("·", r"\cdot ") + "\\)", text)


def page_links(text: str) -> str:
    """"docs/claims.md" as a link to that page of the site, where the page exists."""
    return PAGE.sub(lambda m: f"[{m['page']}]({m['page']}.md)" if (DOCS / f"{m['page']}.md").is_file() else m[0], text)


def _canonical(path: str, collection) -> str | None:
    """The canonical path of the object at `path`, or None where griffe does not know it."""
    try:
        return collection[path].canonical_path
    except (KeyError, AliasResolutionError, CyclicAliasError, ValueError):
        return None


def identifier(role: str, target: str, scope: Object) -> str:
    """The cross-reference identifier of a role's target, resolved from the docstring's object."""
    collection = scope.modules_collection
    found = _canonical(target, collection)
    if found is None:
        head, dot, rest = target.partition(".")
        try:
            base = scope.resolve(head)
        except (NameResolutionError, AliasResolutionError, CyclicAliasError):
            return target
        full = base + dot + rest
        found = _canonical(full, collection) or full
    # `:func:`evaluate`` seen from replify.evaluation names the module evaluate.py: its function is meant
    name = found.rsplit(".", 1)[-1]
    if role != "mod" and (member := _canonical(f"{found}.{name}", collection)) and _is_module(found, collection):
        return member
    return found


def _is_module(path: str, collection) -> bool:
    try:
        return collection[path].is_module
    except (KeyError, AliasResolutionError, CyclicAliasError, ValueError):
        return False


def convert(text: str, scope: Object) -> str:
    """The docstring `text` with every Sphinx role replaced by an optional cross-reference."""

    def replace(match: re.Match) -> str:
        body = " ".join(match["body"].split())
        if titled := TITLED.fullmatch(body):
            title, target = titled["title"], titled["target"].lstrip("~")
        elif body.startswith("~"):
            target = body[1:]
            title = target.rsplit(".", 1)[-1]
        else:
            title = target = body
        target = target.removesuffix("()")
        ident = html.escape(identifier(match["role"], target, scope), quote=True)
        return f'<autoref identifier="{ident}" optional>`{title}`</autoref>'

    return ROLE.sub(replace, text)


class SphinxRoles(Extension):
    """Rewrites the roles once the whole package is loaded, so that every name can be resolved."""

    def on_package(self, *, pkg, **kwargs) -> None:
        stack = [pkg]
        while stack:
            obj = stack.pop()
            if obj.docstring is not None:
                text = convert(obj.docstring.value, obj) if ":" in obj.docstring.value else obj.docstring.value
                obj.docstring.value = page_links(mathematics(text))
            # an alias's docstring is its target's, rewritten where the target is defined
            stack.extend(member for member in obj.members.values() if not member.is_alias)

    def on_package_loaded(self, *, pkg, **kwargs) -> None:
        """The same hook under its Griffe 1 name (converting twice changes nothing)."""
        self.on_package(pkg=pkg, **kwargs)
