"""Where a run's games are played when the user did not say: this process, or local workers.

One process relays every move of every game on one core: with many games at once at a
short time control each move waits its turn in the event loop, the wait is charged to the
engine's clock, and engines lose on time although they answered at once. Past
`GAMES_PER_PROCESS` games at once, and only where there are cores to spare for more runner
processes besides the engines, the games are spread over local Dask worker processes.
``runner run``, ``runner match`` and the drop-in entry points pick the default here
(`default_local_workers`), so they agree; an explicit ``--workers``/``--cluster`` or a
file's ``[cluster]`` wins over it.

Measured on 2 cores (``benchmarks/concurrency.py``, 1+0.01, instant engines; docs/benchmarks.md,
"Many games at once"): one process played 16 games at once without a time loss on every
workload, and 2 local workers did worse there (time losses on two of four workloads, 2.5-3x
the wall time: Dask's processes and the engines share the same two cores); at 64 games at
once neither held (one process lost up to half its games or gave up; 2 workers lost 7 to 52
of 64). Measured again on 2026-11-25 once lines were stamped at the poll (64 games at once,
load 16-19): one process lost 15 of 64, 2 workers 49. So two cores never get workers, and a
bigger machine gets one
worker per `GAMES_PER_PROCESS` games, up to half its cores (the other half for the engines).
"""

from __future__ import annotations

import importlib.util
import math
import os

__all__ = ["CPUS_ENV", "GAMES_PER_PROCESS", "default_local_workers", "local_workers_for",
           "machine_cpus"]

GAMES_PER_PROCESS = 32
"""The most games one process plays at once before local workers take over (where they
can): between the 16 one process carried without a time loss and the 64 it could not."""

CPUS_ENV = "RUNNER_CPUS"
"""The environment variable that overrides the cores counted (a container whose CPU quota is
below the cores it sees, say)."""


def local_workers_for(concurrency: int, cpus: int) -> int:
    """Local worker processes for `concurrency` games at once on `cpus` cores; 0 means play
    in this process (up to `GAMES_PER_PROCESS` games, or fewer than 4 cores: workers would
    take the engines' cores)."""
    if concurrency <= GAMES_PER_PROCESS:
        return 0
    workers = min(cpus // 2, math.ceil(concurrency / GAMES_PER_PROCESS))
    return workers if workers >= 2 else 0


def machine_cpus() -> int:
    """The cores this process may run on, or ``RUNNER_CPUS`` when it is set to a number."""
    given = os.environ.get(CPUS_ENV, "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_local_workers(concurrency: int) -> int:
    """`local_workers_for` on this machine's cores, or 0 when ``distributed`` (the
    ``cluster`` extra) is not installed: the run then stays in this process, as before."""
    workers = local_workers_for(concurrency, machine_cpus())
    if workers and importlib.util.find_spec("distributed") is None:
        return 0
    return workers
