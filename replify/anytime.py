"""Unknown horizons: the doubling trick with a split replicability budget.

Epoch k = 0, 1, 2, … has length T_k = T₀·2^k and runs a fresh learner built for horizon T_k at
ρ_k = ρ·6/(π²(k + 1)²), so that Σ_k ρ_k = ρ. Each epoch's learner draws its randomness from its
own child of the shared seed (both runs of a pair share it) and sees only its epoch's costs; the
adversary is oblivious, so an epoch's costs are independent of everything before it and the epoch is
ρ_k-replicable on its own. The two runs part only if some epoch parts: by the union bound, with
probability at most Σ_k ρ_k ≤ ρ, whatever T turns out to be. The regret is at most the sum of the
epochs' regret bounds.

Each epoch's parameters are chosen to be certified: a learner with its own union bound
(``ftplb-star``, ``fllb``) runs at block size ``block_fraction``·T_k with
:func:`replify.certified_eps`; the wrapper (``wrap=True``) likewise; a learner whose defaults are
certified (``iid-experts``, ``split-commit``, ``rep-elimination``) is built with ρ_k. The summed
certificate is never taken on trust: it is the sum of the bounds the epochs' own parameters state,
and an epoch whose parameters do not certify its ρ_k (hyperparameters that void the proof, such as
``noise_scale`` above 1 or ``width_scale`` below 1) makes the anytime learner uncertified, with a
:class:`~replify.errors.ReplicabilityWarning`. A learner with no replicability guarantee is refused
unless ``wrap=True`` makes each epoch replicable.
"""

from __future__ import annotations

import contextlib
import math
import re
import warnings
from typing import Any, Iterator, Literal

import attrs
import numpy as np

from replify.base.checks import check_int, check_real, check_rho, public
from replify.errors import (
    InvalidArgumentError, LearnerProtocolError, ReplicabilityWarning, ReplifyError, ReplifyWarning, warn,
)
from replify.guarantees.theory import certified_eps
from replify.components.bandits import is_bandit
from replify.plugins.factory import make
from replify.base.randomness import seed_sequence
from replify.sources import learner_arg
from replify.wrapper import resolve_spec
from replify.wrapper import wrap as wrap_learner


@attrs.frozen(kw_only=True)
class Epoch:
    """One epoch: its place, its share ρ_k of the budget, and what its own parameters state —
    the bound on its replicability (``None`` when they state none), whether that bound certifies
    ρ_k, and its regret bound."""

    index: int
    start: int  # steps before it
    length: int
    rho: float
    replicability_bound: float | None
    certified: bool
    regret_bound: float | None


@attrs.frozen(kw_only=True)
class AnytimeParams:
    """The anytime learner's certificate, over the epochs begun so far: ``replicability_bound``
    is the sum of the epochs' own bounds (``None`` when an epoch states none), ``certified`` says
    that every epoch's parameters certify its ρ_k — then the bound is at most Σ_k ρ_k < ρ whatever
    the horizon turns out to be — and ``guarantee`` what kind of adversary the certificate is for
    (``"adversarial"``, or ``"iid"`` costs). ``regret_bound`` is the sum of the epochs' regret
    bounds (None when an epoch's learner declares none)."""

    algorithm: str
    rho: float
    n: int
    first_epoch: int
    epochs: tuple[Epoch, ...]
    replicability_bound: float | None
    certified: bool
    guarantee: str
    regret_bound: float | None
    regret_bound_formula: str = "sum over the epochs begun of each epoch's regret bound"
    calibration: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=True) | {"epochs": [attrs.asdict(e) for e in self.epochs]}


def epoch_rho(rho: float, k: int) -> float:
    """ρ_k = ρ·6/(π²(k + 1)²): Σ_{k ≥ 0} ρ_k = ρ."""
    return rho * 6.0 / (math.pi**2 * (k + 1) ** 2)


class AnytimeLearner:
    """A learner without a horizon (see the module docstring); ``act``/``update`` and ``run``."""

    def __init__(self, name: Any, *, rho: float, n: int, seed: Any, first_epoch: int, block_fraction: float,
                 wrap: bool, norm: str | None, params: dict[str, Any]) -> None:
        arg = learner_arg(name, argument="name")
        self.rho, self.n, self.name = rho, n, arg.label
        if arg.kind == "seeded":
            raise InvalidArgumentError(
                f"anytime({arg.label!r}) builds a fresh learner for every epoch, at the epoch's horizon; expected a "
                "registered name, a learner class or factory taking n, horizon, rng, or a wrapped class; got a callable "
                "seed -> learner, which fixes its own horizon"
            )
        if arg.kind == "replicable":  # a wrapped class: each epoch wraps the class inside with its own certified B, eps
            options = arg.obj.options
            wrap, norm = True, norm or options.get("norm")
            params = {**dict(options.get("learner_params") or {}), **params}
            target = arg.obj.__wrapped__
        else:
            target = arg.obj
        self._target = target
        self.spec = arg.spec if arg.kind == "registered" else resolve_spec(target, norm=norm, problem=None)
        if not wrap and self.spec.guarantee is None:
            raise InvalidArgumentError(
                f"anytime({self.name!r}) needs a replicable learner: {self.name!r} has no replicability guarantee, so its epochs "
                f"would certify nothing. Pass wrap=True to make each epoch replicable with the general framework "
                f"(certified), or use a replicable learner such as 'ftplb-star', 'iid-experts' or 'split-commit'"
            )
        if norm is not None and not wrap:
            raise InvalidArgumentError(
                f"norm applies only with wrap=True (it chooses the general framework's normalisation); got norm={norm!r}"
            )
        self.guarantee = "adversarial" if wrap else self.spec.guarantee
        self.problem = self.spec.problem
        self._seeds = seed_sequence(seed)
        self._first, self._fraction, self._wrap, self._norm, self._extra = first_epoch, block_fraction, wrap, norm, params
        self._epochs: list[Epoch] = []
        self._t = 0
        self._start_epoch()
        # A bandit learner's epochs take (arm, cost) feedback, and so does the anytime learner.
        self.feedback = "bandit" if is_bandit(self._current) else "full"

    # -- epochs ---------------------------------------------------------------------------------
    def _build(self, k: int, length: int, rho_k: float) -> Any:
        seed = np.random.SeedSequence(self._seeds.entropy, spawn_key=(*self._seeds.spawn_key, 7, k))
        B = max(1, min(length - 1, int(round(self._fraction * length)))) if length > 1 else 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReplifyWarning)  # each epoch is certified below; its clipping is expected
            if self._wrap:
                norm = self._norm or self.spec.norm
                eps = certified_eps(horizon=length, n=self.n, rho=rho_k, block_size=B, norm=norm) if length > B else None
                return wrap_learner(self._target, n=self.n, horizon=length, rho=rho_k, seed=seed, norm=norm, block_size=B,
                                    eps=eps, learner_params=self._extra or None)
            if self.spec.union_bound is not None:
                # The user's block_size and eps win over the epoch's own; the certificate follows
                # them: ε is certified for the block size in force unless given, and the epoch states
                # what its parameters give (_epoch reads its params).
                extra = dict(self._extra)
                B = int(extra.pop("block_size", B))
                eps = extra.pop("eps", None)
                if eps is None and length > B:
                    eps = certified_eps(self.name, horizon=length, n=self.n, rho=rho_k, block_size=B)
                kw = {"block_size": B} | ({"eps": eps} if eps is not None else {})
                return make(self._target, n=self.n, horizon=length, seed=seed, rho=rho_k, **kw, **extra)
            takes_rho = self.spec.parameters is not None or self.spec.guarantee is not None
            return make(self._target, n=self.n, horizon=length, seed=seed, rho=rho_k if takes_rho else None, **self._extra)

    def _start_epoch(self) -> None:
        k = len(self._epochs)
        length = self._first * 2**k
        rho_k = epoch_rho(self.rho, k)
        self._current = self._build(k, length, rho_k)
        epoch = self._epoch(k, length, rho_k)
        if not epoch.certified and all(e.certified for e in self._epochs):  # the first uncertified epoch: say so once
            stated = "states no bound" if epoch.replicability_bound is None else f"states {epoch.replicability_bound:.4g}"
            warn(
                f"anytime({self.name!r}): epoch {k} (T_k={length}) is not certified for its rho_k={rho_k:.4g} (its "
                f"parameters {stated}); params.certified is False and reports claim only what they measure",
                ReplicabilityWarning,
            )
        self._epochs.append(epoch)
        self._left = length

    def _epoch(self, k: int, length: int, rho_k: float) -> Epoch:
        """What epoch k's own parameters state. A learner certifies its ρ_k only through its own
        ``params.certified``; the bound is its ``replicability_bound`` (or an iid learner's
        ``rho_bound``), else — for a learner whose theorem certifies exactly the ρ it was given —
        ρ_k itself, and only when ``certified`` is True."""
        p = getattr(self._current, "params", None)
        certified = getattr(p, "certified", None) is True
        bound = getattr(p, "replicability_bound", None)
        if bound is None:
            bound = getattr(p, "rho_bound", None)
        if bound is None and certified:
            bound = rho_k
        if bound is not None and not bound <= rho_k * (1 + 1e-9):
            certified = False
        regret = getattr(p, "regret_bound", None)
        if regret is None and p is None:  # a learner without params: its registered bound, for its parameters
            regret, _ = self.spec.regret_bound_for(horizon=length, n=self.n, params=self._extra)
        return Epoch(index=k, start=self._t, length=length, rho=rho_k,
                     replicability_bound=None if bound is None else float(bound), certified=certified,
                     regret_bound=None if regret is None else float(regret))

    @property
    def params(self) -> AnytimeParams:
        bounds = [e.regret_bound for e in self._epochs]
        rho_bounds = [e.replicability_bound for e in self._epochs]
        return AnytimeParams(
            algorithm=f"anytime({self.name}{', wrapped' if self._wrap else ''})", rho=self.rho, n=self.n,
            first_epoch=self._first, epochs=tuple(self._epochs),
            replicability_bound=None if any(b is None for b in rho_bounds) else float(sum(rho_bounds)),
            certified=all(e.certified for e in self._epochs), guarantee=self.guarantee,
            regret_bound=None if any(b is None for b in bounds) else float(sum(bounds)),
        )

    # -- the learner protocol -------------------------------------------------------------------
    def act(self) -> Any:
        return self._current.act()

    @contextlib.contextmanager
    def _real_steps(self) -> Iterator[None]:
        """The epoch's learner counts its steps from 1 at the epoch's start: an error of replify's it
        raises names the anytime learner's own step instead (step 2001, not the epoch's step 977)."""
        try:
            yield
        except ReplifyError as exc:
            epoch = self._epochs[-1]
            said = str(exc)
            message = re.sub(r"\bstep (\d+)\b", lambda m: f"step {int(m.group(1)) + epoch.start}", said)
            if epoch.start == 0 or message == said:
                raise
            message += f" (epoch {epoch.index}, steps {epoch.start + 1}..{epoch.start + epoch.length})"
            try:
                renamed = type(exc)(message)
            except Exception:  # noqa: BLE001 - an error class that is not built from its message: keep it as it is
                raise exc from None
            raise renamed.with_traceback(exc.__traceback__) from None

    def update(self, *feedback: Any) -> None:
        """``update(cost)``, or ``update(action, cost)`` for a bandit learner's epochs."""
        with self._real_steps():
            self._current.update(*feedback)
        self._t += 1
        self._left -= 1
        if self._left == 0:
            self._start_epoch()

    def run(self, costs: Any) -> np.ndarray:
        """Actions for ``costs`` (L, n), epoch by epoch; equal to stepping (full information only:
        a bandit learner sees one arm's cost per step, through ``act``/``update(action, cost)``)."""
        if self.feedback == "bandit":
            raise LearnerProtocolError(
                f"anytime({self.name!r}) has bandit feedback: it plays through act() and update(action, cost); "
                "run(costs) would show it whole cost vectors"
            )
        c = np.asarray(costs)
        parts, i = [], 0
        while i < c.shape[0]:
            take = min(self._left, c.shape[0] - i)
            with self._real_steps():
                if callable(getattr(self._current, "run", None)):
                    parts.append(np.asarray(self._current.run(c[i : i + take])))
                else:
                    acts = []
                    for row in c[i : i + take]:
                        acts.append(self._current.act())
                        self._current.update(row)
                    parts.append(np.asarray(acts))
            i += take
            self._t += take
            self._left -= take
            if self._left == 0:
                self._start_epoch()
        if not parts:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(parts)


@public
def anytime(
    name: Any,
    *,
    rho: float,
    n: int,
    seed: int | np.random.SeedSequence,
    first_epoch: int = 1024,
    block_fraction: float = 0.1,
    wrap: bool = False,
    norm: Literal["linf", "l1"] | None = None,
    **params: Any,
) -> AnytimeLearner:
    """A ρ-replicable learner that needs no horizon: epochs of doubling length (``first_epoch``,
    2·``first_epoch``, …), each a fresh ``name`` (wrapped by the general framework when ``wrap``;
    ``norm`` then chooses its normalisation) with certified parameters at ρ_k = ρ·6/(π²(k+1)²),
    so that Σ_k ρ_k = ρ (paper §2's definition, by the union bound over epochs).

    ``name`` is a registered name with a replicability guarantee of its own, or any learner with
    ``wrap=True``: a learner class or factory of yours taking n, horizon, rng (or a
    ``"file.py:Name"`` reference to one); a class decorated with :func:`replify.wrap` is wrapped
    epoch by epoch (its ``norm`` and ``learner_params`` kept; each epoch gets its own certified B
    and ε). A learner without a guarantee and without ``wrap=True`` is refused, as is a callable
    ``seed -> learner`` (it fixes its own horizon). Its ``params`` state the summed certificate — the sum of the epochs' own bounds,
    ``certified`` only when every epoch's parameters certify its ρ_k (``params`` such as
    ``noise_scale=`` or ``width_scale=`` that void an epoch's proof make it uncertified, with a
    warning) — and the summed regret bound. For a learner with its own union bound (``ftplb-star``,
    ``fllb``), ``block_size=`` and ``eps=`` among ``params`` replace the epochs' own (every epoch
    then uses them; ε stays certified for that block size unless given), and each epoch's
    certificate is what they give. Use it with :func:`replify.evaluate` as
    ``lambda s: replify.anytime(name, rho=ρ, n=n, seed=s)``; the guide's page on practical horizons
    (docs/practical.md, "Unknown horizons") shows it measured."""
    rho = check_rho(rho)
    n = check_int("n", n, minimum=2)
    first_epoch = check_int("first_epoch", first_epoch, minimum=2)
    block_fraction = check_real("block_fraction", block_fraction)
    if not 0.0 < block_fraction < 1.0:
        raise InvalidArgumentError(f"block_fraction must lie strictly between 0 and 1, got {block_fraction}")
    if norm not in (None, "linf", "l1"):
        raise InvalidArgumentError(f"norm must be 'linf', 'l1' or None, got {norm!r}")
    fixed = sorted(k for k in ("horizon", "rng") if k in params)
    if fixed:
        raise InvalidArgumentError(
            f"anytime() builds each epoch's learner for that epoch ({'first_epoch x 2^k steps' if 'horizon' in fixed else ''}"
            f"{', ' if len(fixed) > 1 else ''}{'from seed' if 'rng' in fixed else ''}); got "
            f"{', '.join(f'{k}={params[k]!r}' for k in fixed)}: leave {'it' if len(fixed) == 1 else 'them'} out"
        )
    if "block_size" in params:
        params["block_size"] = check_int("block_size", params["block_size"], minimum=1)
    return AnytimeLearner(name, rho=rho, n=n, seed=seed, first_epoch=first_epoch, block_fraction=block_fraction,
                          wrap=wrap, norm=norm, params=params)
