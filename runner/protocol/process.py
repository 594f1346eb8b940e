"""An engine subprocess over asyncio pipes: bounded line reads, writes, a clean stop.

The process runs in its own session (so its own process group): stopping it signals the
whole group, so helpers it spawned (polyglot's UCI engine, for instance) die with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from asyncio.subprocess import Process, SubprocessStreamProtocol
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

from runner.protocol.engine import (
    EngineError,
    EngineProtocolError,
    EngineTerminated,
    TranscriptEntry,
)

__all__ = [
    "ENTRY_LIMIT", "EndHandler", "EngineProcess", "EngineTransport", "Line", "LineHandler",
    "clip_entry",
]

log = logging.getLogger(__name__)

_STDERR_CHUNK = 4096
ENTRY_LIMIT = 1024
"""Characters of one transcript entry kept by default; longer text is cut and its length noted."""


class Line(NamedTuple):
    """A line read from the engine, without its end-of-line, and the monotonic read time."""

    text: str
    time: float


LineHandler = Callable[[list[Line]], None]
"""Called with the complete lines of each chunk of engine output, as it arrives."""
EndHandler = Callable[[EngineError], None]
"""Called once when the engine's output ends (EngineTerminated) or breaks a limit."""


class EngineTransport(Protocol):
    """What a protocol needs from the line transport; `EngineProcess` is the real one.

    Clients take lines through `listen`; `EngineProcess` also offers `read_line(s)` for
    callers that drive an engine by hand (tests, diagnostics)."""

    transcript: deque[TranscriptEntry]

    @property
    def pid(self) -> int | None: ...

    @property
    def running(self) -> bool: ...

    async def start(self) -> None: ...

    def note(self, text: str) -> None: ...

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None: ...

    def write_nowait(self, lines: Sequence[str]) -> float: ...

    async def write_lines(self, lines: Sequence[str]) -> float: ...

    def send_signal(self, sig: int) -> None: ...

    async def stop(
        self,
        quit_command: str | None = "quit",
        *,
        quit_timeout: float = 5.0,
        terminate_timeout: float = 2.0,
        use_sigterm: bool = True,
    ) -> int | None: ...

    async def kill(self) -> int | None: ...


class EngineProcess:
    """One engine process: start, read bounded lines, write lines, stop, kill."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        line_limit: int = 1 << 20,
        stderr_limit: int = 64 << 10,
        stderr_log: Path | None = None,
        transcript_size: int = 4000,
        entry_limit: int = ENTRY_LIMIT,
    ) -> None:
        """`entry_limit` bounds each transcript entry's text (the whole line is still read)."""
        if not argv:
            raise ValueError("empty engine command")
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self.stderr_log = stderr_log
        self.transcript: deque[TranscriptEntry] = deque(maxlen=transcript_size)
        self.entry_limit = entry_limit
        self._proc: asyncio.subprocess.Process | None = None
        self._stdout_pipe: asyncio.ReadTransport | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr_tail = bytearray()
        self._stderr_logged = 0
        self._eof = False
        self._end_noted = False
        self._lines: deque[Line] = deque()  # complete lines read but not yet handed out
        self._partial = bytearray()  # the start of the next line, its newline not read yet
        self._read_error: EngineProtocolError | None = None
        self._waiter: asyncio.Future[None] | None = None  # a read_line(s) call waiting for data
        self._paused = False  # stdout reading paused: too many lines queued and not read
        self._on_lines: LineHandler | None = None
        self._on_end: EndHandler | None = None
        self._end_task: asyncio.Task[None] | None = None
        self._draining = False  # stopping: output is only recorded in the transcript
        self._drain_head = b""  # while draining: the start of the current line...
        self._drain_length = 0  # ... and its full length in bytes
        self._stdout_closed: asyncio.Future[None] | None = None

    @property
    def pid(self) -> int | None:
        """The process id, once started."""
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has been reaped, else None."""
        return self._proc.returncode if self._proc is not None else None

    @property
    def running(self) -> bool:
        """Whether the process was started and has not been reaped yet."""
        return self._proc is not None and self._proc.returncode is None

    @property
    def stderr_tail(self) -> str:
        """The last bytes the engine wrote to its standard error, decoded leniently."""
        return self._stderr_tail.decode("utf-8", errors="replace")

    async def start(self) -> None:
        """Spawn the process (argv list, no shell) in a new session with piped stdio."""
        if self._proc is not None:
            raise RuntimeError("engine process already started")
        env = None
        if self.env is not None:
            env = {**os.environ, **self.env}
        loop = asyncio.get_running_loop()
        self._stdout_closed = loop.create_future()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _EngineProtocol(self, self.line_limit, loop),
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise EngineError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        self._proc = Process(transport, protocol, loop)
        self._stdout_pipe = transport.get_pipe_transport(1)
        self.note(f"started pid {self._proc.pid}: {' '.join(self.argv)}")
        _shrink_reads(transport)
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name=f"stderr-{self.pid}")

    def note(self, text: str) -> None:
        """Add a host-side note to the transcript."""
        self._record(time.monotonic(), "!", text)

    async def read_line(self) -> Line:
        """The next stdout line; EngineTerminated at its end, EngineProtocolError if too long."""
        if not self._lines:
            await self._fill()
        line = self._lines.popleft()
        if self._paused:
            self._resume()
        return line

    async def read_lines(self) -> list[Line]:
        """Every complete stdout line read so far (at least one: waits for it), oldest first.

        One call per chunk of output instead of one per line: an engine printing several lines
        per move (thinking output, comments) costs one wake-up, not one per line.
        """
        if not self._lines:
            await self._fill()
        lines = list(self._lines)
        self._lines.clear()
        if self._paused:
            self._resume()
        return lines

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Hand every chunk's complete lines to `on_lines` as they arrive, instead of queueing
        them for `read_lines`; `on_end` gets the error that ends the output (once).

        The handlers run inside the event loop's read callback: no task wakes up per chunk,
        which is most of what reading costs. They must not block; an exception they raise
        is logged and ends the output with an EngineError.
        """
        self._require()
        self._on_lines, self._on_end = on_lines, on_end
        if self._lines or self._read_error is not None or self._eof:
            asyncio.get_running_loop().call_soon(self._deliver)

    def _on_stdout(self, chunk: bytes) -> None:
        """Protocol callback: a chunk of the engine's standard output."""
        now = time.monotonic()
        if self._draining:
            self._drain_chunk(chunk, now)
            return
        if self._read_error is not None:
            return  # the output is already broken; it is read on (and dropped) until stop
        self._split(chunk, now)
        self._deliver()

    def _on_stdout_closed(self) -> None:
        """Protocol callback: the engine's standard output is at its end."""
        now = time.monotonic()
        if self._draining:
            if self._drain_length:
                self._record_drained(now, self._drain_head, self._drain_length)
                self._drain_head, self._drain_length = b"", 0
        else:
            if self._partial and self._read_error is None:
                self._split(b"\n", now)  # the last line, without its newline: end it as one
            self._eof = True
            self._deliver()
        if self._stdout_closed is not None and not self._stdout_closed.done():
            self._stdout_closed.set_result(None)

    def _deliver(self) -> None:
        """Pass queued lines (and the end of the output) to the listener, or wake a reader."""
        on_lines = self._on_lines
        if on_lines is None:
            waiter = self._waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
            elif len(self._lines) > _QUEUE_LIMIT and not self._paused \
                    and self._stdout_pipe is not None:
                self._stdout_pipe.pause_reading()  # nobody reads: let the engine wait
                self._paused = True
            return
        if self._lines:
            lines = list(self._lines)
            self._lines.clear()
            try:
                on_lines(lines)
            except Exception as exc:  # a bug of ours must not pass for the engine's output
                log.exception("error while handling the output of %s", self.argv[0])
                self._end(EngineError(f"runner error while reading the engine: {exc!r}"))
                return
        if self._read_error is not None:
            self._end(self._read_error)
        elif self._eof and self._end_task is None:
            self._end_task = asyncio.get_running_loop().create_task(
                self._end_of_output(), name=f"stdout-end-{self.pid}")

    async def _end_of_output(self) -> None:
        """The listener's end of output: the exit code is awaited a moment, then reported."""
        self._end(EngineTerminated(await self._note_end(), self._stderr_summary()))

    def _end(self, exc: EngineError) -> None:
        """Tell the listener, once, that the output has ended."""
        on_end, self._on_end, self._on_lines = self._on_end, None, None
        if on_end is not None:
            on_end(exc)

    async def _note_end(self) -> int | None:
        """The exit code soon after the end of output, noted once in the transcript."""
        code = await self._exit_code_soon()
        if not self._end_noted:
            self._end_noted = True
            self.note(f"end of output (exit code {code})")
        return code

    def _resume(self) -> None:
        if len(self._lines) <= _QUEUE_LIMIT // 2 and self._stdout_pipe is not None:
            self._paused = False
            self._stdout_pipe.resume_reading()

    async def _fill(self) -> None:
        """Wait until at least one complete line is queued (or fail as documented)."""
        proc = self._require()
        if self._draining:
            raise EngineTerminated(proc.returncode, "the engine is being stopped")
        if self._on_lines is not None:
            raise RuntimeError("read_lines() while a listener takes the lines")
        while not self._lines:
            if self._read_error is not None:
                raise self._read_error
            if self._eof:
                raise EngineTerminated(await self._note_end(), self._stderr_summary())
            if self._paused:
                self._resume()
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

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
        texts = complete.decode("utf-8", errors="replace").split("\n")
        if len(complete) > self.line_limit:
            # A line (in bytes) over the limit, counted the slow way now that it may be here.
            for count, raw in enumerate(complete.split(b"\n")):
                if len(raw) > self.line_limit:
                    self._check_length(len(raw))
                    texts = texts[:count]  # the lines before it stay queued
                    break
        limit = self.entry_limit
        transcript, lines = self.transcript, self._lines
        for text in texts:
            if text[-1:] == "\r":
                text = text.rstrip("\r")
            transcript.append(TranscriptEntry(
                now, "<", text if len(text) <= limit else clip_entry(text, limit)))
            lines.append(Line(text, now))
        self._check_length(len(self._partial))

    def _check_length(self, length: int) -> None:
        """A line longer than `line_limit` is the engine's fault: fail its next read."""
        if length > self.line_limit and self._read_error is None:
            self.note(f"line longer than {self.line_limit} bytes")
            self._read_error = EngineProtocolError(
                f"engine wrote a line longer than {self.line_limit} bytes")
            self._partial.clear()

    def write_nowait(self, lines: Sequence[str]) -> float:
        """Write lines without waiting for the pipe to drain (small answers inside a line
        handler); an engine gone already is noticed by the next read or awaited write."""
        proc = self._require()
        assert proc.stdin is not None
        now = time.monotonic()
        if proc.stdin.is_closing():
            return now
        proc.stdin.write("".join(f"{line}\n" for line in lines).encode("utf-8"))
        for line in lines:
            self._record(now, ">", line)
        return now

    async def write_line(self, text: str) -> float:
        """Write one line and drain it; the monotonic time when it was handed to the pipe."""
        await self.write_lines((text,))
        return time.monotonic()

    async def write_lines(self, lines: Sequence[str]) -> float:
        """Write several lines in one system call and drain; the monotonic time after it."""
        proc = self._require()
        assert proc.stdin is not None
        payload = "".join(f"{line}\n" for line in lines).encode("utf-8")
        try:
            proc.stdin.write(payload)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            code = await self._exit_code_soon()
            raise EngineTerminated(code, "its input pipe is closed") from exc
        now = time.monotonic()
        for line in lines:
            self._record(now, ">", line)
        return now

    def send_signal(self, sig: int) -> None:
        """Send a signal to the engine process itself (not its group)."""
        if self.running:
            assert self._proc is not None
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(sig)
            self.note(f"sent signal {signal.Signals(sig).name}")

    async def stop(
        self,
        quit_command: str | None = "quit",
        *,
        quit_timeout: float = 5.0,
        terminate_timeout: float = 2.0,
        use_sigterm: bool = True,
    ) -> int | None:
        """Quit politely, then SIGTERM, then SIGKILL the process group; reap; the exit code."""
        proc = self._proc
        if proc is None:
            return None
        self._start_drain()
        if proc.returncode is None and quit_command is not None:
            with contextlib.suppress(EngineError, OSError):
                await self.write_line(quit_command)
            if await self._wait(quit_timeout):
                self.note("exited after quit")
        if proc.returncode is None and use_sigterm:
            self._signal_group(signal.SIGTERM)
            await self._wait(terminate_timeout)
        if proc.returncode is None:
            self._signal_group(signal.SIGKILL)
            await self._wait(None)
        await self._cleanup()
        return proc.returncode

    async def kill(self) -> int | None:
        """SIGKILL the whole process group at once and reap; the exit code."""
        proc = self._proc
        if proc is None:
            return None
        self._start_drain()
        if proc.returncode is None:
            self._signal_group(signal.SIGKILL)
            await self._wait(None)
        await self._cleanup()
        return proc.returncode

    def _start_drain(self) -> None:
        """Keep reading stdout while stopping, only recording it: an engine blocked on a full
        pipe cannot quit, and asyncio reaps a process only once all its pipes are closed.
        A line split over chunks stays one entry (its head kept, its full length counted),
        so a flood costs one bounded entry."""
        if self._draining or self._proc is None:
            return
        self._draining = True
        self._on_lines = self._on_end = None
        # The start of the current unfinished line (it may have begun in a chunk already
        # split) and that line's full length in bytes.
        self._drain_head = bytes(self._partial[:self.entry_limit + 4])
        self._drain_length = len(self._partial)
        self._partial.clear()
        if self._paused and self._stdout_pipe is not None:
            self._paused = False
            self._stdout_pipe.resume_reading()
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
        text = _decode(head.rstrip(b"\r"))
        if length > len(head):  # the line was longer than the head kept of it
            text = clip_entry(text, self.entry_limit, length, unit="bytes")
            self.transcript.append(TranscriptEntry(when, "<", text))
        else:
            self._record(when, "<", text)

    def _record(self, when: float, direction: str, text: str) -> None:
        """Append a transcript entry, its text clipped to `entry_limit`."""
        self.transcript.append(TranscriptEntry(when, direction, clip_entry(text, self.entry_limit)))

    def _require(self) -> asyncio.subprocess.Process:
        if self._proc is None:
            raise RuntimeError("engine process not started")
        return self._proc

    def _signal_group(self, sig: int) -> None:
        """Signal the engine's process group (its pid: it leads its own session)."""
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)
            self.note(f"sent {signal.Signals(sig).name} to process group {self._proc.pid}")

    async def _wait(self, timeout: float | None) -> bool:
        """Wait up to `timeout` for the process itself to exit; whether it did.

        Not `Process.wait()`: on Python 3.11 that resolves only once every pipe is closed
        too, and a child of the engine holding its stdout would keep it pending.
        """
        assert self._proc is not None
        if self._proc.returncode is not None:
            return True
        try:
            await asyncio.wait_for(self._exited(), timeout)
        except TimeoutError:
            return False
        return True

    async def _exited(self) -> None:
        """Return once asyncio's child watcher has reaped the process (its exit code is set).

        The watcher reaps, so we must not: a pidfd (Linux) tells when the process has
        exited without reaping it; the exit code follows from the watcher a moment later.
        Without a pidfd, or if the watcher is slow, the exit code is polled.
        """
        proc = self._proc
        assert proc is not None
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[None] = loop.create_future()
        pidfd = _open_pidfd(proc.pid)
        if pidfd is not None:
            loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(None))
        try:
            delay = 0.001
            while proc.returncode is None:
                if exited.done():
                    await asyncio.sleep(delay)  # exited: the watcher is about to report it
                    delay = min(delay * 2, 0.01)
                else:
                    await asyncio.wait((exited,), timeout=0.05 if pidfd is not None else 0.01)
        finally:
            if pidfd is not None:
                loop.remove_reader(pidfd)
                os.close(pidfd)
            exited.cancel()

    async def _exit_code_soon(self) -> int | None:
        """The exit code if the process exits within a moment (it usually just closed stdout)."""
        if self._proc is None:
            return None
        await self._wait(0.5)
        return self._proc.returncode

    async def _cleanup(self) -> None:
        """After the leader is reaped: kill stragglers of its group, close pipes, stop tasks."""
        assert self._proc is not None
        # Children the engine left behind still carry its process-group id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)
            self.note("killed leftover members of the process group")
        for waited in (self._stdout_closed, self._stderr_task):
            if waited is None:
                continue
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(waited), 0.5)
        for task in (self._stderr_task, self._end_task):
            if task is None:
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await task
        if self._proc.stdin is not None:
            self._proc.stdin.close()
            with contextlib.suppress(OSError):
                await self._proc.stdin.wait_closed()
        transport = getattr(self._proc, "_transport", None)
        if transport is not None:
            transport.close()

    async def _drain_stderr(self) -> None:
        """Read stderr until EOF, keeping a bounded tail and a bounded log file."""
        assert self._proc is not None and self._proc.stderr is not None
        log = None
        try:
            if self.stderr_log is not None:
                log = open(self.stderr_log, "ab")  # noqa: SIM115 - closed in finally
            while True:
                chunk = await self._proc.stderr.read(_STDERR_CHUNK)
                if not chunk:
                    return
                self._stderr_tail += chunk
                if len(self._stderr_tail) > self.stderr_limit:
                    del self._stderr_tail[: len(self._stderr_tail) - self.stderr_limit]
                if log is not None and self._stderr_logged < self.stderr_limit:
                    piece = chunk[: self.stderr_limit - self._stderr_logged]
                    log.write(piece)
                    log.flush()
                    self._stderr_logged += len(piece)
        finally:
            if log is not None:
                log.close()

    def _stderr_summary(self) -> str:
        tail = self.stderr_tail.strip().splitlines()[-3:]
        return " | ".join(tail)


_QUEUE_LIMIT = 10_000
"""Lines queued unread (no listener) before stdout reading pauses until they are read."""
_READ_CHUNK = 65536
"""Bytes asked of the engine's pipes per read: a Linux pipe holds 64 KiB, so one read empties it."""


def _shrink_reads(transport: asyncio.SubprocessTransport) -> None:
    """Read the engine's stdout and stderr in 64 KiB chunks instead of asyncio's 256 KiB.

    Every read of 256 KiB allocates (and mostly frees) a buffer above glibc's mmap threshold;
    for short engine lines that was about an eighth of the runner's CPU per move (measured with
    benchmarks/overhead.py: 396 -> 342 us). ``max_size`` is an attribute of asyncio's pipe
    transports, not public API; without it nothing changes but the speed.
    """
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None and isinstance(getattr(pipe, "max_size", None), int):
            pipe.max_size = _READ_CHUNK


class _EngineProtocol(SubprocessStreamProtocol):
    """asyncio's subprocess stream protocol, stdout going straight to the EngineProcess.

    stdin and stderr keep asyncio's stream objects; stdout bytes are split into lines in
    the read callback itself, so no reader task has to wake up for them.
    """

    def __init__(self, owner: EngineProcess, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self._owner = owner

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        """stdout to the owner, the rest as asyncio does it."""
        if fd == 1:
            self._owner._on_stdout(data)
        else:
            super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        """The end of stdout is the owner's to handle; asyncio's bookkeeping still runs."""
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            self._owner._on_stdout_closed()


def clip_entry(text: str, limit: int = ENTRY_LIMIT, length: int | None = None, *,
               unit: str = "characters") -> str:
    """`text` cut to `limit` characters, noting the full length (`length` if given, in `unit`)."""
    if len(text) <= limit and length is None:
        return text
    full = len(text) if length is None else length
    return f"{text[:limit]} [... {full} {unit} in all]"


def _open_pidfd(pid: int) -> int | None:
    """A pidfd for `pid` (readable once it exits), or None where unsupported or already gone."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
