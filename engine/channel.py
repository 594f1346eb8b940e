"""The engine's two pipes: a reader thread that never blocks the search, and a flushed writer.

Input lines are read as bytes with a bound on their length, decoded leniently (a host should
never crash the engine with a bad byte), and queued; the search keeps running meanwhile.
Every output line is written whole and flushed at once, from any thread.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import BinaryIO

# Longest input line accepted; longer ones are dropped and reported.
MAX_LINE_BYTES = 64 * 1024


@dataclass(frozen=True)
class EndOfInput:
    """Queued once when stdin reaches end of file."""


@dataclass(frozen=True)
class OverlongLine:
    """Queued instead of a line that exceeded MAX_LINE_BYTES (its first bytes kept)."""

    head: str


class LineReader:
    """Reads stdin on a daemon thread and queues decoded lines (without their newline)."""

    def __init__(self, stream: BinaryIO, sink: queue.Queue, *, limit: int = MAX_LINE_BYTES) -> None:
        self._stream = stream
        self._sink = sink
        self._limit = limit
        self._thread = threading.Thread(target=self._run, name="stdin-reader", daemon=True)

    def start(self) -> None:
        """Start reading."""
        self._thread.start()

    def _run(self) -> None:
        """Thread body: read bounded lines until end of file."""
        try:
            while True:
                raw = self._stream.readline(self._limit)
                if not raw:
                    break
                if not raw.endswith(b"\n") and len(raw) >= self._limit:
                    self._skip_rest()
                    self._sink.put(OverlongLine(raw[:40].decode("utf-8", "replace")))
                    continue
                self._sink.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        self._sink.put(EndOfInput())

    def _skip_rest(self) -> None:
        """Discard the remainder of an overlong line, in bounded chunks."""
        while True:
            chunk = self._stream.readline(self._limit)
            if not chunk or chunk.endswith(b"\n"):
                return


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
            try:
                self._stream.write(data)
                self._stream.flush()
            except (OSError, ValueError):
                self.broken = True
