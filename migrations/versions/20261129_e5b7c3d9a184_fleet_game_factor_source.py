"""Each remote worker's game keeps which bench its clock factor came from (issue 40): the
machine's (the bundled engine's bench), an engine's own (``bench:NAME``), or none.

Revision ID: e5b7c3d9a184
Revises: b62e0d4f9a13
Create Date: 2026-11-29 11:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e5b7c3d9a184"
down_revision: str | None = "b62e0d4f9a13"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the nullable ``fleet_games.factor_source`` (older games: unknown, shown as none).

    A plain ``ALTER TABLE ... ADD COLUMN`` on both backends, not a batch (which on SQLite
    may copy the table)."""
    op.add_column("fleet_games", sa.Column("factor_source", sa.String(200), nullable=True))


def downgrade() -> None:
    """Drop the column (SQLite 3.35 and later drops a column in place)."""
    op.drop_column("fleet_games", "factor_source")
