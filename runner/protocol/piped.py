"""A started engine process's side we act on: writing its stdin, its exit, stopping it.

`PipedProcess` is the base of `EngineProcess` (process.py), which spawns the process and
reads it. Here: every line written to the engine (checked for control characters first),
signals, and the end: `stop` sends ``quit``, then SIGTERM, then SIGKILL to the process group
and cleans up once the leader is reaped; a stop interrupted on the way kills the group at
once. The exit is the pipes' report (`_exited`), never inferred from the end of output.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Sequence

from runner.protocol.engine import EngineError, EngineTerminated, TranscriptEntry
from runner.protocol.lifetime import untrack
from runner.protocol.reading import LineReader
from runner.protocol.stdio import EnginePipes, StderrTail
from runner.protocol.transport import check_lines, clip_entry

__all__ = ["PipedProcess"]


class PipedProcess:
    """An engine process's writes, signals and end (see the module)."""

    def __init__(self, name: str, transcript: deque[TranscriptEntry], *, line_limit: int,
                 entry_limit: int, stderr: StderrTail, label: str) -> None:
        """`name` names the engine in errors; `transcript` is its bounded record, each entry
        cut to `entry_limit`; `line_limit` bounds a line read; `label` names it in the log."""
        self.name = name
        self.transcript = transcript
        self.entry_limit = entry_limit
        self._pipes: EnginePipes | None = None
        self._exit: asyncio.Future[None] | None = None  # done once the process has exited
        self._stderr = stderr
        self._end_noted = False
        self._reader = LineReader(
            transcript, line_limit=line_limit, entry_limit=entry_limit, note=self.note,
            terminated=self._terminated, returncode=self._returncode, label=label)

    @property
    def pid(self) -> int | None:
        """The process id, once started."""
        return self._pipes.pid if self._pipes is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has been reaped, else None."""
        return self._pipes.returncode if self._pipes is not None else None

    @property
    def running(self) -> bool:
        """Whether the process was started and has not been reaped yet."""
        return self._pipes is not None and self._pipes.returncode is None

    def _returncode(self) -> int | None:
        return self.returncode

    def note(self, text: str) -> None:
        """Add a host-side note to the transcript."""
        self._record(time.monotonic(), "!", text)

    def write_nowait(self, lines: Sequence[str]) -> float:
        """Write lines without waiting for the pipe to drain (small answers inside a line
        handler); an engine gone already is noticed by the next read or awaited write."""
        pipes = self._require()
        check_lines(lines, self.name)
        now = time.monotonic()
        if not lines or pipes.stdin_closing():
            return now
        try:
            pipes.write(("\n".join(lines) + "\n").encode("utf-8"))
        except (BrokenPipeError, ConnectionResetError):
            return now
        limit, transcript = self.entry_limit, self.transcript
        for line in lines:  # a move request's lines: two short ones, clipped only when long
            # tuple.__new__: the named tuple's own __new__ is a Python function, a frame a line.
            transcript.append(tuple.__new__(TranscriptEntry, (
                now, ">", line if len(line) <= limit else clip_entry(line, limit))))
        return now

    async def write_line(self, text: str) -> float:
        """Write one line and drain it; the monotonic time when it was handed to the pipe."""
        await self.write_lines((text,))
        return time.monotonic()

    async def write_lines(self, lines: Sequence[str]) -> float:
        """Write several lines in one system call and drain; the monotonic time they were
        handed to the pipe (after the drain, when a full pipe made one wait).

        Every line written to an engine passes here (or through `write_nowait`): a line
        holding a line break or another control character is refused (UnsafeCommandError)
        before anything of the batch is written, whoever built it.
        """
        pipes = self._require()
        check_lines(lines, self.name)
        now = 0.0
        try:
            if lines:
                pipes.write(("\n".join(lines) + "\n").encode("utf-8"))
                # Recorded once handed over, before any drain: the engine's answers to the
                # first lines of a long batch may be read while the rest is still written.
                now = time.monotonic()
                limit, transcript = self.entry_limit, self.transcript
                for line in lines:
                    transcript.append(TranscriptEntry(
                        now, ">", line if len(line) <= limit else clip_entry(line, limit)))
            if pipes.write_pending():
                await pipes.drain()
                now = 0.0
        except (BrokenPipeError, ConnectionResetError) as exc:
            code = await self._exit_code_soon()
            raise EngineTerminated(code, "its input pipe is closed") from exc
        return now or time.monotonic()

    def send_signal(self, sig: int) -> None:
        """Send a signal to the engine process itself (not its group)."""
        if self.running:
            assert self._pipes is not None
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pipes.pid, sig)
            self.note(f"sent signal {signal.Signals(sig).name}")

    async def stop(
        self,
        quit_command: str | None = "quit",
        *,
        quit_timeout: float = 5.0,
        terminate_timeout: float = 2.0,
        use_sigterm: bool = True,
    ) -> int | None:
        """Quit politely, then SIGTERM, then SIGKILL the process group; reap; the exit code.

        Cancelled on the way (a second Ctrl-C, the event loop shutting down), it sends SIGKILL
        to the group at once, before anything else can interrupt it: the engine never
        survives a stop that was begun."""
        if self._pipes is None:
            return None
        self._start_drain()
        try:
            if self.running and quit_command is not None:
                with contextlib.suppress(EngineError, OSError):
                    await self.write_line(quit_command)
                if await self._wait(quit_timeout):
                    self.note("exited after quit")
            if self.running and use_sigterm:
                self._signal_group(signal.SIGTERM)
                await self._wait(terminate_timeout)
        except BaseException:
            await self._kill_hurried()
            raise
        return await self.kill()

    async def kill(self) -> int | None:
        """SIGKILL the whole process group at once and reap; the exit code."""
        if self._pipes is None:
            return None
        self._start_drain()
        try:
            if self.running:
                self._signal_group(signal.SIGKILL)
                await self._wait(None)
            await self._cleanup()
        except BaseException:
            await self._kill_hurried()
            raise
        return self.returncode

    async def _kill_hurried(self) -> None:
        """A stop interrupted: SIGKILL the group (synchronous, so it happens whatever comes
        next), then reap and clean up if the loop lets us (the engine is dead either way)."""
        if self.running:
            self._signal_group(signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._wait(None), 2.0)
            await self._cleanup()

    def _start_drain(self) -> None:
        """From now on stdout is only recorded (see `LineReader.start_drain`)."""
        if self._pipes is not None:
            self._reader.start_drain()

    def _record(self, when: float, direction: str, text: str) -> None:
        """Append a transcript entry, its text clipped to `entry_limit`."""
        self.transcript.append(TranscriptEntry(when, direction, clip_entry(text, self.entry_limit)))

    def _require(self) -> EnginePipes:
        if self._pipes is None:
            raise RuntimeError("engine process not started")
        return self._pipes

    def _signal_group(self, sig: int) -> None:
        """Signal the engine's process group (its pid: it leads its own session)."""
        assert self._pipes is not None
        pid = self._pipes.pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
            self.note(f"sent {signal.Signals(sig).name} to process group {pid}")

    async def _wait(self, timeout: float | None) -> bool:
        """Wait up to `timeout` for the process itself to exit; whether it did.

        Not asyncio's `Process.wait()`: on Python 3.11 that resolves only once every pipe is
        closed too, and a child of the engine holding its stdout would keep it pending. The
        pipes call `_exited` as soon as they have reaped the process.
        """
        assert self._exit is not None
        if not self.running:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self._exit), timeout)
        except TimeoutError:
            return False
        return True

    def _exited(self) -> None:
        """The process has exited (its exit code is known): wake whoever waits for it, and
        end the output even if a child it left behind still holds the pipe open."""
        if self._exit is not None and not self._exit.done():
            self._exit.set_result(None)
        pipes = self._pipes
        if pipes is not None:
            self.note(f"process exited (exit code {pipes.returncode})")
            # Its children are orphans now: they go with it, and their end closes its pipes.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pipes.pid, signal.SIGKILL)
        self._reader.on_exit()

    async def _exit_code_soon(self) -> int | None:
        """The exit code if the process exits within a moment (it usually just closed stdout)."""
        if self._pipes is None:
            return None
        await self._wait(0.5)
        return self.returncode

    async def _cleanup(self) -> None:
        """After the leader is reaped: kill stragglers of its group, close pipes, stop tasks."""
        pipes = self._pipes
        assert pipes is not None
        # Children the engine left behind still carry its process-group id.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pipes.pid, signal.SIGKILL)
            self.note("killed leftover members of the process group")
        for waited in (self._reader.closed, self._stderr.ended):
            if waited is None:
                continue
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(waited), 0.5)
        task = self._reader.end_task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await task
        await pipes.close()
        self._stderr.end()
        untrack(self)

    async def _terminated(self) -> EngineTerminated:
        """The error for the end of output: the exit code (awaited a moment) and stderr's tail."""
        return EngineTerminated(await self._note_end(), self._stderr_summary())

    async def _note_end(self) -> int | None:
        """The exit code soon after the end of output, noted once in the transcript."""
        code = await self._exit_code_soon()
        if not self._end_noted:
            self._end_noted = True
            self.note(f"end of output (exit code {code})")
        return code

    def _stderr_summary(self) -> str:
        tail = self._stderr.text.strip().splitlines()[-3:]
        return " | ".join(tail)
