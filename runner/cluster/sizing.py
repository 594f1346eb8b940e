"""Where a run's games are played when the user did not say: this process, or local workers.

One process relays every move of every game on one core: with many games at once at a
short time control, each move waits its turn in the event loop, the wait is charged to the
engine's clock, and engines lose on time although they moved at once. Past a number of
games per process (`GAMES_PER_PROCESS`, measured with ``benchmarks/concurrency.py``) the
games are spread over local Dask worker processes, one per core at most. `runner run`,
``runner match`` and the drop-in entry points pick the default here, so they agree.
"""

from __future__ import annotations

import importlib.util
import math
import os

__all__ = ["GAMES_PER_PROCESS", "default_local_workers", "local_workers_for"]

GAMES_PER_PROCESS = 32
"""The most games one process plays at once before local workers take over.

Measured on 2 cores at 1+0.01 with instant engines (``benchmarks/concurrency.py``, see the
README's concurrency table): no time loss in one process at 16 games at once, losses from
64 on, and the relay's p99 past the increment (10 ms) well before that; 32 keeps a margin
below the first losses."""


def local_workers_for(concurrency: int, cpus: int) -> int:
    """Local worker processes for `concurrency` games at once on `cpus` cores; 0 means play
    in this process (up to `GAMES_PER_PROCESS` games, or a single core, where more
    processes only share the same core)."""
    if concurrency <= GAMES_PER_PROCESS or cpus < 2:
        return 0
    return min(cpus, math.ceil(concurrency / GAMES_PER_PROCESS))


def default_local_workers(concurrency: int) -> int:
    """`local_workers_for` on this machine's cores, or 0 when ``distributed`` (the
    ``cluster`` extra) is not installed: the run then stays in this process, as before."""
    workers = local_workers_for(concurrency, len(os.sched_getaffinity(0))
                                if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if workers and importlib.util.find_spec("distributed") is None:
        return 0
    return workers
