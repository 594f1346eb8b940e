"""CLI commands for tournaments: ``run``, ``resume``, ``match``, ``gauntlet``, ``list``, ``export``.

``match`` and ``gauntlet`` take the cutechess-cli/fastchess vocabulary with double dashes
(``--engine cmd=fairymax name=fm proto=cecp option.Hash=16 --each tc=10+0.1 --rounds 50``),
turn it into the same table a TOML file gives, and run it through the same checks.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from runner.cli.vocabulary import EngineSpecError, group_options
from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.config.parse import load_config, parse_config
from runner.store import Database, GameFilter, open_database, stream_games, tournaments
from runner.tournament.scoreboard import Scoreboard

if TYPE_CHECKING:  # imported by the commands that run tournaments, not with the whole CLI
    from runner.tournament.run import Event, RunOutcome, Tournament

_out = Console()
_err = Console(stderr=True)
_PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}
_TC_KEYS = ("tc", "st", "depth", "nodes", "timemargin")
_ENGINE_KEYS = ("cmd", "arg", "name", "dir", "proto", "restart", "initstr", *_TC_KEYS)


class CommandLineError(ValueError):
    """A bad cutechess-style argument: printed plainly, exit code 2."""


# -- running ------------------------------------------------------------------------------------


class _View:
    """What the user sees while games run: a live progress bar and standings, or plain lines."""

    def __init__(self, tournament: Tournament, *, quiet: bool, live: bool) -> None:
        self.tournament = tournament
        self.quiet = quiet
        self.live_enabled = live and not quiet
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("games"), TimeRemainingColumn(), console=_err, transient=False)
        self.task = self.progress.add_task(tournament.config.name, total=tournament.total_games,
                                           completed=tournament.done_games)
        self.live: Live | None = None
        self.last_notice = ""

    def __enter__(self) -> _View:
        if self.live_enabled:
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
            parts.append(f"[yellow]{self.last_notice}[/]")
        return Group(*parts)

    def event(self, event: Event) -> None:
        """Show one event of the run."""
        from runner.tournament.run import GameFinished, GameStarted, Notice

        if isinstance(event, GameFinished):
            if not event.replay:
                self.progress.update(self.task, completed=self.tournament.done_games)
            if not self.live_enabled and not self.quiet:
                job = event.job
                tail = " (will be replayed)" if event.replay else ""
                _err.print(f"Finished game {job.index + 1} ({job.white} vs {job.black}): "
                           f"{event.result} {{{event.reason}}}{tail}", highlight=False)
        elif isinstance(event, GameStarted):
            if not self.live_enabled and not self.quiet:
                job = event.job
                _err.print(f"Started game {job.index + 1} of {self.tournament.total_games} "
                           f"({job.white} vs {job.black})", highlight=False)
        elif isinstance(event, Notice):
            self.last_notice = event.text
            if not self.live_enabled:
                _err.print(f"[yellow]{event.text}[/]", highlight=False)
        if self.live is not None:
            self.live.update(self._render())


def standings_table(board: Scoreboard) -> Table:
    """The current standings as a rich table."""
    table = Table(title="Standings", title_justify="left")
    for column in ("#", "Engine", "Games", "Points", "Score", "W", "D", "L"):
        table.add_column(column, justify="left" if column == "Engine" else "right")
    for rank, standing in enumerate(board.ranked(), start=1):
        score = "-" if standing.score is None else f"{100 * standing.score:.1f}%"
        table.add_row(str(rank), standing.name, str(standing.games), f"{standing.points:g}", score,
                      str(standing.wins), str(standing.draws), str(standing.losses))
    return table


def run_tournament(config: TournamentConfig, *, db_url: str | None, quiet: bool, force: bool,
                   new: bool, tournament_id: int | None = None,
                   concurrency: int | None = None) -> RunOutcome:
    """Open the database, play the tournament with a view, print the summary; returns the outcome."""
    from runner.tournament.run import Tournament, TournamentError

    db = _open_db(db_url or config.database)
    try:
        tournament = Tournament(config, db, force=force, new=new, tournament_id=tournament_id,
                                concurrency=concurrency)
        try:
            tournament.prepare()
        except TournamentError as exc:
            _err.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(2) from None
        if tournament.done_games and not quiet:
            _err.print(f"Resuming tournament {tournament.tournament_id} "
                       f"({config.name!r}): {tournament.done_games} of "
                       f"{tournament.total_games} games already played", highlight=False)
        view = _View(tournament, quiet=quiet, live=_err.is_terminal)
        tournament.on_event = view.event
        began = time.monotonic()
        with view:
            outcome = asyncio.run(tournament.run(handle_signals=True))
        _print_summary(outcome, time.monotonic() - began, db.url)
        return outcome
    finally:
        db.close()


def _print_summary(outcome: RunOutcome, seconds: float, url: str) -> None:
    for line in outcome.scoreboard.summary_lines():
        _out.print(line, highlight=False, soft_wrap=True)
    if outcome.sprt is not None:
        s = outcome.sprt
        _out.print(f"SPRT: llr {s.llr:.3f}, lbound {s.lower_bound:.3f}, ubound "
                   f"{s.upper_bound:.3f} - {s.decision.value}", highlight=False)
    state = outcome.status.value
    _err.print(f"Tournament {outcome.tournament_id} {state}: {outcome.done} of "
               f"{outcome.total_games} games stored ({outcome.played_now} in this run, "
               f"{seconds:.1f} s) in {url}", highlight=False, soft_wrap=True)
    if outcome.error:
        _err.print(f"[bold red]error:[/] {outcome.error}", highlight=False)
    if state != "finished":
        _err.print("Run the same command again to play the missing games.", highlight=False)


def _open_db(url: str | None) -> Database:
    try:
        return open_database(url)
    except Exception as exc:  # a bad URL, an unreachable server, a failed migration
        _err.print(f"[bold red]error:[/] cannot open the database: {exc}", highlight=False)
        raise typer.Exit(2) from None


def _load(path: Path) -> TournamentConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        _err.print(f"[bold red]{exc}[/]", highlight=False)
        raise typer.Exit(2) from None


def run_command(
    config_file: Path = typer.Argument(..., help="Tournament file (TOML)."),
    db: str | None = typer.Option(None, "--db", help="Database URL (default: RUNNER_DB or ./runner.db)."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1,
                                           help="Games at once (overrides the file)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live view; summary lines only."),
    force: bool = typer.Option(False, "--force", help="Continue a tournament whose file changed."),
    new: bool = typer.Option(False, "--new", help="Start a new tournament even if one can resume."),
) -> None:
    """Run (or resume) the tournament a TOML file describes."""
    config = _load(config_file)
    outcome = run_tournament(config, db_url=db, quiet=quiet, force=force, new=new,
                             concurrency=concurrency)
    raise typer.Exit(0 if outcome.error is None else 1)


def resume_command(
    tournament_id: int = typer.Argument(..., help="Tournament id (see 'runner list')."),
    db: str | None = typer.Option(None, "--db", help="Database URL."),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Resume a stored tournament with the configuration it was started with."""
    from runner.config.model import is_legacy_json
    from runner.store.resume import stored_config

    database = _open_db(db)
    try:
        with database.session() as session:
            stored = stored_config(session, tournament_id)
        url = database.url
    finally:
        database.close()
    if stored is None:
        _err.print(f"[bold red]error:[/] no tournament {tournament_id} in {url}")
        raise typer.Exit(2)
    try:
        config = TournamentConfig.from_json(stored, where=f"tournament {tournament_id}")
    except ConfigError as exc:
        _err.print(f"[bold red]{exc}[/]", highlight=False)
        raise typer.Exit(2) from None
    if is_legacy_json(stored):
        _err.print("[yellow]This tournament was stored by an older runner, which did not keep "
                   "the engines' env and castling960 settings: they are resumed with their "
                   "defaults.[/]", highlight=False)
    outcome = run_tournament(config, db_url=url, quiet=quiet, force=False, new=False,
                             tournament_id=tournament_id, concurrency=concurrency)
    raise typer.Exit(0 if outcome.error is None else 1)


# -- match and gauntlet from the command line ---------------------------------------------------


def _engine_table(tokens: list[str], each: list[str]) -> dict[str, Any]:
    """One ``--engine`` group (with ``--each`` first) as a configuration engine table."""
    values: dict[str, str] = {}
    args: list[str] = []
    init: list[str] = []
    options: dict[str, Any] = {}
    tc: dict[str, str] = {}
    for token in [*each, *tokens]:
        key, sep, value = token.partition("=")
        if not sep:
            raise CommandLineError(f"engine setting {token!r} is not of the form key=value")
        if key.startswith("option."):
            if not key[7:]:
                raise CommandLineError(f"engine setting {token!r} has no option name")
            options[key[7:]] = value
        elif key == "arg":
            args.append(value)
        elif key == "initstr":
            init.append(value)
        elif key in _TC_KEYS:
            tc[key] = value
        elif key == "ponder":
            raise CommandLineError("ponder= is not supported: engines never think on the "
                                   "opponent's time here (CECP 'easy'), which keeps games on "
                                   "shared cores fair")
        elif key in _ENGINE_KEYS:
            values[key] = value
        else:
            raise CommandLineError(f"unknown engine setting {key!r} in {token!r} (known: "
                                   f"{', '.join(_ENGINE_KEYS)}, option.NAME)")
    if "cmd" not in values:
        raise CommandLineError(f"--engine {' '.join(tokens)!r} has no cmd=")
    command = [*shlex.split(values["cmd"]), *args]
    if not command:
        raise CommandLineError("empty cmd=")
    name = values.get("name") or (command[2] if len(command) > 2 and command[1] == "-m"
                                  else Path(command[0]).name)
    proto = values.get("proto", "cecp").lower()
    table: dict[str, Any] = {"name": name, "command": command,
                             "protocol": "cecp" if proto in ("xboard", "winboard") else proto}
    if "dir" in values:
        table["dir"] = values["dir"]
    if "restart" in values:
        table["restart"] = values["restart"]
    if init:
        table["init_strings"] = init
    if options:
        table["options"] = options
    if tc:
        table["tc"] = " ".join(f"{k}={v}" for k, v in tc.items())
    return table


def _settings(tokens: list[str], what: str, known: tuple[str, ...]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in known:
            raise CommandLineError(f"--{what}: {token!r} is not one of "
                                   f"{', '.join(k + '=...' for k in known)}")
        result[key] = _scalar(value)
    return result


def _scalar(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _single(groups: dict[str, list[str]], key: str) -> str | None:
    tokens = groups.get(key)
    if tokens is None:
        return None
    if len(tokens) != 1:
        raise CommandLineError(f"--{key} takes exactly one value, got {tokens or 'none'}")
    return tokens[0]


def table_from_arguments(args: list[str], fmt: str) -> dict[str, Any]:
    """A tournament table (as a TOML file would give) from cutechess-style arguments."""
    try:
        grouped = group_options(args)
    except EngineSpecError as exc:
        raise CommandLineError(str(exc)) from None
    engines = [tokens for key, tokens in grouped if key == "engine"]
    groups: dict[str, list[str]] = {}
    for key, tokens in grouped:
        if key == "engine":
            continue
        if key in groups and key != "each":
            raise CommandLineError(f"--{key} given twice")
        groups.setdefault(key, []).extend(tokens)
    known = {"each", "openings", "rounds", "games", "repeat", "concurrency", "draw", "resign",
             "maxmoves", "sprt", "pgnout", "recover", "variant", "name", "event", "affinity"}
    unknown = sorted(set(groups) - known)
    if unknown:
        raise CommandLineError(f"unknown option --{unknown[0]} (known: --engine, "
                               f"{', '.join('--' + k for k in sorted(known))})")
    table: dict[str, Any] = {
        "name": _single(groups, "name") or _single(groups, "event") or f"{fmt} "
        + time.strftime("%Y-%m-%d %H:%M:%S"),
        "format": fmt,
        "engines": [_engine_table(tokens, groups.get("each", [])) for tokens in engines],
    }
    for key in ("rounds", "games", "concurrency"):
        value = _single(groups, key)
        if value is not None:
            table[key] = _scalar(value)
    if "openings" in groups:
        table["openings"] = _settings(groups["openings"], "openings",
                                      ("file", "format", "order", "seed", "plies", "start"))
    adjudication: dict[str, Any] = {}
    if "draw" in groups:
        adjudication["draw"] = _settings(groups["draw"], "draw", ("movenumber", "movecount", "score"))
    if "resign" in groups:
        adjudication["resign"] = _settings(groups["resign"], "resign",
                                           ("movecount", "score", "twosided"))
    maxmoves = _single(groups, "maxmoves")
    if maxmoves is not None:
        adjudication["maxmoves"] = _scalar(maxmoves)
    if adjudication:
        table["adjudication"] = adjudication
    if "sprt" in groups:
        table["sprt"] = _settings(groups["sprt"], "sprt",
                                  ("elo0", "elo1", "alpha", "beta", "model", "maxgames"))
    pgnout = _single(groups, "pgnout")
    if pgnout is not None:
        table["pgnout"] = pgnout
    variant = _single(groups, "variant")
    if variant is not None:
        table["variant"] = variant
    if "recover" in groups:
        table["recover"] = True
    if "affinity" in groups:
        table["affinity"] = True
    return table


def _cli_run(ctx: typer.Context, fmt: str) -> None:
    args = list(ctx.args)
    db = quiet = None
    rest: list[str] = []
    iterator = iter(args)
    for token in iterator:
        if token in ("--db", "-db"):
            db = next(iterator, None)
        elif token in ("--quiet", "-q"):
            quiet = True
        else:
            rest.append(token)
    try:
        table = table_from_arguments(rest, fmt)
        config = parse_config(table, source="command line")
    except CommandLineError as exc:
        _err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from None
    except ConfigError as exc:
        _err.print(f"[bold red]{exc}[/]", highlight=False)
        raise typer.Exit(2) from None
    outcome = run_tournament(config, db_url=db, quiet=bool(quiet), force=False, new=True)
    raise typer.Exit(0 if outcome.error is None else 1)


def match_command(ctx: typer.Context) -> None:
    """Two engines, every opening as a game pair: --engine cmd=A ... --engine cmd=B ...
    --each tc=10+0.1 [--rounds N] [--games 2] [--openings file=F order=random] [--concurrency N]
    [--draw ...] [--resign ...] [--maxmoves N] [--sprt elo0=0 elo1=2] [--pgnout F] [--db URL]."""
    _cli_run(ctx, "match")


def gauntlet_command(ctx: typer.Context) -> None:
    """The first --engine against each of the others (same options as 'runner match')."""
    _cli_run(ctx, "gauntlet")


def roundrobin_command(ctx: typer.Context) -> None:
    """Every --engine against every other (same options as 'runner match')."""
    _cli_run(ctx, "round-robin")


# -- list and export ----------------------------------------------------------------------------


def list_command(db: str | None = typer.Option(None, "--db", help="Database URL.")) -> None:
    """Tournaments in the database with their progress."""
    database = _open_db(db)
    try:
        with database.session() as session:
            found = tournaments(session)
    finally:
        database.close()
    table = Table(title=f"Tournaments in {database.url}", title_justify="left")
    for column in ("ID", "Name", "Status", "Games", "Running", "Created", "SPRT"):
        table.add_column(column)
    for t in found:
        table.add_row(str(t.id), t.name, t.status, f"{t.done}/{t.total_games}", str(t.running),
                      t.created_at.strftime("%Y-%m-%d %H:%M"), t.sprt_decision or "")
    _out.print(table)


def export_command(
    tournament_id: int | None = typer.Argument(None, help="Tournament id (default: the newest)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="PGN file to write (default: stdout)."),
    engine: str | None = typer.Option(None, "--engine", help="Only games of this engine."),
    result: str | None = typer.Option(None, "--result", help="Only games with this result."),
    termination: str | None = typer.Option(None, "--termination",
                                           help="Only games ended this way (e.g. 'time forfeit')."),
    db: str | None = typer.Option(None, "--db", help="Database URL."),
) -> None:
    """Write stored games as PGN, streamed from the database."""
    database = _open_db(db)
    count = 0
    try:
        with database.session() as session:
            if tournament_id is None:
                found = tournaments(session)
                if not found:
                    _err.print(f"[bold red]error:[/] no tournament in {database.url}")
                    raise typer.Exit(2)
                tournament_id = found[-1].id
            where = GameFilter(tournament_id=tournament_id, engine=engine, result=result,
                               termination=termination)
            handle = open(out, "w", encoding="utf-8") if out else sys.stdout  # noqa: SIM115
            try:
                for game in stream_games(session, where):
                    if not game.pgn:
                        continue
                    handle.write(game.pgn.rstrip("\n") + "\n\n")
                    count += 1
            finally:
                if out:
                    handle.close()
    finally:
        database.close()
    _err.print(f"{count} game(s) of tournament {tournament_id} exported"
               f"{f' to {out}' if out else ''}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the tournament commands to the ``runner`` application."""
    app.command("run")(run_command)
    app.command("resume")(resume_command)
    app.command("match", context_settings=_PASSTHROUGH)(match_command)
    app.command("gauntlet", context_settings=_PASSTHROUGH)(gauntlet_command)
    app.command("roundrobin", context_settings=_PASSTHROUGH)(roundrobin_command)
    app.command("list")(list_command)
    app.command("export")(export_command)
