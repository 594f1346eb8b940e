"""The service's queue of branch tests (``branch_tests``).

Revision ID: b7d2e4f61a93
Revises: e5a1b7c90d42
Create Date: 2026-11-28 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7d2e4f61a93"
down_revision: str | None = "e5a1b7c90d42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``branch_tests``."""
    op.create_table(
        "branch_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("recipe", sa.String(length=200), nullable=False),
        sa.Column("base_ref", sa.String(length=200), nullable=False),
        sa.Column("base_sha", sa.String(length=64), nullable=False),
        sa.Column("dev_ref", sa.String(length=200), nullable=False),
        sa.Column("dev_sha", sa.String(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("share", sa.Float(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.Integer(), nullable=False),
        sa.Column("tournaments", sa.JSON(), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_branch_tests")),
    )


def downgrade() -> None:
    """Drop ``branch_tests``."""
    op.drop_table("branch_tests")
