"""Turning a played game's ``GameRecord`` into what other modules keep: PGN and store rows."""

from __future__ import annotations

from collections.abc import Mapping

from runner.game.play import GameRecord
from runner.pgn.writer import GameDescription, MoveRecord, format_game
from runner.protocol.engine import Variant
from runner.store.recording import FinishedGame
from runner.store.recording import MoveRecord as StoredMove


def game_description(record: GameRecord, tags: Mapping[str, str] | None = None) -> GameDescription:
    """The PGN writer's view of a game: tags, annotated moves, result and reasons."""
    all_tags = {"Event": "?", "Site": "?", "Round": "?"}
    all_tags.update(record.spec.tags)
    if tags:
        all_tags.update(tags)
    all_tags["White"] = record.white
    all_tags["Black"] = record.black
    all_tags.setdefault("Date", record.started_at.strftime("%Y.%m.%d"))
    moves = [
        MoveRecord(san=m.san, score_cp=m.score_cp, mate=m.mate, depth=m.depth, time=m.time, book=m.book)
        for m in record.moves
    ]
    white_tc, black_tc = record.spec.white_tc, record.spec.black_tc
    time_control = white_tc.to_pgn() if white_tc == black_tc else None
    if time_control is None:
        all_tags.setdefault("WhiteTimeControl", white_tc.to_pgn())
        all_tags.setdefault("BlackTimeControl", black_tc.to_pgn())
    return GameDescription(
        tags=all_tags, moves=moves, result=record.result, start_fen=record.spec.start_fen,
        chess960=record.spec.variant is Variant.FISCHERANDOM, time_control=time_control,
        termination=record.termination.pgn_tag, reason=record.reason,
        start_time=record.started_at, end_time=record.ended_at,
    )


def game_pgn(record: GameRecord, tags: Mapping[str, str] | None = None) -> str:
    """The game as export-format PGN text."""
    return format_game(game_description(record, tags))


def finished_game(record: GameRecord, pgn: str | None = None) -> FinishedGame:
    """The store's view of a finished game, every ply included (book moves first)."""
    moves = [
        StoredMove(san=m.san, uci=m.uci, time_ms=None if m.time is None else round(m.time * 1000),
                   depth=m.depth, score_cp=m.score_cp, mate=m.mate, nodes=m.nodes)
        for m in record.moves
    ]
    return FinishedGame(
        result=record.result, termination=record.termination.value, started_at=record.started_at,
        ended_at=record.ended_at, moves=moves, reason=record.reason,
        opening_fen=record.spec.start_fen,
        opening_moves=[m.uci for m in record.moves if m.book],
        pgn=pgn if pgn is not None else game_pgn(record),
    )
