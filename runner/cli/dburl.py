"""The ``--db`` value as the user typed it: checked before anything is opened, shown without
its password.

A value without ``://`` is a SQLite file path, so a mistyped URL (``sqlite:/x.db``, ``::::``)
used to become a file or a directory of that name. A path with a colon is refused here unless
it is written as a path (``./a:b.db``, ``/data/a:b.db``); a URL is parsed by SQLAlchemy and its
database kind must be one SQLAlchemy can load. Passwords never reach the terminal: every URL
shown goes through `shown_url`, and error text through `redact`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DbTarget", "DbValueError", "check_db_value", "redact", "shown_url"]

_ENV_VAR = "RUNNER_DB"  # runner.store.db.ENV_VAR; not imported, so that this module stays light
_DEFAULT_FILE = "runner.db"

class DbValueError(ValueError):
    """A ``--db`` (or ``$RUNNER_DB``) value that names no database: a usage error."""


@dataclass(frozen=True)
class DbTarget:
    """A checked database value: the URL to open and, for SQLite, its file."""

    url: str
    file: Path | None
    """The SQLite file (None for an in-memory SQLite database or another backend)."""


def redact(text: str) -> str:
    """`text` with the password of every ``scheme://user:password@`` in it replaced by ***."""
    from runner.store.store import Store  # SQLAlchemy only when something is shown

    return Store.redact(text)


def shown_url(url: str) -> str:
    """A database URL as it may be printed: its password hidden (the store's one rule)."""
    from runner.store.store import Store

    return Store.safe_url(url)


def check_db_value(value: str | None, env: Mapping[str, str] | None = None, *,
                   source: str = "--db") -> DbTarget:
    """The database `value` names (else ``$RUNNER_DB``, else ./runner.db), checked; raises
    DbValueError naming the value and where it came from (`source` when `value` is given)."""
    environ = os.environ if env is None else env
    where = source
    if not value:
        value, where = environ.get(_ENV_VAR) or _DEFAULT_FILE, f"${_ENV_VAR}"
        if not environ.get(_ENV_VAR):
            where = "the default database"
    if "://" not in value:
        if ":" in value and not value.startswith(("/", "./", "../", "~")):
            raise DbValueError(
                f"{where} {redact(value)!r} is neither a database URL nor a file path: URLs are "
                "written scheme://..., e.g. sqlite:///results.db or "
                "postgresql+psycopg://user@host/db (to mean a file whose name has a colon, "
                "write ./NAME)")
        if not value.strip():
            raise DbValueError(f"{where} is empty: give a SQLite file or a database URL")
        path = Path(value).expanduser()
        return DbTarget(f"sqlite:///{path}", path)
    return _checked_url(value, where)


def _checked_url(value: str, where: str) -> DbTarget:
    """A ``scheme://`` value checked by the store (its syntax, its database kind loadable)."""
    from runner.store.store import Store  # SQLAlchemy only for a URL

    try:
        url, file = Store.checked_url(value, where)
    except ValueError as exc:
        raise DbValueError(str(exc)) from None
    return DbTarget(url, file)
