"""``runner list``: the tournaments in a database with their progress."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.cli.errors import open_db
from runner.text import shown

_out = Console(emoji=False)  # see runner.cli.errors.err_console


def list_command(db: str | None = typer.Option(None, "--db", help="Database URL.")) -> None:
    """Tournaments in the database with their progress."""
    # Here, not at the top: ``runner list --help`` loads no database code.
    from runner.app.reading import tournament_list
    from runner.store.store import never_moved

    with open_db(db, create=False) as store:
        found = tournament_list(store)
        reasons = store.failures()
    table = Table(title=Text(f"Tournaments in {store.shown_url}"), title_justify="left")
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
