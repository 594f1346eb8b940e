"""An engine subprocess: spawn, write lines, stop cleanly, reap.

Its pipes are raw descriptors the event loop watches (rawio.py), or asyncio's subprocess
transports where the loop cannot watch one (streamio.py); either hands stdout to a
`LineReader` (reading.py), which cuts it into bounded lines in the read callback, and
stderr to a bounded `StderrTail`. The rest is here: writes, signals, the
polite-then-forceful stop. The process runs in its own session (so its own process group):
stopping it signals the whole group, so helpers it spawned (polyglot's UCI engine, for
instance) die with it. Its exit is watched on its own (a pidfd, or asyncio's child watcher),
not inferred from the end of its output, which a child holding the pipe can delay forever;
what keeps engines from outliving the runner is in lifetime.py.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from runner.protocol.engine import EngineError, TranscriptEntry
from runner.protocol.lifetime import death_signal, track
from runner.protocol.loop import arrival_selector
from runner.protocol.piped import PipedProcess
from runner.protocol.rawio import RawPipes, raw_capable, spawn_raw
from runner.protocol.stdio import StderrTail
from runner.protocol.streamio import StreamPipes, spawn_stream
from runner.protocol.transport import ENTRY_LIMIT, EndHandler, Line, LineHandler

__all__ = ["EngineProcess"]


class EngineProcess(PipedProcess):
    """One engine process: start it, read bounded lines; writes and the stop are inherited."""

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
        raw: bool = True,
    ) -> None:
        """`entry_limit` bounds each transcript entry's text (the whole line is still read);
        `start_cpu` starts the process on that CPU alone, until `release_cpu`; `name` is
        the engine's name in errors (its program by default); `transcript` is the bounded
        record to keep (one that echoes its lines, say), a new one of `transcript_size`
        entries by default; `raw` False uses asyncio's subprocess transports even where the
        loop could watch the raw pipes (the fallback, which tests exercise)."""
        if not argv:
            raise ValueError("empty engine command")
        argv = tuple(argv)
        super().__init__(
            name or f"engine {argv[0]}",
            deque(maxlen=transcript_size) if transcript is None else transcript,
            line_limit=line_limit, entry_limit=entry_limit,
            stderr=StderrTail(stderr_limit, stderr_log), label=argv[0])
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.line_limit = line_limit
        self.stderr_limit = stderr_limit
        self.stderr_log = stderr_log
        self.start_cpu = start_cpu
        self.raw = raw

    @property
    def raw_pipes(self) -> bool:
        """Whether the started process's pipes are raw descriptors (else asyncio's transports)."""
        return isinstance(self._pipes, RawPipes)

    @property
    def stderr_tail(self) -> str:
        """The last bytes the engine wrote to its standard error, decoded leniently."""
        return self._stderr.text

    @property
    def stderr_read(self) -> int:
        """Bytes read from the engine's standard error so far (a mark for `stderr_since`)."""
        return self._stderr.read

    async def stderr_since(self, mark: int, settle: float = 1.0) -> str:
        """What the engine wrote to its standard error after `stderr_read` was `mark`, as far
        as the bounded tail still holds it; once the process has exited, its last writes are
        awaited up to `settle` seconds (they may not have been read yet)."""
        ended = self._stderr.ended
        if ended is not None and not ended.done() and self.returncode is not None:
            await asyncio.wait([ended], timeout=settle)
        return self._stderr.since(mark)

    async def start(self) -> None:
        """Spawn the process (argv list, no shell) in a new session with piped stdio."""
        if self._pipes is not None:
            raise RuntimeError("engine process already started")
        env = None
        if self.env is not None:
            env = {**os.environ, **self.env}
        loop = asyncio.get_running_loop()
        self._reader.closed = loop.create_future()
        self._exit = loop.create_future()
        self._stderr.begin(loop)
        preexec = _preexec(self.start_cpu)
        try:
            if self.raw and raw_capable(loop):
                self._pipes = spawn_raw(
                    loop, self.argv, cwd=self.cwd, env=env, preexec=preexec,
                    reader=self._reader, stderr=self._stderr, on_exit=self._exited,
                    arrivals=arrival_selector(loop))
            else:
                self._pipes = await spawn_stream(
                    loop, self.argv, cwd=self.cwd, env=env, preexec=preexec,
                    reader=self._reader, stderr=self._stderr, on_exit=self._exited,
                    arrivals=arrival_selector(loop))
        except BaseException:
            self._stderr.end_log()
            raise
        track(self)
        pipes = self._pipes
        if isinstance(pipes, StreamPipes) and pipes.stdout is None:  # every loop can, we know
            await self.kill()
            raise EngineError(f"{type(loop).__name__}: the stdout pipe of {self.argv[0]!r} "
                              "cannot pause reading")
        self._reader.pipe = pipes
        self.note(f"started pid {pipes.pid}: {' '.join(self.argv)}")

    def read_waiting(self) -> None:
        """Read at once what the engine's stdout holds now (on raw pipes; on asyncio's
        transports, nothing): an overdue deadline reads its reply first (`Watchdog.look_with`)."""
        pipes = self._pipes
        if isinstance(pipes, RawPipes):
            pipes.read_waiting()

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
