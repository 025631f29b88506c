"""One seed, several named random streams (docs/wrapper.md).

A seed becomes a :class:`numpy.random.SeedSequence`; every stream is a child addressed by a
fixed spawn key, so a stream never depends on which other streams were used, how many pairs
an evaluation runs, or how the work is split between processes. numpy's global random state
is never touched.
"""

from __future__ import annotations

from typing import Union

import attrs
import numpy as np
from typeguard import typeguard_ignore

from replify.errors import InvalidArgumentError

Seed = Union[int, np.random.SeedSequence]

# Fixed spawn-key slots. Changing them changes every result for a given seed: don't.
INTERNAL, GRID, DATA, ADVERSARY = 0, 1, 2, 3
#: Under a pair's INTERNAL seed: the uniforms that sample a mixed strategy's action (part of R).
MIXED = 4


@typeguard_ignore  # a validator run each step: it checks its own arguments
def seed_sequence(seed: Seed, *, name: str = "seed") -> np.random.SeedSequence:
    """A non-negative int or a SeedSequence, as a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:

        raise InvalidArgumentError(
            f"{name} must be a non-negative int or a numpy.random.SeedSequence, got {seed!r}"
        )
    return np.random.SeedSequence(seed)


@typeguard_ignore  # hot (each step or chunk): its callers check what it is given
def child(parent: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child of ``parent`` at spawn key ``key``, without mutating ``parent``
    (``SeedSequence.spawn`` counts its children, which would make streams order-dependent)."""
    return np.random.SeedSequence(
        parent.entropy, spawn_key=(*parent.spawn_key, *key), pool_size=parent.pool_size
    )


@attrs.frozen
class Streams:
    """The named streams of one seed.

    ``internal`` is R, the learner's own randomness (shared by the two runs of a pair);
    ``grid`` draws the random grid offsets of the general framework (also part of R);
    ``data`` draws cost sequences; ``adversary`` makes an oblivious adversary's choices.
    """

    root: np.random.SeedSequence

    @classmethod
    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def from_seed(cls, seed: Seed) -> Streams:
        return cls(seed_sequence(seed))

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def sequence(self, slot: int) -> np.random.SeedSequence:
        return child(self.root, slot)

    @typeguard_ignore  # hot (each step or chunk): its callers check what it is given
    def generator(self, slot: int) -> np.random.Generator:
        return np.random.default_rng(self.sequence(slot))

    @property
    def internal(self) -> np.random.Generator:
        return self.generator(INTERNAL)

    @property
    def grid(self) -> np.random.Generator:
        return self.generator(GRID)

    @property
    def data(self) -> np.random.Generator:
        return self.generator(DATA)

    @property
    def adversary(self) -> np.random.Generator:
        return self.generator(ADVERSARY)
