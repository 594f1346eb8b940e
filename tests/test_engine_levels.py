"""The bundled engine's strength ladder is monotonic by construction (issue 21 item 20): each
level searches clearly more than the one below, and nothing random flattens the gaps. The
SPRTs per adjacent pair, run through the runner, are in engine/README.md."""

from __future__ import annotations

import pytest

from engine.config import LEVEL_NAMES, EngineConfig, level_limits
from engine.player import Player
from engine.timeman import TimeBudget
from runner.rules import Board

_MIDDLEGAMES = (
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/ppp2ppp/2np1n2/2b1p1B1/2B1P1b1/2NP1N2/PPP2PPP/R2Q1RK1 w - - 0 8",
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 8",
)
_UNBOUNDED = TimeBudget(None, None)


def _nodes(level: str, fen: str) -> int:
    return Player(EngineConfig(level=level)).choose(Board(fen), _UNBOUNDED).nodes


def test_the_ladder_is_ordered_with_clear_gaps() -> None:
    assert LEVEL_NAMES == ("random", "greedy", "1", "2", "3", "4", "5", "6", "7", "8")
    depths = [level_limits(name).depth for name in ("1", "2", "3", "4")]
    assert depths == [1, 2, 3, 4]
    budgets = [level_limits(name).nodes for name in ("5", "6", "7")]
    assert all(budget is not None for budget in budgets)
    assert all(high >= 3 * low for low, high in zip(budgets, budgets[1:], strict=False))  # type: ignore[operator]
    top = level_limits("8")
    assert top.depth is None and top.nodes is None and not top.random_mover and not top.greedy


def test_the_first_node_level_searches_well_beyond_the_last_depth_level() -> None:
    # Level 5 used to stop at 5 000 nodes where depth 4 (level 4) searches 5 000 to 30 000:
    # level 5 was the weaker of the two.
    depth_four = [_nodes("4", fen) for fen in _MIDDLEGAMES]
    budget = level_limits("5").nodes
    assert budget is not None
    assert budget > max(depth_four) and budget >= 2.5 * sum(depth_four) / len(depth_four), (
        budget, depth_four)


@pytest.mark.parametrize("level", ["1", "2", "3"])
def test_a_level_plays_the_same_move_every_time(level: str) -> None:
    # No noise: the same seedless level chooses the same move in the same position.
    fen = _MIDDLEGAMES[1]
    moves = {Player(EngineConfig(level=level, seed=seed)).choose(Board(fen), _UNBOUNDED).move
             for seed in (1, 2, 3)}
    assert len(moves) == 1
