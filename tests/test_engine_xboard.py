"""The bundled engine under XBoard itself (Debian's xboard on a virtual X screen from xvfb).

XBoard is the reference CECP host: it plays two instances of our engine in match mode and
saves the games, which our PGN reader then replays move by move. Its debug file is the
transcript: an engine complaint ("Error", "Illegal move") or a forfeit fails the test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_binary

from runner.pgn.reader import read_games
from runner.rules import Board

REPO = Path(__file__).resolve().parents[1]
_RESULTS = {"1-0", "0-1", "1/2-1/2"}
# How XBoard words the endings we must never cause (time loss, illegal move, crash, false claim).
_BAD_ENDINGS = ("flag fell", "illegal", "forfeit", "crash", "exit", "false", "disconnect")


def _xboard() -> tuple[str, str]:
    return require_binary("xboard"), require_binary("xvfb-run")


def _engine(level: int) -> str:
    return f"{sys.executable} -m engine --level {level}"


def _match(tmp_path: Path, games: int, *extra: str) -> tuple[list, str]:
    """Play `games` games of level 1 against level 2 in XBoard's match mode; (games, debug)."""
    xboard, xvfb_run = _xboard()
    pgn, debug = tmp_path / "games.pgn", tmp_path / "debug.txt"
    command = [
        xvfb_run, "-a", xboard,
        "-fcp", _engine(1), "-fd", str(REPO), "-scp", _engine(2), "-sd", str(REPO),
        "-mg", str(games), "-tc", "0:10", "-sgf", str(pgn),
        "-popupExitMessage", "false", "-autoCallFlag", "true",
        "-debug", "-nameOfDebugFile", str(debug), *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=170, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    read = list(read_games(pgn))
    return read, debug.read_text(errors="replace")


def _check(games: list, debug: str, expected: int) -> None:
    assert len(games) == expected, [g.tags for g in games]
    for game in games:
        assert game.ok, game.error
        assert game.result in _RESULTS, game.tags
        assert game.tags.get("Result") == game.result
        ending = game.moves[-1].comment.lower() if game.moves else ""
        assert not any(word in ending for word in _BAD_ENDINGS), ending
        final = Board(game.final_fen, chess960=game.chess960)
        if "checkmate" in ending:
            assert final.is_checkmate(), game.final_fen
        if "stalemate" in ending:
            assert final.is_stalemate(), game.final_fen
    complaints = [line for line in debug.splitlines()
                  if (" <first :" in line or " <second :" in line)
                  and ("Error" in line or "Illegal move" in line or "tellusererror" in line)]
    assert complaints == [], complaints[:10]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_xboard_plays_a_two_game_match_between_our_levels(tmp_path):
    games, debug = _match(tmp_path, 2)
    _check(games, debug, 2)
    # XBoard alternates colors in match mode: each level had white once.
    assert {games[0].tags["White"], games[1].tags["White"]} == {
        games[0].tags["White"], games[0].tags["Black"]}


@pytest.mark.slow  # CI time: about 12 s; XBoard plays our engine in two other fast tests
@pytest.mark.timeout(180)
def test_xboard_plays_chess960_with_our_engine(tmp_path):
    games, debug = _match(tmp_path, 1, "-variant", "fischerandom")
    _check(games, debug, 1)
    assert games[0].tags.get("Variant", "").lower() == "fischerandom"
    assert games[0].chess960
    assert "variant fischerandom" in debug


@pytest.mark.timeout(180)
def test_xboard_starts_our_engine_from_a_loaded_position(tmp_path):
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
    (tmp_path / "start.fen").write_text(fen + "\n")
    games, debug = _match(tmp_path, 1, "-lpf", str(tmp_path / "start.fen"), "-lpi", "1")
    _check(games, debug, 1)
    assert games[0].start_fen.split()[:4] == fen.split()[:4]
    assert "setboard " + " ".join(fen.split()[:4]) in debug
