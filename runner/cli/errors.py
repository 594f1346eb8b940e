"""How the command line reports what went wrong: one style on stderr, exit code 2.

Messages carry foreign text (file contents, engine output, database URLs), so they are
escaped before rich sees them: a ``[/]`` in a value must print as itself, not end a style.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from runner.config.check import ConfigError

if TYPE_CHECKING:
    from runner.store.db import Database

__all__ = ["UserError", "err_console", "exit_on_error", "fail", "open_db", "report_error"]

err_console = Console(stderr=True)
"""Where errors, notices and the live view go (stdout keeps results: PGN, JSON, summaries)."""


class UserError(Exception):
    """An error the user can act on: printed plainly, exit code 2."""


def report_error(message: str, *, label: str = "error:") -> None:
    """Print `message` in the error style; its text is never read as markup."""
    err_console.print(f"[bold red]{escape(label)}[/] {escape(message)}", highlight=False)


def fail(message: str) -> typer.Exit:
    """Report `message`; the caller raises the returned exit (code 2)."""
    report_error(message)
    return typer.Exit(2)


def exit_on_error(exc: Exception) -> typer.Exit:
    """Report a user error the same way for every command; the caller raises the returned exit.

    A configuration error is printed whole (it lists every problem with its file and key).
    """
    if isinstance(exc, ConfigError):
        err_console.print(f"[bold red]{escape(str(exc))}[/]", highlight=False)
        return typer.Exit(2)
    return fail(str(exc))


def open_db(url: str | None) -> Database:
    """Open (creating or migrating) the results database, or exit 2 saying why not."""
    from sqlalchemy.exc import ArgumentError

    from runner.store.db import open_database

    try:
        return open_database(url)
    except ArgumentError as exc:
        raise fail(f"bad database URL {url!r}: {exc}") from None
    except Exception as exc:  # an unreachable server, a failed migration, an unwritable file
        raise fail(f"cannot open the database: {exc}") from None
