"""The runner's output must not change when its hot path is made cheaper (issue 17).

A short, fully deterministic match (the bundled engine, seeded, depth-limited, one game at a
time, CECP against UCI) is played through the CLI as users run it, with a SQLite store and a
PGN file. Its PGN and every stored row are compared with a golden file written by the code
before the performance work: byte for byte, once the parts that legitimately vary from run to
run (times, dates, temporary paths, the interpreter's path) are replaced by fixed marks.

Regenerate the golden file (only when the output is meant to change):

    python -m tests.test_same_games --write
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "data" / "same_games.golden"

# Two openings written here, so the test needs no shared data.
_BOOK = ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
         "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n")
# Tags and columns holding wall-clock times.
_TIME_TAGS = re.compile(r'^\[(Date|GameStartTime|GameEndTime|GameDuration) "[^"]*"\]$', re.M)
_MOVE_TIME = re.compile(r" \d+\.\d+s(?=[},])")
_TIME_COLUMNS = {"created_at", "finished_at", "started_at", "ended_at", "time_ms", "clock_ms",
                 "time_left_ms",
                 # a byte offset in the PGN file: it moves with the digits of earlier games'
                 # move times ("0.01s" or "0.012s") and the line breaks they cause
                 "pgn_offset"}


def _normalise_pgn(text: str, tmp: str) -> str:
    """The PGN with times marked and movetext re-joined (line breaks follow comment widths)."""
    text = _TIME_TAGS.sub(lambda m: f'[{m.group(1)} "*"]', text.replace(tmp, "<tmp>"))
    text = _MOVE_TIME.sub(" *s", text)
    games = []
    for chunk in text.strip().split("\n\n["):
        head, _, moves = chunk.partition("\n\n")
        games.append(head + "\n\n" + " ".join(moves.split()))
    return "\n\n[".join(games) + "\n"


def _normalise_value(column: str, value: object, tmp: str) -> object:
    """A stored value with times and machine paths replaced by marks."""
    if column in _TIME_COLUMNS:
        return None if value is None else "*"
    if column == "pgn" and isinstance(value, str):
        return _normalise_pgn(value, tmp)
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>").replace(sys.executable, "<python>")
    return value


def _dump_rows(db: Path, tmp: str) -> str:
    """Every row of the results tables, in key order, one JSON line per row."""
    lines = []
    with sqlite3.connect(db) as conn:
        for table, order in (("tournaments", "id"), ("engines", "id"), ("games", "id"),
                             ("moves", "game_id, ply")):
            cursor = conn.execute(f"SELECT * FROM {table} ORDER BY {order}")  # fixed names
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                values = {c: _normalise_value(c, v, tmp) for c, v in zip(columns, row, strict=True)}
                if table == "tournaments":
                    values["config"] = _normalise_value("config", values["config"], tmp)
                lines.append(f"{table} {json.dumps(values, sort_keys=True)}")
    return "\n".join(lines) + "\n"


def play_and_dump() -> str:
    """Play the fixed match through the CLI and return its normalised PGN and rows."""
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp, "book.epd")
        book.write_text(_BOOK)
        argv = [sys.executable, "-m", "runner", "match",
                "--engine", "cmd=python -m engine --level 3 --seed 1", "name=a",
                "--engine", "cmd=python -m engine --uci --level 3 --seed 2", "name=b", "proto=uci",
                "--each", "depth=2", "--openings", f"file={book}", "--games", "2",
                "--concurrency", "1", "--name", "golden", "--pgnout", f"{tmp}/out.pgn",
                "--db", f"{tmp}/out.db", "--quiet"]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        pgn = _normalise_pgn(Path(tmp, "out.pgn").read_text(), tmp)
        return "=== PGN\n" + pgn + "=== ROWS\n" + _dump_rows(Path(tmp, "out.db"), tmp)


def test_pgn_and_rows_match_the_golden_file() -> None:
    """Same moves, SAN, scores, depths, nodes, endings, tags and rows as before the speed work."""
    got = play_and_dump()
    want = GOLDEN.read_text()
    assert got.splitlines() == want.splitlines()


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        GOLDEN.write_text(play_and_dump())
        print(f"wrote {GOLDEN}")
    else:
        sys.exit("usage: python -m tests.test_same_games --write")
