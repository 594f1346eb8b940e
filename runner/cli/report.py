"""CLI command ``runner report [ID]``: a tournament's standings and figures as text, JSON or HTML."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

__all__ = ["report_command"]

_err = Console(stderr=True)
_FORMATS = ("text", "json", "html")


def _fail(message: str) -> typer.Exit:
    """Print a user error; the caller raises the returned exit (code 2)."""
    _err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(2)


def report_command(
    tournament_id: int | None = typer.Argument(
        None, metavar="ID", help="Tournament id (default: the newest; see 'runner list')."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json or html."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write to this file instead of standard output."),
    db: str | None = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL or SQLite file (default: $RUNNER_DB, else ./runner.db)."),
) -> None:
    """Standings, Elo +- 95%, LOS, pentanomial counts, terminations, faults and SPRT state of a
    tournament; --format html writes one self-contained page with plots."""
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    from runner.report.build import ReportError, build_report
    from runner.report.render import render
    from runner.store.db import open_database

    fmt = fmt.lower()
    if fmt not in _FORMATS:
        raise _fail(f"unknown --format {fmt!r}: text, json or html")
    try:
        database = open_database(db)
    except ArgumentError as exc:
        raise _fail(f"bad database URL {db!r}: {exc}") from None
    except (SQLAlchemyError, OSError) as exc:
        raise _fail(f"cannot open the database: {exc}") from None
    try:
        with database, database.session() as session:
            report = build_report(session, tournament_id)
    except ReportError as exc:
        raise _fail(str(exc)) from None
    except SQLAlchemyError as exc:
        raise _fail(f"cannot read the database: {exc}") from None
    text = render(report, fmt)
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror}") from None
    _err.print(f"report of tournament {report.tournament_id} written to {out}", highlight=False,
               markup=False)
