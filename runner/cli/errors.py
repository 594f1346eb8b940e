"""How the command line reports what went wrong: one style on stderr, exit code 2.

Messages carry foreign text (file contents, engine output, database URLs), so they are
escaped before rich sees them: a ``[/]`` in a value must print as itself, not end a style,
and a control character (an escape sequence that retitles the terminal) is shown as an escape
(`runner.text.shown`), never sent to the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from runner.cli.dburl import redact
from runner.cli.streams import Stream, unwrapped
from runner.text import shown

if TYPE_CHECKING:
    from rich.console import Console

    from runner.store.store import Store

__all__ = ["UserError", "err_stream", "exit_on_error", "fail", "missing_extra", "open_db",
           "quick_file", "report_error", "unwrapped"]

err_stream = Stream(stderr=True)
"""Where errors, notices and the live view go (stdout keeps results: PGN, JSON, summaries).

No console of the command line replaces ``:name:`` codes by emoji: ``markup=False`` and
`escape` leave them, so an engine called ``x:cat:y`` would print as ``x🐱y``."""


def __getattr__(name: str) -> Console:
    """``err_console``: `err_stream`'s rich console, built (rich imported) when first asked for,
    so that a run which prints only plain lines never imports rich (issue 38)."""
    if name == "err_console":
        return err_stream.console
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UserError(Exception):
    """An error the user can act on: printed plainly, exit code 2."""


def report_error(message: str, *, label: str = "error:") -> None:
    """Print `message` in the error style; its text is never read as markup nor sent raw to
    the terminal, and a database URL's password in it is hidden."""
    from rich.markup import escape  # here: a run that fails nothing imports no rich

    text = escape(shown(redact(message), multiline=True))
    err_stream.console.print(f"[bold red]{escape(label)}[/] {text}", highlight=False)


def fail(message: str, code: int = 2) -> SystemExit:
    """Report `message`; the caller raises the returned exit (code 2: the user's to fix).

    A plain `SystemExit`, which Typer passes through as it does its own ``Exit``: the
    commands that read their words before Typer (`runner.cli.main`) raise it too, and a
    match run imports no Typer for it."""
    report_error(message)
    return SystemExit(code)


def missing_extra(exc: ImportError, what: str, extra: str) -> SystemExit:
    """Say in one line that `what` needs the optional `extra` the failed import `exc` belongs
    to, and how to install it; the caller raises the returned exit (code 2)."""
    return fail(f"{what} needs the {extra} extra ({exc.name or exc} is missing): "
                f"pip install 'cecp-runner[{extra}]'")


def exit_on_error(exc: Exception) -> SystemExit:
    """Report a user error the same way for every command; the caller raises the returned exit.

    A configuration error is printed whole (it lists every problem with its file and key).
    """
    from runner.config.check import ConfigError  # here: the config layer is not start-up's

    if isinstance(exc, ConfigError):
        from rich.markup import escape

        text = escape(shown(redact(str(exc)), multiline=True))
        err_stream.console.print(f"[bold red]{text}[/]", highlight=False)
        return SystemExit(2)
    return fail(str(exc))


def open_db(url: str | None, *, create: bool = True, source: str = "--db") -> Store:
    """Open (and migrate) the results database as a store object, or exit 2 saying why not.

    `url` is checked first (`runner.cli.dburl.check_db_value`; `source` says where it was
    given). With `create` False (the commands that only read: list, report, export, resume)
    a database that does not exist yet is an error, never created. File permissions are named
    before SQLite gets to fail on them.
    """
    from runner.cli.dburl import DbValueError, check_db_value, redact, shown_url
    from runner.store.store import Store

    try:
        target = check_db_value(url, source=source)
    except DbValueError as exc:
        raise fail(str(exc)) from None
    if target.file is not None:
        problem = _file_problem(target.file, create=create)
        if problem:
            raise fail(problem)
        if not create and (read_only := _read_only_url(target.file)) is not None:
            return _open_read_only(read_only, target.file)
    elif not create:
        _require_schema(target.url)
    try:
        return Store.open(target.url)
    except Exception as exc:  # an unreachable server, a failed migration, an unwritable file
        cause = redact(str(getattr(exc, "orig", None) or exc)).strip()
        where = str(target.file) if target.file is not None else shown_url(target.url)
        if "readonly" in cause or "read-only" in cause:
            cause += " (permission denied: the file or its directory is read-only)"
        raise fail(f"cannot open the database {where}: {cause}") from None


def quick_file(url: str | None, *, source: str = "--db") -> tuple[Path, str] | None:
    """The SQLite file `url` names and its URL as shown, when a command that only reads may
    read the file itself (`runner.app.reading.quick_tournament_list`): it exists, can be read
    and written (so none of `open_db`'s messages would apply) and its URL shows as it is
    (plain characters: `runner.cli.dburl.shown_url` quotes others). None: take `open_db`'s
    way."""
    from runner.cli.dburl import DbValueError, check_db_value

    try:
        target = check_db_value(url, source=source)
    except DbValueError:
        return None
    path = target.file
    if (path is None or not all(c.isascii() and (c.isalnum() or c in "/._-+") for c in str(path))
            or _file_problem(path, create=False) is not None
            or _read_only_url(path) is not None):
        return None
    return path, target.url


def _read_only_url(path: Path) -> str | None:
    """A URL opening the SQLite file `path` read-only when it or its directory cannot be
    written (a read-only mount, a copy on a CD), None when it can: the usual opening writes
    (the WAL switch, a migration) and failed with "unable to open database file". A WAL
    database needs its -shm file beside it even to read, so in a directory that cannot be
    written the file is opened as immutable unless its -wal and -shm files are there (what
    a -wal file alone holds is then not seen: a clean stop leaves nothing there)."""
    import os
    from urllib.parse import quote

    writable_dir = os.access(path.resolve().parent, os.W_OK | os.X_OK)
    if writable_dir and os.access(path, os.W_OK):
        return None
    # A runner killed (kill -9, a crash) leaves its last games in the -wal file: with it and
    # its -shm there, SQLite reads them read-only; immutable would not see them at all.
    beside = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    mode = "mode=ro" if writable_dir or all(p.exists() for p in beside) else "immutable=1"
    return f"sqlite:///file:{quote(str(path.resolve()))}?{mode}&uri=true"


def _open_read_only(url: str, path: Path) -> Store:
    """Open `url` (from `_read_only_url`) without migrating it, or exit 2 saying why not."""
    from runner.store.store import SchemaMismatch, Store

    try:
        return Store.open_read_only(url)
    except SchemaMismatch as exc:
        raise fail(f"the database {path} cannot be written (a read-only file or file system) "
                   f"and its schema is at revision {exc.revision}, not {exc.expected}: copy it "
                   "somewhere writable and read the copy") from None
    except Exception as exc:  # not a database, a corrupt file
        cause = str(getattr(exc, "orig", None) or exc).strip()
        raise fail(f"cannot open the read-only database {path}: {cause}") from None


def _file_problem(path: Path, *, create: bool) -> str | None:
    """Why the SQLite file `path` cannot be used (None when it can, as far as one can tell)."""
    import os

    if not path.exists():
        if not create:
            return (f"no database at {path} (nothing was created): give --db with the file "
                    "your tournaments are stored in, or run one first")
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot create the database {path}: permission denied in {parent}"
        return None
    if path.is_dir():
        return f"{path} is a directory, not a database file"
    if not os.access(path, os.R_OK):
        return f"cannot read the database {path}: permission denied"
    if create and not os.access(path, os.W_OK):
        return (f"cannot write the database {path}: permission denied (the file is "
                "read-only)")
    return None


def _require_schema(url: str) -> None:
    """Exit 2 unless the server database `url` already holds a runner schema (read-only
    commands never create one)."""
    from runner.cli.dburl import redact, shown_url
    from runner.store.store import Store, StoreError

    try:
        present = Store.has_schema(url)
    except StoreError as exc:
        cause = redact(str(getattr(exc, "orig", None) or exc)).strip()
        raise fail(f"cannot open the database {shown_url(url)}: {cause}") from None
    if not present:
        raise fail(f"no runner database at {shown_url(url)} (it has no runner tables; "
                   "nothing was created): run a tournament into it first, or "
                   "'runner db upgrade --db URL'")
