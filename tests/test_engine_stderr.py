"""An engine's standard error is kept with a game it crashed in (issue 43): bounded, per game
and engine, stored (SQLite and PostgreSQL through the same rows) and shown by the service's
game view; a game that ended otherwise keeps none. Played with the bundled engine's faults."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from runner.service.gameview import game_view
from runner.store.store import Store


def test_a_crashing_engine_s_stderr_is_kept_with_the_game_and_shown(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    argv = [sys.executable, "-m", "runner", "match",
            "--engine", "cmd=python -m engine --level 1 --fault stderr@2,crash@2", "name=bad",
            "--engine", "cmd=python -m engine --level 1", "name=good",
            "--each", "tc=10+0.1", "--games", "2", "--concurrency", "1",
            "--db", str(db), "--quiet"]
    done = subprocess.run(argv, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select g.job_index, w.name, g.termination, g.white_stderr, g.black_stderr "
            "from games g join engines w on w.id = g.white_id order by g.job_index").fetchall()
    assert len(rows) == 2
    for _index, white, termination, white_err, black_err in rows:
        assert termination == "disconnect"
        bad, good = (white_err, black_err) if white == "bad" else (black_err, white_err)
        assert bad is not None and "assertion failed in search before own move 2" in bad
        assert good is None
    store = Store.open_read_only(f"sqlite:///{db}")
    try:
        view = game_view(store, 1, rows[0][0])
    finally:
        store.close()
    assert view is not None
    shown = view.white_stderr if rows[0][1] == "bad" else view.black_stderr
    assert shown is not None and "assertion failed" in shown


@pytest.mark.slow  # about 10 s; the fast test checks the quiet engine keeps none
def test_a_game_that_ends_by_the_rules_keeps_no_stderr(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    argv = [sys.executable, "-m", "runner", "match",
            "--engine", "cmd=python -m engine --level 1 --fault stderr@1", "name=noisy",
            "--engine", "cmd=python -m engine --level 1", "name=quiet",
            "--each", "depth=1", "--games", "2", "--concurrency", "1", "--maxmoves", "6",
            "--db", str(db), "--quiet"]
    done = subprocess.run(argv, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select termination, white_stderr, black_stderr from games").fetchall()
    assert len(rows) == 2
    assert all(t != "disconnect" and w is None and b is None for t, w, b in rows), rows
