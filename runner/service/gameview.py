"""One finished game as the page replays it: its moves with the position, clocks and engine
evaluation after each, from the stored game and its moves (read through the store object)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from runner.clock import Clock, TimeControl, TimePeriod
from runner.rules import STARTING_FEN, Board

if TYPE_CHECKING:
    from runner.store.store import Store

__all__ = ["GameMove", "GameView", "game_pgn", "game_view"]


class GameMove(BaseModel):
    """One ply of a stored game and what followed it."""

    ply: int = Field(description="1 for White's first move.")
    san: str
    uci: str
    fen: str | None = Field(description="The position after the move (None if the stored "
                                        "moves cannot be replayed from the start position).")
    time_ms: int | None = Field(description="Thinking time of the move (None for book moves).")
    white_clock: float | None = Field(description="White's clock after the move, seconds.")
    black_clock: float | None = Field(description="Black's clock after the move, seconds.")
    score_cp: int | None = Field(description="The mover's score in centipawns, its own view.")
    mate: int | None = Field(description="Mate in this many moves, the mover's view.")
    depth: int | None


class GameView(BaseModel):
    """A finished game: who played, how it ended, its start position and its moves."""

    tournament_id: int
    index: int = Field(description="The game's place in the schedule (0-based).")
    round: int
    white: str
    black: str
    result: str | None
    termination: str | None
    reason: str | None
    time_control: str | None = Field(description="The PGN TimeControl tag, seconds.")
    start_fen: str
    white_clock: float | None = Field(description="White's clock at the start, seconds.")
    black_clock: float | None
    moves: list[GameMove]
    white_stderr: str | None = Field(
        default=None, description="White's standard error in the game (its last 8192 "
        "characters), kept when the game ended by a crash, a stall or a time loss.")
    black_stderr: str | None = Field(default=None, description="Black's, as white_stderr.")


_TAG = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]\s*$', re.MULTILINE)


def _tags(pgn: str | None) -> dict[str, str]:
    """The tag pairs of a stored PGN."""
    return {name: value.replace('\\"', '"').replace("\\\\", "\\")
            for name, value in _TAG.findall(pgn or "")}


def _control(tag: str | None) -> TimeControl | None:
    """The clock periods of a PGN TimeControl tag (``40/9000:300+2``, ``10+0.1``), or None
    when it has none (``-``, ``?``) or is not in that form."""
    if not tag or tag in ("-", "?"):
        return None
    periods = []
    try:
        for part in tag.split(":"):
            moves, _, rest = part.rpartition("/")
            base, _, increment = rest.partition("+")
            periods.append(TimePeriod(int(moves) if moves else 0, float(base),
                                      float(increment) if increment else 0.0))
        return TimeControl(tuple(periods))
    except ValueError:
        return None


def game_pgn(store: Store, tournament_id: int, index: int) -> str | None:
    """The stored PGN of one finished game (None: no such game)."""
    game = store.game(tournament_id, index)
    return None if game is None else (game.pgn or "")


def game_view(store: Store, tournament_id: int, index: int) -> GameView | None:
    """One finished game with its moves (None: no such finished game)."""
    game = store.game(tournament_id, index)
    if game is None:
        return None
    stored = store.game_moves(game.id)
    tags = _tags(game.pgn)
    start = tags.get("FEN") or game.opening_fen or STARTING_FEN
    chess960 = tags.get("Variant", "").lower() in ("chess960", "fischerandom", "fischerrandom")
    board: Board | None
    try:
        board = Board(start, chess960=chess960)
    except ValueError:
        board = None
    control = _control(tags.get("TimeControl"))
    clocks = {True: Clock(control), False: Clock(control)} if control else None
    white_to_move = board.turn if board is not None else True
    moves = []
    for move in stored:
        fen = None
        if board is not None:
            try:
                board.push_uci(move.uci)
                fen = board.fen()
            except ValueError:  # a move the rules refuse: stop replaying, keep listing
                board = None
        if clocks is not None and move.time_ms is not None:
            clocks[white_to_move].spend(move.time_ms / 1000.0)
        moves.append(GameMove(
            ply=move.ply, san=move.san, uci=move.uci, fen=fen, time_ms=move.time_ms,
            white_clock=None if clocks is None else clocks[True].remaining,
            black_clock=None if clocks is None else clocks[False].remaining,
            score_cp=move.score_cp, mate=move.mate, depth=move.depth))
        white_to_move = not white_to_move
    return GameView(
        tournament_id=tournament_id, index=game.job_index, round=game.round, white=game.white,
        black=game.black, result=None if game.result is None else game.result.value,
        termination=None if game.termination is None else game.termination.value,
        reason=game.reason, time_control=tags.get("TimeControl"), start_fen=start,
        white_clock=None if control is None else control.periods[0].base,
        black_clock=None if control is None else control.periods[0].base, moves=moves,
        white_stderr=game.white_stderr, black_stderr=game.black_stderr)
