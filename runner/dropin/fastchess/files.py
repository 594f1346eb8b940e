"""fastchess's output files and what the runner asks engines for them.

`OutputFile` is one file fastchess keeps open for the run (``-pgnout``, ``-epdout``): appended
to or emptied at the start, each game written whole and synced before its ``Finished game``
line, with the running CRC32 of the whole file under ``-crc32 pgn=true``. `probe_engine` asks a
UCI engine its ``id`` lines and option defaults, which fastchess knows from its own start of
the engine (the PGN's engine tags, the results header's threads and hash).
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import threading
import zlib
from typing import BinaryIO

from runner.dropin.fastchess.pgn import EngineId
from runner.dropin.fastchess.settings import EngineSummary
from runner.dropin.keptfiles import OutputFileError, append_whole
from runner.tournament.events import EngineNotStarted

__all__ = ["OutputFile", "probe_engine", "startup_cause"]


def probe_engine(engine: EngineSummary, timeout: float = 10.0) -> tuple[EngineId, dict[str, str]]:
    """Ask a UCI engine its ``id`` lines and option defaults (``uci`` ... ``uciok``), as fastchess
    knows them from its own start of the engine: for the PGN's engine tags and the results
    header's threads and hash. Nothing known when the engine cannot be asked."""
    if not engine.command:
        return EngineId(), {}
    try:
        proc = subprocess.Popen(list(engine.command), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                cwd=engine.directory or None)
    except OSError:
        return EngineId(), {}
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.strip() == "uciok":
                return

    reader = threading.Thread(target=read, daemon=True)
    try:
        assert proc.stdin is not None
        proc.stdin.write("uci\n")
        proc.stdin.flush()
        reader.start()
        # quit only once the answer is complete: a wrapper may drop what its engine still
        # had to say when told to quit at once
        reader.join(timeout)
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(timeout=2)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    name = author = ""
    defaults: dict[str, str] = {}
    for line in list(lines):
        if line.startswith("id name "):
            name = line[8:].strip()
        elif line.startswith("id author "):
            author = line[10:].strip()
        elif line.startswith("option name "):
            found = re.match(r"option name (.+?) type \S+(?: default (\S*))?", line)
            if found and found.group(2) is not None:
                defaults[found.group(1)] = found.group(2)
    return EngineId(name, author), defaults


class OutputFile:
    """One output file fastchess keeps open for the run: appended or emptied at the start,
    each write whole and on disk before it returns, with the file's CRC32 when asked."""

    def __init__(self, path: str, append: bool, crc: bool) -> None:
        self.path = path
        try:
            self._handle: BinaryIO = open(path, "ab" if append else "wb",  # noqa: SIM115 - kept open
                                          buffering=0)
        except OSError as exc:
            raise OutputFileError(f"cannot open {path}: {exc.strerror or exc}") from None
        self._crc: int | None = None
        if crc:
            try:
                with open(path, "rb") as existing:
                    self._crc = zlib.crc32(existing.read())
            except OSError:
                self._crc = 0

    def write(self, text: str, what: str) -> int | None:
        """Append `text` (`what` it is, for an error), on disk before returning; the file's
        CRC32 after it when kept. OutputFileError, the file as it was, when it fails."""
        data = text.encode()
        append_whole(self._handle, data, self.path, what)
        if self._crc is None:
            return None
        self._crc = zlib.crc32(data, self._crc)
        return self._crc

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


def startup_cause(event: EngineNotStarted, engine: EngineSummary | None) -> str:
    """Why an engine did not start, in fastchess's words: the system's error of starting its
    program (``posix_spawn`` of an empty path says ENOENT, where a search of PATH for it finds
    directories), else the runner's reason."""
    if engine is not None and not "".join(engine.command):
        return f"posix_spawn failed: {os.strerror(errno.ENOENT)}"
    if event.os_error is not None:
        return f"posix_spawn failed: {event.os_error}"
    return event.text.partition("failed to start: ")[2] or event.text
