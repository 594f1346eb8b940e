"""A UCI engine that answers ``bestmove (none)`` while it has legal moves loses the game,
and the reason quotes its words (not the ``0000`` the client stands in for them).

The engine is a real process over real pipes: a short script that speaks just enough UCI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from runner.game.record import GameTermination
from runner.protocol.engine import EngineConfig
from tests.bundled_games import bundled_uci, game_spec, run_game

pytestmark = pytest.mark.timeout(60)

_NO_MOVE = """\
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "uci":
        print("id name nomove")
        print("uciok")
    elif word == "isready":
        print("readyok")
    elif word == "go":
        print("bestmove %s")
    elif word == "quit":
        break
    sys.stdout.flush()
"""


@pytest.mark.parametrize("answer", ["(none)", "0000", "(none) \x1b]0;x\x07"])
def test_a_null_bestmove_is_quoted_in_the_illegal_move_reason(tmp_path: Path, answer: str) -> None:
    """White answers a null move at the start: Black wins, the reason quotes the line (its
    control characters shown as escapes)."""
    script = tmp_path / "nomove.py"
    script.write_text(_NO_MOVE % answer.replace("\x1b", "\\x1b").replace("\x07", "\\x07"))
    white = EngineConfig(name="nomove", argv=(sys.executable, str(script)), protocol="uci")
    black = bundled_uci("b", "--level", "1")
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.ILLEGAL_MOVE
    assert record.result.value == "0-1"
    quoted = f"bestmove {answer}".strip().replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert record.reason == f"White makes an illegal move: {quoted}"
