"""`LineReader`: an engine's standard output cut into bounded lines, as the bytes arrive.

The reader runs inside the event loop's read callback: complete lines go to a listener
(or a queue for `read_line(s)`), a line over the length limit ends the output with a
protocol error, and while the process is being stopped the output is only recorded, each
transcript entry bounded, so that an engine flooding its pipe can still exit.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeGuard

from runner.protocol.engine import (
    EngineError,
    EngineProtocolError,
    EngineTerminated,
    TranscriptEntry,
)
from runner.protocol.transport import EndHandler, Line, LineHandler, clip_entry

__all__ = ["LineReader", "PausablePipe", "is_pausable"]

log = logging.getLogger(__name__)

EXIT_GRACE = 0.2
"""Seconds after the process's exit that its output may stay open before it is taken as
ended: a child it left behind may hold the pipe (its group is killed, but it may have left
the group); what the engine wrote before exiting is read well within this."""

_QUEUE_LIMIT = 10_000
"""Lines queued unread (no listener) before stdout reading pauses until they are read."""


class PausablePipe(Protocol):
    """What the reader needs of the stdout pipe's transport: the read side of asyncio's
    transport API. Not `asyncio.ReadTransport` itself: uvloop's pipe transports offer the
    same methods without deriving from asyncio's classes."""

    def pause_reading(self) -> None:
        """Stop reading until `resume_reading`."""

    def resume_reading(self) -> None:
        """Read again after `pause_reading`."""


def is_pausable(transport: object) -> TypeGuard[PausablePipe]:
    """True when the transport offers `PausablePipe`'s methods.

    What ``@runtime_checkable`` would check, written out: mypyc compiles a protocol class
    into one that typing's runtime check no longer recognises."""
    return all(callable(getattr(transport, name, None)) for name in ("pause_reading", "resume_reading"))


class LineReader:
    """Bounded lines from one engine's stdout: queued, or handed to a listener per chunk."""

    def __init__(
        self,
        transcript: deque[TranscriptEntry],
        *,
        line_limit: int,
        entry_limit: int,
        note: Callable[[str], None],
        terminated: Callable[[], Awaitable[EngineTerminated]],
        returncode: Callable[[], int | None],
        label: str,
    ) -> None:
        """`note` writes a host note to the transcript; `terminated` builds the error for
        the end of output (it waits a moment for the exit code); `label` names the engine
        in the log."""
        self.transcript = transcript
        self.line_limit = line_limit
        self.entry_limit = entry_limit
        self.pipe: PausablePipe | None = None
        """The stdout pipe, paused while too many lines wait unread."""
        self.closed: asyncio.Future[None] | None = None
        """Done once stdout is at its end (set by the process when it starts)."""
        self.draining = False
        """Stopping: output is only recorded in the transcript."""
        self._note = note
        self._terminated = terminated
        self._returncode = returncode
        self._label = label
        self._eof = False
        self._lines: deque[Line] = deque()  # complete lines read but not yet handed out
        self._partial = bytearray()  # the start of the next line, its newline not read yet
        self._read_error: EngineProtocolError | None = None
        self._waiter: asyncio.Future[None] | None = None  # a read_line(s) call waiting for data
        self._paused = False  # stdout reading paused: too many lines queued and not read
        self._on_lines: LineHandler | None = None
        self._on_end: EndHandler | None = None
        self.end_task: asyncio.Task[None] | None = None
        """Reports the end of output to the listener, once the exit code is known."""
        self._drain_head = b""  # while draining: the start of the current line...
        self._drain_length = 0  # ... and its full length in bytes

    # ----------------------------------------------------------------- taking lines

    async def read_line(self) -> Line:
        """The next line; EngineTerminated at the end, EngineProtocolError if too long."""
        if not self._lines:
            await self._fill()
        line = self._lines.popleft()
        if self._paused:
            self._resume()
        return line

    async def read_lines(self) -> list[Line]:
        """Every complete line read so far (at least one: waits for it), oldest first."""
        if not self._lines:
            await self._fill()
        lines = list(self._lines)
        self._lines.clear()
        if self._paused:
            self._resume()
        return lines

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Hand each chunk's lines to `on_lines` from now on; `on_end` gets the end, once."""
        self._on_lines, self._on_end = on_lines, on_end
        if self._lines or self._read_error is not None or self._eof:
            asyncio.get_running_loop().call_soon(self._deliver)

    async def _fill(self) -> None:
        """Wait until at least one complete line is queued (or fail as documented)."""
        if self.draining:
            raise EngineTerminated(self._returncode(), "the engine is being stopped")
        if self._on_lines is not None:
            raise RuntimeError("read_lines() while a listener takes the lines")
        while not self._lines:
            if self._read_error is not None:
                raise self._read_error
            if self._eof:
                raise await self._terminated()
            if self._paused:
                self._resume()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _resume(self) -> None:
        if len(self._lines) <= _QUEUE_LIMIT // 2 and self.pipe is not None:
            self._paused = False
            self.pipe.resume_reading()

    # ----------------------------------------------------------------- the bytes

    def on_chunk(self, chunk: bytes, now: float, marks: Sequence[tuple[float, int]] = ()) -> None:
        """A chunk of the engine's standard output, read at `now`. `marks` (oldest first)
        say how many bytes were already in our pipe at earlier moments (the loop's poll, a
        look during a long turn; see `ArrivalSelector`): a line is stamped by the earliest
        mark whose bytes complete it, a line no mark covers at `now`."""
        if self.draining:
            self._drain_chunk(chunk, now)
            return
        if self._read_error is not None or self._eof:
            return  # the output is already broken; it is read on (and dropped) until stop
        start = 0
        size = len(chunk)
        for at, count in marks:
            # Past the last newline among the bytes there at that mark.
            cut = chunk.rfind(b"\n", start, min(count, size)) + 1
            if cut > start:
                self._split(chunk[start:cut] if start or cut < size else chunk, at)
                start = cut
            if count >= size:
                break
        if start < size:
            self._split(chunk[start:] if start else chunk, now)
        self._deliver()

    def on_exit(self) -> None:
        """The process exited: its output ends now, whether or not its pipe is closed."""
        if not self._eof:
            asyncio.get_running_loop().call_later(EXIT_GRACE, self._exit_without_eof)

    def _exit_without_eof(self) -> None:
        if self._eof or self.draining:
            return
        self._note("output still open after the process exited (a process it started holds "
                   "it): taken as its end")
        self.on_closed(time.monotonic())

    def on_closed(self, now: float) -> None:
        """The engine's standard output is at its end."""
        if self._eof:
            return  # already ended by the process's exit; the pipe closed after
        if self.draining:
            if self._drain_length:
                self._record_drained(now, self._drain_head, self._drain_length)
                self._drain_head, self._drain_length = b"", 0
        else:
            if self._partial and self._read_error is None:
                self._split(b"\n", now)  # the last line, without its newline: end it as one
            self._eof = True
            self._deliver()
        if self.closed is not None and not self.closed.done():
            self.closed.set_result(None)

    def _deliver(self) -> None:
        """Pass queued lines (and the end of the output) to the listener, or wake a reader."""
        on_lines = self._on_lines
        if on_lines is None:
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            elif len(self._lines) > _QUEUE_LIMIT and not self._paused and self.pipe is not None:
                self.pipe.pause_reading()  # nobody reads: let the engine wait
                self._paused = True
            return
        if self._lines:
            lines = list(self._lines)
            self._lines.clear()
            try:
                on_lines(lines)
            except Exception as exc:  # a bug of ours must not pass for the engine's output
                log.exception("error while handling the output of %s", self._label)
                self._end(EngineError(f"runner error while reading the engine: {exc!r}"))
                return
        if self._read_error is not None:
            self._end(self._read_error)
        elif self._eof and self.end_task is None:
            self.end_task = asyncio.get_running_loop().create_task(
                self._end_of_output(), name=f"stdout-end-{self._label}")

    async def _end_of_output(self) -> None:
        """The listener's end of output: the exit code is awaited a moment, then reported."""
        self._end(await self._terminated())

    def _end(self, exc: EngineError) -> None:
        """Tell the listener, once, that the output has ended."""
        on_end, self._on_end, self._on_lines = self._on_end, None, None
        if on_end is not None:
            on_end(exc)

    def _split(self, chunk: bytes, now: float) -> None:
        """Queue the complete lines in `chunk`; keep the unfinished end for the next chunk."""
        end = chunk.rfind(b"\n")
        if end < 0:
            self._partial += chunk
            self._check_length(len(self._partial))
            return
        if self._partial:
            self._partial += chunk[:end]
            complete = bytes(self._partial)
            self._partial.clear()
        else:
            complete = chunk[:end]
        self._partial += chunk[end + 1:]
        # Decoded once for the chunk: the newline bytes cannot be part of a UTF-8 sequence.
        decoded = complete.decode("utf-8", errors="replace")
        texts = decoded.split("\n")
        if len(complete) > self.line_limit:
            # A line (in bytes) over the limit, counted the slow way now that it may be here.
            for count, raw in enumerate(complete.split(b"\n")):
                if len(raw) > self.line_limit:
                    self._check_length(len(raw))
                    texts = texts[:count]  # the lines before it stay queued
                    break
        if "\r" in decoded:
            texts = [text.rstrip("\r") for text in texts]
        # tuple.__new__: the named tuple's own __new__ is a Python function, a frame a line.
        entries = [tuple.__new__(Line, (now, "<", text)) for text in texts]
        self._lines.extend(entries)
        limit = self.entry_limit
        if len(decoded) > limit:  # then one of its lines may be too long for an entry
            self.transcript.extend(
                entry if len(entry.text) <= limit
                else TranscriptEntry(now, "<", clip_entry(entry.text, limit))
                for entry in entries)
        else:
            self.transcript.extend(entries)
        self._check_length(len(self._partial))

    def _check_length(self, length: int) -> None:
        """A line longer than `line_limit` is the engine's fault: fail its next read."""
        if length > self.line_limit and self._read_error is None:
            self._note(f"line longer than {self.line_limit} bytes")
            self._read_error = EngineProtocolError(
                f"engine wrote a line longer than {self.line_limit} bytes")
            self._partial.clear()

    # ----------------------------------------------------------------- stopping

    def start_drain(self) -> None:
        """Keep reading stdout while stopping, only recording it: an engine blocked on a full
        pipe cannot quit, and asyncio reaps a process only once all its pipes are closed.
        A line split over chunks stays one entry (its head kept, its full length counted),
        so a flood costs one bounded entry."""
        if self.draining:
            return
        self.draining = True
        self._on_lines = self._on_end = None
        # The start of the current unfinished line (it may have begun in a chunk already
        # split) and that line's full length in bytes.
        self._drain_head = bytes(self._partial[:self.entry_limit + 4])
        self._drain_length = len(self._partial)
        self._partial.clear()
        if self._paused and self.pipe is not None:
            self._paused = False
            self.pipe.resume_reading()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _drain_chunk(self, chunk: bytes, now: float) -> None:
        """Record a chunk read while stopping, line by line, each entry bounded."""
        head, length = self._drain_head, self._drain_length
        pieces = chunk.split(b"\n")
        last = len(pieces) - 1
        for index, piece in enumerate(pieces):
            room = self.entry_limit + 4 - len(head)  # + 4: a UTF-8 character's bytes
            if room > 0:
                head += piece[:room]
            length += len(piece)
            if index < last:  # a newline ends this line
                self._record_drained(now, head, length)
                head, length = b"", 0
        self._drain_head, self._drain_length = head, length

    def _record_drained(self, when: float, head: bytes, length: int) -> None:
        text = head.rstrip(b"\r").decode("utf-8", errors="replace")
        if length > len(head):  # the line was longer than the head kept of it
            text = clip_entry(text, self.entry_limit, length, unit="bytes")
        else:
            text = clip_entry(text, self.entry_limit)
        self.transcript.append(TranscriptEntry(when, "<", text))
