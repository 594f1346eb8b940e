"""PGN file offsets of games, and tournament leases (which process runs a tournament).

Revision ID: 9b4f2c7d1e60
Revises: 525d9e912ee0
Create Date: 2026-11-23 22:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9b4f2c7d1e60"
down_revision: str | None = "525d9e912ee0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``games.pgn_offset`` (-1 for games already played: their place in the file is not
    known, so a resume leaves them as they are) and the ``leases`` table."""
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("pgn_offset", sa.BigInteger(), nullable=True))
    op.execute(sa.text("UPDATE games SET pgn_offset = -1 WHERE status = 'done'"))
    op.create_table(
        "leases",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_leases_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_leases")),
    )


def downgrade() -> None:
    """Drop the leases and the offsets."""
    op.drop_table("leases")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("pgn_offset")
