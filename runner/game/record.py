"""One game's description and its record: what to play (`GameSpec`) and what happened (`GameRecord`).

`GameRecord` is the runner's one record of a played game: the game loop returns it, the store
keeps it as it is and the PGN text is made from it here. Its moves are the PGN writer's
`MoveRecord` (the layer below), so no layer translates a ply into a type of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from runner.clock import Clock, TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.termination import GameTermination
from runner.pgn.writer import GameDescription, format_game
from runner.protocol.engine import TranscriptEntry
from runner.rules import Result
from runner.types import MoveRecord, Variant

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "STDERR_KEPT",
    "STDERR_TERMINATIONS",
    "TRANSCRIPT_LINE_LIMIT",
    "UNTIMED_MOVE_TIMEOUT",
    "GameRecord",
    "GameSpec",
    "GameTermination",
    "game_description",
    "game_pgn",
]

UNTIMED_MOVE_TIMEOUT = 600.0
"""Seconds an engine may think on a move when no clock runs (depth or node limits, ``inf``)."""
TRANSCRIPT_LINE_LIMIT = 2000
STDERR_KEPT = 8192
"""Characters of an engine's standard error kept with a game (its last ones)."""
STDERR_TERMINATIONS = frozenset({GameTermination.DISCONNECT, GameTermination.STALL,
                                 GameTermination.TIME_FORFEIT})
"""The endings after which the engines' standard error of the game is kept."""
"""Characters of one protocol line kept in a game record's transcripts."""


@dataclass(frozen=True)
class GameSpec:
    """A plain, serialisable description of one game to play (no engine handles)."""

    white_tc: TimeControl
    black_tc: TimeControl
    start_fen: str | None = None
    opening_moves: tuple[str, ...] = ()
    variant: Variant = Variant.STANDARD
    adjudication: AdjudicationRules = field(default_factory=AdjudicationRules)
    tags: Mapping[str, str] = field(default_factory=dict)
    untimed_move_timeout: float = UNTIMED_MOVE_TIMEOUT
    """Seconds before an engine without a running clock (depth, ``inf``) is declared stalled."""
    move_ceiling: float | None = None
    """Seconds a move may take on a side without a running clock (a depth or node limit)
    before it is lost on time (``runner serve`` sets it for submissions); None: such a move
    may take `untimed_move_timeout`, and the engine then counts as stalled."""
    white_pov: tuple[bool, bool] = (False, False)
    """(White, Black): whether that side's engine reports scores from White's side
    (cutechess-cli's ``whitepov``): the Black one's scores are negated when read."""
    clock_head_start: bool = False
    """Each clock starts with its first period's increment added (the order style decides:
    cutechess-cli's clocks do), so every move starts with one increment more."""
    result_words: Callable[[Result, GameTermination, str], str] | None = None
    """How the engines are told why the game ended, from its result, termination and the
    runner's reason (the order style decides; None: the runner's reason as it is). A
    module-level function, so that a job still pickles for a worker."""

    def __post_init__(self) -> None:
        if self.untimed_move_timeout <= 0:
            raise ValueError(f"untimed move timeout must be positive, not {self.untimed_move_timeout}")
        if self.move_ceiling is not None and not self.move_ceiling > 0:
            raise ValueError(f"move ceiling must be positive, not {self.move_ceiling}")


@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game: moves with their data, result, termination, timings, transcripts."""

    white: str
    black: str
    spec: GameSpec
    moves: tuple[MoveRecord, ...]
    """Every ply from the start position, the opening (book) moves first."""
    result: Result
    termination: GameTermination
    reason: str
    """Human-readable detail (``White mates``, ``Black disconnects (exit code 11)``)."""
    started_at: datetime
    ended_at: datetime
    final_fen: str
    protocol_lines: tuple[tuple[TranscriptEntry, ...], tuple[TranscriptEntry, ...]] = ((), ())
    """Each engine's transcript entries of this game (white's, then black's)."""
    replay: bool = False
    """A runner-side failure: the game has no valid result and should be played again."""
    worker: str | None = None
    """Where the game was played when not in the runner's process (a Dask worker's name)."""
    stderr: tuple[str, str] = ("", "")
    """Each engine's standard error during the game (white's, black's; its last
    `STDERR_KEPT` characters), kept only for the `STDERR_TERMINATIONS`."""

    def to_json(self) -> str:
        """The record as JSON text (`from_json` reads it back into an equal record)."""
        return _record_adapter().dump_json(self).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> GameRecord:
        """A record from `to_json` output; ValueError when the text is not a valid record."""
        return _record_adapter().validate_json(text)

    @functools.cached_property
    def transcripts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Each engine's protocol lines of this game as text, cut to a readable length.

        Formatted on first use only: most games are stored without anyone reading them, and
        formatting every line of every game is a noticeable share of the runner's CPU.
        """
        white, black = self.protocol_lines
        return tuple(_clip(str(e)) for e in white), tuple(_clip(str(e)) for e in black)

    @property
    def plies(self) -> int:
        """Number of half-moves, opening moves included."""
        return len(self.moves)

    @property
    def duration(self) -> float:
        """Wall-clock seconds the game took."""
        return (self.ended_at - self.started_at).total_seconds()

    @property
    def opening_moves(self) -> tuple[str, ...]:
        """The book moves the game started with, in coordinate form."""
        return tuple(m.uci for m in self.moves if m.book)

    def clocks_asked(self) -> tuple[float | None, ...]:
        """For each ply, the seconds on the mover's clock when it was asked for the move:
        what its previous move left it (increment added), or its clock's start for its first
        move. None for a book move and where no clock runs (depth, nodes, infinite)."""
        spec = self.spec
        side = 0 if spec.start_fen is None or spec.start_fen.split()[1:2] != ["b"] else 1
        left = [Clock(spec.white_tc, spec.clock_head_start).remaining,
                Clock(spec.black_tc, spec.clock_head_start).remaining]
        asked: list[float | None] = []
        for move in self.moves:
            if move.book or move.time_left is None:
                asked.append(None)
            else:
                asked.append(left[side])
                left[side] = move.time_left
            side = 1 - side
        return tuple(asked)


@functools.cache
def _record_adapter() -> TypeAdapter[GameRecord]:
    """The pydantic adapter for records, built on first use (a worker's results travel as JSON)."""
    from pydantic import TypeAdapter

    return TypeAdapter(GameRecord)


def _clip(line: str) -> str:
    if len(line) <= TRANSCRIPT_LINE_LIMIT:
        return line
    return f"{line[:TRANSCRIPT_LINE_LIMIT]}... ({len(line)} characters)"


def game_description(record: GameRecord, tags: Mapping[str, str] | None = None) -> GameDescription:
    """The PGN writer's view of a game: tags, annotated moves, result and reasons."""
    all_tags = {"Event": "?", "Site": "?", "Round": "?"}
    all_tags.update(record.spec.tags)
    if tags:
        all_tags.update(tags)
    all_tags["White"] = record.white
    all_tags["Black"] = record.black
    all_tags.setdefault("Date", record.started_at.strftime("%Y.%m.%d"))
    white_tc, black_tc = record.spec.white_tc, record.spec.black_tc
    time_control = white_tc.to_pgn() if white_tc == black_tc else None
    if time_control is None:
        all_tags.setdefault("WhiteTimeControl", white_tc.to_pgn())
        all_tags.setdefault("BlackTimeControl", black_tc.to_pgn())
    return GameDescription(
        tags=all_tags, moves=record.moves, result=record.result, start_fen=record.spec.start_fen,
        chess960=record.spec.variant is Variant.FISCHERANDOM, time_control=time_control,
        termination=record.termination.pgn_tag, reason=record.reason,
        start_time=record.started_at, end_time=record.ended_at,
    )


def game_pgn(record: GameRecord, tags: Mapping[str, str] | None = None) -> str:
    """The game as export-format PGN text."""
    return format_game(game_description(record, tags))
