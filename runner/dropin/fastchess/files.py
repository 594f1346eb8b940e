"""fastchess's output files and what the runner asks engines for them.

`GameFiles` keeps a run's two files: the PGN and the EPD line of each game, and a continued
run's files made to hold the stored games first. `OutputFile` is one file fastchess keeps
open for the run (``-pgnout``, ``-epdout``): appended to or emptied at the start, each
game written whole and synced before its ``Finished game`` line, with the running CRC32 of
the whole file under ``-crc32 pgn=true``. `probe_engine` asks a UCI engine its ``id`` lines
and option defaults, which fastchess knows from its own start of the engine (the PGN's
engine tags, the results header's threads and hash).
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import threading
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

from runner.dropin.fastchess.pgn import EngineId, epd_line, game_pgn
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.dropin.keptfiles import OutputFileError, append_whole, repair_games, repair_lines
from runner.game.record import GameRecord
from runner.tournament.events import EngineNotStarted

__all__ = ["GameFiles", "OutputFile", "probe_engine", "startup_cause"]

Probe = Callable[[EngineSummary], tuple[EngineId, dict[str, str]]]
"""How an engine is asked its ``id`` lines and option defaults (`probe_engine`)."""


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


class GameFiles:
    """A run's ``-pgnout`` and ``-epdout`` files, and what the engines say of themselves for
    the PGN's tags and the results header."""

    def __init__(self, settings: FastchessSettings, probe: Probe) -> None:
        self._settings = settings
        self._engines = {engine.name: engine for engine in settings.engines}
        self._probe = probe
        self._known: dict[str, tuple[EngineId, dict[str, str]]] = {}
        self.pgn: OutputFile | None = None
        self.epd: OutputFile | None = None
        # Ask the engines now, before any game runs: later, a slow engine's answer would hold
        # up the event loop that referees the games in progress.
        # All at once: each is an engine's start-up, counted in the run's total time.
        wanted = [engine for engine in settings.engines if self._needs_probe(engine)]
        if wanted:
            with ThreadPoolExecutor(min(8, len(wanted))) as pool:
                for engine, known in zip(wanted, pool.map(probe, wanted), strict=True):
                    self._known[engine.name] = known

    def open(self, resumed_games: int, say: Callable[[str], None]) -> None:
        """Open the files fastchess opens before its first game (appending to them when
        `resumed_games` are stored already, as `say` tells); OutputFileError when one cannot
        be opened (the ones opened before it stay open)."""
        settings = self._settings
        for path, append, flag, crc in ((settings.pgn_file, settings.pgn_append, "-pgnout",
                                         settings.crc32_pgn),
                                        (settings.epd_file, settings.epd_append, "-epdout", False)):
            if not path:
                continue
            if not append and resumed_games:
                say(f"Resuming from {resumed_games} games, ignoring {flag} append=false.")
                append = True
            opened = OutputFile(path, append, crc)
            if flag == "-pgnout":
                self.pgn = opened
            else:
                self.epd = opened

    def write(self, record: GameRecord, round_number: int, say: Callable[[str], None]) -> None:
        """The game's PGN and EPD, each whole on disk, with `say` given the PGN file's CRC32
        line when asked for; OutputFileError when a file cannot take it."""
        if self.pgn is not None:
            crc = self.pgn.write(self._pgn_text(record, round_number), "a game")
            if crc is not None:
                say(f"File {self.pgn.path} has CRC32: {crc:#x}")
        if self.epd is not None:
            self.epd.write(epd_line(record), "a game's position")

    def repair(self, kept: Sequence[tuple[GameRecord, int]]) -> None:
        """Before a continued run writes anything: its files made to hold the `kept` games
        (with their round numbers) as fastchess would have written them
        (`runner.dropin.keptfiles`); OutputFileError when they cannot be."""
        settings = self._settings
        if settings.pgn_file:
            repair_games(settings.pgn_file,
                         [self._pgn_text(record, number) for record, number in kept])
        if settings.epd_file:
            repair_lines(settings.epd_file, [epd_line(record) for record, _ in kept])

    def close(self) -> None:
        """Close both files (once; closing again does nothing)."""
        for handle in (self.pgn, self.epd):
            if handle is not None:
                handle.close()
        self.pgn = self.epd = None

    def known_engine(self, name: str) -> tuple[EngineId, dict[str, str]]:
        """What an engine says of itself: its ``id`` lines and option defaults."""
        known = self._known.get(name)
        if known is None:
            engine = self._engines.get(name)
            known = self._probe(engine) if engine is not None else (EngineId(), {})
            self._known[name] = known
        return known

    def _pgn_text(self, record: GameRecord, round_number: int) -> str:
        ids = {name: self.known_engine(name)[0] for name in (record.white, record.black)}
        return game_pgn(record, round_number, self._settings, self._engines, ids)

    def _needs_probe(self, engine: EngineSummary) -> bool:
        """Whether the PGN's engine tags or the header's threads/hash need the engine's word."""
        settings = self._settings
        if settings.pgn_file and not settings.pgn_min:
            return True
        given = {key for key, _value in engine.options}
        return (engine.threads is None and "Threads" not in given) or \
            (engine.hash is None and "Hash" not in given)
