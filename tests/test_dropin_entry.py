"""The drop-in entry points end to end with stockfish (issue 28): ``runner-fastchess`` and
``runner-cutechess`` as the console scripts start them, and ``runner fastchess`` /
``runner cutechess``, on the peers' own command lines:

- a run prints the peer's closing lines, writes its PGN and stores every game in the
  runner's database (``runner list`` sees the run);
- SIGINT in the middle ends the run with the peer's summary and no engine left; the same
  command line again plays only the missing games, and the summary counts them all.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, shared_file

pytestmark = pytest.mark.timeout(600)

STOCKFISH = shutil.which("stockfish", path=os.environ.get("PATH", "") + ":/usr/games")
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
ENTRY = "import sys; from runner.dropin.main import {0}; sys.argv[0] = 'runner-{0}'; {0}()"
"""What the console script ``runner-PEER`` runs."""


def _env(db: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "RUNNER_DB": str(db)}


def _argv(how: str, peer: str, words: list[str]) -> list[str]:
    if how == "script":
        return [sys.executable, "-c", ENTRY.format(peer), *words]
    return [sys.executable, "-m", "runner", peer, *words]


def _words(peer: str, tmp_path: Path, *, rounds: int, limit: str) -> list[str]:
    book = shared_file("books", "noob_3moves.epd")
    proto = ["proto=uci"] if peer == "cutechess" else []
    pgn = [f"file={tmp_path / 'x.pgn'}"] if peer == "fastchess" else [str(tmp_path / "x.pgn")]
    return ["-engine", f"cmd={STOCKFISH}", "name=a", *proto,
            "-engine", f"cmd={STOCKFISH}", "name=b", *proto,
            "-each", "tc=inf", limit, "-games", "2", "-rounds", str(rounds),
            "-openings", f"file={book}", "format=epd", "order=random", "-srand", "7",
            "-pgnout", *pgn]


def _played_in_pgn(path: Path) -> int:
    """Games of a PGN file with a result (cutechess-cli also writes the game a stop cut
    short, as ``*`` with the termination ``unterminated``)."""
    text = path.read_text()
    return text.count("[Event ") - text.count('[Termination "unterminated"]')


def _stored(db: Path) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute(
            "select job_index from games where status = 'done' order by job_index")]


@needs_stockfish
@pytest.mark.parametrize(("how", "peer"), [("script", "fastchess"), ("runner", "fastchess"),
                                           ("script", "cutechess"), ("runner", "cutechess")])
def test_an_entry_point_plays_prints_writes_and_stores(tmp_path: Path, how: str,
                                                       peer: str) -> None:
    db = tmp_path / "r.db"
    done = subprocess.run(_argv(how, peer, _words(peer, tmp_path, rounds=2, limit="depth=1")),
                          cwd=tmp_path, env=_env(db), capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Finished game") == 4
    assert "Finished match" in done.stdout
    assert (tmp_path / "x.pgn").read_text().count("[Event ") == 4
    assert _stored(db) == [0, 1, 2, 3]
    listed = subprocess.run([sys.executable, "-m", "runner", "list", "--db", str(db)],
                            cwd=tmp_path, env=_env(db), capture_output=True, text=True,
                            timeout=100)
    assert listed.returncode == 0 and f"{peer} a vs b" in listed.stdout, listed.stdout


@needs_stockfish
# The same stop and resume through either drop-in: the second with the slow tests.
@pytest.mark.parametrize("peer", ["fastchess", pytest.param("cutechess", marks=pytest.mark.slow)])
def test_sigint_then_the_same_command_line_plays_only_the_missing_games(tmp_path: Path,
                                                                        peer: str) -> None:
    db = tmp_path / "r.db"
    # Deep enough that a game is still running when the signal comes.
    argv = _argv("script", peer, _words(peer, tmp_path, rounds=2, limit="depth=9"))
    out = tmp_path / "first.txt"
    with open(out, "wb") as file:
        first = subprocess.Popen(argv, cwd=tmp_path, env=_env(db), stdout=file,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
    deadline = time.monotonic() + 200
    while "Finished game 2 " not in out.read_text(errors="replace"):
        assert first.poll() is None and time.monotonic() < deadline, out.read_text()
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    first.wait(60)
    text = out.read_text()
    assert "Finished match" in text  # the peer's closing lines
    kept = _stored(db)
    assert 2 <= len(kept) < 4
    assert _played_in_pgn(tmp_path / "x.pgn") == len(kept)
    children = subprocess.run(["pgrep", "-s", str(first.pid)], capture_output=True, text=True)
    assert children.stdout.strip() == ""  # nothing left in the run's session

    again = subprocess.run(argv, cwd=tmp_path, env=_env(db), capture_output=True, text=True,
                           timeout=280)
    assert again.returncode == 0, again.stdout + again.stderr
    started = {int(line.split()[2]) for line in again.stdout.splitlines()
               if line.startswith("Started game")}
    assert started == {n for n in range(1, 5) if n - 1 not in kept}
    assert _stored(db) == list(range(4))
    assert _played_in_pgn(tmp_path / "x.pgn") == 4
    if peer == "fastchess":
        assert "Games: 4," in again.stdout  # the results count the stored games too
    else:
        assert again.stdout.rstrip().splitlines()[-1] == "Finished match"
