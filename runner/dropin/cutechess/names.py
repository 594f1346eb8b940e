"""The names of engines given without ``name=``: what each engine reports, as cutechess-cli
names them (CECP ``feature myname=...``, UCI ``id name ...``).

Each such engine is started once before the run, asked nothing but the handshake, and quit;
its name is foreign text, escaped and bounded by the protocol layer (`PipeEngine.name`). An
engine that reports none, or does not start (the run then says why), keeps its program's
name. Two engines reporting one name are numbered (``-2``...), as the runner keeps results by
name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from runner.config.vocabulary import numbered

if TYPE_CHECKING:
    from runner.config.model import EngineSpec

__all__ = ["reported_names"]

_ASK_TIMEOUT = 60.0
"""Seconds an engine may take to start before its program's name is kept."""


def reported_names(specs: Sequence[EngineSpec], unnamed: Sequence[bool]) -> list[str]:
    """Each engine's name: its configured one where `unnamed` is False, else the one it
    reports (see the module), numbered when taken."""
    asked = asyncio.run(_ask([spec for spec, ask in zip(specs, unnamed, strict=True) if ask]))
    replies = iter(asked)
    names: list[str] = []
    taken = {spec.name for spec, ask in zip(specs, unnamed, strict=True) if not ask}
    for spec, ask in zip(specs, unnamed, strict=True):
        if not ask:
            names.append(spec.name)
            continue
        names.append(numbered(next(replies) or spec.name, taken))
    return names


async def _ask(specs: Sequence[EngineSpec]) -> list[str | None]:
    """The name each engine reports (None: none, or it did not start), asked together."""
    return list(await asyncio.gather(*(_ask_one(spec) for spec in specs)))


async def _ask_one(spec: EngineSpec) -> str | None:
    """Start one engine under no name, read the name it gives itself, quit it."""
    import dataclasses

    from runner.protocol.engine import EngineError
    from runner.protocol.factory import make_engine
    from runner.tournament.runtime import engine_config

    config = dataclasses.replace(engine_config(spec), name="", echo_lines=False)
    engine = make_engine(config)
    try:
        await asyncio.wait_for(engine.start(), _ASK_TIMEOUT)
        own = engine.name  # with no configured name: its own, else its program
        reported = own if own and own != config.argv[0] else None
    except (EngineError, OSError, ValueError, TimeoutError):
        reported = None
    finally:
        with contextlib.suppress(Exception):
            await engine.quit()
    return reported

