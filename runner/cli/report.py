"""CLI command ``runner report [ID]``: a tournament's standings and figures as text, JSON or HTML."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import typer

from runner.cli.errors import err_console, fail, open_db

__all__ = ["register", "report_command"]

_FORMATS = ("text", "json", "html")


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
    # Here, not at the top: `runner report --help` loads none of the store and report code.
    from runner.app.report import ReportError, report
    from runner.config.check import unwritable
    from runner.report.render import render
    from runner.store.store import StoreError

    fmt = fmt.lower()
    if fmt not in _FORMATS:
        raise fail(f"unknown --format {fmt!r}: text, json or html")
    if out is not None and (problem := unwritable(out, create_parents=False)) is not None:
        raise fail(f"--out {out}: the file {problem}")
    try:
        with open_db(db, create=False) as store:
            built = report(store, tournament_id)
    except ReportError as exc:
        raise fail(str(exc)) from None
    except StoreError as exc:
        raise fail(f"cannot read the database: {exc}") from None
    # A terminal gets its own width; a file or a pipe the tables' full width (nothing cut).
    width = shutil.get_terminal_size().columns if out is None and sys.stdout.isatty() else None
    text = render(built, fmt, width=width)
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc.strerror}") from None
    err_console.print(f"report of tournament {built.tournament_id} written to {out}", highlight=False,
               markup=False)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``runner`` application."""
    app.command("report")(report_command)
