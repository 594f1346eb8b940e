"""fastchess's ``-log`` file: its entries in fastchess's form, at the levels kept.

What fastchess's logger writes besides what it prints (the warnings its game threads only log,
engine latencies with ``-show-latency``, every engine line with ``-log engine=true``), each
entry ``[LEVEL ] [HH:MM:SS.micros] <thread> fastchess --- text``.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, TextIO

from runner.dropin.fastchess.pgn import fastchess_reason
from runner.dropin.fastchess.settings import FastchessSettings
from runner.game.record import GameTermination

if TYPE_CHECKING:
    from runner.tournament.events import GameFinished

__all__ = ["FastchessLog"]

_LEVELS = ("trace", "info", "warn", "err", "fatal")
_LABELS = {"trace": "TRACE", "info": "INFO", "warn": "WARN", "err": "ERR", "fatal": "FATAL"}


class FastchessLog:
    """The ``-log file=`` of one run, opened (appended or emptied) as it is made."""

    def __init__(self, settings: FastchessSettings) -> None:
        self._settings = settings
        self._file: TextIO = open(settings.log_file or "", "a" if settings.log_append  # noqa: SIM115
                                  else "w", encoding="utf-8")

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def line(self, level: str, text: str, thread: bool = False) -> None:
        """One entry of ``-log``'s file in fastchess's form, when its level is kept."""
        if _LEVELS.index(level) < _LEVELS.index(self._settings.log_level):
            return
        ident = str(threading.get_ident()) if thread else ""
        self._file.write(f"[{_LABELS[level]:<6}] [{_precise():>15}] <{ident:>20}> fastchess --- "
                         f"{text}\n")
        self._file.flush()

    def game(self, event: GameFinished, loser: str) -> None:
        """The warnings fastchess's game threads log (not print) for a game, and with
        ``engine=true`` the engines' lines of the game."""
        term = event.termination
        record = event.record
        if term is GameTermination.DISCONNECT:
            self.line("warn", f"Engine {loser} disconnects", thread=True)
        elif term is GameTermination.STALL:
            self.line("warn", f"Engine {loser} stalls", thread=True)
        elif term is GameTermination.TIME_FORFEIT and record is not None:
            reason = fastchess_reason(record)
            overrun = reason[reason.rfind("(") + 1:reason.rfind("ms overrun")]
            self.line("warn", f"Engine {loser} loses on time by {overrun}ms", thread=True)
        if term in (GameTermination.DISCONNECT, GameTermination.STALL):
            self.line("warn", f"Game {event.job.index + 1} between {event.job.white} and "
                           f"{event.job.black} stalled / disconnected", thread=True)
        if self._settings.show_latency and record is not None:
            white_moves = (record.spec.start_fen or "w w").split()[1] == "w"
            for played in record.moves:
                name = record.white if white_moves else record.black
                white_moves = not white_moves
                if played.book or played.latency is None or played.time is None:
                    continue
                elapsed = int(played.time * 1000)
                reported = elapsed - round(played.latency * 1000)
                self.line("info", f"Engine {name} latency: {elapsed - reported}ms (elapsed: "
                               f"{elapsed}, reported: {reported})", thread=True)
        if not self._settings.log_engine or record is None:
            return
        offset = time.time() - time.monotonic()
        ident = threading.get_ident()
        lines = [(entry.time, name, entry) for name, entries in
                 ((record.white, record.protocol_lines[0]), (record.black, record.protocol_lines[1]))
                 for entry in entries if entry.direction in "<>"]
        for moment, name, entry in sorted(lines, key=lambda item: item[0]):
            stamp = _precise(moment + offset)
            arrow = "<---" if entry.direction == ">" else "--->"
            self._file.write(f"[{'Engine':<6}] [{stamp:>15}] <{ident:>20}> {name} {arrow} "
                            f"{entry.text}\n")
        self._file.flush()


def _precise(moment: float | None = None) -> str:
    """fastchess's log time stamp: local ``HH:MM:SS.micros``."""
    now = time.time() if moment is None else moment
    return f"{time.strftime('%H:%M:%S', time.localtime(now))}.{int(now % 1 * 1_000_000):06}"
