"""Games remember the Dask worker that played them (null: played in the runner's process).

Revision ID: 7d3a91c0e5b4
Revises: 9b4f2c7d1e60
Create Date: 2026-11-23 22:45:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7d3a91c0e5b4"
down_revision: str | None = "9b4f2c7d1e60"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``games.worker`` column."""
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("worker", sa.String(length=200), nullable=True))


def downgrade() -> None:
    """Drop ``games.worker``."""
    with op.batch_alter_table("games") as batch:
        batch.drop_column("worker")
