"""The Typer group class of every ``runner`` command group: no pydantic for an absent --help.

Typer 0.29 coerces each parameter's value through a pydantic validator it builds on first use
(importing pydantic costs a command about 60 ms of CPU), except a flag whose value is already
a bool. Its ``--help`` options, though, default to None, so every command run through a group
(``runner match ...`` too, which reads its words itself) paid for pydantic just to learn that
``--help`` was not given. Here an absent ``--help`` reads as False, as it always did with
click's own flags: the value is what the help callback already took it to mean, and no
validator is built. Older Typer (on click itself) defaults the flag to False: nothing changes.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

__all__ = ["RunnerGroup"]


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
