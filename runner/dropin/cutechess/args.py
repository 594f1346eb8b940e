"""cutechess-cli 1.5.1's command line, read as cutechess-cli reads it, into a runner tournament.

Reading follows cutechess-cli's own two stages, because its refusals (their words, their order,
its exit status 1) come from them:

1. the words are cut into options: a word is an option when it is one of cutechess-cli's option
   names; the words up to the next one that starts with ``-`` and is not a number are its
   values; a wrong count, a repeated option or a value of the wrong type is refused there;
2. the options are then taken in cutechess-cli's fixed order (the order its parser declares
   them, not the order of the command line), each checked as cutechess-cli checks it, the
   ``-each`` keys applied after every ``-engine``'s own (so they win), and the engines checked
   last (time control, command, protocol, at least two).

Only when cutechess-cli would accept the command line are the runner's own limits applied: an
option cutechess-cli honours and the runner cannot (a per-engine Polyglot book, ``trust``,
``whitepov``, the knockout type, a variant other than standard and fischerandom...) is refused
with one line saying so, never ignored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.dropin.contract import Immediate, PeerUsageError, run_name
from runner.dropin.cutechess.settings import CutechessSettings, PgnMode, SprtBounds

if TYPE_CHECKING:
    from runner.config.model import TournamentConfig

__all__ = [
    "CUTECHESS_VERSION",
    "OPTIONS",
    "VARIANTS",
    "Arguments",
    "EngineData",
    "read_arguments",
    "version_text",
]

CUTECHESS_VERSION = "1.5.1"
"""The cutechess-cli release whose command line runner-cutechess takes."""

PROGRAM = "runner-cutechess"


@dataclass(frozen=True)
class _Option:
    name: str
    kind: str
    """int, uint, str, list or bool: the value's type after the words are joined."""
    low: int = 0
    high: int = -1
    """Most words (-1: any number)."""
    repeatable: bool = False


OPTIONS: tuple[_Option, ...] = (
    # cutechess-cli's declaration order: it is also the order the options are acted on.
    _Option("-srand", "uint", 1, 1),
    _Option("-tournament", "str", 1, 1),
    _Option("-engine", "list", 1, -1, True),
    _Option("-each", "list", 1),
    _Option("-variant", "str", 1, 1),
    _Option("-concurrency", "int", 1, 1),
    _Option("-draw", "list"),
    _Option("-resign", "list"),
    _Option("-maxmoves", "int", 1, 1),
    _Option("-tb", "str", 1, 1),
    _Option("-tbpieces", "int", 1, 1),
    _Option("-tbignore50", "bool", 0, 0),
    _Option("-event", "str", 1, 1),
    _Option("-games", "int", 1, 1),
    _Option("-rounds", "int", 1, 1),
    _Option("-sprt", "list"),
    _Option("-ratinginterval", "int", 1, 1),
    _Option("-outcomeinterval", "int", 1, 1),
    _Option("-resultformat", "str", 1, 1),
    _Option("-debug", "str", 0, 1),
    _Option("-openings", "list"),
    _Option("-bookmode", "str"),
    _Option("-pgnout", "list", 1, 3),
    _Option("-epdout", "str", 1, 1),
    _Option("-repeat", "int", 0, 1),
    _Option("-noswap", "bool", 0, 0),
    _Option("-reverse", "bool", 0, 0),
    _Option("-recover", "bool", 0, 0),
    _Option("-site", "str", 1, 1),
    _Option("-wait", "int", 1, 1),
    _Option("-seeds", "uint", 1, 1),
)
_BY_NAME = {option.name: option for option in OPTIONS}

VARIANTS = ("3check", "5check", "ai-wok", "almost", "amazon", "andernach", "antiandernach",
            "antichess", "asean", "atomic", "berolina", "cambodian", "capablanca", "caparandom",
            "cfour", "chancellor", "changeover", "checkless", "chessgi", "chigorin",
            "circulargryphon", "codrus", "coregal", "courier", "crazyhouse", "discplacedgrid",
            "dobutsu", "embassy", "euroshogi", "extinction", "fischerandom", "giveaway", "gomoku",
            "gomokufreestyle", "gothic", "grand", "grid", "gridolina", "gryphon", "gustav3",
            "hoppelpoppel", "horde", "janus", "jesonmor", "judkins", "karouk", "kinglet",
            "kingofthehill", "knightmate", "knightrelay", "loop", "losalamos", "losers", "makruk",
            "minishogi", "modern", "newzealand", "placement", "pocketknight", "racingkings",
            "rifle", "seirawan", "shatranj", "shogi", "shoot", "slippedgrid", "simplifiedgryphon",
            "sittuyin", "suicide", "superandernach", "threekings", "tictactoe", "twokings",
            "twokingssymmetric", "standard")
"""Every variant cutechess-cli 1.5.1 knows (its -help lists them); the runner plays two."""

PLAYED_VARIANTS = ("standard", "fischerandom")

TOURNAMENTS = ("round-robin", "gauntlet", "knockout", "pyramid")

RESULT_FORMATS = {
    "concise": "Rank,Name,Elo,Error,Games",
    "default": "Rank,Name,Elo,Error,Games,Score,DScore",
    "draws": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,DStale,DMater,DRepet,DMoves,"
             "DAdj,DAgree,OtherD",
    "minimal": "Rank,Name",
    "ordo": "Rank,Name,Elo,Points,Games,Score",
    "per-color": "Rank,Name,Elo,Error,Games,W,L,D,Points,wW,wL,wD,wPoints,bW,bL,bD,bPoints",
    "short": "Rank,Name,Elo,Games",
    "small": "Rank,Name,Games,Points",
    "term": "Rank,Name,Elo,Error,Games,Score,Time,Illegal,Discon,Stall,WrClaim",
    "wide": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore",
    "wide2": "Rank,Name,Elo,Error,Games,W,L,D,Points,Score,DScore,wScore,bScore",
    "wide3": "Rank,Name,TC,Elo,Error,Games,WLDStats,DrawStats,Terminations",
    "with-points": "Rank,Name,Elo,Error,Games,Points,Score,DScore",
}
"""cutechess-cli's named result formats (what ``-resultformat help`` lists)."""

_FIELD_TOKENS = (
    "D DAdj DAgree DCount DMater DMoves DRepet DScore DStale Discon Elo Error Games Illegal L "
    "LOS Name OtherD OtherW Points Rank RegulL RegulW Score Stall TC Time W WrClaim bD bDScore "
    "bElo bError bL bScore bW wD wDScore wElo wError wL wLOS wScore wW")
_FIELD_GROUPS = {
    "DrawStats": "DScore,DStale,DMater,DRepet,DMoves,DAdj,DAgree,OtherD",
    "Terminations": "Time,Illegal,Discon,Stall,WrClaim",
    "WLDStats": "W,L,D,Points,Score,wW,wL,wD,wPoints,wScore,bW,bL,bD,bPoints,bScore",
}

_INT = re.compile(r"\s*[+-]?\d+\s*")
_UINT = re.compile(r"\s*\+?\d+\s*")
_DOUBLE = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\s*",
                     re.IGNORECASE)


def _to_double(text: str) -> float | None:
    """QString::toDouble: the number, or None when the text is not one."""
    return float(text) if _DOUBLE.fullmatch(text) else None


def _to_int(text: str) -> int | None:
    """QString::toInt: a 32-bit integer, or None."""
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -2**31 <= value < 2**31 else None


def _to_int_or_zero(text: str) -> int:
    """QString::toInt without its ok flag: 0 when the text is not a number."""
    value = _to_int(text)
    return 0 if value is None else value


def _warning(*lines: str) -> PeerUsageError:
    """cutechess-cli's refusal: its warnings (``Warning: `` first), exit status 1."""
    return PeerUsageError("\n".join(f"Warning: {line}" for line in lines), 1)


def _refusal(text: str) -> PeerUsageError:
    """The runner's own refusal of something cutechess-cli would do but it cannot."""
    return PeerUsageError(f"{PROGRAM}: {text}", 1)


# -- stage 1: words into options ------------------------------------------------------------


@dataclass
class _Given:
    name: str
    words: list[str]
    flag: bool
    """Given without words (cutechess's boolean value)."""

    def joined(self) -> str:
        """The words as one value (cutechess joins them with spaces)."""
        return " ".join(self.words)


def _is_option_word(word: str) -> bool:
    return len(word) > 1 and word.startswith("-") and _to_double(word) is None


def _split(argv: list[str]) -> dict[str, list[_Given]]:
    given: dict[str, list[_Given]] = {}
    i = 0
    while i < len(argv):
        name = argv[i]
        option = _BY_NAME.get(name)
        if option is None:
            raise _warning(f'Unknown option: "{name}"')
        words: list[str] = []
        i += 1
        while i < len(argv) and not _is_option_word(argv[i]):
            words.append(argv[i])
            i += 1
        if not option.repeatable and name in given:
            raise _warning(f'Multiple instances of option "{name}"')
        if len(words) < option.low:
            at_least = "" if option.high == option.low else "at least "
            raise _warning(f'Option "{name}" needs {at_least}{option.low} argument(s)')
        if option.high != -1 and len(words) > option.high:
            raise _warning(f'Too many arguments for option "{name}"')
        if words:
            text = " ".join(words)
            if ((option.kind == "int" and _to_int(text) is None)
                    or (option.kind == "uint" and (not _UINT.fullmatch(text)
                                                   or int(text) >= 2**32))):
                raise _warning(f'Invalid value for option "{name}": "{text}"')
            if option.kind == "bool":  # a flag given words never gets here (high is 0)
                raise _warning(f'Invalid value for option "{name}": "{text}"')
        given.setdefault(name, []).append(_Given(name, words, not words))
    return given


# -- engines --------------------------------------------------------------------------------


@dataclass
class EngineData:
    """One engine as cutechess-cli's ``-engine`` and ``-each`` keys leave it."""

    name: str = ""
    command: str = ""
    directory: str = ""
    arguments: list[str] = field(default_factory=list)
    protocol: str = ""
    init_strings: list[str] = field(default_factory=list)
    restart: str = "auto"
    validate_claims: bool = True
    timeout_scale: float = 1.0
    white_pov: bool = False
    ponder: bool = False
    debug: bool = False
    stderr: str = ""
    options: dict[str, str] = field(default_factory=dict)
    book: str = ""
    book_depth: int = 1000
    # The time control, in cutechess-cli's fields (milliseconds).
    infinite: bool = False
    hourglass: bool = False
    moves_per_tc: int = 0
    time_per_tc: int = 0
    increment: int = 0
    time_per_move: int = 0
    margin: int = 0
    plies: int = 0
    nodes: int = 0
    tc_text: str = ""
    """The last ``tc=`` as written."""

    def tc_valid(self) -> bool:
        """TimeControl::isValid: some limit of time (or ``inf``), hourglass without extras."""
        if self.time_per_tc == self.time_per_move and not self.infinite:
            return False
        return not (self.hourglass and (self.increment > 0 or self.moves_per_tc > 0))


def _set_tc(engine: EngineData, text: str) -> bool:
    """``tc=``: cutechess-cli's TimeControl(QString) and its validity check."""
    parsed = EngineData()
    if text == "inf":
        parsed.infinite = True
    else:
        parts = text.split("+")
        if len(parts) == 2:
            increment = int((_to_double(parts[1]) or 0.0) * 1000)
            if increment >= 0:
                parsed.increment = increment
        parts = parts[0].split("/")
        if len(parts) == 2:
            moves = _to_int_or_zero(parts[0])
            if moves >= 0:
                parsed.moves_per_tc = moves
            time_text = parts[1]
        else:
            time_text = parts[0]
        if time_text.startswith("hg"):
            parsed.hourglass = True
            time_text = time_text.replace("hg", "")
        pieces = time_text.split(":")
        if len(pieces) == 2:
            ms = int((_to_double(pieces[0]) or 0.0) * 60000 + (_to_double(pieces[1]) or 0.0) * 1000)
        else:
            ms = int((_to_double(pieces[0]) or 0.0) * 1000)
        if ms > 0:
            parsed.time_per_tc = ms
    if not parsed.tc_valid():
        return False
    engine.infinite, engine.hourglass = parsed.infinite, parsed.hourglass
    engine.time_per_tc, engine.moves_per_tc = parsed.time_per_tc, parsed.moves_per_tc
    engine.increment = parsed.increment
    engine.tc_text = text
    return True


def engines_json() -> Path:
    """Where cutechess-cli reads ``engines.json``: the working directory's, else the one in
    its configuration directory."""
    here = Path("engines.json")
    if here.exists():
        return here
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cutechess" / "engines.json"


def _configured_engines() -> list[dict[str, Any]]:
    """The engines of ``engines.json`` (none when it is absent or unreadable, as cutechess)."""
    path = engines_json()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


def _from_conf(entry: dict[str, Any]) -> EngineData:
    """An engines.json entry as the engine it configures (cutechess's EngineConfiguration)."""
    engine = EngineData(
        name=str(entry.get("name", "")), command=str(entry.get("command", "")),
        directory=str(entry.get("workingDirectory", "")),
        stderr=str(entry.get("stderrFile", "")), protocol=str(entry.get("protocol", "")))
    scale = entry.get("timeoutScaleFactor")
    if isinstance(scale, int | float):
        engine.timeout_scale = float(scale)
    init = entry.get("initStrings")
    if isinstance(init, list):
        engine.init_strings = [str(line) for line in init]
    engine.white_pov = bool(entry.get("whitepov", False))
    engine.ponder = bool(entry.get("ponder", False))
    if entry.get("restart") in ("auto", "on", "off"):
        engine.restart = str(entry["restart"])
    engine.validate_claims = bool(entry.get("validateClaims", True))
    engine.debug = bool(entry.get("debug", False))
    for option in entry.get("options", []) or []:
        if isinstance(option, dict) and "name" in option:
            value = option.get("value", option.get("default"))
            if value is not None:
                engine.options[str(option["name"])] = (
                    ("true" if value else "false") if isinstance(value, bool) else str(value))
    return engine


def _parse_engine(words: list[str], engine: EngineData) -> tuple[EngineData, str | None]:
    """cutechess-cli's parseEngine: the keys applied in order; (engine, warning or None)."""
    for word in words:
        key, _, value = word.partition("=")
        if not key:
            continue
        if key == "conf":
            found = next((e for e in _configured_engines() if e.get("name") == value), None)
            if found is None:
                return engine, f'Unknown engine configuration: "{value}"'
            keep = (engine.infinite, engine.hourglass, engine.moves_per_tc, engine.time_per_tc,
                    engine.increment, engine.time_per_move, engine.margin, engine.plies,
                    engine.nodes, engine.tc_text, engine.book, engine.book_depth)
            engine = _from_conf(found)
            (engine.infinite, engine.hourglass, engine.moves_per_tc, engine.time_per_tc,
             engine.increment, engine.time_per_move, engine.margin, engine.plies,
             engine.nodes, engine.tc_text, engine.book, engine.book_depth) = keep
        elif key == "name":
            engine.name = value
        elif key == "cmd":
            engine.command = value
        elif key == "dir":
            engine.directory = value
        elif key == "arg":
            engine.arguments.append(value)
        elif key == "proto":
            if value not in ("xboard", "uci"):
                return engine, f'Usupported chess protocol: "{value}"'  # sic: cutechess's word
            engine.protocol = value
        elif key == "initstr":
            engine.init_strings.append(value.replace("\\n", "\n"))
        elif key == "restart":
            if value not in ("auto", "on", "off"):
                return engine, f'Invalid restart mode: "{value}"'
            engine.restart = value
        elif key == "trust":
            engine.validate_claims = False
        elif key == "tscale":
            scale = _to_double(value)
            if scale is None or not 0.2 <= scale <= 120.0:
                return engine, f'Invalid timeout scale factor: "{value}"'
            engine.timeout_scale = scale
        elif key == "tc":
            if not _set_tc(engine, value):
                return engine, f'Invalid time control: "{value}"'
        elif key == "st":
            seconds = _to_double(value)
            ms = int(seconds * 1000) if seconds is not None and math.isfinite(seconds) else 0
            if seconds is None or ms <= 0:
                return engine, f'Invalid search time: "{value}"'
            engine.time_per_move = ms
        elif key == "timemargin":
            margin = _to_int(value)
            if margin is None or margin < 0:
                return engine, f'Invalid time margin: "{value}"'
            engine.margin = margin
        elif key == "book":
            engine.book = value
        elif key == "bookdepth":
            if _to_int_or_zero(value) <= 0:
                return engine, f'Invalid book depth limit: "{value}"'
            engine.book_depth = _to_int_or_zero(value)
        elif key == "whitepov":
            engine.white_pov = True
        elif key == "depth":
            if _to_int_or_zero(value) <= 0:
                return engine, f'Invalid depth limit: "{value}"'
            engine.plies = _to_int_or_zero(value)
        elif key == "nodes":
            nodes = int(value) if _INT.fullmatch(value) and abs(int(value)) < 2**63 else 0
            if nodes <= 0:
                return engine, f'Invalid node limit: "{value}"'
            engine.nodes = nodes
        elif key == "ponder":
            engine.ponder = True
        elif key == "debug":
            engine.debug = True
        elif key.startswith("option."):
            engine.options[key.split(".", 1)[1]] = value
        elif key == "stderr":
            engine.stderr = value
        else:
            return engine, f'Invalid engine option: "{key}"'
    return engine, None


# -- stage 2: the options acted on -----------------------------------------------------------


@dataclass
class Arguments:
    """A command line cutechess-cli accepts, as its values."""

    argv: tuple[str, ...]
    engines: list[EngineData]
    tournament: str = "round-robin"
    srand: int | None = None
    variant: str = "standard"
    concurrency: int = 1
    draw: tuple[int, int, int] | None = None
    resign: tuple[int, int, bool] | None = None
    maxmoves: int = 0
    tb: str | None = None
    tbpieces: int | None = None
    tbignore50: bool = False
    event: str = ""
    site: str = ""
    games: int = 1
    rounds: int = 1
    sprt: SprtBounds | None = None
    rating_interval: int = 0
    outcome_interval: int = 0
    result_format: str = "default"
    debug: bool = False
    openings: dict[str, str] | None = None
    bookmode: str = "ram"
    pgnout: str | None = None
    pgn_mode: PgnMode = PgnMode.VERBOSE
    pgn_finished_only: bool = False
    epdout: str | None = None
    repeat: int = 1
    swap: bool = True
    reverse: bool = False
    recover: bool = False
    wait: int = 0
    seeds: int = 0
    openings_empty: bool = False
    """The -openings file holds no PGN game (read as PGN, cutechess-cli's default format)."""
    notices: list[tuple[str, str]] = field(default_factory=list)
    """Lines cutechess-cli prints while reading the command line and still plays:
    (stream, line)."""


def _to_map(given: _Given, valid: str) -> tuple[dict[str, str], list[str]]:
    """MatchParser::Option::toMap: (values with defaults filled in, warnings); an empty map
    after a warning when the words do not fit ``a|b=default|...``."""
    defaults: dict[str, str | None] = {}
    for spec in valid.split("|"):
        key, _, value = spec.partition("=")
        defaults[key] = value or None
    found: dict[str, str] = {}
    for word in given.words:
        key, _, value = word.partition("=")
        if not key or not value or key not in defaults or key in found:
            return {}, [f'Invalid argument for option "{given.name}": "{word}"']
        found[key] = value
    missing = [key for key in sorted(defaults) if key not in found and defaults[key] is None]
    if missing:
        quoted = ", ".join(f'"{key}"' for key in missing)
        return {}, [f'Option "{given.name}" needs argument(s): {quoted}']
    for key, default in defaults.items():
        if key not in found and default is not None:
            found[key] = default
    return found, []


def _invalid(given: _Given, *before: str) -> PeerUsageError:
    """cutechess-cli's closing line for an option it refuses, after its own warnings."""
    if given.flag:
        return _warning(*before, f'Empty value for option "{given.name}"')
    return _warning(*before, f'Invalid value for option "{given.name}": "{given.joined()}"')


def _resultformat_help() -> str:
    lines = ["", "Option -resultformat accepts a comma separated list of fields or one of "
             "following format names:", ""]
    for name, fields in RESULT_FORMATS.items():
        lines += [f"{name} ", f"   {fields}"]
    lines += ["", "Field tokens:", f"   {_FIELD_TOKENS} ", "", "Named shortcuts:"]
    for name, fields in _FIELD_GROUPS.items():
        lines += [f"{name} ", f"   {fields}"]
    return "\n".join(lines) + "\n"


def read_arguments(argv: list[str]) -> Arguments | Immediate:
    """Read a command line as cutechess-cli does (raises PeerUsageError with its lines);
    ``-resultformat help`` is an immediate answer (exit status 1, as cutechess-cli's)."""
    given = _split(argv)

    def one(name: str) -> _Given | None:
        """The option given once, or None."""
        found = given.get(name)
        return found[0] if found else None

    args = Arguments(argv=tuple(argv), engines=[])
    if (tournament := one("-tournament")) is not None:
        args.tournament = tournament.joined()
        if args.tournament not in TOURNAMENTS:
            raise _warning(f"Invalid tournament type: {args.tournament}")
    each: list[str] = []
    for option in OPTIONS:
        for item in given.get(option.name, []):
            if option.name == "-tournament":
                continue
            result = _act(option.name, item, args, each)
            if isinstance(result, Immediate):
                return result
    # The -each keys, for every engine in turn (the first one refused stops there).
    problems: list[str] = []
    for index, engine in enumerate(args.engines if each else []):
        updated, warning = _parse_engine(each, engine)
        args.engines[index] = updated
        if warning is not None:
            problems.append(warning)
            break
    lines = [f"Warning: {problem}" for problem in problems]
    for engine in args.engines:
        if not engine.tc_valid():
            lines.append("Warning: Invalid or missing time control")
            break
        if not engine.command.strip():
            lines.append("Critical: missing chess engine command ((null):0, (null))")
            break
        if not engine.protocol:
            lines.append("Warning: Missing chess protocol")
            break
    if len(args.engines) < 2:
        lines.append("Warning: At least two engines are needed")
    if lines:
        raise PeerUsageError("\n".join(lines), 1)
    return args


def _act(name: str, item: _Given, args: Arguments, each: list[str]) -> Immediate | None:
    """One option acted on as cutechess-cli's parseMatch does; raises its refusal."""
    value = item.joined()
    if name == "-srand":
        args.srand = int(value)
    elif name == "-engine":
        engine, warning = _parse_engine(item.words, EngineData())
        if warning is not None:
            raise _invalid(item, warning)
        args.engines.append(engine)
    elif name == "-each":
        each[:] = item.words
    elif name == "-variant":
        if value not in VARIANTS:
            raise _invalid(item)
        args.variant = value
    elif name == "-concurrency":
        if int(value) <= 0:
            raise _invalid(item)
        args.concurrency = int(value)
    elif name == "-draw":
        found, warnings = _to_map(item, "movenumber|movecount|score")
        numbers = [_to_int(found.get(k, "")) for k in ("movenumber", "movecount", "score")]
        if any(n is None for n in numbers):
            raise _invalid(item, *warnings)
        args.draw = (numbers[0] or 0, numbers[1] or 0, numbers[2] or 0)
    elif name == "-resign":
        found, warnings = _to_map(item, "movecount|score|twosided=false")
        count, score = _to_int(found.get("movecount", "")), _to_int(found.get("score", ""))
        if count is None or score is None:
            raise _invalid(item, *warnings)
        args.resign = (count, score, found.get("twosided") == "true")
    elif name == "-maxmoves":
        if int(value) < 0:
            raise _invalid(item)
        args.maxmoves = int(value)
    elif name == "-tb":
        if not _tablebases_found(value):
            raise _invalid(item, "Could not load Syzygy tablebases")
        args.tb = value
    elif name == "-tbpieces":
        if int(value) <= 2:
            raise _invalid(item)
        args.tbpieces = int(value)
    elif name == "-tbignore50":
        args.tbignore50 = True
    elif name == "-event":
        args.event = value
    elif name == "-games":
        if int(value) <= 0:
            raise _invalid(item)
        args.games = int(value)
    elif name == "-rounds":
        if args.tournament == "knockout":
            raise _invalid(item, 'Tournament "knockout" does not support user-defined round '
                           "multipliers")
        if int(value) <= 0:
            raise _invalid(item)
        args.rounds = int(value)
    elif name == "-sprt":
        found, warnings = _to_map(item, "elo0|elo1|alpha|beta")
        bounds = [_to_double(found.get(k, "")) for k in ("elo0", "elo1", "alpha", "beta")]
        if any(b is None for b in bounds):
            raise _invalid(item, *warnings)
        elo0, elo1, alpha, beta = (float(b or 0.0) for b in bounds)
        args.sprt = SprtBounds(elo0, elo1, alpha, beta)
    elif name == "-ratinginterval":
        args.rating_interval = int(value)
    elif name == "-outcomeinterval":
        args.outcome_interval = int(value)
    elif name == "-resultformat":
        if value == "help":
            return Immediate(_resultformat_help(), 1)
        args.result_format = value[:256].strip()
    elif name == "-debug":
        if value != "all":  # 1.5.1 refuses a bare -debug: its value is not "all"
            raise _invalid(item)
        args.debug = True
        each.append("debug")
    elif name == "-openings":
        _openings(item, args)
    elif name == "-bookmode":
        if item.flag or value not in ("ram", "disk"):
            raise _invalid(item)
        args.bookmode = value
    elif name == "-pgnout":
        for extra in item.words[1:]:
            if extra == "min":
                args.pgn_mode = PgnMode.MINIMAL
            elif extra == "fi":
                args.pgn_finished_only = True
            else:
                raise _invalid(item)
        args.pgnout = item.words[0]
    elif name == "-epdout":
        args.epdout = value
    elif name == "-repeat":
        repeat = 2 if item.flag else int(value)
        if repeat < 1:
            raise _invalid(item)
        args.repeat = repeat
        if args.games % repeat:
            args.notices.append(("stderr", f"Warning: {repeat} opening repetitions vs "
                                           f"{args.games} games per encounter"))
    elif name == "-noswap":
        args.swap = False
    elif name == "-reverse":
        args.reverse = True
    elif name == "-recover":
        args.recover = True
    elif name == "-site":
        args.site = value
    elif name == "-wait":
        if int(value) < 0:
            raise _invalid(item)
        args.wait = int(value)
    elif name == "-seeds":
        args.seeds = int(value)
    return None


def _openings(item: _Given, args: Arguments) -> None:
    """``-openings``: cutechess-cli's checks, in its order, and its suite opened."""
    found, warnings = _to_map(
        item, "file|format=pgn|order=sequential|plies=1024|start=1|policy=default")
    ok = bool(found)
    if ok and found["format"] not in ("epd", "pgn"):
        raise _invalid(item, f'Invalid opening suite format: "{found["format"]}"')
    if ok and found["order"] not in ("sequential", "random"):
        raise _invalid(item, f'Invalid opening selection order: "{found["order"]}"')
    if ok and found["policy"] not in ("default", "encounter", "round"):
        raise _invalid(item, f'Invalid opening shift policy: "{found["policy"]}"')
    if not ok or _to_int_or_zero(found["plies"]) <= 0 or _to_int_or_zero(found["start"]) <= 0:
        raise _invalid(item, *warnings)
    if found["order"] == "random":
        args.notices.append(("stdout", "Indexing opening suite..."))
    path = Path(found["file"])
    try:
        with open(path, "rb") as handle:
            # A PGN suite without a single tag (an EPD file read with the default format):
            # cutechess-cli deals no opening from it.
            empty = found["format"] == "pgn" and b"[" not in handle.read()
    except OSError:
        raise _invalid(item, f"Can't open opening suite {found['file']}") from None
    args.openings = found
    args.openings_empty = empty


def _tablebases_found(paths: str) -> bool:
    """Whether cutechess-cli would load Syzygy tables from `paths` (':'-separated on this
    system): some directory holds the 3-piece WDL tables."""
    for part in paths.split(":"):
        if part and Path(part).is_dir() and any(Path(part).glob("K?vK.rtbw")):
            return True
    return False


def version_text(runner_version: str) -> str:
    """``--version``: the cutechess-cli release implemented first (tools read that number),
    then what the program is."""
    return (f"{PROGRAM} {CUTECHESS_VERSION} (cecp-runner {runner_version})\n"
            f"The command line of cutechess-cli {CUTECHESS_VERSION}, played by cecp-runner "
            "(every game also stored in its database).\n")


# -- into a runner tournament ----------------------------------------------------------------


_OUTPUT_ONLY = frozenset({"-concurrency", "-pgnout", "-epdout", "-ratinginterval",
                          "-outcomeinterval", "-resultformat", "-debug", "-wait", "-bookmode"})
"""Options that change what is printed or written, or how fast, not which games are played:
left out of the name a command line gives its tournament, so that rerunning it with another
of them still continues it."""


def game_words(argv: tuple[str, ...]) -> list[str]:
    """The words that decide the games: the options of `_OUTPUT_ONLY` left out."""
    kept: list[str] = []
    skipping = False
    for word in argv:
        if word in _BY_NAME:
            skipping = word in _OUTPUT_ONLY
        if not skipping:
            kept.append(word)
    return kept


def run_key(argv: tuple[str, ...]) -> str:
    """A short digest of `game_words`: the same games, the same key."""
    return hashlib.sha256("\0".join(game_words(argv)).encode("utf-8", "surrogateescape")
                          ).hexdigest()[:12]


def seed_for(args: Arguments) -> int:
    """The random seed: ``-srand``'s; without it cutechess-cli takes the time of day, here a
    number drawn from the command line (the same words deal the same openings again, so that
    a rerun continues the run it interrupted)."""
    if args.srand is not None:
        return args.srand
    return int(run_key(args.argv)[:8], 16)


def tc_words(engine: EngineData) -> str:
    """The engine's limits as the runner's time control words."""
    words: list[str] = []
    if engine.time_per_move:
        words.append(f"st={_seconds(engine.time_per_move)}")
    elif engine.infinite:
        words.append("tc=inf")
    else:
        clock = _seconds(engine.time_per_tc)
        if engine.moves_per_tc:
            clock = f"{engine.moves_per_tc}/{clock}"
        if engine.increment:
            clock += f"+{_seconds(engine.increment)}"
        words.append(f"tc={clock}")
    if engine.plies:
        words.append(f"depth={engine.plies}")
    if engine.nodes:
        words.append(f"nodes={engine.nodes}")
    if engine.margin:
        words.append(f"timemargin={engine.margin}")
    return " ".join(words)


def _seconds(ms: int) -> str:
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def cutechess_tc_text(engine: EngineData) -> str:
    """The time control as cutechess-cli writes it in its tables (TimeControl::toString)."""
    if engine.infinite:
        return "inf"
    if engine.time_per_move:
        return f"{_number(engine.time_per_move / 1000)}/move"
    text = "hg" if engine.hourglass else ""
    if engine.moves_per_tc > 0:
        text += f"{engine.moves_per_tc}/"
    text += _number(engine.time_per_tc / 1000)
    if engine.increment > 0:
        text += f"+{_number(engine.increment / 1000)}"
    return text


def _number(value: float) -> str:
    """A double as QString::number writes it (up to 6 significant digits)."""
    return f"{value:.6g}"


def check_supported(args: Arguments) -> None:
    """The runner's own refusals, for a command line cutechess-cli accepts."""
    if args.tournament == "knockout":
        raise _refusal("-tournament knockout is not supported: its pairings depend on the "
                       "results, and the runner plays a fixed schedule (round-robin, gauntlet "
                       "and pyramid are)")
    if args.openings is not None and args.openings_empty and args.openings["order"] == "random":
        raise _refusal(f"-openings: {args.openings['file']} holds no PGN game (format=pgn is "
                       "the default; cutechess-cli crashes on it in random order): add "
                       "format=epd for an EPD file")
    if args.draw is not None and args.draw[0] > 0 and (args.draw[1] < 1 or args.draw[2] < 0):
        raise _refusal("-draw: movecount below 1 or a negative score is not supported (the "
                       "rule would not depend on the scores)")
    if args.resign is not None and args.resign[0] > 0 and args.resign[1] < 0:
        raise _refusal("-resign: a negative score is not supported")
    if args.variant not in PLAYED_VARIANTS:
        raise _refusal(f"-variant {args.variant} is not supported: the runner plays "
                       f"{' and '.join(PLAYED_VARIANTS)}")
    for engine in args.engines:
        label = engine.name or engine.command
        if engine.book:
            raise _refusal(f"engine {label}: book={engine.book} is not supported (the runner "
                           "has no per-engine Polyglot book); use -openings")
        if not engine.validate_claims:
            raise _refusal(f"engine {label}: trust is not supported: the runner always checks "
                           "an engine's result claims")
        if engine.hourglass:
            raise _refusal(f"engine {label}: tc={engine.tc_text} (hourglass) is not supported")
        if engine.infinite and not engine.time_per_move and not (engine.plies or engine.nodes):
            raise _refusal(f"engine {label}: tc=inf needs depth= or nodes= here (a game "
                           "without any limit never ends)")
        if engine.ponder and engine.protocol == "uci":
            raise _refusal(f"engine {label}: ponder is not supported for UCI engines")


def _names(args: Arguments) -> list[str]:
    """The engines' names: given, else the program's (a repeated one numbered, as the runner
    keeps results by name); two engines given one name are refused."""
    given = [engine.name for engine in args.engines]
    taken = {name for name in given if name}
    if len(taken) < len([name for name in given if name]):
        twice = next(name for name in given if name and given.count(name) > 1)
        raise _refusal(f"two engines are named {twice!r}: give each its own name= (the runner "
                       "keeps results by engine name)")
    names: list[str] = []
    for engine in args.engines:
        if engine.name:
            names.append(engine.name)
            continue
        base = Path(engine.command.strip()).name or "engine"
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}-{number}"
        taken.add(name)
        names.append(name)
    return names


def engine_table(engine: EngineData, name: str) -> dict[str, Any]:
    """One engine as a runner configuration table."""
    command = engine.command.strip()
    if not engine.directory and Path(command).is_file():
        command = str(Path(command).resolve())  # cutechess-cli makes a local program absolute
    table: dict[str, Any] = {
        "name": name, "command": [command, *engine.arguments],
        "protocol": "cecp" if engine.protocol == "xboard" else "uci",
        "restart": engine.restart, "tc": tc_words(engine), "ponder": engine.ponder,
        # Without dir= cutechess-cli runs an engine in the temporary directory.
        "dir": engine.directory or tempfile.gettempdir(),
    }
    init = [line for text in engine.init_strings for line in text.split("\n")]
    if engine.debug and engine.protocol == "uci":
        init.insert(0, "debug on")
    if init:
        table["init_strings"] = init
    if engine.options:
        table["options"] = dict(engine.options)
    return table


def tournament_table(args: Arguments) -> dict[str, Any]:
    """The runner configuration table of an accepted command line (schedule set apart)."""
    names = _names(args)
    table: dict[str, Any] = {
        "name": run_name("cutechess", game_words(args.argv), args.event or " vs ".join(names)),
        "format": "round-robin",
        "engines": [engine_table(e, n) for e, n in zip(args.engines, names, strict=True)],
        "concurrency": args.concurrency, "variant": args.variant, "recover": args.recover,
    }
    if args.openings is not None and not args.openings_empty:
        found = args.openings
        table["openings"] = {
            "file": found["file"], "format": found["format"], "order": found["order"],
            "seed": seed_for(args), "plies": _to_int_or_zero(found["plies"]),
            "start": _to_int_or_zero(found["start"]),
        }
    adjudication: dict[str, Any] = {}
    # cutechess-cli switches the draw rule off with movenumber 0 (or less), the resign rule
    # with movecount 0 (or less).
    if args.draw is not None and args.draw[0] > 0:
        number, count, score = args.draw
        adjudication["draw"] = {"movenumber": number, "movecount": count, "score": score}
    if args.resign is not None and args.resign[0] > 0:
        count, score, two = args.resign
        adjudication["resign"] = {"movecount": count, "score": score, "twosided": two}
    if args.maxmoves:
        adjudication["maxmoves"] = args.maxmoves
    if args.tb is not None:
        adjudication["tablebases"] = [p for p in args.tb.split(":") if p]
        if args.tbpieces is not None:
            adjudication["tbpieces"] = args.tbpieces
        adjudication["tbignore50"] = args.tbignore50
    if adjudication:
        table["adjudication"] = adjudication
    if args.sprt is not None:
        table["sprt"] = {"elo0": args.sprt.elo0, "elo1": args.sprt.elo1,
                         "alpha": args.sprt.alpha, "beta": args.sprt.beta, "model": "cutechess"}
    return table


def settings_for(args: Arguments, names: list[str], total: int) -> CutechessSettings:
    """What the output needs to print and write as cutechess-cli does."""
    return CutechessSettings(
        players=tuple(names), time_controls=tuple(cutechess_tc_text(e) for e in args.engines),
        tournament=args.tournament, seeds=args.seeds, final_game_count=total,
        variant=args.variant, event=args.event, site=args.site, pgn_out=args.pgnout,
        pgn_mode=args.pgn_mode, pgn_finished_only=args.pgn_finished_only,
        epd_out=args.epdout, rating_interval=args.rating_interval,
        outcome_interval=args.outcome_interval, result_format=args.result_format,
        sprt=args.sprt, debug=args.debug, recover=args.recover,
    )


def with_engine_extras(config: TournamentConfig, args: Arguments) -> TournamentConfig:
    """The configuration with what the table has no key for: stderr files, timeout scales."""
    engines = tuple(
        dataclasses.replace(spec, stderr=Path(data.stderr) if data.stderr else None,
                            timeout_scale=data.timeout_scale, white_pov=data.white_pov)
        for spec, data in zip(config.engines, args.engines, strict=True))
    return dataclasses.replace(config, engines=engines)
