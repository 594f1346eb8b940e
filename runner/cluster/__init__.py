"""Games on Dask distributed, and the one place that picks where a run's games are played.

`make_scheduler` returns the in-process scheduler unless a cluster is asked for; only then is
`runner.cluster.scheduler` (and with it ``distributed``) imported, so a plain run, and the
CLI's start-up, never load Dask. `runner.cluster.worker` is what runs on the workers (also
the ``--preload`` module of the local clusters started here).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from runner.config.model import RestartPolicy, TournamentConfig
from runner.protocol.freeze import FreezeMonitor
from runner.tournament.runtime import local_scheduler
from runner.tournament.scheduler import Scheduler

__all__ = ["cluster_scheduler", "local_cluster", "make_scheduler"]


def cluster_scheduler(config: TournamentConfig, concurrency: int, *, workers: int | None = None,
                      address: str | None = None, from_file: bool = True,
                      keep_engines: bool = False) -> Scheduler | None:
    """A Dask scheduler when the command line or (with `from_file`) the file's ``[cluster]``
    asks for one, else None (play in this process); `distributed` is imported only then.
    With `keep_engines` the workers' engines stay up after the run (the next run on the
    same cluster sends them its own option values)."""
    cluster = config.cluster if from_file else None
    if workers is None and address is None and cluster is not None:
        workers, address = cluster.workers, cluster.address
    if workers is None and address is None:
        return None
    from runner.cluster.scheduler import DaskScheduler

    fresh = frozenset(e.name for e in config.engines if e.restart is RestartPolicy.ON)
    builds = {e.name: e.built_from for e in config.engines if e.built_from is not None}
    return DaskScheduler(concurrency, workers=None if address else workers, address=address,
                         fresh_engines=fresh, tournament=config.name, builds=builds,
                         keep_engines=keep_engines)


@contextlib.asynccontextmanager
async def local_cluster(workers: int, concurrency: int) -> AsyncIterator[str]:
    """A Dask LocalCluster of `workers` processes and `concurrency` game slots in all,
    kept for several runs in turn (a tuning run's pairs); its scheduler's address. Closed,
    with the engines its workers kept, at the end. ImportError without `distributed`."""
    from runner.cluster.scheduler import start_local_cluster

    cluster = await start_local_cluster(workers, concurrency)
    try:
        yield str(cluster.scheduler_address)
    finally:
        closing = cluster.close()  # a coroutine for an asynchronous cluster
        if closing is not None:
            await closing


def make_scheduler(config: TournamentConfig, concurrency: int | None = None, *,
                   workers: int | None = None, cluster: str | None = None,
                   from_file: bool = True, freezes: FreezeMonitor | None = None) -> Scheduler:
    """The scheduler `runner run` plays `config` with: a Dask one for `workers` (a local
    cluster of that many processes) or `cluster` (a scheduler's address), or the file's
    ``[cluster]`` (unless `from_file` is False: a service decides where games run, not a
    submitted file); else the in-process one. `concurrency` (None: the file's) is the games
    at once. A scheduler plays one tournament run; a local cluster it starts is closed when
    its events end. `freezes` is the loop's freeze monitor for an in-process scheduler, when
    the loop's owner runs several (a service). `workers` 0 plays in this process, whatever
    the file's ``[cluster]`` says. ValueError when both `workers` and `cluster` are given."""
    if workers is not None and cluster is not None:
        raise ValueError("give workers (a local cluster) or cluster (a running scheduler), "
                         "not both")
    slots = max(1, concurrency or config.concurrency)
    if workers == 0:
        return local_scheduler(config, slots, freezes)
    return (cluster_scheduler(config, slots, workers=workers, address=cluster,
                              from_file=from_file)
            or local_scheduler(config, slots, freezes))
