"""The report's search figures per engine (depth, time per move, nodes per second), summed
over each engine's own moves by one query, checked against the stored moves counted here."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _runner(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=300)


def _expected(db: Path) -> dict[str, dict[str, float]]:
    """Each engine's own moves' sums, from the games and moves tables directly: ply 1 is
    the move of the side to move in the opening's FEN."""
    sums: dict[str, dict[str, float]] = {}
    with sqlite3.connect(db) as conn:
        names = dict(conn.execute("select id, name from engines"))
        games = conn.execute("select id, white_id, black_id, opening_fen from games "
                             "where status = 'done'").fetchall()
        for game_id, white, black, fen in games:
            white_first = fen is None or fen.split()[1] == "w"
            for ply, time_ms, depth, nodes in conn.execute(
                    "select ply, time_ms, depth, nodes from moves where game_id = ? "
                    "and time_ms is not null", (game_id,)):
                mover = white if (ply % 2 == 1) == white_first else black
                own = sums.setdefault(names[mover], {"moves": 0, "depth": 0, "depths": 0,
                                                     "time": 0, "nodes": 0, "node_time": 0})
                own["moves"] += 1
                own["time"] += time_ms
                if depth is not None:
                    own["depth"] += depth
                    own["depths"] += 1
                if nodes is not None:
                    own["nodes"] += nodes
                    own["node_time"] += time_ms
    return sums


def test_search_figures_are_each_engine_s_own_moves(tmp_path: Path) -> None:
    # Openings with Black to move: the mover of ply 1 is Black, which the query must know.
    (tmp_path / "book.epd").write_text(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    (tmp_path / "t.toml").write_text(
        'name = "s"\nformat = "gauntlet"\nrounds = 1\ngames = 2\ntc = "10+0.1"\n'
        'concurrency = 2\n'
        '[[engines]]\nname = "one"\ncommand = ["python", "-m", "engine", "--level", "1"]\n'
        '[[engines]]\nname = "two"\ncommand = ["python", "-m", "engine", "--level", "2"]\n'
        '[[engines]]\nname = "rnd"\ncommand = ["python", "-m", "engine", "--level", "random"]\n'
        '[openings]\nfile = "book.epd"\n[adjudication]\nmaxmoves = 10\n')
    db = tmp_path / "r.db"
    assert _runner(tmp_path, "run", "t.toml", "--db", f"sqlite:///{db}", "--quiet").returncode == 0
    done = _runner(tmp_path, "report", "--format", "json", "--db", f"sqlite:///{db}")
    assert done.returncode == 0, done.stderr
    search = {s["engine"]: s for s in json.loads(done.stdout)["search"]}
    expected = _expected(db)
    assert set(search) == set(expected) == {"one", "two", "rnd"}
    for name, own in expected.items():
        got = search[name]
        assert got["moves"] == own["moves"], name
        assert got["mean_time_ms"] == own["time"] / own["moves"]
        assert got["mean_depth"] == (own["depth"] / own["depths"] if own["depths"] else None)
        assert got["nps"] == (own["nodes"] * 1000 / own["node_time"] if own["node_time"]
                              else None)
    text = _runner(tmp_path, "report", "--db", f"sqlite:///{db}")
    assert "Search per engine" in text.stdout, text.stdout
