"""What the command line says to a new user (issue 21 items 13, 15, 17 and 21): a finished
config is not silently played again, --db typos and read-only commands never create anything,
the report and figures are honest and readable, and no database password is ever printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_binary

from runner.report.build import build_report
from runner.report.render import render_text
from runner.stats import Trinomial, match_stats
from runner.store import open_database
from runner.store.store import ReportRows

CONFIG = """\
name = "rerun"
format = "match"
tc = "depth=1"
games = 2
pgnout = "games.pgn"
[adjudication]
maxmoves = 4
[[engines]]
name = "a"
command = ["python", "-m", "engine", "--level", "1"]
[[engines]]
name = "b"
command = ["python", "-m", "engine", "--level", "2"]
"""


def _runner(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200",
                               **(env or {})})


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a finished two-game tournament in runner.db (and games.pgn)."""
    where = tmp_path_factory.mktemp("played")
    (where / "t.toml").write_text(CONFIG)
    result = _runner("run", "t.toml", "--db", "runner.db", "-q", cwd=where)
    assert result.returncode == 0, result.stderr
    return where


# -- item 13: a finished config -----------------------------------------------------------------


def test_rerunning_a_finished_config_says_so_and_plays_nothing(played: Path) -> None:
    pgn_before = (played / "games.pgn").read_text()
    again = _runner("run", "t.toml", "--db", "runner.db", cwd=played)
    assert again.returncode == 0, again.stderr
    assert "already finished" in again.stderr
    assert "runner report 1" in again.stderr and "--new" in again.stderr
    assert (played / "games.pgn").read_text() == pgn_before  # nothing appended
    listed = _runner("list", "--db", "runner.db", cwd=played)
    assert "│ 2 " not in listed.stdout  # no second tournament


def test_new_starts_a_new_tournament_from_a_finished_config(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(CONFIG)
    assert _runner("run", "t.toml", "--db", "r.db", "-q", cwd=tmp_path).returncode == 0
    fresh = _runner("run", "t.toml", "--db", "r.db", "-q", "--new", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert "Tournament 2 finished" in fresh.stderr


# -- item 15: --db values and read-only commands --------------------------------------------------


@pytest.mark.parametrize("value", ["sqlite:/x.db", "::::", "sqlite://x.db", "nosuch://x",
                                   "postgresql://u@h:port/db"])
def test_a_mistyped_db_value_is_one_error_and_creates_nothing(tmp_path: Path, value: str) -> None:
    result = _runner("list", "--db", value, cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert repr(value) in " ".join(result.stderr.split())
    assert list(tmp_path.iterdir()) == []


def test_check_db_value_tells_files_from_urls(tmp_path: Path) -> None:
    from runner.cli.dburl import DbValueError, check_db_value

    assert check_db_value(str(tmp_path / "a.db")).file == tmp_path / "a.db"
    assert check_db_value("./a:b.db").file == Path("./a:b.db")
    assert check_db_value(None, env={"RUNNER_DB": "sqlite:///x.db"}).url == "sqlite:///x.db"
    with pytest.raises(DbValueError, match=r"\$RUNNER_DB 'sqlite:x.db'"):
        check_db_value(None, env={"RUNNER_DB": "sqlite:x.db"})


@pytest.mark.parametrize("command", [["list"], ["report"], ["export"], ["resume", "1"]])
def test_read_only_commands_never_create_a_database(tmp_path: Path, command: list[str]) -> None:
    result = _runner(*command, "--db", "missing/nothing.db", cwd=tmp_path)
    assert result.returncode == 2
    assert "no database at missing/nothing.db" in " ".join(result.stderr.split())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any file: no permission "
                    "error to provoke")
def test_an_unreadable_or_read_only_database_is_named(played: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ro.db"
    copy.write_bytes((played / "runner.db").read_bytes())
    copy.chmod(0o000)
    listed = _runner("list", "--db", str(copy), cwd=tmp_path)
    assert listed.returncode == 2 and "permission denied" in listed.stderr
    assert str(copy) in " ".join(listed.stderr.split())
    copy.chmod(0o444)
    upgraded = _runner("db", "upgrade", "--db", str(copy), cwd=tmp_path)
    assert upgraded.returncode == 2 and "read-only" in upgraded.stderr


# -- item 21: passwords --------------------------------------------------------------------------


def test_passwords_are_hidden_in_urls_and_error_text() -> None:
    from runner.cli.dburl import redact, shown_url

    url = "postgresql+psycopg://user:s3cr@t:x@db.example/results"
    assert "s3cr" not in shown_url(url) and "***" in shown_url(url)
    assert redact(f"cannot reach {url}: refused") == \
        "cannot reach postgresql+psycopg://user:***@db.example/results: refused"
    assert redact("sqlite:///a.db and http://x/y") == "sqlite:///a.db and http://x/y"


def test_an_unreachable_server_error_shows_no_password(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    url = "postgresql+psycopg://user:hunter2@127.0.0.1:1/results?connect_timeout=2"
    for command in (["list"], ["run", "t.toml"]):
        (tmp_path / "t.toml").write_text(CONFIG)
        result = _runner(*command, "--db", url, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "hunter2" not in result.stdout + result.stderr
        assert "user:***@127.0.0.1" in " ".join(result.stderr.split())


def test_postgres_read_only_command_creates_no_schema_and_hides_the_password(
        postgres_server: object) -> None:
    import psycopg

    base = postgres_server.new_database()  # type: ignore[attr-defined]
    url = base.replace("runner@", "runner:topsecret@", 1)  # trust auth: the password is unused
    result = _runner("list", "--db", url, cwd=REPO)
    assert result.returncode == 2, result.stderr
    assert "topsecret" not in result.stdout + result.stderr
    assert "no runner database" in result.stderr
    socket_dir = str(postgres_server.socketdir)  # type: ignore[attr-defined]
    dbname = base.split("@/", 1)[1].split("?", 1)[0]
    with psycopg.connect(host=socket_dir, user="runner", dbname=dbname) as connection:
        tables = connection.execute("SELECT count(*) FROM information_schema.tables "
                                    "WHERE table_schema = 'public'").fetchone()
    assert tables == (0,)
    assert _runner("db", "upgrade", "--db", url, cwd=REPO).returncode == 0
    listed = _runner("list", "--db", url, cwd=REPO)
    assert listed.returncode == 0, listed.stderr
    assert "topsecret" not in listed.stdout and "runner:***@" in listed.stdout


# -- item 17: report, export, engine check, stats, help -------------------------------------------


def test_the_text_report_is_not_squeezed(played: Path) -> None:
    piped = _runner("report", "--db", "runner.db", cwd=played)
    assert piped.returncode == 0, piped.stderr
    assert "…" not in piped.stdout and "Elo (W/D/L)" in piped.stdout
    with open_database(str(played / "runner.db")) as database, database.session() as session:
        report = build_report(ReportRows(session), 1)
    for width in (80, 100, 132):
        text = render_text(report, width=width)
        assert "…" not in text
        assert max(len(line) for line in text.splitlines()) <= width


def test_export_refuses_a_missing_tournament_and_an_unknown_engine(played: Path) -> None:
    missing = _runner("export", "999", "--db", "runner.db", cwd=played)
    assert missing.returncode == 2 and "no tournament 999" in missing.stderr
    typo = _runner("export", "--engine", "aa", "--db", "runner.db", cwd=played)
    assert typo.returncode == 2 and "'aa'" in typo.stderr and "a, b" in typo.stderr
    assert typo.stdout == ""
    none = _runner("export", "--result", "*", "--db", "runner.db", cwd=played)
    assert none.returncode == 0 and "no stored game matches" in none.stderr
    both = _runner("export", "--engine", "a", "--db", "runner.db", cwd=played)
    assert both.returncode == 0 and "2 games of tournament 1 exported" in both.stderr
    # Both games end at maxmoves = 4: drawn by the max moves adjudication.
    ended = _runner("export", "--termination", "max moves", "--result", "1/2-1/2", "--db",
                    "runner.db", cwd=played)
    assert ended.returncode == 0 and ended.stdout.count("[Event ") == 2, ended.stderr


def test_engine_check_switches_to_uci_at_once() -> None:
    stockfish = require_binary("stockfish")
    result = _runner("engine", "check", "--movetime", "0.1", "--", stockfish, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "like a UCI engine" in result.stderr and "legal" in result.stdout


def test_stats_without_games_and_for_sweeps(tmp_path: Path) -> None:
    from runner.stats import format_elo

    empty = _runner("stats", "--wdl", "0", "0", "0", cwd=tmp_path)
    assert empty.returncode == 0 and "No games" in empty.stdout and "%" not in empty.stdout
    # One pair is too small a sample for any figure (the stats rule: n/a, as in the report).
    sweep = _runner("stats", "--penta", "0", "0", "0", "0", "1", cwd=tmp_path)
    assert "n/a" in sweep.stdout and "(1 pair)" in sweep.stdout
    assert "1199" not in sweep.stdout and "inf" not in sweep.stdout
    # The table shows the observed score and draw ratio, not the regularised ones (99.99 %,
    # 0.01 % for 10-0-0).
    wins = _runner("stats", "--wdl", "10", "0", "0", cwd=tmp_path)
    assert "100.00 %" in wins.stdout and "99.99" not in wins.stdout
    assert "0.00 %" in wins.stdout and "0.01 %" not in wins.stdout
    figures = match_stats(Trinomial(0, 0, 7))  # a sweep: fishtest's clamped figures
    assert format_elo(figures.elo, figures.elo_error95).startswith("-1199.8 +/- ")
    assert format_elo(12.34, 5.0) == "+12.3 +/- 5.0"


def test_help_has_no_bool_placeholder_and_there_is_a_version(tmp_path: Path) -> None:
    helped = _runner("run", "--help", cwd=tmp_path)
    assert "--quiet" in helped.stdout and "<bool>" not in helped.stdout
    version = _runner("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("runner (cecp-runner) ")
