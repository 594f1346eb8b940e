"""The engine's two pipes: a reader thread that never blocks the search, and a flushed writer.

Input lines are read as bytes with a bound on their length, decoded leniently (a host should
never crash the engine with a bad byte), and queued; the search keeps running meanwhile.
Every output line is written whole and flushed at once, from any thread.

With ``ENGINE_STAMPS=DIR`` in its environment the engine also appends every line it reads
and writes, with the monotonic clock in nanoseconds, to ``DIR/stamps-PID.txt``: the time a
line left one engine and the time the move reached the other are then taken on both ends of
the host's relay, whichever host it is (benchmarks/concurrency.py compares runners so).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass
from typing import BinaryIO

# Longest input line accepted; longer ones are dropped and reported.
MAX_LINE_BYTES = 64 * 1024
STAMPS_ENV = "ENGINE_STAMPS"
"""The environment variable naming the directory of the line stamps (off when unset)."""


def _open_stamps() -> int | None:
    """The stamp file's descriptor (appended to, one write per line: atomic across threads)."""
    folder = os.environ.get(STAMPS_ENV)
    if not folder:
        return None
    return os.open(os.path.join(folder, f"stamps-{os.getpid()}.txt"),
                   os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


_STAMPS = _open_stamps()


def _stamp(direction: str, data: bytes) -> None:
    """Record one line read (``<``) or written (``>``) with the time, when stamping is on."""
    if _STAMPS is not None:
        os.write(_STAMPS, b"%d %s %s\n" % (time.monotonic_ns(), direction.encode(),
                                           data.rstrip(b"\n")))


@dataclass(frozen=True)
class EndOfInput:
    """Queued once when stdin reaches end of file."""


@dataclass(frozen=True)
class OverlongLine:
    """Queued instead of a line that exceeded MAX_LINE_BYTES (its first bytes kept)."""

    head: str


class LineReader:
    """Reads a file descriptor on a daemon thread and queues decoded lines (no newline).

    It reads with `os.read` rather than through a buffered file object, so that the thread
    holds no interpreter-level lock that could stall the process when it exits.
    """

    def __init__(self, fd: int, sink: queue.Queue, *, limit: int = MAX_LINE_BYTES) -> None:
        self._fd = fd
        self._sink = sink
        self._limit = limit
        self._thread = threading.Thread(target=self._run, name="stdin-reader", daemon=True)

    def start(self) -> None:
        """Start reading."""
        self._thread.start()

    def _run(self) -> None:
        """Thread body: split the byte stream into bounded lines until end of file."""
        pending = b""
        skipping = False
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            pending += chunk
            while True:
                cut = pending.find(b"\n")
                if cut < 0:
                    break
                line, pending = pending[:cut], pending[cut + 1:]
                if skipping:
                    skipping = False
                    continue
                self._emit(line)
            if len(pending) > self._limit:
                if not skipping:
                    self._sink.put(OverlongLine(pending[:40].decode("utf-8", "replace")))
                skipping = True
                pending = b""
        if pending and not skipping:
            self._emit(pending)
        self._sink.put(EndOfInput())

    def _emit(self, line: bytes) -> None:
        """Queue one complete line, decoded leniently."""
        _stamp("<", line)
        self._sink.put(line.decode("utf-8", "replace").rstrip("\r"))


class LineWriter:
    """Writes complete lines (or raw bytes, for fault modes) and flushes each at once."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def line(self, text: str) -> None:
        """Send one line; a closed pipe is remembered, not raised."""
        self.raw((text + "\n").encode("utf-8"))

    def raw(self, data: bytes) -> None:
        """Send bytes exactly as given."""
        with self._lock:
            if self.broken:
                return
            # Stamped before the write: after it, this thread may wait for the interpreter
            # lock while the line is already read and relayed by the host.
            _stamp(">", data)
            try:
                self._stream.write(data)
                self._stream.flush()
            except (OSError, ValueError):
                self.broken = True
