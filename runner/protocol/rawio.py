"""An engine process on raw pipes: the event loop watches its descriptors, we read and write.

The process is spawned with `subprocess.Popen` on pipes we make (argv, no shell, its own
session). Our ends are non-blocking; the loop calls us when stdout or stderr is readable
(``add_reader``), and we read them with one ``os.read`` of `READ_CHUNK`, handing the bytes
to the line reader in that callback: no transport, protocol or ``call_soon`` hop between
the poll and the game. stdin is written with ``os.write``; only what a full pipe did not
take is kept and written when the loop says it is writable. The exit is watched through a
pidfd (Linux 5.3): readable once the process has exited, then reaped with ``waitpid``, so
no child watcher thread runs per engine and a child of the engine holding a pipe open
cannot delay it.

Where the loop cannot watch a descriptor (Windows' Proactor) or the system has no pidfd,
`raw_capable` says so and the engine process uses asyncio's transports (streamio.py).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from runner.protocol.engine import EngineError
from runner.protocol.loop import ArrivalLooks
from runner.protocol.reading import LineReader
from runner.protocol.stdio import READ_CHUNK, StderrTail

__all__ = ["RawPipes", "raw_capable", "spawn_raw"]


def _pidfd_works() -> bool:
    """Whether this system can give a process's exit as a descriptor (pidfd_open)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return False
    try:
        fd = opener(os.getpid())
    except OSError:
        return False
    os.close(fd)
    return True


_PIDFD = _pidfd_works()
_NO_BYTES = bytes(4)
"""The buffer FIONREAD fills with an int: how many bytes wait in a pipe."""
_WATCHES: dict[type, bool] = {}  # loop class -> whether its add_reader works


def raw_capable(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether engines can run on raw pipes on `loop`: it watches descriptors (asyncio's
    selector loops and uvloop do, the Proactor does not) and the system has pidfds."""
    if not _PIDFD:
        return False
    kind = type(loop)
    known = _WATCHES.get(kind)
    if known is None:
        read_end, write_end = os.pipe()
        try:
            loop.add_reader(read_end, _nothing)
            loop.remove_reader(read_end)
            known = True
        except (NotImplementedError, OSError, ValueError):
            known = False
        finally:
            os.close(read_end)
            os.close(write_end)
        _WATCHES[kind] = known
    return known


def _nothing() -> None:
    """A reader that is never called (the capability probe removes it at once)."""


def spawn_raw(loop: asyncio.AbstractEventLoop, argv: Sequence[str], *, cwd: Path | str | None,
              env: Mapping[str, str] | None, preexec: Callable[[], None] | None,
              reader: LineReader, stderr: StderrTail, on_exit: Callable[[], None],
              arrivals: ArrivalLooks | None) -> RawPipes:
    """Start `argv` in a new session on raw pipes watched by `loop` (see `raw_capable`);
    EngineError, with the system's words, when it cannot be started."""
    ours: list[int] = []
    theirs: list[int] = []
    try:
        for _ in range(3):
            read_end, write_end = os.pipe()
            ours.append(read_end)
            theirs.append(write_end)
        # stdin: the child reads the first pipe's read end, we write its write end.
        ours[0], theirs[0] = theirs[0], ours[0]
        process = subprocess.Popen(
            list(argv), stdin=theirs[0], stdout=theirs[1], stderr=theirs[2], cwd=cwd,
            env=None if env is None else dict(env), start_new_session=True, close_fds=True,
            preexec_fn=preexec)
    except OSError as exc:
        for fd in ours:
            os.close(fd)
        raise EngineError(f"cannot start {argv[0]!r}: {exc}") from exc
    finally:
        for fd in theirs:
            os.close(fd)
    for fd in ours:
        os.set_blocking(fd, False)
    return RawPipes(loop, process, ours, reader, stderr, on_exit, arrivals)


class RawPipes:
    """A started engine's pipes and exit, watched by the loop as raw descriptors."""

    def __init__(self, loop: asyncio.AbstractEventLoop, process: subprocess.Popen[bytes],
                 fds: list[int], reader: LineReader, stderr: StderrTail,
                 on_exit: Callable[[], None], arrivals: ArrivalLooks | None) -> None:
        """`fds` are our ends of stdin, stdout and stderr, non-blocking."""
        self._loop = loop
        self._process = process
        self._pid = process.pid
        self._returncode: int | None = None
        self._stdin, self._stdout, self._stderr = fds[0], fds[1], fds[2]
        self._reader = reader
        self._stderr_tail = stderr
        self._on_exit = on_exit
        self._arrivals = arrivals
        self._paused = False
        self._unwritten = bytearray()  # what a full pipe did not take yet
        self._write_error: OSError | None = None
        self._drained: asyncio.Future[None] | None = None
        self._pidfd = os.pidfd_open(self._pid)
        loop.add_reader(self._pidfd, self._reap)
        if arrivals is not None:
            arrivals.watch(self._stdout)
        loop.add_reader(self._stdout, self._read_stdout)
        loop.add_reader(self._stderr, self._read_stderr)

    @property
    def pid(self) -> int:
        """The process id."""
        return self._pid

    @property
    def returncode(self) -> int | None:
        """The exit code once reaped (minus the signal that killed it)."""
        return self._returncode

    # ----------------------------------------------------------------- reading

    def _read_stdout(self) -> int:
        """stdout is readable: one read, its lines to the reader now (or its end); the
        bytes read (0: none waited, or the output ended)."""
        fd = self._stdout
        try:
            data = os.read(fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            data = b""
        now = time.monotonic()
        if not data:
            self._close_stdout()
            self._reader.on_closed(now)
            return 0
        arrivals = self._arrivals
        if arrivals is None:
            self._reader.on_chunk(data, now)
        else:
            self._reader.on_chunk(data, now, arrivals.arrived(fd, now))
        return len(data)

    def read_waiting(self) -> None:
        """Read at once what stdout holds now (or its end), as the loop's read callback
        would: an overdue deadline reads its reply first if it came (`Watchdog.look_with`).
        Bounded by what waited when asked; nothing while reading is paused."""
        fd = self._stdout
        if fd < 0 or self._paused:
            return
        try:
            counted = fcntl.ioctl(fd, termios.FIONREAD, _NO_BYTES)
        except OSError:
            return
        left = int.from_bytes(counted, sys.byteorder)
        while True:  # at least one read: an empty pipe may have ended (a read says so)
            got = self._read_stdout()
            left -= got
            if got == 0 or left <= 0 or self._paused or self._stdout < 0:
                return

    def _read_stderr(self) -> None:
        """stderr is readable: one read into the tail (or its end)."""
        try:
            data = os.read(self._stderr, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            self._stderr_tail.feed(data)
        else:
            self._close_stderr()

    def pause_reading(self) -> None:
        """Stop watching stdout until `resume_reading`."""
        if not self._paused and self._stdout >= 0:
            self._paused = True
            self._loop.remove_reader(self._stdout)

    def resume_reading(self) -> None:
        """Watch stdout again."""
        if self._paused and self._stdout >= 0:
            self._paused = False
            self._loop.add_reader(self._stdout, self._read_stdout)

    def _close_stdout(self) -> None:
        fd, self._stdout = self._stdout, -1
        if fd < 0:
            return
        if self._arrivals is not None:  # before closing: the number may be reused
            self._arrivals.unwatch(fd)
        if not self._paused:
            self._loop.remove_reader(fd)
        os.close(fd)

    def _close_stderr(self) -> None:
        fd, self._stderr = self._stderr, -1
        if fd >= 0:
            self._loop.remove_reader(fd)
            os.close(fd)
        self._stderr_tail.end()

    # ----------------------------------------------------------------- writing

    def stdin_closing(self) -> bool:
        """Whether stdin is closed (the engine closed its end, or we did)."""
        return self._stdin < 0

    def write(self, data: bytes) -> None:
        """Write what the pipe takes now, keep the rest for the loop to write."""
        if self._stdin < 0:
            raise self._write_error or BrokenPipeError(errno.EPIPE, "the engine's input is closed")
        if self._unwritten:
            self._unwritten += data
            return
        try:
            written = os.write(self._stdin, data)
        except (BlockingIOError, InterruptedError):
            written = 0
        except OSError as exc:
            self._broken(exc)
            raise
        if written < len(data):
            self._unwritten += data[written:]
            self._loop.add_writer(self._stdin, self._flush)

    def write_pending(self) -> bool:
        """Whether bytes wait to be written, or the pipe broke."""
        return bool(self._unwritten) or self._stdin < 0

    async def drain(self) -> None:
        """Wait until the kept bytes are written; the pipe's error if it broke."""
        if self._stdin < 0:
            raise self._write_error or BrokenPipeError(errno.EPIPE, "the engine's input is closed")
        if not self._unwritten:
            return
        if self._drained is None or self._drained.done():
            self._drained = self._loop.create_future()
        await asyncio.shield(self._drained)

    def _flush(self) -> None:
        """stdin is writable: write on what was kept."""
        try:
            written = os.write(self._stdin, self._unwritten)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._broken(exc)
            return
        del self._unwritten[:written]
        if not self._unwritten:
            self._loop.remove_writer(self._stdin)
            if self._drained is not None and not self._drained.done():
                self._drained.set_result(None)

    def _broken(self, exc: OSError) -> None:
        """stdin broke: close it, and fail whoever waits for the kept bytes."""
        self._write_error = exc
        self._close_stdin()
        drained = self._drained
        if drained is not None and not drained.done():
            drained.set_exception(exc)
            drained.exception()  # its waiter may be gone: the error is kept for the next call

    def _close_stdin(self) -> None:
        fd, self._stdin = self._stdin, -1
        if fd < 0:
            return
        if self._unwritten:
            self._loop.remove_writer(fd)
            self._unwritten.clear()
        os.close(fd)

    # ----------------------------------------------------------------- the exit

    def _reap(self) -> None:
        """The pidfd is readable: the process has exited; reap it and say so."""
        try:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) child watcher)
            pid, code = self._pid, 255
        else:
            if pid == 0:
                return
            code = os.waitstatus_to_exitcode(status)
        self._returncode = code
        self._process.returncode = code  # Popen must not think it still runs
        self._stop_pidfd()
        self._on_exit()

    def _stop_pidfd(self) -> None:
        fd, self._pidfd = self._pidfd, -1
        if fd >= 0:
            self._loop.remove_reader(fd)
            os.close(fd)

    async def close(self) -> None:
        """Close every pipe and stop watching them; the exit stays watched until the
        process is reaped (it always is: the owner closes after SIGKILL)."""
        self._close_stdin()
        self._close_stdout()
        if self._stderr >= 0:
            self._close_stderr()
        if self._returncode is not None:
            self._stop_pidfd()
