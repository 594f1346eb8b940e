"""``runner tb probe`` and ``runner tb check``: Syzygy tablebases from the command line."""

from __future__ import annotations

import json
import os

import typer
from rich.console import Console

from runner.cli.errors import fail
from runner.cli.group import RunnerGroup
from runner.rules import Board, InvalidFenError, InvalidPositionError
from runner.tablebase import Tablebase, TablebaseError, table_names
from runner.text import shown

tb_app = typer.Typer(help="Probe Syzygy endgame tablebases.", no_args_is_help=True, cls=RunnerGroup)
_out = Console(highlight=False, emoji=False)

_WDL_WORDS = {2: "win", 1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}
_DIRS_HELP = "Tablebase directories, separated by ':' (every .rtbw/.rtbz file in them)."


def _open(dirs: str) -> Tablebase:
    """The tables of a ':'-separated directory list; exit 2 naming a directory that is not one."""
    if not any(part for part in dirs.split(os.pathsep)):
        raise fail("--tb needs at least one directory")
    try:
        return Tablebase.from_paths(dirs)
    except TablebaseError as exc:
        raise fail(str(exc)) from None


@tb_app.command("probe")
def tb_probe(
    fens: list[str] = typer.Argument(..., metavar="FEN...", help="Positions in FEN (quote each)."),
    tb: str = typer.Option(..., "--tb", metavar="DIRS", help=_DIRS_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per line: fen, wdl, dtz, "
                                                       "move (UCI, null when none)."),
) -> None:
    """Print the WDL, DTZ and best move by DTZ of each position.

    WDL is -2..2 from the side to move (1 a cursed win, -1 a blessed loss), DTZ signed plies
    to a zeroing move; what the tables cannot give is unknown (null in JSON).
    """
    boards = []
    for fen in fens:
        try:
            boards.append(Board(fen))
        except (InvalidFenError, InvalidPositionError) as exc:
            raise fail(f"bad FEN {fen!r}: {exc}") from None
    with _open(tb) as tables:
        for fen, board in zip(fens, boards, strict=True):
            try:
                wdl = tables.probe_wdl(board)
                dtz = tables.probe_dtz(board)
                move = tables.best_move(board)
            except TablebaseError as exc:
                raise fail(str(exc)) from None
            if as_json:
                typer.echo(json.dumps({"fen": fen, "wdl": wdl, "dtz": dtz,
                                       "move": move.uci() if move else None}))
                continue
            if wdl is None:
                line = "unknown (no table for this position)"
            else:
                line = f"WDL {wdl} ({_WDL_WORDS[wdl]}), DTZ {'unknown' if dtz is None else dtz}"
                if move is not None:
                    line += f", best {board.san(move)} ({move.uci()})"
            _out.print(shown(f"{fen}: {line}"), markup=False, soft_wrap=True)


@tb_app.command("check")
def tb_check(dirs: str = typer.Argument(..., metavar="DIRS", help=_DIRS_HELP)) -> None:
    """List the tables found by piece count, and the largest complete piece count.

    Complete: every WDL table of that many pieces and fewer is present. Exit 1 when no table
    is found.
    """
    with _open(dirs) as tables:
        names = tables.tables()
        if not names:
            raise fail(f"no Syzygy tables (*.rtbw, *.rtbz) in {dirs}", code=1)
        for pieces in range(3, tables.max_pieces + 1):
            found = [n for n in names if len(n) - 1 == pieces]
            if not found:
                continue
            expected = len(table_names(pieces))
            wdl = sum(tables.has_wdl(n) for n in found)
            dtz = sum(tables.has_dtz(n) for n in found)
            _out.print(f"{pieces} pieces: {wdl}/{expected} WDL, {dtz}/{expected} DTZ", markup=False)
            for name in found:
                kinds = "+".join(k for k, has in (("wdl", tables.has_wdl(name)),
                                                   ("dtz", tables.has_dtz(name))) if has)
                _out.print(f"  {name} ({kinds})", markup=False)
        complete = tables.complete_pieces
        _out.print(f"complete up to {complete} pieces" if complete >= 3
                   else "complete for no piece count (not every 3-piece table is present)",
                   markup=False)


def register(app: typer.Typer) -> None:
    """Add ``tb`` to the ``runner`` application."""
    app.add_typer(tb_app, name="tb")
