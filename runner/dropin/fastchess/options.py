"""fastchess's options (``registerOptions`` in its cli.cpp): what each does to the settings.

`OPTIONS` maps each option to its parameter style and handler; runner.dropin.fastchess.args
reads the words and calls them in fastchess's order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from runner.dropin.fastchess.values import (
    EngineArgs,
    FastchessArgs,
    FastchessError,
    HelpAsked,
    VersionAsked,
    parse_tc,
    scalar_bool,
    scalar_duration,
    scalar_float,
    scalar_integer,
    unrecognized,
)

__all__ = ["FREE", "KEY_VALUE", "KEY_VALUE_OPTIONAL", "NONE", "OPTIONS", "SINGLE", "KeyValues",
           "Option", "engine_key"]

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
        limit.fixed_time = scalar_duration(value, 1000)
    elif key == "timemargin":
        limit.timemargin = scalar_integer(value, -(2**63), 2**63 - 1)
        if limit.timemargin < 0:
            raise FastchessError("The value for timemargin cannot be a negative number.")
    elif key == "nodes":
        limit.nodes = scalar_integer(value, -(2**63), 2**63 - 1)
    elif key in ("plies", "depth"):
        limit.plies = scalar_integer(value, -(2**63), 2**63 - 1)
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
        raise unrecognized("engine", key, value)


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
        flag = scalar_bool(value)
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
                raise unrecognized("pgnout notation", key, value)
            a.pgn_notation = value
        elif key == "match_line":
            a.pgn_match_lines.append(value)
        else:
            raise unrecognized("pgnout", key, value)


def _dated(suffix: str) -> str:
    """fastchess's default file name for -pgnout/-epdout without file=."""
    import time

    return time.strftime(f"fastchess_%Y%m%d_%H%M%S.{suffix}")


def _epdout(kv: KeyValues, a: FastchessArgs) -> None:
    a.epd_file = _dated("epd")
    for key, value in kv:
        flag = scalar_bool(value)
        if key == "file":
            a.epd_file = a.epd_given = value
        elif key == "append" and flag is not None:
            a.epd_append = flag
        else:
            raise unrecognized("epdout", key, value)


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
                raise unrecognized("openings format", key, value)
            a.book_format = value
        elif key == "order":
            if value not in ("sequential", "random"):
                raise unrecognized("openings order", key, value)
            a.book_order = value
        elif key == "plies":
            a.book_plies = scalar_integer(value)
        elif key == "start":
            a.book_start = scalar_integer(value)
            if a.book_start < 1:
                raise FastchessError("Starting offset must be at least 1!")
        elif key == "policy":
            if value != "round":
                raise FastchessError("Unsupported opening book policy.")
        else:
            raise unrecognized("openings", key, value)


def _sprt(kv: KeyValues, a: FastchessArgs) -> None:
    a.sprt = True
    if a.rounds == 0:
        a.rounds = 500_000
    for key, value in kv:
        if key in ("elo0", "elo1", "alpha", "beta"):
            setattr(a, key, scalar_float(value))
        elif key == "model":
            a.model = value
        else:
            raise unrecognized("sprt", key, value)


def _draw(kv: KeyValues, a: FastchessArgs) -> None:
    a.draw = True
    for key, value in kv:
        if key == "movenumber":
            # fastchess stores it unsigned: a negative number wraps round to a huge one.
            a.draw_movenumber = scalar_integer(value) % 2**32
        elif key == "movecount":
            a.draw_movecount = scalar_integer(value)
        elif key == "score":
            a.draw_score = scalar_integer(value)
            if a.draw_score < 0:
                raise FastchessError("Score cannot be negative.")
        else:
            raise unrecognized("draw", key, value)


def _resign(kv: KeyValues, a: FastchessArgs) -> None:
    a.resign = True
    for key, value in kv:
        flag = scalar_bool(value)
        if key == "movecount":
            a.resign_movecount = scalar_integer(value)
        elif key == "twosided" and flag is not None:
            a.resign_twosided = flag
        elif key == "score":
            a.resign_score = scalar_integer(value)
            if a.resign_score < 0:
                raise FastchessError("Score cannot be negative.")
        else:
            raise unrecognized("resign", key, value)


def _maxmoves(value: str, a: FastchessArgs) -> None:
    a.maxmoves = scalar_integer(value)


def _tb(value: str, a: FastchessArgs) -> None:
    a.tb, a.tb_dirs = True, value


def _tbpieces(value: str, a: FastchessArgs) -> None:
    a.tb_pieces = scalar_integer(value)


def _tbignore50(a: FastchessArgs) -> None:
    a.tb_ignore50 = True


def _tbadjudicate(value: str, a: FastchessArgs) -> None:
    if value not in ("WIN_LOSS", "DRAW", "BOTH"):
        raise FastchessError(f"Invalid tb adjudication type: {value}")
    a.tb_adjudicate = value


def _autosave(value: str, a: FastchessArgs) -> None:
    a.autosaveinterval = scalar_integer(value)


_LOG_LEVELS = ("trace", "warn", "info", "err", "fatal")


def _log(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        flag = scalar_bool(value)
        if key == "file":
            a.log_file = value
        elif key == "level":
            if value not in _LOG_LEVELS:
                raise unrecognized("log level", key, value)
            a.log_level = value
        elif key in ("append", "compress", "realtime", "engine") and flag is not None:
            setattr(a, f"log_{key}", flag)
        else:
            raise unrecognized("log", key, value)


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
            raise unrecognized("config", key, value)
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
        flag = scalar_bool(value)
        if key == "penta" and flag is not None:
            a.report_penta = flag
        else:
            raise unrecognized("report", key, value)


def _output(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        if key == "format" and value in ("cutechess", "fastchess"):
            a.output = value
        else:
            raise unrecognized("output", key, value)


def _concurrency(value: str, a: FastchessArgs) -> None:
    a.concurrency = scalar_integer(value)


def _crc32(kv: KeyValues, a: FastchessArgs) -> None:
    for key, value in kv:
        flag = scalar_bool(value)
        if key == "pgn" and flag is not None:
            a.crc32_pgn = flag
        else:
            raise unrecognized("crc", key, value)


def _force_concurrency(a: FastchessArgs) -> None:
    a.force_concurrency = True


def _event(words: list[str], a: FastchessArgs) -> None:
    a.event = "".join(words)  # fastchess glues the words without spaces


def _site(words: list[str], a: FastchessArgs) -> None:
    a.site = "".join(words)


# fastchess reads -games, -rounds and -wait as an int and keeps them unsigned: a negative
# number wraps round (-games -1 is then far above 2 and swapped with -rounds).
def _games(value: str, a: FastchessArgs) -> None:
    a.games = scalar_integer(value) % 2**64


def _rounds(value: str, a: FastchessArgs) -> None:
    a.rounds = scalar_integer(value) % 2**64


def _wait(value: str, a: FastchessArgs) -> None:
    a.wait = scalar_integer(value) % 2**32


def _noswap(a: FastchessArgs) -> None:
    a.noswap = True


def _reverse(a: FastchessArgs) -> None:
    a.reverse = True


def _ratinginterval(value: str, a: FastchessArgs) -> None:
    a.ratinginterval = scalar_integer(value)


def _scoreinterval(value: str, a: FastchessArgs) -> None:
    a.scoreinterval = scalar_integer(value)


def _srand(value: str, a: FastchessArgs) -> None:
    a.seed = scalar_integer(value, 0, 2**64 - 1)


def _seeds(value: str, a: FastchessArgs) -> None:
    a.seeds = scalar_integer(value)


def _version(a: FastchessArgs) -> None:
    raise VersionAsked


def _help(a: FastchessArgs) -> None:
    raise HelpAsked


def _recover(a: FastchessArgs) -> None:
    a.recover = True


def _repeat(words: list[str], a: FastchessArgs) -> None:
    if len(words) == 1 and words[0].isdigit() and words[0].isascii():
        a.games = scalar_integer(words[0])
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
            raise unrecognized("quick", key, value)
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
    a.startup_ms = scalar_integer(value, 0, 2**64 - 1)


def _ucinewgame(value: str, a: FastchessArgs) -> None:
    a.ucinewgame_ms = scalar_integer(value, 0, 2**64 - 1)


def _ping(value: str, a: FastchessArgs) -> None:
    a.ping_ms = scalar_integer(value, 0, 2**64 - 1)


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
