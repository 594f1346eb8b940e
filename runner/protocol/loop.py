"""The event loop the runner's commands run on: asyncio's own, or uvloop when asked for.

One place decides, so that every command that plays games (``runner run``, ``match``,
``play``, ``engine check``...) runs on the same loop, and so that the tests and
``benchmarks/peers.py --loops`` can put the engine process layer on either.
``RUNNER_LOOP=uvloop`` runs on uvloop (it must be installed: ``pip install uvloop``);
unset or ``asyncio``, asyncio's own loop.

asyncio's loop stays the default. uvloop costs less CPU per ply (0.85-0.94x beyond start-up
in the runs of docs/benchmarks.md: its turn costs a third of asyncio's interpreted one), and
the move's watchdog now keeps its guarantee on both loops (a reply already in the pipe at an
overdue deadline is read first: `runner.protocol.waiting.Watchdog`). What still keeps it
off (docs/benchmarks.md, "This round: uvloop by default, tried and taken back"): libuv keeps
timers in whole milliseconds, so a wait meant as "at least 0.2 s" ended after 0.19994 s, and
the fast suite on uvloop left one engine process behind in the transports fallback's test.
The engine process layer works on both: it needs only ``add_reader`` and the public
transport API.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import gc
import importlib
import os
import select
import selectors
import sys
import termios
import time
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar, cast

from runner.text import shown

__all__ = [
    "GC_ENV",
    "GC_THRESHOLDS",
    "LOOK_AFTER",
    "LOOP_ENV",
    "ArrivalSelector",
    "LoopChoiceError",
    "Mark",
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

LOOK_AFTER = 0.001
"""Seconds of a loop turn after which a read callback looks again at the watched pipes
(`ArrivalSelector.arrived`): a line that comes meanwhile is stamped within about this plus
one callback of its arrival, however long the turn."""

Mark = tuple[float, int]
"""(a monotonic time, how many bytes waited in a pipe then)."""

_MOST_MARKS = 4
"""Marks kept per pipe between two reads of it (a pipe whose reading is paused)."""


class ArrivalLooks:
    """For the pipes it is asked to watch, when bytes were seen waiting in each and how
    many: from the read callbacks, a look at all of them at most every `LOOK_AFTER` seconds.

    On uvloop (`arrival_selector`), whose loop has no selector to wrap, these looks are all
    there is: libuv runs the read callbacks of one poll one after another right after it,
    so the first read of a poll stamps its own lines within a callback of the poll, and a
    look from a later read marks what came to the other pipes while the earlier callbacks
    ran. Looks are taken at most once a `LOOK_AFTER`: an ``epoll_wait`` of the watched pipes
    and a FIONREAD of each readable one, a bounded cost however many games run.
    """

    def __init__(self) -> None:
        self._watched: set[int] = set()
        # The watched pipes alone, for the looks (level-triggered); made with the first
        # watched pipe and closed with the last, so no descriptor outlives the engines.
        self._looker: select.epoll | select.poll | None = None
        self._marks: dict[int, list[Mark]] = {}  # watched descriptor -> marks, oldest first
        self._looked_at = 0.0

    def watch(self, fd: int) -> None:
        """Count the bytes waiting in `fd` (a pipe or socket we read) at every poll or look."""
        if fd not in self._watched:
            self._watched.add(fd)
            looker = self._looker
            if looker is None:
                looker = self._looker = select.epoll() if hasattr(select, "epoll") else select.poll()
            with contextlib.suppress(OSError):  # not pollable: its marks come from polls alone
                looker.register(fd, select.POLLIN)

    def unwatch(self, fd: int) -> None:
        """Stop counting for `fd` (it is being closed; the number may be reused)."""
        if fd in self._watched:
            self._watched.discard(fd)
            looker = self._looker
            if looker is not None:
                with contextlib.suppress(OSError, KeyError, ValueError):
                    looker.unregister(fd)
                if not self._watched:
                    self._close_looker()
        self._marks.pop(fd, None)

    def arrived(self, fd: int, now: float) -> Sequence[Mark]:
        """The marks of `fd` since it was last read (taken back: a second read in the same
        turn gets none); `now`, the read's time, looks at the other pipes again when
        `LOOK_AFTER` seconds have passed since the last poll or look."""
        marks = self._marks.pop(fd, ())
        looker = self._looker
        if looker is not None and now - self._looked_at > LOOK_AFTER:
            self._looked_at = now
            for found, _events in looker.poll(0):
                self._mark(found, now, self._marks)
        return marks

    def _mark(self, fd: int, now: float, marks: dict[int, list[Mark]]) -> None:
        """Note in `marks` how many bytes wait in `fd` now, if more than its last mark."""
        if fd not in self._watched:
            return
        try:
            counted = fcntl.ioctl(fd, termios.FIONREAD, _NO_BYTES)
        except OSError:
            return
        count = int.from_bytes(counted, sys.byteorder)
        if count <= 0:
            return
        kept = marks.get(fd)
        if kept is None:
            marks[fd] = [(now, count)]
        elif kept[-1][1] < count:
            if len(kept) < _MOST_MARKS:
                kept.append((now, count))
            else:  # bounded: the last mark moves later (its bytes stamped late, never early)
                kept[-1] = (now, count)

    def close(self) -> None:
        """Forget every pipe and close the looks' own descriptor."""
        self._marks.clear()
        self._watched.clear()
        self._close_looker()

    def _close_looker(self) -> None:
        looker, self._looker = self._looker, None
        close = getattr(looker, "close", None)  # a poll object holds no descriptor
        if close is not None:
            close()


class ArrivalSelector(ArrivalLooks):
    """The loop's selector, noting for the pipes it is asked to watch when bytes were seen
    waiting in each, and how many: at every poll, and again during a long turn.

    Why: asyncio runs a turn's ready callbacks one after another. With many games at once
    a turn is long, and a stamp taken in the read callback would charge an engine's clock
    with the other games' referee and store work. The bytes counted at the poll were in our
    pipe when it returned: the lines they complete are stamped then. A reply that comes
    while the turn is still running waits for the next poll, and a stamp taken there charges
    the rest of the turn to the engine (issue 38: with 64 games at once the callback-driven
    game charged every move half a turn of every game's work, 26 ms on average, and lost a
    third of its games on time; the replies had come in a millisecond). So once a turn has
    run `LOOK_AFTER` seconds, the next read callback looks at the watched pipes again
    (a zero-timeout poll of them alone) and marks what has come since. A line is stamped by
    the earliest mark whose bytes complete it; bytes no mark counted keep the read's own
    time, so no line is ever stamped before it reached us.

    It wraps the selector asyncio would pick and offers the methods asyncio's selector loop
    calls (register, unregister, modify, select, get_key, get_map, close).
    """

    def __init__(self, inner: selectors.BaseSelector | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`inner` is the selector that does the polling (the platform's default); `clock`
        the monotonic clock the marks are taken on (a test's own)."""
        super().__init__()
        self._inner: selectors.BaseSelector = inner if inner is not None else selectors.DefaultSelector()
        self._clock = clock
        self.polled_at = 0.0
        """The monotonic time the last `select` returned."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Poll; then, for each watched descriptor found readable, count its waiting bytes."""
        ready = self._inner.select(timeout)
        now = self._clock()
        self.polled_at = self._looked_at = now
        earlier = self._marks
        # A pipe not found readable has nothing waiting: its older marks go.
        marks: dict[int, list[Mark]] = {}
        watched = self._watched
        if watched:
            # A poll that waited found nothing queued before it, and asyncio runs the
            # callbacks of what it found in this order: the first one reads at once, and its
            # read's own time is its stamp, so its count is not asked (a FIONREAD, the
            # larger part of this method's cost with one or two games at once).
            first = 1 if timeout is None or timeout > 0 else 0
            for key, events in ready[first:]:
                fd = key.fd
                if fd in watched and events & selectors.EVENT_READ:
                    kept = earlier.get(fd)
                    if kept is not None:
                        marks[fd] = kept
                    self._mark(fd, now, marks)
            if first and ready:
                fd = ready[0][0].fd
                kept = earlier.get(fd)
                if kept is not None:  # a paused pipe's marks stay until it is read
                    marks[fd] = kept
        self._marks = marks
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
        super().close()
        self._inner.close()


def new_asyncio_loop() -> asyncio.AbstractEventLoop:
    """asyncio's own selector loop, polling through an `ArrivalSelector`."""
    return asyncio.SelectorEventLoop(cast(selectors.BaseSelector, ArrivalSelector()))


_UVLOOP_LOOKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ArrivalLooks] = (
    weakref.WeakKeyDictionary())
"""uvloop's loops -> their looks (closed with the object when the loop is collected)."""


def arrival_selector(loop: asyncio.AbstractEventLoop) -> ArrivalLooks | None:
    """What notes when engine output reached `loop`'s pipes: the `ArrivalSelector` it polls
    through when `new_asyncio_loop` made it, looks of its own on uvloop (one per loop), else
    None (a loop made elsewhere, such as a test's own: lines stamped when read)."""
    selector = getattr(loop, "_selector", None)  # asyncio's attribute: absent on uvloop
    if isinstance(selector, ArrivalSelector):
        return selector
    if not type(loop).__module__.startswith("uvloop"):
        return None
    looks = _UVLOOP_LOOKS.get(loop)
    if looks is None:
        looks = _UVLOOP_LOOKS[loop] = ArrivalLooks()
    return looks
