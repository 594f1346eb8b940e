"""A SQLite file deleted or replaced under a running store: noticed at the next commit, and
what was in it saved.

SQLite keeps writing into a file its connections have open after the file's name is gone
(``rm runner.db`` in another terminal, a clean-up script): a run went on "storing" every game
into a file nobody could open again, said "20 of 20 games stored", and the next run started
the tournament afresh and wrote its games into the PGN file a second time. A `FileWatch`
remembers which file (device and inode) the store opened; before each commit the file at the
path is compared with it, and when it is gone or another one, the commit is refused with
`DatabaseFileGone` (the run then stops with that one line) after the games already committed
are copied out through a connection that still has the first file open: back to the path when
nothing is there, else beside it. Standard library only: the writer's sqlite3 connection
(`runner.store.fast`) and the SQLAlchemy connections (`runner.store.db`) both use it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

__all__ = ["DatabaseFileGone", "FileWatch", "identity"]

Identity = tuple[int, int]
"""A file's device and inode numbers."""


class DatabaseFileGone(sqlite3.OperationalError):
    """The SQLite file the store opened was deleted or replaced while it was open."""


def identity(path: Path) -> Identity | None:
    """The device and inode of the file at `path` (None when there is none)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


class FileWatch:
    """Which SQLite file a store's connections opened, and the check before each commit."""

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().absolute()
        self.first: Identity | None = None
        """The file the first connection opened: the one the store's data is in."""
        self._failure: str | None = None
        self._lock = threading.Lock()

    def connected(self) -> Identity | None:
        """Note a new connection (just opened on the path): the file it has open."""
        now = identity(self.path)
        with self._lock:
            if self.first is None:
                self.first = now
        return now

    def check(self, connection: sqlite3.Connection, opened: Identity | None) -> None:
        """Raise `DatabaseFileGone` unless the path still names the file the store opened.
        `connection` (which has the file `opened` open) is rolled back first and, when it is
        on the store's first file, what that file holds is saved (once per store)."""
        with self._lock:
            if self._failure is None:
                if self.first is None or identity(self.path) == self.first:
                    return
            connection.rollback()  # its locks go with it: the other connections finish
            if self._failure is None:
                self._failure = self._save(connection if opened == self.first else None)
            failure = self._failure
        raise DatabaseFileGone(failure)

    def _save(self, connection: sqlite3.Connection | None) -> str:
        """Copy the first file's content out through `connection`; the sentence saying so."""
        gone = identity(self.path) is None
        what = "deleted" if gone else "replaced by another file"
        head = f"the database file {self.path} was {what} during the run"
        if connection is None:
            return f"{head}; the games stored in it since could not be saved"
        target = self.path if gone else self.path.with_name(
            f"{self.path.name}.saved-{os.getpid()}")
        try:
            copy = sqlite3.connect(target)
            try:
                connection.backup(copy)
            finally:
                copy.close()
        except sqlite3.Error as exc:
            return f"{head}; saving its games to {target} failed: {exc}"
        where = "written back to it" if gone else f"saved to {target}"
        return (f"{head}: the games stored in it were {where}; the game in progress was not "
                "stored")
