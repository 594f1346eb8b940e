"""The commands that play tournaments, declared: ``run``, ``resume``, ``match``, ``gauntlet``,
``roundrobin`` and ``tune``, their options and help.

Each body imports `runner.cli.tournament` (the run itself, the live view, the summary: the
tournament, store and protocol code behind them) when it runs, so that a command's
``--help`` pays for none of it: ``runner run --help`` used to import the whole run (5 s on a
loaded machine against well under one for the light commands).
"""

from __future__ import annotations

from pathlib import Path

import typer

from runner.cli.help import INTERRUPT_HELP, PASSTHROUGH, RERUN_HELP, vocabulary_help

__all__ = ["register"]

EVENTS_HELP = ("Also write the run's events as JSON lines to FILE, appended ('-': standard "
               "output, the other lines then go to standard error; see docs/events.md).")
EVENTS_MOVES_HELP = "With --events, every move too."


def run_command(
    config_file: Path = typer.Argument(..., help="Tournament file (TOML)."),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: RUNNER_DB or ./runner.db)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the file)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines only."),
    force: bool = typer.Option(
        False, "--force", help="Continue the tournament of this name with the changed file, "
        "finished or not: games that still fit are kept and only the games the change adds "
        "are played (added engines, more rounds); games of removed engines or dropped rounds "
        "stay stored but are not counted; a new time control or other setting applies to the "
        "games still to play. A finished tournament with no change plays nothing."),
    new: bool = typer.Option(False, "--new", help="Start a new tournament even if one can resume."),
    workers: int | None = typer.Option(
        None, "--workers", min=0, help="Play on N local Dask worker processes (0: in this "
        "process; default: in this process unless the concurrency is more than one process "
        "relays in time and the cluster extra is installed)."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="ADDR",
                                       help="Play on the Dask scheduler at ADDR (tcp://HOST:8786)."),
    events: str | None = typer.Option(None, "--events", metavar="FILE", help=EVENTS_HELP),
    events_moves: bool = typer.Option(False, "--events-moves", help=EVENTS_MOVES_HELP),
) -> None:
    """Run (or resume) the tournament a TOML file describes."""
    from runner.cli.tournament import events_target, run_file

    run_file(config_file, db=db, concurrency=concurrency, quiet=quiet, force=force, new=new,
             workers=workers, cluster=cluster, events=events_target(events, events_moves))


def resume_command(
    tournament_id: int = typer.Argument(..., help="Tournament id (see 'runner list')."),
    db: str | None = typer.Option(None, "--db", help="Database URL."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the stored setting)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines only."),
    events: str | None = typer.Option(None, "--events", metavar="FILE", help=EVENTS_HELP),
    events_moves: bool = typer.Option(False, "--events-moves", help=EVENTS_MOVES_HELP),
) -> None:
    """Resume a stored tournament with the configuration it was started with."""
    from runner.cli.tournament import events_target, resume_stored

    resume_stored(tournament_id, db=db, concurrency=concurrency, quiet=quiet,
                  events=events_target(events, events_moves))


def tune_command(
    config_file: Path = typer.Argument(..., help="Tuning file (TOML): engine, [parameters.NAME] "
                                       "tables, iterations, seed, tc, openings, concurrency."),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: RUNNER_DB or ./runner.db)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per batch; the values only."),
    workers: int | None = typer.Option(None, "--workers", min=0,
                                       help="Play on N local Dask worker processes."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="ADDR",
                                       help="Play on the Dask scheduler at ADDR."),
) -> None:
    """Tune spin options with SPSA over game pairs (run again to continue after a stop)."""
    from runner.cli.tune import tune_file

    tune_file(config_file, db=db, quiet=quiet, workers=workers, cluster=cluster)


def match_command(ctx: typer.Context) -> None:
    """Two engines, every opening as a game pair (the words it takes are below)."""
    from runner.cli.tournament import cli_run

    cli_run(list(ctx.args), "match")


def gauntlet_command(ctx: typer.Context) -> None:
    """The first --engine against each of the others (the words it takes are below)."""
    from runner.cli.tournament import cli_run

    cli_run(list(ctx.args), "gauntlet")


def roundrobin_command(ctx: typer.Context) -> None:
    """Every --engine against every other (the words it takes are below)."""
    from runner.cli.tournament import cli_run

    cli_run(list(ctx.args), "roundrobin")


def register(app: typer.Typer) -> None:
    """Add the tournament commands to the ``runner`` application."""
    app.command("run", epilog=INTERRUPT_HELP)(run_command)
    app.command("resume", epilog=INTERRUPT_HELP)(resume_command)
    app.command("tune", epilog=INTERRUPT_HELP)(tune_command)
    for name, command in (("match", match_command), ("gauntlet", gauntlet_command),
                          ("roundrobin", roundrobin_command)):
        app.command(name, cls=vocabulary_help(name), context_settings=PASSTHROUGH,
                    epilog=RERUN_HELP)(command)
