"""An engine subprocess over asyncio pipes: spawn, write lines, stop cleanly, reap.

Its standard output is cut into bounded lines by a `LineReader` (reading.py); the rest is
here: writes, signals, the polite-then-forceful stop, stderr's bounded tail.  The process
runs in its own session (so its own process group): stopping it signals the whole group,
so helpers it spawned (polyglot's UCI engine, for instance) die with it. Its exit is watched
on its own (asyncio's child watcher reports it), not inferred from the end of its output,
which a child holding the pipe can delay forever; what keeps engines from outliving the
runner is in lifetime.py.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from asyncio.subprocess import Process, SubprocessStreamProtocol
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from runner.protocol.engine import EngineError, EngineTerminated, TranscriptEntry
from runner.protocol.lifetime import death_signal, track, untrack
from runner.protocol.loop import ArrivalSelector, arrival_selector
from runner.protocol.reading import LineReader, is_pausable
from runner.protocol.transport import (
    ENTRY_LIMIT,
    EndHandler,
    Line,
    LineHandler,
    check_lines,
    clip_entry,
)

__all__ = ["EngineProcess"]

_STDERR_CHUNK = 4096


class EngineProcess:
    """One engine process: start, read bounded lines, write lines, stop, kill.

    Kept whole over 300 lines (tests/test_sizes.py): it is compiled and every line read or
    written passes through it; its start, pipes and stop share the process handle, and a
    collaborator would add a hop per line."""

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
        start_cpu: int | None = None,
        name: str = "",
        transcript: deque[TranscriptEntry] | None = None,
    ) -> None:
        """`entry_limit` bounds each transcript entry's text (the whole line is still read);
        `start_cpu` starts the process on that CPU alone, until `release_cpu`; `name` is
        the engine's name in errors (its program by default); `transcript` is the bounded
        record to keep (one that echoes its lines, say), a new one of `transcript_size`
        entries by default."""
        if not argv:
            raise ValueError("empty engine command")
        self.argv = tuple(argv)
        self.name = name or f"engine {self.argv[0]}"
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self.stderr_log = stderr_log
        self.transcript: deque[TranscriptEntry] = (
            deque(maxlen=transcript_size) if transcript is None else transcript)
        self.entry_limit = entry_limit
        self.start_cpu = start_cpu
        self._proc: asyncio.subprocess.Process | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._exit: asyncio.Future[None] | None = None  # done once the process has exited
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr_tail = bytearray()
        self._stderr_logged = 0
        self._stderr_read = 0
        self._end_noted = False
        self._reader = LineReader(
            self.transcript, line_limit=line_limit, entry_limit=entry_limit, note=self.note,
            terminated=self._terminated, returncode=lambda: self.returncode,
            label=self.argv[0])

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

    @property
    def stderr_read(self) -> int:
        """Bytes read from the engine's standard error so far (a mark for `stderr_since`)."""
        return self._stderr_read

    async def stderr_since(self, mark: int, settle: float = 1.0) -> str:
        """What the engine wrote to its standard error after `stderr_read` was `mark`, as far
        as the bounded tail still holds it; once the process has exited, its last writes are
        awaited up to `settle` seconds (the drain may not have read them yet)."""
        task = self._stderr_task
        if task is not None and not task.done() and self.returncode is not None:
            await asyncio.wait([task], timeout=settle)
        kept = min(self._stderr_read - mark, len(self._stderr_tail))
        if kept <= 0:
            return ""
        return bytes(self._stderr_tail[-kept:]).decode("utf-8", errors="replace")

    async def start(self) -> None:
        """Spawn the process (argv list, no shell) in a new session with piped stdio."""
        if self._proc is not None:
            raise RuntimeError("engine process already started")
        env = None
        if self.env is not None:
            env = {**os.environ, **self.env}
        loop = asyncio.get_running_loop()
        self._reader.closed = loop.create_future()
        self._exit = loop.create_future()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _EngineProtocol(self._reader, self.line_limit, loop, self._exited),
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
                preexec_fn=_preexec(self.start_cpu),
            )
        except OSError as exc:
            raise EngineError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        self._proc = Process(transport, protocol, loop)
        self._transport = transport
        track(self)
        stdout = transport.get_pipe_transport(1)
        if not is_pausable(stdout):  # every loop we know offers it
            await self.kill()
            raise EngineError(f"{type(loop).__name__}: the stdout pipe of {self.argv[0]!r} "
                              f"({type(stdout).__name__}) cannot pause reading")
        self._reader.pipe = stdout
        _read_directly(stdout, self._reader, arrival_selector(loop))
        self.note(f"started pid {self._proc.pid}: {' '.join(self.argv)}")
        _shrink_reads(transport)
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name=f"stderr-{self.pid}")

    def note(self, text: str) -> None:
        """Add a host-side note to the transcript."""
        self._record(time.monotonic(), "!", text)

    def release_cpu(self) -> None:
        """Give every thread of the process's group back the runner's CPUs (after a start on
        `start_cpu`); threads and processes already gone are skipped."""
        if self.start_cpu is None or self.pid is None:
            return
        cpus = os.sched_getaffinity(0)
        for pid in _group_members(self.pid):
            with contextlib.suppress(OSError):
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with contextlib.suppress(OSError):
                        os.sched_setaffinity(int(tid), cpus)
        self.note(f"start-up on CPU {self.start_cpu} over: all CPUs given back")

    async def read_line(self) -> Line:
        """The next stdout line; EngineTerminated at its end, EngineProtocolError if too long."""
        self._require()
        return await self._reader.read_line()

    async def read_lines(self) -> list[Line]:
        """Every complete stdout line read so far (at least one: waits for it), oldest first.

        One call per chunk of output instead of one per line: an engine printing several lines
        per move (thinking output, comments) costs one wake-up, not one per line.
        """
        self._require()
        return await self._reader.read_lines()

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Hand every chunk's complete lines to `on_lines` as they arrive, instead of queueing
        them for `read_lines`; `on_end` gets the error that ends the output (once).

        The handlers run inside the event loop's read callback: no task wakes up per chunk,
        which is most of what reading costs. They must not block; an exception they raise
        is logged and ends the output with an EngineError.
        """
        self._require()
        self._reader.listen(on_lines, on_end)

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

    def write_nowait(self, lines: Sequence[str]) -> float:
        """Write lines without waiting for the pipe to drain (small answers inside a line
        handler); an engine gone already is noticed by the next read or awaited write."""
        proc = self._require()
        assert proc.stdin is not None
        check_lines(lines, self.name)
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
        """Write several lines in one system call and drain; the monotonic time after it.

        Every line written to an engine passes here (or through `write_nowait`): a line
        holding a line break or another control character is refused (UnsafeCommandError)
        before anything of the batch is written, whoever built it.
        """
        proc = self._require()
        assert proc.stdin is not None
        check_lines(lines, self.name)
        stdin = proc.stdin
        try:
            if lines:
                stdin.write(("\n".join(lines) + "\n").encode("utf-8"))
            # A pipe that took the whole write needs no drain (a coroutine per move); one
            # that is full, or broken (the transport then closes), goes through it.
            transport = stdin.transport
            if transport.get_write_buffer_size() or transport.is_closing():
                await stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            code = await self._exit_code_soon()
            raise EngineTerminated(code, "its input pipe is closed") from exc
        now = time.monotonic()
        limit, transcript = self.entry_limit, self.transcript
        for line in lines:
            transcript.append(TranscriptEntry(
                now, ">", line if len(line) <= limit else clip_entry(line, limit)))
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
        """Quit politely, then SIGTERM, then SIGKILL the process group; reap; the exit code.

        Cancelled on the way (a second Ctrl-C, the event loop shutting down), it sends SIGKILL
        to the group at once, before anything else can interrupt it: the engine never
        survives a stop that was begun."""
        proc = self._proc
        if proc is None:
            return None
        self._start_drain()
        try:
            if proc.returncode is None and quit_command is not None:
                with contextlib.suppress(EngineError, OSError):
                    await self.write_line(quit_command)
                if await self._wait(quit_timeout):
                    self.note("exited after quit")
            if proc.returncode is None and use_sigterm:
                self._signal_group(signal.SIGTERM)
                await self._wait(terminate_timeout)
        except BaseException:
            await self._kill_hurried()
            raise
        return await self.kill()

    async def kill(self) -> int | None:
        """SIGKILL the whole process group at once and reap; the exit code."""
        proc = self._proc
        if proc is None:
            return None
        self._start_drain()
        try:
            if proc.returncode is None:
                self._signal_group(signal.SIGKILL)
                await self._wait(None)
            await self._cleanup()
        except BaseException:
            await self._kill_hurried()
            raise
        return proc.returncode

    async def _kill_hurried(self) -> None:
        """A stop interrupted: SIGKILL the group (synchronous, so it happens whatever comes
        next), then reap and clean up if the loop lets us (the engine is dead either way)."""
        if self._proc is not None and self._proc.returncode is None:
            self._signal_group(signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._wait(None), 2.0)
            await self._cleanup()

    def _start_drain(self) -> None:
        """From now on stdout is only recorded (see `LineReader.start_drain`)."""
        if self._proc is not None:
            self._reader.start_drain()

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
        too, and a child of the engine holding its stdout would keep it pending. asyncio's
        child watcher calls `_exited` as soon as it has reaped the process.
        """
        assert self._proc is not None and self._exit is not None
        if self._proc.returncode is not None:
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
        if self._proc is not None:
            self.note(f"process exited (exit code {self._proc.returncode})")
            # Its children are orphans now: they go with it, and their end closes its pipes.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
        self._reader.on_exit()

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
        for waited in (self._reader.closed, self._stderr_task):
            if waited is None:
                continue
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(waited), 0.5)
        for task in (self._stderr_task, self._reader.end_task):
            if task is None:
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, EngineError):
                await task
        if self._proc.stdin is not None:
            self._proc.stdin.close()
            with contextlib.suppress(OSError):
                await self._proc.stdin.wait_closed()
        if self._transport is not None:
            self._transport.close()
        untrack(self)

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
                self._stderr_read += len(chunk)
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


_READ_CHUNK = 65536
"""Bytes asked of the engine's pipes per read: a Linux pipe holds 64 KiB, so one read empties it."""


def _group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (an engine and its helpers)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[2]) == pgid:
                found.append(int(entry))
    return found


def _preexec(cpu: int | None) -> Callable[[], None] | None:
    """The child's set-up before exec: the death signal, and with `cpu`, that CPU alone."""
    die = death_signal()
    if cpu is None:
        return die

    def pinned() -> None:
        if die is not None:
            die()
        os.sched_setaffinity(0, {cpu})

    return pinned


def _shrink_reads(transport: asyncio.SubprocessTransport) -> None:
    """Read the engine's stdout and stderr in 64 KiB chunks instead of asyncio's 256 KiB.

    Every read of 256 KiB allocates (and mostly frees) a buffer above glibc's mmap threshold;
    for short engine lines that is a sizeable share of the runner's CPU per move (figures in
    the commit that made this change). ``max_size`` is an attribute of asyncio's pipe
    transports, not public API; without it nothing changes but the speed. uvloop's have none
    and need none: they read into one buffer the loop keeps.
    """
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        sized: Any = pipe
        if sized is not None and isinstance(getattr(sized, "max_size", None), int):
            sized.max_size = _READ_CHUNK


def _read_directly(stdout: object, reader: LineReader, arrivals: ArrivalSelector | None) -> None:
    """Have stdout's reads reach `reader` in the read callback itself, stamped by the poll
    that found them (`arrivals`, when the loop polls through an ArrivalSelector).

    asyncio's subprocess transport hands each read to the protocol through ``call_soon``:
    one more loop turn per chunk, behind every callback queued meanwhile (the other games'
    steps), and the line's stamp, which the engine's clock is charged up to, taken only then.
    Its pipe transport takes another protocol through the public ``set_protocol``; the end of
    output still goes through asyncio's own (its bookkeeping of the child's pipes). Not on
    loops whose transports are not asyncio's (uvloop): they keep the hop.
    """
    if not isinstance(stdout, asyncio.ReadTransport) or type(stdout).__module__ != "asyncio.unix_events":
        return
    if stdout.is_closing():
        # The engine's output has already ended (a program that exits at once): asyncio's
        # own protocol has handed it all to the reader, and the pipe may be closed already.
        return
    inner = stdout.get_protocol()
    fd = -1
    pipe = stdout.get_extra_info("pipe")
    fileno = getattr(pipe, "fileno", None)
    if arrivals is not None and callable(fileno):
        try:
            fd = int(fileno())
        except (ValueError, OSError):  # closed since the check above: as if it had been
            return
        arrivals.watch(fd)
    stdout.set_protocol(_StdoutProtocol(reader, inner, arrivals if fd >= 0 else None, fd))


class _StdoutProtocol(asyncio.Protocol):
    """The engine's stdout pipe, read straight into its line reader (see `_read_directly`)."""

    def __init__(self, reader: LineReader, inner: asyncio.BaseProtocol,
                 arrivals: ArrivalSelector | None, fd: int) -> None:
        self._reader = reader
        self._inner = inner
        self._arrivals = arrivals
        self._fd = fd

    def data_received(self, data: bytes) -> None:
        """A read of stdout: its lines, stamped, to the reader now."""
        now = time.monotonic()
        arrivals = self._arrivals
        if arrivals is None:
            self._reader.on_chunk(data, now)
        else:
            polled_at, waiting = arrivals.arrived(self._fd)
            self._reader.on_chunk(data, now, polled_at, waiting)

    def eof_received(self) -> bool | None:
        """The end of stdout, as asyncio's own protocol takes it."""
        if isinstance(self._inner, asyncio.Protocol):
            return self._inner.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """Through asyncio's own protocol (to `_EngineProtocol.pipe_connection_lost`)."""
        if self._arrivals is not None:  # before asyncio closes it: the number is reused
            self._arrivals.unwatch(self._fd)
            self._arrivals = None
        self._inner.connection_lost(exc)


class _EngineProtocol(SubprocessStreamProtocol):
    """asyncio's subprocess stream protocol, stdout going straight to the EngineProcess.

    stdin and stderr keep asyncio's stream objects; stdout bytes are split into lines in
    the read callback itself, so no reader task has to wake up for them.
    """

    def __init__(self, reader: LineReader, limit: int, loop: asyncio.AbstractEventLoop,
                 on_exit: Callable[[], None]) -> None:
        super().__init__(limit=limit, loop=loop)
        self._reader = reader
        self._on_exit = on_exit

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """stdout to the line reader (only until `_read_directly` takes it over, or on a loop
        where it cannot), the rest as asyncio does it."""
        if fd == 1 and isinstance(data, bytes):
            self._reader.on_chunk(data, time.monotonic())
        else:
            super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        """The end of stdout is the owner's to handle; asyncio's bookkeeping still runs."""
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            self._reader.on_closed(time.monotonic())

    def process_exited(self) -> None:
        """The child watcher reaped the process: tell the owner at once (not at end of output)."""
        super().process_exited()
        self._on_exit()
