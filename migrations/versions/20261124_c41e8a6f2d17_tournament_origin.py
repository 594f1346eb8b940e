"""Tournaments remember where they came from (null: the command line; "service": submitted
over HTTP, resumed by the service when it starts again).

Revision ID: c41e8a6f2d17
Revises: 7d3a91c0e5b4
Create Date: 2026-11-24 01:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c41e8a6f2d17"
down_revision: str | None = "7d3a91c0e5b4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``tournaments.origin`` column."""
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("origin", sa.String(length=16), nullable=True))


def downgrade() -> None:
    """Drop ``tournaments.origin``."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("origin")
