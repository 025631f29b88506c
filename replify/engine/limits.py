"""The engine's memory budgets and sizes. The engine reads them from this module at call time
(``limits.MEMORY_BUDGET``), so a test may shrink them to cross chunk boundaries."""

#: Bytes the engine may spend on one chunk's cost and cumulative-cost arrays. Peak memory is a
#: small multiple of this (plus the learners), whatever the horizon and the number of pairs.
MEMORY_BUDGET = 24 * 2**20

#: Time bins of the agreement curve (the fraction of pairs whose two runs agree, over time).
CURVE_BINS = 100

#: Most segments whose disagreement counts are kept (int32 each: 128 MiB).
MAX_SEGMENTS = 1 << 25

#: Transitions at which the drift between the two draws is recorded (Report.concentration).
DRIFT_SAMPLES = 32

#: Most pairs run together in one group; more pairs run group after group. Small groups keep
#: a chunk's arrays near the cache, and cost only one batched decision call per group.
MAX_GROUP_PAIRS = 32

#: Most pairs in one group of learners that play in lanes (``for_lanes``): every step is a few
#: numpy operations over all of a group's lanes, so larger groups spread their fixed cost.
LANE_GROUP_PAIRS = 256

#: Bytes of the whole-sequence draws a group of lane-played learners may hold at once (an
#: adversary with only ``sample(rng)``: every lane's (T, n) draw lives until its group ends).
WHOLE_LANES_BYTES = 256 * 2**20



#: Seconds between two reports of the steps played inside a group of pairs (to ``progress``):
#: a learner stepped in Python shows its progress before a pair ends.
PROGRESS_SECONDS = 1.0

#: Most steps of one chunk for learners stepped in Python (neither ``run`` nor a lane form): their
#: chunks end often, so that progress inside a pair is told (chunking leaves the results unchanged).
STEPPED_CHUNK_ROWS = 4096

#: Bytes of one lane's chunk on the block path: small enough to stay in cache between the draw
#: and the one pass that folds it into block sums.
LANE_CHUNK_BYTES = 256 * 2**10


#: Bytes of a slice of a whole-sequence draw checked at once: its passes (extrema, whole numbers)
#: run in cache.
WHOLE_SLICE_BYTES = 1 * 2**20

#: Bytes of one lane's chunk on the pair-by-pair path: the learner, the engine and numpy make a
#: few temporaries of this size, small beside the one sequence a whole-sequence adversary draws.
PAIR_CHUNK_BYTES = 2 * 2**20

#: Batched bandit learners on an iid adversary take the block-sum path by default only from this
#: many costs a run (T·n) on: below it, drawing every step's costs is cheaper than the path's work
#: per batch and checkpoint (``fast_path=True`` takes it anyway).
CYCLE_MIN_COSTS = 1 << 20
