"""Bandit learners that explore uniformly on a schedule both runs share, then commit (the exploring
learners' base: ``perturbed-bandit``, the wrapped bandit form of :func:`replify.wrap`): the
schedule of exploration blocks, and :class:`ExploringBandit`, which plays it by batches
(``next_batch``/``observe``) or as round robins (``next_cycle``/``observe_sums``) — see
:mod:`replify.components.bandits` for the protocol."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from replify.base.checks import check_int
from replify.components.bandits import BanditLearner
from replify.errors import InvalidArgumentError


#: The most arms one ExploringBandit.next_batch() hands out (8 MiB of them): a block runs as several.
MAX_BATCH = 1 << 20


def exploration_schedule(*, horizon: int, n: int, blocks: int | None, explore: int | None,
                         objective: Any) -> tuple[int, int]:
    """(K, m) for an :class:`ExploringBandit`: those given (checked: K ≤ T, and n·m exploration
    steps fit in a block of ⌈T/K⌉), the others the least ``objective(K, m)`` over powers of two
    (K from 2 to 1024, m while n·m fits a block)."""
    if blocks is not None:
        blocks = check_int("blocks", blocks, minimum=1)
        if blocks > horizon:
            raise InvalidArgumentError(f"blocks must be at most horizon={horizon} (a block has a step at least); got {blocks}")
    if explore is not None:
        explore = check_int("explore", explore, minimum=1)
    if blocks is None or explore is None:
        best = None
        for k in [blocks] if blocks is not None else [2**i for i in range(1, 11)]:
            for m in [explore] if explore is not None else [2**j for j in range(40)]:
                if n * m > -(-horizon // k):
                    break
                value = objective(k, m)
                if best is None or value < best[0]:
                    best = (value, k, m)
        if best is None:
            raise InvalidArgumentError(f"no schedule fits: horizon={horizon} is too short for n={n} arms to be explored "
                                       f"once in each of {blocks or 2} blocks")
        blocks, explore = best[1], best[2]
    size = -(-horizon // blocks)
    if n * explore > size:
        raise InvalidArgumentError(f"explore={explore} per arm and block needs n*explore={n * explore} steps, more than a "
                                   f"block of {size} (horizon={horizon}, blocks={blocks})")
    return blocks, explore


class ExploringBandit(BanditLearner):
    """Base of the bandit learners that explore on steps drawn from R and commit in between
    (``perturbed-bandit``, and ``replify.wrap(..., feedback="bandit")``): blocks of
    ``self.block_size`` steps; in each of the first ``self.decisions`` blocks a stretch of
    n·``self.explore`` steps at an offset drawn from ``self._rng`` (cyclically in the block) explores
    every arm ``explore`` times in the order of a permutation drawn with it; the other steps play
    ``self.committed``. At each of those blocks' ends the subclass's :meth:`_commit` gets the
    explored sums of the blocks it reads (the last ``self.window``; or, with ``self.restart`` = W, those of the
    current epoch of W blocks, the epoch's last decision reading all W and the next epoch starting afresh; or
    all) and returns the next
    committed arm. A block is a few round robins (segments), so the learner plays step by step, in
    batches (``next_batch``/``observe``, at most :data:`MAX_BATCH` arms) or as round robins on block
    sums (``next_cycle``/``observe_sums``, the engine's block-sum path); all three draw the same
    randomness in the same order and play the same arms. Each step of a block is arm a's u-th
    exploration step with probability 1/L (the offset is uniform), so an arm's explored mean is an
    unbiased estimate of its average cost over the block against any oblivious adversary."""

    def _start(self, *, rng: np.random.Generator, block_size: int, decisions: int, explore: int,
               window: int | None, first: int, restart: int | None = None) -> None:
        self._rng = rng
        self.block_size, self.decisions, self.explore, self.window = block_size, decisions, explore, window
        self.restart = restart
        self._explored = np.zeros(self.n)  # each arm's cost sum on the current block's exploration steps
        self._read: list[np.ndarray] = []  # the explored sums of the blocks a decision reads
        self.block = 0
        self.committed = first  # block 1's arm
        self._given = np.empty(0, dtype=np.int64)
        self._plan()

    def _commit(self, total: np.ndarray) -> int:
        """The arm for the next block, from the explored sums ``total`` of the blocks read."""
        raise NotImplementedError

    def _decide(self) -> None:
        self._read.append(self._explored)
        if self.window is not None:
            self._read = self._read[-self.window:]
        self._explored = np.zeros(self.n)
        # added in block order: the same floats on every path
        self.committed = int(self._commit(functools.reduce(np.add, self._read)))
        if self.restart is not None and (self.block + 1) % self.restart == 0:
            self._read = []  # the next block starts an epoch: its decisions read it afresh

    def _plan(self) -> None:
        """Block ``self.block``'s segments, in time order: (round-robin arms, length, explores)."""
        start = self.block * self.block_size
        length = min(self.block_size, self.horizon - start)
        commit = np.array([self.committed], dtype=np.int64)
        if self.block < self.decisions:
            width = self.n * self.explore
            offset, order = int(self._rng.integers(length)), self._rng.permutation(self.n).astype(np.int64)
            wrap = max(0, offset + width - length)  # exploration steps past the block's end, played at its start
            parts = [(np.roll(order, -((width - wrap) % self.n)), wrap, True), (commit, offset - wrap, False),
                     (order, width - wrap, True), (commit, length - offset - width + wrap, False)]
        else:  # the last block decides nothing: no exploration
            parts = [(commit, length, False)]
        self._segments = [part for part in parts if part[1] > 0]
        self._seg, self._j = 0, 0
        self._action = self._arm()

    def _arm(self) -> int:
        arms = self._segments[self._seg][0]
        return int(arms[self._j % arms.size])

    def _advance(self, steps: int) -> None:
        """``steps`` more steps of the current segment were played (their costs already counted)."""
        self._j += steps
        if self._j == self._segments[self._seg][1]:
            self._seg, self._j = self._seg + 1, 0
            if self._seg == len(self._segments):
                if self.block < self.decisions:
                    self._decide()
                self.block += 1
                if self._t < self.horizon:
                    self._plan()

    # -- stepping (act/update): the base class calls _learn then _choose
    def _learn(self, action: int, cost: float) -> None:
        if self._segments[self._seg][2]:
            self._explored[action] += cost
        self._advance(1)

    def _choose(self) -> int:
        return self._arm()

    # -- batches: the current segment, in slices of at most MAX_BATCH arms
    def next_batch(self) -> np.ndarray:
        """The next arms of the current segment (at most ``MAX_BATCH``): fixed by R and the commit."""
        arms, length, _ = self._segments[self._seg]
        size = min(MAX_BATCH, length - self._j)
        self._given = arms[(self._j + np.arange(size)) % arms.size]
        return self._given.copy()

    def observe(self, costs: Any) -> None:
        """The costs of the arms the last :meth:`next_batch` gave, in order."""
        arms = self._given
        c = self._batch_costs(arms, costs)
        if self._segments[self._seg][2]:
            np.add.at(self._explored, arms, c)  # one by one, in order: the sums stepping makes, bit for bit
        self._t += arms.size
        self._given = np.empty(0, dtype=np.int64)
        self._advance(arms.size)

    # -- round robins: the rest of the current segment, for the engine's block-sum path
    def next_cycle(self) -> tuple[np.ndarray, int]:
        """The rest of the current segment as ``(arms, length)``: its steps play ``arms[j % len(arms)]``
        for j < length. The engine's block-sum path asks for it on an iid or piecewise-iid adversary
        and answers with :meth:`observe_sums`."""
        arms, length, _ = self._segments[self._seg]
        return np.roll(arms, -(self._j % arms.size)), length - self._j

    def observe_sums(self, sums: Any, pulls: Any) -> None:
        """Each arm's cost sum ``sums`` and pull count ``pulls`` (both (n,)) over the steps of the
        last :meth:`next_cycle`."""
        length = self._segments[self._seg][1] - self._j
        c = self._cycle_sums(sums, pulls, length)
        if self._segments[self._seg][2]:
            self._explored += c
        self._t += length
        self._advance(length)
