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


@pytest.mark.slow
def test_an_engine_that_never_moves_stops_the_run_without_a_score(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    # The report and the list say why it stopped instead of scoring the two stored games.
    db = ["--db", str(tmp_path / "r.db")]
    report = _runner("report", *db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    text = " ".join(report.stdout.split())
    assert "No standings or Elo: the tournament stopped because engine 'sf' lost 2 games " \
        "without making a move" in text, report.stdout
    assert "Standings" not in text and "Elo (W/D/L)" not in text and "LOS" not in text
    assert "Terminations" in text  # what happened in the games is still told
    data = json.loads(_runner("report", *db, "--format", "json", cwd=tmp_path).stdout)
    assert data["tournament"]["stopped"].startswith("engine 'sf' lost 2 games")
    assert data["standings"] == [] and data["pairings"] == [] and data["sprt"] is None
    html = _runner("report", *db, "--format", "html", cwd=tmp_path).stdout
    assert "No standings or Elo" in html and "<h2>Standings</h2>" not in html
    monkeypatch.setenv("COLUMNS", "300")  # the list is a table: one row a line
    listed = _runner("list", *db, cwd=tmp_path)
    assert "interrupted: engine 'sf' never moved" in " ".join(listed.stdout.split()), \
        listed.stdout


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
    from runner.store.origin import never_moved
    from runner.tournament.silence import Silence, sides_that_moved
    from runner.types import MoveRecord

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
    # The report and the list know such a stop by its stored reason.
    assert never_moved(stop) == (None if moved[1] else "'b'")
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


def _plies(pgn: str) -> list[int]:
    return [int(n) for n in re.findall(r'\[PlyCount "(\d+)"\]', pgn)]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("program", ["glaurung", "toga2", "stockfish"])
def test_runner_play_asks_an_engine_without_proto(tmp_path: Path, program: str) -> None:
    # `runner play` used to speak CECP to them: no move, a game lost before it began.
    path, fairymax = require_binary(program), require_binary("fairymax")
    done = _runner("play", "--engine", f"cmd={path}", "name=x", "--engine", f"cmd={fairymax}",
                   "name=fm", "--each", "tc=5+0.05", "--maxmoves", "6", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "has no proto=" in line]
    assert len(said) == 2 and "'x'" in said[0] and "UCI engine" in said[0], done.stderr
    assert "'fm'" in said[1] and "CECP" in said[1]
    assert _plies(done.stdout) and _plies(done.stdout)[0] >= 2, done.stdout


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("program", "uci"), [
    ("glaurung", True), ("toga2", True), ("stockfish", True), ("fairymax", False)])
def test_engine_check_uses_the_same_detection(tmp_path: Path, program: str, uci: bool) -> None:
    # Its own check missed glaurung's "Unknown command: xboard" and toga2's silence.
    path = require_binary(program)
    done = _runner("engine", "check", "--movetime", "0.2", "--", path, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("answers like a UCI engine" in done.stderr) == uci, done.stderr
    assert ("id name:" in done.stdout) == uci, done.stdout
    assert re.search(r"move from the start position: \S+ legal", done.stdout), done.stdout


def test_engine_check_of_a_program_that_exits_says_so_once(tmp_path: Path) -> None:
    # Asking its protocol left a UCI waiter's exception unretrieved: asyncio printed it.
    done = _runner("engine", "check", "--", "/bin/false", cwd=tmp_path)
    assert done.returncode == 1
    assert "engine failed: engine terminated (exit code 1)" in done.stdout, done.stdout
    assert "never retrieved" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_submitted_engine_without_protocol_is_asked_once(tmp_path: Path) -> None:
    # The service's engines file may give no protocol: a submission used to get CECP.
    from runner.config.model import Protocol
    from runner.service.declared import DeclaredOptions
    from runner.service.settings import ServiceSettings
    from runner.service.submission import check_submission

    stockfish, fairymax = require_binary("stockfish"), require_binary("fairymax")
    starts = tmp_path / "starts"
    wrapper = tmp_path / "sf.sh"  # stockfish, noting each start
    wrapper.write_text(f"#!/bin/sh\necho start >> {starts}\nexec {stockfish}\n")
    wrapper.chmod(0o755)
    engines = tmp_path / "engines.toml"
    engines.write_text(f'[[engines]]\nname = "sf"\ncommand = ["{wrapper}"]\n\n'
                       f'[[engines]]\nname = "fm"\ncommand = ["{fairymax}"]\n')
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 's.db'}", engines_file=engines)
    declared = DeclaredOptions()
    body = {"engines": ["sf", "fm"], "games": 2, "tc": "1+0.01"}
    config = check_submission(body, settings, declared)
    assert [e.protocol for e in config.engines] == [Protocol.UCI, Protocol.CECP]
    assert not any(e.protocol_detect for e in config.engines)
    asked = starts.read_text().count("start")
    assert asked >= 1
    # Asked once: the next submission finds the answer without starting the engine again.
    assert check_submission(body, settings, declared).engines == config.engines
    assert starts.read_text().count("start") == asked


@pytest.mark.slow  # CI time: the service's detection is checked in-process above
@pytest.mark.timeout(240)
def test_a_real_service_plays_an_engine_without_protocol_in_its_own(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx", reason="httpx is not installed")
    pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")
    import socket
    import time

    stockfish, fairymax = require_binary("stockfish"), require_binary("fairymax")
    engines = tmp_path / "engines.toml"
    engines.write_text(f'[[engines]]\nname = "sf"\ncommand = ["{stockfish}"]\n'
                       'options = { Threads = 1, Hash = 16 }\n\n'
                       f'[[engines]]\nname = "fm"\ncommand = ["{fairymax}"]\n')
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port),
         "--db", str(tmp_path / "s.db"), "--engines", str(engines)],
        cwd=tmp_path, env={**os.environ, "RUNNER_TOKEN": "tok", "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.05)
        created = httpx.post(f"{base}/api/tournaments", timeout=120,
                             headers={"Authorization": "Bearer tok"},
                             json={"engines": ["sf", "fm"], "games": 2, "tc": "5+0.05",
                                   "adjudication": {"maxmoves": 6}})
        assert created.status_code == 201, created.text
        url = base + created.json()["url"]
        # Under load the service answers its first detail late (it is probing and
        # starting engines): a slow answer is waited for again, not taken as a failure.
        finish_by = time.monotonic() + 300
        while True:
            try:
                status = httpx.get(url, timeout=60).json()["status"]
            except httpx.TimeoutException:
                status = None
            if status == "finished":
                break
            assert proc.poll() is None and time.monotonic() < finish_by, f"not finished: {status}"
            time.sleep(0.2)
        pgn = httpx.get(f"{url}/pgn", timeout=120).text
        # Both engines moved in both games (stockfish spoken to over CECP never does).
        assert len(_plies(pgn)) == 2 and min(_plies(pgn)) >= 2, pgn
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
