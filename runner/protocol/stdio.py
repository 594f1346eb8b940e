"""What an engine process's pipes offer its owner, whichever way the event loop reaches them.

Two ways exist: raw descriptors watched by the loop (rawio.py, where the loop can watch a
descriptor) and asyncio's subprocess transports (streamio.py, the fallback, such as on
Windows' Proactor loop). Both hand stdout to a `LineReader` and stderr to a `StderrTail`
from their read callbacks, and say when the process has exited; `EnginePipes` is what
`EngineProcess` asks of either.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import IO, Protocol

from runner.protocol.engine import EngineError

__all__ = ["READ_CHUNK", "EnginePipes", "StderrTail"]

READ_CHUNK = 65536
"""Bytes asked of an engine's pipe per read: a Linux pipe holds 64 KiB, so one read empties it.

asyncio's own transports ask 256 KiB, a buffer above glibc's mmap threshold allocated (and
mostly freed) per read: for short engine lines a sizeable share of the runner's CPU per move."""


class EnginePipes(Protocol):
    """One started engine process: its stdin, the exit it reports, and closing its pipes."""

    @property
    def pid(self) -> int:
        """The process id."""

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has been reaped (minus the signal that killed it)."""

    def pause_reading(self) -> None:
        """Stop reading stdout until `resume_reading` (too many lines wait unread)."""

    def resume_reading(self) -> None:
        """Read stdout again after `pause_reading`."""

    def stdin_closing(self) -> bool:
        """Whether stdin is closed or being closed (the engine went away)."""

    def write(self, data: bytes) -> None:
        """Hand `data` to stdin without waiting; BrokenPipeError (or ConnectionResetError)
        when the engine closed it."""

    def write_pending(self) -> bool:
        """Whether `drain` has anything to wait for (bytes not yet taken, or a broken pipe)."""

    async def drain(self) -> None:
        """Wait until stdin has taken every byte written; the pipe's error if it broke."""

    async def close(self) -> None:
        """Close every pipe (after the process was reaped) and stop watching them."""


class StderrTail:
    """An engine's standard error: a bounded tail in memory and a bounded log file."""

    def __init__(self, limit: int, log_path: Path | None) -> None:
        """`limit` bounds both the tail kept and the bytes written to `log_path`."""
        self.limit = limit
        self.log_path = log_path
        self.read = 0
        """Bytes read so far (a mark for `since`)."""
        self.ended: asyncio.Future[None] | None = None
        """Done once stderr is at its end (made by `begin`)."""
        self._tail = bytearray()
        self._logged = 0
        self._log: IO[bytes] | None = None

    def begin(self, loop: asyncio.AbstractEventLoop) -> None:
        """Before the process starts: the end's future, and the log file opened for appending
        (EngineError naming the file when it cannot be)."""
        self.ended = loop.create_future()
        if self.log_path is not None:
            try:
                self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed by `end`
            except OSError as exc:
                raise EngineError(f"cannot open the stderr log {str(self.log_path)!r}: "
                                  f"{exc}") from exc

    def feed(self, chunk: bytes) -> None:
        """A chunk read from stderr."""
        self._tail += chunk
        self.read += len(chunk)
        if len(self._tail) > self.limit:
            del self._tail[: len(self._tail) - self.limit]
        log = self._log
        if log is not None and self._logged < self.limit:
            piece = chunk[: self.limit - self._logged]
            try:
                log.write(piece)
                log.flush()
            except OSError:  # a full disk must not stop the engine's stderr being read
                self.end_log()
                return
            self._logged += len(piece)

    def end(self) -> None:
        """stderr is at its end (or no longer read): the log is closed."""
        self.end_log()
        if self.ended is not None and not self.ended.done():
            self.ended.set_result(None)

    def end_log(self) -> None:
        """Close the log file, if one is open."""
        log, self._log = self._log, None
        if log is not None:
            log.close()

    @property
    def text(self) -> str:
        """The tail, decoded leniently."""
        return self._tail.decode("utf-8", errors="replace")

    def since(self, mark: int) -> str:
        """What was read after `read` was `mark`, as far as the tail still holds it."""
        kept = min(self.read - mark, len(self._tail))
        if kept <= 0:
            return ""
        return bytes(self._tail[-kept:]).decode("utf-8", errors="replace")
