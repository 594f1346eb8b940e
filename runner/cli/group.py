"""The Typer group classes of ``runner``: commands loaded when used, no pydantic for --help.

`LazyGroup` lists commands by name and one-line help and imports a command's module only
when that command runs (or shows its own help): each command module imports what it needs
at its top, and ``runner --help`` or ``runner list`` pay for no other command's imports.


Typer 0.29 coerces each parameter's value through a pydantic validator it builds on first use
(importing pydantic costs a command about 60 ms of CPU), except a flag whose value is already
a bool. Its ``--help`` options, though, default to None, so every command run through a group
(``runner match ...`` too, which reads its words itself) paid for pydantic just to learn that
``--help`` was not given. Here an absent ``--help`` reads as False, as it always did with
click's own flags: the value is what the help callback already took it to mean, and no
validator is built. Older Typer (on click itself) defaults the flag to False: nothing changes.

Still needed with Typer 0.29.2 (checked for issue 27, which asked whether the lazy group made
it redundant): its vendored click builds the help option in ``typer/_click/decorators.py``
``help_option`` with no default; without the override, ``runner list --help``,
``export --help``, ``match --help`` and every ``runner match ...`` run import pydantic again
(five tests of tests/test_cli_startup.py fail; ``runner --help`` alone does not). The lazy
group does not help: each command it loads gets Typer's own help option.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["Lazy", "LazyCommand", "RunnerGroup", "lazy_group"]


def _absent_is_false(option: Any) -> None:
    """Make a help option that defaults to None default to False (the help callback reads
    both as "not asked")."""
    if option is not None and getattr(option, "default", False) is None:
        option.default = False


class RunnerGroup(TyperGroup):
    """A group whose own ``--help`` and its commands' ``--help`` default to False."""

    # Context, Command and Option are click's or Typer's vendored copy (typer._click), which
    # have no public names: they are passed through untouched.
    def get_help_option(self, ctx: Any) -> Any:
        """The group's help option, defaulting to False."""
        option = super().get_help_option(ctx)
        _absent_is_false(option)
        return option

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command `cmd_name`, its help option defaulting to False."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _absent_is_false(command.get_help_option(ctx))
        return command



@dataclass(frozen=True)
class Lazy:
    """A command of the group that is loaded on use: its name, its module, its help line."""

    name: str
    module: str
    """The module whose ``register(app)`` adds the command (and its siblings) to an app."""
    help: str
    """What ``runner --help`` lists for it (a test keeps it equal to the command's own)."""


class LazyCommand(TyperCommand):
    """Stands for a command until it is used: the group lists it by name and help line;
    running it (or its ``--help``) imports its module and hands the arguments to the real
    command, which click then invokes (`make_context`)."""

    def __init__(self, entry: Lazy) -> None:
        super().__init__(entry.name, help=entry.help, short_help=entry.help,
                         add_help_option=False)
        self.entry = entry
        self._real: Any = None

    def load(self) -> Any:
        """The real command (its module imported and registered once)."""
        if self._real is None:
            app = typer.Typer(cls=RunnerGroup)
            importlib.import_module(self.entry.module).register(app)
            self._real = typer.main.get_group(app).commands[self.entry.name]
        return self._real

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        """The real command's context: it parses the arguments and is the one invoked."""
        real = self.load()
        if parent is not None:
            _absent_is_false(real.get_help_option(parent))
        return real.make_context(info_name, args, parent=parent, **extra)


def lazy_group(commands: Sequence[Lazy]) -> type[RunnerGroup]:
    """A group class that lists `commands` after the ones defined with it, loaded on use."""

    class LazyGroup(RunnerGroup):
        """A `RunnerGroup` with commands loaded on use."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            for entry in commands:
                self.commands[entry.name] = LazyCommand(entry)

    return LazyGroup
