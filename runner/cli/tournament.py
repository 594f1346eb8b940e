"""CLI commands that play tournaments: ``run``, ``resume``, ``match``, ``gauntlet``, ``roundrobin``.

``match``, ``gauntlet`` and ``roundrobin`` take the cutechess-cli/fastchess vocabulary with
double dashes (``--engine cmd=fairymax name=fm proto=cecp option.Hash=16 --each tc=10+0.1
--rounds 50``), read by `runner.cli.vocabulary` into the same table a TOML file gives.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from runner.app.lifecycle import NoSuchTournament, finished, resumable, start
from runner.app.modes import StartMode, tournament_db
from runner.cli.errors import err_console as _err
from runner.cli.errors import exit_on_error, fail, missing_extra, open_db, report_error, unwrapped
from runner.cli.help import INTERRUPT_HELP, PASSTHROUGH, RERUN_HELP, vocabulary_help
from runner.cli.loop import run_async
from runner.cli.vocabulary import CommandLineError, read_arguments
from runner.cli.words import plural
from runner.cluster.sizing import default_local_workers
from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.config.parse import load_config
from runner.store.store import Store
from runner.text import shown
from runner.tournament.events import (
    AlreadyFinished,
    Event,
    GameFinished,
    GameStarted,
    Notice,
    RunOutcome,
    TournamentError,
)
from runner.tournament.protocols import resolve_protocols
from runner.tournament.run import Tournament
from runner.tournament.scoreboard import Scoreboard, summary_lines
from runner.tournament.writer import GameWriter, PgnFileError

if TYPE_CHECKING:  # the live view's modules: imported when it is shown, not by --quiet runs
    from rich.live import Live
    from rich.progress import Progress, TaskID

_out = unwrapped(Console(emoji=False))  # see runner.cli.errors.err_console


# -- running ------------------------------------------------------------------------------------


class _View:
    """What the user sees while games run: a live progress bar and standings, or plain lines."""
    def __init__(self, tournament: Tournament, *, quiet: bool, live: bool,
                 rating_interval: int = 0) -> None:
        self.tournament = tournament
        self.quiet = quiet
        self.live_enabled = live and not quiet
        # cutechess-cli's lines on stdout after each game, unless the live view shows them
        # on the same terminal.
        self.score_lines = not quiet and not (self.live_enabled and _out.is_terminal)
        self.rating_interval = rating_interval
        self.progress: Progress | None = None
        """The bar the live view shows (None without one: plain lines show no bar)."""
        self.task: TaskID | None = None
        if self.live_enabled:
            from rich.progress import (  # here: --quiet runs and the other commands skip it
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            # The live display redraws every quarter second, so the elapsed time runs between
            # games too (the remaining time is an estimate from finished games).
            self.progress = Progress(
                TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                MofNCompleteColumn(), TextColumn("games,"), TimeElapsedColumn(),
                TextColumn("elapsed,"), TimeRemainingColumn(), TextColumn("left"),
                console=_err, transient=False)
            self.task = self.progress.add_task(shown(tournament.config.name),
                                               total=tournament.total_games,
                                               completed=tournament.done_games)
        self.live: Live | None = None
        self.last_notice = ""

    def __enter__(self) -> _View:
        if self.live_enabled:
            from rich.live import Live

            self.live = Live(self._render(), console=_err, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.__exit__(None, None, None)

    def _render(self) -> Group:
        table = standings_table(self.tournament.scoreboard)
        parts: list[Any] = [self.progress, table]
        sprt = self.tournament.sprt_result
        if sprt is not None:
            parts.append(f"SPRT: LLR {sprt.llr:.2f} [{sprt.lower_bound:.2f}, "
                         f"{sprt.upper_bound:.2f}] {sprt.decision.value}")
        if self.last_notice:
            parts.append(f"[yellow]{escape(shown(self.last_notice, multiline=True))}[/]")
        return Group(*parts)

    def event(self, event: Event) -> None:
        """Show one event of the run."""
        if isinstance(event, GameFinished):
            if not event.replay and self.progress is not None and self.task is not None:
                self.progress.update(self.task, completed=self.tournament.done_games)
            if not self.live_enabled and not self.quiet:
                job = event.job
                tail = " (will be replayed)" if event.replay else ""
                _err.print(shown(f"Finished game {job.index + 1} ({job.white} vs {job.black}): "
                                 f"{event.result} {{{event.reason}}}{tail}"),
                           highlight=False, markup=False)
            if not event.replay and self.score_lines:
                self._score_lines(event.job.white, event.job.black)
        elif isinstance(event, GameStarted):
            if not self.live_enabled and not self.quiet:
                job = event.job
                _err.print(shown(f"Started game {job.index + 1} of {self.tournament.total_games} "
                                 f"({job.white} vs {job.black})"), highlight=False, markup=False)
        elif isinstance(event, Notice):
            self.last_notice = event.text
            if not self.live_enabled:
                _err.print(f"[yellow]{escape(shown(event.text, multiline=True))}[/]",
                           highlight=False, soft_wrap=True)
        if self.live is not None:
            self.live.update(self._render())


    def _score_lines(self, white: str, black: str) -> None:
        """After a game, as cutechess-cli: two engines, the score line (and the whole summary
        every `rating_interval` games); more engines, the ranking every `rating_interval`."""
        board = self.tournament.scoreboard
        every = self.rating_interval
        due = every > 0 and board.games % every == 0
        if len(board.tally.engine_names) == 2:
            lines = summary_lines(board.pairing_of(white, black))
            lines = lines if due else lines[:1]
        else:
            lines = [*board.ranking_lines(), ""] if due else []
        for line in lines:
            _out.print(shown(line), highlight=False, soft_wrap=True, markup=False)


def standings_table(board: Scoreboard) -> Table:
    """The current standings as a rich table."""
    table = Table(title="Standings", title_justify="left")
    for column in ("#", "Engine", "Games", "Points", "Score", "W", "D", "L"):
        table.add_column(column, justify="left" if column == "Engine" else "right")
    for rank, standing in enumerate(board.ranked(), start=1):
        score = "-" if standing.score is None else f"{100 * standing.score:.1f}%"
        table.add_row(str(rank), Text(shown(standing.name)), str(standing.games),
                      f"{standing.points:g}", score, str(standing.wins), str(standing.draws),
                      str(standing.losses))
    return table


def run_tournament(config: TournamentConfig, *, db_url: str | None, quiet: bool,
                   mode: StartMode, tournament_id: int | None = None,
                   concurrency: int | None = None, rating_interval: int = 0,
                   workers: int | None = None, cluster: str | None = None) -> RunOutcome:
    """Open the database, play the tournament with a view, print the summary; returns the outcome.

    `workers` None with no `cluster` (here or in the file) picks the default
    (`default_local_workers`); 0 plays in this process."""
    url, source = tournament_db(db_url, config)
    store = open_db(url, source=source)  # a wrong --db is said before any engine starts
    if workers is None and cluster is None and config.cluster is None:
        # Nothing said where to play: past what one process relays in time, local workers.
        workers = default_local_workers(concurrency or config.concurrency) or None
        if workers:
            _err.print(f"{concurrency or config.concurrency} games at once: played on "
                       f"{workers} local worker processes (one process would relay their "
                       "moves too late at short time controls); --workers 0 plays them in "
                       "this process", highlight=False, markup=False, soft_wrap=True)
    try:
        if workers or cluster or (config.cluster is not None and workers != 0):
            _require_cluster_extra()
        # Before anything is compared or stored: the detected protocol is part of the config.
        config = run_async(resolve_protocols(config, lambda line: _err.print(
            line, highlight=False, markup=False, soft_wrap=True)))
        if tournament_id is None and (done := finished(store, config, mode)) is not None:
            _say_finished(store, config, done.tournament_id, done.total_games, done.changed)
        tournament = start(config, store, mode, tournament_id=tournament_id,
                           concurrency=concurrency, workers=workers, cluster=cluster,
                           lease_timeout=_lease_timeout())
        try:
            tournament.prepare()
        except AlreadyFinished as exc:  # finished while this run waited for the first's lock
            _say_finished(store, config, exc.tournament_id, exc.total_games, exc.changed)
        except TournamentError as exc:
            raise fail(str(exc), exc.exit_code) from None
        if tournament.done_games and not quiet:
            _err.print(f"Resuming tournament {tournament.tournament_id} "
                       f"({config.name!r}): {tournament.done_games} of "
                       f"{tournament.total_games} {plural(tournament.total_games, 'game')} "
                       "already played", highlight=False, markup=False)
        view = _View(tournament, quiet=quiet, live=_err.is_terminal,
                     rating_interval=rating_interval)

        began = time.monotonic()
        outcome: RunOutcome | None = None
        try:
            with view:
                try:
                    outcome = run_async(tournament.run(handle_signals=True, on_event=view.event))
                except TournamentError as exc:  # another runner took the tournament meanwhile
                    raise fail(str(exc), exc.exit_code) from None
            if outcome.taken_over and outcome.error:  # the standings are the other runner's
                raise fail(outcome.error, 1)
            _print_summary(outcome, time.monotonic() - began, store.shown_url)
        except OSError:
            # The terminal is gone (SIGHUP): the run is stored and its engines are stopped;
            # nothing can be shown any more, the exit status still tells what happened.
            if outcome is None or outcome.signal is None:
                raise
        return outcome
    finally:
        store.close()


LEASE_TIMEOUT_VAR = "RUNNER_LEASE_TIMEOUT"
"""Seconds a run may go silent before another runner may take its tournament over (default
60): a test's short pause, or a long one for hosts that suspend."""


def _require_cluster_extra() -> None:
    """Exit 2 in one line saying what to install when games are to run on Dask and the
    cluster extra is missing: checked before any engine is started to detect its protocol."""
    try:
        import distributed  # noqa: F401 - only whether it imports
    except ImportError as exc:
        raise missing_extra(exc, "playing on Dask (--workers, --cluster or the file's "
                            "[cluster])", "cluster") from None


def _lease_timeout() -> float | None:
    """The lease timeout ``RUNNER_LEASE_TIMEOUT`` asks for (None: the default)."""
    value = os.environ.get(LEASE_TIMEOUT_VAR)
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise fail(f"{LEASE_TIMEOUT_VAR}={value!r}: give a number of seconds above 0")
    return seconds


def _say_finished(store: Store, config: TournamentConfig, found: int, total: int,
                  changed: bool) -> NoReturn:
    """Say that tournament `found` is finished, and exit 0 (its PGN file made whole first):
    running the same file again used to start a new tournament silently (and append every
    game to the same --pgnout file)."""
    _repair_pgn(store, config, found)
    where = store.shown_url
    _err.print(f"Tournament {found} ({config.name!r}) in {where} is already finished "
               f"({total} {plural(total, 'game')} planned): nothing to play"
               + (" (this file's settings differ from the ones it was played with)."
                  if changed else ".") + "\n"
               f"See its results with 'runner report {found}', or start a new tournament from "
               "this file with --new.", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(0)


def _repair_pgn(store: Store, config: TournamentConfig, found: int) -> None:
    """Write the games of the finished tournament `found` that its PGN file lacks (a deleted
    or cut file), as every run and resume does before playing: a run with nothing to play
    used to leave the file missing."""
    if config.pgnout is None:
        return
    writer = GameWriter(store.db, found, config.pgnout)
    try:
        written = writer.repair_pgn()
    except PgnFileError as exc:
        raise fail(str(exc), 1) from None
    finally:
        writer.close()
    if written:
        _err.print(f"{written} stored {plural(written, 'game')} written again to the PGN file "
                   f"{config.pgnout}, which lacked them", highlight=False, markup=False)


def _print_summary(outcome: RunOutcome, seconds: float, url: str) -> None:
    board = outcome.scoreboard
    ranking = board.ranking_lines() + [""] if len(board.tally.engine_names) > 2 else []
    # An engine that never moved lost by not playing: no score, only the error below.
    for line in [] if outcome.void else ranking + board.summary_lines():
        _out.print(shown(line), highlight=False, soft_wrap=True, markup=False)
    if outcome.sprt is not None and not outcome.void:
        s = outcome.sprt
        _out.print(f"SPRT: llr {s.llr:.3f}, lbound {s.lower_bound:.3f}, ubound "
                   f"{s.upper_bound:.3f} - {s.decision.value}", highlight=False)
    state = outcome.status.value
    _err.print(f"Tournament {outcome.tournament_id} {state}: {outcome.done} of "
               f"{outcome.total_games} {plural(outcome.total_games, 'game')} stored "
               f"({outcome.played_now} in this run, "
               f"{seconds:.1f} s) in {url}", highlight=False, soft_wrap=True, markup=False)
    if outcome.error:
        report_error(outcome.error)
    if state == "finished" or outcome.void or outcome.refused:
        return  # nothing is missing, or the same command would fail the same way
    if outcome.error is None:  # stopped by a signal: nothing stands in the way of a new run
        _err.print("Run the same command again to play the missing games.", highlight=False)
    else:
        _err.print("Once the cause above is fixed, the same command plays the missing games "
                   "(the stored ones are kept).", highlight=False, soft_wrap=True)


def _load(path: Path) -> TournamentConfig:
    """The tournament file `path`, checked (exit 2 saying what is wrong)."""
    try:
        return load_config(path)
    except ConfigError as exc:
        raise exit_on_error(exc) from None


def run_command(
    config_file: Path = typer.Argument(..., help="Tournament file (TOML)."),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: RUNNER_DB or ./runner.db)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the file)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines only."),
    force: bool = typer.Option(
        False, "--force", help="Continue the tournament of this name with the changed file, "
        "finished or not: games that still fit are kept and only the games the change adds "
        "are played (added engines, more rounds); games of removed engines or dropped rounds "
        "stay stored but are not counted; a new time control or other setting applies to the "
        "games still to play. A finished tournament with no change plays nothing."),
    new: bool = typer.Option(False, "--new", help="Start a new tournament even if one can resume."),
    workers: int | None = typer.Option(
        None, "--workers", min=0, help="Play on N local Dask worker processes (0: in this "
        "process; default: in this process unless the concurrency is more than one process "
        "relays in time and the cluster extra is installed)."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="ADDR",
                                       help="Play on the Dask scheduler at ADDR (tcp://HOST:8786)."),
) -> None:
    """Run (or resume) the tournament a TOML file describes."""
    config = _load(config_file)
    if workers is not None and cluster is not None:
        raise fail("give --workers (a local cluster) or --cluster (a running scheduler), not both")
    mode = StartMode.NEW if new else StartMode.FORCE if force else StartMode.CONTINUE
    outcome = run_tournament(config, db_url=db, quiet=quiet, mode=mode,
                             concurrency=concurrency, workers=workers, cluster=cluster)
    raise typer.Exit(outcome.exit_status)


def resume_command(
    tournament_id: int = typer.Argument(..., help="Tournament id (see 'runner list')."),
    db: str | None = typer.Option(None, "--db", help="Database URL."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the stored setting)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines only."),
) -> None:
    """Resume a stored tournament with the configuration it was started with."""
    with open_db(db, create=False) as store:
        try:
            found = resumable(store, tournament_id)
        except NoSuchTournament as exc:
            raise fail(str(exc)) from None
        except ConfigError as exc:
            raise exit_on_error(exc) from None
        url = store.url
    if found.legacy:
        _err.print("[yellow]This tournament was stored by an older runner, which did not keep "
                   "the engines' env and castling960 settings: they are resumed with their "
                   "defaults.[/]", highlight=False)
    outcome = run_tournament(found.config, db_url=url, quiet=quiet, mode=StartMode.CONTINUE,
                             tournament_id=tournament_id, concurrency=concurrency)
    raise typer.Exit(outcome.exit_status)


# -- match, gauntlet and round-robin from the command line -------------------------------------


def _cli_run(ctx: typer.Context, command: str) -> None:
    """Read the cutechess words of ``runner COMMAND``, check them as a file's table, run."""
    try:
        arguments = read_arguments(list(ctx.args), command)
        config = arguments.config()
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None
    outcome = run_tournament(config, db_url=arguments.db, quiet=arguments.quiet,
                             mode=StartMode.SAME, rating_interval=arguments.rating_interval,
                             workers=arguments.workers)
    raise typer.Exit(outcome.exit_status)


def match_command(ctx: typer.Context) -> None:
    """Two engines, every opening as a game pair (the words it takes are below)."""
    _cli_run(ctx, "match")


def gauntlet_command(ctx: typer.Context) -> None:
    """The first --engine against each of the others (the words it takes are below)."""
    _cli_run(ctx, "gauntlet")


def roundrobin_command(ctx: typer.Context) -> None:
    """Every --engine against every other (the words it takes are below)."""
    _cli_run(ctx, "roundrobin")


def register(app: typer.Typer) -> None:
    """Add the tournament commands to the ``runner`` application."""
    app.command("run", epilog=INTERRUPT_HELP)(run_command)
    app.command("resume", epilog=INTERRUPT_HELP)(resume_command)
    for name, command in (("match", match_command), ("gauntlet", gauntlet_command),
                          ("roundrobin", roundrobin_command)):
        app.command(name, cls=vocabulary_help(name), context_settings=PASSTHROUGH,
                    epilog=RERUN_HELP)(command)
