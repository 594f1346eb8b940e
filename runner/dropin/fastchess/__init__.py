"""``runner-fastchess``: fastchess 1.8's command line, played by the runner.

`parse` reads the argv as fastchess 1.8.2 reads it (runner.dropin.fastchess.args: every
option, its defaults and its refusals), turns it into the tournament fastchess would play, in
its order (runner.dropin.fastchess.build), and into the settings of the output that prints
fastchess's lines and writes its PGN (runner.dropin.fastchess.output).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from runner.dropin.contract import DropinRun, Immediate, PeerOutput, PeerUsageError

if TYPE_CHECKING:
    from runner.dropin.fastchess.settings import FastchessSettings

__all__ = ["FASTCHESS_VERSION", "help_text", "parse", "version_text"]

FASTCHESS_VERSION = "1.8.2"
"""The fastchess release whose command line this entry point implements."""


def _runner_version() -> str:
    try:
        from importlib import metadata

        return metadata.version("cecp-runner")
    except Exception:  # an uninstalled checkout: the package's own number
        from runner import __version__

        return __version__


def version_text() -> str:
    """What ``-version`` prints: fastchess's version this implements first, then the runner's."""
    return f"runner-fastchess {FASTCHESS_VERSION} (cecp-runner {_runner_version()})\n"


def help_text() -> str:
    """What ``-help`` prints: fastchess's manual in short, and where the runner differs."""
    from runner.dropin.fastchess.manual import MANUAL

    return MANUAL.format(version=FASTCHESS_VERSION, runner=_runner_version())


def _output_factory(settings: FastchessSettings, printed: list[str],
                    ) -> Callable[[TextIO], PeerOutput]:
    """The output builder for the driver: fastchess's start-up lines first, then its output."""

    def make(stream: TextIO) -> PeerOutput:
        from runner.dropin.fastchess.output import FastchessOutput

        for line in printed:
            stream.write(line + "\n")
        stream.flush()
        return FastchessOutput(stream, settings)

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

    seed = options.seed if options.seed is not None else default_seed(argv)
    options.seed = seed
    try:
        config = build_config(options, seed)
    except FastchessError as exc:
        exc.printed = [*options.printed, *exc.printed]
        raise refuse(exc) from None
    except ValueError as exc:  # a setting the runner's model refuses
        raise PeerUsageError(f"runner-fastchess: {exc}", 1, stream="stdout") from None
    if config.openings is not None and config.openings.order.value == "random":
        options.printed.append("Indexing opening suite...")  # fastchess says so as it shuffles
    settings = build_settings(options)
    return DropinRun(peer="fastchess", config=config,
                     make_output=_output_factory(settings, list(options.printed)))
