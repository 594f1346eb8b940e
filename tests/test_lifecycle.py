"""The lifecycle rules users see, on real runner processes and the bundled engine (issue 27):

- the same ``runner match`` words run again continue the match they interrupted and play
  only the missing games (the PGN file holds each game once);
- ``runner run --force`` after a change keeps the stored games and plays only what the change
  adds, a finished tournament included; on a finished one with no change it plays nothing;
- after ``kill -9`` of a run, ``runner list`` shows the tournament interrupted with no game
  running.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.timeout(180)

PY = sys.executable


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=150, env=_env())


class _Started:
    """A runner process started in the background, its stderr in a file."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.err = cwd / f"stderr-{time.monotonic_ns()}.txt"
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([PY, "-m", "runner", *args], cwd=cwd, env=_env(),
                                         stdout=subprocess.DEVNULL, stderr=err,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_for(self, text: str, seconds: float = 90.0) -> None:
        """Wait until `text` is on the runner's stderr (an event, never a time bound)."""
        deadline = time.monotonic() + seconds
        while text not in self.err.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no {text!r}:\n{self.err.read_text(errors='replace')}")
            time.sleep(0.05)


def _tournaments(db: Path) -> list[tuple[int, str, int]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select id, status, total_games from tournaments order by id").fetchall()


def _done(db: Path) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute(
            "select job_index from games where status = 'done' order by job_index")]


def _engine(name: str, level: str, seed: int) -> list[str]:
    return ["--engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", f"arg={level}",
            "arg=--seed", f"arg={seed}", f"name={name}"]


def test_the_same_match_words_run_again_continue_the_interrupted_match(tmp_path):
    db = tmp_path / "r.db"
    pgn = tmp_path / "games.pgn"
    words = ["match", *_engine("one", "1", 1), *_engine("greedy", "greedy", 2),
             "--each", "tc=10+0.1", "--rounds", "4", "--games", "2", "--maxmoves", "40",
             "--concurrency", "1", "--db", str(db), "--pgnout", str(pgn), "--name", "again"]
    first = _Started(words, tmp_path)
    first.wait_for("Finished game 2")
    first.proc.send_signal(signal.SIGINT)  # once: the running game finishes, none starts
    assert first.proc.wait(90) == 128 + signal.SIGINT
    played = _done(db)
    assert 2 <= len(played) < 8, played

    again = _runner(*words, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{len(played)} of 8 games already played" in again.stderr
    assert [status for _id, status, _total in _tournaments(db)] == ["finished"]
    assert _done(db) == list(range(8))
    text = pgn.read_text()
    rounds = [line for line in text.splitlines() if line.startswith("[Round ")]
    assert text.count("[Event ") == 8 and len(set(rounds)) == 8, rounds


def test_the_default_name_is_the_same_for_the_same_words(tmp_path):
    """Without --name the match is still found again: its name is not the time it started."""
    db = tmp_path / "r.db"
    words = ["match", *_engine("one", "1", 1), *_engine("greedy", "greedy", 2),
             "--each", "tc=10+0.1", "--rounds", "1", "--maxmoves", "40", "--db", str(db),
             "--quiet"]
    assert _runner(*words, cwd=tmp_path).returncode == 0
    with sqlite3.connect(db) as conn:
        (name,) = conn.execute("select name from tournaments").fetchone()
    assert name == "match one vs greedy"


def _config(tmp_path: Path, rounds: int) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "forced"\nformat = "match"\nrounds = {rounds}\ngames = 2\ntc = "10+0.1"\n'
        'concurrency = 1\n\n[adjudication]\nmaxmoves = 40\n\n'
        '[[engines]]\nname = "one"\ncommand = ["python", "-m", "engine", "--level", "1"]\n\n'
        '[[engines]]\nname = "greedy"\ncommand = ["python", "-m", "engine", "--level", '
        '"greedy"]\n')
    return path


def test_force_on_a_finished_tournament_plays_only_what_the_change_adds(tmp_path):
    db = tmp_path / "r.db"
    config = _config(tmp_path, rounds=1)
    assert _runner("run", str(config), "--db", str(db), "--quiet", cwd=tmp_path).returncode == 0
    assert _done(db) == [0, 1]
    with sqlite3.connect(db) as conn:
        before = conn.execute("select id, job_index, pgn from games order by id").fetchall()

    # No change: a finished tournament stays finished, forced or not; nothing is played.
    same = _runner("run", str(config), "--db", str(db), "--quiet", "--force", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert "already finished" in same.stderr
    assert _tournaments(db) == [(1, "finished", 2)]

    config = _config(tmp_path, rounds=2)
    more = _runner("run", str(config), "--db", str(db), "--quiet", "--force", cwd=tmp_path)
    assert more.returncode == 0, more.stderr
    assert "2 in this run" in more.stderr
    assert _tournaments(db) == [(1, "finished", 4)]
    assert _done(db) == [0, 1, 2, 3]
    with sqlite3.connect(db) as conn:
        kept = conn.execute("select id, job_index, pgn from games where id in (?, ?) order by id",
                            [before[0][0], before[1][0]]).fetchall()
    assert kept == before  # the games played before the change stand as they were


def test_force_after_fewer_rounds_excludes_the_games_that_no_longer_fit(tmp_path):
    db = tmp_path / "r.db"
    assert _runner("run", str(_config(tmp_path, rounds=2)), "--db", str(db), "--quiet",
                   cwd=tmp_path).returncode == 0
    fewer = _runner("run", str(_config(tmp_path, rounds=1)), "--db", str(db), "--quiet",
                    "--force", cwd=tmp_path)
    assert fewer.returncode == 0, fewer.stderr
    assert "0 in this run" in fewer.stderr
    assert _tournaments(db) == [(1, "finished", 2)]
    with sqlite3.connect(db) as conn:
        statuses = sorted(s for (s,) in conn.execute("select status from games"))
    assert statuses == ["done", "done", "excluded", "excluded"]


def test_list_after_kill_9_shows_the_tournament_interrupted_with_no_game_running(tmp_path):
    db = tmp_path / "r.db"
    # An engine that hangs on its first move: both games are being played when the runner
    # is killed.
    words = ["match", *_engine("one", "1", 1), *_engine("hangs", "1", 2), "arg=--fault",
             "arg=hang@1", "--each", "tc=60+0", "--rounds", "4", "--games", "2",
             "--concurrency", "2", "--db", str(db), "--name", "killed"]
    run = _Started(words, tmp_path)
    run.wait_for("Started game 2")
    with sqlite3.connect(db) as conn:  # both games are marked running before the kill
        deadline = time.monotonic() + 60
        while conn.execute("select count(*) from games where status = 'running'"
                           ).fetchone()[0] < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(30)

    listed = _runner("list", "--db", str(db), cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "killed" in line)
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[2:5] == ["interrupted", "0/8", "0"], cells


def test_help_tells_the_rules(tmp_path):
    """``--help`` says what running the same words again, and --force, do."""
    match = _runner("match", "--help", cwd=tmp_path)
    assert "same tournament" in " ".join(match.stdout.split())
    run = _runner("run", "--help", cwd=tmp_path)
    assert "only the games the change adds" in " ".join(run.stdout.replace("│", " ").split())
