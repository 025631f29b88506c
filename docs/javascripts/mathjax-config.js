// MathJax reads this before it loads (mkdocs.yml, extra_javascript): typeset only what
// pymdownx.arithmatex marked as mathematics, \( ... \) inline and \[ ... \] displayed.
// MathJax itself is copied into the built site by docs/mathjax_assets.py.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};
