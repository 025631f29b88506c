"""Learners that say what they are: ``get_params()`` (scikit-learn's convention) and a ``repr``
with the size and hyperparameters a learner was built with, so that a printed result names its
configuration."""

from __future__ import annotations

from typing import Any

#: Hyperparameters read from a learner's ``params`` (its theorem's parameters) when it has one.
TUNING = ("rho", "block_size", "eps", "noise_scale", "K_constant", "fraction")


class Described:
    """Mixin: ``get_params()`` is ``n``, ``horizon``, the attributes named in ``_params`` and the
    :data:`TUNING` entries of ``self.params`` (when the learner has one); ``repr`` shows them."""

    _params: tuple[str, ...] = ()

    def get_params(self) -> dict[str, Any]:
        """The learner's size and hyperparameters, as it was built with them."""
        out: dict[str, Any] = {"n": self.n, "horizon": self.horizon}  # type: ignore[attr-defined]
        out |= {k: getattr(self, k) for k in self._params}
        params = getattr(self, "params", None)
        if params is not None:
            record = params.to_dict() if hasattr(params, "to_dict") else dict(params)
            out |= {k: record[k] for k in TUNING if record.get(k) is not None and k not in out}
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
