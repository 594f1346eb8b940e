"""What the CLI commands that play tournaments do: ``run``, ``resume``, ``match``,
``gauntlet``, ``roundrobin`` (declared in runner.cli.plays, which imports this module only
when one of them runs, so that their ``--help`` loads none of the tournament code).

``match``, ``gauntlet`` and ``roundrobin`` take the cutechess-cli/fastchess vocabulary with
double dashes (``--engine cmd=fairymax name=fm proto=cecp option.Hash=16 --each tc=10+0.1
--rounds 50``), read by `runner.cli.vocabulary` into the same table a TOML file gives.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from runner.app.lifecycle import NoSuchTournament, resumable
from runner.app.modes import StartMode, tournament_db
from runner.app.run import (
    Done,
    MissingExtra,
    Placement,
    Refused,
    RunResult,
    RunView,
    WorkersChosen,
)
from runner.app.run import run_tournament as play_tournament
from runner.app.signals import StopPolicy
from runner.cli.errors import err_stream as _err
from runner.cli.errors import exit_on_error, fail, missing_extra, open_db, report_error
from runner.cli.loop import run_async
from runner.cli.streams import Stream
from runner.cli.vocabulary import CommandLineError, read_arguments
from runner.cli.words import plural
from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.config.parse import load_config
from runner.store.store import Store
from runner.text import shown
from runner.tournament.events import (
    Event,
    GameFinished,
    GameStarted,
    Notice,
    RunOutcome,
)
from runner.tournament.run import Tournament
from runner.tournament.scoreboard import Scoreboard, summary_lines

if TYPE_CHECKING:  # the live view's modules: imported when it is shown, not by --quiet runs
    from rich.console import Group
    from rich.live import Live
    from rich.progress import Progress, TaskID
    from rich.table import Table

    # The event lines' models (pydantic): imported when --events is given, not by every run.
    from runner.app.stream import EventFile, EventsTarget

_out = Stream(stderr=False)  # see runner.cli.errors.err_stream; rich is imported on first
# use of a console: a run to a pipe or a file whose lines are plain never imports it


# -- running ------------------------------------------------------------------------------------


class _View:
    """What the user sees while games run: a live progress bar and standings, or plain lines."""
    def __init__(self, tournament: Tournament, *, quiet: bool, live: bool,
                 rating_interval: int = 0, out: Stream = _out) -> None:
        self.tournament = tournament
        self.out = out
        """Where the score lines go: stdout, or stderr when the events take stdout."""
        self.quiet = quiet
        self.live_enabled = live and not quiet
        # cutechess-cli's lines on stdout after each game, unless the live view shows them
        # on the same terminal.
        self.score_lines = not quiet and not (self.live_enabled and out.is_terminal)
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
                console=_err.console, transient=False)
            self.task = self.progress.add_task(shown(tournament.config.name),
                                               total=tournament.total_games,
                                               completed=tournament.done_games)
        self.live: Live | None = None
        self.last_notice = ""

    def __enter__(self) -> _View:
        if self.live_enabled:
            from rich.live import Live

            self.live = Live(self._render(), console=_err.console, refresh_per_second=4,
                             transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.__exit__(None, None, None)

    def _render(self) -> Group:
        from rich.console import Group
        from rich.markup import escape

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
                _err.line(shown(f"Finished game {job.index + 1} ({job.white} vs {job.black}): "
                                f"{event.result} {{{event.reason}}}{tail}"))
            if not event.replay and self.score_lines:
                self._score_lines(event.job.white, event.job.black)
        elif isinstance(event, GameStarted):
            if not self.live_enabled and not self.quiet:
                job = event.job
                _err.line(shown(f"Started game {job.index + 1} of {self.tournament.total_games} "
                                f"({job.white} vs {job.black})"))
        elif isinstance(event, Notice):
            self.last_notice = event.text
            if not self.live_enabled:
                from rich.markup import escape

                _err.console.print(f"[yellow]{escape(shown(event.text, multiline=True))}[/]",
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
            lines = [*board.ranking_lines(), board.ranking_basis(), ""] if due else []
        for line in lines:
            self.out.line(shown(line), soft_wrap=True)


def standings_table(board: Scoreboard) -> Table:
    """The current standings as a rich table."""
    from rich.table import Table  # only the live view shows it (with decimal and fractions)
    from rich.text import Text

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
                   workers: int | None = None, cluster: str | None = None,
                   done_returns: bool = False, events: EventsTarget | None = None) -> RunResult:
    """Open the database, play the tournament (`runner.app.run`) with a view, print the
    summary; returns how it ended. `workers` None with no `cluster` picks the default; 0
    plays in this process. A finished tournament is said and exits 0, or with
    `done_returns` is said and returned (a chain of stages goes on from it). `events`: the
    run's events as JSON lines too (``--events``; on stdout, the human lines go to stderr)."""
    url, source = tournament_db(db_url, config)
    store = open_db(url, source=source)  # a wrong --db is said before any engine starts
    lines = _open_events(events)
    try:
        out = _err if events is not None and events.on_stdout else _out
        watching = _Watching(quiet=quiet, rating_interval=rating_interval, out=out)
        view: RunView = watching.view
        if lines is not None:
            from runner.app.stream import with_events

            view = with_events(watching.view, lines, store)
        try:
            result = run_async(play_tournament(
                config, store, mode, placement=Placement(workers=workers, cluster=cluster),
                stop_policy=StopPolicy.GENTLE, view=view, say=_say,
                tournament_id=tournament_id, concurrency=concurrency,
                lease_timeout=_lease_timeout(),
                watch_moves=events is not None and events.moves))
        except MissingExtra as exc:
            raise missing_extra(exc, "playing on Dask (--workers, --cluster or the file's "
                                "[cluster])", "cluster") from None
        if lines is not None:
            from runner.app.stream import run_finished

            lines.write(run_finished(result))
            if lines.failed is not None:
                report_error(lines.failed)
        if isinstance(result, Done):
            _say_finished(store, config, result, exits=not done_returns)
        if isinstance(result, Refused):
            raise fail(result.message, result.exit_status)
        if isinstance(result, RunOutcome):
            _summary(result, watching, store.shown_url)
        return result
    finally:
        store.close()
        if lines is not None:
            lines.close()


def _open_events(events: EventsTarget | None) -> EventFile | None:
    """The ``--events`` file opened before any engine starts (exit 2 naming it when it
    cannot be)."""
    if events is None:
        return None
    from runner.app.stream import EventFile, EventsError

    try:
        return EventFile(events)
    except EventsError as exc:
        raise fail(str(exc.strerror), 2) from None


def _say(note: str | WorkersChosen) -> None:
    """A line about what the run decided before its first game."""
    if isinstance(note, WorkersChosen):
        note = (f"{note.games} games at once: played on {note.workers} local worker processes "
                "(one process would relay their moves too late at short time controls); "
                "--workers 0 plays them in this process")
    _err.line(note, soft_wrap=True)


class _Watching:
    """The view of one run: made once the tournament is taken, its time counted from then;
    a terminal that went away while it closed (SIGHUP) is remembered, not raised, so that the
    outcome of the run is still told by the exit status."""

    def __init__(self, *, quiet: bool, rating_interval: int, out: Stream = _out) -> None:
        self.quiet = quiet
        self.out = out
        self.rating_interval = rating_interval
        self.began = time.monotonic()
        self.broken: OSError | None = None

    @contextlib.asynccontextmanager
    async def view(self, tournament: Tournament) -> AsyncIterator[Callable[[Event], None]]:
        """The live view (or plain lines) of `tournament`'s run."""
        if tournament.done_games and not self.quiet:
            _err.line(f"Resuming tournament {tournament.tournament_id} "
                      f"({tournament.config.name!r}): {tournament.done_games} of "
                      f"{tournament.total_games} {plural(tournament.total_games, 'game')} "
                      "already played")
        # A quiet run shows no live view: whether stderr is a terminal is not asked.
        shown_view = _View(tournament, quiet=self.quiet,
                           live=not self.quiet and _err.is_terminal,
                           rating_interval=self.rating_interval, out=self.out)
        self.began = time.monotonic()
        shown_view.__enter__()
        try:
            yield shown_view.event
        finally:
            try:
                shown_view.__exit__(None, None, None)
            except OSError as exc:
                self.broken = exc


def _summary(outcome: RunOutcome, watching: _Watching, url: str) -> None:
    """The run's last lines; exit 1 with its error when another runner took it over."""
    try:
        if watching.broken is not None:
            raise watching.broken
        if outcome.taken_over and outcome.error:  # the standings are the other runner's
            raise fail(outcome.error, 1)
        _print_summary(outcome, time.monotonic() - watching.began, url, watching.out)
    except OSError:
        # The terminal is gone (SIGHUP): the run is stored and its engines are stopped;
        # nothing can be shown any more, the exit status still tells what happened.
        if outcome.signal is None:
            raise


LEASE_TIMEOUT_VAR = "RUNNER_LEASE_TIMEOUT"
"""Seconds a run may go silent before another runner may take its tournament over (default
60): a test's short pause, or a long one for hosts that suspend."""


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


def _say_finished(store: Store, config: TournamentConfig, done: Done, *,
                  exits: bool = True) -> None:
    """Say that the tournament is finished, and exit 0 (its PGN file made whole first):
    running the same file again used to start a new tournament silently (and append every
    game to the same --pgnout file)."""
    found, total = done.finished.tournament_id, done.finished.total_games
    if done.repaired:
        _err.line(f"{done.repaired} stored {plural(done.repaired, 'game')} written again to "
                  f"the PGN file {config.pgnout}, which lacked them")
    _err.line(f"Tournament {found} ({config.name!r}) in {store.shown_url} is already finished "
              f"({total} {plural(total, 'game')} planned): nothing to play"
              + (" (this file's settings differ from the ones it was played with)."
                 if done.finished.changed else ".") + "\n"
              f"See its results with 'runner report {found}', or start a new tournament from "
              "this file with --new.", soft_wrap=True)
    if exits:
        raise SystemExit(0)


def _print_summary(outcome: RunOutcome, seconds: float, url: str, out: Stream) -> None:
    board = outcome.scoreboard
    ranking = ([*board.ranking_lines(), board.ranking_basis(), ""]
               if len(board.tally.engine_names) > 2 else [])
    # An engine that never moved lost by not playing, and with no game at all (an engine
    # that never started) there is no score either: only the error below.
    scored = not outcome.void and any(c.games for c in board.tally.pairings())
    for line in ranking + board.summary_lines() if scored else []:
        out.line(shown(line), soft_wrap=True)
    if outcome.sprt is not None and not outcome.void:
        s = outcome.sprt
        out.console.print(f"SPRT: llr {s.llr:.3f}, lbound {s.lower_bound:.3f}, ubound "
                   f"{s.upper_bound:.3f} - {s.decision.value}", highlight=False)
    state = outcome.status.value
    _err.line(f"Tournament {outcome.tournament_id} {state}: {outcome.done} of "
              f"{outcome.total_games} {plural(outcome.total_games, 'game')} stored "
              f"({outcome.played_now} in this run, "
              f"{seconds:.1f} s) in {url}", soft_wrap=True)
    if outcome.error:
        report_error(outcome.error)
    if state == "finished" or outcome.void or outcome.refused:
        return  # nothing is missing, or the same command would fail the same way
    if outcome.error is None:  # stopped by a signal: nothing stands in the way of a new run
        _err.console.print("Run the same command again to play the missing games.", highlight=False)
    else:
        _err.console.print("Once the cause above is fixed, the same command plays the missing games "
                   "(the stored ones are kept).", highlight=False, soft_wrap=True)


def _load(path: Path) -> TournamentConfig:
    """The tournament file `path`, checked (exit 2 saying what is wrong)."""
    try:
        return load_config(path)
    except ConfigError as exc:
        raise exit_on_error(exc) from None


def run_file(config_file: Path, *, db: str | None, concurrency: int | None, quiet: bool,
             force: bool, new: bool, workers: int | None, cluster: str | None,
             events: EventsTarget | None = None) -> NoReturn:
    """``runner run``: the tournament a TOML file describes (runner.cli.plays declares it)."""
    config = _load(config_file)
    if workers is not None and cluster is not None:
        raise fail("give --workers (a local cluster) or --cluster (a running scheduler), not both")
    mode = StartMode.NEW if new else StartMode.FORCE if force else StartMode.CONTINUE
    outcome = run_tournament(config, db_url=db, quiet=quiet, mode=mode,
                             concurrency=concurrency, workers=workers, cluster=cluster,
                             events=events)
    raise SystemExit(outcome.exit_status)


def events_target(path: str | None, moves: bool) -> EventsTarget | None:
    """Where ``--events`` sends the run's events (None: nowhere; exit 2 for
    ``--events-moves`` alone)."""
    if path is None:
        if moves:
            raise fail("--events-moves: give --events FILE (or -) as well", 2)
        return None
    from runner.app.stream import EventsTarget

    return EventsTarget(path, moves)


def resume_stored(tournament_id: int, *, db: str | None, concurrency: int | None,
                  quiet: bool, events: EventsTarget | None = None) -> NoReturn:
    """``runner resume``: a stored tournament with the configuration it was started with."""
    with open_db(db, create=False) as store:
        try:
            found = resumable(store, tournament_id)
        except NoSuchTournament as exc:
            raise fail(str(exc)) from None
        except ConfigError as exc:
            raise exit_on_error(exc) from None
        url = store.url
    if found.legacy:
        _err.console.print("[yellow]This tournament was stored by an older runner, which did not keep "
                   "the engines' env and castling960 settings: they are resumed with their "
                   "defaults.[/]", highlight=False)
    outcome = run_tournament(found.config, db_url=url, quiet=quiet, mode=StartMode.CONTINUE,
                             tournament_id=tournament_id, concurrency=concurrency,
                             events=events)
    raise SystemExit(outcome.exit_status)


# -- match, gauntlet and round-robin from the command line -------------------------------------


def cli_run(args: list[str], command: str) -> NoReturn:
    """Read the cutechess words of ``runner COMMAND``, check them as a file's table, run."""
    try:
        arguments = read_arguments(args, command)
        config = arguments.config()
    except (CommandLineError, ConfigError) as exc:
        raise exit_on_error(exc) from None
    outcome = run_tournament(config, db_url=arguments.db, quiet=arguments.quiet,
                             mode=StartMode.SAME, rating_interval=arguments.rating_interval,
                             workers=arguments.workers, events=arguments.events_target())
    raise SystemExit(outcome.exit_status)
