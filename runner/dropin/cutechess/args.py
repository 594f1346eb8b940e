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

from dataclasses import dataclass, field
from pathlib import Path

from runner.config.vocabulary import DRAW_KEYS, OPENINGS_KEYS, RESIGN_KEYS, SPRT_KEYS, peer_spec
from runner.dropin.contract import Immediate, PeerUsageError
from runner.dropin.cutechess.engines import (
    EngineData,
    parse_engine,
    to_double,
    to_int,
    to_int_or_zero,
    to_uint,
)
from runner.dropin.cutechess.settings import PgnMode, SprtBounds

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
BY_NAME = {option.name: option for option in OPTIONS}

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

def _warning(*lines: str) -> PeerUsageError:
    """cutechess-cli's refusal: its warnings (``Warning: `` first), exit status 1."""
    return PeerUsageError("\n".join(f"Warning: {line}" for line in lines), 1)


def refusal(text: str) -> PeerUsageError:
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
    return len(word) > 1 and word.startswith("-") and to_double(word) is None


def _split(argv: list[str]) -> dict[str, list[_Given]]:
    given: dict[str, list[_Given]] = {}
    i = 0
    while i < len(argv):
        name = argv[i]
        option = BY_NAME.get(name)
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
            if ((option.kind == "int" and to_int(text) is None)
                    or (option.kind == "uint" and to_uint(text) is None)):
                raise _warning(f'Invalid value for option "{name}": "{text}"')
            if option.kind == "bool":  # a flag given words never gets here (high is 0)
                raise _warning(f'Invalid value for option "{name}": "{text}"')
        given.setdefault(name, []).append(_Given(name, words, not words))
    return given


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
    after a warning when the words do not fit ``a|b=default|...`` (the option's keys as
    cutechess-cli declares them: runner.config.vocabulary.peer_spec)."""
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
        updated, warning = parse_engine(each, engine)
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
        engine, warning = parse_engine(item.words, EngineData())
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
        found, warnings = _to_map(item, peer_spec(DRAW_KEYS))
        numbers = [to_int(found.get(k, "")) for k in ("movenumber", "movecount", "score")]
        if any(n is None for n in numbers):
            raise _invalid(item, *warnings)
        args.draw = (numbers[0] or 0, numbers[1] or 0, numbers[2] or 0)
    elif name == "-resign":
        found, warnings = _to_map(item, peer_spec(RESIGN_KEYS))
        count, score = to_int(found.get("movecount", "")), to_int(found.get("score", ""))
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
        found, warnings = _to_map(item, peer_spec(SPRT_KEYS))
        bounds = [to_double(found.get(k, "")) for k in ("elo0", "elo1", "alpha", "beta")]
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
    found, warnings = _to_map(item, peer_spec(OPENINGS_KEYS))
    ok = bool(found)
    if ok and found["format"] not in ("epd", "pgn"):
        raise _invalid(item, f'Invalid opening suite format: "{found["format"]}"')
    if ok and found["order"] not in ("sequential", "random"):
        raise _invalid(item, f'Invalid opening selection order: "{found["order"]}"')
    if ok and found["policy"] not in ("default", "encounter", "round"):
        raise _invalid(item, f'Invalid opening shift policy: "{found["policy"]}"')
    if not ok or to_int_or_zero(found["plies"]) <= 0 or to_int_or_zero(found["start"]) <= 0:
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
