"""Test double: a transport that plays the engine's side of a recorded CECP transcript.

It stands in for `EngineProcess` (same methods): on ``protover 2`` it prints the
engine's recorded start-up lines (optionally only after more input arrives, as gnuchess
does), answers every ``ping N``, and on ``go`` prints the recorded search and move.
Kept in tests/, never in the package.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from runner.protocol.cecp_parse import MoveLine, parse_engine_line
from runner.protocol.engine import EngineError, EngineTerminated, TranscriptEntry
from runner.protocol.transport import EndHandler, Line, LineHandler

_RAW_RE = re.compile(r"^\s*[\d.]+ ms (<<|>>) ?(.*)$")


class RecordedTranscript:
    """The raw section of a probe transcript, split into what a replay needs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[tuple[str, str]] = []
        in_raw = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("## raw"):
                in_raw = True
                continue
            match = _RAW_RE.match(line) if in_raw else None
            if match and match.group(2) != "<EOF>":
                self.entries.append((match.group(1), match.group(2)))

    def engine_lines(self) -> list[str]:
        """Every line the engine printed."""
        return [text for direction, text in self.entries if direction == "<<"]

    def startup(self) -> list[str]:
        """What the engine printed before the first ping, plus any feature line printed late."""
        lines = []
        before_ping = True
        for direction, text in self.entries:
            if direction == ">>" and text.startswith("ping"):
                before_ping = False
            if direction == "<<" and (before_ping or text.startswith("feature")):
                lines.append(text)
        return lines

    def answers(self) -> list[str]:
        """The host's accepted/rejected answers in the recording."""
        return [t for d, t in self.entries if d == ">>" and t.startswith(("accepted", "rejected"))]

    def first_search(self) -> list[str]:
        """Engine lines after the first ``go``, up to the move (and a duplicate move form)."""
        lines: list[str] = []
        after_go = False
        for direction, text in self.entries:
            if direction == ">>" and text == "go":
                after_go = True
                continue
            if not after_go or direction != "<<":
                continue
            if lines and isinstance(parse_engine_line(lines[-1]), MoveLine):
                if isinstance(parse_engine_line(text), MoveLine):
                    lines.append(text)  # gnuchess prints "1. ... d7d5" then "My move is : d7d5"
                break
            lines.append(text)
        return lines


class ReplayTransport:
    """An `EngineTransport` replaying a `RecordedTranscript`."""

    def __init__(self, recording: RecordedTranscript, *, startup_after_inputs: int = 0) -> None:
        self.recording = recording
        self.transcript: deque[TranscriptEntry] = deque(maxlen=10000)
        self.sent: list[str] = []
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._held: list[str] = []
        self._startup_after = startup_after_inputs
        self._running = False
        self._pump: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int | None:
        return None

    @property
    def running(self) -> bool:
        return self._running

    async def start(self) -> None:
        self._running = True

    def note(self, text: str) -> None:
        self.transcript.append(TranscriptEntry(time.monotonic(), "!", text))

    async def read_line(self) -> Line:
        text = await self._queue.get()
        if text is None:
            raise EngineTerminated(0, "replay finished")
        now = time.monotonic()
        self.transcript.append(TranscriptEntry(now, "<", text))
        return Line(now, "<", text)

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Hand the replayed lines over one at a time, from a task (the real transport does
        it from its read callback)."""
        async def pump() -> None:
            try:
                while True:
                    on_lines([await self.read_line()])
            except EngineError as exc:
                on_end(exc)

        self._pump = asyncio.get_running_loop().create_task(pump())

    def write_nowait(self, lines: Sequence[str]) -> float:
        now = time.monotonic()
        for line in lines:
            self.transcript.append(TranscriptEntry(now, ">", line))
            self.sent.append(line)
            self._respond(line)
        return now

    async def write_lines(self, lines: Sequence[str]) -> float:
        now = self.write_nowait(lines)
        await asyncio.sleep(0)
        return now

    def _emit(self, lines: Sequence[str]) -> None:
        for line in lines:
            self._queue.put_nowait(line)

    def _respond(self, line: str) -> None:
        replies: list[str] = []
        if line == "protover 2":
            replies = self.recording.startup()
        elif line.startswith("ping "):
            replies = [f"pong {line.split()[1]}"]
        elif line == "go":
            replies = self.recording.first_search()
        elif line == "quit":
            self._queue.put_nowait(None)
            return
        if line == "protover 2" and self._startup_after:
            self._held = list(replies)  # a buffered engine: nothing shows up yet
            return
        if self._held:
            self._held.extend(replies)
            self._startup_after -= 1
            if self._startup_after > 0:
                return
            replies, self._held = self._held, []
        self._emit(replies)

    def send_signal(self, sig: int) -> None:
        self.note(f"signal {sig}")

    async def stop(self, quit_command: str | None = "quit", **_: object) -> int | None:
        if self._running and quit_command:
            await self.write_lines([quit_command])
        self._running = False
        return 0

    async def kill(self) -> int | None:
        self._running = False
        self._queue.put_nowait(None)
        return -9
