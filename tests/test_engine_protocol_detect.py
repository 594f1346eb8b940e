"""Engines given without proto= (issue 31): their protocol is asked before game 1, and a run in
which an engine loses every game before its first move stops with one line, not a score."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_binary

pytestmark = pytest.mark.timeout(300)


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=280, env={**os.environ, "PYTHONPATH": str(REPO)})


def _stored_protocols(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as connection:
        (config,) = connection.execute("SELECT config FROM tournaments").fetchone()
    data = config if isinstance(config, dict) else json.loads(config)
    return {engine["name"]: engine["protocol"] for engine in data["engines"]}


def test_engines_without_proto_are_asked_and_played_in_their_protocol(tmp_path: Path) -> None:
    stockfish, fairymax = require_binary("stockfish"), require_binary("fairymax")
    pgn = tmp_path / "out.pgn"
    done = _runner("match", "--engine", f"cmd={stockfish}", "name=sf", "option.Threads=1",
                   "--engine", f"cmd={fairymax}", "name=fm", "--each", "tc=5+0.05",
                   "--games", "2", "--maxmoves", "20", "--pgnout", str(pgn),
                   "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # Said once per engine, on stderr, before the first game.
    said = [line for line in done.stderr.splitlines() if "has no proto=" in line]
    assert len(said) == 2, done.stderr
    assert "'sf'" in said[0] and "UCI engine" in said[0]
    assert "'fm'" in said[1] and "CECP" in said[1]
    assert done.stderr.index("has no proto=") < done.stderr.index("Started game 1")
    # Both engines moved in both games (stockfish spoken to in CECP never does).
    games = pgn.read_text().split("[Event ")[1:]
    assert len(games) == 2
    for game in games:
        plies = int(re.search(r'\[PlyCount "(\d+)"\]', game)[1])  # type: ignore[index]
        assert plies >= 2, game
    # The detected protocol is part of the stored configuration.
    assert _stored_protocols(tmp_path / "r.db") == {"sf": "uci", "fm": "cecp"}


def test_an_engine_that_never_moves_stops_the_run_without_a_score(tmp_path: Path) -> None:
    # Stockfish told to speak CECP: every game it is in ends before its first move.
    stockfish, fairymax = require_binary("stockfish"), require_binary("fairymax")
    done = _runner("match", "--engine", f"cmd={stockfish}", "name=sf", "proto=cecp",
                   "--engine", f"cmd={fairymax}", "name=fm", "proto=cecp",
                   "--each", "tc=1+0.01", "--games", "10", "--db", str(tmp_path / "r.db"),
                   cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "has no proto=" not in done.stderr  # given: not asked
    text = " ".join(done.stderr.split())  # whatever the width it was wrapped at
    assert text.count("error:") == 1
    assert "error: engine 'sf' lost 2 games without making a move" in text
    assert "Elo difference" not in done.stdout and "Run the same command" not in done.stderr


@pytest.mark.parametrize(("fen", "book", "own", "moved"), [
    (None, 0, 0, (False, False)),
    (None, 0, 1, (True, False)),
    (None, 1, 1, (False, True)),        # after 1. e4 from the book, black moved, white did not
    (None, 2, 2, (True, True)),
    ("4k3/8/8/8/8/8/8/4K2R b K - 0 1", 0, 1, (False, True)),
    ("4k3/8/8/8/8/8/8/4K2R b K - 0 1", 1, 1, (True, False)),
])
def test_sides_that_moved_count_engine_moves_not_book_moves(
        fen: str | None, book: int, own: int, moved: tuple[bool, bool]) -> None:
    from datetime import UTC, datetime

    from runner.clock import TimeControl
    from runner.game.record import GameRecord, GameSpec, GameTermination
    from runner.pgn.writer import MoveRecord
    from runner.tournament.silence import Silence, sides_that_moved

    tc = TimeControl.parse("1+0")
    moves = tuple(MoveRecord("x", book=i < book) for i in range(book + own))
    now = datetime.now(UTC)
    record = GameRecord("w", "b", GameSpec(tc, tc, start_fen=fen), moves, "1-0",
                        GameTermination.TIME_FORFEIT, "Black loses on time", now, now, "")
    assert sides_that_moved(record) == moved
    # Only the loser that never moved counts; two such games stop the run.
    silence = Silence()
    assert silence.add(record) is None
    stop = silence.add(record)
    assert (stop is not None and "engine 'b' lost 2 games" in stop) == (not moved[1])
    # A false claim at its first move is the engine's own play, not a sign that it is silent.
    claimed = dataclasses.replace(record, termination=GameTermination.FALSE_CLAIM)
    silence = Silence()
    assert silence.add(claimed) is None and silence.add(claimed) is None


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("program", "protocol"), [
    ("stockfish", "uci"),   # answers xboard with "Unknown command: 'xboard'"
    ("glaurung", "uci"),    # "Unknown command: xboard", no quotes
    ("toga2", "uci"),       # says nothing to xboard: only the uci handshake tells
    ("fairymax", "cecp"),
    ("sjeng", "cecp"),
    ("phalanx", "cecp"),
])
def test_each_debian_engine_is_told_apart(tmp_path: Path, program: str, protocol: str) -> None:
    import asyncio

    from runner.cli.vocabulary import read_arguments
    from runner.tournament.protocols import resolve_protocols

    path = require_binary(program)
    config = read_arguments(["--engine", f"cmd={path}", "name=x", "--engine", f"cmd={path}",
                             "name=y", "proto=cecp", "--each", "tc=1+0"], "match").config()
    said: list[str] = []
    resolved = asyncio.run(resolve_protocols(config, said.append))
    assert [e.protocol.value for e in resolved.engines] == [protocol, "cecp"]
    assert not any(e.protocol_detect for e in resolved.engines)
    assert len(said) == 1 and said[0].startswith("engine 'x' has no proto=")
