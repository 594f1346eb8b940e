"""Moves keep the selective depth and the mover's clock when asked and after the move, so
the report can tell how close each engine came to its flag (issue 43's diagnostics).

Revision ID: d4c81f5e2a07
Revises: c84f1a2d9e57
Create Date: 2026-11-28 23:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d4c81f5e2a07"
down_revision: str | None = "c84f1a2d9e57"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``moves.seldepth``, ``moves.clock_ms`` and ``moves.time_left_ms``."""
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("seldepth", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("clock_ms", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("time_left_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop the three columns."""
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("time_left_ms")
        batch.drop_column("clock_ms")
        batch.drop_column("seldepth")
