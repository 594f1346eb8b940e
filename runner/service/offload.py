"""Reads too heavy for the referee's event loop, done in worker processes of their own.

A report of a large tournament is seconds of pure-Python work. Run on a thread it still holds
the interpreter lock against the event loop that referees the games: six anonymous readers of
``report.html`` kept the loop from reading engines' moves for seconds, and the games' clocks
ran meanwhile (time forfeits). Here such work runs in separate processes, started once, with
their own connection to the database (by its URL) and a lower CPU priority than the service,
so a game's clock never waits for a page.

A database only this process can see (SQLite in memory) cannot be opened by another process:
then, or when the operator asks for no workers, the work runs on a thread as before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.report.tree import ReportJson
    from runner.service.payloads import GameFinishedEvent
    from runner.store.store import Store

# The store (and SQLAlchemy) is imported by the functions that use it, not here: a worker
# process imports this module first, and lowers its priority before that heavier import.

__all__ = ["SMALL_READ", "Offload", "finished_games", "report_html", "report_json"]

WORKER_NICENESS = 10
"""How much lower than the service a worker's CPU priority is (the games come first)."""
SMALL_READ = 100
"""Stored games up to which a read is done on a thread of the service instead: a report of
100 games is about 50 ms of work, while a worker process started at low priority on a busy
machine (its first read imports the store and the report) kept the first reader of a new
tournament waiting more than 10 s."""

# The database a worker process opened at its start: one per process, set by _start_worker.
_worker_store: Store | None = None


def _start_worker(url: str, niceness: int, service: int) -> None:
    """In a new worker process: lower its priority, end with the service (process `service`)
    however it ends, open the database (already migrated)."""
    global _worker_store  # this worker process's own state, made once at its start
    with contextlib.suppress(OSError):
        os.nice(niceness)
    threading.Thread(target=_end_with, args=(service,), daemon=True,
                     name="end-with-service").start()
    from runner.store.store import Store

    _worker_store = Store.open(url, migrate=False)


def _end_with(service: int) -> None:
    """Exit when the service is gone (killed, say: nothing told this worker to stop)."""
    while os.getppid() == service:
        time.sleep(1.0)
    os._exit(0)


def _store(store: Store | None) -> Store:
    found = store if store is not None else _worker_store
    if found is None:
        raise RuntimeError("no database in this worker")
    return found


def report_html(tournament_id: int, store: Store | None = None) -> str:
    """The tournament's report as HTML (``runner report --format html``)."""
    from runner.app.report import report
    from runner.report.render import render

    return render(report(_store(store), tournament_id), "html")


def report_json(tournament_id: int, store: Store | None = None) -> ReportJson:
    """The tournament's report as the API and the event stream carry it."""
    from runner.app.report import report
    from runner.report.tree import ReportJson

    return ReportJson.of(report(_store(store), tournament_id))


def finished_games(tournament_id: int, newest: int | None,
                   store: Store | None = None) -> list[GameFinishedEvent]:
    """The stored games as ``game_finished`` data, oldest first: all, or the `newest` few."""
    from runner.service.payloads import GameFinishedEvent
    from runner.store.store import GameFilter

    kept: deque[GameFinishedEvent] = deque(maxlen=newest)  # memory flat however many games
    for g in _store(store).games(GameFilter(tournament_id=tournament_id)):
        kept.append(GameFinishedEvent(
            index=g.job_index, round=g.round, white=g.white, black=g.black,
            result=g.result.value if g.result else None,
            termination=g.termination.value if g.termination else None,
            reason=g.reason, plies=g.plies, replay=False))
    return list(kept)


class Offload:
    """Runs heavy reads in worker processes (or on a thread when processes cannot share the
    database); the pool starts on first use and is shut down by `close`."""

    def __init__(self, store: Store, workers: int) -> None:
        """`workers` processes at most (0: a thread of this process instead)."""
        self.store = store
        self.workers = workers if store.shared_by_processes else 0
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    @property
    def in_processes(self) -> bool:
        """Whether the reads run in other processes."""
        return self.workers > 0

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            # spawn: a fresh interpreter, not a fork of this process with its threads and
            # sockets; and no fork server left behind, the workers are children of this one.
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker, initargs=(self.store.url, WORKER_NICENESS, os.getpid()))
        return self._pool

    async def call(self, fn: Callable[..., Any], *args: Any, games: int | None = None) -> Any:
        """`fn(*args)` in a worker process, or `fn(*args, store)` on a thread: without worker
        processes, or when the tournament holds `games` stored games, at most `SMALL_READ`."""
        if not self.in_processes or (games is not None and games <= SMALL_READ):
            return await asyncio.to_thread(fn, *args, self.store)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor(), fn, *args)
        except concurrent.futures.BrokenExecutor:
            # A worker died (killed, out of memory): start a new pool for this and later reads.
            self._pool = None
            return await loop.run_in_executor(self._executor(), fn, *args)

    def close(self) -> None:
        """Stop the worker processes now (reads in flight are abandoned) and reap them."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # A report being built may take seconds: the workers are ended, not waited for
        # (the executor has no public way before Python 3.14's `terminate_workers`).
        workers = getattr(pool, "_processes", None) or {}
        for process in list(workers.values()):
            with contextlib.suppress(Exception):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
