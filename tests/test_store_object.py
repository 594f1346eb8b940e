"""The store object as the CLI and the service use it (issue 27: they import nothing else of
the store), and the stop verb they share, on a real SQLite file filled by a real ``runner run``
with the bundled engine.

- `Store.game` / `Store.game_moves`: one finished game by its schedule place, and its moves
  (what the service's game view and PGN route read);
- `Store.open_read_only`: a database opened as it is, refused when its schema is another
  version's, the driver's error when it is no database;
- `Store.redact` / `Store.safe_url`: no password printed; `StoreError`, what a database that
  cannot answer raises; `Store.shared_by_processes` (the service's report workers);
- `runner.app.stop.stop`: a stored tournament is marked stopped only when it is its origin's
  and not finished; a running one is stopped through its run.
"""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import chess.pgn
import pytest
from typer.testing import CliRunner

from runner.app.lifecycle import NoSuchTournament, start
from runner.app.modes import StartMode
from runner.app.stop import StopRefused, stop
from runner.cli.app import app
from runner.config.parse import load_config
from runner.store.store import SERVICE, SchemaMismatch, Store, StoreError
from runner.tournament.events import Notice

CONFIG = """name = "pair"
engines = [{name = "a", command = ["python", "-m", "engine", "--level", "random"]},
           {name = "b", command = ["python", "-m", "engine", "--level", "random", "--seed", "2"]}]
tc = "5+0.05"
rounds = 1
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A database holding one finished two-game tournament the command line ran, and its
    configuration file."""
    where = tmp_path_factory.mktemp("store")
    config, db = where / "pair.toml", where / "runner.db"
    config.write_text(CONFIG)
    result = CliRunner().invoke(app, ["run", str(config), "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.output
    return db, config


def test_a_game_is_read_by_its_place_with_its_moves(played):
    db, _ = played
    with Store.open(f"sqlite:///{db}") as store:
        games = [store.game(1, index) for index in (0, 1)]
        assert [g.job_index for g in games if g is not None] == [0, 1]
        for game in games:
            assert game is not None and game.pgn
            oracle = chess.pgn.read_game(io.StringIO(game.pgn))
            assert oracle is not None
            moves = store.game_moves(game.id)
            assert [m.uci for m in moves] == [m.uci() for m in oracle.mainline_moves()]
            assert [m.ply for m in moves] == list(range(1, len(moves) + 1))
        assert store.game(1, 2) is None and store.game(99, 0) is None


def test_a_read_only_open_checks_the_schema_and_migrates_nothing(played, tmp_path):
    db, _ = played
    with Store.open_read_only(f"sqlite:///{db}") as store:
        assert [t.id for t in store.tournaments()] == [1]
    older = tmp_path / "older.db"
    older.write_bytes(db.read_bytes())
    with sqlite3.connect(older) as connection:
        connection.execute("update alembic_version set version_num = 'aaaa0000'")
    with pytest.raises(SchemaMismatch) as refused:
        Store.open_read_only(f"sqlite:///{older}")
    assert refused.value.revision == "aaaa0000" and refused.value.expected != "aaaa0000"
    with sqlite3.connect(older) as connection:  # left as it was: not migrated
        assert connection.execute("select version_num from alembic_version").fetchall() == [
            ("aaaa0000",)]
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all, " * 100)
    with pytest.raises(StoreError, match="not a database"):  # the adapters catch this name
        Store.open_read_only(f"sqlite:///{junk}")


def test_only_a_database_other_processes_can_open_is_shared_with_them(played):
    db, _ = played
    with Store.open(f"sqlite:///{db}") as store:
        assert store.shared_by_processes
    with Store.open("sqlite://") as store:  # in memory: this process's alone
        assert not store.shared_by_processes


def test_no_password_is_shown():
    url = "postgresql+psycopg://runner:hunter2@db.example/results"
    assert "hunter2" not in Store.safe_url(url) and "db.example" in Store.safe_url(url)
    text = Store.redact(f"connection to {url} failed")
    assert "hunter2" not in text and text.endswith("failed")


def test_stop_marks_only_its_origins_unfinished_tournament_stopped(played, tmp_path):
    db, config_file = played
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    with Store.open(f"sqlite:///{copy}") as store:
        with pytest.raises(StopRefused) as refused:
            stop(store, 1, origin=SERVICE)
        assert refused.value.why == "finished"
        with sqlite3.connect(copy) as connection:  # as a killed command-line run leaves it
            connection.execute("update tournaments set status = 'interrupted' where id = 1")
        with pytest.raises(StopRefused) as refused:
            stop(store, 1, origin=SERVICE)
        assert refused.value.why == "not owned"
        assert store.progress(1).status == "interrupted"
        with pytest.raises(NoSuchTournament):
            stop(store, 99, origin=SERVICE)

        queued = start(load_config(config_file), store, StartMode.NEW, origin=SERVICE)
        tournament_id = queued.prepare(lease=False)  # stored, as a service submission queues it
        assert tournament_id != 1
        assert store.progress(tournament_id).status != "stopped"
        assert stop(store, tournament_id, origin=SERVICE) == "stopped"
        assert store.progress(tournament_id).status == "stopped"
        assert [t for t, _ in store.unfinished_owned(SERVICE)] == []  # not resumed on start

        running = start(load_config(config_file), store, StartMode.NEW, origin=SERVICE)
        said: list[str] = []
        # What run() would be given: this tournament is stopped before it runs.
        running._on_event = lambda event: said.append(event.text if isinstance(event, Notice) else "")
        assert stop(store, 0, origin=SERVICE, running=running) == "stopping"
        assert stop(store, 0, origin=SERVICE, hard=True, running=running) == "stopping"
        assert [text.split(":")[0] for text in said] == [
            "stopping", "aborting the running games and stopping the engines"]
