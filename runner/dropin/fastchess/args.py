"""fastchess 1.8's command line, read as fastchess reads it, with its defaults and its refusals.

The reading follows fastchess's own order: options left to right (an option takes the words
after it up to the next word starting with ``-`` that is not a negative number), ``-each``
applied after all the others, then the checks fastchess runs once everything is read
(``sanitize``). A refusal is raised as `PeerUsageError` with fastchess's words, to stdout
with exit status 1 as fastchess prints them; what fastchess prints before refusing (its
warnings about the book) comes first in the same text. The result is plain data
(`FastchessArgs`); runner.dropin.fastchess.build turns it into a tournament.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runner.dropin.contract import PeerUsageError

__all__ = ["OPTIONS", "EngineArgs", "FastchessArgs", "FastchessError", "HelpAsked", "Limits",
           "VersionAsked", "read_argv"]

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


def _integer(text: str, low: int = -(2**31), high: int = INT_MAX) -> int:
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


def _float(text: str) -> float:
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


def _duration(text: str, multiplier: int) -> int:
    """fastchess's parseDuration: seconds (an ``s`` suffix allowed) or minutes, in ms."""
    if len(text) > 1 and text.endswith("s") and multiplier == 1000:
        text = text[:-1]
    value = _float(text)
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
            moves = _integer(count, -(2**63), 2**63 - 1)
            if moves <= 0:
                raise FastchessError("Time control move count must be positive")
    if "+" in rest:
        rest, inc = _split_tc(rest, "+")
        increment = _duration(inc, 1000)
    if ":" in rest:
        minutes, seconds = _split_tc(rest, ":")
        time = _duration(minutes, 60_000) + _duration(seconds, 1000)
    else:
        time = _duration(rest, 1000)
    # fastchess starts from a fresh Limits: st= and timemargin= given before tc= are dropped.
    limit.moves, limit.time, limit.increment = moves, time, increment
    limit.fixed_time = limit.timemargin = 0


def _bool(value: str) -> bool | None:
    return {"true": True, "false": False}.get(value)


def _missing(name: str, key: str, value: str) -> FastchessError:
    return FastchessError(f'Unrecognized {name} option "{key}" with value "{value}".')


# -- the options -------------------------------------------------------------------------------

KeyValues = list[tuple[str, str]]


def engine_key(engine: EngineArgs, key: str, value: str) -> None:
    """One ``key=value`` of ``-engine``/``-each`` (fastchess's parseEngineKeyValues)."""
    limit = engine.limit
    if key == "cmd":
        engine.cmd = value
    elif key == "name":
        engine.name = value
    elif key == "tc":
        parse_tc(value, limit)
    elif key == "st":
        limit.fixed_time = _duration(value, 1000)
    elif key == "timemargin":
        limit.timemargin = _integer(value, -(2**63), 2**63 - 1)
        if limit.timemargin < 0:
            raise FastchessError("The value for timemargin cannot be a negative number.")
    elif key == "nodes":
        limit.nodes = _integer(value, -(2**63), 2**63 - 1)
    elif key in ("plies", "depth"):
        limit.plies = _integer(value, -(2**63), 2**63 - 1)
    elif key == "dir":
        engine.dir = value
    elif key == "args":
        engine.args = value
    elif key == "restart":
        if value not in ("on", "off"):
            raise FastchessError(f'Invalid parameter (must be either "on" or "off"): {value}')
        engine.restart = value == "on"
    elif key.startswith("option."):
        engine.options.append((key[len("option."):], value))
    elif key == "proto":
        if value != "uci":
            raise FastchessError("Unsupported protocol.")
    else:
        raise _missing("engine", key, value)


def _engine(kv: KeyValues, a: FastchessArgs) -> None:
    a.engines.append(EngineArgs())
    for key, value in kv:
        engine_key(a.engines[-1], key, value)


def _each(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        for engine in a.engines:
            engine_key(engine, key, value)


_PGN_TRACKS = ("nodes", "seldepth", "nps", "hashfull", "tbhits", "timeleft", "latency", "pv")


def _pgnout(kv: KeyValues, a: FastchessArgs) -> None:
    a.pgn_file = _dated("pgn")
    for key, value in kv:
        flag = _bool(value)
        if key == "file":
            a.pgn_file = a.pgn_given = value
        elif key == "append" and flag is not None:
            a.pgn_append = flag
        elif key in _PGN_TRACKS and flag is not None:
            a.pgn_track[key] = flag
        elif key == "min" and flag is not None:
            a.pgn_min = flag
        elif key == "notation":
            if value not in ("san", "lan", "uci"):
                raise _missing("pgnout notation", key, value)
            a.pgn_notation = value
        elif key == "match_line":
            a.pgn_match_lines.append(value)
        else:
            raise _missing("pgnout", key, value)


def _dated(suffix: str) -> str:
    """fastchess's default file name for -pgnout/-epdout without file=."""
    import time

    return time.strftime(f"fastchess_%Y%m%d_%H%M%S.{suffix}")


def _epdout(kv: KeyValues, a: FastchessArgs) -> None:
    a.epd_file = _dated("epd")
    for key, value in kv:
        flag = _bool(value)
        if key == "file":
            a.epd_file = a.epd_given = value
        elif key == "append" and flag is not None:
            a.epd_append = flag
        else:
            raise _missing("epdout", key, value)


def _openings(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        if key == "file":
            a.book_file = value
            if value.endswith(".epd"):
                a.book_format = "epd"
            elif value.endswith(".pgn"):
                a.book_format = "pgn"
            if not os.path.exists(value):
                raise FastchessError(f"Opening file does not exist: {value}")
        elif key == "format":
            if value not in ("epd", "pgn"):
                raise _missing("openings format", key, value)
            a.book_format = value
        elif key == "order":
            if value not in ("sequential", "random"):
                raise _missing("openings order", key, value)
            a.book_order = value
        elif key == "plies":
            a.book_plies = _integer(value)
        elif key == "start":
            a.book_start = _integer(value)
            if a.book_start < 1:
                raise FastchessError("Starting offset must be at least 1!")
        elif key == "policy":
            if value != "round":
                raise FastchessError("Unsupported opening book policy.")
        else:
            raise _missing("openings", key, value)


def _sprt(kv: KeyValues, a: FastchessArgs) -> None:
    a.sprt = True
    if a.rounds == 0:
        a.rounds = 500_000
    for key, value in kv:
        if key in ("elo0", "elo1", "alpha", "beta"):
            setattr(a, key, _float(value))
        elif key == "model":
            a.model = value
        else:
            raise _missing("sprt", key, value)


def _draw(kv: KeyValues, a: FastchessArgs) -> None:
    a.draw = True
    for key, value in kv:
        if key == "movenumber":
            # fastchess stores it unsigned: a negative number wraps round to a huge one.
            a.draw_movenumber = _integer(value) % 2**32
        elif key == "movecount":
            a.draw_movecount = _integer(value)
        elif key == "score":
            a.draw_score = _integer(value)
            if a.draw_score < 0:
                raise FastchessError("Score cannot be negative.")
        else:
            raise _missing("draw", key, value)


def _resign(kv: KeyValues, a: FastchessArgs) -> None:
    a.resign = True
    for key, value in kv:
        flag = _bool(value)
        if key == "movecount":
            a.resign_movecount = _integer(value)
        elif key == "twosided" and flag is not None:
            a.resign_twosided = flag
        elif key == "score":
            a.resign_score = _integer(value)
            if a.resign_score < 0:
                raise FastchessError("Score cannot be negative.")
        else:
            raise _missing("resign", key, value)


def _maxmoves(value: str, a: FastchessArgs) -> None:
    a.maxmoves = _integer(value)


def _tb(value: str, a: FastchessArgs) -> None:
    a.tb, a.tb_dirs = True, value


def _tbpieces(value: str, a: FastchessArgs) -> None:
    a.tb_pieces = _integer(value)


def _tbignore50(a: FastchessArgs) -> None:
    a.tb_ignore50 = True


def _tbadjudicate(value: str, a: FastchessArgs) -> None:
    if value not in ("WIN_LOSS", "DRAW", "BOTH"):
        raise FastchessError(f"Invalid tb adjudication type: {value}")
    a.tb_adjudicate = value


def _autosave(value: str, a: FastchessArgs) -> None:
    a.autosaveinterval = _integer(value)


_LOG_LEVELS = ("trace", "warn", "info", "err", "fatal")


def _log(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        flag = _bool(value)
        if key == "file":
            a.log_file = value
        elif key == "level":
            if value not in _LOG_LEVELS:
                raise _missing("log level", key, value)
            a.log_level = value
        elif key in ("append", "compress", "realtime", "engine") and flag is not None:
            setattr(a, f"log_{key}", flag)
        else:
            raise _missing("log", key, value)


def _config(kv: KeyValues, a: FastchessArgs) -> None:
    from runner.dropin.fastchess.resume import load_config_file

    drop_stats = False
    for key, value in kv:
        if key == "file":
            a.printed.append(f"Loading config file: {value}")
            a.config_saved = _copy(a)
            load_config_file(value, a)
            a.config_file = value
        elif key == "outname":
            a.config_name = value
        elif key == "discard" and value == "true":
            a.printed.append("Discarding config file")
            _restore(a, a.config_saved or FastchessArgs())
            a.config_stats.clear()
        elif key == "stats":
            drop_stats = value == "false"
        else:
            raise _missing("config", key, value)
    if len(a.engines) > 2:
        # fastchess writes this one to stderr; it is kept with the others on stdout here.
        a.config_stats.clear()
    if drop_stats:
        a.config_stats.clear()


def _copy(a: FastchessArgs) -> FastchessArgs:
    import copy

    saved, a.config_saved = a.config_saved, None
    try:
        return copy.deepcopy(a)
    finally:
        a.config_saved = saved


def _restore(a: FastchessArgs, saved: FastchessArgs) -> None:
    printed, kept = a.printed, a.config_saved
    a.__dict__.update(_copy(saved).__dict__)
    a.printed, a.config_saved = printed, kept


def _report(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        flag = _bool(value)
        if key == "penta" and flag is not None:
            a.report_penta = flag
        else:
            raise _missing("report", key, value)


def _output(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        if key == "format" and value in ("cutechess", "fastchess"):
            a.output = value
        else:
            raise _missing("output", key, value)


def _concurrency(value: str, a: FastchessArgs) -> None:
    a.concurrency = _integer(value)


def _crc32(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        flag = _bool(value)
        if key == "pgn" and flag is not None:
            a.crc32_pgn = flag
        else:
            raise _missing("crc", key, value)


def _force_concurrency(a: FastchessArgs) -> None:
    a.force_concurrency = True


def _event(words: list[str], a: FastchessArgs) -> None:
    a.event = "".join(words)  # fastchess glues the words without spaces


def _site(words: list[str], a: FastchessArgs) -> None:
    a.site = "".join(words)


# fastchess reads -games, -rounds and -wait as an int and keeps them unsigned: a negative
# number wraps round (-games -1 is then far above 2 and swapped with -rounds).
def _games(value: str, a: FastchessArgs) -> None:
    a.games = _integer(value) % 2**64


def _rounds(value: str, a: FastchessArgs) -> None:
    a.rounds = _integer(value) % 2**64


def _wait(value: str, a: FastchessArgs) -> None:
    a.wait = _integer(value) % 2**32


def _noswap(a: FastchessArgs) -> None:
    a.noswap = True


def _reverse(a: FastchessArgs) -> None:
    a.reverse = True


def _ratinginterval(value: str, a: FastchessArgs) -> None:
    a.ratinginterval = _integer(value)


def _scoreinterval(value: str, a: FastchessArgs) -> None:
    a.scoreinterval = _integer(value)


def _srand(value: str, a: FastchessArgs) -> None:
    a.seed = _integer(value, 0, 2**64 - 1)


def _seeds(value: str, a: FastchessArgs) -> None:
    a.seeds = _integer(value)


def _version(a: FastchessArgs) -> None:
    raise VersionAsked


def _help(a: FastchessArgs) -> None:
    raise HelpAsked


def _recover(a: FastchessArgs) -> None:
    a.recover = True


def _repeat(words: list[str], a: FastchessArgs) -> None:
    if len(words) == 1 and words[0].isdigit() and words[0].isascii():
        a.games = _integer(words[0])
    else:
        a.games = 2


def _variant(value: str, a: FastchessArgs) -> None:
    if value == "fischerandom":
        a.variant = "fischerandom"
    if value not in ("fischerandom", "standard"):
        raise FastchessError("Unknown variant.")


def _tournament(value: str, a: FastchessArgs) -> None:
    if value not in ("gauntlet", "roundrobin"):
        raise FastchessError("Unsupported tournament format. Only supports roundrobin and gauntlet.")
    a.tournament = value


def _quick(kv: KeyValues, a: FastchessArgs) -> None:
    first = len(a.engines)
    count = 0
    for key, value in kv:
        if key == "cmd":
            engine = EngineArgs(cmd=value, name=value)
            engine.limit.time, engine.limit.increment = 10_000, 100
            a.engines.append(engine)
            a.recover = True
            count += 1
        elif key == "book":
            a.book_file, a.book_order = value, "random"
            if value.endswith(".pgn"):
                a.book_format = "pgn"
            elif value.endswith(".epd"):
                a.book_format = "epd"
            else:
                raise FastchessError(
                    "Please include the .pgn or .epd file extension for the opening book.")
        else:
            raise _missing("quick", key, value)
    if count != 2:
        raise FastchessError('Option "-quick" requires exactly two cmd entries.')
    if not a.book_file:
        raise FastchessError('Option "-quick" requires a book=FILE entry.')
    one, two = a.engines[first], a.engines[first + 1]
    if one.name == two.name:
        one.name += "1"
        two.name += "2"
    a.games, a.rounds = 2, 25_000
    a.concurrency = max(1, (os.cpu_count() or 1) - 2)
    a.recover = a.quick = True
    a.draw, a.draw_movenumber, a.draw_movecount, a.draw_score = True, 30, 8, 8
    a.output = "cutechess"


def _cpu_list(text: str) -> list[int] | None:
    """fastchess's parseIntList (``5,10,13-17``); None where it reports a bad list."""
    result: list[int] = []
    rest = text.lstrip()
    import re

    number = re.compile(r"\s*([+-]?\d+)")
    while True:
        found = number.match(rest)
        if found is None:
            return result if not result else None
        first = int(found.group(1))
        result.append(first)
        rest = rest[found.end():].lstrip()
        if not rest:
            return result
        sep, rest = rest[0], rest[1:]
        if sep == "-":
            found = number.match(rest)
            if found is None or int(found.group(1)) <= first:
                return None
            result.extend(range(first + 1, int(found.group(1)) + 1))
            rest = rest[found.end():].lstrip()
            if not rest:
                return result
            sep, rest = rest[0], rest[1:]
            if sep != ",":
                return None
        elif sep != ",":
            return None


def _affinity(words: list[str], a: FastchessArgs) -> None:
    a.affinity = True
    if words:
        cpus = _cpu_list(words[0])
        if cpus is None:
            raise FastchessError("Bad cpu list.")
        a.affinity_cpus = cpus


def _mate_pvs(a: FastchessArgs) -> None:
    a.check_mate_pvs = True


def _latency(a: FastchessArgs) -> None:
    a.show_latency = True


def _debug(a: FastchessArgs) -> None:
    raise FastchessError(
        "The 'debug' option does not exist in fastchess. Use the 'log' option instead to write "
        "all engine input and output into a text file.")


def _test_env(a: FastchessArgs) -> None:
    a.test_env = True


def _strict(a: FastchessArgs) -> None:
    a.strict = True


def _startup(value: str, a: FastchessArgs) -> None:
    a.startup_ms = _integer(value, 0, 2**64 - 1)


def _ucinewgame(value: str, a: FastchessArgs) -> None:
    a.ucinewgame_ms = _integer(value, 0, 2**64 - 1)


def _ping(value: str, a: FastchessArgs) -> None:
    a.ping_ms = _integer(value, 0, 2**64 - 1)


# Parameter styles, as fastchess's OptionsParser names them.
NONE, SINGLE, KEY_VALUE, KEY_VALUE_OPTIONAL, FREE = "none", "single", "kv", "kv?", "free"


@dataclass(frozen=True)
class Option:
    """One option of fastchess's table: its parameter style and what it does."""

    style: str
    handle: Callable[..., None]
    deferred: bool = False


OPTIONS: dict[str, Option] = {
    "-engine": Option(KEY_VALUE, _engine),
    "-each": Option(KEY_VALUE, _each, deferred=True),
    "-pgnout": Option(KEY_VALUE_OPTIONAL, _pgnout),
    "-epdout": Option(KEY_VALUE_OPTIONAL, _epdout),
    "-openings": Option(KEY_VALUE, _openings),
    "-sprt": Option(KEY_VALUE, _sprt),
    "-draw": Option(KEY_VALUE, _draw),
    "-resign": Option(KEY_VALUE, _resign),
    "-maxmoves": Option(SINGLE, _maxmoves),
    "-tb": Option(SINGLE, _tb),
    "-tbpieces": Option(SINGLE, _tbpieces),
    "-tbignore50": Option(NONE, _tbignore50),
    "-tbadjudicate": Option(SINGLE, _tbadjudicate),
    "-autosaveinterval": Option(SINGLE, _autosave),
    "-log": Option(KEY_VALUE, _log),
    "-config": Option(KEY_VALUE, _config),
    "-report": Option(KEY_VALUE, _report),
    "-output": Option(KEY_VALUE, _output),
    "-concurrency": Option(SINGLE, _concurrency),
    "-crc32": Option(KEY_VALUE, _crc32),
    "-force-concurrency": Option(NONE, _force_concurrency),
    "-event": Option(FREE, _event),
    "-site": Option(FREE, _site),
    "-games": Option(SINGLE, _games),
    "-rounds": Option(SINGLE, _rounds),
    "-wait": Option(SINGLE, _wait),
    "-noswap": Option(NONE, _noswap),
    "-reverse": Option(NONE, _reverse),
    "-ratinginterval": Option(SINGLE, _ratinginterval),
    "-scoreinterval": Option(SINGLE, _scoreinterval),
    "-srand": Option(SINGLE, _srand),
    "-seeds": Option(SINGLE, _seeds),
    "-version": Option(NONE, _version),
    "--version": Option(NONE, _version),
    "-v": Option(NONE, _version),
    "--v": Option(NONE, _version),
    "-help": Option(NONE, _help),
    "--help": Option(NONE, _help),
    "-recover": Option(NONE, _recover),
    "-repeat": Option(FREE, _repeat),
    "-variant": Option(SINGLE, _variant),
    "-tournament": Option(SINGLE, _tournament),
    "-quick": Option(KEY_VALUE, _quick),
    "-use-affinity": Option(FREE, _affinity),
    "-check-mate-pvs": Option(NONE, _mate_pvs),
    "-show-latency": Option(NONE, _latency),
    "-debug": Option(NONE, _debug),
    "-testEnv": Option(NONE, _test_env),
    "-strict": Option(NONE, _strict),
    "-startup-ms": Option(SINGLE, _startup),
    "-ucinewgame-ms": Option(SINGLE, _ucinewgame),
    "-ping-ms": Option(SINGLE, _ping),
}
"""Every option fastchess 1.8.2 registers (``registerOptions`` in its cli.cpp)."""


def _levenshtein(a: str, b: str) -> int:
    if len(a) > len(b):
        a, b = b, a
    previous = list(range(len(a) + 1))
    for j in range(1, len(b) + 1):
        current = [j] + [0] * len(a)
        for i in range(1, len(a) + 1):
            current[i] = min(previous[i - 1] + (a[i - 1] != b[j - 1]), current[i - 1] + 1,
                             previous[i] + 1)
        previous = current
    return previous[-1]


def _suggestion(arg: str) -> str | None:
    """The closest option within two edits; on a tie the one fastchess names, the first its
    table (a libstdc++ unordered_map) lists."""
    from runner.dropin.fastchess.stdhash import iteration_order

    best, distance = None, INT_MAX
    for option in iteration_order(OPTIONS):
        far = _levenshtein(arg, option)
        if far < distance:
            best, distance = option, far
    return best if distance <= 2 else None


def _call(flag: str, option: Option, params: list[str], a: FastchessArgs) -> None:
    """Check `params` against the option's style and run it (fastchess's wrapHandler)."""
    if option.style == NONE:
        if params:
            raise FastchessError(f'Option "{flag}" does not accept parameters.')
        option.handle(a)
    elif option.style == SINGLE:
        if len(params) != 1:
            raise FastchessError(f'Option "{flag}" expects exactly one value.')
        option.handle(params[0], a)
    elif option.style in (KEY_VALUE, KEY_VALUE_OPTIONAL):
        if option.style == KEY_VALUE and not params:
            raise FastchessError(f'Option "{flag}" expects key=value parameters.')
        pairs: KeyValues = []
        for param in params:
            where = param.find("=")
            if where <= 0 or where + 1 == len(param):
                raise FastchessError(f'Option "{flag}" expects key=value pairs, got "{param}".')
            pairs.append((param[:where], param[where + 1:]))
        option.handle(pairs, a)
    else:
        option.handle(params, a)


def _reading_error(flag: str, shown: str, exc: Exception) -> FastchessError:
    return FastchessError(f'Error while reading option "{flag}" with value "{shown}"\n'
                          f"Reason: {exc}")


def read_argv(argv: Sequence[str]) -> FastchessArgs:
    """The options of `argv` (without the program name) read as fastchess reads them.

    Raises HelpAsked, VersionAsked, or FastchessError with fastchess's message.
    """
    a = FastchessArgs()
    if not argv:
        raise HelpAsked
    deferred: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        option = OPTIONS.get(arg)
        if option is None:
            text = f"Unrecognized option: {arg} parsing failed."
            near = _suggestion(arg)
            raise FastchessError(f'{text}: Did you mean "{near}"?' if near else text)
        params: list[str] = []
        while i + 1 < len(argv):
            word = argv[i + 1]
            if word.startswith("-") and not (len(word) > 1 and word[1].isdigit()
                                              and word[1].isascii()):
                break
            params.append(word)
            i += 1
        try:
            if option.deferred:
                deferred.setdefault(arg, []).extend(params)
            else:
                _call(arg, option, params, a)
        except (HelpAsked, VersionAsked):
            raise
        except (FastchessError, ValueError) as exc:
            error = _reading_error(arg, argv[i], exc)
            error.printed = list(a.printed)
            raise error from None
        i += 1
    for flag, params in deferred.items():
        try:
            _call(flag, OPTIONS[flag], params, a)
        except (FastchessError, ValueError) as exc:
            error = _reading_error(flag, " ".join(params) if params else "<none>", exc)
            error.printed = list(a.printed)
            raise error from None
    try:
        sanitize(a)
    except FastchessError as exc:
        exc.printed = list(a.printed)
        raise
    return a


# -- what fastchess checks once everything is read (its sanitize.cpp) --------------------------


def sanitize(a: FastchessArgs, cpus: int | None = None) -> None:
    """fastchess's checks and fixes after reading; its printed lines go to ``a.printed``."""
    if a.games > 2:
        a.games, a.rounds = a.rounds, a.games
        if a.games > 2:
            raise FastchessError("Error: Exceeded -game limit! Must be less than 2")
    if a.report_penta and (a.output == "cutechess" or a.games != 2):
        a.report_penta = False
    hardware = cpus or os.cpu_count() or 1
    if a.concurrency <= 0:
        a.concurrency = hardware - abs(a.concurrency)
        a.printed.append(f"Info: Adjusted concurrency to {a.concurrency} based on number of "
                         "available hardware threads.")
    if a.concurrency > hardware and not a.force_concurrency:
        raise FastchessError(
            "Error: Concurrency exceeds number of CPUs. Use -force-concurrency to override.")
    if a.sprt:
        if a.elo0 >= a.elo1:
            raise FastchessError("Error; SPRT: elo0 must be less than elo1!")
        if not 0 < a.alpha < 1:
            raise FastchessError("Error; SPRT: alpha must be a decimal number between 0 and 1!")
        if not 0 < a.beta < 1:
            raise FastchessError("Error; SPRT: beta must be a decimal number between 0 and 1!")
        if a.alpha + a.beta >= 1:
            raise FastchessError("Error; SPRT: sum of alpha and beta must be less than 1!")
        if a.model not in ("normalized", "bayesian", "logistic"):
            raise FastchessError("Error; SPRT: invalid SPRT model!")
        if a.model == "bayesian" and a.report_penta:
            a.printed.append("Warning; Bayesian SPRT model not available with pentanomial "
                             "statistics. Disabling pentanomial reports...")
            a.report_penta = False
    if a.variant == "fischerandom" and not a.book_file:
        raise FastchessError("Error: Please specify a Chess960 opening book")
    if not a.book_file:
        a.printed.append("Warning: No opening book specified! Consider using one, otherwise "
                         "all games will be played from the starting position.")
    if a.book_format not in ("epd", "pgn"):
        a.printed.append("Warning: Unknown opening format, 2. All games will be played from "
                         "the starting position.")
    if a.tb and not a.tb_dirs:
        raise FastchessError(
            "Error: Must provide a ;-separated list of Syzygy tablebase directories.")
    if len(a.engines) < 2:
        raise FastchessError("Error: Need at least two engines to start!")
    for engine in a.engines:
        _check_engine(engine)
    seen: dict[str, int] = {}
    for engine in a.engines:
        seen[engine.name] = seen.get(engine.name, 0) + 1
        if seen[engine.name] > 1:
            engine.name = f"{engine.name}_{seen[engine.name]}"


def _check_engine(engine: EngineArgs) -> None:
    limit = engine.limit
    clock = limit.time + limit.increment
    if clock == 0 and limit.fixed_time == 0 and limit.nodes == 0 and limit.plies == 0:
        raise FastchessError("Error; no TimeControl specified!")
    if (clock != 0) + (limit.fixed_time != 0) > 1:
        raise FastchessError("Error; cannot use tc and st together!")
    path = engine.engine_path()
    if (engine.dir or path.is_absolute()) and not path.is_file():
        raise FastchessError(f"Engine binary does not exist: {path}")
    if not engine.name:
        stem = Path(engine.cmd).stem if engine.cmd not in ("", ".", "..") else ""
        engine.name = stem
    if not engine.name:
        raise FastchessError("Error; please specify a name for each engine!")


def engine_argv(engine: EngineArgs) -> list[str]:
    """The engine's argv as fastchess starts it: its command, then ``args`` split as a shell
    would split them."""
    return [engine.cmd, *shlex.split(engine.args)]


def refuse(error: FastchessError) -> PeerUsageError:
    """The PeerUsageError for `error`: fastchess prints it (after its earlier lines) to stdout
    and exits 1."""
    lines = [*error.printed, str(error)]
    return PeerUsageError("\n".join(lines), 1, stream="stdout")
