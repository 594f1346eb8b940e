"""`runner resume ID`: an interrupted tournament continues with exactly the configuration it was
stored with (every engine key, castling960, env, affinity, adjudication, openings, SPRT) and
plays exactly the games still missing.

The engines are the bundled engine at level 1 with games capped at 30 moves, so the six games
take a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import runner.cli.tournament as cli_tournament
from runner.cli.app import app
from runner.config.model import Castling960Style, RestartPolicy, TournamentConfig
from runner.config.parse import parse_config
from runner.store import open_database
from runner.tournament.events import GameFinished
from runner.tournament.run import Tournament
from runner.tournament.runtime import engine_config

BOOK = [
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq -",
    "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq -",
    "rnbqkbnr/pppppppp/8/8/6P1/8/PPPPPP1P/RNBQKBNR b KQkq -",
]
START = 2
"""The first opening used (1-based), so the cursor does not begin at the book's first line."""


def _config(tmp_path: Path, url: str) -> TournamentConfig:
    """A match that sets every key a stored configuration must give back."""
    (tmp_path / "book.epd").write_text("\n".join(BOOK) + "\n")
    return parse_config({
        "name": "resumed", "format": "match", "rounds": 3, "games": 2, "tc": "10+0.1",
        "concurrency": 1, "affinity": True, "recover": True, "database": url,
        "pgnout": str(tmp_path / "games.pgn"), "variant": "standard",
        "engines": [
            {"name": "kxr", "command": ["python", "-m", "engine", "--level", "1", "--seed", "1"],
             "protocol": "cecp", "castling960": "kxr", "restart": "off", "dir": ".",
             "tc": "8+0.08", "init_strings": ["easy"],
             "env": {"RUNNER_RESUME_TEST": "kxr", "LC_ALL": "C"},
             # The bundled CECP engine declares no options (and is sent none); the UCI one
             # declares one of each kind set here: spin, check and combo.
             },
            {"name": "uci", "command": "python -m engine --uci --level 1 --seed 2",
             "protocol": "uci", "restart": "on",
             "options": {"Hash": 8, "UCI_Chess960": False, "Level": "1"},
             "env": {"RUNNER_RESUME_TEST": "uci"}},
        ],
        "openings": {"file": "book.epd", "order": "sequential", "start": START, "seed": 5},
        "adjudication": {"draw": {"movenumber": 20, "movecount": 4, "score": 30},
                         "resign": {"movecount": 3, "score": 500, "twosided": True},
                         "maxmoves": 30},
        "sprt": {"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.1, "model": "logistic",
                 "maxgames": 100},
    }, source="resume test", base_dir=tmp_path)


def _interrupted_run(config: TournamentConfig, url: str, games: int) -> int:
    """Play `games` games of the tournament, then stop as Ctrl-C would; its id."""
    db = open_database(url)
    try:
        tournament = Tournament(config, db)
        tournament.prepare()

        def stop_after(event: object) -> None:
            if isinstance(event, GameFinished) and tournament.done_games >= games:
                tournament.stop()

        outcome = asyncio.run(tournament.run(on_event=stop_after))
    finally:
        db.close()
    assert outcome.status.value == "interrupted" and outcome.done == games
    return outcome.tournament_id


def _rows(db_path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("select id, job_index, pair_index, status, opening_fen, ended_at "
                            "from games order by job_index").fetchall()


@pytest.mark.timeout(180)
def test_resume_restores_every_setting_and_plays_exactly_the_missing_games(tmp_path, monkeypatch):
    db_path = tmp_path / "r.db"
    url = f"sqlite:///{db_path}"
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, url)
    kxr = config.engine("kxr")
    assert kxr.castling960 is Castling960Style.KXR and kxr.restart is RestartPolicy.OFF
    assert config.affinity and config.sprt is not None and config.openings is not None
    tournament_id = _interrupted_run(config, url, games=2)
    before = _rows(db_path)
    assert [row[1] for row in before if row[3] == "done"] == [0, 1]

    resumed: list[TournamentConfig] = []
    run_tournament = cli_tournament.run_tournament

    def capture(config: TournamentConfig, **kwargs: Any) -> Any:
        resumed.append(config)
        return run_tournament(config, **kwargs)

    pinned: list[tuple[int, set[int]]] = []
    monkeypatch.setattr(cli_tournament, "run_tournament", capture)
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: pinned.append((pid, cpus)),
                        raising=False)
    result = CliRunner().invoke(app, ["resume", str(tournament_id), "--db", url, "--quiet"])
    assert result.exit_code == 0, result.output

    # Every setting comes back, and with it what the engines are started with.
    assert resumed == [config]
    for entry in config.engines:
        assert engine_config(resumed[0].engine(entry.name)) == engine_config(entry)
    assert engine_config(resumed[0].engine("kxr")).castling960 == "kxr"
    assert dict(resumed[0].engine("kxr").env) == {"RUNNER_RESUME_TEST": "kxr", "LC_ALL": "C"}
    # Affinity: every engine started by the resumed run was pinned (the uci engine restarts
    # for each game, so there are at least as many starts as games).
    assert len(pinned) >= 4

    # Exactly the missing games were played; the stored ones were left as they were.
    after = _rows(db_path)
    assert [row[1] for row in after] == list(range(6))
    assert all(row[3] == "done" for row in after)
    assert after[:2] == before[:2]
    with sqlite3.connect(db_path) as conn:
        status, total = conn.execute("select status, total_games from tournaments where id = ?",
                                     (tournament_id,)).fetchone()
    assert (status, total) == ("finished", 6)
    # The openings cursor: pair p plays book line START - 1 + p, before and after the stop.
    for _, _, pair, _, fen, _ in after:
        assert fen.split()[:4] == BOOK[(START - 1 + pair) % len(BOOK)].split()
    # pgnout comes back too: the resumed games are appended to the same file.
    assert (tmp_path / "games.pgn").read_text().count("[Event \"resumed\"]") == 6


def test_resume_of_an_unknown_tournament_is_an_error(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    open_database(url).close()
    result = CliRunner().invoke(app, ["resume", "7", "--db", url])
    assert result.exit_code == 2


def _as_older_runners_stored(data: dict[str, Any]) -> dict[str, Any]:
    """The stored layout before the JSON round trip: written argv as ``command`` beside
    ``resolved_command``, the book's name beside its ``path``, no env or castling960."""
    for entry in data["engines"]:
        entry["resolved_command"] = entry.pop("command")
        entry["command"] = entry.pop("written_command")
        del entry["env"], entry["castling960"]
    openings = data["openings"]
    openings["path"] = openings["file"]
    openings["file"] = Path(openings["file"]).name
    return data


@pytest.mark.timeout(120)
def test_resume_reads_a_tournament_stored_by_an_older_runner(tmp_path, monkeypatch):
    db_path = tmp_path / "r.db"
    url = f"sqlite:///{db_path}"
    monkeypatch.chdir(tmp_path)
    config = _config(tmp_path, url)
    tournament_id = _interrupted_run(config, url, games=4)
    with sqlite3.connect(db_path) as conn:
        (text,) = conn.execute("select config from tournaments where id = ?",
                               (tournament_id,)).fetchone()
        legacy = _as_older_runners_stored(json.loads(text))
        conn.execute("update tournaments set config = ? where id = ?",
                     (json.dumps(legacy), tournament_id))
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: None, raising=False)
    result = CliRunner().invoke(app, ["resume", str(tournament_id), "--db", url, "--quiet"])
    assert result.exit_code == 0, result.output
    assert "older runner" in result.output  # typer's runner shows stderr there too
    assert [(row[1], row[3]) for row in _rows(db_path)] == [(n, "done") for n in range(6)]
