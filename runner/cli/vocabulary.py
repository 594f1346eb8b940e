"""The cutechess-cli vocabulary of the command line, read into the table a TOML file holds.

``runner play``, ``match``, ``gauntlet``, ``roundrobin`` and ``engine check`` all read their
``--engine cmd=fairymax name=fm option.Hash=64``, ``--each tc=10+0.1``, ``--draw``... words
with the one reader of the vocabulary (runner.config.words, which runner-cutechess uses too),
in the runner's `dialect`: one dash or two, Python's numbers, a value that does not read left
for the configuration check to report with its key. They become the table a tournament file
would hold, and `parse_config` (or `parse_engine`) checks and resolves it, so every key means
the same on each command and in a file. The option tables below are also what each command's
``--help`` lists. Nothing is started here.
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.config.engines import parse_engine
from runner.config.model import DrawAdjudication, EngineSpec, ResignAdjudication, TournamentConfig
from runner.config.parse import parse_config
from runner.config.vocabulary import (
    DRAW_KEYS,
    ENGINE_KEYS,
    LIMIT_KEYS,
    OPENINGS_KEYS,
    RESIGN_KEYS,
    SPRT_KEYS,
    AdjudicationWords,
    EngineWords,
    Key,
    adjudication_table,
    default_name,
    engine_table,
    numbered,
    runner_keys,
)
from runner.config.words import (
    Dialect,
    EngineKey,
    KeyAction,
    OptionSpec,
    Wording,
    cut,
    python_numbers,
    read_keys,
    typed,
)
from runner.config.words import read_engine as read_engine_words

if TYPE_CHECKING:
    from runner.app.stream import EventsTarget

__all__ = [
    "CHECK", "DRAW_KEYS", "ENGINE_KEYS", "OPENINGS_KEYS", "OPTIONS", "PLAY",
    "RESIGN_KEYS",
    "SPRT_KEYS", "TOURNAMENT", "Arguments", "CommandLineError", "Key", "Option",
    "dialect", "engine_words", "help_sections", "read_arguments",
    "read_engine",
]

SOURCE = "command line"
"""How problems found by the configuration checks name the command line."""

PLAY = "play"
TOURNAMENT = "tournament"
"""``match``, ``gauntlet`` and ``roundrobin``: they take the same options."""
CHECK = "engine check"


class CommandLineError(ValueError):
    """A bad cutechess-style argument: printed plainly, exit code 2."""


_DRAW = DrawAdjudication()
_RESIGN = ResignAdjudication()

KEY_HELP: dict[tuple[Key, ...], dict[str, str]] = {
    ENGINE_KEYS: {
        "cmd": "the program and its arguments, split like a shell (required); a bare name is "
               "looked for in dir=, on PATH, then in /usr/games and /usr/local/games; python "
               "is the Python running the runner",
        "arg": "one more argument for the program (repeatable)",
        "name": "the name in PGN tags and standings (default: the program's name, or the "
                "module of 'python -m MODULE')",
        "dir": "the engine's working directory",
        "proto": "the protocol (xboard and winboard mean cecp; without it a run asks the "
                 "engine before game 1)",
        "tc": "time control: 40/60 (moves/seconds), 10+0.1 (base+increment), 0:10+0.1 or "
              "40/1:00 (minutes:seconds, as cutechess-cli), inf; every game, 'runner play' "
              "too, needs one of tc=, st=, depth=, nodes= (inf only with depth= or nodes=)",
        "st": "a fixed time per move",
        "depth": "search depth limit",
        "nodes": "node limit",
        "timemargin": "milliseconds a move may overrun the clock without a forfeit",
        "restart": "start a fresh process for each game (default auto)",
        "initstr": "a line sent to a CECP engine after it starts (repeatable)",
        "ponder": "let the engine think on its opponent's time (default false)",
        "castling960": "how Chess960 castling is written to a CECP engine: O-O/O-O-O or king "
                       "takes rook (default oo)",
        "option.NAME": "set the engine option NAME (UCI setoption, CECP option)",
    },
    DRAW_KEYS: {
        "movenumber": f"from this full move on (default {_DRAW.movenumber})",
        "movecount": f"for this many consecutive moves of each side (default {_DRAW.movecount})",
        "score": f"both scores within this many centipawns of 0 (default {_DRAW.score})",
    },
    RESIGN_KEYS: {
        "movecount": f"for this many consecutive moves (default {_RESIGN.movecount})",
        "score": "a side's score at or below minus this many centipawns "
                 f"(default {_RESIGN.score})",
        "twosided": "count both sides' scores, as fastchess does "
                    f"(default {str(_RESIGN.twosided).lower()})",
    },
    OPENINGS_KEYS: {
        "file": "the book: EPD, PGN or Polyglot .bin (required)",
        "format": "the book's format (default: from the file extension)",
        "order": "the order openings are taken in (default sequential)",
        "seed": "the seed of order=random and of Polyglot choices (default 0)",
        "plies": "play at most this many plies of each opening (default for a PGN book: 1000)",
        "start": "the first opening used, counted from 1 (default 1)",
    },
    SPRT_KEYS: {
        "elo0": "the H0 bound (required)",
        "elo1": "the H1 bound (required)",
        "alpha": "the false-positive rate (default 0.05)",
        "beta": "the false-negative rate (default 0.05)",
        "model": "the units of elo0 and elo1 (default normalized)",
        "maxgames": "stop after this many games",
    },
}
"""What each key the runner reads does, for the commands' ``--help`` (runner.config.vocabulary
holds the keys)."""

_ALL = frozenset({PLAY, TOURNAMENT, CHECK})
_GAMES = frozenset({PLAY, TOURNAMENT})
_RUNS = frozenset({TOURNAMENT})


@dataclass(frozen=True)
class Option:
    """One ``--option``: how many words it takes, what it does, which commands accept it."""

    name: str
    value: str
    """A placeholder for its words; empty for a flag."""
    help: str
    commands: frozenset[str]
    arity: str = "one"
    """flag (no word), one, optional (none or one), many."""
    every_key: tuple[Key, ...] = ()
    """The option's keys as the vocabulary lists them (cutechess-cli's own ones too)."""
    aliases: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[Key, ...]:
        """The keys the runner reads."""
        return runner_keys(self.every_key)

    def key_help(self, key: Key) -> str:
        """What `key` does, for ``--help``."""
        return KEY_HELP[self.every_key][key.name]


OPTIONS: tuple[Option, ...] = (
    Option("engine", "KEY=VALUE ...", "an engine (one --engine per engine); its keys are below",
           _ALL, "many", ENGINE_KEYS),
    Option("each", "KEY=VALUE ...", "engine keys given to every engine (an engine's own win)",
           _GAMES, "many", ENGINE_KEYS),
    Option("variant", "NAME", "standard or fischerandom (also chess960, frc)", _GAMES),
    Option("fen", "FEN", "the start position", frozenset({PLAY}), "many"),
    Option("moves", "M1,M2,...", "moves in UCI notation played first", frozenset({PLAY}), "many"),
    Option("openings", "KEY=VALUE ...", "an opening book; every opening is played as a game "
           "pair with colors swapped", _RUNS, "many", OPENINGS_KEYS),
    Option("rounds", "N", "how many times the schedule is played (default 1)", _RUNS),
    Option("games", "N", "games per encounter and round, an even number (default 2)", _RUNS),
    Option("repeat", "[2]", "accepted for cutechess-cli: each opening is always played twice "
           "(as a game pair, colors swapped)", _RUNS, "optional"),
    Option("tournament", "round-robin|gauntlet", "cutechess-cli's word for the format: it "
           "must agree with the command (runner match takes either)", _RUNS),
    Option("srand", "N", "the seed of the random opening order (cutechess-cli's word for "
           "--openings seed=N)", _RUNS),
    Option("ratinginterval", "N", "print the standings every N games (0: only at the end, "
           "the default)", _RUNS),
    Option("concurrency", "N", "games played at once (default 1)", _RUNS),
    Option("workers", "N", "play on N local Dask worker processes (0: in this process; "
           "default: local workers only past what one process relays in time)", _RUNS),
    Option("draw", "KEY=VALUE ...", "adjudicate a draw when both engines' scores stay near 0",
           _GAMES, "many", DRAW_KEYS),
    Option("resign", "KEY=VALUE ...", "adjudicate a loss when a side's score stays very low",
           _GAMES, "many", RESIGN_KEYS),
    Option("maxmoves", "N", "adjudicate a draw after this many full moves played after the opening", _GAMES),
    Option("tb", "PATHS", "adjudicate by the Syzygy tables in these directories "
           "(':'-separated), after a capture or pawn move", _GAMES, aliases=("tablebases",)),
    Option("tbpieces", "N", "adjudicate by the tables only with at most N pieces (default: "
           "all the tables cover)", _GAMES),
    Option("tbignore50", "", "cursed wins and blessed losses count as wins and losses, not "
           "draws (the 50-move rule ignored)", _GAMES, "flag"),
    Option("tbadjudicate", "BOTH|WIN_LOSS|DRAW", "which results the tables may adjudicate "
           "(default BOTH)", _GAMES),
    Option("sprt", "KEY=VALUE ...", "stop a match once the SPRT decides", _RUNS, "many",
           SPRT_KEYS),
    Option("pgnout", "FILE", "also append every game to this PGN file", _RUNS),
    Option("recover", "", "restart an engine that crashed instead of stopping", _RUNS, "flag"),
    Option("affinity", "", "pin each game slot's engines to one CPU (Linux)", _RUNS, "flag"),
    Option("name", "NAME", "the tournament's name (default: the format and the engines' names)", _RUNS,
           aliases=("event",)),
    Option("db", "URL", "the database: SQLAlchemy URL or SQLite file (default: $RUNNER_DB, "
           "else ./runner.db)", _RUNS),
    Option("quiet", "", "no live view; summary lines only", _RUNS, "flag", aliases=("q",)),
    Option("events", "FILE", "also write the run's events as JSON lines to FILE (appended; "
           "'-': standard output, the other lines then go to standard error; docs/events.md)",
           _RUNS),
    Option("events-moves", "", "with --events, every move too", _RUNS, "flag"),
)
_KINDS = {"play": PLAY, "engine check": CHECK}
_FORMATS = {"play": "match", "match": "match", "gauntlet": "gauntlet", "roundrobin": "round-robin"}
_BY_NAME = {name: option for option in OPTIONS for name in (option.name, *option.aliases)}


@dataclass
class Arguments:
    """A command line read in the vocabulary: the configuration table and the run's own words."""

    table: dict[str, Any]
    """What a tournament file would hold (the input of `parse_config`)."""
    fen: str | None = None
    moves: tuple[str, ...] = ()
    db: str | None = None
    quiet: bool = False
    rating_interval: int = 0
    """Games between two printings of the standings (0: only at the end)."""
    workers: int | None = None
    """Local Dask worker processes (0: this process; None: the default for the concurrency)."""
    events: str | None = None
    """``--events``: a file for the run's events as JSON lines, or ``-`` (None: none)."""
    events_moves: bool = False

    def events_target(self) -> EventsTarget | None:
        """Where the run's events go (None: nowhere)."""
        if self.events is None:
            return None
        # The event lines' code (pydantic models), loaded for a run with --events only.
        from runner.app.stream import EventsTarget

        return EventsTarget(self.events, self.events_moves)

    def config(self) -> TournamentConfig:
        """The checked, resolved configuration; raises ConfigError listing every problem."""
        return parse_config(self.table, source=SOURCE)


# -- reading ------------------------------------------------------------------------------------


_ARITY = {"flag": (0, 0), "one": (1, 1), "optional": (0, 1), "many": (0, -1)}


def _typed_reader(key: Key) -> Callable[[str], object] | None:
    """How a key's value is read: a truth (ponder) as one, left as text for the check when it
    does not read; the others as written."""
    if key.kind is str:
        return None
    return functools.partial(typed, key)


_ENGINE_KEYS = tuple(
    EngineKey(key.name, KeyAction.APPEND if key.name in ("arg", "initstr") else KeyAction.SET,
              _typed_reader(key))
    for key in ENGINE_KEYS if key.name != "option.NAME")


@functools.cache
def dialect(command: str) -> Dialect:
    """How ``runner COMMAND`` reads the vocabulary: the options it takes, spelled with one
    dash or two, Python's numbers, the runner's own refusals (the configuration check
    reports a bad value, with its key)."""
    kind = _KINDS.get(command, TOURNAMENT)
    options = [o for o in OPTIONS if kind in o.commands]
    accepted = ", ".join(_dashed(spelling) for o in options for spelling in (o.name, *o.aliases))
    return Dialect(
        options=tuple(OptionSpec(o.name, *_ARITY[o.arity], repeatable=o.name in ("engine", "each"),
                                 aliases=o.aliases) for o in options),
        dash="--", any_dashes=True, equals_is_value=True, numbers=python_numbers,
        wording=Wording(
            stray="unexpected argument {word!r} before any --option",
            unknown=f"unknown option --{{name}} for 'runner {command}' (known: {accepted})",
            twice="{option} given twice",
            too_few="{option} takes {wanted}, got {got}", too_many="{option} takes {wanted}, got {got}",
            bad_number="{option} {text!r}: not a number",
            not_a_word="--engine: {token!r} is not of the form key=value",
            no_option_name="--engine: {token!r} has no option name",
            unknown_engine_key="unknown engine key {key!r} in {token!r} (known: "
                               + ", ".join(k.name for k in ENGINE_KEYS) + ")",
            bad_setting="{option}: {token!r} is not one of {keys}"),
        refuse=CommandLineError, engine_keys=_ENGINE_KEYS, settings_column="runner")


def engine_words(tokens: list[str], each: list[str] | None = None) -> EngineWords:
    """One ``--engine`` group (after the ``--each`` words) as the engine it gives."""
    read = read_engine_words([*(each or []), *tokens], dialect(CHECK))
    values = read.values
    if "cmd" not in values:
        raise CommandLineError(f"--engine {' '.join(tokens)!r} has no cmd=")
    try:
        command = [*shlex.split(read.text("cmd")), *read.lists.get("arg", ())]
    except ValueError as exc:
        raise CommandLineError(f"cannot split cmd=: {exc}") from None
    if not command:
        raise CommandLineError("empty cmd=")

    def given(key: str) -> Any:
        return values.get(key)

    return EngineWords(
        name=read.text("name") or default_name(command), command=tuple(command),
        protocol=given("proto"), directory=given("dir"), restart=given("restart"),
        ponder=given("ponder"), castling960=given("castling960"),
        init_strings=read.lists.get("initstr", ()), options=tuple(read.options.items()),
        limits=" ".join(f"{k}={v}" for k, v in values.items() if k in LIMIT_KEYS))


def _grouped(args: list[str], command: str) -> tuple[list[list[str]], dict[str, list[str]]]:
    """The ``--engine`` groups and every other option's words (``--each``'s joined), cut
    and checked by the one reader (runner.config.words) in `command`'s dialect."""
    engines: list[list[str]] = []
    groups: dict[str, list[str]] = {}
    for given in cut(args, dialect(command)):
        if given.option.name == "engine":
            engines.append(list(given.words))
        else:
            groups.setdefault(given.option.name, []).extend(given.words)
    return engines, groups


def _settings(option: str, groups: dict[str, list[str]]) -> dict[str, Any]:
    """The ``key=value`` words of ``--draw``, ``--openings``... as a table."""
    return read_keys(option, groups[option], _BY_NAME[option].every_key, dialect(TOURNAMENT))


def _integer(text: str) -> int | str:
    """A whole number, or the word itself for the configuration check to report."""
    try:
        return int(text)
    except ValueError:
        return text


def _workers(groups: dict[str, list[str]]) -> int | None:
    """``--workers N``: a whole number from 0 (None when not given)."""
    if "workers" not in groups:
        return None
    word = groups["workers"][0]
    if not word.isdigit():
        raise CommandLineError(f"--workers {word!r}: give a number of worker processes "
                               "(0: play in this process)")
    return int(word)


def read_arguments(args: list[str], command: str) -> Arguments:
    """Read the words of ``runner COMMAND`` (play, match, gauntlet, roundrobin) into a
    configuration table; ``play`` reads as a match."""
    engines, groups = _grouped(args, command)
    fmt = _format(command, groups)
    each = groups.get("each", [])
    tables = [engine_table(engine) for engine in _unique_names(
        [engine_words(tokens, each) for tokens in engines],
        [[*each, *tokens] for tokens in engines])]
    table: dict[str, Any] = {"format": fmt, "engines": tables}
    # The default name is the same for the same command line (not the time it ran): the
    # same words run again continue the tournament they interrupted.
    table["name"] = (groups["name"][0] if "name" in groups
                     else f"{fmt} {' vs '.join(str(t['name']) for t in tables)}")
    for key in ("rounds", "games", "concurrency"):
        if key in groups:
            table[key] = _integer(groups[key][0])
    for key in ("variant", "pgnout"):
        if key in groups:
            table[key] = groups[key][0]
    for key in ("recover", "affinity"):
        if key in groups:
            table[key] = True
    for key in ("openings", "sprt"):
        if key in groups:
            table[key] = _settings(key, groups)
    _cutechess_words(groups, table)
    adjudication = adjudication_table(AdjudicationWords(
        draw=_settings("draw", groups) if "draw" in groups else None,
        resign=_settings("resign", groups) if "resign" in groups else None,
        maxmoves=_integer(groups["maxmoves"][0]) if "maxmoves" in groups else None,
        # -tb's text is split at ':' by the check, as a file's is.
        tablebases=groups["tb"][0] if "tb" in groups else None,
        tbpieces=_integer(groups["tbpieces"][0]) if "tbpieces" in groups else None,
        tbignore50=True if "tbignore50" in groups else None,
        tbadjudicate=groups["tbadjudicate"][0] if "tbadjudicate" in groups else None))
    if adjudication:
        table["adjudication"] = adjudication
    moves = tuple(m for part in groups.get("moves", []) for m in part.split(",") if m)
    return Arguments(table=table, fen=" ".join(groups["fen"]) if "fen" in groups else None,
                     moves=moves, db=groups["db"][0] if "db" in groups else None,
                     quiet="quiet" in groups, rating_interval=_rating_interval(groups),
                     workers=_workers(groups), events=_events(groups),
                     events_moves="events-moves" in groups)


_TOURNAMENT_WORDS = {"round-robin": "round-robin", "gauntlet": "gauntlet"}
"""cutechess-cli's -tournament values the runner plays (knockout and pyramid it does not)."""


def _format(command: str, groups: dict[str, list[str]]) -> str:
    """The format of ``runner COMMAND``, or of ``--tournament`` when it agrees with it."""
    fmt = _FORMATS[command]
    if "tournament" not in groups:
        return fmt
    word = groups["tournament"][0]
    wanted = _TOURNAMENT_WORDS.get(word)
    if wanted is None:
        raise CommandLineError(f"--tournament {word!r}: the runner plays "
                               f"{' or '.join(_TOURNAMENT_WORDS)}")
    if command == "match":  # cutechess-cli's one command: any format its engines allow
        return wanted
    if wanted != fmt:
        raise CommandLineError(f"--tournament {word} contradicts 'runner {command}' (a "
                               f"{fmt}); use 'runner {wanted.replace('-', '')}' or drop it")
    return fmt


def _cutechess_words(groups: dict[str, list[str]], table: dict[str, Any]) -> None:
    """``--repeat`` and ``--srand`` where they mean what the runner does anyway, or refused."""
    if groups.get("repeat", []) not in ([], ["2"]):
        raise CommandLineError(f"--repeat {groups['repeat'][0]}: every opening is played "
                               "exactly twice here (a game pair, colors swapped); drop it")
    if "srand" in groups:
        seed = _integer(groups["srand"][0])
        openings = table.get("openings")
        if openings is not None:
            if "seed" in openings and openings["seed"] != seed:
                raise CommandLineError(f"--srand {seed} and --openings seed="
                                       f"{openings['seed']} disagree; give one")
            openings["seed"] = seed  # checked with the other openings keys


def _events(groups: dict[str, list[str]]) -> str | None:
    """``--events FILE`` (None when not given); ``--events-moves`` needs it."""
    if "events" not in groups:
        if "events-moves" in groups:
            raise CommandLineError("--events-moves: give --events FILE (or -) as well")
        return None
    return groups["events"][0]


def _rating_interval(groups: dict[str, list[str]]) -> int:
    """``--ratinginterval N``: a whole number of games, 0 or more."""
    if "ratinginterval" not in groups:
        return 0
    word = groups["ratinginterval"][0]
    value = _integer(word)
    if not isinstance(value, int) or value < 0:
        raise CommandLineError(f"--ratinginterval {word!r}: give a whole number of games, "
                               "0 or more")
    return value


def _unique_names(engines: list[EngineWords], words: list[list[str]]) -> list[EngineWords]:
    """Engines whose name was not given and repeats another's get a number (``fairymax-2``),
    so two copies of one program can play; names given with name= are left to the checks."""
    named = [any(word.startswith("name=") for word in given) for given in words]
    taken = {engine.name for engine, given in zip(engines, named, strict=True) if given}
    return [engine if given else dataclasses.replace(engine, name=numbered(engine.name, taken))
            for engine, given in zip(engines, named, strict=True)]


def read_engine(args: list[str], each: list[str] | None = None) -> EngineSpec:
    """One engine from ``--engine KEY=VALUE ...`` (for ``runner engine check``); raises
    CommandLineError or ConfigError."""
    engines, _ = _grouped(args, CHECK)
    if len(engines) != 1:
        raise CommandLineError(f"give one --engine, got {len(engines)}")
    return parse_engine(engine_table(engine_words(engines[0], each)), source=SOURCE)


# -- help ---------------------------------------------------------------------------------------


def _dashed(name: str) -> str:
    return f"-{name}" if len(name) == 1 else f"--{name}"


def help_sections(command: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every option ``runner COMMAND`` reads here and every key of those options, as titled
    (word, meaning) rows: the source of the command's ``--help`` panels."""
    kind = _KINDS.get(command, TOURNAMENT)
    options = [o for o in OPTIONS if kind in o.commands]
    sections = [("Cutechess-cli options (-option works too)", [
        (f"--{o.name} {o.value}".rstrip(),
         o.help + (f" (also {', '.join(_dashed(a) for a in o.aliases)})" if o.aliases else ""))
        for o in options])]
    shown: set[tuple[Key, ...]] = set()
    for option in options:
        if option.keys and option.keys not in shown:
            shown.add(option.keys)
            users = " and ".join(f"--{o.name}" for o in options if o.keys == option.keys)
            sections.append((f"Keys of {users}",
                             [(f"{key.name}={key.value}", option.key_help(key))
                              for key in option.keys]))
    return sections
