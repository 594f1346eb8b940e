"""The protocol of engines configured without one, asked before a run's first game.

An engine with no ``proto=`` used to be spoken to over CECP whatever it was: a UCI engine
then lost every game before its first move, on time or by disconnection, and the run still
printed a score. Here each such engine is started once over CECP and its first lines
decide: a UCI engine answers ``xboard`` with ``id name``/``uciok`` or with Stockfish's
"Unknown command", a CECP engine with its ``feature`` lines (or by finishing its start-up).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable

from runner.config.model import EngineSpec, Protocol, TournamentConfig
from runner.protocol.engine import EngineError
from runner.protocol.factory import make_engine, stop_engines
from runner.tournament.runtime import engine_config

__all__ = ["detect_protocol", "looks_uci", "resolve_protocols"]

_UCI_SIGNS = ("id name ", "id author ", "uciok", "option name ", "Unknown command: 'xboard'",
              "Unknown command: 'protover")
"""How lines of a UCI engine greeted in CECP start (Stockfish names the command it refused)."""


def looks_uci(text: str) -> bool:
    """Whether a line an engine printed while greeted in CECP is a UCI engine's."""
    return text.strip().startswith(_UCI_SIGNS)


async def detect_protocol(spec: EngineSpec) -> Protocol | None:
    """The protocol `spec`'s engine speaks, or None when it could not be told (it failed to
    start): the engine is started over CECP and stopped again."""
    engine = make_engine(engine_config(dataclasses.replace(spec, protocol=Protocol.CECP)))
    task = asyncio.ensure_future(engine.start())
    seen = 0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.02)
            if done:
                try:
                    task.result()
                except (EngineError, OSError, ValueError):  # it did not start: the run says so
                    return None
                return Protocol.CECP
            lines = engine.transcript[seen:]
            seen += len(lines)
            for entry in lines:
                if entry.direction != "<":
                    continue
                if looks_uci(entry.text):
                    return Protocol.UCI
                if entry.text.startswith("feature "):
                    return Protocol.CECP
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await stop_engines([engine])


async def resolve_protocols(config: TournamentConfig,
                            say: Callable[[str], None]) -> TournamentConfig:
    """`config` with every engine's protocol known: those given none are asked (in parallel,
    once per command), and `say` gets one line per such engine naming what was found."""
    unknown = [spec for spec in config.engines if spec.protocol_detect]
    if not unknown:
        return config
    keys = {_start_key(spec): spec for spec in unknown}
    answers = await asyncio.gather(*(detect_protocol(spec) for spec in keys.values()))
    found = dict(zip(keys, answers, strict=True))
    engines = []
    for spec in config.engines:
        if not spec.protocol_detect:
            engines.append(spec)
            continue
        protocol = found[_start_key(spec)]
        if protocol is Protocol.UCI:
            say(f"engine {spec.name!r} has no proto= and answers as a UCI engine: it is played "
                "over UCI (give proto=uci or proto=cecp to skip this check)")
        elif protocol is Protocol.CECP:
            say(f"engine {spec.name!r} has no proto= and answers as a CECP (xboard) engine: it is "
                "played over CECP (give proto=cecp or proto=uci to skip this check)")
        else:
            say(f"engine {spec.name!r} has no proto= and did not start to tell which protocol it "
                "speaks: it is tried over CECP")
        engines.append(dataclasses.replace(spec, protocol=protocol or Protocol.CECP,
                                           protocol_detect=False))
    return dataclasses.replace(config, engines=tuple(engines))


def _start_key(spec: EngineSpec) -> tuple[object, ...]:
    """What decides how an engine starts: engines alike in it are asked once."""
    return (spec.command, spec.dir, spec.env, spec.init_strings)
