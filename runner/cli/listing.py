"""``runner list``: the tournaments in a database with their progress."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.cli.errors import open_db, quick_file
from runner.text import shown

_out = Console(emoji=False)  # see runner.cli.errors.err_console


def _cache() -> Path | None:
    """Where ``runner list`` keeps the statements it reads SQLite files with, compiled
    (``$XDG_CACHE_HOME/cecp-runner``, else ``~/.cache/cecp-runner``; None: no home)."""
    home = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(home) if home else Path.home() / ".cache"
    except RuntimeError:  # no home directory to be found
        return None
    return base / "cecp-runner" / "list-reads.json"


def list_command(db: str | None = typer.Option(None, "--db", help="Database URL.")) -> None:
    """Tournaments in the database with their progress."""
    # Here, not at the top: ``runner list --help`` loads no database code.
    from runner.app.reading import (
        never_moved,
        quick_tournament_list,
        remember_list,
        tournament_list,
    )

    # A SQLite file is read without SQLAlchemy when the statements are cached (issue 30:
    # importing it was most of the command's start-up); else the store answers and the
    # statements are cached for the next time.
    cache = _cache()
    file = quick_file(db)
    quick = None if file is None or cache is None else quick_tournament_list(file[0], cache)
    if quick is not None and file is not None:
        (found, reasons), shown_url = quick, file[1]
    else:
        with open_db(db, create=False) as store:
            found = tournament_list(store)
            reasons = store.failures()
            if file is not None and cache is not None:
                remember_list(store, cache)
        shown_url = store.shown_url
    table = Table(title=Text(f"Tournaments in {shown_url}"), title_justify="left")
    for column in ("ID", "Name", "Status", "Games", "Running", "Created", "SPRT"):
        table.add_column(column)
    for t in found:
        # A run stopped because an engine never moved: its games are no result (see report).
        silent = never_moved(reasons.get(t.id))
        status = t.status if silent is None else f"{t.status}: engine {silent} never moved"
        table.add_row(str(t.id), Text(shown(t.name)), Text(shown(status)),
                      f"{t.done}/{t.total_games}",
                      str(t.running), t.created_at.strftime("%Y-%m-%d %H:%M"),
                      t.sprt_decision or "")
    _out.print(table)


def register(app: typer.Typer) -> None:
    """Add ``list`` to the ``runner`` application."""
    app.command("list")(list_command)
