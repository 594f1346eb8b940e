"""What runs inside a Dask worker: game slots that keep their engines between games.

The coordinator (`runner.cluster.scheduler`) ships nothing but calls to the functions here,
by reference (the runner must be installed on every worker), with JSON arguments: a
`GameJob` in, a `JobReply` out (the slot's typed outcome and the worker's name). Clocks run
here, next to the engines.

Each worker process holds one `WorkerPool`: an asyncio loop on a thread of its own, and a
`GameSlot` per game thread Dask gives it (``--nthreads``): the same slots, with the same
reuse, restart and cancellation rules, as the in-process scheduler. A Dask task thread only
waits for its game on that loop, so one process referees all of its slots' games.

Engines are resolved here: a job's engine runs with the command the tournament gives, unless
the worker's own engines file (the path in ``RUNNER_WORKER_ENGINES``, an engines file as
`engines_file` reads) has an entry of the same name, whose command, directory and
environment are used instead (hosts install engines in different places). An engine built
from a recipe (a branch test's side) is built here instead (`runner.build.placed`).

Live moves (only when the coordinator asks, for a watched run): each move of the game goes
back as a `MoveMessage` (JSON) in a Dask event on `MOVES_TOPIC` (`Worker.log_event`: fire
and forget on the stream the worker already keeps to the scheduler), dropped when that
stream is backed up. The game never waits for them; its record, returned as the task's
result, stays the truth.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import functools
import os
import signal
import socket
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import Field

from runner.build.benches import MachineBuild
from runner.build.placed import WorkerBuilds, read_orders
from runner.config.check import ConfigError
from runner.config.engines import load_engines_file
from runner.config.recipes import BuildOrder
from runner.game.job import GameJob
from runner.game.live import LiveMove
from runner.game.slot import EngineFailed, GameSlot, Played, SlotOutcome
from runner.protocol.engine import EngineConfig, EngineError
from runner.protocol.factory import make_engine, stop_engines
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.loop import new_asyncio_loop
from runner.tournament.runtime import engine_config

if TYPE_CHECKING:
    from pydantic import TypeAdapter

_T = TypeVar("_T")

__all__ = [
    "ENGINES_FILE_ENV",
    "MOVES_TOPIC",
    "JobReply",
    "MoveMessage",
    "MoveSender",
    "WorkerPool",
    "abort_games",
    "build_engines",
    "check_worker",
    "engine_json",
    "executing_keys",
    "package_version",
    "play_job",
    "release_pool",
    "worker_identity",
]

ENGINES_FILE_ENV = "RUNNER_WORKER_ENGINES"
"""Environment variable naming a worker's own engines file (engines found there by name)."""
MOVES_TOPIC = "runner-moves"
"""The Dask event topic of live moves. One topic for every run: the scheduler keeps the last
events of a topic (``distributed.admin.low-level-log-length``, 1,000 by default), so a
shared scheduler holds that many moves at most, however many runs it serves; a coordinator
keeps the moves of its own jobs (by task key) and ignores the rest."""
STREAM_BACKLOG = 1000
"""Messages waiting on a worker's stream to the scheduler above which a move is dropped."""


@dataclasses.dataclass(frozen=True)
class JobReply:
    """What a worker answers for one job: the slot's outcome, and who played it."""

    outcome: Annotated[SlotOutcome, Field(discriminator="kind")]
    worker: str
    """The worker's display name (also in a played record's ``worker``)."""
    address: str | None
    """Its Dask address (None outside a Dask worker)."""
    builds: tuple[MachineBuild, ...] = ()
    """The engines this worker built for this job and has not reported before (a worker
    that joined after the run's start builds at its first game)."""

    def to_json(self) -> str:
        """The reply as JSON text (`from_json` reads it back)."""
        return _adapter(JobReply).dump_json(self).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> JobReply:
        """A reply from `to_json` output; ValueError when the text is not one."""
        return _adapter(JobReply).validate_json(text)


@dataclasses.dataclass(frozen=True)
class MoveMessage:
    """A live move on `MOVES_TOPIC`, tagged with the key of the task playing its game."""

    key: str
    move: LiveMove

    def to_json(self) -> str:
        """The message as JSON text (what a worker sends)."""
        return _adapter(MoveMessage).dump_json(self).decode()

    @classmethod
    def read(cls, message: Any) -> MoveMessage | None:
        """The message in a topic event's payload (None: not such a message)."""
        if not isinstance(message, (str, bytes)):
            return None
        try:
            return _adapter(MoveMessage).validate_json(message)
        except ValueError:
            return None


@functools.cache
def _adapter(kind: type[_T]) -> TypeAdapter[_T]:
    """The pydantic adapter of a wire type, built once on first use."""
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


class MoveSender:
    """Sends one job's moves to the coordinator as Dask events; never blocks, never raises."""

    def __init__(self, worker: Any, key: str) -> None:
        """`worker` is the Dask worker running task `key`."""
        self.worker = worker
        self.key = key
        self.dropped = 0

    def __call__(self, move: LiveMove) -> None:
        """Send `move`, or drop it when the worker's stream to the scheduler is backed up."""
        stream = getattr(self.worker, "batched_stream", None)
        if len(getattr(stream, "buffer", ())) > STREAM_BACKLOG:
            self.dropped += 1
            return
        try:  # called from the game loop's thread: Dask hands it to the worker's own loop
            self.worker.log_event(MOVES_TOPIC, MoveMessage(self.key, move).to_json())
        except Exception:  # a worker closing: the move is lost, the game goes on
            self.dropped += 1


def package_version() -> str:
    """The version of the runner this worker runs (the coordinator leaves out a worker whose
    version is not its own: jobs and replies are read as each version writes them)."""
    from runner import __version__

    return __version__


def worker_identity(worker: Any = None) -> tuple[str, str | None]:
    """This worker's display name and its Dask address (None outside a Dask worker)."""
    if worker is None:
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):
            return f"{socket.gethostname()}/{os.getpid()}", None
    name = worker.name
    shown = f"{socket.gethostname()}/{name}" if isinstance(name, int) else str(name)
    return shown, worker.address


def local_engines() -> dict[str, EngineConfig]:
    """This worker's own engines (from ``RUNNER_WORKER_ENGINES``), by name; ConfigError."""
    path = os.environ.get(ENGINES_FILE_ENV)
    if not path:
        return {}
    return {spec.name: engine_config(spec) for spec in load_engines_file(path)}


def resolve(config: EngineConfig, own: dict[str, EngineConfig]) -> EngineConfig:
    """The tournament's engine as this worker starts it: its own command when it has one."""
    mine = own.get(config.name)
    if mine is None:
        return config
    return dataclasses.replace(config, argv=mine.argv, working_dir=mine.working_dir,
                               env=mine.env if mine.env else config.env)


class WorkerPool:
    """The game slots of one worker process, on their own asyncio loop thread."""

    def __init__(self, worker: Any = None) -> None:
        """`worker`: the Dask worker this process runs (None: found when in a task)."""
        self.loop = new_asyncio_loop()  # the runner's: engine lines stamped at the poll
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="runner-games")
        self._thread.start()
        # One monitor for the pool's loop, ticking for the pool's life: a flag that falls
        # while this process stood still gives a game played again, not a time forfeit.
        self.freezes = FreezeMonitor()
        self.loop.call_soon_threadsafe(self.freezes.acquire)
        self._free: list[GameSlot] = []
        self._busy: set[GameSlot] = set()
        self._games: set[asyncio.Task[JobReply]] = set()
        self._own: dict[str, EngineConfig] | None = None
        self.builds = WorkerBuilds()
        self.name, self.address = worker_identity(worker)

    def run(self, job: GameJob, fresh: frozenset[str], moves: MoveSender | None = None,
            orders: Mapping[str, BuildOrder] | None = None) -> JobReply:
        """Play `job` on a free slot (blocking the calling thread until it ends); `moves`
        gets every move of the game as it is played; an engine `orders` names is built here."""
        return asyncio.run_coroutine_threadsafe(self._start(job, fresh, moves, orders or {}),
                                                self.loop).result()

    async def _start(self, job: GameJob, fresh: frozenset[str], moves: MoveSender | None,
                     orders: Mapping[str, BuildOrder]) -> JobReply:
        task = asyncio.ensure_future(self._play(job, fresh, moves, orders))
        self._games.add(task)
        try:
            return await task
        finally:
            self._games.discard(task)

    async def _play(self, job: GameJob, fresh: frozenset[str], moves: MoveSender | None,
                    orders: Mapping[str, BuildOrder]) -> JobReply:
        """The job on a free slot, its engines as this worker starts them."""
        try:
            own = self._own_engines()
        except ConfigError as exc:
            failed = EngineFailed(job.white.name, f"{ENGINES_FILE_ENV}: {exc}")
            return JobReply(failed, self.name, self.address)
        sides = []
        told: list[MachineBuild] = []
        for config in (job.white, job.black):
            order = orders.get(config.name)
            if order is None:
                sides.append(resolve(config, own))
                continue
            try:  # built once per process (the first game waits for it), off the game loop
                built = await asyncio.to_thread(self.builds.engine, order, config.name,
                                                self.name)
            except RuntimeError as exc:
                return JobReply(EngineFailed(config.name, str(exc)), self.name, self.address,
                                tuple(told))
            if self.builds.untold(order, config.name):
                told.append(built.record)
            sides.append(built.started_from(config))
        job = dataclasses.replace(job, white=sides[0], black=sides[1])
        slot = self._free.pop() if self._free else GameSlot(freezes=self.freezes)
        slot.fresh_engines = fresh
        self._busy.add(slot)
        try:
            outcome = await slot.play(job, on_move=moves)
        finally:
            self._busy.discard(slot)
            self._free.append(slot)
        if isinstance(outcome, Played):
            outcome = dataclasses.replace(
                outcome, record=dataclasses.replace(outcome.record, worker=self.name))
        return JobReply(outcome, self.name, self.address, tuple(told))

    def _own_engines(self) -> dict[str, EngineConfig]:
        if self._own is None:
            self._own = local_engines()
        return self._own

    async def abort(self) -> int:
        """Cancel every game in progress and stop every engine; returns the games cancelled."""
        games = list(self._games)
        for task in games:
            task.cancel()
        await asyncio.gather(*games, return_exceptions=True)
        await asyncio.gather(*(slot.close() for slot in [*self._free, *self._busy]))
        return len(games)

    def close(self) -> None:
        """Stop every engine and the loop (at the worker's exit)."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.abort(), self.loop).result(timeout=15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def _the_pool(worker: Any = None) -> WorkerPool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool(worker)
            atexit.register(_pool.close)
        return _pool


# -- what the coordinator calls ----------------------------------------------------------------


def dask_setup(worker: Any) -> None:
    """Dask preload hook for the LocalCluster's workers: leave Ctrl-C to the coordinator.

    A terminal's Ctrl-C reaches every process of the run's process group; the coordinator
    decides what it means (finish the running games, or abort them), so its local workers
    must not die of it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def play_job(job_json: str, fresh: tuple[str, ...] = (), watch: str | None = None,
             orders: str | None = None) -> str:
    """A Dask task: play one `GameJob` (JSON) on this worker's pool; a `JobReply` as JSON.

    With `watch` (the task's key), every move is sent on `MOVES_TOPIC` as it is played.
    With `orders` (`runner.build.placed.orders_json`), the engines they name are built
    here first (once per worker process).
    """
    moves = None
    if watch is not None:
        from distributed import get_worker

        moves = MoveSender(get_worker(), watch)
    built = read_orders(orders) if orders else None
    return _the_pool().run(GameJob.from_json(job_json), frozenset(fresh), moves,
                           built).to_json()


async def build_engines(orders: str, dask_worker: Any = None) -> list[dict[str, Any]]:
    """Run on every worker (``client.run``) before a run's first game: build each ordered
    engine here and measure its bench, off the worker's loop. One entry per engine: its
    name and either ``build`` (a `MachineBuild` as JSON) or ``failed`` (why, with the end of
    the build's output)."""
    pool = _the_pool(dask_worker)
    found: list[dict[str, Any]] = []
    for name, order in read_orders(orders).items():
        try:
            built = await asyncio.to_thread(pool.builds.engine, order, name, pool.name)
        except RuntimeError as exc:
            found.append({"engine": name, "side": order.side, "failed": str(exc)})
            continue
        pool.builds.untold(order, name)  # reported now, not again with a game
        found.append({"engine": name, "side": order.side, "build": built.record.to_json()})
    return found


async def abort_games() -> int:
    """Run on every worker (``client.run``) at a hard stop: cancel its games, stop its engines."""
    if _pool is None:
        return 0
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_pool.abort(), _pool.loop))


def executing_keys(dask_worker: Any = None) -> list[str]:
    """Run on every worker (``client.run``): the keys of the tasks it is executing now."""
    if dask_worker is None:
        return []
    return [str(task.key) for task in dask_worker.state.executing]


async def release_pool() -> int:
    """Run on every worker at the end of a run: stop the engines kept between games."""
    return await abort_games()


async def check_worker(engine_jsons: list[str], tablebases: tuple[str, ...] = (),
                       dask_worker: Any = None) -> dict[str, Any]:
    """What this host offers: cores, threads, slots, each engine started once, and the
    Syzygy tables it finds in `tablebases` (when the tournament names some).

    Runs on a worker's own loop (``client.run``) or in this process for the local machine.
    Each engine entry says ``ok``, the engine's own name (id line), its protocol and, when it
    did not start, why. Dask passes `dask_worker` to functions run with ``client.run``.
    """
    name, address = worker_identity(dask_worker)
    info: dict[str, Any] = {"worker": name, "address": address, "host": socket.gethostname(),
                            "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                            else os.cpu_count(), "threads": None, "slots": None, "engines": []}
    if dask_worker is not None:
        info["threads"] = dask_worker.state.nthreads
        info["slots"] = dask_worker.state.total_resources.get("slots")
    try:
        own = local_engines()
    except ConfigError as exc:
        own = {}
        info["engines_file_error"] = str(exc)
    configs = [resolve(_adapter(EngineConfig).validate_json(text), own) for text in engine_jsons]
    info["engines"] = list(await asyncio.gather(*(_try_engine(config) for config in configs)))
    if tablebases:
        info["tablebases"] = _tables_here(tablebases)
    return info


def _tables_here(directories: tuple[str, ...]) -> dict[str, Any]:
    """The tables this host has in `directories`: how many, the largest piece count, the
    largest complete one; or why there are none. Each worker's games open their own."""
    from runner.tablebase import Tablebase, TablebaseError

    entry: dict[str, Any] = {"directories": list(directories), "tables": 0, "max_pieces": 0,
                             "complete_pieces": 0, "text": ""}
    try:
        with Tablebase(directories) as tables:
            entry.update(tables=len(tables.tables()), max_pieces=tables.max_pieces,
                         complete_pieces=tables.complete_pieces)
    except (TablebaseError, OSError) as exc:
        entry["text"] = str(exc)
    return entry


async def _try_engine(config: EngineConfig) -> dict[str, Any]:
    """Start one engine with no configured name (so its own name shows), then stop it."""
    entry: dict[str, Any] = {"name": config.name, "protocol": config.protocol,
                             "command": list(config.argv), "ok": False, "id": None, "text": ""}
    engine = make_engine(dataclasses.replace(config, name=""))
    try:
        await engine.start()
        entry["ok"] = True
        entry["id"] = engine.name
    except EngineError as exc:
        entry["text"] = str(exc)
    except (OSError, ValueError) as exc:
        entry["text"] = str(exc)
    finally:
        await stop_engines([engine])
    return entry


def engine_json(config: EngineConfig) -> str:
    """An engine's configuration as JSON, for `check_worker`."""
    return _adapter(EngineConfig).dump_json(config).decode()
