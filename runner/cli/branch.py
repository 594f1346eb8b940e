"""``runner test run``: a branch against main, both built from refs of one recipe, played
stage after stage (STC, then LTC when the STC's SPRT passed)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from runner.app.branch import Sides, build_sides, decision, stage_config, stored_decision
from runner.app.modes import StartMode, tournament_db
from runner.app.run import Done
from runner.build import BenchFailed, BuildFailed, GitError, UnknownRef, WrongBench
from runner.build.testfile import BranchTest, load_branch_test
from runner.cli.build import default_cache
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
