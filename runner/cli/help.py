"""The ``--help`` of the commands that read the cutechess vocabulary: its words as panels.

Typer only knows the options it parses itself; ``play``, ``match``, ``gauntlet``,
``roundrobin`` and ``engine check`` read their ``--engine``/``--draw``... words on their own,
so their help adds one panel per section of `runner.cli.vocabulary.help_sections`, which is
built from the same key tables the parser uses.
"""

from __future__ import annotations

from typing import Any

import typer.core
from typer.core import TyperCommand

__all__ = ["PASSTHROUGH", "VocabularyCommand", "vocabulary_help"]

PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}
"""Click context settings of the commands that read their words in `runner.cli.vocabulary`
rather than through Typer (defined here so that registering them imports no config code)."""


class VocabularyCommand(TyperCommand):
    """A Typer command whose help also lists the vocabulary words of `vocabulary`."""

    vocabulary = "match"
    """The command whose words are shown (``play``, ``match``, ``engine check``...)."""

    # Typer vendors its own click (typer._click), whose Context and HelpFormatter have no
    # public name: the arguments are passed through untouched.
    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Typer's help, then the vocabulary's sections (rich panels, or plain text)."""
        # Here: the vocabulary imports this module (PASSTHROUGH) at its top.
        from runner.cli.vocabulary import help_sections

        super().format_help(ctx, formatter)
        sections = help_sections(self.vocabulary)
        if self.rich_markup_mode is None or not typer.core.HAS_RICH:
            for title, rows in sections:
                with formatter.section(title):
                    formatter.write_dl(rows)
            return
        # Here: it imports rich.markdown and pygments, which only rendered help needs; and
        # rich's panels and tables (with decimal and fractions), which a run does not.
        from rich.console import Console
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text
        from typer import rich_utils

        console = Console(width=rich_utils.MAX_WIDTH)
        for title, rows in sections:
            table = Table.grid(padding=(0, 2))
            table.add_column(style="bold cyan", no_wrap=True)
            table.add_column()
            for word, meaning in rows:
                table.add_row(Text(word), Text(meaning))
            console.print(Panel(table, title=title, title_align="left", border_style="dim"))


def vocabulary_help(command: str) -> type[VocabularyCommand]:
    """The command class to register ``runner COMMAND`` with (``app.command(cls=...)``)."""
    return type(f"{command.title().replace(' ', '')}Command", (VocabularyCommand,),
                {"vocabulary": command})


INTERRUPT_HELP = (
    "Ctrl-C once: no new game starts, running games finish. Twice, or SIGTERM, or SIGHUP "
    "(the terminal closed): running games are aborted and not counted. Either way every "
    "engine is stopped (quit, then SIGTERM, then SIGKILL) and the tournament is marked "
    "interrupted. Exit status: 0 when done, 1 after an error, 2 for bad input, 128 + the "
    "signal's number when a signal interrupted the run (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."
)
"""The epilog of every command that plays games: how it stops and what it exits with."""

RERUN_HELP = (
    "The same words run again are the same tournament (same engines, settings and --name; "
    "without --name the name is the format and the engines' names): an interrupted one is "
    "continued and plays only its missing games (a --pgnout file gets each game once); a "
    "finished one, or other settings under the same name, start a new tournament. "
    + INTERRUPT_HELP
)
"""The epilog of ``runner match``, ``gauntlet`` and ``roundrobin``."""

PLAY_INTERRUPT_HELP = (
    "Ctrl-C, SIGTERM or SIGHUP aborts the game (no PGN is printed); the engines are stopped "
    "(quit, then SIGTERM, then SIGKILL), a second signal does not cut that short. Exit "
    "status: 0 when the game was played, 2 for bad input, 128 + the signal's number when a "
    "signal aborted it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."
)
"""The epilog of ``runner play``."""
