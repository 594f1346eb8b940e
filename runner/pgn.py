"""PGN in and out: one import point for the streaming reader and the export-format writer.

The reader lives in ``runner.pgn_reader`` (splitter and replay on ``runner.rules``), the writer
in ``runner.pgn_writer`` (neutral ``GameDescription`` to text); this module re-exports both.
"""

from __future__ import annotations

from runner.pgn_reader import (
    CHESS960_VARIANTS,
    PgnCheckReport,
    PgnError,
    PgnGame,
    PgnMove,
    PgnNotice,
    check_pgn,
    parse_games,
    read_games,
    unescape_tag_value,
)
from runner.pgn_writer import (
    SEVEN_TAG_ROSTER,
    GameDescription,
    MoveAnnotation,
    MoveRecord,
    append_game,
    escape_tag_value,
    format_game,
    format_move_comment,
    parse_move_comment,
    time_control_tag,
)

__all__ = [
    "CHESS960_VARIANTS",
    "SEVEN_TAG_ROSTER",
    "GameDescription",
    "MoveAnnotation",
    "MoveRecord",
    "PgnCheckReport",
    "PgnError",
    "PgnGame",
    "PgnMove",
    "PgnNotice",
    "append_game",
    "check_pgn",
    "escape_tag_value",
    "format_game",
    "format_move_comment",
    "parse_games",
    "parse_move_comment",
    "read_games",
    "time_control_tag",
    "unescape_tag_value",
]
