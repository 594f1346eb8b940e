"""The protocol of engines configured without one, asked before a run's first game.

An engine with no ``proto=`` used to be spoken to over CECP whatever it was: a UCI engine
then lost every game before its first move, on time or by disconnection, and the run still
printed a score. Here each such engine is started twice at once, greeted in each protocol:
a UCI engine completes the ``uci`` handshake or answers ``xboard`` with UCI lines or an
"Unknown command", a CECP engine sends ``feature`` lines; a CECP engine of protocol 1, silent
on both, is taken as CECP once the UCI copy has had its time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import Callable

from runner.config.model import EngineSpec, Protocol, TournamentConfig
from runner.protocol.engine import EngineError
from runner.protocol.factory import make_engine, stop_engines
from runner.tournament.runtime import engine_config

__all__ = ["detect_protocol", "looks_uci", "resolve_protocols"]

_UCI_SIGNS = ("id name ", "id author ", "uciok", "option name ")
"""How lines of a UCI engine start."""
_REFUSED_GREETING = re.compile(r"unknown command:?\s*'?(?:xboard|protover)", re.IGNORECASE)
"""A UCI engine refusing CECP's greeting (Stockfish: "Unknown command: 'xboard'. Type help...",
Glaurung: "Unknown command: xboard"); a CECP engine says "Error (unknown command): ..."."""

UCI_PROBE_SECONDS = 5.0
"""How long the UCI probe may take once the CECP one found no features: a silent engine is
either a UCI engine that ignores ``xboard`` (Toga II) or a protocol-1 CECP engine."""


def looks_uci(text: str) -> bool:
    """Whether a line an engine printed while greeted in CECP is a UCI engine's."""
    text = text.strip()
    return text.startswith(_UCI_SIGNS) or _REFUSED_GREETING.match(text) is not None


async def detect_protocol(spec: EngineSpec) -> Protocol | None:
    """The protocol `spec`'s engine speaks, or None when it could not be told (it failed to
    start). Two copies are started at once, one greeted in CECP and one in UCI; the first
    clear answer wins and both are stopped."""
    cecp = asyncio.ensure_future(_cecp_probe(spec))
    uci = asyncio.ensure_future(_uci_probe(spec))
    try:
        done, _ = await asyncio.wait({cecp, uci}, return_when=asyncio.FIRST_COMPLETED)
        if uci in done and uci.result():
            return Protocol.UCI
        found, started = await cecp
        if found is not None:
            return found
        # The CECP copy sent no feature line: a UCI answer may still come (a silent engine).
        try:
            answered = await asyncio.wait_for(asyncio.shield(uci), UCI_PROBE_SECONDS)
        except TimeoutError:
            answered = False
        if answered:
            return Protocol.UCI
        return Protocol.CECP if started else None
    finally:
        for task in (cecp, uci):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _uci_probe(spec: EngineSpec) -> bool:
    """Whether a copy of the engine greeted with ``uci`` completes the UCI handshake."""
    engine = make_engine(engine_config(dataclasses.replace(spec, protocol=Protocol.UCI,
                                                           options=())))
    try:
        await engine.start()
        return True
    except (EngineError, OSError, ValueError):
        return False
    finally:
        await stop_engines([engine])


async def _cecp_probe(spec: EngineSpec) -> tuple[Protocol | None, bool]:
    """What a copy of the engine greeted in CECP shows (UCI lines, feature lines, or None when
    its start ends without either), and whether that start succeeded."""
    engine = make_engine(engine_config(dataclasses.replace(spec, protocol=Protocol.CECP,
                                                           options=())))
    task = asyncio.ensure_future(engine.start())
    seen = 0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.02)
            lines = engine.transcript[seen:]
            seen += len(lines)
            for entry in lines:
                if entry.direction != "<":
                    continue
                if looks_uci(entry.text):
                    return Protocol.UCI, True
                if entry.text.startswith("feature "):
                    return Protocol.CECP, True
            if done:
                try:
                    task.result()
                except (EngineError, OSError, ValueError):
                    return None, False
                return None, True
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await stop_engines([engine])


async def resolve_protocols(config: TournamentConfig, say: Callable[[str], None], *,
                            known: dict[tuple[object, ...], Protocol | None] | None = None,
                            ) -> TournamentConfig:
    """`config` with every engine's protocol known: those given none are asked (in parallel,
    once per command), and `say` gets one line per such engine naming what was found.
    `known` keeps the answers between calls (a service asks each engine once)."""
    unknown = [spec for spec in config.engines if spec.protocol_detect]
    if not unknown:
        return config
    found = {} if known is None else known
    keys = {key: spec for spec in unknown if (key := _start_key(spec)) not in found}
    answers = await asyncio.gather(*(detect_protocol(spec) for spec in keys.values()))
    found.update(zip(keys, answers, strict=True))
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
