"""What cutechess-cli 1.5.1 prints and writes as a run goes, from the runner's events.

Lines on stdout, character for character as cutechess-cli's `EngineMatch` and `Tournament`
print them: `Started game N of M (A vs B)`, `Finished game N (A vs B): 1-0 {White mates}`,
`Score of A vs B: W - L - D  [0.500] N` after every game of a two-player run, the ratings
(per-colour lines, `Elo difference`, `SPRT:`; a ranking table for more players) every
`-ratinginterval` games and at the end, the outcome counts every `-outcomeinterval` games and
at the end, `Terminating process of engine X(N)` when an engine crashes or stalls, and
`Finished match`. Warnings go to stderr as `Warning: ...`. The PGN file gets each game as soon
as every game numbered before it is written (cutechess's order), flushed and synced; the EPD
file each game's final position. The players' tallies and the ratings and outcome blocks
are `standings.CuteStandings`; this output decides what is printed and written when.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from runner.clock import TimeControl
from runner.dropin.cutechess.pgn import cutechess_pgn
from runner.dropin.cutechess.results import (
    NAMED_FORMATS,
    CuteResult,
    Kind,
    cute_result,
)
from runner.dropin.cutechess.settings import CutechessSettings
from runner.dropin.cutechess.standings import CuteStandings
from runner.dropin.keptfiles import OutputFileError, append_whole, repair_games, repair_lines
from runner.game.record import GameRecord, GameSpec
from runner.game.termination import GameTermination
from runner.rules import Result
from runner.tournament.events import (
    EngineNotStarted,
    GameFinished,
    GameStarted,
    Notice,
    RunOutcome,
)

__all__ = ["NAMED_FORMATS", "CutechessOutput"]

_FALSE_CLAIM_MARK = "makes a false claim: "
"""In the runner's reason for a false claim, what precedes the claim (``0-1 {Black mates}``)."""


@dataclass
class _Thread:
    """A game thread of cutechess's game manager: the two engines it keeps between games."""

    pair: frozenset[str]
    ids: dict[str, int]
    busy: bool = True


@dataclass
class _Running:
    """A game started and not finished yet."""

    event: GameStarted
    started_at: datetime


class CutechessOutput:
    """cutechess-cli's lines, PGN and EPD for one run (the `PeerOutput` of `runner-cutechess`)."""

    def __init__(self, stream: TextIO, settings: CutechessSettings,
                 errors: TextIO | None = None) -> None:
        self._out = stream
        self._err = errors
        self.settings = settings
        """What the command line asked for."""
        self._standings = CuteStandings(settings)
        """The players' tallies and the ratings and outcome blocks."""
        self._running: dict[int, _Running] = {}
        self._finished_count = 0
        self._pgn_waiting: dict[int, str | None] = {}
        self._pgn_written: set[int] = set()
        self._pgn_next = 1
        self._threads: list[_Thread] = []
        self._engine_count = 0
        self._stopping = False
        self._ended = False
        self._opened: set[str] = set()
        self._file_error = False
        """A file could not be written: the run ended (exit status 1)."""
        self.stop_run = False
        """Set when the run must end here (the driver's `STOP_RUN`): a file that cannot be
        written."""

    # -- PeerOutput ---------------------------------------------------------------------

    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count the games an earlier run stored, silently: the tallies and the next game
        numbers continue from them; the PGN and EPD files are first made to hold them
        (`runner.dropin.keptfiles`: a run killed between storing a game and writing it)."""
        settings = self.settings
        texts, positions = [], []
        for event in games:
            number = event.job.index + 1
            end = self._end_of(event)
            self._finished_count += 1
            self._standings.score(event.job.white, event.job.black, end)
            self._pgn_written.add(number)
            if event.record is not None:
                texts.append(cutechess_pgn(event.record, end, event=settings.event,
                                           site=settings.site, round_=event.job.round,
                                           variant=settings.variant, mode=settings.pgn_mode))
                if event.record.final_fen:
                    positions.append(event.record.final_fen + "\n")
        try:
            if settings.pgn_out:
                repair_games(settings.pgn_out, texts)
            if settings.epd_out:
                repair_lines(settings.epd_out, positions)
        except OutputFileError as exc:
            self._file_failed(exc)
        self._advance_pgn()

    def game_started(self, event: GameStarted) -> None:
        """`Started game N of M (White vs Black)`."""
        if self._ended:
            return
        number = event.job.index + 1
        self._running[number] = _Running(event, datetime.now(UTC))
        self._standings.player(event.job.white)
        self._standings.player(event.job.black)
        self._engines_for(event.job.white, event.job.black)
        total = self.settings.final_game_count
        self._line(f"Started game {number} of {'?' if total is None else max(total, number)} "
                   f"({event.job.white} vs {event.job.black})")

    def game_finished(self, event: GameFinished) -> None:
        """`Finished game N (White vs Black): R {reason}`, the score line, the PGN and EPD
        records, and the ratings or outcomes when their interval is reached."""
        if self._ended:
            return
        number = event.job.index + 1
        running = self._running.pop(number, None)
        if event.replay:
            # A runner-side failure: the game is played again under the same number.
            self._release(event.job.white, event.job.black, None)
            return
        record = event.record
        if record is None:
            record = self._bare_record(event, running)
        self._finish(number, event.job.white, event.job.black, event.job.round,
                     self._end_of(event), record)

    def notice(self, event: Notice) -> None:
        """The runner's own notices: cutechess-cli prints nothing of the kind, but for an
        engine that does not start its warning, and the match ends there, as cutechess's."""
        if isinstance(event, EngineNotStarted) and not self.stop_run:
            self._warn(f"Cannot start engine {event.engine}:\nCannot execute command: "
                       f"{' '.join(event.command)}")
            self._stopping = True
            self.stop_run = True

    def run_ended(self, outcome: RunOutcome, *, interrupted: bool) -> None:
        """The games a stop cut short as `* {No result}`, then the final ratings, outcomes
        and `Finished match`."""
        if self._ended:
            return
        for number in sorted(self._running):
            running = self._running.pop(number)
            job = running.event.job
            record = GameRecord(white=job.white, black=job.black, spec=_spec_of(running),
                                moves=(), result=Result.UNFINISHED, termination=GameTermination.ERROR,
                                reason="", started_at=running.started_at,
                                ended_at=datetime.now(UTC), final_fen="")
            self._stopping = True
            self._finish(number, job.white, job.black, job.round, CuteResult(Kind.NO_RESULT, None),
                         record)
        if not self._ended:
            self._final(outcome.error if not interrupted else None)

    def exit_code(self, outcome: RunOutcome) -> int:
        """0: cutechess-cli ends a match it started with status 0, stopped or not; 1 when the
        runner could not write a file (the run stopped there)."""
        return 1 if self._file_error else 0

    # -- one game -----------------------------------------------------------------------

    def _end_of(self, event: GameFinished) -> CuteResult:
        reason = event.record.reason if event.record is not None else event.reason
        return cute_result(event.result, event.termination, reason)

    def _finish(self, number: int, white: str, black: str, round_: int, end: CuteResult,
                record: GameRecord) -> None:
        settings = self.settings
        self._finished_count += 1
        self._standings.score(white, black, end)
        if settings.epd_out and record.final_fen:
            self._append(settings.epd_out, record.final_fen + "\n", "EPD")
        self._write_pgn(number, record, end, round_)
        if self._file_error:
            return  # not on disk: no line says it is (the next run writes it)
        if end.detail == "Invalid result claim" and end.loser is not None:
            claim = record.reason.partition(_FALSE_CLAIM_MARK)[2]
            if claim:
                name = white if end.loser == "White" else black
                self._warn(f"{name} forfeits by invalid result claim: {claim}")
        crashed = end.kind in (Kind.DISCONNECTION, Kind.STALLED_CONNECTION)
        loser = white if end.winner == "Black" else black if end.winner == "White" else None
        self._release(white, black, loser if crashed else None)
        if crashed and not settings.recover and not self._stopping:
            # cutechess stops the tournament at the first crash without -recover; with no
            # other game running it ends at once, before this game's own lines.
            self._stopping = True
            if not self._running:
                self._final(None)
        self._line(f"Finished game {number} ({white} vs {black}): {end.verbose}")
        score = self._standings.score_line()
        if score is not None:
            self._line(score)
        if settings.rating_interval and self._finished_count % settings.rating_interval == 0:
            self._line(self._standings.ratings())
        if settings.outcome_interval and self._finished_count % settings.outcome_interval == 0:
            self._line(self._standings.outcomes())
        if self._stopping and not self._running and not self._ended:
            self._final(None)

    def _bare_record(self, event: GameFinished, running: _Running | None) -> GameRecord:
        """A record for an event that carries none (moves unknown)."""
        job = event.job
        now = datetime.now(UTC)
        return GameRecord(white=job.white, black=job.black, spec=_spec_of(running), moves=(),
                          result=event.result, termination=event.termination,
                          reason=event.reason, started_at=running.started_at if running else now,
                          ended_at=now, final_fen="")

    # -- engines (for `Terminating process of engine X(N)`) --------------------------------

    def _engines_for(self, white: str, black: str) -> None:
        """Give the game's engines cutechess's instance numbers: a free game thread of the
        same two players keeps its engines (a crashed one is started anew), else a new
        thread starts both, White first."""
        pair = frozenset((white, black))
        thread = next((t for t in self._threads if not t.busy and t.pair == pair), None)
        if thread is None:
            thread = _Thread(pair, {})
            self._threads.append(thread)
        thread.busy = True
        for name in (white, black):
            if name not in thread.ids:
                thread.ids[name] = self._engine_count
                self._engine_count += 1

    def _release(self, white: str, black: str, crashed: str | None) -> None:
        pair = frozenset((white, black))
        thread = next((t for t in self._threads if t.busy and t.pair == pair), None)
        if thread is None:
            return
        if crashed is not None and crashed in thread.ids:
            self._line(f"Terminating process of engine {crashed}({thread.ids.pop(crashed)})")
        thread.busy = False

    # -- the ratings and outcome blocks -----------------------------------------------------

    def _final(self, error: str | None) -> None:
        """The end of the match: ratings and outcomes unless just printed, `Finished match`."""
        settings = self.settings
        if not settings.rating_interval or self._finished_count % settings.rating_interval:
            self._line(self._standings.ratings())
        if not settings.outcome_interval or self._finished_count % settings.outcome_interval:
            self._line(self._standings.outcomes())
        if error:
            self._warn(error)
        self._line("Finished match")
        self._ended = True

    # -- files and streams --------------------------------------------------------------

    def _write_pgn(self, number: int, record: GameRecord, end: CuteResult, round_: int) -> None:
        settings = self.settings
        if not settings.pgn_out:
            return
        omit = settings.pgn_finished_only and (
            end.kind is Kind.NO_RESULT
            or (self._stopping and end.kind in (Kind.DISCONNECTION, Kind.STALLED_CONNECTION)))
        self._pgn_waiting[number] = None if omit else cutechess_pgn(
            record, end, event=settings.event, site=settings.site, round_=round_,
            variant=settings.variant, mode=settings.pgn_mode)
        self._advance_pgn()

    def _advance_pgn(self) -> None:
        """Write the games that are next in number order (cutechess keeps the file in order)."""
        pgn_out = self.settings.pgn_out
        texts = []
        while True:
            if self._pgn_next in self._pgn_written:
                self._pgn_next += 1
            elif self._pgn_next in self._pgn_waiting:
                text = self._pgn_waiting.pop(self._pgn_next)
                if text is None:
                    self._warn(f"Omitted incomplete game {self._pgn_next}")
                else:
                    texts.append(text)
                self._pgn_written.add(self._pgn_next)
                self._pgn_next += 1
            else:
                break
        if texts and pgn_out:
            self._append(pgn_out, "".join(texts), "PGN")

    def _append(self, path: str, text: str, kind: str) -> None:
        """Append whole and sync: a framework may kill the process right after the game. A
        write that fails (a full disk) is cut back and ends the run with one line."""
        if self._file_error:
            return
        if path in self._opened and not os.path.exists(path):
            # cutechess keeps the file open and reopens it when someone removed it.
            self._warn(f"{kind} file {path} does not exist. Reopening...")
        self._opened.add(path)
        try:
            handle = open(path, "ab", buffering=0)  # noqa: SIM115 - closed below
        except OSError:
            self._warn(f"Could not open {kind} file {path}")
            return
        with handle:
            try:
                append_whole(handle, text.encode(), path, "a game")
            except OutputFileError as exc:
                self._file_failed(exc)

    def _file_failed(self, exc: OutputFileError) -> None:
        """A file that cannot be written ends the run: one line saying which and why."""
        stream = self._err if self._err is not None else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"runner-cutechess: {exc} (the games are stored; running the same "
                         "command again writes them)\n")
            stream.flush()
        self._file_error = True
        self._stopping = True
        self.stop_run = True

    def _line(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a reader that went away
            self._out.write(text + "\n")
            self._out.flush()

    def _warn(self, text: str) -> None:
        stream = self._err if self._err is not None else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"Warning: {text}\n")
            stream.flush()


_UNKNOWN_SPEC = GameSpec(white_tc=TimeControl(), black_tc=TimeControl())
"""What a game is taken to have been when its start event carried no description (no clock
known): its PGN says no time control."""


def _spec_of(running: _Running | None) -> GameSpec:
    """The description a running game's start event carried, else `_UNKNOWN_SPEC`."""
    spec = None if running is None else running.event.spec
    return _UNKNOWN_SPEC if spec is None else spec
