"""Each move's ponder hit or miss (``moves.ponder_hit``, issue 43).

Revision ID: d3a9e6b1f274
Revises: c4f8a2d91e37
Create Date: 2026-11-29 00:06:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d3a9e6b1f274"
down_revision: str | None = "c4f8a2d91e37"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``moves.ponder_hit`` (null: the mover had not pondered before the move)."""
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("ponder_hit", sa.Boolean(), nullable=True))


def downgrade() -> None:
    """Drop ``moves.ponder_hit``."""
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("ponder_hit")
