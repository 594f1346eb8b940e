"""Ending games early by the engines' own scores: draw, resign and maximum-length trackers.

Each tracker is a small, pure state machine: ``update`` with one ply's facts, ``verdict`` when
the rule fires. The game loop composes them; nothing here knows about engines or clocks.
They count as fastchess does, and as cutechess-cli does wherever the two agree, so that the
same settings end the same games on the same ply: docs/adjudication.md lists every
convention (where a count starts, what resets it, plies or moves, book plies, the order of
checks) with the peer it follows, and tests/test_peer_games.py checks it against both peers.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol

from mypy_extensions import mypyc_attr

from runner.rules import Board, Result

if TYPE_CHECKING:
    from runner.tablebase import Tablebase

log = logging.getLogger(__name__)

MATE_SCORE_CP = 100_000
"""The centipawn value a mate score counts as when compared with thresholds."""


@mypyc_attr(native_class=False)
@dataclass(frozen=True)
class AdjudicationRules:
    """When the arbiter ends a game early; ``None`` switches a rule off.

    draw: from full move ``draw_move_number`` on, both engines' scores within
    ``draw_score`` cp for ``draw_move_count`` consecutive moves each (a capture or pawn
    move restarts the count). resign: a side's own score at or below ``-resign_score`` for
    ``resign_move_count`` consecutive moves (with ``resign_two_sided`` both sides' scores
    at least that far from zero). ``max_moves``: the engines' full moves before a draw.
    A count of 0 switches its rule off, as None does. docs/adjudication.md says exactly
    when each fires and which peer (fastchess, cutechess-cli) each convention follows.
    """

    # Quoted, unions as Optional: what pydantic reads when this module is compiled (mypyc
    # keeps only such annotations exact; see pyproject.toml's per-file-ignores).
    draw_move_number: "Optional[int]" = None
    draw_move_count: int = 8
    draw_score: int = 10
    resign_move_count: "Optional[int]" = None
    resign_score: int = 600
    resign_two_sided: bool = False
    max_moves: "Optional[int]" = None
    false_claim_loses: bool = True
    tablebases: "tuple[str, ...]" = ()
    """Syzygy directories searched for tablebase adjudication; empty: the rule is off."""
    tb_pieces: "Optional[int]" = None
    """Probe only positions of at most this many pieces (None: all the tables cover)."""
    tb_ignore_50: bool = False
    """Count cursed wins and blessed losses as wins and losses (cutechess's -tbignore50)."""
    tb_wins: bool = True
    """Whether the tables may end a game with a win (fastchess's -tbadjudicate WIN_LOSS)."""
    tb_draws: bool = True
    """Whether the tables may end a game with a draw (fastchess's -tbadjudicate DRAW)."""
    resign_per_side: bool = False
    """Two-sided resignation counted per side, as cutechess-cli does (``runner-cutechess``):
    the loser's own ``resign_move_count`` moves at or below ``-resign_score`` and the
    winner's own as many at or above ``+resign_score``; otherwise fastchess's one count."""
    board_plies: bool = False
    """Count ``max_moves`` and ``draw_move_number`` on the plies played on the board from the
    start position, book plies included, and check the draw before resignation, as
    cutechess-cli does (``runner-cutechess``); otherwise the engines' plies, the FEN's move
    number and resignation first, as fastchess does."""

    def __post_init__(self) -> None:
        for name in ("draw_move_number", "resign_move_count", "max_moves"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"adjudication {name} must not be negative, got {value}")
        if self.draw_move_count < 1 or self.draw_score < 0 or self.resign_score < 0:
            raise ValueError("adjudication counts must be positive and scores not negative")
        if self.tb_pieces is not None and self.tb_pieces < 3:
            raise ValueError(f"adjudication tb_pieces must be at least 3, got {self.tb_pieces}")


@dataclass(frozen=True)
class Verdict:
    """An adjudicated end: the result and a sentence saying why."""

    result: Result
    reason: str


def effective_score(score_cp: int | None, mate: int | None) -> int | None:
    """A score in centipawns from the mover's view, mate scores mapped beyond any threshold."""
    if mate is not None:
        return MATE_SCORE_CP if mate > 0 else -MATE_SCORE_CP
    return score_cp


def _is_mate(score: int) -> bool:
    """Whether an ``effective_score`` stands for a mate (fastchess tells mates from cp)."""
    return abs(score) >= MATE_SCORE_CP


class DrawTracker:
    """Counts consecutive plies whose mover's score is a centipawn score near zero.

    fastchess's and cutechess-cli's count (docs/adjudication.md): a capture or pawn move
    restarts the count and then counts itself when its score is near zero; a mate score,
    a missing score or a score outside the window restarts it at zero. The start move only
    gates the verdict: plies before it still count.
    """

    def __init__(self, rules: AdjudicationRules) -> None:
        self.rules = rules
        self.count = 0

    def update(self, score: int | None, zeroing: bool) -> None:
        """Record one ply: the mover's score (``effective_score``) and whether it zeroed."""
        if self.rules.draw_move_number is None:
            return
        if zeroing:
            self.count = 0
        if score is not None and not _is_mate(score) and abs(score) <= self.rules.draw_score:
            self.count += 1
        else:
            self.count = 0

    def verdict(self, moves_played: int) -> Verdict | None:
        """A draw once both sides kept the score small for the required number of moves.

        ``moves_played`` is the position's full move number minus one after the ply (the
        FEN's move counter counts, as in fastchess).
        """
        rules = self.rules
        if (rules.draw_move_number is not None and moves_played >= rules.draw_move_number
                and self.count >= 2 * rules.draw_move_count):
            return Verdict(Result.DRAW, f"Draw by adjudication: scores within {rules.draw_score} cp "
                                      f"for {rules.draw_move_count} moves")
        return None


class ResignTracker:
    """fastchess's resign count (docs/adjudication.md).

    One-sided: per side, consecutive own moves scoring at or below ``-resign_score`` (or a
    mate against the mover). Two-sided: consecutive plies of either side whose score is at
    least ``resign_score`` away from zero (or any mate score), ``2 * resign_move_count`` of
    them. Either way the rule ends the game only on a ply whose mover scores below zero, and
    the mover loses.
    """

    def __init__(self, rules: AdjudicationRules) -> None:
        self.rules = rules
        self.losing = {True: 0, False: 0}
        self.winning = {True: 0, False: 0}
        self.decisive = 0

    def update(self, white_moved: bool, score: int | None) -> None:
        """Record the mover's score after one of its moves."""
        threshold = self.rules.resign_score
        if self.rules.resign_two_sided and self.rules.resign_per_side:
            losing = score is not None and (score <= -MATE_SCORE_CP or score <= -threshold)
            winning = score is not None and (score >= MATE_SCORE_CP or score >= threshold)
            self.losing[white_moved] = self.losing[white_moved] + 1 if losing else 0
            self.winning[white_moved] = self.winning[white_moved] + 1 if winning else 0
        elif self.rules.resign_two_sided:
            big = score is not None and (_is_mate(score) or abs(score) >= threshold)
            self.decisive = self.decisive + 1 if big else 0
        else:
            losing = score is not None and (score <= -MATE_SCORE_CP or score <= -threshold)
            self.losing[white_moved] = self.losing[white_moved] + 1 if losing else 0

    def verdict(self, white_moved: bool, score: int | None) -> Verdict | None:
        """A win for the opponent of the mover when the count is reached and the mover's
        ``score`` (its last one, as given to ``update``) is below zero."""
        rules = self.rules
        if not rules.resign_move_count:  # None or 0: off (0 used to end every game at once)
            return None
        need = rules.resign_move_count
        if rules.resign_two_sided and rules.resign_per_side:
            reached = (self.losing[white_moved] >= need
                       and self.winning[not white_moved] >= need)
        elif rules.resign_two_sided:
            reached = self.decisive >= 2 * need
        else:
            reached = self.losing[True] >= need or self.losing[False] >= need
        if not reached or score is None or score >= 0:
            return None
        winner_name = "Black" if white_moved else "White"
        return Verdict(Result.BLACK_WINS if white_moved else Result.WHITE_WINS,
                       f"{winner_name} wins by adjudication")


def max_moves_verdict(rules: AdjudicationRules, plies: int) -> Verdict | None:
    """A draw once the engines played the maximum number of full moves (``plies``: the
    engines' own plies, the opening's book plies not counted, as in fastchess)."""
    if rules.max_moves is not None and rules.max_moves > 0 and plies >= 2 * rules.max_moves:
        return Verdict(Result.DRAW, f"Draw by maximum game length ({rules.max_moves} moves)")
    return None


TABLEBASE_REASON = "SyzygyTB"
"""What both peers append to a tablebase adjudication's sentence (``... by adjudication: SyzygyTB``)."""


class WdlProbe(Protocol):
    """What `TablebaseJudge` needs of a tablebase: its largest table and a WDL probe."""

    @property
    def max_pieces(self) -> int:
        """The most pieces of any table found (0 when none is)."""
        ...

    def probe_wdl(self, board: Board) -> int | None:
        """WDL -2..2 from the side to move, None when unknown."""
        ...


class TablebaseJudge:
    """Ends a game by the Syzygy tables, as fastchess does (docs/adjudication.md).

    A position is probed only when its halfmove clock is 0 (right after a capture or a pawn
    move, or at a start with a zero clock), it has no castling rights, and it has at most
    ``tb_pieces`` pieces and no more than the largest table. A WDL of 2 or -2 is a win, 0 a
    draw; a cursed win or blessed loss (1, -1) is a draw unless ``tb_ignore_50``. Results
    the rules' ``tb_wins`` / ``tb_draws`` leave out, and unknown positions, play on.
    """

    __slots__ = ("_draws", "_failures", "_ignore_50", "_limit", "_tables", "_wins")

    def __init__(self, rules: AdjudicationRules, tables: WdlProbe) -> None:
        from runner.tablebase import TablebaseError  # here: only games with tables load it

        self._failures: tuple[type[Exception], ...] = (TablebaseError, OSError)
        self._tables = tables
        limit = tables.max_pieces
        if rules.tb_pieces is not None:
            limit = min(limit, rules.tb_pieces)
        self._limit = limit
        self._ignore_50 = rules.tb_ignore_50
        self._wins = rules.tb_wins
        self._draws = rules.tb_draws

    def verdict(self, board: Board) -> Verdict | None:
        """The tables' result for the position after a move, or None to play on."""
        # The cheap tests first: most positions of a game fail the first or the second, and
        # a position with more pieces than the tables never reaches a probe.
        if board.halfmove_clock or board.castling_rights:
            return None
        if board.occupied.bit_count() > self._limit:
            return None
        try:
            wdl = self._tables.probe_wdl(board)
        except self._failures as exc:  # a damaged or vanished file: unknown, the game goes on
            log.warning("tablebase probe failed on %s: %s", board.fen(), exc)
            return None
        if wdl is None:
            return None
        if wdl in (1, -1) and not self._ignore_50:
            wdl = 0  # the 50-move rule saves the losing side
        if wdl == 0:
            return Verdict(Result.DRAW, f"Draw by adjudication: {TABLEBASE_REASON}") \
                if self._draws else None
        if not self._wins:
            return None
        white_wins = (wdl > 0) == board.turn
        return Verdict(Result.WHITE_WINS if white_wins else Result.BLACK_WINS,
                       f"{'White' if white_wins else 'Black'} wins by adjudication: "
                       f"{TABLEBASE_REASON}")


@functools.cache
def open_tablebase(directories: tuple[str, ...]) -> Tablebase | None:
    """This process's tables from `directories`, opened once and kept (files map lazily).

    Each process (the runner's, each Dask worker's) opens its own from the paths the game
    names: a table missing on one machine only makes its positions unknown there. Tables
    that cannot be opened at all give None (no tablebase adjudication) and a warning,
    never a failed game; ``runner worker check`` shows what each worker found.
    """
    from runner.tablebase import Tablebase, TablebaseError

    try:
        return Tablebase(list(directories))
    except (TablebaseError, OSError) as exc:
        log.warning("no tablebase adjudication: cannot open %s: %s", ":".join(directories), exc)
        return None


def tablebase_judge(rules: AdjudicationRules) -> TablebaseJudge | None:
    """The game's tablebase rule: None when the rules name no tables or none opened."""
    if not rules.tablebases:
        return None
    tables = open_tablebase(rules.tablebases)
    if tables is None or tables.max_pieces < 3:
        return None
    return TablebaseJudge(rules, tables)
