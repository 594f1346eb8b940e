"""Initial schema: tournaments, the engines taking part, their games and the games' moves.

Revision ID: 525d9e912ee0
Revises:
Create Date: 2026-11-22 02:13:14
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "525d9e912ee0"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TOURNAMENT_STATUS = sa.Enum("running", "interrupted", "finished", name="tournamentstatus",
                             native_enum=False, create_constraint=False, length=16)
_GAME_STATUS = sa.Enum("planned", "running", "done", "replay", name="gamestatus",
                       native_enum=False, create_constraint=False, length=16)


def upgrade() -> None:
    """Create the four tables with their keys and indexes."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("total_games", sa.Integer(), nullable=False),
        sa.Column("status", _TOURNAMENT_STATUS, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sprt_decision", sa.String(length=16), nullable=True),
        sa.Column("book_state", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(op.f("ix_tournaments_fingerprint"), "tournaments", ["fingerprint"])

    op.create_table(
        "engines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("protocol", sa.String(length=16), nullable=False),
        sa.Column("options", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_engines_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_engines")),
        sa.UniqueConstraint("tournament_id", "name", name=op.f("uq_engines_tournament_id_name")),
    )
    op.create_index(op.f("ix_engines_tournament_id"), "engines", ["tournament_id"])

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("job_index", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("pair_index", sa.Integer(), nullable=False),
        sa.Column("game_in_pair", sa.Integer(), nullable=False),
        sa.Column("white_id", sa.Integer(), nullable=False),
        sa.Column("black_id", sa.Integer(), nullable=False),
        sa.Column("opening_index", sa.Integer(), nullable=False),
        sa.Column("opening_fen", sa.Text(), nullable=True),
        sa.Column("opening_moves", sa.Text(), nullable=True),
        sa.Column("status", _GAME_STATUS, nullable=False),
        sa.Column("result", sa.String(length=8), nullable=True),
        sa.Column("termination", sa.String(length=32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("plies", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pgn", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_games_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["white_id"], ["engines.id"],
                                name=op.f("fk_games_white_id_engines")),
        sa.ForeignKeyConstraint(["black_id"], ["engines.id"],
                                name=op.f("fk_games_black_id_engines")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sa.UniqueConstraint("tournament_id", "job_index",
                            name=op.f("uq_games_tournament_id_job_index")),
    )
    op.create_index(op.f("ix_games_tournament_id_status"), "games", ["tournament_id", "status"])
    op.create_index(op.f("ix_games_white_id"), "games", ["white_id"])
    op.create_index(op.f("ix_games_black_id"), "games", ["black_id"])

    op.create_table(
        "moves",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("san", sa.String(length=16), nullable=False),
        sa.Column("uci", sa.String(length=8), nullable=False),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=True),
        sa.Column("score_cp", sa.Integer(), nullable=True),
        sa.Column("mate", sa.Integer(), nullable=True),
        sa.Column("nodes", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name=op.f("fk_moves_game_id_games"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("game_id", "ply", name=op.f("pk_moves")),
    )


def downgrade() -> None:
    """Drop everything, children first."""
    op.drop_table("moves")
    op.drop_index(op.f("ix_games_black_id"), table_name="games")
    op.drop_index(op.f("ix_games_white_id"), table_name="games")
    op.drop_index(op.f("ix_games_tournament_id_status"), table_name="games")
    op.drop_table("games")
    op.drop_index(op.f("ix_engines_tournament_id"), table_name="engines")
    op.drop_table("engines")
    op.drop_index(op.f("ix_tournaments_fingerprint"), table_name="tournaments")
    op.drop_table("tournaments")
