"""``runner test``: a branch against main, both built from refs of one recipe, played stage
after stage (STC, then LTC when the STC's SPRT passed), here (``run``) or on a runner
service's queue (``submit``, ``status``)."""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer
from rich.console import Console

from runner.app.branch import Sides, build_sides, decision, stage_config, stored_decision
from runner.app.modes import StartMode, tournament_db
from runner.app.run import Done
from runner.build import (
    BenchFailed,
    BuildFailed,
    GitError,
    UnknownRef,
    WrongBench,
    default_cache,
)
from runner.build.testfile import BranchTest, load_branch_test
from runner.cli.errors import exit_on_error, fail, open_db, unwrapped
from runner.cli.group import RunnerGroup
from runner.cli.tournament import run_tournament
from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.stats.sprt import SprtDecision
from runner.text import shown
from runner.tournament.events import RunOutcome

test_app = typer.Typer(help="Test a branch against main: engines built from git refs.",
                       no_args_is_help=True, cls=RunnerGroup)
_out = unwrapped(Console(highlight=False, stderr=True))
_shown = unwrapped(Console(highlight=False))
"""What `status` answers (standard output: a script reads it)."""


@test_app.command("run")
def test_run(
    test_file: Path = typer.Argument(..., metavar="TEST_FILE",
                                     help="A branch test file (TOML with a [branch] table)."),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: RUNNER_DB or "
                                  "./runner.db)."),
    cache: Path | None = typer.Option(None, "--cache", metavar="DIR",
                                      help="The build cache (default: ~/.cache/cecp-runner)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the file)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines "
                               "only."),
    new: bool = typer.Option(False, "--new", help="Start new tournaments even if the test's "
                             "can resume."),
) -> None:
    """Build base and dev, check their benches, and play each stage while the one before
    passed its SPRT; running the same file again continues where it stopped."""
    try:
        test = load_branch_test(test_file)
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    sides = _sides(test, cache or default_cache())
    for commit in sides.between[:20]:
        _out.print(f"  {commit.sha[:12]} {shown(commit.subject)}", markup=False)
    if len(sides.between) > 20:
        _out.print(f"  ... and {len(sides.between) - 20} more", markup=False)
    mode = StartMode.NEW if new else StartMode.CONTINUE
    for index, (label, tc) in enumerate(test.stages):
        try:
            config = stage_config(test, sides, index)
        except ConfigError as exc:
            raise exit_on_error(exc) from None
        shown_tc = label if label == tc else f"{label} ({tc})"
        _out.print(f"{shown_tc}: {sides.dev.engine_name} against {sides.base.engine_name}",
                   markup=False)
        result = run_tournament(config, db_url=db, quiet=quiet, mode=mode,
                                concurrency=concurrency, done_returns=True)
        if isinstance(result, RunOutcome) and result.exit_status != 0:
            raise typer.Exit(result.exit_status)
        ended = _decision(result, config, db)
        if index + 1 == len(test.stages):
            break
        if ended is not SprtDecision.H1:
            said = "failed (H0)" if ended is SprtDecision.H0 else "ended without a decision"
            _out.print(f"{label} {said}: {test.stages[index + 1][0]} not started.",
                       markup=False)
            break
        _out.print(f"{label} passed: {test.stages[index + 1][0]} starts.", markup=False)


def _sides(test: BranchTest, cache: Path) -> Sides:
    """Both sides built and benched, or exit saying why (2: a ref; 1: a build or bench)."""
    try:
        return build_sides(test, cache, lambda line: _out.print(shown(line), markup=False))
    except UnknownRef as exc:
        raise fail(f"{test.source}: {exc}") from None
    except BuildFailed as exc:
        _out.print(shown("\n".join(exc.log.splitlines()[-20:]), multiline=True), markup=False)
        raise fail(f"build failed: {exc}", 1) from None
    except BenchFailed as exc:
        _out.print(shown(exc.output[-2000:], multiline=True), markup=False)
        raise fail(str(exc), 1) from None
    except (WrongBench, GitError) as exc:
        raise fail(str(exc), 1) from None


def _decision(result: object, config: TournamentConfig, db: str | None) -> SprtDecision | None:
    """The SPRT's decision on a stage just played, or on one found finished."""
    if isinstance(result, RunOutcome):
        return decision(result)
    if not isinstance(result, Done):
        return None
    url, source = tournament_db(db, config)
    with open_db(url, source=source) as store:
        return stored_decision(store, result.finished.tournament_id)


def register(app: typer.Typer) -> None:
    """Add ``test`` to the ``runner`` application."""
    app.add_typer(test_app, name="test")


@test_app.command("submit")
def test_submit(
    test_file: Path = typer.Argument(..., metavar="TEST_FILE",
                                     help="A branch test file (its engines_file is left out: "
                                          "the service's names the recipes)."),
    server: str = typer.Option(..., "--server", metavar="URL",
                               help="The service (https://HOST, or http:// on this machine)."),
    token_file: Path = typer.Option(..., "--token-file", metavar="FILE",
                                    help="A file holding the service's token."),
) -> None:
    """Submit a branch test to a runner service's queue; prints its id and where to read it."""
    try:
        data = tomllib.loads(test_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise fail(f"{test_file}: {exc}") from None
    data.pop("engines_file", None)
    reply = _call(server, "/api/tests", _token(token_file), data)
    _out.print(f"test {reply['id']} queued: {server.rstrip('/')}{reply['url']}", markup=False)


@test_app.command("status")
def test_status(
    server: str = typer.Option(..., "--server", metavar="URL", help="The service."),
    test_id: int | None = typer.Argument(None, metavar="[ID]", help="One test (default: all)."),
    token_file: Path | None = typer.Option(None, "--token-file", metavar="FILE",
                                           help="The token, when the service protects reads."),
) -> None:
    """The tests of a runner service's queue, or one test with its stages."""
    token = None if token_file is None else _token(token_file)
    if test_id is None:
        for test in _call(server, "/api/tests", token)["tests"]:
            _shown.print(_line(test), markup=False, soft_wrap=True)
        return
    test = _call(server, f"/api/tests/{test_id}", token)
    _shown.print(_line(test), markup=False, soft_wrap=True)
    for stage in test["stages"]:
        where = stage["url"] or "not started"
        label = shown(stage["label"]) if stage["label"] == stage["tc"] else \
            f"{shown(stage['label'])} ({shown(stage['tc'])})"
        _shown.print(f"  {label}: {where}", markup=False)
    if test.get("message"):
        _shown.print(shown(test["message"], multiline=True), markup=False)


def _line(test: dict[str, object]) -> str:
    """One test in a line: id, state, name, refs and commits."""
    return (f"{test['id']:>4}  {shown(str(test['state'])):<9} {shown(str(test['name']))}  "
            f"{shown(str(test['dev_ref']))} ({str(test['dev_sha'])[:8]}) vs "
            f"{shown(str(test['base_ref']))} ({str(test['base_sha'])[:8]})  "
            f"priority {test['priority']}")


def _token(path: Path) -> str:
    """The token in `path` (its first line), or exit 2 saying why."""
    try:
        token = path.read_text(encoding="utf-8").strip().splitlines()[0].strip()
    except (OSError, UnicodeDecodeError, IndexError):
        raise fail(f"{path}: cannot read a token from it") from None
    return token


def _call(server: str, path: str, token: str | None,
          body: dict[str, object] | None = None) -> dict[str, Any]:
    """A request to the service's API; its JSON answer, or exit saying what it refused."""
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail(f"--server {server!r}: expected http(s)://HOST[:PORT]")
    if token is not None and parts.scheme == "http":
        host = parts.hostname
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise fail(f"--server {server!r}: a token is sent over https only (plain http "
                       "only to this machine)")
    try:
        import httpx
    except ImportError:
        raise fail("runner test submit and status need httpx: pip install "
                   "'cecp-runner[fleet]'") from None
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        answer = httpx.request("POST" if body is not None else "GET",
                               server.rstrip("/") + path, json=body, headers=headers,
                               timeout=120)
    except httpx.HTTPError as exc:
        raise fail(f"cannot reach {server}: {exc}", 1) from None
    try:
        found = answer.json()
    except ValueError:
        found = None
    if answer.is_success and isinstance(found, dict):
        return found
    detail = found.get("detail") if isinstance(found, dict) else None
    if isinstance(detail, list):
        for problem in detail:
            _out.print(shown(str(problem.get("text", problem))), markup=False)
        raise fail(f"the service refused the test ({answer.status_code})")
    raise fail(f"the service answered {answer.status_code}: "
               f"{shown(str(detail or answer.reason_phrase))}", 1)
