"""`runner tb probe` and `runner tb check` end to end: the real `runner` command on the shared tables.

Values are checked against python-chess's probe (the test oracle) on the same tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA

chess = pytest.importorskip("chess")
syzygy = pytest.importorskip("chess.syzygy")

TB_DIR = SHARED_DATA / "syzygy"
pytestmark = pytest.mark.skipif(
    not TB_DIR.is_dir(), reason=f"Syzygy tables absent: expected {TB_DIR} (../shared/data/syzygy)")

FENS = [
    "8/2K5/4B3/3N4/8/8/4k3/8 b - - 0 1",  # KBNvK, black loses
    "4k3/8/8/8/8/8/8/4K2R w - - 0 1",  # KRvK
    "3K4/5k2/8/4pP2/8/8/8/8 w - e6 1 1",  # KPvKP: en passant saves the draw
    "8/8/8/8/8/8/8/K1k5 w - - 0 1",  # bare kings
]


def _runner(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


@pytest.mark.timeout(150)
def test_probe_json_matches_python_chess() -> None:
    """--json: one object per position with fen, wdl, dtz and a best move keeping the result."""
    done = _runner("tb", "probe", "--tb", str(TB_DIR), "--json", *FENS,
                   "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["fen"] for line in lines] == [*FENS, lines[-1]["fen"]]
    with syzygy.open_tablebase(str(TB_DIR)) as oracle:
        for line in lines[:-1]:
            board = chess.Board(line["fen"])
            assert (line["wdl"], line["dtz"]) == (oracle.probe_wdl(board), oracle.probe_dtz(board))
            assert set(line) == {"fen", "wdl", "dtz", "move"}
            if line["move"] is None:
                assert not any(board.legal_moves)
                continue
            move = chess.Move.from_uci(line["move"])
            assert move in board.legal_moves
            board.push(move)
            after = -oracle.probe_wdl(board)
            assert (after > 0) - (after < 0) == (line["wdl"] > 0) - (line["wdl"] < 0)
    # The starting position has castling rights and 32 pieces: unknown, all null.
    assert lines[-1] == {"fen": lines[-1]["fen"], "wdl": None, "dtz": None, "move": None}


@pytest.mark.timeout(150)
def test_probe_text_shows_wdl_dtz_and_the_move_in_san_and_uci() -> None:
    done = _runner("tb", "probe", "--tb", str(TB_DIR), FENS[0], FENS[3])
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith(FENS[0]) and "WDL -2 (loss)" in first and "DTZ -53" in first
    # Every black king move loses as slowly: the first such is shown, SAN then UCI.
    assert "best K" in first and "(e2" in first
    assert "WDL 0 (draw), DTZ 0" in second


@pytest.mark.timeout(150)
def test_probe_errors_name_the_fen_field_or_directory(tmp_path: Path) -> None:
    bad = "8/8/8/8/8/8/8/K1k5 x - - 0 1"
    done = _runner("tb", "probe", "--tb", str(TB_DIR), bad)
    assert done.returncode == 2
    assert bad in done.stderr and "side to move" in done.stderr
    missing = tmp_path / "no-such-dir"
    done = _runner("tb", "probe", "--tb", f"{TB_DIR}:{missing}", FENS[0])
    assert done.returncode == 2 and str(missing) in done.stderr.replace("\n", "")


@pytest.mark.timeout(150)
def test_check_lists_tables_by_piece_count_and_completeness(tmp_path: Path) -> None:
    done = _runner("tb", "check", str(TB_DIR))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "3 pieces: 5/5 WDL, 5/5 DTZ" in out and "4 pieces: 30/30 WDL, 30/30 DTZ" in out
    assert "  KRvKN (wdl+dtz)" in out and "complete up to 4 pieces" in out
    # Only the 3-piece WDL tables (one missing): no complete piece count.
    for name in ("KQvK", "KRvK", "KBvK", "KNvK"):
        (tmp_path / f"{name}.rtbw").symlink_to(TB_DIR / f"{name}.rtbw")
    done = _runner("tb", "check", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "3 pieces: 4/5 WDL, 0/5 DTZ" in done.stdout and "KQvK (wdl)" in done.stdout
    assert "complete for no piece count" in done.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _runner("tb", "check", str(empty))
    assert done.returncode == 1 and "no Syzygy tables" in done.stderr
    done = _runner("tb", "check", str(tmp_path / "absent"))
    assert done.returncode == 2 and "absent" in done.stderr
