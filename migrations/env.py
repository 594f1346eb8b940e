"""Alembic environment of the cecp-runner migrations (the runner's results database schema).

Used three ways: by ``runner.store.db.upgrade`` (which hands over an open connection in
``config.attributes["connection"]``), by ``runner db upgrade``, and by the ``alembic`` command
run from the repository root with ``alembic.ini`` (the URL then comes from ``-x db=URL``,
``RUNNER_DB`` or ``./runner.db``). Batch mode is on so later migrations can alter SQLite tables.
"""

from __future__ import annotations

from alembic import context

from runner.store.db import create_db_engine, resolve_url
from runner.store.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    """The database URL when no connection was handed over."""
    explicit = context.get_x_argument(as_dictionary=True).get("db")
    return resolve_url(explicit or config.get_main_option("sqlalchemy.url") or None)


def _configure(**kwargs: object) -> None:
    """Configure the migration context the same way online and offline."""
    context.configure(target_metadata=target_metadata, render_as_batch=True, compare_type=True,
                      **kwargs)


def run_offline() -> None:
    """Write the SQL of the migrations instead of running it (``alembic upgrade --sql``)."""
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Run the migrations on the handed-over connection, or on a fresh engine."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_db_engine(_url())
    try:
        with engine.connect() as fresh:
            _configure(connection=fresh)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
