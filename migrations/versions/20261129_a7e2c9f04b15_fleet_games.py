"""The games remote workers played (``fleet_games``): worker, batch and time-control factor.

Revision ID: a7e2c9f04b15
Revises: f19a3c6b8d24
Create Date: 2026-11-29 02:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a7e2c9f04b15"
down_revision: str | None = "f19a3c6b8d24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table."""
    op.create_table(
        "fleet_games",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("job_index", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("factor", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_fleet_games_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["worker_id"], ["fleet_workers.id"],
                                name=op.f("fk_fleet_games_worker_id_fleet_workers"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "job_index", name=op.f("pk_fleet_games")),
    )
    op.create_index(op.f("ix_fleet_games_worker_id"), "fleet_games", ["worker_id"],
                    unique=False)


def downgrade() -> None:
    """Drop the table."""
    op.drop_index(op.f("ix_fleet_games_worker_id"), table_name="fleet_games")
    op.drop_table("fleet_games")
