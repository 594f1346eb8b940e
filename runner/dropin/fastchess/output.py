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
(`numbers`).
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TextIO

from runner.dropin.fastchess.files import OutputFile, probe_engine, startup_cause
from runner.dropin.fastchess.log import FastchessLog
from runner.dropin.fastchess.numbers import (
    EloFigures,
    FcSprt,
    FcStats,
    elo_figures,
    elo_score,
    fixed,
    time_label,
    total_games,
)
from runner.dropin.fastchess.pgn import EngineId, epd_line, fastchess_reason, game_pgn
from runner.dropin.fastchess.pvcheck import pv_warnings
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.dropin.keptfiles import OutputFileError, repair_games, repair_lines
from runner.dropin.uptime import process_started
from runner.game.record import GameRecord, GameTermination
from runner.rules import Result
from runner.tournament.events import EngineNotStarted

if TYPE_CHECKING:
    from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome

__all__ = ["FastchessOutput", "time_label", "total_games"]

_RULE = "--------------------------------------------------"
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
        self._probe = probe
        self._engines = {engine.name: engine for engine in settings.engines}
        self._order = [engine.name for engine in settings.engines]
        self._total = total_games(settings)
        penta = settings.report_penta and settings.games == 2 \
            and settings.output_format == "fastchess"
        if settings.sprt is not None and settings.sprt.model == "bayesian":
            penta = False
        self._penta = penta
        self._sprt = None if settings.sprt is None else FcSprt(
            settings.sprt.elo0, settings.sprt.elo1, settings.sprt.alpha, settings.sprt.beta,
            settings.sprt.model)
        self._interval = settings.ratinginterval if settings.ratinginterval > 0 else 2**31 - 1
        self._score_interval = settings.scoreinterval if settings.scoreinterval > 0 else 2**31 - 1
        self._results: dict[tuple[str, str], FcStats] = {}
        self._pairs: dict[int, FcStats] = {}
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
        self._pgn: OutputFile | None = None
        self._epd: OutputFile | None = None
        self._log: FastchessLog | None = None
        self._known: dict[str, tuple[EngineId, dict[str, str]]] = {}
        self._restarted: set[str] = set()
        # Ask the engines now, before any game runs: later, a slow engine's answer would hold
        # up the event loop that referees the games in progress.
        # All at once: each is an engine's start-up, counted in the run's total time.
        wanted = [engine for engine in settings.engines if self._needs_probe(engine)]
        if wanted:
            with ThreadPoolExecutor(min(8, len(wanted))) as pool:
                for engine, known in zip(wanted, pool.map(probe, wanted), strict=True):
                    self._known[engine.name] = known

    # ------------------------------------------------------------------ the contract
    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count an earlier run's stored games as fastchess counts a ``-config`` resume's."""
        done = [g for g in games if not g.replay and g.result in _SCORED]
        self._initial = len(done)
        self._repair(done)
        self._begin()
        for event in done:
            self._score(event.job.index, event.job.white, event.job.black, event.result)
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
        first, second = self._first_second(job.white, job.black)
        self._score(job.index, job.white, job.black, event.result)
        pair = job.index // max(1, self._settings.games)
        last = self._count + 1 == self._total
        if self._settings.output_format == "cutechess":
            if (self._count + 1) % self._score_interval == 0 or last:
                self._line(self._score_line(first, second))
        loser = job.black if event.result == Result.WHITE_WINS else job.white
        # With -recover fastchess replaces an engine that crashed or stalled by a new one,
        # not yet started, before it prints: the header knows none of its options then.
        self._restarted = {loser} if broken and event.result != Result.DRAW else set()
        index = pair + 1 if self._penta else self._count + 1
        if (index % self._interval == 0 and pair not in self._pairs) or last:
            self._interval_block(first, second)
        self._sprt_check(first, second)
        self._restarted = set()
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
        for path, append, flag, crc in ((settings.pgn_file, settings.pgn_append, "-pgnout",
                                         settings.crc32_pgn),
                                        (settings.epd_file, settings.epd_append, "-epdout", False)):
            if not path:
                continue
            if not append and self._initial:
                self._print(f"Resuming from {self._initial} games, ignoring {flag} append=false.")
                append = True
            try:
                opened = OutputFile(path, append, crc)
            except OutputFileError as exc:
                self._file_failed(exc)
                return
            if flag == "-pgnout":
                self._pgn = opened
            else:
                self._epd = opened

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
        for handle in (self._pgn, self._epd):
            if handle is not None:
                handle.close()
        self._pgn = self._epd = None
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
            if self._pgn is not None:
                crc = self._pgn.write(self._pgn_text(record, round_number), "a game")
                if crc is not None:
                    self._print(f"File {self._pgn.path} has CRC32: {crc:#x}")
            if self._epd is not None:
                self._epd.write(epd_line(record), "a game's position")
        except OutputFileError as exc:
            self._file_failed(exc)
            return False
        return True

    def _pgn_text(self, record: GameRecord, round_number: int) -> str:
        ids = {name: self._known_engine(name)[0] for name in (record.white, record.black)}
        return game_pgn(record, round_number, self._settings, self._engines, ids)

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
            if settings.pgn_file:
                repair_games(settings.pgn_file,
                             [self._pgn_text(record, number) for record, number in kept])
            if settings.epd_file:
                repair_lines(settings.epd_file, [epd_line(record) for record, _ in kept])
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

    def _needs_probe(self, engine: EngineSummary) -> bool:
        """Whether the PGN's engine tags or the header's threads/hash need the engine's word."""
        settings = self._settings
        if settings.pgn_file and not settings.pgn_min:
            return True
        given = {key for key, _value in engine.options}
        return (engine.threads is None and "Threads" not in given) or \
            (engine.hash is None and "Hash" not in given)

    def _known_engine(self, name: str) -> tuple[EngineId, dict[str, str]]:
        known = self._known.get(name)
        if known is None:
            engine = self._engines.get(name)
            known = self._probe(engine) if engine is not None else (EngineId(), {})
            self._known[name] = known
        return known

    def _first_second(self, white: str, black: str) -> tuple[str, str]:
        """The pairing's engines in command-line order (fastchess's player1, player2)."""
        order = self._order
        if white in order and black in order and order.index(black) < order.index(white):
            return black, white
        if white in order and black in order:
            return white, black
        return tuple(sorted((white, black)))  # type: ignore[return-value]

    def _score(self, index: int, white: str, black: str, result: Result) -> None:
        """fastchess's scoreboard: games per (White, Black), pairs counted once complete."""
        game = FcStats(wins=int(result == Result.WHITE_WINS),
                       losses=int(result == Result.BLACK_WINS),
                       draws=int(result == Result.DRAW))
        if not self._penta:
            self._results.setdefault((white, black), FcStats()).__iadd__(game)
            return
        pair = index // max(1, self._settings.games)
        pending = self._pairs.pop(pair, None)
        if pending is None:
            self._pairs[pair] = game.inverted()
            return
        pending += game
        pending.penta_ww += pending.wins == 2
        pending.penta_wd += pending.wins == 1 and pending.draws == 1
        pending.penta_wl += pending.wins == 1 and pending.losses == 1
        pending.penta_dd += pending.draws == 2
        pending.penta_ld += pending.losses == 1 and pending.draws == 1
        pending.penta_ll += pending.losses == 2
        self._results.setdefault((white, black), FcStats()).__iadd__(pending)

    def _stats(self, first: str, second: str) -> FcStats:
        one = self._results.get((first, second), FcStats())
        two = self._results.get((second, first), FcStats())
        return one + two.inverted()

    def _all_stats(self, name: str) -> FcStats:
        total = FcStats()
        for (white, black), value in self._results.items():
            if white == name:
                total += value
            elif black == name:
                total += value.inverted()
        return total

    def _interval_block(self, first: str, second: str) -> None:
        stats = self._stats(first, second)
        if self._settings.output_format == "cutechess":
            lines = [self._cute_elo(stats) if len(self._order) <= 2 else self._cute_table()]
            if self._sprt is not None:
                lines.append(self._cute_sprt(stats))
            for line in lines:
                self._line(line)
            return
        body = self._elo_block(stats, first, second)
        if self._sprt is not None:
            llr = self._sprt.llr(stats, self._penta)
            body += (f"LLR: {fixed(llr)} ({fixed(self._sprt.fraction(llr) * 100.0, 1)}%) "
                     f"{self._sprt.bounds_text()} {self._sprt.elo_text()}\n")
        self._line(f"{_RULE}\n{body}{_RULE}")

    def _elo_block(self, stats: FcStats, first: str, second: str) -> str:
        if len(self._order) > 2:
            return self._rank_table()
        elo = elo_figures(stats, self._penta)
        a = self._engines.get(first, EngineSummary(first))
        b = self._engines.get(second, EngineSummary(second))
        tc_a, tc_b = time_label(a), time_label(b)
        threads_a, threads_b = self._option(a, "Threads", "t"), self._option(b, "Threads", "t")
        hash_a, hash_b = self._option(a, "Hash", "MB"), self._option(b, "Hash", "MB")
        book = self._settings.book_file.replace("\\", "/").rsplit("/", 1)[-1]
        lines = [
            f"Results of {first} vs {second} ({_both(tc_a, tc_b)}, {_both(threads_a, threads_b)}, "
            f"{_both(hash_a, hash_b)}{f', {book}' if book else ''}):",
            f"Elo: {elo.elo_text()}, nElo: {elo.nelo_text()}",
            f"LOS: {elo.los_text()}, DrawRatio: "
            f"{fixed(stats.draw_ratio_penta() if self._penta else stats.draw_ratio())} %"
            + (f", PairsRatio: {fixed(stats.pairs_ratio())}" if self._penta else ""),
            f"Games: {stats.games}, Wins: {stats.wins}, Losses: {stats.losses}, Draws: "
            f"{stats.draws}, Points: {stats.points:.1f} ({fixed(stats.points_ratio())} %)",
        ]
        if self._penta:
            lines.append(f"Ptnml(0-2): {stats.penta_text()}, WL/DD Ratio: "
                         f"{fixed(stats.wl_dd_ratio())}")
        return "\n".join(lines) + "\n"

    def _option(self, engine: EngineSummary, option: str, unit: str) -> str:
        """The engine's value of `option` as the header shows it, ``NULL`` when it has none."""
        if engine.name in self._restarted:
            return "NULL"
        given = engine.threads if option == "Threads" else engine.hash
        if given is not None:
            return f"{given}{unit}"
        for key, value in engine.options:
            if key == option:
                return f"{value}{unit}"
        default = self._known_engine(engine.name)[1].get(option)
        return "NULL" if default is None else f"{default}{unit}"

    def _ranked(self, penta: bool) -> tuple[list[tuple[str, FcStats]], dict[str, EloFigures], int]:
        """The engines in rank order with their statistics, their Elo figures, and the width
        of the name column (both rank tables)."""
        rows = [(name, self._all_stats(name)) for name in self._order]
        figures = {name: elo_figures(stats, penta) for name, stats in rows}
        # fastchess sorts by Elo (NaN last) with std::sort, an insertion sort at this size:
        # equal Elo keeps the command-line order.
        ordered: list[tuple[str, FcStats]] = []
        for row in rows:
            at = len(ordered)
            while at > 0 and _before(figures[row[0]].diff, figures[ordered[at - 1][0]].diff):
                at -= 1
            ordered.insert(at, row)
        return ordered, figures, max([25, *(len(name) for name in self._order)])

    def _rank_table(self) -> str:
        ordered, figures, width = self._ranked(self._penta)
        out = (f"{'Rank':<4} {'Name':<{width}} {'Elo':>10} {'+/-':>10} {'nElo':>10} {'+/-':>10} "
               f"{'Games':>10} {'Score':>10} {'Draw':>10} {'Ptnml(0-2)':>20}\n")
        for rank, (name, stats) in enumerate(ordered, start=1):
            elo = figures[name]
            draw = stats.draw_ratio_penta() if self._penta else stats.draw_ratio()
            out += (f"{rank:>4} {name:<{width}} {fixed(elo.diff):>10} {fixed(elo.error):>10} "
                    f"{fixed(elo.nelo_diff):>10} {fixed(elo.nelo_error):>10} {stats.games:>10} "
                    f"{fixed(stats.points_ratio(), 1):>9}% {fixed(draw, 1):>9}% "
                    f"{stats.penta_text() if self._penta else '':>20}\n")
        return out

    def _sprt_check(self, first: str, second: str) -> None:
        if self._sprt is None:
            return
        stats = self._stats(first, second)
        llr = self._sprt.llr(stats, self._penta)
        decision = self._sprt.decision(llr)
        if decision is None and self._count != self._total:
            return
        self._stop()
        if self._settings.output_format == "cutechess":
            self._line(self._score_line(first, second))
        self._interval_block(first, second)
        message = (f"SPRT ({self._sprt.elo_text()}) completed - "
                   f"{'H0' if decision == 'H0' else 'H1'} was accepted")
        self._line(message if self._settings.output_format == "fastchess"
                   else "Tournament finished")

    def _score_line(self, first: str, second: str) -> str:
        stats = self._stats(first, second)
        ratio = elo_score(stats)
        return (f"Score of {first} vs {second}: {stats.wins} - {stats.losses} - {stats.draws}  "
                f"[{fixed(ratio, 3)}] {stats.games}")

    def _cute_elo(self, stats: FcStats) -> str:
        elo = elo_figures(stats, False)
        return (f"Elo difference: {fixed(elo.diff)} +/- {fixed(elo.error)}, LOS: "
                f"{fixed(elo.los)} %, DrawRatio: {fixed(stats.draw_ratio())} %")

    def _cute_table(self) -> str:
        ordered, figures, width = self._ranked(False)
        out = (f"{'Rank':<4} {'Name':<{width}} {'Elo':>10} {'+/-':>10} {'nElo':>10} {'+/-':>10} "
               f"{'Games':>10} {'Score':>10} {'Draw':>10}")
        for rank, (name, stats) in enumerate(ordered, start=1):
            elo = figures[name]
            out += (f"\n{rank:>4} {name:<{width}} {fixed(elo.diff):>10} {fixed(elo.error):>10} "
                    f"{fixed(elo.nelo_diff):>10} {fixed(elo.nelo_error):>10} {stats.games:>10} "
                    f"{fixed(stats.points_ratio(), 1):>9}% {fixed(stats.draw_ratio(), 1):>9}%")
        return out

    def _cute_sprt(self, stats: FcStats) -> str:
        assert self._sprt is not None
        llr = self._sprt.llr(stats, False)
        lower, upper = self._sprt.lower, self._sprt.upper
        # this format's percentage and H0 test differ from the fastchess format's
        percent = llr / lower * 100 if llr < 0 else llr / upper * 100
        tail = " - H1 was accepted" if llr >= upper else " - H0 was accepted" \
            if llr < lower else ""
        return (f"SPRT: llr {fixed(llr)} ({fixed(percent, 1)}%), "
                f"lbound {fixed(self._sprt.lower)}, ubound {fixed(self._sprt.upper)}{tail}")


_SCORED = (Result.WHITE_WINS, Result.BLACK_WINS, Result.DRAW)
_CRASHES = (GameTermination.DISCONNECT, GameTermination.STALL)
_UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?")


def _both(a: str, b: str) -> str:
    return a if a == b else f"{a} - {b}"


def _before(a: float, b: float) -> bool:
    """fastchess's order of the rank table: higher Elo first, NaN after any number."""
    import math

    return (not math.isnan(a) and math.isnan(b)) or a > b
