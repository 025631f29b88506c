"""Mistakes that gave a raw numpy or Python error, or a message about something the user never
passed: each now gives replify's own error, naming the argument, what was expected and what came.
Each test fails on the code before the fix."""

from __future__ import annotations

import numpy as np
import pytest

import replify
from replify.errors import InvalidArgumentError


def test_wrap_bandit_form_names_eps_certified_not_a_rounding_never_passed():
    with pytest.raises(InvalidArgumentError) as info:
        replify.wrap("hedge", n=3, horizon=100, rho=0.1, seed=0, feedback="bandit", eps="certified")
    message = str(info.value)
    assert "eps='certified'" in message and "rounding" not in message
    assert "numeric eps=" in message
