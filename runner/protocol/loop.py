"""The event loop the runner's commands run on: asyncio's own, or uvloop when asked for.

One place decides, so that every command that plays games (``runner run``, ``match``,
``play``, ``engine check``...) runs on the same loop, and so that the tests and
``benchmarks/peers.py --loops`` can put the engine process layer on either.
``RUNNER_LOOP=uvloop`` runs on uvloop (it must be installed: ``pip install uvloop``);
unset or ``asyncio``, asyncio's own loop.

asyncio's loop stays the default because uvloop saves too little here: measured with
``benchmarks/peers.py --loops asyncio,uvloop`` (100 games, interleaved, two runs), the
runner's CPU per ply was 3.5% lower on uvloop on average (about 10 us of 250-320 us on
fairymax and stockfish, lower in 15 of 16 pairs of runs); what a ply costs is the runner's own
Python (line handling, the referee, the store), the loop's part of it was already one callback
per chunk read. The engine process layer works on both: it needs only the public transport API.
"""

from __future__ import annotations

import asyncio
import fcntl
import gc
import importlib
import os
import selectors
import sys
import termios
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar, cast

from runner.text import shown

__all__ = [
    "GC_ENV",
    "GC_THRESHOLDS",
    "LOOP_ENV",
    "ArrivalSelector",
    "LoopChoiceError",
    "arrival_selector",
    "loop_factory",
    "loop_name",
    "new_asyncio_loop",
    "run",
]

LOOP_ENV = "RUNNER_LOOP"
"""The environment variable that chooses the event loop."""

GC_ENV = "RUNNER_GC"
"""Set to ``python``, games run with Python's own collector thresholds (for measuring)."""

GC_THRESHOLDS = (10_000, 20, 100)
"""The collector's thresholds while a command runs (Python's are 700, 10, 10).

A game allocates many short-lived containers (lines, futures, moves) and makes few cycles:
at Python's 700 the young generation was collected about 240 times in a 32-game match at
concurrency 16 and the middle one 21 times (2 ms each, up to 15 ms on a loaded machine), some
200 ms of the runner's CPU that found next to nothing; at these, 15 collections and none of
the older generations (measured with gc.callbacks, 2026-11-25, load 11-13). Garbage cycles
are still collected, later."""

_CHOICES = ("asyncio", "uvloop")

_T = TypeVar("_T")


class LoopChoiceError(RuntimeError):
    """``RUNNER_LOOP`` names an unknown loop, or uvloop when it is not installed."""


def _requested() -> str:
    value = os.environ.get(LOOP_ENV, "").strip().lower() or "asyncio"
    if value not in _CHOICES:
        raise LoopChoiceError(f"environment variable {LOOP_ENV}={os.environ[LOOP_ENV]!r}: "
                              f"expected one of {', '.join(_CHOICES)}")
    return value


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor when it was asked for, else None (asyncio's own loop)."""
    if _requested() == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError as exc:
        raise LoopChoiceError(f"environment variable {LOOP_ENV}=uvloop, but uvloop is not "
                              f"installed ({exc}); pip install uvloop") from exc
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop `run` would use now."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run` on the chosen loop (Python 3.11 has ``loop_factory`` only on Runner)."""
    try:
        factory = loop_factory()
    except LoopChoiceError:
        main.close()  # never awaited: say so quietly rather than with a warning
        raise
    thresholds = gc.get_threshold()
    if os.environ.get(GC_ENV, "").strip().lower() != "python":
        gc.set_threshold(*GC_THRESHOLDS)
    try:
        with asyncio.Runner(loop_factory=factory or new_asyncio_loop) as runner:
            runner.get_loop().set_exception_handler(_escaped_report)
            return runner.run(main)
    finally:
        gc.set_threshold(*thresholds)


def _escaped_report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of an error nobody handled, on one line with its control characters
    escaped: the error may quote an engine's stderr, which must never reach a terminal raw."""
    message = str(context.get("message") or "unhandled error in the event loop")
    exc = context.get("exception")
    if exc is not None:
        message += f": {type(exc).__name__}: {exc}"
    sys.stderr.write(shown(message) + "\n")


# ---------------------------------------------------------------- when engine output arrived


_NO_BYTES = bytes(4)
"""The buffer FIONREAD fills with an int: how many bytes wait in a pipe."""


class ArrivalSelector:
    """The loop's selector, noting for the pipes it is asked to watch how many bytes were
    already in each when `select` returned, and when that was.

    Why: asyncio runs a turn's ready callbacks one after another, the game steps left over
    from the turn before first. With many games at once, an engine's reply read by the last
    of them waits behind the others' referee and store work, and a stamp taken in the read
    callback charges that wait to the engine's clock. The bytes counted here were in our pipe
    when the poll returned: the lines they complete are stamped then (see `arrived`). Bytes
    that came later (read by the same call) keep the read's own time, so no line is ever
    stamped before it reached us: an engine that overruns still loses on time.

    It wraps the selector asyncio would pick and offers the methods asyncio's selector loop
    calls (register, unregister, modify, select, get_key, get_map, close).
    """

    def __init__(self, inner: selectors.BaseSelector | None = None) -> None:
        """`inner` is the selector that does the polling (the platform's default)."""
        self._inner: selectors.BaseSelector = inner if inner is not None else selectors.DefaultSelector()
        self._watched: set[int] = set()
        self._waiting: dict[int, int] = {}  # watched descriptor -> bytes in it at the poll
        self.polled_at = 0.0
        """The monotonic time the last `select` returned."""

    def watch(self, fd: int) -> None:
        """Count the bytes waiting in `fd` (a pipe or socket we read) at every poll."""
        self._watched.add(fd)

    def unwatch(self, fd: int) -> None:
        """Stop counting for `fd` (it is being closed; the number may be reused)."""
        self._watched.discard(fd)
        self._waiting.pop(fd, None)

    def arrived(self, fd: int) -> tuple[float, int]:
        """(when the last poll returned, how many bytes of `fd` were waiting then); the
        count is taken back, so a second read in the same turn gets 0."""
        return self.polled_at, self._waiting.pop(fd, 0)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Poll; then, for each watched descriptor found readable, count its waiting bytes."""
        ready = self._inner.select(timeout)
        self.polled_at = time.monotonic()
        waiting = self._waiting
        waiting.clear()
        watched = self._watched
        if watched:
            for key, events in ready:
                fd = key.fd
                if fd in watched and events & selectors.EVENT_READ:
                    try:
                        counted = fcntl.ioctl(fd, termios.FIONREAD, _NO_BYTES)
                    except OSError:
                        continue
                    waiting[fd] = int.from_bytes(counted, sys.byteorder)
        return ready

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """As `selectors.BaseSelector.register`."""
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        """As `selectors.BaseSelector.unregister`."""
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        """As `selectors.BaseSelector.modify`."""
        return self._inner.modify(fileobj, events, data)

    def get_key(self, fileobj: Any) -> selectors.SelectorKey:
        """As `selectors.BaseSelector.get_key`."""
        return self._inner.get_key(fileobj)

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        """As `selectors.BaseSelector.get_map`."""
        return self._inner.get_map()

    def close(self) -> None:
        """As `selectors.BaseSelector.close`."""
        self._waiting.clear()
        self._watched.clear()
        self._inner.close()


def new_asyncio_loop() -> asyncio.AbstractEventLoop:
    """asyncio's own selector loop, polling through an `ArrivalSelector`."""
    return asyncio.SelectorEventLoop(cast(selectors.BaseSelector, ArrivalSelector()))


def arrival_selector(loop: asyncio.AbstractEventLoop) -> ArrivalSelector | None:
    """The `ArrivalSelector` `loop` polls through, if it was made by `new_asyncio_loop`
    (not uvloop's, nor a loop made elsewhere, such as a test's own)."""
    selector = getattr(loop, "_selector", None)  # asyncio's attribute: absent on uvloop
    return selector if isinstance(selector, ArrivalSelector) else None
