"""Alembic owns the schema: upgrades from empty databases, models and migrations agree.

The agreement check is what ``alembic check`` does: autogenerate compares the migrated
database with the models' metadata and must find nothing to change, on SQLite and on a
real PostgreSQL server. A new database is built without alembic (the models' tables, then a
stamp of the head revision): the same comparison holds for it, and the inspector finds the
same tables, columns, keys, indexes and constraints in it as in a migrated one. The CLI's
``runner db upgrade`` is run as a real process from an unrelated directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from conftest import REPO
from postgres_server import PostgresServer
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError

from runner.store.db import (
    SCHEMA_REVISION,
    alembic_config,
    create_db_engine,
    create_if_empty,
    current_revision,
    head_revision,
    migrations_dir,
    upgrade,
)
from runner.store.models import Base

TABLES = {"tournaments", "engines", "games", "moves", "leases", "branch_tests", "tokens",
          "tunes", "tune_iterations", "fleet_workers", "fleet_batches", "fleet_games",
          "tournament_placements"}


def _new_database(request: pytest.FixtureRequest, backend: str, path: Path) -> str:
    """The URL of a new, empty database: a SQLite file at `path`, or a PostgreSQL database."""
    if backend == "sqlite":
        return f"sqlite:///{path}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """The URL of an empty database on each backend."""
    yield _new_database(request, request.param, tmp_path / "empty.db")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each database backend."""
    return str(request.param)


def _differences(url: str) -> list[object]:
    """What autogenerate would add or change to make the database match the models."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "target_metadata": Base.metadata})
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def test_schema_revision_constant_is_alembics_head() -> None:
    # open_database skips alembic for a database already at SCHEMA_REVISION: a new migration
    # must move the constant too, or databases would stay behind.
    assert head_revision() == SCHEMA_REVISION


_PROBE = ("import sys; from runner.store import open_database; open_database(sys.argv[1]); "
          "print('alembic' in sys.modules)")


def _opening_loads_alembic(url: str) -> bool:
    """Whether opening `url` in a new process imports alembic."""
    done = subprocess.run([sys.executable, "-c", _PROBE, url], capture_output=True, text=True,
                          check=True, timeout=60)
    return {"True": True, "False": False}[done.stdout.strip()]


def _version_rows(url: str) -> list[str]:
    """Every revision in ``alembic_version``."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(text("SELECT version_num FROM alembic_version"))
                        .scalars())
    finally:
        engine.dispose()


def test_opening_a_new_or_up_to_date_database_does_not_load_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    assert not _opening_loads_alembic(url)  # a new database: tables from the models, stamped
    assert _version_rows(url) == [head_revision()]
    assert not _opening_loads_alembic(url)  # at the newest revision: nothing to do
    assert _version_rows(url) == [head_revision()]


def _older_revision() -> str:
    """The revision just before the head."""
    script = ScriptDirectory.from_config(alembic_config())
    older = script.get_revision(script.get_current_head()).down_revision
    assert isinstance(older, str)
    return older


def test_opening_a_database_at_an_older_revision_upgrades_it_with_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_db_engine(url)
    try:
        upgrade(engine, _older_revision())
        assert current_revision(engine) == _older_revision()
    finally:
        engine.dispose()
    assert _opening_loads_alembic(url)
    assert _version_rows(url) == [head_revision()]
    assert _differences(url) == []


def test_a_database_with_tables_but_no_stamp_is_left_to_alembic(tmp_path: Path) -> None:
    """Tables but no stamp: not the fast path's to judge; it leaves them to alembic's upgrade."""
    engine = create_db_engine(f"sqlite:///{tmp_path / 'odd.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE tournaments (id INTEGER PRIMARY KEY)"))
        assert create_if_empty(engine) is False
        assert set(inspect(engine).get_table_names()) == {"tournaments"}
    finally:
        engine.dispose()


def test_upgrade_from_empty_creates_the_schema_and_matches_the_models(empty_url: str) -> None:
    engine = create_db_engine(empty_url)
    try:
        assert current_revision(engine) is None
        assert TABLES.isdisjoint(inspect(engine).get_table_names())
        upgrade(engine)
        assert current_revision(engine) == head_revision()
        assert set(inspect(engine).get_table_names()) >= TABLES
        upgrade(engine)  # a second upgrade is a no-op
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    assert _differences(empty_url) == []


def test_a_new_database_made_without_alembic_matches_the_models(empty_url: str) -> None:
    engine = create_db_engine(empty_url)
    try:
        assert create_if_empty(engine) is True
        assert current_revision(engine) == head_revision()
        assert set(inspect(engine).get_table_names()) == TABLES | {"alembic_version"}
        before = _schema(empty_url)
        assert create_if_empty(engine) is True  # a second time: found done, nothing changed
        upgrade(engine)  # alembic agrees it is at the head: nothing to run
    finally:
        engine.dispose()
    assert _version_rows(empty_url) == [head_revision()]
    assert _schema(empty_url) == before
    assert _differences(empty_url) == []


def test_a_creation_failing_half_way_leaves_no_table(empty_url: str) -> None:
    """The tables and the stamp are one transaction (on SQLite too, where pysqlite would run
    each CREATE on its own): a view in the way of the stamp undoes the tables made before it."""
    engine = create_db_engine(empty_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE VIEW alembic_version AS SELECT 1 AS version_num"))
        with pytest.raises(DBAPIError):
            create_if_empty(engine)
        assert inspect(engine).get_table_names() == []
    finally:
        engine.dispose()


def _schema(url: str) -> dict[str, dict[str, object]]:
    """What the inspector reports of every table: columns (name, type, nullable, default...),
    primary key, foreign keys, indexes, unique and check constraints, each with its name."""
    engine = create_db_engine(url)
    try:
        inspector = inspect(engine)
        schema: dict[str, dict[str, object]] = {}
        for table in inspector.get_table_names():
            # in their order in the table; the type as DDL and as its repr (with arguments
            # such as timezone=True that the DDL text of some dialects leaves out)
            columns = [{**column, "type": str(column["type"]), "type repr": repr(column["type"])}
                       for column in inspector.get_columns(table)]
            schema[table] = {
                "columns": columns,
                "primary key": inspector.get_pk_constraint(table),
                "foreign keys": sorted(inspector.get_foreign_keys(table), key=repr),
                "indexes": sorted(inspector.get_indexes(table), key=repr),
                "unique": sorted(inspector.get_unique_constraints(table), key=repr),
                "checks": sorted(inspector.get_check_constraints(table), key=repr),
            }
        return schema
    finally:
        engine.dispose()


def test_the_models_and_the_migrations_build_the_same_schema(
        request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> None:
    fast_url = _new_database(request, backend, tmp_path / "fast.db")
    migrated_url = _new_database(request, backend, tmp_path / "migrated.db")
    for url, build in ((fast_url, create_if_empty),
                       (migrated_url, lambda engine: upgrade(engine, _older_revision()))):
        engine = create_db_engine(url)
        try:
            build(engine)
        finally:
            engine.dispose()
    fast, behind = _schema(fast_url), _schema(migrated_url)
    assert behind != fast  # the comparison sees one migration's difference
    engine = create_db_engine(migrated_url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    migrated = _schema(migrated_url)
    assert set(fast) == TABLES | {"alembic_version"}
    assert fast["engines"]["unique"] and fast["games"]["foreign keys"]  # not comparing nothing
    for table in sorted(fast):
        assert fast[table] == migrated[table], table
    assert fast == migrated


def test_an_empty_database_differs_from_the_models(tmp_path) -> None:
    """The comparison really compares: before the upgrade it sees every table missing."""
    diffs = _differences(f"sqlite:///{tmp_path / 'bare.db'}")
    added = {d[1].name for d in diffs if isinstance(d, tuple) and d[0] == "add_table"}
    assert added == TABLES


@pytest.mark.parametrize("build", [upgrade, create_if_empty], ids=["migrated", "from-models"])
def test_downgrade_to_base_and_up_again(empty_url: str, build: Callable[[Engine], object]) -> None:
    """Every migration's downgrade finds the names it drops, in a migrated database and in one
    built from the models."""
    from alembic import command

    engine = create_db_engine(empty_url)
    try:
        build(engine)
        assert current_revision(engine) == head_revision()
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection=connection), "base")
        assert TABLES.isdisjoint(inspect(engine).get_table_names())
        upgrade(engine)
        assert set(inspect(engine).get_table_names()) >= TABLES
    finally:
        engine.dispose()


def test_one_linear_history_found_in_the_checkout() -> None:
    directory = migrations_dir()
    assert directory == REPO / "migrations"
    script = ScriptDirectory.from_config(alembic_config())
    assert len(script.get_heads()) == 1
    revisions = list(script.walk_revisions())
    assert revisions[-1].down_revision is None


@pytest.mark.timeout(120)
def test_alembic_check_from_the_repository_root(tmp_path) -> None:
    """Developers' ``alembic upgrade head`` then ``alembic check`` with alembic.ini."""
    url = f"sqlite:///{tmp_path / 'dev.db'}"
    alembic = [sys.executable, "-m", "alembic", "-c", str(REPO / "alembic.ini"), "-x", f"db={url}"]
    for step in (["upgrade", "head"], ["check"]):
        done = subprocess.run([*alembic, *step], cwd=tmp_path, capture_output=True, text=True,
                              timeout=100, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "No new upgrade operations detected" in done.stdout + done.stderr


@pytest.mark.timeout(120)
def test_runner_db_upgrade_from_any_directory(tmp_path) -> None:
    """``runner db upgrade`` with --db, with RUNNER_DB, and with the ./runner.db default."""
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "RUNNER_DB"}
    runner = [sys.executable, "-m", "runner", "db", "upgrade"]
    cases = [
        (["--db", str(tmp_path / "flag.db")], env, tmp_path / "flag.db"),
        ([], {**env, "RUNNER_DB": f"sqlite:///{tmp_path / 'env.db'}"}, tmp_path / "env.db"),
        ([], env, elsewhere / "runner.db"),
    ]
    for extra, environ, created in cases:
        done = subprocess.run([*runner, *extra], cwd=elsewhere, env=environ, capture_output=True,
                              text=True, timeout=100, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert head_revision() in done.stdout
        assert created.is_file()
        engine = create_db_engine(f"sqlite:///{created}")
        try:
            assert current_revision(engine) == head_revision()
        finally:
            engine.dispose()
    bad = subprocess.run([*runner, "--db", "nosuchdialect://x"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=100, check=False)
    assert bad.returncode == 2
    assert "unknown database kind 'nosuchdialect'" in bad.stderr
    assert not Path(elsewhere / "x").exists()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_db_upgrade_from_a_non_editable_install(tmp_path) -> None:
    """A wheel installed into a fresh environment finds the migrations it ships as data files."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("runner", "engine", "migrations"):
        shutil.copytree(REPO / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
         str(source)], capture_output=True, text=True, timeout=240, check=False)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here (offline without setuptools?): "
                    f"{built.stderr.strip()[-300:]}")
    wheel = next((tmp_path / "dist").glob("cecp_runner-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True)
    # Dependencies (SQLAlchemy, alembic, typer...) come from the test environment; the
    # project itself only from the wheel (the editable install's finder is not loaded).
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site.stdout.strip(), "test-deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "-q", str(wheel)], check=True, capture_output=True, timeout=240)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RUNNER_DB", "PYTHONPATH")}
    done = subprocess.run(
        [str(python), "-c", "import runner.store.db as d; print(d.__file__); "
         "print(d.migrations_dir())"], cwd=elsewhere, env=env, capture_output=True, text=True,
        timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    module_file, location = done.stdout.split()
    assert Path(module_file).is_relative_to(venv) and not Path(location).is_relative_to(REPO)
    assert Path(location).is_relative_to(venv)
    upgraded = subprocess.run([str(python), "-m", "runner", "db", "upgrade", "--db", "x.db"],
                              cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert head_revision() in upgraded.stdout
