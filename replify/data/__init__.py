"""Data files shipped with replify and read by :mod:`replify.datasets`; where each comes from and
under which licence is in ``LICENSES.md`` beside them."""
