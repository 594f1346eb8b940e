"""cutechess-cli 1.5's command line and output, as the `runner-cutechess` entry point speaks them.

`parse` reads the argv as cutechess-cli 1.5.1 does (runner.dropin.cutechess.args, with
runner.dropin.cutechess.engines for its engines, and .build for the tournament: every option,
its defaults and its refusals, word for word), and turns an accepted one into the tournament
cutechess-cli would play, in its order (`OrderStyle.STEPPED`, runner.dropin.cutechess.order:
its schedule and its opening suite), and the settings of the output that prints cutechess-cli's lines
and writes its PGN (runner.dropin.cutechess.output).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from runner import __version__
from runner.dropin.contract import DropinRun, Immediate, PeerOutput

if TYPE_CHECKING:
    from runner.config.model import TournamentConfig
    from runner.dropin.cutechess.args import Arguments
    from runner.dropin.cutechess.settings import CutechessSettings

__all__ = ["parse"]


def _immediate(argv: list[str]) -> Immediate | None:
    """cutechess-cli's first look at the words: the first of a version, engine-list or help
    word anywhere on the line answers at once."""
    for word in argv:
        if word in ("-v", "--version", "-version"):
            from runner.dropin.cutechess.args import version_text

            return Immediate(version_text(__version__))
        if word in ("--engines", "-engines"):
            from runner.dropin.cutechess.engines import configured_engines

            names = [str(entry.get("name", "")) for entry in configured_engines()]
            return Immediate("".join(f"{name}\n" for name in names))
        if word in ("--help", "-help"):
            from runner.dropin.cutechess.help import HELP

            return Immediate(HELP)
    return None


def parse(argv: list[str]) -> DropinRun | Immediate:
    """A cutechess-cli command line as a run, or an immediate answer; raises PeerUsageError
    with cutechess-cli's lines for one it refuses (and the runner's for one it cannot play)."""
    answer = _immediate(argv)
    if answer is not None:
        return answer
    from runner.dropin.cutechess import args as cc
    from runner.dropin.cutechess import build
    from runner.dropin.cutechess.order import STEPPED_STYLE

    read = cc.read_arguments(argv)
    if isinstance(read, Immediate):
        return read
    build.check_supported(read)
    config = _config(read)
    unnamed = [not engine.name for engine in read.engines]
    if any(unnamed):  # cutechess-cli names them as they name themselves
        from runner.dropin.cutechess.names import reported_names

        for engine, name in zip(read.engines, reported_names(config.engines, unnamed),
                                strict=True):
            engine.name = name
        config = _config(read)
    settings = build.settings_for(read, [e.name for e in config.engines], _total(config))
    return DropinRun(peer="cutechess", config=config,
                     make_output=_output_factory(settings, read), style=STEPPED_STYLE)


def _config(read: Arguments) -> TournamentConfig:
    """The tournament of an accepted command line; PeerUsageError when the runner's own
    checks refuse it (a program not found...)."""
    from runner.dropin.contract import checked_config
    from runner.dropin.cutechess import build as cc
    from runner.dropin.cutechess.order import cutechess_order

    table = cc.tournament_table(read)
    order = cutechess_order(
        tournament=read.tournament, games=read.games, rounds=read.rounds, repeat=read.repeat,
        policy=str(read.openings["policy"]) if read.openings else "default", swap=read.swap,
        reverse=read.reverse, seeds=read.seeds, srand=cc.seed_for(read))
    config = checked_config(table, program="runner-cutechess", order=order,
                            start_delay_ms=read.wait)
    return _dialogue(cc.with_engine_extras(config, read), echo=read.debug)


def _dialogue(config: TournamentConfig, *, echo: bool) -> TournamentConfig:
    """Every engine told its games in the lean CECP dialogue, the lines cutechess-cli 1.5.1
    writes to a CECP engine (tests/test_cecp_dialogue_peer.py compares them); with `echo`
    (``-debug all``) each line exchanged printed on stdout, in cutechess-cli's format."""
    from runner.protocol.engine import CecpDialogue

    engines = tuple(dataclasses.replace(spec, cecp_dialogue=CecpDialogue.LEAN, echo_lines=echo)
                    for spec in config.engines)
    return dataclasses.replace(config, engines=engines)


def _total(config: TournamentConfig) -> int:
    from runner.dropin.cutechess.order import STEPPED_STYLE
    from runner.tournament.pairing import pairing_for

    return pairing_for(config, STEPPED_STYLE).total()


def _output_factory(settings: CutechessSettings, read: Arguments,
                    ) -> Callable[[TextIO], PeerOutput]:
    """The output builder for the driver: what cutechess-cli printed while reading its
    command line first (``Indexing opening suite...``, a repetitions warning), then its
    output."""

    def make(stream: TextIO) -> PeerOutput:
        """The notices printed, then the output on `stream`."""
        from runner.dropin.cutechess.output import CutechessOutput

        for where, line in read.notices:
            target = stream if where == "stdout" else sys.stderr
            target.write(line + "\n")
            target.flush()
        return CutechessOutput(stream, settings)

    return make
