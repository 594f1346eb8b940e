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

The values themselves go through pydantic too: Typer 0.29 coerces every typed option given
(and every one left out, to learn it is None) with a pydantic TypeAdapter built on first use,
so ``runner list --db X`` and ``runner stats --wdl ...`` paid for pydantic (about a third of
their start-up, issue 30) to turn "10" into 10. `plain_values` gives the options of plain
types (str, int, float, fixed tuples of them; a range of numbers) a coercion of their own for
the values it is sure of, written as Python reads them ("10", "-3", "0.5"), and hands any other
value to Typer's own, pydantic's: same values accepted, same error messages.

Still needed with Typer 0.29.2 (checked for issue 27, which asked whether the lazy group made
it redundant): its vendored click builds the help option in ``typer/_click/decorators.py``
``help_option`` with no default; without the override, ``runner list --help``,
``export --help``, ``match --help`` and every ``runner match ...`` run import pydantic again
(five tests of tests/test_cli_startup.py fail; ``runner --help`` alone does not). The lazy
group does not help: each command it loads gets Typer's own help option.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

# typer._coercion is private (checked with Typer 0.29.2): after a Typer upgrade, run
# tests/test_cli_startup.py (see docs/development.md, "Typer's private coercion API").
try:  # Typer 0.29's coercion (older Typer hands values to click's types: no pydantic)
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice, coerce_cli_path
except ImportError:  # pragma: no cover - depends on the installed Typer
    RuntimeParam = None  # type: ignore[assignment,misc]

__all__ = ["Lazy", "LazyCommand", "RunnerGroup", "help_renderer", "lazy_group", "plain_values"]

_PLAIN = (str, int, float)
"""The types whose values `plain_values` coerces itself."""
_UNSURE = object()
"""What `_plain` answers for a value it leaves to Typer's coercion."""


def _plain(annotation: Any, value: Any) -> Any:
    """`value` as `annotation` when it is one of the obvious cases, else `_UNSURE`."""
    if annotation is str:
        return value if isinstance(value, str) else _UNSURE
    if isinstance(value, bool):
        return _UNSURE
    if annotation is int:
        if isinstance(value, int):
            return value
        digits = value[1:] if isinstance(value, str) and value[:1] == "-" else value
        ok = isinstance(digits, str) and digits.isascii() and digits.isdigit()
        return int(value) if ok else _UNSURE
    if annotation is float:
        if isinstance(value, int | float):
            return float(value)
        digits = value[1:] if isinstance(value, str) and value[:1] == "-" else value
        whole, _, fraction = digits.partition(".") if isinstance(digits, str) else ("", "", "")
        ok = (whole.isascii() and whole.isdigit() and fraction.isascii()
              and (fraction == "" or fraction.isdigit()))
        return float(value) if ok else _UNSURE
    if get_origin(annotation) is tuple and isinstance(value, list | tuple):
        kinds = get_args(annotation)
        if len(kinds) != len(value) or Ellipsis in kinds:
            return _UNSURE
        items = tuple(_plain(kind, item) for kind, item in zip(kinds, value, strict=True))
        return _UNSURE if any(item is _UNSURE for item in items) else items
    return _UNSURE


def _handled(annotation: Any) -> bool:
    """Whether `_plain` knows `annotation` (a plain type, or a fixed tuple of them), or
    `_typer_own` does (an enum, a `Path`)."""
    if get_origin(annotation) is tuple:
        kinds = get_args(annotation)
        return bool(kinds) and all(kind in _PLAIN for kind in kinds)
    return annotation in _PLAIN or _is_class(annotation, Enum) or _is_class(annotation, Path)


def _is_class(annotation: Any, base: type) -> bool:
    """Whether `annotation` is a class derived from `base`."""
    return isinstance(annotation, type) and issubclass(annotation, base)


def _typer_own(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """`value` as Typer's coercion makes an enum or a `Path` of it, by the same functions its
    pydantic validators call (`coerce_cli_choice`, `coerce_cli_path`), when the value is one
    they take: a member's value (or the member), or a non-empty string without NUL naming a
    path that passes the option's checks. Anything else is `_UNSURE`, for Typer's own coercion
    to refuse with its own message. Typer 0.29 builds a pydantic validator for every such
    option, even one left out: ``runner report`` and ``export`` paid for pydantic (and
    importlib.metadata, which its plugin loader imports) for their ``--out`` (issue 38)."""
    try:
        if _is_class(annotation, Enum):
            return coerce_cli_choice(value, choices=list(annotation),
                                     case_sensitive=info.case_sensitive, ctx=ctx)
        if isinstance(value, str) and value and "\0" not in value and info.path_type is None:
            return coerce_cli_path(annotation(value), info, path_type=annotation,
                                   param=param, ctx=ctx)
    except Exception:  # Typer's own coercion says what is wrong, as before
        return _UNSURE
    return _UNSURE


if RuntimeParam is not None:
    @dataclass(frozen=True)
    class _PlainValue(RuntimeParam):
        """Typer's coercion of one option, pydantic's only for the values `_plain` is unsure
        of (or out of range): Typer's own is built then, with its messages."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info = self.parameter_info
            if _is_class(self.annotation, Enum) or _is_class(self.annotation, Path):
                converted = _typer_own(self.annotation, info, value, param, ctx)
                if converted is _UNSURE:
                    return build_runtime_param(param.type_descriptor)._coerce_value(
                        value, param, ctx)
                return converted
            converted = _plain(self.annotation, value)
            if converted is not _UNSURE and not isinstance(converted, str | tuple):
                if ((info.min is not None and converted < info.min)
                        or (info.max is not None and converted > info.max)):
                    converted = _UNSURE
            if converted is _UNSURE:
                return build_runtime_param(param.type_descriptor)._coerce_value(
                    value, param, ctx)
            return converted


def plain_values(command: Any) -> None:
    """Give `command`'s options and arguments of plain types (`_handled`, no parser, no
    clamping) the coercion that needs no pydantic for the values it is sure of."""
    if RuntimeParam is None:
        return
    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", 0) is not None:
            continue
        info = descriptor.parameter_info
        if (descriptor.file_annotation is None and info.parser is None and not info.clamp
                and _handled(descriptor.annotation)):
            param._runtime_param = _PlainValue(parameter_info=info,
                                               annotation=descriptor.annotation)


def _absent_is_false(option: Any) -> None:
    """Make a help option that defaults to None default to False (the help callback reads
    both as "not asked"), and have it load Typer's help renderer without Markdown
    (`help_renderer`) before it renders."""
    if option is None:
        return
    if getattr(option, "default", False) is None:
        option.default = False
    shown = getattr(option, "callback", None)
    if shown is not None and not getattr(shown, "renderer_first", False):
        def show_help(ctx: Any, param: Any, value: Any) -> Any:
            if value:
                help_renderer()
            return shown(ctx, param, value)

        show_help.renderer_first = True  # type: ignore[attr-defined]
        option.callback = show_help


class _Deferred(type):
    """The type of a stand-in for a class of another module, imported on first use: calling
    the stand-in, or reading one of its attributes, imports the module and answers for its
    class."""

    home: str

    def real(cls) -> Any:
        """The class this one stands for."""
        return getattr(importlib.import_module(cls.home), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real(), name)


_DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}
"""What `typer.rich_utils` imports at its top but uses only for Markdown help text (which
``runner`` does not write) and for tracebacks: about a fifth of ``runner --help``'s
start-up (markdown_it, pygments), issue 30."""


def help_renderer() -> None:
    """Import `typer.rich_utils` (Typer's rich help) with rich.markdown and rich.traceback
    standing in for themselves: its ``Markdown`` and ``Traceback`` import the real modules
    when first used. The stand-in modules are gone from `sys.modules` once it is imported,
    so any later import gets the real ones. Nothing to do when it is already imported."""
    if "typer.rich_utils" in sys.modules:
        return
    stand_ins = {}
    for module, name in _DEFERRED.items():
        if module not in sys.modules:
            stand_ins[module] = types.ModuleType(module)
            setattr(stand_ins[module], name, _Deferred(name, (), {"home": module}))
    sys.modules.update(stand_ins)
    try:
        importlib.import_module("typer.rich_utils")
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


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
        """The command `cmd_name`, its help option defaulting to False, its plain values
        coerced without pydantic (`plain_values`), its line in the group's list one
        paragraph (rich help keeps a docstring's line breaks, which cut the line short)."""
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _absent_is_false(command.get_help_option(ctx))
            plain_values(command)
            if command.short_help is None and command.help:
                command.short_help = " ".join(
                    inspect.cleandoc(command.help).split("\n\n")[0].split())
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
        plain_values(real)
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
