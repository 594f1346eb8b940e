"""An engine process on asyncio's subprocess transports: the fallback of rawio.py.

Used where the event loop cannot watch a raw descriptor (Windows' Proactor loop) or the
system gives no pidfd, and whenever an `EngineProcess` is asked for it. stdout still reaches
the line reader in the read callback itself (`_read_directly`), stderr its tail; the exit is
what asyncio's child watcher reports.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from asyncio.subprocess import Process, SubprocessStreamProtocol
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from runner.protocol.engine import EngineError
from runner.protocol.loop import ArrivalLooks
from runner.protocol.reading import LineReader, PausablePipe, is_pausable
from runner.protocol.stdio import READ_CHUNK, StderrTail

__all__ = ["StreamPipes", "spawn_stream"]


async def spawn_stream(loop: asyncio.AbstractEventLoop, argv: Sequence[str], *,
                       cwd: Path | str | None, env: Mapping[str, str] | None,
                       preexec: Callable[[], None] | None, reader: LineReader,
                       stderr: StderrTail, on_exit: Callable[[], None],
                       arrivals: ArrivalLooks | None) -> StreamPipes:
    """Start `argv` in a new session through asyncio's subprocess transports; EngineError,
    with the system's words, when it cannot be started."""
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _EngineProtocol(reader, stderr, loop, on_exit),
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
            close_fds=True,
            preexec_fn=preexec,
        )
    except OSError as exc:
        raise EngineError(f"cannot start {argv[0]!r}: {exc}") from exc
    stdout = transport.get_pipe_transport(1)
    _shrink_reads(transport)
    pipes = StreamPipes(Process(transport, protocol, loop), transport,
                        stdout if is_pausable(stdout) else None)
    _read_directly(stdout, reader, arrivals)
    return pipes


class StreamPipes:
    """A started engine's pipes as asyncio's transports (see `EnginePipes`)."""

    def __init__(self, process: Process, transport: asyncio.SubprocessTransport,
                 stdout: PausablePipe | None) -> None:
        """`stdout` is None when the loop's pipe cannot pause reading (the owner refuses it)."""
        self.process = process
        self.transport = transport
        self.stdout = stdout

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once asyncio has reaped the process."""
        return self.process.returncode

    def pause_reading(self) -> None:
        """Stop reading stdout."""
        if self.stdout is not None:
            self.stdout.pause_reading()

    def resume_reading(self) -> None:
        """Read stdout again."""
        if self.stdout is not None:
            self.stdout.resume_reading()

    def stdin_closing(self) -> bool:
        """Whether stdin's transport is closing."""
        stdin = self.process.stdin
        return stdin is None or stdin.is_closing()

    def write(self, data: bytes) -> None:
        """Hand `data` to stdin's transport (a broken pipe shows at `drain`)."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)

    def write_pending(self) -> bool:
        """A pipe that took the whole write needs no drain (a coroutine per move); one that
        is full, or broken (the transport then closes), goes through it."""
        stdin = self.process.stdin
        assert stdin is not None
        transport = stdin.transport
        return bool(transport.get_write_buffer_size()) or transport.is_closing()

    async def drain(self) -> None:
        """asyncio's drain of stdin."""
        stdin = self.process.stdin
        assert stdin is not None
        await stdin.drain()

    async def close(self) -> None:
        """Close stdin (waiting for it) and the transport."""
        stdin = self.process.stdin
        if stdin is not None:
            stdin.close()
            with contextlib.suppress(OSError):
                await stdin.wait_closed()
        self.transport.close()


def _shrink_reads(transport: asyncio.SubprocessTransport) -> None:
    """Read the engine's stdout and stderr in `READ_CHUNK` pieces instead of asyncio's 256 KiB.

    ``max_size`` is an attribute of asyncio's pipe transports, not public API; without it
    nothing changes but the speed. uvloop's have none and need none: they read into one
    buffer the loop keeps.
    """
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        sized: Any = pipe
        if sized is not None and isinstance(getattr(sized, "max_size", None), int):
            sized.max_size = READ_CHUNK


def _read_directly(stdout: object, reader: LineReader, arrivals: ArrivalLooks | None) -> None:
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
                 arrivals: ArrivalLooks | None, fd: int) -> None:
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
            self._reader.on_chunk(data, now, arrivals.arrived(self._fd, now))

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
    """asyncio's subprocess stream protocol, stdout going straight to the line reader and
    stderr to its tail; stdin keeps asyncio's stream writer."""

    def __init__(self, reader: LineReader, stderr: StderrTail, loop: asyncio.AbstractEventLoop,
                 on_exit: Callable[[], None]) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self._reader = reader
        self._stderr = stderr
        self._on_exit = on_exit

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """stdout to the line reader (only until `_read_directly` takes it over, or on a loop
        where it cannot), stderr to its tail."""
        if isinstance(data, bytes):
            if fd == 1:
                self._reader.on_chunk(data, time.monotonic())
                return
            if fd == 2:
                self._stderr.feed(data)
                return
        super().pipe_data_received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        """The end of stdout is the owner's to handle; asyncio's bookkeeping still runs."""
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            self._reader.on_closed(time.monotonic())
        elif fd == 2:
            self._stderr.end()

    def process_exited(self) -> None:
        """The child watcher reaped the process: tell the owner at once (not at end of output)."""
        super().process_exited()
        self._on_exit()
