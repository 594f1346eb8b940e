"""The service's connections under uvicorn: deadlines for slow clients, a cap, quiet accepts.

uvicorn (h11) closes a keep-alive connection only after a response: a connection that never
sends a complete request head, or whose body stalls, is held forever, and so is a descriptor
for each. What this adds, on uvicorn's own h11 protocol class:

- the request head must be complete within ``header_timeout`` of the connection (or, on a
  kept-alive connection, of the next request's first byte); a trickle of bytes does not reset
  the deadline, since it runs from the start of the head;
- the request body must be complete within ``body_timeout`` of its head;
- idle kept-alive connections are closed after ``keep_alive_timeout`` (uvicorn's own timer);
- at most ``max_connections`` at once, and ``max_connections_per_client`` from one client
  (see `client_key`): a connection beyond either is answered 503 at once and closed, before
  anything is read, so refusing costs a descriptor for a moment only;
- the "socket.accept() out of system resource" errors (EMFILE: asyncio logs one per pending
  connection, with a traceback, every second while they last) are logged once, then summed up
  at growing intervals.

Nothing here touches a response: an event stream, once its request is read, lives as long as
the app keeps it open.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from runner.service.security import client_key

__all__ = ["BACKLOG", "ConnectionGuard", "GuardedH11Protocol", "fd_budget", "raise_fd_limit"]

logger = logging.getLogger("uvicorn.error")

_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\nretry-after: 5\r\ncontent-length: %d\r\n\r\n%s")

_ACCEPT_ERROR = "socket.accept() out of system resource"

LINGERING = 64
"""Refused connections that may wait at once for their client to read the refusal."""

BACKLOG = 256
"""The listening socket's backlog. asyncio also accepts up to this many connections in one
go before any of them is seen (and refused) by the protocol: each takes a descriptor
meanwhile, so it is part of the room kept under the limit of open files."""


class _QuietLog:
    """One line for the first occurrence of something, then one summing up the ones since,
    at intervals that double (up to `longest` seconds) while it keeps happening."""

    def __init__(self, what: str, *, first: float = 1.0, longest: float = 300.0) -> None:
        self.what = what
        self.first = first
        self.longest = longest
        self.interval = first
        self.next_at = 0.0
        self.since = 0

    def note(self, detail: str = "") -> None:
        """Count one occurrence; log it when the interval allows."""
        now = time.monotonic()
        if now < self.next_at:
            self.since += 1
            return
        if self.next_at and now > self.next_at + self.longest:
            self.interval = self.first  # quiet for long: start over
        extra = f" ({self.since} more since the last report)" if self.since else ""
        logger.warning("%s%s%s", self.what, f": {detail}" if detail else "", extra)
        self.since = 0
        self.next_at = now + self.interval
        self.interval = min(self.longest, self.interval * 2)


class ConnectionGuard:
    """The limits and counts shared by every connection of one server."""

    def __init__(self, *, header_timeout: float, body_timeout: float, max_connections: int,
                 max_connections_per_client: int) -> None:
        """Timeouts in seconds (0: none); limits in connections (0: none per client)."""
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.max_connections_per_client = max_connections_per_client
        self.open = 0
        self.per_client: Counter[str] = Counter()
        self.closed_slow = 0
        """Connections closed for a late head or body (for tests and the benchmark)."""
        self.refused = 0
        self.lingering = 0
        """Refused connections waiting for their client to close (see `_refuse`)."""
        self._slow_log = _QuietLog("closed connections that were too slow to send a request")
        self._refused_log = _QuietLog("refused connections over the connection limits")
        self.accept_log = _QuietLog("cannot accept connections (out of file descriptors?)")

    def admit(self, key: str) -> str | None:
        """Take a place for a connection from `key`; the reason it is refused, else None."""
        if self.max_connections and self.open >= self.max_connections:
            return "too many connections to this service; try again shortly"
        if self.max_connections_per_client and \
                self.per_client[key] >= self.max_connections_per_client:
            return "too many connections from your address; close some first"
        self.open += 1
        self.per_client[key] += 1
        return None

    def release(self, key: str) -> None:
        """Give back the place `admit` took."""
        self.open -= 1
        self.per_client[key] -= 1
        if self.per_client[key] <= 0:
            del self.per_client[key]

    def note_refused(self, reason: str) -> None:
        """Count a refused connection (logged at growing intervals, not one line each)."""
        self.refused += 1
        self._refused_log.note(reason)

    def note_slow(self, phase: str) -> None:
        """Count a connection closed for a late head or body."""
        self.closed_slow += 1
        self._slow_log.note(f"no complete request {phase} in time")

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Route the loop's accept errors through the quiet log (others go on as before)."""
        previous = loop.get_exception_handler()

        def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            if context.get("message") == _ACCEPT_ERROR:
                self.accept_log.note(str(context.get("exception") or ""))
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handler)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines for the request head and body and a place
    taken from a `ConnectionGuard` (the server's config carries it: ``config.guard``)."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        """As uvicorn makes each protocol instance."""
        super().__init__(config, server_state, app_state, _loop)
        self.guard: ConnectionGuard = config.guard
        self._key: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._phase = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Refuse the connection over the limits; else start the deadline for its head."""
        super().connection_made(transport)  # type: ignore[arg-type]
        key = client_key(self.client[0] if self.client else "")
        reason = self.guard.admit(key)
        if reason is not None:
            self._refuse(reason)
            return
        self._key = key
        self._arm("head")

    def _refuse(self, reason: str) -> None:
        """Answer 503 and close. Closing a socket with unread input resets it, and the
        client would lose the answer with it (its request is usually on its way already):
        so the answer is followed by our end of the stream, input is read and dropped until
        the client closes, for a second at most, and for a bounded number of connections at
        once (beyond it, the plain close: a flood must not hold descriptors)."""
        self.connections.discard(self)  # not counted by uvicorn's own limits either
        self.guard.note_refused(reason)
        text = (reason + "\n").encode()
        self.transport.write(_REFUSAL % (len(text), text))
        if self.guard.lingering >= LINGERING or not self.transport.can_write_eof():
            self.transport.close()
            return
        self.guard.lingering += 1
        self._phase = "refused"
        self.transport.write_eof()
        self._deadline = self.loop.call_later(1.0, self.transport.abort)

    def connection_lost(self, exc: Exception | None) -> None:
        """Give the place back and drop the deadline."""
        if self._phase == "refused":
            self.guard.lingering -= 1
        self._disarm()
        if self._key is not None:
            self.guard.release(self._key)
            self._key = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """The first byte of a head starts its deadline (uvicorn's keep-alive timer stops
        on any byte); what has been read then decides the next deadline."""
        if self._phase == "refused":
            return  # dropped: see _refuse
        if self._phase != "head" and self.conn.their_state is h11.IDLE:
            self._arm("head")
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        """A pipelined request may already be buffered: follow its state."""
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """Set the deadline for what the client owes now: a head, a body, or nothing."""
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._phase != "body":
                self._arm("body")
        elif state is h11.IDLE:
            # An empty buffer after a response: uvicorn's keep-alive timer runs instead.
            if self._phase != "head" and self.conn.trailing_data[0]:
                self._arm("head")
        else:  # the request is in: the response takes as long as the app likes
            self._disarm()

    def _arm(self, phase: str) -> None:
        self._disarm()
        seconds = self.guard.header_timeout if phase == "head" else self.guard.body_timeout
        if seconds > 0:
            self._phase = phase
            self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = ""

    def _expired(self) -> None:
        """Too slow: close (an app waiting for the body is told the client went away)."""
        phase = self._phase
        self._deadline = None
        self._phase = ""
        if not self.transport.is_closing():
            self.guard.note_slow(phase)
            self.transport.close()


def raise_fd_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # the soft limit stays: the connection cap is fitted under it instead
    return int(soft)


def fd_budget(fd_limit: int, *, games: int) -> int:
    """Descriptors that connections may use under `fd_limit`, leaving room for the rest of
    the process (the database, logs, each running game's engines: pipes, pidfds), for the
    connections accepted in one go and for the refused ones being answered."""
    reserve = 128 + BACKLOG + LINGERING + 16 * games
    return max(16, fd_limit - reserve)
