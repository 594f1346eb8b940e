"""``runner-fastchess``: fastchess 1.8's command line, played by the runner.

`parse` reads the argv as fastchess 1.8.2 reads it (runner.dropin.fastchess.args: every
option, its defaults and its refusals), turns it into the tournament fastchess would play, in
its order (runner.dropin.fastchess.build), and into the settings of the output that prints
fastchess's lines and writes its PGN (runner.dropin.fastchess.output).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from runner import __version__
from runner.dropin.contract import DropinRun, Immediate, PeerOutput, PeerUsageError

if TYPE_CHECKING:
    from runner.dropin.fastchess.settings import FastchessSettings

__all__ = ["FASTCHESS_VERSION", "help_text", "parse", "version_text"]

FASTCHESS_VERSION = "1.8.2"
"""The fastchess release whose command line this entry point implements."""


def version_text() -> str:
    """What ``-version`` prints: fastchess's version this implements first, then the runner's."""
    return f"runner-fastchess {FASTCHESS_VERSION} (cecp-runner {__version__})\n"


def help_text() -> str:
    """What ``-help`` prints: fastchess's manual in short, and where the runner differs."""
    from runner.dropin.fastchess.manual import MANUAL

    return MANUAL.format(version=FASTCHESS_VERSION, runner=__version__)


def _output_factory(settings: FastchessSettings, document: dict[str, Any],
                    ) -> Callable[[TextIO], PeerOutput]:
    """The output builder for the driver: fastchess's output, saving its resume file."""

    def make(stream: TextIO) -> PeerOutput:
        from runner.dropin.fastchess.output import FastchessOutput
        from runner.dropin.fastchess.resume import ConfigSaving

        names = [engine.name for engine in settings.engines]
        return ConfigSaving(FastchessOutput(stream, settings), document, settings.config_name,
                            settings.autosaveinterval, names, settings.report_penta)

    return make


def parse(argv: list[str]) -> DropinRun | Immediate:
    """fastchess's command line `argv` (without the program name) as a run of the runner, or
    an immediate answer (help, version); raises PeerUsageError where fastchess refuses."""
    from runner.dropin.fastchess.args import (
        FastchessError,
        HelpAsked,
        VersionAsked,
        read_argv,
        refuse,
    )

    if len(argv) >= 2 and argv[0] == "--compliance":
        raise PeerUsageError("runner-fastchess: --compliance (fastchess's engine check) is not "
                             "supported; play a short match instead", 1, stream="stdout")
    try:
        options = read_argv(argv)
    except HelpAsked:
        return Immediate(help_text())
    except VersionAsked:
        return Immediate(version_text())
    except FastchessError as exc:
        raise refuse(exc) from None

    from runner.dropin.fastchess.build import build_config, build_settings, default_seed

    try:
        if options.seed is None:
            options.seed = default_seed(options)
        config = build_config(options, options.seed)
    except FastchessError as exc:
        exc.printed = [*options.printed, *exc.printed]
        raise refuse(exc) from None
    except ValueError as exc:  # a setting the runner's model refuses
        raise PeerUsageError(f"runner-fastchess: {exc}", 1, stream="stdout") from None
    random_book = config.openings is not None and config.openings.order.value == "random"
    settings = build_settings(options, random_book=random_book)
    from runner.dropin.fastchess.order import INDEX_STYLE
    from runner.dropin.fastchess.resume import config_document

    return DropinRun(peer="fastchess", config=config,
                     make_output=_output_factory(settings, config_document(options)),
                     style=INDEX_STYLE)
