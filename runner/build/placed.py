"""Engines built on the machine that plays them (a Dask worker, a remote worker of
``runner worker join``): a branch test's sides, from the build orders their configuration
carries (`EngineSpec.built_from`).

Each worker process builds an order once, in its own build cache (``RUNNER_BUILD_CACHE``,
else the user's cache directory): a scratch checkout per (repository, commit, recipe), the
key taking this machine's compiler, with the recipe's time limit and a bounded log, exactly
as the service's host builds (`runner.build.build`), and measures its bench. The job's
engine is then started from this machine's build, never from the coordinator's paths.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.build import Bench, BenchFailed, BuildFailed, BuildOrder, GitError, build, default_cache
from runner.build.bench import measure_bench
from runner.build.benches import LOG_SHOWN, MachineBuild
from runner.config.check import ConfigError
from runner.config.model import EngineSpec
from runner.protocol.engine import EngineConfig

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["BUILD_CACHE_ENV", "BuiltHere", "WorkerBuilds", "orders_data", "orders_json",
           "read_orders", "read_orders_data"]

BUILD_CACHE_ENV = "RUNNER_BUILD_CACHE"
"""Environment variable naming a worker's build cache (else the user's cache directory)."""


@dataclass(frozen=True)
class BuiltHere:
    """An order built on this worker: the engine to start, and the record of its build."""

    spec: EngineSpec
    record: MachineBuild

    def started_from(self, config: EngineConfig) -> EngineConfig:
        """A job's engine `config` started from this build (its argv, directory and
        environment), everything else as the job says."""
        return dataclasses.replace(config, argv=self.spec.command, working_dir=self.spec.dir,
                                   env=dict(self.spec.env) or None)


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
        return BuiltHere(spec, MachineBuild.of(order.side, built, bench, machine))


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


def orders_data(orders: Mapping[str, BuildOrder]) -> dict[str, Any]:
    """The build orders by engine name as JSON types (a remote worker's batch carries them)."""
    data: dict[str, Any] = _orders().dump_python(dict(orders), mode="json")
    return data


def read_orders_data(data: object) -> dict[str, BuildOrder]:
    """Build orders from `orders_data` output; ValueError when not such."""
    return _orders().validate_python(data)


@functools.cache
def _orders() -> TypeAdapter[dict[str, BuildOrder]]:
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, BuildOrder])
