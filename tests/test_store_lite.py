"""A run's preparation and close on a SQLite file by sqlite3 (runner.store.lite, issue 38)
write the rows SQLAlchemy's way writes, and a forced change is done again in a session."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from runner.store.db import open_database
from runner.store.records import EngineRowValues, StoredTournament, TournamentStatus
from runner.store.store import Store

_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3,6}")
_ENGINES = [EngineRowValues("a", ["x", "-v"], "uci", {"Hash": 16}), EngineRowValues("b", ["y"])]
_CONFIG = {"name": "t", "database": "postgresql+psycopg://u:secret@h/db", "rounds": 2}


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The tournaments, engines and leases of `path`, each time replaced by its shape."""
    connection = sqlite3.connect(path)
    try:
        found = {}
        for table in ("tournaments", "engines", "leases"):
            found[table] = [tuple("<time>" if isinstance(v, str) and _TIME.fullmatch(v) else v
                                  for v in row)
                            for row in connection.execute(f"SELECT * FROM {table}")]
        return found
    finally:
        connection.close()


def _prepare_and_close(store: Store, owner: str) -> StoredTournament | None:
    """Create a tournament, hold its lease, close it; then find it again as a resume does."""

    def create(prep: Any) -> int:
        assert prep.newest_named("t", None) is None
        made = int(prep.create(name="t", config=_CONFIG, fingerprint="f" * 64, engines=_ENGINES,
                               total_games=4, origin=None))
        prep.take_lease(made, owner, 30.0)
        return made

    tournament_id = store.prepare(create)
    assert store.newest_named("t") is not None
    rows = store.tournament(tournament_id, owner)
    try:
        rows.close_tournament(TournamentStatus.INTERRUPTED, "H1", {"cursor": 3}, "an engine\ncrashed")
    finally:
        rows.close()
    found: StoredTournament | None = store.prepare(lambda prep: prep.newest_named("t", None))
    return found


def test_sqlite3_prepares_and_closes_as_sqlalchemy_does(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with Store.open(f"sqlite:///{tmp_path / 'lite.db'}") as lite:
        assert lite._lite is not None  # the sqlite3 way
        by_sqlite3 = _prepare_and_close(lite, "owner")
    with Store(open_database(f"sqlite:///{tmp_path / 'orm.db'}")) as orm:
        by_session = _prepare_and_close(orm, "owner")
    assert by_sqlite3 == by_session and by_sqlite3 is not None
    assert by_sqlite3.status is TournamentStatus.INTERRUPTED
    assert "secret" not in str(by_sqlite3.config)
    assert _rows(tmp_path / "lite.db") == _rows(tmp_path / "orm.db")


def test_a_forced_change_is_prepared_again_in_a_session(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with Store.open(f"sqlite:///{tmp_path / 'r.db'}") as store:
        made = store.prepare(lambda prep: prep.create(
            name="t", config={}, fingerprint="f", engines=_ENGINES, total_games=2, origin=None))
        ways: list[str] = []

        def change(prep: Any) -> None:
            ways.append(type(prep).__name__)
            prep.reopen(made)
            prep.replace_config(made, config={"n": 1}, fingerprint="g", total_games=4,
                                engines=[*_ENGINES, EngineRowValues("c", ["z"])])

        store.prepare(change)
        assert ways == ["LitePreparation", "Preparation"]  # rolled back, then in a session
        assert store.stored_config(made) == {"n": 1}
    names = sqlite3.connect(tmp_path / "r.db").execute("SELECT name FROM engines").fetchall()
    assert names == [("a",), ("b",), ("c",)]
