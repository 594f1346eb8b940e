"""What cutechess-cli's options decide about its output: lines, rating table, PGN and EPD files.

The command-line side (`args.py`) fills one `CutechessSettings` from the argv; `CutechessOutput`
reads nothing else. Every default is cutechess-cli 1.5.1's own (`EngineMatch`, `Tournament` and
`main.cpp`'s `parseMatch`), so a field left alone prints what cutechess prints without the option.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["DEFAULT_RESULT_FORMAT", "CutechessSettings", "PgnMode", "SprtBounds"]

DEFAULT_RESULT_FORMAT = "default"
"""`-resultformat`'s default: the named format `Rank,Name,Elo,Error,Games,Score,DScore`."""


class PgnMode(enum.Enum):
    """The two PGN forms of `-pgnout FILE [min]` (cutechess's `PgnGame::PgnMode`)."""

    VERBOSE = "verbose"
    """Every tag and the move comments (`{+0.25/12 0.123s}`): the default."""
    MINIMAL = "min"
    """The seven-tag roster (plus FEN/SetUp and a non-standard Variant), no comments."""


@dataclass(frozen=True)
class SprtBounds:
    """`-sprt elo0= elo1= alpha= beta=`: the hypotheses and error rates of the stopping rule."""

    elo0: float
    elo1: float
    alpha: float
    beta: float


@dataclass(frozen=True)
class CutechessSettings:
    """Every output setting cutechess-cli's options decide, with cutechess-cli's defaults."""

    players: tuple[str, ...] = ()
    """The engines' names in `-engine` order: cutechess's player indices. Player 0 and 1 name
    the `Score of A vs B` line; players that finished no game still get a row in the table."""
    time_controls: tuple[str, ...] = ()
    """Each player's time control as cutechess writes it (`40/60+0.5`, `inf`): the table's `TC`
    field (`-resultformat wide3`). Empty: the field is blank."""
    tournament: str = "round-robin"
    """`-tournament`: `round-robin` (the default), `gauntlet`, `knockout` or `pyramid`; a
    gauntlet (with seeds) lists its seeded players first in the table."""
    seeds: int = 0
    """`-seeds N`: how many players are seeded (the gauntlet's first N)."""
    final_game_count: int | None = None
    """The `M` of `Started game N of M` (cutechess's final game count: the whole schedule, even
    under `-sprt`). None: taken from the run's own total."""
    variant: str = "standard"
    """`-variant`: any other than `standard` is written in the PGN `Variant` tag."""
    event: str = ""
    """`-event`: the PGN `Event` tag; empty is written as `?`."""
    site: str = ""
    """`-site`: the PGN `Site` tag; empty is written as `?`."""
    pgn_out: str | None = None
    """`-pgnout FILE`: the PGN file games are appended to as they end, in game-number order."""
    pgn_mode: PgnMode = PgnMode.VERBOSE
    """`-pgnout FILE min`: `PgnMode.MINIMAL`; else `PgnMode.VERBOSE`."""
    pgn_finished_only: bool = False
    """`-pgnout FILE fi`: games without a result, and those cut by a stop, are left out of the
    file (with a `Warning: Omitted incomplete game N` line)."""
    epd_out: str | None = None
    """`-epdout FILE`: every game's final position is appended as one FEN line."""
    rating_interval: int = 0
    """`-ratinginterval N`: the ranking (or the per-colour, Elo and SPRT lines of a match) after
    every N finished games; 0, cutechess's default, prints it once at the end."""
    outcome_interval: int = 0
    """`-outcomeinterval N`: the per-player outcome counts after every N finished games; 0
    prints them once at the end."""
    result_format: str = DEFAULT_RESULT_FORMAT
    """`-resultformat`: a named format (`default`, `wide`, `per-color`...) or comma-separated
    field tokens (`Rank,Name,Elo,...`) for the table of more than two players."""
    sprt: SprtBounds | None = None
    """`-sprt`: the `SPRT: llr ...` line under the ratings; None, the default, prints none."""
    debug: bool = False
    """`-debug`: every engine line is echoed with the milliseconds since the start."""
    recover: bool = False
    """`-recover`: a crashed or stalled engine is restarted and the run goes on; without it the
    first disconnect or stall ends the run (the games in progress are stopped)."""
