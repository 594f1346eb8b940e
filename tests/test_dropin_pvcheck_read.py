"""runner-fastchess's PV check of a search whose one scored line the engine layer read into
the move's record (`pvcheck.engine_read`): its own short path (`_check_read`) gives the same
warnings, in the same order, as the path that parses the lines (`_check_search`), on random
games that repeat and mate, with PVs that start with the move played or not, run into the
repetition, the mate or an illegal move, and mate scores right and wrong."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

from runner.clock import TimeControl
from runner.dropin.fastchess import pvcheck
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import TranscriptEntry
from runner.rules import Board, Result
from runner.types import MoveRecord

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
KNIGHTS = {"g1f3", "g8f6", "f3g1", "f6g8"}


def _random_game(chooser: random.Random) -> list[str]:
    """A random game of up to 60 plies that often shuffles knights (repetitions) or mates."""
    board = Board()
    while len(board.move_stack) < 60 and not board.is_game_over(claim_draw=True):
        legal = list(board.legal_moves)
        shuffles = [m for m in legal if m.uci() in KNIGHTS]
        board.push(chooser.choice(shuffles if shuffles and chooser.random() < 0.5 else legal))
    return [m.uci() for m in board.move_stack]


def _read_game(chooser: random.Random, moves: list[str]) -> GameRecord:
    """The game with one scored line per search, its figures in the move's record as the UCI
    client reads them (PV, score, depth), an ``info string`` before it now and then."""
    board = Board()
    played: list[MoveRecord] = []
    lines: tuple[list[TranscriptEntry], list[TranscriptEntry]] = ([], [])
    for index, uci in enumerate(moves):
        walk = board.copy()
        pv: list[str] = []
        for step in range(chooser.randrange(0, 6)):
            options = [m.uci() for m in walk.legal_moves]
            if not options or chooser.random() < 0.05:
                pv.append("a1a8")
                break
            shuffles = [option for option in options if option in KNIGHTS]
            pick = uci if step == 0 and chooser.random() < 0.8 else chooser.choice(
                shuffles if shuffles and chooser.random() < 0.6 else options)
            pv.append(pick)
            walk.push_uci(pick)
        mate = chooser.choice((1, 2, -1, 3)) if chooser.random() < 0.2 else None
        score = f"mate {mate}" if mate is not None else "cp 7"
        tail = f" pv {' '.join(pv)}" if pv else ""
        multipv = " multipv 1" if chooser.random() < 0.5 else ""
        side = lines[index % 2]
        side.append(TranscriptEntry(float(index), ">", "go depth 1"))
        if chooser.random() < 0.3:
            side.append(TranscriptEntry(float(index), "<", "info string NNUE enabled"))
        side.append(TranscriptEntry(float(index), "<", f"info depth 1 seldepth 1{multipv} "
                                    f"score {score} nodes 20 time 1{tail}"))
        side.append(TranscriptEntry(float(index), "<", f"bestmove {uci}"))
        move = board.parse_uci(uci)
        played.append(MoveRecord(san=board.san(move), uci=uci, score_cp=None if mate else 7,
                                 mate=mate, depth=1, seldepth=1, nodes=20, pv=tuple(pv)))
        board.push(move)
    tc = TimeControl(depth=1)
    return GameRecord(white="w", black="b", spec=GameSpec(white_tc=tc, black_tc=tc),
                      moves=tuple(played), result=Result.DRAW,
                      termination=GameTermination.ADJUDICATION, reason="", started_at=T0,
                      ended_at=T0, final_fen=board.fen(),
                      protocol_lines=(tuple(lines[0]), tuple(lines[1])))


def test_a_line_read_into_the_record_warns_as_a_parsed_one() -> None:
    """`pv_warnings` with the engine layer's reading taken (`_check_read`) and refused
    (every line parsed, `_check_search`: the same game with no depth in its records, which
    the lines contradict): the same warnings of every kind."""
    chooser = random.Random(38)
    games = [_read_game(chooser, _random_game(chooser)) for _ in range(30)]
    twins = [replace(game, moves=tuple(replace(m, depth=None) for m in game.moves))
             for game in games]
    for game, twin in zip(games, twins, strict=True):  # each takes the path it is meant to
        lines = pvcheck.search_lines(game)
        assert all(pvcheck.engine_read(game, index, lines[index]) for index in lines)
        lines = pvcheck.search_lines(twin)
        assert not any(pvcheck.engine_read(twin, index, lines[index]) for index in lines)
    for check_mate_pvs in (False, True):
        read = [pvcheck.pv_warnings(game, check_mate_pvs, " :: ") for game in games]
        parsed = [pvcheck.pv_warnings(twin, check_mate_pvs, " :: ") for twin in twins]
        assert read == parsed
        kinds = {w.split(" - ")[0].split(" :: ")[0] for found in read for w in found}
        assert {"Warning; PV continues after threefold repetition",
                "Warning; Illegal PV move", "Warning; Bestmove does not match beginning of "
                "last PV"} <= kinds
        if check_mate_pvs:
            assert {"Warning; Incomplete mating PV", "Warning; Too long mating PV",
                    "Warning; Mating PV does not end with checkmate"} <= kinds
