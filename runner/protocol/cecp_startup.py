"""`CecpStartup`: starting a CECP engine: ``xboard``, ``protover 2`` and its features.

The base of `CecpEngine` (cecp.py) between it and `CecpReading`: the spawn, the wait for
``done=1`` with ping probes for engines quiet at start-up, the restarts of a stuck start,
the configured options, and a fresh process per game for ``reuse=0``.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import math
import os
import time

from runner.protocol.cecp_commands import option_command
from runner.protocol.cecp_features import CecpFeatures
from runner.protocol.cecp_reading import CecpReading
from runner.protocol.engine import CecpDialogue, EngineConfig, EngineStalled
from runner.protocol.options import find_declared, sent_value
from runner.protocol.process import EngineProcess
from runner.types import Protocol

__all__ = ["CecpStartup"]

# Ping probes for an engine quiet before done=1: the first after `_PROBE_AFTER` seconds without
# a line, then at intervals growing from `_PROBE_INTERVAL` to 1 s.  gnuchess 6.2.7 (-x) stays
# stuck at start-up until input arrives, a few lines per burst of features (see _negotiate):
# probing only after the first 2 s wait made its start-up take seconds now and then.
_PROBE_AFTER = 0.25
_PROBE_INTERVAL = 0.05


def _start_cpu() -> int:
    """The CPU a restarted engine starts on: the lowest this runner may use."""
    return min(os.sched_getaffinity(0))


class CecpStartup(CecpReading):
    """A CECP client's start-up (see the module)."""

    async def start(self) -> None:
        """Spawn the engine and negotiate features (``xboard``, ``protover 2``, ``done``).

        An engine that sends no feature within ``silent_restart_after`` seconds, and nothing
        else either or only pongs (a protocol-1 engine would not know ping), is killed and
        spawned again, up to
        ``silent_start_retries`` times (see `_negotiate` for the engine that needs it); the
        last attempt waits the full ``start_timeout`` and then assumes protocol 1.
        """
        began = time.monotonic()
        cfg = self.config
        attempts = 1 + (cfg.silent_start_retries if self._transport_given is None else 0)
        silent_for: list[float] = []
        for attempt in range(1, attempts + 1):
            attempt_began = time.monotonic()
            # A restart after a stuck start runs on one CPU until its features are in:
            # gnuchess 6.2.7 then starts at once (30 of 30 in 0.42-0.49 s on an idle machine,
            # against up to 12 s with restarts unpinned). See _negotiate.
            proc = await self._spawn(None if attempt == 1 else _start_cpu())
            for seconds in silent_for:
                proc.note(f"a previous process sent no features in {seconds:.1f} s "
                          "(nothing at all, or only pongs) and was killed")
            self._last_line_at = None
            self._listen(proc)
            # The lean dialogue says the init strings once, before anything else.
            early = cfg.init_strings if cfg.cecp_dialogue is CecpDialogue.LEAN else ()
            await self._send(*early, "xboard", "protover 2")
            last = attempt == attempts
            stuck = await self._negotiate(
                attempt_began, None if last else attempt_began + cfg.silent_restart_after)
            if isinstance(proc, EngineProcess):
                proc.release_cpu()
            if not stuck:
                break
            silent_for.append(time.monotonic() - attempt_began)
            await self.kill()
            self._features = CecpFeatures()
            self._pongs.clear()
        settings = self._option_commands()
        if settings:
            await self._send(*settings)
        self._started(began)

    def _option_commands(self, cfg: EngineConfig | None = None) -> list[str]:
        """``option NAME=VALUE`` for each configured option, every one declared by the engine
        (and, for a submitter's options, of a kind a submitter may set); ValueError, naming
        the engine and the option, before anything is sent otherwise."""
        cfg = cfg or self.config
        declared = self._features.options
        lines = []
        for name, value in cfg.options.items():
            option = find_declared(self.name, name, declared, declared.get)
            sent = sent_value(self.name, option, value, Protocol.CECP, cfg.options_submitted)
            try:
                # A button's value was read as none: its written one spells it again.
                lines.append(option_command(option, value if sent is None else sent))
            except ValueError as exc:  # a name holding '='
                raise ValueError(f"engine {self.name}: {exc}") from None
        return lines

    # ----------------------------------------------------------------- start-up

    async def _negotiate(self, began: float, silent_limit: float | None = None) -> bool:
        """Wait for ``done=1``: 2 s by default, longer after ``done=0``, probing quiet engines.

        Until ``done=1``, an engine quiet for a moment (`_PROBE_AFTER` at first, then a
        slowly growing interval from `_PROBE_INTERVAL` up to 1 s) gets a ``ping``.  An engine
        silent after the default wait may be a protocol-1 engine or a slow or stuck one;
        no features until ``start_timeout`` means protocol 1.  Silence is never fatal here:
        only an exit, or ``done=0`` without ``done=1`` in ``feature_done_timeout``, is.  With
        `silent_limit`, an engine without features by then that printed nothing at all, or
        only pongs, is given up on: True is returned and the caller restarts it.

        gnuchess 6.2.7 (-x) needs the probes: after "protover 2" it answers nothing until more
        input arrives, and then only part of its features, a few lines of input at a time (its
        input thread holds the stdin lock in fgets() while its adapter thread waits for it in
        setbuf(stdin); every line read releases the lock for a moment).
        """
        cfg = self.config
        nudges: list[int] = []
        last_probe: float | None = None
        stuck = False
        while self._features.done != 1:
            now = time.monotonic()
            if self._features.done == 0:
                deadline = self._features.done0_at + cfg.feature_done_timeout
                if now >= deadline:
                    raise EngineStalled("engine said done=0 but never done=1", now - began)
            elif self._features.seen_any:
                deadline = began + cfg.feature_timeout
                if now >= deadline:
                    break  # features without done=1: the default two-second rule
            else:
                if now >= began + cfg.start_timeout:
                    break
                # A pong means a v2 engine (v1 has no ping) whose features are late: gnuchess
                # answers pings from one thread while another, stuck, owes the features.
                ponged = any(self._pongs[n].done() for n in nudges)
                if silent_limit is not None and now >= silent_limit \
                        and (self._last_line_at is None or ponged):
                    stuck = True
                    break
                deadline = min(began + cfg.start_timeout, silent_limit or math.inf)
            if last_probe is None:
                next_probe = max(began, self._last_line_at or began) + _PROBE_AFTER
            else:
                gap = _PROBE_INTERVAL if len(nudges) < 100 else 1.0
                next_probe = max(last_probe, self._last_line_at or began) + gap
            if now >= next_probe:
                number = next(self._ping_counter)
                nudges.append(number)
                self._pongs[number] = asyncio.get_running_loop().create_future()
                await self._send(f"ping {number}")
                last_probe = time.monotonic()
                continue
            await self._wait_changed(min(deadline, next_probe) - time.monotonic())
        for number in nudges:
            self._pongs.pop(number, None)
        complete = self._features.done == 1
        self._proc_note(
            f"features {'complete' if complete else 'missing' if stuck else 'assumed (v1 defaults)'}"
            f"{f' after {len(nudges)} ping probe(s)' if nudges else ''}"
        )
        return stuck

    async def _await_late_features(self) -> None:
        """If the engine sent ``done=0`` late (after start-up), wait for its ``done=1``."""
        began = time.monotonic()
        while self._features.done == 0:
            remaining = self._features.done0_at + self.config.feature_done_timeout - time.monotonic()
            if remaining <= 0:
                raise EngineStalled("engine said done=0 but never done=1",
                                    time.monotonic() - began)
            await self._wait_changed(remaining)

    async def _restart(self) -> None:
        """reuse=0: a fresh process for every game."""
        await self.quit()
        self._features = CecpFeatures()
        self._pongs.clear()
        await self.start()

