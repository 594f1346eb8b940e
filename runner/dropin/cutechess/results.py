"""How cutechess-cli names a game's end: its result types and reason strings.

cutechess-cli describes every end as a result type (win, draw, resignation, adjudication,
timeout, illegal move, disconnection, stalled connection, agreement, no result) with a winner
and an optional detail, and derives from those the `{...}` text of `Finished game`, the last
PGN comment, the PGN `Termination` tag and the per-player outcome counts. The runner records
a `GameTermination` and a result instead; this module maps one onto the other. It also keeps
the ranking table's field names and widths (`-resultformat`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from runner.game.termination import GameTermination
from runner.rules import Result

__all__ = ["FIELD_GROUPS", "FIELD_HEADERS", "NAMED_FORMATS", "SILENT_FIELDS", "CuteResult", "Kind",
           "cute_result", "qt_fixed", "qt_general", "qt_number"]


class Kind(enum.Enum):
    """cutechess-cli's result types (`Chess::Result::Type`)."""

    WIN = "win"
    DRAW = "draw"
    RESIGNATION = "resignation"
    TIMEOUT = "timeout"
    ADJUDICATION = "adjudication"
    ILLEGAL_MOVE = "illegal move"
    DISCONNECTION = "disconnection"
    STALLED_CONNECTION = "stalled connection"
    AGREEMENT = "agreement"
    NO_RESULT = "no result"


_TERMINATION_TAG = {
    Kind.ADJUDICATION: "adjudication",
    Kind.TIMEOUT: "time forfeit",
    Kind.DISCONNECTION: "abandoned",
    Kind.STALLED_CONNECTION: "stalled connection",
    Kind.ILLEGAL_MOVE: "illegal move",
    Kind.NO_RESULT: "unterminated",
}

_RULE_DRAWS = {
    GameTermination.STALEMATE: "Draw by stalemate",
    GameTermination.INSUFFICIENT_MATERIAL: "Draw by insufficient mating material",
    # cutechess-cli ends a game at the third occurrence and by the fifty-move rule: a fifth
    # occurrence or seventy-five moves can only follow from those, so they read the same.
    GameTermination.THREEFOLD_REPETITION: "Draw by 3-fold repetition",
    GameTermination.FIVEFOLD_REPETITION: "Draw by 3-fold repetition",
    GameTermination.FIFTY_MOVES: "Draw by fifty moves rule",
    GameTermination.SEVENTYFIVE_MOVES: "Draw by fifty moves rule",
}

_ILLEGAL_MARK = "makes an illegal move: "


@dataclass(frozen=True)
class CuteResult:
    """One game's end in cutechess-cli's terms."""

    kind: Kind
    winner: str | None
    """``White``, ``Black`` or None (a draw, or no result)."""
    detail: str = ""
    """What follows the type's words after ``: `` (``SyzygyTB``, an illegal move's text)."""

    @property
    def loser(self) -> str | None:
        """The side that lost, None for a draw or no result."""
        if self.winner is None:
            return None
        return "Black" if self.winner == "White" else "White"

    @property
    def short(self) -> str:
        """The PGN result: ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``."""
        if self.kind is Kind.NO_RESULT:
            return "*"
        if self.winner == "White":
            return "1-0"
        if self.winner == "Black":
            return "0-1"
        return "1/2-1/2"

    @property
    def is_draw(self) -> bool:
        """A drawn game (counted half a point each); no result is not a draw."""
        return self.winner is None and self.kind is not Kind.NO_RESULT

    @property
    def description(self) -> str:
        """The reason text: ``White mates``, ``Black loses on time``, ``Draw by adjudication:
        SyzygyTB``... (cutechess's `Result::description`)."""
        w, lo = self.winner, self.loser
        kind = self.kind
        text = ""
        if kind is Kind.RESIGNATION:
            text = f"{lo} resigns"
        elif kind is Kind.TIMEOUT:
            text = "Draw by timeout" if lo is None else f"{lo} loses on time"
        elif kind is Kind.ADJUDICATION:
            text = "Draw by adjudication" if w is None else f"{w} wins by adjudication"
        elif kind is Kind.ILLEGAL_MOVE:
            text = f"{lo} makes an illegal move"
        elif kind is Kind.DISCONNECTION:
            text = "Draw by disconnection" if lo is None else f"{lo} disconnects"
        elif kind is Kind.STALLED_CONNECTION:
            text = "Draw by stalled connection" if lo is None else f"{lo}'s connection stalls"
        elif kind is Kind.AGREEMENT:
            text = "Draw by agreement" if w is None else f"{w} wins by agreement"
        elif kind is Kind.NO_RESULT:
            text = "No result"
        if not self.detail:
            if kind is Kind.WIN:
                text = f"{w} wins"
            elif kind is Kind.DRAW:
                text = "Drawn game"
        else:
            text = f"{text}: {self.detail}" if text else self.detail
        return text[:1].upper() + text[1:]

    @property
    def verbose(self) -> str:
        """``1-0 {White mates}``: the end as `Finished game` prints it."""
        return f"{self.short} {{{self.description}}}"

    @property
    def termination_tag(self) -> str:
        """The PGN `Termination` value; empty (no tag) for an end by the rules or resignation."""
        return _TERMINATION_TAG.get(self.kind, "")


def _side(white: bool) -> str:
    return "White" if white else "Black"


def cute_result(result: Result, termination: GameTermination, reason: str) -> CuteResult:
    """The runner's record of an end (`result`, `termination`, its `reason` text) as
    cutechess-cli would have called it."""
    winner = ("White" if result is Result.WHITE_WINS else "Black" if result is Result.BLACK_WINS
              else None)
    if result is Result.UNFINISHED or termination is GameTermination.ERROR:
        return CuteResult(Kind.NO_RESULT, None)
    if termination is GameTermination.CHECKMATE:
        return CuteResult(Kind.WIN, winner, f"{winner} mates")
    if termination in _RULE_DRAWS:
        return CuteResult(Kind.DRAW, None, _RULE_DRAWS[termination])
    if termination is GameTermination.RESIGNATION:
        return CuteResult(Kind.RESIGNATION, winner)
    if termination is GameTermination.DRAW_AGREEMENT:
        return CuteResult(Kind.AGREEMENT, winner)
    if termination is GameTermination.ADJUDICATION:
        return CuteResult(Kind.ADJUDICATION, winner)
    if termination is GameTermination.TABLEBASE:
        return CuteResult(Kind.ADJUDICATION, winner, "SyzygyTB")
    if termination is GameTermination.MAX_MOVES:
        return CuteResult(Kind.ADJUDICATION, winner, "maximal game length")
    if termination is GameTermination.FALSE_CLAIM:
        return CuteResult(Kind.ADJUDICATION, winner, "Invalid result claim")
    if termination is GameTermination.TIME_FORFEIT:
        return CuteResult(Kind.TIMEOUT, winner)
    if termination is GameTermination.ILLEGAL_MOVE:
        _, mark, move = reason.partition(_ILLEGAL_MARK)
        return CuteResult(Kind.ILLEGAL_MOVE, winner, move.strip() if mark else "")
    if termination is GameTermination.DISCONNECT:
        return CuteResult(Kind.DISCONNECTION, winner)
    if termination is GameTermination.STALL:
        return CuteResult(Kind.STALLED_CONNECTION, winner)
    return CuteResult(Kind.NO_RESULT, None)


def qt_number(value: float) -> float:
    """`value` with a negative zero made positive: Qt prints -0.0 as ``0``, Python as ``-0``."""
    return value + 0.0 if value == 0.0 else value


def qt_fixed(value: float, decimals: int, width: int = 0) -> str:
    """`QString::arg(value, width, 'f', decimals)`: fixed decimals, right-aligned in `width`."""
    return f"{qt_number(value):>{width}.{decimals}f}"


def qt_general(value: float, precision: int) -> str:
    """`QString::arg(value, 0, 'g', precision)`: significant digits, trailing zeros dropped."""
    return f"{qt_number(value):.{precision}g}"


# -- the ranking table's fields (`-resultformat`) ----------------------------------------

NAMED_FORMATS = {
    "minimal": "Rank,Name",
    "small": "Rank,Name,Games,Points",
    "short": "Rank,Name,Elo,Games",
    "concise": "Rank,Name,Elo,Error,Games",
    "default": "Rank,Name,Elo,Error,Games,Score,DScore",
    "with-points": "Rank,Name,Elo,Error,Games,Points,Score,DScore",
    "wide": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore",
    "wide2": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,wScore,bScore",
    "per-color": "Rank,Name,Elo,Error,Games,W,L,D,Points,wW,wL,wD,wPoints,bW,bL,bD,bPoints",
    "ordo": "Rank,Name,Elo,Points,Games,Score",
    "term": "Rank,Name,Elo,Error,Games,Score,Time,Illegal,Discon,Stall,WrClaim",
    "draws": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,DStale,DMater,DRepet,DMoves,"
             "DAdj,DAgree,OtherD",
    "wide3": "Rank,Name,TC,Elo,Error,Games,WLDStats,DrawStats,Terminations",
}
"""cutechess-cli's named `-resultformat` formats."""

FIELD_GROUPS = (  # replaced in this order (cutechess walks its map of them by name)
    ("DrawStats", "DScore,DStale,DMater,DRepet,DMoves,DAdj,DAgree,OtherD"),
    ("Terminations", "Time,Illegal,Discon,Stall,WrClaim"),
    ("WLDStats", "W,L,D,Points,Score,wW,wL,wD,wPoints,wScore,bW,bL,bD,bPoints,bScore"),
)
"""The `-resultformat` words that stand for several fields, and the fields they stand for."""

# Field token -> (header, width); a negative width is left-aligned. Tokens cutechess knows
# but fills nowhere (LOS, wElo...) print nothing, as there.
FIELD_HEADERS: dict[str, tuple[str, int]] = {
    "Rank": ("Rank", 4), "Name": ("Name", -25), "Elo": ("Elo", 7), "Error": ("+/-", 7),
    "Games": ("Games", 7), "W": ("Wins", 7), "L": ("Losses", 7), "D": ("Draws", 7),
    "Points": ("Points", 8), "Score": ("Score", 7), "DScore": ("Draw", 7),
    "wScore": ("White", 7), "bScore": ("Black", 7), "wDScore": ("WDraw", 7),
    "bDScore": ("BDraw", 7), "wW": ("WWins", 7), "wL": ("WLoss.", 7), "wD": ("WDraws", 7),
    "bW": ("BWins", 7), "bL": ("BLoss.", 7), "bD": ("BDraws", 7), "Time": ("Time", 7),
    "Illegal": ("Illegal", 7), "Discon": ("Discon", 7), "Stall": ("Stall", 7),
    "WrClaim": ("WrClaim", 7), "RegulL": ("RegulL", 7), "RegulW": ("RegulW", 7),
    "OtherW": ("OtherW", 7), "DStale": ("DStale", 7), "DMater": ("DMater", 7),
    "DRepet": ("DRepet", 7), "DMoves": ("DMoves", 7), "DCount": ("DCount", 7),
    "DAdj": ("DAdj", 7), "DAgree": ("DAgree", 7), "OtherD": ("OtherD", 7), "TC": ("TC", 14),
}
"""Each ranking-table field's header and column width (negative: left-aligned)."""
SILENT_FIELDS = frozenset({"LOS", "wElo", "wError", "wLOS", "bElo", "bError", "bLOS"})
"""The fields cutechess-cli knows but never fills: they print nothing."""
