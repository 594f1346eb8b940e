"""fastchess's settings as its command line leaves them (`FastchessArgs`, `EngineArgs`,
`Limits`), its refusals (`FastchessError`) and its scalar parsing (parseScalar, the time
control): what runner.dropin.fastchess.options fills and runner.dropin.fastchess.args checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["INT_MAX", "EngineArgs", "FastchessArgs", "FastchessError", "HelpAsked", "Limits",
           "VersionAsked", "parse_tc", "scalar_bool", "scalar_duration", "scalar_float",
           "scalar_integer", "unrecognized"]

INT_MAX = 2**31 - 1


class FastchessError(Exception):
    """fastchess's message for a refused command line; `printed`: the lines fastchess printed
    before it (its warnings about the book, a concurrency note)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.printed: list[str] = []


class HelpAsked(Exception):
    """``-help`` (or no argument at all): fastchess prints its manual and exits 0."""


class VersionAsked(Exception):
    """``-version``: fastchess prints its version and exits 0."""


@dataclass
class Limits:
    """One engine's limits in fastchess's units (milliseconds; 0: not set)."""

    moves: int = 0
    time: int = 0
    increment: int = 0
    fixed_time: int = 0
    timemargin: int = 0
    nodes: int = 0
    plies: int = 0


@dataclass
class EngineArgs:
    """One ``-engine`` (``-each`` merged in), as fastchess's EngineConfiguration."""

    cmd: str = ""
    name: str = ""
    dir: str = ""
    args: str = ""
    restart: bool = False
    options: list[tuple[str, str]] = field(default_factory=list)
    limit: Limits = field(default_factory=Limits)

    def engine_path(self) -> Path:
        """Where fastchess looks for the program: ``dir/cmd``, or ``cmd``."""
        return Path(self.dir) / self.cmd if self.dir else Path(self.cmd)


@dataclass
class FastchessArgs:
    """fastchess's ``config::Tournament`` as the command line leaves it (1.8.2's defaults)."""

    engines: list[EngineArgs] = field(default_factory=list)
    # -openings
    book_file: str = ""
    book_format: str = "none"
    book_order: str = "sequential"
    book_plies: int = -1
    book_start: int = 1
    # -pgnout / -epdout
    pgn_file: str | None = None
    pgn_given: str | None = None
    """``-pgnout file=`` as written (None: no -pgnout, or none given: a dated name)."""
    pgn_notation: str = "san"
    pgn_append: bool = True
    pgn_track: dict[str, bool] = field(default_factory=dict)
    pgn_min: bool = False
    pgn_match_lines: list[str] = field(default_factory=list)
    event: str = "Fastchess Tournament"
    site: str = "?"
    epd_file: str | None = None
    epd_given: str | None = None
    epd_append: bool = True
    crc32_pgn: bool = False
    # -sprt
    sprt: bool = False
    elo0: float = 0.0
    elo1: float = 0.0
    alpha: float = 0.0
    beta: float = 0.0
    model: str = "normalized"
    # adjudication
    draw: bool = False
    draw_movenumber: int = 0
    draw_movecount: int = 1
    draw_score: int = 0
    resign: bool = False
    resign_movecount: int = 1
    resign_score: int = 0
    resign_twosided: bool = False
    maxmoves: int | None = None
    tb: bool = False
    tb_dirs: str = ""
    tb_pieces: int = 0
    tb_ignore50: bool = False
    tb_adjudicate: str = "BOTH"
    # the tournament
    variant: str = "standard"
    tournament: str = "roundrobin"
    seeds: int = 1
    output: str = "fastchess"
    autosaveinterval: int = 20
    ratinginterval: int = 10
    scoreinterval: int = 1
    games: int = 2
    rounds: int = 2
    report_penta: bool = True
    seed: int | None = None
    """-srand (None: fastchess draws one at random)."""
    concurrency: int = 1
    force_concurrency: bool = False
    wait: int = 0
    noswap: bool = False
    reverse: bool = False
    recover: bool = False
    affinity: bool = False
    affinity_cpus: list[int] = field(default_factory=list)
    check_mate_pvs: bool = False
    show_latency: bool = False
    test_env: bool = False
    strict: bool = False
    startup_ms: int = 10_000
    ucinewgame_ms: int = 60_000
    ping_ms: int = 60_000
    # -log
    log_file: str = ""
    log_level: str = "warn"
    log_append: bool = True
    log_compress: bool = False
    log_realtime: bool = True
    log_engine: bool = False
    # -config
    config_file: str | None = None
    """``-config file=``: the resume file read (its settings replaced the command line's)."""
    config_name: str = "config.json"
    config_stats: dict[str, dict[str, int]] = field(default_factory=dict)
    """The ``stats`` of a ``-config file=`` (games fastchess had played)."""
    config_saved: FastchessArgs | None = None
    """What the command line had set when ``-config file=`` replaced it (``discard=true`` goes
    back to it; without a file read, back to fastchess's defaults: engines included)."""
    config_foreign: bool = False
    """The ``-config file=`` was written by fastchess itself, not by runner-fastchess."""
    quick: bool = False
    printed: list[str] = field(default_factory=list)
    """Lines fastchess prints while reading the command line (warnings, notes), in order."""


# -- scalar parsing as fastchess's parseScalar -------------------------------------------------


def scalar_integer(text: str, low: int = -(2**31), high: int = INT_MAX) -> int:
    """fastchess's parseScalar for an integer type of range [`low`, `high`]."""
    bad = FastchessError(f'Invalid numeric value: "{text}"')
    if not text or any(c.isspace() for c in text):
        raise bad
    if low >= 0 and text.startswith("-"):
        raise bad
    body = text[1:] if text[:1] in "+-" else text
    # std::stoll reads base 10 digits after an optional sign and leading blanks.
    if not body.isdigit() or not body.isascii():
        raise bad
    value = int(text)
    if not low <= value <= high:
        raise bad
    return value


def scalar_float(text: str) -> float:
    """fastchess's parseScalar<double>: the whole text a finite number."""
    bad = FastchessError(f'Invalid numeric value: "{text}"')
    if not text or any(c.isspace() for c in text):
        raise bad
    lowered = text.lower()
    if "_" in text or "inf" in lowered or "nan" in lowered or lowered.startswith(("0x", "-0x", "+0x")):
        raise bad
    try:
        value = float(text)
    except ValueError:
        raise bad from None
    return value


def scalar_duration(text: str, multiplier: int) -> int:
    """fastchess's parseDuration: seconds (an ``s`` suffix allowed) or minutes, in ms."""
    if len(text) > 1 and text.endswith("s") and multiplier == 1000:
        text = text[:-1]
    value = scalar_float(text)
    scaled = value * multiplier
    if value < 0 or scaled > 2**63 - 1:
        raise FastchessError(f'Invalid time control duration: "{text}"')
    return int(scaled)


def _split_tc(value: str, delimiter: str) -> tuple[str, str]:
    where = value.find(delimiter)
    if where <= 0 or where + 1 == len(value) or value.find(delimiter, where + 1) >= 0:
        raise FastchessError(f'Invalid time control: "{value}"')
    return value[:where], value[where + 1:]


def parse_tc(text: str, limit: Limits) -> None:
    """``tc=``: ``[moves/]minutes:seconds|seconds[+increment]``, or ``inf``."""
    if "hg" in text:
        raise FastchessError("Hourglass time control not supported.")
    if text in ("infinite", "inf"):
        limit.moves = limit.time = limit.increment = 0
        return
    if not text:
        raise FastchessError("Invalid time control: empty value")
    moves, increment = 0, 0
    rest = text
    if "/" in rest:
        count, rest = _split_tc(rest, "/")
        if count not in ("inf", "infinite"):
            moves = scalar_integer(count, -(2**63), 2**63 - 1)
            if moves <= 0:
                raise FastchessError("Time control move count must be positive")
    if "+" in rest:
        rest, inc = _split_tc(rest, "+")
        increment = scalar_duration(inc, 1000)
    if ":" in rest:
        minutes, seconds = _split_tc(rest, ":")
        time = scalar_duration(minutes, 60_000) + scalar_duration(seconds, 1000)
    else:
        time = scalar_duration(rest, 1000)
    # fastchess starts from a fresh Limits: st= and timemargin= given before tc= are dropped.
    limit.moves, limit.time, limit.increment = moves, time, increment
    limit.fixed_time = limit.timemargin = 0


def scalar_bool(value: str) -> bool | None:
    return {"true": True, "false": False}.get(value)


def unrecognized(name: str, key: str, value: str) -> FastchessError:
    return FastchessError(f'Unrecognized {name} option "{key}" with value "{value}".')
