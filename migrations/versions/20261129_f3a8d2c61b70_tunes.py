"""SPSA tuning runs (``tunes``) and their played iterations (``tune_iterations``).

Revision ID: f3a8d2c61b70
Revises: d4c81f5e2a07
Create Date: 2026-11-29 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f3a8d2c61b70"
down_revision: str | None = "d4c81f5e2a07"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``tunes`` and ``tune_iterations``."""
    op.create_table(
        "tunes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tunes")),
        sa.UniqueConstraint("name", name=op.f("uq_tunes_name")),
    )
    op.create_table(
        "tune_iterations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tune_id", sa.Integer(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("flips", sa.JSON(), nullable=False),
        sa.Column("plus", sa.JSON(), nullable=False),
        sa.Column("minus", sa.JSON(), nullable=False),
        sa.Column("result", sa.Integer(), nullable=False),
        sa.Column("theta", sa.JSON(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tune_id"], ["tunes.id"], ondelete="CASCADE",
                                name=op.f("fk_tune_iterations_tune_id_tunes")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tune_iterations")),
        sa.UniqueConstraint("tune_id", "k", name=op.f("uq_tune_iterations_tune_id_k")),
    )


def downgrade() -> None:
    """Drop ``tune_iterations`` and ``tunes``."""
    op.drop_table("tune_iterations")
    op.drop_table("tunes")
