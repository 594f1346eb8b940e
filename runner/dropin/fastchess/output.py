"""What fastchess 1.8.2 prints and writes as a run goes, from the runner's events.

Lines, character for character (``app/src/matchmaking/output/output_fastchess.hpp`` and the
tournament code that calls it): ``Started game N of M (A vs B)``, ``Finished game N (A vs B):
R {reason}``, the results block after every ``-ratinginterval`` completed pairs (games without
pentanomial reporting) and after the last game, ``LLR:`` with ``-sprt`` and the SPRT's end,
the ``Player:`` timeouts/crashes block, ``Tournament was interrupted...``, ``Finished match``
and ``Total Time: ...`` (from the process's start, as fastchess's). The PGN and EPD of
each game are written whole and synced to disk before its ``Finished game`` line (frameworks
kill the runner after a run), with the ``File F has CRC32: 0x...`` line after each write under
``-crc32 pgn=true``; a continued run first makes them hold every stored game
(`runner.dropin.keptfiles`), and a file that cannot be written ends the run with one line.
An engine that does not start ends it with fastchess's ``Fatal;`` line.

The counters follow fastchess: a game's number is its place in the schedule, a pair's
results count once both of its games are in, and the engine statistics are fastchess's own
(`numbers`). The output decides what is printed when; the scoreboard and its results blocks
are `standings.FcStandings`, the PGN/EPD files `files.GameFiles`.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from runner.dropin.fastchess.files import GameFiles, probe_engine, startup_cause
from runner.dropin.fastchess.log import FastchessLog
from runner.dropin.fastchess.numbers import time_label, total_games
from runner.dropin.fastchess.pgn import EngineId, fastchess_reason
from runner.dropin.fastchess.pvcheck import pv_warnings
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.dropin.fastchess.standings import FcStandings
from runner.dropin.keptfiles import OutputFileError
from runner.dropin.uptime import process_started
from runner.game.record import GameRecord, GameTermination
from runner.rules import Result
from runner.tournament.events import EngineNotStarted

if TYPE_CHECKING:
    from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome

__all__ = ["FastchessOutput", "time_label", "total_games"]

_SIGINT = 2


class FastchessOutput:
    """The `PeerOutput` of ``runner-fastchess``: fastchess's lines on `stream`, its PGN/EPD files."""

    def __init__(self, stream: TextIO, settings: FastchessSettings, *,
                 clock: Callable[[], float] = time.monotonic,
                 probe: Callable[[EngineSummary], tuple[EngineId, dict[str, str]]] = probe_engine,
                 errors: TextIO | None = None) -> None:
        self._out = stream
        self._err = errors
        self._settings = settings
        self._clock = clock
        # As fastchess's: from the process's start (the run's start-up included), not from
        # the moment the output is made.
        self._began = process_started() if clock is time.monotonic else clock()
        self._engines = {engine.name: engine for engine in settings.engines}
        self._total = total_games(settings)
        self._files = GameFiles(settings, probe)
        """The PGN and EPD files, and what the engines say of themselves for them."""
        self._standings = FcStandings(settings, lambda name: self._files.known_engine(name)[1])
        """The scoreboard and its results blocks."""
        self._interval = settings.ratinginterval if settings.ratinginterval > 0 else 2**31 - 1
        self._score_interval = settings.scoreinterval if settings.scoreinterval > 0 else 2**31 - 1
        self._count = 0
        self._initial = 0
        self._tracker: dict[str, list[int]] = {}
        self._stopped = False
        self.stop_run = False
        """Set when fastchess would stop the tournament here (the driver's `STOP_RUN`): a crash
        without -recover, the SPRT's end, a warning under -strict."""
        self._abnormal = False
        self._warned = False
        self._begun = False
        self._log: FastchessLog | None = None

    # ------------------------------------------------------------------ the contract
    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count an earlier run's stored games as fastchess counts a ``-config`` resume's."""
        done = [g for g in games if not g.replay and g.result in _SCORED]
        self._initial = len(done)
        self._repair(done)
        self._begin()
        for event in done:
            self._standings.score(event.job.index, event.job.white, event.job.black,
                                  event.result)
            self._count += 1

    def game_started(self, event: GameStarted) -> None:
        """``Started game N of M (White vs Black)``."""
        self._begin()
        if self._stopped:
            return
        job = event.job
        self._line(f"Started game {job.index + 1} of {self._total} ({job.white} vs {job.black})")

    def game_finished(self, event: GameFinished) -> None:
        """The game's PGN/EPD, its ``Finished game`` line and what the counts then call for."""
        self._begin()
        if self._stopped or event.replay or event.result not in _SCORED:
            return
        record = event.record
        job = event.job
        game_id = job.index + 1
        if record is not None:
            reason = fastchess_reason(record)
        else:
            reason = event.reason
        broken = event.termination in _CRASHES
        if record is not None:
            separator = " :: " if self._settings.test_env else "\n"
            for warning in pv_warnings(record, self._settings.check_mate_pvs, separator):
                self._print(warning, "warn")
        if self._stopped:  # -strict: fastchess stopped at the warning, the game unreported
            return
        if broken and not self._settings.recover:
            # fastchess stops the tournament at the first crash or stall without -recover:
            # the game is reported but neither written nor counted.
            self._print(f"Game {game_id} stalled / disconnected and no recover option set for "
                        "engine, stopping tournament.", "warn")
            self._finished_line(game_id, job.white, job.black, event.result, reason)
            self._stop()
            self._abnormal = True
            return
        if event.termination is GameTermination.ILLEGAL_MOVE:
            self._illegal_warning(event)
            if self._stopped:
                return
        if record is not None and not self._write_files(record, job.index // max(
                1, self._settings.games) + 1):
            return  # not on disk: no line says it is (the next run writes it)
        self._finished_line(game_id, job.white, job.black, event.result, reason)
        standings = self._standings
        first, second = standings.first_second(job.white, job.black)
        standings.score(job.index, job.white, job.black, event.result)
        pair = job.index // max(1, self._settings.games)
        last = self._count + 1 == self._total
        if self._settings.output_format == "cutechess":
            if (self._count + 1) % self._score_interval == 0 or last:
                self._line(standings.score_line(first, second))
        loser = job.black if event.result == Result.WHITE_WINS else job.white
        # With -recover fastchess replaces an engine that crashed or stalled by a new one,
        # not yet started, before it prints: the header knows none of its options then.
        standings.restarted = {loser} if broken and event.result != Result.DRAW else set()
        index = pair + 1 if standings.penta else self._count + 1
        if (index % self._interval == 0 and pair not in standings.pairs) or last:
            self._interval_block(first, second)
        self._sprt_check(first, second)
        standings.restarted = set()
        self._count += 1
        if self._log is not None:
            self._log.game(event, loser)
        if event.result == Result.DRAW:
            return
        if event.termination is GameTermination.TIME_FORFEIT:
            self._tracker.setdefault(loser, [0, 0])[0] += 1
        elif broken:
            self._tracker.setdefault(loser, [0, 0])[1] += 1

    def notice(self, event: Notice) -> None:
        """A runner notice: fastchess's own warnings (``Warning; ...``) and, for an engine that
        does not start, fastchess's ``Fatal;`` line (its game announced first, as fastchess
        announces a game before starting its engines); the run then ends, as fastchess's."""
        self._begin()
        if isinstance(event, EngineNotStarted):
            if self._stopped:
                return
            self._line(f"Started game {event.game + 1} of {self._total} ({event.white} vs "
                       f"{event.black})")
            cause = startup_cause(event, self._engines.get(event.engine))
            self._print(f'Fatal; {event.engine} engine startup failure: "{cause}"', "fatal")
            self._abnormal = True
            self._stop()
        elif event.text.startswith("Warning;"):
            self._warn(event.text)

    def run_ended(self, outcome: RunOutcome, *, interrupted: bool) -> None:
        """The closing lines: timeouts and crashes, the interruption, ``Finished match``."""
        self._begin()
        if outcome.signal is not None and outcome.signal != _SIGINT:
            # Only SIGINT is caught by fastchess; any other stop signal ends it silently.
            self._close()
            return
        if interrupted or outcome.error is not None:
            self._abnormal = True
        if self._settings.output_format == "fastchess" and self._tracker:
            self._print("")
            # fastchess keeps these in an unordered_map: the latest engine comes first.
            for name, (timeouts, crashes) in reversed(list(self._tracker.items())):
                self._print(f"Player: {name}")
                self._print(f"  Timeouts: {timeouts}")
                self._print(f"  Crashed: {crashes}")
            self._print("")
        if self._abnormal:
            self._print("Tournament was interrupted. To resume the tournament, run: "
                        f"{self._settings.program} -config file={self._settings.config_name}")
        self._print("Finished match")
        seconds = max(0, int(self._clock() - self._began))
        self._print(f"Total Time: {seconds // 3600:02}:{seconds % 3600 // 60:02}:"
                    f"{seconds % 60:02} (hours:minutes:seconds)\n")
        self._close()

    def exit_code(self, outcome: RunOutcome) -> int:
        """1 after an interruption, a crash without ``-recover`` or a ``-strict`` warning, else 0;
        a stop signal fastchess does not catch ends it by that signal (128 + N)."""
        if outcome.signal is not None and outcome.signal != _SIGINT:
            return 128 + outcome.signal
        if self._abnormal or outcome.error is not None or outcome.signal is not None:
            return 1
        return 0

    # ------------------------------------------------------------------ the parts
    def _begin(self) -> None:
        """What fastchess prints and opens before its first game."""
        if self._begun:
            return
        self._begun = True
        settings = self._settings
        for line in settings.startup_lines:
            self._line(line)
        if settings.log_file:
            self._log = FastchessLog(settings)
        if settings.book_file and settings.book_random:
            self._print("Indexing opening suite...")
        try:
            self._files.open(self._initial, self._print)
        except OutputFileError as exc:
            self._file_failed(exc)

    def _line(self, text: str) -> None:
        try:
            self._out.write(text + "\n")
            self._out.flush()
        except (OSError, ValueError):
            pass  # a framework that stopped reading our output must not stop the games

    def _print(self, text: str, level: str = "info") -> None:
        """A line fastchess prints through its logger: on stdout, and in ``-log``'s file at
        its level (the logger adds a line break to the printed one: a blank line follows)."""
        self._line(text)
        if self._log is not None:
            self._log.line(level, text + "\n")
        if level == "warn" and self._settings.strict:
            self._abnormal = True
            self._stop()

    def _stop(self) -> None:
        """fastchess's stop: nothing more of the run is reported, and the driver ends it."""
        self._stopped = True
        self.stop_run = True

    def _warn(self, text: str) -> None:
        if self._settings.test_env:
            text = " :: ".join(part for part in text.splitlines() if part)
        self._print(text, "warn")

    def _close(self) -> None:
        self._files.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _illegal_warning(self, event: GameFinished) -> None:
        """fastchess's warnings as it scores an illegal move (the move as the engine sent it)."""
        loser = event.job.black if event.result == Result.WHITE_WINS else event.job.white
        _head, sep, sent = event.reason.partition(": ")
        move = sent.strip() if sep and sent.strip() else "<none>"
        if move != "<none>" and not _UCI_MOVE.fullmatch(move):
            self._warn("Warning; Move does not match uci move format, lowercase and 4/5 chars. "
                       f"Move {move} played by {loser}")
        self._warn(f"Warning; Illegal move {move} played by {loser}")

    def _finished_line(self, game_id: int, white: str, black: str, result: Result,
                       reason: str) -> None:
        text = str(result) if result in _SCORED else "*"
        self._line(f"Finished game {game_id} ({white} vs {black}): {text} {{{reason}}}")

    def _write_files(self, record: GameRecord, round_number: int) -> bool:
        """The game's PGN and EPD, each whole on disk; False (the run stopped, one line said
        why) when a file cannot take it."""
        try:
            self._files.write(record, round_number, self._print)
        except OutputFileError as exc:
            self._file_failed(exc)
            return False
        return True

    def _repair(self, stored: Sequence[GameFinished]) -> None:
        """Before a continued run writes anything: its files made to hold the games the
        database holds (`runner.dropin.keptfiles`), as fastchess would have written them
        (a crash without -recover is never written)."""
        settings = self._settings
        per_pair = max(1, settings.games)
        kept = [(event.record, event.job.index // per_pair + 1) for event in stored
                if event.record is not None
                and (settings.recover or event.termination not in _CRASHES)]
        try:
            self._files.repair(kept)
        except OutputFileError as exc:
            self._file_failed(exc)

    def _file_failed(self, exc: OutputFileError) -> None:
        """A file that cannot be written ends the run: one line saying which and why."""
        stream = self._err if self._err is not None else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"runner-fastchess: {exc} (the games are stored; running the same "
                         "command again writes them)\n")
            stream.flush()
        self._abnormal = True
        self._stop()

    def _interval_block(self, first: str, second: str) -> None:
        for line in self._standings.interval_lines(first, second):
            self._line(line)

    def _sprt_check(self, first: str, second: str) -> None:
        sprt = self._standings.sprt
        if sprt is None:
            return
        stats = self._standings.stats(first, second)
        llr = sprt.llr(stats, self._standings.penta)
        decision = sprt.decision(llr)
        if decision is None and self._count != self._total:
            return
        self._stop()
        if self._settings.output_format == "cutechess":
            self._line(self._standings.score_line(first, second))
        self._interval_block(first, second)
        message = (f"SPRT ({sprt.elo_text()}) completed - "
                   f"{'H0' if decision == 'H0' else 'H1'} was accepted")
        self._line(message if self._settings.output_format == "fastchess"
                   else "Tournament finished")


_SCORED = (Result.WHITE_WINS, Result.BLACK_WINS, Result.DRAW)
_CRASHES = (GameTermination.DISCONNECT, GameTermination.STALL)
_UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?")
