"""``runner token``: the service's tokens, each with a role, kept hashed in its database."""

from __future__ import annotations

import typer
from rich.console import Console

from runner.cli.errors import fail, open_db, unwrapped
from runner.cli.group import RunnerGroup
from runner.store.store import ROLES
from runner.text import shown

token_app = typer.Typer(help="Tokens of the service: add one with a role, list, revoke.",
                        no_args_is_help=True, cls=RunnerGroup)
_out = unwrapped(Console(highlight=False))
_err = unwrapped(Console(highlight=False, stderr=True))

_DB = typer.Option(None, "--db", help="The service's database URL (default: RUNNER_DB or "
                   "./runner.db).")


@token_app.command("add")
def token_add(
    name: str = typer.Argument(..., help="Who or what holds it (a person, a machine)."),
    role: str = typer.Option(..., "--role", metavar="|".join(ROLES),
                             help="admin: everything; submitter: submit tournaments and "
                                  "tests; worker: a worker's requests only."),
    db: str | None = _DB,
) -> None:
    """Make a token and print it once (only its hash is stored: keep it now)."""
    if role not in ROLES:
        raise fail(f"--role {role!r}: one of {', '.join(ROLES)}")
    if not name.strip() or len(name) > 100 or not name.isprintable():
        raise fail(f"{shown(name)!r}: a token's name is 1 to 100 printable characters")
    with open_db(db) as store:
        try:
            text = store.tokens.add(name, role)
        except ValueError as exc:
            raise fail(str(exc)) from None
    _err.print(f"token {shown(name)!r} ({role}) made; it is shown this once:", markup=False)
    _out.print(text, markup=False)


@token_app.command("list")
def token_list(db: str | None = _DB) -> None:
    """Every token: name, role, when made, last used and revoked (never the token)."""
    with open_db(db, create=False) as store:
        found = store.tokens.all()
    if not found:
        _err.print("no token yet: runner token add NAME --role ROLE", markup=False)
        return
    for token in found:
        used = "never used" if token.last_used_at is None else \
            f"last used {token.last_used_at:%Y-%m-%d %H:%M}"
        state = f"revoked {token.revoked_at:%Y-%m-%d %H:%M}" if token.revoked_at else "live"
        _out.print(f"{shown(token.name)}  {token.role}  made {token.created_at:%Y-%m-%d %H:%M}"
                   f"  {used}  {state}", markup=False, soft_wrap=True)


@token_app.command("revoke")
def token_revoke(name: str = typer.Argument(..., help="The token's name."),
                 db: str | None = _DB) -> None:
    """Revoke a token: its next request is refused (a worker stops there)."""
    with open_db(db, create=False) as store:
        if not store.tokens.revoke(name):
            raise fail(f"no live token named {shown(name)!r}")
    _err.print(f"token {shown(name)!r} revoked", markup=False)


def register(app: typer.Typer) -> None:
    """Add ``token`` to the ``runner`` application."""
    app.add_typer(token_app, name="token")
