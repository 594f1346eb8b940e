"""Database URLs fit to print and configurations fit to store: no password in either.

Light (no SQLAlchemy unless a URL needs its parser): a run on a SQLite file names its
database in messages and stores its configuration without loading SQLAlchemy (issue 38).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["database_failure", "redact", "safe_url", "scrub_credentials"]

# scheme://user:password@host -> scheme://user:***@host; up to the last '@' of the word, since
# an unencoded '@' in a password is a mistake to protect too (hiding too much is harmless)
_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)\S*(?P<at>@)")
_PLAIN_SQLITE = re.compile(r"sqlite(\+pysqlite)?:///[^@?%#\s]*")
"""A SQLite file's URL that SQLAlchemy renders back unchanged (no credentials, no query)."""


def redact(text: str) -> str:
    """`text` with the password of every ``scheme://user:password@`` in it replaced by ***."""
    return _PASSWORD.sub(r"\g<head>***\g<at>", text)


def safe_url(url: str) -> str:
    """A database URL fit to print: the password, if any, replaced by ``***``."""
    if _PLAIN_SQLITE.fullmatch(url):
        return url  # nothing to hide, and SQLAlchemy's parser is not needed to say so
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy can read: hide what looks like a password all the same
        return redact(url)


def scrub_credentials(config: Mapping[str, Any]) -> dict[str, Any]:
    """A tournament's configuration fit to store: the password of its database URL (and of a
    cluster address) replaced by ``***``. A resume takes the database from its command line,
    never from the stored copy, so nothing is lost but the secret."""
    scrubbed = dict(config)
    if isinstance(scrubbed.get("database"), str):
        scrubbed["database"] = safe_url(scrubbed["database"])
    cluster = scrubbed.get("cluster")
    if isinstance(cluster, Mapping) and isinstance(cluster.get("address"), str):
        scrubbed["cluster"] = {**cluster, "address": redact(cluster["address"])}
    return scrubbed


def database_failure(url: str, exc: BaseException) -> str:
    """One line naming the database (password hidden) and what went wrong with it: the
    driver's own message, not SQLAlchemy's statement dump."""
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines()  # PostgreSQL adds the statement's text below
    detail = " ".join(lines[0].split()) if lines else type(cause).__name__
    return f"database {safe_url(url)} failed: {detail} ({type(cause).__name__})"
