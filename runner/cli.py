"""The ``runner`` command line: thin Typer commands that call the library modules."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

app = typer.Typer(
    help="Run chess-engine matches, gauntlets and round-robins; compare engine versions.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)


class UserError(Exception):
    """An error the user can act on: printed plainly, exit code 2."""


@app.command()
def perft(
    fen: str = typer.Argument(..., help="Position in FEN/X-FEN, or 'startpos'."),
    depth: int = typer.Argument(..., min=0, help="Search depth in plies."),
    divide: bool = typer.Option(False, "--divide", help="Print the node count below each move."),
    chess960: bool = typer.Option(False, "--chess960", help="Treat castling rights as Chess960."),
) -> None:
    """Count leaf nodes of the legal move tree (for debugging engines' move generators)."""
    from runner.rules import STARTING_FEN, Board, perft_divide

    try:
        board = Board(STARTING_FEN if fen == "startpos" else fen, chess960=chess960)
    except ValueError as exc:
        raise UserError(f"bad FEN {fen!r}: {exc}") from exc
    if divide:
        total = 0
        for move, count in perft_divide(board, depth):
            console.print(f"{move.uci()}: {count}", highlight=False)
            total += count
        console.print(f"\nNodes: {total}", highlight=False)
    else:
        from runner.rules import perft as count_nodes

        console.print(count_nodes(board, depth), highlight=False)


def main() -> None:
    """Entry point of the ``runner`` console script."""
    try:
        app()
    except UserError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        sys.exit(2)
