"""Remote workers (``fleet_workers``), their leased batches (``fleet_batches``) and where a
service's tournament plays (``tournament_placements``).

Revision ID: c4f8a2d91e37
Revises: f3a8d2c61b70
Create Date: 2026-11-28 23:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c4f8a2d91e37"
down_revision: str | None = "f3a8d2c61b70"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the three tables."""
    op.create_table(
        "fleet_workers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("principal", sa.String(length=200), nullable=True),
        sa.Column("info", sa.JSON(), nullable=False),
        sa.Column("registered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("flag", sa.Text(), nullable=True),
        sa.Column("blocked", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fleet_workers")),
    )
    op.create_table(
        "fleet_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.Integer(), nullable=False),
        sa.Column("games", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("leased_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_fleet_batches_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["worker_id"], ["fleet_workers.id"],
                                name=op.f("fk_fleet_batches_worker_id_fleet_workers"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fleet_batches")),
    )
    op.create_index(op.f("ix_fleet_batches_tournament_id"), "fleet_batches",
                    ["tournament_id"], unique=False)
    op.create_index(op.f("ix_fleet_batches_worker_id"), "fleet_batches", ["worker_id"],
                    unique=False)
    op.create_table(
        "tournament_placements",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("placement", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_tournament_placements_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_tournament_placements")),
    )


def downgrade() -> None:
    """Drop the three tables."""
    op.drop_table("tournament_placements")
    op.drop_index(op.f("ix_fleet_batches_worker_id"), table_name="fleet_batches")
    op.drop_index(op.f("ix_fleet_batches_tournament_id"), table_name="fleet_batches")
    op.drop_table("fleet_batches")
    op.drop_table("fleet_workers")
