"""The order points run in: seeded random blocks, rounds in ABBA pairs (issue 16).

Why: the machine drifts (another job takes the other core for a while, the host backs
freshly touched memory), so whatever runs in the same minutes shares the drift. With a
fixed order (every array before any tree of a size) drift becomes a systematic bias.

Contract of :func:`schedule`:

- A *block* is the points that are compared with each other: same suite, experiment,
  size and params (the variants, block sizes). Blocks keep compared points minutes
  apart at most, so a ratio is taken between neighbours in time.
- Round 0 (and every even round): the blocks in a random order, the points inside each
  block in a random order, both from ``random.Random(seed + round)``.
- Every odd round is the exact reverse of the round before it (ABBA): over a pair of
  rounds each point's mean position is the middle of the run, so a linear drift cancels
  out of every comparison, and whatever ran first in one round runs last in the next.
- A point runs once in each of rounds 0 .. ``point.rounds`` - 1 (1 when it has no
  ``rounds``); the result is a list of :class:`Slot`.
- Same points, seed and rounds: the same schedule (it is recorded with the results).
"""
import random
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

DESIGN = ("blocks (experiment, size, params) in random order, points in random order "
          "inside a block; odd rounds the reverse of the round before (ABBA)")


@dataclass(frozen=True)
class Slot:
    """One process to start: ``point`` in ``round`` at ``position`` (0-based) of that round."""
    round: int
    position: int
    point: object


def block_key(point) -> Tuple:
    """What a point is compared within: suite, experiment, size and params."""
    return (point.suite, point.experiment, point.size_bytes,
            tuple(sorted((k, str(v)) for k, v in point.params.items())))


def _shuffled_round(points: Sequence, rng: random.Random) -> List:
    blocks: Dict[Tuple, List] = {}
    for p in points:
        blocks.setdefault(block_key(p), []).append(p)
    keys = list(blocks)
    rng.shuffle(keys)
    out = []
    for k in keys:
        members = list(blocks[k])
        rng.shuffle(members)
        out += members
    return out


def schedule(points: Sequence, seed: int) -> List[Slot]:
    """Every point once in each of its rounds, in the order of the module contract."""
    most = max((getattr(p, "rounds", 1) for p in points), default=1)
    slots, previous = [], []
    for r in range(most):
        mine = [p for p in points if getattr(p, "rounds", 1) > r]
        order = ([p for p in previous[::-1] if getattr(p, "rounds", 1) > r] if r % 2
                 else _shuffled_round(mine, random.Random(seed + r)))
        slots += [Slot(r, i, p) for i, p in enumerate(order)]
        previous = order
    return slots


def new_seed() -> int:
    """A fresh seed for a run that was not given one (recorded, so it can be replayed)."""
    return random.SystemRandom().randrange(1, 1 << 31)
