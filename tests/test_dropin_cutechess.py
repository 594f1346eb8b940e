"""runner-cutechess prints and writes what cutechess-cli 1.5.1 prints and writes.

Two parts. The unit tests build the runner's events by hand and check each line the output
prints (the expected texts are cutechess-cli's own, as its source formats them and as the real
binary printed them for the same counts). The matrix runs the same argv through
``runner cutechess`` and the real cutechess-cli (../shared/peers/cutechess-cli; skipped with
the reason when it or an engine is absent) and compares the stdout lines, the games and the
PGN tags: the lines must be identical, the games identical move for move, every tag identical
except the clock's (start and end times, duration) and the opening names cutechess takes from
a table compiled into it (ECO, Opening, Variation).
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import chess
import chess.pgn
import pytest
from conftest import SHARED_DATA, same_pgn_date

from runner.clock import TimeControl, TimePeriod
from runner.dropin.cutechess.output import CutechessOutput
from runner.dropin.cutechess.pgn import cutechess_pgn, move_comment, time_control_text
from runner.dropin.cutechess.results import cute_result
from runner.dropin.cutechess.settings import CutechessSettings, PgnMode, SprtBounds
from runner.dropin.cutechess.stats import CutechessElo, sprt_status
from runner.game.record import GameRecord, GameSpec
from runner.game.termination import GameTermination as T
from runner.rules import Result
from runner.store import TournamentStatus
from runner.tournament.events import GameFinished, GameStarted, RunOutcome
from runner.tournament.pairing import ScheduledGame
from runner.tournament.scoreboard import Scoreboard
from runner.types import MoveRecord

REPO = Path(__file__).resolve().parent.parent
CUTECHESS = REPO.parent / "shared" / "peers" / "cutechess-cli"
BOOKS = SHARED_DATA / "books"
_GAMES_PATH = "/usr/games:/usr/local/games:" + os.environ.get("PATH", "")
STOCKFISH = shutil.which("stockfish", path=_GAMES_PATH)
FAIRYMAX = shutil.which("fairymax", path=_GAMES_PATH)

# ---------------------------------------------------------------------------------------------
# Unit tests: events built by hand.

_T0 = datetime(2026, 11, 25, 5, 49, 11, 87000, tzinfo=UTC)


def _job(index: int, white: str, black: str, round_: int = 1) -> ScheduledGame:
    return ScheduledGame(index=index, round=round_, pair=index // 2, game_in_pair=index % 2,
                         white=white, black=black, encounter=0)


def _record(white: str, black: str, result: Result, termination: T, reason: str = "",
            moves: Sequence[MoveRecord] = (), spec: GameSpec | None = None,
            seconds: float = 0.62) -> GameRecord:
    spec = spec or GameSpec(white_tc=TimeControl(), black_tc=TimeControl())
    return GameRecord(white=white, black=black, spec=spec, moves=tuple(moves), result=result,
                      termination=termination, reason=reason, started_at=_T0,
                      ended_at=_T0 + timedelta(seconds=seconds), final_fen="8/8/8/8/8/8/8/K6k w - - 0 1")


def _finished(index: int, white: str, black: str, result: Result, termination: T,
              reason: str = "", moves: Sequence[MoveRecord] = ()) -> GameFinished:
    record = _record(white, black, result, termination, reason, moves)
    return GameFinished(_job(index, white, black), result, termination, reason, len(moves), 1.0,
                        record=record)


def _outcome() -> RunOutcome:
    return RunOutcome(tournament_id=1, status=TournamentStatus.FINISHED, total_games=2, done=2,
                      played_now=2, scoreboard=Scoreboard([]))


class _Run:
    """A CutechessOutput on string streams, fed game by game."""

    def __init__(self, tmp: Path | None = None, **settings: object) -> None:
        self.out, self.err = io.StringIO(), io.StringIO()
        values = {"players": ("fa", "sf"), "final_game_count": 2, **settings}
        self.output = CutechessOutput(self.out, CutechessSettings(**values),  # type: ignore[arg-type]
                                      errors=self.err)

    def game(self, index: int, white: str, black: str, result: Result, termination: T,
             reason: str = "", moves: Sequence[MoveRecord] = ()) -> None:
        self.output.game_started(GameStarted(_job(index, white, black), slot=0))
        self.output.game_finished(_finished(index, white, black, result, termination, reason,
                                            moves))

    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()


@pytest.mark.parametrize(("result", "termination", "reason", "expected"), [
    (Result.BLACK_WINS, T.CHECKMATE, "Black mates", "0-1 {Black mates}"),
    (Result.DRAW, T.STALEMATE, "", "1/2-1/2 {Draw by stalemate}"),
    (Result.DRAW, T.THREEFOLD_REPETITION, "", "1/2-1/2 {Draw by 3-fold repetition}"),
    (Result.DRAW, T.FIFTY_MOVES, "", "1/2-1/2 {Draw by fifty moves rule}"),
    (Result.DRAW, T.INSUFFICIENT_MATERIAL, "", "1/2-1/2 {Draw by insufficient mating material}"),
    (Result.WHITE_WINS, T.ADJUDICATION, "", "1-0 {White wins by adjudication}"),
    (Result.DRAW, T.ADJUDICATION, "", "1/2-1/2 {Draw by adjudication}"),
    (Result.BLACK_WINS, T.TABLEBASE, "", "0-1 {Black wins by adjudication: SyzygyTB}"),
    (Result.DRAW, T.TABLEBASE, "", "1/2-1/2 {Draw by adjudication: SyzygyTB}"),
    (Result.DRAW, T.MAX_MOVES, "", "1/2-1/2 {Draw by adjudication: maximal game length}"),
    (Result.WHITE_WINS, T.RESIGNATION, "Black resigns", "1-0 {Black resigns}"),
    (Result.BLACK_WINS, T.TIME_FORFEIT, "White loses on time (12 ms)", "0-1 {White loses on time}"),
    (Result.DRAW, T.TIME_FORFEIT, "", "1/2-1/2 {Draw by timeout}"),
    (Result.WHITE_WINS, T.ILLEGAL_MOVE, "Black makes an illegal move: c6a1",
     "1-0 {Black makes an illegal move: c6a1}"),
    (Result.WHITE_WINS, T.DISCONNECT, "Black disconnects (exit code 1)", "1-0 {Black disconnects}"),
    (Result.BLACK_WINS, T.STALL, "White's connection stalls (x)", "0-1 {White's connection stalls}"),
    (Result.WHITE_WINS, T.FALSE_CLAIM, "Black makes a false claim: 0-1",
     "1-0 {White wins by adjudication: Invalid result claim}"),
    (Result.DRAW, T.DRAW_AGREEMENT, "Draw by mutual agreement", "1/2-1/2 {Draw by agreement}"),
    (Result.UNFINISHED, T.ERROR, "", "* {No result}"),
])
def test_every_end_reads_as_cutechess_words_it(result: Result, termination: T, reason: str,
                                                expected: str) -> None:
    assert cute_result(result, termination, reason).verbose == expected


def test_a_match_prints_the_lines_cutechess_printed_for_the_same_games() -> None:
    # Captured from cutechess-cli 1.5.1: fairymax vs stockfish, -ratinginterval 1
    # -outcomeinterval 1 -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05, both games won by Black.
    run = _Run(rating_interval=1, outcome_interval=1, sprt=SprtBounds(0, 5, 0.05, 0.05))
    run.game(0, "fa", "sf", Result.BLACK_WINS, T.CHECKMATE, "Black mates")
    run.game(1, "sf", "fa", Result.BLACK_WINS, T.CHECKMATE, "Black mates")
    run.output.run_ended(_outcome(), interrupted=False)
    assert run.lines() == [
        "Started game 1 of 2 (fa vs sf)",
        "Finished game 1 (fa vs sf): 0-1 {Black mates}",
        "Score of fa vs sf: 0 - 1 - 0  [0.000] 1",
        "...      fa playing White: 0 - 1 - 0  [0.000] 1",
        "...      White vs Black: 0 - 1 - 0  [0.000] 1",
        "Elo difference: -inf +/- nan, LOS: 15.9 %, DrawRatio: 0.0 %",
        "SPRT: llr -0.0193 (-0.7%), lbound -2.94, ubound 2.94",
        "",
        "Player: fa",
        '   "Loss: Black mates": 1',
        "Player: sf",
        '   "Win: Black mates": 1',
        "Started game 2 of 2 (sf vs fa)",
        "Finished game 2 (sf vs fa): 0-1 {Black mates}",
        "Score of fa vs sf: 1 - 1 - 0  [0.500] 2",
        "...      fa playing White: 0 - 1 - 0  [0.000] 1",
        "...      fa playing Black: 1 - 0 - 0  [1.000] 1",
        "...      White vs Black: 0 - 2 - 0  [0.000] 2",
        "Elo difference: 0.0 +/- nan, LOS: 50.0 %, DrawRatio: 0.0 %",
        "SPRT: llr -0.000423 (-0.0%), lbound -2.94, ubound 2.94",
        "",
        "Player: fa",
        '   "Loss: Black mates": 1',
        '   "Win: Black mates": 1',
        "Player: sf",
        '   "Loss: Black mates": 1',
        '   "Win: Black mates": 1',
        "Finished match",
    ]


def test_without_intervals_the_ratings_and_outcomes_come_once_at_the_end() -> None:
    # As cutechess-cli printed for two draws by -maxmoves (no -sprt: its null test's line).
    run = _Run(players=("a", "b"))
    run.game(0, "a", "b", Result.DRAW, T.MAX_MOVES)
    run.game(1, "b", "a", Result.DRAW, T.MAX_MOVES)
    run.output.run_ended(_outcome(), interrupted=False)
    assert run.lines()[-12:] == [
        "Score of a vs b: 0 - 0 - 2  [0.500] 2",
        "...      a playing White: 0 - 0 - 1  [0.500] 1",
        "...      a playing Black: 0 - 0 - 1  [0.500] 1",
        "...      White vs Black: 0 - 0 - 2  [0.500] 2",
        "Elo difference: 0.0 +/- 0.0, LOS: nan %, DrawRatio: 100.0 %",
        "SPRT: llr 0 (0.0%), lbound -inf, ubound inf",
        "",
        "Player: a",
        '   "Draw by adjudication: maximal game length": 2',
        "Player: b",
        '   "Draw by adjudication: maximal game length": 2',
        "Finished match",
    ]


def test_a_crash_without_recover_ends_the_match_before_the_games_own_lines() -> None:
    # cutechess-cli stops at the first disconnect: the final block comes first, then the game.
    run = _Run(players=("good", "bad"), final_game_count=4)
    run.game(0, "good", "bad", Result.WHITE_WINS, T.DISCONNECT, "Black disconnects (exit 1)")
    run.game(1, "bad", "good", Result.WHITE_WINS, T.CHECKMATE, "White mates")  # not printed
    run.output.run_ended(_outcome(), interrupted=False)
    assert run.lines() == [
        "Started game 1 of 4 (good vs bad)",
        "Terminating process of engine bad(1)",
        "...      good playing White: 1 - 0 - 0  [1.000] 1",
        "...      White vs Black: 1 - 0 - 0  [1.000] 1",
        "Elo difference: inf +/- nan, LOS: 84.1 %, DrawRatio: 0.0 %",
        "SPRT: llr 0 (0.0%), lbound -inf, ubound inf",
        "",
        "Player: good",
        '   "Win: Black disconnects": 1',
        "Player: bad",
        '   "Loss: Black disconnects": 1',
        "Finished match",
        "Finished game 1 (good vs bad): 1-0 {Black disconnects}",
        "Score of good vs bad: 1 - 0 - 0  [1.000] 1",
    ]


def test_with_recover_a_restarted_engine_gets_the_next_instance_number() -> None:
    run = _Run(players=("good", "bad"), final_game_count=4, recover=True)
    run.game(0, "good", "bad", Result.WHITE_WINS, T.DISCONNECT, "Black disconnects")
    run.game(1, "bad", "good", Result.BLACK_WINS, T.DISCONNECT, "White disconnects")
    run.game(2, "good", "bad", Result.WHITE_WINS, T.STALL, "Black's connection stalls")
    lines = run.lines()
    assert [line for line in lines if line.startswith("Terminating")] == [
        "Terminating process of engine bad(1)", "Terminating process of engine bad(2)",
        "Terminating process of engine bad(3)"]
    assert lines[-2:] == ["Finished game 3 (good vs bad): 1-0 {Black's connection stalls}",
                          "Score of good vs bad: 3 - 0 - 0  [1.000] 3"]


def test_a_stop_prints_the_running_game_as_no_result_and_omits_it_with_fi(tmp_path: Path) -> None:
    pgn = tmp_path / "out.pgn"
    run = _Run(players=("a", "b"), final_game_count=20, pgn_out=str(pgn), pgn_finished_only=True)
    run.output.game_started(GameStarted(_job(0, "a", "b"), slot=0))
    run.output.run_ended(_outcome(), interrupted=True)
    assert run.lines() == [
        "Started game 1 of 20 (a vs b)",
        "Finished game 1 (a vs b): * {No result}",
        "Score of a vs b: 0 - 0 - 0  [nan] 0",
        "Elo difference: nan +/- nan, LOS: nan %, DrawRatio: nan %",
        "SPRT: llr 0 (0.0%), lbound -inf, ubound inf",
        "",
        "Player: a",
        '   "No result": 1',
        "Player: b",
        '   "No result": 1',
        "Finished match",
    ]
    assert run.err.getvalue() == "Warning: Omitted incomplete game 1\n"
    assert not pgn.exists() or pgn.read_text() == ""


def test_a_stopped_game_without_fi_is_written_unterminated(tmp_path: Path) -> None:
    pgn = tmp_path / "out.pgn"
    run = _Run(players=("a", "b"), final_game_count=20, pgn_out=str(pgn))
    run.output.game_started(GameStarted(_job(0, "a", "b"), slot=0))
    run.output.run_ended(_outcome(), interrupted=True)
    text = pgn.read_text()
    assert '[Result "*"]' in text and '[Termination "unterminated"]' in text
    assert text.endswith('[TimeControl "inf"]\n\n{No result} *\n\n')


def test_three_players_get_the_ranking_table_ties_latest_first() -> None:
    # As cutechess-cli printed it for four stockfish drawing every game (-maxmoves 1,
    # per-color): equal scores are listed last player first (Qt's QMultiMap puts a new equal
    # key first).
    names = ("e1", "e2", "e3", "e4")
    run = _Run(players=names, final_game_count=6, result_format="per-color")
    pairs = [("e1", "e2"), ("e1", "e3"), ("e1", "e4"), ("e2", "e3"), ("e2", "e4"), ("e3", "e4")]
    for index, (white, black) in enumerate(pairs):
        run.game(index, white, black, Result.DRAW, T.MAX_MOVES)
    run.output.run_ended(_outcome(), interrupted=False)
    lines = run.lines()
    start = lines.index(next(line for line in lines if line.startswith("Rank")))
    assert lines[start:start + 8] == [
        "Rank Name                          Elo     +/-   Games    Wins  Losses   Draws   Points"
        "   WWins  WLoss.  WDraws   BWins  BLoss.  BDraws ",
        "   1 e4                              0       0       3       0       0       3      1.5"
        "       0       0       0       0       0       3 ",
        "   2 e3                              0       0       3       0       0       3      1.5"
        "       0       0       1       0       0       2 ",
        "   3 e2                              0       0       3       0       0       3      1.5"
        "       0       0       2       0       0       1 ",
        "   4 e1                              0       0       3       0       0       3      1.5"
        "       0       0       3       0       0       0 ",
        "",
        "SPRT: llr 0 (0.0%), lbound -inf, ubound inf",
        "",
    ]
    assert not any(line.startswith("Score of") for line in lines)


def test_a_gauntlet_lists_its_seeds_first_from_rank_zero() -> None:
    run = _Run(players=("e1", "e2", "e3", "e4"), final_game_count=4, tournament="gauntlet",
               seeds=2, result_format="small")
    for index, (white, black) in enumerate([("e1", "e3"), ("e1", "e4"), ("e2", "e3"),
                                            ("e2", "e4")]):
        run.game(index, white, black, Result.DRAW, T.MAX_MOVES)
    run.output.run_ended(_outcome(), interrupted=False)
    lines = run.lines()
    start = lines.index("Rank Name                        Games   Points ")
    assert lines[start + 1:start + 5] == [
        "   0 e2                              2      1.0 ",
        "   1 e1                              2      1.0 ",
        "   2 e4                              2      1.0 ",
        "   3 e3                              2      1.0 ",
    ]


def test_the_wide3_table_has_every_column_cutechess_fills() -> None:
    # cutechess-cli: sf1 gauntlet against fairymax and the bundled engine, -resultformat wide3.
    run = _Run(players=("sf1", "Fairy-Max 5.0b", "py"), final_game_count=4,
               tournament="gauntlet", result_format="wide3", time_controls=("inf",) * 3)
    run.game(0, "sf1", "Fairy-Max 5.0b", Result.WHITE_WINS, T.CHECKMATE, "White mates")
    run.game(1, "Fairy-Max 5.0b", "sf1", Result.WHITE_WINS, T.CHECKMATE, "White mates")
    run.game(2, "sf1", "py", Result.WHITE_WINS, T.CHECKMATE, "White mates")
    run.game(3, "py", "sf1", Result.BLACK_WINS, T.CHECKMATE, "Black mates")
    run.output.run_ended(_outcome(), interrupted=False)
    lines = run.lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Rank"))
    assert lines[start:start + 4] == [
        "Rank Name                                  TC     Elo     +/-   Games    Wins  Losses"
        "   Draws   Points   Score   WWins  WLoss.  WDraws   White   BWins  BLoss.  BDraws   Black"
        "    Draw  DStale  DMater  DRepet  DMoves    DAdj  DAgree  OtherD    Time Illegal  Discon"
        "   Stall WrClaim ",
        "   0 sf1                                  inf     191     nan       4       3       1"
        "       0      3.0   75.0%       2       0       0  100.0%       1       1       0   50.0%"
        "    0.0%       0       0       0       0       0       0       0       0       0       0"
        "       0       0 ",
        "   1 Fairy-Max 5.0b                       inf       0     nan       2       1       1"
        "       0      1.0   50.0%       1       0       0  100.0%       0       1       0    0.0%"
        "    0.0%       0       0       0       0       0       0       0       0       0       0"
        "       0       0 ",
        "   2 py                                   inf    -inf     nan       2       0       2"
        "       0      0.0    0.0%       0       1       0    0.0%       0       1       0    0.0%"
        "    0.0%       0       0       0       0       0       0       0       0       0       0"
        "       0       0 ",
    ]


def test_the_outcomes_count_each_kind_of_end_per_player() -> None:
    run = _Run(players=("good", "bad"), final_game_count=2, outcome_interval=2, recover=True)
    run.game(0, "good", "bad", Result.WHITE_WINS, T.FALSE_CLAIM, "Black makes a false claim")
    run.game(1, "bad", "good", Result.BLACK_WINS, T.ILLEGAL_MOVE,
             "White makes an illegal move: a1g1")
    assert run.lines()[-7:] == [
        "",
        "Player: good",
        '   "Win: White makes an illegal move: a1g1": 1',
        '   "Win: White wins by adjudication: Invalid result claim": 1',
        "Player: bad",
        '   "Loss: White makes an illegal move: a1g1": 1',
        '   "Loss: White wins by adjudication: Invalid result claim": 1',
    ]


def test_a_table_row_prints_the_margin_cutechess_printed() -> None:
    # Fairy-Max's row of cutechess-cli's round robin: two wins, two losses.
    from runner.dropin.cutechess.results import qt_fixed

    figures = CutechessElo(2, 2, 0)
    assert (qt_fixed(figures.diff, 0, 7), qt_fixed(figures.error_margin, 0, 7)) == (
        "      0", "    786")


def test_a_false_claim_is_a_warning_naming_the_engine_and_its_claim() -> None:
    # cutechess-cli: "Warning: bad forfeits by invalid result claim: 0-1 {Black mates}".
    run = _Run(players=("good", "bad"), final_game_count=2)
    run.game(0, "good", "bad", Result.WHITE_WINS, T.FALSE_CLAIM,
             "Black makes a false claim: 0-1 {Black mates}")
    assert run.err.getvalue() == "Warning: bad forfeits by invalid result claim: 0-1 {Black mates}\n"


@pytest.mark.parametrize(("wins", "losses", "draws", "elo", "margin", "los"), [
    # Printed by cutechess-cli (Elo difference line and round-robin tables) for these counts.
    (0, 1, 0, "-inf", "nan", "15.9"), (1, 1, 0, "0.0", "nan", "50.0"),
    (0, 0, 2, "0.0", "0.0", "nan"), (4, 0, 0, "inf", "nan", "97.7"),
    (1, 0, 0, "inf", "nan", "84.1"), (2, 0, 0, "inf", "nan", "92.1"),
])
def test_elo_figures_follow_cutechess_formulas(wins: int, losses: int, draws: int, elo: str,
                                               margin: str, los: str) -> None:
    from runner.dropin.cutechess.results import qt_fixed

    figures = CutechessElo(wins, losses, draws)
    assert (qt_fixed(figures.diff, 1), qt_fixed(figures.error_margin, 1),
            qt_fixed(figures.los, 1)) == (elo, margin, los)


def test_the_error_margin_uses_cutechess_approximate_quantile() -> None:
    # cutechess's erfInv approximation, not the exact normal quantile 1.95996.
    from runner.dropin.cutechess.stats import _phi_inv

    assert f"{_phi_inv(0.975):.5f}" == "1.95716"


def test_sprt_decides_as_cutechess_does() -> None:
    status = sprt_status(30, 5, 10, 0.0, 100.0, 0.05, 0.05)
    assert status.accepted == "H1" and status.llr >= status.upper
    assert sprt_status(0, 0, 0, 0, 0, 0, 0).accepted is None


def test_the_runner_sprt_with_the_cutechess_model_stops_where_cutechess_stops() -> None:
    # runner-cutechess plays -sprt with EloModel.SCALED_BAYESELO: the same LLR as the line prints,
    # so the run ends at the game cutechess-cli ends at (single games, not game pairs).
    from runner.stats.counts import Trinomial
    from runner.stats.sprt import EloModel, SprtDecision, SprtSpec, sprt

    spec = SprtSpec(0.0, 200.0, 0.2, 0.2, EloModel.SCALED_BAYESELO)
    assert sprt(Trinomial(wins=3, draws=0, losses=0), spec).decision is SprtDecision.CONTINUE
    four = sprt(Trinomial(wins=4, draws=0, losses=0), spec)
    assert four.decision is SprtDecision.H1
    assert four.llr == sprt_status(4, 0, 0, 0.0, 200.0, 0.2, 0.2).llr


def test_move_comments_are_written_as_cutechess_writes_them() -> None:
    assert move_comment(MoveRecord(san="e4", score_cp=15, depth=3, time=0.0)) == "+0.15/3 0s"
    assert move_comment(MoveRecord(san="e4", score_cp=-10, depth=3, time=0.0015)) == "-0.10/3 0.001s"
    assert move_comment(MoveRecord(san="e4", score_cp=0, depth=3, time=0.19)) == "0.00/3 0.19s"
    assert move_comment(MoveRecord(san="e4", score_cp=5, depth=12, time=1.2345)) == "+0.05/12 1.2s"
    assert move_comment(MoveRecord(san="e4", score_cp=5, depth=12, time=12.5)) == "+0.05/12 12s"
    # Mates in plies: mate in 2 moves is M3, being mated in 1 move is M2.
    assert move_comment(MoveRecord(san="g6", mate=2, depth=3, time=0.0)) == "+M3/3 0s"
    assert move_comment(MoveRecord(san="Ng5", mate=-1, depth=3, time=0.0)) == "-M2/3 0s"
    assert move_comment(MoveRecord(san="e4", book=True)) == "book"
    assert move_comment(MoveRecord(san="e4")) == ""


def test_time_controls_read_as_cutechess_writes_them() -> None:
    assert time_control_text(TimeControl()) == "inf"
    assert time_control_text(TimeControl(depth=3)) == "inf"
    assert time_control_text(TimeControl(periods=(TimePeriod(40, 60.0, 0.5),))) == "40/60+0.5"
    assert time_control_text(TimeControl(periods=(TimePeriod(0, 10.0, 0.1),))) == "10+0.1"
    assert time_control_text(TimeControl(move_time=0.5)) == "0.5/move"


def test_the_pgn_has_cutechess_tags_order_comments_and_line_breaks() -> None:
    moves = [MoveRecord(san=san, score_cp=15, depth=3, time=0.001) for san in
             ("d4", "e6", "Nc3", "d5", "Nf3", "Nf6", "Bf4", "a6", "Qd2", "b5", "O-O-O")]
    record = _record("fa", "sf", Result.BLACK_WINS, T.CHECKMATE, "Black mates", moves)
    end = cute_result(Result.BLACK_WINS, T.CHECKMATE, "Black mates")
    text = cutechess_pgn(record, end, round_=1)
    assert text == (
        '[Event "?"]\n[Site "?"]\n[Date "2026.11.25"]\n[Round "1"]\n[White "fa"]\n'
        '[Black "sf"]\n[Result "0-1"]\n[GameDuration "00:00:00"]\n'
        '[GameEndTime "2026-11-25T05:49:11.707 UTC"]\n'
        '[GameStartTime "2026-11-25T05:49:11.087 UTC"]\n[PlyCount "11"]\n'
        '[TimeControl "inf"]\n\n'
        "1. d4 {+0.15/3 0.001s} e6 {+0.15/3 0.001s} 2. Nc3 {+0.15/3 0.001s}\n"
        "d5 {+0.15/3 0.001s} 3. Nf3 {+0.15/3 0.001s} Nf6 {+0.15/3 0.001s}\n"
        "4. Bf4 {+0.15/3 0.001s} a6 {+0.15/3 0.001s} 5. Qd2 {+0.15/3 0.001s}\n"
        "b5 {+0.15/3 0.001s} 6. O-O-O {+0.15/3 0.001s, Black mates} 0-1\n\n")
    minimal = cutechess_pgn(record, end, round_=1, mode=PgnMode.MINIMAL)
    assert minimal.startswith('[Event "?"]\n') and "[PlyCount" not in minimal
    assert minimal.endswith("\n1. d4 e6 2. Nc3 d5 3. Nf3 Nf6 4. Bf4 a6 5. Qd2 b5 6. O-O-O 0-1\n\n")


def test_the_termination_tag_names_the_abnormal_ends() -> None:
    def tag(result: Result, termination: T) -> str:
        return cute_result(result, termination, "").termination_tag

    assert tag(Result.WHITE_WINS, T.DISCONNECT) == "abandoned"
    assert tag(Result.WHITE_WINS, T.STALL) == "stalled connection"
    assert tag(Result.WHITE_WINS, T.TIME_FORFEIT) == "time forfeit"
    assert tag(Result.WHITE_WINS, T.ILLEGAL_MOVE) == "illegal move"
    assert tag(Result.DRAW, T.ADJUDICATION) == "adjudication"
    assert tag(Result.DRAW, T.TABLEBASE) == "adjudication"
    assert tag(Result.UNFINISHED, T.ERROR) == "unterminated"
    assert tag(Result.WHITE_WINS, T.CHECKMATE) == ""
    assert tag(Result.WHITE_WINS, T.RESIGNATION) == ""


def test_games_reach_the_pgn_in_number_order_and_the_epd_at_once(tmp_path: Path) -> None:
    pgn, epd = tmp_path / "out.pgn", tmp_path / "out.epd"
    run = _Run(players=("a", "b"), final_game_count=2, pgn_out=str(pgn), epd_out=str(epd))
    for index, (white, black) in enumerate([("a", "b"), ("b", "a")]):
        run.output.game_started(GameStarted(_job(index, white, black), slot=index))
    run.output.game_finished(_finished(1, "b", "a", Result.DRAW, T.MAX_MOVES))
    assert not pgn.exists()  # game 2 waits for game 1, as in cutechess
    assert epd.read_text() == "8/8/8/8/8/8/8/K6k w - - 0 1\n"
    run.output.game_finished(_finished(0, "a", "b", Result.DRAW, T.MAX_MOVES))
    games = pgn.read_text().split('[Event "?"]')
    assert [g.split('[White "')[1][0] for g in games[1:]] == ["a", "b"]


def test_a_removed_pgn_file_is_reopened_with_cutechess_warning(tmp_path: Path) -> None:
    pgn = tmp_path / "out.pgn"
    run = _Run(players=("a", "b"), final_game_count=2, pgn_out=str(pgn))
    run.game(0, "a", "b", Result.DRAW, T.MAX_MOVES)
    pgn.unlink()
    run.game(1, "b", "a", Result.DRAW, T.MAX_MOVES)
    assert run.err.getvalue() == f"Warning: PGN file {pgn} does not exist. Reopening...\n"
    assert pgn.read_text().count("[Event") == 1


def test_a_resumed_run_continues_the_counts_and_the_file(tmp_path: Path) -> None:
    pgn = tmp_path / "out.pgn"
    run = _Run(players=("a", "b"), final_game_count=2, pgn_out=str(pgn))
    run.output.resumed([_finished(0, "a", "b", Result.WHITE_WINS, T.CHECKMATE, "White mates")])
    run.game(1, "b", "a", Result.WHITE_WINS, T.CHECKMATE, "White mates")
    assert run.lines()[:3] == ["Started game 2 of 2 (b vs a)",
                               "Finished game 2 (b vs a): 1-0 {White mates}",
                               "Score of a vs b: 1 - 1 - 0  [0.500] 2"]
    # The stored game the file lacked is written first (issue 39: the file is repaired
    # against the database), then the new one.
    assert pgn.read_text().count("[Event") == 2
    assert pgn.read_text().index('[Round "1"]') < pgn.read_text().index('[White "b"]')


# ---------------------------------------------------------------------------------------------
# The matrix: the same argv through runner-cutechess and the real cutechess-cli.

_CLOCK_TAGS = {"GameStartTime", "GameEndTime", "GameDuration", "ECO", "Opening", "Variation"}


@dataclass
class Played:
    """What one tool printed and wrote for one argv."""

    returncode: int
    lines: list[str]
    stderr: str
    pgn: str
    epd: str = ""


def _cutechess_usable() -> str | None:
    """Why the real cutechess-cli cannot run here, or None."""
    if not CUTECHESS.exists():
        return f"{CUTECHESS} is absent"
    try:
        probe = subprocess.run([str(CUTECHESS), "--version"], capture_output=True, text=True,
                               timeout=30)
    except OSError as exc:
        return f"cutechess-cli does not start: {exc}"
    if probe.returncode != 0:
        return f"cutechess-cli does not start (libqt6core6 missing?): {probe.stderr.strip()[:200]}"
    return None


def _play(tool: str, argv: Sequence[str], where: Path, interrupt_after: float | None = None,
          ) -> Played:
    where.mkdir(parents=True, exist_ok=True)
    if tool == "cutechess":
        command = [str(CUTECHESS), *argv]
    else:
        command = [sys.executable, "-m", "runner", "cutechess", *argv]
    env = dict(os.environ, PYTHONPATH=str(REPO), RUNNER_DB=str(where / "runner.db"),
               PATH=_GAMES_PATH)
    proc = subprocess.Popen(command, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, env=env)
    if interrupt_after is not None:
        # SIGINT once the first game has started (and some moves are made).
        assert proc.stdout is not None
        first = proc.stdout.readline()
        time.sleep(interrupt_after)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=120)
        out = first + rest
    else:
        out, err = proc.communicate(timeout=300)
    pgn, epd = where / "games.pgn", where / "final.epd"
    return Played(proc.returncode, out.splitlines(), err, pgn.read_text() if pgn.exists() else "",
                  epd.read_text() if epd.exists() else "")


def _games(text: str) -> list[chess.pgn.Game]:
    handle = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append(game)
    return games


def _moves(game: chess.pgn.Game) -> list[str]:
    board = game.board()
    out = []
    for move in game.mainline_moves():
        out.append(board.uci(move, chess960=True))
        board.push(move)
    return out


def _comments(game: chess.pgn.Game) -> list[str]:
    """Each move's comment without its time (the clock is not the same twice)."""
    return [" ".join(word for word in node.comment.split() if not word.rstrip(",").endswith("s")
                     or word.startswith(("Black", "White")) or not word[0].isdigit())
            for node in game.mainline()]


@dataclass
class Comparison:
    """Lines and games compared between the two tools for one argv."""

    lines: int
    same_lines: int
    games: int
    same_games: int
    tags: int
    same_tags: int
    problems: list[str]


def _compare(ours: Played, theirs: Played) -> Comparison:
    problems = []
    if ours.returncode != theirs.returncode:
        problems.append(f"exit status: ours {ours.returncode}, theirs {theirs.returncode}")
    same_lines = sum(a == b for a, b in zip(ours.lines, theirs.lines, strict=False))
    if ours.lines != theirs.lines:
        longest = max(len(ours.lines), len(theirs.lines))
        padded = zip(ours.lines + [""] * longest, theirs.lines + [""] * longest, strict=False)
        for number, (a, b) in enumerate(padded):
            if a != b:
                problems.append(f"line {number + 1}: ours {a!r}, theirs {b!r}")
                break
        if len(ours.lines) != len(theirs.lines):
            problems.append(f"{len(ours.lines)} lines, theirs {len(theirs.lines)}")
    if ours.epd != theirs.epd:
        problems.append(f"EPD file: ours {ours.epd!r}, theirs {theirs.epd!r}")
    mine, peer = _games(ours.pgn), _games(theirs.pgn)
    if len(mine) != len(peer):
        problems.append(f"{len(mine)} games in the PGN, theirs {len(peer)}")
    same_games = tags = same_tags = 0
    for number, (got, want) in enumerate(zip(mine, peer, strict=False), start=1):
        if _moves(got) == _moves(want) and got.headers["Result"] == want.headers["Result"] \
                and _comments(got)[-1:] == _comments(want)[-1:]:
            same_games += 1
        else:
            problems.append(f"game {number}: ours {got.headers['Result']} {_moves(got)[:60]}, "
                            f"theirs {want.headers['Result']} {_moves(want)[:60]}")
        names = [n for n in want.headers if n not in _CLOCK_TAGS]
        ours_names = [n for n in got.headers if n not in _CLOCK_TAGS]
        for name in names:
            tags += 1
            if got.headers.get(name) == want.headers[name] or (
                    name == "Date" and same_pgn_date(got.headers.get(name), want.headers[name])):
                same_tags += 1
            else:
                problems.append(f"game {number} tag {name}: ours {got.headers.get(name)!r}, "
                                f"theirs {want.headers[name]!r}")
        if ours_names != names:
            problems.append(f"game {number} tags: ours {ours_names}, theirs {names}")
    return Comparison(max(len(ours.lines), len(theirs.lines)), same_lines, len(peer), same_games,
                      tags, same_tags, problems)


def _sf(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={STOCKFISH}", f"name={name}", "proto=uci", "option.Threads=1",
            "option.Hash=16", *extra]


def _fm(name: str, *extra: str) -> list[str]:
    return ["-engine", f"cmd={FAIRYMAX}", f"name={name}", "proto=xboard", *extra]


def _bundled(name: str, *fault: str) -> list[str]:
    words = ["-engine", f"cmd={sys.executable}", f"dir={REPO}", "arg=-m", "arg=engine",
             "arg=--level", "arg=1", f"name={name}", "proto=xboard"]
    return words + [f"arg={w}" for w in fault]


_EPD = f"file={BOOKS / 'noob_3moves.epd'}"
# The tournaments of three mix the protocols with the bundled engine as the CECP player: it
# plays the same move at a depth whatever the clock says, where fairymax stops deepening on
# the wall clock and so cannot be compared move for move under load (CI's failure of
# gauntlet-3 at fdbcb9d: cutechess-cli's two runs agreed, ours went another way at ply 2).
MATRIX: dict[str, list[str]] = {
    "uci-random-srand": [*_sf("a"), *_sf("b"), "-each", "tc=inf", "depth=4", "-openings", _EPD,
                         "format=epd", "order=random", "-srand", "7", "-games", "2", "-rounds",
                         "3", "-repeat", "-ratinginterval", "2", "-pgnout", "games.pgn"],
    "pgn-book-plies": [*_sf("a"), *_sf("b"), "-each", "tc=inf", "depth=4", "-openings",
                       f"file={BOOKS / '8moves_v3.pgn'}", "format=pgn", "plies=4", "-games", "2",
                       "-rounds", "2", "-repeat", "-pgnout", "games.pgn", "min"],
    "chess960": [*_sf("a"), *_sf("b"), "-each", "tc=inf", "depth=4", "-variant", "fischerandom",
                 "-openings", f"file={BOOKS / '3moves_FRC.epd'}", "format=epd", "-games", "2",
                 "-rounds", "2", "-repeat", "-pgnout", "games.pgn"],
    "draw-resign-maxmoves": [*_sf("a", "depth=4"), *_sf("b", "depth=2"), "-each", "tc=inf",
                             "-openings", _EPD, "format=epd", "-games", "2",
                             "-rounds", "3", "-repeat", "-draw", "movenumber=20", "movecount=4",
                             "score=15", "-resign", "movecount=3", "score=400", "-maxmoves",
                             "50", "-pgnout", "games.pgn", "-epdout", "final.epd"],
    "sprt-stop": [*_sf("strong", "depth=4"), *_sf("weak", "depth=1"), "-each", "tc=inf",
                  "-openings", _EPD, "format=epd", "-games", "2", "-rounds", "50",
                  "-repeat", "-sprt", "elo0=0", "elo1=200", "alpha=0.2", "beta=0.2",
                  "-pgnout", "games.pgn"],
    "gauntlet-3": ["-tournament", "gauntlet", *_sf("sf", "depth=3"),
                   *_bundled("cx"), "restart=on", "depth=2", *_sf("sf1", "depth=1"), "-each",
                   "tc=inf", "-games",
                   "2", "-openings", _EPD, "format=epd", "-resultformat", "wide3",
                   "-outcomeinterval", "2", "-pgnout", "games.pgn"],
    "round-robin-3": [*_sf("sf", "depth=3"), *_bundled("cx"), "restart=on", "depth=2",
                      *_sf("sf1", "depth=1"), "-each", "tc=inf", "-games", "2", "-openings", _EPD,
                      "format=epd", "-ratinginterval", "3", "-pgnout", "games.pgn",
                      "-event", "RR 3", "-site", "here"],
    "cecp": [*_fm("fa", "restart=on"), *_fm("fb", "restart=on"), "-each", "tc=inf", "depth=3",
             "-openings", _EPD, "format=epd", "-games", "2", "-rounds", "2", "-repeat",
             "-resign", "movecount=3", "score=400", "-maxmoves", "50", "-pgnout", "games.pgn"],
    "recover-crash": [*_bundled("good"), *_bundled("bad", "--fault", "crash@3"), "-each",
                      "tc=inf", "depth=2", "-games", "4", "-recover", "-pgnout", "games.pgn"],
    "illegal-move": [*_bundled("good"), *_bundled("bad", "--fault", "illegal@3"), "-each",
                     "tc=inf", "depth=2", "-games", "2", "-pgnout", "games.pgn",
                     "-epdout", "final.epd"],
    "engine-resigns": [*_bundled("good"), *_bundled("bad", "--fault", "resign@3"), "-each",
                       "tc=inf", "depth=2", "-games", "2", "-pgnout", "games.pgn", "min"],
    "false-claim": [*_bundled("good"), *_bundled("bad", "--fault", "false-claim@3"), "-each",
                    "tc=inf", "depth=2", "-games", "2", "-pgnout", "games.pgn", "fi"],
    "stall-recover": [*_bundled("good"), *_bundled("bad", "--fault", "hang@3"), "-each",
                      "tc=0:02+0.1", "-games", "2", "-recover", "-pgnout", "games.pgn"],
    "crash-no-recover": [*_bundled("good"), *_bundled("bad", "--fault", "crash@3"), "-each",
                         "tc=inf", "depth=2", "-games", "4", "-pgnout", "games.pgn"],
}


@pytest.fixture(scope="module")
def matrix_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _cutechess_usable()
    if reason is not None:
        pytest.skip(reason)
    if STOCKFISH is None or FAIRYMAX is None:
        pytest.skip("stockfish and fairymax are needed (Debian packages stockfish, fairymax)")
    return tmp_path_factory.mktemp("cutechess-matrix")


# Known differences of the game layer (not of the output), kept in the matrix so that the day
# they are gone the test says so.
# The stalled engine waits out its clock under both programs (about a minute): slow tests.
_SLOW = {"stall-recover"}

_KNOWN = {
    "false-claim": "cutechess forfeits a false claim as it arrives; the runner lets the "
                   "opponent move once more before it judges the claim",
    "stall-recover": "a hung engine: cutechess sends '?' at the flag and declares a stalled "
                     "connection when no move comes; the runner declares a loss on time",
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=[pytest.mark.xfail(reason=_KNOWN[n], strict=True),
                           *([pytest.mark.slow] if n in _SLOW else [])]) if n in _KNOWN
    else n for n in sorted(MATRIX)])
def test_the_same_argv_prints_and_plays_what_cutechess_does(name: str, matrix_dir: Path) -> None:
    argv = MATRIX[name]
    theirs = _play("cutechess", argv, matrix_dir / name / "cutechess")
    ours = _play("runner", argv, matrix_dir / name / "runner")
    result = _compare(ours, theirs)
    if result.problems:
        # Fairymax stops deepening on the wall clock whatever its depth limit: where either
        # program does not play its own games again, no run can be compared move for move.
        # Both are asked, since either one's run may be the one the clock bent.
        for program, first in (("cutechess", theirs), ("runner", ours)):
            if _compare(_play(program, argv, matrix_dir / name / f"{program}-again"),
                        first).problems:
                pytest.skip(f"{program}'s own two runs of this command line differ: the "
                            "engines' games are not reproducible on this machine")
    with (matrix_dir.parent / "cutechess-matrix.txt").open("a") as summary:
        summary.write(f"{name}: lines {result.same_lines}/{result.lines}, games "
                      f"{result.same_games}/{result.games}, tags {result.same_tags}/{result.tags}"
                      f"{'; ' + result.problems[0] if result.problems else ''}\n")
    assert not result.problems, "\n".join(result.problems[:20])


def _interrupted_end(lines: list[str]) -> tuple[str, str, str, list[str], str]:
    """What an interrupted run's end says whatever games finished before the signal: the
    last game's result, the score line's and SPRT line's form, the "No result" count of
    each player, and the last line."""
    finished = [line for line in lines if line.startswith("Finished game")]
    score = [line for line in lines if line.startswith("Score of ")]
    sprt = [line for line in lines if line.startswith("SPRT: ")]
    return (finished[-1].rsplit(": ", 1)[-1] if finished else "",
            score[-1].split(":")[0] if score else "",
            sprt[-1].split(" (")[0] if sprt else "",
            [line for line in lines if line.startswith("Player: ") or '"No result"' in line],
            lines[-1] if lines else "")


@pytest.mark.timeout(300)
def test_sigint_in_the_middle_ends_as_cutechess_ends(matrix_dir: Path) -> None:
    argv = [*_sf("a"), *_fm("b"), "-each", "tc=inf", "depth=7", "-games", "20", "-pgnout",
            "games.pgn", "fi"]
    theirs = _play("cutechess", argv, matrix_dir / "sigint" / "cutechess", interrupt_after=1.5)
    ours = _play("runner", argv, matrix_dir / "sigint" / "runner", interrupt_after=1.5)
    assert ours.returncode == theirs.returncode == 0
    # How many games finished before the signal, and so which results the players' lists
    # name, depends on the clock (and on fairymax's own clock); the end's shape does not.
    assert _interrupted_end(ours.lines) == _interrupted_end(theirs.lines)
    assert theirs.lines[-1] == "Finished match"
    assert "Warning: Omitted incomplete game" in ours.stderr
