"""Bandit learners see one arm's cost a step: on an adversary whose arms are independent given the
step, the engine draws only that cost (docs/bandits.md, "Drawing only the played arm").

An adversary declares it with ``arm_law(start, stop) -> (kind, loc, scale)`` for steps
start+1..stop, ``loc`` of shape (stop − start, n) — or (1, n) when it is the same at every step —
and ``kind`` one of:

* ``"bernoulli"``: arm a costs ``scale`` with probability ``loc[t, a]``, else 0;
* ``"normal"``: arm a costs ``loc[t, a] + scale · Z`` with Z standard normal;

the arms independent of each other and of the other steps, and the law the same within each piece
the adversary declares (``iid = True``, or ``law_changes``). Every lane then draws one variate per
step from its own generator — a uniform U, or a standard normal Z — and the played arm's cost is
``scale · [U < loc[t, a]]`` or ``loc[t, a] + scale · Z``: exactly the law of that arm's cost, and
independent of everything before, since the variate is fresh and the arm was chosen before it was
drawn.

Regret needs every arm's total, played or not. The steps on which arm a was *not* played are a set
the learner fixed without seeing their a-costs, so — the arms being independent — those costs are
independent of everything the run saw, and within one piece of the law identically distributed:
their sum is Binomial(c, p)·scale (``"bernoulli"``) or N(c·m, c·scale²) (``"normal"``) for the c
such steps of arm a in the piece, drawn from a second generator the lane spawns from its own (so
that the variates' stream does not depend on when the sums are drawn). They are drawn at the regret
curve's checkpoints and at T — steps fixed by the run, not by how it is cut into chunks — so a
lane's results are the same floats whether its learners play in lanes or one by one, in any chunks.
Arm a's total is the sum of the costs it was played at (those the learner paid) and that draw:
jointly with the costs paid, it has exactly the law it has when every arm's cost is drawn at every
step — exact in law, not an approximation (tests/engine/test_played_arm.py compares the two).

Adversaries whose arms are correlated at a step (the coin embeddings of the lower bounds, whose
two costs are ĉ and 1 − ĉ) declare nothing and keep the full draw.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np

from replify.base.checks import as_float_array
from replify.components.bandits import BanditFeed
from replify.engine import limits
from replify.engine.declarations import AUDIT_FALSE_ALARM, AUDIT_FLOATS, AUDIT_PIECES, declared_pieces
from replify.engine.lanes import curve_edges
from replify.errors import CostError, DeclarationError

#: The laws an adversary may declare for its arms (module docstring).
KINDS = ("bernoulli", "normal")


def played_law(seq: Any, horizon: int, domain: Any) -> bool:
    """Whether the engine may draw only the played arm's cost on ``seq``: it declares
    ``arm_law`` (and streams its costs, ``sample_chunk``: the per-step path), pieces of one law (``iid`` or ``law_changes``), and — for a learner that declares a
    cost domain — costs that lie in it (otherwise the full draw runs, and refuses the first cost
    outside it at its step, as before)."""
    pieces = declared_pieces(seq, horizon) if callable(getattr(seq, "arm_law", None)) else None
    if pieces is None or not callable(getattr(seq, "sample_chunk", None)):
        return False
    # what a lane keeps until T (per segment and arm: unplayed steps, played costs) stays within the
    # memory budget for a whole group of lanes; beyond it (thousands of pieces), the full draw
    if len(segment_ends(pieces, horizon)) * getattr(seq, "n", 1) * 16 * 2 * limits.LANE_GROUP_PAIRS > limits.MEMORY_BUDGET:
        return False
    kind, _, scale = law_of(seq, 0, 1)
    if domain is None:
        return True
    if kind == "normal":
        return math.isinf(domain.low) and math.isinf(domain.high) and not domain.l1
    return domain.low <= min(0.0, scale) and max(0.0, scale) <= domain.high and not domain.l1


def law_of(seq: Any, start: int, stop: int) -> tuple[str, np.ndarray, float]:
    """The adversary's ``arm_law(start, stop)``, checked: a known kind, ``loc`` of shape (L, n) or
    (1, n) with finite entries (probabilities in [0, 1] for ``"bernoulli"``), a finite scale."""
    source = f"the adversary's arm_law({start}, {stop})"
    got = seq.arm_law(start, stop)
    if not (isinstance(got, tuple) and len(got) == 3 and got[0] in KINDS):
        raise CostError(f"{source} must return (kind, loc, scale) with kind one of {KINDS}; got {got!r:.200}")
    kind, loc, scale = got[0], as_float_array(f"{source}[1]", got[1]), float(got[2])
    n = getattr(seq, "n", loc.shape[-1] if loc.ndim else 0)
    if loc.ndim != 2 or loc.shape[1] != n or loc.shape[0] not in (1, stop - start):
        raise CostError(f"{source} must return loc of shape ({stop - start}, {n}) or (1, {n}); got shape {loc.shape}")
    if not (np.isfinite(loc).all() and math.isfinite(scale)):
        raise CostError(f"{source} must return finite loc and scale; got scale {scale} and loc {loc[:2].tolist()}…")
    if kind == "bernoulli" and not ((loc >= 0.0) & (loc <= 1.0)).all():
        raise CostError(f"{source}: a Bernoulli arm's loc is its probability, in [0, 1]; got {loc.min()}..{loc.max()}")
    return kind, loc, scale


def audit_arm_law(seq: Any, *, n: int, horizon: int, rng: np.random.Generator) -> None:
    """Hold ``arm_law`` to the adversary's own costs before the played-arm path trusts it: draw,
    from ``rng`` (the audit's stream), a chunk of ``sample_chunk`` at the start and one at the end
    of each of the first :data:`AUDIT_PIECES` declared pieces (:data:`AUDIT_FLOATS` floats in
    all), and compare every arm's m sampled costs with the law ``arm_law`` gives the piece. Exact
    checks first: a Bernoulli arm costs 0 or ``scale`` and nothing else, a normal one of scale 0
    costs its ``loc``. Then one statistical test per arm and piece, at false-alarm probability
    :data:`AUDIT_FALSE_ALARM` divided among them (union bound), δ each: a Bernoulli arm's mean
    cost against scale·p by Hoeffding (costs in a range of |scale|: within
    |scale|·√(ln(2/δ)/(2m)) but for δ); a normal arm's standardised costs (c − loc)/scale against
    the standard normal's distribution function by the DKW inequality (Massart's constant: the
    empirical one within √(ln(2/δ)/(2m)) everywhere but for δ), which a wrong mean, a wrong scale
    and costs of another shape (0/1 costs declared normal) all break. That the law is one within
    each piece is checked exactly, step by step, as the run asks for it (:class:`PlayedArms`). A
    contradiction raises :class:`~replify.errors.DeclarationError`."""
    pieces = (declared_pieces(seq, horizon) or [])[:AUDIT_PIECES]
    name = type(seq).__name__
    k = max(64, AUDIT_FLOATS // (2 * n * max(1, len(pieces))))
    sampled = []
    for s, e in pieces:
        spans = [(s, e)] if e - s <= 2 * k else [(s, s + k), (e - k, e)]
        got = [as_float_array(f"the adversary's sample_chunk(rng, {a}, {b})", seq.sample_chunk(rng, a, b)) for a, b in spans]
        if any(g.shape != (b - a, n) or not np.isfinite(g).all() for g, (a, b) in zip(got, spans)):
            return  # the engine's own draws refuse a wrong shape or a non-finite cost, naming it
        law = law_of(seq, s, s + 1)
        for a, b in spans:
            one_law_a_piece(law_of(seq, a, b)[1], a, b, [(s, e)], law[1])
        sampled.append((s, e, law, np.concatenate(got)))
    log_term = math.log(2.0 * n * max(1, len(sampled)) / AUDIT_FALSE_ALARM)  # ln(2/δ)
    fix = "fix arm_law (or leave it out, and the engine draws every arm's cost), or pass fast_path=False"
    for s, e, (kind, loc, scale), c in sampled:
        where, p, m = f"steps {s + 1}..{e}", loc[0], c.shape[0]
        exact = (c == 0.0) | (c == scale) if kind == "bernoulli" else (c == p) if scale == 0.0 else None
        if exact is not None and not exact.all():
            t, a = (int(v) for v in np.argwhere(~exact)[0])
            allowed = f"0 or {scale:g}" if kind == "bernoulli" else f"{p[a]:g}"
            raise DeclarationError(f"{name}.arm_law declares {kind} costs of scale {scale:g} for {where}, so arm {a} "
                                   f"costs {allowed}, but its sample_chunk drew {float(c[t, a])!r} there; {fix}")
        if kind == "bernoulli":
            radius = abs(scale) * math.sqrt(log_term / (2.0 * m))
            gap = np.abs(c.mean(axis=0) - scale * p)
            what = "mean cost {got:.6g} against the declared {want:.6g}"
        elif scale != 0.0:
            z = np.sort((c - p) / scale, axis=0)
            cdf = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))
            steps = np.arange(1, m + 1)[:, None] / m
            gap = np.maximum(np.abs(steps - cdf), np.abs(steps - 1.0 / m - cdf)).max(axis=0)  # KS distance
            radius = math.sqrt(log_term / (2.0 * m))
            what = "standardised costs (c - loc)/scale are {gap:.3g} away from a standard normal's distribution"
        else:
            continue
        hit = np.flatnonzero(gap > radius)
        if hit.size:
            a = int(hit[0])
            said = what.format(got=float(c[:, a].mean()), want=float(scale * p[a]), gap=float(gap[a]))
            raise DeclarationError(f"{name}.arm_law declares {kind} costs (loc {float(p[a]):.6g}, scale {scale:g}) for arm "
                                   f"{a} over {where}, but over {m} steps of its sample_chunk its {said}, where the "
                                   f"declared law gives at most {radius:.3g} but for {AUDIT_FALSE_ALARM / (n * len(sampled)):.2g}; "
                                   f"{fix}")


def one_law_a_piece(loc: np.ndarray, t0: int, t1: int, pieces: list[tuple[int, int]], piece_loc: np.ndarray) -> None:
    """Refuse an ``arm_law(t0, t1)`` whose ``loc`` differs, at some step, from the law of the
    declared piece the step lies in (``piece_loc``: each piece's loc at its first step): exact."""
    steps = np.arange(t0, t1)
    piece = np.searchsorted([p0 for p0, _ in pieces], steps, side="right") - 1
    rows = np.broadcast_to(loc, (t1 - t0, loc.shape[1]))
    off = np.flatnonzero((rows != piece_loc[piece]).any(axis=1))
    if off.size:
        t, (a, b) = int(steps[off[0]]), pieces[int(piece[off[0]])]
        raise DeclarationError(
            f"the adversary's arm_law gives step {t + 1} the locs {rows[off[0]].tolist()}, but step {a + 1}, in the same "
            f"declared piece (steps {a + 1}..{b}: iid or law_changes), {piece_loc[piece[off[0]]].tolist()}; the law must "
            "be one within each piece (declare law_changes where it changes)")


#: the error function, elementwise (numpy has none; the Python one, for the audit's few thousand costs)
_erf = np.frompyfunc(math.erf, 1, 1)


def segment_ends(pieces: list[tuple[int, int]], horizon: int) -> np.ndarray:
    """Where the segments a lane keeps its counts over end: the regret curve's checkpoints (the
    ends of its time bins, which are those of learners without blocks), T, and every change of the
    law — so that each segment lies in one stretch between checkpoints and in one piece."""
    return np.union1d(curve_edges(horizon)[1:], [p0 for p0, _ in pieces[1:]] + [horizon]).astype(np.int64)


class Drawn:
    """One lane's costs for a chunk as the played arm sees them: ``drawn[t, a]`` (steps of the
    chunk, arms) is the cost of arm a at step t from the lane's variate of step t — indexable as
    the (L, n) array of costs is, with a scalar or with arrays of steps and arms."""

    def __init__(self, kind: str, loc: np.ndarray, scale: float, variates: np.ndarray, n: int) -> None:
        self.kind, self.loc, self.scale, self.u = kind, loc, scale, variates
        self.shape = (variates.shape[0], n)
        self.rows = loc.shape[0]

    def __getitem__(self, key: tuple[Any, Any]) -> Any:
        t, a = key
        loc = self.loc[t if self.rows > 1 else 0, a]
        if self.kind == "bernoulli":
            cost = (self.u[t] < loc) * self.scale
        else:
            cost = loc + self.scale * self.u[t]
        return float(cost) if np.ndim(cost) == 0 else np.asarray(cost, dtype=np.float64)


class PlayedArms:
    """A group's played-arm draws (module docstring): each lane's variates, chunk by chunk, and
    every arm's total at the checkpoints and at T."""

    def __init__(self, state: Any) -> None:
        self.state = state
        lanes, n = len(state.learners), state.n
        # the comparator's sums come from a stream of their own, spawned from the lane's (its
        # variates' stream is then the same however the run is cut into chunks)
        self.sums_rngs = [_spawned(rng) for rng in state.rngs]
        self.pieces = declared_pieces(state.seq, state.horizon)
        laws = [law_of(state.seq, a, a + 1) for a, _ in self.pieces]
        self.kind, self.scale = laws[0][0], laws[0][2]
        if any(k != self.kind or s != self.scale for k, _, s in laws):
            raise CostError("the adversary's arm_law must keep one kind and scale over the run; its pieces differ")
        piece_loc = np.stack([loc[0] for _, loc, _ in laws])  # (pieces, n): each piece's one law
        self.piece_loc = piece_loc
        # Per lane, per segment (module docstring: between checkpoints and changes of law) and arm:
        # the steps the arm was not played, and its played costs' sum. Every unplayed sum is drawn at
        # the end, one call per lane (what the regret curve needs is known only then, and many small
        # draws would cost more than the steps).
        self.ends = segment_ends(self.pieces, state.horizon)
        starts = np.concatenate([[0], self.ends[:-1]])
        self.loc = piece_loc[np.searchsorted([p0 for p0, _ in self.pieces], starts, side="right") - 1]
        self.unplayed = np.zeros((lanes, self.ends.size, n), dtype=np.int64)
        self.observed = np.zeros((lanes, self.ends.size, n))
        self.paid_at = np.zeros((lanes, self.ends.size))  # the paid total at each segment's end

    def chunk(self, t0: int, t1: int) -> tuple[str, np.ndarray, float, np.ndarray]:
        """The law of steps t0+1..t1 and every lane's variates for them, (lanes, L)."""
        kind, loc, scale = law_of(self.state.seq, t0, t1)
        if kind != self.kind or scale != self.scale:
            raise CostError(f"the adversary's arm_law({t0}, {t1}) changed its kind or scale during the run")
        rows = t1 - t0
        one_law_a_piece(loc, t0, t1, self.pieces, self.piece_loc)  # the unplayed sums are drawn from the piece's law
        draw = (lambda rng: rng.random(rows)) if kind == "bernoulli" else (lambda rng: rng.standard_normal(rows))
        return kind, loc, scale, np.stack([draw(rng) for rng in self.state.rngs])

    def settle(self, t0: int, t1: int, actions: np.ndarray, paid: np.ndarray) -> None:
        """After steps t0+1..t1 were played (``actions``, ``paid``: (lanes, L)), before they are
        accounted (``state.paid`` is the total before them): count each arm's unplayed steps and sum
        its played costs, segment by segment, and keep the paid total at each segment's end; at T,
        draw the unplayed sums and set the totals and the regret curve."""
        state, n = self.state, self.state.n
        lanes = actions.shape[0]
        lane_index = np.arange(lanes)[:, None] * n
        running = np.cumsum(np.concatenate([state.paid[:, None], paid], axis=1), axis=1)  # added in time order
        a = t0
        for j in range(int(np.searchsorted(self.ends, t0, side="right")), self.ends.size):  # the segments met
            b = int(min(self.ends[j], t1))
            flat = (lane_index + actions[:, a - t0 : b - t0]).ravel()
            self.observed[:, j] += np.bincount(flat, weights=paid[:, a - t0 : b - t0].ravel(),
                                               minlength=lanes * n).reshape(lanes, n)
            self.unplayed[:, j] += (b - a) - np.bincount(flat, minlength=lanes * n).reshape(lanes, n)
            if b == self.ends[j]:
                self.paid_at[:, j] = running[:, b - t0]
            a = b
            if b >= t1:
                break
        if t1 == state.horizon:
            self._finish()

    def _finish(self) -> None:
        """Every unplayed sum, in its segment's law, from each lane's sums stream (one draw per lane);
        the arms' totals at every checkpoint and at T."""
        state = self.state
        sums = np.empty(self.unplayed.shape)
        for i, rng in enumerate(self.sums_rngs):
            counts = self.unplayed[i]
            if self.kind == "bernoulli":
                sums[i] = rng.binomial(counts, self.loc) * self.scale
            else:
                c = counts.astype(np.float64)
                sums[i] = c * self.loc + self.scale * np.sqrt(c) * rng.standard_normal(c.shape)
        # each segment's arm totals: its played costs and its unplayed sums, in time order from the
        # totals before the run
        totals = np.cumsum(self.observed + sums, axis=1) + state.cum[:, None, :]
        hit = np.isin(self.ends, state.checkpoints)
        k = np.searchsorted(state.checkpoints, self.ends[hit])
        state.curve_paid[:, k] = self.paid_at[:, hit]
        state.curve_best[:, k] = state._best(totals[:, hit])
        state.set_cum(totals[:, -1], state.horizon)
        self.sums = sums


def replay_lane(learner: Any, seq: Any, rng: np.random.Generator, *, n: int,
                horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One run of a played-arm evaluation again (``Report.replay``), from the lane's generator:
    its actions and costs paid, the same as the engine's, and every arm's total as the engine drew
    it — returned with a (T, n) cost matrix that holds the costs paid and, for each arm, unplayed
    costs drawn given their drawn sum (within a stretch and piece those steps are exchangeable:
    which of them cost ``scale`` is uniform given how many do; Gaussian ones are their mean plus
    centred noise), so the matrix has the law of a full draw and exactly the run's totals.
    Returns (actions, paid, costs)."""
    # the one lane's state, as the engine's lanes hold it (what PlayedArms reads and sets)
    checkpoints = curve_edges(horizon)[1:]
    state = SimpleNamespace(learners=[learner], n=n, horizon=horizon, seq=seq, rngs=[rng], checkpoints=checkpoints,
                            cum=np.zeros((1, n)), paid=np.zeros(1), curve_paid=np.zeros((1, checkpoints.size)),
                            curve_best=np.zeros((1, checkpoints.size)), _best=lambda cum: cum.min(axis=-1))
    state.set_cum = lambda cum, t: setattr(state, "cum", cum)
    draws = PlayedArms(state)
    kind, loc, scale, u = draws.chunk(0, horizon)
    drawn = Drawn(kind, loc, scale, u[0], n)
    actions = BanditFeed(learner, n).play(drawn, 0)
    paid = drawn[np.arange(horizon), actions]
    draws.settle(0, horizon, actions[None], paid[None])
    costs = np.zeros((horizon, n))
    costs[np.arange(horizon), actions] = paid
    fill = _spawned(draws.sums_rngs[0])
    starts = np.concatenate([[0], draws.ends[:-1]])
    for j, (lo, hi) in enumerate(zip(starts.tolist(), draws.ends.tolist())):
        for a in range(n):  # a loop over segments and arms: a replay is one pair
            steps = lo + np.flatnonzero(actions[lo:hi] != a)
            if steps.size == 0:
                continue
            total = float(draws.sums[0, j, a])
            if kind == "bernoulli":
                costs[fill.choice(steps, size=int(round(total / scale)) if scale else 0, replace=False), a] = scale
            else:
                z = fill.standard_normal(steps.size)
                costs[steps, a] = total / steps.size + scale * (z - z.mean())
    return actions, paid, costs


def _spawned(rng: np.random.Generator) -> np.random.Generator:
    """A second generator of the lane, independent of its own stream and leaving it untouched."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator built without a seed sequence
        return np.random.default_rng(np.random.SeedSequence(rng.bit_generator.state["state"]["state"]))
