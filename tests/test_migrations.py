"""Alembic owns the schema: upgrades from empty databases, models and migrations agree.

The agreement check is what ``alembic check`` does: autogenerate compares the migrated
database with the models' metadata and must find nothing to change, on SQLite and on a
real PostgreSQL server. The CLI's ``runner db upgrade`` is run as a real process from an
unrelated directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from conftest import REPO
from postgres_server import PostgresServer
from sqlalchemy import inspect

from runner.store.db import (
    SCHEMA_REVISION,
    alembic_config,
    create_db_engine,
    current_revision,
    head_revision,
    migrations_dir,
    upgrade,
)
from runner.store.models import Base

TABLES = {"tournaments", "engines", "games", "moves", "leases"}


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """The URL of an empty database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        yield server.new_database()


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


def test_opening_an_up_to_date_database_does_not_load_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    probe = ("import sys; from runner.store import open_database; open_database(sys.argv[1]); "
             "print('alembic' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True,
                           check=True, timeout=60)
    assert first.stdout.strip() == "True"  # an empty database is migrated through alembic
    again = subprocess.run([sys.executable, "-c", probe, url], capture_output=True, text=True,
                           check=True, timeout=60)
    assert again.stdout.strip() == "False"
    engine = create_db_engine(url)
    try:
        assert current_revision(engine) == head_revision()
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


def test_an_empty_database_differs_from_the_models(tmp_path) -> None:
    """The comparison really compares: before the upgrade it sees every table missing."""
    diffs = _differences(f"sqlite:///{tmp_path / 'bare.db'}")
    added = {d[1].name for d in diffs if isinstance(d, tuple) and d[0] == "add_table"}
    assert added == TABLES


def test_downgrade_to_base_and_up_again(empty_url: str) -> None:
    from alembic import command

    engine = create_db_engine(empty_url)
    try:
        upgrade(engine)
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
