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
    and the loop may run the timer first (uvloop always does: libuv runs due timers before
    it polls). So a reply already readable when an overdue deadline is checked is read
    before the deadline fails the request:

    - with a `look` (`look_with`: the engine's raw pipe, `EngineProcess.read_waiting`), the
      timer reads what waits in the pipe at once, in its own callback, as the read callback
      would; the reply, if there, answers the request, which then does not fail;
    - without one (asyncio's transports, a bare future), the request fails only after one
      full loop turn with its poll for I/O and the read callbacks that poll found: the timer
      queues a callback (`call_soon`) that queues the check. asyncio runs, each turn, the
      callbacks queued before its poll, and queues the poll's read callbacks before anything
      those queue; uvloop runs queued callbacks in libuv's idle phase, before that turn's
      poll, and what they queue in the next turn's. Either way the check comes after a poll.
    """

    __slots__ = ("_began", "_deadline", "_future", "_handle", "_look", "_loop", "_request",
                 "_what")

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._future: Waiter | None = None
        self._deadline = 0.0
        self._began = 0.0
        self._what: Callable[[], str] = str
        self._request = 0  # counts the requests armed: a late check knows its own
        self._look: Callable[[], None] | None = None

    def look_with(self, look: Callable[[], None] | None) -> None:
        """`look` reads at once whatever output waits unread in the engine's pipe (its reply,
        if there, answers the request): called when a deadline is found overdue, before the
        request fails. None: the check waits one loop turn instead."""
        self._look = look

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
        self._request += 1
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
        loop = self._loop
        assert loop is not None
        self._handle = None
        future = self._future
        if future is None or future.done():
            return
        now = loop.time()
        if now < self._deadline:
            self._handle = loop.call_at(self._deadline, self._fire)
            return
        request = self._request
        look = self._look
        if look is None:  # no pipe to read here: check again after the next poll's reads
            loop.call_soon(self._after_turn, future, request, True)
            return
        look()  # the reply, if it waits, answers the request (which may ask the next one)
        if self._request == request:
            self._fail(future, now)

    def _after_turn(self, future: Waiter, request: int, queue_again: bool) -> None:
        """The overdue check of `request`, queued from the timer: once more (so it runs
        after a poll, see the class's note), then failing it if it still waits."""
        if self._future is not future or self._request != request:
            return  # answered (or cancelled) meanwhile, maybe another request armed
        loop = self._loop
        assert loop is not None
        if queue_again:
            loop.call_soon(self._after_turn, future, request, False)
        else:
            self._fail(future, loop.time())

    def _fail(self, future: Waiter, now: float) -> None:
        """The request's deadline passed, its reply not read: EngineStalled."""
        if not future.done():
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
