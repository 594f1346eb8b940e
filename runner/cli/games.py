"""CLI commands that play: ``runner play`` (one game) and ``runner engine check``.

Both read the cutechess vocabulary with `runner.cli.vocabulary`, as the tournament commands do.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from runner.app.play import Interrupted, PositionError, one_game, play_one
from runner.cli.errors import exit_on_error, fail, unwrapped
from runner.cli.group import RunnerGroup
from runner.cli.help import PASSTHROUGH, PLAY_INTERRUPT_HELP, vocabulary_help
from runner.cli.loop import run_async
from runner.cli.vocabulary import CommandLineError, read_arguments, read_engine
from runner.clock import TimeControl
from runner.config.check import ConfigError
from runner.game.record import game_pgn
from runner.game.slot import CannotSetUp, EngineFailed
from runner.protocol.engine import ClockState, EngineError, GameSetup, Side
from runner.protocol.factory import make_engine, stop_engines
from runner.protocol.uci import UciEngine
from runner.rules import Board
from runner.text import shown
from runner.tournament.runtime import engine_config

if TYPE_CHECKING:
    from runner.protocol.engine import Engine, EngineConfig

engine_app = typer.Typer(help="Inspect engines.", no_args_is_help=True, cls=RunnerGroup)
_err = unwrapped(Console(stderr=True, emoji=False))  # see runner.cli.errors.err_console


def play_command(ctx: typer.Context) -> None:
    """Play one game between two --engine groups and print its PGN (the words it takes are below)."""
    try:
        arguments = read_arguments(list(ctx.args), "play")
        count = len(arguments.table["engines"])
        if count != 2:
            raise CommandLineError(f"'runner play' needs exactly two --engine groups, got {count}")
        job = one_game(arguments.config(), fen=arguments.fen, moves=arguments.moves)
    except PositionError as exc:
        raise exit_on_error(CommandLineError(str(exc))) from None
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None

    outcome = run_async(play_one(job))
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
    code = run_async(_check(engine_config(entry), movetime, detect_uci=guessing))
    if code == _UCI_DETECTED:
        _err.print("This engine answers like a UCI engine; checking it again with --proto uci.",
                   highlight=False, markup=False)
        code = run_async(_check(engine_config(read_engine(argv, each=["proto=uci"])),
                                movetime))
    raise typer.Exit(code)


_UCI_DETECTED = -1
"""`_check`'s answer when the engine, spoken to in CECP, answered as a UCI engine."""
_UCI_SIGNS = ("id name ", "id author ", "uciok", "option name ")
"""How a UCI engine's lines start; Stockfish says "Unknown command: 'xboard'" instead."""


def _looks_uci(text: str) -> bool:
    """Whether a line an engine printed at start-up is a UCI engine's."""
    text = text.strip()
    return text.startswith(_UCI_SIGNS) or text.startswith(("Unknown command: 'xboard'",
                                                            "Unknown command: 'protover"))


async def _start(engine: Engine, *, detect_uci: bool) -> bool:
    """Start `engine`; with `detect_uci`, give up (returning False) as soon as it answers the
    CECP greeting with a UCI line, instead of waiting for features that never come."""
    task = asyncio.ensure_future(engine.start())
    seen = 0
    while True:
        done, _ = await asyncio.wait({task}, timeout=0.02)
        if done:
            task.result()
            return True
        if detect_uci:
            lines = engine.transcript
            if any(e.direction == "<" and _looks_uci(e.text) for e in lines[seen:]):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                return False
            seen = len(lines)


async def _check(config: EngineConfig, movetime: float, *, detect_uci: bool = False) -> int:


    # Names, features, options and errors all come from the engine: nothing here is markup,
    # and each is `shown` (its control characters as escapes, none sent to the terminal).
    console = unwrapped(Console(markup=False, highlight=False, emoji=False))
    engine = make_engine(config)
    try:
        began = time.monotonic()
        if not await _start(engine, detect_uci=detect_uci):
            return _UCI_DETECTED
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
        if config.protocol == "cecp":
            console.print("hint: if this is a UCI engine, check it with --proto uci")
        return 1
    finally:
        await stop_engines([engine])


def register(app: typer.Typer) -> None:
    """Add ``play`` and ``engine`` to the ``runner`` application."""
    app.command("play", cls=vocabulary_help("play"), context_settings=PASSTHROUGH,
                epilog=PLAY_INTERRUPT_HELP)(play_command)
    app.add_typer(engine_app, name="engine")
