"""Creating engine handles for a protocol, and running them safely (always stopped afterwards)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.lifetime import finish_uncancelled
from runner.types import Protocol


def make_engine(config: EngineConfig) -> Engine:
    """An engine handle speaking the configured protocol (not started yet)."""
    # Each protocol's client is imported by the first engine that speaks it: a UCI-only run
    # loads none of the CECP dialogue (and its dataclasses and patterns) at start-up.
    if config.protocol is Protocol.CECP:
        from runner.protocol.cecp import CecpEngine

        return CecpEngine(config)
    if config.protocol is Protocol.UCI:
        from runner.protocol.uci import UciEngine

        return UciEngine(config)
    raise ValueError(f"engine {config.name!r}: unknown protocol {config.protocol!r}")


async def stop_engines(engines: Sequence[Engine]) -> None:
    """Quit every engine (escalating to signals), never raising."""
    async def stop(engine: Engine) -> None:
        with contextlib.suppress(Exception):
            await engine.quit()

    await asyncio.gather(*(stop(e) for e in engines))


@contextlib.asynccontextmanager
async def running_engines(configs: Sequence[EngineConfig]) -> AsyncIterator[list[Engine]]:
    """Start engines together and guarantee they are stopped when the block ends."""
    engines = [make_engine(c) for c in configs]
    try:
        await asyncio.gather(*(e.start() for e in engines))
        yield engines
    finally:
        # Uncancellable: a second interrupt must not cut quit -> SIGTERM -> SIGKILL short.
        await finish_uncancelled(stop_engines(engines))
