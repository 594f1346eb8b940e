"""What fastchess 1.8.2 prints and writes as a run goes, from the runner's events.

Lines, character for character (``app/src/matchmaking/output/output_fastchess.hpp`` and the
tournament code that calls it): ``Started game N of M (A vs B)``, ``Finished game N (A vs B):
R {reason}``, the results block after every ``-ratinginterval`` completed pairs (games without
pentanomial reporting) and after the last game, ``LLR:`` with ``-sprt`` and the SPRT's end,
the ``Player:`` timeouts/crashes block, ``Tournament was interrupted...``, ``Finished match``
and ``Total Time: ...``. The PGN and EPD of each game are written, flushed and synced to
disk before its ``Finished game`` line (frameworks kill the runner after a run), with the
``File F has CRC32: 0x...`` line after each write under ``-crc32 pgn=true``.

The counters follow fastchess: a game's number is its place in the schedule, a pair's
results count once both of its games are in, and the engine statistics are fastchess's own
(`numbers`).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, BinaryIO, TextIO

from runner.dropin.fastchess.numbers import (
    EloFigures,
    FcSprt,
    FcStats,
    elo_figures,
    elo_score,
    fixed,
)
from runner.dropin.fastchess.pgn import EngineId, epd_line, fastchess_reason, game_pgn
from runner.dropin.fastchess.pvcheck import pv_warnings
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.game.record import GameRecord, GameTermination
from runner.rules import Result

if TYPE_CHECKING:
    from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome

__all__ = ["FastchessOutput", "probe_engine", "time_label", "total_games"]

_RULE = "--------------------------------------------------"
_SIGINT = 2


def total_games(settings: FastchessSettings) -> int:
    """The games the schedule holds (fastchess's ``Started game N of M``)."""
    players = max(2, len(settings.engines))
    if settings.tournament == "gauntlet":
        seeds = min(settings.seeds, players - 1)
        pairings = seeds * players - seeds * (seeds + 1) // 2
    else:
        pairings = players * (players - 1) // 2
    return pairings * settings.rounds * settings.games


def _short(value: float) -> str:
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def time_label(engine: EngineSummary) -> str:
    """The limit as the results header shows it (``10+0.1``, ``0.5/move``, ``7 plies``)."""
    if engine.tc_time_ms + engine.tc_increment_ms > 0:
        moves = f"{engine.tc_moves}/" if engine.tc_moves > 0 else ""
        increment = (f"+{engine.tc_increment_ms / 1000.0:.2g}"
                     if engine.tc_increment_ms > 0 else "")
        return f"{moves}{_short(engine.tc_time_ms / 1000.0)}{increment}"
    if engine.fixed_time_ms > 0:
        return f"{_short(engine.fixed_time_ms / 1000.0)}/move"
    if engine.plies > 0:
        return f"{engine.plies} plies"
    if engine.nodes > 0:
        return f"{engine.nodes} nodes"
    return ""


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


class _File:
    """One output file fastchess keeps open for the run: appended or truncated at the start,
    each write flushed and synced, with the running CRC32 of the whole file when asked."""

    def __init__(self, path: str, append: bool, crc: bool) -> None:
        self.path = path
        self._handle: BinaryIO = open(path, "ab" if append else "wb")  # noqa: SIM115 - kept open
        self._crc: int | None = None
        if crc:
            try:
                with open(path, "rb") as existing:
                    self._crc = zlib.crc32(existing.read())
            except OSError:
                self._crc = 0

    def write(self, text: str) -> int | None:
        """Append `text`, on disk before returning; the file's CRC32 after it when kept."""
        data = text.encode()
        self._handle.write(data)
        self._handle.flush()
        os.fsync(self._handle.fileno())
        if self._crc is None:
            return None
        self._crc = zlib.crc32(data, self._crc)
        return self._crc

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


class FastchessOutput:
    """The `PeerOutput` of ``runner-fastchess``: fastchess's lines on `stream`, its PGN/EPD files."""

    def __init__(self, stream: TextIO, settings: FastchessSettings, *,
                 clock: Callable[[], float] = time.monotonic,
                 probe: Callable[[EngineSummary], tuple[EngineId, dict[str, str]]] = probe_engine,
                 ) -> None:
        self._out = stream
        self._settings = settings
        self._clock = clock
        self._began = clock()
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
        self._pgn: _File | None = None
        self._epd: _File | None = None
        self._log: TextIO | None = None
        self._known: dict[str, tuple[EngineId, dict[str, str]]] = {}
        self._restarted: set[str] = set()
        # Ask the engines now, before any game runs: later, a slow engine's answer would hold
        # up the event loop that referees the games in progress.
        for engine in settings.engines:
            if self._needs_probe(engine):
                self._known_engine(engine.name)

    # ------------------------------------------------------------------ the contract
    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count an earlier run's stored games as fastchess counts a ``-config`` resume's."""
        done = [g for g in games if not g.replay and g.result in _SCORED]
        self._initial = len(done)
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
        broken = event.termination in (GameTermination.DISCONNECT, GameTermination.STALL)
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
        if record is not None:
            self._write_files(record, job.index // max(1, self._settings.games) + 1)
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
        self._log_game(event, loser)
        if event.result == Result.DRAW:
            return
        if event.termination is GameTermination.TIME_FORFEIT:
            self._tracker.setdefault(loser, [0, 0])[0] += 1
        elif broken:
            self._tracker.setdefault(loser, [0, 0])[1] += 1

    def notice(self, event: Notice) -> None:
        """A runner notice: only fastchess's own warnings (``Warning; ...``) are printed."""
        self._begin()
        if event.text.startswith("Warning;"):
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
            self._log = open(settings.log_file, "a" if settings.log_append else "w",  # noqa: SIM115
                             encoding="utf-8")
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
            opened = _File(path, append, crc)
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
        self._log_line(level, text + "\n")
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

    def _log_line(self, level: str, text: str, thread: bool = False) -> None:
        """One entry of ``-log``'s file in fastchess's form, when its level is kept."""
        if self._log is None or _LEVELS.index(level) < _LEVELS.index(self._settings.log_level):
            return
        ident = str(threading.get_ident()) if thread else ""
        self._log.write(f"[{_LABELS[level]:<6}] [{_precise():>15}] <{ident:>20}> fastchess --- "
                        f"{text}\n")
        self._log.flush()

    def _log_game(self, event: GameFinished, loser: str) -> None:
        """The warnings fastchess's game threads log (not print) for a game, and with
        ``engine=true`` the engines' lines of the game."""
        term = event.termination
        record = event.record
        if term is GameTermination.DISCONNECT:
            self._log_line("warn", f"Engine {loser} disconnects", thread=True)
        elif term is GameTermination.STALL:
            self._log_line("warn", f"Engine {loser} stalls", thread=True)
        elif term is GameTermination.TIME_FORFEIT and record is not None:
            reason = fastchess_reason(record)
            overrun = reason[reason.rfind("(") + 1:reason.rfind("ms overrun")]
            self._log_line("warn", f"Engine {loser} loses on time by {overrun}ms", thread=True)
        if term in (GameTermination.DISCONNECT, GameTermination.STALL):
            self._log_line("warn", f"Game {event.job.index + 1} between {event.job.white} and "
                           f"{event.job.black} stalled / disconnected", thread=True)
        if self._log is not None and self._settings.show_latency and record is not None:
            white_moves = (record.spec.start_fen or "w w").split()[1] == "w"
            for played in record.moves:
                name = record.white if white_moves else record.black
                white_moves = not white_moves
                if played.book or played.latency is None or played.time is None:
                    continue
                elapsed = int(played.time * 1000)
                reported = elapsed - round(played.latency * 1000)
                self._log_line("info", f"Engine {name} latency: {elapsed - reported}ms (elapsed: "
                               f"{elapsed}, reported: {reported})", thread=True)
        if self._log is None or not self._settings.log_engine or record is None:
            return
        offset = time.time() - time.monotonic()
        ident = threading.get_ident()
        lines = [(entry.time, name, entry) for name, entries in
                 ((record.white, record.protocol_lines[0]), (record.black, record.protocol_lines[1]))
                 for entry in entries if entry.direction in "<>"]
        for moment, name, entry in sorted(lines, key=lambda item: item[0]):
            stamp = _precise(moment + offset)
            arrow = "<---" if entry.direction == ">" else "--->"
            self._log.write(f"[{'Engine':<6}] [{stamp:>15}] <{ident:>20}> {name} {arrow} "
                            f"{entry.text}\n")
        self._log.flush()

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

    def _write_files(self, record: GameRecord, round_number: int) -> None:
        if self._pgn is not None:
            ids = {name: self._known_engine(name)[0] for name in (record.white, record.black)}
            crc = self._pgn.write(game_pgn(record, round_number, self._settings, self._engines,
                                           ids))
            if crc is not None:
                self._print(f"File {self._pgn.path} has CRC32: {crc:#x}")
        if self._epd is not None:
            self._epd.write(epd_line(record))

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
_UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][nbrq]?")
_LEVELS = ("trace", "info", "warn", "err", "fatal")
_LABELS = {"trace": "TRACE", "info": "INFO", "warn": "WARN", "err": "ERR", "fatal": "FATAL"}


def _precise(moment: float | None = None) -> str:
    """fastchess's log time stamp: local ``HH:MM:SS.micros``."""
    now = time.time() if moment is None else moment
    return f"{time.strftime('%H:%M:%S', time.localtime(now))}.{int(now % 1 * 1_000_000):06}"


def _both(a: str, b: str) -> str:
    return a if a == b else f"{a} - {b}"


def _before(a: float, b: float) -> bool:
    """fastchess's order of the rank table: higher Elo first, NaN after any number."""
    import math

    return (not math.isnan(a) and math.isnan(b)) or a > b
