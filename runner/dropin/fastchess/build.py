"""fastchess's settings (`FastchessArgs`) turned into the runner's tournament and output settings.

What fastchess would play becomes a configuration table checked as every tournament is
(`checked_config`, the route runner-cutechess takes too, held to fastchess's bounds), played
in fastchess's order (`OrderStyle.INDEX`, runner.dropin.fastchess.order: its game numbers,
colours and opening dealing); what it would print and write becomes `FastchessSettings` for
the output. A setting the runner cannot honour is
refused here with a line saying so (`PeerUsageError`), never dropped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.parse import Bounds
from runner.config.programs import ProgramLookup, find_program
from runner.dropin.contract import checked_config, run_name
from runner.dropin.fastchess.args import EngineArgs, FastchessArgs, FastchessError, engine_argv
from runner.dropin.fastchess.order import fastchess_order
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings, SprtSettings

if TYPE_CHECKING:
    from runner.config.model import EngineSpec, TournamentConfig

__all__ = ["NOT_HONOURED", "build_config", "build_settings", "default_seed", "engine_tc",
           "fastchess_run_name"]

PROGRAM = "runner-fastchess"

NOT_HONOURED = "{program}: {option} {why}; leave it out (the runner's own {what} applies)"
"""The form of a refusal for a fastchess setting the runner cannot honour."""


def _refuse(option: str, why: str, what: str) -> FastchessError:
    return FastchessError(NOT_HONOURED.format(program=PROGRAM, option=option, why=why, what=what))


def _seconds(ms: int) -> str:
    """Milliseconds as the runner's time controls write seconds (exactly)."""
    return str(ms // 1000) if ms % 1000 == 0 else repr(ms / 1000)


def engine_tc(limit_owner: EngineArgs) -> str:
    """The runner's time control text for one fastchess engine's limits."""
    limit = limit_owner.limit
    words: list[str] = []
    if limit.time or limit.increment:
        clock = _seconds(limit.time)
        if limit.moves:
            clock = f"{limit.moves}/{clock}"
        if limit.increment:
            clock += f"+{_seconds(limit.increment)}"
        words.append(clock)
    elif limit.fixed_time:
        words.append(f"st={_seconds(limit.fixed_time)}")
    else:
        words.append("inf")
    if limit.plies > 0:
        words.append(f"depth={limit.plies}")
    if limit.nodes > 0:
        words.append(f"nodes={limit.nodes}")
    if limit.timemargin > 0:
        words.append(f"timemargin={limit.timemargin}")
    return " ".join(words)


def _program(engine: EngineArgs) -> tuple[str, ...]:
    """The argv fastchess starts: `dir/cmd` when a directory is given, else `cmd` as the
    system finds it (fastchess's reader has checked that the program exists)."""
    argv = engine_argv(engine)
    directory = Path(engine.dir).absolute() if engine.dir else None
    program = find_program(str(engine.engine_path()) if directory else engine.cmd, directory)
    return (program or argv[0], *argv[1:])


def _engine_table(engine: EngineArgs) -> dict[str, Any]:
    """One fastchess engine as a configuration engine table."""
    if engine.limit.plies < 0 or engine.limit.nodes < 0:
        raise FastchessError(f"{PROGRAM}: engine {engine.name}: a negative depth or node "
                             "limit has no meaning")
    # A program that is not there stays as written: fastchess does not look for it before
    # the game that starts it, which fails as "Fatal; a engine startup failure"
    # (ProgramLookup.AT_START in build_config).
    command = list(_program(engine))
    table: dict[str, Any] = {
        "name": engine.name, "command": command, "protocol": "uci",
        "tc": engine_tc(engine), "restart": "on" if engine.restart else "off",
    }
    if engine.dir:
        table["dir"] = str(Path(engine.dir).absolute())
    if engine.options:
        table["options"] = dict(engine.options)
    return table


def _written(spec: EngineSpec, engine: EngineArgs) -> EngineSpec:
    """The checked engine with its command as fastchess's words wrote it (what the
    tournament's fingerprint and name keep), the table having given the program found."""
    return dataclasses.replace(spec, written_command=tuple(engine_argv(engine)))


def _openings(a: FastchessArgs, seed: int) -> dict[str, Any] | None:
    """The openings table (None: fastchess warns and plays from the start position)."""
    if not a.book_file or a.book_format not in ("epd", "pgn"):
        return None
    table: dict[str, Any] = {
        "file": str(Path(a.book_file).absolute()), "format": a.book_format,
        "order": "random" if a.book_order == "random" else "sequential",
        "seed": seed, "start": a.book_start,
    }
    if a.book_plies >= 0:
        table["plies"] = a.book_plies
    return table


def _tablebase_dirs(a: FastchessArgs) -> tuple[Path, ...]:
    if not a.tb:
        return ()
    dirs = tuple(Path(part) for part in a.tb_dirs.split(os.pathsep) if part)
    found = any(d.is_dir() and any(p.suffix == ".rtbw" for p in d.iterdir()) for d in dirs)
    if not found:
        raise FastchessError("Error: Failed to load Syzygy tablebases from the following "
                             f"directories: {a.tb_dirs}")
    return dirs


def _refusals(a: FastchessArgs) -> None:
    """Refuse the settings the runner has no way to honour."""
    if a.affinity_cpus:
        raise _refuse("-use-affinity with a CPU list", "is not supported",
                      "choice of CPUs (the n-th game slot on the n-th CPU it may use)")
    for option, value, default in (("-startup-ms", a.startup_ms, 10_000),
                                   ("-ucinewgame-ms", a.ucinewgame_ms, 60_000),
                                   ("-ping-ms", a.ping_ms, 60_000)):
        if value != default:
            raise _refuse(f"{option} {value}", "cannot be set", "engine timeouts")
    suffix = Path(a.book_file).suffix.lower()
    if a.book_format == "pgn" and suffix != ".pgn" or a.book_format == "epd" and suffix in (
            ".pgn", ".bin"):
        raise _refuse(f"-openings format={a.book_format} for {a.book_file}",
                      f"is not supported (the runner reads a book by its file name: "
                      f"{'.pgn for PGN' if a.book_format == 'pgn' else 'EPD lines in any other'})",
                      "choice of reader")
    played = sum(v.get("wins", 0) + v.get("losses", 0) + v.get("draws", 0)
                 for v in a.config_stats.values())
    if a.config_foreign and played:
        raise FastchessError(
            f"{PROGRAM}: -config file={a.config_file} counts {played} games fastchess itself "
            "played; they are not in the runner's database, so the run cannot continue from "
            "them (add stats=false to -config to play the whole tournament again)")
    if a.book_file.endswith(".gz"):
        raise FastchessError("Compressed book is provided but program wasn't compiled with zlib.")


def default_seed(a: FastchessArgs) -> int:
    """The seed of a command line without -srand: fastchess draws one at random; here it comes
    from the settings (what the games depend on, the order of the words and -concurrency
    left out), so that rerunning the command line (which resumes) deals the same openings."""
    unseeded = build_config(a, 0)
    digest = hashlib.sha256(unseeded.fingerprint().encode()).digest()
    return int.from_bytes(digest[:8], "big")


def fastchess_run_name(config: TournamentConfig, a: FastchessArgs) -> str:
    """The tournament's name: the same settings (so the same command line, or the
    ``-config file=`` it saved) give the same name, which makes a rerun continue the run in
    the database; the engine names keep it readable."""
    # A -pgnout/-epdout without file= names its file after the clock: that name is left out,
    # or no rerun would ever find its run.
    key = json.dumps({"games": config.fingerprint(), "pgn": a.pgn_given, "epd": a.epd_given,
                      "config": a.config_name}, sort_keys=True)
    return run_name("fastchess", [key], " vs ".join(e.name for e in config.engines))


FASTCHESS_BOUNDS = Bounds(error_rate_below=1.0, adjudication_floor=False)
"""fastchess's bounds on the numbers its reader has checked (runner.dropin.fastchess.args):
alpha and beta below 1, any whole number for a move count, maxmoves or tbpieces."""


def _adjudication(a: FastchessArgs) -> dict[str, Any]:
    """The adjudication table of fastchess's -draw, -resign, -maxmoves and -tb options."""
    table: dict[str, Any] = {"tbignore50": a.tb_ignore50,
                             "tbadjudicate": a.tb_adjudicate.lower()}
    if a.draw:
        table["draw"] = {"movenumber": a.draw_movenumber, "movecount": a.draw_movecount,
                         "score": a.draw_score}
    if a.resign:
        table["resign"] = {"movecount": a.resign_movecount, "score": a.resign_score,
                           "twosided": a.resign_twosided}
    if a.maxmoves is not None:
        table["maxmoves"] = a.maxmoves
    # fastchess loads the tables from whichever of its directories hold them.
    dirs = [str(d) for d in _tablebase_dirs(a) if d.is_dir()]
    if dirs:
        table["tablebases"] = dirs
    if a.tb_pieces:
        table["tbpieces"] = a.tb_pieces
    return table


def build_config(a: FastchessArgs, seed: int) -> TournamentConfig:
    """The tournament fastchess would play for `a` (`seed`: -srand, or `default_seed`),
    through the checked route every drop-in takes (runner.dropin.contract.checked_config);
    the schedule (rounds, games: fastchess plays odd totals) and order set apart."""
    _refusals(a)
    if a.rounds < 1 or a.games < 1:
        error = FastchessError("Invalid number of players, rounds, or games per round")
        if a.book_file and a.book_format in ("epd", "pgn") and a.book_order == "random":
            error.printed = ["Indexing opening suite..."]  # the book is dealt before the check
        raise error
    engines = [_engine_table(e) for e in a.engines]
    fmt = "gauntlet" if a.tournament == "gauntlet" else (
        "match" if len(engines) == 2 else "round-robin")
    table: dict[str, Any] = {
        "name": "fastchess", "format": fmt, "engines": engines,
        "adjudication": _adjudication(a), "concurrency": a.concurrency,
        "variant": "fischerandom" if a.variant == "fischerandom" else "standard",
        "recover": a.recover, "affinity": a.affinity,
    }
    openings = _openings(a, seed)
    if openings is not None:
        table["openings"] = openings
    if a.sprt:
        table["sprt"] = {"elo0": a.elo0, "elo1": a.elo1, "alpha": a.alpha, "beta": a.beta,
                         "model": "bayeselo" if a.model == "bayesian" else a.model}
    config = checked_config(
        table, program=PROGRAM, bounds=FASTCHESS_BOUNDS, stream="stdout",
        programs=ProgramLookup.AT_START,
        rounds=a.rounds, games=a.games, source="fastchess command line",
        order=fastchess_order(noswap=a.noswap, reverse=a.reverse, seeds=a.seeds),
        wait_ms=a.wait, crash_stops=not a.recover, sprt_trinomial=a.sprt and not a.report_penta)
    config = dataclasses.replace(config, engines=tuple(
        _written(spec, engine) for spec, engine in zip(config.engines, a.engines, strict=True)))
    return dataclasses.replace(config, name=fastchess_run_name(config, a))


def _summary(engine: EngineArgs) -> EngineSummary:
    options = dict(engine.options)
    limit = engine.limit
    return EngineSummary(
        name=engine.name, tc_moves=limit.moves, tc_time_ms=limit.time,
        tc_increment_ms=limit.increment, fixed_time_ms=limit.fixed_time, plies=limit.plies,
        nodes=limit.nodes, threads=options.get("Threads"), hash=options.get("Hash"),
        command=_program(engine),
        directory=str(Path(engine.dir).absolute()) if engine.dir else None,
    )


def build_settings(a: FastchessArgs, program: str = PROGRAM, *,
                   random_book: bool = False) -> FastchessSettings:
    """What fastchess would print and write for `a` (`random_book`: a book dealt in random
    order, which fastchess announces)."""
    track = a.pgn_track
    return FastchessSettings(
        pgn_file=a.pgn_file, pgn_notation=a.pgn_notation,  # type: ignore[arg-type]
        pgn_append=a.pgn_append, pgn_nodes=track.get("nodes", False),
        pgn_seldepth=track.get("seldepth", False), pgn_nps=track.get("nps", False),
        pgn_hashfull=track.get("hashfull", False), pgn_tbhits=track.get("tbhits", False),
        pgn_pv=track.get("pv", False), pgn_timeleft=track.get("timeleft", False),
        pgn_latency=track.get("latency", False), pgn_min=a.pgn_min,
        pgn_match_lines=tuple(a.pgn_match_lines), event=a.event, site=a.site,
        epd_file=a.epd_file, epd_append=a.epd_append, crc32_pgn=a.crc32_pgn,
        ratinginterval=a.ratinginterval, scoreinterval=a.scoreinterval,
        report_penta=a.report_penta, output_format=a.output,  # type: ignore[arg-type]
        sprt=SprtSettings(a.elo0, a.elo1, a.alpha, a.beta, a.model)  # type: ignore[arg-type]
        if a.sprt else None,
        engines=tuple(_summary(e) for e in a.engines), book_file=a.book_file,
        book_random=random_book, games=a.games, rounds=a.rounds,
        tournament=a.tournament,  # type: ignore[arg-type]
        seeds=a.seeds, startup_lines=tuple(a.printed),
        variant=a.variant,  # type: ignore[arg-type]
        recover=a.recover, show_latency=a.show_latency, test_env=a.test_env, strict=a.strict,
        check_mate_pvs=a.check_mate_pvs, log_file=a.log_file or None,
        log_level=a.log_level,  # type: ignore[arg-type]
        log_append=a.log_append, log_compress=a.log_compress, log_realtime=a.log_realtime,
        log_engine=a.log_engine, config_name=a.config_name,
        autosaveinterval=a.autosaveinterval, program=program,
    )
