"""The documentation site as a reader sees it: every page of the built site rendered in a headless
Chromium at a laptop's width (1366 x 900), one browser for all pages, served from localhost.

A page fails on: an error in the browser's console, or an uncaught script error; a request for
anything not on localhost (the site must read offline: no web fonts, no CDN script), or a local
request that fails; content wider than the text column, or hidden behind a scrollbar (a table cut
off); mathematics left as TeX (an arithmatex span MathJax did not typeset, a MathJax error, or in the
visible text outside typeset mathematics a "$", "\\(", a braced sub- or superscript "_{" "^{", a TeX
command "\\theta"), or fewer formulas typeset than the page's source writes; a Sphinx role (":func:`...`")
in the visible text; a link to an anchor that does not exist.

Chromium comes from the system (Debian's `chromium`; .ci/run installs it where it can), driven by
Playwright's Python package, which downloads nothing here. The test is in the full tier
(`python -m pytest --full`); there it skips only when no Chromium binary is found; REPLIFY_CHROMIUM
names one explicitly."""

import contextlib
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest


ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
# the flags known to keep Chromium quiet on a machine without outside network (no background
# connections, no update or sync checks)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1366, "height": 900}
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`|<autoref\b")  # a role, or its rewrite left as text
# TeX outside typeset mathematics: a dollar sign, \\( or \\[, a braced sub- or superscript (x_{t,a}, T^{3/4}),
# a TeX command (\\theta, \\sum)
RAW_MATH = re.compile(r"\$|\\\(|\\\[|[_^]\{|\\[A-Za-z]+")


def nav_pages() -> list[str]:
    """The site's pages in navigation order, as tests/doc_blocks.py reads mkdocs.yml."""
    return re.findall(r"^  - [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), flags=re.MULTILINE)


# A page's formulas in its Markdown source: $...$ and $$...$$ outside code (fenced blocks, inline spans).
FENCED = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
FORMULA = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$\s](?:[^$]*?[^$\s])?\$", re.DOTALL)


def source_formulas(page: str) -> int:
    """How many formulas the page's Markdown source writes for arithmatex to mark up."""
    text = (ROOT / "docs" / page).read_text()
    return len(FORMULA.findall(INLINE_CODE.sub("", FENCED.sub("", text))))


def page_path(page: str) -> str:
    """The URL path of a page (use_directory_urls): index.md -> /, api.md -> /api/."""
    return "/" if page == "index.md" else f"/{page.removesuffix('.md')}/"


def find_chromium() -> str | None:
    if explicit := os.environ.get("REPLIFY_CHROMIUM"):
        return explicit
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


# Measured inside the page once MathJax has typeset it and the fonts are in.
INSPECT = r"""() => {
  const column = document.querySelector(".md-content__inner");
  const edge = column.getBoundingClientRect().right;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") +
    ' "' + (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60) + '"';
  const overflow = [];
  for (const el of column.querySelectorAll("*")) {
    // Material's table wrappers reach into the column's padding by design (negative margins), and
    // MathJax's copy of each formula for screen readers is clipped out of sight
    if (el.closest(".headerlink, .md-clipboard, mjx-assistive-mml") ||
        el.matches(".md-typeset__scrollwrap, .md-typeset__table")) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > edge + 4) {  // 4 px: an inline code span's own padding at a line's end
      overflow.push("wider than the text column (" + Math.round(box.right - edge) + " px): " + describe(el));
    } else if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 &&
               ["auto", "scroll", "hidden"].includes(getComputedStyle(el).overflowX)) {
      overflow.push("cut off behind a scrollbar (" + (el.scrollWidth - el.clientWidth) + " px): " + describe(el));
    }
  }
  const clone = column.cloneNode(true);
  clone.querySelectorAll("pre, code, mjx-container, mjx-assistive-mml").forEach((el) => el.remove());
  return {
    overflow: overflow.slice(0, 10),
    text: column.innerText,
    prose: clone.textContent,
    math: document.querySelectorAll(".arithmatex").length,
    untypeset: [...document.querySelectorAll(".arithmatex")].filter((el) => !el.querySelector("mjx-container"))
      .map((el) => el.textContent.trim().slice(0, 60)),
    mathErrors: [...document.querySelectorAll("mjx-merror, [data-mjx-error]")]
      .map((el) => el.getAttribute("data-mjx-error") || el.textContent.slice(0, 60)),
    ids: [...document.querySelectorAll("[id]")].map((el) => el.id),
    links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
    crossReferences: document.querySelectorAll(".doc-contents a.autorefs-internal").length,
  };
}"""


@contextlib.contextmanager
def served_site(out: Path):
    """The site, built as the tests build it into ``out``, served on localhost; yields its base URL."""
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                           check=False, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # Material's notice, not a warning
    assert built.returncode == 0, built.stderr
    built_pages = {p.parent.relative_to(out).as_posix() for p in out.rglob("index.html")}
    served = {page_path(page).strip("/") or "." for page in nav_pages()}
    assert built_pages - {"search"} <= served, f"pages outside the navigation: {built_pages - served}"

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium():
    """The Chromium binary; the only reason these tests skip is that there is none."""
    binary = find_chromium()
    if binary is None:
        pytest.skip(f"no Chromium binary found (looked for {', '.join(CHROMIUM_NAMES)} on PATH, and REPLIFY_CHROMIUM); "
                    "on Debian: apt-get install chromium")
    return binary


def render_all(chromium: str, out: Path) -> dict:
    """Build and serve the site, render every page once in one browser: {"base": the URL served,
    "pages": page -> what the reader's browser showed and did}."""
    from playwright.sync_api import sync_playwright

    results = {}
    with served_site(out) as site, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, service_workers="block")
            for page_name in nav_pages():
                results[page_name] = render(context, site, page_name)
        finally:
            browser.close()
    return {"base": site, "pages": results}


def render(context, site: str, page_name: str) -> dict:
    problems: list[str] = []
    local = urlsplit(site).netloc

    def route(r):
        url = r.request.url
        if urlsplit(url).scheme in ("http", "https", "ws", "wss") and urlsplit(url).netloc != local:
            problems.append(f"fetched from the network: {url}")
            r.abort()
        else:
            r.continue_()

    page = context.new_page()
    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: urlsplit(r.url).netloc == local and problems.append(f"request failed: {r.url}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    try:
        page.goto(site + page_path(page_name), wait_until="load")
        # MathJax's promise settles once the page is typeset; then the fonts it asked for are in
        page.evaluate("async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise; "
                      "await document.fonts.ready; }")
        seen = page.evaluate(INSPECT)
        url = page.url
    finally:
        page.close()
    problems += seen["overflow"]
    problems += [f"mathematics not typeset: {t!r}" for t in seen["untypeset"]]
    problems += [f"MathJax error: {e}" for e in seen["mathErrors"]]
    problems += [f"raw TeX in the text: {m.group()!r} in {seen['prose'][max(0, m.start() - 30):m.end() + 30]!r}"
                 for m in RAW_MATH.finditer(seen["prose"])][:5]
    problems += [f"Sphinx role in the text: {seen['text'][max(0, m.start() - 30):m.end() + 30]!r}"
                 for m in ROLE.finditer(seen["text"])][:5]
    return {"problems": problems, "url": url, "ids": set(seen["ids"]), "links": seen["links"], "math": seen["math"],
            "cross_references": seen["crossReferences"]}


@pytest.mark.slow
def test_every_page_renders_offline_and_every_link_reaches_its_anchor(chromium, tmp_path):
    # One test, so that the pages are rendered once (about 20 s) on whichever worker runs it: split over
    # several tests, each worker that ran one would build the site and start a browser again.
    rendered = render_all(chromium, tmp_path / "site")
    site, pages = rendered["base"], rendered["pages"]
    failures = [f"{page_name}: {problem}" for page_name, r in pages.items() for problem in r["problems"]]
    # Every page's mathematics, not a sample: each formula its source writes became a span for MathJax (and
    # was typeset, checked above); api.md may have more, from the docstrings. Mathematics written without
    # the markup (x_{t,a}, \theta) fails above as raw TeX in the text.
    assert sum(source_formulas(page_name) for page_name in pages) > 500  # the guard against counting nothing
    for page_name, r in pages.items():
        if r["math"] < source_formulas(page_name):
            failures.append(f"{page_name}: {r['math']} formulas typeset of the {source_formulas(page_name)} its source writes")
    ids = {urldefrag(r["url"])[0]: r["ids"] for r in pages.values()}
    for page_name, r in pages.items():
        for link in r["links"]:
            target, anchor = urldefrag(link)
            if target.startswith(site) and anchor and target in ids and unquote(anchor) not in ids[target]:
                failures.append(f"{page_name}: a link to a missing anchor: {link}")
    # the docstrings' Sphinx roles became links (docs/griffe_sphinx_roles.py), checked above
    if pages["api.md"]["cross_references"] <= 40:
        failures.append(f"api.md: only {pages['api.md']['cross_references']} cross-references became links")
    assert failures == []
