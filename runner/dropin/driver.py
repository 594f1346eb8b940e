"""Playing a drop-in run: a peer's command line, played as a tournament through the app layer.

The run is a tournament of the runner like any other (`StartMode.SAME`: the same command line
continues the run it interrupted, plays only the games missing, and every game lands in the
runner's database), reported by the peer's `PeerOutput` instead of the runner's own view. The
stored games of an interrupted run are handed to the output first (`PeerOutput.resumed`), so
that its counters and results continue where they stopped.

Signals are the frameworks' (fishtest and OpenBench send SIGINT or SIGTERM, then SIGKILL):
any stop signal aborts the running games at once (a peer's run ends promptly; the gentle
"finish the running games" stop of ``runner run`` could outlast the 15 s they wait), the
engines are stopped, and the output prints its final lines as interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from runner.app.modes import StartMode
from runner.app.run import Refused, RunResult, run_tournament
from runner.app.signals import StopPolicy
from runner.protocol.loop import run as run_on_loop
from runner.store.store import GameFilter, Store, StoredMove
from runner.tournament.events import Event, GameFinished, GameStarted, Notice, RunOutcome
from runner.tournament.run import Tournament
from runner.types import Variant

if TYPE_CHECKING:
    from runner.app.stream import EventFile
    from runner.dropin.contract import DropinRun, PeerOutput
    from runner.dropin.main import OwnOptions
    from runner.game.record import GameRecord
    from runner.store.store import StoredGame

__all__ = ["DEFAULT_DB", "play", "stored_games"]

DEFAULT_DB = "runner.db"
"""The database a drop-in run writes when neither the run nor ``RUNNER_DB`` names one."""

def play(run: DropinRun, own: OwnOptions | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Play `run` (continuing its interrupted run), reported on `stdout` (default sys.stdout)
    by the peer's output; returns the process's exit status. A run that cannot start (the
    database, a changed setting under the same name, an engine refused) is one line on
    `stderr` and exit status 1 or 2. `own`: the runner's own options (``-events``: the run's
    events as JSON lines too; on standard output, the peer's lines go to `stderr`)."""
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    lines = None
    if own is not None and own.events is not None:
        # Only with -events: the event models (pydantic, the report tree) cost a drop-in run
        # without them about a fifth of its start-up.
        from runner.app.stream import EventFile, EventsError, EventsTarget

        target = EventsTarget(own.events, own.events_moves)
        try:
            lines = EventFile(target)
        except EventsError as exc:
            err.write(f"runner-{run.peer}: {exc.strerror}\n")
            return 2
        if target.on_stdout:
            out = err
    url = run.db_url or os.environ.get("RUNNER_DB") or DEFAULT_DB
    try:
        store = Store.open(url if "://" in url else f"sqlite:///{os.path.expanduser(url)}")
    except Exception as exc:  # an unreachable server, an unwritable file, a failed migration
        cause = Store.redact(str(getattr(exc, "orig", None) or exc)).strip()
        err.write(f"runner-{run.peer}: cannot open the database {Store.safe_url(url)}: {cause}\n")
        return 1
    try:
        return run_on_loop(_play(run, store, out, err, lines,
                                 diagnostics=own is not None and own.report))
    finally:
        store.close()
        if lines is not None:
            lines.close()


async def _play(run: DropinRun, store: Store, out: TextIO, err: TextIO,
                lines: EventFile | None = None, *, diagnostics: bool = False) -> int:
    """The run on the event loop (`runner.app.run`): the protocols a peer's command line
    leaves open asked quietly (the peer prints nothing of the kind), the tournament found or
    created, played; any stop signal aborts it. A signal before the tournament is taken ends
    it there (exit status 128 + its number); from then on the tournament ends as interrupted
    with the output's lines."""
    shown: list[PeerOutput] = []

    @contextlib.asynccontextmanager
    async def view(tournament: Tournament) -> AsyncIterator[Callable[[Event], None]]:
        output = run.make_output(out)
        shown.append(output)
        if tournament.done_games:
            output.resumed(await asyncio.to_thread(lambda: list(stored_games(store, tournament))))
        yield _dispatch(output, tournament)

    if lines is not None:
        from runner.app.stream import run_finished, with_events
    result = await run_tournament(
        run.config, store, StartMode.SAME, stop_policy=StopPolicy.ABORT,
        view=view if lines is None else with_events(view, lines, store),
        concurrency=max(1, run.config.concurrency),
        watch_moves=lines is not None and lines.target.moves, style=run.style)
    status = _ended(run, result, shown, out, err)
    if diagnostics and isinstance(result, RunOutcome):
        await asyncio.to_thread(_print_diagnostics, store, result.tournament_id, out)
    if lines is not None:
        lines.write(run_finished(result).model_copy(update={"exit_status": status}))
        if lines.failed is not None:
            err.write(f"runner-{run.peer}: {lines.failed}\n")
    return status


def _ended(run: DropinRun, result: RunResult, shown: list[PeerOutput], out: TextIO,
           err: TextIO) -> int:
    """The peer's last lines of the run and the exit status it gives."""
    if isinstance(result, Refused):
        err.write(f"runner-{run.peer}: {result.message}\n")
        return result.exit_status
    if not isinstance(result, RunOutcome) or not shown:
        return result.exit_status
    output = shown[0]
    output.run_ended(result, interrupted=result.signal is not None)
    _flush(out)
    return output.exit_code(result)


def _print_diagnostics(store: Store, tournament_id: int, out: TextIO) -> None:
    """``-report``: the run's per-engine diagnostics, after the peer's last line."""
    from runner.app.report import ReportError, report
    from runner.report.render import render_diagnostics

    try:
        text = render_diagnostics(report(store, tournament_id))
    except ReportError:
        return
    out.write(text)
    _flush(out)


def _flush(stream: TextIO) -> None:
    """Flush `stream`, quietly when its reader is gone (a framework that stopped reading)."""
    with contextlib.suppress(OSError, ValueError):
        stream.flush()


def _dispatch(output: PeerOutput, tournament: Tournament) -> Callable[[Event], None]:
    """The run's event handler: each event to the output's method for it (moves are not
    watched, so none arrives); an output that asks to end the run (``stop_run``) stops it:
    no new game, the running ones aborted."""
    from runner.dropin.contract import STOP_RUN

    stopped = False

    def on_event(event: Event) -> None:
        nonlocal stopped
        if isinstance(event, GameFinished):
            output.game_finished(event)
        elif isinstance(event, GameStarted):
            output.game_started(event)
        elif isinstance(event, Notice):
            output.notice(event)
        if not stopped and getattr(output, STOP_RUN, False):
            stopped = True
            tournament.stop(hard=True)

    return on_event


def stored_games(store: Store, tournament: Tournament) -> Iterator[GameFinished]:
    """The games `tournament` (prepared) has stored as played, in schedule order, as the
    events their run told: each with its record rebuilt from the database (moves with the data
    the database keeps, times, result, the final position replayed)."""
    total = tournament.total_games
    for game in store.games(GameFilter(tournament_id=tournament.tournament_id)):
        if game.result is None or game.termination is None or game.job_index >= total:
            continue
        scheduled = tournament.pairing.job(game.job_index)
        record = _record(tournament, game, store.game_moves(game.id))
        seconds = record.duration
        yield GameFinished(scheduled, game.result, game.termination, game.reason or "",
                           record.plies, seconds, record=record)


def _record(tournament: Tournament, game: StoredGame, moves: list[StoredMove]) -> GameRecord:
    """The record of stored `game` of `tournament` as far as the database keeps it."""
    from runner.game.record import GameRecord
    from runner.rules import STARTING_FEN, Board
    from runner.tournament.runtime import game_spec
    from runner.types import MoveRecord

    book = len((game.opening_moves or "").split())
    plies = tuple(MoveRecord(san=m.san, uci=m.uci, score_cp=m.score_cp, mate=m.mate,
                             depth=m.depth, nodes=m.nodes, book=index < book,
                             time=None if m.time_ms is None else m.time_ms / 1000)
                  for index, m in enumerate(moves))
    config = tournament.config
    chess960 = config.variant is Variant.FISCHERANDOM
    board = Board(game.opening_fen or STARTING_FEN, chess960=chess960)
    for move in plies:
        board.push_uci(move.uci)
    spec = game_spec(config, game.white, game.black, start_fen=game.opening_fen,
                     opening_moves=tuple(m.uci for m in plies[:book]), style=tournament.style)
    now = datetime.now(UTC)
    assert game.result is not None and game.termination is not None
    return GameRecord(white=game.white, black=game.black, spec=spec, moves=plies,
                      result=game.result, termination=game.termination,
                      reason=game.reason or "", started_at=game.started_at or now,
                      ended_at=game.ended_at or game.started_at or now, final_fen=board.fen())

