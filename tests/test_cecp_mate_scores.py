"""Mate scores of CECP engines, which encode a mate in a number (issue 31).

CECP has no mate token: the specification says 100000+N for mate in N moves, and engines use
their own: a large base minus the distance in plies (sjeng 1000000, hoichess 100000, Phalanx
30000, GNU Chess 10000, 32000 or 32768 elsewhere), some counting one ply more than others.
Each must come out as the same mate in moves, so the PGN shows +M1, never +M899998.
"""

from __future__ import annotations

import pytest
from conftest import require_binary

from runner.game.adjudication import AdjudicationRules
from runner.pgn.writer import format_move_comment
from runner.protocol.cecp_parse import mate_from_score, parse_thinking
from runner.protocol.engine import EngineConfig
from tests.bundled_games import bundled, game_spec, run_game

# (score as posted, mate in moves): the values are what each engine printed in mating
# positions (sjeng, hoichess, phalanx, gnuchess -x seen on Debian), or what its convention gives.
CONVENTIONS = [
    # The specification: 100000+N moves.
    (100001, 1), (100007, 7), (-100001, -1), (-100003, -3),
    # sjeng: 1000000 - (plies + 1); mate in 1 is 999998, mated in 1 is -999997.
    (999998, 1), (999996, 2), (-999997, -1), (-999995, -2),
    # 1000000 - plies (cutechess-cli's own base): 999999 is mate in 1.
    (999999, 1), (-999998, -1),
    # hoichess: 100000 - plies.
    (99999, 1), (99997, 2), (-99998, -1),
    # Phalanx: 30000 - plies.
    (29999, 1), (29997, 2), (-29996, -2),
    # GNU Chess: 10000 - plies (mated in 1 seen as -9998).
    (-9998, -1), (9999, 1),
    # 32000 - plies (Crafty-style) and just below 32767/32768.
    (31999, 1), (31995, 3), (-31998, -1), (32767, 1), (32766, 1), (-32766, -1), (-32764, -2),
]


@pytest.mark.parametrize(("score", "moves"), CONVENTIONS)
def test_each_convention_gives_the_mate_in_moves(score: int, moves: int) -> None:
    assert mate_from_score(score) == moves
    info = parse_thinking(f"9 {score} 10 1000 e2e4")
    assert info is not None and info.mate == moves


@pytest.mark.parametrize("score", [0, 35, -250, 3000, -9000, 20500, 100000, 32000, 150000, -500000])
def test_ordinary_scores_are_not_mates(score: int) -> None:
    assert mate_from_score(score) is None


def _sjeng(tmp_path) -> EngineConfig:
    workdir = tmp_path / "sjeng"
    workdir.mkdir()
    return EngineConfig(name="sjeng", argv=(require_binary("sjeng"),), working_dir=workdir,
                        quit_timeout=2.0, terminate_timeout=1.0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("fen", "moves"), [
    ("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1),   # Ra8#
    ("k7/8/2K5/8/8/8/8/7R w - - 0 1", 2),          # Kb6 Kb8 Rh8#
])
def test_real_sjeng_mate_is_written_in_moves(tmp_path, fen: str, moves: int) -> None:
    spec = game_spec("5+0.05", start_fen=fen, adjudication=AdjudicationRules(max_moves=10))
    record = run_game(_sjeng(tmp_path), bundled("bundled", "--level", "1"), spec).record
    first = record.moves[0]
    # sjeng posts 999998 (mate in 1) and 999996 (mate in 2) here.
    assert first.mate == moves, record.transcripts[0][-10:]
    assert format_move_comment(first).startswith(f"+M{moves}/")
