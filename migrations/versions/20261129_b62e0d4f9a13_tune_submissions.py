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
    """Add the nullable ``tunes.submitted`` and ``placement``, and ``stopped``."""
    with op.batch_alter_table("tunes") as batch:
        batch.add_column(sa.Column("submitted", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("placement", sa.String(20), nullable=True))
        batch.add_column(sa.Column("stopped", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    """Drop the three columns."""
    with op.batch_alter_table("tunes") as batch:
        batch.drop_column("stopped")
        batch.drop_column("placement")
        batch.drop_column("submitted")
