"""A report of one pair: evaluate runs at least two (every interval needs two), and the docs say so."""

from pathlib import Path

import pytest

import replify
from replify.errors import InvalidArgumentError

ROOT = Path(__file__).resolve().parents[2]


def test_evaluate_needs_two_pairs_and_docs_data_says_so():
    with pytest.raises(InvalidArgumentError, match=r"pairs must be an integer >= 2, got 1"):
        replify.evaluate("hedge", "iid-bernoulli", n=3, horizon=10, pairs=1, seed=0)
    page = " ".join((ROOT / "docs" / "data.md").read_text().split())
    assert "`replify.evaluate` runs at least two pairs, since every interval it reports needs two" in page
    # the old sentence read as if evaluate drew a one-pair report, which it refuses
    assert "a report of one pair is drawn without an interval" not in page
