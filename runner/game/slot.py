"""One game slot: plays a job after another with engines it keeps between games.

`GameSlot.play` readies the job's two engines (the ones it kept, when they are the same
engines and still answer a ping; else started afresh), plays the game and returns what
happened as one of three values, never an exception for an engine's or a game's fault:

- `Played`: the game's record (possibly marked for replay, a runner-side failure);
- `EngineFailed`: an engine did not start (the job was not played, it may be tried again);
- `CannotSetUp`: an engine refuses its configuration, or the game cannot be set up for
  these engines; every such job would fail alike.

The rules, here only: an engine is reused by its full configuration (not its name: the same
name with another command or timeout is another engine), or by all of it but its options'
values when the protocol can send new values to the running process (`Engine.change_options`:
a tuning run's sides between pairs); after a game it stalled,
disconnected or erred in, after a replay, and for every game when its name is in
`fresh_engines`, the slot's engines are started afresh; a cancelled `play` (a hard stop)
kills the engines it holds and the one it is starting, whatever step it is at, so no engine
process outlives it. Both the in-process scheduler and a Dask worker run their games on these
slots; where a job goes and what an outcome means for the run is theirs to decide.
`SlotPool` keeps slots, with their engines up, from one run to the next (a tuning run's pairs).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from runner.game.job import GameJob
from runner.game.live import LiveMove, MoveWatch
from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import Engine, EngineConfig, EngineError
from runner.protocol.factory import make_engine, stop_engines
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.lifetime import finish_uncancelled

__all__ = [
    "MAX_START_FAILURES",
    "RESTART_AFTER",
    "CannotSetUp",
    "EngineFailed",
    "GameSlot",
    "Played",
    "SlotOutcome",
    "SlotPool",
]

RESTART_AFTER = frozenset({GameTermination.STALL, GameTermination.DISCONNECT,
                           GameTermination.ERROR})
"""Terminations after which the slot starts its engines afresh for the next game."""
MAX_START_FAILURES = 3
"""Consecutive failed starts of one engine after which a run should give up on it."""


@dataclass(frozen=True)
class Played:
    """The game was played: its record (``record.replay``: failed on the runner's side)."""

    record: GameRecord
    seconds: float
    """Wall-clock seconds of the game itself (engines ready to record)."""
    kind: Literal["played"] = "played"


@dataclass(frozen=True)
class EngineFailed:
    """An engine of the job did not start; the job was not played."""

    engine: str
    """The engine's name."""
    reason: str
    kind: Literal["engine"] = "engine"
    os_error: str | None = None
    """The system's words when the program could not be run (``No such file or directory``),
    as peers that print them need them; None for any other failure."""


@dataclass(frozen=True)
class CannotSetUp:
    """The job cannot be played with these engines (a refused option, a variant or a limit
    an engine does not support); trying again would fail alike."""

    reason: str
    kind: Literal["setup"] = "setup"


SlotOutcome = Played | EngineFailed | CannotSetUp
"""What `GameSlot.play` returns; ``kind`` tells them apart once serialized."""


@dataclass
class _Kept:
    """An engine the slot keeps, with the configuration it was started with."""

    config: EngineConfig
    engine: Engine


@dataclass(eq=False)
class GameSlot:
    """Plays one game at a time, keeping its engines up between games (see the module)."""

    number: int = 0
    """The slot's number in its scheduler (also which CPU it pins to, with `affinity`)."""
    fresh_engines: frozenset[str] = frozenset()
    """Engines started afresh for every game (``restart = "on"``)."""
    affinity: bool = False
    """Pin the slot's engines to one CPU (chosen by `number`)."""
    freezes: FreezeMonitor | None = None
    """The loop's freeze monitor, passed to every game."""
    engine_factory: Callable[[EngineConfig], Engine] = make_engine
    notify: Callable[[str], None] = lambda _text: None
    """Where to say what the user should know (an engine died between games, a failed pin)."""
    _kept: dict[str, _Kept] = field(default_factory=dict)

    async def play(self, job: GameJob, *, on_ready: Callable[[], Awaitable[None]] | None = None,
                   on_move: Callable[[LiveMove], None] | None = None) -> SlotOutcome:
        """Play `job`; `on_ready` is awaited once both engines are ready, `on_move` gets every
        move. Cancelled at any step, the slot's engines are killed before it re-raises."""
        try:
            return await self._play(job, on_ready, on_move)
        except BaseException:
            await finish_uncancelled(self.close())
            raise

    async def close(self) -> None:
        """Stop every engine the slot keeps (quit, then signals; never raising)."""
        await self._drop(frozenset())

    async def _play(self, job: GameJob, on_ready: Callable[[], Awaitable[None]] | None,
                    on_move: Callable[[LiveMove], None] | None) -> SlotOutcome:
        await self._drop(frozenset(job.engines))
        engines: list[Engine] = []
        for config in (job.white, job.black):
            try:
                engines.append(await self._engine(config))
            except EngineError as exc:
                # The compiled (mypyc) process module loses `raise ... from` in a coroutine
                # (__cause__ is None) but keeps the implicit context: read either.
                cause = exc.__cause__ or exc.__context__
                return EngineFailed(config.name, str(exc), os_error=cause.strerror if isinstance(
                    cause, OSError) and cause.strerror else None)
            except ValueError as exc:
                # Started, but it refuses what it was configured with (an option it does not
                # declare, say): every start would end alike.
                await self.close()
                return CannotSetUp(str(exc))
        if on_ready is not None:
            await on_ready()
        began = time.monotonic()
        watch = None if on_move is None else MoveWatch(job.spec, on_move)
        try:
            record = await play_game(engines[0], engines[1], job.spec, on_move=watch,
                                     freezes=self.freezes)
        except ValueError as exc:  # a variant or a fixed depth an engine cannot play
            await self.close()
            return CannotSetUp(str(exc))
        seconds = time.monotonic() - began
        # A move cut by the ceiling (no clock ran) leaves its engine searching: start afresh.
        ceiling_cut = (record.termination is GameTermination.TIME_FORFEIT
                       and record.spec.move_ceiling is not None)
        if (record.replay or record.termination in RESTART_AFTER or ceiling_cut
                or self.fresh_engines.intersection(job.engines)):
            await self.close()
        return Played(record, seconds)

    async def _drop(self, keep: frozenset[str]) -> None:
        gone = [self._kept.pop(name).engine for name in list(self._kept) if name not in keep]
        if gone:
            # A second interrupt must not cut the engines' quit -> SIGTERM -> SIGKILL short.
            await finish_uncancelled(stop_engines(gone))

    async def _engine(self, config: EngineConfig) -> Engine:
        """The engine for `config`: the kept one while it answers a ping, else a new one."""
        kept = self._kept.pop(config.name, None)
        if kept is not None:
            self._kept[config.name] = kept  # a cancelled ping leaves it to close()
            try:
                if kept.config == config or await kept.engine.change_options(config):
                    kept.config = config
                    await kept.engine.ping()
                    return kept.engine
            except EngineError:
                self.notify(f"{config.name} died between games; restarting it")
            del self._kept[config.name]
            await finish_uncancelled(stop_engines([kept.engine]))
        engine = self.engine_factory(config)
        try:
            await engine.start()
        except BaseException:  # cancelled half-way too: the process must not be left running
            with contextlib.suppress(Exception):
                await finish_uncancelled(engine.kill())
            raise
        self._kept[config.name] = _Kept(config, engine)
        if self.affinity:
            self._pin(engine)
        return engine

    def _pin(self, engine: Engine) -> None:
        """Pin an engine process to the slot's CPU (its later threads and children follow)."""
        pid = engine.pid
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if pid is None or not cpus:
            return
        cpu = cpus[self.number % len(cpus)]
        try:
            os.sched_setaffinity(pid, {cpu})
        except OSError as exc:
            self.notify(f"cannot pin {engine.name} to CPU {cpu}: {exc}")



@dataclass(eq=False)
class SlotPool:
    """Game slots kept between runs, their engines up: a run's scheduler takes idle ones
    (`take`) and gives back those that ended without a fault (`give`); the pool's owner
    stops them all with `close` (a cancelled run's slots stop their own engines)."""

    idle: list[GameSlot] = field(default_factory=list)

    def take(self) -> GameSlot | None:
        """An idle slot (the longest idle first), or None when there is none."""
        return self.idle.pop(0) if self.idle else None

    def give(self, slot: GameSlot) -> None:
        """Keep `slot` (and its engines) for the next run."""
        self.idle.append(slot)

    async def close(self) -> None:
        """Stop every engine of every idle slot (never raising)."""
        slots, self.idle = self.idle, []
        for slot in slots:
            await slot.close()
