"""Leases declare their timeout (``leases.timeout_seconds``; their times are now the
database's clock), and stored configurations lose the password of their database URL.

Revision ID: e5a1b7c90d42
Revises: e2b7c9a41f03
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "e5a1b7c90d42"
down_revision: str | None = "e2b7c9a41f03"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# scheme://user:password@ -> scheme://user:***@ (written out here: a migration must not
# change with the code it was written next to)
_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)\S*(?P<at>@)")


def _scrubbed(config: Any) -> Any:
    """The stored configuration with its database URL's password hidden (None: unchanged)."""
    if isinstance(config, str):
        config = json.loads(config)
    if not isinstance(config, dict) or not isinstance(config.get("database"), str):
        return None
    hidden = _PASSWORD.sub(r"\g<head>***\g<at>", config["database"])
    if hidden == config["database"]:
        return None
    return {**config, "database": hidden}


def upgrade() -> None:
    """Add ``leases.timeout_seconds``; scrub passwords from ``tournaments.config``."""
    with op.batch_alter_table("leases") as batch:
        batch.add_column(sa.Column("timeout_seconds", sa.Float(), nullable=True))
    tournaments = sa.table("tournaments", sa.column("id", sa.Integer()),
                           sa.column("config", sa.JSON()))
    connection = op.get_bind()
    for row in connection.execute(sa.select(tournaments.c.id, tournaments.c.config)).all():
        config = _scrubbed(row.config)
        if config is not None:
            connection.execute(tournaments.update().where(tournaments.c.id == row.id)
                               .values(config=config))


def downgrade() -> None:
    """Drop ``leases.timeout_seconds`` (the passwords stay hidden: they are gone)."""
    with op.batch_alter_table("leases") as batch:
        batch.drop_column("timeout_seconds")
