"""CECP in Chess960: how our castling is written to an engine, and games that prove it.

`Chess960Writer` follows random Chess960 games and writes castling as configured
(the specification's O-O/O-O-O, or king-takes-rook); bundled engines printing either form
then play games in which castling crosses the pipe both ways.
"""

from __future__ import annotations

import asyncio
import random

import chess
import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.play import play_game
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.cecp import CecpEngine
from runner.protocol.cecp_parse import Chess960Writer
from runner.types import Castling960Style, Variant
from tests.bundled_games import bundled


def _random_chess960_game(rng: random.Random) -> tuple[str, list[tuple[chess.Board, chess.Move]]]:
    """A random Chess960 game (castling preferred when legal): start FEN, (board, move) pairs."""
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    start, plies = board.fen(), []
    for _ in range(100):
        legal = list(board.legal_moves)
        if not legal:
            break
        castles = [m for m in legal if board.is_castling(m)]
        move = rng.choice(castles if castles and rng.random() < 0.5 else legal)
        plies.append((board.copy(stack=False), move))
        board.push(move)
    return start, plies


@pytest.mark.parametrize("style", list(Castling960Style))
def test_chess960_writer_follows_random_games_and_writes_castling_as_configured(style):
    rng = random.Random(960)
    castled = 0
    for _ in range(60):
        start, plies = _random_chess960_game(rng)
        writer = Chess960Writer(start, style)
        for board, move in plies:
            uci = board.uci(move)  # king-takes-rook, as the arbiter writes Chess960 castling
            written = writer.write(uci)
            if board.is_castling(move):
                castled += 1
                side = "O-O" if board.is_kingside_castling(move) else "O-O-O"
                assert written == (side if style is Castling960Style.OO else uci), (board.fen(), uci)
            else:
                assert written == uci, (board.fen(), uci)
    assert castled > 20


@pytest.mark.parametrize(
    ("fen", "moves", "written"),
    [
        # The king's two-square step (standard notation) is castling too, and so is O-O given.
        (chess.STARTING_FEN, ["e2e4", "e7e5", "g1f3", "g8f6", "f1c4", "f8c5", "e1g1", "e8h8"],
         ["e2e4", "e7e5", "g1f3", "g8f6", "f1c4", "f8c5", "O-O", "O-O"]),
        ("1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R3KR1 w KQkq - 0 1", ["f1g1", "f8b8"],
         ["O-O", "O-O-O"]),
        # A king's one-square step onto an empty square is a plain move.
        ("1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 b KQkq - 0 1", ["f8e8", "e1f1"],
         ["f8e8", "e1f1"]),
    ],
)
def test_chess960_writer_table(fen, moves, written):
    writer = Chess960Writer(fen, Castling960Style.OO)
    assert [writer.write(m) for m in moves] == written


_960_START = "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1"  # X-FEN: b- and g-rooks


async def _bundled_960_game(style: Castling960Style, output: str, opening: tuple[str, ...],
                            seeds: tuple[int, int]) -> GameRecord:
    """A Chess960 game between bundled engines printing castling as `output` (oo or kxr),
    our castling sent to them in `style`."""
    spec = GameSpec(TimeControl.parse("5+0.05"), TimeControl.parse("5+0.05"),
                    start_fen=_960_START, opening_moves=opening, variant=Variant.FISCHERANDOM,
                    adjudication=AdjudicationRules(max_moves=40))
    engines = [
        CecpEngine(bundled(name, "--level", "1", "--seed", str(seed), "--castling960", output),
                   castling960=style)
        for name, seed in (("w", seeds[0]), ("b", seeds[1]))
    ]
    try:
        for engine in engines:
            await engine.start()
        return await play_game(*engines, spec)
    finally:
        for engine in engines:
            await engine.quit()


def _check_960_record(record: GameRecord) -> None:
    """Complete, replayable with python-chess in Chess960 mode, and no engine complained."""
    assert not record.replay, record.reason
    assert record.termination not in (GameTermination.ILLEGAL_MOVE, GameTermination.DISCONNECT,
                                      GameTermination.STALL, GameTermination.FALSE_CLAIM), \
        record.reason
    board = chess.Board(_960_START, chess960=True)
    for played in record.moves:
        move = chess.Move.from_uci(played.uci)
        assert move in board.legal_moves, (board.fen(), played.uci)
        board.push(move)
    for transcript in record.transcripts:
        complaints = [line for line in transcript if " < Illegal move" in line or " < Error" in line]
        assert complaints == []


def _sent_moves(transcript: tuple[str, ...]) -> list[str]:
    return [line.rsplit(" ", 1)[-1] for line in transcript if " > usermove " in line]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("output", ["oo", "kxr"])
@pytest.mark.parametrize("style", list(Castling960Style))
def test_chess960_castling_in_the_opening_reaches_the_bundled_engine_as_configured(style, output):
    record = asyncio.run(_bundled_960_game(style, output, ("c1g1", "c8b8"), (11, 12)))
    _check_960_record(record)
    assert [m.san for m in record.moves[:2]] == ["O-O", "O-O-O"]
    expected = ["O-O", "O-O-O"] if style is Castling960Style.OO else ["c1g1", "c8b8"]
    for transcript in record.transcripts:
        assert _sent_moves(transcript)[:2] == expected


@pytest.mark.timeout(60)
@pytest.mark.parametrize("output", ["oo", "kxr"])
@pytest.mark.parametrize("style", list(Castling960Style))
def test_chess960_castling_played_in_the_game_is_relayed_as_configured(style, output):
    # Seeds with which White's engine castles by itself at ply 10 (depth 1 is reproducible).
    record = asyncio.run(_bundled_960_game(style, output, (), (1, 101)))
    _check_960_record(record)
    castles = [i for i, m in enumerate(record.moves) if m.san.startswith("O-O")]
    assert castles, "no castling in the game"
    index = castles[0]
    board = chess.Board(_960_START, chess960=True)
    for played in record.moves[:index]:
        board.push_uci(played.uci)
    kingside = board.is_kingside_castling(chess.Move.from_uci(record.moves[index].uci))
    want = ("O-O" if kingside else "O-O-O") if style is Castling960Style.OO else record.moves[index].uci
    receiver = record.transcripts[1 if index % 2 == 0 else 0]
    assert want in _sent_moves(receiver)
