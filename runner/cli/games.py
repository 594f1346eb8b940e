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

from runner.cli.errors import exit_on_error
from runner.cli.help import vocabulary_help
from runner.cli.vocabulary import PASSTHROUGH, CommandLineError, read_arguments, read_engine
from runner.config.check import ConfigError

if TYPE_CHECKING:
    from runner.game.record import GameSpec
    from runner.protocol.engine import EngineConfig

# The engine, game and rules modules are imported by the commands that play, not with the CLI:
# 'runner report' or 'runner list' start faster without them.

engine_app = typer.Typer(help="Inspect engines.", no_args_is_help=True)
_err = Console(stderr=True)


def play_command(ctx: typer.Context) -> None:
    """Play one game between two --engine groups and print its PGN (the words it takes are below)."""
    from runner.game.record import GameSpec, game_pgn
    from runner.protocol.engine import Variant
    from runner.rules import STARTING_FEN, Board
    from runner.tournament.runtime import adjudication_rules, engine_config

    try:
        arguments = read_arguments(list(ctx.args), "play")
        count = len(arguments.table["engines"])
        if count != 2:
            raise CommandLineError(f"'runner play' needs exactly two --engine groups, got {count}")
        config = arguments.config()
        variant = Variant(config.variant.value)
        try:
            board = Board(arguments.fen or STARTING_FEN, chess960=variant is Variant.FISCHERANDOM)
            for uci in arguments.moves:
                board.push_uci(uci)
        except ValueError as exc:
            raise CommandLineError(str(exc)) from None
        white, black = config.engines
        spec = GameSpec(
            white_tc=config.time_control(white), black_tc=config.time_control(black),
            start_fen=arguments.fen, opening_moves=arguments.moves, variant=variant,
            adjudication=adjudication_rules(config.adjudication), tags={"Event": "runner play"},
        )
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None
    import asyncio

    record = asyncio.run(_play_one([engine_config(white), engine_config(black)], spec))
    sys.stdout.write(game_pgn(record))
    _err.print(f"{record.white} vs {record.black}: {record.result} ({record.reason})", highlight=False,
               markup=False)


async def _play_one(configs: list[EngineConfig], spec: GameSpec):
    from runner.game.play import play_game
    from runner.protocol.factory import running_engines

    async with running_engines(configs) as (white, black):
        return await play_game(white, black, spec)


@engine_app.command("check", cls=vocabulary_help("engine check"), context_settings=PASSTHROUGH)
def engine_check(
    ctx: typer.Context,
    proto: str = typer.Option("cecp", "--proto", help="cecp or uci (an --engine's proto= wins)."),
    movetime: float = typer.Option(1.0, "--movetime", help="Seconds for the test move."),
) -> None:
    """Start an engine (runner engine check -- CMD ARGS..., or --engine KEY=VALUE ...), show its
    features, ping, one move."""
    from runner.tournament.runtime import engine_config

    argv = list(ctx.args)
    if not argv:
        _err.print("[bold red]error:[/] give the engine command after --, "
                   "e.g. runner engine check -- fairymax")
        raise typer.Exit(2)
    if argv[0].lstrip("-") != "engine":
        argv = ["--engine", f"cmd={shlex.quote(argv[0])}", *(f"arg={a}" for a in argv[1:])]
    try:
        entry = read_engine(argv, each=[f"proto={proto}"])
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None
    import asyncio

    code = asyncio.run(_check(engine_config(entry), movetime))
    raise typer.Exit(code)


async def _check(config: EngineConfig, movetime: float) -> int:
    from runner.clock import TimeControl
    from runner.protocol.engine import ClockState, EngineError, GameSetup, Side
    from runner.protocol.factory import make_engine, stop_engines
    from runner.rules import Board

    # Names, features, options and errors all come from the engine: nothing here is markup.
    console = Console(markup=False, highlight=False)
    engine = make_engine(config)
    try:
        began = time.monotonic()
        await engine.start()
        console.print(f"{engine.name} started in {time.monotonic() - began:.3f} s")
        if engine.features:
            table = Table("feature", "value", title="features")
            for key, value in engine.features.items():
                table.add_row(key, str(value))
            console.print(table)
        if engine.options:
            table = Table("option", "type", "default", "min", "max", "choices", title="options")
            for option in engine.options.values():
                table.add_row(option.name, option.type, option.default or "",
                              "" if option.min is None else str(option.min),
                              "" if option.max is None else str(option.max), " | ".join(option.choices))
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
        console.print(f"move from the start position: {reply.move} {legality} in {reply.elapsed:.3f} s"
                      + (f", depth {info.depth}, score {info.score_cp}" if info else ""), highlight=False,
                      markup=False)
        await engine.end_game("*")
        return 0 if legality != "ILLEGAL" else 1
    except EngineError as exc:
        console.print(f"engine failed: {exc}", style="bold red")
        for entry in list(engine.transcript)[-20:]:
            console.print(str(entry), highlight=False, markup=False)
        return 1
    finally:
        await stop_engines([engine])
