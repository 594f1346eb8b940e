"""The options each allow-listed engine declares, learnt by starting it once and kept.

A submission may set only an engine's declared spin, check and combo options; knowing the
declarations at submission time turns a refusal the engine's start would make (before the
first game) into a 422 with the option's key path. An engine that cannot be started here is
not judged here: its start checks the options again wherever it runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Mapping

from runner.app.protocols import ask_protocols
from runner.config.model import Protocol, TournamentConfig
from runner.protocol.engine import EngineConfig, EngineError, EngineOption
from runner.protocol.factory import make_engine, stop_engines

__all__ = ["DeclaredOptions"]

log = logging.getLogger(__name__)

_Key = tuple[str, tuple[str, ...], str, tuple[tuple[str, str], ...]]


class DeclaredOptions:
    """Each engine's declared options (None: it did not start), by how it is started."""

    def __init__(self) -> None:
        self._known: dict[_Key, Mapping[str, EngineOption] | None] = {}
        self._lock = threading.Lock()
        self._protocols: dict[tuple[object, ...], Protocol | None] = {}
        self._asking = threading.Lock()

    def with_protocols(self, config: TournamentConfig) -> TournamentConfig:
        """`config` with each engine the engines file gives no protocol played over the one
        it answers in, asked the first time and remembered (blocking, as `of`)."""
        # One submission asks at a time: the next one finds the answer instead of asking too.
        with self._asking:
            return asyncio.run(ask_protocols(config, _log, known=self._protocols))

    def of(self, config: EngineConfig) -> Mapping[str, EngineOption] | None:
        """The options `config`'s engine declares, starting it the first time (blocking:
        call it from a worker thread, as the submission check runs)."""
        key: _Key = (config.protocol, config.argv, str(config.working_dir),
                     tuple(sorted((config.env or {}).items())))
        with self._lock:
            if key in self._known:
                return self._known[key]
        found = asyncio.run(_probe(config))
        with self._lock:
            self._known[key] = found
        return found


def _log(line: str) -> None:
    """Keep what was found about an engine's protocol in the service's log."""
    log.info("%s", line)


async def _probe(config: EngineConfig) -> Mapping[str, EngineOption] | None:
    """Start the engine with nothing configured, read its declarations, stop it."""
    bare = dataclasses.replace(config, options={}, init_strings=(), options_submitted=False)
    engine = make_engine(bare)
    try:
        await engine.start()
        return dict(engine.options)
    except (EngineError, OSError, ValueError):
        return None
    finally:
        await stop_engines([engine])
