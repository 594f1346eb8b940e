"""A tuning run submitted to the service keeps its submission (issue 42): the checked table,
where it plays and whether an admin stopped it, so that a restarted service resumes the runs
that were playing (as it resumes its tournaments) and an admin may resume any of them.

Revision ID: b62e0d4f9a13
Revises: a41c7e2b5d90
Create Date: 2026-11-29 05:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b62e0d4f9a13"
down_revision: str | None = "a41c7e2b5d90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``tunes.submitted`` and ``placement``, and ``stopped``.

    Plain ``ALTER TABLE ... ADD COLUMN`` on both backends, not a batch: on SQLite a batch
    may copy the table and drop the old one, and dropping ``tunes`` deletes every stored
    iteration (``tune_iterations`` cascades on delete)."""
    op.add_column("tunes", sa.Column("submitted", sa.JSON(), nullable=True))
    op.add_column("tunes", sa.Column("placement", sa.String(20), nullable=True))
    op.add_column("tunes", sa.Column("stopped", sa.Boolean(), nullable=False,
                                     server_default=sa.false()))


def downgrade() -> None:
    """Drop the three columns (SQLite 3.35 and later drops a column in place)."""
    op.drop_column("tunes", "stopped")
    op.drop_column("tunes", "placement")
    op.drop_column("tunes", "submitted")
