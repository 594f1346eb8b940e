"""Games keep each engine's standard error (bounded) when they ended by a crash, a stall or
a time loss, so that the game's view can show why (issue 43).

Revision ID: f19a3c6b8d24
Revises: d3a9e6b1f274
Create Date: 2026-11-29 00:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f19a3c6b8d24"
down_revision: str | None = "d3a9e6b1f274"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``games.white_stderr`` and ``games.black_stderr``."""
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("white_stderr", sa.Text(), nullable=True))
        batch.add_column(sa.Column("black_stderr", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop both columns."""
    with op.batch_alter_table("games") as batch:
        batch.drop_column("black_stderr")
        batch.drop_column("white_stderr")
