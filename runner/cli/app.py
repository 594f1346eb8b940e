"""The ``runner`` command line: thin Typer commands that call the library modules."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from runner.cli import hold_collector
from runner.cli.errors import UserError, open_db, report_error, unwrapped
from runner.cli.group import Lazy, RunnerGroup, lazy_group
from runner.cli.words import plural
from runner.text import shown

LAZY = (
    Lazy("play", "runner.cli.games", "Play one game between two --engine groups and print its "
         "PGN (the words it takes are below)."),
    Lazy("engine", "runner.cli.games", "Inspect engines."),
    Lazy("report", "runner.cli.report", "Standings, Elo +- 95%, LOS, pentanomial counts, "
         "terminations, faults and SPRT state of a tournament; --format html writes one "
         "self-contained page with plots."),
    Lazy("serve", "runner.cli.serve", "Serve the JSON API (/docs), the event streams and the "
         "web page (/): submit tournaments, watch them live, read their games and reports."),
    Lazy("build", "runner.cli.build", "Build an engine from a git ref of an allow-listed "
         "repository (a recipe of the engines file) and check its bench."),
    Lazy("test", "runner.cli.branch", "Test a branch against main: engines built from git "
         "refs."),
    Lazy("token", "runner.cli.token", "Tokens of the service: add one with a role, list, "
         "revoke."),
    Lazy("worker", "runner.cli.worker", "Inspect the Dask workers a tournament would run on, "
         "or join a runner serve as a remote worker."),
    Lazy("tb", "runner.cli.tablebase", "Probe Syzygy endgame tablebases."),
    Lazy("run", "runner.cli.plays", "Run (or resume) the tournament a TOML file describes."),
    Lazy("resume", "runner.cli.plays", "Resume a stored tournament with the configuration "
         "it was started with."),
    Lazy("match", "runner.cli.plays", "Two engines, every opening as a game pair (the "
         "words it takes are below)."),
    Lazy("gauntlet", "runner.cli.plays", "The first --engine against each of the others "
         "(the words it takes are below)."),
    Lazy("roundrobin", "runner.cli.plays", "Every --engine against every other (the words "
         "it takes are below)."),
    Lazy("tune", "runner.cli.plays", "Tune spin options with SPSA over game pairs (run "
         "again to continue after a stop)."),
    Lazy("list", "runner.cli.listing", "Tournaments in the database with their progress."),
    Lazy("export", "runner.cli.export",
         "Write stored games as PGN (or as training samples), streamed from the database."),
    Lazy("fastchess", "runner.cli.dropin", "fastchess's command line, unchanged (as "
         "runner-fastchess): its output and games, plus the runner's database and resume."),
    Lazy("cutechess", "runner.cli.dropin", "cutechess-cli's command line, unchanged (as "
         "runner-cutechess): its output and games, plus the runner's database and resume."),
)
"""The commands defined in modules of their own, in the order ``runner --help`` lists them
(after the few defined here): each module is imported when its command runs."""

app = typer.Typer(
    help="Run chess-engine matches, gauntlets and round-robins; compare engine versions.",
    no_args_is_help=True,
    add_completion=False,
    cls=lazy_group(LAZY),
)
console = unwrapped(Console(emoji=False))  # see runner.cli.errors.err_console


def _flag_type_hidden() -> None:
    """Hide the ``<bool>`` Typer shows after every flag (--quiet, --help...) in rich help.

    Still needed with Typer 0.29.2 (checked for issue 27): its ``TyperOption.display_type_rich``
    returns ``display_type()``, ``<bool>`` for a flag, and ``typer/rich_utils.py`` prints that
    in the type column of every flag's help row (its plain-text formatter skips flags; the
    rich one does not). A flag takes no value, so its row shows none: one override for every
    command, present and future, since Typer builds ``--help`` itself and takes no option
    class for it. Typer before 0.29 has no such method (nor the ``<bool>``): nothing to hide.
    tests/test_cli_text.py checks ``runner ... --help`` shows no ``<bool>``."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None:
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flag_type_hidden()


def _version(value: bool) -> None:
    """Print the installed version and exit (``runner --version``)."""
    if value:
        # The package's own number, which the installed metadata repeats (a test keeps the two
        # equal): importlib.metadata cost the answer a fifth of its start-up (issue 30).
        from runner.cli import version_text

        typer.echo(version_text(), nl=False)
        raise typer.Exit(0)


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Run chess-engine matches, gauntlets and round-robins; compare engine versions."""


if TYPE_CHECKING:
    from rich.table import Table

    from runner.stats import MatchStats


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


@app.command()
def stats(
    wdl: tuple[int, int, int] | None = typer.Option(
        None, "--wdl", metavar="W D L", help="Wins, draws, losses of the first engine."
    ),
    penta: tuple[int, int, int, int, int] | None = typer.Option(
        None, "--penta", metavar="LL LD DDWL WD WW", help="Game-pair counts, worst first."
    ),
    wl_pairs: int | None = typer.Option(
        None, "--wl-pairs", help="How many DD+WL pairs were win+loss (--penta, bayeselo only)."
    ),
    elo0: float | None = typer.Option(None, "--elo0", help="SPRT H0 bound (units: --model)."),
    elo1: float | None = typer.Option(None, "--elo1", help="SPRT H1 bound (units: --model)."),
    alpha: float = typer.Option(0.05, "--alpha", help="SPRT false-positive rate."),
    beta: float = typer.Option(0.05, "--beta", help="SPRT false-negative rate."),
    model: str = typer.Option(
        "normalized", "--model", help="Units of --elo0/--elo1: logistic, normalized, bayeselo."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Elo, error bars, LOS, nElo and SPRT from match counts (fishtest's figures)."""
    from runner import stats as st

    if (wdl is None) == (penta is None):
        raise UserError("give exactly one of --wdl W D L or --penta LL LD DDWL WD WW")
    if (elo0 is None) != (elo1 is None):
        raise UserError("an SPRT needs both --elo0 and --elo1")
    if wl_pairs is not None and penta is None:
        raise UserError("--wl-pairs splits the DD+WL pairs of --penta; it means nothing with --wdl")
    try:
        counts: st.Trinomial | st.Pentanomial
        if penta is not None:
            counts = st.Pentanomial(*penta, wl_pairs=wl_pairs)
        elif wdl is not None:  # exactly one of the two is given (checked above)
            counts = st.Trinomial(*wdl)
        spec = None
        if elo0 is not None and elo1 is not None:
            from runner.config.stored import LEGACY_MODEL_WORDS

            word = LEGACY_MODEL_WORDS.get(model.lower(), model.lower())  # an older word too
            if word not in {m.value for m in st.EloModel}:
                raise UserError(f"unknown --model {model!r}: logistic, normalized or bayeselo")
            spec = st.SprtSpec(elo0, elo1, alpha, beta, st.EloModel(word))
        result = st.match_stats(counts, spec)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if as_json:
        from runner.report.wire import StatsJson, wire_text

        payload = StatsJson.of(result)
        if not result.games:  # nothing was played: no figure exists (not the regularised ones)
            payload = payload.model_copy(update={
                key: None for key in StatsJson.model_fields
                if key not in ("games", "pairs", "sprt")})
        typer.echo(wire_text(payload, indent=2))
    elif not result.games:
        console.print("No games: there is no score, Elo, LOS or draw ratio to estimate.",
                      highlight=False)
    else:
        console.print(_stats_table(result, counts.low_to_high))


def _stats_table(result: MatchStats, counts: tuple[int, ...]) -> Table:
    """A rich table of a match's figures (percentages for LOS and draw ratios).

    Score and draw ratios are the observed ones, from `counts` (worst outcome first): the
    fishtest figures in `result` add a pseudo-count to every empty cell, so 10-0-0 would read
    as 99.99 % with 0.01 % draws. Elo, LOS and nElo keep the regularised model."""
    from rich.table import Table

    from runner import stats as st

    table = Table(title="Match statistics (fishtest conventions)", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    games = f"{result.games}" + (f" ({result.pairs} {plural(result.pairs, 'pair')})"
                                 if result.pairs is not None else "")
    table.add_row("Games", games)
    last = len(counts) - 1
    observed = [count / result.games if result.pairs is None else count / result.pairs
                for count in counts]
    table.add_row("Score", f"{100 * sum(i * p for i, p in enumerate(observed)) / last:.2f} %")
    table.add_row("Elo", f"{st.format_elo(result.elo, result.elo_error95, '.2f')} (95%)")
    table.add_row("LOS", st.format_percent(result.los, ".2f"))
    if result.draw_ratio is not None:
        table.add_row("Draw ratio", f"{100 * observed[1]:.2f} %")
    if result.pair_draw_ratio is not None:
        table.add_row("Pair draw ratio", f"{100 * observed[2]:.2f} %")
    table.add_row("nElo",
                  f"{st.format_elo(result.nelo, result.nelo_error95, '.2f')} (95%)")
    if result.sprt is not None:
        test = result.sprt
        bounds = f"{test.spec.model.value} [{test.spec.elo0:g}, {test.spec.elo1:g}]"
        table.add_row("SPRT", f"{bounds}, alpha {test.spec.alpha:g}, beta {test.spec.beta:g}")
        table.add_row(
            "LLR", f"{test.llr:.2f} ({test.lower_bound:.2f}, {test.upper_bound:.2f})"
        )
        table.add_row("Decision", test.decision.value)
    return table


pgn_app = typer.Typer(help="Inspect PGN files.", no_args_is_help=True, cls=RunnerGroup)
app.add_typer(pgn_app, name="pgn")
book_app = typer.Typer(help="Inspect opening books.", no_args_is_help=True, cls=RunnerGroup)
app.add_typer(book_app, name="book")


_PGN_FILES = typer.Argument(..., help="PGN files to read game by game.")


@pgn_app.command("check")
def pgn_check(files: list[str] = _PGN_FILES) -> None:
    """Count games and report broken ones with line numbers; exit 1 if any game is broken."""
    from pathlib import Path

    from runner.pgn.reader import check_pgn

    broken = 0
    for name in files:
        if not Path(name).is_file():
            raise UserError(f"{name}: no such file")
        report = check_pgn(name)
        for error in report.errors:
            console.print(shown(f"error: {error}"), highlight=False, markup=False,
                          soft_wrap=True)
        for notice in report.notices:
            console.print(shown(f"note: {notice}"), highlight=False, markup=False,
                          soft_wrap=True)
        console.print(
            f"{name}: {report.games} {plural(report.games, 'game')}, {len(report.errors)} broken",
            highlight=False, markup=False, soft_wrap=True,
        )
        broken += len(report.errors)
    if broken:
        raise typer.Exit(1)


@book_app.command("probe")
def book_probe(
    book: str = typer.Argument(..., help="Polyglot book (.bin)."),
    fen: str = typer.Option("startpos", "--fen", help="Position in FEN/X-FEN, or 'startpos'."),
    chess960: bool = typer.Option(False, "--chess960", help="Treat castling rights as Chess960."),
) -> None:
    """List the book moves for a position with their weights."""
    from runner.books.polyglot import probe

    try:
        lines = probe(book, fen, chess960=chess960)
    except OSError as exc:
        raise UserError(f"{book}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if not lines:
        console.print("no book moves for this position", highlight=False)
        return
    for line in lines:
        console.print(
            f"{line.san:<8} {line.uci:<6} weight {line.weight:>5}  {line.share:6.1%}"
            f"  learn {line.learn}",
            highlight=False,
        )


db_app = typer.Typer(help="Manage the results database.", no_args_is_help=True, cls=RunnerGroup)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def db_upgrade(
    db: str | None = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL or SQLite file (default: $RUNNER_DB, else ./runner.db).",
    ),
) -> None:
    """Create the database or bring its schema up to date (alembic upgrade head)."""
    with open_db(db) as store:
        console.print(f"{store.shown_url}: schema at revision {store.revision()}",
                      highlight=False, markup=False)


def main() -> None:
    """Entry point of the ``runner`` console script."""
    hold_collector(sys.argv[1:])
    if len(sys.argv) > 1 and sys.argv[1] in ("fastchess", "cutechess"):
        # The drop-ins' words are the peer's (-help, --version, -engine): none reaches Typer.
        from runner.dropin.main import main as dropin

        sys.exit(dropin(sys.argv[1], sys.argv[2:]))
    try:
        app()
    except UserError as exc:
        report_error(str(exc))
        sys.exit(2)
