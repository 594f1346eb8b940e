"""Engines never outlive the runner: a death signal in the child, a net at exit, stops that finish.

Three layers, because each covers a way of ending the others cannot:

- `death_signal()` is run in the engine's child process between fork and exec: it asks Linux
  (``prctl(PR_SET_PDEATHSIG)``) to SIGKILL the engine when the thread that started it ends.
  That is what makes engines die with a runner killed by ``kill -9`` (nothing of ours runs
  then). It must be called from the event loop's thread (asyncio starts subprocesses from it),
  which lives as long as the loop.
- `track`/`untrack` keep the engines that were started and not yet cleaned up; at interpreter
  exit (an exception out of the loop, a second KeyboardInterrupt), whatever is left is sent
  SIGKILL, process group and all.
- `finish_uncancelled` lets a shutdown (quit, SIGTERM, SIGKILL: bounded) run to its end even
  when the task awaiting it is cancelled again, a second Ctrl-C for instance.

Why a ``preexec_fn`` although Python warns that it is unsafe with threads: the danger is a
lock held by another thread at fork time and needed in the child before exec. The function
here calls one foreign function resolved in the parent beforehand (no import, no allocation
of note, errno not saved: no thread-local storage created) and ``getppid``; it takes no lock.
The alternatives cost more: a wrapper program (``setpriv --pdeathsig``, not everywhere) or an
extra Python process per engine. The price is that the child is started with fork rather
than vfork: well under a millisecond here (see the commit that made this change).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

__all__ = ["death_signal", "finish_uncancelled", "kill_leftovers", "track", "untrack"]

_T = TypeVar("_T")

_PR_SET_PDEATHSIG = 1


class _Group(Protocol):
    """What the exit net needs of a tracked engine: the id of its process group."""

    @property
    def pid(self) -> int | None:
        """The engine's pid, which is also its process group's id."""


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, resolved once (never in a forked child), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                         ctypes.c_ulong]
    function.restype = ctypes.c_int
    return function


_PRCTL = _prctl()


def death_signal() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child SIGKILLed when its parent thread ends (Linux), or
    None where that is not available."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the runner died before the request took effect
            os._exit(1)

    return set_death_signal


_LIVE: dict[int, _Group] = {}


def track(engine: _Group) -> None:
    """Remember a started engine until `untrack`: it is killed at exit if still there."""
    _LIVE[id(engine)] = engine


def untrack(engine: _Group) -> None:
    """The engine was stopped and cleaned up."""
    _LIVE.pop(id(engine), None)


def kill_leftovers() -> int:
    """SIGKILL the process group of every tracked engine; how many were signalled."""
    count = 0
    for engine in list(_LIVE.values()):
        pid = engine.pid
        if pid is None:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
            count += 1
    _LIVE.clear()
    return count


atexit.register(kill_leftovers)


async def finish_uncancelled(awaitable: Awaitable[_T]) -> _T:
    """Await `awaitable` to its end even if this task is cancelled meanwhile; then raise
    CancelledError if it was. Only for bounded work (engine shutdowns are)."""
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():  # the work itself was cancelled: nothing left to wait for
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return result
