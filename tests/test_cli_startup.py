"""What a ``runner`` command imports before it does its work (issue 17: start-up cost).

`runner stats` and `runner list` must start fast (under 0.3 s on an idle machine): the
cutechess vocabulary (and the config model, statistics and rules behind it) is imported when a
game command reads its words or renders its help, and `typer.rich_utils` (rich.markdown,
pygments) only when help is rendered. Help, the version and the dispatch of a game command
load no pydantic (Typer 0.29 built a pydantic validator for every ``--help`` flag left out,
see `runner.cli.group`); the list of commands, ``list --help`` and ``export --help`` load no
database code either (issue 27: the commands that play are loaded on use, with the
tournament code their module imports at its top). Issue 30 (under 0.15 s): typed options
are read without pydantic, help is rendered without rich.markdown and pygments, and a second
``runner list`` of a SQLite file runs without SQLAlchemy (runner.store.quick); the drop-in
entry points answer their help and version before any run code. This round: no version
answer reads importlib.metadata, ``runner --version`` and ``runner fastchess|cutechess ...``
are answered before Typer and rich are imported, and start-up runs with the cyclic collector
paused (restarted before any game). Modules are checked, never times (benchmarks/startup.py
measures them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = (
    "import atexit, os, sys\n"
    "def _report():\n"
    "    names = os.environ['PROBE_WATCH'].split(',')\n"
    "    print('LOADED', *[n for n in names if n in sys.modules], file=sys.stderr)\n"
    "atexit.register(_report)\n"
    "sys.argv = ['runner', *sys.argv[1:]]\n"
    "from runner.cli import main\n"  # the console script's entry point
    "main()\n"
)
ROOT = Path(__file__).resolve().parent.parent
CHEAP = ("runner.cli.vocabulary", "runner.config.model", "typer.rich_utils")
"""Modules `runner stats` leaves alone."""
HEAVY = ("pydantic", "sqlalchemy", "alembic", "asyncio")
"""Modules no help text, version or game-command dispatch needs."""


def _run(*args: str, watch: tuple[str, ...] = CHEAP,
         cwd: Path = ROOT) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """The watched modules loaded by one ``runner`` command in a fresh interpreter, and the
    finished process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_WATCH": ",".join(watch),
           "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=cwd)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED")][-1]
    return line.split()[1:], done


def _loaded(*args: str) -> list[str]:
    """The modules of `CHEAP` one ``runner`` command loads."""
    return _run(*args)[0]


def test_stats_imports_no_vocabulary_and_no_help_renderer() -> None:
    assert _loaded("stats", "--wdl", "10", "5", "3") == []


def test_match_help_still_loads_the_vocabulary_it_shows() -> None:
    assert _loaded("match", "--help") == [
        "runner.cli.vocabulary", "runner.config.model", "typer.rich_utils"]


@pytest.mark.parametrize("args", [("--help",), ("list", "--help"), ("export", "--help")])
def test_help_loads_no_database_code_and_no_pydantic(args: tuple[str, ...]) -> None:
    loaded, done = _run(*args, watch=HEAVY)
    assert done.returncode == 0, done.stderr
    assert "Show this message and exit." in done.stdout
    assert loaded == []


RUN_CODE = ("sqlalchemy", "pydantic", "alembic", "asyncio", "runner.app", "runner.store",
            "runner.tournament", "runner.game", "runner.report", "runner.cluster", "runner.rules")
"""What playing, storing and reporting load, and no command's --help needs."""


@pytest.mark.parametrize("args", [("run", "--help"), ("report", "--help"), ("resume", "--help"),
                                  ("match", "--help"), ("gauntlet", "--help"),
                                  ("roundrobin", "--help"), ("play", "--help"),
                                  ("engine", "check", "--help"), ("worker", "check", "--help")])
def test_a_command_s_help_loads_none_of_the_run_s_code(args: tuple[str, ...]) -> None:
    """Issue 39: ``runner run --help`` took 5.2 s and ``runner report --help`` 7.2 s at load
    11, against 0.26-0.67 s for the light commands: they imported the whole run."""
    loaded, done = _run(*args, watch=RUN_CODE)
    assert done.returncode == 0, done.stderr
    assert "Show this message and exit." in done.stdout
    assert loaded == []


def test_a_game_command_s_help_loads_its_module_but_no_pydantic() -> None:
    # The commands that play are loaded on use with the tournament code their module imports
    # at its top (runner.cli.group.LazyGroup): their own --help pays for that, never another
    # command or the list of commands.
    loaded, done = _run("match", "--help", watch=HEAVY)
    assert done.returncode == 0, done.stderr
    assert "Show this message and exit." in done.stdout
    assert "pydantic" not in loaded


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("list", "--help"),
                                  ("stats", "--wdl", "1", "2", "3")])
def test_commands_that_play_nothing_start_without_rules_protocol_or_games(
        args: tuple[str, ...]) -> None:
    loaded, done = _run(*args, watch=("runner.rules", "runner.protocol", "runner.game.record",
                                      "runner.game.play",
                                      "runner.pgn", "runner.config", "runner.store"))
    assert done.returncode == 0, done.stderr
    assert loaded == []


def test_version_works_loads_nothing_heavy_and_is_in_the_help() -> None:
    loaded, done = _run("--version", watch=(*HEAVY, "typer.rich_utils"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("runner (cecp-runner) ") and done.stdout.count("\n") == 2
    assert done.stdout.splitlines()[1].startswith("compiled: ")
    assert loaded == []
    helped = _run("--help")[1]
    row = [line for line in helped.stdout.splitlines() if "--version" in line]
    assert len(row) == 1 and "Print the version and exit." in row[0]


def test_a_game_command_reads_its_words_without_pydantic() -> None:
    # match takes no typed option: reading its words (here refused: one engine) goes through
    # Typer's dispatch and the vocabulary, neither of which needs pydantic (the error message
    # loads SQLAlchemy, which hides database passwords in it).
    loaded, done = _run("match", "--engine", "cmd=fairymax", "--each", "tc=inf", "depth=1",
                        watch=("pydantic", "runner.cli.vocabulary"))
    assert done.returncode == 2 and "exactly 2 engines" in done.stderr, done.stderr
    assert loaded == ["runner.cli.vocabulary"]


def test_export_offers_exactly_the_stored_results_and_terminations() -> None:
    # runner export is loaded only when it runs (runner.cli.group.LazyGroup): it offers the
    # enums themselves, no copy of them.
    import typing

    from runner.cli.export import export_command
    from runner.game.record import GameTermination
    from runner.rules import Result

    hints = typing.get_type_hints(export_command)
    assert hints["result"] == Result | None
    assert hints["termination"] == GameTermination | None


def test_the_lazy_listing_says_what_each_command_says_of_itself() -> None:
    """``runner --help`` lists the commands loaded on use by the help lines the group keeps;
    each must stay the first paragraph of the command's own help."""
    from runner.cli.app import LAZY
    from runner.cli.group import LazyCommand

    for entry in LAZY:
        real = LazyCommand(entry).load()
        own = " ".join((real.help or "").split("\n\n")[0].split())
        assert entry.help == own, entry.name


def test_list_reads_the_store_without_alembic_rules_protocol_or_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stored_tournament(tmp_path)  # created and migrated here
    watch = ("alembic", "runner.rules", "runner.protocol", "runner.game.record",
             "runner.game.play", "runner.pgn", "runner.config", "runner.store.recording",
             "rich.progress", "pydantic", "sqlalchemy", "sqlalchemy.orm")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # inherited by _run
    first, done = _run("list", "--db", str(tmp_path / "r.db"), watch=watch)
    assert done.returncode == 0, done.stderr
    assert "listed" in done.stdout and "0/2" in done.stdout
    # The store is SQLAlchemy's; nothing else of that list. It compiled the statements of
    # the list for the next time (runner.store.quick, issue 30).
    assert first == ["sqlalchemy", "sqlalchemy.orm"]
    assert (tmp_path / "cache" / "cecp-runner" / "list-reads.json").is_file()
    again, repeated = _run("list", "--db", str(tmp_path / "r.db"), watch=watch)
    assert repeated.returncode == 0, repeated.stderr
    assert repeated.stdout == done.stdout
    assert again == []  # no SQLAlchemy, no pydantic: sqlite3 ran the cached statements


def test_a_quiet_match_plays_without_pydantic_or_help_and_live_view_modules(
        tmp_path: Path) -> None:
    # What every benchmarked `runner match ... --quiet` pays for at start-up: the stored
    # configuration is written without pydantic, and no help renderer or live view is loaded.
    loaded, done = _run(
        "match", "--engine", "cmd=python", "arg=-m", "arg=engine", "name=a",
        "--engine", "cmd=python", "arg=-m", "arg=engine", "name=b", "--each", "tc=inf",
        "depth=1", "--maxmoves", "3", "--db", str(tmp_path / "r.db"), "--pgnout",
        str(tmp_path / "g.pgn"), "--quiet",
        watch=("pydantic", "typer", "typer.rich_utils", "rich", "rich.console", "rich.progress",
               "rich.live", "runner.store", "runner.books.openings", "runner.pgn.reader",
               "tomllib", "runner.stats.standing"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "g.pgn").read_text().count("[Event ") == 2
    # Issue 38: its words are read before Typer (runner.cli.play_words), its plain lines to a
    # pipe are written without rich (runner.cli.streams), and a run from the start position
    # reads no book and no TOML file; and two engines need no ranking (runner.stats.standing).
    assert loaded == ["runner.store"]
    assert "Tournament 1 finished: 2 of 2 games stored" in done.stderr


@pytest.mark.parametrize("words", [
    [], ["--engine", "cmd=x", "name=a", "--each", "tc=1+0.01", "--quiet"],
    ["-engine", "--engine=x", "name=--x", "-", "-abc", "-h", "--hel", "--helpx", "x", "--db"],
    ["--concurrency", "2", "--version", "-v", "--events", "-", "--rounds=3"]])
def test_typer_hands_the_words_the_early_reading_takes_over_unchanged(
        words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 38: runner.cli.main runs match, gauntlet and roundrobin without Typer unless a
    # word is one click reads itself (typer_reads); every other word list must reach the
    # command through Typer exactly as given, so both ways read the same words.
    from typer.testing import CliRunner

    from runner.cli import tournament, typer_reads
    from runner.cli.app import app

    assert not typer_reads(words)
    assert typer_reads([*words, "--help"]) and typer_reads(["--", *words])
    seen: list[tuple[list[str], str]] = []

    def cli_run(args: list[str], command: str) -> None:
        seen.append((args, command))

    monkeypatch.setattr(tournament, "cli_run", cli_run)
    for command in ("match", "gauntlet", "roundrobin"):
        done = CliRunner().invoke(app, [command, *words])
        assert done.exit_code == 0, done.output
    assert seen == [(words, c) for c in ("match", "gauntlet", "roundrobin")]


@pytest.mark.parametrize("words", [("--bogus",), ("--engine", "cmd=x"), ("--help=x",)])
def test_a_refused_match_says_the_same_with_or_without_typer(words: tuple[str, ...]) -> None:
    # The early reading (runner.cli.play_words) exits as the Typer command did: same words on
    # stderr, same status; ``--help=x`` is still Typer's to refuse.
    from typer.testing import CliRunner

    from runner.cli.app import app

    loaded, done = _run("match", *words, watch=("typer",))
    assert loaded == (["typer"] if "--help=x" in words else [])
    through_typer = CliRunner().invoke(app, ["match", *words])
    assert done.returncode == through_typer.exit_code == 2
    said = " ".join(x for x in done.stderr.splitlines() if not x.startswith("LOADED")).split()
    if "--help=x" in words:  # Typer's own box, as wide as the terminal it is told of
        assert "Option '--help' does not take a value." in " ".join(said)
        assert "Option '--help' does not take a value." in through_typer.output
    else:
        assert said == through_typer.output.split()


_RUN_SURE = [
    ["t.toml"],
    ["t.toml", "--db", "x.db", "--concurrency", "3", "-q", "--force", "--new", "--workers", "0",
     "--cluster", "tcp://h:1", "--events", "e.jsonl", "--events-moves"],
    ["--quiet", "--db=x", "t.toml", "--concurrency=007", "--db", "y", "--workers=2"],
]
"""``runner run`` words the early reading (runner.cli.run_words) takes over from Typer."""
_RUN_UNSURE = [
    [], ["--help"], ["t.toml", "--help"], ["--", "t.toml"], ["a", "b"], ["t.toml", "--bogus"],
    ["t.toml", "--quiet=1"], ["t.toml", "--db"], ["t.toml", "--db", "--quiet"],
    ["t.toml", "--events", "-"], ["t.toml", "--concurrency", "0"],
    ["t.toml", "--concurrency", "+3"], ["t.toml", "--concurrency", "\u0663"],
    ["t.toml", "--workers", "-1"], ["t.toml", "--db="], ["-"], [""], ["t.toml", "-qq"],
]
"""Words it leaves to Typer (which says what is wrong, or reads them as before)."""


@pytest.mark.parametrize("words", _RUN_SURE)
def test_run_s_early_reading_passes_what_typer_passes(words: list[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 38: `runner run FILE ...` runs without Typer when every word is one the early
    # reading is sure of; the run then gets exactly the arguments Typer's command gives it.
    from typer.testing import CliRunner

    from runner.cli import run_file_words, run_words, tournament
    from runner.cli.app import app

    seen: list[tuple[tuple[object, ...], dict[str, object]]] = []

    def run_file(*args: object, **kwargs: object) -> None:
        seen.append((args, kwargs))
        raise SystemExit(0)

    monkeypatch.setattr(tournament, "run_file", run_file)
    done = CliRunner().invoke(app, ["run", *words])
    assert done.exit_code == 0, done.output
    found = run_words(words)
    assert found is not None
    with pytest.raises(SystemExit) as exited:
        run_file_words(found)
    assert exited.value.code == 0
    assert len(seen) == 2 and seen[0] == seen[1]


@pytest.mark.parametrize("words", _RUN_UNSURE)
def test_run_s_early_reading_leaves_other_words_to_typer(words: list[str]) -> None:
    from runner.cli import run_words

    assert run_words(words) is None


def test_a_quiet_run_of_a_file_plays_without_typer_or_pydantic(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('name = "t"\nformat = "match"\nrounds = 1\ngames = 2\ntc = "depth=1"\n'
                      '[adjudication]\nmaxmoves = 3\n'
                      + "".join(f'[[engines]]\nname = "{n}"\ncommand = ["{sys.executable}", '
                                f'"-m", "engine", "--level", "random"]\nprotocol = "cecp"\n'
                                f'dir = "{ROOT}"\n'
                                for n in "ab"))
    loaded, done = _run("run", str(config), "--db", str(tmp_path / "r.db"), "--quiet",
                        watch=("typer", "pydantic", "rich"))
    assert done.returncode == 0, done.stderr
    assert loaded == []
    assert "Tournament 1 finished: 2 of 2 games stored" in done.stderr
    again = _run("run", str(config), "--db", str(tmp_path / "r.db"), "--quiet",
                 watch=("typer",))[1]
    assert again.returncode == 0 and "is already finished" in again.stderr


_BUNDLED_MATCH = ("match", "--engine", "cmd=python", "arg=-m", "arg=engine", "name=a",
                  "--engine", "cmd=python", "arg=-m", "arg=engine", "name=b", "--each",
                  "tc=inf", "depth=1", "--quiet")
"""A match of the bundled engine against itself (its length and database added)."""


@pytest.fixture(scope="module")
def compiled_statements(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory holding the store's statements compiled for SQLite, as the first run
    of an install leaves it (that run loads SQLAlchemy once to compile them; done here in the
    test's own process, which has it loaded already)."""
    from runner.store.store import Store

    where = tmp_path_factory.mktemp("statements")
    cache = where / "cache" / "cecp-runner" / "writer-statements.json"
    with Store.open(f"sqlite:///{where / 'w.db'}") as store:
        assert store.statements(cache) is not None
    assert cache.is_file()
    return where / "cache"


def test_a_sqlite_match_runs_without_sqlalchemy(tmp_path: Path, compiled_statements: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 38: a run on a new SQLite file opens it,
    # creates its schema from the stored script, prepares, leases, stores and closes by
    # sqlite3, SQLAlchemy never imported.
    import sqlite3

    monkeypatch.setenv("XDG_CACHE_HOME", str(compiled_statements))  # inherited by _run
    watch = ("sqlalchemy", "alembic", "runner.store.db", "runner.store.models")
    loaded, done = _run(*_BUNDLED_MATCH, "--maxmoves", "3", "--db", str(tmp_path / "r.db"),
                        "--pgnout", str(tmp_path / "g.pgn"), watch=watch)
    assert done.returncode == 0, done.stderr
    assert loaded == []
    with sqlite3.connect(tmp_path / "r.db") as db:
        assert db.execute("SELECT tournament_id, status, count(*) FROM games "
                          "GROUP BY tournament_id").fetchall() == [(1, "done", 2)]
        assert db.execute("SELECT status FROM tournaments").fetchall() == [("finished",)]
        assert db.execute("SELECT count(*) FROM leases").fetchone() == (0,)
    assert (tmp_path / "g.pgn").read_text().count("[Event ") == 2


def test_a_sqlite_match_killed_resumes_without_sqlalchemy(
        tmp_path: Path, compiled_statements: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 38: kill -9 in the middle of a SQLite run, then the same words again: the second
    # run continues the interrupted tournament (its games left running played again, its
    # stale lease taken over) by sqlite3 alone, and plays exactly the missing games.
    import signal
    import sqlite3
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(compiled_statements))
    words = [*_BUNDLED_MATCH, "--maxmoves", "8", "--rounds", "2", "--games", "2",
             "--db", str(tmp_path / "r.db")]
    watch = ("sqlalchemy", "alembic")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_WATCH": ",".join(watch)}
    proc = subprocess.Popen([sys.executable, "-c", PROBE, *words], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def played() -> int:
        try:
            with sqlite3.connect(tmp_path / "r.db") as db:
                return int(db.execute("SELECT count(*) FROM games WHERE status = 'done'")
                           .fetchone()[0])
        except sqlite3.Error:  # not created yet
            return 0

    try:
        deadline = time.monotonic() + 120
        while played() < 1 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    assert 1 <= played() < 4
    loaded, done = _run(*words, watch=watch)
    assert done.returncode == 0, done.stderr
    assert loaded == []
    with sqlite3.connect(tmp_path / "r.db") as db:
        assert db.execute("SELECT id, status FROM tournaments").fetchall() == [(1, "finished")]
        assert db.execute("SELECT status, count(*) FROM games GROUP BY status").fetchall() == [
            ("done", 4)]
        assert db.execute("SELECT count(*) FROM leases").fetchone() == (0,)


def test_a_run_s_modules_load_no_service_tables_and_no_rich_tables() -> None:
    # Issue 38: a run's start-up imports neither the service's store modules (tokens, tunes,
    # fleet, branch tests) nor rich's tables, nor a protocol's client before an engine speaks
    # it; the store's names still load when first used (the clients: every game test).
    probe = (
        "import sys\n"
        "import runner.cli.plays, runner.cli.tournament, runner.store.preparing\n"
        "import runner.store.writing\n"
        "from runner.store import store\n"
        "lazy = ['runner.store.tokens', 'runner.store.tunes', 'runner.store.fleet',\n"
        "        'runner.store.branches', 'rich.table', 'rich.panel',\n"
        "        'runner.protocol.cecp', 'runner.protocol.uci']\n"
        "print('BEFORE', *[n for n in lazy if n in sys.modules])\n"
        "from runner.store.store import PLACEMENTS, ROLES, BranchTests, Tunes\n"
        "print('AFTER', *[n for n in lazy if n in sys.modules], PLACEMENTS[0], ROLES[0],\n"
        "      BranchTests.__module__, store.Tunes is Tunes)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "BEFORE"
    assert after == ("AFTER runner.store.tokens runner.store.tunes runner.store.fleet "
                     "runner.store.branches host admin runner.store.branches True")


DEFERRED = {
    "export": {"runner.app.reading"},  # export --help loads no database code
    "listing": {"runner.app.reading"},  # list --help loads no database code
    "help": {"runner.cli.vocabulary",  # which imports this module at its top
             "typer",  # its rich_utils: rich.markdown and pygments, for rendered help only
             # Issue 38: rich's panels and tables (decimal, fractions), which a run does not
             # render.
             "rich.console", "rich.panel", "rich.table", "rich.text"},
    "serve": {"runner.service.server"},  # the service extra, with a message when missing
    # The live view (not for --quiet runs); the event lines' models (pydantic), for
    # --events only.
    "tournament": {"rich.progress", "rich.live", "runner.app.stream", "rich.table",
                   # Issue 38: rich itself, for styled lines and the live view only (a run's
                   # plain lines to a pipe are written without it, runner.cli.streams).
                   "rich.console", "rich.markup", "rich.text"},
    "streams": {"rich.console"},  # the console, built on first use (issue 38)
    "vocabulary": {"runner.app.stream"},
    # Issue 39: a command's --help loads none of the run's code (it took 5-7 s on a loaded
    # machine): the commands that play are declared in runner.cli.plays, the others import
    # their work in their bodies.
    "plays": {"runner.cli.tournament", "runner.cli.tune"},
    "report": {"runner.app.report", "runner.config.check", "runner.report.render",
               "runner.store.store"},
    "games": {"runner.app.play", "runner.cli.loop", "runner.cli.vocabulary", "runner.clock",
              "runner.config.check", "runner.config.model", "runner.game.record",
              "runner.game.slot", "runner.protocol.engine", "runner.protocol.factory",
              "runner.protocol.uci", "runner.rules", "runner.tournament.protocols",
              "runner.tournament.runtime", "runner.types"},
    # `test submit/status`: httpx (the fleet extra), with a message when it is missing.
    "branch": {"httpx"},
    # The cluster extra, with a message when it is missing; the run's code, as above.
    # `worker join`: the fleet's client (httpx, the fleet extra) and its signal handling.
    "worker": {"distributed", "runner.cluster.scheduler", "runner.cli.loop",
               "runner.cluster.worker", "runner.config.check", "runner.config.parse",
               "runner.tournament.runtime", "asyncio", "os", "runner.cli.errors",
               "runner.fleet.client", "signal"},
}
"""The imports left inside functions of the command modules the lazy group loads on use,
each for a reason a test above checks (issue 27: the others moved to the modules' tops)."""


def test_command_modules_loaded_on_use_import_at_their_top() -> None:
    import ast

    start_up = {"__init__", "app", "group", "errors", "dburl", "words"}
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "runner" / "cli").glob("*.py")):
        if path.stem in start_up:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and inner.module:
                        found.setdefault(path.stem, set()).add(inner.module)
                    elif isinstance(inner, ast.Import):
                        found.setdefault(path.stem, set()).update(a.name for a in inner.names)
    assert found == DEFERRED


@pytest.mark.parametrize("args", [("stats", "--wdl", "10", "5", "3"),
                                  ("stats", "--penta", "1", "2", "3", "4", "5", "--elo0", "-1",
                                   "--elo1", "2.5", "--alpha", "0.1", "--model", "logistic"),
                                  ("perft", "startpos", "1")])
def test_typed_options_are_read_without_pydantic(args: tuple[str, ...]) -> None:
    # Issue 30: Typer 0.29 built a pydantic TypeAdapter for each typed option (given or not),
    # a third of `runner stats`'s start-up; plain values are now read by runner.cli.group.
    loaded, done = _run(*args, watch=("pydantic",))
    assert done.returncode == 0, done.stderr
    assert loaded == []


def test_values_the_plain_reading_is_unsure_of_get_typer_s_own_reading_and_messages() -> None:
    # What runner.cli.group leaves to pydantic: other spellings (still accepted as before)
    # and wrong values (refused with pydantic's message, as before).
    loaded, done = _run("stats", "--wdl", "+10", " 5", "3", "--elo0", "-1e0", "--elo1", ".5",
                        "--json", watch=("pydantic",))
    assert done.returncode == 0, done.stderr
    assert loaded == ["pydantic"]
    assert '"games": 18' in done.stdout and '"llr": 0.0356' in done.stdout  # elo0 -1, elo1 0.5
    refused = _run("stats", "--wdl", "10", "5", "x")[1]
    assert refused.returncode == 2
    assert "unable to parse string as an integer" in refused.stderr
    ranged = _run("perft", "startpos", "--", "-1")[1]
    assert ranged.returncode == 2 and "greater than or equal to 0" in ranged.stderr


def test_the_plain_reading_agrees_with_pydantic_where_it_answers() -> None:
    from pydantic import TypeAdapter

    from runner.cli.group import _UNSURE, _plain

    for kind, values in ((int, ["0", "7", "-3", "007", "12345678901234567890", "1.5", "٣",
                                "", "-", "1_0", " 1", 4]),
                         (float, ["0", "2.5", "-0.25", "1.", ".5", "1e3", "inf", "nan", "-",
                                  "", 3, 0.5]),
                         (str, ["x", "", "--"])):
        for value in values:
            mine = _plain(kind, value)
            if mine is not _UNSURE:
                theirs = TypeAdapter(kind).validate_python(value)
                assert (mine, type(mine)) == (theirs, type(theirs)), (kind, value)
    assert _plain(tuple[int, int], ("1", "2")) == (1, 2)
    assert _plain(tuple[int, int], ("1",)) is _UNSURE
    assert _plain(int, True) is _UNSURE


def _stored_tournament(tmp_path: Path) -> Path:
    """A SQLite file holding one tournament (of no game yet) named ``listed``."""
    from runner.store import EngineRowValues, create_tournament, open_database

    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        with database.session() as session:
            create_tournament(session, name="listed", config={}, fingerprint="fp",
                              engines=[EngineRowValues(n, ["x"]) for n in ("a", "b")],
                              total_games=2)
    finally:
        database.close()
    return tmp_path / "r.db"


def test_path_and_enum_options_are_read_without_pydantic(tmp_path: Path) -> None:
    # Issue 38: Typer 0.29 built a pydantic validator for every Path or enum option, given or
    # left out: `runner export` paid for pydantic for its --out, --result and --format.
    db = str(_stored_tournament(tmp_path))
    watch = ("pydantic", "typer._adapters")
    loaded, done = _run("export", "--db", db, "--result", "1-0", "--termination", "checkmate",
                        "--format", "pgn", "-o", str(tmp_path / "out.pgn"), watch=watch)
    assert done.returncode == 0, done.stderr
    assert loaded == [] and (tmp_path / "out.pgn").is_file()


def test_a_text_report_builds_no_json_tree(tmp_path: Path) -> None:
    # Issue 38: the report's JSON tree is pydantic models (runner.report.tree, .wire), built
    # only for --format json; the text and HTML pages format their figures without them.
    db = str(_stored_tournament(tmp_path))
    watch = ("runner.report.render", "runner.report.tree", "runner.report.wire")
    loaded, done = _run("report", "--db", db, watch=watch)
    assert done.returncode == 0, done.stderr
    assert "listed" in done.stdout
    assert loaded == ["runner.report.render"]
    as_json = _run("report", "--db", db, "--format", "json", watch=watch)
    assert as_json[1].returncode == 0 and as_json[0] == list(watch)


def test_path_and_enum_values_typer_refuses_get_its_own_message(tmp_path: Path) -> None:
    # What runner.cli.group leaves to Typer's own coercion: a value no member has, an empty
    # path, a path the option's checks refuse (a directory for a file): its messages as before.
    db = str(_stored_tournament(tmp_path))
    refused = _run("export", "--db", db, "--result", "2-0")[1]
    assert refused.returncode == 2
    assert "'2-0' is not one of '1-0', '0-1', '1/2-1/2', '*'." in refused.stderr
    empty = _run("export", "--db", db, "-o", "", watch=("pydantic",))
    assert empty[0] == ["pydantic"]  # pydantic reads "" as Path("."), as before
    assert empty[1].returncode == 2 and "--out .: the file is a directory" in empty[1].stderr


def test_the_typer_reading_of_paths_and_enums_agrees_with_typer_s_own() -> None:
    import typer
    from typer._coercion import build_runtime_param

    from runner.cli.export import export_command
    from runner.cli.group import _UNSURE, _typer_own
    from runner.rules import Result

    app = typer.Typer()
    app.command()(export_command)
    command = typer.main.get_command(app)
    params = {p.name: p for p in command.params}
    cases = [("result", [Result.WHITE_WINS, "1-0", "1/2-1/2", "*", "2-0", "", "1-0 "]),
             ("termination", ["checkmate", "time forfeit", "Checkmate", "x"]),
             ("out", ["out.pgn", "a//b/", ".", "/", "-"])]
    for name, values in cases:
        param = params[name]
        descriptor = param.type_descriptor
        for value in values:
            mine = _typer_own(descriptor.annotation, descriptor.parameter_info, value, param,
                              None)
            if mine is not _UNSURE:
                theirs = build_runtime_param(descriptor)._coerce_value(value, param, None)
                assert (mine, type(mine)) == (theirs, type(theirs)), (name, value)
    assert _typer_own(Result, params["result"].type_descriptor.parameter_info, "2-0",
                      params["result"], None) is _UNSURE


@pytest.mark.parametrize("args", [("--help",), ("list", "--help"), ("stats", "--help")])
def test_help_is_rendered_without_markdown_or_pygments(args: tuple[str, ...]) -> None:
    # Issue 30: typer.rich_utils imports rich.markdown (markdown_it) and rich.traceback
    # (pygments) at its top, a fifth of `runner --help`; runner.cli.group.help_renderer
    # defers both to their first use, which rich help written in rich markup never makes.
    loaded, done = _run(*args, watch=("typer.rich_utils", "rich.markdown", "markdown_it",
                                      "rich.traceback", "rich.syntax", "pygments"))
    assert done.returncode == 0, done.stderr
    assert "Show this message and exit." in done.stdout and "╭─ Options" in done.stdout
    assert loaded == ["typer.rich_utils"]


def test_the_deferred_help_modules_are_the_real_ones_when_used() -> None:
    script = (
        "import sys\n"
        "from runner.cli.group import help_renderer\n"
        "help_renderer()\n"
        "assert 'rich.markdown' not in sys.modules and 'rich.traceback' not in sys.modules\n"
        "from typer import rich_utils\n"
        "text = rich_utils._make_rich_text(text='*x*', style='', markup_mode='markdown')\n"
        "import rich.markdown, rich.traceback\n"
        "assert isinstance(text, rich.markdown.Markdown), type(text)\n"
        "assert rich.markdown.__file__ and rich.traceback.Traceback.__module__ == 'rich.traceback'\n"
        "try:\n"
        "    raise ValueError('boom')\n"
        "except ValueError as exc:\n"
        "    shown = rich_utils.Traceback.from_exception(type(exc), exc, exc.__traceback__)\n"
        "assert isinstance(shown, rich.traceback.Traceback)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


DROP_IN_HEAVY = ("pydantic", "sqlalchemy", "alembic", "asyncio", "runner.store", "runner.app",
                 "runner.tournament", "runner.config.model", "runner.rules", "runner.protocol")
"""What a drop-in entry point's help or version must not import (issue 30: under 0.15 s)."""


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
@pytest.mark.parametrize("flag", ["--help", "-help", "-version"])
def test_a_drop_in_entry_point_answers_its_help_and_version_without_heavy_imports(
        peer: str, flag: str) -> None:
    # The drop-in commands (issue 28) pass their words through untouched: what they answer
    # at once (help, version) must come before the application, the store and the config.
    from runner.cli.app import LAZY

    if peer not in {entry.name for entry in LAZY}:
        pytest.skip(f"no 'runner {peer}' command in this tree yet")
    loaded, done = _run(peer, flag, watch=DROP_IN_HEAVY)
    assert done.returncode in (0, 1, 2), done.stderr
    assert done.stdout or done.stderr
    assert loaded == []


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_every_version_answer_reads_no_installed_metadata(peer: str) -> None:
    # Issue 30: importlib.metadata (zipfile, email, csv) was a fifth of what a version cost,
    # asked for a number the package holds itself.
    watch = ("importlib.metadata", "zipfile", "email")
    loaded, done = _run("--version", watch=watch)
    assert done.returncode == 0 and done.stdout.startswith("runner (cecp-runner) 0."), done
    assert loaded == []
    loaded, done = _run(peer, "--version", watch=watch)
    assert done.returncode == 0 and f"(cecp-runner {_own_version()})" in done.stdout, done
    assert loaded == []


def _own_version() -> str:
    from runner import __version__

    return __version__


def test_the_package_s_version_is_the_installed_one() -> None:
    # What --version prints (runner.__version__) must stay what pip installed (pyproject).
    from importlib import metadata

    try:
        installed = metadata.version("cecp-runner")
    except metadata.PackageNotFoundError:
        pytest.skip("cecp-runner is not installed: no metadata to compare with")
    assert installed == _own_version()


COLLECTOR_PROBE = (
    "import atexit, gc, sys\n"
    "from runner.cli import loop\n"
    "seen = []\n"
    "def _seen(*args, **kwargs):\n"
    "    seen.append(gc.isenabled())\n"
    "    return _run(*args, **kwargs)\n"
    "_run = loop.run\n"
    "loop.run = _seen\n"
    "atexit.register(lambda: print('COLLECTOR', gc.isenabled(), *seen, file=sys.stderr))\n"
    "sys.argv = ['runner', *sys.argv[1:]]\n"
    "runpy_main = __import__('runpy').run_module\n"
    "runpy_main('runner', run_name='__main__')\n"
)


def _collector(*args: str, cwd: Path = ROOT) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """Whether the cyclic collector ran at exit, then when each event loop started, for one
    ``python -m runner ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-c", COLLECTOR_PROBE, *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)
    lines = [x for x in done.stderr.splitlines() if x.startswith("COLLECTOR")]
    assert lines, done.stderr
    return lines[-1].split()[1:], done


@pytest.mark.parametrize("args", [("--help",), ("stats", "--wdl", "1", "2", "3")])
def test_short_commands_start_without_the_cyclic_collector(args: tuple[str, ...]) -> None:
    # Issue 30: the collector's passes over the objects imports create were a tenth of the
    # start-up; the short commands print and exit without it.
    state, done = _collector(*args)
    assert done.returncode == 0, done.stderr
    assert state == ["False"]


def test_a_match_plays_its_games_with_the_collector_running(tmp_path: Path) -> None:
    # Paused for the imports only: every event loop (the protocol check, the games) runs with
    # the collector, which runner.cli.loop.run_async restarts.
    state, done = _collector(
        "match", "--engine", "cmd=python", "arg=-m", "arg=engine", "name=a",
        "--engine", "cmd=python", "arg=-m", "arg=engine", "name=b", "--each", "tc=inf",
        "depth=1", "--maxmoves", "3", "--db", str(tmp_path / "r.db"), "--quiet", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert state[0] == "True" and len(state) >= 2 and set(state[1:]) == {"True"}


def test_serve_and_export_keep_the_collector() -> None:
    # Commands that may run long without the event loop of a run never pause it.
    from runner.cli import _HELD_FOR

    assert {"serve", "export", "report", "pgn", "tb", "db", "perft"}.isdisjoint(_HELD_FOR)


DROP_IN_COLLECTOR = (
    "import atexit, gc, sys\n"
    "from runner.protocol import loop\n"
    "seen = []\n"
    "def _seen(*args, **kwargs):\n"
    "    seen.append((gc.isenabled(), gc.get_freeze_count() > 0))\n"
    "    return _run(*args, **kwargs)\n"
    "_run = loop.run\n"
    "loop.run = _seen\n"
    "atexit.register(lambda: print('COLLECTOR', *seen, file=sys.stderr))\n"
    "from runner.dropin.main import fastchess\n"
    "sys.argv[0] = 'runner-fastchess'\n"
    "fastchess()\n"
)


def test_a_drop_in_run_plays_with_the_collector_running_and_its_imports_frozen(
        tmp_path: Path) -> None:
    # Issue 30: the drop-in's run imports with the collector paused, then freezes what they
    # created (no full collection walks it again during the games) and restarts it.
    import shutil

    stockfish = shutil.which("stockfish", path=os.environ.get("PATH", "") + ":/usr/games")
    if stockfish is None:
        pytest.skip("stockfish is not installed")
    words = ["-engine", f"cmd={stockfish}", "name=a", "-engine", f"cmd={stockfish}", "name=b",
             "-each", "tc=inf", "depth=1", "-games", "2", "-rounds", "1",
             "-pgnout", f"file={tmp_path / 'x.pgn'}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUNNER_DB": str(tmp_path / "r.db")}
    done = subprocess.run([sys.executable, "-c", DROP_IN_COLLECTOR, *words], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("COLLECTOR")][-1]
    assert line == "COLLECTOR (True, True)"


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_runner_hands_a_drop_in_s_words_over_before_typer_and_rich(peer: str) -> None:
    # Issue 30: ``runner fastchess --version`` imported Typer and rich (half its start-up)
    # only to hand every word to the peer's parser; runner.cli.main hands them over first.
    loaded, done = _run(peer, "--version", watch=("typer", "rich", "runner.cli.app"))
    assert done.returncode == 0 and f"(cecp-runner {_own_version()})" in done.stdout, done
    assert loaded == []


def test_a_lone_version_is_answered_before_typer_and_as_typer_answers_it() -> None:
    # Issue 30: ``runner --version`` imported Typer and rich for two lines of text.
    loaded, done = _run("--version", watch=("typer", "rich", "runner.cli.app"))
    assert done.returncode == 0 and loaded == [], done.stderr
    from typer.testing import CliRunner

    from runner.cli.app import app

    through_typer = CliRunner().invoke(app, ["--version"])
    assert through_typer.exit_code == 0 and through_typer.output == done.stdout
    later = _run("--version", "--help", watch=("typer",))  # not alone: Typer's, as before
    assert later[1].returncode == 0 and later[1].stdout == done.stdout and later[0] == ["typer"]


DROP_IN_PARSE_COLLECTOR = (
    "import atexit, gc, importlib, sys\n"
    "peer = sys.argv[1]\n"
    "module = importlib.import_module(f'runner.dropin.{peer}')\n"
    "seen = []\n"
    "def _seen(*args, **kwargs):\n"
    "    seen.append(gc.isenabled())\n"
    "    return _parse(*args, **kwargs)\n"
    "_parse = module.parse\n"
    "module.parse = _seen\n"
    "atexit.register(lambda: print('PARSED', *seen, gc.isenabled(), file=sys.stderr))\n"
    "from runner.dropin.main import main\n"
    "sys.exit(main(peer, sys.argv[2:]))\n"
)


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_a_drop_in_reads_its_command_line_with_the_collector_paused(
        tmp_path: Path, peer: str) -> None:
    # Issue 30: the peer's parser imports the configuration and the schedule (runner-cutechess
    # counts its games with the tournament's pairing, which loads the store) before the
    # driver's imports: with the collector running, its passes over those objects cost a
    # share of the start-up; it is paused from the parser on, and running again for the games
    # and after an answer without a run.
    import shutil

    stockfish = shutil.which("stockfish", path=os.environ.get("PATH", "") + ":/usr/games")
    if stockfish is None:
        pytest.skip("stockfish is not installed")
    uci = ["proto=uci"] if peer == "cutechess" else []
    pgn = [str(tmp_path / "x.pgn")] if peer == "cutechess" else [f"file={tmp_path / 'x.pgn'}"]
    words = ["-engine", f"cmd={stockfish}", *uci, "name=a", "-engine", f"cmd={stockfish}", *uci,
             "name=b", "-each", "tc=inf", "depth=1", "-games", "2", "-rounds", "1",
             "-pgnout", *pgn]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUNNER_DB": str(tmp_path / "r.db")}
    for argv in (words, ["-version"]):
        done = subprocess.run([sys.executable, "-c", DROP_IN_PARSE_COLLECTOR, peer, *argv],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=240)
        assert done.returncode == 0, done.stderr
        line = [x for x in done.stderr.splitlines() if x.startswith("PARSED")][-1]
        assert line == "PARSED False True"


def test_the_service_imports_jinja2_when_it_first_renders_a_page(tmp_path: Path) -> None:
    # Issue 38: the page's templates (Jinja2, about a tenth of runner serve's imports) are
    # built on the first page rendered, not when the service starts; the API needs none.
    pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
    script = (
        "import sys\n"
        "from fastapi.testclient import TestClient\n"
        "from runner.service.app import create_app\n"
        "from runner.service.settings import ServiceSettings\n"
        f"settings = ServiceSettings(db_url='sqlite:///{tmp_path / 's.db'}', token='t' * 32,\n"
        f"                           engines_file={str(ROOT / 'configs' / 'engines.toml')!r})\n"
        "with TestClient(client=('127.0.0.1', 50000), app=create_app(settings)) as client:\n"
        "    assert client.get('/api/tournaments').status_code == 200\n"
        "    print('API', 'jinja2' in sys.modules)\n"
        "    page = client.get('/')\n"
        "    print('PAGE', page.status_code, 'jinja2' in sys.modules, '<html' in page.text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["API False", "PAGE 200 True True"]
