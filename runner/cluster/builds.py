"""Engines built on the Dask worker that plays them: a branch test's sides, from the build
orders their configuration carries (`EngineSpec.built_from`).

Each worker process builds an order once, in its own build cache (``RUNNER_BUILD_CACHE``,
else the user's cache directory): a scratch checkout per (repository, commit, recipe), the
key taking this machine's compiler, with the recipe's time limit and a bounded log, exactly
as the service's host builds (`runner.build.build`). The coordinator asks every worker to
build before the first game (`build_engines`, which also measures the bench there); a worker
that joins later builds at its first game. Either way the job's engine is then started from
this machine's build, never from the coordinator's paths.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner.build import Bench, BenchFailed, BuildFailed, BuildOrder, GitError, build, default_cache
from runner.build.bench import measure_bench
from runner.build.benches import LOG_SHOWN, MachineBuild
from runner.config.check import ConfigError
from runner.protocol.engine import EngineConfig
from runner.tournament.runtime import engine_config

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["BUILD_CACHE_ENV", "BuiltHere", "WorkerBuilds", "orders_json", "read_orders"]

BUILD_CACHE_ENV = "RUNNER_BUILD_CACHE"
"""Environment variable naming a worker's build cache (else the user's cache directory)."""


@dataclass(frozen=True)
class BuiltHere:
    """An order built on this worker: the engine to start, and the record of its build."""

    engine: EngineConfig
    record: MachineBuild


class WorkerBuilds:
    """The orders this worker process built (or failed to build), each once."""

    def __init__(self, cache: Path | None = None) -> None:
        found = os.environ.get(BUILD_CACHE_ENV)
        self.cache = cache or (Path(found) if found else default_cache())
        self._done: dict[tuple[str, str], BuiltHere | str] = {}
        self._told: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def untold(self, order: BuildOrder, name: str) -> bool:
        """Whether the build of `order` as `name` is yet to be reported to the coordinator
        (True once: the caller reports it now)."""
        key = (name, order.commit)
        with self._lock:
            if key in self._told:
                return False
            self._told.add(key)
            return True

    def engine(self, order: BuildOrder, name: str, machine: str) -> BuiltHere:
        """`order` built here as engine `name` (once per process; the disk cache across
        processes); raises RuntimeError with the build's or the bench's reason and the end of
        its output."""
        key = (name, order.commit)
        with self._lock:  # two slots needing the same engine: one build
            done = self._done.get(key)
            if done is None:
                try:
                    done = self._build(order, name, machine)
                except (BuildFailed, BenchFailed, GitError, ConfigError, OSError) as exc:
                    done = _failure(order, exc)
                self._done[key] = done
        if isinstance(done, str):
            raise RuntimeError(done)
        return done

    def _build(self, order: BuildOrder, name: str, machine: str) -> BuiltHere:
        built = build(order.recipe, order.commit, self.cache)
        bench: Bench | None = measure_bench(built) if order.recipe.bench else None
        spec = built.engine(name)
        return BuiltHere(engine_config(spec), MachineBuild.of(order.side, built, bench, machine))


def _failure(order: BuildOrder, exc: Exception) -> str:
    """Why `order` gave no engine here, with the end of what the build or bench printed."""
    tail = getattr(exc, "log", None) or getattr(exc, "output", None) or ""
    lines = "\n".join(str(tail)[-LOG_SHOWN:].splitlines()[-30:])
    what = ("build failed" if isinstance(exc, BuildFailed)
            else "bench failed" if isinstance(exc, BenchFailed) else "could not build")
    text = f"{order.side} ({order.commit[:12]}): {what}: {exc}"
    return f"{text}\n{lines}" if lines else text


def orders_json(orders: Mapping[str, BuildOrder]) -> str:
    """The build orders by engine name as JSON (what the coordinator sends a worker)."""
    return _orders().dump_json(dict(orders)).decode()


def read_orders(text: str) -> dict[str, BuildOrder]:
    """Build orders by engine name from `orders_json` output; ValueError when not such."""
    return _orders().validate_json(text)


@functools.cache
def _orders() -> TypeAdapter[dict[str, BuildOrder]]:
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, BuildOrder])
