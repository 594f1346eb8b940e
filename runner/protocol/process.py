"""An engine subprocess over asyncio pipes: bounded line reads, writes, a clean stop.

The process runs in its own session (so its own process group): stopping it signals the
whole group, so helpers it spawned (polyglot's UCI engine, for instance) die with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runner.protocol.engine import (
    EngineError,
    EngineProtocolError,
    EngineTerminated,
    TranscriptEntry,
)

__all__ = ["EngineProcess", "EngineTransport", "Line"]

_STDERR_CHUNK = 4096


@dataclass(frozen=True, slots=True)
class Line:
    """A line read from the engine, without its end-of-line, and the monotonic read time."""

    text: str
    time: float


class EngineTransport(Protocol):
    """What a protocol needs from the line transport; `EngineProcess` is the real one."""

    transcript: deque[TranscriptEntry]

    @property
    def pid(self) -> int | None: ...

    @property
    def running(self) -> bool: ...

    async def start(self) -> None: ...

    def note(self, text: str) -> None: ...

    async def read_line(self) -> Line: ...

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
    ) -> None:
        if not argv:
            raise ValueError("empty engine command")
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self.stderr_log = stderr_log
        self.transcript: deque[TranscriptEntry] = deque(maxlen=transcript_size)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._stderr_tail = bytearray()
        self._stderr_logged = 0
        self._eof = False

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
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                limit=self.line_limit,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise EngineError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        self.note(f"started pid {self._proc.pid}: {' '.join(self.argv)}")
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name=f"stderr-{self.pid}")

    def note(self, text: str) -> None:
        """Add a host-side note to the transcript."""
        self.transcript.append(TranscriptEntry(time.monotonic(), "!", text))

    async def read_line(self) -> Line:
        """The next stdout line; EngineTerminated at its end, EngineProtocolError if too long."""
        proc = self._require()
        assert proc.stdout is not None
        if self._drain_task is not None:
            raise EngineTerminated(proc.returncode, "the engine is being stopped")
        try:
            raw = await proc.stdout.readline()
        except ValueError as exc:  # the StreamReader limit: a line longer than line_limit
            self.note(f"line longer than {self.line_limit} bytes")
            raise EngineProtocolError(
                f"engine wrote a line longer than {self.line_limit} bytes"
            ) from exc
        now = time.monotonic()
        if not raw:
            self._eof = True
            code = await self._exit_code_soon()
            self.note(f"end of output (exit code {code})")
            raise EngineTerminated(code, self._stderr_summary())
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        self.transcript.append(TranscriptEntry(now, "<", text))
        return Line(text, now)

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
            self.transcript.append(TranscriptEntry(now, ">", line))
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
        """Keep reading stdout while stopping: an engine blocked on a full pipe cannot quit,
        and asyncio reaps a process only once all its pipes are closed."""
        if self._drain_task is None and self._proc is not None:
            self._drain_task = asyncio.create_task(self._drain_stdout(), name="stdout-drain")

    async def _drain_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        if self._eof:
            return
        while True:
            chunk = await self._proc.stdout.read(1 << 16)
            if not chunk:
                return
            now = time.monotonic()
            for text in chunk.decode("utf-8", errors="replace").splitlines():
                self.transcript.append(TranscriptEntry(now, "<", text))

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
        assert self._proc is not None
        try:
            await asyncio.wait_for(self._proc.wait(), timeout)
        except TimeoutError:
            return False
        return True

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
        for task in (self._drain_task, self._stderr_task):
            if task is None:
                continue
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), 0.5)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
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
