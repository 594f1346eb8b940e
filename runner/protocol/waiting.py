"""Waiting for an engine's answers: a deadline in one event-loop hop, and the end of output.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from runner.protocol.engine import EngineError, EngineStalled

__all__ = ["OutputState", "ReplyCall", "Watchdog", "wait_answer"]

_T = TypeVar("_T")


async def wait_answer(future: asyncio.Future[_T], timeout: float | None, what: str) -> _T:
    """Await one of a client's own futures; EngineStalled(`what`) if `timeout` passes first.

    The future is awaited directly and a timer fails it, so the answer reaches the waiting
    task in one event-loop hop (``wait_for(shield(...))`` takes three, about 20 us of every
    relayed move). The future must be the caller's alone: the timer sets its exception.
    """
    if timeout is None:
        return await future
    began = time.monotonic()

    def expire() -> None:
        if not future.done():
            future.set_exception(EngineStalled(what, time.monotonic() - began))

    timer = asyncio.get_running_loop().call_later(max(timeout, 0.0), expire)
    try:
        return await future
    finally:
        timer.cancel()


class ReplyCall:
    """What stands for a reply future when a move is asked for without awaiting it: the
    reply (or the fault: the timer's, the end of output's) is passed on at once, inside the
    read callback or the timer, to `on_result` or `on_error` (whichever comes first, once).

    It offers the few methods of `asyncio.Future` that the readers and the timer call
    (`done`, `set_result`, `set_exception`, `exception`), so they take either alike; no task
    is woken and nothing is scheduled on the loop.
    """

    __slots__ = ("_done", "_on_error", "_on_result")

    def __init__(self, on_result: Callable[[Any], None],
                 on_error: Callable[[BaseException], None]) -> None:
        self._done = True
        self._on_result = on_result
        self._on_error = on_error

    def open(self) -> None:
        """A new request waits (the stand-in is reused from one request to the next)."""
        self._done = False

    def close(self) -> None:
        """The request is over without an answer to pass on: later ones are ignored."""
        self._done = True

    def done(self) -> bool:
        """Whether the reply or a fault was passed on already."""
        return self._done

    def set_result(self, result: Any) -> None:
        """Pass the reply on (ignored once done)."""
        if not self._done:
            self._done = True
            self._on_result(result)

    def set_exception(self, exc: BaseException) -> None:
        """Pass the fault on (ignored once done)."""
        if not self._done:
            self._done = True
            self._on_error(exc)

    def exception(self) -> BaseException | None:
        """None: a fault was handed on, never kept to be retrieved."""
        return None


Waiter = asyncio.Future[Any] | ReplyCall
"""What waits for an engine's answer: a future a task awaits, or a `ReplyCall`."""


class Watchdog:
    """The deadline of one request at a time, kept by a timer that outlives the requests.

    A move is asked for once a ply; a timer made and cancelled for each (`wait_answer`)
    costs a heap push and leaves a cancelled handle for the loop to sweep. Here the armed
    timer stays when the next deadline is later than it (always so for depth-limited and
    most timed play): when it fires early it re-arms for the deadline then current, and
    fails the awaited future only once that has passed.

    At the deadline the reply may already be in the pipe, unread: after the runner was
    stopped (SIGSTOP, a VM pause) the overdue timer and the readable pipe come due together,
    and the timer may be run first. So the first firing past the deadline only re-arms for
    "now": a due timer runs after the I/O callbacks of the next loop turn, which read the
    pipe; the future fails only if it is still waiting then.
    """

    __slots__ = ("_began", "_deadline", "_future", "_handle", "_looked", "_loop", "_what")

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: Waiter | None = None
        self._deadline = 0.0
        self._began = 0.0
        self._what: Callable[[], str] = str
        self._looked = False

    async def wait(self, future: asyncio.Future[_T], timeout: float, what: Callable[[], str]) -> _T:
        """Await `future` (the caller's own); EngineStalled(`what()`) once `timeout` passes."""
        # The future's own loop (the running one): asyncio.get_running_loop() would cost a
        # getpid system call on every move.
        self.arm(future.get_loop(), future, timeout, what)
        try:
            return await future
        finally:
            self._future = None

    def arm(self, loop: asyncio.AbstractEventLoop, future: Waiter, timeout: float,
            what: Callable[[], str]) -> None:
        """Fail `future` with EngineStalled(`what()`) once `timeout` passes (unless it is
        done by then); the timer is re-armed, not made anew, from one request to the next."""
        now = loop.time()
        deadline = now + max(timeout, 0.0)
        self._future, self._deadline, self._began, self._what = future, deadline, now, what
        self._looked = False
        handle = self._handle
        if handle is None or self._loop is not loop or handle.when() > deadline:
            if handle is not None:
                handle.cancel()
            self._loop = loop
            self._handle = loop.call_at(deadline, self._fire)

    def disarm(self) -> None:
        """The request was answered: the timer (kept for the next) fails nothing now."""
        self._future = None

    def cancel(self) -> None:
        """Drop the timer (the client is done with its engine)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._future = None

    def _fire(self) -> None:
        assert self._loop is not None
        self._handle = None
        future = self._future
        if future is None or future.done():
            return
        now = self._loop.time()
        if now < self._deadline:
            self._handle = self._loop.call_at(self._deadline, self._fire)
            return
        if not self._looked:  # one more loop turn: let a reply waiting in the pipe be read
            self._looked = True
            self._handle = self._loop.call_at(now, self._fire)
            return
        future.set_exception(EngineStalled(self._what(), now - self._began))


class OutputState:
    """Whether a client is taking its engine's output, and the error that ended it."""

    __slots__ = ("ended", "listening")

    def __init__(self) -> None:
        self.listening = False
        self.ended: EngineError | None = None

    def begin(self) -> None:
        """A (new) process's output is being taken from now on."""
        self.listening, self.ended = True, None

    def end(self, exc: EngineError, waiting: Iterable[Waiter | None]) -> None:
        """The output ended with `exc`: every future still `waiting` fails with it."""
        if self.ended is None:
            self.ended = exc
        for future in waiting:
            if future is not None and not future.done():
                future.set_exception(exc)
                # Its waiter may be gone (cancelled, or moved on): the error is kept in
                # `ended` and told by `check`, so asyncio must not print it as unretrieved.
                future.exception()

    def stop(self, name: str) -> None:
        """The client stopped taking output (quit or kill): later calls fail."""
        if self.ended is None:
            self.ended = EngineError(f"{name} is stopped")

    def check(self, name: str) -> None:
        """Raise the error that ended the output, or one saying the engine never started."""
        if not self.listening:
            raise EngineError(f"engine {name} is not started")
        if self.ended is not None:
            raise self.ended
