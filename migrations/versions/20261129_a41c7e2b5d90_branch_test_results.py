"""Branch tests keep who submitted them, each ended stage's figures and each build of a side
on a machine with its bench and log's end (issue 41): the tests' list reads its rows alone,
and a test's page shows them.

Revision ID: a41c7e2b5d90
Revises: a7e2c9f04b15
Create Date: 2026-11-29 02:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a41c7e2b5d90"
down_revision: str | None = "a7e2c9f04b15"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``branch_tests.author``, ``results`` and ``builds``."""
    with op.batch_alter_table("branch_tests") as batch:
        batch.add_column(sa.Column("author", sa.String(200), nullable=True))
        batch.add_column(sa.Column("results", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("builds", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop the three columns."""
    with op.batch_alter_table("branch_tests") as batch:
        batch.drop_column("builds")
        batch.drop_column("results")
        batch.drop_column("author")
