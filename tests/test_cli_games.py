"""`runner play` and `runner engine check` end to end: a real runner process, real engine pipes.

The bundled engine plays both sides (CECP, and UCI for the check), so nothing is skipped.
"""

from __future__ import annotations

import io
import subprocess
import sys

import chess.pgn
import pytest
from conftest import REPO

from runner.pgn.reader import parse_games

BUNDLED = [f"cmd={sys.executable}", "arg=-m", "arg=engine", f"dir={REPO}"]


def _runner(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


@pytest.mark.timeout(180)
def test_play_prints_one_game_as_pgn_from_the_given_moves() -> None:
    done = _runner("play", "--engine", *BUNDLED, "arg=--level", "arg=1", "name=one",
                   "--engine", *BUNDLED, "arg=--level", "arg=2", "name=two",
                   "--each", "tc=5+0.05", "--moves", "e2e4,e7e5", "--maxmoves", "15")
    assert done.returncode == 0, done.stderr
    ours = parse_games(done.stdout)
    assert len(ours) == 1 and ours[0].ok
    game = ours[0]
    assert game.tags["White"] == "one" and game.tags["Black"] == "two"
    assert game.result in ("1-0", "0-1", "1/2-1/2") and game.tags["Result"] == game.result
    assert game.uci_moves[:2] == ["e2e4", "e7e5"] and len(game.uci_moves) > 2
    # python-chess reads the same game: the same moves, the same result.
    theirs = chess.pgn.read_game(io.StringIO(done.stdout))
    assert theirs is not None and not theirs.errors
    assert [move.uci() for move in theirs.mainline_moves()] == game.uci_moves
    assert theirs.headers["Result"] == game.result


@pytest.mark.timeout(60)
def test_play_without_two_engines_is_a_usage_error() -> None:
    done = _runner("play", "--engine", *BUNDLED, "--each", "tc=1+0.01")
    assert done.returncode == 2
    assert "engine" in done.stderr.lower()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("proto", ["cecp", "uci"])
def test_engine_check_shows_the_engine_and_plays_a_legal_move(proto: str) -> None:
    extra = ["--uci"] if proto == "uci" else []
    done = _runner("engine", "check", "--proto", proto, "--movetime", "0.3", "--",
                   sys.executable, "-m", "engine", *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert ("myname" in out) if proto == "cecp" else ("UCI_Chess960" in out)  # features / options
    assert "ping:" in out
    assert "legal (" in out and "illegal" not in out


@pytest.mark.timeout(60)
def test_play_with_an_engine_that_does_not_start_says_so_in_one_line() -> None:
    done = _runner("play", "--engine", *BUNDLED, "name=fine", "--engine", "cmd=/bin/false",
                   "name=gone", "--each", "tc=1+0.01")
    assert done.returncode == 1, done.stderr
    assert "engine gone did not start" in done.stderr and "Traceback" not in done.stderr
