"""The small shared vocabulary of a game: the variant played, the record of one move, and the
words an engine is configured with (its protocol, its Chess960 castling, its options' values).

Like fastchess's ``types/``, these sit below every room that speaks of a game (the protocol
clients, the PGN writer, the game loop, the configuration, the store), so none of them has to
import another room for a plain value. Python, not compiled: they hold data, and the hot
modules that read them only compare or build them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Castling960Style", "MoveRecord", "OptionValue", "Protocol", "Variant"]

OptionValue = str | int | float | bool
"""An engine option's value, typed from the configuration to the protocol client, which
spells it: a bool for a check, an int for a spin, a str for a combo, string or path (a float
only as a configuration may write it, sent as its text). A value written as text for a
declared spin or check ("64", "true") is read as the declaration's type in one place,
`runner.protocol.options.declared_value`, once the engine has declared its options. (The
members' order is the one the stored configurations were written with: left as it is.)"""


class Variant(enum.Enum):
    """Chess variants the runner plays."""

    STANDARD = "standard"
    FISCHERANDOM = "fischerandom"


class Protocol(enum.StrEnum):
    """The protocol an engine speaks (a str enum: stored, sent and compared as its word)."""

    CECP = "cecp"
    UCI = "uci"


class Castling960Style(enum.StrEnum):
    """How Chess960 castling is written to a CECP engine (a str enum, as `Protocol`)."""

    OO = "oo"
    """O-O / O-O-O, the specification's form for variant fischerandom."""
    KXR = "kxr"
    """The king onto its own rook (e1h1), as Fairy-Stockfish wants it."""


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One ply as played: SAN and coordinate form, plus what the engine said about it.

    The one move record of the runner: the game loop fills it, the PGN writer formats it and the
    store keeps it, each reading the fields it needs (the writer ignores `uci` and `nodes`).
    """

    san: str
    score_cp: int | None = None
    """Score in centipawns from the mover's point of view."""
    mate: int | None = None
    """Mate distance as the engine reported it; positive when the mover mates."""
    depth: int | None = None
    """Search depth; written only together with a score."""
    time: float | None = None
    """Seconds the mover spent on the move."""
    book: bool = False
    """An opening-book move (written ``{book}``)."""
    comment: str = ""
    """Free text added after the annotation."""
    uci: str = ""
    """The move in coordinate form (``e2e4``, ``e7e8q``); empty for a move known only as SAN."""
    nodes: int | None = None
    """Nodes the engine searched for the move."""
    seldepth: int | None = None
    """Selective search depth the engine reported (fastchess's ``sd=``)."""
    nps: int | None = None
    """Nodes per second the engine reported."""
    hashfull: int | None = None
    """Hash table fill in permille the engine reported."""
    tbhits: int | None = None
    """Tablebase hits the engine reported."""
    pv: tuple[str, ...] = ()
    """The engine's principal variation for the move, coordinate form."""
    time_left: float | None = None
    """Seconds left on the mover's clock after the move (None: no clock runs)."""
    latency: float | None = None
    """Seconds the move took beyond the search time the engine reported (may be negative)."""
    ponder_hit: bool | None = None
    """Whether the mover had pondered on the opponent's move before it (None: no pondering)."""
