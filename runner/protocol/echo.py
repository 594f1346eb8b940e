"""Every line exchanged with an engine, echoed to a stream as it passes (a debugging aid).

An `EchoingTranscript` is an engine process's transcript that also writes each line sent
(``>``) and read (``<``) to a stream, as ``MS >NAME(N): LINE``: MS the milliseconds since
this process started, NAME the engine's name at that moment, N the number of the engine
process in this runner (0 for the first one started, a restarted engine gets the next).
The format is cutechess-cli's ``-debug``, which CECP authors read. The engine's text is
foreign: written with its control characters escaped (runner.text.shown).
"""

from __future__ import annotations

import itertools
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TextIO

from runner.protocol.engine import TranscriptEntry
from runner.text import shown

__all__ = ["EchoingTranscript", "process_started"]

_NUMBERS = itertools.count()
"""The engine processes echoed in this runner: one sequence a process, as the numbers in the
echo count the engines of the whole run (the runner's standard output is one stream too)."""


_STARTED: float | None = None
"""`process_started`'s answer, read once."""


def process_started() -> float:
    """When this process started, on the `time.monotonic` clock (Linux's /proc; elsewhere,
    the first call)."""
    global _STARTED
    if _STARTED is None:
        try:
            with open("/proc/self/stat", encoding="ascii") as stat:
                ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            with open("/proc/uptime", encoding="ascii") as uptime:
                up = float(uptime.read().split()[0])
            age = max(0.0, up - ticks / os.sysconf("SC_CLK_TCK"))
            _STARTED = time.monotonic() - age
        except (OSError, ValueError, IndexError):
            _STARTED = time.monotonic()
    return _STARTED


class EchoingTranscript(deque[TranscriptEntry]):
    """A bounded transcript that echoes each line sent or read to `stream` (see the module)."""

    def __init__(self, maxlen: int, stream: TextIO, name: Callable[[], str]) -> None:
        """`name` gives the engine's name when a line passes (it may learn its own)."""
        super().__init__(maxlen=maxlen)
        self._stream = stream
        self._name = name
        self._number = next(_NUMBERS)
        self._origin = process_started()

    def append(self, entry: TranscriptEntry) -> None:
        """Keep the entry and echo it."""
        super().append(entry)
        self._echo((entry,))

    def extend(self, entries: Iterable[TranscriptEntry]) -> None:
        """Keep the entries and echo them."""
        batch = list(entries)
        super().extend(batch)
        self._echo(batch)

    def _echo(self, entries: Iterable[TranscriptEntry]) -> None:
        label = f"{self._name()}({self._number})"
        text = "".join(f"{round((entry.time - self._origin) * 1000)} {entry.direction}{label}: "
                       f"{shown(entry.text)}\n"
                       for entry in entries if entry.direction in "<>")
        if text:
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError):
                pass  # a reader gone: the echo is a debugging aid, the games go on
