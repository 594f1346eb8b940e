"""Reading a tournament: a TOML file (or a table the command line builds) checked into the model.

A tournament file names its engines inline (``[[engines]]`` tables) or by name from an
engines file (``engines_file = "engines.toml"``, whose ``[[engines]]`` tables have the same
keys; see `engines`), and sets the format, rounds and games, time control, openings,
adjudication, concurrency, variant, optional SPRT bounds, PGN output and database URL.

Every problem found is collected, not just the first: `ConfigError` carries them all, each
with the file, the key path (``engines[2].command``) and the offending value. Input files
(engines file, openings book, engine ``dir``) are resolved relative to the file that names
them; output paths (``pgnout``, a SQLite ``database``) are kept as written, relative to the
working directory of the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.config.check import (
    MISSING,
    TOURNAMENT_NAME_LIMIT,
    Checker,
    ConfigError,
    ConfigProblem,
    load_file,
    time_control,
    unfinishable,
    unwritable,
)
from runner.config.engines import read_engines
from runner.config.model import (
    BOOK_SUFFIXES,
    ENUM_ALIASES,
    AdjudicationConfig,
    BookFormat,
    ClusterConfig,
    DrawAdjudication,
    EngineSpec,
    OpeningOrder,
    OpeningsConfig,
    ResignAdjudication,
    SprtConfig,
    TablebaseResults,
    TournamentConfig,
    TournamentFormat,
)
from runner.config.programs import ProgramLookup
from runner.config.timecontrol import WrittenTimeControl
from runner.stats import EloModel
from runner.types import Variant

__all__ = ["Bounds", "load_config", "parse_config"]


@dataclass(frozen=True)
class Bounds:
    """How far the check lets a table's numbers go: the runner's own by default. A drop-in
    passes its peer's, wider ones, for numbers its peer's reader has already checked as the
    peer does (runner.dropin.contract.checked_config), so that it accepts what the peer does."""

    error_rate_below: float = 0.5
    """SPRT alpha and beta are each above 0 and below this."""
    adjudication_floor: bool = True
    """Draw and resign move counts, the resign score, maxmoves and tbpieces at least the
    runner's least meaningful values (False: any whole number the peer took)."""

    def least(self, runner_least: int) -> int | None:
        """The least value an adjudication number may take (None: any)."""
        return runner_least if self.adjudication_floor else None


RUNNER_BOUNDS = Bounds()

_TOP_KEYS = ("name", "format", "engines_file", "engines", "rounds", "games", "tc", "openings",
             "adjudication", "concurrency", "variant", "sprt", "pgnout", "database", "recover",
             "affinity", "cluster", "maxmoves")
_CLUSTER_KEYS = ("workers", "address")
_OPENINGS_KEYS = ("file", "format", "order", "seed", "plies", "start")
_ADJ_KEYS = ("draw", "resign", "maxmoves", "tb", "tablebases", "tbpieces", "tbignore50",
             "tbadjudicate")
_DRAW_KEYS = ("movenumber", "movecount", "score")
_RESIGN_KEYS = ("movecount", "score", "twosided")
_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model", "maxgames")


def load_config(path: str | Path) -> TournamentConfig:
    """Read, check and resolve a tournament file; raises ConfigError listing every problem."""
    return load_file(path, parse_config)


def parse_config(data: Mapping[str, Any], *, source: str = "<config>",
                 base_dir: Path | None = None, bounds: Bounds = RUNNER_BOUNDS,
                 programs: ProgramLookup = ProgramLookup.AT_LOAD) -> TournamentConfig:
    """Check a parsed tournament table (from TOML, built by the CLI or by a drop-in) and
    resolve it.

    Relative input paths are taken from `base_dir` (default: the working directory); the
    numbers are held to `bounds` (default: the runner's own); `programs` says whether an
    engine's missing program is refused here or left for the game that starts it.
    """
    base = base_dir if base_dir is not None else Path.cwd()
    problems: list[ConfigProblem] = []
    check = Checker(source, problems, ENUM_ALIASES)
    check.keys(data, "", _TOP_KEYS)

    name = check.get(data, "name", "", str, "tournament")
    fmt = check.choice(data, "format", "", TournamentFormat, TournamentFormat.GAUNTLET)
    engines = read_engines(data, base, check, programs)
    rounds = check.integer(data, "rounds", "", 1, 1)
    games = check.integer(data, "games", "", 2, 2)
    if games is not None and games % 2:
        check.add("games", games, "must be even: every opening is played as a pair of games "
                  "with colors swapped")
    tc = time_control(data.get("tc", MISSING), "tc", check)
    concurrency = check.integer(data, "concurrency", "", 1, 1)
    variant = check.choice(data, "variant", "", Variant, Variant.STANDARD)
    openings = _openings(check.table(data, "openings", ""), base, check)
    adjudication_table = check.table(data, "adjudication", "")
    adjudication = _adjudication(adjudication_table, base, check, bounds)
    adjudication = _top_maxmoves(data, adjudication_table, adjudication, check)
    sprt = _sprt(check.table(data, "sprt", ""), check, bounds)
    pgnout = check.get(data, "pgnout", "", str)
    if pgnout is not None:
        problem = ("name is empty" if not pgnout.strip()
                   else unwritable(Path(pgnout), create_parents=False))
        if problem is not None:
            check.add("pgnout", pgnout, f"the PGN output file {problem}")
    database = check.get(data, "database", "", str)
    recover = check.get(data, "recover", "", bool, False)
    affinity = check.get(data, "affinity", "", bool, False)
    cluster = _cluster(check.table(data, "cluster", ""), check)

    _check_format(fmt, engines, sprt, check)
    if not name.strip():
        check.add("name", name, "a tournament needs a name (it tells tournaments apart in "
                  "'runner list' and in the PGN Event tag)")
    else:
        check.name("name", name, TOURNAMENT_NAME_LIMIT)
    _check_time_controls(data, tc, engines, check)
    if problems:
        raise ConfigError(problems)
    return TournamentConfig(
        name=name, format=fmt, engines=tuple(engines), tc=tc, rounds=rounds or 1,
        games=games or 2, openings=openings, adjudication=adjudication,
        concurrency=concurrency or 1, variant=variant, sprt=sprt,
        pgnout=None if pgnout is None else Path(pgnout), database=database, recover=recover,
        affinity=bool(affinity), cluster=cluster,
        source=source,
    )


_POLYGLOT_ENTRY = 16
"""Bytes per Polyglot book entry (runner.books.polyglot reads them; not imported here so
that reading a configuration stays cheap)."""


def _check_time_controls(data: Mapping[str, Any], tc: WrittenTimeControl | None, engines: list[EngineSpec],
                         check: Checker) -> None:
    """Every engine needs a time control with which a game ends: a clock that gives some
    time, a time per move, a depth or a node limit (``inf`` alone would never end)."""
    top_problem = None if tc is None else unfinishable(tc)
    top_used = False
    for index, engine in enumerate(engines):
        if engine.tc is not None:
            problem = unfinishable(engine.tc)
            if problem is not None:
                check.add(f"engines[{index}].tc", engine.tc, problem)
        elif "tc" not in data:
            check.add(f"engines[{index}].tc", MISSING,
                      f"engine {engine.name!r} has no time control: set tc at the top "
                      "level or for this engine (on the command line: --each tc=10+0.1, or "
                      "st=, depth=, nodes=)")
        else:
            top_used = True
    if top_used and top_problem is not None:
        check.add("tc", tc, top_problem)


def _check_format(fmt: TournamentFormat, engines: list[EngineSpec],
                  sprt: SprtConfig | None, check: Checker) -> None:
    """Engine counts that the format (and an SPRT) need; unique engine names."""
    count = len(engines)
    names = [engine.name for engine in engines]
    if fmt is TournamentFormat.MATCH and count != 2:
        more = ("; for more, play a gauntlet or a round-robin ('runner gauntlet', 'runner "
                "roundrobin', or format = \"gauntlet\" / \"round-robin\" in a file)"
                if count > 2 else "")
        check.add("engines", names, f"a match needs exactly 2 engines{more}")
    elif count < 2:
        check.add("engines", names, f"a {fmt.value} needs at least 2 engines")
    if sprt is not None and count != 2:
        check.add("sprt", names, "an SPRT compares exactly 2 engines")
    seen: set[str] = set()
    for index, engine in enumerate(engines):
        if engine.name in seen:
            check.add(f"engines[{index}].name", engine.name, "engine names must be unique")
        seen.add(engine.name)


def _openings(table: Mapping[str, Any] | None, base: Path,
              check: Checker) -> OpeningsConfig | None:
    """The openings section: a readable book file and how to walk it."""
    if table is None:
        return None
    path = "openings"
    check.keys(table, path, _OPENINGS_KEYS)
    file_text = check.get(table, "file", path, str, required=True)
    fmt = check.choice(table, "format", path, BookFormat, None)
    order = check.choice(table, "order", path, OpeningOrder, OpeningOrder.SEQUENTIAL)
    seed = check.integer(table, "seed", path, 0, 0)
    plies = check.integer(table, "plies", path, None, 0)
    start = check.integer(table, "start", path, 1, 1)
    if file_text is None:
        return None
    book = (base / file_text).resolve()
    problem = _unreadable(book)
    if problem is not None:
        check.add("openings.file", file_text, f"{problem} ({book})")
        return None
    if fmt is None:
        fmt = BOOK_SUFFIXES.get(book.suffix.lower())
        if fmt is None:
            check.add("openings.file", file_text,
                      "cannot tell the book format from the extension: set openings.format")
            return None
    if fmt is BookFormat.POLYGLOT and book.stat().st_size % _POLYGLOT_ENTRY:
        check.add("openings.file", file_text,
                  f"not a Polyglot book: {book.stat().st_size} bytes is not a whole number of "
                  f"{_POLYGLOT_ENTRY}-byte entries ({book})")
        return None
    return OpeningsConfig(file=book, format=fmt, order=order, seed=seed or 0, plies=plies,
                          start=start or 1)


def _unreadable(path: Path) -> str | None:
    """Why a file cannot be used as an openings book, or None when it can."""
    if not path.exists():
        return "openings file not found"
    if not path.is_file():
        return "openings file is not a regular file"
    try:
        with path.open("rb") as handle:
            first = handle.read(1)
    except OSError as exc:
        return f"openings file cannot be read: {exc.strerror}"
    if not first:
        return "openings file is empty"
    return None


def _top_maxmoves(data: Mapping[str, Any], table: Mapping[str, Any] | None,
                  adjudication: AdjudicationConfig, check: Checker) -> AdjudicationConfig:
    """`adjudication` with a top-level ``maxmoves``: the command line's ``--maxmoves`` is
    top-level, so a file takes the key there as well as under [adjudication] (once, or twice
    with the same value)."""
    maxmoves = check.integer(data, "maxmoves", "", None, 1)
    if maxmoves is None:
        return adjudication
    if table is not None and "maxmoves" in table:
        if table["maxmoves"] != maxmoves:
            check.add("maxmoves", maxmoves, f"disagrees with adjudication.maxmoves = "
                      f"{table['maxmoves']!r}: give it in one place")
        return adjudication
    return replace(adjudication, maxmoves=maxmoves)


def _whole(check: Checker, table: Mapping[str, Any], key: str, path: str, default: int,
           minimum: int | None) -> int:
    """A whole number of an adjudication rule, `default` when absent or refused."""
    value = check.integer(table, key, path, default, minimum)
    return default if value is None else value


def _adjudication(table: Mapping[str, Any] | None, base: Path,
                  check: Checker, bounds: Bounds) -> AdjudicationConfig:
    """The adjudication section (every rule off when absent)."""
    if table is None:
        return AdjudicationConfig()
    path = "adjudication"
    check.keys(table, path, _ADJ_KEYS)
    draw = resign = None
    draw_table = check.table(table, "draw", path)
    if draw_table is not None:
        where = "adjudication.draw"
        check.keys(draw_table, where, _DRAW_KEYS)
        default = DrawAdjudication()
        draw = DrawAdjudication(
            movenumber=_whole(check, draw_table, "movenumber", where, default.movenumber,
                              bounds.least(0)),
            movecount=_whole(check, draw_table, "movecount", where, default.movecount,
                             bounds.least(1)),
            score=_whole(check, draw_table, "score", where, default.score, 0),
        )
    resign_table = check.table(table, "resign", path)
    if resign_table is not None:
        where = "adjudication.resign"
        check.keys(resign_table, where, _RESIGN_KEYS)
        default_r = ResignAdjudication()
        resign = ResignAdjudication(
            movecount=_whole(check, resign_table, "movecount", where, default_r.movecount,
                             bounds.least(1)),
            score=_whole(check, resign_table, "score", where, default_r.score,
                         bounds.least(1)),
            twosided=check.get(resign_table, "twosided", where, bool, default_r.twosided),
        )
    maxmoves = check.integer(table, "maxmoves", path, None, bounds.least(1))
    tb = check.get(table, "tb", path, str, "none")
    if tb != "none":
        check.add("adjudication.tb", tb, "name the Syzygy directories in adjudication.tablebases "
                  "= [\"DIR\", ...]; tb may only say \"none\"")
        tb = "none"
    tablebases = _tablebases(table, base, check)
    tbpieces = check.integer(table, "tbpieces", path, None, bounds.least(3))
    tbignore50 = check.get(table, "tbignore50", path, bool, False)
    tbadjudicate = check.choice(table, "tbadjudicate", path, TablebaseResults,
                                TablebaseResults.BOTH)
    return AdjudicationConfig(draw=draw, resign=resign, maxmoves=maxmoves, tb=tb,
                              tablebases=tablebases, tbpieces=tbpieces,
                              tbignore50=bool(tbignore50), tbadjudicate=tbadjudicate)


def _tablebases(table: Mapping[str, Any], base: Path, check: Checker) -> tuple[Path, ...]:
    """The Syzygy directories: a list, or one string of ':'-separated paths as cutechess-cli's
    -tb takes them; each an existing directory (relative to the file), with some table in
    one of them."""
    key = "adjudication.tablebases"
    value = check.get(table, "tablebases", "adjudication", (list, str), [])
    items = value.split(":") if isinstance(value, str) else value
    found: list[Path] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            check.add(key, item, "expected a directory name")
            continue
        folder = (base / item).resolve()
        if not folder.is_dir():
            check.add(key, item, f"no such directory ({folder})")
            continue
        found.append(folder)
    if found and not any(any(p.suffix == ".rtbw" for p in f.iterdir()) for f in found):
        check.add(key, value, "no Syzygy WDL table (.rtbw) in these directories")
    return tuple(found)


def _cluster(table: Mapping[str, Any] | None, check: Checker) -> ClusterConfig | None:
    """The cluster section: a number of local Dask workers, or a Dask scheduler's address."""
    if table is None:
        return None
    check.keys(table, "cluster", _CLUSTER_KEYS)
    workers = check.integer(table, "workers", "cluster", None, 1)
    address = check.get(table, "address", "cluster", str)
    if address is not None and "://" not in address and address.count(":") != 1:
        check.add("cluster.address", address,
                  "expected a Dask scheduler address such as tcp://HOST:8786")
        address = None
    if workers is not None and address is not None:
        check.add("cluster", dict(table), "give workers (a local cluster) or address "
                  "(a running Dask scheduler), not both")
        return None
    if workers is None and address is None:
        return None
    return ClusterConfig(workers=workers, address=address)


def _sprt(table: Mapping[str, Any] | None, check: Checker, bounds: Bounds,
          ) -> SprtConfig | None:
    """The SPRT section: bounds, error rates, model, optional game limit."""
    if table is None:
        return None
    path = "sprt"
    check.keys(table, path, _SPRT_KEYS)
    elo0 = check.number(table, "elo0", path, None)
    elo1 = check.number(table, "elo1", path, None)
    for key, value in (("elo0", elo0), ("elo1", elo1)):
        if value is None and key not in table:
            check.add(f"sprt.{key}", MISSING, "missing required key")
    alpha = check.number(table, "alpha", path, 0.05)
    beta = check.number(table, "beta", path, 0.05)
    for key, rate in (("alpha", alpha), ("beta", beta)):
        if rate is not None and not 0.0 < rate < bounds.error_rate_below:
            check.add(f"sprt.{key}", rate, f"must be between 0 and {bounds.error_rate_below:g}")
    model = check.choice(table, "model", path, EloModel, EloModel.NORMALIZED)
    maxgames = check.integer(table, "maxgames", path, None, 2)
    if elo0 is not None and elo1 is not None and not elo0 < elo1:
        check.add("sprt.elo1", elo1, f"must be greater than elo0 ({elo0:g})")
    if elo0 is None or elo1 is None:
        return None  # the problems recorded above are raised by the caller's check
    return SprtConfig(elo0=elo0, elo1=elo1, alpha=alpha or 0.05, beta=beta or 0.05,
                      model=model, maxgames=maxgames)
