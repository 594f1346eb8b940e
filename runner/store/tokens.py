"""The service's tokens as the store keeps them: a name, a role, the SHA-256 of the token's
text (the text itself is shown once, when it is made, and never stored or logged)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from runner.store.db import Database
from runner.store.models import TokenRow

__all__ = ["ROLES", "TokenRecord", "Tokens", "digest"]

ROLES = ("admin", "submitter", "worker")
"""What a token may do: everything; submit tournaments and tests; a worker's requests only."""

_TOUCH = timedelta(seconds=60)
"""How stale `last_used_at` may get before a request writes it again (not a write a request)."""


def digest(token: str) -> str:
    """The SHA-256 of a token's text, as stored (a token is 256 random bits: no salt needed)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    """A stored token, without its text."""

    name: str
    role: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


def _record(row: TokenRow) -> TokenRecord:
    return TokenRecord(row.name, row.role, row.created_at, row.last_used_at, row.revoked_at)


class Tokens:
    """The tokens of one database (a session per call, as the `Store` does)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, name: str, role: str) -> str:
        """Make a token named `name` with `role`; its text (shown once, stored as a hash).
        ValueError for an unknown role or a name already taken."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r} (roles: {', '.join(ROLES)})")
        text = secrets.token_urlsafe(32)
        with self._db.session() as session:
            if session.scalar(select(TokenRow.id).where(TokenRow.name == name)) is not None:
                raise ValueError(f"a token named {name!r} exists (revoke it, or choose "
                                 "another name)")
            session.add(TokenRow(name=name, role=role, digest=digest(text)))
        return text

    def all(self) -> list[TokenRecord]:
        """Every token, oldest first (revoked ones too)."""
        with self._db.session() as session:
            return [_record(r) for r in session.scalars(select(TokenRow).order_by(TokenRow.id))]

    def revoke(self, name: str) -> bool:
        """Revoke the token named `name` (its next request is refused); False when there is
        no such token or it was revoked already."""
        with self._db.session() as session:
            row = session.scalar(select(TokenRow).where(TokenRow.name == name))
            if row is None or row.revoked_at is not None:
                return False
            row.revoked_at = datetime.now(UTC)
            return True

    def find(self, token: str) -> TokenRecord | None:
        """The live token whose text is `token`, or None (unknown or revoked)."""
        wanted = digest(token)
        with self._db.session() as session:
            row = session.scalar(select(TokenRow).where(TokenRow.digest == wanted))
            # The lookup is by digest; the comparison again in constant time all the same.
            if row is None or not hmac.compare_digest(row.digest, wanted) \
                    or row.revoked_at is not None:
                return None
            now = datetime.now(UTC)
            if row.last_used_at is None or now - row.last_used_at > _TOUCH:
                row.last_used_at = now
            return _record(row)

    def any_live(self) -> bool:
        """Whether any token is not revoked."""
        with self._db.session() as session:
            return session.scalar(select(TokenRow.id).where(TokenRow.revoked_at.is_(None))
                                  .limit(1)) is not None
