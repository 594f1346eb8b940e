"""What a protocol client needs from the line transport under it, and the lines it reads.

`EngineProcess` (process.py) is the real transport; tests put scripted doubles in its
place.  Nothing here does I/O.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from runner.protocol.engine import EngineError, TranscriptEntry, UnsafeCommandError

__all__ = [
    "ENTRY_LIMIT",
    "EndHandler",
    "EngineTransport",
    "Line",
    "LineHandler",
    "check_lines",
    "clip_entry",
    "unsafe_character",
]

ENTRY_LIMIT = 1024
"""Characters of one transcript entry kept by default; longer text is cut and its length noted."""


Line = TranscriptEntry
"""A line read from the engine, without its end-of-line: its transcript entry itself (``time``
read, direction ``<``, ``text``), so reading a line makes one object, not two. Only a line
longer than a transcript entry holds is handed on whole in an entry of its own."""


LineHandler = Callable[[list[Line]], None]
"""Called with the complete lines of each chunk of engine output, as it arrives."""
EndHandler = Callable[[EngineError], None]
"""Called once when the engine's output ends (EngineTerminated) or breaks a limit."""


_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""What no line to an engine may hold: C0 controls (line breaks and tab included), DEL, C1
controls (NEL among them) and Unicode's line and paragraph separators. Some engines read
any of these as the end of a line."""


def unsafe_character(text: str) -> str | None:
    """The first character of `text` no line to an engine may hold (see `_UNSAFE`), or None."""
    found = _UNSAFE.search(text)
    return None if found is None else found.group()


def check_lines(lines: Sequence[str], engine: str) -> None:
    """Raise UnsafeCommandError, naming `engine`, if any of `lines` holds a control character."""
    for line in lines:
        # Every character `_UNSAFE` names is unprintable: a printable line (nearly all,
        # a move request's among them) needs no pattern search.
        if line.isprintable():
            continue
        found = _UNSAFE.search(line)
        if found is not None:
            shown = line if len(line) <= 80 else f"{line[:80]}..."
            raise UnsafeCommandError(
                f"{engine}: refused to send {shown!r}: it holds the control character "
                f"U+{ord(found.group()):04X}, which would make a command of its own "
                "(nothing was sent)")


class EngineTransport(Protocol):
    """What a protocol needs from the line transport; `EngineProcess` is the real one.

    Clients take lines through `listen`; `EngineProcess` also offers `read_line(s)` for
    callers that drive an engine by hand (tests, diagnostics)."""

    transcript: deque[TranscriptEntry]

    @property
    def pid(self) -> int | None:
        """The process id, once started."""

    @property
    def running(self) -> bool:
        """Whether the process was started and has not been reaped yet."""

    @property
    def stderr_read(self) -> int:
        """Bytes read from the engine's standard error so far."""

    async def stderr_since(self, mark: int, settle: float = 1.0) -> str:
        """The standard error written since `stderr_read` was `mark` (bounded)."""

    async def start(self) -> None:
        """Spawn the process."""

    def note(self, text: str) -> None:
        """Add a host-side note to the transcript."""

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Hand every chunk's complete lines to `on_lines`; `on_end` gets the end of output."""

    def write_nowait(self, lines: Sequence[str]) -> float:
        """Write lines without waiting for the pipe to drain; the monotonic time."""

    async def write_lines(self, lines: Sequence[str]) -> float:
        """Write lines and drain; the monotonic time after it."""

    def send_signal(self, sig: int) -> None:
        """Send a signal to the engine process itself."""

    async def stop(
        self,
        quit_command: str | None = "quit",
        *,
        quit_timeout: float = 5.0,
        terminate_timeout: float = 2.0,
        use_sigterm: bool = True,
    ) -> int | None:
        """Quit politely, then signal the process group; the exit code."""

    async def kill(self) -> int | None:
        """SIGKILL the process group at once; the exit code."""


def clip_entry(text: str, limit: int = ENTRY_LIMIT, length: int | None = None, *,
               unit: str = "characters") -> str:
    """`text` cut to `limit` characters, noting the full length (`length` if given, in `unit`)."""
    if len(text) <= limit and length is None:
        return text
    full = len(text) if length is None else length
    return f"{text[:limit]} [... {full} {unit} in all]"
