"""CLI commands that play: ``runner play`` (one game) and ``runner engine check``."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from runner.cli.vocabulary import EngineSpecError, group_options, parse_engine_tokens

if TYPE_CHECKING:
    from runner.game.adjudication import AdjudicationRules
    from runner.game.play import GameSpec
    from runner.protocol.engine import EngineConfig

# The engine, game and rules modules are imported by the commands that play, not with the CLI:
# 'runner report' or 'runner list' start faster without them.

engine_app = typer.Typer(help="Inspect engines.", no_args_is_help=True)
_err = Console(stderr=True)
_PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


class CommandError(Exception):
    """A user error in a play command: printed plainly, exit code 2."""


def parse_adjudication(groups: dict[str, list[str]]) -> AdjudicationRules:
    """Adjudication from ``--draw movenumber= movecount= score=``, ``--resign movecount= score=
    twosided=`` and ``--maxmoves N``."""
    from runner.game.adjudication import AdjudicationRules

    values: dict[str, object] = {}
    for key, tokens in groups.items():
        if key == "maxmoves":
            values["max_moves"] = _int_token(key, tokens[0] if tokens else "")
            continue
        if key not in ("draw", "resign"):
            continue
        for token in tokens:
            name, _, value = token.partition("=")
            field = {"draw": {"movenumber": "draw_move_number", "movecount": "draw_move_count",
                              "score": "draw_score"},
                     "resign": {"movecount": "resign_move_count", "score": "resign_score",
                                "twosided": "resign_two_sided"}}[key].get(name)
            if field is None:
                raise CommandError(f"unknown --{key} setting {token!r}")
            if field == "resign_two_sided":
                values[field] = value.lower() in ("1", "true", "yes", "on")
            else:
                values[field] = _int_token(f"--{key} {name}", value)
        if key == "draw":
            values.setdefault("draw_move_number", 0)
        if key == "resign":
            values.setdefault("resign_move_count", 3)
    try:
        return AdjudicationRules(**values)  # type: ignore[arg-type]
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


def _int_token(what: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CommandError(f"{what} needs a whole number, got {text!r}") from None


def play_command(ctx: typer.Context) -> None:
    """Play one game: --engine cmd=... (twice) [--each tc=10+0.1] [--fen F | --moves e2e4,e7e5]
    [--variant fischerandom] [--draw ...] [--resign ...] [--maxmoves N]; prints its PGN."""
    from runner.game.play import GameSpec
    from runner.protocol.engine import Variant
    from runner.rules import STARTING_FEN, Board
    from runner.tournament.records import game_pgn

    try:
        groups = group_options(list(ctx.args))
        engines = [tokens for key, tokens in groups if key == "engine"]
        single = {key: tokens for key, tokens in groups if key != "engine"}
        unknown = set(single) - {"each", "fen", "moves", "variant", "draw", "resign", "maxmoves"}
        if unknown:
            raise CommandError(f"unknown option --{sorted(unknown)[0]} for 'runner play'")
        if len(engines) != 2:
            raise CommandError(f"'runner play' needs exactly two --engine groups, got {len(engines)}")
        each = single.get("each", [])
        specs = [parse_engine_tokens(tokens, each) for tokens in engines]
        variant = Variant((single.get("variant") or ["standard"])[0])
        fen = " ".join(single["fen"]) if "fen" in single else None
        moves = tuple(m for part in single.get("moves", []) for m in part.split(",") if m)
        board = Board(fen or STARTING_FEN, chess960=variant is Variant.FISCHERANDOM)
        for uci in moves:
            board.push_uci(uci)
        spec = GameSpec(
            white_tc=specs[0].time_control(), black_tc=specs[1].time_control(), start_fen=fen,
            opening_moves=moves, variant=variant, adjudication=parse_adjudication(single),
            tags={"Event": "runner play"},
        )
    except (EngineSpecError, CommandError, ValueError) as exc:
        _err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from None
    record = asyncio.run(_play_one([s.config for s in specs], spec))
    sys.stdout.write(game_pgn(record))
    _err.print(f"{record.white} vs {record.black}: {record.result} ({record.reason})", highlight=False)


async def _play_one(configs: list[EngineConfig], spec: GameSpec):
    from runner.game.play import play_game
    from runner.protocol.factory import running_engines

    async with running_engines(configs) as (white, black):
        return await play_game(white, black, spec)


@engine_app.command("check", context_settings=_PASSTHROUGH)
def engine_check(
    ctx: typer.Context,
    proto: str = typer.Option("cecp", "--proto", help="cecp or uci"),
    movetime: float = typer.Option(1.0, "--movetime", help="Seconds for the test move."),
) -> None:
    """Start an engine (runner engine check -- CMD ARGS...), show its features, ping, one move."""
    argv = list(ctx.args)
    if not argv:
        _err.print("[bold red]error:[/] give the engine command after --, "
                   "e.g. runner engine check -- fairymax")
        raise typer.Exit(2)
    try:
        spec = parse_engine_tokens([f"cmd={argv[0]}", *(f"arg={a}" for a in argv[1:]), f"proto={proto}"])
    except EngineSpecError as exc:
        _err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from None
    code = asyncio.run(_check(spec.config, movetime))
    raise typer.Exit(code)


async def _check(config: EngineConfig, movetime: float) -> int:
    from runner.clock import TimeControl
    from runner.protocol.engine import ClockState, EngineError, GameSetup, Side
    from runner.protocol.factory import make_engine, stop_engines
    from runner.rules import Board

    console = Console()
    engine = make_engine(config)
    try:
        began = time.monotonic()
        await engine.start()
        console.print(f"[bold]{engine.name}[/] started in {time.monotonic() - began:.3f} s", highlight=False)
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
                      + (f", depth {info.depth}, score {info.score_cp}" if info else ""), highlight=False)
        await engine.end_game("*")
        return 0 if legality != "ILLEGAL" else 1
    except EngineError as exc:
        console.print(f"[bold red]engine failed:[/] {exc}", highlight=False)
        for entry in list(engine.transcript)[-20:]:
            console.print(str(entry), highlight=False, markup=False)
        return 1
    finally:
        await stop_engines([engine])
