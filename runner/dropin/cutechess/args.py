"""cutechess-cli 1.5.1's command line, read as cutechess-cli reads it, into a runner tournament.

Reading follows cutechess-cli's own two stages, because its refusals (their words, their order,
its exit status 1) come from them. Both are done by the one reader of the vocabulary
(runner.config.words, which ``runner match`` uses too) in cutechess-cli's `DIALECT`:

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

from runner.config.vocabulary import DRAW_KEYS, OPENINGS_KEYS, RESIGN_KEYS, SPRT_KEYS, Key, Value
from runner.config.words import (
    Dialect,
    EngineRead,
    Given,
    Numbers,
    OptionSpec,
    Wording,
    cut,
    read_engine,
    read_keys,
)
from runner.dropin.contract import Immediate, PeerUsageError
from runner.dropin.cutechess.engines import (
    ENGINE_KEYS,
    EngineData,
    configured,
    engine_data,
    to_double,
    to_int,
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


OPTIONS: tuple[OptionSpec, ...] = (
    # cutechess-cli's declaration order: it is also the order the options are acted on.
    OptionSpec("srand", 1, 1, number="uint"),
    OptionSpec("tournament", 1, 1),
    OptionSpec("engine", 1, -1, repeatable=True),
    OptionSpec("each", 1),
    OptionSpec("variant", 1, 1),
    OptionSpec("concurrency", 1, 1, number="int"),
    OptionSpec("draw"),
    OptionSpec("resign"),
    OptionSpec("maxmoves", 1, 1, number="int"),
    OptionSpec("tb", 1, 1),
    OptionSpec("tbpieces", 1, 1, number="int"),
    OptionSpec("tbignore50", 0, 0),
    OptionSpec("event", 1, 1),
    OptionSpec("games", 1, 1, number="int"),
    OptionSpec("rounds", 1, 1, number="int"),
    OptionSpec("sprt"),
    OptionSpec("ratinginterval", 1, 1, number="int"),
    OptionSpec("outcomeinterval", 1, 1, number="int"),
    OptionSpec("resultformat", 1, 1),
    OptionSpec("debug", 0, 1),
    OptionSpec("openings"),
    OptionSpec("bookmode"),
    OptionSpec("pgnout", 1, 3),
    OptionSpec("epdout", 1, 1),
    OptionSpec("repeat", 0, 1, number="int"),
    OptionSpec("noswap", 0, 0),
    OptionSpec("reverse", 0, 0),
    OptionSpec("recover", 0, 0),
    OptionSpec("site", 1, 1),
    OptionSpec("wait", 1, 1, number="int"),
    OptionSpec("seeds", 1, 1, number="uint"),
)
BY_NAME = {f"-{option.name}": option for option in OPTIONS}
"""The options by the word that names them (``-engine``)."""

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


class _Problem(ValueError):
    """One of cutechess-cli's warnings, as the one reader raises it; the stage that read it
    decides the lines printed (one warning, or it and the option's refusal)."""


def _cutechess_truth(text: str) -> bool:
    """QVariant's toBool of a key's text as cutechess-cli compares it: only "true" is."""
    return text == "true"


def _negative_number(word: str) -> bool:
    return to_double(word) is not None


DIALECT = Dialect(
    options=OPTIONS, dash="-", any_dashes=False, equals_is_value=False,
    numbers=Numbers(to_int, to_uint, to_double, _cutechess_truth, _negative_number),
    wording=Wording(
        stray='Unknown option: "{word}"', unknown='Unknown option: "{word}"',
        twice='Multiple instances of option "{option}"',
        too_few='Option "{option}" needs {at_least}{low} argument(s)',
        too_many='Too many arguments for option "{option}"',
        bad_number='Invalid value for option "{option}": "{text}"',
        not_a_word=None, no_option_name=None, unknown_engine_key='Invalid engine option: "{key}"',
        bad_setting='Invalid argument for option "{option}": "{token}"',
        missing_settings='Option "{option}" needs argument(s): {keys}'),
    refuse=_Problem, engine_keys=ENGINE_KEYS, settings_column="peer", defaults=True,
    configured=configured)
"""How cutechess-cli 1.5.1 reads its words: exactly one dash, Qt's numbers (a word reading as
a number is a value), a bare engine word a key (``ponder``), cutechess-cli's own keys with
their defaults and refusals (runner.dropin.cutechess.engines)."""


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
    openings: dict[str, Value] | None = None
    """The -openings keys, cutechess-cli's defaults filled in (plies and start numbers)."""
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


def _settings(item: Given, keys: tuple[Key, ...]) -> dict[str, Value]:
    """MatchParser::Option::toMap: the keys with cutechess-cli's defaults filled in; its
    refusal after its warning when the words do not fit the option's keys."""
    try:
        return read_keys(item.option.name, item.words, keys, DIALECT)
    except _Problem as problem:
        raise _invalid(item, str(problem)) from None


def _invalid(given: Given, *before: str) -> PeerUsageError:
    """cutechess-cli's closing line for an option it refuses, after its own warnings."""
    name = f"-{given.option.name}"
    if given.flag:
        return _warning(*before, f'Empty value for option "{name}"')
    return _warning(*before, f'Invalid value for option "{name}": "{given.joined()}"')


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
    try:
        cut_words = cut(argv, DIALECT)
    except _Problem as problem:
        raise _warning(str(problem)) from None
    given: dict[str, list[Given]] = {}
    for item in cut_words:
        given.setdefault(item.option.name, []).append(item)

    args = Arguments(argv=tuple(argv), engines=[])
    if "tournament" in given:
        args.tournament = given["tournament"][0].joined()
        if args.tournament not in TOURNAMENTS:
            raise _warning(f"Invalid tournament type: {args.tournament}")
    each: list[str] = []
    engines: list[EngineRead] = []
    for option in OPTIONS:
        for item in given.get(option.name, []):
            if option.name == "tournament":
                continue
            result = _act(option.name, item, args, each, engines)
            if isinstance(result, Immediate):
                return result
    # The -each keys, for every engine in turn, word by word (the first one refused stops
    # there, the engine as the words before it left it).
    problems: list[str] = []
    for index, engine in enumerate(engines if each else []):
        try:
            for word in each:
                engine = read_engine([word], DIALECT, engine)
        except _Problem as problem:
            problems.append(str(problem))
            break
        finally:
            engines[index] = engine
    args.engines = [engine_data(engine) for engine in engines]
    lines = [f"Warning: {problem}" for problem in problems]
    for data in args.engines:
        if not data.tc_valid():
            lines.append("Warning: Invalid or missing time control")
            break
        if not data.command.strip():
            lines.append("Critical: missing chess engine command ((null):0, (null))")
            break
        if not data.protocol:
            lines.append("Warning: Missing chess protocol")
            break
    if len(args.engines) < 2:
        lines.append("Warning: At least two engines are needed")
    if lines:
        raise PeerUsageError("\n".join(lines), 1)
    return args


def _act(name: str, item: Given, args: Arguments, each: list[str],
         engines: list[EngineRead]) -> Immediate | None:
    """One option acted on as cutechess-cli's parseMatch does; raises its refusal."""
    value = item.joined()
    if name == "srand":
        args.srand = int(value)
    elif name == "engine":
        try:
            engines.append(read_engine(item.words, DIALECT))
        except _Problem as problem:
            raise _invalid(item, str(problem)) from None
    elif name == "each":
        each[:] = item.words
    elif name == "variant":
        if value not in VARIANTS:
            raise _invalid(item)
        args.variant = value
    elif name == "concurrency":
        if int(value) <= 0:
            raise _invalid(item)
        args.concurrency = int(value)
    elif name == "draw":
        found = _settings(item, DRAW_KEYS)
        numbers = [found[k] for k in ("movenumber", "movecount", "score")]
        if not all(isinstance(n, int) for n in numbers):
            raise _invalid(item)
        args.draw = (int(numbers[0]), int(numbers[1]), int(numbers[2]))
    elif name == "resign":
        found = _settings(item, RESIGN_KEYS)
        count, score = found["movecount"], found["score"]
        if not isinstance(count, int) or not isinstance(score, int):
            raise _invalid(item)
        args.resign = (count, score, found["twosided"] is True)
    elif name == "maxmoves":
        if int(value) < 0:
            raise _invalid(item)
        args.maxmoves = int(value)
    elif name == "tb":
        if not _tablebases_found(value):
            raise _invalid(item, "Could not load Syzygy tablebases")
        args.tb = value
    elif name == "tbpieces":
        if int(value) <= 2:
            raise _invalid(item)
        args.tbpieces = int(value)
    elif name == "tbignore50":
        args.tbignore50 = True
    elif name == "event":
        args.event = value
    elif name == "games":
        if int(value) <= 0:
            raise _invalid(item)
        args.games = int(value)
    elif name == "rounds":
        if args.tournament == "knockout":
            raise _invalid(item, 'Tournament "knockout" does not support user-defined round '
                           "multipliers")
        if int(value) <= 0:
            raise _invalid(item)
        args.rounds = int(value)
    elif name == "sprt":
        found = _settings(item, SPRT_KEYS)
        bounds = [found[k] for k in ("elo0", "elo1", "alpha", "beta")]
        if not all(isinstance(b, float) for b in bounds):
            raise _invalid(item)
        elo0, elo1, alpha, beta = (float(b) for b in bounds)
        args.sprt = SprtBounds(elo0, elo1, alpha, beta)
    elif name == "ratinginterval":
        args.rating_interval = int(value)
    elif name == "outcomeinterval":
        args.outcome_interval = int(value)
    elif name == "resultformat":
        if value == "help":
            return Immediate(_resultformat_help(), 1)
        args.result_format = value[:256].strip()
    elif name == "debug":
        if value != "all":  # 1.5.1 refuses a bare -debug: its value is not "all"
            raise _invalid(item)
        args.debug = True
        each.append("debug")
    elif name == "openings":
        _openings(item, args)
    elif name == "bookmode":
        if item.flag or value not in ("ram", "disk"):
            raise _invalid(item)
        args.bookmode = value
    elif name == "pgnout":
        for extra in item.words[1:]:
            if extra == "min":
                args.pgn_mode = PgnMode.MINIMAL
            elif extra == "fi":
                args.pgn_finished_only = True
            else:
                raise _invalid(item)
        args.pgnout = item.words[0]
    elif name == "epdout":
        args.epdout = value
    elif name == "repeat":
        repeat = 2 if item.flag else int(value)
        if repeat < 1:
            raise _invalid(item)
        args.repeat = repeat
        if args.games % repeat:
            args.notices.append(("stderr", f"Warning: {repeat} opening repetitions vs "
                                           f"{args.games} games per encounter"))
    elif name == "noswap":
        args.swap = False
    elif name == "reverse":
        args.reverse = True
    elif name == "recover":
        args.recover = True
    elif name == "site":
        args.site = value
    elif name == "wait":
        if int(value) < 0:
            raise _invalid(item)
        args.wait = int(value)
    elif name == "seeds":
        args.seeds = int(value)
    return None


def _openings(item: Given, args: Arguments) -> None:
    """``-openings``: cutechess-cli's checks, in its order, and its suite opened."""
    found = _settings(item, OPENINGS_KEYS)
    if found["format"] not in ("epd", "pgn"):
        raise _invalid(item, f'Invalid opening suite format: "{found["format"]}"')
    if found["order"] not in ("sequential", "random"):
        raise _invalid(item, f'Invalid opening selection order: "{found["order"]}"')
    if found["policy"] not in ("default", "encounter", "round"):
        raise _invalid(item, f'Invalid opening shift policy: "{found["policy"]}"')
    if not all(isinstance(found[k], int) and int(found[k]) > 0 for k in ("plies", "start")):
        raise _invalid(item)
    if found["order"] == "random":
        args.notices.append(("stdout", "Indexing opening suite..."))
    path = Path(str(found["file"]))
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
