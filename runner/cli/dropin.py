"""``runner fastchess ARGS...`` and ``runner cutechess ARGS...``: the drop-in entry points as
subcommands, every word after the peer's name handed to the peer's parser as it is.

`runner.cli.main` (and `runner.cli.app.main`) hands these words over before Typer reads any
of them (``-help``, ``--version`` and ``-engine`` are the peer's, not options of ``runner``);
the commands here list the two in ``runner --help`` and carry the words through click
untouched when the application is invoked without that main (a test's CliRunner).
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from runner.dropin import main as entry

__all__ = ["RAW", "register"]

RAW = {"ignore_unknown_options": True, "allow_extra_args": True,
       "allow_interspersed_args": False, "help_option_names": []}
"""Click's settings that leave every word to the peer's parser."""


def _command(peer: str, text: str) -> Callable[[typer.Context], None]:
    """The subcommand of `peer`, whose help line is `text`."""

    def command(ctx: typer.Context) -> None:
        raise typer.Exit(entry.main(peer, list(ctx.args)))

    command.__doc__ = text
    return command


FASTCHESS_HELP = ("fastchess's command line, unchanged (as runner-fastchess): its output and "
                  "games, plus the runner's database and resume.")
"""The help line of ``runner fastchess``."""
CUTECHESS_HELP = ("cutechess-cli's command line, unchanged (as runner-cutechess): its output "
                  "and games, plus the runner's database and resume.")
"""The help line of ``runner cutechess``."""


def register(app: typer.Typer) -> None:
    """Add the two drop-in subcommands to the ``runner`` application."""
    for peer, text in (("fastchess", FASTCHESS_HELP), ("cutechess", CUTECHESS_HELP)):
        app.command(peer, context_settings=RAW, add_help_option=False)(_command(peer, text))
