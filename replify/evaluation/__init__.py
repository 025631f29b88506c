"""Measuring replicability and regret over paired runs (paper §2; docs/claims.md), layer 6.

``evaluate`` (:func:`replify.evaluate`: builds the learner and adversary, hands the pairs to the
engine), ``report`` (:class:`~replify.Report`, its summaries and JSON form), ``replay`` (one pair
run again from its seeds, :meth:`~replify.Report.replay`), ``reportdata`` (reading a report back,
every field checked, and its summaries against its rows), ``reportrelations`` (the fields checked
against each other), ``stats`` (exact intervals), ``sequential`` (the anytime-valid confidence
sequence and Holm's procedure), ``provenance`` (versions, BLAS, seeds).

May import: everything below — the ground floor, learners, plugins, the engine. ``stats`` and
``sequential`` import only the ground floor, so experiments and tests may use them alone.
"""

from replify._moved import names_getattr

# the names this package held when it was one module, kept importable (replify._moved)
__getattr__ = names_getattr(__name__)
