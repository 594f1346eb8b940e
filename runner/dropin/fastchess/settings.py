"""What fastchess's options decide about its output: the lines it prints and the files it writes.

The args side (``args.py``) fills one `FastchessSettings` from the command line and hands it to
`FastchessOutput`; every default here is fastchess 1.8.2's own (``config::Tournament``,
``config::Pgn``, ``config::Epd``, ``config::Log`` and the option parsers in ``cli.cpp``), so a
field the command line does not mention stays as fastchess would have it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "EngineSummary",
    "FastchessSettings",
    "LogLevel",
    "Notation",
    "OutputFormat",
    "SprtModel",
    "SprtSettings",
]

Notation = Literal["san", "lan", "uci"]
"""How ``-pgnout notation=`` writes moves."""
OutputFormat = Literal["fastchess", "cutechess"]
"""``-output format=``: fastchess's own lines or its cutechess imitation."""
LogLevel = Literal["trace", "info", "warn", "err", "fatal"]
"""``-log level=``."""
SprtModel = Literal["normalized", "logistic", "bayesian"]
"""``-sprt model=``."""


@dataclass(frozen=True)
class SprtSettings:
    """``-sprt``: the hypotheses, error rates and Elo model (fastchess's default: normalized)."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: SprtModel = "normalized"


@dataclass(frozen=True)
class EngineSummary:
    """One ``-engine`` as the results header describes it (``(10+0.1, 1t, 16MB, book.epd)``).

    The limits are the engine's (``-each`` merged in), in fastchess's units: milliseconds for
    times. ``threads``/``hash`` override what the header shows (None: the engine's
    ``option.Threads``/``option.Hash`` from `options`, else the default the engine declares,
    asked with ``uci`` through `command`; ``NULL`` when it has no such option). The engine's
    ``id name``/``id author`` for the PGN are asked the same way.
    """

    name: str
    tc_moves: int = 0
    tc_time_ms: int = 0
    tc_increment_ms: int = 0
    fixed_time_ms: int = 0
    """``st=`` in milliseconds."""
    plies: int = 0
    """``plies=`` / ``depth=``."""
    nodes: int = 0
    threads: str | None = None
    hash: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    """``option.NAME=VALUE`` as given, in order."""
    command: tuple[str, ...] = ()
    """The engine's program and arguments (``cmd=`` and ``args=``), to ask its id and options."""
    directory: str | None = None
    """``dir=``: where the engine runs."""


@dataclass(frozen=True)
class FastchessSettings:
    """Every output setting fastchess's command line decides, with fastchess's defaults."""

    # -pgnout: file= notation= append= nodes= seldepth= nps= hashfull= tbhits= pv= timeleft=
    # latency= min= match_line= (fastchess names the file fastchess_<date>_<time>.pgn when
    # -pgnout comes without file=; no -pgnout at all writes no PGN).
    pgn_file: str | None = None
    pgn_notation: Notation = "san"
    pgn_append: bool = True
    pgn_nodes: bool = False
    pgn_seldepth: bool = False
    pgn_nps: bool = False
    pgn_hashfull: bool = False
    pgn_tbhits: bool = False
    pgn_pv: bool = False
    pgn_timeleft: bool = False
    pgn_latency: bool = False
    pgn_min: bool = False
    pgn_match_lines: tuple[str, ...] = ()
    """``match_line=REGEX`` (repeatable): engine lines matching one are added as PGN comments."""
    event: str = "Fastchess Tournament"
    site: str = "?"

    # -epdout file= append=
    epd_file: str | None = None
    epd_append: bool = True

    # -crc32 pgn=true: "File F has CRC32: 0x..." at the end.
    crc32_pgn: bool = False

    # Results: -ratinginterval (pairs, or games without penta; 0: never), -scoreinterval
    # (cutechess format only), -report penta= (forced off unless -games 2, and in cutechess
    # format), -output format=.
    ratinginterval: int = 10
    scoreinterval: int = 1
    report_penta: bool = True
    output_format: OutputFormat = "fastchess"
    sprt: SprtSettings | None = None

    # What the results header and the start/finish lines need to know of the run.
    engines: tuple[EngineSummary, ...] = ()
    """The ``-engine`` entries in command-line order (the first is the results' "first")."""
    book_file: str = ""
    """``-openings file=`` as given (the header shows its last path component)."""
    book_random: bool = False
    """``order=random`` with a book: fastchess prints ``Indexing opening suite...`` first."""
    games: int = 2
    """``-games`` after fastchess's sanitising: 2 plays colour-swapped pairs."""
    rounds: int = 2
    tournament: Literal["roundrobin", "gauntlet"] = "roundrobin"
    seeds: int = 1
    """``-seeds``: a gauntlet's seeded engines (the first ones)."""
    variant: Literal["standard", "fischerandom"] = "standard"
    recover: bool = False

    # Warnings and diagnostics.
    startup_lines: tuple[str, ...] = ()
    """Lines fastchess prints while it reads its command line, before any game (``Warning: No
    opening book specified! ...``, ``Info: Adjusted concurrency to ...``), in its order."""
    show_latency: bool = False
    test_env: bool = False
    """``-testEnv``: multi-line warnings are joined into one line by `` :: ``."""
    strict: bool = False
    """``-strict``: any warning makes the exit status 1."""
    check_mate_pvs: bool = False

    # -log file= level= append= compress= realtime= engine=
    log_file: str | None = None
    log_level: LogLevel = "warn"
    log_append: bool = True
    log_compress: bool = False
    log_realtime: bool = True
    log_engine: bool = False

    # -config outname= and -autosaveinterval: the resume file fastchess names when interrupted.
    config_name: str = "config.json"
    autosaveinterval: int = 20
    program: str = "fastchess"
    """How the interrupted-run message names the program to rerun."""
