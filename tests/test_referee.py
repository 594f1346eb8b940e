"""Uploaded games refereed again (runner.referee): real games of fairymax and stockfish at
depth 1 pass as they were played; the same games changed after the fact (an illegal move, a
result the position does not allow, other engines, colours, opening or time control, a loss
on time the clock does not allow) are refused, each with its reason. A hand-made mate checks
the rules part without any engine."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime

import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameSpec
from runner.game.slot import GameSlot, Played
from runner.game.termination import GameTermination
from runner.protocol.engine import EngineConfig
from runner.referee import verify_game
from runner.rules import Board, Result
from runner.types import MoveRecord
from tests.conftest import require_binary

OPENING = ("e2e4", "e7e5")
DEPTH1 = TimeControl(depth=1)
TIMED = TimeControl.parse("1+0")
"""The clock of the hand-made games."""
CLOCK_DEPTH1 = dataclasses.replace(TimeControl.parse("10+0.1"), depth=1)
"""A running clock with engines that answer at once: real move times, no loss on time."""
RESIGN = AdjudicationRules(resign_move_count=3, resign_score=400)


def _engines() -> tuple[EngineConfig, EngineConfig]:
    fairymax = EngineConfig("fairymax", (require_binary("fairymax"),), protocol="cecp")
    stockfish = EngineConfig("stockfish", (require_binary("stockfish"),), protocol="uci")
    return fairymax, stockfish


def _jobs() -> list[GameJob]:
    """A depth-1 game to its end by the rules, and a timed one with resign adjudication,
    colours swapped."""
    fairymax, stockfish = _engines()
    return [
        GameJob(0, fairymax, stockfish, GameSpec(DEPTH1, DEPTH1, opening_moves=OPENING)),
        GameJob(1, stockfish, fairymax, GameSpec(CLOCK_DEPTH1, CLOCK_DEPTH1,
                                                 opening_moves=OPENING, adjudication=RESIGN)),
    ]


async def _play(jobs: list[GameJob]) -> list[GameRecord]:
    slot = GameSlot()
    records = []
    try:
        for job in jobs:
            outcome = await slot.play(job)
            assert isinstance(outcome, Played), outcome
            records.append(outcome.record)
    finally:
        await slot.close()
    return records


@pytest.fixture(scope="module")
def played() -> list[tuple[GameJob, GameRecord]]:
    """The two real games, each with its job (played once for the module)."""
    jobs = _jobs()
    return list(zip(jobs, asyncio.run(_play(jobs)), strict=True))


def test_real_games_pass(played: list[tuple[GameJob, GameRecord]]) -> None:
    for job, record in played:
        verdict = verify_game(job, record)
        assert verdict.ok, (verdict, record.termination, record.reason)
    # The record survives the trip a worker's upload makes, and still passes.
    job, record = played[1]
    assert verify_game(job, GameRecord.from_json(record.to_json())).ok
    assert all(move.time is not None for move in record.moves if not move.book)


def _refused(job: GameJob, record: GameRecord, *words: str) -> None:
    verdict = verify_game(job, record)
    assert not verdict.ok
    for word in words:
        assert word in verdict.reason, verdict


def test_forged_games_are_refused(played: list[tuple[GameJob, GameRecord]]) -> None:
    job, record = played[0]
    moves = list(record.moves)
    moves[4] = dataclasses.replace(moves[4], uci="e1e8", san="Ke8")
    _refused(job, dataclasses.replace(record, moves=tuple(moves)), "illegal")
    moves = list(record.moves)
    moves[4] = dataclasses.replace(moves[4], san="Qxf7#")
    _refused(job, dataclasses.replace(record, moves=tuple(moves)), "written")
    flipped = {Result.WHITE_WINS: Result.BLACK_WINS, Result.BLACK_WINS: Result.WHITE_WINS,
               Result.DRAW: Result.WHITE_WINS}[record.result]
    _refused(job, dataclasses.replace(record, result=flipped), str(flipped))
    # Another game of the batch, or the right engines with their colours swapped.
    _refused(job, dataclasses.replace(record, white=record.black, black=record.white), "vs")
    _refused(dataclasses.replace(job, spec=dataclasses.replace(job.spec, opening_moves=(
        "d2d4", "d7d5"))), record, "opening")
    _refused(dataclasses.replace(job, spec=dataclasses.replace(job.spec, white_tc=TIMED)),
             record, "time control")
    # A loss on time where no clock runs; a game with moves cut off the end.
    _refused(job, dataclasses.replace(record, termination=GameTermination.TIME_FORFEIT,
                                      result=Result.WHITE_WINS), "no clock")
    _refused(job, dataclasses.replace(record, moves=record.moves[:-1]), "final position")
    _refused(job, dataclasses.replace(record, replay=True, result=Result.UNFINISHED),
             "no result")

    timed_job, timed = played[1]
    # A loss on time (or a resignation) where the rules or the adjudication had ended the
    # game already (which of them depends on the game).
    for forged in (GameTermination.TIME_FORFEIT, GameTermination.RESIGNATION):
        _refused(timed_job, dataclasses.replace(
            timed, termination=forged, reason="White loses on time (0.010 s used)"))
    # The adjudication rules changed after the fact: not the rules the batch asked for.
    _refused(timed_job, dataclasses.replace(timed, spec=dataclasses.replace(
        timed.spec, adjudication=AdjudicationRules())), "adjudication rules")


def _record(spec: GameSpec, ucis: list[str], result: Result, termination: GameTermination,
            reason: str = "", times: float | None = None) -> GameRecord:
    board = Board()
    moves = []
    for uci in ucis:
        move = board.parse_uci(uci)
        moves.append(MoveRecord(san=board.san(move), uci=uci, time=times))
        board.push(move)
    now = datetime(2026, 11, 28, tzinfo=UTC)
    return GameRecord("a", "b", spec, tuple(moves), result, termination, reason, now, now,
                      board.fen())


def test_a_hand_made_mate_and_clocks() -> None:
    spec = GameSpec(DEPTH1, DEPTH1)
    job = GameJob(0, EngineConfig("a", ("a",)), EngineConfig("b", ("b",)), spec)
    fools = ["f2f3", "e7e5", "g2g4", "d8h4"]
    assert verify_game(job, _record(spec, fools, Result.BLACK_WINS,
                                    GameTermination.CHECKMATE)).ok
    _refused(job, _record(spec, fools, Result.WHITE_WINS, GameTermination.CHECKMATE),
             "makes 0-1")
    _refused(job, _record(spec, fools, Result.DRAW, GameTermination.STALEMATE), "not one")
    _refused(job, _record(spec, fools[:3], Result.BLACK_WINS, GameTermination.CHECKMATE),
             "not mate")
    # A resignation by the side on move is a win for the other; a draw by agreement is a draw.
    assert verify_game(job, _record(spec, fools[:3], Result.WHITE_WINS,
                                    GameTermination.RESIGNATION)).ok
    _refused(job, _record(spec, fools[:3], Result.BLACK_WINS, GameTermination.RESIGNATION),
             "side on move")
    _refused(job, _record(spec, fools[:3], Result.WHITE_WINS, GameTermination.DRAW_AGREEMENT),
             "draw agreement")
    # A draw by repetition is one; a game that goes on after it is refused at the next ply.
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"] * 2
    assert verify_game(job, _record(spec, shuffle, Result.DRAW,
                                    GameTermination.THREEFOLD_REPETITION)).ok
    went_on = verify_game(job, _record(spec, [*shuffle, "e2e4"], Result.DRAW,
                                       GameTermination.THREEFOLD_REPETITION))
    assert not went_on.ok and "went on" in went_on.reason and went_on.ply == 9
    # Clocks: a flag that fell and a game that went on; a loss on time the clock shows.
    clocked = GameSpec(TIMED, TIMED)
    job = dataclasses.replace(job, spec=clocked)
    _refused(job, _record(clocked, fools, Result.BLACK_WINS, GameTermination.CHECKMATE,
                          times=0.6), "flag fell")
    forfeit = _record(clocked, fools[:3], Result.WHITE_WINS, GameTermination.TIME_FORFEIT,
                      "Black loses on time (0.900 s used)", times=0.3)
    assert verify_game(job, forfeit).ok
    _refused(job, dataclasses.replace(forfeit, reason="Black loses on time (0.500 s used)"),
             "clock allows")
    _refused(job, _record(clocked, fools[:3], Result.WHITE_WINS, GameTermination.CHECKMATE,
                          times=None), "no time")
