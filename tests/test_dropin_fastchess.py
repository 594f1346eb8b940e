"""runner-fastchess's output (issue 28): fastchess's lines, PGN and EPD, character for character.

Two parts:

- the lines and files `FastchessOutput` makes from constructed events (every reason string,
  the results block after completed pairs only, the rank table, the SPRT's end, the closing
  lines and exit codes, the PGN's tags, comments and wrapping, CRC32), and fastchess's
  statistics against the values the real fastchess 1.8.2 printed for the same counts;
- the matrix: the same argv given to the real fastchess (../shared/peers/fastchess, skipped
  when absent) and to ``runner fastchess``, stockfish at a fixed depth on one thread: the
  same games (moves, results), the same stdout lines (times, CRC values of time-stamped
  files and the program's name masked), the same PGN tags and comment keys.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import zlib
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from conftest import REPO, require_binary, same_pgn_date

from runner.clock import TimeControl
from runner.dropin.fastchess.numbers import FcSprt, FcStats, elo_figures, fixed
from runner.dropin.fastchess.output import FastchessOutput, time_label, total_games
from runner.dropin.fastchess.pgn import EngineId, EngineSummary, epd_line, game_pgn
from runner.dropin.fastchess.settings import FastchessSettings, SprtSettings
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.rules import STARTING_FEN, Board, Result
from runner.store import TournamentStatus
from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome
from runner.tournament.pairing import ScheduledGame
from runner.tournament.scoreboard import Scoreboard
from runner.types import MoveRecord

FASTCHESS = REPO.parent / "shared" / "peers" / "fastchess"
BOOKS = REPO.parent / "shared" / "data" / "books"
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


# ----------------------------------------------------------------------------- constructed events
def _settings(**changes: object) -> FastchessSettings:
    engines = (EngineSummary("a", plies=4, threads="1", hash="16"),
               EngineSummary("b", plies=4, threads="1", hash="16"))
    base: dict[str, object] = {"engines": engines, "rounds": 3, "book_file": "/x/book.epd"}
    base.update(changes)
    return FastchessSettings(**base)  # type: ignore[arg-type]


def _job(index: int, white: str = "a", black: str = "b") -> ScheduledGame:
    return ScheduledGame(index=index, round=index // 2 + 1, pair=index // 2,
                         game_in_pair=index % 2, white=white, black=black, encounter=0)


def _record(moves: list[str], result: Result, term: GameTermination, reason: str = "",
            white: str = "a", black: str = "b", fen: str | None = None,
            book: int = 0) -> GameRecord:
    board = Board(fen or STARTING_FEN)
    played = []
    for index, uci in enumerate(moves):
        move = board.parse_uci(uci)
        played.append(MoveRecord(san=board.san(move), uci=uci, book=index < book,
                                 score_cp=None if index < book else 25 - index, depth=4,
                                 time=0.0125, nodes=100 + index, seldepth=6, nps=1000,
                                 hashfull=3, tbhits=0, pv=(uci,), time_left=None,
                                 latency=0.002))
        board.push(move)
    tc = TimeControl(depth=4)
    return GameRecord(white=white, black=black, spec=GameSpec(white_tc=tc, black_tc=tc,
                                                              start_fen=fen),
                      moves=tuple(played), result=result, termination=term, reason=reason,
                      started_at=T0, ended_at=T0, final_fen=board.fen())


def _finished(index: int, record: GameRecord) -> GameFinished:
    job = _job(index, record.white, record.black)
    return GameFinished(job, record.result, record.termination, record.reason,
                        record.plies, 0.0, record=record)


def _outcome(signal_number: int | None = None) -> RunOutcome:
    return RunOutcome(tournament_id=1, status=TournamentStatus.FINISHED, total_games=6, done=6,
                      played_now=6, scoreboard=Scoreboard(["a", "b"]), signal=signal_number)


def _no_probe(_engine: EngineSummary) -> tuple[EngineId, dict[str, str]]:
    return EngineId(), {}


def _output(settings: FastchessSettings) -> tuple[FastchessOutput, StringIO]:
    stream = StringIO()
    return FastchessOutput(stream, settings, clock=lambda: 0.0, probe=_no_probe), stream


MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]  # fool's mate: Black mates


@pytest.mark.parametrize(("moves", "result", "term", "reason", "expected"), [
    (MATE, Result.BLACK_WINS, GameTermination.CHECKMATE, "", "0-1 {Black mates}"),
    (["e2e4"], Result.DRAW, GameTermination.STALEMATE, "", "1/2-1/2 {Draw by stalemate}"),
    (["e2e4"], Result.DRAW, GameTermination.THREEFOLD_REPETITION, "",
     "1/2-1/2 {Draw by 3-fold repetition}"),
    (["e2e4"], Result.DRAW, GameTermination.FIFTY_MOVES, "", "1/2-1/2 {Draw by fifty moves rule}"),
    (["e2e4"], Result.DRAW, GameTermination.INSUFFICIENT_MATERIAL, "",
     "1/2-1/2 {Draw by insufficient mating material}"),
    (["e2e4"], Result.WHITE_WINS, GameTermination.ADJUDICATION, "",
     "1-0 {White wins by adjudication}"),
    (["e2e4"], Result.DRAW, GameTermination.ADJUDICATION, "", "1/2-1/2 {Draw by adjudication}"),
    (["e2e4"], Result.DRAW, GameTermination.MAX_MOVES, "", "1/2-1/2 {Draw by adjudication}"),
    (["e2e4"], Result.BLACK_WINS, GameTermination.TABLEBASE, "",
     "0-1 {Black wins by adjudication: SyzygyTB}"),
    (["e2e4"], Result.DRAW, GameTermination.TABLEBASE, "", "1/2-1/2 {Draw by adjudication: SyzygyTB}"),
    (["e2e4"], Result.WHITE_WINS, GameTermination.ILLEGAL_MOVE,
     "Black makes an illegal move: e7e2", "1-0 {Black makes an illegal move}"),
    (["e2e4"], Result.WHITE_WINS, GameTermination.STALL, "", "1-0 {Black's connection stalls}"),
    (["e2e4"], Result.WHITE_WINS, GameTermination.DISCONNECT, "", "1-0 {Black disconnects}"),
])
def test_finished_line_has_fastchess_reason(moves: list[str], result: Result,
                                            term: GameTermination, reason: str,
                                            expected: str) -> None:
    output, stream = _output(_settings(recover=True))
    output.game_started(GameStarted(_job(0), 0))
    output.game_finished(_finished(0, _record(moves, result, term, reason)))
    lines = [line for line in stream.getvalue().splitlines() if not line.startswith("Warning;")]
    assert lines[:2] == [
        "Started game 1 of 6 (a vs b)", f"Finished game 1 (a vs b): {expected}"]


def test_illegal_move_warns_first() -> None:
    output, stream = _output(_settings())
    output.game_finished(_finished(0, _record(["e2e4"], Result.WHITE_WINS,
                                              GameTermination.ILLEGAL_MOVE,
                                              "Black makes an illegal move: Ke2")))
    assert stream.getvalue().splitlines()[:3] == [
        "Warning; Move does not match uci move format, lowercase and 4/5 chars. Move Ke2 played "
        "by b",
        "Warning; Illegal move Ke2 played by b",
        "Finished game 1 (a vs b): 1-0 {Black makes an illegal move}"]


def test_time_loss_reason_gives_the_overrun_in_milliseconds() -> None:
    tc = TimeControl.parse("1+0")
    record = _record(["e2e4", "e7e5"], Result.BLACK_WINS, GameTermination.TIME_FORFEIT,
                     "White loses on time (0.995 s used)")
    # White spent 0.0125 s on e2e4 with a one-second clock: 0.9875 s were left.
    record = GameRecord(**{**record.__dict__, "spec": GameSpec(white_tc=tc, black_tc=tc)})
    output, stream = _output(_settings(recover=True))
    output.game_finished(_finished(0, record))
    assert stream.getvalue().splitlines()[0] == \
        "Finished game 1 (a vs b): 0-1 {White loses on time (7ms overrun)}"


def test_results_block_counts_completed_pairs_only() -> None:
    """The block comes after the pair that completes the interval, and only completed pairs
    count: game 4 ends before game 3 (concurrency), so the first block has one pair."""
    output, stream = _output(_settings(ratinginterval=2))
    draw = _record(["e2e4"], Result.DRAW, GameTermination.ADJUDICATION)
    win = _record(MATE, Result.BLACK_WINS, GameTermination.CHECKMATE)
    output.game_finished(_finished(1, GameRecord(**{**draw.__dict__, "white": "b",
                                                   "black": "a"})))
    assert "Results of" not in stream.getvalue()
    output.game_finished(_finished(3, GameRecord(**{**win.__dict__, "white": "b", "black": "a"})))
    output.game_finished(_finished(2, win))
    lines = stream.getvalue().splitlines()
    block = lines[lines.index("--------------------------------------------------"):]
    assert block[:7] == [
        "--------------------------------------------------",
        "Results of a vs b (4 plies, 1t, 16MB, book.epd):",
        "Elo: -0.00 +/- 0.00, nElo: -nan +/- -nan",
        "LOS: -nan %, DrawRatio: 100.00 %, PairsRatio: -nan",
        "Games: 2, Wins: 1, Losses: 1, Draws: 0, Points: 1.0 (50.00 %)",
        "Ptnml(0-2): [0, 0, 1, 0, 0], WL/DD Ratio: inf",
        "--------------------------------------------------",
    ]
    output.game_finished(_finished(0, draw))
    assert stream.getvalue().count("Results of") == 1  # pair 1 completes no interval


def test_last_game_prints_the_block_and_the_closing_lines() -> None:
    output, stream = _output(_settings(rounds=1, ratinginterval=10))
    output.game_finished(_finished(0, _record(["e2e4"], Result.DRAW, GameTermination.ADJUDICATION)))
    output.game_finished(_finished(1, _record(["e2e4"], Result.DRAW, GameTermination.ADJUDICATION,
                                              white="b", black="a")))
    output.run_ended(_outcome(), interrupted=False)
    assert stream.getvalue().splitlines()[-5:] == [
        "Ptnml(0-2): [0, 0, 1, 0, 0], WL/DD Ratio: 0.00",
        "--------------------------------------------------",
        "Finished match",
        "Total Time: 00:00:00 (hours:minutes:seconds)",
        "",
    ]
    assert output.exit_code(_outcome()) == 0


def test_crash_without_recover_stops_and_exits_1() -> None:
    output, stream = _output(_settings(program="fastchess"))
    output.game_finished(_finished(0, _record(["e2e4"], Result.BLACK_WINS,
                                              GameTermination.DISCONNECT)))
    output.game_started(GameStarted(_job(1), 0))
    output.run_ended(_outcome(), interrupted=False)
    assert stream.getvalue().splitlines()[:4] == [
        "Game 1 stalled / disconnected and no recover option set for engine, stopping tournament.",
        "Finished game 1 (a vs b): 0-1 {White disconnects}",
        "Tournament was interrupted. To resume the tournament, run: fastchess -config "
        "file=config.json",
        "Finished match",
    ]
    assert output.exit_code(_outcome()) == 1
    assert output.stop_run  # the driver ends the run there, as fastchess does


def test_timeouts_and_crashes_are_listed_at_the_end() -> None:
    output, stream = _output(_settings(recover=True, rounds=1))
    output.game_finished(_finished(0, _record(["e2e4"], Result.BLACK_WINS,
                                              GameTermination.DISCONNECT)))
    output.game_finished(_finished(1, _record(["e2e4"], Result.WHITE_WINS,
                                              GameTermination.STALL, white="b", black="a")))
    output.run_ended(_outcome(), interrupted=False)
    text = stream.getvalue()
    assert "\n\nPlayer: a\n  Timeouts: 0\n  Crashed: 2\n\nFinished match\n" in text


def test_log_file_keeps_warnings_in_fastchess_form(tmp_path: Path) -> None:
    log = tmp_path / "fc.log"
    output, _stream = _output(_settings(recover=True, log_file=str(log)))
    output.game_finished(_finished(0, _record(["e2e4"], Result.BLACK_WINS,
                                              GameTermination.DISCONNECT)))
    output.notice(Notice("Warning; b doesn't have option Foo"))
    output.run_ended(_outcome(), interrupted=False)
    entries = log.read_text().splitlines()
    pattern = r"\[WARN  \] \[\d\d:\d\d:\d\d\.\d{6}\] <[ \d]{20}> fastchess --- "
    assert re.fullmatch(pattern + "Engine a disconnects", entries[0])
    assert re.fullmatch(pattern + "Game 1 between a and b stalled / disconnected", entries[1])
    assert re.fullmatch(pattern + "Warning; b doesn't have option Foo", entries[2])
    assert entries[3] == ""  # a printed line ends in a line break of its own
    assert not any("Finished match" in entry for entry in entries)  # info: below warn


def test_sigint_says_interrupted_and_sigterm_says_nothing() -> None:
    output, stream = _output(_settings())
    output.run_ended(_outcome(signal.SIGINT), interrupted=True)
    assert "Tournament was interrupted. To resume" in stream.getvalue()
    assert output.exit_code(_outcome(signal.SIGINT)) == 1
    output, stream = _output(_settings())
    output.run_ended(_outcome(signal.SIGTERM), interrupted=True)
    assert stream.getvalue() == ""
    assert output.exit_code(_outcome(signal.SIGTERM)) == 128 + signal.SIGTERM


def test_notices_only_fastchess_warnings_and_strict() -> None:
    output, stream = _output(_settings(strict=True))
    output.notice(Notice("engine b restarted"))
    output.notice(Notice("Warning; b doesn't have option Foo"))
    assert stream.getvalue() == "Warning; b doesn't have option Foo\n"
    assert output.exit_code(_outcome()) == 1
    assert output.stop_run
    output.game_finished(_finished(0, _record(["e2e4"], Result.DRAW,
                                              GameTermination.ADJUDICATION)))
    assert stream.getvalue() == "Warning; b doesn't have option Foo\n"


def test_sprt_end_repeats_the_block_and_stops() -> None:
    output, stream = _output(_settings(sprt=SprtSettings(0.0, 5.0, 0.3, 0.3), rounds=100,
                                       ratinginterval=100))
    for index in range(0, 120):
        win_for_a = index % 2 == 0
        output.game_finished(_finished(index, _record(
            MATE if not win_for_a else ["e2e4"], Result.BLACK_WINS if not win_for_a
            else Result.WHITE_WINS, GameTermination.CHECKMATE if not win_for_a
            else GameTermination.ADJUDICATION, white="a" if win_for_a else "b",
            black="b" if win_for_a else "a")))
    lines = stream.getvalue().splitlines()
    end = [line for line in lines if line.startswith("SPRT (")]
    assert end == ["SPRT ([0.00, 5.00]) completed - H1 was accepted"]
    assert lines[-1] == end[0] and lines[-2] == "-" * 50
    assert lines[-3].startswith("LLR: ") and "(-0.85, 0.85) [0.00, 5.00]" in lines[-3]
    count = sum(line.startswith("Finished game") for line in lines)
    output.game_finished(_finished(count, _record(["e2e4"], Result.DRAW,
                                                  GameTermination.ADJUDICATION)))
    assert stream.getvalue().splitlines() == lines  # nothing after the end
    assert output.stop_run


def test_rank_table_for_three_engines() -> None:
    engines = tuple(EngineSummary(n, plies=3, threads="1", hash="16") for n in "abc")
    output, stream = _output(_settings(engines=engines, rounds=2, ratinginterval=1))
    output.game_finished(_finished(0, _record(["e2e4"], Result.WHITE_WINS,
                                              GameTermination.ADJUDICATION)))
    output.game_finished(_finished(1, _record(["e2e4"], Result.WHITE_WINS,
                                              GameTermination.ADJUDICATION, "", "b", "a")))
    lines = stream.getvalue().splitlines()
    assert lines[3:7] == [  # as fastchess 1.8.2 printed it after the same first pair
        "Rank Name                             Elo        +/-       nElo        +/-      Games"
        "      Score       Draw           Ptnml(0-2)",
        "   1 a                              -0.00       0.00       -nan       -nan          2"
        "      50.0%     100.0%      [0, 0, 1, 0, 0]",
        "   2 b                              -0.00       0.00       -nan       -nan          2"
        "      50.0%     100.0%      [0, 0, 1, 0, 0]",
        "   3 c                               -nan       -nan       -nan       -nan          0"
        "      -nan%      -nan%      [0, 0, 0, 0, 0]",
    ]


@pytest.mark.parametrize(("stats", "penta", "elo", "los"), [
    # figures fastchess 1.8.2 printed for these counts (runs in this file's matrix)
    (FcStats(1, 1, 0, penta_wl=1), True, "Elo: -0.00 +/- 0.00, nElo: -nan +/- -nan",
     "LOS: -nan %"),
    (FcStats(0, 2, 0), False, "Elo: -inf +/- -nan, nElo: -inf +/- -nan", "LOS: 0.00 %"),
    (FcStats(1, 2, 0), False, "Elo: -120.41 +/- -nan, nElo: -122.84 +/- 393.15", "LOS: 27.01 %"),
    (FcStats(2, 0, 0, penta_ww=1), True, "Elo: inf +/- -nan, nElo: inf +/- -nan",
     "LOS: 100.00 %"),
    (FcStats(0, 6, 0, penta_ll=3), True, "Elo: -inf +/- -nan, nElo: -inf +/- -nan",
     "LOS: 0.00 %"),
])
def test_elo_figures_match_fastchess(stats: FcStats, penta: bool, elo: str, los: str) -> None:
    figures = elo_figures(stats, penta)
    assert f"Elo: {figures.elo_text()}, nElo: {figures.nelo_text()}" == elo
    assert f"LOS: {figures.los_text()}" == los


@pytest.mark.parametrize(("pairs", "sprt", "expected"), [
    (1, FcSprt(-1, 40, 0.2, 0.2), "LLR: -0.02 (-1.6%) (-1.39, 1.39) [-1.00, 40.00]"),
    (4, FcSprt(-1, 40, 0.2, 0.2), "LLR: -0.10 (-7.2%) (-1.39, 1.39) [-1.00, 40.00]"),
    (52, FcSprt(-1, 40, 0.2, 0.2), "LLR: -1.35 (-97.6%) (-1.39, 1.39) [-1.00, 40.00]"),
    (54, FcSprt(-1, 40, 0.2, 0.2), "LLR: -1.40 (-101.3%) (-1.39, 1.39) [-1.00, 40.00]"),
    (1, FcSprt(0, 5, 0.05, 0.05), "LLR: -0.00 (-0.0%) (-2.94, 2.94) [0.00, 5.00]"),
])
def test_llr_matches_fastchess(pairs: int, sprt: FcSprt, expected: str) -> None:
    llr = sprt.llr(FcStats(penta_wl=pairs), True)
    assert (f"LLR: {fixed(llr)} ({fixed(sprt.fraction(llr) * 100, 1)}%) {sprt.bounds_text()} "
            f"{sprt.elo_text()}") == expected


def test_labels_and_totals() -> None:
    assert time_label(EngineSummary("x", tc_time_ms=10000, tc_increment_ms=100)) == "10+0.1"
    assert time_label(EngineSummary("x", tc_moves=40, tc_time_ms=60000)) == "40/60"
    assert time_label(EngineSummary("x", fixed_time_ms=500)) == "0.5/move"
    assert time_label(EngineSummary("x", nodes=5000)) == "5000 nodes"
    three = tuple(EngineSummary(n) for n in "abc")
    assert total_games(_settings(engines=three, rounds=2)) == 12
    assert total_games(_settings(engines=three, rounds=2, tournament="gauntlet")) == 8


def test_pgn_as_fastchess_writes_it(tmp_path: Path) -> None:
    fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    record = _record(["g1f3", "b8c6", "f1b5", "a7a6"], Result.WHITE_WINS,
                     GameTermination.ILLEGAL_MOVE, "Black makes an illegal move: a6a5",
                     fen=fen, book=1)
    settings = _settings(pgn_nodes=True, pgn_seldepth=True, pgn_pv=True, pgn_latency=True)
    text = game_pgn(record, 3, settings, {e.name: e for e in settings.engines},
                    {"a": EngineId("Engine A", "Someone")})
    tags = [line for line in text.splitlines() if line.startswith("[")]
    assert [t.split(" ", 1)[0][1:] for t in tags] == [
        "Event", "Site", "Date", "Round", "White", "Black", "Result", "EngineWhiteName",
        "EngineWhiteAuthor", "SetUp", "FEN", "GameDuration", "GameStartTime", "GameEndTime",
        "PlyCount", "Termination", "TimeControl", "ECO", "Opening"]
    assert '[Round "3"]' in tags and '[PlyCount "5"]' in tags and '[TimeControl "-"]' in tags
    assert '[Termination "illegal move"]' in tags
    body = text.split("\n\n")[1]
    assert body.startswith("2. Nf3 {book} Nc6 {+0.24/4 0.012s, latency=0.002s, n=101, sd=6, "
                           'pv="b8c6"}')
    assert body.rstrip().endswith('a6 {+0.22/4 0.012s, latency=0.002s, n=103, sd=6, pv="a7a6", '
                                  "Black makes an illegal move: a6a5}\n1-0")
    # a move with its comment is never split; a line ends before column 81 unless one such
    # token alone is longer
    assert [len(line) for line in body.splitlines()] == [74, 63, 94, 3]
    assert text.endswith("1-0\n\n")
    minimal = game_pgn(record, 3, _settings(pgn_min=True), {}, {})
    assert minimal.split("\n\n")[1] == "2. Nf3 Nc6 3. Bb5 a6 1-0"
    assert epd_line(record) == f"{' '.join(record.final_fen.split()[:4])} hmvc 0; fmvn 4;\n"


def test_pgn_names_the_opening_as_fastchess_does() -> None:
    """ECO and Opening from the last position the table knows (the start counts too)."""
    fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4"
    record = _record(["b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5", "a4b3", "d7d6", "c2c3",
                      "e8g8", "h2h3", "a6a5"], Result.DRAW, GameTermination.ADJUDICATION,
                     fen=fen)
    text = game_pgn(record, 1, _settings(), {}, {})
    assert "[ECO \"C92\"]\n[Opening \"Ruy Lopez: Closed\"]\n\n" in text  # after h3, not a5
    assert "[ECO " not in game_pgn(record, 1, _settings(pgn_min=True), {}, {})


def test_pgn_file_written_synced_with_crc_line(tmp_path: Path) -> None:
    pgn = tmp_path / "out.pgn"
    pgn.write_text("old\n")
    epd = tmp_path / "out.epd"
    output, stream = _output(_settings(pgn_file=str(pgn), crc32_pgn=True, epd_file=str(epd),
                                       epd_append=False))
    output.game_finished(_finished(0, _record(MATE, Result.BLACK_WINS, GameTermination.CHECKMATE)))
    data = pgn.read_bytes()
    assert data.startswith(b"old\n[Event \"Fastchess Tournament\"]")
    assert stream.getvalue().splitlines()[0] == \
        f"File {pgn} has CRC32: {zlib.crc32(data):#x}"
    assert epd.read_text().endswith("hmvc 1; fmvn 3;\n")


# ----------------------------------------------------------------------------- the matrix
def _require_peer() -> None:
    if not os.access(FASTCHESS, os.X_OK):
        pytest.skip(f"fastchess is absent ({FASTCHESS}; see ../shared/peers/README.md)")
    if not BOOKS.is_dir():
        pytest.skip(f"{BOOKS} is absent (expected ../shared/data beside the repo)")


def _env() -> dict[str, str]:
    path = f"{os.environ.get('PATH', '')}:/usr/games"
    return {**os.environ, "PATH": path, "PYTHONPATH": str(REPO)}


def _start(tool: str, argv: list[str], where: Path) -> subprocess.Popen[bytes]:
    where.mkdir(parents=True, exist_ok=True)
    program = [str(FASTCHESS)] if tool == "fastchess" else [sys.executable, "-m", "runner",
                                                              "fastchess"]
    env = {**_env(), "RUNNER_DB": str(where / "runner.db")}
    with open(where / "stdout", "wb") as out:
        return subprocess.Popen([*program, *argv], cwd=where, env=env, stdout=out,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def _play(argv: list[str], tmp: Path) -> dict[str, tuple[int, Path]]:
    """Both tools on `argv`, side by side; played again (once) when fastchess gave up on an
    engine that did not answer ``uci`` within its 10 s (a loaded machine: its fault, not a
    difference)."""
    for attempt in range(2):
        where = tmp / f"try{attempt}"
        procs = {tool: _start(tool, argv, where / tool) for tool in ("fastchess", "ours")}
        done = {}
        for tool, proc in procs.items():
            _out, err = proc.communicate(timeout=600)
            done[tool] = (proc.returncode, where / tool)
            assert b"Traceback" not in err, err.decode()[-3000:]
        if "engine startup failure" not in (where / "fastchess" / "stdout").read_text():
            break
    return done


_TIMING = re.compile(r"-?\d+\.\d{3}s|nps=\d+|(?:nps|time) \d+")


def _lines(where: Path) -> list[str]:
    """stdout with what varies from run to run masked: times, CRC values (the PGN holds
    times), the program named in the resume hint; fastchess's timing-dependent ``not
    responsive`` warning of an engine that just crashed is left out."""
    out = []
    for line in (where / "stdout").read_text().splitlines():
        if re.fullmatch(r"Warning; Engine \S+ is not responsive", line):
            continue
        line = re.sub(r"^Total Time: .*", "Total Time: T", line)
        line = re.sub(r"has CRC32: 0x[0-9a-f]+$", "has CRC32: X", line)
        line = re.sub(r"run: \S+ -config", "run: P -config", line)
        if line.startswith(("Info; ", "Infos; ")):
            line = re.sub(r"(nps|time) \d+", r"\1 N", line)
        out.append(line)
    return out


def _games(path: Path) -> list[tuple[list[tuple[str, str]], str]]:
    """Each game's tags (time stamps left out) and its movetext with times masked and the
    line breaks (which move with the width of the times) made spaces."""
    if not path.exists():
        return []
    games = []
    for chunk in path.read_text().split("\n\n[")[0:]:
        if not chunk.strip():
            continue
        head, _sep, body = chunk.strip().partition("\n\n")
        tags = [tuple(t.strip("[]").split(" ", 1)) for t in head.splitlines()]
        kept = [(k, v) for k, v in tags
                if k not in ("GameDuration", "GameStartTime", "GameEndTime")]
        games.append((kept, " ".join(_TIMING.sub("T", body).split())))  # type: ignore[misc]
    return games


def _compare(done: dict[str, tuple[int, Path]], files: tuple[str, ...] = ("out.pgn",)) -> None:
    (peer_rc, peer), (our_rc, ours) = done["fastchess"], done["ours"]
    assert _lines(ours) == _lines(peer)
    assert our_rc == peer_rc
    for name in files:
        theirs, mine = peer / name, ours / name
        if name.endswith(".pgn"):
            a, b = _games(mine), _games(theirs)
            assert len(a) == len(b) and a, name
            for (tags_a, moves_a), (tags_b, moves_b) in zip(a, b, strict=True):
                assert moves_a == moves_b
                dates = dict(tags_a).get("Date"), dict(tags_b).get("Date")
                if same_pgn_date(*dates):  # a run across midnight may date them a day apart
                    tags_a = [(k, dates[1] if k == "Date" else v) for k, v in tags_a]
                assert tags_a == tags_b
        else:
            assert mine.read_text() == theirs.read_text(), name


def _engines(*names: str, extra: tuple[str, ...] = ()) -> list[str]:
    words: list[str] = []
    for name in names:
        words += ["-engine", "cmd=stockfish", f"name={name}"]
    return words + list(extra)


MATRIX = {
    "random-book-srand": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=4", "option.Threads=1", "-games", "2", "-rounds", "3",
        "-repeat", "-openings", f"file={BOOKS}/noob_3moves.epd", "format=epd", "order=random",
        "-srand", "7", "-pgnout", "file=out.pgn", "nodes=true", "seldepth=true", "nps=true",
        "hashfull=true", "tbhits=true", "pv=true", "timeleft=true", "latency=true",
        "-epdout", "file=out.epd", "-ratinginterval", "1", "-crc32", "pgn=true",
        "-sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"], ("out.pgn", "out.epd")),
    "pgn-book-plies-gauntlet": (_engines("a", "b", "c") + [
        "-each", "tc=inf", "depth=3", "-rounds", "2", "-games", "2", "-repeat",
        "-tournament", "gauntlet", "-openings", f"file={BOOKS}/8moves_v3.pgn", "format=pgn",
        "plies=6", "-pgnout", "file=out.pgn", "notation=lan"], ("out.pgn",)),
    "roundrobin-three": (["-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish",
                          "name=b", "option.Hash=32", "-engine", "cmd=stockfish", "name=c",
                          "-each", "tc=inf", "depth=3", "-rounds", "2", "-games", "2",
                          "-repeat", "-openings", f"file={BOOKS}/UHO_4060_v3.epd",
                          "format=epd", "order=random", "-srand", "3", "-pgnout",
                          "file=out.pgn", "-ratinginterval", "1"], ("out.pgn",)),
    "chess960": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=4", "-rounds", "2", "-games", "2", "-repeat", "-variant",
        "fischerandom", "-openings", f"file={BOOKS}/3moves_FRC.epd", "format=epd",
        "order=random", "-srand", "11", "-pgnout", "file=out.pgn", "-epdout", "file=out.epd"],
        ("out.pgn", "out.epd")),
    "draw-resign-maxmoves": (["-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish",
                              "name=b", "option.Hash=8", "-each", "tc=inf", "depth=5",
                              "-rounds", "4", "-games", "2", "-repeat", "-openings",
                              f"file={BOOKS}/UHO_4060_v3.epd", "format=epd", "-draw",
                              "movenumber=20", "movecount=4", "score=20", "-resign",
                              "movecount=3", "score=400", "-maxmoves", "60", "-pgnout",
                              "file=out.pgn", "notation=uci"], ("out.pgn",)),
    "sprt-stop": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=4", "-rounds", "200", "-games", "2", "-repeat",
        "-openings", f"file={BOOKS}/UHO_4060_v3.epd", "format=epd", "order=random",
        "-srand", "5", "-sprt", "elo0=-1", "elo1=40", "alpha=0.2", "beta=0.2",
        "-ratinginterval", "2", "-pgnout", "file=out.pgn"], ("out.pgn",)),
    "match-line": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=3", "-rounds", "1", "-games", "2", "-repeat", "-openings",
        f"file={BOOKS}/noob_3moves.epd", "format=epd", "-pgnout", "file=out.pgn",
        "match_line=info depth 2 ", "match_line=currmove"], ("out.pgn",)),
    "output-cutechess-sprt": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=3", "-rounds", "3", "-games", "2", "-repeat", "-openings",
        f"file={BOOKS}/noob_3moves.epd", "format=epd", "-output", "format=cutechess",
        "-ratinginterval", "2", "-sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05"], ()),
    "output-cutechess-three": (_engines("a", "b", "c") + [
        "-each", "tc=inf", "depth=2", "-rounds", "1", "-games", "2", "-repeat", "-openings",
        f"file={BOOKS}/noob_3moves.epd", "format=epd", "-output", "format=cutechess",
        "-ratinginterval", "1"], ()),
    "games-1-no-penta-min": (_engines("a", "b") + [
        "-each", "tc=inf", "depth=3", "-rounds", "3", "-games", "1", "-openings",
        f"file={BOOKS}/noob_3moves.epd", "format=epd", "-ratinginterval", "2", "-pgnout",
        "file=out.pgn", "min=true"], ("out.pgn",)),
}


@pytest.mark.timeout(900)
# CI time: the SPRT stop is checked fast against fastchess in test_dropin_fastchess_args.
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "sprt-stop"
                                  else n for n in MATRIX])
def test_matrix_against_fastchess(name: str, tmp_path: Path) -> None:
    """The same argv, fastchess and runner-fastchess: lines, games and PGN tags identical."""
    _require_peer()
    require_binary("stockfish")
    argv, files = MATRIX[name]
    _compare(_play(argv, tmp_path), files)


def _crashing_engine() -> list[str]:
    """The bundled engine over UCI, crashing at its third move of every game."""
    return ["-engine", f"cmd={sys.executable}", "args=-m engine --uci --seed 1 --level 1 "
            "--fault crash@3", "name=crash"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("recover", [False, True])
def test_matrix_crashing_engine(recover: bool, tmp_path: Path) -> None:
    """An engine that crashes in every game: without -recover both stop at the first game
    (exit 1, the resume hint); with it both play on and list the crashes at the end."""
    _require_peer()
    require_binary("stockfish")
    argv = [*_crashing_engine(), "-engine", "cmd=stockfish", "name=sf", "-each", "tc=inf",
            "depth=2", "-rounds", "2", "-games", "2", "-repeat", "-openings",
            f"file={BOOKS}/noob_3moves.epd", "format=epd", "-pgnout", "file=out.pgn"]
    if recover:
        argv.append("-recover")
    done = _play(argv, tmp_path)
    _compare(done, ("out.pgn",) if recover else ())
    lines = _lines(done["ours"][1])
    assert ("Player: crash" in lines) is recover


@pytest.mark.timeout(600)
def test_matrix_illegal_move(tmp_path: Path) -> None:
    """An engine that plays an illegal move: the same warning, reason and PGN comment."""
    _require_peer()
    require_binary("stockfish")
    argv = ["-engine", f"cmd={sys.executable}", "args=-m engine --uci --seed 1 --level 1 "
            "--fault illegal@3", "name=ill", "-engine", "cmd=stockfish", "name=sf", "-each",
            "tc=inf", "depth=2", "-rounds", "1", "-games", "2", "-repeat", "-openings",
            f"file={BOOKS}/noob_3moves.epd", "format=epd", "-pgnout", "file=out.pgn"]
    done = _play(argv, tmp_path)
    _compare(done)
    assert "Warning; Illegal move e4a1 played by ill" in _lines(done["ours"][1])


BAD_PV = """import subprocess, sys, threading
engine = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, bufsize=1)
def pump():
    for line in engine.stdout:
        if line.startswith("info") and " pv " in line:
            line = line.rstrip("\\n") + " a1a1\\n"
        sys.stdout.write(line)
        sys.stdout.flush()
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin:
    engine.stdin.write(line)
    engine.stdin.flush()
    if line.strip() == "quit":
        break
engine.wait()
"""


@pytest.mark.timeout(600)
def test_matrix_pv_warnings(tmp_path: Path) -> None:
    """stockfish behind a filter that ends every PV with an illegal move: fastchess's
    multi-line PV warnings, move by move, the same."""
    _require_peer()
    stockfish = require_binary("stockfish")
    script = tmp_path / "bad_pv.py"
    script.write_text(BAD_PV)
    argv = ["-engine", f"cmd={sys.executable}", f"args={script} {stockfish}", "name=bad",
            "-engine", "cmd=stockfish", "name=sf", "-each", "tc=inf", "depth=2", "-rounds", "1",
            "-games", "2", "-repeat", "-openings", f"file={BOOKS}/noob_3moves.epd",
            "format=epd", "-pgnout", "file=out.pgn"]
    done = _play(argv, tmp_path)
    _compare(done)
    assert "Warning; Illegal PV move - move a1a1 from bad" in _lines(done["ours"][1])


# A stop and resume through runner-fastchess is also tests/test_dropin_entry.py's fast case.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_matrix_sigint_in_the_middle(tmp_path: Path) -> None:
    """SIGINT after game 3: both print the resume hint, Finished match and exit 1; the
    games both finished are the same."""
    _require_peer()
    require_binary("stockfish")
    argv = _engines("a", "b") + [
        "-each", "tc=inf", "depth=9", "-rounds", "20", "-games", "2", "-repeat", "-openings",
        f"file={BOOKS}/UHO_4060_v3.epd", "format=epd", "-pgnout", "file=out.pgn"]
    results = {}
    for tool in ("fastchess", "ours"):
        where = tmp_path / tool
        proc = _start(tool, argv, where)
        deadline = time.monotonic() + 300
        while "Finished game 3 " not in (where / "stdout").read_text():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        results[tool] = (proc.returncode, where)
    peer, ours = _lines(results["fastchess"][1]), _lines(results["ours"][1])
    assert results["ours"][0] == results["fastchess"][0] == 1
    assert ours[-4:] == peer[-4:] == [
        "Tournament was interrupted. To resume the tournament, run: P -config file=config.json",
        "Finished match", "Total Time: T", ""]
    finished = [line for line in ours if line.startswith("Finished game")]
    assert finished[:3] == [line for line in peer if line.startswith("Finished game")][:3]
    both = min(len(_games(results["ours"][1] / "out.pgn")),
               len(_games(results["fastchess"][1] / "out.pgn")))
    assert both >= 3
    assert [g[1] for g in _games(results["ours"][1] / "out.pgn")][:both] == \
        [g[1] for g in _games(results["fastchess"][1] / "out.pgn")][:both]
