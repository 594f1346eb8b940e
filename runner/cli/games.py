"""CLI commands that play: ``runner play`` (one game) and ``runner engine check``.

Both read the cutechess vocabulary with `runner.cli.vocabulary`, as the tournament commands do.
"""

from __future__ import annotations

import shlex
import sys
import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from runner.cli.errors import exit_on_error, fail, unwrapped
from runner.cli.group import RunnerGroup
from runner.cli.help import PASSTHROUGH, PLAY_INTERRUPT_HELP, vocabulary_help
from runner.text import shown

# The game, engine and tournament code is imported in the commands' bodies: their --help
# loads none of it.

if TYPE_CHECKING:
    from runner.protocol.engine import EngineConfig

engine_app = typer.Typer(help="Inspect engines.", no_args_is_help=True, cls=RunnerGroup)
_err = unwrapped(Console(stderr=True, emoji=False))  # see runner.cli.errors.err_console


def play_command(ctx: typer.Context) -> None:
    """Play one game between two --engine groups and print its PGN (the words it takes are below)."""
    from runner.app.play import Interrupted, PositionError, one_game, play_config
    from runner.cli.loop import run_async
    from runner.cli.vocabulary import CommandLineError, read_arguments
    from runner.config.check import ConfigError
    from runner.game.record import game_pgn
    from runner.game.slot import CannotSetUp, EngineFailed

    try:
        arguments = read_arguments(list(ctx.args), "play")
        count = len(arguments.table["engines"])
        if count != 2:
            raise CommandLineError(f"'runner play' needs exactly two --engine groups, got {count}")
        config = arguments.config()
        one_game(config, fen=arguments.fen, moves=arguments.moves)  # checked before any start
    except PositionError as exc:
        raise exit_on_error(CommandLineError(str(exc))) from None
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None

    # An engine given no proto= is asked, as a tournament's are (one rule for both).
    outcome = run_async(play_config(config, fen=arguments.fen, moves=arguments.moves,
                                    say=_note))
    if isinstance(outcome, Interrupted):
        _err.print(f"game interrupted (exit status {outcome.exit_status}); the engines are stopped",
                   highlight=False, markup=False)
        raise typer.Exit(outcome.exit_status)
    if isinstance(outcome, EngineFailed):
        raise fail(f"engine {outcome.engine} did not start: {outcome.reason}", code=1)
    if isinstance(outcome, CannotSetUp):
        raise fail(f"the game cannot be played: {outcome.reason}", code=1)
    record = outcome.record
    sys.stdout.write(game_pgn(record))
    _err.print(shown(f"{record.white} vs {record.black}: {record.result} ({record.reason})"),
               highlight=False, markup=False)


@engine_app.command("check", cls=vocabulary_help("engine check"), context_settings=PASSTHROUGH)
def engine_check(
    ctx: typer.Context,
    proto: str | None = typer.Option(
        None, "--proto", help="cecp or uci (an --engine's proto= wins; default: cecp, switching "
        "to uci when the engine answers CECP's greeting as a UCI engine does)."),
    movetime: float = typer.Option(1.0, "--movetime", help="Seconds for the test move."),
) -> None:
    """Start an engine (runner engine check -- CMD ARGS..., or --engine KEY=VALUE ...), show its
    features, ping, one move."""
    from runner.cli.loop import run_async
    from runner.cli.vocabulary import CommandLineError, read_engine
    from runner.config.check import ConfigError
    from runner.config.model import Protocol
    from runner.tournament.protocols import detect_protocol
    from runner.tournament.runtime import engine_config

    argv = list(ctx.args)
    if not argv:
        _err.print("[bold red]error:[/] give the engine command after --, "
                   "e.g. runner engine check -- fairymax")
        raise typer.Exit(2)
    if argv[0].lstrip("-") != "engine":
        argv = ["--engine", f"cmd={shlex.quote(argv[0])}", *(f"arg={a}" for a in argv[1:])]
    try:
        entry = read_engine(argv, each=[f"proto={proto or 'cecp'}"])
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None

    guessing = proto is None and not any(word.startswith("proto=") for word in argv)
    # The same detection as `runner play` and the tournaments (an engine that does not start
    # is checked over CECP, which shows why).
    if guessing and run_async(detect_protocol(entry)) is Protocol.UCI:
        _err.print("This engine answers like a UCI engine; checking it with --proto uci.",
                   highlight=False, markup=False)
        entry = read_engine(argv, each=["proto=uci"])
    raise typer.Exit(run_async(_check(engine_config(entry), movetime)))


def _note(line: str) -> None:
    """Say one line on stderr, as it is (an engine's name in it is no markup)."""
    _err.print(line, highlight=False, markup=False, soft_wrap=True)


async def _check(config: EngineConfig, movetime: float) -> int:
    """Start the engine, show what it declares, ping it, ask one move; the exit status."""
    from runner.clock import TimeControl
    from runner.protocol.engine import ClockState, EngineError, GameSetup, Side
    from runner.protocol.factory import make_engine, stop_engines
    from runner.protocol.uci import UciEngine
    from runner.rules import Board
    from runner.types import Protocol

    # Names, features, options and errors all come from the engine: nothing here is markup,
    # and each is `shown` (its control characters as escapes, none sent to the terminal).
    console = unwrapped(Console(markup=False, highlight=False, emoji=False))
    engine = make_engine(config)
    try:
        began = time.monotonic()
        await engine.start()
        console.print(f"{shown(engine.name)} started in {time.monotonic() - began:.3f} s")
        if isinstance(engine, UciEngine) and engine.id_name:  # CECP's myname is in its features
            console.print(f"id name: {shown(engine.id_name)}")
        if engine.features:
            table = Table("feature", "value", title="features")
            for key, value in engine.features.items():
                table.add_row(shown(key), shown(str(value)))
            console.print(table)
        if engine.options:
            table = Table("option", "type", "default", "min", "max", "choices", title="options")
            for option in engine.options.values():
                table.add_row(*map(shown, (
                    option.name, option.type, option.default or "",
                    "" if option.min is None else str(option.min),
                    "" if option.max is None else str(option.max), " | ".join(option.choices))))
            console.print(table)
        latency = await engine.ping()
        console.print("ping: not supported" if latency is None else f"ping: {latency * 1000:.2f} ms")
        tc = TimeControl.parse(f"st={movetime}")
        await engine.new_game(GameSetup(time_control=tc, side=Side.WHITE))
        reply = await engine.play([], ClockState(own=movetime), timeout=movetime * 3 + 5)
        board = Board()
        try:
            move = board.parse_uci(reply.move or "")
            legality = f"legal ({board.san(move)})"
        except ValueError:
            legality = "ILLEGAL"
        info = reply.info
        move_text = shown(str(reply.move))
        console.print(f"move from the start position: {move_text} {legality} in {reply.elapsed:.3f} s"
                      + (f", depth {info.depth}, score {info.score_cp}" if info else ""), highlight=False,
                      markup=False)
        await engine.end_game("*")
        return 0 if legality != "ILLEGAL" else 1
    except EngineError as exc:
        console.print(f"engine failed: {shown(str(exc), multiline=True)}", style="bold red")
        for entry in list(engine.transcript)[-20:]:
            console.print(shown(str(entry)), highlight=False, markup=False)
        if config.protocol is Protocol.CECP:
            console.print("hint: if this is a UCI engine, check it with --proto uci")
        return 1
    finally:
        await stop_engines([engine])


def register(app: typer.Typer) -> None:
    """Add ``play`` and ``engine`` to the ``runner`` application."""
    app.command("play", cls=vocabulary_help("play"), context_settings=PASSTHROUGH,
                epilog=PLAY_INTERRUPT_HELP)(play_command)
    app.add_typer(engine_app, name="engine")
