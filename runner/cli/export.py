"""``runner export``: stored games as PGN, or training samples from them, streamed from the
database, with filters."""

from __future__ import annotations

import enum
import sys
from pathlib import Path

import typer

from runner.cli.errors import err_console as _err
from runner.cli.errors import fail, open_db
from runner.cli.words import plural
from runner.config.check import unwritable
from runner.game.termination import GameTermination
from runner.rules import Result
from runner.text import shown


class ExportFormat(enum.StrEnum):
    """What `runner export` writes."""

    PGN = "pgn"
    SAMPLES = "samples"


def export_command(
    tournament_id: int | None = typer.Argument(None, help="Tournament id (default: the newest)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="File to write (default: stdout)."),
    engine: str | None = typer.Option(None, "--engine", help="Only games of this engine."),
    result: Result | None = typer.Option(None, "--result", help="Only games with this result."),
    termination: GameTermination | None = typer.Option(
        None, "--termination", help="Only games ended this way (e.g. 'time forfeit')."),
    db: str | None = typer.Option(None, "--db", help="Database URL."),
    format_: ExportFormat = typer.Option(
        ExportFormat.PGN, "--format",
        help="pgn, or samples: one 'FEN,score,result' line per position, for training an "
             "evaluation (docs/usage.md)."),
    every: int = typer.Option(1, "--every", min=1,
                              help="Samples: only every Nth ply of a game."),
    skip_check: bool = typer.Option(False, "--skip-check",
                                    help="Samples: leave out positions in check."),
    skip_captures: bool = typer.Option(
        False, "--skip-captures", help="Samples: leave out positions whose move was a capture."),
) -> None:
    """Write stored games as PGN (or as training samples), streamed from the database."""
    # Here, not at the top: ``runner export --help`` loads no database code.
    from runner.app.reading import ExportError, export_target, pgn_games, sample_lines

    samples = format_ is ExportFormat.SAMPLES
    if not samples and (every != 1 or skip_check or skip_captures):
        raise fail("--every, --skip-check and --skip-captures choose samples: add "
                   "--format samples")
    if out is not None and (problem := unwritable(out, create_parents=False)) is not None:
        raise fail(f"--out {out}: the file {problem}")
    count = 0
    with open_db(db, create=False) as store:
        try:
            tournament_id = export_target(store, tournament_id, engine)
        except ExportError as exc:
            raise fail(str(exc)) from None
        if samples:
            games = sample_lines(store, tournament_id, every=every, skip_check=skip_check,
                                 skip_captures=skip_captures, engine=engine, result=result,
                                 termination=termination)
        else:
            games = pgn_games(store, tournament_id, engine=engine, result=result,
                              termination=termination)
        handle = open(out, "w", encoding="utf-8") if out else sys.stdout  # noqa: SIM115
        # On a terminal, games stored by older runners (whose comments kept an engine's
        # control characters) are shown escaped; a file or a pipe gets the stored text.
        terminal = out is None and sys.stdout.isatty()
        try:
            for text in games:
                handle.write(shown(text, multiline=True) if terminal else text)
                count += 1
        except ValueError as exc:  # a stored move that does not replay: a damaged record
            raise fail(f"tournament {tournament_id}: a stored game does not replay ({exc}); "
                       f"{count} {'positions' if samples else 'games'} written") from None
        finally:
            if out:
                handle.close()
    unit = "position" if samples else "game"
    _err.print(f"{count} {plural(count, unit)} of tournament {tournament_id} exported"
               f"{f' to {out}' if out else ''}", highlight=False, markup=False)
    if not count and (engine or result or termination):
        _err.print("warning: no stored game matches the filters (--engine, --result, "
                   "--termination)", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add ``export`` to the ``runner`` application."""
    app.command("export")(export_command)
